# cython: language_level=3
"""The training loop's hottest passes over arrays, compiled for the baseline
instruction set and for AVX2, the one the CPU supports chosen at import
(``_vector_loops.h`` says how; both compute the same bits).  A module that
uses them calls ``skb_vector_loops_init()`` once at import."""

from libc.stdint cimport uint64_t

cdef extern from "_vector_loops.h" nogil:
    enum: SKB_FMA_PADDING
    int skb_vector_loops_init()
    uint64_t skb_rbf_arguments(double* row, Py_ssize_t n, const double* xx, const double* vv,
                               bint one_x, double minus_gamma)
    uint64_t skb_rbf_block_arguments(double* block, Py_ssize_t c, Py_ssize_t n,
                                     const double* xx, const double* vv, double minus_gamma)
    int skb_integer_power(double* values, Py_ssize_t n, int degree)
    uint64_t skb_affine_arguments(double* row, Py_ssize_t n, double gamma, double coef0)
    uint64_t skb_nonfinite_flags(const double* values, Py_ssize_t n)
    double skb_dot16(const double* a, const double* b, Py_ssize_t n)
    int skb_dot16_rows(const double* rows, Py_ssize_t k, const double* x, Py_ssize_t n,
                       double* out)
    double skb_dot16_f32(const float* a, const float* b, Py_ssize_t n)
    int skb_widening_axpy(double* y, double a, const float* x, Py_ssize_t n)
    int skb_row_norms(const double* rows, Py_ssize_t c, Py_ssize_t d, double* out)
    int skb_row_norms_f32(const float* rows, Py_ssize_t c, Py_ssize_t d, double* out)
    int skb_block_moments(const double* x, Py_ssize_t n, double shift, double* mean,
                          double* m2)
    int skb_range(const double* x, Py_ssize_t n, double* lowest, double* highest)
    double skb_replace_in_margins(double* gram, Py_ssize_t cap, Py_ssize_t cell,
                                  const double* k_row, const double* alpha, double* margin,
                                  double a_old, double a_new, const double* kself,
                                  double scale, double* loo, bint write_column)
    int skb_leave_one_out_margins(const double* alpha, const double* margin,
                                  const double* kself, double scale, Py_ssize_t n, double* out)
    double skb_largest(const double* values, Py_ssize_t n)
    Py_ssize_t skb_first_at_least(const double* values, Py_ssize_t n, double threshold,
                                  Py_ssize_t* count, Py_ssize_t* n_nan)
    Py_ssize_t skb_runner_up(const double* values, Py_ssize_t k, Py_ssize_t y)
    Py_ssize_t skb_last_position(const Py_ssize_t* items, Py_ssize_t n, Py_ssize_t item)
    int skb_axpy(double* y, double a, const double* x, Py_ssize_t n)
    int skb_class_scores(double* out, const double* k_row, const Py_ssize_t* order,
                         Py_ssize_t n, const double* tau, Py_ssize_t k, double scale)
    int skb_fma_available()
    int skb_transpose(const double* rows, Py_ssize_t c, Py_ssize_t d, double* out, Py_ssize_t ld)
    int skb_fma_dots_rows(const double* x, Py_ssize_t rows, const double* cols_t, Py_ssize_t ld,
                          Py_ssize_t m, Py_ssize_t d, double* out, Py_ssize_t ldo, bint avx512)
    int skb_fma_block(const double* rows_t, Py_ssize_t ldt, Py_ssize_t c, const double* store,
                      Py_ssize_t n, Py_ssize_t d, double* out, bint avx512)
    int skb_avx512_available()
