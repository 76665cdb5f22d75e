# cython: language_level=3, cdivision=True
"""Kernel MIRA and its Crammer-Kandola-Singer caches
(doc/algorithms.md#mira).

MIRA (Crammer & Singer, JMLR 2003) learns all ``k`` classes at once on one
support set (``_shared_support``).  Round ``t`` with class ``y``: scores
``s_r = s_r(x_t)``, margin ``m = s_y - max_{r != y} s_r``; a mistake is
``m <= 0`` and an update is attempted when ``m <= beta``:

* fixed cache (``budget = B``, the paper's Fig. 3): when ``|S| = B``, first
  remove the pattern with the largest leave-one-out margin (ties: the
  oldest) and recompute the scores without it;
* the MIRA step with margin ``beta`` (closed form, :meth:`mira_step`); if it
  is not zero (``m < beta`` on the scores it is taken from),
  ``(x_t, tau)`` becomes the newest support pattern;
* adaptive cache (``distill``, DistillCache of Fig. 2): then remove the
  pattern with the largest leave-one-out margin while that margin is
  ``>= beta`` (the new pattern is never a candidate).

Without a cache (``budget = -1``, ``distill = False``) this is unbounded
kernel MIRA, the paper's baseline.
"""

import numpy as np
from libc.math cimport fabs, INFINITY

from skbudget._engine import size_problem
from skbudget._numbers cimport is_finite, raise_not_finite, tie_tolerance
from skbudget._shared_support cimport SharedSupportLearner


cdef class MIRALearner(SharedSupportLearner):
    """MIRA with margin ``beta`` on ``n_classes`` classes; ``budget >= 1``
    is the fixed cache, ``distill`` the adaptive one, neither: unbounded."""

    cdef public double beta
    cdef public Py_ssize_t budget        # B; -1: no fixed cache
    cdef public bint distill             # DistillCache after each insertion
    cdef public double[::1] step         # scratch: D, then the step tau of the round
    cdef public double[::1] sorted_d     # scratch: D sorted decreasing

    _per_class_names = SharedSupportLearner._per_class_names + ("step", "sorted_d")
    _state_names = SharedSupportLearner._state_names + (
        "beta", "budget", "distill", "step", "sorted_d")

    def __init__(self, Py_ssize_t n_classes=2, double beta=0.01, Py_ssize_t budget=-1,
                 bint distill=False):
        if not beta > 0:
            raise ValueError(f"beta must be > 0; got {beta}")
        if budget == 0 or budget < -1:
            raise ValueError(f"budget must be >= 1 (or -1: no fixed cache); got {budget}")
        self.budget = budget        # (before the engine's __init__ reads capacity_limit)
        SharedSupportLearner.__init__(self, n_classes, track_scores=budget >= 0 or distill)
        self.beta = beta
        self.distill = distill
        self.step = np.zeros(n_classes)
        self.sorted_d = np.zeros(n_classes)

    cdef Py_ssize_t capacity_limit(self) noexcept nogil:
        return self.budget + 1 if self.budget >= 0 else -1

    def check_policy_state(self, Py_ssize_t pool_size):
        problem = SharedSupportLearner.check_policy_state(self, pool_size) or size_problem(
            {"step": self.step, "sorted_d": self.sorted_d}, self.n_outputs, "entries")
        if problem is None and not (
                (self.budget == -1 or self.budget >= 1)
                and (self.track_scores or (self.budget == -1 and not self.distill))):
            problem = (f"budget={self.budget}, distill={self.distill} need "
                       f"track_scores={self.track_scores}")
        return problem

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef Py_ssize_t label = <Py_ssize_t> y, r
        cdef double m, value
        if not (0 <= label < self.n_outputs and label == y):
            with gil:
                raise ValueError(
                    f"the label must be a class index in [0, {self.n_outputs}); got {y}")
        self.ensure_row()
        self.compute_scores()
        self.check_scores()
        m = self.class_margin(&self.scores[0], label)
        if self.versus_beta(label) > 0 or self.k_tt <= 0.0:
            return m
        if self.n_sv == self.budget:
            self.remove_at(self.best_removal(self.n_sv, &value))
            self.compute_scores()
            self.check_scores()
        if self.versus_beta(label) < 0:
            self.mira_step(label)
            for r in range(self.n_outputs):
                if not is_finite(self.step[r]):
                    raise_not_finite(b"The MIRA step")
            self.append_pattern(label, &self.step[0])
            self.n_updates += 1
            if self.distill:
                self.distill_cache()
        return m

    cdef double tie_unit(self) noexcept nogil:
        """Scores, steps and margins scale with ``beta`` (as long as the cap
        ``tau_y <= 1`` does not bind): so does the tie tolerance's floor,
        and a small ``beta`` gives the same model up to scale (a floor of 1
        made every round of the empty model a tie for ``beta <= 1e-9``:
        no update ever)."""
        return self.beta

    cdef int check_scores(self) except -1 nogil:
        """Raise on a non-finite class score (an overflow): every decision
        of the round compares them."""
        cdef Py_ssize_t r
        for r in range(self.n_outputs):
            if not is_finite(self.scores[r]):
                raise_not_finite(b"A class score")
        return 0

    cdef int versus_beta(self, Py_ssize_t y) noexcept nogil:
        """The sign of ``m - beta`` from ``self.scores``: compares ``s_y``
        with ``max_{r != y} s_r + beta``, 0 when they agree to a relative
        1e-9 (tied).  An update is attempted when it is ``<= 0``; the MIRA
        step is zero exactly when it is ``>= 0`` (the constraints already
        hold), which the closed form reproduces only up to rounding (a
        duplicate of the pattern just learnt has ``m = beta``)."""
        cdef Py_ssize_t r
        cdef double target = -INFINITY
        for r in range(self.n_outputs):
            if r != y and self.scores[r] > target:
                target = self.scores[r]
        target += self.beta
        if fabs(self.scores[y] - target) <= tie_tolerance(target, self.beta):
            return 0
        return 1 if self.scores[y] > target else -1

    cdef void mira_step(self, Py_ssize_t y) noexcept nogil:
        """The MIRA step from ``self.scores`` into ``self.step``.

        ``tau = argmin 1/2 A sum_r tau_r^2 + sum_r tau_r (s_r + beta [r != y])``
        subject to ``tau_r <= delta_{r,y}``, ``sum_r tau_r = 0``, with
        ``A = k(x_t, x_t) > 0``.  With ``D_r = (s_r + beta [r != y]) / A +
        delta_{r,y}`` sorted decreasing (``D^_1 >= ... >= D^_k``), ``theta =
        (sum_{r <= j} D^_r - 1) / j`` for the largest ``j`` with ``theta <
        D^_j`` (``j = 1`` always qualifies); then ``tau_r = min(theta - D_r,
        0)`` for ``r != y`` and ``tau_y = -sum_{r != y} tau_r`` (the closed
        form's ``min(theta - D_y, 0) + 1``, written so that the step sums to
        exactly 0).

        The sums ``sum_{r <= j} D^_r - 1`` take ``D_y`` without its 1 once
        ``y`` is among the first ``j`` (the 1 cancels exactly): the scores
        scale with ``beta``, and ``s_y / A + 1`` would round ``s_y / A``
        away for a small ``beta`` (1e-12: four digits left), where the
        step is then the same up to scale, to rounding.
        """
        cdef Py_ssize_t r, j, k = self.n_outputs, pos_y = 0
        cdef double A = self.k_tt, total = 0.0, theta = 0.0, candidate, rivals = 0.0
        cdef double* D = &self.step[0]
        cdef double* srt = &self.sorted_d[0]
        cdef bint y_in = False
        for r in range(k):
            if r == y:
                D[r] = self.scores[r] / A + 1.0
            else:
                D[r] = (self.scores[r] + self.beta) / A
        _sort_decreasing(D, srt, k)
        for r in range(k):      # D_y's place in the (stable) sort
            if D[r] > D[y] or (r < y and D[r] == D[y]):
                pos_y += 1
        for j in range(k):
            if j == pos_y:
                total += self.scores[y] / A
                y_in = True
            else:
                total += srt[j]
            candidate = (total if y_in else total - 1.0) / (j + 1)
            if candidate < srt[j]:
                theta = candidate
        for r in range(k):
            if r != y:
                D[r] = min(theta - D[r], 0.0)
                rivals += D[r]
        D[y] = -rivals

    cdef int distill_cache(self) except -1 nogil:
        """DistillCache: remove the largest leave-one-out margin while it is
        ``>= beta`` (the newest pattern is never a candidate)."""
        cdef double value
        cdef Py_ssize_t pos
        while self.n_sv > 1:
            pos = self.best_removal(self.n_sv - 1, &value)
            if value < self.beta - tie_tolerance(self.beta, self.beta):
                break
            self.remove_at(pos)
        return 0


cdef void _sort_decreasing(const double* src, double* dst, Py_ssize_t n) noexcept nogil:
    """dst = src sorted in decreasing order (insertion sort: n is the number
    of classes)."""
    cdef Py_ssize_t i, j
    cdef double v
    for i in range(n):
        v = src[i]
        j = i
        while j > 0 and dst[j - 1] < v:
            dst[j] = dst[j - 1]
            j -= 1
        dst[j] = v
