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

import numpy as np
from libc.math cimport exp, fabs, sqrt, INFINITY

from skbudget._elementwise cimport exp_inplace
from skbudget._numbers cimport oldest_least

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
                            int search) except -1 nogil:
    """The merge of one coefficient row (``norm_m = ‖W_m‖²``) with the best
    of ``n`` candidate partners (rows ``A_N = ‖W_n‖²``, ``KAPPA``,
    ``LOG_KAPPA`` and ``CROSS = ⟨W_m, W_n⟩`` filled): ``h`` maximizes
    ``‖W_z(h)‖²`` by the golden-section search (``SEARCH_GOLDEN``,
    :func:`best_partner`) or by a grid and safeguarded Newton steps
    (``SEARCH_LOOKUP``, :func:`newton_row_partner`)."""
    if search == SEARCH_LOOKUP:
        return newton_row_partner(norm_m, cand, n)
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
    row_partner(norm_m, cand, 1, SEARCH_GOLDEN)     # (a non-finite degradation raises)
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


cdef Py_ssize_t newton_row_partner(double norm_m, double[:, ::1] cand,
                                   Py_ssize_t n) except -1 nogil:
    """:func:`best_partner` for coefficient rows without the golden-section
    search (``merge_search='lookup'``): ``h`` by the grid and, for the
    candidates that can still win, the safeguarded Newton steps above (into
    ``LOWER``), ``‖W_z‖²`` (``UPPER``) and the degradation
    (``DEGRADATION``) computed exactly at that ``h``; ``A`` and ``B`` at it
    in ``POWER_M`` and ``POWER_N`` of the returned column.  Returns the
    column of the least degradation (ties: the first); a non-finite one
    raises."""
    cdef Py_ssize_t i, k = 0, s, step
    cdef const double* norm_n = &cand[A_N, 0]
    cdef const double* cross = &cand[CROSS, 0]
    cdef const double* log_kappa = &cand[LOG_KAPPA, 0]
    cdef double* power_m = &cand[POWER_M, 0]
    cdef double* power_n = &cand[POWER_N, 0]
    cdef double* column = &cand[NEWTON_COLUMN, 0]
    cdef double* h = &cand[NEWTON_H, 0]
    cdef double* low = &cand[NEWTON_LOW, 0]
    cdef double* high = &cand[NEWTON_HIGH, 0]
    cdef double* log_k = &cand[NEWTON_LOG_KAPPA, 0]
    cdef double a = norm_m, b, c, x, lost, aa, bb, ab, phi, slope, newton, least = INFINITY
    for i in range(n):
        power_m[i] = log_kappa[i] / (8 * SHARED_GRID_STEPS)
    exp_inplace(power_m, n)         # κ^{1/64} (0 for κ = 0)
    for i in range(n):
        lost = a + norm_n[i] + 2.0 * cand[KAPPA, i] * cross[i]
        x = shared_grid(a, norm_n[i], cross[i], power_m[i], &cand[GRID_BEST, i],
                        &cand[GRID_H, i])
        cand[LOWER, i] = cand[GRID_H, i]
        cand[UPPER, i] = cand[GRID_BEST, i]
        cand[DEGRADATION, i] = lost - cand[GRID_BEST, i]
        power_n[i] = lost - x               # (a lower bound of the degradation)
        if cand[DEGRADATION, i] < least:
            least = cand[DEGRADATION, i]
    for i in range(n):                      # the candidates that can still win, packed
        if not power_n[i] > least + PRUNE_MARGIN * (fabs(least) + a + norm_n[i]):
            column[k] = i
            h[k] = cand[GRID_H, i]
            low[k] = max(h[k] - 1.0 / SHARED_GRID_STEPS, 0.0)
            high[k] = min(h[k] + 1.0 / SHARED_GRID_STEPS, 1.0)
            log_k[k] = max(log_kappa[i], LOG_KAPPA_FLOOR)
            k += 1
    for step in range(SHARED_NEWTON_STEPS):
        merge_powers(h, log_k, power_m, power_n, k)
        for s in range(k):
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
                continue                # a maximum: stay
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
    merge_powers(h, log_k, power_m, power_n, k)
    for s in range(k - 1, -1, -1):      # (columns >= s: the packed values not yet read stay)
        i = <Py_ssize_t> column[s]
        x = a * power_m[s] * power_m[s] + norm_n[i] * power_n[s] * power_n[s] \
            + 2.0 * cross[i] * (power_m[s] * power_n[s])
        if x >= cand[GRID_BEST, i]:     # else (rare) the grid's point is kept
            cand[LOWER, i] = h[s]
            power_m[i] = power_m[s]
            power_n[i] = power_n[s]
        else:
            merge_powers(&cand[GRID_H, i], &log_kappa[i], &power_m[i], &power_n[i], 1)
            x = a * power_m[i] * power_m[i] + norm_n[i] * power_n[i] * power_n[i] \
                + 2.0 * cross[i] * (power_m[i] * power_n[i])
        cand[UPPER, i] = x
        cand[DEGRADATION, i] = a + norm_n[i] + 2.0 * cand[KAPPA, i] * cross[i] - x
    return oldest_least(&cand[DEGRADATION, 0], n, b"A merge's degradation")


def _newton_rows(double norm_m, norm_n, cross, kappa):
    """Python access to :func:`newton_row_partner` (for tests and the
    benchmark's study): for arrays of ``‖W_n‖²``, ``⟨W_m, W_n⟩`` and ``κ``
    (one candidate each), ``(h, ‖W_z‖², degradation)`` arrays (a candidate
    that cannot win keeps its grid point); a non-finite degradation
    raises."""
    b = np.atleast_1d(np.asarray(norm_n, dtype=np.float64))
    cand = np.zeros((CANDIDATE_ROWS, b.shape[0]))
    cand[A_N], cand[CROSS], cand[KAPPA] = b, cross, kappa
    with np.errstate(divide="ignore"):
        cand[LOG_KAPPA] = np.log(cand[KAPPA])
    if b.shape[0]:
        newton_row_partner(norm_m, cand, b.shape[0])
    return cand[LOWER].copy(), cand[UPPER].copy(), cand[DEGRADATION].copy()
