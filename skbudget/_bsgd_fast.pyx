# cython: language_level=3, cdivision=True
"""Budgeted SGD for kernel SVMs (ALGORITHMS.md §11), and its multi-class
form on one shared support set (§12).

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
is ``η_t w``), so the ties §11 calls "the rule, not the exception" stay
exact.  Values compared for a tie count as tied when they
agree to a relative ``TIE_TOL``.

:class:`MulticlassBSGDLearner` is §12: one support set for every class
(``_shared_support``), each vector with a coefficient row ``W_i = λ t α_i``
(a new one is ``e_y − e_r``, ``r`` the runner-up class), the Crammer–Singer
hinge, and the same three rules on the rows.  The two learners share the
span factor and its projection (:func:`span_append`, :func:`span_project`)
and the merge search (:func:`best_partner`): with rows, the golden-section
search maximizes ``‖W_z(h)‖²``, which depends on a pair only through
``‖W_m‖²``, ``‖W_n‖²``, ``⟨W_m, W_n⟩`` and ``κ`` (O(1) per probe after an
O(k) set-up; ``‖W_i‖²`` is kept per vector).
"""

import numpy as np
from libc.float cimport DBL_MIN
from libc.math cimport exp, fabs, isfinite, log, sqrt, INFINITY
from libc.string cimport memcpy

from skbudget._engine cimport OnlineLearner
from skbudget._engine import _resized, size_problem
from skbudget._elementwise cimport exp_inplace, log_inplace
from skbudget._kernel_rows cimport dense_dot, squared_distance
from skbudget._numbers cimport is_finite, is_nan, raise_not_finite
from skbudget._shared_support cimport SharedSupportLearner

# relative tolerance under which two compared values count as tied
cdef double TIE_TOL = 1e-9
# a vector whose squared distance to the span of the earlier ones is at most
# SPAN_TOL k(x, x) lies in that span (the projection gives it no share)
cdef double SPAN_TOL = 1e-8
# golden-section search: stop when the bracket is this short
cdef double GOLDEN_TOL = 1e-6

# the merge search (§11): the golden-section rule, or its table h*(m, κ)
cdef enum:
    SEARCH_GOLDEN = 0
    SEARCH_LOOKUP = 1
GOLDEN, LOOKUP = SEARCH_GOLDEN, SEARCH_LOOKUP
# the table's grid: nodes i / LOOKUP_STEPS, i = 0 .. LOOKUP_STEPS for κ and
# up to LOOKUP_STEPS / 2 for m (the share of the smaller coefficient, <= 1/2)
cdef enum:
    LOOKUP_STEPS = 400
    LOOKUP_ROWS = LOOKUP_STEPS // 2 + 1

# the maintenance rules (compiled constants; the Python names below)
cdef enum:
    RULE_REMOVAL = 0
    RULE_PROJECTION = 1
    RULE_MERGING = 2
REMOVAL, PROJECTION, MERGING = RULE_REMOVAL, RULE_PROJECTION, RULE_MERGING

# rows of the learners' candidates table, one column per merge partner
cdef enum:
    A_N = 0          # its coefficient α_n (multi-class: ‖W_n‖²)
    KAPPA = 1        # k(x_m, x_n)
    LOG_KAPPA = 2
    LOWER = 3        # the search's bracket, then h
    UPPER = 4        # the bracket, then alpha_z (multi-class: ‖W_z‖²)
    DEGRADATION = 5
    CROSS = 6        # multi-class: ⟨W_m, W_n⟩
    CANDIDATE_ROWS = 7


cdef inline bint _tied_or_below(double v, double best) noexcept nogil:
    """``v`` is the minimum ``best`` up to a relative ``TIE_TOL``."""
    return v <= best + TIE_TOL * fabs(best)


cdef Py_ssize_t first_least(const double* values, Py_ssize_t n,
                            const char* what) except -1 nogil:
    """The position of the least of ``values[0:n]`` (``n >= 1``), the first
    of those within ``TIE_TOL`` of it (ties: the oldest, for values in
    position order).  A NaN or infinite value is an overflow of the model:
    ``ValueError`` naming ``what`` (every position has an answer or the
    call raises; no comparison sees a NaN)."""
    cdef Py_ssize_t i
    cdef double best = INFINITY
    for i in range(n):
        if not is_finite(values[i]):
            raise_not_finite(what)
        if values[i] < best:
            best = values[i]
    for i in range(n):
        if _tied_or_below(values[i], best):
            return i
    return 0        # (not reached: the least is within the tolerance of itself)


def _first_least(values):
    """Python access to :func:`first_least` (for tests)."""
    cdef double[::1] v = np.ascontiguousarray(values, dtype=np.float64)
    if v.shape[0] == 0:
        raise ValueError("no values")
    return first_least(&v[0], v.shape[0], b"a test value")


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
        ``GOLDEN`` (§11's golden-section search per candidate) or ``LOOKUP``
        (``h`` read from the table of :func:`_lookup_table`).
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
        OnlineLearner.__init__(self, capacity=budget + 2,
                               track_gram=maintenance == RULE_PROJECTION)
        self.budget = budget
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

    def check_policy_state(self, Py_ssize_t pool_size):
        if self.merge_search not in (SEARCH_GOLDEN, SEARCH_LOOKUP):
            return f"merge_search={self.merge_search} out of range"
        return _rule_problem(self.budget, self.lam, self.maintenance, self.track_gram,
                             self.chol, self.span_gap, self.n_sv)

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
            if _tied_or_below(self.alpha[c] * self.alpha[c] * self.kself[c], best):
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
            if _tied_or_below(fabs(self.alpha[self.order[i]]), best):
                return i
        return 0

    cdef int merge_smallest(self) except -1 nogil:
        """Merging (RBF): ``m = argmin |α_i|``; every other support vector
        ``n`` of the same sign is a candidate partner: ``κ = k(x_m, x_n)``,
        ``h`` by the golden-section search (``GOLDEN``) or read from the
        table (``LOOKUP``, :func:`lookup_partner`), its degradation ``α_m²
        + α_n² + 2 α_m α_n κ − α_z²``; the least (ties: oldest) is merged:
        both removed, ``(z, α_z)`` appended with ``z = h x_m + (1 − h)
        x_n``.  No partner: remove ``m``.

        ``GOLDEN`` computes each ``κ`` from the two stored rows
        (:meth:`kernel_between_slots`) and ``ln κ`` from it.  ``LOOKUP``
        reads ``κ`` from the round's kernel row when ``x_m`` is the current
        example (the usual case once the older vectors are merged ones:
        merged coefficients are never smaller than their parts, so the new
        vector is the smallest), its ``ln κ`` by NumPy's vectorized ``log``;
        otherwise ``ln κ`` is the kernel's argument ``−γ ‖x_m − x_n‖²`` and
        ``κ`` its vectorized ``exp``."""
        cdef Py_ssize_t m = self.smallest_coefficient(), i, c, k = 0, n = -1, j
        cdef Py_ssize_t cm = self.order[m], sm = self.slot[cm], d = self.n_features
        cdef double a_m = self.alpha[cm] * self.scale, h, sign_m = self.alpha[cm]
        cdef double minus_gamma = -self.kernel_gamma
        cdef bint lookup = self.merge_search == SEARCH_LOOKUP, from_row = False
        cdef const double* x_m
        cdef const double* x_n
        if not self.uses_store or self.candidates.shape[1] < self.n_sv \
                or self.merged.shape[0] < d or (lookup and LOOKUP_H == NULL):
            with gil:
                self.candidates, self.partner_pos, self.merged = _merge_scratch(self, d)
                if lookup:
                    _lookup_table()
        cdef double[:, ::1] cand = self.candidates
        cdef double* a_n = &cand[A_N, 0]
        cdef double* kappa = &cand[KAPPA, 0]
        cdef double* log_kappa = &cand[LOG_KAPPA, 0]
        cdef Py_ssize_t* partner = &self.partner_pos[0]
        cdef const Py_ssize_t* order = &self.order[0]
        cdef const double* alpha = &self.alpha[0]
        cdef const double* k_row
        x_m = self.vector_of(cm)
        if lookup and sm == self.cur_slot:
            self.ensure_row()
            from_row = True
        k_row = &self.k_row[0]
        for i in range(self.n_sv):
            c = order[i]
            if i == m or alpha[c] * sign_m <= 0.0:
                continue
            partner[k] = i
            a_n[k] = alpha[c] * self.scale
            if from_row:
                kappa[k] = k_row[c]
            elif lookup:
                log_kappa[k] = minus_gamma * squared_distance(
                    dense_dot(x_m, self.vector_of(c), d), self.store_sq[sm],
                    self.store_sq[self.slot[c]])
            else:
                kappa[k] = self.kernel_between_slots(sm, self.slot[c])
                log_kappa[k] = log_of(kappa[k])
            k += 1
        if k == 0:
            self.degradation += a_m * a_m * self.kself[cm]
            return self.remove_at(m)
        if from_row:
            memcpy(log_kappa, kappa, k * sizeof(double))
            log_inplace(log_kappa, k)
        elif lookup:
            memcpy(kappa, log_kappa, k * sizeof(double))
            exp_inplace(kappa, k)
        if lookup:
            j = lookup_partner(a_m, cand, k)
        else:
            j = best_partner(a_m, cand, k, False)
        n = partner[j]
        h = cand[LOWER, j]
        x_n = self.vector_of(order[n])
        for i in range(d):
            self.merged[i] = h * x_m[i] + (1.0 - h) * x_n[i]
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
    """BSGD on ``k`` classes with one shared support set (ALGORITHMS.md §12).

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
      K_{−p}⁻¹ k_{−p,p}`` (the span factor of §11);
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
    budget, lam, maintenance :
        As :class:`BudgetedSGDLearner`'s.
    """

    cdef public Py_ssize_t budget
    cdef public double lam
    cdef public int maintenance
    cdef public long long n_steps          # t: rounds seen, every epoch and call
    cdef public long long n_maintenance    # budget maintenance steps made
    cdef public double degradation         # sum of ‖Δ‖² over them (true coefficients)
    cdef public double[::1] row_sqnorm     # ‖W_c‖² of every cell's row (stale if free)
    cdef public double[::1] new_row        # scratch: the row of a new vector
    # projection: the span factor, as BudgetedSGDLearner's
    cdef public double[:, ::1] chol
    cdef public double[::1] span_gap
    cdef double[::1] rhs
    # merging: the candidate partners (rows: see best_partner); z, then W_z
    cdef double[:, ::1] candidates
    cdef Py_ssize_t[::1] partner_pos
    cdef double[::1] merged

    _state_names = SharedSupportLearner._state_names + (
        "budget", "lam", "maintenance", "n_steps", "n_maintenance", "degradation",
        "row_sqnorm", "new_row", "chol", "span_gap")

    def __init__(self, Py_ssize_t n_classes=3, Py_ssize_t budget=1, double lam=1e-4,
                 int maintenance=RULE_REMOVAL):
        self.row_sqnorm = np.zeros(0)      # (grown with the cells)
        SharedSupportLearner.__init__(self, n_classes, capacity=budget + 2,
                                      track_gram=maintenance == RULE_PROJECTION)
        self.budget = budget
        self.lam = lam
        self.maintenance = maintenance
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

    def check_policy_state(self, Py_ssize_t pool_size):
        return (SharedSupportLearner.check_policy_state(self, pool_size)
                or _rule_problem(self.budget, self.lam, self.maintenance, self.track_gram,
                                 self.chol, self.span_gap, self.n_sv)
                or size_problem({"row_sqnorm": self.row_sqnorm}, self.capacity)
                or size_problem({"new_row": self.new_row}, self.n_outputs, "entries"))

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef Py_ssize_t label = <Py_ssize_t> y, r, c, cell, runner = -1
        cdef double margin, spread = 0.0
        cdef double* scores = &self.scores[0]
        if not (0 <= label < self.n_outputs and label == y):
            with gil:
                raise ValueError(
                    f"the label must be a class index in [0, {self.n_outputs}); got {y}")
        self.ensure_row()
        self.compute_scores()       # f_c before the step: scale 1/(λ (t − 1))
        for c in range(self.n_outputs):
            spread += scores[c] * 0.0     # NaN if any score is NaN or ±inf
            if c != label and (runner < 0 or scores[c] > scores[runner]):
                runner = c
        margin = scores[label] - scores[runner]
        if not isfinite(margin + spread):   # a score not finite, or the margin
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
            for r in range(self.n_outputs):
                self.new_row[r] = 0.0
            self.new_row[label] = self.example_weight
            self.new_row[runner] = -self.example_weight
            cell = self.append_pattern(label, &self.new_row[0])
            self.row_sqnorm[cell] = dense_dot(&self.new_row[0], &self.new_row[0],
                                              self.n_outputs)
            self.n_updates += 1
            if self.maintenance == RULE_PROJECTION:
                self.factor_append()
            if self.n_sv > self.budget:
                self.maintain()
        if margin == 0.0 and runner > label:
            return DBL_MIN          # the true class wins the tie: no mistake
        return margin

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
        ``n`` is a candidate partner: ``κ = k(x_m, x_n)`` (one kernel value)
        and ``⟨W_m, W_n⟩`` (O(k)), then the search (:func:`best_partner`);
        the least degradation is merged: both removed, ``(z, W_z)``
        appended."""
        cdef Py_ssize_t k = self.n_outputs, d = self.n_features, i, c, n_cand = 0, j, n, r
        cdef Py_ssize_t m = oldest_minimum(&self.row_sqnorm[0], NULL, &self.order[0], self.n_sv)
        cdef Py_ssize_t cm = self.order[m], cell, label_m = self.label[cm]
        cdef double h, A, B, log_kappa
        cdef const double* x_m
        cdef const double* x_n
        cdef double* w_m = &self.tau[cm, 0]
        cdef double* w_n
        if not self.uses_store or self.candidates.shape[1] < self.n_sv \
                or self.merged.shape[0] < d + k:
            with gil:
                self.candidates, self.partner_pos, self.merged = _merge_scratch(self, d + k)
        cdef double[:, ::1] cand = self.candidates
        for i in range(self.n_sv):
            if i == m:
                continue
            c = self.order[i]
            self.partner_pos[n_cand] = i
            cand[A_N, n_cand] = self.row_sqnorm[c]
            cand[CROSS, n_cand] = dense_dot(w_m, &self.tau[c, 0], k)
            cand[KAPPA, n_cand] = self.kernel_between_slots(self.slot[cm], self.slot[c])
            cand[LOG_KAPPA, n_cand] = log_of(cand[KAPPA, n_cand])
            n_cand += 1
        j = best_partner(self.row_sqnorm[cm], cand, n_cand, True)
        n = self.partner_pos[j]
        h = cand[LOWER, j]
        log_kappa = cand[LOG_KAPPA, j]
        A = exp((1.0 - h) * (1.0 - h) * log_kappa)
        B = exp(h * h * log_kappa)
        x_m = self.vector_of(cm)
        x_n = self.vector_of(self.order[n])
        w_n = &self.tau[self.order[n], 0]
        cdef double* z = &self.merged[0]
        cdef double* w_z = &self.merged[d]
        for i in range(d):
            z[i] = h * x_m[i] + (1.0 - h) * x_n[i]
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
    lr.cur_slot = -1
    lr.x_dense = NULL
    lr.x_values = NULL
    lr.x_nnz = 0
    cdef Py_ssize_t i
    with nogil:
        for i in range(steps):
            if shared is None:
                binary.maintain()
            else:
                shared.maintain()
    return steps


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
    ``weight[order[i]]`` unless NULL) is the minimum up to ``TIE_TOL``; a
    NaN raises."""
    cdef Py_ssize_t i
    cdef double best = INFINITY, v
    for i in range(n):
        v = value[order[i]] * (1.0 if weight == NULL else weight[order[i]])
        if is_nan(v):
            raise_not_finite(b"A support vector's ||W_i||^2 k_ii")
        best = min(best, v)
    for i in range(n):
        if _tied_or_below(value[order[i]] * (1.0 if weight == NULL else weight[order[i]]), best):
            return i
    return 0


def _rule_problem(Py_ssize_t budget, double lam, int maintenance, bint track_gram, chol,
                  span_gap, Py_ssize_t n_sv):
    """What is inconsistent in a BSGD learner's rule and span factor, or None."""
    if not (budget >= 1 and lam > 0 and maintenance in (
            RULE_REMOVAL, RULE_PROJECTION, RULE_MERGING)):
        return f"budget={budget}, lam={lam}, maintenance={maintenance} out of range"
    if maintenance == RULE_PROJECTION:
        if not track_gram:
            return "projection needs track_gram"
        if chol.shape[0] != chol.shape[1] or (n_sv and chol.shape[0] < n_sv) or (
                span_gap.shape[0] != chol.shape[0]):
            return f"the Cholesky factor is not square over {n_sv} vectors"
    return None


# ----------------------------------------------------------------------
# the span factor: a Cholesky factor K = L Lᵀ by position, full rows of
# leading dimension ``ld``, that skips the vectors lying in the span of the
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
    """x = L⁻¹ x over the kept rows (0 on the others); returns ‖x‖²."""
    cdef Py_ssize_t j
    cdef double norm2 = 0.0
    for j in range(n):
        if L[j * ld + j] != 0.0:
            x[j] = (x[j] - dense_dot(&L[j * ld], x, j)) / L[j * ld + j]
            norm2 += x[j] * x[j]
        else:
            x[j] = 0.0
    return norm2


cdef void back_substitution(const double* L, Py_ssize_t ld, Py_ssize_t n,
                            double* x) noexcept nogil:
    """x = L⁻ᵀ x over the kept rows (row-oriented)."""
    cdef Py_ssize_t j, k
    for j in range(n - 1, -1, -1):
        if L[j * ld + j] != 0.0:
            x[j] = x[j] / L[j * ld + j]
            for k in range(j):
                x[k] -= x[j] * L[j * ld + k]


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


# ----------------------------------------------------------------------
# merging (RBF): z = h x_m + (1 − h) x_n, α_z = α_m κ^{(1−h)²} + α_n κ^{h²}.
# κ^e is computed as exp(e ln κ) (ln κ once per candidate pair): one exp
# instead of one pow per term, the same function to a few ulps.
# ----------------------------------------------------------------------
cdef inline double merged_coefficient(double a_m, double a_n, double log_kappa,
                                      double h) noexcept nogil:
    return a_m * exp((1.0 - h) * (1.0 - h) * log_kappa) + a_n * exp(h * h * log_kappa)


cdef inline double log_of(double kappa) noexcept nogil:
    """ln κ (−inf for κ = 0: the merged coefficient is then 0 inside (0, 1))."""
    return log(kappa) if kappa > 0.0 else -INFINITY


cdef inline double merged_sqnorm(double norm_m, double norm_n, double cross, double log_kappa,
                                 double h) noexcept nogil:
    """``‖W_z(h)‖² = ‖W_m‖² A² + ‖W_n‖² B² + 2 ⟨W_m, W_n⟩ A B`` with
    ``A = κ^{(1−h)²}``, ``B = κ^{h²}`` (§12).  ``A B`` is one product, so
    that swapping the two rows (``A`` and ``B``) gives the same bits: with
    ``‖W_m‖² = ‖W_n‖²`` the search's first comparison is then an exact tie,
    as §11's is with ``α_m = α_n``."""
    cdef double A = exp((1.0 - h) * (1.0 - h) * log_kappa), B = exp(h * h * log_kappa)
    return norm_m * A * A + norm_n * B * B + 2.0 * cross * (A * B)


cdef inline double merge_objective(double first, double second, const double* cross,
                                   Py_ssize_t i, double log_kappa, double h) noexcept nogil:
    """What the merge search maximizes for partner ``i``: ``|α_z(h)|``
    (§11: ``first = α_m``, ``second = α_n``; ``cross`` NULL) or
    ``‖W_z(h)‖²`` (§12: ``first = ‖W_m‖²``, ``second = ‖W_n‖²``,
    ``cross[i] = ⟨W_m, W_n⟩``)."""
    if cross == NULL:
        return fabs(merged_coefficient(first, second, log_kappa, h))
    return merged_sqnorm(first, second, cross[i], log_kappa, h)


cdef void golden_section_search(double a_m, const double* a_n, const double* cross,
                                const double* log_kappa, double* lower, double* upper,
                                Py_ssize_t n) noexcept nogil:
    """For each of ``n`` partners, the ``h`` in [0, 1] that maximizes
    ``|α_z(h)|`` (with ``cross``: ``‖W_z(h)‖²``, :func:`merge_objective`;
    into ``lower``), by the golden-section search of §11
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
    ``rows`` (§12), ``CROSS`` filled; ``first`` is ``α_m``, or ``‖W_m‖²``):
    ``h`` by the golden-section search (into ``LOWER``), the merged
    coefficient ``α_z`` or squared norm ``‖W_z‖²`` (into ``UPPER``) and the
    degradation (``DEGRADATION``).  Returns the column of the least
    degradation (ties: the first; partners are in position order, so the
    oldest); a non-finite degradation (coefficients whose squares
    overflow) raises (:func:`first_least`)."""
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
    return first_least(&cand[DEGRADATION, 0], n, b"A merge's degradation")


# ----------------------------------------------------------------------
# the merge search by table (Glasmachers & Qaadan 2018).  For a pair of the
# same sign, |α_z(h)| = (α_m + α_n) |m κ^{(1−h)²} + (1 − m) κ^{h²}| with
# m = α_m / (α_m + α_n): the best h depends on (m, κ) only.  The table
# holds §11's golden-section h for the pair (m, 1 − m) at κ on the nodes
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
    = 0 .. 200``; columns ``κ = j / 400``, ``j = 0 .. 400``): §11's
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
    return first_least(&cand[DEGRADATION, 0], n, b"A merge's degradation")


def _lookup_h(double m, double kappa):
    """Python access to the table's interpolated ``h*(m, κ)`` (for tests)."""
    _lookup_table()
    return lookup_h(m, kappa)


def _lookup_merge(double a_m, double a_n, double kappa):
    """Python access to the merge of two coefficients of one sign by the
    table (for tests): ``(h, α_z, degradation)``."""
    _lookup_table()
    cand = np.zeros((CANDIDATE_ROWS, 1))
    cand[A_N, 0], cand[KAPPA, 0], cand[LOG_KAPPA, 0] = a_n, kappa, log_of(kappa)
    lookup_partner(a_m, cand, 1)
    return cand[LOWER, 0], cand[UPPER, 0], cand[DEGRADATION, 0]


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
    best_partner(norm_m, cand, 1, True)     # (a non-finite degradation raises)
    return cand[LOWER, 0], cand[UPPER, 0], cand[DEGRADATION, 0]
