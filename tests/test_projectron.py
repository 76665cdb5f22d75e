"""Projectron and Projectron++ against the plain implementation of
doc/algorithms.md#projectron, and the numerical soundness of the incremental factor."""


import hypothesis.strategies as st
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from numpy.testing import assert_allclose, assert_array_equal
from scipy.linalg import solve_triangular
from scipy.spatial.distance import cdist
from sklearn.datasets import make_blobs, make_classification

from skbudget import KernelPerceptron, Projectron, ProjectronPlusPlus
from skbudget.datasets import make_noisy_gaussians
from tests.oracles import keeping_flags, mistake_flags
from tests.oracles.projectron import (PlainProjectron, PlainProjectronPlusPlus,
                                     PlainSharedProjectron, PlainSharedProjectronPlusPlus)

PAIRS = [(Projectron, PlainProjectron), (ProjectronPlusPlus, PlainProjectronPlusPlus)]
PAIR_IDS = ["Projectron", "ProjectronPlusPlus"]


def rbf(gamma):
    return lambda A, B: np.exp(-gamma * cdist(A, B, "sqeuclidean"))


def poly(gamma, degree, coef0):
    return lambda A, B: (gamma * A @ B.T + coef0) ** degree


def _duplicates_stream():
    """Exact duplicates of a few points (near duplicates make the problem
    too ill-conditioned for two implementations to agree on coefficients:
    see the stability tests below)."""
    rng = np.random.RandomState(5)
    base = rng.normal(size=(30, 2))
    X = base[rng.randint(30, size=300)]
    y = np.where(X[:, 0] + X[:, 1] > 0, 1, -1)
    flip = rng.uniform(size=300) < 0.15
    return X, np.where(flip, -y, y)


def _streams():
    X, y = make_noisy_gaussians(400, random_state=1)
    yield "rbf-gaussians", X, y, dict(kernel="rbf", gamma=1.0), rbf(1.0), [0.05, 0.3, 1.0]
    X, y = make_classification(300, n_features=5, n_informative=4, n_redundant=0,
                               flip_y=0.1, random_state=2)
    y = 2 * y - 1
    yield "rbf-5d", X, y, dict(kernel="rbf", gamma=0.3), rbf(0.3), [0.0, 0.2, 0.6]
    yield "linear", X, y, dict(kernel="linear"), (lambda A, B: A @ B.T), [0.0, 0.5, 2.0]
    yield "poly2", X[:, :3], y, dict(kernel="poly", gamma=0.5, degree=2, coef0=1.0), \
        poly(0.5, 2, 1.0), [0.0, 0.3]
    X, y = _duplicates_stream()
    yield "duplicates", X, y, dict(kernel="rbf", gamma=1.0), rbf(1.0), [0.0, 0.1]


CASES = [(name, X, y, kw, kernel, eta)
         for name, X, y, kw, kernel, etas in _streams() for eta in etas]
CASE_IDS = [f"{c[0]}-eta{c[5]}" for c in CASES]


def assert_matches(est, plain, X):
    assert_array_equal(mistake_flags(est).astype(bool), plain.mistakes)
    assert est.n_updates_ == plain.n_updates
    assert_allclose(est.support_vectors_, X[plain.support_indices])
    scale = max(1.0, np.abs(plain.coef).max())
    assert_allclose(est.dual_coef_[0], plain.coef, rtol=1e-7, atol=1e-9 * scale)
    assert_allclose(est.intercept_, [0.0])
    Z = np.vstack([X[::4] + 0.05, X[1::7]])
    assert_allclose(est.decision_function(Z), plain.decision_function(Z), rtol=1e-8, atol=1e-8)


# Projectron++ on exact duplicates is left out: a margin step with
# tau = loss / ||P k||² on a duplicate sets f(x) = 1 exactly, so its next copy
# is a tie y f(x) = 1 that rounding decides (the stability tests cover it)
ORACLE_CASES = [
    pytest.param(Est, Plain, case, id=f"{Est.__name__}-{case_id}")
    for Est, Plain in PAIRS for case, case_id in zip(CASES, CASE_IDS)
    if not (case[0] == "duplicates" and Est is ProjectronPlusPlus)
]


@pytest.mark.parametrize("Est, Plain, case", ORACLE_CASES)
def test_matches_plain_implementation(Est, Plain, case):
    _, X, y, kernel_kw, kernel, eta = case
    est = keeping_flags(Est(eta=eta, shuffle=False, **kernel_kw)).fit(X, y)
    plain = Plain(kernel, eta=eta).partial_fit(X, y)
    assert sum(plain.mistakes) > 10
    assert_matches(est, plain, X)


@pytest.mark.parametrize("Est, Plain", PAIRS, ids=PAIR_IDS)
@pytest.mark.parametrize("budget", [1, 5, 20])
def test_budget_cap_matches_plain_implementation(Est, Plain, budget):
    X, y = make_noisy_gaussians(400, random_state=3)
    est = keeping_flags(Est(eta=0.05, budget=budget, gamma=1.0, shuffle=False)).fit(X, y)
    plain = Plain(rbf(1.0), eta=0.05, budget=budget).partial_fit(X, y)
    assert est.n_support_[0] == budget       # the cap binds...
    assert_matches(est, plain, X)           # ...and later mistakes project


@pytest.mark.parametrize("Est, Plain", PAIRS, ids=PAIR_IDS)
def test_streaming_in_pieces_matches_plain_implementation(Est, Plain):
    X, y = make_noisy_gaussians(300, random_state=4)
    est = keeping_flags(Est(eta=0.2, gamma=1.0))
    plain = Plain(rbf(1.0), eta=0.2)
    for piece in np.array_split(np.arange(300), [1, 2, 40, 41, 200]):
        est.partial_fit(X[piece], y[piece], classes=[-1, 1])
        plain.partial_fit(X[piece], y[piece])
    assert_matches(est, plain, X)


@pytest.mark.parametrize("kernel_kw", [
    dict(kernel="rbf", gamma=0.3),
    dict(kernel="linear"),
], ids=["rbf", "linear"])
def test_eta_zero_makes_the_kernel_perceptron_updates(kernel_kw):
    # generic streams: every mistake is linearly independent of the support set
    rng = np.random.RandomState(0)
    n_features = 6 if kernel_kw["kernel"] == "rbf" else 80
    X = rng.normal(size=(500 if n_features == 6 else 70, n_features))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.7 * rng.normal(size=len(X)) > 0, 1, -1)
    proj = keeping_flags(Projectron(eta=0.0, shuffle=False, **kernel_kw)).fit(X, y)
    perc = keeping_flags(KernelPerceptron(max_iter=1, shuffle=False, **kernel_kw)).fit(X, y)
    assert perc.n_mistakes_ > 20
    assert_array_equal(mistake_flags(proj), mistake_flags(perc))
    assert proj.n_updates_ == perc.n_updates_
    assert_array_equal(proj.support_vectors_, perc.support_vectors_)
    assert_allclose(proj.dual_coef_, perc.dual_coef_)
    assert_allclose(proj.decision_function(X), perc.decision_function(X), atol=1e-10)


def test_eta_zero_projects_exact_duplicates_and_finite_spans():
    # the linear kernel in 3 dimensions: at most 3 support vectors, and the
    # hypothesis is the perceptron's (a projection onto the whole space is exact)
    rng = np.random.RandomState(1)
    X = rng.normal(size=(400, 3))
    y = np.where(X @ [1.0, -2.0, 0.5] + 0.5 * rng.normal(size=400) > 0, 1, -1)
    proj = Projectron(kernel="linear", eta=0.0, shuffle=False).fit(X, y)
    perc = KernelPerceptron(kernel="linear", max_iter=1, shuffle=False).fit(X, y)
    assert proj.n_support_[0] == 3 < perc.n_support_[0]
    assert_array_equal(proj.mistake_curve_, perc.mistake_curve_)
    assert_allclose(proj.decision_function(X), perc.decision_function(X), atol=1e-9)
    # an exact duplicate of a support vector is never added
    Xd = np.repeat(X[:30], 4, axis=0)
    yd = np.repeat(y[:30], 4)
    yd[1::4] *= -1
    est = Projectron(kernel="rbf", gamma=1.0, eta=0.0, shuffle=False).fit(Xd, yd)
    assert len(np.unique(est.support_vectors_, axis=0)) == est.n_support_[0]


def test_projectron_plus_plus_journal_step():
    # S = {x1 = (1, 0)}, alpha_1 = 1; then x2 = (0.5, 0.1), y = +1: f = 0.5, a
    # margin error with loss 0.5; ||P k||^2 = 0.25, delta^2 = 0.01
    X = np.array([[1.0, 0.0], [0.5, 0.1]])
    y = np.array([1, 1])
    for eta, alpha in [(1.0, 1.5),        # tau = min(2, 3.2, 1) = 1
                       (0.25, 1.4),       # tau = min(2, 2 (0.5 - 0.4) / 0.25, 1) = 0.8
                       (0.2, 1.0),        # loss == ||delta||/eta: tau = 0
                       (0.1, 1.0)]:       # loss < ||delta||/eta: no update
        est = ProjectronPlusPlus(kernel="linear", eta=eta).partial_fit(X, y, classes=[-1, 1])
        assert_allclose(est.dual_coef_, [[alpha]])
        assert est.n_support_[0] == 1
        plain = PlainProjectronPlusPlus(lambda A, B: A @ B.T, eta=eta).partial_fit(X, y)
        assert_allclose(plain.coef, [alpha])
    # the plain Projectron ignores margin errors
    est = Projectron(kernel="linear", eta=1.0).partial_fit(X, y, classes=[-1, 1])
    assert_allclose(est.dual_coef_, [[1.0]])


def test_first_mistake_always_adds_and_zero_vector_never_does():
    X = np.array([[0.0, 0.0], [0.3, 0.0], [0.0, 0.0]])
    y = np.array([1, -1, 1])
    # linear kernel: the zero vector has k(x, x) = 0, it spans nothing
    est = Projectron(kernel="linear", eta=5.0, shuffle=False).fit(X, y)
    # round 0: zero vector, empty model: a mistake but nothing to add;
    # round 1: the first real vector is added although ||delta|| = 0.3 < eta
    assert est.n_mistakes_ == 3
    assert_allclose(est.support_vectors_, X[1:2])
    assert_allclose(est.dual_coef_, [[-1.0]])
    assert np.all(np.isfinite(est.decision_function(X)))


def _check_factor(est, rtol=1e-10):
    """L Lᵀ is the Gram matrix of the support set, with a positive diagonal."""
    for learner, k in zip(est._learners, range(len(est._learners))):
        offsets = np.concatenate([[0], np.cumsum(est.n_support_)])
        vectors = est.support_vectors_[offsets[k]:offsets[k + 1]]
        L = learner.cholesky_factor()
        K = est._kernel(vectors, vectors)
        assert np.all(np.isfinite(L)) and np.all(np.diag(L) > 0)
        assert np.all(np.diag(L) ** 2 > 1e-12 * np.diag(K))
        assert_allclose(L @ L.T, K, rtol=0, atol=rtol * np.abs(K).max())
    assert np.all(np.isfinite(est.dual_coef_))


def test_inverse_stays_accurate_over_thousands_of_additions():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(3000, 10))
    y = rng.choice([-1, 1], size=3000)
    est = Projectron(eta=0.1, gamma=0.1, shuffle=False).fit(X, y)
    n = est.n_support_[0]
    assert n > 1000
    L = est._learners[0].cholesky_factor()
    K = est._kernel(est.support_vectors_, est.support_vectors_)
    # K^-1 K = I, probed with a few vectors (K^-1 applied through the factor)
    V = rng.normal(size=(n, 4))
    KinvKV = solve_triangular(L.T, solve_triangular(L, K @ V, lower=True), lower=False)
    assert np.abs(KinvKV - V).max() < 1e-8 * np.abs(V).max()
    # the grown factor is the from-scratch factor: nothing drifts, so there
    # is nothing to refresh
    assert_allclose(L, np.linalg.cholesky(K), atol=1e-10)
    # the coefficients are the projections of the whole mistake history:
    # f = K^-1-consistent, i.e. the learner's d solves K d = k_t
    k_t = est._kernel(X[:5], est.support_vectors_)
    k_tt = np.ones(5)
    for row, self_k in zip(k_t, k_tt):
        d, pk2, delta2 = est._learners[0].projection(row, self_k)
        assert_allclose(K @ d, row, atol=1e-10)
        assert_allclose(pk2, row @ np.linalg.solve(K, row), rtol=1e-9)


@pytest.mark.parametrize("Est", [Projectron, ProjectronPlusPlus])
@pytest.mark.parametrize("kernel_kw", [
    dict(kernel="rbf", gamma=1.0),
    dict(kernel="rbf", gamma=1e-4),
    dict(kernel="linear"),
    dict(kernel="poly", degree=3, gamma=1.0, coef0=1.0),
], ids=["rbf", "rbf-wide", "linear", "poly3"])
@pytest.mark.parametrize("eta", [0.0, 1e-3, 0.1])
def test_duplicates_and_near_duplicates_stay_finite(Est, kernel_kw, eta):
    rng = np.random.RandomState(0)
    base = 10.0 * rng.normal(size=(15, 3))     # k(x, x) far from 1 for linear/poly
    X = base[rng.randint(15, size=1500)]
    X[1::4] += 1e-9 * rng.normal(size=X[1::4].shape)
    X[2::4] += 1e-6 * rng.normal(size=X[2::4].shape)
    X[3::8] += 1e-3 * rng.normal(size=X[3::8].shape)
    y = rng.choice([0, 1, 2], size=1500)        # three one-vs-rest learners
    est = Est(eta=eta, shuffle=True, max_iter=2, random_state=0, **kernel_kw).fit(X, y)
    _check_factor(est, rtol=1e-9)
    assert np.all(np.isfinite(est.decision_function(X)))
    if kernel_kw["kernel"] == "linear":
        assert np.all(est.n_support_ <= 3)
    if kernel_kw["kernel"] == "poly":
        assert np.all(est.n_support_ <= 20)    # dimension of the feature space


@pytest.mark.parametrize("Est", [Projectron, ProjectronPlusPlus])
def test_eta_zero_on_a_dense_stream_stays_finite(Est):
    # the RBF Gram matrix of 2-D points is numerically rank deficient: eta = 0
    # projects whatever is in the span to 1e-12 and never adds a vector
    # that would make the factor singular
    X, y = make_noisy_gaussians(3000, random_state=0)
    est = Est(eta=0.0, gamma=1.0, shuffle=False).fit(X, y)
    perc = KernelPerceptron(gamma=1.0, max_iter=1, shuffle=False).fit(X, y)
    assert est.n_support_[0] < perc.n_support_[0] / 2
    _check_factor(est, rtol=1e-12)
    assert np.all(np.isfinite(est.decision_function(X)))


def _support_growth(Est, n_samples, eta):
    X, y = make_noisy_gaussians(n_samples, random_state=0)
    est = Est(eta=eta, gamma=1.0)
    sizes = []
    for piece in np.array_split(np.arange(n_samples), 10):
        est.partial_fit(X[piece], y[piece], classes=[-1, 1])
        sizes.append(est.n_support_[0])
    return est, sizes


@pytest.mark.parametrize("Est", [Projectron, ProjectronPlusPlus])
def test_support_set_stays_finite_on_a_bounded_domain(Est):
    est, sizes = _support_growth(Est, 10_000, eta=0.1)
    perc = KernelPerceptron(gamma=1.0, max_iter=1, shuffle=False).fit(
        *make_noisy_gaussians(10_000, random_state=0))
    assert sizes[-1] <= 200 < perc.n_support_[0] / 5
    # the second half of the stream adds few vectors
    assert sizes[-1] - sizes[4] < 0.3 * sizes[4]
    assert est.n_mistakes_ < 0.25 * 10_000


@pytest.mark.parametrize("Est", [Projectron, ProjectronPlusPlus])
def test_support_set_stays_finite_on_a_long_stream(Est):
    # 50 000 points take about a second: the support set grows like the
    # log of the stream (Gaussian tails keep sending new far points)
    est, sizes = _support_growth(Est, 50_000, eta=0.1)
    assert sizes[-1] <= 250
    assert sizes[-1] - sizes[4] < 0.2 * sizes[4]


def test_parameters_are_validated():
    X, y = make_noisy_gaussians(20, random_state=0)
    with pytest.raises(ValueError, match="eta"):
        Projectron(eta=-0.1).fit(X, y)
    with pytest.raises(ValueError, match="budget"):
        ProjectronPlusPlus(budget=0).fit(X, y)
    with pytest.raises(ValueError, match="budget"):
        Projectron(budget=2.5).fit(X, y)


# ----------------------------------------------------------------------
# the shared multi-class mode (multi_class='crammer_singer')
# ----------------------------------------------------------------------
SHARED_PAIRS = [(Projectron, PlainSharedProjectron),
                (ProjectronPlusPlus, PlainSharedProjectronPlusPlus)]


def _shared_streams():
    X, y = make_blobs(300, centers=4, n_features=2, cluster_std=2.0, random_state=0)
    yield "rbf-4", X, y, dict(kernel="rbf", gamma=0.3), rbf(0.3), [0.0, 0.1, 0.5, 1.2]
    X, y = make_classification(240, n_features=5, n_informative=4, n_redundant=0,
                               n_classes=5, n_clusters_per_class=1, flip_y=0.05,
                               random_state=1)
    yield "rbf-5d-5", X, y, dict(kernel="rbf", gamma=0.2), rbf(0.2), [0.3, 0.9]
    yield "linear-3", X, y % 3, dict(kernel="linear"), (lambda A, B: A @ B.T), [0.0, 1.0]
    yield "poly2-3", X[:, :3], y % 3, dict(kernel="poly", gamma=0.5, degree=2, coef0=1.0), \
        poly(0.5, 2, 1.0), [0.3]


SHARED_CASES = [
    pytest.param(Est, Plain, X, y, kw, kernel, eta, budget,
                 id=f"{Est.__name__}-{name}-eta{eta}-budget{budget}")
    for Est, Plain in SHARED_PAIRS
    for name, X, y, kw, kernel, etas in _shared_streams()
    for eta in etas for budget in (None, 12)
]


def shared(Est, **params):
    return Est(multi_class="crammer_singer", shuffle=False, **params)


def assert_matches_shared(est, plain, X):
    assert_array_equal(mistake_flags(est).astype(bool), plain.mistakes)
    assert est.n_mistakes_ == sum(plain.mistakes)
    assert est.n_updates_ == plain.n_updates
    assert_array_equal(est.n_support_, [len(plain.support_indices)])
    assert_allclose(_dense(est.support_vectors_), X[plain.support_indices])
    scale = max(1.0, np.abs(plain.coef).max())
    assert est.dual_coef_.shape == plain.coef.T.shape
    assert_allclose(est.dual_coef_, plain.coef.T, rtol=1e-7, atol=1e-9 * scale)
    assert_allclose(est.intercept_, np.zeros(plain.k))
    Z = np.vstack([X[::4] + 0.05, X[1::7]])
    scores = plain.decision_function(Z)
    if scores.ndim == 2 and scores.shape[1] == 2:     # (decision_function: f_1 - f_0)
        scores = scores[:, 1] - scores[:, 0]
    assert_allclose(est.decision_function(Z), scores, rtol=1e-8, atol=1e-8)


def _dense(A):
    return A.toarray() if sp.issparse(A) else A


@pytest.mark.parametrize("Est, Plain, X, y, kernel_kw, kernel, eta, budget", SHARED_CASES)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_shared_mode_matches_plain_implementation(Est, Plain, X, y, kernel_kw, kernel, eta,
                                                  budget, sparse):
    est = keeping_flags(shared(Est, eta=eta, budget=budget, **kernel_kw))
    est.fit(sp.csr_matrix(X) if sparse else X, y)
    plain = Plain(kernel, len(np.unique(y)), eta=eta, budget=budget).partial_fit(X, y)
    assert sum(plain.mistakes) > 10
    assert_matches_shared(est, plain, X)
    learner = est._learners[0]
    if budget is not None:      # the cap binds (the linear and poly spans hold fewer)
        assert est.n_support_[0] == budget or kernel_kw["kernel"] != "rbf"
    # the rule's branches all run on these streams: the first eta adds every
    # vector (eta = 0 only projects exact spans), the others project
    if eta > 0.2 or budget is not None:
        assert learner.n_projections > 0
    if Est is ProjectronPlusPlus and eta > 0.3 and budget is None:
        assert learner.n_margin_updates > 0


@pytest.mark.parametrize("Est, Plain", SHARED_PAIRS, ids=PAIR_IDS)
def test_shared_mode_every_round_margin_matches(Est, Plain):
    # one example per call: the margin f_y - f_r of every round (the scores
    # before it) is the oracle's
    X, y = make_blobs(120, centers=3, n_features=2, cluster_std=2.0, random_state=3)
    est = shared(Est, eta=0.4, gamma=0.3)
    plain = Plain(rbf(0.3), 3, eta=0.4)
    margins = [0.0]                 # the empty model's scores are all 0
    for t in range(len(X)):
        if t:
            f = est.decision_function(X[t:t + 1])[0]
            margins.append(f[y[t]] - max(f[c] for c in range(3) if c != y[t]))
        est.partial_fit(X[t:t + 1], y[t:t + 1], classes=[0, 1, 2])
        plain.partial_fit(X[t:t + 1], y[t:t + 1])
    assert_allclose(margins, plain.margins, rtol=1e-9, atol=1e-12)
    assert 0 < sum(m < 1 for m in margins) < len(margins)
    assert est.n_mistakes_ == sum(plain.mistakes)
    assert_allclose(est.dual_coef_, plain.coef.T, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("Est, Plain", SHARED_PAIRS, ids=PAIR_IDS)
def test_shared_mode_on_two_classes_is_the_shared_rule_on_two_columns(Est, Plain):
    # the estimator learns two classes by the binary rule; a stream without
    # classes= (an open label set, which may grow) runs the shared rule on
    # two columns
    X, y = make_blobs(200, centers=2, n_features=2, cluster_std=2.5, random_state=0)
    est = keeping_flags(shared(Est, eta=0.5, gamma=0.3)).partial_fit(X, y)
    plain = Plain(rbf(0.3), 2, eta=0.5).partial_fit(X, y)
    assert est.dual_coef_.shape[0] == 2
    assert_matches_shared(est, plain, X)


@pytest.mark.parametrize("Est", [Projectron, ProjectronPlusPlus])
def test_binary_problems_are_the_binary_model_in_either_mode(Est):
    X, y = make_blobs(200, centers=2, n_features=2, cluster_std=2.5, random_state=0)
    one = Est(eta=0.3, gamma=0.3, shuffle=False).fit(X, y)
    two = shared(Est, eta=0.3, gamma=0.3).fit(X, y)
    assert type(two._learners[0]) is type(one._learners[0])
    assert_array_equal(two.dual_coef_, one.dual_coef_)


@pytest.mark.parametrize("Est", [Projectron, ProjectronPlusPlus])
def test_shared_partial_fit_in_chunks_is_one_fit_epoch(Est):
    X, y = make_blobs(300, centers=5, n_features=3, cluster_std=2.0, random_state=2)
    whole = shared(Est, eta=0.5, gamma=0.3, budget=25).fit(X, y)
    pieces = shared(Est, eta=0.5, gamma=0.3, budget=25)
    for piece in np.array_split(np.arange(300), [1, 2, 40, 41, 200]):
        pieces.partial_fit(X[piece], y[piece], classes=np.arange(5))
    assert_array_equal(pieces.support_vectors_, whole.support_vectors_)
    assert_array_equal(pieces.dual_coef_, whole.dual_coef_)
    assert pieces.n_mistakes_ == whole.n_mistakes_ and pieces.n_updates_ == whole.n_updates_
    assert_array_equal(pieces.support_curve_, whole.support_curve_)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), n_classes=st.integers(3, 6),
       budget=st.integers(1, 12), eta=st.sampled_from([0.0, 0.2, 0.8]),
       late=st.integers(0, 150), plus_plus=st.booleans())
def test_shared_budget_bounds_the_whole_model_after_every_round(seed, n_classes, budget, eta,
                                                                late, plus_plus):
    # random labels, the last class appearing only from round ``late`` on;
    # fewer than 257 rounds: support_curve_ has a row per round
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(200, 3))
    y = rng.randint(n_classes - 1, size=200)
    y[late:] = np.where(rng.uniform(size=200 - late) < 0.3, n_classes - 1, y[late:])
    Est = ProjectronPlusPlus if plus_plus else Projectron
    est = shared(Est, eta=eta, gamma=0.5, budget=budget)
    est.partial_fit(X, y, classes=np.arange(n_classes))
    sizes = est.support_curve_
    assert_array_equal(sizes[:, 0], np.arange(1, 201))
    assert sizes[:, 1].max() <= budget
    assert est.n_support_.tolist() == [sizes[-1, 1]] and est.dual_coef_.shape[0] == n_classes
    assert np.all(np.isfinite(est.decision_function(X)))


@pytest.mark.parametrize("Est", [Projectron, ProjectronPlusPlus])
def test_a_class_added_to_the_shared_learner_keeps_the_old_predictions(Est):
    # what a stream without classes= does when a class first appears (the
    # base calls the learner's add_class): a zero column, the other
    # classes' scores unchanged, and training goes on within the budget
    X, y = make_blobs(400, centers=5, n_features=2, cluster_std=2.0, random_state=0)
    y = 2 * y
    est = shared(Est, eta=0.3, gamma=0.5, budget=60).fit(X[:200], y[:200])
    assert est.n_support_[0] < 60       # room left for the new class
    learner = est._learners[0]
    before = est.decision_function(X)
    rows_before = est.dual_coef_.copy()
    learner.add_class(2)
    est.classes_ = np.insert(est.classes_, 2, 3)
    est._update_fitted_attributes()
    after = est.decision_function(X)
    assert_array_equal(np.delete(after, 2, axis=1), before)
    assert_array_equal(after[:, 2], 0.0)
    assert_array_equal(np.delete(est.dual_coef_, 2, axis=0), rows_before)
    assert np.asarray(learner.w).shape[1] == 6 and len(learner.new_row) == 6
    # the new class: a cluster of its own, every third example
    y_more = np.where(np.arange(200) % 3 == 0, 3, y[200:])
    X_more = np.where((y_more == 3)[:, None], np.random.RandomState(0).normal(size=(200, 2)) + 20,
                      X[200:])
    est.partial_fit(X_more, y_more)
    assert est.support_curve_[:, 1].max() == 60
    assert np.mean(est.predict(X_more[y_more == 3]) == 3) > 0.9
    _check_factor(est, rtol=1e-10)


@pytest.mark.parametrize("Est", [Projectron, ProjectronPlusPlus])
def test_a_shared_model_saved_with_skops_continues_its_stream(Est):
    sio = pytest.importorskip("skops.io")
    X, y = make_blobs(200, centers=4, n_features=3, cluster_std=2.0, random_state=0)
    est = shared(Est, eta=0.3, gamma=0.3, budget=20).partial_fit(X[:100], y[:100],
                                                               classes=np.arange(4))
    data = sio.dumps(est)
    loaded = sio.loads(data, trusted=sio.get_untrusted_types(data=data))
    assert type(loaded._learners[0]) is type(est._learners[0])
    est.partial_fit(X[100:], y[100:])
    loaded.partial_fit(X[100:], y[100:])
    assert_array_equal(loaded.dual_coef_, est.dual_coef_)
    assert_array_equal(loaded.support_curve_, est.support_curve_)
