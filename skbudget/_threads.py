"""The helper threads of ``n_jobs``: one job per threaded segment.

:data:`HELPERS` holds the process's helper threads, started on first use and
kept, idle, for every later call of every estimator.  A job's tasks are
callables ``task(stop)``, taken one at a time in order by the calling thread
and by the helpers; whatever interrupts the caller, :meth:`_Helpers.run`
returns or raises only once no task of the job runs any more
(``doc/engine.md``, "Thread jobs and interrupts").
"""

import os
import queue
import threading

import numpy as np

from skbudget._atomic import run_to_completion

__all__ = ["HELPERS"]

# seconds a waiting caller sleeps between looks at its signals (a Ctrl-C
# sent with _thread.interrupt_main does not wake a blocked wait)
WAIT_SLICE = 0.02


class _Job:
    """One threaded run of a segment: its tasks (callables ``task(stop)``)
    are taken one at a time, in order, by the calling thread and by the
    helper threads that come (:class:`_Helpers`).

    ``running`` counts the tasks running in helpers (the caller's own are
    not counted: when the caller looks, it runs none).  ``stop`` is the
    byte every learner of the job watches (``OnlineLearner.watch_stop``):
    :meth:`close` sets it, and a running compiled call then raises at its
    next poll.  ``done`` is released once, by the helper whose task ends
    the job while the caller may wait for it.
    """

    __slots__ = ("tasks", "next", "running", "errors", "stop", "mutex", "done", "released")

    def __init__(self, tasks):
        self.tasks = tasks
        self.next = 0
        self.running = 0
        self.errors = [None] * len(tasks)
        self.stop = np.zeros(1, dtype=np.uint8)
        self.mutex = threading.Lock()
        self.done = threading.Lock()
        self.done.acquire()
        self.released = False

    def work(self, in_caller):
        """Run the job's tasks until none is left to take.  A task's
        exception is kept (``errors``; :meth:`_Helpers.run` raises the
        first in task order, as a serial run would), except that in the
        caller an exception that is no ``Exception`` (``KeyboardInterrupt``)
        goes on at once: the job is then closed."""
        tasks = self.tasks
        while True:
            with self.mutex:
                k = self.next
                if k >= len(tasks):
                    return
                self.next = k + 1
                if not in_caller:
                    self.running += 1
            try:
                tasks[k](self.stop)
            except Exception as exc:
                self.errors[k] = exc
            except BaseException as exc:
                if in_caller:
                    raise
                self.errors[k] = exc
            finally:
                if not in_caller:
                    with self.mutex:
                        self.running -= 1
                        if not self.running and self.next >= len(tasks) and not self.released:
                            self.released = True
                            self.done.release()

    def wait(self):
        """Return once no helper runs a task of the job (the caller has
        taken the last: none starts any more).  The wait wakes every
        ``WAIT_SLICE`` seconds, so that a Ctrl-C is seen."""
        while True:
            with self.mutex:
                if not self.running:
                    return
            self.done.acquire(timeout=WAIT_SLICE)

    def close(self):
        """End the job whatever its state: no task starts any more, the
        running ones are told to stop (their compiled calls raise within a
        poll interval), and return once none runs.  It may be called again
        (an interrupted close is repeated, :func:`run_to_completion`)."""
        with self.mutex:
            self.next = len(self.tasks)
            unfinished = self.running
        if unfinished:
            self.stop[0] = 1
        self.wait()


def _helper_loop(jobs):
    """A helper thread: run tasks of the jobs it is handed, forever."""
    while True:
        jobs.get().work(in_caller=False)


class _Helpers:
    """The process's helper threads for ``n_jobs``: started on first use
    (as many as the largest ``n_jobs - 1`` asked for), then kept, idle,
    for every later call of every estimator (daemon threads, waiting on a
    queue; a fork starts the child with none, ``os.register_at_fork``).

    :meth:`run` puts a job on the queue once per helper wanted and works on
    it in the calling thread too: a helper that comes late, or not at all
    (busy with another caller's job), finds the tasks taken, so the call
    never waits for a thread that has not started a task.  Whatever
    interrupts the caller, ``run`` returns or raises only once no task of
    the job runs any more (:meth:`_Job.close`, run to completion by
    compiled code): the estimator's rollback never meets a learner still
    training.
    """

    def __init__(self):
        self.jobs = queue.SimpleQueue()
        self.threads = []
        self.mutex = threading.Lock()
        self.n_runs = 0         # threaded runs so far (tests, benchmarks)

    def start_threads(self, n):
        """Have ``n`` helper threads (start the missing ones)."""
        with self.mutex:
            self.threads = [thread for thread in self.threads if thread.is_alive()]
            while len(self.threads) < n:
                thread = threading.Thread(target=_helper_loop, args=(self.jobs,),
                                          name="skbudget-helper", daemon=True)
                self.threads.append(thread)
                thread.start()

    def run(self, tasks, n_threads):
        """Run ``tasks`` on ``n_threads`` threads (the caller's and
        helpers); raise the first task's exception in task order."""
        job = _Job(tasks)
        try:
            self.n_runs += 1
            helpers = min(n_threads, len(tasks)) - 1
            self.start_threads(helpers)
            for _ in range(helpers):
                self.jobs.put(job)
            job.work(in_caller=True)
            job.wait()
        finally:
            run_to_completion(job.close)
        for error in job.errors:
            if error is not None:
                raise error


HELPERS = _Helpers()


def _new_helpers_after_fork():
    global HELPERS
    HELPERS = _Helpers()


if hasattr(os, "register_at_fork"):      # (POSIX)
    os.register_at_fork(after_in_child=_new_helpers_after_fork)
