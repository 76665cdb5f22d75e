"""AMM and GAMM against the plain implementation of doc/algorithms.md#amm
(tests/oracles/amm.py), update by update, and their properties."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from skbudget import AdaptiveMultiHyperplaneClassifier as AMM
from skbudget._amm_fast import MultiHyperplaneLearner
from skbudget._base import _random_state
from tests.oracles import keeping_flags, mistake_flags
from tests.oracles.amm import PlainAMM


def _stream(n=600, d=6, n_classes=3, seed=0, sparse_rows=False):
    """Classes that no single hyperplane per class separates (the sign of
    a product of two features, and a third class in a band)."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    if sparse_rows:
        X[rng.random_sample(X.shape) < 0.6] = 0.0
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    if n_classes == 3:
        y[np.abs(X[:, 2]) < 0.4] = 2
    return X, y


PARAMS = [
    dict(),
    dict(budget=3),
    dict(alpha=1e-2, prune_every=40),
    dict(alpha=1e-2, prune_every=25, prune_c=50.0, budget=6),
    dict(clone_probability=0.4, budget=8),
    dict(clone_probability=0.9, clone_decay=0.9, alpha=1e-2, prune_every=30, budget=10),
    dict(fit_intercept=False, alpha=1e-3),
    dict(intercept_scaling=3.0, alpha=1e-3, prune_every=50),
]

ORACLE_PARAMS = ("budget", "alpha", "prune_every", "prune_c", "clone_probability",
                 "clone_decay", "fit_intercept", "intercept_scaling")


def _plain(est, n_classes, n_features, rng):
    params = {name: getattr(est, name) for name in ORACLE_PARAMS}
    return PlainAMM(n_classes, n_features, rng=rng, **params)


def _plain_weights(plain, fit_intercept, s):
    W = np.array([w for Wi in plain.W for w in Wi])
    if fit_intercept:
        return W[:, :-1], s * W[:, -1]
    return W, np.zeros(len(W))


def assert_same_model(est, plain, X):
    assert_array_equal(est.n_weights_, plain.n_weights)
    coef, intercept = _plain_weights(plain, est.fit_intercept, est.intercept_scaling)
    scale = max(np.abs(coef).max(), 1e-300)
    assert_allclose(est.coef_, coef, rtol=1e-9, atol=1e-11 * scale)
    assert_allclose(est.intercept_, intercept, rtol=1e-9, atol=1e-11 * scale)
    assert_array_equal(est.weight_class_, np.repeat(np.arange(len(plain.W)), plain.n_weights))
    G = plain.decision_function(X)
    # (rows whose two best classes tie, e.g. an empty sparse row scored by
    # the bias alone, are decided by rounding on either side)
    top = np.sort(G, axis=1)[:, -2:]
    clear = top[:, 1] - top[:, 0] > 1e-9 * np.abs(G).max()
    assert_array_equal(est.predict(X)[clear], est.classes_[np.argmax(G, axis=1)][clear])
    D = est.decision_function(X)
    expected = G[:, 1] - G[:, 0] if len(plain.W) == 2 else G
    assert_allclose(D, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("params", PARAMS, ids=repr)
def test_partial_fit_matches_plain(params, n_classes, sparse):
    X, y = _stream(n_classes=n_classes, sparse_rows=sparse)
    est = keeping_flags(AMM(random_state=0, **params))
    Xin = sp.csr_matrix(X) if sparse else X
    est.partial_fit(Xin, y, classes=np.arange(n_classes))
    plain = _plain(est, n_classes, X.shape[1], _random_state(0)).partial_fit(X, y)
    assert_array_equal(mistake_flags(est), plain.mistakes)
    assert est.n_updates_ == plain.n_updates
    assert est.n_mistakes_ == sum(plain.mistakes)
    assert_same_model(est, plain, X)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("params", [PARAMS[2], PARAMS[5]], ids=repr)
def test_fit_passes_match_plain(params, sparse):
    # fit: max_iter passes, each over a fresh permutation drawn from the
    # model's generator, which then draws GAMM's clones in round order
    X, y = _stream(n=300, seed=1, sparse_rows=sparse)
    est = keeping_flags(AMM(random_state=3, max_iter=3, **params))
    est.fit(sp.csr_matrix(X) if sparse else X, y)
    rng = _random_state(3)
    plain = _plain(est, 3, X.shape[1], rng)
    for _ in range(3):
        order = rng.permutation(len(y))
        plain.partial_fit(X[order], y[order])
    assert_array_equal(mistake_flags(est), plain.mistakes)
    assert_same_model(est, plain, X)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_partial_fit_chunks_equal_one_pass(sparse):
    X, y = _stream(n=500, sparse_rows=sparse)
    Xin = sp.csr_matrix(X) if sparse else X
    params = dict(clone_probability=0.5, alpha=1e-2, prune_every=37, budget=7, random_state=0)
    whole = AMM(**params).partial_fit(Xin, y, classes=[0, 1, 2])
    chunks = AMM(**params)
    for start, stop in [(0, 1), (1, 40), (40, 41), (41, 333), (333, 500)]:
        chunks.partial_fit(Xin[start:stop], y[start:stop], classes=[0, 1, 2])
    assert_array_equal(chunks.coef_, whole.coef_)
    assert_array_equal(chunks.intercept_, whole.intercept_)
    assert chunks.n_mistakes_ == whole.n_mistakes_


def test_dense_and_csr_learn_the_same_model():
    X, y = _stream(n=400, sparse_rows=True)
    dense = AMM(random_state=0, alpha=1e-2, prune_every=50).fit(X, y)
    csr = AMM(random_state=0, alpha=1e-2, prune_every=50).fit(sp.csr_matrix(X), y)
    assert_array_equal(dense.n_weights_, csr.n_weights_)
    assert_allclose(dense.coef_, csr.coef_, rtol=1e-9, atol=1e-12)
    assert_array_equal(dense.predict(X), csr.predict(sp.csr_matrix(X)))


def test_csr_with_duplicate_entries_is_its_summed_matrix():
    X, y = _stream(n=200, sparse_rows=True)
    A = sp.csr_matrix(X)
    # the same matrix with every stored value split in two entries
    dup = sp.csr_matrix((np.repeat(A.data / 2, 2), np.repeat(A.indices, 2),
                         2 * A.indptr), shape=A.shape)
    assert not dup.has_canonical_format
    a = AMM(random_state=0).partial_fit(A, y, classes=[0, 1, 2])
    b = AMM(random_state=0).partial_fit(dup, y, classes=[0, 1, 2])
    assert_allclose(a.coef_, b.coef_, rtol=1e-12, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), budget=st.integers(1, 5),
       clone=st.sampled_from([0.0, 0.5, 1.0]), n_classes=st.sampled_from([2, 3, 4]))
def test_budget_per_class_is_never_exceeded(seed, budget, clone, n_classes):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(60, 3))
    y = rng.randint(n_classes, size=60)
    est = AMM(budget=budget, clone_probability=clone, alpha=1e-2, prune_every=7,
              random_state=seed)
    for i in range(0, 60, 3):
        est.partial_fit(X[i:i + 3], y[i:i + 3], classes=np.arange(n_classes))
        assert est.n_weights_.shape == (n_classes,)
        assert np.all((est.n_weights_ >= 1) & (est.n_weights_ <= budget))
        assert est.coef_.shape == (est.n_weights_.sum(), 3)


def test_every_class_starts_with_one_zero_weight():
    X, y = _stream(n=1)
    learner = MultiHyperplaneLearner(n_classes=3, n_inputs=X.shape[1])
    assert_array_equal(learner.get_state()["counts"], [1, 1, 1])
    assert_array_equal(learner.coefficients()[0], np.zeros((3, X.shape[1] + 1)))
    # the first round is a mistake (every score 0) and adds a weight
    est = keeping_flags(AMM()).partial_fit(X[:1], y[:1], classes=[0, 1, 2])
    assert mistake_flags(est).tolist() == [1]
    assert est.n_weights_[y[0]] == 2


def test_binary_decision_is_the_difference_of_the_two_classes():
    X, y = _stream(n_classes=2)
    est = AMM(random_state=0).fit(X, y)
    S = X @ est.coef_.T + est.intercept_
    g = [S[:, est.weight_class_ == i].max(axis=1) for i in range(2)]
    assert_allclose(est.decision_function(X), g[1] - g[0])
    # a tie predicts classes_[0]
    zero = AMM(fit_intercept=False).partial_fit(np.zeros((1, X.shape[1])), ["b"],
                                                 classes=["a", "b"])
    assert_array_equal(zero.coef_, 0.0)
    assert_array_equal(zero.predict(X[:3]), ["a", "a", "a"])


def test_fit_is_deterministic_and_shuffles_by_random_state():
    X, y = _stream()
    a = AMM(random_state=5, clone_probability=0.3).fit(X, y)
    b = AMM(random_state=5, clone_probability=0.3).fit(X, y)
    c = AMM(random_state=6, clone_probability=0.3).fit(X, y)
    assert_array_equal(a.coef_, b.coef_)
    assert a.coef_.shape != c.coef_.shape or not np.array_equal(a.coef_, c.coef_)


def test_pickled_model_continues_as_the_original():
    X, y = _stream(n=400)
    params = dict(clone_probability=0.6, alpha=1e-2, prune_every=30, random_state=0)
    est = AMM(**params).partial_fit(X[:200], y[:200], classes=[0, 1, 2])
    copy = pickle.loads(pickle.dumps(est))
    est.partial_fit(X[200:], y[200:])
    copy.partial_fit(X[200:], y[200:])
    assert_array_equal(copy.coef_, est.coef_)
    assert_array_equal(copy.n_weights_, est.n_weights_)


def test_clone_probability_decays_and_carries_over_calls():
    X, y = _stream(n=300)
    est = AMM(clone_probability=1.0, clone_decay=0.5, budget=50, random_state=0)
    est.partial_fit(X[:150], y[:150], classes=[0, 1, 2])
    learner = est._learners[0]
    clones_so_far = np.log(learner.clone_p) / np.log(0.5)
    assert clones_so_far == round(clones_so_far) and clones_so_far >= 1
    p = learner.clone_p
    est.partial_fit(X[150:], y[150:])
    assert est._learners[0].clone_p <= p


def test_a_long_stream_keeps_the_scale_in_range():
    # t = 1e8: the scale is 1 / (t + 1), the steps in V's units 1 / alpha;
    # a 64-bit t keeps it above 1e-19
    X, y = _stream(n=200)
    learner = MultiHyperplaneLearner(n_classes=3, n_inputs=X.shape[1])
    learner.set_state(dict(learner.get_state(), t=10 ** 8))
    scores = np.empty(200)
    learner.run_block(np.ascontiguousarray(X), y.astype(float), scores)
    assert np.isfinite(scores).all()
    assert np.isfinite(learner.coefficients()[0]).all()
    assert learner.scale == pytest.approx(1.0 / (10 ** 8 + 201), rel=1e-9)


@pytest.mark.parametrize("params, message", [
    (dict(alpha=0.0), "alpha"), (dict(alpha=-1.0), "alpha"), (dict(budget=0), "budget"),
    (dict(prune_every=0), "prune_every"), (dict(prune_c=-1.0), "prune_c"),
    (dict(clone_probability=1.5), "clone_probability"), (dict(clone_decay=-0.1), "clone_decay"),
    (dict(intercept_scaling=0.0), "intercept_scaling"),
])
def test_parameters_out_of_range_are_refused(params, message):
    X, y = _stream(n=20)
    with pytest.raises(ValueError, match=message):
        AMM(**params).fit(X, y)


def test_corrupted_learner_state_is_refused():
    learner = MultiHyperplaneLearner(n_classes=3, n_inputs=2)
    state = learner.get_state()
    for bad in (dict(counts=np.array([1, 0, 1])), dict(counts=np.array([1, 1, 99])),
                dict(weights=np.zeros((2, 3))), dict(sq_norms=np.full(3, -1.0)),
                dict(weights=np.full((3, 3), np.nan))):
        with pytest.raises(ValueError, match="inconsistent state"):
            MultiHyperplaneLearner(n_classes=3, n_inputs=2).set_state(dict(state, **bad))
    with pytest.raises(ValueError, match="no class index"):
        learner.run_block(np.zeros((1, 2)), np.array([3.0]), np.empty(1))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_a_row_whose_step_overflows_is_refused_and_changes_nothing(sparse):
    # ||x~||^2 / alpha^2 beyond float64: refused by partial_fit before any
    # round changes the model, and by the check the river adapter runs
    X, y = _stream(n=50)
    est = AMM(random_state=0).partial_fit(X, y, classes=[0, 1, 2])
    before = pickle.dumps(est)
    bad = X[:3].copy()
    bad[1, 2] = 1.3e154             # its square is finite, divided by alpha^2 it is not
    bad = sp.csr_matrix(bad) if sparse else bad
    with pytest.raises(ValueError, match="too large for alpha"):
        est.partial_fit(bad, y[:3])
    assert pickle.dumps(est) == before
    with pytest.raises(ValueError, match="too large for alpha"):
        est._check_learnable_rows(X[:3] * np.array([[1.0], [1e155], [1.0]]))
    est._check_learnable_rows(X[:3] * 1e100)        # (learnable)


def test_a_failed_gamm_call_puts_the_clone_draws_back():
    # the rounds before the refused row drew from the generator: the
    # rollback restores it, so the next call draws as if nothing happened
    X, y = _stream(n=300)
    params = dict(clone_probability=0.9, clone_decay=0.999, budget=30, random_state=0)
    est = AMM(**params).partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    twin = pickle.loads(pickle.dumps(est))
    draws = est._learners[0].rng.random_sample  # (the model's generator)
    bad = X[100:200].copy()
    bad[-1, 0] = 1e200
    with pytest.raises(ValueError, match="too large"):
        est.partial_fit(bad, y[100:200])
    est.partial_fit(X[100:], y[100:])
    twin.partial_fit(X[100:], y[100:])
    assert_array_equal(est.coef_, twin.coef_)
    assert est._learners[0].clone_p == twin._learners[0].clone_p < 0.9
    assert draws() == twin._learners[0].rng.random_sample()
