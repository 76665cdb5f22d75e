/* The training loop's hottest passes over arrays, compiled twice: for the
 * baseline instruction set of the build (SSE2 on x86-64) and, on x86 with
 * GCC or clang, for AVX2 as well; the AVX2 version runs when the CPU (and
 * the OS) supports it, chosen once per extension module at import
 * (skb_vector_loops_init).  Setting the environment variable
 * SKBUDGET_DISABLE_AVX2 to anything but "" or "0" before the import keeps
 * the baseline version.
 *
 * Both versions compute the same bits: every loop is elementwise or keeps
 * a fixed number of partial sums, summed in a fixed order, so vectorizing
 * it changes no rounding; the AVX2 target has no FMA, so no multiply and
 * add are contracted into one rounding; no -ffast-math.  (The tests compare
 * the two versions on whole models, value for value.)
 *
 * Each loop is written once, as NAME_body; SKB_VERSIONS makes NAME_avx2 and
 * NAME_base from it and NAME, which calls the one chosen. */
#ifndef SKBUDGET_VECTOR_LOOPS_H
#define SKBUDGET_VECTOR_LOOPS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* (a build with -DSKB_NO_DISPATCH has the baseline loops only, as on other
 * compilers and CPUs) */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) \
    && !defined(SKB_NO_DISPATCH)
#define SKB_DISPATCH_AVX2 1
#include <immintrin.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SKB_UNUSED __attribute__((unused))
#define SKB_ALWAYS_INLINE inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define SKB_UNUSED
#define SKB_ALWAYS_INLINE __forceinline
#else
#define SKB_UNUSED
#define SKB_ALWAYS_INLINE inline
#endif

/* 1: the AVX2 versions run; 0: the baseline ones; -1: not chosen yet */
static int skb_avx2_chosen SKB_UNUSED = -1;

/* Choose the versions (once, at the module's import) and say which. */
static SKB_UNUSED int skb_vector_loops_init(void)
{
    if (skb_avx2_chosen < 0) {
        int avx2 = 0;
#ifdef SKB_DISPATCH_AVX2
        const char *off = getenv("SKBUDGET_DISABLE_AVX2");
        __builtin_cpu_init();
        avx2 = __builtin_cpu_supports("avx2") && !(off != NULL && off[0] != '\0'
                                                   && strcmp(off, "0") != 0);
#endif
        skb_avx2_chosen = avx2;
    }
    return skb_avx2_chosen;
}

#ifdef SKB_DISPATCH_AVX2
#define SKB_VERSIONS(ret, name, params, args)                                          \
    static SKB_ALWAYS_INLINE ret name##_body params;                                    \
    __attribute__((target("avx2"))) static SKB_UNUSED ret name##_avx2 params           \
    { return name##_body args; }                                                        \
    static SKB_UNUSED ret name##_base params { return name##_body args; }              \
    static SKB_UNUSED ret name params                                                   \
    { return skb_avx2_chosen > 0 ? name##_avx2 args : name##_base args; }              \
    static SKB_ALWAYS_INLINE ret name##_body params
#else
#define SKB_VERSIONS(ret, name, params, args)                                          \
    static SKB_ALWAYS_INLINE ret name##_body params;                                    \
    static SKB_UNUSED ret name params { return name##_body args; }                      \
    static SKB_ALWAYS_INLINE ret name##_body params
#endif

#define SKB_SIGN_BIT 0x8000000000000000ULL
#define SKB_ABS_MASK 0x7fffffffffffffffULL
#define SKB_INF_BITS 0x7ff0000000000000ULL

/* The bits of v (no conversion: a copy the compiler turns into a move). */
static SKB_ALWAYS_INLINE uint64_t skb_bits(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

/* Bit 63 set iff v is NaN (integer arithmetic on the bits: it vectorizes,
 * where a comparison v != v OR-ed into a flag keeps the loop scalar). */
static SKB_ALWAYS_INLINE uint64_t skb_nan_bit(double v)
{
    return (skb_bits(v) & SKB_ABS_MASK) + (SKB_SIGN_BIT - SKB_INF_BITS - 1);
}

/* Bit 63 set iff v is NaN or infinite. */
static SKB_ALWAYS_INLINE uint64_t skb_nonfinite_bit(double v)
{
    return (skb_bits(v) & SKB_ABS_MASK) + (SKB_SIGN_BIT - SKB_INF_BITS);
}

/* -gamma ||x - v||^2 from <x, v>, summed as rbf_kernel sums it,
 * (-2 <x, v> + ||x||^2) + ||v||^2, clipped at 0 (a NaN stays NaN). */
static SKB_ALWAYS_INLINE double skb_rbf_argument(double dot, double xx, double vv,
                                                 double minus_gamma)
{
    double d = (-2.0 * dot + xx) + vv;
    return (d < 0.0 ? 0.0 : d) * minus_gamma;
}

/* row[j] = -gamma ||x_j - v_j||^2 from row[j] = <x_j, v_j>, in place; bit 63
 * of the result set if one is NaN.  one_x: one example (||x||^2 = xx[0])
 * against the vectors vv[j]; else the examples xx[j] against one vector
 * (vv[0]). */
SKB_VERSIONS(uint64_t, skb_rbf_arguments,
             (double *row, ptrdiff_t n, const double *xx, const double *vv, int one_x,
              double minus_gamma),
             (row, n, xx, vv, one_x, minus_gamma))
{
    uint64_t flags = 0;
    ptrdiff_t j;
    if (one_x) {
        const double x = xx[0];
        for (j = 0; j < n; j++) {
            row[j] = skb_rbf_argument(row[j], x, vv[j], minus_gamma);
            flags |= skb_nan_bit(row[j]);
        }
    } else {
        const double v = vv[0];
        for (j = 0; j < n; j++) {
            row[j] = skb_rbf_argument(row[j], xx[j], v, minus_gamma);
            flags |= skb_nan_bit(row[j]);
        }
    }
    return flags;
}

/* skb_rbf_arguments for a block of c rows of n values, row i example i
 * (||x_i||^2 = xx[i]) against the vectors vv[0:n]: one call for a chunk. */
SKB_VERSIONS(uint64_t, skb_rbf_block_arguments,
             (double *block, ptrdiff_t c, ptrdiff_t n, const double *xx, const double *vv,
              double minus_gamma),
             (block, c, n, xx, vv, minus_gamma))
{
    uint64_t flags = 0;
    ptrdiff_t i;
    for (i = 0; i < c; i++)
        flags |= skb_rbf_arguments_body(block + i * n, n, xx + i, vv, 1, minus_gamma);
    return flags;
}

/* values[0:n] **= degree (a non-negative integer) by repeated squaring:
 * for each bit of the exponent one multiplication of the result and one
 * squaring, the same for every value, so that the loops over the values
 * vectorize (one value at a time, the exponent's branches kept them
 * scalar); the products those of the loop one value at a time. */
SKB_VERSIONS(int, skb_integer_power, (double *values, ptrdiff_t n, int degree),
             (values, n, degree))
{
    double result[256], base[256];
    ptrdiff_t start, j, m;
    int e;
    for (start = 0; start < n; start += 256) {
        double *x = values + start;
        m = n - start < 256 ? n - start : 256;
        for (j = 0; j < m; j++) {
            result[j] = 1.0;
            base[j] = x[j];
        }
        for (e = degree; e > 0; e >>= 1) {
            if (e & 1)
                for (j = 0; j < m; j++)
                    result[j] *= base[j];
            if (e > 1)
                for (j = 0; j < m; j++)
                    base[j] *= base[j];
        }
        memcpy(x, result, m * sizeof(double));
    }
    return 0;
}

/* row[j] = gamma row[j] + coef0, in place; bit 63 set if one is NaN. */
SKB_VERSIONS(uint64_t, skb_affine_arguments,
             (double *row, ptrdiff_t n, double gamma, double coef0),
             (row, n, gamma, coef0))
{
    uint64_t flags = 0;
    ptrdiff_t j;
    for (j = 0; j < n; j++) {
        double d = row[j] * gamma + coef0;
        row[j] = d;
        flags |= skb_nan_bit(d);
    }
    return flags;
}

/* Bit 63 set if one of values[0:n] is infinite or NaN. */
SKB_VERSIONS(uint64_t, skb_nonfinite_flags, (const double *values, ptrdiff_t n),
             (values, n))
{
    uint64_t flags = 0;
    ptrdiff_t j;
    for (j = 0; j < n; j++)
        flags |= skb_nonfinite_bit(values[j]);
    return flags;
}

/* y[c] += a x[c] for c < n. */
SKB_VERSIONS(int, skb_axpy, (double *y, double a, const double *x, ptrdiff_t n), (y, a, x, n))
{
    ptrdiff_t c;
    for (c = 0; c < n; c++)
        y[c] += a * x[c];
    return 0;
}

/* out[r] = (sum_i a_i tau[c_i k + r]) scale for r < k, a_i = k_row[c_i] and
 * c_i = order[i], i = 0 .. n-1: the class scores of a shared support set.
 * Each sum starts from +0 and takes the terms in the order of i, each a
 * product then an addition (no fused multiply-add), so that the two
 * versions give the same bits.  The baseline runs the patterns one after
 * another over the k sums in memory; the AVX2 version keeps up to 32 sums
 * in registers over the whole pass (skb_class_scores_avx2). */
static SKB_ALWAYS_INLINE void skb_class_scores_base(double *out, const double *k_row,
                                                    const ptrdiff_t *order, ptrdiff_t n,
                                                    const double *tau, ptrdiff_t k, double scale)
{
    ptrdiff_t i, r;
    for (r = 0; r < k; r++)
        out[r] = 0.0;
    for (i = 0; i < n; i++) {
        const double a = k_row[order[i]];
        const double *x = tau + order[i] * k;
        for (r = 0; r < k; r++)
            out[r] += a * x[r];
    }
    for (r = 0; r < k; r++)
        out[r] *= scale;
}

#ifdef SKB_DISPATCH_AVX2
/* the largest number of four-lane registers of sums in one pass */
#define SKB_SCORE_VECTORS 8

/* skb_class_scores for the classes r0 .. r0 + 4 nv - 1 (nv <= SKB_SCORE_VECTORS
 * registers of four sums; the last register's lanes those of ``last``, a
 * mask of the classes below k): one pass over the patterns, the sums in
 * registers.  nv is a constant where it is called, so the loops over the
 * registers unroll. */
__attribute__((target("avx2"))) static SKB_ALWAYS_INLINE void skb_class_scores_pass(
    double *out, const double *k_row, const ptrdiff_t *order, ptrdiff_t n, const double *tau,
    ptrdiff_t k, double scale, ptrdiff_t r0, int nv, __m256i last)
{
    __m256d acc[SKB_SCORE_VECTORS];
    const __m256d factor = _mm256_set1_pd(scale);
    ptrdiff_t i;
    int v;
    for (v = 0; v < nv; v++)
        acc[v] = _mm256_setzero_pd();
    for (i = 0; i < n; i++) {
        const __m256d a = _mm256_set1_pd(k_row[order[i]]);
        const double *x = tau + order[i] * k + r0;
        for (v = 0; v < nv - 1; v++)
            acc[v] = _mm256_add_pd(acc[v], _mm256_mul_pd(a, _mm256_loadu_pd(x + 4 * v)));
        acc[nv - 1] = _mm256_add_pd(
            acc[nv - 1], _mm256_mul_pd(a, _mm256_maskload_pd(x + 4 * (nv - 1), last)));
    }
    for (v = 0; v < nv - 1; v++)
        _mm256_storeu_pd(out + r0 + 4 * v, _mm256_mul_pd(acc[v], factor));
    _mm256_maskstore_pd(out + r0 + 4 * (nv - 1), last, _mm256_mul_pd(acc[nv - 1], factor));
}

__attribute__((target("avx2"))) static void skb_class_scores_avx2(
    double *out, const double *k_row, const ptrdiff_t *order, ptrdiff_t n, const double *tau,
    ptrdiff_t k, double scale)
{
    const __m256i all = _mm256_set1_epi64x(-1);
    ptrdiff_t r0 = 0, m;
    for (; r0 + 4 * SKB_SCORE_VECTORS <= k; r0 += 4 * SKB_SCORE_VECTORS)
        skb_class_scores_pass(out, k_row, order, n, tau, k, scale, r0, SKB_SCORE_VECTORS, all);
    m = k - r0;     /* 0 .. 31 classes left */
    if (m > 0) {
        /* lane j of the last register is in use iff 4 ((m - 1) / 4) + j < m */
        const ptrdiff_t used = m - 4 * ((m - 1) / 4);
        const __m256i last = _mm256_cmpgt_epi64(_mm256_set1_epi64x(used),
                                                _mm256_set_epi64x(3, 2, 1, 0));
        switch ((m + 3) / 4) {
        case 1: skb_class_scores_pass(out, k_row, order, n, tau, k, scale, r0, 1, last); break;
        case 2: skb_class_scores_pass(out, k_row, order, n, tau, k, scale, r0, 2, last); break;
        case 3: skb_class_scores_pass(out, k_row, order, n, tau, k, scale, r0, 3, last); break;
        case 4: skb_class_scores_pass(out, k_row, order, n, tau, k, scale, r0, 4, last); break;
        case 5: skb_class_scores_pass(out, k_row, order, n, tau, k, scale, r0, 5, last); break;
        case 6: skb_class_scores_pass(out, k_row, order, n, tau, k, scale, r0, 6, last); break;
        case 7: skb_class_scores_pass(out, k_row, order, n, tau, k, scale, r0, 7, last); break;
        default: skb_class_scores_pass(out, k_row, order, n, tau, k, scale, r0, 8, last); break;
        }
    }
}
#endif

static SKB_UNUSED int skb_class_scores(double *out, const double *k_row, const ptrdiff_t *order,
                                       ptrdiff_t n, const double *tau, ptrdiff_t k, double scale)
{
#ifdef SKB_DISPATCH_AVX2
    if (skb_avx2_chosen > 0) {
        skb_class_scores_avx2(out, k_row, order, n, tau, k, scale);
        return 0;
    }
#endif
    skb_class_scores_base(out, k_row, order, n, tau, k, scale);
    return 0;
}

/* sum a[j] b[j] with four partial sums, the arithmetic of _kernel_rows'
 * dense_dot (bit for bit). */
static SKB_ALWAYS_INLINE double skb_dot4(const double *a, const double *b, ptrdiff_t n)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    ptrdiff_t j = 0;
    for (; j + 4 <= n; j += 4) {
        s0 += a[j] * b[j];
        s1 += a[j + 1] * b[j + 1];
        s2 += a[j + 2] * b[j + 2];
        s3 += a[j + 3] * b[j + 3];
    }
    for (; j < n; j++)
        s0 += a[j] * b[j];
    return (s0 + s1) + (s2 + s3);
}

/* sum a[j] b[j] with sixteen partial sums (four AVX2 registers: a loop of
 * ~100 terms is bound by the latency of the additions otherwise), summed
 * pairwise.  For a score, whose order of terms carries no meaning.  (Named
 * variables, not an array: an array is zeroed and summed through memory.) */
SKB_VERSIONS(double, skb_dot16, (const double *a, const double *b, ptrdiff_t n), (a, b, n))
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0, s7 = 0.0;
    double s8 = 0.0, s9 = 0.0, s10 = 0.0, s11 = 0.0, s12 = 0.0, s13 = 0.0, s14 = 0.0, s15 = 0.0;
    ptrdiff_t j = 0;
    for (; j + 16 <= n; j += 16) {
        s0 += a[j] * b[j];
        s1 += a[j + 1] * b[j + 1];
        s2 += a[j + 2] * b[j + 2];
        s3 += a[j + 3] * b[j + 3];
        s4 += a[j + 4] * b[j + 4];
        s5 += a[j + 5] * b[j + 5];
        s6 += a[j + 6] * b[j + 6];
        s7 += a[j + 7] * b[j + 7];
        s8 += a[j + 8] * b[j + 8];
        s9 += a[j + 9] * b[j + 9];
        s10 += a[j + 10] * b[j + 10];
        s11 += a[j + 11] * b[j + 11];
        s12 += a[j + 12] * b[j + 12];
        s13 += a[j + 13] * b[j + 13];
        s14 += a[j + 14] * b[j + 14];
        s15 += a[j + 15] * b[j + 15];
    }
    s0 += s8; s1 += s9; s2 += s10; s3 += s11; s4 += s12; s5 += s13; s6 += s14; s7 += s15;
    s0 += s4; s1 += s5; s2 += s6; s3 += s7;
    return ((s0 + s2) + (s1 + s3)) + skb_dot4(a + j, b + j, n - j);     /* + the last n % 16 */
}

/* out[c] = skb_dot16(rows + c n, x, n) for c < k: the products of k rows
 * (n values each, contiguous) with one vector, bit for bit skb_dot16's sums,
 * in one call (e.g. the class scores of a multi-class linear model). */
SKB_VERSIONS(int, skb_dot16_rows,
             (const double *rows, ptrdiff_t k, const double *x, ptrdiff_t n, double *out),
             (rows, k, x, n, out))
{
    ptrdiff_t c;
    for (c = 0; c < k; c++)
        out[c] = skb_dot16_body(rows + c * n, x, n);
    return 0;
}

/* <a, b> of float32 rows (a float32 store's): each product exact in double
 * (24-bit significands), summed in double as skb_dot16 sums, sixteen
 * partial sums (the AVX2 version converts four floats a register). */
SKB_VERSIONS(double, skb_dot16_f32, (const float *a, const float *b, ptrdiff_t n), (a, b, n))
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0, s7 = 0.0;
    double s8 = 0.0, s9 = 0.0, s10 = 0.0, s11 = 0.0, s12 = 0.0, s13 = 0.0, s14 = 0.0, s15 = 0.0;
    double tail = 0.0;
    ptrdiff_t j = 0;
    for (; j + 16 <= n; j += 16) {
        s0 += (double)a[j] * (double)b[j];
        s1 += (double)a[j + 1] * (double)b[j + 1];
        s2 += (double)a[j + 2] * (double)b[j + 2];
        s3 += (double)a[j + 3] * (double)b[j + 3];
        s4 += (double)a[j + 4] * (double)b[j + 4];
        s5 += (double)a[j + 5] * (double)b[j + 5];
        s6 += (double)a[j + 6] * (double)b[j + 6];
        s7 += (double)a[j + 7] * (double)b[j + 7];
        s8 += (double)a[j + 8] * (double)b[j + 8];
        s9 += (double)a[j + 9] * (double)b[j + 9];
        s10 += (double)a[j + 10] * (double)b[j + 10];
        s11 += (double)a[j + 11] * (double)b[j + 11];
        s12 += (double)a[j + 12] * (double)b[j + 12];
        s13 += (double)a[j + 13] * (double)b[j + 13];
        s14 += (double)a[j + 14] * (double)b[j + 14];
        s15 += (double)a[j + 15] * (double)b[j + 15];
    }
    for (; j < n; j++)
        tail += (double)a[j] * (double)b[j];
    s0 += s8; s1 += s9; s2 += s10; s3 += s11; s4 += s12; s5 += s13; s6 += s14; s7 += s15;
    s0 += s4; s1 += s5; s2 += s6; s3 += s7;
    return ((s0 + s2) + (s1 + s3)) + tail;
}

/* y[c] += a x[c] for c < n, float32 x widened to double (x times a float32
 * a: an exact product); float32 prediction's tiles at few features. */
SKB_VERSIONS(int, skb_widening_axpy, (double *y, double a, const float *x, ptrdiff_t n),
             (y, a, x, n))
{
    ptrdiff_t c;
    for (c = 0; c < n; c++)
        y[c] += a * (double)x[c];
    return 0;
}

/* partial sums of skb_block_moments: enough additions in flight to keep
 * the adders busy (eight AVX2 registers) */
#define SKB_MOMENT_SUMS 32

/* Mean and sum of squared deviations of x[0:n] - shift, two passes
 * (SKB_MOMENT_SUMS partial sums each, added in order). */
SKB_VERSIONS(int, skb_block_moments,
             (const double *x, ptrdiff_t n, double shift, double *mean, double *m2),
             (x, n, shift, mean, m2))
{
    double s[SKB_MOMENT_SUMS];
    double mu, total = 0.0;
    ptrdiff_t i, n_whole = n - n % SKB_MOMENT_SUMS;
    int k;
    for (k = 0; k < SKB_MOMENT_SUMS; k++)
        s[k] = 0.0;
    for (i = 0; i < n_whole; i += SKB_MOMENT_SUMS)
        for (k = 0; k < SKB_MOMENT_SUMS; k++)
            s[k] += x[i + k] - shift;
    for (i = n_whole; i < n; i++)
        total += x[i] - shift;
    for (k = 0; k < SKB_MOMENT_SUMS; k++) {
        total += s[k];
        s[k] = 0.0;
    }
    mu = total / n;
    total = 0.0;
    for (i = 0; i < n_whole; i += SKB_MOMENT_SUMS)
        for (k = 0; k < SKB_MOMENT_SUMS; k++) {
            double dev = (x[i + k] - shift) - mu;
            s[k] += dev * dev;
        }
    for (i = n_whole; i < n; i++) {
        double dev = (x[i] - shift) - mu;
        total += dev * dev;
    }
    for (k = 0; k < SKB_MOMENT_SUMS; k++)
        total += s[k];
    *mean = mu;
    *m2 = total;
    return 0;
}

/* The smallest and the largest of x[0:n], into *lowest and *highest when
 * smaller or larger (NaNs passed over): with AVX2, four running minima and
 * maxima of four lanes.  Exact: the same values from either version (but
 * for the sign of a zero). */
#ifdef SKB_DISPATCH_AVX2
__attribute__((target("avx2"))) static ptrdiff_t skb_range_avx2(const double *x, ptrdiff_t n,
                                                                double *lowest, double *highest)
{
    __m256d lo0 = _mm256_set1_pd(*lowest), lo1 = lo0, lo2 = lo0, lo3 = lo0;
    __m256d hi0 = _mm256_set1_pd(*highest), hi1 = hi0, hi2 = hi0, hi3 = hi0;
    double lanes[4];
    ptrdiff_t c;
    int k;
    for (c = 0; c + 16 <= n; c += 16) {
        __m256d v0 = _mm256_loadu_pd(x + c), v1 = _mm256_loadu_pd(x + c + 4);
        __m256d v2 = _mm256_loadu_pd(x + c + 8), v3 = _mm256_loadu_pd(x + c + 12);
        lo0 = _mm256_min_pd(v0, lo0);
        lo1 = _mm256_min_pd(v1, lo1);
        lo2 = _mm256_min_pd(v2, lo2);
        lo3 = _mm256_min_pd(v3, lo3);
        hi0 = _mm256_max_pd(v0, hi0);
        hi1 = _mm256_max_pd(v1, hi1);
        hi2 = _mm256_max_pd(v2, hi2);
        hi3 = _mm256_max_pd(v3, hi3);
    }
    _mm256_storeu_pd(lanes, _mm256_min_pd(_mm256_min_pd(lo0, lo1), _mm256_min_pd(lo2, lo3)));
    for (k = 0; k < 4; k++)
        *lowest = lanes[k] < *lowest ? lanes[k] : *lowest;
    _mm256_storeu_pd(lanes, _mm256_max_pd(_mm256_max_pd(hi0, hi1), _mm256_max_pd(hi2, hi3)));
    for (k = 0; k < 4; k++)
        *highest = lanes[k] > *highest ? lanes[k] : *highest;
    return c;
}
#endif

static SKB_UNUSED int skb_range(const double *x, ptrdiff_t n, double *lowest, double *highest)
{
    ptrdiff_t c = 0;
#ifdef SKB_DISPATCH_AVX2
    if (skb_avx2_chosen > 0)
        c = skb_range_avx2(x, n, lowest, highest);
#endif
    for (; c < n; c++) {
        *lowest = x[c] < *lowest ? x[c] : *lowest;
        *highest = x[c] > *highest ? x[c] : *highest;
    }
    return 0;
}

/* y scale (margin - alpha kself), y the sign of alpha scale: a support
 * vector's leave-one-out margin (a free cell, alpha 0 and margin +inf, gets
 * -inf). */
static SKB_ALWAYS_INLINE double skb_leave_one_out_margin(double alpha, double margin,
                                                         double kself, double scale)
{
    return (alpha * scale > 0.0 ? 1.0 : -1.0) * scale * (margin - alpha * kself);
}

/* skb_replace_in_margins's contiguous pass with the leave-one-out margins
 * (distinct arrays: without restrict, too many pairs to check at run time
 * for the loop to be vectorized). */
static SKB_ALWAYS_INLINE void skb_margins_and_leave_one_out(
    double *restrict margin, double *restrict row, const double *restrict k_row,
    const double *restrict alpha, const double *restrict kself, ptrdiff_t cap, double a_old,
    double a_new, double scale, double *restrict loo)
{
    ptrdiff_t c;
    for (c = 0; c < cap; c++) {
        double m = (margin[c] + -a_old * row[c]) + a_new * k_row[c];
        margin[c] = m;
        row[c] = k_row[c];
        loo[c] = skb_leave_one_out_margin(alpha[c], m, kself[c], scale);
    }
}

/* The passes over every cell of a replacement (remove the vector of cell,
 * coefficient a_old, and put the current example in its cell, a_new):
 * margin[c] += -a_old gram[cell, c], then += a_new k_row[c], and
 * gram[cell, c] = k_row[c], in one contiguous pass; unless write_column is
 * 0, gram[c, cell] = k_row[c] too (strided: a cache line per cell; a
 * policy that keeps the Gram matrix by age needs only the row, see
 * CrammerKandolaSingerLearner); returns the new vector's margin
 * <alpha, k_row> + a_new k_row[cell] (alpha[cell] is 0; skb_dot16's sixteen
 * partial sums: with dense_dot's four, the additions wait on each other).
 * Unless loo is NULL, the contiguous pass also leaves every cell's
 * leave-one-out margin after the replacement in loo[c] (kself: the cells'
 * k(x_c, x_c), the new vector's is k_row[cell]; scale: the coefficients'
 * global factor), the values skb_leave_one_out_margins computes from the
 * new state. */
SKB_VERSIONS(double, skb_replace_in_margins,
             (double *gram, ptrdiff_t cap, ptrdiff_t cell, const double *k_row,
              const double *alpha, double *margin, double a_old, double a_new,
              const double *kself, double scale, double *loo, int write_column),
             (gram, cap, cell, k_row, alpha, margin, a_old, a_new, kself, scale, loo,
              write_column))
{
    double *row = gram + cell * cap, f_new;
    ptrdiff_t c;
    if (loo == NULL) {
        for (c = 0; c < cap; c++) {
            margin[c] = (margin[c] + -a_old * row[c]) + a_new * k_row[c];
            row[c] = k_row[c];
        }
    } else {
        skb_margins_and_leave_one_out(margin, row, k_row, alpha, kself, cap, a_old, a_new,
                                      scale, loo);
    }
    if (write_column)
        for (c = 0; c < cap; c++)
            gram[c * cap + cell] = k_row[c];
    f_new = skb_dot16_body(alpha, k_row, cap) + a_new * k_row[cell];
    if (loo != NULL)
        loo[cell] = skb_leave_one_out_margin(a_new, f_new, k_row[cell], scale);
    return f_new;
}

/* out[c] = every cell's leave-one-out margin (skb_leave_one_out_margin). */
SKB_VERSIONS(int, skb_leave_one_out_margins,
             (const double *alpha, const double *margin, const double *kself, double scale,
              ptrdiff_t n, double *out),
             (alpha, margin, kself, scale, n, out))
{
    ptrdiff_t c;
    for (c = 0; c < n; c++)
        out[c] = skb_leave_one_out_margin(alpha[c], margin[c], kself[c], scale);
    return 0;
}

#ifdef SKB_DISPATCH_AVX2
/* skb_largest's blocks of sixteen: four AVX2 registers of running maxima
 * (each v > top ? v : top, as the scalar loop takes it); returns where the
 * scalar tail starts, *top the maximum so far. */
__attribute__((target("avx2"))) static ptrdiff_t skb_largest_avx2(const double *values,
                                                                  ptrdiff_t n, double *top)
{
    __m256d m0 = _mm256_set1_pd(-HUGE_VAL), m1 = m0, m2 = m0, m3 = m0;
    double lanes[4];
    ptrdiff_t c;
    int k;
    for (c = 0; c + 16 <= n; c += 16) {
        m0 = _mm256_max_pd(_mm256_loadu_pd(values + c), m0);
        m1 = _mm256_max_pd(_mm256_loadu_pd(values + c + 4), m1);
        m2 = _mm256_max_pd(_mm256_loadu_pd(values + c + 8), m2);
        m3 = _mm256_max_pd(_mm256_loadu_pd(values + c + 12), m3);
    }
    _mm256_storeu_pd(lanes, _mm256_max_pd(_mm256_max_pd(m0, m1), _mm256_max_pd(m2, m3)));
    for (k = 0; k < 4; k++)
        *top = lanes[k] > *top ? lanes[k] : *top;
    return c;
}

/* skb_first_at_least's blocks of four (AVX2 compares): the first value and
 * the number of values that are >= threshold *or NaN* (one compare,
 * "not less than", unordered); returns where the scalar tail starts. */
__attribute__((target("avx2"))) static ptrdiff_t skb_first_at_least_avx2(
    const double *values, ptrdiff_t n, double threshold, ptrdiff_t *first, ptrdiff_t *count)
{
    const __m256d t = _mm256_set1_pd(threshold);
    ptrdiff_t c;
    for (c = 0; c + 4 <= n; c += 4) {
        int mask = _mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(values + c), t,
                                                    _CMP_NLT_UQ));
        if (mask) {
            if (*first < 0)
                *first = c + __builtin_ctz(mask);
            *count += __builtin_popcount(mask);
        }
    }
    return c;
}
#endif

/* max of values[0:n] (-inf if n is 0; NaNs passed over): with AVX2,
 * sixteen running maxima (a single chain waits on each maximum's latency).
 * Maxima are exact: the same value from either version (but for the sign
 * of a zero maximum). */
static SKB_UNUSED double skb_largest(const double *values, ptrdiff_t n)
{
    double top = -HUGE_VAL;
    ptrdiff_t c = 0;
#ifdef SKB_DISPATCH_AVX2
    if (skb_avx2_chosen > 0)
        c = skb_largest_avx2(values, n, &top);
#endif
    for (; c < n; c++)
        top = values[c] > top ? values[c] : top;
    return top;
}

/* The index of the first of values[0:n] that is >= threshold (-1 if none);
 * *count = how many are (NaNs are not), *n_nan = how many values are NaN
 * (a caller raises then: no comparison sees a NaN silently).  Exact
 * comparisons: the same answer from either version.  One pass takes the
 * values that are >= threshold or NaN together (a compare per value); only
 * when it finds more than one (a tie, or a NaN) does a second pass tell them
 * apart: the usual answer, one value, is told apart by looking at it. */
static SKB_UNUSED ptrdiff_t skb_first_at_least(const double *values, ptrdiff_t n,
                                               double threshold, ptrdiff_t *count,
                                               ptrdiff_t *n_nan)
{
    ptrdiff_t c = 0, first = -1, either = 0;
#ifdef SKB_DISPATCH_AVX2
    if (skb_avx2_chosen > 0)
        c = skb_first_at_least_avx2(values, n, threshold, &first, &either);
#endif
    for (; c < n; c++)
        if (!(values[c] < threshold)) {
            if (first < 0)
                first = c;
            either += 1;
        }
    *count = either;
    *n_nan = 0;
    if (either == 1 && values[first] != values[first] && threshold == threshold) {
        *count = 0;         /* the one is a NaN */
        *n_nan = 1;
        return -1;
    }
    if (either > 1 || (either == 1 && threshold != threshold)) {
        *count = 0;
        first = -1;
        for (c = 0; c < n; c++) {
            if (values[c] >= threshold) {
                if (first < 0)
                    first = c;
                *count += 1;
            }
            *n_nan += values[c] != values[c];
        }
    }
    return first;
}

/* argmax_{c != y} values[c] over c < k, the lowest index among ties (-1
 * when no c != y): the runner-up of a multi-class round.  For values that
 * are not NaN (a caller checks them): the largest without a branch per
 * value, then the first that has it. */
static SKB_UNUSED ptrdiff_t skb_runner_up(const double *values, ptrdiff_t k, ptrdiff_t y)
{
    double top = -HUGE_VAL, v;
    ptrdiff_t c;
    for (c = 0; c < k; c++) {
        v = c != y ? values[c] : -HUGE_VAL;
        top = v > top ? v : top;
    }
    for (c = 0; c < k; c++)
        if (c != y && values[c] == top)
            return c;
    return -1;
}

/* The last i < n with items[i] == item, or -1 (a search from the end). */
static SKB_UNUSED ptrdiff_t skb_last_position(const ptrdiff_t *items, ptrdiff_t n,
                                              ptrdiff_t item)
{
    ptrdiff_t i;
    for (i = n - 1; i >= 0; i--)
        if (items[i] == item)
            return i;
    return -1;
}


/* ------------------------------------------------------------------------
 * Inner products of one example with the chunk's later examples, on CPUs
 * with AVX2 and FMA: each one summed as BLAS's dgemm kernels sum a product
 * of at most 256 terms (OpenBLAS's Haswell and SkylakeX kernels: one fused
 * multiply-add after another, k = 0, 1, ..., d - 1, from +0), computed for
 * the stored example only, where a GEMM computes a block of rows of which
 * about half are never stored, and pays a call and the packing of both
 * operands.  The chunk is read transposed (d x c, rows ld apart), so that
 * each multiply-add serves four examples at once.
 * ------------------------------------------------------------------------ */

/* Whether the CPU (and the OS) has AVX2 and FMA, and AVX2 is not disabled
 * (SKBUDGET_DISABLE_AVX2, see skb_vector_loops_init). */
static SKB_UNUSED int skb_fma_available(void)
{
#ifdef SKB_DISPATCH_AVX2
    return skb_vector_loops_init() && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

#ifdef SKB_DISPATCH_AVX2
#define SKB_FMA_TARGET __attribute__((target("avx2,fma")))
#else
#define SKB_FMA_TARGET
#endif

/* doubles the FMA kernels may read past the last value of a transposed
 * block (skb_fma_block: 11, skb_fma_dots: 47); the caller pads it */
#define SKB_FMA_PADDING 48

#ifdef SKB_DISPATCH_AVX2
/* skb_transpose for the rows 0 .. 4 floor(c / 4) - 1, in 4 x 4 blocks of
 * AVX2 registers; returns how many rows it did. */
static SKB_FMA_TARGET ptrdiff_t skb_transpose_avx2(const double *rows, ptrdiff_t c,
                                                   ptrdiff_t d, double *out, ptrdiff_t ld)
{
    ptrdiff_t i, k;
    for (i = 0; i + 4 <= c; i += 4) {
        const double *r0 = rows + i * d, *r1 = r0 + d, *r2 = r1 + d, *r3 = r2 + d;
        for (k = 0; k + 4 <= d; k += 4) {
            __m256d a = _mm256_loadu_pd(r0 + k), b = _mm256_loadu_pd(r1 + k);
            __m256d e = _mm256_loadu_pd(r2 + k), f = _mm256_loadu_pd(r3 + k);
            __m256d ab_lo = _mm256_unpacklo_pd(a, b), ab_hi = _mm256_unpackhi_pd(a, b);
            __m256d ef_lo = _mm256_unpacklo_pd(e, f), ef_hi = _mm256_unpackhi_pd(e, f);
            _mm256_storeu_pd(out + k * ld + i, _mm256_permute2f128_pd(ab_lo, ef_lo, 0x20));
            _mm256_storeu_pd(out + (k + 1) * ld + i, _mm256_permute2f128_pd(ab_hi, ef_hi, 0x20));
            _mm256_storeu_pd(out + (k + 2) * ld + i, _mm256_permute2f128_pd(ab_lo, ef_lo, 0x31));
            _mm256_storeu_pd(out + (k + 3) * ld + i, _mm256_permute2f128_pd(ab_hi, ef_hi, 0x31));
        }
        for (; k < d; k++) {
            out[k * ld + i] = r0[k];
            out[k * ld + i + 1] = r1[k];
            out[k * ld + i + 2] = r2[k];
            out[k * ld + i + 3] = r3[k];
        }
    }
    return i;
}
#endif

/* out[k * ld + i] = rows[i * d + k]: the c rows of d values transposed (4 x 4
 * blocks of AVX2 registers where the AVX2 loops run, else one by one). */
static SKB_UNUSED int skb_transpose(const double *rows, ptrdiff_t c, ptrdiff_t d, double *out,
                                    ptrdiff_t ld)
{
    ptrdiff_t i = 0, k;
#ifdef SKB_DISPATCH_AVX2
    if (skb_avx2_chosen > 0)
        i = skb_transpose_avx2(rows, c, d, out, ld);
#endif
    for (; i < c; i++)
        for (k = 0; k < d; k++)
            out[k * ld + i] = rows[i * d + k];
    return 0;
}

#ifdef SKB_DISPATCH_AVX2
/* skb_row_norms for the rows 0 .. 4 floor(c / 4) - 1, four at a time: one
 * register of four partial sums per row (skb_dot4's, lane k summing the
 * terms j = k mod 4 before the last d mod 4, which go to lane 0 in order),
 * so that four rows' additions are in flight where one row's wait on their
 * latency; returns how many rows it did. */
static __attribute__((target("avx2"))) ptrdiff_t skb_row_norms_avx2(
    const double *rows, ptrdiff_t c, ptrdiff_t d, double *out)
{
    ptrdiff_t i, j, r;
    for (i = 0; i + 4 <= c; i += 4) {
        __m256d acc[4];
        double lanes[4][4];
        for (r = 0; r < 4; r++)
            acc[r] = _mm256_setzero_pd();
        for (j = 0; j + 4 <= d; j += 4)
            for (r = 0; r < 4; r++) {
                __m256d v = _mm256_loadu_pd(rows + (i + r) * d + j);
                acc[r] = _mm256_add_pd(acc[r], _mm256_mul_pd(v, v));
            }
        for (r = 0; r < 4; r++) {
            const double *row = rows + (i + r) * d;
            ptrdiff_t k;
            _mm256_storeu_pd(lanes[r], acc[r]);
            for (k = j; k < d; k++)
                lanes[r][0] += row[k] * row[k];
            out[i + r] = (lanes[r][0] + lanes[r][1]) + (lanes[r][2] + lanes[r][3]);
        }
    }
    return i;
}
#endif

/* out[i] = ||rows[i]||^2 (dense_dot's arithmetic, skb_dot4) for the c rows
 * of d values (four at a time where the AVX2 loops run). */
static SKB_UNUSED int skb_row_norms(const double *rows, ptrdiff_t c, ptrdiff_t d, double *out)
{
    ptrdiff_t i = 0;
#ifdef SKB_DISPATCH_AVX2
    if (skb_avx2_chosen > 0)
        i = skb_row_norms_avx2(rows, c, d, out);
#endif
    for (; i < c; i++)
        out[i] = skb_dot4(rows + i * d, rows + i * d, d);
    return 0;
}

/* out[i] = ||rows[i]||^2 of c float32 rows of d values in double: a float32
 * store's sums (skb_dot16_f32: each square exact), in training and in
 * prediction alike. */
static SKB_UNUSED int skb_row_norms_f32(const float *rows, ptrdiff_t c, ptrdiff_t d, double *out)
{
    ptrdiff_t i;
    for (i = 0; i < c; i++)
        out[i] = skb_dot16_f32(rows + i * d, rows + i * d, d);
    return 0;
}

#ifdef SKB_DISPATCH_AVX2
/* out[0 : min(4 NV, n_out)] for the 4 NV columns from col (rows ld apart):
 * NV registers of four sums each, one fused multiply-add chain per column.
 * The chains wait on each other's latency (4 cycles) below 8 registers and
 * on the two multiply-add units above: 4, 8 and 12 registers all take
 * about 4 d, 4 d and 6 d cycles. */
#define SKB_FMA_BLOCK(NV)                                                               \
static SKB_FMA_TARGET void skb_fma_block##NV(const double *x, const double *col,           \
                                             ptrdiff_t ld, ptrdiff_t d, double *out,       \
                                             ptrdiff_t n_out)                              \
{                                                                                        \
    __m256d acc[NV];                                                                     \
    double tail[4];                                                                      \
    ptrdiff_t k, t;                                                                      \
    for (t = 0; t < NV; t++)                                                             \
        acc[t] = _mm256_setzero_pd();                                                    \
    for (k = 0; k < d; k++) {                                                            \
        __m256d xk = _mm256_broadcast_sd(x + k);                                         \
        const double *row = col + k * ld;                                                \
        for (t = 0; t < NV; t++)                                                         \
            acc[t] = _mm256_fmadd_pd(xk, _mm256_loadu_pd(row + 4 * t), acc[t]);          \
    }                                                                                    \
    for (t = 0; t < NV && 4 * t + 4 <= n_out; t++)                                       \
        _mm256_storeu_pd(out + 4 * t, acc[t]);                                           \
    if (t < NV && 4 * t < n_out) {                                                       \
        _mm256_storeu_pd(tail, acc[t]);                                                  \
        for (k = 4 * t; k < n_out; k++)                                                  \
            out[k] = tail[k - 4 * t];                                                    \
    }                                                                                    \
}
SKB_FMA_BLOCK(4)
SKB_FMA_BLOCK(8)
SKB_FMA_BLOCK(12)
#endif

#ifdef SKB_DISPATCH_AVX2
/* 4 x 4 doubles transposed: on entry r[i] holds column i (four rows), on
 * return r[i] holds row i. */
static SKB_FMA_TARGET void skb_transpose4(__m256d r[4])
{
    __m256d lo01 = _mm256_unpacklo_pd(r[0], r[1]), hi01 = _mm256_unpackhi_pd(r[0], r[1]);
    __m256d lo23 = _mm256_unpacklo_pd(r[2], r[3]), hi23 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd(lo01, lo23, 0x20);
    r[1] = _mm256_permute2f128_pd(hi01, hi23, 0x20);
    r[2] = _mm256_permute2f128_pd(lo01, lo23, 0x31);
    r[3] = _mm256_permute2f128_pd(hi01, hi23, 0x31);
}

/* out[t * ldo + s0 + r] for t in t0 .. t0 + 3, t < t_end, r < MR, from
 * acc[r] (four examples of stored row s0 + r). */
static SKB_FMA_TARGET void skb_store_tile(__m256d acc[4], int mr, ptrdiff_t t0, ptrdiff_t t_end,
                                          double *out, ptrdiff_t ldo, ptrdiff_t s0)
{
    double lanes[4];
    ptrdiff_t i, r;
    skb_transpose4(acc);                /* acc[i]: example t0 + i */
    for (i = 0; i < 4 && t0 + i < t_end; i++) {
        double *o = out + (t0 + i) * ldo + s0;
        if (mr == 4) {
            _mm256_storeu_pd(o, acc[i]);
        } else {
            _mm256_storeu_pd(lanes, acc[i]);
            for (r = 0; r < mr; r++)
                o[r] = lanes[r];
        }
    }
}

/* The products of examples t0 .. t0 + 11 (columns of rows_t, d x ldt) with
 * the MR stored rows s0 .. s0 + MR - 1 (rows of store, d values each), into
 * out[t * ldo + s] for t < t_end: 3 x MR registers of four sums (four
 * examples, one stored row), each sum one fused multiply-add after another
 * over k = 0 .. d-1 from +0.  (Named registers: an array of them would be
 * kept in memory.) */
/* The accumulators of a tile, acc[v][r] = examples t0 + W v .. t0 + W v +
 * W - 1 (W = 4 or 8 lanes) against stored row s0 + r, stored four
 * examples at a time by skb_store_tile (an AVX-512 register as its two
 * halves). */
static SKB_FMA_TARGET void skb_store_acc256(__m256d acc[3][4], int mr, ptrdiff_t t0,
                                            ptrdiff_t t_end, double *out, ptrdiff_t ldo,
                                            ptrdiff_t s0)
{
    int v;
    for (v = 0; v < 3; v++)
        skb_store_tile(acc[v], mr, t0 + 4 * v, t_end, out, ldo, s0);
}

#define SKB_AVX512_TARGET __attribute__((target("avx512f,avx2,fma")))

static SKB_AVX512_TARGET void skb_store_acc512(__m512d acc[3][4], int mr, ptrdiff_t t0,
                                               ptrdiff_t t_end, double *out, ptrdiff_t ldo,
                                               ptrdiff_t s0)
{
    __m256d half[4];
    int v, h, r;
    for (v = 0; v < 3; v++)
        for (h = 0; h < 2; h++) {
            for (r = 0; r < 4; r++)
                half[r] = h ? _mm512_extractf64x4_pd(acc[v][r], 1)
                            : _mm512_castpd512_pd256(acc[v][r]);
            skb_store_tile(half, mr, t0 + 8 * v + 4 * h, t_end, out, ldo, s0);
        }
}

/* One stored row's value at feature k (v + k), broadcast, times the
 * examples of a0, a1, a2, added to c0, c1, c2 (inside SKB_FMA_TILE). */
#define SKB_FMA_ROW(SET1, FMADD, v, c0, c1, c2)                                        \
    do {                                                                                 \
        b = SET1((v)[k]);                                                                \
        c0 = FMADD(a0, b, c0);                                                           \
        c1 = FMADD(a1, b, c1);                                                           \
        c2 = FMADD(a2, b, c2);                                                           \
    } while (0)

/* NAME(rows_t, ldt, t0, t_end, store, s0, d, out, ldo): the products of
 * examples t0 .. t0 + 3 W - 1 (columns of rows_t, d x ldt; W = the lanes of
 * VEC) with the MR stored rows s0 .. s0 + MR - 1 (rows of store, d values
 * each), into out[t * ldo + s] for t < t_end: 3 x MR registers, each lane
 * one sum, one fused multiply-add after another over k = 0 .. d-1 from +0
 * (the same bits whatever W).  Named registers: an array of them would be
 * kept in memory. */
#define SKB_FMA_TILE(NAME, TARGET, VEC, W, LOAD, SET1, FMADD, ZERO, STORE, MR)          \
static TARGET void NAME(const double *rows_t, ptrdiff_t ldt, ptrdiff_t t0, ptrdiff_t t_end, \
                        const double *store, ptrdiff_t s0, ptrdiff_t d, double *out,     \
                        ptrdiff_t ldo)                                                   \
{                                                                                        \
    const double *v0 = store + s0 * d, *v1 = v0 + (MR > 1 ? d : 0);                      \
    const double *v2 = v0 + (MR > 2 ? 2 * d : 0), *v3 = v0 + (MR > 3 ? 3 * d : 0);       \
    VEC c00 = ZERO(), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00;  \
    VEC c13 = c00, c20 = c00, c21 = c00, c22 = c00, c23 = c00;                           \
    VEC acc[3][4];                                                                       \
    ptrdiff_t k;                                                                         \
    for (k = 0; k < d; k++) {                                                            \
        const double *a = rows_t + k * ldt + t0;                                         \
        VEC a0 = LOAD(a), a1 = LOAD(a + W), a2 = LOAD(a + 2 * W), b;                      \
        SKB_FMA_ROW(SET1, FMADD, v0, c00, c10, c20);                                     \
        if (MR > 1)                                                                      \
            SKB_FMA_ROW(SET1, FMADD, v1, c01, c11, c21);                                 \
        if (MR > 2)                                                                      \
            SKB_FMA_ROW(SET1, FMADD, v2, c02, c12, c22);                                 \
        if (MR > 3)                                                                      \
            SKB_FMA_ROW(SET1, FMADD, v3, c03, c13, c23);                                 \
    }                                                                                    \
    acc[0][0] = c00; acc[0][1] = c01; acc[0][2] = c02; acc[0][3] = c03;                  \
    acc[1][0] = c10; acc[1][1] = c11; acc[1][2] = c12; acc[1][3] = c13;                  \
    acc[2][0] = c20; acc[2][1] = c21; acc[2][2] = c22; acc[2][3] = c23;                  \
    STORE(acc, MR, t0, t_end, out, ldo, s0);                                             \
}
#define SKB_FMA_TILE256(MR)                                                             \
    SKB_FMA_TILE(skb_fma_tile##MR, SKB_FMA_TARGET, __m256d, 4, _mm256_loadu_pd,          \
                 _mm256_set1_pd, _mm256_fmadd_pd, _mm256_setzero_pd, skb_store_acc256, MR)
#define SKB_FMA_TILE512(MR)                                                             \
    SKB_FMA_TILE(skb_fma_tile512_##MR, SKB_AVX512_TARGET, __m512d, 8, _mm512_loadu_pd,   \
                 _mm512_set1_pd, _mm512_fmadd_pd, _mm512_setzero_pd, skb_store_acc512, MR)
SKB_FMA_TILE256(1)
SKB_FMA_TILE256(2)
SKB_FMA_TILE256(3)
SKB_FMA_TILE256(4)
SKB_FMA_TILE512(1)
SKB_FMA_TILE512(2)
SKB_FMA_TILE512(3)
SKB_FMA_TILE512(4)

/* out[r * ldo + j] for r < rows (1 to 3 consecutive rows of x, d values
 * each) and j < min(8 NV, n_out), the products with the 8 NV columns from
 * col (rows ld apart): 3 NV registers of eight sums, one fused multiply-add
 * chain per sum, as skb_fma_block##NV sums them.  Three rows keep 9 to 18
 * chains in flight where one row's 3 to 6 wait on the latency; a missing
 * row repeats the first and is not stored. */
#define SKB_FMA_ROWS512(NV)                                                             \
static SKB_AVX512_TARGET void skb_fma_rows512_##NV(const double *x, ptrdiff_t rows,          \
                                                   const double *col, ptrdiff_t ld,          \
                                                   ptrdiff_t d, double *out, ptrdiff_t ldo,  \
                                                   ptrdiff_t n_out)                          \
{                                                                                        \
    const double *x1 = x + (rows > 1 ? d : 0), *x2 = x + (rows > 2 ? 2 * d : 0);         \
    __m512d acc0[NV], acc1[NV], acc2[NV];                                                \
    ptrdiff_t k, t, r;                                                                   \
    for (t = 0; t < NV; t++)                                                             \
        acc0[t] = acc1[t] = acc2[t] = _mm512_setzero_pd();                               \
    for (k = 0; k < d; k++) {                                                            \
        __m512d b0 = _mm512_set1_pd(x[k]), b1 = _mm512_set1_pd(x1[k]);                   \
        __m512d b2 = _mm512_set1_pd(x2[k]);                                              \
        const double *row = col + k * ld;                                                \
        for (t = 0; t < NV; t++) {                                                       \
            __m512d v = _mm512_loadu_pd(row + 8 * t);                                    \
            __asm__("" : "+v"(v));  /* one load, not one per multiply-add */             \
            acc0[t] = _mm512_fmadd_pd(b0, v, acc0[t]);                                   \
            acc1[t] = _mm512_fmadd_pd(b1, v, acc1[t]);                                   \
            acc2[t] = _mm512_fmadd_pd(b2, v, acc2[t]);                                   \
        }                                                                                \
    }                                                                                    \
    for (r = 0; r < rows; r++)                                                           \
        for (t = 0; t < NV && 8 * t < n_out; t++) {                                      \
            __m512d v = r == 0 ? acc0[t] : r == 1 ? acc1[t] : acc2[t];                    \
            ptrdiff_t left = n_out - 8 * t;                                              \
            __mmask8 mask = left >= 8 ? (__mmask8)0xff : (__mmask8)((1u << left) - 1);     \
            _mm512_mask_storeu_pd(out + r * ldo + 8 * t, mask, v);                       \
        }                                                                                \
}
SKB_FMA_ROWS512(1)
SKB_FMA_ROWS512(2)
SKB_FMA_ROWS512(3)
SKB_FMA_ROWS512(4)
SKB_FMA_ROWS512(5)
SKB_FMA_ROWS512(6)

#endif

/* whether the CPU has AVX-512 and FMA (and AVX2 is not disabled): 1 or 0;
 * -1: not asked yet */
static int skb_avx512_detected SKB_UNUSED = -1;

/* Whether skb_fma_block and skb_fma_dots_rows can run their AVX-512 tiles
 * on this CPU (AVX-512 and FMA, AVX2 not disabled).  Whether they do is the
 * caller's choice, their argument avx512 (skbudget._cpu's avx512_tiles). */
static SKB_UNUSED int skb_avx512_available(void)
{
    if (skb_avx512_detected < 0) {
#ifdef SKB_DISPATCH_AVX2
        skb_avx512_detected = skb_vector_loops_init() && __builtin_cpu_supports("avx512f")
                              && __builtin_cpu_supports("fma");
#else
        skb_avx512_detected = 0;
#endif
    }
    return skb_avx512_detected;
}

/* out[t * n + s] = <example t, store row s> for t < c, s < n: the chunk's
 * block against the stored rows (rows_t: the chunk transposed, d x ldt,
 * readable 11 values past the last row's c-th; store: n rows of d values),
 * each sum one fused multiply-add after another over k = 0 .. d-1 from +0,
 * as skb_fma_dots sums it; with avx512, AVX-512 tiles while 24 examples
 * are left, where the CPU has them (skb_avx512_available; the same sums).
 * Call it only if skb_fma_available(). */
static SKB_UNUSED SKB_FMA_TARGET int skb_fma_block(const double *rows_t, ptrdiff_t ldt,
                                                   ptrdiff_t c, const double *store,
                                                   ptrdiff_t n, ptrdiff_t d, double *out,
                                                   int avx512)
{
    ptrdiff_t t0 = 0, s0;
#ifdef SKB_DISPATCH_AVX2
/* the tiles of examples t0 .. (the tile's height) against every stored row */
#define SKB_TILE_ROW(TILE)                                                              \
    do {                                                                                 \
        for (s0 = 0; s0 + 4 <= n; s0 += 4)                                               \
            TILE##4(rows_t, ldt, t0, c, store, s0, d, out, n);                           \
        switch (n - s0) {                                                                \
        case 3: TILE##3(rows_t, ldt, t0, c, store, s0, d, out, n); break;                \
        case 2: TILE##2(rows_t, ldt, t0, c, store, s0, d, out, n); break;                \
        case 1: TILE##1(rows_t, ldt, t0, c, store, s0, d, out, n); break;                \
        default: break;                                                                  \
        }                                                                                \
    } while (0)
    /* while 24 examples are left: AVX-512 tiles (if the CPU has them) */
    if (avx512 && skb_avx512_available())
        for (; t0 + 24 <= c; t0 += 24)
            SKB_TILE_ROW(skb_fma_tile512_);
    for (; t0 < c; t0 += 12)
        SKB_TILE_ROW(skb_fma_tile);
#undef SKB_TILE_ROW
#else
    ptrdiff_t k;
    (void)avx512;
    for (t0 = 0; t0 < c; t0++)
        for (s0 = 0; s0 < n; s0++) {
            double acc = 0.0;
            for (k = 0; k < d; k++)
                acc = fma(rows_t[k * ldt + t0], store[s0 * d + k], acc);
            out[t0 * n + s0] = acc;
        }
#endif
    return 0;
}

/* out[j] = <x, column j of cols_t> for j < m: cols_t is d x (at least m)
 * values, rows ld apart, readable 47 values past the last row's m-th (the
 * caller pads it); each sum one fused multiply-add after another over
 * k = 0 .. d-1 from +0.  Call it only if skb_fma_available(). */
static SKB_UNUSED SKB_FMA_TARGET int skb_fma_dots(const double *x, const double *cols_t,
                                                  ptrdiff_t ld, ptrdiff_t m, ptrdiff_t d,
                                                  double *out)
{
    ptrdiff_t j;
#ifdef SKB_DISPATCH_AVX2
    for (j = 0; j < m; j += 48) {
        if (m - j <= 16)
            skb_fma_block4(x, cols_t + j, ld, d, out + j, m - j);
        else if (m - j <= 32)
            skb_fma_block8(x, cols_t + j, ld, d, out + j, m - j);
        else
            skb_fma_block12(x, cols_t + j, ld, d, out + j, m - j);
    }
#else
    ptrdiff_t k;
    for (j = 0; j < m; j++) {
        double acc = 0.0;
        for (k = 0; k < d; k++)
            acc = fma(x[k], cols_t[k * ld + j], acc);
        out[j] = acc;
    }
#endif
    return 0;
}

/* skb_fma_dots for the rows consecutive rows of x (d values each, at most
 * 3) at once, into out[r * ldo + j]: with avx512 (AVX-512, where the
 * CPU has it: skb_avx512_available) three rows cost about what one does
 * (the chains wait on the latency, skb_fma_rows512_*), so a caller that will probably need the next rows
 * gets them almost free; otherwise row after row.  The same sums either
 * way.  Call it only if skb_fma_available(). */
static SKB_UNUSED int skb_fma_dots_rows(const double *x, ptrdiff_t rows, const double *cols_t,
                                        ptrdiff_t ld, ptrdiff_t m, ptrdiff_t d, double *out,
                                        ptrdiff_t ldo, int avx512)
{
    ptrdiff_t r;
#ifdef SKB_DISPATCH_AVX2
    ptrdiff_t j;
    if (avx512 && skb_avx512_available() && rows <= 3) {
        for (j = 0; j < m; j += 48) {
            const double *col = cols_t + j;
            switch ((m - j + 7) / 8) {
            case 1: skb_fma_rows512_1(x, rows, col, ld, d, out + j, ldo, m - j); break;
            case 2: skb_fma_rows512_2(x, rows, col, ld, d, out + j, ldo, m - j); break;
            case 3: skb_fma_rows512_3(x, rows, col, ld, d, out + j, ldo, m - j); break;
            case 4: skb_fma_rows512_4(x, rows, col, ld, d, out + j, ldo, m - j); break;
            case 5: skb_fma_rows512_5(x, rows, col, ld, d, out + j, ldo, m - j); break;
            default: skb_fma_rows512_6(x, rows, col, ld, d, out + j, ldo, m - j); break;
            }
        }
        return 0;
    }
#else
    (void)avx512;
#endif
    for (r = 0; r < rows; r++)
        skb_fma_dots(x + r * d, cols_t, ld, m, d, out + r * ldo);
    return 0;
}

#endif /* SKBUDGET_VECTOR_LOOPS_H */
