"""The rounds of parameter mixing: the shards, the schedule, a worker's
part of a round and the round's mixing.

Every worker streams its shard (:class:`_Shard`) in rounds of ``mix_every``
rows (:func:`_schedule`); after each round the workers' models are averaged,
weighted by the rows each streamed, and compressed (:func:`_mix_round`).
The same functions run on the client's threads (``_local``) and on the dask
workers (``_dask``): the model is the same bit for bit.
"""

import numpy as np
import scipy.sparse as sp

from skbudget._base import _checked_classes
from skbudget._mixing import averaged_model, compressed_model, n_stored
from skbudget._record import UNMEASURED, OnlineRecord


class _Shard:
    """The rows one worker streams: its partitions, in order, and their
    lengths.  A partition is a pair ``(X, y)`` in memory, or of dask
    collections computed where the shard is streamed, when its rows are
    (:meth:`take`)."""

    def __init__(self, parts, lengths):
        self.parts = list(parts)
        self.lengths = [int(n) for n in lengths]
        self.n_rows = sum(self.lengths)
        self._window = {}           # index -> the computed (X, y) of a dask partition

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


    def take(self, indices):
        """The partitions ``indices`` (those of one round) as ``(X, y)`` in
        memory.  A pair of dask collections is computed here (X and y
        together, on the synchronous scheduler: a task they share runs
        once) and kept only while the following calls take it: a shard of
        a lazily generated collection is never in memory whole, at most
        the partitions of one round (later passes compute them again)."""
        self._window = {i: part for i, part in self._window.items() if i in indices}
        for i in indices:
            if i not in self._window and _is_dask_collection(self.parts[i][0]):
                self._window[i] = _computed_here(*self.parts[i])
        return [self._window.get(i, self.parts[i]) for i in indices]

    def labels(self):
        """The classes of the labels of its partitions (those computed
        here one after another, the labels alone: ``y`` is read once more
        than ``X``)."""
        classes = []
        for part in self.parts:
            if part is None:
                continue
            labels = part[1]
            if _is_dask_collection(labels):
                (labels,) = _computed_here(labels)
            classes.append(_checked_classes(np.asarray(labels)))
        return np.unique(np.concatenate(classes))


def _local_shards(X, y, n_workers):
    """Contiguous row ranges of in-memory ``X``, ``y``, one per worker."""
    bounds = np.linspace(0, X.shape[0], n_workers + 1).round().astype(int)
    return [_Shard([(X[a:b], y[a:b])], [b - a]) for a, b in zip(bounds[:-1], bounds[1:])
            if b > a]


def _grouped(parts, lengths, n_workers):
    """Consecutive partitions grouped into at most ``n_workers`` shards."""
    n_groups = min(n_workers, len(parts))
    owner = np.arange(len(parts)) * n_groups // max(len(parts), 1)
    return [_Shard([parts[i] for i in np.flatnonzero(owner == g)],
                   [lengths[i] for i in np.flatnonzero(owner == g)]) for g in range(n_groups)]


def _schedule(n_rows, mix_every, n_passes):
    """The rounds of parameter mixing over shards of ``n_rows`` rows: per
    round (every pass, every ``mix_every`` rows), the (worker, (start,
    stop)) of the workers with rows in it, in worker order."""
    return [[(k, (start, min(start + mix_every, n))) for k, n in enumerate(n_rows) if n > start]
            for _ in range(n_passes) for start in range(0, max(n_rows), mix_every)]


def _computed_here(*collections):
    """The dask ``collections`` computed in this process, on the
    synchronous scheduler (a task they share runs once): a tuple."""
    import dask
    return dask.compute(*collections, scheduler="synchronous")


def _is_dask_collection(X):
    """Whether ``X`` is a dask collection (without importing dask)."""
    return type(X).__module__.split(".")[0] in ("dask", "dask_expr")


def _rows_of(X, lo, hi):
    """Rows ``lo:hi`` of a partition (an array, a CSR matrix or a data
    frame) as NumPy or CSR."""
    if hasattr(X, "iloc"):
        return X.iloc[lo:hi].to_numpy()
    return X[lo:hi]


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


def _mixed(models, weights, origin, record, flags):
    """The models of one mixing round averaged and compressed: the next
    round's common model (``origin``: the :class:`~skbudget._mixing.Origin`
    of the model they continued from, None in the first round; ``record``:
    its online record before the round, whose mistake flags are
    ``flags``).

    Within the round the workers' models are several: the record's support
    size is the mixed model's, after the round's last round only (the
    rounds before it ``UNMEASURED``, see ``skbudget._record``)."""
    unmeasured = np.full(len(flags), UNMEASURED, dtype=np.int64)
    # the counts the attributes read are known before the compression, the
    # support size after it: the record is read again with that size
    # the models are the workers' own (the common model itself continued
    # on one of them): the average is built in the first, and compressed
    # in place
    mixed = compressed_model(averaged_model(models, weights, origin,
                                            record.extended(flags, unmeasured),
                                            copy_first=False), copy_model=False)
    unmeasured[-1:] = n_stored(mixed)
    mixed._record = record.extended(flags, unmeasured)
    return mixed


def _mix_round(results, tasks, origin, record):
    """The mixed model of one round: the workers' ``results`` (model,
    mistake flags) of ``tasks`` (worker, (start, stop)), weighted by the
    rows each streamed (``origin``, ``record``: as :func:`_mixed`).  The
    same function mixes on the client's threads and on the dask worker that
    mixes."""
    rows = np.array([b - a for _, (a, b) in tasks], dtype=np.float64)
    return _mixed([model for model, _ in results], rows / rows.sum(), origin, record,
                  _interleaved([flags for _, flags in results]))
