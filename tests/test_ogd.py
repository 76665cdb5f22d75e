"""Kernel OGD / NORMA, NOGD and FOGD against the plain implementations of
doc/algorithms.md#kernel-ogd (kernel OGD / NORMA, NOGD, FOGD) (tests/oracles/ogd.py)."""

import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_blobs, make_moons
from sklearn.exceptions import DataConversionWarning

import skbudget._fourier
import skbudget._ogd_fast
from skbudget import FourierOGDClassifier, KernelOGDClassifier, NystromOGDClassifier
from skbudget._fourier import fourier_features
from skbudget._ogd_fast import MulticlassHingeLearner, fourier_sparse_rounds
from skbudget._params import MAX_BUDGET
from tests.oracles import keeping_flags, mistake_flags
from tests.oracles.ogd import (PlainFourierOGD, PlainFourierOGDShared, PlainKernelOGD,
                               PlainNystromOGD)
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


@pytest.mark.parametrize("multi_class, n_classes", [("ovr", 2), ("crammer_singer", 3)])
def test_overflowing_scores_are_a_clear_error_and_change_nothing(multi_class, n_classes):
    X, y = make_moons(60, noise=0.2, random_state=0)
    y = y + (n_classes > 2) * (X[:, 0] > 1.2)       # (three classes: the shared rule)
    est = KernelOGDClassifier(eta0=1e300, kernel="linear", multi_class=multi_class)
    est.partial_fit(X[:2], y[:2], classes=np.arange(n_classes))
    before = pickle.dumps(est)
    with pytest.raises(ValueError, match="not a finite number|not finite numbers"):
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
    assert est.coef_.shape == (1, 1)
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


@pytest.mark.parametrize("multi_class", ["ovr", "crammer_singer"])
def test_fourier_ogd_failure_mid_call_changes_nothing(monkeypatch, multi_class):
    X, y = _moons()
    y3 = (y > 0).astype(int) + (X[:, 0] > 1.2)
    est = FourierOGDClassifier(n_components=20, gamma=1.0, random_state=0,
                               multi_class=multi_class)
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
    state["_driver"] = dict(state["_driver"], features={"U": np.full((2, 5), np.nan)})
    with pytest.raises(ValueError, match="random weights are not a finite"):
        pickle.loads(pickle.dumps(est)).__setstate__(state)
    state["_driver"]["features"] = {"U": np.zeros((2, 4))}
    with pytest.raises(ValueError, match="a learner of 10 coefficients for 8 features"):
        pickle.loads(pickle.dumps(est)).__setstate__(state)
    # a file of skbudget 88d59f9 (FOGD's own driver, U in it) is refused by name
    state = est.__getstate__()
    state["_driver"] = {"U": state["_driver"]["features"]["U"],
                        **{key: value for key, value in state["_driver"].items()
                           if key in ("learners", "kernel", "chunk_size", "n_jobs", "pools",
                                      "pool_ids")}}
    with pytest.raises(ValueError, match="written by skbudget 88d59f9 or earlier"):
        FourierOGDClassifier().__setstate__(state)
    learner = est._learners[0]
    learner.set_state(dict(learner.get_state(), w=np.zeros(3)))
    with pytest.raises(ValueError, match="inconsistent state"):
        est.partial_fit(X, y)


# ---------------------------------------------------------------------------
# FOGD's shared multi-class mode (doc/algorithms.md#kernel-ogd)
# ---------------------------------------------------------------------------
def _blobs(n_classes, n=240, seed=0):
    X, y = make_blobs(n, centers=n_classes, n_features=3, cluster_std=2.0, random_state=seed)
    X = X / 4
    X[::7, 1] = 0.0                         # stored zeros and missing entries for CSR
    return X, y


@pytest.mark.parametrize("n_classes, n_components, eta0, seed",
                         [(3, 1, 0.5, 0), (4, 7, 2.0, 1), (5, 40, 0.5, 2)])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_fourier_ogd_shared_matches_plain(n_classes, n_components, eta0, seed, sparse):
    X, y = _blobs(n_classes, seed=seed)
    labels = np.array(["a", "b", "c", "d", "e"])[y]     # class indices from the labels' order
    est = keeping_flags(FourierOGDClassifier(n_components=n_components, eta0=eta0, gamma=1.0,
                                             multi_class="crammer_singer", shuffle=False,
                                             random_state=seed))
    est._chunk_size = 37
    est.fit(sp.csr_matrix(X) if sparse else X, labels)
    # the same draw as one-vs-rest (the model's first draw from random_state)
    U = np.sqrt(2 * 1.0) * np.random.RandomState(seed).standard_normal((3, n_components))
    assert_array_equal(est.random_weights_, U)
    plain = PlainFourierOGDShared(U, est.classes_, eta0=eta0).partial_fit(X, labels)
    assert_array_equal(mistake_flags(est), plain.mistakes)
    assert est.n_updates_ == plain.n_updates > 0
    assert est.coef_.shape == (n_classes, 2 * n_components)
    assert_allclose(est.coef_, plain.W, rtol=1e-9, atol=1e-12)
    assert_array_equal(est.intercept_, np.zeros(n_classes))
    assert_allclose(est.decision_function(X), plain.decision_function(X), rtol=1e-9,
                    atol=1e-12)
    assert_array_equal(est.predict(X), est.classes_[np.argmax(plain.decision_function(X), 1)])


@pytest.mark.parametrize("n_classes", [1, 2, 4])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_fourier_ogd_shared_learner_margins_match_plain_round_by_round(n_classes, sparse):
    # the learner alone (a shared learner may hold one or two classes: a
    # stream without classes= starts with the classes of its first rows)
    X, y = _blobs(max(n_classes, 2), n=150)
    U = FourierOGDClassifier(n_components=9, gamma=1.0, random_state=3).fit(X, y % 2
                                                                           ).random_weights_
    y = y % n_classes
    plain = PlainFourierOGDShared(U, range(n_classes), eta0=0.7).partial_fit(X, y)
    learner = MulticlassHingeLearner(n_outputs=n_classes, n_features=18, eta=0.7)
    margins = np.empty(len(y))
    if sparse:
        A = sp.csr_matrix(X)
        fourier_sparse_rounds([learner], A.data, A.indices, A.indptr,
                              np.arange(len(y), dtype=np.intp), U, 1 / 3.0,
                              y[None, :].astype(float), margins[None, :])
    else:
        learner.run_block(fourier_features(X, U), y.astype(float), margins)
    expected = np.array(plain.margins)
    # a tie the true class wins (the lowest index) is the smallest positive
    # double: no mistake
    ties = (expected == 0) & ~np.array(plain.mistakes)
    assert_allclose(margins[~ties], expected[~ties], rtol=1e-9, atol=1e-12)
    assert (margins[ties] == np.finfo(float).tiny).all()
    assert_array_equal(margins <= 0, plain.mistakes)
    assert_allclose(learner.W, plain.W, rtol=1e-9, atol=1e-12)
    assert learner.n_updates == plain.n_updates
    if n_classes == 1:
        assert learner.n_updates == 0 and not learner.W.base.any()
        assert (margins == np.finfo(float).max).all()       # no rival: the largest margin


def test_fourier_ogd_shared_learner_first_round_ties():
    # W = 0: every score 0, the runner-up the lowest other index; a tie is
    # a mistake unless the true class is the lowest index
    learner = MulticlassHingeLearner(n_outputs=3, n_features=2, eta=2.0)
    margins = np.empty(1)
    z = np.array([[0.5, 0.5]])
    learner.run_block(z, np.array([0.0]), margins)
    assert margins[0] == np.finfo(float).tiny
    assert_array_equal(learner.W, [[1, 1], [-1, -1], [0, 0]])
    learner = MulticlassHingeLearner(n_outputs=3, n_features=2, eta=2.0)
    learner.run_block(z, np.array([2.0]), margins)
    assert margins[0] == 0.0
    assert_array_equal(learner.W, [[-1, -1], [0, 0], [1, 1]])
    # the runner-up is now class 1 (score 0 > -1), the margin exactly 1:
    # no update (strict <)
    learner.run_block(z, np.array([2.0]), margins)
    assert margins[0] == 1.0 and learner.n_updates == 1
    learner.run_block(z, np.array([1.0]), margins)         # against class 2
    assert margins[0] == -1.0
    assert_array_equal(learner.W, [[-1, -1], [1, 1], [0, 0]])
    for label in (3.0, -1.0, 0.5, np.nan):
        with pytest.raises(ValueError, match="class index in \\[0, 3\\)"):
            learner.run_block(z, np.array([label]), margins)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_fourier_ogd_shared_partial_fit_equals_one_fit_epoch(sparse):
    X, y = _blobs(4)
    X = sp.csr_matrix(X) if sparse else X
    params = dict(n_components=25, gamma=1.0, multi_class="crammer_singer", random_state=5)
    fitted = FourierOGDClassifier(shuffle=False, **params).fit(X, y)
    streamed = FourierOGDClassifier(**params)
    for piece in np.array_split(np.arange(len(y)), [1, 8, 50, 51, 120]):
        streamed.partial_fit(X[piece], y[piece], classes=[0, 1, 2, 3])
    assert_array_equal(streamed.coef_, fitted.coef_)
    assert streamed.n_mistakes_ == fitted.n_mistakes_
    assert streamed.n_updates_ == fitted.n_updates_
    # two classes: the binary rule in either mode
    binary = FourierOGDClassifier(**params).fit(X, y % 2)
    ovr = FourierOGDClassifier(**{**params, "multi_class": "ovr"}).fit(X, y % 2)
    assert binary.coef_.shape == (1, 50)
    assert_array_equal(binary.coef_, ovr.coef_)


def test_fourier_ogd_shared_add_class_keeps_the_old_classes_and_trains_on():
    X, y = _blobs(4)
    est = FourierOGDClassifier(n_components=20, gamma=1.0, multi_class="crammer_singer",
                               random_state=2).fit(X[y != 1], y[y != 1])
    learner = est._learners[0]
    before = np.asarray(learner.W).copy()
    plain = PlainFourierOGDShared(est.random_weights_, [0, 2, 3])
    plain.W = before.copy()
    learner.add_class(1)
    plain.add_class(1, 1)
    assert_array_equal(np.asarray(learner.W)[[0, 2, 3]], before)
    assert not np.asarray(learner.W)[1].any() and learner.n_outputs == 4
    Z = fourier_features(X, est.random_weights_)
    assert_array_equal(np.argmax(Z @ np.asarray(learner.W)[[0, 2, 3]].T, 1),
                       np.argmax(Z @ before.T, 1))
    margins = np.empty(len(y))
    learner.run_block(Z, y.astype(float), margins)       # the new class among them
    plain.partial_fit(X, y)
    assert_allclose(learner.W, plain.W, rtol=1e-9, atol=1e-12)
    assert_array_equal(margins <= 0, plain.mistakes)
    learner.add_class(4)                                  # at the end
    assert learner.W.shape == (5, 40)
    with pytest.raises(ValueError, match="position must be in \\[0, 5\\]"):
        learner.add_class(6)


def test_fourier_ogd_shared_skops_file_continues_the_stream():
    sio = pytest.importorskip("skops.io")
    X, y = _blobs(3, n=150)
    est = FourierOGDClassifier(n_components=8, gamma=1.0, multi_class="crammer_singer",
                               random_state=1).partial_fit(X[:60], y[:60], classes=[0, 1, 2])
    data = sio.dumps(est)
    loaded = sio.loads(data, trusted=sio.get_untrusted_types(data=data))
    assert type(loaded._learners[0]) is MulticlassHingeLearner
    for model in (est, loaded):
        model.partial_fit(X[60:], y[60:])
    assert_array_equal(loaded.coef_, est.coef_)
    assert loaded.n_updates_ == est.n_updates_


def test_fourier_ogd_shared_refuses_a_corrupt_state():
    X, y = _blobs(3, n=90)
    est = FourierOGDClassifier(n_components=5, gamma=1.0, multi_class="crammer_singer",
                               random_state=0).fit(X, y)
    learner = est._learners[0]
    assert type(learner) is MulticlassHingeLearner and learner.W.shape == (3, 10)
    good = learner.get_state()
    for change, message in [(dict(W=np.zeros((2, 10))), "W of shape \\(2, 10\\) for 3 classes"),
                            (dict(W=np.full((3, 10), np.nan)), "W holds a value that is not"),
                            (dict(eta=-1.0), "eta=-1.0"),
                            (dict(n_updates=-2), "n_updates=-2")]:
        learner.set_state({**good, **change})
        before = pickle.dumps(est)
        with pytest.raises(ValueError, match="inconsistent state: " + message):
            est.partial_fit(X, y)
        with pytest.raises(ValueError, match="inconsistent state: " + message):
            est.partial_fit(sp.csr_matrix(X), y)
        assert pickle.dumps(est) == before
    with pytest.raises(ValueError, match="W must be a 2-D array"):
        learner.set_state({**good, "W": np.zeros(30)})
    learner.set_state(good)
    # a loaded model's learner is checked against its features
    state = est.__getstate__()
    state["_driver"] = dict(state["_driver"], features={"U": np.zeros((3, 4))})
    with pytest.raises(ValueError, match="10 coefficients per class for 8 features"):
        pickle.loads(pickle.dumps(est)).__setstate__(state)
    # and against the parameters the model was started with (what
    # skops.io.load runs): its number of classes and of features
    for field, value in [("n_outputs", 4), ("n_features", 12), ("eta", 0.25)]:
        state = est.__getstate__()
        learner_state = state["_driver"]["learners"][0]["state"]
        learner_state[field] = value
        with pytest.raises(ValueError, match=f"learners\\[0\\].state.{field}"):
            FourierOGDClassifier().__setstate__(state)
    state = est.__getstate__()
    state["_driver"]["learners"][0]["state"]["W"] = np.zeros((3, 9))
    with pytest.raises(ValueError, match="W of shape \\(3, 9\\) for 3 classes of 10"):
        FourierOGDClassifier().__setstate__(state)
    FourierOGDClassifier().__setstate__(est.__getstate__())     # (the untouched state loads)


# ---------------------------------------------------------------------------
# FOGD's compiled features (skbudget/_fourier_loops.h)
# ---------------------------------------------------------------------------
def _trig_arguments():
    """Arguments of every kind the features meet: projections at several
    scales, values within a few ULP of multiples of pi/2 (where the argument
    reduction cancels), the limit of the reduction (2^19) and beyond, tiny
    and subnormal values, signed zeros."""
    rng = np.random.RandomState(0)
    near = np.arange(-4000, 4000) * (np.pi / 2)
    near = near + rng.randint(-3, 4, near.size) * np.spacing(near)
    big = 2.0 ** 19
    return np.concatenate([
        rng.normal(size=1_000_000),
        rng.normal(size=500_000) * 30.0,
        rng.uniform(-1e4, 1e4, 500_000),
        rng.uniform(-big, big, 200_000),
        [big, -big, np.nextafter(big, np.inf), 1e6, -3e9, 1e300],
        near,
        rng.normal(size=10_000) * 10.0 ** rng.uniform(-320, -1, 10_000),
        [0.0, -0.0, 5e-324, np.pi / 4, np.nextafter(np.pi / 4, 1.0)],
    ])


def _float32_arguments():
    """float32 arguments of every kind: projections at several scales,
    the float32 values nearest multiples of pi/2 and their neighbours (the
    reduction cancels), the reduction's limit (2^12) and beyond, up to the
    largest float32, tiny and subnormal values, signed zeros."""
    rng = np.random.RandomState(1)
    near = (np.arange(-2700, 2700) * (np.pi / 2)).astype(np.float32)
    near = np.concatenate([np.nextafter(near, np.float32(np.inf) * k) for k in (1, -1)]
                          + [near, np.nextafter(np.nextafter(near, near + 1), near + 1)])
    limit = np.float32(2.0 ** 12)
    return np.concatenate([
        rng.normal(size=1_000_000),
        rng.normal(size=1_000_000) * 30.0,
        rng.uniform(-4096, 4096, 1_000_000),
        rng.uniform(-1e6, 1e6, 200_000),
        near,
        rng.normal(size=10_000) * 10.0 ** rng.uniform(-44, -1, 10_000),
        [limit, -limit, np.nextafter(limit, np.float32(0)), np.nextafter(limit, np.float32(1e9)),
         1e6, -3e9, np.finfo(np.float32).max, -np.finfo(np.float32).max],
        [0.0, -0.0, np.finfo(np.float32).smallest_subnormal, np.pi / 4,
         np.nextafter(np.float32(np.pi / 4), np.float32(1))],
    ]).astype(np.float32)


def _fourier_of(values, factor=1.0):
    from skbudget._ogd_fast import fourier_from_projections
    values = np.asarray(values)
    P = np.ascontiguousarray(values, dtype=np.float32 if values.dtype == np.float32
                             else np.float64).reshape(1, -1)
    Z = np.empty((1, 2 * P.shape[1]))
    not_finite = fourier_from_projections(P, Z, factor)
    return Z[0, :P.shape[1]], Z[0, P.shape[1]:], not_finite


def test_fourier_cosine_and_sine_are_within_one_ulp_of_libm():
    # the vectorized cosine and sine are not libm's bits: within 1 ULP of
    # NumPy's (and of the C library's, on a sample), on 2.2 million values
    x = _trig_arguments()
    cos, sin, not_finite = _fourier_of(x)
    assert not not_finite
    for got, reference in ((cos, np.cos(x)), (sin, np.sin(x))):
        assert np.max(np.abs(got - reference) / np.spacing(np.abs(reference))) <= 1.0
        assert np.max(np.abs(got - reference)) <= 2.3e-16
    import math
    sample = x[::97]
    assert_allclose(cos[::97], [math.cos(v) for v in sample], rtol=0, atol=2.3e-16)
    assert_allclose(sin[::97], [math.sin(v) for v in sample], rtol=0, atol=2.3e-16)
    # the scale is one rounded product
    cos_scaled, sin_scaled, _ = _fourier_of(x[:1000], factor=0.05)
    assert_array_equal(cos_scaled, cos[:1000] * 0.05)
    assert_array_equal(sin_scaled, sin[:1000] * 0.05)


def test_fourier_features_of_non_finite_projections_are_nan_and_flagged():
    cos, sin, not_finite = _fourier_of([1.0, np.nan, np.inf, -np.inf, 2.0])
    assert not_finite
    assert np.isnan(cos[1:4]).all() and np.isnan(sin[1:4]).all()
    assert_array_equal(cos[[0, 4]], _fourier_of([1.0, 2.0])[0])


FEATURES_DIGEST_SCRIPT = """
import hashlib, numpy as np, scipy.sparse as sp
from skbudget._ogd_fast import fourier_loops
from skbudget._fourier import fourier_features
from skbudget._ogd_fast import MulticlassHingeLearner, fourier_sparse_rounds
from skbudget._params import MAX_BUDGET
from tests.test_ogd import _fourier_of, _trig_arguments
from tests.test_ogd import _float32_arguments
cos, sin, _ = _fourier_of(_trig_arguments(), 0.3)
cos32, sin32, _ = _fourier_of(_float32_arguments(), 0.3)
rng = np.random.RandomState(0)
X = sp.random(300, 50, density=0.1, format="csr", random_state=rng)
X[:100] = (X[:100] != 0).astype(float)              # binary rows
U = rng.normal(size=(50, 101))
Z = fourier_features(X, U)
Z32 = fourier_features(X.astype(np.float32), U)
D32 = fourier_features(X.toarray().astype(np.float32), U)
D = fourier_features(X.toarray(), U)
print(fourier_loops(), hashlib.sha256(cos.tobytes() + sin.tobytes() + Z.tobytes()
                                      + D.tobytes()).hexdigest(),
      hashlib.sha256(cos32.tobytes() + sin32.tobytes() + Z32.tobytes()
                     + D32.tobytes()).hexdigest())
"""


# the dense projections alone (skb_dense_projections), on shapes that leave
# every kind of edge: rows past the last full tile (3 rows in AVX2's, 6 in
# AVX-512's) and past the last block of rows, columns past the last full
# vector (4 or 8 lanes, 8 or 16 in AVX-512's) and past the last strip, d
# not a multiple of anything (AVX2's sums carried over blocks of 64
# features), d = 1; and the projections of the same rows as CSR (summed
# by their own loop: the same bits from every build too)
PROJECTIONS_DIGEST_SCRIPT = """
import hashlib, numpy as np, scipy.sparse as sp
from skbudget._ogd_fast import fourier_loops, fourier_dense_projections
from skbudget._fourier import fourier_features
from skbudget._ogd_fast import MulticlassHingeLearner, fourier_sparse_rounds
digest = hashlib.sha256()
rng = np.random.RandomState(0)
for n, d, m in [(1, 1, 1), (5, 7, 3), (7, 13, 17), (11, 29, 33), (13, 97, 65), (17, 31, 127),
                (25, 785, 43), (60, 1, 9), (4, 3, 200), (100, 130, 700)]:
    for dtype in (np.float64, np.float32):
        X = rng.normal(size=(n, d)).astype(dtype)
        U = rng.normal(size=(d, m)).astype(dtype)
        P = np.empty((n, m), dtype)
        fourier_dense_projections(X, U, P)
        X[rng.rand(n, d) < 0.5] = 0
        digest.update(P.tobytes() + fourier_features(sp.csr_matrix(X), U).tobytes())
print(fourier_loops(), digest.hexdigest())
"""


def _digests_from_every_build(script):
    # the script's output (the loops chosen, then digests) run with the
    # baseline, AVX2 and AVX-512 loops (those the CPU has), chosen at the
    # import; skips where the CPU runs the baseline loops only
    import os
    import subprocess
    import sys
    from pathlib import Path
    from skbudget._ogd_fast import fourier_loops
    settings = {"avx512": [("", ""), ("1", ""), ("", "1")], "avx2": [("", ""), ("", "1")]}
    if fourier_loops() not in settings:
        pytest.skip("this CPU runs the baseline loops only")
    runs = []
    for no_avx512, no_avx2 in settings[fourier_loops()]:
        env = dict(os.environ, SKBUDGET_DISABLE_AVX512=no_avx512, SKBUDGET_DISABLE_AVX2=no_avx2)
        result = subprocess.run([sys.executable, "-c", script], env=env,
                                capture_output=True, text=True, timeout=600,
                                cwd=Path(__file__).parents[1])
        assert result.returncode == 0, result.stderr[-2000:]
        runs.append(result.stdout.split())
    assert [build for build, *_ in runs] == ["avx512", "avx2", "baseline"][-len(runs):]
    return [digests for _, *digests in runs]


def test_fourier_features_are_the_same_bits_from_every_build_of_the_loops():
    runs = _digests_from_every_build(FEATURES_DIGEST_SCRIPT)
    assert len({digest for digest, _ in runs}) == 1
    assert len({digest32 for _, digest32 in runs}) == 1     # float32 input too


def test_fourier_dense_projections_are_the_same_bits_from_every_build_of_the_loops():
    # AVX-512's tiles (6 rows by 4 vectors, the last vector masked), AVX2's
    # (3 by 4, the last columns by C's fma) and the baseline's libm fma:
    # one chain over k = 0 .. d - 1 from +0 for every value
    runs = _digests_from_every_build(PROJECTIONS_DIGEST_SCRIPT)
    assert len(set(map(tuple, runs))) == 1


@pytest.mark.parametrize("binary", [False, True], ids=["values", "binary"])
@pytest.mark.parametrize("n_components", [1, 3, 4, 37, 64, 101])
def test_fourier_sparse_projections_are_summed_as_scipy_sums_them(binary, n_components):
    # each projection summed over the row's nonzeros in their stored order
    # (duplicates and unsorted columns kept), one product and one addition
    # each: the bits of scipy's X @ U, however many columns
    rng = np.random.RandomState(n_components)
    X = sp.random(60, 40, density=0.2, format="csr", random_state=rng)
    if binary:
        X.data[:] = 1.0
    X.indices[:5], X.indices[5:10] = X.indices[5:10].copy(), X.indices[:5].copy()
    X = sp.csr_matrix((np.append(X.data, 2.5), np.append(X.indices, X.indices[-1]),
                       np.append(X.indptr[:-1], X.indptr[-1] + 1)), shape=X.shape)
    U = rng.normal(size=(40, n_components))
    expected = np.empty((60, 2 * n_components))
    assert not skbudget._ogd_fast.fourier_from_projections(
        np.ascontiguousarray(X @ U), expected, 1.0 / np.sqrt(n_components))
    assert_array_equal(fourier_features(X, U), expected)
    assert_allclose(fourier_features(X.toarray(), U), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("chunk_size", [1, 5, 16, 17, 300])
def test_fourier_ogd_csr_does_not_depend_on_the_segment(chunk_size, dtype):
    X, y = _moons(300)
    y3 = (y > 0).astype(int) + (X[:, 0] > 1.2)
    X = sp.csr_matrix(np.where(np.abs(X) > 0.3, X, 0.0).astype(dtype))
    default = keeping_flags(FourierOGDClassifier(n_components=45, gamma=1.0, max_iter=2,
                                                 random_state=3)).fit(X, y3)
    other = keeping_flags(FourierOGDClassifier(n_components=45, gamma=1.0, max_iter=2,
                                               random_state=3))
    other._chunk_size = chunk_size
    other.fit(X, y3)
    assert_array_equal(other.coef_, default.coef_)
    assert_array_equal(mistake_flags(other), mistake_flags(default))
    assert other.n_updates_ == default.n_updates_


def test_fourier_ogd_csr_refuses_non_finite_projections_and_malformed_rows():
    X, y = _moons(60)
    est = FourierOGDClassifier(n_components=5, gamma=1.0, random_state=0)
    est._chunk_size = 16
    est.fit(sp.csr_matrix(X), y)
    before = pickle.dumps(est)
    bad = sp.csr_matrix(np.vstack([X[:40], np.full((3, 2), 1e308)]))
    with pytest.raises(ValueError, match="projection x U.*not a finite number"):
        est.partial_fit(bad, y[:43])
    assert pickle.dumps(est) == before
    with pytest.raises(ValueError, match="projection x U.*not a finite number"):
        est.decision_function(bad)
    U = est.random_weights_
    data, indices, indptr = np.ones(2), np.array([0, 7], dtype=np.int32), np.array(
        [0, 2], dtype=np.int32)
    with pytest.raises(ValueError, match="malformed CSR"):
        skbudget._ogd_fast.fourier_sparse_features(data, indices, indptr, np.arange(1),
                                                   U, 1.0, np.empty((1, 10)))


# ---------------------------------------------------------------------------
# FOGD on float32 input: features computed in float32
# ---------------------------------------------------------------------------
def _float32_ulp_errors(got, x):
    """|got - f(x)| for f = cos, sin in float64, in units of the float32
    spacing at f(x) rounded to float32, and in absolute value."""
    exact = x.astype(np.float64)
    errors = []
    for values, reference in zip(got, (np.cos(exact), np.sin(exact))):
        spacing = np.spacing(np.abs(reference.astype(np.float32))).astype(np.float64)
        errors.append((np.max(np.abs(values - reference) / spacing),
                       np.max(np.abs(values - reference))))
    return errors


def test_fourier_float32_cosine_and_sine_are_within_1_5_float32_ulp():
    # float32 arguments: float32 results (stored as float64) within 1.5
    # float32 ULP of the exact cosine and sine (measured: 1.01) on 4.2
    # million arguments, edge cases included; the libm lanes (|x| > 2^12)
    # are float64 libm's rounded to float32 (within 0.5 ULP)
    x = _float32_arguments()
    cos, sin, not_finite = _fourier_of(x)
    assert not not_finite
    assert_array_equal(cos.astype(np.float32), cos)     # float32 values
    assert_array_equal(sin.astype(np.float32), sin)
    for ulps, absolute in _float32_ulp_errors((cos, sin), x):
        assert ulps <= 1.5 and absolute <= 1.2e-7
    beyond = np.abs(x) > 2.0 ** 12
    for values, reference in ((cos, np.cos), (sin, np.sin)):
        assert_array_equal(values[beyond], reference(x[beyond].astype(np.float64)).astype(
            np.float32))
    # the scale: one float32 product by the factor rounded to float32
    cos_scaled, sin_scaled, _ = _fourier_of(x[:1000], factor=0.05)
    assert_array_equal(cos_scaled, (cos[:1000].astype(np.float32) * np.float32(0.05)))
    assert_array_equal(sin_scaled, (sin[:1000].astype(np.float32) * np.float32(0.05)))


def test_fourier_float32_features_of_non_finite_projections_are_nan_and_flagged():
    x = np.array([1.0, np.nan, np.inf, -np.inf, 2.0], dtype=np.float32)
    cos, sin, not_finite = _fourier_of(x)
    assert not_finite
    assert np.isnan(cos[1:4]).all() and np.isnan(sin[1:4]).all()
    assert_array_equal(cos[[0, 4]], _fourier_of(x[[0, 4]])[0])


def _digits_stream():
    from sklearn.datasets import load_digits
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_fourier_float32_features_are_close_to_the_float64_ones(sparse):
    # the projections rounded in float32 dominate the difference: within
    # 2e-7 of the float64 features for D = 400 (measured 5.8e-8; 4.7e-8
    # on a9a at gamma = 0.05)
    X, _ = _digits_stream()
    U = np.sqrt(2 * 0.05) * np.random.RandomState(0).standard_normal((64, 400))
    X = sp.csr_matrix(X) if sparse else X
    Z64 = fourier_features(X, U)
    Z32 = fourier_features(X.astype(np.float32), U)
    assert Z32.dtype == np.float64
    assert_array_equal(Z32.astype(np.float32), Z32)
    assert np.max(np.abs(Z32 - Z64)) < 2e-7
    # and of NumPy's cosine and sine of the float32 projections, in float64
    # (measured 5.1e-9: the float32 cosine, factor and product)
    P = (X.astype(np.float32) @ U.astype(np.float32)).astype(np.float64)
    exact = np.hstack([np.cos(P), np.sin(P)]) / np.sqrt(400)
    assert np.max(np.abs(Z32 - exact)) < 1e-8


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_fourier_ogd_on_float32_agrees_with_float64(sparse):
    # a real stream (digits, 10 classes, 3 passes): the float32 model's
    # coefficients close to the float64 one's, nearly all predictions equal
    X, y = _digits_stream()
    X = sp.csr_matrix(X) if sparse else X
    params = dict(n_components=400, gamma=0.05, max_iter=3, random_state=0)
    est64 = FourierOGDClassifier(**params).fit(X, y)
    est32 = FourierOGDClassifier(**params).fit(X.astype(np.float32), y)
    assert_array_equal(est32.random_weights_, est64.random_weights_)
    assert est32.coef_.dtype == np.float64
    assert np.max(np.abs(est32.coef_ - est64.coef_)) < 1e-3 * np.max(np.abs(est64.coef_))
    assert abs(est32.n_mistakes_ - est64.n_mistakes_) <= 0.01 * est64.n_mistakes_
    assert np.mean(est32.predict(X) == est64.predict(X)) >= 0.995
    assert np.mean(est32.predict(X.astype(np.float32)) == est64.predict(X)) >= 0.995
    # gamma='scale' from float32 input: the float64 input's gamma
    scale32 = FourierOGDClassifier(n_components=5).fit(X.astype(np.float32), y)
    assert scale32.gamma_ == FourierOGDClassifier(n_components=5).fit(X, y).gamma_


def test_fourier_ogd_trains_in_the_first_calls_precision_and_predicts_in_its_inputs():
    # partial_fit on float32 then float64: the float64 piece is converted to
    # float32 (with a warning), as every estimator's later calls are; each
    # prediction computes the features in its input's precision; the
    # model is float64
    X, y = _moons(300)
    X32 = X.astype(np.float32)
    est = FourierOGDClassifier(n_components=30, gamma=1.0, random_state=2)
    est.partial_fit(X32[:150], y[:150], classes=[-1, 1])
    with pytest.warns(DataConversionWarning, match="started on float32 input"):
        est.partial_fit(X[150:], y[150:])
    U = est.random_weights_
    learner = skbudget._ogd_fast.LinearHingeLearner(60, 0.5)
    for Z, labels in ((fourier_features(X32[:150], U), y[:150]),
                      (fourier_features(X32[150:], U), y[150:])):
        learner.run_block(Z, labels.astype(float), np.empty(len(labels)))
    assert_array_equal(est.coef_[0], learner.w)
    assert_array_equal(est.decision_function(X32), fourier_features(X32, U) @ est.coef_[0])
    assert_array_equal(est.decision_function(X), fourier_features(X, U) @ est.coef_[0])
    # the float32 copy of U is derived: never saved, rebuilt after loading
    assert "_U32" in est._driver.features.__dict__
    loaded = pickle.loads(pickle.dumps(est))
    assert "_U32" not in loaded._driver.features.__dict__
    assert "_U32" not in est.__getstate__()["_driver"]["features"]
    assert_array_equal(loaded.decision_function(X32), est.decision_function(X32))


def test_fourier_ogd_float32_csr_and_dense_agree():
    X, y = _moons(300)
    y3 = (y > 0).astype(int) + (X[:, 0] > 1.2)
    X = sp.csr_matrix(np.where(np.abs(X) > 0.3, X, 0.0).astype(np.float32))
    default = FourierOGDClassifier(n_components=45, gamma=1.0, max_iter=2,
                                   random_state=3).fit(X, y3)
    # dense float32 input: the same features (BLAS sums the projections in
    # its own order: close, not the same bits)
    dense = FourierOGDClassifier(n_components=45, gamma=1.0, max_iter=2,
                                 random_state=3).fit(X.toarray(), y3)
    assert np.max(np.abs(dense.coef_ - default.coef_)) < 1e-4


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_fourier_ogd_float32_refuses_non_finite_projections_atomically(sparse, monkeypatch):
    X, y = _moons(60)
    X32 = X.astype(np.float32)
    convert = sp.csr_matrix if sparse else np.asarray
    est = FourierOGDClassifier(n_components=5, gamma=1.0, random_state=0)
    est._chunk_size = 16
    est.fit(convert(X32), y)
    before = pickle.dumps(est)
    # finite float32 values whose float32 projections overflow
    bad = convert(np.vstack([X32[:40], np.full((3, 2), 3e38, dtype=np.float32)]))
    with pytest.raises(ValueError, match="projection x U.*not a finite number"):
        est.partial_fit(bad, y[:43])
    assert pickle.dumps(est) == before
    with pytest.raises(ValueError, match="projection x U.*not a finite number"):
        est.decision_function(bad)
    # a failure mid-call (an interrupt after some blocks) changes nothing
    calls = {"left": 2}
    rounds = skbudget._fourier.fourier_sparse_rounds
    features = skbudget._fourier.fourier_features

    def failing(function):
        def wrapped(*args):
            calls["left"] -= 1
            if calls["left"] < 0:
                raise KeyboardInterrupt
            return function(*args)
        return wrapped

    monkeypatch.setattr(skbudget._fourier, "fourier_sparse_rounds", failing(rounds))
    monkeypatch.setattr(skbudget._fourier, "fourier_features", failing(features))
    with pytest.raises(KeyboardInterrupt):
        est.partial_fit(convert(X32), y)
    assert pickle.dumps(est) == before


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_components", [1, 3, 8, 37, 101])
def test_fourier_dense_features_of_a_row_do_not_depend_on_its_block(dtype, n_components):
    # dense rows: each projection one fused multiply-add after another over
    # the features (skb_dense_projections), the same bits for a row alone,
    # in a full tile of rows or at a block's edge (a BLAS product's were
    # not: one row goes through GEMV; FOGD's model depended on the cuts)
    rng = np.random.RandomState(n_components)
    X = rng.normal(size=(11, 29)).astype(dtype)
    U = rng.normal(size=(29, n_components))
    whole = fourier_features(X, U)
    for start, stop in [(0, 1), (3, 4), (10, 11), (1, 3), (2, 9), (4, 11)]:
        assert_array_equal(fourier_features(X[start:stop], U), whole[start:stop])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fourier_dense_features_of_wide_rows_do_not_depend_on_the_row_blocks(dtype):
    # wide rows are projected a block of rows at a time (AVX-512: about 128
    # kB of X, 18 rows of 784 float64 features, 36 of float32; AVX2: 64
    # features at a time, the sums carried over): the same bits as a row
    # alone, across the blocks' edges
    rng = np.random.RandomState(0)
    X = rng.normal(size=(100, 784)).astype(dtype)
    U = rng.normal(size=(784, 37))
    whole = fourier_features(X, U)
    for start, stop in [(0, 1), (17, 19), (18, 19), (38, 40), (40, 41), (35, 100), (99, 100)]:
        assert_array_equal(fourier_features(X[start:stop], U), whole[start:stop])


def test_nystrom_ogd_memory_follows_the_support_set():
    # the Gram matrix of stage 1 grows with the support set (doubling, up to
    # the budget): at budget=5000, 300 rows pickled to ~205 MB on ae3fe45,
    # and budget=10**6 was a MemoryError (7.28 TiB) at the first row
    X, y = make_moons(300, noise=0.3, random_state=0)
    est = NystromOGDClassifier(budget=5000, gamma=2.0, random_state=0).fit(X, y)
    assert 0 < est.n_support_.sum() < 300
    assert len(pickle.dumps(est)) < 10 * 2**20
    huge = NystromOGDClassifier(budget=10**6, n_components=20, gamma=2.0,
                                random_state=0).fit(X, y)
    same = NystromOGDClassifier(budget=5000, n_components=20, gamma=2.0,
                                random_state=0).fit(X, y)
    assert_array_equal(huge.dual_coef_, same.dual_coef_)
    assert_array_equal(huge.support_vectors_, same.support_vectors_)
    assert len(pickle.dumps(huge)) < 10 * 2**20
    # coef_ is as wide as the components kept, not ceil(0.2 * budget): at
    # the largest budget with the default n_components it was a 3.4 GB row
    # of zeros (in memory and in the pickle) for a model still in stage 1
    largest = NystromOGDClassifier(budget=MAX_BUDGET, gamma=2.0, random_state=0).fit(X, y)
    assert largest.n_components_ == math.ceil(0.2 * MAX_BUDGET)
    assert largest.coef_.shape == (1, 0) and not largest.in_feature_space_.any()
    assert len(pickle.dumps(largest)) < 10 * 2**20
    assert_array_equal(largest.dual_coef_, same.dual_coef_)
    # and it still switches at its budget, with the arrays grown to it
    small = NystromOGDClassifier(budget=40, gamma=2.0, random_state=0).fit(X, y)
    assert small.in_feature_space_.all() and small.n_support_.sum() == 40
    copy = pickle.loads(pickle.dumps(small))
    copy.partial_fit(X, y)
    small.partial_fit(X, y)
    assert_array_equal(copy.coef_, small.coef_)
