# cython: language_level=3, cdivision=True
"""Fused prediction: ``f(X) = k(X, S) @ coef.T + intercept`` over cache-sized tiles.

The kernel expansion is evaluated tile by tile: a tile is ``m`` rows of
``X`` against ``t`` support vectors, ``m * t`` about :data:`TILE_VALUES`
kernel values (1 MB, which stays in a core's L2 cache; where ``dgemm``
computes the inner products, at least :data:`GEMM_MIN_ROWS` rows of at
most :data:`GEMM_ROW_VALUES` values, so that its packing of the support
vectors on every call is spread over enough rows).  For each tile:

1. the inner products ``<x_i, s_j>``: for rows with many features (a CSR
   block that is not very sparse is made dense first) one BLAS ``dgemm``,
   or, on a CPU with AVX2 and FMA and at most 256 features, the training
   loop's own kernel ``skb_fma_block`` (``_vector_loops.h``: the rows
   transposed once per block of rows, nothing packed, AVX-512 where the
   CPU has it; :func:`skbudget._cpu.use_fma_kernels`); otherwise,
   feature by feature, ``x_ik * S.T[k]`` added to the row's tile (over a
   CSR row's non-zeros only; ``S.T`` is a dense copy, contiguous per
   feature);
2. the kernel's argument in place, with scikit-learn's formulas
   (``rbf``: ``-gamma * max((-2 <x, s> + ||x||^2) + ||s||^2, 0)``;
   ``poly`` / ``sigmoid``: ``gamma <x, s> + coef0``);
3. the kernel's function over the whole tile: NumPy's vectorized ``exp``
   / ``tanh`` (the functions ``rbf_kernel`` and ``sigmoid_kernel``
   apply), and for ``poly`` an integer degree by repeated squaring (the
   same multiplications for every value of the tile, so they vectorize;
   ``pow`` otherwise); the kernel values are scikit-learn's up to
   rounding;
4. ``scores += tile @ coef[:, tile].T`` with one ``dgemm``.

float32 support vectors (a model trained on float32 rows) keep the rows in
float32: step 1 by ``sgemm`` in float32 (never the FMA kernels, which
are float64's), the tile then widened to float64; feature by feature,
the float32 values' products (exact in float64) summed in float64
(``skb_widening_axpy``: float32 sums there were ~10 % slower than
float64's, the tile being what costs at few features); the squared norms
of float32 values summed in float64; steps 2 to 4 as for float64.
float64 support vectors take the float64 steps above, unchanged.

The linear kernel collapses to one weight vector per output,
``w = coef @ S`` (float64, ``S`` widened), and ``f(X) = X @ w.T +
intercept`` (float64).  No ``n_samples x n_SV`` array is ever formed.
BLAS runs on the calling thread only (the caller holds it to one thread:
tiles are too small for BLAS threads to pay off, and on a busy machine
their wake-ups dominate).
"""

import numpy as np
import scipy.sparse as sp

from cython cimport floating
from scipy.linalg.cython_blas cimport dgemm, sgemm

from skbudget._cpu cimport avx512_tiles, fma_kernels_for
from skbudget._kernel_rows cimport LINEAR_KERNEL, POLY_KERNEL, RBF_KERNEL, SIGMOID_KERNEL
from skbudget._vector_loops cimport (SKB_FMA_PADDING, skb_affine_arguments, skb_axpy,
                                     skb_fma_block, skb_integer_power, skb_rbf_block_arguments,
                                     skb_row_norms, skb_row_norms_f32, skb_transpose,
                                     skb_vector_loops_init, skb_widening_axpy)

skb_vector_loops_init()     # the AVX2 loops where the CPU has AVX2


# kernel values per tile (8 bytes each: 1 MB)
cdef Py_ssize_t TILE_VALUES = 131072
# rows per tile, at least, where dgemm computes the inner products: dgemm
# packs both of its operands in full on every call, so a short tile packs
# the support vectors again and again (d = 784, |S| = 1 000: tiles of 131
# rows took 8 % longer than tiles of 512, whose 4 MB fall out of L2 but
# not out of L3) -- as long as the block of rows (made dense, or copied,
# for dgemm) stays within GEMM_ROW_VALUES values (8 MB)
cdef Py_ssize_t GEMM_MIN_ROWS = 512
cdef Py_ssize_t GEMM_ROW_VALUES = 1 << 20
# rows with at most this many features: inner products feature by feature
cdef Py_ssize_t FEW_FEATURES = 16
# a CSR block with at least this fraction of non-zeros is made dense for dgemm
cdef double DENSE_ENOUGH = 0.05



def kernel_expansion(X, vectors, const double[:, ::1] coef, const double[::1] intercept,
                     int kind, double gamma, double degree, double coef0):
    """Scores ``k(X, vectors) @ coef.T + intercept`` of shape
    (n_samples, n_outputs).

    float32 support vectors (dense or CSR) are kept float32, and ``X``
    (dense or CSR, any float type) is converted to float32 a block of rows
    at a time (a CSR matrix whole): the inner products ``<x, s>`` are
    computed in float32 by ``sgemm`` (feature by feature, for few
    features or very sparse rows: the float32 values' exact products
    summed in float64), the squared norms of the rows and vectors from
    their float32 values summed in float64, and each tile is widened to
    float64 before the kernel's argument and function; the scores are
    accumulated in float64.  The linear kernel's weight vectors ``coef @
    vectors`` and their products with ``X`` are float64.  Any other
    support vectors are converted to float64, and so is ``X``: the
    float64 computation.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        The rows to score, converted to the precision of ``vectors``.
    vectors : ndarray or CSR matrix of shape (n_SV, n_features)
        The support vectors, float32 or float64.
    coef : ndarray of shape (n_outputs, n_SV)
        The expansion coefficients (``dual_coef_``).
    intercept : ndarray of shape (n_outputs,)
    kind : int
        The kernel, a ``_kernel_rows.KernelKind`` (the catalogue's
        ``compiled_kind`` of 'linear', 'rbf', 'poly' or 'sigmoid').
    gamma, degree, coef0 : float
        The kernel's parameters, as in :class:`sklearn.svm.SVC`.

    Returns
    -------
    scores : ndarray of shape (n_samples, n_outputs), float64
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], n_sv = vectors.shape[0]
    cdef Py_ssize_t n_out = coef.shape[0]
    if kind not in (LINEAR_KERNEL, RBF_KERNEL, POLY_KERNEL, SIGMOID_KERNEL):
        raise ValueError(f"kind {kind} is no compiled kernel (_kernel_rows.KernelKind)")
    if coef.shape[1] != n_sv or intercept.shape[0] != n_out or vectors.shape[1] != d:
        raise ValueError(
            f"inconsistent shapes: X {X.shape}, support vectors {vectors.shape}, "
            f"coefficients {tuple(coef.shape)}, intercept ({intercept.shape[0]},)")
    scores_arr = np.empty((n, n_out))
    scores_arr[:] = np.asarray(intercept)
    if n == 0 or n_sv == 0:
        return scores_arr
    dtype = np.float32 if vectors.dtype == np.float32 else np.float64
    V_arr = np.ascontiguousarray(vectors.toarray() if sp.issparse(vectors) else vectors,
                                 dtype=dtype)
    if sp.issparse(X) and (kind != LINEAR_KERNEL or dtype is np.float32):
        X = canonical_csr(X)
        if X.dtype != dtype:
            X = X.astype(dtype)
    if kind == LINEAR_KERNEL:
        # sum_j c_j <x, s_j> = <x, sum_j c_j s_j>: one weight vector per output
        if dtype is np.float64:
            scores_arr += np.asarray(X @ (np.asarray(coef) @ V_arr).T)
        else:
            _linear_scores(X, np.asarray(coef) @ V_arr.astype(np.float64), scores_arr)
        return scores_arr
    cdef const float[:, ::1] V32
    cdef const double[:, ::1] V64
    if dtype is np.float32:
        V32 = V_arr
        _tiled_expansion(X, V32, coef, kind, gamma, degree, coef0, scores_arr)
    else:
        V64 = V_arr
        _tiled_expansion(X, V64, coef, kind, gamma, degree, coef0, scores_arr)
    return scores_arr


def _linear_scores(X, w, scores):
    """``scores += X @ w.T`` in float64, for float32 support vectors'
    float64 weights ``w``: ``X`` (a canonical float32 CSR matrix, or dense
    of any type) taken as float32 values, a block of rows of a dense ``X``
    at a time, a CSR ``X`` row by row (:func:`_csr_linear_scores`)."""
    if sp.issparse(X):
        _csr_linear_scores(X.data, X.indices.astype(np.intc, copy=False),
                           X.indptr.astype(np.intc, copy=False),
                           np.ascontiguousarray(w.T), scores)
        return
    cdef Py_ssize_t r0, step = max(1, GEMM_ROW_VALUES // max(1, X.shape[1]))
    for r0 in range(0, X.shape[0], step):
        rows = np.asarray(X[r0:r0 + step], dtype=np.float32)
        scores[r0:r0 + step] += rows.astype(np.float64) @ w.T


cdef void _csr_linear_scores(const float[::1] data, const int[::1] indices,
                             const int[::1] indptr, const double[:, ::1] wT,
                             double[:, ::1] scores) noexcept nogil:
    """scores[i] += sum_p data[p] wT[indices[p]] over row i's non-zeros, in
    float64 (what scipy's product computes after copying the values to
    float64)."""
    cdef Py_ssize_t i, p, o, n_out = scores.shape[1]
    cdef double value
    cdef double* row
    cdef const double* weights
    for i in range(scores.shape[0]):
        row = &scores[i, 0]
        for p in range(indptr[i], indptr[i + 1]):
            value = data[p]
            weights = &wT[indices[p], 0]
            for o in range(n_out):
                row[o] += value * weights[o]


cdef _tiled_expansion(X, const floating[:, ::1] V, const double[:, ::1] coef, int kind,
                      double gamma, double degree, double coef0, scores_arr):
    """``scores_arr += k(X, V) @ coef.T`` tile by tile (the module's
    docstring), the inner products in ``V``'s precision (float32 ones
    widened to float64 before the kernel's argument).  ``X``: dense, or a
    canonical CSR matrix of ``V``'s dtype."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], n_sv = V.shape[0]
    cdef Py_ssize_t r0, m, c0, t, i
    dtype = np.float32 if floating is float else np.float64
    cdef double[:, ::1] scores = scores_arr
    sparse_rows = sp.issparse(X)
    # squared norms: only the rbf kernel's argument uses them
    cdef double[::1] v_norms = np.zeros(n_sv)
    if kind == RBF_KERNEL:
        if floating is double:
            v_norms = np.einsum("ij,ij->i", V, V)
        else:
            skb_row_norms_f32(&V[0, 0], n_sv, d, &v_norms[0])
    cdef const floating[:, ::1] VT = V[:0]
    cdef const floating[::1] data
    cdef const int[::1] indices
    cdef const int[::1] indptr
    if sparse_rows:
        data = X.data
        indices = X.indices.astype(np.intc, copy=False)
        indptr = X.indptr.astype(np.intc, copy=False)
    feature_by_feature = d <= FEW_FEATURES or (
        sparse_rows and X.nnz < DENSE_ENOUGH * n * d)
    if feature_by_feature:
        VT = np.ascontiguousarray(np.asarray(V).T)
    cdef int integer_degree = (<int>degree if kind == POLY_KERNEL and degree == <int>degree
                               and 0 <= degree <= 64 else -1)
    # tile shape: t support vectors (at most 1024) by m rows
    cdef bint fma = floating is double and not feature_by_feature and fma_kernels_for(d)
    cdef bint avx512 = fma and avx512_tiles()
    cdef Py_ssize_t t_max = min(n_sv, 1024)
    cdef Py_ssize_t m_max = max(16, TILE_VALUES // t_max)
    if not feature_by_feature and not fma:
        m_max = max(m_max, min(GEMM_MIN_ROWS, GEMM_ROW_VALUES // d))
    m_max = min(n, m_max)
    tile_arr = np.empty(m_max * t_max)
    cdef double[::1] tile = tile_arr
    # sgemm's inner products: a float32 tile widened into the tile (float64:
    # the tile itself; feature by feature, the sums go to the tile)
    cdef floating[::1] dots = tile_arr if floating is double else np.empty(
        0 if feature_by_feature else m_max * t_max, dtype=np.float32)
    cdef double[::1] x_norms = np.empty(m_max)
    cdef const floating[:, ::1] Xb
    cdef double[::1] Xt = np.empty(d * m_max + SKB_FMA_PADDING if fma else 0)
    for r0 in range(0, n, m_max):
        m = min(m_max, n - r0)
        if sparse_rows and not feature_by_feature:
            Xb = X[r0:r0 + m].toarray()
        elif not sparse_rows:
            Xb = np.ascontiguousarray(X[r0:r0 + m], dtype=dtype)
        if kind == RBF_KERNEL and sparse_rows and feature_by_feature:
            _csr_row_norms(data, indptr, r0, m, x_norms)
        elif kind == RBF_KERNEL:
            _row_norms(&Xb[0, 0], m, d, &x_norms[0])
        if fma:         # the block's rows transposed, once for every tile
            _fma_transpose(&Xb[0, 0], m, d, &Xt[0])
        for c0 in range(0, n_sv, t_max):
            t = min(t_max, n_sv - c0)
            if fma:
                _fma_dots(&Xt[0], m, &V[c0, 0], t, d, &tile[0], avx512)
            elif not feature_by_feature:
                _gemm_dots(Xb, V, c0, t, dots)
                if floating is float:
                    for i in range(m * t):
                        tile[i] = dots[i]
            elif sparse_rows:
                _csr_dots(data, indices, indptr, r0, m, VT, c0, t, tile)
            else:
                _dense_dots_by_feature(Xb, VT, c0, t, tile)
            _kernel_arguments(kind, gamma, coef0, tile, m, t, x_norms, v_norms, c0)
            if integer_degree >= 0:
                skb_integer_power(&tile[0], m * t, integer_degree)
            else:
                _kernel_function(kind, degree, tile_arr[:m * t])
            _accumulate(tile, m, t, coef, c0, scores, r0)


def canonical_csr(X):
    """``X`` as a CSR matrix whose rows the compiled loops read as they
    are: sorted column indices without duplicates (scipy's
    ``has_canonical_format``; a matrix with duplicate entries stands for
    their sums, which the row norms of the ``rbf`` kernel would otherwise
    miss: ``||x||^2`` of the parts, not of the sum), copied only when it is
    not canonical, and a structure checked before any index is used
    (``ValueError``)."""
    X = sp.csr_matrix(X)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    indptr, indices = X.indptr, X.indices
    n_stored = int(indptr[indptr.shape[0] - 1]) if indptr.shape[0] else 0
    if (indptr.shape[0] != X.shape[0] + 1 or indptr[0] != 0
            or n_stored > min(indices.shape[0], X.data.shape[0])
            or (indptr.shape[0] > 1 and np.diff(indptr).min() < 0)
            or (n_stored and (indices[:n_stored].min() < 0
                              or indices[:n_stored].max() >= X.shape[1]))):
        raise ValueError("X is not a valid CSR matrix: its indptr or column indices are out "
                         "of range")
    return X


cdef void _csr_row_norms(const floating[::1] data, const int[::1] indptr, Py_ssize_t r0,
                         Py_ssize_t m, double[::1] out) noexcept nogil:
    cdef Py_ssize_t i, p
    cdef double s
    for i in range(m):
        s = 0.0
        for p in range(indptr[r0 + i], indptr[r0 + i + 1]):
            s += <double>data[p] * <double>data[p]
        out[i] = s


cdef void _row_norms(const floating* rows, Py_ssize_t c, Py_ssize_t d,
                     double* out) noexcept nogil:
    """out[i] = ||rows[i]||^2 in float64: training's sums (``skb_row_norms``)
    of float64 rows, ``skb_row_norms_f32`` of float32 ones (a float32
    store's)."""
    if floating is double:
        skb_row_norms(rows, c, d, out)
    else:
        skb_row_norms_f32(rows, c, d, out)


cdef void _fma_transpose(const floating* rows, Py_ssize_t m, Py_ssize_t d,
                         double* out) noexcept nogil:
    """The rows transposed for ``skb_fma_block`` (float64 only: float32
    rows never take the FMA kernels)."""
    if floating is double:
        skb_transpose(rows, m, d, out, m)


cdef void _fma_dots(const double* rows_t, Py_ssize_t m, const floating* vectors, Py_ssize_t t,
                    Py_ssize_t d, double* tile, bint avx512) noexcept nogil:
    """tile (m x t) = the inner products by ``skb_fma_block`` (float64 only)."""
    if floating is double:
        skb_fma_block(rows_t, m, m, vectors, t, d, tile, avx512)


cdef void _gemm_dots(const floating[:, ::1] Xb, const floating[:, ::1] V, Py_ssize_t c0,
                     Py_ssize_t t, floating[::1] tile) noexcept nogil:
    """tile[i * t + j] = <Xb[i], V[c0 + j]> by one dgemm (sgemm for float32)."""
    cdef int bm = <int>Xb.shape[0], bt = <int>t, bd = <int>Xb.shape[1]
    cdef floating one = 1.0, zero = 0.0
    # row-major tile (m x t) = column-major (t x m) = V_tile (t x d) . Xb.T
    if floating is double:
        dgemm("T", "N", &bt, &bm, &bd, &one, <double*>&V[c0, 0], &bd,
              <double*>&Xb[0, 0], &bd, &zero, &tile[0], &bt)
    else:
        sgemm("T", "N", &bt, &bm, &bd, &one, <float*>&V[c0, 0], &bd,
              <float*>&Xb[0, 0], &bd, &zero, &tile[0], &bt)


cdef inline void _axpy(double* y, floating a, const floating* x, Py_ssize_t n) noexcept nogil:
    """y += a x in float64: the AVX2 loops' ``skb_axpy`` for float64 ``x``,
    ``skb_widening_axpy`` (float32 ``a`` and ``x``, products exact in
    float64) for float32."""
    if floating is double:
        skb_axpy(y, a, x, n)
    else:
        skb_widening_axpy(y, a, x, n)


cdef void _dense_dots_by_feature(const floating[:, ::1] Xb, const floating[:, ::1] VT,
                                 Py_ssize_t c0, Py_ssize_t t, double[::1] tile) noexcept nogil:
    """tile[i * t + j] = sum_k Xb[i, k] V.T[k, c0 + j], feature by feature
    (summed in float64)."""
    cdef Py_ssize_t i, j, k
    cdef double* row
    for i in range(Xb.shape[0]):
        row = &tile[i * t]
        for j in range(t):
            row[j] = 0.0
        for k in range(Xb.shape[1]):
            if Xb[i, k] != 0.0:
                _axpy(row, Xb[i, k], &VT[k, c0], t)


cdef void _csr_dots(const floating[::1] data, const int[::1] indices, const int[::1] indptr,
                    Py_ssize_t r0, Py_ssize_t m, const floating[:, ::1] VT, Py_ssize_t c0,
                    Py_ssize_t t, double[::1] tile) noexcept nogil:
    """tile[i * t + j] = <X[r0 + i], V[c0 + j]> from X's non-zeros and V.T
    (summed in float64)."""
    cdef Py_ssize_t i, j, p
    cdef double* row
    for i in range(m):
        row = &tile[i * t]
        for j in range(t):
            row[j] = 0.0
        for p in range(indptr[r0 + i], indptr[r0 + i + 1]):
            _axpy(row, data[p], &VT[indices[p], c0], t)


cdef void _kernel_arguments(int kind, double gamma, double coef0, double[::1] tile,
                            Py_ssize_t m, Py_ssize_t t, const double[::1] x_norms,
                            const double[::1] v_norms, Py_ssize_t c0) noexcept nogil:
    """Inner products -> the argument of the kernel's function, in place
    (the training loop's passes over a chunk's block)."""
    if kind == RBF_KERNEL:
        # as sklearn.metrics.euclidean_distances: (-2 xy + xx) + yy, clipped at 0
        skb_rbf_block_arguments(&tile[0], m, t, &x_norms[0], &v_norms[c0], -gamma)
    elif kind != LINEAR_KERNEL:
        skb_affine_arguments(&tile[0], m * t, gamma, coef0)


def _integer_power(double[::1] values, int degree):
    """``values **= degree`` in place, as prediction raises its tiles (for
    tests)."""
    if degree < 0:
        raise ValueError("degree must be a non-negative integer")
    if values.shape[0]:
        skb_integer_power(&values[0], values.shape[0], degree)


cdef void _kernel_function(int kind, double degree, double[::1] tile):
    """The kernel's function over the tile, with NumPy's vectorized ufuncs."""
    values = np.asarray(tile)
    if kind == RBF_KERNEL:
        np.exp(values, out=values)
    elif kind == POLY_KERNEL:
        np.power(values, degree, out=values)
    elif kind == SIGMOID_KERNEL:
        np.tanh(values, out=values)


cdef void _accumulate(const double[::1] tile, Py_ssize_t m, Py_ssize_t t,
                      const double[:, ::1] coef, Py_ssize_t c0, double[:, ::1] scores,
                      Py_ssize_t r0) noexcept nogil:
    """scores[r0:r0 + m] += tile (m x t) @ coef[:, c0:c0 + t].T."""
    cdef int bm = <int>m, bt = <int>t, n_out = <int>coef.shape[0], ld = <int>coef.shape[1]
    cdef double one = 1.0
    # column-major: scores.T (n_out x m) += coef_tile (n_out x t) . tile.T (t x m)
    dgemm("T", "N", &n_out, &bm, &bt, &one, <double*>&coef[0, c0], &ld,
          <double*>&tile[0], &bt, &one, &scores[r0, 0], &n_out)
