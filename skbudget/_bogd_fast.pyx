# cython: language_level=3, cdivision=True
"""Bounded Online Gradient Descent: BOGD and BOGD++
(doc/algorithms.md#bogd).

Zhao, Wang, Wu, Jin & Hoi, "Fast bounded online gradient descent
algorithms for scalable kernel-based online learning", ICML 2012.  Kernel
OGD on ``lambda/2 ||f||^2 + hinge`` with a constant step ``eta``: on a
round with ``y f(x) <= 1`` the coefficients decay by ``1 - eta lambda`` and
``(x, eta y)`` is appended; on the others they only decay.  On a full
budget one support vector is removed at random first, and the others are
scaled up to keep the model unbiased, bounded by ``eta gamma``:

* uniform (BOGD): position ``rng.randint(B)``; every coefficient times
  ``B (1 - eta lambda) / (B - 1)``; after the insertion every coefficient
  (the new one too) times ``min(1, eta gamma / max_j |alpha_j|)``.
* coefficient (BOGD++): position drawn with ``p_j = 1 - (B - 1) w_j / sum w``,
  ``w_j = |alpha_j| sqrt(k_jj)`` (negative ``p_j`` set to 0 and ``p``
  renormalized; uniform when ``sum w = 0``), by ``u = rng.random_sample()``
  and the first ``j`` with ``cumsum(p)_j > u`` (the last if rounding leaves
  none); each kept coefficient becomes ``sign(alpha_j) min((1 - eta
  lambda) |alpha_j| / (1 - p_j), eta gamma)``.

Every decay and BOGD's common factors are the engine's global scale
(O(1)); a round that removes is O(B).

:class:`SharedBoundedOGDLearner` is the shared multi-class mode
(doc/algorithms.md#bogd-shared): one support set for all ``k`` classes, a
coefficient row per vector, the rule on the margin ``m = f_y - f_r``
against the runner-up ``r``, the row ``eta (e_y - e_r)`` for a new vector,
every scalar factor on whole rows, BOGD's bound on the largest row norm,
BOGD++'s weights and per-vector bound on each row's Euclidean norm.  The
two learners draw alike (:func:`remove_uniform`, :func:`draw_position`).
"""

import numpy as np
from libc.math cimport INFINITY, fabs, sqrt

from skbudget._engine cimport OnlineLearner
from skbudget._engine import _resized, size_problem
from skbudget._numbers cimport is_finite, raise_not_finite
from skbudget._shared_support cimport SharedSupportLearner

cdef enum:
    SAMPLING_UNIFORM = 0
    SAMPLING_COEFFICIENT = 1
UNIFORM, COEFFICIENT = SAMPLING_UNIFORM, SAMPLING_COEFFICIENT


cdef class BoundedOGDLearner(OnlineLearner):
    """One binary BOGD learner.

    Parameters
    ----------
    budget : int
        ``B >= 2``.
    eta : float
        The step ``eta > 0``.
    lam : float
        The regularization ``lambda >= 0``, ``eta lambda < 1``.
    bound : float
        ``gamma > 0``: no coefficient exceeds ``eta gamma`` after a removal.
    sampling : int
        ``UNIFORM`` (BOGD) or ``COEFFICIENT`` (BOGD++).
    rng : numpy.random.RandomState
        The removals' draws.
    """

    cdef public Py_ssize_t budget
    cdef public double eta, lam, bound
    cdef public int sampling
    cdef public long long n_removals
    # BOGD++ scratch by position (not state): the removal probabilities
    cdef double[::1] prob

    _state_names = OnlineLearner._state_names + (
        "budget", "eta", "lam", "bound", "sampling", "n_removals")

    def __cinit__(self, *args, **kwargs):
        self.prob = np.zeros(0)

    def __init__(self, Py_ssize_t budget=2, double eta=0.5, double lam=1e-3, double bound=10.0,
                 int sampling=SAMPLING_UNIFORM, rng=None):
        self.budget = budget        # (before the engine's __init__ reads capacity_limit)
        OnlineLearner.__init__(self, rng=rng)
        _set_rule(self, eta, lam, bound, sampling)

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        OnlineLearner.grow(self, new_capacity)
        self.prob = _resized(self.prob, new_capacity)
        return 0

    cdef Py_ssize_t capacity_limit(self) noexcept nogil:
        return self.budget + 1      # (B support vectors and the example being added)

    def check_policy_state(self, Py_ssize_t pool_size):
        problem = _rule_problem(self)
        if problem is None and self.prob.shape[0] < self.capacity:
            self.prob = np.zeros(self.capacity)     # (a state set with a larger capacity)
        return problem

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef double score = self.dot_row()
        cdef double decay = 1.0 - self.eta * self.lam
        if not is_finite(score):
            raise_not_finite(b"The score of the bounded OGD")
        if y * score > 1.0:
            self.rescale(decay)
        elif self.n_sv < self.budget:
            self.rescale(decay)
            self.append_current(self.eta * y)
            self.n_updates += 1
        else:
            if self.sampling == SAMPLING_UNIFORM:
                remove_uniform(self, self.budget, decay)
            else:
                self.remove_by_coefficient(decay)
            self.append_current(self.eta * y)
            if self.sampling == SAMPLING_UNIFORM:
                self.bound_all()
            self.n_removals += 1
            self.n_updates += 1
        return score

    cdef int bound_all(self) except -1 nogil:
        """BOGD: every coefficient times ``min(1, eta gamma / max |alpha_j|)``."""
        cdef Py_ssize_t i
        cdef double largest = 0.0, cap = self.eta * self.bound
        for i in range(self.n_sv):
            largest = max(largest, fabs(self.alpha[self.order[i]]))
        return bound_largest(self, largest, cap)

    cdef int remove_by_coefficient(self, double decay) except -1 nogil:
        """BOGD++: draw the position to remove by ``p``, then bound every
        kept coefficient by itself."""
        cdef Py_ssize_t i, j, c, n = self.n_sv
        cdef double a, v, q
        cdef double cap = self.eta * self.bound
        cdef double* p = &self.prob[0]
        j = draw_position(self, &self.alpha[0], p)
        for i in range(n):
            if i == j:
                continue
            c = self.order[i]
            a = self.alpha[c] * self.scale
            v = decay * fabs(a)
            q = 1.0 - p[i]
            v = cap if q <= 0.0 or v >= cap * q else v / q
            self.set_alpha(c, (v if a > 0 else -v if a < 0 else 0.0) / self.scale)
        self.remove_at(j)
        return 0


cdef class SharedBoundedOGDLearner(SharedSupportLearner):
    """BOGD and BOGD++ on ``k`` classes with one shared support set
    (doc/algorithms.md#bogd-shared).

    Round with class ``y``: class scores ``f_c`` before anything changes,
    runner-up ``r = argmax_{c != y} f_c`` (ties: the lowest index) and the
    margin ``m = f_y - f_r`` in place of ``y f(x)``.  If ``m > 1`` every row
    decays by ``1 - eta lambda``; otherwise, below the budget, the rows
    decay and ``x`` is appended with the row ``eta (e_y - e_r)``; on a full
    budget one vector is removed first:

    * uniform (BOGD): position ``rng.randint(B)``; every row times ``B (1 -
      eta lambda) / (B - 1)``; after the insertion every row (the new one
      too) times ``min(1, eta gamma / max_j ||alpha_j||)``;
    * coefficient (BOGD++): ``p`` from ``w_j = ||alpha_j|| sqrt(k_jj)``,
      drawn as the binary rule draws; each kept row times ``min((1 - eta
      lambda) / (1 - p_j), eta gamma / ||alpha_j||)`` (a zero row stays 0).

    The decay and BOGD's common factors are the engine's global scale (the
    rows ``tau`` are the coefficients divided by it; :meth:`rescale` folds
    it into them before it leaves ``[1e-100, 1e100]``).  ``process_example``
    returns the margin (:meth:`round_value`: a mistake when ``<= 0``).
    With one class there is no rival: the margin is the largest finite
    number, and the rows only decay.

    Parameters
    ----------
    n_classes : int
        ``k`` (the estimator uses the shared rule for 3 or more).
    budget, eta, lam, bound, sampling, rng :
        As :class:`BoundedOGDLearner`'s.
    """

    cdef public Py_ssize_t budget
    cdef public double eta, lam, bound
    cdef public int sampling
    cdef public long long n_removals
    # ||tau_c|| of every cell's row (stale if free): the rows change only by
    # the scalar factors of BOGD++ and the scale's folds, which multiply it
    cdef public double[::1] row_norm
    # scratch (not state): BOGD++'s probabilities by position (sized on
    # use), and the row of a new vector (one entry per class)
    cdef double[::1] prob
    cdef public double[::1] new_row

    _per_class_names = SharedSupportLearner._per_class_names + ("new_row",)
    _state_names = SharedSupportLearner._state_names + (
        "budget", "eta", "lam", "bound", "sampling", "n_removals", "row_norm")

    def __cinit__(self, *args, **kwargs):
        self.prob = np.zeros(0)
        self.row_norm = np.zeros(0)

    def __init__(self, Py_ssize_t n_classes=3, Py_ssize_t budget=2, double eta=0.5,
                 double lam=1e-3, double bound=10.0, int sampling=SAMPLING_UNIFORM, rng=None):
        self.budget = budget        # (before the engine's __init__ reads capacity_limit)
        SharedSupportLearner.__init__(self, n_classes, rng=rng)
        _set_rule(self, eta, lam, bound, sampling)
        self.new_row = np.zeros(n_classes)

    cdef Py_ssize_t capacity_limit(self) noexcept nogil:
        """As :meth:`BoundedOGDLearner.capacity_limit`: ``budget + 1``."""
        return self.budget + 1

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        SharedSupportLearner.grow(self, new_capacity)
        self.row_norm = _resized(self.row_norm, new_capacity)
        return 0

    def check_policy_state(self, Py_ssize_t pool_size):
        problem = (SharedSupportLearner.check_policy_state(self, pool_size)
                   or _rule_problem(self)
                   or size_problem({"row_norm": self.row_norm}, self.capacity))
        if problem is None and not (self.scale > 0 and is_finite(self.scale)):
            problem = f"scale={self.scale} is not a positive number"
        if problem is None and self.n_sv:
            cells = np.asarray(self.order)[:self.n_sv]
            norms = np.asarray(self.row_norm)[cells]
            true = np.linalg.norm(np.asarray(self.tau)[cells], axis=1)
            if not np.all(np.abs(norms - true) <= 1e-6 * true):   # (NaN fails too)
                problem = "row_norm is not the norm of every support vector's row"
        if problem is None and self.new_row.shape[0] != self.n_outputs:
            self.new_row = np.zeros(self.n_outputs)     # (scratch, not state)
        return problem

    cdef int rescale(self, double factor) except -1 nogil:
        """:meth:`SharedSupportLearner.rescale`; when it folds the scale
        into the rows, their cached norms take it too.  Returns 1 if it was
        folded, else 0."""
        cdef Py_ssize_t i
        cdef double folded = self.scale * factor
        if not SharedSupportLearner.rescale(self, factor):
            return 0
        for i in range(self.n_sv):
            self.row_norm[self.order[i]] *= folded
        return 1

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef Py_ssize_t label = self.class_index(y), runner
        cdef double margin, decay = 1.0 - self.eta * self.lam
        cdef bint removing
        margin = self.round_margin(label, &runner)
        if margin > 1.0:            # (one class: no rival, m = DBL_MAX)
            self.rescale(decay)
            return self.round_value(margin, label, runner)
        removing = self.n_sv >= self.budget
        if not removing:
            self.rescale(decay)
        elif self.sampling == SAMPLING_UNIFORM:
            remove_uniform(self, self.budget, decay)
        else:
            self.remove_by_norm(decay)
        self.append_row(label, runner)
        if removing:
            if self.sampling == SAMPLING_UNIFORM:
                self.bound_rows()
            self.n_removals += 1
        self.n_updates += 1
        return self.round_value(margin, label, runner)

    cdef int append_row(self, Py_ssize_t label, Py_ssize_t runner) except -1 nogil:
        """Append the current example with the row ``eta (e_y - e_r)``."""
        cdef Py_ssize_t cell
        cdef double norm
        self.pair_row(&self.new_row[0], label, runner, self.eta / self.scale)
        norm = vector_norm(&self.new_row[0], self.n_outputs)
        if not is_finite(norm):
            raise_not_finite(b"The norm of a new coefficient row of the bounded OGD")
        cell = self.append_pattern(label, &self.new_row[0])
        self.row_norm[cell] = norm
        return 0

    cdef int bound_rows(self) except -1 nogil:
        """BOGD: every row times ``min(1, eta gamma / max_j ||alpha_j||)``."""
        cdef Py_ssize_t i
        cdef double largest = 0.0, cap = self.eta * self.bound
        for i in range(self.n_sv):
            largest = max(largest, self.row_norm[self.order[i]])
        return bound_largest(self, largest, cap)

    cdef int remove_by_norm(self, double decay) except -1 nogil:
        """BOGD++ on rows: draw the position to remove by ``p`` (weights
        ``||tau_j|| sqrt(k_jj)``), then each kept row times ``min((1 - eta
        lambda) / (1 - p_j), eta gamma / ||alpha_j||)``."""
        cdef Py_ssize_t i, j, r, c, n = self.n_sv, k = self.n_outputs
        cdef double norm, q, factor, cap = self.eta * self.bound
        cdef double* p
        cdef double* row
        if self.prob.shape[0] < n:      # (first use, after loading, or more cells)
            with gil:
                self.prob = np.zeros(self.capacity)
        p = &self.prob[0]
        j = draw_position(self, &self.row_norm[0], p)
        self.remove_at(j)
        for i in range(n - 1):          # the kept rows (position i was i + (i >= j))
            c = self.order[i]
            norm = self.row_norm[c] * self.scale
            q = 1.0 - p[i + (i >= j)]
            if norm > 0.0:              # (a zero row stays 0)
                factor = cap / norm if q <= 0.0 or decay * norm >= cap * q else decay / q
                if not is_finite(factor):
                    raise_not_finite(b"The factor of a kept coefficient row of the bounded OGD")
                row = &self.tau[c, 0]
                for r in range(k):
                    row[r] *= factor
                self.row_norm[c] *= factor
        return 0


cdef double vector_norm(const double* row, Py_ssize_t k) noexcept nogil:
    """``||row||``, without overflow or underflow of the squares (the sum
    of squares, or, out of its safe range, of the row divided by its
    largest entry); NaN if an entry is NaN."""
    cdef Py_ssize_t r
    cdef double s = 0.0, top = 0.0, v
    for r in range(k):
        s += row[r] * row[r]
    if 1e-280 < s < 1e280 or s == 0.0:
        return sqrt(s)
    for r in range(k):
        v = fabs(row[r])
        if not v <= top:            # (a NaN too)
            top = v
    if not (0.0 < top < INFINITY):
        return top
    s = 0.0
    for r in range(k):
        v = row[r] / top
        s += v * v
    return top * sqrt(s)


cdef int remove_uniform(OnlineLearner lr, Py_ssize_t budget, double decay) except -1 nogil:
    """BOGD's removal: position ``rng.randint(B)``; every coefficient (row)
    times ``B (1 - eta lambda) / (B - 1)``."""
    cdef Py_ssize_t i = lr.random_below(budget)
    lr.rescale(budget * decay / (budget - 1.0))
    lr.remove_at(i)
    return 0


cdef int bound_largest(OnlineLearner lr, double largest, double cap) except -1 nogil:
    """BOGD's bound: every coefficient (row) times ``min(1, cap / (scale
    largest))``, ``largest`` the largest magnitude (row norm) in stored
    units."""
    largest *= lr.scale
    if not is_finite(largest):
        raise_not_finite(b"The largest coefficient of the bounded OGD")
    if largest > cap:
        lr.rescale(cap / largest)
    return 0


cdef Py_ssize_t draw_position(OnlineLearner lr, const double* magnitude,
                              double* p) except -1 nogil:
    """BOGD++'s draw over the ``n`` support vectors: the weights ``w_j =
    |magnitude_c| sqrt(k_cc)`` of their cells ``c`` (a coefficient or a
    row's norm, unscaled: ``p`` is scale-free; 0 where ``k_cc <= 0``) give
    ``p_j = 1 - (n - 1) w_j / sum w`` in ``p[0:n]`` (negative ones 0,
    renormalized; uniform when ``sum w = 0``); ``u = rng.random_sample()``,
    and the first position with ``cumsum(p) > u`` (the last if rounding
    leaves none)."""
    cdef Py_ssize_t i, j, c, n = lr.n_sv
    cdef double total = 0.0, kept = 0.0, u, running
    for i in range(n):
        c = lr.order[i]
        p[i] = fabs(magnitude[c]) * sqrt(lr.kself[c]) if lr.kself[c] > 0 else 0.0
        total += p[i]
    if not is_finite(total):
        raise_not_finite(b"The sum of the bounded OGD's coefficient weights")
    for i in range(n):
        p[i] = 1.0 - (n - 1.0) * p[i] / total if total > 0 else 1.0 / n
        if p[i] < 0.0:
            p[i] = 0.0
        kept += p[i]
    for i in range(n):              # (kept >= 1: the p summed to 1 before the clipping)
        p[i] /= kept
    u = lr.random_uniform()
    j = n - 1
    running = 0.0
    for i in range(n):
        running += p[i]
        if running > u:
            j = i
            break
    return j


def _set_rule(lr, double eta, double lam, double bound, int sampling):
    """The rule's parameters of a new BOGD learner (binary or shared)."""
    lr.eta = eta
    lr.lam = lam
    lr.bound = bound
    lr.sampling = sampling
    lr.n_removals = 0


def _rule_problem(lr):
    """A description unless the rule's parameters of a BOGD learner (binary
    or shared) are a rule and its support set fits the budget, else None."""
    if not (2 <= lr.budget and lr.n_sv <= lr.budget):
        return f"budget={lr.budget} is not at least 2 or is below n_sv={lr.n_sv}"
    if not (lr.eta > 0 and is_finite(lr.eta) and lr.lam >= 0
            and lr.eta * lr.lam < 1 and lr.bound > 0):
        return (f"eta={lr.eta}, lam={lr.lam}, bound={lr.bound} are not a step, a "
                f"regularization and a bound")
    if lr.sampling not in (SAMPLING_UNIFORM, SAMPLING_COEFFICIENT):
        return f"sampling={lr.sampling} is no rule"
    if lr.rng is None:
        return "no random generator"
    return None
