# cython: language_level=3, cdivision=True
"""Kernel Perceptron with the Khardon-Wachman variants
(doc/algorithms.md#kernel-perceptron).

Khardon & Wachman, Fig. 2, in dual form.  ``m_j`` (the paper's alpha_j) is
the number of updates made on training example ``j``; the support vector of
example ``j`` carries ``alpha = eta * m_j * y_j``.  Every update opens a new
hypothesis; ``votes[k]`` counts the correct predictions hypothesis ``k``
made, ``thetas[k]`` is its threshold, ``event_cell[k]`` the support vector
whose coefficient the update ``k -> k+1`` changed.
"""

import numpy as np
from libc.math cimport INFINITY

from skbudget._engine cimport OnlineLearner
from skbudget._engine import _grown_index, _resized, size_problem


cdef class KernelPerceptronLearner(OnlineLearner):
    cdef public double eta, lam, margin_width, threshold_step, alpha_bound, theta
    cdef public long long[::1] m_count  # per cell
    cdef public Py_ssize_t[::1] cell_of_example
    cdef public Py_ssize_t[::1] event_cell
    cdef public double[::1] thetas
    cdef public long long[::1] votes
    cdef public long long tally, best_tally, survivor

    _state_names = OnlineLearner._state_names + (
        "eta", "lam", "margin_width", "threshold_step", "alpha_bound", "theta",
        "m_count", "cell_of_example", "event_cell", "thetas", "votes",
        "tally", "best_tally", "survivor",
    )

    def __init__(self, double eta=1.0, double theta_init=0.0, double threshold_step=0.0,
                 double margin_width=0.0, double lam=0.0, double alpha_bound=INFINITY):
        self.m_count = np.zeros(0, dtype=np.int64)
        OnlineLearner.__init__(self)
        self.eta = eta
        self.theta = theta_init
        self.intercept = -theta_init
        self.threshold_step = threshold_step
        self.margin_width = margin_width  # tau * kappa
        self.lam = lam
        self.alpha_bound = alpha_bound
        self.cell_of_example = np.full(0, -1, dtype=np.intp)
        self.event_cell = np.zeros(8, dtype=np.intp)
        self.thetas = np.zeros(9)
        self.thetas[0] = theta_init
        self.votes = np.zeros(9, dtype=np.int64)
        self.tally = 0
        self.best_tally = 0
        self.survivor = 0

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        OnlineLearner.grow(self, new_capacity)
        self.m_count = _resized(self.m_count, new_capacity)
        return 0

    cdef Py_ssize_t lookup_example(self, Py_ssize_t position) except -2 nogil:
        """The cell of the support vector of the call's example at
        ``position`` (see ``example_position``), or -1."""
        cdef Py_ssize_t cell
        if position >= self.cell_of_example.shape[0]:
            with gil:
                self.cell_of_example = _grown_index(self.cell_of_example, position)
        cell = self.cell_of_example[position]
        if not -1 <= cell < self.n_sv:     # no cell is ever freed: cells 0 .. n_sv-1
            with gil:
                raise ValueError(f"{type(self).__name__} has an inconsistent state: "
                                 f"cell_of_example holds cell {cell}")
        return cell

    def forget_examples(self):
        self.cell_of_example = np.full(0, -1, dtype=np.intp)

    def check_policy_state(self, Py_ssize_t pool_size):
        n_events = self.event_cell.shape[0]
        problem = size_problem({"m_count": self.m_count}, self.capacity) or size_problem(
            {"thetas": self.thetas, "votes": self.votes}, n_events + 1, "entries")
        if problem is None and not (0 <= self.n_updates <= n_events
                                    and 0 <= self.survivor <= self.n_updates):
            problem = (f"n_updates={self.n_updates} and survivor={self.survivor} do not fit "
                       f"{n_events} update records")
        if problem is None and self.n_updates and not (
                0 <= np.min(self.event_cell[:self.n_updates])
                and np.max(self.event_cell[:self.n_updates]) < self.n_sv):
            problem = "event_cell names a cell that holds no support vector"
        return problem

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef Py_ssize_t position = self.example_position(example_id)
        cdef Py_ssize_t cell = self.lookup_example(position)
        cdef double total = self.dot_row()
        cdef double prediction
        cdef Py_ssize_t k = self.n_updates
        if cell >= 0:  # the lambda-trick: only when scoring an updated example itself
            total += y * self.lam * self.k_tt
        if total < self.theta - self.margin_width:
            prediction = -1.0
        elif total > self.theta + self.margin_width:
            prediction = 1.0
        else:
            prediction = 0.0
        score = total - self.theta
        if prediction != y:
            if cell < 0 or self.m_count[cell] < self.alpha_bound:
                if cell < 0:
                    cell = self.append_current(self.eta * y)
                    self.cell_of_example[position] = cell
                else:
                    self.add_to_coef(cell, self.eta * y)
                self.m_count[cell] += 1
                self.theta -= self.eta * y * self.threshold_step
                self.intercept = -self.theta
                self.record_update(cell)
        else:
            self.votes[k] += 1
            self.tally += 1
            if self.tally > self.best_tally:
                self.best_tally = self.tally
                self.survivor = k
        return score

    cdef int record_update(self, Py_ssize_t cell) except -1 nogil:
        cdef Py_ssize_t k = self.n_updates
        if k + 1 >= self.thetas.shape[0]:
            with gil:
                self.event_cell = _resized(self.event_cell, 2 * self.thetas.shape[0])
                self.thetas = _resized(self.thetas, 2 * self.thetas.shape[0] + 1)
                self.votes = _resized(self.votes, 2 * self.votes.shape[0] + 1)
        self.event_cell[k] = cell
        self.n_updates = k + 1
        self.thetas[k + 1] = self.theta
        self.votes[k + 1] = 0
        self.tally = 0
        return 0

    # ------------------------------------------------------------------
    # the hypotheses
    # ------------------------------------------------------------------
    def _events(self):
        """(support position, coefficient change) of every update, in order.

        No support vector is ever removed, so cell ``c`` is position ``c``.
        """
        cells = np.asarray(self.event_cell)[:self.n_updates].copy()
        step = self.eta * np.sign(self.coefficients())  # eta * y_j at every update
        return cells, step[cells]

    def hypothesis(self, str which):
        """(coefficients oldest first, intercept) of one single-expansion
        hypothesis: 'last', 'longest_survivor' or 'averaged'."""
        cdef Py_ssize_t n_hyp = self.n_updates + 1
        thetas = np.asarray(self.thetas)[:n_hyp]
        votes = np.asarray(self.votes)[:n_hyp].astype(float)
        if which == "last" or (which == "averaged" and votes.sum() == 0):
            return self.coefficients(), -self.theta
        cells, steps = self._events()
        coef = np.zeros(self.n_sv)
        if which == "longest_survivor":
            np.add.at(coef, cells[:self.survivor], steps[:self.survivor])
            return coef, -thetas[self.survivor]
        if which == "averaged":
            # event e belongs to every hypothesis k >= e + 1
            later_votes = np.cumsum(votes[::-1])[::-1][1:]
            np.add.at(coef, cells, steps * later_votes)
            total = votes.sum()
            return coef / total, -np.dot(votes, thetas) / total
        raise ValueError(f"unknown hypothesis {which!r}")

    def voted_scores(self, const double[:, ::1] K):
        """sum_k vote_k sign(w_k(x) - theta_k) for every row of
        ``K = k(X, support vectors oldest first)``, in O(updates) per row."""
        self.check_state()
        if K.shape[1] != self.n_sv:
            raise ValueError(f"K has {K.shape[1]} columns for {self.n_sv} support vectors")
        cells, steps = self._events()
        cdef Py_ssize_t[::1] ev_cell = cells
        cdef double[::1] ev_step = steps
        cdef double[::1] thetas = np.asarray(self.thetas)[:self.n_updates + 1].copy()
        cdef long long[::1] votes = np.asarray(self.votes)[:self.n_updates + 1].copy()
        out_arr = np.zeros(K.shape[0])
        cdef double[::1] out = out_arr
        cdef Py_ssize_t i, e, n_events = self.n_updates
        cdef double w, total
        with nogil:
            for i in range(K.shape[0]):
                w = 0.0
                total = votes[0] * _sign(-thetas[0])
                for e in range(n_events):
                    w = w + ev_step[e] * K[i, ev_cell[e]]
                    if votes[e + 1] != 0:
                        total = total + votes[e + 1] * _sign(w - thetas[e + 1])
                out[i] = total
        return out_arr


cdef inline double _sign(double v) noexcept nogil:
    return (v > 0) - (v < 0)
