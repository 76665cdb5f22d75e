# cython: language_level=3, cdivision=True
"""Budgeted Passive-Aggressive: BPA-S, BPA-NN and BPA-P
(doc/algorithms.md#bpa).

Wang & Vucetic, "Online Passive-Aggressive Algorithms on a Budget",
AISTATS 2010.  PA-I (step ``tau = min(C w, loss / k(x_t, x_t))`` on a hinge
loss, ``w`` the example's weight, 1 without weights; none for ``w = 0``) whose budget is kept by solving the PA problem with the removal:
when ``|S| = B``, the support vector ``r`` is removed whose coefficient,
projected onto the span of a small set ``V`` holding ``x_t``, loses the
least, ``argmin_r alpha_r^2 s_r`` with the removal score
``s_r = k_rr - k_{V,r}^T K_V^{-1} k_{V,r}`` (the squared distance of
``phi(x_r)`` from span ``V``); the projection ``alpha_r K_V^{-1} k_{V,r}``
is added to the coefficients of ``V`` and ``x_t`` is appended as the newest
support vector.

* simple (BPA-S): ``V = {t}``; O(B) a round from the round's kernel row.
* nearest (BPA-NN): ``V = {t, n(r)}``, ``n(r)`` the support vector nearest
  to ``x_r`` in feature space.  The engine keeps the support set's Gram
  matrix (``track_gram``) and the policy each vector's nearest neighbour
  and its squared distance (``nearest``, ``nearest_dist``): an insertion
  compares the new vector with every neighbour (O(B)), a removal
  recomputes the neighbours of the vectors it was nearest to (O(B) each),
  so a round is O(B).
* projection (BPA-P): ``V = S + {t} - {r}``.  The policy keeps ``A =
  K_S^{-1}``, the inverse Gram matrix of the support set by cell (zero in
  the rows and columns of free cells, so every pass runs over whole rows,
  contiguously).  With ``d = A k_t`` and ``delta^2 = k_tt - k_t^T d``, the
  inverse ``G`` of the Gram matrix of ``U = S + {t}`` is ``A`` bordered:
  ``G_rr = A_rr + d_r^2 / delta^2``, so ``s_r = 1 / G_rr`` for every ``r``
  in O(B) once ``d`` is known, and the removal of ``r`` from ``U`` is the
  rank-one downdate ``G - g g^T / G_rr`` (``g`` = column ``r`` of ``G``).
  Two O(B^2) passes a round: ``d``, and one rank-two update of ``A``.
  When ``x_t`` lies in span ``S`` (``delta^2 <= 1e-12 k_tt``) nothing is
  removed or added: the step is projected onto ``S``
  (``alpha += tau y d``), so ``K_S`` stays invertible.
  The engine also keeps ``K_S`` (``track_gram``): when a bound on the
  rounding error of the updates (``drift``) grows large, ``A`` is checked
  against it (O(B^2)) and, if inaccurate, recomputed (Cholesky, O(B^3)):
  after an ill-conditioned insertion the updates alone carry a large error
  on (doc/algorithms.md#bpa, "How accurate BPA-P's inverse stays").

Every removal score is a squared distance: a value below 0 (rounding, or a
kernel that is not positive semi-definite) counts as 0.  Scores agreeing to
a relative 1e-9 are tied (``_numbers.oldest_least``), and ties go to the oldest.
"""

import numpy as np
from libc.float cimport DBL_EPSILON
from libc.math cimport fabs, sqrt, INFINITY
from scipy.linalg.cython_lapack cimport dpotrf, dpotri

from skbudget._engine cimport OnlineLearner
from skbudget._engine import _copied, _resized, size_problem, square_problem
from skbudget._kernel_rows cimport dense_dot
from skbudget._numbers cimport is_finite, oldest_least, raise_not_finite
from skbudget._shared_support cimport SharedSupportLearner

# K_V is singular (BPA-NN's 2 x 2 determinant, BPA-P's delta^2) at or below
# SPAN_TOL times the product of its diagonal (the contract's 1e-12)
cdef double SPAN_TOL = 1e-12

# BPA-P keeps K_S^{-1} incrementally (O(B^2) a round) and checks it against
# the Gram matrix when its estimated rounding error (``drift``) exceeds
# CHECK_DRIFT times that of an inverse computed afresh; the check, O(B^2),
# measures the residual ``max |K_S (A u) - u|`` for two probes ``u`` and
# recomputes the inverse (Cholesky, O(B^3)) when it exceeds both
# RESIDUAL_TOL and the residual floor of the last recomputation
# (doc/algorithms.md#bpa)
cdef double CHECK_DRIFT = 1e3
cdef double RESIDUAL_TOL = 1e-10

# The per-cell arrays (BPA-NN's and BPA-P's Gram matrix and BPA-P's inverse
# among them, B x B at the budget) start at the engine's initial_capacity and
# grow by doubling (OnlineLearner.grow_when_full) up to capacity_limit(),
# budget + 1 cells (a round needs one free cell besides the B vectors), so
# that memory and saved files follow the support set.  Every capacity before
# budget + 1 is a multiple of 4: the score and BPA-P's sums over every cell
# (``dense_dot``: four partial sums, then the remainder; free cells add 0)
# are then the same bits as over budget + 1 cells (the growth changes no
# model)

# what a non-finite removal score is called in the error
cdef const char* REMOVAL_SCORE = b"A removal score of the budgeted Passive-Aggressive"

cdef enum:
    RULE_SIMPLE = 0
    RULE_NEAREST = 1
    RULE_PROJECTION = 2
SIMPLE, NEAREST, PROJECTION = RULE_SIMPLE, RULE_NEAREST, RULE_PROJECTION


# ----------------------------------------------------------------------
# The removal geometry, said once for the binary learner and the shared
# multi-class one (doc/algorithms.md#bpa): both keep the same arrays under
# the same names (the state: ``nearest``, ``nearest_dist``, ``inverse``,
# ``drift``, ...); the compiled passes below take the learner's store
# (``order``, ``gram``, ``kself``, the round's ``k_row``) and the arrays.
# ----------------------------------------------------------------------

cdef inline double feature_distance(OnlineLearner lr, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """||phi(x_a) - phi(x_b)||^2 from the Gram matrix."""
    return lr.kself[a] + lr.kself[b] - 2.0 * lr.gram[a, b]


cdef int find_nearest(OnlineLearner lr, Py_ssize_t* nearest, double* nearest_dist,
                      Py_ssize_t c) except -1 nogil:
    """nearest[c] = the support vector nearest to c (ties: oldest)."""
    cdef Py_ssize_t i, j, best = -1
    cdef double v, best_dist = INFINITY
    for i in range(lr.n_sv):
        j = lr.order[i]
        if j == c:
            continue
        v = feature_distance(lr, c, j)
        if not is_finite(v):
            raise_not_finite(b"A feature-space distance between support vectors")
        if best < 0 or v < best_dist:
            best = j
            best_dist = v
    nearest[c] = best
    nearest_dist[c] = best_dist
    return 0


cdef void forget_nearest(OnlineLearner lr, Py_ssize_t* nearest, Py_ssize_t cell) noexcept nogil:
    """``cell`` is being removed: the cells whose nearest neighbour it was
    are marked (-2) for :func:`meet_newest` to recompute."""
    cdef Py_ssize_t i, c
    for i in range(lr.n_sv):
        c = lr.order[i]
        if nearest[c] == cell:
            nearest[c] = -2
    nearest[cell] = -1


cdef int forget_cell(OnlineLearner lr, int maintenance, Py_ssize_t[::1] nearest,
                     double[:, ::1] inverse, Py_ssize_t cell) except -1 nogil:
    """The geometry's part of a removal (``on_remove``): BPA-NN's
    neighbours of ``cell`` marked (:func:`forget_nearest`), BPA-P's row and
    column of the inverse cleared."""
    if maintenance == RULE_NEAREST:
        forget_nearest(lr, &nearest[0], cell)
    elif maintenance == RULE_PROJECTION:
        clear_inverse(lr, &inverse[0, 0], cell)
    return 0


cdef int meet_newest(OnlineLearner lr, Py_ssize_t* nearest, double* nearest_dist,
                     Py_ssize_t cell) except -1 nogil:
    """After ``cell`` was appended (and perhaps a vector removed): every
    other vector compares its neighbour with the newest (strictly closer
    wins: the newest is never the oldest of a tie), the marked ones search
    again, and the newest finds its own."""
    cdef Py_ssize_t i, c
    cdef double v
    for i in range(lr.n_sv - 1):
        c = lr.order[i]
        if nearest[c] == -2 or nearest[c] == -1:
            find_nearest(lr, nearest, nearest_dist, c)
        else:
            v = feature_distance(lr, c, cell)
            if not is_finite(v):
                raise_not_finite(b"A feature-space distance between support vectors")
            if v < nearest_dist[c]:
                nearest[c] = cell
                nearest_dist[c] = v
    find_nearest(lr, nearest, nearest_dist, cell)
    return 0


cdef double removal_shares(OnlineLearner lr, Py_ssize_t n, Py_ssize_t c, double* share_t,
                          double* share_n, Py_ssize_t* partner) noexcept nogil:
    """BPA-S and BPA-NN: ``s_c`` for the support vector in cell ``c`` and
    ``K_V^{-1} k_{V,c}``: its share for x_t and for ``partner`` (``n``, the
    nearest neighbour ``n(c)`` of BPA-NN, -1 for BPA-S or when ``V = {t}``).
    Needs the round's kernel row."""
    cdef double ktt = lr.k_tt, ktr = lr.k_row[c], knr, ktn, knn, det
    partner[0] = -1
    share_n[0] = 0.0
    share_t[0] = ktr / ktt if ktt > 0.0 else 0.0       # V = {t}
    if n >= 0:
        knn = lr.kself[n]
        ktn = lr.k_row[n]
        knr = lr.gram[n, c]
        det = ktt * knn - ktn * ktn
        if det > 0.0 and det > SPAN_TOL * ktt * knn:    # else V = {t}
            share_t[0] = (knn * ktr - ktn * knr) / det
            share_n[0] = (ktt * knr - ktn * ktr) / det
            partner[0] = n
            return lr.kself[c] - (ktr * share_t[0] + knr * share_n[0])
    return lr.kself[c] - ktr * share_t[0]


# the weight ``w_r`` of a removal value ``w_r s_r``: ``alpha_r^2`` (the
# binary learner's coefficient, times the scale) or ``||alpha_r||^2`` (the
# shared learner's row norm, times the scale squared); the removal loops are
# compiled once for each (a fused type: no branch in the loop)
cdef struct CoefWeights:
    const double* alpha
    double scale

cdef struct RowWeights:
    const double* sqnorm
    double scale2

ctypedef fused Weights:
    CoefWeights
    RowWeights


cdef inline double weight_of(Weights w, Py_ssize_t c) noexcept nogil:
    cdef double a
    if Weights is CoefWeights:
        a = w.alpha[c] * w.scale
        return a * a
    else:
        return w.sqnorm[c] * w.scale2


cdef void removal_values(OnlineLearner lr, const Py_ssize_t* nearest, Weights w,
                         double* values) noexcept nogil:
    """BPA-S and BPA-NN: ``values[i] = w_r max(s_r, 0)`` for the support
    vector ``r`` at position ``i`` (:func:`weight_of`).  ``nearest ==
    NULL`` (BPA-S): ``s_r = k_rr - k_tr (k_tr / k_tt)``
    (:func:`removal_shares` with ``V = {t}``, the same operations in the
    same order, in one loop over raw pointers: this loop is most of a BPA-S
    round; ``k_tr / k_tt`` is ``k_tr`` itself when ``k_tt = 1``, every RBF
    round: dividing by 1 is exact); else :func:`removal_shares` with each
    vector's neighbour."""
    cdef Py_ssize_t i, c, n = lr.n_sv, partner
    cdef const Py_ssize_t* order = &lr.order[0]
    cdef const double* k_row = &lr.k_row[0]
    cdef const double* kself = &lr.kself[0]
    cdef double ktt = lr.k_tt, ktr, share, s, share_n
    if nearest != NULL:
        for i in range(n):
            c = order[i]
            s = removal_shares(lr, nearest[c], c, &share, &share_n, &partner)
            values[i] = weight_of(w, c) * (s if s > 0.0 else 0.0)
        return
    for i in range(n):
        c = order[i]
        ktr = k_row[c]
        if ktt == 1.0:
            share = ktr
        elif ktt > 0.0:
            share = ktr / ktt
        else:
            share = 0.0
        s = kself[c] - ktr * share
        values[i] = weight_of(w, c) * (s if s > 0.0 else 0.0)


# BPA-P: K_S^{-1} by cell and its upkeep.  ``Inverse`` points into a
# learner's arrays and counters (``inverse_of``); the pointers hold until the
# learner grows (an insertion may: take the view again after one).
cdef struct Inverse:
    double* A               # inverse, capacity x capacity
    double* k_vec           # the round's kernel row by cell (0 for free cells)
    double* d               # d = K_S^{-1} k_t
    double* g               # the update vector (column r of G)
    double* g_diag          # the diagonal of G by cell
    double* values          # removal values by position (scratch of the residual too)
    double* lapack_work     # the n x n Gram matrix, factored
    double* drift
    double* residual_floor
    long long* n_checks
    long long* n_refreshes
    double* k_d_magnitude   # sum_c |k_c d_c| of the round


cdef Inverse inverse_of(double[:, ::1] inverse, double[::1] k_vec, double[::1] d_vec,
                        double[::1] g_vec, double[::1] g_diag, double[::1] values,
                        double[::1] lapack_work, double* drift, double* residual_floor,
                        long long* n_checks, long long* n_refreshes,
                        double* k_d_magnitude) noexcept nogil:
    cdef Inverse v
    v.A = &inverse[0, 0]
    v.k_vec = &k_vec[0]
    v.d = &d_vec[0]
    v.g = &g_vec[0]
    v.g_diag = &g_diag[0]
    v.values = &values[0]
    v.lapack_work = &lapack_work[0]
    v.drift = drift
    v.residual_floor = residual_floor
    v.n_checks = n_checks
    v.n_refreshes = n_refreshes
    v.k_d_magnitude = k_d_magnitude
    return v


cdef void clear_inverse(OnlineLearner lr, double* A, Py_ssize_t cell) noexcept nogil:
    """Row and column ``cell`` of the inverse to 0 (a free cell)."""
    cdef Py_ssize_t c, cap = lr.capacity
    for c in range(cap):
        A[cell * cap + c] = 0.0
        A[c * cap + cell] = 0.0


cdef void rank_two(OnlineLearner lr, double* A, const double* e, double f, const double* g,
                   double h) noexcept nogil:
    """inverse += f e e^T + h g g^T over every cell, one pass (zero entries
    of ``e`` and ``g`` leave their rows and columns alone; ``g = NULL``: the
    first term alone)."""
    cdef Py_ssize_t i, j, cap = lr.capacity
    cdef double* row
    cdef double fe, hg
    for i in range(cap):
        fe = f * e[i]
        hg = h * g[i] if g != NULL else 0.0
        if fe == 0.0 and hg == 0.0:
            continue
        row = &A[i * cap]
        if hg == 0.0:
            for j in range(cap):
                row[j] += fe * e[j]
        else:
            for j in range(cap):
                row[j] += fe * e[j] + hg * g[j]


cdef double span_distance(OnlineLearner lr, Inverse* v) except? -1.0 nogil:
    """``d = K_S^{-1} k_t`` into ``v.d`` (by cell; the round's kernel row
    into ``v.k_vec``); returns ``delta^2 = k_tt - k_t^T d``, 0 when x_t lies
    in span S (``delta^2 <= SPAN_TOL k_tt``)."""
    cdef Py_ssize_t i, c, cap = lr.capacity
    cdef double* k_vec = v.k_vec
    cdef double* d = v.d
    cdef double delta2
    lr.ensure_row()
    for c in range(cap):
        k_vec[c] = 0.0
    for i in range(lr.n_sv):
        c = lr.order[i]
        k_vec[c] = lr.k_row[c]
    for c in range(cap):
        d[c] = dense_dot(&v.A[c * cap], k_vec, cap)
    delta2 = lr.k_tt - dense_dot(k_vec, d, cap)
    v.k_d_magnitude[0] = 0.0
    for i in range(lr.n_sv):
        c = lr.order[i]
        v.k_d_magnitude[0] += fabs(k_vec[c] * d[c])
    if not is_finite(delta2):
        raise_not_finite(b"The distance of x_t from the span of the support set")
    if delta2 <= SPAN_TOL * lr.k_tt or delta2 <= 0.0:
        return 0.0
    return delta2


cdef double bordered_diagonal(OnlineLearner lr, Inverse* v, double delta2,
                              Py_ssize_t n) noexcept nogil:
    """``G``'s diagonal on the oldest ``n`` support vectors (S) into
    ``v.g_diag``: ``A_cc + d_c^2 / delta^2``; returns ``G``'s largest
    diagonal entry (``1 / delta^2`` for x_t's)."""
    cdef Py_ssize_t i, c, cap = lr.capacity
    cdef double peak = 1.0 / delta2
    cdef double* d = v.d
    cdef double* g_diag = v.g_diag
    for i in range(n):
        c = lr.order[i]
        g_diag[c] = v.A[c * cap + c] + d[c] * d[c] / delta2
        if g_diag[c] > peak:
            peak = g_diag[c]
    return peak


cdef int border(OnlineLearner lr, Inverse* v, Py_ssize_t cell, double delta2) except -1 nogil:
    """x_t was appended (the newest, in ``cell``) below the budget: the new
    inverse is ``G``, ``A`` plus the border ``[d; -1] [d; -1]^T / delta^2``."""
    cdef double peak = bordered_diagonal(lr, v, delta2, lr.n_sv - 1)
    v.d[cell] = -1.0
    rank_two(lr, v.A, v.d, 1.0 / delta2, NULL, 0.0)
    return note_drift(lr, v, peak, delta2, peak)


cdef Py_ssize_t inverse_removal(OnlineLearner lr, Inverse* v, double delta2, Weights w,
                                double* g_rr, double* g_t, double* peak) except -1 nogil:
    """|S| = B: the position ``r`` of least ``w_r s_r``, ``s_r = 1 / G_rr``
    (:func:`weight_of`), ties to the oldest; ``G_rr`` into
    ``g_rr``, column ``r`` of ``G`` (:func:`removal_column`) into ``v.g``
    and its entry for x_t into ``g_t``, ``G``'s largest diagonal entry into
    ``peak``."""
    cdef Py_ssize_t i, c, r
    cdef double s
    peak[0] = bordered_diagonal(lr, v, delta2, lr.n_sv)
    for i in range(lr.n_sv):        # s_r = 1 / G_rr
        c = lr.order[i]
        s = 1.0 / v.g_diag[c] if v.g_diag[c] > 0.0 else 0.0
        v.values[i] = weight_of(w, c) * s
    r = oldest_least(v.values, lr.n_sv, REMOVAL_SCORE)
    c = lr.order[r]
    g_rr[0] = v.g_diag[c]
    if not (g_rr[0] > 0.0 and is_finite(g_rr[0])):
        raise_not_finite(b"The inverse Gram matrix of the budgeted Passive-Aggressive")
    g_t[0] = removal_column(lr, v, c, delta2)
    return r


cdef double removal_column(OnlineLearner lr, Inverse* v, Py_ssize_t c,
                           double delta2) noexcept nogil:
    """Column ``c`` (the vector removed) of ``G`` over ``U - {c}`` into
    ``v.g``: ``A[:, c] + d d_c / delta^2`` on S, 0 in ``c`` (and ``d_c`` to
    0); returns its entry for x_t, ``-d_c / delta^2``."""
    cdef Py_ssize_t i, cap = lr.capacity
    cdef double* d = v.d
    cdef double* g = v.g
    cdef double d_r = d[c]
    for i in range(cap):
        g[i] = v.A[i * cap + c] + d[i] * d_r / delta2
    g[c] = 0.0
    d[c] = 0.0
    return -d_r / delta2


cdef int downdate(OnlineLearner lr, Inverse* v, Py_ssize_t cell, double g_t, double g_rr,
                  double delta2, double peak) except -1 nogil:
    """x_t was appended in ``cell`` after the removal of column ``g``'s
    vector: the new inverse is ``G`` bordered and downdated, ``A + [d; -1]
    [d; -1]^T / delta^2 - g g^T / G_rr``, one pass; its largest diagonal
    entry from ``G``'s (no pass over ``A``'s diagonal, which is strided)."""
    cdef Py_ssize_t i, c
    cdef double largest, s
    v.d[cell] = -1.0
    v.g[cell] = g_t
    rank_two(lr, v.A, v.d, 1.0 / delta2, v.g, -1.0 / g_rr)
    largest = 1.0 / delta2 - g_t * g_t / g_rr
    for i in range(lr.n_sv - 1):
        c = lr.order[i]
        s = v.g_diag[c] - v.g[c] * v.g[c] / g_rr
        if s > largest:
            largest = s
    return note_drift(lr, v, peak, delta2, largest)


cdef int note_drift(OnlineLearner lr, Inverse* v, double peak, double delta2,
                    double largest) except -1 nogil:
    """After an update of the inverse (``peak``: the largest diagonal entry
    of the bordered ``G``, ``delta2``: the round's ``delta^2``, ``largest``:
    the new inverse's largest diagonal entry).

    The round's ``delta^2 = k_tt - k^T d`` is a difference of sums of at
    most ``k_tt + sum |k_c d_c|``: its relative error, up to that over
    ``delta^2`` (in units of the unit roundoff), is that of the update
    ``[d; -1] [d; -1]^T / delta^2`` and of ``G``, whose entries are at most
    ``peak``; the downdate to the new ``K_S^{-1}`` keeps that absolute
    error, however small its entries.  ``drift`` sums these bounds in
    quadrature (rounding errors of different rounds are independent: they
    add up like a random walk, the square root of the sum of squares, as in
    Higham's probabilistic error analysis; a plain sum checked every ~13
    updates on a9a at B = 500, where the updates stayed accurate).
    ``K_S^{-1}`` computed afresh has an error of about the unit roundoff
    times its largest entry (its largest diagonal entry: it is SPD); when
    ``drift`` exceeds ``CHECK_DRIFT`` times that, or the error it bounds
    exceeds ``RESIDUAL_TOL`` (``drift eps > RESIDUAL_TOL``: within 1e3 of a
    fresh inverse may still be too inaccurate when ``K_S`` is
    ill-conditioned), :func:`check_inverse` measures the error
    (doc/algorithms.md#bpa)."""
    cdef double bound
    if not (is_finite(peak) and is_finite(v.k_d_magnitude[0])):
        raise_not_finite(b"The inverse Gram matrix of the budgeted Passive-Aggressive")
    bound = peak * (lr.k_tt + v.k_d_magnitude[0]) / delta2
    v.drift[0] = sqrt(v.drift[0] * v.drift[0] + bound * bound)
    if not (v.drift[0] <= CHECK_DRIFT * largest
            and v.drift[0] * DBL_EPSILON <= RESIDUAL_TOL):  # (NaN: check)
        check_inverse(lr, v)
    return 0


cdef double residual(OnlineLearner lr, Inverse* v) noexcept nogil:
    """``max_c |(K_S (inverse u))_c - u_c|`` over the support cells and two
    probes ``u``: ``1 + frac((c + 1) phi)`` and ``1 + frac((c + 1) sqrt 2)``
    (``phi`` the golden ratio; values in [1, 2), no two cells alike: an
    error of opposite signs on two near-duplicates, which cancels in ``u =
    1``, shows unless the cells are close in both sequences), two O(B^2)
    passes (``d``, ``g``, ``values``, ``k_vec`` as scratch; NaN stays NaN)."""
    cdef Py_ssize_t i, c, cap = lr.capacity
    cdef double* u = v.g
    cdef double* w1 = v.k_vec
    cdef double* z = v.d
    cdef double* w = v.values
    cdef const double* row
    cdef double r, worst = 0.0
    for c in range(cap):
        u[c] = 0.0
        w1[c] = 0.0
    for i in range(lr.n_sv):
        c = lr.order[i]
        r = (c + 1) * 0.6180339887498949
        u[c] = 1.0 + (r - <double>(<long long>r))
        r = (c + 1) * 1.4142135623730951
        w1[c] = 1.0 + (r - <double>(<long long>r))
    for c in range(cap):
        row = &v.A[c * cap]
        z[c] = dense_dot(row, u, cap)
        w[c] = dense_dot(row, w1, cap)
    for i in range(lr.n_sv):      # (the Gram matrix's free cells are stale)
        c = lr.order[i]
        row = &lr.gram[c, 0]
        r = fabs(dense_dot(row, z, cap) - u[c])
        if not (r <= worst):
            worst = r
        r = fabs(dense_dot(row, w, cap) - w1[c])
        if not (r <= worst):
            worst = r
    return worst


cdef int check_inverse(OnlineLearner lr, Inverse* v) except -1 nogil:
    """Measure :func:`residual`; above ``RESIDUAL_TOL`` and above the floor
    (what the last recomputation reached), recompute the inverse from the
    Gram matrix and set the floor to ten times its residual.  The floor
    halves at every check that passes, so a support set that became better
    conditioned gets its tolerance back.  ``drift`` restarts from 0."""
    cdef double res = residual(lr, v)
    v.drift[0] = 0.0
    v.n_checks[0] += 1
    if res <= RESIDUAL_TOL or res <= v.residual_floor[0]:
        v.residual_floor[0] *= 0.5
        return 0
    if refresh_inverse(lr, v):
        res = residual(lr, v)
        v.residual_floor[0] = 10.0 * res if is_finite(res) else 0.0
    else:
        v.residual_floor[0] = res if is_finite(res) else 0.0
    return 0


cdef int refresh_inverse(OnlineLearner lr, Inverse* v) except -1 nogil:
    """The inverse = ``K_S^{-1}`` computed afresh from the Gram matrix
    (LAPACK's Cholesky factorization ``dpotrf`` and ``dpotri``, O(B^3)); 1
    if done, 0 (the incremental inverse left in place) if the Gram matrix is
    not numerically positive definite."""
    cdef int n = <int>lr.n_sv, info = 0
    cdef char uplo = b'L'
    cdef Py_ssize_t i, j, ci, cj, cap = lr.capacity
    cdef double x
    cdef double* M = v.lapack_work
    if n == 0:
        return 0
    for i in range(n):
        ci = lr.order[i]
        for j in range(n):
            M[i * n + j] = lr.gram[ci, lr.order[j]]
        M[i * n + i] = lr.kself[ci]
    # (M is symmetric: row-major or column-major alike)
    dpotrf(&uplo, &n, M, &n, &info)
    if info != 0:
        return 0
    dpotri(&uplo, &n, M, &n, &info)
    if info != 0:
        return 0
    for i in range(n):
        if not (M[i * n + i] > 0.0 and is_finite(M[i * n + i])):
            return 0
    for i in range(n):          # LAPACK's lower triangle (r, c), r >= c: M[c * n + r]
        ci = lr.order[i]
        for j in range(i, n):
            cj = lr.order[j]
            x = M[i * n + j]
            v.A[ci * cap + cj] = x
            v.A[cj * cap + ci] = x
    v.n_refreshes[0] += 1
    return 1


# ----------------------------------------------------------------------
# The Python-level upkeep of those arrays, for either learner (their
# attributes have the same names)
# ----------------------------------------------------------------------

def _empty_geometry(lr):
    """Every geometry array empty (before the engine's ``__init__`` grows
    them; ``make_scratch`` keeps the scratch arrays' values)."""
    lr.nearest = np.zeros(0, dtype=np.intp)
    lr.nearest_dist = np.zeros(0)
    lr.inverse = np.zeros((0, 0))
    for name in _SCRATCH:
        setattr(lr, name, np.zeros(0))


def _start_counts(lr, double C):
    lr.C = C
    lr.n_removals = lr.n_projections = lr.n_checks = lr.n_refreshes = 0
    lr.drift = lr.residual_floor = 0.0


def _grow_geometry(lr, Py_ssize_t new_capacity):
    """The geometry arrays at ``new_capacity`` cells (after the store grew),
    their values kept; then the scratch."""
    cdef Py_ssize_t i, old = lr.nearest.shape[0]
    cdef Py_ssize_t[::1] nearest = np.full(new_capacity, -1, dtype=np.intp)
    cdef Py_ssize_t[::1] previous = lr.nearest
    for i in range(min(old, new_capacity)):     # (a NumPy slice assignment: ~2 us)
        nearest[i] = previous[i]
    lr.nearest = nearest
    lr.nearest_dist = _resized(lr.nearest_dist, new_capacity)
    if lr.maintenance == RULE_PROJECTION:
        inverse = np.zeros((new_capacity, new_capacity))
        old = lr.inverse.shape[0]
        inverse[:old, :old] = lr.inverse
        lr.inverse = inverse
    _make_scratch(lr)


def _make_scratch(lr):
    """The scratch arrays at ``capacity`` cells, their values kept (a BPA-P
    round that inserts grows the learner after computing ``d``); BPA-S and
    BPA-NN use ``values`` alone (the others stay empty: each array costs a
    few microseconds at every growth)."""
    lr.values = _resized(lr.values, lr.capacity)
    if lr.maintenance != RULE_PROJECTION:
        return
    for name in ("k_vec", "d_vec", "g_vec", "g_diag"):
        setattr(lr, name, _resized(getattr(lr, name), lr.capacity))
    lr.lapack_work = np.zeros(lr.capacity * lr.capacity)


def _geometry_problem(lr):
    """What is wrong with the rule's parameters, counters and geometry
    arrays of either learner, or None (then the scratch is sized)."""
    cdef Py_ssize_t i, c, n
    if not (1 <= lr.budget and lr.n_sv <= lr.budget and lr.capacity - 1 <= lr.budget):
        return (f"budget={lr.budget} is below 1 or below n_sv={lr.n_sv}, or "
                f"capacity={lr.capacity} exceeds budget + 1")
    if not (lr.C > 0 and is_finite(lr.C)):
        return f"C={lr.C} is not a positive number"
    if lr.maintenance not in (RULE_SIMPLE, RULE_NEAREST, RULE_PROJECTION):
        return f"maintenance={lr.maintenance} is no rule"
    if lr.maintenance == RULE_NEAREST and not lr.track_gram:
        return "BPA-NN without the Gram matrix"
    if lr.maintenance == RULE_PROJECTION and not lr.track_gram:
        return "BPA-P without the Gram matrix"
    if not (lr.drift >= 0.0 and is_finite(lr.drift) and lr.residual_floor >= 0.0
            and is_finite(lr.residual_floor)) or lr.n_checks < 0 or lr.n_refreshes < 0:
        return (f"drift={lr.drift}, residual_floor={lr.residual_floor}, "
                f"n_checks={lr.n_checks}, n_refreshes={lr.n_refreshes} are not "
                f"non-negative numbers")
    problem = size_problem({"nearest": lr.nearest, "nearest_dist": lr.nearest_dist},
                           lr.capacity)
    if problem is None and lr.maintenance == RULE_PROJECTION:
        problem = square_problem("the inverse Gram matrix", lr.inverse, lr.capacity)
    if problem is None and lr.maintenance == RULE_NEAREST:
        order = np.asarray(lr.order)[:lr.n_sv]
        support = set(order.tolist())
        for c in order:
            n = lr.nearest[c]
            if (n == -1) != (lr.n_sv == 1) or (n != -1 and (n == c or n not in support)):
                return f"the nearest neighbour {n} of cell {c} is no other support vector"
            if n != -1 and not is_finite(lr.nearest_dist[c]):
                return f"the distance to the nearest neighbour of cell {c} is not finite"
    if problem is None and (lr.values.shape[0] < lr.capacity or (
            lr.maintenance == RULE_PROJECTION
            and lr.lapack_work.shape[0] < lr.capacity * lr.capacity)):
        _make_scratch(lr)     # (a state set with a larger capacity)
    return problem


def _inverse_gram(lr):
    """``K_S^{-1}`` (BPA-P), oldest first."""
    cells = lr.support_order()
    return np.asarray(lr.inverse)[np.ix_(cells, cells)].copy()


def _nearest_positions(lr):
    """The position of each support vector's nearest neighbour (BPA-NN),
    oldest first; -1 for a vector alone."""
    cells = lr.support_order()
    where = {int(c): i for i, c in enumerate(cells)}
    return np.array([where.get(int(n), -1) for n in np.asarray(lr.nearest)[cells]],
                    dtype=np.intp)


# the scratch arrays of either learner (not state)
_SCRATCH = ("values", "k_vec", "d_vec", "g_vec", "g_diag", "lapack_work")


# the rule's state in either learner (parameters, counters, geometry)
_RULE_STATE = ("budget", "C", "maintenance", "n_removals", "n_projections", "nearest",
               "nearest_dist", "inverse", "drift", "residual_floor", "n_checks", "n_refreshes")


cdef class BudgetedPALearner(OnlineLearner):
    """One binary BPA learner.

    Parameters
    ----------
    budget : int
        ``B >= 1``.
    C : float
        The PA-I cap ``C > 0`` (``C w`` for an example of weight ``w``,
        the engine's ``example_weight``).
    maintenance : int
        ``SIMPLE``, ``NEAREST`` or ``PROJECTION``.
    """

    cdef public Py_ssize_t budget
    cdef public double C
    cdef public int maintenance
    cdef public long long n_removals       # rounds that removed a support vector
    cdef public long long n_projections    # BPA-P rounds whose step was projected onto S
    # BPA-NN: each support cell's nearest other support vector (a cell, -1
    # when it is alone) and their squared feature-space distance
    cdef public Py_ssize_t[::1] nearest
    cdef public double[::1] nearest_dist
    # BPA-P: K_S^{-1} by cell (zero rows and columns for free cells); a
    # bound on the rounding error its updates added since it was last
    # checked, in units of the unit roundoff (note_drift); the residual a
    # check tolerates besides RESIDUAL_TOL (check_inverse); how many checks
    # and recomputations from the Gram matrix there were
    cdef public double[:, ::1] inverse
    cdef public double drift
    cdef public double residual_floor
    cdef public long long n_checks
    cdef public long long n_refreshes
    # scratch (not state; public for the upkeep functions): removal scores
    # by position; BPA-P, by cell: the round's kernel row (0 for free cells),
    # d = K_S^{-1} k_t, the update vectors, the diagonal of G, the n x n Gram
    # matrix factored (see ``Inverse``)
    cdef public double[::1] values, k_vec, d_vec, g_vec, g_diag, lapack_work
    cdef double k_d_magnitude           # BPA-P: sum_c |k_c d_c| of the round

    _state_names = OnlineLearner._state_names + _RULE_STATE

    def __cinit__(self, *args, **kwargs):
        _empty_geometry(self)       # (before the engine's __init__ grows them)

    def __init__(self, Py_ssize_t budget=1, double C=1.0, int maintenance=RULE_SIMPLE):
        self.maintenance = maintenance     # (before the engine's __init__ calls grow,
        self.budget = budget               # and reads capacity_limit)
        OnlineLearner.__init__(self, track_gram=maintenance != RULE_SIMPLE)
        _start_counts(self, C)

    cdef Py_ssize_t capacity_limit(self) noexcept nogil:
        """A learner never holds more than ``budget`` vectors, and a round
        needs one free cell besides: ``budget + 1``."""
        return self.budget + 1      # (budget <= MAX_BUDGET: no overflow)

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        OnlineLearner.grow(self, new_capacity)
        _grow_geometry(self, new_capacity)
        return 0

    def check_policy_state(self, Py_ssize_t pool_size):
        return _geometry_problem(self)

    # ------------------------------------------------------------------
    # the saved state: the used cells only
    # ------------------------------------------------------------------
    def cells_in_order(self):
        """Whether the support vectors are in cells ``0 .. n_sv - 1`` and
        the free stack holds the cells above, the lowest on top, every
        per-cell array ``capacity`` long: the layout a learner's own rounds
        keep (a removal frees the cell the round's new vector takes), which
        the cells beyond ``n_sv`` and the capacity can be dropped from and
        rebuilt exactly (:meth:`get_state`, :meth:`set_state`).  False for
        any other state, however inconsistent (no exception).  O(capacity),
        compiled: the ``partial_fit`` snapshot asks it on every call."""
        cdef Py_ssize_t i, c, n = self.n_sv, cap = self.capacity
        cdef unsigned char[::1] seen
        if not (0 <= n <= cap and self.n_free == cap - n):
            return False
        if (self.order is None or self.free_cells is None or self.alpha is None
                or self.slot is None or self.kself is None or self.k_row is None
                or self.nearest is None or self.nearest_dist is None
                or self.gram is None or self.inverse is None):
            return False
        if (self.order.shape[0] != cap or self.free_cells.shape[0] != cap
                or self.alpha.shape[0] != cap or self.slot.shape[0] != cap
                or self.kself.shape[0] != cap or self.k_row.shape[0] != cap
                or self.nearest.shape[0] != cap or self.nearest_dist.shape[0] != cap):
            return False
        if self.track_gram and not (self.gram.shape[0] == self.gram.shape[1] == cap):
            return False
        if self.maintenance == RULE_PROJECTION and not (
                self.inverse.shape[0] == self.inverse.shape[1] == cap):
            return False
        seen = np.zeros(n, dtype=np.uint8)
        for i in range(n):
            c = self.order[i]
            if c < 0 or c >= n or seen[c]:
                return False
            seen[c] = 1
        for i in range(cap - n):
            if self.free_cells[i] != cap - 1 - i:
                return False
        return True

    def get_state(self):
        """The learner's state (arrays copied), its cells cut to the used
        ones (see :meth:`cells_in_order`): ``capacity = n_sv``, no free
        cell, the per-cell arrays ``n_sv`` long and the Gram and inverse
        matrices ``n_sv x n_sv``, so that a saved model's size follows its
        support set, not its budget.  :meth:`set_state` rebuilds the
        capacity."""
        cdef Py_ssize_t n = self.n_sv
        if not self.cells_in_order():
            return OnlineLearner.get_state(self)
        state = {}
        for name in self._state_names:
            value = getattr(self, name)
            if name in _CELL_ARRAYS:
                value = np.asarray(value)[:n]
            elif name in _CELL_MATRICES:
                value = np.asarray(value)[:n, :n]
            state[name] = _copied(value)
        state.update(capacity=n, n_free=0, free_cells=np.zeros(n, dtype=np.intp))
        return state

    def set_state(self, state):
        """Take ``state`` (``get_state``'s, or a file's).  A state in the
        layout of :meth:`cells_in_order` (what :meth:`get_state` gives, and
        a file of an earlier version, whose arrays have ``budget + 1``
        cells from the first row) is given the capacity its support set
        grew to (:meth:`grown_capacity`); any other state is taken as it is
        (the entry checks of the next call refuse an inconsistent one)."""
        OnlineLearner.set_state(self, state)
        if 1 <= self.budget and self.n_sv <= self.budget and self.cells_in_order():
            self.keep_used_cells()
            self.grow(self.grown_capacity(self.n_sv))

    cdef int keep_used_cells(self) except -1:
        """Cut the per-cell arrays to cells ``0 .. n_sv - 1`` (the layout
        of :meth:`cells_in_order`): ``capacity = n_sv``, no free cell; then
        :meth:`grow` gives the cells beyond as a new learner's."""
        cdef Py_ssize_t n = self.n_sv
        for name in _CELL_ARRAYS:
            setattr(self, name, np.array(np.asarray(getattr(self, name))[:n]))
        for name in _CELL_MATRICES:
            setattr(self, name, np.array(np.asarray(getattr(self, name))[:n, :n]))
        self.free_cells = np.zeros(n, dtype=np.intp)
        self.n_free = 0
        self.capacity = n
        return 0

    # ------------------------------------------------------------------
    # the round
    # ------------------------------------------------------------------
    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef double score, loss, cap, tau
        # the step depends on the score's value: it is summed over the
        # gathered row by cell (free cells: alpha 0), whatever the chunking,
        # so that the model is the same bit for bit however the stream is
        # cut into calls (the chunk's one-pass sum, ``dot_row``, adds the
        # vectors the chunk added last)
        self.ensure_row()
        score = dense_dot(&self.alpha[0], &self.k_row[0], self.capacity) * self.scale
        if not is_finite(score):
            raise_not_finite(b"The score of the budgeted Passive-Aggressive")
        loss = 1.0 - y * score
        # a zero weight: no step and no removal (the model as if x_t were
        # absent; the round is still counted)
        if loss <= 0.0 or not (self.example_weight > 0.0):
            return score
        # PA-I's step with the cap C w (the weight w scales x_t's slack in
        # the PA problem; w = 1 without weights); the cap when k(x_t, x_t)
        # <= 0 (x_t is then no direction)
        cap = self.C * self.example_weight
        tau = cap
        if self.k_tt > 0.0 and loss / self.k_tt < cap:
            tau = loss / self.k_tt
        if self.maintenance == RULE_PROJECTION:
            self.projection_round(y * tau)
        elif self.n_sv < self.budget:
            self.insert(y * tau)
        else:
            self.remove_and_insert(y * tau)
        self.n_updates += 1
        return score

    cdef int insert(self, double coef) except -1 nogil:
        """Append x_t (BPA-S and BPA-NN)."""
        cdef Py_ssize_t cell = self.append_current(coef)
        if self.maintenance == RULE_NEAREST:
            meet_newest(self, &self.nearest[0], &self.nearest_dist[0], cell)
        return 0

    cdef int remove_and_insert(self, double step) except -1 nogil:
        """|S| = B, BPA-S or BPA-NN: remove the best ``r``, let ``V`` absorb
        it, append x_t."""
        cdef Py_ssize_t c, r, partner
        cdef double a, share_t, share_n
        cdef const Py_ssize_t* nearest = (&self.nearest[0] if self.maintenance == RULE_NEAREST
                                          else NULL)
        self.ensure_row()
        removal_values(self, nearest, CoefWeights(&self.alpha[0], self.scale), &self.values[0])
        r = oldest_least(&self.values[0], self.n_sv, REMOVAL_SCORE)
        c = self.order[r]
        a = self.alpha[c] * self.scale
        removal_shares(self, nearest[c] if nearest != NULL else -1, c, &share_t, &share_n,
                       &partner)
        if partner >= 0:
            self.add_to_coef(partner, a * share_n)
        self.remove_at(r)
        self.n_removals += 1
        c = self.append_current(a * share_t + step)
        if self.maintenance == RULE_NEAREST:
            meet_newest(self, &self.nearest[0], &self.nearest_dist[0], c)
        return 0

    cdef int on_remove(self, Py_ssize_t cell) except -1 nogil:
        return forget_cell(self, self.maintenance, self.nearest, self.inverse, cell)

    # ------------------------------------------------------------------
    # BPA-P
    # ------------------------------------------------------------------
    cdef Inverse inverse_view(self) noexcept nogil:
        return inverse_of(self.inverse, self.k_vec, self.d_vec, self.g_vec, self.g_diag,
                          self.values, self.lapack_work, &self.drift, &self.residual_floor,
                          &self.n_checks, &self.n_refreshes, &self.k_d_magnitude)

    cdef int projection_round(self, double step) except -1 nogil:
        """BPA-P: project the step onto S, append x_t, or remove the best
        ``r`` from ``U = S + {t}`` and let the rest absorb it."""
        cdef Py_ssize_t i, c, r, cell
        cdef Inverse v = self.inverse_view()
        cdef double delta2 = span_distance(self, &v), g_rr, a_r, g_t, peak
        if delta2 == 0.0:
            for i in range(self.n_sv):
                c = self.order[i]
                if v.d[c] != 0.0:
                    self.add_to_coef(c, step * v.d[c])
            self.n_projections += 1
            return 0
        if self.n_sv < self.budget:
            cell = self.append_current(step)
            v = self.inverse_view()     # (the insertion may have grown the learner)
            return border(self, &v, cell, delta2)
        r = inverse_removal(self, &v, delta2, CoefWeights(&self.alpha[0], self.scale), &g_rr,
                            &g_t, &peak)
        a_r = self.alpha[self.order[r]] * self.scale
        for i in range(self.n_sv):
            if i != r:
                self.add_to_coef(self.order[i], -a_r * v.g[self.order[i]] / g_rr)
        self.remove_at(r)               # (clears row and column c of A)
        self.n_removals += 1
        cell = self.append_current(-a_r * g_t / g_rr + step)
        return downdate(self, &v, cell, g_t, g_rr, delta2, peak)

    # ------------------------------------------------------------------
    # read-out (for tests)
    # ------------------------------------------------------------------
    def inverse_gram(self):
        """``K_S^{-1}`` (BPA-P), oldest first."""
        return _inverse_gram(self)

    def nearest_positions(self):
        """The position of each support vector's nearest neighbour (BPA-NN),
        oldest first; -1 for a vector alone."""
        return _nearest_positions(self)


cdef class SharedBPALearner(SharedSupportLearner):
    """BPA on ``k`` classes with one shared support set
    (doc/algorithms.md#bpa, "Shared multi-class mode").

    Round with class ``y``: the class scores before the step, the runner-up
    ``q = argmax_{c != y} f_c`` (ties: the lowest index) and the margin
    ``m = f_y - f_q``; on ``l = 1 - m > 0`` the step is ``tau = min(C w, l
    / (2 k(x, x)))`` (``C w`` when ``k(x, x) <= 0``; none for ``w = 0``) and
    the step's row ``tau (e_y - e_q)``.  Below the budget x_t is appended
    with that row; at the budget the vector ``r`` of least ``||alpha_r||^2
    s_r`` (``s_r`` the binary rule's removal score, ties: oldest) is
    removed, every class's part of its row projected onto span ``V`` with
    the same kernel coefficients ``K_V^{-1} k_{V,r}`` (added, times the row
    ``alpha_r``, to the rows of ``V``), and x_t appended with its share of
    ``alpha_r`` plus the step's row.  BPA-P with x_t in span S projects the
    step's row onto S.  ``tau`` holds the rows (in the units of the engine's
    scale) and ``row_sqnorm`` their squared norms; the geometry (``nearest``,
    ``inverse``, ...) is the binary learner's, by the same functions.

    ``process_example`` returns ``f_y - f_q`` (a mistake when ``<= 0``,
    except a tie the true class wins: the smallest positive double).

    Parameters
    ----------
    n_classes : int
        ``k`` (the estimator uses it for 3 or more; 1 and 2 work: a stream
        without ``classes=`` starts with the classes of its first rows).
    budget, C, maintenance :
        As :class:`BudgetedPALearner`'s.
    """

    cdef public Py_ssize_t budget
    cdef public double C
    cdef public int maintenance
    cdef public long long n_removals, n_projections, n_checks, n_refreshes
    # the geometry, as BudgetedPALearner's: nearest neighbours (BPA-NN),
    # K_S^{-1} by cell and the upkeep of its accuracy (BPA-P)
    cdef public Py_ssize_t[::1] nearest
    cdef public double[::1] nearest_dist
    cdef public double[:, ::1] inverse
    cdef public double drift, residual_floor
    cdef public double[::1] row_sqnorm     # ||tau_c||^2 of every cell's row (stale if free)
    cdef public double[::1] new_row        # the row of the round's x_t (tau units)
    # scratch (not state), as BudgetedPALearner's
    cdef public double[::1] values, k_vec, d_vec, g_vec, g_diag, lapack_work
    cdef double k_d_magnitude

    _per_class_names = SharedSupportLearner._per_class_names + ("new_row",)
    _state_names = SharedSupportLearner._state_names + _RULE_STATE + ("row_sqnorm", "new_row")

    def __cinit__(self, *args, **kwargs):
        _empty_geometry(self)       # (before the engine's __init__ grows them)
        self.row_sqnorm = np.zeros(0)

    def __init__(self, Py_ssize_t n_classes=3, Py_ssize_t budget=1, double C=1.0,
                 int maintenance=RULE_SIMPLE):
        self.maintenance = maintenance     # (before the engine's __init__ calls grow,
        self.budget = budget               # and reads capacity_limit)
        SharedSupportLearner.__init__(self, n_classes, track_gram=maintenance != RULE_SIMPLE)
        _start_counts(self, C)
        self.new_row = np.zeros(n_classes)

    cdef Py_ssize_t capacity_limit(self) noexcept nogil:
        """As :meth:`BudgetedPALearner.capacity_limit`: ``budget + 1``."""
        return self.budget + 1

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        SharedSupportLearner.grow(self, new_capacity)
        self.row_sqnorm = _resized(self.row_sqnorm, new_capacity)
        _grow_geometry(self, new_capacity)
        return 0

    def check_policy_state(self, Py_ssize_t pool_size):
        cdef Py_ssize_t i, c
        problem = (SharedSupportLearner.check_policy_state(self, pool_size)
                   or size_problem({"row_sqnorm": self.row_sqnorm}, self.capacity)
                   or size_problem({"new_row": self.new_row}, self.n_outputs, "entries")
                   or _geometry_problem(self))
        if problem is None:
            for i in range(self.n_sv):      # (the same sum as the rounds': exact)
                c = self.order[i]
                if not (self.row_sqnorm[c] == self.row_norm(c)):
                    return f"row_sqnorm of cell {c} is not the squared norm of its row"
        return problem

    def add_class(self, Py_ssize_t position):
        """The base's zero column, then every row's squared norm anew: the
        same value, but the longer row's sum may round otherwise, and the
        rounds (and the check of a loaded state) compare it exactly."""
        cdef Py_ssize_t i, c
        SharedSupportLearner.add_class(self, position)
        for i in range(self.n_sv):
            c = self.order[i]
            self.row_sqnorm[c] = self.row_norm(c)

    cdef inline double row_norm(self, Py_ssize_t c) noexcept nogil:
        """``||tau_c||^2``."""
        return dense_dot(&self.tau[c, 0], &self.tau[c, 0], self.n_outputs)

    # ------------------------------------------------------------------
    # the round
    # ------------------------------------------------------------------
    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef Py_ssize_t label = self.class_index(y), runner
        cdef double margin, loss, cap, tau
        margin = self.round_margin(label, &runner)
        if runner < 0:                  # one class: no rival, no step
            return margin
        if not is_finite(margin):
            raise_not_finite(b"The margin of the budgeted Passive-Aggressive")
        loss = 1.0 - margin
        if loss <= 0.0 or not (self.example_weight > 0.0):
            return self.round_value(margin, label, runner)
        # the binary step with ||phi(x) (e_y - e_q)||^2 = 2 k(x, x) in place
        # of k(x, x), capped by C w
        cap = self.C * self.example_weight
        tau = cap
        if self.k_tt > 0.0 and loss / (2.0 * self.k_tt) < cap:
            tau = loss / (2.0 * self.k_tt)
        self.pair_row(&self.new_row[0], label, runner, tau / self.scale)
        if self.maintenance == RULE_PROJECTION:
            self.projection_round(label)
        elif self.n_sv < self.budget:
            self.insert(label)
        else:
            self.remove_and_insert(label)
        self.n_updates += 1
        return self.round_value(margin, label, runner)

    cdef Py_ssize_t insert(self, Py_ssize_t label) except -1 nogil:
        """Append x_t with ``new_row``; its cell."""
        cdef Py_ssize_t cell = self.append_pattern(label, &self.new_row[0])
        self.row_sqnorm[cell] = self.row_norm(cell)
        if self.maintenance == RULE_NEAREST:
            meet_newest(self, &self.nearest[0], &self.nearest_dist[0], cell)
        return cell

    cdef void absorb(self, Py_ssize_t cell, Py_ssize_t gone, double share) noexcept nogil:
        """Row ``cell`` += ``share`` times row ``gone`` (every class's part
        with the same kernel coefficient)."""
        cdef Py_ssize_t j
        cdef double* row = &self.tau[cell, 0]
        cdef const double* removed = &self.tau[gone, 0]
        for j in range(self.n_outputs):
            row[j] += share * removed[j]
        self.row_sqnorm[cell] = self.row_norm(cell)

    cdef int remove_and_insert(self, Py_ssize_t label) except -1 nogil:
        """|S| = B, BPA-S or BPA-NN: remove the vector of least
        ``||alpha_r||^2 s_r``, let ``V`` absorb its row, append x_t."""
        cdef Py_ssize_t j, c, r, partner
        cdef double share_t, share_n
        cdef const Py_ssize_t* nearest = (&self.nearest[0] if self.maintenance == RULE_NEAREST
                                          else NULL)
        removal_values(self, nearest, RowWeights(&self.row_sqnorm[0], self.scale * self.scale),
                       &self.values[0])
        r = oldest_least(&self.values[0], self.n_sv, REMOVAL_SCORE)
        c = self.order[r]
        removal_shares(self, nearest[c] if nearest != NULL else -1, c, &share_t, &share_n,
                       &partner)
        if partner >= 0:
            self.absorb(partner, c, share_n)
        for j in range(self.n_outputs):
            self.new_row[j] += share_t * self.tau[c, j]
        self.remove_at(r)
        self.n_removals += 1
        self.insert(label)
        return 0

    cdef int on_remove(self, Py_ssize_t cell) except -1 nogil:
        SharedSupportLearner.on_remove(self, cell)
        return forget_cell(self, self.maintenance, self.nearest, self.inverse, cell)

    cdef Inverse inverse_view(self) noexcept nogil:
        """BPA-P's ``Inverse`` on this learner's arrays (as the binary
        learner's)."""
        return inverse_of(self.inverse, self.k_vec, self.d_vec, self.g_vec, self.g_diag,
                          self.values, self.lapack_work, &self.drift, &self.residual_floor,
                          &self.n_checks, &self.n_refreshes, &self.k_d_magnitude)

    cdef int projection_round(self, Py_ssize_t label) except -1 nogil:
        """BPA-P on rows: project the step's row onto S (every class's part
        with the coefficients ``d = K_S^{-1} k_t``), append x_t, or remove
        the ``r`` of least ``||alpha_r||^2 / G_rr`` from ``U = S + {t}``
        and add ``-G_{j,r} / G_rr`` times its row to every other row ``j``
        (x_t's included)."""
        cdef Py_ssize_t i, j, c, r
        cdef Inverse v = self.inverse_view()
        cdef double delta2 = span_distance(self, &v), g_rr, g_t, peak
        cdef double* new_row = &self.new_row[0]
        if delta2 == 0.0:
            for i in range(self.n_sv):
                c = self.order[i]
                if v.d[c] != 0.0:
                    for j in range(self.n_outputs):
                        self.tau[c, j] += v.d[c] * new_row[j]
                    self.row_sqnorm[c] = self.row_norm(c)
            self.n_projections += 1
            return 0
        if self.n_sv == self.budget:
            r = inverse_removal(self, &v, delta2,
                                RowWeights(&self.row_sqnorm[0], self.scale * self.scale),
                                &g_rr, &g_t, &peak)
            c = self.order[r]
            for i in range(self.n_sv):
                if i != r and v.g[self.order[i]] != 0.0:
                    self.absorb(self.order[i], c, -v.g[self.order[i]] / g_rr)
            for j in range(self.n_outputs):
                new_row[j] += -g_t / g_rr * self.tau[c, j]
            self.remove_at(r)           # (clears row and column c of A)
            self.n_removals += 1
            return downdate(self, &v, self.insert(label), g_t, g_rr, delta2, peak)
        i = self.insert(label)
        v = self.inverse_view()         # (the insertion may have grown the learner)
        return border(self, &v, i, delta2)


# the per-cell arrays of the state (besides ``free_cells``) and its per-cell
# matrices (``gram`` 0 x 0 for BPA-S, ``inverse`` for all but BPA-P)
_CELL_ARRAYS = ("order", "alpha", "slot", "kself", "k_row", "nearest", "nearest_dist")
_CELL_MATRICES = ("gram", "inverse")
