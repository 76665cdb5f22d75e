# cython: language_level=3, cdivision=True
"""Kernel online gradient descent, the Nystrom learner built on it, and
the linear learner of the Fourier features (doc/algorithms.md, "Kernel OGD /
NORMA, NOGD and FOGD").

===================  ==================================================
KernelOGDLearner     every round: scores, decays every coefficient by
                     ``1 - eta lambda`` (the engine's global scale, O(1)),
                     adds ``(x_t, eta y_t)`` when ``y_t f(x_t) < 1`` and,
                     with a budget, drops the oldest (NORMA's truncation)
NystromOGDLearner    stage 1: KernelOGDLearner with ``lambda = 0`` until
                     ``|S| = B``; at the first update with a full budget,
                     the Nystrom feature map of ``S`` and the stage-1 model
                     carried over into it; then hinge OGD on the features
LinearHingeLearner   hinge OGD on a block of features per call, ``z(x)``
                     computed by the caller (FOGD's random Fourier
                     features)
MulticlassHinge-     FOGD's shared multi-class mode: one row of weights
Learner              per class on the same features, the top-two rule
===================  ==================================================

The two feature learners share one step, :func:`hinge_step`: score
``w.z``, and ``w += eta y z`` when ``y w.z < 1``.
"""

import numpy as np
from cython cimport floating
from libc.float cimport DBL_MAX, DBL_MIN
from libc.math cimport sqrt
from libc.stdint cimport uint64_t

cdef extern from "_fourier_loops.h" nogil:
    int skb_fourier_loops_init()
    uint64_t skb_fourier_from_projections(const double* P, Py_ssize_t rows, Py_ssize_t m,
                                          Py_ssize_t ldp, double factor, double* Z)
    uint64_t skb_fourier_sparse_rows(const double* values, const int* indices,
                                     const Py_ssize_t* starts, const Py_ssize_t* lengths,
                                     Py_ssize_t n_rows, const double* U, Py_ssize_t m,
                                     double factor, double* Z)
    uint64_t skb_fourier_from_projections_f32(const float* P, Py_ssize_t rows, Py_ssize_t m,
                                              Py_ssize_t ldp, float factor, double* Z)
    uint64_t skb_fourier_sparse_rows_f32(const float* values, const int* indices,
                                         const Py_ssize_t* starts, const Py_ssize_t* lengths,
                                         Py_ssize_t n_rows, const float* U, Py_ssize_t m,
                                         float factor, double* Z)
    void skb_dense_projections(const double* X, Py_ssize_t rows, Py_ssize_t d,
                               Py_ssize_t ldx, const double* U, Py_ssize_t m, double* P)
    void skb_dense_projections_f32(const float* X, Py_ssize_t rows, Py_ssize_t d,
                                   Py_ssize_t ldx, const float* U, Py_ssize_t m, float* P)

# FOGD, CSR input: rows whose features are computed together (their rows
# of features, 2 D values each, stay in L2; the columns of U a block of
# projections reads stay in L1 across them)
cdef enum:
    FOURIER_ROWS = 16

from skbudget._budget_fast cimport MistakeDrivenLearner
from skbudget._engine cimport OnlineLearner
from skbudget._engine import _check_csr_rows, size_problem
from skbudget._feature_learner cimport FeatureLearner
from skbudget._numbers cimport is_finite, raise_not_finite
from skbudget._shared_support cimport SharedSupportLearner
from skbudget._vector_loops cimport (skb_axpy, skb_dot16, skb_dot16_rows, skb_nonfinite_flags,
                                     skb_runner_up, skb_vector_loops_init)

skb_vector_loops_init()     # the AVX2 loops where the CPU has AVX2
skb_fourier_loops_init()    # FOGD's features: AVX-512 where the CPU has it too


def fourier_loops():
    """Which build of FOGD's compiled features runs: ``'avx512'``,
    ``'avx2'`` or ``'baseline'`` (``_fourier_loops.h``; set
    ``SKBUDGET_DISABLE_AVX512=1`` or ``SKBUDGET_DISABLE_AVX2=1`` before the
    import to keep AVX2 or the baseline).  All three give the same
    features, bit for bit."""
    return ("baseline", "avx2", "avx512")[skb_fourier_loops_init()]

# eigenvalues of K_SS at most this fraction of the largest are dropped (NOGD)
cdef double EIGEN_RTOL = 1e-12


cdef inline double hinge_step(double* w, const double* z, Py_ssize_t n, double y, double eta,
                              long long* n_updates) except? -1.5e300 nogil:
    """One round of linear hinge OGD on the features ``z[0:n]``: returns the
    score ``w.z`` (before the update) and, when ``y w.z < 1``, adds
    ``eta y z`` to ``w`` and counts the update.  A score that is not finite
    raises (no NaN compared silently)."""
    cdef double score = skb_dot16(w, z, n) if n else 0.0
    if not is_finite(score):
        raise_not_finite(b"The score w.z(x)")
    if y * score < 1.0:
        if n:
            skb_axpy(w, eta * y, z, n)
        n_updates[0] += 1
    return score


cdef class KernelOGDLearner(MistakeDrivenLearner):
    """Kernel OGD on the hinge loss, and NORMA with a budget.

    Each round: ``score = f(x_t)``; every coefficient ``*= 1 - eta lam``
    (O(1): the engine's global scale); if ``y score < 1``, add
    ``(x_t, eta y)``; with ``budget = B`` and then ``|S| = B + 1``, remove
    the oldest (a replacement of position 0).  ``n_updates`` counts the
    insertions.

    Parameters
    ----------
    budget : int
        ``B``; ``-1`` for none (plain kernel OGD, unbounded).
    eta : float
        The constant step ``eta > 0``.
    lam : float
        The regularization ``lambda >= 0``, with ``eta lambda <= 1``.
    """

    cdef public double eta, lam

    _state_names = MistakeDrivenLearner._state_names + ("eta", "lam")

    def __init__(self, Py_ssize_t budget=-1, double eta=0.5, double lam=0.0,
                 bint track_gram=False):
        MistakeDrivenLearner.__init__(self, budget, 0.0, None, track_gram=track_gram)
        self.eta = eta
        self.lam = lam

    def check_policy_state(self, Py_ssize_t pool_size):
        problem = MistakeDrivenLearner.check_policy_state(self, pool_size)
        if problem is None and not (self.eta > 0.0 and is_finite(self.eta)):
            problem = f"eta={self.eta} is not a finite number > 0"
        if problem is None and not (0.0 <= self.eta * self.lam <= 1.0):
            problem = f"eta * lam = {self.eta * self.lam} is outside [0, 1]"
        return problem

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef double score = self.dot_row()
        if not is_finite(score):
            raise_not_finite(b"The score f(x)")
        if self.lam > 0.0:
            self.rescale(1.0 - self.eta * self.lam)
        if y * score < 1.0:
            if self.n_sv == self.budget:
                self.full_budget(y)
            else:
                self.append_current(self.eta * y)
                self.n_updates += 1
        return score

    cdef int full_budget(self, double y) except -1 nogil:
        """An update with ``|S| = B``: NORMA's truncation, the example added
        and the oldest support vector removed (in one replacement)."""
        self.replace_at(0, self.eta * y)
        self.n_updates += 1
        return 0


def nystrom_switch(gram, Py_ssize_t n_components, coef):
    """NOGD's switch to stage 2 (doc/algorithms.md#kernel-ogd): from the
    Gram matrix ``K_SS`` of the landmarks (oldest first), the feature map
    ``M = Lam^{-1/2} V^T`` of its ``n_components`` largest eigenpairs
    (eigenvalues ``<= 1e-12`` times the largest dropped) and the stage-1
    model ``coef`` (``(|S|,)``, or ``(|S|, k)`` rows of the shared mode)
    carried over, ``Lam^{1/2} V^T coef``.  Returns ``(M, w)``, C-contiguous."""
    values, vectors = np.linalg.eigh(gram)   # ascending
    top = values[::-1][:n_components]
    vectors = vectors[:, ::-1][:, :n_components]
    keep = top > EIGEN_RTOL * top[0]
    top, vectors = top[keep], vectors[:, keep]
    root = np.sqrt(top)
    carried = vectors.T @ coef
    return (np.ascontiguousarray(vectors.T / root[:, None]),
            np.ascontiguousarray(root.reshape((-1,) + (1,) * (carried.ndim - 1)) * carried))


def nystrom_problem(Py_ssize_t budget, Py_ssize_t n_components, Py_ssize_t n_sv, bint switched,
                    M, w):
    """A description of what is inconsistent in a NOGD learner's landmarks
    and feature stage (``M`` of shape ``(comp, B)``, the model ``w`` with
    ``comp`` rows), or None."""
    M, w = np.asarray(M), np.asarray(w)
    if budget < 1 or not 1 <= n_components <= budget:
        return (f"budget={budget}, n_components={n_components}: not "
                f"1 <= n_components <= budget")
    if n_sv > budget:
        return f"{n_sv} support vectors for a budget of {budget}"
    if M.shape[0] != w.shape[0] or w.shape[0] > n_components:
        return (f"a feature map of {M.shape[0]} rows and a model of "
                f"{w.shape[0]} values for {n_components} components")
    if switched and (n_sv != budget or M.shape[1] != budget):
        return (f"stage 2 with {n_sv} support vectors and a feature map of "
                f"{M.shape[1]} columns for a budget of {budget}")
    if not (np.isfinite(M).all() and np.isfinite(w).all()):
        return "the feature map or the model holds a value that is not finite"
    return None


cdef class NystromFeatures:
    """The features ``z(x_t) = M k(x_t, S)`` of NOGD's stage 2 (both
    modes), for the current example of a learner whose support set is the
    landmarks, with their scratch (derived values, never saved).

    Every feature is one fused multiply-add after another over ``S``
    (oldest first) from +0 (``skb_dense_projections`` of ``k(x_t, S)`` on
    ``M^T``), whichever way it is computed, so the model does not depend on
    how the stream is cut into calls or chunks.  At a chunk's first example
    the features of the whole chunk are computed at once where the engine
    holds its kernel block (dense input in store mode, block mode): register
    tiles of rows that read ``M^T`` once per tile instead of once per
    example (at B = 500, k = 100, ``M`` is 400 kB).  Otherwise (the chunk
    of the switch, wide CSR input) ``z`` is formed for the example alone,
    by the same chains."""

    cdef double[::1] k_s                # k(x_t, S), oldest first
    cdef double[::1] z                  # z(x_t)
    # the current chunk's features, one row per example: computed at the
    # chunk's first example for its first block_rows rows
    cdef double[:, ::1] k_block         # k(chunk, S), oldest first
    cdef double[:, ::1] z_block         # z(chunk)
    cdef double[:, ::1] MT              # M transposed (B, comp)
    cdef Py_ssize_t block_rows

    def __init__(self):
        self.k_s = np.zeros(0)
        self.z = np.zeros(0)
        self.k_block = np.zeros((0, 1))
        self.z_block = np.zeros((0, 1))
        self.MT = np.zeros((0, 0))
        self.block_rows = 0

    def use_map(self, M):
        """``M`` is the feature map from now on (at the switch, and when a
        state is loaded); the current chunk's rows are done one by one."""
        self.MT = np.ascontiguousarray(np.asarray(M).T)
        self.block_rows = 0

    cdef const double* current(self, OnlineLearner learner,
                               const double[:, ::1] M) except NULL nogil:
        """``z(x_t)`` (``M.shape[0]`` values) for the learner's current
        example: a row of the chunk's block, or formed alone."""
        cdef Py_ssize_t i, comp = M.shape[0], n = learner.n_sv
        if learner.t == 0:
            self.block_rows = 0
            if comp and (learner.chunk_blocks or not learner.uses_store):
                self.chunk_features(learner, M)
        if learner.t < self.block_rows:
            return &self.z_block[learner.t, 0]
        if self.k_s.shape[0] < n or self.z.shape[0] < comp + 1:
            with gil:
                self.k_s = np.zeros(n)
                self.z = np.zeros(comp + 1)
        learner.ensure_row()
        for i in range(n):
            self.k_s[i] = learner.k_row[learner.order[i]]
        if comp:
            self.check_transposed_map(M)
            skb_dense_projections(&self.k_s[0], 1, n, n, &self.MT[0, 0], comp, &self.z[0])
        return &self.z[0]

    cdef int check_transposed_map(self, const double[:, ::1] M) except -1 nogil:
        """``MT`` is ``M^T`` (set by :meth:`use_map`); rebuilt if its shape
        says otherwise."""
        if self.MT.shape[0] != M.shape[1] or self.MT.shape[1] != M.shape[0]:
            with gil:
                self.MT = np.ascontiguousarray(np.asarray(M).T)
        return 0

    cdef int chunk_features(self, OnlineLearner learner, const double[:, ::1] M) except -1 nogil:
        """``z_block = k(chunk, S) M^T`` for every example of the learner's
        current chunk (its rows of the engine's kernel block, gathered
        oldest first), ``block_rows`` = the chunk's length, by
        ``skb_dense_projections``: each value the chain of :meth:`current`'s
        example alone, bit for bit (a GEMM's sums depend on the block's
        shape, hence on where the stream was cut).  Stage 2 stores nothing,
        so every row's values are in the block."""
        cdef Py_ssize_t r, i, t = learner.t, n = learner.n_sv, comp = M.shape[0]
        cdef Py_ssize_t c = learner.chunk_len if learner.uses_store else learner.K_chunk.shape[0]
        if c <= 0:
            return 0
        if self.k_block.shape[0] < c or self.k_block.shape[1] != n \
                or self.z_block.shape[1] != comp:
            with gil:
                self.k_block = np.zeros((c, n))
                self.z_block = np.zeros((c, comp))
        for r in range(c):
            learner.t = r
            if not learner.gather_row():
                raise_not_finite(b"A kernel value")
            for i in range(n):
                self.k_block[r, i] = learner.k_row[learner.order[i]]
        learner.t = t
        learner.row_ready = False       # (k_row holds the chunk's last row)
        self.check_transposed_map(M)
        skb_dense_projections(&self.k_block[0, 0], c, n, n, &self.MT[0, 0], comp,
                              &self.z_block[0, 0])
        self.block_rows = c
        return 0


cdef class NystromOGDLearner(KernelOGDLearner):
    """NOGD: kernel OGD until the budget is full, then hinge OGD on the
    Nystrom features of the support set.

    Stage 1 is :class:`KernelOGDLearner` with ``lam = 0`` (the Gram matrix
    of ``S`` kept, ``track_gram``).  At the first round with
    ``y f(x_t) < 1`` and ``|S| = B`` (:meth:`full_budget`): ``K_SS = V Lam
    V^T``, the ``n_components`` largest eigenpairs kept (eigenvalues
    ``<= 1e-12 lam_max`` dropped), ``M = Lam^{-1/2} V^T`` (``comp`` rows,
    one column per support vector oldest first), ``w = Lam^{1/2} V^T
    alpha`` (the stage-1 model carried over).  Then, this round and every
    later one (:meth:`feature_round`): ``z = M k(x_t, S)``
    (:class:`NystromFeatures`), ``score = w.z``, and ``w += eta y z`` when
    ``y score < 1`` (counted in ``n_updates``).  ``S`` never changes again;
    the score the round returns is the model's before the round (stage 1's
    ``f(x_t)`` on the switching round).
    """

    cdef public Py_ssize_t n_components
    cdef public bint switched
    cdef public double[:, ::1] M        # (comp, B): the feature map over S, oldest first
    cdef public double[::1] w           # (comp,): the linear model
    cdef NystromFeatures features       # z(x_t) from M and the engine's kernel values

    _state_names = KernelOGDLearner._state_names + ("n_components", "switched", "M", "w")

    def __init__(self, Py_ssize_t budget=1, Py_ssize_t n_components=1, double eta=0.5):
        KernelOGDLearner.__init__(self, budget, eta, 0.0, track_gram=True)
        self.n_components = n_components
        self.switched = False
        self.M = np.zeros((0, budget))
        self.w = np.zeros(0)
        self.features = NystromFeatures()

    def check_policy_state(self, Py_ssize_t pool_size):
        problem = KernelOGDLearner.check_policy_state(self, pool_size)
        if problem is not None:
            return problem
        if self.lam != 0.0 or not self.track_gram:
            return "stage 1 is kernel OGD with lam = 0 and the Gram matrix kept"
        return nystrom_problem(self.budget, self.n_components, self.n_sv, self.switched,
                               self.M, self.w)

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        if self.switched:
            return self.feature_round(y)
        return KernelOGDLearner.process_example(self, y, example_id)

    cdef int full_budget(self, double y) except -1 nogil:
        with gil:
            self.start_stage_two()
        self.feature_round(y)
        return 0

    def start_stage_two(self):
        """The feature map of ``S`` and the stage-1 model in it (see the
        class docstring)."""
        self.M, self.w = nystrom_switch(self.gram_matrix(), self.n_components,
                                        self.coefficients())
        self.features.use_map(self.M)
        self.switched = True

    cdef double feature_round(self, double y) except? -1.5e300 nogil:
        """One round of stage 2: ``z = M k(x_t, S)``, score ``w.z``, and
        ``w += eta y z`` when ``y w.z < 1``; returns the score."""
        cdef Py_ssize_t comp = self.w.shape[0]
        cdef const double* z = self.features.current(self, self.M)
        return hinge_step(&self.w[0] if comp else NULL, z, comp, y, self.eta,
                          &self.n_updates)

    def set_state(self, state):
        KernelOGDLearner.set_state(self, state)
        self.features.use_map(self.M)

    def expansion(self):
        """The coefficients over ``S`` (oldest first) of the current model:
        ``alpha`` in stage 1, ``M^T w`` in stage 2 (``w.z(x) = (M^T w).k(x,
        S)``: the kernel expansion that predicts exactly as the features)."""
        if not self.switched:
            return self.coefficients()
        return np.asarray(self.M).T @ np.asarray(self.w)


def step_problem(double eta, long long n_updates):
    """What is wrong with a feature learner's step ``eta`` (a finite number
    > 0) and count of updates, or None (:class:`LinearHingeLearner`,
    :class:`MulticlassHingeLearner`)."""
    if not (eta > 0.0 and is_finite(eta)):
        return f"eta={eta} is not a finite number > 0"
    if n_updates < 0:
        return f"n_updates={n_updates} is negative"
    return None


cdef class SharedKernelOGDLearner(SharedSupportLearner):
    """Kernel OGD / NORMA on ``k`` classes with one shared support set
    (doc/algorithms.md#kernel-ogd, "Shared multi-class mode").

    Each round, with class index ``y``: the class scores ``f_c(x_t)``
    before anything changes, the runner-up ``r = argmax_{c != y} f_c``
    (ties: the lowest index) and the margin ``m = f_y - f_r``; every row
    ``*= 1 - eta lam`` (the global scale, O(1)); if ``m < 1``, ``x_t`` is
    added with the row ``eta (e_y - e_r)`` and, with ``budget = B`` and
    ``|S| = B`` before it, the oldest vector is removed first (NORMA's
    truncation: ``|S| <= B`` throughout).  ``n_updates`` counts the
    insertions.  ``process_example`` returns the margin (a mistake when
    ``<= 0``, except a tie the true class wins).  With one class there is
    no rival and nothing updates.

    Parameters
    ----------
    n_classes : int
        ``k`` (at least 1).
    budget : int
        ``B``; ``-1`` for none (unbounded).
    eta : float
        The constant step ``eta > 0``.
    lam : float
        The regularization ``lambda >= 0``, with ``eta lambda <= 1``.
    track_gram : bool
        Keep the Gram matrix of the support set (NOGD's stage 1).
    """

    cdef public Py_ssize_t budget
    cdef public double eta, lam
    cdef public double[::1] new_row     # scratch: the row of a new vector (tau units)

    _per_class_names = SharedSupportLearner._per_class_names + ("new_row",)
    _state_names = SharedSupportLearner._state_names + ("budget", "eta", "lam", "new_row")

    def __init__(self, Py_ssize_t n_classes=3, Py_ssize_t budget=-1, double eta=0.5,
                 double lam=0.0, bint track_gram=False):
        self.budget = budget        # (before the engine's __init__ reads capacity_limit)
        SharedSupportLearner.__init__(self, n_classes, track_gram=track_gram)
        self.eta = eta
        self.lam = lam
        self.new_row = np.zeros(n_classes)

    cdef Py_ssize_t capacity_limit(self) noexcept nogil:
        # the oldest is removed before the insertion that would exceed B
        return self.budget if self.budget >= 0 else -1

    def check_policy_state(self, Py_ssize_t pool_size):
        problem = SharedSupportLearner.check_policy_state(self, pool_size)
        if problem is None and not (self.budget == -1 or self.budget >= 1):
            problem = f"budget={self.budget} is neither -1 (none) nor at least 1"
        if problem is None and self.budget >= 0 and self.n_sv > self.budget:
            problem = f"{self.n_sv} support vectors for a budget of {self.budget}"
        if problem is None and not (self.eta > 0.0 and is_finite(self.eta)):
            problem = f"eta={self.eta} is not a finite number > 0"
        if problem is None and not (0.0 <= self.eta * self.lam <= 1.0):
            problem = f"eta * lam = {self.eta * self.lam} is outside [0, 1]"
        if problem is None:
            problem = size_problem({"new_row": self.new_row}, self.n_outputs, "entries")
        if problem is None and self.n_sv and not np.isfinite(
                np.asarray(self.tau)[self.support_order()]).all():
            problem = "a coefficient row holds a value that is not finite"
        return problem

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        cdef Py_ssize_t label = self.class_index(y), runner
        cdef double margin
        margin = self.round_margin(label, &runner)
        if runner >= 0 and not is_finite(margin):   # finite scores too far apart
            raise_not_finite(b"The margin f_y(x) - f_r(x)")
        if self.lam > 0.0:
            self.decay(1.0 - self.eta * self.lam)
        if margin < 1.0:
            if self.n_sv == self.budget:
                self.full_budget(label, runner)
            else:
                self.insert(label, runner)
        return self.round_value(margin, label, runner)

    cdef int insert(self, Py_ssize_t label, Py_ssize_t runner) except -1 nogil:
        """Add ``x_t`` with the row ``eta (e_y - e_r)`` (true values)."""
        self.pair_row(&self.new_row[0], label, runner, self.eta / self.scale)
        self.append_pattern(label, &self.new_row[0])
        self.n_updates += 1
        return 0

    cdef int full_budget(self, Py_ssize_t label, Py_ssize_t runner) except -1 nogil:
        """An update with ``|S| = B``: NORMA's truncation, the oldest
        removed and the example added."""
        self.remove_at(0)
        return self.insert(label, runner)

    cdef int decay(self, double factor) except -1 nogil:
        """Every row times ``factor`` in [0, 1], O(1) through the global
        scale; the scale is folded into the rows when it leaves [1e-100, 1]
        (as the engine's ``rescale`` folds the binary coefficients)."""
        cdef Py_ssize_t i, r, c
        self.scale *= factor
        if self.scale >= 1e-100:
            return 0
        for i in range(self.n_sv):
            c = self.order[i]
            for r in range(self.n_outputs):
                self.tau[c, r] *= self.scale
        self.scale = 1.0
        return 0


cdef class SharedNystromOGDLearner(SharedKernelOGDLearner):
    """NOGD on ``k`` classes with one shared set of landmarks
    (doc/algorithms.md#kernel-ogd, "Shared multi-class mode").

    Stage 1 is :class:`SharedKernelOGDLearner` with ``lam = 0`` (the Gram
    matrix kept) until ``|S| = B``.  At the first round with margin ``m <
    1`` and ``|S| = B``: the feature map ``M`` of the binary rule
    (:func:`nystrom_switch`) and the stage-1 rows carried over into the
    weight matrix ``W = Lam^{1/2} V^T A`` (``(comp, k)``, ``A`` the
    ``(B, k)`` coefficient rows: every class's column projected alike).
    Then, this round and every later one (:meth:`feature_round`): ``z = M
    k(x_t, S)``, scores ``s = W^T z``, the runner-up ``r`` and margin ``m =
    s_y - s_r`` of the top-two rule, and when ``m < 1``: ``W[:, y] += eta
    z``, ``W[:, r] -= eta z`` (counted in ``n_updates``).  The switching
    round returns stage 1's margin (the model before the round).  ``W``'s
    last axis is per class: a class added later (:meth:`add_class`) gets a
    zero column.
    """

    cdef public Py_ssize_t n_components
    cdef public bint switched
    cdef public double[:, ::1] M        # (comp, B): the feature map over S, oldest first
    cdef public double[:, ::1] W        # (comp, k): the linear models, one column per class
    cdef NystromFeatures features

    _per_class_names = SharedKernelOGDLearner._per_class_names + ("W",)
    _state_names = SharedKernelOGDLearner._state_names + ("n_components", "switched", "M", "W")

    def __init__(self, Py_ssize_t n_classes=3, Py_ssize_t budget=1, Py_ssize_t n_components=1,
                 double eta=0.5):
        SharedKernelOGDLearner.__init__(self, n_classes, budget, eta, 0.0, track_gram=True)
        self.n_components = n_components
        self.switched = False
        self.M = np.zeros((0, budget))
        self.W = np.zeros((0, n_classes))
        self.features = NystromFeatures()

    def check_policy_state(self, Py_ssize_t pool_size):
        problem = SharedKernelOGDLearner.check_policy_state(self, pool_size)
        if problem is None and (self.lam != 0.0 or not self.track_gram):
            problem = "stage 1 is kernel OGD with lam = 0 and the Gram matrix kept"
        if problem is None and self.W.shape[1] != self.n_outputs:
            problem = f"a weight matrix of {self.W.shape[1]} columns for {self.n_outputs} classes"
        return problem or nystrom_problem(self.budget, self.n_components, self.n_sv,
                                          self.switched, self.M, self.W)

    cdef double process_example(self, double y, Py_ssize_t example_id) except? -1.5e300 nogil:
        if self.switched:
            return self.feature_round(self.class_index(y))
        return SharedKernelOGDLearner.process_example(self, y, example_id)

    cdef int full_budget(self, Py_ssize_t label, Py_ssize_t runner) except -1 nogil:
        with gil:
            self.start_stage_two()
        self.feature_round(label)
        return 0

    def start_stage_two(self):
        """The feature map of ``S`` and the stage-1 rows in it (see the
        class docstring)."""
        self.M, self.W = nystrom_switch(self.gram_matrix(), self.n_components,
                                        SharedKernelOGDLearner.coefficient_matrix(self))
        self.features.use_map(self.M)
        self.switched = True

    cdef double feature_round(self, Py_ssize_t label) except? -1.5e300 nogil:
        """One round of stage 2 (see the class docstring); returns what
        ``process_example`` does for its margin."""
        cdef Py_ssize_t j, c, runner, comp = self.W.shape[0], k = self.n_outputs
        cdef const double* z = self.features.current(self, self.M)
        cdef double* scores = &self.scores[0]
        cdef double* row
        cdef double margin, step
        for c in range(k):
            scores[c] = 0.0
        for j in range(comp):
            row = &self.W[j, 0]
            for c in range(k):
                scores[c] += row[c] * z[j]
        margin = self.top_two_margin(label, &runner)
        if runner >= 0 and not is_finite(margin):
            raise_not_finite(b"The margin s_y(x) - s_r(x)")
        if margin < 1.0:
            step = self.eta
            for j in range(comp):
                self.W[j, label] += step * z[j]
                self.W[j, runner] -= step * z[j]
            self.n_updates += 1
        return self.round_value(margin, label, runner)

    def set_state(self, state):
        SharedKernelOGDLearner.set_state(self, state)
        self.features.use_map(self.M)

    def coefficient_matrix(self):
        """(|S|, k): the coefficient rows over ``S`` (oldest first) of the
        current model: stage 1's rows, or ``M^T W`` in stage 2 (the kernel
        expansion that predicts exactly as the features)."""
        if not self.switched:
            return SharedKernelOGDLearner.coefficient_matrix(self)
        return np.asarray(self.M).T @ np.asarray(self.W)


cdef class LinearHingeLearner(FeatureLearner):
    """Linear hinge OGD on features the caller computes a block at a time
    (FOGD: one learner per one-vs-rest class, every learner fed the same
    block).  :meth:`run_block` runs :func:`hinge_step` over the block's
    rows in order, without the GIL.  Its state (``w``, ``eta``,
    ``n_updates``) is saved and restored as the engine's learners' is
    (``get_state`` / ``set_state``, pickling); it draws no random numbers.

    Parameters
    ----------
    n_features : int
        The length of ``z(x)``.
    eta : float
        The constant step.
    """

    cdef public double[::1] w
    cdef public double eta
    cdef public long long n_updates

    _state_names = ("w", "eta", "n_updates")

    def __init__(self, Py_ssize_t n_features=0, double eta=0.5):
        FeatureLearner.__init__(self)
        self.w = np.zeros(n_features)
        self.eta = eta
        self.n_updates = 0

    def check_state(self):
        """A description of what is inconsistent in the state, or None."""
        problem = step_problem(self.eta, self.n_updates)
        if problem is None and not np.isfinite(self.w).all():
            problem = "w holds a value that is not finite"
        return problem

    def run_block(self, const double[:, ::1] Z, const double[::1] y, double[::1] scores):
        """Rounds over the rows of ``Z`` (labels ``y``, +-1): each row's
        score before its update goes to ``scores``."""
        cdef Py_ssize_t t, n = Z.shape[1], c = Z.shape[0]
        cdef double* w = NULL
        problem = self.check_state()
        if problem is None and (n == 0 or n != self.w.shape[0]):
            problem = f"a block of {n} features for a model of {self.w.shape[0]}"
        if problem is None and not (y.shape[0] == c and scores.shape[0] == c):
            problem = f"{c} rows, {y.shape[0]} labels and {scores.shape[0]} scores"
        if problem is not None:
            raise ValueError(f"LinearHingeLearner: inconsistent state: {problem}")
        if c == 0:
            return
        if n:
            w = &self.w[0]
        with nogil:
            for t in range(c):
                scores[t] = hinge_step(w, &Z[t, 0], n, y[t], self.eta, &self.n_updates)

    def get_state(self):
        """Everything needed to rebuild the learner (``w`` copied)."""
        return {"w": np.array(self.w, copy=True), "eta": self.eta,
                "n_updates": self.n_updates}

    def set_state(self, state):
        self.w = np.array(state["w"], dtype=np.float64, copy=True)
        self.eta = state["eta"]
        self.n_updates = state["n_updates"]


cdef class MulticlassHingeLearner(FeatureLearner):
    """FOGD's shared multi-class mode (doc/algorithms.md#kernel-ogd, "FOGD's
    shared multi-class mode"): one row ``w_c`` of ``W`` per class on the
    same features ``z(x)``, a block of them per call as
    :class:`LinearHingeLearner`.  Each round with true class ``y`` (its
    index, as a double): the scores ``s_c = w_c.z`` before the update,
    the runner-up ``r = argmax_{c != y} s_c`` (ties: the lowest index),
    the margin ``m = s_y - s_r``, and when ``m < 1``: ``w_y += eta z``,
    ``w_r -= eta z`` (the binary step ``eta y z`` as the row ``eta (e_y -
    e_r)``), counted once in ``n_updates``.  With one class there is no
    rival and no update.  A round returns ``m`` (a mistake when ``<= 0``),
    or the smallest positive double for a tie the true class wins (the
    lowest index is predicted).  It draws no random numbers.

    Parameters
    ----------
    n_outputs : int
        ``k``, the number of classes (at least 1; :meth:`add_class` adds
        one).
    n_features : int
        The length of ``z(x)``.
    eta : float
        The constant step.
    """

    cdef public double[:, ::1] W        # (k, n_features): w_c, one row per class
    cdef public double eta
    cdef public long long n_updates
    cdef public Py_ssize_t n_outputs, n_features
    cdef double[::1] class_scores       # scratch: the round's s_c

    _state_names = ("W", "eta", "n_updates", "n_outputs", "n_features")

    def __init__(self, Py_ssize_t n_outputs=1, Py_ssize_t n_features=0, double eta=0.5):
        FeatureLearner.__init__(self)
        if n_outputs < 1 or n_features < 0:
            raise ValueError(f"n_outputs={n_outputs} must be >= 1 and n_features={n_features} "
                             f">= 0")
        self.n_outputs, self.n_features, self.eta = n_outputs, n_features, eta
        self.W = np.zeros((n_outputs, n_features))
        self.class_scores = np.zeros(n_outputs)
        self.n_updates = 0

    def check_state(self):
        """A description of what is inconsistent in the state, or None."""
        problem = step_problem(self.eta, self.n_updates)
        if problem is not None:
            return problem
        if self.n_outputs < 1 or self.n_features < 1:
            return f"n_outputs={self.n_outputs} and n_features={self.n_features} must be >= 1"
        if (self.W.shape[0], self.W.shape[1]) != (self.n_outputs, self.n_features):
            return (f"W of shape {(self.W.shape[0], self.W.shape[1])} for {self.n_outputs} "
                    f"classes of {self.n_features} features")
        if self.class_scores.shape[0] != self.n_outputs:
            return f"{self.class_scores.shape[0]} class scores for {self.n_outputs} classes"
        if not np.isfinite(self.W).all():
            return "W holds a value that is not finite"
        return None

    cdef int check_call(self, Py_ssize_t width, Py_ssize_t c, Py_ssize_t n_labels,
                        Py_ssize_t n_scores) except -1:
        """Raise ValueError unless the state is consistent and a call of
        ``c`` rows of ``width`` features, ``n_labels`` labels and
        ``n_scores`` scores fits it."""
        problem = self.check_state()
        if problem is None and width != self.n_features:
            problem = f"a block of {width} features for a model of {self.n_features}"
        if problem is None and not (n_labels == n_scores == c):
            problem = f"{c} rows, {n_labels} labels and {n_scores} scores"
        if problem is not None:
            raise ValueError(f"MulticlassHingeLearner: inconsistent state: {problem}")
        return 0

    cdef double top_two_step(self, const double* z, double label) except? -1.5e300 nogil:
        """One round on the features ``z[0:n_features]`` of an example of
        class index ``label`` (see the class docstring); a label that is
        no class index, or a score that is not finite, raises."""
        cdef Py_ssize_t y, runner, k = self.n_outputs, n = self.n_features
        cdef double* W = &self.W[0, 0]
        cdef double* s = &self.class_scores[0]
        cdef double margin
        if not (0.0 <= label < k and <double>(<Py_ssize_t>label) == label):
            with gil:
                raise ValueError(f"the label must be a class index in [0, {k}); got {label}")
        y = <Py_ssize_t>label
        skb_dot16_rows(W, k, z, n, s)
        if skb_nonfinite_flags(s, k) >> 63:
            raise_not_finite(b"A class score w_c.z(x)")
        runner = skb_runner_up(s, k, y)
        if runner < 0:
            return DBL_MAX          # one class: no rival, no update, no mistake (as
                                    # SharedSupportLearner.top_two_margin)
        margin = s[y] - s[runner]
        if margin < 1.0:
            skb_axpy(W + y * n, self.eta, z, n)
            skb_axpy(W + runner * n, -self.eta, z, n)
            self.n_updates += 1
        if margin == 0.0 and runner > y:
            return DBL_MIN          # a tie the true class wins (the lowest index)
        return margin

    def run_block(self, const double[:, ::1] Z, const double[::1] y, double[::1] scores):
        """Rounds over the rows of ``Z`` (class indices ``y``): each row's
        value (the margin, see the class docstring) goes to ``scores``."""
        cdef Py_ssize_t t, c = Z.shape[0]
        self.check_call(Z.shape[1], c, y.shape[0], scores.shape[0])
        with nogil:
            for t in range(c):
                scores[t] = self.top_two_step(&Z[t, 0], y[t])

    def add_class(self, Py_ssize_t position):
        """A class first seen now (a stream without ``classes=``), at index
        ``position`` of the sorted classes: a zero row of ``W`` there (its
        scores are 0); the predictions among the other classes do not
        change."""
        if not 0 <= position <= self.n_outputs:
            raise ValueError(f"position must be in [0, {self.n_outputs}]; got {position}")
        self.W = np.ascontiguousarray(np.insert(np.asarray(self.W), position, 0.0, axis=0))
        self.n_outputs += 1
        self.class_scores = np.zeros(self.n_outputs)

    def get_state(self):
        """Everything needed to rebuild the learner (``W`` copied)."""
        return {"W": np.array(self.W, copy=True), "eta": self.eta,
                "n_updates": self.n_updates, "n_outputs": self.n_outputs,
                "n_features": self.n_features}

    def set_state(self, state):
        W = np.array(state["W"], dtype=np.float64, copy=True)
        if W.ndim != 2:
            raise ValueError(f"MulticlassHingeLearner: W must be a 2-D array; got {W.ndim} "
                             f"dimensions")
        self.W = W
        self.eta = state["eta"]
        self.n_updates = state["n_updates"]
        self.n_outputs = state["n_outputs"]
        self.n_features = state["n_features"]
        self.class_scores = np.zeros(max(self.n_outputs, 0))


def fourier_from_projections(const floating[:, ::1] P, double[:, ::1] Z, double factor):
    """``Z = [cos(P), sin(P)] * factor``, row by row (``Z`` of shape
    ``(n, 2 m)`` for ``P`` of shape ``(n, m)``), by the vectorized cosine
    and sine of ``_fourier_loops.h``, without the GIL.  Returns True if a
    value of ``P`` is not finite (its features are then NaN).  A float32
    ``P``: the cosine and sine in float32 (``factor`` rounded to float32),
    stored as float64."""
    cdef Py_ssize_t n = P.shape[0], m = P.shape[1]
    cdef uint64_t nonfinite = 0
    if Z.shape[0] != n or Z.shape[1] != 2 * m:
        raise ValueError(f"fourier_from_projections: a block of shape {(Z.shape[0], Z.shape[1])} "
                         f"for projections of shape {(n, m)}")
    if n and m:
        with nogil:
            if floating is float:
                nonfinite = skb_fourier_from_projections_f32(&P[0, 0], n, m, m, <float>factor,
                                                             &Z[0, 0])
            else:
                nonfinite = skb_fourier_from_projections(&P[0, 0], n, m, m, factor, &Z[0, 0])
    return (nonfinite >> 63) != 0


def fourier_dense_projections(const floating[:, ::1] X, const floating[:, ::1] U,
                              floating[:, ::1] P):
    """``P = X U`` for dense rows, each value one fused multiply-add after
    another over the features, from +0 (``_fourier_loops_real.h``), without
    the GIL: a row's projections are the same bits whatever the rows it is
    computed with, so FOGD's model does not depend on how the stream is cut
    (a BLAS product's do: one row goes through GEMV).  float32 ``X`` and
    ``U``: the sums in float32."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], m = U.shape[1]
    if U.shape[0] != d or P.shape[0] != n or P.shape[1] != m:
        raise ValueError(f"fourier_dense_projections: X of shape {(n, d)}, U of shape "
                         f"{(U.shape[0], m)} and P of shape {(P.shape[0], P.shape[1])}")
    if n == 0 or m == 0:
        return
    if d == 0:
        np.asarray(P)[...] = 0
        return
    with nogil:
        if floating is float:
            skb_dense_projections_f32(&X[0, 0], n, d, d, &U[0, 0], m, &P[0, 0])
        else:
            skb_dense_projections(&X[0, 0], n, d, d, &U[0, 0], m, &P[0, 0])


cdef int check_sparse_rows(const floating[::1] data, const int[::1] indices,
                           const int[::1] indptr, const Py_ssize_t[::1] rows,
                           const floating[:, ::1] U) except -1:
    """Raise ValueError unless the CSR rows ``rows`` can be read safely
    against ``U`` (one row of ``U`` per column of the CSR matrix)."""
    if U.shape[1] == 0:
        raise ValueError("FOGD: no random weights")
    _check_csr_rows(data, indices, indptr, rows, U.shape[0])
    return 0


cdef uint64_t sparse_rows_features(const floating[::1] data, const int[::1] indices,
                                  const int[::1] indptr, const Py_ssize_t* rows,
                                  Py_ssize_t n_rows, const floating[:, ::1] U, double factor,
                                  Py_ssize_t* starts, Py_ssize_t* lengths,
                                  double* Z) noexcept nogil:
    """``Z[i] = [cos(xU), sin(xU)] * factor`` for the CSR rows ``rows[0:n_rows]``
    (checked by :func:`check_sparse_rows`; ``starts``, ``lengths``: room for
    ``n_rows`` values each); bit 63 set if a projection is not finite.
    float32 values and ``U``: the projections and their cosine and sine in
    float32."""
    cdef Py_ssize_t i
    for i in range(n_rows):
        starts[i] = indptr[rows[i]]
        lengths[i] = indptr[rows[i] + 1] - indptr[rows[i]]
    if floating is float:
        return skb_fourier_sparse_rows_f32(&data[0] if data.shape[0] else NULL,
                                           &indices[0] if indices.shape[0] else NULL, starts,
                                           lengths, n_rows, &U[0, 0], U.shape[1], <float>factor,
                                           Z)
    else:
        return skb_fourier_sparse_rows(&data[0] if data.shape[0] else NULL,
                                       &indices[0] if indices.shape[0] else NULL, starts,
                                       lengths, n_rows, &U[0, 0], U.shape[1], factor, Z)


def fourier_sparse_features(const floating[::1] data, const int[::1] indices,
                            const int[::1] indptr, const Py_ssize_t[::1] rows,
                            const floating[:, ::1] U, double factor, double[:, ::1] Z):
    """``Z[i] = [cos(x U), sin(x U)] * factor`` for ``x`` the CSR row
    ``rows[i]`` (``data``, ``indices``, ``indptr``; int32 indices, in any
    order): each projection summed over the row's nonzeros in their stored
    order (as scipy's ``X @ U``), in compiled code, without the GIL.
    Returns True if a projection is not finite.  ``data`` and ``U`` both
    float64 or both float32 (then the projections and their cosine and sine
    in float32, ``factor`` rounded to float32; ``Z`` float64 either way)."""
    cdef Py_ssize_t i, c = rows.shape[0], m = U.shape[1]
    cdef uint64_t nonfinite = 0
    cdef Py_ssize_t[::1] starts = np.empty(FOURIER_ROWS, dtype=np.intp)
    cdef Py_ssize_t[::1] lengths = np.empty(FOURIER_ROWS, dtype=np.intp)
    check_sparse_rows(data, indices, indptr, rows, U)
    if Z.shape[0] != c or Z.shape[1] != 2 * m:
        raise ValueError(f"fourier_sparse_features: a block of shape "
                         f"{(Z.shape[0], Z.shape[1])} for {c} rows of {m} projections")
    with nogil:
        i = 0
        while i < c:        # (range's step must be a literal to be compiled)
            nonfinite |= sparse_rows_features(data, indices, indptr, &rows[i],
                                              min(<Py_ssize_t>FOURIER_ROWS, c - i), U, factor,
                                              &starts[0], &lengths[0], &Z[i, 0])
            i += FOURIER_ROWS
    return (nonfinite >> 63) != 0


def fourier_sparse_rounds(list learners, const floating[::1] data, const int[::1] indices,
                          const int[::1] indptr, const Py_ssize_t[::1] rows,
                          const floating[:, ::1] U, double factor, const double[:, ::1] targets,
                          double[:, ::1] scores):
    """Training rounds over the CSR rows ``rows``, in order: the features of
    ``FOURIER_ROWS`` rows at a time (:func:`fourier_sparse_features`, into
    a buffer that stays in L2), then for each of these rows a
    :func:`hinge_step` of every learner (learner ``k`` with the labels
    ``targets[k]``, its score before the update into ``scores[k]``),
    without the GIL: the features are never stored.  A shared multi-class
    learner (:class:`MulticlassHingeLearner`, alone in ``learners``) runs
    its top-two step on each row instead (its class indices in
    ``targets[0]``, its values into ``scores[0]``).  Returns the number of
    rounds run: all of them, or the rows before the first block with a
    projection that is not finite (no learner has seen that block).
    ``data`` and ``U``: float64, or float32 (features in float32, as
    :func:`fourier_sparse_features`; the learners' steps in float64)."""
    cdef Py_ssize_t t, i, k, c = rows.shape[0], n_learners = len(learners), m = U.shape[1]
    cdef Py_ssize_t rows_here
    cdef LinearHingeLearner learner
    cdef MulticlassHingeLearner shared = None
    cdef double[:, ::1] z_block
    cdef Py_ssize_t[::1] starts = np.empty(FOURIER_ROWS, dtype=np.intp)
    cdef Py_ssize_t[::1] lengths = np.empty(FOURIER_ROWS, dtype=np.intp)
    cdef double** w
    cdef double* eta
    cdef long long** n_updates
    cdef Py_ssize_t done = c
    check_sparse_rows(data, indices, indptr, rows, U)
    if not (targets.shape[0] == scores.shape[0] == n_learners and targets.shape[1] == c
            and scores.shape[1] == c):
        raise ValueError(f"fourier_sparse_rounds: {n_learners} learners, targets of shape "
                         f"{(targets.shape[0], targets.shape[1])} and scores of shape "
                         f"{(scores.shape[0], scores.shape[1])} for {c} rows")
    if n_learners == 1 and isinstance(learners[0], MulticlassHingeLearner):
        shared = learners[0]
        shared.check_call(2 * m, c, c, c)
    else:
        for learner in learners:
            problem = learner.check_state()
            if problem is None and learner.w.shape[0] != 2 * m:
                problem = f"a model of {learner.w.shape[0]} values for {2 * m} features"
            if problem is not None:
                raise ValueError(f"LinearHingeLearner: inconsistent state: {problem}")
    if c == 0:
        return 0
    z_block = np.empty((FOURIER_ROWS, 2 * m))
    # the learners' models and counts (alive while ``learners`` is)
    w_table = np.empty(n_learners, dtype=np.uintp)
    eta_table = np.empty(n_learners)
    updates_table = np.empty(n_learners, dtype=np.uintp)
    cdef size_t[::1] w_view = w_table, updates_view = updates_table
    cdef double[::1] eta_view = eta_table
    for k in range(0 if shared is not None else n_learners):
        learner = learners[k]
        w_view[k] = <size_t>&learner.w[0]
        updates_view[k] = <size_t>&learner.n_updates
        eta_view[k] = learner.eta
    w = <double**>&w_view[0]
    n_updates = <long long**>&updates_view[0]
    eta = &eta_view[0]
    t = 0
    with nogil:
        while t < c:
            rows_here = min(<Py_ssize_t>FOURIER_ROWS, c - t)
            if sparse_rows_features(data, indices, indptr, &rows[t], rows_here, U, factor,
                                    &starts[0], &lengths[0], &z_block[0, 0]) >> 63:
                done = t
                break
            for i in range(rows_here):
                if shared is not None:
                    scores[0, t + i] = shared.top_two_step(&z_block[i, 0], targets[0, t + i])
                    continue
                for k in range(n_learners):
                    scores[k, t + i] = hinge_step(w[k], &z_block[i, 0], 2 * m,
                                                  targets[k, t + i], eta[k], n_updates[k])
            t += FOURIER_ROWS
    return done
