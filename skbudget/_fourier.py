"""FOGD: linear hinge OGD on random Fourier features of the RBF kernel.

The model is no kernel expansion: its features ``z(x) = [cos(xU),
sin(xU)] / sqrt(D)`` do not depend on the model, so they are computed in
compiled code and shared by every one-vs-rest learner
(``doc/algorithms.md#kernel-ogd``).  CSR input: one compiled call per segment of
the stream (:func:`~skbudget._ogd_fast.fourier_sparse_rounds`) maps each
row (its projections ``xU`` summed over its nonzeros, then the vectorized
cosine and sine of ``_fourier_loops.h``) and runs every learner's hinge
step on it while the features are in L1.  Dense input: a block's
projections are one matrix product (BLAS), then the same cosine and sine
(:func:`~skbudget._ogd_fast.fourier_from_projections`), then each
learner's compiled loop over the block.  :class:`FourierDriver` takes the
place of the engine's ``StreamDriver`` for the estimator base.

float32 input (dense or CSR) is kept float32: its projections (with a
float32 copy of ``U``, derived, never saved) and their cosine and sine are
computed in float32 (``_fourier_loops.h``), the features then stored as
float64 values and the learners' steps run in float64 as for float64
input.  Each call computes in its own input's precision.
"""

import numpy as np
import scipy.sparse as sp

from skbudget._averaging import SameFeaturesAverage
from skbudget._base import BaseOnlineKernelClassifier
from skbudget._blas import single_threaded_blas
from skbudget._budget import _example
from skbudget._declaration import Declaration
from skbudget._docstrings import docstring, stream_doc
from skbudget._elementwise import mistake_flags
from skbudget._ogd_fast import (LinearHingeLearner, fourier_dense_projections,
                                fourier_from_projections, fourier_sparse_features,
                                fourier_sparse_rounds)
from skbudget._params import Integer, RealNumber, keep_params
from skbudget._stream import _Pieces

__all__ = ["FourierOGDClassifier"]

# dense input: rows per block, about this many feature values (cos and sin)
_BLOCK_VALUES = 1 << 17
# CSR input: rows per compiled call (the progress log's granularity)
_SPARSE_SEGMENT = 8192

_NOT_FINITE = (
    "FourierOGDClassifier: a projection x U of a row of X onto the random weights is not a "
    "finite number (NaN or infinity): X holds values too large for the kernel width gamma_. "
    "Rescale X (e.g. StandardScaler)."
)


def _real_dtype(X):
    """The precision FOGD computes ``X``'s features in: float32 for float32
    input, float64 otherwise."""
    return np.float32 if X.dtype == np.float32 else np.float64


def _csr_parts(X):
    """``(data, indices, indptr)`` of the CSR matrix ``X`` (float64 values,
    or float32 for float32 input; int32 indices: no copy when they are
    already)."""
    X = X.tocsr()
    return (np.ascontiguousarray(X.data, dtype=_real_dtype(X)),
            np.ascontiguousarray(X.indices, dtype=np.int32),
            np.ascontiguousarray(X.indptr, dtype=np.int32))


def fourier_features(X, U):
    """``z(x) = [cos(xU), sin(xU)] / sqrt(D)`` for every row of ``X``
    (dense or CSR), ``U`` of shape ``(n_features, D)``: C-contiguous,
    ``(n_rows, 2 D)``.  Dense rows: ``xU`` by BLAS; CSR rows: summed over
    the row's nonzeros in order in compiled code.  A projection ``xU``
    that is not finite (a row of values near the floating-point limit) is
    a ValueError.  A float32 ``X``: the projections and their cosine and
    sine in float32, with ``U`` cast to float32 (pass that copy to skip
    the cast), the features float64 values either way."""
    if U.dtype != _real_dtype(X):
        U = np.ascontiguousarray(U, dtype=_real_dtype(X))
    factor = 1.0 / np.sqrt(U.shape[1])
    Z = np.empty((X.shape[0], 2 * U.shape[1]))
    if sp.issparse(X):
        rows = np.arange(X.shape[0], dtype=np.intp)
        not_finite = fourier_sparse_features(*_csr_parts(X), rows, U, factor, Z)
    else:
        P = np.empty((X.shape[0], U.shape[1]), dtype=U.dtype)
        fourier_dense_projections(np.ascontiguousarray(X), np.ascontiguousarray(U), P)
        not_finite = fourier_from_projections(P, Z, factor)
    if not_finite:
        raise ValueError(_NOT_FINITE)
    return Z


class FourierDriver:
    """The learners of one FOGD model and the random weights ``U`` they
    share; :meth:`run` has the signature of ``StreamDriver.run``.

    Parameters
    ----------
    learners : list of LinearHingeLearner
        One per column of the signed targets.
    U : ndarray of shape (n_features, n_components)
        The random weights.
    kernel : KernelFunction
        The RBF kernel the features approximate (kept with the model).
    chunk_size : int or None
        Rows per block of features, dense input (None: about 2^17 feature
        values per block), or per compiled call, CSR input (None:
        ``_SPARSE_SEGMENT``).  Results never depend on it.
    """

    def __init__(self, learners, U, kernel, chunk_size=None):
        self.learners = learners
        self.U = U
        self.kernel = kernel
        self.chunk_size = chunk_size
        self.n_jobs = None
        # the estimator base's rollback saves and restores the engine
        # driver's pools of stored rows: this driver stores no rows
        self.pools, self.pool_ids = [], []

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_U32", None)     # (derived from U: rebuilt when needed)
        return state

    def __setstate__(self, state):
        state = dict(state)
        state.pop("_U32", None)
        U = state.get("U")
        if not (isinstance(U, np.ndarray) and U.dtype == np.float64 and U.ndim == 2
                and U.shape[1] >= 1 and np.isfinite(U).all()):
            raise ValueError("FourierOGDClassifier: the saved random weights are not a finite "
                             "float64 matrix; the file is corrupted.")
        for learner in state.get("learners", []):
            if learner.w.shape[0] != 2 * U.shape[1]:
                raise ValueError(
                    f"FourierOGDClassifier: a saved model of {learner.w.shape[0]} "
                    f"coefficients for {U.shape[1]} random weights; the file is corrupted."
                )
        self.__dict__.update(state)

    def weights_for(self, X):
        """``U`` in ``X``'s precision: ``U`` itself for float64 input, a
        float32 copy (made at the first float32 call, kept in memory, never
        saved) for float32 input."""
        if _real_dtype(X) == np.float64:
            return self.U
        U32 = self.__dict__.get("_U32")
        if U32 is None or U32.shape != self.U.shape:
            U32 = self._U32 = np.ascontiguousarray(self.U, dtype=np.float32)
        return U32

    def features(self, X):
        """``z(X)`` (see :func:`fourier_features`)."""
        return fourier_features(X, self.weights_for(X))

    def check_rows(self, X):
        """Raise the error :meth:`run` raises for a row of ``X`` that it
        refuses whatever the learners hold: a projection ``xU`` that is not
        finite (its features, :meth:`features`, computed and dropped)."""
        self.features(X)

    def run(self, X, y, targets, order, first_id, record, gram=None, progress=None,
            weights=None):
        """Feed the examples ``X[order]`` (stream order when None) through
        every learner, a block of features at a time; returns ``record``
        extended by the rounds' mistakes (the other arguments as
        ``StreamDriver.run``'s; this learner takes no weights and no Gram
        matrix)."""
        pieces = _Pieces(X, y, targets, order)
        if sp.issparse(X):
            return self._run_sparse(X, pieces, record, progress)
        step = self.chunk_size or int(np.clip(_BLOCK_VALUES // (2 * self.U.shape[1]), 16, 2048))
        with single_threaded_blas():
            for start in range(0, pieces.n, step):
                rows, labels = pieces.rows_and_labels(start, start + step)
                block = X[start:start + len(rows)] if order is None else X[rows]
                Z = self.features(block)
                scores = np.empty((len(self.learners), len(rows)))
                for k, learner in enumerate(self.learners):
                    learner.run_block(Z, labels[k], scores[k])
                record = self._record_rounds(record, labels, scores, start + len(rows),
                                             progress)
        return record

    def _run_sparse(self, X, pieces, record, progress):
        """:meth:`run` for CSR input: a compiled call per segment of
        ``chunk_size`` rows (default ``_SPARSE_SEGMENT``), rows read in
        place."""
        parts = _csr_parts(X)
        U = self.weights_for(X)
        factor = 1.0 / np.sqrt(self.U.shape[1])
        step = self.chunk_size or _SPARSE_SEGMENT
        for start in range(0, pieces.n, step):
            rows, labels = pieces.rows_and_labels(start, start + step)
            scores = np.empty((len(self.learners), len(rows)))
            if fourier_sparse_rounds(self.learners, *parts, rows, U, factor, labels,
                                     scores) < len(rows):
                raise ValueError(_NOT_FINITE)
            record = self._record_rounds(record, labels, scores, start + len(rows), progress)
        return record

    def _record_rounds(self, record, labels, scores, done, progress):
        """``record`` extended by the rounds of ``labels`` / ``scores``
        (one row per learner); the progress log told (``done`` rounds of
        the pass so far)."""
        flags = mistake_flags(labels, scores)
        record = record.extended(flags, 0)     # FOGD stores no vector
        if progress is not None:
            progress(done, flags, self)
        return record


class FourierOGDClassifier(BaseOnlineKernelClassifier):
    __doc__ = docstring(
        """Fourier online gradient descent (FOGD): linear hinge OGD on random
    Fourier features of the RBF kernel.

    At the first fit, ``n_components = D`` random directions are drawn from
    ``random_state``, ``U = sqrt(2 gamma) N(0, 1)^(n_features x D)``, and
    each example is mapped to ``z(x) = [cos(xU), sin(xU)] / sqrt(D)``
    (``2 D`` values, ``z(x).z(x') ~ exp(-gamma ||x - x'||^2)``).  Each
    round: if ``y w.z(x) < 1`` (strictly), ``w += eta y z(x)``.  The
    memory is ``n_components`` per feature plus ``2 D`` per class, however
    long the stream: the budget is the feature dimension.  No bias; the
    RBF kernel only.

    The features do not depend on the model: they are computed in compiled
    code and shared by every one-vs-rest learner (CSR rows: each projection
    summed over the row's nonzeros, with the bits of SciPy's ``X @ U``;
    dense rows: a BLAS product per block), their cosines and sines by a
    vectorized pair within 1 ULP of libm's (not its bits; libm itself for
    ``|xU| > 2^19``), and each learner runs its compiled per-example loop
    on them while they are in cache.  float32 ``X`` (dense or CSR) is
    kept: its projections (with a float32 copy of ``U``) and their cosines
    and sines are computed in float32 (within 1.5 float32 ULP; libm in
    float64 for ``|xU| > 2^12``), for training and prediction alike, each
    call in its own input's precision; ``coef_`` and ``random_weights_``
    stay float64 (other dtypes are converted to float64).  The authors'
    MATLAB code and the C++ LIBOKL/KOL toolbox leave out the ``1 /
    sqrt(D)``, so their step is this one's divided by ``D``; KOL's cosine
    also has the wrong sign on half the circle, and it seeds from the
    clock.""",
        ["""n_components : int, default=400
        ``D``, the number of random directions (the features are ``2 D``
        values: a cosine and a sine each).""",
         """gamma : {'scale', 'auto'} or float, default='scale'
        The width of the RBF kernel ``exp(-gamma ||x - y||^2)`` the
        features approximate, resolved as in :class:`sklearn.svm.SVC` from
        the data of the call that starts the model and kept as ``gamma_``;
        for streaming, pass a number ('scale' from fewer than 100 rows
        warns).  The papers' ``exp(-||x - y||^2 / (2 sigma^2))`` is
        ``gamma = 1 / (2 sigma^2)``.""",
         """eta0 : float, default=0.5
        The constant step ``eta``.""",
         stream_doc(random_note=" and of the random weights ``U`` (drawn when the model "
                               "starts)", one_vs_rest=False)],
        """classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (n_learners, 2 * n_components)
        The linear model ``w`` of each one-vs-rest learner (one row for two
        classes) on the features ``[cos(xU), sin(xU)] / sqrt(D)``.
    intercept_ : ndarray of shape (n_learners,)
        Always 0: the model has no bias.
    random_weights_ : ndarray of shape (n_features, n_components)
        ``U``, shared by every learner (as
        :class:`sklearn.kernel_approximation.RBFSampler`'s, which uses
        ``cos(xU + b)`` with a random offset instead of the sine).
    n_mistakes_ : int
        Training rounds with ``y w.z(x) <= 0`` (multi-class: the true
        class's score not strictly the largest), over every pass and call.
    n_updates_ : int
        Updates of ``w``, summed over the learners.
    n_rounds_ : int
        Training rounds (examples processed) over every pass and call.
    mistake_curve_ : ndarray of shape (n_points, 2)
        The learning curve at bounded resolution: rows ``(t, mistakes up to
        and including round t)`` (at most 257 rows however long the
        stream).
    gamma_ : float
        The kernel width used.
    n_iter_ : int
        Passes run by the last :meth:`fit`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names.""",
        see_also="""sklearn.kernel_approximation.RBFSampler : Random Fourier features as a
        transformer (then e.g. ``SGDClassifier(loss='hinge')``).
    NystromOGDClassifier : The Nystrom approximation of the same paper.""",
        references="""J. Lu, S. C. H. Hoi, J. Wang, P. Zhao and Z.-Y. Liu, "Large Scale
    Online Kernel Learning", Journal of Machine Learning Research 17(47),
    1-43, 2016.

    A. Rahimi and B. Recht, "Random Features for Large-Scale Kernel
    Machines", NIPS 2007.""",
        examples=_example("FourierOGDClassifier",
                          "FourierOGDClassifier(n_components=200, gamma=2.0, random_state=0)"),
    )

    _declaration = Declaration(
        test_params=(dict(gamma=1.0, random_state=0),),
        model_variants=({}, dict(n_components=20, eta0=0.1)),
        averaging=SameFeaturesAverage(
            "the weighted sum of the models' ``coef_``, on the same random features only (the "
            "same integer ``random_state``, ``n_components``, ``gamma_`` and number of "
            "features)"),
    )

    _parameter_constraints: dict = {
        name: constraint
        for name, constraint in BaseOnlineKernelClassifier._parameter_constraints.items()
        if name not in ("kernel", "degree", "coef0", "kernel_params", "n_jobs")
    } | {
        "n_components": [Integer(1, None, closed="left")],
        "eta0": [RealNumber(0.0, None, closed="neither")],
    }

    # the kernel is fixed (the base reads these as parameters)
    kernel, degree, coef0, kernel_params, n_jobs = "rbf", 3, 0.0, None, None
    # the features need no Gram matrix of the training data
    _gram_cache_limit = 0
    _driver_class = FourierDriver
    # float32 input is kept: its features are computed in float32
    _input_dtype = [np.float64, np.float32]

    def __init__(self, *, n_components=400, gamma="scale", eta0=0.5, max_iter=1, shuffle=True,
                 random_state=None, warm_start=False, verbose=0):
        keep_params(self, locals(), skip=())

    def _make_learner(self, rng):
        return LinearHingeLearner(n_features=2 * self.n_components, eta=self.eta0)

    def _init_constants(self, X):
        # the model's first draw from random_state (before anything else
        # draws: the same U for any number of classes)
        self._new_weights = np.sqrt(2.0 * self._gamma) * self._rng.standard_normal(
            (X.shape[1], self.n_components))

    def _make_driver(self, learners, X):
        U = self.__dict__.pop("_new_weights")
        return FourierDriver(learners, U, self._kernel_function, self._chunk_size)

    def _update_fitted_attributes(self):
        coef = np.array([np.asarray(learner.w) for learner in self._learners])
        if not np.isfinite(coef).all():    # (inside the call's rollback)
            raise ValueError(
                f"{type(self).__name__}: the model's coefficients are not finite numbers; "
                f"the model is left as it was."
            )
        self.coef_ = coef
        self.intercept_ = np.zeros(len(coef))
        self.random_weights_ = self._driver.U
        self.n_mistakes_ = self._record.n_mistakes
        self.n_rounds_ = self._record.n_rounds
        self.n_updates_ = int(sum(learner.n_updates for learner in self._learners))

    def _raw_scores(self, X):
        out = np.empty((X.shape[0], self.coef_.shape[0]))
        step = self._predict_chunk_size
        with single_threaded_blas():
            for start in range(0, X.shape[0], step):
                rows = slice(start, start + step)
                out[rows] = self._driver.features(X[rows]) @ self.coef_.T
        return out
