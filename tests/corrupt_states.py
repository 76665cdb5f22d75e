"""Corrupt every field of every estimator's learner state, then use the model.

Run as ``python -m tests.corrupt_states [PART N_PARTS]``
(``tests/test_corrupt_state.py`` does, in child processes, so that a crash
fails the test instead of killing pytest; with ``PART N_PARTS`` only the
configurations whose index is ``PART`` modulo ``N_PARTS``, so that parts run
side by side on several cores).  For every estimator, kernel mode (store: ``rbf``, block:
``laplacian``) and problem (binary, three classes; three classes in the
shared multi-class mode too, for the estimators whose mode is a parameter
that does not select it by default: printed as ``<name>-shared``), each
field of the first learner's state is
replaced by bad values (shifted, negative or zero integers, truncated or
emptied arrays, out-of-range indices, NaN) and the model is then trained,
asked for scores (the voted hypothesis too), pickled and trained again,
and compressed to its budget (BSGD's compiled ``compress``).  Any Python exception is fine;
the process must not crash.  Prints one line per field that was refused
with "inconsistent state", then ``done``.
"""

import copyreg
import pickle

import numpy as np
import scipy.sparse as sp

from skbudget import SequentialSearchCV
from skbudget._base import BaseKernelExpansionClassifier
from skbudget._declaration import declaration_of
from skbudget.discovery import all_estimators
from tests.test_common import params_taken


def corruptions(value):
    """Bad replacements for one field of a learner's state."""
    if isinstance(value, (bool, np.bool_)):
        yield not value
    elif isinstance(value, (int, np.integer)):
        yield from (value + 1000, -5, 0, value - 1)
    elif isinstance(value, float):
        yield from (-1.0, np.nan, 0.0)
    elif isinstance(value, np.ndarray) and value.ndim >= 1:
        yield value[:1].copy()
        yield value[:0].copy()
        if value.ndim == 2:
            yield value[:, :1].copy()
        if value.size and value.dtype.kind in "iu":
            for position, bad in ((0, 10 ** 6), (-1, -3)):
                changed = value.copy()
                changed.flat[position] = bad
                yield changed
        if value.size and value.dtype.kind == "f":
            changed = value.copy()
            changed.flat[0] = np.nan
            yield changed


def scalar_fields(state, path=()):
    """``(path, value)`` of every scalar in a saved state (an estimator's
    ``__getstate__()``: dicts and lists of arrays, numbers, strings, None
    and random generators), depth first; ``path`` is the keys and list
    indices that lead to it."""
    if isinstance(state, dict):
        for key, value in state.items():
            yield from scalar_fields(value, path + (key,))
    elif isinstance(state, (list, tuple)):
        for index, value in enumerate(state):
            yield from scalar_fields(value, path + (index,))
    elif not (isinstance(state, (np.ndarray, np.random.RandomState)) or sp.issparse(state)):
        yield path, state


def field_name(path):
    """A field's path as the loading errors name it: ``a.b[0].c``."""
    return "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path)[1:]


def bad_scalars(value):
    """Values to put in place of a scalar ``value`` of a saved state: of
    another type (None, a string, a float for an integer, a bool for a
    number), not finite, negative, beyond C's integers and beyond floats,
    and for an integer the next one."""
    nan, inf = float("nan"), float("inf")
    if isinstance(value, (bool, np.bool_)):
        bad = [None, "x", 1, 0.5, nan]
    elif isinstance(value, (int, np.integer)):
        bad = [None, "x", nan, inf, -abs(int(value)) - 1, int(value) + 1, 2 ** 63, 10 ** 30,
               int(value) + 0.5, True]
    elif isinstance(value, (float, np.floating)):
        bad = [None, "x", nan, inf, -inf, -abs(float(value)) - 1.0, 10 ** 400, True]
    elif isinstance(value, str):
        bad = [None, 1, value + "x", True]
    else:                                  # None
        bad = ["x", -1, nan, True]
    return bad


def with_field(state, path, value):
    """A copy of ``state`` with the field at ``path`` set to ``value``
    (the containers on the path copied, a tuple rebuilt)."""
    if not path:
        return value
    key, rest = path[0], path[1:]
    if isinstance(state, tuple):
        return state[:key] + (with_field(state[key], rest, value),) + state[key + 1:]
    state = state.copy()
    state[key] = with_field(state[key], rest, value)
    return state


class PickledState:
    """Pickles as an instance of ``cls`` with the instance state ``state``
    (an instance made without ``__init__``, then ``__setstate__(state)`` on
    loading): the file a tampered model pickles to."""

    def __init__(self, cls, state):
        self.cls, self.state = cls, state

    def __reduce__(self):
        return copyreg._reconstructor, (self.cls, object, None), self.state


def voted_scores(est, X):
    """The scores of the voted hypothesis (a compiled read-out of the
    learner), for the estimators that have one."""
    if "hypothesis" in est.get_params():
        return est.set_params(hypothesis="voted").decision_function(X)
    return None


def compress_to_budget(learner):
    """BSGD's compiled compression (``skbudget.parallel.compress``) on the
    learner as it is, for the learners that have one."""
    return learner.compress() if hasattr(learner, "compress") else None


def configurations():
    """(printed name, estimator class, parameters beyond the common ones,
    the problems to run): every estimator on both problems, and those whose
    shared multi-class mode is a parameter off by default in that mode on
    three classes."""
    for name, Est in all_estimators():
        if Est is SequentialSearchCV:
            continue
        yield name, Est, {}, ("binary", "3 classes")
        mode = declaration_of(Est).shared_multiclass
        if mode is not None and mode.param is not None and (
                Est().get_params()[mode.param] != mode.shared):
            yield f"{name}-shared", Est, {mode.param: mode.shared}, ("3 classes",)


def main(part=0, n_parts=1):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 3))
    problems = {"binary": (X[:, 0] > 0).astype(int), "3 classes": np.argmax(X, axis=1)}
    for index, (name, Est, mode, problem_names) in enumerate(configurations()):
        if index % n_parts != part:
            continue
        # (a model that is no kernel expansion: its features' RBF kernel only)
        expansion = issubclass(Est, BaseKernelExpansionClassifier)
        kernels = ("rbf", "laplacian") if expansion else ("rbf",)
        for kernel in kernels:
            params = {**params_taken(Est, gamma=1.0, budget=10), **mode}
            if expansion:
                params["kernel"] = kernel
            if "maintenance" in Est().get_params() and kernel != "rbf":
                params["maintenance"] = "projection"
            for y in (problems[problem] for problem in problem_names):
                fitted = Est(**params).partial_fit(X[:200], y[:200], classes=np.unique(y))
                blob = pickle.dumps(fitted)
                for field, value in fitted._learners[0].get_state().items():
                    refused = False
                    for bad in corruptions(value):
                        est = pickle.loads(blob)
                        learner = est._learners[0]
                        state = learner.get_state()
                        state[field] = bad
                        try:
                            learner.set_state(state)
                        except Exception:
                            continue
                        for call in (lambda: est.partial_fit(X[200:], y[200:]),
                                     lambda: est.decision_function(X[:20]),
                                     lambda: pickle.loads(pickle.dumps(est)).partial_fit(
                                         X[250:], y[250:]),
                                     lambda: voted_scores(est, X[:20]),
                                     lambda: compress_to_budget(learner)):
                            try:
                                call()
                            except Exception as exc:
                                refused |= "inconsistent state" in str(exc)
                    if refused:
                        print("refused", name, kernel, field)
    print("done")


if __name__ == "__main__":
    import sys

    main(*(int(arg) for arg in sys.argv[1:3]))
