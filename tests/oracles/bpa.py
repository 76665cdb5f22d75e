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
``y f(x) + tau k(x, x)``").  ``PlainSharedBPA(kernel, n_classes, ...)`` is
the shared multi-class mode, on coefficient rows (``y`` the class indices).
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
        tau = self._tau(loss, k_tt)
        self._step(x, tau * y)
        self.margins_after.append((y * self._f(x), y * score + tau * k_tt))

    def _tau(self, loss, norm2):
        """PA-I's step, capped at C w (the PA problem's slack weighted by w);
        ``norm2`` the squared norm of the step's direction."""
        cap = self.C * self.weight
        return cap if not (norm2 > 0 and loss / norm2 < cap) else loss / norm2

    def _step(self, x, step):
        """Take the step ``step phi(x)`` (a coefficient, or a row of them)
        within the budget: project it (BPA-P, x in span S), append x, or
        remove the ``r`` of least ``||alpha_r||^2 s_r`` and let ``V_r``
        absorb ``alpha_r`` with the kernel coefficients ``K_V^{-1}
        k_{V,r}``."""
        k_tt = self._self_kernel(x)
        n = len(self.coef)
        S = self.support_vectors if n else np.zeros((0, len(x)))
        K = self.kernel(S, S) if n else np.zeros((0, 0))
        k_t = self._row(x)
        self.n_updates += 1
        if self.maintenance == "projection" and self._in_span(K, k_t, k_tt):
            d = np.linalg.solve(K, k_t) if n else np.zeros(0)
            for j in range(n):
                self.coef[j] = self.coef[j] + step * d[j]
            self.n_projections += 1
        elif n < self.budget:
            self._append(x, step)
        else:
            alpha = self.coef_
            scores = []
            for r in range(n):
                s, _, _, _ = self._absorb(r, K, k_t, k_tt)
                scores.append(np.sum(alpha[r] ** 2) * max(s, 0.0))
            r = oldest_least(np.array(scores))
            _, beta, others, beta_t = self._absorb(r, K, k_t, k_tt)
            for j, b in zip(others, beta):
                self.coef[j] = self.coef[j] + alpha[r] * b
            self._remove(r)
            self.removed.append(r)
            self._append(x, alpha[r] * beta_t + step)

    def _in_span(self, K, k_t, k_tt):
        """delta^2 = k_tt - k_t^T K^{-1} k_t <= 1e-12 k_tt (or <= 0)."""
        delta2 = k_tt - (k_t @ np.linalg.solve(K, k_t) if len(k_t) else 0.0)
        return delta2 <= SPAN_TOL * k_tt or delta2 <= 0

    def _append(self, x, coef):
        self.support_.append(self.n_seen)
        self.vectors.append(x)
        self.coef.append(coef)


class PlainSharedBPA(PlainBudgetedPassiveAggressive):
    """doc/algorithms.md#bpa, "Shared multi-class mode": one support set for
    ``k`` classes, a coefficient row per vector (``coef_`` ``(n_SV, k)``).

    A round with class ``y`` (an index ``0 .. k-1``): the scores ``f_c(x)``
    before the step, the runner-up ``q = argmax_{c != y} f_c`` (the first
    of the largest: ties to the lowest index), ``m = f_y - f_q``; on ``l =
    1 - m > 0`` the step ``tau = min(C w, l / (2 k(x, x)))`` in the
    direction of the row ``e_y - e_q``, maintained by the binary rule's own
    ``_step`` on rows (removal value ``||alpha_r||^2 s_r``, every class's
    part absorbed with the same ``K_V^{-1} k_{V,r}``).  ``mistakes``:
    ``argmax_c f_c != y``; ``margins_after``: ``(f_y - f_q after the step,
    m + 2 tau k(x, x))``.  With one class nothing updates (no rival).
    """

    def __init__(self, kernel, n_classes, budget=100, C=1.0, maintenance="simple"):
        super().__init__(kernel, budget=budget, C=C, maintenance=maintenance)
        self.k = n_classes

    @property
    def coef_(self):
        return np.array(self.coef, dtype=float).reshape(len(self.coef), self.k)

    def _scores(self, x):
        return self._row(x) @ self.coef_ if self.coef else np.zeros(self.k)

    def partial_fit(self, X, y, sample_weight=None):
        weights = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
        for x, label, w in zip(np.asarray(X, dtype=float), y, weights):
            self.weight = float(w)
            scores = self._scores(x)
            self.scores.append(scores)
            self.mistakes.append(int(np.argmax(scores)) != label)
            if self.k > 1:
                self._shared_round(x, int(label), scores)
            self.n_seen += 1
        self.weight = 1.0
        return self

    def _shared_round(self, x, y, scores):
        rivals = np.where(np.arange(self.k) == y, -np.inf, scores)
        q = int(np.argmax(rivals))
        m = scores[y] - scores[q]
        loss = max(0.0, 1 - m)
        if loss == 0 or self.weight == 0:
            return
        k_tt = self._self_kernel(x)
        tau = self._tau(loss, 2 * k_tt)
        row = np.zeros(self.k)
        row[y], row[q] = tau, -tau
        self._step(x, row)
        after = self._scores(x)
        self.margins_after.append((after[y] - after[q], m + 2 * tau * k_tt))

    def decision_function(self, Z):
        if not self.coef:
            return np.zeros((len(Z), self.k))
        return self.kernel(Z, self.support_vectors) @ self.coef_
