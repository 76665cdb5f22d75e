"""The fixed-budget family: Stoptron, RandomBudgetPerceptron,
BudgetPerceptron (Crammer-Kandola-Singer), Forgetron, and the unbounded
kernel Passive-Aggressive (PA-I) baseline.

Each estimator is a thin wrapper: its parameters and ``_make_learner``,
which configures one of the compiled policies of ``_budget_fast``.
"""

import numpy as np

from skbudget._averaging import ExpansionAverage, SharedExpansionState
from skbudget._base import BaseKernelExpansionClassifier, MultiClassModeMixin
from skbudget._budget_fast import (
    CrammerKandolaSingerLearner,
    ForgetronLearner,
    PassiveAggressiveLearner,
    RandomBudgetLearner,
    SharedForgetronLearner,
    SharedPassiveAggressiveLearner,
    SharedRandomBudgetLearner,
    SharedStoptronLearner,
    StoptronLearner,
)
from skbudget._declaration import CannotAverage, Declaration, SharedMulticlass
from skbudget._docstrings import BUDGET_DOC, attributes_doc, docstring, kernel_doc, stream_doc
from skbudget._docstrings import class_weight_doc, multi_class_doc
from skbudget._params import BUDGET, MULTI_CLASS_CONSTRAINT, Integer, RealNumber, keep_params
from skbudget._weights import CLASS_WEIGHT_CONSTRAINT, ExampleWeightsMixin

__all__ = [
    "BudgetPerceptron",
    "Forgetron",
    "KernelPassiveAggressive",
    "RandomBudgetPerceptron",
    "Stoptron",
]


# the shared mode's one support set in the fitted attributes
_SHARED_ATTRIBUTES = dict(
    dual_coef="Coefficients of the support vectors: one row for binary problems;\n"
              "        one row per class otherwise, over the shared support vectors\n"
              "        (``'crammer_singer'``: ``dual_coef_[c, i] = alpha_{i,c}``) or zeros\n"
              "        outside each class's own block (``'ovr'``).",
    n_support="(n_learners,)\n        Support vectors per learner: one learner for "
              "binary problems and\n        for ``'crammer_singer'`` (the size of the "
              "shared set), one per\n        class for ``'ovr'``.",
    multiclass_mistake="``'crammer_singer'``: ``argmax_c f_c(x) != y``,\n"
                       "        ties to the lowest class index; ``'ovr'``: the true "
                       "class's\n        score not strictly the largest",
)


def _docstring(summary, parameters, *, random_extra="", attributes="", references, example,
               **attribute_entries):
    """A class docstring: the estimator's own parameters, then the shared ones."""
    return docstring(
        summary, parameters + [kernel_doc(), stream_doc(random_note=random_extra)],
        attributes_doc(extra=attributes, **attribute_entries), references=references,
        examples=example,
    )


def _example(name, call):
    return (
        f">>> from sklearn.datasets import make_moons\n"
        f"    >>> from skbudget import {name}\n"
        f"    >>> X, y = make_moons(500, noise=0.1, random_state=0)\n"
        f"    >>> clf = {call}.fit(X, y)\n"
        f"    >>> clf.score(X, y) > 0.8\n"
        f"    True"
    )



class _FixedBudgetClassifier(MultiClassModeMixin, BaseKernelExpansionClassifier):
    """Base of the estimators whose only parameters beyond the shared ones
    are the budget and the multi-class mode (not for direct use)."""

    _parameter_constraints: dict = {**BaseKernelExpansionClassifier._parameter_constraints,
                                    **BUDGET, **MULTI_CLASS_CONSTRAINT}

    def __init__(self, *, budget=100, multi_class="ovr", kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, kernel_params=None, max_iter=1, shuffle=True, random_state=None,
                 warm_start=False, verbose=0, n_jobs=None):
        keep_params(self, locals())


class Stoptron(_FixedBudgetClassifier):
    __doc__ = _docstring(
        """Stoptron: the kernel perceptron that stops learning at the budget.

    On a mistake (``y f(x) <= 0``, a zero score included) the example is
    added with coefficient ``y`` while fewer than ``budget`` support vectors
    are stored; once ``|S| = B`` the model never changes again (later
    rounds only predict).  The baseline of the budget-perceptron papers.

    With ``multi_class='crammer_singer'`` and three or more classes, one
    support set of at most ``budget`` vectors serves every class: on a
    margin ``f_y(x) - max_{c != y} f_c(x) <= 0`` the example is added with
    the coefficient row ``e_y - e_r`` (``+1`` for its class ``y``, ``-1``
    for the runner-up ``r``) while fewer than ``budget`` vectors are
    stored.""",
        [BUDGET_DOC, multi_class_doc()],
        references="""Z. Wang and S. Vucetic, "Tighter Perceptron with Improved Dual Use of
    Cached Data for Model Representation and Validation", IJCNN 2009.

    F. Orabona, J. Keshet and B. Caputo, "The Projectron: a Bounded
    Kernel-Based Perceptron", ICML 2008.""",
        example=_example("Stoptron", "Stoptron(budget=50, gamma=2.0, random_state=0)"),
        **_SHARED_ATTRIBUTES,
    )

    _declaration = Declaration(
        test_params=(dict(budget=7, gamma=1.0, random_state=0),),
        model_variants=({}, dict(multi_class="crammer_singer")),
        averaging=CannotAverage(
            "it stops updating once full, and the union of full models has no rule that "
            "brings it back to its budget"),
        shared_multiclass=SharedMulticlass("multi_class", shared="crammer_singer",
                                           one_vs_rest="ovr"),
    )

    def _make_learner(self, rng):
        if self._shared_support:
            return SharedStoptronLearner(n_classes=len(self.classes_), budget=self.budget)
        return StoptronLearner(budget=self.budget)


class RandomBudgetPerceptron(_FixedBudgetClassifier):
    __doc__ = _docstring(
        """Random Budget Perceptron: on a full budget, forget a random support vector.

    On a mistake (``y f(x) <= 0``) with ``|S| = B``, one support vector
    chosen uniformly at random among the ``B`` current ones is removed, then
    the example is added with coefficient ``y`` (the new example is never
    the one removed).  The draw is ``rng.randint(B)`` on the estimator's
    ``numpy.random.RandomState`` (the ``RandomState`` equivalent of
    ``Generator.integers(B)``): the position of the removed vector, oldest
    first.  With two classes the same generator also shuffles the data in
    :meth:`fit`; with more, each one-vs-rest learner draws from its own
    generator seeded from ``random_state``.

    With ``multi_class='crammer_singer'`` and three or more classes, one
    support set of at most ``budget`` vectors serves every class, and its
    one learner draws from the estimator's generator, as with two classes:
    on a margin ``f_y(x) - max_{c != y} f_c(x) <= 0`` the same removal
    makes room, then the example is added with the coefficient row ``e_y -
    e_r`` (``+1`` for its class ``y``, ``-1`` for the runner-up ``r``).""",
        [BUDGET_DOC, multi_class_doc()],
        random_extra=" and of the removals",
        references="""N. Cesa-Bianchi and C. Gentile, "Tracking the best hyperplane with a
    simple budget Perceptron", COLT 2006.

    Z. Wang and S. Vucetic, "Tighter Perceptron with Improved Dual Use of
    Cached Data for Model Representation and Validation", IJCNN 2009.""",
        example=_example("RandomBudgetPerceptron",
                         "RandomBudgetPerceptron(budget=50, gamma=2.0, random_state=0)"),
        **_SHARED_ATTRIBUTES,
    )

    _declaration = Declaration(
        test_params=(dict(budget=7, gamma=1.0, random_state=0),),
        model_variants=({}, dict(multi_class="crammer_singer")),
        averaging=CannotAverage("its random removal has no defined order over a union"),
        shared_multiclass=SharedMulticlass("multi_class", shared="crammer_singer",
                                           one_vs_rest="ovr"),
    )

    def _make_learner(self, rng):
        if self._shared_support:
            return SharedRandomBudgetLearner(n_classes=len(self.classes_), budget=self.budget,
                                             rng=rng)
        return RandomBudgetLearner(budget=self.budget, rng=rng)

    def _draws_random_numbers(self):
        return True


class BudgetPerceptron(BaseKernelExpansionClassifier):
    __doc__ = _docstring(
        """Budget Perceptron of Crammer, Kandola & Singer (fixed or adaptive cache).

    Updates when ``y f(x) <= beta`` by adding the example with coefficient
    ``y``.  Fixed cache (``budget`` an integer, the paper's Fig. 3): on an
    update with ``|S| = B`` it first removes the support vector that would
    keep the largest margin without itself,
    ``argmax_j y_j (f(x_j) - alpha_j k(x_j, x_j))`` (ties: the oldest).
    Adaptive cache (``budget=None``, the paper's DistillCache, Fig. 2): no
    fixed size; after each insertion it keeps removing the support vector
    with the largest such margin while that margin is ``>= beta`` (the
    example just inserted is never a candidate), so the cache size adapts
    to the data.  The margins ``f(x_j)`` of the support vectors are kept up
    to date incrementally, ``O(|S|)`` per change (the support-set Gram matrix
    is stored: O(B^2) memory).

    Multi-class problems are learned one-vs-rest, each learner with its
    own cache.  The rule's form on one cache shared by every class (the
    leave-one-out margin against the runner-up class, MIRA's step) is
    :class:`BudgetMIRA`: use it for one budget for the whole model (the
    user guide's "Multi-class models").""",
        ["""budget : int or None, default=100
        Cache size ``B`` (per one-vs-rest learner); ``None`` selects the
        adaptive DistillCache variant (no fixed bound).""",
         """beta : float, default=0.0
        Margin tolerance: update when ``y f(x) <= beta`` (the paper's
        experiments use 0.01).  With ``budget=None`` it is also the
        DistillCache threshold."""],
        references="""K. Crammer, J. Kandola and Y. Singer, "Online Classification on a
    Budget", NIPS 2003.""",
        example=_example("BudgetPerceptron",
                         "BudgetPerceptron(budget=50, beta=0.01, gamma=2.0, random_state=0)"),
    )

    _declaration = Declaration(
        test_params=(dict(budget=7, gamma=1.0, random_state=0),),
        averaging=CannotAverage(
            "its removal rule reads leave-one-out margins kept per support vector, which an "
            "average does not define"),
    )

    _parameter_constraints: dict = {
        **BaseKernelExpansionClassifier._parameter_constraints,
        "budget": [Integer(1, None, closed="left"), None],
        "beta": [RealNumber(0.0, None, closed="left")],
    }

    def __init__(self, *, budget=100, beta=0.0, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, kernel_params=None, max_iter=1, shuffle=True, random_state=None,
                 warm_start=False, verbose=0, n_jobs=None):
        keep_params(self, locals())

    def _make_learner(self, rng):
        budget = -1 if self.budget is None else self.budget
        return CrammerKandolaSingerLearner(budget=budget, beta=self.beta)


class Forgetron(MultiClassModeMixin, BaseKernelExpansionClassifier):
    __doc__ = _docstring(
        """Forgetron: a kernel perceptron on a fixed budget that forgets gradually.

    The self-tuned Forgetron of Dekel, Shalev-Shwartz & Singer (Fig. 1).
    Weights are ``alpha_i = sigma_i y_i`` with ``sigma_i in (0, 1]``; ``M``
    counts mistakes and ``Q`` the damage of the removals so far.  On a
    mistake (``y f(x) <= 0``): ``M += 1`` and the example is added with
    ``sigma = 1``; if then ``|S| = B + 1``, with ``r`` the oldest support
    vector and ``mu = y_r f'(x_r)`` (the model after the insertion), every
    weight is multiplied by the largest ``phi in (0, 1]`` with
    ``Psi(phi) + Q <= 15/32 M``, ``Psi(phi) = (sigma_r phi)^2 +
    2 sigma_r phi (1 - phi mu)`` (closed form; when Psi is concave, the
    smaller root), ``Q += Psi(phi)`` and ``r`` is removed.  The shrink is
    O(1) (a global scale factor); ``mu`` comes from margins kept up to date
    incrementally (O(B^2) memory for the support-set Gram matrix).

    ``self_tuned=False`` is the paper's plain variant (§3): remove the
    oldest support vector, never shrink (O(B) memory).

    With ``multi_class='crammer_singer'`` and three or more classes, one
    support set of at most ``budget`` vectors serves every class: a round
    updates on the margin ``m = f_y(x) - max_{c != y} f_c(x) <= 0``, adding
    the example with the coefficient row ``e_y - e_r`` (``r`` the runner-up
    class); the shrink multiplies whole rows by ``phi``, with
    ``sigma_r`` the Euclidean norm of the oldest vector's row and ``mu``
    that vector's own margin ``f'_{y_r}(x_r) - max_{c != y_r}
    f'_c(x_r)``.""",
        [BUDGET_DOC,
         """self_tuned : bool, default=True
        Shrink by the self-tuned ``phi`` before each removal; ``False``
        gives the plain "remove the oldest" budget perceptron.""",
         multi_class_doc()],
        attributes="""M_ : ndarray of shape (n_learners,)
        The paper's ``M``: mistakes of each learner (``'crammer_singer'``:
        the rounds with ``m <= 0``, each an update).
    Q_ : ndarray of shape (n_learners,)
        The paper's ``Q``: accumulated removal damage ``sum Psi(phi)`` of
        each learner; ``Q_ <= 15/32 M_`` always (0 when not self-tuned).""",
        references="""O. Dekel, S. Shalev-Shwartz and Y. Singer, "The Forgetron: A
    Kernel-Based Perceptron on a Fixed Budget", NIPS 2005; SIAM Journal on
    Computing 37(5), 2008.""",
        example=_example("Forgetron", "Forgetron(budget=50, gamma=2.0, random_state=0)"),
        **_SHARED_ATTRIBUTES,
    )

    _declaration = Declaration(
        test_params=(dict(budget=7, gamma=1.0, random_state=0),),
        model_variants=(dict(self_tuned=True), dict(self_tuned=False),
                        dict(self_tuned=True, multi_class="crammer_singer"),
                        dict(self_tuned=False, multi_class="crammer_singer")),
        averaging=CannotAverage(
            "its state holds the counts M and Q and the shrinking schedule, which an average "
            "does not define"),
        shared_multiclass=SharedMulticlass("multi_class", shared="crammer_singer",
                                           one_vs_rest="ovr"),
    )

    _parameter_constraints: dict = {
        **BaseKernelExpansionClassifier._parameter_constraints,
        **BUDGET,
        "self_tuned": ["boolean"],
        **MULTI_CLASS_CONSTRAINT,
    }

    def __init__(self, *, budget=100, self_tuned=True, multi_class="ovr", kernel="rbf",
                 gamma="scale", degree=3, coef0=0.0, kernel_params=None, max_iter=1,
                 shuffle=True, random_state=None, warm_start=False, verbose=0, n_jobs=None):
        keep_params(self, locals())

    def _make_learner(self, rng):
        if self._shared_support:
            return SharedForgetronLearner(n_classes=len(self.classes_), budget=self.budget,
                                          self_tuned=self.self_tuned)
        return ForgetronLearner(budget=self.budget, self_tuned=self.self_tuned)

    def _update_fitted_attributes(self):
        super()._update_fitted_attributes()
        self.M_ = np.array([learner.M for learner in self._learners], dtype=np.int64)
        self.Q_ = np.array([learner.Q for learner in self._learners])


class KernelPassiveAggressive(MultiClassModeMixin, ExampleWeightsMixin,
                              BaseKernelExpansionClassifier):
    __doc__ = _docstring(
        """Kernel Passive-Aggressive classifier (PA-I), unbounded.

    On a round with hinge loss ``l = max(0, 1 - y f(x)) > 0`` the example
    is added with coefficient ``y min(C, l / k(x, x))`` (``y C`` if
    ``k(x, x) = 0``).  The support set is not bounded: this is the
    reference the Projectron paper compares the budget algorithms with.

    With ``multi_class='crammer_singer'`` and three or more classes, one
    support set serves every class: on a margin ``m = f_y(x) - max_{c != y}
    f_c(x) < 1`` the example is added with the coefficient row ``tau (e_y -
    e_r)`` (``r`` the runner-up class), ``tau = min(C w, (1 - m) / (2 k(x,
    x)))`` for an example of weight ``w`` (``C w`` if ``k(x, x) = 0``): ``2
    k(x, x)`` is the squared norm of the row's feature-space vector.""",
        ["""C : float, default=1.0
        Aggressiveness: the largest coefficient a single update may give
        (``C w`` for an example of weight ``w``).""",
         """multi_class : {'ovr', 'crammer_singer'}, default='ovr'
        How three or more classes are learned (the names of
        :class:`sklearn.svm.LinearSVC`); neither mode has a budget.
        ``'ovr'``: one binary learner per class, each storing the example
        on its own margin error; ``'crammer_singer'``: one support set for
        every class, each vector with a coefficient per class, storing the
        example once on the margin ``f_y(x) - max_{c != y} f_c(x) < 1``
        against the runner-up class (the user guide's "Multi-class
        models").  Binary problems are learned by the binary rule either
        way.""",
         class_weight_doc("its cap: ``y min(C w, l / k(x, x))``\n"
                          "        (PA-I's objective with the slack weighted by ``w``; no update\n"
                          "        for ``w = 0``)")],
        references="""K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz and Y. Singer,
    "Online Passive-Aggressive Algorithms", Journal of Machine Learning
    Research 7, 551-585, 2006.""",
        example=_example("KernelPassiveAggressive",
                         "KernelPassiveAggressive(C=1.0, gamma=2.0, random_state=0)"),
        **_SHARED_ATTRIBUTES,
    )

    _declaration = Declaration(
        test_params=(dict(gamma=1.0, random_state=0),),
        model_variants=({}, dict(multi_class="crammer_singer")),
        averaging=ExpansionAverage(
            "the union of the support sets, every coefficient (row) times its model's weight "
            "(no budget: nothing to compress)",
            shared_learner_rule=SharedExpansionState),
        shared_multiclass=SharedMulticlass("multi_class", shared="crammer_singer",
                                           one_vs_rest="ovr"),
        weights=("sample_weight", "class_weight"),
    )

    _parameter_constraints: dict = {
        **BaseKernelExpansionClassifier._parameter_constraints,
        "C": [RealNumber(0.0, None, closed="neither")],
        "class_weight": CLASS_WEIGHT_CONSTRAINT,
        **MULTI_CLASS_CONSTRAINT,
    }
    # the weights apply per call (a 'balanced' weight to each fit call's y)
    _call_params = BaseKernelExpansionClassifier._call_params + ("class_weight",)

    def __init__(self, *, C=1.0, multi_class="ovr", class_weight=None, kernel="rbf",
                 gamma="scale", degree=3, coef0=0.0, kernel_params=None, max_iter=1,
                 shuffle=True, random_state=None, warm_start=False, verbose=0, n_jobs=None):
        keep_params(self, locals())

    def _make_learner(self, rng):
        if self._shared_support:
            return SharedPassiveAggressiveLearner(n_classes=len(self.classes_), C=self.C)
        return PassiveAggressiveLearner(C=self.C)
