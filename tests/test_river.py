"""The river adapter: river's own estimator checks, pipelines, evaluation,
and the same model as one partial_fit per example."""

import copy
import pickle
import re
from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.base import clone

river = pytest.importorskip("river")
from river import checks, compose, datasets, evaluate, linear_model, metrics, preprocessing  # noqa: E402

from skbudget import (  # noqa: E402
    BudgetedSGDClassifier,
    Forgetron,
    FourierOGDClassifier,
    KernelPassiveAggressive,
    KernelPerceptron,
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


def test_a_shared_mode_needs_no_classes():
    # BSGD's shared mode learns the labels as they come: river's checks
    # (binary and multi-class streams), and the model of one partial_fit
    # per example without classes=, the labels' positions in order of
    # first appearance
    adapter = RiverClassifier(ESTIMATORS["BSGD-shared"], unknown_features="ignore")
    assert adapter._multiclass
    checks.check_estimator(adapter)
    data, X, _ = _rows(datasets.ImageSegments(), 150)
    first_seen = list(dict.fromkeys(label for _, label in data))
    y = np.array([first_seen.index(label) for _, label in data])
    adapter = RiverClassifier(ESTIMATORS["BSGD-shared"], batch_size=5)
    reference = clone(ESTIMATORS["BSGD-shared"])
    assert adapter.predict_one(data[0][0]) is None and adapter.predict_proba_one(data[0][0]) == {}
    for i, (x, label) in enumerate(data):
        adapter.learn_one(x, label)
        reference.partial_fit(X[i:i + 1], y[i:i + 1])
        if i == 0:
            assert adapter.predict_one(x) == label
            assert adapter.predict_proba_one(x) == {label: 1.0}
    trained = adapter.estimator_
    assert_array_equal(trained.classes_, np.arange(len(first_seen)))
    assert_array_equal(trained.dual_coef_, reference.dual_coef_, strict=True)
    assert adapter.predict_one(data[-1][0]) == first_seen[reference.predict(X[-1:])[0]]
    assert list(adapter.predict_proba_one(data[-1][0])) == first_seen


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
    (dict(), "classes is required for Forgetron"),
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


# ----------------------------------------------------------------------
# issue 43: learn_one refuses what partial_fit refuses, before buffering;
# nothing valid is ever dropped
# ----------------------------------------------------------------------
def _valid_stream(n, n_features=3, seed=0, integers=False):
    """``n`` examples as dicts, their rows and labels (0/1)."""
    rng = np.random.RandomState(seed)
    X = rng.randint(-3, 4, size=(n, n_features)).astype(float) if integers else rng.randn(
        n, n_features)
    y = (X[:, 0] + 0.5 * rng.randn(n) > 0).astype(int)
    names = [f"f{j}" for j in range(n_features)]
    return [dict(zip(names, row.tolist())) for row in X], X, y


def _assert_same_model(trained, reference):
    """The same model, bit for bit (FOGD's is ``coef_``, the others' a
    kernel expansion)."""
    assert trained._n_examples_seen == reference._n_examples_seen
    assert trained.n_mistakes_ == reference.n_mistakes_
    expansion = ("coef_",) if hasattr(reference, "coef_") else ("support_vectors_", "dual_coef_")
    for name in expansion + ("intercept_",):
        assert_array_equal(getattr(trained, name), getattr(reference, name), strict=True)


def _matrix_linear(A, B):
    """A matrix callable (block mode): the linear kernel."""
    with np.errstate(over="ignore"):
        return A @ B.T


@pytest.mark.parametrize("estimator, value", [
    # 'rbf': the squared norm overflows (the engine's own check and message)
    (Forgetron(budget=10, gamma=0.5), 1e200),
    (BudgetedSGDClassifier(budget=10, gamma=0.5, random_state=0), -1e155),
    # 'linear' and 'poly': the kernel value of the row with itself overflows
    (KernelPassiveAggressive(kernel="linear"), 1e200),
    (TightestPerceptron(budget=10, kernel="poly", gamma=1.0, degree=3, random_state=0), 1e60),
    # block mode: a callable's k(x, x) overflows
    (KernelPassiveAggressive(kernel=_matrix_linear), 1e200),
    # FOGD: the projection onto the random weights overflows
    (FourierOGDClassifier(gamma=0.5, n_components=20, random_state=0), 1e308),
], ids=["rbf", "rbf-bsgd", "linear", "poly", "callable", "fourier"])
def test_learn_one_refuses_what_partial_fit_refuses_and_loses_nothing(estimator, value):
    # 20 valid examples buffered, then one that partial_fit refuses: it is
    # refused at learn_one, with partial_fit's own error, and the 20 are
    # learned at the next prediction (ae3fe45 buffered it: the prediction
    # raised and the 20 were dropped)
    dicts, X, y = _valid_stream(21)
    adapter = RiverClassifier(estimator, classes=[0, 1], batch_size=32)
    for i in range(20):
        adapter.learn_one(dicts[i], int(y[i]))
    # the adapter's cuts: the first example alone (it starts the model),
    # the next 19 in one call
    reference = clone(estimator).partial_fit(X[:1], y[:1], classes=[0, 1])
    reference.partial_fit(X[1:20], y[1:20])
    bad = dict(dicts[20], f1=value)
    bad_row = np.array([[bad["f0"], value, bad["f2"]]])
    with pytest.raises(ValueError) as expected:
        copy.deepcopy(reference).partial_fit(bad_row, [1])
    with pytest.raises(ValueError) as refused:
        adapter.learn_one(bad, 1)
    assert str(refused.value) == str(expected.value)
    # the buffered examples were learned first (stream order), then
    # partial_fit refused the bad one
    assert adapter._labels == [] and adapter._estimator._n_examples_seen == 20
    adapter.predict_one(dicts[0])                # a valid row: no error
    _assert_same_model(adapter.estimator_, reference)


def test_a_refusal_only_partial_fit_can_see_drops_that_example_alone():
    # a refusal that depends on what the model holds (the linear scores
    # overflow) passes learn_one's checks; the flush then learns the
    # buffered examples one partial_fit each: those before it are learned,
    # it is dropped (its error raised, naming it), those after it stay
    # buffered, and the model is that of one partial_fit per example
    stream = [({"a": 1.3e154, "b": 0.0}, 1), ({"a": 0.0, "b": 1.3e154}, 1),
              ({"a": 0.9e154, "b": 0.9e154}, 0), ({"a": 1.0, "b": 0.0}, 0),
              ({"a": 0.0, "b": -2.0}, 1)]
    adapter = RiverClassifier(KernelPerceptron(kernel="linear"), classes=[0, 1])
    reference = KernelPerceptron(kernel="linear")
    for i, (x, label) in enumerate(stream):
        adapter.learn_one(x, label)
        row = np.array([[x["a"], x["b"]]])
        if i == 2:
            with pytest.raises(ValueError) as expected:
                reference.partial_fit(row, [label])
        else:
            reference.partial_fit(row, [label], classes=[0, 1])
    with pytest.raises(ValueError) as refused:
        adapter.predict_one({"a": 1.0, "b": 1.0})
    assert str(refused.value) == str(expected.value)
    assert "refused example 3 of those learn_one accepted" in refused.value.__notes__[0]
    assert adapter._labels == [0, 1]             # the two after it, still buffered
    _assert_same_model(adapter.estimator_, reference)


_INJECTED = {"error": None}


def _failing_linear(A, B):
    """The linear kernel as a matrix callable that raises
    ``_INJECTED['error']``, when it is set, inside partial_fit (whose
    blocks have the pool's rows and the chunk's; learn_one's check asks
    for k(x, x) alone)."""
    if _INJECTED["error"] is not None and B.shape[0] > 1:
        raise _INJECTED["error"]
    return A @ B.T


@pytest.mark.parametrize("error", [KeyboardInterrupt, MemoryError])
def test_a_failed_flush_keeps_every_buffered_example(error):
    # partial_fit is atomic: a flush that fails (here inside the kernel)
    # leaves the model as it was; the adapter keeps the examples buffered
    # and the error propagates, from a prediction or from the learn_one
    # that fills the buffer; the next flush learns them (ae3fe45 dropped
    # them)
    # (integer features: the callable's products are exact whatever the
    # blocks, so the model does not depend on the cuts in block mode)
    dicts, X, y = _valid_stream(30, integers=True)
    adapter = RiverClassifier(KernelPassiveAggressive(kernel=_failing_linear), classes=[0, 1],
                              batch_size=8)
    reference = KernelPassiveAggressive(kernel=_failing_linear)
    try:
        for i in range(6):
            adapter.learn_one(dicts[i], int(y[i]))
        _INJECTED["error"] = error
        with pytest.raises(error):
            adapter.predict_one(dicts[0])
        assert len(adapter._labels) == 5
        for i in range(6, 8):
            adapter.learn_one(dicts[i], int(y[i]))
        with pytest.raises(error):             # the buffer fills: its flush fails
            adapter.learn_one(dicts[8], int(y[8]))
        assert len(adapter._labels) == 8
        with pytest.raises(error):             # full: the next learn_one flushes first
            adapter.learn_one(dicts[9], int(y[9]))
        assert len(adapter._labels) == 8
    finally:
        _INJECTED["error"] = None
    for i in range(9, 30):
        adapter.learn_one(dicts[i], int(y[i]))
    for i in range(30):
        reference.partial_fit(X[i:i + 1], y[i:i + 1], classes=[0, 1])
    _assert_same_model(adapter.estimator_, reference)


def test_feature_order_comes_from_the_first_accepted_example_with_keys():
    # ae3fe45 fixed the order from the first example given: {} (then every
    # later example raised) or one that was refused
    adapter = RiverClassifier(Forgetron(budget=5, gamma=0.5), classes=[0, 1])
    with pytest.raises(ValueError, match="has no features; pass features="):
        adapter.learn_one({}, 0)
    with pytest.raises(ValueError, match="feature 'c' has the value '1.5'"):
        adapter.learn_one({"c": "1.5", "d": 1.0}, 0)
    with pytest.raises(ValueError, match="squared norm"):     # refused by partial_fit
        adapter.learn_one({"e": 1e200}, 0)
    with pytest.raises(ValueError, match="y=2 is not one of classes"):
        adapter.learn_one({"g": 1.0}, 2)
    assert adapter.features_ is None and adapter.estimator_ is None
    adapter.learn_one({"b": 1.0, "a": 2.0}, 1)
    assert adapter.features_ == ("a", "b")
    adapter.learn_one({}, 0)                    # now an example of zeros
    assert_array_equal(adapter.estimator_.support_vectors_, [[2.0, 1.0], [0.0, 0.0]])
    given = RiverClassifier(Forgetron(budget=5, gamma=0.5), classes=[0, 1], features=["a"])
    given.learn_one({}, 1)                      # the order is given: {} is a row of zeros
    assert_array_equal(given.estimator_.support_vectors_, [[0.0]])


@pytest.mark.parametrize("value", ["1.5", "x", b"1", None, 1 + 2j, [1.0], np.array([1.0]),
                                   float("inf"), 10 ** 400],
                         ids=["numeric-str", "str", "bytes", "None", "complex", "list", "array",
                              "inf", "huge-int"])
def test_non_numeric_values_are_refused_naming_the_feature(value):
    # ae3fe45 accepted numeric strings ("1.5" learned as 1.5)
    dicts, X, y = _valid_stream(10)
    adapter = RiverClassifier(Forgetron(budget=5, gamma=0.5), classes=[0, 1], batch_size=4)
    bad = dict(dicts[0], f2=value)
    message = f"feature 'f2' has the value {value!r}"
    for model in (adapter, RiverClassifier(Forgetron(), classes=[0, 1])):  # learned / not
        if model is adapter:
            for x, label in zip(dicts, y.tolist()):
                adapter.learn_one(x, label)
        with pytest.raises(ValueError, match=re.escape(message)):
            model.learn_one(bad, 1)
        with pytest.raises(ValueError, match=re.escape(message)):
            model.predict_one(bad)
        with pytest.raises(ValueError, match=re.escape(message)):
            model.predict_proba_one(bad)
    reference = Forgetron(budget=5, gamma=0.5).partial_fit(X, y, classes=[0, 1])
    _assert_same_model(adapter.estimator_, reference)


def test_numbers_of_every_real_type_are_accepted():
    # bools are numbers, as to NumPy and scikit-learn; so are NumPy's
    # scalars and fractions
    adapter = RiverClassifier(Forgetron(budget=5, gamma=0.5), classes=[0, 1])
    values = [True, np.bool_(False), np.float32(0.5), np.int8(-3), Fraction(1, 4), 7, 2.5]
    adapter.learn_one({f"f{j}": value for j, value in enumerate(values)}, 1)
    assert_array_equal(adapter.estimator_.support_vectors_,
                       [[1.0, 0.0, 0.5, -3.0, 0.25, 7.0, 2.5]])


@pytest.mark.filterwarnings("ignore:gamma='scale' was resolved from the 1 rows:UserWarning")
@pytest.mark.parametrize("batch_size", [1, 4, 32])
@pytest.mark.parametrize("name", ["Forgetron", "BSGD-shared", "gamma='scale'"])
def test_learn_one_is_one_partial_fit_per_example_refused_examples_included(name, batch_size):
    # the docstring's promises: a bad example raises at learn_one (the
    # model left as it was), and the model is, bit for bit, that of one
    # partial_fit per example the estimator accepts, with gamma='scale'
    # too (resolved from the first example)
    estimator = (Forgetron(budget=30, gamma="scale", random_state=0)
                 if name == "gamma='scale'" else ESTIMATORS[name])
    data, X, _ = _rows(datasets.ImageSegments(), 120)
    features = sorted(data[0][0])
    y = np.array([SEGMENT_LABELS.index(label) for _, label in data])
    adapter = RiverClassifier(estimator, classes=SEGMENT_LABELS, batch_size=batch_size)
    reference = clone(estimator)
    bad_examples = [dict(data[0][0], **{features[1]: 1e200}),
                    dict(data[0][0], **{features[2]: "1.5"}),
                    dict(data[0][0], **{features[3]: float("nan")}),
                    dict(data[0][0], unknown=1.0)]
    for i, (x, label) in enumerate(data):
        if i % 30 == 17:                         # refused examples mid-stream
            for bad in bad_examples:
                with pytest.raises(ValueError):
                    adapter.learn_one(bad, label)
            with pytest.raises(ValueError):
                adapter.learn_one(x, "no such label")
        if i % 11 == 5 and i > 0:               # predictions interleaved (they flush)
            assert adapter.predict_one(x) == SEGMENT_LABELS[reference.predict(X[i:i + 1])[0]]
        adapter.learn_one(x, label)
        reference.partial_fit(X[i:i + 1], y[i:i + 1], classes=np.arange(7))
    _assert_same_model(adapter.estimator_, reference)
    if name == "gamma='scale'":
        assert adapter.estimator_.gamma_ == reference.gamma_


def test_a_changed_parameter_is_refused_and_drops_nothing():
    # partial_fit refuses every example once a parameter built into the
    # model changed: learn_one refuses too, and a flush keeps the buffered
    # examples (none is singled out and dropped)
    dicts, X, y = _valid_stream(12)
    adapter = RiverClassifier(Forgetron(budget=5, gamma=0.5), classes=[0, 1])
    for i in range(6):
        adapter.learn_one(dicts[i], int(y[i]))
    adapter._estimator.set_params(budget=7)
    with pytest.raises(ValueError, match="the parameter 'budget' was changed"):
        adapter.learn_one(dicts[6], int(y[6]))
    with pytest.raises(ValueError, match="the parameter 'budget' was changed"):
        adapter.predict_one(dicts[6])
    assert len(adapter._labels) == 5
    adapter._estimator.set_params(budget=5)
    for i in range(6, 12):
        adapter.learn_one(dicts[i], int(y[i]))
    reference = Forgetron(budget=5, gamma=0.5).partial_fit(X[:1], y[:1], classes=[0, 1])
    reference.partial_fit(X[1:], y[1:])
    _assert_same_model(adapter.estimator_, reference)


def _online_estimators():
    """Every estimator with its declared parameters of the common tests
    (``tests.test_common.small``), with each kernel it takes."""
    from skbudget._base import BaseKernelExpansionClassifier
    from skbudget._declaration import declaration_of
    from skbudget.discovery import all_estimators
    from tests.test_common import small

    for name, cls in all_estimators():
        if declaration_of(cls).solves_calls:
            continue    # (LLSVM: its first call chooses its landmarks among several rows)
        takes_kernels = issubclass(cls, BaseKernelExpansionClassifier)
        kernels = ("rbf", "linear", "poly") if takes_kernels else (None,)
        for kernel in kernels:
            est = small(cls) if kernel is None else small(cls, kernel=kernel)
            yield pytest.param(cls, est.get_params(), id=f"{name}-{kernel or 'own'}")


@pytest.mark.parametrize("cls, params", list(_online_estimators()))
def test_learn_one_and_partial_fit_refuse_the_same_rows(cls, params):
    # every online estimator and kernel: values from ordinary to the
    # float64 limit, each refused by learn_one exactly when partial_fit
    # (on the model the adapter holds) refuses it, with the same message
    dicts, X, y = _valid_stream(6)
    adapter = RiverClassifier(cls(**params), classes=[0, 1])
    for x, label in zip(dicts, y.tolist()):
        adapter.learn_one(x, label)
    for value in (3.0, 1e100, 1.3e154, 1e155, 1e200, 1e300, 1.7e308, -1.7e308):
        model = copy.deepcopy(adapter.estimator_)
        try:
            model.partial_fit(np.array([[0.5, value, -0.5]]), [1])
            expected = None
        except ValueError as error:
            expected = str(error)
        try:
            adapter.learn_one({"f0": 0.5, "f1": value, "f2": -0.5}, 1)
            refused = None
        except ValueError as error:
            refused = str(error)
        assert refused == expected, value
        adapter.estimator_                      # (learned, if accepted)
