"""AMM and GAMM: the Adaptive Multi-hyperplane Machine, a linear model of a
few weight vectors per class (doc/algorithms.md#amm).

The model holds no kernel and stores no example: its one learner
(:class:`~skbudget._amm_fast.MultiHyperplaneLearner`, every class at once)
is fed the raw rows in feature mode (:class:`~skbudget._stream.RawFeatures`:
dense blocks, or CSR rows read in place, O(nnz) a round).  Prediction is
one matrix product per block of rows (BLAS), then the largest score of
each class's weights.
"""

import numpy as np

from skbudget._amm_fast import MultiHyperplaneLearner
from skbudget._base import BaseOnlineClassifier, LinearModelMixin
from skbudget._blas import single_threaded_blas
from skbudget._declaration import CannotAverage, Declaration, SharedMulticlass
from skbudget._docstrings import docstring, feature_record_doc, stream_doc
from skbudget._params import BUDGET, Integer, RealNumber, keep_params
from skbudget._stream import RawFeatures, StreamDriver

__all__ = ["AdaptiveMultiHyperplaneClassifier"]


def _largest_per_class(S, starts):
    """The largest of each class's columns of ``S`` (the columns of class
    ``i`` start at ``starts[i]``, every class has at least one)."""
    return np.maximum.reduceat(S, starts, axis=1)


class AdaptiveMultiHyperplaneClassifier(LinearModelMixin, BaseOnlineClassifier):
    __doc__ = docstring(
        """Adaptive Multi-hyperplane Machine (AMM), and its growing variant GAMM.

    A linear model, natively multi-class: each class ``i`` holds a few
    weight vectors ``w_ij`` (at most ``budget``, oldest first) and scores
    ``g(i, x) = max_j w_ij . [x, s]``; the prediction is the class of the
    largest score.  The model is piecewise linear: it separates classes
    that no single hyperplane per class separates, at the cost of a linear
    model (a round costs one dot product per weight, O(nnz) on a sparse
    row; memory is at most ``budget`` weights per class).

    Each round (``t`` counts every example learned; ``eta = 1 / (alpha (t
    + 1))``) takes the true class's best weight ``j+`` (score ``f+``) and
    the best weight of every other class ``(i-, j-)`` (score ``f-``),
    shrinks every weight by ``1 - 1/(t + 1)`` and, when ``1 + f- - f+ >
    0``, subtracts ``eta x`` from ``w_i-j-`` and adds it to ``w_yj+`` when
    ``f+ > 0``, or else starts a new weight ``eta x`` for class ``y`` (if
    it holds fewer than ``budget``).  Every ``prune_every`` rounds the
    smallest weights whose squared norms sum to at most ``(prune_c / (t
    alpha))^2`` are removed (never a class's last).  With
    ``clone_probability > 0`` (GAMM), a round that adds to ``w_yj+`` first
    copies it as a new weight of class ``y`` with probability ``p``, and
    ``p`` is then multiplied by ``clone_decay``.  Ties go to the first
    class of ``classes_``, then the oldest weight.  Two classes are two
    classes (the model is the same rule, not one binary learner).""",
        ["""budget : int, default=50
        ``B``, the most weight vectors a class holds (its first, zero
        weight included).""",
         """alpha : float, default=1e-4
        ``lambda``, the regularization; the step of round ``t`` is ``1 /
        (alpha (t + 1))``.""",
         """prune_every : int, default=10000
        ``k``: weights are pruned after every ``k``-th round.""",
         """prune_c : float, default=10.0
        ``c``: a pruning removes the smallest weights whose squared norms
        sum to at most ``c^2 / (t alpha)^2`` (0: only zero weights).""",
         """clone_probability : float, default=0.0
        GAMM's ``p``: the probability that a weight about to be moved
        towards an example is first cloned (a new weight of its class).
        0: plain AMM.""",
         """clone_decay : float, default=0.99
        ``p`` is multiplied by it after every clone (the current ``p`` is
        part of the model and carries over calls).""",
         """fit_intercept : bool, default=True
        Append the bias coordinate ``s`` to every row (``x~ = [x, s]``); it
        is regularized like the rest, as in BudgetedSVM.""",
         """intercept_scaling : float, default=1.0
        ``s``, the value of the bias coordinate (``intercept_`` is ``s``
        times its weight).""",
         stream_doc(max_iter=5, max_iter_note="  BudgetedSVM's default is 5\n"
                    "        passes; :meth:`partial_fit` is one pass.",
                    random_note=" and of GAMM's clone draws", one_vs_rest=False)],
        """classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (n_weights, n_features)
        Every class's weight vectors, class by class, oldest first (the
        bias coordinate left out).
    intercept_ : ndarray of shape (n_weights,)
        ``s`` times each weight's bias coordinate (0 without
        ``fit_intercept``).
    weight_class_ : ndarray of shape (n_weights,)
        The index into ``classes_`` of each row of ``coef_``.
    n_weights_ : ndarray of shape (n_classes,)
        The number of weights of each class.
    """ + feature_record_doc(
            "whose true class did not score strictly above\n        every other (``f+ - f- "
            "<= 0``)", "Rounds that changed the weights (``1 + f- - f+ > 0``)."),
        see_also="""sklearn.svm.LinearSVC : One hyperplane per class (one-vs-rest), solved in
        batch.
    sklearn.linear_model.SGDClassifier : One hyperplane per class, online.
    BudgetedSGDClassifier : A kernel SVM in a budget of support vectors.""",
        references="""Z. Wang, N. Djuric, K. Crammer and S. Vucetic, "Trading Representability
    for Scalability: Adaptive Multi-Hyperplane Machine for Nonlinear
    Classification", KDD 2011.

    N. Djuric, Z. Wang and S. Vucetic, "Growing Adaptive Multi-Hyperplane
    Machines", ICML 2020 (GAMM).

    N. Djuric, L. Lan, S. Vucetic and Z. Wang, "BudgetedSVM: A Toolbox for
    Scalable SVM Approximations", Journal of Machine Learning Research 14,
    3813-3817, 2013.""",
        examples=""">>> from sklearn.datasets import load_digits
    >>> from skbudget import AdaptiveMultiHyperplaneClassifier
    >>> X, y = load_digits(return_X_y=True)
    >>> clf = AdaptiveMultiHyperplaneClassifier(random_state=0).fit(X / 16, y)
    >>> clf.score(X / 16, y) > 0.9
    True""",
    )

    _declaration = Declaration(
        test_params=(dict(budget=4, prune_every=50, alpha=1e-2, random_state=0),
                     dict(clone_probability=0.5, budget=4, random_state=0)),
        model_variants=({}, dict(clone_probability=0.3, budget=5, prune_every=100),
                        dict(fit_intercept=False, alpha=1e-2, prune_c=1.0)),
        averaging=CannotAverage(
            "its weights are assigned to examples by the largest score, so the weights of two "
            "models have no correspondence to average (the average of two piecewise-linear "
            "models is not one of at most budget weights per class)"),
        shared_multiclass=SharedMulticlass(),
        model_size="``budget`` weights per class: up to ``n_classes × budget`` in all",
    )

    _parameter_constraints: dict = {
        **BaseOnlineClassifier._parameter_constraints,
        **BUDGET,
        "alpha": [RealNumber(1e-12, 1e12, closed="both")],
        "prune_every": [Integer(1, None, closed="left")],
        "prune_c": [RealNumber(0.0, 1e150, closed="both")],
        "clone_probability": [RealNumber(0.0, 1.0, closed="both")],
        "clone_decay": [RealNumber(0.0, 1.0, closed="both")],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [RealNumber(0.0, 1e150, closed="neither")],
    }

    _feature_map_class = RawFeatures

    def __init__(self, *, budget=50, alpha=1e-4, prune_every=10000, prune_c=10.0,
                 clone_probability=0.0, clone_decay=0.99, fit_intercept=True,
                 intercept_scaling=1.0, max_iter=5, shuffle=True, random_state=None,
                 warm_start=False, verbose=0):
        keep_params(self, locals())

    def _shares_support(self, n_classes):
        """Always: one learner holds every class's weights."""
        return True

    def _learns_open_label_sets(self):
        """No: every class holds its own list of weights from the start
        (``partial_fit`` needs ``classes=`` on its first call)."""
        return False

    def _draws_random_numbers(self):
        return self.clone_probability > 0

    def _make_learner(self, rng):
        return MultiHyperplaneLearner(
            n_classes=len(self.classes_), n_inputs=self.n_features_in_, budget=self.budget,
            lam=self.alpha, prune_every=self.prune_every, prune_c=self.prune_c,
            clone_probability=self.clone_probability, clone_decay=self.clone_decay,
            bias=self.intercept_scaling, fit_intercept=self.fit_intercept, rng=rng)

    def _make_driver(self, learners, X):
        return StreamDriver.for_features(learners, RawFeatures(X.shape[1]), self._chunk_size,
                                         shared_support=True)

    def _check_learnable_rows(self, X):
        """The base's checks, then the row's step: a row whose ``||x~||^2 /
        alpha^2`` overflows is refused by every round (the learner's
        ``check_rows``, the check its rounds run first)."""
        super()._check_learnable_rows(X)
        self._learners[0].check_rows(X)

    def _update_model_attributes(self):
        learner = self._learners[0]
        if learner.t != self._record.n_rounds:      # (a loaded model: one of them tampered)
            raise ValueError(f"the learner's t={learner.t} is not the record's "
                             f"n_rounds={self._record.n_rounds} (every round counts)")
        weights, weight_class = learner.coefficients()
        d = learner.n_inputs
        coef = np.ascontiguousarray(weights[:, :d])
        if self.fit_intercept:
            intercept = self.intercept_scaling * weights[:, d]
        else:
            intercept = np.zeros(len(weights))
        self._set_linear_model(coef, intercept)
        self.weight_class_ = weight_class
        self.n_weights_ = np.bincount(weight_class, minlength=len(self.classes_))

    def _raw_scores(self, X):
        """``g(i, x)`` per class (two classes: ``g(1, x) - g(0, x)``), a block
        of rows at a time: one matrix product, then each class's largest."""
        starts = np.concatenate([[0], np.cumsum(self.n_weights_)[:-1]])
        n_classes = len(self.classes_)
        out = np.empty((X.shape[0], 1 if n_classes == 2 else n_classes))
        step = self._predict_chunk_size
        with single_threaded_blas():
            for start in range(0, X.shape[0], step):
                rows = slice(start, start + step)
                S = np.asarray(X[rows] @ self.coef_.T) + self.intercept_
                G = _largest_per_class(S, starts)
                out[rows] = G[:, 1:2] - G[:, 0:1] if n_classes == 2 else G
        return out
