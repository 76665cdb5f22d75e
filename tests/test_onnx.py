"""ONNX export (skbudget.onnx): onnxruntime against predict / decision_function.

The models see float32 rows (as most deployments feed them); the graph
computes the kernel expansion in double (the default ``precision``), so
its scores differ from decision_function's only by the rounding of the
rows to float32.  The data: standardized and halved (values mostly in
[-2, 2], 4 features); kernels with gamma='scale' see the same arguments at
any scale.  BudgetedSGDClassifier uses alpha = 0.01 (its coefficients grow
as 1 / (alpha t)).  ``precision='float'`` (a float32 kernel block) is
checked separately, with the tolerance it reaches.
"""

import sys

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skbudget import Forgetron, KernelMIRA, KernelPerceptron, SequentialSearchCV
from skbudget._base import BaseKernelExpansionClassifier
from skbudget.discovery import all_estimators

onnx = pytest.importorskip("onnx")
skl2onnx = pytest.importorskip("skl2onnx")
ort = pytest.importorskip("onnxruntime")
import skbudget.onnx  # noqa: E402  (registers the converters)

ESTIMATORS = [Est for _, Est in all_estimators()]
IDS = [Est.__name__ for Est in ESTIMATORS]
KERNELS = ["linear", "rbf", "poly", "sigmoid", "laplacian", "cosine"]
N_TEST = 2000


def _data(n_classes, seed=0):
    X, y = make_classification(300 + N_TEST, n_features=4, n_informative=4, n_redundant=0,
                               n_classes=n_classes, n_clusters_per_class=1, flip_y=0.05,
                               random_state=seed)
    X = StandardScaler().fit_transform(X) / 2
    return X[:300], y[:300], X[300:], y[300:]


@pytest.fixture(scope="module", params=[2, 5], ids=["2-classes", "5-classes"])
def data(request):
    return _data(request.param)


def _model(Est, kernel, **params):
    est = Est(random_state=0, **params)
    names = est.get_params()
    if "kernel" in names:
        est.set_params(kernel=kernel)
    if "budget" in names:
        est.set_params(budget=20)
    if "merge_search" in names:                         # BudgetedSGDClassifier
        est.set_params(alpha=0.01)
        if kernel != "rbf":
            est.set_params(maintenance="projection")   # merging needs kernel='rbf'
    if kernel == "poly":
        est.set_params(degree=2)
    return est


def _run(est, X, dtype=np.float32):
    onx = skl2onnx.to_onnx(est, X[:1].astype(dtype))
    session = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    label, scores = session.run(None, {session.get_inputs()[0].name: X.astype(dtype)})
    return names, label, scores


def _check(est, X_test, dtype=np.float32, min_agreement=0.999):
    names, label, scores = _run(est, X_test, dtype)
    assert names == ["label", "scores"]
    expected = est.decision_function(X_test)
    assert scores.shape == expected.shape and scores.dtype == dtype
    assert np.mean(label == est.predict(X_test)) >= min_agreement
    assert_allclose(scores, expected, rtol=1e-4, atol=1e-5)
    return label, scores


# every estimator with every kernel it takes (a model that is no kernel
# expansion: its features' RBF kernel only)
KERNEL_CASES = [pytest.param(Est, kernel, id=f"{Est.__name__}-{kernel}")
                for Est in ESTIMATORS for kernel in KERNELS
                if issubclass(Est, BaseKernelExpansionClassifier) or kernel == "rbf"]


@pytest.mark.parametrize("Est, kernel", KERNEL_CASES)
def test_onnx_matches_predict_and_decision_function(Est, kernel, data):
    X, y, X_test, _ = data
    est = _model(Est, kernel).fit(X, y)
    _check(est, X_test)


@pytest.mark.parametrize("kernel", ["chi2", "additive_chi2"])
@pytest.mark.parametrize("Est", [Est for Est in ESTIMATORS
                                 if issubclass(Est, BaseKernelExpansionClassifier)],
                         ids=lambda Est: Est.__name__)
def test_onnx_chi2_kernels(Est, kernel, data):
    X, y, X_test, _ = data                        # chi-squared kernels: rows >= 0
    est = _model(Est, kernel).fit(np.abs(X), y)
    _check(est, np.abs(X_test))


def _variants():
    """(estimator, parameter, value) for every string option of every
    parameter but the kernel's: the structural choices (BSGD's
    maintenance, KernelPerceptron's hypothesis, Tighter's validation, a
    multi-class scheme...), each of which must export."""
    found = []
    for Est in ESTIMATORS:
        for name, constraints in Est._parameter_constraints.items():
            if name in ("kernel", "gamma"):
                continue
            for constraint in constraints:
                for value in sorted(getattr(constraint, "options", ())):
                    if isinstance(value, str):
                        found.append((Est, name, value))
    return found


@pytest.mark.parametrize("Est, name, value", _variants(),
                         ids=[f"{E.__name__}-{n}={v}" for E, n, v in _variants()])
def test_onnx_every_structural_option(Est, name, value, data):
    X, y, X_test, _ = data
    est = _model(Est, "rbf").set_params(**{name: value}).fit(X, y)
    _check(est, X_test, dtype=np.float64, min_agreement=1.0)


@pytest.mark.parametrize("hypothesis", ["voted", "averaged", "longest_survivor"])
def test_onnx_kernel_perceptron_hypotheses(hypothesis, data):
    X, y, X_test, _ = data
    est = KernelPerceptron(hypothesis=hypothesis, max_iter=3, random_state=0).fit(X, y)
    if hypothesis != "voted":
        _check(est, X_test)
        return
    # a vote of signs: float32 can flip the sign of a hypothesis's score
    # at a near-tie, which moves the score by twice its votes; in double
    # the graph computes the vote exactly as predict does
    _check(est, X_test, dtype=np.float64, min_agreement=1.0)
    _, label, scores = _run(est, X_test)
    assert np.mean(label == est.predict(X_test)) >= 0.999
    assert np.mean(np.isclose(scores, est.decision_function(X_test), rtol=1e-4)
                   .reshape(len(X_test), -1).all(axis=1)) >= 0.999


def test_onnx_float_precision():
    # a float32 kernel block (the expansion is still summed in double):
    # labels agree; scores within float32's reach of the kernel values
    X, y, X_test, _ = _data(5)
    for est in (Forgetron(budget=30, random_state=0), KernelMIRA(kernel="poly", degree=2)):
        est.fit(X, y)
        onx = skl2onnx.to_onnx(est, X[:1].astype(np.float32),
                               options={id(est): {"precision": "float"}})
        session = ort.InferenceSession(onx.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        label, scores = session.run(None, {"X": X_test.astype(np.float32)})
        assert np.mean(label == est.predict(X_test)) >= 0.999
        assert_allclose(scores, est.decision_function(X_test), rtol=1e-3, atol=1e-4)


def test_onnx_model_trained_on_csr_rows():
    X, y, X_test, _ = _data(5)
    X[np.abs(X) < 0.5] = 0.0
    est = Forgetron(budget=20, random_state=0).fit(sp.csr_matrix(X), y)
    assert sp.issparse(est.support_vectors_)
    _check(est, X_test)       # the graph's input is dense rows


def test_onnx_double_input_is_tight():
    X, y, X_test, _ = _data(5)
    est = Forgetron(budget=30, random_state=0).fit(X, y)
    _, label, scores = _run(est, X_test, np.float64)
    assert (label == est.predict(X_test)).all()
    assert_allclose(scores, est.decision_function(X_test), rtol=1e-10, atol=1e-12)


def test_onnx_gamma_scale_and_kernel_params():
    X, y, X_test, _ = _data(2)
    est = Forgetron(budget=20, gamma="scale", random_state=0).fit(X * 3, y)
    assert est.gamma_ != 1.0
    _check(est, X_test * 3)
    est = Forgetron(budget=20, kernel="poly", kernel_params={"gamma": 0.5, "degree": 3,
                                                             "coef0": 0.5}, random_state=0)
    _check(est.fit(X, y), X_test)
    est = Forgetron(budget=20, kernel="rbf", kernel_params={"gamma": None}, random_state=0)
    _check(est.fit(X, y), X_test)      # scikit-learn's default: 1 / n_features


def test_onnx_string_labels_and_ties():
    X, y, X_test, _ = _data(5)
    names = np.array(["ant", "bee", "cat", "dog", "eel"])
    est = KernelMIRA(gamma=1.0, random_state=0).fit(X, names[y])
    label, _ = _check(est, X_test)
    assert label.dtype.kind in "OU"
    # an all-zero model ties every class: the arg-max is the lowest index
    est = Forgetron(budget=5, random_state=0).fit(X, y)
    est.dual_coef_ = np.zeros_like(est.dual_coef_)
    est.intercept_ = np.zeros_like(est.intercept_)
    label, _ = _check(est, X_test, min_agreement=1.0)
    assert (label == est.classes_[0]).all()


def test_onnx_pipeline():
    X, y, X_test, _ = _data(5)
    X, X_test = 10 * X + 3, 10 * X_test + 3      # the scaler's job
    pipe = make_pipeline(StandardScaler(), Forgetron(budget=30, random_state=0)).fit(X, y)
    onx = skl2onnx.to_onnx(pipe, X[:1].astype(np.float32))
    session = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    label, scores = session.run(None, {session.get_inputs()[0].name: X_test.astype(np.float32)})
    assert np.mean(label == pipe.predict(X_test)) >= 0.999
    assert_allclose(scores, pipe.decision_function(X_test), rtol=1e-4, atol=1e-4)


def test_onnx_sequential_search_exports_its_best_estimator():
    X, y, X_test, _ = _data(2)
    search = SequentialSearchCV(Forgetron(budget=10, random_state=0),
                                [{"gamma": [0.3, 3.0]}], cv=2).fit(X, y)
    onx = skl2onnx.to_onnx(search, X[:1].astype(np.float32),
                           options={id(search): {"precision": "float"}})
    # the option reached the estimator's converter: float32 support vectors
    assert {init.data_type for init in onx.graph.initializer
            if init.name.startswith("support_vectors")} == {onnx.TensorProto.FLOAT}
    session = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    label, scores = session.run(None, {"X": X_test.astype(np.float32)})
    assert np.mean(label == search.predict(X_test)) >= 0.999
    assert_allclose(scores, search.decision_function(X_test), rtol=1e-3, atol=1e-4)


def test_onnx_errors():
    X, y, _, _ = _data(2)
    est = Forgetron(budget=10, kernel=lambda a, b: float(a @ b), random_state=0).fit(X[:50],
                                                                                   y[:50])
    with pytest.raises(ValueError, match="callable kernel"):
        skl2onnx.to_onnx(est, X[:1].astype(np.float32))
    # kernel_params the converter cannot express (set after fitting: the
    # converter reads the model's parameters)
    fitted = Forgetron(budget=10, random_state=0).fit(X, y)
    fitted.kernel_params = {"gamma": "wide"}
    with pytest.raises(ValueError, match="gamma='wide'"):
        skl2onnx.to_onnx(fitted, X[:1].astype(np.float32))
    fitted.kernel_params = None
    fitted.kernel = "precomputed"
    with pytest.raises(ValueError, match="kernel='precomputed' cannot be exported"):
        skl2onnx.to_onnx(fitted, X[:1].astype(np.float32))
    fitted.kernel = "rbf"
    with pytest.raises(TypeError, match="float or double input"):
        skl2onnx.to_onnx(fitted, X[:1].astype(np.int64))
    with pytest.raises(ValueError, match="fitted on 4 features"):
        skl2onnx.to_onnx(fitted, X[:1, :3].astype(np.float32))


def test_onnx_import_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "skl2onnx", None)
    monkeypatch.delitem(sys.modules, "skbudget.onnx")
    with pytest.raises(ImportError, match=r"pip install skbudget\[onnx\]"):
        import skbudget.onnx  # noqa: F401


def test_exporting_an_unfitted_model_raises_not_fitted_error():
    pytest.importorskip("onnxruntime")
    from skl2onnx import to_onnx

    import skbudget.onnx  # noqa: F401

    with pytest.raises(NotFittedError):
        to_onnx(Forgetron(), np.zeros((1, 3), dtype=np.float32))


# ----------------------------------------------------------------------
# float32 models (support vectors stored in float32): the export keeps
# the dtype.  The models get float32 support vectors by hand (the
# expansion is what the graph reads, however it was learned).
# ----------------------------------------------------------------------
def _support_vector_types(onx):
    return {init.data_type for init in onx.graph.initializer
            if init.name.startswith("support_vectors")}




@pytest.mark.parametrize("kernel", KERNELS + ["chi2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float", "double"])
def test_onnx_float32_model_exports_float32(kernel, dtype, data):
    X, y, X_test, _ = data
    if kernel == "chi2":
        X, X_test = np.abs(X), np.abs(X_test)
    est = _model(Forgetron, kernel).fit(X.astype(np.float32), y)     # a float32 model
    assert est.support_vectors_.dtype == np.float32
    onx = skl2onnx.to_onnx(est, X[:1].astype(dtype))
    # (the linear kernel: X, rounded to float32, times the weights in double)
    assert _support_vector_types(onx) == (set() if kernel == "linear"
                                          else {onnx.TensorProto.FLOAT})
    # the kernel block in float32, whatever the input's type
    assert {init.data_type for init in onx.graph.initializer
            if init.name.startswith(("gamma", "neg_gamma", "coef0", "sv_sq"))} <= {
        onnx.TensorProto.FLOAT}
    names, label, scores = _run(est, X_test, dtype)
    expected = est.decision_function(X_test)
    assert scores.dtype == dtype
    assert np.mean(label == est.predict(X_test)) >= 0.999
    assert_allclose(scores, expected, rtol=1e-4, atol=2e-6 * np.abs(expected).max())


def test_onnx_float32_model_trained_on_csr_rows():
    X, y, X_test, _ = _data(5)
    X[np.abs(X) < 0.5] = 0.0
    est = Forgetron(budget=20, random_state=0).fit(sp.csr_matrix(X.astype(np.float32)), y)
    assert sp.issparse(est.support_vectors_) and est.support_vectors_.dtype == np.float32
    onx = skl2onnx.to_onnx(est, X[:1].astype(np.float32))
    assert _support_vector_types(onx) == {onnx.TensorProto.FLOAT}
    _, label, scores = _run(est, X_test)
    expected = est.decision_function(X_test)
    assert np.mean(label == est.predict(X_test)) >= 0.999
    assert_allclose(scores, expected, rtol=1e-4, atol=2e-6 * np.abs(expected).max())


def test_onnx_precision_option_overrides_the_models_dtype():
    X, y, X_test, _ = _data(5)
    est = Forgetron(budget=30, random_state=0).fit(X, y)
    # a float64 model: double by default, for float32 input too (as before)
    assert _support_vector_types(skl2onnx.to_onnx(est, X[:1].astype(np.float32))) == {
        onnx.TensorProto.DOUBLE}
    # precision='float' computes the block in float32 for double input too
    onx = skl2onnx.to_onnx(est, X[:1], options={id(est): {"precision": "float"}})
    assert _support_vector_types(onx) == {onnx.TensorProto.FLOAT}
    # a float32 model with precision='double': its float32 values, widened
    est = Forgetron(budget=30, random_state=0).fit(X.astype(np.float32), y)
    onx = skl2onnx.to_onnx(est, X[:1], options={id(est): {"precision": "double"}})
    assert _support_vector_types(onx) == {onnx.TensorProto.DOUBLE}
    session = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    label, scores = session.run(None, {"X": X_test.astype(np.float32).astype(np.float64)})
    expected = est.decision_function(X_test)
    assert (label == est.predict(X_test)).all()
    assert_allclose(scores, expected, rtol=1e-5, atol=1e-6 * np.abs(expected).max())
