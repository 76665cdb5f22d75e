"""BoundedOGDClassifier against the plain implementation of its rule
(tests/oracles/bogd.py), drawing the same removals from the same
generator, and its invariants and distributions."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from skbudget import BoundedOGDClassifier
from skbudget._engine_testing import random_uniform
from skbudget._bogd_fast import BoundedOGDLearner
from skbudget.datasets import make_noisy_gaussians
from tests.oracles import keeping_flags, mistake_flags
from tests.oracles.bogd import PlainBoundedOGDClassifier
from tests.test_bpa import assert_chunks_equal_one_pass
from tests.test_fixed_budget import STREAMS, _kernel

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


def test_the_streams_bound_clip_and_fall_back():
    """The branches of the rules are reached: BOGD's bound scales the model
    down, BOGD++'s bound clips coefficients, negative p_j are set to 0."""
    by_name = {s[0]: s for s in STREAMS}
    _, X, y, kw, kernel = by_name["rbf-gauss"]
    params = dict(budget=5, eta0=1.0, alpha=0.05, coef_bound=1.5, random_state=1)
    scaled = []
    plain = PlainBoundedOGDClassifier(kernel, **params)
    original = plain._scale

    def recording(factor):
        scaled.append(factor)
        original(factor)
    plain._scale = recording
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
