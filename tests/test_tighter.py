"""TighterPerceptron and TightestPerceptron against the plain implementations
of doc/algorithms.md#tighter-perceptron and doc/algorithms.md#tightest-perceptron."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_moons
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.preprocessing import StandardScaler

from skbudget import TighterPerceptron, TightestPerceptron
from skbudget.datasets import make_checkerboard, make_noisy_gaussians
from tests.oracles import keeping_flags, mistake_flags
from tests.oracles.tighter import PlainTighterPerceptron, PlainTightestPerceptron


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
