"""Every family's shared multi-class mode against its one-vs-rest mode
(doc/algorithms.md#shared-multi-class): accuracy, fit time and model size
at a fixed memory.

For each estimator with both modes (its declaration's
``SharedMulticlass('multi_class', ...)``, so a new family is covered
without an edit here) and each size B in {100, 500} (vectors in all, or
random features for FOGD):

* ``multi_class='crammer_singer'`` at ``budget=B``: one support set of at
  most B vectors for the whole model;
* ``multi_class='ovr'`` at equal memory, ``budget = B // n_classes`` per
  class (at most B vectors in all);
* ``multi_class='ovr'`` at the equal per-learner budget ``budget=B`` (up to
  ``n_classes × B`` vectors);

test accuracy (mean and standard deviation over 3 random orders, one pass),
one-pass fit time and the vectors stored (``n_support_`` summed; FOGD:
its features).  An estimator without a budget (KernelPassiveAggressive,
unbounded) is run in both modes as it is.

Data: mnist5k (10 classes, ``../shared/data/mnist5k``, pixels / 255, a
stratified 4 000 / 1 000 split) and a 26-class set in 16-D with the shape
of UCI 'letter' (which ships with no installed package):
``make_classification``, 8 000 / 2 000 rows, standardized, as in
``benchmarks/bench_bsgd_multiclass.py``.  ``gamma`` is fixed per data set
(0.04 on mnist5k, 0.2 on the 26-class set: the values chosen for shared
BSGD in ``bench_bsgd_multiclass.py``); every other parameter is the
estimator's default.

And the cost of a round: the shared mode's one-pass fit time per row on
each data set against the binary rule's on the same rows with two classes
(the first half of the classes against the rest), at the same budget and
with the budget full for most of the stream (B = 100), minimum over
alternated repeats; the ratio of the two, per estimator, and the updates
each made (the two streams need not update equally often: a rule whose
updates cost most of a round is compared per update too).  Beside it the
warm round: one more ``partial_fit`` pass over the training rows on each
model already fitted (at its budget: the same number of vectors), best of
the same alternated repeats (``warm_*`` in the JSON).

Usage::

    python benchmarks/bench_multiclass_all.py --quick   # 26-class set, B = 100, 1 order
    python benchmarks/bench_multiclass_all.py           # everything
    python benchmarks/bench_multiclass_all.py --part round-cost --data letters26
                                                        # the cost of a round only

Writes ``benchmarks/results/multiclass_all[_quick].json``.
"""

import time
import warnings

from _common import (  # noqa: E402  (before NumPy)
    RESULTS, best_times_alternating, markdown_table, quick_parser, use_one_blas_thread,
    write_json)

use_one_blas_thread()

import numpy as np  # noqa: E402
from bench_bsgd_multiclass import letters26  # noqa: E402
from bench_bsgd_multiclass import load as load_split  # noqa: E402
from sklearn.base import clone  # noqa: E402

from skbudget._declaration import declaration_of  # noqa: E402
from skbudget.discovery import all_estimators  # noqa: E402

GAMMA = {"mnist5k": 0.04, "letters26": 0.2}
# the structural variants run besides the defaults
VARIANTS = {"BudgetedPassiveAggressive": [dict(maintenance="simple"),
                                          dict(maintenance="nearest"),
                                          dict(maintenance="projection")],
            "BoundedOGDClassifier": [dict(sampling="uniform"),
                                     dict(sampling="coefficient")],
            "BudgetedSGDClassifier": [dict(maintenance="merging")]}


def load(name):
    """(X_train, X_test, y_train, y_test): the splits of
    ``bench_bsgd_multiclass.py``."""
    return letters26() if name == "letters26" else load_split("mnist")


def estimators():
    """(label, estimator) for every estimator with both multi-class modes,
    each structural variant of ``VARIANTS``."""
    for name, Est in all_estimators():
        mode = declaration_of(Est).shared_multiclass
        if mode is None or mode.param != "multi_class":
            continue
        for variant in VARIANTS.get(name, [{}]):
            label = name + "".join(f" {value}" for value in variant.values())
            yield label, Est(**variant)


def _size_param(estimator):
    params = estimator.get_params()
    if "budget" in params:          # (a budget None by default too: Projectron, NORMA)
        return "budget"
    if "n_components" in params:
        return "n_components"
    return None


def _stored(model):
    if hasattr(model, "n_support_"):
        return int(np.sum(model.n_support_))
    return int(model.coef_.shape[1])        # FOGD: its features


def configurations(estimator, size, n_classes):
    """(mode label, parameters) of the three models at ``size``."""
    param = _size_param(estimator)
    if param is None:                       # unbounded: both modes as they are
        return [("shared", dict(multi_class="crammer_singer")),
                ("ovr", dict(multi_class="ovr"))]
    equal_memory = max(size // n_classes, 1) if param == "budget" else size
    return [("shared", {"multi_class": "crammer_singer", param: size}),
            ("ovr, equal memory", {"multi_class": "ovr", param: equal_memory}),
            ("ovr, B per learner", {"multi_class": "ovr", param: size})]


def _with_gamma(estimator, gamma):
    return {"gamma": gamma} if "gamma" in estimator.get_params() else {}


def accuracy_table(data_name, sizes, orders):
    X_tr, X_te, y_tr, y_te = load(data_name)
    n_classes = len(np.unique(y_tr))
    rows, out = [], {}
    for label, estimator in estimators():
        for size in sizes:
            cells = []
            for mode, params in configurations(estimator, size, n_classes):
                if _size_param(estimator) is None and size != sizes[0]:
                    continue
                accuracy, seconds, stored = [], [], []
                for order in range(orders):
                    model = clone(estimator).set_params(
                        random_state=order, **params, **_with_gamma(estimator, GAMMA[data_name]))
                    start = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model.fit(X_tr, y_tr)
                    seconds.append(time.perf_counter() - start)
                    accuracy.append(100 * model.score(X_te, y_te))
                    stored.append(_stored(model))
                key = f"{label}, B={size}, {mode}"
                out[key] = {"accuracy": accuracy, "mean": float(np.mean(accuracy)),
                            "std": float(np.std(accuracy)), "fit_seconds": seconds,
                            "stored": stored, "params": {k: v for k, v in params.items()}}
                cells.append(f"{np.mean(accuracy):.1f} ± {np.std(accuracy):.1f} "
                             f"({int(np.max(stored))}, {np.median(seconds):.2f} s)")
                print(f"  {data_name} {key:<60} {cells[-1]}", flush=True)
            if cells:
                rows.append([label, str(size)] + cells + [""] * (3 - len(cells)))
    print("\n".join(markdown_table(
        f"{data_name}: accuracy % (max vectors stored, median fit time)",
        ["estimator", "B", "shared", "ovr, equal memory", "ovr, B per learner"], rows)))
    return out


def round_cost(data_name, repeats, size=100):
    """Shared time per row against the binary rule's, same rows and B (the
    binary labels: the first half of the classes against the rest): a fit
    from scratch, and a warm round, one more ``partial_fit`` pass over the
    rows on the model already fitted (at its budget)."""
    X_tr, _, y_tr, _ = load(data_name)
    binary = (y_tr >= len(np.unique(y_tr)) // 2).astype(int)
    out = {}
    for label, estimator in estimators():
        param = _size_param(estimator)
        sized = {} if param is None else {param: size}
        common = dict(random_state=0, shuffle=False, **sized,
                      **_with_gamma(estimator, GAMMA[data_name]))
        shared = clone(estimator).set_params(multi_class="crammer_singer", **common)
        two = clone(estimator).set_params(multi_class="ovr", **common)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            times = best_times_alternating([lambda: clone(shared).fit(X_tr, y_tr),
                                            lambda: clone(two).fit(X_tr, binary)], repeats)
            fitted = [clone(shared).fit(X_tr, y_tr), clone(two).fit(X_tr, binary)]
            updates = [int(np.sum(model.n_updates_)) for model in fitted]
            warm = best_times_alternating([lambda: fitted[0].partial_fit(X_tr, y_tr),
                                           lambda: fitted[1].partial_fit(X_tr, binary)],
                                          repeats)
        us = [1e6 * t / len(y_tr) for t in times]
        warm_us = [1e6 * t / len(y_tr) for t in warm]
        out[label] = {"shared_us_per_row": us[0], "binary_us_per_row": us[1],
                      "ratio": us[0] / us[1], "updates": updates,
                      "warm_shared_us_per_row": warm_us[0],
                      "warm_binary_us_per_row": warm_us[1],
                      "warm_ratio": warm_us[0] / warm_us[1]}
        print(f"  round cost {data_name} {label:<45} shared {us[0]:7.2f} us/row, binary {us[1]:7.2f} "
              f"us/row, ratio {us[0] / us[1]:.2f} (updates {updates[0]} / {updates[1]}); "
              f"warm {warm_us[0]:.2f} / {warm_us[1]:.2f}, ratio {warm_us[0] / warm_us[1]:.2f}",
              flush=True)
    return out


def main():
    parser = quick_parser(__doc__, "the 26-class set at B = 100, one order")
    parser.add_argument("--part", choices=["all", "round-cost"], default="all",
                        help="round-cost: only the cost of a round (printed, no JSON written)")
    parser.add_argument("--data", choices=list(GAMMA), default=None,
                        help="one data set only (default: both; letters26 with --quick)")
    args = parser.parse_args()
    orders, sizes = (1, (100,)) if args.quick else (3, (100, 500))
    data_sets = ("letters26",) if args.quick else ("letters26", "mnist5k")
    if args.data is not None:
        data_sets = (args.data,)
    repeats = 2 if args.quick else 5
    if args.part == "round-cost":
        for name in data_sets:
            round_cost(name, repeats)
        return
    results = {"orders": orders, "gamma": GAMMA}
    for name in data_sets:
        results[name] = accuracy_table(name, sizes, orders)
    results["round_cost"] = {name: round_cost(name, repeats) for name in data_sets}
    write_json(RESULTS / f"multiclass_all{'_quick' if args.quick else ''}.json", results)


if __name__ == "__main__":
    main()
