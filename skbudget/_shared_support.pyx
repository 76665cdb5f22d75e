# cython: language_level=3, cdivision=True
"""One support set for every class: the store of the shared-support learners.

A multi-class learner such as MIRA
(doc/algorithms.md#mira)
keeps one support set for all ``k`` classes: each support pattern ``x_c`` carries a class
label ``label[c]`` and a coefficient vector ``tau[c, :]`` of length ``k``,
and the class scores are ``s_r(x) = scale * sum_c tau[c, r] k(x_c, x)``, with the
engine's global ``scale`` (1 unless a policy moves it: multi-class BSGD's
shrink is a change of scale,
doc/algorithms.md#bsgd-multi-class).  The budget counts patterns (one stored
vector each), whatever ``k``.

:class:`SharedSupportLearner` extends the engine's store (cells, ``order``,
``append_current``, ``remove_at``) with that coefficient matrix and, with
``track_scores``, the class scores ``support_scores[c, r] = s_r(x_c)`` of
every stored pattern, kept up to date in O(|S| k) per insertion or removal
through the support-set Gram matrix (never recomputed; in the units of
``tau``: ``s_r(x_c) = scale * support_scores[c, r]``).  A policy calls
:meth:`compute_scores` for the current example's scores, decides, and calls
:meth:`append_pattern` (or :meth:`append_point` for a vector that is no
example) / ``remove_at``; :meth:`leave_one_out_margin` and
:meth:`best_removal` are the multi-class form of the Crammer-Kandola-Singer
removal rule.

The learner takes the class index (``0 .. k-1``, as a double) as its label;
``process_example`` returns the margin ``s_y - max_{r != y} s_r`` of the
true class (a mistake when ``<= 0``; two scores that agree to a relative
1e-9 count as tied, margin 0).
"""

import numpy as np
from libc.float cimport DBL_MAX, DBL_MIN
from libc.math cimport INFINITY

from skbudget._engine cimport OnlineLearner
from skbudget._numbers cimport is_nan, raise_not_finite, tie_tolerance
from skbudget._vector_loops cimport (skb_class_scores, skb_nonfinite_flags, skb_runner_up,
                                     skb_vector_loops_init)
from skbudget._engine import _resized, size_problem

skb_vector_loops_init()     # the AVX2 loops where the CPU has AVX2


cdef class SharedSupportLearner(OnlineLearner):
    """Multi-class online kernel learner on one shared support set.

    Parameters
    ----------
    n_outputs : int
        ``k``, the number of classes (at least 1: a stream without
        ``classes=`` starts with the classes of its first rows and grows,
        :meth:`add_class`; with one class there is no rival and no round is
        a mistake).
    track_scores : bool
        Keep ``s_r(x_c)`` for every support pattern (and the support-set
        Gram matrix it needs), updated in O(|S| k) per change.
    rng : numpy.random.RandomState or None
        Source of the random draws a policy's rule asks for.
    track_gram : bool
        Keep the support-set Gram matrix (also without ``track_scores``).
    """

    _state_names = OnlineLearner._state_names + (
        "n_outputs", "tau", "label", "track_scores", "support_scores", "scores", "candidates")

    # the arrays with one entry per class along their last axis: a class
    # first seen by a stream without ``classes=`` (add_class) gets a zero
    # there; a subclass adds its own per-class arrays (scratch included)
    _per_class_names = ("tau", "support_scores", "scores")

    def __init__(self, Py_ssize_t n_outputs=2, bint track_scores=False, rng=None,
                 bint track_gram=False):
        if n_outputs < 1:
            raise ValueError(f"n_outputs must be at least 1; got {n_outputs}")
        self.n_outputs = n_outputs
        self.track_scores = track_scores
        self.tau = np.zeros((0, n_outputs))
        self.support_scores = np.zeros((0, n_outputs))
        self.label = np.zeros(0, dtype=np.intp)
        self.scores = np.zeros(n_outputs)
        self.candidates = np.zeros(0)
        OnlineLearner.__init__(self, rng=rng,
                               track_gram=track_scores or track_gram)

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        OnlineLearner.grow(self, new_capacity)
        self.tau = _resized_rows(self.tau, new_capacity)
        self.label = _resized(self.label, new_capacity)
        if self.track_scores:
            self.support_scores = _resized_rows(self.support_scores, new_capacity)
            self.candidates = _resized(self.candidates, new_capacity)
        return 0

    def check_policy_state(self, Py_ssize_t pool_size):
        cdef Py_ssize_t k = self.n_outputs, cap = self.capacity
        if k < 1:
            return f"n_outputs={k} is below 1"
        per_cell = {"tau": self.tau, "label": self.label}
        if self.track_scores:
            per_cell.update(support_scores=self.support_scores, candidates=self.candidates)
        problem = (size_problem(per_cell, cap)
                   or size_problem({"tau columns": self.tau.T, "scores": self.scores}, k,
                                   "entries"))
        if problem is None and self.track_scores:
            problem = size_problem({"support_scores columns": self.support_scores.T}, k,
                                   "entries")
            if not self.track_gram:
                problem = "track_scores without track_gram"
        if problem is None and self.n_sv:
            labels = np.asarray(self.label)[np.asarray(self.order)[:self.n_sv]]
            if not (0 <= labels.min() and labels.max() < k):
                problem = f"a support pattern's label is not a class index below {k}"
        return problem

    cdef void compute_scores(self) noexcept nogil:
        """scores[r] = s_r(x_t) for every class, from the gathered kernel
        row (support patterns oldest first), times the global scale: every
        class's sum takes the patterns' terms in their order
        (``skb_class_scores``: with AVX2, up to 32 classes' sums kept in
        registers over the whole pass; the same bits as one pass per
        pattern)."""
        skb_class_scores(&self.scores[0], &self.k_row[0], &self.order[0], self.n_sv,
                         &self.tau[0, 0], self.n_outputs, self.scale)

    cdef int rescale(self, double factor) except -1 nogil:
        """Every coefficient row times ``factor`` > 0 in O(1), by the global
        scale (:meth:`OnlineLearner.rescale`); when the scale is folded
        into the stored values, the rows ``tau`` and (``track_scores``) the
        class scores ``support_scores``, in the same units, take it too
        (the engine folds only its own ``alpha``).  Returns 1 if it was
        folded, else 0."""
        cdef Py_ssize_t i, r, c, k = self.n_outputs
        cdef double folded = self.scale * factor
        if not OnlineLearner.rescale(self, factor):
            return 0
        for i in range(self.n_sv):
            c = self.order[i]
            for r in range(k):
                self.tau[c, r] *= folded
                if self.track_scores:
                    self.support_scores[c, r] *= folded
        return 1

    cdef Py_ssize_t class_index(self, double y) except -1 nogil:
        """The class index a round's label ``y`` stands for (the driver
        hands a shared learner ``0 .. k-1`` as doubles); anything else
        raises."""
        cdef Py_ssize_t label = <Py_ssize_t> y
        if not (0 <= label < self.n_outputs and label == y):
            with gil:
                raise ValueError(
                    f"the label must be a class index in [0, {self.n_outputs}); got {y}")
        return label

    cdef double top_two_margin(self, Py_ssize_t y, Py_ssize_t* runner) except? -1.5e300 nogil:
        """The top-two reduction of a round (doc/algorithms.md#shared-multi-class),
        from ``scores`` (:meth:`compute_scores` first): the runner-up
        ``r = argmax_{c != y} s_c`` (ties: the lowest index) into
        ``runner[0]`` and the margin ``m = s_y - s_r``, exact (no tie
        tolerance).  With one class there is no rival: ``runner[0] = -1``
        and ``m = DBL_MAX``, the largest finite margin (no rule updates, no
        mistake; finite, so that no rule's arithmetic meets an infinity).  A score that is not finite
        raises (an overflow of the coefficients)."""
        cdef Py_ssize_t best = skb_runner_up(&self.scores[0], self.n_outputs, y)
        cdef const double* scores = &self.scores[0]
        runner[0] = best
        if skb_nonfinite_flags(scores, self.n_outputs) >> 63:
            with gil:
                raise ValueError(
                    "the class scores are not finite numbers: the coefficients overflowed "
                    "the floating-point range; use less extreme parameters (e.g. a smaller "
                    "gamma or step)")
        if best < 0:
            return DBL_MAX
        return scores[y] - scores[best]

    cdef double round_margin(self, Py_ssize_t y, Py_ssize_t* runner) except? -1.5e300 nogil:
        """A round's start for a shared rule: the current example's kernel
        row gathered, its class scores (:meth:`compute_scores`) and their
        top-two reduction (:meth:`top_two_margin`: the runner-up into
        ``runner[0]``, the margin returned)."""
        self.ensure_row()
        self.compute_scores()
        return self.top_two_margin(y, runner)

    cdef double round_value(self, double margin, Py_ssize_t y, Py_ssize_t runner) noexcept nogil:
        """What ``process_example`` returns for a round of margin ``margin``
        (the driver counts a mistake when it is ``<= 0``): the margin, except
        for a tie that the true class wins (prediction's ties go to the lower
        index), which is no mistake."""
        if margin == 0.0 and runner > y:
            return DBL_MIN
        return margin

    cdef void pair_row(self, double* row, Py_ssize_t y, Py_ssize_t runner,
                       double a) noexcept nogil:
        """``row[0:k] = a (e_y - e_r)``: the row of an example the binary rule
        would add with coefficient ``a y_t`` (``a >= 0``)."""
        cdef Py_ssize_t c
        for c in range(self.n_outputs):
            row[c] = 0.0
        row[y] = a
        row[runner] = -a

    cdef double class_margin(self, const double* values, Py_ssize_t y) noexcept nogil:
        """values[y] - max_{r != y} values[r]; 0 when the two agree to a
        relative 1e-9 (tied); ``DBL_MAX`` with one class (no rival, as
        :meth:`top_two_margin`)."""
        cdef Py_ssize_t r
        cdef double rival = -INFINITY, m
        if self.n_outputs == 1:
            return DBL_MAX
        for r in range(self.n_outputs):
            if r != y and values[r] > rival:
                rival = values[r]
        m = values[y] - rival
        if -tie_tolerance(rival, self.tie_unit()) <= m <= tie_tolerance(rival, self.tie_unit()):
            return 0.0
        return m

    cdef double tie_unit(self) noexcept nogil:
        """The scale of the scores and margins, the tie tolerance's floor
        (:func:`tie_tolerance`): 1 unless a policy's values scale with a
        parameter of its own (MIRA's ``beta``)."""
        return 1.0

    cdef Py_ssize_t append_pattern(self, Py_ssize_t y, const double* coef) except -1 nogil:
        """Add the current example as the newest support pattern, with class
        ``y`` and coefficients ``coef[0:k]`` (in the units of ``tau``); its
        cell."""
        cdef Py_ssize_t i, r, c, cell, k = self.n_outputs
        cdef double kv
        cell = self.append_current(0.0)   # the engine's store: slot, Gram row, order
        self.set_pattern(cell, y, coef)
        if not self.track_scores:
            return cell
        cdef double* own = &self.support_scores[cell, 0]
        cdef double* other
        cdef const double* row
        for r in range(k):
            own[r] = coef[r] * self.k_tt
        for i in range(self.n_sv - 1):
            c = self.order[i]
            kv = self.k_row[c]
            row = &self.tau[c, 0]
            other = &self.support_scores[c, 0]
            for r in range(k):
                own[r] += row[r] * kv
                other[r] += coef[r] * kv
        return cell

    cdef Py_ssize_t append_point(self, const double* z, Py_ssize_t y,
                                 const double* coef) except -1 nogil:
        """Add the vector ``z`` (``n_features`` doubles; no example of the
        stream, e.g. a merge of two patterns; store mode only) as the newest
        support pattern of class ``y`` with coefficients ``coef[0:k]``; its
        cell.  Not with ``track_scores``: the scores of the stored patterns
        would need the kernel row of ``z``."""
        cdef Py_ssize_t cell
        if self.track_scores:
            with gil:
                raise RuntimeError("append_point does not keep support_scores")
        cell = self.append_vector(z, 0.0)
        self.set_pattern(cell, y, coef)
        return cell

    cdef void set_pattern(self, Py_ssize_t cell, Py_ssize_t y, const double* coef) noexcept nogil:
        """The class and the coefficients ``coef[0:k]`` (in the units of
        ``tau``: the true ones divided by the global scale) of the pattern
        in ``cell``."""
        cdef Py_ssize_t r
        self.label[cell] = y
        for r in range(self.n_outputs):
            self.tau[cell, r] = coef[r]

    cdef int on_remove(self, Py_ssize_t cell) except -1 nogil:
        """Take the pattern's contribution out of every stored pattern's scores."""
        cdef Py_ssize_t i, r, c, k = self.n_outputs
        cdef double g
        cdef const double* gone = &self.tau[cell, 0]
        cdef double* other
        if not self.track_scores:
            return 0
        for i in range(self.n_sv):
            c = self.order[i]
            g = self.gram[c, cell]
            other = &self.support_scores[c, 0]
            for r in range(k):
                other[r] -= gone[r] * g
        return 0

    cdef double leave_one_out_margin(self, Py_ssize_t cell) noexcept nogil:
        """mu_c = (s_y(x_c) - tau_{c,y} k_cc) - max_{r != y} (s_r(x_c) -
        tau_{c,r} k_cc), y = label[c]: the margin of pattern ``cell`` under
        the model without it (needs ``track_scores``)."""
        cdef Py_ssize_t r, y = self.label[cell]
        cdef double kc = self.kself[cell], v, rival = -INFINITY
        for r in range(self.n_outputs):
            if r != y:
                v = self.support_scores[cell, r] - self.tau[cell, r] * kc
                if v > rival:
                    rival = v
        return self.support_scores[cell, y] - self.tau[cell, y] * kc - rival

    cdef Py_ssize_t best_removal(self, Py_ssize_t n_candidates, double* best) except -1 nogil:
        """Position among the oldest ``n_candidates`` with the largest
        leave-one-out margin (ties: the oldest of the values within the
        tie tolerance of the largest); its margin goes to ``best``.  A NaN
        margin (an overflow of the scores) raises."""
        cdef Py_ssize_t i
        cdef double top = -INFINITY
        cdef double* mu = &self.candidates[0]
        for i in range(n_candidates):
            mu[i] = self.leave_one_out_margin(self.order[i])
            if is_nan(mu[i]):
                raise_not_finite(b"A leave-one-out margin")
            top = max(top, mu[i])
        i = 0
        while i < n_candidates - 1 and mu[i] < top - tie_tolerance(top, self.tie_unit()):
            i += 1
        best[0] = mu[i]
        return i

    def add_class(self, Py_ssize_t position):
        """A class first seen now (a stream without ``classes=``), at index
        ``position`` of the sorted classes: a zero at ``position`` of every
        per-class array (``_per_class_names``: its scores and coefficients
        are 0), and the stored labels at or above ``position`` move up one.
        The model's predictions among the other classes do not change."""
        if not 0 <= position <= self.n_outputs:
            raise ValueError(f"position must be in [0, {self.n_outputs}]; got {position}")
        for name in self._per_class_names:
            values = np.asarray(getattr(self, name))
            setattr(self, name, np.ascontiguousarray(
                np.insert(values, position, 0.0, axis=values.ndim - 1)))
        labels = np.asarray(self.label)
        labels[labels >= position] += 1
        self.n_outputs += 1

    # ------------------------------------------------------------------
    # read-out
    # ------------------------------------------------------------------
    def coefficient_matrix(self):
        """(n_sv, k): the coefficient vector of every support pattern,
        oldest first."""
        return np.asarray(self.tau)[self.support_order()] * self.scale

    def support_labels(self):
        """Class index of every support pattern, oldest first."""
        return np.asarray(self.label)[self.support_order()].copy()

    def support_class_scores(self):
        """(n_sv, k): s_r(x_c) of every support pattern, oldest first
        (needs ``track_scores``)."""
        return np.asarray(self.support_scores)[self.support_order()].copy()


def _resized_rows(arr, Py_ssize_t n):
    """A copy of the 2-D ``arr`` with ``n`` rows (old ones kept)."""
    arr = np.asarray(arr)
    out = np.zeros((n, arr.shape[1]), dtype=arr.dtype)
    m = min(n, arr.shape[0])
    out[:m] = arr[:m]
    return out


def _class_scores(const double[::1] k_row, const Py_ssize_t[::1] order,
                  const double[:, ::1] tau, double scale):
    """Python access for the tests: ``skb_class_scores`` (a shared round's
    class scores) of the patterns ``order`` (cells of ``k_row`` and rows of
    ``tau``, each checked) times ``scale``."""
    cdef Py_ssize_t n = order.shape[0], k = tau.shape[1]
    if k < 1 or k_row.shape[0] < tau.shape[0] or (
            n and not (0 <= np.min(order) and np.max(order) < tau.shape[0])):
        raise ValueError("order must name rows of tau, each with a kernel value, k >= 1")
    out = np.empty(k)
    cdef double[::1] scores = out
    skb_class_scores(&scores[0], &k_row[0] if k_row.shape[0] else NULL,
                     &order[0] if n else NULL, n, &tau[0, 0] if tau.shape[0] else NULL, k, scale)
    return out
