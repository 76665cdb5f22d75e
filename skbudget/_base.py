"""The estimator layer shared by every online kernel classifier.

:class:`BaseOnlineKernelClassifier` does everything that is not an update
rule: parameter and input validation, labels and the one-vs-rest wrapper,
epochs and ``partial_fit`` calls, the fitted attributes and prediction.
Kernel values come from ``skbudget._kernels`` and the chunk driver around
the compiled stream loop is ``skbudget._stream``.  An algorithm adds its
parameters and one method, ``_make_learner``, which returns the compiled
policy (a subclass of ``skbudget._engine.OnlineLearner``).
"""

import copy
import functools
import numbers
import sys
import warnings
from abc import abstractmethod

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import assert_all_finite, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import (
    _check_partial_fit_first_call,
    check_classification_targets,
)
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import (
    _check_sample_weight,
    check_consistent_length,
    check_is_fitted,
    validate_data,
)

from skbudget._atomic import RollbackOnError
from skbudget._docstrings import fit_doc, partial_fit_doc
from skbudget._elementwise import integral_classes
from skbudget._kernels import KERNELS, KernelFunction, check_finite, compute_gamma
from skbudget._predict_fast import kernel_expansion
from skbudget._record import OnlineRecord
from skbudget._stream import ProgressLog, StreamDriver, empty_rows, single_threaded_blas

__all__ = ["BaseOnlineKernelClassifier", "Integer", "RealNumber"]

# fused prediction works on a dense copy of the support vectors (and, for CSR
# input, of their transpose): at most this many values, else kernel blocks
_FUSED_MAX_VALUES = 2 ** 24
# 'scale' resolved from fewer rows than this, by a call that a stream may
# continue (partial_fit, warm-start fit), warns
_SCALE_MIN_ROWS = 100
# the kernels gamma is a parameter of
_GAMMA_KERNELS = {"rbf", "poly", "polynomial", "sigmoid", "laplacian", "chi2"}
# labels checked and collected this many at a time (fit on a long y)
_LABEL_BLOCK = 1 << 16


def _plain_labels(y):
    """Whether ``y`` is a 1-D NumPy array of numbers (bool, integer or
    float): the labels :func:`_checked_plain_labels` validates."""
    return type(y) is np.ndarray and y.ndim == 1 and y.dtype.kind in "biuf"


def _checked_plain_labels(X, y, estimator_name):
    """What ``validate_data(estimator, X, y)`` does to plain labels (after
    ``X``), with its errors: a C-contiguous ``y`` with finite values, as
    many as ``X`` has rows.  Its generic path (``check_array`` on ``y``,
    looking for data frames) costs ~40 us per call; this ~3 us."""
    y = np.ascontiguousarray(y)
    if y.dtype.kind == "f":
        assert_all_finite(y, input_name="y", estimator_name=estimator_name)
    check_consistent_length(X, y)
    return y


def _plus_minus_one(mask):
    """+1.0 where ``mask`` is True, -1.0 elsewhere (``np.where(mask, 1.0,
    -1.0)`` in cheaper passes)."""
    values = mask.astype(np.float64)
    values *= 2.0
    values -= 1.0
    return values


def _checked_classes(y):
    """``np.unique(y)``, after scikit-learn's ``check_classification_targets``,
    a block of labels at a time: both allocate in proportion to what they
    read (``type_of_target`` copies a float ``y`` to integers, ``np.unique``
    sorts a copy), so a long ``y`` costs a block's memory, not its own.
    Numeric labels take a shortcut (:func:`_integral_classes`)."""
    if y.ndim == 1 and y.dtype.kind in "biuf":
        classes = _integral_classes(y)
        if classes is not None:
            return classes
    blocks = []
    for start in range(0, len(y), _LABEL_BLOCK):
        block = y[start:start + _LABEL_BLOCK]
        check_classification_targets(block)
        blocks.append(np.unique(block))
    return np.unique(np.concatenate(blocks))


def _integral_classes(y):
    """``np.unique(y)`` for a 1-D numeric ``y`` whose labels are integers
    within ``_LABEL_BLOCK`` of each other, or None (then the general path
    decides, and raises scikit-learn's error for non-integral floats).

    For such a ``y`` scikit-learn's check is exactly "every value is an
    integer" (``type_of_target`` is then 'binary' or 'multiclass'); the
    classes are read off a table of the labels seen, in compiled code
    (:func:`~skbudget._elementwise.integral_classes`)."""
    labels = y.view(np.uint8) if y.dtype.kind == "b" else y
    if labels.dtype.itemsize > 8 or labels.dtype.kind == "f" and labels.dtype.itemsize < 4:
        return None                         # no compiled loop for float16, float128
    classes = integral_classes(np.ascontiguousarray(labels), _LABEL_BLOCK)
    return None if classes is None else classes.astype(y.dtype)


# scikit-learn's error for class_weight='balanced' in partial_fit (SGDClassifier)
_BALANCED_PARTIAL_FIT = (
    "class_weight '{0}' is not supported for "
    "partial_fit. In order to use 'balanced' weights,"
    " use compute_class_weight('{0}', "
    "classes=classes, y=y). "
    "In place of y you can use a large enough sample "
    "of the full training set target to properly "
    "estimate the class frequency distributions. "
    "Pass the resulting weights as the class_weight "
    "parameter."
)


def _learner_weights(sample_weight, class_weight, rows, index):
    """The weights of the examples ``rows`` whose classes are ``index``
    (positions in ``classes_``): ``sample_weight[rows]`` (None: 1) times
    the ``class_weight`` (one value per class) of each example's class,
    the same for every learner."""
    weights = class_weight[index]
    if sample_weight is not None:
        weights = weights * sample_weight[rows]
    return weights


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


class BaseOnlineKernelClassifier(ClassifierMixin, BaseEstimator):
    """Base class of the online kernel classifiers (not for direct use).

    Multi-class problems are learned one-vs-rest: one binary learner per
    class, all fed the same examples in the same order; each learner has its
    own support set (so a budget ``B`` means up to ``n_classes * B`` stored
    vectors).  Prediction takes the class whose learner gives the largest
    score.  With two classes there is a single learner.
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS)), callable],
        "gamma": [StrOptions({"scale", "auto"}), RealNumber(0.0, None, closed="left")],
        "degree": [Integer(0, None, closed="left")],
        "coef0": [RealNumber(None, None, closed="neither")],
        "kernel_params": [dict, None],
        "max_iter": [Integer(1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "n_jobs": [numbers.Integral, None],
    }

    # examples per block of kernel values (None: chosen by _chunk_length);
    # results never depend on it
    _chunk_size = None
    # rows per block when predicting
    _predict_chunk_size = 2048
    # a multi-epoch fit on at most this many examples computes k(X, X) once
    _gram_cache_limit = 4096
    # with verbose, seconds between progress lines within a pass
    _progress_interval = 10.0
    # one learner for every class on one shared support set (instead of
    # one-vs-rest): it takes class indices and its expansion has one row of
    # coefficients per class (skbudget._shared_support)
    _shared_support = False
    # test instrumentation: keep every round's mistake flag (memory grows
    # with the stream); the oracle tests read them with _mistake_flags()
    _keep_mistake_flags = False
    # parameters that only steer the calls (or, for some estimators, the
    # read-out) and may change between calls; every other parameter is built
    # into the learners when a model starts (see _check_unchanged_params)
    _call_params = ("max_iter", "n_jobs", "shuffle", "verbose", "warm_start")

    @abstractmethod
    def __init__(self, *, kernel, gamma, degree, coef0, kernel_params, max_iter,
                 shuffle, random_state, warm_start, verbose, n_jobs=None):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose
        self.n_jobs = n_jobs

    @classmethod
    def _get_param_names(cls):
        """The parameter names, as scikit-learn's ``BaseEstimator`` gives
        them, read from the signature once per class: ``get_params`` runs on
        every ``fit`` and ``partial_fit`` (parameter validation), and the
        signature costs ~30 us each time."""
        return list(_param_names(cls))

    # ------------------------------------------------------------------
    # what an algorithm provides
    # ------------------------------------------------------------------
    @abstractmethod
    def _make_learner(self, rng):
        """A new binary learner (an ``OnlineLearner`` subclass)."""

    def _init_constants(self, X):
        """Data-dependent constants, computed from the first training data."""

    def _learner_expansion(self, learner):
        """(coefficients oldest first, intercept) that predict with; a
        shared-support learner gives one row of coefficients and one
        intercept per class."""
        return learner.coefficients(), learner.intercept

    def _draws_random_numbers(self):
        """Whether the update rule draws from the random generator (then the
        one-vs-rest learners draw from generators of their own)."""
        return False

    def _needs_distances(self):
        """Whether the policy needs squared input-space distances too."""
        return False

    # ------------------------------------------------------------------
    # kernels
    # ------------------------------------------------------------------
    def _kernel(self, X, Y):
        """k(X, Y) with the model's kernel, as a C-contiguous float64 block."""
        return self._kernel_function(X, Y)

    def _kernel_diagonal(self, X):
        """k(x_i, x_i) for every row."""
        return self._kernel_function.diagonal(X)

    # ------------------------------------------------------------------
    # state
    # ------------------------------------------------------------------
    def _reset(self, X, classes, gamma, streaming):
        """Start a new model for ``classes`` with the resolved ``gamma`` (fit
        without warm start, or the first partial_fit).  ``streaming``: the
        call may be continued (partial_fit, warm-start fit)."""
        if len(classes) < 2:
            raise ValueError(
                f"The number of classes has to be greater than one; got {len(classes)} class"
            )
        self.classes_ = classes
        self._params_at_start = {name: _kept_value(value)
                                 for name, value in self._captured_params().items()}
        self._rng = check_random_state(self.random_state)
        self._gamma = gamma
        if (self.gamma == "scale" and streaming and X.shape[0] < _SCALE_MIN_ROWS
                and self.kernel in _GAMMA_KERNELS and "gamma" not in (self.kernel_params or {})):
            warnings.warn(
                f"gamma='scale' was resolved from the {X.shape[0]} rows of the first call "
                f"(gamma_={self._gamma:.4g}) and stays fixed for the whole stream; with "
                f"fewer than {_SCALE_MIN_ROWS} rows it may be far off. For streaming, pass "
                f"a numeric gamma.", UserWarning,
            )
        self.gamma_ = self._gamma
        self._kernel_function = KernelFunction(self.kernel, self._gamma, self.degree,
                                               self.coef0, self.kernel_params
                                               ).resolve_callable(X)
        self._sparse_storage = sp.issparse(X)
        self._init_constants(X)
        n_learners = 1 if len(classes) == 2 or self._shared_support else len(classes)
        if n_learners == 1:
            rngs = [self._rng]
        else:  # one generator per learner: draws never depend on chunking
            seeds = self._rng.randint(np.iinfo(np.int32).max, size=n_learners)
            rngs = [np.random.RandomState(seed) for seed in seeds]
        self._driver = StreamDriver([self._make_learner(rng) for rng in rngs], empty_rows(X),
                                    self._kernel_function, self._needs_distances(),
                                    self._chunk_size, self.n_jobs, self._shared_support)
        self._record = OnlineRecord(keep_flags=self._keep_mistake_flags)
        self._n_examples_seen = 0
        self.n_iter_ = 0

    def _captured_params(self):
        """The parameters built into a model when it starts."""
        return {name: getattr(self, name) for name in _model_param_names(type(self))}

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

    def _as_storage_format(self, X):
        """A continuing call's X in the format the model stores its support
        vectors in (fixed by the call that started the model)."""
        if self._sparse_storage and not sp.issparse(X):
            return sp.csr_matrix(X)
        if not self._sparse_storage and sp.issparse(X):
            return X.toarray()
        return X

    def _rollback_on_error(self, shuffles, continuing):
        """A context manager that runs a training call atomically: if it
        raises (any exception, KeyboardInterrupt and MemoryError included),
        the model is put back as it was.

        The snapshot costs O(model), never O(stream): the estimator's
        attributes (a shallow copy: the call replaces them, it does not
        change them in place), each learner's full state
        (``get_state``/``set_state``) when the call is ``continuing`` the
        model (a new model gets new learners and only replaces the old
        ones), the states of the random generators the call may draw from —
        the model's own when the call ``shuffles`` a continued model, and a
        ``RandomState`` passed as ``random_state``, taken now; the
        learners' update rules', taken by the learner at the call's first
        draw (``OnlineLearner.begin_call``) — and the driver's lists of
        pools.  The restore cannot be cut short by a Ctrl-C
        (:class:`~skbudget._atomic.RollbackOnError`: a compiled
        ``__exit__`` that repeats the restore until it completes); the
        driver has stopped every thread of the call before the exception
        reaches it (``StreamDriver.run``).
        """
        saved = self.__dict__.copy()
        driver = saved.get("_driver") if continuing else None
        generators = [self.random_state] + ([saved.get("_rng")] if shuffles and continuing
                                            else [])
        if driver is not None:
            pools, pool_ids = list(driver.pools), list(driver.pool_ids)
            states = [learner.get_state() for learner in driver.learners]
            for learner in driver.learners:
                learner.begin_call()
        rng_states = {id(g): (g, g.get_state()) for g in generators
                      if isinstance(g, np.random.RandomState)}

        def restore():      # the whole restore each time (run to completion)
            self.__dict__.clear()
            self.__dict__.update(saved)
            if driver is not None:
                driver.pools[:], driver.pool_ids[:] = pools, pool_ids
                for learner, state in zip(driver.learners, states):
                    if learner.rng_at_call_start is not None:
                        learner.rng.set_state(learner.rng_at_call_start)
                    learner.set_state(state)
            for generator, state in rng_states.values():   # the states before the call
                generator.set_state(state)

        return RollbackOnError(restore)

    def _signed_targets(self, y):
        """One column per learner, +1 for its class and -1 for the others
        (a shared-support learner: one column, the class indices)."""
        if self._shared_support:
            return np.searchsorted(self.classes_, y).astype(np.float64)[:, None]
        if len(self.classes_) == 2:
            return _plus_minus_one(y == self.classes_[1])[:, None]
        return _plus_minus_one(y[:, None] == self.classes_[None, :])

    def _example_weights(self, X, y, sample_weight):
        """The weights of the call's examples, as ``StreamDriver.run``
        takes them: None without ``sample_weight`` and ``class_weight`` (or
        when every weight is 1), else a function of (rows, their labels)
        giving their weights, the same for every learner.

        An example's weight is its ``sample_weight`` times the
        ``class_weight`` of its class ('balanced': ``n_samples / (n_classes
        * np.bincount(y))`` of this call's ``y``, as in scikit-learn), and
        it scales the example's loss in every learner (one-vs-rest too, as
        ``SVC``'s ``class_weight`` scales ``C`` per class; scikit-learn's
        ``SGDClassifier`` weighs only the positive examples of each
        one-vs-rest learner)."""
        class_weight = getattr(self, "class_weight", None)
        if sample_weight is None and class_weight is None:
            return None
        per_class = np.asarray(compute_class_weight(class_weight, classes=self.classes_, y=y),
                               dtype=np.float64)
        if not (np.all(np.isfinite(per_class)) and np.all(per_class >= 0)):
            raise ValueError(f"class_weight must give every class a finite weight >= 0; got "
                             f"{dict(zip(self.classes_.tolist(), per_class.tolist()))}")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                                 ensure_non_negative=True)
            if np.all(sample_weight == 1.0):
                sample_weight = None
        if sample_weight is None and np.all(per_class == 1.0):
            return None
        classes = self.classes_
        return lambda rows, y: _learner_weights(sample_weight, per_class, rows,
                                                np.searchsorted(classes, y))

    def _check_labels(self, y):
        """Raise unless every label is in ``classes_`` (sorted: one binary
        search per label, no sort of ``y``)."""
        known = self.classes_[np.minimum(np.searchsorted(self.classes_, y),
                                         len(self.classes_) - 1)] == y
        if not known.all():
            unknown = np.unique(y[~known])
            raise ValueError(
                f"y contains labels {unknown.tolist()} that are not in classes_ "
                f"{self.classes_.tolist()}"
            )

    @property
    def _learners(self):
        """The binary learners (one per column of the signed targets)."""
        return self._driver.learners

    def _progress_log(self):
        """What reports progress within the next pass (None unless verbose)."""
        if not self.verbose:
            return None
        return ProgressLog(self._record.n_rounds, self._record.n_mistakes,
                           self._progress_interval)

    def _log_epoch(self, epoch):
        if self.verbose:
            print(
                f"-- Epoch {epoch}: examples seen {self._record.n_rounds}, "
                f"mistakes {self._record.n_mistakes}, support vectors "
                f"{sum(learner.n_sv for learner in self._learners)}",
                file=sys.stdout,
            )

    def _mistake_flags(self):
        """Every training round's mistake flag (only with the test switch
        ``_keep_mistake_flags`` set before the model started)."""
        return self._record.flags()

    def _update_fitted_attributes(self):
        vectors, blocks, intercepts, counts = [], [], [], []
        for k, learner in enumerate(self._learners):
            coef, intercept = self._learner_expansion(learner)
            if not (np.isfinite(coef).all() and np.isfinite(intercept).all()):
                # the last line behind the compiled checks (inside the call's
                # rollback: the model is left as it was)
                raise ValueError(
                    f"{type(self).__name__}: the model's coefficients are not finite numbers "
                    f"(NaN or infinity): its values overflowed the floating-point range "
                    f"during training. Use less extreme parameters (e.g. a smaller gamma, "
                    f"coef0 or degree) or rescale X (e.g. StandardScaler); the model is left "
                    f"as it was."
                )
            vectors.append(self._driver.support_vectors(k))
            blocks.append(np.atleast_2d(np.asarray(coef, dtype=np.float64)))
            intercepts.append(np.atleast_1d(intercept))
            counts.append(learner.n_sv)
        if len(vectors) == 1:
            self.support_vectors_ = vectors[0]
        elif sp.issparse(vectors[0]):
            self.support_vectors_ = sp.vstack(vectors, format="csr")
        else:
            self.support_vectors_ = np.concatenate(vectors)
        self.n_support_ = np.asarray(counts, dtype=np.int32)
        # each learner's rows of coefficients over its own support vectors
        self.dual_coef_ = np.zeros((sum(b.shape[0] for b in blocks), int(self.n_support_.sum())))
        row = column = 0
        for block in blocks:
            self.dual_coef_[row:row + block.shape[0], column:column + block.shape[1]] = block
            row, column = row + block.shape[0], column + block.shape[1]
        self.intercept_ = np.concatenate(intercepts).astype(np.float64)
        self.n_mistakes_ = self._record.n_mistakes
        self.n_rounds_ = self._record.n_rounds
        self.n_updates_ = int(sum(learner.n_updates for learner in self._learners))
        self._call_params_of_attributes = {name: getattr(self, name)
                                           for name in self._call_params}

    @property
    def mistake_curve_(self):
        """ndarray of shape (n_points, 2): the learning curve at bounded
        resolution, rows ``(t, mistakes up to round t)`` (see the class
        docstring)."""
        check_is_fitted(self)
        return self._record.curve()

    @property
    def support_curve_(self):
        """ndarray of shape (n_points, 2): the support size along the
        stream, rows ``(t, support vectors of every learner after round
        t)``, read at the end of every compiled segment of the stream (see
        the class docstring)."""
        check_is_fitted(self)
        return self._record.support_curve()

    # ------------------------------------------------------------------
    # public API
    # ------------------------------------------------------------------
    def _validate_fit_input(self, X, y, reset):
        """``X``, ``y``, and (``reset``) the sorted classes of ``y`` and the
        numeric gamma (None for a callable kernel); else None, None (labels
        are then checked against ``classes_``, :meth:`_check_labels`).

        A new model's ``gamma='scale'`` reads every value of ``X`` for its
        variance: that pass is also the check that they are finite (one pass
        over the data instead of two)."""
        resolves_scale = (reset and not callable(self.kernel)
                          and isinstance(self.gamma, str) and self.gamma == "scale")
        check_X = dict(accept_sparse="csr", dtype=np.float64, reset=reset,
                       ensure_all_finite=not resolves_scale)
        if _plain_labels(y):
            X = validate_data(self, X, **check_X)
            y = _checked_plain_labels(X, y, type(self).__name__)
        else:
            X, y = validate_data(self, X, y, **check_X)
        if not reset:
            return self._as_storage_format(X), y, None, None
        gamma = None
        if not callable(self.kernel):
            gamma = compute_gamma(self.gamma, X,
                                  type(self).__name__ if resolves_scale else None)
        return X, y, _checked_classes(y), gamma

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        return self._atomic_fit(X, y)

    fit.__doc__ = fit_doc()

    def _atomic_fit(self, X, y, sample_weight=None):
        """``fit`` (with ``sample_weight`` for the estimators that take it),
        atomically."""
        continuing = self.warm_start and hasattr(self, "classes_")
        with self._rollback_on_error(shuffles=True, continuing=continuing):
            return self._fit(X, y, continuing, sample_weight)

    def _fit(self, X, y, continuing, sample_weight=None):
        if continuing:
            self._check_unchanged_params()
        X, y, classes, gamma = self._validate_fit_input(X, y, reset=not continuing)
        if continuing:
            self._check_labels(y)
        else:
            self._reset(X, classes, gamma, streaming=self.warm_start)
        weights = self._example_weights(X, y, sample_weight)
        self._driver.n_jobs = self.n_jobs
        first_id = self._n_examples_seen
        self._n_examples_seen += X.shape[0]
        gram = None
        if self.max_iter > 1 and X.shape[0] <= self._gram_cache_limit:
            gram = self._kernel(X, X)
        for epoch in range(1, self.max_iter + 1):
            order = self._rng.permutation(X.shape[0]) if self.shuffle else None
            self._record = self._driver.run(X, y, self._signed_targets, order, first_id,
                                            self._record, gram, self._progress_log(), weights)
            self._log_epoch(epoch)
        self.n_iter_ = self.max_iter
        self._update_fitted_attributes()
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None):
        return self._atomic_partial_fit(X, y, classes)

    partial_fit.__doc__ = partial_fit_doc()

    def _atomic_partial_fit(self, X, y, classes, sample_weight=None):
        """``partial_fit`` (with ``sample_weight`` for the estimators that
        take it), atomically."""
        first_call = not hasattr(self, "classes_")
        with self._rollback_on_error(shuffles=False, continuing=not first_call):
            return self._partial_fit(X, y, classes, first_call, sample_weight)

    def _partial_fit(self, X, y, classes, first_call, sample_weight=None):
        if isinstance(getattr(self, "class_weight", None), str):   # 'balanced'
            raise ValueError(_BALANCED_PARTIAL_FIT.format(self.class_weight))
        if not first_call:
            self._check_unchanged_params()
        X, y, _, gamma = self._validate_fit_input(X, y, reset=first_call)
        if first_call:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            classes = np.unique(classes)
            if len(classes) < 2:
                raise ValueError(
                    f"classes must hold at least two classes; got {classes.tolist()}"
                )
        _check_partial_fit_first_call(self, classes)
        self._check_labels(y)
        if first_call:
            self._reset(X, self.classes_, gamma, streaming=True)
        weights = self._example_weights(X, y, sample_weight)
        self._driver.n_jobs = self.n_jobs
        first_id = self._n_examples_seen
        self._n_examples_seen += X.shape[0]
        self._record = self._driver.run(X, y, self._signed_targets, None, first_id,
                                        self._record, progress=self._progress_log(),
                                        weights=weights)
        self._update_fitted_attributes()
        self._log_epoch(1)
        return self

    def _predict_rows(self):
        """Rows per prediction block: at most ``_predict_chunk_size``, and
        blocks of about 128k kernel values (1 MB), which stay in cache
        (an 8 MB block is several times slower per value)."""
        n_sv = max(int(np.sum(self.n_support_)), 1)
        return int(np.clip(131072 // n_sv, 64, self._predict_chunk_size))

    def _raw_scores(self, X):
        """(n_samples, rows of dual_coef_) scores of the kernel expansion:
        compiled and fused for the common kernels
        (``skbudget._predict_fast``), in blocks of ``k(X, support_vectors_)``
        otherwise."""
        kernel = self._kernel_function
        if kernel.is_fast and self.support_vectors_.shape[0] * X.shape[1] <= _FUSED_MAX_VALUES:
            with single_threaded_blas():
                scores = kernel_expansion(X, self.support_vectors_, self.dual_coef_,
                                          self.intercept_, kernel.kernel, kernel.gamma,
                                          kernel.degree, kernel.coef0)
            return check_finite(scores, kernel.kernel)   # as the blocks below are
        out = np.empty((X.shape[0], self.dual_coef_.shape[0]))
        step = self._predict_rows()
        for start in range(0, X.shape[0], step):
            rows = slice(start, start + step)
            K = self._kernel(X[rows], self.support_vectors_)
            out[rows] = K @ self.dual_coef_.T + self.intercept_
        return check_finite(out, kernel.kernel)     # finite values may sum to inf

    def decision_function(self, X):
        """Score of each sample: f(x) for binary problems, one column per
        class (its one-vs-rest learner) otherwise.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            The scores (kernel expansion plus intercept).
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        scores = self._raw_scores(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class labels: ``classes_[1]`` where the binary score is > 0 (else
        ``classes_[0]``); the arg-max class for several classes.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted class labels.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # ------------------------------------------------------------------
    # persistence (pickle, copy, skops.io)
    # ------------------------------------------------------------------
    def __getstate__(self):
        """The estimator's state in plain containers: the stream driver,
        the kernel and the online record as dicts, each learner as its
        ``get_state()`` (arrays, numbers, its random generator) and the
        name of its class (a string, compared on loading, never imported).
        So a file of ``skops.io`` names no type of skbudget's but the
        estimator's own class, and a loaded model continues its stream."""
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
        for name, cls in _PLAIN_ATTRIBUTES.items():
            if isinstance(state.get(name), dict):
                state[name] = _rebuilt(cls, state[name])
        super().__setstate__(state)
        plain_driver = dict(plain_driver)
        kernel = plain_driver.get("kernel")
        plain_driver["kernel"] = (self._kernel_function if kernel is None
                                  else _rebuilt(KernelFunction, kernel))
        plain_driver["learners"] = self._rebuilt_learners(plain_driver["learners"])
        self._driver = _rebuilt(StreamDriver, plain_driver)
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


class ExampleWeightsMixin:
    """``sample_weight`` in ``fit`` / ``partial_fit`` and the ``class_weight``
    parameter, for the estimators whose update rule minimizes a loss the
    weight can scale (BSGD's step ``eta_t w``, PA-I's cap ``C w``).  The
    perceptron-style rules take neither (their fit has no
    ``sample_weight``).  Put it before :class:`BaseOnlineKernelClassifier`
    among the bases; the estimator adds ``class_weight`` to its
    ``__init__`` and ``CLASS_WEIGHT_CONSTRAINT`` to its constraints."""

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        return self._atomic_fit(X, y, sample_weight)

    fit.__doc__ = fit_doc(weighted=True)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        return self._atomic_partial_fit(X, y, classes, sample_weight)

    partial_fit.__doc__ = partial_fit_doc(weighted=True)


# the constraint of the class_weight parameter (as SGDClassifier's)
CLASS_WEIGHT_CONSTRAINT = [StrOptions({"balanced"}), dict, None]
