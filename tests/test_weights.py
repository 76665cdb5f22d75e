"""sample_weight and class_weight, for the estimators that declare them
(``_declaration.weights``): an example's weight scales its loss (BSGD's step
``eta_t w``, PA-I's and BPA's cap ``C w``); no weights give the unweighted
model bit for bit; the perceptron-style rules take neither."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_blobs, make_classification, make_moons
from sklearn.metrics import recall_score
from sklearn.preprocessing import StandardScaler
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import has_fit_parameter

from skbudget import BudgetedPassiveAggressive, BudgetedSGDClassifier, KernelPassiveAggressive
from skbudget._declaration import declaration_of
from skbudget.discovery import all_estimators
from tests.oracles import keeping_flags
from tests.oracles.bpa import PlainBudgetedPassiveAggressive
from tests.oracles.bsgd import PlainBudgetedSGDClassifier
from tests.test_bsgd import assert_matches, rbf
from tests.test_fixed_budget import STREAMS
from tests.test_fixed_budget import assert_matches as assert_matches_fixed_budget
from tests.test_common import accepts, assert_same_model, fitted_state, small

ESTIMATORS = [Est for _, Est in all_estimators()]
WEIGHTED = [Est for Est in ESTIMATORS if declaration_of(Est).weights]
NOT_WEIGHTED = [Est for Est in ESTIMATORS if not declaration_of(Est).weights]
BPA_RULES = ["simple", "nearest", "projection"]
# the UserWarning of a BSGD learner left without a support vector of a class
DROPPED = "ignore:.*hold.? no support vector:UserWarning"


# every weighted estimator with each of its options that build another
# model (``_declaration.model_variants``)
CONFIGS = [(Est, variant) for Est in WEIGHTED for variant in declaration_of(Est).model_variants]
IDS = [f"{Est.__name__}-v{v}" for Est in WEIGHTED
       for v in range(len(declaration_of(Est).model_variants))]


def _model_bytes(est):
    if not hasattr(est, "support_vectors_"):     # a model on features (LLSVM)
        return pickle.dumps(fitted_state(est))
    return pickle.dumps((est.support_vectors_, est.dual_coef_, est.intercept_,
                         est.n_updates_, est.mistake_curve_))


@pytest.mark.filterwarnings(DROPPED)
@pytest.mark.parametrize("Est, params", CONFIGS, ids=IDS)
@pytest.mark.parametrize("data", ["binary", "multiclass", "csr", "wide-csr", "block"])
def test_unit_weights_give_the_unweighted_model_bit_for_bit(Est, params, data, binary_data,
                                                            multiclass_data):
    X, y = multiclass_data if data == "multiclass" else binary_data
    if data == "csr":
        X = sp.csr_matrix(X)
    if data == "wide-csr":      # more than 1024 columns: run_sparse's gather
        X = sp.hstack([sp.csr_matrix(X), sp.csr_matrix((X.shape[0], 1100))], format="csr")
    if data == "block":         # a kernel of block mode
        params = dict(params, kernel="laplacian")
        if not accepts(Est, params):
            pytest.skip(f"{Est.__name__}({params}) takes no laplacian kernel")
    plain = small(Est, max_iter=2, **params).fit(X, y)
    ones = small(Est, max_iter=2, **params).fit(X, y, sample_weight=np.ones(len(y)))
    by_class = small(Est, max_iter=2, class_weight={c: 1.0 for c in np.unique(y)},
                     **params).fit(X, y)
    assert _model_bytes(plain) == _model_bytes(ones) == _model_bytes(by_class)


@pytest.mark.parametrize("rule", ["removal", "projection", "merging"])
def test_weighted_bsgd_matches_plain_implementation(rule):
    X, y = make_classification(400, n_features=4, n_informative=3, n_redundant=0,
                               flip_y=0.1, random_state=5)
    y = 2 * y - 1
    w = np.random.RandomState(0).choice([0.0, 0.3, 1.0, 2.5], size=len(y))
    est = keeping_flags(BudgetedSGDClassifier(budget=15, alpha=1e-2, maintenance=rule,
                                              merge_search="golden", gamma=0.5, shuffle=False))
    est.fit(X, y, sample_weight=w)
    plain = PlainBudgetedSGDClassifier(rbf(0.5), budget=15, alpha=1e-2, maintenance=rule)
    plain.partial_fit(X, y, sample_weight=w)
    assert plain.n_maintenance > 20
    assert_matches(est, plain, X)


@pytest.mark.parametrize("rule", ["removal", "projection", "merging"])
def test_a_constant_bsgd_weight_is_a_smaller_alpha(rule, binary_data):
    # the step y w / (alpha t) with w = c is the step of alpha / c
    X, y = binary_data
    weighted = small(BudgetedSGDClassifier, alpha=1e-2, maintenance=rule).fit(
        X, y, sample_weight=np.full(len(y), 4.0))
    scaled = small(BudgetedSGDClassifier, alpha=1e-2 / 4.0, maintenance=rule).fit(X, y)
    assert_same_model(weighted, scaled)


def test_a_pa_weight_scales_the_cap(binary_data):
    X, y = binary_data
    weighted = small(KernelPassiveAggressive, C=0.1).fit(X, y, sample_weight=np.full(len(y), 3.0))
    assert_same_model(weighted, small(KernelPassiveAggressive, C=0.3).fit(X, y), rtol=1e-12)
    # a zero weight never updates: PA-I then equals the stream without those examples
    w = np.where(np.arange(len(y)) % 3 == 0, 0.0, 1.0)
    zeroed = small(KernelPassiveAggressive, C=0.3, shuffle=False).fit(X, y, sample_weight=w)
    kept = small(KernelPassiveAggressive, C=0.3, shuffle=False).fit(X[w > 0], y[w > 0])
    assert_allclose(zeroed.support_vectors_, kept.support_vectors_)
    assert_allclose(zeroed.dual_coef_, kept.dual_coef_, rtol=1e-12)


# the fixed-budget streams of the BPA oracle comparison (tests/test_bpa.py;
# rbf-duplicates left out for the reason given there)
BPA_STREAMS = [s for s in STREAMS if s[0] != "rbf-duplicates"]


@pytest.mark.parametrize("stream", BPA_STREAMS, ids=[s[0] for s in BPA_STREAMS])
@pytest.mark.parametrize("maintenance", BPA_RULES)
@pytest.mark.parametrize("budget", [1, 4, 12])
def test_weighted_bpa_matches_plain_implementation(stream, maintenance, budget):
    # update by update against the rule with the cap C w (doc/algorithms.md#bpa),
    # weights 0 among them
    _, X, y, kw, kernel = stream
    w = np.random.RandomState(budget).choice([0.0, 0.25, 1.0, 2.5, 7.0], size=len(y))
    est = BudgetedPassiveAggressive(budget=budget, C=0.5, maintenance=maintenance,
                                    shuffle=False, **kw)
    plain = PlainBudgetedPassiveAggressive(kernel, budget=budget, C=0.5,
                                           maintenance=maintenance)
    est, plain = assert_matches_fixed_budget(est, plain, X, y, sample_weight=w)
    learner = est._learners[0]
    assert learner.n_removals == len(plain.removed)
    assert learner.n_projections == plain.n_projections
    assert est.n_rounds_ == len(y)


def test_the_weighted_bpa_oracle_reaches_every_branch():
    # the weighted streams take capped and uncapped steps, remove, and (BPA-P)
    # project, so the comparison above is not vacuous
    by_name = {s[0]: s for s in STREAMS}
    _, X, y, kw, kernel = by_name["rbf-gauss"]
    w = np.random.RandomState(4).choice([0.0, 0.25, 1.0, 2.5, 7.0], size=len(y))
    for rule in BPA_RULES:
        plain = PlainBudgetedPassiveAggressive(kernel, budget=4, C=0.5, maintenance=rule)
        plain.partial_fit(X, y, sample_weight=w)
        assert len(set(plain.removed)) > 2
        # every capped step shows as a margin gain below the loss
        after = np.array(plain.margins_after)
        assert_allclose(after[:, 0], after[:, 1], rtol=1e-7, atol=1e-7)
    _, X, y, kw, kernel = by_name["rbf-zero-scores"]
    plain = PlainBudgetedPassiveAggressive(kernel, budget=12, C=0.5, maintenance="projection")
    assert plain.partial_fit(X, y, sample_weight=np.full(len(y), 2.0)).n_projections > 0


@pytest.mark.parametrize("maintenance", BPA_RULES)
def test_a_bpa_weight_scales_the_cap(maintenance, binary_data):
    X, y = binary_data
    # C w = 0.125 * 4 is exactly 0.5: the same model bit for bit
    weighted = small(BudgetedPassiveAggressive, C=0.125, maintenance=maintenance).fit(
        X, y, sample_weight=np.full(len(y), 4.0))
    assert weighted._learners[0].n_removals > 0
    assert_same_model(weighted, small(BudgetedPassiveAggressive, C=0.5,
                                      maintenance=maintenance).fit(X, y))
    # a zero weight takes no step and removes nothing: the model of the stream
    # without those examples, which are still counted as rounds
    w = np.where(np.arange(len(y)) % 3 == 0, 0.0, 1.0)
    zeroed = small(BudgetedPassiveAggressive, C=0.3, maintenance=maintenance,
                   shuffle=False).fit(X, y, sample_weight=w)
    kept = small(BudgetedPassiveAggressive, C=0.3, maintenance=maintenance,
                 shuffle=False).fit(X[w > 0], y[w > 0])
    assert kept._learners[0].n_removals > 0
    for name in ["support_vectors_", "dual_coef_", "intercept_", "n_updates_", "n_support_"]:
        assert_array_equal(getattr(zeroed, name), getattr(kept, name), strict=True)
    assert zeroed.n_rounds_ == len(y) and kept.n_rounds_ == np.count_nonzero(w)
    assert zeroed._learners[0].n_removals == kept._learners[0].n_removals


@pytest.mark.filterwarnings(DROPPED)
@pytest.mark.parametrize("Est, params", CONFIGS, ids=IDS)
@pytest.mark.parametrize("multiclass", [False, True])
def test_class_weight_is_a_sample_weight_per_class(Est, params, multiclass, binary_data,
                                                   multiclass_data):
    X, y = multiclass_data if multiclass else binary_data
    class_weight = {c: 0.5 + i for i, c in enumerate(np.unique(y))}
    sw = np.random.RandomState(1).uniform(0.2, 2.0, len(y))
    by_class = small(Est, class_weight=class_weight, max_iter=2, **params).fit(
        X, y, sample_weight=sw)
    by_sample = small(Est, max_iter=2, **params).fit(
        X, y, sample_weight=sw * np.array([class_weight[c] for c in y]))
    assert _model_bytes(by_class) == _model_bytes(by_sample)
    expected = compute_class_weight("balanced", classes=np.unique(y), y=y)
    balanced = small(Est, class_weight="balanced", **params).fit(X, y)
    as_dict = small(Est, class_weight=dict(zip(np.unique(y), expected)), **params).fit(X, y)
    assert _model_bytes(balanced) == _model_bytes(as_dict)


@pytest.mark.filterwarnings(DROPPED)
@pytest.mark.parametrize("Est, params", CONFIGS, ids=IDS)
def test_weights_follow_the_examples_through_shuffles_and_chunks(Est, params, binary_data):
    X, y = binary_data
    if declaration_of(Est).solves_calls:
        pytest.skip("no shuffled epochs, and calls cut anywhere are other problems: "
                    "tests/test_llsvm.py checks its weights")
    w = np.random.RandomState(2).uniform(0.0, 3.0, len(y))
    # a shuffled epoch: the model of the permuted stream with its weights
    shuffled = small(Est, **params).fit(X, y, sample_weight=w)
    order = np.random.RandomState(0).permutation(len(y))
    in_order = small(Est, shuffle=False, **params).fit(X[order], y[order],
                                                       sample_weight=w[order])
    assert_same_model(shuffled, in_order)
    # partial_fit calls on pieces: one fit epoch without shuffling
    fitted = small(Est, shuffle=False, **params).fit(X, y, sample_weight=w)
    streamed = small(Est, **params)
    for piece in np.array_split(np.arange(len(y)), [1, 8, 50, 51, 120]):
        streamed.partial_fit(X[piece], y[piece], classes=np.unique(y), sample_weight=w[piece])
    assert_same_model(fitted, streamed)
    # and the threads: one-vs-rest learners in threads see their own rows
    X3, y3 = make_blobs(200, centers=3, n_features=3, random_state=0)
    w3 = np.random.RandomState(3).uniform(0.0, 3.0, len(y3))
    one = small(Est, **params).fit(X3, y3, sample_weight=w3)
    two = small(Est, n_jobs=2, **params).fit(X3, y3, sample_weight=w3)
    assert_same_model(one, two)


@pytest.mark.parametrize("Est", WEIGHTED, ids=[Est.__name__ for Est in WEIGHTED])
def test_bad_weights_are_clear_errors_and_leave_the_model(Est, binary_data):
    X, y = binary_data
    est = small(Est).partial_fit(X[:50], y[:50], classes=np.unique(y))
    before = pickle.dumps(est)
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        est.partial_fit(X[50:60], y[50:60], sample_weight=-np.ones(10))
    with pytest.raises(ValueError, match="sample_weight"):
        est.partial_fit(X[50:60], y[50:60], sample_weight=np.ones(9))
    with pytest.raises(ValueError, match="NaN"):
        est.partial_fit(X[50:60], y[50:60], sample_weight=np.full(10, np.nan))
    est.set_params(class_weight={0: -1.0, 1: 1.0})
    with pytest.raises(ValueError, match="finite weight >= 0"):
        est.partial_fit(X[50:60], y[50:60])
    est.set_params(class_weight={0: 1.0, 7: 1.0})
    with pytest.raises(ValueError, match="not in class_weight"):
        est.partial_fit(X[50:60], y[50:60])
    # 'balanced' in partial_fit: scikit-learn's own error (SGDClassifier's)
    est.set_params(class_weight="balanced")
    with pytest.raises(ValueError, match="class_weight 'balanced' is not supported for "
                                         "partial_fit"):
        est.partial_fit(X[50:60], y[50:60])
    with pytest.raises(ValueError, match="not supported for partial_fit"):
        small(Est, class_weight="balanced").partial_fit(X, y, classes=np.unique(y))
    assert pickle.dumps(est.set_params(class_weight=None)) == before


@pytest.mark.parametrize("Est", ESTIMATORS, ids=[Est.__name__ for Est in ESTIMATORS])
def test_the_declared_weights_are_the_estimators(Est):
    taken = {"sample_weight"} if has_fit_parameter(Est(), "sample_weight") else set()
    if "class_weight" in Est().get_params():
        taken.add("class_weight")
    assert set(declaration_of(Est).weights) == taken


@pytest.mark.parametrize("Est", NOT_WEIGHTED, ids=[Est.__name__ for Est in NOT_WEIGHTED])
def test_perceptron_style_rules_take_no_weights(Est, binary_data):
    X, y = binary_data
    assert not has_fit_parameter(Est(), "sample_weight")
    assert "class_weight" not in Est().get_params()
    with pytest.raises(TypeError, match="sample_weight"):
        Est().fit(X, y, sample_weight=np.ones(len(y)))
    with pytest.raises(TypeError, match="sample_weight"):
        Est().partial_fit(X, y, classes=np.unique(y), sample_weight=np.ones(len(y)))


def test_balanced_class_weight_finds_a_rare_class():
    # a binary stream with 2 % positives: unweighted, BSGD's budget keeps
    # too few positive vectors; class_weight='balanced' finds them
    X, y = make_classification(12000, n_features=10, n_informative=5, weights=[0.98],
                               flip_y=0, random_state=2)
    X = StandardScaler().fit_transform(X)
    X_train, y_train, X_test, y_test = X[:10000], y[:10000], X[10000:], y[10000:]
    plain = BudgetedSGDClassifier(budget=100, random_state=0).fit(X_train, y_train)
    balanced = BudgetedSGDClassifier(budget=100, class_weight="balanced",
                                     random_state=0).fit(X_train, y_train)
    assert recall_score(y_test, plain.predict(X_test)) < 0.6
    assert recall_score(y_test, balanced.predict(X_test)) >= 0.8
    assert balanced.score(X_test, y_test) > 0.85


def test_bsgd_warns_when_a_learner_keeps_no_vector_of_its_class():
    X, y = make_blobs(2000, centers=50, n_features=10, cluster_std=3.0, random_state=0)
    X = StandardScaler().fit_transform(X)
    with pytest.warns(UserWarning, match=r"of the 50 one-vs-rest learners .* hold no support "
                                         r"vector of their own class"):
        BudgetedSGDClassifier(budget=5, maintenance="removal", multi_class="ovr",
                              random_state=0).fit(X, y)
    # one support set for every class (the default): no learner of a class to
    # lose, but 5 vectors cannot serve 50 classes
    with pytest.warns(UserWarning, match=r"budget \(5\) is smaller than the 50 classes"):
        BudgetedSGDClassifier(budget=5, maintenance="removal", random_state=0).fit(X, y)
    Xb, yb = make_classification(3000, n_features=10, n_informative=5, weights=[0.995],
                                 flip_y=0, random_state=1)
    with pytest.warns(UserWarning, match="holds no support vector of class 1.*class_weight"):
        BudgetedSGDClassifier(budget=3, maintenance="removal", random_state=0).fit(Xb, yb)
    Xm, ym = make_moons(300, noise=0.1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # a kernel with negative values: a one-signed expansion may score
        # both signs, so no claim is made
        BudgetedSGDClassifier(budget=5, maintenance="removal", kernel="linear",
                              multi_class="ovr", random_state=0).fit(X, y)
        BudgetedSGDClassifier(budget=20, gamma=2.0, random_state=0).fit(Xm, ym)
        BudgetedSGDClassifier(budget=5, random_state=0).fit(
            *make_blobs(300, centers=3, random_state=0))
