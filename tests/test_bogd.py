"""BoundedOGDClassifier against the plain implementation of its rule
(tests/oracles/bogd.py), drawing the same removals from the same
generator, and its invariants and distributions; its shared multi-class
mode (doc/algorithms.md#bogd-shared) likewise."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_blobs
from sklearn.metrics.pairwise import laplacian_kernel

from skbudget import BoundedOGDClassifier
from skbudget._engine_testing import random_uniform
from skbudget._bogd_fast import COEFFICIENT, UNIFORM, BoundedOGDLearner, SharedBoundedOGDLearner
from skbudget._kernels import RBF_KIND
from skbudget.datasets import make_noisy_gaussians
from tests.model_state import assert_same_state, model_state
from tests.oracles import keeping_flags, mistake_flags
from tests.oracles.bogd import PlainBoundedOGDClassifier, PlainSharedBoundedOGD
from tests.test_atomic_calls import FlakyKernel
from tests.test_bpa import assert_chunks_equal_one_pass
from tests.test_bsgd import rbf
from tests.test_bsgd_multiclass import STREAMS as MULTICLASS_STREAMS
from tests.test_common import small
from tests.test_fixed_budget import STREAMS, _kernel
from tests.test_persistence import _assert_identical, _loaded

SAMPLINGS = ["uniform", "coefficient"]


def assert_matches(est, plain, X, y):
    """Same updates, removals, support set, coefficients and scores; the
    mistake flags too, except on rounds whose score is 0 up to rounding
    (rbf-zero-scores: two copies of a point whose coefficients cancel, which
    the global scale and the oracle's products round differently)."""
    est._chunk_size = 37
    keeping_flags(est).fit(X, y)
    plain.partial_fit(X, y)
    scores = np.abs(plain.scores)
    clear = scores > 1e-12
    assert_array_equal(mistake_flags(est)[clear], np.array(plain.mistakes)[clear])
    assert est.n_updates_ == plain.n_updates
    assert est._learners[0].n_removals == len(plain.removed)
    assert_array_equal(est.support_vectors_, X[plain.support_])
    assert_allclose(est.dual_coef_[0], plain.coef_, rtol=1e-9, atol=1e-12)
    Z = np.vstack([X[::7], X[::5] + 0.05])
    assert_allclose(est.decision_function(Z), plain.decision_function(Z), rtol=1e-9, atol=1e-9)
    return est, plain


@pytest.mark.parametrize("stream", STREAMS, ids=[s[0] for s in STREAMS])
@pytest.mark.parametrize("sampling", SAMPLINGS)
@pytest.mark.parametrize("budget, seed, params", [
    (2, 0, {}), (5, 1, dict(eta0=1.0, alpha=0.2, coef_bound=3.0)),
    (5, 3, dict(eta0=1.0, alpha=0.05, coef_bound=1.5)), (20, 2, {})])
def test_matches_plain(stream, sampling, budget, seed, params):
    _, X, y, kw, kernel = stream
    est, plain = assert_matches(
        BoundedOGDClassifier(budget=budget, sampling=sampling, random_state=seed, shuffle=False,
                             **params, **kw),
        PlainBoundedOGDClassifier(kernel, budget=budget, sampling=sampling, random_state=seed,
                                  **params),
        X, y)
    assert est.n_support_[0] <= budget


def recording_factors(plain):
    """The list every factor the oracle ``plain`` scales its coefficients by
    goes to, from now on."""
    factors, scale = [], plain._scale

    def recording(factor):
        factors.append(factor)
        scale(factor)
    plain._scale = recording
    return factors


def test_the_streams_bound_clip_and_fall_back():
    """The branches of the rules are reached: BOGD's bound scales the model
    down, BOGD++'s bound clips coefficients, negative p_j are set to 0."""
    by_name = {s[0]: s for s in STREAMS}
    _, X, y, kw, kernel = by_name["rbf-gauss"]
    params = dict(budget=5, eta0=1.0, alpha=0.05, coef_bound=1.5, random_state=1)
    plain = PlainBoundedOGDClassifier(kernel, **params)
    scaled = recording_factors(plain)
    plain.partial_fit(X, y)
    assert min(scaled) < 1 - 0.05 - 1e-9        # a bound's factor, below any decay
    assert np.max(np.abs(plain.coef_)) == pytest.approx(1.5)
    plain = PlainBoundedOGDClassifier(kernel, sampling="coefficient", **params)
    clipped = 0
    for i in range(len(y)):
        removals = len(plain.removed)
        plain.partial_fit(X[i:i + 1], y[i:i + 1])
        if len(plain.removed) > removals:
            clipped += np.any(np.isclose(np.abs(plain.coef_[:-1]), 1.5))
    assert clipped > 0
    params = dict(params, alpha=0.2, coef_bound=3.0)
    plain = PlainBoundedOGDClassifier(kernel, sampling="coefficient", **params)
    assert any(np.any(p == 0) for p in plain.partial_fit(X, y).probabilities)


def test_margin_of_exactly_one_updates():
    # linear kernel, x = 1, y = +1: f = 0 adds 0.5 x; then f(x) = 0.5 <= 1 and
    # 0.5 * (1 - eta alpha) + 0.5 = 1 - ... ; with alpha = 0 after two
    # updates f(2x) = 2 exactly: no update; f(x) = 1 exactly: an update
    X = np.array([[1.0], [1.0], [1.0], [1.0]])
    est = BoundedOGDClassifier(budget=10, alpha=0.0, kernel="linear", shuffle=False)
    est.partial_fit(X[:2], [1, 1], classes=[-1, 1])
    assert est.decision_function(X[:1])[0] == 1.0
    est.partial_fit(X[2:3], [1])
    assert est.n_updates_ == 3
    assert est.decision_function(X[:1])[0] == 1.5
    est.partial_fit(X[3:], [1])
    assert est.n_updates_ == 3


def test_random_uniform_is_random_sample():
    for seed in range(3):
        rng = np.random.RandomState(seed)
        learner = BoundedOGDLearner(rng=rng)
        learner.begin_call()
        draws = [random_uniform(learner) for _ in range(50)]
        assert draws == list(np.random.RandomState(seed).random_sample(50))


@pytest.mark.parametrize("sampling", SAMPLINGS)
def test_random_state_determines_the_model(sampling):
    X, y = make_noisy_gaussians(300, random_state=0)
    kw = dict(budget=8, sampling=sampling, gamma=1.0)
    a = BoundedOGDClassifier(random_state=0, **kw).fit(X, y)
    b = BoundedOGDClassifier(random_state=0, **kw).fit(X, y)
    c = BoundedOGDClassifier(random_state=1, **kw).fit(X, y)
    assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert_array_equal(a.support_vectors_, b.support_vectors_)
    assert not np.array_equal(a.support_vectors_, c.support_vectors_)


@pytest.mark.parametrize("sampling", SAMPLINGS)
def test_chunks_equal_one_pass(sampling):
    assert_chunks_equal_one_pass(lambda: BoundedOGDClassifier(
        budget=10, sampling=sampling, gamma=1.0, shuffle=False, random_state=3))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), budget=st.integers(2, 8),
       sampling=st.sampled_from(SAMPLINGS))
def test_bound_after_every_removal(seed, budget, sampling):
    """After every round that removes, no coefficient exceeds eta0 gamma
    (BOGD++: the new one is eta0 itself)."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(40, 2))
    y = np.where(rng.uniform(size=40) < 0.5, 1, -1)
    est = BoundedOGDClassifier(budget=budget, eta0=0.7, alpha=0.01, coef_bound=1.2,
                               sampling=sampling, gamma=1.0, random_state=seed)
    removals = 0
    for i in range(len(y)):
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=[-1, 1])
        assert est.n_support_[0] <= budget
        if est._learners[0].n_removals > removals:
            removals = est._learners[0].n_removals
            assert np.max(np.abs(est.dual_coef_)) <= 0.7 * 1.2 * (1 + 1e-12)


def test_removals_follow_their_distributions():
    """BOGD removes every position alike; BOGD++ removes position j with
    probability p_j (the oracle's, which the estimator follows draw by draw):
    chi-squared tests over many removals."""
    from scipy.stats import chisquare
    X, y = make_noisy_gaussians(3000, random_state=2)
    kernel = _kernel("rbf", gamma=1.0)
    plain = PlainBoundedOGDClassifier(kernel, budget=6, random_state=0).partial_fit(X, y)
    counts = np.bincount(plain.removed, minlength=6)
    assert chisquare(counts).pvalue > 1e-3
    plain = PlainBoundedOGDClassifier(kernel, budget=6, sampling="coefficient", random_state=0)
    plain.partial_fit(X[:1500], y[:1500])
    expected = np.sum(plain.probabilities, axis=0)
    counts = np.bincount(plain.removed, minlength=6)
    assert chisquare(counts, expected * counts.sum() / expected.sum()).pvalue > 1e-3


def test_invalid_parameters_are_clear_errors():
    X, y = make_noisy_gaussians(20, random_state=0)
    with pytest.raises(ValueError, match="budget"):
        BoundedOGDClassifier(budget=1).fit(X, y)
    with pytest.raises(ValueError, match="eta0 \\* alpha must be below 1"):
        BoundedOGDClassifier(eta0=2.0, alpha=0.5).fit(X, y)
    est = BoundedOGDClassifier(budget=5).fit(X, y)
    coef = est.dual_coef_.copy()
    est.set_params(eta0=2.0, alpha=0.5)
    with pytest.raises(ValueError):
        est.partial_fit(X, y)
    assert_array_equal(est.dual_coef_, coef)


# ----------------------------------------------------------------------
# the shared multi-class mode (doc/algorithms.md#bogd-shared)
# ----------------------------------------------------------------------
SHARED_PARAMS = [(2, 0, {}), (5, 1, dict(eta0=1.0, alpha=0.05, coef_bound=1.5)),
                 (5, 3, dict(eta0=1.0, alpha=0.2, coef_bound=3.0)), (20, 2, {})]


def shared(**params):
    """A shared-mode BoundedOGDClassifier that keeps every round's mistake
    flag and learns in stream order."""
    return keeping_flags(BoundedOGDClassifier(multi_class="crammer_singer", shuffle=False,
                                              **params))


def assert_shared_matches(est, plain, X):
    """Mistakes round by round (where the margin is not 0 up to rounding),
    updates, removals, the support set, every coefficient row and the class
    scores; the oracle's support size after every round within the budget."""
    clear = np.abs(plain.margins) > 1e-12
    assert_array_equal(mistake_flags(est)[clear], np.array(plain.mistakes)[clear])
    assert est.n_updates_ == plain.n_updates
    assert est._learners[0].n_removals == len(plain.removed)
    assert max(plain.sizes) <= plain.budget
    assert_array_equal(est.n_support_, [len(plain.support_)])
    sv = est.support_vectors_
    assert_array_equal(sv.toarray() if sp.issparse(sv) else sv, X[plain.support_])
    assert est.dual_coef_.shape == plain.coef.shape == (plain.k, len(plain.support_))
    assert_allclose(est.dual_coef_, plain.coef, rtol=1e-9, atol=1e-12)
    Z = np.vstack([X[::7], X[::5] + 0.05])
    assert_allclose(est.decision_function(Z), plain.decision_scores(Z), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("stream", MULTICLASS_STREAMS, ids=[s[0] for s in MULTICLASS_STREAMS])
@pytest.mark.parametrize("sampling", SAMPLINGS)
@pytest.mark.parametrize("budget, seed, params", SHARED_PARAMS)
def test_shared_mode_matches_plain(stream, sampling, budget, seed, params):
    _, X, y, gamma = stream
    est = shared(budget=budget, sampling=sampling, random_state=seed, gamma=gamma,
                 **params).fit(X, y)
    plain = PlainSharedBoundedOGD(rbf(gamma), len(np.unique(y)), budget=budget,
                                  sampling=sampling, random_state=seed, **params)
    plain.partial_fit(X, y)
    assert len(plain.removed) > 50          # the budget binds
    assert_shared_matches(est, plain, X)


# (name, the estimator's kernel parameters, the oracle's kernel): the
# laplacian kernel runs in block mode (Python computes the kernel blocks)
OTHER_KERNELS = [
    ("linear", dict(kernel="linear"), _kernel("linear")),
    ("poly", dict(kernel="poly", degree=2, gamma=0.5, coef0=1.0),
     _kernel("poly", gamma=0.5, degree=2, coef0=1.0)),
    ("laplacian-block-mode", dict(kernel="laplacian", gamma=0.5),
     lambda A, B: laplacian_kernel(A, B, gamma=0.5))]


@pytest.mark.parametrize("sampling", SAMPLINGS)
@pytest.mark.parametrize("name, params, func", OTHER_KERNELS, ids=[k[0] for k in OTHER_KERNELS])
def test_shared_mode_with_other_kernels_and_csr_matches_plain(sampling, name, params, func):
    _, X, y, _ = MULTICLASS_STREAMS[1]
    X = np.where(np.abs(X) < 0.5, 0.0, X)   # (zeros: CSR stores fewer values)
    for rows in (X, sp.csr_matrix(X)):
        est = shared(budget=8, eta0=0.3, sampling=sampling, random_state=4,
                     **params).fit(rows, y)
        plain = PlainSharedBoundedOGD(func, 5, budget=8, eta0=0.3, sampling=sampling,
                                      random_state=4).partial_fit(X, y)
        assert sp.issparse(est.support_vectors_) == sp.issparse(rows)
        assert_shared_matches(est, plain, X)


def test_shared_streams_reach_every_branch():
    """BOGD's bound scales the rows down, BOGD++'s bound clips a row's
    norm, its zeroed p_j, and a zero weight ``w_j`` (a nonzero row on the
    linear kernel's zero vector, ``k_jj = 0``): p_j = 1 with B = 2."""
    _, X, y, gamma = MULTICLASS_STREAMS[0]
    params = dict(budget=5, eta0=1.0, alpha=0.05, coef_bound=1.5, random_state=1)
    plain = PlainSharedBoundedOGD(rbf(gamma), 4, **params)
    scaled = recording_factors(plain)
    plain.partial_fit(X, y)
    assert min(scaled) < 1 - 0.05 - 1e-9        # a bound's factor, below any decay
    assert max(np.linalg.norm(plain.coef, axis=0)) == pytest.approx(1.5)
    plain = PlainSharedBoundedOGD(rbf(gamma), 4, sampling="coefficient", **params)
    clipped = 0
    for i in range(len(y)):
        removals = len(plain.removed)
        plain.partial_fit(X[i:i + 1], y[i:i + 1])
        if len(plain.removed) > removals:
            clipped += np.any(np.isclose(np.linalg.norm(plain.coef[:, :-1], axis=0), 1.5))
    assert clipped > 0
    plain = PlainSharedBoundedOGD(rbf(gamma), 4, sampling="coefficient",
                                  **dict(params, alpha=0.2, coef_bound=3.0))
    assert any(np.any(p == 0) for p in plain.partial_fit(X, y).probabilities)
    Xz = np.vstack([np.zeros((1, 2)), X[:60]])
    yz = np.concatenate([[0], y[:60]])
    est = shared(budget=2, kernel="linear", sampling="coefficient", random_state=0).fit(Xz, yz)
    plain = PlainSharedBoundedOGD(lambda A, B: A @ B.T, 4, budget=2, sampling="coefficient",
                                  random_state=0).partial_fit(Xz, yz)
    assert plain.removed[0] == 0 and plain.probabilities[0].tolist() == [1.0, 0.0]
    assert_shared_matches(est, plain, Xz)


def test_shared_scale_folds_into_the_rows():
    """The decay and BOGD's factors are the global scale; when it leaves
    [1e-100, 1e100] it is folded into the rows, and the model is the
    oracle's still."""
    X, y = make_blobs(400, centers=3, cluster_std=0.5, random_state=0)
    params = dict(budget=10, eta0=1.0, alpha=0.5, coef_bound=10.0, random_state=0)
    est = shared(gamma=0.5, **params)
    scales = []
    for i in range(len(y)):
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=[0, 1, 2])
        scales.append(est._learners[0].scale)
    assert np.any(np.array(scales[1:]) > 1e50 * np.array(scales[:-1]))   # a fold
    plain = PlainSharedBoundedOGD(rbf(0.5), 3, **params).partial_fit(X, y)
    assert_shared_matches(est, plain, X)


@pytest.mark.parametrize("sampling", SAMPLINGS)
def test_shared_chunks_pickles_and_epochs(sampling):
    _, X, y, gamma = MULTICLASS_STREAMS[1]
    params = dict(budget=12, sampling=sampling, gamma=gamma, random_state=3)
    fitted = BoundedOGDClassifier(multi_class="crammer_singer", shuffle=False,
                                  **params).fit(X, y)
    # partial_fit on chunks of 45 rows (dense and CSR in turn) is one epoch
    # without shuffling, and so is a copy pickled after the fourth, continued
    streamed, resumed = BoundedOGDClassifier(multi_class="crammer_singer", **params), None
    for i, start in enumerate(range(0, len(y), 45)):
        rows = slice(start, start + 45)
        streamed.partial_fit(sp.csr_matrix(X[rows]) if i % 2 else X[rows], y[rows],
                             classes=np.arange(5))
        assert streamed.n_support_[0] <= 12
        if resumed is not None:
            resumed.partial_fit(X[rows], y[rows])
        elif i == 3:
            resumed = pickle.loads(pickle.dumps(streamed))
    for model in (fitted, streamed, resumed):
        assert isinstance(model._learners[0], SharedBoundedOGDLearner)
        assert_allclose(model.dual_coef_, fitted.dual_coef_, rtol=1e-12, atol=1e-14)
        assert_array_equal(model.support_vectors_, fitted.support_vectors_)
        assert_array_equal(model.mistake_curve_, fitted.mistake_curve_)
    # shuffled epochs: within the budget, reproducible, another generator
    # draws other removals
    a = BoundedOGDClassifier(multi_class="crammer_singer", max_iter=3, **params).fit(X, y)
    b = BoundedOGDClassifier(multi_class="crammer_singer", max_iter=3, **params).fit(X, y)
    c = BoundedOGDClassifier(multi_class="crammer_singer", max_iter=3,
                             **dict(params, random_state=4)).fit(X, y)
    assert a.n_support_[0] <= 12 and a.n_rounds_ == 3 * len(y)
    assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert not np.array_equal(a.support_vectors_, c.support_vectors_)


def test_shared_fitted_attributes_and_the_whole_model_budget():
    _, X, y, gamma = MULTICLASS_STREAMS[1]
    est = BoundedOGDClassifier(budget=30, multi_class="crammer_singer", sampling="coefficient",
                               gamma=gamma, random_state=0).fit(X, y)
    assert len(est._learners) == 1
    assert_array_equal(est.n_support_, [30])
    assert est.dual_coef_.shape == (5, 30) and est.support_vectors_.shape == (30, 5)
    scores = est.decision_function(X)
    K = np.exp(-gamma * ((X[:, None] - est.support_vectors_) ** 2).sum(-1))
    assert_allclose(scores, K @ est.dual_coef_.T, rtol=1e-9, atol=1e-12)
    assert_array_equal(est.predict(X), est.classes_[np.argmax(scores, axis=1)])
    assert_array_equal(est.intercept_, np.zeros(5))
    assert 0 < est.n_mistakes_ < est.n_updates_ <= 400
    assert est.n_updates_ == est._learners[0].n_removals + 30
    assert est.score(X, y) > 0.6
    ovr = BoundedOGDClassifier(budget=30, sampling="coefficient", gamma=gamma,
                               random_state=0).fit(X, y)
    assert ovr.support_vectors_.shape[0] > 30 * 4


@pytest.mark.parametrize("sampling", SAMPLINGS)
def test_shared_mode_on_two_classes_is_the_binary_model(sampling):
    X, y = make_noisy_gaussians(200, random_state=0)
    a = BoundedOGDClassifier(budget=8, sampling=sampling, multi_class="crammer_singer",
                             gamma=1.0, random_state=0).fit(X, y)
    b = BoundedOGDClassifier(budget=8, sampling=sampling, gamma=1.0, random_state=0).fit(X, y)
    assert isinstance(a._learners[0], BoundedOGDLearner)
    assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert_array_equal(a.support_vectors_, b.support_vectors_)


def run_learner(learner, X, labels, first_id=0):
    """Feed ``learner`` (RBF, gamma 0.5, store mode) the rows of ``X`` with
    the class indices ``labels``, as the estimator does; the value each
    round returns and the support size after it."""
    if not learner.uses_store:
        learner.use_store(RBF_KIND, 0.5, 0.0, 3.0, X.shape[1])
    n = len(labels)
    values, sizes = np.zeros(n), np.zeros(n, dtype=np.intp)
    learner.begin_call()
    learner.start_call(first_id)
    learner.run_dense(np.ascontiguousarray(X, dtype=float), np.arange(n, dtype=np.intp),
                      np.asarray(labels, dtype=float), np.arange(first_id, first_id + n),
                      values, 0, support_sizes=sizes)
    return values, sizes


@pytest.mark.parametrize("sampling", SAMPLINGS)
def test_shared_learner_grows_from_one_class(sampling):
    """A learner started on one class has no rival (no update, no mistake);
    ``add_class`` gives a new class a zero column (the scores of the others
    kept) and the rule goes on on two, then three, columns, within the
    budget and as the oracle does."""
    X, y = make_blobs(300, centers=3, cluster_std=1.5, random_state=0)
    by_class = [X[y == c] for c in range(3)]
    # classes seen: 2 (30 rows), then 0 and 2 (40 rows), then all (60 rows)
    phases = [([2], np.vstack([by_class[2][:30]])),
              ([0, 2], np.vstack([by_class[0][:20], by_class[2][30:50]])),
              ([0, 1, 2], np.vstack([by_class[0][20:40], by_class[1][:20], by_class[2][50:70]]))]
    learner = SharedBoundedOGDLearner(n_classes=1, budget=6,
                                      sampling=UNIFORM if sampling == "uniform" else COEFFICIENT,
                                      rng=np.random.RandomState(5))
    plain = PlainSharedBoundedOGD(rbf(0.5), 1, budget=6, sampling=sampling, random_state=5)
    rng = np.random.RandomState(0)
    seen, classes = 0, []
    for known, rows in phases:
        for position, new_class in enumerate(known):
            if new_class in classes:
                continue
            classes.insert(position, new_class)
            if len(classes) == 1:
                continue            # (the learner starts with it)
            Z = X[::9]
            before = _learner_scores(learner, Z)
            learner.add_class(position)
            plain.k += 1
            plain.rows = [np.insert(row, position, 0.0) for row in plain.rows]
            after = _learner_scores(learner, Z)
            assert_array_equal(after[:, position], 0.0)
            assert_array_equal(np.delete(after, position, axis=1), before)
            learner.check_state()
        labels = np.repeat(np.arange(len(known)), len(rows) // len(known))
        shuffled = rng.permutation(len(rows))
        rows, labels = rows[shuffled], labels[shuffled]
        values, sizes = run_learner(learner, rows, labels, first_id=seen)
        plain.partial_fit(rows, labels)
        seen += len(rows)
        if len(known) == 1:         # no rival: no update, no mistake
            assert np.all(values > 0) and learner.n_sv == 0 and learner.n_updates == 0
        assert sizes.max() <= 6
        clear = np.abs(plain.margins[-len(labels):]) > 1e-12
        assert_array_equal((values <= 0)[clear], np.array(plain.mistakes[-len(labels):])[clear])
        assert_allclose(learner.coefficient_matrix().T, plain.coef, rtol=1e-9, atol=1e-12)
    assert learner.n_outputs == 3 and learner.n_sv == 6 and learner.n_removals > 20


def _learner_scores(learner, Z):
    """(n, k): the class scores of a store-mode learner's model (RBF 0.5)."""
    sv = np.asarray(learner.stored_rows(learner.support_slots()))
    K = np.exp(-0.5 * ((Z[:, None] - sv) ** 2).sum(-1)) if len(sv) else np.zeros((len(Z), 0))
    return K @ learner.coefficient_matrix()


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), budget=st.integers(2, 8), n_classes=st.integers(3, 5),
       sampling=st.sampled_from(SAMPLINGS))
def test_shared_budget_and_bound_after_every_round(seed, budget, n_classes, sampling):
    """|S| <= B for the whole model after every round, on random label
    streams whose last classes appear late; after a round that removes,
    BOGD's rows and BOGD++'s kept rows are within eta0 gamma in norm (a new
    row's is sqrt(2) eta0); the model is the oracle's."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(40, 2))
    y = np.where(np.arange(40) < 20, rng.randint(2, size=40), rng.randint(n_classes, size=40))
    params = dict(budget=budget, eta0=0.7, alpha=0.01, coef_bound=1.2, sampling=sampling,
                  random_state=seed)
    est = shared(gamma=1.0, **params)
    removals = 0
    for i in range(len(y)):
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=np.arange(n_classes))
        assert est.n_support_[0] <= budget
        if est._learners[0].n_removals > removals:
            removals = est._learners[0].n_removals
            norms = np.linalg.norm(est.dual_coef_, axis=0)
            kept = norms if sampling == "uniform" else norms[:-1]
            assert np.all(kept <= 0.7 * 1.2 * (1 + 1e-12))
    plain = PlainSharedBoundedOGD(rbf(1.0), n_classes, **params).partial_fit(X, y)
    assert_shared_matches(est, plain, X)


def test_shared_removals_follow_the_row_norm_distribution():
    """BOGD++ on rows removes position j with probability p_j of the row
    norms (the oracle's, which the estimator follows draw by draw): a
    chi-squared test over many removals."""
    from scipy.stats import chisquare
    X, y = make_blobs(3000, centers=4, cluster_std=2.0, random_state=2)
    plain = PlainSharedBoundedOGD(rbf(0.5), 4, budget=6, sampling="coefficient",
                                  random_state=0).partial_fit(X[:1500], y[:1500])
    expected = np.sum(plain.probabilities, axis=0)
    counts = np.bincount(plain.removed, minlength=6)
    assert np.ptp(expected) > 0.1 * expected.mean()       # not uniform
    assert chisquare(counts, expected * counts.sum() / expected.sum()).pvalue > 1e-3


@pytest.mark.parametrize("field, value", [
    ("tau", np.zeros((3, 2))), ("label", np.full(8, 7)), ("sampling", 2), ("budget", 1),
    ("eta", np.nan), ("lam", 3.0), ("bound", 0.0), ("scale", np.nan), ("scale", 0.0),
    ("rng", None), ("n_outputs", 4), ("row_norm", np.ones(2)),
    ("row_norm", lambda norms: 1.01 * norms), ("row_norm", lambda norms: norms * np.nan)])
def test_shared_corrupt_state_is_refused(field, value):
    X, y = make_blobs(60, centers=3, random_state=0)
    est = BoundedOGDClassifier(budget=5, multi_class="crammer_singer", gamma=0.5,
                               random_state=0).fit(X, y)
    learner = est._learners[0]
    coef = est.dual_coef_.copy()
    state = learner.get_state()
    state[field] = value(np.asarray(state[field])) if callable(value) else value
    learner.set_state(state)
    with pytest.raises(ValueError, match="inconsistent state"):
        est.partial_fit(X, y)
    assert_array_equal(est.dual_coef_, coef)


def test_shared_margin_of_exactly_one_updates():
    # linear kernel, alpha = 0: x = 1 of class 0 (all scores 0, runner-up 1)
    # adds the row 0.5 (e_0 - e_1); at x = 2 the scores are (1, -1, 0): the
    # runner-up is 2 and the margin exactly 1, an update (0.5 (e_0 - e_2));
    # then at x = 1 the scores are (1.5, -0.5, -1): margin 2, none
    est = BoundedOGDClassifier(budget=10, alpha=0.0, kernel="linear",
                               multi_class="crammer_singer", shuffle=False)
    est.partial_fit([[1.0], [2.0]], [0, 0], classes=[0, 1, 2])
    assert est.n_updates_ == 2
    assert_array_equal(est.dual_coef_, [[0.5, 0.5], [-0.5, 0.0], [0.0, -0.5]])
    est.partial_fit([[1.0]], [0])
    assert est.n_updates_ == 2


@pytest.mark.parametrize("sampling", SAMPLINGS)
def test_shared_model_saved_by_skops_continues_the_stream(sampling, multiclass_data):
    X, y = multiclass_data
    est = small(BoundedOGDClassifier, multi_class="crammer_singer", sampling=sampling)
    est.partial_fit(X[:60], y[:60], classes=[0, 1, 2])
    loaded = _loaded(est)
    assert isinstance(loaded._learners[0], SharedBoundedOGDLearner)
    _assert_identical(loaded, est)
    for model in (est, loaded):
        model.partial_fit(X[60:], y[60:])
    _assert_identical(loaded, est)
    assert est._learners[0].n_removals > 10


@pytest.mark.parametrize("sampling", SAMPLINGS)
@pytest.mark.parametrize("error", [KeyboardInterrupt(), None], ids=["interrupt", "nan"])
def test_shared_failed_call_changes_nothing(sampling, error, multiclass_data):
    """A call that fails half-way (its rounds drew removals) leaves the
    model and its generator as they were; the stream then continues as if
    it had never been made."""
    X, y = multiclass_data
    X, y = X[:90], y[:90]
    kernel = FlakyKernel()

    def make():
        est = small(BoundedOGDClassifier, multi_class="crammer_singer", sampling=sampling,
                    kernel=kernel)
        est._chunk_size = 4
        return est.partial_fit(X[:30], y[:30], classes=[0, 1, 2])
    est = make()
    state = model_state(est)
    probe = pickle.loads(pickle.dumps(est))      # (its own copy of the kernel)
    probe.kernel.calls = 0
    probe.partial_fit(X[30:70], y[30:70])
    assert probe.kernel.calls > 100
    kernel.arm(after_calls=probe.kernel.calls // 2, error=error)   # half-way through
    with pytest.raises(type(error) if error is not None else ValueError):
        est.partial_fit(X[30:70], y[30:70])
    assert_same_state(model_state(est), state)
    est.partial_fit(X[70:], y[70:])
    clean = make().partial_fit(X[70:], y[70:])
    assert_same_state(model_state(est), model_state(clean))
    assert est._learners[0].n_removals > 10
