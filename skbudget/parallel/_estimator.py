"""The meta-estimator of parameter mixing: :class:`ParameterMixingClassifier`
validates the data, resolves ``gamma`` once over the whole of it, builds the
workers (local threads, ``_local``, or a dask cluster's, ``_dask``) and runs
the rounds' schedule (``_rounds``) on them."""

import numbers

import numpy as np
from joblib import cpu_count
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from skbudget._base import _check_two_classes, _checked_classes
from skbudget._docstrings import samples_method_doc
from skbudget._kernel_catalogue import named_kernel
from skbudget._kernels import compute_gamma
from skbudget._mixing import check_supported, with_common_draw
from skbudget.parallel._dask import (
    _checked_dask_input,
    _current_client,
    _dask_partitions,
    _dask_summary,
    _started_workers,
)
from skbudget.parallel._local import _ThreadWorkers
from skbudget.parallel._rounds import _grouped, _is_dask_collection, _local_shards, _schedule


def _delegated(method, returns, what):
    """The method ``method`` of the meta-estimator: the fitted model's."""

    def delegate(self, X):
        check_is_fitted(self, "estimator_")
        return getattr(self.estimator_, method)(X)

    delegate.__name__ = delegate.__qualname__ = method
    delegate.__doc__ = samples_method_doc(
        f"The mixed model's {what}: ``estimator_.{method}(X)``.",
        f"{returns}\n            The fitted model's {what}.")
    return delegate


class ParameterMixingClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """One budget model trained data-parallel by iterative parameter mixing.

    Each worker streams its own part of the data (its shard: a range of
    rows, or a group of consecutive partitions of a dask collection), one
    ``partial_fit`` of ``mix_every`` rows per round; then the workers'
    models are averaged (:func:`average`, weighted by the rows each
    streamed in the round) and compressed to the budget by the model's own
    maintenance rule (:func:`compress`), and every worker continues from the
    result (McDonald, Hall & Mann 2010).  ``estimator.max_iter`` passes are
    made over every shard.  The fitted ``estimator_`` is an ordinary model
    of the estimator's class.

    With a ``dask.distributed`` client (``client``, or else the current
    one) the workers are dask workers, each keeping its shard and running
    its part of the whole fit in a dask actor: no worker ever holds the
    whole data, and the workers mix among themselves (each round every
    worker sends its model to every other and averages and compresses the
    round's models itself: the same model on every worker, the one the
    threads would mix); the client makes one call to each worker and
    receives the final model.  A NumPy or CSR ``X`` is split into
    contiguous shards that travel to their workers in pieces, one after
    another from the start of the fit (a round waits only for rows not yet
    arrived); the partitions of
    a dask array already in the cluster's memory (persisted) stay where
    they are, each worker's shard being the partitions it holds (but for
    partitions moved to even out the shards' rows); other partitions (a
    data frame's too) are computed by the worker that streams them, each
    when a round reads its rows, and dropped after (a lazily generated
    array is never in memory whole; partitions that share a task, as
    those of ``X - X.mean(axis=0)``, are computed, consecutive ones
    together, on their worker before the first round).
    Without a client the workers are local threads (the compiled loops
    release the GIL).  With one worker the model is the one
    ``estimator.partial_fit`` would give over the same rows in blocks of
    ``mix_every`` (up to rounding).

    Parameters
    ----------
    estimator : estimator
        The model to train: a :class:`~skbudget.BudgetedSGDClassifier`
        (every maintenance rule, both ``multi_class`` modes),
        :class:`~skbudget.FourierOGDClassifier`,
        :class:`~skbudget.KernelOGDClassifier` (``budget=None``),
        :class:`~skbudget.KernelPassiveAggressive` or
        :class:`~skbudget.KernelPerceptron` (``hypothesis='last'``).  The
        last three have no budget: their support set is the union of the
        workers' and grows with every round.  FourierOGDClassifier's
        workers all draw the same random features (with
        ``random_state=None``, from one integer seed drawn per fit, which
        ``estimator_`` shows).  Any other estimator (or parameter) is a
        ``TypeError`` (``ValueError``) naming the reason.  ``gamma='scale'`` (or ``'auto'``)
        is resolved once over the whole data, as a single process would.
        ``shuffle`` is not used: each worker streams its shard in order.
    mix_every : int, default=1000
        Rows each worker streams between two mixings.  Smaller mixes more
        often: closer to the single-stream model, more communication and
        compression (see the user guide).
    n_workers : int, default=None
        Workers to use (at most the partitions of a dask collection).
        None: every worker of the client's cluster, or ``joblib.cpu_count()``
        threads without a client.
    client : distributed.Client, default=None
        The dask client; None takes the current one (``default_client``), or
        local threads when there is none.

    Attributes
    ----------
    estimator_ : estimator
        The fitted model (of the estimator's class), whose online record
        counts every row of every worker (``mistake_curve_``: the workers'
        rounds interleaved in turn).
    classes_ : ndarray of shape (n_classes,)
        The classes.
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_workers_ : int
        Workers that trained.
    n_mixing_rounds_ : int
        Mixings made (averages then compressions).

    See Also
    --------
    average : The weighted average of fitted models.
    compress : A model brought back to its budget.

    Notes
    -----
    Communication per mixing round is ``(K - 1) B (d + k)`` numbers out
    of each of ``K`` workers and as many into each (its model to every
    other worker), for budget ``B``, ``d`` features and ``k`` coefficients
    per vector; the compression makes ``(K - 1) B`` maintenance steps, on
    every worker.  A worker that leaves the cluster during ``fit``, or a
    task that raises, ends ``fit`` with an error; no partly mixed model is
    kept (the estimator keeps what it had).

    References
    ----------
    M. Zinkevich, M. Weimer, A. Smola and L. Li, "Parallelized stochastic
    gradient descent", Advances in Neural Information Processing Systems 23,
    2010.

    R. McDonald, K. Hall and G. Mann, "Distributed training strategies for the
    structured perceptron", Human Language Technologies: NAACL 2010, 456-464.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skbudget import BudgetedSGDClassifier
    >>> from skbudget.parallel import ParameterMixingClassifier
    >>> X, y = make_moons(2000, noise=0.1, random_state=0)
    >>> clf = ParameterMixingClassifier(BudgetedSGDClassifier(budget=50, gamma=2.0),
    ...                                 mix_every=250, n_workers=2).fit(X, y)
    >>> int(clf.estimator_.n_support_[0]) <= 50
    True
    >>> clf.score(X, y) > 0.9
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["partial_fit"])],
        "mix_every": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_workers": [Interval(numbers.Integral, 1, None, closed="left"), None],
        # (a dask client: checked by its methods, without importing dask)
        "client": [None, HasMethods(["submit", "run_on_scheduler"])],
    }

    def __init__(self, estimator, mix_every=1000, n_workers=None, client=None):
        self.estimator = estimator
        self.mix_every = mix_every
        self.n_workers = n_workers
        self.client = client

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Train one model on ``X``, ``y`` with the workers.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame}
            Training data of shape (n_samples, n_features): NumPy, SciPy
            CSR, or a dask collection split along its rows.
        y : {array-like, dask array, dask Series}
            Labels, of shape (n_samples,) (a dask ``y`` split as ``X``).

        Returns
        -------
        self : ParameterMixingClassifier
            The fitted meta-estimator.
        """
        check_supported(self.estimator)
        saved = self.__dict__.copy()
        try:
            return self._fit(X, y)
        except BaseException:
            self.__dict__.clear()       # as before the call (validate_data sets attributes)
            self.__dict__.update(saved)
            raise

    def _fit(self, X, y):
        client = self.client if self.client is not None else _current_client()
        template = with_common_draw(clone(self.estimator))
        if _is_dask_collection(X):
            X, y = _checked_dask_input(X, y, client)
            # on a cluster, the workers read the classes off their shards
            classes, gamma = _dask_summary(X, y, client,
                                           template.gamma if self._resolves_gamma() else None,
                                           classes=client is None)
            partitions = _dask_partitions(X, y)
        else:
            X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
            classes, partitions = _checked_classes(y), None
            gamma = compute_gamma(template.gamma, X) if self._resolves_gamma() else None
        if classes is not None:
            _check_two_classes(classes)
        if gamma is not None:       # resolved once over the whole data
            template.set_params(gamma=gamma)
        n_features = X.shape[1]
        workers = self._workers(client, X, y, partitions, classes)
        try:
            if workers.classes is None:
                workers.classes = _check_two_classes(workers.labels())
            estimator, n_rounds = self._train(workers, template)
        finally:
            workers.close()
        self.estimator_ = estimator
        self.classes_ = estimator.classes_
        self.n_features_in_ = n_features
        self.n_workers_ = len(workers.shards)
        self.n_mixing_rounds_ = n_rounds
        return self

    def _resolves_gamma(self):
        est = self.estimator
        return (isinstance(est.gamma, str) and not callable(est.kernel)
                and "gamma" in named_kernel(est.kernel).params
                and "gamma" not in (est.kernel_params or {}))

    def _workers(self, client, X, y, partitions, classes):
        """The workers, each with its shard (``partitions``: those of a dask
        collection and their lengths, else None)."""
        if client is None:
            n_workers = self.n_workers or cpu_count()
            shards = (_local_shards(X, y, n_workers) if partitions is None
                      else _grouped(*partitions, n_workers))
            return _ThreadWorkers(shards, classes)
        return _started_workers(client, X, y, partitions, classes, self.n_workers,
                                self.mix_every)

    def _train(self, workers, template):
        """The mixing rounds: every pass, every worker's next ``mix_every``
        rows per round; returns the mixed model and the number of mixings."""
        rounds = _schedule([shard.n_rows for shard in workers.shards], self.mix_every,
                           template.max_iter)
        # (a dask cluster's workers mix among themselves; threads, here)
        common = workers.fit(template, rounds)
        common.n_iter_ = template.max_iter
        return common, len(rounds)

    decision_function = _delegated(
        "decision_function", "scores : ndarray of shape (n_samples,) or (n_samples, n_classes)",
        "scores")
    predict = _delegated("predict", "y_pred : ndarray of shape (n_samples,)", "class labels")

    def __sklearn_clone__(self):
        """A clone with the same ``client`` (a connection, shared, not
        copied) and clones of the other parameters."""
        params = self.get_params(deep=False)
        client = params.pop("client")
        return type(self)(**{name: clone(value, safe=False) for name, value in params.items()},
                          client=client)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
