"""The parameter machinery of the estimators.

The constraint types the estimators' ``_parameter_constraints`` use
(:class:`Integer`, :class:`RealNumber`: scikit-learn's intervals without
bools), the attributes an estimator's ``__init__`` sets
(:func:`keep_params`), and
:class:`ModelParamsMixin`: which parameters are built into a model when it
starts, and the check that a continuing call finds them unchanged.
"""

import copy
import functools
import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions

__all__ = ["BUDGET", "MAX_BUDGET", "Integer", "ModelParamsMixin", "RealNumber", "check_budget",
           "keep_params"]


# the largest ``budget``: the engine hands the number of stored vectors to
# BLAS as a 32-bit int, and a round holds up to budget + 2 of them (the
# budget's, the example appended before a removal, one spare)
MAX_BUDGET = 2**31 - 3


def check_budget(estimator, budget):
    """Raise ValueError if ``budget`` (an int, already checked against the
    estimator's constraints) is larger than :data:`MAX_BUDGET`, the most
    support vectors the engine can index."""
    if isinstance(budget, numbers.Integral) and budget > MAX_BUDGET:
        raise ValueError(
            f"The 'budget' parameter of {type(estimator).__name__} must be at most "
            f"{MAX_BUDGET} (2**31 - 3: the engine indexes the support set with 32-bit "
            f"integers); got budget={budget}."
        )


def keep_params(estimator, init_locals):
    """Set each of an estimator's ``__init__`` arguments (``locals()``) as
    the attribute of its name, unchanged: scikit-learn's ``__init__``
    convention, written once."""
    for name, value in init_locals.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


class _NotBool:
    """An ``Interval`` that rejects bools (``budget=True`` is not 1)."""

    def is_satisfied_by(self, val):
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


class Integer(_NotBool, Interval):
    """``Interval(numbers.Integral, left, right, closed=...)`` without bools."""

    def __init__(self, left, right, *, closed):
        super().__init__(numbers.Integral, left, right, closed=closed)


class RealNumber(_NotBool, Interval):
    """``Interval(numbers.Real, left, right, closed=...)`` without bools."""

    def __init__(self, left, right, *, closed):
        super().__init__(numbers.Real, left, right, closed=closed)


# the budget constraint of the budgeted families: at least one support
# vector (check_budget bounds it above)
BUDGET = {"budget": [Integer(1, None, closed="left")]}

# the multi-class mode of a family with a shared mode (MultiClassModeMixin)
MULTI_CLASS_CONSTRAINT = {"multi_class": [StrOptions({"crammer_singer", "ovr"})]}


@functools.cache
def _param_names(cls):
    """``BaseEstimator._get_param_names`` of estimator class ``cls``, once
    per class (it reads ``inspect.signature(cls.__init__)`` on every call)."""
    return tuple(BaseEstimator._get_param_names.__func__(cls))


@functools.cache
def _model_param_names(cls):
    """The parameters of estimator class ``cls`` built into a model (all
    but its ``_call_params``)."""
    return tuple(name for name in _param_names(cls) if name not in cls._call_params)


def _same_value(a, b):
    """Whether a parameter still has the value it had: identity, else equal
    containers (compared item by item, arrays by value), else ``==``."""
    if a is b:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same_value, a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and a.shape == b.shape and bool(np.array_equal(a, b)))
    try:
        return bool(a == b)
    except Exception:   # an object whose == is not a truth value
        return False


def _kept_value(value):
    """A parameter value as recorded when a model starts: containers copied
    (a dict changed in place is a change), anything else as it is."""
    if isinstance(value, (dict, list)):
        try:
            return copy.deepcopy(value)
        except Exception:
            return value
    return value


class ModelParamsMixin:
    """The parameters built into a model (not for direct use; a base of
    :class:`~skbudget._base.BaseOnlineClassifier`).

    Every parameter but the estimator's ``_call_params`` is built into the
    learners when a model starts: :meth:`_record_params_at_start` keeps
    their values (``_params_at_start``), and a continuing call
    (``partial_fit``, warm-start ``fit``) raises if one has changed
    since (:meth:`_check_unchanged_params`).
    """

    # parameters that only steer the calls (or, for some estimators, the
    # read-out) and may change between calls (the bases give them)
    _call_params = ()

    @classmethod
    def _get_param_names(cls):
        """The parameter names, as scikit-learn's ``BaseEstimator`` gives
        them, read from the signature once per class: ``get_params`` runs on
        every ``fit`` and ``partial_fit`` (parameter validation), and the
        signature costs ~30 us each time."""
        return list(_param_names(cls))

    def _record_params_at_start(self):
        """Keep the values of the parameters built into the model that
        starts now (``_params_at_start``)."""
        self._params_at_start = {name: _kept_value(getattr(self, name))
                                 for name in _model_param_names(type(self))}

    def _check_unchanged_params(self):
        """Raise if a parameter built into the model was changed since it
        started (a continuing call cannot apply it)."""
        for name, old in self._params_at_start.items():
            value = getattr(self, name)
            if not _same_value(old, value):
                raise ValueError(
                    f"{type(self).__name__}: the parameter {name!r} was changed from "
                    f"{old!r} to {value!r} after the model was started; partial_fit and "
                    f"warm-start fit continue the model, whose learners were built with the "
                    f"old value. Call fit (warm_start=False) to start a new model with the "
                    f"new value, or set the parameter back. Only {list(self._call_params)} "
                    f"may change between calls."
                )
