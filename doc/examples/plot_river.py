"""
==================================================
Budget kernel perceptrons in river's online loop
==================================================

`river <https://riverml.xyz>`_ learns from one example at a time, each a
dict of features. :class:`skbudget.river.RiverClassifier` makes any skbudget
classifier a river classifier, so it goes in a river pipeline (here after
river's running ``StandardScaler``) and river's progressive validation:
every example is first predicted, then learned.

The stream is river's ``Phishing`` data set (1 250 web pages, 9 features,
phishing or not), which ships with river. We compare Budgeted SGD and the
Forgetron, each at a budget of 100 support vectors with an RBF kernel, with
river's own linear models, then draw the kernel models' online record:
their cumulative mistake rate and their support size, round by round.

Requires ``pip install skbudget[river]``.
"""

import matplotlib.pyplot as plt
from river import datasets, evaluate, linear_model, metrics, preprocessing

from skbudget import BudgetedSGDClassifier, Forgetron
from skbudget.inspection import OnlineRecordDisplay
from skbudget.river import RiverClassifier

# %%
# Progressive validation
# ----------------------
# ``classes`` lists the labels the stream holds (the kernel models are built
# for them when they start); ``gamma`` is a number, as a stream calls for
# (``'scale'`` would be resolved from the first examples alone).

adapters = {
    "BSGD (B=100)": RiverClassifier(
        BudgetedSGDClassifier(budget=100, alpha=1e-3, gamma=0.2, random_state=0),
        classes=[False, True]),
    "Forgetron (B=100)": RiverClassifier(Forgetron(budget=100, gamma=0.2),
                                         classes=[False, True]),
}
models = {name: preprocessing.StandardScaler() | adapter for name, adapter in adapters.items()}
models["river LogisticRegression"] = (preprocessing.StandardScaler()
                                      | linear_model.LogisticRegression())
models["river Perceptron"] = preprocessing.StandardScaler() | linear_model.Perceptron()

for name, model in models.items():
    accuracy = evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    print(f"{name:26s} {accuracy}")

# %%
# ``predict_proba_one`` is a squashing of the kernel model's score (the
# logistic function of the binary score), not a calibrated probability:
# it orders the examples as the score does, which is what ROC AUC reads.

auc = evaluate.progressive_val_score(
    datasets.Phishing(), preprocessing.StandardScaler() | adapters["BSGD (B=100)"].clone(),
    metrics.ROCAUC())
print(f"BSGD (B=100) progressive {auc}")

# %%
# The online record
# -----------------
# Each adapter's ``estimator_`` is the trained skbudget model. Learned one
# example at a time, its record holds the support size at every round: the
# budget fills during the first rounds, then stays at 100 however long the
# stream runs. Both models go on one axis.

display = None
for name, adapter in adapters.items():
    display = OnlineRecordDisplay.from_estimator(
        adapter.estimator_, name=name, ax=None if display is None else display.ax_)
display.ax_.set_title("Phishing, progressive validation")
plt.tight_layout()
plt.show()
