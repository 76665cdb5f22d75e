"""Sweep every numeric parameter of every estimator over 1e-300 ... 1e300.

Run as ``python -m tests.numeric_sweep`` (``tests/test_numbers.py`` does, in
a child process, so that a crash fails the test instead of killing pytest;
the sanitizer build's CI step runs it too).  For every estimator, each
numeric parameter is set to ``±1e-300, ±1e-200, ..., ±1e300`` (the
negatives too: a value the constraints refuse must be refused), integer
ones (``degree``) to 0 ... 10**300, with the kernels the parameter acts on;
the model is fitted on a tiny binary and three-class problem, then asked
for scores.  Every case must end in a clear error (``ValueError``, which
scikit-learn's parameter errors are, or ``FloatingPointError``) or a finite
model: finite ``dual_coef_`` (``coef_`` for a model on fixed features) and
``decision_function``.  Besides,
BSGD's learner is given a ``lam`` below the validated range through its
state (the arithmetic overflows during the merge, the projection, the
removal) and trained: that must be a ``ValueError`` too.

Prints one line per case that is neither (``BAD ...``), then ``done``; an
exception Python could not raise (``sys.unraisablehook``, e.g. an index
error in a compiled function that cannot propagate it under the
sanitizer build) is ``BAD`` as well.
"""

import sys
import warnings

import numpy as np

from skbudget import BudgetedSGDClassifier, SequentialSearchCV
from skbudget._base import BaseKernelExpansionClassifier
from skbudget.discovery import all_estimators
from tests.test_common import params_taken

POWERS = [1e-300, 1e-200, 1e-100, 1e-30, 1e-10, 1e10, 1e30, 1e100, 1e200, 1e300]
VALUES = POWERS + [-v for v in POWERS]
INTEGERS = [0, 1, 2, 3, 10, 1000, 10 ** 6, 10 ** 18, 10 ** 300]
# each estimator's own numeric parameters (the kernel's are swept for all)
OWN = ("alpha", "beta", "eta", "C", "eta0", "theta_init", "threshold_step", "tau", "lam",
       "coef_bound", "tol")
CLEAR = (ValueError, FloatingPointError)

bad = []


def unraisable(hook_args):
    bad.append(f"BAD unraisable {hook_args.exc_type.__name__}: {hook_args.exc_value} "
               f"in {hook_args.object!r}")
    print(bad[-1], flush=True)


def outcome(make, X, y):
    """'ok', 'error' or a description of what went wrong."""
    try:
        est = make().fit(X, y)
        coef = est.dual_coef_ if isinstance(est, BaseKernelExpansionClassifier) else est.coef_
        if not (np.isfinite(coef).all()
                and np.isfinite(est.decision_function(X)).all()):
            return "non-finite model"
        return "ok"
    except CLEAR:
        return "error"
    except Exception as exc:    # anything else is not a clear error
        return f"{type(exc).__name__}: {exc}"


def cases(Est):
    """(parameters, name of the swept one) for one estimator."""
    params = Est().get_params()
    # (random_state: a fixed order: an unseeded shuffle made one run of the
    # sanitizer build report a non-finite Forgetron (poly, gamma=1e30) that
    # no seeded order has reproduced since)
    base = params_taken(Est, gamma=1.0, budget=8, random_state=0)
    rules = [{}]
    for option in ("maintenance", "sampling"):  # every rule the estimator offers
        if option in params:
            rules = [{option: rule}
                     for rule in sorted(Est._parameter_constraints[option][0].options)]
    # the kernel expansions, and LLSVM's landmark map: the kernel parameters
    expansion = "kernel" in params
    if not expansion:       # no kernel parameter: its features' width and size
        for value in VALUES if "gamma" in params else []:
            yield dict(base, gamma=value), "gamma"
        for value in INTEGERS + [-1] if "n_components" in params else []:
            yield dict(base, n_components=value), "n_components"
    for kernel, names in (("rbf", ["gamma"]), ("poly", ["gamma", "coef0"]),
                          ("sigmoid", ["gamma", "coef0"])):
        if not expansion:
            break
        fixed = dict(base, kernel=kernel)
        if "maintenance" in params and kernel != "rbf":
            fixed["maintenance"] = "projection"
        for name in names:
            for value in VALUES:
                yield dict(fixed, **{name: value}), name
    for value in INTEGERS + [-1] if "degree" in params else []:
        fixed = dict(base, kernel="poly", degree=value)
        if "maintenance" in params:
            fixed["maintenance"] = "projection"
        yield fixed, "degree"
    for name in OWN:
        if name in params:
            for rule in rules:
                fixed = dict(base, **rule)
                for value in VALUES:
                    yield dict(fixed, **{name: value}), name


def overflowing_state(X, y):
    """BSGD's learners given lam = 1e-200 (below alpha's validated range)
    through their state: the next call must raise a ValueError, leaving
    the model as it was, or give a finite model (every maintenance rule;
    the merge's degradations overflow: it must raise)."""
    for rule in ("merging", "projection", "removal"):
        est = BudgetedSGDClassifier(budget=8, gamma=1.0, maintenance=rule)
        est.partial_fit(X[:20], y[:20], classes=np.unique(y))
        learner = est._learners[0]
        state = learner.get_state()
        state["lam"] = 1e-200
        learner.set_state(state)
        before = est.dual_coef_.copy()
        try:
            est.partial_fit(X[20:], y[20:])
            finite = (np.isfinite(est.dual_coef_).all()
                      and np.isfinite(est.decision_function(X)).all())
            result = "ok" if finite and rule != "merging" else "no error"
        except ValueError:
            result = ("ok" if np.array_equal(before, est.dual_coef_)
                      and learner.get_state()["n_steps"] == 20 else "model changed")
        except Exception as exc:
            result = f"{type(exc).__name__}: {exc}"
        if result != "ok":
            bad.append(f"BAD BudgetedSGDClassifier lam=1e-200 through the state, {rule}: "
                       f"{result}")
            print(bad[-1], flush=True)


def main():
    sys.unraisablehook = unraisable
    warnings.simplefilter("ignore")
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 3))
    problems = {"binary": (X[:, 0] > 0).astype(int), "3 classes": np.argmax(X, axis=1)}
    n_cases = 0
    with np.errstate(all="ignore"):
        for name, Est in all_estimators():
            if Est is SequentialSearchCV:
                continue
            for params, swept in cases(Est):
                for problem, y in problems.items():
                    n_cases += 1
                    result = outcome(lambda: Est(**params), X, y)
                    if result not in ("ok", "error"):
                        bad.append(f"BAD {name} {swept}={params[swept]!r} {params} "
                                   f"({problem}): {result}")
                        print(bad[-1], flush=True)
        overflowing_state(X, problems["binary"])
    print(f"{n_cases} cases")
    print("done")


if __name__ == "__main__":
    main()
