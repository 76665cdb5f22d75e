"""OnlineRecordDisplay (matplotlib's Agg backend) and the record it plots."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.exceptions import NotFittedError

from skbudget import Forgetron, KernelPerceptron, Projectron
from skbudget._record import OnlineRecord

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
        assert record.support.shape[0] <= 9
    curve = record.support_curve()
    assert_array_equal(curve[:, 0], [128, 256, 384, 512, 640, 768, 896, 1000])
    assert_array_equal(curve[:, 1], curve[:, 0] % 37)
    assert_array_equal(record.curve()[:, 0], curve[:, 0])


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


def test_display_of_a_fit_marks_its_few_support_reads(binary_data):
    X, y = binary_data
    display = OnlineRecordDisplay.from_estimator(Projectron(gamma=1.0, max_iter=3).fit(X, y))
    assert_array_equal(display.support_line_.get_xdata(), [len(y), 2 * len(y), 3 * len(y)])
    assert display.support_line_.get_marker() == "o"
    _, ax = plt.subplots()
    assert OnlineRecordDisplay.from_estimator(Projectron(gamma=1.0).fit(X, y), ax=ax).ax_ is ax


def test_display_of_an_unfitted_model_raises():
    with pytest.raises(NotFittedError):
        OnlineRecordDisplay.from_estimator(Forgetron())
