# cython: language_level=3, cdivision=True
"""BSGD's merge search (doc/algorithms.md#bsgd,
doc/algorithms.md#bsgd-multi-class).

Merging two support vectors of an RBF expansion, ``x_m`` and a partner
``x_n`` with ``κ = k(x_m, x_n)``, into ``z = h x_m + (1 − h) x_n``: ``h``
maximizes the merged coefficient's size, and the partner of the least
degradation ``‖α_m φ(x_m) + α_n φ(x_n) − α_z φ(z)‖²`` is chosen.  Two
objectives:

* one coefficient per vector (binary BSGD): ``|α_z(h)|``, ``α_z = α_m
  κ^{(1−h)²} + α_n κ^{h²}``, by the golden-section search or read from its
  table ``h*(m, κ)`` (Glasmachers & Qaadan): :func:`coefficient_partner`;
* one coefficient row per vector (the shared multi-class mode): ``‖W_z(h)‖²``
  with ``W_z = κ^{(1−h)²} W_m + κ^{h²} W_n``, which depends on a pair only
  through ``‖W_m‖²``, ``‖W_n‖²``, ``⟨W_m, W_n⟩`` and ``κ`` (O(1) per probe),
  by the golden-section search or by a grid and safeguarded Newton steps:
  :func:`row_partner`.

The caller fills the candidates table (``_merge_search.pxd``); the search
fills in ``h``, the merged value and the degradation of every candidate.
"""

cimport cython
import numpy as np
from libc.math cimport exp, fabs, sqrt, INFINITY

from skbudget._elementwise cimport exp_inplace, log_inplace
from skbudget._kernel_rows cimport dense_dot
from skbudget._numbers cimport is_finite, oldest_least, raise_not_finite, tie_tolerance

# golden-section search: stop when the bracket is this short
cdef double GOLDEN_TOL = 1e-6
# the table's grid: nodes i / LOOKUP_STEPS, i = 0 .. LOOKUP_STEPS for κ and
# up to LOOKUP_STEPS / 2 for m (the share of the smaller coefficient, <= 1/2)
cdef enum:
    LOOKUP_STEPS = 400
    LOOKUP_ROWS = LOOKUP_STEPS // 2 + 1


def _first_least(values):
    """Python access to ``_numbers.oldest_least`` (for tests)."""
    cdef double[::1] v = np.ascontiguousarray(values, dtype=np.float64)
    if v.shape[0] == 0:
        raise ValueError("no values")
    return oldest_least(&v[0], v.shape[0], b"a test value")


# ----------------------------------------------------------------------
# merging (RBF): z = h x_m + (1 − h) x_n, α_z = α_m κ^{(1−h)²} + α_n κ^{h²}.
# κ^e is computed as exp(e ln κ) (ln κ once per candidate pair): one exp
# instead of one pow per term, the same function to a few ulps.
# ----------------------------------------------------------------------
cdef inline double merged_coefficient(double a_m, double a_n, double log_kappa,
                                      double h) noexcept nogil:
    return a_m * exp((1.0 - h) * (1.0 - h) * log_kappa) + a_n * exp(h * h * log_kappa)


cdef inline double merged_sqnorm(double norm_m, double norm_n, double cross, double log_kappa,
                                 double h) noexcept nogil:
    """``‖W_z(h)‖² = ‖W_m‖² A² + ‖W_n‖² B² + 2 ⟨W_m, W_n⟩ A B`` with
    ``A = κ^{(1−h)²}``, ``B = κ^{h²}`` (the multi-class rule).  ``A B`` is one product, so
    that swapping the two rows (``A`` and ``B``) gives the same bits: with
    ``‖W_m‖² = ‖W_n‖²`` the search's first comparison is then an exact tie,
    as the binary rule's is with ``α_m = α_n``."""
    cdef double A = exp((1.0 - h) * (1.0 - h) * log_kappa), B = exp(h * h * log_kappa)
    return norm_m * A * A + norm_n * B * B + 2.0 * cross * (A * B)


cdef inline double merge_objective(double first, double second, const double* cross,
                                   Py_ssize_t i, double log_kappa, double h) noexcept nogil:
    """What the merge search maximizes for partner ``i``: ``|α_z(h)|``
    (the binary rule: ``first = α_m``, ``second = α_n``; ``cross`` NULL) or
    ``‖W_z(h)‖²`` (the multi-class rule: ``first = ‖W_m‖²``, ``second = ‖W_n‖²``,
    ``cross[i] = ⟨W_m, W_n⟩``)."""
    if cross == NULL:
        return fabs(merged_coefficient(first, second, log_kappa, h))
    return merged_sqnorm(first, second, cross[i], log_kappa, h)


cdef void golden_section_search(double a_m, const double* a_n, const double* cross,
                                const double* log_kappa, double* lower, double* upper,
                                Py_ssize_t n) noexcept nogil:
    """For each of ``n`` partners, the ``h`` in [0, 1] that maximizes
    ``|α_z(h)|`` (with ``cross``: ``‖W_z(h)‖²``, :func:`merge_objective`;
    into ``lower``), by the golden-section search of the binary rule
    exactly: bracket ``[a, b] = [0, 1]``; each pass probes
    ``c = b − r (b − a)``, ``d = a + r (b − a)`` (recomputed, not reused);
    keep ``[a, d]`` if ``g(c) ≥ g(d)``, else ``[c, b]``; stop at
    ``b − a ≤ 1e-6``; ``h = (a + b) / 2``.  The ``n`` searches run in
    lockstep, one pass of each per sweep: their chains are independent, so
    the processor overlaps their ``exp`` calls.  (With ``α_m = α_n`` the
    first comparison is an exact tie, ``g(1 − r) = g(r)`` term for term: it
    keeps ``[0, r]``.)"""
    cdef double r = (sqrt(5.0) - 1.0) / 2.0, a, b, c, d
    cdef Py_ssize_t i
    cdef bint searching = True
    for i in range(n):
        lower[i] = 0.0
        upper[i] = 1.0
    while searching:
        searching = False
        for i in range(n):
            a = lower[i]
            b = upper[i]
            if b - a > GOLDEN_TOL:
                searching = True
                c = b - r * (b - a)
                d = a + r * (b - a)
                if merge_objective(a_m, a_n[i], cross, i, log_kappa[i], c) >= \
                        merge_objective(a_m, a_n[i], cross, i, log_kappa[i], d):
                    upper[i] = d
                else:
                    lower[i] = c
    for i in range(n):
        lower[i] = (lower[i] + upper[i]) / 2.0


cdef inline double merge_degradation(double a_m, double a_n, double kappa,
                                     double a_z) noexcept nogil:
    """‖α_m φ(x_m) + α_n φ(x_n) − α_z φ(z)‖² for the optimal ``α_z``."""
    return a_m * a_m + a_n * a_n + 2.0 * a_m * a_n * kappa - a_z * a_z


cdef Py_ssize_t best_partner(double first, double[:, ::1] cand, Py_ssize_t n,
                             bint rows) except -1 nogil:
    """The merge search over ``n`` candidate partners, the columns of
    ``cand`` (rows ``A_N``, ``KAPPA``, ``LOG_KAPPA`` and, for coefficient
    ``rows`` (the multi-class rule), ``CROSS`` filled; ``first`` is ``α_m``, or ``‖W_m‖²``):
    ``h`` by the golden-section search (into ``LOWER``), the merged
    coefficient ``α_z`` or squared norm ``‖W_z‖²`` (into ``UPPER``) and the
    degradation (``DEGRADATION``).  Returns the column of the least
    degradation (ties: the first; partners are in position order, so the
    oldest); a non-finite degradation (coefficients whose squares
    overflow) raises (``_numbers.oldest_least``)."""
    cdef Py_ssize_t i
    cdef double v
    golden_section_search(first, &cand[A_N, 0], &cand[CROSS, 0] if rows else NULL,
                          &cand[LOG_KAPPA, 0], &cand[LOWER, 0], &cand[UPPER, 0], n)
    for i in range(n):   # h is in LOWER now
        if rows:
            v = merged_sqnorm(first, cand[A_N, i], cand[CROSS, i], cand[LOG_KAPPA, i],
                              cand[LOWER, i])
            cand[DEGRADATION, i] = first + cand[A_N, i] + 2.0 * cand[KAPPA, i] * cand[CROSS, i] - v
        else:
            v = merged_coefficient(first, cand[A_N, i], cand[LOG_KAPPA, i], cand[LOWER, i])
            cand[DEGRADATION, i] = merge_degradation(first, cand[A_N, i], cand[KAPPA, i], v)
        cand[UPPER, i] = v
    return oldest_least(&cand[DEGRADATION, 0], n, b"A merge's degradation")


cdef Py_ssize_t coefficient_partner(double a_m, double[:, ::1] cand, Py_ssize_t n,
                                    int search) except -1 nogil:
    """The merge of one coefficient ``a_m`` (``α_m``) with the best of ``n``
    candidate partners (columns of ``cand``, rows ``A_N``, ``KAPPA`` and
    ``LOG_KAPPA`` filled): ``h`` by the golden-section search
    (``SEARCH_GOLDEN``) or from its table (``SEARCH_LOOKUP``,
    :func:`lookup_partner`); returns the column of the least degradation
    (:func:`best_partner`)."""
    if search == SEARCH_LOOKUP:
        return lookup_partner(a_m, cand, n)
    return best_partner(a_m, cand, n, False)


cdef Py_ssize_t row_partner(double norm_m, double[:, ::1] cand, Py_ssize_t n,
                            int search, const PendingInputs* pending) except -1 nogil:
    """The merge of one coefficient row (``norm_m = ‖W_m‖²``) with the best
    of ``n`` candidate partners (rows ``A_N = ‖W_n‖²``, ``KAPPA``,
    ``LOG_KAPPA`` and ``CROSS = ⟨W_m, W_n⟩`` filled): ``h`` maximizes
    ``‖W_z(h)‖²`` by the golden-section search (``SEARCH_GOLDEN``,
    :func:`best_partner`) or by a grid and safeguarded Newton steps
    (``SEARCH_LOOKUP``, :func:`newton_row_partner`; ``pending``: what the
    caller left to the search, ``PendingInputs``)."""
    if search == SEARCH_LOOKUP:
        return newton_row_partner(norm_m, cand, n, False, pending)
    fill_pending(cand, NULL, n, pending)
    return best_partner(norm_m, cand, n, True)


# ----------------------------------------------------------------------
# the merge search by table (Glasmachers & Qaadan 2018).  For a pair of the
# same sign, |α_z(h)| = (α_m + α_n) |m κ^{(1−h)²} + (1 − m) κ^{h²}| with
# m = α_m / (α_m + α_n): the best h depends on (m, κ) only.  The table
# holds the binary rule's golden-section h for the pair (m, 1 − m) at κ on the nodes
# (i / 400, j / 400) of Glasmachers & Qaadan's 401 x 401 grid over [0, 1]²
# with m <= 1/2 (201 x 401 values): α_m is the smallest coefficient, so
# its share m is at most 1/2 (up to the tie tolerance; larger m are read
# as 1/2).  Computed once per process on first use; between nodes h is
# interpolated bilinearly, and α_z and the degradation are computed
# exactly at that h.  At κ = 1 (the same point twice) every h is a
# maximum, α_z = α_m + α_n, and the search's h is only where its ties lead
# it (next to 0); that column holds the limit of the maximum as κ → 1
# instead, h = m, so that interpolation next to it is right.  (At κ = 0
# every h inside (0, 1) is a maximum too, α_z = 0; there the ties lead next
# to 0, the limit for m < 1/2, and the search's value is kept: it is not 0,
# so that κ^{h²} = exp(h² ln κ) stays 0, not NaN.)
# ----------------------------------------------------------------------
cdef const double* LOOKUP_H = NULL      # the table, rows m, columns κ
_LOOKUP_ARRAY = None                    # (keeps it alive)


def _lookup_table():
    """The table ``h*(m, κ)``, 201 x 401 values (rows ``m = i / 400``, ``i
    = 0 .. 200``; columns ``κ = j / 400``, ``j = 0 .. 400``): the binary rule's
    golden-section search for ``(α_m, α_n) = (m, 1 − m)`` at each node,
    computed on the first call (about 80 000 searches, run in lockstep per
    row: about 0.05 s) and kept for the process.  The column ``κ = 1``,
    where every ``h`` is a maximum, holds the limit of the maximum as ``κ
    → 1``, ``h = m``."""
    global LOOKUP_H, _LOOKUP_ARRAY
    if _LOOKUP_ARRAY is not None:
        return _LOOKUP_ARRAY
    cdef Py_ssize_t i, j, n = LOOKUP_STEPS + 1
    table = np.empty((LOOKUP_ROWS, n))
    a_n_arr = np.empty(n)
    log_kappa_arr = np.empty(n)
    upper_arr = np.empty(n)
    cdef double[:, ::1] tv = table
    cdef double[::1] a_n = a_n_arr, log_kappa = log_kappa_arr, upper = upper_arr
    cdef double m
    for j in range(n):
        log_kappa[j] = log_of(j / <double> LOOKUP_STEPS)
    # (with the GIL held throughout: learners of other threads that meet
    # their first merge wait for this table instead of building their own)
    for i in range(LOOKUP_ROWS):
        m = i / <double> LOOKUP_STEPS
        for j in range(n):
            a_n[j] = 1.0 - m
        golden_section_search(m, &a_n[0], NULL, &log_kappa[0], &tv[i, 0], &upper[0], n)
        tv[i, LOOKUP_STEPS] = m
    table.setflags(write=False)
    _LOOKUP_ARRAY = table
    LOOKUP_H = &tv[0, 0]
    return table


cdef inline double lookup_h(double m, double kappa) noexcept nogil:
    """``h*(m, κ)`` interpolated bilinearly from the table (``m`` clipped
    to [0, 1/2], ``κ`` to [0, 1], NaN to 0; at a node, the node's value)."""
    cdef double x = m * LOOKUP_STEPS, y = kappa * LOOKUP_STEPS, fx, fy
    cdef Py_ssize_t i, j
    cdef const double* row
    if not x > 0.0:
        x = 0.0
    elif x > LOOKUP_ROWS - 1:
        x = LOOKUP_ROWS - 1
    if not y > 0.0:
        y = 0.0
    elif y > LOOKUP_STEPS:
        y = LOOKUP_STEPS
    i = min(<Py_ssize_t> x, LOOKUP_ROWS - 2)
    j = min(<Py_ssize_t> y, LOOKUP_STEPS - 1)
    fx = x - i
    fy = y - j
    row = LOOKUP_H + i * (LOOKUP_STEPS + 1) + j
    return ((1.0 - fx) * ((1.0 - fy) * row[0] + fy * row[1])
            + fx * ((1.0 - fy) * row[LOOKUP_STEPS + 1] + fy * row[LOOKUP_STEPS + 2]))


cdef Py_ssize_t lookup_partner(double a_m, double[:, ::1] cand, Py_ssize_t n) except -1 nogil:
    """:func:`best_partner` for coefficients with ``h`` from the table
    (:func:`lookup_h` at ``m = α_m / (α_m + α_n)``, ``κ``) instead of a
    search; ``α_z = α_m κ^{(1−h)²} + α_n κ^{h²}`` and the degradation
    exactly at that ``h`` (the powers as ``exp(e ln κ)`` by NumPy's
    vectorized ``exp``, over every candidate at once)."""
    cdef Py_ssize_t i
    cdef double h, v
    cdef const double* a_n = &cand[A_N, 0]
    cdef const double* kappa = &cand[KAPPA, 0]
    cdef const double* log_kappa = &cand[LOG_KAPPA, 0]
    cdef double* lower = &cand[LOWER, 0]
    cdef double* power_m = &cand[UPPER, 0]
    cdef double* power_n = &cand[DEGRADATION, 0]
    if LOOKUP_H == NULL:
        with gil:   # the first merge by table in this process
            _lookup_table()
    for i in range(n):
        h = lookup_h(a_m / (a_m + a_n[i]), kappa[i])
        lower[i] = h
        power_m[i] = (1.0 - h) * (1.0 - h) * log_kappa[i]
        power_n[i] = h * h * log_kappa[i]
    exp_inplace(power_m, n)
    exp_inplace(power_n, n)
    for i in range(n):
        v = a_m * power_m[i] + a_n[i] * power_n[i]
        power_m[i] = v                  # α_z into UPPER
        power_n[i] = merge_degradation(a_m, a_n[i], kappa[i], v)
    return oldest_least(&cand[DEGRADATION, 0], n, b"A merge's degradation")


def _lookup_h(double m, double kappa):
    """Python access to the table's interpolated ``h*(m, κ)`` (for tests)."""
    _lookup_table()
    return lookup_h(m, kappa)


def _lookup_merge(double a_m, double a_n, double kappa):
    """Python access to the merge of two coefficients of one sign by the
    table (for tests): ``(h, α_z, degradation)``."""
    cand = np.zeros((CANDIDATE_ROWS, 1))
    cand[A_N, 0], cand[KAPPA, 0], cand[LOG_KAPPA, 0] = a_n, kappa, log_of(kappa)
    lookup_partner(a_m, cand, 1)
    return cand[LOWER, 0], cand[UPPER, 0], cand[DEGRADATION, 0]


def _golden_section_h(double a_m, double a_n, double kappa):
    """Python access to the merge of two coefficients (for tests):
    ``(h, α_z, degradation)``."""
    cdef double log_kappa = log_of(kappa), h, upper
    golden_section_search(a_m, &a_n, NULL, &log_kappa, &h, &upper, 1)
    cdef double a_z = merged_coefficient(a_m, a_n, log_kappa, h)
    return h, a_z, merge_degradation(a_m, a_n, kappa, a_z)


def _golden_section_rows(double norm_m, double norm_n, double cross, double kappa):
    """Python access to the merge of two coefficient rows (for tests), from
    ``‖W_m‖²``, ``‖W_n‖²``, ``⟨W_m, W_n⟩`` and ``κ``: ``(h, ‖W_z‖²,
    degradation)``."""
    cand = np.zeros((CANDIDATE_ROWS, 1))
    cand[A_N, 0], cand[CROSS, 0], cand[KAPPA, 0] = norm_n, cross, kappa
    cand[LOG_KAPPA, 0] = log_of(kappa)
    row_partner(norm_m, cand, 1, SEARCH_GOLDEN, NULL)  # (a non-finite degradation raises)
    return cand[LOWER, 0], cand[UPPER, 0], cand[DEGRADATION, 0]


# ----------------------------------------------------------------------
# the shared merge's search without a golden section ('lookup'; doc/algorithms.md#bsgd-multi-class).
# ‖W_z(h)‖² = a A² + b B² + 2 c A B (a = ‖W_m‖², b = ‖W_n‖², c = ⟨W_m, W_n⟩,
# A = κ^{(1−h)²}, B = κ^{h²}) depends on three ratios and κ: no table of
# two numbers holds its maximizer.  It is found in two stages, every
# candidate in lockstep: a grid h = j / 8 (j = 0 .. 8), where every power
# is an integer power of q = κ^{1/64} (one vectorized exp), picks the best
# of nine points, the two ends included; then safeguarded Newton steps on
# g'(h) = 4 s φ(h), s = −ln κ, φ = a A² (1 − h) − b B² h + c A B (1 − 2h),
# inside the grid point's neighbourhood [h − 1/8, h + 1/8]: the bracket
# shrinks to the side where φ changes sign (at a stationary point that is
# not a maximum, as h = 1/2 between the two maxima of equal norms, to the
# side of the smaller h), and a step that leaves it, or where g is not
# concave (φ' >= 0), or a NaN, bisects instead.  Each step
# is two NumPy-vectorized exp.  The point found is kept only if its ‖W_z‖²
# is at least the grid's best (the ends included): never worse than
# z = x_m or z = x_n.  g may have two or three local maxima for small κ
# (near h = 0, 1/2, 1): the grid finds the best basin where golden section
# keeps the one its first comparisons lead to, so the degradation is
# mostly the search's and sometimes less.
#
# Only the candidates that can still win take the Newton steps.  On a
# grid cell [h_j, h_{j+1}] A² rises, B² falls and A B is unimodal with its
# peak at h = 1/2, so a A²(h_{j+1}) + b B²(h_j) + 2 c (A B at the cell's
# end nearer 1/2 for c >= 0, farther for c < 0) bounds g there (a, b >= 0):
# the largest over the cells bounds g's maximum, from the grid's own
# powers.  A candidate whose degradation is then bounded below by more
# than the least degradation at a grid point (plus a margin for rounding
# and the tie tolerance) cannot be the least after its steps either: it
# keeps its grid point.  The partner chosen is the one every candidate's
# steps would choose.
# ----------------------------------------------------------------------
cdef enum:
    SHARED_GRID_STEPS = 8       # the grid h = j / 8
    SHARED_NEWTON_STEPS = 6
# ln κ for κ = 0 (−inf) is replaced by this in the Newton steps: every
# power is then 0 where it should be and 1 at an exponent of 0, never
# 0 · inf (NaN), and 4 s stays finite
cdef double LOG_KAPPA_FLOOR = -1e300
# a candidate keeps its grid point when its degradation's lower bound
# exceeds the least grid degradation by more than this share of that and
# of a + b (rounding in the grid's powers is ~1e-15; ties are 1e-9)
cdef double PRUNE_MARGIN = 1e-8


cdef inline double shared_grid(double a, double b, double c, double q, double* best,
                               double* best_h) noexcept nogil:
    """The best of ``‖W_z(j / 8)‖²``, ``j = 0 .. 8`` (ties: the smallest
    ``h``; NaN never wins, so ``h = 0`` then), into ``best`` and ``best_h``,
    from ``q = κ^{1/64}``: ``A² = q^{2 (8 − j)²}``, ``B² = q^{2 j²}``, ``A B
    = q^{(8 − j)² + j²}``, the powers ``q^{j²}`` by two products per ``j``.
    Returns an upper bound of ``‖W_z(h)‖²`` over [0, 1] (see above)."""
    cdef double odd = q, q2 = q * q, v, peak, bound = -INFINITY
    cdef double powers[SHARED_GRID_STEPS + 1]      # q^{j²}
    cdef int j, inner, outer
    powers[0] = 1.0
    for j in range(SHARED_GRID_STEPS):
        powers[j + 1] = powers[j] * odd            # odd: q^{2 j + 1}
        odd = odd * q2
    best[0] = -INFINITY
    best_h[0] = 0.0
    for j in range(SHARED_GRID_STEPS + 1):
        v = (a * (powers[SHARED_GRID_STEPS - j] * powers[SHARED_GRID_STEPS - j])
             + b * (powers[j] * powers[j])
             + 2.0 * c * (powers[j] * powers[SHARED_GRID_STEPS - j]))
        if v > best[0] or j == 0:
            best[0] = v
            best_h[0] = j / <double> SHARED_GRID_STEPS
    for j in range(SHARED_GRID_STEPS):             # the cell [j / 8, (j + 1) / 8]
        inner = j + 1 if 2 * (j + 1) <= SHARED_GRID_STEPS else j    # the end nearer 1/2
        outer = 2 * j + 1 - inner
        peak = powers[inner] * powers[SHARED_GRID_STEPS - inner] if c >= 0.0 \
            else powers[outer] * powers[SHARED_GRID_STEPS - outer]
        v = (a * (powers[SHARED_GRID_STEPS - j - 1] * powers[SHARED_GRID_STEPS - j - 1])
             + b * (powers[j] * powers[j]) + 2.0 * c * peak)
        if v > bound:
            bound = v
    return bound


cdef inline void merge_powers(const double* h, const double* log_kappa, double* power_m,
                              double* power_n, Py_ssize_t n) noexcept nogil:
    """``power_m = κ^{(1−h)²}``, ``power_n = κ^{h²}`` for ``n`` candidates,
    as ``exp(e ln κ)`` by NumPy's vectorized ``exp`` (``ln κ`` floored at
    ``LOG_KAPPA_FLOOR``)."""
    cdef Py_ssize_t i
    cdef double log_k
    for i in range(n):
        log_k = max(log_kappa[i], LOG_KAPPA_FLOOR)
        power_m[i] = (1.0 - h[i]) * (1.0 - h[i]) * log_k
        power_n[i] = h[i] * h[i] * log_k
    exp_inplace(power_m, n)
    exp_inplace(power_n, n)


# How far a column of the candidates table has been computed (row STATUS)
# by the partner scan without every column (newton_row_partner, below):
# not yet at all (a far candidate: only its bounds), its grid, its grid
# and the knowledge that it takes the Newton steps, or its final values
cdef enum:
    COLUMN_FAR = 0
    COLUMN_GRID = 1
    COLUMN_STEPS = 2
    COLUMN_DONE = 3
# a candidate is far when κ < 4.2e-18 (_merge_search.pxd, kappa_far: below
# e^{-40}): its final degradation, at the grid point or after the Newton
# steps alike, is then min(a, b) within FAR_WIDTH (a + b), without its grid
# (see lazy_row_partner)
cdef double FAR_WIDTH = 3e-13
# the rounding of a computed ‖W_z‖² against the exact one, in units of
# a + b + 2 |c| (a few ulps; the bounds of the scan widen by this)
cdef double ROUNDING = 1e-13
# a bound this tight (in units of a + b) is left until nothing looser is
# undecided
cdef double TIGHT = 1e-11


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline double* table_row(double[:, ::1] cand, Py_ssize_t r) noexcept nogil:
    """Row ``r`` of the candidates table (``r < CANDIDATE_ROWS``)."""
    return &cand[0, 0] + r * cand.shape[1]


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline double grid_degradation(double a, const double* norm_n, const double* kappa,
                                    const double* cross, double best,
                                    Py_ssize_t i) noexcept nogil:
    """The degradation of column ``i`` at ``‖W_z‖² = best``."""
    return a + norm_n[i] + 2.0 * kappa[i] * cross[i] - best


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void fill_pending(double[:, ::1] cand, const double* columns, Py_ssize_t k,
                       const PendingInputs* pending) noexcept nogil:
    """What ``pending`` left to the search (``ln κ``: NumPy's vectorized
    ``log``; ``⟨W_m, W_n⟩``: ``dense_dot``; as the caller computes the
    others) for the far columns (:func:`kappa_far`) among the ``k`` listed
    in ``columns`` (NULL: the first ``k``)."""
    cdef Py_ssize_t s, i, m = 0
    cdef const double* kappa = table_row(cand, KAPPA)
    cdef const double* cell = table_row(cand, CELL)
    cdef double* log_kappa = table_row(cand, LOG_KAPPA)
    cdef double* cross = table_row(cand, CROSS)
    cdef double* where = table_row(cand, STEPPING)
    cdef double* values = table_row(cand, STEPPING_M)
    if pending == NULL:
        return
    for s in range(k):
        i = s if columns == NULL else <Py_ssize_t> columns[s]
        if kappa_far(kappa[i]):
            where[m] = i
            values[m] = kappa[i]
            m += 1
            if pending.row_m != NULL:
                cross[i] = dense_dot(pending.row_m,
                                     pending.rows + <Py_ssize_t> cell[i] * pending.stride,
                                     pending.n_outputs)
    if pending.logs:
        log_inplace(values, m)
        for s in range(m):
            log_kappa[<Py_ssize_t> where[s]] = values[s]


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void grid_columns(double a, double[:, ::1] cand, Py_ssize_t k,
                       const PendingInputs* pending, bint bounds) noexcept nogil:
    """The grid (:func:`shared_grid`) of the ``k`` columns listed in
    ``NEWTON_COLUMN``: ``GRID_BEST``, ``GRID_H``, the grid point as the
    column's ``LOWER``, ``UPPER`` and ``DEGRADATION``, and the lower bound of
    the degradation from the grid's bound of ``‖W_z(h)‖²`` (``GRID_FLOOR``);
    ``κ^{1/64}`` by one vectorized ``exp`` over the ``k`` (the same values
    as column by column: the loop is elementwise); with ``bounds``, bounds on
    the final degradation (``BOUND_LOW``, ``BOUND_HIGH``; see
    :func:`lazy_row_partner`)."""
    cdef Py_ssize_t s, i
    cdef double bound, rounding
    cdef const double *column = table_row(cand, NEWTON_COLUMN), *norm_n = table_row(cand, A_N)
    cdef const double *kappa = table_row(cand, KAPPA), *cross = table_row(cand, CROSS)
    cdef const double *log_kappa = table_row(cand, LOG_KAPPA)
    cdef double *q = table_row(cand, NEWTON_POWER_M), *best = table_row(cand, GRID_BEST)
    cdef double *grid_h = table_row(cand, GRID_H)
    fill_pending(cand, column, k, pending)
    for s in range(k):
        q[s] = log_kappa[<Py_ssize_t> column[s]] / (8 * SHARED_GRID_STEPS)
    exp_inplace(q, k)               # κ^{1/64} (0 for κ = 0)
    for s in range(k):
        i = <Py_ssize_t> column[s]
        bound = shared_grid(a, norm_n[i], cross[i], q[s], &best[i], &grid_h[i])
        cand[LOWER, i] = grid_h[i]
        cand[UPPER, i] = best[i]
        cand[DEGRADATION, i] = grid_degradation(a, norm_n, kappa, cross, best[i], i)
        cand[GRID_FLOOR, i] = grid_degradation(a, norm_n, kappa, cross, bound, i)
        cand[STATUS, i] = COLUMN_GRID
        if not bounds:
            continue
        # the final degradation, with or without the Newton steps (lazy_row_partner)
        rounding = ROUNDING * (a + norm_n[i] + 2.0 * fabs(cross[i]))
        cand[BOUND_LOW, i] = cand[GRID_FLOOR, i] - rounding
        cand[BOUND_HIGH, i] = cand[DEGRADATION, i] + rounding


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void newton_columns(double a, double[:, ::1] cand, Py_ssize_t k) noexcept nogil:
    """The safeguarded Newton steps (see above) of the ``k`` columns listed in
    ``NEWTON_COLUMN``, from their grid points, then their final ``h``
    (``LOWER``), ``‖W_z‖²`` (``UPPER``), degradation and ``A``, ``B``
    (``POWER_M``, ``POWER_N``), the degradation its two bounds too; every
    step is elementwise, so a column's values do not depend on the others
    listed with it."""
    cdef Py_ssize_t i, s, step, t, m, n_stepping = k
    # the inputs, by column; the packed state of the steps; their outputs
    cdef const double *norm_n = table_row(cand, A_N), *cross = table_row(cand, CROSS)
    cdef const double *kappa = table_row(cand, KAPPA), *column = table_row(cand, NEWTON_COLUMN)
    cdef const double *grid_h = table_row(cand, GRID_H), *grid_best = table_row(cand, GRID_BEST)
    cdef double *h = table_row(cand, NEWTON_H), *log_k = table_row(cand, NEWTON_LOG_KAPPA)
    cdef double *low = table_row(cand, NEWTON_LOW), *high = table_row(cand, NEWTON_HIGH)
    cdef double *power_m = table_row(cand, NEWTON_POWER_M)
    cdef double *power_n = table_row(cand, NEWTON_POWER_N)
    # (the exponents of A and B: rows STEPPING_M and STEPPING_N, which follow
    # each other, as one array; n_stepping <= k, each row holds every column)
    cdef double *stepping = table_row(cand, STEPPING), *exponents = table_row(cand, STEPPING_M)
    cdef double *final_m = table_row(cand, POWER_M), *final_n = table_row(cand, POWER_N)
    cdef double b, c, x, aa, bb, ab, phi, slope, newton
    for s in range(k):
        i = <Py_ssize_t> column[s]
        h[s] = grid_h[i]
        low[s] = max(h[s] - 1.0 / SHARED_GRID_STEPS, 0.0)
        high[s] = min(h[s] + 1.0 / SHARED_GRID_STEPS, 1.0)
        log_k[s] = max(cand[LOG_KAPPA, i], LOG_KAPPA_FLOOR)
    for s in range(k):
        stepping[s] = s
    for step in range(SHARED_NEWTON_STEPS + 1):
        # the powers at h of the columns still stepping (gathered: one
        # vectorized exp each; a column whose h is settled keeps its powers)
        for t in range(n_stepping):    # (merge_powers' arithmetic)
            s = <Py_ssize_t> stepping[t]
            exponents[t] = (1.0 - h[s]) * (1.0 - h[s]) * log_k[s]
            exponents[n_stepping + t] = h[s] * h[s] * log_k[s]
        exp_inplace(exponents, 2 * n_stepping)     # (elementwise: one call for both)
        for t in range(n_stepping):
            s = <Py_ssize_t> stepping[t]
            power_m[s] = exponents[t]
            power_n[s] = exponents[n_stepping + t]
        if step == SHARED_NEWTON_STEPS:
            break
        m = 0
        for t in range(n_stepping):
            s = <Py_ssize_t> stepping[t]
            i = <Py_ssize_t> column[s]
            b = norm_n[i]
            c = cross[i]
            x = h[s]
            aa = a * power_m[s] * power_m[s]
            bb = b * power_n[s] * power_n[s]
            ab = c * (power_m[s] * power_n[s])
            phi = aa * (1.0 - x) - bb * x + ab * (1.0 - 2.0 * x)
            slope = (aa * (4.0 * -log_k[s] * (1.0 - x) * (1.0 - x) - 1.0)
                     + bb * (4.0 * -log_k[s] * x * x - 1.0)
                     + ab * (2.0 * -log_k[s] * (1.0 - 2.0 * x) * (1.0 - 2.0 * x) - 2.0))
            if phi == 0.0 and slope < 0.0:
                continue                # a maximum: stay (settled)
            if phi > 0.0:
                low[s] = x              # g rises: the maximum is to the right
            else:                       # falls, or a minimum (the two rows' equal
                high[s] = x             # norms' h = 1/2): to the smaller h, as
                                        # golden section's first tie
            newton = x - phi / slope
            if slope < 0.0 and low[s] <= newton <= high[s]:
                h[s] = newton
            else:                       # not concave, outside, or NaN: bisect
                h[s] = (low[s] + high[s]) / 2.0
            if h[s] != x:               # (an h that repeats stays: the next step
                stepping[m] = s         # sees the same bracket and values)
                m += 1
        n_stepping = m
    for s in range(k):
        i = <Py_ssize_t> column[s]
        x = a * power_m[s] * power_m[s] + norm_n[i] * power_n[s] * power_n[s] \
            + 2.0 * cross[i] * (power_m[s] * power_n[s])
        if x >= grid_best[i]:           # else (rare) the grid's point is kept
            cand[LOWER, i] = h[s]
            final_m[i] = power_m[s]
            final_n[i] = power_n[s]
        else:
            merge_powers(&grid_h[i], &cand[LOG_KAPPA, i], &final_m[i], &final_n[i], 1)
            x = a * final_m[i] * final_m[i] + norm_n[i] * final_n[i] * final_n[i] \
                + 2.0 * cross[i] * (final_m[i] * final_n[i])
        cand[UPPER, i] = x
        cand[DEGRADATION, i] = a + norm_n[i] + 2.0 * kappa[i] * cross[i] - x
        cand[STATUS, i] = COLUMN_DONE
        cand[BOUND_LOW, i] = cand[DEGRADATION, i]
        cand[BOUND_HIGH, i] = cand[DEGRADATION, i]


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline bint takes_steps(double a, double norm_n, double floor, double least) noexcept nogil:
    """The candidate takes the Newton steps (it can still win) when the grid's
    least degradation is ``least`` (the rule above, as written)."""
    return not floor > least + PRUNE_MARGIN * (fabs(least) + a + norm_n)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t newton_row_partner(double norm_m, double[:, ::1] cand, Py_ssize_t n,
                                   bint every_column, const PendingInputs* pending) except -1 nogil:
    """:func:`best_partner` for coefficient rows without the golden-section
    search (``merge_search='lookup'``): ``h`` by the grid and, for the
    candidates that can still win, the safeguarded Newton steps above (into
    ``LOWER``), ``‖W_z‖²`` (``UPPER``) and the degradation
    (``DEGRADATION``) computed exactly at that ``h``; ``A`` and ``B`` at it
    in ``POWER_M`` and ``POWER_N`` of the returned column.  Returns the
    column of the least degradation (ties: the first); a non-finite one
    raises.

    With ``every_column`` every column gets those values.  Without, only the
    returned one is sure to (the others may keep bounds only), and the
    column returned is the same, with the same values: the columns are
    computed lazily, each as the rule computes it, until bounds on the
    others decide the choice (:func:`lazy_row_partner`)."""
    if every_column:
        return every_row_partner(norm_m, cand, n, pending)
    return lazy_row_partner(norm_m, cand, n, pending)


cdef Py_ssize_t every_row_partner(double norm_m, double[:, ::1] cand, Py_ssize_t n,
                                  const PendingInputs* pending) except -1 nogil:
    """:func:`newton_row_partner` computing every column."""
    cdef Py_ssize_t i, k = 0
    cdef double least = INFINITY
    fill_pending(cand, NULL, n, pending)
    for i in range(n):
        cand[NEWTON_COLUMN, i] = i
    grid_columns(norm_m, cand, n, NULL, False)
    for i in range(n):
        if cand[DEGRADATION, i] < least:
            least = cand[DEGRADATION, i]
    for i in range(n):                      # the candidates that can still win, packed
        if takes_steps(norm_m, cand[A_N, i], cand[GRID_FLOOR, i], least):
            cand[NEWTON_COLUMN, k] = i
            k += 1
    newton_columns(norm_m, cand, k)
    return oldest_least(&cand[DEGRADATION, 0], n, b"A merge's degradation")


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void grid_least_bounds(double a, double[:, ::1] cand, Py_ssize_t n, double* least) noexcept nogil:
    """Bounds on the least grid degradation (``least[0] <= least <=
    least[1]``): exact when every column is gridded, else the far columns
    count by their bounds."""
    cdef Py_ssize_t i
    cdef double v
    cdef const double* status = table_row(cand, STATUS)
    cdef const double* bound_low = table_row(cand, BOUND_LOW)
    cdef const double* bound_high = table_row(cand, BOUND_HIGH)
    cdef const double* norm_n = table_row(cand, A_N)
    cdef const double* kappa = table_row(cand, KAPPA)
    cdef const double* cross = table_row(cand, CROSS)
    cdef const double* best = table_row(cand, GRID_BEST)
    least[0] = INFINITY
    least[1] = INFINITY
    for i in range(n):
        if status[i] == COLUMN_FAR:
            least[0] = min(least[0], bound_low[i])
            least[1] = min(least[1], bound_high[i])
        else:
            v = grid_degradation(a, norm_n, kappa, cross, best[i], i)
            least[0] = min(least[0], v)
            least[1] = min(least[1], v)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint decide_steps(double a, double[:, ::1] cand, const double* columns, Py_ssize_t k,
                       const double* least) noexcept nogil:
    """For the gridded columns among the ``k`` listed not yet decided:
    whether each takes the Newton steps (``COLUMN_STEPS``) or keeps its grid
    point (``COLUMN_DONE``, its bounds then exact), by the rule's test
    against the least grid degradation, known to lie in ``[least[0],
    least[1]]`` (exactly the rule's test when they are equal; else decided
    only where both ends agree, with room for rounding).  False if some
    column stays undecided."""
    cdef Py_ssize_t s, i
    cdef double floor, b, slack, low = least[0], high = least[1]
    cdef bint decided = True
    cdef double* status = table_row(cand, STATUS)
    cdef const double* norm_n = table_row(cand, A_N)
    cdef const double* grid_floor = table_row(cand, GRID_FLOOR)
    cdef const double* degradation = table_row(cand, DEGRADATION)
    cdef double* bound_low = table_row(cand, BOUND_LOW)
    cdef double* bound_high = table_row(cand, BOUND_HIGH)
    for s in range(k):
        i = <Py_ssize_t> columns[s]
        if status[i] != COLUMN_GRID:
            continue
        floor = grid_floor[i]
        b = norm_n[i]
        if low == high:
            status[i] = COLUMN_STEPS if takes_steps(a, b, floor, low) else COLUMN_DONE
        else:
            slack = ROUNDING * (a + b + fabs(floor) + fabs(high))
            if not takes_steps(a, b, floor - slack, high):
                status[i] = COLUMN_DONE     # keeps its grid point whatever the least
            elif takes_steps(a, b, floor + slack, low):
                status[i] = COLUMN_STEPS
            else:
                decided = False
        if status[i] == COLUMN_DONE:        # the grid point is final
            bound_low[i] = degradation[i]
            bound_high[i] = degradation[i]
    return decided


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void grid_listed(double a, double[:, ::1] cand, Py_ssize_t n, const double* columns,
                      Py_ssize_t k, double* least, const PendingInputs* pending) noexcept nogil:
    """Grid the far columns among the ``k`` listed and decide which of the
    listed take the Newton steps; ``least`` (bounds on the least grid
    degradation) narrows with the new grid degradations.  Where the bounds
    leave a decision open, every far column is gridded: the least is then
    exact, and every gridded column is decided."""
    cdef Py_ssize_t s, i, m = 0
    cdef double* status = table_row(cand, STATUS)
    cdef double* packed = table_row(cand, NEWTON_COLUMN)
    cdef const double* degradation = table_row(cand, DEGRADATION)
    for s in range(k):
        i = <Py_ssize_t> columns[s]
        if status[i] == COLUMN_FAR:
            packed[m] = i
            m += 1
    grid_columns(a, cand, m, pending, True)
    for s in range(m):
        least[1] = min(least[1], degradation[<Py_ssize_t> packed[s]])
    if not decide_steps(a, cand, columns, k, least):
        grid_every_column(a, cand, n, least, pending)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void grid_every_column(double a, double[:, ::1] cand, Py_ssize_t n, double* least,
                            const PendingInputs* pending) noexcept nogil:
    """Grid every far column, make the least grid degradation exact and
    decide every gridded column (where bounds on the least left one open)."""
    cdef Py_ssize_t i, m = 0
    cdef const double* status = table_row(cand, STATUS)
    cdef double* packed = table_row(cand, NEWTON_COLUMN)
    for i in range(n):
        if status[i] == COLUMN_FAR:
            packed[m] = i
            m += 1
    grid_columns(a, cand, m, pending, True)
    grid_least_bounds(a, cand, n, least)
    for i in range(n):
        packed[i] = i
    decide_steps(a, cand, packed, n, least)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void refine_columns(double a, double[:, ::1] cand, Py_ssize_t n, Py_ssize_t k,
                         double* least, const PendingInputs* pending) noexcept nogil:
    """Compute the ``k`` columns listed in ``WANTED`` as the rule does: the
    grid of the far ones, whether they take the Newton steps
    (:func:`grid_listed`), then the steps."""
    cdef Py_ssize_t s, i, m = 0
    cdef const double* status = table_row(cand, STATUS)
    cdef const double* wanted = table_row(cand, WANTED)
    cdef double* packed = table_row(cand, NEWTON_COLUMN)
    grid_listed(a, cand, n, wanted, k, least, pending)
    for s in range(k):
        i = <Py_ssize_t> wanted[s]
        if status[i] == COLUMN_STEPS:
            packed[m] = i
            m += 1
    newton_columns(a, cand, m)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t lazy_row_partner(double a, double[:, ::1] cand, Py_ssize_t n,
                                 const PendingInputs* pending) except -1 nogil:
    """:func:`newton_row_partner`'s choice, computing only the columns that
    can decide it (for the inputs of rows and an RBF kernel, and when at
    least half the candidates are far; else every column,
    :func:`every_row_partner`: the same choice).

    The final degradation of a column lies between bounds (``BOUND_LOW``,
    ``BOUND_HIGH``, kept by the functions that compute): exact once
    computed; for a column with Newton steps still to take, between the
    grid's lower bound and its grid degradation; for a far column (:func:`kappa_far`,
    ``s = −ln κ > 40``, not gridded) within ``FAR_WIDTH
    (a + b)`` of ``min(a, b)``: ``‖W_z(h)‖² <= (A √a + B √b)²``
    (Cauchy–Schwarz), which is at most ``max(a, b) (1 + e^{−(7/8)² s})²``
    (on ``h <= 1/8``, ``B <= 1`` and ``A <= e^{−(7/8)² s}``; on [1/8, 1/2],
    ``B <= e^{−s/64}`` and ``A <= e^{−s/4}``, whose sum is below 1; the
    other half alike), and at least the better end's, ``a + b + 2 κ c −
    min(a, b) (1 − κ²)``; each bound widened by the rounding.  The rule's
    choice is the first column tied with the least degradation
    (``_numbers.tied_or_below``): a column surely tied whatever the values
    within the bounds, after columns surely not tied, is it.  Until there
    is one, the columns that are neither and can still be tied are
    computed, the loose bounds first; a column surely not tied stays so
    (the bounds only narrow), so each pass reads only the columns still
    live.  Every computed column gets the rule's values (which columns take
    the Newton steps depends on the least grid degradation: known within
    bounds, or made exact), so the returned column and its values are the
    rule's."""
    cdef Py_ssize_t i, s, j, k = 0, n_live = n, n_wanted, n_loose
    cdef double low, high, t_low, t_high, b, v
    cdef double least[2]
    cdef bint far, pending_cross
    cdef double* status = table_row(cand, STATUS)
    cdef double* live = table_row(cand, LIVE)
    cdef double* wanted = table_row(cand, WANTED)
    cdef double* packed = table_row(cand, NEWTON_COLUMN)
    cdef const double* norm_n = table_row(cand, A_N)
    cdef const double* cross = table_row(cand, CROSS)
    cdef const double* log_kappa = table_row(cand, LOG_KAPPA)
    cdef const double* kappa = table_row(cand, KAPPA)
    cdef double* bound_low = table_row(cand, BOUND_LOW)
    cdef double* bound_high = table_row(cand, BOUND_HIGH)
    cdef const double* degradation = table_row(cand, DEGRADATION)
    least[0] = INFINITY
    least[1] = INFINITY
    if not (is_finite(a) and a >= 0.0):
        return every_row_partner(a, cand, n, pending)
    for i in range(n):
        b = norm_n[i]
        live[i] = i
        # the inputs of coefficient rows and an RBF kernel, which the bounds
        # assume: b >= 0, a + b + 2 |c| finite, κ in [0, 1] with ln κ <= 0
        # (not NaN); else every column (a non-finite degradation raises)
        # (c and ln κ of a far column may be pending: rows have |c| <= √(a b)
        # up to rounding, and c finite where a + b is)
        far = kappa_far(kappa[i])
        pending_cross = far and pending != NULL and pending.row_m != NULL
        if not (b >= 0.0 and 0.0 <= kappa[i] <= 1.0
                and is_finite(a + b + (0.0 if pending_cross else 2.0 * fabs(cross[i])))
                and (far or log_kappa[i] <= 0.0)):
            return every_row_partner(a, cand, n, pending)
        if far and (pending_cross or cross[i] * cross[i] <= a * b * (1.0 + 1e-10)):
            status[i] = COLUMN_FAR          # (|c| <= √(a b), as for rows: checked)
            bound_low[i] = min(a, b) - FAR_WIDTH * (a + b)
            bound_high[i] = min(a, b) + FAR_WIDTH * (a + b)
            least[0] = min(least[0], bound_low[i])
            least[1] = min(least[1], bound_high[i])
        else:
            packed[k] = i
            k += 1
            if 2 * k > n:       # mostly near candidates: the bounds would save little
                return every_row_partner(a, cand, n, pending)
    grid_columns(a, cand, k, NULL, True)   # (not far: nothing pending)
    for s in range(k):
        v = degradation[<Py_ssize_t> packed[s]]
        least[0] = min(least[0], v)
        least[1] = min(least[1], v)
    if not decide_steps(a, cand, packed, k, least):
        grid_every_column(a, cand, n, least, pending)
    while True:
        low = INFINITY
        high = INFINITY
        for s in range(n_live):
            i = <Py_ssize_t> live[s]
            low = min(low, bound_low[i])
            high = min(high, bound_high[i])
        t_low = low + tie_tolerance(low, 0.0)
        t_high = high + tie_tolerance(high, 0.0)
        j = -1
        for s in range(n_live):                 # the first column not surely untied
            i = <Py_ssize_t> live[s]
            if bound_low[i] <= t_high:
                if bound_high[i] <= t_low:
                    j = i                       # surely tied: the choice
                break
        if j >= 0 and status[j] == COLUMN_DONE:
            if not is_finite(degradation[j]):
                raise_not_finite(b"A merge's degradation")
            return j
        if j >= 0:                              # surely tied: its values
            wanted[0] = j
            n_wanted = 1
        else:                                   # undecided: the columns that can still be
            k = 0                               # tied (surely untied ones stay so)
            n_wanted = 0
            n_loose = 0
            for s in range(n_live):
                i = <Py_ssize_t> live[s]
                if bound_low[i] > t_high:
                    continue
                live[k] = i
                k += 1
                if status[i] != COLUMN_DONE:
                    wanted[n_wanted] = i
                    n_wanted += 1
                    if bound_high[i] - bound_low[i] > TIGHT * (a + norm_n[i]):
                        n_loose += 1
            n_live = k
            if n_loose > 0:                     # the loose bounds first
                k = 0
                for s in range(n_wanted):
                    i = <Py_ssize_t> wanted[s]
                    if bound_high[i] - bound_low[i] > TIGHT * (a + norm_n[i]):
                        wanted[k] = i
                        k += 1
                n_wanted = k
        refine_columns(a, cand, n, n_wanted, least, pending)


def _newton_rows(double norm_m, norm_n, cross, kappa):
    """Python access to :func:`newton_row_partner` with every column (for
    tests and the benchmark's study): for arrays of ``‖W_n‖²``, ``⟨W_m,
    W_n⟩`` and ``κ`` (one candidate each), ``(h, ‖W_z‖², degradation)``
    arrays (a candidate that cannot win keeps its grid point); a non-finite
    degradation raises."""
    cand = _rows_table(norm_n, cross, kappa)
    if cand.shape[1]:
        newton_row_partner(norm_m, cand, cand.shape[1], True, NULL)
    return cand[LOWER].copy(), cand[UPPER].copy(), cand[DEGRADATION].copy()


def _newton_choice(double norm_m, norm_n, cross, kappa, bint every_column):
    """Python access to :func:`newton_row_partner`'s choice (for tests): the
    column returned and its ``(h, A, B, degradation)``, computing every
    column or only those that decide it."""
    cand = _rows_table(norm_n, cross, kappa)
    cdef Py_ssize_t j = newton_row_partner(norm_m, cand, cand.shape[1], every_column, NULL)
    return j, (cand[LOWER, j], cand[POWER_M, j], cand[POWER_N, j], cand[DEGRADATION, j])


def _rows_table(norm_n, cross, kappa):
    """A candidates table of rows (``A_N``, ``CROSS``, ``KAPPA`` and ``ln κ``
    by NumPy) for the Python accesses."""
    b = np.atleast_1d(np.asarray(norm_n, dtype=np.float64))
    cand = np.zeros((CANDIDATE_ROWS, b.shape[0]))
    cand[A_N], cand[CROSS], cand[KAPPA] = b, cross, kappa
    with np.errstate(divide="ignore"):
        cand[LOG_KAPPA] = np.log(cand[KAPPA])
    return cand
