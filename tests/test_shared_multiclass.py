"""The shared multi-class mode of every estimator that declares one
(``_declaration.shared_multiclass``), and its open label sets: a
``partial_fit`` stream without ``classes=`` learns the classes as they come
(doc/algorithms.md#shared-multi-class).

Each family's rule in shared mode is checked against its oracle in its own
test file; here are the properties every shared model has: one budget for
the whole model after every round, whatever the order in which classes
appear; a class first seen late gets a zero column (the predictions among
the others do not move); the label set is part of the model's state
(atomic calls, persistence)."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from sklearn.datasets import make_blobs

from skbudget._declaration import declaration_of
from skbudget.discovery import all_estimators
from tests.test_common import small


def _shared(Est):
    """``Est`` in its shared mode, with its first common-test parameters."""
    mode = declaration_of(Est).shared_multiclass
    return small(Est, **({} if mode.param is None else {mode.param: mode.shared}))


SHARED = [Est for _, Est in all_estimators()
          if declaration_of(Est).shared_multiclass is not None]
OPEN = [Est for Est in SHARED if _shared(Est)._learns_open_label_sets()]
OPEN_IDS = [Est.__name__ for Est in OPEN]


def _stream(seed, n=120, n_classes=4):
    X, y = make_blobs(n_samples=n, centers=n_classes, n_features=3, cluster_std=2.0,
                      random_state=seed)
    return X / 4, y


def _support_size(model):
    if hasattr(model, "n_support_"):
        return int(np.sum(model.n_support_))
    return 0        # a model on fixed features stores no vectors


def test_every_estimator_with_a_shared_mode_learns_open_label_sets_or_says_why():
    # AMM keeps a list of weights per class from the start: it needs classes=
    assert {Est.__name__ for Est in SHARED} - set(OPEN_IDS) <= {
        "AdaptiveMultiHyperplaneClassifier"}
    assert {"BudgetedSGDClassifier", "KernelMIRA", "BudgetMIRA"} <= set(OPEN_IDS)


@pytest.mark.parametrize("Est", OPEN, ids=OPEN_IDS)
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), first=st.integers(1, 40))
def test_the_budget_bounds_the_whole_model_after_every_round(Est, seed, first):
    # a random label stream whose classes appear late (classes 2 and 3 only
    # after row ``first``), one round per call: |S| <= B after each
    X, y = _stream(seed)
    rng = np.random.RandomState(seed)
    y[:first] = rng.randint(0, 2, first)
    model = _shared(Est)
    budget = model.get_params().get("budget")
    for i in range(len(y)):
        model.partial_fit(X[i:i + 1], y[i:i + 1])
        assert_array_equal(model.classes_, np.unique(y[:i + 1]))
        if budget is not None:
            assert _support_size(model) <= budget
    assert model.decision_function(X).shape == (len(y), 4)


@pytest.mark.parametrize("Est", OPEN, ids=OPEN_IDS)
def test_a_class_first_seen_late_gets_a_zero_column(Est):
    X, y = _stream(0)
    known = np.isin(y, [0, 2, 3])
    model = _shared(Est)
    if model.get_params().get("budget") is not None:   # room for the new class's rows (a
        model.set_params(budget=len(y))                 # full Stoptron never adds one)
    model.partial_fit(X[known], y[known])
    before = model.decision_function(X)
    state = pickle.dumps(model)
    model._add_classes(np.array([1]))        # the column, before any row of class 1
    model._update_fitted_attributes()
    assert_array_equal(model.classes_, [0, 1, 2, 3])
    after = model.decision_function(X)
    assert_array_equal(after[:, [0, 2, 3]], before)
    assert_array_equal(after[:, 1], 0.0)
    # partial_fit does the same, then learns the rows
    model = pickle.loads(state).partial_fit(X[~known], y[~known])
    assert_array_equal(model.classes_, [0, 1, 2, 3])
    assert (model.predict(X[y == 1]) == 1).any()      # the new class is learned


@pytest.mark.parametrize("Est", OPEN, ids=OPEN_IDS)
def test_one_class_then_two_then_more(Est):
    X, y = _stream(1)
    model = _shared(Est).partial_fit(X[y == 2], y[y == 2])
    assert_array_equal(model.classes_, [2])
    assert_array_equal(model.predict(X[:5]), [2] * 5)        # the one class seen
    two = np.isin(y, [0, 2])
    model.partial_fit(X[two], y[two])
    scores = model.decision_function(X)
    assert scores.shape == (len(y),)                          # binary: s_2 - s_0
    assert_array_equal(model.predict(X), np.where(scores > 0, 2, 0))
    model.partial_fit(X, y)
    assert model.decision_function(X).shape == (len(y), 4)
    assert_array_equal(model.classes_, [0, 1, 2, 3])


@pytest.mark.parametrize("Est", OPEN, ids=OPEN_IDS)
def test_classes_given_up_front_fix_the_label_set(Est):
    X, y = _stream(2)
    model = _shared(Est).partial_fit(X[:10], y[:10], classes=[0, 1, 2, 3])
    assert_array_equal(model.classes_, [0, 1, 2, 3])
    with pytest.raises(ValueError, match=r"labels \[7\] that are not in classes_"):
        model.partial_fit(X[:1], [7])
    with pytest.raises(ValueError, match="classes"):
        model.partial_fit(X[:1], [0], classes=[0, 1, 2, 3, 7])


@pytest.mark.parametrize("Est", OPEN, ids=OPEN_IDS)
def test_a_failed_call_adds_no_class(Est):
    X, y = _stream(3)
    model = _shared(Est).partial_fit(X[y < 2], y[y < 2])
    state = pickle.dumps(model)
    bad = X[:3].copy()
    bad[2, 0] = np.nan
    with pytest.raises(ValueError):
        model.partial_fit(bad, [3, 3, 3])
    assert_array_equal(model.classes_, [0, 1])
    assert_array_equal(model.decision_function(X), pickle.loads(state).decision_function(X))
    # a later class's rows that pass, after a refused call
    model.partial_fit(X[y == 3], y[y == 3])
    assert_array_equal(model.classes_, [0, 1, 3])


@pytest.mark.parametrize("Est", OPEN, ids=OPEN_IDS)
def test_an_open_label_set_is_saved_and_keeps_growing(Est):
    X, y = _stream(4)
    model = _shared(Est).partial_fit(X[y == 1], y[y == 1])
    loaded = pickle.loads(pickle.dumps(model))
    assert loaded._open_classes
    loaded.partial_fit(X, y)
    model.partial_fit(X, y)
    assert_array_equal(loaded.classes_, [0, 1, 2, 3])
    assert_array_equal(loaded.decision_function(X), model.decision_function(X))


@pytest.mark.parametrize("Est", OPEN, ids=OPEN_IDS)
def test_a_loaded_open_label_set_is_checked(Est):
    X, y = _stream(5)
    model = _shared(Est).partial_fit(X[y == 1], y[y == 1])
    state = model.__getstate__()
    closed = {**state, "_open_classes": False}      # one class, not an open label set
    with pytest.raises(ValueError, match="classes_"):
        Est.__new__(Est).__setstate__(closed)
    mode = declaration_of(Est).shared_multiclass
    if mode.param is not None:                     # open, under one-vs-rest parameters
        params = {**state, mode.param: mode.one_vs_rest}
        started = state.get("_params_at_start")
        if isinstance(started, dict):
            params["_params_at_start"] = {**started, mode.param: mode.one_vs_rest}
        with pytest.raises(ValueError):
            Est.__new__(Est).__setstate__(params)


@pytest.mark.parametrize("Est", [Est for _, Est in all_estimators()],
                         ids=lambda Est: Est.__name__)
def test_one_vs_rest_learners_need_classes_up_front(Est):
    X, y = _stream(6)
    model = small(Est)
    mode = declaration_of(Est).shared_multiclass
    if mode is not None and mode.param is not None:     # its one-vs-rest mode
        model.set_params(**{mode.param: mode.one_vs_rest})
    elif Est in OPEN:
        pytest.skip("always one learner for every class: it learns open label sets")
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        model.partial_fit(X, y)


@pytest.mark.parametrize("Est", OPEN, ids=OPEN_IDS)
def test_onnx_exports_an_open_label_set(Est):
    pytest.importorskip("onnxruntime")
    from onnxruntime import InferenceSession
    from skl2onnx import to_onnx

    import skbudget.onnx  # noqa: F401  (registers the converters)

    X, y = _stream(7)
    model = _shared(Est).partial_fit(X[y == 3], y[y == 3])
    with pytest.raises(ValueError, match="one class so far"):
        to_onnx(model, X[:1])
    for labels in ([1, 3], [0, 1, 2, 3]):       # two classes (one column), then four
        rows = np.isin(y, labels)
        model.partial_fit(X[rows], y[rows])
        session = InferenceSession(to_onnx(model, X[:1]).SerializeToString())
        label, scores = session.run(None, {session.get_inputs()[0].name: X})
        assert_array_equal(label, model.predict(X))
        np.testing.assert_allclose(scores, model.decision_function(X), rtol=1e-9, atol=1e-12)
