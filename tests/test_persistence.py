"""Safe persistence with skops.io: a loaded model continues its stream.

Every estimator, binary and multi-class: dump a model in the middle of a
stream, load it (trusting what ``get_untrusted_types`` lists, which must be
the estimator's class alone), continue with ``partial_fit`` (and a
warm-start ``fit``, which shuffles with the model's generator) and compare
with the uninterrupted model, bit for bit.
"""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.datasets import make_classification

from skbudget import BudgetedSGDClassifier, Forgetron
from skbudget.discovery import all_estimators

sio = pytest.importorskip("skops.io")

ESTIMATORS = [Est for _, Est in all_estimators()]
IDS = [Est.__name__ for Est in ESTIMATORS]


def _model_arrays(est):
    if not hasattr(est, "support_vectors_"):    # a linear model on random features
        return [est.random_weights_, est.coef_, est.intercept_, est.mistake_curve_,
                np.array([est.n_updates_, est.n_mistakes_])]
    return [est.support_vectors_, est.dual_coef_, est.intercept_, est.n_support_,
            est.mistake_curve_, np.array([est.n_updates_, est.n_mistakes_])]


def _assert_identical(a, b):
    for x, y in zip(_model_arrays(a), _model_arrays(b)):
        assert x.dtype == y.dtype
        assert_array_equal(x, y, strict=True)
    for la, lb in zip(a._learners, b._learners):
        sa, sb = la.get_state(), lb.get_state()
        assert sa.keys() == sb.keys()
        for key in sa:
            if key == "rng":
                assert (sa[key] is None) == (sb[key] is None)
                if sa[key] is not None:
                    for u, v in zip(sa[key].get_state(), sb[key].get_state()):
                        assert_array_equal(u, v)
            else:
                assert_array_equal(np.asarray(sa[key]), np.asarray(sb[key]), strict=True)


def _loaded(est):
    data = sio.dumps(est)
    untrusted = sio.get_untrusted_types(data=data)
    assert untrusted == [f"{type(est).__module__}.{type(est).__qualname__}"]
    return sio.loads(data, trusted=untrusted)


def _small(Est):
    est = Est(random_state=0, gamma=1.0)
    if "budget" in est.get_params():
        est.set_params(budget=7)
    return est


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_skops_model_continues_the_stream(Est, n_classes, binary_data, multiclass_data):
    X, y = binary_data if n_classes == 2 else multiclass_data
    X, y = X[:150], y[:150]
    classes = np.unique(y)
    est = _small(Est).partial_fit(X[:60], y[:60], classes=classes)
    loaded = _loaded(est)
    assert_array_equal(loaded.predict(X), est.predict(X))
    _assert_identical(loaded, est)
    for model in (est, loaded):
        model.partial_fit(X[60:100], y[60:100])
        model.partial_fit(X[100:], y[100:])
    _assert_identical(loaded, est)
    # a warm-start fit shuffles with the model's own generator
    again = _loaded(est)
    for model in (est, again):
        model.set_params(warm_start=True, max_iter=2).fit(X, y)
    _assert_identical(again, est)


def test_skops_learner_alone_continues():
    """The engine's protocol: a learner made by ``__new__`` then
    ``__setstate__`` (what skops does) is a working learner."""
    from skbudget import Forgetron

    rng = np.random.RandomState(0)
    X, y = rng.randn(120, 3), rng.randint(0, 3, 120)
    est = Forgetron(budget=10, gamma=1.0, random_state=0).partial_fit(X[:60], y[:60], classes=[0, 1, 2])
    other = Forgetron(budget=10, gamma=1.0, random_state=0).partial_fit(X[:60], y[:60], classes=[0, 1, 2])
    for k, learner in enumerate(other._learners):
        data = sio.dumps(learner)
        rebuilt = sio.loads(data, trusted=sio.get_untrusted_types(data=data))
        assert type(rebuilt) is type(learner)
        other._driver.learners[k] = rebuilt
    est.partial_fit(X[60:], y[60:])
    other.partial_fit(X[60:], y[60:])
    _assert_identical(other, est)


def test_skops_refuses_a_learner_of_another_class(binary_data):
    from skbudget import Forgetron

    X, y = binary_data
    est = Forgetron(budget=7, random_state=0).fit(X, y)
    state = est.__getstate__()
    state["_driver"]["learners"][0]["type"] = "skbudget._budget_fast.StoptronLearner"
    with pytest.raises(ValueError, match="corrupted"):
        Forgetron().__setstate__(state)


def test_a_learner_state_without_one_of_its_fields_is_refused(binary_data):
    # a file written before a learner gained state (BPA-P's inverse checks
    # added ``drift``): a clear error naming the field, not a KeyError
    from skbudget import BudgetedPassiveAggressive

    X, y = binary_data
    est = BudgetedPassiveAggressive(budget=7, maintenance="projection").fit(X, y)
    state = est.__getstate__()
    del state["_driver"]["learners"][0]["state"]["drift"]
    with pytest.raises(ValueError, match=r"BudgetedPALearner: the saved state has no \['drift'\]"):
        BudgetedPassiveAggressive().__setstate__(state)
    with pytest.raises(ValueError, match="another version of skbudget"):
        pickle.loads(pickle.dumps(est._learners[0]).replace(b"drift", b"drifu"))


@pytest.mark.parametrize("Est, params", [
    ("BudgetedSGDClassifier", dict(multi_class="crammer_singer")),
    ("BudgetedSGDClassifier", dict(multi_class="ovr")),
    ("BudgetMIRA", {}),
])
def test_state_saved_before_the_base_kept_the_multi_class_mode(Est, params, multiclass_data):
    # files written before the base kept ``_shared_support`` (BSGD kept
    # ``_crammer_singer``, MIRA nothing): the mode comes from the driver's state
    X, y = multiclass_data
    Est = dict(all_estimators())[Est]
    est = _small(Est).set_params(**params).partial_fit(X[:60], y[:60], classes=np.unique(y))
    state = est.__getstate__()
    shared = state.pop("_shared_support")
    assert shared == (params.get("multi_class") != "ovr")
    if "multi_class" in params:
        state["_crammer_singer"] = shared
    loaded = Est.__new__(Est)
    loaded.__setstate__(state)
    assert loaded._shared_support == shared
    _assert_identical(loaded, est)
    for model in (est, loaded):
        model.partial_fit(X[60:120], y[60:120])
    _assert_identical(loaded, est)


@pytest.mark.parametrize("Est", [Forgetron, BudgetedSGDClassifier])
def test_file_written_before_the_support_curve_loads(Est, binary_data):
    # a file of skbudget before the record read the support size: no
    # 'support' in the record, no record of the call parameters the fitted
    # attributes were read with; it loads, predicts and continues as before
    X, y = binary_data
    est = Est(budget=10, gamma=1.0, random_state=0).fit(X[:100], y[:100])
    state = est.__getstate__()
    del state["_record"]["support_points"], state["_record"]["last_support"]
    del state["_call_params_of_attributes"]
    old = Est.__new__(Est)
    old.__setstate__(state)
    assert_array_equal(old.decision_function(X), est.decision_function(X))
    assert old.support_curve_.shape == (0, 2)
    old.partial_fit(X[100:], y[100:])
    est.partial_fit(X[100:], y[100:])
    assert_array_equal(old.dual_coef_, est.dual_coef_)
    assert old.support_curve_[-1].tolist() == [len(y), int(np.sum(old.n_support_))]
    again = pickle.loads(pickle.dumps(old))
    assert_array_equal(again.support_curve_, old.support_curve_)


@pytest.mark.parametrize("Est", [Forgetron, BudgetedSGDClassifier])
def test_file_of_the_sparse_support_reads_loads(Est):
    # a file of skbudget when the record read the support size at the end
    # of every call only ('support': (round, size), the latest read in
    # every bin): the reads at a bin end become the sizes there, the last
    # one the last round's; the reads between bin ends have no point
    X, y = make_classification(900, n_features=4, random_state=0)
    ends = [37, 64, 101, 600]                   # 600 rounds: bins 4 wide
    est, reads = Est(budget=10, gamma=1.0, random_state=0), []
    for start, stop in zip([0] + ends, ends):
        est.partial_fit(X[start:stop], y[start:stop], classes=[0, 1])
        reads.append([stop, int(np.sum(est.n_support_))])
    state = est.__getstate__()
    assert state["_record"]["width"] == 4
    del state["_record"]["support_points"], state["_record"]["last_support"]
    state["_record"]["support"] = np.array(reads, dtype=np.int64)
    old = Est.__new__(Est)
    old.__setstate__(state)
    assert_array_equal(old.decision_function(X), est.decision_function(X))
    assert_array_equal(old.mistake_curve_, est.mistake_curve_)
    assert old.support_curve_.tolist() == [reads[1], reads[3]]
    for model in (old, est):
        model.partial_fit(X[600:], y[600:])
    _assert_identical(old, est)
    # the points after loading are measured; merged bins keep what they had
    assert old._record.width == 4
    after = est.support_curve_[est.support_curve_[:, 0] > 600]
    assert_array_equal(old.support_curve_, np.concatenate([[reads[1], reads[3]], after]))
    again = pickle.loads(pickle.dumps(old))
    assert_array_equal(again.support_curve_, old.support_curve_)
    assert set(again._record.__dict__) >= {"support_points", "last_support"}
    assert "support" not in again._record.__dict__
