"""skbudget.parallel: the average of models (exact), compression by the
model's own maintenance rule (against the oracles of doc/algorithms.md#bsgd and #bsgd-multi-class), the
continued online state, and ParameterMixingClassifier on local threads and
on a real dask.distributed LocalCluster (failures included)."""

import os
import pickle
import subprocess
import sys
import threading
import time
import weakref

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_classification
from sklearn.utils.estimator_checks import parametrize_with_checks
from threadpoolctl import threadpool_info

from skbudget import (
    BudgetedSGDClassifier,
    FourierOGDClassifier,
    KernelOGDClassifier,
    KernelPassiveAggressive,
    KernelPerceptron,
)
from skbudget._declaration import declaration_of
from skbudget.discovery import all_estimators
from skbudget._merge_search import _lookup_table
from skbudget.parallel import ParameterMixingClassifier, average, compress
from tests.oracles.bsgd import PlainBudgetedSGDClassifier as PlainBSGD
from tests.oracles.bsgd_multiclass import PlainMulticlassBSGD
from tests.test_bsgd import rbf
from tests.test_common import accepts

RULES = ["removal", "projection", "merging"]


def _data(n_classes, sparse=False, n=360, seed=0):
    X, y = make_blobs(n, centers=n_classes, n_features=4, cluster_std=2.5, random_state=seed)
    X = X / 4
    return (sp.csr_matrix(np.where(np.abs(X) < 0.2, 0.0, X)) if sparse else X), y


def _averaging_configurations(Est):
    """``Est`` (declared parameters of the common tests) with each of its
    options that build another model (``_declaration.model_variants``)
    under which its models average, as ``(v, estimator)``."""
    declaration = declaration_of(Est)
    for v, variant in enumerate(declaration.model_variants):
        est = Est(**{**declaration.test_params[0], **variant})
        try:
            declaration.averaging.check_parameters(est)
        except ValueError:
            continue
        yield v, est


def _estimators():
    """(id, estimator, n_classes): every estimator whose models average
    (``_declaration.averaging``), each of its averaging options on 2 and 3
    classes, and its first option that takes a kernel of block mode
    (laplacian) on 3."""
    for name, Est in all_estimators():
        if not declaration_of(Est).averages:
            continue
        configurations = list(_averaging_configurations(Est))
        mode = declaration_of(Est).shared_multiclass
        for v, est in configurations:
            for k in (2, 3):
                if k == 2 and mode is not None and mode.param is not None and (
                        est.get_params()[mode.param] == mode.one_vs_rest):
                    continue        # (two classes: one binary learner in either mode)
                yield f"{name}-v{v}-{k}", est, k
        for v, est in configurations:
            if "kernel" in est.get_params() and accepts(type(est), {
                    **est.get_params(), "kernel": "laplacian"}):
                yield f"{name}-v{v}-laplacian-3", clone(est).set_params(kernel="laplacian"), 3
                break


ESTIMATORS = list(_estimators())


def _shards(est, k, sparse, n_models):
    X, y = _data(k, sparse)
    models = [pickle.loads(pickle.dumps(est)).fit(X[i::n_models], y[i::n_models])
              for i in range(n_models)]
    return X, y, models


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("n_models", [2, 3])
@pytest.mark.parametrize("name, est, k", ESTIMATORS, ids=[e[0] for e in ESTIMATORS])
def test_average_is_the_weighted_sum_of_the_decision_functions(name, est, k, n_models, sparse):
    X, y, models = _shards(est, k, sparse, n_models)
    weights = np.arange(1.0, n_models + 1)
    before = [pickle.dumps(m) for m in models]
    for w in (None, weights):
        mixed = average(models, w)
        ww = np.full(n_models, 1 / n_models) if w is None else w
        expected = sum(wk * m.decision_function(X) for wk, m in zip(ww, models))
        assert_allclose(mixed.decision_function(X), expected, rtol=1e-9, atol=1e-12)
        assert type(mixed) is type(est)
        assert mixed.n_rounds_ == sum(m.n_rounds_ for m in models)
        assert mixed.n_mistakes_ == sum(m.n_mistakes_ for m in models)
        if not hasattr(mixed, "support_vectors_"):      # a linear model (FOGD): no support set
            continue
        assert mixed.n_support_.sum() == sum(m.n_support_.sum() for m in models)
        # the models' rounds have no order: the average's record starts at
        # its last round, with the average's support size
        assert mixed.support_curve_.tolist() == [[mixed.n_rounds_, mixed.n_support_.sum()]]
    if not hasattr(mixed, "support_vectors_"):
        return
    # the support set: the models' sets one after the other, oldest first
    first = models[0].support_vectors_
    sv = mixed.support_vectors_
    if sp.issparse(sv):
        sv, first = sv.toarray(), first.toarray()
    if mixed.n_support_.shape[0] == 1:
        assert_array_equal(sv[:first.shape[0]], first)
    assert [pickle.dumps(m) for m in models] == before       # inputs unchanged


@pytest.mark.parametrize("name, est, k", ESTIMATORS, ids=[e[0] for e in ESTIMATORS])
def test_average_continues_partial_fit(name, est, k):
    X, y, models = _shards(est, k, False, 2)
    mixed = average(models)
    again = pickle.loads(pickle.dumps(mixed))
    mixed.partial_fit(X[:50], y[:50])
    again.partial_fit(X[:50], y[:50])       # a saved average continues alike
    assert_allclose(mixed.decision_function(X), again.decision_function(X), rtol=1e-12)
    assert mixed.n_rounds_ == sum(m.n_rounds_ for m in models) + 50
    if isinstance(est, BudgetedSGDClassifier):
        assert mixed.t_ == models[0].t_ + 50
        assert (compress(mixed).n_support_ <= est.budget).all()


def test_bsgd_average_is_the_model_continuing_with_the_mean_step_counter():
    """The average continues as if it had been the model all along: the
    next round shrinks by 1 - 1/(t + 1) and steps by 1 / (alpha (t + 1))
    with t the models' common counter (oracle: the plain model of doc/algorithms.md#bsgd given
    the average's vectors and w = alpha t a)."""
    X, y = _data(2)
    y = np.where(y == 1, 1, -1)
    est = BudgetedSGDClassifier(budget=400, alpha=1e-2, gamma=0.7, maintenance="removal")
    models = [pickle.loads(pickle.dumps(est)).fit(X[i:200:2], y[i:200:2]) for i in range(2)]
    mixed = average(models)
    assert mixed.t_ == 100
    plain = PlainBSGD(rbf(0.7), budget=400, alpha=1e-2, maintenance="removal")
    plain.sv = list(mixed.support_vectors_)
    plain.t = mixed.t_
    plain.w = list(mixed.dual_coef_[0] * 1e-2 * plain.t)
    mixed.partial_fit(X[200:], y[200:])
    plain.partial_fit(X[200:], y[200:])
    assert_allclose(mixed.dual_coef_[0], plain.coef, rtol=1e-9)
    assert mixed.t_ == plain.t


def _over_budget(rule, n_classes, sparse=False, merge_search="lookup"):
    est = BudgetedSGDClassifier(budget=15, alpha=1e-2, gamma=0.7, maintenance=rule,
                                merge_search=merge_search, random_state=0)
    X, y = _data(n_classes, sparse)
    models = [pickle.loads(pickle.dumps(est)).fit(X[i::3], y[i::3]) for i in range(3)]
    return est, X, average(models)


@pytest.mark.parametrize("rule", RULES)
def test_compress_is_the_maintenance_rule_step_by_step(rule):
    """compress against the BSGD oracle's own maintenance steps from the
    same support set (binary; merging with the oracle reading the table)."""
    est, X, mixed = _over_budget(rule, 2)
    assert mixed.n_support_[0] > 15
    out = compress(mixed)
    plain = PlainBSGD(rbf(0.7), budget=15, alpha=1e-2, maintenance=rule,
                      lookup_table=_lookup_table() if rule == "merging" else None)
    plain.sv, plain.t = list(mixed.support_vectors_), mixed.t_
    plain.w = list(mixed.dual_coef_[0] * 1e-2 * plain.t)
    steps = 0
    while len(plain.sv) > 15:
        getattr(plain, "_" + rule)()
        steps += 1
    assert out.n_support_[0] == 15
    assert out.n_maintenance_[0] == mixed.n_maintenance_[0] + steps
    assert_allclose(out.support_vectors_, plain.support_vectors, rtol=1e-6, atol=1e-9)
    assert_allclose(out.dual_coef_[0], plain.coef, rtol=1e-6, atol=1e-9)
    assert_allclose(out.degradation_[0] - mixed.degradation_[0], plain.degradation,
                    rtol=1e-6, atol=1e-12)
    assert_allclose(out.decision_function(X), plain.decision_function(X), rtol=1e-6,
                    atol=1e-9)


@pytest.mark.parametrize("rule", RULES)
def test_compress_shared_multiclass_against_the_oracle(rule):
    # the oracle's shared merge is the golden-section search
    est, X, mixed = _over_budget(rule, 3, merge_search="golden")
    out = compress(mixed)
    plain = PlainMulticlassBSGD(rbf(0.7), 3, budget=15, alpha=1e-2, maintenance=rule)
    plain.sv, plain.t = list(mixed.support_vectors_), mixed.t_
    plain.W = list(mixed.dual_coef_.T * 1e-2 * plain.t)
    while len(plain.sv) > 15:
        getattr(plain, "_" + rule)()
    assert out.n_support_[0] == 15
    assert_allclose(out.support_vectors_, plain.support_vectors, rtol=1e-6, atol=1e-9)
    assert_allclose(out.dual_coef_, plain.coef, rtol=1e-6, atol=1e-9)
    assert_allclose(out.decision_function(X), plain.decision_scores(X), rtol=1e-6, atol=1e-9)


def test_compress_leaves_models_within_budget_and_unbudgeted_ones_as_they_are():
    X, y = _data(3)
    for est in (BudgetedSGDClassifier(budget=300, gamma=0.7, multi_class="ovr"),
                KernelPassiveAggressive(gamma=0.7)):
        model = est.fit(X, y)
        out = compress(model)
        assert out is not model
        assert_array_equal(out.n_support_, model.n_support_)
        assert_array_equal(out.decision_function(X), model.decision_function(X))
    # the one-vs-rest learners over their budget each come back to it
    est, X, mixed = _over_budget("merging", 3)
    ovr = average([BudgetedSGDClassifier(budget=10, gamma=0.7, multi_class="ovr").fit(
        X[i::2], _data(3)[1][i::2]) for i in range(2)])
    assert (compress(ovr).n_support_ == 10).all()


@pytest.mark.parametrize("kw", [dict(maintenance="merging"), dict(maintenance="projection"),
                                dict(maintenance="removal", multi_class="ovr"),
                                dict(maintenance="merging", sparse=True)],
                         ids=["merging-shared", "projection-shared", "removal-ovr", "csr"])
def test_compress_lays_the_learners_out_as_fresh_ones(kw, monkeypatch):
    """After a compression the survivors sit in cells 0, 1, ... at the
    capacity of a fresh learner holding as many, the store holding just
    them (a mixed model then streams as fast as a stream's own model): the
    same model as the compression left in the union's cells, bit for bit;
    those cells, more than a learner of the budget ever holds, are refused
    if a call meets them."""
    import skbudget._mixing as mixing
    kw = dict(kw)
    sparse = kw.pop("sparse", False)
    X, y = _data(3)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X))
    est = BudgetedSGDClassifier(budget=12, gamma=0.7, alpha=1e-3, **kw)
    mixed = average([clone(est).fit(X[i::2], y[i::2]) for i in range(2)])
    out = compress(mixed)
    with monkeypatch.context() as patch:
        patch.setattr(mixing, "_laid_out_afresh", lambda result, j: None)
        in_place = compress(mixed)
    fresh = clone(est).partial_fit(X, y, classes=np.unique(y))    # (at the budget too)
    for learner, new in zip(out._learners, fresh._learners):
        assert learner.n_sv == new.n_sv
        assert learner.capacity == new.capacity < in_place._learners[0].capacity
        assert_array_equal(learner.support_order(), np.arange(learner.n_sv))
        if learner.uses_store:
            assert learner.n_slots == learner.n_sv
    assert_array_equal(out.n_support_, in_place.n_support_)
    for name in ("support_vectors_", "dual_coef_", "intercept_"):
        a, b = getattr(out, name), getattr(in_place, name)
        assert_array_equal(a.toarray() if sp.issparse(a) else a,
                           b.toarray() if sp.issparse(b) else b)
    assert_array_equal(out.decision_function(X), in_place.decision_function(X))
    # the union's cells left in place are more than a learner of the budget
    # ever holds (its arrays follow the support set): refused at the next call
    before = pickle.dumps(in_place)
    with pytest.raises(ValueError, match=r"capacity=\d+ exceeds budget \+ 2 = 14"):
        in_place.partial_fit(X, y)
    assert pickle.dumps(in_place) == before
    continued = out.partial_fit(X, y)
    assert all(learner.capacity <= 13 for learner in continued._learners)


def test_compress_sparse_merging_keeps_csr_support_vectors():
    est, X, mixed = _over_budget("merging", 3, sparse=True)
    out = compress(mixed)
    assert sp.issparse(out.support_vectors_) and out.n_support_[0] == 15


NOT_AVERAGING = [Est for _, Est in all_estimators() if not declaration_of(Est).averages]


@pytest.mark.parametrize("est", [Est() for Est in NOT_AVERAGING],
                         ids=[Est.__name__ for Est in NOT_AVERAGING])
def test_unsupported_estimators_raise_a_type_error_naming_the_reason(est):
    X, y = _data(2)
    model = est.fit(X, y)
    reason = declaration_of(type(est)).averaging.reason
    with pytest.raises(TypeError, match=f"got {type(est).__name__}: ") as refused:
        average([model, model])
    assert str(refused.value).endswith(f": {reason}.")
    with pytest.raises(TypeError, match=type(est).__name__):
        compress(model)
    with pytest.raises(TypeError, match=type(est).__name__):
        ParameterMixingClassifier(est, n_workers=1).fit(X, y)


def test_average_refuses_models_that_differ():
    X, y = _data(3)
    a = BudgetedSGDClassifier(budget=10, gamma=0.7).fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        average([a, BudgetedSGDClassifier(budget=10, gamma=0.7, alpha=1e-3).fit(X, y)])
    with pytest.raises(ValueError, match="gamma_"):
        average([BudgetedSGDClassifier(budget=10).fit(X, y),
                 BudgetedSGDClassifier(budget=10).fit(X[:100] * 2, y[:100])])
    with pytest.raises(ValueError, match="classes_"):
        average([a, BudgetedSGDClassifier(budget=10, gamma=0.7).fit(X[y < 2], y[y < 2])])
    with pytest.raises(ValueError, match="format"):
        average([a, BudgetedSGDClassifier(budget=10, gamma=0.7).fit(sp.csr_matrix(X), y)])
    with pytest.raises(TypeError, match="KernelPassiveAggressive"):
        average([a, KernelPassiveAggressive().fit(X, y)])
    with pytest.raises(ValueError, match="weights"):
        average([a, a], [1.0, np.nan])
    with pytest.raises(ValueError, match="one number per model"):
        average([a, a], [1.0])
    with pytest.raises(ValueError, match="empty"):
        average([])
    kp = KernelPerceptron(hypothesis="averaged", max_iter=1).fit(X, y)
    with pytest.raises(ValueError, match="hypothesis='last'; got hypothesis='averaged'"):
        average([kp, kp])
    with pytest.raises(ValueError, match="hypothesis='last'; got hypothesis='voted'"):
        ParameterMixingClassifier(KernelPerceptron(hypothesis="voted"), n_workers=1).fit(X, y)
    unfitted = BudgetedSGDClassifier()
    with pytest.raises(Exception, match="not fitted"):
        average([a, unfitted])


# the false reason every estimator outside the old hand-kept list was given
_GENERIC_REASON = "is not an skbudget estimator"


def _fitted_pair(cls):
    """Two models of ``cls`` (its default parameters, a fixed random_state
    and gamma) fitted on the two halves of a 3-class problem, and X."""
    X, y = _data(3)
    params = {name: value for name, value in (("random_state", 0), ("gamma", 0.7))
              if name in cls().get_params()}
    return X, [cls(**params).fit(X[i::2], y[i::2]) for i in range(2)]


@pytest.mark.parametrize("name, cls", all_estimators(), ids=[n for n, _ in all_estimators()])
def test_every_estimator_averages_exactly_or_says_why_not(name, cls):
    """average either returns the weighted sum of the decision functions or
    refuses, naming the estimator and its reason (never the generic one)."""
    X, models = _fitted_pair(cls)
    try:
        mixed = average(models, [0.25, 0.75])
    except (TypeError, ValueError) as error:
        message = str(error)
        assert name in message and _GENERIC_REASON not in message
        # the reason it declares follows (the user guide's table shows the same)
        averaging = declaration_of(cls).averaging
        reasons = ([averaging.reason] if not declaration_of(cls).averages
                   else [need.reason for need in averaging.only_with])
        assert any(f": {reason}" in message for reason in reasons)
        with pytest.raises(type(error), match=name):
            compress(models[0])
        with pytest.raises(type(error), match=name):
            ParameterMixingClassifier(cls(), n_workers=1).fit(X, np.arange(len(X)) % 2)
        return
    expected = sum(w * m.decision_function(X) for w, m in zip([0.25, 0.75], models))
    assert_allclose(mixed.decision_function(X), expected, rtol=1e-10)


def test_the_new_families_refuse_with_their_own_reasons():
    from skbudget import BoundedOGDClassifier, BudgetedPassiveAggressive, NystromOGDClassifier

    reasons = {BudgetedPassiveAggressive: "inverse Gram matrix",
               NystromOGDClassifier: "feature map built from the eigenvectors",
               BoundedOGDClassifier: "sampling probabilities",
               KernelOGDClassifier: "budget=None; got budget=20"}
    for cls, reason in reasons.items():
        X, y = _data(2)
        params = {"budget": 20} if cls is KernelOGDClassifier else {}
        model = cls(**params).fit(X, y)
        with pytest.raises((TypeError, ValueError), match=reason):
            average([model, model])
        with pytest.raises((TypeError, ValueError), match=reason):
            compress(model)
        with pytest.raises((TypeError, ValueError), match=reason):
            ParameterMixingClassifier(cls(**params), n_workers=1).fit(X, y)


def test_fourier_ogd_average_is_the_average_of_w_on_the_same_features():
    X, models = _fitted_pair(FourierOGDClassifier)
    mixed = average(models, [1.0, 3.0])
    assert_array_equal(mixed.random_weights_, models[0].random_weights_)
    assert_allclose(mixed.coef_, models[0].coef_ + 3 * models[1].coef_, rtol=1e-15)
    assert_array_equal(mixed.intercept_, 0.0)
    assert mixed.n_updates_ == sum(m.n_updates_ for m in models)
    assert mixed.n_rounds_ == sum(m.n_rounds_ for m in models)
    assert compress(mixed).coef_.tolist() == mixed.coef_.tolist()
    again = pickle.loads(pickle.dumps(mixed))       # a saved average continues alike
    X2, y2 = _data(3, seed=1)
    mixed.partial_fit(X2, y2)
    again.partial_fit(X2, y2)
    assert_array_equal(mixed.coef_, again.coef_)
    assert mixed.n_rounds_ == sum(m.n_rounds_ for m in models) + len(y2)


@pytest.mark.parametrize("other", [dict(random_state=1), dict(n_components=300),
                                   dict(random_state=None)],
                         ids=["random_state", "n_components", "unseeded"])
def test_fourier_ogd_models_of_different_draws_are_refused(other):
    X, y = _data(2)
    a = FourierOGDClassifier(gamma=0.7, random_state=None if other.get("random_state", 0) is None
                             else 0).fit(X, y)
    b = FourierOGDClassifier(**{"gamma": 0.7, "random_state": 0, **other}).fit(X, y)
    with pytest.raises(ValueError, match="different random Fourier features.*same integer "
                                         "random_state, n_components and gamma"):
        average([a, b])


def test_fourier_ogd_models_of_dense_and_csr_input_average():
    """FOGD stores no vectors: a model fitted on CSR rows averages with one
    fitted on dense rows (the features are the same)."""
    X, y = _data(2)
    est = FourierOGDClassifier(n_components=50, gamma=0.7, random_state=0)
    models = [clone(est).fit(X[:200], y[:200]), clone(est).fit(sp.csr_matrix(X[200:]), y[200:])]
    mixed = average(models)
    assert_allclose(mixed.decision_function(X),
                    sum(0.5 * m.decision_function(X) for m in models), rtol=1e-10)


def _two_shard_average(est, X, y):
    """The average, weighted by rows, of ``est`` trained from scratch on
    each half of X (the shards of ParameterMixingClassifier with 2 workers),
    and the shards' lengths."""
    cut = int(np.rint(X.shape[0] / 2))
    parts = [(X[:cut], y[:cut]), (X[cut:], y[cut:])]
    models = [clone(est).partial_fit(Xs, ys, classes=np.unique(y)) for Xs, ys in parts]
    rows = np.array([len(ys) for _, ys in parts], dtype=float)
    return average(models, rows / rows.sum()), int(rows.max())


@pytest.mark.parametrize("est", [FourierOGDClassifier(n_components=100, gamma=0.3,
                                                      random_state=0),
                                 KernelOGDClassifier(gamma=0.3, alpha=1e-3)],
                         ids=["fogd", "kogd"])
def test_threads_mixing_once_is_the_average_of_the_two_shard_models(est):
    X, y = _stream(801)
    expected, half = _two_shard_average(est, X, y)
    clf = ParameterMixingClassifier(est, mix_every=half, n_workers=2).fit(X, y)
    assert clf.n_mixing_rounds_ == 1
    assert_allclose(clf.estimator_.decision_function(X), expected.decision_function(X),
                    rtol=1e-12, atol=1e-14)
    assert clf.estimator_.n_rounds_ == len(y)
    many = ParameterMixingClassifier(est, mix_every=100, n_workers=2).fit(X, y)
    assert many.n_mixing_rounds_ == 5 and many.score(X, y) > 0.8


def test_threads_give_unseeded_fourier_workers_one_draw():
    """random_state=None: every worker's copy draws the same features (a
    fixed seed drawn once per fit), so their models average."""
    X, y = _stream(600)
    clf = ParameterMixingClassifier(FourierOGDClassifier(n_components=50, gamma=0.3),
                                    mix_every=100, n_workers=3).fit(X, y)
    assert isinstance(clf.estimator_.random_state, int)
    assert clf.estimator.random_state is None       # the estimator untouched
    assert clf.score(X, y) > 0.8


def test_the_mean_step_counter_of_weights_whose_sum_overflows():
    """The weighted mean of the step counters with finite weights whose sum
    is not (1.5e308 twice): the mean of the counters, as with equal small
    weights."""
    from types import SimpleNamespace

    from skbudget._averaging import PegasosState
    sources = [SimpleNamespace(n_steps=100), SimpleNamespace(n_steps=201)]
    for weights in ([1.5e308, 1.5e308], [1.0, 1.0], [1e-300, 1e-300]):
        assert PegasosState.steps(sources, np.array(weights)) == 150
    assert PegasosState.steps(sources, np.array([1.5e308, 0.5e308])) == 125


HUGE_WEIGHTS = [e for e in ESTIMATORS if e[2] == 3]


@pytest.mark.parametrize("name, est, k", HUGE_WEIGHTS, ids=[e[0] for e in HUGE_WEIGHTS])
def test_average_with_huge_weights_is_the_scaled_average_or_says_the_weights_are_too_large(
        name, est, k):
    """``average`` is ``sum_k w_k f_k``: weights of 1e300 give 1e300 times
    the average of weights 1 (for models whose coefficients stay in range);
    weights of 1e308 (valid, but whose sum overflows) are refused with a
    message naming them when the average's coefficients overflow, the
    models unchanged."""
    X, y, models = _shards(est, k, False, 2)
    before = [pickle.dumps(m) for m in models]
    unit = average(models, [1.0, 1.0]).decision_function(X)
    if not models[0]._shared_support:    # (a shared model's squared rows overflow at 1e300)
        assert_allclose(average(models, [1e300, 1e300]).decision_function(X) / 1e300, unit,
                        rtol=1e-12)
    with pytest.raises(ValueError, match=r"weights \[1e\+308, 1e\+308\] are too large"):
        average(models, [1e308, 1e308])
    assert [pickle.dumps(m) for m in models] == before


# ----------------------------------------------------------------------
# ParameterMixingClassifier
# ----------------------------------------------------------------------
def _stream(n=3000, seed=0):
    X, y = make_classification(n, n_features=6, n_informative=5, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, class_sep=1.5, random_state=seed)
    return X, y


@parametrize_with_checks([ParameterMixingClassifier(
    BudgetedSGDClassifier(budget=30, random_state=0), mix_every=50, n_workers=2)])
def test_scikit_learn_checks(estimator, check):
    check(estimator)


def test_one_worker_is_partial_fit_in_blocks():
    X, y = _stream(1200)
    est = BudgetedSGDClassifier(budget=40, alpha=1e-3, gamma=0.3)
    mixed = ParameterMixingClassifier(est, mix_every=300, n_workers=1).fit(X, y)
    single, sizes = BudgetedSGDClassifier(budget=40, alpha=1e-3, gamma=0.3), {}
    for start in range(0, 1200, 300):
        single.partial_fit(X[start:start + 300], y[start:start + 300], classes=np.unique(y))
        sizes[start + 300] = int(single.n_support_.sum())
    assert_allclose(mixed.decision_function(X), single.decision_function(X), rtol=1e-8,
                    atol=1e-10)
    assert mixed.estimator_.n_rounds_ == 1200 and mixed.n_mixing_rounds_ == 4
    assert mixed.estimator_.n_mistakes_ == single.n_mistakes_
    # the mixed model's support size is known at the ends of the mixing
    # rounds: those that are points of the curve (bins 8 wide: 600, 1200)
    assert mixed.estimator_.support_curve_.tolist() == [[600, sizes[600]],
                                                        [1200, sizes[1200]]]
    assert_array_equal(mixed.estimator_.mistake_curve_, single.mistake_curve_)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_threads_train_one_budget_model(sparse):
    X, y = _stream()
    Xtr = sp.csr_matrix(X) if sparse else X
    est = BudgetedSGDClassifier(budget=50, alpha=1e-3, gamma="scale", random_state=0)
    blas_threads = [pool["num_threads"] for pool in threadpool_info()]
    clf = ParameterMixingClassifier(est, mix_every=250, n_workers=3).fit(Xtr, y)
    assert [pool["num_threads"] for pool in threadpool_info()] == blas_threads
    assert type(clf.estimator_) is BudgetedSGDClassifier
    assert clf.estimator_.n_support_[0] <= 50
    assert clf.estimator_.gamma == pytest.approx(1 / (6 * X.var()))
    assert clf.n_workers_ == 3 and clf.n_mixing_rounds_ == 4
    assert clf.estimator_.n_rounds_ == 3000
    assert clf.estimator_.mistake_curve_[-1, 0] == 3000
    support = clf.estimator_.support_curve_     # at the rounds' ends (750 rows each)
    assert support[-1].tolist() == [3000, clf.estimator_.n_support_.sum()]
    assert set(support[:, 0]) <= {750, 1500, 2250, 3000}
    assert set(support[:, 0]) <= set(clf.estimator_.mistake_curve_[:, 0])
    assert clf.score(Xtr, y) > 0.8
    assert est.gamma == "scale" and not hasattr(est, "classes_")   # the estimator untouched
    assert_array_equal(clf.classes_, [0, 1, 2])


def test_unbudgeted_models_keep_the_union():
    X, y = _stream(800)
    clf = ParameterMixingClassifier(KernelPassiveAggressive(gamma=0.3), mix_every=200,
                                    n_workers=2).fit(X, y)
    assert clf.estimator_.n_support_.sum() == clf.estimator_.n_updates_
    assert clf.score(X, y) > 0.8


def test_a_failing_round_raises_and_keeps_the_fitted_model():
    X, y = _stream(600)
    clf = ParameterMixingClassifier(KernelPassiveAggressive(gamma=0.3), mix_every=100,
                                    n_workers=2).fit(X, y)
    fitted = clf.estimator_
    X_bad = X.copy()
    X_bad[450] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.fit(X_bad, y)
    assert clf.estimator_ is fitted


# ----------------------------------------------------------------------
# on a dask.distributed LocalCluster
# ----------------------------------------------------------------------
distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def client():
    """A local cluster of 2 worker processes, 1 thread each."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        yield client


def test_dask_workers_train_on_their_own_partitions(client):
    X, y = _stream(1200)
    est = BudgetedSGDClassifier(budget=50, alpha=1e-3, gamma=0.3, maintenance="merging")
    local = ParameterMixingClassifier(est, mix_every=200, n_workers=2).fit(X, y)
    on_numpy = ParameterMixingClassifier(est, mix_every=200, client=client).fit(X, y)
    Xd, yd = da.from_array(X, chunks=(200, 3)), da.from_array(y, chunks=200)
    on_dask = ParameterMixingClassifier(est, mix_every=200, client=client).fit(Xd, yd)
    assert on_numpy.n_workers_ == on_dask.n_workers_ == 2
    # the same shards (contiguous halves), the same rounds: the same model
    for clf in (on_numpy, on_dask):
        assert_allclose(clf.decision_function(X), local.decision_function(X), rtol=1e-9,
                        atol=1e-12)
        assert clf.estimator_.n_rounds_ == 1200
    Xs = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X))
    on_csr = ParameterMixingClassifier(est, mix_every=200, client=client).fit(Xs, y)
    assert sp.issparse(on_csr.estimator_.support_vectors_)
    assert_allclose(on_csr.decision_function(Xs), ParameterMixingClassifier(
        est, mix_every=200, n_workers=2).fit(Xs, y).decision_function(Xs), rtol=1e-9)


@pytest.mark.parametrize("random_state", [0, None], ids=["seeded", "unseeded"])
def test_dask_workers_mix_fourier_models_as_the_threads_do(client, random_state):
    X, y = _stream(800)
    est = FourierOGDClassifier(n_components=60, gamma=0.3, random_state=random_state)
    on_dask = ParameterMixingClassifier(est, mix_every=400, client=client).fit(
        da.from_array(X, chunks=(400, 3)), da.from_array(y, chunks=400))
    if random_state is None:
        est = est.set_params(random_state=on_dask.estimator_.random_state)
    expected, _ = _two_shard_average(est, X, y)
    assert_allclose(on_dask.estimator_.coef_, expected.coef_, rtol=1e-12, atol=1e-15)


def test_numpy_input_travels_in_pieces_as_the_rounds_need_them(client, monkeypatch):
    """An in-memory X reaches each worker in pieces (here of 250 rows,
    across the rounds' boundaries of 200), each before the round that reads
    it; the second pass reads the pieces the workers kept."""
    from skbudget.parallel import _dask as parallel
    monkeypatch.setattr(parallel, "_PIECE_ROWS", 250)
    X, y = _stream(1200)
    est = BudgetedSGDClassifier(budget=50, alpha=1e-3, gamma=0.3, max_iter=2)
    local = ParameterMixingClassifier(est, mix_every=200, n_workers=2).fit(X, y)
    on_dask = ParameterMixingClassifier(est, mix_every=200, client=client).fit(X, y)
    assert on_dask.n_mixing_rounds_ == local.n_mixing_rounds_ == 6
    assert_allclose(on_dask.decision_function(X), local.decision_function(X), rtol=1e-9,
                    atol=1e-12)


def _assert_same_model(a, b, X=None, y=None):
    """``a`` and ``b`` are the same model bit for bit: every learner's
    state but the scratch ``k_row`` (the kernel row of a round's example,
    filled before it is read), the stored vectors (block mode), the online
    record and the fitted attributes; and, given ``X``, ``y``, the same
    scores after both continue over them."""
    assert type(a) is type(b)
    for la, lb in zip(a._learners, b._learners, strict=True):
        sa, sb = la.get_state(), lb.get_state()
        assert sa.keys() == sb.keys()
        for name in set(sa) - {"k_row"}:
            assert_array_equal(np.asarray(sa[name]), np.asarray(sb[name]), err_msg=name)
    if not a._driver.uses_store:
        for pa, pb in zip(a._driver.pools, b._driver.pools, strict=True):
            assert_array_equal(pa.toarray() if sp.issparse(pa) else pa,
                               pb.toarray() if sp.issparse(pb) else pb)
    ra, rb = a._record, b._record
    for name in ("n_rounds", "n_mistakes", "width", "last_support", "points",
                 "support_points"):
        assert_array_equal(getattr(ra, name), getattr(rb, name), err_msg=name)
    for name in ("n_support_", "classes_", "n_iter_", "intercept_"):
        if hasattr(a, name):
            assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    if X is not None:
        a, b = pickle.loads(pickle.dumps(a)), pickle.loads(pickle.dumps(b))
        assert_array_equal(a.partial_fit(X, y).decision_function(X),
                           b.partial_fit(X, y).decision_function(X))


@pytest.mark.parametrize("est", [
    BudgetedSGDClassifier(budget=40, alpha=1e-3, gamma=0.3, maintenance="merging"),
    BudgetedSGDClassifier(budget=30, alpha=1e-3, gamma=0.3, maintenance="projection",
                          multi_class="ovr", max_iter=2),
    KernelPassiveAggressive(C=0.5, gamma=0.3),
    KernelPerceptron(gamma=0.3, max_iter=1),
], ids=["bsgd-merging-shared", "bsgd-projection-ovr-2-passes", "pa", "kp"])
def test_workers_mixing_among_themselves_is_the_threads_model_bit_for_bit(client, est):
    """The dask workers mix among themselves (each sends its model to the
    other, and each averages and compresses the round's models itself and
    continues from the result): the model is the one the threads mixing on
    the client give for the same shards, bit for bit, from NumPy, CSR and
    dask input; with shards of different lengths, the first worker (which
    returns the model) or the other one has no rows in the last rounds."""
    X, y = _stream(1400)
    local = ParameterMixingClassifier(est, mix_every=200, n_workers=2).fit(X, y)
    on_numpy = ParameterMixingClassifier(est, mix_every=200, client=client).fit(X, y)
    _assert_same_model(on_numpy.estimator_, local.estimator_, *_stream(300, seed=1))
    assert on_numpy.n_mixing_rounds_ == local.n_mixing_rounds_
    Xs = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X))
    _assert_same_model(
        ParameterMixingClassifier(est, mix_every=200, client=client).fit(Xs, y).estimator_,
        ParameterMixingClassifier(est, mix_every=200, n_workers=2).fit(Xs, y).estimator_)
    for chunks in ((900, 500), (500, 900)):         # the first's shard longer, then shorter
        Xd, yd = da.from_array(X, chunks=(chunks, 6)), da.from_array(y, chunks=(chunks,))
        on_dask = ParameterMixingClassifier(est, mix_every=200, client=client).fit(Xd, yd)
        on_threads = ParameterMixingClassifier(est, mix_every=200, n_workers=2).fit(Xd, yd)
        assert on_dask.n_workers_ == on_threads.n_workers_ == 2
        _assert_same_model(on_dask.estimator_, on_threads.estimator_)
        assert_array_equal(on_dask.decision_function(X), on_threads.decision_function(X))


def test_three_worker_processes_mixing_among_themselves_give_the_threads_model():
    """Three workers, each sending its model to the two others and mixing
    the round's models itself (shards of 300, 600 and 500 rows, rounds of
    150: the first, which returns the model, idle in the last two rounds
    of each pass): the threads' model bit for bit, over two passes."""
    X, y = _stream(1400)
    Xd, yd = da.from_array(X, chunks=((300, 600, 500), 6)), da.from_array(y, chunks=((300, 600,
                                                                                     500),))
    est = BudgetedSGDClassifier(budget=30, alpha=1e-3, gamma=0.3, maintenance="merging",
                                max_iter=2)
    local = ParameterMixingClassifier(est, mix_every=150, n_workers=3).fit(Xd, yd)
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        on_dask = ParameterMixingClassifier(est, mix_every=150, client=client).fit(Xd, yd)
    assert on_dask.n_workers_ == local.n_workers_ == 3
    assert on_dask.n_mixing_rounds_ == local.n_mixing_rounds_ == 8
    _assert_same_model(on_dask.estimator_, local.estimator_, *_stream(300, seed=1))


def test_a_cluster_of_worker_threads_gives_the_threads_model():
    """A LocalCluster of threads (``processes=False``, the user guide's
    advice on one machine): the models pass between the workers in
    process, unpickled; the same model as the threads without dask, bit
    for bit, from NumPy and dask input."""
    X, y = _stream(1400)
    est = BudgetedSGDClassifier(budget=40, alpha=1e-3, gamma=0.3, maintenance="merging")
    local = ParameterMixingClassifier(est, mix_every=200, n_workers=2).fit(X, y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        on_numpy = ParameterMixingClassifier(est, mix_every=200, client=client).fit(X, y)
        Xd, yd = da.from_array(X, chunks=(700, 6)), da.from_array(y, chunks=700)
        on_dask = ParameterMixingClassifier(est, mix_every=200, client=client).fit(Xd, yd)
    assert on_numpy.n_workers_ == on_dask.n_workers_ == 2
    _assert_same_model(on_numpy.estimator_, local.estimator_, *_stream(300, seed=1))
    _assert_same_model(on_dask.estimator_, local.estimator_)


def _sent_bytes(dask_worker):
    return dask_worker.transfer_outgoing_bytes_total


def test_a_persisted_dask_array_stays_on_the_workers_that_hold_it(client):
    """Each worker streams the partitions it holds: no partition of X
    moves, to another worker or to the client (only models travel, in the
    calls' replies)."""
    X, y = _stream(4000)
    addresses = sorted(client.scheduler_info()["workers"])
    # partitions 0, 2 on the second worker, 1, 3 on the first (persist
    # computes each on the worker holding its data)
    chunks = [client.scatter(X[i * 1000:(i + 1) * 1000], workers=[addresses[1 - i % 2]])
              for i in range(4)]
    labels = [client.scatter(y[i * 1000:(i + 1) * 1000], workers=[addresses[1 - i % 2]])
              for i in range(4)]
    Xd = da.concatenate([da.from_delayed(c, shape=(1000, 6), dtype=X.dtype) for c in chunks])
    yd = da.concatenate([da.from_delayed(c, shape=(1000,), dtype=y.dtype) for c in labels])
    Xd, yd = client.persist([Xd.rechunk((1000, 6)), yd.rechunk(1000)])
    futures = distributed.futures_of(Xd)
    with client.as_current():
        distributed.wait(futures + distributed.futures_of(yd))
    holder = {key[1]: min(workers) for key, workers in client.who_has(futures).items()}
    assert [holder[i] for i in range(4)] == [addresses[1 - i % 2] for i in range(4)]
    before, held = client.run(_sent_bytes), _keys(client)
    est = BudgetedSGDClassifier(budget=30, alpha=1e-3, gamma=0.3)
    clf = ParameterMixingClassifier(est, mix_every=250, client=client).fit(Xd, yd)
    sent = sum(client.run(_sent_bytes).values()) - sum(before.values())
    assert sent < X[:1000].nbytes / 4
    assert clf.n_workers_ == 2 and clf.estimator_.n_rounds_ == 4000
    # each worker streams the partitions it holds, in order: the threads
    # given the same shards give the same model
    order = np.concatenate([np.arange(i * 1000, (i + 1) * 1000) for address in addresses
                            for i in range(4) if holder[i] == address])
    local = ParameterMixingClassifier(est, mix_every=250, n_workers=2).fit(X[order], y[order])
    assert_allclose(clf.decision_function(X), local.decision_function(X), rtol=1e-9,
                    atol=1e-12)
    # the fit's own keys (actors, partitions' pairs) are released in the
    # background, the collection's stay
    deadline = time.monotonic() + 10
    while _keys(client) != held and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _keys(client) == held


def test_a_persisted_dask_array_on_one_worker_is_shared_out(client):
    """Partitions all held by one worker would leave the other idle: the
    shards are then consecutive groups, as for data not yet computed."""
    X, y = _stream(1200)
    address = sorted(client.scheduler_info()["workers"])[0]
    Xd, yd = client.persist([da.from_array(X, chunks=(300, 6)), da.from_array(y, chunks=300)],
                            workers=[address])
    with client.as_current():
        distributed.wait(distributed.futures_of(Xd) + distributed.futures_of(yd))
    est = BudgetedSGDClassifier(budget=30, alpha=1e-3, gamma=0.3)
    clf = ParameterMixingClassifier(est, mix_every=200, client=client).fit(Xd, yd)
    local = ParameterMixingClassifier(est, mix_every=200, n_workers=2).fit(X, y)
    assert clf.n_workers_ == 2
    assert_allclose(clf.decision_function(X), local.decision_function(X), rtol=1e-9,
                    atol=1e-12)


def test_a_persisted_dask_array_held_unevenly_is_balanced(client):
    """Three partitions on one worker, one on the other: the first's last
    partition moves to the second (every round waits for the longest
    shard), and the shards are the halves, in order."""
    X, y = _stream(1200)
    addresses = sorted(client.scheduler_info()["workers"])
    where = [addresses[0]] * 3 + [addresses[1]]
    chunks = [client.scatter(X[i * 300:(i + 1) * 300], workers=[a]) for i, a in enumerate(where)]
    labels = [client.scatter(y[i * 300:(i + 1) * 300], workers=[a]) for i, a in enumerate(where)]
    Xd = da.concatenate([da.from_delayed(c, shape=(300, 6), dtype=X.dtype) for c in chunks])
    yd = da.concatenate([da.from_delayed(c, shape=(300,), dtype=y.dtype) for c in labels])
    Xd, yd = client.persist([Xd.rechunk((300, 6)), yd.rechunk(300)])
    with client.as_current():
        distributed.wait(distributed.futures_of(Xd) + distributed.futures_of(yd))
    holder = {key[1]: min(workers)
              for key, workers in client.who_has(distributed.futures_of(Xd)).items()}
    assert [holder[i] for i in range(4)] == where
    est = BudgetedSGDClassifier(budget=30, alpha=1e-3, gamma=0.3)
    clf = ParameterMixingClassifier(est, mix_every=200, client=client).fit(Xd, yd)
    local = ParameterMixingClassifier(est, mix_every=200, n_workers=2).fit(X, y)
    assert clf.n_workers_ == 2 and clf.n_mixing_rounds_ == 3      # 600 rows each
    _assert_same_model(clf.estimator_, local.estimator_)


def _keys(client):
    return {key for keys in client.has_what().values() for key in keys}


# the blocks of a lazily generated X this process made, holds now, and held
# at most at once (on a worker of the cluster: that worker's)
_BLOCKS = {"made": 0, "alive": 0, "peak": 0}
_BLOCKS_LOCK = threading.RLock()    # (a local fit makes blocks in several threads)
_BLOCK_ROWS, _N_BLOCKS = 100, 12


def _dropped_block():
    with _BLOCKS_LOCK:
        _BLOCKS["alive"] -= 1


def _block_values(i):
    """Block ``i`` of a seeded stream: rows and labels."""
    rng = np.random.default_rng(i)
    X = rng.normal(size=(_BLOCK_ROWS, 6))
    return X, (X[:, 0] + X[:, 1] > 0).astype(np.int64) + (X[:, 2] > 1)


def _generated_block(block_id=None):
    """Block ``block_id`` of a lazily generated X, counted while it lives."""
    X = _block_values(block_id[0])[0]
    with _BLOCKS_LOCK:
        _BLOCKS.update(made=_BLOCKS["made"] + 1, alive=_BLOCKS["alive"] + 1,
                       peak=max(_BLOCKS["peak"], _BLOCKS["alive"] + 1))
    weakref.finalize(X, _dropped_block)
    return X


def _generated_labels(block_id=None):
    return _block_values(block_id[0])[1]


def _blocks_seen(reset=False):
    with _BLOCKS_LOCK:
        seen = dict(_BLOCKS)
        if reset:
            _BLOCKS.update(made=0, alive=0, peak=0)
    return seen


def _lazy_stream():
    """A lazily generated dask array (each block from its own seed, as
    ``benchmarks/bench_parallel.py --part large``) and its labels."""
    chunks = ((_BLOCK_ROWS,) * _N_BLOCKS,)
    Xd = da.map_blocks(_generated_block, chunks=chunks + ((6,),), dtype=np.float64)
    yd = da.map_blocks(_generated_labels, chunks=chunks, dtype=np.int64)
    return Xd, yd


@pytest.mark.parametrize("where", ["threads", "cluster"])
@pytest.mark.parametrize("n_passes", [1, 2])
def test_a_lazily_generated_dask_array_is_consumed_block_by_block(client, where, n_passes):
    """A dask array generated lazily is never computed whole: no task of
    it runs on the scheduler; each worker computes a block when a round
    reads its rows, holds at most the two blocks of a round (150 rows
    over blocks of 100), and drops it after (computing it again in the
    second pass); the model is the one of the same rows in memory."""
    X = np.concatenate([_block_values(i)[0] for i in range(_N_BLOCKS)])
    y = np.concatenate([_block_values(i)[1] for i in range(_N_BLOCKS)])
    est = BudgetedSGDClassifier(budget=30, alpha=1e-3, gamma=0.3, max_iter=n_passes)
    local = ParameterMixingClassifier(est, mix_every=150, n_workers=2).fit(X, y)
    clf = ParameterMixingClassifier(est, mix_every=150, n_workers=2,
                                    client=client if where == "cluster" else None)
    if where == "cluster":
        client.run(_blocks_seen, True)
        with distributed.get_task_stream(client) as tasks:
            clf.fit(*_lazy_stream())
        assert not [t for t in tasks.data if "generated" in str(t["key"])]
        seen = list(client.run(_blocks_seen, True).values())
    else:
        _blocks_seen(reset=True)
        clf.fit(*_lazy_stream())
        seen = [_blocks_seen(reset=True)]
    assert sum(s["made"] for s in seen) == n_passes * _N_BLOCKS
    assert all(s["alive"] == 0 for s in seen)
    assert max(s["peak"] for s in seen) <= (2 if where == "cluster" else 4)
    _assert_same_model(clf.estimator_, local.estimator_)


def test_partitions_that_share_a_task_are_computed_on_the_cluster(client):
    """The partitions of ``X - X.mean(axis=0)`` share the mean's task:
    they are computed on the cluster before the first round (the mean
    once, not per partition on the workers' own schedulers); the model of
    the same rows in memory."""
    X, y = _stream(1200)
    Xd = da.from_array(X, chunks=(300, 6))
    centred = Xd - Xd.mean(axis=0)
    est = BudgetedSGDClassifier(budget=30, alpha=1e-3, gamma=0.3)
    with distributed.get_task_stream(client) as tasks:
        clf = ParameterMixingClassifier(est, mix_every=150, client=client).fit(
            centred, da.from_array(y, chunks=300))
    assert [t for t in tasks.data if "mean" in str(t["key"])]
    local = ParameterMixingClassifier(est, mix_every=150, n_workers=2).fit(
        centred.compute(), y)
    _assert_same_model(clf.estimator_, local.estimator_)


def test_clone_shares_the_client(client):
    clf = ParameterMixingClassifier(KernelPassiveAggressive(C=0.3), mix_every=7, client=client)
    copy = clone(clf)
    assert copy.client is client and copy.estimator is not clf.estimator
    assert copy.get_params()["estimator__C"] == 0.3 and copy.mix_every == 7


@pytest.mark.parametrize("client", [False, "tcp://127.0.0.1:8786", object()],
                         ids=["bool", "address", "object"])
def test_a_client_that_is_no_dask_client_is_scikit_learns_error(client):
    X, y = _stream(60)
    clf = ParameterMixingClassifier(KernelPassiveAggressive(), mix_every=20, client=client)
    with pytest.raises(ValueError, match="The 'client' parameter of ParameterMixingClassifier "
                                         "must be None or an object implementing 'submit'"):
        clf.fit(X, y)
    assert not hasattr(clf, "estimator_")


def test_dask_array_without_a_client_runs_on_threads():
    X, y = _stream(900)
    est = KernelPassiveAggressive(gamma=0.3)
    on_threads = ParameterMixingClassifier(est, mix_every=150, n_workers=3).fit(
        da.from_array(X, chunks=(100, 6)), da.from_array(y, chunks=100))
    local = ParameterMixingClassifier(est, mix_every=150, n_workers=3).fit(X, y)
    assert on_threads.n_workers_ == 3
    assert_allclose(on_threads.decision_function(X), local.decision_function(X), rtol=1e-12)


def test_dask_dataframe_input(client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y = _stream(1000)
    frame = dd.from_pandas(pd.DataFrame(X, columns=[f"f{i}" for i in range(6)]), npartitions=4)
    labels = dd.from_pandas(pd.Series(y), npartitions=4)
    clf = ParameterMixingClassifier(KernelPassiveAggressive(gamma=0.3), mix_every=100,
                                    client=client).fit(frame, labels)
    assert clf.estimator_.n_rounds_ == 1000 and clf.score(X, y) > 0.8


def test_persisted_dask_dataframe_with_a_client_that_is_not_the_default(client):
    # the partitions are only in the cluster's memory: their lengths must be
    # computed by the client given, not by dask's default scheduler
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y = _stream(1000)
    frame = client.persist(dd.from_pandas(pd.DataFrame(X, columns=[f"f{i}" for i in range(6)]),
                                          npartitions=4))
    labels = client.persist(dd.from_pandas(pd.Series(y), npartitions=4))
    clf = ParameterMixingClassifier(KernelPassiveAggressive(gamma=0.3), mix_every=100,
                                    client=client).fit(frame, labels)
    assert clf.estimator_.n_rounds_ == 1000 and clf.score(X, y) > 0.8


def test_a_task_that_raises_on_a_worker_is_a_clear_error(client):
    X, y = _stream(600)
    Xd = da.from_array(np.where(np.arange(600)[:, None] == 500, np.inf, X), chunks=(150, 6))
    clf = ParameterMixingClassifier(BudgetedSGDClassifier(gamma=0.3), mix_every=100,
                                    client=client)
    with pytest.raises(ValueError, match="infinity"):
        clf.fit(Xd, da.from_array(y, chunks=150))
    assert not hasattr(clf, "estimator_")
    # the other worker's part ended: the cluster fits again at once
    start = time.monotonic()
    clf.fit(X, y)
    assert time.monotonic() - start < 5 and clf.estimator_.n_rounds_ == 600


def test_holders_are_the_workers_of_keys_in_memory_only():
    """A task the scheduler is releasing (or computing, or has not
    computed) is held by no one: distributed >= 2024.x sets its
    ``who_has`` to None, 2024.1 to an empty set; a task in memory is held
    by its workers."""
    from types import SimpleNamespace

    from skbudget.parallel._dask import _holders

    def task(state, *holders):
        # a list stands for the set of WorkerState
        return SimpleNamespace(state=state, who_has=[SimpleNamespace(address=a)
                                                     for a in holders] or None)

    scheduler = SimpleNamespace(tasks={
        "in-memory": task("memory", "tcp://b", "tcp://a"),
        "released": task("released"),
        "processing": task("processing"),
        "released-2024.1": SimpleNamespace(state="released", who_has=[]),
    })
    assert _holders(scheduler, ["in-memory", "released", "processing", "released-2024.1",
                                "unknown"]) == [["tcp://a", "tcp://b"], [], [], [], []]


@pytest.mark.parametrize("persist", [False, True], ids=["computed", "persisted"])
def test_the_same_dask_collection_refits_back_to_back(client, persist):
    """The same dask collection fitted again and again at once: the
    partitions an earlier fit computed are being released by the scheduler
    (not held: computed again), a persisted collection's stay where they
    are (the first fit waiting for the persist); every fit is the same
    model."""
    X, y = _stream(1200)
    Xd, yd = da.from_array(X, chunks=(150, 6)), da.from_array(y, chunks=150)
    if persist:                 # fitted at once, while the persist may still compute
        Xd, yd = client.persist([Xd, yd])
    est = BudgetedSGDClassifier(budget=30, alpha=1e-3, gamma=0.3)
    first = ParameterMixingClassifier(est, mix_every=150, client=client).fit(Xd, yd)
    for _ in range(6):
        again = ParameterMixingClassifier(est, mix_every=150, client=client).fit(Xd, yd)
        assert_array_equal(again.decision_function(X), first.decision_function(X))


def _slowly(block):
    time.sleep(1.0)
    return block


def test_a_collection_still_being_persisted_is_fitted_where_it_lands(client):
    """Fitting a collection whose persist is still computing (its tasks
    held by no worker yet: the scheduler's ``who_has`` None) waits for it:
    the same model as a fit once it has ended, the partitions staying
    where the persist put them."""
    X, y = _stream(800)
    Xd = client.persist(da.from_array(X, chunks=(200, 6)).map_blocks(_slowly))
    yd = client.persist(da.from_array(y, chunks=200))
    est = KernelPassiveAggressive(gamma=0.3)
    while_persisting = ParameterMixingClassifier(est, mix_every=100, client=client).fit(Xd, yd)
    assert while_persisting.n_workers_ == 2
    with distributed.get_task_stream(client) as tasks:
        persisted = ParameterMixingClassifier(est, mix_every=100, client=client).fit(Xd, yd)
    assert not [task for task in tasks.data if "slowly" in str(task["key"])]
    _assert_same_model(while_persisting.estimator_, persisted.estimator_)


def _numpy_message(X, y):
    """The message of the ValueError fit raises on NumPy input."""
    est = ParameterMixingClassifier(BudgetedSGDClassifier(gamma=0.3), mix_every=100,
                                    n_workers=2)
    with pytest.raises(ValueError) as raised:
        est.fit(X, y)
    return str(raised.value)


def _bad_inputs():
    X, y = _stream(600)
    X_inf = X.copy()
    X_inf[500, 2] = np.inf
    return {"2d-y": (X, np.c_[y, y]), "lengths": (X, y[:590]), "y-longer": (X[:590], y),
            "inf": (X_inf, y)}


@pytest.mark.parametrize("where", ["threads", "cluster", "cluster-persisted",
                                   "cluster-persisting"])
@pytest.mark.parametrize("case", list(_bad_inputs()))
def test_bad_dask_input_gets_scikit_learns_message_for_numpy(client, case, where):
    """A 2-D ``y``, X and y of different lengths, an inf in a partition:
    the message ``fit`` gives for the NumPy equivalent (scikit-learn's),
    each time the same collection is fitted (persisted, or still being
    persisted at the first fit), and the meta-estimator as it was."""
    X, y = _bad_inputs()[case]
    message = _numpy_message(X, y)
    Xd, yd = da.from_array(X, chunks=(150, 6)), da.from_array(y, chunks=150)
    if where == "cluster-persisted":
        Xd, yd = client.persist([Xd, yd])
    elif where == "cluster-persisting":
        Xd, yd = client.persist([Xd.map_blocks(_slowly), yd])
    clf = ParameterMixingClassifier(BudgetedSGDClassifier(gamma=0.3), mix_every=100,
                                    n_workers=2, client=client if where != "threads" else None)
    for _ in range(3):
        with pytest.raises(ValueError) as raised:
            clf.fit(Xd, yd)
        assert str(raised.value) == message
        assert not hasattr(clf, "estimator_")


def test_a_dask_column_vector_y_is_raveled_with_scikit_learns_warning(client):
    from sklearn.exceptions import DataConversionWarning
    X, y = _stream(600)
    est = KernelPassiveAggressive(gamma=0.3)
    with pytest.warns(DataConversionWarning, match="column-vector y") as warned:
        clf = ParameterMixingClassifier(est, mix_every=100, client=client).fit(
            da.from_array(X, chunks=(150, 6)), da.from_array(y[:, None], chunks=(150, 1)))
    assert len([w for w in warned if w.category is DataConversionWarning]) == 1
    assert_array_equal(clf.decision_function(X), ParameterMixingClassifier(
        est, mix_every=100, client=client).fit(X, y).decision_function(X))


class _ExitingBSGD(BudgetedSGDClassifier):
    """Ends its worker's process when it continues a model on a worker
    whose environment names it the victim (its second mixing round)."""

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        if os.environ.get("SKBUDGET_TEST_VICTIM") and hasattr(self, "classes_"):
            os._exit(1)
        return super().partial_fit(X, y, classes, sample_weight)


def _mark_victim():
    os.environ["SKBUDGET_TEST_VICTIM"] = "1"


@pytest.mark.parametrize("victim", [1, 0], ids=["another", "the-first"])
def test_a_worker_that_dies_mid_fit_is_a_clear_error(client, victim):
    """One worker's process ends in the second mixing round (its nanny
    starts a new one, at another address): RuntimeError naming the lost
    worker, and the meta-estimator as it was, whether it was the worker
    that returns the model (the first) or another; the survivor's part ends, and the
    cluster fits again.  (Last in the module: the cluster has a new worker
    after it.)"""
    X, y = _stream(1200)
    victim = sorted(client.scheduler_info()["workers"])[victim]
    client.run(_mark_victim, workers=[victim])
    clf = ParameterMixingClassifier(_ExitingBSGD(budget=50, gamma=0.3), mix_every=200,
                                    client=client)
    with pytest.raises(RuntimeError, match=f"{victim} left the cluster"):
        clf.fit(X, y)
    assert not hasattr(clf, "estimator_") and not hasattr(clf, "n_features_in_")
    client.wait_for_workers(2, timeout=30)
    est = BudgetedSGDClassifier(budget=50, gamma=0.3)
    assert_array_equal(
        ParameterMixingClassifier(est, mix_every=200, client=client).fit(X, y).predict(X),
        ParameterMixingClassifier(est, mix_every=200, n_workers=2).fit(X, y).predict(X))


def test_importing_skbudget_parallel_imports_no_dask():
    # dask is an optional extra: only a fit on dask input imports it
    code = ("import sys, skbudget.parallel; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
