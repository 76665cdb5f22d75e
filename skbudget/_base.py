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
import numbers
import sys
from abc import abstractmethod

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import (
    _check_partial_fit_first_call,
    check_classification_targets,
)
from sklearn.utils.validation import check_is_fitted, validate_data

from skbudget._kernels import KERNELS, KernelFunction, compute_gamma
from skbudget._stream import StreamDriver

__all__ = ["BaseOnlineKernelClassifier"]


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
        "gamma": [StrOptions({"scale", "auto"}), Interval(numbers.Real, 0.0, None, closed="left")],
        "degree": [Interval(numbers.Integral, 0, None, closed="left")],
        "coef0": [Interval(numbers.Real, None, None, closed="neither")],
        "kernel_params": [dict, None],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
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

    # ------------------------------------------------------------------
    # what an algorithm provides
    # ------------------------------------------------------------------
    @abstractmethod
    def _make_learner(self, rng):
        """A new binary learner (an ``OnlineLearner`` subclass)."""

    def _init_constants(self, X):
        """Data-dependent constants, computed from the first training data."""

    def _learner_expansion(self, learner):
        """(coefficients oldest first, intercept) that predict with."""
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
    def _reset(self, X, classes):
        """Start a new model for ``classes`` (fit without warm start, or the
        first partial_fit)."""
        if len(classes) < 2:
            raise ValueError(
                f"The number of classes has to be greater than one; got {len(classes)} class"
            )
        self.classes_ = classes
        self._rng = check_random_state(self.random_state)
        self._gamma = None if callable(self.kernel) else compute_gamma(self.gamma, X)
        self._kernel_function = KernelFunction(self.kernel, self._gamma, self.degree,
                                               self.coef0, self.kernel_params)
        self._init_constants(X)
        n_learners = 1 if len(classes) == 2 else len(classes)
        if n_learners == 1:
            rngs = [self._rng]
        else:  # one generator per learner: draws never depend on chunking
            seeds = self._rng.randint(np.iinfo(np.int32).max, size=n_learners)
            rngs = [np.random.RandomState(seed) for seed in seeds]
        self._driver = StreamDriver([self._make_learner(rng) for rng in rngs], X[:0],
                                    self._kernel_function, self._needs_distances(),
                                    self._chunk_size, self.n_jobs)
        self._mistake_flags = np.zeros(0, dtype=np.uint8)
        self._n_examples_seen = 0
        self.n_iter_ = 0

    def _signed_targets(self, y):
        """One column per learner, +1 for its class and -1 for the others."""
        if len(self.classes_) == 2:
            return np.where(y == self.classes_[1], 1.0, -1.0)[:, None]
        return np.where(y[:, None] == self.classes_[None, :], 1.0, -1.0)

    def _check_labels(self, y):
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if unknown.size:
            raise ValueError(
                f"y contains labels {unknown.tolist()} that are not in classes_ "
                f"{self.classes_.tolist()}"
            )

    @property
    def _learners(self):
        """The binary learners (one per column of the signed targets)."""
        return self._driver.learners

    def _record(self, flags):
        self._mistake_flags = np.concatenate([self._mistake_flags, flags])

    def _log_epoch(self, epoch):
        if self.verbose:
            print(
                f"-- Epoch {epoch}: examples seen {self._mistake_flags.size}, "
                f"mistakes {self.n_mistakes_}, support vectors "
                f"{sum(learner.n_sv for learner in self._learners)}",
                file=sys.stdout,
            )

    def _update_fitted_attributes(self):
        vectors, blocks, intercepts, counts = [], [], [], []
        for k, learner in enumerate(self._learners):
            coef, intercept = self._learner_expansion(learner)
            vectors.append(self._driver.support_vectors(k))
            blocks.append(np.asarray(coef, dtype=np.float64))
            intercepts.append(intercept)
            counts.append(learner.n_sv)
        self.support_vectors_ = sp.vstack(vectors, format="csr") if sp.issparse(vectors[0]) else np.concatenate(vectors)
        self.n_support_ = np.asarray(counts, dtype=np.int32)
        self.dual_coef_ = np.zeros((len(blocks), int(self.n_support_.sum())))
        offsets = np.concatenate([[0], np.cumsum(self.n_support_)])
        for k, block in enumerate(blocks):
            self.dual_coef_[k, offsets[k]:offsets[k + 1]] = block
        self.intercept_ = np.asarray(intercepts, dtype=np.float64)
        self.n_mistakes_ = int(self._mistake_flags.sum())
        self.n_updates_ = int(sum(learner.n_updates for learner in self._learners))

    @property
    def cumulative_mistakes_(self):
        """ndarray of shape (n_rounds,): mistakes made up to and including
        each training round, over every ``fit`` epoch and ``partial_fit``
        call since the model was started (for learning-curve plots)."""
        check_is_fitted(self)
        return np.cumsum(self._mistake_flags, dtype=np.int64)

    # ------------------------------------------------------------------
    # public API
    # ------------------------------------------------------------------
    def _validate_fit_input(self, X, y, reset):
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, reset=reset)
        check_classification_targets(y)
        return X, y

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the model with ``max_iter`` passes over the training data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training vectors.
        y : array-like of shape (n_samples,)
            Target values (class labels).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        continuing = self.warm_start and hasattr(self, "classes_")
        X, y = self._validate_fit_input(X, y, reset=not continuing)
        classes = np.unique(y)
        if continuing:
            self._check_labels(y)
        else:
            self._reset(X, classes)
        self._driver.n_jobs = self.n_jobs
        Y = self._signed_targets(y)
        first_id = self._n_examples_seen
        self._n_examples_seen += X.shape[0]
        gram = None
        if self.max_iter > 1 and X.shape[0] <= self._gram_cache_limit:
            gram = self._kernel(X, X)
        for epoch in range(1, self.max_iter + 1):
            order = self._rng.permutation(X.shape[0]) if self.shuffle else np.arange(X.shape[0])
            self._record(self._driver.run(X, Y, order, first_id, gram))
            self.n_mistakes_ = int(self._mistake_flags.sum())
            self._log_epoch(epoch)
        self.n_iter_ = self.max_iter
        self._update_fitted_attributes()
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None):
        """Learn from one more piece of the stream, in the order given.

        A single call is one online pass (no shuffling); calls on
        consecutive chunks of a stream give exactly the model of one
        ``fit`` epoch over the whole stream with ``shuffle=False``.  If the
        call raises, the model is left as it was.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Examples of the stream, in stream order.
        y : array-like of shape (n_samples,)
            Their class labels.
        classes : array-like of shape (n_classes,), default=None
            All the classes; required on the first call, ignored after.

        Returns
        -------
        self : object
            The updated estimator.
        """
        saved = self.__dict__.copy()
        if hasattr(self, "_driver"):   # the driver's lists are updated in place
            driver = saved["_driver"] = copy.copy(self._driver)
            driver.pools, driver.pool_ids = list(driver.pools), list(driver.pool_ids)
            if callable(self.kernel):
                # a user kernel may raise mid-stream: keep a deep snapshot
                driver.learners, saved["_rng"] = copy.deepcopy((driver.learners, self._rng))
        try:
            return self._partial_fit(X, y, classes)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    def _partial_fit(self, X, y, classes):
        first_call = not hasattr(self, "classes_")
        X, y = self._validate_fit_input(X, y, reset=first_call)
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
            self._reset(X, self.classes_)
        self._driver.n_jobs = self.n_jobs
        Y = self._signed_targets(y)
        first_id = self._n_examples_seen
        self._n_examples_seen += X.shape[0]
        self._record(self._driver.run(X, Y, np.arange(X.shape[0]), first_id))
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
        """(n_samples, n_learners) scores of the kernel expansion."""
        out = np.empty((X.shape[0], len(self.n_support_)))
        step = self._predict_rows()
        for start in range(0, X.shape[0], step):
            rows = slice(start, start + step)
            K = self._kernel(X[rows], self.support_vectors_)
            out[rows] = K @ self.dual_coef_.T + self.intercept_
        return out

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
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
