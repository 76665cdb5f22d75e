"""Ctrl-C: an interrupt during a call (single-threaded, with threads, in a
long compiled segment, over and over) is honoured promptly, changes
nothing and never crashes the process; the tests also pass when the shell
started them with SIGINT ignored."""

import _thread
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from skbudget import BudgetedSGDClassifier, Forgetron
from tests.model_state import assert_same_state, model_state

ROOT = Path(__file__).resolve().parents[1]


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


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="POSIX signals")
def test_ctrl_c_tests_pass_when_sigint_starts_ignored():
    # a background job of a non-interactive shell starts with SIGINT ignored
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         "tests/test_interrupts.py", "-k",
         "keyboard_interrupt_during_a_long or interrupt_is_honoured"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stdout[-3000:]
    assert "3 passed" in result.stdout
