# cython: language_level=3
"""Declarations of the span factor (see ``_span_factor.pyx``): an
incremental Cholesky factor ``K = L Lᵀ`` of a support set's Gram matrix, by
position, in full rows ``ld`` apart or in packed rows (``ld = PACKED``)."""

from skbudget._engine cimport OnlineLearner

cdef enum:
    PACKED = 0      # ``ld`` of packed rows: row i starts at i (i + 1) / 2


cdef inline Py_ssize_t row_offset(Py_ssize_t i, Py_ssize_t ld) noexcept nogil:
    """Where row ``i`` of a factor starts: ``i ld``, or ``i (i + 1) / 2``
    for packed rows."""
    return i * ld if ld != PACKED else i * (i + 1) // 2


# x = L⁻¹ x (kept rows; 0 on a row of a vector in the span); returns ‖x‖²
cdef double forward_substitution(const double* L, Py_ssize_t ld, Py_ssize_t n,
                                 double* x) noexcept nogil
# x = L⁻ᵀ x (kept rows); after forward_substitution, x = K⁻¹ x
cdef void back_substitution(const double* L, Py_ssize_t ld, Py_ssize_t n,
                            double* x) noexcept nogil
# full rows: row n holds k(x_n, x_i), i < n; make it the factor's row (the
# bordered step; a vector in the span of the earlier ones is skipped, its
# squared distance to it into gap[n])
cdef void factor_append_row(double* L, Py_ssize_t ld, Py_ssize_t n, double k_self,
                            double* gap) noexcept nogil
# full rows: remove vector p of n (Givens rotations); returns n - 1, or the
# first row to rebuild with factor_rebuild_rows
cdef Py_ssize_t factor_delete_row(double* L, Py_ssize_t ld, Py_ssize_t n, Py_ssize_t p,
                                  const double* kself, const Py_ssize_t* cell,
                                  double* gap) noexcept nogil
cdef void factor_rebuild_rows(double* L, Py_ssize_t ld, Py_ssize_t start, Py_ssize_t n,
                              const double* K, Py_ssize_t ldk, double* gap) noexcept nogil

# the factor of a learner's support set (full rows; ``track_gram``): grow it
# by the newest vector, the current example
cdef int span_append(OnlineLearner lr, double[:, ::1] chol, double[::1] gap) except -1 nogil
# drop position p from it and project x_p onto the span of the others:
# rhs = K_{-p}⁻¹ k_{-p,p}; returns k_{-p,p}ᵀ rhs
cdef double span_project(OnlineLearner lr, double[:, ::1] chol, double[::1] gap,
                         double[::1] rhs, Py_ssize_t p) except? -1.0 nogil
