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
"""

import numpy as np
from libc.math cimport fabs, sqrt

from skbudget._engine cimport OnlineLearner
from skbudget._engine import _resized, size_problem
from skbudget._numbers cimport is_finite, raise_not_finite

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
        self.eta = eta
        self.lam = lam
        self.bound = bound
        self.sampling = sampling
        self.n_removals = 0

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        OnlineLearner.grow(self, new_capacity)
        self.prob = _resized(self.prob, new_capacity)
        return 0

    cdef Py_ssize_t capacity_limit(self) noexcept nogil:
        return self.budget + 1      # (B support vectors and the example being added)

    def check_policy_state(self, Py_ssize_t pool_size):
        if not (2 <= self.budget and self.n_sv <= self.budget):
            return f"budget={self.budget} is not at least 2 or is below n_sv={self.n_sv}"
        if not (self.eta > 0 and is_finite(self.eta) and self.lam >= 0
                and self.eta * self.lam < 1 and self.bound > 0):
            return (f"eta={self.eta}, lam={self.lam}, bound={self.bound} are not a step, a "
                    f"regularization and a bound")
        if self.sampling not in (SAMPLING_UNIFORM, SAMPLING_COEFFICIENT):
            return f"sampling={self.sampling} is no rule"
        if self.rng is None:
            return "no random generator"
        if self.prob.shape[0] < self.capacity:
            self.prob = np.zeros(self.capacity)     # (a state set with a larger capacity)
        return None

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
                self.remove_uniform(decay)
            else:
                self.remove_by_coefficient(decay)
            self.append_current(self.eta * y)
            if self.sampling == SAMPLING_UNIFORM:
                self.bound_all()
            self.n_removals += 1
            self.n_updates += 1
        return score

    cdef int remove_uniform(self, double decay) except -1 nogil:
        """BOGD: remove position ``rng.randint(B)`` and scale the others by
        ``B (1 - eta lambda) / (B - 1)``."""
        cdef Py_ssize_t i = self.random_below(self.budget)
        self.rescale(self.budget * decay / (self.budget - 1.0))
        self.remove_at(i)
        return 0

    cdef int bound_all(self) except -1 nogil:
        """BOGD: every coefficient times ``min(1, eta gamma / max |alpha_j|)``."""
        cdef Py_ssize_t i
        cdef double largest = 0.0, cap = self.eta * self.bound
        for i in range(self.n_sv):
            largest = max(largest, fabs(self.alpha[self.order[i]]))
        largest *= self.scale
        if not is_finite(largest):
            raise_not_finite(b"The largest coefficient of the bounded OGD")
        if largest > cap:
            self.rescale(cap / largest)
        return 0

    cdef int remove_by_coefficient(self, double decay) except -1 nogil:
        """BOGD++: draw the position to remove by ``p``, then bound every
        kept coefficient by itself."""
        cdef Py_ssize_t i, j, c, n = self.n_sv
        cdef double total = 0.0, kept = 0.0, u, running, a, v, q
        cdef double cap = self.eta * self.bound
        cdef double* p = &self.prob[0]
        for i in range(n):              # w_j (unscaled: p is scale-free)
            c = self.order[i]
            p[i] = fabs(self.alpha[c]) * sqrt(self.kself[c]) if self.kself[c] > 0 else 0.0
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
        u = self.random_uniform()
        j = n - 1
        running = 0.0
        for i in range(n):
            running += p[i]
            if running > u:
                j = i
                break
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
