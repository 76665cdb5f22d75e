# cython: language_level=3
"""Which compiled code paths run: the CPU's instruction sets and the BLAS.

The training loop (``_engine``) and prediction (``_predict_fast``) ask
this module, through the functions of ``_cpu.pxd``, which of their paths
to take: the engine's own FMA kernels or BLAS for the inner products, the
kernels' AVX-512 tiles or AVX2 ones, and whether the BLAS runs a small
product in its small-matrix kernels (the chunk's layout follows).  Each
switch is set once per process (the defaults from the CPU, the BLAS's
from ``skbudget._blas`` at import) and changed only by the tests, which
compare the paths: every path gives the same models, bit for bit, but for
BLAS, which may round the last bit of an inner product differently."""

from skbudget._vector_loops cimport (skb_avx512_available, skb_fma_available,
                                     skb_vector_loops_init)

skb_vector_loops_init()     # the AVX2 loops where the CPU has AVX2

# OpenBLAS multiplies matrices of at most this many m * n * k products with
# the "small matrix" kernels of its SkylakeX-class cores, which do not pack
# the operands: a chunk's GEMM that fits, in the layout they accept, costs
# about 0.6x as much (``benchmarks/bench_gemm.py``).  Other cores (Haswell,
# Zen...) pack every product; there the layout makes no difference and
# transposing the chunk for it is a loss (10 % of a Stoptron epoch at d = 54)
cdef double SMALL_GEMM_PRODUCTS = 1e6
# whether the BLAS has those kernels (set once, :func:`use_small_gemm_kernels`)
cdef bint SMALL_GEMM_KERNELS = False
# whether the inner products of the training loop and prediction come from
# the engine's own kernels, skb_fma_block and skb_fma_dots_rows (a CPU with
# AVX2 and FMA, see :func:`use_fma_kernels`), instead of BLAS, for at most
# FMA_FEATURES features (BLAS sums longer products in blocks of 256 terms)
cdef bint FMA_KERNELS = skb_fma_available()
cdef Py_ssize_t FMA_FEATURES = 256
# whether those kernels run AVX-512 tiles (:func:`use_avx512_tiles`)
cdef bint AVX512_TILES = skb_avx512_available()


def vector_loops():
    """Which build of the training loop's array passes runs: ``'avx2'``
    or ``'baseline'`` (``_vector_loops.h``; the environment variable
    ``SKBUDGET_DISABLE_AVX2=1``, set before the import, keeps the baseline,
    and turns off the FMA kernels too, see :func:`use_fma_kernels`).  Both
    builds of the passes give the same models, bit for bit."""
    return "avx2" if skb_vector_loops_init() else "baseline"


def use_fma_kernels(bint use):
    """Whether the inner products of the training loop (a chunk's examples
    against the stored rows, and a stored example against the chunk's
    later examples) and of prediction, of at most 256 features, come from
    the engine's AVX2 / FMA kernels (``True``, the default where the CPU
    has both) or from BLAS.  The kernels sum each product as OpenBLAS's
    dgemm kernels mostly do, one fused multiply-add after another; BLAS may
    round the last bit differently (OpenBLAS in the edge rows of some
    shapes, other BLAS anywhere).  Asking for them on a CPU without AVX2
    and FMA, or with ``SKBUDGET_DISABLE_AVX2`` set, keeps BLAS.  Returns
    the previous setting."""
    global FMA_KERNELS
    previous = FMA_KERNELS
    FMA_KERNELS = use and skb_fma_available()
    return previous


def use_avx512_tiles(bint use):
    """Whether the FMA kernels run AVX-512 (``True``, the default where the
    CPU has AVX-512): the chunk's block (and prediction's tiles) in tiles
    of 24 examples, a stored example's products with the chunk's later
    examples three examples at a time (see
    :meth:`skbudget._engine.OnlineLearner.compute_self_column`); or only
    AVX2: tiles of 12, one example at a time.  The same sums, the same bits
    (for the tests).  Asking for them on a CPU without AVX-512 keeps AVX2.
    Returns the previous setting."""
    global AVX512_TILES
    previous = AVX512_TILES
    AVX512_TILES = use and skb_avx512_available()
    return previous


def use_small_gemm_kernels(bint available):
    """Tell the engine whether the BLAS that ``scipy.linalg.cython_blas``
    calls has OpenBLAS's small-matrix kernels (``skbudget._blas`` asks
    threadpoolctl once, at import); the chunk layout and length follow.
    Returns the previous setting."""
    global SMALL_GEMM_KERNELS
    previous = SMALL_GEMM_KERNELS
    SMALL_GEMM_KERNELS = available
    return previous


cdef bint fma_kernels_for(Py_ssize_t n_features) noexcept nogil:
    """Whether inner products of ``n_features`` terms come from the FMA
    kernels (:func:`use_fma_kernels`)."""
    return FMA_KERNELS and n_features <= FMA_FEATURES


cdef bint avx512_tiles() noexcept nogil:
    """Whether the FMA kernels run their AVX-512 tiles (:func:`use_avx512_tiles`)."""
    return AVX512_TILES


cdef bint small_gemm(Py_ssize_t m, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """Whether an m x n x k product runs in the BLAS's small-matrix kernels."""
    return SMALL_GEMM_KERNELS and <double>m * n * k <= SMALL_GEMM_PRODUCTS
