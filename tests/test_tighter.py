"""TighterPerceptron and TightestPerceptron against the plain implementations
of doc/algorithms.md#tighter-perceptron and doc/algorithms.md#tightest-perceptron."""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_blobs, make_moons
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.preprocessing import StandardScaler

from skbudget import TighterPerceptron, TightestPerceptron
from skbudget.datasets import make_checkerboard, make_noisy_gaussians
from tests.oracles import keeping_flags, mistake_flags
from tests.oracles.tighter import (PlainSharedTighterPerceptron, PlainSharedTightestPerceptron,
                                   PlainTighterPerceptron, PlainTightestPerceptron)


def _kernel(**kw):
    return lambda A, B: pairwise_kernels(A, B, **kw)


def _streams():
    X, y = make_checkerboard(400, noise=0.15, random_state=0)
    X = StandardScaler().fit_transform(X)
    yield "rbf-checkerboard", X, y, dict(kernel="rbf", gamma=1.0), _kernel(metric="rbf", gamma=1.0)
    X, y = make_moons(300, noise=0.3, random_state=1)
    y = 2 * y - 1
    yield "laplacian-moons", X, y, dict(kernel="laplacian", gamma=1.5), (
        _kernel(metric="laplacian", gamma=1.5))
    X, y = make_noisy_gaussians(300, random_state=2)
    yield "poly-gaussians", X, y, dict(kernel="poly", gamma=0.5, degree=2, coef0=1.0), (
        _kernel(metric="poly", gamma=0.5, degree=2, coef0=1.0))


STREAMS = list(_streams())
STREAM_IDS = [s[0] for s in STREAMS]


def _assert_same_run(est, plain, X):
    assert_array_equal(mistake_flags(est), plain.mistakes)
    assert est.n_updates_ == sum(plain.mistakes)
    assert_allclose(est.support_vectors_, X[plain.support_indices])
    assert_allclose(est.dual_coef_[0], plain.coef)
    Z = X[::4] + 0.03
    assert_allclose(est.decision_function(Z), plain.decision_function(Z), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("stream", STREAMS, ids=STREAM_IDS)
@pytest.mark.parametrize("budget", [3, 15, 30])
@pytest.mark.parametrize("validation", ["support", "full", "budget", 7])
def test_tighter_matches_plain_implementation(stream, budget, validation):
    _, X, y, kernel_kw, kernel = stream
    est = keeping_flags(TighterPerceptron(budget=budget, validation=validation, shuffle=False,
                                          random_state=3, **kernel_kw)).fit(X, y)
    plain = PlainTighterPerceptron(kernel, budget=budget, validation=validation,
                                   random_state=3).partial_fit(X, y)
    assert len(plain.removed) > 10    # the budget binds
    _assert_same_run(est, plain, X)
    learner = est._learners[0]
    if validation != "support":   # the validation set itself, and f tracked on it
        V = est._driver.stored_rows(0, learner.validation_slots())
        assert_allclose(V, np.array(plain.val_x))
        assert_allclose(learner.validation_scores(), plain.decision_function(V), atol=1e-9)


@pytest.mark.parametrize("stream", STREAMS, ids=STREAM_IDS)
@pytest.mark.parametrize("budget, prior", [(2, (1.0, 1.0)), (10, (1.0, 1.0)), (30, (1.0, 1.0)),
                                           (10, (0.5, 2.0))])
def test_tightest_matches_plain_implementation(stream, budget, prior):
    name, X, y, kernel_kw, kernel = stream
    est = keeping_flags(TightestPerceptron(budget=budget, prior=prior, shuffle=False,
                                           **kernel_kw)).fit(X, y)
    plain = PlainTightestPerceptron(kernel, budget=budget, prior=prior,
                                    nearest_by_kernel=name.startswith("rbf"))
    plain.partial_fit(X, y)
    assert len(plain.removed) > 10
    _assert_same_run(est, plain, X)
    c_pos, c_neg = est._learners[0].counts()
    assert_allclose(c_pos, plain.cpos, rtol=1e-10, atol=1e-12)
    assert_allclose(c_neg, plain.cneg, rtol=1e-10, atol=1e-12)
    assert_allclose(est._learners[0].weights(), plain.weights(), rtol=1e-10, atol=1e-12)


def test_tightest_uses_distances_for_other_kernels():
    # with a polynomial kernel the largest kernel value is not the nearest
    # point: the estimator asks the engine for squared distances
    assert TightestPerceptron(kernel="poly")._needs_distances()
    assert TightestPerceptron(kernel=lambda a, b: a @ b)._needs_distances()
    assert TightestPerceptron(kernel="laplacian")._needs_distances()   # L1, not Euclidean
    assert not TightestPerceptron(kernel="rbf")._needs_distances()
    X, y = make_noisy_gaussians(300, random_state=2)
    kernel = _kernel(metric="poly", gamma=0.5, degree=2, coef0=1.0)
    est = TightestPerceptron(budget=10, kernel="poly", gamma=0.5, degree=2, coef0=1.0,
                             shuffle=False).fit(X, y)
    by_kernel = PlainTightestPerceptron(kernel, budget=10, nearest_by_kernel=True).partial_fit(X, y)
    c_pos, _ = est._learners[0].counts()
    assert not np.allclose(c_pos, by_kernel.cpos)   # the two rules do differ here


def test_multi_epoch_full_validation_counts_each_example_once():
    X, y = make_checkerboard(150, noise=0.15, random_state=4)
    X = StandardScaler().fit_transform(X)
    kernel = _kernel(metric="rbf", gamma=3.0)
    est = keeping_flags(TighterPerceptron(budget=10, validation="full", gamma=3.0,
                                          max_iter=3, shuffle=False)).fit(X, y)
    plain = PlainTighterPerceptron(kernel, budget=10, validation="full")
    ids = np.arange(len(y))
    for _ in range(3):
        plain.partial_fit(X, y, ids=ids)
    assert len(plain.val_x) == len(y)
    assert_array_equal(mistake_flags(est), plain.mistakes)
    assert_allclose(est.dual_coef_[0], plain.coef)
    assert len(est._learners[0].validation_slots()) == len(y)


def test_empty_reservoir_removes_the_oldest():
    # every round is a mistake (alternating labels on one point), so the
    # reservoir stays empty and the oldest support vector always goes
    X = np.zeros((12, 2))
    y = np.array([1, -1] * 6)
    est = TighterPerceptron(budget=3, validation=5, kernel="linear", shuffle=False).fit(X, y)
    assert est.n_mistakes_ == 12
    assert_allclose(est.dual_coef_[0], [-1, 1, -1])


def test_tighter_reservoir_is_a_uniform_sample():
    # Algorithm R: each of the n correct rounds ends in the reservoir with
    # probability A / n
    X, y = make_moons(600, noise=0.05, random_state=0)
    hits = np.zeros(len(y))
    correct = None
    for seed in range(40):
        est = keeping_flags(TighterPerceptron(budget=30, validation=20, gamma=2.0,
                                              shuffle=False, random_state=seed)).fit(X, y)
        flags = mistake_flags(est)
        correct = np.flatnonzero(flags == 0) if correct is None else correct
        learner = est._learners[0]
        kept = est._driver.stored_rows(0, learner.validation_slots())
        hits[[int(np.flatnonzero((X == row).all(axis=1))[0]) for row in kept]] += 1
    # the stream is the same for every seed (shuffle=False, no draws before
    # the reservoir is full), so the correct rounds are the same
    expected = 40 * 20 / len(correct)
    late = correct[len(correct) // 2:]
    assert abs(hits[late].mean() - expected) < 0.35 * expected


@pytest.mark.parametrize("params, message", [
    (dict(validation="half"), "validation"),
    (dict(validation=0), "validation"),
    (dict(budget=0), "budget"),
])
def test_tighter_bad_parameters(params, message):
    X, y = make_moons(40, random_state=0)
    with pytest.raises(ValueError, match=message):
        TighterPerceptron(**params).fit(X, y)


@pytest.mark.parametrize("prior", [(1.0,), (1.0, 0.0), (1.0, -2.0), "flat", (1.0, 2.0, 3.0)])
def test_tightest_bad_prior(prior):
    X, y = make_moons(40, random_state=0)
    with pytest.raises(ValueError, match="prior"):
        TightestPerceptron(prior=prior).fit(X, y)


def test_tightest_beats_stoptron_like_baselines_on_noisy_checkerboard():
    X, y = make_checkerboard(4000, noise=0.15, random_state=0)
    X_test, y_test = make_checkerboard(2000, random_state=1)
    scaler = StandardScaler().fit(X)
    X, X_test = scaler.transform(X), scaler.transform(X_test)
    tightest = TightestPerceptron(budget=100, gamma=5.0, random_state=0).fit(X, y)
    tighter0 = TighterPerceptron(budget=100, validation="support", gamma=5.0,
                                 random_state=0).fit(X, y)
    assert tightest.score(X_test, y_test) > tighter0.score(X_test, y_test) + 0.05


@pytest.mark.parametrize("Est, params", [(TighterPerceptron, dict(validation="support")),
                                         (TighterPerceptron, dict(validation="full"))])
def test_one_vs_rest_learners_without_draws_are_the_binary_learners(Est, params):
    # (the reservoir draws from each learner's own generator, so
    # test_common skips TighterPerceptron; its draw-free modes are checked here)
    X, y = make_moons(150, noise=0.3, random_state=0)
    y = y + (X[:, 0] > 1.2)          # three classes
    multi = Est(budget=6, gamma=1.0, shuffle=False, **params).fit(X, y)
    offsets = np.concatenate([[0], np.cumsum(multi.n_support_)])
    for k, label in enumerate(multi.classes_):
        binary = Est(budget=6, gamma=1.0, shuffle=False, **params).fit(X, (y == label).astype(int))
        assert_allclose(multi.support_vectors_[offsets[k]:offsets[k + 1]], binary.support_vectors_)


@pytest.mark.slow
def test_tightest_reaches_the_papers_ncheckerboard_accuracy():
    # wang-vucetic Table 2: Tightest 87.6 +- 1.3 at B = 100 (10 000 / 5 000,
    # 15% training noise, delta^2 = 0.1); benchmarks/bench_tighter.py runs all
    accuracies = []
    for rep in range(3):
        X, y = make_checkerboard(10000, noise=0.15, random_state=1000 + rep)
        X_test, y_test = make_checkerboard(5000, random_state=2000 + rep)
        scaler = StandardScaler().fit(X)
        est = TightestPerceptron(budget=100, gamma=5.0, random_state=rep)
        est.fit(scaler.transform(X), y)
        accuracies.append(100 * est.score(scaler.transform(X_test), y_test))
    assert np.mean(accuracies) > 87.6 - 2


# ---------------------------------------------------------------------------
# The shared multi-class mode (doc/algorithms.md#tighter-shared)
# ---------------------------------------------------------------------------
def _shared_streams():
    X, y = make_blobs(300, centers=4, cluster_std=2.5, random_state=0)
    X = StandardScaler().fit_transform(X)
    yield "rbf-4", X, y, dict(kernel="rbf", gamma=1.0), _kernel(metric="rbf", gamma=1.0)
    X, y = make_blobs(250, centers=3, n_features=3, cluster_std=3.0, random_state=1)
    X = StandardScaler().fit_transform(X)
    yield "laplacian-3", X, y, dict(kernel="laplacian", gamma=0.8), (
        _kernel(metric="laplacian", gamma=0.8))
    X, y = make_blobs(250, centers=5, cluster_std=2.0, random_state=2)
    X = StandardScaler().fit_transform(X)
    yield "poly-5", X, y, dict(kernel="poly", gamma=0.5, degree=2, coef0=1.0), (
        _kernel(metric="poly", gamma=0.5, degree=2, coef0=1.0))
    # small integers and a linear kernel: exact ties between class scores,
    # broken by the lowest index everywhere (and Tightest's counts go
    # negative: weights outside the Beta function's domain count 0)
    rng = np.random.RandomState(3)
    X = rng.randint(-1, 2, size=(200, 3)).astype(float)
    y = (X[:, 0] + 2 * (X[:, 1] > 0) + rng.randint(0, 2, 200)) % 4
    yield "linear-ties-4", X, y, dict(kernel="linear"), _kernel(metric="linear")


SHARED = list(_shared_streams())
SHARED_IDS = [s[0] for s in SHARED]


def _assert_same_shared_run(est, plain, X, budget):
    assert_array_equal(mistake_flags(est), plain.mistakes)
    assert est.n_updates_ == plain.updates
    assert max(plain.sizes) <= budget                 # |S| <= B after every round
    assert_array_equal(est.n_support_, [len(plain.support_indices)])
    assert_allclose(est.support_vectors_, X[plain.support_indices])
    assert_allclose(est.dual_coef_, plain.dual_coef)
    Z = X[::4] + 0.03
    assert_allclose(est.decision_function(Z), plain.decision_function(Z), rtol=1e-9, atol=1e-9)


def _replay_shared(Est, Plain, stream, sparse, **params):
    """The estimator (shared mode, dense or CSR rows) and the plain rule on
    one stream, compared round by round; both returned."""
    name, X, y, kernel_kw, kernel = stream
    est = keeping_flags(Est(multi_class="crammer_singer", shuffle=False, **kernel_kw, **params))
    est.fit(sp.csr_matrix(X) if sparse else X, y)
    if Plain is PlainSharedTightestPerceptron:
        params["nearest_by_kernel"] = name.startswith("rbf")
    plain = Plain(kernel, n_classes=len(np.unique(y)), **params).partial_fit(X, y)
    assert len(plain.removed) > 10
    if sparse:
        est.support_vectors_ = est.support_vectors_.toarray()
    _assert_same_shared_run(est, plain, X, params["budget"])
    return est, plain


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("stream", SHARED, ids=SHARED_IDS)
@pytest.mark.parametrize("budget", [4, 15])
@pytest.mark.parametrize("validation", ["support", "full", "budget", 7])
def test_shared_tighter_matches_plain_implementation(stream, budget, validation, sparse):
    est, plain = _replay_shared(TighterPerceptron, PlainSharedTighterPerceptron, stream, sparse,
                                budget=budget, validation=validation, random_state=3)
    learner = est._learners[0]
    if validation != "support":   # the validation set, its labels and scores tracked on it
        slots, labels, scores = learner.validation_set()
        V = est._driver.stored_rows(0, slots)
        V = V.toarray() if sp.issparse(V) else V
        assert_allclose(V, np.array(plain.val_x))
        assert_array_equal(labels, plain.val_y)
        assert_allclose(scores, plain.validation_scores(), atol=1e-9)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("stream", SHARED, ids=SHARED_IDS)
@pytest.mark.parametrize("budget, prior", [(3, (1.0, 1.0)), (12, (1.0, 1.0)),
                                           (12, (0.5, 2.0))])
def test_shared_tightest_matches_plain_implementation(stream, budget, prior, sparse):
    est, plain = _replay_shared(TightestPerceptron, PlainSharedTightestPerceptron, stream, sparse,
                                budget=budget, prior=prior)
    learner = est._learners[0]
    assert_allclose(learner.class_counts(), np.array(plain.counts), rtol=1e-10, atol=1e-12)
    assert_allclose(learner.class_weights(), plain.weights(), rtol=1e-10, atol=1e-12)


def test_shared_tightest_counts_differ_from_the_support_labels():
    # the soft counts drive the removal: with them replaced by each vector's
    # own label (Tighter^0's validation, weights by the labels) the runs part
    _, X, y, kernel_kw, kernel = SHARED[0]
    est = keeping_flags(TightestPerceptron(budget=12, multi_class="crammer_singer",
                                           shuffle=False, **kernel_kw)).fit(X, y)
    plain = PlainSharedTightestPerceptron(kernel, budget=12, n_classes=4)
    plain._on_correct = lambda *args: None           # counts never move
    plain.partial_fit(X, y)
    assert not np.array_equal(mistake_flags(est), plain.mistakes)


@pytest.mark.parametrize("Est, params", [(TighterPerceptron, dict(validation="budget")),
                                         (TighterPerceptron, dict(validation="full")),
                                         (TighterPerceptron, dict(validation="support")),
                                         (TightestPerceptron, dict()),
                                         (TightestPerceptron, dict(kernel="laplacian"))])
def test_shared_partial_fit_chunks_equal_one_fit(Est, params):
    _, X, y, _, _ = SHARED[0]
    kw = dict(budget=10, gamma=1.0, multi_class="crammer_singer", shuffle=False,
              random_state=0, **params)
    whole = Est(**kw).fit(X, y)
    chunks = Est(**kw)
    for start in range(0, len(y), 37):
        chunks.partial_fit(X[start:start + 37], y[start:start + 37], classes=np.unique(y))
        assert chunks.n_support_.sum() <= 10
    assert_allclose(chunks.support_vectors_, whole.support_vectors_)
    assert_allclose(chunks.dual_coef_, whole.dual_coef_)
    assert chunks.n_mistakes_ == whole.n_mistakes_


@pytest.mark.parametrize("Est, params", [(TighterPerceptron, dict(validation=5)),
                                         (TighterPerceptron, dict(validation="full")),
                                         (TightestPerceptron, dict())])
@pytest.mark.parametrize("seed", range(3))
def test_shared_budget_bounds_the_whole_model_every_round(Est, params, seed):
    # random label streams over 6 classes, two of which first appear late;
    # one round per call, so the support size is read after every round
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(90, 2))
    y = rng.randint(0, 4, size=90)
    y[60:] = rng.randint(0, 6, size=30)
    est = Est(budget=6, gamma=2.0, multi_class="crammer_singer", random_state=seed, **params)
    for i in range(len(y)):
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=np.arange(6))
        assert est.n_support_.sum() <= 6
        assert est.dual_coef_.shape == (6, est.n_support_.sum())
    assert est.n_updates_ > 20


@pytest.mark.parametrize("Est, params", [(TighterPerceptron, dict(validation="full")),
                                         (TighterPerceptron, dict(validation="support")),
                                         (TightestPerceptron, dict())])
@pytest.mark.parametrize("position", [0, 1, 3])
def test_shared_add_class_keeps_the_model_and_trains_on(Est, params, position):
    # a class first seen later gets a zero column at its place in the
    # sorted classes (doc/algorithms.md#tighter-shared); the rows, the
    # validation scores and the counts stay those of the old classes, and
    # training goes on as the plain rule on the grown model would
    _, X, y, kernel_kw, kernel = SHARED[0]
    old = np.array([c for c in range(4) if c != position])
    keep = np.isin(y, old)
    X_old, y_old = X[keep][:150], y[keep][:150]
    est = keeping_flags(Est(budget=10, multi_class="crammer_singer", shuffle=False,
                            **kernel_kw, **params)).fit(X_old, y_old)
    learner = est._learners[0]
    before = est.decision_function(X[::5])
    learner.add_class(position)          # (what the base does for a new class)
    est.classes_ = np.arange(4)
    est._update_fitted_attributes()
    after = est.decision_function(X[::5])
    assert_array_equal(after[:, position], 0.0)
    assert_allclose(np.delete(after, position, axis=1), before)
    assert_array_equal(np.argmax(np.delete(after, position, axis=1), axis=1),
                       np.argmax(before, axis=1))
    est.partial_fit(X[150:], y[150:])
    assert est.n_support_.sum() <= 10
    # the plain rule, given the old stream in old indices, grown the same way
    Plain = PlainSharedTighterPerceptron if Est is TighterPerceptron else (
        PlainSharedTightestPerceptron)
    plain = Plain(kernel, budget=10, n_classes=3, **params)
    plain.partial_fit(X_old, np.searchsorted(old, y_old))
    plain.k = 4
    plain.rows = [np.insert(row, position, 0.0) for row in plain.rows]
    plain.sv_label = [c + (c >= position) for c in plain.sv_label]
    if Est is TighterPerceptron:
        plain.val_y = [c + (c >= position) for c in plain.val_y]
    else:
        plain.counts = [np.insert(c, position, 0.0) for c in plain.counts]
    plain.partial_fit(X[150:], y[150:])
    assert_array_equal(mistake_flags(est), plain.mistakes)
    assert_allclose(est.dual_coef_, plain.dual_coef)


@pytest.mark.parametrize("Est", [TighterPerceptron, TightestPerceptron])
def test_shared_mode_on_two_classes_is_the_binary_rule(Est):
    X, y = make_moons(150, noise=0.3, random_state=0)
    shared = Est(budget=8, gamma=1.0, multi_class="crammer_singer", random_state=0).fit(X, y)
    binary = Est(budget=8, gamma=1.0, random_state=0).fit(X, y)
    assert_array_equal(shared.dual_coef_, binary.dual_coef_)


@pytest.mark.parametrize("Est, field, value, message", [
    (TighterPerceptron, "rival", 7, "rival"),
    (TighterPerceptron, "vlabel", 9, "validation label"),
    (TighterPerceptron, "vslot", 10 ** 6, "slot"),
    (TighterPerceptron, "tau", 0.5, "outside its class"),
    (TighterPerceptron, "scale", 2.0, "scale"),
    (TighterPerceptron, "track_scores", True, "support_scores"),
    (TightestPerceptron, "counts", None, "counts"),
    (TightestPerceptron, "track_scores", False, "track_scores"),
    (TightestPerceptron, "prior_pos", -1.0, "prior"),
])
def test_shared_corrupt_state_is_refused(Est, field, value, message):
    _, X, y, kernel_kw, _ = SHARED[0]
    est = Est(budget=8, multi_class="crammer_singer", random_state=0, **kernel_kw)
    est.partial_fit(X[:150], y[:150], classes=np.unique(y))
    learner = est._learners[0]
    state = learner.get_state()
    cells = np.asarray(state["order"])[:state["n_sv"]]
    if field == "rival":
        state[field][cells[0]] = value
    elif field in ("vlabel", "vslot"):
        state[field][0] = value
    elif field == "tau":
        row = state[field][cells[0]]
        row[[c for c in range(4) if row[c] == 0.0][0]] = value
    elif field == "counts":
        state[field] = state[field][:, :2].copy()
    else:
        state[field] = value
    learner.set_state(state)
    with pytest.raises(ValueError, match=f"inconsistent state.*{message}"):
        est.partial_fit(X[150:], y[150:])


def test_shared_corrupt_fields_never_crash():
    # every field of both shared learners' states, corrupted, in a child
    # process (a crash fails the test instead of killing pytest)
    script = textwrap.dedent("""
        import pickle
        import numpy as np
        from skbudget import TighterPerceptron, TightestPerceptron
        from tests.corrupt_states import corruptions
        rng = np.random.RandomState(0)
        X = rng.normal(size=(200, 3)); y = np.argmax(X, axis=1)
        for est in (TighterPerceptron(budget=6, gamma=1.0, validation=4,
                                      multi_class="crammer_singer", random_state=0),
                    TighterPerceptron(budget=6, gamma=1.0, validation="full",
                                      multi_class="crammer_singer"),
                    TighterPerceptron(budget=6, gamma=1.0, validation="support",
                                      multi_class="crammer_singer"),
                    TightestPerceptron(budget=6, gamma=1.0, multi_class="crammer_singer"),
                    TightestPerceptron(budget=6, kernel="laplacian",
                                       multi_class="crammer_singer")):
            blob = pickle.dumps(est.partial_fit(X[:120], y[:120], classes=[0, 1, 2]))
            for field, value in est._learners[0].get_state().items():
                for bad in corruptions(value):
                    model = pickle.loads(blob)
                    state = model._learners[0].get_state()
                    state[field] = bad
                    try:
                        model._learners[0].set_state(state)
                    except Exception:
                        continue
                    for call in (lambda: model.partial_fit(X[120:], y[120:]),
                                 lambda: model.decision_function(X[:20])):
                        try:
                            call()
                        except Exception:
                            pass
        print("done")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=600, cwd=Path(__file__).parents[1])
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-1] == "done"


@pytest.mark.parametrize("Est, params", [(TighterPerceptron, dict(validation="budget")),
                                         (TighterPerceptron, dict(validation="full")),
                                         (TightestPerceptron, dict(kernel="laplacian"))])
def test_shared_skops_file_continues_the_stream(Est, params):
    sio = pytest.importorskip("skops.io")
    _, X, y, _, _ = SHARED[0]
    est = Est(budget=8, gamma=1.0, multi_class="crammer_singer", random_state=0, **params)
    est.partial_fit(X[:120], y[:120], classes=np.unique(y))
    data = sio.dumps(est)
    loaded = sio.loads(data, trusted=sio.get_untrusted_types(data=data))
    for model in (est, loaded):
        model.partial_fit(X[120:], y[120:])
    assert_array_equal(loaded.dual_coef_, est.dual_coef_)
    assert_array_equal(loaded.decision_function(X), est.decision_function(X))


# ---------------------------------------------------------------------------
# The shared removal's screened evaluation against every point's prediction
# ---------------------------------------------------------------------------
def _adversarial_table(rng, n_points, k, kind):
    """Class scores (n_points, k) with exact ties, equal rows, extreme and
    tiny values (no NaN, no overflow of a gap)."""
    if kind == "ties":          # small integers: ties everywhere
        return rng.randint(-2, 3, size=(n_points, k)).astype(float)
    if kind == "equal":         # every class the same score, or two tied on top
        S = np.repeat(rng.randint(-1, 2, size=(n_points, 1)).astype(float), k, axis=1)
        S[::3, rng.randint(k)] += 0.5
        return S
    if kind == "extreme":
        return rng.choice([-1e150, -1.0, -1e-300, 0.0, 1e-300, 1.0, 1e150], size=(n_points, k))
    return rng.normal(scale=0.3, size=(n_points, k))


def _exhaustive_losses(scores, labels, kernel, cand_labels, cand_rivals, cand_tau):
    """Minus the right predictions (argmax, ties to the lowest class) of the
    model without each candidate, every point predicted."""
    out = []
    for j in range(len(cand_labels)):
        a, b = cand_labels[j], cand_rivals[j]
        S = scores.copy()
        S[:, a] = scores[:, a] - cand_tau[j, a] * kernel[j]
        S[:, b] = scores[:, b] - cand_tau[j, b] * kernel[j]
        out.append(-float(np.sum(np.argmax(S, axis=1) == labels)))
    return np.array(out)


@pytest.mark.parametrize("k", [3, 26])
@pytest.mark.parametrize("kind", ["ties", "equal", "extreme", "normal"])
@pytest.mark.parametrize("validation", ["full", "support"])
@pytest.mark.parametrize("one_class", [False, True], ids=["classes", "one-class"])
def test_shared_removal_screen_matches_every_point(k, kind, validation, one_class):
    # a fitted shared Tighter's state overwritten with adversarial tables:
    # its losses (the screened evaluation) are those of predicting every
    # validation point without each candidate
    rng = np.random.RandomState(k + 7 * len(kind) + (validation == "full") + 2 * one_class)
    X, y = make_blobs(60 * k, centers=k, n_features=4, cluster_std=3.0, random_state=k)
    est = TighterPerceptron(budget=13, validation=validation, multi_class="crammer_singer",
                            shuffle=False, gamma=0.5).fit(X, y)
    lr = est._learners[0]
    cells = np.asarray(lr.order)[:lr.n_sv]
    labels, rivals = np.asarray(lr.label), np.asarray(lr.rival)
    tau = np.asarray(lr.tau)
    for c in cells:             # each row's two entries, extreme ones too
        if one_class:
            labels[c], rivals[c] = 0, rng.randint(1, k)
        tau[c] = 0.0
        tau[c, labels[c]] = rng.choice([1.0, 0.5, 1e-300, 3.0])
        tau[c, rivals[c]] = -rng.choice([1.0, 0.5, 2.0, 1e-300])
    if validation == "support":
        points, n = cells, lr.n_sv
        scores, kernel = np.asarray(lr.support_scores), np.asarray(lr.gram)
        point_labels = labels
    else:
        n = lr.n_val
        points = np.arange(n)
        scores, kernel = np.asarray(lr.vf), np.asarray(lr.kv)
        point_labels = np.asarray(lr.vlabel)
    scores[points] = _adversarial_table(rng, n, k, kind)
    # kernel values that reach each gap exactly, zero, negative, tiny
    K = rng.choice([0.0, 0.5, 1.0, -1.0, 1e-300, 2.0, 0.25], size=(len(cells), n))
    kernel[np.ix_(cells, points)] = K
    losses = lr.removal_losses()
    expected = _exhaustive_losses(scores[points], point_labels[points], K, labels[cells],
                                  rivals[cells], tau[cells])
    assert_array_equal(losses, expected)
    assert np.argmin(losses) == np.argmin(expected)     # (the first of the least)
