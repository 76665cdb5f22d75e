"""Multi-class BSGD on one shared budget (doc/algorithms.md#bsgd-multi-class) against
one-vs-rest BSGD and the other bounded multi-class learners, at equal memory.

Accuracy against the number of stored vectors, for each budget B in
{50, 100, 200, 500}:

* ``BudgetedSGDClassifier(multi_class='crammer_singer')`` at ``budget=B``
  with each maintenance rule (merging, projection, removal): B vectors;
* one-vs-rest BSGD (merging) at equal memory, ``budget = B // n_classes``
  per class: at most B vectors in all;
* ``BudgetMIRA(budget=B)`` (the Crammer-Kandola-Singer cache, RBF kernel);
* ``Nystroem(n_components=B) + SGDClassifier(loss='hinge')``, one pass
  (B landmark vectors, as the online learners);
* ``LinearSVC`` (no kernel, nothing stored) and ``SVC`` (RBF, unbounded,
  batch) as references.

Data: mnist5k (``../shared/data/mnist5k``, pixels / 255, a stratified
4 000 / 1 000 split) and scikit-learn's ``load_digits`` (pixels / 16, a
stratified 1 297 / 500 split).  Every online model makes one pass in 5
random orders (``random_state`` = order; 2 with ``--quick``); LinearSVC and
SVC are fitted once.  Hyperparameters (``gamma``, ``alpha``, MIRA's
``gamma``, LinearSVC's and SVC's ``C``) are chosen per model and budget on
a 75 / 25 hold-out split of the training set (mean hold-out accuracy of
two orders; the grids below,
``gamma`` around 0.02 on mnist and 0.1 on the digits); the chosen values
are reported.

Also: the 50-blob stream (50 Gaussian blobs in 10-D, ``make_blobs``,
2 000 training / 1 000 test points, 5 seeds, ``gamma='scale'``): shared
BSGD at ``budget=60`` against one-vs-rest at ``budget=1`` (50 vectors) and
``budget=20`` (up to 1 000); and the cost of a round, 10 classes against
2, at the same B and d (mnist5k, d = 784, shuffled once; the binary labels
are the digits' parity): one-pass fit time per example, minimum over
alternated repeats (the machine is shared), on the natural stream
(``alpha=1e-4``: the two problems then make different numbers of
maintenance steps) and on a stream where every round adds a vector and
maintains the budget (``alpha=10``: equal work in both).

Usage::

    python benchmarks/bench_bsgd_multiclass.py --quick   # digits, blobs, B in {50, 100}; < 2 min
    python benchmarks/bench_bsgd_multiclass.py           # everything (~15 min on 2 cores)

Writes ``benchmarks/results/bsgd_multiclass[_quick].json`` and a figure of
accuracy against stored vectors per data set (the full run:
``doc/images/bsgd_multiclass_<data>.png``; ``--quick``: in
``benchmarks/results/``).
"""

import argparse
import json
import time
import warnings

from _common import (  # noqa: E402  (before NumPy)
    DATA, RESULTS, ROOT, best_times_alternating, use_one_blas_thread, write_json)

use_one_blas_thread()

import numpy as np  # noqa: E402
from sklearn.datasets import load_digits, make_blobs  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.kernel_approximation import Nystroem  # noqa: E402
from sklearn.linear_model import SGDClassifier  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.svm import SVC, LinearSVC  # noqa: E402

from skbudget import BudgetedSGDClassifier, BudgetMIRA  # noqa: E402

BUDGETS = (50, 100, 200, 500)
BASE_GAMMA = {"mnist": 0.02, "digits": 0.1}
GAMMA_FACTORS = (0.5, 1.0, 2.0, 4.0)
ALPHAS = (3e-5, 1e-4, 3e-4, 1e-3)
LINEAR_CS = (0.01, 0.1, 1.0)
SVC_CS = (1.0, 10.0)
N_CLASSES = 10


def load(name):
    """(X_train, X_test, y_train, y_test)."""
    if name == "mnist":
        data = np.loadtxt(DATA / "mnist5k" / "mnist_5k.csv.gz", delimiter=",")
        X, y = data[:, :-1] / 255.0, data[:, -1].astype(int)
        sizes = dict(train_size=4000, test_size=1000)
    else:
        X, y = load_digits(return_X_y=True)
        X = X / 16.0
        sizes = dict(train_size=1297, test_size=500)
    return train_test_split(X, y, stratify=y, random_state=0, **sizes)


def _bsgd(maintenance, multi_class="crammer_singer"):
    def make(budget, rep, gamma, alpha):
        if multi_class == "ovr":
            budget = max(budget // N_CLASSES, 1)
        return BudgetedSGDClassifier(budget=budget, gamma=gamma, alpha=alpha,
                                     maintenance=maintenance, multi_class=multi_class,
                                     random_state=rep)
    return make


def _mira(budget, rep, gamma):
    return BudgetMIRA(budget=budget, gamma=gamma, random_state=rep)


def _nystroem(budget, rep, gamma, alpha):
    return make_pipeline(Nystroem(gamma=gamma, n_components=budget, random_state=rep),
                         SGDClassifier(loss="hinge", alpha=alpha, max_iter=1, tol=None,
                                       random_state=rep))


def _linear(budget, rep, C):
    return LinearSVC(C=C)


def _svc(budget, rep, gamma, C):
    return SVC(gamma=gamma, C=C)


# (row, factory(budget, rep, **params), grid parameters, online: depends on B and the order)
MODELS = [
    ("shared BSGD merging", _bsgd("merging"), ("gamma", "alpha"), True),
    ("shared BSGD projection", _bsgd("projection"), ("gamma", "alpha"), True),
    ("shared BSGD removal", _bsgd("removal"), ("gamma", "alpha"), True),
    ("one-vs-rest BSGD merging (B // 10 per class)", _bsgd("merging", "ovr"),
     ("gamma", "alpha"), True),
    ("BudgetMIRA", _mira, ("gamma",), True),
    ("Nystroem(B) + SGDClassifier", _nystroem, ("gamma", "alpha"), True),
    ("LinearSVC", _linear, ("C",), False),
    ("SVC (unbounded)", _svc, ("gamma", "C"), False),
]


def stored(est, budget):
    """Vectors the model stores (kernel expansions; Nystroem's landmarks)."""
    if hasattr(est, "support_vectors_"):
        return int(est.support_vectors_.shape[0])
    if isinstance(est, LinearSVC):
        return 0
    return budget


def grid(name, params):
    values = {"gamma": [BASE_GAMMA[name] * f for f in GAMMA_FACTORS], "alpha": list(ALPHAS),
              "C": list(SVC_CS)}
    out = [{}]
    for p in params:
        choices = LINEAR_CS if (p == "C" and params == ("C",)) else values[p]
        out = [dict(d, **{p: v}) for d in out for v in choices]
    return out


def select(name, make, params, data, budget, orders=2):
    """The grid point of best hold-out accuracy (75 / 25 of the training
    set, the mean over ``orders`` orders) at ``budget``."""
    X, _, y, _ = data
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.25, stratify=y, random_state=1)
    scores = [(np.mean([make(budget, rep, **point).fit(Xa, ya).score(Xb, yb)
                        for rep in range(orders)]), i)
              for i, point in enumerate(grid(name, params))]
    best = max(scores, key=lambda s: (s[0], -s[1]))
    return grid(name, params)[best[1]], float(best[0])


def run_dataset(name, budgets, reps):
    data = load(name)
    X, Xt, y, yt = data
    entry = {"n_train": int(X.shape[0]), "n_test": int(Xt.shape[0]), "rows": {}}
    for row, make, params, online in MODELS:
        start = time.perf_counter()
        result = {"budgets": {}}
        for budget in (budgets if online else budgets[:1]):
            best, holdout = select(name, make, params, data, budget)
            acc, n_stored, secs = [], [], []
            for rep in range(reps if online else 1):
                est = make(budget, rep, **best)
                t0 = time.perf_counter()
                est.fit(X, y)
                secs.append(time.perf_counter() - t0)
                acc.append(100.0 * est.score(Xt, yt))
                n_stored.append(stored(est, budget))
            result["budgets"][str(budget)] = {
                "accuracy": acc, "mean": float(np.mean(acc)),
                "std": float(np.std(acc, ddof=1)) if len(acc) > 1 else 0.0,
                "stored": float(np.mean(n_stored)), "fit_seconds": float(np.min(secs)),
                "params": best, "holdout_accuracy": holdout}
            r = result["budgets"][str(budget)]
            print(f"  {name} B={budget:<4} {row:<46} {r['mean']:6.2f} +- {r['std']:4.2f}  "
                  f"stored {r['stored']:6.0f}  fit {r['fit_seconds']:6.2f} s  {best}",
                  flush=True)
        result["seconds"] = time.perf_counter() - start
        entry["rows"][row] = result
    return entry


def blobs(seeds):
    """The 50-blob stream: accuracy and stored vectors per model and seed."""
    out = {}
    configs = {"shared BSGD merging, budget=60": dict(budget=60),
               "one-vs-rest BSGD merging, budget=1 (50 vectors)":
                   dict(budget=1, multi_class="ovr"),
               "one-vs-rest BSGD merging, budget=20": dict(budget=20, multi_class="ovr")}
    for row, params in configs.items():
        acc, n_stored = [], []
        for seed in range(seeds):
            X, y = make_blobs(3000, centers=50, n_features=10, random_state=seed)
            est = BudgetedSGDClassifier(random_state=seed, **params).fit(X[:2000], y[:2000])
            acc.append(float(est.score(X[2000:], y[2000:])))
            n_stored.append(int(est.support_vectors_.shape[0]))
        out[row] = {"accuracy": acc, "mean": float(np.mean(acc)), "min": float(np.min(acc)),
                    "stored": n_stored}
        print(f"  blobs50 {row:<50} accuracy {np.mean(acc):.3f} (min {np.min(acc):.3f}), "
              f"stored {np.mean(n_stored):.0f}", flush=True)
    return out


def round_cost(budgets, repeats):
    """One-pass fit time per example, 10 classes against 2 (parity), same
    B and d, per maintenance rule; alternated repeats, minimum of each."""
    data = np.loadtxt(DATA / "mnist5k" / "mnist_5k.csv.gz", delimiter=",")
    order = np.random.RandomState(0).permutation(len(data))
    X, y = data[order, :-1] / 255.0, data[order, -1].astype(int)
    out = {}
    for alpha, stream in ((1e-4, "natural (alpha=1e-4)"), (10.0, "every round maintains "
                                                                 "(alpha=10)")):
        for budget in budgets:
            for rule in ("merging", "projection", "removal"):
                def make(labels):
                    return lambda: BudgetedSGDClassifier(
                        budget=budget, gamma=0.02, alpha=alpha, maintenance=rule,
                        shuffle=False).fit(X, labels)
                t_bin, t_multi = best_times_alternating([make(y % 2), make(y)], repeats)
                steps = [make(labels)().n_maintenance_[0] for labels in (y % 2, y)]
                key = f"{stream}, B={budget}, {rule}"
                out[key] = {"binary_us_per_round": 1e6 * t_bin / len(y),
                            "multiclass_us_per_round": 1e6 * t_multi / len(y),
                            "ratio": t_multi / t_bin,
                            "maintenance_steps": {"binary": int(steps[0]),
                                                  "10 classes": int(steps[1])}}
                print(f"  round cost {key:<52} binary {out[key]['binary_us_per_round']:7.1f} us,"
                      f" 10 classes {out[key]['multiclass_us_per_round']:7.1f} us, ratio "
                      f"{out[key]['ratio']:.2f} (maintenance {steps[0]} / {steps[1]})",
                      flush=True)
    return out


def targets(results):
    out = {}
    for name, entry in results["datasets"].items():
        rows = entry["rows"]
        for budget in rows["shared BSGD merging"]["budgets"]:
            shared = rows["shared BSGD merging"]["budgets"][budget]["mean"]
            ovr = rows["one-vs-rest BSGD merging (B // 10 per class)"]["budgets"][budget]["mean"]
            nys = rows["Nystroem(B) + SGDClassifier"]["budgets"][budget]["mean"]
            out[f"{name} B={budget}"] = {"shared merging >= one-vs-rest": shared >= ovr,
                                         "shared merging >= Nystroem + 3": shared >= nys + 3,
                                         "shared": shared, "ovr": ovr, "nystroem": nys}
    if "blobs50" in results:
        shared = results["blobs50"]["shared BSGD merging, budget=60"]
        out["blobs50 >= 0.95 with 60 vectors"] = shared["min"] >= 0.95
    return out


def plot(entry, name, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for row, result in entry["rows"].items():
        points = result["budgets"]
        if len(points) == 1:
            value = next(iter(points.values()))["mean"]
            ax.axhline(value, linestyle="--", linewidth=1, label=row,
                       color="grey" if "SVC (" in row else "black")
            continue
        xs = [points[b]["stored"] for b in points]
        ax.plot(xs, [points[b]["mean"] for b in points],
                "-o" if "shared" in row else ":s", label=row,
                linewidth=2 if "merging" in row and "shared" in row else 1)
    ax.set_xscale("log")
    ticks = sorted({round(p["stored"]) for r in entry["rows"].values() if len(r["budgets"]) > 1
                    for p in r["budgets"].values()})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("vectors stored in all (support vectors; Nystroem landmarks)")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(f"{name}: one pass, mean of {entry['reps']} orders")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    print(f"wrote {path}")


def markdown(results):
    lines = []
    for name, entry in results["datasets"].items():
        budgets = list(entry["rows"]["shared BSGD merging"]["budgets"])
        lines += ["", f"**{name}** (test accuracy %, mean ± std over {entry['reps']} orders; "
                      f"vectors stored in all; chosen parameters)", "",
                  "| model | " + " | ".join(f"B = {b}" for b in budgets) + " |",
                  "|---|" + "---|" * len(budgets)]
        for row, result in entry["rows"].items():
            cells = []
            for b in budgets:
                r = result["budgets"].get(b) or next(iter(result["budgets"].values()))
                chosen = ", ".join(f"{k}={v:.3g}" for k, v in r["params"].items())
                cells.append(f"{r['mean']:.1f} ± {r['std']:.1f} ({r['stored']:.0f}; {chosen})")
            lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="digits only, B in {50, 100}, 2 orders, round cost at B = 100")
    parser.add_argument("--only", choices=("tables", "blobs", "cost", "plots"), default=None,
                        help="run one part (the others are kept from the JSON); 'plots' "
                             "redraws the figures from the JSON")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    reps = 2 if args.quick else 5
    budgets = (50, 100) if args.quick else BUDGETS
    names = ("digits",) if args.quick else ("mnist", "digits")
    suffix = "_quick" if args.quick else ""
    results = {"protocol": __doc__.split("Usage::")[0].strip(), "quick": args.quick,
               "datasets": {}}
    out = RESULTS / f"bsgd_multiclass{suffix}.json"
    if out.exists() and args.only is not None:   # keep the parts not run now
        previous = json.loads(out.read_text())
        if previous.get("quick") == args.quick:
            results.update({k: v for k, v in previous.items() if k not in ("protocol",)})
    for name in names:
        if args.only in (None, "tables"):
            results["datasets"][name] = run_dataset(name, budgets, reps)
            results["datasets"][name]["reps"] = reps
            write_json(out, results)
        if args.only in (None, "tables", "plots"):
            png = (RESULTS / f"bsgd_multiclass_{name}_quick.png" if args.quick
                   else ROOT / "doc" / "images" / f"bsgd_multiclass_{name}.png")
            plot(results["datasets"][name], name, png)
    if args.only in (None, "blobs"):
        results["blobs50"] = blobs(2 if args.quick else 5)
    if args.only in (None, "cost"):
        results["round_cost"] = round_cost((100,) if args.quick else (100, 500),
                                           2 if args.quick else 3)
    results["targets"] = targets(results)
    for key, value in results["targets"].items():
        print(f"  target {key}: {value}")
    print(markdown(results))
    write_json(out, results)


if __name__ == "__main__":
    main()
