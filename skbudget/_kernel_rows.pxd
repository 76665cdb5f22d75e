# cython: language_level=3
"""Kernel values in compiled code, one pair of vectors at a time.

The formulas of scikit-learn's ``linear_kernel``, ``rbf_kernel``,
``polynomial_kernel`` and ``sigmoid_kernel`` written for one value from the
inner product ``<x, v>`` and the squared norms ``||x||^2``, ``||v||^2``
(the RBF distance is summed in ``euclidean_distances``' order,
``(-2 <x, v> + ||x||^2) + ||v||^2``, clipped at 0).  Everything is
``cdef inline`` and ``nogil``: any compiled module can ``cimport`` it (the
stream loop in ``_engine``, prediction).  No ``-ffast-math``: NaN and
infinity checks and exact ties must keep working.
"""

from cython cimport floating
from libc.math cimport exp, tanh, pow


cdef enum KernelKind:
    LINEAR_KERNEL = 0
    RBF_KERNEL = 1
    POLY_KERNEL = 2
    SIGMOID_KERNEL = 3


cdef struct KernelSpec:
    int kind
    double gamma
    double coef0
    double degree


cdef inline double dense_dot(const double* a, const double* b, Py_ssize_t n) noexcept nogil:
    """sum a[j] b[j] (four partial sums: the loop is latency bound otherwise)."""
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


cdef inline double sparse_dot(const floating* values, const int* indices, Py_ssize_t nnz,
                              const floating* dense) noexcept nogil:
    """<x, v> for a sparse x (its ``nnz`` stored values and column indices)
    and a dense v, summed in order (as scipy's CSR products do), in
    float64 (float32 values' products are exact there)."""
    cdef double s = 0.0
    cdef Py_ssize_t j
    for j in range(nnz):
        s += <double> values[j] * <double> dense[indices[j]]
    return s


cdef inline double squared_distance(double dot, double xx, double vv) noexcept nogil:
    """||x - v||^2 from <x, v>, as ``euclidean_distances`` sums it (clipped
    at 0; NaN, from overflowing inputs, stays NaN as with ``np.maximum``)."""
    cdef double d = (-2.0 * dot + xx) + vv
    return 0.0 if d < 0.0 else d


cdef inline double kernel_from_dot(const KernelSpec* k, double dot, double xx,
                                   double vv) noexcept nogil:
    """k(x, v) from <x, v>, ||x||^2 and ||v||^2."""
    if k.kind == RBF_KERNEL:
        return exp(squared_distance(dot, xx, vv) * -k.gamma)
    if k.kind == LINEAR_KERNEL:
        return dot
    if k.kind == POLY_KERNEL:
        return pow(dot * k.gamma + k.coef0, k.degree)
    return tanh(dot * k.gamma + k.coef0)


cdef inline double kernel_to_itself(const KernelSpec* k, double xx) noexcept nogil:
    """k(x, x) (the RBF self-distance is exactly 0, as in ``k(X, X)``)."""
    if k.kind == RBF_KERNEL:
        return 1.0
    return kernel_from_dot(k, xx, xx, xx)
