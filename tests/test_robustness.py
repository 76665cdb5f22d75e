"""A streaming engine you can trust: failed calls change nothing, compiled
code never crashes, memory stays flat, formats and parameters behave.

Every estimator of ``skbudget.__all__`` is covered; the scenarios of the
issue that once crashed the process run against the public API.
"""

import _thread
import copy
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC
from sklearn.utils import check_array
from sklearn.utils.estimator_checks import parametrize_with_checks

import skbudget._stream
import skbudget._threads
from skbudget import (
    BudgetedSGDClassifier,
    Forgetron,
    KernelPassiveAggressive,
    KernelPerceptron,
    SequentialSearchCV,
    TighterPerceptron,
)
from skbudget._engine import gather_block
from skbudget._record import OnlineRecord
from tests.oracles import keeping_flags, mistake_flags
from tests.test_common import BUDGETED, ESTIMATORS, IDS, KERNEL_ESTIMATORS, KERNEL_IDS, small


def model_state(est):
    """Everything a model is made of, comparable with ``==``: the fitted
    attributes, each learner's full state and every generator's state."""
    if not hasattr(est, "classes_"):
        return None
    state = {name: getattr(est, name) for name in (
        "classes_", "dual_coef_", "coef_", "intercept_", "n_support_", "n_mistakes_",
        "n_rounds_", "n_updates_", "mistake_curve_", "n_iter_", "_n_examples_seen")
        if hasattr(est, name)}
    if hasattr(est, "support_vectors_"):
        vectors = est.support_vectors_
        state["support_vectors_"] = vectors.toarray() if sp.issparse(vectors) else vectors
    state["pools"] = [p.toarray() if sp.issparse(p) else p for p in est._driver.pools]
    state["pool_ids"] = est._driver.pool_ids
    state["rng"] = est._rng.get_state()[1]
    for k, learner in enumerate(est._learners):
        for name, value in learner.get_state().items():
            rng = isinstance(value, np.random.RandomState)
            state[f"learner{k}.{name}"] = value.get_state()[1] if rng else value
    return state


def assert_same_state(a, b):
    assert (a is None) == (b is None)
    if a is None:
        return
    assert a.keys() == b.keys()
    for name in a:
        x, y = a[name], b[name]
        if isinstance(x, list):
            assert len(x) == len(y), name
            for u, v in zip(x, y):
                assert_array_equal(u, v, err_msg=name)
        else:
            assert_array_equal(x, y, err_msg=name)


# ----------------------------------------------------------------------
# 1. atomic calls: the reproduced crash scenarios
# ----------------------------------------------------------------------
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


def test_csr_chunk_after_dense_chunks_multiclass(multiclass_data):
    X, y = multiclass_data
    est = small(Forgetron, budget=20)
    est.partial_fit(X[:60], y[:60], classes=[0, 1, 2])
    est.partial_fit(sp.csr_matrix(X[60:110]), y[60:110])
    est.partial_fit(X[110:], y[110:])
    dense = small(Forgetron, budget=20)
    for piece in (slice(0, 60), slice(60, 110), slice(110, None)):
        dense.partial_fit(X[piece], y[piece], classes=[0, 1, 2])
    assert_same_state(model_state(est), model_state(dense))


@pytest.fixture
def sigint_raises():
    """Python's Ctrl-C handler while the test runs: a process started with
    SIGINT ignored (any background job of a non-interactive shell) would
    otherwise never see the interrupts these tests send."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_keyboard_interrupt_during_a_long_partial_fit(sigint_raises):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(20000, 10))
    y = (X[:, 0] + 0.5 * rng.normal(size=len(X)) > 0).astype(int)

    def started():
        return Forgetron(budget=200, gamma=0.1).partial_fit(X[:500], y[:500], classes=[0, 1])

    est = started()
    timer = threading.Timer(0.05, _thread.interrupt_main)
    completed = 0
    with pytest.raises(KeyboardInterrupt):
        timer.start()
        while completed < 1000:        # calls until the interrupt lands in one
            est.partial_fit(X[500:], y[500:])
            completed += 1
    timer.cancel()
    # the model of the calls that completed (one more if the interrupt came
    # after a call had done its work, before the loop counted it)
    clean = started()
    for _ in range(completed):
        clean.partial_fit(X[500:], y[500:])
    if pickle.dumps(est) != pickle.dumps(clean):
        clean.partial_fit(X[500:], y[500:])
        assert pickle.dumps(est) == pickle.dumps(clean)
    est.partial_fit(X[:300], y[:300])
    clean.partial_fit(X[:300], y[:300])
    assert pickle.dumps(est) == pickle.dumps(clean)


@pytest.mark.parametrize("name, how", [("KernelPerceptron", "signal"),
                                       ("Forgetron", "interrupt_main")])
def test_repeated_interrupts_with_threads_change_nothing(name, how):
    # a Ctrl-C every 0.7 ms over 50-row calls of a 4-class model with
    # n_jobs=2 (every segment in threads): the interrupts land anywhere,
    # thread starts included; no crash, and the model is that of the calls
    # that took effect, bit for bit (in a child: a crash fails the test)
    # (a slower build, such as the sanitizer build of .ci/sanitize, may see
    # every call interrupted at that period: the period is then lengthened)
    for period in ("0.0007", "0.003", "0.012", "0.05"):
        result = subprocess.run([sys.executable, "-m", "tests.interrupt_stress", name, "120",
                                 period, how], capture_output=True, text=True, timeout=300,
                                cwd=Path(__file__).resolve().parents[1])
        assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
        words = result.stdout.split()
        assert words[-1] == "same"
        interrupted = int(words[words.index("interrupted") + 1])
        applied = int(words[words.index("applied") + 1])
        if applied > 1:
            break
    assert interrupted > 0 and applied > 1       # both kinds of call happened


class _Interrupter:
    """Sends the main thread a SIGINT after ``delay`` seconds; ``latency``:
    seconds from then until the KeyboardInterrupt reached the caller."""

    def __init__(self, delay):
        self.timer = threading.Timer(delay, self.fire)
        self.sent = None

    def fire(self):
        self.sent = time.perf_counter()
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    def __enter__(self):
        self.timer.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.timer.cancel()
        self.latency = time.perf_counter() - self.sent if self.sent is not None else None
        return False


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_interrupt_is_honoured_during_a_long_compiled_segment(n_jobs, sigint_raises):
    # one compiled call per learner runs the whole 32768-row segment (several
    # seconds of BSGD merging at B = 500 with the golden-section search; the
    # table's merges take a fraction of the 0.3 s before the interrupt): the
    # loop polls for Ctrl-C, and the call rolls back exactly (the 0.2 s
    # figure: benchmarks/bench_stream.py)
    rng = np.random.RandomState(0)
    X = rng.normal(size=(32768, 10))
    y = (X[:, 0] * X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    def started():
        return BudgetedSGDClassifier(maintenance="merging", merge_search="golden", budget=500,
                                     gamma=0.1, multi_class="ovr", n_jobs=n_jobs).partial_fit(
            X[:1500], y[:1500], classes=[0, 1, 2])
    est = started()
    state = model_state(est)
    with pytest.raises(KeyboardInterrupt), _Interrupter(0.3) as interrupter:
        est.partial_fit(X, y)
    assert interrupter.latency < 1.0
    assert_same_state(model_state(est), state)
    est.partial_fit(X[1500:1600], y[1500:1600])
    clean = started().partial_fit(X[1500:1600], y[1500:1600])
    assert_same_state(model_state(est), model_state(clean))


def test_threads_are_reused_and_small_segments_run_serially(multiclass_data, monkeypatch):
    X, y = multiclass_data
    helpers = skbudget._threads.HELPERS
    starts = []
    original_start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start",
                        lambda thread: (starts.append(thread.name), original_start(thread))[1])
    # one-row calls: their segments cannot pay for threads
    est = small(Forgetron, budget=20, n_jobs=2).partial_fit(X[:30], y[:30], classes=[0, 1, 2])
    runs = helpers.n_runs
    for i in range(30, 60):
        est.partial_fit(X[i:i + 1], y[i:i + 1])
    assert helpers.n_runs == runs and not starts
    # every segment in threads: many calls and epochs, at most one thread
    # started, ever, and the model is the serial one
    monkeypatch.setattr(skbudget._stream, "THREAD_MIN_WORK_NS", 0)
    threaded = small(Forgetron, budget=20, n_jobs=2, max_iter=3).fit(X, y)
    for start in range(0, 150, 10):
        threaded.partial_fit(X[start:start + 10], y[start:start + 10])
    assert helpers.n_runs >= runs + 18
    assert len(starts) <= 1 and set(starts) <= {"skbudget-helper"}
    serial = small(Forgetron, budget=20, max_iter=3).fit(X, y)
    for start in range(0, 150, 10):
        serial.partial_fit(X[start:start + 10], y[start:start + 10])
    assert_same_state(model_state(threaded), model_state(serial))


def _threaded_fit(X, y, results):
    """A threaded fit (in a forked child): puts its coefficients and
    whether its segments ran in threads on ``results``."""
    before = skbudget._threads.HELPERS.n_runs
    est = small(Forgetron, budget=20, n_jobs=2).fit(X, y)
    results.put((est.dual_coef_, skbudget._threads.HELPERS.n_runs > before))


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="POSIX fork")
def test_threads_work_in_a_forked_child(multiclass_data, monkeypatch):
    X, y = multiclass_data
    monkeypatch.setattr(skbudget._stream, "THREAD_MIN_WORK_NS", 0)   # (the child's too)
    small(Forgetron, budget=20, n_jobs=2).fit(X, y)     # the parent has helper threads
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_threaded_fit, args=(X, y, results))  # (not a daemon:
    child.start()                               # joblib gives a daemon n_jobs=1)
    coef, threaded = results.get(timeout=120)
    child.join(timeout=60)
    assert child.exitcode == 0 and threaded
    assert_array_equal(coef, small(Forgetron, budget=20).fit(X, y).dual_coef_)


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


# ----------------------------------------------------------------------
# 2. never a crash: compiled calls check the state they are handed
# ----------------------------------------------------------------------
def test_corrupted_learner_state_raises_instead_of_crashing():
    # every field of every estimator's learner state, in a child process
    result = subprocess.run([sys.executable, "-m", "tests.corrupt_states"], capture_output=True,
                            text=True, timeout=600, cwd=Path(__file__).parents[1])
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert lines[-1] == "done"
    refused = {tuple(line.split()[1:]) for line in lines[:-1]}
    # the entry checks fire: the store's indices, and each policy's own state
    for name, field in [("Forgetron", "order"), ("Forgetron", "free_cells"),
                        ("KernelPerceptron", "event_cell"), ("Projectron", "chol"),
                        ("TighterPerceptron", "vslot"), ("TightestPerceptron", "wpos"),
                        ("BudgetMIRA", "label"), ("BudgetedSGDClassifier", "budget"),
                        ("BudgetedSGDClassifier", "row_sqnorm")]:
        for kernel in ("rbf", "laplacian"):
            assert (name, kernel, field) in refused


def test_check_state_names_the_problem(binary_data):
    X, y = binary_data
    est = small(Forgetron).partial_fit(X[:100], y[:100], classes=[0, 1])
    learner = est._learners[0]
    state = learner.get_state()
    state["order"][0] = 10 ** 6
    learner.set_state(state)
    with pytest.raises(ValueError, match="inconsistent state.*out of range"):
        est.partial_fit(X[100:110], y[100:110])
    assert learner.get_state()["order"][0] == 10 ** 6   # rolled back to what it was


def test_gram_gather_checks_its_indices():
    M = np.arange(12.0).reshape(3, 4)
    assert_array_equal(gather_block(M, np.array([0, 2]), np.array([3, 1])), [[3, 1], [11, 9]])
    for rows, cols in (([0, 3], [1]), ([0], [-1]), ([-2], [0]), ([1], [4])):
        with pytest.raises(ValueError, match="outside"):
            gather_block(M, np.array(rows, dtype=np.intp), np.array(cols, dtype=np.intp))


# ----------------------------------------------------------------------
# 3. flat memory: the bounded online record
# ----------------------------------------------------------------------
@pytest.mark.parametrize("n_rounds", [1, 7, 512, 513, 1000, 5000, 40_000])
def test_record_curve_is_bounded_and_exact_at_its_points(n_rounds):
    rng = np.random.RandomState(n_rounds)
    flags = (rng.uniform(size=n_rounds) < 0.3).astype(np.uint8)
    sizes = rng.randint(0, 1000, size=n_rounds)
    record = OnlineRecord(max_points=64)
    start = 0
    while start < n_rounds:          # calls of random sizes
        stop = start + int(rng.randint(1, 300))
        record = record.extended(flags[start:stop], sizes[start:stop])
        start = stop
    curve = record.curve()
    assert len(curve) <= 65
    assert record.n_rounds == n_rounds and record.n_mistakes == flags.sum()
    assert tuple(curve[-1]) == (n_rounds, flags.sum())
    assert_array_equal(curve[:, 1], np.cumsum(flags)[curve[:, 0] - 1])
    if n_rounds >= 128:              # the curve spans the stream evenly
        assert len(curve) >= 32
        assert np.ptp(np.diff(curve[:-1, 0])) == 0 if len(curve) > 2 else True
    support = record.support_curve()     # the sizes at the same rounds
    assert_array_equal(support[:, 0], curve[:, 0])
    assert_array_equal(support[:, 1], sizes[curve[:, 0] - 1])


def test_record_keeps_no_flags_unless_asked(binary_data):
    X, y = binary_data
    est = small(Forgetron).fit(X, y)
    assert est._record.flag_chunks is None
    with pytest.raises(AttributeError, match="keep_flags"):
        est._mistake_flags()
    flagged = keeping_flags(small(Forgetron)).fit(X, y)
    assert mistake_flags(flagged).sum() == flagged.n_mistakes_ == est.n_mistakes_
    assert_array_equal(flagged.mistake_curve_, est.mistake_curve_)


@pytest.mark.parametrize("make, table", [
    (lambda: KernelPerceptron(gamma=1.0, lam=0.5), "cell_of_example"),
    (lambda: TighterPerceptron(gamma=1.0, budget=10, validation="full"), "val_of_example"),
], ids=["KernelPerceptron", "TighterPerceptron-full"])
def test_tables_keyed_by_example_cover_one_call(make, table, binary_data):
    # example identities never recur across calls: the table of a call is
    # dropped by the next one (partial_fit), kept across a fit's epochs
    X, y = binary_data
    est = make()
    for _ in range(40):
        est.partial_fit(X[:50], y[:50], classes=[0, 1])
    assert len(est._learners[0].get_state()[table]) <= 100
    kept = make().set_params(max_iter=3).fit(X[:50], y[:50])._learners[0].get_state()[table]
    assert len(kept) >= 50 and (kept >= 0).any()


@pytest.mark.parametrize("Est", BUDGETED, ids=[E.__name__ for E in BUDGETED])
def test_model_size_does_not_grow_with_the_stream(Est):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(2000, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    est = small(Est, budget=20)
    if "validation" in est.get_params():
        est.set_params(validation="budget")
    sizes = []
    for repeat in range(30):        # 60 000 rounds in all
        est.partial_fit(X, y, classes=[0, 1])
        if repeat in (4, 29):
            sizes.append(len(pickle.dumps(est)))
    assert est.n_rounds_ == 60_000
    assert len(est.mistake_curve_) <= 257
    assert sizes[1] - sizes[0] < 1_500      # the curve's bins, not the rounds


# ----------------------------------------------------------------------
# 4. dense and CSR chunks mix
# ----------------------------------------------------------------------
@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("first", ["dense", "csr"])
def test_dense_and_csr_chunks_mix(Est, first, multiclass_data):
    X, y = multiclass_data
    for labels in (y, (y == 0).astype(int)):        # multi-class, binary
        classes = np.unique(labels)
        dense, mixed = small(Est), small(Est)
        pieces = np.array_split(np.arange(len(labels)), 6)
        for i, piece in enumerate(pieces):
            dense.partial_fit(X[piece], labels[piece], classes=classes)
            as_csr = (i % 2 == 0) == (first == "csr")
            chunk = sp.csr_matrix(X[piece]) if as_csr else X[piece]
            mixed.partial_fit(chunk, labels[piece], classes=classes)
        a, b = model_state(dense), model_state(mixed)
        if "support_vectors_" in a:
            assert sp.issparse(mixed.support_vectors_) == (first == "csr")
        for name in ("dual_coef_", "coef_", "support_vectors_", "n_support_", "mistake_curve_"):
            if name in a:
                assert_allclose(a[name], b[name], rtol=1e-10, atol=1e-10)
        assert_allclose(dense.decision_function(X), mixed.decision_function(X), atol=1e-9)


# ----------------------------------------------------------------------
# 5. parameter changes between calls
# ----------------------------------------------------------------------
@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_changed_model_parameters_raise_and_call_params_apply(Est, binary_data):
    X, y = binary_data
    est = small(Est).partial_fit(X[:100], y[:100], classes=[0, 1])
    captured = [name for name in est.get_params() if name not in est._call_params]
    for name in captured:
        old = getattr(est, name)
        new = {"kernel": "laplacian", "kernel_params": {"gamma": 0.3}, "gamma": 0.123,
               "random_state": 12345, "prior": (2.0, 2.0), "validation": "support",
               "theta_init": "kappa", "threshold_step": "kappa", "budget": 3,
               "alpha_bound": 2, "self_tuned": False, "degree": 5}.get(name)
        if new is None:
            new = old * 2 + 1 if isinstance(old, (int, float)) and not isinstance(old, bool) else 1
        state = model_state(est)
        est.set_params(**{name: new})
        with pytest.raises(ValueError, match=f"'{name}' was changed.*Call fit"):
            est.partial_fit(X[100:110], y[100:110])
        assert_same_state(model_state(est), state)
        est.set_params(**{name: old})
    est.set_params(verbose=0, max_iter=3, shuffle=False)
    est.partial_fit(X[100:110], y[100:110])          # call parameters may change
    est.set_params(warm_start=True, budget=3) if "budget" in captured else None
    if "budget" in captured:
        with pytest.raises(ValueError, match="'budget' was changed"):
            est.fit(X, y)
        est.set_params(warm_start=False).fit(X, y)   # a new model takes the new value
        assert np.all(est.n_support_ <= 3)


def test_hypothesis_may_change_between_calls(binary_data):
    X, y = binary_data
    est = KernelPerceptron(gamma=1.0).partial_fit(X[:100], y[:100], classes=[0, 1])
    est.set_params(hypothesis="averaged").partial_fit(X[100:], y[100:])
    clean = KernelPerceptron(gamma=1.0, hypothesis="averaged")
    clean.partial_fit(X[:100], y[:100], classes=[0, 1]).partial_fit(X[100:], y[100:])
    assert_allclose(est.decision_function(X), clean.decision_function(X))


def test_kernel_params_changed_in_place_is_a_change(binary_data):
    X, y = binary_data
    params = {"gamma": 0.5}
    est = Forgetron(kernel="rbf", kernel_params=params).partial_fit(X[:50], y[:50],
                                                                    classes=[0, 1])
    params["gamma"] = 2.0
    with pytest.raises(ValueError, match="'kernel_params' was changed"):
        est.partial_fit(X[50:60], y[50:60])

    def weighted_rbf(a, b, weights):
        return np.exp(-np.sum(weights * (a - b) ** 2))

    params = {"weights": np.array([1.0, 0.5, 0.5, 2.0])}     # arrays compare by value
    est = Forgetron(kernel=weighted_rbf, kernel_params=params, budget=5)
    est.partial_fit(X[:30], y[:30], classes=[0, 1]).partial_fit(X[30:40], y[30:40])
    params["weights"][0] = 3.0
    with pytest.raises(ValueError, match="'kernel_params' was changed"):
        est.partial_fit(X[40:50], y[40:50])


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_bools_are_not_numbers(Est, binary_data):
    X, y = binary_data
    numeric = [name for name, value in Est().get_params().items()
               if name in ("budget", "degree", "max_iter", "gamma", "coef0", "C", "beta",
                           "eta", "eta0", "tau", "lam", "alpha", "alpha_bound", "validation")]
    for name in numeric:
        for value in (True, False, np.bool_(True)):
            with pytest.raises(ValueError, match=name):
                Est(**{name: value}).fit(X[:50], y[:50])


# ----------------------------------------------------------------------
# 6. non-finite kernel values and gamma
# ----------------------------------------------------------------------
def _huge_row_data(value):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] > 0).astype(int)
    X[5] = value
    return X, y


@pytest.mark.filterwarnings("ignore:overflow encountered in square:RuntimeWarning")  # SVC's
@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
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


def test_gamma_is_a_fitted_attribute_and_small_scale_warns(binary_data):
    X, y = binary_data
    est = Forgetron().fit(X, y)
    assert est.gamma_ == pytest.approx(1.0 / (X.shape[1] * X.var()))
    assert Forgetron(gamma=0.7).fit(X, y).gamma_ == 0.7
    with pytest.warns(UserWarning, match="gamma='scale' was resolved from the 1 rows.*numeric"):
        Forgetron().partial_fit(X[:1], y[:1], classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Forgetron(gamma=1.0).partial_fit(X[:1], y[:1], classes=[0, 1])
        Forgetron(kernel="linear").partial_fit(X[:1], y[:1], classes=[0, 1])
        Forgetron().fit(X[:50], y[:50])      # a fit sees all its data at once
        Forgetron().partial_fit(X[:100], y[:100], classes=[0, 1])


# ----------------------------------------------------------------------
# 7. SequentialSearchCV
# ----------------------------------------------------------------------
@parametrize_with_checks([SequentialSearchCV(
    KernelPerceptron(max_iter=2, gamma=1.0, random_state=0), [{"tau": [0, 0.5]}], cv=2)])
# the checks that give the search bad data (object dtype, NaN, inf) see its
# candidates fail, which a search reports as GridSearchCV does: expected
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.FitFailedWarning")
@pytest.mark.filterwarnings("ignore:Scoring failed:UserWarning")
@pytest.mark.filterwarnings("ignore:One or more of the test scores are non-finite:UserWarning")
def test_sequential_search_is_sklearn_compatible(estimator, check, monkeypatch):
    if getattr(check, "func", check).__name__ == "check_array_api_input":
        monkeypatch.setenv("SCIPY_ARRAY_API", "1")   # see tests/test_common.py
    check(estimator)


@pytest.mark.filterwarnings("ignore:One or more of the test scores are non-finite:UserWarning")
def test_sequential_search_feature_names_and_early_errors(binary_data):
    X, y = binary_data
    frame = pd.DataFrame(X[:60], columns=list("abcd"))
    search = SequentialSearchCV(KernelPerceptron(max_iter=2, gamma=1.0, random_state=0),
                                [{"tau": [0, 0.5]}], cv=2).fit(frame, y[:60])
    assert_array_equal(search.feature_names_in_, list("abcd"))
    assert search.n_features_in_ == 4
    with pytest.raises(ValueError, match="requires y"):
        search.fit(X, None)
    with_nan = X[:60].copy()
    with_nan[0, 0] = np.nan          # a pipeline that imputes may take NaN
    imputing = make_pipeline(SimpleImputer(), KernelPerceptron(max_iter=2, gamma=1.0))
    SequentialSearchCV(imputing, [{"kernelperceptron__tau": [0, 0.5]}], cv=2).fit(with_nan,
                                                                                  y[:60])
    search_budget = SequentialSearchCV(Forgetron(gamma=1.0), [{"budget": [True, 5]}], cv=2)
    with pytest.warns(FitFailedWarning, match="'budget' parameter.*Got True"):
        search_budget.fit(X[:60], y[:60])       # as GridSearchCV: a failed candidate
    assert search_budget.best_params_ == {"budget": 5}


# ----------------------------------------------------------------------
# 8. failures injected at random points of random streams
# ----------------------------------------------------------------------
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


def test_labels_are_checked_and_collected_block_by_block(monkeypatch):
    # fit reads y a block at a time (bounded memory): the classes of every
    # block, and a regression target in a late block, still count
    import skbudget._base as base
    monkeypatch.setattr(base, "_LABEL_BLOCK", 7)
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    y = np.array(["b", "a"] * 15 + ["c", "d"] * 5)       # 'c', 'd' only after block 4
    est = Forgetron(budget=5, random_state=0).fit(X, y)
    assert_array_equal(est.classes_, ["a", "b", "c", "d"])
    y_float = np.ones(40)
    y_float[::2] = 0.0
    y_float[33] = 0.5                                    # continuous, in the last block
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        Forgetron(budget=5).fit(X, y_float)


@pytest.mark.parametrize("y", [
    np.array([1, -1, 1, 1, -1] * 8),
    np.array([0, 1] * 17 + [2, 5, 5, 2, 5, 2], dtype=np.uint8),     # 2 and 5 in late blocks
    np.array([-3, 3] * 19 + [0, 0], dtype=np.int8),
    np.array([True, False] * 20),
    np.array([3.0, -1.0] * 19 + [-0.0, 2.0], dtype=np.float32),
    np.array([0, 10 ** 6] * 20),                                    # range beyond a block
    np.array([2 ** 63 + 1, 2 ** 63] * 20, dtype=np.uint64),         # beyond int64
])
def test_numeric_labels_shortcut_gives_np_unique(monkeypatch, y):
    # integral numeric labels skip type_of_target: the same classes (values
    # and dtype) as np.unique, whatever the blocks
    import skbudget._base as base
    monkeypatch.setattr(base, "_LABEL_BLOCK", 7)
    classes = base._checked_classes(y)
    assert classes.dtype == y.dtype
    assert_array_equal(classes, np.unique(y))


@pytest.mark.parametrize("y", [
    np.array([0.0, 1.0, np.nan] * 10),
    np.array([0.0, 1.0, np.inf] * 10),
    np.array([0, 1, 1] * 9),                          # one label short
    np.array([0, 1, 1] * 11),                         # three too many
    np.array([[0, 1, 1] * 10]),                       # a row, not a column
])
@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_plain_labels_fail_with_scikit_learns_errors(y, method):
    # a 1-D numeric y skips check_array: the same errors as validate_data's
    from sklearn.utils.validation import validate_data
    X = np.random.RandomState(0).randn(30, 2)
    est = Forgetron(budget=5)
    with pytest.raises(ValueError) as expected:
        validate_data(est, X, y, accept_sparse="csr", dtype=np.float64)
    with pytest.raises(ValueError) as raised:
        if method == "fit":
            clone(est).fit(X, y)
        else:
            clone(est).partial_fit(X, y, classes=[0, 1])
    assert str(raised.value) == str(expected.value)


@pytest.mark.parametrize("dtype", [np.int64, np.int16, np.uint32, np.float64, np.float32, bool])
def test_plain_labels_in_any_layout_give_the_same_model(dtype):
    # strided (a column of a 2-D array) and read-only labels: the same
    # model as a contiguous copy, the same classes_ dtype as np.unique
    rng = np.random.RandomState(1)
    X = rng.randn(120, 2)
    labels = np.column_stack([rng.randint(0, 2, 120), rng.randint(0, 2, 120)]).astype(dtype)
    y = labels[:, 1]
    y_read_only = y.copy()
    y_read_only.flags.writeable = False
    reference = Forgetron(budget=10, random_state=0).fit(X, np.ascontiguousarray(y))
    for labels_given in (y, y_read_only):
        est = Forgetron(budget=10, random_state=0).fit(X, labels_given)
        assert est.classes_.dtype == np.unique(y).dtype
        assert_array_equal(est.classes_, reference.classes_)
        assert_array_equal(est.dual_coef_, reference.dual_coef_)
        assert_array_equal(est.support_vectors_, reference.support_vectors_)


@pytest.mark.parametrize("y", [
    np.array([0.0, 1.0, np.nan]),
    np.array([0.0, 1.0, np.inf]),
    np.array([0.0, 1.5]),
    np.array([2.0 ** 53, 2.0 ** 53 - 2.0]),           # integral, beyond 2^52
    np.array([0, 70_000]),                            # a range beyond the table
    np.array([], dtype=np.int64),
])
def test_compiled_label_table_declines_what_it_cannot_read(y):
    # integral_classes returns None: the general path (np.unique after
    # scikit-learn's check) decides
    from skbudget._elementwise import integral_classes
    assert integral_classes(y, 1 << 16) is None


def test_compiled_label_table_reads_integral_floats_and_extremes():
    from skbudget._elementwise import integral_classes
    assert_array_equal(integral_classes(np.array([3.0, -1.0, -0.0, 3.0]), 8), [-1, 0, 3])
    assert_array_equal(integral_classes(np.array([2 ** 52, 2 ** 52 - 3], dtype=np.uint64), 8),
                       [2 ** 52 - 3, 2 ** 52])
    assert_array_equal(integral_classes(np.array([-128, 127, 0], dtype=np.int8), 256),
                       [-128, 0, 127])
    assert integral_classes(np.array([-128, 127], dtype=np.int8), 255) is None


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (1, 1), (40, 7)])
def test_support_vectors_as_csr_match_scipys_conversion(shape):
    # CSR support vectors are built from the dense store in compiled code:
    # scipy's matrix (zeros dropped, -0.0 too, NaN kept), canonical, int32
    from skbudget._stream import _dense_to_csr, empty_rows
    rows = np.random.RandomState(0).randn(*shape)
    rows[rows < 0.2] = 0.0
    rows.flat[::5] = -0.0
    rows.flat[1:2] = np.nan
    converted = _dense_to_csr(rows)
    expected = sp.csr_matrix(rows)
    assert converted.shape == expected.shape and converted.has_canonical_format
    assert converted.indices.dtype == converted.indptr.dtype == np.int32
    assert_array_equal(converted.indptr, expected.indptr)
    assert_array_equal(converted.indices, expected.indices)
    assert_array_equal(converted.data, expected.data)
    empty = empty_rows(expected)
    assert sp.issparse(empty) and empty.shape == (0, shape[1]) and empty.nnz == 0


@pytest.mark.parametrize("n_learners", [1, 2, 5])
def test_compiled_mistake_flags_match_the_numpy_expression(n_learners):
    # a mistake unless y f(x) > 0 (one learner) or the true class's score is
    # strictly the largest: ties and zero scores are mistakes
    from skbudget._elementwise import mistake_flags
    rng = np.random.RandomState(n_learners)
    n = 500
    if n_learners == 1:
        targets = np.where(rng.uniform(size=(1, n)) > 0.5, 1.0, -1.0)
    else:
        targets = -np.ones((n_learners, n))
        targets[rng.randint(0, n_learners, n), np.arange(n)] = 1.0
    scores = np.round(rng.randn(n_learners, n), 1)       # many ties
    scores[:, :40] = 0.0
    if n_learners == 1:
        expected = targets[0] * scores[0] <= 0
    else:
        true = targets > 0
        expected = scores.T[true.T] <= np.where(true, -np.inf, scores).max(axis=0)
    flags = mistake_flags(targets, scores)
    assert flags.dtype == np.uint8
    assert_array_equal(flags, expected.astype(np.uint8))
    with pytest.raises(ValueError, match="shape"):
        mistake_flags(targets, np.ascontiguousarray(scores[:, 1:]))


def test_cumulative_at_bin_ends_counts_each_bin_end():
    from skbudget._elementwise import cumulative_at_bin_ends
    flags = np.array([1, 0, 1, 1, 0, 1, 1], dtype=np.uint8)
    at_ends, total = cumulative_at_bin_ends(flags, 2, 3, 10)   # ends after rounds 2, 5
    assert_array_equal(at_ends, [11, 13])
    assert total == 15
    at_ends, total = cumulative_at_bin_ends(flags, 8, 1, 0)    # no end in this call
    assert at_ends.shape == (0,) and total == 5
    with pytest.raises(ValueError, match="at least 1"):
        cumulative_at_bin_ends(flags, 0, 1, 0)


# ---- the per-call shortcuts of fit: X's validation, seeding, parameters ----

def _validation_outcome(call):
    """What a validation call gave: ('ok', returned object) or ('error',
    its type and message), with the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("ok", call())
        except Exception as error:          # noqa: BLE001 (compared below)
            out = ("error", (type(error), str(error)))
    return out, [str(w.message) for w in caught]


@pytest.mark.parametrize("make", [
    lambda rng: rng.randn(30, 4),
    lambda rng: np.asfortranarray(rng.randn(30, 4)),
    lambda rng: rng.randn(60, 8)[::2, 1::2],
    lambda rng: sp.csr_matrix(rng.randn(30, 4)),
    lambda rng: sp.csr_array(rng.randn(30, 4)),
    lambda rng: np.where(rng.randn(30, 4) > 1, np.nan, 1.0),
    lambda rng: sp.csr_matrix(np.where(rng.randn(30, 4) > 1, np.inf, 1.0)),
    lambda rng: rng.randn(0, 4),
    lambda rng: rng.randn(30, 0),
    lambda rng: rng.randn(30),
    lambda rng: rng.randn(30, 4).astype(np.float32),
    lambda rng: rng.randn(30, 4).astype(">f8"),
    lambda rng: rng.randn(30, 4, 2),
    lambda rng: pd.DataFrame(rng.randn(30, 4), columns=list("abcd")),
])
@pytest.mark.parametrize("fitted_with_names", [False, True])
@pytest.mark.parametrize("ensure_all_finite", [True, False])
def test_checked_X_is_validate_data(make, fitted_with_names, ensure_all_finite):
    # fit's and decision_function's X: a plain float64 array or CSR matrix
    # skips validate_data's generic path; the same X, n_features_in_,
    # feature names, errors and warnings as validate_data for any input
    from sklearn.utils.validation import validate_data

    from skbudget._base import _checked_X
    X = make(np.random.RandomState(0))
    for reset in (True, False):
        outcomes = []
        for check in (_checked_X, None):
            est = Forgetron(budget=5)
            names = pd.DataFrame(np.ones((3, 4)), columns=list("abcd"))
            if fitted_with_names:
                validate_data(est, names, reset=True)
            elif not reset:
                validate_data(est, np.ones((3, 4)), reset=True)
            if check is None:
                outcome = _validation_outcome(lambda: validate_data(
                    est, X, accept_sparse="csr", dtype=np.float64, reset=reset,
                    ensure_all_finite=ensure_all_finite))
            else:
                outcome = _validation_outcome(lambda: check(
                    est, X, reset, ensure_all_finite=ensure_all_finite))
            outcomes.append((outcome, getattr(est, "n_features_in_", None),
                             list(getattr(est, "feature_names_in_", []))))
        (a, a_warnings), a_n, a_names = outcomes[0]
        (b, b_warnings), b_n, b_names = outcomes[1]
        assert a[0] == b[0] and a_warnings == b_warnings and (a_n, a_names) == (b_n, b_names)
        if a[0] == "error":
            assert a[1] == b[1]
        else:
            assert type(a[1]) is type(b[1])
            if isinstance(X, np.ndarray) and X.dtype == np.float64 and X.ndim == 2:
                assert a[1] is X                # validated as it is, no copy
            left, right = a[1], b[1]
            if sp.issparse(left):
                left, right = left.toarray(), right.toarray()
            assert_array_equal(np.asarray(left), np.asarray(right))


@pytest.mark.parametrize("seed", [0, 1, 42, 2 ** 31, 2 ** 32 - 1, np.int64(7), np.uint32(9)])
def test_seeded_random_state_is_numpys(seed):
    # fit's generator from an int random_state: RandomState(seed), state and
    # draws, made without RandomState's entropy-seeded first key
    from skbudget._base import _FAST_SEEDING, _random_state, _seeded_random_state
    assert _FAST_SEEDING          # (else the shortcut is off: RandomState itself)
    for made in (_seeded_random_state(seed), _random_state(seed)):
        reference = np.random.RandomState(seed)
        a, b = made.get_state(), reference.get_state()
        assert a[0] == b[0] and a[2:] == b[2:]
        assert_array_equal(a[1], b[1])
        assert_array_equal(made.randint(1000, size=50), reference.randint(1000, size=50))
        assert_array_equal(made.standard_normal(5), reference.standard_normal(5))
        assert_array_equal(pickle.loads(pickle.dumps(made)).random_sample(3),
                           reference.random_sample(3))
    for bad in (-1, 2 ** 32):
        with pytest.raises(ValueError) as expected:
            np.random.RandomState(bad)
        with pytest.raises(ValueError) as raised:
            _seeded_random_state(bad)
        assert str(raised.value) == str(expected.value)
    given_state = np.random.RandomState(3)
    assert _random_state(given_state) is given_state
    assert _random_state(None) is np.random.mtrand._rand


def test_validated_parameters_are_checked_again_when_they_change():
    # parameter validation skips a set of simple values that passed before:
    # any change is validated, an invalid set never passes, and the
    # estimators' own checks still run on every call
    X, y = np.random.RandomState(0).randn(40, 3), np.arange(40) % 2
    for _ in range(2):
        Forgetron(budget=5).fit(X, y)
        for bad in ({"budget": 0}, {"budget": 5.0}, {"budget": True}, {"gamma": -1.0},
                    {"kernel": "nope"}, {"max_iter": 0}):
            with pytest.raises(ValueError, match="must be"):
                Forgetron(budget=5).set_params(**bad).fit(X, y)
    from skbudget import BudgetedSGDClassifier
    est = BudgetedSGDClassifier(budget=5, kernel="linear", maintenance="merging")
    for _ in range(2):      # BSGD's own check (merging needs rbf) on every call
        with pytest.raises(ValueError):
            clone(est).fit(X, y)


def test_single_threaded_blas_sets_one_thread_and_restores():
    # the training loop's and prediction's BLAS context: every BLAS library
    # on one thread inside, its own count back after (an error included)
    from threadpoolctl import threadpool_limits

    from skbudget._blas import _BLAS_LIBRARIES, single_threaded_blas
    if not _BLAS_LIBRARIES:
        pytest.skip("no BLAS library known to threadpoolctl")
    with threadpool_limits(limits=2, user_api="blas"):
        before = [library.get_num_threads() for library in _BLAS_LIBRARIES]
        with single_threaded_blas():
            assert all(library.get_num_threads() == 1 for library in _BLAS_LIBRARIES)
        assert [library.get_num_threads() for library in _BLAS_LIBRARIES] == before
        with pytest.raises(KeyError):
            with single_threaded_blas():
                raise KeyError
        assert [library.get_num_threads() for library in _BLAS_LIBRARIES] == before
