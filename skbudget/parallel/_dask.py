"""Parameter mixing on a ``dask.distributed`` cluster: one actor per
worker holds the worker's shard and runs its part of the whole fit, the
mixings included (the workers mix among themselves); the client places the
data, makes one call per worker and receives the final model.

dask is an optional extra: nothing here imports it before a fit uses it.
"""

import asyncio
import functools
import pickle
import threading
import time
import weakref
from contextlib import nullcontext

import numpy as np
from sklearn.utils.validation import assert_all_finite, check_consistent_length, column_or_1d

from skbudget._base import _checked_classes
from skbudget._kernels import compute_gamma, scale_gamma
from skbudget._mixing import Origin
from skbudget._record import OnlineRecord
from skbudget.parallel._rounds import (
    _grouped,
    _is_dask_collection,
    _local_shards,
    _mix_round,
    _Shard,
    _stream_rows,
)

# seconds between two looks at the cluster while a mixing round runs; how
# long a call that lost its worker's connection waits for the scheduler to
# see the worker gone (the error then names it)
_WATCH_INTERVAL, _LOSS_PATIENCE = 0.5, 10.0
# rows of the pieces an in-memory X travels in (at least mix_every)
_PIECE_ROWS = 16_384
# a worker's timeline of its fits, (seconds, its thread's CPU seconds,
# event, round), when it is a list (benchmarks/bench_parallel.py --profile
# sets it on the workers)
_TRACE = None


def _note(event, i=-1):
    """Record ``event`` of round ``i`` on this worker's timeline, if kept."""
    if _TRACE is not None:
        _TRACE.append((time.perf_counter(), time.thread_time(), event, i))


def _computed(client, collection):
    """The value of a dask ``collection``, computed by ``client`` (None:
    dask's default scheduler)."""
    if client is not None:
        return client.compute(collection).result()
    import dask
    return dask.compute(collection)[0]


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

    The workers mix among themselves (doc/user_guide/parameter_mixing.rst,
    "Cost"): every worker sends its model of a round, pickled once, to
    every other worker, and each averages and compresses the round's
    models itself (the same models in the same order: the same mixed
    model on every worker, which continues from it).  The client sends one
    call per worker for the whole fit and receives the final model from
    the first worker."""

    def __init__(self, lengths, parts=None):
        if isinstance(parts, _Graphs):
            parts = parts.parts
        self.shard = _Shard(parts if parts is not None else [None] * len(lengths), lengths)
        self._ready = threading.Condition()
        self._inbox = {}                # (round, sender) -> pickled message
        self._stopped = None            # why the fit was abandoned

    def labels(self):
        """The classes of the labels of the partitions it was built with
        (checked as scikit-learn's targets)."""
        return self.shard.labels()

    def _store(self, pieces):
        for index, X, y in pieces:
            self.shard.parts[index] = (X, y)

    async def put(self, pieces):
        """Keep ``pieces`` (index, X, y) of the shard."""
        with self._ready:
            self._store(pieces)
            self._ready.notify_all()

    async def deposit(self, key, blob):
        """Keep a peer's message ``blob``, its model of a round (``key``:
        (round, sender index))."""
        _note(f"arrived {key[1]}", key[0])
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
            _note(f"sending {key[1]}", key[0])
            try:
                reply = await worker.rpc(address).actor_execute(
                    function="deposit", actor=actor,
                    args=[to_serialize(key), to_serialize(blob)], kwargs={})
                failure = None if reply["status"] == "OK" else repr(reply["exception"])
                _note(f"delivered {key[1]}", key[0])
            except Exception as exc:        # the peer's worker lost
                failure = repr(exc)
            if failure is not None:
                await self.abort(f"worker {address} could not be reached: {failure}")

        worker.loop.add_callback(send)

    def fit(self, index, peers, rounds, template, classes):
        """This worker's part of the whole fit (``index``: its place in
        ``peers``, the (address, actor key) of every worker): for every
        round of ``rounds`` (per round, the (worker, (start, stop)) that
        stream, in worker order), stream its rows if it has any and send
        the model to every other worker, then mix the round's models (all
        but the last round's: worker 0 alone mixes it) and continue from
        the mixed model itself.  ``template``: the pickled unfitted
        estimator.  Worker 0 returns the final model, pickled; the others
        None."""
        from distributed import get_worker
        self._worker, self._peers = get_worker(), peers
        self._key = peers[index][1]
        model, origin, record = pickle.loads(template), None, OnlineRecord()
        _note("start")
        for i, tasks in enumerate(rounds):
            last = i + 1 == len(rounds)
            for k, rows in tasks:
                if k == index:
                    _note("ready", i)
                    mine = self._round(model, rows, classes)
                    _note("streamed", i)
                    blob = pickle.dumps(mine, protocol=5)
                    _note("pickled", i)
                    for peer in [0] if last else range(len(peers)):
                        if peer != index:
                            self._send(peer, (i, index), blob)
            if last and index != 0:
                break
            # (its own model stays here, unpickled; every worker composes
            # the same mixed model from the same models, in worker order)
            results = []
            for k, _ in tasks:
                results.append(mine if k == index else pickle.loads(self._take((i, k))))
                _note(f"took {k}", i)
            model = _mix_round(results, tasks, origin, record)
            origin, record = Origin(model), model._record
            _note("mixed", i)
        _note("end")
        self.shard.take(())         # (the last round's computed partitions dropped)
        return pickle.dumps(model, protocol=5) if index == 0 else None

    def _round(self, model, rows, classes):
        """Stream the shard's rows ``rows`` (start, stop) into ``model``
        (its pieces awaited): :func:`_stream_rows`."""
        indices, ranges = self.shard.pieces(*rows)
        self._wait_for(lambda: None if any(self.shard.parts[i] is None for i in indices)
                       else True)
        return _stream_rows(model, self.shard.take(indices), ranges, classes,
                            not hasattr(model, "classes_"))


class _Graphs:
    """The partitions of a shard passed to its actor as they are: pairs of
    dask collections, their graphs, which the actor computes one after
    another as its rounds need them (dask would compute every one before
    the call)."""

    def __init__(self, parts):
        self.parts = parts


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
            if parts and isinstance(parts[0], tuple) and _is_dask_collection(parts[0][0]):
                parts = _Graphs(parts)
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
    scheduler (doc/user_guide/parameter_mixing.rst, "Cost")."""
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
    if not persisted:
        culled = _independent(parts)
        if culled is not None:
            # each partition computed by the worker that streams it, when
            # its rows are streamed (and dropped after): no worker holds its
            # whole shard, the client none of it
            for shard in shards:
                shard.parts = [culled[id(x)] for x, _ in shard.parts]
            return shards, addresses[:len(shards)]
    for shard, address in zip(shards, addresses):
        shard.parts = client.compute([dask.delayed(part) for part in shard.parts],
                                     workers=[address])
    return shards, addresses[:len(shards)]


def _independent(parts):
    """The partitions ``parts`` (pairs of delayed ``(X, y)``), each pair's
    graphs culled to what computes it (by ``id`` of its ``X``), when no
    task is shared between two pairs (a lazily generated array, one read
    from files, a NumPy array's pieces); None when one is (a partition of
    ``X - X.mean(axis=0)`` needs the mean over every partition): those are
    computed on their workers before the first round, the shared task
    once."""
    from dask.delayed import Delayed
    from dask.optimization import cull

    graph = {}
    for x, y in parts[:1]:          # (every partition's delayed holds the whole graph)
        graph.update(x.__dask_graph__())
        graph.update(y.__dask_graph__())
    culled, seen = {}, set()
    for x, y in parts:
        pair = tuple(Delayed(d.key, cull(graph, [d.key])[0]) for d in (x, y))
        keys = set(pair[0].__dask_graph__()) | set(pair[1].__dask_graph__())
        if keys & seen:
            return None
        seen |= keys
        culled[id(x)] = pair
    return culled


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


def _dask_summary(X, y, client, gamma=None, classes=True):
    """The classes of a dask array ``y`` (None unless ``classes``) and the
    numeric ``gamma`` of a dask array ``X`` (None when ``gamma``, the
    estimator's 'scale' or 'auto', is None: nothing to resolve), as the
    estimators resolve it (:func:`~skbudget._kernels.compute_gamma`, its
    errors) on the whole data (the variance in one pass), computed by
    ``client`` (None: dask's default scheduler)."""
    import dask.array as da
    if classes:
        classes = _checked_classes(np.asarray(_computed(client, da.unique(y))))
    else:
        classes = None
    if gamma != "scale":                # 'auto': from the shape alone
        return classes, None if gamma is None else compute_gamma(gamma, X)
    variance = float(_computed(client, X.astype(np.float64).var()))
    if not np.isfinite(variance):
        _check_finite_rows(X, client)
    return classes, scale_gamma(variance, X.shape[1])


def _check_finite_rows(X, client):
    """Raise scikit-learn's error for a value of the dask array ``X`` that
    is not finite, as the meta-estimator validates an in-memory ``X`` (the
    first row holding one is computed, and checked; computed by ``client``,
    None: dask's default scheduler)."""
    import dask.array as da
    finite = np.asarray(_computed(client, da.isfinite(X).all(axis=1)))
    if not finite.all():
        assert_all_finite(np.asarray(_computed(client, X[int(np.argmin(finite))])),
                          estimator_name="ParameterMixingClassifier", input_name="X")


def _started_workers(client, X, y, partitions, classes, n_workers, mix_every):
    """The workers of a fit on ``client``'s cluster (``n_workers``: at most
    that many; None: every one), each with its shard and its actor
    started.  ``partitions``: those of a dask collection and their lengths;
    None: the in-memory ``X``, ``y`` is split here and sent to the workers
    in pieces of ``max(mix_every, _PIECE_ROWS)`` rows."""
    addresses = sorted(client.run_on_scheduler(_worker_addresses))
    if not addresses:
        raise RuntimeError("ParameterMixingClassifier: the dask cluster has no worker")
    addresses = addresses[:n_workers or len(addresses)]
    if partitions is None:          # split here, sent to the workers piece by piece
        pieces = max(mix_every, _PIECE_ROWS)
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
