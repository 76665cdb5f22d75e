"""
===============================================
Tuning the budget and the kernel width together
===============================================

The two parameters that matter most for every budgeted estimator are the
budget ``B`` and the RBF width ``gamma``, and they interact: a narrow kernel
(large ``gamma``) needs many support vectors to cover the input space, a wide
one (small ``gamma``) cannot draw fine detail however many it keeps.  Every
skbudget estimator is a scikit-learn classifier, so
:class:`~sklearn.model_selection.GridSearchCV` searches both at once, here
inside a :class:`~sklearn.pipeline.Pipeline` that standardizes the
attributes.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skbudget import TightestPerceptron
from skbudget.datasets import make_checkerboard

X, y = make_checkerboard(3000, noise=0.15, random_state=0)

pipe = make_pipeline(StandardScaler(), TightestPerceptron(random_state=0))
budgets = [10, 20, 50, 100, 200]
gammas = [0.5, 1, 2, 5, 10, 20]
search = GridSearchCV(
    pipe,
    {"tightestperceptron__budget": budgets, "tightestperceptron__gamma": gammas},
    cv=3,
)
search.fit(X, y)
print("best:", search.best_params_, f"CV accuracy {search.best_score_:.3f}")

# %%
# The mean cross-validated accuracy of every pair.  ``cv_results_`` lists
# the candidates in the grid's order (the last parameter varies fastest,
# and the parameters are sorted by name: budget, then gamma).
scores = search.cv_results_["mean_test_score"].reshape(len(budgets), len(gammas))
fig, ax = plt.subplots(figsize=(7, 4.5))
image = ax.imshow(scores, cmap="viridis", origin="lower")
ax.set_xticks(range(len(gammas)), [str(g) for g in gammas])
ax.set_yticks(range(len(budgets)), [str(b) for b in budgets])
ax.set_xlabel("gamma")
ax.set_ylabel("budget")
for (i, j), value in np.ndenumerate(scores):
    ax.text(j, i, f"{value:.2f}", ha="center", va="center",
            color="w" if value < scores.mean() else "k", fontsize=8)
fig.colorbar(image, label="mean CV accuracy")
ax.set_title("TightestPerceptron on the noisy checkerboard")
fig.tight_layout()
plt.show()

# %%
# Reading the map: below ``gamma = 2`` the kernel is too wide to draw the
# 16 cells at any budget (the left columns stay low); above it, the
# budget decides, and the best width moves a little from budget to budget.
# Search the two together rather than one after the other, and refit on
# all the data (``GridSearchCV`` does so: ``search.best_estimator_``).
