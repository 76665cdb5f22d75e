"""The river adapter: river's own estimator checks, pipelines, evaluation,
and the same model as one partial_fit per example."""

import copy
import pickle

import numpy as np
import pytest
from numpy.testing import assert_array_equal

river = pytest.importorskip("river")
from river import checks, compose, datasets, evaluate, linear_model, metrics, preprocessing  # noqa: E402

from skbudget import (  # noqa: E402
    BudgetedSGDClassifier,
    Forgetron,
    KernelPassiveAggressive,
    TightestPerceptron,
)
from skbudget.river import RiverClassifier  # noqa: E402

SEGMENT_LABELS = ["brickface", "cement", "foliage", "grass", "path", "sky", "window"]
ESTIMATORS = {
    "Forgetron": Forgetron(budget=30, gamma=0.1, random_state=0),
    "BSGD-shared": BudgetedSGDClassifier(budget=30, gamma=0.1, multi_class="crammer_singer",
                                         random_state=0),
    "KernelPassiveAggressive": KernelPassiveAggressive(gamma=0.1),
    "TightestPerceptron": TightestPerceptron(budget=30, gamma=0.1, random_state=0),
}


# every estimator is checked multi-class below (Phishing's two labels among
# them); binary, the default run checks Forgetron and `-m slow` the others
@pytest.mark.parametrize("name", [name if name == "Forgetron" else
                                  pytest.param(name, marks=pytest.mark.slow)
                                  for name in ESTIMATORS])
def test_river_estimator_checks_pass_binary(name):
    # the default adapter (a new feature raises: river's check of emerging
    # features is skipped, by design)
    checks.check_estimator(RiverClassifier(ESTIMATORS[name], classes=[False, True]))


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_river_estimator_checks_pass_multiclass(name):
    # a multi-class adapter is checked on the binary Phishing stream and on
    # ImageSegments' seven classes: its classes are all nine labels (of two
    # types: the adapter trains on their positions); new features ignored,
    # so every check runs
    adapter = RiverClassifier(ESTIMATORS[name], classes=[False, True] + SEGMENT_LABELS,
                              unknown_features="ignore")
    assert adapter._unit_test_skips() == set()
    checks.check_estimator(adapter)


def _rows(dataset, n):
    data = list(dataset.take(n))
    features = sorted(data[0][0])
    return data, np.array([[x.get(k, 0.0) for k in features] for x, _ in data]), features


@pytest.mark.parametrize("batch_size", [1, 5, 32])
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_learn_one_gives_the_model_of_one_partial_fit_per_example(name, batch_size):
    data, X, _ = _rows(datasets.ImageSegments(), 150)
    y = np.array([SEGMENT_LABELS.index(label) for _, label in data])
    adapter = RiverClassifier(ESTIMATORS[name], classes=SEGMENT_LABELS, batch_size=batch_size)
    reference = copy.deepcopy(ESTIMATORS[name])
    predicted = []
    for i, (x, label) in enumerate(data):
        if i % 7 == 0:                  # predictions interleaved (they flush the buffer)
            predicted.append(adapter.predict_one(x))
        adapter.learn_one(x, label)
        reference.partial_fit(X[i:i + 1], y[i:i + 1], classes=np.arange(7))
    trained = adapter.estimator_
    assert_array_equal(trained.dual_coef_, reference.dual_coef_, strict=True)
    assert_array_equal(trained.support_vectors_, reference.support_vectors_, strict=True)
    assert trained.n_mistakes_ == reference.n_mistakes_
    x = data[-1][0]
    assert adapter.predict_one(x) == SEGMENT_LABELS[reference.predict(X[-1:])[0]]
    assert ESTIMATORS[name].__dict__.keys() == type(ESTIMATORS[name])().__dict__.keys()


def test_pipeline_and_progressive_validation():
    model = preprocessing.StandardScaler() | RiverClassifier(
        Forgetron(budget=50, gamma=0.1, random_state=0), classes=[False, True])
    assert isinstance(model, compose.Pipeline)
    accuracy = evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    assert accuracy.get() > 0.8
    # ROC AUC reads predict_proba_one: a score that orders the examples
    auc = evaluate.progressive_val_score(datasets.Phishing(), model.clone(), metrics.ROCAUC())
    assert auc.get() > 0.85
    baseline = evaluate.progressive_val_score(
        datasets.Phishing(), preprocessing.StandardScaler() | linear_model.LogisticRegression(),
        metrics.Accuracy())
    assert baseline.get() > 0.8


def test_predict_proba_one_is_a_squashed_score():
    data, X, _ = _rows(datasets.Phishing(), 200)
    adapter = RiverClassifier(Forgetron(budget=20, gamma=0.5), classes=[False, True])
    assert adapter.predict_proba_one(data[0][0]) == {False: 0.5, True: 0.5}
    assert adapter.predict_one(data[0][0]) is False            # the zero function
    for x, label in data:
        adapter.learn_one(x, label)
    for i, (x, _) in enumerate(data[:20]):
        score = adapter.estimator_.decision_function(X[i:i + 1])[0]
        proba = adapter.predict_proba_one(x)
        assert proba[True] == pytest.approx(1 / (1 + np.exp(-score)))
        assert adapter.predict_one(x) == (score > 0)
    multi = RiverClassifier(Forgetron(budget=20, gamma=0.5), classes=SEGMENT_LABELS)
    segments, S, _ = _rows(datasets.ImageSegments(), 100)
    for x, label in segments:
        multi.learn_one(x, label)
    proba = multi.predict_proba_one(segments[0][0])
    assert set(proba) == set(SEGMENT_LABELS) and sum(proba.values()) == pytest.approx(1.0)
    assert max(proba, key=proba.get) == multi.predict_one(segments[0][0])


def test_features_unknown_missing_and_bad_values():
    adapter = RiverClassifier(Forgetron(budget=5, gamma=0.5), classes=[0, 1], batch_size=4)
    adapter.learn_one({"b": 1.0, "a": 2.0}, 1)
    assert adapter.features_ == ("a", "b")
    with pytest.raises(ValueError, match="feature 'c' is not one of the 2 features"):
        adapter.learn_one({"a": 1.0, "c": 3.0}, 0)
    with pytest.raises(ValueError, match="feature 'c' is not one of"):
        adapter.predict_one({"a": 1.0, "c": 3.0})
    with pytest.raises(ValueError, match="feature 'a' has the value 'x'"):
        adapter.learn_one({"a": "x"}, 0)
    with pytest.raises(ValueError, match="feature 'b' has the value nan"):
        adapter.learn_one({"b": float("nan")}, 0)
    with pytest.raises(ValueError, match="y=2 is not one of classes"):
        adapter.learn_one({"a": 1.0}, 2)
    adapter.learn_one({"a": -1.0}, 0)           # 'b' missing: 0
    # the refused examples left nothing behind
    assert_array_equal(adapter.estimator_.support_vectors_, [[2.0, 1.0], [-1.0, 0.0]])
    ignoring = RiverClassifier(Forgetron(budget=5, gamma=0.5), classes=[0, 1],
                               features=["b", "a"], unknown_features="ignore")
    ignoring.learn_one({"a": 2.0, "c": 5.0}, 1)
    assert ignoring.features_ == ("b", "a")
    assert_array_equal(ignoring.estimator_.support_vectors_, [[0.0, 2.0]])


@pytest.mark.parametrize("params, error", [
    (dict(classes=[1]), "at least two distinct labels"),
    (dict(classes=[1, 1]), "at least two distinct labels"),
    (dict(classes=[0, 1], unknown_features="drop"), "unknown_features must be one of"),
    (dict(classes=[0, 1], batch_size=0), "batch_size must be an int >= 1"),
    (dict(classes=[0, 1], features=["a", "a"]), "each feature once"),
])
def test_bad_parameters(params, error):
    with pytest.raises(ValueError, match=error):
        RiverClassifier(Forgetron(), **params)
    with pytest.raises(TypeError, match="skbudget classifier"):
        RiverClassifier(object(), classes=[0, 1])


def test_clone_and_pickle_the_river_way():
    adapter = RiverClassifier(Forgetron(budget=10, gamma=0.5), classes=[False, True])
    data, _, _ = _rows(datasets.Phishing(), 50)
    for x, label in data[:37]:
        adapter.learn_one(x, label)         # 37 = a batch and 5 in the buffer
    fresh = adapter.clone()
    assert fresh.estimator_ is None and fresh._get_params().keys() == adapter._get_params().keys()
    copied = pickle.loads(pickle.dumps(adapter))
    for model in (adapter, copied):
        for x, label in data[37:]:
            model.learn_one(x, label)
    assert_array_equal(copied.estimator_.dual_coef_, adapter.estimator_.dual_coef_)
    assert not hasattr(adapter.estimator, "classes_")      # the parameter is never trained
