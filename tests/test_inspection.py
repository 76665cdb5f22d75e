"""OnlineRecordDisplay (matplotlib's Agg backend) and the record it plots."""

import re

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from sklearn.datasets import make_blobs
from sklearn.exceptions import NotFittedError
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler

from skbudget import (
    BudgetedSGDClassifier, Forgetron, FourierOGDClassifier, KernelPassiveAggressive,
    KernelPerceptron, Projectron, ProjectronPlusPlus,
)
import skbudget._stream
from skbudget._record import OnlineRecord
from tests.test_common import KERNEL_ESTIMATORS, KERNEL_IDS, small

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skbudget.inspection import OnlineRecordDisplay  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_support_curve_of_a_stream_fed_one_row_at_a_time(binary_data):
    X, y = binary_data
    est = Forgetron(budget=10, gamma=1.0)
    sizes = []
    for i in range(len(y)):
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=[0, 1])
        sizes.append(int(est.n_support_.sum()))
    curve = est.support_curve_
    assert curve.dtype == np.int64 and curve.shape == (len(y), 2)
    assert_array_equal(curve, np.column_stack([np.arange(1, len(y) + 1), sizes]))
    assert curve[:, 1].max() == 10


def test_support_curve_stays_bounded_and_spans_the_stream():
    record = OnlineRecord(max_points=8)
    for t in range(1, 1001):
        record = record.extended(np.zeros(1, dtype=np.uint8), t % 37)
        assert record.support_points.size == record.points.size <= 8
    curve = record.support_curve()
    assert_array_equal(curve[:, 0], [128, 256, 384, 512, 640, 768, 896, 1000])
    assert_array_equal(curve[:, 1], curve[:, 0] % 37)
    assert_array_equal(record.curve()[:, 0], curve[:, 0])


def test_record_takes_one_support_size_per_round_or_one_for_all():
    record = OnlineRecord(max_points=4).extended(np.ones(6, dtype=np.uint8), np.arange(6))
    assert record.support_curve().tolist() == [[2, 1], [4, 3], [6, 5]]
    assert record.extended(np.zeros(2, dtype=np.uint8), 0).support_curve()[-1].tolist() == [8, 0]
    with pytest.raises(ValueError, match="5 support sizes for 6 rounds"):
        record.extended(np.ones(6, dtype=np.uint8), np.arange(5))


def test_display_of_several_estimators_on_one_axis(binary_data):
    X, y = binary_data
    models = [Forgetron(budget=10, gamma=1.0), KernelPerceptron(gamma=1.0)]
    for model in models:
        for start in range(0, len(y), 20):
            model.partial_fit(X[start:start + 20], y[start:start + 20], classes=[0, 1])
    first = OnlineRecordDisplay.from_estimator(models[0])
    second = OnlineRecordDisplay.from_estimator(models[1], ax=first.ax_, name="unbounded",
                                                linewidth=3)
    assert second.ax_ is first.ax_ and second.support_ax_ is first.support_ax_
    assert second.figure_ is first.figure_ and len(first.figure_.axes) == 2
    assert [line.get_label() for line in first.ax_.get_lines()] == ["Forgetron", "unbounded"]
    assert second.line_.get_linewidth() == 3
    assert second.support_line_.get_color() == second.line_.get_color()
    assert second.support_line_.get_linestyle() == "--"
    curve = models[1].mistake_curve_
    assert_array_equal(second.line_.get_xdata(), curve[:, 0])
    assert_array_equal(second.line_.get_ydata(), curve[:, 1] / curve[:, 0])
    assert_array_equal(second.support_line_.get_ydata(), models[1].support_curve_[:, 1])
    assert first.ax_.get_xlabel() == "rounds"
    assert first.ax_.get_legend() is not None


def test_display_of_a_fit_shows_the_exact_support_curve(binary_data):
    X, y = binary_data
    est = Projectron(gamma=1.0, max_iter=3).fit(X, y)
    display = OnlineRecordDisplay.from_estimator(est)
    curve = est.mistake_curve_
    assert len(curve) > 200         # a point per bin, not one per pass
    assert_array_equal(display.support_line_.get_xdata(), curve[:, 0])
    assert_array_equal(display.support_line_.get_ydata(), est.support_curve_[:, 1])
    assert display.support_line_.get_marker() in (None, "None")
    _, ax = plt.subplots()
    assert OnlineRecordDisplay.from_estimator(Projectron(gamma=1.0).fit(X, y), ax=ax).ax_ is ax


def test_display_marks_a_support_curve_of_few_points(binary_data):
    X, y = binary_data
    display = OnlineRecordDisplay.from_estimator(Projectron(gamma=1.0).fit(X[:12], y[:12]))
    assert_array_equal(display.support_line_.get_xdata(), np.arange(1, 13))
    assert display.support_line_.get_marker() == "o"


def test_display_of_a_model_without_a_support_set_shows_its_mistake_rate(binary_data):
    X, y = binary_data
    est = FourierOGDClassifier(n_components=20, gamma=1.0, random_state=0).fit(X, y)
    display = OnlineRecordDisplay.from_estimator(est)
    assert display.support_line_ is None
    assert_array_equal(display.line_.get_ydata(),
                       est.mistake_curve_[:, 1] / est.mistake_curve_[:, 0])


def test_display_of_an_unfitted_model_raises():
    with pytest.raises(NotFittedError):
        OnlineRecordDisplay.from_estimator(Forgetron())


def test_display_of_a_parameter_mixing_classifier_names_its_fitted_model(binary_data):
    """The meta-estimator keeps no record: the error names it and its
    ``estimator_``, which holds the record of every worker's rows."""
    from skbudget.parallel import ParameterMixingClassifier
    X, y = binary_data
    clf = ParameterMixingClassifier(KernelPassiveAggressive(gamma=1.0), mix_every=20,
                                    n_workers=2).fit(X, y)
    message = ("ParameterMixingClassifier has no online record of its own (mistake_curve_); "
               "the record is in its fitted model, "
               "ParameterMixingClassifier.estimator_: plot that, "
               "OnlineRecordDisplay.from_estimator(estimator.estimator_).")
    with pytest.raises(AttributeError) as raised:
        OnlineRecordDisplay.from_estimator(clf)
    assert str(raised.value) == message
    display = OnlineRecordDisplay.from_estimator(clf.estimator_)
    assert display.rounds[-1] == clf.estimator_.n_rounds_ == len(X)


def test_display_of_other_estimators_without_a_record_names_them(binary_data):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.pipeline import make_pipeline
    X, y = binary_data
    for est, where in [
            (make_pipeline(StandardScaler(), Forgetron(budget=10)), "model, Pipeline[-1]:"),
            (GridSearchCV(Forgetron(), {"budget": [5, 10]}, cv=2),
             "model, GridSearchCV.best_estimator_:"),
            (OneVsRestClassifier(Forgetron(budget=10)),
             "models, OneVsRestClassifier.estimators_[i]:"),
            (LogisticRegression(), "only skbudget's online classifiers keep one")]:
        with pytest.raises(AttributeError, match=rf"^{type(est).__name__} has no online record"
                                                 rf".*{re.escape(where)}"):
            OnlineRecordDisplay.from_estimator(est.fit(X, y))


# ---- the support curve: exact at the mistake curve's rounds -------------

@pytest.fixture(scope="module")
def long_multiclass_data():
    # 600 rounds: the record's bins are 4 rounds wide
    X, y = make_blobs(600, centers=3, n_features=3, cluster_std=2.5, random_state=1)
    return StandardScaler().fit_transform(X), y


def _sizes_of_a_replay(est, X, y):
    """The stream fed one row at a time to ``est``: its support size after
    every round (what ``n_support_`` says after each call)."""
    sizes = []
    for i in range(len(y)):
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=np.unique(y))
        sizes.append(int(np.sum(est.n_support_)))
    return np.array(sizes)


def _assert_support_curve_is_the_replays(est, sizes):
    curve, support = est.mistake_curve_, est.support_curve_
    assert support.dtype == np.int64
    assert_array_equal(support[:, 0], curve[:, 0])
    assert_array_equal(support[:, 1], sizes[curve[:, 0] - 1])


@pytest.mark.parametrize("Est", KERNEL_ESTIMATORS, ids=KERNEL_IDS)
def test_support_curve_of_a_fit_is_the_one_row_replays(Est, long_multiclass_data):
    X, y = long_multiclass_data
    fitted = small(Est, shuffle=False, max_iter=1).fit(X, y)
    assert fitted._record.width == 4
    _assert_support_curve_is_the_replays(fitted, _sizes_of_a_replay(small(Est), X, y))


@pytest.mark.parametrize("params", [
    dict(kernel=lambda A, B: rbf_kernel(A, B, gamma=1.0)),     # block mode, one-vs-rest
    dict(kernel="laplacian"),                                  # block mode
    dict(maintenance="merging"),                               # BSGD's merging, shared
    dict(maintenance="merging", multi_class="ovr", n_jobs=2),  # one-vs-rest in threads
], ids=["callable", "laplacian", "merging-shared", "merging-ovr-threads"])
def test_support_curve_of_a_fit_in_every_mode_is_the_replays(params, long_multiclass_data,
                                                            monkeypatch):
    X, y = long_multiclass_data
    monkeypatch.setattr(skbudget._stream, "THREAD_MIN_WORK_NS", 0)   # n_jobs: threads
    fitted = small(BudgetedSGDClassifier, shuffle=False, **params)
    if "kernel" in params:
        fitted.set_params(maintenance="removal")
    replayed = BudgetedSGDClassifier(**fitted.get_params())
    fitted.fit(X, y)
    _assert_support_curve_is_the_replays(fitted, _sizes_of_a_replay(replayed, X, y))


@pytest.mark.parametrize("n_features", [5, 2000])     # run_csr, run_sparse's gather
def test_support_curve_of_sparse_input_is_the_replays(n_features):
    rng = np.random.RandomState(0)
    X = sp.random(400, n_features, density=min(1.0, 4 / n_features), format="csr",
                  random_state=rng)
    sums = np.asarray(X.sum(axis=1)).ravel()
    y = (sums > np.median(sums)).astype(int)
    fitted = Forgetron(budget=9, gamma=1.0, shuffle=False).fit(X, y)
    _assert_support_curve_is_the_replays(
        fitted, _sizes_of_a_replay(Forgetron(budget=9, gamma=1.0), X, y))


def test_support_curve_of_partial_fit_pieces_equals_the_fits(long_multiclass_data):
    X, y = long_multiclass_data
    fitted = small(Projectron, shuffle=False, max_iter=1).fit(X, y)
    streamed = small(Projectron)
    for piece in np.array_split(np.arange(len(y)), [1, 3, 50, 51, 333]):
        streamed.partial_fit(X[piece], y[piece], classes=np.unique(y))
    assert_array_equal(streamed.mistake_curve_, fitted.mistake_curve_)
    assert_array_equal(streamed.support_curve_, fitted.support_curve_)


@pytest.mark.parametrize("Est", [Forgetron, ProjectronPlusPlus])
def test_support_curve_of_a_long_stream_is_bounded_and_exact(Est):
    # 40000 rounds (two compiled segments of a fit): 156 points 256 rounds
    # apart and the last round; a replay in pieces ending at those rounds
    # reads n_support_ there
    X, y = make_blobs(40_000, centers=2, n_features=2, cluster_std=3.0, random_state=2)
    fitted = Est(budget=20, gamma=1.0, shuffle=False).fit(X, y)
    curve, support = fitted.mistake_curve_, fitted.support_curve_
    assert fitted._record.width == 256 and len(curve) == 157
    assert_array_equal(support[:, 0], curve[:, 0])
    streamed, sizes = Est(budget=20, gamma=1.0), []
    for start in range(0, len(y), 256):
        streamed.partial_fit(X[start:start + 256], y[start:start + 256], classes=[0, 1])
        sizes.append(int(streamed.n_support_.sum()))
    assert_array_equal(support[:, 1], sizes)
    assert support[:, 1].max() == 20
