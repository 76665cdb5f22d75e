"""skbudget's classifiers as `river <https://riverml.xyz>`_ classifiers
(``pip install skbudget[river]``).

:class:`RiverClassifier` wraps any skbudget classifier so that it learns
from, and predicts, one example at a time as a dict of features: it works
in :class:`river.compose.Pipeline`, :func:`river.evaluate.progressive_val_score`
and with river's metrics, and passes :func:`river.checks.check_estimator`.
"""

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import clone

try:
    from river import base
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("skbudget.river needs the optional package river: "
                      "pip install skbudget[river]") from exc

__all__ = ["RiverClassifier"]

_UNKNOWN_FEATURES = ("raise", "ignore")
# the parameters of the predicting methods, as their docstrings give them
_QUERY_PARAMETERS = """x : dict
            The features, ``{name: number}``.
        **kwargs
            Ignored (river's signature)."""


def _sorted_keys(keys):
    """The feature names in a fixed order whatever the dict's: sorted, or
    sorted by ``repr`` when they are not comparable (e.g. ints and strs)."""
    try:
        return tuple(sorted(keys))
    except TypeError:
        return tuple(sorted(keys, key=repr))


class RiverClassifier(base.Classifier):
    """A skbudget classifier as a river classifier, learning one dict at a time.

    ``learn_one(x, y)`` feeds the example to the wrapped estimator's
    ``partial_fit``; ``predict_one(x)`` is its ``predict`` and
    ``predict_proba_one(x)`` a squashing of its ``decision_function``
    (see below).  The estimator given is never changed: the adapter trains
    a clone of it, ``estimator_``, made at the first ``learn_one``.

    **Features.** A dict's keys map to the columns of a fixed feature
    order: ``features`` if given, else the keys of the first example
    learned, sorted.  A key missing from a dict is a 0 (river's sparse
    convention).  A key outside the order raises a :class:`ValueError` by
    default (``unknown_features='raise'``: a kernel model cannot grow a
    column); ``unknown_features='ignore'`` drops it.  Values must be
    finite numbers.

    **Mini-batches.** ``learn_one`` copies the example into a buffer of
    ``batch_size`` rows and calls ``partial_fit`` once the buffer is full,
    or before anything reads the model (``predict_one``,
    ``predict_proba_one``, ``estimator_``).  The model is the same, bit for
    bit, as that of one ``partial_fit`` per example: the estimators give
    the same model whatever the sizes of the pieces of a stream.  (One
    exception: ``gamma='scale'`` is resolved from the first call's rows,
    here the first batch; give ``gamma`` a number, as streaming calls for.)
    Labels and feature values are checked by ``learn_one`` itself, so a
    bad example raises there, not at a later prediction.

    **Labels.** The estimator learns the positions of the labels in
    ``classes`` (``0, 1, ...``: its ``classes_``), so labels may be any
    hashable values, of mixed types too; a binary model's positive class is
    ``classes[1]``.

    **Scores, not probabilities.** The budget perceptrons learn a score,
    not a probability. ``predict_proba_one`` returns the logistic function
    of the binary score (``{classes[0]: expit(-f(x)), classes[1]:
    expit(f(x))}``) or the softmax of the class scores: a valid
    distribution whose arg-max is ``predict_one``'s class and whose order
    follows the scores (what ROC AUC needs), but whose values are **not
    calibrated**: the scores' scale depends on the kernel, the budget and
    the update rule, not on the odds of the classes.  Metrics that read
    probabilities as such (log loss, cross-entropy) do not measure these
    models meaningfully.  Before the first example is learned the model
    is the zero function: uniform "probabilities" and ``classes[0]``.

    Parameters
    ----------
    estimator : classifier of skbudget
        The estimator to train (it is cloned, never changed).
    classes : list
        Every label the stream will contain (at least two, each once), in
        the order of the estimator's classes: ``classes[1]`` is a binary
        model's positive class.
    features : tuple or list, default=None
        The feature names, in the order of the estimator's columns.
        ``None``: the keys of the first example learned, sorted (by
        ``repr`` if they are not comparable).
    unknown_features : {'raise', 'ignore'}, default='raise'
        What a key outside the feature order does: raise a
        :class:`ValueError`, or be ignored.
    batch_size : int, default=32
        Examples ``learn_one`` collects before it calls ``partial_fit``.
        The model does not depend on it.

    Attributes
    ----------
    estimator_ : classifier of skbudget
        The trained clone of ``estimator`` (``None`` before the first
        ``learn_one``).
    features_ : tuple
        The feature order (``None`` before it is fixed).

    See Also
    --------
    river.compat.SKL2RiverClassifier : River's adapter of scikit-learn
        classifiers, with the same ``classes`` parameter.

    Examples
    --------
    >>> from river import datasets, evaluate, metrics, preprocessing
    >>> from skbudget import Forgetron
    >>> from skbudget.river import RiverClassifier
    >>> model = preprocessing.StandardScaler() | RiverClassifier(
    ...     Forgetron(budget=50, gamma=0.1), classes=[False, True])
    >>> evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    Accuracy: 80.64%
    """

    def __init__(self, estimator, classes, features=None, unknown_features="raise",
                 batch_size=32):
        self.estimator = estimator
        self.classes = classes
        self.features = features
        self.unknown_features = unknown_features
        self.batch_size = batch_size
        self._check_params()
        self._estimator = None
        self._features = None if features is None else tuple(features)
        self._index = None if features is None else self._feature_index(self._features)
        self._buffer = None
        self._labels = []

    def _check_params(self):
        if not (hasattr(self.estimator, "partial_fit")
                and hasattr(self.estimator, "decision_function")):
            raise TypeError(f"estimator must be a skbudget classifier (with partial_fit and "
                            f"decision_function); got {self.estimator!r}")
        try:
            labels = list(self.classes)
            index = {label: position for position, label in enumerate(labels)}
        except TypeError as exc:
            raise TypeError(f"classes must be a list of hashable labels; got "
                            f"{self.classes!r}") from exc
        if len(labels) < 2 or len(index) != len(labels):
            raise ValueError(f"classes must hold at least two distinct labels, each once; got "
                             f"{self.classes!r}")
        self._class_labels, self._class_index = labels, index
        if self.unknown_features not in _UNKNOWN_FEATURES:
            raise ValueError(f"unknown_features must be one of {_UNKNOWN_FEATURES}; got "
                             f"{self.unknown_features!r}")
        if (isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int)
                or self.batch_size < 1):
            raise ValueError(f"batch_size must be an int >= 1; got {self.batch_size!r}")

    @staticmethod
    def _feature_index(features):
        index = {name: column for column, name in enumerate(features)}
        if len(index) != len(features):
            raise ValueError(f"features must name each feature once; got {features!r}")
        return index

    @property
    def _multiclass(self):
        return len(self._class_labels) > 2

    @property
    def estimator_(self):
        self._flush()
        return self._estimator

    @property
    def features_(self):
        return self._features

    # ------------------------------------------------------------------
    # dicts to rows
    # ------------------------------------------------------------------
    def _fill(self, row, x):
        """Write the features of dict ``x`` into ``row`` (zeros first),
        columns by the feature order; raise on an unknown key (with
        ``unknown_features='raise'``) or a value that is not a finite number."""
        row[:] = 0.0
        index = self._index
        for name, value in x.items():
            column = index.get(name)
            if column is None:
                if self.unknown_features == "raise":
                    raise ValueError(
                        f"feature {name!r} is not one of the {len(index)} features the model "
                        f"was started with ({list(index)[:10]}{'...' if len(index) > 10 else ''}"
                        f"); a kernel model cannot add a column. Pass every feature name in "
                        f"features=..., or unknown_features='ignore' to drop unknown ones.")
                continue
            try:
                row[column] = value
            except (TypeError, ValueError) as exc:
                raise ValueError(f"feature {name!r} has the value {value!r}, which is not a "
                                 f"number") from exc
        if not np.isfinite(row).all():
            name = self._features[int(np.flatnonzero(~np.isfinite(row))[0])]
            raise ValueError(f"feature {name!r} has the value {x[name]!r}: values must be "
                             f"finite numbers")
        return row

    def _query_row(self, x):
        """``x`` as a (1, n_features) row for prediction."""
        row = np.empty((1, len(self._features)))
        self._fill(row[0], x)
        return row

    # ------------------------------------------------------------------
    # river's API
    # ------------------------------------------------------------------
    def learn_one(self, x, y):
        """Learn one example.

        Parameters
        ----------
        x : dict
            The features, ``{name: number}``.
        y : label
            Its class, one of ``classes``.

        Returns
        -------
        None
            River's convention: the model changes in place.
        """
        label = self._class_index.get(y)
        if label is None:
            raise ValueError(f"y={y!r} is not one of classes {self.classes!r}")
        if self._features is None:
            self._features = _sorted_keys(x)
            self._index = self._feature_index(self._features)
        if self._buffer is None:
            self._buffer = np.zeros((self.batch_size, len(self._features)))
        n = len(self._labels)
        self._fill(self._buffer[n], x)       # a bad example leaves the buffer as it was
        self._labels.append(label)
        if len(self._labels) == self.batch_size:
            self._flush()

    def _flush(self):
        """``partial_fit`` on the buffered examples (if any).  If it raises
        (the model is then left as it was) the examples are dropped."""
        if not self._labels:
            return
        X, y = self._buffer[:len(self._labels)], np.asarray(self._labels, dtype=np.intp)
        self._labels = []
        if self._estimator is None:
            self._estimator = clone(self.estimator)
        self._estimator.partial_fit(X, y, classes=np.arange(len(self._class_labels)))

    def _scores(self, x):
        """The estimator's scores of ``x`` (one per class, or the binary
        score), or None before anything was learned."""
        self._flush()
        if self._estimator is None:
            return None
        return self._estimator.decision_function(self._query_row(x))[0]

    def predict_proba_one(self, x, **kwargs):
        """Squash the scores into a distribution over the classes (not
        calibrated probabilities).

        Parameters
        ----------
        {parameters}

        Returns
        -------
        proba : dict
            ``{label: value}`` for every class: ``expit`` of the binary
            score (``expit(-score)`` for ``classes[0]``), or the softmax of
            the class scores; uniform before anything was learned.
        """
        scores = self._scores(x)
        labels = self._class_labels
        if scores is None:
            return {label: 1.0 / len(labels) for label in labels}
        if np.ndim(scores) == 0:
            return {labels[0]: float(expit(-scores)), labels[1]: float(expit(scores))}
        return dict(zip(labels, softmax(scores).tolist()))

    predict_proba_one.__doc__ = predict_proba_one.__doc__.replace("{parameters}", _QUERY_PARAMETERS)

    def predict_one(self, x, **kwargs):
        """The predicted class: the estimator's ``predict``.

        Parameters
        ----------
        {parameters}

        Returns
        -------
        label
            The class (``classes[0]`` before anything was learned: the zero
            function's prediction).
        """
        scores = self._scores(x)
        labels = self._class_labels
        if scores is None:
            return labels[0]
        if np.ndim(scores) == 0:
            return labels[int(scores > 0)]
        return labels[int(np.argmax(scores))]

    predict_one.__doc__ = predict_one.__doc__.replace("{parameters}", _QUERY_PARAMETERS)

    # ------------------------------------------------------------------
    # river's test hooks
    # ------------------------------------------------------------------
    @classmethod
    def _unit_test_params(cls):
        from skbudget import Forgetron

        yield {"estimator": Forgetron(budget=50, gamma=0.1), "classes": [False, True]}

    def _unit_test_skips(self):
        # a new feature raises by design (unknown_features='raise')
        return {"check_emerging_features"} if self.unknown_features == "raise" else set()

