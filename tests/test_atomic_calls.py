"""Atomic calls: a ``partial_fit`` or ``fit`` that fails part-way (a kernel
error, Ctrl-C, MemoryError, non-finite values, late in a compiled segment
or at random points of random streams) changes nothing, every generator
included, and the stream continues as if the call had never been made.

Every estimator of ``skbudget.__all__`` with a kernel is covered; the
scenarios that once crashed the process run against the public API.
"""

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skbudget import KernelPassiveAggressive
from tests.model_state import assert_same_state, model_state
from tests.test_common import KERNEL_ESTIMATORS, KERNEL_IDS, small


def test_chi2_kernel_error_after_the_first_chunk():
    rng = np.random.RandomState(0)
    X = np.abs(rng.normal(size=(3000, 5)))
    y = (X[:, 0] > X[:, 1]).astype(int)
    est = KernelPassiveAggressive(kernel="chi2", gamma=0.5)
    est.partial_fit(X[:100], y[:100], classes=[0, 1])
    before, state = pickle.dumps(est), model_state(est)
    bad = X[100:].copy()
    bad[-10:] = -1.0     # the last rows are negative: chi2 raises on a late chunk
    with pytest.raises(ValueError, match="negative"):
        est.partial_fit(bad, y[100:])
    assert pickle.dumps(est) == before
    assert_same_state(model_state(est), state)
    est.partial_fit(X[100:101], y[100:101])
    clean = KernelPassiveAggressive(kernel="chi2", gamma=0.5)
    clean.partial_fit(X[:100], y[:100], classes=[0, 1]).partial_fit(X[100:101], y[100:101])
    assert pickle.dumps(est) == pickle.dumps(clean)


class FlakyKernel:
    """An RBF kernel on two rows that fails on its ``fail_at``-th call:
    raising ``error``, or returning NaN when ``error`` is None."""

    def __init__(self):
        self.calls = 0
        self.fail_at = None
        self.error = None

    def arm(self, after_calls, error):
        self.calls, self.fail_at, self.error = 0, after_calls, error

    def __call__(self, a, b):
        self.calls += 1
        if self.fail_at is not None and self.calls >= self.fail_at:
            self.fail_at, error = None, self.error
            if error is None:
                return np.nan
            raise error
        diff = a - b
        diff = diff.toarray() if sp.issparse(diff) else diff     # CSR rows
        return np.exp(-0.8 * np.sum(diff ** 2))


@pytest.mark.parametrize("Est", KERNEL_ESTIMATORS, ids=KERNEL_IDS)
@pytest.mark.parametrize("error", [KeyboardInterrupt(), MemoryError(), None],
                         ids=["interrupt", "memory", "nan"])
def test_failure_mid_call_changes_nothing_and_the_stream_continues(Est, error,
                                                                   multiclass_data):
    X, y = multiclass_data
    X, y = X[:90], y[:90]
    kernel = FlakyKernel()
    est = small(Est, kernel=kernel)
    est._chunk_size = 4
    est.partial_fit(X[:30], y[:30], classes=[0, 1, 2])
    state = model_state(est)
    probe = copy.deepcopy(est)       # count the kernel calls of the whole call
    kernel.calls = 0
    probe.partial_fit(X[30:70], y[30:70])
    kernel.arm(after_calls=kernel.calls // 2, error=error)   # half-way through
    with pytest.raises(type(error) if error is not None else ValueError,
                       match=None if error is not None else "non-finite"):
        est.partial_fit(X[30:70], y[30:70])
    assert_same_state(model_state(est), state)
    est.partial_fit(X[70:], y[70:])
    clean = small(Est, kernel=kernel)
    clean._chunk_size = 4
    clean.partial_fit(X[:30], y[:30], classes=[0, 1, 2]).partial_fit(X[70:], y[70:])
    assert_same_state(model_state(est), model_state(clean))


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("Est", KERNEL_ESTIMATORS, ids=KERNEL_IDS)
def test_failure_late_in_a_compiled_segment_changes_nothing(Est, multiclass_data):
    # store mode: the failing row comes after many rounds of the same
    # compiled call (updates, removals, random draws); the model and every
    # generator go back to before the call
    X, y = multiclass_data
    def make():
        est = small(Est, kernel="poly", degree=3)
        if "maintenance" in est.get_params():
            est.set_params(maintenance="projection")
        return est
    est = make().partial_fit(X[:30], y[:30], classes=[0, 1, 2])
    state = model_state(est)
    bad = X[30:].copy()
    bad[-5] = 1e200                  # (x . x)^3 overflows
    with pytest.raises(ValueError, match="'poly' returned non-finite"):
        est.partial_fit(bad, y[30:])
    assert_same_state(model_state(est), state)
    est.partial_fit(X[30:], y[30:])
    clean = make().partial_fit(X[:30], y[:30], classes=[0, 1, 2]).partial_fit(X[30:], y[30:])
    assert_same_state(model_state(est), model_state(clean))


@pytest.mark.parametrize("Est", KERNEL_ESTIMATORS, ids=KERNEL_IDS)
def test_failed_warm_start_fit_changes_nothing(Est, binary_data):
    X, y = binary_data
    X, y = X[:80], y[:80]
    kernel = FlakyKernel()
    est = small(Est, kernel=kernel, warm_start=True, max_iter=2)
    est._gram_cache_limit = 0     # kernel blocks computed chunk by chunk
    est._chunk_size = 8
    est.fit(X, y)
    state = model_state(est)
    kernel.arm(after_calls=1500, error=RuntimeError("kernel failed"))
    with pytest.raises(RuntimeError, match="kernel failed"):
        est.fit(X, y)
    assert_same_state(model_state(est), state)


STEP = st.tuples(
    st.integers(1, 25),                                   # chunk size
    st.booleans(),                                        # CSR chunk
    st.sampled_from([None, None, "raise", "interrupt", "nan"]),   # failure
    st.integers(1, 400),                                  # kernel calls before it
)


def _stream_run(Est, n_classes, steps, X, y, only=None):
    """Feed the steps' chunks; with ``only`` (step indices) the clean run of
    just those, else inject each step's failure.  Returns the estimator and
    the indices of the calls that completed."""
    kernel = FlakyKernel()
    est = small(Est, kernel=kernel)
    if "budget" in est.get_params():
        est.set_params(budget=4)
    est._chunk_size = 3
    classes = np.arange(n_classes)
    completed, start = [], 0
    for i, (size, csr, failure, after) in enumerate(steps):
        rows = slice(start, start + size)
        start += size
        if only is not None and i not in only:
            continue
        chunk = sp.csr_matrix(X[rows]) if csr else X[rows]
        if only is None and failure is not None:
            kernel.arm(after, {"raise": RuntimeError("kernel failed"),
                               "interrupt": KeyboardInterrupt(), "nan": None}[failure])
        state = model_state(est)
        try:
            est.partial_fit(chunk, y[rows], classes=classes)
        except (RuntimeError, KeyboardInterrupt, ValueError) as exc:
            assert only is None and failure is not None, exc
            assert_same_state(model_state(est), state)
        else:           # (a call may need fewer kernel values than ``after``)
            completed.append(i)
        kernel.fail_at = None
    return est, completed


def _check_random_stream(Est, n_classes, steps, seed):
    rng = np.random.RandomState(seed)
    n = sum(step[0] for step in steps)
    X = rng.normal(size=(n, 3))
    y = rng.randint(n_classes, size=n)
    failing, completed = _stream_run(Est, n_classes, steps, X, y)
    clean, _ = _stream_run(Est, n_classes, steps, X, y, only=set(completed))
    assert_same_state(model_state(failing), model_state(clean))


def _random_streams_test(max_examples, max_steps):
    """The property test, with ``max_examples`` streams of up to ``max_steps`` calls
    (failures injected through the kernel: FourierOGDClassifier's are in
    tests/test_ogd.py)."""
    @pytest.mark.parametrize("Est", KERNEL_ESTIMATORS, ids=KERNEL_IDS)
    @settings(max_examples=max_examples, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(n_classes=st.integers(2, 4), steps=st.lists(STEP, min_size=1, max_size=max_steps),
           seed=st.integers(0, 1000))
    def test(Est, n_classes, steps, seed):
        _check_random_stream(Est, n_classes, steps, seed)
    return test


test_failed_calls_leave_no_trace = _random_streams_test(10, 6)


test_failed_calls_leave_no_trace_long = pytest.mark.slow(_random_streams_test(60, 12))
