"""Projectron and Projectron++: bounded support sets by projection."""

import numbers

from sklearn.utils._param_validation import Interval

from skbudget._base import BaseOnlineKernelClassifier
from skbudget._projectron_fast import ProjectronLearner, ProjectronPlusPlusLearner

__all__ = ["Projectron", "ProjectronPlusPlus"]

_PARAMETERS = """
    Parameters
    ----------
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'laplacian', ...} or callable, default='rbf'
        Any kernel :func:`sklearn.metrics.pairwise.pairwise_kernels` accepts.
        It should be positive definite: a vector is only added when its
        distance to the span of the support set is positive, so with an
        indefinite kernel (e.g. some 'sigmoid' settings) the support set
        stays small.
    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient for 'rbf', 'poly', 'sigmoid', 'laplacian' and
        'chi2', resolved as in :class:`sklearn.svm.SVC`.  The papers' RBF
        ``exp(-||x - x'||² / (2 σ²))`` is ``gamma = 1 / (2 σ²)``.
    degree : int, default=3
        Degree of the 'poly' kernel.
    coef0 : float, default=0.0
        Independent term of the 'poly' and 'sigmoid' kernels.
    kernel_params : dict, default=None
        Extra parameters for the kernel (a callable kernel gets only these).
    eta : float >= 0, default=0.1
        Projection threshold: on a mistake, ``k(x_t, .)`` is projected onto
        the span of the support set when its distance to it, ``||delta||``
        (a norm in the feature space, unsquared), is at most ``eta``;
        otherwise ``x_t`` is added.  Larger values give sparser models;
        ``eta=0`` is the kernel perceptron (a point exactly in the span,
        ``delta² <= 1e-12 k(x_t, x_t)``, is still projected, which changes no
        prediction).  ``||delta|| <= sqrt(k(x_t, x_t))``, so ``eta`` is in
        the units of ``sqrt(k(x, x))``: 1 for the RBF kernel (where
        ``eta >= 1`` never adds after the first vector); rescale it for
        kernels with other self-similarities (linear, polynomial).
    budget : int or None, default=None
        Optional hard cap on the support-set size: once it holds ``budget``
        vectors, every further update is a projection (nothing is added, and
        nothing is ever removed).  None: no cap (the support set still stays
        finite on a bounded domain when ``eta > 0``).
    max_iter : int, default=1
        Epochs over the training data in :meth:`fit` (the algorithm is
        online: the paper makes a single pass).
    shuffle : bool, default=True
        Shuffle the training data before each epoch.
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffling (the update rule itself draws nothing).
    warm_start : bool, default=False
        Continue from the current model on :meth:`fit`.
    verbose : int, default=0
        Print the examples seen, mistakes and support-set size per epoch.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    support_vectors_ : ndarray or sparse matrix of shape (n_SV, n_features)
        The support vectors, learner by learner, oldest first.
    dual_coef_ : ndarray of shape (n_learners, n_SV)
        Their signed coefficients ``alpha_i`` (zeros outside each learner's
        own block).
    intercept_ : ndarray of shape (n_learners,)
        Always 0 (the model has no bias).
    n_support_ : ndarray of shape (n_learners,)
        Support vectors per learner (one learner for two classes).
    n_mistakes_ : int
        Training rounds with ``y_t f(x_t) <= 0`` (multi-class: the true
        class's score not strictly the largest), over all epochs.
    n_updates_ : int
        Rounds whose update rule fired (additions, projections{pp_updates}),
        summed over the learners.
    cumulative_mistakes_ : ndarray of shape (n_rounds,)
        Mistakes up to and including each training round.
    n_iter_ : int
        Epochs run by the last :meth:`fit`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    {see_also}

    Notes
    -----
    The model keeps the Cholesky factor of the support-set Gram matrix,
    grown by one row per added vector: O(|S|²) time per update (a mistake
    or margin error; other rounds cost O(|S|)), O(|S|²/2) memory per
    learner.  Multi-class problems are one-vs-rest: each class has its own
    support set.

    References
    ----------
    F. Orabona, J. Keshet and B. Caputo, "The Projectron: a Bounded
    Kernel-Based Perceptron", ICML 2008.

    F. Orabona, J. Keshet and B. Caputo, "Bounded Kernel-Based Online
    Learning", Journal of Machine Learning Research 10, 2643-2666, 2009.
"""


def _example(name):
    return f"""
    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skbudget import {name}
    >>> X, y = make_moons(500, noise=0.1, random_state=0)
    >>> clf = {name}(eta=0.3, gamma=2.0, max_iter=3, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.9), bool(clf.n_support_[0] < 100)
    (True, True)
"""


class Projectron(BaseOnlineKernelClassifier):
    __doc__ = """Projectron: a kernel perceptron whose support set stays bounded
    by projecting instead of adding.

    On a mistake (``y_t f(x_t) <= 0``) the Projectron computes the
    projection of ``k(x_t, .)`` onto the span of the support set ``S``,
    ``d = K^-1 k_t``, and its distance ``||delta||`` to that span.  If
    ``||delta|| <= eta`` the coefficients become ``alpha_i += y_t d_i``
    (``S`` unchanged); otherwise ``x_t`` is added with ``alpha = y_t``.  The
    first mistake always adds.  On a bounded input domain the support set is
    finite for every ``eta > 0``, but its size is not fixed in advance: use
    ``eta`` (or the optional hard cap ``budget``) to trade accuracy for
    sparsity.
""" + _PARAMETERS.replace("{pp_updates}", "").replace(
    "{see_also}", "ProjectronPlusPlus : also updates, by projection only, on margin errors.") \
        + _example("Projectron")

    _learner_class = ProjectronLearner

    _parameter_constraints: dict = {
        **BaseOnlineKernelClassifier._parameter_constraints,
        "eta": [Interval(numbers.Real, 0.0, None, closed="left")],
        "budget": [Interval(numbers.Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        *,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        kernel_params=None,
        eta=0.1,
        budget=None,
        max_iter=1,
        shuffle=True,
        random_state=None,
        warm_start=False,
        verbose=0,
    ):
        super().__init__(
            kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
            kernel_params=kernel_params, max_iter=max_iter, shuffle=shuffle,
            random_state=random_state, warm_start=warm_start, verbose=verbose,
        )
        self.eta = eta
        self.budget = budget

    def _make_learner(self, rng):
        return self._learner_class(
            eta=float(self.eta), budget=-1 if self.budget is None else int(self.budget)
        )


class ProjectronPlusPlus(Projectron):
    __doc__ = """Projectron++: the Projectron plus projected updates on margin
    errors.

    Mistakes are handled as by :class:`Projectron`.  In addition, on a
    margin error (``0 < y_t f(x_t) < 1``, hinge loss ``l = 1 - y_t f(x_t)``)
    the hypothesis moves along the projection ``P k(x_t, .)``, never adding
    a support vector: with ``||P k_t||² = k_tᵀ K^-1 k_t > 0`` and
    ``l >= ||delta|| / eta``, ``alpha_i += y_t tau d_i`` with
    ``tau = min(l / ||P k_t||², 2 (l - ||delta|| / eta) / ||P k_t||², 1)``
    (the form of the journal version, which shrinks ``tau`` to keep the
    progress of the mistake bound non-negative).  With ``eta = 0`` only
    points exactly in the span (``||delta|| = 0``) get a margin update.
""" + _PARAMETERS.replace("{pp_updates}", ", margin updates").replace(
    "{see_also}", "Projectron : the same rule on mistakes only.") + _example("ProjectronPlusPlus")

    _learner_class = ProjectronPlusPlusLearner
