# cython: language_level=3
"""Steps a Ctrl-C must not cut short: the rollback of a failed training
call and the stop of its threads.

Python runs its signal handlers (Ctrl-C: ``KeyboardInterrupt``) in the main
thread at its check points: the entry of a Python function, a loop's jump
back, the return of a call into compiled code.  Clean-up code written in
Python can therefore be cut short anywhere, even before its first line (at
the function's entry), and a ``try`` / ``except`` retrying it still has
check points of its own between two attempts.  The functions here are
compiled: no handler runs in their own code, only in the Python functions
they call, and those they call again until one call completes.
"""


def run_to_completion(step):
    """Call ``step()`` until a call returns without ``KeyboardInterrupt``
    (``step`` must start over each time: every call does the whole job);
    then raise the last ``KeyboardInterrupt`` caught, if any (a Ctrl-C is
    delayed, never lost), else return what ``step`` returned."""
    interrupt = None
    while True:
        try:
            result = step()
        except KeyboardInterrupt as exc:
            interrupt = exc
            continue
        break
    if interrupt is not None:
        raise interrupt
    return result


cdef class RollbackOnError:
    """Context manager of an atomic training call: when its block raises,
    ``restore()`` puts the model back (run to completion,
    :func:`run_to_completion`) before the exception goes on (a Ctrl-C
    caught during the restore goes on instead).  Its ``__exit__`` is
    compiled, so no signal handler runs between the exception and the
    restore (``contextlib``'s would run Python code first)."""

    cdef object restore

    def __init__(self, restore):
        self.restore = restore

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        if exc_type is not None:
            run_to_completion(self.restore)
        return False
