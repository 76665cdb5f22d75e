"""Ctrl-C every ``period`` seconds over a stream of 50-row ``partial_fit``
calls of a multi-class model trained with ``n_jobs=2``.

Run as ``python -m tests.interrupt_stress ESTIMATOR N_CALLS PERIOD HOW``
(``tests/test_interrupts.py`` does, in a child process, so that a crash
fails the test instead of killing pytest).  A thread interrupts the main
thread every ``period`` seconds (``HOW``: ``signal``, SIGINT sent with
``signal.pthread_kill``, which also wakes a blocked wait; ``interrupt_main``,
``_thread.interrupt_main``, which does not); the handler raises
``KeyboardInterrupt`` only while a call runs.  A call took effect when the
model's example count moved (the interrupt may land after its work, in
scikit-learn's wrapper around ``partial_fit``); the calls that did are then
replayed on a fresh model without threads or interrupts, and every fitted
attribute and every learner's state must be equal, bit for bit.  The
segments run in threads however small (``THREAD_MIN_WORK_NS = 0``).
Prints ``calls ... interrupted ... applied ... threaded runs ... same``,
exit status 0 when equal.
"""

import _thread
import signal
import sys
import threading
import time

import numpy as np

import skbudget
import skbudget._stream
import skbudget._threads


def learner_states(est):
    """Every learner's state, the generators' as their key arrays."""
    out = []
    for learner in est._learners:
        for name, value in sorted(learner.get_state().items()):
            if isinstance(value, np.random.RandomState):
                value = value.get_state()[1]
            out.append((name, np.asarray(value)))
    return out


def same_model(a, b):
    for name in ("dual_coef_", "support_vectors_", "intercept_", "n_support_",
                 "n_mistakes_", "n_rounds_", "n_updates_", "mistake_curve_",
                 "_n_examples_seen"):
        if not np.array_equal(getattr(a, name), getattr(b, name)):
            print("differs:", name)
            return False
    for (name, x), (_, y) in zip(learner_states(a), learner_states(b)):
        if x.shape != y.shape or not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
            print("differs: learner state", name)
            return False
    return True


def main(name, n_calls, period, how):
    skbudget._stream.THREAD_MIN_WORK_NS = 0        # every segment in threads
    Est = getattr(skbudget, name)
    rng = np.random.RandomState(0)
    X = rng.normal(size=(50 * n_calls, 5))
    y = np.argmax(X[:, :4] + 0.3 * rng.normal(size=(len(X), 4)), axis=1)
    params = {"gamma": 0.5, "random_state": 0}
    if "budget" in Est().get_params():
        params["budget"] = 30
    classes = [0, 1, 2, 3]

    armed = False

    def handler(signum, frame):
        if armed:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    main_thread, done = threading.main_thread().ident, threading.Event()

    def send():
        while not done.is_set():
            if how == "signal":
                signal.pthread_kill(main_thread, signal.SIGINT)
            else:
                _thread.interrupt_main()
            time.sleep(period)

    est = Est(n_jobs=2, **params).partial_fit(X[:50], y[:50], classes=classes)
    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    applied, interrupted = [0], 0
    for i in range(1, n_calls):
        seen = est._n_examples_seen
        try:
            armed = True
            est.partial_fit(X[50 * i:50 * i + 50], y[50 * i:50 * i + 50])
            armed = False
        except KeyboardInterrupt:
            armed = False
            interrupted += 1
        if est._n_examples_seen != seen:
            applied.append(i)
    done.set()
    sender.join()
    clean = Est(**params)
    for i in applied:
        clean.partial_fit(X[50 * i:50 * i + 50], y[50 * i:50 * i + 50], classes=classes)
    same = same_model(est, clean)
    print(f"calls {n_calls} interrupted {interrupted} applied {len(applied)} threaded runs "
          f"{skbudget._threads.HELPERS.n_runs} {'same' if same else 'DIFFERENT'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]))
