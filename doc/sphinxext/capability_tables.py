"""The documentation's lists of estimators, written at build time from the
estimators' declarations (``skbudget._declaration``).

Which estimators take weights, which have a shared multi-class mode and
which average (and why the others do not), each one's family page and its
row of the table of estimators are declared once, on each estimator class;
these tables are generated from it, so that they list every estimator
:func:`skbudget.discovery.all_estimators` finds and cannot go stale.  The
pages include them::

    .. include:: /generated/capabilities.inc
    .. include:: /generated/averaging.inc
    .. include:: /generated/estimators.inc
    .. include:: /generated/api_estimators.inc

The last is the API reference's estimator sections, one per family page in
the user guide's order (``user_guide/index.rst``): autosummary does not
read included files, so the class pages of its entries are generated here.
"""

import re
from pathlib import Path

from skbudget._declaration import declaration_of
from skbudget.discovery import all_estimators

# the files written under the source directory (``.inc``: not documents of
# their own, only included)
OUTPUT_DIR = "generated"
GUIDE = Path(__file__).resolve().parents[1] / "user_guide"


def _list_table(header, rows, widths="auto"):
    """An rst ``list-table`` of ``header`` and ``rows`` (lists of cells)."""
    lines = [".. list-table::", "   :header-rows: 1", f"   :widths: {widths}", ""]
    for row in [header] + rows:
        lines.append(f"   * - {row[0]}")
        lines.extend(f"     - {cell}" for cell in row[1:])
    return "\n".join(lines) + "\n"


def _name(cls):
    return f":class:`~skbudget.{cls.__name__}`"


def capabilities_table():
    """The table of the weights each estimator takes, its shared
    multi-class mode and whether its models average, as rst."""
    rows = []
    for _, cls in all_estimators():
        declaration = declaration_of(cls)
        mode = declaration.shared_multiclass
        averaging = declaration.averaging
        rows.append([
            _name(cls),
            "yes" if "sample_weight" in declaration.weights else "no",
            "yes" if "class_weight" in declaration.weights else "no",
            _shared_mode(mode, cls),
            _averages(averaging) if declaration.averages else "no",
        ])
    return _list_table(["Estimator", "``sample_weight``", "``class_weight``",
                        "Shared multi-class mode", "Averages (:ref:`parameter_mixing`)"], rows)


def _shared_mode(mode, cls):
    """The shared multi-class mode ``cls`` declares, in words: none, always,
    or the setting that selects it (marked when it is the default)."""
    if mode is None:
        return "no (one-vs-rest)"
    if mode.param is None:
        return "always"
    setting = f"``{mode.param}={mode.shared!r}``"
    return f"{setting} (default)" if cls().get_params()[mode.param] == mode.shared else setting


def _averages(averaging):
    """"yes", or the parameter values it averages with only."""
    if not averaging.only_with:
        return "yes"
    return "only with " + ", ".join(f"``{need.param}={need.value!r}``"
                                    for need in averaging.only_with)


def averaging_table():
    """The table of how each estimator's models average, or why they do
    not (the reason its refusal gives), as rst."""
    rows = []
    for _, cls in all_estimators():
        declaration = declaration_of(cls)
        averaging = declaration.averaging
        if declaration.averages:
            how = averaging.how[0].upper() + averaging.how[1:]
            limits = "".join(f"; not with another ``{need.param}``: {need.reason}"
                             for need in averaging.only_with)
            rows.append([_name(cls), _averages(averaging), how + limits + "."])
        else:
            reason = averaging.reason[0].upper() + averaging.reason[1:]
            rows.append([_name(cls), "no", reason + "."])
    return _list_table(["Estimator", "Averages", "How, or why not"], rows)


def family_pages():
    """The family pages of the user guide (``'families/bsgd'``), in its
    order: those its index names, then the others, which its glob lists in
    alphabetical order."""
    index = (GUIDE / "index.rst").read_text(encoding="utf-8")
    named = re.findall(r"^   (families/\w+)$", index, flags=re.MULTILINE)
    others = sorted(f"families/{path.stem}" for path in (GUIDE / "families").glob("*.rst"))
    return named + [page for page in others if page not in named]


def page_title(page):
    """The title of the user-guide page ``page``."""
    text = (GUIDE / f"{page}.rst").read_text(encoding="utf-8")
    return re.search(r"^(?![=.\s])(.+)\n=+$", text, flags=re.MULTILINE).group(1)


def estimators_by_family():
    """``[(page, [(name, class), ...]), ...]``: every estimator under the
    family page it declares, the pages in the user guide's order and the
    estimators in the order their page first names them."""
    pages = family_pages()
    declared = {name: declaration_of(cls).guide for name, cls in all_estimators()}
    unknown = {name: page for name, page in declared.items() if page not in pages}
    if unknown:
        raise ValueError(f"estimators declare user-guide pages that are not family pages "
                         f"(doc/user_guide/families/*.rst): {unknown}")
    groups = []
    for page in pages:
        text = (GUIDE / f"{page}.rst").read_text(encoding="utf-8")
        members = []
        for name, cls in all_estimators():
            if declared[name] == page:
                mention = re.search(rf"\b{name}\b", text)
                if mention is None:
                    raise ValueError(f"{name} declares the page {page}, which does not name it")
                members.append((mention.start(), name, cls))
        if members:
            groups.append((page, [(name, cls) for _, name, cls in sorted(members)]))
    return groups


def estimators_table():
    """The user guide's table of estimators (what each does at its budget,
    its memory, its cost, its paper), family by family, as rst."""
    rows = []
    for _, members in estimators_by_family():
        for _, cls in members:
            summary = declaration_of(cls).summary
            rows.append([_name(cls), summary.rule, summary.memory, summary.cost, summary.paper])
    return _list_table(["estimator", "what it does when an update would exceed the budget",
                        "memory (per learner)", "per round / per update", "paper"], rows,
                       widths="22 30 16 16 16")


def api_estimators():
    """The API reference's estimator sections, one per family page (its
    title, a link to it, the autosummary of its estimators), as rst."""
    sections = []
    for page, members in estimators_by_family():
        title = page_title(page)
        sections.append("\n".join([
            title, "-" * len(title), "",
            f"User guide: :doc:`/user_guide/{page}`.", "",
            ".. autosummary::", "   :toctree: generated/", "   :template: class.rst", "",
            *(f"   {name}" for name, _ in members), ""]))
    return ".. currentmodule:: skbudget\n\n" + "\n".join(sections)


TABLES = {"capabilities.inc": capabilities_table, "averaging.inc": averaging_table,
          "estimators.inc": estimators_table, "api_estimators.inc": api_estimators}


def write_tables(app):
    """Write every table under the source directory's ``generated/``, and
    the class pages of the API reference's generated sections."""
    target = Path(app.srcdir) / OUTPUT_DIR
    target.mkdir(exist_ok=True)
    for filename, table in TABLES.items():
        path = target / filename
        text = table()
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    from sphinx.ext.autosummary.generate import generate_autosummary_docs

    generate_autosummary_docs([str(target / "api_estimators.inc")], output_dir=str(target),
                              app=app, overwrite=app.config.autosummary_generate_overwrite,
                              encoding=app.config.source_encoding)


def setup(app):
    app.connect("builder-inited", write_tables)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
