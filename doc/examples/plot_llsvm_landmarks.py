"""
==========================================
LLSVM: k-means landmarks or random ones
==========================================

:class:`~skbudget.LowRankLinearizedSVC` learns a linear SVM on the Nystrom
map of ``B`` landmarks.  Where the landmarks are decides what the map can
draw: with few of them, the centres of k-means (the default,
``landmarks='kmeans'``) spread over the data, while rows drawn at random
(``landmarks='random'``, what :class:`~sklearn.kernel_approximation.Nystroem`
does) bunch where the data are dense and leave gaps.  Below, the two choices
at ``B = 10`` and ``B = 25`` on a 4 x 4 checkerboard (15 % of the training
labels flipped): black crosses are the landmarks, the colours the decision
regions, and the title gives the accuracy on noise-free test points (mean
of five seeds, the panel shows the first).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.preprocessing import StandardScaler

from skbudget import LowRankLinearizedSVC
from skbudget.datasets import make_checkerboard

X, y = make_checkerboard(1000, noise=0.15, random_state=0)
X_test, y_test = make_checkerboard(2000, noise=0.0, random_state=1)
scaler = StandardScaler().fit(X)
X, X_test = scaler.transform(X), scaler.transform(X_test)

# %%
# ``gamma=5`` is the RBF width of the checkerboard's papers on standardized
# attributes.
BUDGETS = (10, 25)
fig, axes = plt.subplots(len(BUDGETS), 2, figsize=(8, 8), sharex=True, sharey=True)
xx, yy = np.meshgrid(np.linspace(-2, 2, 150), np.linspace(-2, 2, 150))
grid = np.c_[xx.ravel(), yy.ravel()]
for row, budget in zip(axes, BUDGETS):
    for ax, landmarks in zip(row, ("kmeans", "random")):
        models = [LowRankLinearizedSVC(budget=budget, landmarks=landmarks, gamma=5.0, tol=1e-3,
                                       random_state=seed).fit(X, y) for seed in range(5)]
        accuracy = np.mean([clf.score(X_test, y_test) for clf in models])
        clf = models[0]
        ax.contourf(xx, yy, clf.decision_function(grid).reshape(xx.shape) > 0,
                    levels=[-0.5, 0.5, 1.5], colors=["#f4c7a1", "#a9c8e8"])
        ax.scatter(clf.components_[:, 0], clf.components_[:, 1], marker="x", s=40, c="k")
        ax.set_title(f"{landmarks}, B = {budget}: {accuracy:.3f}", fontsize=10)
        print(f"{landmarks:<7} B = {budget:>2}: test accuracy {accuracy:.3f} (5 seeds)")
fig.suptitle("LowRankLinearizedSVC on the checkerboard: k-means vs random landmarks")
fig.tight_layout()
plt.show()
