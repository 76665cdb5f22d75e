"""SequentialSearchCV: scikit-learn's estimator checks, feature names, and
errors as early as GridSearchCV's."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal
from sklearn.exceptions import FitFailedWarning
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from skbudget import Forgetron, KernelPerceptron, SequentialSearchCV


@parametrize_with_checks([SequentialSearchCV(
    KernelPerceptron(max_iter=2, gamma=1.0, random_state=0), [{"tau": [0, 0.5]}], cv=2)])
# the checks that give the search bad data (object dtype, NaN, inf) see its
# candidates fail, which a search reports as GridSearchCV does: expected
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.FitFailedWarning")
@pytest.mark.filterwarnings("ignore:Scoring failed:UserWarning")
@pytest.mark.filterwarnings("ignore:One or more of the test scores are non-finite:UserWarning")
def test_sequential_search_is_sklearn_compatible(estimator, check, monkeypatch):
    if getattr(check, "func", check).__name__ == "check_array_api_input":
        monkeypatch.setenv("SCIPY_ARRAY_API", "1")   # see tests/test_common.py
    check(estimator)


@pytest.mark.filterwarnings("ignore:One or more of the test scores are non-finite:UserWarning")
def test_sequential_search_feature_names_and_early_errors(binary_data):
    X, y = binary_data
    frame = pd.DataFrame(X[:60], columns=list("abcd"))
    search = SequentialSearchCV(KernelPerceptron(max_iter=2, gamma=1.0, random_state=0),
                                [{"tau": [0, 0.5]}], cv=2).fit(frame, y[:60])
    assert_array_equal(search.feature_names_in_, list("abcd"))
    assert search.n_features_in_ == 4
    with pytest.raises(ValueError, match="requires y"):
        search.fit(X, None)
    with_nan = X[:60].copy()
    with_nan[0, 0] = np.nan          # a pipeline that imputes may take NaN
    imputing = make_pipeline(SimpleImputer(), KernelPerceptron(max_iter=2, gamma=1.0))
    SequentialSearchCV(imputing, [{"kernelperceptron__tau": [0, 0.5]}], cv=2).fit(with_nan,
                                                                                  y[:60])
    search_budget = SequentialSearchCV(Forgetron(gamma=1.0), [{"budget": [True, 5]}], cv=2)
    with pytest.warns(FitFailedWarning, match="'budget' parameter.*Got True"):
        search_budget.fit(X[:60], y[:60])       # as GridSearchCV: a failed candidate
    assert search_budget.best_params_ == {"budget": 5}
