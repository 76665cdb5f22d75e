"""doc/algorithms.md#mira: kernel MIRA on one shared support set, with the
Crammer-Kandola-Singer fixed cache and DistillCache, written plainly from
the spec: one example at a time, NumPy kernel rows, plain loops, every
score and leave-one-out margin recomputed from scratch.

``PlainMIRA(kernel, n_classes, beta, budget)`` learns from
``partial_fit(X, y)`` with ``y`` the class indices ``0 .. k-1``, in the
order given.  ``budget``: ``"unbounded"`` (kernel MIRA), an int ``B`` (fixed
cache) or ``None`` (DistillCache, as ``BudgetMIRA(budget=None)``).  It
records per round the class scores (``scores``), the margin (``margins``)
and the mistake flag (``mistakes``: margin ``<= 0``), ``n_updates``, and
exposes the support set as ``support_`` (stream indices, oldest first),
``labels`` and ``tau`` (one coefficient vector per pattern).
"""

import numpy as np

TIE_TOL = 1e-9


def tied(a, b, unit):
    """Two values that agree to a relative 1e-9 count as tied; ``unit``:
    the scale of the values (beta: scores, steps and margins scale with
    it), the tolerance's floor near 0."""
    return abs(a - b) <= TIE_TOL * (unit + abs(b))


def margin(scores, y, beta):
    """s_y - max_{r != y} s_r; 0 when the two are tied."""
    rival = max(s for r, s in enumerate(scores) if r != y)
    return 0.0 if tied(scores[y], rival, beta) else scores[y] - rival


def versus_beta(scores, y, beta):
    """The sign of m - beta: s_y against max_{r != y} s_r + beta, 0 when tied.

    The step is zero exactly when m >= beta; the closed form gives that 0
    only up to rounding (a duplicate of the pattern just learnt has
    m = beta), so the test is made on the scores with the tie rule."""
    target = max(s for r, s in enumerate(scores) if r != y) + beta
    if tied(scores[y], target, beta):
        return 0
    return 1 if scores[y] > target else -1


def mira_step(scores, y, A, beta):
    """The closed form of the rule, sorting-based: D_r, theta from the sorted D,
    tau_r = min(theta - D_r, 0) + delta_{r,y}."""
    k = len(scores)
    D = [(scores[r] + (beta if r != y else 0.0)) / A + (1.0 if r == y else 0.0)
         for r in range(k)]
    D_sorted = sorted(D, reverse=True)
    theta = None
    for j in range(1, k + 1):
        candidate = (sum(D_sorted[:j]) - 1.0) / j
        if candidate < D_sorted[j - 1]:
            theta = candidate       # the largest such j wins
    return [min(theta - D[r], 0.0) + (1.0 if r == y else 0.0) for r in range(k)]


class PlainMIRA:
    """Kernel MIRA: unbounded, fixed cache (Fig. 3) or DistillCache (Fig. 2)."""

    def __init__(self, kernel, n_classes, beta=0.01, budget="unbounded"):
        self.kernel = kernel
        self.k = n_classes
        self.beta = beta
        self.budget = budget
        self.support_, self.vectors, self.labels, self.tau = [], [], [], []
        self.scores, self.margins, self.mistakes = [], [], []
        self.n_updates = 0
        self.n_seen = 0
        self.n_removed = 0
        self.n_ties = 0          # removal decisions between tied candidates

    def class_scores(self, x):
        """s_r(x) = sum_i tau_{i,r} k(x_i, x), a plain loop oldest first."""
        s = [0.0] * self.k
        if not self.vectors:
            return s
        row = self.kernel(np.array(self.vectors), x[None, :])[:, 0]
        for kv, tau in zip(row, self.tau):
            for r in range(self.k):
                s[r] += tau[r] * kv
        return s

    def leave_one_out_margins(self):
        """mu_i = (s_{y_i}(x_i) - tau_{i,y_i} k_ii) - max_{r != y_i}
        (s_r(x_i) - tau_{i,r} k_ii), from scratch."""
        values = []
        gram = self.kernel(np.array(self.vectors), np.array(self.vectors))
        for i in range(len(self.vectors)):
            s = [sum(gram[j, i] * self.tau[j][r] for j in range(len(self.vectors)))
                 for r in range(self.k)]
            k_ii = gram[i, i]
            without = [s[r] - self.tau[i][r] * k_ii for r in range(self.k)]
            y = self.labels[i]
            values.append(without[y] - max(v for r, v in enumerate(without) if r != y))
        return values

    def most_redundant(self, values):
        """Position of the largest value (ties: the oldest)."""
        top = max(values)
        candidates = [i for i, v in enumerate(values) if v >= top - TIE_TOL * (self.beta + abs(top))]
        self.n_ties += len(candidates) > 1
        return candidates[0]

    def remove(self, pos):
        for store in (self.support_, self.vectors, self.labels, self.tau):
            del store[pos]
        self.n_removed += 1

    def partial_fit(self, X, y):
        for x, label in zip(np.asarray(X, dtype=float), y):
            self.round(x, int(label))
            self.n_seen += 1
        return self

    def round(self, x, y):
        s = self.class_scores(x)
        m = margin(s, y, self.beta)
        self.scores.append(s)
        self.margins.append(m)
        self.mistakes.append(m <= 0)
        A = float(self.kernel(x[None, :], x[None, :])[0, 0])
        if versus_beta(s, y, self.beta) > 0 or A <= 0:     # not m <= beta
            return
        fixed = isinstance(self.budget, int) and not isinstance(self.budget, bool)
        if fixed and len(self.vectors) == self.budget:
            self.remove(self.most_redundant(self.leave_one_out_margins()))
            s = self.class_scores(x)
        if versus_beta(s, y, self.beta) >= 0:
            return      # tau = 0: the constraints hold already (m >= beta)
        tau = mira_step(s, y, A, self.beta)
        self.support_.append(self.n_seen)
        self.vectors.append(x)
        self.labels.append(y)
        self.tau.append(tau)
        self.n_updates += 1
        if self.budget is None:
            while len(self.vectors) > 1:
                values = self.leave_one_out_margins()[:-1]   # the new one is no candidate
                pos = self.most_redundant(values)
                if values[pos] < self.beta - TIE_TOL * (self.beta + abs(self.beta)):
                    break
                self.remove(pos)

    @property
    def coef_(self):
        """(k, n_support): one row per class, as ``dual_coef_``."""
        return np.array(self.tau, dtype=float).reshape(-1, self.k).T

    def decision_scores(self, Z):
        """(n, k) class scores."""
        if not self.vectors:
            return np.zeros((len(Z), self.k))
        return self.kernel(Z, np.array(self.vectors)) @ self.coef_.T
