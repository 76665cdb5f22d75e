# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The shared online engine: one compiled stream loop for every algorithm.

The Python layer (``skbudget._base``) cuts the stream into chunks of ``c``
examples and computes, with :func:`sklearn.metrics.pairwise.pairwise_kernels`,
two kernel blocks per chunk and binary learner:

* ``K_old = k(X_chunk, pool)``: the chunk against every stored vector (the
  support set, plus any extra vectors a policy keeps, such as a validation
  reservoir), as it stands at the start of the chunk;
* ``K_new = k(X_chunk, X_chunk)``: the chunk against itself.

Every vector alive during the chunk is either a stored one (a column of
``K_old``) or an example of the chunk (a column of ``K_new``), so every kernel
value the per-example loop needs is a table lookup.  The pool is addressed by
*slots*: ``0 .. n_old-1`` are the stored vectors and ``n_old + t`` is example
``t`` of the chunk.  After the chunk, :meth:`OnlineLearner.finish_chunk` tells
Python which slots are still referenced and renumbers them, and Python
rebuilds the pool once.

A policy (one algorithm) subclasses :class:`OnlineLearner` and overrides
:meth:`process_example`, which sees the example's label, its kernel row
against the support set (``self.k_row``, per cell) and ``self.k_tt``, and
returns the training-time score ``f(x_t)`` (before any update).
"""

import numpy as np


cdef class OnlineLearner:
    """Binary online kernel learner: the support-set store and stream loop.

    Parameters
    ----------
    capacity : int
        Initial number of cells; the store grows by doubling when needed.
    rng : numpy.random.RandomState or None
        Source of the random draws a policy's rule asks for.
    track_gram : bool
        Keep the Gram matrix of the support set (one new row per insertion).
    track_margins : bool
        Keep ``f(x_i)`` for every support vector, updated in O(|S|) per
        change of the model (implies ``track_gram``).
    """

    def __init__(self, Py_ssize_t capacity=8, rng=None, bint track_gram=False,
                 bint track_margins=False):
        self.n_sv = 0
        self.capacity = 0
        self.n_free = 0
        self.scale = 1.0
        self.intercept = 0.0
        self.track_margins = track_margins
        self.track_gram = track_gram or track_margins
        self.n_updates = 0
        self.rng = rng
        self.order = np.empty(0, dtype=np.intp)
        self.free_cells = np.empty(0, dtype=np.intp)
        self.alpha = np.empty(0)
        self.slot = np.empty(0, dtype=np.intp)
        self.kself = np.empty(0)
        self.k_row = np.empty(0)
        self.margin = np.empty(0)
        self.gram = np.empty((0, 0))
        self.grow(max(capacity, 1))

    # ------------------------------------------------------------------
    # storage
    # ------------------------------------------------------------------
    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        """Enlarge every per-cell array to ``new_capacity`` cells.

        Only called when no cell is free; subclasses that keep per-cell
        arrays of their own extend this and call it first.
        """
        cdef Py_ssize_t old = self.capacity, i
        self.alpha = _resized(self.alpha, new_capacity)
        self.kself = _resized(self.kself, new_capacity)
        self.k_row = _resized(self.k_row, new_capacity)
        self.slot = _resized(self.slot, new_capacity)
        self.order = _resized(self.order, new_capacity)
        if self.track_margins:
            self.margin = _resized(self.margin, new_capacity)
        if self.track_gram:
            gram = np.zeros((new_capacity, new_capacity))
            gram[:old, :old] = np.asarray(self.gram)[:old, :old]
            self.gram = gram
        free = np.zeros(new_capacity, dtype=np.intp)  # zeros: states compare bit-exactly
        # the stack pops from its end: the lowest new cell comes out first
        free[:self.n_free] = np.asarray(self.free_cells)[:self.n_free]
        for i in range(new_capacity - old):
            free[self.n_free + i] = new_capacity - 1 - i
        self.free_cells = free
        self.n_free += new_capacity - old
        self.capacity = new_capacity
        return 0

    cdef double kernel_to_slot(self, Py_ssize_t s) noexcept nogil:
        """k(x_t, pool slot s)."""
        if s < self.n_old:
            return self.K_old[self.t, s]
        return self.K_new[self.t, s - self.n_old]

    cdef double sqdist_to_slot(self, Py_ssize_t s) noexcept nogil:
        """||x_t - pool slot s||^2 (only when distance blocks were given)."""
        if s < self.n_old:
            return self.D_old[self.t, s]
        return self.D_new[self.t, s - self.n_old]

    cdef void gather_row(self) noexcept nogil:
        """k_row[c] = k(x_t, x_c) for every support-vector cell, from the
        two kernel blocks (raw pointers: this is the hottest loop)."""
        cdef Py_ssize_t i, c, s, n = self.n_sv, n_old = self.n_old
        if n == 0:
            return
        cdef const Py_ssize_t* order = &self.order[0]
        cdef const Py_ssize_t* slot = &self.slot[0]
        cdef double* k_row = &self.k_row[0]
        cdef const double* new_row = &self.K_new[self.t, 0]
        cdef const double* old_row = new_row
        if n_old > 0:
            old_row = &self.K_old[self.t, 0]
        for i in range(n):
            c = order[i]
            s = slot[c]
            if s < n_old:
                k_row[c] = old_row[s]
            else:
                k_row[c] = new_row[s - n_old]

    cdef double dot_row(self) noexcept nogil:
        """f(x_t) without the intercept, from the gathered kernel row."""
        cdef Py_ssize_t i, n = self.n_sv
        cdef double s = 0.0
        if n == 0:
            return 0.0
        cdef const Py_ssize_t* order = &self.order[0]
        cdef const double* alpha = &self.alpha[0]
        cdef const double* k_row = &self.k_row[0]
        for i in range(n):
            s += alpha[order[i]] * k_row[order[i]]
        return s * self.scale

    cdef Py_ssize_t append_current(self, double coef) except -1:
        """Add the current example as the newest support vector; its cell."""
        cdef Py_ssize_t i, c, cell
        cdef double a = coef / self.scale, f_new = 0.0
        if self.n_free == 0:
            self.grow(2 * self.capacity)
        self.n_free -= 1
        cell = self.free_cells[self.n_free]
        if self.track_gram:
            for i in range(self.n_sv):
                c = self.order[i]
                self.gram[cell, c] = self.k_row[c]
                self.gram[c, cell] = self.k_row[c]
            self.gram[cell, cell] = self.k_tt
        if self.track_margins:
            for i in range(self.n_sv):
                c = self.order[i]
                f_new += self.alpha[c] * self.k_row[c]
                self.margin[c] += a * self.k_row[c]
            self.margin[cell] = f_new + a * self.k_tt
        self.alpha[cell] = a
        self.slot[cell] = self.n_old + self.t
        self.kself[cell] = self.k_tt
        self.k_row[cell] = self.k_tt
        self.order[self.n_sv] = cell
        self.n_sv += 1
        return cell

    cdef int remove_at(self, Py_ssize_t pos) except -1:
        """Remove the support vector at position ``pos`` (0 = oldest)."""
        cdef Py_ssize_t i, c, cell = self.order[pos]
        cdef double a = self.alpha[cell]
        if self.track_margins:
            for i in range(self.n_sv):
                c = self.order[i]
                self.margin[c] -= a * self.gram[c, cell]
        self.on_remove(cell)
        for i in range(pos, self.n_sv - 1):
            self.order[i] = self.order[i + 1]
        self.n_sv -= 1
        self.free_cells[self.n_free] = cell
        self.n_free += 1
        return 0

    cdef int add_to_coef(self, Py_ssize_t cell, double delta) except -1:
        """alpha_cell += delta (a change of the true, scaled coefficient)."""
        cdef Py_ssize_t i, c
        cdef double a = delta / self.scale
        self.alpha[cell] += a
        if self.track_margins:
            for i in range(self.n_sv):
                c = self.order[i]
                self.margin[c] += a * self.gram[c, cell]
        return 0

    cdef int rescale(self, double factor) except -1:
        """Multiply every coefficient by ``factor`` > 0 in O(1)."""
        cdef Py_ssize_t i, c
        self.scale *= factor
        if self.scale < 1e-100:  # fold the factor in before it underflows
            for i in range(self.n_sv):
                c = self.order[i]
                self.alpha[c] *= self.scale
                if self.track_margins:
                    self.margin[c] *= self.scale
            self.scale = 1.0
        return 0

    # ------------------------------------------------------------------
    # policy hooks (defaults: nothing extra)
    # ------------------------------------------------------------------
    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300:
        raise NotImplementedError("a policy must define process_example")

    cdef int on_remove(self, Py_ssize_t cell) except -1:
        return 0

    cdef int mark_extra_slots(self, unsigned char[::1] mark) except -1:
        return 0

    cdef int remap_extra_slots(self, Py_ssize_t[::1] new_slot) except -1:
        return 0

    # ------------------------------------------------------------------
    # the stream loop
    # ------------------------------------------------------------------
    def process_chunk(self, const double[:, ::1] K_old, const double[:, ::1] K_new,
                      const double[::1] y, const Py_ssize_t[::1] example_ids,
                      double[::1] scores, D_old=None, D_new=None):
        """Run the policy over one chunk; ``scores[t]`` gets f(x_t) before
        its update.  ``y`` holds the binary labels in {-1, +1}."""
        cdef Py_ssize_t t, n = K_new.shape[0]
        _check_chunk(K_old, K_new, y, example_ids, scores, D_old, D_new)
        self.check_state(K_old.shape[1])
        self.K_old = K_old
        self.K_new = K_new
        if D_old is not None:
            self.D_old = D_old
            self.D_new = D_new
        self.n_old = K_old.shape[1]
        for t in range(n):
            self.t = t
            self.k_tt = K_new[t, t]
            self.gather_row()
            scores[t] = self.process_example(y[t], example_ids[t])

    def finish_chunk(self):
        """Renumber the referenced pool slots after a chunk.

        Returns a boolean mask over the ``n_old + chunk`` slots of the chunk
        that just ran: the vectors to keep, in their new slot order.
        """
        if self.K_new is None:
            raise ValueError("finish_chunk called without a chunk (process_chunk first)")
        cdef Py_ssize_t n_total = self.n_old + self.K_new.shape[0]
        cdef Py_ssize_t i, s, j = 0
        self.check_state(n_total)
        mark_arr = np.zeros(n_total, dtype=np.uint8)
        cdef unsigned char[::1] mark = mark_arr
        new_slot_arr = np.full(n_total, -1, dtype=np.intp)
        cdef Py_ssize_t[::1] new_slot = new_slot_arr
        for i in range(self.n_sv):
            mark[self.slot[self.order[i]]] = 1
        self.mark_extra_slots(mark)
        for s in range(n_total):
            if mark[s]:
                new_slot[s] = j
                j += 1
        for i in range(self.n_sv):
            self.slot[self.order[i]] = new_slot[self.slot[self.order[i]]]
        self.remap_extra_slots(new_slot)
        self.K_old = None
        self.K_new = None
        self.D_old = None
        self.D_new = None
        return mark_arr.astype(bool)

    def check_state(self, Py_ssize_t pool_size):
        """Raise ValueError unless the support-set store is consistent: every
        per-cell array has ``capacity`` cells, ``n_sv + n_free ==
        capacity``, the support cells and the free cells are distinct cells
        in range, and every support vector's slot is in ``[0, pool_size)``.

        Called on entry to the compiled calls, which index without bounds
        checks: a corrupted state gets an exception, never a crash.  O(capacity).
        """
        cdef Py_ssize_t i, c, cap = self.capacity
        cdef unsigned char[::1] seen
        problem = None
        per_cell = {"alpha": self.alpha, "kself": self.kself, "k_row": self.k_row,
                    "slot": self.slot, "order": self.order, "free_cells": self.free_cells}
        if self.track_margins:
            per_cell["margin"] = self.margin
        for name, arr in per_cell.items():
            if arr is None or arr.shape[0] != cap:
                problem = f"{name} has {None if arr is None else arr.shape[0]} cells, not {cap}"
        if problem is None and self.track_gram and (
                self.gram is None or self.gram.shape[0] != cap or self.gram.shape[1] != cap):
            problem = f"the Gram matrix is not {cap} x {cap}"
        if problem is None and not (0 <= self.n_sv <= cap and 0 <= self.n_free <= cap
                                    and self.n_sv + self.n_free == cap):
            problem = f"n_sv={self.n_sv} and n_free={self.n_free} do not add up to capacity={cap}"
        if problem is None:
            seen_arr = np.zeros(cap, dtype=np.uint8)
            seen = seen_arr
            for i in range(self.n_sv + self.n_free):
                c = self.order[i] if i < self.n_sv else self.free_cells[i - self.n_sv]
                if c < 0 or c >= cap or seen[c]:
                    problem = f"cell {c} is out of range or listed twice"
                    break
                seen[c] = 1
                if i < self.n_sv and not 0 <= self.slot[c] < pool_size:
                    problem = f"slot {self.slot[c]} is outside the pool of {pool_size} vectors"
                    break
        if problem is not None:
            raise ValueError(f"{type(self).__name__} has an inconsistent state: {problem}")

    # ------------------------------------------------------------------
    # read-out and persistence
    # ------------------------------------------------------------------
    def support_order(self):
        """Cells of the support vectors, oldest first."""
        return np.asarray(self.order)[:self.n_sv].copy()

    def support_slots(self):
        """Pool slots of the support vectors, oldest first."""
        return np.asarray(self.slot)[self.support_order()]

    def coefficients(self):
        """Signed coefficients of the support vectors, oldest first."""
        return np.asarray(self.alpha)[self.support_order()] * self.scale

    def support_margins(self):
        """f(x_i) for every support vector (needs ``track_margins``)."""
        return np.asarray(self.margin)[self.support_order()] * self.scale + self.intercept

    def gram_matrix(self):
        """Gram matrix of the support set, oldest first (needs ``track_gram``)."""
        cells = self.support_order()
        return np.asarray(self.gram)[np.ix_(cells, cells)].copy()

    # the attributes that make up a learner's state (pickling, the
    # partial_fit snapshot); a policy with state of its own extends the tuple
    _state_names = (
        "n_sv", "capacity", "n_free", "scale", "intercept", "track_gram",
        "track_margins", "n_updates", "rng", "order", "free_cells", "alpha",
        "slot", "kself", "k_row", "margin", "gram",
    )

    def get_state(self):
        """Everything needed to rebuild the learner (arrays copied)."""
        return {name: _copied(getattr(self, name)) for name in self._state_names}

    def set_state(self, state):
        for name in self._state_names:
            setattr(self, name, _copied(state[name]))

    def __reduce__(self):
        return (type(self), (), self.get_state())

    def __setstate__(self, state):
        self.set_state(state)


def _check_chunk(K_old, K_new, y, example_ids, scores, D_old, D_new):
    """Raise ValueError unless the blocks of one chunk have matching sizes."""
    n = K_new.shape[0]
    sizes = {"K_new columns": K_new.shape[1], "K_old rows": K_old.shape[0],
             "y": y.shape[0], "example_ids": example_ids.shape[0], "scores": scores.shape[0]}
    if D_old is not None or D_new is not None:
        if D_old is None or D_new is None:
            raise ValueError("D_old and D_new must be given together")
        sizes.update({"D_new rows": D_new.shape[0], "D_new columns": D_new.shape[1],
                      "D_old rows": D_old.shape[0]})
        if D_old.shape[1] != K_old.shape[1]:
            raise ValueError(f"D_old has {D_old.shape[1]} columns, K_old {K_old.shape[1]}")
    for name, size in sizes.items():
        if size != n:
            raise ValueError(f"chunk blocks disagree: {name} = {size}, chunk length {n}")


def _copied(value):
    """A copy of an array or memoryview; any other value as it is."""
    return np.array(value) if hasattr(value, "shape") else value


def _resized(arr, Py_ssize_t n):
    """A copy of the 1-D ``arr`` with ``n`` entries (old ones kept)."""
    arr = np.asarray(arr)
    out = np.zeros(n, dtype=arr.dtype)
    m = min(n, arr.shape[0])
    out[:m] = arr[:m]
    return out


def gather_block(const double[:, ::1] M, const Py_ssize_t[::1] rows,
                 const Py_ssize_t[::1] cols):
    """``M[rows][:, cols]`` as a new C-contiguous array (a compiled
    ``np.ix_`` gather: the kernel blocks of a cached Gram matrix)."""
    for name, index, size in (("rows", rows, M.shape[0]), ("cols", cols, M.shape[1])):
        if index.shape[0] and not (0 <= np.min(index) and np.max(index) < size):
            raise ValueError(f"gather_block: {name} outside [0, {size})")
    out_arr = np.empty((rows.shape[0], cols.shape[0]))
    cdef double[:, ::1] out = out_arr
    cdef Py_ssize_t i, j, n_cols = cols.shape[0]
    cdef const double* src
    cdef double* dst
    if n_cols == 0:
        return out_arr
    with nogil:
        for i in range(rows.shape[0]):
            src = &M[rows[i], 0]
            dst = &out[i, 0]
            for j in range(n_cols):
                dst[j] = src[cols[j]]
    return out_arr
