# cython: language_level=3
"""No comparison in compiled code sees a NaN silently.

Every argmin / argmax over support vectors (removal searches, merge
partners, projections, the CKS and MIRA removals, Tighter's and Tightest's
searches) and every decision taken on a computed value calls
:func:`raise_not_finite` when a value it compares is NaN (or, where the
rule's arithmetic cannot carry it, infinite): an overflow of the model's
values is then a ``ValueError`` naming it, and the estimator's rollback
leaves the model as it was.  Parameter validation keeps the values in range
for every reasonable input, so these are the last line, not the rule.

Ties go to the oldest: values that are mathematically equal may differ in
the last bits (they come from incrementally kept sums), so two values count
as tied when they agree to a relative 1e-9 (:func:`tie_tolerance`), and a
search returns the oldest of the values tied with the extreme one.
"""

from libc.math cimport fabs, INFINITY


cdef inline bint is_nan(double v) noexcept nogil:
    return v != v


cdef inline bint is_finite(double v) noexcept nogil:
    return fabs(v) < INFINITY


cdef inline int raise_not_finite(const char* what) except -1 nogil:
    """Raise the ValueError for a non-finite ``what`` met during training."""
    with gil:
        name = what.decode()
        raise ValueError(
            f"{name} is not a finite number (NaN or infinity): the model's values overflowed "
            f"the floating-point range during training. Use less extreme parameters (e.g. a "
            f"larger alpha, a smaller C or eta0, a smaller gamma) or rescale X (e.g. "
            f"StandardScaler); the model is left as it was."
        )


cdef inline double tie_tolerance(double v, double unit) noexcept nogil:
    """How far a value may be from ``v`` and still be tied with it: a
    relative 1e-9 of ``unit + |v|``; ``unit`` is the scale of the values
    under which the tolerance does not shrink with ``|v|`` (0: purely
    relative)."""
    return 1e-9 * (unit + fabs(v))


cdef inline bint tied_or_below(double v, double least, double unit) noexcept nogil:
    """``v`` is the minimum ``least`` up to the tie tolerance."""
    return v <= least + tie_tolerance(least, unit)


cdef inline Py_ssize_t oldest_least(const double* values, Py_ssize_t n,
                                    const char* what) except -1 nogil:
    """The position of the least of ``values[0:n]`` (``n >= 1``), the first
    of those tied with it (purely relative tolerance; the oldest, for values
    in position order).  A NaN or infinite value is an overflow of the
    model: ``ValueError`` naming ``what`` (every position has an answer or
    the call raises; no comparison sees a NaN)."""
    cdef Py_ssize_t i
    cdef double least = INFINITY
    for i in range(n):
        if not is_finite(values[i]):
            raise_not_finite(what)
        if values[i] < least:
            least = values[i]
    for i in range(n):
        if tied_or_below(values[i], least, 0.0):
            return i
    return 0        # (not reached: the least is within the tolerance of itself)
