"""Helpers shared by the benchmark scripts.

Import this module before NumPy: ``use_one_blas_thread()`` only works
before the BLAS library starts.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]          # the repository
# ../shared/data, or the folder SKBUDGET_DATA names (e.g. from a git worktree)
DATA = Path(os.environ.get("SKBUDGET_DATA", ROOT.parent / "shared" / "data"))
RESULTS = ROOT / "benchmarks" / "results"

sys.path.insert(0, str(ROOT))   # run from a checkout: import skbudget


def use_one_blas_thread():
    """One BLAS thread: the kernel blocks are small and the machine shared."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")


def write_json(path, payload):
    """Write ``payload`` as indented JSON (creating the folder) and say so."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        json.dump(payload, fh, indent=1)
    print(f"wrote {path}")


def best_time(function, repeats):
    """The shortest of ``repeats`` timings of ``function()``, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def best_times_alternating(functions, rounds):
    """The shortest timing of each of ``functions`` over ``rounds`` rounds
    that call them in turn (a slow stretch of a shared machine then weighs
    on every one alike, instead of on whichever ran during it)."""
    times = [[] for _ in functions]
    for _ in range(rounds):
        for function, own in zip(functions, times):
            start = time.perf_counter()
            function()
            own.append(time.perf_counter() - start)
    return [min(own) for own in times]


def markdown_row(cells):
    """One row of a Markdown table: ``| a | b |``."""
    return "| " + " | ".join(cells) + " |"


def markdown_table(title, header, rows):
    """The lines of a Markdown table under a line ``title`` (between blank
    lines): ``header`` and each of ``rows`` are lists of cells (a cell that
    holds " | " spans as many columns)."""
    head = markdown_row(header)
    return (["", title, "", head, "|" + "---|" * (head.count("|") - 1)]
            + [markdown_row(row) for row in rows])


def chosen_parameters(params):
    """The parameters a search chose, as ``name=value, ...`` (3 digits)."""
    return ", ".join(f"{k}={v:.3g}" for k, v in params.items())


def paper_table(text):
    """A published table typed as it is printed: one line per row, its two
    leading cells the row's keys (a number, then a name), the rest its
    numbers; returns ``{first key: {second key: [numbers]}}``."""
    table = {}
    for line in text.strip().splitlines():
        first, second, *numbers = line.split()
        table.setdefault(float(first), {})[second] = [float(x) for x in numbers]
    return table


def quick_parser(doc, quick_help):
    """A parser described by the first line of ``doc``, with the usual
    option ``--quick``."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help=quick_help)
    return parser


def quick_arguments(doc, quick_help, repeats):
    """The usual options ``--quick`` and ``--repeats`` (``repeats`` by
    default); returns the parsed arguments and the rounds to run (2 with
    ``--quick``)."""
    parser = quick_parser(doc, quick_help)
    parser.add_argument("--repeats", type=int, default=repeats)
    args = parser.parse_args()
    return args, 2 if args.quick else args.repeats


def quick_and_parts_arguments(doc, quick_help, option, parts, argv=None):
    """The options ``--quick`` and ``option``, which of ``parts`` to run
    (all by default); returns the parsed arguments."""
    parser = quick_parser(doc, quick_help)
    parser.add_argument(option, nargs="+", choices=list(parts), default=list(parts))
    return parser.parse_args(argv)
