"""doc/algorithms.md#bsgd: Budgeted SGD (Wang, Crammer & Vucetic), one example at a time.

Plain NumPy, straight from the text: the support vectors (merged points
included) are stored as rows, every kernel value is recomputed, and a
projection solves its system from scratch.  Coefficients are kept as the rule
suggests, ``w_i = lambda t alpha_i`` (the shrink by ``1 - 1/t`` leaves them
unchanged; ``alpha_i = w_i / (lambda t)`` is formed where a rule uses it), so
coefficients that are equal stay equal: with ``alpha_i`` multiplied by
``1 - 1/t`` each round, rounding would decide the ties between them, and
with them the golden-section search's first comparison when ``alpha_m =
alpha_n`` (``|alpha_z(h)|`` is then symmetric about h = 1/2).  Ties of the
arg-mins are decided with the relative tolerance 1e-9 of the rule.
"""

import math

import numpy as np

TIE_TOL = 1e-9
SPAN_TOL = 1e-8    # squared distance to the span <= SPAN_TOL k_jj: in the span


def first_minimum(values):
    """Index of the first value equal to the minimum up to TIE_TOL (relative)."""
    values = np.asarray(values, dtype=float)
    best = values.min()
    return int(np.flatnonzero(values <= best + TIE_TOL * abs(best))[0])


def golden_section(g):
    """The rule's golden-section search for the maximum of ``g`` on [0, 1]."""
    a, b = 0.0, 1.0
    r = (math.sqrt(5.0) - 1.0) / 2.0
    while b - a > 1e-6:
        c = b - r * (b - a)
        d = a + r * (b - a)
        if g(c) >= g(d):
            b = d
        else:
            a = c
    return (a + b) / 2.0


def lookup_h(table, m, kappa):
    """The merge search by table (BudgetedSGDClassifier's
    ``merge_search='lookup'``): ``h*(m, kappa)`` interpolated bilinearly
    from ``table`` (rows ``m = i / 400`` up to 1/2, columns ``kappa = j /
    400``), ``m`` clipped to [0, 1/2]."""
    x = min(max(m * 400.0, 0.0), table.shape[0] - 1.0)
    y = min(max(kappa * 400.0, 0.0), 400.0)
    i, j = min(int(x), table.shape[0] - 2), min(int(y), 399)
    fx, fy = x - i, y - j
    return ((1 - fx) * ((1 - fy) * table[i, j] + fy * table[i, j + 1])
            + fx * ((1 - fy) * table[i + 1, j] + fy * table[i + 1, j + 1]))


def span_projection(K, b):
    """Coefficients ``d`` of the projection whose Gram matrix is ``K`` and
    right-hand side ``b``: vectors in the span of earlier kept ones (oldest
    first, squared distance <= SPAN_TOL k_jj) get 0, the kept ones solve
    their system."""
    kept = []
    for j in range(len(b)):
        if kept:
            K_kk = K[np.ix_(kept, kept)]
            dist2 = K[j, j] - K[kept, j] @ np.linalg.solve(K_kk, K[kept, j])
        else:
            dist2 = K[j, j]
        if K[j, j] > 0 and dist2 > SPAN_TOL * K[j, j]:
            kept.append(j)
    d = np.zeros(len(b))
    if kept:
        d[kept] = np.linalg.solve(K[np.ix_(kept, kept)], b[kept])
    return d


class BSGDSupportSet:
    """What the binary and the multi-class BSGD oracles share: support
    vectors ``sv`` (rows, oldest first) stored beside coefficients scaled
    by ``lambda t`` (``w`` or ``W``), grown by an update and cut back to
    the budget by the maintenance rule ``_<maintenance>``."""

    def _k(self, a, b):
        return float(self.kernel(a[None], b[None])[0, 0])

    @property
    def scale(self):
        """alpha_i / w_i (multi-class: alpha_i / W_i) = 1 / (lambda t)."""
        return 1.0 / (self.lam * self.t) if self.t else 1.0

    @property
    def support_vectors(self):
        return np.array(self.sv)

    def _add_support_vector(self, x, coefficients, coefficient):
        """Add ``x`` to ``sv`` and ``coefficient`` to ``coefficients`` (the
        list beside it); over the budget, the maintenance rule runs."""
        self.sv.append(x)
        coefficients.append(coefficient)
        self.n_updates += 1
        if len(self.sv) > self.budget:
            self.n_maintenance += 1
            getattr(self, "_" + self.maintenance)()


class PlainBudgetedSGDClassifier(BSGDSupportSet):
    """BSGD with ``maintenance`` in {'removal', 'projection', 'merging'}.

    ``kernel(A, B)`` is the kernel function (merging assumes it is an RBF
    kernel); ``alpha`` is the paper's lambda.  ``partial_fit(X, y)`` continues
    the stream (labels in {-1, +1}); ``support_vectors`` and ``coef`` are the
    model, oldest first.  With ``lookup_table`` (the estimator's table of
    ``h*(m, kappa)``) merging reads ``h`` from it by :func:`lookup_h`
    instead of the golden-section search (``merge_search='lookup'``).
    """

    def __init__(self, kernel, budget=100, alpha=1e-4, maintenance="merging",
                 lookup_table=None):
        self.kernel = kernel
        self.lookup_table = lookup_table    # merging: h by lookup_h instead of the search
        self.budget = budget
        self.lam = alpha          # the paper's lambda
        self.maintenance = maintenance
        self.sv = []            # support vectors, oldest first (rows)
        self.w = []             # their coefficients times lambda t
        self.t = 0
        self.mistakes = []
        self.scores = []
        self.n_updates = 0
        self.n_maintenance = 0
        self.degradation = 0.0
        self.merged_rounds = []   # rounds (1-based t) whose maintenance merged

    @property
    def alpha(self):
        return [w * self.scale for w in self.w]

    def decision_function(self, Z):
        if not self.sv:
            return np.zeros(len(Z))
        return (self.kernel(Z, np.array(self.sv)) @ np.array(self.w)) * self.scale

    @property
    def coef(self):
        return np.array(self.alpha)

    def partial_fit(self, X, y, sample_weight=None):
        """``sample_weight``: each example's weight scales its loss, so its
        step (``alpha = w y / (lambda t)``; no step for ``w = 0``)."""
        weights = np.ones(len(y)) if sample_weight is None else sample_weight
        for x, label, weight in zip(np.asarray(X, dtype=float), y, weights):
            score = float(self.decision_function(x[None])[0])
            self.scores.append(score)
            self.mistakes.append(label * score <= 0)
            self.t += 1   # alpha *= 1 - 1/t: w is unchanged, but at t = 1 (factor 0)
            if self.t == 1:
                self.sv, self.w = [], []
            if label * score < 1.0 and weight > 0:      # alpha = w y / (lambda t)
                self._add_support_vector(x, self.w, float(label) * weight)
        return self

    def _remove(self, i):
        del self.sv[i]
        del self.w[i]

    def _smallest_norm(self):
        return first_minimum([a * a * self._k(x, x) for x, a in zip(self.sv, self.alpha)])

    def _removal(self):
        p = self._smallest_norm()
        self.degradation += self.alpha[p] ** 2 * self._k(self.sv[p], self.sv[p])
        self._remove(p)

    def _projection(self):
        p = self._smallest_norm()
        others = [i for i in range(len(self.sv)) if i != p]
        V = np.array([self.sv[i] for i in others])
        d = span_projection(self.kernel(V, V), self.kernel(V, self.sv[p][None])[:, 0])
        w_p = self.w[p]
        k_p = self.kernel(V, self.sv[p][None])[:, 0]
        self.degradation += (w_p * self.scale) ** 2 * max(
            self._k(self.sv[p], self.sv[p]) - k_p @ d, 0.0)
        for i, d_i in zip(others, d):
            self.w[i] += w_p * d_i
        self._remove(p)

    def _merging(self):
        alpha = self.alpha
        m = first_minimum(np.abs(alpha))
        a_m, x_m = alpha[m], self.sv[m]
        candidates = []   # (degradation, n, h, alpha_z)
        for n, (x_n, a_n) in enumerate(zip(self.sv, alpha)):
            if n == m or np.sign(a_n) != np.sign(a_m):
                continue
            kappa = self._k(x_m, x_n)
            log_kappa = math.log(kappa) if kappa > 0 else -math.inf

            def alpha_z(h, a_n=a_n, log_kappa=log_kappa):   # kappa ** e = exp(e log kappa)
                return a_m * math.exp((1 - h) ** 2 * log_kappa) + a_n * math.exp(h ** 2 * log_kappa)

            if self.lookup_table is None:
                h = golden_section(lambda h: abs(alpha_z(h)))
            else:
                h = lookup_h(self.lookup_table, a_m / (a_m + a_n), kappa)
            a_z = alpha_z(h)
            candidates.append((a_m ** 2 + a_n ** 2 + 2 * a_m * a_n * kappa - a_z ** 2,
                               n, h, a_z))
        if not candidates:
            self.degradation += a_m ** 2 * self._k(x_m, x_m)
            self._remove(m)
            return
        best = first_minimum([c[0] for c in candidates])
        deg, n, h, a_z = candidates[best]
        z = h * x_m + (1 - h) * self.sv[n]
        self.degradation += deg
        for i in sorted((m, n), reverse=True):
            self._remove(i)
        self.sv.append(z)
        self.w.append(a_z / self.scale)
        self.merged_rounds.append(self.t)
