"""skbudget's classifiers as `river <https://riverml.xyz>`_ classifiers
(``pip install skbudget[river]``).

:class:`RiverClassifier` wraps any skbudget classifier so that it learns
from, and predicts, one example at a time as a dict of features: it works
in :class:`river.compose.Pipeline`, :func:`river.evaluate.progressive_val_score`
and with river's metrics, and passes :func:`river.checks.check_estimator`.
"""

import math
import numbers

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
# the types of a feature's value: real numbers (Python's bool is an int;
# NumPy's bool is no numbers.Real but is a number to NumPy and scikit-learn)
_NUMBER_TYPES = (numbers.Real, np.bool_)
# the commonest of them, told by a set lookup (an isinstance of the ABC
# numbers.Real costs several times more)
_PLAIN_NUMBER_TYPES = frozenset({float, int, bool, np.float64, np.float32, np.int64})


def _sorted_keys(keys):
    """The feature names in a fixed order whatever the dict's: sorted, or
    sorted by ``repr`` when they are not comparable (e.g. ints and strs)."""
    try:
        return tuple(sorted(keys))
    except TypeError:
        return tuple(sorted(keys, key=repr))


def _feature_value(name, value):
    """``value``, the value of feature ``name``, as a float, or a
    ValueError naming the feature: a real number (int, float, bool,
    NumPy's, ``Fraction``), not a string, even a numeric one such as
    ``"1.5"``, and finite as a float64 (``partial_fit`` refuses NaN and
    infinity, an int beyond the float64 range included)."""
    if type(value) not in _PLAIN_NUMBER_TYPES and not isinstance(value, _NUMBER_TYPES):
        raise ValueError(
            f"feature {name!r} has the value {value!r} (a {type(value).__name__}), which is "
            f"not a number: feature values must be real numbers (int, float, bool or "
            f"NumPy's); convert other values first (e.g. float() on numeric strings, an "
            f"encoder on categories).")
    try:
        number = float(value)
    except OverflowError:       # an int beyond the float64 range
        number = math.inf
    if not math.isfinite(number):
        raise ValueError(f"feature {name!r} has the value {value!r}: feature values must be "
                         f"finite numbers (as float64)")
    return number


class RiverClassifier(base.Classifier):
    """A skbudget classifier as a river classifier, learning one dict at a time.

    ``learn_one(x, y)`` feeds the example to the wrapped estimator's
    ``partial_fit``; ``predict_one(x)`` is its ``predict`` and
    ``predict_proba_one(x)`` a squashing of its ``decision_function``
    (see below).  The estimator given is never changed: the adapter trains
    a clone of it, ``estimator_``, started by the first example learned.

    **Features.** A dict's keys map to the columns of a fixed feature
    order: ``features`` if given, else the keys, sorted, of the first
    example learned that has any (an example ``learn_one`` refuses fixes
    nothing; a first example without features is refused, as there is no
    order to learn it in: pass ``features`` to learn such examples
    first).  A key missing from a dict is a 0 (river's sparse
    convention).  A key outside the order raises a :class:`ValueError` by
    default (``unknown_features='raise'``: a kernel model cannot grow a
    column); ``unknown_features='ignore'`` drops it.  Values must be real
    numbers (int, float, bool, NumPy's), finite: a string, even a numeric
    one such as ``"1.5"``, ``None`` or a complex number is refused with a
    :class:`ValueError` naming the feature, by ``learn_one``,
    ``predict_one`` and ``predict_proba_one`` alike.

    **A bad example raises at learn_one, and nothing else is lost.**
    ``learn_one`` refuses, before it keeps the example, whatever
    ``partial_fit`` refuses for that example whatever the model has
    learned: a label outside ``classes``, an unknown key, a value that is
    not a finite number, or a row the kernel cannot take (e.g. an 'rbf'
    row whose squared norm overflows, such as a value of ``1e200``): the
    estimator's own checks of a row, run on it.  When they refuse it,
    ``partial_fit`` itself has the last word: the buffered examples are
    learned, then ``partial_fit`` on the example raises its own error
    (the model left as it was).  The first example is learned at once
    (its ``partial_fit`` starts the model; if it refuses the example,
    nothing changes).  A refused example is not kept, and leaves the
    feature order and the model as they were.

    **Mini-batches.** Later examples are copied into a buffer of
    ``batch_size`` rows, learned by one ``partial_fit`` once the buffer is
    full, or before anything reads the model (``predict_one``,
    ``predict_proba_one``, ``estimator_``).  The model is the same, bit for
    bit, as that of one ``partial_fit`` per example, with ``gamma='scale'``
    too (resolved from the first example, as one ``partial_fit`` per
    example resolves it; give ``gamma`` a number, as streaming calls for):
    the estimators give the same model whatever the sizes of the pieces of
    a stream.  ``partial_fit`` is atomic: if it raises (an interrupt, a
    ``MemoryError``), the model is as it was, the examples stay buffered
    for the next attempt, and the error propagates.  A refusal that
    depends on what the model has learned (an overflow of the scores or of
    a kernel value between the example and a support vector: rare, with
    values near the floating-point limit) cannot be seen by ``learn_one``:
    the buffered examples are then learned one ``partial_fit`` each up to
    the one refused, which is dropped and whose error propagates (saying
    which example it was), the later ones staying buffered; the model is
    then that of one ``partial_fit`` per example, the refused one
    skipped.

    **Labels.** The estimator learns the positions of the labels in
    ``classes`` (``0, 1, ...``: its ``classes_``), so labels may be any
    hashable values, of mixed types too; a binary model's positive class is
    ``classes[1]``.  An estimator in its shared multi-class mode
    (``multi_class='crammer_singer'``, BSGD, MIRA) needs no ``classes``:
    with ``classes=None`` the labels take positions in the order they are
    first learned, and a label first seen late gets a class of its own
    (the estimator's ``partial_fit`` without ``classes=``, the user guide's
    "Multi-class models"); until the model has seen two labels it predicts
    the one it has seen.

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
    classes : list or None, default=None
        Every label the stream will contain (at least two, each once), in
        the order of the estimator's classes: ``classes[1]`` is a binary
        model's positive class.  Required unless the estimator learns the
        classes as they come (its shared multi-class mode); None there: the
        labels in the order they are first learned.
    features : tuple or list, default=None
        The feature names, in the order of the estimator's columns.
        ``None``: the keys of the first example learned that has any,
        sorted (by ``repr`` if they are not comparable).
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
        example is learned).
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

    def __init__(self, estimator, classes=None, features=None, unknown_features="raise",
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
        self._n_accepted = 0        # examples learn_one accepted (learned or buffered)

    def _check_params(self):
        if not all(hasattr(self.estimator, method) for method in
                   ("partial_fit", "decision_function", "_check_learnable_rows")):
            raise TypeError(f"estimator must be an online skbudget classifier (one with "
                            f"partial_fit, not a meta-estimator); got {self.estimator!r}")
        if self.classes is None:
            if not self.estimator._learns_open_label_sets():
                raise ValueError(
                    f"classes is required for {type(self.estimator).__name__} as configured: "
                    f"its one-vs-rest learners need every class up front (an estimator in its "
                    f"shared multi-class mode, multi_class='crammer_singer', learns the "
                    f"classes as they come)")
            self._class_labels, self._class_index = [], {}
        else:
            try:
                labels = list(self.classes)
                index = {label: position for position, label in enumerate(labels)}
            except TypeError as exc:
                raise TypeError(f"classes must be a list of hashable labels; got "
                                f"{self.classes!r}") from exc
            if len(labels) < 2 or len(index) != len(labels):
                raise ValueError(f"classes must hold at least two distinct labels, each once; "
                                 f"got {self.classes!r}")
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
        """river's flag of a classifier that predicts more than two classes
        (its checks read it): three or more ``classes``, or a label set
        learned as it comes."""
        return self.classes is None or len(self._class_labels) > 2

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
    def _fill(self, row, x, index):
        """Write the features of dict ``x`` into ``row`` (zeros first),
        columns by the feature order ``index`` (name -> column); raise on
        an unknown key (with ``unknown_features='raise'``) or a value that
        is not a finite real number (:func:`_feature_value`)."""
        row[:] = 0.0
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
            row[column] = _feature_value(name, value)
        return row

    def _query_row(self, x):
        """``x`` as a (1, n_features) row for prediction (None before the
        feature order is fixed: its values are checked then)."""
        if self._index is None:
            for name, value in x.items():
                _feature_value(name, value)
            return None
        row = np.empty((1, len(self._features)))
        self._fill(row[0], x, self._index)
        return row

    # ------------------------------------------------------------------
    # river's API
    # ------------------------------------------------------------------
    def learn_one(self, x, y):
        """Learn one example, or raise (leaving the adapter as it was) if
        ``partial_fit`` would refuse it.

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
        label = self._label_position(y)
        if self._estimator is None:
            self._start(x, label)
            self._keep_label(y, label)
            return
        if len(self._labels) == self.batch_size:   # a flush failed: try it again first
            self._flush()
        n = len(self._labels)
        row = self._buffer[n:n + 1]
        self._fill(row[0], x, self._index)
        try:
            self._estimator._check_learnable_rows(row)     # partial_fit's own checks of a row
        except ValueError:
            self._learn_refused(row.copy(), label)
            self._keep_label(y, label)
            return
        self._keep_label(y, label)
        self._labels.append(label)
        self._n_accepted += 1
        if len(self._labels) == self.batch_size:
            self._flush()

    def _label_position(self, y):
        """The position ``y`` is learned as: its place in ``classes``, or,
        with ``classes=None``, the next position for a label not seen yet
        (kept by :meth:`_keep_label` once the example is learned or
        buffered)."""
        label = self._class_index.get(y)
        if label is not None:
            return label
        if self.classes is not None:
            raise ValueError(f"y={y!r} is not one of classes {self.classes!r}")
        try:
            hash(y)
        except TypeError as exc:
            raise TypeError(f"a label must be hashable; got y={y!r}") from exc
        return len(self._class_labels)

    def _keep_label(self, y, label):
        """Keep a new label's position, once its example is accepted."""
        if label == len(self._class_labels):
            self._class_labels.append(y)
            self._class_index[y] = label

    def _learn_refused(self, row, label):
        """An example the estimator's checks refuse: ``partial_fit`` has
        the last word, after the buffered examples are learned (stream
        order).  It refuses the example (the model left as it was) with
        its own error, the message of the check it runs first, which may
        depend on the model (a kernel value between the example and a
        support vector, say, before the example's own); if it ever
        accepted it, the example would be learned."""
        self._flush()
        self._estimator.partial_fit(row, np.array([label]))
        self._n_accepted += 1

    def _start(self, x, label):
        """Learn the first example by a ``partial_fit`` of its own (which
        starts the model), and fix the feature order (``features``, else
        the example's keys, sorted) if the estimator accepts it."""
        features, index = self._features, self._index
        if features is None:
            if not x:
                raise ValueError(
                    "the first example learned fixes the feature order (its keys, sorted), "
                    "and this one has no features; pass features=[...] to learn examples "
                    "without features before others.")
            features = _sorted_keys(x)
            index = self._feature_index(features)
        row = np.empty((1, len(features)))
        self._fill(row[0], x, index)
        estimator = clone(self.estimator)
        classes = None if self.classes is None else np.arange(len(self._class_labels))
        estimator.partial_fit(row, np.array([label]), classes=classes)
        self._estimator, self._features, self._index = estimator, features, index
        self._buffer = np.empty((self.batch_size, len(features)))
        self._n_accepted += 1

    def _flush(self):
        """``partial_fit`` on the buffered examples (if any), which are
        dropped from the buffer once learned.  ``partial_fit`` is atomic:
        if it raises, the model is as it was and the examples stay
        buffered; a refusal (a ValueError) that depends on the model's
        state is resolved example by example (:meth:`_learn_one_by_one`)."""
        n = len(self._labels)
        if not n:
            return
        try:
            self._estimator.partial_fit(self._buffer[:n], np.asarray(self._labels, dtype=np.intp))
        except ValueError:
            self._learn_one_by_one()
            return
        self._labels = []

    def _learn_one_by_one(self):
        """After ``partial_fit`` refused the buffered examples: learn them
        one ``partial_fit`` each (the same model, whatever the cut), up to
        the first one refused, which is dropped, and raise its error; the
        examples after it stay buffered (if none is refused, all are
        learned and nothing is raised).  If the checks ``learn_one`` ran
        now refuse them all (a parameter of ``estimator_`` changed since),
        nothing is learned nor dropped and that error propagates."""
        n, X, labels = len(self._labels), self._buffer, np.asarray(self._labels, dtype=np.intp)
        self._estimator._check_learnable_rows(X[:n])
        done = 0
        try:
            for i in range(n):
                try:
                    self._estimator.partial_fit(X[i:i + 1], labels[i:i + 1])
                except ValueError as error:
                    done = i + 1                # learned, then the refused one dropped
                    position = self._n_accepted - n + i + 1
                    error.add_note(
                        f"(skbudget.river: partial_fit refused example {position} of those "
                        f"learn_one accepted, given what the model had learned; it is dropped. "
                        f"The {i} buffered before it are learned, the {n - i - 1} after it "
                        f"stay buffered.)")
                    raise
                done = i + 1
        finally:
            rest = n - done
            X[:rest] = X[done:n].copy()
            self._labels = self._labels[done:]

    def _scores(self, x):
        """The estimator's scores of ``x`` (one per class, or the binary
        score), or None before anything was learned (``x``'s values are
        checked either way)."""
        row = self._query_row(x)
        if self._estimator is None:
            return None
        self._flush()
        return self._estimator.decision_function(row)[0]

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
            the class scores; uniform before anything was learned (empty
            with ``classes=None``), ``{label: 1.0}`` while only one label
            has been learned.
        """
        scores = self._scores(x)
        labels = self._class_labels
        if scores is None:
            return {label: 1.0 / len(labels) for label in labels}
        if len(self._estimator.classes_) == 1:
            return {labels[0]: 1.0}
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
            function's prediction; None with ``classes=None``, river's
            answer when no label is known).
        """
        scores = self._scores(x)
        labels = self._class_labels
        if scores is None:
            return labels[0] if labels else None
        if len(self._estimator.classes_) == 1:
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
        from skbudget import BudgetedSGDClassifier, Forgetron

        yield {"estimator": Forgetron(budget=50, gamma=0.1), "classes": [False, True]}
        yield {"estimator": BudgetedSGDClassifier(budget=50, gamma=0.1)}

    def _unit_test_skips(self):
        # a new feature raises by design (unknown_features='raise')
        return {"check_emerging_features"} if self.unknown_features == "raise" else set()

