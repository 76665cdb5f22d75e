"""Long streams: model size and the cost of a one-row ``partial_fit``.

Target (issue "A streaming engine you can trust", item 3): the pickle of a
budgeted model and the time of a one-row ``partial_fit`` do not depend on
how many examples the model has seen, from 10 000 to 2 000 000.  Each
budgeted estimator (``budget=50``; the Projectron with ``eta=0.7``) streams
an XOR-like problem (2 features, RBF, gamma=1) in calls of 10 000 rows; at
each checkpoint it reports the pickle size and the one-row call time
(minimum and median of 200 calls).  The yardstick is
``SGDClassifier.partial_fit`` on one row of the same data.  Writes
``benchmarks/results/stream[_quick].json``.

    python benchmarks/bench_stream.py            # up to 2 000 000 rows
    python benchmarks/bench_stream.py --quick    # up to 200 000 rows
"""

import argparse
import pickle
import time

from _common import RESULTS, use_one_blas_thread, write_json  # noqa: E402

use_one_blas_thread()

import numpy as np  # noqa: E402
from sklearn.linear_model import SGDClassifier  # noqa: E402

from skbudget import (  # noqa: E402
    BudgetPerceptron,
    Forgetron,
    Projectron,
    RandomBudgetPerceptron,
    Stoptron,
    TighterPerceptron,
    TightestPerceptron,
)

ESTIMATORS = {
    "Stoptron": lambda: Stoptron(budget=50, gamma=1.0),
    "RandomBudgetPerceptron": lambda: RandomBudgetPerceptron(budget=50, gamma=1.0, random_state=0),
    "BudgetPerceptron": lambda: BudgetPerceptron(budget=50, gamma=1.0),
    "Forgetron": lambda: Forgetron(budget=50, gamma=1.0),
    "Projectron": lambda: Projectron(eta=0.7, gamma=1.0),
    "TighterPerceptron": lambda: TighterPerceptron(budget=50, gamma=1.0, random_state=0),
    "TightestPerceptron": lambda: TightestPerceptron(budget=50, gamma=1.0),
}
CALL_ROWS = 10_000


def one_row_times(est, X, y, n_calls=200):
    """Seconds of ``n_calls`` one-row partial_fit calls."""
    times = []
    for i in range(n_calls):
        start = time.perf_counter()
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=[0, 1])
        times.append(time.perf_counter() - start)
    return np.array(times)


def stream(make, X, y, checkpoints):
    """Stream X in calls of CALL_ROWS rows; a row per checkpoint."""
    est, seen, rows = make(), 0, []
    for stop in checkpoints:
        for start in range(seen, stop, CALL_ROWS):
            est.partial_fit(X[start:start + CALL_ROWS], y[start:start + CALL_ROWS], classes=[0, 1])
        seen = stop
        times = one_row_times(est, X, y)
        rows.append({"examples": stop, "pickle_bytes": len(pickle.dumps(est)),
                     "one_row_us_min": 1e6 * times.min(),
                     "one_row_us_median": 1e6 * float(np.median(times)),
                     "n_support": int(est.n_support_.sum())})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="streams of 200 000 rows")
    args = parser.parse_args()
    n = 200_000 if args.quick else 2_000_000
    checkpoints = [10_000, 100_000, n] if not args.quick else [10_000, n]
    rng = np.random.RandomState(0)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)

    sgd = SGDClassifier(random_state=0).partial_fit(X[:CALL_ROWS], y[:CALL_ROWS], classes=[0, 1])
    sgd_times = one_row_times(sgd, X, y)
    print(f"SGDClassifier one-row partial_fit: min {1e6 * sgd_times.min():.0f} us, "
          f"median {1e6 * np.median(sgd_times):.0f} us")
    results = {"n": n, "call_rows": CALL_ROWS,
               "sgd_one_row_us_min": 1e6 * sgd_times.min(),
               "sgd_one_row_us_median": 1e6 * float(np.median(sgd_times)), "estimators": {}}
    print(f"{'estimator':<24}{'examples':>10}{'pickle B':>10}{'|S|':>6}{'1-row min us':>14}"
          f"{'median us':>11}")
    for name, make in ESTIMATORS.items():
        rows = stream(make, X, y, checkpoints)
        results["estimators"][name] = rows
        for r in rows:
            print(f"{name:<24}{r['examples']:>10}{r['pickle_bytes']:>10}{r['n_support']:>6}"
                  f"{r['one_row_us_min']:>14.0f}{r['one_row_us_median']:>11.0f}")
    write_json(RESULTS / f"stream{'_quick' if args.quick else ''}.json", results)


if __name__ == "__main__":
    main()
