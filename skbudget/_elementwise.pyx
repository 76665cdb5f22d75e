# cython: language_level=3
"""NumPy's own vectorized ``exp``, ``log``, ``tanh`` and ``power``, callable from
compiled code without the GIL; and one-pass helpers of ``fit``:
:func:`flat_moments` for ``gamma='scale'``, :func:`integral_classes` for
numeric labels, :func:`mistake_flags` and :func:`cumulative_at_bin_ends`
for the learning curve.

The stream loop turns a block of kernel arguments into kernel values once
per chunk of examples.  Calling ``np.exp(block, out=block)`` costs a
Python call (~1.5 us, with the GIL) per chunk; here the same inner loop
NumPy runs for a float64 array (its SIMD ``exp``, so the values are
bit-identical to ``np.exp``'s, which is what ``rbf_kernel`` applies) is
looked up once, at import, in the ufunc's table of loops and called
directly: a few nanoseconds, no GIL, so the learners of ``n_jobs`` threads
never wait on each other for it.
"""

cimport numpy as cnp
import numpy as np
from libc.math cimport INFINITY, fabs

from skbudget._vector_loops cimport skb_block_moments, skb_range, skb_vector_loops_init

cnp.import_array()
cnp.import_ufunc()
skb_vector_loops_init()     # the AVX2 loops where the CPU has AVX2

ctypedef void (*UfuncLoop)(char** args, cnp.npy_intp* dimensions, cnp.npy_intp* steps,
                           void* data) noexcept nogil


cdef struct DoubleLoop:
    UfuncLoop function
    void* data


cdef DoubleLoop EXP_LOOP
cdef DoubleLoop LOG_LOOP
cdef DoubleLoop TANH_LOOP
cdef DoubleLoop POWER_LOOP


cdef DoubleLoop _float64_loop(cnp.ufunc function) except *:
    """The inner loop ``function`` runs on float64 arrays (every operand
    float64)."""
    cdef int i, j, n_args = function.nin + function.nout
    cdef DoubleLoop loop
    for i in range(function.ntypes):
        for j in range(n_args):
            if function.types[i * n_args + j] != cnp.NPY_DOUBLE:
                break
        else:
            loop.function = <UfuncLoop><void*>function.functions[i]   # NumPy's loops never need the GIL
            loop.data = function.data[i]
            return loop
    raise ImportError(f"numpy.{function.__name__} has no float64 loop")


EXP_LOOP = _float64_loop(np.exp)
LOG_LOOP = _float64_loop(np.log)
TANH_LOOP = _float64_loop(np.tanh)
POWER_LOOP = _float64_loop(np.power)


cdef inline void _unary(DoubleLoop loop, double* values, Py_ssize_t n) noexcept nogil:
    cdef char* args[2]
    cdef cnp.npy_intp dims[1]
    cdef cnp.npy_intp steps[2]
    args[0] = <char*>values
    args[1] = <char*>values
    dims[0] = n
    steps[0] = sizeof(double)
    steps[1] = sizeof(double)
    loop.function(args, dims, steps, loop.data)


cdef void exp_inplace(double* values, Py_ssize_t n) noexcept nogil:
    """values[:n] = np.exp(values[:n])"""
    if n > 0:
        _unary(EXP_LOOP, values, n)


cdef void log_inplace(double* values, Py_ssize_t n) noexcept nogil:
    """values[:n] = np.log(values[:n])"""
    if n > 0:
        _unary(LOG_LOOP, values, n)


cdef void tanh_inplace(double* values, Py_ssize_t n) noexcept nogil:
    """values[:n] = np.tanh(values[:n])"""
    if n > 0:
        _unary(TANH_LOOP, values, n)


cdef void power_inplace(double* values, Py_ssize_t n, double exponent) noexcept nogil:
    """values[:n] = np.power(values[:n], exponent)"""
    cdef char* args[3]
    cdef cnp.npy_intp dims[1]
    cdef cnp.npy_intp steps[3]
    if n <= 0:
        return
    args[0] = <char*>values
    args[1] = <char*>&exponent
    args[2] = <char*>values
    dims[0] = n
    steps[0] = sizeof(double)
    steps[1] = 0                # the scalar exponent, broadcast
    steps[2] = sizeof(double)
    POWER_LOOP.function(args, dims, steps, POWER_LOOP.data)


# values per block of flat_moments (in L1 for its second pass)
cdef enum:
    VARIANCE_BLOCK = 2048


def flat_moments(const double[::1] values):
    """``(values.mean(), ((values - values.mean()) ** 2).sum(), values.min(),
    values.max())`` in one pass over memory: per block of ``VARIANCE_BLOCK``
    values its mean and squared deviations (two passes in cache), merged
    with Chan, Golub & LeVeque's pairwise update, all of ``values -
    values[0]`` (so a large common offset costs no digits), and the
    smallest and largest value, from a third pass over the block.  As
    accurate as NumPy's two passes (equal to the last few bits), without
    their temporary of the array's size; 3x faster than ``values.var()``
    on 10^6 values.  (With a NaN among the values the sums are NaN; the
    smallest and largest are then of the other values.)"""
    cdef Py_ssize_t n = values.shape[0], start = 0, m
    cdef double mean = 0.0, m2 = 0.0, block_mean, block_m2, delta
    cdef double lowest = INFINITY, highest = -INFINITY
    if n == 0:
        return float("nan"), 0.0, float("nan"), float("nan")
    cdef double shift = values[0]
    with nogil:
        while start < n:
            m = min(<Py_ssize_t>VARIANCE_BLOCK, n - start)
            skb_block_moments(&values[start], m, shift, &block_mean, &block_m2)
            skb_range(&values[start], m, &lowest, &highest)     # (the block in L1)
            delta = block_mean - mean
            m2 += block_m2 + delta * delta * (<double>start * m / (start + m))
            mean += delta * m / (start + m)
            start += m
    return mean + shift, m2, lowest, highest


def _apply(name, double[::1] values, double exponent=1.0):
    """Python access for the tests: apply ``name`` in {'exp', 'log',
    'tanh', 'power'} in place."""
    if name == "exp":
        exp_inplace(&values[0], values.shape[0])
    elif name == "log":
        log_inplace(&values[0], values.shape[0])
    elif name == "tanh":
        tanh_inplace(&values[0], values.shape[0])
    elif name == "power":
        power_inplace(&values[0], values.shape[0], exponent)
    else:
        raise ValueError(f"unknown function {name!r}")


ctypedef fused label_t:
    cnp.int8_t
    cnp.int16_t
    cnp.int32_t
    cnp.int64_t
    cnp.uint8_t
    cnp.uint16_t
    cnp.uint32_t
    cnp.uint64_t
    cnp.float32_t
    cnp.float64_t


def integral_classes(const label_t[::1] labels, Py_ssize_t max_range):
    """``np.unique(labels)`` when every label is an integer (a float one
    too: ``3.0``) within ``[-2^52, 2^52]`` and the largest minus the smallest
    is below ``max_range``; else None.

    Two passes and no temporary of the labels' size: the smallest and the
    largest (and whether every value is integral), then a table of the
    values seen (``np.unique`` sorts a copy: 10x slower on 20 000 labels).
    """
    cdef Py_ssize_t i, n = labels.shape[0]
    cdef label_t low, high, value
    cdef bint integral = True
    cdef cnp.uint8_t[::1] seen
    if n == 0:
        return None
    low = high = labels[0]
    with nogil:
        for i in range(n):
            value = labels[i]
            low = value if value < low else low
            high = value if value > high else high
            if label_t is cnp.float32_t or label_t is cnp.float64_t:
                # (NaN fails the first test; within 2^52 the cast is exact)
                if not (fabs(value) <= 4503599627370496.0
                        and value == <double><cnp.int64_t>value):
                    integral = False
    smallest, largest = <object>low, <object>high     # compared as Python numbers
    if not integral or not (-2 ** 52 <= smallest and largest <= 2 ** 52
                            and largest - smallest < max_range):
        return None
    seen_arr = np.zeros(int(largest - smallest) + 1, dtype=np.uint8)
    seen = seen_arr
    with nogil:
        for i in range(n):
            seen[<Py_ssize_t>(labels[i] - low)] = 1
    return np.flatnonzero(seen_arr) + smallest


def mistake_flags(const double[:, ::1] targets, const double[:, ::1] scores):
    """Mistake flags (uint8) of one-vs-rest rounds: ``targets`` and
    ``scores`` hold one row per learner and one column per round.  One
    learner (binary): a mistake unless ``y f(x) > 0``; several: unless the
    true class's score (the row whose target is +1) is strictly the
    largest.  One pass, and nothing the length of the rounds but the
    flags (NumPy's expression wrote a float64 temporary: after a long
    training loop, out of cache, it cost more than the pass)."""
    cdef Py_ssize_t i, j, n_learners = targets.shape[0], n = targets.shape[1]
    cdef double true_score, best_other
    if scores.shape[0] != n_learners or scores.shape[1] != n:
        raise ValueError("targets and scores differ in shape")
    flags_arr = np.empty(n, dtype=np.uint8)
    cdef cnp.uint8_t[::1] flags = flags_arr
    with nogil:
        if n_learners == 1:
            for i in range(n):
                flags[i] = targets[0, i] * scores[0, i] <= 0
        else:
            for i in range(n):
                true_score = -INFINITY
                best_other = -INFINITY
                for j in range(n_learners):
                    if targets[j, i] > 0:
                        true_score = scores[j, i]
                    elif scores[j, i] > best_other:
                        best_other = scores[j, i]
                flags[i] = true_score <= best_other
    return flags_arr


def cumulative_at_bin_ends(const cnp.uint8_t[::1] flags, Py_ssize_t first_end,
                           Py_ssize_t width, long long start):
    """``(at_ends, total)``: the running count ``start + flags[:i].sum()``
    at ``i = first_end, first_end + width, ...`` up to ``len(flags)``
    (int64), and ``start + flags.sum()`` (flags are 0 or 1); one pass."""
    cdef Py_ssize_t i, j = 0, n = flags.shape[0], next_end = first_end
    cdef Py_ssize_t n_ends = 0
    cdef long long total = start
    if first_end < 1 or width < 1:
        raise ValueError("first_end and width must be at least 1")
    if first_end <= n:
        n_ends = (n - first_end) // width + 1
    at_ends_arr = np.empty(n_ends, dtype=np.int64)
    cdef cnp.int64_t[::1] at_ends = at_ends_arr
    with nogil:
        for i in range(n):
            total += flags[i]
            if i + 1 == next_end:
                at_ends[j] = total
                j += 1
                next_end += width
    return at_ends_arr, total
