# cython: language_level=3
"""Declarations of the fixed-budget family (see ``_budget_fast.pyx``).

:class:`MistakeDrivenLearner` is the skeleton every algorithm of the family
shares: *if the round asks for an update, make room, add the example, then
tidy up*.  A policy overrides only the hooks it needs.
:class:`SharedMistakeDrivenLearner` is the same skeleton on one support set
for every class (doc/algorithms.md#shared-multi-class).
"""

from skbudget._engine cimport OnlineLearner
from skbudget._shared_support cimport SharedSupportLearner


cdef class MistakeDrivenLearner(OnlineLearner):
    cdef public Py_ssize_t budget   # B; -1 means no fixed budget
    cdef public double beta         # update when y f(x) <= beta

    # the update condition (default: y * score <= beta)
    cdef bint wants_update(self, double y, double score) noexcept nogil
    # the true coefficient of the inserted example (default: y)
    cdef double new_coefficient(self, double y, double score) noexcept nogil
    # before the insertion: the position of the support vector the example
    # replaces (removed first), APPEND (-1) to add it, or NO_ROOM (-2) to skip
    cdef Py_ssize_t make_room(self) except -3 nogil
    # after the insertion (the new example is the newest support vector)
    cdef int after_insert(self) except -1 nogil

    # helpers
    cdef double sv_label(self, Py_ssize_t cell) noexcept nogil


cdef class SharedMistakeDrivenLearner(SharedSupportLearner):
    cdef public Py_ssize_t budget   # B for the whole model; -1 means no fixed budget
    cdef public double[::1] new_row # scratch: the row of the inserted example (units of tau)

    # the update condition on the top-two margin m (default: m <= 0)
    cdef bint wants_update(self, double margin) noexcept nogil
    # the binary rule's coefficient size a >= 0 (the row is a (e_y - e_r); default 1)
    cdef double step(self, double margin) noexcept nogil
    # as MistakeDrivenLearner.make_room
    cdef Py_ssize_t make_room(self) except -3 nogil
    # after the insertion into ``cell`` (the newest; its row is ``new_row``)
    cdef int after_insert(self, Py_ssize_t cell) except -1 nogil
