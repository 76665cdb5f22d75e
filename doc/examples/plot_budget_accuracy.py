"""
===================================================
Accuracy against budget on a real data set (digits)
===================================================

How much accuracy does a budget cost?  The handwritten digits shipped with
scikit-learn (1 797 images of 8 x 8 pixels), as the binary problem "odd or
even digit", split 75 / 25.  Each budgeted estimator makes one online pass
over the training images for every budget ``B``: the budget perceptrons,
BudgetMIRA, and Budgeted SGD (a kernel SVM trained online on ``B`` support
vectors), with its default maintenance rule (merging) and with projection.
The references are

* :class:`~sklearn.svm.SVC` (a batch kernel machine: as many support vectors
  as it needs, here several hundred);
* a Nystroem approximation of the same kernel with ``B`` components followed
  by a linear :class:`~sklearn.linear_model.SGDClassifier`: the usual way to
  train a kernel model of fixed size ``B``, in batch.

Same kernel everywhere: RBF with ``gamma='scale'`` on the pixels scaled to
[0, 1].
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

from skbudget import KernelPerceptron
from skbudget.discovery import all_estimators

digits = load_digits()
X = digits.data / 16.0
y = digits.target % 2
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25,
                                                    random_state=0, stratify=y)
gamma = 1.0 / (X_train.shape[1] * X_train.var())   # what gamma='scale' gives
BUDGETS = [5, 10, 20, 40, 80, 160]

# %%
# The budgeted estimators, one pass each (their default ``max_iter=1``).  The
# last model of a single pass depends on the order of the stream, so each
# point is the mean over five random orders (``random_state`` shuffles).
#
# Budgeted SGD has one more parameter, the SVM's regularization ``alpha``
# (``C = 1 / (alpha n)`` for ``n`` training examples); ``alpha=3e-4`` is
# ``C`` of about 2.5 on these 1 347 images.
ORDERS = range(5)
models = []
for name, Estimator in all_estimators(budgeted=True):
    if "gamma" not in Estimator().get_params():
        continue        # no kernel (AMM: hyperplanes per class, see plot_amm.py)
    if name == "BudgetedSGDClassifier":
        models += [(f"{name} ({rule})", Estimator, {"alpha": 3e-4, "maintenance": rule})
                   for rule in ("merging", "projection")]
    else:
        models.append((name, Estimator, {}))
results = {}
for name, Estimator, params in models:
    results[name] = [
        np.mean([Estimator(budget=b, gamma=gamma, random_state=seed, **params)
                 .fit(X_train, y_train).score(X_test, y_test) for seed in ORDERS])
        for b in BUDGETS
    ]

# %%
# The references.
nystroem = [
    make_pipeline(Nystroem(gamma=gamma, n_components=b, random_state=0),
                  SGDClassifier(random_state=0))
    .fit(X_train, y_train).score(X_test, y_test)
    for b in BUDGETS
]
svc = SVC(gamma=gamma).fit(X_train, y_train)
svc_score = svc.score(X_test, y_test)

fig, ax = plt.subplots(figsize=(8, 5))
colors = plt.cm.tab20(np.linspace(0, 1, 20))[::2]       # ten distinct colours
for i, (name, scores) in enumerate(results.items()):
    ax.plot(BUDGETS, scores, "o-" if i < len(colors) else "^-.", ms=4,
            color=colors[i % len(colors)], label=name)
ax.plot(BUDGETS, nystroem, "s--", color="k", label="Nystroem(B) + SGDClassifier")
ax.axhline(svc_score, color="k", ls=":",
           label=f"SVC ({svc.n_support_.sum()} support vectors)")
ax.set_xscale("log")
ax.set_xticks(BUDGETS, [str(b) for b in BUDGETS])
ax.set_xlabel("budget B (support vectors / Nystroem components)")
ax.set_ylabel("test accuracy")
ax.set_title("Digits, odd vs even")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()

# %%
# The numbers behind the plot.  At the largest budgets the budget no longer
# binds for the perceptrons: one pass of the unbounded kernel perceptron over
# these images makes only as many mistakes (so support vectors) as printed
# last, and every budget perceptron then *is* that perceptron.  Budgeted SGD
# adds a vector on every margin error, not only on mistakes, so its budget
# still binds; it is the most accurate model here at small budgets, where the
# perceptrons have to forget most of what they saw.
print(f"{'B':<38}" + "".join(f"{b:>7}" for b in BUDGETS))
for name, scores in results.items():
    print(f"{name:<38}" + "".join(f"{s:7.3f}" for s in scores))
print(f"{'Nystroem + SGDClassifier':<38}" + "".join(f"{s:7.3f}" for s in nystroem))
print(f"SVC: {svc_score:.3f}")
perceptron = KernelPerceptron(gamma=gamma, max_iter=1, random_state=0).fit(X_train, y_train)
print(f"KernelPerceptron, one pass: {perceptron.n_support_.sum()} support vectors, "
      f"accuracy {perceptron.score(X_test, y_test):.3f}")
