"""The estimator layer shared by every online kernel classifier.

:class:`BaseOnlineKernelClassifier` does everything that is not an update
rule: parameter and input validation, labels and the one-vs-rest wrapper,
kernel evaluation in blocks, the epoch/chunk driver around the compiled
stream loop, the fitted attributes and prediction.  An algorithm adds its
parameters and one method, ``_make_learner``, which returns the compiled
policy (a subclass of ``skbudget._engine.OnlineLearner``).
"""

import copy
import math
import numbers
import sys
from abc import abstractmethod

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS, pairwise_kernels
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import (
    _check_partial_fit_first_call,
    check_classification_targets,
)
from sklearn.utils.validation import check_is_fitted, validate_data

from skbudget._engine import gather_block

_THREADPOOLS = []


def _single_threaded_blas():
    """Context: BLAS on one thread (the stream loop's blocks are too small
    for threads to pay off; their wake-up latency dominates, badly so on a
    busy machine).  The controller is built once (~2 ms), entering ~20 us."""
    if not _THREADPOOLS:
        from threadpoolctl import ThreadpoolController  # a dependency of scikit-learn
        _THREADPOOLS.append(ThreadpoolController())
    return _THREADPOOLS[0].limit(limits=1, user_api="blas")

__all__ = ["BaseOnlineKernelClassifier"]

KERNELS = sorted(PAIRWISE_KERNEL_FUNCTIONS)


def compute_gamma(gamma, X):
    """The numeric kernel width for ``gamma`` = 'scale', 'auto' or a number,
    exactly as :class:`sklearn.svm.SVC` resolves it."""
    if gamma == "scale":
        if sp.issparse(X):
            variance = X.multiply(X).mean() - X.mean() ** 2
        else:
            variance = X.var()
        return 1.0 / (X.shape[1] * variance) if variance != 0 else 1.0
    if gamma == "auto":
        return 1.0 / X.shape[1]
    return float(gamma)


def _dot_t(X, Y):
    """X @ Y.T as a dense float64 array (X, Y dense or CSR)."""
    K = X @ Y.T
    return K.toarray() if sp.issparse(K) else np.asarray(K)


def _row_sq_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def _rbf(X, Y, gamma, degree, coef0, self_offset=None):
    """sklearn's rbf_kernel: exp(-gamma ||x - y||^2), distances computed as
    in euclidean_distances (zero self-distance when X is Y, or, with
    ``self_offset``, when row i of X is row self_offset + i of Y)."""
    K = -2 * _dot_t(X, Y)
    K += _row_sq_norms(X)[:, None]
    K += _row_sq_norms(Y)[None, :]
    np.maximum(K, 0, out=K)
    if X is Y:
        np.fill_diagonal(K, 0)
    elif self_offset is not None:
        rows = np.arange(X.shape[0])
        K[rows, self_offset + rows] = 0
    K *= -gamma
    return np.exp(K, out=K)


def _poly(X, Y, gamma, degree, coef0, self_offset=None):
    K = _dot_t(X, Y)
    K *= gamma
    K += coef0
    K **= degree
    return K


def _sigmoid(X, Y, gamma, degree, coef0, self_offset=None):
    K = _dot_t(X, Y)
    K *= gamma
    K += coef0
    return np.tanh(K, out=K)


# the common kernels, without pairwise_kernels' input validation
_FAST_KERNELS = {
    "linear": lambda X, Y, gamma, degree, coef0, self_offset=None: _dot_t(X, Y),
    "rbf": _rbf,
    "poly": _poly,
    "polynomial": _poly,
    "sigmoid": _sigmoid,
}


def _compress_rows(first, keep_first, second, keep_second):
    """[first[keep_first]; second[keep_second]] with one copy (dense)."""
    if sp.issparse(first):
        return sp.vstack([first[keep_first], second[keep_second]], format="csr")
    n_first = int(np.count_nonzero(keep_first))
    out = np.empty((n_first + int(np.count_nonzero(keep_second)), first.shape[1]))
    np.compress(keep_first, first, axis=0, out=out[:n_first])
    np.compress(keep_second, second, axis=0, out=out[n_first:])
    return out


def _stack_rows(*blocks):
    if sp.issparse(blocks[0]):
        return sp.vstack(blocks, format="csr")
    return np.concatenate(blocks, axis=0)


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
                 shuffle, random_state, warm_start, verbose):
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
        """k(X, Y) as a C-contiguous float64 block."""
        if Y.shape[0] == 0:
            return np.zeros((X.shape[0], 0))
        if callable(self.kernel):
            params = self.kernel_params or {}
        else:
            params = {"gamma": self._gamma, "degree": self.degree, "coef0": self.coef0}
            params.update(self.kernel_params or {})
        if self._fast_kernel():
            # inputs are already validated float64: skip pairwise_kernels'
            # per-call validation (it costs more than a whole block of a
            # few hundred rows); same formulas as sklearn.metrics.pairwise
            K = _FAST_KERNELS[self.kernel](X, Y, self._gamma, self.degree, self.coef0)
        else:
            K = pairwise_kernels(X, Y, metric=self.kernel, filter_params=True, **params)
        return np.ascontiguousarray(K, dtype=np.float64)

    def _fast_kernel(self):
        return not callable(self.kernel) and self.kernel in _FAST_KERNELS and not self.kernel_params

    def _kernel_diagonal(self, X):
        """k(x_i, x_i) for every row, from small diagonal blocks (64 kernel
        values per row)."""
        step = 64
        return np.concatenate(
            [np.diag(self._kernel(X[i:i + step], X[i:i + step])) for i in range(0, X.shape[0], step)]
        )

    @staticmethod
    def _squared_distances(X, Y):
        if Y.shape[0] == 0:
            return np.zeros((X.shape[0], 0))
        XY = X @ Y.T
        XY = XY.toarray() if sp.issparse(XY) else XY
        xx = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else (X * X).sum(axis=1)
        yy = np.asarray(Y.multiply(Y).sum(axis=1)).ravel() if sp.issparse(Y) else (Y * Y).sum(axis=1)
        return np.ascontiguousarray(np.maximum(xx[:, None] + yy[None, :] - 2 * XY, 0.0))

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
        self._init_constants(X)
        n_learners = 1 if len(classes) == 2 else len(classes)
        if n_learners == 1:
            rngs = [self._rng]
        else:  # one generator per learner: draws never depend on chunking
            seeds = self._rng.randint(np.iinfo(np.int32).max, size=n_learners)
            rngs = [np.random.RandomState(seed) for seed in seeds]
        self._learners = [self._make_learner(rng) for rng in rngs]
        self._pools = [X[:0] for _ in range(n_learners)]
        # identity of each pool row (see _run_stream), for the Gram cache
        self._pool_ids = [np.zeros(0, dtype=np.intp) for _ in range(n_learners)]
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

    # ------------------------------------------------------------------
    # the stream
    # ------------------------------------------------------------------
    def _chunk_length(self, n_features, pool_size, cached=False):
        """Examples in the next chunk of the stream loop.

        ``_chunk_size`` (an int) fixes it.  ``None`` (the default) picks it
        from the cost of a chunk of ``c`` examples against a pool of ``p``
        stored vectors: ``c * (p + c)`` kernel values (prediction costs
        ``p`` per example) plus a fixed overhead ``h`` per chunk (Python
        bookkeeping, kernel calls).  ``c <= p / 2`` keeps the extra kernel
        work within half of prediction's; below that, ``c = sqrt(h / v)``
        (``v`` = cost of one kernel value, ~4 + 0.5 d ns, ~2 ns for a
        Gram-cache lookup) minimizes ``h / c + v c``.  Hence
        ``c = max(sqrt(h / v), p / 2)``, in [16, 512].  Results never
        depend on it.
        """
        if self._chunk_size is not None:
            return int(self._chunk_size)
        # measured on a 2-core x86 machine: h ~ 60 us
        overhead_ns, value_ns = 6e4, 2.0 if cached else 4.0 + 0.5 * n_features
        c = max(math.sqrt(overhead_ns / value_ns), pool_size / 2)
        return int(min(max(c, 16), 512))

    def _run_stream(self, X, Y, order, first_id, gram=None):
        """Feed the examples ``X[order]`` through every learner, chunk by chunk.

        Example ``order[i]`` gets the identity ``first_id + order[i]`` (the
        same identity in every epoch of one ``fit`` call).  ``gram``, if
        given, is ``k(X, X)``: kernel values between examples of this call
        are then looked up instead of computed.  Returns the mistake flags
        of the rounds, in stream order.
        """
        with _single_threaded_blas():
            return self._run_chunks(X, Y, order, first_id, gram)

    def _run_chunks(self, X, Y, order, first_id, gram):
        n_learners, n = len(self._learners), len(order)
        distances = self._needs_distances()
        # per-stream arrays whose chunk slices are contiguous views
        all_ids = np.add(order, first_id, dtype=np.intp)
        labels = np.ascontiguousarray(Y[order].T)
        scores = np.empty((n_learners, n))
        start = 0
        while start < n:
            pool_size = sum(pool.shape[0] for pool in self._pools)
            stop = start + self._chunk_length(X.shape[1], pool_size, cached=gram is not None)
            idx = order[start:stop]
            Xc = X[idx]
            ids = all_ids[start:stop]
            K_olds, K_new, D_olds, D_new = self._chunk_blocks(X, Xc, idx, first_id, gram, distances)
            for k, learner in enumerate(self._learners):
                learner.process_chunk(K_olds[k], K_new, labels[k, start:stop], ids,
                                      scores[k, start:stop],
                                      D_olds[k] if distances else None, D_new)
                keep = learner.finish_chunk()
                pool, pool_ids = self._pools[k], self._pool_ids[k]
                n_old = pool.shape[0]
                keep_old, keep_new = keep[:n_old], keep[n_old:]
                if not keep_new.any():
                    if not keep_old.all():
                        self._pools[k], self._pool_ids[k] = pool[keep_old], pool_ids[keep_old]
                else:
                    self._pools[k] = _compress_rows(pool, keep_old, Xc, keep_new)
                    self._pool_ids[k] = np.concatenate([pool_ids[keep_old], ids[keep_new]])
            start = stop
        return self._mistakes(scores.T, labels.T)

    def _chunk_blocks(self, X, Xc, idx, first_id, gram, distances):
        """The kernel (and distance) blocks of one chunk: per learner
        ``k(chunk, pool)``, and ``k(chunk, chunk)``.

        With a Gram cache they are looked up; otherwise one kernel call
        computes the chunk against every learner's pool at once (one call's
        overhead instead of one per learner) and one the chunk against
        itself.
        """
        pools = self._pools
        if gram is not None:
            rows = [ids - first_id for ids in self._pool_ids]
            if all(np.all((r >= 0) & (r < X.shape[0])) for r in rows):
                idx = np.ascontiguousarray(idx, dtype=np.intp)
                K_olds = [gather_block(gram, idx, r.astype(np.intp)) for r in rows]
                K_new = gather_block(gram, idx, idx)
                D_new = self._squared_distances(Xc, Xc) if distances else None
                D_olds = [self._squared_distances(Xc, pool) for pool in pools] if distances else None
                return K_olds, K_new, D_olds, D_new
        if self._fast_kernel() and len(pools) == 1 and not distances and X.shape[1] <= 64:
            # one call for both blocks, k(chunk, [pool; chunk]): saves a
            # call's overhead; with many features copying the pool costs more
            n_old = pools[0].shape[0]
            K = _FAST_KERNELS[self.kernel](Xc, _stack_rows(pools[0], Xc), self._gamma,
                                           self.degree, self.coef0, self_offset=n_old)
            return ([np.ascontiguousarray(K[:, :n_old])], np.ascontiguousarray(K[:, n_old:]),
                    None, None)
        K_new = self._kernel(Xc, Xc)
        D_new = self._squared_distances(Xc, Xc) if distances else None
        if len(pools) == 1:
            K_olds = [self._kernel(Xc, pools[0])]
            D_olds = [self._squared_distances(Xc, pools[0])] if distances else None
            return K_olds, K_new, D_olds, D_new
        every_pool = _stack_rows(*pools)
        K_olds = self._split_columns(self._kernel(Xc, every_pool), pools)
        D_olds = self._split_columns(self._squared_distances(Xc, every_pool), pools) if distances else None
        return K_olds, K_new, D_olds, D_new

    @staticmethod
    def _split_columns(block, pools):
        """Cut ``block`` = f(chunk, [pool_1; ...; pool_L]) into one
        C-contiguous block per pool."""
        parts, offset = [], 0
        for pool in pools:
            parts.append(np.ascontiguousarray(block[:, offset:offset + pool.shape[0]]))
            offset += pool.shape[0]
        return parts

    @staticmethod
    def _mistakes(scores, Y):
        """A round is a mistake unless the true class's score is strictly the
        largest (binary: unless ``y f(x) > 0``); a zero score is a mistake."""
        if Y.shape[1] == 1:
            return (Y[:, 0] * scores[:, 0] <= 0).astype(np.uint8)
        true = Y > 0
        true_score = scores[true]
        others = np.where(true, -np.inf, scores).max(axis=1)
        return (true_score <= others).astype(np.uint8)

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
        for learner, pool in zip(self._learners, self._pools):
            coef, intercept = self._learner_expansion(learner)
            vectors.append(pool[learner.support_slots()])
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
        Y = self._signed_targets(y)
        first_id = self._n_examples_seen
        self._n_examples_seen += X.shape[0]
        gram = None
        if self.max_iter > 1 and X.shape[0] <= self._gram_cache_limit:
            gram = self._kernel(X, X)
        for epoch in range(1, self.max_iter + 1):
            order = self._rng.permutation(X.shape[0]) if self.shuffle else np.arange(X.shape[0])
            self._record(self._run_stream(X, Y, order, first_id, gram))
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
        if hasattr(self, "_pools"):   # these lists are updated in place
            saved["_pools"], saved["_pool_ids"] = list(self._pools), list(self._pool_ids)
        if hasattr(self, "_learners") and callable(self.kernel):
            # a user kernel may raise mid-stream: keep a deep snapshot
            saved["_learners"], saved["_rng"] = copy.deepcopy((self._learners, self._rng))
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
        Y = self._signed_targets(y)
        first_id = self._n_examples_seen
        self._n_examples_seen += X.shape[0]
        self._record(self._run_stream(X, Y, np.arange(X.shape[0]), first_id))
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
