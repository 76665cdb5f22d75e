"""The BLAS the engine calls: its threads and its kernels.

The stream loop's and prediction's matrix products are small; BLAS threads
only add wake-up latency to them (:func:`single_threaded_blas`).  Which
OpenBLAS core ``scipy.linalg.cython_blas`` runs on decides the layout of the
chunk's GEMM (``doc/engine.md``, "The stream loop"): the engine is told once,
at import (:func:`skbudget._cpu.use_small_gemm_kernels`), so a model never
depends on what ran before it.
"""

import os

import scipy
from threadpoolctl import ThreadpoolController  # a dependency of scikit-learn

from skbudget._cpu import use_small_gemm_kernels

__all__ = ["scipy_openblas_core", "single_threaded_blas"]

# the OpenBLAS cores (``openblas_get_corename``, lower case) with the
# small-matrix dgemm kernels the chunk GEMM's transposed layout is for
# (OpenBLAS's kernel/x86_64/dgemm_small_kernel_*_skylakex.c)
SMALL_GEMM_CORES = frozenset({"skylakex", "cooperlake", "sapphirerapids"})

# the process's threadpoolctl controller, built at import (~3 ms): the
# chunk layout is chosen from it below, and every store-mode call limits
# BLAS threads through it
_BLAS_CONTROLLER = ThreadpoolController()


# the BLAS libraries among them (loaded at import, as the controller's)
_BLAS_LIBRARIES = tuple(_BLAS_CONTROLLER.select(user_api="blas").lib_controllers)


class single_threaded_blas:
    """Context: BLAS on one thread (the stream loop's blocks are too small
    for threads to pay off; their wake-up latency dominates, badly so on a
    busy machine).

    What ``threadpoolctl``'s ``limit(limits=1, user_api="blas")`` does on
    the process's controller, in ~1 us instead of ~50: each BLAS library
    that runs more than one thread is set to one, and set back on exit.
    (``limit`` first reads every library's state, OpenMP's too, through
    ``info()``.)"""

    __slots__ = ("_restore",)

    def __enter__(self):
        self._restore = [(library, n) for library in _BLAS_LIBRARIES
                         if (n := library.get_num_threads()) != 1]
        for library, _ in self._restore:
            library.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        for library, n in self._restore:
            library.set_num_threads(n)
        return False


def scipy_openblas_core(libraries, scipy_dir):
    """The core OpenBLAS runs on (lower case) for the BLAS that
    ``scipy.linalg.cython_blas`` calls, from threadpoolctl's ``info()``
    (``libraries``): the OpenBLAS inside scipy's directory ``scipy_dir`` or
    beside it (a wheel's ``scipy.libs``), else the one core every loaded
    OpenBLAS reports; None when unknown (another BLAS, several cores)."""
    openblas = [lib for lib in libraries if lib.get("internal_api") == "openblas"]
    scipy_root = os.path.normcase(os.path.abspath(scipy_dir))
    own = [lib for lib in openblas
           if os.path.normcase(os.path.abspath(lib.get("filepath") or "")).startswith(
               (scipy_root + os.sep, scipy_root + ".libs" + os.sep))]
    cores = {str(lib.get("architecture") or "").lower() for lib in (own or openblas)}
    return cores.pop() if len(cores) == 1 and "" not in cores else None


def _configure_chunk_gemm():
    """Tell the engine whether its BLAS has the small-matrix kernels (once,
    at import: the chunk layout must not change within a process, or a
    model would depend on what ran before it)."""
    core = scipy_openblas_core(_BLAS_CONTROLLER.info(), os.path.dirname(scipy.__file__))
    use_small_gemm_kernels(core in SMALL_GEMM_CORES)


_configure_chunk_gemm()
