"""doc/algorithms.md#tighter-perceptron and
doc/algorithms.md#tightest-perceptron, one example at a time.

Plain NumPy, straight from the text: every quantity a removal decision
needs (``f`` on the validation set, the kernel values between support and
validation vectors) is recomputed from scratch, O(B |V| d) per decision.
"""

import numpy as np
from scipy.special import betainc


class _PlainBudgetStream:
    """The shared stream: score, add on a mistake, remove the argmin of a
    validation loss when the support set holds ``budget + 1`` vectors."""

    def __init__(self, kernel, budget):
        self.kernel = kernel
        self.budget = budget
        self.sv_x = []            # support vectors, oldest first
        self.sv_y = []
        self.sv_index = []        # stream index of each
        self.mistakes = []
        self.removed = []         # stream index of every removed vector
        self.n_seen = 0

    def _f(self, Z):
        """f on the rows of Z."""
        if not self.sv_x:
            return np.zeros(len(Z))
        return self.kernel(Z, np.array(self.sv_x)) @ np.array(self.sv_y, dtype=float)

    def partial_fit(self, X, y, ids=None):
        """One pass over ``X`` in order; ``ids`` are the example identities
        (default: new examples, numbered on from the last call)."""
        if ids is None:
            ids = np.arange(self.n_seen, self.n_seen + len(X))
        self.n_seen += len(X)
        for x, label, example_id in zip(X, y, ids):
            self.k_row = (self.kernel(x[None], np.array(self.sv_x))[0] if self.sv_x
                          else np.zeros(0))                  # k(x_t, S)
            score = float(self.k_row @ np.array(self.sv_y, dtype=float))
            mistake = label * score <= 0
            self.mistakes.append(bool(mistake))
            if mistake:
                self._before_insert(x, label, example_id)
                self.sv_x.append(x)
                self.sv_y.append(float(label))
                self.sv_index.append(len(self.mistakes) - 1)
                self._after_insert(label)
                if len(self.sv_x) > self.budget:
                    r = int(np.argmin(self._removal_losses()))   # first = oldest
                    x_r = self.sv_x.pop(r)
                    self.sv_y.pop(r)
                    self.removed.append(self.sv_index.pop(r))
                    self._after_remove(r, x_r)
            else:
                self._on_correct(x, label, example_id)
        return self

    def _before_insert(self, x, label, example_id):
        pass

    def _after_insert(self, label):
        pass

    def _after_remove(self, r, x_r):
        pass

    def _on_correct(self, x, label, example_id):
        pass

    @property
    def support_indices(self):
        """Stream positions (round numbers) of the support vectors, oldest first."""
        return list(self.sv_index)

    @property
    def coef(self):
        return np.array(self.sv_y)

    def decision_function(self, Z):
        return self._f(Z)


class PlainTighterPerceptron(_PlainBudgetStream):
    """Tighter Perceptron: 0-1 loss on the validation set."""

    def __init__(self, kernel, budget=100, validation="budget", random_state=None):
        super().__init__(kernel, budget)
        self.validation = validation
        self.rng = np.random.RandomState(random_state)
        if validation == "budget":
            self.A = budget
        elif isinstance(validation, (int, np.integer)):
            self.A = int(validation)
        self.val_x, self.val_y = [], []
        self.val_ids = set()          # 'full': identities already in V
        self.n_correct = 0            # 'A': rounds without a mistake

    def _add_seen(self, x, label, example_id):
        if self.validation == "full" and example_id not in self.val_ids:
            self.val_ids.add(example_id)
            self.val_x.append(x)
            self.val_y.append(float(label))

    def _before_insert(self, x, label, example_id):
        self._add_seen(x, label, example_id)

    def _on_correct(self, x, label, example_id):
        self._add_seen(x, label, example_id)
        if self.validation not in ("full", "support"):
            self.n_correct += 1
            if self.n_correct <= self.A:
                self.val_x.append(x)
                self.val_y.append(float(label))
            else:
                j = self.rng.randint(self.n_correct)
                if j < self.A:
                    self.val_x[j], self.val_y[j] = x, float(label)

    def _removal_losses(self):
        if self.validation == "support":
            V, yV = np.array(self.sv_x), np.array(self.sv_y)
        else:
            V, yV = np.array(self.val_x), np.array(self.val_y)
        if len(V) == 0:
            return np.zeros(len(self.sv_x))
        K = self.kernel(np.array(self.sv_x), V)            # (B + 1, |V|)
        f = np.array(self.sv_y) @ K                          # f(x_v), x_t included
        g = f[None, :] - np.array(self.sv_y)[:, None] * K    # row j: without SV j
        return np.sum(yV[None, :] * g <= 0, axis=1)


class PlainTightestPerceptron(_PlainBudgetStream):
    """Tightest Perceptron: soft counts, Beta weights, hinge loss.

    ``nearest_by_kernel``: the nearest support vector is the largest kernel
    value (RBF), else the smallest Euclidean distance.
    """

    def __init__(self, kernel, budget=100, prior=(1.0, 1.0), nearest_by_kernel=True):
        super().__init__(kernel, budget)
        self.prior = prior
        self.nearest_by_kernel = nearest_by_kernel
        self.cpos, self.cneg = [], []

    def _after_insert(self, label):
        self.cpos.append(1.0 if label > 0 else 0.0)
        self.cneg.append(1.0 if label < 0 else 0.0)

    def weights(self):
        a_pos, a_neg = self.prior
        return 1.0 - betainc(np.array(self.cpos) + a_pos, np.array(self.cneg) + a_neg, 0.5)

    def _removal_losses(self):
        S = np.array(self.sv_x)
        alpha = np.array(self.sv_y)
        K = self.kernel(S, S)
        f = alpha @ K
        g = f[None, :] - alpha[:, None] * K                  # row j: f - alpha_j k(x_j, .)
        w = self.weights()[None, :]
        hinge = w * np.maximum(0, 1 - g) + (1 - w) * np.maximum(0, 1 + g)
        return hinge.mean(axis=1)

    def _update_summary(self, x, c_pos, c_neg, k=None):
        """The nearest support vector to x gets the soft counts (``k``:
        k(x, S) when already known)."""
        S = np.array(self.sv_x)
        k = self.kernel(x[None], S)[0] if k is None else k
        if self.nearest_by_kernel:
            n = int(np.argmax(k))
        else:
            n = int(np.argmin(((S - x) ** 2).sum(axis=1)))
        self.cpos[n] += c_pos * k[n]
        self.cneg[n] += c_neg * k[n]

    def _after_remove(self, r, x_r):
        c_pos, c_neg = self.cpos.pop(r), self.cneg.pop(r)
        self._update_summary(x_r, c_pos, c_neg)

    def _on_correct(self, x, label, example_id):
        self._update_summary(x, float(label > 0), float(label < 0), self.k_row)
