"""BudgetedSGDClassifier: a kernel SVM trained by Pegasos steps on a budget."""

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import StrOptions

from skbudget._averaging import ExpansionAverage, PegasosState, SharedPegasosState
from skbudget._base import BaseKernelExpansionClassifier, MultiClassModeMixin
from skbudget._bsgd_fast import (
    GOLDEN,
    LOOKUP,
    MERGING,
    PROJECTION,
    REMOVAL,
    BudgetedSGDLearner,
    MulticlassBSGDLearner,
)
from skbudget._declaration import Declaration, SharedMulticlass
from skbudget._docstrings import attributes_doc, docstring, kernel_doc, stream_doc
from skbudget._docstrings import class_weight_doc
from skbudget._kernel_catalogue import named_kernel
from skbudget._params import BUDGET, MULTI_CLASS_CONSTRAINT, RealNumber, keep_params
from skbudget._stream import STORE_MAX_SPARSE_FEATURES
from skbudget._weights import CLASS_WEIGHT_CONSTRAINT, ExampleWeightsMixin

__all__ = ["BudgetedSGDClassifier"]

_MAINTENANCE = {"removal": REMOVAL, "projection": PROJECTION, "merging": MERGING}
# the smallest alpha: see _parameter_constraints
_MIN_ALPHA = 1e-100
_MERGE_SEARCH = {"golden": GOLDEN, "lookup": LOOKUP}


class BudgetedSGDClassifier(MultiClassModeMixin, ExampleWeightsMixin, BaseKernelExpansionClassifier):
    __doc__ = docstring(
        """Budgeted stochastic gradient descent (BSGD) for a kernel SVM.

    Pegasos on the SVM objective ``alpha/2 ||f||^2 + mean hinge loss``, with
    the support set kept at ``budget`` vectors.  At round ``t`` (counting
    every example seen, from 1, across epochs and :meth:`partial_fit`
    calls) every coefficient is multiplied by ``1 - 1/t`` and, when
    ``y_t f(x_t) < 1`` (the score before the step), ``x_t`` is appended
    with coefficient ``y_t / (alpha t)``.  No bias.  When an addition makes
    the support set hold ``budget + 1`` vectors, ``maintenance`` brings it
    back to ``budget``:

    - ``'removal'``: drop the vector with the smallest ``alpha_i^2 k_ii``;
    - ``'projection'``: drop that vector and add its projection onto the
      span of the others to their coefficients;
    - ``'merging'`` (RBF kernel only): merge the vector with the smallest
      ``|alpha_i|`` with the same-signed vector that loses least, into a new
      point ``z = h x_m + (1 - h) x_n`` on the segment between them.

    Ties go to the oldest support vector.  With merging (or projection)
    the model stays within about a point of the batch kernel SVM at a small
    budget (a9a, one pass: 84.5 % at ``budget=100`` against ``SVC``'s
    85.1 % with 11 600 support vectors); removal is the cheapest and least
    accurate.

    With three or more classes, ``multi_class='crammer_singer'`` (the
    default) learns every class at once on one support set of at most
    ``budget`` vectors, as the BSGD paper's multi-class SVM and the
    BudgetedSVM toolbox do.  Each support vector carries a coefficient per
    class, the class scores are ``f_c(x) = sum_i alpha_{i,c} k(x_i, x)``,
    and the loss is the Crammer-Singer hinge ``max(0, 1 + f_r - f_y)``
    with the runner-up class ``r = argmax_{c != y} f_c`` (ties: the lowest
    index): when ``f_y - f_r < 1``, ``x_t`` is appended with ``1 / (alpha
    t)`` for class ``y`` and ``-1 / (alpha t)`` for class ``r``.  The
    rules act on the coefficient rows: removal and projection take the
    vector of smallest ``||alpha_i||^2 k_ii``, merging the one of smallest
    ``||alpha_i||`` with the partner (any other vector) that loses least.
    ``multi_class='ovr'`` learns one binary model per class instead, each
    with its own ``budget``.  Binary problems are the same under both.""",
        ["""budget : int, default=100
        Maximum number of support vectors ``B``.  With
        ``multi_class='crammer_singer'`` (and on binary problems) it bounds
        the whole model whatever the number of classes; with ``'ovr'`` each
        class's learner has its own: up to ``n_classes * B`` vectors.""",
         """alpha : float >= 1e-100, default=1e-4
        The regularization ``lambda`` of the objective (named as in
        :class:`sklearn.linear_model.SGDClassifier`).  The step at round
        ``t`` is ``1 / (alpha t)``.  Coefficients reach ``1 / alpha`` and
        budget maintenance squares them: the floor keeps that arithmetic
        finite (useful values are far above it).""",
         """maintenance : {'merging', 'projection', 'removal'}, default='merging'
        The budget maintenance rule (see above).  'merging' needs
        ``kernel='rbf'``; the others take any kernel.""",
         """merge_search : {'lookup', 'golden'}, default='lookup'
        How merging finds the merged point's place ``h`` for each candidate
        pair (only with ``maintenance='merging'``).  ``'golden'``: a
        golden-section search maximizing ``|alpha_z(h)|`` to a bracket of
        1e-6 (about 60 ``exp`` per pair).  ``'lookup'``: ``h`` read by
        bilinear interpolation from a table of the same search's optimum
        at the nodes ``i / 400`` of ``m = alpha_m / (alpha_m + alpha_n)``
        (``m <= 1/2``: 201 rows) and ``kappa = k(x_m, x_n)`` (401 columns),
        computed once per process, on first use, in about 0.06 s; then
        ``alpha_z`` and the loss computed exactly at that
        ``h``: a few times cheaper per merge, with the same accuracy on the
        benchmarks.  With ``multi_class='crammer_singer'`` (three or more
        classes on one support set) the optimum depends on three ratios of
        the pair's coefficient rows and ``kappa``, not on two numbers:
        ``'lookup'`` there takes the best of the grid ``h = j / 8`` (its
        powers of ``kappa`` from one ``exp``) and, for the pairs a bound
        from the grid does not rule out, refines it by six safeguarded
        Newton steps (two vectorized ``exp`` each, where the search costs
        about 120 per pair); its merges lose at most about 1e-10 of
        ``||W_m||^2 + ||W_n||^2`` more than the search's, and never keep a
        point worse than ``z = x_m`` or ``z = x_n``.""",
         """multi_class : {'crammer_singer', 'ovr'}, default='crammer_singer'
        How three or more classes are learned (the names of
        :class:`sklearn.svm.LinearSVC`): ``'crammer_singer'``, one shared
        support set for every class (the multi-class SVM of the BSGD
        paper); ``'ovr'``, one-vs-rest, one binary model (and budget) per
        class.  Binary problems are learned by the one binary model either
        way.""",
         class_weight_doc("its step: ``x_t`` is appended with coefficient\n"
                          "        ``y_t w / (alpha t)`` (nothing for ``w = 0``)"),
         kernel_doc(),
         stream_doc(max_iter_note="  One pass is the\n        online setting; "
                                  "more passes continue the step count ``t``.",
                    random_note=" (the update rule itself draws nothing)")],
        attributes_doc(
            rows="n_rows",
            dual_coef="Coefficients ``alpha_i`` of the support vectors: one row for\n"
                      "        binary problems; one row per class otherwise, over the shared\n"
                      "        support vectors (``'crammer_singer'``: ``dual_coef_[c, i] =\n"
                      "        alpha_{i,c}``) or zeros outside each class's own block\n"
                      "        (``'ovr'``).  With merging, support vectors are new points, not\n"
                      "        training examples.",
            n_support="(n_learners,)\n        Support vectors per learner: one learner "
                      "for binary problems and\n        for ``'crammer_singer'`` (the size "
                      "of the shared set), one per\n        class for ``'ovr'``.",
            multiclass_mistake="``'crammer_singer'``: ``argmax_c f_c(x) != y``,\n"
                               "        ties to the lowest class index; ``'ovr'``: the true "
                               "class's\n        score not strictly the largest",
            n_updates="Rounds with ``y f(x) < 1`` (``'crammer_singer'``: ``f_y - f_r < 1``),\n"
                      "        each of which appends a vector, summed over the learners.",
            extra="""t_ : int
        The step counter ``t``: training rounds seen so far (every pass and
        call), as in :class:`sklearn.linear_model.SGDClassifier` minus one.
    n_maintenance_ : ndarray of shape (n_learners,)
        Budget maintenance steps made by each learner.
    degradation_ : ndarray of shape (n_learners,)
        Sum, per learner, of the squared RKHS norms of the changes the
        maintenance steps made (the paper's "weight degradation"; with
        ``'crammer_singer'`` summed over the classes)."""),
        notes="""The shrink by ``1 - 1/t`` is O(1): coefficients are stored as
    ``w_i = alpha t a_i`` under one global scale ``1 / (alpha t)``, so the ties
    between never-changed vectors (all ``|a_i| = 1 / (alpha t)``) stay exact
    (with ``'crammer_singer'``, rows ``W_i = alpha t a_i``; a new one is
    ``e_y - e_r``).
    Removal costs O(B) per maintenance step; projection keeps the Gram
    matrix of the support set and its Cholesky factor (O(B^2) memory), and
    a step costs O(B^2) (the factor loses a row by Givens rotations, then
    two triangular solves); merging searches the partner with O(B) kernel
    values (read from the round's kernel row when the vector to merge is
    the current example, the usual case) plus, per same-signed candidate,
    a table look-up and two ``exp`` (``merge_search='lookup'``) or a
    golden-section search of about 120 ``exp`` (``'golden'``), and stores
    the merged point (dense, also for sparse input).

    A ``'crammer_singer'`` round costs O(B (d + k)) for ``k`` classes
    (kernel values and class scores), against O(B d) for a binary round;
    a merging step computes ``||W_i||^2`` (kept per vector), ``<W_m, W_n>``
    and ``kappa`` per candidate, O(B (d + k)), and its searches are O(1)
    per probe: ``||W_z(h)||^2 = ||W_m||^2 A^2 + ||W_n||^2 B^2 + 2 <W_m,
    W_n> A B`` with ``A = kappa^{(1-h)^2}``, ``B = kappa^{h^2}``.  ``budget`` counts stored vectors: at equal memory,
    one-vs-rest has ``budget // n_classes`` per class.""",
        references="""Z. Wang, K. Crammer and S. Vucetic, "Breaking the curse of
    kernelization: budgeted stochastic gradient descent for large-scale SVM
    training", Journal of Machine Learning Research 13, 3103-3131, 2012.

    T. Glasmachers and S. Qaadan, "Speeding up budgeted stochastic gradient
    descent SVM training with precomputed golden section search", Machine
    Learning, Optimization, and Data Science (LOD), 2018.

    S. Shalev-Shwartz, Y. Singer, N. Srebro and A. Cotter, "Pegasos: primal
    estimated sub-gradient solver for SVM", Mathematical Programming 127,
    3-30, 2011.

    K. Crammer and Y. Singer, "On the algorithmic implementation of
    multiclass kernel-based vector machines", Journal of Machine Learning
    Research 2, 265-292, 2001.

    N. Djuric, L. Lan, S. Vucetic and Z. Wang, "BudgetedSVM: a toolbox for
    scalable SVM approximations", Journal of Machine Learning Research 14,
    3813-3817, 2013.""",
        examples=""">>> from sklearn.datasets import load_digits, make_moons
    >>> from skbudget import BudgetedSGDClassifier
    >>> X, y = make_moons(1000, noise=0.1, random_state=0)
    >>> clf = BudgetedSGDClassifier(budget=50, alpha=1e-3, gamma=2.0,
    ...                             random_state=0).fit(X, y)
    >>> int(clf.n_support_[0]) <= 50
    True
    >>> clf.score(X, y) > 0.9
    True

    Ten classes on one support set of 100 vectors:

    >>> X, y = load_digits(return_X_y=True)
    >>> clf = BudgetedSGDClassifier(budget=100, gamma=0.05,
    ...                             random_state=0).fit(X / 16, y)
    >>> clf.dual_coef_.shape
    (10, 100)
    >>> clf.score(X / 16, y) > 0.9
    True""",
    )

    _declaration = Declaration(
        test_params=(dict(budget=7, gamma=1.0, random_state=0),
                     dict(budget=7, gamma=1.0, random_state=0, maintenance="projection")),
        model_variants=tuple(dict(maintenance=m, merge_search=s, multi_class=c)
                             for m, s in (("removal", "lookup"), ("projection", "lookup"),
                                          ("merging", "lookup"), ("merging", "golden"))
                             for c in ("crammer_singer", "ovr")),
        averaging=ExpansionAverage(
            "the union of the support sets, its coefficients in the units of the models' "
            "mean step counter ``t``; ``compress`` brings it back to the budget by the "
            "maintenance rule (every rule, both ``multi_class`` modes)",
            learner_rule=PegasosState, shared_learner_rule=SharedPegasosState, compresses=True),
        shared_multiclass=SharedMulticlass("multi_class", shared="crammer_singer",
                                           one_vs_rest="ovr"),
        weights=("sample_weight", "class_weight"),
    )

    _parameter_constraints: dict = {
        **BaseKernelExpansionClassifier._parameter_constraints,
        **BUDGET,
        # Pegasos keeps sum |alpha_i| <= 1 / alpha; the maintenance squares the
        # coefficients: 1 / alpha <= 1e100 keeps every square and sum finite
        "alpha": [RealNumber(_MIN_ALPHA, None, closed="left")],
        "maintenance": [StrOptions(set(_MAINTENANCE))],
        "merge_search": [StrOptions(set(_MERGE_SEARCH))],
        "class_weight": CLASS_WEIGHT_CONSTRAINT,
        **MULTI_CLASS_CONSTRAINT,
    }
    # the weights apply per call (a 'balanced' weight to each fit call's y)
    _call_params = BaseKernelExpansionClassifier._call_params + ("class_weight",)

    def __init__(self, *, budget=100, alpha=1e-4, maintenance="merging",
                 merge_search="lookup", multi_class="crammer_singer", class_weight=None,
                 kernel="rbf", gamma="scale", degree=3, coef0=0.0, kernel_params=None,
                 max_iter=1, shuffle=True, random_state=None, warm_start=False, verbose=0,
                 n_jobs=None):
        keep_params(self, locals())

    def _validate_params(self):
        super()._validate_params()
        if self.maintenance == "merging" and self.kernel != "rbf":
            raise ValueError(
                f"maintenance='merging' needs kernel='rbf' (merged points have a closed "
                f"form only for the Gaussian kernel); got kernel={self.kernel!r}. Use "
                f"maintenance='projection' or 'removal' with other kernels."
            )

    def _validate_fit_input(self, X, y, reset):
        X, y, classes, gamma = super()._validate_fit_input(X, y, reset)
        if (self.maintenance == "merging" and sp.issparse(X)
                and X.shape[1] > STORE_MAX_SPARSE_FEATURES):
            raise ValueError(
                f"maintenance='merging' stores merged points as dense rows: sparse input "
                f"may have at most {STORE_MAX_SPARSE_FEATURES} features; got {X.shape[1]}. "
                f"Use maintenance='projection' or 'removal'."
            )
        return X, y, classes, gamma

    def _fit(self, X, y, continuing, sample_weight=None):
        super()._fit(X, y, continuing, sample_weight)
        _warn_if_classes_dropped(self)
        return self

    def _make_learner(self, rng):
        rule = _MAINTENANCE[self.maintenance]
        if self._shared_support:
            return MulticlassBSGDLearner(n_classes=len(self.classes_), budget=self.budget,
                                         lam=float(self.alpha), maintenance=rule,
                                         merge_search=_MERGE_SEARCH[self.merge_search])
        return BudgetedSGDLearner(budget=self.budget, lam=float(self.alpha), maintenance=rule,
                                  merge_search=_MERGE_SEARCH[self.merge_search])

    def _update_fitted_attributes(self):
        super()._update_fitted_attributes()
        self.t_ = int(self._learners[0].n_steps)
        self.n_maintenance_ = np.array([lr.n_maintenance for lr in self._learners],
                                       dtype=np.int64)
        self.degradation_ = np.array([lr.degradation for lr in self._learners])


# the warnings below point at the caller of fit (through _fit,
# _atomic_fit, fit and scikit-learn's _fit_context wrapper; the shared
# model's warnings are one call deeper)
_WARN_STACKLEVEL = 6


def _warn_if_classes_dropped(est):
    """Warn when a learner of a one-vs-rest (or binary) model holds no
    support vector of its positive class (binary: of either class) under a
    kernel whose values are positive (the catalogue's ``positive``;
    callables: unknown, no warning): its score then
    never favours that class.  At a small budget BSGD's maintenance drops
    the rare side first (its vectors are the oldest, and removal's ties go
    to the oldest), e.g. many classes one-vs-rest, or a rare class in a
    binary stream.  (With other kernels a one-signed expansion may still
    score both signs: no warning.)"""
    if est._shared_support:
        _warn_if_shared_classes_dropped(est)
        return
    if not _has_positive_values(est.kernel):
        return
    offsets = np.concatenate([[0], np.cumsum(est.n_support_)])
    if len(est.classes_) == 2:
        coef = est.dual_coef_[0]
        missing = [c for c, present in zip(est.classes_.tolist(),
                                           [(coef < 0).any(), (coef > 0).any()]) if not present]
        if missing:
            warnings.warn(
                f"{type(est).__name__} holds no support vector of class {missing[0]!r}: its "
                f"score never favours that class (kernel={est.kernel!r}). Its "
                f"examples are too rare for the budget ({est.budget}) to keep one. Pass "
                f"class_weight='balanced' (or a dict giving the rare class more weight), or a "
                f"larger budget.", UserWarning, stacklevel=_WARN_STACKLEVEL)
        return
    missing = [c for k, c in enumerate(est.classes_.tolist())
               if not (est.dual_coef_[k, offsets[k]:offsets[k + 1]] > 0).any()]
    if missing:
        warnings.warn(
            f"{len(missing)} of the {len(est.classes_)} one-vs-rest learners of "
            f"{type(est).__name__} hold no support vector of their own class "
            f"({_listed(missing)}): they "
            f"never vote for it, and those classes are rarely or never predicted. Each "
            f"learner sees its class in about 1 / n_classes of the examples, too rarely for "
            f"its budget ({est.budget}) to keep one. Use a larger budget, "
            f"maintenance='merging', or one support set shared by all classes (class_weight "
            f"weighs an example alike in every learner: it is the remedy for a rare class of "
            f"a binary problem).", UserWarning, stacklevel=_WARN_STACKLEVEL)


def _warn_if_shared_classes_dropped(est):
    """The shared multi-class model's counterpart of
    :func:`_warn_if_classes_dropped`: warn when its budget is smaller than
    the number of classes (some class then never holds a vector of its
    own), or, under a kernel whose values are positive, when a class has
    no support vector with a positive coefficient for it: its score never
    exceeds the others' on the support set's side, and it is rarely or
    never predicted."""
    n_classes = len(est.classes_)
    if est.budget < n_classes:
        warnings.warn(
            f"{type(est).__name__}'s budget ({est.budget}) is smaller than the {n_classes} "
            f"classes: the shared support set cannot hold a vector of every class, and some "
            f"classes are rarely or never predicted. Use a budget of several vectors per "
            f"class.", UserWarning, stacklevel=_WARN_STACKLEVEL + 1)
        return
    if not _has_positive_values(est.kernel):
        return
    missing = [c for k, c in enumerate(est.classes_.tolist())
               if not (est.dual_coef_[k] > 0).any()]
    if missing:
        warnings.warn(
            f"{len(missing)} of the {n_classes} classes of {type(est).__name__} "
            f"({_listed(missing)}) "
            f"hold no support vector with a positive coefficient on the shared support set "
            f"(budget {est.budget}): they are rarely or never predicted. Use a larger budget or "
            f"maintenance='merging'.", UserWarning, stacklevel=_WARN_STACKLEVEL + 1)


def _has_positive_values(kernel):
    """Whether the catalogue says every value of ``kernel`` is positive
    (callables: unknown, so no)."""
    named = named_kernel(kernel)
    return named is not None and named.positive


def _listed(classes):
    """The first ten of ``classes``, for a message."""
    return ", ".join(repr(c) for c in classes[:10]) + (", ..." if len(classes) > 10 else "")
