# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A benchmark-only budgeted stand-in policy (not part of skbudget).

``bench_speed.py --standin`` times it while the real budget algorithms are
not merged yet: a perceptron that, on a mistake with a full budget, either
stops learning (``remove_oldest=False``, Stoptron-like) or removes its
oldest support vector first (``remove_oldest=True``), so the pool changes
every chunk.
"""

from skbudget._engine cimport OnlineLearner


cdef class StandinLearner(OnlineLearner):
    cdef public Py_ssize_t budget
    cdef public bint remove_oldest

    def __init__(self, Py_ssize_t budget=100, bint remove_oldest=False):
        OnlineLearner.__init__(self, capacity=budget + 1)
        self.budget = budget
        self.remove_oldest = remove_oldest

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300:
        cdef double score = self.dot_row()
        if y * score <= 0:
            if self.n_sv >= self.budget:
                if not self.remove_oldest:
                    return score
                self.remove_at(0)
            self.append_current(y)
            self.n_updates += 1
        return score

    def get_state(self):
        state = OnlineLearner.get_state(self)
        state.update(budget=self.budget, remove_oldest=self.remove_oldest)
        return state

    def set_state(self, state):
        OnlineLearner.set_state(self, state)
        self.budget = state["budget"]
        self.remove_oldest = state["remove_oldest"]
