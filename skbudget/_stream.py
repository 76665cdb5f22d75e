"""The stream driver: feeds the stream through the compiled learners.

:class:`StreamDriver` owns the binary learners of one model (one for a binary
problem, one per class one-vs-rest; they are independent, so they may run in
threads, ``n_jobs``).  Every mode runs the same loop (:meth:`StreamDriver.run`:
the pass cut into pieces, each piece fed to every learner, its mistakes
added to the online record, the progress log told); what differs is what a
piece feeds the learners (``doc/engine.md``).  A kernel expansion
(``kernel`` given) runs in one of two modes:

* **store mode** (``linear``, ``rbf``, ``poly``, ``sigmoid``): every learner
  keeps its vectors' features and computes kernel values in compiled code;
  a segment of the stream (up to ``SEGMENT`` examples) is one compiled call
  per learner (``OnlineLearner.run_dense`` / ``run_sparse``);
* **block mode** (callables, other kernels, CSR input wider than
  ``STORE_MAX_SPARSE_FEATURES``): per chunk of the stream the driver
  computes one block ``k(chunk, [pool_1; ...; pool_L; chunk])`` for every
  learner, runs the compiled loop of each over its columns
  (``OnlineLearner.process_chunk``) and rebuilds the *pools* (the rows each
  learner still references, ``OnlineLearner.finish_chunk``).

A model on fixed features (``features`` given, a :class:`FeatureMap`, e.g.
FOGD's random Fourier features) runs in **feature mode**: per piece the
map's features of the rows, fed to each learner (``run_block``), or a
compiled call of the map's own for every learner (:meth:`FeatureMap.runner`).
It stores no rows.
"""

import functools
import logging
import math
import sys
import time

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from sklearn import config_context

from skbudget import _threads
from skbudget._blas import single_threaded_blas
from skbudget._elementwise import mistake_flags
from skbudget._engine import (
    NonFiniteKernelValues,
    check_rows_to_themselves,
    csr_parts,
    gather_block,
)
from skbudget._kernels import kernel_name, non_finite_kernel_error, squared_distances

__all__ = ["FeatureMap", "ProgressLog", "RawFeatures", "StreamDriver"]

# CSR input wider than this stays in block mode (each stored vector is a
# dense row of the store: 100 of them at this width take 26 MB)
STORE_MAX_SPARSE_FEATURES = 1 << 15
# sparse input at most this wide runs the dense loop on densified segments;
# wider, a gather over each row's nonzeros (STORE_CHUNK examples between
# store compactions)
DENSIFY_MAX_FEATURES = 1024
STORE_CHUNK = 256
# block mode: the cost assumed for a matrix callable (chunk_length): per
# call, and per kernel value MATRIX_VALUE_NS + MATRIX_FEATURE_NS per
# feature (scikit-learn 1.9's rbf_kernel on a 2-core x86 machine, under the
# driver's assume_finite: 0.25 ms a call checking its input, 3.4 ns a value
# at 10 features, 8 ns at 123; benchmarks/bench_callables.py)
MATRIX_CALLABLE_OVERHEAD_NS = 2.5e5
MATRIX_VALUE_NS, MATRIX_FEATURE_NS = 3.0, 0.04
# examples per compiled call in store mode (bounds the per-round arrays:
# about 48 bytes an example and learner; each call costs ~80 us of Python)
SEGMENT = 32768
# store mode: a stream this short runs without limiting BLAS threads (the
# limit costs ~20 us a call; its products are too small for threads anyway)
SHORT_STREAM = 64
# n_jobs: a segment's learners run in threads only when the work estimate
# of the segment (see StreamDriver.threads_pay_off) is at least this many
# nanoseconds; below it, handing learners to a helper thread costs more
# than it saves (waking it, the GIL taken by each compiled call's set-up)
THREAD_MIN_WORK_NS = 300_000
# the estimate of one example's work for one learner in store mode:
# EXAMPLE_NS plus, per support vector, SV_NS + SV_FEATURE_NS per feature
# (a Stoptron epoch, the cheapest rule: 0.19 / 0.75 us an example at d = 2,
# B = 100 / 500; 0.48 / 1.7 us at d = 54; 4.8 / 16 us at d = 784)
EXAMPLE_NS, SV_NS, SV_FEATURE_NS = 50.0, 1.2, 0.033


def _model_support_sizes(learner_sizes):
    """The model's support size after each round of a segment or chunk
    (the sum over its learners) from each learner's (one row per learner,
    as the compiled loops write them, ``OnlineLearner.run_dense``'s
    ``support_sizes``)."""
    if learner_sizes.shape[0] == 1:
        return learner_sizes[0]
    return learner_sizes.sum(axis=0)


def _consecutive(rows):
    """Whether ``rows`` are consecutive row numbers (at least one)."""
    return len(rows) == 1 or (len(rows) > 1 and rows[-1] - rows[0] == len(rows) - 1
                              and bool(np.all(np.diff(rows) == 1)))


def _compress_rows(first, keep_first, second, keep_second):
    """[first[keep_first]; second[keep_second]] with one copy (dense)."""
    if sp.issparse(first):
        return sp.vstack([first[keep_first], second[keep_second]], format="csr")
    n_first = int(np.count_nonzero(keep_first))
    out = np.empty((n_first + int(np.count_nonzero(keep_second)), first.shape[1]),
                   dtype=first.dtype)
    np.compress(keep_first, first, axis=0, out=out[:n_first])
    np.compress(keep_second, second, axis=0, out=out[n_first:])
    return out


def _dense_to_csr(rows):
    """``scipy.sparse.csr_matrix(rows)`` for a dense 2-D ``rows`` (explicit
    zeros dropped, sorted int32 indices), without its generic conversion
    (the parts in compiled code, :func:`~skbudget._engine.csr_parts`)."""
    return sp.csr_matrix(csr_parts(np.ascontiguousarray(rows)), shape=rows.shape)


def canonical_csr(X):
    """``X`` as CSR without duplicate entries (summed, in a copy, if it has
    any) and its ``(data, indices, indptr)``, the index arrays int32 (no
    copy when they already are), as the compiled CSR loops read them."""
    X = X.tocsr()
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X, (X.data, X.indices.astype(np.int32, copy=False),
               X.indptr.astype(np.int32, copy=False))


def empty_rows(X):
    """No rows of ``X``'s width, in its format (dense or CSR) and dtype;
    ``X[:0]`` without scipy's slicing (for CSR)."""
    if not sp.issparse(X):
        return X[:0]
    return sp.csr_matrix((np.zeros(0, dtype=X.dtype), np.zeros(0, dtype=np.int32),
                          np.zeros(1, dtype=np.int32)), shape=(0, X.shape[1]))


def _stack_rows(*blocks):
    """The rows of ``blocks`` one after the other (the block itself, when
    there is one)."""
    if len(blocks) == 1:
        return blocks[0]
    if sp.issparse(blocks[0]):
        return sp.vstack(blocks, format="csr")
    return np.concatenate(blocks, axis=0)


# the progress lines of ``verbose`` (and nothing else) go to this logger
LOGGER = logging.getLogger("skbudget")


class _CurrentStdoutHandler(logging.StreamHandler):
    """Writes to ``sys.stdout`` as it is when a record comes (what
    ``contextlib.redirect_stdout`` or a notebook set), and only while
    logging has no handler of the application's: the lines of ``verbose``
    then show where scikit-learn's verbose estimators print them, and an
    application that configures logging gets them through its own
    handlers, once."""

    def __init__(self):
        super().__init__(sys.stdout)
        self.setFormatter(logging.Formatter("%(message)s"))

    @property
    def stream(self):
        return sys.stdout

    @stream.setter
    def stream(self, value):    # (StreamHandler sets it; the current stdout is used)
        pass

    def emit(self, record):
        if not logging.getLogger().handlers:
            super().emit(record)


_STDOUT_HANDLER = _CurrentStdoutHandler()


def verbose_logger():
    """:data:`LOGGER`, made to show the lines of an estimator whose
    ``verbose`` asks for them: its level INFO unless the application set
    one, and a handler to ``sys.stdout`` while the application configures
    none (:class:`_CurrentStdoutHandler`)."""
    if LOGGER.level == logging.NOTSET:
        LOGGER.setLevel(logging.INFO)
    if _STDOUT_HANDLER not in LOGGER.handlers:
        LOGGER.addHandler(_STDOUT_HANDLER)
    return LOGGER


class ProgressLog:
    """Progress lines during a pass (``verbose``), like the epoch lines of
    scikit-learn's SGD estimators, at the INFO level of the ``skbudget``
    logger (:func:`verbose_logger`): at most one every ``interval``
    seconds, with the examples seen, the examples per second of this pass,
    the mistakes and the online error so far (mistakes / rounds since the
    model started) and the model's size (:meth:`StreamDriver.size_note`).

    ``rounds`` and ``mistakes`` are the model's counts before the pass;
    :meth:`StreamDriver.run` calls the log after every piece of the pass.
    """

    def __init__(self, rounds, mistakes, interval):
        self.rounds, self.mistakes, self.interval = rounds, mistakes, interval
        self.start = self.last = time.perf_counter()
        self.logger = verbose_logger()

    def __call__(self, done, flags, driver):
        """After the first ``done`` rounds of the pass; ``flags`` are the
        mistake flags of the rounds since the previous call, ``driver`` the
        :class:`StreamDriver` running the pass."""
        self.mistakes += int(flags.sum())
        now = time.perf_counter()
        if now - self.last < self.interval:
            return
        self.last = now
        rounds = self.rounds + done
        self.logger.info("   examples seen %d, %.0f examples/s, mistakes %d, online error %.4f%s",
                         rounds, done / max(now - self.start, 1e-9), self.mistakes,
                         self.mistakes / rounds, driver.size_note())

# CSR input fed to a map's compiled call per piece: rows per call
COMPILED_CSR_ROWS = 8192


class FeatureMap:
    """Fixed features ``z(x)`` that a :class:`StreamDriver` in feature mode
    feeds its learners (a subclass per family, e.g. FOGD's random Fourier
    features, ``skbudget._fourier``).  The features do not depend on the
    model, so they are computed once per piece of the stream and shared by
    every learner; a learner fed by a map is linear in them: it has ``w``
    (``n_outputs`` values) and ``run_block(Z, y, scores)``.

    A subclass provides :meth:`transform`, ``n_outputs`` and
    ``n_features_in`` (the width of the rows it maps), may set
    ``csr_rows_per_call`` and override :meth:`rows_per_piece` and
    :meth:`runner` (e.g. a compiled call that maps the rows and runs every
    learner on them) and :meth:`onnx_features`
    (the ONNX export of its models), and keeps its instance
    state plain (arrays and numbers: a file saves it as a dict,
    ``skbudget._persistence``), checked by its ``__setstate__``.
    """

    # dense input: rows per piece, about this many feature values
    block_values = 1 << 17
    # CSR input: rows per piece when the map's runner takes CSR rows in one
    # compiled call each (the progress log's granularity); None: as dense
    csr_rows_per_call = None

    @property
    def n_outputs(self):
        """The number of features of a row (the length of each learner's
        ``w``)."""
        raise NotImplementedError

    def transform(self, X):
        """``z(X)``: C-contiguous float64, ``(n_rows, n_outputs)``; a row
        that has no finite features is a ValueError."""
        raise NotImplementedError

    def rows_per_piece(self, X, chunk_size):
        """Rows per piece of the stream for input like ``X``: ``chunk_size``
        when given (results never depend on it), else ``csr_rows_per_call``
        for CSR input where the map sets it, else about ``block_values``
        feature values per piece, in [16, 2048] rows."""
        if chunk_size:
            return chunk_size
        if self.csr_rows_per_call is not None and sp.issparse(X):
            return self.csr_rows_per_call
        # (min/max of ints: np.clip costs ~10 us a call, a 1-row partial_fit ~90)
        return min(max(self.block_values // self.n_outputs, 16), 2048)

    def uses_blas(self, X):
        """Whether computing ``X``'s features multiplies matrices (then the
        pass limits BLAS to one thread: its blocks are too small for
        more)."""
        return True

    def runner(self, X, learners, in_stream_order):
        """``run(rows, labels, scores)``, which feeds the rows ``rows`` of
        ``X`` (their signed targets ``labels``, one row per learner) to
        every learner, each learner's scores going to its row of
        ``scores``: here the features of the rows (read in place when the
        pass is ``in_stream_order`` and ``X`` dense), computed once, then
        each learner's ``run_block``."""
        in_place = in_stream_order and not sp.issparse(X)

        def run(rows, labels, scores):
            Z = self.transform(X[rows[0]:rows[-1] + 1] if in_place else X[rows])
            for k, learner in enumerate(learners):
                learner.run_block(Z, labels[k], scores[k])
        return run

    def check_rows(self, X):
        """Raise the error a piece raises for a row of ``X`` that has no
        finite features (its features computed and dropped)."""
        self.transform(X)

    def onnx_features(self, graph, X):
        """The features of the rows ``X`` (an ONNX tensor name) as nodes of
        ``graph``, the builder of :mod:`skbudget.onnx` (``graph.node(op_type,
        inputs, **attributes)`` and ``graph.constant(seed, values)`` add a
        node or a constant in the graph's float type and return its name),
        or None: here None, a map with no ONNX form (its models' export is
        refused, naming the estimator)."""
        return None

    def check_learner(self, learner):
        """A description of why ``learner`` cannot take these features, or
        None."""
        width = np.shape(learner.w)[0]
        if width != self.n_outputs:
            return f"a learner of {width} coefficients for {self.n_outputs} features"
        return None


class RawFeatures(FeatureMap):
    """The identity map: a model on the raw rows of ``X`` (AMM), fed dense
    blocks of rows to ``run_block`` or CSR rows, read in place, to
    ``run_csr`` (O(nnz) rounds).  Its learners have ``n_inputs``, the
    width of the rows they take.

    Parameters
    ----------
    n_features : int
        The width of the rows.
    """

    csr_rows_per_call = COMPILED_CSR_ROWS

    def __init__(self, n_features):
        self.n_features = n_features

    def __setstate__(self, state):
        width = state.get("n_features") if isinstance(state, dict) else None
        if not (isinstance(state, dict) and set(state) == {"n_features"}
                and isinstance(width, int) and not isinstance(width, bool) and width >= 1):
            raise ValueError("The raw features of the loaded model: 'n_features' must be a "
                             "positive number of features; the file is corrupted.")
        self.__dict__.update(state)

    @property
    def n_outputs(self):
        return self.n_features

    @property
    def n_features_in(self):
        return self.n_features

    def transform(self, X):
        """``X`` itself, dense, C-contiguous float64."""
        return np.ascontiguousarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)

    def uses_blas(self, X):
        return False

    def runner(self, X, learners, in_stream_order):
        """CSR input: each learner's ``run_csr`` on the rows, read in place
        (canonical: duplicates summed first); dense input: the base's."""
        if not sp.issparse(X):
            return super().runner(X, learners, in_stream_order)
        _, (data, indices, indptr) = canonical_csr(X)
        data = np.ascontiguousarray(data, dtype=np.float64)

        def run(rows, labels, scores):
            rows = np.ascontiguousarray(rows, dtype=np.intp)
            for k, learner in enumerate(learners):
                learner.run_csr(data, indices, indptr, rows, labels[k], scores[k])
        return run

    def check_rows(self, X):
        """Any finite row of the right width is learnable."""

    def onnx_features(self, graph, X):
        """The rows themselves."""
        return X

    def check_learner(self, learner):
        if learner.n_inputs != self.n_features:
            return (f"the learner's n_inputs={learner.n_inputs} is not the map's "
                    f"n_features={self.n_features}")
        return None


class StreamDriver:
    """The binary learners of one model and what it feeds them: a kernel
    expansion's stored rows and kernel (``kernel``), or fixed features
    (``features``).

    Parameters
    ----------
    learners : list of learners
        One binary learner per column of the signed targets
        (``OnlineLearner`` subclasses for a kernel expansion, linear
        learners for a feature map).
    empty_rows : ndarray or sparse matrix of shape (0, n_features)
        An empty block of the training data's format (the pools start
        empty); ignored in feature mode (no pools).
    kernel : KernelFunction or None
        A kernel expansion's kernel; None in feature mode.
    needs_distances : bool
        Whether the policies need squared input-space distances too.
    chunk_size : int or None
        Examples per chunk; ``None`` chooses it (see :meth:`chunk_length`,
        :meth:`FeatureMap.rows_per_piece`).  Results never depend on it.
    n_jobs : int or None
        Threads running the one-vs-rest learners (store mode), with
        scikit-learn's meaning (``None``: 1, ``-1``: every core).  Results
        never depend on it.
    shared_support : bool
        The learner is a multi-class learner on one shared support set
        (``skbudget._shared_support``): its label is the class index and the
        value it returns per example is the margin of the true class, a
        mistake when ``<= 0``.
    features : FeatureMap or None
        Feature mode: the features every learner is fed (then ``kernel``
        is None).
    """

    def __init__(self, learners, empty_rows, kernel, needs_distances=False, chunk_size=None,
                 n_jobs=None, shared_support=False, features=None):
        self.learners = learners
        self.shared_support = shared_support
        self.features = features
        # the rows each learner stores (none in feature mode)
        self.pools = [] if features is not None else [empty_rows for _ in learners]
        # identity of each pool row (example id, see run), for the Gram cache
        self.pool_ids = [np.zeros(0, dtype=np.intp) for _ in self.pools]
        self.kernel = kernel
        self.needs_distances = needs_distances
        self.chunk_size = chunk_size
        self.n_jobs = n_jobs
        self.uses_store = _uses_store(kernel, self.pools)
        if self.uses_store:
            for learner in learners:
                learner.use_store(kernel.compiled_kind, kernel.gamma, kernel.coef0,
                                  kernel.degree, empty_rows.shape[1], empty_rows.dtype)

    @classmethod
    def for_features(cls, learners, features, chunk_size=None, n_jobs=None,
                     shared_support=False):
        """A driver in feature mode: ``learners`` fed ``features``
        (``shared_support``: one learner of every class, AMM's)."""
        return cls(learners, None, None, chunk_size=chunk_size, n_jobs=n_jobs,
                   shared_support=shared_support, features=features)

    def __setstate__(self, state):
        """The driver of ``state`` (its instance dict, its learners, kernel
        and feature map already rebuilt, e.g. from a file), after checking
        that it is consistent: its numbers bound the stream loop."""
        self.__dict__.update(_checked_driver_state(state))

    def size_note(self):
        """The model's size for the progress lines: ``", support vectors
        N"`` (every learner's), or nothing in feature mode (the size is
        fixed)."""
        if self.features is not None:
            return ""
        return f", support vectors {sum(learner.n_sv for learner in self.learners)}"

    def input_width(self):
        """The number of features of the rows the model takes."""
        if self.features is not None:
            return self.features.n_features_in
        return self.pools[0].shape[1]

    def chunk_length(self, n_features, pool_size, cached=False):
        """Examples in the next chunk of the stream loop (block mode).

        ``chunk_size`` (an int) fixes it.  ``None`` (the default) picks it
        from the cost of a chunk of ``c`` examples against a pool of ``p``
        stored vectors: ``c * (p + c)`` kernel values (prediction costs
        ``p`` per example) plus a fixed overhead ``h`` per chunk (Python
        bookkeeping, kernel calls).  ``c <= p / 2`` keeps the extra kernel
        work within half of prediction's; below that, ``c = sqrt(h / v)``
        (``v`` = cost of one kernel value, ~4 + 0.5 d ns, ~2 ns for a
        Gram-cache lookup, ~3 + 0.04 d ns in a matrix callable) minimizes
        ``h / c + v c``.  Hence ``c = max(sqrt(h / v), p / 2)``, in
        [16, 512].
        """
        if self.chunk_size is not None:
            return int(self.chunk_size)
        # measured on a 2-core x86 machine: h ~ 60 us; a matrix callable
        # adds its own per-call cost (MATRIX_CALLABLE_OVERHEAD_NS), so its
        # chunks are longer
        overhead_ns, value_ns = 6e4, 2.0 if cached else 4.0 + 0.5 * n_features
        if not cached and self.kernel.convention == "matrix":
            overhead_ns += MATRIX_CALLABLE_OVERHEAD_NS
            value_ns = MATRIX_VALUE_NS + MATRIX_FEATURE_NS * n_features
        c = max(math.sqrt(overhead_ns / value_ns), pool_size / 2)
        return int(min(max(c, 16), 512))

    def run(self, X, y, targets, order, first_id, record, gram=None, progress=None,
            weights=None):
        """Feed the examples ``X[order]`` through every learner; returns
        ``record`` (an ``OnlineRecord``) extended by the rounds' mistakes.

        ``order`` is None for stream order (``X`` as it is).  Example
        ``order[i]`` gets the identity ``first_id + order[i]`` (the same
        identity in every epoch of one ``fit`` call).  ``targets(y_part)``
        gives the signed targets of labels ``y_part``, one column per
        learner (with ``shared_support`` one column, the class indices); it
        is applied a piece at a time, so nothing of the pass's length is
        kept besides ``order``.  ``gram``, if given, is ``k(X, X)``: in
        block mode kernel values between examples of this call are then
        looked up instead of computed.  ``progress`` (a
        :class:`ProgressLog`) is called after every piece: a chunk (block
        mode), a segment (store mode) or a block of features (feature
        mode).  ``weights(rows, y_part)``, if given, gives the weights of
        the examples ``rows`` of ``X`` (labels ``y_part``), the same for
        every learner, in the pass's order like the targets; None: no
        weights (every weight 1, no per-example cost; in feature mode the
        map's runner gets them).
        """
        for learner in self.learners:
            learner.start_call(first_id)
        pieces = _Pieces(X, y, targets, order, weights)
        if self.features is not None:
            feed = self._feature_feed(X, pieces)
            if not self.features.uses_blas(X):
                return self._run_pieces(pieces, feed, first_id, record, progress)
            with single_threaded_blas():
                return self._run_pieces(pieces, feed, first_id, record, progress)
        try:
            if self.uses_store and pieces.n <= SHORT_STREAM:
                # its matrix products are too small for BLAS to use threads
                return self._run_pieces(pieces, self._segment_feed(X, pieces), first_id,
                                        record, progress)
            with single_threaded_blas():
                if self.uses_store:
                    return self._run_pieces(pieces, self._segment_feed(X, pieces), first_id,
                                            record, progress)
                # the kernel is given rows of X (checked finite by the
                # estimator) and its blocks are checked: scikit-learn's
                # finiteness checks inside it (pairwise_kernels', or
                # rbf_kernel's in a callable) are repeated work
                with config_context(assume_finite=True):
                    return self._run_pieces(pieces, self._chunk_feed(X, first_id, gram),
                                            first_id, record, progress)
        except NonFiniteKernelValues:
            # the compiled loop's error, worded with the kernel's name
            raise non_finite_kernel_error(self.kernel.kernel) from None

    def _run_pieces(self, pieces, feed, first_id, record, progress):
        """The loop of every mode: the pass cut into pieces of
        ``feed.step()`` examples; each piece's rows, signed targets, ids
        and weights given to ``feed.run``, which fills each learner's row
        of the scores and (when it stores rows, ``feed.stores_rows``) of
        the support sizes after each round; then the mistakes recorded and
        the progress log told."""
        n_learners = len(self.learners)
        start = 0
        while start < pieces.n:
            rows, labels = pieces.rows_and_labels(start, start + feed.step())
            weights = pieces.weights_of(rows)
            scores = np.empty((n_learners, len(rows)))
            if feed.stores_rows:
                ids = rows + first_id if first_id else rows   # (read only)
                sizes = np.empty((n_learners, len(rows)), dtype=np.intp)
                feed.run(rows, labels, ids, scores, weights, sizes)
                support_sizes = _model_support_sizes(sizes)
            else:
                feed.run(rows, labels, None, scores, weights, None)
                support_sizes = 0
            flags = self.mistakes(scores, labels)
            record = record.extended(flags, support_sizes)
            start += len(rows)
            if progress is not None:
                progress(start, flags, self)
        return record

    def _segment_feed(self, X, pieces):
        """Store mode: one compiled call per learner and segment (learners
        in threads with ``n_jobs``, when the segment's work pays for them:
        they are independent)."""
        feed = _SegmentFeed(X, self.chunk_size, pieces.order is None)
        learners = self.learners
        # (joblib's effective_n_jobs asks its active backend, ~15 us: not
        # where the answer is 1 whatever it says)
        n_threads = (1 if len(learners) == 1 or self.n_jobs == 1
                     else min(effective_n_jobs(self.n_jobs), len(learners)))

        def run(rows, labels, ids, scores, weights, sizes):
            run_learner = feed.runner(rows)
            if n_threads > 1 and self.threads_pay_off(len(rows), X.shape[1]):
                # (the process's helper threads, read from their module: a
                # fork replaces them)
                _threads.HELPERS.run([functools.partial(run_learner, learners[k], labels[k],
                                                        ids, scores[k], weights, sizes[k])
                                      for k in range(len(learners))], n_threads)
            else:
                for k, learner in enumerate(learners):
                    run_learner(learner, labels[k], ids, scores[k], weights, sizes[k], None)
        return _Feed(lambda: feed.segment, run)

    def _chunk_feed(self, X, first_id, gram):
        """Block mode: per chunk, kernel blocks from Python, one compiled
        call per learner, then the pools rebuilt."""
        def step():
            pool_size = sum(pool.shape[0] for pool in self.pools)
            return self.chunk_length(X.shape[1], pool_size, cached=gram is not None)

        def run(idx, labels, ids, scores, weights, sizes):
            Xc = X[idx]
            K, D = self.chunk_blocks(X, Xc, idx, first_id, gram)
            pool_column = 0
            for k, learner in enumerate(self.learners):
                n_old = self.pools[k].shape[0]
                learner.process_chunk(K, pool_column, n_old, labels[k], ids, scores[k], D,
                                      weights, sizes[k])
                pool_column += n_old
                keep = learner.finish_chunk()
                pool, pool_ids = self.pools[k], self.pool_ids[k]
                keep_old, keep_new = keep[:n_old], keep[n_old:]
                if not keep_new.any():
                    if not keep_old.all():
                        self.pools[k], self.pool_ids[k] = pool[keep_old], pool_ids[keep_old]
                else:
                    self.pools[k] = _compress_rows(pool, keep_old, Xc, keep_new)
                    self.pool_ids[k] = np.concatenate([pool_ids[keep_old], ids[keep_new]])
        return _Feed(step, run)

    def _feature_feed(self, X, pieces):
        """Feature mode: per piece, the map's features of the rows fed to
        every learner (:meth:`FeatureMap.runner`)."""
        step = self.features.rows_per_piece(X, self.chunk_size)
        run_rows = self.features.runner(X, self.learners, pieces.order is None)

        def run(rows, labels, ids, scores, weights, sizes):
            if weights is None:
                run_rows(rows, labels, scores)
            else:       # (a map whose learners take weights: LLSVM's)
                run_rows(rows, labels, scores, weights)
        return _Feed(lambda: step, run, stores_rows=False)

    def check_rows(self, X):
        """Raise the error :meth:`run` raises for a row of ``X`` (dense,
        float64, checked finite) that it refuses whatever the learners hold:
        a kernel value of the row with itself that is not finite, or an
        'rbf' row whose squared norm overflows.  Store mode: the check each
        compiled round runs (``_engine.check_rows_to_themselves``); block
        mode: the finiteness check of the kernel's values ``k(x, x)``, part
        of every chunk's block; feature mode: the feature map's
        (:meth:`FeatureMap.check_rows`)."""
        if self.features is not None:
            self.features.check_rows(X)
            return
        if not self.uses_store:
            self.kernel.diagonal(X)         # (raises on a value that is not finite)
            return
        kernel = self.kernel
        try:
            check_rows_to_themselves(np.ascontiguousarray(X),
                                     kernel.compiled_kind, kernel.gamma, kernel.coef0,
                                     kernel.degree)
        except NonFiniteKernelValues:
            raise non_finite_kernel_error(kernel.kernel) from None

    def threads_pay_off(self, n_rows, n_features):
        """Whether a segment of ``n_rows`` examples is worth running in
        threads: its estimated work (nanoseconds, every learner:
        ``EXAMPLE_NS + n_sv * (SV_NS + SV_FEATURE_NS * n_features)`` an
        example, the cost of the cheapest rule's example against ``n_sv``
        support vectors, measured) is at least ``THREAD_MIN_WORK_NS``.
        Rules whose updates cost more are underestimated: they may run a
        mid-sized segment serially that threads would have sped up, never
        the other way round."""
        per_sv = SV_NS + SV_FEATURE_NS * n_features
        work = sum(EXAMPLE_NS + learner.n_sv * per_sv for learner in self.learners)
        return n_rows * work >= THREAD_MIN_WORK_NS

    def mistakes(self, scores, labels):
        """Mistake flags of rounds from the learners' outputs (one row per
        learner): :func:`~skbudget._elementwise.mistake_flags` of the
        one-vs-rest scores, or, with ``shared_support``, a margin of the
        true class ``<= 0``.  A kernel expansion's score that overflowed
        (inf or NaN) is a ValueError: the model it would train is
        meaningless (a feature map's bounded features cannot overflow a
        score before the coefficients, which the estimator checks)."""
        if (self.kernel is not None and scores.size
                and not (np.isfinite(scores.min()) and np.isfinite(scores.max()))):
            raise ValueError(
                f"The scores of the kernel expansion overflowed (inf or NaN) during training: "
                f"the kernel {kernel_name(self.kernel.kernel)} returns values too large to sum. "
                f"Rescale X (e.g. StandardScaler), lower gamma, or scale the kernel down; the "
                f"model is left as it was.")
        if self.shared_support:
            return (scores[0] <= 0).view(np.uint8)
        return mistake_flags(labels, scores)

    def chunk_blocks(self, X, Xc, idx, first_id, gram):
        """The kernel block of one chunk, ``k(chunk, [pool_1; ...; pool_L;
        chunk])`` (every learner's pool in turn, then the chunk), and the
        squared distances laid out alike (``needs_distances``; else None).

        With a Gram cache it is looked up; a matrix callable computes it in
        one call (its per-call cost, e.g. scikit-learn's input checks,
        exceeds the copy of the pools); otherwise the pools' block and the
        chunk's own are computed apart (``k(chunk, chunk)``, whose
        self-values are then those of ``k(X, X)``) and put side by side.
        """
        pools, kernel = self.pools, self.kernel
        D = None
        if self.needs_distances:
            D = np.concatenate([squared_distances(Xc, _stack_rows(*pools)),
                                squared_distances(Xc, Xc)], axis=1)
        if gram is not None:
            rows = np.concatenate([ids - first_id for ids in self.pool_ids] + [idx])
            if np.all((rows >= 0) & (rows < X.shape[0])):
                idx = np.ascontiguousarray(idx, dtype=np.intp)
                return gather_block(gram, idx, rows.astype(np.intp)), D
        if kernel.convention == "matrix":
            K = kernel(Xc, _stack_rows(*pools, Xc))
        else:
            K = np.concatenate([kernel(Xc, _stack_rows(*pools)), kernel(Xc, Xc)], axis=1)
        # (float32 rows: the kernel's float32 values, widened for the rounds)
        return np.ascontiguousarray(K, dtype=np.float64), D

    def stored_rows(self, k, slots):
        """Rows of learner ``k``'s slots (dense in store mode)."""
        if not self.uses_store:
            return self.pools[k][slots]
        return self.learners[k].stored_rows(slots)

    def support_vectors(self, k):
        """Rows of learner ``k``'s support vectors, oldest first (in the
        format of the pools: CSR for sparse input)."""
        if not self.uses_store:
            return self.pools[k][self.learners[k].support_slots()]
        rows = self.learners[k].support_rows()
        return _dense_to_csr(rows) if sp.issparse(self.pools[k]) else rows


class _Feed:
    """What :meth:`StreamDriver._run_pieces` feeds the learners: ``step()``
    examples per piece, ``run(rows, labels, ids, scores, weights, sizes)``
    to run every learner on a piece, and whether the learners store rows
    (``stores_rows``: then ``run`` gets the examples' ids and fills their
    support sizes, else gets None for both)."""

    __slots__ = ("step", "run", "stores_rows")

    def __init__(self, step, run, stores_rows=True):
        self.step, self.run, self.stores_rows = step, run, stores_rows


def _uses_store(kernel, pools):
    """Whether a driver of ``kernel`` (None in feature mode) and ``pools``
    runs in store mode: a compiled kernel, and dense input or CSR input at
    most ``STORE_MAX_SPARSE_FEATURES`` wide."""
    return kernel is not None and kernel.compiled_kind is not None and (
        not sp.issparse(pools[0]) or pools[0].shape[1] <= STORE_MAX_SPARSE_FEATURES)


class _Pieces:
    """The rows of a pass (``order``, or stream order when it is None) and
    their signed targets, a piece at a time."""

    def __init__(self, X, y, targets, order, weights=None):
        self.y, self.targets, self.order, self.weights = y, targets, order, weights
        self.n = X.shape[0] if order is None else len(order)

    def weights_of(self, rows):
        """The weights of the examples ``rows`` (from
        :meth:`rows_and_labels`), one per example for every learner,
        C-contiguous, or None (no weights)."""
        if self.weights is None:
            return None
        return np.ascontiguousarray(self.weights(rows, self.y[rows]), dtype=np.float64)

    def rows_and_labels(self, start, stop):
        """Rows ``start:stop`` of the pass (as ``intp``) and their targets,
        one C-contiguous row per learner."""
        stop = min(stop, self.n)
        if self.order is None:
            rows = np.arange(start, stop, dtype=np.intp)
            y = self.y[start:stop]
        else:
            rows = np.ascontiguousarray(self.order[start:stop], dtype=np.intp)
            y = self.y[rows]
        return rows, np.ascontiguousarray(self.targets(y).T)


def _checked_driver_state(state):
    """``state`` if it is a consistent driver's, else a ValueError.  A
    state without ``features`` (written before feature mode, by skbudget
    88d59f9 or earlier: a kernel expansion's) is one of kernel mode."""
    def refuse(what):
        raise ValueError(f"The stream driver of the loaded model is inconsistent ({what}); "
                         f"the file is corrupted or was not written by skbudget.")

    if isinstance(state, dict) and "features" not in state:
        state = dict(state, features=None)
    if not isinstance(state, dict) or set(state) != _DRIVER_FIELDS:
        refuse(f"its fields must be {sorted(_DRIVER_FIELDS)}")
    learners, pools, pool_ids = state["learners"], state["pools"], state["pool_ids"]
    for name in ("shared_support", "needs_distances", "uses_store"):
        if not isinstance(state[name], bool):
            refuse(f"{name} must be a bool")
    chunk_size = state["chunk_size"]
    if chunk_size is not None and not (isinstance(chunk_size, int)
                                       and not isinstance(chunk_size, bool) and chunk_size >= 1):
        refuse(f"chunk_size={chunk_size!r} is not None or an int >= 1")
    if state["n_jobs"] is not None and not isinstance(state["n_jobs"], int):
        refuse("n_jobs must be None or an int")
    if not (isinstance(learners, list) and learners and isinstance(pools, list)
            and isinstance(pool_ids, list)):
        refuse("a list of learners, of pools and of pool ids")
    features, kernel = state["features"], state["kernel"]
    if features is not None:
        if not isinstance(features, FeatureMap) or kernel is not None:
            refuse("a feature map and no kernel, or a kernel and no feature map")
        if pools or pool_ids or state["uses_store"] or state["needs_distances"]:
            refuse("a driver fed by a feature map stores no rows")
        for learner in learners:
            problem = features.check_learner(learner)
            if problem is not None:
                refuse(problem)
        return state
    if kernel is None:
        refuse("a kernel expansion's driver without a kernel")
    if not len(pools) == len(pool_ids) == len(learners):
        refuse("one pool and one list of pool ids per learner")
    if not all(isinstance(pool, np.ndarray) and pool.ndim == 2
               or sp.issparse(pool) and pool.format == "csr" for pool in pools) or len({pool.shape[1] for pool in pools}) != 1:
        refuse("the pools must be 2-D blocks of one width")
    if not all(isinstance(ids, np.ndarray) and ids.ndim == 1 and ids.dtype == np.intp
               and ids.size == pool.shape[0] for ids, pool in zip(pool_ids, pools)):
        refuse("one id per pool row")
    if state["uses_store"] != _uses_store(kernel, pools):
        refuse("uses_store does not follow from the kernel and the input format")
    return state


# the instance state of a StreamDriver
_DRIVER_FIELDS = {"learners", "shared_support", "pools", "pool_ids", "kernel",
                  "needs_distances", "chunk_size", "n_jobs", "uses_store", "features"}


class _SegmentFeed:
    """How the examples of a segment reach the compiled loop (store mode).

    Dense input in stream order (consecutive rows): ``run_dense`` on the
    rows in place.  Dense input in another order (a shuffled epoch): each
    segment's rows gathered once into a buffer of at most 2^20 values (8 MB),
    shared by every learner (their chunks are then consecutive rows, used
    in place).  Sparse input with at most ``DENSIFY_MAX_FEATURES`` columns:
    ``run_csr``, each chunk made dense in the learner's chunk buffer (the
    same arithmetic as dense input, at GEMM speed, without a dense copy of
    the segment).  Wider sparse input: ``run_sparse``, a gather over each
    row's nonzeros.
    """

    def __init__(self, X, chunk_size, in_stream_order):
        self.chunk = chunk_size or 0
        self.segment = SEGMENT
        self.gather = sp.issparse(X) and X.shape[1] > DENSIFY_MAX_FEATURES
        if sp.issparse(X):
            X, self.parts = canonical_csr(X)
        else:
            X = np.ascontiguousarray(X)
            if not in_stream_order:             # segments gathered into the buffer
                self.segment = min(SEGMENT, max(256, (1 << 20) // max(X.shape[1], 1)))
        self.dense = None       # the segment buffer, made on first use
        self.X = X
        self.in_stream_order = in_stream_order

    def buffer(self, n_rows):
        """The first ``n_rows`` rows of the segment buffer."""
        if self.dense is None:
            self.dense = np.empty((min(self.segment, self.X.shape[0]), self.X.shape[1]),
                                  dtype=self.X.dtype)
        return self.dense[:n_rows]

    def runner(self, rows):
        """``run(learner, y, example_ids, scores, weights, support_sizes,
        stop)`` for the examples ``rows`` (``weights``: None or one per
        example; ``support_sizes`` gets the learner's support size after
        each); the learner watches ``stop`` (None: nothing) during the call
        (``OnlineLearner.watch_stop``)."""
        if self.gather:
            chunk = self.chunk or STORE_CHUNK

            def run(learner, y, ids, scores, weights, support_sizes, stop):
                learner.watch_stop(stop)
                learner.run_sparse(*self.parts, rows, y, ids, scores, chunk, weights,
                                   support_sizes)
            return run
        if sp.issparse(self.X):
            def run(learner, y, ids, scores, weights, support_sizes, stop):
                learner.watch_stop(stop)
                learner.run_csr(*self.parts, rows, y, ids, scores, self.chunk, True,  # canonical
                                weights, support_sizes)
            return run
        if len(rows) and not (self.in_stream_order or _consecutive(rows)):
            X = np.take(self.X, rows, axis=0, out=self.buffer(len(rows)))
            index = np.arange(len(rows))
        else:
            X, index = self.X, rows

        def run(learner, y, ids, scores, weights, support_sizes, stop):
            learner.watch_stop(stop)
            learner.run_dense(X, index, y, ids, scores, self.chunk, weights, support_sizes)
        return run
