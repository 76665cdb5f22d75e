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
