# cython: language_level=3, cdivision=True
"""The fixed-budget family (doc/algorithms.md#fixed-budget-family).

Every algorithm here is a perceptron-style learner: when a round asks for
an update, it makes room (picks a support vector to replace, or none),
adds ``(x_t, alpha_t)`` as the newest support vector and tidies up.
:class:`MistakeDrivenLearner` runs that skeleton; each policy says only
what differs:

===========================  ==========================================
StoptronLearner              no room once ``|S| = B``: stop adding
RandomBudgetLearner          room: remove position ``rng.randint(B)``
CrammerKandolaSingerLearner  room: remove the largest leave-one-out
                             margin; adaptive cache: DistillCache after
                             the insertion
ForgetronLearner             after the insertion: shrink by phi, drop the
                             oldest
PassiveAggressiveLearner     update on hinge loss, step
                             ``min(C, loss / k_tt)``
===========================  ==========================================

:class:`SharedMistakeDrivenLearner` is the same skeleton on one support set
for every class (``multi_class='crammer_singer'``,
doc/algorithms.md#fixed-budget-shared): the margin ``f_y - f_r`` against
the runner-up class in place of ``y f(x)``, the row ``a (e_y - e_r)`` in
place of the coefficient ``a y``; its policies are the Shared* learners
(all but the Crammer-Kandola-Singer cache, whose shared form is MIRA's).

Ties between support vectors go to the oldest.  Values compared for a tie
come from incrementally maintained margins, so two mathematically equal
values may differ in the last bits; they count as tied when they agree to
a relative 1e-9 (``_numbers.tie_tolerance``), see
:meth:`CrammerKandolaSingerLearner.best_removal`.
"""

import numpy as np
from libc.math cimport fabs, sqrt, INFINITY

from skbudget._engine cimport OnlineLearner
from skbudget._engine import size_problem
from skbudget._numbers cimport is_finite, raise_not_finite, tie_tolerance
from skbudget._shared_support cimport SharedSupportLearner
from skbudget._shared_support import _resized_rows
from skbudget._vector_loops cimport (skb_axpy, skb_first_at_least, skb_largest,
                                       skb_last_position, skb_leave_one_out_margins,
                                       skb_replace_in_margins, skb_vector_loops_init)

skb_vector_loops_init()     # the AVX2 loops where the CPU has AVX2

# the Forgetron's damage allowance per mistake (Dekel et al., Lemma 2)
cdef double FORGETRON_RATE = 15.0 / 32.0

# MistakeDrivenLearner.make_room's answers besides a position to replace
cdef enum:
    NO_ROOM = -2        # no update this round
    APPEND = -1         # add without removing


cdef class MistakeDrivenLearner(OnlineLearner):
    """The shared skeleton: update condition, make room, insert, tidy up.

    Parameters
    ----------
    budget : int
        ``B``; ``-1`` for no fixed budget.
    beta : float
        Update when ``y f(x) <= beta``.
    """

    _state_names = OnlineLearner._state_names + ("budget", "beta")

    def __init__(self, Py_ssize_t budget=-1, double beta=0.0, rng=None,
                 bint track_margins=False, bint track_gram=False):
        self.budget = budget        # (before the engine's __init__ reads capacity_limit)
        self.beta = beta
        OnlineLearner.__init__(self, rng=rng, track_gram=track_gram,
                               track_margins=track_margins)

    cdef Py_ssize_t capacity_limit(self) noexcept nogil:
        # B support vectors, one appended before a removal, one spare
        return self.budget + 2 if self.budget >= 0 else -1

    def check_policy_state(self, Py_ssize_t pool_size):
        if not (self.budget == -1 or self.budget >= 1):
            return f"budget={self.budget} is neither -1 (none) nor at least 1"
        return None

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef double score = self.dot_row()
        cdef Py_ssize_t room
        if self.wants_update(y, score):
            room = self.make_room()
            if room == NO_ROOM:
                return score
            if room == APPEND:
                self.append_current(self.new_coefficient(y, score))
            else:   # remove the support vector at position ``room``, then add
                self.replace_at(room, self.new_coefficient(y, score))
            self.n_updates += 1
            self.after_insert()
        return score

    cdef bint wants_update(self, double y, double score) noexcept nogil:
        return y * score <= self.beta

    cdef double new_coefficient(self, double y, double score) noexcept nogil:
        return y

    cdef Py_ssize_t make_room(self) except -3 nogil:
        """Where the new support vector goes: ``APPEND``, the position of
        the one it replaces (removed first), or ``NO_ROOM``."""
        return APPEND

    cdef int after_insert(self) except -1 nogil:
        return 0

    cdef double sv_label(self, Py_ssize_t cell) noexcept nogil:
        """y_c, the sign of the coefficient (perceptron-style updates)."""
        return _sign_of(self.alpha[cell] * self.scale)


cdef inline double _sign_of(double coefficient) noexcept nogil:
    return 1.0 if coefficient > 0 else -1.0


cdef class StoptronLearner(MistakeDrivenLearner):
    """The Stoptron: the kernel perceptron that stops adding once ``|S| = B``."""

    cdef Py_ssize_t make_room(self) except -3 nogil:
        return APPEND if self.n_sv < self.budget else NO_ROOM


cdef class RandomBudgetLearner(MistakeDrivenLearner):
    """The Random Budget Perceptron: on a mistake with ``|S| = B``, remove a uniformly random support
    vector, position ``rng.randint(B)`` oldest first (the ``RandomState``
    spelling of ``Generator.integers(B)``), then append the new example."""

    cdef Py_ssize_t make_room(self) except -3 nogil:
        if self.n_sv == self.budget:
            return self.random_below(self.budget)
        return APPEND


cdef class CrammerKandolaSingerLearner(MistakeDrivenLearner):
    """The Budget Perceptron of Crammer, Kandola & Singer.

    Fixed cache (``budget >= 1``, Fig. 3): on an update with ``|S| = B``,
    first remove the support vector with the largest leave-one-out margin
    ``y_j (f(x_j) - alpha_j k(x_j, x_j))``, then add.  Adaptive cache
    (``budget = -1``, DistillCache of Fig. 2): after each insertion, remove
    the support vector with the largest leave-one-out margin while that
    margin is ``>= beta`` (the new example is never a candidate).  The
    margins ``f(x_j)`` are kept by the engine (``track_margins``) in
    O(|S|) per change.  A replacement's pass over every cell leaves the
    leave-one-out margins of the new state behind (``replace_margins``):
    nothing changes the model until the next update, whose removal then
    reads them instead of making a pass of its own.

    The Gram matrix is kept *by age*: ``k(x_c, x_c')`` is always in the
    row of the newer of the two, ``gram[newer, older]``; the older one's
    entry may be stale.  A replacement then writes the new vector's row
    only, not its column (a cache line per cell, the largest memory cost
    of the update at B = 500), and a removal completes the removed
    vector's row from the rows of the vectors newer than it
    (:meth:`complete_gram_row`; on the benchmark streams the removed
    vector is the newest in nine removals out of ten, so there are few).
    The margins see the same values as with a symmetric matrix: the same
    model, bit for bit.
    """

    # every cell's leave-one-out margin (best_removal), and whether they are
    # those of the current state (left by the last replacement's pass)
    cdef double[::1] loo
    cdef bint loo_current

    def __init__(self, Py_ssize_t budget=-1, double beta=0.0, rng=None):
        MistakeDrivenLearner.__init__(self, budget, beta, rng, track_margins=True)
        self.loo = np.empty(self.capacity)

    cdef Py_ssize_t best_removal(self, Py_ssize_t n_candidates, double *best) except -1 nogil:
        """Position among the oldest ``n_candidates`` with the largest
        leave-one-out margin (ties: oldest); its margin goes to ``best``.
        A NaN margin (an overflow of the margins' sums) raises.

        One pass over every cell finds the largest margin, one more the
        cells within the tie tolerance of it: where that is one cell (the
        usual case), its position is looked up in ``order`` from the newest
        (where it mostly is: see the class's note); only a tie walks
        ``order`` from the oldest, comparing margins."""
        cdef Py_ssize_t i, first, n_within, n_nan, pos
        cdef double top, threshold
        cdef const Py_ssize_t* order = &self.order[0]
        cdef double* loo
        if self.loo.shape[0] < self.capacity:
            with gil:
                self.loo = np.empty(self.capacity)
                self.loo_current = False
        loo = &self.loo[0]
        if not self.loo_current:    # every cell's margin, contiguously
            skb_leave_one_out_margins(&self.alpha[0], &self.margin[0], &self.kself[0],
                                      self.scale, self.capacity, loo)
        self.loo_current = False    # (changed below, and by the update that follows)
        for i in range(n_candidates, self.n_sv):     # the newer ones are no candidates
            loo[order[i]] = -INFINITY
        top = skb_largest(loo, self.capacity)
        threshold = top - tie_tolerance(top, 1.0)
        best[0] = top
        first = skb_first_at_least(loo, self.capacity, threshold, &n_within, &n_nan)
        if n_nan or top == INFINITY:
            raise_not_finite(b"A leave-one-out margin")
        if n_within == 1:       # (then loo[first] is top)
            pos = skb_last_position(order, n_candidates, first)
            if pos >= 0:
                return pos
        for i in range(n_candidates):
            if loo[order[i]] >= threshold:
                best[0] = loo[order[i]]
                return i
        return 0

    cdef Py_ssize_t make_room(self) except -3 nogil:
        cdef double value
        if self.n_sv == self.budget:
            return self.best_removal(self.n_sv, &value)
        return APPEND

    cdef void complete_gram_row(self, Py_ssize_t cell, Py_ssize_t first_newer) noexcept nogil:
        """Put ``k(x_cell, x_c)`` in ``gram[cell, c]`` for the support
        vectors ``c = order[first_newer:n_sv]``, those newer than ``cell``'s
        (their rows hold it): the row then holds the vector's kernel value
        with every support vector, as a removal reads it."""
        cdef Py_ssize_t i, c, cap = self.capacity
        cdef double* gram = &self.gram[0, 0]
        cdef const Py_ssize_t* order = &self.order[0]
        for i in range(first_newer, self.n_sv):
            c = order[i]
            gram[cell * cap + c] = gram[c * cap + cell]

    cdef int remove_at(self, Py_ssize_t pos) except -1 nogil:
        self.complete_gram_row(self.order[pos], pos + 1)
        return MistakeDrivenLearner.remove_at(self, pos)

    cdef double replace_margins(self, Py_ssize_t cell, Py_ssize_t pos, double a_old,
                                double a_new) noexcept nogil:
        """The engine's pass of a replacement, the Gram matrix by age: the
        removed vector's row completed, the new vector's row written (not
        its column); it leaves the new state's leave-one-out margins in
        ``loo`` as well (the same values :meth:`best_removal` would
        compute)."""
        cdef double* loo = NULL
        self.complete_gram_row(cell, pos)       # (cell is already unlinked)
        if self.loo.shape[0] >= self.capacity:
            loo = &self.loo[0]
        self.loo_current = loo != NULL
        return skb_replace_in_margins(&self.gram[0, 0], self.capacity, cell, &self.k_row[0],
                                      &self.alpha[0], &self.margin[0], a_old, a_new,
                                      &self.kself[0], self.scale, loo, False)

    cdef void forget_derived_values(self) noexcept nogil:
        self.loo_current = False

    cdef int after_insert(self) except -1 nogil:
        cdef double value
        cdef Py_ssize_t pos
        if self.budget >= 0:
            return 0
        while self.n_sv > 1:
            pos = self.best_removal(self.n_sv - 1, &value)
            if value < self.beta - tie_tolerance(self.beta, 1.0):
                break
            self.remove_at(pos)
        return 0


cdef class ForgetronLearner(MistakeDrivenLearner):
    """The self-tuned Forgetron of Dekel, Shalev-Shwartz & Singer.

    On a mistake: ``M += 1``; add ``(x_t, sigma = 1)``; if ``|S| = B + 1``:
    with ``r`` the oldest support vector and ``mu = y_r f'(x_r)`` (the model
    after the insertion), shrink every weight by the largest
    ``phi in (0, 1]`` with ``Psi(phi) + Q <= 15/32 M`` (O(1): the engine's
    global scale), ``Q += Psi(phi)``, and remove ``r``.  With
    ``self_tuned=False``: remove the oldest, never shrink.

    ``f'(x_r)`` needs no Gram matrix: every other support vector is newer
    than ``r``, so ``f'(x_r) = alpha_r k(x_r, x_r) + newer_sum[r]`` with
    ``newer_sum[c]`` = the sum of ``alpha_j k(x_j, x_c)`` over the support
    vectors inserted after ``c`` (unscaled, like ``alpha``): one pass over
    the inserted example's kernel row per insertion, nothing on removal
    (only the oldest ever goes).

    ``last_phi`` / ``n_removals`` record the latest shrink factor and the
    number of removals (``phi = 1`` for the plain variant).
    """

    cdef public bint self_tuned
    cdef public long long M, n_removals
    cdef public double Q, last_phi
    cdef public double[::1] newer_sum

    _state_names = MistakeDrivenLearner._state_names + (
        "self_tuned", "M", "Q", "n_removals", "last_phi", "newer_sum")

    def __cinit__(self, *args, **kwargs):
        self.newer_sum = np.zeros(0)    # before the engine's __init__ grows it

    def __init__(self, Py_ssize_t budget=1, bint self_tuned=True):
        MistakeDrivenLearner.__init__(self, budget, 0.0, None)
        _start_counters(self, self_tuned)

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        MistakeDrivenLearner.grow(self, new_capacity)
        newer = np.zeros(new_capacity)
        newer[:self.newer_sum.shape[0]] = self.newer_sum
        self.newer_sum = newer
        return 0

    def check_policy_state(self, Py_ssize_t pool_size):
        problem = MistakeDrivenLearner.check_policy_state(self, pool_size)
        if problem is None:
            problem = size_problem({"newer_sum": self.newer_sum}, self.capacity)
        return problem

    cdef int after_insert(self) except -1 nogil:
        cdef Py_ssize_t r, c, cell = self.order[self.n_sv - 1]
        cdef double sigma, mu, phi = 1.0, a = self.alpha[cell], shrunk
        cdef double* newer
        cdef const double* k_row
        self.M += 1
        if self.self_tuned:   # every cell (a free one's sum is never read)
            self.ensure_row()
            newer = &self.newer_sum[0]
            k_row = &self.k_row[0]
            skb_axpy(newer, a, k_row, self.capacity)
            newer[cell] = 0.0
        if self.n_sv <= self.budget:
            return 0
        if self.self_tuned:
            r = self.order[0]
            sigma = fabs(self.alpha[r] * self.scale)
            mu = self.sv_label(r) * self.scale * (self.alpha[r] * self.kself[r] + newer[r])
            phi = forgetron_shrink(sigma, mu, self.M, &self.Q)
            if phi < 1.0:
                shrunk = self.scale * phi
                if self.rescale(phi):   # alpha *= shrunk: so do the sums
                    for c in range(self.capacity):
                        newer[c] *= shrunk
        self.last_phi = phi
        self.n_removals += 1
        self.remove_at(0)
        return 0


def _start_counters(learner, bint self_tuned):
    """A new Forgetron learner's (binary or shared) ``self_tuned`` and
    counters: no mistake, no damage, no removal yet."""
    learner.self_tuned = self_tuned
    learner.M = 0
    learner.Q = 0.0
    learner.n_removals = 0
    learner.last_phi = 1.0


cdef double forgetron_shrink(double sigma, double mu, long long M,
                             double* Q) except -1.0 nogil:
    """The self-tuned shrink of a removal: ``phi`` for the removed
    vector's ``sigma`` and margin ``mu`` with the damage ``Q[0]`` so far
    after ``M`` mistakes, and ``Q[0] += Psi(phi)``.  A margin that is not
    finite raises."""
    cdef double phi
    if not (is_finite(mu) and is_finite(sigma)):
        raise_not_finite(b"The Forgetron's margin of the oldest support vector")
    phi = forgetron_phi(sigma, mu, FORGETRON_RATE * M - Q[0])
    Q[0] += forgetron_psi(sigma, phi, mu)
    return phi


cdef inline double forgetron_psi(double sigma, double phi, double mu) noexcept nogil:
    """Psi(sigma, phi, mu) = (sigma phi)^2 + 2 sigma phi (1 - phi mu)."""
    return (sigma * phi) ** 2 + 2.0 * sigma * phi * (1.0 - phi * mu)


cdef double forgetron_phi(double sigma, double mu, double room) noexcept nogil:
    """max{phi in (0, 1] : Psi(phi) <= room}, ``room = 15/32 M - Q > 0``.

    ``Psi(phi) = a phi^2 + b phi`` with ``a = sigma^2 - 2 sigma mu`` and
    ``b = 2 sigma >= 0``; ``Psi(0) = 0 < room``.  If ``Psi(1) <= room``,
    phi = 1.  Otherwise phi is where Psi first climbs to ``room``:
    * a > 0 (convex): the positive root of ``a phi^2 + b phi - room``;
    * a = 0 (linear): ``room / b``;
    * a < 0 (concave, rising at 0): the *smaller* positive root -- the
      larger one lies beyond 1 since Psi(1) > room, so it is not in (0, 1]
      (LIBOKL/KOL take it; that is wrong).
    All three are ``2 room / (b + sqrt(b^2 + 4 a room))``, the form without
    cancellation (the textbook ``(-b + sqrt(.)) / (2a)`` loses digits when
    ``|a|`` is small, and is 0/0 at ``a = 0``).
    """
    cdef double a = sigma * sigma - 2.0 * sigma * mu
    cdef double b = 2.0 * sigma
    cdef double disc
    if a + b <= room:  # Psi(1) + Q <= 15/32 M
        return 1.0
    if a == 0.0:
        return room / b
    disc = b * b + 4.0 * a * room
    if disc < 0.0:  # only by rounding: Psi(1) > room implies a real root
        disc = 0.0
    return min(2.0 * room / (b + sqrt(disc)), 1.0)


def _forgetron_phi(double sigma, double mu, double room):
    """Python access to the closed form (for tests)."""
    return forgetron_phi(sigma, mu, room)


cdef class PassiveAggressiveLearner(MistakeDrivenLearner):
    """Kernel PA-I (unbounded).  On ``loss = 1 - y f(x) > 0``, add
    ``(x_t, y min(C, loss / k(x_t, x_t)))`` (``y C`` when ``k(x_t, x_t) = 0``);
    with an example weight ``w`` the cap is ``C w`` (no update when ``w = 0``)."""

    cdef public double C

    _state_names = MistakeDrivenLearner._state_names + ("C",)

    def __init__(self, double C=1.0):
        MistakeDrivenLearner.__init__(self, -1, 0.0, None)
        self.C = C

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        # the step depends on the score's value, not only its sign: the
        # score is summed over the support vectors oldest first (the
        # gathered row, ``dot_row``'s first branch), whatever the chunking,
        # so that chunked partial_fit gives fit's model bit for bit (the
        # chunk's one-pass sum adds the vectors of the chunk last)
        self.ensure_row()
        return MistakeDrivenLearner.process_example(self, y, example_id)

    cdef bint wants_update(self, double y, double score) noexcept nogil:
        return y * score < 1.0 and self.example_weight > 0.0

    cdef double new_coefficient(self, double y, double score) noexcept nogil:
        # the example's weight w scales its loss in the PA-I objective, so
        # its cap: C w (w = 1 without weights; a zero weight never updates)
        cdef double loss = 1.0 - y * score
        cdef double cap = self.C * self.example_weight
        if self.k_tt > 0.0 and loss / self.k_tt < cap:
            return y * loss / self.k_tt
        return y * cap


def _first_at_least(const double[::1] values, double threshold):
    """Python access for the tests: ``skb_first_at_least`` (the Budget
    Perceptron's removal search) on ``values``: ``(first, count, n_nan)``."""
    cdef Py_ssize_t count = 0, n_nan = 0, first
    first = skb_first_at_least(&values[0] if values.shape[0] else NULL, values.shape[0],
                               threshold, &count, &n_nan)
    return first, count, n_nan


# ---------------------------------------------------------------------------
# one support set for every class (doc/algorithms.md#fixed-budget-shared)
# ---------------------------------------------------------------------------
cdef class SharedMistakeDrivenLearner(SharedSupportLearner):
    """:class:`MistakeDrivenLearner`'s skeleton on one support set for ``k``
    classes (doc/algorithms.md#shared-multi-class): each support vector has
    a coefficient row, the class scores are ``f_c(x) = sum_i alpha_{i,c}
    k(x_i, x)``.  A round with class ``y``: the runner-up ``r = argmax_{c !=
    y} f_c`` (ties: the lowest index) and the margin ``m = f_y - f_r``,
    scores taken before anything changes; if :meth:`wants_update` (``m <=
    0``: a zero margin updates, as the binary rule's zero score), make room
    (:meth:`make_room`, as the binary hook), append the example with the
    row ``a (e_y - e_r)``, ``a`` = :meth:`step` (1 for the perceptrons),
    and tidy up (:meth:`after_insert`).  With one class (an open label
    stream's start) there is no rival and no update.

    ``process_example`` returns the margin (a mistake when ``<= 0``, except
    a tie the true class wins: ``round_value``).

    Parameters
    ----------
    n_classes : int
        ``k``.
    budget : int
        ``B`` for the whole model; ``-1`` for none.
    rng : numpy.random.RandomState or None
        The generator of a rule that draws.
    """

    _per_class_names = SharedSupportLearner._per_class_names + ("new_row",)
    _state_names = SharedSupportLearner._state_names + ("budget", "new_row")

    def __init__(self, Py_ssize_t n_classes=3, Py_ssize_t budget=-1, rng=None):
        self.budget = budget        # (before the engine's __init__ reads capacity_limit)
        SharedSupportLearner.__init__(self, n_classes, rng=rng)
        self.new_row = np.zeros(n_classes)

    cdef Py_ssize_t capacity_limit(self) noexcept nogil:
        return self.budget + 2 if self.budget >= 0 else -1    # as the binary skeleton

    def check_policy_state(self, Py_ssize_t pool_size):
        if not (self.budget == -1 or self.budget >= 1):
            return f"budget={self.budget} is neither -1 (none) nor at least 1"
        return (SharedSupportLearner.check_policy_state(self, pool_size)
                or size_problem({"new_row": self.new_row}, self.n_outputs, "entries"))

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef Py_ssize_t label = self.class_index(y), runner, room, cell
        cdef double margin
        margin = self.round_margin(label, &runner)
        if runner >= 0 and self.wants_update(margin):
            room = self.make_room()
            if room != NO_ROOM:
                if room != APPEND:
                    self.remove_at(room)
                # (the row in the units of tau: the true one over the scale)
                self.pair_row(&self.new_row[0], label, runner, self.step(margin) / self.scale)
                cell = self.append_pattern(label, &self.new_row[0])
                self.n_updates += 1
                self.after_insert(cell)
        return self.round_value(margin, label, runner)

    cdef bint wants_update(self, double margin) noexcept nogil:
        return margin <= 0.0

    cdef double step(self, double margin) noexcept nogil:
        return 1.0

    cdef Py_ssize_t make_room(self) except -3 nogil:
        return APPEND

    cdef int after_insert(self, Py_ssize_t cell) except -1 nogil:
        return 0


cdef class SharedStoptronLearner(SharedMistakeDrivenLearner):
    """The Stoptron on one support set: rows ``e_y - e_r`` while ``|S| <
    B``, then frozen."""

    cdef Py_ssize_t make_room(self) except -3 nogil:
        return APPEND if self.n_sv < self.budget else NO_ROOM


cdef class SharedRandomBudgetLearner(SharedMistakeDrivenLearner):
    """The Random Budget Perceptron on one support set: at ``|S| = B``
    remove position ``rng.randint(B)`` (the binary rule's draw), then
    append the row ``e_y - e_r``."""

    cdef Py_ssize_t make_room(self) except -3 nogil:
        if self.n_sv == self.budget:
            return self.random_below(self.budget)
        return APPEND


cdef class SharedForgetronLearner(SharedMistakeDrivenLearner):
    """The self-tuned Forgetron on one support set
    (doc/algorithms.md#fixed-budget-shared).

    On an update (``m <= 0``): ``M += 1``; append the row ``e_y - e_r``; if
    ``|S| = B + 1``: with ``r`` the oldest support vector, ``sigma_r =
    ||alpha_r||`` (its row's Euclidean norm) and ``mu`` its class's top-two
    margin ``f'_{y_r}(x_r) - max_{c != y_r} f'_c(x_r)`` under the model
    after the insertion, shrink every row by the binary rule's ``phi``
    (:func:`forgetron_phi`), ``Q += Psi(phi)``, and remove ``r``.  With
    ``self_tuned=False``: remove the oldest, never shrink.

    ``f'(x_r)`` needs no Gram matrix, as the binary learner's:
    ``newer_sum[c, :]`` is the sum of ``tau_j k(x_j, x_c)`` over the support
    vectors inserted after ``c`` (units of ``tau``), one pass over the
    inserted example's kernel row per insertion (two columns: the new row
    has two non-zero entries).
    """

    cdef public bint self_tuned
    cdef public long long M, n_removals
    cdef public double Q, last_phi
    cdef public double[:, ::1] newer_sum

    _per_class_names = SharedMistakeDrivenLearner._per_class_names + ("newer_sum",)
    _state_names = SharedMistakeDrivenLearner._state_names + (
        "self_tuned", "M", "Q", "n_removals", "last_phi", "newer_sum")

    def __cinit__(self, *args, **kwargs):
        self.newer_sum = np.zeros((0, 1))   # before the engine's __init__ grows it

    def __init__(self, Py_ssize_t n_classes=3, Py_ssize_t budget=1, bint self_tuned=True):
        SharedMistakeDrivenLearner.__init__(self, n_classes, budget, None)
        self.newer_sum = np.zeros((self.capacity, n_classes))
        _start_counters(self, self_tuned)

    cdef int grow(self, Py_ssize_t new_capacity) except -1:
        SharedMistakeDrivenLearner.grow(self, new_capacity)
        self.newer_sum = _resized_rows(self.newer_sum, new_capacity)
        return 0

    def check_policy_state(self, Py_ssize_t pool_size):
        problem = SharedMistakeDrivenLearner.check_policy_state(self, pool_size)
        if problem is None:
            problem = (size_problem({"newer_sum": self.newer_sum}, self.capacity)
                       or size_problem({"newer_sum columns": self.newer_sum.T},
                                       self.n_outputs, "entries"))
        if problem is None and not (0 <= self.n_removals <= self.M):
            problem = f"n_removals={self.n_removals} is not in [0, M={self.M}]"
        if problem is None and not (is_finite(self.Q)
                                    and self.Q <= FORGETRON_RATE * self.M * (1.0 + 1e-9)):
            problem = f"Q={self.Q} is not a finite number at most 15/32 M"
        return problem

    cdef int after_insert(self, Py_ssize_t cell) except -1 nogil:
        cdef Py_ssize_t i, c, r, y, runner = -1, k = self.n_outputs
        cdef Py_ssize_t label = self.label[cell]
        cdef double sigma, mu, rival, v, phi = 1.0, shrunk, a_y, a_r
        cdef double* newer
        cdef const double* k_row
        cdef const Py_ssize_t* order
        self.M += 1
        if self.self_tuned:
            # the new row is a (e_y - e_r): add it to the older vectors' sums
            for r in range(k):
                if r != label and self.new_row[r] != 0.0:
                    runner = r
            a_y = self.new_row[label]
            a_r = self.new_row[runner]
            newer = &self.newer_sum[0, 0]
            k_row = &self.k_row[0]
            order = &self.order[0]
            for i in range(self.n_sv - 1):
                c = order[i]
                newer[c * k + label] += a_y * k_row[c]
                newer[c * k + runner] += a_r * k_row[c]
            for r in range(k):
                self.newer_sum[cell, r] = 0.0
        if self.n_sv <= self.budget:
            return 0
        if self.self_tuned:
            c = self.order[0]
            y = self.label[c]
            sigma = 0.0
            for r in range(k):
                sigma += self.tau[c, r] * self.tau[c, r]
            sigma = sqrt(sigma) * self.scale
            rival = -INFINITY
            for r in range(k):
                if r != y:
                    rival = max(rival, self.tau[c, r] * self.kself[c] + self.newer_sum[c, r])
            mu = self.scale * (self.tau[c, y] * self.kself[c] + self.newer_sum[c, y] - rival)
            phi = forgetron_shrink(sigma, mu, self.M, &self.Q)
            if phi < 1.0:
                shrunk = self.scale * phi
                if self.rescale(phi):   # tau *= shrunk: so do the sums
                    for i in range(self.n_sv):
                        c = self.order[i]
                        for r in range(k):
                            self.newer_sum[c, r] *= shrunk
        self.last_phi = phi
        self.n_removals += 1
        self.remove_at(0)
        return 0


cdef class SharedPassiveAggressiveLearner(SharedMistakeDrivenLearner):
    """Kernel PA-I on one support set (unbounded): on ``m < 1``, append
    the row ``a (e_y - e_r)`` with ``a = min(C w, (1 - m) / (2 k(x_t,
    x_t)))`` (``C w`` when ``k(x_t, x_t) = 0``; the new example's own norm
    in the shared model is ``||k(x_t, .) (e_y - e_r)||^2 = 2 k(x_t, x_t)``);
    ``w`` the example's weight, no update for ``w = 0``."""

    cdef public double C

    _state_names = SharedMistakeDrivenLearner._state_names + ("C",)

    def __init__(self, Py_ssize_t n_classes=3, double C=1.0):
        SharedMistakeDrivenLearner.__init__(self, n_classes, -1, None)
        self.C = C

    cdef bint wants_update(self, double margin) noexcept nogil:
        return margin < 1.0 and self.example_weight > 0.0

    cdef double step(self, double margin) noexcept nogil:
        cdef double loss = 1.0 - margin, norm = 2.0 * self.k_tt
        cdef double cap = self.C * self.example_weight
        if norm > 0.0 and loss / norm < cap:
            return loss / norm
        return cap
