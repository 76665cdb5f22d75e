"""KernelOGDClassifier and NystromOGDClassifier with
``multi_class='crammer_singer'`` against the plain implementations of
doc/algorithms.md#kernel-ogd's shared multi-class mode
(tests/oracles/ogd.py), update by update, and the properties of the
shared model."""

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.metrics.pairwise import rbf_kernel

from skbudget import KernelOGDClassifier, NystromOGDClassifier
from skbudget._ogd_fast import SharedKernelOGDLearner, SharedNystromOGDLearner
from tests.oracles import keeping_flags, mistake_flags
from tests.oracles.ogd import PlainSharedKernelOGD, PlainSharedNystromOGD
from tests.test_bsgd_multiclass import STREAMS
from tests.model_state import assert_same_state, model_state
from tests.test_atomic_calls import FlakyKernel
from tests.test_onnx import _check
from tests.test_persistence import _assert_identical, _loaded

SHARED = dict(multi_class="crammer_singer", shuffle=False)


STREAM_IDS = [s[0] for s in STREAMS]


def rbf(gamma):
    return lambda A, B: rbf_kernel(A, B, gamma=gamma)


def assert_shared_matches(est, plain, X, y, rtol=1e-9, atol=1e-12, stream=False):
    """Mistakes round by round, updates, the support set (as stream rows),
    the coefficient rows and the class scores (``fit``, or with ``stream``
    one ``partial_fit`` call); chunks of 37 rows cross kernel blocks."""
    est._chunk_size = 37
    keeping_flags(est)
    if stream:
        est.partial_fit(X, y, classes=np.arange(plain.k))
    else:
        est.fit(X, y)
    dense = X.toarray() if sp.issparse(X) else X
    plain.partial_fit(dense, y)
    assert_array_equal(mistake_flags(est), plain.mistakes)
    assert est.n_mistakes_ == sum(plain.mistakes)
    assert est.n_updates_ == plain.n_updates
    sv = est.support_vectors_.toarray() if sp.issparse(est.support_vectors_) \
        else est.support_vectors_
    assert_array_equal(est.n_support_, [len(plain.support_)])
    assert_array_equal(sv, dense[plain.support_])
    scale = 1.0 + np.abs(plain.coef).max(initial=0.0)
    assert est.dual_coef_.shape == plain.coef.shape
    assert_allclose(est.dual_coef_, plain.coef, rtol=rtol, atol=atol * scale)
    assert_array_equal(est.intercept_, np.zeros(plain.k))
    Z = np.vstack([dense[::5] + 0.03, dense[1::9]])
    assert_allclose(est.decision_function(Z), plain.decision_scores(Z), rtol=max(rtol, 1e-9),
                    atol=max(atol, 1e-9) * scale)
    return est, plain


# ---------------------------------------------------------------------------
# kernel OGD / NORMA, shared mode
# ---------------------------------------------------------------------------
OGD_PARAMS = [dict(), dict(budget=1), dict(budget=5), dict(budget=25, eta0=0.25),
              dict(alpha=0.05), dict(budget=8, alpha=0.3, eta0=1.5), dict(budget=6, alpha=2.0)]


@pytest.mark.parametrize("stream", STREAMS, ids=STREAM_IDS)
@pytest.mark.parametrize("params", OGD_PARAMS, ids=repr)
def test_shared_kernel_ogd_matches_plain(stream, params):
    _, X, y, gamma = stream
    k = len(np.unique(y))
    est, plain = assert_shared_matches(KernelOGDClassifier(gamma=gamma, **SHARED, **params),
                                       PlainSharedKernelOGD(rbf(gamma), k, **params), X, y)
    assert isinstance(est._learners[0], SharedKernelOGDLearner)
    if params.get("budget") is not None:
        assert est.n_support_[0] == min(params["budget"], plain.n_updates)


@pytest.mark.parametrize("params", [dict(budget=7, alpha=0.02), dict(eta0=0.7)], ids=repr)
def test_shared_kernel_ogd_csr_matches_plain(params):
    _, X, y, gamma = STREAMS[1]
    X = np.where(np.abs(X) < 0.3, 0.0, X)
    assert_shared_matches(KernelOGDClassifier(gamma=gamma, **SHARED, **params),
                          PlainSharedKernelOGD(rbf(gamma), 5, **params), sp.csr_matrix(X), y)


def test_shared_kernel_ogd_other_kernel_matches_plain():
    # the laplacian kernel runs in block mode (kernel blocks from Python)
    _, X, y, _ = STREAMS[0]
    kernel = lambda A, B: np.exp(-0.3 * np.abs(A[:, None] - B[None]).sum(-1))  # noqa: E731
    assert_shared_matches(KernelOGDClassifier(kernel="laplacian", gamma=0.3, budget=9,
                                              alpha=0.01, **SHARED),
                          PlainSharedKernelOGD(kernel, 4, budget=9, alpha=0.01), X, y)


def test_shared_kernel_ogd_partial_fit_matches_plain():
    _, X, y, gamma = STREAMS[0]
    assert_shared_matches(KernelOGDClassifier(budget=10, alpha=0.01, gamma=gamma,
                                              multi_class="crammer_singer"),
                          PlainSharedKernelOGD(rbf(gamma), 4, budget=10, alpha=0.01), X, y,
                          stream=True)


def test_shared_kernel_ogd_rows_and_margins_by_hand():
    # linear kernel, integer features, eta = 1: exact scores f = (f_0, f_1, f_2)
    # round 1, x = 1, class 2: f = 0, runner-up 0, m = 0: the row (-1, 0, 1)
    # round 2, x = 2, class 0: f = (-2, 0, 2), runner-up 2, m = -4: (1, 0, -1)
    # round 3, x = 1, class 1: f = (1, 0, -1), runner-up 0, m = -1: (-1, 1, 0)
    # round 4, x = 3, class 1: f = (0, 3, -3), m = 3 >= 1: no update
    X = np.array([[1.0], [2.0], [1.0], [3.0]])
    y = np.array([2, 0, 1, 1])
    est = keeping_flags(KernelOGDClassifier(eta0=1.0, kernel="linear", **SHARED)).fit(X, y)
    assert_array_equal(mistake_flags(est), [1, 1, 1, 0])
    assert est.n_updates_ == 3
    assert_array_equal(est.dual_coef_, [[-1, 1, -1], [0, 0, 1], [1, -1, 0]])


def test_shared_kernel_ogd_tie_the_true_class_wins_is_no_mistake():
    # the empty model scores 0 for every class: class 0 wins the tie
    # (argmax's lowest index), so its first round is no mistake but updates
    X = np.array([[1.0], [1.0]])
    est = keeping_flags(KernelOGDClassifier(eta0=1.0, kernel="linear", **SHARED))
    est.partial_fit(X[:1], [0], classes=[0, 1, 2])
    assert_array_equal(mistake_flags(est), [0])
    assert est.n_updates_ == 1
    assert_array_equal(est.dual_coef_, [[1.0], [-1.0], [0.0]])


def test_shared_kernel_ogd_decays_whole_rows_and_forgets_at_full_decay():
    _, X, y, gamma = STREAMS[0]
    # eta0 * alpha = 1: every row is zeroed each round; only the last
    # update's row is left
    est = KernelOGDClassifier(eta0=0.5, alpha=2.0, gamma=gamma, **SHARED).fit(X, y)
    nonzero = np.flatnonzero(np.abs(est.dual_coef_).sum(0))
    assert len(nonzero) <= 1
    if len(nonzero):
        assert sorted(est.dual_coef_[:, nonzero[0]].tolist()) == [-0.5, 0.0, 0.0, 0.5]
    # a long decay folds the scale into the rows (0.9^3000 < 1e-100)
    X1 = np.repeat(X[:1], 3000, axis=0)
    est = KernelOGDClassifier(eta0=1.0, alpha=0.1, gamma=gamma, **SHARED)
    est.partial_fit(X1, np.zeros(3000, dtype=int), classes=[0, 1, 2, 3])
    plain = PlainSharedKernelOGD(rbf(gamma), 4, eta0=1.0, alpha=0.1).partial_fit(X1, np.zeros(
        3000, dtype=int))
    assert est.n_updates_ == plain.n_updates
    assert_allclose(est.dual_coef_, plain.coef, rtol=1e-9, atol=1e-300)


# ---------------------------------------------------------------------------
# NOGD, shared mode
# ---------------------------------------------------------------------------
def _nogd_cases():
    for stream in STREAMS:
        for budget, k in [(1, None), (4, None), (4, 4), (12, 3), (25, None), (25, 25)]:
            if stream[0] == "duplicates3" and k != budget:
                continue        # equal eigenvalues: compared with every eigenpair kept
            yield pytest.param(stream, budget, k, id=f"{stream[0]}-B{budget}-k{k}")


def assert_shared_nogd_matches(est, plain, X, y, stream=False):
    """As :func:`assert_shared_matches`, to 1e-7 (the eigenvectors carry
    the rounding of two differently summed Gram matrices); ``W`` up to the
    sign of each eigenvector."""
    assert_shared_matches(est, plain, X, y, rtol=1e-7, atol=1e-7, stream=stream)
    assert_array_equal(est.in_feature_space_, [plain.M is not None])
    if plain.M is not None:
        kept = plain.M.shape[0]
        assert_array_equal(est.n_components_kept_, [kept])
        assert est.coef_.shape == (plain.k, kept)
        scale = 1.0 + np.abs(plain.W).max()
        assert_allclose(np.abs(est.coef_), np.abs(plain.W.T), rtol=1e-6, atol=1e-8 * scale)
    else:
        assert est.coef_.shape == (plain.k, 0)
    return est, plain


@pytest.mark.parametrize("stream, budget, k", list(_nogd_cases()))
def test_shared_nystrom_ogd_matches_plain(stream, budget, k):
    _, X, y, gamma = stream
    est, _ = assert_shared_nogd_matches(
        NystromOGDClassifier(budget=budget, n_components=k, gamma=gamma, **SHARED),
        PlainSharedNystromOGD(rbf(gamma), len(np.unique(y)), budget=budget, n_components=k),
        X, y)
    assert isinstance(est._learners[0], SharedNystromOGDLearner)


@pytest.mark.parametrize("stream", STREAMS[:2], ids=STREAM_IDS[:2])
def test_shared_nystrom_ogd_csr_and_partial_fit_match_plain(stream):
    _, X, y, gamma = stream
    k = len(np.unique(y))
    X = np.where(np.abs(X) < 0.3, 0.0, X)
    _, plain = assert_shared_nogd_matches(
        NystromOGDClassifier(budget=10, eta0=0.3, gamma=gamma, **SHARED),
        PlainSharedNystromOGD(rbf(gamma), k, budget=10, eta0=0.3), sp.csr_matrix(X), y)
    assert plain.M is not None
    assert_shared_nogd_matches(
        NystromOGDClassifier(budget=10, eta0=0.3, gamma=gamma, multi_class="crammer_singer"),
        PlainSharedNystromOGD(rbf(gamma), k, budget=10, eta0=0.3), X, y, stream=True)


def test_shared_nystrom_ogd_carries_every_class_over():
    # every eigenpair kept on distinct points: the switch leaves each
    # class's scores unchanged
    _, X, y, gamma = STREAMS[0]
    est = NystromOGDClassifier(budget=15, n_components=15, gamma=gamma, **SHARED)
    for stop in range(1, len(X)):
        est.partial_fit(X[stop - 1:stop], y[stop - 1:stop], classes=[0, 1, 2, 3])
        if est._learners[0].n_sv == 15:
            break
    learner = est._learners[0]
    before = est.decision_function(X)
    learner.start_stage_two()
    assert np.asarray(learner.W).shape == (15, 4)
    est._update_fitted_attributes()
    assert_allclose(est.decision_function(X), before, rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------------------
# both estimators
# ---------------------------------------------------------------------------
MODELS = [
    pytest.param(KernelOGDClassifier, dict(budget=12, alpha=0.01), id="ogd-budget"),
    pytest.param(KernelOGDClassifier, dict(alpha=0.01), id="ogd-unbounded"),
    pytest.param(NystromOGDClassifier, dict(budget=12, n_components=5), id="nogd"),
]


@pytest.mark.parametrize("Est, params", MODELS)
def test_partial_fit_chunks_are_one_epoch_and_resume_from_a_pickle(Est, params):
    _, X, y, gamma = STREAMS[1]
    fitted = Est(gamma=gamma, **SHARED, **params).fit(X, y)
    streamed = Est(gamma=gamma, multi_class="crammer_singer", **params)
    pieces = np.array_split(np.arange(len(y)), [1, 7, 50, 51, 150, 200])
    for i, piece in enumerate(pieces):
        chunk = sp.csr_matrix(X[piece]) if i % 2 else X[piece]
        streamed.partial_fit(chunk, y[piece], classes=np.arange(5))
        if i == 3:
            resumed = pickle.loads(pickle.dumps(streamed))
    for piece in pieces[4:]:
        resumed.partial_fit(X[piece], y[piece])
    for model in (streamed, resumed):
        assert_allclose(model.support_vectors_, fitted.support_vectors_, rtol=1e-12, atol=0)
        assert_allclose(model.dual_coef_, fitted.dual_coef_, rtol=1e-12, atol=1e-14)
        assert model.n_mistakes_ == fitted.n_mistakes_
        assert_array_equal(model.mistake_curve_, fitted.mistake_curve_)


@pytest.mark.parametrize("Est, params", MODELS[::2])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_budget_bounds_the_whole_model_after_every_round(Est, params, seed):
    # random labels of 6 classes, classes 4 and 5 only from round 60 on
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(150, 3))
    y = rng.randint(4, size=150)
    y[60:] = rng.randint(6, size=90)
    est = Est(gamma=0.5, multi_class="crammer_singer", **params)
    sizes = []
    for t in range(len(y)):
        est.partial_fit(X[t:t + 1], y[t:t + 1], classes=np.arange(6))
        sizes.append(int(est.n_support_.sum()))
    assert max(sizes) == params["budget"]
    assert est.support_vectors_.shape[0] <= params["budget"]
    # one shared learner: with 'ovr' the same budget stores several times more
    ovr = Est(gamma=0.5, multi_class="ovr", **params).fit(X, y)
    assert ovr.support_vectors_.shape[0] > 2 * params["budget"]


@pytest.mark.parametrize("Est, params", MODELS)
def test_two_classes_are_the_binary_model(Est, params):
    _, X, y, gamma = STREAMS[0]
    X, y = X[y < 2], y[y < 2]
    shared = Est(gamma=gamma, **SHARED, **params).fit(X, y)
    ovr = Est(gamma=gamma, shuffle=False, **params).fit(X, y)
    assert not shared._shared_support
    assert_array_equal(shared.dual_coef_, ovr.dual_coef_)


@pytest.mark.parametrize("Est, params", MODELS)
def test_ovr_is_one_learner_per_class(Est, params):
    _, X, y, gamma = STREAMS[0]
    ovr = Est(gamma=gamma, multi_class="ovr", **params).fit(X, y)
    assert len(ovr._learners) == 4 and not ovr._shared_support


@pytest.mark.parametrize("Est, params", MODELS)
@pytest.mark.parametrize("position", [0, 1, 3])
def test_a_class_added_later_keeps_the_old_predictions(Est, params, position):
    # a model of classes [0, 2, 3] (labels), then class 1 first seen: its
    # column of every per-class array is 0 (the rows, NOGD's W), the scores
    # of the old classes do not move, and training goes on within the budget
    _, X, y, gamma = STREAMS[0]
    old = np.setdiff1d(np.arange(4), [position])
    seen = np.isin(y, old)
    first = 100 if Est is KernelOGDClassifier else 200     # NOGD: in stage 2
    est = Est(gamma=gamma, **SHARED, **params).fit(X[seen][:first], y[seen][:first])
    assert_array_equal(est.classes_, old)
    before = est.decision_function(X)
    learner = est._learners[0]
    learner.add_class(position)
    est.classes_ = np.arange(4)
    est._update_fitted_attributes()
    after = est.decision_function(X)
    assert_allclose(np.delete(after, position, axis=1), before, rtol=1e-12, atol=1e-14)
    assert_array_equal(after[:, position], 0.0)
    est.partial_fit(X, y)
    budget = params.get("budget")
    assert budget is None or est.n_support_[0] <= budget
    assert np.abs(est.dual_coef_[position]).max() > 0      # the new class learned


@pytest.mark.parametrize("Est, params", MODELS)
def test_shared_state_is_checked_on_loading(Est, params):
    _, X, y, gamma = STREAMS[0]
    est = Est(gamma=gamma, **SHARED, **params).fit(X, y)
    learner = est._learners[0]
    good = learner.get_state()
    corruptions = [dict(new_row=np.zeros(3)), dict(eta=-1.0), dict(eta=np.inf)]
    if "budget" in params:
        corruptions.append(dict(budget=learner.n_sv - 1))
    if Est is NystromOGDClassifier:
        corruptions += [dict(W=np.zeros((good["W"].shape[0], 3))),
                        dict(W=np.full(good["W"].shape, np.nan)),
                        dict(M=np.zeros((good["M"].shape[0] + 1, good["M"].shape[1]))),
                        dict(lam=0.5)]
    else:
        corruptions.append(dict(lam=3.0))
    for change in corruptions:
        learner.set_state({**good, **change})
        with pytest.raises(ValueError, match="inconsistent|not"):
            learner.check_state(-1 if learner.uses_store else est._driver.pools[0].shape[0])
    learner.set_state(good)
    learner.check_state(-1 if learner.uses_store else est._driver.pools[0].shape[0])


@pytest.mark.parametrize("Est, params", MODELS)
def test_shared_model_saved_by_skops_continues_the_stream(Est, params):
    # NOGD is saved in stage 1 and continues into stage 2 on both sides
    _, X, y, gamma = STREAMS[1]
    est = Est(gamma=gamma, multi_class="crammer_singer", **params)
    est.partial_fit(X[:8], y[:8], classes=np.arange(5))
    loaded = _loaded(est)
    _assert_identical(loaded, est)
    for model in (est, loaded):
        model.partial_fit(X[8:], y[8:])
    _assert_identical(loaded, est)
    assert_array_equal(loaded.predict(X), est.predict(X))


@pytest.mark.parametrize("Est, params", MODELS)
def test_shared_model_exports_to_onnx(Est, params):
    _, X, y, gamma = STREAMS[1]
    est = Est(gamma=gamma, multi_class="crammer_singer", **params).fit(X, y)
    _check(est, X)


@pytest.mark.parametrize("Est, params", MODELS)
@pytest.mark.parametrize("error", [KeyboardInterrupt(), None], ids=["interrupt", "nan"])
def test_failed_shared_call_changes_nothing(Est, params, error):
    # the kernel fails half-way through a call (NOGD: in stage 2): the call
    # raises, the model is as it was, and the stream continues as if the
    # call had not been made
    _, X, y, _ = STREAMS[1]
    kernel = FlakyKernel()
    est = Est(kernel=kernel, multi_class="crammer_singer", **params)
    est._chunk_size = 4
    est.partial_fit(X[:40], y[:40], classes=np.arange(5))
    state, clean = model_state(est), copy.deepcopy(est)
    probe = copy.deepcopy(est)
    kernel.calls = 0
    probe.partial_fit(X[40:80], y[40:80])
    kernel.arm(after_calls=kernel.calls // 2, error=error)
    with pytest.raises(type(error) if error is not None else ValueError):
        est.partial_fit(X[40:80], y[40:80])
    assert_same_state(model_state(est), state)
    est.partial_fit(X[80:], y[80:])
    clean.partial_fit(X[80:], y[80:])
    assert_same_state(model_state(est), model_state(clean))
