# cython: language_level=3, cdivision=True
"""The shared online engine: the support-set store and the stream loop.

A policy (one algorithm) subclasses :class:`OnlineLearner` and overrides
:meth:`process_example`, which sees the example's label, its kernel row
against the support set (``self.k_row``, per cell) and ``self.k_tt``, and
returns the training-time score ``f(x_t)`` (before any update).  Vectors are
addressed by *slots*; the engine fills ``k_row`` in one of two ways:

* **store mode** (the common kernels: ``linear``, ``rbf``, ``poly``,
  ``sigmoid``): the learner keeps the features of every vector it references
  as dense rows ``store[slot]``, and computes kernel values itself
  (``_kernel_rows``): one example against every live slot, from a dense row
  (a dot loop, or one GEMM per chunk of examples when rows are wide) or a
  sparse row (a gather over its nonzeros).  A whole stream runs in one
  compiled call (:meth:`OnlineLearner.run_dense` / ``run_sparse``).  The
  store only grows during a chunk; between chunks it is compacted (the
  slots no support vector or policy references are dropped).
* **block mode** (callables, other kernels): Python computes per chunk one
  block ``k(chunk, [pool; chunk])`` (``skbudget._stream``; with several
  learners, every learner's pool side by side, each learner told where its
  own starts); slots ``0 .. n_old-1`` are the stored vectors and
  ``n_old + t`` is example ``t`` of the chunk; :meth:`process_chunk` runs the
  chunk and :meth:`finish_chunk` renumbers the slots still referenced.

Policies never see the difference: they read ``k_row`` / ``k_tt`` and call
the helpers below (``kernel_to_slot``, ``append_current``, ``remove_at``...).
"""

import threading

import numpy as np
cimport numpy as cnp
from cython cimport floating
from libc.math cimport INFINITY, fabs
from libc.stdint cimport uint64_t
from libc.string cimport memchr, memcpy, memmove, memset
from cpython.exc cimport PyErr_CheckSignals
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.pythread cimport PyThread_get_thread_ident
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec
from scipy.linalg.cython_blas cimport dgemm, sgemm

from skbudget._cpu cimport avx512_tiles, fma_kernels_for, small_gemm
from skbudget._elementwise cimport exp_inplace, power_inplace, tanh_inplace
from skbudget._kernel_rows cimport (
    KernelSpec, LINEAR_KERNEL, RBF_KERNEL, POLY_KERNEL, SIGMOID_KERNEL, dense_dot,
    sparse_dot, kernel_from_dot, kernel_to_itself, squared_distance,
)

from skbudget._vector_loops cimport (
    SKB_FMA_PADDING, skb_affine_arguments, skb_axpy, skb_dot16, skb_dot16_f32, skb_fma_block,
    skb_fma_dots_rows, skb_last_position,
    skb_nonfinite_flags, skb_rbf_arguments, skb_rbf_block_arguments, skb_replace_in_margins,
    skb_row_norms, skb_row_norms_f32, skb_transpose, skb_vector_loops_init,
)

cdef uint64_t MAX_UINT32 = 4294967295


class NonFiniteKernelValues(ValueError):
    """A kernel value computed in store mode is not finite.  The stream
    driver, which knows the kernel's name, raises it again with the
    message of ``skbudget._kernels.non_finite_kernel_error``."""

skb_vector_loops_init()     # the AVX2 loops where the CPU has AVX2
cnp.import_array()          # (NumPy's C API: _resized's memcpy)


cdef inline bint _finite(double v) noexcept nogil:
    return fabs(v) < INFINITY


cdef int _raise_overflowing_row() except -1 nogil:
    with gil:
        raise ValueError(
            "X has a row whose squared norm ||x||^2 overflows (is infinite): the 'rbf' "
            "kernel's distances to it cannot be computed, so it cannot be learned. "
            "Rescale X (e.g. StandardScaler); the model is left as it was.")


cdef int _raise_nonfinite_kernel() except -1 nogil:
    with gil:
        raise NonFiniteKernelValues("a kernel value is not finite (inf or NaN)")


cdef inline int _check_self_value(const KernelSpec* kspec, double k_tt,
                                  double xx) except -1 nogil:
    """Refuse an example whose kernel value with itself, ``k_tt``, is not
    finite, or, for the 'rbf' kernel (whose ``k_tt`` is 1), whose squared
    norm ``xx`` overflows: its distances cannot be computed.  Every round
    in store mode runs this check (:meth:`OnlineLearner.set_current`), and
    :func:`check_rows_to_themselves` runs it ahead of a call."""
    if not _finite(k_tt):
        _raise_nonfinite_kernel()
    if not _finite(xx) and kspec.kind == RBF_KERNEL:
        _raise_overflowing_row()
    return 0


def check_rows_to_themselves(const floating[:, ::1] X, int kind, double gamma, double coef0,
                             double degree):
    """Raise the error a store-mode round raises for a row of ``X`` that no
    learner state can accept (:func:`_check_self_value`: a kernel value of
    the row with itself that is not finite, a NonFiniteKernelValues, or an
    'rbf' row whose squared norm overflows, a ValueError), the first such
    row's; the rows' squared norms computed as a dense call's rounds
    compute them (``skb_row_norms``; float32 rows: ``skb_row_norms_f32``, as
    a float32 store's rounds).  ``kind`` and the parameters are the kernel's
    (:meth:`OnlineLearner.use_store`)."""
    cdef KernelSpec kspec
    kspec.kind = kind
    kspec.gamma = gamma
    kspec.coef0 = coef0
    kspec.degree = degree
    cdef Py_ssize_t i, n = X.shape[0]
    if n == 0 or X.shape[1] == 0:
        return
    cdef double[::1] norms = np.empty(n)
    with nogil:
        if floating is double:
            skb_row_norms(&X[0, 0], n, X.shape[1], &norms[0])
        else:
            skb_row_norms_f32(&X[0, 0], n, X.shape[1], &norms[0])
        for i in range(n):
            _check_self_value(&kspec, kernel_to_itself(&kspec, norms[i]), norms[i])


# rows of the chunk's Gram matrix one GEMM computes (compute_self_column)
cdef Py_ssize_t GRAM_ROWS = 16
# the cells a learner starts with (initial_capacity), and the largest
# limit it takes at once instead (a Gram matrix of at most 128 kB)
INITIAL_CAPACITY = 8
UPFRONT_CELLS = 128

# examples whose products with the chunk's later examples skb_fma_dots_rows
# computes at once (with AVX-512: three cost about what one does)
cdef Py_ssize_t FMA_GRAM_ROWS = 3
# examples per tile of skb_fma_block (chunk_length makes chunks whole tiles)
cdef Py_ssize_t FMA_TILE_EXAMPLES = 12
# interrupts: a compiled call polls (poll_interrupts) before each chunk and
# after every POLL_WORK units of work, an example counting as its learner's
# support-set size plus POLL_EXAMPLE_WORK (its score alone is a pass over
# the support set, so a poll costs under 1 % of the work between two); in
# the main thread a poll runs Python's signal handlers at most every
# SIGNAL_CHECK_SECONDS
cdef Py_ssize_t POLL_WORK = 1 << 15
cdef Py_ssize_t POLL_EXAMPLE_WORK = 64
cdef double SIGNAL_CHECK_SECONDS = 0.01


cdef inline double learn_example(OnlineLearner learner, Py_ssize_t i, double y,
                                 Py_ssize_t example_id, Py_ssize_t* work) except? -1.5e300 nogil:
    """One example of a compiled call, its state set: its weight (entry
    ``i`` of the call's weights, if any), the policy's round (the score
    before the update), the support size after it (entry ``i`` of the
    call's support sizes, if any: one store, the model unchanged), and a
    poll for interrupts every ``POLL_WORK`` units of ``work`` (counted
    across the call)."""
    cdef double score
    if learner.example_weights != NULL:
        learner.example_weight = learner.example_weights[i]
    score = learner.process_example(y, example_id)
    if learner.support_sizes != NULL:
        learner.support_sizes[i] = learner.n_sv
    work[0] += learner.n_sv + POLL_EXAMPLE_WORK
    if work[0] >= POLL_WORK:
        work[0] = 0
        learner.poll_interrupts()
    return score


cdef inline Py_ssize_t _block_column(OnlineLearner learner, Py_ssize_t s) noexcept nogil:
    """The column of slot ``s`` in the chunk's blocks (block mode)."""
    if s < learner.n_old:
        return learner.pool_column + s
    return learner.chunk_column + (s - learner.n_old)


cdef inline char* _row(OnlineLearner learner, Py_ssize_t s) noexcept nogil:
    """Row ``s`` of the store, whatever its dtype."""
    return learner.store_data + s * learner.row_bytes


cdef inline double* _row64(OnlineLearner learner, Py_ssize_t s) noexcept nogil:
    """Row ``s`` of a float64 store."""
    return <double*> (learner.store_data + s * learner.row_bytes)


cdef inline float* _row32(OnlineLearner learner, Py_ssize_t s) noexcept nogil:
    """Row ``s`` of a float32 store (``single``)."""
    return <float*> (learner.store_data + s * learner.row_bytes)


cdef inline double _monotonic_seconds() noexcept nogil:
    cdef timespec now
    clock_gettime(CLOCK_MONOTONIC, &now)
    return <double> now.tv_sec + 1e-9 * <double> now.tv_nsec


cdef class OnlineLearner:
    """Binary online kernel learner: the support-set store and stream loop.

    The learner starts with :func:`initial_capacity` of its
    :meth:`capacity_limit` cells and grows by doubling when needed
    (:meth:`grow_when_full`): a subclass sets what its limit reads (its
    budget) before it calls ``__init__``.

    Parameters
    ----------
    rng : numpy.random.RandomState or None
        Source of the random draws a policy's rule asks for.
    track_gram : bool
        Keep the Gram matrix of the support set (one new row per insertion).
    track_margins : bool
        Keep ``f(x_i)`` for every support vector, updated in O(|S|) per
        change of the model (implies ``track_gram``).
    """

    def __init__(self, rng=None, bint track_gram=False, bint track_margins=False):
        self.n_sv = 0
        self.capacity = 0
        self.n_free = 0
        self.scale = 1.0
        self.intercept = 0.0
        self.track_margins = track_margins
        self.track_gram = track_gram or track_margins
        self.n_updates = 0
        self.first_example_id = -1
        self.rng = rng
        self.order = np.empty(0, dtype=np.intp)
        self.free_cells = np.empty(0, dtype=np.intp)
        self.alpha = np.empty(0)
        self.slot = np.empty(0, dtype=np.intp)
        self.kself = np.empty(0)
        self.k_row = np.empty(0)
        self.margin = np.empty(0)
        self.gram = np.empty((0, 0))
        self.uses_store = False
        self.kernel_kind = 0
        self.kernel_gamma = self.kernel_coef0 = self.kernel_degree = 0.0
        self.n_features = 0
        self.store = np.empty((0, 0))
        self.store_sq = np.empty(0)
        self.n_slots = 0
        self.cur_slot = -1
        self.example_weight = 1.0
        self.example_weights = NULL
        self.support_sizes = NULL
        self.chunk_blocks = False
        self.slot_alpha = np.zeros(0)
        self.slot_mark = np.zeros(0, dtype=np.uint8)
        self.slot_map = np.zeros(0, dtype=np.intp)
        self.row_scratch = np.zeros(0)
        self.n_cell_rows = 0
        self.grow(initial_capacity(self.capacity_limit()))

    def use_store(self, int kind, double gamma, double coef0, double degree,
                  Py_ssize_t n_features, dtype=np.float64):
        """Switch to store mode (before any example): kernel ``kind``
        (``_kernel_rows.KernelKind``) and its parameters, feature count, and
        the rows' dtype: float64, or float32 for float32 input (the
        learner's calls then take float32 rows only; inner products in
        float32, see :meth:`compute_chunk_blocks32`)."""
        if self.n_sv or self.n_slots:
            raise RuntimeError("use_store must be called on a new learner")
        dtype = np.dtype(dtype)
        if dtype != np.float64 and dtype != np.float32:
            raise ValueError(f"the store holds float64 or float32 rows, not {dtype}")
        self.uses_store = True
        self.kernel_kind = kind
        self.kernel_gamma = gamma
        self.kernel_coef0 = coef0
        self.kernel_degree = degree
        self.n_features = n_features
        self.store = np.zeros((self.capacity + 8, n_features), dtype=dtype)
        self.store_sq = np.zeros(self.capacity + 8)
        self._sync_kernel()

    @property
    def store(self):
        """The stored rows (``n_slots`` of them in use): float64, or
        float32 when the learner takes float32 input (``single``)."""
        return self.store_array

    @store.setter
    def store(self, rows):
        # the raw view the compiled loops read (row_bytes apart) is taken
        # here, so no array but a checked one ever drives them
        cdef cnp.ndarray arr
        if not isinstance(rows, np.ndarray):
            raise TypeError(f"the feature store must be a NumPy array, not {type(rows).__name__}")
        if rows.ndim != 2 or rows.dtype not in (np.float64, np.float32):
            raise ValueError(f"the feature store must be a 2-D float64 or float32 array; got "
                             f"{rows.ndim} dimensions of {rows.dtype}")
        arr = np.require(rows, requirements=("C", "W", "A"))
        self.store_array = arr
        self.store_data = <char*> cnp.PyArray_DATA(arr)
        self.store_rows = arr.shape[0]
        self.row_bytes = arr.shape[1] * arr.itemsize
        self.single = arr.dtype == np.float32

    def _new_store(self, Py_ssize_t n_rows):
        """A zero store of ``n_rows`` rows, of the store's dtype, holding
        its ``n_slots`` rows in use."""
        store = np.zeros((n_rows, self.n_features), dtype=self.store_array.dtype)
        store[:self.n_slots] = self.store_array[:self.n_slots]
        return store

    def _sync_kernel(self):
        self.kspec.kind = self.kernel_kind
        self.kspec.gamma = self.kernel_gamma
        self.kspec.coef0 = self.kernel_coef0
        self.kspec.degree = self.kernel_degree

    # ------------------------------------------------------------------
    # storage
    # ------------------------------------------------------------------
    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        """Enlarge every per-cell array to ``new_capacity`` cells.

        Only called when no cell is free; subclasses that keep per-cell
        arrays of their own extend this and call it first.
        """
        cdef Py_ssize_t i, old = self.capacity
        cdef Py_ssize_t[::1] free
        self.alpha = _resized(self.alpha, new_capacity)
        self.kself = _resized(self.kself, new_capacity)
        self.k_row = _resized(self.k_row, new_capacity)
        self.slot = _resized(self.slot, new_capacity)
        self.order = _resized(self.order, new_capacity)
        if self.track_margins:     # free cells: +inf (see insert_cell)
            self.margin = _resized(self.margin, new_capacity)
            np.asarray(self.margin)[old:] = np.inf
        if self.track_gram:
            gram = np.zeros((new_capacity, new_capacity))
            gram[:old, :old] = np.asarray(self.gram)[:old, :old]
            self.gram = gram
        free = np.zeros(new_capacity, dtype=np.intp)  # zeros: states compare bit-exactly
        for i in range(self.n_free):        # (loops: a NumPy slice assignment costs ~2 us)
            free[i] = self.free_cells[i]
        # the stack pops from its end: the lowest new cell comes out first
        for i in range(new_capacity - old):
            free[self.n_free + i] = new_capacity - 1 - i
        self.free_cells = free
        self.n_free += new_capacity - old
        self.capacity = new_capacity
        return 0

    cdef Py_ssize_t capacity_limit(self) noexcept nogil:
        """The most cells the policy ever holds (a budget's support vectors
        and the one or two a round adds before it removes), or -1 for no
        limit: growth stops there, so that the per-cell arrays (the Gram
        matrix: cells x cells) follow the support set up to the budget,
        not beyond and not from the first row."""
        return -1

    cdef int grow_when_full(self) except -1:
        """No cell is free: double the capacity, up to :meth:`capacity_limit`
        (geometric growth: O(1) amortized per insertion)."""
        cdef Py_ssize_t new_capacity = 2 * self.capacity, limit = self.capacity_limit()
        if self.capacity < limit < new_capacity:
            new_capacity = limit
        return self.grow(new_capacity)

    def grown_capacity(self, Py_ssize_t n_sv):
        """The cells of this learner once a support set grown from empty
        holds ``n_sv`` vectors: :func:`initial_capacity`, doubled (as by
        :meth:`grow_when_full`) while ``n_sv`` does not fit, at most
        :meth:`capacity_limit` (e.g. a state rebuilt around given vectors,
        laid out as a fresh learner's)."""
        cdef Py_ssize_t limit = self.capacity_limit()
        cdef Py_ssize_t capacity = initial_capacity(limit)
        while capacity < n_sv and (limit < 0 or capacity < limit):
            capacity = 2 * capacity if limit < 0 else min(2 * capacity, limit)
        return capacity

    cdef Py_ssize_t new_slot(self) except -1 nogil:
        """A fresh store row (store mode); the store grows when full."""
        if self.n_slots == self.store_rows or (
                self.chunk_blocks and self.slot_row.shape[0] <= self.n_slots):
            with gil:
                self.grow_store()
        if self.chunk_blocks:
            self.slot_row[self.n_slots] = -1
            self.slot_owner[self.n_slots] = -1
            self.slot_block_row[self.n_slots] = -1
        self.n_slots += 1
        return self.n_slots - 1

    cdef int grow_store(self) except -1:
        """Double the feature store (and the chunk's ``slot_row``,
        ``slot_owner``, ``slot_block_row`` and ``slot_alpha``)."""
        cdef Py_ssize_t n = self.store_rows
        if self.n_slots == n:
            self.store = self._new_store(2 * n + 8)
            self.store_sq = _resized(self.store_sq, 2 * n + 8)
        if self.chunk_blocks and self.slot_row.shape[0] < self.store_rows:
            self.slot_row = _resized(self.slot_row, self.store_rows)
            self.slot_owner = _resized(self.slot_owner, self.store_rows)
            self.slot_block_row = _resized(self.slot_block_row, self.store_rows)
            self.added_slots = _resized(self.added_slots, self.store_rows)
            self.slot_alpha = _resized(self.slot_alpha, self.store_rows)
        return 0

    cdef int rebuild_slot_alpha(self, bint laid_out) except -1 nogil:
        """slot_alpha for the store as it is (dense input, per call and
        after a compaction; ``slot_alpha`` covers the store's rows).
        ``laid_out``: just after :meth:`compact_store`, the vector of cell
        ``c`` is in row ``c`` for every cell below ``n_cell_rows`` (a free
        cell's alpha is 0), so ``slot_alpha`` starts as those cells' alpha."""
        cdef Py_ssize_t i, c, n_copied = self.n_cell_rows if laid_out else 0
        memcpy(&self.slot_alpha[0], &self.alpha[0], n_copied * sizeof(double))
        memset(&self.slot_alpha[n_copied], 0,
               (self.slot_alpha.shape[0] - n_copied) * sizeof(double))
        if not laid_out:
            for i in range(self.n_sv):
                c = self.order[i]
                self.slot_alpha[self.slot[c]] = self.alpha[c]
        return 0

    cdef int reserve_slots(self, Py_ssize_t n_new) except -1 nogil:
        """Before a chunk (store mode): the store laid out for it
        (:meth:`compact_store`, which drops the rows nothing references:
        the chunk's kernel block covers every stored row, so a stale one
        costs as much as a live one), and room for ``n_new`` new slots; the
        store keeps twice the room it needs.  The GIL is taken only to
        enlarge the store."""
        cdef Py_ssize_t need
        self.compact_store(n_new)
        need = self.n_slots + n_new
        if need > self.store_rows:
            with gil:
                self.resize_store(2 * need)
        if self.chunk_blocks:
            self.rebuild_slot_alpha(True)
        return 0

    cdef int resize_store(self, Py_ssize_t n_rows) except -1:
        """The feature store with ``n_rows`` rows, the stored ones kept (and
        the chunk's per-slot arrays as large)."""
        self.store = self._new_store(n_rows)
        self.store_sq = _resized(self.store_sq, n_rows)
        if self.chunk_blocks:
            self.slot_row = np.full(n_rows, -1, dtype=np.intp)
            self.slot_owner = np.full(n_rows, -1, dtype=np.intp)
            self.slot_block_row = np.full(n_rows, -1, dtype=np.intp)
            self.added_slots = _resized(self.added_slots, n_rows)
            self.slot_alpha = np.zeros(n_rows)
        return 0

    cdef int compact_store(self, Py_ssize_t n_new) except -1 nogil:
        """Lay the store out for a chunk: the vector of the support vector
        in cell ``c`` in row ``c``, for every cell below the highest one in
        use (``n_cell_rows``; a free cell's row holds zeros), then the rows
        the policy references besides (``mark_extra_slots``), packed; every
        other row is dropped and every reference renumbered.  The chunk's
        kernel block then holds each support vector's value at its cell,
        which :meth:`gather_row` copies as it is.

        Only the rows whose place changes move (mostly the vectors added
        during the last chunk, each into the row of a vector that is gone);
        a row whose place holds a row that moves as well waits in a scratch
        copy, so that no row is overwritten before it has moved.  Support
        vectors that share a row (a policy may add the current example
        twice) get a copy each.  ``n_new``:
        the slots the chunk will add (the store is enlarged for them too
        when it grows here)."""
        cdef Py_ssize_t i, s, c, target, n_moved = 0, n = self.n_slots, d = self.n_features
        cdef Py_ssize_t n_cells = 0, first = n    # (rows before first stay where they are)
        cdef bint shared_rows = False               # support vectors that share a row
        cdef unsigned char* mark
        cdef Py_ssize_t* new_slot
        cdef double* scratch
        if self.slot_map.shape[0] < max(n, 1):     # (&mark[0] below needs a row)
            with gil:
                self.slot_mark = np.empty(self.store_rows, dtype=np.uint8)
                self.slot_map = np.empty(self.store_rows, dtype=np.intp)
        mark = &self.slot_mark[0]
        new_slot = &self.slot_map[0]
        memset(new_slot, 0xff, n * sizeof(Py_ssize_t))     # -1: dropped
        for i in range(self.n_sv):
            c = self.order[i]
            s = self.slot[c]
            shared_rows |= new_slot[s] >= 0
            new_slot[s] = c
            n_cells = max(n_cells, c + 1)
            if s != c:
                first = min(first, s)
        memset(mark, 0, n)
        self.mark_extra_slots(mark)
        target = n_cells
        if memchr(mark, 1, n) != NULL:  # the policy's other rows, after the cells'
            for s in range(n):
                if mark[s] and new_slot[s] < 0:
                    new_slot[s] = target
                    if target != s:
                        first = min(first, s)
                    target += 1
        for s in range(first, n):   # moves into a row that moves too wait in the scratch
            if _moves_into_a_moving_row(new_slot, s, n):
                n_moved += 1
        if target > self.store_rows or self.row_scratch.shape[0] < n_moved * (d + 1):
            with gil:
                if target > self.store_rows:
                    self.resize_store(2 * (target + n_new))
                if self.row_scratch.shape[0] < n_moved * (d + 1):
                    self.row_scratch = np.empty(2 * n_moved * (d + 1))
        scratch = &self.row_scratch[0] if n_moved else NULL
        i = 0
        for s in range(first, n):   # those out first; the others straight into place
            if _moves_into_a_moving_row(new_slot, s, n):
                memcpy(&scratch[i * (d + 1)], _row(self, s), self.row_bytes)
                scratch[i * (d + 1) + d] = self.store_sq[s]
                i += 1
        for s in range(first, n):   # (no row they write is one still to be read)
            if new_slot[s] >= 0 and new_slot[s] != s and not _moves_into_a_moving_row(
                    new_slot, s, n):
                memcpy(_row(self, new_slot[s]), _row(self, s), self.row_bytes)
                self.store_sq[new_slot[s]] = self.store_sq[s]
        i = 0
        for s in range(first, n):
            if _moves_into_a_moving_row(new_slot, s, n):
                memcpy(_row(self, new_slot[s]), &scratch[i * (d + 1)], self.row_bytes)
                self.store_sq[new_slot[s]] = scratch[i * (d + 1) + d]
                i += 1
        for i in range(self.n_free):    # free cells' rows: zeros (finite values of no weight)
            c = self.free_cells[i]
            if c < n_cells:
                memset(_row(self, c), 0, self.row_bytes)
                self.store_sq[c] = 0.0
        self.apply_slot_map(new_slot)
        if shared_rows:                 # cells that shared a row: a copy each
            for i in range(self.n_sv):
                c = self.order[i]
                if self.slot[c] != c:
                    memcpy(_row(self, c), _row(self, self.slot[c]), self.row_bytes)
                    self.store_sq[c] = self.store_sq[self.slot[c]]
                    self.slot[c] = c
        self.n_slots = target
        self.n_cell_rows = n_cells
        return 0

    cdef void mark_referenced_slots(self, Py_ssize_t n_total,
                                    unsigned char* mark) noexcept nogil:
        """mark[s] = 1 for the slots a support vector or the policy
        (``mark_extra_slots``) references, 0 for the others of ``n_total``."""
        cdef Py_ssize_t i
        memset(mark, 0, n_total)
        for i in range(self.n_sv):
            mark[self.slot[self.order[i]]] = 1
        self.mark_extra_slots(mark)

    cdef void apply_slot_map(self, const Py_ssize_t* new_slot) noexcept nogil:
        """Renumber every reference to a slot: s -> new_slot[s]."""
        cdef Py_ssize_t i, c
        for i in range(self.n_sv):
            c = self.order[i]
            self.slot[c] = new_slot[self.slot[c]]
        self.remap_extra_slots(new_slot)

    cdef void renumber_slots(self, Py_ssize_t n_total, unsigned char* mark,
                             Py_ssize_t* new_slot) noexcept nogil:
        """Number the slots still referenced in their order (block mode: the
        pools keep their rows' order), renumber every reference, and leave
        the map old slot -> new slot (-1: dropped) in ``new_slot[0:n_total]``
        (``mark``: scratch of ``n_total`` bytes)."""
        cdef Py_ssize_t s, j = 0
        self.mark_referenced_slots(n_total, mark)
        for s in range(n_total):
            if mark[s]:
                new_slot[s] = j
                j += 1
            else:
                new_slot[s] = -1
        self.apply_slot_map(new_slot)

    # ------------------------------------------------------------------
    # kernel values of the current example
    # ------------------------------------------------------------------
    cdef double dot_to_slot(self, Py_ssize_t s) noexcept nogil:
        """<x_t, store[s]> (store mode; float32 rows: their products
        summed in float64, ``skb_dot16_f32``)."""
        if self.single:
            if self.x_dense32 != NULL:
                return skb_dot16_f32(self.x_dense32, _row32(self, s), self.n_features)
            return sparse_dot(self.x_values32, self.x_indices, self.x_nnz, _row32(self, s))
        if self.x_dense != NULL:
            return dense_dot(self.x_dense, _row64(self, s), self.n_features)
        return sparse_dot(self.x_values, self.x_indices, self.x_nnz, _row64(self, s))

    cdef double kernel_to_slot(self, Py_ssize_t s) noexcept nogil:
        """k(x_t, slot s)."""
        if self.uses_store:
            if s == self.cur_slot:
                return self.k_tt
            if s < self.n_block_slots:
                return self.chunk_k[self.t * self.n_block_slots + s]
            if self.chunk_blocks and self.slot_row[s] >= 0:     # an example of this chunk
                return self.chunk_self[self.slot_row[s] * self.chunk_len + self.t]
            if self.chunk_fma and self.x_dense != NULL:
                return self.kernel_as_in_block(s)
            return kernel_from_dot(&self.kspec, self.dot_to_slot(s), self.xx, self.store_sq[s])
        return self.K_chunk[self.t, _block_column(self, s)]

    cdef double kernel_as_in_block(self, Py_ssize_t s) noexcept nogil:
        """k(x_t, slot s) for a vector added during the chunk that is no
        example of it (a merge of two support vectors), with the arithmetic
        of the chunk's block, where the next chunks will read it
        (``kernel_from_dot``'s four partial sums and libm's exp differ in
        the last bits: the model depended on whether the merge and the
        later examples were in one call; doc/engine.md).  The first time
        the slot is asked for, its values against the chunk's examples
        from ``t`` on are computed at once (:meth:`compute_values_in_block`)
        into a row of ``chunk_added``, read by the later examples; the
        chunk's first ``chunk_len`` such slots get a row, any later one its
        value alone."""
        cdef Py_ssize_t r = self.slot_block_row[s], c = self.chunk_len
        cdef double value
        if r >= 0:
            return self.chunk_added[r * c + self.t]
        if self.n_added_rows == c:
            self.compute_values_in_block(s, &value, 1)
            return value
        r = self.n_added_rows
        self.n_added_rows += 1
        self.slot_block_row[s] = r
        self.compute_values_in_block(s, &self.chunk_added[r * c + self.t], c - self.t)
        return self.chunk_added[r * c + self.t]

    cdef void compute_values_in_block(self, Py_ssize_t s, double* out,
                                      Py_ssize_t m) noexcept nogil:
        """``out[j]`` = k(x_{t + j}, slot s) for the ``m`` examples of the
        chunk from ``t`` on, summed as the chunk's block is (the FMA
        kernels, ``skb_fma_dots_rows``: each inner product one fused
        multiply-add after another from +0, from the transposed chunk),
        then the kernel's argument and NumPy's exp / power / tanh, which
        give each value the bits they give it alone.  Values that are not
        finite are left for the reader to check (``_finite``)."""
        skb_fma_dots_rows(_row64(self, s), 1, &self.chunk_xt_buffer[self.t], self.chunk_len,
                          m, self.n_features, out, m, avx512_tiles())
        _kernel_arguments(&self.kspec, out, m, &self.chunk_sq[self.t], &self.store_sq[s], False)
        if self.kspec.kind == RBF_KERNEL:
            exp_inplace(out, m)
        elif self.kspec.kind == POLY_KERNEL:
            power_inplace(out, m, self.kernel_degree)
        elif self.kspec.kind == SIGMOID_KERNEL:
            tanh_inplace(out, m)

    cdef double sqdist_to_slot(self, Py_ssize_t s) noexcept nogil:
        """||x_t - slot s||^2 (block mode: only when distance blocks were given)."""
        if self.uses_store:
            if s == self.cur_slot:
                return 0.0
            return squared_distance(self.dot_to_slot(s), self.xx, self.store_sq[s])
        return self.D_chunk[self.t, _block_column(self, s)]

    cdef double kernel_between_slots(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        """k(store[a], store[b]) (store mode only)."""
        cdef double dot
        if a == b:
            return kernel_to_itself(&self.kspec, self.store_sq[a])
        if self.single:
            dot = skb_dot16_f32(_row32(self, a), _row32(self, b), self.n_features)
        else:
            dot = dense_dot(_row64(self, a), _row64(self, b), self.n_features)
        return kernel_from_dot(&self.kspec, dot, self.store_sq[a], self.store_sq[b])

    cdef double dot16_between_slots(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        """<store[a], store[b]> summed as ``skb_dot16`` sums (sixteen
        partial sums; float32 rows: ``skb_dot16_f32``, in float64)."""
        if self.single:
            return skb_dot16_f32(_row32(self, a), _row32(self, b), self.n_features)
        return skb_dot16(_row64(self, a), _row64(self, b), self.n_features)

    cdef int set_current(self, double xx, bint gather) except -1 nogil:
        """Start the round of the example just pointed to (store mode):
        ``k_tt``, and ``k_row`` now (``gather``) or when a policy asks for it
        (:meth:`ensure_row`), with a check that they are finite."""
        self.xx = xx
        self.cur_slot = -1
        self.k_tt = kernel_to_itself(&self.kspec, xx)
        self.row_ready = False
        _check_self_value(&self.kspec, self.k_tt, xx)
        if gather:
            self.ensure_row()
        return 0

    cdef int ensure_row(self) except -1 nogil:
        """Gather ``k_row`` for the current example unless it is (a policy
        that reads ``k_row`` calls this first in its round)."""
        if not self.row_ready:
            if not self.gather_row():
                self.raise_nonfinite()
            self.row_ready = True
        return 0

    cdef int raise_nonfinite(self) except -1 nogil:
        return _raise_nonfinite_kernel()

    cdef bint gather_row(self) noexcept nogil:
        """k_row[c] = k(x_t, x_c) for every support-vector cell (the hottest
        loop).  Returns whether every value is finite (store mode; the
        chunk's blocks were checked when computed, so only values computed
        here are).

        Dense input: the store is laid out with each support vector of the
        chunk's start in the row of its cell (:meth:`compact_store`), so
        the chunk's kernel row is copied as it is; the vectors added during
        the chunk are then put in from their slots (``slot_owner``: the
        cell each was given)."""
        cdef Py_ssize_t i, c, s, n = self.n_sv, n_old = self.n_old, n_block = self.n_block_slots
        cdef double v
        cdef bint finite = True
        if n == 0:
            return True
        cdef const Py_ssize_t* order = &self.order[0]
        cdef const Py_ssize_t* slot = &self.slot[0]
        cdef double* k_row = &self.k_row[0]
        cdef const Py_ssize_t* owner
        cdef const Py_ssize_t* example
        cdef const Py_ssize_t* added
        cdef const double* pool_row
        cdef const double* chunk_row
        if self.uses_store:
            if self.chunk_blocks:    # dense input: the chunk's row against the stored rows
                if n_block > 0:     # (laid out by compact_store)
                    memcpy(k_row, &self.chunk_k[self.t * n_block],
                           min(self.n_cell_rows, n_block) * sizeof(double))
                owner = &self.slot_owner[0]
                example = &self.slot_row[0]
                added = &self.added_slots[0]
                for i in range(self.n_added_slots):     # added during the chunk
                    s = added[i]
                    c = owner[s]
                    if slot[c] != s:
                        continue
                    if s != self.cur_slot and example[s] >= 0:   # (checked when computed)
                        k_row[c] = self.chunk_self[example[s] * self.chunk_len + self.t]
                    else:
                        v = self.kernel_to_slot(s)
                        finite = finite and _finite(v)
                        k_row[c] = v
                return finite
            for i in range(n):
                c = order[i]
                v = self.kernel_to_slot(slot[c])
                finite = finite and _finite(v)
                k_row[c] = v
            return finite
        pool_row = &self.K_chunk[self.t, 0] + self.pool_column
        chunk_row = &self.K_chunk[self.t, 0] + self.chunk_column - n_old
        for i in range(n):
            c = order[i]
            s = slot[c]
            if s < n_old:
                k_row[c] = pool_row[s]
            else:
                k_row[c] = chunk_row[s]
        return True

    cdef double dot_row(self) noexcept nogil:
        """f(x_t) without the intercept: from the gathered kernel row, or
        (dense input, row not gathered) one pass over the chunk's kernel row
        against ``slot_alpha`` (the support vectors in slot order)."""
        cdef Py_ssize_t i, j, r, n = self.n_sv
        cdef double s = 0.0, v
        if n == 0:
            return 0.0
        cdef const Py_ssize_t* order = &self.order[0]
        cdef const double* alpha = &self.alpha[0]
        cdef const double* k_row = &self.k_row[0]
        cdef const double* block_row
        cdef const double* slot_alpha
        cdef const Py_ssize_t* slot_row
        cdef const Py_ssize_t* added
        if self.row_ready or not self.chunk_blocks:
            for i in range(n):
                s += alpha[order[i]] * k_row[order[i]]
            return s * self.scale
        block_row = &self.chunk_k[self.t * self.n_block_slots]
        slot_alpha = &self.slot_alpha[0]
        slot_row = &self.slot_row[0]
        s = skb_dot16(slot_alpha, block_row, self.n_block_slots)
        added = &self.added_slots[0]
        for j in range(self.n_added_slots):     # added during the chunk, ascending
            i = added[j]
            if slot_alpha[i] != 0.0:
                r = slot_row[i]
                if r >= 0 and r != self.t:  # an earlier example of the chunk
                    v = self.chunk_self[r * self.chunk_len + self.t]
                else:       # x_t itself, or a vector of no chunk row (computed)
                    v = self.kernel_to_slot(i)
                    if not _finite(v):
                        self.nonfinite = True
                s += slot_alpha[i] * v
        return s * self.scale

    cdef int set_alpha(self, Py_ssize_t cell, double a) except -1 nogil:
        """alpha[cell] = a (the stored coefficient, before ``scale``), for
        policies that set coefficients themselves."""
        cdef Py_ssize_t s = self.slot[cell]
        self.alpha[cell] = a
        if self.chunk_blocks:
            self.slot_alpha[s] = a
            if s >= self.n_block_slots:
                self.note_added_slot(s)
        return 0

    # ------------------------------------------------------------------
    # changing the support set
    # ------------------------------------------------------------------
    cdef Py_ssize_t current_slot(self) except -1 nogil:
        """The slot of the current example (store mode: copied into the
        store on first use in its round)."""
        cdef Py_ssize_t s, j
        if not self.uses_store:
            return self.n_old + self.t
        cdef double* row
        cdef float* row32
        if self.cur_slot < 0:
            s = self.new_slot()
            if self.single and self.x_dense32 != NULL:
                memcpy(_row32(self, s), self.x_dense32, self.row_bytes)
            elif self.single:
                row32 = _row32(self, s)
                memset(row32, 0, self.row_bytes)
                for j in range(self.x_nnz):
                    row32[self.x_indices[j]] = self.x_values32[j]
            elif self.x_dense != NULL:
                memcpy(_row64(self, s), self.x_dense, self.row_bytes)
            else:
                row = _row64(self, s)
                memset(row, 0, self.row_bytes)
                for j in range(self.x_nnz):
                    row[self.x_indices[j]] = self.x_values[j]
            self.store_sq[s] = self.xx
            self.cur_slot = s
            if self.chunk_blocks:
                self.slot_row[s] = self.t
                self.compute_self_column(self.t)
        return self.cur_slot

    cdef void blend_vectors(self, Py_ssize_t cell_a, Py_ssize_t cell_b, double h,
                            double* out) noexcept nogil:
        """``out = h x_a + (1 - h) x_b`` for the support vectors of cells
        ``cell_a`` and ``cell_b`` (store mode; ``n_features`` doubles, in
        float64 from float32 rows too), e.g. a merge of the two."""
        cdef Py_ssize_t i
        cdef const double* a
        cdef const double* b
        cdef const float* a32
        cdef const float* b32
        if self.single:
            a32 = _row32(self, self.slot[cell_a])
            b32 = _row32(self, self.slot[cell_b])
            for i in range(self.n_features):
                out[i] = h * a32[i] + (1.0 - h) * b32[i]
            return
        a = _row64(self, self.slot[cell_a])
        b = _row64(self, self.slot[cell_b])
        for i in range(self.n_features):
            out[i] = h * a[i] + (1.0 - h) * b[i]

    cdef void forget_current(self) noexcept nogil:
        """No current example (a step outside a round, e.g. a compression,
        reads none)."""
        self.cur_slot = -1
        self.x_dense = NULL
        self.x_values = NULL
        self.x_dense32 = NULL
        self.x_values32 = NULL
        self.x_nnz = 0

    cdef Py_ssize_t insert_cell(self, Py_ssize_t slot, double coef, double k_self,
                                double k_now) except -1 nogil:
        """Add the vector of ``slot`` as the newest support vector with true
        coefficient ``coef``; ``k_self`` = k(v, v), ``k_now`` = k(x_t, v).
        With ``track_gram`` the caller has put k(v, x_c) in ``gram[cell, c]``
        for every support vector c (``cell`` = the next free cell)."""
        cdef Py_ssize_t c, cell, cap = self.capacity
        cdef double a = coef / self.scale, f_new
        cdef double* row = NULL
        cdef double* margin
        self.n_free -= 1
        cell = self.free_cells[self.n_free]
        # the passes below run over every cell (contiguous, no indirection:
        # they vectorize); free cells have alpha 0 and margin +inf
        if self.track_gram:
            row = &self.gram[cell, 0]
            row[cell] = k_self
            for c in range(cap):
                self.gram[c, cell] = row[c]
        if self.track_margins:
            f_new = dense_dot(&self.alpha[0], row, cap)
            margin = &self.margin[0]
            skb_axpy(margin, a, row, cap)
            margin[cell] = f_new + a * k_self
        self.link_cell(cell, slot, a, k_self, k_now)
        return cell

    cdef void link_cell(self, Py_ssize_t cell, Py_ssize_t slot, double a, double k_self,
                        double k_now) noexcept nogil:
        """The bookkeeping of an insertion, after its passes: ``cell``
        (already taken off the free stack) holds the vector of ``slot``,
        stored coefficient ``a``, as the newest support vector."""
        self.slot[cell] = slot
        if self.chunk_blocks and slot >= self.n_block_slots:
            self.slot_owner[slot] = cell
        self.set_alpha(cell, a)
        self.kself[cell] = k_self
        self.k_row[cell] = k_now
        self.order[self.n_sv] = cell
        self.n_sv += 1

    cdef void note_added_slot(self, Py_ssize_t s) noexcept nogil:
        """Slot ``s``, added during the chunk, now holds a support vector
        (``slot_owner[s]``): into ``added_slots``, kept ascending (a new
        slot is the largest: it goes last)."""
        cdef Py_ssize_t j = self.n_added_slots
        cdef Py_ssize_t* added = &self.added_slots[0]
        while j > 0 and added[j - 1] >= s:
            if added[j - 1] == s:
                return
            j -= 1
        memmove(&added[j + 1], &added[j], (self.n_added_slots - j) * sizeof(Py_ssize_t))
        added[j] = s
        self.n_added_slots += 1

    cdef void forget_added_slot(self, Py_ssize_t s) noexcept nogil:
        """Slot ``s``'s support vector (its owner) is gone: out of
        ``added_slots`` (looked for from the newest end, where the vector a
        removal takes mostly is)."""
        cdef Py_ssize_t* added = &self.added_slots[0]
        cdef Py_ssize_t j = skb_last_position(added, self.n_added_slots, s)
        if j >= 0:
            memmove(&added[j], &added[j + 1], (self.n_added_slots - 1 - j) * sizeof(Py_ssize_t))
            self.n_added_slots -= 1

    cdef Py_ssize_t append_current(self, double coef) except -1 nogil:
        """Add the current example as the newest support vector; its cell."""
        cdef Py_ssize_t i, c, cell, s = self.current_slot()
        if self.n_free == 0:
            with gil:
                self.grow_when_full()
        cell = self.free_cells[self.n_free - 1]
        if self.track_gram:         # (stale values in the free cells' entries)
            self.ensure_row()
            memcpy(&self.gram[cell, 0], &self.k_row[0], self.capacity * sizeof(double))
        return self.insert_cell(s, coef, self.k_tt, self.k_tt)

    cdef Py_ssize_t append_vector(self, const double* z, double coef) except -1 nogil:
        """Add a vector that is no example of the stream (e.g. a merge of two
        support vectors), ``n_features`` doubles (rounded to float32 in a
        float32 store), as the newest support vector with true coefficient
        ``coef`` (store mode only); its cell."""
        cdef Py_ssize_t i, c, cell, s
        cdef float* row32
        if not self.uses_store:
            with gil:
                raise RuntimeError("append_vector needs the feature store (a common kernel)")
        if self.n_free == 0:
            with gil:
                self.grow_when_full()
        s = self.new_slot()
        if self.single:
            row32 = _row32(self, s)
            for i in range(self.n_features):
                row32[i] = <float> z[i]
            self.store_sq[s] = skb_dot16_f32(row32, row32, self.n_features)
        else:
            memcpy(_row64(self, s), z, self.row_bytes)
            self.store_sq[s] = dense_dot(_row64(self, s), _row64(self, s), self.n_features)
        cell = self.free_cells[self.n_free - 1]
        if self.track_gram:
            for i in range(self.n_sv):
                c = self.order[i]
                self.gram[cell, c] = self.kernel_between_slots(s, self.slot[c])
        return self.insert_cell(s, coef, kernel_to_itself(&self.kspec, self.store_sq[s]),
                                self.kernel_to_slot(s))

    cdef int remove_at(self, Py_ssize_t pos) except -1 nogil:
        """Remove the support vector at position ``pos`` (0 = oldest)."""
        cdef Py_ssize_t cell = self.order[pos]
        if self.track_margins:
            self.add_gram_row(cell, -self.alpha[cell])
        self.unlink_cell(pos)
        return 0

    cdef int unlink_cell(self, Py_ssize_t pos) except -1 nogil:
        """The bookkeeping of a removal, after its margin pass: the cell at
        position ``pos`` goes back on the free stack (its top)."""
        cdef Py_ssize_t cell = self.order[pos], s = self.slot[cell]
        self.on_remove(cell)
        if self.chunk_blocks:
            self.slot_alpha[s] = 0.0
            if s >= self.n_block_slots and self.slot_owner[s] == cell:
                self.forget_added_slot(s)
        # a free cell weighs nothing in the passes over every cell
        self.alpha[cell] = 0.0
        if self.track_margins:
            self.margin[cell] = INFINITY
        if pos < self.n_sv - 1:     # (&order[pos + 1] is one past the end for the last cell)
            memmove(&self.order[pos], &self.order[pos + 1],
                    (self.n_sv - 1 - pos) * sizeof(Py_ssize_t))
        self.n_sv -= 1
        self.free_cells[self.n_free] = cell
        self.n_free += 1
        return 0

    cdef Py_ssize_t replace_at(self, Py_ssize_t pos, double coef) except -1 nogil:
        """``remove_at(pos)`` then ``append_current(coef)`` (the new vector
        takes the removed one's cell, the top of the free stack); its cell.
        With ``track_margins`` the removal's and the insertion's passes over
        every cell are one (``skb_replace_in_margins``), with the same
        arithmetic in the same order (``on_remove`` runs before it)."""
        cdef Py_ssize_t cell, s
        cdef double a_old
        if not self.track_margins:
            self.remove_at(pos)
            return self.append_current(coef)
        s = self.current_slot()
        self.ensure_row()               # (k_row[cell] is replaced by k_tt below)
        cell = self.order[pos]
        a_old = self.alpha[cell]
        self.unlink_cell(pos)           # cell: the top of the free stack
        self.n_free -= 1
        self.k_row[cell] = self.k_tt
        self.margin[cell] = self.replace_margins(cell, pos, a_old, coef / self.scale)
        self.link_cell(cell, s, coef / self.scale, self.k_tt, self.k_tt)
        return cell

    cdef double replace_margins(self, Py_ssize_t cell, Py_ssize_t pos, double a_old,
                                double a_new) noexcept nogil:
        """The pass of :meth:`replace_at` over every cell (``k_row[cell]``
        is already the new vector's ``k_tt``; the removed vector was at
        position ``pos``, so ``order[pos:n_sv]`` are the support vectors
        newer than it): returns the new vector's margin.  A policy that
        derives per-cell values from the margins may override it to compute
        them in the same pass."""
        return skb_replace_in_margins(&self.gram[0, 0], self.capacity, cell, &self.k_row[0],
                                      &self.alpha[0], &self.margin[0], a_old, a_new,
                                      &self.kself[0], self.scale, NULL, True)

    cdef int add_to_coef(self, Py_ssize_t cell, double delta) except -1 nogil:
        """alpha_cell += delta (a change of the true, scaled coefficient)."""
        cdef double a = delta / self.scale
        self.set_alpha(cell, self.alpha[cell] + a)
        if self.track_margins:
            self.add_gram_row(cell, a)
        return 0

    cdef void add_gram_row(self, Py_ssize_t cell, double a) noexcept nogil:
        """margin[c] += a gram[cell, c] for every cell (free ones stay +inf)."""
        skb_axpy(&self.margin[0], a, &self.gram[cell, 0], self.capacity)

    cdef int rescale(self, double factor) except -1 nogil:
        """Multiply every coefficient by ``factor`` > 0 in O(1).  Returns 1
        if the global scale was folded into the stored coefficients (they,
        and the margins, were multiplied by the scale, which is now 1: a
        policy keeping sums in the coefficients' units does the same), else 0.
        The scale is folded in when it leaves [1e-100, 1e100]: a rule that
        only shrinks (Forgetron) would underflow it, one that also grows it
        (BOGD's unbiased rescaling) overflow it, while the coefficients
        themselves stay in range."""
        cdef Py_ssize_t i, c
        self.scale *= factor
        if 1e-100 <= self.scale <= 1e100:
            return 0
        for i in range(self.n_sv):      # fold the scale in before it under- or overflows
            c = self.order[i]
            self.set_alpha(c, self.alpha[c] * self.scale)
            if self.track_margins:
                self.margin[c] *= self.scale
        self.scale = 1.0
        return 1

    cdef int start_draw(self) except -1 nogil:
        """Before a draw: the generator's bit generator at hand, and its
        state saved at the call's first draw (see :meth:`begin_call`)."""
        if self.bitgen == NULL:
            with gil:
                self.bitgen = <bitgen_t*>PyCapsule_GetPointer(
                    self.rng._bit_generator.capsule, "BitGenerator")
                self.bitgen_owner = self.rng
        if not self.rng_saved:      # the call's first draw
            with gil:
                self.rng_at_call_start = self.rng.get_state()
                self.rng_saved = True
        return 0

    cdef double random_uniform(self) except -1.0 nogil:
        """``rng.random_sample()`` (``rng.random()``), a double in [0, 1):
        the same draw from the same generator (its bit generator's next
        double, as ``RandomState.random_sample`` takes it), without a
        Python call."""
        self.start_draw()
        return self.bitgen.next_double(self.bitgen.state)

    cdef long long random_below(self, long long n) except -1 nogil:
        """``rng.randint(n)`` for ``n >= 1``: the same draw from the same
        generator (NumPy's legacy masked rejection sampling on the bit
        generator's 32- or 64-bit output), without a Python call."""
        cdef uint64_t top = <uint64_t>(n - 1), mask = top, value
        self.start_draw()
        if top == 0:
            return 0
        mask |= mask >> 1
        mask |= mask >> 2
        mask |= mask >> 4
        mask |= mask >> 8
        mask |= mask >> 16
        mask |= mask >> 32
        if top <= MAX_UINT32:
            if top == MAX_UINT32:
                return self.bitgen.next_uint32(self.bitgen.state)
            while True:
                value = self.bitgen.next_uint32(self.bitgen.state) & mask
                if value <= top:
                    return value
        while True:
            value = self.bitgen.next_uint64(self.bitgen.state) & mask
            if value <= top:
                return value

    # ------------------------------------------------------------------
    # policy hooks (defaults: nothing extra)
    # ------------------------------------------------------------------
    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        with gil:
            raise NotImplementedError("a policy must define process_example")

    cdef int on_remove(self, Py_ssize_t cell) except -1 nogil:
        return 0

    cdef void mark_extra_slots(self, unsigned char* mark) noexcept nogil:
        return

    cdef void forget_derived_values(self) noexcept nogil:
        """Drop the values a policy derived from the state and keeps from
        one round to the next (called on entry to every compiled call, by
        :meth:`check_state`: the state may have been set since)."""
        return

    cdef void remap_extra_slots(self, const Py_ssize_t* new_slot) noexcept nogil:
        return

    # ------------------------------------------------------------------
    # the stream loop, store mode: a whole stream in one call
    # ------------------------------------------------------------------
    def check_state(self, Py_ssize_t pool_size=-1):
        """Raise ValueError unless the store is consistent: every per-cell
        array has ``capacity`` cells, ``n_sv + n_free == capacity``, the
        support cells and the free cells are distinct cells in range, and
        every support vector's slot is a stored row (store mode) or in
        ``[0, pool_size)`` (block mode).

        Called on entry to the compiled calls, which index without bounds
        checks: a corrupted state gets an exception, never a crash.  Then
        the policy forgets its derived values (:meth:`forget_derived_values`).
        O(capacity); a policy with arrays of its own checks them in
        :meth:`check_policy_state`.
        """
        cdef Py_ssize_t i, c, cap = self.capacity
        cdef unsigned char[::1] seen
        per_cell = {"alpha": self.alpha, "kself": self.kself, "k_row": self.k_row,
                    "slot": self.slot, "order": self.order, "free_cells": self.free_cells}
        if self.track_margins:
            per_cell["margin"] = self.margin
        problem = size_problem(per_cell, cap)
        if problem is None and self.track_margins and not self.track_gram:
            problem = "track_margins without track_gram"
        if problem is None and self.track_gram:
            problem = square_problem("the Gram matrix", self.gram, cap)
        if problem is None and not (0 <= self.n_sv <= cap and 0 <= self.n_free <= cap
                                    and self.n_sv + self.n_free == cap):
            problem = f"n_sv={self.n_sv} and n_free={self.n_free} do not add up to capacity={cap}"
        if problem is None and self.uses_store:
            if self.store is None or self.store_sq is None or self.store.shape[1] != self.n_features:
                problem = f"the feature store does not have {self.n_features} features"
            elif not 0 <= self.n_slots <= min(self.store.shape[0], self.store_sq.shape[0]):
                problem = f"n_slots={self.n_slots} exceeds the feature store"
            pool_size = self.n_slots
        if problem is None:
            seen_arr = np.zeros(cap, dtype=np.uint8)
            seen = seen_arr
            for i in range(self.n_sv + self.n_free):
                c = self.order[i] if i < self.n_sv else self.free_cells[i - self.n_sv]
                if c < 0 or c >= cap or seen[c]:
                    problem = f"cell {c} is out of range or listed twice"
                    break
                seen[c] = 1
                if i < self.n_sv and pool_size >= 0 and not 0 <= self.slot[c] < pool_size:
                    problem = f"slot {self.slot[c]} is outside the {pool_size} stored vectors"
                    break
        if problem is None:
            problem = self.check_policy_state(pool_size)
        if problem is not None:
            raise ValueError(f"{type(self).__name__} has an inconsistent state: {problem}")
        self.forget_derived_values()

    def check_policy_state(self, Py_ssize_t pool_size):
        """A description of what is inconsistent in the policy's own state,
        or None; called by :meth:`check_state` once the store is known to
        be consistent (``pool_size``: the slots there are, -1 if unknown).
        A policy with state of its own that indexes memory overrides it
        (calling its parent's first)."""
        return None

    def begin_call(self):
        """Before a training call of the estimator: from the call's first
        random draw on, ``rng_at_call_start`` holds the generator's state
        before it (None while the call has drawn nothing), so that a failed
        call can put the generator back without a snapshot per call."""
        self.rng_saved = False
        self.rng_at_call_start = None

    def watch_stop(self, flag=None):
        """Stop the compiled calls of this learner when ``flag[0]`` (a
        uint8 array another thread may set) becomes nonzero: they raise
        ``KeyboardInterrupt`` at their next poll (:meth:`poll_interrupts`),
        between two examples.  ``None``: no flag.  The stream driver sets
        one per threaded run, to stop the learners still running when the
        call fails."""
        cdef unsigned char[::1] view
        if flag is None:
            self.stop_flag = NULL
            self.stop_flag_owner = None
            return
        view = flag
        if view.shape[0] < 1:
            raise ValueError("the stop flag must hold at least one byte")
        self.stop_flag_owner = flag
        self.stop_flag = <const skb_stop_flag*> &view[0]

    cdef int start_polling(self) except -1:
        """At the start of a compiled call: whether its polls run Python's
        signal handlers (only the main thread runs them; elsewhere taking the
        GIL would be a cost for nothing), the first time at the first poll."""
        self.check_signals = PyThread_get_thread_ident() == threading.main_thread().ident
        self.next_signal_check = 0.0
        return 0

    cdef int poll_interrupts(self) except -1 nogil:
        """Between two examples of a compiled call (every chunk and every
        ``POLL_WORK`` units of work): raise ``KeyboardInterrupt`` if the
        stop flag is set (:meth:`watch_stop`); in the main thread, run
        Python's signal handlers (``PyErr_CheckSignals``, with the GIL) if
        ``SIGNAL_CHECK_SECONDS`` have passed since they last ran, raising
        what a handler raises (Ctrl-C: ``KeyboardInterrupt``).  So a
        Ctrl-C is honoured within about 10 ms plus the work of one poll
        interval, however long the compiled call; the estimator's rollback
        then puts the model back as it was before the call.  The model never
        depends on the polls (they read a clock and a flag only)."""
        cdef double now
        if self.stop_flag != NULL and self.stop_flag[0]:
            with gil:
                raise KeyboardInterrupt("the training call was stopped")
        if self.check_signals:
            now = _monotonic_seconds()
            if now >= self.next_signal_check:
                self.next_signal_check = now + SIGNAL_CHECK_SECONDS
                with gil:
                    PyErr_CheckSignals()
        return 0

    def start_call(self, Py_ssize_t first_id):
        """Before a pass of a training call whose examples have the
        identities ``first_id, first_id + 1, ...`` (every pass of one
        ``fit`` call has the same ``first_id``; every call a new one).  A
        new call forgets the example identities of the last one
        (:meth:`forget_examples`): identities never recur across calls, so
        tables keyed by them stay as long as one call, never the stream."""
        if first_id != self.first_example_id:
            self.first_example_id = first_id
            self.forget_examples()

    def forget_examples(self):
        """Drop the tables keyed by example identity (policies that keep
        one override this)."""

    cdef Py_ssize_t example_position(self, Py_ssize_t example_id) except -1 nogil:
        """Position of an example of the current call in a table keyed by
        example identity (``example_id - first_example_id``)."""
        if example_id < self.first_example_id:
            with gil:
                raise ValueError(f"example id {example_id} precedes the call's first "
                                 f"({self.first_example_id}): call start_call first")
        return example_id - self.first_example_id

    def _check_stream(self, Py_ssize_t n_rows, const Py_ssize_t[::1] rows, const double[::1] y,
                      const Py_ssize_t[::1] example_ids, double[::1] scores):
        if not self.uses_store:
            raise RuntimeError("run_dense / run_csr / run_sparse need store mode (use_store)")
        self.check_state()
        cdef Py_ssize_t i, n = rows.shape[0]
        if y.shape[0] != n or example_ids.shape[0] != n or scores.shape[0] != n:
            raise ValueError("rows, y, example_ids and scores must have the same length")
        for i in range(n):
            if not 0 <= rows[i] < n_rows:
                raise ValueError(f"row index {rows[i]} out of range [0, {n_rows})")

    def run_dense(self, X, const Py_ssize_t[::1] rows,
                  const double[::1] y,
                  const Py_ssize_t[::1] example_ids, double[::1] scores, Py_ssize_t chunk,
                  const double[::1] weights=None, Py_ssize_t[::1] support_sizes=None):
        """Run the policy on the examples ``X[rows]`` in that order;
        ``scores[i]`` gets f(x) before the update.  ``y`` in {-1, +1};
        ``weights`` (optional, finite, >= 0) the weight of each example's
        loss, read by the policies that take weights (``example_weight``;
        None: every weight 1, at no per-example cost).
        ``support_sizes`` (optional, one per example) gets the support size
        ``n_sv`` after each example's round (the online record's support
        curve; None: not written).  Per
        chunk of examples, one GEMM gives the chunk's inner products with
        the stored rows, and one GEMM column per example stored during the
        chunk those with the examples after it (the arithmetic of
        ``rbf_kernel``'s blocks, whatever the chunk size).  ``chunk = 0``
        chooses the size from the store's (see ``chunk_length``).
        ``X``: C-contiguous, of the store's dtype (float32 for a ``single``
        learner, else float64)."""
        self._check_stream(X.shape[0], rows, y, example_ids, scores)
        if X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features, the learner {self.n_features}")
        cdef const char* X_data = _input_data(self, X, 2)
        self.use_call_arrays(weights, support_sizes, rows.shape[0])
        try:
            if rows.shape[0]:
                self.run_chunks(X_data, NULL, NULL, NULL, rows, y, example_ids, scores,
                                chunk)
        finally:
            self.release_call_arrays()

    def run_csr(self, data, const int[::1] indices, const int[::1] indptr,
                const Py_ssize_t[::1] rows, const double[::1] y,
                const Py_ssize_t[::1] example_ids, double[::1] scores, Py_ssize_t chunk,
                bint known_canonical=False, const double[::1] weights=None,
                Py_ssize_t[::1] support_sizes=None):
        """:meth:`run_dense` for CSR input (``data``, ``indices``,
        ``indptr``; canonical, ``n_features`` columns): each chunk's rows are
        made dense in the chunk buffer, where the GEMM reads them from cache
        (no dense copy of the stream or of a segment).

        The rows are checked first (:func:`_check_csr_rows`).  With
        ``known_canonical`` (the caller has scipy's ``has_canonical_format``)
        only what memory safety needs is: a row with every column stored is
        read as a dense row without its indices, so they are not read at
        all (a third of the bytes of a fully stored matrix).  ``data``: of
        the store's dtype (as ``X`` in :meth:`run_dense`)."""
        self._check_stream(indptr.shape[0] - 1, rows, y, example_ids, scores)
        cdef const char* values = _input_data(self, data, 1)
        _check_csr_rows(data, indices, indptr, rows, self.n_features, canonical=True,
                        known_canonical=known_canonical)
        self.use_call_arrays(weights, support_sizes, rows.shape[0])
        try:
            if rows.shape[0]:
                self.run_chunks(NULL, values if data.shape[0] else NULL,
                                &indices[0] if indices.shape[0] else NULL, &indptr[0],
                                rows, y, example_ids, scores, chunk)
        finally:
            self.release_call_arrays()

    cdef int use_call_arrays(self, const double[::1] weights, Py_ssize_t[::1] support_sizes,
                             Py_ssize_t n) except -1:
        """The per-example arrays of the call about to run over ``n``
        examples: their weights (None: every weight 1) and the output of
        the support size after each round (None: not written).
        ``example_weights`` and ``support_sizes`` point into them until the
        call ends (:meth:`release_call_arrays`)."""
        self.example_weight = 1.0
        self.release_call_arrays()
        if weights is not None and weights.shape[0] != n:
            raise ValueError(f"weights has {weights.shape[0]} values for {n} examples")
        if support_sizes is not None and support_sizes.shape[0] != n:
            raise ValueError(f"support_sizes has {support_sizes.shape[0]} values for {n} "
                             f"examples")
        if n and weights is not None:
            self.example_weights = &weights[0]
        if n and support_sizes is not None:
            self.support_sizes = &support_sizes[0]
        return 0

    cdef void release_call_arrays(self) noexcept:
        """Forget the call's per-example arrays (the end of a call)."""
        self.example_weights = NULL
        self.support_sizes = NULL

    cdef int run_chunks(self, const char* X, const char* data, const int* indices,
                        const int* indptr, const Py_ssize_t[::1] rows, const double[::1] y,
                        const Py_ssize_t[::1] example_ids, double[::1] scores,
                        Py_ssize_t chunk) except -1:
        """The chunk loop of :meth:`run_dense` (``X``: dense rows of
        ``n_features``) and :meth:`run_csr` (``X`` NULL; ``data``,
        ``indices``, ``indptr``), on checked input of the store's dtype
        (a ``single`` learner: float32 rows, ``compute_chunk_blocks32``)."""
        cdef Py_ssize_t start = 0, stop, c, i, d = self.n_features, n = rows.shape[0]
        cdef Py_ssize_t work = 0
        cdef const char* chunk_start
        self.slot_row = np.full(self.store_rows, -1, dtype=np.intp)
        self.slot_owner = np.full(self.store_rows, -1, dtype=np.intp)
        self.slot_block_row = np.full(self.store_rows, -1, dtype=np.intp)
        self.added_slots = np.empty(self.store_rows, dtype=np.intp)
        self.n_added_slots = 0
        if self.slot_alpha.shape[0] < self.store_rows:
            self.slot_alpha = np.zeros(self.store_rows)
        self.chunk_rows = np.empty(0)
        self.chunk_rows32 = np.empty(0, dtype=np.float32)
        self.products32 = np.empty(0, dtype=np.float32)
        self.chunk_buffer = np.empty(0)
        self.chunk_self_buffer = np.empty(0)
        self.chunk_sq_buffer = np.empty(0)
        self.chunk_xt_buffer = np.empty(0)
        self.chunk_added_buffer = np.empty(0)
        self.chunk_blocks = True
        self.nonfinite = False
        self.start_polling()
        try:
            self.rebuild_slot_alpha(False)
            # no Python per chunk: the GIL only for a compaction or growth
            with nogil:     # other threads' learners run meanwhile
                while start < n:
                    c = chunk if chunk > 0 else chunk_length(self.n_sv, d)
                    stop = min(start + c, n)
                    c = stop - start
                    self.poll_interrupts()
                    self.reserve_slots(c)
                    if X == NULL:
                        chunk_start = self.densify_chunk_rows(data, indices, indptr, rows,
                                                              start, stop)
                    elif _consecutive(rows, start, stop):     # the chunk's rows in place
                        chunk_start = X + rows[start] * self.row_bytes
                    else:
                        chunk_start = self.gather_chunk_rows(X, rows, start, stop)
                    self.compute_chunk_blocks(chunk_start, c)
                    for i in range(start, stop):
                        self.t = i - start
                        if self.single:
                            self.x_dense32 = <const float*> chunk_start + self.t * d
                        else:
                            self.x_dense = <const double*> chunk_start + self.t * d
                        self.set_current(self.chunk_sq[self.t], False)
                        scores[i] = learn_example(self, i, y[i], example_ids[i], &work)
                        if self.nonfinite:
                            self.raise_nonfinite()
                    self.n_block_slots = 0
                    start = stop
        finally:
            self.n_block_slots = 0
            self.n_added_slots = 0
            self.chunk_blocks = False
            self.chunk_fma = False
            self.chunk_k = NULL
            self.chunk_self = NULL
            self.chunk_x = NULL
            self.chunk_x32 = NULL
            self.chunk_sq = NULL
            self.chunk_buffer = None
            self.chunk_self_buffer = None
            self.chunk_sq_buffer = None
            self.chunk_xt_buffer = None
            self.chunk_added_buffer = None
            self.chunk_added = NULL
            self.chunk_rows = None
            self.chunk_rows32 = None
            self.products32 = None
            self.slot_row = None
            self.slot_owner = None
            self.slot_block_row = None
            self.added_slots = None
            self.x_dense = NULL
            self.x_dense32 = NULL
            self.cur_slot = -1
        return 0

    cdef char* chunk_rows_buffer(self, Py_ssize_t n_values) except NULL nogil:
        """The chunk's row buffer, at least ``n_values`` values of the
        store's dtype."""
        if self.single:
            if self.chunk_rows32.shape[0] < n_values:
                with gil:
                    self.chunk_rows32 = np.empty(2 * n_values, dtype=np.float32)
            return <char*> &self.chunk_rows32[0]
        if self.chunk_rows.shape[0] < n_values:
            with gil:
                self.chunk_rows = np.empty(2 * n_values)
        return <char*> &self.chunk_rows[0]

    cdef float* products_buffer(self, Py_ssize_t n_values) except NULL nogil:
        """Room for ``n_values`` float32 inner products (a float32 store's
        GEMM output, widened to float64 where the kernel values go)."""
        if self.products32.shape[0] < n_values:
            with gil:
                self.products32 = np.empty(2 * n_values, dtype=np.float32)
        return &self.products32[0]

    cdef const char* gather_chunk_rows(self, const char* X, const Py_ssize_t[::1] rows,
                                       Py_ssize_t start, Py_ssize_t stop) except NULL nogil:
        """``X[rows[start:stop]]`` (dense rows of ``n_features``, of the
        store's dtype) copied into one contiguous block."""
        cdef Py_ssize_t i, n_bytes = self.row_bytes
        cdef char* out = self.chunk_rows_buffer((stop - start) * self.n_features)
        for i in range(start, stop):
            memcpy(&out[(i - start) * n_bytes], &X[rows[i] * n_bytes], n_bytes)
        return out

    cdef const char* densify_chunk_rows(self, const char* data, const int* indices,
                                        const int* indptr, const Py_ssize_t[::1] rows,
                                        Py_ssize_t start, Py_ssize_t stop) except NULL nogil:
        """The CSR rows ``rows[start:stop]`` (canonical; values of the
        store's dtype) as one contiguous dense block: read in place when
        they are consecutive rows with every column stored (their values
        are then laid out as dense rows), else made dense in the chunk
        buffer (a full row copied as it is)."""
        cdef Py_ssize_t i, j, a, b, d = self.n_features, n_bytes = self.row_bytes
        cdef Py_ssize_t item = n_bytes // d if d else 0
        cdef char* out
        cdef char* row
        a = indptr[rows[start]]
        if _consecutive(rows, start, stop) and indptr[rows[stop - 1] + 1] - a == (stop - start) * d:
            return &data[a * item]     # (canonical rows hold at most d values each)
        out = self.chunk_rows_buffer((stop - start) * d)
        for i in range(start, stop):
            row = &out[(i - start) * n_bytes]
            a = indptr[rows[i]]
            b = indptr[rows[i] + 1]
            if b - a == d:      # sorted, distinct, in range: columns 0 .. d-1
                memcpy(row, &data[a * item], n_bytes)
                continue
            memset(row, 0, n_bytes)
            if self.single:
                for j in range(a, b):
                    (<float*> row)[indices[j]] = (<const float*> data)[j]
            else:
                for j in range(a, b):
                    (<double*> row)[indices[j]] = (<const double*> data)[j]
        return out

    cdef int compute_chunk_blocks(self, const char* rows_data, Py_ssize_t c) except -1 nogil:
        """The squared norms of the chunk's ``c`` examples (``rows``: c x d,
        contiguous), ``chunk_sq``, computed here where the rows are in
        cache (no pass over the stream for them), and their kernel values
        against the stored rows, ``chunk_k`` (c rows of ``n_slots`` values), with
        ``rbf_kernel``'s arithmetic: inner products by GEMM, then (RBF)
        ``(-2 <x, v> + ||x||^2) + ||v||^2`` clipped at 0, times ``-gamma``,
        and NumPy's vectorized exp over the whole block (its loop called
        directly: no Python, no GIL).  The values between two examples of
        the chunk are computed when the earlier one is stored
        (:meth:`compute_self_column`): most examples never are.

        When the BLAS has OpenBLAS's small-matrix kernels and the product
        fits them (``_cpu.small_gemm``, the chunks :func:`chunk_length`
        picks where it can), the GEMM reads the chunk transposed (d x c,
        copied here, after the norms): that layout runs without packing
        either operand, 1.7x faster than the rows as they are at c = 32
        against 100 or 500 stored rows of d = 54, the copy included.
        Larger products, and every product of a BLAS without those
        kernels, take the rows as they are: there the copy would be a loss
        (``benchmarks/bench_gemm.py``).

        On a CPU with AVX2 and FMA (:func:`skbudget._cpu.use_fma_kernels`,
        up to 256 features) the chunk is transposed (4 x 4 register
        blocks) and, unless the small-matrix kernels take the product,
        ``skb_fma_block`` multiplies it with the stored rows as they are:
        tiles of 12 examples by 4 stored rows in 12 registers, each sum one
        fused multiply-add after another from +0 (the order of OpenBLAS's
        dgemm kernels but in the edge rows of some shapes, where it rounds
        differently).  No operand is packed: 7.6 us against OpenBLAS's
        9.1 us (Haswell kernels) for 48 examples by 100 stored rows of
        d = 54, the transposition included.  (The small-matrix kernels,
        AVX-512 on SkylakeX-class cores, were not measured against it.)

        A float32 store (``single``): :meth:`compute_chunk_blocks32`."""
        if self.single:
            return self.compute_chunk_blocks32(<const float*> rows_data, c)
        cdef const double* rows = <const double*> rows_data
        cdef Py_ssize_t n = self.n_slots, d = self.n_features
        cdef double* sq_norms
        cdef double* rows_t = NULL
        cdef bint fma = fma_kernels_for(d)
        cdef bint small = small_gemm(c, n, d)
        cdef bint transposed = fma or small
        cdef Py_ssize_t n_transposed = c * d + SKB_FMA_PADDING if transposed else 0
        self.ensure_chunk_buffers(c, n_transposed, c * c if fma else 0)
        if fma:
            self.chunk_added = &self.chunk_added_buffer[0]
        sq_norms = &self.chunk_sq_buffer[0]
        if transposed:
            rows_t = &self.chunk_xt_buffer[0]
        skb_row_norms(rows, c, d, sq_norms)     # (dense_dot's arithmetic)
        if transposed:
            skb_transpose(rows, c, d, rows_t, c)
        self.start_chunk_block(c, fma)
        self.chunk_x = rows
        if n == 0:
            return 0
        if small:
            _gemm_transposed(rows_t, c, _row64(self, 0), n, d, self.chunk_k)
        elif fma:
            skb_fma_block(rows_t, c, c, _row64(self, 0), n, d, self.chunk_k, avx512_tiles())
        else:
            _gemm_nt(rows, c, _row64(self, 0), n, d, self.chunk_k, n)
        return self.finish_chunk_block()

    cdef int ensure_chunk_buffers(self, Py_ssize_t c, Py_ssize_t n_transposed,
                                  Py_ssize_t n_added) except -1 nogil:
        """The chunk's buffers, grown (never shrunk) to hold ``c`` examples
        against the ``n_slots`` stored rows (``chunk_buffer``, with room
        for the rows the chunk stores), their Gram matrix and squared
        norms, and, only when the chunk's arithmetic uses them,
        ``n_transposed`` values of the transposed chunk and ``n_added``
        of the rows it adds (float64's FMA kernels)."""
        cdef Py_ssize_t n = self.n_slots
        if (self.chunk_buffer.shape[0] < c * n or self.chunk_self_buffer.shape[0] < c * c
                or self.chunk_sq_buffer.shape[0] < c
                or self.chunk_xt_buffer.shape[0] < n_transposed
                or self.chunk_added_buffer.shape[0] < n_added):
            with gil:
                self.chunk_buffer = np.empty(2 * c * max(n, 8))
                self.chunk_self_buffer = np.empty(c * c)
                self.chunk_sq_buffer = np.empty(c)
                if self.chunk_xt_buffer.shape[0] < n_transposed:
                    self.chunk_xt_buffer = np.empty(n_transposed)
                if self.chunk_added_buffer.shape[0] < n_added:
                    self.chunk_added_buffer = np.empty(n_added)
        return 0

    cdef void start_chunk_block(self, Py_ssize_t c, bint fma) noexcept nogil:
        """The chunk's state once its ``c`` rows' squared norms are in
        ``chunk_sq_buffer``: its blocks in the chunk buffers, against the
        ``n_slots`` stored rows, nothing added or computed yet."""
        self.n_added_rows = 0
        self.chunk_k = &self.chunk_buffer[0]
        self.chunk_self = &self.chunk_self_buffer[0]
        self.chunk_sq = &self.chunk_sq_buffer[0]
        self.gram_until = 0
        self.chunk_fma = fma
        self.chunk_len = c
        self.n_block_slots = self.n_slots
        self.n_added_slots = 0

    cdef int finish_chunk_block(self) except -1 nogil:
        """The chunk's inner products in ``chunk_k`` -> its kernel values
        (``rbf_kernel``'s arithmetic, then NumPy's exp / power / tanh)."""
        cdef Py_ssize_t c = self.chunk_len, n = self.n_block_slots
        cdef uint64_t flags
        if self.kspec.kind == RBF_KERNEL:   # row i: example i against every stored row
            flags = skb_rbf_block_arguments(self.chunk_k, c, n, self.chunk_sq,
                                            &self.store_sq[0], -self.kspec.gamma)
        else:                               # elementwise: the block as one row
            flags = _kernel_arguments(&self.kspec, self.chunk_k, c * n, NULL, NULL, True)
        return self.finish_kernel_values(self.chunk_k, c * n, flags)

    cdef int compute_chunk_blocks32(self, const float* rows, Py_ssize_t c) except -1 nogil:
        """:meth:`compute_chunk_blocks` for a float32 store: the rows' squared
        norms from their float32 values summed in float64 (``skb_row_norms_f32``),
        the inner products with the stored rows by one ``sgemm`` (float32:
        half the bytes of ``dgemm``'s operands and twice its products per
        instruction), widened to float64, then the same kernel arithmetic
        in float64.  The values between two examples of the chunk come
        from ``sgemm`` too (:meth:`compute_self_column`)."""
        cdef Py_ssize_t i, n = self.n_slots, d = self.n_features
        cdef float* products
        self.ensure_chunk_buffers(c, 0, 0)
        skb_row_norms_f32(rows, c, d, &self.chunk_sq_buffer[0])
        self.start_chunk_block(c, False)
        self.chunk_x32 = rows
        if n == 0:
            return 0
        products = self.products_buffer(c * n)
        _sgemm_nt(rows, c, _row32(self, 0), n, d, products, n)
        for i in range(c * n):
            self.chunk_k[i] = products[i]
        return self.finish_chunk_block()

    cdef int compute_self_column(self, Py_ssize_t first) except -1 nogil:
        """k(x_t, x_first) for the chunk's examples ``t`` after ``first``
        (which was just stored), into ``chunk_self[first * c + t]``.

        Their inner products come from the chunk's Gram matrix
        (``chunk_self``, rows ``c`` apart, so row ``first`` lies where its
        column goes), computed ``GRAM_ROWS`` rows at a time when an example
        of a row not yet computed is stored: rows ``first ..
        first + GRAM_ROWS - 1`` against the examples from ``first`` on, one
        GEMM.  A GEMM per insertion, ``m x 1``, costs a call and, unless the
        BLAS has small-matrix kernels, the packing of both operands: about
        0.3 us at d = 54, for 40 % of the examples; 16 rows at a time was
        the fastest of 4 - 256 at d = 2 and 54 (B = 100, 500), within the
        noise at d = 784.  A GEMV would be cheaper still, but it rounds
        unlike the GEMM of every other kernel value (exactly duplicated
        examples then score differently).  On a CPU with AVX2 and FMA
        (:func:`skbudget._cpu.use_fma_kernels`, up to 256 features) they
        come instead from ``skb_fma_dots_rows``, from the transposed
        chunk, summed as the chunk's block is: for the stored example
        only, or, with AVX-512 tiles, for it and the
        ``FMA_GRAM_ROWS - 1`` examples after it (the later examples'
        columns only), which cost about as much (``skb_fma_dots_rows``:
        one example's chains wait on the latency of the fused
        multiply-adds).  Then the arithmetic of
        :meth:`compute_chunk_blocks`, on this row only."""
        cdef Py_ssize_t i, j, rows, d = self.n_features, c = self.chunk_len, m = c - first - 1
        cdef double* out = &self.chunk_self[first * c + first + 1]
        cdef float* products
        cdef bint avx512
        if m <= 0:
            return 0
        if self.single:         # float32 store: sgemm, then widened
            if first >= self.gram_until:
                rows = min(GRAM_ROWS, c - first)
                self.gram_until = first + rows
                products = self.products_buffer(rows * (c - first))
                _sgemm_nt(&self.chunk_x32[first * d], rows, &self.chunk_x32[first * d],
                          c - first, d, products, c - first)
                for i in range(rows):
                    for j in range(c - first):
                        self.chunk_self[(first + i) * c + first + j] = products[i * (c - first) + j]
        elif self.chunk_fma:     # (the chunk is transposed)
            if first >= self.gram_until:
                avx512 = avx512_tiles()
                rows = min(FMA_GRAM_ROWS if avx512 else 1, c - first)
                self.gram_until = first + rows
                skb_fma_dots_rows(&self.chunk_x[first * d], rows, &self.chunk_xt_buffer[first + 1],
                                  c, m, d, out, c, avx512)
        elif first >= self.gram_until:
            rows = min(GRAM_ROWS, c - first)
            self.gram_until = first + rows
            _gemm_nt(&self.chunk_x[first * d], rows, &self.chunk_x[first * d], c - first, d,
                     &self.chunk_self[first * c + first], c)
        return self.finish_kernel_values(
            out, m, _kernel_arguments(&self.kspec, out, m, &self.chunk_sq[first + 1],
                                      &self.chunk_sq[first], False))

    cdef int finish_kernel_values(self, double* values, Py_ssize_t n,
                                  uint64_t flags) except -1 nogil:
        """Kernel arguments -> kernel values in place: NumPy's exp / power /
        tanh.  ``flags`` (bit 63) says an argument was not valid; a poly
        power is checked after it (finite arguments give finite rbf and
        sigmoid values, which the rounds read unchecked)."""
        if self.kspec.kind == RBF_KERNEL:
            exp_inplace(values, n)
        elif self.kspec.kind == POLY_KERNEL:
            power_inplace(values, n, self.kernel_degree)
            flags |= skb_nonfinite_flags(values, n)
        elif self.kspec.kind == SIGMOID_KERNEL:
            tanh_inplace(values, n)
        if flags >> 63:
            self.raise_nonfinite()
        return 0

    def run_sparse(self, data, const int[::1] indices, const int[::1] indptr,
                   const Py_ssize_t[::1] rows, const double[::1] y,
                   const Py_ssize_t[::1] example_ids, double[::1] scores, Py_ssize_t chunk,
                   const double[::1] weights=None, Py_ssize_t[::1] support_sizes=None):
        """:meth:`run_dense` for CSR input (``data``, ``indices``,
        ``indptr``; ``data`` of the store's dtype), inner products by a
        gather over each row's nonzeros."""
        self._check_stream(indptr.shape[0] - 1, rows, y, example_ids, scores)
        cdef Py_ssize_t start, stop, i, a, b, n = rows.shape[0], work = 0
        cdef const char* values = _input_data(self, data, 1)
        cdef const double* values64 = <const double*> values
        cdef const float* values32 = <const float*> values
        cdef double xx
        _check_csr_rows(data, indices, indptr, rows, self.n_features)
        chunk = max(chunk, 1)
        self.x_dense = NULL
        self.use_call_arrays(weights, support_sizes, n)
        self.start_polling()
        try:
            for start in range(0, n, chunk):
                stop = min(start + chunk, n)
                self.reserve_slots(stop - start)
                with nogil:
                    for i in range(start, stop):
                        self.t = i - start
                        a = indptr[rows[i]]
                        b = indptr[rows[i] + 1]
                        self.x_nnz = b - a
                        self.x_indices = &indices[a] if b > a else NULL
                        if self.single:
                            self.x_values32 = values32 + a if b > a else NULL
                            xx = skb_dot16_f32(self.x_values32, self.x_values32, b - a)
                        else:
                            self.x_values = values64 + a if b > a else NULL
                            xx = dense_dot(self.x_values, self.x_values, b - a)
                        self.set_current(xx, True)
                        scores[i] = learn_example(self, i, y[i], example_ids[i], &work)
        finally:
            self.release_call_arrays()
            self.x_values = NULL
            self.x_values32 = NULL
            self.x_indices = NULL
            self.x_nnz = 0
            self.cur_slot = -1

    # ------------------------------------------------------------------
    # the stream loop, block mode: one chunk per call
    # ------------------------------------------------------------------
    def process_chunk(self, const double[:, ::1] K, Py_ssize_t pool_column, Py_ssize_t n_old,
                      const double[::1] y, const Py_ssize_t[::1] example_ids,
                      double[::1] scores, D=None, const double[::1] weights=None,
                      Py_ssize_t[::1] support_sizes=None):
        """Run the policy over one chunk of ``n`` examples; ``scores[t]``
        gets f(x_t) before its update (``support_sizes[t]``, if given, the
        support size after it).

        ``K`` (``n`` rows) holds the kernel values of the chunk's examples:
        against this learner's ``n_old`` pool vectors in the columns from
        ``pool_column`` on, against the chunk's own examples in its last
        ``n`` columns (``K`` may hold other learners' pools in between, so
        that one block serves every learner).  ``D``, when the policy needs
        squared distances, is laid out as ``K``.  ``y`` holds the binary
        labels in {-1, +1}; ``weights`` as in :meth:`run_dense`."""
        cdef Py_ssize_t t, n = K.shape[0], work = 0
        if self.uses_store:
            raise RuntimeError("process_chunk is the block mode; this learner uses its store")
        _check_chunk(K, pool_column, n_old, y, example_ids, scores, D)
        self.check_state(n_old)
        self.K_chunk = K
        if D is not None:
            self.D_chunk = D
        self.n_old = n_old
        self.pool_column = pool_column
        self.chunk_column = K.shape[1] - n
        self.use_call_arrays(weights, support_sizes, n)
        self.start_polling()
        try:
            for t in range(n):
                self.t = t
                self.k_tt = K[t, self.chunk_column + t]
                self.gather_row()
                self.row_ready = True
                scores[t] = learn_example(self, t, y[t], example_ids[t], &work)
        finally:
            self.release_call_arrays()

    def finish_chunk(self):
        """Renumber the referenced pool slots after a chunk (block mode).

        Returns a boolean mask over the ``n_old + chunk`` slots of the chunk
        that just ran: the vectors to keep, in their new slot order.
        """
        if self.K_chunk is None:
            raise ValueError("finish_chunk called without a chunk (process_chunk first)")
        cdef Py_ssize_t n_total = self.n_old + self.K_chunk.shape[0]
        self.check_state(n_total)
        mark = np.empty(n_total, dtype=np.uint8)
        new_slot = np.empty(n_total, dtype=np.intp)
        cdef unsigned char[::1] mark_view = mark
        cdef Py_ssize_t[::1] new_slot_view = new_slot
        if n_total:
            self.renumber_slots(n_total, &mark_view[0], &new_slot_view[0])
        self.K_chunk = None
        self.D_chunk = None
        return new_slot >= 0

    # ------------------------------------------------------------------
    # read-out and persistence
    # ------------------------------------------------------------------
    def support_order(self):
        """Cells of the support vectors, oldest first."""
        return np.asarray(self.order)[:self.n_sv].copy()

    def support_slots(self):
        """Slots of the support vectors, oldest first."""
        return np.asarray(self.slot)[self.support_order()]

    def support_rows(self):
        """Features of the support vectors, oldest first (store mode)."""
        return np.asarray(self.store)[self.support_slots()]

    def stored_rows(self, slots):
        """Features of the given slots (store mode)."""
        return np.asarray(self.store)[np.asarray(slots, dtype=np.intp)]

    def coefficients(self):
        """Signed coefficients of the support vectors, oldest first."""
        return np.asarray(self.alpha)[self.support_order()] * self.scale

    def support_margins(self):
        """f(x_i) for every support vector (needs ``track_margins``)."""
        return np.asarray(self.margin)[self.support_order()] * self.scale + self.intercept

    def gram_matrix(self):
        """Gram matrix of the support set, oldest first (needs ``track_gram``),
        read from each pair's newer vector's row (the entries every policy
        keeps; see ``CrammerKandolaSingerLearner``)."""
        cells = self.support_order()
        by_newer = np.tril(np.asarray(self.gram)[np.ix_(cells, cells)])
        return by_newer + np.tril(by_newer, -1).T

    # the attributes that make up a learner's state (pickling, the
    # partial_fit snapshot); a policy with state of its own extends the tuple
    _state_names = (
        "n_sv", "capacity", "n_free", "scale", "intercept", "track_gram",
        "track_margins", "n_updates", "rng", "order", "free_cells", "alpha",
        "slot", "kself", "k_row", "margin", "gram", "uses_store", "kernel_kind",
        "kernel_gamma", "kernel_coef0", "kernel_degree", "n_features", "store",
        "store_sq", "n_slots", "first_example_id",
    )

    def get_state(self):
        """Everything needed to rebuild the learner (arrays copied)."""
        return {name: _copied(getattr(self, name)) for name in self._state_names}

    def set_state(self, state):
        missing = [name for name in self._state_names if name not in state]
        if missing:
            raise ValueError(f"{type(self).__name__}: the saved state has no {missing}; the "
                             f"file is corrupted or was written by another version of skbudget.")
        for name in self._state_names:
            setattr(self, name, _copied(state[name]))
        self._sync_kernel()
        self.bitgen = NULL          # rng may be another generator now

    # Persistence.  pickle rebuilds a learner as ``type(self)()`` then
    # ``__setstate__(state)``; skops.io (and copy protocols that skip
    # ``__init__``) as ``cls.__new__(cls)`` then ``__setstate__(state)`` with
    # the state ``__getstate__`` gave.  ``__new__`` leaves every memoryview
    # uninitialized (and ``capacity`` 0, which ``__init__`` never does), so
    # ``__setstate__`` runs the default ``__init__`` first in that case: the
    # scratch arrays outside ``_state_names`` then exist as after unpickling.
    def __reduce__(self):
        return (type(self), (), self.get_state())

    def __getstate__(self):
        return self.get_state()

    def __setstate__(self, state):
        if self.capacity == 0:      # made by __new__, not __init__
            type(self).__init__(self)
        self.set_state(state)


def initial_capacity(Py_ssize_t limit):
    """The cells a learner starts with when it will hold at most ``limit``
    (its :meth:`OnlineLearner.capacity_limit`; -1: no limit): all of them
    when ``limit <= UPFRONT_CELLS`` (a small budget's few growths cost
    more than its cells: at B = 100, growing 8 -> 16 -> 32 -> 64 -> 102
    reallocated and copied every per-cell array and the Gram matrix four
    times, 3-5 % of a 5 000-example epoch at d = 2), else
    ``INITIAL_CAPACITY``, the arrays then growing with the support set
    (:meth:`OnlineLearner.grow_when_full`): a large budget costs memory
    only as its support set fills."""
    if 0 <= limit <= UPFRONT_CELLS:
        return max(1, limit)
    return INITIAL_CAPACITY


def size_problem(arrays, Py_ssize_t n, str what="cells"):
    """A description of the first of ``arrays`` (name -> array) whose first
    dimension is not ``n``, or None (entry checks of :meth:`check_state`)."""
    for name, arr in arrays.items():
        if arr is None or arr.shape[0] != n:
            return f"{name} has {None if arr is None else arr.shape[0]} {what}, not {n}"
    return None


def square_problem(str name, arr, Py_ssize_t n):
    """A description unless ``arr`` is an ``n x n`` matrix, else None."""
    if arr is None or arr.shape[0] != n or arr.shape[1] != n:
        return f"{name} is not {n} x {n}"
    return None


def _check_chunk(K, pool_column, n_old, y, example_ids, scores, D):
    """Raise ValueError unless the blocks of one chunk have matching sizes
    (``K``: the chunk's ``n`` rows; the pool's ``n_old`` columns from
    ``pool_column`` on, before the chunk's own last ``n``)."""
    n = K.shape[0]
    sizes = {"y": y.shape[0], "example_ids": example_ids.shape[0], "scores": scores.shape[0]}
    for name, size in sizes.items():
        if size != n:
            raise ValueError(f"chunk blocks disagree: {name} = {size}, chunk length {n}")
    if pool_column < 0 or n_old < 0 or pool_column + n_old > K.shape[1] - n:
        raise ValueError(f"the pool's columns {pool_column} .. {pool_column + n_old - 1} do not "
                         f"lie before the chunk's last {n} of K's {K.shape[1]} columns")
    if D is not None and D.shape != K.shape:
        raise ValueError(f"D has shape {D.shape}, K {K.shape}: they must match")


cdef inline bint _moves_into_a_moving_row(const Py_ssize_t* new_slot, Py_ssize_t s,
                                          Py_ssize_t n) noexcept nogil:
    """Whether row ``s`` moves (``new_slot``: -1 dropped) into a row of the
    ``n`` that moves itself."""
    cdef Py_ssize_t t = new_slot[s]
    return t >= 0 and t != s and t < n and new_slot[t] >= 0 and new_slot[t] != t


cdef uint64_t _kernel_arguments(const KernelSpec* k, double* dots, Py_ssize_t n,
                                const double* xx, const double* vv, bint one_x) noexcept nogil:
    """Inner products ``dots[j] = <x_j, v_j>`` -> the argument of the
    kernel's elementwise function, in place; bit 63 of the result is set if
    an argument would give a non-finite kernel value (NaN for rbf and
    sigmoid, NaN or infinity for linear; poly's power is checked after it).
    RBF: ``-gamma ||x_j - v_j||^2`` with the squared norms ``xx``, ``vv``
    (``one_x``: ``dots`` holds one example against ``n`` vectors, else ``n``
    examples against one vector, see ``skb_rbf_arguments`` in ``_vector_loops.h``); poly and
    sigmoid: ``gamma <x_j, v_j> + coef0``; linear: unchanged."""
    if k.kind == RBF_KERNEL:
        return skb_rbf_arguments(dots, n, xx, vv, one_x, -k.gamma)
    if k.kind == LINEAR_KERNEL:
        return skb_nonfinite_flags(dots, n)
    return skb_affine_arguments(dots, n, k.gamma, k.coef0)


cdef void _gemm_nt(const double* A, Py_ssize_t m, const double* B, Py_ssize_t n,
                   Py_ssize_t k, double* C, Py_ssize_t ldc) noexcept nogil:
    """C (m x n, rows ``ldc`` apart) = A (m x k) B (n x k)^T, A and B
    C-contiguous (BLAS dgemm on the column-major transposes: C^T = B A^T)."""
    cdef int mm = <int>n, nn = <int>m, kk = <int>k, ld = <int>ldc
    cdef double one = 1.0, zero = 0.0
    cdef char trans = b'T', no_trans = b'N'
    dgemm(&trans, &no_trans, &mm, &nn, &kk, &one, <double*>B, &kk, <double*>A, &kk,
          &zero, C, &ld)


cdef void _sgemm_nt(const float* A, Py_ssize_t m, const float* B, Py_ssize_t n,
                    Py_ssize_t k, float* C, Py_ssize_t ldc) noexcept nogil:
    """:func:`_gemm_nt` in float32 (BLAS sgemm)."""
    cdef int mm = <int>n, nn = <int>m, kk = <int>k, ld = <int>ldc
    cdef float one = 1.0, zero = 0.0
    cdef char trans = b'T', no_trans = b'N'
    sgemm(&trans, &no_trans, &mm, &nn, &kk, &one, <float*>B, &kk, <float*>A, &kk,
          &zero, C, &ld)


cdef void _gemm_transposed(const double* A_t, Py_ssize_t m, const double* B, Py_ssize_t n,
                           Py_ssize_t k, double* C) noexcept nogil:
    """C (m x n, C-contiguous) = A B^T, from ``A_t`` = A^T (k x m) and B (n x
    k), both C-contiguous (BLAS dgemm on the column-major transposes: C^T =
    B A^T, with both operands transposed)."""
    cdef int mm = <int>n, nn = <int>m, kk = <int>k
    cdef double one = 1.0, zero = 0.0
    cdef char trans = b'T'
    dgemm(&trans, &trans, &mm, &nn, &kk, &one, <double*>B, &kk, <double*>A_t, &nn,
          &zero, C, &mm)


cdef const char* _input_data(OnlineLearner learner, arr, int ndim) except NULL:
    """The data of ``arr`` (an input of a compiled call), checked: a
    C-contiguous NumPy array of ``ndim`` dimensions and of the store's
    dtype (float32 for a ``single`` learner, else float64), so that the
    loops read it as the rows they store."""
    cdef object dtype = np.float32 if learner.single else np.float64
    if (not isinstance(arr, np.ndarray) or arr.ndim != ndim or arr.dtype != dtype
            or not arr.flags.c_contiguous):
        raise ValueError(f"the learner's input must be a C-contiguous {ndim}-D "
                         f"{np.dtype(dtype)} array (its store's dtype); got "
                         f"{getattr(arr, 'ndim', '?')}-D {getattr(arr, 'dtype', type(arr))}")
    if arr.size == 0:       # (no row to read: any pointer but NULL)
        return <const char*> &MAX_UINT32
    return <const char*> cnp.PyArray_DATA(<cnp.ndarray> arr)


cdef inline bint _consecutive(const Py_ssize_t[::1] rows, Py_ssize_t start,
                              Py_ssize_t stop) noexcept nogil:
    """Whether ``rows[start:stop]`` are consecutive row numbers."""
    cdef Py_ssize_t i
    for i in range(start + 1, stop):
        if rows[i] != rows[i - 1] + 1:
            return False
    return True


cpdef Py_ssize_t chunk_length(Py_ssize_t n_stored, Py_ssize_t n_features) noexcept nogil:
    """Examples per chunk of the dense stream loop.  A chunk of ``c``
    examples against ``p`` stored rows costs ``c p`` kernel values (as
    prediction), up to ``c`` more per example stored during it (its column
    against the examples after it), and a fixed cost (a GEMM call that
    packs the stored rows unless small-matrix kernels run it, the exp
    loop).  ``c = 32`` when its GEMM fits OpenBLAS's small-matrix kernels
    (``_cpu.small_gemm``), else ``c = p / 4`` in [48, 256].
    Measured with ``benchmarks/bench_gemm.py`` and one epoch of the budget
    algorithms (B = 100 and 500; d = 2, 54 and 784).  With small-matrix
    kernels, 32 is within the timing noise of the best of 16 - 128 wherever
    it fits (at B = 500, d = 54 chunks of 125 cost 10 - 20 % more: their
    product does not fit; at d = 784, B = 500 larger chunks stay better).
    Without them (Haswell kernels), 48 - 64 examples are 2 - 6 % faster
    than 32 at B = 100, and 64 - 125 at B = 500.  With the engine's FMA
    kernels (:func:`skbudget._cpu.use_fma_kernels`, where the small-matrix kernels do
    not take the chunk) no product is packed and the same
    ``p / 4`` in [48, 256] is the fastest (36 - 132 within the noise at
    B = 100 and 500, d = 54), rounded down to whole tiles of
    ``FMA_TILE_EXAMPLES`` = 12 examples (a chunk of 32 fills a third of
    its last tile, and cost 3 - 4 % more than 24 or 48)."""
    cdef Py_ssize_t c = min(max(n_stored // 4, 48), 256)
    if small_gemm(32, n_stored, n_features):
        return 32
    if fma_kernels_for(n_features):
        return c - c % FMA_TILE_EXAMPLES
    return c


def _copied(value):
    """A copy of an array or memoryview; any other value as it is."""
    return np.array(value) if hasattr(value, "shape") else value


def _resized(arr, Py_ssize_t n):
    """A copy of the 1-D ``arr`` with ``n`` entries (old ones kept).  A
    contiguous array of numbers is copied with one memcpy: NumPy's slice
    assignment costs about 2 us however few the entries, and a learner's
    growth resizes a dozen arrays."""
    arr = np.asarray(arr)
    out = np.zeros(n, dtype=arr.dtype)
    cdef cnp.ndarray src = arr, dst = out
    cdef Py_ssize_t m
    if cnp.PyArray_NDIM(src) != 1:      # (a 0-d array has no length to read)
        raise ValueError(f"_resized takes a 1-D array; got {cnp.PyArray_NDIM(src)} dimensions")
    if cnp.PyArray_IS_C_CONTIGUOUS(src) and cnp.PyArray_ISNUMBER(src):  # (no objects to copy)
        m = min(n, cnp.PyArray_DIM(src, 0))
        if m > 0:
            memcpy(cnp.PyArray_DATA(dst), cnp.PyArray_DATA(src), m * cnp.PyArray_ITEMSIZE(src))
        return out
    m = min(n, arr.shape[0])
    out[:m] = arr[:m]
    return out


def _grown_index(index, Py_ssize_t position):
    """A copy of the 1-D ``index`` long enough for ``position``, new
    entries -1 (tables indexed by example identity)."""
    n = index.shape[0]
    grown = np.full(max(2 * n, position + 1), -1, dtype=np.intp)
    grown[:n] = index
    return grown


def _check_csr_rows(const floating[::1] data, const int[::1] indices, const int[::1] indptr,
                    const Py_ssize_t[::1] rows, Py_ssize_t n_features, bint canonical=False,
                    bint known_canonical=False):
    """Raise ValueError unless the CSR rows ``rows`` can be read safely
    (row numbers, their ``indptr`` range and column indices; O(their nnz))
    and, with ``canonical``, have strictly increasing column indices.

    ``known_canonical``: the caller knows the rows are canonical; a row
    with every column stored is then not checked further (``run_csr``
    reads it without its indices) and the other rows' indices are checked
    to be in range, each of them (safety does not rest on the caller)."""
    cdef Py_ssize_t i, j, r, a, b, n_rows = indptr.shape[0] - 1, nnz = data.shape[0]
    cdef bint bad = indices.shape[0] != nnz
    cdef int unsorted = 0, outside = 0
    with nogil:
        for i in range(rows.shape[0]):
            r = rows[i]
            if bad or r < 0 or r >= n_rows or indptr[r] < 0 or indptr[r] > indptr[r + 1] \
                    or indptr[r + 1] > nnz:
                bad = True
                break
            a = indptr[r]
            b = indptr[r + 1]
            if a == b or (known_canonical and b - a == n_features):
                continue
            if canonical and not known_canonical:   # increasing: in range when its ends are
                outside |= (indices[a] < 0) | (indices[b - 1] >= n_features)
                for j in range(a + 1, b):
                    unsorted |= indices[j] <= indices[j - 1]
            else:
                for j in range(a, b):
                    outside |= <size_t>indices[j] >= <size_t>n_features
    bad = bad or outside != 0
    if bad:
        raise ValueError("malformed CSR matrix or row index out of range")
    if unsorted:
        raise ValueError("the CSR rows must be canonical (sorted column indices, no "
                         "duplicates): call X.sum_duplicates() first")


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


def csr_parts(const floating[:, ::1] rows):
    """``(data, indices, indptr)`` of the CSR matrix of the dense ``rows``
    (explicit zeros dropped, sorted int32 indices; ``data`` of the rows'
    dtype, float64 or float32): two passes over the rows, the count and
    the copy."""
    cdef Py_ssize_t i, j, nnz = 0, n_rows = rows.shape[0], n_cols = rows.shape[1]
    indptr_arr = np.empty(n_rows + 1, dtype=np.int32)
    cdef int[::1] indptr = indptr_arr
    indptr[0] = 0
    with nogil:
        for i in range(n_rows):
            for j in range(n_cols):
                nnz += rows[i, j] != 0
            indptr[i + 1] = <int>nnz
    data_arr = np.empty(nnz, dtype=np.float64 if floating is double else np.float32)
    indices_arr = np.empty(nnz, dtype=np.int32)
    cdef floating[::1] data = data_arr
    cdef int[::1] indices = indices_arr
    nnz = 0
    with nogil:
        for i in range(n_rows):
            for j in range(n_cols):
                if rows[i, j] != 0:
                    data[nnz] = rows[i, j]
                    indices[nnz] = <int>j
                    nnz += 1
    return data_arr, indices_arr, indptr_arr

