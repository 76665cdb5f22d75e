"""Corrupt every field of every estimator's learner state, then use the model.

Run as ``python -m tests.corrupt_states`` (``tests/test_robustness.py`` does,
in a child process, so that a crash fails the test instead of killing
pytest).  For every estimator, kernel mode (store: ``rbf``, block:
``laplacian``) and problem (binary, three classes), each field of the first learner's state is
replaced by bad values (shifted, negative or zero integers, truncated or
emptied arrays, out-of-range indices, NaN) and the model is then trained,
asked for scores (the voted hypothesis too), pickled and trained again,
and compressed to its budget (BSGD's compiled ``compress``).  Any Python exception is fine;
the process must not crash.  Prints one line per field that was refused
with "inconsistent state", then ``done``.
"""

import pickle

import numpy as np

from skbudget import SequentialSearchCV
from skbudget.discovery import all_estimators


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


def main():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 3))
    problems = {"binary": (X[:, 0] > 0).astype(int), "3 classes": np.argmax(X, axis=1)}
    for name, Est in all_estimators():
        if Est is SequentialSearchCV:
            continue
        # (FourierOGDClassifier has the RBF kernel only)
        kernels = ("rbf", "laplacian") if "kernel" in Est().get_params() else ("rbf",)
        for kernel in kernels:
            params = dict(gamma=1.0)
            if "kernel" in Est().get_params():
                params["kernel"] = kernel
            if "budget" in Est().get_params():
                params["budget"] = 10
            if "maintenance" in Est().get_params() and kernel != "rbf":
                params["maintenance"] = "projection"
            for y in problems.values():
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
    main()
