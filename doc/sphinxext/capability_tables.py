"""The user guide's tables of what each estimator offers, written at build
time from the estimators' declarations (``skbudget._declaration``).

Which estimators take weights, which have a shared multi-class mode and
which average (and why the others do not) is declared once, on each
estimator class; these tables are generated from it, so that they list
every estimator :func:`skbudget.discovery.all_estimators` finds and
cannot go stale.  The pages include them::

    .. include:: /generated/capabilities.inc
    .. include:: /generated/averaging.inc
"""

from pathlib import Path

from skbudget._declaration import declaration_of
from skbudget.discovery import all_estimators

# the files written under the source directory (``.inc``: not documents of
# their own, only included)
OUTPUT_DIR = "generated"


def _list_table(header, rows):
    """An rst ``list-table`` of ``header`` and ``rows`` (lists of cells)."""
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: auto", ""]
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


TABLES = {"capabilities.inc": capabilities_table, "averaging.inc": averaging_table}


def write_tables(app):
    """Write every table under the source directory's ``generated/``."""
    target = Path(app.srcdir) / OUTPUT_DIR
    target.mkdir(exist_ok=True)
    for filename, table in TABLES.items():
        path = target / filename
        text = table()
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def setup(app):
    app.connect("builder-inited", write_tables)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
