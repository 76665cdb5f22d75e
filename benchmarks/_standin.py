"""Benchmark-only budgeted stand-ins (see ``_standin_fast.pyx``), compiled
on first import with pyximport; used by ``bench_speed.py --standin``."""

import numbers
from pathlib import Path

import numpy as np
import pyximport
from sklearn.utils._param_validation import Interval

ROOT = Path(__file__).resolve().parents[1]
pyximport.install(language_level=3, setup_args={"include_dirs": [np.get_include(), str(ROOT)]},
                  build_dir=str(ROOT / "build" / "pyxbld"))

from skbudget._base import BaseOnlineKernelClassifier  # noqa: E402

from _standin_fast import StandinLearner  # noqa: E402


class _Standin(BaseOnlineKernelClassifier):
    _remove_oldest = False
    _parameter_constraints = {
        **BaseOnlineKernelClassifier._parameter_constraints,
        "budget": [Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(self, *, budget=100, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 kernel_params=None, max_iter=1, shuffle=False, random_state=None,
                 warm_start=False, verbose=0):
        super().__init__(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                         kernel_params=kernel_params, max_iter=max_iter, shuffle=shuffle,
                         random_state=random_state, warm_start=warm_start, verbose=verbose)
        self.budget = budget

    def _make_learner(self, rng):
        return StandinLearner(budget=self.budget, remove_oldest=self._remove_oldest)


class StandinStoptron(_Standin):
    """Perceptron that stops updating once its budget is full."""


class StandinRemoveOldest(_Standin):
    """Perceptron that removes its oldest support vector when full."""
    _remove_oldest = True


class _PlainStandin:
    remove_oldest = False

    def __init__(self, kernel, budget=100):
        self.kernel, self.budget = kernel, budget
        self.support, self.alpha, self.mistakes = [], [], []

    def partial_fit(self, X, y):
        for t in range(len(y)):
            f = float(self.kernel(X[t:t + 1], np.asarray(self.support).reshape(-1, X.shape[1]))[0]
                      @ np.asarray(self.alpha)) if self.support else 0.0
            self.mistakes.append(y[t] * f <= 0)
            if y[t] * f <= 0:
                if len(self.support) >= self.budget:
                    if not self.remove_oldest:
                        continue
                    del self.support[0], self.alpha[0]
                self.support.append(X[t])
                self.alpha.append(float(y[t]))
        return self


class PlainStandinStoptron(_PlainStandin):
    pass


class PlainStandinRemoveOldest(_PlainStandin):
    remove_oldest = True
