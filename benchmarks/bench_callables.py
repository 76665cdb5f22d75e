"""Callable kernels against the named kernel (issue 27, item 5).

A matrix callable (``SVC``'s convention: ``kernel(A, B)`` returns the
``(n_A, n_B)`` matrix) runs in block mode, one call per chunk; the named
``'rbf'`` runs in the compiled store mode; a per-pair callable
(``pairwise_kernels``' convention) is called once per pair.  One online
pass (``fit``, ``max_iter=1``) of Forgetron and BSGD (projection: merging
needs the named ``'rbf'``) at budget 100 and 500, on the first rows of a9a
(123 features, made dense) and on 10-D blobs.  Two matrix callables:
``lambda A, B: rbf_kernel(A, B, gamma=g)`` (scikit-learn's function, which
checks its input on every call), whose time inside the callable during
the fit is also reported (the rest is the estimator's), and the same
kernel in plain NumPy (no per-call checks).  The per-pair callable is
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
import time  # noqa: E402

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


class TimedCallable:
    """A matrix callable that adds up the time spent inside it."""

    def __init__(self, function):
        self.function, self.seconds = function, 0.0

    def __call__(self, A, B):
        start = time.perf_counter()
        try:
            return self.function(A, B)
        finally:
            self.seconds += time.perf_counter() - start


def estimators(gamma, budget):
    def matrix(A, B):
        return rbf_kernel(A, B, gamma=gamma)

    def plain_numpy(A, B):
        K = A @ B.T
        K *= -2
        K += np.einsum("ij,ij->i", A, A)[:, None]
        K += np.einsum("ij,ij->i", B, B)[None, :]
        np.maximum(K, 0, out=K)
        K *= -gamma
        return np.exp(K, out=K)

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
        yield name, make, matrix, plain_numpy, per_pair


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n_rows, rounds, pair_rows = (4000, 2, 300) if args.quick else (10000, 3, 1000)
    rows = []
    for data_name, (X, y), gamma in [("a9a", load_a9a(n_rows), 0.05),
                                     ("blobs-10d", blobs(n_rows), 0.1)]:
        for budget in (100, 500):
            for name, make, matrix, plain_numpy, per_pair in estimators(gamma, budget):
                timed, inside = TimedCallable(matrix), []

                def fit_timed():
                    timed.seconds = 0.0
                    make(timed).fit(X, y)
                    inside.append(timed.seconds)

                named_t, matrix_t, numpy_t = _common.best_times_alternating(
                    [lambda: make("rbf").fit(X, y), fit_timed,
                     lambda: make(plain_numpy).fit(X, y)], rounds)
                Xs, ys = X[:pair_rows], y[:pair_rows]
                named_small, pair_t = _common.best_times_alternating(
                    [lambda: make("rbf").fit(Xs, ys), lambda: make(per_pair).fit(Xs, ys)], 1)
                row = dict(data=data_name, n=len(y), budget=budget, estimator=name,
                           named_s=named_t, matrix_s=matrix_t,
                           matrix_ratio=matrix_t / named_t,
                           matrix_inside_callable_s=min(inside),
                           numpy_matrix_s=numpy_t, numpy_matrix_ratio=numpy_t / named_t,
                           pair_rows=pair_rows, named_small_s=named_small, pair_s=pair_t,
                           pair_ratio=pair_t / named_small)
                rows.append(row)
                print(f"{data_name:9s} n={len(y):5d} B={budget:3d} {name:16s} rbf "
                      f"{named_t * 1e3:7.1f} ms  matrix callable {matrix_t * 1e3:7.1f} ms "
                      f"({row['matrix_ratio']:4.1f}x; {min(inside) * 1e3:5.1f} ms inside it)  "
                      f"NumPy {numpy_t * 1e3:6.1f} ms ({row['numpy_matrix_ratio']:4.1f}x)  "
                      f"per-pair callable on {pair_rows} rows "
                      f"{row['pair_ratio']:6.0f}x", flush=True)
    _common.write_json(_common.RESULTS / ("callables_quick.json" if args.quick
                                          else "callables.json"),
                       dict(machine=platform.processor() or platform.machine(),
                            rounds=rounds, rows=rows))


if __name__ == "__main__":
    main()
