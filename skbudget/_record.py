"""The online record of a model: its mistakes, in bounded memory.

The papers plot the online error, mistakes against rounds.  Keeping one flag
per round would make a model's memory (and every call's cost) grow with the
stream, so :class:`OnlineRecord` keeps the exact counts and a learning curve
at bounded resolution: the cumulative mistakes at every multiple of a bin
width ``w``, at most ``max_points`` of them.  When the stream outgrows
``max_points * w`` rounds, ``w`` doubles and every other point goes (the
bins merge pairwise), so the curve always spans the whole stream with
between ``max_points / 2`` and ``max_points`` points.

The record also keeps the support size (the stored vectors of every
learner) where the stream driver reads it, at the end of every compiled
segment of the stream (each ``partial_fit`` call, up to 32768 examples at
a time in store mode, each chunk in block mode): the latest read within
each bin of the curve, pairs ``(round, size)``, at most ``max_points + 1``
of them (bins that merge keep their later read), so the series spans the
whole stream at bounded memory.  (The segments are not cut at the curve's
points to read it there: the segmentation would change some models in
their last bits.)

A record is never changed in place: :meth:`OnlineRecord.extended` returns the
record after more rounds, so a call that fails keeps the record it started
from.  A record loaded from a file is checked before it is used
(:meth:`OnlineRecord.__setstate__`): its numbers bound the loops that
extend it.
"""

import numpy as np

from skbudget._elementwise import cumulative_at_bin_ends

__all__ = ["OnlineRecord"]

# the most points a curve may keep
_MAX_POINTS_LIMIT = 1 << 20


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
        # (round, support size) where the driver read it, oldest first
        self.support = np.zeros((0, 2), dtype=np.int64)
        self.flag_chunks = [] if keep_flags else None

    def extended(self, flags, n_support):
        """The record after rounds whose mistake flags are ``flags``, at
        whose end the support size is ``n_support``."""
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
        # the latest read of every bin of the curve: merged bins keep their
        # later read, and this read replaces one in its own bin
        support = self.support
        if width != self.width and support.size:
            bins = (support[:, 0] - 1) // width
            support = support[np.append(bins[1:] != bins[:-1], True)]
        if support.size and (support[-1, 0] - 1) // width == (n_rounds - 1) // width:
            support = support[:-1]
        new.support = np.concatenate([support, [[n_rounds, n_support]]]).astype(np.int64)
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

    def support_curve(self):
        """(rounds, support size) where they were read, as an int64 array
        of shape (n_points, 2), the last row the last round's."""
        return self.support.copy()

    def __setstate__(self, state):
        """The record of ``state``, after checking that it is one: counts
        and curves consistent, ``max_points`` a power of two (a loop's
        bound)."""
        self.__dict__.update(_checked_state(state))

    def flags(self):
        """Every round's mistake flag (only when created with ``keep_flags``)."""
        if self.flag_chunks is None:
            raise AttributeError("per-round mistake flags are kept only with keep_flags=True")
        return np.concatenate([np.zeros(0, dtype=np.uint8)] + self.flag_chunks)


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _checked_state(state):
    """``state`` (a record's instance dict, e.g. from a file) if it is a
    consistent record, else a ValueError."""
    def refuse(what):
        raise ValueError(f"The online record of the loaded model is inconsistent ({what}); "
                         f"the file is corrupted or was not written by skbudget.")

    if not isinstance(state, dict):
        refuse("not a dict")
    names = ("max_points", "n_rounds", "n_mistakes", "width")
    if any(not _is_int(state.get(name)) for name in names):
        refuse(f"{', '.join(names)} must be integers")
    max_points, n_rounds, n_mistakes, width = (int(state[n]) for n in names)
    if not 2 <= max_points <= _MAX_POINTS_LIMIT or max_points & (max_points - 1):
        refuse(f"max_points={max_points} is not a power of two in [2, {_MAX_POINTS_LIMIT}]")
    if width < 1 or width & (width - 1) or not 0 <= n_rounds or n_rounds // width > max_points:
        refuse(f"width={width} for n_rounds={n_rounds}")
    if not 0 <= n_mistakes <= n_rounds:
        refuse(f"n_mistakes={n_mistakes} for n_rounds={n_rounds}")
    points, support = state.get("points"), state.get("support")
    # a record written before it read the support size has none (nor has
    # one loaded from such a file and saved again): its support curve
    # starts with the rounds after loading
    if "support" not in state:
        support = np.zeros((0, 2), dtype=np.int64)
    if not (isinstance(points, np.ndarray) and points.dtype == np.int64 and points.ndim == 1
            and points.size == n_rounds // width):
        refuse(f"points must be {n_rounds // width} int64 values")
    steps = np.diff(np.concatenate([[0], points, [n_mistakes]]))
    if (steps < 0).any() or (steps[:-1] > width).any():
        refuse("the cumulative mistakes are not a learning curve")
    if not (isinstance(support, np.ndarray) and support.dtype == np.int64 and support.ndim == 2
            and support.shape[1] == 2 and support.shape[0] <= max_points + 1
            and (support >= 0).all() and (np.diff((support[:, 0] - 1) // width) > 0).all()
            and (support.shape[0] == 0
                 or (n_rounds > 0 and support[0, 0] >= 1 and support[-1, 0] == n_rounds))):
        refuse("support must be increasing rounds up to n_rounds and sizes >= 0")
    flag_chunks = state.get("flag_chunks")
    if flag_chunks is not None and not (
            isinstance(flag_chunks, list)
            and all(isinstance(c, np.ndarray) and c.dtype == np.uint8 for c in flag_chunks)):
        refuse("flag_chunks")
    return {"max_points": max_points, "n_rounds": n_rounds, "n_mistakes": n_mistakes,
            "width": width, "points": points, "support": support, "flag_chunks": flag_chunks}
