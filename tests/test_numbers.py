"""Numerical safety (issue 27): extreme parameters and values, NaN in the
compiled searches, CSR input with duplicate entries."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits, make_classification
from sklearn.preprocessing import StandardScaler

from skbudget import (
    BudgetedSGDClassifier,
    BudgetMIRA,
    KernelMIRA,
    KernelPerceptron,
    SequentialSearchCV,
)
from skbudget._base import BaseKernelExpansionClassifier
from skbudget._merge_search import _first_least
from skbudget._predict_fast import canonical_csr
from skbudget.discovery import all_estimators
from tests.test_common import params_taken

ESTIMATORS = [Est for _, Est in all_estimators() if Est is not SequentialSearchCV]


def _params(Est, **extra):
    return {**params_taken(Est, gamma=0.5, budget=15), **extra}


def test_parameter_sweep_gives_a_clear_error_or_a_finite_model():
    """Every numeric parameter of every estimator over 1e-300 ... 1e300 (and
    negatives): a ValueError or a finite model, never a crash or another
    error; BSGD's overflowing arithmetic (lam below the validated range,
    through the state) raises a ValueError and leaves the model as it was.
    In a child process: a crash fails the test."""
    result = subprocess.run([sys.executable, "-m", "tests.numeric_sweep"], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert result.stdout.rstrip().endswith("done"), result.stdout[-3000:]
    assert "BAD" not in result.stdout, result.stdout[-3000:]


# ---- finding 2: BSGD merging with a tiny alpha -------------------------------

@pytest.mark.parametrize("maintenance", ["merging", "projection", "removal"])
def test_bsgd_alpha_below_the_finite_range_is_refused(maintenance):
    X, y = make_classification(60, 4, random_state=0)
    est = BudgetedSGDClassifier(maintenance=maintenance, alpha=1e-200, budget=10)
    with pytest.raises(ValueError, match="'alpha' parameter"):
        est.fit(X, y)
    # the floor itself gives a finite model
    est.set_params(alpha=1e-100).fit(X, y)
    assert np.isfinite(est.dual_coef_).all() and np.isfinite(est.decision_function(X)).all()


def test_least_degradation_has_an_answer_or_raises():
    assert _first_least([3.0, 1.0, 1.0 + 1e-12, 0.5 + 2.0]) == 1     # ties: the first
    assert _first_least([2.0]) == 0
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(ValueError, match="not a finite number"):
            _first_least([1.0, bad, 0.5])


# ---- finding 3: CSR input with duplicate entries, unsorted indices ------------

def _duplicated_csr(X, order="shuffled"):
    """A CSR matrix equal to ``X`` whose every value is stored as two parts
    (duplicates), with the column indices unsorted."""
    rng = np.random.RandomState(0)
    indptr, indices, data = [0], [], []
    for row in X:
        cols = np.flatnonzero(row)
        parts = np.concatenate([cols, cols])
        values = np.concatenate([row[cols] * 0.25, row[cols] * 0.75])
        perm = rng.permutation(len(parts))
        indices.extend(parts[perm])
        data.extend(values[perm])
        indptr.append(len(indices))
    D = sp.csr_matrix((np.array(data), np.array(indices, dtype=np.int32),
                       np.array(indptr, dtype=np.int32)), shape=X.shape)
    assert not D.has_canonical_format
    return D


@pytest.mark.parametrize("Est", ESTIMATORS, ids=lambda E: E.__name__)
@pytest.mark.parametrize("d", [5, 40])   # few features: feature by feature; more: GEMM / FMA
def test_prediction_on_csr_with_duplicates_equals_dense(Est, d):
    X, y = make_classification(120, d, n_informative=3, random_state=0)
    X = StandardScaler().fit_transform(X)
    est = Est(**_params(Est)).fit(sp.csr_matrix(X), y)
    D = _duplicated_csr(X)
    np.testing.assert_allclose(D.toarray(), X, rtol=1e-12, atol=1e-12)
    expected = est.decision_function(X)
    np.testing.assert_allclose(est.decision_function(D), expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(est.predict(D), est.predict(X))
    assert not D.has_canonical_format       # the caller's matrix is left as it was


def test_canonical_csr_copies_only_what_is_not_canonical():
    X = sp.random(30, 8, density=0.3, format="csr", random_state=0)
    assert X.has_canonical_format
    same = canonical_csr(X)
    assert np.shares_memory(same.data, X.data) and np.shares_memory(same.indices, X.indices)
    D = _duplicated_csr(X.toarray())
    fixed = canonical_csr(D)
    assert fixed.has_canonical_format and not D.has_canonical_format
    np.testing.assert_allclose(fixed.toarray(), X.toarray(), atol=1e-15)
    broken = X.copy()
    broken.indices[3] = 99          # a column out of range
    with pytest.raises(ValueError, match="not a valid CSR matrix"):
        canonical_csr(broken)


# ---- finding 4: MIRA with a tiny beta ------------------------------------------

@pytest.mark.parametrize("Est", [KernelMIRA, BudgetMIRA])
def test_mira_small_beta_gives_the_same_model_up_to_scale(Est):
    X, y = load_digits(return_X_y=True)
    X, y = X[:300] / 16.0, y[:300]
    params = dict(kernel="poly", degree=2, gamma=1 / 64, coef0=0.0, shuffle=False)
    if Est is BudgetMIRA:
        params["budget"] = 40
    reference = Est(beta=0.01, **params).fit(X, y)
    assert reference.n_support_.sum() > 20
    smallest = None
    for beta in (1e-100, 1e-12, 1e-9):
        small = Est(beta=beta, **params).fit(X, y)
        np.testing.assert_array_equal(small.predict(X), reference.predict(X))
        assert small.n_updates_ == reference.n_updates_
        # where the cap tau_y <= 1 cannot bind, exactly proportional (up to rounding)
        scaled = small.dual_coef_ / beta
        if smallest is None:
            smallest = scaled
        np.testing.assert_allclose(scaled, smallest, rtol=1e-7, atol=1e-9 * abs(scaled).max())
        np.testing.assert_allclose(scaled * 0.01, reference.dual_coef_, rtol=1e-2,
                                   atol=1e-3 * abs(reference.dual_coef_).max())


# ---- low: a row whose squared norm overflows; gamma='scale' set by an outlier --

@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("Est", [Est for Est in ESTIMATORS
                                 if issubclass(Est, BaseKernelExpansionClassifier)],
                         ids=lambda E: E.__name__)   # (kernel expansions: rows' norms)
def test_row_with_an_overflowing_norm_is_refused_at_fit(Est, binary_data):
    X, y = binary_data
    X = X.copy()
    X[7] = 1e160
    with pytest.raises(ValueError, match="squared norm|non-finite"):
        Est(**_params(Est)).fit(X, y)
    fitted = Est(**_params(Est)).fit(binary_data[0], y)
    before = fitted.dual_coef_.copy()
    with pytest.raises(ValueError, match="squared norm|non-finite"):
        fitted.partial_fit(X, y)
    np.testing.assert_array_equal(fitted.dual_coef_, before)
    # such a row is infinitely far from every support vector: its kernel values are 0
    np.testing.assert_allclose(fitted.decision_function(X)[7], fitted.intercept_[0]
                               if len(fitted.intercept_) == 1 else 0.0, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
def test_scale_gamma_set_by_one_outlier_warns(sparse, binary_data):
    X, y = binary_data
    X = X.copy()
    X[3, 0] = 1e150
    X = sp.csr_matrix(X) if sparse else X
    with pytest.warns(UserWarning, match="outlier"):
        KernelPerceptron().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KernelPerceptron().fit(binary_data[0], y)       # ordinary data: no warning


def test_non_finite_coefficients_after_training_are_a_clear_error(monkeypatch):
    # the last line behind the compiled checks: coefficients that came out
    # non-finite make the call raise, and the model is left as it was
    from skbudget import Forgetron

    rng = np.random.RandomState(0)
    X, y = rng.normal(size=(60, 3)), rng.randint(0, 2, 60)
    est = Forgetron(budget=8, gamma=1.0).partial_fit(X[:30], y[:30], classes=[0, 1])
    before = est.dual_coef_.copy(), est.support_vectors_.copy(), est.n_mistakes_
    expansion = type(est)._learner_expansion

    def overflowed(self, learner):
        coef, intercept = expansion(self, learner)
        return np.full_like(np.asarray(coef, dtype=float), np.inf), intercept

    monkeypatch.setattr(type(est), "_learner_expansion", overflowed)
    with pytest.raises(ValueError, match="coefficients are not finite"):
        est.partial_fit(X[30:], y[30:])
    monkeypatch.undo()
    np.testing.assert_array_equal(est.dual_coef_, before[0])
    np.testing.assert_array_equal(est.support_vectors_, before[1])
    assert est.n_mistakes_ == before[2]
    est.partial_fit(X[30:], y[30:])     # and it continues
