"""doc/algorithms.md#kernel-ogd: kernel OGD / NORMA, Nystrom OGD (NOGD) and
Fourier OGD (FOGD), written plainly from the spec, one example at a time
with NumPy kernel rows (FOGD: NumPy features).

Each class takes ``(kernel, **the estimator's parameters)`` with
``kernel(A, B) -> ndarray`` and learns from ``partial_fit(X, y)``, ``y`` in
{-1, +1}, in the order given.  It records ``mistakes`` (one bool per round:
``y f(x) <= 0`` for the model before the round), ``scores``, ``n_updates``,
and exposes the final support set as ``support_`` (stream indices, oldest
first) and ``coef_`` (the coefficients over it, oldest first) and
``decision_function``; FOGD has ``w`` instead of a support set.
"""

import math

import numpy as np

from tests.oracles.fixed_budget import _PlainOnline


class PlainKernelOGD(_PlainOnline):
    """doc/algorithms.md#kernel-ogd: every round ``alpha <- (1 - eta lam) alpha``; if ``y f(x) < 1``
    append ``(x, eta y)``; with a budget, at ``|S| = B + 1`` drop the oldest.
    ``f(x)`` is the model's score before the round."""

    def __init__(self, kernel, budget=None, eta0=0.5, alpha=0.0):
        super().__init__(kernel)
        self.budget, self.eta, self.lam = budget, eta0, alpha

    def _round(self, x, y, score):
        self.coef = [(1 - self.eta * self.lam) * a for a in self.coef]
        if y * score < 1:
            self._add(x, self.eta * y)
            if self.budget is not None and len(self.coef) == self.budget + 1:
                self._remove(0)


class PlainNystromOGD(PlainKernelOGD):
    """doc/algorithms.md#kernel-ogd, NOGD: stage 1 is kernel OGD (lam = 0) until ``|S| = B``; at the
    first round with ``y f(x) < 1`` and ``|S| = B``: ``K_SS = V Lam V^T``,
    the ``k`` largest eigenpairs (eigenvalues ``<= 1e-12 lam_max``
    dropped), ``M = Lam^{-1/2} V^T``, ``w = Lam^{1/2} V^T alpha``; then this
    round and every later one ``w += eta y z`` when ``y w.z < 1``,
    ``z = M k(x, S)``.  The round that switches counts its mistake on the
    stage-1 score (the model before the round)."""

    def __init__(self, kernel, budget=100, n_components=None, eta0=0.5):
        super().__init__(kernel, budget=budget, eta0=eta0)
        self.k = math.ceil(0.2 * budget) if n_components is None else n_components
        self.M = self.w = None

    def _features(self, X):
        return self.kernel(np.asarray(X, dtype=float), np.array(self.vectors)) @ self.M.T

    def decision_function(self, Z):
        if self.M is None:
            return super().decision_function(Z)
        return self._features(Z) @ self.w

    @property
    def coef_(self):
        if self.M is None:
            return np.array(self.coef, dtype=float)
        return self.M.T @ self.w

    def _feature_step(self, x, y):
        z = self._features(x[None, :])[0]
        if y * float(z @ self.w) < 1:
            self.w = self.w + self.eta * y * z
            self.n_updates += 1

    def _round(self, x, y, score):
        if self.M is not None:
            self._feature_step(x, y)
        elif y * score < 1 and len(self.coef) == self.budget:
            S = np.array(self.vectors)
            values, vectors = np.linalg.eigh(self.kernel(S, S))
            order = np.argsort(-values, kind="stable")[:self.k]
            values, vectors = values[order], vectors[:, order]
            keep = values > 1e-12 * values[0]
            values, vectors = values[keep], vectors[:, keep]
            alpha = np.array(self.coef, dtype=float)
            self.M = (vectors / np.sqrt(values)).T
            self.w = np.sqrt(values) * (vectors.T @ alpha)
            self._feature_step(x, y)
        else:
            super()._round(x, y, score)


class PlainFourierOGD:
    """doc/algorithms.md#kernel-ogd, FOGD: ``U = sqrt(2 gamma) rng.standard_normal((n_features, D))``
    drawn at the first fit, ``z(x) = [cos(xU), sin(xU)] / sqrt(D)``; each
    round ``w += eta y z`` when ``y w.z < 1``.  ``U`` is given (the
    estimator's draw is checked apart, from its ``random_state``)."""

    def __init__(self, U, eta0=0.5):
        self.U, self.eta = np.asarray(U, dtype=float), eta0
        self.w = np.zeros(2 * self.U.shape[1])
        self.mistakes, self.scores = [], []
        self.n_updates = 0

    def features(self, X):
        P = np.asarray(X, dtype=float) @ self.U
        return np.hstack([np.cos(P), np.sin(P)]) / np.sqrt(self.U.shape[1])

    def decision_function(self, X):
        return self.features(X) @ self.w

    def partial_fit(self, X, y):
        for x, label in zip(np.asarray(X, dtype=float), y):
            z = self.features(x[None, :])[0]
            score = float(z @ self.w)
            self.scores.append(score)
            self.mistakes.append(label * score <= 0)
            if label * score < 1:
                self.w = self.w + self.eta * label * z
                self.n_updates += 1
        return self


class PlainFourierOGDShared(PlainFourierOGD):
    """doc/algorithms.md#kernel-ogd, FOGD's shared multi-class mode
    (``multi_class='crammer_singer'``): the same features, one row ``w_c``
    of ``W`` per class.  Each round with true class ``y`` (an index into
    ``classes``): scores ``s = W z`` before the round, the runner-up ``r =
    argmax_{c != y} s_c`` (ties: the lowest index), ``m = s_y - s_r``; when
    ``m < 1``, ``W += eta (e_y - e_r) z^T`` (the full k-long row of the
    binary step ``eta y z``; no decay, FOGD has none).  One class: no
    rival, no update.  A round is a mistake when ``argmax_c s_c != y``
    (ties: the lowest index).  ``margins`` records ``m`` per round."""

    def __init__(self, U, classes, eta0=0.5):
        super().__init__(U, eta0)
        self.classes = list(classes)
        self.W = np.zeros((len(self.classes), 2 * self.U.shape[1]))
        self.margins = []

    def decision_function(self, X):
        return self.features(X) @ self.W.T

    def add_class(self, position, label):
        """A class first seen now: a zero row at ``position``."""
        self.classes.insert(position, label)
        self.W = np.insert(self.W, position, 0.0, axis=0)

    def partial_fit(self, X, y):
        k = len(self.classes)
        for x, label in zip(np.asarray(X, dtype=float), y):
            z = self.features(x[None, :])[0]
            s = self.W @ z
            c = self.classes.index(label)
            self.scores.append(s)
            self.mistakes.append(int(np.argmax(s)) != c)
            rivals = [r for r in range(k) if r != c]
            if not rivals:
                self.margins.append(math.inf)
                continue
            r = max(rivals, key=lambda j: (s[j], -j))
            m = float(s[c] - s[r])
            self.margins.append(m)
            if m < 1:
                row = np.zeros(k)
                row[c], row[r] = self.eta, -self.eta
                self.W = self.W + np.outer(row, z)
                self.n_updates += 1
        return self
