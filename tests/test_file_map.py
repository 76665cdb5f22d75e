"""``doc/engine.md``'s file map against the package: the map names every
source file of ``skbudget/`` (``.py``, ``.pyx``, ``.pxd``, ``.h``) and no
file that is not there, and its layers are the import order: no module
imports one from a higher layer, and no module imports itself through
others (no cycle).

A module's imports are read from its source: ``import`` / ``from ...
import`` anywhere in a ``.py`` file (function-level imports included,
through :mod:`ast`); ``import``, ``cimport``, ``from ... (c)import``,
``cdef extern from "....h"`` and ``include`` in a ``.pyx`` / ``.pxd`` file,
whose own ``.pxd`` counts as an import; ``#include "....h"`` in a header.
Imports from outside the package are ignored.

A row may name files by a pattern instead (``skbudget/_<family>.py``): it
maps every file it matches that no row names by its path, and only those
that are what the row says (``PATTERNS``: an estimator module defines
exported estimator classes with declarations of their own; a compiled
learner is imported by estimator modules and by no other module), so a
new family's files need no row while a file that is something else still
does."""

import ast
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAP = ROOT / "doc" / "engine.md"
SOURCE_SUFFIXES = (".py", ".pyx", ".pxd", ".h")

LAYER_HEADING = re.compile(r"^### Layer (\d+): (.+)$")
MAPPED_FILE = re.compile(r"`(skbudget/[\w/]+\.(?:py|pyx|pxd|h))`")
MAPPED_PATTERN = re.compile(r"`(skbudget/[\w/]*<\w+>[\w/<>]*\.(?:py|pyx|pxd|h))`")


def _package_files(root=ROOT):
    """Every source file of the package under ``root``, as a path relative
    to ``root``."""
    return sorted(path.relative_to(root).as_posix() for path in (root / "skbudget").rglob("*")
                  if path.suffix in SOURCE_SUFFIXES and "__pycache__" not in path.parts)


def _file_map():
    """The map's layers: ``({file: layer}, {pattern: layer})``, where a
    layer is ``(number, title)``, read from the tables under the ``### Layer
    N: title`` headings of "The map" (the first cell of a row names its
    files by their full paths, or by a pattern of ``PATTERNS``)."""
    layers, patterns, layer, in_map = {}, {}, None, False
    for line in MAP.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            in_map = line == "## The map"
            layer = None
        elif in_map and LAYER_HEADING.match(line):
            number, title = LAYER_HEADING.match(line).groups()
            layer = (int(number), title)
        elif in_map and layer is not None and line.startswith("|"):
            first_cell = line.split("|")[1]
            for name in MAPPED_FILE.findall(first_cell):
                assert name not in layers, f"doc/engine.md's file map lists {name} twice"
                layers[name] = layer
            for pattern in MAPPED_PATTERN.findall(first_cell):
                assert pattern in PATTERNS, (
                    f"doc/engine.md's file map has the pattern {pattern}, which "
                    f"tests/test_file_map.py does not know (PATTERNS: {sorted(PATTERNS)})")
                assert pattern not in patterns, f"doc/engine.md lists {pattern} twice"
                patterns[pattern] = layer
    assert layers, "doc/engine.md has no '## The map' with '### Layer N: title' tables"
    return layers, patterns


def estimator_modules():
    """``{file: its classes}`` for the modules that define estimator classes
    ``skbudget`` exports, each with a declaration of its own."""
    import skbudget
    from skbudget._declaration import declaration_of

    found = {}
    for name in skbudget.__all__:
        obj = getattr(skbudget, name)
        if inspect.isclass(obj) and "_declaration" in vars(obj):
            declaration_of(obj)                       # a Declaration, not something else
            found.setdefault(obj.__module__.replace(".", "/") + ".py", []).append(name)
    return found


def _estimator_module(path, graph, estimators):
    """Why ``path`` is not an estimator module of a family, or None."""
    if path not in estimators:
        return "it defines no exported estimator class with a declaration of its own"
    return None


def _compiled_learner(path, graph, estimators):
    """Why ``path`` is not the compiled learner of a family, or None."""
    importers = {module for module, targets in graph.items() if path in targets}
    if not importers & set(estimators):
        return "no estimator module imports it"
    if importers - set(estimators):
        return (f"modules other than the estimators' build on it "
                f"({', '.join(sorted(importers - set(estimators)))})")
    return None


# the patterns a row of the map may name files by: the regular expression
# of the files it matches, and what a file must be for the row to map it
PATTERNS = {
    "skbudget/_<family>.py": (r"skbudget/_[a-z0-9_]+\.py", _estimator_module),
    "skbudget/_<family>_fast.pyx": (r"skbudget/_[a-z0-9_]+_fast\.pyx", _compiled_learner),
}


def _complete_map(layers, patterns, files, graph, estimators):
    """``({file: layer}, {file: why no pattern maps it})``: the files the
    map names by path, and the others its pattern rows map."""
    mapped, refused = dict(layers), {}
    for path in files:
        if path in layers:
            continue
        for pattern, layer in patterns.items():
            expression, check = PATTERNS[pattern]
            if re.fullmatch(expression, path):
                why_not = check(path, graph, estimators)
                if why_not is None:
                    mapped[path] = layer
                    break
                refused[path] = f"the row {pattern} does not fit: {why_not}"
    return mapped, {path: why for path, why in refused.items() if path not in mapped}


def _module_file(dotted, files, cimport=False):
    """The file of the package module ``dotted`` (``skbudget._engine``) among
    ``files``: for an import, its ``.py`` or ``.pyx`` (the compiled module),
    else its ``.pxd`` or a package's ``__init__.py``; for a ``cimport``, its
    ``.pxd`` first.  ``None`` if it is not a module of the package."""
    base = dotted.replace(".", "/")
    candidates = [f"{base}.py", f"{base}.pyx", f"{base}.pxd", f"{base}/__init__.py"]
    if cimport:
        candidates.insert(0, candidates.pop(2))
    for candidate in candidates:
        if candidate in files:
            return candidate
    return None


def _resolve(module, names, level, importer, files, cimport=False):
    """The package files that ``from module import names`` (``level`` dots)
    or ``import module`` (``names`` empty) in ``importer`` reaches
    (``cimport``: the same with ``cimport``)."""
    if level:
        parts = importer[:-len(Path(importer).suffix)].split("/")
        package = parts[:len(parts) - level]   # a module's package, or an __init__'s own
        module = ".".join(package + ([module] if module else []))
    if not module or not (module == "skbudget" or module.startswith("skbudget.")):
        return set()
    reached = set()
    named_modules = {name: _module_file(f"{module}.{name}", files, cimport) for name in names}
    for name, target in named_modules.items():
        if target is not None:                           # ``from skbudget import _threads``
            reached.add(target)
    if not names or None in named_modules.values():      # a name defined in the module itself
        target = _module_file(module, files, cimport)
        if target is not None:
            reached.add(target)
    return reached


def _python_imports(root, path, files):
    tree = ast.parse((root / path).read_text(encoding="utf-8"), filename=path)
    reached = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                reached |= _resolve(alias.name, (), 0, path, files)
        elif isinstance(node, ast.ImportFrom):
            reached |= _resolve(node.module, [alias.name for alias in node.names],
                                node.level, path, files)
    return reached


STRING_LITERAL = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'')
CYTHON_FROM = re.compile(r"^\s*from\s+(\.*)([\w.]*)\s+(c?)import\s+(\([^)]*\)|[^\n]*)",
                         re.MULTILINE)
CYTHON_IMPORT = re.compile(r"^\s*(c?)import\s+([\w.]+(?:\s*,\s*[\w.]+)*)", re.MULTILINE)
HEADER = re.compile(r'^\s*(?:cdef\s+extern\s+from|include|#\s*include)\s+"([\w./]+)"', re.MULTILINE)


def _compiled_imports(root, path, files):
    text = STRING_LITERAL.sub("", (root / path).read_text(encoding="utf-8"))
    text = re.sub(r"(?m)^\s*#(?!\s*include).*$", "", text)
    reached = set()
    for dots, module, c, names in CYTHON_FROM.findall(text):
        names = [name.strip() for name in names.strip("()").split(",") if name.strip()]
        names = [name.split()[0] for name in names]        # ``x as y``
        reached |= _resolve(module, names, len(dots), path, files, cimport=bool(c))
    for c, modules in CYTHON_IMPORT.findall(text):
        for module in modules.split(","):
            reached |= _resolve(module.strip(), (), 0, path, files, cimport=bool(c))
    folder = Path(path).parent
    for header in HEADER.findall(text):
        target = (folder / header).as_posix()
        if target in files:
            reached.add(target)
    own_declarations = path[:-len(".pyx")] + ".pxd"
    if path.endswith(".pyx") and own_declarations in files:
        reached.add(own_declarations)
    return reached


def _imports(files, root=ROOT):
    """``{file: the package files it imports}`` for every file (paths
    relative to ``root``)."""
    graph = {}
    for path in files:
        reader = _python_imports if path.endswith(".py") else _compiled_imports
        graph[path] = reader(root, path, set(files)) - {path}
    return graph


def _cycles(graph):
    """The import cycles of ``graph``, each as the list of its files in
    import order (the first repeated at the end), one per strongly
    connected component (Tarjan's algorithm)."""
    index, lowlink, on_stack, stack, components = {}, {}, set(), [], []

    def visit(node):
        index[node] = lowlink[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                lowlink[node] = min(lowlink[node], lowlink[successor])
            elif successor in on_stack:
                lowlink[node] = min(lowlink[node], index[successor])
        if lowlink[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(set(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_cycle_through(component, graph) for component in components]


def _cycle_through(component, graph):
    """One cycle inside a strongly connected ``component``: a walk from its
    first file back to it."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        node = frontier.pop(0)
        for successor in sorted(graph[node] & component):
            if successor == start:
                return paths[node] + [start]
            if successor not in paths:
                paths[successor] = paths[node] + [successor]
                frontier.append(successor)
    raise AssertionError(f"no cycle through {sorted(component)}")


@pytest.fixture(scope="module")
def files():
    return _package_files()


@pytest.fixture(scope="module")
def graph(files):
    return _imports(files)


@pytest.fixture(scope="module")
def mapping(files, graph):
    layers, patterns = _file_map()
    return (layers, patterns) + _complete_map(layers, patterns, files, graph,
                                              estimator_modules())


@pytest.fixture(scope="module")
def file_map(mapping):
    return mapping[2]


def _layer_name(layer):
    return f"'### Layer {layer[0]}: {layer[1]}'"


def _bound(path, file_map, neighbours, pick, default, seen=()):
    """The layer of ``path`` if it is mapped; else ``pick`` (``max`` or
    ``min``) of its ``neighbours``' bounds, unmapped neighbours followed
    through (``default`` when there is none)."""
    if path in file_map:
        return file_map[path]
    bounds = [_bound(other, file_map, neighbours, pick, default, seen + (path,))
              for other in neighbours[path] if other not in seen]
    return pick(bounds, default=default)


def _where_to_add(path, file_map, graph):
    """Where in the map ``path`` belongs: the lowest layer at or above every
    module it imports, if that is below every module that imports it
    (unmapped modules placed the same way)."""
    layers = sorted(set(file_map.values()))
    importers = {node: {other for other, targets in graph.items() if node in targets}
                 for node in graph}
    lowest = max((_bound(other, file_map, graph, max, layers[0], (path,))
                  for other in graph[path]), default=layers[0])
    highest = min((_bound(other, file_map, importers, min, layers[-1], (path,))
                   for other in importers[path]), default=layers[-1])
    if lowest > highest:
        return (f"no layer fits it: it imports a module of {_layer_name(lowest)} and is "
                f"imported by one of {_layer_name(highest)}")
    if lowest == highest:
        return f"add it to the table of {_layer_name(lowest)}"
    return (f"add it to the table of {_layer_name(lowest)} (or of any layer up to "
            f"{_layer_name(highest)})")


def test_the_file_map_names_every_source_file_of_the_package(files, file_map, graph, mapping):
    refused = mapping[3]
    unmapped = [path for path in files if path not in file_map]
    assert not unmapped, "doc/engine.md's file map ('## The map') misses:\n" + "\n".join(
        f"  {path}: {_where_to_add(path, file_map, graph)}"
        + (f" ({refused[path]})" if path in refused else "") for path in unmapped)


def test_every_mapped_file_exists(files, mapping):
    layers = mapping[0]
    missing = sorted(set(layers) - set(files))
    assert not missing, (
        "doc/engine.md's file map names files that are not in the package (remove their "
        "rows, or correct the path):\n" + "\n".join(f"  {path}" for path in missing))


def test_no_module_imports_one_from_a_higher_layer(file_map, graph):
    upward = [f"  {path} ({_layer_name(file_map[path])}) imports {target} "
              f"({_layer_name(file_map[target])})"
              for path in sorted(graph) if path in file_map
              for target in sorted(graph[path])
              if target in file_map and file_map[target] > file_map[path]]
    assert not upward, (
        "modules importing from a higher layer of doc/engine.md's file map (move the "
        "imported module down, or the importer up, if its meaning allows; otherwise "
        "the import is the problem):\n" + "\n".join(upward))


def test_there_is_no_import_cycle(graph):
    cycles = _cycles(graph)
    assert not cycles, "import cycles in skbudget:\n" + "\n".join(
        "  " + " -> ".join(cycle) for cycle in cycles)


SOURCES = {
    "skbudget/__init__.py": "from skbudget._high import Estimator\n",
    "skbudget/_low.pxd": "cdef double twice(double x)\n",
    "skbudget/_low.pyx": '"""import skbudget._high: a docstring, not an import"""\n'
                         "# from skbudget import _high: a comment\n"
                         "cimport numpy as cnp\n",
    "skbudget/_loops.h": '#include "_loops_real.h"\n',
    "skbudget/_loops_real.h": "static double one = 1.0;\n",
    "skbudget/_mid.pyx": 'cdef extern from "_loops.h" nogil:\n    pass\n'
                         "from skbudget._low cimport (\n    twice)\n"
                         "from skbudget._low import Low\n",
    "skbudget/_high.py": "from skbudget import _mid\nfrom ._low import twice as double\n",
    "skbudget/tools/__init__.py": "from . import _reader\n",
    "skbudget/tools/_reader.py": "def read():\n    import skbudget\n    from .. import _high\n",
}


def test_the_import_reader_sees_every_kind_of_import(tmp_path):
    # the reader is what the checks above rest on: each kind of import, in
    # a package made up for the test, read as the files it reaches
    for path, text in SOURCES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    graph = _imports(_package_files(tmp_path), tmp_path)
    assert graph == {
        "skbudget/__init__.py": {"skbudget/_high.py"},
        "skbudget/_low.pxd": set(),
        "skbudget/_low.pyx": {"skbudget/_low.pxd"},
        "skbudget/_loops.h": {"skbudget/_loops_real.h"},
        "skbudget/_loops_real.h": set(),
        "skbudget/_mid.pyx": {"skbudget/_loops.h", "skbudget/_low.pxd", "skbudget/_low.pyx"},
        "skbudget/_high.py": {"skbudget/_mid.pyx", "skbudget/_low.pyx"},
        "skbudget/tools/__init__.py": {"skbudget/tools/_reader.py"},
        "skbudget/tools/_reader.py": {"skbudget/__init__.py", "skbudget/_high.py"},
    }
    assert _cycles(graph) == []
    graph["skbudget/_low.pxd"] = {"skbudget/_high.py"}
    assert _cycles(graph) == [["skbudget/_high.py", "skbudget/_low.pyx", "skbudget/_low.pxd",
                               "skbudget/_high.py"]]


def test_a_pattern_row_maps_only_the_files_that_are_what_it_says():
    # made-up files: the estimator module and its learner are mapped by the
    # patterns; a module without estimators, a compiled module no estimator
    # imports and one other modules build on are not, and a row naming a
    # file by its path wins over a pattern
    graph = {
        "skbudget/_engine.pxd": set(),
        "skbudget/_toy.py": {"skbudget/_toy_fast.pyx", "skbudget/_shared_fast.pyx"},
        "skbudget/_toy_fast.pyx": {"skbudget/_engine.pxd"},
        "skbudget/_shared_fast.pyx": set(),
        "skbudget/_other_fast.pyx": {"skbudget/_shared_fast.pyx"},
        "skbudget/_util.py": set(),
        "skbudget/_named.py": set(),
    }
    layers = {"skbudget/_engine.pxd": (2, "engine"), "skbudget/_named.py": (5, "core")}
    patterns = {"skbudget/_<family>_fast.pyx": (4, "policies"),
                "skbudget/_<family>.py": (7, "estimators")}
    mapped, refused = _complete_map(layers, patterns, sorted(graph), graph,
                                    {"skbudget/_toy.py": ["Toy"], "skbudget/_named.py": ["N"]})
    assert mapped == {**layers, "skbudget/_toy.py": (7, "estimators"),
                      "skbudget/_toy_fast.pyx": (4, "policies")}
    assert set(refused) == {"skbudget/_shared_fast.pyx", "skbudget/_other_fast.pyx",
                            "skbudget/_util.py"}
    assert "skbudget/_other_fast.pyx" in refused["skbudget/_shared_fast.pyx"]
    assert "no estimator module imports it" in refused["skbudget/_other_fast.pyx"]
    assert "defines no exported estimator" in refused["skbudget/_util.py"]
