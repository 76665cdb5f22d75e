# cython: language_level=3
"""Declarations of the shared online engine (see ``_engine.pyx``).

Every algorithm is a subclass of :class:`OnlineLearner` that overrides
``process_example`` (and, if it keeps per-support-vector arrays of its own,
``grow``, ``on_remove``, ``mark_extra_slots``, ``remap_extra_slots``,
``get_state`` and ``set_state``).
"""

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
    cdef public double[::1] alpha              # coefficient of each cell (times scale)
    cdef public Py_ssize_t[::1] slot           # pool slot of each cell's vector
    cdef public double[::1] kself              # k(x_i, x_i) of each cell
    cdef public double scale            # global factor on every alpha
    cdef public double intercept
    # optional bookkeeping shared by several policies
    cdef public bint track_gram         # keep gram[c, c'] = k(x_c, x_c')
    cdef public bint track_margins      # keep margin[c] = sum alpha k(x_c', x_c)
    cdef public double[:, ::1] gram
    cdef public double[::1] margin             # unscaled: f(x_c) = scale * margin[c]

    # ---- the online record -------------------------------------------------
    cdef public long long n_updates

    # ---- randomness (numpy RandomState, drawn from only where a rule says)
    cdef public object rng

    # ---- the chunk being processed -----------------------------------------
    cdef const double[:, ::1] K_old     # k(chunk, stored pool slots)
    cdef const double[:, ::1] K_new     # k(chunk, chunk)
    cdef const double[:, ::1] D_old     # squared distances, when requested
    cdef const double[:, ::1] D_new
    cdef Py_ssize_t n_old               # pool slots stored before the chunk
    cdef Py_ssize_t t                   # row of the current example
    cdef public double[::1] k_row              # k(x_t, x_c) per cell, after gather
    cdef double k_tt                    # k(x_t, x_t)

    # ---- helpers for policies ----------------------------------------------
    cdef double kernel_to_slot(self, Py_ssize_t s) noexcept nogil
    cdef double sqdist_to_slot(self, Py_ssize_t s) noexcept nogil
    cdef void gather_row(self) noexcept nogil
    cdef double dot_row(self) noexcept nogil
    cdef Py_ssize_t append_current(self, double coef) except -1
    cdef int remove_at(self, Py_ssize_t pos) except -1
    cdef int add_to_coef(self, Py_ssize_t cell, double delta) except -1
    cdef int rescale(self, double factor) except -1

    # ---- policy hooks --------------------------------------------------------
    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300
    cdef int grow(self, Py_ssize_t new_capacity) except -1
    cdef int on_remove(self, Py_ssize_t cell) except -1
    cdef int mark_extra_slots(self, unsigned char[::1] mark) except -1
    cdef int remap_extra_slots(self, Py_ssize_t[::1] new_slot) except -1
