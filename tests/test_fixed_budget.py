"""The fixed-budget family against the plain implementations of
doc/algorithms.md#fixed-budget-family (tests/oracles/fixed_budget.py)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_moons

from skbudget import (
    BudgetPerceptron,
    Forgetron,
    KernelPassiveAggressive,
    RandomBudgetPerceptron,
    Stoptron,
)
from skbudget._budget_fast import _forgetron_phi
from skbudget.datasets import make_khardon_wachman, make_noisy_gaussians
from tests.oracles import keeping_flags, mistake_flags
from tests.oracles.fixed_budget import (
    PlainBudgetPerceptron,
    PlainForgetron,
    PlainKernelPassiveAggressive,
    PlainRandomBudgetPerceptron,
    PlainStoptron,
)


def _kernel(metric, gamma=None, degree=3, coef0=1.0):
    """k(A, B) in plain NumPy, the operations of sklearn.metrics.pairwise
    in the same order (pairwise_kernels itself costs milliseconds a call)."""
    def linear(A, B):
        return A @ B.T

    def poly(A, B):
        return (gamma * (A @ B.T) + coef0) ** degree

    def rbf(A, B):
        D = -2 * (A @ B.T)
        D += np.einsum("ij,ij->i", A, A)[:, None]
        D += np.einsum("ij,ij->i", B, B)[None, :]
        np.maximum(D, 0, out=D)
        return np.exp(-gamma * D)

    return {"linear": linear, "poly": poly, "rbf": rbf}[metric]


def _streams():
    X, y = make_moons(160, noise=0.3, random_state=1)
    yield "rbf-moons", X, 2 * y - 1, dict(kernel="rbf", gamma=2.0), _kernel(metric="rbf", gamma=2.0)
    X, y = make_noisy_gaussians(200, random_state=2)
    yield "rbf-gauss", X, y, dict(kernel="rbf", gamma=1.0), _kernel(metric="rbf", gamma=1.0)
    # integer features: every linear-kernel value and perceptron score is an
    # exact integer, so the thresholds (0, beta) are compared without rounding
    X, y = make_khardon_wachman(120, n_features=6, noise=0.15, random_state=3)
    yield "linear-kw", X, y, dict(kernel="linear"), _kernel(metric="linear")
    poly = dict(gamma=0.05, degree=3, coef0=1.0)
    yield "poly-kw", X, y, dict(kernel="poly", **poly), _kernel(metric="poly", **poly)
    # 12 distinct points seen over and over with noisy labels: duplicate
    # support vectors, exactly tied leave-one-out margins
    rng = np.random.RandomState(4)
    points = rng.normal(size=(12, 2))
    pick = rng.randint(12, size=150)
    labels = np.where(points[pick, 0] > 0, 1, -1) * np.where(rng.uniform(size=150) < 0.2, -1, 1)
    yield "rbf-duplicates", points[pick], labels, dict(kernel="rbf", gamma=0.5), (
        _kernel(metric="rbf", gamma=0.5))
    # points 50 apart: every kernel value between distinct points is exactly 0,
    # so every new point scores exactly 0 (a mistake)
    far = rng.randint(6, size=(90, 1)) * 50.0
    yield "rbf-zero-scores", far, np.where(rng.uniform(size=90) < 0.5, 1, -1), (
        dict(kernel="rbf", gamma=1.0)), _kernel(metric="rbf", gamma=1.0)


STREAMS = list(_streams())
STREAM_IDS = [s[0] for s in STREAMS]


def assert_matches(est, plain, X, y, stream=False, rtol=1e-9, atol=1e-12, sample_weight=None):
    """Same mistakes, support set, coefficients and decision function
    (``fit``, or with ``stream`` one ``partial_fit`` call).  Chunks of 37
    examples: the streams cross several kernel blocks.  ``rtol`` and
    ``atol``: how close the coefficients (and, at least 1e-9, the scores);
    ``sample_weight``: given to both (the oracles of weighted rules)."""
    est._chunk_size = 37
    keeping_flags(est)
    weights = {} if sample_weight is None else {"sample_weight": sample_weight}
    if stream:
        est.partial_fit(X, y, classes=[-1, 1], **weights)
    else:
        est.fit(X, y, **weights)
    plain.partial_fit(X, y, **weights)
    assert_array_equal(mistake_flags(est), plain.mistakes)
    assert est.n_updates_ == plain.n_updates
    assert_array_equal(est.support_vectors_, X[plain.support_])
    assert_allclose(est.dual_coef_[0], plain.coef_, rtol=rtol, atol=atol)
    assert_array_equal(est.intercept_, [0.0])
    Z = np.vstack([X[::7], X[::5] + 0.05])
    assert_allclose(est.decision_function(Z), plain.decision_function(Z), rtol=max(rtol, 1e-9),
                    atol=max(atol, 1e-9))
    return est, plain


def test_the_streams_hit_the_degenerate_cases():
    by_name = {s[0]: s for s in STREAMS}
    _, X, y, kw, kernel = by_name["rbf-zero-scores"]
    plain = PlainStoptron(kernel, budget=5).partial_fit(X, y)
    assert sum(1 for s, m in zip(plain.scores[1:], plain.mistakes[1:]) if s == 0 and m) >= 4
    _, X, y, kw, kernel = by_name["rbf-duplicates"]
    plain = PlainKernelPassiveAggressive(kernel).partial_fit(X, y)
    assert len(np.unique(plain.support_vectors, axis=0)) < len(plain.support_)


# ---------------------------------------------------------------------------
# oracle comparisons
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("stream", STREAMS, ids=STREAM_IDS)
@pytest.mark.parametrize("budget", [1, 4, 25])
def test_stoptron_matches_plain(stream, budget):
    _, X, y, kw, kernel = stream
    est, plain = assert_matches(Stoptron(budget=budget, shuffle=False, **kw),
                                PlainStoptron(kernel, budget=budget), X, y)
    assert est.n_support_[0] == min(budget, est.n_updates_)


@pytest.mark.parametrize("stream", STREAMS, ids=STREAM_IDS)
@pytest.mark.parametrize("budget, seed", [(1, 0), (4, 1), (25, 2)])
def test_random_budget_perceptron_matches_plain(stream, budget, seed):
    _, X, y, kw, kernel = stream
    assert_matches(RandomBudgetPerceptron(budget=budget, random_state=seed, shuffle=False, **kw),
                   PlainRandomBudgetPerceptron(kernel, budget=budget, random_state=seed), X, y)


@pytest.mark.parametrize("stream", STREAMS, ids=STREAM_IDS)
@pytest.mark.parametrize("budget, beta", [(1, 0.0), (4, 0.0), (10, 0.5), (25, 0.01),
                                          (None, 0.0), (None, 0.3)])
def test_budget_perceptron_matches_plain(stream, budget, beta):
    _, X, y, kw, kernel = stream
    est, plain = assert_matches(BudgetPerceptron(budget=budget, beta=beta, shuffle=False, **kw),
                                PlainBudgetPerceptron(kernel, budget=budget, beta=beta), X, y)
    # the incrementally kept margins are the margins, and the Gram matrix
    # kept by age (each pair in its newer vector's row) is the Gram matrix
    learner = est._learners[0]
    K = kernel(est.support_vectors_, est.support_vectors_)
    assert_allclose(learner.support_margins(), K @ est.dual_coef_[0], rtol=1e-9, atol=1e-9)
    assert_allclose(learner.gram_matrix(), K, rtol=1e-12, atol=1e-12)


def test_budget_perceptron_forgets_its_cached_margins_when_the_state_is_set():
    # a replacement leaves the new state's leave-one-out margins for the next
    # removal; a state set between two calls (a rollback, an edited state)
    # must not be met with the margins of the state it replaced
    X, y = make_moons(300, noise=0.3, random_state=5)
    est = BudgetPerceptron(budget=8, gamma=2.0).partial_fit(X[:100], y[:100], classes=[0, 1])
    learner = est._learners[0]
    earlier = learner.get_state()
    reference = BudgetPerceptron(budget=8, gamma=2.0).partial_fit(X[:100], y[:100],
                                                                  classes=[0, 1])
    est.partial_fit(X[100:200], y[100:200])     # its last update cached its margins
    learner.set_state(earlier)                  # back to where reference is
    for model in (est, reference):
        model.partial_fit(X[200:], y[200:])
    assert_array_equal(est.support_vectors_, reference.support_vectors_)
    assert_array_equal(est.dual_coef_, reference.dual_coef_)


def test_budget_perceptron_streams_hit_ties_distillation_and_older_removals():
    by_name = {s[0]: s for s in STREAMS}
    _, X, y, kw, kernel = by_name["rbf-duplicates"]
    assert PlainBudgetPerceptron(kernel, budget=4).partial_fit(X, y).n_ties > 0
    assert PlainBudgetPerceptron(kernel, budget=None).partial_fit(X, y).n_ties > 0
    _, X, y, kw, kernel = by_name["rbf-moons"]
    assert PlainBudgetPerceptron(kernel, budget=None).partial_fit(X, y).n_distilled > 5
    # removals of a support vector older than the newest: its Gram row is
    # completed from newer rows (CrammerKandolaSingerLearner.complete_gram_row)
    _, X, y, kw, kernel = by_name["rbf-gauss"]
    for budget in (4, 10, 25):
        plain = PlainBudgetPerceptron(kernel, budget=budget).partial_fit(X, y)
        assert sum(n > 0 for n in plain.n_newer_at_removal) > 5


@pytest.mark.parametrize("stream", STREAMS, ids=STREAM_IDS)
@pytest.mark.parametrize("budget, self_tuned", [(1, True), (3, True), (12, True), (40, True),
                                                (3, False), (12, False)])
def test_forgetron_matches_plain(stream, budget, self_tuned):
    _, X, y, kw, kernel = stream
    est, plain = assert_matches(
        Forgetron(budget=budget, self_tuned=self_tuned, shuffle=False, **kw),
        PlainForgetron(kernel, budget=budget, self_tuned=self_tuned), X, y)
    assert_array_equal(est.M_, [plain.M])
    assert_allclose(est.Q_, [plain.Q], rtol=1e-9, atol=1e-12)
    assert est._learners[0].n_removals == max(plain.M - budget, 0)


def test_forgetron_streams_hit_every_branch_of_phi():
    branches = set()
    for _, X, y, kw, kernel in STREAMS:
        for budget in (1, 3, 12):
            plain = PlainForgetron(kernel, budget=budget).partial_fit(X, y)
            for r in plain.removals:
                if r["phi"] < 1:
                    branches.add(np.sign(r["a"]))
                else:
                    branches.add("phi=1")
    assert branches >= {1.0, -1.0, "phi=1"}


def test_forgetron_survives_a_vanishing_global_scale():
    # B = 1 on a noisy stream: the product of the shrink factors falls below
    # 1e-100, so the engine folds its global scale into the coefficients
    X, y = make_noisy_gaussians(1000, random_state=0)
    plain = PlainForgetron(_kernel("rbf", gamma=1.0), budget=1)
    assert_matches(Forgetron(budget=1, gamma=1.0, shuffle=False), plain, X, y)
    assert np.sum(np.log10([r["phi"] for r in plain.removals])) < -100


@pytest.mark.parametrize("x2, a, phi", [
    (-0.5, 0.0, 15 / 32),                                    # mu = 1/2: linear Psi
    (-0.25, -0.5, 2 - np.sqrt(4 - 15 / 8)),                  # mu = 3/4: concave Psi
    (-2.0, 3.0, 2 * (15 / 16) / (2 + np.sqrt(4 + 12 * 15 / 16))),  # mu = -1: convex Psi
])
def test_forgetron_phi_branches_on_constructed_streams(x2, a, phi):
    # B = 1, linear kernel: x1 = 1 (y = +1) is added on a zero score; x2 < 0
    # (y = +1) is a mistake, so |S| = 2 = B + 1 with M = 2, Q = 0:
    # sigma_r = 1, mu = 1 + x2, a = 1 - 2 mu, room = 15/16, Psi(1) > room.
    X, y = np.array([[1.0], [x2]]), np.array([1, 1])
    plain = PlainForgetron(lambda A, B: A @ B.T, budget=1)
    est, plain = assert_matches(Forgetron(budget=1, kernel="linear"), plain, X, y, stream=True)
    (removal,) = plain.removals
    assert removal["a"] == a
    assert_allclose(removal["phi"], phi, rtol=1e-12)
    assert_allclose(est._learners[0].last_phi, phi, rtol=1e-12)
    assert_allclose(est.dual_coef_[0], [phi])        # sigma of x2 after the shrink
    assert_allclose(est.Q_, [15 / 16], rtol=1e-12)   # the removal used all the room
    if a < 0:
        # the larger root of Psi(phi) = room (LIBOKL's choice) is outside (0, 1]
        assert 2 + np.sqrt(4 - 15 / 8) > 1


@pytest.mark.parametrize("stream", STREAMS, ids=STREAM_IDS)
@pytest.mark.parametrize("C", [0.0625, 1.0, 16.0])  # dyadic: exact sums on exact kernels
def test_passive_aggressive_matches_plain(stream, C):
    _, X, y, kw, kernel = stream
    assert_matches(KernelPassiveAggressive(C=C, shuffle=False, **kw),
                   PlainKernelPassiveAggressive(kernel, C=C), X, y)


def test_passive_aggressive_zero_self_kernel_takes_step_C():
    X = np.array([[0.0, 0.0], [1.0, 0.0]])
    est = KernelPassiveAggressive(C=0.3, kernel="linear", shuffle=False).fit(X, [1, -1])
    # x = 0 has k(x, x) = 0: step C; then loss 1, k = 1: step min(C, 1)
    assert_allclose(est.dual_coef_[0], [0.3, -0.3])
    est = KernelPassiveAggressive(C=5.0, kernel="linear", shuffle=False).fit(X, [1, -1])
    assert_allclose(est.dual_coef_[0], [5.0, -1.0])


# ---------------------------------------------------------------------------
# behaviour
# ---------------------------------------------------------------------------
def test_stoptron_freezes_at_the_budget():
    X, y = make_noisy_gaussians(400, random_state=0)
    est = Stoptron(budget=10, gamma=1.0, shuffle=False).partial_fit(X[:200], y[:200], classes=[-1, 1])
    assert est.n_support_[0] == 10 and est.n_updates_ == 10
    coef = est.dual_coef_.copy()
    est.partial_fit(X[200:], y[200:])
    assert_array_equal(est.dual_coef_, coef)
    assert est.n_mistakes_ > 10


def test_random_budget_perceptron_draws_from_random_state():
    X, y = make_noisy_gaussians(300, random_state=0)
    a = RandomBudgetPerceptron(budget=5, random_state=0, shuffle=False).fit(X, y)
    b = RandomBudgetPerceptron(budget=5, random_state=1, shuffle=False).fit(X, y)
    assert not np.array_equal(a.support_vectors_, b.support_vectors_)


def test_adaptive_budget_perceptron_is_selected_by_budget_none():
    X, y = make_noisy_gaussians(500, random_state=0)
    fixed = BudgetPerceptron(budget=500, gamma=1.0, shuffle=False).fit(X, y)
    adaptive = BudgetPerceptron(budget=None, gamma=1.0, shuffle=False).fit(X, y)
    assert adaptive.n_support_[0] < fixed.n_support_[0]


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), beta=st.sampled_from([0.0, 0.1, 1.0]))
def test_distill_cache_leaves_no_redundant_support_vector(seed, beta):
    """After every round of the adaptive cache, every support vector but the
    newest keeps a leave-one-out margin below beta."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(30, 2))
    y = np.where(rng.uniform(size=30) < 0.5, 1, -1)
    est = BudgetPerceptron(budget=None, beta=beta, gamma=1.0)
    for i in range(len(y)):
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=[-1, 1])
        alpha = est.dual_coef_[0]
        K = _kernel("rbf", gamma=1.0)(est.support_vectors_, est.support_vectors_)
        loo = np.sign(alpha) * (K @ alpha - alpha * np.diag(K))
        assert np.all(loo[:-1] < beta + 1e-9)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), budget=st.integers(1, 6),
       gamma=st.sampled_from([0.1, 1.0, 10.0]))
def test_forgetron_phi_and_damage_on_every_removal(seed, budget, gamma):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(40, 2))
    y = np.where(rng.uniform(size=40) < 0.5, 1, -1)
    est = Forgetron(budget=budget, gamma=gamma)
    removals = 0
    for i in range(len(y)):
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=[-1, 1])
        learner = est._learners[0]
        if learner.n_removals > removals:
            removals = learner.n_removals
            assert 0 < learner.last_phi <= 1
            assert learner.Q <= 15 / 32 * learner.M * (1 + 1e-12)
        assert est.n_support_[0] <= budget
    assert removals == max(est.M_[0] - budget, 0)


@settings(max_examples=200, deadline=None)
@given(sigma=st.floats(1e-6, 1.0), mu=st.floats(-50, 50), room=st.floats(1e-3, 30))
def test_forgetron_phi_is_the_largest_feasible_shrink(sigma, mu, room):
    phi = _forgetron_phi(sigma, mu, room)
    assert 0 < phi <= 1
    assert PlainForgetron.psi(sigma, phi, mu) <= room * (1 + 1e-9)
    grid = np.linspace(phi, 1, 200)[1:]
    beyond = PlainForgetron.psi(sigma, grid, mu)
    assert phi == 1 or np.all(beyond > room * (1 - 1e-9))


_FIRST_AT_LEAST_CASES = """
import json, numpy as np
from skbudget._budget_fast import _first_at_least
rng = np.random.RandomState(0)
out = []
for n in list(range(0, 14)) + [31, 100, 101]:
    for case in range(12):
        values = rng.choice([-1.0, 0.0, 0.5, 1.0, 2.0, -np.inf, np.inf], size=n)
        if case % 3 == 0 and n:
            values[rng.randint(n, size=1 + case % 4)] = np.nan
        for threshold in (1.0, 2.0, 5.0, -np.inf, np.nan, float(values[0]) if n else 0.0):
            out.append((n, case, repr(threshold), _first_at_least(values, threshold)))
print(json.dumps(out))
"""


def test_removal_search_counts_ties_and_nans_as_a_plain_loop():
    # skb_first_at_least (the Budget Perceptron's removal search): one pass
    # takes values >= threshold and NaNs together, a second tells them
    # apart only when it found more than one: the answer of the plain loop,
    # with the AVX2 loops and with the baseline loops
    import json
    import os
    import subprocess
    import sys

    from skbudget._budget_fast import _first_at_least
    rng = np.random.RandomState(0)
    for n in list(range(0, 14)) + [31, 100, 101]:
        for case in range(12):
            values = rng.choice([-1.0, 0.0, 0.5, 1.0, 2.0, -np.inf, np.inf], size=n)
            if case % 3 == 0 and n:
                values[rng.randint(n, size=1 + case % 4)] = np.nan
            for threshold in (1.0, 2.0, 5.0, -np.inf, np.nan, values[0] if n else 0.0):
                at_least = values >= threshold
                expected = (int(np.argmax(at_least)) if at_least.any() else -1,
                            int(at_least.sum()), int(np.isnan(values).sum()))
                assert _first_at_least(values, threshold) == expected, (values, threshold)
    runs = []
    for disable in ("", "1"):
        env = dict(os.environ, SKBUDGET_DISABLE_AVX2=disable)
        done = subprocess.run([sys.executable, "-c", _FIRST_AT_LEAST_CASES], env=env,
                              capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout))
    assert runs[0] == runs[1]
