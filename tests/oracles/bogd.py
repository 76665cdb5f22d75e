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
"""

import numpy as np
from sklearn.utils import check_random_state

from tests.oracles.fixed_budget import _PlainOnline


class PlainBoundedOGDClassifier(_PlainOnline):

    def __init__(self, kernel, budget=100, eta0=0.5, alpha=1e-3, coef_bound=10.0,
                 sampling="uniform", random_state=None):
        super().__init__(kernel)
        self.budget = budget
        self.eta = eta0
        self.lam = alpha
        self.bound = coef_bound
        self.sampling = sampling
        self.rng = check_random_state(random_state)
        self.removed = []
        self.n_removals = 0
        self.probabilities = []

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
            i = self.rng.randint(B)
            self._scale(B * decay / (B - 1))
            self._remove(i)
            self.removed.append(i)
        else:
            alpha = self.coef_
            k = np.array([self._self_kernel(v) for v in self.vectors])
            w = np.abs(alpha) * np.sqrt(np.maximum(k, 0))
            if w.sum() > 0:
                p = np.maximum(1 - (B - 1) * w / w.sum(), 0)
                p = p / p.sum()
            else:
                p = np.full(B, 1 / B)
            u = self.rng.random_sample()
            above = np.flatnonzero(np.cumsum(p) > u)
            i = int(above[0]) if len(above) else B - 1
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
