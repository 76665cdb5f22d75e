# cython: language_level=3
"""Python access to the engine's compiled-only methods, for the tests.

Nothing in the package imports this module; it imports the engine (never
the reverse), so that the engine keeps only what a learner runs."""

from skbudget._engine cimport OnlineLearner


def random_below(OnlineLearner learner, long long n):
    """:meth:`OnlineLearner.random_below`: a uniform draw from ``0 .. n - 1``
    of the learner's generator, as ``RandomState.randint(n)``."""
    return learner.random_below(n)


def random_uniform(OnlineLearner learner):
    """:meth:`OnlineLearner.random_uniform`: a uniform draw from [0, 1) of
    the learner's generator, as ``RandomState.random_sample()``."""
    return learner.random_uniform()
