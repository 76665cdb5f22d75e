"""Pickling, copying and ``skops.io`` files of the estimators.

:class:`PersistentModelMixin` (a base of
:class:`~skbudget._base.BaseOnlineClassifier`) writes the estimator's
state in plain containers: the stream driver, the kernel and the online
record as dicts, each learner as its ``get_state()`` (arrays, numbers, its
random generator) and the name of its class (a string, compared on
loading, never imported).  So a file names no type of skbudget's but the
estimator's own class, and a loaded model continues its stream.

Loading checks every value of the state before the model is used, so that
a corrupted or tampered file is refused with a ValueError naming the field,
never accepted to fail later (``PersistentModelMixin.__setstate__``):

- the parameters, against the estimator's ``_parameter_constraints``; the
  parameters the model was started with (``_params_at_start``) also against
  the estimator's own checks (``_validate_params``);
- the fitted scalars, against :data:`_FITTED_SCALARS` (and an estimator's
  own ``_fitted_scalar_constraints``) and what they follow from (the
  resolved gamma and the kernel function from the parameters, the
  multi-class mode, the input format and width from the stored rows);
- every scalar of a learner's state, by the type of the field in a learner
  made anew (``_make_learner``, as when the model started); the fields the
  learner is built with (:data:`_LEARNER_CONSTANTS`) must equal the new
  learner's; then the learner's own consistency check (``check_state``, the
  one its compiled calls run);
- the online record and the stream driver, by their own ``__setstate__``;
- last, the fitted attributes against the model the learners hold.
"""

import contextlib
import math
import numbers
import reprlib

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import (
    InvalidParameterError,
    StrOptions,
    make_constraint,
    validate_parameter_constraints,
)

from skbudget._engine import OnlineLearner
from skbudget._kernels import KernelFunction
from skbudget._params import Integer, RealNumber, _model_param_names, _same_value
from skbudget._stream import StreamDriver

__all__ = ["PersistentModelMixin"]

# the reprs of saved values in messages (a tampered file may hold a huge one)
_SHORT = reprlib.Repr()
_SHORT.maxlong, _SHORT.maxstring, _SHORT.maxother = 40, 80, 80

# the largest value of a C integer (Py_ssize_t, int64) a count may take
_INT64_MAX = 2 ** 63 - 1

# the fitted scalars of every estimator: their types and ranges
_FITTED_SCALARS = {
    "n_features_in_": [Integer(1, _INT64_MAX, closed="both")],
    "n_iter_": [Integer(0, _INT64_MAX, closed="both")],
    "_n_examples_seen": [Integer(0, _INT64_MAX, closed="both")],
    "_shared_support": ["boolean"],
    "_open_classes": ["boolean"],
    "_sparse_storage": ["boolean"],
    "_storage_dtype": [StrOptions({"float32", "float64"})],
    # (None: a callable kernel)
    "_gamma": [RealNumber(0.0, None, closed="neither"), None],
    "gamma_": [RealNumber(0.0, None, closed="neither"), None],
    "_chunk_size": [Integer(1, _INT64_MAX, closed="both"), None],
}

# the fields of a learner's state it is built with (by ``_make_learner``
# from the model's parameters, and by ``use_store`` from its kernel and
# input width): they never change while it learns, so a loaded learner's
# must be those of a learner made anew.  The other scalars change as it
# learns; they are checked by type, and by the learner's ``check_state``.
_LEARNER_CONSTANTS = frozenset({
    "C", "alpha_bound", "beta", "bound", "budget", "distill", "eta", "kernel_coef0",
    "kernel_degree", "kernel_gamma", "kernel_kind", "lam", "maintenance", "margin_width",
    "merge_search", "mode", "n_components", "n_features", "n_outputs", "prior_neg",
    "prior_pos", "reservoir_size", "sampling", "self_tuned", "theta", "threshold_step",
    "track_gram", "track_margins", "track_scores", "use_distances", "uses_store",
    # AMM's learner
    "n_classes", "prune_every", "prune_c", "clone_probability", "clone_decay", "bias",
    "fit_intercept",
})

# the fields of a kernel function's state (KernelFunction.__init__'s
# arguments, and the convention of a callable)
_KERNEL_FIELDS = ("kernel", "gamma", "degree", "coef0", "kernel_params")
_CALLABLE_CONVENTIONS = (None, "matrix", "pair")



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

    ``_plain_attribute_classes`` (the bases give it) names the estimator
    attributes saved as plain dicts of their instance state, and their
    classes; ``_feature_map_class`` the class of the driver's feature map
    (a model on fixed features), saved likewise.  An estimator whose model
    keeps constants from its first data checks them on loading
    (:meth:`_check_saved_constants`).

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
        # (a feature map's driver has no kernel, even where the model has
        # one: LLSVM's map gets the model's own back on loading)
        plain_driver["kernel"] = (None if kernel is None or kernel is state.get("_kernel_function")
                                  else _plain_state(kernel))
        if plain_driver.get("features") is not None:
            plain_driver["features"] = _plain_state(plain_driver["features"])
        state["_driver"] = plain_driver
        for name, cls in self._plain_attribute_classes.items():
            if isinstance(state.get(name), cls):
                state[name] = _plain_state(state[name])
        return state

    def __setstate__(self, state):
        state = dict(state)
        plain_driver = state.get("_driver")
        if plain_driver is None and "classes_" not in state:     # unfitted
            super().__setstate__(state)
            return
        if not isinstance(plain_driver, dict):
            self._refuse("_driver", plain_driver, "the plain state of a fitted model's driver")
        state.setdefault("_shared_support", plain_driver.get("shared_support", False))
        state.setdefault("_open_classes", False)     # (files written before open label sets)
        features = self._saved_feature_map(plain_driver)
        for name, cls in self._plain_attribute_classes.items():
            if not isinstance(state.get(name), dict):
                self._refuse(name, state.get(name), f"the plain state of a {cls.__name__}")
            state[name] = _rebuilt(cls, state[name])
        super().__setstate__(state)
        self._check_saved_parameters()
        self._check_saved_constants()
        self._check_fitted_scalars()
        plain_driver = dict(plain_driver)
        kernel, own_kernel = plain_driver.get("kernel"), self.__dict__.get("_kernel_function")
        if kernel is not None:
            if own_kernel is None:
                self._refuse("_driver.kernel", kernel, "None (the model has no kernel)")
            self._check_kernel_state(kernel, "_driver.kernel", own_kernel.__dict__)
        if kernel is None and features is None:
            plain_driver["kernel"] = own_kernel
        elif kernel is not None:
            plain_driver["kernel"] = _rebuilt(KernelFunction, kernel)
        if features is not None:
            plain_driver["features"] = _rebuilt(self._feature_map_class, features)
        plain_driver["learners"] = self._rebuilt_learners(plain_driver)
        self._driver = _rebuilt(StreamDriver, plain_driver)
        self._check_driver_scalars()
        self._check_attributes_match_learners()
        self._check_input_width()

    def _saved_feature_map(self, plain_driver):
        """The plain state of the saved driver's feature map (a dict), or
        None for an estimator without one; a file of another layout is
        refused (FOGD's of skbudget 88d59f9 and earlier kept its random
        weights in a driver of its own)."""
        features = plain_driver.get("features")
        if self._feature_map_class is None:
            if features is not None:
                self._refuse("_driver.features", features, "None (the model stores rows)")
            return None
        if isinstance(features, dict):
            return features
        if "U" in plain_driver:
            raise ValueError(
                f"{type(self).__name__}: the file was written by skbudget 88d59f9 or earlier, "
                f"whose {type(self).__name__} saved its random weights in a driver of its "
                f"own; this version cannot load it. Fit the model again (the same "
                f"random_state draws the same random weights).")
        self._refuse("_driver.features", features, "the plain state of a feature map")

    def _check_saved_constants(self):
        """Check the constants the model took from its first data (none
        here; a kernel expansion's: :meth:`_check_kernel_function`)."""

    def _refuse(self, name, value, expected):
        """Raise the ValueError of a saved field ``name`` whose ``value`` is
        not ``expected``."""
        raise ValueError(f"{type(self).__name__}: the saved {name!r} is {_SHORT.repr(value)}, "
                         f"which is not {expected}; the file is corrupted or was not written "
                         f"by skbudget.")

    def _check_in_c_range(self, values):
        """Raise unless every number of ``values`` (name -> value) is one
        the compiled code can hold: an integer in the range of int64, a
        real number in the range of float64."""
        for name, value in values.items():
            if not _in_c_range(value):
                self._refuse(name, value, "a number in the range of int64 and float64")

    def _check_constraints(self, values, constraints, what):
        """Raise unless every value of ``values`` (name -> value) satisfies
        its scikit-learn ``constraints`` (name -> list of constraints)."""
        try:
            validate_parameter_constraints(constraints, values,
                                           caller_name=f"the loaded {type(self).__name__}")
        except InvalidParameterError as exc:
            raise ValueError(f"{type(self).__name__}: {what} are invalid: {exc} The file is "
                             f"corrupted or was not written by skbudget.") from None

    def _check_saved_parameters(self):
        """The parameters (each against its ``_parameter_constraints``; the
        estimator's checks across parameters are ``fit``'s), the ones the
        model was started with, and the call parameters its fitted
        attributes were read with."""
        names = self._get_param_names()
        missing = [name for name in names if name not in self.__dict__]
        if missing:
            raise ValueError(f"{type(self).__name__}: the saved state has no parameters "
                             f"{missing}; the file is corrupted or was not written by "
                             f"skbudget.")
        # (as set_params takes them: a number beyond C's range is refused by
        # the next training call, as for the model before it was saved)
        self._check_constraints({name: self.__dict__[name] for name in names},
                                self._parameter_constraints, "the saved parameters")
        at_start = self.__dict__.get("_params_at_start")
        expected = set(_model_param_names(type(self)))
        if not (isinstance(at_start, dict) and set(at_start) == expected):
            self._refuse("_params_at_start", at_start, f"a dict of {sorted(expected)}")
        self._check_in_c_range({f"_params_at_start.{name}": value
                                for name, value in at_start.items()})
        with self._started_params():
            try:
                self._validate_params()
            except ValueError as exc:
                raise ValueError(f"{type(self).__name__}: the saved parameters the model was "
                                 f"started with ('_params_at_start') are invalid: {exc} The "
                                 f"file is corrupted or was not written by skbudget.") from None
        used = self.__dict__.get("_call_params_of_attributes")
        if used is not None:       # (files written before it was kept have none)
            if not (isinstance(used, dict) and set(used) <= set(self._call_params)):
                self._refuse("_call_params_of_attributes", used,
                             f"a dict of some of {list(self._call_params)}")
            self._check_constraints(used, self._parameter_constraints,
                                    "the saved call parameters of the fitted attributes "
                                    "('_call_params_of_attributes')")

    @contextlib.contextmanager
    def _started_params(self):
        """The parameters set to the values the model was started with
        (``_params_at_start``), then back to their own."""
        current = {name: self.__dict__[name] for name in self._params_at_start}
        self.__dict__.update(self._params_at_start)
        try:
            yield
        finally:
            self.__dict__.update(current)

    def _check_kernel_state(self, kernel, name, expected):
        """Raise unless a saved kernel function's state ``kernel`` (a dict)
        has the fields ``expected`` (a dict) gives, and a convention that
        fits its kernel."""
        if not isinstance(kernel, dict) or not set(_KERNEL_FIELDS) <= set(kernel):
            self._refuse(name, kernel, "the plain state of a KernelFunction")
        for field in _KERNEL_FIELDS:
            if not _same_value(kernel[field], expected[field]):
                self._refuse(f"{name}.{field}", kernel[field],
                             f"{expected[field]!r}, the value the model's parameters give")
        conventions = _CALLABLE_CONVENTIONS if callable(kernel["kernel"]) else (None,)
        if kernel.get("convention") not in conventions:
            self._refuse(f"{name}.convention", kernel.get("convention"),
                         f"one of {list(conventions)}")

    def _check_resolved_gamma(self, has_gamma=True):
        """Check the resolved gamma (``_gamma``, ``gamma_``): the one the
        parameters the model was started with give (a 'scale' or 'auto'
        gamma was resolved from the data: any number > 0; None when the
        model takes none, ``has_gamma`` False: a callable kernel), and
        return it."""
        resolved = {name: self.__dict__.get(name) for name in ("_gamma", "gamma_")}
        self._check_in_c_range(resolved)
        self._check_constraints(resolved, _FITTED_SCALARS, "the saved fitted scalars")
        with self._started_params():
            if not has_gamma:
                gamma = None
            elif isinstance(self.gamma, numbers.Real):
                gamma = float(self.gamma)
            else:
                gamma = self._gamma
        for name in ("_gamma", "gamma_"):
            if not _same_value(self.__dict__[name], gamma):
                self._refuse(name, self.__dict__[name],
                             f"{gamma!r}, the value the model's parameters give")
        return gamma

    def _check_kernel_function(self):
        """The resolved gamma (:meth:`_check_resolved_gamma`) and the kernel
        function: those the parameters the model was started with give."""
        with self._started_params():
            gamma = self._check_resolved_gamma(has_gamma=not callable(self.kernel))
            expected = {"kernel": self.kernel, "gamma": gamma, "degree": self.degree,
                        "coef0": self.coef0, "kernel_params": self.kernel_params}
        self._check_kernel_state(self._kernel_function.__dict__, "_kernel_function", expected)

    def _check_fitted_scalars(self):
        """The fitted scalars of :data:`_FITTED_SCALARS` and the estimator's
        ``_fitted_scalar_constraints`` (type and range), and the classes."""
        attributes = self.__dict__
        constraints = {**_FITTED_SCALARS, **getattr(self, "_fitted_scalar_constraints", {})}
        values = {name: attributes.get(name, getattr(self, name, None)) for name in constraints}
        self._check_in_c_range(values)
        self._check_constraints(values, constraints, "the saved fitted scalars")
        classes = attributes.get("classes_")
        fewest = 1 if attributes.get("_open_classes") else 2    # (an open label set: one so far)
        if not (isinstance(classes, np.ndarray) and classes.ndim == 1
                and classes.size >= fewest):
            self._refuse("classes_", classes, f"a 1-D array of at least {fewest} classes")
        with self._started_params():
            learns_open_label_sets = self._learns_open_label_sets()
        if fewest == 1 and not learns_open_label_sets:
            self._refuse("_open_classes", True, "False: the estimator's parameters select "
                                                "one-vs-rest learners, whose classes are fixed")

    def _check_driver_scalars(self):
        """What the fitted scalars follow from in the driver's state: the
        multi-class mode (from the parameters the model was started with
        and its classes), the input format, chunk length and example
        count."""
        with self._started_params():
            shared_support = self._open_classes or self._shares_support(len(self.classes_))
        driver = self._driver
        for name, value, expected in (
                ("_shared_support", self._shared_support, shared_support),
                ("_driver.shared_support", getattr(driver, "shared_support", shared_support),
                 shared_support),
                ("_driver.chunk_size", driver.chunk_size, self._chunk_size)):
            if not _same_value(value, expected) or type(value) is not type(expected):
                self._refuse(name, value, f"{expected!r}, the value the model's parameters "
                                          f"give")
        if driver.pools and self._sparse_storage != sp.issparse(driver.pools[0]):
            self._refuse("_sparse_storage", self._sparse_storage,
                         f"{sp.issparse(driver.pools[0])}, the format of the stored rows")
        stored = [learner.store for learner in driver.learners if driver.uses_store]
        stored += [] if driver.uses_store else list(driver.pools)
        for rows in stored:
            if rows.dtype != self._storage_dtype:
                self._refuse("_storage_dtype", self._storage_dtype,
                             f"{rows.dtype}, the dtype of the stored rows")
        last_id = max([getattr(learner, "first_example_id", -1) for learner in driver.learners]
                      + [int(ids.max()) for ids in driver.pool_ids if ids.size])
        if self._n_examples_seen <= last_id:
            self._refuse("_n_examples_seen", self._n_examples_seen,
                         f"greater than {last_id}, the identity of an example seen")

    def _check_input_width(self):
        """``n_features_in_`` (and ``feature_names_in_``): the width of
        the rows the model takes (its driver's, :meth:`StreamDriver.input_width`:
        its stored rows' or its feature map's), once the driver is known
        to be consistent."""
        width = self._driver.input_width()
        if self.n_features_in_ != width:
            self._refuse("n_features_in_", self.n_features_in_,
                         f"{width}, the width of the rows the model holds")
        names = self.__dict__.get("feature_names_in_")
        if names is not None and not (isinstance(names, np.ndarray) and names.shape == (width,)):
            self._refuse("feature_names_in_", names, f"an array of {width} feature names")

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

    def _rebuilt_learners(self, plain_driver):
        """Learners made by ``_make_learner`` with the parameters the model
        was started with (and given the driver's kernel and input width in
        store mode), then given their saved states, each checked: its
        scalars by the type of the new learner's field, the fields the
        learner is built with equal to the new learner's, then the
        learner's own consistency check (``check_state``)."""
        saved, pools = plain_driver.get("learners"), plain_driver.get("pools")
        if not (isinstance(saved, list) and saved
                and all(isinstance(entry, dict) and isinstance(entry.get("state"), dict)
                        for entry in saved)):
            self._refuse("_driver.learners", saved, "a list of learners' states")
        # (a driver fed by a feature map stores no rows: it has no pools)
        n_pools = 0 if plain_driver.get("features") is not None else len(saved)
        if not (isinstance(pools, list) and len(pools) == n_pools
                and all(isinstance(pool, np.ndarray) and pool.ndim == 2 or sp.issparse(pool)
                        for pool in pools)):
            self._refuse("_driver.pools", pools,
                         f"{n_pools} 2-D blocks of stored rows (one per learner of the stream "
                         f"driver)")
        with self._started_params():
            try:
                learners = [self._make_learner(None) for _ in saved]
            except (OverflowError, ValueError) as exc:     # e.g. a budget beyond C's range
                raise ValueError(
                    f"{type(self).__name__}: the saved parameters the model was started with "
                    f"('_params_at_start') build no learner ({type(exc).__name__}: {exc}); the "
                    f"file is corrupted or was not written by skbudget.") from None
        kernel = plain_driver["kernel"]
        for k, (learner, entry) in enumerate(zip(learners, saved)):
            if _type_name(learner) != entry.get("type"):
                raise ValueError(
                    f"{type(self).__name__}: the saved '_driver.learners[{k}].type' is "
                    f"{entry.get('type')!r}, where this estimator makes a {_type_name(learner)}; "
                    f"the file is corrupted or was written by another version of skbudget."
                )
            if plain_driver.get("uses_store") is True:
                learner.use_store(kernel.compiled_kind, kernel.gamma, kernel.coef0,
                                  kernel.degree, pools[k].shape[1])
            self._check_learner_scalars(learner.get_state(), entry["state"],
                                        f"_driver.learners[{k}].state")
            learner.set_state(entry["state"])
            pool_size = pools[k].shape[0] if pools and not plain_driver.get("uses_store") else -1
            if isinstance(learner, OnlineLearner):
                learner.check_state(pool_size)      # raises ValueError
            else:
                problem = learner.check_state()
                if problem is not None:
                    raise ValueError(f"{type(learner).__name__} has an inconsistent state: "
                                     f"{problem}")
        return learners

    def _check_learner_scalars(self, new, saved, where):
        """Raise unless every scalar of a learner's ``saved`` state has the
        type of the field in the ``new`` learner's (a bool, an integer in
        the C range, a finite number unless the new one is not), and the
        fields the learner is built with are the new learner's."""
        for name, value in new.items():
            if name not in saved:
                continue                          # (set_state names what is missing)
            found = saved[name]
            if isinstance(value, (bool, np.bool_)):
                valid, expected = isinstance(found, (bool, np.bool_)), "a bool"
            elif isinstance(value, numbers.Integral):
                valid = (isinstance(found, numbers.Integral)
                         and not isinstance(found, (bool, np.bool_)) and _in_c_range(found))
                expected = "an integer in the range of int64"
            elif isinstance(value, numbers.Real):
                number = _as_float(found)
                valid = number is not None and (math.isfinite(number) or not math.isfinite(value)
                                                and not math.isnan(number))
                expected = "a finite number" if math.isfinite(value) else "a number"
            elif value is None or isinstance(value, np.random.RandomState):
                valid = found is None or isinstance(found, np.random.RandomState)
                expected = "None or a numpy RandomState"
            else:
                continue                          # arrays: the learner's check_state
            if not valid:
                self._refuse(f"{where}.{name}", found, expected)
            if name in _LEARNER_CONSTANTS and not (found == value):
                self._refuse(f"{where}.{name}", found,
                             f"{value!r}, the value the parameters the model was started with "
                             f"('_params_at_start') give")


def _in_c_range(value):
    """Whether ``value``, if it is a number, fits the compiled code's types:
    an integer in the range of int64, a real number in that of float64."""
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return -_INT64_MAX - 1 <= value <= _INT64_MAX
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        return _as_float(value) is not None
    return True


def _as_float(value):
    """``value`` as a float if it is a real number (not a bool) within the
    range of floats, else None."""
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


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
