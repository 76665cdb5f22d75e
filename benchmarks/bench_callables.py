"""Callable kernels against the named kernel (issue 27, item 5).

A matrix callable (``SVC``'s convention: ``kernel(A, B)`` returns the
``(n_A, n_B)`` matrix) runs in block mode, one call per chunk; the named
``'rbf'`` runs in the compiled store mode; a per-pair callable
(``pairwise_kernels``' convention) is called once per pair.  One online
pass (``fit``, ``max_iter=1``) of Forgetron and BSGD (projection: merging
needs the named ``'rbf'``) at budget 100 and 500, on the first rows of a9a
(123 features, made dense) and on 10-D blobs.  The per-pair callable is
timed on the first 1 000 rows only (it is hundreds of times slower) and
compared per example with the named kernel on those rows.

Timings: the best of alternating rounds (a shared machine).  Prints a table
and writes ``benchmarks/results/callables.json``.  ``--quick``: fewer rows
and rounds.
"""

import _common  # noqa: I001 - before NumPy (one BLAS thread)

_common.use_one_blas_thread()

import argparse  # noqa: E402
import platform  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.datasets import load_svmlight_file, make_blobs  # noqa: E402
from sklearn.metrics.pairwise import rbf_kernel  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from skbudget import BudgetedSGDClassifier, Forgetron  # noqa: E402


def load_a9a(n):
    X, y = load_svmlight_file(str(_common.DATA / "a9a" / "a9a.train"), n_features=123)
    return np.ascontiguousarray(X[:n].toarray()), y[:n]


def blobs(n):
    X, y = make_blobs(n, centers=2, n_features=10, cluster_std=4.0, random_state=0)
    return StandardScaler().fit_transform(X), y


def estimators(gamma, budget):
    def matrix(A, B):
        return rbf_kernel(A, B, gamma=gamma)

    def per_pair(a, b):
        d = a - b
        return np.exp(-gamma * np.dot(d, d))

    for name, Est, extra in [("Forgetron", Forgetron, {}),
                             ("BSGD-projection", BudgetedSGDClassifier,
                              dict(maintenance="projection", alpha=1e-4))]:
        def make(kernel, Est=Est, extra=extra):
            kw = dict(kernel=kernel, budget=budget, random_state=0, **extra)
            if kernel == "rbf":
                kw["gamma"] = gamma
            return Est(**kw)
        yield name, make, matrix, per_pair


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n_rows, rounds, pair_rows = (4000, 2, 300) if args.quick else (10000, 3, 1000)
    rows = []
    for data_name, (X, y), gamma in [("a9a", load_a9a(n_rows), 0.05),
                                     ("blobs-10d", blobs(n_rows), 0.1)]:
        for budget in (100, 500):
            for name, make, matrix, per_pair in estimators(gamma, budget):
                named_t, matrix_t = _common.best_times_alternating(
                    [lambda: make("rbf").fit(X, y), lambda: make(matrix).fit(X, y)], rounds)
                Xs, ys = X[:pair_rows], y[:pair_rows]
                named_small, pair_t = _common.best_times_alternating(
                    [lambda: make("rbf").fit(Xs, ys), lambda: make(per_pair).fit(Xs, ys)], 1)
                row = dict(data=data_name, n=len(y), budget=budget, estimator=name,
                           named_s=named_t, matrix_s=matrix_t,
                           matrix_ratio=matrix_t / named_t,
                           pair_rows=pair_rows, named_small_s=named_small, pair_s=pair_t,
                           pair_ratio=pair_t / named_small)
                rows.append(row)
                print(f"{data_name:9s} n={len(y):5d} B={budget:3d} {name:16s} rbf "
                      f"{named_t * 1e3:7.1f} ms  matrix callable {matrix_t * 1e3:7.1f} ms "
                      f"({row['matrix_ratio']:4.1f}x)  per-pair callable on {pair_rows} rows "
                      f"{row['pair_ratio']:6.0f}x", flush=True)
    _common.write_json(_common.RESULTS / ("callables_quick.json" if args.quick
                                          else "callables.json"),
                       dict(machine=platform.processor() or platform.machine(),
                            rounds=rounds, rows=rows))


if __name__ == "__main__":
    main()
