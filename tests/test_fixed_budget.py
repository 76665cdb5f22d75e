"""The fixed-budget family against the plain implementations of
doc/algorithms.md#fixed-budget-family (tests/oracles/fixed_budget.py)."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_blobs, make_classification, make_moons

from skbudget import (
    BudgetPerceptron,
    Forgetron,
    KernelPassiveAggressive,
    RandomBudgetPerceptron,
    Stoptron,
)
from skbudget._budget_fast import (
    SharedForgetronLearner,
    SharedPassiveAggressiveLearner,
    SharedRandomBudgetLearner,
    SharedStoptronLearner,
    _forgetron_phi,
)
from skbudget.datasets import make_khardon_wachman, make_noisy_gaussians
from tests.oracles import keeping_flags, mistake_flags
from tests.oracles.fixed_budget import (
    PlainBudgetPerceptron,
    PlainForgetron,
    PlainKernelPassiveAggressive,
    PlainRandomBudgetPerceptron,
    PlainSharedForgetron,
    PlainSharedKernelPassiveAggressive,
    PlainSharedRandomBudgetPerceptron,
    PlainSharedStoptron,
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


def _printed_by_both_versions(script):
    """The JSON that ``script`` prints, run in a fresh interpreter with the
    AVX2 loops and with the baseline loops (SKBUDGET_DISABLE_AVX2)."""
    import json
    import os
    import subprocess
    import sys
    runs = []
    for disable in ("", "1"):
        env = dict(os.environ, SKBUDGET_DISABLE_AVX2=disable)
        done = subprocess.run([sys.executable, "-c", script], env=env,
                              capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout))
    return runs


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
    with_avx2, baseline = _printed_by_both_versions(_FIRST_AT_LEAST_CASES)
    assert with_avx2 == baseline


_CLASS_SCORES_CASES = """
import json, numpy as np
from skbudget._shared_support import _class_scores
rng = np.random.RandomState(0)
out = []
for k in list(range(1, 42)) + [64, 67]:
    for n in (0, 1, 3, 4, 5, 9, 37):
        cells = n + 3
        tau = rng.choice([-1.5, -1.0, 0.0, -0.0, 0.25, 1.0, 3.0], size=(cells, k))
        tau += rng.normal(size=(cells, k)) * (rng.rand(cells, k) < 0.5)
        k_row = rng.normal(size=cells)
        if k % 7 == 0 and n:
            k_row[rng.randint(cells)] = rng.choice([np.inf, -np.inf, np.nan])
        order = rng.permutation(cells)[:n].astype(np.intp)
        scores = _class_scores(k_row, order, tau, float(rng.choice([1.0, 0.5, -0.0, 3.1])))
        out.append(np.where(np.isnan(scores), np.nan, scores).view(np.int64).tolist())
print(json.dumps(out))
"""


def test_class_scores_sum_the_patterns_in_order_in_either_version():
    # skb_class_scores (a shared round's class scores): every class's sum
    # from +0, the patterns' terms in their order, then times the scale:
    # the bits of the plain loop, with the AVX2 loops (sums kept in
    # registers, blocks of 32 classes, a masked last register) and with the
    # baseline loops
    from skbudget._shared_support import _class_scores
    rng = np.random.RandomState(1)
    for k in (1, 2, 3, 4, 5, 8, 26, 31, 32, 33, 40, 65):
        for n in (0, 1, 2, 7, 30):
            tau = rng.normal(size=(n + 2, k)) * (rng.rand(n + 2, k) < 0.7)
            tau[rng.rand(n + 2, k) < 0.1] = -0.0
            k_row = rng.normal(size=n + 2)
            order = rng.permutation(n + 2)[:n].astype(np.intp)
            expected = np.zeros(k)
            for r in range(k):
                total = 0.0
                for c in order:
                    total = total + float(k_row[c]) * float(tau[c, r])
                expected[r] = total * 0.75
            got = _class_scores(k_row, order, tau, 0.75)
            assert got.view(np.int64).tolist() == expected.view(np.int64).tolist(), (k, n)
    with pytest.raises(ValueError, match="order must name rows"):
        _class_scores(np.ones(2), np.array([2], dtype=np.intp), np.ones((2, 3)), 1.0)
    with_avx2, baseline = _printed_by_both_versions(_CLASS_SCORES_CASES)
    assert with_avx2 == baseline


# ---------------------------------------------------------------------------
# the shared multi-class mode (doc/algorithms.md#fixed-budget-shared)
# ---------------------------------------------------------------------------
def _shared_streams():
    """(name, X, y, estimator kernel parameters, oracle kernel): labels are
    class indices, three to five classes."""
    X, y = make_blobs(240, centers=4, cluster_std=2.0, random_state=0)
    yield "rbf-blobs4", X, y, dict(kernel="rbf", gamma=0.5), _kernel("rbf", gamma=0.5)
    X, y = make_classification(240, n_features=5, n_informative=4, n_redundant=0, n_classes=5,
                               n_clusters_per_class=1, flip_y=0.1, random_state=1)
    yield "rbf-5class", X, y, dict(kernel="rbf", gamma=0.3), _kernel("rbf", gamma=0.3)
    # integer features and weights: every linear-kernel score is an exact
    # integer (the perceptrons' rows are +-1), margins of exactly 0 included
    rng = np.random.RandomState(3)
    X = rng.randint(-3, 4, size=(180, 6)).astype(float)
    y = np.argmax(X @ rng.randint(-2, 3, size=(6, 3)) + rng.randint(0, 3, size=(180, 3)), axis=1)
    yield "linear-int3", X, y, dict(kernel="linear"), _kernel("linear")
    # 12 distinct points seen over and over, noisy labels
    points = rng.normal(size=(12, 2))
    pick = rng.randint(12, size=200)
    labels = np.where(rng.uniform(size=200) < 0.2, rng.randint(3, size=200),
                      np.digitize(points[pick, 0], [-0.5, 0.5]))
    yield "rbf-duplicates3", points[pick], labels, dict(kernel="rbf", gamma=1.0), (
        _kernel("rbf", gamma=1.0))
    # points 50 apart: every score of a new point is exactly 0, a tie the
    # lowest class wins (no mistake for class 0, an update all the same)
    far = rng.randint(6, size=(90, 1)) * 50.0
    yield "rbf-zero-scores", far, rng.randint(4, size=90), dict(kernel="rbf", gamma=1.0), (
        _kernel("rbf", gamma=1.0))


SHARED_STREAMS = list(_shared_streams())
SHARED_IDS = [s[0] for s in SHARED_STREAMS]
SHARED_LEARNERS = {Stoptron: SharedStoptronLearner, RandomBudgetPerceptron: SharedRandomBudgetLearner,
                   Forgetron: SharedForgetronLearner,
                   KernelPassiveAggressive: SharedPassiveAggressiveLearner}


def assert_shared_matches(est, plain, X, y, stream=False, sample_weight=None, weights=None,
                          rtol=1e-9, open_classes=False):
    """The shared model against its oracle: the learner, every round's
    mistake, the updates, the support set (oldest first), the coefficient
    rows and the class scores (``fit``, or with ``stream`` one
    ``partial_fit`` call, with ``open_classes`` one without ``classes=``;
    chunks of 37 examples).  ``sample_weight`` goes
    to the estimator, the examples' weights ``weights`` (with its
    ``class_weight``) to the oracle."""
    est._chunk_size = 37
    keeping_flags(est)
    fit_weights = {} if sample_weight is None else {"sample_weight": sample_weight}
    if stream:
        classes = None if open_classes else np.arange(plain.k)
        est.partial_fit(X, y, classes=classes, **fit_weights)
    else:
        est.fit(X, y, **fit_weights)
    plain.partial_fit(X.toarray() if sp.issparse(X) else X, y, sample_weight=weights)
    X = X.toarray() if sp.issparse(X) else X
    assert isinstance(est._learners[0], SHARED_LEARNERS[type(est)]) and len(est._learners) == 1
    assert_array_equal(mistake_flags(est), plain.mistakes)
    assert est.n_mistakes_ == sum(plain.mistakes)
    assert est.n_updates_ == plain.n_updates
    support_vectors = est.support_vectors_
    support_vectors = support_vectors.toarray() if sp.issparse(support_vectors) else support_vectors
    assert_array_equal(support_vectors, X[plain.support_])
    assert_array_equal(est.n_support_, [len(plain.support_)])
    assert_array_equal(est._learners[0].support_labels(), plain.labels)
    assert est.dual_coef_.shape == plain.coef.shape == (plain.k, len(plain.support_))
    assert_allclose(est.dual_coef_, plain.coef, rtol=rtol, atol=1e-12)
    assert_array_equal(est.intercept_, np.zeros(plain.k))
    Z = np.vstack([X[::7], X[::5] + 0.05])
    scores = plain.decision_scores(Z)
    if plain.k == 2:            # (decision_function: the binary score f_1 - f_0)
        scores = scores[:, 1] - scores[:, 0]
    assert_allclose(est.decision_function(Z), scores, rtol=max(rtol, 1e-9),
                    atol=1e-9)
    return est, plain


def _shared(Est, **params):
    return Est(multi_class="crammer_singer", shuffle=False, **params)


@pytest.mark.parametrize("stream", SHARED_STREAMS, ids=SHARED_IDS)
@pytest.mark.parametrize("budget", [1, 4, 25])
def test_shared_stoptron_matches_plain(stream, budget):
    _, X, y, kw, kernel = stream
    k = len(np.unique(y))
    est, plain = assert_shared_matches(_shared(Stoptron, budget=budget, **kw),
                                       PlainSharedStoptron(kernel, k, budget=budget), X, y)
    assert est.n_support_[0] == min(budget, est.n_updates_)


@pytest.mark.parametrize("stream", SHARED_STREAMS, ids=SHARED_IDS)
@pytest.mark.parametrize("budget, seed", [(1, 0), (4, 1), (25, 2)])
def test_shared_random_budget_perceptron_matches_plain(stream, budget, seed):
    _, X, y, kw, kernel = stream
    k = len(np.unique(y))
    est, plain = assert_shared_matches(
        _shared(RandomBudgetPerceptron, budget=budget, random_state=seed, **kw),
        PlainSharedRandomBudgetPerceptron(kernel, k, budget=budget, random_state=seed), X, y)
    assert plain.n_updates > budget + 5        # the removal draws


@pytest.mark.parametrize("stream", SHARED_STREAMS, ids=SHARED_IDS)
@pytest.mark.parametrize("budget, self_tuned", [(1, True), (3, True), (12, True), (40, True),
                                                (3, False), (12, False)])
def test_shared_forgetron_matches_plain(stream, budget, self_tuned):
    name, X, y, kw, kernel = stream
    if name == "linear-int3" and self_tuned:
        # after a shrink the rows are no longer integers: two class scores
        # equal in exact arithmetic are then equal or not by rounding, which
        # differs between the engine's global scale and the oracle's rows
        pytest.skip("exact ties of shrunk rows are decided by rounding")
    k = len(np.unique(y))
    est, plain = assert_shared_matches(
        _shared(Forgetron, budget=budget, self_tuned=self_tuned, **kw),
        PlainSharedForgetron(kernel, k, budget=budget, self_tuned=self_tuned), X, y)
    assert_array_equal(est.M_, [plain.M])
    assert_allclose(est.Q_, [plain.Q], rtol=1e-9, atol=1e-12)
    assert est._learners[0].n_removals == max(plain.M - budget, 0)
    if plain.removals:
        assert_allclose(est._learners[0].last_phi, plain.removals[-1]["phi"], rtol=1e-9)


def test_shared_forgetron_streams_hit_every_branch_of_phi():
    branches = set()
    for _, X, y, kw, kernel in SHARED_STREAMS:
        for budget in (1, 3, 12):
            plain = PlainSharedForgetron(kernel, len(np.unique(y)), budget=budget)
            for r in plain.partial_fit(X, y).removals:
                branches.add(np.sign(r["a"]) if r["phi"] < 1 else "phi=1")
    assert branches >= {1.0, -1.0, "phi=1"}


def test_shared_forgetron_survives_a_vanishing_global_scale():
    # B = 1 on a long noisy stream: the product of the shrink factors falls
    # below 1e-100, and the engine folds its global scale into the rows
    X, y = make_blobs(1500, centers=3, cluster_std=4.0, random_state=0)
    plain = PlainSharedForgetron(_kernel("rbf", gamma=1.0), 3, budget=1)
    assert_shared_matches(_shared(Forgetron, budget=1, gamma=1.0), plain, X, y)
    assert np.sum(np.log10([r["phi"] for r in plain.removals])) < -100


@pytest.mark.parametrize("stream", SHARED_STREAMS, ids=SHARED_IDS)
@pytest.mark.parametrize("C", [0.0625, 1.0, 16.0])
def test_shared_passive_aggressive_matches_plain(stream, C):
    _, X, y, kw, kernel = stream
    assert_shared_matches(_shared(KernelPassiveAggressive, C=C, **kw),
                          PlainSharedKernelPassiveAggressive(kernel, len(np.unique(y)), C=C),
                          X, y)


def test_shared_passive_aggressive_weights_match_plain():
    # sample_weight times class_weight caps the step: C w; no update for w = 0
    _, X, y, kw, kernel = SHARED_STREAMS[1]
    rng = np.random.RandomState(11)
    sample_weight = rng.choice([0.0, 0.25, 1.0, 3.0], size=len(y))
    class_weight = {0: 1.0, 1: 2.0, 2: 0.5, 3: 1.0, 4: 1.5}
    w = sample_weight * np.array([class_weight[c] for c in y])
    est, plain = assert_shared_matches(
        _shared(KernelPassiveAggressive, C=0.5, class_weight=class_weight, **kw),
        PlainSharedKernelPassiveAggressive(kernel, 5, C=0.5), X, y, sample_weight=sample_weight,
        weights=w)
    assert plain.n_updates < np.count_nonzero(w)      # some rounds within the margin
    capped = np.abs(plain.coef).max(axis=0)
    assert np.any(np.isclose(capped, 0.5 * w[plain.support_]))    # the cap C w binds
    # unit weights are the unweighted model, bit for bit
    unit = _shared(KernelPassiveAggressive, **kw).fit(X, y, sample_weight=np.ones(len(y)))
    plain_fit = _shared(KernelPassiveAggressive, **kw).fit(X, y)
    assert_array_equal(unit.dual_coef_, plain_fit.dual_coef_)


SHARED_CASES = [(Stoptron, dict(budget=12)), (RandomBudgetPerceptron, dict(budget=12)),
                (Forgetron, dict(budget=12)), (Forgetron, dict(budget=12, self_tuned=False)),
                (KernelPassiveAggressive, dict(C=0.5))]
SHARED_CASE_IDS = ["stoptron", "random", "forgetron", "forgetron-plain", "pa"]
ORACLES = {Stoptron: PlainSharedStoptron, RandomBudgetPerceptron: PlainSharedRandomBudgetPerceptron,
           Forgetron: PlainSharedForgetron, KernelPassiveAggressive: PlainSharedKernelPassiveAggressive}


def _oracle(Est, params, kernel, k):
    params = dict(params)
    if Est is RandomBudgetPerceptron:
        params["random_state"] = 0
    return ORACLES[Est](kernel, k, **params)


@pytest.mark.parametrize("Est, params", SHARED_CASES, ids=SHARED_CASE_IDS)
def test_shared_sparse_stream_matches_plain(Est, params):
    _, X, y, kw, kernel = SHARED_STREAMS[1]
    X = np.where(np.abs(X) < 0.5, 0.0, X)
    est, _ = assert_shared_matches(_shared(Est, random_state=0, **params, **kw),
                                   _oracle(Est, params, kernel, 5), sp.csr_matrix(X), y,
                                   stream=True)
    assert sp.issparse(est.support_vectors_)


@pytest.mark.parametrize("Est, params", SHARED_CASES, ids=SHARED_CASE_IDS)
def test_shared_round_scores_and_budget_after_every_round(Est, params):
    # one example per partial_fit call: before each round the model's class
    # scores are the oracle's, and |S| <= B for the whole model after it
    _, X, y, kw, kernel = SHARED_STREAMS[0]
    X, y = X[:90], y[:90]
    est = _shared(Est, random_state=0, **params, **kw)
    plain = _oracle(Est, params, kernel, 4)
    budget = params.get("budget", len(y))
    for i in range(len(y)):
        if i:
            assert_allclose(est.decision_function(X[i:i + 1]), plain.decision_scores(X[i:i + 1]),
                            rtol=1e-9, atol=1e-12)
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=np.arange(4))
        plain.partial_fit(X[i:i + 1], y[i:i + 1])
        assert est.n_support_[0] == len(plain.support_) <= budget
    assert est.n_mistakes_ == sum(plain.mistakes) > 10


@pytest.mark.parametrize("Est, params", SHARED_CASES, ids=SHARED_CASE_IDS)
def test_shared_partial_fit_chunks_are_one_fit_epoch(Est, params):
    _, X, y, kw, _ = SHARED_STREAMS[1]
    fitted = _shared(Est, random_state=3, **params, **kw).fit(X, y)
    streamed = Est(multi_class="crammer_singer", random_state=3, **params, **kw)
    pieces = np.array_split(np.arange(len(y)), [1, 7, 50, 51, 150, 200])
    for i, piece in enumerate(pieces):
        chunk = sp.csr_matrix(X[piece]) if i % 2 else X[piece]
        streamed.partial_fit(chunk, y[piece], classes=np.arange(5))
        if i == 3:      # pickled mid-stream, continued: the same model
            resumed = pickle.loads(pickle.dumps(streamed))
    for piece in pieces[4:]:
        resumed.partial_fit(X[piece], y[piece])
    for model in (streamed, resumed):
        assert_array_equal(model.support_vectors_, fitted.support_vectors_)
        assert_array_equal(model.dual_coef_, fitted.dual_coef_)
        assert model.n_mistakes_ == fitted.n_mistakes_
        assert_array_equal(model.mistake_curve_, fitted.mistake_curve_)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), budget=st.integers(1, 6), n_classes=st.integers(3, 6),
       case=st.sampled_from([0, 1, 2, 3]))
def test_shared_budget_bounds_the_whole_model_on_random_label_streams(seed, budget, n_classes,
                                                                       case):
    # random labels, the last classes appearing only late in the stream
    Est, params = SHARED_CASES[case]
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(40, 2))
    y = rng.randint(n_classes - 1, size=40)
    y[25:] = rng.randint(n_classes, size=15)
    est = _shared(Est, random_state=seed, gamma=1.0, **{**params, "budget": budget})
    for i in range(len(y)):
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=np.arange(n_classes))
        assert est.n_support_[0] <= budget
        assert est.dual_coef_.shape == (n_classes, est.n_support_[0])
    if Est is Forgetron:
        assert est.Q_[0] <= 15 / 32 * est.M_[0] * (1 + 1e-12)


def test_shared_budget_is_for_the_whole_model():
    X, y = make_blobs(600, centers=12, n_features=5, random_state=0)
    for Est, params in SHARED_CASES[:4]:
        shared = Est(multi_class="crammer_singer", gamma=0.5, random_state=0,
                     **params).fit(X[:400], y[:400])
        ovr = Est(gamma=0.5, random_state=0, **params).fit(X[:400], y[:400])
        assert shared.support_vectors_.shape[0] == 12 < ovr.support_vectors_.shape[0]
        assert shared.dual_coef_.shape == (12, 12) and shared.n_support_.shape == (1,)
        assert shared.score(X[400:], y[400:]) > 0.5


@pytest.mark.parametrize("Est, params", SHARED_CASES, ids=SHARED_CASE_IDS)
def test_shared_mode_on_two_classes_is_the_binary_model(Est, params):
    X, y = make_moons(200, noise=0.3, random_state=0)
    models = [Est(multi_class=mc, gamma=2.0, random_state=0, **params).fit(X, y)
              for mc in ("crammer_singer", "ovr")]
    assert not models[0]._shared_support
    assert_array_equal(models[0].dual_coef_, models[1].dual_coef_)
    assert_array_equal(models[0].support_vectors_, models[1].support_vectors_)


@pytest.mark.parametrize("Est, params", SHARED_CASES, ids=SHARED_CASE_IDS)
def test_shared_learner_add_class_keeps_the_old_predictions(Est, params):
    # a class first seen late (an open label stream: the base calls
    # add_class): the rows get a zero entry at its index, the old classes'
    # scores do not move, and training goes on within the budget
    _, X, y, kw, _ = SHARED_STREAMS[0]
    old = np.array([0, 2, 3])
    seen = np.isin(y, old)
    est = Est(multi_class="crammer_singer", random_state=0, **params, **kw)
    est.partial_fit(X[seen][:15], y[seen][:15], classes=old)
    Z = X[::9]
    before = est.decision_function(Z)
    learner = est._learners[0]
    learner.add_class(1)
    est.classes_ = np.arange(4)     # (what the base does beside the call)
    est._update_fitted_attributes()
    after = est.decision_function(Z)
    assert_allclose(after[:, [0, 2, 3]], before, rtol=1e-12, atol=1e-15)
    assert_array_equal(after[:, 1], 0.0)
    assert learner.check_policy_state(0) is None
    budget = params.get("budget", len(y))
    for start in range(0, len(y), 40):
        est.partial_fit(X[start:start + 40], y[start:start + 40])
        assert est.n_support_[0] <= budget
    assert (est.dual_coef_[1] > 0).any()       # class 1 has been learned
    assert (est.predict(X) == 1).any()


@pytest.mark.parametrize("Est, params", SHARED_CASES, ids=SHARED_CASE_IDS)
def test_shared_model_in_a_skops_file_continues_the_stream(Est, params):
    from tests.test_persistence import _assert_identical, _loaded
    _, X, y, kw, _ = SHARED_STREAMS[1]
    est = Est(multi_class="crammer_singer", random_state=0, **params, **kw)
    est.partial_fit(X[:100], y[:100], classes=np.arange(5))
    loaded = _loaded(est)
    assert isinstance(loaded._learners[0], SHARED_LEARNERS[Est])
    assert_array_equal(loaded.predict(X), est.predict(X))
    for model in (est, loaded):
        model.partial_fit(X[100:], y[100:])
    _assert_identical(loaded, est)


@pytest.mark.parametrize("Est, params", SHARED_CASES, ids=SHARED_CASE_IDS)
def test_shared_learner_on_two_classes_is_the_shared_rule(Est, params):
    # an open label stream (no classes=) builds the shared learner with two
    # classes (the estimator itself uses the binary rule there, given
    # classes=): the top-two rule on two columns, as the oracle's
    _, X, y, kw, kernel = SHARED_STREAMS[0]
    X, y = X[y < 2], y[y < 2]
    est = _shared(Est, random_state=0, **params, **kw)
    plain = _oracle(Est, params, kernel, 2)
    assert_shared_matches(est, plain, X, y, stream=True, open_classes=True)
    assert plain.n_updates > 5
