"""The online record of a model: its mistakes, in bounded memory.

The papers plot the online error, mistakes against rounds.  Keeping one flag
per round would make a model's memory (and every call's cost) grow with the
stream, so :class:`OnlineRecord` keeps the exact counts and a learning curve
at bounded resolution: the cumulative mistakes at every multiple of a bin
width ``w``, at most ``max_points`` of them.  When the stream outgrows
``max_points * w`` rounds, ``w`` doubles and every other point goes (the
bins merge pairwise), so the curve always spans the whole stream with
between ``max_points / 2`` and ``max_points`` points.

A record is never changed in place: :meth:`OnlineRecord.extended` returns the
record after more rounds, so a call that fails keeps the record it started
from.
"""

import numpy as np

from skbudget._elementwise import cumulative_at_bin_ends

__all__ = ["OnlineRecord"]


class OnlineRecord:
    """Mistake counts and the bounded learning curve of one model.

    Parameters
    ----------
    max_points : int, default=256
        Most points the learning curve keeps (a power of two).
    keep_flags : bool, default=False
        Also keep every round's mistake flag (memory grows with the stream;
        for tests that compare round by round with a reference).
    """

    def __init__(self, max_points=256, keep_flags=False):
        self.max_points = max_points
        self.n_rounds = 0
        self.n_mistakes = 0
        self.width = 1
        # cumulative mistakes after rounds width, 2 width, 3 width, ...
        self.points = np.zeros(0, dtype=np.int64)
        self.flag_chunks = [] if keep_flags else None

    def extended(self, flags):
        """The record after rounds whose mistake flags are ``flags``."""
        flags = np.ascontiguousarray(flags, dtype=np.uint8)
        new = object.__new__(OnlineRecord)
        new.__dict__.update(self.__dict__)
        n_rounds = self.n_rounds + flags.size
        width, points = self.width, self.points
        while n_rounds // width > self.max_points:   # merge bins pairwise
            width *= 2
            points = points[1::2]
        # the first round of this call to end a bin: width * k > self.n_rounds
        first_end = (self.n_rounds // width + 1) * width
        at_ends, new.n_mistakes = cumulative_at_bin_ends(
            flags, first_end - self.n_rounds, width, self.n_mistakes)
        if at_ends.size:
            points = np.concatenate([points, at_ends])
        new.points = points
        new.width = width
        new.n_rounds = n_rounds
        if self.flag_chunks is not None:
            new.flag_chunks = self.flag_chunks + [flags]
        return new

    def curve(self):
        """(rounds, cumulative mistakes) at the bin ends and the last round,
        as an int64 array of shape (n_points, 2)."""
        rounds = self.width * np.arange(1, self.points.size + 1, dtype=np.int64)
        if self.n_rounds % self.width:
            rounds = np.append(rounds, self.n_rounds)
            mistakes = np.append(self.points, self.n_mistakes)
        else:
            mistakes = self.points
        return np.column_stack([rounds, mistakes])

    def flags(self):
        """Every round's mistake flag (only when created with ``keep_flags``)."""
        if self.flag_chunks is None:
            raise AttributeError("per-round mistake flags are kept only with keep_flags=True")
        return np.concatenate([np.zeros(0, dtype=np.uint8)] + self.flag_chunks)
