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

``--dtype float32``: float32 prediction against float64 instead (issue 47),
on mnist5k-shaped data: the 5 000 mnist5k rows (pixels / 255, about 80 %
zeros; ``../shared/data/mnist5k``, or random rows of that shape and
sparsity where it is missing), 500 of them as support vectors with random
coefficients (one row per class of 10, as a shared support set has them),
``rbf`` (gamma 0.02), ``poly``
and ``linear``, dense and CSR rows.  The same model predicts with
float64 support vectors on float64 rows and with the float32 support
vectors on float32 rows, in turn, ``--repeats`` rounds; reported: the
best seconds of each, the median of the rounds' float64 / float32 ratios
(a busy machine slows both of a round alike) and the largest score
difference relative to the scores' scale.  Writes
``benchmarks/results/predict_float32.json``.
"""

import argparse

from _common import (  # noqa: E402
    DATA,
    RESULTS,
    best_times_alternating,
    use_one_blas_thread,
    write_json,
)

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


def mnist5k_rows(rng):
    """The 5 000 mnist5k rows, pixels / 255 (or random rows of that shape
    and sparsity where the data is missing) and whether they are mnist5k's."""
    path = DATA / "mnist5k" / "mnist_5k.csv.gz"
    if path.exists():
        return np.loadtxt(path, delimiter=",")[:, :-1] / 255.0, True
    X = rng.rand(5000, 784)
    X[rng.rand(5000, 784) < 0.8] = 0.0
    return X, False


def float32_against_float64(args):
    """decision_function of a float32 model on float32 rows against the
    same model in float64 (the module docstring)."""
    repeats = 2 if args.quick else args.repeats
    rng = np.random.RandomState(0)
    X, real = mnist5k_rows(rng)
    if args.quick:
        X = X[:1250]
    n_sv, n_classes = 500, 10
    params = {"rbf": {"gamma": 0.02}, "poly": {"gamma": 0.02, "degree": 3, "coef0": 1.0},
              "linear": {}}
    rows = []
    print(f"data: {'mnist5k' if real else 'random rows of mnist5k shape'}, n={X.shape[0]}, "
          f"d={X.shape[1]}, |S|={n_sv}, {n_classes} classes, one BLAS thread")
    print(f"{'kernel':7} {'fmt':5} {'float64 s':>10} {'float32 s':>10} {'64/32':>6} "
          f"{'rows/s 32':>10} {'max err':>8}")
    with threadpool_limits(limits=1, user_api="blas"):
        for kernel, kernel_params in params.items():
            for sparse in (False, True):
                est = KernelPerceptron(kernel=kernel, max_iter=1, **kernel_params)
                est.fit(X[:64], np.arange(64) % n_classes)
                vectors = X[rng.choice(X.shape[0], n_sv, replace=False)]
                rows64 = sp.csr_matrix(X) if sparse else X
                rows32 = rows64.astype(np.float32)
                vectors64 = sp.csr_matrix(vectors) if sparse else vectors
                vectors32 = vectors64.astype(np.float32)
                # one support set for every class (as the shared multi-class
                # mode's): 500 vectors, a row of coefficients per class
                est.dual_coef_ = rng.randn(n_classes, n_sv)
                est.n_support_ = np.array([n_sv], dtype=np.int32)
                est.intercept_ = np.zeros(n_classes)

                def predict(vectors, rows):
                    est.support_vectors_ = vectors
                    return est.decision_function(rows)

                s64, s32 = predict(vectors64, rows64), predict(vectors32, rows32)
                error = float(np.abs(s32 - s64).max() / np.abs(s64).max())
                ratios, t64, t32 = [], [], []
                for _ in range(repeats):
                    a, b = best_times_alternating([lambda: predict(vectors64, rows64),
                                                   lambda: predict(vectors32, rows32)], 1)
                    t64.append(a)
                    t32.append(b)
                    ratios.append(a / b)
                fmt = "csr" if sparse else "dense"
                ratio = float(np.median(ratios))
                print(f"{kernel:7} {fmt:5} {min(t64):10.4f} {min(t32):10.4f} {ratio:6.2f} "
                      f"{X.shape[0] / min(t32):10.0f} {error:8.1e}", flush=True)
                rows.append(dict(kernel=kernel, format=fmt, n=X.shape[0], d=X.shape[1],
                                 n_support=n_sv, n_classes=n_classes, float64_s=min(t64),
                                 float32_s=min(t32), median_ratio=ratio,
                                 max_error_over_max_score=error))
    write_json(RESULTS / ("predict_float32_quick.json" if args.quick
                          else "predict_float32.json"),
               {"blas_threads": 1, "data": "mnist5k" if real else "random", "rows": rows})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rows, fewer repeats")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                        help="float32: float32 prediction against float64 (mnist5k-shaped)")
    args = parser.parse_args()
    if args.dtype == "float32":
        float32_against_float64(args)
        return
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
