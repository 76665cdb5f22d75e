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

The shared multi-class modes (doc/algorithms.md#kernel-ogd, "Shared
multi-class mode"; ``PlainSharedKernelOGD``, ``PlainSharedNystromOGD``)
take ``(kernel, n_classes, **the estimator's parameters)`` and labels that
are class indices ``0 .. k-1``; they keep a full coefficient row per
support vector (true values, no global scale) and record per round the
mistake flag ``argmax_c f_c != y`` (ties: the lowest index) and the margin
``f_y - f_r`` against the runner-up ``r`` (ties: the lowest index).
"""

import math
import sys

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


def nystrom_switch(kernel, vectors, n_components, coef):
    """NOGD's switch: ``K_SS = V Lam V^T`` of the support vectors, the
    ``n_components`` largest eigenpairs (eigenvalues ``<= 1e-12 lam_max``
    dropped), ``M = Lam^{-1/2} V^T`` and the stage-1 model ``coef`` (``(|S|,)``
    or rows ``(|S|, k)``) carried over, ``Lam^{1/2} V^T coef``."""
    S = np.array(vectors)
    values, vecs = np.linalg.eigh(kernel(S, S))
    order = np.argsort(-values, kind="stable")[:n_components]
    values, vecs = values[order], vecs[:, order]
    keep = values > 1e-12 * values[0]
    values, vecs = values[keep], vecs[:, keep]
    carried = vecs.T @ np.array(coef, dtype=float)
    root = np.sqrt(values).reshape((-1,) + (1,) * (carried.ndim - 1))
    return (vecs / np.sqrt(values)).T, root * carried


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
            self.M, self.w = nystrom_switch(self.kernel, self.vectors, self.k, self.coef)
            self._feature_step(x, y)
        else:
            super()._round(x, y, score)


def top_two(f, label):
    """The runner-up ``r = argmax_{c != y} f_c`` (ties: the lowest index)
    and the margin ``f_y - f_r``; with one class, no rival: ``(None,
    the largest finite margin)``."""
    if len(f) == 1:
        return None, sys.float_info.max
    rivals = np.array(f, dtype=float)
    rivals[label] = -np.inf
    r = int(np.argmax(rivals))
    return r, float(f[label] - f[r])


class PlainSharedKernelOGD:
    """doc/algorithms.md#kernel-ogd, shared mode: every round, with the
    margin ``m = f_y - f_r`` of the model before the round, every row
    ``<- (1 - eta lam) row``; if ``m < 1`` append ``(x, eta (e_y - e_r))``;
    with a budget, at ``|S| = B + 1`` drop the oldest."""

    def __init__(self, kernel, n_classes, budget=None, eta0=0.5, alpha=0.0):
        self.kernel, self.k = kernel, n_classes
        self.budget, self.eta, self.lam = budget, eta0, alpha
        self.support_, self.vectors, self.rows = [], [], []
        self.mistakes, self.margins = [], []
        self.n_updates = self.n_seen = 0

    def _kernel_row(self, x):
        if not self.vectors:
            return np.zeros(0)
        return self.kernel(x[None, :], np.array(self.vectors))[0]

    def class_scores(self, x):
        """``f_c(x)`` for every class."""
        if not self.rows:
            return np.zeros(self.k)
        return self._kernel_row(x) @ np.array(self.rows)

    def decision_scores(self, Z):
        return np.array([self.class_scores(z) for z in np.asarray(Z, dtype=float)])

    @property
    def coef(self):
        """(k, |S|): the rows, oldest first, as ``dual_coef_``."""
        return np.array(self.rows, dtype=float).reshape(-1, self.k).T

    def partial_fit(self, X, y):
        for x, label in zip(np.asarray(X, dtype=float), y):
            f = self.class_scores(x)
            self.mistakes.append(int(np.argmax(f)) != label)
            r, m = top_two(f, label)
            self.margins.append(m)
            self._round(x, int(label), r, m)
            self.n_seen += 1
        return self

    def _add(self, x, label, r):
        row = np.zeros(self.k)
        row[label], row[r] = self.eta, -self.eta
        self.support_.append(self.n_seen)
        self.vectors.append(x)
        self.rows.append(row)
        self.n_updates += 1

    def _round(self, x, label, r, m):
        self.rows = [(1 - self.eta * self.lam) * row for row in self.rows]
        if m < 1:
            self._add(x, label, r)
            if self.budget is not None and len(self.rows) == self.budget + 1:
                del self.support_[0], self.vectors[0], self.rows[0]


class PlainSharedNystromOGD(PlainSharedKernelOGD):
    """doc/algorithms.md#kernel-ogd, NOGD's shared mode: stage 1 is the
    shared kernel OGD (lam = 0) until ``|S| = B``; at the first round with
    ``m < 1`` and ``|S| = B``: ``M`` as the binary rule's, and the rows
    ``A`` (``(B, k)``) carried over into ``W = Lam^{1/2} V^T A`` (one column
    per class); then this round and every later one, with ``z = M k(x, S)``
    and the margin ``m`` of the scores ``W^T z``: when ``m < 1``, ``W[:, y]
    += eta z`` and ``W[:, r] -= eta z``.  The round that switches counts its
    mistake on the stage-1 scores (the model before the round)."""

    def __init__(self, kernel, n_classes, budget=100, n_components=None, eta0=0.5):
        super().__init__(kernel, n_classes, budget=budget, eta0=eta0)
        self.n_components = math.ceil(0.2 * budget) if n_components is None else n_components
        self.M = self.W = None

    def _features(self, x):
        return self.M @ self._kernel_row(x)

    def class_scores(self, x):
        if self.M is None:
            return super().class_scores(x)
        return self._features(x) @ self.W

    @property
    def coef(self):
        if self.M is None:
            return super().coef
        return (self.M.T @ self.W).T

    def _feature_step(self, x, label):
        z = self._features(x)
        r, m = top_two(z @ self.W, label)
        if m < 1:
            self.W[:, label] += self.eta * z
            self.W[:, r] -= self.eta * z
            self.n_updates += 1

    def _round(self, x, label, r, m):
        if self.M is not None:
            self._feature_step(x, label)
        elif m < 1 and len(self.rows) == self.budget:
            self.M, self.W = nystrom_switch(self.kernel, self.vectors, self.n_components,
                                            self.rows)
            self._feature_step(x, label)
        else:
            super()._round(x, label, r, m)


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
            if not rivals:      # no rival: the largest finite margin
                self.margins.append(sys.float_info.max)
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
