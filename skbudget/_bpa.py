"""BudgetedPassiveAggressive: PA-I on a budget (BPA-S, BPA-NN, BPA-P)."""

from sklearn.utils._param_validation import StrOptions

from skbudget._base import BaseKernelExpansionClassifier, MultiClassModeMixin
from skbudget._bpa_fast import NEAREST, PROJECTION, SIMPLE, BudgetedPALearner, SharedBPALearner
from skbudget._budget import _example
from skbudget._declaration import CannotAverage, Declaration, SharedMulticlass
from skbudget._docstrings import (attributes_doc, class_weight_doc, docstring, kernel_doc,
                                  multi_class_doc, stream_doc)
from skbudget._params import BUDGET, MULTI_CLASS_CONSTRAINT, RealNumber, keep_params
from skbudget._weights import CLASS_WEIGHT_CONSTRAINT, ExampleWeightsMixin

__all__ = ["BudgetedPassiveAggressive"]

_MAINTENANCE = {"simple": SIMPLE, "nearest": NEAREST, "projection": PROJECTION}


class BudgetedPassiveAggressive(MultiClassModeMixin, ExampleWeightsMixin,
                                BaseKernelExpansionClassifier):
    __doc__ = docstring(
        """Budgeted Passive-Aggressive (BPA): kernel PA-I on a fixed budget.

    On a round with hinge loss ``l = max(0, 1 - y f(x)) > 0`` (the score
    before the step) the PA-I step is ``tau = min(C w, l / k(x, x))``
    (``C w`` when ``k(x, x) <= 0``), ``w`` the example's weight (1 without
    ``sample_weight`` and ``class_weight``).  While fewer than ``budget``
    support vectors are stored, ``x`` is added with coefficient ``tau y``.
    Once the budget is full, the PA problem is solved *with* a removal: one support vector
    ``r`` is removed and a small set ``V`` holding ``x`` absorbs it, its
    coefficient projected onto span ``V`` (``alpha_r K_V^{-1} k_{V,r}`` is
    added to the coefficients of ``V``).  The vector removed is the one
    that loses least, ``argmin_r alpha_r^2 s_r`` with ``s_r`` the squared
    feature-space distance of ``x_r`` from span ``V`` (ties: the oldest);
    ``x`` is appended as the newest support vector, so the support set
    stays at ``budget``.  Whatever ``r`` is, the margin after the step is
    ``y f(x) + tau k(x, x)``, as for the unbounded PA-I.  No bias.

    The weight enters only the step's cap: the removal's price,
    ``alpha_r^2 s_r``, and the removed vector's coefficient are those of
    the unweighted rule.  An example of weight 0 takes no step and removes
    nothing: the model is the one of the stream without it (it is still
    counted among the rounds and in ``mistake_curve_``).

    ``maintenance`` chooses ``V``:

    - ``'simple'`` (BPA-S): ``V = {x}``; O(B) a round.
    - ``'nearest'`` (BPA-NN): ``V = {x, n(r)}``, ``n(r)`` the support
      vector nearest to ``x_r`` in feature space (``{x}`` when the 2 x 2
      Gram matrix is numerically singular); O(B) a round with the support
      set's Gram matrix (O(n^2) memory for ``n`` support vectors) and each
      vector's nearest neighbour kept up to date.
    - ``'projection'`` (BPA-P): ``V`` = every other support vector and
      ``x``; O(B^2) a round, O(n^2) memory, the inverse Gram matrix of the
      support set kept up to date.  When ``x`` lies in the span of the
      support set (squared distance at most ``1e-12 k(x, x)``) nothing is
      removed or added: the step is projected onto the support set.

    Memory and saved files grow with the support set (the matrices double
    up to ``B x B``), not with the budget.

    The paper's experiments: BPA-NN is nearly as accurate as BPA-P at a
    fraction of its cost, and both are markedly better than BPA-S and the
    perceptron budget rules on noisy data.

    With three or more classes, ``multi_class='crammer_singer'`` learns
    every class on one support set of at most ``budget`` vectors, each with
    a coefficient per class (``f_c(x) = sum_i alpha_{i,c} k(x_i, x)``).  A
    round takes the margin ``m = f_y(x) - f_r(x)`` against the runner-up
    ``r = argmax_{c != y} f_c(x)`` (ties: the lowest index), the loss ``l =
    max(0, 1 - m)`` and the step ``tau = min(C w, l / (2 k(x, x)))``
    (``phi(x)`` enters the two classes' parts: its squared norm is ``2
    k(x, x)``); ``x`` is added with ``tau`` for class ``y`` and ``-tau`` for
    class ``r``.  At the budget the vector removed is the one of least
    ``||alpha_r||^2 s_r`` (``||alpha_r||`` the Euclidean norm of its row),
    and ``V`` absorbs every class's part of its row with the same kernel
    coefficients; the margin ``f_y(x) - f_r(x)`` after the step is ``m + 2
    tau k(x, x)``, whatever is removed.  ``'ovr'`` learns one binary model
    per class, each with its own budget.  Binary problems are the same
    under both.""",
        ["""budget : int, default=100
        Maximum number of support vectors ``B``, at most ``2**31 - 3``.
        With ``multi_class='crammer_singer'`` (and on binary problems) it
        bounds the whole model whatever the number of classes; with
        ``'ovr'`` each class's learner has its own: up to ``n_classes * B``
        vectors.""",
         """C : float, default=1.0
        Aggressiveness: the largest step ``tau`` a round may take (PA-I;
        ``C w`` for an example of weight ``w``).""",
         """maintenance : {'simple', 'nearest', 'projection'}, default='simple'
        The set ``V`` that absorbs the removed support vector: ``x`` alone
        (BPA-S), ``x`` and the removed vector's nearest neighbour (BPA-NN),
        or ``x`` and every other support vector (BPA-P).""",
         multi_class_doc(budget_note=(
             "  The step is ``min(C w, l / (2 k(x, x)))``; the\n"
             "        removal's price is ``||alpha_r||^2 s_r`` (the row's norm), and the\n"
             "        removed row is projected onto ``V`` class by class with the same\n"
             "        kernel coefficients.")),
         class_weight_doc("its cap: ``tau = min(C w, l / k(x, x))``\n"
                          "        (the PA problem with the slack weighted by ``w``; no step and\n"
                          "        no removal for ``w = 0``)"),
         kernel_doc(), stream_doc()],
        attributes_doc(
            rows="n_rows",
            dual_coef="The coefficients of the support vectors.  ``'ovr'`` (and binary\n"
                      "        problems): each learner's row, zero outside its own block of\n"
                      "        columns.  ``'crammer_singer'``: row ``c`` holds every shared\n"
                      "        vector's coefficient for class ``c``.",
            n_support="(n_learners,)\n        The size of each learner's support set: one "
                      "entry, the shared\n        set's, for ``'crammer_singer'`` and binary "
                      "problems.",
            multiclass_mistake="the true class's score not strictly\n        the largest "
                               "(``'crammer_singer'``: ties go to the lower class\n"
                               "        index)",
            n_updates="Rounds that took a step (a positive hinge loss and a positive\n"
                      "        weight), summed over the learners."),
        see_also="""KernelPassiveAggressive : The unbounded PA-I.
    BudgetedSGDClassifier : Budgeted SGD for the kernel SVM, with removal,
        projection or merging.""",
        references="""Z. Wang and S. Vucetic, "Online Passive-Aggressive Algorithms on a
    Budget", Proceedings of the 13th International Conference on Artificial
    Intelligence and Statistics (AISTATS), JMLR W&CP 9, 908-915, 2010.

    K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz and Y. Singer,
    "Online Passive-Aggressive Algorithms", Journal of Machine Learning
    Research 7, 551-585, 2006.""",
        examples=_example("BudgetedPassiveAggressive",
                          "BudgetedPassiveAggressive(budget=50, maintenance='nearest', "
                          "random_state=0)"),
    )

    _declaration = Declaration(
        test_params=(dict(budget=7, gamma=1.0, random_state=0),),
        # (appended only: the positions key the model digests)
        model_variants=tuple(dict(maintenance=m) for m in ("simple", "nearest", "projection"))
        + tuple(dict(maintenance=m, multi_class="crammer_singer")
                for m in ("simple", "nearest", "projection")),
        averaging=CannotAverage(
            "each of its steps on a full budget removes one of budget plus one vectors and "
            "updates state kept for its own support set (the inverse Gram matrix, BPA-P; each "
            "vector's nearest neighbour, BPA-NN): no step is defined to bring the union of "
            "several models back to its budget"),
        shared_multiclass=SharedMulticlass("multi_class", shared="crammer_singer",
                                           one_vs_rest="ovr"),
        weights=("sample_weight", "class_weight"),
    )

    _parameter_constraints: dict = {
        **BaseKernelExpansionClassifier._parameter_constraints,
        **BUDGET,
        "C": [RealNumber(0.0, None, closed="neither")],
        "maintenance": [StrOptions(set(_MAINTENANCE))],
        "class_weight": CLASS_WEIGHT_CONSTRAINT,
        **MULTI_CLASS_CONSTRAINT,
    }
    # the weights apply per call (a 'balanced' weight to each fit call's y)
    _call_params = BaseKernelExpansionClassifier._call_params + ("class_weight",)

    def __init__(self, *, budget=100, C=1.0, maintenance="simple", multi_class="ovr",
                 class_weight=None,
                 kernel="rbf", gamma="scale", degree=3, coef0=0.0, kernel_params=None,
                 max_iter=1, shuffle=True, random_state=None, warm_start=False, verbose=0,
                 n_jobs=None):
        keep_params(self, locals())

    def _make_learner(self, rng):
        if self._shared_support:
            return SharedBPALearner(n_classes=len(self.classes_), budget=self.budget,
                                    C=float(self.C), maintenance=_MAINTENANCE[self.maintenance])
        return BudgetedPALearner(budget=self.budget, C=float(self.C),
                                 maintenance=_MAINTENANCE[self.maintenance])
