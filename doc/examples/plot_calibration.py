"""
=======================================================
Probabilities and class imbalance: what to use instead
=======================================================

The estimators of skbudget give scores (:meth:`decision_function`) and
labels (:meth:`predict`), not probabilities: they have no
``predict_proba``.  A budget kernel perceptron's score is a margin, whose
scale depends on the kernel, the budget and the update rule, not a
probability.  When probabilities are needed, calibrate the scores with
:class:`sklearn.calibration.CalibratedClassifierCV` (Platt's sigmoid, or
isotonic regression with more data), as for
:class:`~sklearn.linear_model.SGDClassifier` or an ``SVC`` without
``probability=True``.

The second part shows ``class_weight`` on a stream where one class is rare:
:class:`~skbudget.BudgetedSGDClassifier`,
:class:`~skbudget.KernelPassiveAggressive` and
:class:`~skbudget.BudgetedPassiveAggressive` take ``class_weight`` and
``sample_weight`` (an example's weight scales its loss: BSGD's step, PA-I's
and BPA's cap); the perceptron-style rules take neither.
"""

import matplotlib.pyplot as plt
from sklearn.calibration import CalibratedClassifierCV, calibration_curve
from sklearn.datasets import make_classification, make_moons
from sklearn.metrics import brier_score_loss, recall_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skbudget import BudgetedSGDClassifier, Forgetron

X, y = make_moons(3000, noise=0.3, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)

# Calibrated on held-out folds: each of the 3 models is fitted on two thirds
# of the training data, and its scores mapped to probabilities on the rest.
forgetron = Forgetron(budget=50, gamma=2.0, random_state=0)
calibrated = CalibratedClassifierCV(forgetron, method="sigmoid", cv=3).fit(X_train, y_train)
proba = calibrated.predict_proba(X_test)[:, 1]
print(f"Brier score of the calibrated Forgetron: {brier_score_loss(y_test, proba):.3f}")
assert not hasattr(forgetron, "predict_proba")

fraction, mean_predicted = calibration_curve(y_test, proba, n_bins=8)
fig, ax = plt.subplots(figsize=(4.5, 4))
ax.plot([0, 1], [0, 1], ":", color="gray", label="perfectly calibrated")
ax.plot(mean_predicted, fraction, "o-", label="Forgetron + CalibratedClassifierCV")
ax.set_xlabel("predicted probability")
ax.set_ylabel("fraction of positives")
ax.legend(loc="upper left")
fig.tight_layout()

# %%
# A rare class
# ------------
# One positive in fifty.  Unweighted, BSGD's budget keeps few positive
# vectors (each margin error adds a vector, and negative ones are fifty
# times as frequent), so it misses most positives; ``class_weight=
# 'balanced'`` makes a positive example's step ``n / (2 n_+)`` times as
# large: most positives are found, at the price of false alarms (the
# accuracy falls; choose the weight for the costs of the two errors).  (With many classes one-vs-rest, every learner sees its own class
# rarely: there a larger budget or one support set for all classes helps,
# see the user guide's page on BSGD.)
X, y = make_classification(6000, n_features=10, n_informative=5, weights=[0.98],
                           flip_y=0, random_state=2)
X = StandardScaler().fit_transform(X)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                    random_state=0)
for class_weight in [None, "balanced"]:
    clf = BudgetedSGDClassifier(budget=100, class_weight=class_weight, random_state=0)
    clf.fit(X_train, y_train)
    print(f"class_weight={class_weight!r}: recall of the rare class "
          f"{recall_score(y_test, clf.predict(X_test)):.2f}, accuracy "
          f"{clf.score(X_test, y_test):.3f}")
