"""Kernel MIRA on one shared support set, unbounded or with the
Crammer-Kandola-Singer cache (doc/algorithms.md#mira).

Unlike every other estimator of skbudget, MIRA is not one-vs-rest: one
compiled learner (``_mira_fast.MIRALearner``, on the shared-support store of
``_shared_support``) learns all classes at once, and every support pattern
carries one coefficient per class.
"""


from skbudget._base import BaseKernelExpansionClassifier
from skbudget._declaration import CannotAverage, Declaration, SharedMulticlass
from skbudget._docstrings import attributes_doc, docstring, kernel_doc, stream_doc
from skbudget._mira_fast import MIRALearner
from skbudget._params import Integer, RealNumber, keep_params

__all__ = ["BudgetMIRA", "KernelMIRA"]

_BETA_DOC = """\
beta : float > 0, default=0.01
        Margin parameter: a round with margin ``m <= beta`` asks for an
        update, and the step moves every rival class at least ``beta``
        below the true one (the paper's experiments use 0.01).  It must be
        positive: with ``beta = 0`` the empty model (all scores 0) would
        never move.  Any positive value works: ties are judged relative to
        ``beta`` (scores and steps scale with it), so a small ``beta``
        gives the same model up to scale."""

_STEP = """Round ``t`` with class ``y``: class scores
    ``s_r = sum_i tau_{i,r} k(x_i, x_t)``, margin ``m = s_y - max_{r != y}
    s_r`` (a mistake when ``m <= 0``; two scores that agree to a relative
    1e-9, with ``beta`` as the unit near 0, count as tied).  When ``m <= beta`` MIRA solves
    ``min 1/2 k(x_t, x_t) sum_r tau_r^2 + sum_r tau_r (s_r + beta [r != y])``
    subject to ``tau_r <= [r = y]`` and ``sum_r tau_r = 0`` (closed form by
    sorting, O(k log k)) and, unless the step is zero, adds ``x_t`` as a
    support pattern with the coefficient vector ``tau``."""

_NOTES = """All classes share one support set: each support pattern carries a
    coefficient per class (``dual_coef_[:, i]``), so the class scores are
    ``k(X, support_vectors_) @ dual_coef_.T`` and a support set of ``n``
    patterns stores ``n`` vectors whatever the number of classes (a
    one-vs-rest estimator stores up to ``n_classes`` times its budget).
    With two classes the model is still MIRA's (not the binary perceptron
    step): ``decision_function`` is ``s_1 - s_0``, and since every step sums
    to zero, ``dual_coef_[0] = -dual_coef_[1]`` and ``decision_function(X)
    = 2 k(X, support_vectors_) @ dual_coef_[1]``."""

_REFERENCES = """K. Crammer and Y. Singer, "Ultraconservative Online Algorithms for
    Multiclass Problems", Journal of Machine Learning Research 3, 951-991,
    2003.

    K. Crammer, J. Kandola and Y. Singer, "Online Classification on a
    Budget", NIPS 2003."""


def _mira_doc(summary, own_parameters, name, call, *, see_also, extra_notes=""):
    return docstring(
        summary,
        own_parameters + [_BETA_DOC, kernel_doc(), stream_doc(one_vs_rest=False)],
        attributes_doc(
            rows="n_classes",
            support_vectors="The support patterns, shared by every class, oldest first.",
            dual_coef="Coefficient of each support pattern for each class (one row\n"
                      "        per class, also with two classes).",
            intercept="Always 0: the model has no bias.",
            n_support="(1,)\n        Number of support patterns (one set shared by every class).",
            mistake="``m <= 0``",
            n_updates="Rounds that added a support pattern (a non-zero MIRA step).",
        ),
        see_also=see_also,
        notes=_NOTES + extra_notes,
        references=_REFERENCES,
        examples=f""">>> from sklearn.datasets import load_iris
    >>> from skbudget import {name}
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = {call}.fit(X, y)
    >>> bool(clf.score(X, y) > 0.9), clf.dual_coef_.shape[0]
    (True, 3)""",
    )


class _MIRAClassifier(BaseKernelExpansionClassifier):
    """Kernel MIRA on one shared support set (not for direct use)."""

    def _shares_support(self, n_classes):
        """Always: MIRA learns every class at once (doc/algorithms.md#mira)."""
        return True

    _parameter_constraints: dict = {
        **BaseKernelExpansionClassifier._parameter_constraints,
        "beta": [RealNumber(0.0, None, closed="neither")],
    }


class KernelMIRA(_MIRAClassifier):
    __doc__ = _mira_doc(
        """Kernel MIRA: the multi-class ultraconservative online algorithm, unbounded.

    MIRA (Margin Infused Relaxed Algorithm) learns every class at once on
    one shared support set.  """ + _STEP + """  Nothing is ever removed:
    this is the baseline of the Crammer-Kandola-Singer budget paper.""",
        [], "KernelMIRA", "KernelMIRA(gamma=0.5, random_state=0)",
        see_also="BudgetMIRA : MIRA with a fixed or adaptive cache of support patterns.",
    )

    _declaration = Declaration(
        test_params=(dict(gamma=1.0, random_state=0),),
        averaging=CannotAverage(
            "its state holds the class scores of every support pattern, which an average does "
            "not define yet"),
        shared_multiclass=SharedMulticlass(),
    )

    def __init__(self, *, beta=0.01, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 kernel_params=None, max_iter=1, shuffle=True, random_state=None,
                 warm_start=False, verbose=0):
        keep_params(self, locals())

    def _make_learner(self, rng):
        return MIRALearner(n_classes=len(self.classes_), beta=self.beta)


class BudgetMIRA(_MIRAClassifier):
    __doc__ = _mira_doc(
        """Kernel MIRA with the Crammer-Kandola-Singer cache (fixed or adaptive).

    MIRA (Margin Infused Relaxed Algorithm) learns every class at once on
    one shared support set.  """ + _STEP + """

    Fixed cache (``budget`` an integer, the paper's Fig. 3): on an update
    with ``|S| = B`` it first removes the support pattern with the largest
    leave-one-out margin ``mu_i = (s_{y_i}(x_i) - tau_{i,y_i} k_ii) -
    max_{r != y_i} (s_r(x_i) - tau_{i,r} k_ii)`` (ties: the oldest), then
    takes the step from the scores without it.  Adaptive cache
    (``budget=None``, the paper's DistillCache, Fig. 2): after each
    insertion it removes the pattern with the largest ``mu_i`` while that is
    ``>= beta`` (the pattern just inserted is never a candidate), so the
    cache size adapts to the data.""",
        ["""budget : int or None, default=100
        Cache size ``B``: the number of support patterns, whatever the number
        of classes; ``None`` selects the adaptive DistillCache (no fixed
        bound)."""],
        "BudgetMIRA", "BudgetMIRA(budget=30, gamma=0.5, random_state=0)",
        see_also="KernelMIRA : The unbounded baseline.",
        extra_notes="""

    The class scores ``s_r(x_i)`` of every support pattern are kept up to
    date incrementally (``O(|S| k)`` per insertion or removal, through the
    support-set Gram matrix: ``O(B^2)`` memory).""",
    )

    _declaration = Declaration(
        test_params=(dict(budget=7, gamma=1.0, random_state=0),),
        model_variants=({}, dict(beta=0.5)),
        averaging=CannotAverage(
            "its removal rule reads the class scores of every support pattern, which an "
            "average does not define yet"),
        shared_multiclass=SharedMulticlass(),
    )

    _parameter_constraints: dict = {
        **_MIRAClassifier._parameter_constraints,
        "budget": [Integer(1, None, closed="left"), None],
    }

    def __init__(self, *, budget=100, beta=0.01, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, kernel_params=None, max_iter=1, shuffle=True, random_state=None,
                 warm_start=False, verbose=0):
        keep_params(self, locals())

    def _make_learner(self, rng):
        if self.budget is None:
            return MIRALearner(n_classes=len(self.classes_), beta=self.beta, distill=True)
        return MIRALearner(n_classes=len(self.classes_), beta=self.beta, budget=self.budget)
