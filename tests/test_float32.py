"""float32 input kept float32 (doc/user_guide/large_streams.rst, "float32"):
a kernel expansion started on float32 rows stores them as float32 (its
``support_vectors_``, the engine's store), computes their inner products in
float32 and everything else (kernel values, coefficients, scores) in
float64; later calls follow the first call's dtype, with a warning when
theirs differs; other dtypes get scikit-learn's conversion or error, the
model unchanged."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.exceptions import DataConversionWarning

from skbudget import BudgetedSGDClassifier, Forgetron, LowRankLinearizedSVC, Projectron
from skbudget._base import BaseKernelExpansionClassifier
from skbudget._engine import OnlineLearner
from skbudget.discovery import all_estimators
from tests.model_state import model_state
from tests.test_common import small

EXPANSIONS = [Est for _, Est in all_estimators()
              if issubclass(Est, BaseKernelExpansionClassifier)]
IDS = [Est.__name__ for Est in EXPANSIONS]


def _data(n=300, n_classes=3, seed=0):
    X, y = make_blobs(n_samples=n, centers=n_classes, n_features=6, cluster_std=2.5,
                      random_state=seed)
    return X / 4, y


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("Est", EXPANSIONS, ids=IDS)
def test_float32_rows_are_stored_as_float32(Est, sparse):
    X, y = _data()
    X32 = X.astype(np.float32)
    est = small(Est).fit(sp.csr_matrix(X32) if sparse else X32, y)
    assert est._storage_dtype == "float32"
    assert est.support_vectors_.dtype == np.float32
    assert est.dual_coef_.dtype == np.float64 and est.intercept_.dtype == np.float64
    for learner in est._driver.learners:
        if est._driver.uses_store:
            assert learner.store.dtype == np.float32 and learner.single
    for pool in est._driver.pools if not est._driver.uses_store else []:
        assert pool.dtype == np.float32
    scores = est.decision_function(X32)
    assert scores.dtype == np.float64 and np.isfinite(scores).all()
    reference = small(Est).fit(X, y)
    assert abs(est.score(X32, y) - reference.score(X, y)) <= 0.1


def _laplacian_matrix(X, Y):
    return np.exp(-0.5 * np.abs(X[:, None, :] - Y[None, :, :]).sum(axis=2))


@pytest.mark.parametrize("kernel", ["laplacian", _laplacian_matrix], ids=["laplacian", "callable"])
@pytest.mark.parametrize("Est", [Forgetron, Projectron])
def test_float32_pools_of_block_mode_kernels(Est, kernel):
    # kernels without a compiled form: the pools hold the float32 rows, the
    # rounds read the kernel's values widened to float64
    X, y = _data()
    X32 = X.astype(np.float32)
    est = Est(kernel=kernel, gamma=0.5, random_state=0).fit(X32[:200], y[:200])
    est.partial_fit(X32[200:], y[200:])
    assert not est._driver.uses_store
    assert est.support_vectors_.dtype == np.float32
    assert all(pool.dtype == np.float32 for pool in est._driver.pools)
    reference = Est(kernel=kernel, gamma=0.5, random_state=0).fit(X[:200], y[:200])
    reference.partial_fit(X[200:], y[200:])
    assert abs(est.score(X32, y) - reference.score(X, y)) <= 0.05


@pytest.mark.parametrize("Est", [Forgetron, BudgetedSGDClassifier, Projectron])
def test_float32_store_takes_half_the_bytes(Est):
    X, y = _data(n_classes=2)
    est64 = Est(random_state=0).fit(X, y)
    est32 = Est(random_state=0).fit(X.astype(np.float32), y)
    store64, store32 = est64._driver.learners[0].store, est32._driver.learners[0].store
    assert store64.shape == store32.shape
    assert store32.nbytes * 2 == store64.nbytes


def test_float32_agrees_with_float64_where_the_support_sets_agree():
    # the same rows in the same order: BSGD with removal keeps the same
    # support vectors here, and its decision values agree to 1e-4 relative
    X, y = _data(n=2000, n_classes=2, seed=3)
    est64 = BudgetedSGDClassifier(budget=50, gamma=0.5, random_state=0).fit(X, y)
    est32 = BudgetedSGDClassifier(budget=50, gamma=0.5, random_state=0).fit(
        X.astype(np.float32), y)
    assert_allclose(est32.support_vectors_, est64.support_vectors_.astype(np.float32))
    f64 = est64.decision_function(X)
    f32 = est32.decision_function(X.astype(np.float32))
    assert_allclose(f32, f64, rtol=1e-4, atol=1e-4 * np.abs(f64).max())
    assert abs(est32.score(X, y) - est64.score(X, y)) <= 0.002


@pytest.mark.parametrize("first, later", [(np.float32, np.float64), (np.float64, np.float32)])
def test_later_calls_follow_the_first_calls_dtype_and_say_so(first, later):
    X, y = _data()
    est = Forgetron(budget=20, random_state=0)
    est.partial_fit(X[:100].astype(first), y[:100], classes=[0, 1, 2])
    reference = clone(est).partial_fit(X[:100].astype(first), y[:100], classes=[0, 1, 2])
    with pytest.warns(DataConversionWarning, match=f"started on {np.dtype(first)} input"):
        est.partial_fit(X[100:].astype(later), y[100:])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reference.partial_fit(X[100:].astype(later).astype(first), y[100:])
    assert est.support_vectors_.dtype == first
    assert_array_equal(est.support_vectors_, reference.support_vectors_)
    assert_array_equal(est.dual_coef_, reference.dual_coef_)


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.int64, bool, object])
def test_other_real_dtypes_are_converted_to_float64(dtype):
    # scikit-learn's conversion (check_array's dtype list: float64 first)
    X, y = _data()
    est = Forgetron(budget=20, random_state=0).fit(np.round(X).astype(dtype), y)
    assert est._storage_dtype == "float64"
    assert est.support_vectors_.dtype == np.float64


@pytest.mark.parametrize("bad", [
    lambda X: X.astype(np.complex128),
    lambda X: np.where(X > 0, "a", "b").astype(object),
], ids=["complex", "object-strings"])
def test_unreadable_dtypes_fail_with_scikit_learns_error_and_leave_the_model(bad):
    X, y = _data()
    est = Forgetron(budget=20, random_state=0).partial_fit(X.astype(np.float32), y,
                                                           classes=[0, 1, 2])
    before = model_state(est)
    with pytest.raises(ValueError, match="Complex data not supported|could not convert"):
        est.partial_fit(bad(X), y)
    assert_array_equal(model_state(est)["support_vectors_"], before["support_vectors_"])
    assert est._storage_dtype == "float32"


def test_float32_model_pickles_and_keeps_streaming():
    X, y = _data()
    X32 = X.astype(np.float32)
    est = BudgetedSGDClassifier(budget=30, random_state=0).partial_fit(X32[:150], y[:150],
                                                                       classes=[0, 1, 2])
    loaded = pickle.loads(pickle.dumps(est))
    assert loaded._driver.learners[0].store.dtype == np.float32
    est.partial_fit(X32[150:], y[150:])
    loaded.partial_fit(X32[150:], y[150:])
    assert_array_equal(loaded.support_vectors_, est.support_vectors_)
    assert_array_equal(loaded.decision_function(X32), est.decision_function(X32))


def test_a_loaded_model_whose_store_dtype_contradicts_it_is_refused():
    X, y = _data()
    est = Forgetron(budget=20, random_state=0).fit(X.astype(np.float32), y)
    est._storage_dtype = "float64"      # (a tampered file)
    with pytest.raises(ValueError, match="_storage_dtype"):
        pickle.loads(pickle.dumps(est))


def test_the_store_takes_float64_or_float32_rows_only():
    learner = OnlineLearner()
    with pytest.raises(ValueError, match="float64 or float32"):
        learner.store = np.zeros((4, 3), dtype=np.int64)
    with pytest.raises(ValueError, match="float64 or float32"):
        learner.use_store(1, 1.0, 0.0, 3.0, 3, np.float16)
    learner.use_store(1, 1.0, 0.0, 3.0, 3, np.float32)
    assert learner.single and learner.store.dtype == np.float32
    ids = np.arange(2, dtype=np.intp)
    with pytest.raises(ValueError, match="C-contiguous 2-D float32"):
        learner.run_dense(np.zeros((2, 3)), ids, np.ones(2), ids, np.zeros(2), 0)


@pytest.mark.parametrize("Est", [Forgetron, BudgetedSGDClassifier])
def test_float32_chunks_give_the_model_of_one_call(Est):
    # the same rows through partial_fit in pieces and one fit pass (a
    # noisy stream: dozens of updates, the budget binds); the kernel values
    # of the pieces' chunks may come from GEMMs of other shapes, whose
    # float32 sums round apart in the last bits
    X, y = make_blobs(n_samples=400, centers=2, n_features=6, cluster_std=6, random_state=5)
    X32 = (X / 4).astype(np.float32)
    whole = Est(gamma=0.5, budget=30, random_state=0, shuffle=False).fit(X32, y)
    pieces = Est(gamma=0.5, budget=30, random_state=0)
    for start in range(0, 400, 70):
        pieces.partial_fit(X32[start:start + 70], y[start:start + 70], classes=[0, 1])
    assert whole.n_mistakes_ > 30 and whole.support_vectors_.shape[0] == 30
    assert_array_equal(pieces.support_vectors_, whole.support_vectors_)
    assert_allclose(pieces.dual_coef_, whole.dual_coef_, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("landmarks", ["kmeans", "random"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_llsvm_keeps_float32_landmarks(landmarks, sparse):
    # its landmarks are its stored rows: float32 for float32 input (the
    # map's normalization from their kernel matrix in float64), the model
    # float64; a float64 piece later is converted, as for every estimator
    X, y = _data(n=600)
    X32 = X.astype(np.float32)
    est = LowRankLinearizedSVC(budget=20, landmarks=landmarks, gamma=0.5, random_state=0)
    est.fit(sp.csr_matrix(X32) if sparse else X32, y)
    features = est._driver.features
    assert features.components.dtype == np.float32
    assert features.normalization.dtype == np.float64 and est.coef_.dtype == np.float64
    reference = LowRankLinearizedSVC(budget=20, landmarks=landmarks, gamma=0.5,
                                     random_state=0).fit(X, y)
    assert_allclose(features.components, reference._driver.features.components, rtol=1e-4,
                    atol=1e-5)
    assert_allclose(est.decision_function(X32), reference.decision_function(X), atol=1e-3)
    loaded = pickle.loads(pickle.dumps(est))
    with pytest.warns(DataConversionWarning):
        loaded.partial_fit(X[:100], y[:100])
    assert loaded._driver.features.components.dtype == np.float32
