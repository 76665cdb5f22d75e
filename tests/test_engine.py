"""The compiled engine itself: draws, the feature store, entry checks."""
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics.pairwise import pairwise_kernels

from skbudget import BudgetPerceptron, Forgetron, KernelPerceptron, RandomBudgetPerceptron
from skbudget import _elementwise
from skbudget._cpu import (use_avx512_tiles, use_fma_kernels, use_small_gemm_kernels,
                           vector_loops)
from skbudget._engine import OnlineLearner, _resized, chunk_length
from skbudget._engine_testing import random_below
from skbudget._blas import scipy_openblas_core


@pytest.mark.parametrize("n", [1, 2, 7, 100, 2**31, 2**32 - 1, 2**32, 3 * 2**40])
def test_random_below_is_randomstate_randint(n):
    expected = np.random.RandomState(5)
    learner = OnlineLearner(rng=np.random.RandomState(5))
    assert [random_below(learner, n) for _ in range(300)] == [
        expected.randint(n) for _ in range(300)]
    assert learner.rng.randint(1000) == expected.randint(1000)   # same state after


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_non_finite_kernel_values_raise():
    X = np.array([[1e200, 0.0], [1e200, 1.0], [0.0, 1.0]])
    est = KernelPerceptron(kernel="poly", degree=3, gamma=1.0)
    with pytest.raises(ValueError, match="non-finite"):
        est.fit(X, [0, 1, 0])


@pytest.mark.filterwarnings("ignore:overflow encountered", "ignore:invalid value encountered")
@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly", "sigmoid"])
def test_non_finite_kernel_values_raise_where_sklearns_are_non_finite(kernel):
    # the stream loop's vectorized checks (bit tests on each argument)
    # against scikit-learn's own kernel block on the same rows
    X = np.array([[1e200, 0.0], [1e200, 1.0], [0.0, 1.0]] * 20)
    y = np.array([0, 1, 1] * 20)
    params = {"gamma": 1.0, "degree": 2}
    K = pairwise_kernels(X, X, metric=kernel, filter_params=True, **params)
    est = KernelPerceptron(kernel=kernel, **params)
    if np.isfinite(K).all():
        est.fit(X, y)
    else:
        with pytest.raises(ValueError, match="non-finite"):
            est.fit(X, y)


@pytest.mark.filterwarnings("ignore:overflow encountered", "ignore:invalid value encountered",
                            "ignore:divide by zero encountered")
@pytest.mark.parametrize("name", ["exp", "log", "tanh", "power"])
def test_elementwise_loops_are_numpys_bit_for_bit(name):
    rng = np.random.RandomState(0)
    values = np.concatenate([rng.randn(997) * 30, [0.0, -0.0, np.inf, -np.inf, np.nan,
                                                     800.0, -800.0, 1e-310]])
    for exponent in ([1.0] if name != "power" else [2.0, 3.0, 2.5]):
        out = values.copy()
        _elementwise._apply(name, out, exponent)
        expected = np.power(values, exponent) if name == "power" else getattr(np, name)(values)
        assert np.array_equal(out, expected, equal_nan=True)


def test_corrupted_state_raises_instead_of_crashing():
    X = np.random.RandomState(0).randn(40, 3)
    y = (X[:, 0] > 0).astype(int)
    est = RandomBudgetPerceptron(budget=5, gamma=1.0).partial_fit(X[:20], y[:20], classes=[0, 1])
    learner = est._learners[0]
    state = learner.get_state()
    state["slot"][state["order"][0]] = 10**6
    learner.set_state(state)
    with pytest.raises(ValueError, match="inconsistent state: slot 1000000"):
        est.partial_fit(X[20:], y[20:])


@pytest.mark.parametrize("Est", [RandomBudgetPerceptron, KernelPerceptron])
def test_threads_give_the_same_model_bit_for_bit(Est):
    rng = np.random.RandomState(0)
    X = rng.randn(300, 5)
    y = np.argmax(X[:, :4], axis=1)
    one = Est(gamma=0.5, random_state=0, n_jobs=1).fit(X, y)
    two = Est(gamma=0.5, random_state=0, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(one.dual_coef_, two.dual_coef_)
    np.testing.assert_array_equal(one.support_vectors_, two.support_vectors_)
    np.testing.assert_array_equal(one.mistake_curve_, two.mistake_curve_)


def _restoring(switch):
    """A fixture giving ``switch`` (an engine setting's function, which
    returns the previous setting), with the process's setting restored after."""
    @pytest.fixture
    def fixture():
        previous = switch(False)
        switch(previous)
        yield switch
        switch(previous)
    return fixture


small_gemm_kernels = _restoring(use_small_gemm_kernels)
fma_kernels = _restoring(use_fma_kernels)
avx512_tiles = _restoring(use_avx512_tiles)


def _fma_kernels_available():
    previous = use_fma_kernels(True)
    return use_fma_kernels(previous)


@pytest.mark.skipif(not _fma_kernels_available(), reason="this CPU has no AVX2 and FMA")
@pytest.mark.parametrize("n_features", [3, 40, 300])
@pytest.mark.parametrize("Est, params", [(KernelPerceptron, {}),
                                         (BudgetPerceptron, {"budget": 60}),
                                         (Forgetron, {"budget": 60})])
def test_fma_kernels_and_blas_give_the_same_model(Est, params, n_features, fma_kernels,
                                               small_gemm_kernels):
    # the training loop's inner products (the chunk's block, unless the
    # small-matrix kernels take it, and a stored example's row; up to 256
    # features) and prediction's tiles: the engine's FMA kernels or BLAS
    rng = np.random.RandomState(0)
    X = rng.randn(1200, n_features)
    y = (X[:, 0] + X[:, 1] + 0.5 * rng.randn(1200) > 0).astype(int)
    for transposed in (False, True):
        small_gemm_kernels(transposed)
        models = []
        for use in (True, False):
            fma_kernels(use)
            est = Est(gamma=1.0 / n_features, random_state=0, **params)
            est._chunk_size = 4 if transposed else 61      # 4 * |S| * d <= 10^6: fits
            models.append(est.fit(X, y))
        kernel, blas = models
        np.testing.assert_allclose(kernel.dual_coef_, blas.dual_coef_, rtol=1e-12)
        np.testing.assert_array_equal(kernel.support_vectors_, blas.support_vectors_)
        np.testing.assert_array_equal(kernel.mistake_curve_, blas.mistake_curve_)
    scores = []
    for use in (True, False):
        fma_kernels(use)
        scores.append(blas.decision_function(X[:300]))
    np.testing.assert_allclose(scores[0], scores[1], rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(not _fma_kernels_available(), reason="this CPU has no AVX2 and FMA")
@pytest.mark.parametrize("n_features", [3, 40])
def test_avx512_and_avx2_tiles_give_the_same_model_bit_for_bit(n_features, avx512_tiles):
    # (on a CPU without AVX-512 both runs take the AVX2 tiles)
    rng = np.random.RandomState(0)
    X = rng.randn(1000, n_features)
    y = (X[:, 0] + 0.5 * rng.randn(1000) > 0).astype(int)
    models = []
    for use in (True, False):
        avx512_tiles(use)
        models.append(BudgetPerceptron(budget=70, gamma=0.5, random_state=0).fit(X, y))
        models.append(KernelPerceptron(gamma=0.5, random_state=0).fit(X, y))
    for a, b in zip(models[:2], models[2:]):
        np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
        np.testing.assert_array_equal(a.support_vectors_, b.support_vectors_)
        np.testing.assert_array_equal(a.mistake_curve_, b.mistake_curve_)


@pytest.mark.parametrize("n_features", [8, 40])
@pytest.mark.parametrize("Est, params", [(KernelPerceptron, {}),
                                         (RandomBudgetPerceptron, {"budget": 150})])
def test_both_gemm_layouts_give_the_same_model(Est, params, n_features, small_gemm_kernels):
    # with OpenBLAS's small-matrix kernels, a chunk whose product fits them
    # multiplies the transposed chunk; without them (or for larger products)
    # the rows as they are: whatever this machine's BLAS, run both
    rng = np.random.RandomState(0)
    X = rng.randn(1500, n_features)
    y = (X[:, 0] + X[:, 1] + 0.5 * rng.randn(1500) > 0).astype(int)
    models = []
    for available in (True, False):
        small_gemm_kernels(available)
        est = Est(gamma=0.1, random_state=0, **params)
        est._chunk_size = 4         # 4 * |S| * d <= 10^6: fits
        models.append(est.fit(X, y))
    transposed, as_is = models
    np.testing.assert_allclose(as_is.dual_coef_, transposed.dual_coef_, rtol=1e-12)
    np.testing.assert_array_equal(as_is.support_vectors_, transposed.support_vectors_)
    np.testing.assert_array_equal(as_is.mistake_curve_, transposed.mistake_curve_)


@pytest.mark.parametrize("fma", [False, True])
def test_chunk_length_follows_the_blas(small_gemm_kernels, fma_kernels, fma):
    fma_kernels(fma)
    fma = fma and _fma_kernels_available()
    small_gemm_kernels(True)
    assert chunk_length(100, 54) == 32             # 32 * 100 * 54 <= 10^6
    assert chunk_length(500, 784) == 125           # too large for the kernels
    small_gemm_kernels(False)
    assert chunk_length(100, 54) == 48
    assert chunk_length(500, 54) == (120 if fma else 125)   # FMA: whole tiles of 12
    assert chunk_length(10**4, 2) == (252 if fma else 256)
    assert chunk_length(500, 784) == 125            # BLAS past 256 features


def test_scipy_openblas_core_is_the_one_scipy_calls():
    scipy_dir = os.path.join(os.sep, "env", "site-packages", "scipy")
    numpy_lib = {"internal_api": "openblas", "architecture": "Haswell",
                 "filepath": os.path.join(os.sep, "env", "site-packages", "numpy.libs", "o.so")}
    wheel_lib = {"internal_api": "openblas", "architecture": "SkylakeX",
                 "filepath": os.path.join(os.sep, "env", "site-packages", "scipy.libs", "o.so")}
    inside = dict(wheel_lib, filepath=os.path.join(scipy_dir, ".dylibs", "o.dylib"))
    mkl = {"internal_api": "mkl", "filepath": os.path.join(os.sep, "lib", "libmkl_rt.so")}
    assert scipy_openblas_core([numpy_lib, wheel_lib], scipy_dir) == "skylakex"
    assert scipy_openblas_core([inside, numpy_lib], scipy_dir) == "skylakex"
    # one shared system OpenBLAS; several cores and no way to tell; none
    assert scipy_openblas_core([numpy_lib, mkl], scipy_dir) == "haswell"
    assert scipy_openblas_core([numpy_lib, dict(wheel_lib, filepath="/lib/o.so")],
                               scipy_dir) is None
    assert scipy_openblas_core([mkl], scipy_dir) is None
    assert scipy_openblas_core([dict(numpy_lib, architecture=None)], scipy_dir) is None


def test_csr_rows_full_or_sparse_give_the_dense_model():
    # run_csr makes each chunk dense: rows with every column stored are
    # copied, the others scattered; both give the dense model
    import scipy.sparse as sp
    rng = np.random.RandomState(0)
    X = rng.randn(300, 6)
    X[::2][rng.uniform(size=(150, 6)) < 0.3] = 0.0   # every other row loses entries
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X_csr = sp.csr_matrix(X)
    stored = np.diff(X_csr.indptr)
    assert (stored == 6).sum() >= 150 and (stored < 6).sum() > 100
    dense = RandomBudgetPerceptron(budget=20, gamma=0.5, random_state=0).fit(X, y)
    sparse = RandomBudgetPerceptron(budget=20, gamma=0.5, random_state=0).fit(X_csr, y)
    np.testing.assert_allclose(sparse.dual_coef_, dense.dual_coef_, rtol=1e-12)
    np.testing.assert_array_equal(sparse.support_vectors_.toarray(), dense.support_vectors_)
    np.testing.assert_array_equal(sparse.mistake_curve_, dense.mistake_curve_)


def test_run_csr_rejects_rows_that_are_not_canonical():
    X = np.random.RandomState(0).randn(20, 3)
    est = RandomBudgetPerceptron(budget=5, gamma=1.0).partial_fit(X, X[:, 0] > 0,
                                                                  classes=[False, True])
    learner = est._learners[0]
    data, indptr = np.ones(3), np.array([0, 3], dtype=np.intc)
    rows, y, ids, scores = np.zeros(1, dtype=np.intp), np.ones(1), np.array([20]), np.empty(1)
    learner.start_call(20)
    for indices in ([2, 0, 1], [0, 0, 1]):          # unsorted, duplicated
        with pytest.raises(ValueError, match="must be canonical"):
            learner.run_csr(data, np.array(indices, dtype=np.intc), indptr, rows, y, ids,
                            scores, 0)
    with pytest.raises(ValueError, match="malformed CSR"):
        learner.run_csr(data, np.array([0, 1, 3], dtype=np.intc), indptr, rows, y, ids,
                        scores, 0)


def test_run_csr_trusting_canonical_rows_still_checks_what_it_scatters():
    # known_canonical (scipy's has_canonical_format): full rows are read as
    # dense rows without their indices; any other row's indices are still
    # range-checked one by one, so a stale flag cannot make it write outside
    X = np.random.RandomState(0).randn(20, 3)
    est = RandomBudgetPerceptron(budget=5, gamma=1.0).partial_fit(X, X[:, 0] > 0,
                                                                  classes=[False, True])
    learner = est._learners[0]
    rows, y, ids, scores = np.zeros(1, dtype=np.intp), np.ones(1), np.array([20]), np.empty(1)
    learner.start_call(20)
    for indices in ([0, 7], [2, -1], [0, 3]):       # not full: scattered
        with pytest.raises(ValueError, match="malformed CSR"):
            learner.run_csr(np.ones(2), np.array(indices, dtype=np.intc),
                            np.array([0, 2], dtype=np.intc), rows, y, ids, scores, 0, True)
    full = np.array([0.5, -1.0, 2.0])
    learner.run_csr(full, np.array([0, 1, 2], dtype=np.intc), np.array([0, 3], dtype=np.intc),
                    rows, y, ids, scores, 0, True)
    assert scores[0] == pytest.approx(est.decision_function(full[None, :])[0], rel=1e-12)


# Every estimator, every common kernel, gamma='scale', dense and CSR input,
# small chunks and large: the fitted model's bytes, hashed (a child process
# runs it, so that the environment variable is read at import).
MODEL_DIGEST_SCRIPT = """
import hashlib, numpy as np, scipy.sparse as sp
from skbudget._cpu import use_fma_kernels, vector_loops
use_fma_kernels(False)      # (AVX2 and FMA only: compared with BLAS in another test)
from skbudget._base import BaseKernelExpansionClassifier
from skbudget.discovery import all_estimators
rng = np.random.RandomState(0)
X = rng.randn(400, 19)
y = (X[:, 0] + X[:, 1] ** 2 + 0.3 * rng.randn(400) > 1).astype(int)
digest = hashlib.sha256()
for name, Est in all_estimators():
    # (a model that is no kernel expansion: no kernel parameter, no support vectors)
    expansion = issubclass(Est, BaseKernelExpansionClassifier)
    kernels = ("rbf", "poly", "sigmoid", "linear") if expansion else (None,)
    for kernel in kernels:
        for data, chunk in ((X, None), (sp.csr_matrix(np.where(abs(X) > 1, X, 0)), 7)):
            taken = Est().get_params()
            params = {name: value for name, value in (("budget", 25), ("gamma", "scale"))
                      if name in taken}
            if "maintenance" in taken and kernel != "rbf":
                params["maintenance"] = "projection"    # merging is for rbf only
            if kernel is not None:
                params.update(kernel=kernel, coef0=0.5)
            est = Est(random_state=0, **params)
            est._chunk_size = chunk
            est.fit(data, y)
            arrays = ((est.support_vectors_, est.dual_coef_) if expansion
                      else tuple(value for name, value in sorted(vars(est).items())  # its arrays
                                 if name.endswith("_") and isinstance(value, np.ndarray)))
            for value in arrays + (est.intercept_, est.decision_function(X)):
                value = value.toarray() if sp.issparse(value) else np.asarray(value)
                digest.update(np.ascontiguousarray(value, dtype=float).tobytes())
print(vector_loops(), digest.hexdigest())
"""


@pytest.mark.skipif(vector_loops() != "avx2", reason="this CPU runs the baseline loops only")
def test_avx2_and_baseline_loops_give_the_same_model_bit_for_bit():
    runs = []
    for disable in ("", "1"):
        env = dict(os.environ, SKBUDGET_DISABLE_AVX2=disable)
        result = subprocess.run([sys.executable, "-c", MODEL_DIGEST_SCRIPT], env=env,
                                capture_output=True, text=True, timeout=600,
                                cwd=Path(__file__).parents[1])
        assert result.returncode == 0, result.stderr[-2000:]
        runs.append(result.stdout.split())
    (avx2, avx2_digest), (baseline, baseline_digest) = runs
    assert (avx2, baseline) == ("avx2", "baseline")
    assert avx2_digest == baseline_digest


def test_support_vectors_sharing_a_stored_row_each_get_their_own():
    # before each chunk the store puts every support vector in the row of
    # its cell; two that share a stored row (the engine allows it: the
    # current example added twice) must each get a copy, and the model go
    # on as with two equal rows (the kernel perceptron keeps both: every
    # later score counts both)
    rng = np.random.RandomState(3)
    X = rng.randn(600, 2)
    y = (X[:, 0] + 0.8 * rng.randn(600) > 0).astype(int)
    models = []
    for shared in (True, False):
        est = KernelPerceptron(gamma=0.2, random_state=0)
        est._chunk_size = 7
        est.partial_fit(X[:200], y[:200], classes=[0, 1])
        learner = est._learners[0]
        state = learner.get_state()
        first, second = state["order"][0], state["order"][1]
        if shared:      # the second support vector now reads the first one's row
            state["slot"][second] = state["slot"][first]
        else:           # the same vector in a row of its own
            state["store"][state["slot"][second]] = state["store"][state["slot"][first]]
            state["store_sq"][state["slot"][second]] = state["store_sq"][state["slot"][first]]
        learner.set_state(state)
        models.append(est.partial_fit(X[200:], y[200:]))
    shared, copied = models
    np.testing.assert_array_equal(shared.mistake_curve_, copied.mistake_curve_)
    np.testing.assert_array_equal(shared.support_vectors_, copied.support_vectors_)
    np.testing.assert_allclose(shared.dual_coef_, copied.dual_coef_, rtol=1e-12)


def _learner_after_first_chunk(Est, X, y, **params):
    """A block-mode learner of ``Est`` (a matrix callable) that has run the
    stream's first chunk of 30 rows, and the rows of its pool."""
    est = Est(kernel=lambda A, B: pairwise_kernels(A, B, metric="rbf", gamma=0.5),
              random_state=0, **params)
    est._chunk_size = 30
    est.partial_fit(X[:30], y[:30], classes=[0, 1])
    return est._driver.learners[0], est._driver.pools[0]


@pytest.mark.parametrize("Est, params", [(Forgetron, {"budget": 8}),
                                         (KernelPerceptron, {})])
def test_a_chunk_reads_only_its_learners_columns_of_the_shared_block(Est, params):
    # one block k(chunk, [pool_1; ...; pool_L; chunk]) serves every learner:
    # a learner reads its own pool's columns and the chunk's, wherever its
    # pool lies; other learners' columns (NaN here) are never read
    rng = np.random.RandomState(0)
    X = rng.randn(60, 3)
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    learner, pool = _learner_after_first_chunk(Est, X, y, **params)
    assert pool.shape[0] > 0
    chunk, ids = X[30:], np.arange(30, 60)
    labels = np.where(y[30:] == 1, 1.0, -1.0)
    K_pool = pairwise_kernels(chunk, pool, metric="rbf", gamma=0.5)
    K_self = pairwise_kernels(chunk, chunk, metric="rbf", gamma=0.5)
    junk = np.full((30, 5), np.nan)
    runs = []
    for K, pool_column in [(np.hstack([K_pool, K_self]), 0),
                           (np.hstack([junk, K_pool, junk[:, :2], K_self]), 5)]:
        copy = pickle.loads(pickle.dumps(learner))
        scores = np.empty(30)
        copy.process_chunk(np.ascontiguousarray(K), pool_column, pool.shape[0], labels, ids,
                           scores)
        keep = copy.finish_chunk()
        runs.append((scores, keep, copy.coefficients(), copy.support_slots()))
    for first, second in zip(*runs):
        np.testing.assert_array_equal(first, second)
    assert np.all(np.isfinite(runs[0][0]))


def test_chunk_blocks_that_do_not_fit_are_errors_not_reads_out_of_bounds():
    rng = np.random.RandomState(1)
    X = rng.randn(60, 3)
    y = (X[:, 0] > 0).astype(int)
    learner, pool = _learner_after_first_chunk(Forgetron, X, y, budget=8)
    n_old, labels, ids = pool.shape[0], np.ones(4), np.arange(30, 34)
    K = np.zeros((4, n_old + 4))
    for block, pool_column, n_pool, D, message in [
            (K, 1, n_old, None, "do not lie before the chunk's last 4"),     # overlaps
            (K, -1, n_old, None, "do not lie before"),
            (K[:, 1:].copy(), 0, n_old, None, "do not lie before"),          # too narrow
            (K, 0, n_old, np.zeros((4, n_old)), "D has shape"),
    ]:
        with pytest.raises(ValueError, match=message):
            learner.process_chunk(block, pool_column, n_pool, labels, ids, np.empty(4), D)
    with pytest.raises(ValueError, match="chunk blocks disagree: y = 3"):
        learner.process_chunk(K, 0, n_old, labels[:3], ids, np.empty(4))


def test_resized_copies_any_one_dimensional_array_and_refuses_others():
    """The engine's growth copy: a contiguous array of numbers by memcpy,
    a strided or object array by NumPy, the same entries either way; a 0-d
    array (no length) is a ValueError, never a read of a missing shape."""
    np.testing.assert_array_equal(_resized(np.arange(3.0), 5), [0.0, 1.0, 2.0, 0.0, 0.0])
    np.testing.assert_array_equal(_resized(np.arange(5, dtype=np.intp), 2), [0, 1])
    np.testing.assert_array_equal(_resized(np.arange(6.0)[::2], 4), [0.0, 2.0, 4.0, 0.0])
    assert list(_resized(np.array(["a", "b"], dtype=object), 3)) == ["a", "b", 0]
    with pytest.raises(ValueError, match="1-D"):
        _resized(np.array(3.0), 5)
    with pytest.raises(ValueError, match="1-D"):
        _resized(np.zeros((2, 2)), 5)
