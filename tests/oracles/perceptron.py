"""doc/algorithms.md#kernel-perceptron: Kernel Perceptron with the Khardon-Wachman variants."""

import numpy as np


class PlainKernelPerceptron:
    """Dual perceptron, Khardon & Wachman Fig. 2, one example at a time.

    ``partial_fit(X, y)`` runs one epoch over ``X`` in order; calling it
    again with the *same* ``X`` runs another epoch (examples keep their
    ``m_j``), as ``fit`` does with ``shuffle=False``.
    """

    def __init__(self, kernel, eta0=1.0, theta_init=0.0, threshold_step=0.0, tau=0.0,
                 lam=0.0, alpha_bound=None, kappa=None):
        self.kernel = kernel
        self.eta0 = eta0
        self.theta_init = theta_init
        self.threshold_step = threshold_step
        self.tau = tau
        self.lam = lam
        self.alpha_bound = np.inf if alpha_bound is None else alpha_bound
        self.kappa = kappa
        self.X = None

    def _value(self, v):
        return self.kappa if v == "kappa" else v

    def partial_fit(self, X, y):
        if self.X is None:
            self.X, self.y = X, y
            if self.kappa is None:
                self.kappa = np.mean([self.kernel(X[i:i + 1], X[i:i + 1])[0, 0] for i in range(len(X))])
            self.m = np.zeros(len(X), dtype=int)
            self.theta = self._value(self.theta_init)
            self.support_indices = []          # by first update
            self.hypotheses = [(self.m.copy(), self.theta)]
            self.votes = [0]
            self.tally = 0
            self.best_tally = 0
            self.survivor = 0
            self.mistakes = []
            self.n_updates = 0
        C = self._value(self.threshold_step)
        for j in range(len(X)):
            sv = np.flatnonzero(self.m)                      # examples updated on
            k_row = self.kernel(X[j:j + 1], X[sv])[0] if len(sv) else np.zeros(0)
            w_x = float(np.sum(self.eta0 * self.m[sv] * y[sv] * k_row))
            k_jj = self.kernel(X[j:j + 1], X[j:j + 1])[0, 0]
            total = w_x + (y[j] * self.lam * k_jj if self.m[j] > 0 else 0.0)
            if total < self.theta - self.tau * self.kappa:
                y_hat = -1
            elif total > self.theta + self.tau * self.kappa:
                y_hat = 1
            else:
                y_hat = 0
            self.mistakes.append(y[j] * (total - self.theta) <= 0)
            if y_hat != y[j] and self.m[j] < self.alpha_bound:
                if self.m[j] == 0:
                    self.support_indices.append(j)
                self.m[j] += 1
                self.theta = self.theta - self.eta0 * y[j] * C
                self.n_updates += 1
                self.hypotheses.append((self.m.copy(), self.theta))
                self.votes.append(0)
                self.tally = 0
            elif y_hat == y[j]:
                k = len(self.hypotheses) - 1
                self.votes[k] += 1
                self.tally += 1
                if self.tally > self.best_tally:
                    self.best_tally = self.tally
                    self.survivor = k
        return self

    def _score(self, hyp, Z):
        m, theta = hyp
        coef = self.eta0 * m * self.y
        return self.kernel(Z, self.X) @ coef - theta

    def decision_function(self, Z, hypothesis="last"):
        if hypothesis == "last":
            return self._score(self.hypotheses[-1], Z)
        if hypothesis == "longest_survivor":
            return self._score(self.hypotheses[self.survivor], Z)
        if hypothesis == "voted":
            return sum(v * np.sign(self._score(h, Z)) for h, v in zip(self.hypotheses, self.votes))
        if hypothesis == "averaged":
            if sum(self.votes) == 0:
                return self._score(self.hypotheses[-1], Z)
            return sum(v * self._score(h, Z) for h, v in zip(self.hypotheses, self.votes)) / sum(self.votes)
        raise ValueError(hypothesis)

    def coef(self, hypothesis="last"):
        """Coefficients of the support vectors (order of first update)."""
        if hypothesis in ("last", "voted"):
            m, theta = self.hypotheses[-1]
        elif hypothesis == "longest_survivor":
            m, theta = self.hypotheses[self.survivor]
        else:
            total = sum(self.votes)
            if total == 0:
                m, theta = self.hypotheses[-1]
            else:
                m = sum(v * h[0] for h, v in zip(self.hypotheses, self.votes)) / total
                theta = sum(v * h[1] for h, v in zip(self.hypotheses, self.votes)) / total
        idx = np.array(self.support_indices, dtype=int)
        return self.eta0 * m[idx] * self.y[idx], -theta
