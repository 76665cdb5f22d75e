"""The documentation's lists of estimators, written at build time from the
estimators' declarations (``skbudget._declaration``) and from the
``estimator-summary`` directives of the family pages.

Which estimators take weights, which have a shared multi-class mode (and
what bounds their size in each mode) and which average (and why the others
do not) are declared once, on each estimator class; each estimator's row of the table of estimators is written
once, on its family page of the user guide, where the estimator is
introduced::

    .. estimator-summary:: BudgetPerceptron
       :rule: removes the vector the rest of the model classifies best
       :memory: ``B`` vectors + ``B x B`` Gram
       :cost: ``O(B)`` / ``O(B)``
       :paper: Crammer, Kandola & Singer 2003

(a field may go on over more indented lines).  On its page the directive
shows these fields "at a glance"; the page that holds it is the
estimator's page of the user guide.  The tables are generated from both, so
that they list every estimator :func:`skbudget.discovery.all_estimators`
finds and cannot go stale.  The pages include them::

    .. include:: /generated/capabilities.inc
    .. include:: /generated/multiclass.inc
    .. include:: /generated/averaging.inc
    .. include:: /generated/estimators.inc
    .. include:: /generated/api_estimators.inc

The last is the API reference's estimator sections, one per family page in
the user guide's order (``user_guide/index.rst``): autosummary does not
read included files, so the class pages of its entries are generated here.
The directives are read from the family pages' source at ``builder-inited``,
before any page is read, so that the tables are written first.
"""

import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

from skbudget._declaration import declaration_of
from skbudget.discovery import all_estimators

# the files written under the source directory (``.inc``: not documents of
# their own, only included)
OUTPUT_DIR = "generated"
GUIDE = Path(__file__).resolve().parents[1] / "user_guide"

# the fields of an estimator-summary, in the order of the table's columns,
# and their labels on the page ("at a glance")
SUMMARY_FIELDS = {"rule": "At the budget", "memory": "Memory (per learner)",
                  "cost": "Per round / per update", "paper": "Paper"}
DIRECTIVE = re.compile(r"^\.\. estimator-summary:: *(\S*) *\n((?:[ \t]+\S.*\n?)*)",
                       flags=re.MULTILINE)


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


def multiclass_table():
    """The table of what bounds each estimator's model with several
    classes, in each of its multi-class modes, as rst: a kernel
    expansion's ``budget`` bounds each one-vs-rest learner's support set
    and the whole model's in a shared mode; a model that is no kernel
    expansion declares what bounds it (``model_size``)."""
    rows = []
    for _, cls in all_estimators():
        declaration = declaration_of(cls)
        mode = declaration.shared_multiclass
        one_vs_rest = mode is None or mode.param is not None
        shared = mode is not None
        if declaration.model_size is not None:
            each = whole = declaration.model_size
        elif "budget" not in cls().get_params():
            each = whole = "nothing: no ``budget``, the support set grows"
        else:
            unbounded = ("; ``budget=None``: unbounded" if cls().get_params()["budget"] is None
                         else "")
            each = f"each learner's support set: up to ``n_classes × budget`` vectors{unbounded}"
            whole = f"the whole model: ``budget`` vectors in all{unbounded}"
        rows.append([_name(cls), each if one_vs_rest else "—", whole if shared else "—",
                     _shared_mode(mode, cls)])
    return _list_table(["Estimator", "One-vs-rest: the size is bounded by",
                        "Shared mode: the size is bounded by", "Shared mode"], rows,
                       widths="22 30 30 18")


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


def _summary(name, options, where):
    """The fields of the estimator-summary of ``name`` (its options, each
    one line of rst), after checking that ``name`` is an exported estimator
    and that every field is given, once."""
    estimators = dict(all_estimators())
    if name not in estimators:
        raise ValueError(f"{where}: estimator-summary names {name!r}, which is not an "
                         f"estimator of skbudget")
    unknown = sorted(set(options) - set(SUMMARY_FIELDS))
    missing = [key for key in SUMMARY_FIELDS if not options.get(key)]
    if unknown or missing:
        raise ValueError(f"{where}: the estimator-summary of {name} needs the fields "
                         f"{list(SUMMARY_FIELDS)}; unknown: {unknown}, missing: {missing}")
    return {key: " ".join(options[key].split()) for key in SUMMARY_FIELDS}


def _options(block, where):
    """The options of a directive's indented block, ``{name: text}``."""
    options, key = {}, None
    for line in block.splitlines():
        field = re.fullmatch(r"   :(\w+):(.*)", line)
        if field:
            key = field.group(1)
            if key in options:
                raise ValueError(f"{where}: the field {key!r} is given twice")
            options[key] = field.group(2)
        elif key is not None and line.startswith("    "):
            options[key] += "\n" + line
        else:
            raise ValueError(f"{where}: cannot read the estimator-summary line {line!r}")
    return options


def page_summaries(page):
    """``[(name, fields), ...]``: the estimator-summary directives of the
    user-guide page ``page`` in page order, each checked (an exported
    estimator that the page names outside the directive, every field)."""
    text = (GUIDE / f"{page}.rst").read_text(encoding="utf-8")
    outside = DIRECTIVE.sub("", text)
    summaries = []
    for match in DIRECTIVE.finditer(text):
        name, where = match.group(1), f"{page}.rst"
        fields = _summary(name, _options(match.group(2), where), where)
        if not re.search(rf"\b{name}\b", outside):
            raise ValueError(f"{where}: its estimator-summary of {name} is on a page "
                             f"that does not document {name}")
        summaries.append((name, fields))
    return summaries


def estimators_by_family():
    """``[(page, [(name, fields), ...]), ...]``: every estimator under the
    family page whose estimator-summary directive names it, with the fields
    of its row, the pages in the user guide's order and the estimators in
    the order of their directives on the page.  Raises ``ValueError`` when
    an estimator has no directive or more than one."""
    groups = [(page, page_summaries(page)) for page in family_pages()]
    groups = [(page, members) for page, members in groups if members]
    listed = [name for _, members in groups for name, _ in members]
    missing = sorted(set(dict(all_estimators())) - set(listed))
    repeated = sorted({name for name in listed if listed.count(name) > 1})
    if missing or repeated:
        raise ValueError(f"every estimator needs one estimator-summary directive on its "
                         f"family page (doc/user_guide/families/*.rst); none: {missing}, "
                         f"more than one: {repeated}")
    return groups


def estimators_table():
    """The user guide's table of estimators (what each does at its budget,
    its memory, its cost, its paper), family by family, as rst."""
    rows = [[f":class:`~skbudget.{name}`", *fields.values()]
            for _, members in estimators_by_family() for name, fields in members]
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
          "multiclass.inc": multiclass_table,
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


class EstimatorSummary(SphinxDirective):
    """``.. estimator-summary:: Name``: an estimator's row of the table of
    estimators, shown where its family page introduces it as a field list
    (the estimator, then each field under its label)."""

    required_arguments = 1
    option_spec = {key: directives.unchanged_required for key in SUMMARY_FIELDS}

    def run(self):
        name = self.arguments[0]
        try:
            fields = _summary(name, self.options, self.env.docname)
        except ValueError as error:
            raise self.error(str(error)) from None
        lines = [f":Estimator: :class:`~skbudget.{name}`"]
        lines += [f":{label}: {fields[key]}" for key, label in SUMMARY_FIELDS.items()]
        node = nodes.container(classes=["estimator-summary"])
        self.state.nested_parse(StringList(lines, source=self.get_source_info()[0]),
                                self.content_offset, node)
        return [node]


def setup(app):
    app.add_directive("estimator-summary", EstimatorSummary)
    app.connect("builder-inited", write_tables)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
