"""Pickling, copying and ``skops.io`` files of the estimators.

:class:`PersistentModelMixin` (a base of
:class:`~skbudget._base.BaseOnlineKernelClassifier`) writes the estimator's
state in plain containers: the stream driver, the kernel and the online
record as dicts, each learner as its ``get_state()`` (arrays, numbers, its
random generator) and the name of its class (a string, compared on
loading, never imported).  So a file names no type of skbudget's but the
estimator's own class, and a loaded model continues its stream.
"""

import numpy as np
import scipy.sparse as sp

from skbudget._kernels import KernelFunction
from skbudget._record import OnlineRecord

__all__ = ["PersistentModelMixin"]

# estimator attributes that persist as plain dicts of their instance state
_PLAIN_ATTRIBUTES = {"_kernel_function": KernelFunction, "_record": OnlineRecord}


def _type_name(obj):
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _plain_state(obj):
    """A copy of an object's instance state (``__getstate__``) as a dict."""
    return dict(obj.__getstate__())


def _rebuilt(cls, state):
    """An instance of ``cls`` with the instance state ``state`` (the class
    is given by the caller, never read from the state), through the
    class's ``__setstate__`` if it has one."""
    obj = cls.__new__(cls)
    if hasattr(obj, "__setstate__"):
        obj.__setstate__(state)
    else:
        obj.__dict__.update(state)
    return obj


class PersistentModelMixin:
    """The estimator's state in plain containers (not for direct use).

    A file written before the multi-class mode was kept by the base class
    (``_shared_support``) gets it from its stream driver's state, which has
    always recorded it.
    """

    def __getstate__(self):
        state = dict(super().__getstate__())
        driver = state.get("_driver")
        if driver is None:
            return state
        plain_driver = _plain_state(driver)
        plain_driver["learners"] = [
            {"type": _type_name(learner), "state": learner.get_state()}
            for learner in driver.learners
        ]
        kernel = plain_driver.get("kernel")
        plain_driver["kernel"] = (None if kernel is state.get("_kernel_function")
                                  else _plain_state(kernel))
        state["_driver"] = plain_driver
        for name, cls in _PLAIN_ATTRIBUTES.items():
            if isinstance(state.get(name), cls):
                state[name] = _plain_state(state[name])
        return state

    def __setstate__(self, state):
        state = dict(state)
        plain_driver = state.get("_driver")
        if not isinstance(plain_driver, dict):     # unfitted, or an in-memory copy
            super().__setstate__(state)
            return
        state.setdefault("_shared_support", bool(plain_driver.get("shared_support", False)))
        for name, cls in _PLAIN_ATTRIBUTES.items():
            if isinstance(state.get(name), dict):
                state[name] = _rebuilt(cls, state[name])
        super().__setstate__(state)
        plain_driver = dict(plain_driver)
        kernel = plain_driver.get("kernel")
        plain_driver["kernel"] = (self._kernel_function if kernel is None
                                  else _rebuilt(KernelFunction, kernel))
        plain_driver["learners"] = self._rebuilt_learners(plain_driver["learners"])
        self._driver = _rebuilt(self._driver_class, plain_driver)
        self._check_attributes_match_learners()

    def _check_attributes_match_learners(self):
        """Raise unless the public fitted attributes (what ``predict``
        uses) are those the learners' states give (what ``partial_fit``
        continues): a loaded file holds one model, not two."""
        loaded = dict(self.__dict__)
        # the call parameters the attributes were computed with (one may
        # change the read-out, e.g. KernelPerceptron's hypothesis)
        used = loaded.get("_call_params_of_attributes")
        if isinstance(used, dict):
            self.__dict__.update({name: used[name] for name in self._call_params if name in used})
        try:
            self._update_fitted_attributes()
        except ValueError as exc:
            raise ValueError(f"{type(self).__name__}: the learners' saved state gives no model "
                             f"({exc}); the file is corrupted.") from exc
        differing = sorted(name for name, value in self.__dict__.items()
                           if name.endswith("_") and not name.startswith("_")
                           and not _same_fitted_value(value, loaded.get(name)))
        self.__dict__.clear()
        self.__dict__.update(loaded)
        if differing:
            raise ValueError(
                f"{type(self).__name__}: the loaded fitted attributes {differing} do not match "
                f"the model its learners hold (what partial_fit would continue); the file is "
                f"corrupted or was pieced together from two models."
            )

    def _rebuilt_learners(self, saved):
        """Learners made by ``_make_learner`` with the parameters the model
        was started with, then given their saved states."""
        current = {name: getattr(self, name) for name in self._params_at_start}
        self.__dict__.update(self._params_at_start)
        try:
            learners = [self._make_learner(None) for _ in saved]
        finally:
            self.__dict__.update(current)
        for learner, entry in zip(learners, saved):
            if _type_name(learner) != entry["type"]:
                raise ValueError(
                    f"{type(self).__name__}: the saved state holds a {entry['type']} learner "
                    f"where this estimator makes a {_type_name(learner)}; the file is corrupted "
                    f"or was written by another version of skbudget."
                )
            learner.set_state(entry["state"])
        return learners


def _same_fitted_value(a, b):
    """Whether two fitted attributes are equal, bit for bit (arrays: shape,
    dtype and values; sparse matrices: shape and values)."""
    if sp.issparse(a) or sp.issparse(b):
        return (sp.issparse(a) and sp.issparse(b) and a.shape == b.shape
                and (a != b).nnz == 0)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f")))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False
