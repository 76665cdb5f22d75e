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
learner) at the same rounds: after every bin end of the curve and after the
last round.  The compiled loops write the support size after every round of
a call into an array beside the scores (``OnlineLearner.run_dense``'s
``support_sizes``; the stream driver sums the one-vs-rest learners'), and
:meth:`OnlineRecord.extended` keeps the values at the bin ends, so the
support points merge pairwise with the mistake points: one int64 per point,
the same memory bound.  A support point may be *unmeasured*
(``UNMEASURED``, -1): the rounds of a file written before the record kept
a size at every point (only its reads that fell on a bin end, and its
last, carry over, see :func:`_support_of_sparse_reads`), and the rounds
inside a mixing round of ``skbudget.parallel`` (no single model exists);
:meth:`OnlineRecord.support_curve` leaves them out.  (Reading the size
needs no cut in the stream's segments: cutting them would change some
models in their last bits, ``doc/engine.md``, "The online record".)

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


# the support size of a round whose size was not measured
UNMEASURED = -1


class OnlineRecord:
    """Mistake counts, the bounded learning curve and the support size at
    its points, of one model.

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
        # the support size after the same rounds (or UNMEASURED) ...
        self.support_points = np.zeros(0, dtype=np.int64)
        # ... and after the last round
        self.last_support = UNMEASURED
        self.flag_chunks = [] if keep_flags else None

    def extended(self, flags, support_sizes):
        """The record after more rounds.

        Parameters
        ----------
        flags : array-like of shape (n_new_rounds,)
            The new rounds' mistake flags (0 or 1).
        support_sizes : int or array-like of shape (n_new_rounds,)
            The support size after each new round (``UNMEASURED`` where it
            is unknown); an int is the size after every one of them.

        Returns
        -------
        record : OnlineRecord
            A new record; this one is not changed.
        """
        flags = np.ascontiguousarray(flags, dtype=np.uint8)
        sizes = np.asarray(support_sizes)
        if sizes.ndim and sizes.shape != flags.shape:
            raise ValueError(f"{sizes.shape[0]} support sizes for {flags.size} rounds")
        new = object.__new__(OnlineRecord)
        new.__dict__.update(self.__dict__)
        n_rounds = self.n_rounds + flags.size
        width, points, support_points = self.width, self.points, self.support_points
        while n_rounds // width > self.max_points:   # merge bins pairwise
            width *= 2
            points, support_points = points[1::2], support_points[1::2]
        # the first round of this call to end a bin: width * k > self.n_rounds
        first_end = (self.n_rounds // width + 1) * width
        at_ends, new.n_mistakes = cumulative_at_bin_ends(
            flags, first_end - self.n_rounds, width, self.n_mistakes)
        if at_ends.size:
            points = np.concatenate([points, at_ends])
            at_ends_sizes = (sizes[first_end - self.n_rounds - 1::width] if sizes.ndim
                             else np.full(at_ends.size, sizes))
            support_points = np.concatenate([support_points, at_ends_sizes.astype(np.int64)])
        new.points, new.support_points = points, support_points
        if flags.size:
            new.last_support = int(sizes[-1] if sizes.ndim else sizes)
        new.width = width
        new.n_rounds = n_rounds
        if self.flag_chunks is not None:
            new.flag_chunks = self.flag_chunks + [flags]
        return new

    def curve(self):
        """(rounds, cumulative mistakes) at the bin ends and the last round,
        as an int64 array of shape (n_points, 2)."""
        return np.column_stack([self._rounds(), self._with_last(self.points, self.n_mistakes)])

    def support_curve(self):
        """(rounds, support size) at the rounds of :meth:`curve` whose size
        was measured (all of them for a model trained by this version), as
        an int64 array of shape (n_points, 2)."""
        curve = np.column_stack([self._rounds(),
                                 self._with_last(self.support_points, self.last_support)])
        return curve[curve[:, 1] != UNMEASURED]

    def _rounds(self):
        """The rounds of the curve's points: the bin ends and the last
        round."""
        rounds = self.width * np.arange(1, self.points.size + 1, dtype=np.int64)
        return self._with_last(rounds, self.n_rounds)

    def _with_last(self, at_bin_ends, at_last_round):
        """A series at the bin ends followed by its value at the last round,
        if that round ends no bin."""
        if self.n_rounds % self.width:
            return np.append(at_bin_ends, np.int64(at_last_round))
        return at_bin_ends

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
    points = state.get("points")
    if not (isinstance(points, np.ndarray) and points.dtype == np.int64 and points.ndim == 1
            and points.size == n_rounds // width):
        refuse(f"points must be {n_rounds // width} int64 values")
    steps = np.diff(np.concatenate([[0], points, [n_mistakes]]))
    if (steps < 0).any() or (steps[:-1] > width).any():
        refuse("the cumulative mistakes are not a learning curve")
    if "support_points" in state or "last_support" in state:
        if "support" in state:
            refuse("it holds the support sizes in two layouts")
        support_points, last_support = state.get("support_points"), state.get("last_support")
    else:
        support_points, last_support = _support_of_sparse_reads(
            state.get("support", np.zeros((0, 2), dtype=np.int64)), n_rounds, width,
            max_points, refuse)
    if not (isinstance(support_points, np.ndarray) and support_points.dtype == np.int64
            and support_points.ndim == 1 and support_points.size == points.size
            and (support_points >= UNMEASURED).all()):
        refuse(f"support_points must be {points.size} int64 values >= {UNMEASURED}")
    if not (_is_int(last_support) and last_support >= UNMEASURED):
        refuse(f"last_support must be an integer >= {UNMEASURED}")
    last_support = int(last_support)
    if n_rounds == 0 and last_support != UNMEASURED:
        refuse("a support size before the first round")
    if n_rounds % width == 0 and points.size and support_points[-1] != last_support:
        refuse("the last round ends a bin but the two support sizes after it differ")
    flag_chunks = state.get("flag_chunks")
    if flag_chunks is not None and not (
            isinstance(flag_chunks, list)
            and all(isinstance(c, np.ndarray) and c.dtype == np.uint8 for c in flag_chunks)):
        refuse("flag_chunks")
    return {"max_points": max_points, "n_rounds": n_rounds, "n_mistakes": n_mistakes,
            "width": width, "points": points, "support_points": support_points,
            "last_support": last_support, "flag_chunks": flag_chunks}


def _support_of_sparse_reads(support, n_rounds, width, max_points, refuse):
    """``(support_points, last_support)`` of a record in an earlier layout.

    Files written before the record kept the support size at every point
    hold pairs ``(round, size)`` where the stream driver read it (the end
    of each compiled segment, the latest read in every bin of the curve),
    ``support``; files written before that hold none (``support`` empty).
    A read at a bin end is that point's size, the last read (at the last
    round) is ``last_support``; a read between two bin ends has no point
    (its round is not one of the curve's) and is dropped; every other
    point is ``UNMEASURED``.  ``refuse(what)`` raises for a ``support``
    that is not such a series.
    """
    if not (isinstance(support, np.ndarray) and support.dtype == np.int64 and support.ndim == 2
            and support.shape[1] == 2 and support.shape[0] <= max_points + 1
            and (support >= 0).all() and (np.diff((support[:, 0] - 1) // width) > 0).all()
            and (support.shape[0] == 0
                 or (n_rounds > 0 and support[0, 0] >= 1 and support[-1, 0] == n_rounds))):
        refuse("support must be increasing rounds up to n_rounds and sizes >= 0")
    support_points = np.full(n_rounds // width, UNMEASURED, dtype=np.int64)
    at_bin_ends = support[support[:, 0] % width == 0]
    support_points[at_bin_ends[:, 0] // width - 1] = at_bin_ends[:, 1]
    last_support = int(support[-1, 1]) if support.shape[0] else UNMEASURED
    return support_points, last_support
