"""Kernel OGD / NORMA, NOGD and FOGD against the plain implementations of
doc/algorithms.md#kernel-ogd (kernel OGD / NORMA, NOGD, FOGD) (tests/oracles/ogd.py)."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_moons

import skbudget._fourier
from skbudget import FourierOGDClassifier, KernelOGDClassifier, NystromOGDClassifier
from skbudget._fourier import fourier_features
from tests.oracles import keeping_flags, mistake_flags
from tests.oracles.ogd import PlainFourierOGD, PlainKernelOGD, PlainNystromOGD
from tests.test_fixed_budget import STREAM_IDS, STREAMS, assert_matches

# the streams whose support sets hold duplicate points: K_SS then has equal
# eigenvalues, and the k largest eigenpairs are a well-defined subspace only
# when k takes every nonzero one (NOGD is compared with k = B there)
DEGENERATE = {"rbf-duplicates", "rbf-zero-scores"}


# ---------------------------------------------------------------------------
# kernel OGD / NORMA (doc/algorithms.md#kernel-ogd)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("stream", STREAMS, ids=STREAM_IDS)
@pytest.mark.parametrize("params", [
    dict(), dict(budget=1), dict(budget=5), dict(budget=25, eta0=0.25),
    dict(alpha=0.05), dict(budget=8, alpha=0.3, eta0=1.5), dict(budget=6, alpha=2.0),
], ids=repr)
def test_kernel_ogd_matches_plain(stream, params):
    _, X, y, kw, kernel = stream
    est, plain = assert_matches(KernelOGDClassifier(shuffle=False, **params, **kw),
                                PlainKernelOGD(kernel, **params), X, y)
    if params.get("budget") is not None:
        assert est.n_support_[0] == min(params["budget"], plain.n_updates)


@pytest.mark.parametrize("stream", STREAMS[:2], ids=STREAM_IDS[:2])
def test_kernel_ogd_partial_fit_matches_plain(stream):
    _, X, y, kw, kernel = stream
    assert_matches(KernelOGDClassifier(budget=10, alpha=0.01, **kw),
                   PlainKernelOGD(kernel, budget=10, alpha=0.01), X, y, stream=True)


def test_kernel_ogd_updates_on_a_margin_below_one_only():
    # linear kernel, integer features: the scores are exact; a margin of
    # exactly 1 does not update (the strict < of the rule)
    X = np.array([[1.0], [1.0], [1.0], [2.0], [-1.0]])
    y = np.array([1, 1, 1, 1, 1])
    est = keeping_flags(KernelOGDClassifier(eta0=1.0, kernel="linear"))
    est.partial_fit(X, y, classes=[0, 1])
    # scores 0 (update), 1, 1, 2 (no update), -1 (update)
    assert est.n_updates_ == 2
    assert_array_equal(est.dual_coef_, [[1.0, 1.0]])
    assert_array_equal(mistake_flags(est), [1, 0, 0, 0, 1])


def test_kernel_ogd_decays_every_round_and_forgets_at_full_decay():
    X, y = make_moons(60, noise=0.2, random_state=0)
    # eta0 * alpha = 1: the decay zeroes every coefficient each round, so
    # only the last update's example keeps a coefficient
    est = KernelOGDClassifier(eta0=0.5, alpha=2.0, gamma=1.0, shuffle=False).fit(X, y)
    coef = est.dual_coef_[0]
    assert np.count_nonzero(coef) <= 1 and coef[-1] in (0.5, -0.5)
    # a round without an update decays as well: the example seen again
    # scores 2 * 0.9^t >= 1 for six rounds, each decaying by 1 - 2 * 0.05
    est = KernelOGDClassifier(eta0=2.0, alpha=0.05, gamma=1.0)
    est.partial_fit(np.repeat(X[:1], 7, axis=0), np.ones(7), classes=[0, 1])
    assert est.n_updates_ == 1
    assert_allclose(est.dual_coef_, [[2.0 * 0.9 ** 6]], rtol=1e-12)


def test_kernel_ogd_parameter_errors():
    X, y = make_moons(40, random_state=0)
    with pytest.raises(ValueError, match="eta0 \\* alpha must be at most 1"):
        KernelOGDClassifier(eta0=2.0, alpha=1.0).fit(X, y)
    with pytest.raises(ValueError, match="eta0"):
        KernelOGDClassifier(eta0=0.0).fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        KernelOGDClassifier(alpha=-1.0).fit(X, y)


def test_overflowing_scores_are_a_clear_error_and_change_nothing():
    X, y = make_moons(60, noise=0.2, random_state=0)
    est = KernelOGDClassifier(eta0=1e300, kernel="linear").partial_fit(X[:2], y[:2],
                                                                        classes=[0, 1])
    before = pickle.dumps(est)
    with pytest.raises(ValueError, match="not a finite number"):
        est.partial_fit(X * 1e10, y)
    assert pickle.dumps(est) == before


# ---------------------------------------------------------------------------
# NOGD (doc/algorithms.md#kernel-ogd)
# ---------------------------------------------------------------------------
def _nogd_cases():
    for stream in STREAMS:
        name = stream[0]
        for budget, k in [(1, None), (4, None), (4, 4), (12, 3), (25, None), (25, 25)]:
            if name in DEGENERATE and k != budget:
                continue
            yield pytest.param(stream, budget, k, id=f"{name}-B{budget}-k{k}")


def assert_nogd_matches(est, plain, X, y, stream=False):
    """Same mistakes, updates and landmarks; the same model (its kernel
    expansion ``M^T w`` and its scores, to 1e-7: the eigenvectors carry the
    rounding of two differently summed Gram matrices, amplified by
    ``Lam^{-1/2}``); the same ``w`` up to the signs of the eigenvectors."""
    assert_matches(est, plain, X, y, stream, rtol=1e-7, atol=1e-7)
    scale = 1.0 + np.abs(plain.coef_).max()
    assert est.in_feature_space_[0] == (plain.M is not None)
    if plain.M is not None:
        kept = plain.M.shape[0]
        assert est.n_components_kept_[0] == kept
        # w up to the sign of each eigenvector
        assert_allclose(np.abs(est.coef_[0, :kept]), np.abs(plain.w), rtol=1e-6,
                        atol=1e-8 * scale)
        assert_array_equal(est.coef_[0, kept:], 0.0)
    return est, plain


@pytest.mark.parametrize("stream, budget, k", list(_nogd_cases()))
def test_nystrom_ogd_matches_plain(stream, budget, k):
    _, X, y, kw, kernel = stream
    assert_nogd_matches(
        NystromOGDClassifier(budget=budget, n_components=k, shuffle=False, **kw),
        PlainNystromOGD(kernel, budget=budget, n_components=k), X, y)


@pytest.mark.parametrize("stream", STREAMS[:2], ids=STREAM_IDS[:2])
def test_nystrom_ogd_partial_fit_matches_plain(stream):
    _, X, y, kw, kernel = stream
    est, plain = assert_nogd_matches(NystromOGDClassifier(budget=10, eta0=0.3, **kw),
                                     PlainNystromOGD(kernel, budget=10, eta0=0.3), X, y,
                                     stream=True)
    assert plain.M is not None


def test_nystrom_ogd_carries_the_stage_one_model_over():
    # with every eigenpair kept (distinct points: K_SS has full rank) the
    # features span k(., S), so the switch leaves the model unchanged
    X, y = make_moons(200, noise=0.3, random_state=0)
    est = NystromOGDClassifier(budget=15, n_components=15, gamma=1.0, shuffle=False)
    for stop in range(1, len(X)):
        est.partial_fit(X[stop - 1:stop], y[stop - 1:stop], classes=[0, 1])
        learner = est._learners[0]
        if learner.n_sv == 15:
            break
    assert not est.in_feature_space_[0]
    before = est.decision_function(X)
    learner.start_stage_two()
    assert_allclose(learner.expansion(), learner.coefficients(), rtol=1e-6, atol=1e-8)
    est._update_fitted_attributes()
    assert_allclose(est.decision_function(X), before, rtol=1e-6, atol=1e-8)
    # with fewer components, the model is its projection: w = Lam^{1/2} V^T alpha
    est2 = NystromOGDClassifier(budget=15, n_components=4, gamma=1.0, shuffle=False)
    est2.partial_fit(X[:stop], y[:stop], classes=[0, 1])
    learner2 = est2._learners[0]
    K = learner2.gram_matrix()
    values, vectors = np.linalg.eigh(K)
    top = vectors[:, ::-1][:, :4]
    learner2.start_stage_two()
    assert_allclose(learner2.expansion(), np.linalg.pinv(K) @ top @ top.T @ K
                    @ learner2.coefficients(), rtol=1e-5, atol=1e-7)


def test_nystrom_ogd_switch_round_counts_the_stage_one_score():
    # the round that switches is scored by the model before it (stage 1)
    X, y = make_moons(120, noise=0.3, random_state=3)
    y = 2 * y - 1
    plain = PlainNystromOGD(lambda A, B: np.exp(-np.sum((A[:, None] - B[None]) ** 2, -1)),
                            budget=6)
    plain.partial_fit(X, y)
    est = keeping_flags(NystromOGDClassifier(budget=6, gamma=1.0, shuffle=False)).fit(X, y)
    assert_array_equal(mistake_flags(est), plain.mistakes)
    assert est.n_components_ == 2 and est.in_feature_space_.all()


def test_nystrom_ogd_drops_null_eigenvalues():
    # the same point three times: K_SS has rank one
    X = np.array([[0.0, 0.0]] * 3 + [[0.1, 0.0], [5.0, 5.0]])
    y = np.array([1, -1, 1, -1, 1])
    est = NystromOGDClassifier(budget=3, n_components=3, gamma=1.0, shuffle=False).fit(X, y)
    assert est.in_feature_space_[0]
    assert est.n_components_kept_[0] == 1
    assert_array_equal(est.coef_[0, 1:], 0.0)
    assert np.isfinite(est.decision_function(X)).all()


def test_nystrom_ogd_parameters():
    X, y = make_moons(40, random_state=0)
    assert NystromOGDClassifier(budget=12).fit(X, y).n_components_ == 3
    assert NystromOGDClassifier(budget=10).fit(X, y).n_components_ == 2
    with pytest.raises(ValueError, match="n_components=11 must be at most budget=10"):
        NystromOGDClassifier(budget=10, n_components=11).fit(X, y)
    with pytest.raises(ValueError, match="n_components"):
        NystromOGDClassifier(n_components=0).fit(X, y)
    with pytest.raises(ValueError, match="budget"):
        NystromOGDClassifier(budget=None).fit(X, y)


def test_nystrom_ogd_landmarks_are_per_class():
    X, y = make_moons(300, noise=0.3, random_state=1)
    y = y + (X[:, 0] > 1.2)      # three classes
    est = NystromOGDClassifier(budget=8, gamma=1.0, random_state=0).fit(X, y)
    assert est.n_support_.tolist() == [8, 8, 8]
    assert est.in_feature_space_.all()
    assert est.coef_.shape == (3, 2)


# ---------------------------------------------------------------------------
# FOGD (doc/algorithms.md#kernel-ogd)
# ---------------------------------------------------------------------------
def _moons(n=300, seed=1):
    X, y = make_moons(n, noise=0.3, random_state=seed)
    return X, 2 * y - 1


@pytest.mark.parametrize("n_components, eta0, seed", [(1, 0.5, 0), (7, 2.0, 1), (60, 0.5, 2)])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_fourier_ogd_matches_plain(n_components, eta0, seed, sparse):
    X, y = _moons()
    X[::9, 1] = 0.0                         # stored zeros and missing entries for CSR
    est = keeping_flags(FourierOGDClassifier(n_components=n_components, eta0=eta0, gamma=2.0,
                                             shuffle=False, random_state=seed))
    est._chunk_size = 37
    est.fit(sp.csr_matrix(X) if sparse else X, y)
    # U: the model's first draw from random_state, as doc/algorithms.md#kernel-ogd writes it
    U = np.sqrt(2 * 2.0) * np.random.RandomState(seed).standard_normal((2, n_components))
    assert_array_equal(est.random_weights_, U)
    plain = PlainFourierOGD(U, eta0=eta0).partial_fit(X, y)
    assert_array_equal(mistake_flags(est), plain.mistakes)
    assert est.n_updates_ == plain.n_updates
    assert_allclose(est.coef_[0], plain.w, rtol=1e-9, atol=1e-12)
    assert_array_equal(est.intercept_, [0.0])
    assert_allclose(est.decision_function(X), plain.decision_function(X), rtol=1e-9,
                    atol=1e-12)


def test_fourier_ogd_partial_fit_matches_plain_and_shares_u_across_classes():
    X, y = _moons()
    est = FourierOGDClassifier(n_components=30, gamma=1.0, random_state=4)
    for piece in np.array_split(np.arange(len(y)), [1, 2, 50, 51, 200]):
        est.partial_fit(X[piece], y[piece], classes=[-1, 1])
    plain = PlainFourierOGD(est.random_weights_).partial_fit(X, y)
    assert_allclose(est.coef_[0], plain.w, rtol=1e-9, atol=1e-12)
    # one U for every class: the same draw whatever the number of classes
    y3 = (y > 0).astype(int) + (X[:, 0] > 1.2)
    multi = FourierOGDClassifier(n_components=30, gamma=1.0, random_state=4).fit(X, y3)
    assert_array_equal(multi.random_weights_, est.random_weights_)
    assert multi.coef_.shape == (3, 60)


def test_fourier_features_approximate_the_rbf_kernel():
    # z(x).z(x') is an unbiased estimate of k(x, x') with variance O(1/D)
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 5)) * 0.5
    K = np.exp(-0.3 * ((X[:, None] - X[None]) ** 2).sum(-1))
    errors = []
    for D in (100, 1600):
        est = FourierOGDClassifier(n_components=D, gamma=0.3, random_state=1).fit(
            X, rng.randint(2, size=40))
        Z = fourier_features(X, est.random_weights_)
        assert Z.shape == (40, 2 * D)
        assert_allclose(np.einsum("ij,ij->i", Z, Z), 1.0, rtol=1e-12)   # cos^2 + sin^2
        errors.append(np.abs(Z @ Z.T - K).mean())
    assert errors[1] < 0.05 and errors[1] < errors[0] / 2.5     # ~ 1 / sqrt(D)


def test_fourier_ogd_failure_mid_call_changes_nothing(monkeypatch):
    X, y = _moons()
    y3 = (y > 0).astype(int) + (X[:, 0] > 1.2)
    est = FourierOGDClassifier(n_components=20, gamma=1.0, random_state=0)
    est._chunk_size = 10
    est.partial_fit(X[:100], y3[:100], classes=[0, 1, 2])
    before = pickle.dumps(est)
    calls = {"left": 5}

    def failing(X, U):
        calls["left"] -= 1
        if calls["left"] < 0:
            raise KeyboardInterrupt
        return fourier_features(X, U)

    monkeypatch.setattr(skbudget._fourier, "fourier_features", failing)
    with pytest.raises(KeyboardInterrupt):
        est.partial_fit(X[100:], y3[100:])
    assert pickle.dumps(est) == before
    monkeypatch.undo()
    est.partial_fit(X[100:], y3[100:])
    clean = pickle.loads(before).partial_fit(X[100:], y3[100:])
    assert_array_equal(est.coef_, clean.coef_)


def test_fourier_ogd_refuses_what_it_cannot_compute():
    X, y = _moons(60)
    with pytest.raises(ValueError, match="n_components"):
        FourierOGDClassifier(n_components=0).fit(X, y)
    with pytest.raises(ValueError, match="eta0"):
        FourierOGDClassifier(eta0=-1.0).fit(X, y)
    with pytest.raises(TypeError):
        FourierOGDClassifier(kernel="linear")
    est = FourierOGDClassifier(n_components=5, gamma=1.0, random_state=0).fit(X, y)
    before = pickle.dumps(est)
    with pytest.raises(ValueError, match="projection x U.*not a finite number"):
        est.partial_fit(np.full((3, 2), 1e308), y[:3])
    assert pickle.dumps(est) == before
    # a loaded model is checked before it drives a loop
    state = est.__getstate__()
    state["_driver"] = dict(state["_driver"], U=np.full((2, 5), np.nan))
    with pytest.raises(ValueError, match="random weights are not a finite"):
        pickle.loads(pickle.dumps(est)).__setstate__(state)
    learner = est._learners[0]
    learner.set_state(dict(learner.get_state(), w=np.zeros(3)))
    with pytest.raises(ValueError, match="inconsistent state"):
        est.partial_fit(X, y)
