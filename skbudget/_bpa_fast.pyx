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
    # scratch (not state): removal scores by position; BPA-P, by cell: the
    # round's kernel row (0 for free cells), d = K_S^{-1} k_t, the update vectors
    cdef double[::1] values
    cdef double[::1] k_vec
    cdef double[::1] d_vec
    cdef double[::1] g_vec
    cdef double[::1] g_diag             # BPA-P: the diagonal of G by cell
    cdef double[::1] lapack_work        # BPA-P: the n x n Gram matrix, factored
    cdef double k_d_magnitude           # BPA-P: sum_c |k_c d_c| of the round

    _state_names = OnlineLearner._state_names + (
        "budget", "C", "maintenance", "n_removals", "n_projections", "nearest",
        "nearest_dist", "inverse", "drift", "residual_floor", "n_checks", "n_refreshes")

    def __cinit__(self, *args, **kwargs):
        # before the engine's __init__ grows them
        self.nearest = np.zeros(0, dtype=np.intp)
        self.nearest_dist = np.zeros(0)
        self.inverse = np.zeros((0, 0))
        self.values = np.zeros(0)        # (make_scratch keeps their values)
        self.k_vec = np.zeros(0)
        self.d_vec = np.zeros(0)
        self.g_vec = np.zeros(0)
        self.g_diag = np.zeros(0)
        self.lapack_work = np.zeros(0)

    def __init__(self, Py_ssize_t budget=1, double C=1.0, int maintenance=RULE_SIMPLE):
        self.maintenance = maintenance     # (before the engine's __init__ calls grow,
        self.budget = budget               # and reads capacity_limit)
        OnlineLearner.__init__(self, track_gram=maintenance != RULE_SIMPLE)
        self.C = C
        self.n_removals = 0
        self.n_projections = 0
        self.drift = 0.0
        self.residual_floor = 0.0
        self.n_checks = 0
        self.n_refreshes = 0

    cdef Py_ssize_t capacity_limit(self) noexcept nogil:
        """A learner never holds more than ``budget`` vectors, and a round
        needs one free cell besides: ``budget + 1``."""
        return self.budget + 1      # (budget <= MAX_BUDGET: no overflow)

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        cdef Py_ssize_t i, old = self.nearest.shape[0]
        cdef Py_ssize_t[::1] nearest = np.full(new_capacity, -1, dtype=np.intp)
        OnlineLearner.grow(self, new_capacity)
        for i in range(min(old, new_capacity)):     # (a NumPy slice assignment: ~2 us)
            nearest[i] = self.nearest[i]
        self.nearest = nearest
        self.nearest_dist = _resized(self.nearest_dist, new_capacity)
        if self.maintenance == RULE_PROJECTION:
            inverse = np.zeros((new_capacity, new_capacity))
            old = self.inverse.shape[0]
            inverse[:old, :old] = self.inverse
            self.inverse = inverse
        self.make_scratch()
        return 0

    cdef int make_scratch(self) except -1:
        """The scratch arrays at ``capacity`` cells, their values kept (a
        BPA-P round that inserts grows the learner after computing ``d``);
        BPA-S and BPA-NN use ``values`` alone (the others stay empty: each
        array costs a few microseconds at every growth)."""
        self.values = _resized(self.values, self.capacity)
        if self.maintenance != RULE_PROJECTION:
            return 0
        self.k_vec = _resized(self.k_vec, self.capacity)
        self.d_vec = _resized(self.d_vec, self.capacity)
        self.g_vec = _resized(self.g_vec, self.capacity)
        self.g_diag = _resized(self.g_diag, self.capacity)
        self.lapack_work = np.zeros(self.capacity * self.capacity)
        return 0

    def check_policy_state(self, Py_ssize_t pool_size):
        cdef Py_ssize_t i, c, n
        if not (1 <= self.budget and self.n_sv <= self.budget
                and self.capacity - 1 <= self.budget):
            return (f"budget={self.budget} is below 1 or below n_sv={self.n_sv}, or "
                    f"capacity={self.capacity} exceeds budget + 1")
        if not (self.C > 0 and is_finite(self.C)):
            return f"C={self.C} is not a positive number"
        if self.maintenance not in (RULE_SIMPLE, RULE_NEAREST, RULE_PROJECTION):
            return f"maintenance={self.maintenance} is no rule"
        if self.maintenance == RULE_NEAREST and not self.track_gram:
            return "BPA-NN without the Gram matrix"
        if self.maintenance == RULE_PROJECTION and not self.track_gram:
            return "BPA-P without the Gram matrix"
        if not (self.drift >= 0.0 and is_finite(self.drift) and self.residual_floor >= 0.0
                and is_finite(self.residual_floor)) or self.n_checks < 0 or self.n_refreshes < 0:
            return (f"drift={self.drift}, residual_floor={self.residual_floor}, "
                    f"n_checks={self.n_checks}, n_refreshes={self.n_refreshes} are not "
                    f"non-negative numbers")
        problem = size_problem({"nearest": self.nearest, "nearest_dist": self.nearest_dist},
                               self.capacity)
        if problem is None and self.maintenance == RULE_PROJECTION:
            problem = square_problem("the inverse Gram matrix", self.inverse, self.capacity)
        if problem is None and self.maintenance == RULE_NEAREST:
            support = set(np.asarray(self.order)[:self.n_sv].tolist())
            for i in range(self.n_sv):
                c = self.order[i]
                n = self.nearest[c]
                if (n == -1) != (self.n_sv == 1) or (n != -1 and (n == c or n not in support)):
                    return f"the nearest neighbour {n} of cell {c} is no other support vector"
                if n != -1 and not is_finite(self.nearest_dist[c]):
                    return f"the distance to the nearest neighbour of cell {c} is not finite"
        if problem is None and (self.values.shape[0] < self.capacity or (
                self.maintenance == RULE_PROJECTION
                and self.lapack_work.shape[0] < self.capacity * self.capacity)):
            self.make_scratch()     # (a state set with a larger capacity)
        return problem

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
            self.meet_newest(cell)
        return 0

    cdef double removal_score(self, Py_ssize_t c, double* share_t, double* share_n,
                              Py_ssize_t* partner) noexcept nogil:
        """BPA-S and BPA-NN: ``s_c`` for the support vector in cell ``c``
        and ``K_V^{-1} k_{V,c}``: its share for x_t and for ``partner``
        (``n(c)``; -1 when ``V = {t}``).  Needs the round's kernel row."""
        cdef double ktt = self.k_tt, ktr = self.k_row[c], knr, ktn, knn, det
        cdef Py_ssize_t n = self.nearest[c] if self.maintenance == RULE_NEAREST else -1
        partner[0] = -1
        share_n[0] = 0.0
        share_t[0] = ktr / ktt if ktt > 0.0 else 0.0       # V = {t}
        if n >= 0:
            knn = self.kself[n]
            ktn = self.k_row[n]
            knr = self.gram[n, c]
            det = ktt * knn - ktn * ktn
            if det > 0.0 and det > SPAN_TOL * ktt * knn:    # else V = {t}
                share_t[0] = (knn * ktr - ktn * knr) / det
                share_n[0] = (ktt * knr - ktn * ktr) / det
                partner[0] = n
                return self.kself[c] - (ktr * share_t[0] + knr * share_n[0])
        return self.kself[c] - ktr * share_t[0]

    cdef void simple_removal_scores(self, double* values) noexcept nogil:
        """BPA-S: ``values[i] = alpha_r^2 max(s_r, 0)`` for the support
        vector ``r`` at position ``i``, ``s_r = k_rr - k_tr (k_tr / k_tt)``
        (:meth:`removal_score` with ``V = {t}``, the same operations in the
        same order, in one loop over raw pointers: this loop is most of a
        BPA-S round).  ``k_tr / k_tt`` is ``k_tr`` itself when ``k_tt = 1``
        (every RBF round): dividing by 1 is exact."""
        cdef Py_ssize_t i, c, n = self.n_sv
        cdef const Py_ssize_t* order = &self.order[0]
        cdef const double* alpha = &self.alpha[0]
        cdef const double* k_row = &self.k_row[0]
        cdef const double* kself = &self.kself[0]
        cdef double ktt = self.k_tt, scale = self.scale, ktr, share, s, a
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
            a = alpha[c] * scale
            values[i] = a * a * (s if s > 0.0 else 0.0)

    cdef int remove_and_insert(self, double step) except -1 nogil:
        """|S| = B, BPA-S or BPA-NN: remove the best ``r``, let ``V`` absorb
        it, append x_t."""
        cdef Py_ssize_t i, c, r, partner
        cdef double a, s, share_t, share_n
        cdef double* values = &self.values[0]
        self.ensure_row()
        if self.maintenance == RULE_SIMPLE:
            self.simple_removal_scores(values)
        else:
            for i in range(self.n_sv):
                c = self.order[i]
                s = self.removal_score(c, &share_t, &share_n, &partner)
                a = self.alpha[c] * self.scale
                values[i] = a * a * (s if s > 0.0 else 0.0)
        r = oldest_least(values, self.n_sv, REMOVAL_SCORE)
        c = self.order[r]
        a = self.alpha[c] * self.scale
        self.removal_score(c, &share_t, &share_n, &partner)
        if partner >= 0:
            self.add_to_coef(partner, a * share_n)
        self.remove_at(r)
        self.n_removals += 1
        c = self.append_current(a * share_t + step)
        if self.maintenance == RULE_NEAREST:
            self.meet_newest(c)
        return 0

    # ------------------------------------------------------------------
    # BPA-NN: the nearest neighbours
    # ------------------------------------------------------------------
    cdef inline double distance(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        """||phi(x_a) - phi(x_b)||^2 from the Gram matrix."""
        return self.kself[a] + self.kself[b] - 2.0 * self.gram[a, b]

    cdef int find_nearest(self, Py_ssize_t c) except -1 nogil:
        """nearest[c] = the support vector nearest to c (ties: oldest)."""
        cdef Py_ssize_t i, j, best = -1
        cdef double v, best_dist = INFINITY
        for i in range(self.n_sv):
            j = self.order[i]
            if j == c:
                continue
            v = self.distance(c, j)
            if not is_finite(v):
                raise_not_finite(b"A feature-space distance between support vectors")
            if best < 0 or v < best_dist:
                best = j
                best_dist = v
        self.nearest[c] = best
        self.nearest_dist[c] = best_dist
        return 0

    cdef int on_remove(self, Py_ssize_t cell) except -1 nogil:
        """The cells whose nearest neighbour ``cell`` was are marked (-2)
        for :meth:`meet_newest` to recompute."""
        cdef Py_ssize_t i, c
        if self.maintenance == RULE_NEAREST:
            for i in range(self.n_sv):
                c = self.order[i]
                if self.nearest[c] == cell:
                    self.nearest[c] = -2
            self.nearest[cell] = -1
        elif self.maintenance == RULE_PROJECTION:
            self.clear_inverse(cell)
        return 0

    cdef int meet_newest(self, Py_ssize_t cell) except -1 nogil:
        """After ``cell`` was appended (and perhaps a vector removed): every
        other vector compares its neighbour with the newest (strictly
        closer wins: the newest is never the oldest of a tie), the marked
        ones search again, and the newest finds its own."""
        cdef Py_ssize_t i, c
        cdef double v
        for i in range(self.n_sv - 1):
            c = self.order[i]
            if self.nearest[c] == -2 or self.nearest[c] == -1:
                self.find_nearest(c)
            else:
                v = self.distance(c, cell)
                if not is_finite(v):
                    raise_not_finite(b"A feature-space distance between support vectors")
                if v < self.nearest_dist[c]:
                    self.nearest[c] = cell
                    self.nearest_dist[c] = v
        self.find_nearest(cell)
        return 0

    # ------------------------------------------------------------------
    # BPA-P: the inverse Gram matrix
    # ------------------------------------------------------------------
    cdef void clear_inverse(self, Py_ssize_t cell) noexcept nogil:
        """Row and column ``cell`` of the inverse to 0 (a free cell)."""
        cdef Py_ssize_t c, cap = self.capacity
        cdef double* A = &self.inverse[0, 0]
        for c in range(cap):
            A[cell * cap + c] = 0.0
            A[c * cap + cell] = 0.0

    cdef void rank_two(self, const double* e, double f, const double* g,
                       double h) noexcept nogil:
        """inverse += f e e^T + h g g^T over every cell, one pass (zero
        entries of ``e`` and ``g`` leave their rows and columns alone;
        ``g = NULL``: the first term alone)."""
        cdef Py_ssize_t i, j, cap = self.capacity
        cdef double* A = &self.inverse[0, 0]
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

    cdef double span_distance(self) except? -1.0 nogil:
        """``d = K_S^{-1} k_t`` into ``d_vec`` (by cell; the round's kernel
        row into ``k_vec``); returns ``delta^2 = k_tt - k_t^T d``, 0 when
        x_t lies in span S (``delta^2 <= SPAN_TOL k_tt``)."""
        cdef Py_ssize_t i, c, cap = self.capacity
        cdef double* k_vec = &self.k_vec[0]
        cdef double* d = &self.d_vec[0]
        cdef double delta2
        self.ensure_row()
        for c in range(cap):
            k_vec[c] = 0.0
        for i in range(self.n_sv):
            c = self.order[i]
            k_vec[c] = self.k_row[c]
        for c in range(cap):
            d[c] = dense_dot(&self.inverse[c, 0], k_vec, cap)
        delta2 = self.k_tt - dense_dot(k_vec, d, cap)
        self.k_d_magnitude = 0.0
        for i in range(self.n_sv):
            c = self.order[i]
            self.k_d_magnitude += fabs(k_vec[c] * d[c])
        if not is_finite(delta2):
            raise_not_finite(b"The distance of x_t from the span of the support set")
        if delta2 <= SPAN_TOL * self.k_tt or delta2 <= 0.0:
            return 0.0
        return delta2

    cdef int projection_round(self, double step) except -1 nogil:
        """BPA-P: project the step onto S, append x_t, or remove the best
        ``r`` from ``U = S + {t}`` and let the rest absorb it."""
        cdef Py_ssize_t i, c, r, cell, cap = self.capacity
        cdef double delta2 = self.span_distance(), g_rr, a_r, d_r, g_t, s, peak
        cdef double* d = &self.d_vec[0]
        cdef double* g = &self.g_vec[0]
        cdef double* values = &self.values[0]
        cdef double* g_diag = &self.g_diag[0]
        cdef double largest
        if delta2 == 0.0:
            for i in range(self.n_sv):
                c = self.order[i]
                if d[c] != 0.0:
                    self.add_to_coef(c, step * d[c])
            self.n_projections += 1
            return 0
        peak = 1.0 / delta2             # the largest diagonal entry of G
        for i in range(self.n_sv):      # G's diagonal on S: A_cc + d_c^2 / delta^2
            c = self.order[i]
            g_diag[c] = self.inverse[c, c] + d[c] * d[c] / delta2
            if g_diag[c] > peak:
                peak = g_diag[c]
        if self.n_sv < self.budget:
            cell = self.append_current(step)
            d = &self.d_vec[0]   # (the insertion may have grown the learner)
            d[cell] = -1.0       # the border [d; -1] [d; -1]^T / delta^2
            self.rank_two(d, 1.0 / delta2, NULL, 0.0)
            return self.note_drift(peak, delta2, peak)     # (the new A is G)
        for i in range(self.n_sv):      # s_r = 1 / G_rr
            c = self.order[i]
            g_rr = g_diag[c]
            s = 1.0 / g_rr if g_rr > 0.0 else 0.0
            a_r = self.alpha[c] * self.scale
            values[i] = a_r * a_r * s
        r = oldest_least(values, self.n_sv, REMOVAL_SCORE)
        c = self.order[r]
        a_r = self.alpha[c] * self.scale
        d_r = d[c]
        g_rr = g_diag[c]
        if not (g_rr > 0.0 and is_finite(g_rr)):
            raise_not_finite(b"The inverse Gram matrix of the budgeted Passive-Aggressive")
        # g = column r of G over U - {r}: A[:, r] + d d_r / delta^2 on S, and
        # -d_r / delta^2 for x_t (in the cell x_t takes below)
        for i in range(cap):
            g[i] = self.inverse[i, c] + d[i] * d_r / delta2
        g[c] = 0.0
        d[c] = 0.0
        for i in range(self.n_sv):
            if i != r:
                self.add_to_coef(self.order[i], -a_r * g[self.order[i]] / g_rr)
        g_t = -d_r / delta2
        self.remove_at(r)               # (clears row and column c of A)
        self.n_removals += 1
        cell = self.append_current(-a_r * g_t / g_rr + step)
        d[cell] = -1.0
        g[cell] = g_t
        self.rank_two(d, 1.0 / delta2, g, -1.0 / g_rr)
        # the new A's largest diagonal entry, from G's (no pass over A's
        # diagonal, which is strided)
        largest = 1.0 / delta2 - g_t * g_t / g_rr
        for i in range(self.n_sv - 1):
            c = self.order[i]
            s = g_diag[c] - g[c] * g[c] / g_rr
            if s > largest:
                largest = s
        return self.note_drift(peak, delta2, largest)

    cdef int note_drift(self, double peak, double delta2, double largest) except -1 nogil:
        """After an update of ``inverse`` (``peak``: the largest diagonal
        entry of the bordered ``G``, ``delta2``: the round's ``delta^2``,
        ``largest``: the new inverse's largest diagonal entry).

        The round's ``delta^2 = k_tt - k^T d`` is a difference of sums of
        at most ``k_tt + sum |k_c d_c|``: its relative error, up to that
        over ``delta^2`` (in units of the unit roundoff), is that of the
        update ``[d; -1] [d; -1]^T / delta^2`` and of ``G``, whose entries
        are at most ``peak``; the downdate to the new ``K_S^{-1}`` keeps
        that absolute error, however small its entries.  ``drift`` sums
        these bounds in quadrature (rounding errors of different rounds are
        independent: they add up like a random walk, the square root of the
        sum of squares, as in Higham's probabilistic error analysis; a plain
        sum checked every ~13 updates on a9a at B = 500, where the updates
        stayed accurate).  ``K_S^{-1}`` computed afresh has an error of about
        the unit roundoff times its largest entry (its largest diagonal
        entry: it is SPD); when ``drift`` exceeds ``CHECK_DRIFT`` times
        that, or the error it bounds exceeds ``RESIDUAL_TOL`` (``drift eps
        > RESIDUAL_TOL``: within 1e3 of a fresh inverse may still be too
        inaccurate when ``K_S`` is ill-conditioned), :meth:`check_inverse`
        measures the error (doc/algorithms.md#bpa)."""
        cdef double bound
        if not (is_finite(peak) and is_finite(self.k_d_magnitude)):
            raise_not_finite(b"The inverse Gram matrix of the budgeted Passive-Aggressive")
        bound = peak * (self.k_tt + self.k_d_magnitude) / delta2
        self.drift = sqrt(self.drift * self.drift + bound * bound)
        if not (self.drift <= CHECK_DRIFT * largest
                and self.drift * DBL_EPSILON <= RESIDUAL_TOL):  # (NaN: check)
            self.check_inverse()
        return 0

    cdef double residual(self) noexcept nogil:
        """``max_c |(K_S (inverse u))_c - u_c|`` over the support cells and
        two probes ``u``: ``1 + frac((c + 1) phi)`` and ``1 + frac((c + 1)
        sqrt 2)`` (``phi`` the golden ratio; values in [1, 2), no two cells
        alike: an error of opposite signs on two near-duplicates, which
        cancels in ``u = 1``, shows unless the cells are close in both
        sequences), two O(B^2) passes (``d_vec``, ``g_vec``, ``values``,
        ``k_vec`` as scratch; NaN stays NaN)."""
        cdef Py_ssize_t i, c, cap = self.capacity
        cdef double* u = &self.g_vec[0]
        cdef double* v = &self.k_vec[0]
        cdef double* z = &self.d_vec[0]
        cdef double* w = &self.values[0]
        cdef const double* row
        cdef double r, worst = 0.0
        for c in range(cap):
            u[c] = 0.0
            v[c] = 0.0
        for i in range(self.n_sv):
            c = self.order[i]
            r = (c + 1) * 0.6180339887498949
            u[c] = 1.0 + (r - <double>(<long long>r))
            r = (c + 1) * 1.4142135623730951
            v[c] = 1.0 + (r - <double>(<long long>r))
        for c in range(cap):
            row = &self.inverse[c, 0]
            z[c] = dense_dot(row, u, cap)
            w[c] = dense_dot(row, v, cap)
        for i in range(self.n_sv):      # (the Gram matrix's free cells are stale)
            c = self.order[i]
            row = &self.gram[c, 0]
            r = fabs(dense_dot(row, z, cap) - u[c])
            if not (r <= worst):
                worst = r
            r = fabs(dense_dot(row, w, cap) - v[c])
            if not (r <= worst):
                worst = r
        return worst

    cdef int check_inverse(self) except -1 nogil:
        """Measure :meth:`residual`; above ``RESIDUAL_TOL`` and above the
        floor (what the last recomputation reached), recompute the inverse
        from the Gram matrix and set the floor to ten times its residual.
        The floor halves at every check that passes, so a support set that
        became better conditioned gets its tolerance back.  ``drift``
        restarts from 0."""
        cdef double res = self.residual()
        self.drift = 0.0
        self.n_checks += 1
        if res <= RESIDUAL_TOL or res <= self.residual_floor:
            self.residual_floor *= 0.5
            return 0
        if self.refresh_inverse():
            res = self.residual()
            self.residual_floor = 10.0 * res if is_finite(res) else 0.0
        else:
            self.residual_floor = res if is_finite(res) else 0.0
        return 0

    cdef int refresh_inverse(self) except -1 nogil:
        """``inverse`` = ``K_S^{-1}`` computed afresh from the Gram matrix
        (LAPACK's Cholesky factorization ``dpotrf`` and ``dpotri``,
        O(B^3)); 1 if done, 0 (the incremental inverse left in place) if
        the Gram matrix is not numerically positive definite."""
        cdef int n = <int>self.n_sv, info = 0
        cdef char uplo = b'L'
        cdef Py_ssize_t i, j, ci, cj
        cdef double v
        cdef double* M = &self.lapack_work[0]
        if n == 0:
            return 0
        for i in range(n):
            ci = self.order[i]
            for j in range(n):
                M[i * n + j] = self.gram[ci, self.order[j]]
            M[i * n + i] = self.kself[ci]
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
            ci = self.order[i]
            for j in range(i, n):
                cj = self.order[j]
                v = M[i * n + j]
                self.inverse[ci, cj] = v
                self.inverse[cj, ci] = v
        self.n_refreshes += 1
        return 1

    # ------------------------------------------------------------------
    # read-out (for tests)
    # ------------------------------------------------------------------
    def inverse_gram(self):
        """``K_S^{-1}`` (BPA-P), oldest first."""
        cells = self.support_order()
        return np.asarray(self.inverse)[np.ix_(cells, cells)].copy()

    def nearest_positions(self):
        """The position of each support vector's nearest neighbour (BPA-NN),
        oldest first; -1 for a vector alone."""
        cells = self.support_order()
        where = {int(c): i for i, c in enumerate(cells)}
        return np.array([where.get(int(n), -1) for n in np.asarray(self.nearest)[cells]],
                        dtype=np.intp)


# the per-cell arrays of the state (besides ``free_cells``) and its per-cell
# matrices (``gram`` 0 x 0 for BPA-S, ``inverse`` for all but BPA-P)
_CELL_ARRAYS = ("order", "alpha", "slot", "kself", "k_row", "nearest", "nearest_dist")
_CELL_MATRICES = ("gram", "inverse")
