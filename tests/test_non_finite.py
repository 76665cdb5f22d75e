"""Non-finite values: NaN or infinity in X is scikit-learn's error, and
values that overflow (gamma='scale' of huge rows, kernel values, scores
beyond float64's or float32's range) are a clear error, a warning or
finite scores."""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC
from sklearn.utils import check_array

from skbudget import BudgetedSGDClassifier, Forgetron, KernelPerceptron
from tests.model_state import assert_same_state, model_state
from tests.test_common import ESTIMATORS, IDS, KERNEL_ESTIMATORS, KERNEL_IDS


def _huge_row_data(value):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] > 0).astype(int)
    X[5] = value
    return X, y


# the estimators whose gamma defaults to 'scale' (resolved on the data)
SCALE_GAMMA = [pytest.param(Est, id=name) for Est, name in zip(ESTIMATORS, IDS)
               if Est().get_params().get("gamma") == "scale"]


@pytest.mark.filterwarnings("ignore:overflow encountered in square:RuntimeWarning")  # SVC's
@pytest.mark.parametrize("Est", SCALE_GAMMA)
def test_overflowing_scale_gamma_is_a_clear_error(Est):
    X, y = _huge_row_data(1e200)
    with pytest.raises(ValueError):          # scikit-learn's SVC refuses it too
        SVC().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match="gamma='scale'.*overflows.*numeric gamma"):
            Est().fit(X, y)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("gamma", ["scale", 0.5])
@pytest.mark.parametrize("sparse", [False, True])
def test_non_finite_input_is_scikit_learns_error(value, gamma, sparse):
    # gamma='scale' checks finiteness in its variance pass, other values
    # through scikit-learn's validation: scikit-learn's error either way
    X, y = _huge_row_data(value)
    X[7, 1] = 0.0
    if sparse:
        X = sp.csr_matrix(X)
    for est in (Forgetron(gamma=gamma), KernelPerceptron(gamma=gamma)):
        with pytest.raises(ValueError) as expected:
            check_array(X, accept_sparse="csr", estimator=est, input_name="X")
        with pytest.raises(ValueError) as raised:
            est.fit(X, y)
        assert str(raised.value) == str(expected.value)
        assert not hasattr(est, "classes_")
        with pytest.raises(ValueError) as raised:
            clone(est).partial_fit(X, y, classes=[0, 1])
        assert str(raised.value) == str(expected.value)
        est.fit(X[10:60], y[10:60])
        state = model_state(est)
        with pytest.raises(ValueError) as raised:
            est.fit(X, y)
        assert str(raised.value) == str(expected.value)
        assert_same_state(model_state(est), state)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_non_finite_kernel_values_are_a_clear_error(binary_data):
    X, y = _huge_row_data(1e300)
    with pytest.raises(ValueError, match="non-finite values.*Rescale X"):
        KernelPerceptron(kernel="poly", gamma=1.0).fit(X, y)
    X, y = binary_data
    est = Forgetron(gamma=1.0, kernel="poly").partial_fit(X[:100], y[:100], classes=[0, 1])
    state = model_state(est)
    big = X[100:].copy()
    big[30] = 1e120          # (x . x)^3 overflows
    with pytest.raises(ValueError, match="'poly' returned non-finite"):
        est.partial_fit(big, y[100:200])
    assert_same_state(model_state(est), state)
    with pytest.raises(ValueError, match="'poly' returned non-finite"):
        est.predict(big)        # the fused compiled prediction too


@pytest.mark.parametrize("sparse", [False, True])
def test_scale_gamma_set_by_one_outlier_row_warns(sparse, binary_data):
    X, y = binary_data
    X = X.copy()
    X[5] = 1e150                    # every value of one row
    X = sp.csr_matrix(X) if sparse else X
    with pytest.warns(UserWarning, match="row 5 of X"):
        Forgetron().fit(X, y)


def _huge_rbf(A, B):
    return 1e308 * rbf_kernel(A, B, gamma=1.0)


@pytest.mark.parametrize("Est", KERNEL_ESTIMATORS, ids=KERNEL_IDS)
def test_kernel_whose_scores_overflow_is_refused(Est, binary_data):
    # values so large that their sums overflow: a clear error, or finite scores
    X, y = binary_data
    est = Est(kernel=_huge_rbf, random_state=0)
    if isinstance(est, BudgetedSGDClassifier):
        est.set_params(maintenance="removal")       # merging needs kernel='rbf'
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # NumPy's overflow
        try:
            est.fit(X, y)
        except ValueError as error:
            assert re.search("not finite|non-finite|overflowed", str(error))
            return
        try:
            scores = est.decision_function(X)
        except ValueError as error:
            assert "non-finite" in str(error)
            return
    assert np.isfinite(scores).all()     # a rule whose steps scale with 1 / k(x, x)


def test_float32_onnx_scores_of_huge_coefficients_are_finite(binary_data):
    pytest.importorskip("onnxruntime")
    import onnxruntime as ort
    from skl2onnx import to_onnx

    import skbudget.onnx  # noqa: F401

    X, y = binary_data
    est = BudgetedSGDClassifier(alpha=1e-100, budget=20, gamma=1.0, random_state=0).fit(X, y)
    assert np.abs(est.decision_function(X)).max() > 1e38       # beyond float32's range
    onx = to_onnx(est, X[:1].astype(np.float32))
    session = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    labels, scores = session.run(None, {"X": X.astype(np.float32)})
    assert np.isfinite(scores).all()
    assert_array_equal(labels, est.predict(X))
    assert_array_equal(np.sign(scores), np.sign(est.decision_function(X)))
