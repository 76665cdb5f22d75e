"""float32 prediction: a model whose support vectors are float32 scores in float32.

``kernel_expansion`` with float32 support vectors computes the inner
products in float32 (sgemm; feature by feature, float32 values' products
summed in float64), the squared norms and
everything after the inner products in float64: its scores are compared
with float64 kernel blocks of the same (float32) values.  The estimators
key on the dtype of ``support_vectors_``; the models here get float32
support vectors by hand (the expansion a model predicts with does not
depend on how it was learned).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from sklearn.metrics.pairwise import pairwise_kernels

from skbudget import BudgetedSGDClassifier, Forgetron, KernelPerceptron
from skbudget._base import _FUSED_MAX_VALUES
from skbudget._kernel_catalogue import CATALOGUE
from skbudget._predict_fast import canonical_csr, kernel_expansion
from tests.test_predict import PARAMS, _fused, _sparsified


def _within_float32_reach(scores, X, V, coef, intercept, kernel):
    """``scores`` against float64 kernel blocks of the same float32 values:
    within 1e-4 relative, or 1e-7 of the sum of the terms' magnitudes (a
    score that is a difference of much larger terms)."""
    X64 = X.astype(np.float64)
    V64 = V.astype(np.float64)
    K = pairwise_kernels(X64, V64, metric=kernel, **PARAMS[kernel])
    expected = K @ coef.T + intercept
    magnitude = np.abs(K) @ np.abs(coef).T
    error = np.abs(scores - expected)
    assert (error <= 1e-4 * np.abs(expected) + 1e-7 * magnitude).all(), error.max()
    # most scores are far tighter than that
    assert np.median(error / np.abs(expected)) < 1e-6


def _problem(n_features, rows, vectors, seed=0):
    rng = np.random.RandomState(seed)
    # several tiles both ways, ragged ends
    X = (rng.randn(700, n_features) / np.sqrt(n_features)).astype(np.float32)
    V = (rng.randn(1100, n_features) / np.sqrt(n_features)).astype(np.float32)
    if rows != "dense":
        X = sp.csr_matrix(_sparsified(X, rng, 0.02 if rows == "csr-very-sparse" else 0.5))
    if vectors == "csr":
        V = sp.csr_matrix(_sparsified(V, rng, 0.5))
    return X, V, rng.randn(3, 1100), rng.randn(3)


@pytest.mark.parametrize("kernel", sorted(PARAMS))
# feature by feature / sgemm
@pytest.mark.parametrize("n_features", [2, 30, 300])
@pytest.mark.parametrize("rows", ["dense", "csr", "csr-very-sparse"])
@pytest.mark.parametrize("vectors", ["dense", "csr"])
def test_float32_expansion_within_float32_reach(kernel, n_features, rows, vectors):
    X, V, coef, intercept = _problem(n_features, rows, vectors)
    assert X.dtype == V.dtype == np.float32
    scores = _fused(X, V, coef, intercept, kernel)
    assert scores.dtype == np.float64
    _within_float32_reach(scores, X, V, coef, intercept, kernel)


@pytest.mark.parametrize("kernel", sorted(PARAMS))
@pytest.mark.parametrize("rows", ["dense", "csr"])
@pytest.mark.parametrize("n_features", [2, 300])
def test_float32_vectors_score_rows_rounded_to_float32(kernel, rows, n_features):
    # float64 rows are converted: the scores of their float32 values, bit
    # for bit, and not the float64 computation's
    rng = np.random.RandomState(3)
    X = rng.randn(300, n_features) / np.sqrt(n_features)
    V = (rng.randn(200, n_features) / np.sqrt(n_features)).astype(np.float32)
    coef, intercept = rng.randn(2, 200), rng.randn(2)
    if rows == "csr":
        X = sp.csr_matrix(_sparsified(X, rng, 0.5))
    single = _fused(X, V, coef, intercept, kernel)
    assert_array_equal(single, _fused(X.astype(np.float32), V, coef, intercept, kernel))
    assert not np.array_equal(single, _fused(X, V.astype(np.float64), coef, intercept, kernel))


def test_float32_rbf_norms_take_every_feature():
    # a row equal to a support vector: distance 0 up to float32 products
    # (norms summed in float64), k = 1 to ~1e-6, whatever the width of a row
    rng = np.random.RandomState(5)
    for d in (1, 3, 5, 17, 784):
        V = rng.rand(7, d).astype(np.float32)
        scores = kernel_expansion(V, V, np.eye(7), np.zeros(7),
                                  CATALOGUE["rbf"].compiled_kind, 1.0, 3, 0.0)
        np.testing.assert_allclose(np.diag(scores), 1.0, atol=1e-6 * d)


def test_canonical_csr_keeps_float32():
    D = sp.csr_matrix((np.array([1.0, 2.0, 3.0], dtype=np.float32), np.array([1, 1, 0]),
                       np.array([0, 2, 3])), shape=(2, 3))
    assert not D.has_canonical_format
    fixed = canonical_csr(D)
    assert fixed.dtype == np.float32
    assert_array_equal(fixed.toarray(), [[0, 3, 0], [3, 0, 0]])
    same = canonical_csr(fixed)
    assert same.dtype == np.float32 and np.shares_memory(same.data, fixed.data)


# ----------------------------------------------------------------------
# the estimators: keyed on the dtype of support_vectors_
# ----------------------------------------------------------------------
def _data(seed=0, n=400, d=6, n_classes=3):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5) if n_classes == 3 else (X[:, 0] > 0)
    return X, y, rng.randn(500, d)


def _as_float32_model(est):
    """``est`` with its support vectors rounded to float32 (as training on
    float32 rows stores them)."""
    est.support_vectors_ = est.support_vectors_.astype(np.float32)
    return est


@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear", "sigmoid"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_float32_model_scores_in_float32(kernel, sparse):
    X, y, X_test = _data()
    if sparse:
        X, X_test = sp.csr_matrix(_sparsified(X, np.random.RandomState(1), 0.5)), \
            sp.csr_matrix(_sparsified(X_test, np.random.RandomState(2), 0.5))
    est = Forgetron(budget=40, kernel=kernel, gamma=0.1, degree=2, coef0=0.5,
                    random_state=0).fit(X, y)
    reference = est.decision_function(X_test)
    assert est.support_vectors_.dtype == np.float64
    # a float64 model scores float32 rows in float64 (converted), as before
    assert_array_equal(est.decision_function(X_test.astype(np.float32)),
                       est.decision_function(X_test.astype(np.float32).astype(np.float64)))
    _as_float32_model(est)
    assert est._prediction_dtype() is np.float32
    scores = est.decision_function(X_test)
    assert scores.dtype == np.float64
    # float64 rows are validated to float32: the float32 rows' scores
    X32 = X_test.astype(np.float32)
    assert_array_equal(scores, est.decision_function(X32))
    kind = est._kernel_function
    assert_array_equal(scores, kernel_expansion(X32, est.support_vectors_, est.dual_coef_,
                                                est.intercept_, kind.compiled_kind, kind.gamma,
                                                kind.degree, kind.coef0))
    # and within float32's reach of the float64 model's
    np.testing.assert_allclose(scores, reference, rtol=1e-4, atol=1e-6 * np.abs(reference).max())
    assert_array_equal(est.predict(X_test), est.classes_[np.argmax(scores, axis=1)])


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
def test_float32_model_validates_any_input_to_float32():
    X, y, X_test = _data(n_classes=2)
    est = _as_float32_model(Forgetron(budget=30, gamma=0.2, random_state=0).fit(X, y))
    expected = est.decision_function(X_test.astype(np.float32))
    assert_array_equal(est.decision_function(X_test.tolist()), expected)      # validate_data
    assert_array_equal(est.decision_function(np.asfortranarray(X_test)), expected)
    assert_array_equal(est.decision_function(sp.csr_array(X_test)),
                       est.decision_function(sp.csr_matrix(X_test, dtype=np.float32)))
    # a value float32 cannot hold is scikit-learn's error, not an inf score
    big = X_test.copy()
    big[3, 2] = 1e300
    with pytest.raises(ValueError, match="float32"):
        est.decision_function(big)
    with pytest.raises(ValueError, match="NaN"):
        est.decision_function(np.full_like(X_test, np.nan, dtype=np.float32))
    with pytest.raises(ValueError, match="features"):
        est.decision_function(X_test[:, :3].astype(np.float32))


@pytest.mark.parametrize("make", [
    # a kernel without a compiled kind: kernel blocks of float32 rows
    lambda: Forgetron(budget=30, kernel="laplacian", gamma=0.2, random_state=0),
    # the voted hypotheses: kernel blocks too
    lambda: KernelPerceptron(hypothesis="voted", gamma=0.2, random_state=0),
    # a shared support set (one row of dual_coef_ per class)
    lambda: BudgetedSGDClassifier(budget=30, gamma=0.2, multi_class="crammer_singer",
                                  random_state=0),
], ids=["laplacian", "voted", "shared"])
def test_float32_models_of_every_prediction_path(make):
    X, y, X_test = _data()
    est = make().fit(X, y)
    reference = est.decision_function(X_test)
    _as_float32_model(est)
    scores = est.decision_function(X_test)
    assert scores.dtype == np.float64
    assert_array_equal(scores, est.decision_function(X_test.astype(np.float32)))
    np.testing.assert_allclose(scores, reference, rtol=1e-4, atol=1e-5 * np.abs(reference).max())


def test_float32_model_too_large_to_fuse_uses_kernel_blocks(monkeypatch):
    X, y, X_test = _data()
    est = _as_float32_model(Forgetron(budget=30, gamma=0.2, random_state=0).fit(X, y))
    fused = est.decision_function(X_test)
    monkeypatch.setattr("skbudget._base._FUSED_MAX_VALUES", 0)
    assert _FUSED_MAX_VALUES > 0
    np.testing.assert_allclose(est.decision_function(X_test), fused, rtol=1e-5, atol=1e-6)
