"""
==============================
Online error on a noisy stream
==============================

The quantity the budget-perceptron papers plot: the fraction of mistakes
made so far, ``mistakes / rounds``, as the stream goes by.  In the online
setting every example is first predicted, then learned from, so this is an
honest estimate of the error on data the model has not seen yet.

The stream is the two noisy Gaussians of the Forgetron and Projectron papers
(10 % of the labels flipped, so no classifier does better than about 10 %).
We feed it to each estimator in pieces with ``partial_fit`` and read
``n_mistakes_`` (the exact count of training mistakes) after each piece.  The
unbounded kernel perceptron, Passive-Aggressive and kernel MIRA are the
references: their support set keeps growing with the noise, while the
budgeted models stay at ``budget=100``.

Under label noise the rule that decides what to keep matters most.  The two
estimators that remove the pattern the rest of the model classifies best
(BudgetPerceptron and BudgetMIRA, the Crammer-Kandola-Singer rule) end up
keeping the flipped labels and make the most mistakes; Tightest, Tighter,
Projectron++ and Budgeted SGD (an SVM trained by stochastic gradient steps,
here with its default ``alpha=1e-4``, i.e. ``C = 1`` on 10 000 examples)
stay within a few points of the 10 % floor.
"""

import matplotlib.pyplot as plt
import numpy as np

from skbudget.datasets import make_noisy_gaussians
from skbudget.discovery import all_estimators

X, y = make_noisy_gaussians(10000, noise=0.1, random_state=0)
PIECE = 250


def online_error(clf):
    """Cumulative mistake rate after each piece of the stream."""
    rounds, rates = [], []
    for start in range(0, len(y), PIECE):
        clf.partial_fit(X[start:start + PIECE], y[start:start + PIECE], classes=[-1, 1])
        rounds.append(start + PIECE)
        rates.append(clf.n_mistakes_ / rounds[-1])
    return np.array(rounds), np.array(rates)


# %%
# ``gamma=1`` (for the estimators with a kernel width) is the papers'
# ``sigma^2 = 0.5``.  ``partial_fit`` never shuffles: the stream is seen
# once, in order, as ``fit`` with ``shuffle=False, max_iter=1`` would see it.
# A model with no support vectors (a linear model on fixed features) is
# labelled by its number of learned weights.
fig, ax = plt.subplots(figsize=(8, 5))
estimators = all_estimators()
# one colour per estimator: the 20 of tab20, a continuous map beyond
colors = (plt.cm.tab20(np.linspace(0, 1, 20)) if len(estimators) <= 20
          else plt.cm.turbo(np.linspace(0, 1, len(estimators))))
for color, (name, Estimator) in zip(colors, estimators):
    clf = Estimator(random_state=0)
    if "gamma" in clf.get_params():
        clf.set_params(gamma=1.0)
    if "budget" in clf.get_params():
        clf.set_params(budget=100)
    rounds, rates = online_error(clf)
    style = "-" if "budget" in clf.get_params() else "--"
    stored = (f"{int(clf.n_support_.sum())} SVs" if hasattr(clf, "n_support_")
              else f"{clf.coef_.size} weights")
    ax.plot(rounds, rates, style, color=color, label=f"{name} ({stored})")
    print(f"{name:<26} online error {rates[-1]:.3f}, {stored}")
ax.axhline(0.1, color="grey", lw=0.8)
ax.set_xlabel("rounds (examples seen)")
ax.set_ylabel("cumulative mistakes / rounds")
ax.set_ylim(0.05, 0.5)
ax.legend(fontsize=8, ncol=2)
ax.set_title("Online error, noisy Gaussians, budget = 100")
fig.tight_layout()
plt.show()
