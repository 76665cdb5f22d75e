# cython: language_level=3
"""Declarations of BSGD's merge search (see ``_merge_search.pyx``).

A policy that merges two support vectors ``x_m`` and ``x_n`` of an RBF
expansion into ``z = h x_m + (1 − h) x_n`` fills one column of a
*candidates table* per partner ``n`` (the rows below: ``A_N``, ``KAPPA``,
``LOG_KAPPA``, and ``CROSS`` for coefficient rows), then asks for the best
partner: the search writes ``h`` (``LOWER``), the merged coefficient or
squared row norm (``UPPER``) and the degradation (``DEGRADATION``) of every
column and returns the column of the least degradation (ties: the first).
"""

from libc.math cimport log, INFINITY

# the merge search of a coefficient: the golden-section rule, or its table
# h*(m, κ) (doc/algorithms.md#bsgd)
cdef enum:
    SEARCH_GOLDEN = 0
    SEARCH_LOOKUP = 1

# rows of the candidates table, one column per merge partner
cdef enum:
    A_N = 0          # its coefficient α_n (coefficient rows: ‖W_n‖²)
    KAPPA = 1        # k(x_m, x_n)
    LOG_KAPPA = 2
    LOWER = 3        # the search's bracket, then h
    UPPER = 4        # the bracket, then α_z (coefficient rows: ‖W_z‖²)
    DEGRADATION = 5
    CROSS = 6        # coefficient rows: ⟨W_m, W_n⟩
    # coefficient rows by SEARCH_LOOKUP (row_partner): A = κ^{(1−h)²} and
    # B = κ^{h²} at the h found (W_z = A W_m + B W_n; in the returned
    # column); the grid's best ‖W_z‖² and its h; the Newton steps, over the
    # candidates that can still win, packed: their column, h, bracket, ln κ
    POWER_M = 7
    POWER_N = 8
    GRID_BEST = 9
    GRID_H = 10
    NEWTON_COLUMN = 11
    NEWTON_H = 12
    NEWTON_LOW = 13
    NEWTON_HIGH = 14
    NEWTON_LOG_KAPPA = 15
    # and, for the partner scan that leaves out the candidates that cannot
    # matter (row_partner with SEARCH_LOOKUP): the Newton steps' packed
    # powers, bounds on each column's degradation, the grid's lower bound of
    # it, how far each column has been computed; packed: the columns that
    # can still be tied, and those to compute next
    NEWTON_POWER_M = 16
    NEWTON_POWER_N = 17
    BOUND_LOW = 18
    BOUND_HIGH = 19
    GRID_FLOOR = 20
    STATUS = 21
    LIVE = 22
    WANTED = 23
    # the Newton steps of the columns whose h still moves: their positions in
    # the packed rows, and their exponents, then powers (STEPPING_M and
    # STEPPING_N, one after the other: one array of both)
    STEPPING = 24
    STEPPING_M = 25
    STEPPING_N = 26
    CELL = 27       # the cell of the candidate's row (PendingInputs)
    CANDIDATE_ROWS = 28


# What the caller of the shared search by grid and Newton steps
# (row_partner, SEARCH_LOOKUP) left to it for the far candidates
# (kappa_far): ``ln κ`` (``logs``: NumPy's log of ``KAPPA``, as the caller's)
# and ``⟨W_m, W_n⟩`` (``row_m`` not NULL: ``dense_dot`` of ``row_m`` and
# the row at ``rows + CELL * stride``, ``n_outputs`` long, as the
# caller's); the search computes them for the columns it grids
cdef struct PendingInputs:
    bint logs
    const double* row_m
    const double* rows
    Py_ssize_t stride
    Py_ssize_t n_outputs


cdef inline double log_of(double kappa) noexcept nogil:
    """ln κ (−inf for κ = 0: the merged coefficient is then 0 inside (0, 1))."""
    return log(kappa) if kappa > 0.0 else -INFINITY


# one coefficient per vector (binary BSGD): the partner maximizing |α_z(h)|,
# by ``search`` (SEARCH_GOLDEN or SEARCH_LOOKUP); ``a_m`` is α_m
cdef Py_ssize_t coefficient_partner(double a_m, double[:, ::1] cand, Py_ssize_t n,
                                    int search) except -1 nogil
# one coefficient row per vector (the shared multi-class mode): the partner
# maximizing ‖W_z(h)‖² by ``search`` (SEARCH_GOLDEN, or SEARCH_LOOKUP: a
# grid and safeguarded Newton steps, which also leave A and B in POWER_M
# and POWER_N); ``norm_m`` is ‖W_m‖²; ``pending``: NULL, or what is left to it
cdef Py_ssize_t row_partner(double norm_m, double[:, ::1] cand, Py_ssize_t n,
                            int search, const PendingInputs* pending) except -1 nogil


cdef inline bint kappa_far(double kappa) noexcept nogil:
    """A kernel value below e^{−40}: a far candidate of the shared search
    by grid and Newton steps, whose ``ln κ`` and ``⟨W_m, W_n⟩`` its caller
    may leave to it (``PendingInputs``)."""
    return kappa < 4.2e-18
