"""Threads: the helper threads are reused and small segments run serially,
they work in a forked child, and BLAS runs on one thread inside the
training loop."""

import multiprocessing
import os
import threading

import pytest
from numpy.testing import assert_array_equal

import skbudget._stream
import skbudget._threads
from skbudget import Forgetron
from tests.model_state import assert_same_state, model_state
from tests.test_common import small


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
