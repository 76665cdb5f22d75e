"""Prediction speed: the fused compiled kernel expansion against scikit-learn.

Target (issue "Engine speed", item 4): ``decision_function`` >= 2x faster
than ``pairwise_kernels(X, support_vectors_) @ dual_coef_.T`` (the
``rbf_kernel`` / ``polynomial_kernel`` / ``linear_kernel`` route a user
would write) with one BLAS thread, at |S| >= 1 000 for d in {2, 54}, and
never slower at d = 784, dense and CSR rows, for ``linear``, ``rbf`` and
``poly``.

The model is a ``KernelPerceptron`` whose fitted expansion is replaced by
``n_sv`` random support vectors and coefficients (prediction does not care
how they were learned); rows are Gaussian (dense) or, for CSR, the same
rows with about 70 % of the entries zeroed.  Reported: seconds (minimum of
``--repeats`` rounds, the two routes called in turn in each) of both routes
and their ratio.  Writes
``benchmarks/results/predict.json``.
"""

import argparse

from _common import RESULTS, best_times_alternating, use_one_blas_thread, write_json  # noqa: E402

use_one_blas_thread()

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from sklearn.metrics.pairwise import pairwise_kernels  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from skbudget import KernelPerceptron  # noqa: E402

KERNEL_PARAMS = {"linear": {}, "rbf": {"gamma": 0.1}, "poly": {"gamma": 0.1, "degree": 3, "coef0": 1.0}}


def model(kernel, n_sv, d, sparse, rng):
    """A fitted KernelPerceptron with ``n_sv`` random support vectors."""
    X = rng.randn(64, d)
    est = KernelPerceptron(kernel=kernel, max_iter=1, **KERNEL_PARAMS[kernel])
    est.fit(X, np.arange(64) % 2)
    vectors = rng.randn(n_sv, d)
    if sparse:
        vectors[rng.rand(n_sv, d) < 0.7] = 0.0
        vectors = sp.csr_matrix(vectors)
    est.support_vectors_ = vectors
    est.dual_coef_ = rng.randn(1, n_sv)
    est.n_support_ = np.array([n_sv], dtype=np.int32)
    return est


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rows, fewer repeats")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    repeats = 2 if args.quick else args.repeats
    rng = np.random.RandomState(0)
    rows = []
    print(f"{'kernel':7} {'d':>4} {'fmt':5} {'|S|':>5} {'n':>6} {'sklearn s':>10} "
          f"{'skbudget s':>10} {'speed-up':>8}")
    with threadpool_limits(limits=1, user_api="blas"):
        for d, n in [(2, 20000), (54, 20000), (784, 5000)]:
            n = n // 4 if args.quick else n
            for kernel in KERNEL_PARAMS:
                for sparse in (False, True):
                    n_sv = 1000
                    est = model(kernel, n_sv, d, sparse, rng)
                    X = rng.randn(n, d)
                    if sparse:
                        X[rng.rand(n, d) < 0.7] = 0.0
                        X = sp.csr_matrix(X)
                    params = KERNEL_PARAMS[kernel]

                    def reference():
                        K = pairwise_kernels(X, est.support_vectors_, metric=kernel, **params)
                        return K @ est.dual_coef_.T + est.intercept_

                    np.testing.assert_allclose(est.decision_function(X), reference()[:, 0],
                                               rtol=1e-9, atol=1e-9 * n_sv)
                    t_ref, t_ours = best_times_alternating(
                        [reference, lambda: est.decision_function(X)], repeats)
                    fmt = "csr" if sparse else "dense"
                    print(f"{kernel:7} {d:4d} {fmt:5} {n_sv:5d} {n:6d} {t_ref:10.4f} "
                          f"{t_ours:10.4f} {t_ref / t_ours:8.2f}", flush=True)
                    rows.append(dict(kernel=kernel, d=d, format=fmt, n_support=n_sv, n=n,
                                     sklearn_s=t_ref, skbudget_s=t_ours,
                                     speedup=t_ref / t_ours))
    write_json(RESULTS / ("predict_quick.json" if args.quick else "predict.json"),
               {"blas_threads": 1, "rows": rows})


if __name__ == "__main__":
    main()
