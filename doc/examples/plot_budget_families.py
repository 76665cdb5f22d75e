"""
======================================================
The budget families at equal memory: accuracy and time
======================================================

Every budgeted learner on one stream, each allowed the same memory: ``B``
stored vectors for the kernel learners, ``B`` landmarks or ``B`` random
directions for the approximations.  The families keep their budget in
different ways:

* **removal**: the Forgetron (shrink, then forget the oldest), kernel OGD
  truncated to its ``B`` newest vectors (NORMA), BOGD / BOGD++ (remove a
  random vector, uniformly or by its coefficient, and rescale the rest),
  Budgeted SGD with removal;
* **removal that the others absorb**: the budgeted Passive-Aggressive
  learners, whose removed vector is projected onto the new example (BPA-S),
  onto it and its nearest neighbour (BPA-NN) or onto the whole support set
  (BPA-P); Budgeted SGD with merging;
* **a fixed feature map, then a linear learner**: FOGD (random Fourier
  features, ``n_components = B``), NOGD (kernel OGD until ``B`` vectors, then
  a rank-``k`` Nystroem map of them), and the batch pipelines
  :class:`~sklearn.kernel_approximation.Nystroem` or
  :class:`~sklearn.kernel_approximation.RBFSampler` followed by a linear
  :class:`~sklearn.linear_model.SGDClassifier`.

The stream is the noisy checkerboard of Wang & Vucetic (4 x 4 cells, 10 %
of the training labels flipped; a clean test set), 4 000 points in one
pass, RBF kernel with ``gamma = 2`` for everyone.  Each point is the mean
over three random orders.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.linear_model import SGDClassifier
from sklearn.pipeline import make_pipeline

import skbudget
from skbudget.datasets import make_checkerboard

X, y = make_checkerboard(4000, noise=0.1, random_state=0)
X_test, y_test = make_checkerboard(2000, noise=0.0, random_state=1)
GAMMA = 2.0
BUDGETS = [10, 20, 50, 100, 200]
ORDERS = range(3)

# %%
# The learners, by name and the parameters that pick the variant.  Every one
# gets ``budget=B`` (FOGD: ``n_components=B``), the same ``gamma``, one pass
# (``max_iter=1``) and a ``random_state`` that sets its order.  Budgeted SGD
# has one more parameter, the SVM's regularization ``alpha``.
LEARNERS = [
    ("Forgetron", "Forgetron", {}),
    ("kernel OGD (NORMA)", "KernelOGDClassifier", {}),
    ("BOGD", "BoundedOGDClassifier", {"sampling": "uniform"}),
    ("BOGD++", "BoundedOGDClassifier", {"sampling": "coefficient"}),
    ("BPA-S", "BudgetedPassiveAggressive", {"maintenance": "simple"}),
    ("BPA-NN", "BudgetedPassiveAggressive", {"maintenance": "nearest"}),
    ("BPA-P", "BudgetedPassiveAggressive", {"maintenance": "projection"}),
    ("BSGD removal", "BudgetedSGDClassifier", {"maintenance": "removal", "alpha": 1e-3}),
    ("BSGD merging", "BudgetedSGDClassifier", {"maintenance": "merging", "alpha": 1e-3}),
    ("FOGD", "FourierOGDClassifier", {}),
    ("NOGD", "NystromOGDClassifier", {}),
]


def learner(name, params, B, seed):
    cls = getattr(skbudget, name)
    size = {"n_components": B} if name == "FourierOGDClassifier" else {"budget": B}
    return cls(gamma=GAMMA, max_iter=1, random_state=seed, **size, **params)


def pipeline(transformer, B, seed):
    return make_pipeline(transformer(gamma=GAMMA, n_components=B, random_state=seed),
                         SGDClassifier(alpha=1e-3, max_iter=1, tol=None, random_state=seed))


models = [(label, lambda B, seed, name=name, params=params: learner(name, params, B, seed))
          for label, name, params in LEARNERS if hasattr(skbudget, name)]
models += [("Nystroem(B) + SGD", lambda B, seed: pipeline(Nystroem, B, seed)),
           ("RBFSampler(B) + SGD", lambda B, seed: pipeline(RBFSampler, B, seed))]

accuracy, seconds = {}, {}
for label, make in models:
    accuracy[label], seconds[label] = [], []
    for B in BUDGETS:
        scores, times = [], []
        for seed in ORDERS:
            model = make(B, seed)
            start = time.perf_counter()
            model.fit(X, y)
            times.append(time.perf_counter() - start)
            scores.append(model.score(X_test, y_test))
        accuracy[label].append(np.mean(scores))
        seconds[label].append(np.min(times))

# %%
# Accuracy against the budget (left) and against the fit time (right: each
# line runs through the budgets, the smallest first).  Fit times are those of
# the machine that built this page, the shortest of the three one-pass fits
# over 4 000 points: on a busy machine they are noisy.
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 6.5), sharey=True)
colors = plt.cm.tab20(np.linspace(0, 1, 20))
for i, label in enumerate(accuracy):
    style = "s--" if "+ SGD" in label else "o-"
    left.plot(BUDGETS, accuracy[label], style, ms=4, color=colors[i], label=label)
    right.plot(seconds[label], accuracy[label], style, ms=4, color=colors[i])
left.set_xscale("log")
left.set_xticks(BUDGETS, [str(b) for b in BUDGETS])
left.set_xlabel("budget B (vectors, landmarks or random directions)")
left.set_ylabel("test accuracy")
right.set_xscale("log")
right.set_xlabel("fit time (s, one pass)")
fig.legend(*left.get_legend_handles_labels(), loc="lower center", ncol=5, fontsize=8)
fig.suptitle("Noisy checkerboard, one pass, equal memory")
fig.tight_layout(rect=(0, 0.12, 1, 1))
plt.show()

# %%
# The numbers behind the plot.
print(f"{'B':<22}" + "".join(f"{b:>7}" for b in BUDGETS) + "   fit s at B = 200")
for label in accuracy:
    print(f"{label:<22}" + "".join(f"{a:7.3f}" for a in accuracy[label])
          + f"   {seconds[label][-1]:.3f}")
