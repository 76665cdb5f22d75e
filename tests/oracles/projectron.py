"""doc/algorithms.md#projectron: Projectron and Projectron++, one example at a time.

Plain NumPy: the Gram matrix of the support set is kept (kernel rows against
the support set only) and every projection solves ``K d = k_t`` from
scratch with :func:`numpy.linalg.solve`.

The shared multi-class mode (``PlainSharedProjectron``,
``PlainSharedProjectronPlusPlus``) runs the same rule on the direction
``(e_y - e_r) phi(x_t)`` of every round, with full ``k``-long coefficient
rows: a step adds ``step * outer(d, e_y - e_r)`` to the rows, and the
direction's squared norms are twice those of ``phi(x_t)`` (``NORM = 2``):
the projection's ``2 ||P k_t||²`` and the distance ``sqrt(2 delta²)``.
"""

import numpy as np

SPAN_TOL = 1e-12   # delta² <= SPAN_TOL * k(x_t, x_t): x_t is in the span


class PlainProjectron:
    """Projectron (Orabona, Keshet & Caputo, doc/algorithms.md#projectron).

    ``partial_fit(X, y)`` continues the stream with ``X`` (labels in
    {-1, +1}); ``support_indices`` are stream indices, oldest first, and
    ``coef`` their coefficients.
    """

    # ||direction||² / k(x_t, x_t) of an update: y_t phi(x_t)
    NORM = 1.0

    def __init__(self, kernel, eta=0.1, budget=None):
        self.kernel = kernel
        self.eta = eta
        self.budget = budget
        self.support_indices = []
        self.support_vectors = []
        self._cache = np.zeros((0, 0))
        self.coef = np.zeros(0)
        self.gram = np.zeros((0, 0))
        self.mistakes = []
        self.n_updates = 0
        self.n_seen = 0

    # -- the projection of k(x_t, .) onto span(S) ------------------------
    def _project(self, k_t, k_tt):
        """d = K^-1 k_t, ||P k_t||² = k_t . d, delta² (0 when in the span)."""
        if len(self.coef) == 0:
            d = np.zeros(0)
        else:
            d = np.linalg.solve(self.gram, k_t)
        pk2 = float(k_t @ d)
        delta2 = k_tt - pk2
        if delta2 <= SPAN_TOL * k_tt:
            delta2 = 0.0
        return d, pk2, delta2

    def _add(self, x, index, k_t, k_tt, coef):
        n = len(self.coef)
        gram = np.empty((n + 1, n + 1))
        gram[:n, :n] = self.gram
        gram[n, :n] = gram[:n, n] = k_t
        gram[n, n] = k_tt
        self.gram = gram
        self.support_vectors.append(x)
        self.support_indices.append(index)
        self.coef = np.concatenate([self.coef, [coef]])

    def _mistake_update(self, x, index, y, k_t, k_tt):
        """``y``: the update's direction (the label, or the row e_y - e_r)."""
        d, _, delta2 = self._project(k_t, k_tt)
        n = len(self.coef)
        full = self.budget is not None and n >= self.budget
        if n == 0:
            if delta2 > 0:          # k(x_t, x_t) > 0: always add
                self._add(x, index, k_t, k_tt, y)
        elif delta2 == 0 or np.sqrt(self.NORM * delta2) <= self.eta or full:
            self.coef = self.coef + np.multiply.outer(d, y)
        else:
            self._add(x, index, k_t, k_tt, y)
        self.n_updates += 1

    def _margin_update(self, y, score, k_t, k_tt):
        pass

    def _projected_step(self, loss, y, k_t, k_tt):
        """The journal-form step along the projection of the direction
        ``y`` (the label, or the row e_y - e_r), of squared norm ``NORM
        ||P k_t||²`` at the distance ``sqrt(NORM delta²)``."""
        d, pk2, delta2 = self._project(k_t, k_tt)
        pk2 = self.NORM * pk2
        if not pk2 > 0:
            return
        if delta2 == 0:
            ratio = 0.0
        elif self.eta == 0:
            ratio = np.inf
        else:
            ratio = np.sqrt(self.NORM * delta2) / self.eta
        if loss >= ratio:
            tau = min(loss / pk2, 2 * (loss - ratio) / pk2, 1.0)
            self.coef = self.coef + tau * np.multiply.outer(d, y)
            self.n_updates += 1

    def partial_fit(self, X, y):
        for i in range(X.shape[0]):
            x = X[i:i + 1]
            stored = self._stored() if self.support_vectors else x[:0]
            row = self.kernel(x, np.vstack([stored, x]))[0]
            self.n_seen += 1
            self._round(x[0], self.n_seen - 1, y[i], row[:-1], float(row[-1]))
        return self

    def _round(self, x, index, y, k_t, k_tt):
        """One round: ``x`` (stream position ``index``, label ``y``) with
        its kernel row ``k_t`` against the support set and ``k(x, x)``."""
        score = float(k_t @ self.coef)
        self.mistakes.append(y * score <= 0)
        if y * score <= 0:
            self._mistake_update(x, index, y, k_t, k_tt)
        else:
            self._margin_update(y, score, k_t, k_tt)

    def _stored(self):
        """The support vectors as one array (rebuilt only after an addition)."""
        if len(self._cache) != len(self.support_vectors):
            self._cache = np.array(self.support_vectors).reshape(len(self.support_vectors), -1)
        return self._cache

    def decision_function(self, Z):
        if not self.support_vectors:
            return np.zeros(Z.shape[0])
        return self.kernel(Z, self._stored()) @ self.coef


class PlainProjectronPlusPlus(PlainProjectron):
    """Projectron++: the Projectron, plus on a margin error
    (0 < y f(x) < 1) the journal-form projected update."""

    def _margin_update(self, y, score, k_t, k_tt):
        if not y * score < 1:
            return
        self._projected_step(1 - y * score, y, k_t, k_tt)


class PlainSharedProjectron(PlainProjectron):
    """The Projectron's shared multi-class mode (doc/algorithms.md#projectron):
    one support set, a row of ``n_classes`` coefficients per vector
    (``coef`` is ``(n_SV, k)``), labels the class indices ``0 .. k-1``.  A
    round's margin ``m = f_y - f_r`` against the runner-up ``r = argmax_{c
    != y} f_c`` (ties: the lowest index) is recorded in ``margins``, the
    mistake ``argmax_c f_c != y`` in ``mistakes``; the binary rule runs
    with ``m`` for ``y f(x)`` along the direction ``e_y - e_r``."""

    NORM = 2.0      # ||(e_y - e_r) phi(x)||² = 2 k(x, x)

    def __init__(self, kernel, n_classes, eta=0.1, budget=None):
        super().__init__(kernel, eta=eta, budget=budget)
        self.k = n_classes
        self.coef = np.zeros((0, n_classes))
        self.margins = []

    def _round(self, x, index, y, k_t, k_tt):
        f = k_t @ self.coef
        label = int(y)
        rivals = f.copy()
        rivals[label] = -np.inf
        r = int(np.argmax(rivals))                  # the runner-up: lowest index
        margin = f[label] - f[r]
        self.margins.append(margin)
        self.mistakes.append(int(np.argmax(f)) != label)
        pair = np.zeros(self.k)
        pair[label], pair[r] = 1.0, -1.0
        if margin <= 0:
            self._mistake_update(x, index, pair, k_t, k_tt)
        else:
            self._margin_update(pair, margin, k_t, k_tt)

    def _margin_update(self, pair, margin, k_t, k_tt):
        pass

    def decision_function(self, Z):
        if not self.support_vectors:
            return np.zeros((Z.shape[0], self.k))
        return self.kernel(Z, self._stored()) @ self.coef


class PlainSharedProjectronPlusPlus(PlainSharedProjectron):
    """Projectron++'s shared multi-class mode: on a margin error ``0 < m <
    1`` the journal-form step with the loss ``1 - m`` along the projection
    of ``(e_y - e_r) phi(x_t)``."""

    def _margin_update(self, pair, margin, k_t, k_tt):
        if margin < 1:
            self._projected_step(1 - margin, pair, k_t, k_tt)
