"""doc/algorithms.md#bsgd-multi-class: multi-class BSGD on one shared
support set, one example at a time.

Plain NumPy, straight from the text: the support vectors (merged points
included) are rows of a list, each with its coefficient row ``W_i = lambda t
alpha_i`` (a NumPy vector of length ``k``); every score and kernel value is
recomputed, a projection solves its system from scratch
(``span_projection``, as the binary oracle), and the merge search evaluates
``||W_z(h)||^2`` at each probe.  It is written in the closed form the rule
gives (``||W_m||^2 A^2 + ||W_n||^2 B^2 + 2 <W_m, W_n> (A B)``, ``A =
kappa^{(1 - h)^2}``, ``B = kappa^{h^2}``), with ``A B`` as one product: the
value of ``||W_m A + W_n B||^2``, but symmetric to the last bit when the two
rows swap, so that the search's first comparison is the exact tie the binary
rule (doc/algorithms.md#bsgd) describes when ``||W_m|| = ||W_n||`` (every
never-changed row has ``||W||^2 = 2``).  Ties of the arg-mins are decided
with the binary rule's relative tolerance 1e-9; ties of the arg-maxes over
classes go to the lowest index, exactly.

``PlainMulticlassBSGD(kernel, n_classes, budget, alpha, maintenance)``
learns from ``partial_fit(X, y)`` with ``y`` the class indices ``0 .. k-1``
and records per round the mistake flag (``argmax_c f_c != y``) in
``mistakes``; ``support_vectors`` and ``coef`` (``(k, n_SV)``, true
coefficients) are the model, oldest first.
"""

import math

import numpy as np

from tests.oracles.bsgd import BSGDSupportSet, first_minimum, golden_section, span_projection


class PlainMulticlassBSGD(BSGDSupportSet):
    def __init__(self, kernel, n_classes, budget=100, alpha=1e-4, maintenance="merging"):
        self.kernel = kernel
        self.k = n_classes
        self.budget = budget
        self.lam = alpha
        self.maintenance = maintenance
        self.sv = []            # support vectors, oldest first
        self.W = []             # their rows, lambda t alpha_i
        self.t = 0
        self.mistakes = []
        self.n_updates = 0
        self.n_maintenance = 0
        self.degradation = 0.0
        self.merged_rounds = []

    def decision_scores(self, Z):
        """(n, k): the class scores f_c."""
        if not self.sv:
            return np.zeros((len(Z), self.k))
        return (self.kernel(Z, np.array(self.sv)) @ np.array(self.W)) * self.scale

    @property
    def coef(self):
        return (np.array(self.W) * self.scale).T

    def partial_fit(self, X, y, sample_weight=None):
        """``sample_weight``: each example's weight ``w`` (its step is
        ``eta_t w``, the row ``w (e_y - e_r)``; nothing for ``w = 0``)."""
        weights = np.ones(len(y)) if sample_weight is None else sample_weight
        for x, label, w in zip(np.asarray(X, dtype=float), y, weights):
            f = self.decision_scores(x[None])[0]
            self.mistakes.append(int(np.argmax(f)) != label)   # ties: lowest index
            rivals = f.copy()
            rivals[label] = -np.inf
            r = int(np.argmax(rivals))                          # the runner-up
            self.t += 1
            if self.t == 1:
                self.sv, self.W = [], []
            if f[label] - f[r] < 1.0 and w > 0:
                row = np.zeros(self.k)
                row[label], row[r] = w, -w                      # alpha = eta_t row
                self._add_support_vector(x, self.W, row)
        return self

    def _remove(self, i):
        del self.sv[i]
        del self.W[i]

    def _smallest(self):
        return first_minimum([w @ w * self._k(x, x) for x, w in zip(self.sv, self.W)])

    def _removal(self):
        p = self._smallest()
        self.degradation += self.W[p] @ self.W[p] * self.scale ** 2 * self._k(self.sv[p],
                                                                               self.sv[p])
        self._remove(p)

    def _projection(self):
        p = self._smallest()
        others = [i for i in range(len(self.sv)) if i != p]
        V = np.array([self.sv[i] for i in others])
        k_p = self.kernel(V, self.sv[p][None])[:, 0]
        beta = span_projection(self.kernel(V, V), k_p)
        W_p = self.W[p]
        self.degradation += W_p @ W_p * self.scale ** 2 * max(
            self._k(self.sv[p], self.sv[p]) - k_p @ beta, 0.0)
        for i, b in zip(others, beta):
            self.W[i] = self.W[i] + b * W_p
        self._remove(p)

    def _merging(self):
        m = first_minimum([w @ w for w in self.W])
        x_m, W_m = self.sv[m], self.W[m]
        candidates = []   # (degradation, n, h, A, B)
        for n, (x_n, W_n) in enumerate(zip(self.sv, self.W)):
            if n == m:
                continue
            kappa = self._k(x_m, x_n)
            log_kappa = math.log(kappa) if kappa > 0 else -math.inf
            norm_m, norm_n, cross = W_m @ W_m, W_n @ W_n, W_m @ W_n

            def factors(h, log_kappa=log_kappa):    # kappa ** e = exp(e log kappa)
                return math.exp((1 - h) ** 2 * log_kappa), math.exp(h ** 2 * log_kappa)

            def sqnorm(h, norm_n=norm_n, cross=cross, factors=factors):
                A, B = factors(h)
                return norm_m * A * A + norm_n * B * B + 2.0 * cross * (A * B)

            h = golden_section(sqnorm)
            candidates.append((norm_m + norm_n + 2.0 * kappa * cross - sqnorm(h), n, h,
                               *factors(h)))
        best = first_minimum([c[0] for c in candidates])
        deg, n, h, A, B = candidates[best]
        z = h * x_m + (1 - h) * self.sv[n]
        W_z = W_m * A + self.W[n] * B
        self.degradation += deg * self.scale ** 2
        for i in sorted((m, n), reverse=True):
            self._remove(i)
        self.sv.append(z)
        self.W.append(W_z)
        self.merged_rounds.append(self.t)
