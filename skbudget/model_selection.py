"""Sequential parameter search (Khardon & Wachman's "tau -> alpha")."""

from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.model_selection import GridSearchCV
from sklearn.utils import get_tags
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from skbudget._docstrings import samples_method_doc

__all__ = ["SequentialSearchCV"]


class SequentialSearchCV(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Grid search one parameter group at a time, keeping each best value.

    The cheap search of Khardon & Wachman (§3): first find the best ``tau``
    by cross-validation, then, with ``tau`` fixed, the best ``alpha_bound``
    (``tau -> alpha``) or ``lam`` (``tau -> lambda``).  Each stage is a
    :class:`~sklearn.model_selection.GridSearchCV` over one grid with the
    best values of the earlier stages set; the winner is refit on all of
    ``X``.  Wrapped in :func:`~sklearn.model_selection.cross_val_score` it
    gives the paper's double cross-validation.

    Parameters
    ----------
    estimator : classifier
        The estimator to tune.
    param_grids : list of dict
        One grid (as for ``GridSearchCV``) per stage, searched in order.
    scoring : str, callable or None, default=None
        As in ``GridSearchCV``.
    cv : int, cross-validation generator or iterable, default=None
        As in ``GridSearchCV``.
    n_jobs : int, default=None
        As in ``GridSearchCV``.

    Attributes
    ----------
    best_params_ : dict
        The values chosen, over all stages.
    best_estimator_ : estimator
        The estimator with ``best_params_``, refit on all the data.
    stage_results_ : list of dict
        ``cv_results_`` of each stage.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names
        (the stages and the refit get ``X`` as given, names included).

    References
    ----------
    R. Khardon and G. Wachman, "Noise Tolerant Variants of the Perceptron
    Algorithm", Journal of Machine Learning Research 8, 227-248, 2007.

    Examples
    --------
    >>> from sklearn.model_selection import cross_val_score
    >>> from skbudget import KernelPerceptron, SequentialSearchCV
    >>> from skbudget.datasets import make_khardon_wachman
    >>> X, y = make_khardon_wachman(200, n_features=10, noise=0.05, random_state=0)
    >>> search = SequentialSearchCV(
    ...     KernelPerceptron(kernel="linear", max_iter=5, random_state=0),
    ...     [{"tau": [0, 0.5]}, {"alpha_bound": [None, 5]}], cv=3)
    >>> cross_val_score(search, X, y, cv=3).shape
    (3,)
    """

    _parameter_constraints: dict = {
        "estimator": [object],
        "param_grids": [list],
        "scoring": [None, str, callable],
        "cv": ["cv_object"],
        "n_jobs": [None, int],
    }

    def __init__(self, estimator, param_grids, *, scoring=None, cv=None, n_jobs=None):
        self.estimator = estimator
        self.param_grids = param_grids
        self.scoring = scoring
        self.cv = cv
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Run the stages in order, then refit the best estimator.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : object
            The fitted search.
        """
        self._validate_params()
        # fail before any cross-validation fit on input no stage could use
        # (values are the estimator's business: a pipeline may impute NaN)
        _, y_checked = validate_data(self, X, y, accept_sparse=get_tags(self).input_tags.sparse,
                                     dtype=None, ensure_all_finite=False)
        check_classification_targets(y_checked)
        best = {}
        self.stage_results_ = []
        for grid in self.param_grids:
            search = GridSearchCV(
                clone(self.estimator).set_params(**best), grid, scoring=self.scoring,
                cv=self.cv, n_jobs=self.n_jobs, refit=False,
            ).fit(X, y)
            best.update(search.best_params_)
            self.stage_results_.append(search.cv_results_)
        self.best_params_ = best
        self.best_estimator_ = clone(self.estimator).set_params(**best).fit(X, y)
        self.classes_ = self.best_estimator_.classes_
        return self

    def predict(self, X):
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    predict.__doc__ = samples_method_doc(
        "Predict class labels with the best estimator.",
        "y_pred : ndarray of shape (n_samples,)\n            Predicted class labels.")

    def decision_function(self, X):
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    decision_function.__doc__ = samples_method_doc(
        "Compute the scores of the best estimator.",
        "scores : ndarray of shape (n_samples,) or (n_samples, n_classes)\n"
        "            The best estimator's ``decision_function``.")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = get_tags(self.estimator).input_tags.sparse
        return tags
