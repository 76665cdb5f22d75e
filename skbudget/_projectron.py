"""Projectron and Projectron++: bounded support sets by projection."""


from skbudget._base import BaseKernelExpansionClassifier, MultiClassModeMixin
from skbudget._declaration import CannotAverage, Declaration, SharedMulticlass
from skbudget._docstrings import (attributes_doc, docstring, kernel_doc, multi_class_doc,
                                  stream_doc)
from skbudget._params import MULTI_CLASS_CONSTRAINT, Integer, RealNumber, keep_params
from skbudget._projectron_fast import (ProjectronLearner, ProjectronPlusPlusLearner,
                                       SharedProjectronLearner, SharedProjectronPlusPlusLearner)

__all__ = ["Projectron", "ProjectronPlusPlus"]

_OWN_PARAMETERS = """\
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
        kernels with other self-similarities (linear, polynomial).  With
        ``multi_class='crammer_singer'`` the distance compared with ``eta``
        is that of the update ``(e_y - e_r) k(x_t, .)``, ``sqrt(2) ||delta||``.
    budget : int or None, default=None
        Optional hard cap on the support-set size: once it holds ``budget``
        vectors, every further update is a projection (nothing is added, and
        nothing is ever removed).  One-vs-rest (``multi_class='ovr'``) it
        caps each class's learner (up to ``n_classes * budget`` vectors);
        with ``multi_class='crammer_singer'`` the whole model.  None: no cap
        (the support set still stays finite on a bounded domain when
        ``eta > 0``)."""

_MULTI_CLASS_NOTE = """
        An update moves along the projection of ``(e_y - e_r) k(x_t, .)``:
        every class's part is projected with the same kernel coefficients
        ``d = K^-1 k_t``, and the squared norms ``||P k_t||²`` and
        ``delta²`` count twice."""

_KERNEL_NOTE = """
        It should be positive definite: a vector is only added when its
        distance to the span of the support set is positive, so with an
        indefinite kernel (e.g. some 'sigmoid' settings) the support set
        stays small."""


def _projectron_doc(summary, name, *, pp_updates, see_also):
    return docstring(
        summary,
        [kernel_doc(kernel_note=_KERNEL_NOTE), _OWN_PARAMETERS,
         multi_class_doc(budget_note=_MULTI_CLASS_NOTE),
         stream_doc(unit="epoch",
                    max_iter_note="  The algorithm is\n        online: the paper makes a "
                                  "single pass.",
                    random_note=" (the update rule itself draws nothing)")],
        attributes_doc(
            unit="epoch",
            rows="n_rows",
            dual_coef="Their signed coefficients ``alpha_i``: one row for binary problems;\n"
                      "        one row per class otherwise, over the shared support vectors\n"
                      "        (``'crammer_singer'``: ``dual_coef_[c, i] = alpha_{i,c}``) or\n"
                      "        zeros outside each class's own block (``'ovr'``).",
            mistake="``y_t f(x_t) <= 0``",
            multiclass_mistake="``'crammer_singer'``: ``argmax_c f_c(x) != y``,\n"
                               "        ties to the lowest class index; ``'ovr'``: the true "
                               "class's\n        score not strictly the largest",
            n_support="(n_learners,)\n        Support vectors per learner: one learner "
                      "for binary problems and\n        for ``'crammer_singer'`` (the size "
                      "of the shared set), one per\n        class for ``'ovr'``.",
            n_updates=f"Rounds whose update rule fired (additions, projections{pp_updates}),\n"
                      "        summed over the learners.",
        ),
        see_also=see_also,
        notes="""The model keeps the Cholesky factor of the support-set Gram matrix,
    grown by one row per added vector: ``O(|S|²)`` time per update (a mistake
    or margin error; other rounds cost ``O(|S|)``), ``O(|S|²/2)`` memory per
    learner.  Multi-class problems are one-vs-rest by default, each class
    with its own support set; ``multi_class='crammer_singer'`` keeps one
    support set for every class, each vector with a row of ``n_classes``
    coefficients: a round then also costs ``O(|S| n_classes)`` for the class
    scores, and an update ``O(|S|²)`` (the two classes it moves).""",
        references="""F. Orabona, J. Keshet and B. Caputo, "The Projectron: a Bounded
    Kernel-Based Perceptron", ICML 2008.

    F. Orabona, J. Keshet and B. Caputo, "Bounded Kernel-Based Online
    Learning", Journal of Machine Learning Research 10, 2643-2666, 2009.""",
        examples=f""">>> from sklearn.datasets import make_moons
    >>> from skbudget import {name}
    >>> X, y = make_moons(500, noise=0.1, random_state=0)
    >>> clf = {name}(eta=0.3, gamma=2.0, max_iter=3, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.9), bool(clf.n_support_[0] < 100)
    (True, True)""",
    )


class Projectron(MultiClassModeMixin, BaseKernelExpansionClassifier):
    __doc__ = _projectron_doc(
        """Projectron: a kernel perceptron whose support set stays bounded
    by projecting instead of adding.

    On a mistake (``y_t f(x_t) <= 0``) the Projectron computes the
    projection of ``k(x_t, .)`` onto the span of the support set ``S``,
    ``d = K^-1 k_t``, and its distance ``||delta||`` to that span.  If
    ``||delta|| <= eta`` the coefficients become ``alpha_i += y_t d_i``
    (``S`` unchanged); otherwise ``x_t`` is added with ``alpha = y_t``.  The
    first mistake always adds.  On a bounded input domain the support set is
    finite for every ``eta > 0``, but its size is not fixed in advance: use
    ``eta`` (or the optional hard cap ``budget``) to trade accuracy for
    sparsity.""",
        "Projectron",
        pp_updates="",
        see_also="ProjectronPlusPlus : Also updates, by projection only, on margin errors.",
    )

    _declaration = Declaration(
        test_params=(dict(budget=7, gamma=1.0, random_state=0),),
        model_variants=(dict(eta=0.1), dict(budget=None),
                        dict(eta=0.1, multi_class="crammer_singer"),
                        dict(budget=None, multi_class="crammer_singer")),
        averaging=CannotAverage(
            "it keeps the inverse Gram matrix of its own examples and a projection threshold "
            "on them, which an average does not define"),
        shared_multiclass=SharedMulticlass("multi_class", shared="crammer_singer",
                                           one_vs_rest="ovr"),
    )

    _learner_class = ProjectronLearner
    _shared_learner_class = SharedProjectronLearner

    _parameter_constraints: dict = {
        **BaseKernelExpansionClassifier._parameter_constraints,
        "eta": [RealNumber(0.0, None, closed="left")],
        "budget": [Integer(1, None, closed="left"), None],
        **MULTI_CLASS_CONSTRAINT,
    }

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, kernel_params=None,
                 eta=0.1, budget=None, multi_class="ovr", max_iter=1, shuffle=True,
                 random_state=None, warm_start=False, verbose=0, n_jobs=None):
        keep_params(self, locals())

    def _make_learner(self, rng):
        rule = dict(eta=float(self.eta), budget=-1 if self.budget is None else int(self.budget))
        if self._shared_support:
            return self._shared_learner_class(n_classes=len(self.classes_), **rule)
        return self._learner_class(**rule)


class ProjectronPlusPlus(Projectron):
    __doc__ = _projectron_doc(
        """Projectron++: the Projectron plus projected updates on margin
    errors.

    Mistakes are handled as by :class:`Projectron`.  In addition, on a
    margin error (``0 < y_t f(x_t) < 1``, hinge loss ``l = 1 - y_t f(x_t)``)
    the hypothesis moves along the projection ``P k(x_t, .)``, never adding
    a support vector: with ``||P k_t||² = k_tᵀ K^-1 k_t > 0`` and
    ``l >= ||delta|| / eta``, ``alpha_i += y_t tau d_i`` with
    ``tau = min(l / ||P k_t||², 2 (l - ||delta|| / eta) / ||P k_t||², 1)``
    (the form of the journal version, which shrinks ``tau`` to keep the
    progress of the mistake bound non-negative).  With ``eta = 0`` only
    points exactly in the span (``||delta|| = 0``) get a margin update.""",
        "ProjectronPlusPlus",
        pp_updates=", margin updates",
        see_also="Projectron : The same rule on mistakes only.",
    )

    # the same test parameters, model variants and state as Projectron's
    # (declared, not inherited: the digests of both are kept)
    _declaration = Projectron._declaration

    _learner_class = ProjectronPlusPlusLearner
    _shared_learner_class = SharedProjectronPlusPlusLearner
