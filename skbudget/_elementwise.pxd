# cython: language_level=3
"""NumPy's vectorized float64 loops, without the GIL (see ``_elementwise.pyx``)."""

cdef void exp_inplace(double* values, Py_ssize_t n) noexcept nogil
cdef void log_inplace(double* values, Py_ssize_t n) noexcept nogil
cdef void tanh_inplace(double* values, Py_ssize_t n) noexcept nogil
cdef void power_inplace(double* values, Py_ssize_t n, double exponent) noexcept nogil
