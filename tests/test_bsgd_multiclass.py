"""BudgetedSGDClassifier(multi_class='crammer_singer') against the plain
implementation of doc/algorithms.md#bsgd-multi-class (tests/oracles/bsgd_multiclass.py),
update by update, and the properties of the shared-support model."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_blobs, make_classification

from skbudget import BudgetedSGDClassifier
from skbudget._bsgd_fast import MulticlassBSGDLearner, _pair_dot
from skbudget._merge_search import (_golden_section_h, _golden_section_rows, _newton_choice,
                                    _newton_rows)
from tests.oracles import keeping_flags, mistake_flags
from tests.oracles.bsgd import golden_section
from tests.oracles.bsgd_multiclass import PlainMulticlassBSGD
from tests.test_bsgd import assert_step_count_continues, rbf

RULES = ["removal", "projection", "merging"]


def flagged(**params):
    """A shared-support BudgetedSGDClassifier that keeps every round's
    mistake flag, merging by §12's golden-section search (the oracle's)."""
    return keeping_flags(BudgetedSGDClassifier(multi_class="crammer_singer",
                                               merge_search="golden", **params))


def assert_matches(est, plain, X):
    """Mistakes round by round, updates, steps, maintenance, support
    vectors, coefficient rows, degradation and class scores.  Merged points
    to 1e-6 relative, as for the binary rule (doc/algorithms.md#bsgd; the
    golden-section search stops at a bracket of 1e-6; the engine and the
    oracle compute kernel values with different formulas)."""
    rtol = 1e-6 if plain.merged_rounds else 1e-9
    assert_array_equal(mistake_flags(est), plain.mistakes)
    assert est.n_mistakes_ == sum(plain.mistakes)
    assert est.n_updates_ == plain.n_updates
    assert est.t_ == plain.t
    assert_array_equal(est.n_maintenance_, [plain.n_maintenance])
    sv = est.support_vectors_.toarray() if sp.issparse(est.support_vectors_) \
        else est.support_vectors_
    assert_array_equal(est.n_support_, [len(plain.sv)])
    assert_allclose(sv, plain.support_vectors, rtol=rtol, atol=rtol)
    scale = np.abs(plain.coef).max()
    assert est.dual_coef_.shape == plain.coef.shape == (plain.k, len(plain.sv))
    assert_allclose(est.dual_coef_, plain.coef, rtol=max(rtol, 1e-8), atol=1e-10 * scale)
    assert_array_equal(est.intercept_, np.zeros(plain.k))
    assert_allclose(est.degradation_, [plain.degradation], rtol=max(rtol, 1e-7),
                    atol=1e-9 * scale ** 2)
    Z = np.vstack([X[::5] + 0.03, X[1::9]])
    assert_allclose(est.decision_function(Z), plain.decision_scores(Z),
                    rtol=max(rtol, 1e-8), atol=max(rtol, 1e-10) * scale)


def _streams():
    """(name, X, y, gamma): labels are class indices."""
    X, y = make_blobs(400, centers=4, cluster_std=2.0, random_state=0)
    yield "blobs4", X, y, 0.5
    X, y = make_classification(400, n_features=5, n_informative=4, n_redundant=0,
                               n_classes=5, n_clusters_per_class=1, flip_y=0.1,
                               random_state=1)
    yield "5d-5", X, y, 0.3
    # 12 distinct points seen over and over, noisy labels: duplicate support
    # vectors, singular Gram matrices, equal rows
    rng = np.random.RandomState(2)
    points = rng.normal(size=(12, 2))
    pick = rng.randint(12, size=300)
    labels = np.where(rng.uniform(size=300) < 0.2, rng.randint(3, size=300),
                      np.digitize(points[pick, 0], [-0.5, 0.5]))
    yield "duplicates3", points[pick], labels, 1.0


STREAMS = list(_streams())


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("stream", STREAMS, ids=[s[0] for s in STREAMS])
@pytest.mark.parametrize("budget, lam", [(5, 1e-2), (25, 1e-3)])
@pytest.mark.filterwarnings("ignore:.*hold.? no support vector:UserWarning")   # tiny budgets
def test_matches_plain_implementation(rule, stream, budget, lam):
    _, X, y, gamma = stream
    est = flagged(budget=budget, alpha=lam, maintenance=rule, gamma=gamma,
                  shuffle=False).fit(X, y)
    plain = PlainMulticlassBSGD(rbf(gamma), len(np.unique(y)), budget=budget, alpha=lam,
                                maintenance=rule).partial_fit(X, y)
    assert plain.n_maintenance > 20          # the budget binds
    if rule == "merging":
        assert len(plain.merged_rounds) > 20
    assert_matches(est, plain, X)


@pytest.mark.parametrize("rule", RULES)
def test_sparse_stream_matches_plain_implementation(rule):
    _, X, y, gamma = STREAMS[1]
    X = np.where(np.abs(X) < 0.5, 0.0, X)
    est = flagged(budget=10, alpha=1e-2, maintenance=rule, gamma=gamma,
                  shuffle=False).fit(sp.csr_matrix(X), y)
    plain = PlainMulticlassBSGD(rbf(gamma), 5, budget=10, alpha=1e-2,
                                maintenance=rule).partial_fit(X, y)
    assert sp.issparse(est.support_vectors_)
    assert_matches(est, plain, X)


@pytest.mark.parametrize("rule", RULES)
def test_streaming_and_epochs_continue_the_step_count(rule):
    _, X, y, gamma = STREAMS[0]
    X, y = X[:250], y[:250]
    est = flagged(budget=8, alpha=1e-2, maintenance=rule, gamma=gamma)
    plain = PlainMulticlassBSGD(rbf(gamma), 4, budget=8, alpha=1e-2, maintenance=rule)
    assert_step_count_continues(est, plain, X, y, np.arange(4), assert_matches, budget=8)


@pytest.mark.parametrize("rule", ["removal", "projection"])
@pytest.mark.parametrize("kernel, params, func", [
    ("linear", {}, lambda A, B: A @ B.T),
    ("poly", dict(degree=2, gamma=0.5, coef0=1.0), lambda A, B: (0.5 * A @ B.T + 1.0) ** 2),
    ("laplacian", dict(gamma=0.5), lambda A, B: np.exp(-0.5 * np.abs(A[:, None] - B).sum(-1))),
], ids=["linear", "poly", "laplacian-block-mode"])
def test_other_kernels_match_plain_implementation(rule, kernel, params, func):
    X, y = make_classification(300, n_features=4, n_informative=3, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, flip_y=0.1,
                               random_state=5)
    est = flagged(budget=8, alpha=1e-2, maintenance=rule, kernel=kernel, shuffle=False,
                  **params).fit(X, y)
    plain = PlainMulticlassBSGD(func, 3, budget=8, alpha=1e-2,
                                maintenance=rule).partial_fit(X, y)
    assert plain.n_maintenance > 50
    assert_matches(est, plain, X)


def test_ties_go_to_the_lowest_class_and_the_oldest_vector():
    # points far apart: every score is 0 when an example arrives, so the
    # prediction is class 0 (a mistake unless y = 0), the runner-up the
    # lowest other class, and every row has ||W||^2 = 2: removal drops the
    # oldest
    X = np.arange(9, dtype=float)[:, None] * 50.0     # exp(-2500) = 0
    y = np.array([0, 2, 1, 2, 0, 1, 1, 2, 0])
    est = flagged(budget=3, alpha=0.5, maintenance="removal", gamma=1.0,
                  shuffle=False).fit(X, y)
    assert_array_equal(mistake_flags(est), y != 0)
    assert est.n_updates_ == 9 and est.n_maintenance_[0] == 6
    assert_array_equal(est.support_vectors_[:, 0], X[-3:, 0])
    runner_up = np.where(y == 0, 1, 0)
    expected = np.zeros((3, 9))
    expected[y, np.arange(9)] = 1.0
    expected[runner_up, np.arange(9)] = -1.0
    assert_allclose(est.dual_coef_, expected[:, -3:] / (0.5 * 9), rtol=1e-15)
    # the class scores on a far point are all 0: class 0 is predicted
    assert_array_equal(est.predict([[1000.0]]), [0])


def test_golden_section_on_rows_matches_plain_search():
    rng = np.random.RandomState(7)
    for _ in range(200):
        W_m, W_n = rng.normal(size=(2, 4)) * rng.uniform(0.1, 2.0, size=(2, 1))
        kappa = rng.uniform(0.0, 1.0) ** rng.choice([1, 4])
        norm_m, norm_n, cross = W_m @ W_m, W_n @ W_n, W_m @ W_n
        h, sqnorm, deg = _golden_section_rows(norm_m, norm_n, cross, kappa)

        def direct(s):
            W_z = W_m * kappa ** ((1 - s) ** 2) + W_n * kappa ** (s ** 2)
            return W_z @ W_z

        assert abs(h - golden_section(direct)) <= 1e-6
        assert_allclose(sqnorm, direct(h), rtol=1e-12)
        assert_allclose(deg, norm_m + norm_n + 2 * kappa * cross - direct(h), atol=1e-12)
        assert deg >= -1e-12 * (norm_m + norm_n)
    # one class column each: the search is the binary rule's on |alpha_z|
    h_rows = _golden_section_rows(0.09, 0.49, 0.21, 0.6)[0]
    assert abs(h_rows - _golden_section_h(0.3, 0.7, 0.6)[0]) <= 1e-6


def test_golden_section_on_equal_norms_is_an_exact_tie():
    # orthogonal rows of equal norm, far apart: ||W_z(h)||^2 is bimodal and
    # symmetric; the first comparison is an exact tie and keeps [0, r]
    h, sqnorm, _ = _golden_section_rows(2.0, 2.0, 0.0, 1e-3)
    assert h < 0.1 and sqnorm > 1.9
    h, sqnorm, deg = _golden_section_rows(2.0, 2.0, 2.0, 1.0)   # the same point and row
    assert_allclose(sqnorm, 8.0, rtol=1e-12)
    assert abs(deg) < 1e-12


def test_binary_problems_are_the_binary_model():
    X, y = make_classification(300, n_features=4, random_state=0)
    for rule in RULES:
        models = [BudgetedSGDClassifier(budget=10, alpha=1e-2, maintenance=rule, gamma=0.5,
                                        multi_class=mc, random_state=0).fit(X, y)
                  for mc in ("crammer_singer", "ovr")]
        assert type(models[0]._learners[0]).__name__ == "BudgetedSGDLearner"
        for attr in ("support_vectors_", "dual_coef_", "n_support_", "degradation_"):
            assert_array_equal(getattr(models[0], attr), getattr(models[1], attr))
        assert models[0].dual_coef_.shape == (1, 10)


def test_ovr_is_one_binary_model_per_class():
    _, X, y, gamma = STREAMS[0]
    ovr = BudgetedSGDClassifier(budget=6, alpha=1e-2, gamma=gamma, multi_class="ovr",
                                shuffle=False).fit(X, y)
    assert_array_equal(ovr.n_support_, [6, 6, 6, 6])
    assert ovr.dual_coef_.shape == (4, 24)
    for c in range(4):
        binary = BudgetedSGDClassifier(budget=6, alpha=1e-2, gamma=gamma,
                                       shuffle=False).fit(X, np.where(y == c, 1, -1))
        block = slice(6 * c, 6 * c + 6)
        assert_array_equal(ovr.support_vectors_[block], binary.support_vectors_)
        assert_array_equal(ovr.dual_coef_[c, block], binary.dual_coef_[0])


def test_the_shared_lookup_search_never_loses_to_golden_section():
    # random (||W_m||^2, ||W_n||^2, <W_m, W_n>, kappa): for each candidate
    # alone, the grid and Newton steps find h with a degradation at most
    # 1e-9 (a + b) above the golden-section search's (often below it: for
    # small kappa the objective has several local maxima and the grid
    # finds the best); 250 candidates at once (those that cannot win keep
    # their grid point), the least degradation is as small; never a point
    # worse than z = x_m or z = x_n
    rng = np.random.RandomState(8)
    for call in range(40):
        a = 2.0 * rng.exponential()
        b = a * (1.0 + rng.exponential(2.0, size=250))
        b[200:] = a                                     # equal norms: h = 1/2 is a minimum
        rho = rng.uniform(-1.0, 1.0, size=250)
        rho[:50] = np.sign(rho[:50])                    # parallel rows
        c = rho * np.sqrt(a * b)
        kappa = rng.uniform(size=250) ** rng.choice([1, 6], size=250)
        kappa[50:60] = 1.0 - 10.0 ** -rng.uniform(1, 12, size=10)
        kappa[60:65] = 0.0
        h, sqnorm, deg = _newton_rows(a, b, c, kappa)
        golden = np.array([_golden_section_rows(a, *args)[2] for args in zip(b, c, kappa)])
        alone = np.array([_newton_rows(a, *args)[2][0] for args in zip(b[:, None],
                                                                        c[:, None],
                                                                        kappa[:, None])])
        assert np.all((0.0 <= h) & (h <= 1.0))
        assert np.all(alone - golden <= 1e-9 * (a + b))
        assert deg.min() <= golden.min() + 1e-9 * (a + b[np.argmin(golden)])
        assert deg[np.argmin(deg)] == alone[np.argmin(deg)]
        assert np.all(deg >= alone - 1e-12 * (a + b))
        ends = np.maximum(a * kappa ** 2 + b, a + b * kappa ** 2) + 2.0 * c * kappa
        assert np.all(sqnorm >= ends - 1e-12 * (a + b))


def test_the_shared_lookup_choice_computes_only_what_decides_it():
    # the learner's scan computes the columns lazily (far candidates by
    # bounds, Newton steps only where the bounds leave the choice open); its
    # choice and the chosen column's h, A, B and degradation are those of
    # the scan over every column, bit for bit: on streams like the merges
    # of well-separated blobs (most kappa far below 1e-18, rows of norm 2
    # and a little more, a few near pairs), on ties within the 1e-9
    # tolerance, degradations within a hair of the tie threshold, zero
    # kappa, a zero row, equal norms, and random rows
    rng = np.random.RandomState(11)
    for call in range(400):
        n = int(rng.choice([1, 2, 5, 40, 101]))
        a = float(rng.choice([2.0, 0.0, 2.0 * rng.exponential()]) if call % 7 else 2.0)
        b = 2.0 + rng.choice([0.0, 0.1, 1.0], size=n) * rng.exponential(size=n)
        if call % 3 == 0:
            b = a * (1.0 + rng.exponential(2.0, size=n))
        rho = rng.uniform(-1.0, 1.0, size=n)
        rho[rng.uniform(size=n) < 0.2] = 1.0              # parallel rows
        c = rho * np.sqrt(a * b)
        log_kappa = -rng.choice([1e-3, 1.0, 8.0, 20.0, 39.9, 40.0, 40.1, 60.0, 150.0],
                                size=n) * rng.uniform(0.5, 1.5, size=n)
        kappa = np.exp(log_kappa)
        kappa[rng.uniform(size=n) < 0.05] = 0.0
        if call % 5 == 1:        # the degradations of kappa ~ 1e-5 and 1e-4.5 pairs:
            kappa[: n // 2] = rng.choice([3e-5, 3.0000001e-5, 2e-9, 1e-12], size=n // 2)
        if call % 11 == 2:       # every candidate tied to within a few ulps
            b[:] = b[0]
            c[:] = c[0]
            kappa[:] = 1e-30 * (1.0 + 1e-15 * np.arange(n))
        full = _newton_choice(a, b, c, kappa, True)
        lazy = _newton_choice(a, b, c, kappa, False)
        assert lazy[0] == full[0], (call, lazy, full)
        assert_array_equal(np.array(lazy[1]), np.array(full[1]))
    # a degradation just above and just below the tie threshold of the least
    for shift in (-2e-9, -1e-9, -5e-10, 0.0, 5e-10, 1e-9, 2e-9):
        kappa = np.array([1e-30, 1e-5 * (1.0 + shift * 1e4), 1e-5, 1e-25])
        b = np.array([2.0, 2.0, 2.0, 2.0])
        c = np.array([1.0, 1.0, 1.0, -1.0])
        assert _newton_choice(2.0, b, c, kappa, False)[0] == _newton_choice(2.0, b, c, kappa,
                                                                              True)[0]
    # inputs no rows give (NaN, a negative norm, kappa above 1): every column,
    # and a non-finite degradation raises as the rule's scan does
    with pytest.raises(ValueError, match="degradation"):
        _newton_choice(2.0, [2.0, np.nan], [0.0, 0.0], [1e-30, 0.5], False)
    for b, kappa in (([2.0, -1.0], [0.5, 0.5]), ([2.0, 2.0], [0.5, 1.5])):
        assert _newton_choice(2.0, b, [0.0, 0.0], kappa, False)[0] == _newton_choice(
            2.0, b, [0.0, 0.0], kappa, True)[0]


def test_the_cross_product_of_a_row_never_merged_is_dense_dots():
    # <W_m, W_n> for a row with at most two nonzero entries (a vector never
    # merged) by its two products: the bits of the four-partial-sum
    # dense_dot, signed zeros, cancellation, tiny and huge values included
    rng = np.random.RandomState(5)
    for _ in range(3000):
        k = int(rng.randint(1, 30))
        w_m = np.zeros(k)
        at = rng.choice(k, size=min(k, int(rng.randint(0, 3))), replace=False)
        w_m[at] = rng.choice([1.0, -1.0, 0.5, -0.0, 1e-300, 3.7], size=len(at))
        w_n = rng.randn(k) * rng.choice([1.0, 1e-308, 1e300], size=k)
        w_n[rng.uniform(size=k) < 0.3] = rng.choice([0.0, -0.0])
        if rng.uniform() < 0.3:
            w_n[at] = -w_m[at] if rng.uniform() < 0.5 else w_m[at]
        pair, dense = _pair_dot(w_m, w_n)
        assert np.array([pair]).view(np.int64)[0] == np.array([dense]).view(np.int64)[0]
    with pytest.raises(ValueError, match="two nonzero"):
        _pair_dot([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])


def test_a_loaded_state_with_a_row_not_finite_is_refused():
    # the merge reads a row never merged by its two entries: every support
    # row is checked finite on entry, and the model stays as it was
    X, y = make_blobs(300, centers=4, n_features=5, random_state=0)
    est = BudgetedSGDClassifier(budget=20, gamma=0.3).partial_fit(X[:100], y[:100])
    learner = est._learners[0]
    state = learner.get_state()
    state["tau"][state["order"][0], 1] = np.inf
    learner.set_state(state)
    with pytest.raises(ValueError, match="coefficient row is not finite"):
        est.partial_fit(X[100:120], y[100:120])
    assert np.isinf(learner.get_state()["tau"][state["order"][0], 1])


def test_the_shared_lookup_search_at_its_edges():
    # kappa = 1 (the same point twice): nothing is lost, whatever h; next
    # to it, h is the limit of the maximizer, (a + c) / (a + b + 2c)
    h, sqnorm, deg = _newton_rows(1.0, [3.0], [0.5], [1.0])
    assert 0.0 <= h[0] <= 1.0
    assert_allclose(sqnorm, [5.0], rtol=1e-15) and abs(deg[0]) < 1e-15
    h, _, _ = _newton_rows(1.0, [3.0], [0.5], [1.0 - 1e-9])
    assert abs(h[0] - 1.5 / 5.0) < 1e-6
    # kappa = 0: z is x_n (h = 0) or x_m (h = 1), the larger row kept
    h, sqnorm, deg = _newton_rows(1.0, [3.0, 0.5], [0.0, 0.0], [0.0, 0.0])
    assert_array_equal(h, [0.0, 1.0])
    assert_array_equal(sqnorm, [3.0, 1.0])
    assert_array_equal(deg, [1.0, 0.5])
    # a zero row W_m: z = x_n, no loss
    h, sqnorm, deg = _newton_rows(0.0, [2.0], [0.0], [0.3])
    assert_array_equal(h, [0.0]) and deg[0] == 0.0
    # equal norms, far apart: symmetric and bimodal, the smaller h (z near
    # x_n, as golden section's tie); nearer, the two maxima are next to the
    # grid's best point h = 1/2, a minimum between them: the smaller one
    h, _, _ = _newton_rows(2.0, [2.0], [0.0], [1e-3])
    assert h[0] < 0.1
    h, _, deg = _newton_rows(2.0, [2.0], [1.0], [0.2221])
    golden = _golden_section_rows(2.0, 2.0, 1.0, 0.2221)
    assert abs(h[0] - golden[0]) < 1e-4 and deg[0] <= golden[2] + 1e-12
    # a NaN or infinite input is never compared: an error
    for bad in ([np.nan], [np.inf]):
        with pytest.raises(ValueError, match="degradation"):
            _newton_rows(1.0, bad, [0.0], [0.5])
    with pytest.raises(ValueError, match="degradation"):
        _newton_rows(1.0, [1.0], [0.0], [np.nan])


def test_the_shared_model_by_lookup_learns_as_golden_section():
    # merge_search='lookup' on the shared set: h by the grid and Newton
    # steps instead of golden section: another model, as good; one-vs-rest's
    # binary learners read the table
    _, X, y, gamma = STREAMS[1]
    fitted = {(mc, search): BudgetedSGDClassifier(
        budget=8, alpha=1e-2, gamma=gamma, multi_class=mc, merge_search=search,
        random_state=0).fit(X, y)
        for mc in ("crammer_singer", "ovr") for search in ("golden", "lookup")}
    golden, lookup = fitted["crammer_singer", "golden"], fitted["crammer_singer", "lookup"]
    assert golden.n_maintenance_[0] > 50 and lookup.n_maintenance_[0] > 50
    assert not np.array_equal(golden.support_vectors_, lookup.support_vectors_)
    assert lookup.support_vectors_.shape == (8, 5)
    assert abs(golden.score(X, y) - lookup.score(X, y)) <= 0.05
    per_step = [m.degradation_[0] / m.n_maintenance_[0] for m in (golden, lookup)]
    assert per_step[1] <= 1.1 * per_step[0]
    K = np.exp(-gamma * ((X[:, None] - lookup.support_vectors_) ** 2).sum(-1))
    assert_allclose(lookup.decision_function(X), K @ lookup.dual_coef_.T, rtol=1e-9,
                    atol=1e-12)
    assert not np.array_equal(fitted["ovr", "golden"].support_vectors_,
                              fitted["ovr", "lookup"].support_vectors_)


def test_fitted_attributes_of_the_shared_model():
    _, X, y, gamma = STREAMS[1]
    est = BudgetedSGDClassifier(budget=30, alpha=1e-3, gamma=gamma, random_state=0).fit(X, y)
    assert isinstance(est._learners[0], MulticlassBSGDLearner)
    assert len(est._learners) == 1
    assert_array_equal(est.n_support_, [30])
    assert est.dual_coef_.shape == (5, 30) and est.support_vectors_.shape == (30, 5)
    scores = est.decision_function(X)
    assert scores.shape == (400, 5)
    K = np.exp(-gamma * ((X[:, None] - est.support_vectors_) ** 2).sum(-1))
    assert_allclose(scores, K @ est.dual_coef_.T, rtol=1e-9, atol=1e-12)
    assert_array_equal(est.predict(X), est.classes_[np.argmax(scores, axis=1)])
    assert est.t_ == 400 and est.n_rounds_ == 400 and est.n_iter_ == 1
    assert 0 < est.n_mistakes_ < est.n_updates_ <= 400
    assert est.mistake_curve_[-1].tolist() == [400, est.n_mistakes_]
    assert est.n_maintenance_.shape == est.degradation_.shape == (1,)
    assert est.n_maintenance_[0] == est.n_updates_ - 30   # one step per addition beyond B
    assert est.degradation_[0] > 0
    assert est.score(X, y) > 0.7


@pytest.mark.parametrize("rule, search", [("removal", "lookup"), ("projection", "lookup"),
                                          ("merging", "golden"), ("merging", "lookup")])
def test_budget_determinism_pickling_and_chunks(rule, search):
    _, X, y, gamma = STREAMS[1]
    params = dict(budget=12, alpha=1e-3, gamma=gamma, maintenance=rule, merge_search=search,
                  random_state=3)
    fitted = BudgetedSGDClassifier(shuffle=False, **params).fit(X, y)
    again = BudgetedSGDClassifier(shuffle=False, **params).fit(X, y)
    assert_array_equal(fitted.support_vectors_, again.support_vectors_)
    assert_array_equal(fitted.dual_coef_, again.dual_coef_)
    # partial_fit on chunks (dense and CSR mixed) is one epoch without shuffling
    streamed = BudgetedSGDClassifier(**params)
    pieces = np.array_split(np.arange(len(y)), [1, 7, 50, 51, 190, 300])
    for i, piece in enumerate(pieces):
        chunk = sp.csr_matrix(X[piece]) if i % 2 else X[piece]
        streamed.partial_fit(chunk, y[piece], classes=np.arange(5))
        assert streamed.n_support_[0] <= 12
        if i == 3:   # pickled mid-stream, continued: the same model
            resumed = pickle.loads(pickle.dumps(streamed))
    for piece in pieces[4:]:
        resumed.partial_fit(X[piece], y[piece])
    for model in (streamed, resumed):
        assert not sp.issparse(model.support_vectors_)
        assert_allclose(model.support_vectors_, fitted.support_vectors_, rtol=1e-12,
                        atol=1e-12)
        assert_allclose(model.dual_coef_, fitted.dual_coef_, rtol=1e-12, atol=1e-12)
        assert model.n_mistakes_ == fitted.n_mistakes_
        assert_array_equal(model.mistake_curve_, fitted.mistake_curve_)
    # shuffled epochs: still within the budget, and reproducible
    a = BudgetedSGDClassifier(max_iter=3, **params).fit(X, y)
    b = BudgetedSGDClassifier(max_iter=3, **params).fit(X, y)
    assert a.n_support_[0] <= 12 and a.t_ == 3 * len(y)
    assert_array_equal(a.dual_coef_, b.dual_coef_)


def test_budget_bounds_the_whole_model():
    X, y = make_blobs(1500, centers=50, n_features=10, random_state=0)
    shared = BudgetedSGDClassifier(budget=60, random_state=0).fit(X[:1000], y[:1000])
    assert shared.support_vectors_.shape[0] == 60
    assert shared.score(X[1000:], y[1000:]) >= 0.95
    ovr = BudgetedSGDClassifier(budget=60, multi_class="ovr", random_state=0).fit(X[:1000],
                                                                                  y[:1000])
    assert ovr.support_vectors_.shape[0] > 60 * 5


def test_bad_settings_are_clear_errors():
    _, X, y, _ = STREAMS[0]
    with pytest.raises(ValueError, match="merging.*rbf"):
        BudgetedSGDClassifier(kernel="linear").fit(X, y)
    with pytest.raises(ValueError, match="feature store"):   # rbf in block mode
        BudgetedSGDClassifier(budget=5, kernel_params={"gamma": 0.5}).fit(X, y)
    with pytest.raises(ValueError, match="multi_class"):
        BudgetedSGDClassifier(multi_class="ovo").fit(X, y)
    # alpha is validated to >= 1e-100; below it, a coefficient of
    # 1/alpha = 1e320 (given to the learner through its state) overflows the
    # scores: an error, and the model is left as it was
    with pytest.raises(ValueError, match="alpha"):
        BudgetedSGDClassifier(alpha=1e-308).fit(X, y)
    Xs = np.zeros((4, 2))
    est = BudgetedSGDClassifier(gamma=1.0)
    est.partial_fit(Xs[:1], [0], classes=[0, 1, 2])
    state = est._learners[0].get_state()
    state["lam"] = 1e-320
    est._learners[0].set_state(state)
    before = est.dual_coef_.copy()
    with pytest.raises(ValueError, match="not finite"):
        est.partial_fit(Xs[1:], [1, 1, 1])
    assert_array_equal(est.dual_coef_, before)
    assert est.t_ == 1


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.filterwarnings("ignore:.*hold.? no support vector:UserWarning")   # tiny budgets
def test_weighted_stream_matches_plain_implementation(rule):
    # sample_weight times class_weight: the step eta_t w, the row w (e_y - e_r)
    _, X, y, gamma = STREAMS[1]
    rng = np.random.RandomState(11)
    sample_weight = rng.choice([0.0, 0.5, 1.0, 3.0], size=len(y))
    class_weight = {0: 1.0, 1: 2.0, 2: 0.5, 3: 1.0, 4: 1.5}
    est = flagged(budget=10, alpha=1e-2, maintenance=rule, gamma=gamma, shuffle=False,
                  class_weight=class_weight).fit(X, y, sample_weight=sample_weight)
    w = sample_weight * np.array([class_weight[c] for c in y])
    plain = PlainMulticlassBSGD(rbf(gamma), 5, budget=10, alpha=1e-2,
                                maintenance=rule).partial_fit(X, y, sample_weight=w)
    assert plain.n_maintenance > 20
    assert_matches(est, plain, X)
    # unit weights are the unweighted model, bit for bit
    unit = BudgetedSGDClassifier(budget=10, alpha=1e-2, maintenance=rule, gamma=gamma,
                                 random_state=0).fit(X, y, sample_weight=np.ones(len(y)))
    plain_fit = BudgetedSGDClassifier(budget=10, alpha=1e-2, maintenance=rule, gamma=gamma,
                                      random_state=0).fit(X, y)
    assert_array_equal(unit.dual_coef_, plain_fit.dual_coef_)
    assert_array_equal(unit.support_vectors_, plain_fit.support_vectors_)


def test_learner_saved_before_the_shared_lookup_loads_with_the_golden_search():
    # a shared learner's state written before the shared merge had a search
    # of its own for 'lookup' has no merge_search: it ran the golden section
    X, y = make_blobs(300, centers=4, n_features=3, cluster_std=2.0, random_state=0)
    est = BudgetedSGDClassifier(budget=10, gamma=0.5, maintenance="merging",
                                merge_search="golden", random_state=0)
    est.partial_fit(X[:150], y[:150], classes=np.unique(y))
    learner = est._learners[0]
    state = learner.get_state()
    del state["merge_search"]
    old = MulticlassBSGDLearner()
    old.set_state(state)
    assert old.merge_search == learner.merge_search
    assert_array_equal(np.asarray(old.alpha), np.asarray(learner.alpha))


def test_shared_multiclass_budget_smaller_than_the_classes_warns(multiclass_data):
    X, y = multiclass_data
    est = BudgetedSGDClassifier(budget=2, multi_class="crammer_singer", gamma=1.0,
                                random_state=0)
    with pytest.warns(UserWarning, match="budget .2. is smaller than the 3 classes"):
        est.fit(X, y)


def test_shared_multiclass_class_without_a_vector_warns(multiclass_data):
    X, y = multiclass_data
    X, y = X[np.argsort(y != 2, kind="stable")], y[np.argsort(y != 2, kind="stable")]
    est = BudgetedSGDClassifier(budget=4, multi_class="crammer_singer", gamma=1.0,
                                maintenance="removal", shuffle=False)
    with pytest.warns(UserWarning, match="hold no support vector"):
        est.fit(X, y)
    # an ordinary budget: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        BudgetedSGDClassifier(budget=50, multi_class="crammer_singer", gamma=1.0,
                              random_state=0).fit(*multiclass_data)
