"""
======================================================
Streaming a long stream: the support set stays bounded
======================================================

A stream too long to hold in memory, generated piece by piece: 120 000
points of the noisy checkerboard (15 % of the labels flipped), arriving in
pieces of 2 000.  Each piece is learned with ``partial_fit`` and then
dropped; only the model is kept.

The budgeted estimators keep at most ``budget`` support vectors however long
the stream runs, so every piece costs the same time.  The unbounded kernel
perceptron adds every example it gets wrong: with noisy labels that is a
fixed fraction of the stream, so its model, and the time per piece, grow
without end.  We stop it after 20 000 examples.

Budgeted SGD (a kernel SVM trained by stochastic gradient steps, merging
support vectors to stay within its budget) updates on every margin error,
not only on mistakes, so it does more work per piece than the perceptrons;
its step counter ``t_`` runs on across ``partial_fit`` calls, so the pieces
are one stream to it.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from skbudget import (
    BudgetedSGDClassifier,
    Forgetron,
    KernelPerceptron,
    ProjectronPlusPlus,
    TightestPerceptron,
)
from skbudget.datasets import make_checkerboard

N_PIECES, PIECE = 60, 2000
SCALE = np.sqrt(4 ** 2 / 12)        # the checkerboard's coordinates have this std


def stream():
    """The pieces of the stream, generated on demand (scaled to unit std)."""
    for k in range(N_PIECES):
        X, y = make_checkerboard(PIECE, noise=0.15, random_state=k)
        yield (X - 2.0) / SCALE, y


models = {
    "Forgetron(budget=200)": Forgetron(budget=200, gamma=5.0),
    "TightestPerceptron(budget=200)": TightestPerceptron(budget=200, gamma=5.0),
    "ProjectronPlusPlus(eta=0.5, budget=200)": ProjectronPlusPlus(eta=0.5, budget=200,
                                                                  gamma=5.0),
    "BudgetedSGDClassifier(budget=200)": BudgetedSGDClassifier(budget=200, alpha=1e-4,
                                                               gamma=5.0),
    "KernelPerceptron (unbounded)": KernelPerceptron(gamma=5.0),
}
STOP_UNBOUNDED = 20000

# %%
# One pass over the stream.  After each piece we record the support-set
# size, the online error of that piece (mistakes made while learning it,
# read from the exact counter ``n_mistakes_``) and the time it took.
history = {name: {"seen": [], "n_sv": [], "error": [], "seconds": []} for name in models}
for X, y in stream():
    for name, clf in models.items():
        record = history[name]
        seen = record["seen"][-1] if record["seen"] else 0
        if "unbounded" in name and seen >= STOP_UNBOUNDED:
            continue
        before = clf.n_mistakes_ if seen else 0
        start = time.perf_counter()
        clf.partial_fit(X, y, classes=[-1, 1])
        record["seconds"].append(time.perf_counter() - start)
        record["seen"].append(seen + len(y))
        record["n_sv"].append(int(clf.n_support_.sum()))
        record["error"].append((clf.n_mistakes_ - before) / len(y))

fig, axes = plt.subplots(1, 3, figsize=(13, 4))
for name, record in history.items():
    seen = np.array(record["seen"])
    axes[0].plot(seen, record["n_sv"], label=name)
    axes[1].plot(seen, record["error"], label=name)
    axes[2].plot(seen, 1e3 * np.array(record["seconds"]), label=name)
axes[0].set_ylabel("support vectors")
axes[1].set_ylabel("online error of the piece")
axes[1].axhline(0.15, color="grey", lw=0.8)
axes[2].set_ylabel("ms per piece of 2 000")
axes[2].set_yscale("log")
for ax in axes:
    ax.set_xlabel("examples seen")
axes[0].legend(fontsize=8)
fig.tight_layout()
plt.show()

# %%
# At the end of the stream:
for name, record in history.items():
    print(f"{name:<42} seen {record['seen'][-1]:>7}  support vectors "
          f"{record['n_sv'][-1]:>5}  last-piece error {record['error'][-1]:.3f}")
