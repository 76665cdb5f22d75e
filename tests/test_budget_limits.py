"""Budgets from ordinary to absurd, for every estimator with a ``budget``
(:func:`skbudget.discovery.all_estimators`, so a new one is covered as soon
as it is exported).

* A budget the engine cannot index (more than ``MAX_BUDGET = 2**31 - 3``
  vectors) is refused at fit with a ValueError naming ``budget`` and the
  limit, and leaves a fitted model exactly as it was (``budget=2**63-1``
  said the learner "has an inconsistent state" on ``ae3fe45``).
* A large budget that binds nowhere near (``10**6`` on a few dozen rows)
  fits, and learns the same model as a small budget that does not bind
  either: the arrays grow with the support set (on ``ae3fe45`` every
  learner keeping a Gram matrix failed with a MemoryError of 7.28 TiB).
* Nothing is sized by the budget up front: at the largest budget,
  ``MAX_BUDGET``, a short stream takes as little memory, in the process and
  in the pickle, as at a budget of 100 (NystromOGDClassifier's ``coef_``
  was a 3.4 GB row of zeros there, sized by its default ``n_components``).
"""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skbudget import NystromOGDClassifier
from skbudget._declaration import declaration_of
from skbudget._params import MAX_BUDGET
from skbudget.discovery import all_estimators

from .test_common import assert_same_model, params_taken

BUDGETED = [pytest.param(Est, id=name) for name, Est in all_estimators(budgeted=True)]


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(60, n_features=5, n_informative=3, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, random_state=0)
    return X, y


def _fitted(Est, X, y, budget):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Est(budget=budget, random_state=0, **params_taken(Est, gamma=0.5)).fit(X, y)




@pytest.mark.parametrize("Est", BUDGETED)
@pytest.mark.parametrize("budget", [MAX_BUDGET + 1, 2**31, 2**32, 2**62, 2**63 - 1])
def test_budget_too_large_to_index_is_refused(Est, budget, data):
    X, y = data
    est = _fitted(Est, X, y, 20)
    before = pickle.dumps(est)
    est.set_params(budget=budget)
    with pytest.raises(ValueError, match=rf"'budget' parameter .* at most {MAX_BUDGET} .*"
                                         rf"got budget={budget}"):
        est.fit(X, y)
    est.set_params(budget=20)
    assert pickle.dumps(est) == before          # the model untouched
    with pytest.raises(ValueError, match="budget"):
        Est(budget=budget).partial_fit(X, y, classes=np.unique(y))


@pytest.mark.parametrize("Est", BUDGETED)
@pytest.mark.parametrize("budget", [10**6, MAX_BUDGET])
def test_large_budget_fits_and_changes_nothing(Est, budget, data):
    X, y = data
    if declaration_of(Est).solves_calls:
        pytest.skip("its budget is the number of landmarks, chosen among the first call's "
                    "rows: a budget beyond them is an error (tests/test_llsvm.py)")
    if Est.__name__ == "NystromOGDClassifier":      # (n_components follows the budget)
        large = NystromOGDClassifier(budget=budget, n_components=3, gamma=0.5,
                                     random_state=0).fit(X, y)
        small = NystromOGDClassifier(budget=100, n_components=3, gamma=0.5,
                                     random_state=0).fit(X, y)
        default = _fitted(Est, X, y, budget)        # (its default n_components too)
        assert len(pickle.dumps(default)) < 2 * len(pickle.dumps(_fitted(Est, X, y, 100)))
    else:
        large, small = _fitted(Est, X, y, budget), _fitted(Est, X, y, 100)
    assert large.budget == budget
    assert_same_model(large, small)
    assert len(pickle.dumps(large)) < 2 * len(pickle.dumps(small))
