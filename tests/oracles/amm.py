"""doc/algorithms.md#amm: the Adaptive Multi-hyperplane Machine (AMM) and
its growing variant (GAMM), written plainly from the spec: explicit weight
vectors (no global scale), one example at a time.

``PlainAMM(n_classes, n_features, ...)`` learns from ``partial_fit(X, y)``
(``X`` dense, ``y`` class indices) in the order given.  It records per
round ``margins`` (``f+ - f-`` before the round) and ``mistakes``
(``margin <= 0``), ``n_updates``, and exposes ``W`` (one list of weight
vectors per class, oldest first, each ``[x-part, bias]``),
``decision_function`` and ``predict``.

Ties follow the suite's shared rule (doc/algorithms.md#shared-rules):
scores within ``1e-9 (u + |largest|)`` of the largest are tied, with ``u =
max ||w|| ||x~||`` (the size rounding errors are relative to), and the
first in order (class, then age) wins; ``f+`` within ``1e-9 u`` of 0 counts
as 0, and ``f+``, ``f-`` tied make a margin of 0 (a mistake).
"""

import numpy as np


def _first_tied_max(values, unit):
    """The position of the first value tied with the largest (within
    ``1e-9 (unit + |largest|)``)."""
    values = np.asarray(values)
    best = values.max()
    return int(np.flatnonzero(values >= best - 1e-9 * (unit + abs(best)))[0])


class PlainAMM:
    def __init__(self, n_classes, n_features, budget=50, alpha=1e-4, prune_every=10000,
                 prune_c=10.0, clone_probability=0.0, clone_decay=0.99, fit_intercept=True,
                 intercept_scaling=1.0, rng=None):
        self.B, self.lam, self.k, self.c = budget, alpha, prune_every, prune_c
        self.p, self.decay = clone_probability, clone_decay
        self.s = intercept_scaling if fit_intercept else None
        self.rng = rng
        dim = n_features + (1 if fit_intercept else 0)
        self.W = [[np.zeros(dim)] for _ in range(n_classes)]
        self.t = 0
        self.n_updates = 0
        self.margins, self.mistakes = [], []

    def _tilde(self, x):
        x = np.asarray(x, dtype=float)
        return x if self.s is None else np.append(x, self.s)

    def scores(self, x):
        """``g(i, x)`` for every class."""
        xt = self._tilde(x)
        return np.array([max(w @ xt for w in Wi) for Wi in self.W])

    def decision_function(self, X):
        return np.array([self.scores(x) for x in X])

    def predict(self, X):
        return np.argmax(self.decision_function(X), axis=1)

    def partial_fit(self, X, y):
        for x, label in zip(X, y):
            self._round(self._tilde(x), int(label))
        return self

    def _round(self, xt, y):
        # step 1: scores before the round
        # scores tie within 1e-9 (unit + |score|), unit = max ||w|| ||x~||
        unit = max(np.linalg.norm(w) for Wi in self.W for w in Wi) * np.linalg.norm(xt)
        own = [w @ xt for w in self.W[y]]
        j_plus = _first_tied_max(own, unit)
        f_plus = own[j_plus]
        others = [(i, j, w @ xt) for i, Wi in enumerate(self.W) if i != y
                  for j, w in enumerate(Wi)]
        m = _first_tied_max([o[2] for o in others], unit)
        i_minus, j_minus, f_minus = others[m]
        margin = f_plus - f_minus
        if abs(margin) <= 1e-9 * (unit + abs(max(f_plus, f_minus))):
            margin = 0.0        # tied scores are a tie
        self.margins.append(margin)
        self.mistakes.append(margin <= 0)
        # step 2
        self.t += 1
        t = self.t
        for Wi in self.W:
            for j in range(len(Wi)):
                Wi[j] = (1 - 1 / (t + 1)) * Wi[j]
        # step 3
        if 1 + f_minus - f_plus > 0:
            self.n_updates += 1
            eta = 1 / (self.lam * (t + 1))
            self.W[i_minus][j_minus] = self.W[i_minus][j_minus] - eta * xt
            if f_plus > 1e-9 * unit:        # (within the tolerance of 0: 0)
                if self.p > 0 and len(self.W[y]) < self.B:
                    u = self.rng.random_sample()
                    if u < self.p:
                        self.W[y].append(self.W[y][j_plus].copy())
                        self.p *= self.decay
                self.W[y][j_plus] = self.W[y][j_plus] + eta * xt
            elif len(self.W[y]) < self.B:
                self.W[y].append(eta * xt)
        # step 4
        if t % self.k == 0:
            self._prune()

    def _prune(self):
        items = [(float(w @ w), i, j) for i, Wi in enumerate(self.W) for j, w in enumerate(Wi)]
        items.sort(key=lambda item: item[0])      # stable: class, then age on ties
        limit = self.c ** 2 / (self.t ** 2 * self.lam ** 2)
        total, P = 0.0, set()
        for norm, i, j in items:
            if total + norm > limit:
                break
            total += norm
            P.add((i, j))
        for i, Wi in enumerate(self.W):
            kept = []
            for j, w in enumerate(Wi):
                remaining = len(kept) + len(Wi) - j
                if (i, j) in P and remaining > 1:
                    continue
                kept.append(w)
            self.W[i] = kept

    @property
    def n_weights(self):
        return np.array([len(Wi) for Wi in self.W])
