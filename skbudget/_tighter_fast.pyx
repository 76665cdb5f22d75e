# cython: language_level=3, cdivision=True
"""Tighter and Tightest Perceptrons
(doc/algorithms.md#tighter-perceptron).

Both share one skeleton, :class:`ValidatedRemovalLearner`: on a mistake
(``y f(x_t) <= 0``) add ``(x_t, alpha = y_t)``; when the support set then
holds ``B + 1`` vectors, remove the one whose removal gives the smallest
validation loss, every ``B + 1`` vector (the new one included) being a
candidate, ties to the oldest.  Subclasses provide the loss
(``removal_loss``) and the bookkeeping around it (``before_insert``,
``after_insert``, ``before_remove``, ``on_correct``).

The engine keeps ``f(x_i)`` on every support vector (``track_margins``) and
the support-set Gram matrix (``track_gram``), so a loss over the support
set costs O(B) per candidate and a removal decision O(B^2), with no kernel
evaluation beyond the new example's row.
"""

import numpy as np
from libc.math cimport INFINITY
from skbudget._numbers cimport is_nan, raise_not_finite
from scipy.special.cython_special cimport betainc

from skbudget._engine cimport OnlineLearner
from skbudget._engine import _grown_index, _resized, size_problem, square_problem


cdef class ValidatedRemovalLearner(OnlineLearner):
    """Add on a mistake, then drop the argmin of a validation loss."""
    cdef public Py_ssize_t budget
    cdef public double[::1] label             # y of each cell

    _state_names = OnlineLearner._state_names + ("budget", "label")

    def __init__(self, Py_ssize_t budget=1, rng=None):
        self.label = np.zeros(0)
        self.budget = budget        # (before the engine's __init__ reads capacity_limit)
        OnlineLearner.__init__(self, rng=rng, track_margins=True)

    cdef Py_ssize_t capacity_limit(self) noexcept nogil:
        return self.budget + 1      # (B support vectors and the example being added)

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        OnlineLearner.grow(self, new_capacity)
        self.label = _resized(self.label, new_capacity)
        return 0

    def check_policy_state(self, Py_ssize_t pool_size):
        if not self.track_margins:
            return "the validation losses need track_margins"
        if self.budget < 1:
            return f"budget={self.budget} is below 1"
        return size_problem({"label": self.label}, self.capacity)

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef double score = self.dot_row() + self.intercept
        cdef double loss, best
        cdef Py_ssize_t cell, pos, best_pos
        if y * score <= 0:
            self.before_insert(y, score, example_id)
            cell = self.append_current(y)
            self.label[cell] = y
            self.n_updates += 1
            self.after_insert(cell, y)
            if self.n_sv > self.budget:
                best_pos = 0
                best = INFINITY
                # strict <: ties go to the oldest.  A NaN loss ranks after every
                # number (never below best: every loss NaN removes the oldest):
                # Tightest's weights w+ are NaN where a kernel with negative
                # values (linear, sigmoid) drove a soft count below the Beta
                # prior's domain; the rule gives them no value
                for pos in range(self.n_sv):
                    loss = self.removal_loss(self.order[pos])
                    if loss < best:
                        best = loss
                        best_pos = pos
                self.before_remove(self.order[best_pos])
                self.remove_at(best_pos)
        else:
            self.on_correct(y, score, example_id)
        return score

    # ---- hooks (defaults: nothing) --------------------------------------
    cdef double removal_loss(self, Py_ssize_t cell) except? -1.5e300 nogil:
        with gil:
            raise NotImplementedError

    cdef int before_insert(self, double y, double score, Py_ssize_t example_id) except -1 nogil:
        return 0

    cdef int after_insert(self, Py_ssize_t cell, double y) except -1 nogil:
        return 0

    cdef int before_remove(self, Py_ssize_t cell) except -1 nogil:
        return 0

    cdef int on_correct(self, double y, double score, Py_ssize_t example_id) except -1 nogil:
        return 0


# ---------------------------------------------------------------------------
# Tighter
# ---------------------------------------------------------------------------
cdef enum:
    VALIDATE_SUPPORT = 0
    VALIDATE_FULL = 1
    VALIDATE_RESERVOIR = 2


cdef class TighterLearner(ValidatedRemovalLearner):
    """Tighter Perceptron: 0-1 validation loss.

    ``mode`` 0: the ``B + 1`` support vectors validate (Tighter^0);
    1: every distinct example seen so far (by example identity), ``x_t``
    included (Tighter^Full); 2: a uniform reservoir of ``reservoir_size``
    examples of the rounds without a mistake (Tighter^A, Algorithm R: for
    the i-th such round (1-based), append while ``i <= A``, else draw
    ``j = rng.randint(i)`` and replace reservoir entry ``j`` if ``j < A``).

    The validation vectors that are not support vectors stay in the
    engine's pool (``mark_extra_slots``).  For each one we keep its pool
    slot, label, ``f(x_v)`` and ``kv[c, v] = k(x_c, x_v)`` for every
    support-vector cell ``c``, all updated incrementally: a new support
    vector costs O(|V|) lookups, a removal O(|V|), a decision O(B |V|).
    """
    cdef public int mode
    cdef public Py_ssize_t reservoir_size
    cdef public long long n_correct          # i of Algorithm R
    cdef public Py_ssize_t n_val
    cdef public Py_ssize_t vcap
    cdef public Py_ssize_t[::1] vslot
    cdef public double[::1] vy
    cdef public double[::1] vf
    cdef public double[:, ::1] kv             # cells x validation capacity
    cdef public Py_ssize_t[::1] val_of_example  # full mode: example id -> v (or -1)

    _state_names = ValidatedRemovalLearner._state_names + (
        "mode", "reservoir_size", "n_correct", "n_val", "vcap", "vslot", "vy", "vf",
        "kv", "val_of_example")

    def __init__(self, Py_ssize_t budget=1, int mode=VALIDATE_SUPPORT,
                 Py_ssize_t reservoir_size=0, rng=None):
        self.mode = mode
        self.reservoir_size = reservoir_size
        self.n_correct = 0
        self.n_val = 0
        # the validation entries' room grows with them (a reservoir: up to its size)
        self.vcap = (min(reservoir_size, 8) if mode == VALIDATE_RESERVOIR
                     else (8 if mode == VALIDATE_FULL else 0))
        self.vslot = np.zeros(self.vcap, dtype=np.intp)
        self.vy = np.zeros(self.vcap)
        self.vf = np.zeros(self.vcap)
        self.kv = np.zeros((0, self.vcap))
        self.val_of_example = np.full(0, -1, dtype=np.intp)
        ValidatedRemovalLearner.__init__(self, budget=budget, rng=rng)

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        cdef Py_ssize_t old = self.capacity
        ValidatedRemovalLearner.grow(self, new_capacity)
        kv = np.zeros((new_capacity, self.vcap))
        kv[:old] = np.asarray(self.kv)[:old]
        self.kv = kv
        return 0

    cdef int grow_validation(self) except -1:
        """Room for twice the validation entries (at least 8; a reservoir:
        at most ``reservoir_size``)."""
        cdef Py_ssize_t n = max(2 * self.vcap, 8)
        if self.mode == VALIDATE_RESERVOIR:
            n = min(n, self.reservoir_size)
        self.vslot = _resized(self.vslot, n)
        self.vy = _resized(self.vy, n)
        self.vf = _resized(self.vf, n)
        kv = np.zeros((self.capacity, n))
        kv[:, :self.vcap] = np.asarray(self.kv)
        self.kv = kv
        self.vcap = n
        return 0

    cdef int set_validation(self, Py_ssize_t v, double y, double score) except -1 nogil:
        """Validation entry ``v`` := the current example, ``f(x_t) = score``."""
        cdef Py_ssize_t i, c
        self.ensure_row()
        self.vslot[v] = self.current_slot()
        self.vy[v] = y
        self.vf[v] = score
        for i in range(self.n_sv):
            c = self.order[i]
            self.kv[c, v] = self.k_row[c]

    cdef int add_seen_example(self, double y, double score, Py_ssize_t example_id) except -1 nogil:
        """Full mode: the current example joins V unless already in it (an
        example of this call seen in an earlier pass)."""
        cdef Py_ssize_t position = self.example_position(example_id), v
        if position >= self.val_of_example.shape[0]:
            with gil:
                self.val_of_example = _grown_index(self.val_of_example, position)
        v = self.val_of_example[position]
        if not -1 <= v < self.n_val:
            with gil:
                raise ValueError(f"{type(self).__name__} has an inconsistent state: "
                                 f"val_of_example holds entry {v}")
        if v >= 0:
            return 0
        if self.n_val == self.vcap:
            with gil:
                self.grow_validation()
        self.set_validation(self.n_val, y, score)
        self.val_of_example[position] = self.n_val
        self.n_val += 1
        return 0

    def forget_examples(self):
        self.val_of_example = np.full(0, -1, dtype=np.intp)

    def check_policy_state(self, Py_ssize_t pool_size):
        problem = ValidatedRemovalLearner.check_policy_state(self, pool_size)
        if problem is None:
            problem = size_problem({"vslot": self.vslot, "vy": self.vy, "vf": self.vf,
                                    "kv columns": self.kv.T}, self.vcap, "entries")
        if problem is None:
            problem = size_problem({"kv": self.kv}, self.capacity)
        if problem is None and not (0 <= self.n_val <= self.vcap and self.mode in (
                VALIDATE_SUPPORT, VALIDATE_FULL, VALIDATE_RESERVOIR) and (
                self.mode != VALIDATE_RESERVOIR or (
                    self.n_val <= self.vcap <= self.reservoir_size and self.n_correct >= 0
                    and self.n_val == min(self.n_correct, self.reservoir_size)))):
            problem = (f"mode={self.mode}, n_val={self.n_val}, reservoir_size="
                       f"{self.reservoir_size}, n_correct={self.n_correct} do not fit "
                       f"{self.vcap} validation entries")
        if problem is None and self.n_val and pool_size >= 0 and not (
                0 <= np.min(self.vslot[:self.n_val])
                and np.max(self.vslot[:self.n_val]) < pool_size):
            problem = f"a validation vector's slot is outside the {pool_size} stored vectors"
        return problem

    cdef int before_insert(self, double y, double score, Py_ssize_t example_id) except -1 nogil:
        if self.mode == VALIDATE_FULL:
            self.add_seen_example(y, score, example_id)
        return 0

    cdef int after_insert(self, Py_ssize_t cell, double y) except -1 nogil:
        cdef Py_ssize_t v
        cdef double k
        if self.mode == VALIDATE_SUPPORT:
            return 0
        with nogil:
            for v in range(self.n_val):
                k = self.kernel_to_slot(self.vslot[v])
                self.kv[cell, v] = k
                self.vf[v] += y * k
        return 0

    cdef int before_remove(self, Py_ssize_t cell) except -1 nogil:
        cdef Py_ssize_t v
        cdef double a = self.scale * self.alpha[cell]
        cdef double* fs
        cdef const double* ks
        if self.mode == VALIDATE_SUPPORT or self.n_val == 0:
            return 0
        fs = &self.vf[0]
        ks = &self.kv[cell, 0]
        with nogil:
            for v in range(self.n_val):
                fs[v] -= a * ks[v]
        return 0

    cdef int on_correct(self, double y, double score, Py_ssize_t example_id) except -1 nogil:
        cdef long long j
        if self.mode == VALIDATE_FULL:
            self.add_seen_example(y, score, example_id)
        elif self.mode == VALIDATE_RESERVOIR:
            self.n_correct += 1
            if self.n_correct <= self.reservoir_size:
                if self.n_val == self.vcap:
                    with gil:
                        self.grow_validation()
                self.set_validation(self.n_val, y, score)
                self.n_val += 1
            else:
                j = self.random_below(self.n_correct)
                if j < self.reservoir_size:
                    self.set_validation(j, y, score)
        return 0

    cdef double removal_loss(self, Py_ssize_t cell) except? -1.5e300 nogil:
        """Validation errors of the model without ``cell`` (a zero score
        counts as an error)."""
        cdef double a = self.scale * self.alpha[cell]
        cdef Py_ssize_t i, c, v, n
        cdef long long errors = 0
        cdef const double* g
        cdef const double* ys
        cdef const double* fs
        cdef const double* ks
        cdef const Py_ssize_t* order
        with nogil:
            if self.mode == VALIDATE_SUPPORT:
                g = &self.gram[cell, 0]
                ys = &self.label[0]
                fs = &self.margin[0]
                order = &self.order[0]
                for i in range(self.n_sv):
                    c = order[i]
                    if ys[c] * (self.scale * fs[c] + self.intercept - a * g[c]) <= 0:
                        errors += 1
            elif self.n_val > 0:
                ks = &self.kv[cell, 0]
                ys = &self.vy[0]
                fs = &self.vf[0]
                n = self.n_val
                for v in range(n):
                    errors += ys[v] * (fs[v] - a * ks[v]) <= 0
        return <double>errors

    cdef void mark_extra_slots(self, unsigned char* mark) noexcept nogil:
        cdef Py_ssize_t v
        for v in range(self.n_val):
            mark[self.vslot[v]] = 1

    cdef void remap_extra_slots(self, const Py_ssize_t* new_slot) noexcept nogil:
        cdef Py_ssize_t v
        for v in range(self.n_val):
            self.vslot[v] = new_slot[self.vslot[v]]

    def validation_slots(self):
        """Pool slots of the validation vectors (modes 1 and 2)."""
        return np.asarray(self.vslot)[:self.n_val].copy()

    def validation_scores(self):
        """Tracked ``f(x_v)`` on the validation vectors (modes 1 and 2)."""
        return np.asarray(self.vf)[:self.n_val].copy()


# ---------------------------------------------------------------------------
# Tightest
# ---------------------------------------------------------------------------
cdef class TightestLearner(ValidatedRemovalLearner):
    """Tightest Perceptron: soft neighbourhood counts, Beta-posterior
    weights, expected hinge loss over the support set.

    Per cell: counts ``cpos``/``cneg`` and the cached weight
    ``wpos = 1 - I_0.5(cpos + prior_pos, cneg + prior_neg)`` (recomputed
    when the counts change, one ``betainc`` per round).  The nearest
    support vector in input space is the largest kernel value
    (``use_distances=False``: RBF, Laplacian) or the smallest squared
    Euclidean distance from the engine's distance blocks (any other
    kernel; the support-set distance matrix is kept like the Gram).
    """
    cdef public double prior_pos, prior_neg
    cdef public bint use_distances
    cdef public double[::1] cpos
    cdef public double[::1] cneg
    cdef public double[::1] wpos
    cdef public double[:, ::1] dist           # squared distances between cells

    _state_names = ValidatedRemovalLearner._state_names + (
        "prior_pos", "prior_neg", "use_distances", "cpos", "cneg", "wpos", "dist")

    def __init__(self, Py_ssize_t budget=1, double prior_pos=1.0, double prior_neg=1.0,
                 bint use_distances=False, rng=None):
        self.cpos = np.zeros(0)
        self.cneg = np.zeros(0)
        self.wpos = np.zeros(0)
        self.dist = np.zeros((0, 0))
        self.use_distances = use_distances
        self.prior_pos = prior_pos
        self.prior_neg = prior_neg
        ValidatedRemovalLearner.__init__(self, budget=budget, rng=rng)

    def check_policy_state(self, Py_ssize_t pool_size):
        problem = ValidatedRemovalLearner.check_policy_state(self, pool_size) or size_problem(
            {"cpos": self.cpos, "cneg": self.cneg, "wpos": self.wpos}, self.capacity)
        if problem is None and self.use_distances:
            problem = square_problem("the distance matrix", self.dist, self.capacity)
        return problem

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        cdef Py_ssize_t old = self.capacity
        ValidatedRemovalLearner.grow(self, new_capacity)
        self.cpos = _resized(self.cpos, new_capacity)
        self.cneg = _resized(self.cneg, new_capacity)
        self.wpos = _resized(self.wpos, new_capacity)
        if self.use_distances:
            dist = np.zeros((new_capacity, new_capacity))
            dist[:old, :old] = np.asarray(self.dist)[:old, :old]
            self.dist = dist
        return 0

    cdef inline void set_counts(self, Py_ssize_t c, double cp, double cn) noexcept nogil:
        self.cpos[c] = cp
        self.cneg[c] = cn
        self.wpos[c] = 1.0 - betainc(cp + self.prior_pos, cn + self.prior_neg, 0.5)

    cdef void update_summary(self, Py_ssize_t n, double cp, double cn, double k) noexcept nogil:
        """UpdateSummary: the nearest support vector ``n`` (at kernel value
        ``k``) receives the soft counts."""
        self.set_counts(n, self.cpos[n] + cp * k, self.cneg[n] + cn * k)

    cdef int after_insert(self, Py_ssize_t cell, double y) except -1 nogil:
        cdef Py_ssize_t i, c
        self.set_counts(cell, 1.0 if y > 0 else 0.0, 1.0 if y < 0 else 0.0)
        if self.use_distances:
            for i in range(self.n_sv):
                c = self.order[i]
                self.dist[cell, c] = self.sqdist_to_slot(self.slot[c])
                self.dist[c, cell] = self.dist[cell, c]
            self.dist[cell, cell] = 0.0
        return 0

    cdef double removal_loss(self, Py_ssize_t cell) except? -1.5e300 nogil:
        """Expected hinge loss over the support set of the model without
        ``cell``."""
        cdef double a = self.scale * self.alpha[cell]
        cdef double s = self.scale, b = self.intercept
        cdef double g, w, total = 0.0
        cdef Py_ssize_t i, c
        cdef const double* gram = &self.gram[cell, 0]
        cdef const double* margin = &self.margin[0]
        cdef const double* wpos = &self.wpos[0]
        cdef const Py_ssize_t* order = &self.order[0]
        with nogil:
            for i in range(self.n_sv):
                c = order[i]
                g = s * margin[c] + b - a * gram[c]
                w = wpos[c]
                total += w * max(0.0, 1.0 - g) + (1.0 - w) * max(0.0, 1.0 + g)
        return total / self.n_sv

    cdef int before_remove(self, Py_ssize_t cell) except -1 nogil:
        """UpdateSummary(x_r, c+_r, c-_r) over the support set without r."""
        cdef Py_ssize_t i, c, n = -1
        cdef double best = 0.0, value
        with nogil:
            for i in range(self.n_sv):
                c = self.order[i]
                if c == cell:
                    continue
                value = -self.dist[cell, c] if self.use_distances else self.gram[cell, c]
                if is_nan(value):
                    raise_not_finite(b"A kernel value or distance between support vectors")
                if n < 0 or value > best:
                    best = value
                    n = c
            self.update_summary(n, self.cpos[cell], self.cneg[cell], self.gram[cell, n])
        return 0

    cdef int on_correct(self, double y, double score, Py_ssize_t example_id) except -1 nogil:
        """UpdateSummary(x_t, [y = +1], [y = -1])."""
        cdef Py_ssize_t i, c, n = -1
        cdef double best = 0.0, value
        self.ensure_row()
        with nogil:
            for i in range(self.n_sv):
                c = self.order[i]
                value = -self.sqdist_to_slot(self.slot[c]) if self.use_distances else self.k_row[c]
                if is_nan(value):
                    raise_not_finite(b"A kernel value or distance to a support vector")
                if n < 0 or value > best:
                    best = value
                    n = c
            if n >= 0:
                self.update_summary(n, 1.0 if y > 0 else 0.0, 1.0 if y < 0 else 0.0, self.k_row[n])
        return 0

    def counts(self):
        """(c+, c-) of the support vectors, oldest first."""
        cells = self.support_order()
        return np.asarray(self.cpos)[cells].copy(), np.asarray(self.cneg)[cells].copy()

    def weights(self):
        """w+ of the support vectors, oldest first."""
        return np.asarray(self.wpos)[self.support_order()].copy()
