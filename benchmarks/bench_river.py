"""Learning one example at a time: the river adapter against partial_fit and river.

On river's Phishing stream (1 250 examples, 9 features, standardized
once beforehand), per example:

* ``adapter.learn_one(x, y)`` -- :class:`skbudget.river.RiverClassifier`
  (its default ``batch_size=32``: ``partial_fit`` every 32 examples);
* the same with ``batch_size=1`` (``partial_fit`` on every example);
* ``estimator.partial_fit(X[i:i + 1], y[i:i + 1])`` on NumPy rows;
* river's ``linear_model.LogisticRegression().learn_one(x, y)``;

and the progressive-validation loop (``predict_one`` then ``learn_one``
each example: every prediction flushes the adapter's buffer) against
``decision_function`` + ``partial_fit`` on one row, for Forgetron and
Budgeted SGD at budget 100.  The variants alternate within every round;
the figures are medians over the rounds (microseconds per example) and
their ratios to one-row ``partial_fit``.  Writes ``results/river.json``.

    python benchmarks/bench_river.py [--quick] [--repeats N]
"""

import _common  # noqa: F401  (first: BLAS threads)

_common.use_one_blas_thread()

import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from river import datasets, linear_model, preprocessing  # noqa: E402
from sklearn.base import clone  # noqa: E402

from skbudget import BudgetedSGDClassifier, Forgetron  # noqa: E402
from skbudget.river import RiverClassifier  # noqa: E402


def _stream():
    """Phishing standardized once (river's running scaler, fitted on the
    whole stream first): dicts, NumPy rows and labels."""
    data = list(datasets.Phishing())
    scaler = preprocessing.StandardScaler()
    for x, _ in data:
        scaler.learn_one(x)
    dicts = [scaler.transform_one(x) for x, _ in data]
    features = sorted(dicts[0])
    X = np.array([[x[f] for f in features] for x in dicts])
    y = np.array([label for _, label in data])
    return dicts, X, y


def _learn_adapter(estimator, dicts, y, batch_size):
    adapter = RiverClassifier(clone(estimator), classes=[False, True], batch_size=batch_size)
    for x, label in zip(dicts, y.tolist()):
        adapter.learn_one(x, label)
    adapter.estimator_               # the last batch learned too


def _learn_partial_fit(estimator, X, y):
    model = clone(estimator)
    for i in range(len(y)):
        model.partial_fit(X[i:i + 1], y[i:i + 1], classes=[False, True])


def _learn_river(dicts, y):
    model = linear_model.LogisticRegression()
    for x, label in zip(dicts, y.tolist()):
        model.learn_one(x, label)


def _progressive_adapter(estimator, dicts, y):
    adapter = RiverClassifier(clone(estimator), classes=[False, True])
    for x, label in zip(dicts, y.tolist()):
        adapter.predict_one(x)
        adapter.learn_one(x, label)


def _progressive_numpy(estimator, X, y):
    model = clone(estimator)
    for i in range(len(y)):
        if i:
            model.decision_function(X[i:i + 1])
        model.partial_fit(X[i:i + 1], y[i:i + 1], classes=[False, True])


def _progressive_river(dicts, y):
    model = linear_model.LogisticRegression()
    for x, label in zip(dicts, y.tolist()):
        model.predict_one(x)
        model.learn_one(x, label)


def main():
    _, rounds = _common.quick_arguments(__doc__, "2 rounds instead of 7", repeats=7)
    dicts, X, y = _stream()
    n = len(y)
    estimators = {"Forgetron": Forgetron(budget=100, gamma=0.2),
                  "BudgetedSGDClassifier": BudgetedSGDClassifier(budget=100, alpha=1e-3,
                                                                 gamma=0.2, random_state=0)}
    results = {"n_examples": n, "rounds": rounds, "unit": "microseconds per example"}
    for name, est in estimators.items():
        variants = {
            "learn_one (adapter, batch_size=32)": lambda: _learn_adapter(est, dicts, y, 32),
            "learn_one (adapter, batch_size=1)": lambda: _learn_adapter(est, dicts, y, 1),
            "partial_fit (one NumPy row)": lambda: _learn_partial_fit(est, X, y),
            "river LogisticRegression.learn_one": lambda: _learn_river(dicts, y),
            "progressive: adapter predict_one + learn_one":
                lambda: _progressive_adapter(est, dicts, y),
            "progressive: decision_function + partial_fit (one row)":
                lambda: _progressive_numpy(est, X, y),
            "progressive: river LogisticRegression":
                lambda: _progressive_river(dicts, y),
        }
        cpu = {label: [] for label in variants}
        wall = {label: [] for label in variants}
        for _ in range(rounds):
            for label, run in variants.items():        # alternating within a round
                start, start_cpu = time.perf_counter(), time.process_time()
                run()
                cpu[label].append((time.process_time() - start_cpu) / n * 1e6)
                wall[label].append((time.perf_counter() - start) / n * 1e6)
        medians = {label: statistics.median(values) for label, values in cpu.items()}
        wall_medians = {label: statistics.median(values) for label, values in wall.items()}
        reference = {"learn": medians["partial_fit (one NumPy row)"],
                     "progressive": medians[
                         "progressive: decision_function + partial_fit (one row)"]}
        print(f"\n{name} (budget 100), Phishing, {n} examples, median of {rounds} rounds "
              f"(CPU time of this single-threaded process; wall time in brackets)")
        for label, value in medians.items():
            base = reference["progressive" if label.startswith("progressive") else "learn"]
            print(f"  {label:56s} {value:8.1f} us/example  ({value / base:5.2f}x)  "
                  f"[{wall_medians[label]:.1f}]")
        results[name] = {"median_cpu_us": medians, "median_wall_us": wall_medians,
                         "all_cpu_us": cpu, "all_wall_us": wall}
    _common.write_json(_common.RESULTS / "river.json", results)


if __name__ == "__main__":
    main()
