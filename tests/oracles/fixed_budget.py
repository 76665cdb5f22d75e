"""doc/algorithms.md#fixed-budget-family: the fixed-budget family, written
plainly from the spec, one example at a time with NumPy kernel rows.

Each class takes ``(kernel, **the estimator's parameters)`` with
``kernel(A, B) -> ndarray`` and learns from ``partial_fit(X, y)``, ``y`` in
{-1, +1}, in the order given.  It records ``mistakes`` (one bool per round:
``y f(x) <= 0``), ``n_updates``, and exposes the final support set as
``support_`` (stream indices, oldest first), ``support_vectors`` and
``coef_`` (signed coefficients, oldest first).

Kernel rows are computed against the support set only, so the bounded
algorithms run in time linear in the stream length.

Ties between support vectors go to the oldest; two values count as tied
when they agree to a relative 1e-9 (the estimators' rule: their margins are
maintained incrementally and may differ from a direct sum in the last bits).

The ``PlainShared*`` classes are the shared multi-class mode
(doc/algorithms.md#fixed-budget-shared): ``(kernel, n_classes, **the
estimator's parameters)``, ``partial_fit(X, y)`` with ``y`` the class
indices ``0 .. k-1``; one support set, a coefficient row (a NumPy vector of
length ``k``) per vector; per round ``mistakes`` (``argmax_c f_c != y``,
ties to the lowest index) and ``margins`` (``f_y - f_r``, ``r`` the
runner-up, ties to the lowest index, exact); ``coef`` is ``(k, n_SV)``.
"""

import numpy as np
from sklearn.utils import check_random_state

TIE_TOL = 1e-9


def near_max(values):
    """Positions of the values tied with the largest one, oldest first."""
    top = np.max(values)
    return np.flatnonzero(values >= top - TIE_TOL * (1 + abs(top)))


class _PlainOnline:
    """The support set and the stream loop every plain learner shares."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.support_ = []        # stream index of each support vector
        self.vectors = []         # their rows
        self.coef = []            # their signed coefficients
        self.mistakes = []
        self.scores = []          # f(x_t) before each round's update
        self.n_updates = 0
        self.n_seen = 0

    @property
    def coef_(self):
        return np.array(self.coef, dtype=float)

    @property
    def support_vectors(self):
        return np.array(self.vectors)

    def _row(self, x):
        """k(x, x_i) for every support vector, oldest first."""
        if not self.vectors:
            return np.zeros(0)
        return self.kernel(x[None, :], np.array(self.vectors))[0]

    def _self_kernel(self, x):
        return float(self.kernel(x[None, :], x[None, :])[0, 0])

    def _f(self, x):
        return float(self._row(x) @ self.coef_) if self.coef else 0.0

    def _add(self, x, coef):
        self.support_.append(self.n_seen)
        self.vectors.append(x)
        self.coef.append(coef)
        self.n_updates += 1

    def _remove(self, pos):
        del self.support_[pos], self.vectors[pos], self.coef[pos]

    def partial_fit(self, X, y):
        for x, label in zip(np.asarray(X, dtype=float), y):
            score = self._f(x)
            self.scores.append(score)
            self.mistakes.append(label * score <= 0)
            self._round(x, float(label), score)
            self.n_seen += 1
        return self

    def decision_function(self, Z):
        if not self.coef:
            return np.zeros(len(Z))
        return self.kernel(Z, self.support_vectors) @ self.coef_


class PlainStoptron(_PlainOnline):
    """doc/algorithms.md#stoptron: perceptron update on a mistake while
    ``|S| < B``; then frozen."""

    def __init__(self, kernel, budget=100):
        super().__init__(kernel)
        self.budget = budget

    def _round(self, x, y, score):
        if y * score <= 0 and len(self.coef) < self.budget:
            self._add(x, y)


class PlainRandomBudgetPerceptron(_PlainOnline):
    """doc/algorithms.md#random-budget-perceptron: on a mistake with
    ``|S| = B`` remove position ``randint(B)``."""

    def __init__(self, kernel, budget=100, random_state=None):
        super().__init__(kernel)
        self.budget = budget
        self.rng = check_random_state(random_state)

    def _round(self, x, y, score):
        if y * score <= 0:
            if len(self.coef) == self.budget:
                self._remove(self.rng.randint(self.budget))
            self._add(x, y)


class PlainBudgetPerceptron(_PlainOnline):
    """doc/algorithms.md#budget-perceptron: Crammer-Kandola-Singer; fixed cache (Fig. 3) or, with
    ``budget=None``, the adaptive DistillCache (Fig. 2).  The margins
    ``f(x_j)`` are recomputed from scratch (the plain way)."""

    def __init__(self, kernel, budget=100, beta=0.0):
        super().__init__(kernel)
        self.budget = budget
        self.beta = beta
        self.n_distilled = 0
        self.n_ties = 0           # removal decisions between tied candidates
        self.n_newer_at_removal = []  # per removal: support vectors newer than the removed one

    def _leave_one_out(self):
        """y_j (f(x_j) - alpha_j k(x_j, x_j)) for every support vector."""
        S = self.support_vectors
        K = self.kernel(S, S)
        alpha = self.coef_
        y = np.sign(alpha)
        return y * (K @ alpha - alpha * np.diag(K))

    def _most_redundant(self, values):
        tied = near_max(values)
        self.n_ties += len(tied) > 1
        self.n_newer_at_removal.append(len(self.coef) - 1 - int(tied[0]))
        return int(tied[0])

    def _round(self, x, y, score):
        if y * score > self.beta:
            return
        if self.budget is not None and len(self.coef) == self.budget:
            self._remove(self._most_redundant(self._leave_one_out()))
        self._add(x, y)
        if self.budget is None:
            while len(self.coef) > 1:
                values = self._leave_one_out()[:-1]   # the new one is no candidate
                pos = self._most_redundant(values)
                if values[pos] < self.beta - TIE_TOL * (1 + abs(self.beta)):
                    break
                self._remove(pos)
                self.n_distilled += 1


class _ForgetronDamage:
    """The Forgetron's counters ``M`` and ``Q`` and its shrink; ``removals``
    records, per removal, the quantities of the shrink: M, Q before,
    sigma_r, mu, a, phi, Psi(phi)."""

    def _start_counters(self, budget, self_tuned):
        self.budget = budget
        self.self_tuned = self_tuned
        self.M = 0
        self.Q = 0.0
        self.removals = []

    def _shrink(self, sigma, mu):
        """phi for the removed vector's sigma and margin mu; Q += Psi(phi)."""
        phi = PlainForgetron.choose_phi(sigma, mu, 15 / 32 * self.M - self.Q)
        psi = PlainForgetron.psi(sigma, phi, mu)
        self.removals.append(dict(M=self.M, Q=self.Q, sigma=sigma, mu=mu,
                                  a=sigma ** 2 - 2 * sigma * mu, phi=phi, psi=psi))
        self.Q += psi
        return phi


class PlainForgetron(_ForgetronDamage, _PlainOnline):
    """doc/algorithms.md#forgetron: the self-tuned Forgetron (or, ``self_tuned=False``, remove the
    oldest and never shrink)."""

    def __init__(self, kernel, budget=100, self_tuned=True):
        _PlainOnline.__init__(self, kernel)
        self._start_counters(budget, self_tuned)
        self.sigma = []
        self.labels = []

    @property
    def coef_(self):
        return np.array(self.sigma) * np.array(self.labels)

    def _add(self, x, coef):
        super()._add(x, coef)
        self.sigma.append(1.0)
        self.labels.append(coef)

    def _remove(self, pos):
        super()._remove(pos)
        del self.sigma[pos], self.labels[pos]

    @staticmethod
    def psi(sigma, phi, mu):
        return (sigma * phi) ** 2 + 2 * sigma * phi * (1 - phi * mu)

    @classmethod
    def choose_phi(cls, sigma, mu, room):
        """max{phi in (0, 1] : Psi(phi) <= room}: 1 if Psi(1) fits, else the
        largest root of Psi(phi) = room inside (0, 1] (Psi(0) = 0 < room
        and Psi is continuous, so Psi <= room on (0, that root])."""
        if cls.psi(sigma, 1.0, mu) <= room:
            return 1.0
        a, b, c = sigma ** 2 - 2 * sigma * mu, 2 * sigma, -room
        if a == 0:
            roots = [-c / b]
        else:
            disc = max(b * b - 4 * a * c, 0.0)
            q = -0.5 * (b + np.sqrt(disc))      # b >= 0: no cancellation
            roots = [q / a, c / q]
        return max(min(r, 1.0) for r in roots if 0 < r <= 1 + 1e-12)

    def _round(self, x, y, score):
        if y * score > 0:
            return
        self.M += 1
        self._add(x, y)
        if len(self.coef) <= self.budget:
            return
        if self.self_tuned:
            mu = self.labels[0] * self._f(self.vectors[0])          # f' includes x_t
            phi = self._shrink(self.sigma[0], mu)
            self.sigma = [s * phi for s in self.sigma]
        self._remove(0)


class PlainKernelPassiveAggressive(_PlainOnline):
    """doc/algorithms.md#passive-aggressive: PA-I, unbounded: on loss > 0
    add ``y min(C, loss / k(x, x))``."""

    def __init__(self, kernel, C=1.0):
        super().__init__(kernel)
        self.C = C

    def _round(self, x, y, score):
        loss = max(0.0, 1.0 - y * score)
        if loss > 0:
            k_xx = self._self_kernel(x)
            tau = min(self.C, loss / k_xx) if k_xx > 0 else self.C
            self._add(x, y * tau)


# ---------------------------------------------------------------------------
# the shared multi-class mode (doc/algorithms.md#fixed-budget-shared)
# ---------------------------------------------------------------------------
class _PlainShared:
    """One support set for ``n_classes`` classes: the top-two reduction of
    the binary rule, written out with full rows.  A round: scores ``f``
    before anything changes, runner-up ``r = argmax_{c != y} f_c`` and
    margin ``m = f_y - f_r``; ``_round`` does the rest."""

    def __init__(self, kernel, n_classes):
        self.kernel = kernel
        self.k = n_classes
        self.support_ = []        # stream index of each support vector
        self.vectors = []
        self.rows = []            # their coefficient rows
        self.labels = []          # the class of each one's example
        self.mistakes = []
        self.margins = []
        self.n_updates = 0
        self.n_seen = 0

    @property
    def coef(self):
        return np.array(self.rows, dtype=float).reshape(-1, self.k).T

    @property
    def support_vectors(self):
        return np.array(self.vectors)

    def decision_scores(self, Z):
        """(n, k): the class scores f_c, summed over the support vectors
        oldest first (as the estimators sum a round's scores: a margin
        that is 1 or 0 in exact arithmetic is then rounded alike)."""
        scores = np.zeros((len(Z), self.k))
        if self.vectors:
            K = self.kernel(np.asarray(Z, dtype=float), self.support_vectors)
            for i, row in enumerate(self.rows):
                scores += K[:, i:i + 1] * row
        return scores

    def _self_kernel(self, x):
        return float(self.kernel(x[None, :], x[None, :])[0, 0])

    def _add(self, x, label, row):
        self.support_.append(self.n_seen)
        self.vectors.append(x)
        self.rows.append(np.asarray(row, dtype=float))
        self.labels.append(label)
        self.n_updates += 1

    def _remove(self, pos):
        del self.support_[pos], self.vectors[pos], self.rows[pos], self.labels[pos]

    def _pair_row(self, label, runner, a):
        row = np.zeros(self.k)
        row[label], row[runner] = a, -a
        return row

    @staticmethod
    def top_two(f, label):
        """(runner-up, margin) of the scores ``f`` for class ``label``."""
        rivals = np.array(f, dtype=float)
        rivals[label] = -np.inf
        runner = int(np.argmax(rivals))           # ties: the lowest index
        return runner, float(f[label] - f[runner])

    def partial_fit(self, X, y, sample_weight=None):
        weights = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight)
        for x, label, w in zip(np.asarray(X, dtype=float), y, weights):
            label = int(label)
            f = self.decision_scores(x[None])[0]
            runner, margin = self.top_two(f, label)
            self.mistakes.append(int(np.argmax(f)) != label)
            self.margins.append(margin)
            self._round(x, label, runner, margin, float(w))
            self.n_seen += 1
        return self


class PlainSharedStoptron(_PlainShared):
    """On ``m <= 0`` while ``|S| < B``: add the row ``e_y - e_r``."""

    def __init__(self, kernel, n_classes, budget=100):
        super().__init__(kernel, n_classes)
        self.budget = budget

    def _round(self, x, label, runner, margin, w):
        if margin <= 0 and len(self.rows) < self.budget:
            self._add(x, label, self._pair_row(label, runner, 1.0))


class PlainSharedRandomBudgetPerceptron(_PlainShared):
    """On ``m <= 0`` with ``|S| = B``: remove position ``randint(B)``, then
    add the row ``e_y - e_r``."""

    def __init__(self, kernel, n_classes, budget=100, random_state=None):
        super().__init__(kernel, n_classes)
        self.budget = budget
        self.rng = check_random_state(random_state)

    def _round(self, x, label, runner, margin, w):
        if margin <= 0:
            if len(self.rows) == self.budget:
                self._remove(self.rng.randint(self.budget))
            self._add(x, label, self._pair_row(label, runner, 1.0))


class PlainSharedForgetron(_ForgetronDamage, _PlainShared):
    """On ``m <= 0``: ``M += 1``, add the row ``e_y - e_r``; at ``|S| = B +
    1`` (self-tuned): ``r`` the oldest, ``sigma_r = ||alpha_r||`` (its row's
    Euclidean norm), ``mu`` its own class's top-two margin under the model
    after the insertion; the binary rule's ``phi`` (PlainForgetron's), every
    row times ``phi``, ``Q += Psi(phi)``; remove ``r``.  ``removals`` as
    PlainForgetron's."""

    def __init__(self, kernel, n_classes, budget=100, self_tuned=True):
        _PlainShared.__init__(self, kernel, n_classes)
        self._start_counters(budget, self_tuned)

    def _round(self, x, label, runner, margin, w):
        if margin > 0:
            return
        self.M += 1
        self._add(x, label, self._pair_row(label, runner, 1.0))
        if len(self.rows) <= self.budget:
            return
        if self.self_tuned:
            _, mu = self.top_two(self.decision_scores(self.vectors[0][None])[0], self.labels[0])
            phi = self._shrink(float(np.linalg.norm(self.rows[0])), mu)
            self.rows = [row * phi for row in self.rows]
        self._remove(0)


class PlainSharedKernelPassiveAggressive(_PlainShared):
    """PA-I, unbounded: on ``m < 1`` (and a weight ``w > 0``) add the row
    ``tau (e_y - e_r)``, ``tau = min(C w, (1 - m) / (2 k(x, x)))`` (``C w``
    when ``k(x, x) = 0``)."""

    def __init__(self, kernel, n_classes, C=1.0):
        super().__init__(kernel, n_classes)
        self.C = C

    def _round(self, x, label, runner, margin, w):
        if margin < 1 and w > 0:
            norm = 2 * self._self_kernel(x)
            cap = self.C * w
            tau = min(cap, (1 - margin) / norm) if norm > 0 else cap
            self._add(x, label, self._pair_row(label, runner, tau))
