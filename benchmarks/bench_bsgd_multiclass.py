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

And the shared merge's ``merge_search`` (``--only search``; not with
``--quick``): shared merging's one-pass fit time against shared removal's
on the same stream with the same parameters, each merge search (10-class
20-D blobs, ``cluster_std=3``, 30 000 rows, ``gamma=0.05``, ``alpha=1e-4``,
B = 100, where every row merges; the same with ``cluster_std=6``, 20 000
rows, ``gamma='scale'``; mnist5k, all 5 000 rows in one fixed random
order, ``gamma=0.04``, ``alpha=3e-4``, B = 100 and 500), 5 alternated
rounds, the ratio round by round (median; ``--only merge-cost`` runs this
part alone, with the 26-class set's shared merging against binary
merging on the same rows, the first 13 classes against the rest, B = 100,
9 alternated pairs); the test accuracy of
``'lookup'`` against ``'golden'`` (mean of 3 orders) on mnist5k, the
digits and a 26-class set at B = 100 and 500; and the study of the
grid-and-Newton search against the golden-section search on 100 000
random ``(||W_m||^2, ||W_n||^2, <W_m, W_n>, kappa)``.

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
    DATA, RESULTS, ROOT, best_times_alternating, chosen_parameters, markdown_table,
    use_one_blas_thread, write_json)

use_one_blas_thread()

import numpy as np  # noqa: E402
from sklearn.datasets import load_digits, make_blobs, make_classification  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.kernel_approximation import Nystroem  # noqa: E402
from sklearn.linear_model import SGDClassifier  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
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


def merge_cost_streams():
    """The streams of :func:`merge_cost`: ``(name, X, y, budget, params)``.
    The blobs with ``cluster_std=3`` and ``gamma=0.05`` are far apart in the
    kernel's scale: every row violates the margin and every round merges,
    almost always with kernel values below 1e-18."""
    X3, y3 = make_blobs(30000, centers=10, n_features=20, cluster_std=3.0, random_state=0)
    X, y = make_blobs(20000, centers=10, n_features=20, cluster_std=6.0, random_state=0)
    data = np.loadtxt(DATA / "mnist5k" / "mnist_5k.csv.gz", delimiter=",")
    order = np.random.RandomState(0).permutation(len(data))
    Xm, ym = data[order, :-1] / 255.0, data[order, -1].astype(int)
    mnist = dict(gamma=0.04, alpha=3e-4)     # the tables' choice for shared merging
    return [("blobs10 (20-D, std 3)", X3, y3, 100, dict(gamma=0.05, alpha=1e-4)),
            ("blobs10 (20-D)", X, y, 100, dict(gamma="scale", alpha=1e-4)),
            ("mnist5k", Xm, ym, 100, mnist), ("mnist5k", Xm, ym, 500, mnist)]


def merge_cost(repeats):
    """Shared merging's one-pass fit time against shared removal's, same
    stream and parameters, with each merge search; rounds alternate the
    three fits, and the ratio is taken round by round (median quoted)."""
    out = {}
    for name, X, y, budget, params in merge_cost_streams():
        def make(maintenance, search="lookup"):
            return lambda: BudgetedSGDClassifier(
                budget=budget, maintenance=maintenance, merge_search=search, shuffle=False,
                **params).fit(X, y)
        fits = {"removal": make("removal"), "merging, golden": make("merging", "golden"),
                "merging, lookup": make("merging", "lookup")}
        times = {key: [] for key in fits}
        for _ in range(repeats):
            for key, fit in fits.items():
                start = time.perf_counter()
                fit()
                times[key].append(time.perf_counter() - start)
        merges = int(fits["merging, lookup"]().n_maintenance_[0])
        key = f"{name}, B={budget}"
        out[key] = {"us_per_row": {k: 1e6 * float(np.median(v)) / len(y)
                                   for k, v in times.items()},
                    "merges": merges, "rows": len(y),
                    "ratio_to_removal": {k: float(np.median(np.array(times[k])
                                                            / np.array(times["removal"])))
                                         for k in fits if k != "removal"}}
        r = out[key]["ratio_to_removal"]
        print(f"  merge cost {key:<24} removal {out[key]['us_per_row']['removal']:6.1f} us/row, "
              f"golden {r['merging, golden']:5.2f}x, lookup {r['merging, lookup']:5.2f}x "
              f"({merges} merges)", flush=True)
    return out


def shared_binary_merge_cost(repeats):
    """Shared merging's one-pass fit time on the 26-class set against binary
    merging's on the same rows with two classes (the first half of the
    classes against the rest, as ``bench_multiclass_all.py``'s round cost),
    B = 100, ``gamma=0.2``, ``alpha=1e-4``: fits alternate, the ratio taken
    pair by pair (median quoted)."""
    X, _, y, _ = letters26()
    binary = (y >= 13).astype(int)
    params = dict(budget=100, maintenance="merging", shuffle=False, **SEARCH_SETS["letters26"])
    fits = {"shared": lambda: BudgetedSGDClassifier(**params).fit(X, y),
            "binary": lambda: BudgetedSGDClassifier(multi_class="ovr", **params).fit(X, binary)}
    times = {key: [] for key in fits}
    for fit in fits.values():
        fit()                       # (the binary search's table, built once)
    for _ in range(repeats):
        for key, fit in fits.items():
            start = time.perf_counter()
            fit()
            times[key].append(time.perf_counter() - start)
    ratios = np.array(times["shared"]) / np.array(times["binary"])
    merges = {key: int(fit().n_maintenance_[0]) for key, fit in fits.items()}
    out = {"us_per_row": {k: 1e6 * float(np.median(v)) / len(y) for k, v in times.items()},
           "merges": merges, "rows": len(y), "ratio": float(np.median(ratios))}
    print(f"  merge cost letters26, B=100: shared {out['us_per_row']['shared']:6.2f} us/row, "
          f"binary {out['us_per_row']['binary']:6.2f} us/row, ratio {out['ratio']:.2f} "
          f"(merges {merges['shared']} / {merges['binary']})", flush=True)
    return out


def letters26():
    """A 26-class set in 16-D (the shape of UCI 'letter', which is not among
    the shared data sets): ``make_classification``, 8 000 / 2 000."""
    X, y = make_classification(10000, n_features=16, n_informative=12, n_redundant=2,
                               n_classes=26, n_clusters_per_class=1, class_sep=2.0,
                               flip_y=0.02, random_state=0)
    X = StandardScaler().fit_transform(X)
    return train_test_split(X, y, stratify=y, random_state=0, train_size=8000,
                            test_size=2000)


# the data sets and parameters of lookup_accuracy: mnist5k's and the
# digits' as chosen for shared merging in the tables; the 26-class set's
# the best of gamma in {0.025, 0.05, 0.1, 0.2} x alpha in {1e-4, 1e-3} on a
# 75 / 25 hold-out split of its training set (B = 100, two orders)
SEARCH_SETS = {"mnist": dict(gamma=0.04, alpha=3e-4), "digits": dict(gamma=0.4, alpha=1e-3),
               "letters26": dict(gamma=0.2, alpha=1e-4)}


def lookup_accuracy(orders):
    """Test accuracy of shared merging with merge_search='lookup' against
    'golden', mean over ``orders`` random orders, B = 100 and 500."""
    out = {}
    for name, params in SEARCH_SETS.items():
        X_tr, X_te, y_tr, y_te = letters26() if name == "letters26" else load(name)
        for budget in (100, 500):
            accuracy = {}
            for search in ("golden", "lookup"):
                accuracy[search] = [100 * BudgetedSGDClassifier(
                    budget=budget, merge_search=search, random_state=rep, **params).fit(
                        X_tr, y_tr).score(X_te, y_te) for rep in range(orders)]
            key = f"{name}, B={budget}"
            out[key] = {k: {"accuracy": v, "mean": float(np.mean(v))}
                        for k, v in accuracy.items()}
            out[key]["lookup - golden"] = out[key]["lookup"]["mean"] - out[key]["golden"]["mean"]
            print(f"  lookup accuracy {key:<20} golden {out[key]['golden']['mean']:.2f} "
                  f"lookup {out[key]['lookup']['mean']:.2f} "
                  f"(difference {out[key]['lookup - golden']:+.2f})", flush=True)
    return out


def search_study(n=100000):
    """The shared merge's search by grid and Newton steps against the golden-section search of doc/algorithms.md#bsgd-multi-class's
    golden-section search on ``n`` random ``(a, b, c, kappa)``: the worst
    excess degradation (in units of ``a + b``, and relative where the
    search's degradation exceeds 1e-6 (a + b)), how often it is lower, and
    the time per candidate of each (candidates in calls of 500)."""
    from skbudget._merge_search import _golden_section_rows, _newton_rows
    rng = np.random.default_rng(5)
    a = 2.0 * rng.exponential(size=n)
    b = a * (1.0 + rng.exponential(2.0, size=n))           # a <= b: m is the smaller row
    b = np.where(rng.uniform(size=n) < 0.2, a, b)           # equal norms (new rows: 2)
    rho = rng.uniform(-1.0, 1.0, size=n)
    rho = np.where(rng.uniform(size=n) < 0.2, np.sign(rho), rho)
    c = rho * np.sqrt(a * b)
    kappa = np.where(rng.uniform(size=n) < 0.5, rng.uniform(size=n), rng.uniform(size=n) ** 6)
    kappa = np.where(rng.uniform(size=n) < 0.05, 1.0 - 10.0 ** -rng.uniform(1, 12, size=n),
                     kappa)
    kappa = np.where(rng.uniform(size=n) < 0.01, 0.0, kappa)
    start = time.perf_counter()
    golden = np.array([_golden_section_rows(*args)[2] for args in zip(a, b, c, kappa)])
    golden_seconds = time.perf_counter() - start
    newton = np.empty(n)
    start = time.perf_counter()
    for i in range(n):          # one candidate per call, as the golden search above
        newton[i] = _newton_rows(a[i], b[i:i + 1], c[i:i + 1], kappa[i:i + 1])[2][0]
    newton_seconds = time.perf_counter() - start
    batch = np.full(500, 2.0)
    cross = rng.choice([-2.0, -1.0, 0.0, 1.0, 2.0], size=500)
    kappas = rng.uniform(size=500) ** 2
    timings = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(200):
            _newton_rows(2.0, batch, cross, kappas)
        timings.append((time.perf_counter() - start) / (200 * 500))
    excess = newton - golden
    large = golden > 1e-6 * (a + b)
    out = {"pairs": n,
           "worst excess / (a + b)": float(np.max(excess / (a + b))),
           "worst relative excess (degradation > 1e-6 (a + b))":
               float(np.max(excess[large] / golden[large])),
           "share lower than golden (by > 1e-9 (a + b))":
               float(np.mean(excess < -1e-9 * (a + b))),
           "golden us per call of one": 1e6 * golden_seconds / n,
           "newton us per call of one": 1e6 * newton_seconds / n,
           "newton ns per candidate, calls of 500": 1e9 * float(np.median(timings))}
    for key, value in out.items():
        print(f"  search study: {key}: {value:.3g}", flush=True)
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
        title = (f"**{name}** (test accuracy %, mean ± std over {entry['reps']} orders; "
                 f"vectors stored in all; chosen parameters)")
        rows = []
        for row, result in entry["rows"].items():
            cells = [row]
            for b in budgets:
                r = result["budgets"].get(b) or next(iter(result["budgets"].values()))
                cells.append(f"{r['mean']:.1f} ± {r['std']:.1f} ({r['stored']:.0f}; "
                             f"{chosen_parameters(r['params'])})")
            rows.append(cells)
        lines += markdown_table(title, ["model"] + [f"B = {b}" for b in budgets], rows)
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="digits only, B in {50, 100}, 2 orders, round cost at B = 100")
    parser.add_argument("--only", choices=("tables", "blobs", "cost", "search", "merge-cost",
                                           "plots"),
                        default=None,
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
    if args.only in (None, "search", "merge-cost") and not args.quick:
        results["merge_cost"] = merge_cost(5)
        results["shared_binary_merge_cost"] = shared_binary_merge_cost(9)
    if args.only in (None, "search") and not args.quick:
        results["lookup_accuracy"] = lookup_accuracy(3)
        results["search_study"] = search_study()
    results["targets"] = targets(results)
    for key, value in results["targets"].items():
        print(f"  target {key}: {value}")
    print(markdown(results))
    write_json(out, results)


if __name__ == "__main__":
    main()
