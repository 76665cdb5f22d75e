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
"""

import numpy as np
from libc.math cimport sqrt

from skbudget._engine cimport OnlineLearner
from skbudget._numbers cimport is_finite, raise_not_finite
from skbudget._span_factor cimport PACKED, back_substitution, forward_substitution
from skbudget._engine import _resized, size_problem

# δ² ≤ SPAN_TOL · k(x_t, x_t) counts as "exactly in the span" (‖δ‖ = 0)
cdef double SPAN_TOL = 1e-12


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
        cdef Py_ssize_t n = self.n_sv
        problem = size_problem({"work": self.work, "c": self.c, "w": self.w}, self.capacity)
        if problem is None and self.chol.shape[0] < n * (n + 1) // 2:
            problem = f"the packed factor has {self.chol.shape[0]} entries for {n} vectors"
        return problem

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
        """c = L⁻¹ k_t; sets ``pk2 = ‖c‖²`` and ``delta2 = δ²`` (0 when the
        example is in the span up to rounding: δ² ≤ 1e-12 k(x_t, x_t))."""
        cdef Py_ssize_t i, n = self.n_sv
        self.pk2 = 0.0
        if n > 0:       # (an empty factor has no first entry)
            for i in range(n):
                self.c[i] = self.k_row[self.order[i]]
            self.pk2 = forward_substitution(&self.chol[0], PACKED, n, &self.c[0])
        self.delta2 = self.k_tt - self.pk2
        if self.delta2 <= SPAN_TOL * self.k_tt:
            self.delta2 = 0.0

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
        cdef Py_ssize_t n = self.n_sv, row = n * (n + 1) // 2, i
        if row + n + 1 > self.chol.shape[0]:
            with gil:
                self.chol = _resized(self.chol, max(2 * self.chol.shape[0], row + n + 1, 36))
        for i in range(n):
            self.chol[row + i] = self.c[i]
        self.chol[row + n] = sqrt(self.delta2)
        for i in range(n):
            self.w[i] += y * self.c[i]
        self.append_current(y)
        self.w[n] = y * sqrt(self.delta2)
        return 0

    cdef int mistake_update(self, double y) except -1 nogil:
        """The Projectron's update on a mistake (shared by Projectron++)."""
        self.ensure_row()
        self.forward()
        check_projection(self.pk2, self.delta2)
        if self.n_sv == 0 and self.delta2 == 0.0:
            # k(x_t, x_t) <= 0: x_t is the zero function; adding it would
            # make K singular and change no prediction: the (empty)
            # projection is the update
            self.n_projections += 1
        elif self.delta2 == 0.0 or (self.n_sv > 0 and sqrt(self.delta2) <= self.eta) \
                or (self.budget >= 0 and self.n_sv >= self.budget):
            self.move_along_projection(y)
            self.n_projections += 1
        else:
            self.add_current(y)
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
        n = self.n_sv
        L = np.zeros((n, n))
        packed = np.asarray(self.chol)
        for i in range(n):
            L[i, :i + 1] = packed[i * (i + 1) // 2:(i + 1) * (i + 2) // 2]
        return L

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
        cdef double ratio, tau
        self.ensure_row()
        self.forward()
        check_projection(self.pk2, self.delta2)
        if self.pk2 <= 0.0:
            return 0
        if self.delta2 == 0.0:
            ratio = 0.0
        elif self.eta == 0.0:
            return 0                                # ‖δ‖/η = +inf
        else:
            ratio = sqrt(self.delta2) / self.eta
        if loss < ratio:
            return 0
        tau = min(loss / self.pk2, 2.0 * (loss - ratio) / self.pk2, 1.0)
        self.move_along_projection(y * tau)
        self.n_updates += 1
        self.n_margin_updates += 1
        return 0

    cdef int correct_round(self, double y, double f) except -1 nogil:
        if y * f < 1.0:
            self.margin_update(y, 1.0 - y * f)
        return 0


cdef inline int check_projection(double pk2, double delta2) except -1 nogil:
    """Every decision of an update compares ``‖Pk‖²`` and ``δ²``: a
    non-finite one (an overflow) raises."""
    if not (is_finite(pk2) and is_finite(delta2)):
        raise_not_finite(b"The projection's squared norm")
    return 0

