# cython: language_level=3, cdivision=True
"""Budgeted SGD for kernel SVMs (doc/algorithms.md#bsgd), and its
multi-class form on one shared support set
(doc/algorithms.md#bsgd-multi-class).

Wang, Crammer & Vucetic, "Breaking the curse of kernelization: budgeted
stochastic gradient descent for large-scale SVM training", JMLR 13, 2012.

Pegasos on ``λ/2 ‖f‖² + mean hinge``: at round ``t`` (every example seen,
from 1, across epochs and ``partial_fit`` calls) all coefficients shrink by
``1 − 1/t`` and, when ``y_t f(x_t) < 1``, ``(x_t, 1/(λ t) y_t)`` is appended.
After an addition that makes ``|S| = B + 1`` a maintenance rule brings the
support set back to ``B``: removal, projection or merging.

Coefficients are stored as ``w_i = λ t α_i`` and the engine's global scale
is ``1/(λ t)``: the shrink only changes the scale (O(1)), never the stored
``w_i``, and every support vector that was added and never changed since
has ``w_i = ±1`` exactly (``±w`` for an example of weight ``w``: its step
is ``η_t w``), so the ties the binary rule calls "the rule, not the exception" stay
exact.  Values compared for a tie count as tied when they
agree to a relative 1e-9 (``_numbers.tie_tolerance``).

:class:`MulticlassBSGDLearner` is the multi-class rule: one support set for every class
(``_shared_support``), each vector with a coefficient row ``W_i = λ t α_i``
(a new one is ``e_y − e_r``, ``r`` the runner-up class), the Crammer–Singer
hinge, and the same three rules on the rows.  The two learners share the
span factor and its projection (:func:`span_append`, :func:`span_project`)
and the merge search (``_merge_search``) with its partner scan
(:func:`partner_kernels`): with rows, the search (golden section, or a grid
and Newton steps for ``LOOKUP``) maximizes ``‖W_z(h)‖²``, which depends on
a pair only through ``‖W_m‖²``, ``‖W_n‖²``, ``⟨W_m, W_n⟩`` and ``κ`` (O(1)
per probe after an O(k) set-up; ``‖W_i‖²`` is kept per vector).
"""

import numpy as np
from libc.math cimport exp, fabs, isfinite, INFINITY
from libc.string cimport memcpy

from skbudget._engine cimport OnlineLearner
from skbudget._engine import _resized, size_problem
from skbudget._elementwise cimport exp_inplace, log_inplace
from skbudget._kernel_rows cimport dense_dot, squared_distance
from skbudget._merge_search cimport (A_N, CANDIDATE_ROWS, CROSS, DEGRADATION, KAPPA,
                                      LOG_KAPPA, LOWER, POWER_M, POWER_N, SEARCH_GOLDEN,
                                      SEARCH_LOOKUP, STEPPING, UPPER, CELL, PendingInputs,
                                      coefficient_partner, kappa_far, log_of, row_partner)
from skbudget._numbers cimport is_finite, is_nan, raise_not_finite, tied_or_below
from skbudget._shared_support cimport SharedSupportLearner
from skbudget._span_factor cimport span_append, span_project
from skbudget._span_factor import _factor_room
from skbudget._vector_loops cimport skb_vector_loops_init

skb_vector_loops_init()     # the AVX2 loops where the CPU has AVX2

# the merge search: the golden-section rule, or its table h*(m, κ)
GOLDEN, LOOKUP = SEARCH_GOLDEN, SEARCH_LOOKUP

# The per-cell arrays (the engine's, the shared learner's coefficient rows and
# their norms; the Gram matrix and the span factor for projection, cells x
# cells; the merge's scratch) start at the engine's initial_capacity and grow
# by doubling (OnlineLearner.grow_when_full) up to capacity_limit(), budget + 1
# cells (the budget's vectors and the one a round appends before its
# maintenance step; a merge removes two before it appends), so that memory and
# saved files follow the support set, not the budget.  The cells are handed
# out in the same order whatever the capacity (the engine's free-cell stack),
# and every sum runs over the support set by position: the growth changes no
# model.


def _capacity_problem(Py_ssize_t budget, Py_ssize_t n_sv, Py_ssize_t capacity):
    """A description unless ``capacity`` is one a BSGD learner of ``budget``
    holding ``n_sv`` vectors can have, else None: at most ``budget + 2`` (the
    cells an earlier version allocated up front; it grows to ``budget + 1``)
    or, for the union of several models before its compression (parameter
    mixing, over the budget), ``n_sv + 2``."""
    if capacity - 2 > max(budget, n_sv):       # (no overflow at the largest budget)
        return (f"capacity={capacity} exceeds budget + 2 = {budget + 2} and n_sv + 2 = "
                f"{n_sv + 2}")
    return None


# the maintenance rules (compiled constants; the Python names below)
cdef enum:
    RULE_REMOVAL = 0
    RULE_PROJECTION = 1
    RULE_MERGING = 2
REMOVAL, PROJECTION, MERGING = RULE_REMOVAL, RULE_PROJECTION, RULE_MERGING


cdef class BudgetedSGDLearner(OnlineLearner):
    """BSGD, one binary learner.

    Parameters
    ----------
    budget : int
        ``B``.
    lam : float
        The regularization ``λ > 0``.
    maintenance : int
        ``REMOVAL``, ``PROJECTION`` or ``MERGING``.
    merge_search : int
        ``GOLDEN`` (the binary rule's golden-section search per candidate) or ``LOOKUP``
        (``h`` read from the table of ``_merge_search._lookup_table``).
    """

    cdef public Py_ssize_t budget
    cdef public double lam
    cdef public int maintenance
    cdef public int merge_search
    cdef public long long n_steps          # t: rounds seen, every epoch and call
    cdef public long long n_maintenance    # budget maintenance steps made
    cdef public double degradation         # sum of ‖Δ‖² over them
    # projection: the Cholesky factor of the support set's Gram matrix, by
    # position (row i = vector i, oldest first; see "the span factor" below)
    cdef public double[:, ::1] chol
    # squared distance to the span of the earlier vectors that the factor
    # dropped, by position (a vector in that span; 0 for a kept one)
    cdef public double[::1] span_gap
    cdef double[::1] rhs
    # merging: the candidate partners (rows: see merge_smallest) and z
    cdef double[:, ::1] candidates
    cdef Py_ssize_t[::1] partner_pos
    cdef double[::1] merged

    _state_names = OnlineLearner._state_names + (
        "budget", "lam", "maintenance", "merge_search", "n_steps", "n_maintenance",
        "degradation", "chol", "span_gap")

    def __init__(self, Py_ssize_t budget=1, double lam=1e-4, int maintenance=RULE_REMOVAL,
                 int merge_search=SEARCH_GOLDEN):
        # projection reads k(x_i, x_p) from the Gram matrix; merging asks the
        # feature store for its one kernel value per partner
        self.budget = budget        # (before the engine's __init__ reads capacity_limit)
        OnlineLearner.__init__(self, track_gram=maintenance == RULE_PROJECTION)
        self.lam = lam
        self.maintenance = maintenance
        self.merge_search = merge_search
        self.n_steps = 0
        self.n_maintenance = 0
        self.degradation = 0.0
        self.chol = np.zeros((0, 0))
        self.span_gap = np.zeros(0)
        self.rhs = np.zeros(0)
        self.candidates = np.zeros((CANDIDATE_ROWS, 0))
        self.partner_pos = np.zeros(0, dtype=np.intp)
        self.merged = np.zeros(0)

    cdef Py_ssize_t capacity_limit(self) noexcept nogil:
        """The budget's vectors and the one a round appends before its
        maintenance step: ``budget + 1``."""
        return self.budget + 1      # (budget <= MAX_BUDGET: no overflow)

    def check_policy_state(self, Py_ssize_t pool_size):
        if self.merge_search not in (SEARCH_GOLDEN, SEARCH_LOOKUP):
            return f"merge_search={self.merge_search} out of range"
        return _rule_problem(self.budget, self.lam, self.maintenance, self.track_gram,
                             self.chol, self.span_gap, self.n_sv, self.capacity)

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef double score = self.dot_row()
        self.n_steps += 1
        pegasos_shrink(self, self.n_steps, self.lam)
        # the example's weight scales its loss, so its step: η_t w (a zero
        # weight adds nothing; without weights w = 1 and the stored w_i = ±1)
        if y * score < 1.0 and self.example_weight > 0.0:
            self.append_current(y * self.example_weight * self.scale)
            self.n_updates += 1
            if self.maintenance == RULE_PROJECTION:
                self.factor_append()
            if self.n_sv > self.budget:
                self.maintain()
        return score

    # ------------------------------------------------------------------
    # budget maintenance
    # ------------------------------------------------------------------
    cdef int maintain(self) except -1 nogil:
        self.n_maintenance += 1
        if self.maintenance == RULE_PROJECTION:
            return self.project_smallest()
        if self.maintenance == RULE_MERGING:
            return self.merge_smallest()
        return self.remove_smallest()

    cdef Py_ssize_t smallest_norm(self) except -1 nogil:
        """Position of ``argmin_i α_i² k_ii`` (ties: oldest; a NaN raises)."""
        cdef Py_ssize_t i, c
        cdef double v, best = INFINITY
        for i in range(self.n_sv):
            c = self.order[i]
            v = self.alpha[c] * self.alpha[c] * self.kself[c]
            if is_nan(v):
                raise_not_finite(b"A support vector's alpha_i^2 k_ii")
            if v < best:
                best = v
        for i in range(self.n_sv):
            c = self.order[i]
            if tied_or_below(self.alpha[c] * self.alpha[c] * self.kself[c], best, 0.0):
                return i
        return 0

    cdef int remove_smallest(self) except -1 nogil:
        """Removal: drop ``argmin α_i² k_ii``; ‖Δ‖² = α_p² k_pp."""
        cdef Py_ssize_t p = self.smallest_norm()
        cdef Py_ssize_t c = self.order[p]
        self.degradation += (self.alpha[c] * self.scale) ** 2 * self.kself[c]
        self.remove_at(p)
        return 0

    cdef int factor_append(self) except -1 nogil:
        """Grow the factor by the newest support vector."""
        if self.chol.shape[0] < self.n_sv or self.rhs.shape[0] < self.chol.shape[0]:
            with gil:   # first use, after unpickling (rhs is scratch, not saved), or growth
                self.chol, self.span_gap, self.rhs = _factor_room(
                    self.chol, self.span_gap, self.capacity, self.n_sv - 1)
        return span_append(self, self.chol, self.span_gap)

    cdef int project_smallest(self) except -1 nogil:
        """Projection: drop ``p = argmin α_i² k_ii`` and add
        ``α_p K_{-p}⁻¹ k_{-p,p}`` to the others' coefficients
        (:func:`span_project`)."""
        cdef Py_ssize_t p = self.smallest_norm()
        cdef Py_ssize_t i, j = 0, cp = self.order[p]
        cdef double w_p = self.alpha[cp]
        cdef double norm2 = span_project(self, self.chol, self.span_gap, self.rhs, p)
        # ‖Δ‖² = α_p² (k_pp − k_{-p,p}ᵀ d): the squared distance to the span
        self.degradation += (w_p * self.scale) ** 2 * max(self.kself[cp] - norm2, 0.0)
        for j in range(self.n_sv - 1):   # (checked before any coefficient changes)
            if not is_finite(self.alpha[self.order[j + (j >= p)]] + w_p * self.rhs[j]):
                raise_not_finite(b"A projected coefficient")
        j = 0
        for i in range(self.n_sv):
            if i != p:
                self.set_alpha(self.order[i], self.alpha[self.order[i]] + w_p * self.rhs[j])
                j += 1
        self.remove_at(p)
        return 0

    cdef Py_ssize_t smallest_coefficient(self) except -1 nogil:
        """Position of ``argmin_i |α_i|`` (ties: oldest; a NaN raises)."""
        cdef Py_ssize_t i
        cdef double best = INFINITY
        for i in range(self.n_sv):
            if is_nan(self.alpha[self.order[i]]):
                raise_not_finite(b"A support vector's coefficient")
            best = min(best, fabs(self.alpha[self.order[i]]))
        for i in range(self.n_sv):
            if tied_or_below(fabs(self.alpha[self.order[i]]), best, 0.0):
                return i
        return 0

    cdef int merge_smallest(self) except -1 nogil:
        """Merging (RBF): ``m = argmin |α_i|``; every other support vector
        ``n`` of the same sign is a candidate partner: ``κ = k(x_m, x_n)``,
        ``h`` by the golden-section search (``GOLDEN``) or read from the
        table (``LOOKUP``, ``_merge_search.lookup_partner``), its degradation ``α_m²
        + α_n² + 2 α_m α_n κ − α_z²``; the least (ties: oldest) is merged:
        both removed, ``(z, α_z)`` appended with ``z = h x_m + (1 − h)
        x_n``.  No partner: remove ``m``.

        The kernel values: :func:`partner_kernels` (with ``LOOKUP`` read
        from the round's kernel row when ``x_m`` is the current example,
        the usual case once the older vectors are merged ones: merged
        coefficients are never smaller than their parts, so the new vector
        is the smallest)."""
        cdef Py_ssize_t m = self.smallest_coefficient(), i, c, k = 0, n = -1, j
        cdef Py_ssize_t cm = self.order[m], d = self.n_features
        cdef double a_m = self.alpha[cm] * self.scale, h, sign_m = self.alpha[cm]
        if not self.uses_store or self.candidates.shape[1] < self.n_sv \
                or self.merged.shape[0] < d:
            with gil:
                self.candidates, self.partner_pos, self.merged = _merge_scratch(self, d)
        cdef double[:, ::1] cand = self.candidates
        cdef Py_ssize_t* partner = &self.partner_pos[0]
        cdef const Py_ssize_t* order = &self.order[0]
        cdef const double* alpha = &self.alpha[0]
        for i in range(self.n_sv):
            c = order[i]
            if i == m or alpha[c] * sign_m <= 0.0:
                continue
            partner[k] = i
            cand[A_N, k] = alpha[c] * self.scale
            k += 1
        if k == 0:
            self.degradation += a_m * a_m * self.kself[cm]
            return self.remove_at(m)
        partner_kernels(self, cm, partner, k, cand, self.merge_search == SEARCH_LOOKUP, False)
        j = coefficient_partner(a_m, cand, k, self.merge_search)
        n = partner[j]
        h = cand[LOWER, j]
        self.blend_vectors(cm, order[n], h, &self.merged[0])
        self.degradation += cand[DEGRADATION, j]
        self.remove_at(max(m, n))
        self.remove_at(min(m, n))
        self.append_vector(&self.merged[0], cand[UPPER, j])
        return 0

    def compress(self, Py_ssize_t pool_size=-1):
        """Bring a support set over the budget back to ``budget`` vectors by
        the learner's own rule, one maintenance step at a time, each the
        step a round makes after an addition (removal, projection or merging
        as in :meth:`maintain`); returns the steps made (0 within the
        budget).  For a model that is the union of several (parameter
        mixing, ``skbudget.parallel.compress``); ``pool_size`` as in
        :meth:`check_state`."""
        return compress_to_budget(self, pool_size)


cdef class MulticlassBSGDLearner(SharedSupportLearner):
    """BSGD on ``k`` classes with one shared support set
    (doc/algorithms.md#bsgd-multi-class).

    Round ``t`` with class ``y``: class scores ``f_c`` before the step,
    runner-up ``r = argmax_{c != y} f_c`` (ties: the lowest index); the
    shrink by ``1 − 1/t`` is the scale ``1/(λ t)``; if ``f_y − f_r < 1``,
    ``x_t`` is appended with the row ``W = e_y − e_r`` (``α = η_t W``).
    ``tau`` holds the rows ``W_i = λ t α_i`` and ``row_sqnorm`` their
    ``‖W_i‖²``.  An example of weight ``w`` (``sample_weight`` times
    ``class_weight``) takes the step ``η_t w``: its row is ``w (e_y −
    e_r)``, none for ``w = 0``.  After an addition with ``|S| = B + 1``:

    * removal: remove ``argmin ‖W_i‖² k_ii`` (ties: oldest);
    * projection: that ``p``; add ``β_j W_p`` to every other row, ``β =
      K_{−p}⁻¹ k_{−p,p}`` (the span factor of the binary rule);
    * merging (RBF): ``m = argmin ‖W_i‖²``; every other ``n`` is a
      candidate; ``h`` maximizes ``‖W_z(h)‖²``; the least degradation
      (ties: oldest) is merged into ``z = h x_m + (1 − h) x_n`` with the row
      ``W_z = κ^{(1−h)²} W_m + κ^{h²} W_n``, appended as the newest (with the
      class of ``x_m``).

    ``process_example`` returns ``f_y − f_r``: a mistake (``argmax_c f_c !=
    y``, ties to the lowest index) when it is ``<= 0``, except that a tie
    the true class wins (``f_y = f_r`` with ``r > y``) returns the smallest
    positive double.  A non-finite score raises.

    Parameters
    ----------
    n_classes : int
        ``k`` (at least 2; the estimator uses it for 3 or more).
    budget, lam, maintenance, merge_search :
        As :class:`BudgetedSGDLearner`'s (``LOOKUP``: ``h`` by a grid and
        safeguarded Newton steps, ``_merge_search.row_partner``).
    """

    cdef public Py_ssize_t budget
    cdef public double lam
    cdef public int maintenance
    cdef public int merge_search
    cdef public long long n_steps          # t: rounds seen, every epoch and call
    cdef public long long n_maintenance    # budget maintenance steps made
    cdef public double degradation         # sum of ‖Δ‖² over them (true coefficients)
    cdef public double[::1] row_sqnorm     # ‖W_c‖² of every cell's row (stale if free)
    cdef public double[::1] new_row        # scratch: the row of a new vector
    # projection: the span factor, as BudgetedSGDLearner's
    cdef public double[:, ::1] chol
    cdef public double[::1] span_gap
    cdef double[::1] rhs
    # merging: the candidate partners (rows: see _merge_search.pxd); z, then W_z
    cdef double[:, ::1] candidates
    cdef Py_ssize_t[::1] partner_pos
    cdef double[::1] merged

    _per_class_names = SharedSupportLearner._per_class_names + ("new_row",)
    _state_names = SharedSupportLearner._state_names + (
        "budget", "lam", "maintenance", "merge_search", "n_steps", "n_maintenance", "degradation",
        "row_sqnorm", "new_row", "chol", "span_gap")

    def __init__(self, Py_ssize_t n_classes=3, Py_ssize_t budget=1, double lam=1e-4,
                 int maintenance=RULE_REMOVAL, int merge_search=SEARCH_GOLDEN):
        self.row_sqnorm = np.zeros(0)      # (grown with the cells)
        self.budget = budget        # (before the engine's __init__ reads capacity_limit)
        SharedSupportLearner.__init__(self, n_classes,
                                      track_gram=maintenance == RULE_PROJECTION)
        self.lam = lam
        self.maintenance = maintenance
        self.merge_search = merge_search
        self.n_steps = 0
        self.n_maintenance = 0
        self.degradation = 0.0
        self.new_row = np.zeros(n_classes)
        self.chol = np.zeros((0, 0))
        self.span_gap = np.zeros(0)
        self.rhs = np.zeros(0)
        self.candidates = np.zeros((CANDIDATE_ROWS, 0))
        self.partner_pos = np.zeros(0, dtype=np.intp)
        self.merged = np.zeros(0)

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        SharedSupportLearner.grow(self, new_capacity)
        self.row_sqnorm = _resized(self.row_sqnorm, new_capacity)
        return 0

    cdef Py_ssize_t capacity_limit(self) noexcept nogil:
        """As :meth:`BudgetedSGDLearner.capacity_limit`."""
        return self.budget + 1      # (budget <= MAX_BUDGET: no overflow)

    def set_state(self, state):
        # a file saved before the shared merge had a search of its own for
        # 'lookup' has no merge_search: that learner ran the golden section
        if "merge_search" not in state:
            state = {**state, "merge_search": SEARCH_GOLDEN}
        SharedSupportLearner.set_state(self, state)

    def check_policy_state(self, Py_ssize_t pool_size):
        if self.merge_search not in (SEARCH_GOLDEN, SEARCH_LOOKUP):
            return f"merge_search={self.merge_search} out of range"
        return (SharedSupportLearner.check_policy_state(self, pool_size)
                or _rule_problem(self.budget, self.lam, self.maintenance, self.track_gram,
                                 self.chol, self.span_gap, self.n_sv, self.capacity)
                or size_problem({"row_sqnorm": self.row_sqnorm}, self.capacity)
                or size_problem({"new_row": self.new_row}, self.n_outputs, "entries")
                or _rows_problem(self))


    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef Py_ssize_t label = self.class_index(y), cell, runner
        cdef double margin
        cdef double* scores = &self.scores[0]
        margin = self.round_margin(label, &runner)    # scores before the step: scale 1/(λ (t − 1))
        if not (isfinite(margin) or runner < 0):   # finite scores too far apart
            with gil:
                raise ValueError(
                    f"the class scores are not finite or too far apart ({scores[label]} for "
                    f"the true class, {scores[runner]} for the runner-up): the coefficients "
                    f"1/(alpha t) overflow; use a larger alpha")
        self.n_steps += 1
        pegasos_shrink(self, self.n_steps, self.lam)
        # an example of weight w takes the step η_t w: the row w (e_y − e_r)
        # (a zero weight adds nothing; without weights w = 1)
        if margin < 1.0 and self.example_weight > 0.0:
            self.pair_row(&self.new_row[0], label, runner, self.example_weight)
            cell = self.append_pattern(label, &self.new_row[0])
            self.row_sqnorm[cell] = dense_dot(&self.new_row[0], &self.new_row[0],
                                              self.n_outputs)
            self.n_updates += 1
            if self.maintenance == RULE_PROJECTION:
                self.factor_append()
            if self.n_sv > self.budget:
                self.maintain()
        return self.round_value(margin, label, runner)

    cdef int maintain(self) except -1 nogil:
        self.n_maintenance += 1
        if self.maintenance == RULE_MERGING:
            return self.merge_smallest()
        cdef Py_ssize_t p = oldest_minimum(&self.row_sqnorm[0], &self.kself[0], &self.order[0],
                                           self.n_sv)
        cdef Py_ssize_t i, j = 0, r, c, cp = self.order[p], k = self.n_outputs
        cdef double spread = self.kself[cp]
        if self.maintenance == RULE_PROJECTION:
            spread = max(spread - span_project(self, self.chol, self.span_gap, self.rhs, p), 0.0)
            for j in range(self.n_sv - 1):   # (checked before any coefficient changes)
                c = self.order[j + (j >= p)]
                for r in range(k):
                    if not is_finite(self.tau[c, r] + self.rhs[j] * self.tau[cp, r]):
                        raise_not_finite(b"A projected coefficient")
            j = 0
            for i in range(self.n_sv):
                if i != p:
                    c = self.order[i]
                    for r in range(k):
                        self.tau[c, r] = self.tau[c, r] + self.rhs[j] * self.tau[cp, r]
                    self.row_sqnorm[c] = dense_dot(&self.tau[c, 0], &self.tau[c, 0], k)
                    j += 1
        # ‖Δ‖² = ‖α_p‖² times k_pp (removal) or the squared distance of x_p
        # to the span of the others (projection)
        self.degradation += self.row_sqnorm[cp] * (self.scale * self.scale) * spread
        return self.remove_at(p)

    cdef int factor_append(self) except -1 nogil:
        """Grow the span factor by the newest support vector."""
        if self.chol.shape[0] < self.n_sv or self.rhs.shape[0] < self.chol.shape[0]:
            with gil:
                self.chol, self.span_gap, self.rhs = _factor_room(
                    self.chol, self.span_gap, self.capacity, self.n_sv - 1)
        return span_append(self, self.chol, self.span_gap)

    cdef int merge_smallest(self) except -1 nogil:
        """Merging (RBF): ``m = argmin ‖W_i‖²``; every other support vector
        ``n`` is a candidate partner: ``⟨W_m, W_n⟩`` (O(k)) and ``κ = k(x_m,
        x_n)`` (:func:`partner_kernels`: with ``LOOKUP`` from the round's
        kernel row when ``x_m`` is the current example), then the search:
        golden section (``GOLDEN``) or the grid and Newton steps
        (``LOOKUP``), ``_merge_search.row_partner``; the least
        degradation is merged: both removed, ``(z, W_z)`` appended."""
        cdef Py_ssize_t k = self.n_outputs, d = self.n_features, i, c, n_cand = 0, j, n, r
        cdef Py_ssize_t first = -1, second = -1, n_nonzero = 0
        cdef Py_ssize_t m = oldest_minimum(&self.row_sqnorm[0], NULL, &self.order[0], self.n_sv)
        cdef Py_ssize_t cm = self.order[m], cell, label_m = self.label[cm]
        cdef bint lookup = self.merge_search == SEARCH_LOOKUP
        cdef double h, A, B, log_kappa
        cdef double* w_m = &self.tau[cm, 0]
        cdef double* w_n
        if not self.uses_store or self.candidates.shape[1] < self.n_sv \
                or self.merged.shape[0] < d + k:
            with gil:
                self.candidates, self.partner_pos, self.merged = _merge_scratch(self, d + k)
        cdef double[:, ::1] cand = self.candidates
        # (by pointers: B candidates a merge; the scratch holds n_sv columns
        # and every cell a row)
        cdef Py_ssize_t* partner = &self.partner_pos[0]
        cdef const Py_ssize_t* order = &self.order[0]
        cdef const double* sqnorm = &self.row_sqnorm[0]
        cdef const double* tau = &self.tau[0, 0]
        cdef Py_ssize_t tau_stride = self.tau.shape[1]
        cdef double* norm_n = &cand[A_N, 0]
        cdef double* cross = &cand[CROSS, 0]
        cdef double* cells = &cand[CELL, 0]
        cdef const double* kappa = &cand[KAPPA, 0]
        cdef PendingInputs pending
        for i in range(self.n_sv):
            if i == m:
                continue
            c = order[i]
            partner[n_cand] = i
            norm_n[n_cand] = sqnorm[c]
            cells[n_cand] = c
            n_cand += 1
        # the search by grid and Newton steps computes ln κ and ⟨W_m, W_n⟩
        # of the far candidates (_merge_search.kappa_far) where it needs them
        pending.logs = partner_kernels(self, cm, partner, n_cand, cand, lookup, True)
        pending.row_m = w_m
        pending.rows = tau
        pending.stride = tau_stride
        pending.n_outputs = k
        # ⟨W_m, W_n⟩ of the others: a row W_m with at most two nonzero
        # entries (a vector never merged: w (e_y − e_r)) by its two products
        # (pair_dot: dense_dot's bits) where W_n is finite (its norm is)
        for r in range(k):
            if w_m[r] != 0.0:
                n_nonzero += 1
                if first < 0:
                    first = r
                else:
                    second = r
        for i in range(n_cand):
            if not (lookup and kappa_far(kappa[i])):
                if n_nonzero <= 2 and is_finite(norm_n[i]):
                    cross[i] = pair_dot(w_m, tau + <Py_ssize_t> cells[i] * tau_stride, first,
                                        second)
                else:
                    cross[i] = dense_dot(w_m, tau + <Py_ssize_t> cells[i] * tau_stride, k)
        j = row_partner(self.row_sqnorm[cm], cand, n_cand, self.merge_search,
                        &pending if lookup else NULL)
        if lookup:
            A = cand[POWER_M, j]
            B = cand[POWER_N, j]
        else:
            log_kappa = cand[LOG_KAPPA, j]
            A = exp((1.0 - cand[LOWER, j]) * (1.0 - cand[LOWER, j]) * log_kappa)
            B = exp(cand[LOWER, j] * cand[LOWER, j] * log_kappa)
        n = self.partner_pos[j]
        h = cand[LOWER, j]
        w_n = &self.tau[self.order[n], 0]
        cdef double* z = &self.merged[0]
        cdef double* w_z = &self.merged[d]
        self.blend_vectors(cm, self.order[n], h, z)
        for r in range(k):
            w_z[r] = w_m[r] * A + w_n[r] * B
        self.degradation += cand[DEGRADATION, j] * (self.scale * self.scale)
        self.remove_at(max(m, n))
        self.remove_at(min(m, n))
        cell = self.append_point(z, label_m, w_z)
        self.row_sqnorm[cell] = dense_dot(w_z, w_z, k)
        return 0

    def compress(self, Py_ssize_t pool_size=-1):
        """:meth:`BudgetedSGDLearner.compress` on the coefficient rows: the
        learner's own maintenance step (§12) until ``|S| <= budget``;
        returns the steps made."""
        return compress_to_budget(self, pool_size)


def compress_to_budget(OnlineLearner lr, Py_ssize_t pool_size=-1):
    """The maintenance steps of a BSGD learner (binary or shared) until its
    support set holds at most ``budget`` vectors; their number.  The state
    is checked first (:meth:`check_state`), and a projection's span factor
    must cover every support vector.  The current example is forgotten: no
    step outside a round reads one (merging takes every ``κ`` from the
    stored rows)."""
    cdef BudgetedSGDLearner binary = lr if isinstance(lr, BudgetedSGDLearner) else None
    cdef MulticlassBSGDLearner shared = lr if isinstance(lr, MulticlassBSGDLearner) else None
    if binary is None and shared is None:
        raise TypeError(f"not a BSGD learner: {type(lr).__name__}")
    lr.check_state(pool_size)
    cdef Py_ssize_t steps = lr.n_sv - (binary.budget if shared is None else shared.budget)
    cdef int rule = binary.maintenance if shared is None else shared.maintenance
    if steps <= 0:
        return 0
    if rule == RULE_PROJECTION:
        owner = binary if shared is None else shared
        chol, gap = owner.chol, owner.span_gap
        if chol.shape[0] < lr.n_sv:
            raise ValueError(f"{type(lr).__name__}: the span factor covers {chol.shape[0]} of "
                             f"the {lr.n_sv} support vectors; projection needs all of them")
        chol, gap, rhs = _factor_room(chol, gap, lr.capacity, lr.n_sv)
        owner.chol, owner.span_gap = chol, gap
        if shared is None:
            binary.rhs = rhs
        else:
            shared.rhs = rhs
    lr.forget_current()
    cdef Py_ssize_t i
    with nogil:
        for i in range(steps):
            if shared is None:
                binary.maintain()
            else:
                shared.maintain()
    return steps


cdef bint partner_kernels(OnlineLearner lr, Py_ssize_t cm, const Py_ssize_t* partner,
                          Py_ssize_t k, double[:, ::1] cand, bint lookup,
                          bint defer_far_logs) except -1 nogil:
    """``κ = k(x_m, x_n)`` and ``ln κ`` (rows ``KAPPA``, ``LOG_KAPPA`` of
    ``cand``) for ``x_m`` in cell ``cm`` and the support vectors at the
    ``k`` positions ``partner`` of ``lr`` (RBF, feature store).  For the
    golden-section search (``lookup`` false) each ``κ`` from the two stored
    rows (:meth:`kernel_between_slots`) and ``ln κ`` by libm's ``log``.
    For ``lookup``, what the round already computed: when ``x_m`` is the
    current example its kernel row (``ensure_row``), ``ln κ`` by NumPy's
    vectorized ``log``; otherwise ``ln κ`` is the kernel's argument ``−γ
    ‖x_m − x_n‖²`` from one inner product (``dot16_between_slots``: sixteen
    partial sums, AVX2 where the CPU has it) and the stored squared norms, and
    ``κ`` its vectorized ``exp``.  With ``defer_far_logs`` (the shared
    search), the ``ln κ`` of far values from the row
    (``_merge_search.kappa_far``) are left to the search, which seldom needs
    them; returns whether it did."""
    cdef Py_ssize_t i, c, sm = lr.slot[cm]
    cdef bint from_row = lookup and sm == lr.cur_slot
    cdef double* kappa = &cand[KAPPA, 0]
    cdef double* log_kappa = &cand[LOG_KAPPA, 0]
    if from_row:
        lr.ensure_row()
    for i in range(k):
        c = lr.order[partner[i]]
        if from_row:
            kappa[i] = lr.k_row[c]
        elif lookup:
            log_kappa[i] = -lr.kernel_gamma * squared_distance(
                lr.dot16_between_slots(sm, lr.slot[c]), lr.store_sq[sm], lr.store_sq[lr.slot[c]])
        else:
            kappa[i] = lr.kernel_between_slots(sm, lr.slot[c])
            log_kappa[i] = log_of(kappa[i])
    cdef Py_ssize_t n_near = 0
    cdef double* near = &cand[STEPPING, 0]         # (scratch of the search)
    if from_row and defer_far_logs:
        for i in range(k):
            if not kappa_far(kappa[i]):
                near[n_near] = i
                log_kappa[n_near] = kappa[i]        # (packed, then put in place)
                n_near += 1
        log_inplace(log_kappa, n_near)
        for i in range(n_near - 1, -1, -1):         # (a packed value not yet read stays)
            log_kappa[<Py_ssize_t> near[i]] = log_kappa[i]
        return True
    if from_row:
        memcpy(log_kappa, kappa, k * sizeof(double))
        log_inplace(log_kappa, k)
    elif lookup:
        memcpy(kappa, log_kappa, k * sizeof(double))
        exp_inplace(kappa, k)
    return False


cdef inline double pair_dot(const double* w_m, const double* w_n, Py_ssize_t first,
                            Py_ssize_t second) noexcept nogil:
    """``dense_dot(w_m, w_n, k)`` for a ``w_m`` whose nonzero entries are
    among those at ``first`` and ``second`` (−1: none) and a finite ``w_n``,
    bit for bit: every other product is a zero, which leaves dense_dot's
    partial sums as they are (each starts at +0, so a −0 product counts as
    +0), and the two products meet in one addition whichever partial sums
    hold them."""
    cdef double p = 0.0 + (w_m[first] * w_n[first] if first >= 0 else 0.0)
    cdef double q = 0.0 + (w_m[second] * w_n[second] if second >= 0 else 0.0)
    return p + q


def _pair_dot(w_m, w_n):
    """Python access to :func:`pair_dot` (for tests): ``w_m`` with at most
    two nonzero entries."""
    cdef double[::1] a = np.ascontiguousarray(w_m, dtype=np.float64)
    cdef double[::1] b = np.ascontiguousarray(w_n, dtype=np.float64)
    nonzero = np.flatnonzero(np.asarray(a))
    if len(nonzero) > 2 or a.shape[0] != b.shape[0] or a.shape[0] == 0:
        raise ValueError("w_m needs at most two nonzero entries and w_n its length")
    first = nonzero[0] if len(nonzero) else -1
    second = nonzero[1] if len(nonzero) > 1 else -1
    return pair_dot(&a[0], &b[0], first, second), dense_dot(&a[0], &b[0], a.shape[0])


cdef int pegasos_shrink(OnlineLearner lr, long long t, double lam) except -1 nogil:
    """Round ``t``'s shrink of every coefficient by ``1 − 1/t``: the stored
    values (``w_i = λ t α_i``, rows ``W_i``) are unchanged, the global scale
    becomes ``1/(λ t)``.  At ``t = 1`` the factor is 0: the model restarts
    empty."""
    if t == 1:
        while lr.n_sv > 0:
            lr.remove_at(lr.n_sv - 1)
    lr.scale = 1.0 / (lam * t)
    return 0


cdef Py_ssize_t oldest_minimum(const double* value, const double* weight, const Py_ssize_t* order,
                               Py_ssize_t n) except -1 nogil:
    """The oldest of the ``n`` positions whose ``value[order[i]]`` (times
    ``weight[order[i]]`` unless NULL) is the minimum up to the tie tolerance; a
    NaN raises."""
    cdef Py_ssize_t i
    cdef double best = INFINITY, v
    for i in range(n):
        v = value[order[i]] * (1.0 if weight == NULL else weight[order[i]])
        if is_nan(v):
            raise_not_finite(b"A support vector's ||W_i||^2 k_ii")
        best = min(best, v)
    for i in range(n):
        if tied_or_below(value[order[i]] * (1.0 if weight == NULL else weight[order[i]]), best,
                         0.0):
            return i
    return 0


def _rule_problem(Py_ssize_t budget, double lam, int maintenance, bint track_gram, chol,
                  span_gap, Py_ssize_t n_sv, Py_ssize_t capacity):
    """What is inconsistent in a BSGD learner's rule, capacity and span
    factor (at most one row per cell: it grows with them), or None."""
    if not (budget >= 1 and lam > 0 and maintenance in (
            RULE_REMOVAL, RULE_PROJECTION, RULE_MERGING)):
        return f"budget={budget}, lam={lam}, maintenance={maintenance} out of range"
    problem = _capacity_problem(budget, n_sv, capacity)
    if problem is None and maintenance == RULE_PROJECTION:
        if not track_gram:
            return "projection needs track_gram"
        if chol.shape[0] != chol.shape[1] or (n_sv and chol.shape[0] < n_sv) or (
                span_gap.shape[0] != chol.shape[0]):
            return f"the Cholesky factor is not square over {n_sv} vectors"
        if chol.shape[0] > capacity:
            return f"the Cholesky factor has {chol.shape[0]} rows, more than the {capacity} cells"
    return problem


def _rows_problem(MulticlassBSGDLearner lr):
    """A description unless every support vector's coefficient row is finite
    (the rounds keep them so; the merge's pair_dot reads a row's two entries
    only), else None."""
    rows = np.asarray(lr.tau)[np.asarray(lr.order)[:lr.n_sv]]
    if not np.all(np.isfinite(rows)):
        return "a support vector's coefficient row is not finite"
    return None


def _merge_scratch(OnlineLearner learner, Py_ssize_t n_values):
    """The merge's scratch arrays, sized for ``learner``'s capacity: the
    candidates table, their positions, and ``n_values`` doubles (the merged
    point, and a multi-class learner's merged row); a clear error without
    the feature store."""
    if not learner.uses_store:
        raise ValueError("maintenance='merging' needs the engine's feature store (the 'rbf' "
                         "kernel on dense input or CSR input of at most 32768 features)")
    return (np.zeros((CANDIDATE_ROWS, learner.capacity)),
            np.zeros(learner.capacity, dtype=np.intp), np.zeros(n_values))


