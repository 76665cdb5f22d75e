# cython: language_level=3, cdivision=True
"""The Adaptive Multi-hyperplane Machine's learner, AMM and GAMM
(doc/algorithms.md, "Adaptive Multi-hyperplane Machine").

One learner holds every class: class ``i`` owns an ordered list of at most
``budget`` weight vectors (oldest first), its score is the largest of their
dot products with ``x~ = [x, s]``.  The weights live in a pool of rows
``V`` under one global scale (``w = scale * V``), so the shrink of every
weight each round (``w <- (1 - 1/(t+1)) w``) is one multiplication; each
weight's squared norm is kept alongside (``sq = ||V_r||^2``, updated from
the dot product the round computed anyway), so a round costs O(weights x
nnz) on a sparse row and pruning never reads the weights.

The pool grows by doubling, up to ``n_classes * budget`` rows; a pruned
weight's row goes back to a free list.  The state (``get_state``) lists the
weights class by class, oldest first, whatever rows they occupy.
"""

import numpy as np
from libc.math cimport INFINITY, fabs, sqrt

from skbudget._engine import _check_csr_rows
from skbudget._feature_learner cimport FeatureLearner
from skbudget._kernel_rows cimport sparse_dot
from skbudget._vector_loops cimport skb_dot16, skb_vector_loops_init
from skbudget._numbers cimport is_finite, raise_not_finite, tie_tolerance

skb_vector_loops_init()     # the AVX2 loops where the CPU has AVX2

def row_too_large(lam):
    """The ValueError of a row whose step overflows: ``||x~||^2 /
    lambda^2`` (the squared norm of ``eta_t x~`` in ``V``'s units) is not a
    finite number."""
    return ValueError(
        f"AdaptiveMultiHyperplaneClassifier: a row of X is too large for alpha={lam!r}: the "
        f"squared norm of its step, ||x||^2 / alpha^2 (bias coordinate included), is not a "
        f"finite number. Rescale X (e.g. StandardScaler) or use a larger alpha; the model is "
        f"left as it was.")


# the learner's scalar state (then its arrays: weights, sq_norms, counts)
_SCALARS = ("n_classes", "n_inputs", "budget", "prune_every", "lam", "prune_c",
            "clone_probability", "clone_decay", "bias", "fit_intercept", "clone_p", "t", "n_updates",
            "rng")


cdef class MultiHyperplaneLearner(FeatureLearner):
    """AMM / GAMM over every class at once (see the module docstring).

    Parameters
    ----------
    n_classes : int
        The number of classes (labels are their indices).
    n_inputs : int
        The width of ``x`` (the bias coordinate comes on top).
    budget : int
        ``B``, weights per class.
    lam : float
        ``lambda`` (> 0).
    prune_every : int
        ``k``: pruning after every round ``t`` with ``t mod k = 0``.
    prune_c : float
        ``c``: the pruned weights' squared norms sum to at most
        ``c^2 / (t lambda)^2``.
    clone_probability : float
        GAMM's starting ``p`` (0: plain AMM).
    clone_decay : float
        ``p`` is multiplied by it after every clone.
    bias : float
        ``s``, the bias coordinate of ``x~`` (0 with ``fit_intercept``
        off: there is then no bias coordinate at all).
    fit_intercept : bool
        Whether ``x~`` has the bias coordinate.
    rng : numpy.random.RandomState or None
        GAMM's draws.
    """

    cdef public Py_ssize_t n_classes, n_inputs, budget, prune_every
    cdef public double lam, prune_c, clone_probability, clone_decay, bias
    cdef public bint fit_intercept
    cdef public double clone_p
    cdef public long long t, n_updates
    # the pool: rows of V, their squared norms, the free rows
    cdef double[:, ::1] V
    cdef double[::1] sq
    cdef Py_ssize_t[::1] free_rows
    cdef Py_ssize_t n_free, n_used
    # members[i, j]: the row of class i's j-th weight (oldest first)
    cdef Py_ssize_t[:, ::1] members
    cdef Py_ssize_t[::1] counts
    # one round's dot products (unscaled), class i's j-th at i * width + j
    # (width = members.shape[1], grown up to budget)
    cdef double[::1] dots

    _state_names = _SCALARS + ("weights", "sq_norms", "counts")

    def __init__(self, Py_ssize_t n_classes=2, Py_ssize_t n_inputs=1, Py_ssize_t budget=50,
                 double lam=1e-4, Py_ssize_t prune_every=10000, double prune_c=10.0,
                 double clone_probability=0.0, double clone_decay=0.99, double bias=1.0,
                 bint fit_intercept=True, rng=None):
        FeatureLearner.__init__(self, rng)
        self.n_classes, self.n_inputs, self.budget = n_classes, n_inputs, budget
        self.lam, self.prune_every, self.prune_c = lam, prune_every, prune_c
        self.clone_probability, self.clone_decay = clone_probability, clone_decay
        self.bias, self.fit_intercept = bias, fit_intercept
        self.clone_p = clone_probability
        self.t = self.n_updates = 0
        # every class starts with one zero weight
        self._set_weights(np.zeros((n_classes, self.dim)), np.zeros(n_classes),
                          np.ones(n_classes, dtype=np.intp))

    @property
    def dim(self):
        """The width of ``x~``."""
        return self.n_inputs + (1 if self.fit_intercept else 0)

    @property
    def scale(self):
        """The global scale, ``w = scale * V``: ``prod_{s <= t} (1 - 1/(s+1))
        = 1 / (t + 1)``, computed from ``t`` (never below 1e-19 for a 64-bit
        ``t``: it cannot underflow, so it is never folded into ``V``)."""
        return 1.0 / (self.t + 1.0)

    # ------------------------------------------------------------------
    # state
    # ------------------------------------------------------------------
    def _set_weights(self, weights, sq_norms, counts):
        """The pool from the weights listed class by class, oldest first
        (``counts[i]`` of them for class ``i``), with room to double."""
        cdef Py_ssize_t i, j, row = 0
        n = weights.shape[0]
        capacity = min(max(2 * n, 16), self.n_classes * self.budget)
        capacity = max(capacity, n)
        V = np.zeros((capacity, self.dim))
        V[:n] = weights
        sq = np.zeros(capacity)
        sq[:n] = sq_norms
        self.V, self.sq = V, sq
        counts = np.array(counts, dtype=np.intp, copy=True)
        self.counts = counts
        width = min(max(8, int(counts.max())), self.budget)
        self.members = np.zeros((self.n_classes, width), dtype=np.intp)
        for i in range(self.n_classes):
            for j in range(self.counts[i]):
                self.members[i, j] = row
                row += 1
        self.n_used = n
        self.free_rows = np.zeros(capacity, dtype=np.intp)
        self.n_free = 0
        self.dots = np.zeros(self.n_classes * width)

    def weight_rows(self):
        """The rows of the pool holding the weights, class by class, oldest
        first."""
        return np.concatenate([np.asarray(self.members[i, :self.counts[i]])
                               for i in range(self.n_classes)])

    def coefficients(self):
        """``(w, weight_class)``: the weights ``scale * V`` class by class,
        oldest first, ``(n_weights, dim)``, and each one's class index."""
        rows = self.weight_rows()
        classes = np.repeat(np.arange(self.n_classes), np.asarray(self.counts))
        return self.scale * np.asarray(self.V)[rows], classes

    def get_state(self):
        """Everything needed to rebuild the learner (arrays copied)."""
        rows = self.weight_rows()
        state = {name: getattr(self, name) for name in _SCALARS}
        state["weights"] = np.asarray(self.V)[rows]
        state["sq_norms"] = np.asarray(self.sq)[rows]
        state["counts"] = np.array(self.counts, copy=True)
        return state

    def set_state(self, state):
        missing = [name for name in self._state_names if name not in state]
        if missing:
            raise ValueError(f"{type(self).__name__}: the saved state has no {missing}; the "
                             f"file is corrupted or was written by another version of skbudget.")
        previous = {name: getattr(self, name) for name in _SCALARS}
        for name in _SCALARS:
            setattr(self, name, state[name])
        problem = self._check_scalars()
        if problem is not None:         # (a loop must never run on them)
            for name, value in previous.items():
                setattr(self, name, value)
            raise ValueError(f"{type(self).__name__}: inconsistent state: {problem}")
        counts = np.asarray(state["counts"])
        weights = np.asarray(state["weights"])
        sq_norms = np.asarray(state["sq_norms"])
        problem = self._check_arrays(weights, sq_norms, counts)
        if problem is not None:
            raise ValueError(f"{type(self).__name__}: inconsistent state: {problem}")
        self._set_weights(np.array(weights, dtype=np.float64), np.array(sq_norms, dtype=np.float64),
                          counts.astype(np.intp))
        self.rng_saved = False

    def _check_arrays(self, weights, sq_norms, counts):
        if not (counts.ndim == 1 and counts.shape[0] == self.n_classes
                and counts.dtype.kind in "iu"):
            return f"counts must hold one integer per class ({self.n_classes})"
        if not ((counts >= 1).all() and (counts <= self.budget).all()):
            return f"every class must hold between 1 and budget={self.budget} weights"
        n = int(counts.sum())
        if not (weights.ndim == 2 and weights.shape == (n, self.dim)
                and weights.dtype == np.float64):
            return f"weights must be a float64 array of shape {(n, self.dim)}"
        if not (sq_norms.ndim == 1 and sq_norms.shape == (n,) and sq_norms.dtype == np.float64):
            return f"sq_norms must be a float64 array of shape {(n,)}"
        if not (np.isfinite(weights).all() and np.isfinite(sq_norms).all()
                and (sq_norms >= 0).all()):
            return "the weights or their squared norms are not finite numbers >= 0"
        return None

    def check_state(self):
        """A description of what is inconsistent in the state, or None."""
        problem = self._check_scalars()
        if problem is not None:
            return problem
        state = self.get_state()
        return self._check_arrays(state["weights"], state["sq_norms"], state["counts"])

    def _check_scalars(self):
        """What is inconsistent in the scalars that drive the rounds (a
        zero ``prune_every`` would divide by zero), or None."""
        if not (self.n_classes >= 2 and self.n_inputs >= 1 and self.budget >= 1
                and self.prune_every >= 1):
            return "n_classes >= 2, n_inputs >= 1, budget >= 1 and prune_every >= 1"
        if not (self.lam > 0.0 and is_finite(self.lam) and self.prune_c >= 0.0
                and is_finite(self.prune_c) and is_finite(self.bias)):
            return "lam > 0, prune_c >= 0 and bias must be finite numbers"
        if not (0.0 <= self.clone_p <= 1.0 and 0.0 <= self.clone_decay <= 1.0
                and 0.0 <= self.clone_probability <= 1.0):
            return "the clone probabilities and decay must be in [0, 1]"
        if self.t < 0 or self.n_updates < 0:
            return "negative counts"
        return None

    # ------------------------------------------------------------------
    # the rounds
    # ------------------------------------------------------------------
    def check_rows(self, X):
        """Raise :func:`row_too_large` for a row of ``X`` (dense or CSR,
        checked finite) that no round can take: its step overflows,
        whatever the weights (what every round checks first)."""
        if hasattr(X, "multiply"):      # sparse
            xx = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        else:
            xx = np.einsum("ij,ij->i", X, X)
        if self.fit_intercept:
            xx = xx + self.bias * self.bias
        with np.errstate(over="ignore"):
            if not np.isfinite(xx / self.lam / self.lam).all():
                raise row_too_large(self.lam)

    def run_block(self, const double[:, ::1] Z, const double[::1] y, double[::1] scores):
        """Rounds over the dense rows of ``Z`` (labels ``y``: class indices):
        each row's margin ``f+ - f-`` before its update goes to
        ``scores``."""
        cdef Py_ssize_t i, c = Z.shape[0]
        self._check_call(Z.shape[1], y, scores, c)
        for i in range(c):
            scores[i] = self._round(&Z[i, 0], NULL, Z.shape[1], False, <Py_ssize_t>y[i])

    def run_csr(self, const double[::1] data, const int[::1] indices, const int[::1] indptr,
                const Py_ssize_t[::1] rows, const double[::1] y, double[::1] scores):
        """Rounds over the CSR rows ``rows`` (in order), O(nnz) each."""
        cdef Py_ssize_t i, a, c = rows.shape[0]
        self._check_call(self.n_inputs, y, scores, c)
        _check_csr_rows(data, indices, indptr, rows, self.n_inputs)
        for i in range(c):
            a = indptr[rows[i]]
            if indptr[rows[i] + 1] > a:
                scores[i] = self._round(&data[a], &indices[a], indptr[rows[i] + 1] - a, True,
                                        <Py_ssize_t>y[i])
            else:
                scores[i] = self._round(NULL, NULL, 0, True, <Py_ssize_t>y[i])

    def _check_call(self, Py_ssize_t width, const double[::1] y, double[::1] scores,
                    Py_ssize_t c):
        cdef Py_ssize_t i
        problem = self._check_scalars()
        if problem is not None:
            raise ValueError(f"{type(self).__name__}: inconsistent state: {problem}")
        if width != self.n_inputs:
            problem = f"rows of {width} features for a model of {self.n_inputs}"
        elif not (y.shape[0] == c and scores.shape[0] == c):
            problem = f"{c} rows, {y.shape[0]} labels and {scores.shape[0]} scores"
        else:
            for i in range(c):
                if not (0 <= y[i] < self.n_classes and y[i] == <Py_ssize_t>y[i]):
                    problem = f"a label {y[i]} that is no class index"
                    break
        if problem is not None:
            raise ValueError(f"{type(self).__name__}: inconsistent call: {problem}")

    cdef double _round(self, const double* x, const int* idx, Py_ssize_t nnz, bint sparse,
                       Py_ssize_t y) except? -1.0:
        """One round on ``x~ = [x, s]`` (dense ``x`` unless ``sparse``, else
        its ``nnz`` stored values at the columns ``idx``); returns the
        margin ``f+ - f-`` of the model before the round."""
        cdef Py_ssize_t i, j, r, B = self.members.shape[1], d = self.n_inputs
        cdef Py_ssize_t j_plus = 0, i_minus = -1, j_minus = 0, r_new
        cdef double dot, dot_plus, dot_minus, unit, largest_sq, f_plus, f_minus, best, xx, a, s = self.bias
        cdef double* v
        cdef double* dots = &self.dots[0]
        cdef bint has_bias = self.fit_intercept
        cdef double scale = 1.0 / (self.t + 1.0)
        # (raw pointers: the tables do not change before step 3)
        cdef double* V = &self.V[0, 0]
        cdef const double* sq = &self.sq[0]
        cdef const Py_ssize_t* members = &self.members[0, 0]
        cdef const Py_ssize_t* counts = &self.counts[0]
        cdef Py_ssize_t n_classes = self.n_classes, dim = self.V.shape[1]
        # a row whose step overflows is refused before anything changes
        xx = self._squared_norm(x, sparse, nnz)
        a = 1.0 / self.lam                  # eta_t in V's units (eta_t / scale)
        if not is_finite(xx * a * a):
            raise row_too_large(self.lam)
        # step 1: every weight's score before the round
        for i in range(n_classes):
            for j in range(counts[i]):
                v = V + members[i * B + j] * dim
                dot = sparse_dot(x, idx, nnz, v) if sparse else skb_dot16(x, v, d)
                if has_bias:
                    dot += v[d] * s
                dots[i * B + j] = dot
        # the scale under which scores tie (doc/algorithms.md#shared-rules):
        # the largest |w.x~| can be, max ||w|| ||x~|| (rounding errors are
        # relative to it, not to the score); a score that is not finite is
        # an overflow of the model
        largest_sq = 0.0
        for i in range(n_classes):
            for j in range(counts[i]):
                largest_sq = max(largest_sq, sq[members[i * B + j]])
                if not is_finite(dots[i * B + j] * scale):
                    raise_not_finite("AdaptiveMultiHyperplaneClassifier: a weight's score")
        # the scale under which scores tie (doc/algorithms.md#shared-rules):
        # the largest |w.x~| can be, max ||w|| ||x~|| (rounding errors are
        # relative to it, not to the score)
        unit = scale * sqrt(largest_sq * xx)
        # the true class's best (oldest of those tied with the largest)
        f_plus = -INFINITY
        for j in range(counts[y]):
            f_plus = max(f_plus, scale * dots[y * B + j])
        best = f_plus - tie_tolerance(f_plus, unit)
        for j in range(counts[y]):
            if scale * dots[y * B + j] >= best:
                j_plus = j
                break
        # the other classes' best (first class, then oldest, on ties)
        f_minus = -INFINITY
        for i in range(n_classes):
            if i != y:
                for j in range(counts[i]):
                    f_minus = max(f_minus, scale * dots[i * B + j])
        best = f_minus - tie_tolerance(f_minus, unit)
        for i in range(n_classes):
            if i != y and i_minus < 0:
                for j in range(counts[i]):
                    if scale * dots[i * B + j] >= best:
                        i_minus, j_minus = i, j
                        break
        # (a new weight may grow the tables: what step 3 reads, read now)
        dot_plus, dot_minus = dots[y * B + j_plus], dots[i_minus * B + j_minus]
        # step 2: every weight shrinks by 1 - 1/(t+1) (the global scale,
        # 1 / (t + 1) after t rounds)
        self.t += 1
        scale = 1.0 / (self.t + 1.0)
        # step 3
        if 1.0 + f_minus - f_plus > 0.0:
            self.n_updates += 1
            r = self.members[i_minus, j_minus]
            self._add_to_row(r, -a, x, idx, nnz, sparse)
            self.sq[r] = max(self.sq[r] - 2.0 * a * dot_minus + a * a * xx,
                             0.0)
            if not is_finite(self.sq[r]):
                raise_not_finite("AdaptiveMultiHyperplaneClassifier: a weight's norm")
            if f_plus > tie_tolerance(0.0, unit):      # (within it of 0: 0)
                r = self.members[y, j_plus]
                if self.clone_p > 0.0 and self.counts[y] < self.budget:
                    if self._draw() < self.clone_p:
                        r_new = self._new_row(y)
                        self.V[r_new, :] = self.V[r, :]
                        self.sq[r_new] = self.sq[r]
                        self.clone_p *= self.clone_decay
                self._add_to_row(r, a, x, idx, nnz, sparse)
                self.sq[r] = self.sq[r] + 2.0 * a * dot_plus + a * a * xx
                if not is_finite(self.sq[r]):
                    raise_not_finite("AdaptiveMultiHyperplaneClassifier: a weight's norm")
            elif self.counts[y] < self.budget:
                r_new = self._new_row(y)
                self.V[r_new, :] = 0.0
                self._add_to_row(r_new, a, x, idx, nnz, sparse)
                self.sq[r_new] = a * a * xx
        # step 4
        if self.t % self.prune_every == 0:
            self._prune()
        # tied scores (the shared rule's relative 1e-9) are a tie: margin 0
        if fabs(f_plus - f_minus) <= tie_tolerance(max(f_plus, f_minus), unit):
            return 0.0
        return f_plus - f_minus

    cdef double _squared_norm(self, const double* x, bint sparse, Py_ssize_t nnz):
        cdef double xx = skb_dot16(x, x, nnz if sparse else self.n_inputs)
        if self.fit_intercept:
            xx += self.bias * self.bias
        return xx

    cdef void _add_to_row(self, Py_ssize_t r, double a, const double* x, const int* idx,
                          Py_ssize_t nnz, bint sparse):
        """``V_r += a x~``."""
        cdef Py_ssize_t k, d = self.n_inputs
        cdef double* v = &self.V[r, 0]
        if sparse:
            for k in range(nnz):
                v[idx[k]] += a * x[k]
        else:
            for k in range(d):
                v[k] += a * x[k]
        if self.fit_intercept:
            v[d] += a * self.bias

    cdef double _draw(self) except -1.0:
        """``rng.random_sample()``, the generator's state kept at the call's
        first draw (see :meth:`begin_call`)."""
        self.before_draw()
        return self.rng.random_sample()

    cdef Py_ssize_t _new_row(self, Py_ssize_t y) except -1:
        """A row of the pool for a new weight of class ``y`` (appended to its
        list, newest); its contents are the caller's to set."""
        cdef Py_ssize_t r
        if self.n_free:
            self.n_free -= 1
            r = self.free_rows[self.n_free]
        else:
            if self.n_used == self.V.shape[0]:
                self._grow()
            r = self.n_used
            self.n_used += 1
        if self.counts[y] == self.members.shape[1]:
            self._grow_members()
        self.members[y, self.counts[y]] = r
        self.counts[y] += 1
        return r

    def _grow_members(self):
        """Room for twice as many weights per class (at most ``budget``)."""
        width = min(2 * self.members.shape[1], self.budget)
        members = np.zeros((self.n_classes, width), dtype=np.intp)
        members[:, :self.members.shape[1]] = self.members
        self.members = members
        self.dots = np.zeros(self.n_classes * width)

    def _grow(self):
        capacity = min(2 * self.V.shape[0], self.n_classes * self.budget)
        V = np.zeros((capacity, self.dim))
        V[:self.n_used] = np.asarray(self.V)[:self.n_used]
        sq = np.zeros(capacity)
        sq[:self.n_used] = np.asarray(self.sq)[:self.n_used]
        free_rows = np.zeros(capacity, dtype=np.intp)
        free_rows[:self.n_free] = np.asarray(self.free_rows)[:self.n_free]
        self.V, self.sq, self.free_rows = V, sq, free_rows

    def _prune(self):
        """Step 4: the longest prefix of every weight by squared norm
        (ascending; ties by class, then age) whose squared norms sum to at
        most ``c^2 / (t lambda)^2`` is removed, class by class, oldest
        first, except each class's last weight."""
        cdef Py_ssize_t i, j, k, n, kept
        rows = self.weight_rows()
        norms = self.scale * self.scale * np.asarray(self.sq)[rows]
        order = np.argsort(norms, kind="stable")
        limit = (self.prune_c / (self.t * self.lam)) ** 2
        n = int(np.searchsorted(np.cumsum(norms[order]), limit, side="right"))
        if n == 0:
            return
        pruned = np.zeros(len(rows), dtype=bool)
        pruned[order[:n]] = True
        k = 0
        for i in range(self.n_classes):
            kept = 0
            n = self.counts[i]
            for j in range(n):
                # remove unless it is the last weight its class still holds
                if pruned[k] and not (kept == 0 and j == n - 1):
                    self.free_rows[self.n_free] = self.members[i, j]
                    self.n_free += 1
                else:
                    self.members[i, kept] = self.members[i, j]
                    kept += 1
                k += 1
            self.counts[i] = kept
