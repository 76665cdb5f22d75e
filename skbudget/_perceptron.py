"""KernelPerceptron: the dual perceptron with the Khardon-Wachman variants."""

import numpy as np
from sklearn.utils._param_validation import StrOptions

from skbudget._averaging import OnlyWith, PerceptronAverage, PerceptronState
from skbudget._base import BaseKernelExpansionClassifier
from skbudget._declaration import Declaration
from skbudget._docstrings import attributes_doc, docstring, kernel_doc, stream_doc
from skbudget._params import Integer, RealNumber, keep_params
from skbudget._perceptron_fast import KernelPerceptronLearner

__all__ = ["KernelPerceptron"]


class KernelPerceptron(BaseKernelExpansionClassifier):
    __doc__ = docstring(
        """Kernel Perceptron with margin, lambda-trick, alpha-bound and the
    last / voted / longest-survivor / averaged hypotheses.

    The dual (kernel) perceptron of Khardon & Wachman (2007, Fig. 2):
    several epochs over the training set; on example ``x_j`` it scores
    ``SUM = w(x_j) + [m_j > 0] y_j lam k(x_j, x_j)`` and updates
    (``m_j += 1``, ``theta -= eta0 y_j C``) when the prediction with margin
    ``tau`` is wrong and ``m_j < alpha_bound``.  The support set is not
    bounded: every example updated on stays.

    The defaults are the classic kernel perceptron (``eta0=1``, no
    threshold, no margin, no lambda-trick, no alpha-bound, last
    hypothesis) with an RBF kernel and 10 shuffled epochs.  The paper's
    settings are ``kernel='linear', eta0=0.1, theta_init='kappa',
    threshold_step='kappa', max_iter=100`` with ``tau``, ``lam`` and
    ``alpha_bound`` searched over ``{0, .125, .25, .5, 1, 2, 4}``,
    ``{0, .125, .25, .5, 1, 2, 4}`` and ``{None, 80, 60, 40, 20, 10, 5}``.""",
        [kernel_doc(gamma_note=""),
         """eta0 : float, default=1.0
        Learning rate ``eta``: each update adds ``eta0 * y_j`` to the
        coefficient of ``x_j``.
    theta_init : float or 'kappa', default=0.0
        Initial threshold; ``'kappa'`` is ``kappa = mean_i k(x_i, x_i)`` over
        the first training data (the paper's choice).
    threshold_step : float or 'kappa', default=0.0
        The paper's ``C``: each update moves the threshold by
        ``-eta0 * y_j * C`` (the paper prints the opposite sign, a typo).
    tau : float, default=0.0
        Margin, in units of kappa: predict 0 (forcing an update) when
        ``|SUM - theta| <= tau * kappa``.
    lam : float, default=0.0
        Lambda-trick: an example already updated on gets
        ``y_j * lam * k(x_j, x_j)`` added to its own score.
    alpha_bound : int or None, default=None
        At most this many updates per training example (None: unbounded).
    hypothesis : {'last', 'voted', 'longest_survivor', 'averaged'}, default='last'
        Which hypothesis predicts: the final one; the vote of every
        hypothesis weighted by the rounds it survived (Freund & Schapire);
        the one that survived longest; or their vote-weighted average
        (a single kernel expansion).""",
         stream_doc(max_iter=10, unit="epoch", max_iter_note="",
                    warm_start_note=" (examples of a new\n        ``fit`` call are new "
                                    "examples: their ``m_j`` start at 0)")],
        attributes_doc(
            unit="epoch",
            support_vectors="Every example updated on, learner by learner, in the order of its\n"
                            "        first update.",
            dual_coef=("Coefficients ``eta0 * m_j * y_j`` of the predicting hypothesis\n"
                       "        (for ``'voted'``, of the last hypothesis: the vote is not a "
                       "single\n        expansion; :meth:`decision_function` computes it)."),
            intercept="``-theta`` of the predicting hypothesis.",
            mistake="``y_j (SUM - theta) <= 0``",
            n_updates="Updates made, summed over the learners.",
            extra="""kappa_ : float
        ``mean_i k(x_i, x_i)`` over the first training data.""",
        ),
        references="""R. Khardon and G. Wachman, "Noise Tolerant Variants of the Perceptron
    Algorithm", Journal of Machine Learning Research 8, 227-248, 2007.

    Y. Freund and R. E. Schapire, "Large Margin Classification Using the
    Perceptron Algorithm", Machine Learning 37(3), 277-296, 1999.""",
        examples=""">>> from sklearn.datasets import make_moons
    >>> from skbudget import KernelPerceptron
    >>> X, y = make_moons(200, noise=0.1, random_state=0)
    >>> clf = KernelPerceptron(hypothesis="voted", random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.95
    True""",
    )

    _declaration = Declaration(
        test_params=(dict(gamma=1.0, random_state=0),),
        model_variants=tuple(dict(hypothesis=h)
                             for h in ("last", "voted", "longest_survivor", "averaged"))
        + (dict(alpha_bound=2, lam=0.1, tau=0.5),),
        averaging=PerceptronAverage(
            "the union of the last hypotheses' expansions, the threshold averaged (the "
            "history of hypotheses starts anew)",
            learner_rule=PerceptronState,
            only_with=(OnlyWith(
                "hypothesis", "last",
                "the voted, averaged and longest-survivor hypotheses are read from each "
                "model's history of updates, which the average of several models does not "
                "have"),)),
    )

    _parameter_constraints: dict = {
        **BaseKernelExpansionClassifier._parameter_constraints,
        "eta0": [RealNumber(0.0, None, closed="neither")],
        "theta_init": [StrOptions({"kappa"}), RealNumber(None, None, closed="neither")],
        "threshold_step": [StrOptions({"kappa"}), RealNumber(None, None, closed="neither")],
        "tau": [RealNumber(0.0, None, closed="left")],
        "lam": [RealNumber(0.0, None, closed="left")],
        "alpha_bound": [Integer(1, None, closed="left"), None],
        "hypothesis": [StrOptions({"last", "voted", "longest_survivor", "averaged"})],
    }
    # the learner keeps every hypothesis: which one predicts may change between calls
    _call_params = BaseKernelExpansionClassifier._call_params + ("hypothesis",)
    # its fitted scalar of its own, checked when a model is loaded
    # (``skbudget._persistence``): the mean of the kernel's diagonal
    _fitted_scalar_constraints = {"kappa_": [RealNumber(None, None, closed="neither")]}

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, kernel_params=None,
                 eta0=1.0, theta_init=0.0, threshold_step=0.0, tau=0.0, lam=0.0, alpha_bound=None,
                 hypothesis="last", max_iter=10, shuffle=True, random_state=None, warm_start=False,
                 verbose=0, n_jobs=None):
        keep_params(self, locals())

    def _init_constants(self, X):
        self.kappa_ = float(np.mean(self._kernel_diagonal(X)))

    def _in_kappa(self, value):
        return self.kappa_ if value == "kappa" else float(value)

    def _make_learner(self, rng):
        return KernelPerceptronLearner(
            eta=self.eta0,
            theta_init=self._in_kappa(self.theta_init),
            threshold_step=self._in_kappa(self.threshold_step),
            margin_width=self.tau * self.kappa_,
            lam=self.lam,
            alpha_bound=np.inf if self.alpha_bound is None else self.alpha_bound,
        )

    def _learner_expansion(self, learner):
        which = "last" if self.hypothesis == "voted" else self.hypothesis
        return learner.hypothesis(which)

    def _raw_scores(self, X):
        if self.hypothesis != "voted":
            return super()._raw_scores(X)
        offsets = np.concatenate([[0], np.cumsum(self.n_support_)])
        out = np.empty((X.shape[0], len(self._learners)))
        for k, learner in enumerate(self._learners):
            vectors = self.support_vectors_[offsets[k]:offsets[k + 1]]
            for start in range(0, X.shape[0], self._predict_chunk_size):
                rows = slice(start, start + self._predict_chunk_size)
                out[rows, k] = learner.voted_scores(self._kernel(X[rows], vectors))
        return out
