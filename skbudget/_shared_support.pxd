# cython: language_level=3
"""Declarations of the shared-support store (see ``_shared_support.pyx``)."""

from skbudget._engine cimport OnlineLearner


cdef class SharedSupportLearner(OnlineLearner):
    # ---- the model: one support set for every class -------------------------
    cdef public Py_ssize_t n_outputs           # k, the number of classes
    cdef public double[:, ::1] tau             # tau[c, r]: coefficient of cell c for class r,
                                               # divided by the engine's global scale
    cdef public Py_ssize_t[::1] label          # class index of each cell's pattern
    # ---- optional bookkeeping -----------------------------------------------
    cdef public bint track_scores              # keep support_scores (implies track_gram)
    cdef public double[:, ::1] support_scores  # s_r(x_c) for every cell c and class r
    # ---- the current example --------------------------------------------------
    cdef public double[::1] scores             # s_r(x_t), filled by compute_scores
    cdef public double[::1] candidates         # scratch of best_removal, by position

    # ---- helpers for policies ----------------------------------------------
    cdef void compute_scores(self) noexcept nogil
    cdef Py_ssize_t class_index(self, double y) except -1 nogil
    cdef double top_two_margin(self, Py_ssize_t y, Py_ssize_t* runner) except? -1.5e300 nogil
    cdef double round_margin(self, Py_ssize_t y, Py_ssize_t* runner) except? -1.5e300 nogil
    cdef double round_value(self, double margin, Py_ssize_t y, Py_ssize_t runner) noexcept nogil
    cdef void pair_row(self, double* row, Py_ssize_t y, Py_ssize_t runner,
                       double a) noexcept nogil
    cdef double class_margin(self, const double* values, Py_ssize_t y) noexcept nogil
    cdef Py_ssize_t append_pattern(self, Py_ssize_t y, const double* coef) except -1 nogil
    cdef Py_ssize_t append_point(self, const double* z, Py_ssize_t y,
                                 const double* coef) except -1 nogil
    cdef void set_pattern(self, Py_ssize_t cell, Py_ssize_t y, const double* coef) noexcept nogil
    cdef double leave_one_out_margin(self, Py_ssize_t cell) noexcept nogil
    cdef Py_ssize_t best_removal(self, Py_ssize_t n_candidates, double* best) except -1 nogil
    cdef double tie_unit(self) noexcept nogil
