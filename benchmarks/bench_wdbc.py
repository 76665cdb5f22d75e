"""Khardon & Wachman (2007), Table 6, wdbc row: parameter optimization.

wdbc = ``sklearn.datasets.load_breast_cancer`` (569 x 30, raw features as in
the paper).  Table 6 is the *linear* perceptron (kernels only appear in
Table 7), with the paper's settings (§3.2): ``eta0=0.1, theta_init=C=kappa,
max_iter=100``, the training set permuted once (``shuffle=False``).

"Parameter optimization" (§3): double cross-validation, 10 outer x 10 inner
folds.  In each outer training fold an inner 10-fold CV grid search picks
the parameter values (the inactive value *is* in the grid here, §3.4), the
estimator is refit on the whole outer training fold and scored on the
outer test fold.  In scikit-learn terms this is
``cross_val_score(GridSearchCV(est, grid, cv=inner), X, y, cv=outer)`` and,
for the sequential searches tau -> alpha and tau -> lam,
``cross_val_score(SequentialSearchCV(est, [tau_grid, alpha_grid], cv=inner), ...)``.

To run the three hypotheses (last / longest survivor / voted) for the cost
of one, the full run computes exactly that procedure with one training run
per (fold, parameter value) shared by the hypotheses (grids in
``ParameterGrid`` order, first best on ties, as ``GridSearchCV``).  Before
the run, a reduced setting (3 x 3 folds, 5 epochs) asserts that it gives
fold for fold the scores of ``cross_val_score(GridSearchCV(...))`` and
``cross_val_score(SequentialSearchCV(...))``.

Reported: mean accuracy over the outer folds +/- the paper's 95% T-interval
(``t_{9,0.975} * sqrt(sum (y_i - mean)^2 / (k (k - 1)))``).

Run ``python benchmarks/bench_wdbc.py`` (``--quick``: 3 x 3 folds, 20
epochs; ``--combos``: add tau x lam and tau x alpha).  Writes
``benchmarks/results/wdbc_table6.json``.
"""

import argparse
import json
import time

import numpy as np
from joblib import Parallel, delayed
from numpy.testing import assert_allclose
from scipy import stats
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV, KFold, ParameterGrid, cross_val_score

from _khardon_wachman import HYPOTHESES, PAPER_SETTINGS, RESULTS, hypothesis_scores, write_json
from skbudget import KernelPerceptron, SequentialSearchCV

TAU = [0, 0.125, 0.25, 0.5, 1, 2, 4]
LAM = [0, 0.125, 0.25, 0.5, 1, 2, 4]
ALPHA = [None, 80, 60, 40, 20, 10, 5]

# column -> list of stage grids (one stage: GridSearchCV; two: SequentialSearchCV)
COLUMNS = {
    "Nothing": [{}],
    "tau": [{"tau": TAU}],
    "lam": [{"lam": LAM}],
    "alpha": [{"alpha_bound": ALPHA}],
    "tau x alpha": [{"tau": TAU, "alpha_bound": ALPHA}],
    "tau x lam": [{"tau": TAU, "lam": LAM}],
    "tau -> alpha": [{"tau": TAU}, {"alpha_bound": ALPHA}],
    "tau -> lam": [{"tau": TAU}, {"lam": LAM}],
}
COMBOS = ("tau x alpha", "tau x lam")

# Table 6, wdbc: mean +/- 95% T-interval
PAPER = {
    "Last": [(92.4, 2.9), (93, 2.7), (93.2, 2.5), (91.6, 2.7), (92.8, 2.8), (93.2, 2.8),
             (93, 2.7), (93.5, 2.2)],
    "Longest": [(92.4, 2.0), (91.7, 2.5), (92.1, 2.5), (92.3, 2.3), (93.2, 1.7), (92.5, 2.1),
                (92.6, 2.1), (91.4, 2.9)],
    "Voted": [(92.3, 2.3), (92.3, 2.6), (92.8, 2.7), (91.7, 1.9), (91.6, 2.2), (92.4, 2.4),
              (91.6, 2.6), (92.8, 2.3)],
}
PAPER_SVM = {"SVM L1": (92.8, 4.4), "SVM L2": (94.7, 2.1)}


def load_wdbc(seed=0):
    X, y = load_breast_cancer(return_X_y=True)
    order = np.random.RandomState(seed).permutation(len(y))
    return X[order], y[order]


INACTIVE = {"tau": 0, "lam": 0, "alpha_bound": None}


def key(params):
    """Identity of a parameter value (inactive values are the defaults)."""
    return json.dumps({k: v for k, v in params.items() if INACTIVE.get(k, "") != v},
                      sort_keys=True)


class SharedRuns:
    """Scores of every hypothesis for one (train, test) split and parameter
    value, from one training run (cached)."""

    def __init__(self, X, y, settings):
        self.X, self.y, self.settings = X, y, settings
        self.cache = {}

    def scores(self, train, test, params, tag):
        k = (tag, key(params))
        if k not in self.cache:
            est = KernelPerceptron(**self.settings, **params).fit(self.X[train], self.y[train])
            self.cache[k] = hypothesis_scores(est, self.X[test], self.y[test])
        return self.cache[k]


def grid_search(runs, train, inner, grid, fixed, name):
    """GridSearchCV's choice on ``train``: first best mean inner score."""
    splits = list(inner.split(runs.X[train]))
    best, best_score = None, -np.inf
    for candidate in ParameterGrid(grid):
        params = {**fixed, **candidate}
        mean = np.mean([runs.scores(train[a], train[b], params, ("inner", i))[name]
                        for i, (a, b) in enumerate(splits)])
        if mean > best_score:
            best, best_score = params, mean
    return best


def outer_fold(X, y, train, test, inner, columns, settings):
    """Every column and hypothesis on one outer fold."""
    runs = SharedRuns(X, y, settings)
    out = {}
    for col in columns:
        for name in HYPOTHESES:
            chosen = {}
            for grid in COLUMNS[col]:
                chosen = grid_search(runs, train, inner, grid, chosen, name) if grid else chosen
            score = runs.scores(train, test, chosen, "outer")[name]
            out[(col, name)] = (score, chosen)
    return out


def double_cv(X, y, columns, settings, n_outer, n_inner, n_jobs, seed=0):
    outer = KFold(n_outer, shuffle=True, random_state=seed)
    inner = KFold(n_inner, shuffle=True, random_state=seed)
    folds = Parallel(n_jobs=n_jobs)(
        delayed(outer_fold)(X, y, train, test, inner, columns, settings)
        for train, test in outer.split(X)
    )
    return {k: ([f[k][0] for f in folds], [f[k][1] for f in folds]) for k in folds[0]}


def check_against_sklearn_api(X, y):
    """The shared-run double CV == cross_val_score(GridSearchCV / SequentialSearchCV)."""
    settings = dict(PAPER_SETTINGS, max_iter=5)
    outer = KFold(3, shuffle=True, random_state=0)
    inner = KFold(3, shuffle=True, random_state=0)
    columns = ["tau", "tau -> alpha"]
    ours = double_cv(X, y, columns, settings, 3, 3, n_jobs=1)
    for name, hypothesis in HYPOTHESES.items():
        est = KernelPerceptron(**settings, hypothesis=hypothesis)
        api = cross_val_score(GridSearchCV(est, COLUMNS["tau"][0], cv=inner), X, y, cv=outer)
        assert_allclose(api, ours[("tau", name)][0])
        seq = SequentialSearchCV(est, COLUMNS["tau -> alpha"], cv=inner)
        api = cross_val_score(seq, X, y, cv=outer)
        assert_allclose(api, ours[("tau -> alpha", name)][0])


def t_interval(scores):
    scores = np.asarray(scores)
    k = len(scores)
    return stats.t.ppf(0.975, k - 1) * np.sqrt(np.sum((scores - scores.mean()) ** 2) / (k * (k - 1)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 x 3 folds, 20 epochs")
    parser.add_argument("--combos", action="store_true", help="add tau x alpha and tau x lam")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--out", default=str(RESULTS / "wdbc_table6.json"))
    args = parser.parse_args()
    X, y = load_wdbc()
    check_against_sklearn_api(X, y)

    settings = dict(PAPER_SETTINGS, max_iter=20) if args.quick else PAPER_SETTINGS
    n_outer = n_inner = 3 if args.quick else 10
    columns = [c for c in COLUMNS if args.combos or c not in COMBOS]
    start = time.perf_counter()
    res = double_cv(X, y, columns, settings, n_outer, n_inner, args.n_jobs)
    elapsed = time.perf_counter() - start

    ours = {}
    print(f"\nTable 6, wdbc: double CV ({n_outer} outer x {n_inner} inner folds, "
          f"{settings['max_iter']} epochs), accuracy % +/- 95% T-interval; ours [paper]; "
          f"{elapsed:.0f} s")
    print(f"{'':9s}" + "".join(f"{c:>26s}" for c in columns))
    for name in HYPOTHESES:
        cells = []
        for col in columns:
            scores = 100 * np.asarray(res[(col, name)][0])
            mean, half = scores.mean(), t_interval(scores)
            ours.setdefault(name, {})[col] = {
                "mean": mean, "t_interval": half, "fold_scores": scores.tolist(),
                "chosen": res[(col, name)][1],
            }
            p_mean, p_half = PAPER[name][list(COLUMNS).index(col)]
            cells.append(f"{mean:5.1f}+/-{half:3.1f} [{p_mean:4.1f}+/-{p_half:3.1f}]")
        print(f"{name:9s}" + "".join(f"{c:>26s}" for c in cells))
    print("paper SVM (parameter search): " +
          ", ".join(f"{k} {m} +/- {h}" for k, (m, h) in PAPER_SVM.items()))

    write_json(args.out, {
        "benchmark": "Khardon & Wachman 2007, Table 6, wdbc (parameter optimization)",
        "settings": dict(settings, n_outer=n_outer, n_inner=n_inner,
                         grids={"tau": TAU, "lam": LAM, "alpha": ALPHA}),
        "columns": columns,
        "ours": ours,
        "paper": {n: {c: PAPER[n][list(COLUMNS).index(c)] for c in columns} for n in PAPER},
        "paper_svm": PAPER_SVM,
        "seconds": elapsed,
    })


if __name__ == "__main__":
    main()
