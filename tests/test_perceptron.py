"""KernelPerceptron against the plain implementation of doc/algorithms.md#kernel-perceptron."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_moons
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.model_selection import GridSearchCV, cross_val_score

from skbudget import KernelPerceptron, SequentialSearchCV
from skbudget.datasets import make_khardon_wachman
from tests.oracles import keeping_flags, mistake_flags
from tests.oracles.perceptron import PlainKernelPerceptron

HYPOTHESES = ["last", "voted", "longest_survivor", "averaged"]

VARIANTS = [
    dict(),                                                       # classic
    dict(eta0=0.1, theta_init="kappa", threshold_step="kappa"),   # paper base
    dict(eta0=0.1, theta_init="kappa", threshold_step="kappa", tau=0.5),
    dict(eta0=0.1, theta_init="kappa", threshold_step="kappa", lam=1.0),
    dict(eta0=0.1, theta_init="kappa", threshold_step="kappa", alpha_bound=2),
    dict(eta0=0.5, theta_init=0.3, threshold_step=0.2, tau=0.25, lam=0.5, alpha_bound=3),
]


def _streams():
    X, y = make_khardon_wachman(80, n_features=8, noise=0.15, random_state=3)
    yield "linear-kw", X, y, dict(kernel="linear"), lambda A, B: A @ B.T
    X, y = make_moons(70, noise=0.35, random_state=1)
    y = 2 * y - 1
    yield "rbf-moons", X, y, dict(kernel="rbf", gamma=2.0), (
        lambda A, B: pairwise_kernels(A, B, metric="rbf", gamma=2.0))
    yield "poly-moons", X, y, dict(kernel="poly", gamma=0.7, degree=2, coef0=1.0), (
        lambda A, B: pairwise_kernels(A, B, metric="poly", gamma=0.7, degree=2, coef0=1.0))


STREAMS = list(_streams())


@pytest.mark.parametrize("stream", STREAMS, ids=[s[0] for s in STREAMS])
@pytest.mark.parametrize("variant", VARIANTS, ids=range(len(VARIANTS)))
@pytest.mark.parametrize("hypothesis", HYPOTHESES)
def test_matches_plain_implementation(stream, variant, hypothesis):
    _, X, y, kernel_kw, kernel = stream
    epochs = 3
    est = keeping_flags(KernelPerceptron(**kernel_kw, **variant, hypothesis=hypothesis,
                                         max_iter=epochs, shuffle=False)).fit(X, y)
    plain = PlainKernelPerceptron(kernel, **variant)
    for _ in range(epochs):
        plain.partial_fit(X, y)

    assert_array_equal(mistake_flags(est), plain.mistakes)
    assert est.n_mistakes_ == sum(plain.mistakes)
    assert est.n_updates_ == plain.n_updates
    assert_allclose(est.kappa_, plain.kappa)
    assert_allclose(est.support_vectors_, X[plain.support_indices])
    coef, intercept = plain.coef(hypothesis)
    assert_allclose(est.dual_coef_[0], coef, rtol=1e-10, atol=1e-12)
    assert_allclose(est.intercept_[0], intercept, rtol=1e-10, atol=1e-12)
    Z = X[::3] + 0.05
    assert_allclose(est.decision_function(Z), plain.decision_function(Z, hypothesis),
                    rtol=1e-9, atol=1e-9)


def test_zero_score_is_a_mistake_and_updates():
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    est = KernelPerceptron(kernel="linear", shuffle=False, max_iter=1).fit(X, [1, -1])
    # the empty model scores 0 on the first example: a mistake and an update;
    # the second is orthogonal, scores 0 again: another mistake
    assert est.n_mistakes_ == 2
    assert est.n_updates_ == 2


def test_alpha_bound_blocks_updates_without_votes():
    X = np.array([[1.0], [1.0]])
    y = np.array([1, -1])   # contradictory: one is always wrong
    est = KernelPerceptron(kernel="linear", alpha_bound=2, shuffle=False, max_iter=20).fit(X, y)
    assert est.n_updates_ == 4   # two updates per example, then blocked


def test_voted_is_not_a_single_expansion_but_matches_definition():
    X, y = make_moons(60, noise=0.3, random_state=0)
    est = KernelPerceptron(hypothesis="voted", gamma=1.0, shuffle=False, max_iter=2).fit(X, y)
    learner = est._learners[0]
    plain = PlainKernelPerceptron(lambda A, B: pairwise_kernels(A, B, metric="rbf", gamma=1.0))
    plain.partial_fit(X, 2 * y - 1).partial_fit(X, 2 * y - 1)
    assert sum(plain.votes) == int(np.asarray(learner.get_state()["votes"]).sum())
    assert_array_equal(est.predict(X), np.where(plain.decision_function(X, "voted") > 0, 1, 0))


def test_kappa_is_mean_self_kernel_of_first_data():
    X = np.arange(12.0).reshape(6, 2)
    est = KernelPerceptron(kernel="linear", max_iter=1).fit(X, [0, 1] * 3)
    assert_allclose(est.kappa_, np.mean((X ** 2).sum(axis=1)))


def test_double_cross_validation_runs():
    X, y = make_khardon_wachman(120, n_features=10, noise=0.1, random_state=0)
    base = KernelPerceptron(kernel="linear", eta0=0.1, theta_init="kappa",
                            threshold_step="kappa", max_iter=5, random_state=0)
    inner = GridSearchCV(base, {"tau": [0, 0.5, 1], "alpha_bound": [None, 5]}, cv=3)
    scores = cross_val_score(inner, X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.5)


def test_sequential_search_fixes_first_stage():
    X, y = make_khardon_wachman(120, n_features=10, noise=0.1, random_state=1)
    base = KernelPerceptron(kernel="linear", max_iter=5, random_state=0)
    search = SequentialSearchCV(base, [{"tau": [0, 1]}, {"lam": [0, 1]}], cv=3).fit(X, y)
    assert set(search.best_params_) == {"tau", "lam"}
    assert len(search.stage_results_) == 2
    # the second stage ran with the first stage's winner set
    stage2 = search.stage_results_[1]["params"]
    assert all(set(p) == {"lam"} for p in stage2)
    assert search.best_estimator_.tau == search.best_params_["tau"]
    assert search.score(X, y) == search.best_estimator_.score(X, y)
