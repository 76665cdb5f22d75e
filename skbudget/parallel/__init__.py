"""One budget model from many workers: iterative parameter mixing.

The average of ``K`` kernel expansions is one expansion: the union of their
support sets, each coefficient multiplied by its model's weight.  The
model's own budget maintenance then brings that union back to ``B``.
Iterative parameter mixing (McDonald, Hall & Mann 2010) repeats it: every
worker streams ``mix_every`` rows of its shard, the models are averaged and
compressed, and every worker continues from the result.

* :func:`average` -- the fitted model whose decision function is
  ``sum_k w_k f_k``, exactly;
* :func:`compress` -- a model over its budget brought back to it by its own
  maintenance rule;
* :class:`ParameterMixingClassifier` -- the meta-estimator that trains one
  model data-parallel, on a ``dask.distributed`` cluster or on local
  threads.

The user guide's "Parameter mixing" page gives the cost model and guidance on
``mix_every``.
"""

from skbudget._mixing import averaged_model, compressed_model
from skbudget.parallel._estimator import ParameterMixingClassifier

__all__ = ["ParameterMixingClassifier", "average", "compress"]


def average(models, weights=None):
    """The weighted average of fitted models, as one fitted model.

    The decision function of the result is ``sum_k weights[k] f_k(x)``,
    exactly (before any compression): its support set is the concatenation
    of the models' support sets (model by model, oldest first within each),
    every coefficient multiplied by its model's weight, its intercept the
    weighted sum of theirs.  Binary, one-vs-rest and shared multi-class
    models average alike (learner by learner).  The result may hold more
    vectors than ``budget``: :func:`compress` brings it back.
    :class:`~skbudget.FourierOGDClassifier` models, linear models on the
    same random features (the same ``random_weights_``), average as
    ``coef_ = sum_k weights[k] coef_k``.

    Which estimators average, and why the others do not (each refusal
    names the estimator and its reason): the user guide, "Parameter mixing".

    Its online state continues ``partial_fit`` as if it had been the model
    all along:

    - :class:`~skbudget.BudgetedSGDClassifier`: the step counter ``t_`` is
      the weighted mean of the models' (rounded); the stored coefficients
      are ``alpha t a_i`` under the scale ``1 / (alpha t)``, so the next
      round shrinks the average by ``1 - 1/(t + 1)`` and steps by ``1 /
      (alpha (t + 1))``.  (Models that continued one model for the same
      number of rows, as in parameter mixing, share their ``t``.)
      ``n_maintenance_`` and ``degradation_`` add up.
    - :class:`~skbudget.KernelOGDClassifier` (``budget=None`` only): its
      decay is folded into the coefficients (the scale starts at 1).
    - :class:`~skbudget.FourierOGDClassifier`: ``coef_`` as above, on the
      models' common ``random_weights_``.
    - :class:`~skbudget.KernelPerceptron` (``hypothesis='last'`` only): the
      threshold is the weighted sum of the models'; the history of
      hypotheses starts anew at the average (``n_updates_`` counts the
      updates after it).
    - The online record: ``n_rounds_`` and ``n_mistakes_`` (and
      ``n_updates_``, but see above) add up; the models' rounds have no
      order among each other, so ``mistake_curve_`` has a single point at
      the combined count, and rounds after the average add points as usual.

    The models are not changed.

    Parameters
    ----------
    models : sequence of fitted estimators
        Models of one class (:class:`~skbudget.BudgetedSGDClassifier`,
        :class:`~skbudget.FourierOGDClassifier`,
        :class:`~skbudget.KernelOGDClassifier` with ``budget=None``,
        :class:`~skbudget.KernelPassiveAggressive` or
        :class:`~skbudget.KernelPerceptron` with ``hypothesis='last'``)
        fitted with the same parameters, classes, number of features,
        resolved ``gamma_`` and input format (dense or CSR);
        FourierOGDClassifier models on the same random features.
    weights : array-like of shape (n_models,), default=None
        Finite non-negative weights, not all 0 (None: ``1 / n_models`` each).
        They need not sum to 1, and their sum need not be finite (the
        weighted mean of the step counters divides them by the largest
        first); but the average's coefficients ``weights[k] a_i`` (and
        their sum) must be: larger weights are refused, naming them.

    Returns
    -------
    model : estimator
        A new fitted model of the models' class.

    Raises
    ------
    TypeError
        For an estimator whose online state has no defined average (named
        with the reason), or models of different classes.
    ValueError
        For parameters under which the models have no defined average
        (named with the reason: a KernelPerceptron's ``hypothesis`` other
        than 'last', a KernelOGDClassifier's ``budget``), models fitted
        differently (FourierOGDClassifier models of different random
        features included), or bad weights (weights so large that the
        average's coefficients overflow included).

    References
    ----------
    R. McDonald, K. Hall and G. Mann, "Distributed training strategies for the
    structured perceptron", Human Language Technologies: NAACL 2010, 456-464.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from skbudget import BudgetedSGDClassifier
    >>> from skbudget.parallel import average, compress
    >>> X, y = make_moons(400, noise=0.1, random_state=0)
    >>> models = [BudgetedSGDClassifier(budget=10, gamma=2.0, random_state=0).fit(
    ...     X[i::2], y[i::2])
    ...           for i in range(2)]
    >>> mixed = average(models)
    >>> bool(np.allclose(mixed.decision_function(X),
    ...                  sum(0.5 * m.decision_function(X) for m in models)))
    True
    >>> int(mixed.n_support_[0]), int(compress(mixed).n_support_[0])
    (19, 10)
    """
    return averaged_model(models, weights)


def compress(model):
    """A model over its budget, brought back to ``budget`` by its own
    maintenance rule.

    :class:`~skbudget.BudgetedSGDClassifier` applies its ``maintenance``
    step (removal, projection or merging; the arg-mins over the whole
    support set, ties to the oldest) until every learner holds at most
    ``budget`` vectors: the steps a stream would make after each addition,
    ``n_maintenance_`` and ``degradation_`` counting them.  A model within
    its budget, the unbudgeted :class:`~skbudget.KernelPassiveAggressive`,
    :class:`~skbudget.KernelPerceptron` and
    :class:`~skbudget.KernelOGDClassifier` (whose average keeps the whole
    union), and :class:`~skbudget.FourierOGDClassifier` (a linear model of
    fixed size), come back unchanged.

    Parameters
    ----------
    model : fitted estimator
        A model of a class :func:`average` takes.

    Returns
    -------
    model : estimator
        A new fitted model; ``model`` itself is not changed.

    References
    ----------
    Z. Wang, K. Crammer and S. Vucetic, "Breaking the curse of
    kernelization: budgeted stochastic gradient descent for large-scale SVM
    training", Journal of Machine Learning Research 13, 3103-3131, 2012.

    R. McDonald, K. Hall and G. Mann, "Distributed training strategies for the
    structured perceptron", Human Language Technologies: NAACL 2010, 456-464.
    """
    return compressed_model(model)
