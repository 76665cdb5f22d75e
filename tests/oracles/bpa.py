"""The Budgeted Passive-Aggressive (Wang & Vucetic 2010;
doc/algorithms.md#bpa), written
plainly from the rule: for every candidate ``r`` its set ``V_r`` and a linear solve with
``K_V``, no incremental bookkeeping.

``PlainBudgetedPassiveAggressive(kernel, budget, C, maintenance)`` learns
from ``partial_fit(X, y, sample_weight=None)`` (``y`` in {-1, +1}, in the
order given; an example's weight ``w`` caps its step at ``C w``, and
``w = 0`` takes no step) and
records, as the other oracles do, ``mistakes``, ``scores``, ``n_updates``,
``support_`` (stream indices, oldest first) and ``coef_``; besides,
``removed`` (the position removed at each removal) and ``margins_after``
(``y f(x)`` after every step, for the rule "the margin after the step is
``y f(x) + tau k(x, x)``").
"""

import numpy as np

from tests.oracles.fixed_budget import _PlainOnline

TIE_TOL = 1e-9
SPAN_TOL = 1e-12


def oldest_least(values):
    """The first position within a relative TIE_TOL of the least value."""
    best = np.min(values)
    return int(np.flatnonzero(values <= best + TIE_TOL * abs(best))[0])


class PlainBudgetedPassiveAggressive(_PlainOnline):

    def __init__(self, kernel, budget=100, C=1.0, maintenance="simple"):
        super().__init__(kernel)
        self.budget = budget
        self.C = C
        self.maintenance = maintenance
        self.removed = []
        self.margins_after = []
        self.n_projections = 0
        self.weight = 1.0         # the weight of the round's example

    def partial_fit(self, X, y, sample_weight=None):
        """One example at a time, ``weight`` set to its ``sample_weight``."""
        weights = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
        for i, w in enumerate(weights):
            self.weight = float(w)
            super().partial_fit(X[i:i + 1], y[i:i + 1])
        self.weight = 1.0
        return self

    def _V(self, r, K, k_t, k_tt):
        """Indices of V_r \\ {t} among the support vectors, and whether t is
        in V (always, unless k_tt <= 0: phi(x_t) = 0 spans nothing)."""
        n = len(self.coef)
        if self.maintenance == "simple":
            return [], k_tt > 0
        if self.maintenance == "nearest":
            if n == 1:
                return [], k_tt > 0
            dist = [K[r, r] + K[j, j] - 2 * K[r, j] if j != r else np.inf for j in range(n)]
            m = int(np.argmin(dist))        # the first of the least: the oldest
            det = k_tt * K[m, m] - k_t[m] ** 2
            if det > 0 and det > SPAN_TOL * k_tt * K[m, m]:
                return [m], True
            return [], k_tt > 0
        return [j for j in range(n) if j != r], True

    def _absorb(self, r, K, k_t, k_tt):
        """(s_r, K_V^{-1} k_{V,r} on the support vectors of V, on t)."""
        others, with_t = self._V(r, K, k_t, k_tt)
        K_V = K[np.ix_(others, others)]
        k_Vr = K[others, r]
        if with_t:
            K_V = np.block([[K_V, k_t[others][:, None]], [k_t[others][None, :], np.array([[k_tt]])]])
            k_Vr = np.append(k_Vr, k_t[r])
        if len(k_Vr) == 0:
            return K[r, r], np.zeros(0), others, 0.0
        beta = np.linalg.solve(K_V, k_Vr)
        s = K[r, r] - k_Vr @ beta
        return s, beta[:len(others)], others, (beta[-1] if with_t else 0.0)

    def _round(self, x, y, score):
        loss = max(0.0, 1 - y * score)
        if loss == 0 or self.weight == 0:
            return
        k_tt = self._self_kernel(x)
        cap = self.C * self.weight      # the PA problem's slack weighted by w
        tau = cap if not (k_tt > 0 and loss / k_tt < cap) else loss / k_tt
        n = len(self.coef)
        S = self.support_vectors if n else np.zeros((0, len(x)))
        K = self.kernel(S, S) if n else np.zeros((0, 0))
        k_t = self._row(x)
        self.n_updates += 1
        if self.maintenance == "projection" and self._in_span(K, k_t, k_tt):
            d = np.linalg.solve(K, k_t) if n else np.zeros(0)
            for j in range(n):
                self.coef[j] += tau * y * d[j]
            self.n_projections += 1
        elif n < self.budget:
            self._append(x, tau * y)
        else:
            alpha = self.coef_
            scores = []
            for r in range(n):
                s, _, _, _ = self._absorb(r, K, k_t, k_tt)
                scores.append(alpha[r] ** 2 * max(s, 0.0))
            r = oldest_least(np.array(scores))
            _, beta, others, beta_t = self._absorb(r, K, k_t, k_tt)
            for j, b in zip(others, beta):
                self.coef[j] += alpha[r] * b
            self._remove(r)
            self.removed.append(r)
            self._append(x, alpha[r] * beta_t + tau * y)
        self.margins_after.append((y * self._f(x), y * score + tau * k_tt))

    def _in_span(self, K, k_t, k_tt):
        """delta^2 = k_tt - k_t^T K^{-1} k_t <= 1e-12 k_tt (or <= 0)."""
        delta2 = k_tt - (k_t @ np.linalg.solve(K, k_t) if len(k_t) else 0.0)
        return delta2 <= SPAN_TOL * k_tt or delta2 <= 0

    def _append(self, x, coef):
        self.support_.append(self.n_seen)
        self.vectors.append(x)
        self.coef.append(coef)
