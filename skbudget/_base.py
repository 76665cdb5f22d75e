"""The estimator layer shared by every online classifier: its two bases.

:class:`BaseOnlineClassifier` does everything that is not a model or an
update rule: input validation, labels and the multi-class mode, epochs and
``partial_fit`` calls, atomic calls, the online record, prediction from the
family's scores.  A family that is no kernel expansion (FOGD: a linear model
on random Fourier features; next AMM, LLSVM) derives from it directly and
provides its learner, its driver (``StreamDriver.for_features``), its
fitted attributes and its scores.  :class:`BaseKernelExpansionClassifier`,
on top of it, is every kernel expansion's: the kernel catalogue, the
support set and its store, ``support_vectors_`` and ``dual_coef_``.  Both
live here (one module: the kernel base is the online base's hooks filled
in, ~200 lines).  Around them: the parameter machinery
(``skbudget._params``), persistence (``skbudget._persistence``), example
weights for the estimators that take them (``skbudget._weights``), kernel
values (``skbudget._kernels``, named kernels in
``skbudget._kernel_catalogue``) and the stream driver (``skbudget._stream``).
An algorithm adds its parameters and ``_make_learner``, which returns the
compiled policy (for a kernel expansion a subclass of
``skbudget._engine.OnlineLearner``), and overrides the hooks the class
docstrings list where its rule needs them.
"""
import numbers
import warnings
from abc import abstractmethod

import numpy as np
import scipy.sparse as sp
from numpy.random import MT19937
from numpy.random.bit_generator import ISeedSequence
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import DataConversionWarning
from sklearn.utils import assert_all_finite, check_random_state
from sklearn.utils._param_validation import StrOptions, validate_parameter_constraints
from sklearn.utils.multiclass import (
    _check_partial_fit_first_call,
    check_classification_targets,
)
from sklearn.utils.validation import (
    _check_n_features,
    check_consistent_length,
    check_is_fitted,
    validate_data,
)

from skbudget._atomic import RollbackOnError
from skbudget._blas import single_threaded_blas
from skbudget._docstrings import fit_doc, partial_fit_doc, samples_method_doc
from skbudget._elementwise import integral_classes
from skbudget._kernel_catalogue import KERNEL_NAMES, named_kernel
from skbudget._kernels import KernelFunction, check_finite, compute_gamma
from skbudget._params import Integer, ModelParamsMixin, RealNumber, check_budget
from skbudget._persistence import PersistentModelMixin
from skbudget._predict_fast import kernel_expansion
from skbudget._record import OnlineRecord
from skbudget._stream import ProgressLog, StreamDriver, empty_rows, verbose_logger

__all__ = ["BaseKernelExpansionClassifier", "BaseOnlineClassifier", "KERNEL_CONSTRAINTS",
           "KernelParamsMixin", "LinearFeaturesMixin", "LinearModelMixin",
           "keep_resolved_gamma"]

# fused prediction works on a dense copy of the support vectors (and, for CSR
# input, of their transpose): at most this many values, else kernel blocks
_FUSED_MAX_VALUES = 2 ** 24
# 'scale' resolved from fewer rows than this, by a call that a stream may
# continue (partial_fit, warm-start fit), warns
_SCALE_MIN_ROWS = 100
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


# the types of X that _checked_X validates itself (others: validate_data)
_PLAIN_X_TYPES = (np.ndarray, sp.csr_matrix, sp.csr_array)


def _checked_X(estimator, X, reset, ensure_all_finite=True, dtype=None):
    """``validate_data(estimator, X, accept_sparse="csr", dtype=dtype,
    reset=reset, ensure_all_finite=ensure_all_finite)``, ``dtype``
    ``estimator._input_dtype`` unless given.

    A plain input of that dtype (of one of them, for a list: float64 or
    float32; a 2-D NumPy array, or a CSR matrix or array, with at least
    one row and one column, to an estimator fitted without feature names)
    is all of ``check_array``'s checks already but its
    finiteness: that is checked (with scikit-learn's function and error)
    and ``n_features_in_`` set or compared (scikit-learn's
    ``_check_n_features``), and ``X`` is returned as it is, as
    ``validate_data`` would.  Its generic path (looking for data frames and
    their feature names, the estimator's tags) costs ~60 us a call; this
    ~3 us (scikit-learn's finiteness check, ~8 us a call, runs only when
    the values' sum is not finite: a value that is not, or finite values
    whose sum overflows, which it then passes).  Any other ``X`` goes
    through ``validate_data``."""
    if dtype is None:
        dtype = estimator._input_dtype
    if (type(X) in _PLAIN_X_TYPES and X.dtype in _plain_dtypes(dtype) and X.ndim == 2
            and X.shape[0] >= 1 and X.shape[1] >= 1
            and not hasattr(estimator, "feature_names_in_")):
        if ensure_all_finite:
            with np.errstate(over="ignore", invalid="ignore"):
                total = (X.data if sp.issparse(X) else X).sum()
            if not np.isfinite(total):
                assert_all_finite(X, input_name="X", estimator_name=type(estimator).__name__)
        _check_n_features(estimator, X, reset=reset)
        return X
    return validate_data(estimator, X, accept_sparse="csr", dtype=dtype, reset=reset,
                         ensure_all_finite=ensure_all_finite)


def _plain_dtypes(dtype):
    """The float dtypes that ``validate_data(dtype=dtype)`` keeps as they
    are (``dtype``: a type, or a list of them)."""
    dtypes = dtype if isinstance(dtype, (list, tuple)) else [dtype]
    return [np.dtype(d) for d in dtypes if np.dtype(d) in (np.float64, np.float32)]


# the parameter sets (class, names, types and values) that passed
# validation, when each value is a str, int, float, bool or None: the check
# depends on nothing else, so the same set is not checked again (at most
# this many kept)
_VALID_PARAMS_MAX = 256
_VALID_PARAMS = {}
_SIMPLE_PARAM_TYPES = frozenset({str, int, float, bool, type(None)})


def _params_key(estimator, params):
    """The key of ``params`` in ``_VALID_PARAMS``, or None when a value is
    not of a simple immutable type (a dict, a callable, a RandomState)."""
    if not all(type(value) in _SIMPLE_PARAM_TYPES for value in params.values()):
        return None
    cls = type(estimator)
    return (cls, id(cls._parameter_constraints),
            tuple((name, type(value), value) for name, value in params.items()))


class _NoEntropy(ISeedSequence):
    """The seed sequence of a Mersenne Twister about to be seeded the legacy
    way (:func:`_seeded_random_state`): it gathers no entropy and gives a
    zero key (``MT19937`` reads it word by word; a list costs a fifth of
    an array there), which the seeding replaces."""

    def generate_state(self, n_words, dtype=np.uint32):
        return [0] * n_words


def _seeded_random_state(seed):
    """``np.random.RandomState(seed)`` for an int ``seed``, the same
    generator (its state and every draw), in ~6 us instead of ~90:
    ``RandomState(seed)`` first seeds a new ``MT19937`` from the operating
    system's entropy through a ``SeedSequence`` (generating and copying a
    624-word key), then seeds it again from ``seed``.  Here the first
    seeding draws nothing; the second is ``RandomState.seed``'s.  (Checked
    against ``RandomState`` once, at import: where it differs, e.g. in
    another NumPy, ``RandomState(seed)`` itself.)"""
    if _FAST_SEEDING:
        random_state = np.random.RandomState(MT19937(_NoEntropy()))
        random_state.seed(seed)
        return random_state
    return np.random.RandomState(seed)


def _fast_seeding_works():
    try:
        for seed in (0, 12345, 2 ** 32 - 1):
            fast = np.random.RandomState(MT19937(_NoEntropy()))
            fast.seed(seed)
            a, b = fast.get_state(), np.random.RandomState(seed).get_state()
            if not (a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:]):
                return False
        return True
    except Exception:
        return False


_FAST_SEEDING = _fast_seeding_works()


def _random_state(random_state):
    """``sklearn.utils.check_random_state(random_state)``, an int seeded by
    :func:`_seeded_random_state`."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return _seeded_random_state(random_state)
    return check_random_state(random_state)


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


def _check_two_classes(classes):
    """``classes``, after checking that there are at least two (a model's
    classes, and the classes of ``skbudget.parallel``'s workers)."""
    if len(classes) < 2:
        raise ValueError(
            f"The number of classes has to be greater than one; got {len(classes)} class"
        )
    return classes


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


def keep_resolved_gamma(estimator, gamma, n_rows, streaming, from_scale=True):
    """Keep a new model's resolved kernel width ``gamma`` (``_gamma`` and
    ``gamma_``), warning when ``gamma='scale'`` was resolved from fewer
    than ``_SCALE_MIN_ROWS`` rows by a call a stream continues
    (``streaming``) and the kernel reads it (``from_scale``)."""
    estimator._gamma = gamma
    if (from_scale and streaming and estimator.gamma == "scale"
            and n_rows < _SCALE_MIN_ROWS):
        warnings.warn(
            f"gamma='scale' was resolved from the {n_rows} rows of the first call "
            f"(gamma_={gamma:.4g}) and stays fixed for the whole stream; with "
            f"fewer than {_SCALE_MIN_ROWS} rows it may be far off. For streaming, pass "
            f"a numeric gamma.", UserWarning,
        )
    estimator.gamma_ = gamma


class BaseOnlineClassifier(ModelParamsMixin, PersistentModelMixin, ClassifierMixin,
                           BaseEstimator):
    """Base class of the online classifiers (not for direct use).

    It runs the stream: parameter and input validation, labels and the
    multi-class mode, ``fit`` epochs and ``partial_fit`` calls, each atomic
    (rolled back on any exception), the stream driver
    (``skbudget._stream.StreamDriver``), the online record
    (``mistake_curve_``, ``n_mistakes_``, the progress lines of
    ``verbose``), persistence and ``decision_function`` / ``predict`` over
    the family's scores.  It knows no kernel and stores no example: a
    kernel expansion derives from :class:`BaseKernelExpansionClassifier`,
    a model on fixed features (FOGD's random Fourier features) from this
    class directly.

    Multi-class problems are learned one-vs-rest by default: one binary
    learner per class, all fed the same examples in the same order.
    Prediction takes the class whose learner gives the largest score.  With
    two classes there is a single learner.  A family may learn every class
    with one shared learner instead (:meth:`_shares_support`).

    A family subclasses this class, adds its parameters
    (``_parameter_constraints``, ``__init__``) and provides
    :meth:`_make_learner`, :meth:`_make_driver`,
    :meth:`_update_model_attributes` and :meth:`_raw_scores`; the other
    hooks have defaults, overridden where the rule needs them:

    - :meth:`_shares_support`: the multi-class mode (default: one-vs-rest);
    - :meth:`_reads_every_value`, :meth:`_data_constants`,
      :meth:`_start_model`: constants a new model takes from its first data
      (e.g. a resolved ``gamma``);
    - :meth:`_init_constants`: data-dependent constants of the model;
    - :meth:`_draws_random_numbers`: whether the rule draws (one generator
      per one-vs-rest learner then);
    - :meth:`_example_weights`: the examples' weights (``ExampleWeightsMixin``);
    - :meth:`_pass_cache`, :meth:`_call_n_jobs`: what a pass may reuse, the
      threads of a call;
    - ``_call_params``: the parameters that may change between calls;
    - ``_feature_map_class``: the class of the driver's feature map, for a
      model on fixed features (a file saves the map as a dict).

    Estimators also extend ``_validate_params``, ``_validate_fit_input``,
    ``_fit`` and ``_update_fitted_attributes`` (calling the base's) for
    checks, warnings and extra fitted attributes of their own.
    """

    _parameter_constraints: dict = {
        "max_iter": [Integer(1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
    }
    _call_params = ("max_iter", "shuffle", "verbose", "warm_start")

    # examples per piece of the stream (None: chosen by the driver);
    # results never depend on it
    _chunk_size = None
    # rows per block when predicting
    _predict_chunk_size = 2048
    # validate_data's dtype for X (the kernel expansions and
    # FourierOGDClassifier: [np.float64, np.float32], float32 input kept
    # float32)
    _input_dtype = np.float64
    # the dtype of the rows the model stores (support vectors, landmarks)
    # and computes its kernel values or features from: 'float32' when the
    # call that started it had float32 X and the estimator keeps float32
    # (``_input_dtype``); every later call's X is converted to it
    # (:meth:`_as_storage_format`).  (A model saved before it existed: float64)
    _storage_dtype = "float64"
    # with verbose, seconds between progress lines within a pass
    _progress_interval = 1.0
    # test instrumentation: keep every round's mistake flag (memory grows
    # with the stream); the oracle tests read them with _mistake_flags()
    _keep_mistake_flags = False
    # the class of the driver's feature map (a model on fixed features),
    # rebuilt from its plain state when a model is loaded
    _feature_map_class = None
    # attributes saved as plain dicts of their instance state (persistence)
    _plain_attribute_classes = {"_record": OnlineRecord}

    def _validate_params(self):
        """scikit-learn's parameter validation (``_fit_context`` runs it on
        every ``fit`` and a first ``partial_fit``), skipped for a set of
        parameter values of this class that passed it before when every
        value is a str, int, float, bool or None (``_VALID_PARAMS``: the
        check depends on nothing else; ~40 us a call).  Estimators extend
        it (calling this) for checks of their own, which always run."""
        params = self.get_params(deep=False)
        key = _params_key(self, params)
        if key is not None and key in _VALID_PARAMS:
            return
        validate_parameter_constraints(self._parameter_constraints, params,
                                       caller_name=type(self).__name__)
        check_budget(self, params.get("budget"))
        if key is not None:
            if len(_VALID_PARAMS) >= _VALID_PARAMS_MAX:
                _VALID_PARAMS.clear()
            _VALID_PARAMS[key] = True

    # ------------------------------------------------------------------
    # what a family provides
    # ------------------------------------------------------------------
    @abstractmethod
    def _make_learner(self, rng):
        """A new learner drawing from ``rng``: a binary one, or with
        ``_shared_support`` one for every class.  A learner sized by the
        data reads it from the model: ``classes_`` and ``n_features_in_``
        are set whenever this is called (by a new model's :meth:`_reset`,
        after ``validate_data`` and before its learners are made, and by a
        loaded model's rebuild, after its fitted attributes are restored;
        AMM's learner holds ``len(classes_)`` lists of weights of
        ``n_features_in_`` values)."""

    @abstractmethod
    def _make_driver(self, learners, X):
        """The :class:`~skbudget._stream.StreamDriver` that feeds the stream
        to ``learners`` (the model starts on ``X``)."""

    @abstractmethod
    def _update_model_attributes(self):
        """Set the fitted attributes of the model the learners hold (what
        :meth:`_raw_scores` reads); a coefficient that is not finite is a
        ValueError (raised inside the call's rollback)."""

    @abstractmethod
    def _raw_scores(self, X):
        """(n_samples, n_learners) scores of validated rows ``X``."""

    def _shares_support(self, n_classes):
        """The multi-class mode: whether a model of ``n_classes`` classes
        learns them all with one shared learner (one learner that takes
        class indices, ``skbudget._shared_support``) instead of one binary
        learner per class.  Asked once, when a model starts; the answer is
        kept as ``_shared_support``."""
        return False

    def _learns_open_label_sets(self):
        """Whether a ``partial_fit`` stream may start without ``classes=``
        and meet classes later (each gets a zero column of the shared
        learner, its ``add_class``): the estimator's shared mode, as its
        parameters select it.  One-vs-rest learners need every class up
        front, as scikit-learn's ``partial_fit`` does."""
        return self._shares_support(3)

    def _reads_every_value(self):
        """Whether :meth:`_data_constants` of a new model reads every value
        of ``X`` (e.g. ``gamma='scale'``, its variance): that pass is then
        also the check that they are finite."""
        return False

    def _data_constants(self, X, reads_every_value):
        """Constants a new model takes from the data of the call that
        starts it, computed while that call validates ``X`` (so that their
        errors come first), handed to :meth:`_start_model`; with
        ``reads_every_value`` they are also ``X``'s finiteness check."""
        return None

    def _start_model(self, X, constants, streaming):
        """Set what a new model keeps of its :meth:`_data_constants`
        (``streaming``: the call may be continued), before its learners
        are made."""

    def _init_constants(self, X):
        """Data-dependent constants, computed from the first training data."""

    def _draws_random_numbers(self):
        """Whether the update rule draws from the random generator (then the
        one-vs-rest learners draw from generators of their own)."""
        return False

    def _example_weights(self, X, y, sample_weight):
        """The weights of the call's examples as ``StreamDriver.run`` takes
        them: None (every weight 1) unless the estimator takes weights
        (:class:`~skbudget._weights.ExampleWeightsMixin`)."""
        return None

    def _pass_cache(self, X):
        """What every epoch of a ``fit`` on ``X`` may reuse, handed to
        ``StreamDriver.run`` (its ``gram``): None here."""
        return None

    def _call_n_jobs(self):
        """The threads of the next call's driver (``StreamDriver.n_jobs``):
        None (one) here."""
        return None

    def _fit_passes(self):
        """The passes over the data of one ``fit`` call: ``max_iter`` epochs
        here; 1 for a family whose every call solves a problem over its
        rows (LLSVM: its ``max_iter`` bounds the solver's sweeps)."""
        return self.max_iter

    # ------------------------------------------------------------------
    # state
    # ------------------------------------------------------------------
    def _reset(self, X, classes, constants, streaming, open_classes=False):
        """Start a new model for ``classes`` with the :meth:`_data_constants`
        ``constants`` (fit without warm start, or the first partial_fit).
        ``streaming``: the call may be continued (partial_fit, warm-start
        fit).  ``open_classes``: a stream without ``classes=`` in the shared
        mode (:meth:`_learns_open_label_sets`), whose classes so far
        (one or more) are ``classes``: its one shared learner takes the
        classes it meets later (:meth:`_add_classes`), so it learns by the
        shared rule even while it has seen two."""
        self.classes_ = classes if open_classes else _check_two_classes(classes)
        self._open_classes = open_classes
        self._record_params_at_start()
        self._shared_support = open_classes or self._shares_support(len(classes))
        self._rng = _random_state(self.random_state)
        self._start_model(X, constants, streaming)
        self._sparse_storage = sp.issparse(X)
        self._storage_dtype = "float32" if X.dtype == np.float32 else "float64"
        self._init_constants(X)
        n_learners = 1 if len(classes) == 2 or self._shared_support else len(classes)
        if n_learners == 1:
            rngs = [self._rng]
        else:  # one generator per learner: draws never depend on chunking
            seeds = self._rng.randint(np.iinfo(np.int32).max, size=n_learners)
            rngs = [_seeded_random_state(seed) for seed in seeds]
        self._driver = self._make_driver([self._make_learner(rng) for rng in rngs], X)
        self._record = OnlineRecord(keep_flags=self._keep_mistake_flags)
        self._n_examples_seen = 0
        self.n_iter_ = 0

    def _as_storage_format(self, X):
        """A continuing call's X in the format (dense or CSR) and dtype of
        the call that started the model (the format it stores rows in, or
        computes features from: the same bits whatever the later calls'
        format).  A dtype that differs (float64 rows to a model started on
        float32 ones, or the reverse) is converted, with a
        ``DataConversionWarning`` that says so."""
        if X.dtype != self._storage_dtype:
            warnings.warn(
                f"{type(self).__name__}: X has dtype {X.dtype}, but the model was started on "
                f"{self._storage_dtype} input, which it keeps: X is converted to "
                f"{self._storage_dtype}. Pass {self._storage_dtype} rows to avoid the copy, "
                f"or start a new model (fit) to change the dtype.",
                DataConversionWarning, stacklevel=4)
            X = X.astype(self._storage_dtype)
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

    def _add_classes(self, y, classes=None):
        """The labels of ``y`` (and ``classes``, when a later call gives
        them) that a model of an open label set has not seen: each takes
        its place in the sorted ``classes_``, and the shared learner a zero
        column there (``add_class``), so the model's predictions among the
        classes it knew do not change.  A model whose classes were fixed
        up front (``fit``, or ``partial_fit(classes=...)``) adds nothing:
        its labels are checked (:meth:`_check_labels`)."""
        if not self._open_classes:
            if classes is not None:
                _check_partial_fit_first_call(self, classes)
            self._check_labels(y)
            return
        labels = _checked_classes(y)
        if classes is not None:
            labels = np.union1d(labels, np.unique(classes))
        for label in labels[~np.isin(labels, self.classes_)]:
            position = int(np.searchsorted(self.classes_, label))
            self.classes_ = np.insert(self.classes_, position, label)
            for learner in self._learners:
                learner.add_class(position)

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
            verbose_logger().info("-- Epoch %d: examples seen %d, mistakes %d%s", epoch,
                                  self._record.n_rounds, self._record.n_mistakes,
                                  self._driver.size_note())

    def _mistake_flags(self):
        """Every training round's mistake flag (only with the test switch
        ``_keep_mistake_flags`` set before the model started)."""
        return self._record.flags()

    def _update_fitted_attributes(self):
        """The fitted attributes from the learners (:meth:`_update_model_attributes`)
        and the online record."""
        self._update_model_attributes()
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

    # ------------------------------------------------------------------
    # public API
    # ------------------------------------------------------------------
    def _validate_fit_input(self, X, y, reset):
        """``X``, ``y``, and (``reset``) the sorted classes of ``y`` and the
        new model's :meth:`_data_constants`; else None, None (labels are
        then checked against ``classes_``, :meth:`_check_labels`).

        When the constants read every value of ``X``
        (:meth:`_reads_every_value`), that pass is also the check that they
        are finite (one pass over the data instead of two)."""
        reads_every_value = reset and self._reads_every_value()
        if _plain_labels(y):
            X = _checked_X(self, X, reset, ensure_all_finite=not reads_every_value)
            y = _checked_plain_labels(X, y, type(self).__name__)
        else:
            X, y = validate_data(self, X, y, accept_sparse="csr", dtype=self._input_dtype,
                                 reset=reset, ensure_all_finite=not reads_every_value)
        if not reset:
            return self._as_storage_format(X), y, None, None
        return X, y, _checked_classes(y), self._data_constants(X, reads_every_value)

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
        X, y, classes, constants = self._validate_fit_input(X, y, reset=not continuing)
        if continuing:
            self._add_classes(y)
        else:
            self._reset(X, classes, constants, streaming=self.warm_start)
        weights = self._example_weights(X, y, sample_weight)
        self._driver.n_jobs = self._call_n_jobs()
        first_id = self._n_examples_seen
        self._n_examples_seen += X.shape[0]
        passes = self._fit_passes()
        gram = self._pass_cache(X) if passes > 1 else None
        for epoch in range(1, passes + 1):
            order = self._rng.permutation(X.shape[0]) if self.shuffle else None
            self._record = self._driver.run(X, y, self._signed_targets, order, first_id,
                                            self._record, gram, self._progress_log(), weights)
            self._log_epoch(epoch)
        self.n_iter_ = passes
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
        if not first_call:
            self._check_unchanged_params()
        X, y, seen, constants = self._validate_fit_input(X, y, reset=first_call)
        if first_call and classes is None:
            if not self._learns_open_label_sets():
                raise ValueError(
                    "classes must be passed on the first call to partial_fit (one-vs-rest "
                    "learners need every class up front; the shared multi-class mode, "
                    "multi_class='crammer_singer' where the estimator has it, learns the "
                    "classes as they come).")
            self._reset(X, seen, constants, streaming=True, open_classes=True)
        elif first_call:
            classes = np.unique(classes)
            if len(classes) < 2:
                raise ValueError(
                    f"classes must hold at least two classes; got {classes.tolist()}"
                )
            _check_partial_fit_first_call(self, classes)
            self._check_labels(y)
            self._reset(X, self.classes_, constants, streaming=True)
        else:
            self._add_classes(y, classes)
        weights = self._example_weights(X, y, sample_weight)
        self._driver.n_jobs = self._call_n_jobs()
        first_id = self._n_examples_seen
        self._n_examples_seen += X.shape[0]
        self._record = self._driver.run(X, y, self._signed_targets, None, first_id,
                                        self._record, progress=self._progress_log(),
                                        weights=weights)
        self._update_fitted_attributes()
        self._log_epoch(1)
        return self

    def _check_learnable_rows(self, X):
        """Raise the error ``partial_fit(X, y)`` raises for a row of ``X``
        that the started model refuses whatever it has learned: a changed
        parameter, a value that is not finite (scikit-learn's check), a
        wrong number of features, a row its kernel cannot take (the
        driver's ``check_rows``: e.g. an 'rbf' row whose squared norm
        overflows).  Those are the checks ``partial_fit`` itself runs; what
        it refuses besides depends on the model's state (an overflow of
        the scores, of a kernel value between the row and a support
        vector).  The river adapter checks each example with it before
        buffering it (so it is cheap: ~3 us a row).  ``X``: a dense
        float64 array (checked in the model's dtype, as ``partial_fit``
        would convert it); the model: started (its first ``partial_fit``
        done)."""
        self._check_unchanged_params()
        X = _checked_X(self, X, reset=False)
        self._driver.check_rows(X.astype(self._storage_dtype, copy=False))

    def _prediction_dtype(self):
        """The dtype ``decision_function`` validates ``X`` to (``validate_data``'s
        ``dtype``): ``_input_dtype`` here; a model that stores rows, the
        precision it stores them in (a kernel expansion's support vectors)."""
        return self._input_dtype

    def decision_function(self, X):
        check_is_fitted(self)
        X = _checked_X(self, X, reset=False, dtype=self._prediction_dtype())
        scores = self._raw_scores(X)
        if self._shared_support and scores.shape[1] == 2:
            # one learner's two class scores (a shared learner of two classes)
            return scores[:, 1] - scores[:, 0]
        return scores[:, 0] if scores.shape[1] == 1 else scores

    decision_function.__doc__ = samples_method_doc(
        "Score of each sample: f(x) for binary problems, one column per\n"
        "        class (its one-vs-rest learner) otherwise.\n\n"
        "        A kernel expansion whose ``support_vectors_`` are float32 (a model\n"
        "        trained on float32 ``X``) converts ``X`` to float32 and computes\n"
        "        its inner products with them in float32; the scores are float64.",
        "scores : ndarray of shape (n_samples,) or (n_samples, n_classes)\n"
        "            The scores (the model's, plus its intercept).")

    def predict(self, X):
        scores = self.decision_function(X)
        if len(self.classes_) == 1:     # an open label set's first class so far
            return np.repeat(self.classes_, len(scores))
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    predict.__doc__ = samples_method_doc(
        "Class labels: ``classes_[1]`` where the binary score is > 0 (else\n"
        "        ``classes_[0]``); the arg-max class for several classes.",
        "y_pred : ndarray of shape (n_samples,)\n            Predicted class labels.")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class LinearModelMixin:
    """The fitted attributes of a linear model on features (FOGD, AMM, LLSVM):
    ``coef_`` and ``intercept_``, refused unless finite."""

    def _set_linear_model(self, coef, intercept):
        """Set ``coef_`` and ``intercept_``; a value that is not finite is a
        ValueError (raised inside the call's rollback)."""
        if not (np.isfinite(coef).all() and np.isfinite(intercept).all()):
            raise ValueError(
                f"{type(self).__name__}: the model's coefficients are not finite numbers; "
                f"the model is left as it was."
            )
        self.coef_ = coef
        self.intercept_ = intercept


class LinearFeaturesMixin:
    """The scores of a linear model on fixed features (FOGD's random
    Fourier features, LLSVM's landmark map): ``coef_`` and a zero
    ``intercept_`` on the features the stream driver's map computes, a
    block of ``_predict_chunk_size`` rows at a time.  Put it before
    :class:`BaseOnlineClassifier`."""

    def _raw_scores(self, X):
        out = np.empty((X.shape[0], self.coef_.shape[0]))
        step = self._predict_chunk_size
        features = self._driver.features
        with single_threaded_blas():
            for start in range(0, X.shape[0], step):
                rows = slice(start, start + step)
                out[rows] = features.transform(X[rows]) @ self.coef_.T
        return out


# the kernel catalogue's parameters, as in SVC
KERNEL_CONSTRAINTS = {
    "kernel": [StrOptions(set(KERNEL_NAMES)), callable],
    "gamma": [StrOptions({"scale", "auto"}), RealNumber(0.0, None, closed="left")],
    "degree": [Integer(0, None, closed="left")],
    "coef0": [RealNumber(None, None, closed="neither")],
    "kernel_params": [dict, None],
}


class KernelParamsMixin:
    """The kernel catalogue's parameters (``kernel``, ``gamma``, ``degree``,
    ``coef0``, ``kernel_params``, :data:`KERNEL_CONSTRAINTS`) of an online
    classifier: ``gamma`` resolved from the data that starts the model
    (``gamma_``), the model's :class:`~skbudget._kernels.KernelFunction`
    (``_kernel_function``, saved and checked on loading).  A base of every
    kernel expansion and of LLSVM's landmark map (put it before
    :class:`BaseOnlineClassifier`)."""

    _plain_attribute_classes = {"_kernel_function": KernelFunction,
                                **BaseOnlineClassifier._plain_attribute_classes}

    def _kernel(self, X, Y):
        """k(X, Y) with the model's kernel, as a C-contiguous float64 block."""
        return self._kernel_function(X, Y)

    def _kernel_diagonal(self, X):
        """k(x_i, x_i) for every row."""
        return self._kernel_function.diagonal(X)

    def _reads_every_value(self):
        """A new model's ``gamma='scale'`` (a named kernel) reads every
        value of ``X`` for its variance."""
        return not callable(self.kernel) and isinstance(self.gamma, str) and self.gamma == "scale"

    def _data_constants(self, X, reads_every_value):
        """The numeric gamma (:func:`~skbudget._kernels.compute_gamma`;
        None for a callable kernel)."""
        if callable(self.kernel):
            return None
        return compute_gamma(self.gamma, X, type(self).__name__ if reads_every_value else None)

    def _start_model(self, X, gamma, streaming):
        """The resolved ``gamma`` (warned about when 'scale' came from few
        rows of a stream and the kernel reads it) and the kernel function."""
        named = named_kernel(self.kernel)
        keep_resolved_gamma(self, gamma, X.shape[0], streaming,
                   from_scale=(named is not None and "gamma" in named.params
                               and "gamma" not in (self.kernel_params or {})))
        self._kernel_function = KernelFunction(self.kernel, self._gamma, self.degree,
                                               self.coef0, self.kernel_params
                                               ).resolve_callable(X)

    def _check_saved_constants(self):
        self._check_kernel_function()


class MultiClassModeMixin:
    """``multi_class='ovr'|'crammer_singer'``: the parameter of a family
    that can learn three or more classes on one shared learner
    (doc/algorithms.md#shared-multi-class), declared by the family's
    ``SharedMulticlass("multi_class", shared="crammer_singer",
    one_vs_rest="ovr")``.  Its constraint is ``MULTI_CLASS_CONSTRAINT``
    (merged into the family's ``_parameter_constraints``), its docstring
    entry ``skbudget._docstrings.multi_class_doc``.  Binary problems are
    learned by the binary rule in either mode."""

    def _shares_support(self, n_classes):
        """``'crammer_singer'`` on three or more classes: one shared learner."""
        return self.multi_class == "crammer_singer" and n_classes > 2


class BaseKernelExpansionClassifier(KernelParamsMixin, BaseOnlineClassifier):
    """Base class of the online kernel classifiers (not for direct use).

    The model of each learner is a kernel expansion ``f(x) = sum_i
    alpha_i k(x_i, x) + b`` over the learner's support set: the kernel
    catalogue (``kernel``, ``gamma``, ``degree``, ``coef0``,
    ``kernel_params`` as in :class:`sklearn.svm.SVC`), the stored rows
    (the driver's store or pools), the fitted ``support_vectors_``,
    ``dual_coef_``, ``n_support_``, ``support_curve_``, the threads of
    ``n_jobs`` and a Gram cache for multi-epoch fits come from here; the
    rest of the estimator from :class:`BaseOnlineClassifier`.  One-vs-rest,
    each learner has its own support set (so a budget ``B`` means up to
    ``n_classes * B`` stored vectors); a family may share one support set
    between the classes (:meth:`_shares_support`).

    An algorithm subclasses this class, adds its parameters
    (``_parameter_constraints``, ``__init__``) and provides
    :meth:`_make_learner`, which returns the compiled policy (a subclass
    of ``skbudget._engine.OnlineLearner``); besides the hooks of
    :class:`BaseOnlineClassifier`:

    - :meth:`_needs_distances`: whether the policy reads squared distances;
    - :meth:`_learner_expansion`: a learner's coefficients and intercept.

    Estimators also extend ``_raw_scores`` (calling the base's) for
    read-outs of their own.
    """

    _parameter_constraints: dict = {
        **KERNEL_CONSTRAINTS,
        **BaseOnlineClassifier._parameter_constraints,
        "n_jobs": [numbers.Integral, None],
    }
    _call_params = tuple(sorted(BaseOnlineClassifier._call_params + ("n_jobs",)))
    # the threads of a family whose ``__init__`` takes no ``n_jobs`` (MIRA:
    # one learner for every class, nothing to run side by side): one
    n_jobs = None

    # a multi-epoch fit on at most this many examples computes k(X, X) once
    _gram_cache_limit = 4096
    # float32 X is kept: the stored rows (support_vectors_) are float32,
    # their inner products float32 (sgemm), the rest float64
    _input_dtype = [np.float64, np.float32]

    def _learner_expansion(self, learner):
        """(coefficients oldest first, intercept) that predict with; a
        shared-support learner (``skbudget._shared_support``) gives one row
        of coefficients per class (``dual_coef_`` ``(k, |S|)``) and no
        intercept."""
        if self._shared_support:
            return learner.coefficient_matrix().T, np.zeros(len(self.classes_))
        return learner.coefficients(), learner.intercept

    def _needs_distances(self):
        """Whether the policy needs squared input-space distances too."""
        return False

    def _make_driver(self, learners, X):
        """The :class:`~skbudget._stream.StreamDriver` of a kernel
        expansion: its pools start empty, in ``X``'s format."""
        return StreamDriver(learners, empty_rows(X), self._kernel_function,
                            self._needs_distances(), self._chunk_size, self.n_jobs,
                            self._shared_support)

    def _pass_cache(self, X):
        """``k(X, X)`` for a multi-epoch fit on at most
        ``_gram_cache_limit`` examples (block mode looks kernel values up
        in it), else None."""
        if X.shape[0] > self._gram_cache_limit:
            return None
        return np.ascontiguousarray(self._kernel(X, X), dtype=np.float64)

    def _call_n_jobs(self):
        return self.n_jobs

    def _update_model_attributes(self):
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

    @property
    def support_curve_(self):
        """ndarray of shape (n_points, 2): the support size along the
        stream, rows ``(t, support vectors of every learner after round
        t)`` at the rounds of ``mistake_curve_`` (see the class
        docstring)."""
        check_is_fitted(self)
        return self._record.support_curve()

    def _predict_rows(self):
        """Rows per prediction block: at most ``_predict_chunk_size``, and
        blocks of about 128k kernel values (1 MB), which stay in cache
        (an 8 MB block is several times slower per value)."""
        n_sv = max(int(np.sum(self.n_support_)), 1)
        return int(np.clip(131072 // n_sv, 64, self._predict_chunk_size))

    def _prediction_dtype(self):
        """float32 for float32 support vectors (``X`` is then scored in
        float32: ``kernel_expansion``), else float64."""
        return np.float32 if self.support_vectors_.dtype == np.float32 else np.float64

    def _raw_scores(self, X):
        """(n_samples, rows of dual_coef_) scores of the kernel expansion:
        compiled and fused for the common kernels
        (``skbudget._predict_fast``), in blocks of ``k(X, support_vectors_)``
        otherwise."""
        kernel = self._kernel_function
        kind = kernel.compiled_kind
        if kind is not None and self.support_vectors_.shape[0] * X.shape[1] <= _FUSED_MAX_VALUES:
            with single_threaded_blas():
                scores = kernel_expansion(X, self.support_vectors_, self.dual_coef_,
                                          self.intercept_, kind, kernel.gamma,
                                          kernel.degree, kernel.coef0)
            return check_finite(scores, kernel.kernel)   # as the blocks below are
        out = np.empty((X.shape[0], self.dual_coef_.shape[0]))
        step = self._predict_rows()
        for start in range(0, X.shape[0], step):
            rows = slice(start, start + step)
            K = self._kernel(X[rows], self.support_vectors_)
            out[rows] = K @ self.dual_coef_.T + self.intercept_
        return check_finite(out, kernel.kernel)     # finite values may sum to inf
