"""
===========================
Multi-class: the ten digits
===========================

With more than two classes every estimator learns one-vs-rest: one binary
learner per class, all fed the same stream in the same order, each with its
own support set.  A ``budget`` of ``B`` therefore means up to
``n_classes * B`` stored vectors, and ``n_support_`` has one entry per class.
Prediction takes the class whose learner gives the largest score;
``decision_function`` returns the ten scores.

Here every estimator learns the ten digits (pixels scaled to [0, 1]) with a
budget of 30 vectors per class, one pass over the training set (the kernel
perceptron makes its default 10).
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
    clf = Estimator(gamma="scale", random_state=0)
    if "budget" in clf.get_params():
        clf.set_params(budget=30)
    clf.fit(X_train, y_train)
    rows.append((name, clf, clf.score(X_test, y_test)))
    print(f"{name:<26} accuracy {rows[-1][2]:.3f}   support vectors "
          f"{int(clf.n_support_.sum()):>5} (per class: {clf.n_support_.tolist()})")

# %%
# Accuracy against the number of stored vectors, and the confusion matrix of
# the most accurate budgeted model.
fig, (ax, ax_cm) = plt.subplots(1, 2, figsize=(13, 5))
for name, clf, score in rows:
    ax.scatter(clf.n_support_.sum(), score)
    ax.annotate(name, (clf.n_support_.sum(), score), fontsize=7,
                xytext=(4, 2), textcoords="offset points")
ax.set_xscale("log")
ax.set_xlabel("support vectors stored (all classes)")
ax.set_ylabel("test accuracy")
ax.set_title("Ten digits, budget 30 per class")
name, best, _ = max((r for r in rows if "budget" in r[1].get_params()), key=lambda r: r[2])
ConfusionMatrixDisplay.from_estimator(best, X_test, y_test, ax=ax_cm, colorbar=False)
ax_cm.set_title(name)
fig.tight_layout()
plt.show()
