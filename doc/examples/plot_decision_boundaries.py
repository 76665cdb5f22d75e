"""
==================================
Decision boundaries at two budgets
==================================

Every estimator of skbudget on the same noisy 2-D problem, a 4 x 4
checkerboard with 15 % of the labels flipped (the NCheckerboard of Wang &
Vucetic), after one online pass over 3 000 points (the perceptron makes its
default 10 passes).  The estimators with a ``budget`` are shown at
``budget=20`` and ``budget=100``; the unbounded ones (their support set grows
with the mistakes) once.  Black dots are the support vectors the model keeps,
and the title gives their number and the accuracy on 5 000 noise-free test
points.

The budget decides how much of the checkerboard a model can draw: 20
support vectors are too few for 16 cells, 100 are enough for the estimators
that choose well what to forget.  Budgeted SGD (a kernel SVM trained on the
budget) is shown with each of its three maintenance rules.  The two MIRA
estimators learn with MIRA's own step even with two classes; BudgetMIRA
removes with the Crammer-Kandola-Singer rule, like BudgetPerceptron, and
shares its weakness under label noise: the patterns it keeps are mostly the
flipped ones.
"""

import math

import matplotlib.pyplot as plt
import numpy as np
from sklearn.base import clone
from sklearn.preprocessing import StandardScaler

from skbudget.datasets import make_checkerboard
from skbudget.discovery import all_estimators

X, y = make_checkerboard(3000, noise=0.15, random_state=0)
X_test, y_test = make_checkerboard(5000, noise=0.0, random_state=1)
scaler = StandardScaler().fit(X)
X, X_test = scaler.transform(X), scaler.transform(X_test)
BUDGETS = (20, 100)

# %%
# One panel per (estimator, budget); ``gamma=5`` is the papers' RBF width
# ``delta^2 = 0.1`` on standardized attributes.  BudgetedSGDClassifier also
# needs its regularization ``alpha`` (the SVM's ``C`` is ``1 / (alpha n)``: its
# default 1e-4 suits tens of thousands of examples; on these 3 000 points
# ``alpha=3e-3``, i.e. ``C`` about 0.1, is better); its default
# ``maintenance='merging'`` needs the RBF kernel, and the two other rules are
# added as separate panels.
panels = []
for name, Estimator in all_estimators():
    base = Estimator(random_state=0)
    if "gamma" in base.get_params():
        base.set_params(gamma=5.0)
    if name == "BudgetedSGDClassifier":
        base.set_params(alpha=3e-3)
        for rule in ("merging", "projection", "removal"):
            panels += [(name, clone(base).set_params(budget=b, maintenance=rule),
                        f"{rule}, B = {b}") for b in BUDGETS]
    elif "kernel" not in base.get_params():    # a linear model on fixed features
        if "n_components" in base.get_params():   # random ones: D of them
            panels.append((name, base.set_params(n_components=200), "D = 200 features"))
        else:
            panels.append((name, base, "no kernel"))
    elif "budget" in base.get_params():
        panels += [(name, clone(base).set_params(budget=b), f"B = {b}") for b in BUDGETS]
    else:
        panels.append((name, base, "unbounded"))

ncols = 4
nrows = math.ceil(len(panels) / ncols)
fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 3.1 * nrows),
                         sharex=True, sharey=True)
xx, yy = np.meshgrid(np.linspace(-2, 2, 150), np.linspace(-2, 2, 150))
grid = np.c_[xx.ravel(), yy.ravel()]
for ax, (name, clf, label) in zip(axes.ravel(), panels):
    clf.fit(X, y)
    ax.contourf(xx, yy, clf.decision_function(grid).reshape(xx.shape) > 0,
                levels=[-0.5, 0.5, 1.5], colors=["#f4c7a1", "#a9c8e8"])
    sv = getattr(clf, "support_vectors_", np.empty((0, 2)))   # (FOGD stores none)
    ax.scatter(sv[:, 0], sv[:, 1], s=4, c="k")
    ax.set_title(f"{name}\n{label}: {sv.shape[0]} SVs, "
                 f"{clf.score(X_test, y_test):.0%}", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
for ax in axes.ravel()[len(panels):]:
    ax.set_axis_off()
fig.tight_layout()
plt.show()
