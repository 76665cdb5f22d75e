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

The user guide's "Scaling out" page gives the cost model and guidance on
``mix_every``.
"""

import asyncio
import copy
import functools
import numbers
import pickle
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np
import scipy.sparse as sp
from joblib import cpu_count
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)
from threadpoolctl import threadpool_limits

from skbudget._base import _checked_classes
from skbudget._docstrings import samples_method_doc
from skbudget._kernel_catalogue import named_kernel
from skbudget._kernels import compute_gamma
from skbudget._mixing import (
    averaged_model,
    check_supported,
    compressed_model,
    n_stored,
    with_common_draw,
)
from skbudget._record import UNMEASURED, OnlineRecord

__all__ = ["ParameterMixingClassifier", "average", "compress"]

# seconds between two looks at the cluster while a mixing round runs; how
# long a call that lost its worker's connection waits for the scheduler to
# see the worker gone (the error then names it)
_WATCH_INTERVAL, _LOSS_PATIENCE = 0.5, 10.0
# rows of the pieces an in-memory X travels in (at least mix_every)
_PIECE_ROWS = 16_384


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
    names the estimator and its reason): the user guide, "Scaling out".

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


def _mixed(models, weights, origin, record, flags):
    """The models of one mixing round averaged and compressed: the next
    round's common model (``origin``: the model they continued from;
    ``record``: its online record before the round, whose mistake flags
    are ``flags``).

    Within the round the workers' models are several: the record's support
    size is the mixed model's, after the round's last round only (the
    rounds before it ``UNMEASURED``, see ``skbudget._record``)."""
    unmeasured = np.full(len(flags), UNMEASURED, dtype=np.int64)
    # the counts the attributes read are known before the compression, the
    # support size after it: the record is read again with that size
    # the models are the workers' fresh copies: the average is built in
    # the first, and compressed in place
    mixed = compressed_model(averaged_model(models, weights, origin,
                                            record.extended(flags, unmeasured),
                                            copy_first=False), copy_model=False)
    unmeasured[-1:] = n_stored(mixed)
    mixed._record = record.extended(flags, unmeasured)
    return mixed


def _schedule(n_rows, mix_every, n_passes):
    """The rounds of parameter mixing over shards of ``n_rows`` rows: per
    round (every pass, every ``mix_every`` rows), the (worker, (start,
    stop)) of the workers with rows in it, in worker order."""
    return [[(k, (start, min(start + mix_every, n))) for k, n in enumerate(n_rows) if n > start]
            for _ in range(n_passes) for start in range(0, max(n_rows), mix_every)]


def _mix_round(results, tasks, origin, record):
    """The mixed model of one round: the workers' ``results`` (model,
    mistake flags) of ``tasks`` (worker, (start, stop)), weighted by the
    rows each streamed (``origin``, ``record``: as :func:`_mixed`).  The
    same function mixes on the client's threads and on the dask worker that
    mixes."""
    rows = np.array([b - a for _, (a, b) in tasks], dtype=np.float64)
    return _mixed([model for model, _ in results], rows / rows.sum(), origin, record,
                  _interleaved([flags for _, flags in results]))


def _check_two_classes(classes):
    """``classes``, after checking that there are at least two."""
    if len(classes) < 2:
        raise ValueError(f"The number of classes has to be greater than one; got "
                         f"{len(classes)} class")
    return classes


def _interleaved(flags):
    """The workers' mistake flags of one round in the order of a
    round-robin over the workers (the first row of each, then the second,
    ...)."""
    longest = max(len(f) for f in flags)
    table = np.full((longest, len(flags)), 2, dtype=np.uint8)
    for k, f in enumerate(flags):
        table[:len(f), k] = f
    table = table.ravel()
    return table[table != 2]


def _computed(client, collection):
    """The value of a dask ``collection``, computed by ``client`` (None:
    dask's default scheduler)."""
    if client is not None:
        return client.compute(collection).result()
    import dask
    return dask.compute(collection)[0]


def _is_dask_collection(X):
    return type(X).__module__.split(".")[0] in ("dask", "dask_expr")


def _current_client():
    """The current ``dask.distributed`` client, or None (none, or dask not
    installed)."""
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:
        return None


def _stream_rows(model, parts, ranges, classes, first):
    """A worker's part of one mixing round: ``model`` (a fresh estimator
    when ``first``, else the round's common model) continues over the rows
    ``ranges`` of its partitions ``parts`` (pairs ``(X, y)``); returns the
    model and the round's mistake flags."""
    blocks = [(_rows_of(part[0], lo, hi), np.asarray(part[1])[lo:hi])
              for part, (lo, hi) in zip(parts, ranges)]
    X = blocks[0][0] if len(blocks) == 1 else (
        sp.vstack([b[0] for b in blocks], format="csr") if sp.issparse(blocks[0][0])
        else np.concatenate([b[0] for b in blocks]))
    y = np.concatenate([b[1] for b in blocks])
    if first:
        model._keep_mistake_flags = True     # the round's flags (reset below)
        model.partial_fit(X, y, classes=classes)
        del model._keep_mistake_flags
    else:
        model._record = OnlineRecord(keep_flags=True)
        model.partial_fit(X, y)
    flags = model._record.flags()
    # the flags travel once; the counts the model's attributes read go with
    # the record (a copy of the model is checked on loading)
    model._record = OnlineRecord()
    model._update_fitted_attributes()
    return model, flags


def _rows_of(X, lo, hi):
    """Rows ``lo:hi`` of a partition (an array, a CSR matrix or a data
    frame) as NumPy or CSR."""
    if hasattr(X, "iloc"):
        return X.iloc[lo:hi].to_numpy()
    return X[lo:hi]


class _Shard:
    """The rows one worker streams: its partitions, in order, and their
    lengths."""

    def __init__(self, parts, lengths):
        self.parts = list(parts)
        self.lengths = [int(n) for n in lengths]
        self.n_rows = sum(self.lengths)

    def pieces(self, start, stop):
        """(partition indices, (lo, hi) within each) of rows ``start:stop``."""
        indices, ranges, offset = [], [], 0
        for i, n in enumerate(self.lengths):
            lo, hi = max(start - offset, 0), min(stop - offset, n)
            if lo < hi:
                indices.append(i)
                ranges.append((lo, hi))
            offset += n
        return indices, ranges


class _ThreadWorkers:
    """Workers that are local threads (the compiled loops release the GIL);
    each holds its own shard: rows of the input, or partitions of a dask
    collection computed on first use."""

    def __init__(self, shards, classes):
        self.shards, self.classes = shards, classes
        self.pool = ThreadPoolExecutor(max_workers=len(shards))

    def run(self, tasks):
        """Run ``tasks`` (worker, model, rows) at once, each on its own copy
        of the model; their results in order.  The first exception is
        raised once every task has ended."""
        # BLAS on one thread around every task (inside, each partial_fit
        # limits it again and puts back the 1 it found, whatever the order
        # in which the threads end; their own limits alone, racing, could
        # leave the process on one thread)
        with threadpool_limits(limits=1, user_api="blas"):
            futures = [self.pool.submit(self._task, k, copy.deepcopy(model), rows)
                       for k, model, rows in tasks]
            for future in futures:
                future.exception()          # waits
        return [future.result() for future in futures]

    def _task(self, k, model, rows):
        shard = self.shards[k]
        indices, ranges = shard.pieces(*rows)
        for i in indices:
            if _is_dask_collection(shard.parts[i][0]):
                import dask
                shard.parts[i] = dask.compute(*shard.parts[i], scheduler="synchronous")
        return _stream_rows(model, [shard.parts[i] for i in indices], ranges, self.classes,
                            not hasattr(model, "classes_"))

    def close(self):
        self.pool.shutdown(wait=True)


class _Stopped(RuntimeError):
    """A worker's part of a fit ended because the fit was abandoned (a
    peer failed or left, the client gave up): not the cause of the
    failure, which the client reports."""


class _ShardActor:
    """One dask worker's part of parameter mixing, kept on the worker for
    the whole fit (a dask actor): its shard (the partitions it was built
    with, or pieces of an in-memory ``X`` that arrive with :meth:`fit` or
    after it with :meth:`put`) and its part of every round, the mixings
    included.  :meth:`labels` and :meth:`fit` run in the worker's actor
    thread; :meth:`put`, :meth:`deposit` and :meth:`abort` on its event
    loop, beside a fit that computes (they hand over under ``_ready``).

    The workers mix among themselves (doc/user_guide/scaling_out.rst,
    "Cost"): every worker sends its model of a round to the first worker
    (the mixer), which averages and compresses them and sends the mixed
    model, pickled once, to every other worker; each continues from that
    pickle.  The client sends one call per worker for the whole fit and
    receives the final model from the mixer."""

    def __init__(self, lengths, parts=None):
        self.shard = _Shard(parts if parts is not None else [None] * len(lengths), lengths)
        self._ready = threading.Condition()
        self._inbox = {}                # (round, sender) -> pickled message
        self._stopped = None            # why the fit was abandoned

    def labels(self):
        """The classes of the labels of the partitions it was built with
        (checked as scikit-learn's targets)."""
        return _checked_classes(np.concatenate(
            [np.asarray(part[1]) for part in self.shard.parts if part is not None]))

    def _store(self, pieces):
        for index, X, y in pieces:
            self.shard.parts[index] = (X, y)

    async def put(self, pieces):
        """Keep ``pieces`` (index, X, y) of the shard."""
        with self._ready:
            self._store(pieces)
            self._ready.notify_all()

    async def deposit(self, key, blob):
        """Keep a peer's message ``blob`` for round ``key[0]`` (``key``:
        (round, sender index), or (round, -1) for the mixed model)."""
        with self._ready:
            self._inbox[tuple(key)] = blob
            self._ready.notify_all()

    async def abort(self, reason):
        """End a fit that waits (the client or a peer gave it up)."""
        with self._ready:
            self._stopped = self._stopped or reason
            self._ready.notify_all()

    def _wait_for(self, ready):
        """``ready()`` once it is not None, looking again whenever a message
        arrives; ``_Stopped`` when the fit is abandoned (or the actor
        released: its client is gone)."""
        with self._ready:
            while True:
                if self._stopped is not None:
                    raise _Stopped(self._stopped)
                value = ready()
                if value is not None:
                    return value
                if not self._ready.wait(_WATCH_INTERVAL) and (
                        self._key not in self._worker.state.actors):
                    raise _Stopped("the fit's actor was released")

    def _take(self, key):
        """The message ``key`` (round, sender), once it has arrived."""
        return self._wait_for(lambda: self._inbox.pop(key, None))

    def _send(self, index, key, blob):
        """Send ``blob`` to peer ``index``'s :meth:`deposit` (without
        waiting: the worker's event loop sends it; a failure abandons this
        worker's fit).  The call is the one a dask ``Actor`` handle makes,
        straight to the peer worker; a handle built on a worker would bind
        a client of its own to the scheduler first."""
        from distributed.protocol import to_serialize
        address, actor = self._peers[index]
        worker = self._worker

        async def send():
            try:
                reply = await worker.rpc(address).actor_execute(
                    function="deposit", actor=actor,
                    args=[to_serialize(key), to_serialize(blob)], kwargs={})
                failure = None if reply["status"] == "OK" else repr(reply["exception"])
            except Exception as exc:        # the peer's worker lost
                failure = repr(exc)
            if failure is not None:
                await self.abort(f"worker {address} could not be reached: {failure}")

        worker.loop.add_callback(send)

    def fit(self, index, peers, rounds, template, classes):
        """This worker's part of the whole fit (``index``: its place in
        ``peers``, the (address, actor key) of every worker; index 0 mixes):
        for every round of ``rounds`` (per round, the (worker, (start,
        stop)) that stream, in worker order), stream its rows if it has
        any, then mix (index 0) or take the mixed model.  ``template``:
        the pickled unfitted estimator.  The mixer returns the final model,
        pickled; the others None."""
        from distributed import get_worker
        self._worker, self._peers = get_worker(), peers
        self._key = peers[index][1]
        common, blob, record = None, template, OnlineRecord()
        for i, tasks in enumerate(rounds):
            for k, rows in tasks:
                if k == index:
                    mine = pickle.dumps(self._round(pickle.loads(blob), rows, classes),
                                        protocol=5)
                    if index == 0:
                        with self._ready:
                            self._inbox[i, 0] = mine
                    else:
                        self._send(0, (i, index), mine)
            if index != 0:
                if i + 1 < len(rounds):
                    blob = self._take((i, -1))
                continue
            results = [pickle.loads(self._take((i, k))) for k, _ in tasks]
            common = _mix_round(results, tasks, common, record)
            record = common._record
            blob = pickle.dumps(common, protocol=5)
            if i + 1 < len(rounds):
                for k in range(1, len(peers)):
                    self._send(k, (i, -1), blob)
        return blob if index == 0 else None

    def _round(self, model, rows, classes):
        """Stream the shard's rows ``rows`` (start, stop) into ``model``
        (its pieces awaited): :func:`_stream_rows`."""
        indices, ranges = self.shard.pieces(*rows)
        parts = self._wait_for(lambda: None if any(
            self.shard.parts[i] is None for i in indices) else [self.shard.parts[i]
                                                               for i in indices])
        return _stream_rows(model, parts, ranges, classes, not hasattr(model, "classes_"))


class _DaskWorkers:
    """Workers of a ``dask.distributed`` cluster: on each, one actor
    (:class:`_ShardActor`) holds the worker's shard and runs its part of
    the whole fit there, mixing included.  The client makes one call to
    each worker's actor for the fit (straight to the worker with
    ``Client(direct_to_workers=True)``, else the scheduler relays it); the
    models travel between the workers, and the final model comes back to
    the client; the data never travels back.

    ``feeds``: per worker, None (the actor was built with its partitions)
    or the pieces ``(X, y)`` of an in-memory shard to send, in order, one
    after another from the start of the fit (:meth:`_ShardActor.put`): a
    round waits only for pieces that have not arrived.
    """

    def __init__(self, client, addresses, shards, classes, feeds):
        self.client, self.addresses, self.shards, self.classes = (client, addresses, shards,
                                                                  classes)
        self.feeds = feeds
        self.actor_futures, self.actors = [], []
        self.failure, self.ended = None, False

    def start(self):
        """Build the actors (each with its partitions when they are dask
        futures, which the actor's worker then holds)."""
        client = self.client
        for k, (shard, address) in enumerate(zip(self.shards, self.addresses)):
            parts = None if self.feeds[k] is not None else shard.parts
            self.actor_futures.append(client.submit(
                _ShardActor, shard.lengths, parts, actor=True,
                workers=[address], allow_other_workers=False, pure=False))
        outcomes = self._wait(self.actor_futures, self.addresses)
        for ok, value in outcomes:
            if not ok and not isinstance(value, asyncio.CancelledError):
                raise value                 # the constructor's exception
        if not all(ok for ok, _ in outcomes):
            _check_workers(client, self.addresses)
            raise RuntimeError("ParameterMixingClassifier: the cluster cancelled the "
                               "workers' set-up; no model was fitted.")
        self.actors = [value for _, value in outcomes]
        if _reaches_workers(client, self.addresses):
            self.actors = [_direct_actor_class()(actor._cls, actor._address, actor.key)
                           for actor in self.actors]
        for actor, future in zip(self.actors, self.actor_futures):
            # an actor binds to the default client; ours may not be it
            actor._client, actor._future = client, future

    def labels(self):
        """The classes of the labels on every worker."""
        return np.unique(np.concatenate(self._results(
            [actor.labels() for actor in self.actors], self.addresses)))

    def fit(self, template, rounds):
        """Run the whole fit (``rounds``: per round, the (worker, (start,
        stop)) that stream); the final mixed model."""
        peers = [(address, future.key) for address, future in zip(self.addresses,
                                                                    self.actor_futures)]
        template = pickle.dumps(template, protocol=5)
        calls = [actor.fit(k, peers, rounds, template, self.classes)
                 for k, actor in enumerate(self.actors)]
        if any(feed is not None for feed in self.feeds):
            self.client.loop.add_callback(self._feed)
        outcomes = self._wait(calls, self.addresses, early=True)
        if not all(ok for ok, _ in outcomes):
            self._abort("another worker's part of the fit failed")
            outcomes = self._wait(calls, self.addresses)
        self.ended = True
        if self.failure is not None:
            raise self.failure
        return pickle.loads(self._checked(outcomes, self.addresses)[0])

    async def _feed(self):
        """Send every worker the pieces of its shard, in order, one after
        another (on the client's event loop, while the rounds compute)."""
        async def feed(k, actor):
            for i, (X, y) in enumerate(self.feeds[k]):
                await actor.put([(i, X, y)])

        try:
            await asyncio.gather(*[feed(k, actor) for k, actor in enumerate(self.actors)
                                   if self.feeds[k] is not None])
        except Exception as exc:
            if not self.ended:
                self.failure = exc
                self._abort(f"the data could not be sent: {exc!r}")

    def _abort(self, reason):
        """Tell every actor to abandon its fit (without waiting)."""
        for actor in self.actors:
            try:
                actor.abort(reason)
            except Exception:           # its worker lost
                pass

    def _results(self, calls, addresses):
        """The results of actor ``calls`` to the workers ``addresses``, in
        order, once all have ended; the first exception raised by a call
        (a worker lost: ``RuntimeError`` naming it)."""
        return self._checked(self._wait(calls, addresses), addresses)

    def _checked(self, outcomes, addresses):
        """The results of ``outcomes``; the first exception a call raised
        of its own (not a fit abandoned because of another's), else a
        worker lost: ``RuntimeError`` naming it."""
        failures = [value for ok, value in outcomes if not ok]
        for value in failures:
            if not isinstance(value, (OSError, _Stopped)):
                raise value                 # the task's own exception
        if failures:
            # an OSError: the connection to its worker lost (or the task's
            # own); else every part stopped because the fit was abandoned
            _check_workers(self.client, addresses, patience=_LOSS_PATIENCE)
            raise next((value for value in failures if not isinstance(value, _Stopped)),
                       failures[0])
        return [value for _, value in outcomes]

    def _wait(self, futures, addresses, early=False):
        """The outcomes of ``futures`` (dask or actor futures, see
        :func:`_outcomes`) once all have ended (``early``: or one has
        failed); ``RuntimeError`` when a worker they run on leaves the
        cluster (its tasks would never end)."""
        while True:
            outcomes = self.client.sync(_outcomes, futures, _WATCH_INTERVAL, early)
            if outcomes is not None:
                return outcomes
            _check_workers(self.client, addresses)

    def close(self):
        """Release the actors and the shards' data on the workers: a fit
        still running is abandoned, the futures are dropped, and the client
        releases their keys in the background (``client.cancel`` would wait
        for the scheduler)."""
        if not self.ended:
            self.ended = True
            self._abort("the client abandoned the fit")
        for actor in self.actors:
            actor._future = None
        self.actors, self.actor_futures = [], []
        for shard in self.shards:
            shard.parts = [None] * len(shard.parts)


# per client with no direct_to_workers setting: whether it reaches the
# workers itself; seconds the first look waits for them
_REACHES = weakref.WeakKeyDictionary()
_REACH_TIMEOUT = 2.0


def _reaches_workers(client, addresses):
    """Whether ``client``'s calls go straight to the workers: its
    ``direct_to_workers`` when set, else (dask's default, where a client's
    calls to actors go through the scheduler) whether it can connect to
    them, looked at once per client.  The rows of an in-memory ``X``, the
    fit's calls and the final model then travel once, not through the
    scheduler (doc/user_guide/scaling_out.rst, "Cost")."""
    if client.direct_to_workers is not None:
        return bool(client.direct_to_workers)
    if client not in _REACHES:
        async def look():
            try:
                await asyncio.wait_for(asyncio.gather(
                    *[client.rpc(address).identity() for address in addresses]),
                    _REACH_TIMEOUT)
            except (OSError, asyncio.TimeoutError):
                return False
            return True

        _REACHES[client] = client.sync(look)
    return _REACHES[client]


@functools.cache
def _direct_actor_class():
    """A dask ``Actor`` handle whose calls go straight to its worker from
    the client (the handle's own choice follows ``direct_to_workers``)."""
    from distributed import Actor

    class DirectActor(Actor):
        @property
        def _worker_rpc(self):
            return self._client.rpc(self._address)

    return DirectActor


async def _outcomes(futures, seconds, early=False):
    """The outcomes of ``futures``, in order, ``(True, result)`` or
    ``(False, exception)`` each, once every one has ended (``early``: or
    one has failed; those still running are then ``(False, None)``); None
    when neither within ``seconds``.  (Run on the client's event loop: one
    hand over between threads for a whole round, not one per result.)"""

    async def outcome(future):
        try:
            return True, await future
        except (Exception, asyncio.CancelledError) as exc:
            return False, exc

    if not futures:
        return []
    tasks = [asyncio.ensure_future(outcome(future)) for future in futures]
    waiting, failed = set(tasks), False
    deadline = asyncio.get_running_loop().time() + seconds
    while waiting and not failed:
        timeout = deadline - asyncio.get_running_loop().time()
        if timeout <= 0:
            break
        done, waiting = await asyncio.wait(
            waiting, timeout=timeout,
            return_when=asyncio.FIRST_COMPLETED if early else asyncio.ALL_COMPLETED)
        failed = early and any(not task.result()[0] for task in done)
    for task in waiting:
        task.cancel()
    if waiting and not failed:
        return None
    return [task.result() if task.done() and not task.cancelled() else (False, None)
            for task in tasks]


def _check_workers(client, addresses, patience=0.0):
    """Raise ``RuntimeError`` unless every worker of ``addresses`` is in
    ``client``'s cluster (looking again for ``patience`` seconds: the
    scheduler may learn of a lost worker after the client)."""
    deadline = time.monotonic() + patience
    while True:
        lost = sorted(set(addresses) - set(client.run_on_scheduler(_worker_addresses)))
        if lost:
            raise RuntimeError(
                f"ParameterMixingClassifier: dask worker(s) {', '.join(lost)} left the cluster "
                f"during fit, with the partitions of the data they held; no model was fitted. "
                f"Fit again (the data is placed on the workers alive then).")
        if time.monotonic() >= deadline:
            return
        time.sleep(_WATCH_INTERVAL / 5)


def _holders(dask_scheduler, keys):
    """The addresses of the workers holding each of ``keys`` in memory
    (sorted; none for a key not in memory: not computed yet, being
    computed, or being released, whose ``who_has`` distributed sets to
    None), run on the scheduler."""
    tasks = dask_scheduler.tasks
    return [sorted(ws.address for ws in tasks[key].who_has or ())
            if key in tasks and tasks[key].state == "memory" else [] for key in keys]


def _worker_addresses(dask_scheduler):
    """The addresses of the scheduler's workers (run on the scheduler)."""
    return list(dask_scheduler.workers)


def _local_shards(X, y, n_workers):
    """Contiguous row ranges of in-memory ``X``, ``y``, one per worker."""
    bounds = np.linspace(0, X.shape[0], n_workers + 1).round().astype(int)
    return [_Shard([(X[a:b], y[a:b])], [b - a]) for a, b in zip(bounds[:-1], bounds[1:])
            if b > a]


def _checked_dask_input(X, y, client):
    """Dask collections ``X``, ``y`` (arrays or data frames, split along
    the rows alike) as dask arrays: ``X`` 2-D with one chunk of columns,
    ``y`` 1-D chunked as ``X``'s rows, their lengths known (computed where
    unknown, by ``client``: a persisted collection's partitions are in its
    cluster's memory only; None: dask's default scheduler).  The shapes are
    checked as scikit-learn checks NumPy input, with its messages: a ``y``
    of one column is raveled (with its ``DataConversionWarning``), other
    2-D ``y`` and lengths that differ are a ``ValueError``."""
    import dask
    with dask.config.set(scheduler=client) if client is not None else nullcontext():
        if hasattr(X, "to_dask_array"):
            X = X.to_dask_array(lengths=True)
        if hasattr(y, "to_dask_array"):
            y = y.to_dask_array(lengths=True)
        if X.ndim != 2:
            raise ValueError(f"Expected a 2D dask array X; got {X.ndim} dimensions")
        for array in (X, y):
            if any(np.isnan(array.shape)):
                array.compute_chunk_sizes()
    if y.ndim != 1:
        # scikit-learn's own check and message, on a view of y's shape
        column_or_1d(np.broadcast_to(np.zeros(()), y.shape), warn=True)
        y = y[:, 0]
    check_consistent_length(X, y)
    return X.rechunk({1: -1}), y.rechunk({0: X.chunks[0]})


def _dask_partitions(X, y):
    """Pairs of delayed ``(X, y)`` partitions of dask arrays checked by
    :func:`_checked_dask_input`, and their lengths."""
    return list(zip(X.to_delayed().ravel(), y.to_delayed().ravel())), X.chunks[0]


def _persisted(client, collections):
    """The futures of ``collections`` (persisted ones hold their
    partitions' futures), by key, each bound to ``client``: a future of
    another client is replaced by ``client``'s own on its key, which that
    client's future keeps in the cluster while the caller holds the
    collection."""
    from distributed import Future, futures_of
    return {future.key: future if future.client is client else Future(future.key, client)
            for future in futures_of(collections)}


def _grouped(parts, lengths, n_workers):
    """Consecutive partitions grouped into at most ``n_workers`` shards."""
    n_groups = min(n_workers, len(parts))
    owner = np.arange(len(parts)) * n_groups // max(len(parts), 1)
    return [_Shard([parts[i] for i in np.flatnonzero(owner == g)],
                   [lengths[i] for i in np.flatnonzero(owner == g)]) for g in range(n_groups)]


def _placed_shards(client, parts, lengths, addresses, persisted):
    """The shards of a dask collection's ``parts`` on the workers
    ``addresses``, as dask futures, and the address of each shard's
    worker.  Partitions of a persisted collection already in the cluster's
    memory (``persisted``: the collection's futures, by key) stay where
    they are: each worker's shard is the partitions it holds, in order, but
    for those :func:`_balance` moves to even out the shards' rows (the
    workers wait for the longest shard at every round).  Otherwise (some
    partition not persisted, not yet in memory or not held by one of
    ``addresses``, or a worker holding less than half its share of the
    rows, which would leave it idle while the others stream) the shards
    are consecutive groups (:func:`_grouped`), each computed on its worker
    from its graph.

    Only the collection's own futures are taken as held (once computed: a
    persist still running is waited for): a key the scheduler holds for no
    one (an earlier fit's partitions, computed from the same graph and
    released) may be dropped at any moment, so it is computed again as
    any other (the scheduler reuses it if it is still there); the futures
    keep theirs until the fit ends."""
    import dask
    from distributed import wait
    keys = [x.key for x, _ in parts] + [y.key for _, y in parts]
    held = [key for key in keys if key in persisted]
    if held:
        # a persist still computing: the shards are where it puts them,
        # the same as once it has ended
        with client.as_current():
            wait([persisted[key] for key in held])
    holders = dict(zip(held, client.run_on_scheduler(_holders, keys=held) if held else []))
    holders = [holders.get(key, []) for key in keys]
    holders, labels_held = holders[:len(parts)], all(holders[len(parts):])
    shards = None
    if all(holders):
        owner, rows = [], dict.fromkeys(addresses, 0)
        for i, own in enumerate(holders):
            own = [a for a in own if a in rows]
            if not own:
                break
            owner.append(min(own, key=rows.get))      # a replicated one: the least loaded
            rows[owner[-1]] += lengths[i]
        else:                           # every one held by one of the workers
            share = sum(lengths) / min(len(addresses), len(parts))
            used = [a for a in addresses if rows[a]]
            if all(rows[a] >= share / 2 for a in used) and (
                    len(used) == min(len(addresses), len(parts))):
                _balance(owner, lengths, rows, used)
                shards = [_Shard([parts[i] for i in range(len(parts)) if owner[i] == a],
                                 [lengths[i] for i in range(len(parts)) if owner[i] == a])
                          for a in used]
                addresses = used
    if shards is not None and labels_held:
        # the partitions themselves are the actors' arguments (no task per
        # partition; one the balance moved travels to its new worker)
        for shard in shards:
            shard.parts = [(persisted[x.key], persisted[y.key]) for x, y in shard.parts]
        return shards, addresses
    if shards is None:
        shards = _grouped(parts, lengths, len(addresses))
    for shard, address in zip(shards, addresses):
        shard.parts = client.compute([dask.delayed(part) for part in shard.parts],
                                     workers=[address])
    return shards, addresses[:len(shards)]


def _balance(owner, lengths, rows, addresses):
    """Move partitions between the workers ``addresses`` while it shortens
    the longest shard: each time the last partition of the worker with the
    most rows that lowers the maximum most goes to the worker with the
    fewest (``owner``: each partition's worker; ``rows``: each worker's
    rows; both updated).  (Every round waits for the worker with the most
    rows; a moved partition travels once, worker to worker, before the
    first round.)"""
    while True:
        most = max(addresses, key=lambda a: (rows[a], a))
        least = min(addresses, key=lambda a: (rows[a], a))
        best, best_max = None, rows[most]
        for i in reversed(range(len(owner))):
            if owner[i] == most:
                after = max(rows[most] - lengths[i], rows[least] + lengths[i])
                if after < best_max:
                    best, best_max = i, after
        if best is None:
            return
        owner[best] = least
        rows[most] -= lengths[best]
        rows[least] += lengths[best]


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
    worker sends its model to the first, which averages and compresses
    them and sends the mixed model back: the same model as the threads
    would mix); the client makes one call to each worker and receives the
    final model.  A NumPy or CSR ``X`` is split into contiguous shards that
    travel to their workers in pieces, one after another from the start of
    the fit (a round waits only for rows not yet arrived); the partitions of
    a dask array already in the cluster's memory (persisted) stay where
    they are, each worker's shard being the partitions it holds (but for
    partitions moved to even out the shards' rows); other partitions (a
    data frame's too) are computed, consecutive ones together, on the
    worker that streams them.
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
    Communication per mixing round is ``(K - 1) B (d + k)`` numbers for
    ``K`` workers, budget ``B``, ``d`` features and ``k`` coefficients per
    vector, each way (the other workers' models to the first, the mixed
    model back); the compression makes ``(K - 1) B`` maintenance steps.  A
    worker that leaves the cluster during ``fit``, or a task that raises,
    ends ``fit`` with an error; no partly mixed model is kept (the
    estimator keeps what it had).

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
        "client": "no_validation",
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
            classes, gamma = self._dask_summary(X, y, client, classes=client is None)
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

    def _dask_summary(self, X, y, client, classes=True):
        """The classes of a dask array ``y`` (None unless ``classes``) and
        the numeric ``gamma`` of a dask array ``X`` (None when the
        estimator's needs no resolving), as
        :func:`~skbudget._kernels.compute_gamma` on the whole data (the
        variance in one pass), computed by ``client`` (None: dask's default
        scheduler)."""
        import dask.array as da
        if classes:
            labels = da.unique(y)
            classes = np.unique(np.asarray(_computed(client, labels)))
            check_classification_targets(classes)
        else:
            classes = None
        if not self._resolves_gamma():
            return classes, None
        if self.estimator.gamma == "auto":
            return classes, 1.0 / X.shape[1]
        variance = float(_computed(client, X.astype(np.float64).var()))
        if not np.isfinite(variance):
            raise ValueError("gamma='scale' cannot be resolved: the variance of X is not "
                             "finite. Rescale X or pass a numeric gamma.")
        return classes, 1.0 / (X.shape[1] * variance) if variance != 0 else 1.0

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
        addresses = sorted(client.run_on_scheduler(_worker_addresses))
        if not addresses:
            raise RuntimeError("ParameterMixingClassifier: the dask cluster has no worker")
        addresses = addresses[:self.n_workers or len(addresses)]
        if partitions is None:          # split here, sent to the workers piece by piece
            pieces = max(self.mix_every, _PIECE_ROWS)
            shards, feeds = [], []
            for shard in _local_shards(X, y, len(addresses)):
                (Xs, ys), = shard.parts
                bounds = list(range(0, shard.n_rows, pieces)) + [shard.n_rows]
                feeds.append([(Xs[a:b], ys[a:b]) for a, b in zip(bounds[:-1], bounds[1:])])
                shards.append(_Shard([None] * len(feeds[-1]), np.diff(bounds)))
        else:
            shards, addresses = _placed_shards(client, *partitions, addresses,
                                               _persisted(client, [X, y]))
            feeds = [None] * len(shards)
        workers = _DaskWorkers(client, addresses[:len(shards)], shards, classes, feeds)
        try:
            workers.start()
        except Exception:               # a worker lost while the data is placed
            workers.close()
            _check_workers(client, workers.addresses)
            raise
        return workers

    def _train(self, workers, template):
        """The mixing rounds: every pass, every worker's next ``mix_every``
        rows per round; returns the mixed model and the number of mixings."""
        rounds = _schedule([shard.n_rows for shard in workers.shards], self.mix_every,
                           template.max_iter)
        if isinstance(workers, _DaskWorkers):
            common = workers.fit(template, rounds)      # the workers mix among themselves
        else:
            common, record = None, OnlineRecord()
            for tasks in rounds:
                starting = clone(template) if common is None else common
                results = workers.run([(k, starting, rows) for k, rows in tasks])
                common = _mix_round(results, tasks, common, record)
                record = common._record
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
