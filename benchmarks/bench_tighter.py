"""Wang & Vucetic (IJCNN 2009), Table 2 and Fig. 2: Tightest against the
other budget kernel perceptrons.

Protocol (paper §IV): one online pass over randomly ordered training data,
attributes standardized (mean 0, std 1, fitted on the training set), RBF
kernel ``exp(-||x - y||^2 / (2 delta^2))`` i.e. ``gamma = 1 / (2 delta^2)``
with the paper's delta^2 per data set (Table 1), budgets B = 20 / 100 / 500,
10 repetitions (each with its own random order and, where the data are
generated or split, its own draw), accuracy on the test set, mean +- std.

Data sets we can build or have offline (``../shared/data``):

* NCheckerboard: ``make_checkerboard(10000, noise=0.15)`` for training and
  ``make_checkerboard(5000, noise=0)`` for testing, delta^2 = 0.1;
* Banana: the 5 300 points, a random 4 300 / 1 000 split per repetition
  (the paper's sizes), delta^2 = 0.1;
* Adult (a9a): a9a.train (32 561) / a9a.test (16 281); the paper's Adult9
  is 30 162 / 15 060 (the UCI rows without missing values), delta^2 = 25;
* MNIST 3 vs 8: only the 500 + 500 images of ``mnist5k`` (the paper has
  11 982 / 1 984): a random stratified 800 / 200 split per repetition,
  delta^2 = 784 / 2.  With 800 examples the budget barely binds.

Columns: kernel Perceptron (B = infinity), Tighter^Full, Tighter^B
(validation reservoir A = B), Stoptron, Forgetron, Random, Tighter^0,
Tightest.  Stoptron, Forgetron and RandomBudgetPerceptron come from another
branch: a column whose estimator is missing from ``skbudget`` is skipped
with a note.

Usage::

    python benchmarks/bench_tighter.py            # the full table (long)
    python benchmarks/bench_tighter.py --quick    # 2 repetitions, Adult cut to 6 000
    python benchmarks/bench_tighter.py --datasets ncheckerboard --reps 10
    taskset -c 1 python benchmarks/bench_tighter.py --round-cost letters26   # issue 46's ratio

Prints one table per budget (ours, then the paper's number) and writes
``benchmarks/results/bench_tighter[_quick].json`` and the Fig. 2 PNG
``benchmarks/results/tighter_fig2_ncheckerboard.png``.
"""

import argparse
import json
import time
from pathlib import Path

from _common import (  # noqa: E402  (before NumPy)
    DATA, RESULTS, markdown_table, use_one_blas_thread)

use_one_blas_thread()

import numpy as np  # noqa: E402
from sklearn.datasets import load_svmlight_file  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402


import skbudget  # noqa: E402
from skbudget.datasets import make_checkerboard  # noqa: E402


BUDGETS = (20, 100, 500)

# (column, estimator name in skbudget, parameters); Perceptron is unbudgeted
COLUMNS = [
    ("Perceptron", "KernelPerceptron", {}),
    ("Tighter^Full", "TighterPerceptron", {"validation": "full"}),
    ("Tighter^B", "TighterPerceptron", {"validation": "budget"}),
    ("Stoptron", "Stoptron", {}),
    ("Forgetron", "Forgetron", {}),
    ("Random", "RandomBudgetPerceptron", {}),
    ("Tighter^0", "TighterPerceptron", {"validation": "support"}),
    ("Tightest", "TightestPerceptron", {}),
]

# Table 2 of the paper: (mean, std) per column, in the order of COLUMNS
PAPER = {
    "ncheckerboard": {
        20: [(79.8, 3.1), (85.8, 1.2), (62.6, 3.8), (64.3, 4.8), (60.2, 3.9), (59.6, 4.3), (62.7, 3.4), (77.7, 2.2)],
        100: [(79.8, 3.1), (92.6, 0.6), (74.2, 5.2), (69.8, 3.8), (66.4, 4.5), (68.4, 3.0), (71.4, 4.6), (87.6, 1.3)],
        500: [(79.8, 3.1), (94.9, 1.0), (87.6, 1.1), (76.6, 2.8), (70.3, 5.2), (73.6, 4.3), (75.5, 5.6), (94.2, 0.8)],
    },
    "banana": {
        20: [(84.7, 1.9), (87.6, 1.5), (79.3, 2.6), (79.2, 3.8), (76.0, 4.3), (74.5, 4.9), (78.2, 3.3), (86.7, 1.9)],
        100: [(84.7, 1.9), (89.0, 1.3), (86.1, 2.3), (85.2, 2.0), (82.1, 5.9), (82.1, 3.8), (83.2, 3.5), (88.9, 0.8)],
        500: [(84.7, 1.9), (88.9, 1.1), (88.2, 1.3), (87.5, 0.8), (84.8, 2.3), (85.3, 1.7), (84.8, 2.5), (89.9, 1.0)],
    },
    "adult": {
        20: [(78.0, 2.1), (80.1, 2.1), (75.5, 1.5), (75.5, 2.9), (67.8, 7.8), (69.4, 12.8), (69.5, 9.5), (80.8, 0.8)],
        100: [(78.0, 2.1), (83.0, 0.9), (76.4, 1.9), (76.4, 3.0), (75.1, 4.4), (75.3, 4.0), (71.2, 7.3), (81.7, 0.6)],
        500: [(78.0, 2.1), (82.7, 0.3), (79.0, 0.6), (78.3, 1.2), (76.3, 2.5), (77.0, 3.6), (69.4, 6.5), (82.4, 0.3)],
    },
    "mnist38": {
        20: [(97.4, 0.9), (78.3, 15.6), (76.8, 9.4), (79.7, 10.8), (72.1, 17.2), (84.9, 5.2), (82.0, 6.6), (87.8, 3.5)],
        100: [(97.4, 0.9), (89.6, 5.0), (91.5, 3.3), (93.4, 4.3), (92.8, 2.8), (90.3, 4.7), (80.0, 10.6), (95.8, 0.4)],
        500: [(97.4, 0.9), (96.5, 1.3), (95.6, 1.1), (95.3, 5.9), (95.2, 2.6), (95.4, 2.3), (95.2, 2.2), (97.5, 0.3)],
    },
}
PAPER_PERCEPTRON_SVS = {"ncheckerboard": 3089, "banana": 582, "adult": 6502, "mnist38": 525}
# the paper's delta^2 (Table 1)
DELTA2 = {"ncheckerboard": 0.1, "banana": 0.1, "adult": 25.0, "mnist38": 784 / 2}


def _require(path):
    if not path.exists():
        raise SystemExit(
            f"missing data file {path}: this benchmark reads ../shared/data relative to the "
            "repository root (see its README)"
        )
    return path


def load(name, rep, quick=False):
    """(X_train, y_train, X_test, y_test), standardized on the training set."""
    if name == "ncheckerboard":
        X, y = make_checkerboard(10000, noise=0.15, random_state=1000 + rep)
        Xt, yt = make_checkerboard(5000, noise=0.0, random_state=2000 + rep)
    elif name == "banana":
        X, y = load_svmlight_file(str(_require(DATA / "banana" / "banana.svmlight")),
                                  n_features=2)
        X, Xt, y, yt = train_test_split(X.toarray(), y, train_size=4300, test_size=1000,
                                        random_state=rep)
    elif name == "adult":
        X, y = load_svmlight_file(str(_require(DATA / "a9a" / "a9a.train")), n_features=123)
        Xt, yt = load_svmlight_file(str(_require(DATA / "a9a" / "a9a.test")), n_features=123)
        X, Xt = X.toarray(), Xt.toarray()
        if quick:
            keep = np.random.RandomState(rep).permutation(X.shape[0])[:6000]
            X, y = X[keep], y[keep]
    elif name == "mnist38":
        data = np.loadtxt(_require(DATA / "mnist5k" / "mnist_5k.csv.gz"), delimiter=",")
        data = data[np.isin(data[:, -1], [3, 8])]
        X, y = data[:, :-1], np.where(data[:, -1] == 3, 1, -1)
        X, Xt, y, yt = train_test_split(X, y, train_size=800, test_size=200, stratify=y,
                                        random_state=rep)
    else:
        raise ValueError(name)
    scaler = StandardScaler().fit(X)
    return scaler.transform(X), y, scaler.transform(Xt), yt


def make_estimator(column, budget, gamma, rep):
    _, name, params = next(c for c in COLUMNS if c[0] == column)
    cls = getattr(skbudget, name, None)
    if cls is None:
        return None
    params = dict(params, gamma=gamma, random_state=rep, max_iter=1, shuffle=True)
    if column != "Perceptron":
        params["budget"] = budget
    return cls(**params)


def available_columns():
    columns, missing = [], []
    for column, name, _ in COLUMNS:
        (columns if getattr(skbudget, name, None) is not None else missing).append(column)
    for column in missing:
        name = next(c[1] for c in COLUMNS if c[0] == column)
        print(f"note: skbudget.{name} is not available on this branch: column {column} skipped")
    return columns


def run(datasets, budgets, reps, quick, columns, out_path, first_rep=0):
    results = {"protocol": __doc__.split("Usage::")[0].strip(), "quick": quick,
               "budgets": list(budgets), "datasets": {}}
    if out_path.exists():   # keep the data sets of earlier runs (one file, several runs)
        previous = json.loads(out_path.read_text())
        if previous.get("budgets") == list(budgets) and previous.get("quick") == quick:
            results["datasets"] = previous["datasets"]
    for name in datasets:
        gamma = 1.0 / (2.0 * DELTA2[name])
        acc = {(c, b): [] for c in columns for b in budgets}
        secs = {(c, b): [] for c in columns for b in budgets}
        perceptron_svs = [np.nan]
        for rep in range(first_rep, first_rep + reps):
            X, y, Xt, yt = load(name, rep, quick)
            for column in columns:
                for budget in (budgets if column != "Perceptron" else budgets[:1]):
                    est = make_estimator(column, budget, gamma, rep)
                    start = time.perf_counter()
                    est.fit(X, y)
                    elapsed = time.perf_counter() - start
                    score = 100.0 * est.score(Xt, yt)
                    if column == "Perceptron":
                        perceptron_svs.append(int(est.n_support_.sum()))
                        perceptron_svs = [v for v in perceptron_svs if v == v]
                        for b in budgets:  # the same unbudgeted model in every table
                            acc[(column, b)].append(score)
                            secs[(column, b)].append(elapsed)
                    else:
                        acc[(column, budget)].append(score)
                        secs[(column, budget)].append(elapsed)
            print(f"  {name}: repetition {rep + 1 - first_rep}/{reps} done", flush=True)
        entry = {"reps": reps, "first_rep": first_rep, "gamma": gamma, "delta2": DELTA2[name], "n_train": int(X.shape[0]),
                 "n_test": int(Xt.shape[0]),
                 "perceptron_svs": float(np.mean(perceptron_svs)),
                 "paper_perceptron_svs": PAPER_PERCEPTRON_SVS[name], "budgets": {}}
        for b in budgets:
            entry["budgets"][str(b)] = {}
            for column in columns:
                paper = PAPER[name][b][[c[0] for c in COLUMNS].index(column)]
                a = np.array(acc[(column, b)])
                entry["budgets"][str(b)][column] = {
                    "accuracy": a.tolist(), "mean": float(a.mean()), "std": float(a.std(ddof=1)) if len(a) > 1 else 0.0,
                    "paper_mean": paper[0], "paper_std": paper[1],
                    "seconds_per_fit": float(np.mean(secs[(column, b)])),
                }
        previous = results["datasets"].get(name)
        if previous is not None and set(columns) != {c[0] for c in COLUMNS}:
            # a run of some columns only: keep the other columns' results
            for b in budgets:
                previous["budgets"][str(b)].update(entry["budgets"][str(b)])
                previous["budgets"][str(b)] = {
                    c[0]: previous["budgets"][str(b)][c[0]] for c in COLUMNS
                    if c[0] in previous["budgets"][str(b)]}
            if "Perceptron" not in columns:
                entry["perceptron_svs"] = previous["perceptron_svs"]
            entry["budgets"] = previous["budgets"]
        results["datasets"][name] = entry
        out_path.write_text(json.dumps(results, indent=1))
    return results


def print_tables(results, columns):
    for b in results["budgets"]:
        print(f"\nAccuracy (x100%), B = {b}: ours mean +- std [paper]  (Perceptron: B = inf)")
        head = f"{'data set':<14}" + "".join(f"{c:>24}" for c in columns)
        print(head)
        print("-" * len(head))
        for name, entry in results["datasets"].items():
            row = f"{name:<14}"
            for column in columns:
                r = entry["budgets"][str(b)][column]
                row += f"{r['mean']:>8.1f} +-{r['std']:>4.1f} [{r['paper_mean']:>5.1f}]".rjust(24)
            print(row)
        print("mean seconds per fit:")
        for name, entry in results["datasets"].items():
            row = f"{name:<14}"
            for column in columns:
                row += f"{entry['budgets'][str(b)][column]['seconds_per_fit']:>24.2f}"
            print(row)
    print("\nPerceptron support vectors (ours [paper]):")
    for name, entry in results["datasets"].items():
        print(f"  {name:<14} {entry['perceptron_svs']:>8.0f} [{entry['paper_perceptron_svs']}]"
              f"  ({entry['reps']} repetitions, n_train = {entry['n_train']}, n_test = {entry['n_test']}, gamma = {entry['gamma']:.4g})")


def markdown_tables(results, columns):
    """The tables as Markdown (for doc/algorithms.md)."""
    lines = []
    for b in results["budgets"]:
        rows = []
        for name, entry in results["datasets"].items():
            cells = [name]
            for column in columns:
                r = entry["budgets"][str(b)][column]
                cells.append(f"{r['mean']:.1f} ± {r['std']:.1f} [{r['paper_mean']:.1f}]")
            rows.append(cells)
        lines += markdown_table(f"B = {b} (Perceptron: B = inf)", ["data set"] + columns, rows)
    return "\n".join(lines)


def plot_figure(columns, path, budget=500):
    """Fig. 2: the solutions of the eight algorithms on NCheckerboard."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y, Xt, yt = load("ncheckerboard", 0)
    gamma = 1.0 / (2.0 * DELTA2["ncheckerboard"])
    lo, hi = X.min(axis=0) - 0.05, X.max(axis=0) + 0.05
    g0, g1 = np.meshgrid(np.linspace(lo[0], hi[0], 250), np.linspace(lo[1], hi[1], 250))
    grid = np.c_[g0.ravel(), g1.ravel()]
    fig, axes = plt.subplots(2, 4, figsize=(18, 9))
    for ax, (column, name, _) in zip(axes.ravel(), COLUMNS):
        ax.set_xticks([])
        ax.set_yticks([])
        if column not in columns:
            ax.set_title(f"{column}: not available")
            continue
        est = make_estimator(column, budget, gamma, 0).fit(X, y)
        f = est.decision_function(grid).reshape(g0.shape)
        ax.contour(g0, g1, f, levels=[-1.0], colors="c", linewidths=1)
        ax.contour(g0, g1, f, levels=[1.0], colors="m", linewidths=1)
        ax.contour(g0, g1, f, levels=[0.0], colors="k", linewidths=1.5)
        sv, coef = est.support_vectors_, est.dual_coef_[0]
        ax.scatter(sv[coef > 0, 0], sv[coef > 0, 1], s=4, c="r")
        ax.scatter(sv[coef < 0, 0], sv[coef < 0, 1], s=4, c="g")
        label = "B = inf" if column == "Perceptron" else f"B = {budget}"
        ax.set_title(f"{column} ({label}): {100 * est.score(Xt, yt):.1f}%, {len(coef)} SVs")
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
    fig.suptitle("NCheckerboard: decision boundary (black), f = +1 (magenta), f = -1 (cyan); "
                 "positive SVs red, negative green")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    print(f"wrote {path}")


def round_cost(names, rounds):
    """The shared multi-class round against the binary rule's (issue 46):
    one-pass fit time per row of Tighter^B and Tightest at B = 100 on the
    26-class set and mnist5k of ``bench_multiclass_all.py`` (its ``gamma``),
    ``multi_class='crammer_singer'`` on the classes against ``'ovr'`` on
    the two classes ``y >= k // 2``, the two fitted in turn ``rounds``
    times (pin the process to one core): the median of the paired ratios,
    per example and per update (the two streams update unequally often)."""
    from bench_multiclass_all import GAMMA
    from bench_multiclass_all import load as load_multiclass
    from sklearn.base import clone
    for name in names:
        X, _, y, _ = load_multiclass(name)
        binary = (y >= len(np.unique(y)) // 2).astype(int)
        for Est in (skbudget.TighterPerceptron, skbudget.TightestPerceptron):
            models = [Est(budget=100, gamma=GAMMA[name], multi_class=mode, shuffle=False,
                          random_state=0) for mode in ("crammer_singer", "ovr")]
            us, updates = [[], []], [0, 0]
            for _ in range(rounds):
                for i, (model, labels) in enumerate(zip(models, (y, binary))):
                    fitted = clone(model)
                    start = time.perf_counter()
                    fitted.fit(X, labels)
                    us[i].append(1e6 * (time.perf_counter() - start) / len(y))
                    updates[i] = int(np.sum(fitted.n_updates_))
            ratio = float(np.median(np.array(us[0]) / np.array(us[1])))
            print(f"{name} {Est.__name__}: shared {np.median(us[0]):.2f} us/row, binary "
                  f"{np.median(us[1]):.2f} us/row, ratio {ratio:.2f} per example, "
                  f"{ratio * updates[1] / updates[0]:.2f} per update "
                  f"(updates {updates[0]} / {updates[1]})", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="2 repetitions and Adult cut to 6 000 training examples")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 10, quick 2)")
    parser.add_argument("--datasets", nargs="+", default=list(PAPER),
                        choices=list(PAPER))
    parser.add_argument("--budgets", nargs="+", type=int, default=list(BUDGETS),
                        choices=list(BUDGETS))
    parser.add_argument("--first-rep", type=int, default=0,
                        help="index of the first repetition (to split a long run in parts)")
    parser.add_argument("--columns", nargs="+", default=None, choices=[c[0] for c in COLUMNS],
                        help="run only these columns (the others are kept from the JSON)")
    parser.add_argument("--table-only", action="store_true",
                        help="print the tables (text and Markdown) of the existing JSON, run nothing")
    parser.add_argument("--no-figure", action="store_true", help="skip Fig. 2")
    parser.add_argument("--out", default=None,
                        help="JSON path (default in benchmarks/results/); data sets already in "
                             "it (same budgets) are kept, those run now replaced")
    parser.add_argument("--round-cost", nargs="*", default=None,
                        choices=["letters26", "mnist5k"],
                        help="only the shared mode's round against the binary one "
                             "(round_cost; default both sets), 7 paired fits each")
    args = parser.parse_args(argv)
    if args.round_cost is not None:
        round_cost(args.round_cost or ["letters26", "mnist5k"], 7)
        return
    reps = args.reps or (2 if args.quick else 10)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = Path(args.out) if args.out else RESULTS / ("bench_tighter_quick.json" if args.quick
                                                     else "bench_tighter.json")
    columns = available_columns()
    if args.columns:
        columns = [c for c in columns if c in args.columns]
    if args.table_only:
        results = json.loads(out.read_text())
        columns = [c for c in columns if all(c in e["budgets"][str(results["budgets"][0])]
                                             for e in results["datasets"].values())]
        print_tables(results, columns)
        print(markdown_tables(results, columns))
        return
    results = run(args.datasets, args.budgets, reps, args.quick, columns, out, args.first_rep)
    print_tables(results, columns)
    print(f"wrote {out}")
    if not args.no_figure:
        plot_figure(columns, RESULTS / "tighter_fig2_ncheckerboard.png")


if __name__ == "__main__":
    main()
