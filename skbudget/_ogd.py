"""Kernel online gradient descent: kernel OGD / NORMA, and NOGD, kernel
OGD whose budget turns into a Nystrom feature space.

Each estimator is a thin wrapper: its parameters and ``_make_learner``,
which configures one of the compiled policies of ``_ogd_fast`` (one
binary learner per class, or with ``multi_class='crammer_singer'`` one
shared learner for every class).
"""

import math

import numpy as np

from skbudget._averaging import ExpansionAverage, OnlyWith, SharedExpansionState
from skbudget._base import BaseKernelExpansionClassifier, MultiClassModeMixin
from skbudget._budget import _example
from skbudget._declaration import CannotAverage, Declaration, SharedMulticlass
from skbudget._docstrings import attributes_doc, docstring, kernel_doc, multi_class_doc
from skbudget._docstrings import stream_doc
from skbudget._ogd_fast import (
    KernelOGDLearner,
    NystromOGDLearner,
    SharedKernelOGDLearner,
    SharedNystromOGDLearner,
)
from skbudget._params import BUDGET, MULTI_CLASS_CONSTRAINT, Integer, RealNumber, keep_params

__all__ = ["KernelOGDClassifier", "NystromOGDClassifier"]

_ETA0_DOC = """eta0 : float, default=0.5
        The constant step ``eta``: an update adds the example with
        coefficient ``eta y`` (``'crammer_singer'``: ``eta`` for the true
        class, ``-eta`` for the runner-up)."""

_SHARED_CONSTRAINTS = {
    **BaseKernelExpansionClassifier._parameter_constraints,
    "eta0": [RealNumber(0.0, None, closed="neither")],
    **MULTI_CLASS_CONSTRAINT,
}

_SHARED_MODE = SharedMulticlass("multi_class", shared="crammer_singer", one_vs_rest="ovr")


def _ogd_docstring(summary, parameters, *, attributes="", references, example):
    """A class docstring of the family: its own parameters, then the
    kernel and stream ones; the fitted attributes, with the mistakes and
    ``n_support_`` of both ``multi_class`` modes."""
    return docstring(
        summary, parameters + [kernel_doc(), stream_doc()],
        attributes_doc(
            multiclass_mistake="``'ovr'``, the true class's score not strictly\n"
                               "        the largest; ``'crammer_singer'``, ``argmax_c f_c(x) "
                               "!= y``\n        (ties to the lowest class index)",
            n_support="(n_learners,)\n        Support vectors per learner: one learner for "
                      "two classes and\n        for ``'crammer_singer'`` (the shared set), one "
                      "per class for\n        ``'ovr'``.",
            extra=attributes),
        references=references, examples=example)


class KernelOGDClassifier(MultiClassModeMixin, BaseKernelExpansionClassifier):
    __doc__ = _ogd_docstring(
        """Kernel online gradient descent on the hinge loss, and NORMA.

    Online gradient descent in the kernel's feature space on
    ``lambda/2 ||f||^2 + max(0, 1 - y f(x))`` with a constant step
    ``eta``: every round, with ``f(x_t)`` the score of the model before the
    round, every coefficient is multiplied by ``1 - eta lambda`` (O(1), a
    global scale factor), and if ``y_t f(x_t) < 1`` (strictly) the example
    is added with coefficient ``eta y_t``.  With ``budget=None`` (the
    default) the support set is not bounded: plain kernel OGD, the
    baseline of the budget papers.  With a ``budget`` ``B``, once an
    insertion makes ``|S| = B + 1`` the oldest support vector is removed:
    NORMA's truncation (what the C++ LIBOKL/KOL toolbox ships as "OGD" and
    as "BOGD").  No bias.

    With three or more classes, ``multi_class='crammer_singer'`` learns
    every class on one support set: each vector carries a coefficient per
    class, the round's margin is ``m = f_y(x) - f_r(x)`` against the
    runner-up ``r = argmax_{c != y} f_c(x)`` (ties: the lowest index), the
    decay scales whole rows, and when ``m < 1`` the example is added with
    ``eta`` for class ``y`` and ``-eta`` for class ``r``; with a budget the
    oldest vector is removed, as by the binary rule.""",
        ["""budget : int or None, default=None
        ``None``: unbounded (kernel OGD).  An int ``B``: keep the ``B``
        newest support vectors: per learner with ``multi_class='ovr'``
        (with ``n_classes > 2`` up to ``n_classes * B`` vectors are
        stored), for the whole model with ``'crammer_singer'``.""",
         _ETA0_DOC,
         """alpha : float, default=0.0
        The regularization ``lambda`` (the decay ``1 - eta0 alpha`` per
        round; ``eta0 * alpha`` must be at most 1).  0: no decay, plain
        kernel OGD.""",
         multi_class_doc(budget_note="  The decay\n        ``1 - eta0 alpha`` scales whole "
                         "rows; the budget removes the\n        oldest vector.")],
        references="""J. Kivinen, A. J. Smola and R. C. Williamson, "Online Learning with
    Kernels", IEEE Transactions on Signal Processing 52(8), 2165-2176,
    2004.

    K. Crammer and Y. Singer, "On the algorithmic implementation of
    multiclass kernel-based vector machines", Journal of Machine Learning
    Research 2, 265-292, 2001.""",
        example=_example("KernelOGDClassifier",
                         "KernelOGDClassifier(budget=50, gamma=2.0, random_state=0)"),
    )

    _declaration = Declaration(
        test_params=(dict(budget=7, gamma=1.0, random_state=0),),
        model_variants=({}, dict(budget=None, alpha=0.1), dict(multi_class="crammer_singer"),
                        dict(budget=None, alpha=0.1, multi_class="crammer_singer")),
        averaging=ExpansionAverage(
            "the union of the support sets (its decay ``1 - eta0 alpha`` folded into the "
            "coefficients; no budget: nothing to compress; both ``multi_class`` modes)",
            shared_learner_rule=SharedExpansionState,
            only_with=(OnlyWith(
                "budget", None,
                "a finite budget truncates the oldest support vector, and the union of "
                "several models' support sets has no order by age between the models (their "
                "rounds ran side by side), so no truncation back to the budget is defined"),)),
        shared_multiclass=_SHARED_MODE,
    )

    _parameter_constraints: dict = {
        **_SHARED_CONSTRAINTS,
        "budget": [Integer(1, None, closed="left"), None],
        "alpha": [RealNumber(0.0, None, closed="left")],
    }

    def __init__(self, *, budget=None, eta0=0.5, alpha=0.0, multi_class="ovr", kernel="rbf",
                 gamma="scale", degree=3, coef0=0.0, kernel_params=None, max_iter=1,
                 shuffle=True, random_state=None, warm_start=False, verbose=0, n_jobs=None):
        keep_params(self, locals())

    def _init_constants(self, X):
        if not self.eta0 * self.alpha <= 1.0:
            raise ValueError(
                f"{type(self).__name__}: eta0 * alpha must be at most 1 (the decay "
                f"1 - eta0 * alpha of every coefficient per round is then in [0, 1]); got "
                f"eta0={self.eta0!r}, alpha={self.alpha!r}."
            )

    def _make_learner(self, rng):
        budget = -1 if self.budget is None else self.budget
        if self._shared_support:
            return SharedKernelOGDLearner(n_classes=len(self.classes_), budget=budget,
                                          eta=self.eta0, lam=self.alpha)
        return KernelOGDLearner(budget=budget, eta=self.eta0, lam=self.alpha)


class NystromOGDClassifier(MultiClassModeMixin, BaseKernelExpansionClassifier):
    __doc__ = _ogd_docstring(
        """Nystrom online gradient descent (NOGD): kernel OGD, then a linear
    learner on the Nystrom features of its budget.

    Stage 1 is kernel OGD (:class:`KernelOGDClassifier` with ``alpha=0``):
    the example is added with coefficient ``eta y`` when ``y f(x) < 1``,
    until ``budget`` support vectors ``S`` are stored.  At the first round
    with ``y f(x) < 1`` and ``|S| = B``, the Gram matrix ``K_SS`` is
    eigendecomposed, its ``n_components`` largest eigenpairs ``(Lam, V)``
    kept (eigenvalues at most ``1e-12`` times the largest dropped), and
    the features become ``z(x) = Lam^{-1/2} V^T k(x, S)``; the stage-1
    model is carried over, ``w = Lam^{1/2} V^T alpha``.  From that round
    on, hinge OGD on the features: ``w += eta y z(x)`` when
    ``y w.z(x) < 1``.  ``S`` never changes after stage 1; a round costs
    ``O(B (d + n_components))``.

    The model predicts as a kernel expansion over the landmarks:
    ``w.z(x) = (V Lam^{-1/2} w).k(x, S)``, so ``support_vectors_`` are the
    landmarks and ``dual_coef_`` the coefficients ``V Lam^{-1/2} w`` (stage
    1's ``alpha`` for a learner still in stage 1).  Unlike the C++
    LIBOKL/KOL toolbox, the stage-1 model is carried over (as the authors'
    MATLAB ``NysGD.m``) and the eigenpairs are the largest ones.

    With three or more classes, ``multi_class='crammer_singer'`` keeps one
    set of ``B`` landmarks for every class: stage 1 is the shared kernel
    OGD of :class:`KernelOGDClassifier` (the margin ``m = f_y(x) -
    f_r(x)`` against the runner-up class, the row ``eta (e_y - e_r)``
    added when ``m < 1``); at the first round with ``m < 1`` and ``|S| =
    B`` every class's coefficients are carried over into the columns of a
    weight matrix ``W = Lam^{1/2} V^T A``; from then on ``W[:, y] += eta
    z(x)`` and ``W[:, r] -= eta z(x)`` when the margin of the scores
    ``W^T z(x)`` is below 1.""",
        ["""budget : int, default=100
        Maximum number of support vectors ``B``, at most ``2**31 - 3``:
        per learner with ``multi_class='ovr'`` (with ``n_classes > 2`` up
        to ``n_classes * B`` vectors are stored), for the whole model with
        ``'crammer_singer'``.  Stage 1 stores up to ``B`` support vectors;
        they become the landmarks.""",
         """n_components : int or None, default=None
        ``k <= budget``, the dimension of the Nystrom features; ``None``:
        ``ceil(0.2 * budget)``, the paper's choice.""",
         _ETA0_DOC + """  The same step in both stages.""",
         multi_class_doc(budget_note="  One set of\n        ``B`` landmarks for "
                         "every class, then one weight matrix on\n        their features "
                         "(a column per class).")],
        attributes="""coef_ : ndarray of shape (n_rows, n_kept)
        The linear model ``w`` of each learner on the features it kept
        (``n_kept`` is the largest of ``n_components_kept_``; zeros beyond
        a learner's own; a row of zeros for a learner still in stage 1,
        whose model is ``dual_coef_``, and no column before any learner
        passed to stage 2): its width follows the model, not ``budget``.
        One row per learner, except with ``multi_class='crammer_singer'``:
        one row per class, the columns of the shared weight matrix ``W``.
    n_components_ : int
        The number of components ``k`` asked for (``n_components``, or
        ``ceil(0.2 * budget)``).
    n_components_kept_ : ndarray of shape (n_learners,)
        Components each learner kept (fewer than ``n_components_`` where
        ``K_SS`` has eigenvalues at most ``1e-12`` times its largest, e.g.
        duplicate landmarks); 0 for a learner still in stage 1.
    in_feature_space_ : ndarray of shape (n_learners,)
        Whether each learner has passed to stage 2.""",
        references="""J. Lu, S. C. H. Hoi, J. Wang, P. Zhao and Z.-Y. Liu, "Large Scale
    Online Kernel Learning", Journal of Machine Learning Research 17(47),
    1-43, 2016.""",
        example=_example("NystromOGDClassifier",
                         "NystromOGDClassifier(budget=50, gamma=2.0, random_state=0)"),
    )

    _declaration = Declaration(
        test_params=(dict(budget=7, gamma=1.0, random_state=0),),
        model_variants=({}, dict(n_components=7), dict(multi_class="crammer_singer"),
                        dict(n_components=7, multi_class="crammer_singer")),
        averaging=CannotAverage(
            "after its first budget of support vectors it learns a linear model on a feature "
            "map built from the eigenvectors of the Gram matrix of its own landmarks: models "
            "with different landmarks have their weights in different feature spaces, which "
            "do not add up"),
        shared_multiclass=_SHARED_MODE,
    )

    _parameter_constraints: dict = {
        **_SHARED_CONSTRAINTS,
        **BUDGET,
        "n_components": [Integer(1, None, closed="left"), None],
    }

    def __init__(self, *, budget=100, n_components=None, eta0=0.5, multi_class="ovr",
                 kernel="rbf", gamma="scale", degree=3, coef0=0.0, kernel_params=None,
                 max_iter=1, shuffle=True, random_state=None, warm_start=False, verbose=0,
                 n_jobs=None):
        keep_params(self, locals())

    def _components(self):
        if self.n_components is None:
            return math.ceil(0.2 * self.budget)
        return self.n_components

    def _init_constants(self, X):
        if self._components() > self.budget:
            raise ValueError(
                f"{type(self).__name__}: n_components={self.n_components} must be at most "
                f"budget={self.budget} (the features are the eigenvectors of the Gram "
                f"matrix of the budget's support vectors)."
            )

    def _make_learner(self, rng):
        if self._shared_support:
            return SharedNystromOGDLearner(n_classes=len(self.classes_), budget=self.budget,
                                           n_components=self._components(), eta=self.eta0)
        return NystromOGDLearner(budget=self.budget, n_components=self._components(),
                                 eta=self.eta0)

    def _learner_expansion(self, learner):
        if self._shared_support:        # (its coefficient rows are M^T W in stage 2)
            return super()._learner_expansion(learner)
        return learner.expansion(), learner.intercept

    def _update_fitted_attributes(self):
        super()._update_fitted_attributes()
        self.n_components_ = self._components()
        # each learner's linear models, a row each: its w, or the shared W^T
        models = [np.asarray(learner.W).T if self._shared_support
                  else np.asarray(learner.w)[None] for learner in self._learners]
        self.n_components_kept_ = np.array([m.shape[1] for m in models], dtype=np.int64)
        self.coef_ = np.zeros((sum(m.shape[0] for m in models),
                               self.n_components_kept_.max(initial=0)))
        top = 0
        for m in models:
            self.coef_[top:top + m.shape[0], :m.shape[1]] = m
            top += m.shape[0]
        self.in_feature_space_ = np.array([bool(learner.switched) for learner in self._learners])
