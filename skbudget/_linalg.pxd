# cython: language_level=3
"""Small dense kernels shared by the policies (inline, raw pointers)."""


cdef inline double _dot(const double* a, const double* b, Py_ssize_t n) noexcept nogil:
    """sum a[j] b[j], four partial sums (the loop is latency bound otherwise)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t j = 0
    while j + 4 <= n:
        s0 += a[j] * b[j]
        s1 += a[j + 1] * b[j + 1]
        s2 += a[j + 2] * b[j + 2]
        s3 += a[j + 3] * b[j + 3]
        j += 4
    while j < n:
        s0 += a[j] * b[j]
        j += 1
    return (s0 + s1) + (s2 + s3)


cdef inline void _axpy(double a, const double* x, double* y, Py_ssize_t n) noexcept nogil:
    """y[j] += a x[j]."""
    cdef Py_ssize_t j
    for j in range(n):
        y[j] += a * x[j]
