"""Parameters: a model parameter changed between calls is an error (call
parameters may change), bools are not numbers, changed parameters are
validated again, ``gamma_`` is the resolved gamma, and an int
``random_state`` gives NumPy's generator."""

import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone

from skbudget import Forgetron, KernelPerceptron
from tests.model_state import assert_same_state, model_state
from tests.test_common import ESTIMATORS, IDS, params_taken, small


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_changed_model_parameters_raise_and_call_params_apply(Est, binary_data):
    X, y = binary_data
    est = small(Est).partial_fit(X[:100], y[:100], classes=[0, 1])
    captured = [name for name in est.get_params() if name not in est._call_params]
    for name in captured:
        old = getattr(est, name)
        new = {"kernel": "laplacian", "kernel_params": {"gamma": 0.3}, "gamma": 0.123,
               "random_state": 12345, "prior": (2.0, 2.0), "validation": "support",
               "theta_init": "kappa", "threshold_step": "kappa", "budget": 3,
               "alpha_bound": 2, "self_tuned": False, "degree": 5,
               "fit_intercept": False}.get(name)
        if new is None:
            new = old * 2 + 1 if isinstance(old, (int, float)) and not isinstance(old, bool) else 1
        state = model_state(est)
        est.set_params(**{name: new})
        with pytest.raises(ValueError, match=f"'{name}' was changed.*Call fit"):
            est.partial_fit(X[100:110], y[100:110])
        assert_same_state(model_state(est), state)
        est.set_params(**{name: old})
    est.set_params(**params_taken(Est, verbose=0, max_iter=3, shuffle=False))
    est.partial_fit(X[100:110], y[100:110])          # call parameters may change
    est.set_params(warm_start=True, budget=3) if "budget" in captured else None
    if "budget" in captured:
        with pytest.raises(ValueError, match="'budget' was changed"):
            est.fit(X, y)
        est.set_params(warm_start=False).fit(X, y)   # a new model takes the new value
        if hasattr(est, "n_support_"):
            assert np.all(est.n_support_ <= 3)
        elif hasattr(est, "n_weights_"):            # AMM: its budget is per class
            assert np.all(est.n_weights_ <= 3)
        else:                                       # LLSVM's budget: its landmarks
            assert len(est.components_) == 3


def test_hypothesis_may_change_between_calls(binary_data):
    X, y = binary_data
    est = KernelPerceptron(gamma=1.0).partial_fit(X[:100], y[:100], classes=[0, 1])
    est.set_params(hypothesis="averaged").partial_fit(X[100:], y[100:])
    clean = KernelPerceptron(gamma=1.0, hypothesis="averaged")
    clean.partial_fit(X[:100], y[:100], classes=[0, 1]).partial_fit(X[100:], y[100:])
    assert_allclose(est.decision_function(X), clean.decision_function(X))


def test_kernel_params_changed_in_place_is_a_change(binary_data):
    X, y = binary_data
    params = {"gamma": 0.5}
    est = Forgetron(kernel="rbf", kernel_params=params).partial_fit(X[:50], y[:50],
                                                                    classes=[0, 1])
    params["gamma"] = 2.0
    with pytest.raises(ValueError, match="'kernel_params' was changed"):
        est.partial_fit(X[50:60], y[50:60])

    def weighted_rbf(a, b, weights):
        return np.exp(-np.sum(weights * (a - b) ** 2))

    params = {"weights": np.array([1.0, 0.5, 0.5, 2.0])}     # arrays compare by value
    est = Forgetron(kernel=weighted_rbf, kernel_params=params, budget=5)
    est.partial_fit(X[:30], y[:30], classes=[0, 1]).partial_fit(X[30:40], y[30:40])
    params["weights"][0] = 3.0
    with pytest.raises(ValueError, match="'kernel_params' was changed"):
        est.partial_fit(X[40:50], y[40:50])


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_bools_are_not_numbers(Est, binary_data):
    X, y = binary_data
    numeric = [name for name, value in Est().get_params().items()
               if name in ("budget", "degree", "max_iter", "gamma", "coef0", "C", "beta",
                           "eta", "eta0", "tau", "lam", "alpha", "alpha_bound", "validation")]
    for name in numeric:
        for value in (True, False, np.bool_(True)):
            with pytest.raises(ValueError, match=name):
                Est(**{name: value}).fit(X[:50], y[:50])


def test_gamma_is_a_fitted_attribute_and_small_scale_warns(binary_data):
    X, y = binary_data
    est = Forgetron().fit(X, y)
    assert est.gamma_ == pytest.approx(1.0 / (X.shape[1] * X.var()))
    assert Forgetron(gamma=0.7).fit(X, y).gamma_ == 0.7
    with pytest.warns(UserWarning, match="gamma='scale' was resolved from the 1 rows.*numeric"):
        Forgetron().partial_fit(X[:1], y[:1], classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Forgetron(gamma=1.0).partial_fit(X[:1], y[:1], classes=[0, 1])
        Forgetron(kernel="linear").partial_fit(X[:1], y[:1], classes=[0, 1])
        Forgetron().fit(X[:50], y[:50])      # a fit sees all its data at once
        Forgetron().partial_fit(X[:100], y[:100], classes=[0, 1])


@pytest.mark.parametrize("seed", [0, 1, 42, 2 ** 31, 2 ** 32 - 1, np.int64(7), np.uint32(9)])
def test_seeded_random_state_is_numpys(seed):
    # fit's generator from an int random_state: RandomState(seed), state and
    # draws, made without RandomState's entropy-seeded first key
    from skbudget._base import _FAST_SEEDING, _random_state, _seeded_random_state
    assert _FAST_SEEDING          # (else the shortcut is off: RandomState itself)
    for made in (_seeded_random_state(seed), _random_state(seed)):
        reference = np.random.RandomState(seed)
        a, b = made.get_state(), reference.get_state()
        assert a[0] == b[0] and a[2:] == b[2:]
        assert_array_equal(a[1], b[1])
        assert_array_equal(made.randint(1000, size=50), reference.randint(1000, size=50))
        assert_array_equal(made.standard_normal(5), reference.standard_normal(5))
        assert_array_equal(pickle.loads(pickle.dumps(made)).random_sample(3),
                           reference.random_sample(3))
    for bad in (-1, 2 ** 32):
        with pytest.raises(ValueError) as expected:
            np.random.RandomState(bad)
        with pytest.raises(ValueError) as raised:
            _seeded_random_state(bad)
        assert str(raised.value) == str(expected.value)
    given_state = np.random.RandomState(3)
    assert _random_state(given_state) is given_state
    assert _random_state(None) is np.random.mtrand._rand


def test_validated_parameters_are_checked_again_when_they_change():
    # parameter validation skips a set of simple values that passed before:
    # any change is validated, an invalid set never passes, and the
    # estimators' own checks still run on every call
    X, y = np.random.RandomState(0).randn(40, 3), np.arange(40) % 2
    for _ in range(2):
        Forgetron(budget=5).fit(X, y)
        for bad in ({"budget": 0}, {"budget": 5.0}, {"budget": True}, {"gamma": -1.0},
                    {"kernel": "nope"}, {"max_iter": 0}):
            with pytest.raises(ValueError, match="must be"):
                Forgetron(budget=5).set_params(**bad).fit(X, y)
    from skbudget import BudgetedSGDClassifier
    est = BudgetedSGDClassifier(budget=5, kernel="linear", maintenance="merging")
    for _ in range(2):      # BSGD's own check (merging needs rbf) on every call
        with pytest.raises(ValueError):
            clone(est).fit(X, y)
