# cython: language_level=3
"""The base of the compiled learners of a model on features (feature mode,
``skbudget._stream.FeatureMap``): FOGD's linear hinge learner, AMM's
multi-hyperplane learner."""


cdef class FeatureLearner:
    cdef public object rng, rng_at_call_start
    cdef bint rng_saved                 # rng_at_call_start holds this call's start
    cdef bint initialized               # False when made by __new__ (skops.io)
    cdef int before_draw(self) except -1
