"""BoundedOGDClassifier: kernel OGD on a budget by unbiased random removal
(BOGD, BOGD++)."""

from sklearn.utils._param_validation import StrOptions

from skbudget._base import BaseKernelExpansionClassifier, MultiClassModeMixin
from skbudget._bogd_fast import (COEFFICIENT, UNIFORM, BoundedOGDLearner,
                                 SharedBoundedOGDLearner)
from skbudget._budget import _example
from skbudget._declaration import CannotAverage, Declaration, SharedMulticlass
from skbudget._docstrings import (attributes_doc, docstring, kernel_doc, multi_class_doc,
                                  stream_doc)
from skbudget._params import MULTI_CLASS_CONSTRAINT, Integer, RealNumber, keep_params

__all__ = ["BoundedOGDClassifier"]

_SAMPLING = {"uniform": UNIFORM, "coefficient": COEFFICIENT}


class BoundedOGDClassifier(MultiClassModeMixin, BaseKernelExpansionClassifier):
    __doc__ = docstring(
        """Bounded Online Gradient Descent (BOGD, BOGD++): kernel OGD on a budget.

    Online gradient descent on ``alpha/2 ||f||^2 + hinge loss`` with a
    constant step ``eta0``: on a round with ``y f(x) <= 1`` (a margin of
    exactly 1 included) every coefficient decays by ``1 - eta0 alpha`` and
    ``x`` is added with coefficient ``eta0 y``; on the other rounds the
    coefficients only decay.  Once ``budget`` support vectors are stored,
    an update first removes one of them *at random* and scales the others
    up so that the model stays an unbiased estimate of the unbounded one,
    then bounds the coefficients by ``eta0 coef_bound``:

    - ``sampling='uniform'`` (BOGD): the vector removed is uniformly drawn
      (position ``rng.randint(budget)``, oldest first); the others are
      multiplied by ``B (1 - eta0 alpha) / (B - 1)``; after the insertion
      every coefficient is multiplied by ``min(1, eta0 coef_bound /
      max_j |alpha_j|)``.
    - ``sampling='coefficient'`` (BOGD++): vector ``j`` is removed with
      probability ``p_j = 1 - (B - 1) w_j / sum w``, ``w_j = |alpha_j|
      sqrt(k(x_j, x_j))``, so small coefficients go first (negative ``p_j``
      count as 0, the rest renormalized; uniform when every ``w`` is 0); the
      draw is ``u = rng.random_sample()`` and the first ``j`` with
      ``cumsum(p)_j > u``.  Each kept coefficient becomes ``sign(alpha_j)
      min((1 - eta0 alpha) |alpha_j| / (1 - p_j), eta0 coef_bound)``.

    The decay and BOGD's common factors are one global scale factor, so a
    round is O(1) besides the score, and O(B) when it removes.  No bias.
    This is the rule of the authors' MATLAB ``BOGD.m``; the C++ KOL's
    "BOGD" is NORMA with oldest-first removal instead.

    With three or more classes, ``multi_class='crammer_singer'`` learns
    every class on one support set of at most ``budget`` vectors, each with
    a row of ``n_classes`` coefficients: the rule runs on the margin ``m =
    f_y(x) - max_{c != y} f_c(x)`` against the runner-up class ``r``, a new
    vector gets the row ``eta0 (e_y - e_r)``, the decay and the rescalings
    multiply whole rows, and ``coef_bound`` and BOGD++'s weights read each
    row's Euclidean norm (the user guide's OGD page).""",
        ["""budget : int, default=100
        Maximum number of support vectors ``B >= 2``; the unbiased
        rescaling divides by ``B - 1``.  With ``multi_class='ovr'`` and
        ``n_classes > 2`` it is per learner (up to ``n_classes * B``
        vectors are stored); with ``multi_class='crammer_singer'`` (and on
        binary problems) it bounds the whole model.""",
         """eta0 : float, default=0.5
        The constant step ``eta``: the coefficient of a new support vector.""",
         """alpha : float, default=1e-3
        The regularization ``lambda >= 0``: every round multiplies the
        coefficients by ``1 - eta0 alpha``, so ``eta0 * alpha < 1`` is
        required.""",
         """coef_bound : float, default=10.0
        The bound ``gamma``: after a removal no coefficient exceeds
        ``eta0 * coef_bound`` in magnitude (with
        ``multi_class='crammer_singer'``, no row in Euclidean norm; a new
        row's norm is ``sqrt(2) eta0``).""",
         """sampling : {'uniform', 'coefficient'}, default='uniform'
        How the removed support vector is drawn: uniformly (BOGD) or
        favouring small coefficients (BOGD++; with
        ``multi_class='crammer_singer'``, small row norms).""",
         multi_class_doc(budget_note="  BOGD's removal draws as the binary rule draws; "
                                     "every scalar factor multiplies whole rows."),
         kernel_doc(), stream_doc(random_note=" and of the removals")],
        attributes_doc(n_updates="Rounds with ``y f(x) <= 1`` (each adds a support vector), summed\n"
                                 "        over the learners (shared mode: rounds with a margin\n"
                                 "        ``<= 1``)."),
        see_also="""RandomBudgetPerceptron : The perceptron with uniformly random removal.
    BudgetedSGDClassifier : Budgeted SGD for the kernel SVM (a decreasing
        step, deterministic budget maintenance).""",
        references="""P. Zhao, J. Wang, P. Wu, R. Jin and S. C. H. Hoi, "Fast Bounded
    Online Gradient Descent Algorithms for Scalable Kernel-Based Online
    Learning", Proceedings of the 29th International Conference on Machine
    Learning (ICML), 2012.""",
        examples=_example("BoundedOGDClassifier",
                          "BoundedOGDClassifier(budget=50, sampling='coefficient', "
                          "random_state=0)"),
    )

    _declaration = Declaration(
        test_params=(dict(budget=7, gamma=1.0, random_state=0),),
        model_variants=(tuple(dict(sampling=s) for s in ("uniform", "coefficient"))
                        + tuple(dict(sampling=s, multi_class="crammer_singer")
                                for s in ("uniform", "coefficient"))),
        averaging=CannotAverage(
            "on a full budget it removes a support vector drawn at random and rescales the "
            "others so that its model stays an unbiased estimate (with sampling probabilities "
            "read from its own budget's coefficients for BOGD++): that rule is defined for the "
            "budget plus one vectors of one model, not for the union of several models, which "
            "it could not bring back to its budget"),
        shared_multiclass=SharedMulticlass("multi_class", shared="crammer_singer",
                                           one_vs_rest="ovr"),
    )

    _parameter_constraints: dict = {
        **BaseKernelExpansionClassifier._parameter_constraints,
        "budget": [Integer(2, None, closed="left")],
        "eta0": [RealNumber(0.0, None, closed="neither")],
        "alpha": [RealNumber(0.0, None, closed="left")],
        "coef_bound": [RealNumber(0.0, None, closed="neither")],
        "sampling": [StrOptions(set(_SAMPLING))],
        **MULTI_CLASS_CONSTRAINT,
    }

    def __init__(self, *, budget=100, eta0=0.5, alpha=1e-3, coef_bound=10.0, sampling="uniform",
                 multi_class="ovr", kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 kernel_params=None, max_iter=1, shuffle=True, random_state=None,
                 warm_start=False, verbose=0, n_jobs=None):
        keep_params(self, locals())

    def _make_learner(self, rng):
        eta, lam = float(self.eta0), float(self.alpha)
        if not eta * lam < 1.0:
            raise ValueError(
                f"eta0 * alpha must be below 1 (every round multiplies the coefficients by "
                f"1 - eta0 * alpha); got eta0={self.eta0!r}, alpha={self.alpha!r}."
            )
        params = dict(budget=self.budget, eta=eta, lam=lam, bound=float(self.coef_bound),
                      sampling=_SAMPLING[self.sampling], rng=rng)
        if self._shared_support:
            return SharedBoundedOGDLearner(n_classes=len(self.classes_), **params)
        return BoundedOGDLearner(**params)

    def _draws_random_numbers(self):
        return True
