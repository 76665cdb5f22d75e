"""Example weights: ``sample_weight`` and ``class_weight``.

:class:`ExampleWeightsMixin` gives an estimator ``sample_weight`` in ``fit``
and ``partial_fit`` and the ``class_weight`` parameter, for the update
rules that minimize a loss the weight can scale (BSGD's step
``eta_t w``, PA-I's and BPA's cap ``C w``).  The perceptron-style rules take neither.
"""

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import _check_sample_weight

from skbudget._docstrings import fit_doc, partial_fit_doc

__all__ = ["CLASS_WEIGHT_CONSTRAINT", "ExampleWeightsMixin"]

# the constraint of the class_weight parameter (as SGDClassifier's)
CLASS_WEIGHT_CONSTRAINT = [StrOptions({"balanced"}), dict, None]

# scikit-learn's error for class_weight='balanced' in partial_fit (SGDClassifier)
_BALANCED_PARTIAL_FIT = (
    "class_weight '{0}' is not supported for "
    "partial_fit. In order to use 'balanced' weights,"
    " use compute_class_weight('{0}', "
    "classes=classes, y=y). "
    "In place of y you can use a large enough sample "
    "of the full training set target to properly "
    "estimate the class frequency distributions. "
    "Pass the resulting weights as the class_weight "
    "parameter."
)


def _learner_weights(sample_weight, class_weight, rows, index):
    """The weights of the examples ``rows`` whose classes are ``index``
    (positions in ``classes_``): ``sample_weight[rows]`` (None: 1) times
    the ``class_weight`` (one value per class) of each example's class,
    the same for every learner."""
    weights = class_weight[index]
    if sample_weight is not None:
        weights = weights * sample_weight[rows]
    return weights


class ExampleWeightsMixin:
    """``sample_weight`` in ``fit`` / ``partial_fit`` and the ``class_weight``
    parameter.  Put it before
    :class:`~skbudget._base.BaseKernelExpansionClassifier` among the bases; the
    estimator adds ``class_weight`` to its ``__init__`` and
    ``CLASS_WEIGHT_CONSTRAINT`` to its constraints."""

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        return self._atomic_fit(X, y, sample_weight)

    fit.__doc__ = fit_doc(weighted=True)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        if isinstance(self.class_weight, str):   # 'balanced'
            raise ValueError(_BALANCED_PARTIAL_FIT.format(self.class_weight))
        return self._atomic_partial_fit(X, y, classes, sample_weight)

    partial_fit.__doc__ = partial_fit_doc(weighted=True)

    def _example_weights(self, X, y, sample_weight):
        """The weights of the call's examples, as ``StreamDriver.run``
        takes them: None without ``sample_weight`` and ``class_weight`` (or
        when every weight is 1), else a function of (rows, their labels)
        giving their weights, the same for every learner.

        An example's weight is its ``sample_weight`` times the
        ``class_weight`` of its class ('balanced': ``n_samples / (n_classes
        * np.bincount(y))`` of this call's ``y``, as in scikit-learn), and
        it scales the example's loss in every learner (one-vs-rest too, as
        ``SVC``'s ``class_weight`` scales ``C`` per class; scikit-learn's
        ``SGDClassifier`` weighs only the positive examples of each
        one-vs-rest learner)."""
        if sample_weight is None and self.class_weight is None:
            return None
        per_class = np.asarray(
            compute_class_weight(self.class_weight, classes=self.classes_, y=y),
            dtype=np.float64)
        if not (np.all(np.isfinite(per_class)) and np.all(per_class >= 0)):
            raise ValueError(f"class_weight must give every class a finite weight >= 0; got "
                             f"{dict(zip(self.classes_.tolist(), per_class.tolist()))}")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                                 ensure_non_negative=True)
            if np.all(sample_weight == 1.0):
                sample_weight = None
        if sample_weight is None and np.all(per_class == 1.0):
            return None
        classes = self.classes_
        return lambda rows, y: _learner_weights(sample_weight, per_class, rows,
                                                np.searchsorted(classes, y))
