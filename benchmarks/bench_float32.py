"""float32 against float64: fit time, store bytes, accuracy and agreement.

Issue 47's float32 targets, on mnist5k (d = 784, pixels / 255, a
stratified 4 000 / 1 000 split, the training rows in one fixed random
order), B = 500, ``gamma = 0.02``, one pass without shuffling, so that
both runs see the same rows in the same order:

- fit at least 1.5x faster in float32 for BSGD with removal and the
  Forgetron, at least 1.3x for shared BSGD merging;
- the store's bytes in float32 half of float64's;
- test accuracy within 0.2 point, and the decision values within 1e-4
  relative where the two runs' support sets agree: when every support
  vector of the float32 model is the float64 model's, rounded, the
  largest gap over the test rows, each row's gaps relative to its largest
  decision value in float64 (a value near 0 has no relative precision to
  keep); else the share of support vectors the two have in common.

Fit times are the best of ``--repeats`` alternating float64 / float32
fits on one BLAS thread (the rows are converted once, outside the
timing).  Prints a table and writes ``benchmarks/results/float32.json``.

Run: ``python benchmarks/bench_float32.py [--repeats 3] [--quick]``
(``--quick``: 1 500 training rows).
"""

from _common import DATA, RESULTS, best_time, use_one_blas_thread, write_json

use_one_blas_thread()

import argparse  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from skbudget import BudgetedSGDClassifier, Forgetron  # noqa: E402

BUDGET = 500
GAMMA = 0.02

MODELS = {
    "BSGD removal (shared)": lambda: BudgetedSGDClassifier(
        budget=BUDGET, gamma=GAMMA, maintenance="removal", shuffle=False, random_state=0),
    "Forgetron (one-vs-rest)": lambda: Forgetron(
        budget=BUDGET, gamma=GAMMA, shuffle=False, random_state=0),
    "BSGD merging (shared)": lambda: BudgetedSGDClassifier(
        budget=BUDGET, gamma=GAMMA, maintenance="merging", shuffle=False, random_state=0),
}
TARGETS = {"BSGD removal (shared)": 1.5, "Forgetron (one-vs-rest)": 1.5,
           "BSGD merging (shared)": 1.3}


def load(n_train):
    data = np.loadtxt(DATA / "mnist5k" / "mnist_5k.csv.gz", delimiter=",")
    X, y = data[:, :-1] / 255.0, data[:, -1].astype(int)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, train_size=4000, test_size=1000, stratify=y, random_state=0)
    order = np.random.RandomState(0).permutation(len(y_train))[:n_train]
    return np.ascontiguousarray(X_train[order]), y_train[order], X_test, y_test


def store_bytes(model):
    return int(sum(learner.store.nbytes for learner in model._driver.learners))


def agreement(m64, m32, X_test):
    """(largest relative gap of the decision values or None, share of the
    float32 model's support vectors found in the float64 model)."""
    sv64 = {row.tobytes() for row in m64.support_vectors_.astype(np.float32)}
    common = np.mean([row.tobytes() in sv64 for row in m32.support_vectors_])
    if common < 1.0 or m32.support_vectors_.shape != m64.support_vectors_.shape:
        return None, float(common)
    f64 = np.atleast_2d(m64.decision_function(X_test).T).T
    f32 = np.atleast_2d(m32.decision_function(X_test.astype(np.float32)).T).T
    scale = np.maximum(np.abs(f64).max(axis=1, keepdims=True), 1e-300)
    return float(np.max(np.abs(f32 - f64) / scale)), float(common)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    X, y, X_test, y_test = load(1500 if args.quick else 4000)
    X32, X_test32 = X.astype(np.float32), X_test.astype(np.float32)
    rows = []
    print(f"mnist5k, {len(y)} training rows, B = {BUDGET}, gamma = {GAMMA}; best of "
          f"{args.repeats}")
    print(f"{'model':26s} {'fit64 s':>8s} {'fit32 s':>8s} {'speed-up':>8s} {'target':>6s} "
          f"{'acc64':>6s} {'acc32':>6s} {'bytes32/64':>10s} {'rel gap':>9s} {'common':>6s}")
    for name, make in MODELS.items():
        fitted = {}

        def fit(rows_, key):
            fitted[key] = make().fit(rows_, y)
        times = {"float64": [], "float32": []}
        for _ in range(args.repeats):       # alternating: the same load on both
            times["float64"].append(best_time(lambda: fit(X, "float64"), 1))
            times["float32"].append(best_time(lambda: fit(X32, "float32"), 1))
        m64, m32 = fitted["float64"], fitted["float32"]
        t64, t32 = min(times["float64"]), min(times["float32"])
        gap, common = agreement(m64, m32, X_test)
        row = {
            "model": name, "fit_seconds_float64": t64, "fit_seconds_float32": t32,
            "speedup": t64 / t32, "target": TARGETS[name],
            "accuracy_float64": m64.score(X_test, y_test),
            "accuracy_float32": m32.score(X_test32, y_test),
            "store_bytes_float64": store_bytes(m64), "store_bytes_float32": store_bytes(m32),
            "support_float64": int(np.sum(m64.n_support_)),
            "support_float32": int(np.sum(m32.n_support_)),
            "max_relative_gap": gap, "support_in_common": common,
        }
        rows.append(row)
        print(f"{name:26s} {t64:8.2f} {t32:8.2f} {t64 / t32:8.2f} {TARGETS[name]:6.1f} "
              f"{100 * row['accuracy_float64']:6.2f} {100 * row['accuracy_float32']:6.2f} "
              f"{row['store_bytes_float32'] / row['store_bytes_float64']:10.3f} "
              f"{'-' if gap is None else f'{gap:9.1e}':>9s} {common:6.2f}")
    write_json(RESULTS / ("float32_quick.json" if args.quick else "float32.json"),
               {"rows": len(y), "budget": BUDGET, "gamma": GAMMA, "repeats": args.repeats,
                "results": rows})


if __name__ == "__main__":
    main()
