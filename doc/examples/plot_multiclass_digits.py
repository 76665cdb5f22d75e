"""
===========================
Multi-class: the ten digits
===========================

With more than two classes almost every estimator learns one-vs-rest: one
binary learner per class, all fed the same stream in the same order, each
with its own support set.  A ``budget`` of ``B`` therefore means up to
``n_classes * B`` stored vectors, and ``n_support_`` has one entry per class.
Prediction takes the class whose learner gives the largest score;
``decision_function`` returns the ten scores.

The exceptions are :class:`~skbudget.KernelMIRA`,
:class:`~skbudget.BudgetMIRA` and :class:`~skbudget.BudgetedSGDClassifier`
(with its default ``multi_class='crammer_singer'``): they learn all classes
at once on one support set, each support vector carrying one coefficient
per class, so their ``budget`` counts vectors for all classes together and
``n_support_`` has a single entry.

Here every estimator learns the ten digits (pixels scaled to [0, 1]) with
the same memory: a budget of 30 vectors per class for the one-vs-rest
estimators, and ``budget=300`` for the shared sets of BudgetMIRA and BSGD.
One pass over the training set (the kernel perceptron makes its default 10).
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.metrics import ConfusionMatrixDisplay
from sklearn.model_selection import train_test_split

from skbudget.discovery import all_estimators

digits = load_digits()
X_train, X_test, y_train, y_test = train_test_split(
    digits.data / 16.0, digits.target, test_size=0.25, random_state=0,
    stratify=digits.target)

rows = []
for name, Estimator in all_estimators():
    clf = Estimator(random_state=0)
    if "gamma" in clf.get_params():
        clf.set_params(gamma="scale")
    if name in ("BudgetMIRA", "BudgetedSGDClassifier"):
        clf.set_params(budget=30 * 10)       # one set for the ten classes
    elif "budget" in clf.get_params():
        clf.set_params(budget=30)            # per one-vs-rest learner
    clf.fit(X_train, y_train)
    rows.append((name, clf, clf.score(X_test, y_test)))
    if not hasattr(clf, "n_support_"):      # a linear model on fixed features
        print(f"{name:<26} accuracy {rows[-1][2]:.3f}   no support vectors "
              f"({clf.coef_.shape[0]} weight vectors of {clf.coef_.shape[-1]})")
        continue
    print(f"{name:<26} accuracy {rows[-1][2]:.3f}   support vectors "
          f"{int(clf.n_support_.sum()):>5} (per learner: {clf.n_support_.tolist()})")

# %%
# Accuracy and stored vectors, and the confusion matrix of the most accurate
# budgeted model.  The unbounded models (grey: the kernel perceptron, PA-I,
# KernelMIRA) store more.  At 300 stored vectors the shared sets of
# BudgetMIRA and BSGD hold their own against the one-vs-rest estimators,
# whose ten support sets of 30 each separate one class from the rest.
fig, (ax, ax_cm) = plt.subplots(1, 2, figsize=(13, 5.5),
                                gridspec_kw={"width_ratios": [1.2, 1]})
rows.sort(key=lambda r: r[2])
for i, (name, clf, score) in enumerate(rows):
    budgeted = "budget" in clf.get_params()
    ax.barh(i, score, color="tab:blue" if budgeted else "tab:gray")
    stored = (f"{int(clf.n_support_.sum())} vectors" if hasattr(clf, "n_support_")
              else f"{clf.coef_.size} weights")
    ax.text(score + 0.003, i, f"{score:.3f}, {stored}", va="center", fontsize=8)
ax.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=8)
ax.set_xlim(0.7, 1.07)
ax.set_xlabel("test accuracy")
ax.set_title("Ten digits: 300 stored vectors for the budgeted models")
name, best, _ = max((r for r in rows if "budget" in r[1].get_params()), key=lambda r: r[2])
ConfusionMatrixDisplay.from_estimator(best, X_test, y_test, ax=ax_cm, colorbar=False)
ax_cm.set_title(name)
fig.tight_layout()
plt.show()
