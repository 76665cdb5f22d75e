"""What the README and the documentation list, checked against the code and
``setup.cfg``, so that the lists cannot go stale: the unbounded estimators
(found by training every estimator with its defaults), the extras, the
README's table of estimators, and the lists the documentation build
generates (doc/sphinxext/capability_tables.py): the capability tables,
from the estimators' declarations, and the user guide's table of estimators
and the API reference's estimator sections, from the ``estimator-summary``
directives of the family pages."""

import configparser
import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from skbudget._base import BaseKernelExpansionClassifier
from skbudget._declaration import declaration_of
from skbudget.discovery import all_estimators

ROOT = Path(__file__).resolve().parents[1]
ESTIMATOR_NAMES = {name for name, _ in all_estimators()}


def _grows_with_the_stream(Est):
    """Whether ``Est()`` (its defaults) stores more vectors after 800
    examples than after 400, on a stream of random labels (a mistake on
    half the rounds): a budgeted model is full long before."""
    rng = np.random.RandomState(0)
    X, y = rng.normal(size=(800, 5)), rng.randint(0, 2, 800)
    est = Est(random_state=0).partial_fit(X[:400], y[:400], classes=[0, 1])
    stored = int(np.sum(getattr(est, "n_support_", 0)))
    est.partial_fit(X[400:], y[400:])
    return int(np.sum(getattr(est, "n_support_", 0))) > stored + 40


@pytest.fixture(scope="module")
def unbounded_by_default():
    return {name for name, Est in all_estimators() if _grows_with_the_stream(Est)}


def test_the_unbounded_estimators_are_found(unbounded_by_default):
    # (the measure above tells them apart: these have no budget by default)
    assert {"KernelPerceptron", "KernelPassiveAggressive", "KernelMIRA",
            "KernelOGDClassifier"} <= unbounded_by_default
    assert not {"Stoptron", "Forgetron", "BudgetedSGDClassifier",
                "FourierOGDClassifier"} & unbounded_by_default


def _names_in(text):
    """The estimator classes a passage names (``KernelMIRA``,
    ``KernelOGDClassifier()``, ``:class:`~skbudget.KernelMIRA```)."""
    return set(re.findall(r"\b([A-Z]\w+)\b", text)) & ESTIMATOR_NAMES


def _passage(path, start, end):
    """The text of ``path`` from the line holding ``start`` to the next
    line holding ``end``, lines joined."""
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if start in line)
    last = next(i for i in range(first + 1, len(lines)) if end in lines[i])
    return " ".join(lines[first:last])


@pytest.mark.parametrize("path, start, end", [
    # the README's guarantee of flat memory, and the bullet of the streaming
    # page on bounded memory
    ("README.md", "*flat memory*", "*dense and CSR chunks mix*"),
    ("doc/user_guide/streaming.rst", "**Bounded memory.**", "**Step counter.**"),
])
def test_every_unbounded_estimator_is_listed(path, start, end, unbounded_by_default):
    # issue 43: the README left out KernelOGDClassifier(), unbounded by default
    listed = _names_in(_passage(path, start, end))
    missing = sorted(unbounded_by_default - listed)
    assert not missing, f"{path} does not list {missing} among the unbounded estimators"


def test_the_readme_table_names_every_estimator():
    # a new estimator gets its row in the README's table (the one list of
    # estimators kept by hand: GitHub shows the README as it is written; the
    # documentation's lists are generated from the declarations, below)
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if "| estimator | family" in line)
    table = []
    for line in lines[first + 1:]:
        if line and not line.startswith("|"):
            break
        table.append(line)
    missing = sorted(ESTIMATOR_NAMES - set(re.findall(r"^\| `(\w+)` \|", "\n".join(table), re.M)))
    assert not missing, f"the estimator table of README.md has no row for {missing}"


def _extras():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return {name: [line.strip() for line in value.strip().splitlines()]
            for name, value in config["options.extras_require"].items()}


def test_skops_has_an_extra_that_the_others_use():
    # issue 43: .[onnx], .[river] and .[dask] existed, not .[skops]
    extras = _extras()
    assert extras["skops"] == ["skops>=0.10"]
    for name in ("test", "doc"):
        assert not any(line.startswith("skops") for line in extras[name])
        inherited = next(line for line in extras[name] if line.startswith("skbudget["))
        assert "skops" in inherited[len("skbudget["):-1].split(",")


@pytest.mark.parametrize("extra", sorted(_extras()))
def test_every_extra_is_documented(extra):
    # the README's line of extras and the table of doc/install.rst
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = (ROOT / "doc" / "install.rst").read_text(encoding="utf-8")
    assert f"`.[{extra}]`" in readme
    assert re.search(rf"^``{extra}`` +\S", install, flags=re.MULTILINE)


def _capability_tables():
    """doc/sphinxext/capability_tables.py, the documentation's extension."""
    path = ROOT / "doc" / "sphinxext" / "capability_tables.py"
    spec = importlib.util.spec_from_file_location("capability_tables", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(table):
    """The rows of an rst list-table, by the estimator each names."""
    rows = {}
    for row in table.split("   * - ")[2:]:
        cells = [cell.strip() for cell in row.split("\n     - ")]
        rows[re.fullmatch(r":class:`~skbudget\.(\w+)`", cells[0]).group(1)] = cells[1:]
    return rows


def test_the_capability_tables_show_every_estimator_as_it_declares_itself():
    tables = _capability_tables()
    capabilities = _rows(tables.capabilities_table())
    averaging = _rows(tables.averaging_table())
    assert list(capabilities) == list(averaging) == [name for name, _ in all_estimators()]
    for name, Est in all_estimators():
        declaration = declaration_of(Est)
        sample_weight, class_weight, shared, averages = capabilities[name]
        assert sample_weight == ("yes" if "sample_weight" in declaration.weights else "no")
        assert class_weight == ("yes" if "class_weight" in declaration.weights else "no")
        assert (shared == "no (one-vs-rest)") == (declaration.shared_multiclass is None)
        answer, why = averaging[name]
        assert answer == averages
        if declaration.averages:
            assert answer.startswith(("yes", "only with"))
            for need in declaration.averaging.only_with:
                assert f"``{need.param}={need.value!r}``" in answer and need.reason in why
        else:
            assert answer == "no" and declaration.averaging.reason[1:] in why


def test_the_multi_class_table_says_what_bounds_each_model():
    rows = _rows(_capability_tables().multiclass_table())
    assert list(rows) == [name for name, _ in all_estimators()]
    for name, Est in all_estimators():
        declaration = declaration_of(Est)
        mode = declaration.shared_multiclass
        one_vs_rest, shared, _ = rows[name]
        assert (one_vs_rest == "—") == (mode is not None and mode.param is None)
        assert (shared == "—") == (mode is None)
        if not issubclass(Est, BaseKernelExpansionClassifier):   # what it bounds, declared
            assert declaration.model_size is not None
            assert declaration.model_size in (one_vs_rest + shared)
        elif "budget" in Est().get_params():
            assert one_vs_rest == "—" or "up to ``n_classes × budget`` vectors" in one_vs_rest
            assert shared == "—" or "``budget`` vectors in all" in shared


@pytest.mark.parametrize("page, table", [("doc/user_guide/online.rst", "capabilities.inc"),
                                         ("doc/user_guide/multiclass.rst", "multiclass.inc"),
                                         ("doc/user_guide/parameter_mixing.rst", "averaging.inc"),
                                         ("doc/user_guide/choosing.rst", "estimators.inc"),
                                         ("doc/api.rst", "api_estimators.inc")])
def test_the_pages_include_the_generated_tables(page, table):
    assert table in _capability_tables().TABLES
    text = (ROOT / page).read_text(encoding="utf-8")
    assert f"\n.. include:: /generated/{table}\n" in text


def test_the_weights_are_listed_by_the_table_alone():
    # no hand-kept list of the estimators that take weights beside the table
    assert not _names_in(_passage("doc/user_guide/online.rst", "**Weights.**",
                                  "**What each estimator takes.**"))


FAMILIES = ROOT / "doc" / "user_guide" / "families"
SUMMARY = re.compile(r"^\.\. estimator-summary:: (\w+)\n((?:   .*\n)*)", flags=re.MULTILINE)


def test_every_estimator_has_one_summary_on_its_family_page():
    # its row of the table of estimators is an estimator-summary directive
    # on the family page that documents it, with all four fields
    found = []
    for path in sorted(FAMILIES.glob("*.rst")):
        text = path.read_text(encoding="utf-8")
        outside = SUMMARY.sub("", text)
        for name, block in SUMMARY.findall(text):
            found.append(name)
            assert name in ESTIMATOR_NAMES, f"{path.name}: {name} is not an estimator"
            assert re.findall(r"^   :(\w+): \S", block, flags=re.MULTILINE) == [
                "rule", "memory", "cost", "paper"], f"{path.name}: the fields of {name}"
            assert re.search(rf"\b{name}\b", outside), f"{path.name} does not document {name}"
        assert text.count(".. estimator-summary::") == len(SUMMARY.findall(text))
    assert sorted(found) == sorted(ESTIMATOR_NAMES)


def test_every_estimator_is_listed_under_its_family_page():
    # the page of its directive, the pages in the user guide's order (the
    # named ones, then the glob's), each estimator once
    tables = _capability_tables()
    groups = tables.estimators_by_family()
    listed = [name for _, members in groups for name, _ in members]
    assert sorted(listed) == sorted(ESTIMATOR_NAMES)
    for page, members in groups:
        text = (ROOT / "doc" / "user_guide" / f"{page}.rst").read_text(encoding="utf-8")
        assert [name for name, _ in members] == [name for name, _ in SUMMARY.findall(text)]
    pages = tables.family_pages()
    assert [page for page, _ in groups] == [page for page in pages if page in dict(groups)]
    index = (ROOT / "doc" / "user_guide" / "index.rst").read_text(encoding="utf-8")
    assert "\n   families/*\n" in index and "   :glob:\n" in index


def test_the_table_of_estimators_shows_every_estimator_as_its_page_summarizes_it():
    rows = _rows(_capability_tables().estimators_table())
    assert sorted(rows) == sorted(ESTIMATOR_NAMES)
    for path in FAMILIES.glob("*.rst"):
        for name, block in SUMMARY.findall(path.read_text(encoding="utf-8")):
            fields = re.split(r"^   :\w+: ", block, flags=re.MULTILINE)[1:]
            assert rows[name] == [" ".join(field.split()) for field in fields]


def test_the_api_reference_lists_every_public_name():
    # the estimators in the generated sections, one autosummary entry each
    # under its family page's title; every other name of skbudget.__all__
    # (the meta-estimator) by hand in api.rst
    import skbudget

    tables = _capability_tables()
    generated = tables.api_estimators()
    entries = re.findall(r"^   (\w+)$", generated, flags=re.MULTILINE)
    assert sorted(entries) == sorted(ESTIMATOR_NAMES)
    for page, _ in tables.estimators_by_family():
        title = tables.page_title(page)
        assert f"{title}\n{'-' * len(title)}\n" in generated
        assert f":doc:`/user_guide/{page}`" in generated
    api = (ROOT / "doc" / "api.rst").read_text(encoding="utf-8")
    by_hand = set(re.findall(r"^   (\w+)$", api, flags=re.MULTILINE))
    assert set(skbudget.__all__) - ESTIMATOR_NAMES <= by_hand
    assert not ESTIMATOR_NAMES & by_hand, "api.rst lists an estimator by hand"


def _guide(tmp_path, pages):
    """A user guide of family pages ``{stem: text}`` under ``tmp_path``."""
    (tmp_path / "families").mkdir(parents=True)
    (tmp_path / "index.rst").write_text("", encoding="utf-8")
    for stem, text in pages.items():
        (tmp_path / "families" / f"{stem}.rst").write_text(text, encoding="utf-8")
    return tmp_path


def _summary_of(name, omit=()):
    fields = [f"   :{key}: the {key} of\n      {name}" for key in ("rule", "memory", "cost", "paper")
              if key not in omit]
    return f"{name}\n\n.. estimator-summary:: {name}\n" + "\n".join(fields) + "\n\n"


@pytest.mark.parametrize("change, message", [
    (lambda pages: pages.update(b=pages["b"] + _summary_of("Stoptron")), "more than one"),
    (lambda pages: pages.update(b=pages["b"].replace(_summary_of("Forgetron"), "")), "none"),
    (lambda pages: pages.update(b=pages["b"] + _summary_of("Percepton")), "not an estimator"),
    (lambda pages: pages.update(b=pages["b"].replace(
        _summary_of("Forgetron"), _summary_of("Forgetron", omit=["cost"]))), "missing"),
    (lambda pages: pages.update(b=pages["b"].replace("Forgetron\n\n..", "\n\n..")),
     "does not document"),
])
def test_the_summaries_are_checked_when_the_tables_are_written(tmp_path, monkeypatch,
                                                               change, message):
    # every estimator one directive with every field, on a page that names it
    tables = _capability_tables()
    names = [name for name, _ in all_estimators()]
    pages = {"a": "".join(_summary_of(name) for name in names[:3]),
             "b": "".join(_summary_of(name) for name in names[3:])}
    monkeypatch.setattr(tables, "GUIDE", _guide(tmp_path / "ok", pages))
    assert [name for _, members in tables.estimators_by_family() for name, _ in members] == names
    assert _rows(tables.estimators_table())["Forgetron"][0] == "the rule of Forgetron"
    change(pages)
    monkeypatch.setattr(tables, "GUIDE", _guide(tmp_path / "changed", pages))
    with pytest.raises(ValueError, match=message):
        tables.estimators_by_family()
