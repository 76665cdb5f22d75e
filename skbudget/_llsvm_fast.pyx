"""LLSVM's learner: the hinge-loss linear SVM without intercept on the
landmark features, solved per call by dual coordinate descent
(``doc/algorithms.md#llsvm``).

:class:`ProximalHingeLearner` holds one one-vs-rest learner's ``w``.  Each
call moves it to ``argmin_w 1/2 ||w - w_prev||^2 + sum_i C_i max(0, 1 -
y_i w.e_i)`` over the call's rows (``C_i = C`` times the row's weight):
the dual of that problem is the liblinear L1-loss SVM dual with ``w``
starting at ``w_prev`` instead of 0, so the solver is liblinear's
(``solve_l2r_l1l2_svc``: random permutation of the active rows every
sweep, shrinking, the projected-gradient stopping rule ``max PG - min PG
<= tol``), the permutation drawn from the learner's ``RandomState``.  From
``w = 0`` (``fit``) it is ``LinearSVC(loss='hinge', fit_intercept=False)``.
"""

import numpy as np
from cpython.exc cimport PyErr_CheckSignals
from libc.math cimport INFINITY, fabs

from skbudget._numbers cimport is_finite
from skbudget._vector_loops cimport skb_axpy, skb_dot16, skb_vector_loops_init

skb_vector_loops_init()     # the AVX2 loops where the CPU has AVX2

# a projected gradient at most this large in magnitude moves nothing
# (liblinear's 1.0e-12)
cdef double PG_ZERO = 1e-12


cdef class ProximalHingeLearner:
    """One learner of :class:`~skbudget.LowRankLinearizedSVC`: ``w`` on the
    landmark features and the dual coordinate descent that moves it, one
    problem per call (:meth:`solve`).  Its state (``get_state`` /
    ``set_state``, pickling) is the engine learners' kind: ``w``, the
    constants it was built with (``C``, ``tol``, ``max_iter``), its counts
    and its random generator (the coordinate order).

    Parameters
    ----------
    n_features : int
        The length of ``w`` (the map's features).
    C : float
        The hinge loss's weight (times each row's weight).
    tol : float
        The stopping tolerance on the projected gradients' spread.
    max_iter : int
        The most sweeps of one call.
    rng : numpy.random.RandomState or None
        The generator of the sweeps' permutations.
    """

    cdef public double[::1] w
    cdef public double C, tol
    cdef public long long max_iter, n_updates, n_iter
    cdef public bint converged
    cdef public object rng, rng_at_call_start

    _state_names = ("w", "C", "tol", "max_iter", "n_updates", "n_iter", "converged", "rng")

    def __init__(self, Py_ssize_t n_features=0, double C=1.0, double tol=1e-4,
                 long long max_iter=1000, rng=None):
        self.w = np.zeros(n_features)
        self.C, self.tol, self.max_iter = C, tol, max_iter
        self.n_updates = self.n_iter = 0
        self.converged = True
        self.rng = rng
        self.rng_at_call_start = None

    @property
    def n_sv(self):
        """No support vectors: the model is ``w`` (the landmarks are the
        map's)."""
        return 0

    def begin_call(self):
        """Snapshot the generator: a call draws one permutation a sweep."""
        self.rng_at_call_start = None if self.rng is None else self.rng.get_state()

    def start_call(self, Py_ssize_t first_id):
        """(No tables keyed by example.)"""

    def check_state(self):
        """A description of what is inconsistent in the state, or None."""
        if not (self.C > 0.0 and is_finite(self.C)):
            return f"C={self.C} is not a finite number > 0"
        if not (self.tol > 0.0 and is_finite(self.tol)):
            return f"tol={self.tol} is not a finite number > 0"
        if self.max_iter < 1:
            return f"max_iter={self.max_iter} is not >= 1"
        if self.n_updates < 0 or self.n_iter < 0:
            return f"negative counts (n_updates={self.n_updates}, n_iter={self.n_iter})"
        if not isinstance(self.rng, np.random.RandomState):
            return "its random generator is not a numpy RandomState"
        if not np.isfinite(self.w).all():
            return "w holds a value that is not finite"
        return None

    def solve(self, const double[:, ::1] E, const double[::1] y, weights, double[::1] scores):
        """One call: ``scores`` gets each row's score ``w_prev.e`` (before
        the call), then ``w`` moves to the call's proximal solution.

        ``E``: the rows' features; ``y``: their signed targets (+-1);
        ``weights``: None (every row 1) or one weight >= 0 per row (its
        ``C_i = C weight``).  Rows with ``C_i = 0`` or ``e.e = 0`` cannot
        move ``w`` and are left out of the problem.  Liblinear's loop: every
        sweep a random permutation of the active rows (``rng``); a row at a
        bound whose gradient points outward beyond the last sweep's extreme
        projected gradients is shrunk (dropped from the active set); the
        sweep's projected gradients' spread at most ``tol`` ends the solve
        (on a shrunk set: once more on every row).  ``n_iter`` counts the
        sweeps, ``converged`` is False when ``max_iter`` sweeps did not
        reach ``tol``.
        """
        cdef Py_ssize_t n = E.shape[0], d = E.shape[1], i, s, l = 0, active, tmp
        cdef double G, PG, a_old, step, PGmax_old = INFINITY, PGmin_old = -INFINITY
        cdef double PGmax_new, PGmin_new
        cdef long long it = 0
        cdef bint finite = True
        problem = self.check_state()
        if problem is None and d != self.w.shape[0]:
            problem = f"a block of {d} features for a model of {self.w.shape[0]}"
        if problem is None and not (y.shape[0] == n and scores.shape[0] == n):
            problem = f"{n} rows, {y.shape[0]} labels and {scores.shape[0]} scores"
        if problem is None and weights is not None and np.shape(weights) != (n,):
            problem = f"{np.shape(weights)} weights for {n} rows"
        if problem is not None:
            raise ValueError(f"ProximalHingeLearner: inconsistent state: {problem}")
        self.n_iter = 0
        self.converged = True
        if n == 0:
            return
        cdef double[::1] upper = np.full(n, self.C) if weights is None else (
            self.C * np.asarray(weights, dtype=np.float64))
        cdef double[::1] alpha = np.zeros(n), QD = np.empty(n)
        cdef Py_ssize_t[::1] index = np.empty(n, dtype=np.intp)
        cdef Py_ssize_t[::1] shuffled = np.empty(n, dtype=np.intp)
        cdef Py_ssize_t[::1] perm
        cdef double* w = &self.w[0] if d else NULL
        with nogil:
            for i in range(n):
                scores[i] = skb_dot16(w, &E[i, 0], d) if d else 0.0
                QD[i] = skb_dot16(&E[i, 0], &E[i, 0], d) if d else 0.0
                if not (is_finite(scores[i]) and is_finite(QD[i]) and is_finite(upper[i])):
                    finite = False
                if QD[i] > 0.0 and upper[i] > 0.0:
                    index[l] = i
                    l += 1
        if not finite:
            raise ValueError("ProximalHingeLearner: a score w.e(x), a squared norm e(x).e(x) "
                             "or a row's C times its weight is not a finite number")
        active = l
        while it < self.max_iter:
            perm = self.rng.permutation(active)
            for s in range(active):
                shuffled[s] = index[perm[s]]
            PGmax_new, PGmin_new = -INFINITY, INFINITY
            with nogil:
                for s in range(active):
                    index[s] = shuffled[s]
                s = 0
                while s < active:
                    i = index[s]
                    G = y[i] * skb_dot16(w, &E[i, 0], d) - 1.0
                    if not is_finite(G):
                        finite = False
                        break
                    PG = 0.0
                    if alpha[i] == 0.0:
                        if G > PGmax_old:
                            active -= 1
                            tmp = index[s]; index[s] = index[active]; index[active] = tmp
                            continue
                        elif G < 0.0:
                            PG = G
                    elif alpha[i] == upper[i]:
                        if G < PGmin_old:
                            active -= 1
                            tmp = index[s]; index[s] = index[active]; index[active] = tmp
                            continue
                        elif G > 0.0:
                            PG = G
                    else:
                        PG = G
                    if PG > PGmax_new:
                        PGmax_new = PG
                    if PG < PGmin_new:
                        PGmin_new = PG
                    if fabs(PG) > PG_ZERO:
                        a_old = alpha[i]
                        alpha[i] = min(max(a_old - G / QD[i], 0.0), upper[i])
                        step = (alpha[i] - a_old) * y[i]
                        skb_axpy(w, step, &E[i, 0], d)
                        self.n_updates += 1
                    s += 1
            if not finite:
                raise ValueError("ProximalHingeLearner: a gradient y w.e(x) - 1 is not a "
                                 "finite number")
            it += 1
            self.n_iter = it
            PyErr_CheckSignals()        # a Ctrl-C between sweeps (the call rolls back)
            if PGmax_new - PGmin_new <= self.tol:
                if active == l:
                    return
                active = l              # shrunk: check every row once more
                PGmax_old, PGmin_old = INFINITY, -INFINITY
                continue
            PGmax_old = PGmax_new if PGmax_new > 0.0 else INFINITY
            PGmin_old = PGmin_new if PGmin_new < 0.0 else -INFINITY
        self.converged = False

    def get_state(self):
        """Everything needed to rebuild the learner (``w`` copied)."""
        return {"w": np.array(self.w, copy=True), "C": self.C, "tol": self.tol,
                "max_iter": self.max_iter, "n_updates": self.n_updates, "n_iter": self.n_iter,
                "converged": bool(self.converged), "rng": self.rng}

    def set_state(self, state):
        missing = [name for name in self._state_names if name not in state]
        if missing:
            raise ValueError(f"ProximalHingeLearner: the state has no {missing}")
        self.w = np.array(state["w"], dtype=np.float64, copy=True).reshape(-1)
        self.C, self.tol, self.max_iter = state["C"], state["tol"], state["max_iter"]
        self.n_updates, self.n_iter = state["n_updates"], state["n_iter"]
        self.converged = state["converged"]
        self.rng = state["rng"]

    def __reduce__(self):
        # (a model's file holds the learner's get_state() in plain
        # containers, skbudget._persistence; this pickles a learner alone)
        return (_learner_from_state, (self.get_state(),))


def _learner_from_state(state):
    """A :class:`ProximalHingeLearner` given ``state`` (unpickling)."""
    learner = ProximalHingeLearner()
    learner.set_state(state)
    return learner
