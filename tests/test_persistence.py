"""Safe persistence with skops.io: a loaded model continues its stream.

Every estimator, binary and multi-class: dump a model in the middle of a
stream, load it (trusting what ``get_untrusted_types`` lists, which must be
the estimator's class alone), continue with ``partial_fit`` (and a
warm-start ``fit``, which shuffles with the model's generator) and compare
with the uninterrupted model, bit for bit.
"""

import io
import json
import pickle
import zipfile

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.datasets import make_classification
from sklearn.utils._param_validation import StrOptions

from skbudget import BudgetedSGDClassifier, Forgetron
from skbudget._base import BaseKernelExpansionClassifier
from skbudget.discovery import all_estimators
from tests import corrupt_states
from tests.test_common import small

sio = pytest.importorskip("skops.io")

ESTIMATORS = [Est for _, Est in all_estimators()]
IDS = [Est.__name__ for Est in ESTIMATORS]


def _model_arrays(est):
    if not isinstance(est, BaseKernelExpansionClassifier):    # its fitted arrays
        return [value for name, value in sorted(vars(est).items())
                if name.endswith("_") and not name.startswith("_")
                and isinstance(value, np.ndarray)] + [
            est.mistake_curve_, np.array([est.n_updates_, est.n_mistakes_])]
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


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_skops_model_continues_the_stream(Est, n_classes, binary_data, multiclass_data):
    X, y = binary_data if n_classes == 2 else multiclass_data
    X, y = X[:150], y[:150]
    classes = np.unique(y)
    est = small(Est).partial_fit(X[:60], y[:60], classes=classes)
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
    est = small(Est).set_params(**params).partial_fit(X[:60], y[:60], classes=np.unique(y))
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


# --- every scalar of a saved state is checked when the file is loaded ----------

# the refusals of a state whose parts disagree with each other, where no one
# field is at fault: the fitted attributes and the model the learners hold,
# the learner's own consistency check, the online record's
_INCONSISTENCY_REFUSALS = ("do not match the model its learners hold", "inconsistent state",
                           "online record of the loaded model is inconsistent",
                           "learners' saved state gives no model")


def _outcome(call):
    """What ``call()`` gives: ('ok', value) or ('raised', type, message)."""
    try:
        return ("ok", call())
    except Exception as exc:   # noqa: BLE001 - compared between two models
        return ("raised", type(exc).__name__, str(exc))


def _same_outcome(a, b):
    if a[0] != b[0]:
        return False
    if a[0] == "raised":
        return a == b
    return all(np.array_equal(x, y) and x.dtype == y.dtype for x, y in zip(a[1], b[1]))


def _behaviour(model, X_test, X_more, y_more):
    """The scores of ``model``, then its scores and fitted arrays after one
    more partial_fit, each as an outcome (an exception is an outcome)."""
    scores = _outcome(lambda: [model.decision_function(X_test)])
    continued = _outcome(lambda: [model.partial_fit(X_more, y_more).decision_function(X_test)]
                         + _model_arrays(model))
    return scores, continued


def _tamper_sweep(Est, X, y, load_tampered, bad_values):
    """Fit ``Est`` on ``X[:80]``, then for every scalar of its saved state
    and each of its ``bad_values(value)``, load the model saved with the
    value put in (``load_tampered(model, path, bad)``); returns the cases
    that break the rule: loading raises a ValueError that names the field
    (or the parts that disagree), or the loaded model behaves as the
    original does (with the same parameter set, for a parameter; a changed
    parameter the model was started with may be refused at the next call,
    naming it)."""
    est = small(Est).partial_fit(X[:80], y[:80], classes=np.unique(y))
    blob = pickle.dumps(est)
    X_test, X_more, y_more = X[:30], X[80:], y[80:]
    reference = _behaviour(pickle.loads(blob), X_test, X_more, y_more)
    params = est.get_params(deep=False)
    broken = []
    for path, value in corrupt_states.scalar_fields(est.__getstate__()):
        name = corrupt_states.field_name(path)
        for bad in bad_values(value):
            outcome = _outcome(lambda: [load_tampered(est, path, bad)])
            if outcome[0] == "raised":
                kind, message = outcome[1:]
                # (a parameter the model was started with that disagrees with
                # the learner built from it: the learner's field is named)
                named = (str(path[-1]) in message
                         or path[0] == "_params_at_start" and "'_params_at_start'" in message
                         or any(refusal in message for refusal in _INCONSISTENCY_REFUSALS))
                if kind != "ValueError" or not named:
                    broken.append(f"{name}={bad!r:.40}: loading raised {kind}: {message[:150]}")
                continue
            loaded = outcome[1][0]
            expected = reference
            if path[0] in params:
                changed = corrupt_states.with_field(params[path[0]], path[1:], bad)
                expected = _behaviour(pickle.loads(blob).set_params(**{path[0]: changed}),
                                      X_test, X_more, y_more)
            got = _behaviour(loaded, X_test, X_more, y_more)
            if path[0] == "_params_at_start" and got[1][0] == "raised":
                kind, message = got[1][1:]
                if kind == "ValueError" and f"{path[-1]!r} was changed" in message:
                    continue
            for what, a, b in zip(("scores", "partial_fit"), got, expected):
                if not _same_outcome(a, b):
                    detail = (f"raised {a[1]}: {a[2][:150]}" if a[0] == "raised"
                              else "gives other values")
                    broken.append(f"{name}={bad!r:.40}: loaded, then {what} {detail}")
                    break
    return broken


def _tampered_pickle(est, path, bad):
    """The model ``est`` pickled with the field at ``path`` of its state
    set to ``bad``, loaded."""
    state = corrupt_states.with_field(est.__getstate__(), path, bad)
    return pickle.loads(pickle.dumps(corrupt_states.PickledState(type(est), state)))


def _tampered_skops(est, path, bad):
    """The model ``est`` saved by skops.io, the field at ``path`` of its
    state set to ``bad`` in the file's schema, loaded."""
    data = sio.dumps(est)
    with zipfile.ZipFile(io.BytesIO(data)) as source:
        files = {name: source.read(name) for name in source.namelist()}
    schema = json.loads(files["schema.json"])
    parent = schema["content"]                  # the estimator's state, a dict
    for key in path[:-1]:
        parent = parent["content"][key]
        if parent["__loader__"] == "ObjectNode":
            parent = parent["content"]
    assert parent["content"][path[-1]]["__loader__"] == "JsonNode", path
    # (a node of its own: skops loads the nodes of one ``__id__`` as one
    # object, e.g. every None of the file)
    assert '"__id__": 1,' not in files["schema.json"].decode()
    parent["content"][path[-1]] = {"__class__": type(bad).__name__, "__module__": "builtins",
                                   "__loader__": "JsonNode", "content": json.dumps(bad),
                                   "is_json": True, "__id__": 1}
    files["schema.json"] = json.dumps(schema).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for name, content in files.items():
            target.writestr(name, content)
    return sio.loads(out.getvalue(), trusted=[f"{type(est).__module__}.{type(est).__qualname__}"])


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_every_tampered_scalar_of_a_skops_file_is_refused_on_loading(Est, binary_data):
    # issue 43: 14 of 225 tampered scalars in skops files (gamma, degree or
    # coef0 set to null, among others) loaded, then failed at the next call
    # with a TypeError.  Every scalar of the file set to null: refused on
    # loading with a ValueError naming it, or the model behaves as the
    # original (the pickle sweep below tries more values on the same path)
    broken = _tamper_sweep(Est, *binary_data, _tampered_skops,
                           lambda value: [None] if value is not None else ["x"])
    assert not broken, f"{len(broken)} tampered scalars:\n" + "\n".join(broken)


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_every_tampered_scalar_of_a_pickle_is_refused_on_loading(Est, binary_data):
    # issue 43: 14 of 225 tampered scalars (gamma, degree or coef0 set to
    # null, among others) loaded, then failed at the next call with a
    # TypeError; every scalar of the state, with values of another type,
    # not finite, negative, beyond C's integers: refused on loading with a
    # ValueError naming it, or the model behaves as the original
    broken = _tamper_sweep(Est, *binary_data, _tampered_pickle, corrupt_states.bad_scalars)
    assert not broken, f"{len(broken)} tampered scalars:\n" + "\n".join(broken)


def _options(Est):
    """Parameter settings that change what a learner is built with: each
    value of every option parameter (``StrOptions``) of ``Est``, and the
    defaults."""
    settings = [{}]
    for name, constraints in Est._parameter_constraints.items():
        for constraint in constraints:
            if isinstance(constraint, StrOptions) and name not in ("gamma", "kernel"):
                settings += [{name: value} for value in sorted(constraint.options)]
    return settings


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_a_trained_model_of_every_option_loads(Est, binary_data, multiclass_data):
    # the fields a learner is built with (skbudget._persistence's
    # _LEARNER_CONSTANTS) must keep their values while it learns, or a valid
    # file would be refused: every option, long enough to fill the budget
    # and to run its maintenance, then saved and loaded, predicts the same
    for params in _options(Est):
        for X, y in (binary_data, multiclass_data):
            est = small(Est).set_params(**params)
            try:
                est.partial_fit(X[:100], y[:100], classes=np.unique(y)).partial_fit(X[100:], y[100:])
            except ValueError:          # an option that needs another one
                continue
            loaded = pickle.loads(pickle.dumps(est))
            assert_array_equal(loaded.decision_function(X), est.decision_function(X))
