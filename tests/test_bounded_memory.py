"""Flat memory: the online record keeps a bounded mistake curve (exact at
its points) and no per-round flags unless asked, tables keyed by example
cover one call, and a model's size does not grow with the stream."""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from skbudget import Forgetron, KernelPerceptron, TighterPerceptron
from skbudget._record import OnlineRecord
from tests.oracles import keeping_flags, mistake_flags
from tests.test_common import BUDGETED, small


@pytest.mark.parametrize("n_rounds", [1, 7, 512, 513, 1000, 5000, 40_000])
def test_record_curve_is_bounded_and_exact_at_its_points(n_rounds):
    rng = np.random.RandomState(n_rounds)
    flags = (rng.uniform(size=n_rounds) < 0.3).astype(np.uint8)
    sizes = rng.randint(0, 1000, size=n_rounds)
    record = OnlineRecord(max_points=64)
    start = 0
    while start < n_rounds:          # calls of random sizes
        stop = start + int(rng.randint(1, 300))
        record = record.extended(flags[start:stop], sizes[start:stop])
        start = stop
    curve = record.curve()
    assert len(curve) <= 65
    assert record.n_rounds == n_rounds and record.n_mistakes == flags.sum()
    assert tuple(curve[-1]) == (n_rounds, flags.sum())
    assert_array_equal(curve[:, 1], np.cumsum(flags)[curve[:, 0] - 1])
    if n_rounds >= 128:              # the curve spans the stream evenly
        assert len(curve) >= 32
        assert np.ptp(np.diff(curve[:-1, 0])) == 0 if len(curve) > 2 else True
    support = record.support_curve()     # the sizes at the same rounds
    assert_array_equal(support[:, 0], curve[:, 0])
    assert_array_equal(support[:, 1], sizes[curve[:, 0] - 1])


def test_record_keeps_no_flags_unless_asked(binary_data):
    X, y = binary_data
    est = small(Forgetron).fit(X, y)
    assert est._record.flag_chunks is None
    with pytest.raises(AttributeError, match="keep_flags"):
        est._mistake_flags()
    flagged = keeping_flags(small(Forgetron)).fit(X, y)
    assert mistake_flags(flagged).sum() == flagged.n_mistakes_ == est.n_mistakes_
    assert_array_equal(flagged.mistake_curve_, est.mistake_curve_)


@pytest.mark.parametrize("make, table", [
    (lambda: KernelPerceptron(gamma=1.0, lam=0.5), "cell_of_example"),
    (lambda: TighterPerceptron(gamma=1.0, budget=10, validation="full"), "val_of_example"),
], ids=["KernelPerceptron", "TighterPerceptron-full"])
def test_tables_keyed_by_example_cover_one_call(make, table, binary_data):
    # example identities never recur across calls: the table of a call is
    # dropped by the next one (partial_fit), kept across a fit's epochs
    X, y = binary_data
    est = make()
    for _ in range(40):
        est.partial_fit(X[:50], y[:50], classes=[0, 1])
    assert len(est._learners[0].get_state()[table]) <= 100
    kept = make().set_params(max_iter=3).fit(X[:50], y[:50])._learners[0].get_state()[table]
    assert len(kept) >= 50 and (kept >= 0).any()


@pytest.mark.parametrize("Est", BUDGETED, ids=[E.__name__ for E in BUDGETED])
def test_model_size_does_not_grow_with_the_stream(Est):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(2000, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    est = small(Est, budget=20)
    if "validation" in est.get_params():
        est.set_params(validation="budget")
    sizes = []
    for repeat in range(30):        # 60 000 rounds in all
        est.partial_fit(X, y, classes=[0, 1])
        if repeat in (4, 29):
            sizes.append(len(pickle.dumps(est)))
    assert est.n_rounds_ == 60_000
    assert len(est.mistake_curve_) <= 257
    assert sizes[1] - sizes[0] < 1_500      # the curve's bins, not the rounds


@pytest.mark.parametrize("n_learners", [1, 2, 5])
def test_compiled_mistake_flags_match_the_numpy_expression(n_learners):
    # a mistake unless y f(x) > 0 (one learner) or the true class's score is
    # strictly the largest: ties and zero scores are mistakes
    from skbudget._elementwise import mistake_flags
    rng = np.random.RandomState(n_learners)
    n = 500
    if n_learners == 1:
        targets = np.where(rng.uniform(size=(1, n)) > 0.5, 1.0, -1.0)
    else:
        targets = -np.ones((n_learners, n))
        targets[rng.randint(0, n_learners, n), np.arange(n)] = 1.0
    scores = np.round(rng.randn(n_learners, n), 1)       # many ties
    scores[:, :40] = 0.0
    if n_learners == 1:
        expected = targets[0] * scores[0] <= 0
    else:
        true = targets > 0
        expected = scores.T[true.T] <= np.where(true, -np.inf, scores).max(axis=0)
    flags = mistake_flags(targets, scores)
    assert flags.dtype == np.uint8
    assert_array_equal(flags, expected.astype(np.uint8))
    with pytest.raises(ValueError, match="shape"):
        mistake_flags(targets, np.ascontiguousarray(scores[:, 1:]))


def test_cumulative_at_bin_ends_counts_each_bin_end():
    from skbudget._elementwise import cumulative_at_bin_ends
    flags = np.array([1, 0, 1, 1, 0, 1, 1], dtype=np.uint8)
    at_ends, total = cumulative_at_bin_ends(flags, 2, 3, 10)   # ends after rounds 2, 5
    assert_array_equal(at_ends, [11, 13])
    assert total == 15
    at_ends, total = cumulative_at_bin_ends(flags, 8, 1, 0)    # no end in this call
    assert at_ends.shape == (0,) and total == 5
    with pytest.raises(ValueError, match="at least 1"):
        cumulative_at_bin_ends(flags, 0, 1, 0)
