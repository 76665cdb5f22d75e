"""Loose ends an audit found (a new user's and a hostile tester's view):
tampered files, warnings the data call for, scores that must stay finite,
the right exception types, and the tests' own dependence on the shell."""

import os
import pickle
import re
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from sklearn.exceptions import NotFittedError
from sklearn.metrics.pairwise import rbf_kernel

from skbudget import (
    BudgetedSGDClassifier,
    Forgetron,
    KernelPassiveAggressive,
    KernelPerceptron,
)
from tests.test_common import ESTIMATORS, IDS, KERNEL_ESTIMATORS, KERNEL_IDS

ROOT = Path(__file__).resolve().parents[1]


def _small(Est, **params):
    est = Est(random_state=0, gamma=1.0, **params)
    if "budget" in est.get_params():
        est.set_params(budget=7)
    return est


# ---- a tampered file cannot hang the process or hold two models -----------

@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("field, value", [("max_points", -1), ("max_points", 0),
                                          ("max_points", 3), ("width", 0), ("n_rounds", -5),
                                          ("n_mistakes", 10 ** 9)])
def test_tampered_online_record_is_refused_on_loading(Est, field, value, binary_data):
    X, y = binary_data
    state = _small(Est).partial_fit(X[:60], y[:60], classes=[0, 1]).__getstate__()
    state["_record"][field] = value
    with pytest.raises(ValueError, match="online record"):
        Est().__setstate__(state)           # what skops.io.load does


@pytest.mark.parametrize("field, value", [
    ("support_points", np.zeros(3, dtype=np.int64)),           # not one per point
    ("support_points", np.zeros(15, dtype=np.int32)),
    ("support_points", np.full(15, -2, dtype=np.int64)),
    ("support_points", [0] * 15),
    ("last_support", -2), ("last_support", 7.0), ("last_support", None),
    ("last_support", 10 ** 6),                 # the last round ends a bin: two sizes
    ("support", np.zeros((0, 2), dtype=np.int64)),             # a second layout beside
])
def test_tampered_support_sizes_of_the_record_are_refused(field, value, binary_data):
    X, y = binary_data
    est = Forgetron(budget=7, gamma=1.0).partial_fit(X[:60], y[:60], classes=[0, 1])
    state = est.__getstate__()
    state["_record"]["max_points"], state["_record"]["width"] = 16, 4
    state["_record"]["points"] = state["_record"]["points"][3::4]
    state["_record"]["support_points"] = state["_record"]["support_points"][3::4]
    assert state["_record"]["points"].size == 15
    Forgetron().__setstate__(state)         # a record 4 rounds a bin loads
    state["_record"][field] = value
    with pytest.raises(ValueError, match="online record"):
        Forgetron().__setstate__(state)


@pytest.mark.parametrize("support", [
    np.array([[0, 3]]), np.array([[61, 3]]), np.array([[4, 3], [8, 2]]),   # rounds
    np.array([[60, -1]]), np.array([[60, 3]], dtype=np.int32), np.zeros((1, 3), np.int64),
])
def test_tampered_record_of_the_earlier_layout_is_refused(support, binary_data):
    # the sparse reads of an earlier version ((round, size), see
    # skbudget._record._support_of_sparse_reads) index the new points
    X, y = binary_data
    est = Forgetron(budget=7, gamma=1.0).partial_fit(X[:60], y[:60], classes=[0, 1])
    state = est.__getstate__()
    del state["_record"]["support_points"], state["_record"]["last_support"]
    state["_record"]["support"] = np.array([[20, 5], [60, 7]], dtype=np.int64)
    Forgetron().__setstate__(state)
    state["_record"]["support"] = support.astype(support.dtype)
    with pytest.raises(ValueError, match="online record"):
        Forgetron().__setstate__(state)


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])      # store and block mode
@pytest.mark.parametrize("field, value", [("chunk_size", 0), ("chunk_size", -1),
                                          ("chunk_size", 2.5), ("shared_support", "yes"),
                                          ("pools", []), ("pool_ids", [])])
def test_tampered_stream_driver_is_refused_on_loading(kernel, field, value, binary_data):
    X, y = binary_data
    est = Forgetron(budget=7, kernel=kernel, gamma=1.0).partial_fit(X[:60], y[:60],
                                                                    classes=[0, 1])
    state = est.__getstate__()
    state["_driver"][field] = value
    with pytest.raises(ValueError, match="stream"):
        Forgetron().__setstate__(state)


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_file_whose_attributes_and_learners_disagree_is_refused(Est, binary_data):
    # the public attributes (what predict uses) of one model, the learners
    # (what partial_fit continues) of another
    X, y = binary_data
    first = _small(Est).partial_fit(X[:60], y[:60], classes=[0, 1])
    second = _small(Est).partial_fit(X[60:120], y[60:120], classes=[0, 1])
    state = first.__getstate__()
    state["_driver"] = second.__getstate__()["_driver"]
    with pytest.raises(ValueError, match="do not match"):
        Est().__setstate__(state)
    # each file alone loads
    for model in (first, second):
        loaded = Est()
        loaded.__setstate__(model.__getstate__())
        assert_array_equal(loaded.decision_function(X), model.decision_function(X))


def test_model_whose_read_out_changed_after_training_loads(binary_data):
    # hypothesis may change between calls: the attributes were computed
    # with the old one, and the file is still one model
    X, y = binary_data
    est = KernelPerceptron(gamma=1.0).fit(X, y).set_params(hypothesis="averaged")
    loaded = pickle.loads(pickle.dumps(est))
    assert_array_equal(loaded.decision_function(X), est.decision_function(X))
    loaded.partial_fit(X, y)
    assert not np.array_equal(loaded.dual_coef_, est.dual_coef_)     # now the averaged one


def test_skops_file_with_a_tampered_record_does_not_load(binary_data):
    sio = pytest.importorskip("skops.io")
    X, y = binary_data
    est = Forgetron(budget=7, gamma=1.0).partial_fit(X[:60], y[:60], classes=[0, 1])
    record = est._record
    record.max_points = -1                     # as a tampered file would say
    data = sio.dumps(est)
    with pytest.raises(ValueError, match="online record"):
        sio.loads(data, trusted=["skbudget._budget.Forgetron"])


# ---- the "Deploying" page: a fixed list of types to trust, CSR included ---

def _deploying_trusted_list():
    """The list of types the "Deploying" page says to trust, by running the
    page's code block that builds it."""
    text = (ROOT / "doc" / "user_guide" / "deploying.rst").read_text()
    blocks = re.findall(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", text)
    block = next(b for b in blocks if "TRUSTED =" in b)
    namespace = {}
    exec("\n".join(line[3:] for line in block.splitlines()), namespace)
    return text, namespace["TRUSTED"]


@pytest.mark.parametrize("sparse", [False, True])
def test_deploying_page_trusts_a_fixed_list_that_loads_every_model(sparse, binary_data):
    sio = pytest.importorskip("skops.io")
    text, trusted = _deploying_trusted_list()
    assert "trusted=untrusted" not in text and "scipy.sparse._csr.csr_matrix" in text
    X, y = binary_data
    X = sp.csr_matrix(X) if sparse else X
    for Est in ESTIMATORS:
        data = sio.dumps(_small(Est).partial_fit(X[:60], y[:60], classes=[0, 1]))
        assert set(sio.get_untrusted_types(data=data)) <= set(trusted)
        sio.loads(data, trusted=trusted)


# ---- gamma='scale' set by one outlier row ----------------------------------

@pytest.mark.parametrize("sparse", [False, True])
def test_scale_gamma_set_by_one_outlier_row_warns(sparse, binary_data):
    X, y = binary_data
    X = X.copy()
    X[5] = 1e150                    # every value of one row
    X = sp.csr_matrix(X) if sparse else X
    with pytest.warns(UserWarning, match="row 5 of X"):
        Forgetron().fit(X, y)


# ---- scores stay finite ----------------------------------------------------

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


def test_exporting_an_unfitted_model_raises_not_fitted_error():
    pytest.importorskip("onnxruntime")
    from skl2onnx import to_onnx

    import skbudget.onnx  # noqa: F401

    with pytest.raises(NotFittedError):
        to_onnx(Forgetron(), np.zeros((1, 3), dtype=np.float32))


# ---- the shared multi-class model at a tiny budget -------------------------

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


# ---- KernelPassiveAggressive: chunked partial_fit is fit, bit for bit ------

@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly", "laplacian"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_kernel_passive_aggressive_chunks_are_bit_exact(kernel, n_classes, binary_data,
                                                        multiclass_data):
    X, y = binary_data if n_classes == 2 else multiclass_data
    params = dict(kernel=kernel, gamma=0.5, C=0.7, shuffle=False)
    whole = KernelPassiveAggressive(**params).fit(X, y)
    for size in (1, 7, 64):
        chunked = KernelPassiveAggressive(**params)
        for start in range(0, len(y), size):
            chunked.partial_fit(X[start:start + size], y[start:start + size],
                                classes=np.unique(y))
        assert_array_equal(chunked.dual_coef_, whole.dual_coef_, strict=True)
        assert_array_equal(chunked.support_vectors_, whole.support_vectors_, strict=True)
        assert_array_equal(chunked.intercept_, whole.intercept_, strict=True)


# ---- CI ---------------------------------------------------------------------

def test_sanitizer_step_lets_a_report_reach_the_log():
    # pytest's output capture swallows an AddressSanitizer report when the
    # process aborts: the sanitizer step runs it with capture off
    script = (ROOT / ".ci" / "sanitize").read_text()
    command = script[script.index("python -m pytest"):]
    assert re.search(r"(?:^|\s)(?:-s|--capture=no)(?:\s|$)", command)


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="POSIX signals")
def test_ctrl_c_tests_pass_when_sigint_starts_ignored():
    # a background job of a non-interactive shell starts with SIGINT ignored
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         "tests/test_robustness.py", "-k",
         "keyboard_interrupt_during_a_long or interrupt_is_honoured"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stdout[-3000:]
    assert "3 passed" in result.stdout
