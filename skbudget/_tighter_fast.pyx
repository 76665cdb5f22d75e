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
from libc.math cimport fabs, INFINITY
from libc.stdint cimport uint32_t
from skbudget._numbers cimport is_nan, raise_not_finite, tied_or_below
from scipy.special.cython_special cimport betainc

from skbudget._engine cimport OnlineLearner
from skbudget._shared_support cimport SharedSupportLearner
from skbudget._vector_loops cimport skb_vector_loops_init
from skbudget._engine import _grown_index, _resized, size_problem, square_problem
from skbudget._shared_support import _resized_rows

skb_vector_loops_init()     # the AVX2 loops where the CPU has AVX2

cdef extern from *:
    """
    /* The tests of point_losses for the columns q < n of a candidate's
     * kernel row k (classes a, b; t = |tau_a| + |tau_b|, u the larger):
     * with the column's point's best two classes c1, c2 and its guarded
     * gaps near (to the second) and far (to the third),
     *     (c1 in {a, b} ? t : u) |k| - (c1 or c2 in {a, b} ? near : far) >= 0,
     * bit i of flags[q / 32] for column q = 32 (q / 32) + i, the values
     * rounded as the scalar test rounds them (a NaN: 0); in the AVX2 loops'
     * two versions (the same values: the compiler's vectors compute each
     * lane as the scalar code would). */
    #if defined(__GNUC__) || defined(__clang__)
    typedef double skb_v4d __attribute__((vector_size(32)));
    typedef long long skb_v4i __attribute__((vector_size(32)));
    #endif

    static SKB_ALWAYS_INLINE int skb_column_reached(const double *k, const long long *c1,
                                                    const long long *c2, const double *near,
                                                    const double *far, long long a,
                                                    long long b, double t, double u,
                                                    ptrdiff_t q)
    {
        int top = c1[q] == a || c1[q] == b;
        return (top ? t : u) * fabs(k[q])
               - (top || c2[q] == a || c2[q] == b ? near[q] : far[q]) >= 0.0;
    }

    SKB_VERSIONS(int, skb_reached_columns,
                 (const double *k, const long long *c1, const long long *c2,
                  const double *near, const double *far, long long a, long long b, double t,
                  double u, ptrdiff_t n, uint32_t *flags),
                 (k, c1, c2, near, far, a, b, t, u, n, flags))
    {
        ptrdiff_t start, i;
        uint64_t bits;
    #if defined(__GNUC__) || defined(__clang__)
        const skb_v4i va = {a, a, a, a}, vb = {b, b, b, b}, weight = {1, 2, 4, 8};
        const skb_v4d vt = {t, t, t, t}, vu = {u, u, u, u};
        const skb_v4i abs_mask = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL,
                                  0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
        skb_v4d kk, dn, df, coef, gap;
        skb_v4i x1, x2, top, side, lanes;
    #endif
        for (start = 0; start < n; start += 32) {
            i = 0;
            bits = 0;
    #if defined(__GNUC__) || defined(__clang__)
            lanes = (skb_v4i){0, 0, 0, 0};
            for (; i < 32 && start + i + 4 <= n; i += 4) {
                memcpy(&kk, k + start + i, sizeof kk);
                memcpy(&x1, c1 + start + i, sizeof x1);
                memcpy(&x2, c2 + start + i, sizeof x2);
                memcpy(&dn, near + start + i, sizeof dn);
                memcpy(&df, far + start + i, sizeof df);
                top = (x1 == va) | (x1 == vb);
                side = top | (x2 == va) | (x2 == vb);
                coef = (skb_v4d)((top & (skb_v4i)vt) | (~top & (skb_v4i)vu));
                gap = (skb_v4d)((side & (skb_v4i)dn) | (~side & (skb_v4i)df));
                /* (lane j of columns start + i ..: bit i + j) */
                lanes |= (coef * (skb_v4d)((skb_v4i)kk & abs_mask) - gap >= 0.0) & (weight << i);
            }
            bits = (uint64_t)(lanes[0] | lanes[1] | lanes[2] | lanes[3]);
    #endif
            for (; i < 32 && start + i < n; i++)
                bits |= (uint64_t)skb_column_reached(k, c1, c2, near, far, a, b, t, u,
                                                     start + i) << i;
            flags[start / 32] = (uint32_t)bits;
        }
        return 0;
    }

    /* The lowest set bit of bits (not 0). */
    static SKB_ALWAYS_INLINE int skb_lowest_bit(uint32_t bits)
    {
    #if defined(__GNUC__) || defined(__clang__)
        return __builtin_ctz(bits);
    #else
        int i = 0;
        while (!(bits & 1u)) {
            bits >>= 1;
            i++;
        }
        return i;
    #endif
    }
    """
    int skb_reached_columns(const double* k, const long long* c1, const long long* c2,
                            const double* near, const double* far, long long a, long long b,
                            double t, double u, Py_ssize_t n, uint32_t* flags) nogil
    int skb_lowest_bit(uint32_t bits) nogil


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


def _start_validation(lr, int mode, Py_ssize_t reservoir_size, str label_name, label_dtype,
                      tuple score_shape):
    """An empty validation set for learner ``lr`` (``mode``, the reservoir's
    size): its first room (the room grows with the entries; a reservoir's
    up to its size), labels ``label_name`` of ``label_dtype`` and scores of
    ``score_shape`` per entry."""
    lr.mode, lr.reservoir_size, lr.n_correct, lr.n_val = mode, reservoir_size, 0, 0
    if mode == VALIDATE_RESERVOIR:
        lr.vcap = min(reservoir_size, 8)
    else:
        lr.vcap = 8 if mode == VALIDATE_FULL else 0
    lr.vslot = np.zeros(lr.vcap, dtype=np.intp)
    setattr(lr, label_name, np.zeros(lr.vcap, dtype=label_dtype))
    lr.vf = np.zeros((lr.vcap,) + score_shape)
    lr.kv = np.zeros((0, lr.vcap))
    lr.val_of_example = np.full(0, -1, dtype=np.intp)


def _validation_room(Py_ssize_t vcap, int mode, Py_ssize_t reservoir_size):
    """The next room for validation entries: twice ``vcap`` (at least 8; a
    reservoir: at most ``reservoir_size``)."""
    cdef Py_ssize_t n = max(2 * vcap, 8)
    if mode == VALIDATE_RESERVOIR:
        n = min(n, reservoir_size)
    return n


def _validation_problem(int mode, Py_ssize_t n_val, Py_ssize_t vcap, Py_ssize_t reservoir_size,
                        long long n_correct, vslot, Py_ssize_t pool_size):
    """What is inconsistent in a validation set's counts and slots, or None."""
    if not (0 <= n_val <= vcap and mode in (VALIDATE_SUPPORT, VALIDATE_FULL, VALIDATE_RESERVOIR)
            and (mode != VALIDATE_RESERVOIR or (
                n_val <= vcap <= reservoir_size and n_correct >= 0
                and n_val == min(n_correct, reservoir_size)))):
        return (f"mode={mode}, n_val={n_val}, reservoir_size={reservoir_size}, "
                f"n_correct={n_correct} do not fit {vcap} validation entries")
    if n_val and pool_size >= 0 and not (0 <= np.min(vslot[:n_val])
                                         and np.max(vslot[:n_val]) < pool_size):
        return f"a validation vector's slot is outside the {pool_size} stored vectors"
    return None


cdef Py_ssize_t reservoir_entry(OnlineLearner lr, long long* n_correct, Py_ssize_t size,
                               Py_ssize_t* n_val) except -2 nogil:
    """Algorithm R for the next round without a mistake (the ``i``-th,
    ``i = ++n_correct``): the entry it fills, ``i - 1`` (appended: one more
    in ``n_val``) while ``i <= size``, else ``j = rng.randint(i)`` if ``j <
    size``, else -1."""
    cdef long long j
    n_correct[0] += 1
    if n_correct[0] <= size:
        n_val[0] += 1
        return n_correct[0] - 1
    j = lr.random_below(n_correct[0])
    return j if j < size else -1


cdef Py_ssize_t seen_entry(OnlineLearner lr, Py_ssize_t[::1] table, Py_ssize_t position,
                          Py_ssize_t* n_val) except -2 nogil:
    """Full mode: the entry the example at ``position`` of the call's
    ``table`` (example -> entry, -1: none) takes, appended (one more in
    ``n_val``), or -1 when it is in V already (seen in an earlier pass)."""
    cdef Py_ssize_t v = table[position]
    if not -1 <= v < n_val[0]:
        with gil:
            raise ValueError(f"{type(lr).__name__} has an inconsistent state: "
                             f"val_of_example holds entry {v}")
    if v >= 0:
        return -1
    table[position] = n_val[0]
    n_val[0] += 1
    return table[position]


cdef void mark_entries(const Py_ssize_t[::1] vslot, Py_ssize_t n_val,
                       unsigned char* mark) noexcept nogil:
    """The validation vectors' slots are referenced (``mark_extra_slots``)."""
    cdef Py_ssize_t v
    for v in range(n_val):
        mark[vslot[v]] = 1


cdef void remap_entries(Py_ssize_t[::1] vslot, Py_ssize_t n_val,
                        const Py_ssize_t* new_slot) noexcept nogil:
    """The validation vectors' slots after a compaction (``remap_extra_slots``)."""
    cdef Py_ssize_t v
    for v in range(n_val):
        vslot[v] = new_slot[vslot[v]]


def _grow_validation(lr, str label_name):
    """Room for more validation entries in learner ``lr``
    (:func:`_validation_room`): its ``vslot``, labels (``label_name``),
    scores ``vf`` (one or ``k`` per entry) and ``kv``."""
    cdef Py_ssize_t n = _validation_room(lr.vcap, lr.mode, lr.reservoir_size)
    for name in ("vslot", label_name, "vf"):
        values = np.asarray(getattr(lr, name))
        setattr(lr, name, _resized(values, n) if values.ndim == 1 else _resized_rows(values, n))
    lr.kv = _grown_kernel_values(lr.kv, lr.capacity, n)
    lr.vcap = n


cdef bint make_room(OnlineLearner lr, Py_ssize_t v, Py_ssize_t vcap,
                    str label_name) except True nogil:
    """Room for validation entry ``v`` (``vcap`` of room): grown when ``v =
    vcap`` (:func:`_grow_validation`).  False, or raises."""
    if v == vcap:
        with gil:
            _grow_validation(lr, label_name)
    return False


def _grown_kernel_values(kv, Py_ssize_t cells, Py_ssize_t entries):
    """A ``cells x entries`` copy of the support-to-validation kernel
    values ``kv`` (what fits kept, zeros elsewhere)."""
    kv = np.asarray(kv)
    out = np.zeros((cells, entries))
    out[:min(cells, kv.shape[0]), :min(entries, kv.shape[1])] = \
        kv[:cells, :entries]
    return out


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
        _start_validation(self, mode, reservoir_size, "vy", np.float64, ())
        ValidatedRemovalLearner.__init__(self, budget=budget, rng=rng)

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        ValidatedRemovalLearner.grow(self, new_capacity)
        self.kv = _grown_kernel_values(self.kv, new_capacity, self.vcap)
        return 0

    cdef int set_validation(self, Py_ssize_t v, double y, double score) except -1 nogil:
        """Validation entry ``v`` (-1: none) := the current example, ``f(x_t)
        = score``; ``v = vcap`` first makes room (:func:`_validation_room`)."""
        cdef Py_ssize_t i, c
        if v < 0 or make_room(self, v, self.vcap, "vy"):
            return 0
        self.ensure_row()
        self.vslot[v] = self.current_slot()
        self.vy[v] = y
        self.vf[v] = score
        for i in range(self.n_sv):
            c = self.order[i]
            self.kv[c, v] = self.k_row[c]
        return 0

    cdef Py_ssize_t seen_position(self, Py_ssize_t example_id) except -1 nogil:
        """Full mode: the example's place in ``val_of_example`` (grown to hold it)."""
        cdef Py_ssize_t position = self.example_position(example_id)
        if position >= self.val_of_example.shape[0]:
            with gil:
                self.val_of_example = _grown_index(self.val_of_example, position)
        return position

    cdef int add_seen_example(self, double y, double score, Py_ssize_t example_id) except -1 nogil:
        """Full mode: the current example joins V unless already in it (an
        example of this call seen in an earlier pass)."""
        return self.set_validation(seen_entry(self, self.val_of_example,
                                              self.seen_position(example_id), &self.n_val),
                                   y, score)

    def forget_examples(self):
        self.val_of_example = np.full(0, -1, dtype=np.intp)

    def check_policy_state(self, Py_ssize_t pool_size):
        problem = ValidatedRemovalLearner.check_policy_state(self, pool_size)
        if problem is None:
            problem = size_problem({"vslot": self.vslot, "vy": self.vy, "vf": self.vf,
                                    "kv columns": self.kv.T}, self.vcap, "entries")
        if problem is None:
            problem = size_problem({"kv": self.kv}, self.capacity)
        if problem is None:
            problem = _validation_problem(self.mode, self.n_val, self.vcap, self.reservoir_size,
                                          self.n_correct, self.vslot, pool_size)
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
        if self.mode == VALIDATE_FULL:
            self.add_seen_example(y, score, example_id)
        elif self.mode == VALIDATE_RESERVOIR:
            self.set_validation(reservoir_entry(self, &self.n_correct, self.reservoir_size,
                                                &self.n_val), y, score)
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
        mark_entries(self.vslot, self.n_val, mark)

    cdef void remap_extra_slots(self, const Py_ssize_t* new_slot) noexcept nogil:
        remap_entries(self.vslot, self.n_val, new_slot)

    def validation_slots(self):
        """Pool slots of the validation vectors (modes 1 and 2)."""
        return np.asarray(self.vslot)[:self.n_val].copy()

    def validation_scores(self):
        """Tracked ``f(x_v)`` on the validation vectors (modes 1 and 2)."""
        return np.asarray(self.vf)[:self.n_val].copy()


# ---------------------------------------------------------------------------
# Tightest's nearest support vector (UpdateSummary), binary and shared
# ---------------------------------------------------------------------------
cdef Py_ssize_t nearest_support_vector(OnlineLearner lr, Py_ssize_t cell, double[:, ::1] dist,
                                       bint use_distances) except -2 nogil:
    """The support vector nearest in input space to the one in ``cell``
    (itself excluded) or, for ``cell = -1``, to the current example: the
    largest kernel value (Gram matrix, kernel row) or, with
    ``use_distances``, the smallest squared distance (the support-set
    matrix ``dist``, the engine's distances); ties to the oldest, -1 if
    there is none.  A NaN raises."""
    cdef Py_ssize_t i, c, n = -1
    cdef double best = 0.0, value
    if cell < 0:
        lr.ensure_row()
    for i in range(lr.n_sv):
        c = lr.order[i]
        if c == cell:
            continue
        if cell >= 0:
            value = -dist[cell, c] if use_distances else lr.gram[cell, c]
        else:
            value = -lr.sqdist_to_slot(lr.slot[c]) if use_distances else lr.k_row[c]
        if is_nan(value):
            raise_not_finite(b"A kernel value or distance to a support vector")
        if n < 0 or value > best:
            best = value
            n = c
    return n


cdef void fill_distances(OnlineLearner lr, Py_ssize_t cell, double[:, ::1] dist) noexcept nogil:
    """Row and column ``cell`` of the support-set distance matrix: the
    squared distances of the current example (just stored in ``cell``)."""
    cdef Py_ssize_t i, c
    for i in range(lr.n_sv):
        c = lr.order[i]
        dist[cell, c] = lr.sqdist_to_slot(lr.slot[c])
        dist[c, cell] = dist[cell, c]
    dist[cell, cell] = 0.0


def _grown_square(arr, Py_ssize_t old, Py_ssize_t n):
    """An ``n x n`` copy of the square ``arr`` (its first ``old`` rows and
    columns kept, zeros elsewhere)."""
    out = np.zeros((n, n))
    out[:old, :old] = np.asarray(arr)[:old, :old]
    return out


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
            self.dist = _grown_square(self.dist, old, new_capacity)
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
        self.set_counts(cell, 1.0 if y > 0 else 0.0, 1.0 if y < 0 else 0.0)
        if self.use_distances:
            fill_distances(self, cell, self.dist)
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
        cdef Py_ssize_t n = nearest_support_vector(self, cell, self.dist, self.use_distances)
        self.update_summary(n, self.cpos[cell], self.cneg[cell], self.gram[cell, n])
        return 0

    cdef int on_correct(self, double y, double score, Py_ssize_t example_id) except -1 nogil:
        """UpdateSummary(x_t, [y = +1], [y = -1])."""
        cdef Py_ssize_t n = nearest_support_vector(self, -1, self.dist, self.use_distances)
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


# ---------------------------------------------------------------------------
# The shared multi-class mode (doc/algorithms.md#tighter-shared)
# ---------------------------------------------------------------------------
cdef inline void rank_three(const double* s, Py_ssize_t k, Py_ssize_t* top,
                            double* tops) noexcept nogil:
    """The classes of the three largest of ``s[0:k]`` into ``top`` (largest
    first, ties: the lowest index first; -1 past ``k``), their scores into
    ``tops`` (kept in locals while ranking: the stores may alias ``s``)."""
    cdef Py_ssize_t c, c0 = -1, c1 = -1, c2 = -1
    cdef double v, v0 = -INFINITY, v1 = -INFINITY, v2 = -INFINITY
    for c in range(k):
        v = s[c]
        if c2 >= 0 and v <= v2:
            continue        # (below the third: none of the tests below holds)
        if c0 < 0 or v > v0:
            c2, v2 = c1, v1
            c1, v1 = c0, v0
            c0, v0 = c, v
        elif c1 < 0 or v > v1:
            c2, v2 = c1, v1
            c1, v1 = c, v
        elif c2 < 0 or v > v2:
            c2, v2 = c, v
    top[0], top[1], top[2] = c0, c1, c2
    tops[0], tops[1], tops[2] = v0, v1, v2


cdef inline Py_ssize_t prediction_without(const Py_ssize_t* top, const double* tops,
                                          Py_ssize_t a, double ga, Py_ssize_t b,
                                          double gb) noexcept nogil:
    """``argmax_c g_c`` (ties: the lowest index) of scores ranked by
    :func:`rank_three` once classes ``a`` and ``b`` (``a != b``) have moved
    to ``ga`` and ``gb``: every other class keeps its score, so the best of
    them is the first ranked class that is neither."""
    cdef Py_ssize_t best = a, i, c
    cdef double s = ga
    if gb > s or (gb == s and b < a):
        best = b
        s = gb
    for i in range(3):
        c = top[i]
        if c != a and c != b:
            if c >= 0 and (tops[i] > s or (tops[i] == s and c < best)):
                best = c
            return best
    return best


cdef inline double unchanged_below(double top, double second) noexcept nogil:
    """A change of less than this in the gap ``top - second`` between two
    of a point's class scores (``top >= second``) leaves their order as it
    is: the gap, less a guard (a relative 1e-9) far above the rounding of
    the scores; 0 and below for a tie (never unchanged).  With no
    ``second`` (fewer classes: ``-inf``) NaN: never compared true."""
    return (top - second) - 1e-9 * (1.0 + fabs(top) + fabs(second))


cdef Py_ssize_t least_loss(const double* losses, Py_ssize_t n) noexcept nogil:
    """The position of the least of ``losses[0:n]``, the oldest of those
    within a relative 1e-9 of it (exact for error counts); a NaN ranks
    after every number (every loss NaN: the oldest)."""
    cdef Py_ssize_t i
    cdef double least = INFINITY
    for i in range(n):
        if losses[i] < least:
            least = losses[i]
    for i in range(n):
        if tied_or_below(losses[i], least, 0.0):
            return i
    return 0


cdef class SharedValidatedRemovalLearner(SharedSupportLearner):
    """The shared multi-class skeleton of Tighter and Tightest
    (doc/algorithms.md#tighter-shared): one support set for ``k`` classes.

    Round with class ``y``: the class scores, the runner-up ``r`` and the
    margin ``m = s_y - s_r`` (:meth:`top_two_margin`); when ``m <= 0``
    (the binary rule's ``y f(x) <= 0``) ``x_t`` is added with the row
    ``e_y - e_r`` and, with ``B + 1`` vectors, the candidate whose removal
    gives the least validation loss goes (ties: the oldest).  Each row
    keeps its two entries (``label`` and ``rival``) for good, so the
    model without candidate ``j`` differs from the model in two classes
    only: a validation point's prediction without ``j`` is O(1) from the
    three best of its current scores (:func:`rank_three`, once per
    decision), and a decision costs O(|V| k + B |V|), as the binary
    rule's O(B |V|) for ``|V| >= k``.

    ``process_example`` returns :meth:`round_value` of the margin.
    Subclasses provide ``candidate_losses`` and the bookkeeping hooks.
    """
    cdef public Py_ssize_t budget
    cdef public Py_ssize_t[::1] rival          # r of each cell's row e_y - e_r
    cdef public double[::1] new_row            # scratch: the row of a new vector
    # scratch of a decision: per validation point its three best classes and
    # scores; per candidate (by position) its loss
    cdef Py_ssize_t[:, ::1] ranked
    cdef double[:, ::1] ranked_scores
    cdef double[::1] current                  # per point: its current value
    # per kernel column (see point_losses): its point's guarded gaps and best
    # two classes
    cdef double[::1] near
    cdef double[::1] far
    cdef long long[::1] first_class
    cdef long long[::1] second_class
    cdef Py_ssize_t[::1] column_point         # per kernel column: its point (-1: none)
    cdef uint32_t[::1] reached                # per block of 32 kernel columns: bits
    cdef Py_ssize_t[::1] moved                # per candidate: the points it may move
    cdef double[::1] losses

    _per_class_names = SharedSupportLearner._per_class_names + ("new_row",)
    _state_names = SharedSupportLearner._state_names + ("budget", "rival", "new_row")

    def __init__(self, Py_ssize_t n_outputs=3, Py_ssize_t budget=1, rng=None,
                 bint track_scores=True):
        self.rival = np.zeros(0, dtype=np.intp)
        self.ranked = np.zeros((0, 3), dtype=np.intp)
        self.ranked_scores = np.zeros((0, 3))
        self.near = np.zeros(0)
        self.far = np.zeros(0)
        self.current = np.zeros(0)
        self.first_class = np.zeros(0, dtype=np.int64)
        self.second_class = np.zeros(0, dtype=np.int64)
        self.column_point = np.zeros(0, dtype=np.intp)
        self.reached = np.zeros(0, dtype=np.uint32)
        self.moved = np.zeros(0, dtype=np.intp)
        self.losses = np.zeros(0)
        self.budget = budget        # (before the engine's __init__ reads capacity_limit)
        SharedSupportLearner.__init__(self, n_outputs, track_scores=track_scores, rng=rng)
        self.new_row = np.zeros(n_outputs)

    def add_class(self, Py_ssize_t position):
        SharedSupportLearner.add_class(self, position)
        rival = np.asarray(self.rival)
        rival[rival >= position] += 1

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        SharedSupportLearner.grow(self, new_capacity)
        self.rival = _resized(self.rival, new_capacity)
        return 0

    cdef Py_ssize_t capacity_limit(self) noexcept nogil:
        """B support vectors and the example being added."""
        return self.budget + 1

    def check_policy_state(self, Py_ssize_t pool_size):
        problem = SharedSupportLearner.check_policy_state(self, pool_size) or size_problem(
            {"rival": self.rival}, self.capacity) or size_problem(
            {"new_row": self.new_row}, self.n_outputs, "entries")
        if problem is None and self.budget < 1:
            problem = f"budget={self.budget} is below 1"
        if problem is None and self.scale != 1.0:
            problem = f"scale={self.scale}: the rule never rescales its rows"
        if problem is None and self.n_sv:
            cells = np.asarray(self.order)[:self.n_sv]
            labels = np.asarray(self.label)[cells]
            rivals = np.asarray(self.rival)[cells]
            rows = np.asarray(self.tau)[cells].copy()
            if not (np.all((0 <= rivals) & (rivals < self.n_outputs)) and np.all(rivals != labels)):
                problem = "a support vector's rival class is out of range or its own class"
            else:
                rows[np.arange(len(cells)), labels] = 0.0
                rows[np.arange(len(cells)), rivals] = 0.0
                if np.any(rows != 0.0):
                    problem = "a coefficient row has entries outside its class and rival"
        return problem

    cdef void compute_scores(self) noexcept nogil:
        """As :meth:`SharedSupportLearner.compute_scores` (the same sums),
        over the two entries of each row: O(|S| + k)."""
        cdef Py_ssize_t i, c, r, k = self.n_outputs
        cdef double kv
        cdef double* out = &self.scores[0]
        for r in range(k):
            out[r] = 0.0
        for i in range(self.n_sv):
            c = self.order[i]
            kv = self.k_row[c]
            out[self.label[c]] += self.tau[c, self.label[c]] * kv
            out[self.rival[c]] += self.tau[c, self.rival[c]] * kv
        for r in range(k):
            out[r] *= self.scale

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef Py_ssize_t label = self.class_index(y), runner, cell, pos
        cdef double margin
        margin = self.round_margin(label, &runner)
        if margin <= 0.0:           # (one class: no rival, m = DBL_MAX)
            self.before_insert(label, example_id)
            self.pair_row(&self.new_row[0], label, runner, 1.0)
            cell = self.append_pattern(label, &self.new_row[0])
            self.rival[cell] = runner
            self.n_updates += 1
            self.after_insert(cell, label)
            if self.n_sv > self.budget:
                if self.losses.shape[0] < self.n_sv:
                    with gil:
                        self.losses = np.zeros(self.capacity)
                self.candidate_losses(&self.losses[0])
                pos = least_loss(&self.losses[0], self.n_sv)
                self.before_remove(self.order[pos])
                self.remove_at(pos)
        else:
            self.on_correct(label, example_id)
        return self.round_value(margin, label, runner)

    cdef int point_losses(self, double* losses, Py_ssize_t n, const Py_ssize_t* rows,
                          const double* scores, const double* kernel,
                          Py_ssize_t kernel_stride) except -1 nogil:
        """``losses[j]`` for the candidate at every position ``j``: minus the
        sum over the ``n`` validation points of :meth:`point_value` of the
        point's prediction under the model without the candidate.  Point
        ``p``'s index is ``q = rows[p]`` (``p`` if ``rows`` is NULL): its
        class scores are ``scores[q k : q k + k]`` and its kernel value with
        the vector in cell ``c`` is ``kernel[c kernel_stride + q]`` (column
        ``q`` of the candidate's kernel row).

        The model without candidate ``j`` moves two class scores, ``a``
        and ``b``, by ``|tau_{j,a} K|`` and ``|tau_{j,b} K|``: a point keeps
        its prediction (its best class ``c1``, then ``c2``) unless ``c1`` is
        ``a`` or ``b`` and the sum of the two reaches the gap ``s1 - s2``,
        or one of them is ``c2`` and the larger reaches ``s1 - s2``, or the
        larger reaches ``s1 - s3`` (each gap less a guard of rounding,
        :func:`unchanged_below`).  Only the points it may move are
        predicted anew (:func:`prediction_without`, O(1) from their three
        best scores).

        The tests run over the candidate's kernel row in one vectorized
        pass (:c:func:`skb_reached_columns`, on per-column copies of each
        point's ``c1``, ``c2`` and guarded gaps made once per decision: the
        same values as one test per point), which returns the columns
        that pass as bits; only those are looked at, in the order of
        ``p`` (the sum of the changes the same floating-point sum as over
        every point).  A column that is no point (a free support cell)
        has no class and infinite gaps: it never passes."""
        cdef Py_ssize_t j, cj, p, q, a, b, c1, c2, pred, k = self.n_outputs
        cdef Py_ssize_t m = n, n_moved, i, block
        cdef uint32_t bits
        cdef double ta, tb, t, u, kk, reach, base = 0.0, total
        cdef bint top_moves
        cdef const double* row
        cdef const double* krow
        if rows != NULL:            # (support cells: the columns up to the last one)
            m = 0
            for p in range(n):
                m = max(m, rows[p] + 1)
        if self.ranked.shape[0] < max(n, 1) or self.near.shape[0] < max(m, 1):
            with gil:           # (one row at least: the pointers below)
                size = max(n, m, self.capacity, 1)
                self.ranked = np.zeros((size, 3), dtype=np.intp)
                self.ranked_scores = np.zeros((size, 3))
                self.near = np.zeros(size)
                self.far = np.zeros(size)
                self.current = np.zeros(size)
                self.first_class = np.zeros(size, dtype=np.int64)
                self.second_class = np.zeros(size, dtype=np.int64)
                self.column_point = np.zeros(size, dtype=np.intp)
                self.reached = np.zeros(size // 32 + 1, dtype=np.uint32)
                self.moved = np.zeros(size, dtype=np.intp)
        cdef Py_ssize_t* ranked = &self.ranked[0, 0]
        cdef double* ranked_scores = &self.ranked_scores[0, 0]
        cdef double* near = &self.near[0]
        cdef double* far = &self.far[0]
        cdef double* current = &self.current[0]
        cdef long long* first_class = &self.first_class[0]
        cdef long long* second_class = &self.second_class[0]
        cdef Py_ssize_t* column_point = &self.column_point[0]
        cdef uint32_t* reached = &self.reached[0]
        cdef Py_ssize_t* moved = &self.moved[0]
        if rows != NULL:            # (a column that is no point: never reached)
            for q in range(m):
                first_class[q] = second_class[q] = -1
                near[q] = far[q] = INFINITY
                column_point[q] = -1
        for p in range(n):
            q = p if rows == NULL else rows[p]
            rank_three(scores + q * k, k, ranked + 3 * p, ranked_scores + 3 * p)
            # (per column q: the point's gaps and classes)
            near[q] = unchanged_below(ranked_scores[3 * p], ranked_scores[3 * p + 1])
            far[q] = unchanged_below(ranked_scores[3 * p], ranked_scores[3 * p + 2])
            first_class[q] = ranked[3 * p]
            second_class[q] = ranked[3 * p + 1]
            column_point[q] = p
            current[p] = self.point_value(q, ranked[3 * p])
            base += current[p]
        for j in range(self.n_sv):
            cj = self.order[j]
            a = self.label[cj]
            b = self.rival[cj]
            ta = self.tau[cj, a]
            tb = self.tau[cj, b]
            t = fabs(ta) + fabs(tb)
            u = max(fabs(ta), fabs(tb))
            n_moved = 0
            if m > 0:
                krow = kernel + cj * kernel_stride
                skb_reached_columns(krow, first_class, second_class, near, far, a, b, t, u, m,
                                    reached)
                for block in range((m + 31) // 32):
                    bits = reached[block]
                    while bits:
                        q = 32 * block + skb_lowest_bit(bits)
                        bits &= bits - 1
                        p = column_point[q]
                        if p < 0:
                            continue
                        i = n_moved         # (in the order of p)
                        while i > 0 and moved[i - 1] > p:
                            moved[i] = moved[i - 1]
                            i -= 1
                        moved[i] = p
                        n_moved += 1
            total = base
            for i in range(n_moved):
                p = moved[i]
                q = p if rows == NULL else rows[p]
                kk = kernel[cj * kernel_stride + q]
                c1 = ranked[3 * p]
                c2 = ranked[3 * p + 1]
                top_moves = (c1 == a) | (c1 == b)
                reach = (t if top_moves else u) * fabs(kk) - (
                    near[q] if top_moves | (c2 == a) | (c2 == b) else far[q])
                if reach >= 0.0:
                    row = scores + q * k
                    pred = prediction_without(ranked + 3 * p, ranked_scores + 3 * p,
                                              a, row[a] - ta * kk, b, row[b] - tb * kk)
                    if pred != ranked[3 * p]:
                        total += self.point_value(q, pred) - current[p]
            losses[j] = -total
        return 0

    cdef int support_losses(self, double* losses) except -1 nogil:
        """:meth:`point_losses` over the support set (its tracked scores and
        Gram matrix)."""
        return self.point_losses(losses, self.n_sv, &self.order[0], &self.support_scores[0, 0],
                                 &self.gram[0, 0], self.gram.shape[1])

    def removal_losses(self):
        """(n_sv,): the loss of each support vector as the candidate to
        remove, oldest first, on the current state (what the next removal
        compares; Tightest's weights from the current counts)."""
        out = np.zeros(max(self.n_sv, 1))
        cdef double[::1] view = out
        self.candidate_losses(&view[0])
        return out[:self.n_sv]

    # ---- hooks (defaults: nothing) --------------------------------------
    cdef int candidate_losses(self, double* losses) except -1 nogil:
        with gil:
            raise NotImplementedError

    cdef double point_value(self, Py_ssize_t q, Py_ssize_t prediction) noexcept nogil:
        """What validation point ``q`` is worth predicted as ``prediction``."""
        return 0.0

    cdef int before_insert(self, Py_ssize_t y, Py_ssize_t example_id) except -1 nogil:
        return 0

    cdef int after_insert(self, Py_ssize_t cell, Py_ssize_t y) except -1 nogil:
        return 0

    cdef int before_remove(self, Py_ssize_t cell) except -1 nogil:
        return 0

    cdef int on_correct(self, Py_ssize_t y, Py_ssize_t example_id) except -1 nogil:
        return 0


cdef class SharedTighterLearner(SharedValidatedRemovalLearner):
    """Tighter on ``k`` classes, one support set
    (doc/algorithms.md#tighter-shared): the loss of a candidate is the
    number of validation points the model without it misclassifies
    (``argmax_c f_c(x_v) != y_v``, ties to the lowest index).

    ``mode`` and the validation set as :class:`TighterLearner`'s, with a
    class index per entry (``vlabel``) and the class scores ``vf[v, c] =
    f_c(x_v)``, kept incrementally (two entries per point per change).
    """
    # the validation entries (room for vcap, n_val used): pool slot, class
    # index, class scores f_c(x_v), kernel values to every cell
    cdef public Py_ssize_t[::1] vslot
    cdef public Py_ssize_t[::1] vlabel
    cdef public double[:, ::1] vf             # vcap x k
    cdef public double[:, ::1] kv             # cells x vcap
    cdef public Py_ssize_t n_val, vcap
    cdef public Py_ssize_t[::1] val_of_example  # full mode: example id -> v (or -1)
    cdef public int mode
    cdef public Py_ssize_t reservoir_size
    cdef public long long n_correct          # i of Algorithm R

    _per_class_names = SharedValidatedRemovalLearner._per_class_names + ("vf",)
    _state_names = SharedValidatedRemovalLearner._state_names + (
        "mode", "reservoir_size", "n_correct", "n_val", "vcap", "vslot", "vlabel", "vf",
        "kv", "val_of_example")

    def __init__(self, Py_ssize_t n_outputs=3, Py_ssize_t budget=1, int mode=VALIDATE_SUPPORT,
                 Py_ssize_t reservoir_size=0, rng=None):
        _start_validation(self, mode, reservoir_size, "vlabel", np.intp, (n_outputs,))
        # the support set validates itself through its tracked scores
        SharedValidatedRemovalLearner.__init__(self, n_outputs, budget, rng,
                                               track_scores=mode == VALIDATE_SUPPORT)

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        SharedValidatedRemovalLearner.grow(self, new_capacity)
        self.kv = _grown_kernel_values(self.kv, new_capacity, self.vcap)
        return 0

    def add_class(self, Py_ssize_t position):
        SharedValidatedRemovalLearner.add_class(self, position)
        vlabel = np.asarray(self.vlabel)
        vlabel[vlabel >= position] += 1

    cdef int set_validation(self, Py_ssize_t v, Py_ssize_t y) except -1 nogil:
        """Validation entry ``v`` (-1: none) := the current example, its
        class scores ``scores`` (taken before the round changes anything);
        ``v = vcap`` first makes room (:func:`_validation_room`)."""
        cdef Py_ssize_t i, c
        if v < 0 or make_room(self, v, self.vcap, "vlabel"):
            return 0
        self.vslot[v] = self.current_slot()
        self.vlabel[v] = y
        for c in range(self.n_outputs):
            self.vf[v, c] = self.scores[c]
        for i in range(self.n_sv):
            c = self.order[i]
            self.kv[c, v] = self.k_row[c]
        return 0

    cdef void mark_extra_slots(self, unsigned char* mark) noexcept nogil:
        mark_entries(self.vslot, self.n_val, mark)

    cdef void remap_extra_slots(self, const Py_ssize_t* new_slot) noexcept nogil:
        remap_entries(self.vslot, self.n_val, new_slot)

    cdef Py_ssize_t seen_entry_of(self, Py_ssize_t example_id) except -2 nogil:
        """Full mode: the entry the current example takes (-1: in V already)."""
        cdef Py_ssize_t position = self.example_position(example_id)
        if position >= self.val_of_example.shape[0]:
            with gil:
                self.val_of_example = _grown_index(self.val_of_example, position)
        return seen_entry(self, self.val_of_example, position, &self.n_val)

    def forget_examples(self):
        self.val_of_example = np.full(0, -1, dtype=np.intp)

    def check_policy_state(self, Py_ssize_t pool_size):
        problem = SharedValidatedRemovalLearner.check_policy_state(self, pool_size)
        if problem is None:
            problem = (size_problem({"vslot": self.vslot, "vlabel": self.vlabel, "vf": self.vf,
                                     "kv columns": self.kv.T}, self.vcap, "entries")
                       or size_problem({"kv": self.kv}, self.capacity)
                       or size_problem({"vf columns": self.vf.T}, self.n_outputs, "entries"))
        if problem is None and self.track_scores != (self.mode == VALIDATE_SUPPORT):
            problem = f"track_scores={self.track_scores} does not fit mode={self.mode}"
        if problem is None:
            problem = _validation_problem(self.mode, self.n_val, self.vcap, self.reservoir_size,
                                          self.n_correct, self.vslot, pool_size)
        if problem is None and self.n_val and not (
                0 <= np.min(self.vlabel[:self.n_val])
                and np.max(self.vlabel[:self.n_val]) < self.n_outputs):
            problem = f"a validation label is not a class index below {self.n_outputs}"
        return problem

    cdef int before_insert(self, Py_ssize_t y, Py_ssize_t example_id) except -1 nogil:
        if self.mode == VALIDATE_FULL:
            self.set_validation(self.seen_entry_of(example_id), y)
        return 0

    cdef int after_insert(self, Py_ssize_t cell, Py_ssize_t y) except -1 nogil:
        """The new row's two entries reach every validation point's scores."""
        cdef Py_ssize_t v, b = self.rival[cell]
        cdef double k, ta = self.tau[cell, y], tb = self.tau[cell, b]
        for v in range(self.n_val):
            k = self.kernel_to_slot(self.vslot[v])
            self.kv[cell, v] = k
            self.vf[v, y] += ta * k
            self.vf[v, b] += tb * k
        return 0

    cdef int before_remove(self, Py_ssize_t cell) except -1 nogil:
        cdef Py_ssize_t v, a = self.label[cell], b = self.rival[cell]
        cdef double ta = self.tau[cell, a], tb = self.tau[cell, b]
        for v in range(self.n_val):
            self.vf[v, a] -= ta * self.kv[cell, v]
            self.vf[v, b] -= tb * self.kv[cell, v]
        return 0

    cdef int on_correct(self, Py_ssize_t y, Py_ssize_t example_id) except -1 nogil:
        if self.mode == VALIDATE_FULL:
            self.set_validation(self.seen_entry_of(example_id), y)
        elif self.mode == VALIDATE_RESERVOIR:
            self.set_validation(reservoir_entry(self, &self.n_correct, self.reservoir_size,
                                                &self.n_val), y)
        return 0

    cdef int candidate_losses(self, double* losses) except -1 nogil:
        """Errors on V of the model without each candidate, less ``|V|``
        (minus the points it predicts right; every one 0 while V is
        empty)."""
        if self.mode == VALIDATE_SUPPORT:
            return self.support_losses(losses)
        if self.n_val == 0:
            return self.point_losses(losses, 0, NULL, NULL, NULL, 0)
        return self.point_losses(losses, self.n_val, NULL, &self.vf[0, 0], &self.kv[0, 0],
                                 self.kv.shape[1])

    cdef double point_value(self, Py_ssize_t q, Py_ssize_t prediction) noexcept nogil:
        """1 for a right prediction (point ``q``: a validation entry, or a
        support vector's cell)."""
        if self.mode == VALIDATE_SUPPORT:
            return prediction == self.label[q]
        return prediction == self.vlabel[q]

    def validation_set(self):
        """The validation vectors' pool slots, class indices and tracked
        class scores ``(n_val, k)`` (modes 1 and 2)."""
        n = self.n_val
        return (np.asarray(self.vslot)[:n].copy(), np.asarray(self.vlabel)[:n].copy(),
                np.asarray(self.vf)[:n].copy())


cdef class SharedTightestLearner(SharedValidatedRemovalLearner):
    """Tightest on ``k`` classes, one support set
    (doc/algorithms.md#tighter-shared).

    Per cell: soft class counts ``counts[c, :]`` (``e_y`` for a new vector;
    UpdateSummary adds ``e_y k(x, x_n)`` for a round without an update and
    the removed vector's counts times ``k(x_r, x_n)`` to the nearest
    support vector ``n``).  The weight of class ``r`` at support vector
    ``i`` is the binary rule's with ``r`` as the positive class and the
    others as the negative one: ``w_{i,r} = 1 - I_0.5(c_{i,r} + a+, n_i -
    c_{i,r} + a-)``, ``n_i = sum_r c_{i,r}``.  The loss of a candidate is
    the expected number of errors over the support set, ``sum_i sum_r
    w_{i,r} [argmax g(x_i) != r]``: the least is the largest ``sum_i
    w_{i, argmax g(x_i)}``, which is what is computed (as the current
    model's sum plus the changes at the points whose prediction the
    removal changes).

    Weights are computed when a decision first asks for them (one
    ``betainc`` each) and cached (``wcache``/``wvalid``, not saved: they
    are functions of the counts) until the vector's counts change.
    """
    cdef public double prior_pos, prior_neg
    cdef public bint use_distances
    cdef public double[:, ::1] counts
    cdef public double[:, ::1] dist           # squared distances between cells
    cdef double[:, ::1] wcache
    cdef unsigned char[:, ::1] wvalid

    # (the weight cache is rebuilt, stale, when the classes are no longer its
    # width: size_weight_cache)
    _per_class_names = SharedValidatedRemovalLearner._per_class_names + ("counts",)
    _state_names = SharedValidatedRemovalLearner._state_names + (
        "prior_pos", "prior_neg", "use_distances", "counts", "dist")

    def __init__(self, Py_ssize_t n_outputs=3, Py_ssize_t budget=1, double prior_pos=1.0,
                 double prior_neg=1.0, bint use_distances=False, rng=None):
        self.counts = np.zeros((0, n_outputs))
        self.wcache = np.zeros((0, n_outputs))
        self.wvalid = np.zeros((0, n_outputs), dtype=np.uint8)
        self.dist = np.zeros((0, 0))
        self.use_distances = use_distances
        self.prior_pos = prior_pos
        self.prior_neg = prior_neg
        SharedValidatedRemovalLearner.__init__(self, n_outputs, budget, rng)

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        cdef Py_ssize_t old = self.capacity
        SharedValidatedRemovalLearner.grow(self, new_capacity)
        self.counts = _resized_rows(self.counts, new_capacity)
        if self.use_distances:
            self.dist = _grown_square(self.dist, old, new_capacity)
        return 0

    def check_policy_state(self, Py_ssize_t pool_size):
        problem = SharedValidatedRemovalLearner.check_policy_state(self, pool_size) or (
            size_problem({"counts": self.counts}, self.capacity)) or size_problem(
            {"counts columns": self.counts.T}, self.n_outputs, "entries")
        if problem is None and not self.track_scores:
            problem = "the validation needs track_scores"
        if problem is None and self.use_distances:
            problem = square_problem("the distance matrix", self.dist, self.capacity)
        if problem is None and not (self.prior_pos > 0 and self.prior_neg > 0):
            problem = f"the prior ({self.prior_pos}, {self.prior_neg}) is not positive"
        return problem

    cdef void forget_derived_values(self) noexcept nogil:
        """The cached weights are recomputed from the counts (a state may
        have been set)."""
        cdef Py_ssize_t c, r
        for c in range(self.wvalid.shape[0]):
            for r in range(self.wvalid.shape[1]):
                self.wvalid[c, r] = 0

    cdef int size_weight_cache(self) except -1 nogil:
        """A weight cache of one entry per cell and class (a new one: every
        entry stale)."""
        if self.wvalid.shape[0] != self.capacity or self.wvalid.shape[1] != self.n_outputs:
            with gil:
                self.wcache = np.zeros((self.capacity, self.n_outputs))
                self.wvalid = np.zeros((self.capacity, self.n_outputs), dtype=np.uint8)
        return 0

    cdef int forget_weights(self, Py_ssize_t cell) except -1 nogil:
        """The counts of ``cell`` changed: its weights are stale."""
        cdef Py_ssize_t r
        self.size_weight_cache()
        for r in range(self.n_outputs):
            self.wvalid[cell, r] = 0
        return 0

    cdef double weight(self, Py_ssize_t cell, Py_ssize_t r) noexcept nogil:
        """``w_{cell, r}`` (cached; after :meth:`size_weight_cache`); 0 where
        the counts leave the Beta function's domain."""
        cdef Py_ssize_t q
        cdef double n = 0.0, c
        if not self.wvalid[cell, r]:
            for q in range(self.n_outputs):
                n += self.counts[cell, q]
            c = self.counts[cell, r]
            self.wcache[cell, r] = 1.0 - betainc(c + self.prior_pos, n - c + self.prior_neg, 0.5)
            if is_nan(self.wcache[cell, r]):
                # counts a kernel with negative values (linear, sigmoid)
                # drove below the prior's domain: no value
                self.wcache[cell, r] = 0.0
            self.wvalid[cell, r] = 1
        return self.wcache[cell, r]

    cdef int update_summary(self, Py_ssize_t n, const double* add, double k) except -1 nogil:
        """UpdateSummary: the nearest support vector ``n`` (at kernel value
        ``k``) receives the soft counts ``add[0:k]``."""
        cdef Py_ssize_t r
        for r in range(self.n_outputs):
            self.counts[n, r] += add[r] * k
        return self.forget_weights(n)

    cdef int after_insert(self, Py_ssize_t cell, Py_ssize_t y) except -1 nogil:
        cdef Py_ssize_t r
        for r in range(self.n_outputs):
            self.counts[cell, r] = 0.0
        self.counts[cell, y] = 1.0
        self.forget_weights(cell)
        if self.use_distances:
            fill_distances(self, cell, self.dist)
        return 0

    cdef int candidate_losses(self, double* losses) except -1 nogil:
        """Minus the expected correct predictions over the support set of
        the model without each candidate."""
        self.size_weight_cache()
        return self.support_losses(losses)

    cdef double point_value(self, Py_ssize_t q, Py_ssize_t prediction) noexcept nogil:
        """``w_{q, prediction}``: the weight of the predicted class."""
        return self.weight(q, prediction)

    cdef int before_remove(self, Py_ssize_t cell) except -1 nogil:
        """UpdateSummary(x_r, counts of r) over the support set without r."""
        cdef Py_ssize_t n = nearest_support_vector(self, cell, self.dist, self.use_distances)
        return self.update_summary(n, &self.counts[cell, 0], self.gram[cell, n])

    cdef int on_correct(self, Py_ssize_t y, Py_ssize_t example_id) except -1 nogil:
        """UpdateSummary(x_t, e_y)."""
        cdef Py_ssize_t n = nearest_support_vector(self, -1, self.dist, self.use_distances)
        if n >= 0:
            self.counts[n, y] += self.k_row[n]
            self.forget_weights(n)
        return 0

    def class_counts(self):
        """(n_sv, k): the soft counts of the support vectors, oldest first."""
        return np.asarray(self.counts)[self.support_order()].copy()

    def class_weights(self):
        """(n_sv, k): ``w_{i,r}`` of the support vectors, oldest first."""
        cells = self.support_order()
        out = np.empty((len(cells), self.n_outputs))
        self.size_weight_cache()
        for i, c in enumerate(cells):
            for r in range(self.n_outputs):
                out[i, r] = self.weight(c, r)
        return out

