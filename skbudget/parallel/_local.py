"""Parameter mixing on local threads: the core's helper threads
(:data:`skbudget._threads.HELPERS`, those of ``n_jobs``) and the calling
thread stream the shards of one round at once (the compiled loops release
the GIL), and the calling thread mixes."""

import copy
import functools

from sklearn.base import clone

from skbudget import _threads
from skbudget._blas import single_threaded_blas
from skbudget._mixing import Origin
from skbudget._record import OnlineRecord
from skbudget.parallel._rounds import _mix_round, _stream_rows


class _ThreadWorkers:
    """Workers that are local threads (the compiled loops release the GIL);
    each holds its own shard: rows of the input, or partitions of a dask
    collection computed as its rounds read them (:meth:`_Shard.take`)."""

    def __init__(self, shards, classes):
        self.shards, self.classes = shards, classes

    def fit(self, template, rounds):
        """Run the whole fit (``rounds``: per round, the (worker, (start,
        stop)) that stream): each round's workers continue from the
        previous round's mixed model (the first from clones of
        ``template``), then mix here; the final mixed model."""
        common, origin, record = None, None, OnlineRecord()
        for tasks in rounds:
            starting = clone(template) if common is None else common
            results = self.run([(k, starting, rows) for k, rows in tasks],
                               own_first=common is not None)
            common = _mix_round(results, tasks, origin, record)
            origin, record = Origin(common), common._record
        return common

    def run(self, tasks, own_first=False):
        """Run ``tasks`` (worker, model, rows) at once, each on its own copy
        of the model (``own_first``: the first on the model itself, which
        the caller gives up); their results in order.  The first exception
        is raised once every task has ended."""
        results = [None] * len(tasks)

        def task(i, k, model, rows, stop):
            # (``stop``: the helper job's stop byte, set when the caller is
            # interrupted; partial_fit does not watch it: the job waits for
            # the task to end, as a thread pool's shutdown would)
            results[i] = self._task(k, model, rows)

        # (the copies are made before any task starts)
        models = [model if i == 0 and own_first else copy.deepcopy(model)
                  for i, (_, model, _) in enumerate(tasks)]
        # BLAS on one thread around every task (inside, each partial_fit
        # limits it again and puts back the 1 it found, whatever the order
        # in which the threads end; their own limits alone, racing, could
        # leave the process on one thread)
        with single_threaded_blas():
            # (the process's helper threads, read from their module: a fork
            # replaces them)
            _threads.HELPERS.run([functools.partial(task, i, k, model, rows)
                                  for i, ((k, _, rows), model) in enumerate(zip(tasks, models))],
                                 len(tasks))
        return results

    def _task(self, k, model, rows):
        shard = self.shards[k]
        indices, ranges = shard.pieces(*rows)
        return _stream_rows(model, shard.take(indices), ranges, self.classes,
                            not hasattr(model, "classes_"))

    def close(self):
        """Nothing to release: the helper threads are the process's, kept
        for every later call (the workers' interface, as
        ``_DaskWorkers.close``)."""
