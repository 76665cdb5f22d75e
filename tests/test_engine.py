"""The compiled engine itself: draws, the feature store, entry checks."""
import numpy as np
import pytest

from skbudget import KernelPerceptron, RandomBudgetPerceptron
from skbudget._engine import OnlineLearner, _random_below


@pytest.mark.parametrize("n", [1, 2, 7, 100, 2**31, 2**32 - 1, 2**32, 3 * 2**40])
def test_random_below_is_randomstate_randint(n):
    expected = np.random.RandomState(5)
    learner = OnlineLearner(rng=np.random.RandomState(5))
    assert [_random_below(learner, n) for _ in range(300)] == [
        expected.randint(n) for _ in range(300)]
    assert learner.rng.randint(1000) == expected.randint(1000)   # same state after


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_non_finite_kernel_values_raise():
    X = np.array([[1e200, 0.0], [1e200, 1.0], [0.0, 1.0]])
    est = KernelPerceptron(kernel="poly", degree=3, gamma=1.0)
    with pytest.raises(ValueError, match="non-finite"):
        est.fit(X, [0, 1, 0])


def test_corrupted_state_raises_instead_of_crashing():
    X = np.random.RandomState(0).randn(40, 3)
    y = (X[:, 0] > 0).astype(int)
    est = RandomBudgetPerceptron(budget=5, gamma=1.0).partial_fit(X[:20], y[:20], classes=[0, 1])
    learner = est._learners[0]
    state = learner.get_state()
    state["slot"][state["order"][0]] = 10**6
    learner.set_state(state)
    with pytest.raises(ValueError, match="corrupted"):
        est.partial_fit(X[20:], y[20:])


@pytest.mark.parametrize("Est", [RandomBudgetPerceptron, KernelPerceptron])
def test_threads_give_the_same_model_bit_for_bit(Est):
    rng = np.random.RandomState(0)
    X = rng.randn(300, 5)
    y = np.argmax(X[:, :4], axis=1)
    one = Est(gamma=0.5, random_state=0, n_jobs=1).fit(X, y)
    two = Est(gamma=0.5, random_state=0, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(one.dual_coef_, two.dual_coef_)
    np.testing.assert_array_equal(one.support_vectors_, two.support_vectors_)
    np.testing.assert_array_equal(one.cumulative_mistakes_, two.cumulative_mistakes_)
