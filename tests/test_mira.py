"""KernelMIRA and BudgetMIRA against the plain implementation of
doc/algorithms.md#mira (tests/oracles/mira.py), update by update."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_blobs, make_moons
from sklearn.preprocessing import normalize

from skbudget import BudgetMIRA, BudgetPerceptron, KernelMIRA
from skbudget._mira_fast import MIRALearner
from tests.oracles import keeping_flags, mistake_flags
from tests.oracles.mira import PlainMIRA, mira_step
from tests.test_fixed_budget import _kernel


def _streams():
    """(name, X, y, estimator kernel parameters, plain kernel)."""
    rbf = dict(kernel="rbf", gamma=0.5)
    X, y = make_blobs(150, centers=4, cluster_std=2.5, random_state=0)
    yield "rbf-blobs4", X, y, rbf, _kernel("rbf", gamma=0.5)
    X, y = make_moons(120, noise=0.3, random_state=1)
    yield "rbf-moons2", X, y, dict(kernel="rbf", gamma=2.0), _kernel("rbf", gamma=2.0)
    # the benchmark's set-up: rows of unit norm, homogeneous polynomial kernel
    X, y = make_blobs(120, centers=5, n_features=6, cluster_std=3.0, random_state=2)
    poly = dict(gamma=1.0, degree=5, coef0=0.0)
    yield "poly-blobs5", normalize(X), y, dict(kernel="poly", **poly), _kernel("poly", **poly)
    # integer features, linear kernel (k(x, x) = 0 for the zero vector: no update)
    rng = np.random.RandomState(3)
    X = rng.randint(-2, 3, size=(100, 3)).astype(float)
    yield "linear-ints3", X, rng.randint(3, size=100), dict(kernel="linear"), _kernel("linear")
    # 10 distinct points seen over and over with noisy labels: duplicate
    # support patterns, tied leave-one-out margins
    points = rng.normal(size=(10, 2))
    pick = rng.randint(10, size=140)
    labels = np.where(rng.uniform(size=140) < 0.25, rng.randint(3, size=140),
                      np.digitize(points[pick, 0], [-0.5, 0.5]))
    yield "rbf-duplicates3", points[pick], labels, rbf, _kernel("rbf", gamma=0.5)
    # points 50 apart: kernel values between distinct points are exactly 0,
    # so every new point scores 0 for every class (ties between classes)
    far = rng.randint(8, size=(90, 1)) * 50.0
    yield "rbf-far-ties4", far, rng.randint(4, size=90), rbf, _kernel("rbf", gamma=0.5)


STREAMS = list(_streams())
STREAM_IDS = [s[0] for s in STREAMS]
CACHES = ["unbounded", 1, 3, 12, None]   # None: DistillCache


def make_estimator(budget, beta, kw):
    if budget == "unbounded":
        return KernelMIRA(beta=beta, shuffle=False, **kw)
    return BudgetMIRA(budget=budget, beta=beta, shuffle=False, **kw)


def class_scores(est, Z):
    return est._kernel(Z, est.support_vectors_) @ est.dual_coef_.T


def assert_matches(est, plain, X, y):
    """Same mistakes, updates, support patterns, coefficients and decision
    values; chunks of 37 examples cross several kernel blocks."""
    est._chunk_size = 37
    keeping_flags(est)
    est.fit(X, y)
    labels = np.searchsorted(est.classes_, y)
    plain.partial_fit(X, labels)
    assert_array_equal(mistake_flags(est), plain.mistakes)
    assert est.n_mistakes_ == sum(plain.mistakes)
    assert est.n_updates_ == plain.n_updates
    assert_array_equal(est.support_vectors_, X[plain.support_])
    assert_array_equal(est.n_support_, [len(plain.support_)])
    assert_allclose(est.dual_coef_, plain.coef_, rtol=1e-9, atol=1e-13)
    assert_array_equal(est.intercept_, np.zeros(len(est.classes_)))
    Z = np.vstack([X[::7], X[::5] + 0.05])
    expected = plain.decision_scores(Z)
    if len(est.classes_) == 2:
        expected = expected[:, 1] - expected[:, 0]
    assert_allclose(est.decision_function(Z), expected, rtol=1e-9, atol=1e-12)
    return est, plain


@pytest.mark.parametrize("stream", STREAMS, ids=STREAM_IDS)
@pytest.mark.parametrize("budget", CACHES)
@pytest.mark.parametrize("beta", [0.01, 0.5])
def test_mira_matches_plain(stream, budget, beta):
    _, X, y, kw, kernel = stream
    k = len(np.unique(y))
    est, plain = assert_matches(make_estimator(budget, beta, kw),
                                PlainMIRA(kernel, k, beta=beta, budget=budget), X, y)
    learner = est._learners[0]
    assert_array_equal(learner.support_labels(), np.array(plain.labels, dtype=np.intp))
    if budget != "unbounded":
        # the incrementally kept class scores of the stored patterns are the scores
        assert_allclose(learner.support_class_scores(),
                        class_scores(est, est.support_vectors_), rtol=1e-9, atol=1e-12)


def test_the_streams_hit_ties_duplicates_and_removals():
    by_name = {s[0]: s for s in STREAMS}
    _, X, y, _, kernel = by_name["rbf-duplicates3"]
    for budget in (3, None):
        plain = PlainMIRA(kernel, 3, budget=budget).partial_fit(X, y)
        assert plain.n_removed > 5
        assert len(np.unique(X[plain.support_], axis=0)) < len(plain.support_)
    # far points: exact ties between classes (rounds with a zero margin after
    # the first) and between leave-one-out margins (removal among tied ones)
    _, X, y, _, kernel = by_name["rbf-far-ties4"]
    plain = PlainMIRA(kernel, 4, budget=12).partial_fit(X, y)
    assert sum(m == 0 for m in plain.margins[1:]) > 5
    assert plain.n_ties > 5 and plain.n_removed > 5
    # the linear stream has the zero vector (k(x, x) = 0: never an update)
    _, X, y, _, kernel = by_name["linear-ints3"]
    assert np.any(np.all(X == 0, axis=1))


def drive(learner, K, y):
    """Run a learner over one block ``K = k(X, X)``; the per-round margins."""
    margins = np.empty(len(y))
    learner.process_chunk(K, 0, 0, y.astype(float), np.arange(len(y)), margins)
    return margins


@pytest.mark.parametrize("stream", STREAMS, ids=STREAM_IDS)
@pytest.mark.parametrize("budget", CACHES)
def test_per_round_margins_match_plain(stream, budget):
    _, X, y, _, kernel = stream
    k = len(np.unique(y))
    options = {"unbounded": {}, None: dict(distill=True)}.get(budget, dict(budget=budget))
    margins = drive(MIRALearner(n_classes=k, beta=0.01, **options), kernel(X, X), y)
    plain = PlainMIRA(kernel, k, beta=0.01, budget=budget).partial_fit(X, y)
    assert_allclose(margins, plain.margins, rtol=1e-9, atol=1e-12)
    assert_array_equal(margins <= 0, plain.mistakes)


def test_first_step_from_the_empty_model():
    # all scores 0: D_y = 1, D_r = beta / A; theta = (k - 1) beta / (k A),
    # tau_y = (k - 1) beta / (k A), tau_r = -beta / (k A)
    X, y = np.array([[2.0, 0.0]]), np.array([1])
    est = KernelMIRA(beta=0.3, kernel="linear").partial_fit(X, y, classes=[0, 1, 2, 3])
    A, k = 4.0, 4
    assert_allclose(est.dual_coef_[:, 0], [-0.3 / (k * A), 3 * 0.3 / (k * A),
                                           -0.3 / (k * A), -0.3 / (k * A)], rtol=1e-12)
    assert est.n_mistakes_ == 1 and est.n_updates_ == 1


@settings(max_examples=200, deadline=None)
@given(scores=st.lists(st.floats(-3, 3), min_size=2, max_size=7), data=st.data(),
       A=st.floats(0.05, 5.0), beta=st.floats(0.001, 1.0))
def test_closed_form_step_solves_the_quadratic_program(scores, data, A, beta):
    # KKT of min 1/2 A sum tau^2 + sum tau_r b_r, tau_r <= delta_ry, sum tau = 0:
    # A tau_r + b_r equals one value lam where tau_r < delta_ry, is <= lam where
    # tau_r = delta_ry (b_r = s_r + beta [r != y])
    k = len(scores)
    y = data.draw(st.integers(0, k - 1))
    tau = np.array(mira_step(scores, y, A, beta))
    delta = np.eye(k)[y]
    b = np.array(scores) + beta * (1 - delta)
    assert abs(tau.sum()) < 1e-9
    assert np.all(tau <= delta + 1e-12)
    grad = A * tau + b
    free = tau < delta - 1e-9
    lam = grad[free].mean() if free.any() else grad.max()
    assert_allclose(grad[free], lam, atol=1e-7)
    assert np.all(grad[~free] <= lam + 1e-7)


def test_binary_problems_use_the_mira_step():
    X, y = make_moons(200, noise=0.2, random_state=0)
    est = BudgetMIRA(budget=20, gamma=2.0, shuffle=False).fit(X, y)
    assert est.dual_coef_.shape == (2, 20)
    assert_array_equal(est.dual_coef_[0], -est.dual_coef_[1])
    scores = class_scores(est, X)
    assert_allclose(est.decision_function(X), scores[:, 1] - scores[:, 0], atol=1e-12)
    assert_allclose(est.decision_function(X),
                    2 * est._kernel(X, est.support_vectors_) @ est.dual_coef_[1], atol=1e-12)
    assert_array_equal(est.predict(X), est.classes_[(est.decision_function(X) > 0).astype(int)])
    # not the perceptron: coefficients are MIRA steps, not +-1
    perceptron = BudgetPerceptron(budget=20, beta=0.01, gamma=2.0, shuffle=False).fit(X, y)
    assert not np.allclose(np.abs(est.dual_coef_[1]), 1.0)
    assert_array_equal(np.abs(perceptron.dual_coef_[0]), 1.0)


def test_budget_counts_patterns_not_classes():
    X, y = make_blobs(400, centers=8, cluster_std=3.0, random_state=0)
    est = BudgetMIRA(budget=15, gamma=0.3, random_state=0).fit(X, y)
    assert est.n_support_.tolist() == [15]
    assert est.support_vectors_.shape == (15, 2)
    assert est.dual_coef_.shape == (8, 15)
    assert_allclose(est.dual_coef_.sum(axis=0), 0.0, atol=1e-12)


@pytest.mark.parametrize("Est", [KernelMIRA, BudgetMIRA])
def test_beta_must_be_positive(Est):
    X, y = make_moons(20, random_state=0)
    with pytest.raises(ValueError, match="beta"):
        Est(beta=0.0).fit(X, y)
    with pytest.raises(ValueError, match="beta must be > 0"):
        MIRALearner(n_classes=3, beta=0.0)


def test_learner_rejects_an_empty_cache_and_no_class():
    with pytest.raises(ValueError, match="budget must be >= 1"):
        MIRALearner(n_classes=3, budget=0)
    with pytest.raises(ValueError, match="n_outputs must be at least 1"):
        MIRALearner(n_classes=0)


def test_learner_rejects_a_label_that_is_not_a_class_index():
    learner = MIRALearner(n_classes=3)
    with pytest.raises(ValueError, match="class index"):
        drive(learner, np.ones((1, 1)), np.array([3]))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), budget=st.integers(1, 8), n_classes=st.integers(2, 5),
       beta=st.sampled_from([0.01, 0.2, 1.0]))
def test_cache_never_exceeds_the_budget_and_keeps_exact_scores(seed, budget, n_classes, beta):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(60, 2))
    y = rng.randint(n_classes, size=60)
    est = BudgetMIRA(budget=budget, beta=beta, gamma=1.0)
    for i in range(len(y)):
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=np.arange(n_classes))
        assert est.n_support_[0] <= budget
    learner = est._learners[0]
    assert_allclose(learner.support_class_scores()[:, np.unique(y)],
                    class_scores(est, est.support_vectors_)[:, np.searchsorted(
                        est.classes_, np.unique(y))], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("budget", [25, None])
def test_incremental_scores_do_not_drift_on_a_long_stream(budget):
    # thousands of insertions and removals: the kept s_r(x_c) stay the scores
    X, y = make_blobs(3000, centers=5, cluster_std=3.0, random_state=0)
    est = BudgetMIRA(budget=budget, gamma=0.5, random_state=0).fit(X, y)
    assert est.n_updates_ > 1000
    assert_allclose(est._learners[0].support_class_scores(),
                    class_scores(est, est.support_vectors_), rtol=1e-9, atol=1e-10)
