# cython: language_level=3, cdivision=True
"""Projectron and Projectron++ (doc/algorithms.md#projectron).

Orabona, Keshet & Caputo.  The support set only grows (nothing is ever
removed), so the support vector at position ``i`` (oldest first) is cell
``i``.  Instead of ``K⁻¹`` the policy keeps the lower Cholesky factor ``L``
of the support-set Gram matrix, ``K = L Lᵀ``, in packed row storage (row
``i`` holds ``L[i, 0..i]`` and starts at ``i (i + 1) / 2``; the triangular
solves are the span factor's, ``_span_factor``).  For a round
that needs the projection of ``k(x_t, ·)`` onto the span of ``S``:

* ``c = L⁻¹ k_t`` (forward substitution, O(|S|²)); then
  ``‖P k_t‖² = k_tᵀ K⁻¹ k_t = ‖c‖²`` and ``δ² = k(x_t, x_t) − ‖c‖²``;
* a projected update moves the coefficients by ``step · d`` with
  ``d = K⁻¹ k_t = L⁻ᵀ c``, done through ``w`` below.

The hypothesis is kept in two forms.  The master copy is ``w = Lᵀ α``,
its coordinates in the orthonormal basis of ``span(S)`` that ``L`` defines
(``‖w‖`` is the RKHS norm of ``f``, so ``w`` stays small and well scaled):
a projected update is ``w += step · c`` and adding ``x_t`` appends
``y_t ‖δ‖`` after ``w += y_t c``.  The dual coefficients that score every
round in O(|S|) are then re-derived as ``α = L⁻ᵀ w`` (one back
substitution, O(|S|²), only on projection rounds; an addition just appends
``α_t = y_t``).  So ``α`` is always one back substitution away from the
well-scaled ``w``, never a running sum of many solves.

Adding ``x_t`` appends the row ``[cᵀ, ‖δ‖]`` to ``L``: the bordered
Cholesky step, which is the same arithmetic a from-scratch (row-oriented)
factorization of the grown Gram matrix would do, so nothing drifts and there
is nothing to refresh.  A vector is only ever added with ``δ² > 1e-12
k(x_t, x_t)`` (and ``‖δ‖ > η``), so the diagonal of ``L`` is bounded away from
zero: the factor is never singular, even with duplicate points or
``η = 0``.

The shared multi-class learners (``multi_class='crammer_singer'``) keep the
same factor for their one support set and the hypothesis as the matrix
``W = Lᵀ A`` (one column per class, ``A`` the coefficient rows): an update
along the row ``(e_y − e_r)`` moves columns ``y`` and ``r`` of ``W`` only, and
those two columns of ``A`` are re-derived by back substitution.
"""

import numpy as np
from libc.math cimport sqrt

from skbudget._engine cimport OnlineLearner
from skbudget._numbers cimport is_finite, raise_not_finite
from skbudget._shared_support cimport SharedSupportLearner
from skbudget._span_factor cimport PACKED, back_substitution, forward_substitution
from skbudget._engine import _resized, size_problem
from skbudget._shared_support import _resized_rows

# δ² ≤ SPAN_TOL · k(x_t, x_t) counts as "exactly in the span" (‖δ‖ = 0)
cdef double SPAN_TOL = 1e-12

# what a mistake does (:func:`mistake_action`)
cdef enum:
    NOTHING = 0     # the empty model and the zero function: nothing to add or project
    PROJECT = 1
    ADD = 2

# ‖Φ‖² / k(x_t, x_t) for the direction Φ of an update: 1 for the binary
# rule's y_t φ(x_t); 2 for the shared rule's (e_y − e_r) ⊗ φ(x_t), whose
# squared projection ‖P Φ‖² and squared distance to the span are twice
# those of φ(x_t) (doc/algorithms.md#projectron, shared multi-class mode)
cdef double BINARY_NORM = 1.0
cdef double PAIR_NORM = 2.0


cdef class ProjectronLearner(OnlineLearner):
    """The Projectron: on a mistake, project ``k(x_t, ·)`` onto the span of
    the support set when ``‖δ‖ ≤ η`` (or when the optional cap ``budget`` is
    reached), else add ``x_t``.  ``budget < 0`` means no cap."""

    cdef public double eta
    cdef public Py_ssize_t budget
    cdef public long long n_projections     # mistake rounds solved by projection
    cdef public long long n_margin_updates  # Projectron++ only
    cdef public double[::1] chol            # packed rows of L
    cdef public double[::1] work            # scratch by position: α
    cdef public double[::1] c               # L⁻¹ k_t
    cdef public double[::1] w               # Lᵀ α, by position (the master copy of f)
    cdef double pk2                         # ‖P k_t‖² of the last projection
    cdef double delta2                      # δ² of the last projection (0 if in the span)

    _state_names = OnlineLearner._state_names + (
        "eta", "budget", "n_projections", "n_margin_updates", "chol", "work", "c", "w")

    def __init__(self, double eta=0.1, Py_ssize_t budget=-1):
        self.chol = np.zeros(0)
        self.work = np.zeros(0)
        self.c = np.zeros(0)
        self.w = np.zeros(0)
        OnlineLearner.__init__(self)
        self.eta = eta
        self.budget = budget
        self.n_projections = 0
        self.n_margin_updates = 0

    def check_policy_state(self, Py_ssize_t pool_size):
        return (size_problem({"work": self.work, "c": self.c, "w": self.w}, self.capacity)
                or factor_problem(self.chol, self.n_sv))

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        OnlineLearner.grow(self, new_capacity)
        self.work = _resized(self.work, new_capacity)
        self.c = _resized(self.c, new_capacity)
        self.w = _resized(self.w, new_capacity)
        return 0

    # ------------------------------------------------------------------
    # the projection
    # ------------------------------------------------------------------
    cdef void forward(self) noexcept nogil:
        """c = L⁻¹ k_t; sets ``pk2 = ‖c‖²`` and ``delta2 = δ²``
        (:func:`project_current`)."""
        self.pk2 = project_current(self, self.chol, self.c, &self.delta2)

    cdef void solve_upper(self, double[::1] x) noexcept nogil:
        """x = L⁻ᵀ x in place (back substitution on the packed rows of L)."""
        if self.n_sv > 0:
            back_substitution(&self.chol[0], PACKED, self.n_sv, &x[0])

    cdef int move_along_projection(self, double step) except -1 nogil:
        """f += step · P k(x_t, ·), i.e. α += step · K⁻¹ k_t (after
        :meth:`forward`): ``w += step · c``, then ``α = L⁻ᵀ w``."""
        cdef Py_ssize_t i, n = self.n_sv
        for i in range(n):
            self.w[i] += step * self.c[i]
            self.work[i] = self.w[i]
        self.solve_upper(self.work)
        for i in range(n):          # scale stays 1: nothing ever rescales
            self.set_alpha(self.order[i], self.work[i])
        return 0

    cdef int add_current(self, double y) except -1 nogil:
        """Append x_t with α = y_t and the factor row [cᵀ, ‖δ‖] (after
        :meth:`forward`)."""
        cdef Py_ssize_t n = self.n_sv, i
        if factor_full(self.chol, n):
            with gil:
                self.chol = factor_room(self.chol, n)
        append_factor_row(self.chol, n, self.c, self.delta2)
        for i in range(n):
            self.w[i] += y * self.c[i]
        self.append_current(y)
        self.w[n] = y * sqrt(self.delta2)
        return 0

    cdef int mistake_update(self, double y) except -1 nogil:
        """The Projectron's update on a mistake (shared by Projectron++)."""
        cdef int action
        self.ensure_row()
        self.forward()
        action = mistake_action(self.n_sv, self.pk2, self.delta2, BINARY_NORM, self.eta,
                                self.budget)
        if action == PROJECT:
            self.move_along_projection(y)
        elif action == ADD:
            self.add_current(y)
        self.n_projections += action != ADD
        self.n_updates += 1
        return 0

    cdef int correct_round(self, double y, double f) except -1 nogil:
        """A round without a mistake: nothing for the Projectron."""
        return 0

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef double f = self.dot_row()
        if y * f <= 0:
            self.mistake_update(y)
        else:
            self.correct_round(y, f)
        return f

    # ------------------------------------------------------------------
    # read-out and persistence
    # ------------------------------------------------------------------
    def cholesky_factor(self):
        """L (lower triangular, ``L Lᵀ`` = Gram matrix of the support set,
        oldest first)."""
        return unpacked_factor(self.chol, self.n_sv)

    def projection(self, k_t, double k_tt):
        """(d = K⁻¹ k_t, ‖P k_t‖², δ²) for a kernel row ``k_t`` against the
        support set (oldest first): the quantities the update uses."""
        k_t = np.asarray(k_t, dtype=np.float64)
        if k_t.shape != (self.n_sv,):
            raise ValueError(f"k_t must have shape ({self.n_sv},), got {k_t.shape}")
        row = np.asarray(self.k_row)
        saved = (row.copy(), self.k_tt)
        row[np.asarray(self.order)[:self.n_sv]] = k_t
        self.k_tt = k_tt
        self.forward()
        pk2, delta2 = self.pk2, self.delta2
        d = np.asarray(self.c)[:self.n_sv].copy()
        self.solve_upper(d)
        row[:] = saved[0]
        self.k_tt = saved[1]
        return d, pk2, delta2


cdef class ProjectronPlusPlusLearner(ProjectronLearner):
    """Projectron++: the Projectron's mistake update, plus a projected
    update on margin errors (``0 < y_t f(x_t) < 1``) that never adds a
    support vector."""

    cdef int margin_update(self, double y, double loss) except -1 nogil:
        """τ = min{ℓ/‖Pk‖², 2(ℓ − ‖δ‖/η)/‖Pk‖², 1}, α_i += y τ d_i, when
        ‖Pk‖² > 0 and ℓ ≥ ‖δ‖/η (the journal form,
        doc/algorithms.md#projectron)."""
        cdef double tau
        self.ensure_row()
        self.forward()
        tau = margin_step(loss, self.pk2, self.delta2, BINARY_NORM, self.eta)
        if tau < 0.0:
            return 0
        self.move_along_projection(y * tau)
        self.n_updates += 1
        self.n_margin_updates += 1
        return 0

    cdef int correct_round(self, double y, double f) except -1 nogil:
        if y * f < 1.0:
            self.margin_update(y, 1.0 - y * f)
        return 0


cdef class SharedProjectronLearner(SharedSupportLearner):
    """The Projectron on ``k`` classes with one shared support set
    (doc/algorithms.md#projectron, shared multi-class mode).

    Round with class ``y``: scores ``f_c(x_t)`` before the update, the
    runner-up ``r = argmax_{c != y} f_c`` (ties: the lowest index) and the
    margin ``m = f_y − f_r``.  The binary rule runs on the direction ``Φ =
    (e_y − e_r) ⊗ φ(x_t)`` of the joint feature space, whose squared norm
    is ``2 k(x_t, x_t)``: its projection onto the span of the support set
    is ``(e_y − e_r) ⊗ P φ(x_t)``, with ``‖P Φ‖² = 2 k_tᵀ K⁻¹ k_t`` and the
    distance ``‖δ_Φ‖ = sqrt(2 δ²)``.  On a mistake (``m <= 0``): the empty
    model adds ``x_t`` with the row ``e_y − e_r``; else if ``sqrt(2 δ²) <=
    η`` (or ``x_t`` lies in the span, or ``budget`` vectors are held) every
    row moves by ``α_i += (e_y − e_r) d_i`` with ``d = K⁻¹ k_t`` (the same
    kernel coefficients for every class); else ``x_t`` is added with the
    row ``e_y − e_r``.

    ``w`` holds ``W = Lᵀ A`` by position (``A`` the rows of ``tau``, in
    order): an update changes its columns ``y`` and ``r`` only, and those
    two columns of ``A`` are re-derived from it by back substitution.
    ``process_example`` returns the margin as
    :meth:`SharedSupportLearner.round_value` does.

    Parameters
    ----------
    n_classes : int
        ``k`` (at least 1; the estimator uses it for 3 or more).
    eta, budget :
        As :class:`ProjectronLearner`'s (``budget`` bounds the whole model).
    """

    cdef public double eta
    cdef public Py_ssize_t budget
    cdef public long long n_projections     # mistake rounds solved by projection
    cdef public long long n_margin_updates  # Projectron++ only
    cdef public double[::1] chol            # packed rows of L
    cdef public double[:, ::1] work         # scratch: columns y and r of A, by position
    cdef public double[::1] c               # L⁻¹ k_t
    cdef public double[:, ::1] w            # W = Lᵀ A, (position, class)
    cdef public double[::1] new_row         # scratch: the row of a new vector
    cdef double pk2                         # ‖P k_t‖² of the last projection
    cdef double delta2                      # δ² of the last projection (0 if in the span)

    _per_class_names = SharedSupportLearner._per_class_names + ("w", "new_row")
    _state_names = SharedSupportLearner._state_names + (
        "eta", "budget", "n_projections", "n_margin_updates", "chol", "work", "c", "w",
        "new_row")

    def __init__(self, Py_ssize_t n_classes=3, double eta=0.1, Py_ssize_t budget=-1):
        self.chol = np.zeros(0)
        self.work = np.zeros((2, 0))
        self.c = np.zeros(0)
        self.w = np.zeros((0, max(n_classes, 0)))
        self.new_row = np.zeros(max(n_classes, 0))
        SharedSupportLearner.__init__(self, n_classes)
        self.eta = eta
        self.budget = budget
        self.n_projections = 0
        self.n_margin_updates = 0

    def check_policy_state(self, Py_ssize_t pool_size):
        return (SharedSupportLearner.check_policy_state(self, pool_size)
                or size_problem({"c": self.c, "w": self.w}, self.capacity)
                or size_problem({"w columns": self.w.T, "new_row": self.new_row},
                                self.n_outputs, "entries")
                or size_problem({"work": self.work.T}, self.capacity)
                or size_problem({"work rows": self.work}, 2, "entries")
                or factor_problem(self.chol, self.n_sv))

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        SharedSupportLearner.grow(self, new_capacity)
        self.work = _resized_rows(self.work.T, new_capacity).T.copy()
        self.c = _resized(self.c, new_capacity)
        self.w = _resized_rows(self.w, new_capacity)
        return 0

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef Py_ssize_t label = self.class_index(y), runner
        cdef double margin
        margin = self.round_margin(label, &runner)
        if margin <= 0.0:
            self.mistake_update(label, runner)
        else:
            self.correct_round(label, runner, margin)
        return self.round_value(margin, label, runner)

    cdef int mistake_update(self, Py_ssize_t y, Py_ssize_t r) except -1 nogil:
        """The shared Projectron's update on a mistake (``m <= 0``)."""
        cdef int action
        self.pk2 = project_current(self, self.chol, self.c, &self.delta2)
        action = mistake_action(self.n_sv, self.pk2, self.delta2, PAIR_NORM, self.eta,
                                self.budget)
        if action == PROJECT:
            self.move_along_projection(y, r, 1.0)
        elif action == ADD:
            self.add_current(y, r)
        self.n_projections += action != ADD
        self.n_updates += 1
        return 0

    cdef int correct_round(self, Py_ssize_t y, Py_ssize_t r, double margin) except -1 nogil:
        """A round without a mistake: nothing for the Projectron."""
        return 0

    cdef int move_along_projection(self, Py_ssize_t y, Py_ssize_t r,
                                   double step) except -1 nogil:
        """Every row ``α_i += step (e_y − e_r) d_i`` (after
        :func:`project_current`): columns ``y`` and ``r`` of ``W`` move by
        ``± step · c``, then those columns of ``A`` are ``L⁻ᵀ W``'s."""
        cdef Py_ssize_t i, n = self.n_sv
        if n == 0:
            return 0
        for i in range(n):
            self.w[i, y] += step * self.c[i]
            self.w[i, r] -= step * self.c[i]
            self.work[0, i] = self.w[i, y]
            self.work[1, i] = self.w[i, r]
        back_substitution_pair(&self.chol[0], n, &self.work[0, 0], &self.work[1, 0])
        for i in range(n):          # scale stays 1: nothing ever rescales
            self.tau[self.order[i], y] = self.work[0, i]
            self.tau[self.order[i], r] = self.work[1, i]
        return 0

    cdef int add_current(self, Py_ssize_t y, Py_ssize_t r) except -1 nogil:
        """Append x_t with the row ``e_y − e_r`` and the factor row [cᵀ, ‖δ‖]
        (after :func:`project_current`): ``W`` gains ``± c`` in columns ``y``
        and ``r`` and the row ``‖δ‖ (e_y − e_r)``."""
        cdef Py_ssize_t n = self.n_sv, i
        cdef double gap = sqrt(self.delta2)
        if factor_full(self.chol, n):
            with gil:
                self.chol = factor_room(self.chol, n)
        append_factor_row(self.chol, n, self.c, self.delta2)
        for i in range(n):
            self.w[i, y] += self.c[i]
            self.w[i, r] -= self.c[i]
        self.pair_row(&self.new_row[0], y, r, 1.0)
        self.append_pattern(y, &self.new_row[0])
        self.pair_row(&self.w[n, 0], y, r, gap)
        return 0

    def cholesky_factor(self):
        """L (lower triangular, ``L Lᵀ`` = Gram matrix of the support set,
        oldest first)."""
        return unpacked_factor(self.chol, self.n_sv)


cdef class SharedProjectronPlusPlusLearner(SharedProjectronLearner):
    """Projectron++ on ``k`` classes with one shared support set: the
    shared Projectron's mistake update, plus on a margin error (``0 < m <
    1``, loss ``ℓ = 1 − m``), when ``‖P Φ‖² = 2 k_tᵀ K⁻¹ k_t > 0`` and ``ℓ >=
    ‖δ_Φ‖ / η`` (``‖δ_Φ‖ = sqrt(2 δ²)``), every row moves by ``α_i += τ (e_y
    − e_r) d_i`` with ``τ = min{ℓ / ‖P Φ‖², 2 (ℓ − ‖δ_Φ‖ / η) / ‖P Φ‖², 1}``
    (doc/algorithms.md#projectron, shared multi-class mode)."""

    cdef int correct_round(self, Py_ssize_t y, Py_ssize_t r, double margin) except -1 nogil:
        cdef double tau
        if not margin < 1.0:
            return 0
        self.pk2 = project_current(self, self.chol, self.c, &self.delta2)
        tau = margin_step(1.0 - margin, self.pk2, self.delta2, PAIR_NORM, self.eta)
        if tau < 0.0:
            return 0
        self.move_along_projection(y, r, tau)
        self.n_updates += 1
        self.n_margin_updates += 1
        return 0


# ----------------------------------------------------------------------
# the pieces of the rule the binary and the shared learners both use
# ----------------------------------------------------------------------
cdef double project_current(OnlineLearner lr, double[::1] chol, double[::1] c,
                            double* delta2) noexcept nogil:
    """``c = L⁻¹ k_t`` for the current example against ``lr``'s support
    set (``chol`` its packed factor; the kernel row gathered, ``ensure_row``
    first); returns ``‖P k_t‖² = ‖c‖²`` and sets ``delta2[0] = δ²`` (0 when
    the example is in the span up to rounding: ``δ² <= 1e-12 k(x_t,
    x_t)``)."""
    cdef Py_ssize_t i, n = lr.n_sv
    cdef double pk2 = 0.0
    if n > 0:       # (an empty factor has no first entry)
        for i in range(n):
            c[i] = lr.k_row[lr.order[i]]
        pk2 = forward_substitution(&chol[0], PACKED, n, &c[0])
    delta2[0] = lr.k_tt - pk2
    if delta2[0] <= SPAN_TOL * lr.k_tt:
        delta2[0] = 0.0
    return pk2


cdef int mistake_action(Py_ssize_t n_sv, double pk2, double delta2, double norm,
                        double eta, Py_ssize_t budget) except -1 nogil:
    """What a mistake does: ``NOTHING`` for the empty model and ``x_t`` the
    zero function (``k(x_t, x_t) <= 0``: adding it would make ``K``
    singular and change no prediction); ``PROJECT`` when ``x_t`` lies in
    the span, when the distance ``sqrt(norm δ²)`` of the update's direction
    to it is at most ``η`` (a non-empty model), or when ``budget`` vectors
    are held (``budget >= 0``); else ``ADD``.  ``norm`` is
    ``BINARY_NORM`` or ``PAIR_NORM``."""
    check_projection(pk2, delta2)
    if n_sv == 0 and delta2 == 0.0:
        return NOTHING
    if delta2 == 0.0 or (n_sv > 0 and sqrt(norm * delta2) <= eta) \
            or (budget >= 0 and n_sv >= budget):
        return PROJECT
    return ADD


cdef double margin_step(double loss, double pk2, double delta2, double norm,
                        double eta) except? -2.0 nogil:
    """Projectron++'s step on a margin error of loss ``ℓ`` (the journal
    form, doc/algorithms.md#projectron): with the update direction's
    ``‖P Φ‖² = norm pk2`` and ``‖δ_Φ‖ = sqrt(norm δ²)``, ``τ = min{ℓ/‖P
    Φ‖², 2(ℓ − ‖δ_Φ‖/η)/‖P Φ‖², 1}`` when ``‖P Φ‖² > 0`` and ``ℓ >=
    ‖δ_Φ‖/η`` (``‖δ_Φ‖/η`` is 0 for ``δ = 0`` and ``+∞`` for ``η = 0 <
    δ``); ``-1`` (no update) otherwise."""
    cdef double ratio
    check_projection(pk2, delta2)
    pk2 = norm * pk2
    if pk2 <= 0.0:
        return -1.0
    if delta2 == 0.0:
        ratio = 0.0
    elif eta == 0.0:
        return -1.0                                # ‖δ‖/η = +inf
    else:
        ratio = sqrt(norm * delta2) / eta
    if loss < ratio:
        return -1.0
    return min(loss / pk2, 2.0 * (loss - ratio) / pk2, 1.0)


cdef inline bint factor_full(double[::1] chol, Py_ssize_t n) noexcept nogil:
    """Whether the packed factor of ``n`` vectors has no room for row ``n``."""
    return n * (n + 1) // 2 + n + 1 > chol.shape[0]


def factor_room(chol, Py_ssize_t n):
    """The packed factor ``chol`` of ``n`` vectors, grown (doubled) to
    hold row ``n``."""
    return _resized(chol, max(2 * chol.shape[0], n * (n + 1) // 2 + n + 1, 36))


cdef void append_factor_row(double[::1] chol, Py_ssize_t n, double[::1] c,
                            double delta2) noexcept nogil:
    """Row ``n`` of the packed factor: ``[cᵀ, ‖δ‖]`` (the bordered Cholesky
    step, after :func:`project_current`)."""
    cdef Py_ssize_t i, row = n * (n + 1) // 2
    for i in range(n):
        chol[row + i] = c[i]
    chol[row + n] = sqrt(delta2)


cdef void back_substitution_pair(const double* L, Py_ssize_t n, double* x,
                                 double* z) noexcept nogil:
    """``x = L⁻ᵀ x`` and ``z = L⁻ᵀ z`` at once, ``L`` in packed rows: the
    span factor's back substitution of each (the same arithmetic), reading
    ``L`` once."""
    cdef Py_ssize_t j, k
    cdef const double* row
    cdef double a, b
    for j in range(n - 1, -1, -1):
        row = L + j * (j + 1) // 2
        if row[j] != 0.0:
            a = x[j] / row[j]
            b = z[j] / row[j]
            x[j] = a
            z[j] = b
            for k in range(j):
                x[k] -= a * row[k]
                z[k] -= b * row[k]


def factor_problem(chol, Py_ssize_t n):
    """A description unless the packed factor holds the rows of ``n``
    vectors, else None (an entry check of ``check_policy_state``)."""
    if chol.shape[0] < n * (n + 1) // 2:
        return f"the packed factor has {chol.shape[0]} entries for {n} vectors"
    return None


def unpacked_factor(chol, Py_ssize_t n):
    """L (``n x n``, lower triangular) from its packed rows."""
    L = np.zeros((n, n))
    packed = np.asarray(chol)
    for i in range(n):
        L[i, :i + 1] = packed[i * (i + 1) // 2:(i + 1) * (i + 2) // 2]
    return L


cdef inline int check_projection(double pk2, double delta2) except -1 nogil:
    """Every decision of an update compares ``‖Pk‖²`` and ``δ²``: a
    non-finite one (an overflow) raises."""
    if not (is_finite(pk2) and is_finite(delta2)):
        raise_not_finite(b"The projection's squared norm")
    return 0
