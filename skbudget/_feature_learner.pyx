# cython: language_level=3
"""The base of the compiled learners of a model on features (feature mode):
what the estimator's calls, their rollback and persistence ask of a
learner that stores no rows (``n_sv``, ``begin_call``, ``start_call``, the
generator's state at a call's first draw, pickling through ``get_state`` /
``set_state``).  FOGD's ``LinearHingeLearner`` (``_ogd_fast.pyx``) and
AMM's ``MultiHyperplaneLearner`` (``_amm_fast.pyx``) derive from it."""


cdef class FeatureLearner:
    """A learner fed by a feature map (not for direct use): a subclass
    provides ``get_state``, ``set_state``, ``check_state`` and its rounds,
    and calls :meth:`before_draw` before each draw from ``rng``."""

    def __init__(self, rng=None):
        self.initialized = True
        self.rng = rng
        self.rng_at_call_start = None
        self.rng_saved = False

    @property
    def n_sv(self):
        """No support vectors: the model is its weights."""
        return 0

    def begin_call(self):
        """Before a training call of the estimator: from the call's first
        random draw on, ``rng_at_call_start`` holds the generator's state
        before it (None while the call has drawn nothing), so that a failed
        call can put the generator back."""
        self.rng_saved = False
        self.rng_at_call_start = None

    def start_call(self, Py_ssize_t first_id):
        """(No tables keyed by example.)"""

    cdef int before_draw(self) except -1:
        """Before a draw from ``rng``: its state kept at the call's first."""
        if not self.rng_saved:
            self.rng_at_call_start = self.rng.get_state()
            self.rng_saved = True
        return 0

    # pickle rebuilds a learner as ``type(self)()`` then
    # ``__setstate__(state)``; skops.io as ``cls.__new__(cls)`` then
    # ``__setstate__(state)``, which runs the default ``__init__`` first
    def __reduce__(self):
        return (type(self), (), self.get_state())

    def __getstate__(self):
        return self.get_state()

    def __setstate__(self, state):
        if not self.initialized:        # made by __new__, not __init__
            type(self).__init__(self)
        self.set_state(state)
