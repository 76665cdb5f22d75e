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


class _ValidationSet:
    """Tighter's validation set V: ``validation`` 'full' (every distinct
    example, by identity), 'support' (none kept here: the support set),
    'budget' or an integer ``A`` (Algorithm R over the rounds without an
    update: the i-th is appended while i <= A, else j = randint(i) and
    entry j replaced if j < A)."""

    def _start_validation(self, validation, budget, random_state):
        self.validation = validation
        self.rng = np.random.RandomState(random_state)
        self.A = budget if validation == "budget" else validation
        self.val_x, self.val_y = [], []
        self.val_ids = set()          # 'full': identities already in V
        self.n_correct = 0            # 'A': rounds without an update

    def _add_seen(self, x, label, example_id):
        if self.validation == "full" and example_id not in self.val_ids:
            self.val_ids.add(example_id)
            self.val_x.append(x)
            self.val_y.append(label)

    def _validation_points(self, support_labels):
        """V and its labels (for 'support': the support set, labelled
        ``support_labels``)."""
        if self.validation == "support":
            return np.array(self.sv_x), np.array(support_labels)
        return np.array(self.val_x), np.array(self.val_y)

    def _sample(self, x, label, example_id):
        """A round without an update."""
        self._add_seen(x, label, example_id)
        if self.validation not in ("full", "support"):
            self.n_correct += 1
            if self.n_correct <= self.A:
                self.val_x.append(x)
                self.val_y.append(label)
            else:
                j = self.rng.randint(self.n_correct)
                if j < self.A:
                    self.val_x[j], self.val_y[j] = x, label


class PlainTighterPerceptron(_ValidationSet, _PlainBudgetStream):
    """Tighter Perceptron: 0-1 loss on the validation set."""

    def __init__(self, kernel, budget=100, validation="budget", random_state=None):
        super().__init__(kernel, budget)
        self._start_validation(validation, budget, random_state)

    def _before_insert(self, x, label, example_id):
        self._add_seen(x, float(label), example_id)

    def _on_correct(self, x, label, example_id):
        self._sample(x, float(label), example_id)

    def _removal_losses(self):
        V, yV = self._validation_points(self.sv_y)
        if len(V) == 0:
            return np.zeros(len(self.sv_x))
        K = self.kernel(np.array(self.sv_x), V)            # (B + 1, |V|)
        f = np.array(self.sv_y) @ K                          # f(x_v), x_t included
        g = f[None, :] - np.array(self.sv_y)[:, None] * K    # row j: without SV j
        return np.sum(yV[None, :] * g <= 0, axis=1)


def _nearest(plain, x, k=None):
    """UpdateSummary's support vector nearest to ``x`` (the first on ties)
    and ``k(x, S)`` (``k``: when already known): the largest kernel value
    (``plain.nearest_by_kernel``), else the smallest Euclidean distance."""
    S = np.array(plain.sv_x)
    k = plain.kernel(x[None], S)[0] if k is None else k
    if plain.nearest_by_kernel:
        return int(np.argmax(k)), k
    return int(np.argmin(((S - x) ** 2).sum(axis=1))), k


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
        n, k = _nearest(self, x, k)
        self.cpos[n] += c_pos * k[n]
        self.cneg[n] += c_neg * k[n]

    def _after_remove(self, r, x_r):
        c_pos, c_neg = self.cpos.pop(r), self.cneg.pop(r)
        self._update_summary(x_r, c_pos, c_neg)

    def _on_correct(self, x, label, example_id):
        self._update_summary(x, float(label > 0), float(label < 0), self.k_row)


# ---------------------------------------------------------------------------
# The shared multi-class mode (doc/algorithms.md#tighter-shared)
# ---------------------------------------------------------------------------
def _prediction(G):
    """argmax of every row of G, ties to the lowest index (np.argmax)."""
    return np.argmax(G, axis=1)


class _PlainSharedStream:
    """One support set for ``n_classes`` classes, labels given as class
    indices: score every class, take the runner-up ``r`` (the lowest index
    among the largest rivals) and the margin ``m = s_y - s_r``; when
    ``m <= 0`` add the row ``e_y - e_r``; with ``budget + 1`` vectors remove
    the argmin of a validation loss of the model without each candidate
    (the first, i.e. oldest, on ties)."""

    def __init__(self, kernel, budget, n_classes):
        self.kernel = kernel
        self.budget = budget
        self.k = n_classes
        self.sv_x, self.sv_label, self.rows, self.sv_index = [], [], [], []
        self.mistakes = []            # argmax_c s_c != y (the estimator's record)
        self.updates = 0
        self.removed = []
        self.sizes = []               # |S| after every round
        self.n_seen = 0

    @property
    def R(self):
        return np.array(self.rows).reshape(-1, self.k)

    def scores(self, Z):
        """(len(Z), k): every class's score on the rows of Z."""
        if not self.sv_x:
            return np.zeros((len(Z), self.k))
        return self.kernel(Z, np.array(self.sv_x)) @ self.R

    def without_each(self, Z):
        """(B + 1, len(Z), k): the scores of the model without each support
        vector (the candidate's whole row taken out)."""
        K = self.kernel(np.array(self.sv_x), Z)               # (B + 1, n)
        full = K.T @ self.R                                   # (n, k)
        return full[None] - K[:, :, None] * self.R[:, None, :]

    def partial_fit(self, X, y, ids=None):
        if ids is None:
            ids = np.arange(self.n_seen, self.n_seen + len(X))
        self.n_seen += len(X)
        for x, label, example_id in zip(X, y, ids):
            label = int(label)
            self.k_row = (self.kernel(x[None], np.array(self.sv_x))[0] if self.sv_x
                          else np.zeros(0))
            s = self.k_row @ self.R if self.sv_x else np.zeros(self.k)
            rivals = [c for c in range(self.k) if c != label]
            self.mistakes.append(bool(int(np.argmax(s)) != label))
            if rivals:
                runner = max(rivals, key=lambda c: (s[c], -c))
                margin = s[label] - s[runner]
            if rivals and margin <= 0:
                self.updates += 1
                self._before_insert(x, label, s, example_id)
                row = np.zeros(self.k)
                row[label], row[runner] = 1.0, -1.0
                self.sv_x.append(x)
                self.sv_label.append(label)
                self.rows.append(row)
                self.sv_index.append(len(self.mistakes) - 1)
                self._after_insert(label)
                if len(self.sv_x) > self.budget:
                    j = self._choose_removal()
                    x_j = self.sv_x.pop(j)
                    self.sv_label.pop(j)
                    self.rows.pop(j)
                    self.removed.append(self.sv_index.pop(j))
                    self._after_remove(j, x_j)
            else:
                self._on_correct(x, label, s, example_id)
            self.sizes.append(len(self.sv_x))
        return self

    def _before_insert(self, x, label, s, example_id):
        pass

    def _after_insert(self, label):
        pass

    def _after_remove(self, j, x_j):
        pass

    def _on_correct(self, x, label, s, example_id):
        pass

    @property
    def support_indices(self):
        return list(self.sv_index)

    @property
    def dual_coef(self):
        """(k, |S|)."""
        return self.R.T

    def decision_function(self, Z):
        return self.scores(Z)


class PlainSharedTighterPerceptron(_ValidationSet, _PlainSharedStream):
    """Tighter, shared: a candidate's loss is the number of validation
    points (V as in the binary rule; the reservoir samples the rounds
    without an update) whose argmax (ties to the lowest index) is not
    their label under the model without it."""

    def __init__(self, kernel, budget=100, n_classes=3, validation="budget",
                 random_state=None):
        super().__init__(kernel, budget, n_classes)
        self._start_validation(validation, budget, random_state)

    def _before_insert(self, x, label, s, example_id):
        self._add_seen(x, label, example_id)

    def _on_correct(self, x, label, s, example_id):
        self._sample(x, label, example_id)

    def _choose_removal(self):
        V, yV = self._validation_points(self.sv_label)
        if len(V) == 0:
            return 0
        G = self.without_each(V)                          # (B + 1, |V|, k)
        errors = (np.argmax(G, axis=2) != yV[None, :]).sum(axis=1)
        return int(np.argmin(errors))

    def validation_scores(self):
        return self.scores(np.array(self.val_x))


class PlainSharedTightestPerceptron(_PlainSharedStream):
    """Tightest, shared: soft counts per class (``e_y`` for a new vector);
    ``w_{i,c} = 1 - I_0.5(c_{i,c} + a+, n_i - c_{i,c} + a-)``; a
    candidate's loss is ``sum_i sum_c w_{i,c} [argmax g(x_i) != c]`` over
    the support set, the least being the largest ``sum_i w_{i, argmax}``
    (values within a relative 1e-9 tie: the oldest goes)."""

    def __init__(self, kernel, budget=100, n_classes=3, prior=(1.0, 1.0),
                 nearest_by_kernel=True):
        super().__init__(kernel, budget, n_classes)
        self.prior = prior
        self.nearest_by_kernel = nearest_by_kernel
        self.counts = []

    def _after_insert(self, label):
        c = np.zeros(self.k)
        c[label] = 1.0
        self.counts.append(c)

    def weights(self):
        a_pos, a_neg = self.prior
        C = np.array(self.counts).reshape(-1, self.k)
        n = np.array([sum(row) for row in C])[:, None]
        # counts below the prior's domain (kernels with negative values): 0
        return np.nan_to_num(1.0 - betainc(C + a_pos, n - C + a_neg, 0.5), nan=0.0)

    def _choose_removal(self):
        S = np.array(self.sv_x)
        pred = np.argmax(self.without_each(S), axis=2)            # (B + 1, B + 1)
        W = self.weights()
        kept = np.array([sum(W[i, p[i]] for i in range(len(p))) for p in pred])
        best = kept.max()
        return int(np.flatnonzero(kept >= best - 1e-9 * abs(best))[0])

    def _update_summary(self, x, add, k=None):
        n, k = _nearest(self, x, k)
        self.counts[n] = self.counts[n] + add * k[n]

    def _after_remove(self, j, x_j):
        self._update_summary(x_j, self.counts.pop(j))

    def _on_correct(self, x, label, s, example_id):
        if self.sv_x:
            add = np.zeros(self.k)
            add[label] = 1.0
            self._update_summary(x, add, self.k_row)
