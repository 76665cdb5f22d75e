"""Kernel values for the engine and for prediction.

:class:`KernelFunction` is a kernel resolved for one model: a
``pairwise_kernels`` metric name or a callable, with the numeric ``gamma``
(``'scale'`` / ``'auto'`` resolved as :class:`sklearn.svm.SVC` does),
``degree``, ``coef0`` and ``kernel_params``.  It computes blocks
``k(X, Y)`` as C-contiguous float64 arrays.

The kernels the engine computes in compiled code (``linear``, ``rbf``,
``poly``, ``sigmoid`` without ``kernel_params``: those with a
``compiled_kind`` in ``skbudget._kernel_catalogue``) use scikit-learn's own
formulas in Python blocks too, but skip
``pairwise_kernels``' per-call input validation: the engine validates its
inputs once per ``fit`` / ``partial_fit`` call, and the per-call validation
costs more than a whole block of a few hundred rows.  Every other name goes
through :func:`sklearn.metrics.pairwise.pairwise_kernels`.

A callable follows one of two conventions, told apart once, when the model
starts (:meth:`KernelFunction.resolve_callable`): ``SVC``'s *matrix*
callable ``kernel(A, B, **kernel_params)`` takes two blocks of rows and
returns the ``(n_A, n_B)`` matrix (called once per block), or
``pairwise_kernels``' *per-pair* callable ``kernel(a, b, **kernel_params)``
takes two rows and returns a number (called once per pair, through
``pairwise_kernels``).
"""

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.utils import assert_all_finite

from skbudget._elementwise import flat_moments
from skbudget._kernel_catalogue import (
    LINEAR_KIND,
    POLY_KIND,
    RBF_KIND,
    SIGMOID_KIND,
    named_kernel,
)

__all__ = ["KernelFunction", "check_finite", "compute_gamma", "scale_gamma", "squared_distances"]


def compute_gamma(gamma, X, unchecked_for=None):
    """The numeric kernel width for ``gamma`` = 'scale', 'auto' or a number,
    as :class:`sklearn.svm.SVC` resolves it (for 'scale', a variance equal
    to ``X.var()`` up to rounding in the last bits, dense or CSR).

    ``unchecked_for``: the name of the estimator whose ``X`` was validated
    without checking that its values are finite, because the pass over
    every value for 'scale' checks it (a NaN or infinity makes the variance
    non-finite; scikit-learn's own error is raised then)."""
    if gamma == "scale":
        with np.errstate(over="ignore", invalid="ignore"):
            variance, mean, lowest, highest = _moments(X)
        if not np.isfinite(variance) and unchecked_for is not None:
            assert_all_finite(X, estimator_name=unchecked_for, input_name="X")
        resolved = scale_gamma(variance, X.shape[1])
        if variance != 0 and not _no_row_can_dominate(X, variance, mean, lowest, highest):
            _warn_if_one_row_dominates(X, variance)
        return resolved
    if gamma == "auto":
        return 1.0 / X.shape[1]
    return float(gamma)


def scale_gamma(variance, n_features):
    """``gamma='scale'`` from the variance of an ``X`` of ``n_features``
    columns whose values are finite: ``1 / (n_features * variance)``, 1 for
    a constant ``X``; a ``ValueError`` when the variance overflows.  (What
    :func:`compute_gamma` computes once it has the variance; a caller that
    reads the variance elsewhere, a dask array's, resolves it alike.)"""
    if not np.isfinite(variance):
        raise ValueError(
            "gamma='scale' cannot be resolved: the variance of X overflows (X holds "
            "values too large to square). Rescale X (e.g. StandardScaler) or pass a "
            "numeric gamma."
        )
    return 1.0 / (n_features * variance) if variance != 0 else 1.0


# gamma='scale' warns when one row of X makes up more than this share of
# the squared deviations its variance sums
_OUTLIER_SHARE = 0.99
# values of X read per block when looking for that row
_OUTLIER_BLOCK_VALUES = 1 << 16


# _no_row_can_dominate answers only when its bound is below this share of
# _OUTLIER_SHARE (far beyond the rounding of either side)
_BOUND_SLACK = 0.98


def _no_row_can_dominate(X, variance, mean, lowest, highest):
    """Whether no row of ``X`` can make up more than ``_OUTLIER_SHARE`` of
    its squared deviations, known without reading ``X`` again: a row's are
    at most ``n_features`` times the largest squared deviation of one value,
    ``max(highest - mean, mean - lowest) ** 2`` (``lowest`` and ``highest``
    the smallest and largest value of ``X``, a CSR matrix's implicit zeros
    included; None when unknown).  Only a value some ``sqrt(n_samples)``
    standard deviations from the mean leaves the question open (then
    :func:`_warn_if_one_row_dominates` reads the rows): on ordinary data
    the warning costs nothing beyond the variance's pass."""
    if lowest is None or X.shape[0] < 2:
        return False
    spread = max(highest - mean, mean - lowest)
    with np.errstate(over="ignore", invalid="ignore"):
        bound = X.shape[1] * (spread * spread)
        return bool(bound <= _BOUND_SLACK * _OUTLIER_SHARE
                    * (X.shape[0] * X.shape[1]) * variance)


def _warn_if_one_row_dominates(X, variance):
    """Warn when a single row of ``X`` accounts for nearly all of
    ``X.var()`` (an outlier row, such as one value of 1e150, or a whole row
    of them, among values of order 1): ``gamma='scale'`` is then set by
    that row alone, so small that the kernel is about 1 between every
    other pair of rows and the model is (nearly) constant.  One pass over
    ``X`` for its rows' squared deviations, a block of rows at a time."""
    n_values = X.shape[0] * X.shape[1]
    if n_values == 0 or X.shape[0] < 2:     # one row is all of the variance
        return
    mean = float(X.mean())
    with np.errstate(over="ignore", invalid="ignore"):
        if sp.issparse(X):
            # sum_j (x_ij - m)^2 = sum_j x_ij^2 - 2 m sum_j x_ij + d m^2
            squares = np.asarray(X.multiply(X).sum(axis=1)).ravel()
            sums = np.asarray(X.sum(axis=1)).ravel()
            deviations = squares - 2.0 * mean * sums + X.shape[1] * mean * mean
        else:
            step = max(1, _OUTLIER_BLOCK_VALUES // max(X.shape[1], 1))
            deviations = np.empty(X.shape[0])
            for start in range(0, X.shape[0], step):
                block = X[start:start + step] - mean
                deviations[start:start + step] = np.einsum("ij,ij->i", block, block)
        row = int(np.nanargmax(deviations)) if not np.isnan(deviations).all() else 0
        share = deviations[row] / (n_values * variance)
    if share > _OUTLIER_SHARE:
        warnings.warn(
            f"gamma='scale' was resolved from X.var() = {variance:.3g}, of which row {row} of "
            f"X accounts for {min(share, 1.0):.1%}: an outlier sets the kernel width alone "
            f"(gamma_ = {1.0 / (X.shape[1] * variance):.3g}), the kernel is about 1 between "
            f"all other rows and the model is likely constant. Remove or clip the outlier, "
            f"rescale X (e.g. RobustScaler), or pass a numeric gamma.", UserWarning,
        )


def _variance(X, block_values=1 << 16):
    """``X.var()`` (a CSR ``X``: over all its entries, zeros included)
    without a temporary of its size (:func:`_moments`)."""
    return _moments(X, block_values)[0]


def _moments(X, block_values=1 << 16):
    """``(X.var(), mean, lowest, highest)``: the variance (a CSR ``X``: over
    all its entries, zeros included) without a temporary of its size, and,
    where the compiled pass computes it, the mean and the smallest and
    largest value (a CSR matrix's implicit zeros included; else None for
    all three).  One compiled pass
    (:func:`~skbudget._elementwise.flat_moments`) over a contiguous float64
    ``X`` or over a canonical CSR matrix's stored values (merged with its
    implicit zeros by the same pairwise update); otherwise the mean, then
    the squared deviations summed block by block (CSR: scikit-learn's
    ``SVC`` formula).  A float32 ``X`` is converted to float64 first (a
    temporary)."""
    n_values = X.shape[0] * X.shape[1]
    if X.dtype == np.float32:
        # (FOGD's float32 input: its variance in float64, the value float64
        # input of the same numbers gets)
        X = X.astype(np.float64)
    if sp.issparse(X):
        if X.dtype != np.float64 or not X.has_canonical_format:
            return X.multiply(X).mean() - X.mean() ** 2, None, None, None
        n_stored = X.data.shape[0]
        if n_stored == 0:
            return 0.0, None, None, None
        mean, m2, lowest, highest = flat_moments(X.data)
        # the n_values - n_stored implicit zeros: mean 0, no spread
        variance = (m2 + mean * mean * (n_stored * ((n_values - n_stored) / n_values))) / n_values
        if n_stored < n_values:
            lowest, highest = min(lowest, 0.0), max(highest, 0.0)
        return variance, mean * (n_stored / n_values), lowest, highest
    if X.dtype == np.float64 and (X.flags.c_contiguous or X.flags.f_contiguous):
        mean, m2, lowest, highest = flat_moments(X.ravel(order="K"))
        return m2 / n_values, mean, lowest, highest
    mean = X.mean()
    rows = max(1, block_values // max(X.shape[1], 1))
    total = 0.0
    for start in range(0, X.shape[0], rows):
        deviation = X[start:start + rows] - mean
        total += np.einsum("ij,ij->", deviation, deviation)
    return total / n_values, None, None, None


def check_finite(K, kernel):
    """``K``, after checking that every kernel value is finite."""
    if not (np.isfinite(K.min(initial=0.0)) and np.isfinite(K.max(initial=0.0))):
        raise non_finite_kernel_error(kernel)
    return K


def non_finite_kernel_error(kernel):
    """The ValueError for non-finite values of ``kernel`` (a name or a callable)."""
    return ValueError(
        f"The kernel {kernel_name(kernel)} returned non-finite values (inf or NaN): the "
        f"inputs are too large for it (an overflow) or a callable kernel returned them. "
        f"Rescale X (e.g. StandardScaler) or lower gamma; the model is left as it was."
    )


def kernel_name(kernel):
    """How messages name ``kernel``: a callable's ``__name__`` (its repr
    if it has none), a name's repr."""
    return getattr(kernel, "__name__", repr(kernel)) if callable(kernel) else repr(kernel)


def _as_float_block(K):
    """A callable's result as a float64 array (a sparse one made dense)."""
    if sp.issparse(K):
        K = K.toarray()
    return np.asarray(K, dtype=np.float64)


def dot_t(X, Y):
    """X @ Y.T as a dense float64 array (X, Y dense or CSR)."""
    K = X @ Y.T
    return K.toarray() if sp.issparse(K) else np.asarray(K)


def row_sq_norms(X):
    """||x_i||^2 of every row (dense or CSR)."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def squared_distances(X, Y):
    """||x_i - y_j||^2 as a C-contiguous float64 block (dense or CSR)."""
    if Y.shape[0] == 0:
        return np.zeros((X.shape[0], 0))
    XY = dot_t(X, Y)
    xx = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else (X * X).sum(axis=1)
    yy = np.asarray(Y.multiply(Y).sum(axis=1)).ravel() if sp.issparse(Y) else (Y * Y).sum(axis=1)
    return np.ascontiguousarray(np.maximum(xx[:, None] + yy[None, :] - 2 * XY, 0.0),
                                dtype=np.float64)


def _rbf(X, Y, gamma, degree, coef0):
    """sklearn's rbf_kernel: exp(-gamma ||x - y||^2), distances computed as
    in euclidean_distances (zero self-distance when X is Y)."""
    K = -2 * dot_t(X, Y)
    K += row_sq_norms(X)[:, None]
    K += row_sq_norms(Y)[None, :]
    np.maximum(K, 0, out=K)
    if X is Y:
        np.fill_diagonal(K, 0)
    K *= -gamma
    return np.exp(K, out=K)


def _poly(X, Y, gamma, degree, coef0):
    K = dot_t(X, Y)
    K *= gamma
    K += coef0
    K **= degree
    return K


def _sigmoid(X, Y, gamma, degree, coef0):
    K = dot_t(X, Y)
    K *= gamma
    K += coef0
    return np.tanh(K, out=K)


def _linear(X, Y, gamma, degree, coef0):
    return dot_t(X, Y)


# the Python blocks of the kernels computed in compiled code, by their
# compiled kind, without pairwise_kernels' input validation
_BLOCK_FORMULAS = {LINEAR_KIND: _linear, RBF_KIND: _rbf, POLY_KIND: _poly, SIGMOID_KIND: _sigmoid}


class KernelFunction:
    """A kernel resolved for one model.

    Parameters
    ----------
    kernel : str or callable
        A ``pairwise_kernels`` metric name, or a callable (its convention,
        matrix or per pair, is told by :meth:`resolve_callable`).
    gamma : float or None
        The numeric width (``None`` for callables).
    degree, coef0 : float
        As in :class:`sklearn.svm.SVC`.
    kernel_params : dict or None
        Extra keyword arguments for the kernel.
    """

    # a callable's convention, 'matrix' or 'pair' (resolve_callable); None
    # for names (and for a callable of a model pickled before the
    # conventions were told apart: those were called per pair)
    convention = None

    def __init__(self, kernel, gamma, degree, coef0, kernel_params):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params

    def resolve_callable(self, X):
        """Tell a callable kernel's convention from rows of ``X`` (the
        data that starts the model), once: ``'matrix'`` (``SVC``'s: two
        blocks in, the ``(n_A, n_B)`` matrix out) or ``'pair'``
        (``pairwise_kernels``': two rows in, a number out).

        The probe calls it on two small blocks whose row counts differ from
        each other and from the number of features (so a per-pair function
        such as ``a @ b`` cannot return a matrix of the right shape by
        accident), and, through ``pairwise_kernels``, on pairs of rows.  A
        matrix callable must return finite values of the right shape, and
        the same values for a one-row block; a per-pair one finite numbers.
        When both work and agree, the matrix convention is used (one call
        per block); when they disagree, or neither works, a ValueError says
        what each probe got.
        """
        if not callable(self.kernel):
            return self
        params = dict(self.kernel_params or {})
        n, d = X.shape
        n_a = next(m for m in (2, 3, 4) if m != d)
        n_b = next(m for m in (3, 4, 5, 6) if m not in (d, n_a))
        A, B = X[np.arange(n_a) % n], X[(np.arange(n_b) + 1) % n]
        matrix, matrix_problem = None, None
        try:
            matrix = _as_float_block(self.kernel(A, B, **params))
            if matrix.shape != (n_a, n_b):
                matrix_problem = f"returned shape {matrix.shape} instead of {(n_a, n_b)}"
            elif not np.all(np.isfinite(matrix)):
                matrix_problem = "returned non-finite values"
            else:
                single = _as_float_block(self.kernel(A[:1], B[:1], **params))
                if single.shape != (1, 1) or not np.allclose(single, matrix[:1, :1],
                                                             rtol=1e-7, atol=1e-12):
                    matrix_problem = (f"gave {single.tolist()} for one row of each block, "
                                      f"not the blocks' value {matrix[0, 0]!r}")
        except Exception as exc:   # noqa: BLE001 - reported below
            matrix_problem = f"raised {type(exc).__name__}: {exc}"
        pair, pair_problem = None, None
        try:
            pair = np.asarray(pairwise_kernels(A[:2], B[:2], metric=self.kernel, **params),
                              dtype=np.float64)
            if not np.all(np.isfinite(pair)):
                pair_problem = "returned non-finite values"
        except Exception as exc:   # noqa: BLE001 - reported below
            pair_problem = f"raised {type(exc).__name__}: {exc}"
        name = kernel_name(self.kernel)
        if matrix_problem is None and pair_problem is None:
            if not np.allclose(matrix[:2, :2], pair, rtol=1e-7, atol=1e-12):
                raise ValueError(
                    f"The callable kernel {name} is ambiguous: on blocks of rows it returns a "
                    f"matrix ({matrix[:2, :2].tolist()}) that differs from its values on "
                    f"single rows ({pair.tolist()}). Write it for one convention: "
                    f"kernel(A, B) -> the (n_A, n_B) matrix (as for SVC), or "
                    f"kernel(a, b) -> a number for two rows (as pairwise_kernels takes)."
                )
            self.convention = "matrix"
        elif matrix_problem is None:
            self.convention = "matrix"
        elif pair_problem is None:
            self.convention = "pair"
        else:
            raise ValueError(
                f"The callable kernel {name} fits neither convention. As SVC's matrix "
                f"callable, kernel(A, B) on blocks of shape {A.shape} and {B.shape} "
                f"{matrix_problem}; as pairwise_kernels' per-pair callable, kernel(a, b) on "
                f"two rows {pair_problem}. A kernel callable must return the (n_A, n_B) "
                f"matrix of finite kernel values for two blocks of rows, or a finite number "
                f"for two rows (kernel_params are passed to it as keyword arguments)."
            )
        return self

    @property
    def compiled_kind(self):
        """The ``_kernel_rows.KernelKind`` of a kernel the engine computes in
        compiled code (a named kernel with a compiled kind, without
        ``kernel_params``), or None: its blocks then come from
        ``pairwise_kernels`` or the callable."""
        named = named_kernel(self.kernel)
        return None if named is None or self.kernel_params else named.compiled_kind

    def __call__(self, X, Y):
        """k(X, Y) as a C-contiguous float64 block."""
        if Y.shape[0] == 0:
            return np.zeros((X.shape[0], 0))
        kind = self.compiled_kind
        if kind is not None:
            K = _BLOCK_FORMULAS[kind](X, Y, self.gamma, self.degree, self.coef0)
        elif self.convention == "matrix":
            K = _as_float_block(self.kernel(X, Y, **(self.kernel_params or {})))
            if K.shape != (X.shape[0], Y.shape[0]):
                raise ValueError(
                    f"The callable kernel {kernel_name(self.kernel)} returned a block of "
                    f"shape {K.shape} for blocks of {X.shape[0]} and {Y.shape[0]} rows; it "
                    f"must return the ({X.shape[0]}, {Y.shape[0]}) matrix of kernel values."
                )
        else:
            if callable(self.kernel):
                params = dict(self.kernel_params or {})
            else:
                params = {"gamma": self.gamma, "degree": self.degree, "coef0": self.coef0}
                params.update(self.kernel_params or {})
            K = pairwise_kernels(X, Y, metric=self.kernel, filter_params=True, **params)
        return check_finite(np.ascontiguousarray(K, dtype=np.float64), self.kernel)

    def diagonal(self, X):
        """k(x_i, x_i) for every row: 1 for 'rbf' (its self-distances are
        exactly 0, as in ``k(X, X)``), else from small diagonal blocks (64
        kernel values per row)."""
        if self.compiled_kind == RBF_KIND:
            return np.ones(X.shape[0])
        step = 64
        return np.concatenate(
            [np.diag(self(X[i:i + step], X[i:i + step])) for i in range(0, X.shape[0], step)]
        )
