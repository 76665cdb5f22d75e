# cython: language_level=3
"""Declarations of the shared online engine (see ``_engine.pyx``).

Every algorithm is a subclass of :class:`OnlineLearner` that overrides
``process_example`` (and, if it keeps per-support-vector arrays of its own,
``grow``, ``on_remove``, ``mark_extra_slots`` and ``remap_extra_slots``; its
state is listed in ``_state_names``; values it derives from the margins in
a replacement's pass, ``replace_margins`` and ``forget_derived_values``).
"""

from libc.stdint cimport uint32_t, uint64_t

from skbudget._kernel_rows cimport KernelSpec

# a byte another thread may set while the loop runs (read anew each time)
cdef extern from *:
    """
    typedef volatile unsigned char skb_stop_flag;
    """
    ctypedef unsigned char skb_stop_flag


# numpy's C interface to a bit generator (numpy/random/bitgen.h)
cdef struct bitgen_t:
    void *state
    uint64_t (*next_uint64)(void *st) noexcept nogil
    uint32_t (*next_uint32)(void *st) noexcept nogil
    double (*next_double)(void *st) noexcept nogil
    uint64_t (*next_raw)(void *st) noexcept nogil


cdef class OnlineLearner:
    # ---- the support set ---------------------------------------------------
    # Support vectors live in *cells* (rows of the per-cell arrays below);
    # ``order[0:n_sv]`` lists their cells oldest first.  A removed vector's
    # cell goes back on the free stack, so removal never moves memory.
    cdef public Py_ssize_t n_sv
    cdef public Py_ssize_t capacity
    cdef public Py_ssize_t[::1] order          # cells, oldest first
    cdef public Py_ssize_t[::1] free_cells     # stack of unused cells
    cdef public Py_ssize_t n_free
    cdef public double[::1] alpha              # coefficient of each cell (times scale; 0 if free)
    cdef public Py_ssize_t[::1] slot           # slot of each cell's vector
    cdef public double[::1] kself              # k(x_i, x_i) of each cell
    cdef public double scale            # global factor on every alpha
    cdef public double intercept
    # optional bookkeeping shared by several policies
    cdef public bint track_gram         # keep gram[c, c'] = k(x_c, x_c')
    cdef public bint track_margins      # keep margin[c] = sum alpha k(x_c', x_c)
    cdef public double[:, ::1] gram
    cdef public double[::1] margin             # unscaled: f(x_c) = scale * margin[c]; +inf if free

    # ---- the online record -------------------------------------------------
    cdef public long long n_updates
    # identity of the first example of the current training call (see
    # start_call): tables keyed by example identity cover one call only
    cdef public Py_ssize_t first_example_id

    # ---- randomness (numpy RandomState, drawn from only where a rule says)
    cdef public object rng
    cdef bitgen_t* bitgen               # rng's bit generator (see random_below)
    cdef object bitgen_owner            # the rng it belongs to
    # rng's state before the first draw of the current call (see begin_call):
    # taken only by calls that draw, for the rollback of a failed call
    cdef public object rng_at_call_start
    cdef bint rng_saved

    # ---- the feature store (store mode) ----------------------------------
    # The learner keeps the features of every vector it references (support
    # vectors, merged vectors, a policy's extra vectors) as dense rows
    # ``store[slot]`` with ``store_sq[slot] = ||row||^2``; kernel values are
    # computed in compiled code (``_kernel_rows``).  In block mode
    # (callables, other kernels, very wide sparse input) Python keeps the
    # rows and passes kernel blocks per chunk instead.
    cdef public bint uses_store
    cdef public int kernel_kind
    cdef public double kernel_gamma, kernel_coef0, kernel_degree
    cdef public Py_ssize_t n_features
    # the rows: a C-contiguous float64 array, or float32 (``single``: the
    # learner was given float32 input), set through the ``store`` property,
    # which keeps the raw view below (``row_bytes`` per row, ``store_rows``)
    cdef object store_array
    cdef char* store_data
    cdef Py_ssize_t store_rows
    cdef Py_ssize_t row_bytes
    cdef readonly bint single
    cdef public double[::1] store_sq
    cdef public Py_ssize_t n_slots
    cdef KernelSpec kspec

    # ---- the current example -------------------------------------------------
    cdef Py_ssize_t t                   # its row in the current chunk
    cdef public double[::1] k_row       # k(x_t, x_c) per cell, after gather
    cdef double k_tt                    # k(x_t, x_t)
    cdef double xx                      # ||x_t||^2 (store mode)
    cdef const double* x_dense          # x_t, dense input (store mode)
    cdef const double* x_values         # x_t, sparse input: values ...
    cdef const float* x_dense32         # (the same, float32 store: ``single``)
    cdef const float* x_values32
    cdef const int* x_indices           # ... their columns ...
    cdef Py_ssize_t x_nnz               # ... and how many
    cdef Py_ssize_t cur_slot            # slot holding x_t, or -1 (store mode)
    # the weight of x_t's loss (sample_weight times class_weight; 1 without
    # weights): a policy that takes weights reads it in process_example.
    # ``example_weights`` is the current call's weights (one per example of
    # ``y``), NULL when the call has none (then ``example_weight`` stays 1)
    cdef double example_weight
    cdef const double* example_weights
    # the current call's output of support sizes: entry i gets ``n_sv``
    # after example i's round (NULL: the caller asked for none); the online
    # record reads them at its curve's points (doc/engine.md, "The online
    # record")
    cdef Py_ssize_t* support_sizes
    # store mode, dense input: one chunk's kernel values.  One GEMM gives
    # k(x_t, store[s]) = chunk_k[t * n_block_slots + s] for s < n_block_slots;
    # when example t' of the chunk is stored (slot_row[s] = t' for its slot,
    # else -1), k(x_t, x_t') = chunk_self[t' * chunk_len + t] for t > t'
    # (rows below gram_until not yet stored hold the chunk's inner products,
    # see compute_self_column)
    cdef double* chunk_k
    cdef double* chunk_self
    cdef Py_ssize_t gram_until
    cdef const double* chunk_x          # the chunk's rows (chunk_len x n_features)
    cdef const float* chunk_x32         # (float32 store)
    cdef float[::1] chunk_rows32        # a chunk's rows, gathered or made dense (float32)
    cdef float[::1] products32          # float32 store: a GEMM's inner products,
                                        # before they are widened into chunk_k / chunk_self
    cdef const double* chunk_sq         # and their squared norms
    cdef Py_ssize_t chunk_len
    cdef double[::1] chunk_buffer       # the memory behind chunk_k, reused
    cdef double[::1] chunk_self_buffer  # and behind chunk_self
    cdef double[::1] chunk_sq_buffer    # and behind chunk_sq
    cdef double[::1] chunk_xt_buffer    # the chunk's rows transposed (d x c): the GEMM's operand
    cdef bint chunk_fma                 # this chunk's products: skb_fma_block / skb_fma_dots_rows
    cdef double[::1] chunk_rows         # a chunk's rows, gathered (shuffled) or made dense (CSR)
    cdef Py_ssize_t[::1] slot_row
    cdef Py_ssize_t[::1] slot_owner     # the cell given the vector of each slot added
                                        # during the chunk (-1: none yet)
    # the values of a slot added during the chunk that is no example of it
    # (a merge), against the chunk's examples from the first that asked for
    # them on: row slot_block_row[s] of chunk_added (chunk_len apart, -1:
    # none yet; kernel_as_in_block), n_added_rows of at most chunk_len rows
    cdef Py_ssize_t[::1] slot_block_row
    cdef double* chunk_added
    cdef double[::1] chunk_added_buffer
    cdef Py_ssize_t n_added_rows
    # the slots added during the chunk that hold a support vector (those
    # given a coefficient, less those whose owner was removed), ascending:
    # the rounds' passes over the chunk's new vectors skip the others
    cdef Py_ssize_t[::1] added_slots
    cdef Py_ssize_t n_added_slots
    # compaction scratch (store rows): referenced marks, old -> new slot,
    # the rows that move (each with its squared norm)
    cdef unsigned char[::1] slot_mark
    cdef Py_ssize_t[::1] slot_map
    cdef double[::1] row_scratch
    # rows 0 .. n_cell_rows - 1 hold the vectors of cells 0 .. n_cell_rows - 1
    # (zeros for free ones) since the last compact_store
    cdef Py_ssize_t n_cell_rows
    cdef Py_ssize_t n_block_slots
    cdef bint chunk_blocks
    # dense input: the round's score is one pass over the chunk's kernel
    # row, against slot_alpha[s] = alpha of the support vector in slot s
    # (0 for other slots; rebuilt per call, kept during it), and k_row is
    # only gathered when a policy asks for it (ensure_row): row_ready
    cdef double[::1] slot_alpha
    cdef bint row_ready
    cdef bint nonfinite                 # a kernel value computed in dot_row was not finite
    # block mode: the chunk's kernel block, one row per example of the
    # chunk; pool slot s is column pool_column + s, the chunk's example t
    # (slot n_old + t) column chunk_column + t
    cdef const double[:, ::1] K_chunk
    cdef const double[:, ::1] D_chunk   # squared distances, when requested
    cdef Py_ssize_t n_old               # pool slots stored before the chunk
    cdef Py_ssize_t pool_column
    cdef Py_ssize_t chunk_column

    # ---- helpers for policies ----------------------------------------------
    cdef double kernel_to_slot(self, Py_ssize_t s) noexcept nogil
    cdef double kernel_as_in_block(self, Py_ssize_t s) noexcept nogil
    cdef void compute_values_in_block(self, Py_ssize_t s, double* out,
                                      Py_ssize_t m) noexcept nogil
    cdef double sqdist_to_slot(self, Py_ssize_t s) noexcept nogil
    cdef double kernel_between_slots(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil
    cdef bint gather_row(self) noexcept nogil
    cdef int ensure_row(self) except -1 nogil
    cdef double dot_row(self) noexcept nogil
    cdef int set_alpha(self, Py_ssize_t cell, double a) except -1 nogil
    cdef Py_ssize_t current_slot(self) except -1 nogil
    cdef void blend_vectors(self, Py_ssize_t cell_a, Py_ssize_t cell_b, double h,
                            double* out) noexcept nogil
    cdef double dot16_between_slots(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil
    cdef void forget_current(self) noexcept nogil
    cdef Py_ssize_t append_current(self, double coef) except -1 nogil
    cdef Py_ssize_t append_vector(self, const double* z, double coef) except -1 nogil
    cdef int remove_at(self, Py_ssize_t pos) except -1 nogil
    cdef Py_ssize_t replace_at(self, Py_ssize_t pos, double coef) except -1 nogil
    cdef int add_to_coef(self, Py_ssize_t cell, double delta) except -1 nogil
    cdef void add_gram_row(self, Py_ssize_t cell, double a) noexcept nogil
    cdef int rescale(self, double factor) except -1 nogil
    cdef long long random_below(self, long long n) except -1 nogil
    cdef double random_uniform(self) except -1.0 nogil
    cdef int start_draw(self) except -1 nogil
    cdef Py_ssize_t example_position(self, Py_ssize_t example_id) except -1 nogil

    # ---- engine internals ----------------------------------------------------
    cdef Py_ssize_t insert_cell(self, Py_ssize_t slot, double coef, double k_self,
                                double k_now) except -1 nogil
    cdef void link_cell(self, Py_ssize_t cell, Py_ssize_t slot, double a, double k_self,
                        double k_now) noexcept nogil
    cdef int unlink_cell(self, Py_ssize_t pos) except -1 nogil
    cdef void note_added_slot(self, Py_ssize_t s) noexcept nogil
    cdef void forget_added_slot(self, Py_ssize_t s) noexcept nogil
    cdef Py_ssize_t new_slot(self) except -1 nogil
    cdef int grow_store(self) except -1
    cdef double dot_to_slot(self, Py_ssize_t s) noexcept nogil
    cdef int run_chunks(self, const char* X, const char* data, const int* indices,
                        const int* indptr, const Py_ssize_t[::1] rows, const double[::1] y,
                        const Py_ssize_t[::1] example_ids, double[::1] scores,
                        Py_ssize_t chunk) except -1
    cdef char* chunk_rows_buffer(self, Py_ssize_t n_values) except NULL nogil
    cdef float* products_buffer(self, Py_ssize_t n_values) except NULL nogil
    cdef const char* gather_chunk_rows(self, const char* X, const Py_ssize_t[::1] rows,
                                       Py_ssize_t start, Py_ssize_t stop) except NULL nogil
    cdef const char* densify_chunk_rows(self, const char* data, const int* indices,
                                        const int* indptr, const Py_ssize_t[::1] rows,
                                        Py_ssize_t start, Py_ssize_t stop) except NULL nogil
    cdef int compute_chunk_blocks(self, const char* rows, Py_ssize_t c) except -1 nogil
    cdef int compute_chunk_blocks32(self, const float* rows, Py_ssize_t c) except -1 nogil
    cdef int ensure_chunk_buffers(self, Py_ssize_t c, Py_ssize_t n_transposed,
                                  Py_ssize_t n_added) except -1 nogil
    cdef void start_chunk_block(self, Py_ssize_t c, bint fma) noexcept nogil
    cdef int finish_chunk_block(self) except -1 nogil
    cdef int compute_self_column(self, Py_ssize_t first) except -1 nogil
    cdef int finish_kernel_values(self, double* values, Py_ssize_t n,
                                  uint64_t flags) except -1 nogil
    cdef int reserve_slots(self, Py_ssize_t n_new) except -1 nogil
    cdef int compact_store(self, Py_ssize_t n_new) except -1 nogil
    cdef int resize_store(self, Py_ssize_t n_rows) except -1
    cdef void renumber_slots(self, Py_ssize_t n_total, unsigned char* mark,
                             Py_ssize_t* new_slot) noexcept nogil
    cdef void mark_referenced_slots(self, Py_ssize_t n_total, unsigned char* mark) noexcept nogil
    cdef void apply_slot_map(self, const Py_ssize_t* new_slot) noexcept nogil
    cdef int set_current(self, double xx, bint gather) except -1 nogil
    cdef int raise_nonfinite(self) except -1 nogil
    cdef int rebuild_slot_alpha(self, bint laid_out) except -1 nogil
    cdef int use_call_arrays(self, const double[::1] weights, Py_ssize_t[::1] support_sizes,
                             Py_ssize_t n) except -1
    cdef void release_call_arrays(self) noexcept
    # interrupts (see poll_interrupts): a byte the driver sets to stop the
    # compiled call (NULL: none; its array kept alive by stop_flag_owner),
    # and whether the call runs in the main thread (Python's signal
    # handlers run from the loop, at most every SIGNAL_CHECK_SECONDS)
    cdef const skb_stop_flag* stop_flag
    cdef object stop_flag_owner
    cdef bint check_signals
    cdef double next_signal_check
    cdef int start_polling(self) except -1
    cdef int poll_interrupts(self) except -1 nogil

    # ---- policy hooks --------------------------------------------------------
    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil
    cdef int grow(self, Py_ssize_t new_capacity) except -1
    cdef Py_ssize_t capacity_limit(self) noexcept nogil
    cdef int grow_when_full(self) except -1
    cdef int on_remove(self, Py_ssize_t cell) except -1 nogil
    cdef void mark_extra_slots(self, unsigned char* mark) noexcept nogil
    cdef void remap_extra_slots(self, const Py_ssize_t* new_slot) noexcept nogil
    cdef double replace_margins(self, Py_ssize_t cell, Py_ssize_t pos, double a_old,
                                double a_new) noexcept nogil
    cdef void forget_derived_values(self) noexcept nogil
