"""Bounded Online Gradient Descent, BOGD and BOGD++ (Zhao et al. 2012;
doc/algorithms.md#bogd),
written plainly from the rule: every coefficient multiplied in a Python loop, the probabilities
of BOGD++ with NumPy, the removal drawn from a ``RandomState`` as the rule
names it (``randint(B)``, ``random_sample()``), so that the estimator,
drawing from a generator in the same state, makes the same removals.

``PlainBoundedOGDClassifier(kernel, budget, eta0, alpha, coef_bound,
sampling, random_state)`` learns from ``partial_fit(X, y)`` (``y`` in
{-1, +1}) and records what the other oracles do (``mistakes``, ``scores``,
``n_updates``, ``support_``, ``coef_``), ``removed`` (the position drawn
at each removal) and ``probabilities`` (BOGD++: ``p`` at each removal).
``PlainSharedBoundedOGD`` is the shared multi-class mode
(doc/algorithms.md#bogd-shared), drawing alike.
"""

import numpy as np
from sklearn.utils import check_random_state

from tests.oracles.fixed_budget import _PlainOnline


def _set_rule(plain, budget, eta0, alpha, coef_bound, sampling, random_state):
    """The rule's parameters of an oracle, its generator and its records of
    the removals."""
    plain.budget = budget
    plain.eta = eta0
    plain.lam = alpha
    plain.bound = coef_bound
    plain.sampling = sampling
    plain.rng = check_random_state(random_state)
    plain.removed = []
    plain.probabilities = []


def remove_uniformly(plain, decay):
    """BOGD's removal in the oracle ``plain``: position ``randint(B)``,
    every coefficient (row) times ``B decay / (B - 1)``."""
    B = plain.budget
    i = plain.rng.randint(B)
    plain._scale(B * decay / (B - 1))
    plain._remove(i)
    plain.removed.append(i)


def draw_by_weights(rng, w):
    """BOGD++'s draw over the ``B`` weights ``w``: ``p_j = 1 - (B - 1) w_j /
    sum w`` (negative ones 0, renormalized; uniform when ``sum w = 0``),
    ``u = rng.random_sample()`` and the first position with ``cumsum(p) >
    u`` (the last if rounding leaves none); ``(p, position)``."""
    B = len(w)
    if w.sum() > 0:
        p = np.maximum(1 - (B - 1) * w / w.sum(), 0)
        p = p / p.sum()
    else:
        p = np.full(B, 1 / B)
    u = rng.random_sample()
    above = np.flatnonzero(np.cumsum(p) > u)
    return p, int(above[0]) if len(above) else B - 1


class PlainBoundedOGDClassifier(_PlainOnline):

    def __init__(self, kernel, budget=100, eta0=0.5, alpha=1e-3, coef_bound=10.0,
                 sampling="uniform", random_state=None):
        super().__init__(kernel)
        _set_rule(self, budget, eta0, alpha, coef_bound, sampling, random_state)
        self.n_removals = 0

    def _scale(self, factor):
        self.coef = [a * factor for a in self.coef]

    def _round(self, x, y, score):
        decay = 1 - self.eta * self.lam
        if y * score > 1:
            self._scale(decay)
            return
        B = self.budget
        if len(self.coef) < B:
            self._scale(decay)
        elif self.sampling == "uniform":
            remove_uniformly(self, decay)
        else:
            alpha = self.coef_
            k = np.array([self._self_kernel(v) for v in self.vectors])
            p, i = draw_by_weights(self.rng, np.abs(alpha) * np.sqrt(np.maximum(k, 0)))
            for j in range(B):
                if j != i:
                    kept = min(decay * abs(alpha[j]) / (1 - p[j]) if p[j] < 1 else np.inf,
                               self.eta * self.bound)
                    self.coef[j] = np.sign(alpha[j]) * kept
            self._remove(i)
            self.removed.append(i)
            self.probabilities.append(p)
        self._add(x, self.eta * y)
        if self.sampling == "uniform" and len(self.removed) == self.n_removals + 1:
            largest = np.max(np.abs(self.coef_))
            self._scale(min(1, self.eta * self.bound / largest))
        self.n_removals = len(self.removed)


class PlainSharedBoundedOGD:
    """doc/algorithms.md#bogd-shared: BOGD and BOGD++ on ``k`` classes with
    one shared support set, one example at a time, the rows ``alpha_i`` (NumPy
    vectors of length ``k``, true coefficients) rewritten in full at every
    step and every score recomputed.

    ``PlainSharedBoundedOGD(kernel, n_classes, budget, eta0, alpha,
    coef_bound, sampling, random_state)`` learns from ``partial_fit(X, y)``
    with ``y`` the class indices ``0 .. k-1`` and records per round the
    margin ``f_y - max_{c != y} f_c`` (``margins``), the mistake flag
    (``argmax_c f_c != y``, ties to the lowest index) and the support size
    after the round (``sizes``); ``removed`` and ``probabilities`` as
    :class:`PlainBoundedOGDClassifier`'s; ``support_`` (stream indices,
    oldest first) and ``coef`` (``(k, |S|)``) are the model.
    """

    def __init__(self, kernel, n_classes, budget=100, eta0=0.5, alpha=1e-3, coef_bound=10.0,
                 sampling="uniform", random_state=None):
        self.kernel = kernel
        self.k = n_classes
        _set_rule(self, budget, eta0, alpha, coef_bound, sampling, random_state)
        self.vectors, self.rows, self.support_ = [], [], []
        self.margins, self.mistakes, self.sizes = [], [], []
        self.n_updates = 0
        self.n_seen = 0

    @property
    def coef(self):
        return np.array(self.rows).reshape(-1, self.k).T

    def decision_scores(self, Z):
        """(n, k): the class scores f_c."""
        if not self.rows:
            return np.zeros((len(Z), self.k))
        return self.kernel(Z, np.array(self.vectors)) @ np.array(self.rows)

    def _scale(self, factor):
        self.rows = [row * factor for row in self.rows]

    def _remove(self, i):
        del self.vectors[i], self.rows[i], self.support_[i]

    def partial_fit(self, X, y):
        for x, label in zip(np.asarray(X, dtype=float), y):
            f = self.decision_scores(x[None])[0]
            self.mistakes.append(int(np.argmax(f)) != label)   # ties: lowest index
            rivals = f.copy()
            rivals[label] = -np.inf
            r = int(np.argmax(rivals))                          # the runner-up
            m = f[label] - f[r] if self.k > 1 else np.inf       # one class: no rival
            self.margins.append(m)
            self._round(x, label, r, m)
            self.sizes.append(len(self.rows))
            self.n_seen += 1
        return self

    def _round(self, x, y, r, m):
        decay = 1 - self.eta * self.lam
        cap = self.eta * self.bound
        B = self.budget
        if m > 1:
            self._scale(decay)
            return
        removing = len(self.rows) == B
        if not removing:
            self._scale(decay)
        elif self.sampling == "uniform":
            remove_uniformly(self, decay)
        else:
            norms = np.array([np.linalg.norm(row) for row in self.rows])
            k = np.array([float(self.kernel(v[None], v[None])[0, 0]) for v in self.vectors])
            p, i = draw_by_weights(self.rng, norms * np.sqrt(np.maximum(k, 0)))
            for j in range(B):      # the unbiased factor, the row's norm bounded by cap
                if j != i and norms[j] > 0:
                    unbiased = decay / (1 - p[j]) if p[j] < 1 else np.inf
                    self.rows[j] = self.rows[j] * min(unbiased, cap / norms[j])
            self._remove(i)
            self.removed.append(i)
            self.probabilities.append(p)
        row = np.zeros(self.k)
        row[y], row[r] = self.eta, -self.eta
        self.vectors.append(x)
        self.rows.append(row)
        self.support_.append(self.n_seen)
        self.n_updates += 1
        if removing and self.sampling == "uniform":
            largest = max(np.linalg.norm(row) for row in self.rows)
            self._scale(min(1, cap / largest))
