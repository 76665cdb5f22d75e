"""
===============================================
Double cross-validation with SequentialSearchCV
===============================================

Khardon & Wachman (JMLR 2007) compare noise-tolerant variants of the kernel
perceptron: a margin ``tau``, the lambda-trick ``lam`` and a bound
``alpha_bound`` on the updates per example.  Each variant has a parameter to
tune, and an honest comparison must not tune on the data it reports.  Their
protocol is *double cross-validation*: an outer cross-validation estimates
the accuracy, and inside each outer training fold an inner cross-validation
picks the parameters.  In scikit-learn this is a search estimator inside
:func:`~sklearn.model_selection.cross_val_score`.

Searching ``tau`` and ``alpha_bound`` jointly costs the product of the two
grids.  The paper's cheaper "tau -> alpha" search tunes ``tau`` first, then
``alpha_bound`` with that ``tau`` fixed: the sum of the grids.
:class:`~skbudget.SequentialSearchCV` does exactly that, stage by stage.
"""

import time

import matplotlib.pyplot as plt
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score

from skbudget import KernelPerceptron, SequentialSearchCV
from skbudget.datasets import make_khardon_wachman

# The paper's artificial data (f = 50 attributes, margin M = 0.05), with 10 %
# of the labels flipped, and its perceptron settings (linear kernel,
# learning rate 0.1, threshold starting at and moving by kappa); 10 epochs
# here instead of the paper's 100, to stay fast.
X, y = make_khardon_wachman(250, n_features=50, margin=0.05, noise=0.1, random_state=0)
perceptron = KernelPerceptron(kernel="linear", eta0=0.1, theta_init="kappa",
                              threshold_step="kappa", max_iter=10, random_state=0)
taus = [0.0, 0.5, 2.0]
alphas = [None, 20, 5]
inner, outer = 3, StratifiedKFold(5, shuffle=True, random_state=0)

# %%
# Four procedures, each scored by the same outer 5-fold cross-validation:
# no tuning; ``tau`` alone; ``tau`` then ``alpha_bound`` (sequential, 3 + 3
# candidates); ``tau`` and ``alpha_bound`` jointly (3 x 3 candidates).
procedures = {
    "nothing": perceptron,
    "tau": GridSearchCV(perceptron, {"tau": taus}, cv=inner),
    "tau -> alpha\n(SequentialSearchCV)": SequentialSearchCV(
        perceptron, [{"tau": taus}, {"alpha_bound": alphas}], cv=inner),
    "tau x alpha\n(GridSearchCV)": GridSearchCV(
        perceptron, {"tau": taus, "alpha_bound": alphas}, cv=inner),
}
results = {}
for name, procedure in procedures.items():
    start = time.perf_counter()
    scores = cross_val_score(procedure, X, y, cv=outer)
    results[name] = (scores, time.perf_counter() - start)
    print(f"{name.splitlines()[0]:<14} accuracy {scores.mean():.3f} "
          f"+- {scores.std():.3f}   {results[name][1]:.1f} s")

fig, ax = plt.subplots(figsize=(8, 4))
names = list(results)
ax.boxplot([results[n][0] for n in names])
ax.set_xticks(range(1, len(names) + 1),
              [f"{n}\n{results[n][1]:.1f} s" for n in names], fontsize=8)
ax.set_ylabel("outer-fold accuracy")
ax.set_title("Double CV: 5 outer folds, 3 inner folds")
fig.tight_layout()
plt.show()

# %%
# The search's choice on all the data, stage by stage: ``best_params_``
# collects the winner of each stage, ``stage_results_`` keeps each stage's
# ``cv_results_``.
search = procedures["tau -> alpha\n(SequentialSearchCV)"].fit(X, y)
print(search.best_params_)
for stage in search.stage_results_:
    print(stage["params"], stage["mean_test_score"].round(3))
