"""The fused compiled prediction equals the kernel blocks of pairwise_kernels.

It computes each kernel the catalogue gives a compiled kind with that kind:
a catalogue out of step with the compiled ``KernelKind`` fails here."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose
from sklearn.metrics.pairwise import pairwise_kernels

from skbudget._kernel_catalogue import CATALOGUE, RBF_KIND
from skbudget._predict_fast import _integer_power, kernel_expansion

PARAMS = {
    "linear": {},
    "rbf": {"gamma": 0.3},
    "poly": {"gamma": 0.2, "degree": 3, "coef0": 1.0},
    "polynomial": {"gamma": 0.5, "degree": 2, "coef0": 0.0},
    "sigmoid": {"gamma": 0.05, "coef0": -0.5},
}


def _expected(X, V, coef, intercept, kernel):
    K = pairwise_kernels(X, V, metric=kernel, **PARAMS[kernel])
    return K @ coef.T + intercept


def _fused(X, V, coef, intercept, kernel):
    params = {"gamma": 0.0, "degree": 3, "coef0": 0.0, **PARAMS[kernel]}
    return kernel_expansion(X, V, coef, intercept, CATALOGUE[kernel].compiled_kind,
                            params["gamma"], params["degree"], params["coef0"])


def test_every_compiled_kernel_is_checked():
    assert sorted(PARAMS) == sorted(name for name, kernel in CATALOGUE.items()
                                    if kernel.compiled_kind is not None)


def _sparsified(A, rng, density):
    A = A.copy()
    A[rng.rand(*A.shape) > density] = 0.0
    return A


@pytest.mark.parametrize("kernel", sorted(PARAMS))
# feature by feature / the FMA kernels (dgemm without AVX2 and FMA) / dgemm
@pytest.mark.parametrize("n_features", [2, 30, 300])
@pytest.mark.parametrize("rows", ["dense", "csr", "csr-very-sparse"])
@pytest.mark.parametrize("vectors", ["dense", "csr"])
def test_fused_expansion_equals_pairwise_kernels(kernel, n_features, rows, vectors):
    rng = np.random.RandomState(0)
    # 1 100 support vectors and 700 rows: several tiles both ways, ragged
    # ends (tiles of 128 rows, or of 512 where dgemm computes them)
    X = rng.randn(700, n_features) / np.sqrt(n_features)
    V = rng.randn(1100, n_features) / np.sqrt(n_features)
    if rows != "dense":
        X = sp.csr_matrix(_sparsified(X, rng, 0.02 if rows == "csr-very-sparse" else 0.5))
    if vectors == "csr":
        V = sp.csr_matrix(_sparsified(V, rng, 0.5))
    coef, intercept = rng.randn(3, 1100), rng.randn(3)
    expected = _expected(X, V, coef, intercept, kernel)
    assert_allclose(_fused(X, V, coef, intercept, kernel), expected, rtol=1e-10, atol=1e-10)


def test_no_support_vectors_gives_the_intercept():
    X = np.ones((4, 3))
    out = kernel_expansion(X, np.zeros((0, 3)), np.zeros((2, 0)), np.array([1.0, -2.0]),
                           RBF_KIND, 1.0, 3, 0.0)
    assert_allclose(out, [[1.0, -2.0]] * 4)


def test_inconsistent_shapes_raise():
    with pytest.raises(ValueError, match="inconsistent shapes"):
        kernel_expansion(np.ones((4, 3)), np.ones((5, 3)), np.ones((1, 4)), np.zeros(1),
                         RBF_KIND, 1.0, 3, 0.0)


@pytest.mark.parametrize("kind", [-1, 4])
def test_unknown_kind_raises(kind):
    with pytest.raises(ValueError, match="no compiled kernel"):
        kernel_expansion(np.ones((4, 3)), np.ones((5, 3)), np.ones((1, 5)), np.zeros(1),
                         kind, 1.0, 3, 0.0)


def test_read_only_inputs():
    rng = np.random.RandomState(1)
    X, V, coef, intercept = rng.randn(10, 4), rng.randn(7, 4), rng.randn(1, 7), np.zeros(1)
    for a in (X, V, coef, intercept):
        a.flags.writeable = False
    assert_allclose(_fused(X, V, coef, intercept, "rbf"), _expected(X, V, coef, intercept, "rbf"))


@pytest.mark.filterwarnings("ignore:overflow encountered")
@pytest.mark.parametrize("degree", [0, 1, 2, 3, 4, 7, 64])
def test_integer_power_is_repeated_squaring_value_by_value(degree):
    # the vectorized pass (blocks of 256 values) against the loop it
    # replaced, one value at a time: the same products, bit for bit
    rng = np.random.RandomState(degree)
    values = np.concatenate([rng.randn(1000) * 3, [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf,
                                                    np.nan, 1e200, -1e-200]])
    expected = np.empty_like(values)
    for j, base in enumerate(values):
        result, e = 1.0, degree
        while e > 0:
            if e & 1:
                result *= base
            base *= base
            e >>= 1
        expected[j] = result
    out = values.copy()
    _integer_power(out, degree)
    assert np.array_equal(out, expected, equal_nan=True)
