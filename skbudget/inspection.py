"""Plots of a model's online record, following scikit-learn's Display API."""

import numpy as np
from sklearn.utils._optional_dependencies import check_matplotlib_support
from sklearn.utils.validation import check_is_fitted

__all__ = ["OnlineRecordDisplay"]

# the label that marks the twin axis holding the support sizes, so that a
# later plot on the same axis finds it
_SUPPORT_AXIS_LABEL = "skbudget-support-size"
# a support curve of fewer points than this is drawn with markers
_FEW_POINTS = 20


def _has_record(obj):
    return hasattr(obj, "mistake_curve_")


def _record_places(estimator):
    """Where the fitted models with an online record are in ``estimator``
    (one without a record of its own): its fitted attributes (``name``,
    or ``name[i]`` for a list of models), and a pipeline's last step
    (``[-1]``).  Properties are not read (one may compute, or change the
    estimator)."""
    places = []
    for name, value in vars(estimator).items():
        if not name.endswith("_") or name.startswith("_"):
            continue
        if _has_record(value):
            places.append(f".{name}")
        elif isinstance(value, (list, tuple)) and value and all(map(_has_record, value)):
            places.append(f".{name}[i]")
    steps = getattr(estimator, "steps", None)
    if isinstance(steps, list) and steps and _has_record(steps[-1][-1]):
        places.append("[-1]")
    return places


def _check_has_record(estimator):
    """``AttributeError`` naming ``estimator`` when it has no online record,
    and where the models that hold one are."""
    if _has_record(estimator):
        return
    name = type(estimator).__name__
    places = _record_places(estimator)
    if places:
        where = " or ".join(f"{name}{place}" for place in places)
        several = len(places) > 1 or places[0].endswith("[i]")
        hint = (f"the record is in its fitted model{'s' if several else ''}, {where}: "
                f"plot that, OnlineRecordDisplay.from_estimator(estimator{places[0]})")
    else:
        hint = ("only skbudget's online classifiers keep one, and meta-estimators hold "
                "it in their fitted model")
    raise AttributeError(f"{name} has no online record of its own (mistake_curve_); "
                         f"{hint}.")


class OnlineRecordDisplay:
    """The online record: cumulative mistake rate and support size against rounds.

    The picture the online-learning papers draw: the cumulative online
    error ``mistakes up to round t / t`` (solid line, left axis) and the
    number of support vectors after round ``t`` (dashed line of the same
    colour, right axis), from a fitted model's ``mistake_curve_`` and, for
    a kernel expansion, ``support_curve_`` (a model that stores no
    support vectors, e.g. FOGD's, has the mistake rate only).  Both are exact at the same rounds (every bin end
    of the model's bounded record and the last round, at most 257 points
    however the model was trained: ``fit`` or ``partial_fit`` in pieces of
    any size); a support curve of fewer than 20 points (a short stream, a
    model loaded from an earlier version's file, a mixed model) is drawn
    with markers.  Several models go on one axis by passing the axis of the
    first display to the next (``ax=display.ax_``).

    Create it with :meth:`from_estimator`; the constructor takes the
    curves themselves.

    Parameters
    ----------
    rounds : ndarray of shape (n_points,)
        The rounds of the mistake rate.
    mistake_rate : ndarray of shape (n_points,)
        The cumulative mistake rate after each of those rounds.
    support_rounds : ndarray of shape (n_support_points,), default=None
        The rounds of the support size (None: a model without a support
        set).
    support_size : ndarray of shape (n_support_points,), default=None
        The support vectors (of every learner) after each of those rounds.
    estimator_name : str, default=None
        The legend's name of the model; no legend entry if None.

    Attributes
    ----------
    line_ : matplotlib Line2D
        The mistake rate.
    support_line_ : matplotlib Line2D or None
        The support size (None without one).
    ax_ : matplotlib Axes
        The axis of the mistake rate (pass it to the next plot).
    support_ax_ : matplotlib Axes
        Its twin axis, of the support size.
    figure_ : matplotlib Figure
        The figure.

    See Also
    --------
    sklearn.model_selection.LearningCurveDisplay : The offline counterpart.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.datasets import make_classification
    >>> from skbudget import Forgetron, KernelPerceptron
    >>> from skbudget.inspection import OnlineRecordDisplay
    >>> X, y = make_classification(2000, random_state=0)
    >>> display = OnlineRecordDisplay.from_estimator(
    ...     Forgetron(budget=50, gamma=0.05).fit(X, y))
    >>> display = OnlineRecordDisplay.from_estimator(
    ...     KernelPerceptron(gamma=0.05).fit(X, y), ax=display.ax_)
    >>> [line.get_label() for line in display.ax_.get_lines()]
    ['Forgetron', 'KernelPerceptron']
    """

    def __init__(self, *, rounds, mistake_rate, support_rounds=None, support_size=None,
                 estimator_name=None):
        self.rounds = rounds
        self.mistake_rate = mistake_rate
        self.support_rounds = support_rounds
        self.support_size = support_size
        self.estimator_name = estimator_name

    @classmethod
    def from_estimator(cls, estimator, *, name=None, ax=None, **kwargs):
        """Plot a fitted model's online record.

        Parameters
        ----------
        estimator : fitted classifier of skbudget
            The model (``fit`` or ``partial_fit`` called).  A
            meta-estimator keeps no record of its own: pass the model that
            holds it (``estimator_`` of
            :class:`~skbudget.parallel.ParameterMixingClassifier`,
            ``best_estimator_`` of a search, a pipeline's last step); the
            error raised for one names it.
        name : str, default=None
            Its legend name; the estimator's class name if None.
        ax : matplotlib Axes, default=None
            The axis to plot on (a display's ``ax_`` to add a model to its
            plot); a new figure if None.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for the mistake
            rate (the support size gets its colour, dashed).

        Returns
        -------
        display : OnlineRecordDisplay
            The plotted display.

        Raises
        ------
        AttributeError
            For an estimator without an online record (``mistake_curve_``),
            naming it and, when it holds fitted
            models that have one, where they are.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        check_is_fitted(estimator)
        _check_has_record(estimator)
        mistakes = np.asarray(estimator.mistake_curve_, dtype=np.float64)
        support = (np.asarray(estimator.support_curve_) if hasattr(estimator, "support_curve_")
                   else np.full((0, 2), None))
        display = cls(rounds=mistakes[:, 0], mistake_rate=mistakes[:, 1] / mistakes[:, 0],
                      support_rounds=support[:, 0] if support.size else None,
                      support_size=support[:, 1] if support.size else None,
                      estimator_name=type(estimator).__name__ if name is None else name)
        return display.plot(ax=ax, **kwargs)

    def plot(self, ax=None, *, name=None, **kwargs):
        """Plot the curves.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            The axis to plot on (a display's ``ax_`` to share it); a new
            figure if None.
        name : str, default=None
            The legend name, overriding ``estimator_name``.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for the mistake
            rate (the support size gets its colour, dashed).

        Returns
        -------
        display : OnlineRecordDisplay
            ``self``, with the plot's objects stored.
        """
        check_matplotlib_support(f"{type(self).__name__}.plot")
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        name = self.estimator_name if name is None else name
        support_ax = next((other for other in ax.figure.axes
                           if other.get_label() == _SUPPORT_AXIS_LABEL
                           and ax in other.get_shared_x_axes().get_siblings(other)), None)
        if support_ax is None:
            support_ax = ax.twinx()
            support_ax.set_label(_SUPPORT_AXIS_LABEL)
            # the mistake rate's axis (and its legend) in front of the twin
            ax.set_zorder(support_ax.get_zorder() + 1)
            ax.patch.set_visible(False)
            support_ax.set_ylabel("support vectors (dashed)")
            ax.set_xlabel("rounds")
            ax.set_ylabel("cumulative mistake rate")
        line_kwargs = {"label": name} if name is not None else {}
        (self.line_,) = ax.plot(self.rounds, self.mistake_rate, **{**line_kwargs, **kwargs})
        self.support_line_ = None
        if self.support_rounds is not None:
            # few points (a short stream, an earlier version's file): mark them
            marker = "o" if len(self.support_rounds) < _FEW_POINTS else None
            (self.support_line_,) = support_ax.plot(self.support_rounds, self.support_size,
                                                    linestyle="--", marker=marker,
                                                    color=self.line_.get_color())
        ax.set_ylim(bottom=0)
        support_ax.set_ylim(bottom=0)
        if name is not None:
            ax.legend(loc="best")
        self.ax_, self.support_ax_, self.figure_ = ax, support_ax, ax.figure
        return self
