# cython: language_level=3, cdivision=True
"""The span factor: one incremental Cholesky factor of a support set's Gram
matrix (doc/algorithms.md#bsgd,
doc/algorithms.md#projectron).

``K = L Lᵀ`` by position (row ``i`` = support vector ``i``, oldest first),
in one of two layouts: full rows ``ld`` apart, or packed rows (``ld =
PACKED``: row ``i`` holds ``L[i, 0..i]`` and starts at ``i (i + 1) / 2``),
for a support set that only grows.  What a policy needs, each in O(n²):

* append a vector: the bordered Cholesky step (:func:`factor_append_row`:
  ``c = L⁻¹ k_S``, the residual ``δ² = k_tt − ‖c‖²``, the row ``[cᵀ, δ]``);
  the same arithmetic as a from-scratch row-oriented factorization, so the
  factor does not drift;
* remove the vector at a position (:func:`factor_delete_row`, Givens
  rotations; full rows);
* solve ``K a = k`` (:func:`forward_substitution`, which returns
  ``‖L⁻¹ k‖² = kᵀ K⁻¹ k``, then :func:`back_substitution`); one column of
  ``K⁻¹`` is the solve of a unit vector, so ``G_rr`` and ``G_{V,r}`` of
  ``G = K⁻¹`` are one solve per ``r``.

In full rows the factor skips the vectors lying in the span of the earlier
ones (BSGD's projection): see the section below.  :func:`span_append` and
:func:`span_project` apply it to a learner's support set (``track_gram``).
"""

import numpy as np
from libc.math cimport sqrt

from skbudget._engine cimport OnlineLearner
from skbudget._engine import _resized
from skbudget._kernel_rows cimport dense_dot

# a vector whose squared distance to the span of the earlier ones is at most
# SPAN_TOL k(x, x) lies in that span (the projection gives it no share)
cdef double SPAN_TOL = 1e-8


# ----------------------------------------------------------------------
# the span factor in full rows of leading dimension ``ld``, that skips the vectors lying in the span of the
# earlier ones.  Row j of such a vector keeps its coordinates but has
# L[j, j] = 0, and column j is zero: it gets no share of a projection (the
# kept vectors carry the exact projection onto the same span).  "In the
# span" means a squared distance <= SPAN_TOL k_jj.
# ----------------------------------------------------------------------
def _factor_room(chol, span_gap, Py_ssize_t capacity, Py_ssize_t n):
    """``(chol, span_gap, rhs)`` with room for ``capacity`` vectors, the
    first ``n`` rows of the factor kept (first use, after unpickling: the
    right-hand side is scratch, not saved; or growth)."""
    grown = np.zeros((max(capacity, chol.shape[0]),) * 2)
    grown[:n, :n] = np.asarray(chol)[:n, :n]
    return grown, _resized(span_gap, grown.shape[0]), np.zeros(grown.shape[0])


cdef int span_append(OnlineLearner lr, double[:, ::1] chol, double[::1] gap) except -1 nogil:
    """Grow the span factor ``chol`` of ``lr``'s support set by its newest
    vector, the current example (its kernel row is the gathered ``k_row``)."""
    cdef Py_ssize_t i, n = lr.n_sv - 1
    lr.ensure_row()
    for i in range(n):
        chol[n, i] = lr.k_row[lr.order[i]]
    factor_append_row(&chol[0, 0], chol.shape[1], n, lr.k_tt, &gap[0])
    return 0


cdef double span_project(OnlineLearner lr, double[:, ::1] chol, double[::1] gap,
                         double[::1] rhs, Py_ssize_t p) except? -1.0 nogil:
    """The projection of the support vector at position ``p`` of ``lr``
    onto the span of the others: ``rhs`` gets ``d = K_{-p}⁻¹ k_{-p,p}``
    (one entry per other position, in order).  The factor of the ``B + 1``
    vectors loses row ``p`` (Givens rotations, O(B²); rows rebuilt from the
    Gram matrix where they cannot keep it a span factor); it is then the
    factor of ``K_{-p}``: two triangular solves.  Returns ``‖L⁻¹
    k_{-p,p}‖² = k_{-p,p}ᵀ d`` (``k_pp`` minus it is the squared distance
    of ``x_p`` to the span)."""
    cdef Py_ssize_t i, j = 0, n = lr.n_sv - 1, cp = lr.order[p]
    cdef double norm2
    cdef double* L = &chol[0, 0]
    cdef Py_ssize_t ld = chol.shape[1]
    for i in range(lr.n_sv):
        if i != p:
            rhs[j] = lr.gram[lr.order[i], cp]
            j += 1
    j = factor_delete_row(L, ld, lr.n_sv, p, &lr.kself[0], &lr.order[0], &gap[0])
    if j < n:
        refactor_rows(lr, chol, gap, j, p)
    norm2 = forward_substitution(L, ld, n, &rhs[0])
    back_substitution(L, ld, n, &rhs[0])
    return norm2


cdef int refactor_rows(OnlineLearner lr, double[:, ::1] chol, double[::1] gap, Py_ssize_t start,
                       Py_ssize_t p) except -1 nogil:
    """Rows ``start`` ... of the span factor of ``lr``'s support set without
    position ``p``, rebuilt from the Gram matrix by bordered steps (where
    the rotations of :func:`factor_delete_row` cannot keep it a span
    factor); O((n - start) n²)."""
    cdef Py_ssize_t n = lr.n_sv - 1
    cdef double[:, ::1] gram
    with gil:   # the Gram matrix by new position (p dropped)
        cells = np.delete(np.asarray(lr.order)[:lr.n_sv], p)
        gram = np.ascontiguousarray(np.asarray(lr.gram)[np.ix_(cells, cells)])
    factor_rebuild_rows(&chol[0, 0], chol.shape[1], start, n, &gram[0, 0], n, &gap[0])
    return 0


cdef double forward_substitution(const double* L, Py_ssize_t ld, Py_ssize_t n,
                                 double* x) noexcept nogil:
    """x = L⁻¹ x over the kept rows (0 on the others); returns ‖x‖².  Full
    rows or packed (``ld = PACKED``)."""
    cdef Py_ssize_t j
    cdef double norm2 = 0.0
    cdef const double* row
    for j in range(n):
        row = L + row_offset(j, ld)
        if row[j] != 0.0:
            x[j] = (x[j] - dense_dot(row, x, j)) / row[j]
            norm2 += x[j] * x[j]
        else:
            x[j] = 0.0
    return norm2


cdef void back_substitution(const double* L, Py_ssize_t ld, Py_ssize_t n,
                            double* x) noexcept nogil:
    """x = L⁻ᵀ x over the kept rows (row-oriented).  Full rows or packed
    (``ld = PACKED``)."""
    cdef Py_ssize_t j, k
    cdef const double* row
    for j in range(n - 1, -1, -1):
        row = L + row_offset(j, ld)
        if row[j] != 0.0:
            x[j] = x[j] / row[j]
            for k in range(j):
                x[k] -= x[j] * row[k]


cdef void factor_append_row(double* L, Py_ssize_t ld, Py_ssize_t n, double k_self,
                           double* gap) noexcept nogil:
    """Row ``n`` holds ``k(x_n, x_i)`` for i < n: make it the factor's row
    (the bordered Cholesky step); ``gap[n]`` gets the squared distance to
    the span it drops (0 for a kept vector)."""
    cdef double pivot = k_self - forward_substitution(L, ld, n, &L[n * ld])
    if k_self > 0.0 and pivot > SPAN_TOL * k_self:
        L[n * ld + n] = sqrt(pivot)
        gap[n] = 0.0
    else:
        L[n * ld + n] = 0.0
        gap[n] = pivot if pivot > 0.0 else 0.0


cdef Py_ssize_t factor_delete_row(double* L, Py_ssize_t ld, Py_ssize_t n, Py_ssize_t p,
                                  const double* kself, const Py_ssize_t* cell,
                                  double* gap) noexcept nogil:
    """Remove vector ``p`` of ``n`` from the factor: rows below move up one,
    then Givens rotations of the column pairs (i, i + 1) bring row i back to
    lower-triangular form; ``kself[cell[i]]`` is ``k_ii`` of (old) position
    ``i``.  Row i's entry ``b`` in column i + 1 is its old diagonal, its
    entry ``a`` in column i its component along the direction ``p`` leaves.
    A kept vector (``b != 0``) stays kept: rotated.  A vector in the span
    (``b = 0``; its column is zero below it) is now at the squared distance
    ``a² + gap[i]`` from the span; while that is at most ``SPAN_TOL k_ii`` it
    stays in it: the two columns swap, exactly, and the gap grows to it.
    Returns ``n - 1`` when the rows are the span factor of the ``n - 1``
    vectors, else the first row from which it must be rebuilt
    (:func:`factor_rebuild_rows`; the rows before it are done): a vector
    that leaves the span (its row holds only its part in the span, not the
    gap), or a kept one whose rotated diagonal fell within the tolerance by
    rounding."""
    cdef Py_ssize_t i, k
    cdef double a, b, r, c, s, u, v, tol
    for i in range(p, n - 1):
        for k in range(i + 2):
            L[i * ld + k] = L[(i + 1) * ld + k]
        gap[i] = gap[i + 1]
    for i in range(p, n - 1):
        a = L[i * ld + i]
        b = L[i * ld + i + 1]       # the vector's old diagonal: 0 if it was in the span
        tol = SPAN_TOL * kself[cell[i + 1]]
        if b == 0.0:
            if a * a + gap[i] > tol:    # leaves the span
                return i
            gap[i] += a * a
            c = 0.0                 # stays in it: the columns swap, its zero column
            s = 1.0                 # moves to i and the rows below keep theirs
            L[i * ld + i] = 0.0
        else:
            r = sqrt(a * a + b * b)
            if r * r <= tol:        # a kept vector in the span (rounding)
                return i
            c = a / r
            s = b / r
            L[i * ld + i] = r
        L[i * ld + i + 1] = 0.0
        for k in range(i + 1, n - 1):
            u = L[k * ld + i]
            v = L[k * ld + i + 1]
            L[k * ld + i] = c * u + s * v
            L[k * ld + i + 1] = c * v - s * u
    return n - 1


cdef void factor_rebuild_rows(double* L, Py_ssize_t ld, Py_ssize_t start, Py_ssize_t n,
                              const double* K, Py_ssize_t ldk, double* gap) noexcept nogil:
    """Rows ``start .. n-1`` of the span factor of the Gram matrix ``K``
    (``n x n``, rows ``ldk`` apart), by bordered steps on the rows before."""
    cdef Py_ssize_t i, j
    for j in range(start, n):
        for i in range(n):
            L[j * ld + i] = K[j * ldk + i] if i < j else 0.0
        factor_append_row(L, ld, j, K[j * ldk + j], gap)


def _span_factor(K):
    """``(L, gap)``: the span factor of a Gram matrix ``K`` (``n + 1``
    square, ``n`` rows used), grown row by row, and the dropped squared
    distances (for tests)."""
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    if K.ndim != 2 or K.shape != (n, n):
        raise ValueError(f"K must be square; got shape {K.shape}")
    L_arr = np.zeros((n + 1, n + 1))
    gap_arr = np.zeros(n + 1)
    cdef double[:, ::1] L = L_arr
    cdef double[::1] gap = gap_arr
    cdef Py_ssize_t i
    for i in range(n):
        L_arr[i, :i] = K[i, :i]
        factor_append_row(&L[0, 0], n + 1, i, K[i, i], &gap[0])
    return L_arr, gap_arr


def _span_factor_delete(L, gap, K, Py_ssize_t p):
    """Copies of the span factor ``L`` (n + 1 square, n rows used) of the
    Gram matrix ``K`` and of its ``gap`` without vector ``p`` (for tests):
    rotations, and rows rebuilt from ``K`` where they cannot keep it a span
    factor."""
    L_arr = np.array(L, dtype=np.float64, order="C")
    gap_arr = np.array(gap, dtype=np.float64)
    K = np.ascontiguousarray(K, dtype=np.float64)
    cdef Py_ssize_t n = K.shape[0]
    if L_arr.shape != (n + 1, n + 1) or gap_arr.shape != (n + 1,) or K.shape != (n, n) \
            or not 0 <= p < n:
        raise ValueError("L must be (n + 1) square and gap n + 1 long for an n x n K, "
                         "and 0 <= p < n")
    keep = np.delete(np.arange(n), p)
    kd = np.ascontiguousarray(np.diag(K))
    K_kept = np.ascontiguousarray(K[np.ix_(keep, keep)])
    cells = np.arange(n, dtype=np.intp)
    cdef double[:, ::1] Lv = L_arr
    cdef double[::1] gv = gap_arr
    cdef double[::1] kv = kd
    cdef double[:, ::1] Kv = K_kept
    cdef Py_ssize_t[::1] cv = cells
    cdef Py_ssize_t start = factor_delete_row(&Lv[0, 0], n + 1, n, p, &kv[0], &cv[0], &gv[0])
    if start < n - 1:
        factor_rebuild_rows(&Lv[0, 0], n + 1, start, n - 1, &Kv[0, 0], n - 1, &gv[0])
    L_arr[n - 1] = 0.0
    gap_arr[n - 1] = 0.0
    return L_arr, gap_arr


def _span_solve(L, b):
    """``(d, ‖L⁻¹ b‖²)`` with ``d = K⁻¹ b`` over the kept vectors of the
    span factor ``L`` (for tests)."""
    L_arr = np.ascontiguousarray(L, dtype=np.float64)
    x = np.array(b, dtype=np.float64)
    cdef Py_ssize_t n = x.shape[0]
    if L_arr.ndim != 2 or L_arr.shape[0] < n or L_arr.shape[1] < n or n == 0:
        raise ValueError("L must be at least n x n for n = len(b) > 0")
    cdef double[:, ::1] Lv = L_arr
    cdef double[::1] xv = x
    cdef double norm2 = forward_substitution(&Lv[0, 0], Lv.shape[1], n, &xv[0])
    back_substitution(&Lv[0, 0], Lv.shape[1], n, &xv[0])
    return x, norm2
