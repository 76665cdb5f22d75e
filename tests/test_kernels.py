"""The engine's kernel blocks equal sklearn's pairwise_kernels."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.metrics.pairwise import pairwise_kernels

from skbudget import KernelPerceptron
from skbudget._kernels import FAST_KERNELS, KernelFunction


@pytest.mark.parametrize("kernel", sorted(FAST_KERNELS))
@pytest.mark.parametrize("sparse", [False, True])
def test_fast_kernels_equal_pairwise_kernels(kernel, sparse):
    rng = np.random.RandomState(0)
    X, Y = rng.randn(7, 5), rng.randn(4, 5)
    est = KernelPerceptron(kernel=kernel, gamma=0.3, degree=2, coef0=0.5).fit(X, [0, 1] * 3 + [0])
    A, B = (sp.csr_matrix(X), sp.csr_matrix(Y)) if sparse else (X, Y)
    expected = pairwise_kernels(X, Y, metric=kernel, filter_params=True,
                                gamma=0.3, degree=2, coef0=0.5)
    assert_allclose(est._kernel(A, B), expected, rtol=1e-12, atol=1e-12)
    assert_allclose(est._kernel(A, A), pairwise_kernels(X, X, metric=kernel, filter_params=True,
                                                        gamma=0.3, degree=2, coef0=0.5),
                    rtol=1e-12, atol=1e-12)


def test_rbf_self_values_are_exactly_one():
    X = np.random.RandomState(0).randn(6, 3) * 100
    est = KernelPerceptron(gamma=1e-3).fit(X, [0, 1] * 3)
    assert_array_equal(np.diag(est._kernel(X, X)), 1.0)
    # the chunk's block inside k(chunk, [pool; chunk]) gets the same values
    pool = X[:2]
    est._driver.pools = [pool]
    K_olds, K_new, _, _ = est._driver.chunk_blocks(X, X[2:], np.arange(2, 6), 0, None)
    assert_array_equal(np.diag(K_new), 1.0)
    assert_allclose(K_olds[0], est._kernel(X[2:], pool))


@pytest.mark.parametrize("kernel", sorted(FAST_KERNELS) + ["laplacian"])
@pytest.mark.parametrize("sparse", [False, True])
def test_kernel_diagonal_equals_the_diagonal_of_the_blocks(kernel, sparse):
    rng = np.random.RandomState(3)
    X = rng.normal(size=(150, 4)) * (rng.uniform(size=(150, 4)) < 0.6)
    X = sp.csr_matrix(X) if sparse else X
    function = KernelFunction(kernel, 0.3, 2, 0.5, None)
    assert_array_equal(function.diagonal(X), np.diag(function(X, X)))


@pytest.mark.parametrize("make", [
    lambda rng: rng.randn(20000, 54),
    lambda rng: rng.randn(3000, 7) * 1e-3 + 1e6,              # a large common offset
    lambda rng: np.r_[rng.randn(3000) + 1e6, rng.randn(3000) - 1e6][:, None],
    lambda rng: np.asfortranarray(rng.randn(301, 9)),          # F order: read as it lies
    lambda rng: rng.randn(400, 12)[::2, 1::3],                 # strided: the block path
    lambda rng: rng.randn(1, 1),
    lambda rng: np.full((5, 3), 2.5),
])
@pytest.mark.parametrize("sparse", [False, True])
def test_gamma_scale_variance_equals_numpy(make, sparse):
    # gamma='scale' reads X once (no temporary of its size): X.var() up to
    # the last bits, however X lies in memory (CSR: over every entry, the
    # implicit zeros included)
    from skbudget._kernels import _variance, compute_gamma
    X = make(np.random.RandomState(0))
    if sparse:
        X = np.where(np.abs(X) < np.median(np.abs(X)), 0.0, X)   # about half zeros
        X_csr = sp.csr_matrix(X)
    variance = _variance(X_csr if sparse else X)
    assert variance == pytest.approx(X.var(), rel=1e-13, abs=1e-300)
    assert compute_gamma("scale", X_csr if sparse else X) == pytest.approx(
        1.0 / (X.shape[1] * X.var()) if X.var() else 1.0, rel=1e-13)


def test_gamma_scale_variance_of_csr_with_duplicates_or_no_values():
    from skbudget._kernels import _variance
    X = sp.csr_matrix((np.array([1.0, 2.0, 5.0]), np.array([0, 0, 2]), np.array([0, 2, 3])),
                      shape=(2, 3))                      # two entries of (0, 0): 3.0
    assert not X.has_canonical_format
    assert _variance(X) == pytest.approx(X.toarray().var(), rel=1e-14)
    assert _variance(sp.csr_matrix((4, 3))) == 0.0
