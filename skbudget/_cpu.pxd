# cython: language_level=3
"""Declarations of the code-path switches (see ``_cpu.pyx``): what the
training loop and prediction ask before choosing a compiled path."""

# the FMA kernels (skb_fma_block, skb_fma_dots_rows) for products of
# n_features terms, instead of BLAS
cdef bint fma_kernels_for(Py_ssize_t n_features) noexcept nogil
# those kernels' AVX-512 tiles (their argument ``avx512``)
cdef bint avx512_tiles() noexcept nogil
# whether BLAS runs an m x n x k product in its small-matrix kernels
cdef bint small_gemm(Py_ssize_t m, Py_ssize_t n, Py_ssize_t k) noexcept nogil
