/* FOGD's random Fourier features, z(x) = [cos(xU), sin(xU)] * factor
 * (doc/algorithms.md#kernel-ogd), in compiled loops written once and compiled
 * three times (SKB_FOURIER_VERSIONS): for the baseline instruction set, for
 * AVX2 and for AVX-512F, the one run chosen at the module's import as
 * _vector_loops.h chooses (SKBUDGET_DISABLE_AVX2 keeps the baseline;
 * SKBUDGET_DISABLE_AVX512 keeps AVX2).  The same bits from all three:
 * elementwise arithmetic (each lane the scalar code's operations), no FMA
 * (none of the targets has it), no reassociation.
 *
 * The projection xU of a CSR row sums x_k U[k, j] over the row's nonzeros
 * in their stored order, from +0, one product and one addition each (as
 * scipy's CSR @ dense sums it): blocks of 32 columns are kept in registers
 * while the row's nonzeros are read once per block.
 *
 * The cosine and sine: one shared argument reduction and two polynomials,
 * written so that the loop over a block of values vectorizes:
 *   - n = rint(x 2/pi), r = x - n P1 exact (P1: pi/2 to 33 bits, |n| < 2^18),
 *     then y = r - n P1T as a head y0 and a tail y1 (P1T: the next 53 bits;
 *     a Cody-Waite reduction, fdlibm's first round);
 *   - sin(y) and cos(y) on |y| <= pi/4 by fdlibm's minimax polynomials
 *     (|error| < 2^-58 relative), the tail added to first order;
 *   - the quadrant n mod 4 swaps and negates them.
 * An argument the reduction cannot take to full accuracy goes to libm's
 * sin and cos instead (a scalar pass over the block, rare): |x| > 2^19, not
 * finite, or y0 within |n| 2^-27 of 0 (the reduction's absolute error is
 * about |n| 2^-86: y0 keeps 59 bits there).  The results are within 1 ULP
 * of libm's (tests/test_ogd.py measures it on 2.2 million arguments), not
 * libm's bits. */
#ifndef SKBUDGET_FOURIER_LOOPS_H
#define SKBUDGET_FOURIER_LOOPS_H

#include "_vector_loops.h"

/* 1: the AVX-512 versions of the loops below run; 0: as _vector_loops.h
 * chose (AVX2 or baseline); -1: not chosen yet */
static int skb_fourier_avx512_chosen SKB_UNUSED = -1;

/* Choose (once, at the module's import): AVX-512 where the CPU has
 * AVX-512F, AVX2 was chosen and SKBUDGET_DISABLE_AVX512 is not set (to
 * anything but "" or "0"); returns 2 (AVX-512), 1 (AVX2) or 0 (baseline). */
static SKB_UNUSED int skb_fourier_loops_init(void)
{
    if (skb_fourier_avx512_chosen < 0) {
        int avx512 = 0;
#ifdef SKB_DISPATCH_AVX2
        const char *off = getenv("SKBUDGET_DISABLE_AVX512");
        avx512 = skb_vector_loops_init() && __builtin_cpu_supports("avx512f")
                 && !(off != NULL && off[0] != '\0' && strcmp(off, "0") != 0);
#endif
        skb_fourier_avx512_chosen = avx512;
    }
    return skb_fourier_avx512_chosen ? 2 : skb_vector_loops_init();
}

/* AVX-512F has fused multiply-adds: the AVX-512 versions are compiled
 * without contracting a product and a sum into one (a separate rounding
 * each, as in the other versions) */
#if defined(__clang__)
#pragma clang fp contract(off)
#define SKB_AVX512_SEPARATE_ROUNDING __attribute__((target("avx512f")))
#else
#define SKB_AVX512_SEPARATE_ROUNDING \
    __attribute__((target("avx512f"), optimize("fp-contract=off")))
#endif

/* SKB_VERSIONS with an AVX-512F version too (NAME_avx512) */
#ifdef SKB_DISPATCH_AVX2
#define SKB_FOURIER_VERSIONS(ret, name, params, args)                                  \
    static SKB_ALWAYS_INLINE ret name##_body params;                                    \
    SKB_AVX512_SEPARATE_ROUNDING static SKB_UNUSED ret name##_avx512 params            \
    { return name##_body args; }                                                        \
    __attribute__((target("avx2"))) static SKB_UNUSED ret name##_avx2 params           \
    { return name##_body args; }                                                        \
    static SKB_UNUSED ret name##_base params { return name##_body args; }              \
    static SKB_UNUSED ret name params                                                   \
    {                                                                                   \
        return skb_fourier_avx512_chosen > 0 ? name##_avx512 args                       \
               : skb_avx2_chosen > 0 ? name##_avx2 args : name##_base args;             \
    }                                                                                   \
    static SKB_ALWAYS_INLINE ret name##_body params
#else
#define SKB_FOURIER_VERSIONS SKB_VERSIONS
#endif

/* columns of U per block of projections (eight AVX2 registers) */
#define SKB_FOURIER_COLUMNS 32

/* 2/pi; pi/2 to 33 bits (so that n P1 is exact for |n| < 2^20); the next
 * 53 bits of pi/2 */
#define SKB_INV_PIO2 0x1.45f306dc9c883p-1
#define SKB_PIO2_1 0x1.921fb54400000p+0
#define SKB_PIO2_1T 0x1.0b4611a626331p-34
/* 1.5 2^52: x + it - it rounds x to an integer, whose low bits are then
 * those of x + it */
#define SKB_ROUNDING_SHIFT 0x1.8p52
/* |x| above this (and NaN, infinity) goes to libm: the bits of 2^19 */
#define SKB_SINCOS_LIMIT_BITS 0x4120000000000000LL
/* fdlibm's minimax coefficients of sin(y) / y and cos(y) on [-pi/4, pi/4] */
#define SKB_S1 (-0x1.5555555555549p-3)
#define SKB_S2 0x1.111111110f8a6p-7
#define SKB_S3 (-0x1.a01a019c161d5p-13)
#define SKB_S4 0x1.71de357b1fe7dp-19
#define SKB_S5 (-0x1.ae5e68a2b9cebp-26)
#define SKB_S6 0x1.5d93a5acfd57cp-33
#define SKB_C1 0x1.555555555554cp-5
#define SKB_C2 (-0x1.6c16c16c15177p-10)
#define SKB_C3 0x1.a01a019cb1590p-16
#define SKB_C4 (-0x1.27e4f809c52adp-22)
#define SKB_C5 0x1.1ee9ebdb4b1c4p-29
#define SKB_C6 (-0x1.8fae9be8838d4p-37)

static SKB_ALWAYS_INLINE uint64_t skb_bits(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

static SKB_ALWAYS_INLINE double skb_from_bits(uint64_t bits)
{
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* *cos_out = cos(x) factor, *sin_out = sin(x) factor by the reduction and
 * polynomials above; bit 63 of the result set when x is one for libm (the
 * values written are then meaningless). */
static SKB_ALWAYS_INLINE uint64_t skb_scaled_sincos_value(double x, double factor,
                                                          double *cos_out, double *sin_out)
{
    const double shifted = x * SKB_INV_PIO2 + SKB_ROUNDING_SHIFT;
    const double n = shifted - SKB_ROUNDING_SHIFT;
    const uint64_t quadrant = skb_bits(shifted) & 3;
    const double r = x - n * SKB_PIO2_1;
    const double w = n * SKB_PIO2_1T;
    const double y0 = r - w, y1 = (r - y0) - w;
    const double z = y0 * y0, z2 = z * z, v = z * y0;
    /* fdlibm's polynomials; the tail y1 enters to first order (sin(y0 +
     * y1) = sin(y0) + y1, cos(y0 + y1) = cos(y0) - y0 y1) */
    const double rs = (SKB_S2 + z * (SKB_S3 + z * SKB_S4)) + z * z2 * (SKB_S5 + z * SKB_S6);
    const double sin_y = y0 + (y1 + v * (SKB_S1 + z * rs));
    const double rc = z * (SKB_C1 + z * (SKB_C2 + z * SKB_C3))
                      + z2 * z2 * (SKB_C4 + z * (SKB_C5 + z * SKB_C6));
    const double cos_y = 1.0 - (0.5 * z - (z * rc - y0 * y1));
    /* odd quadrants swap sine and cosine; sin is negative in quadrants 2,
     * 3, cos in 1, 2 */
    const int odd = (int)(quadrant & 1);    /* (an int: SSE2 has no 64-bit compare) */
    const double sin_base = odd ? cos_y : sin_y, cos_base = odd ? sin_y : cos_y;
    const uint64_t sin_x = skb_bits(sin_base) ^ ((quadrant << 62) & SKB_SIGN_BIT);
    const uint64_t cos_x = skb_bits(cos_base) ^ (((quadrant + 1) << 62) & SKB_SIGN_BIT);
    /* negative when |x| > 2^19 or x is not finite; when y0 is too close to 0 */
    const uint64_t out_of_range = (uint64_t)(SKB_SINCOS_LIMIT_BITS
                                             - (long long)(skb_bits(x) & SKB_ABS_MASK));
    const uint64_t cancelled = skb_bits(fabs(y0) - fabs(n) * 0x1p-27);
    *cos_out = skb_from_bits(cos_x) * factor;
    *sin_out = skb_from_bits(sin_x) * factor;
    return out_of_range | cancelled;
}

/* The values of x[0:n] that skb_scaled_sincos_value leaves to libm, by
 * libm's cos and sin; returns bit 63 set if one of x[0:n] is not finite
 * (its outputs are then NaN). */
static SKB_UNUSED uint64_t skb_scaled_sincos_by_libm(const double *x, ptrdiff_t n,
                                                     double factor, double *cos_out,
                                                     double *sin_out)
{
    uint64_t nonfinite = 0;
    double c, s;
    ptrdiff_t j;
    for (j = 0; j < n; j++)
        if (skb_scaled_sincos_value(x[j], factor, &c, &s) >> 63) {
            cos_out[j] = cos(x[j]) * factor;
            sin_out[j] = sin(x[j]) * factor;
            nonfinite |= skb_nonfinite_bit(x[j]);
        }
    return nonfinite;
}

/* cos_out[j] = cos(x[j]) factor, sin_out[j] = sin(x[j]) factor for j < n;
 * returns bit 63 set if one of x[0:n] is not finite. */
static SKB_ALWAYS_INLINE uint64_t skb_scaled_sincos_block(const double *restrict x,
                                                          ptrdiff_t n, double factor,
                                                          double *restrict cos_out,
                                                          double *restrict sin_out)
{
    uint64_t flags = 0;
    ptrdiff_t j;
    for (j = 0; j < n; j++)
        flags |= skb_scaled_sincos_value(x[j], factor, cos_out + j, sin_out + j);
    if (flags >> 63)
        return skb_scaled_sincos_by_libm(x, n, factor, cos_out, sin_out);
    return 0;
}

/* Z[i] = [cos(P[i]), sin(P[i])] factor for the rows i < rows of P (m values
 * each, rows ldp apart; Z: rows of 2 m values); bit 63 set if a value of P
 * is not finite. */
SKB_FOURIER_VERSIONS(uint64_t, skb_fourier_from_projections,
             (const double *P, ptrdiff_t rows, ptrdiff_t m, ptrdiff_t ldp, double factor,
              double *Z),
             (P, rows, m, ldp, factor, Z))
{
    uint64_t nonfinite = 0;
    ptrdiff_t i, j;
    for (i = 0; i < rows; i++) {
        double *z = Z + i * 2 * m;
        for (j = 0; j < m; j += SKB_FOURIER_COLUMNS) {
            ptrdiff_t width = m - j < SKB_FOURIER_COLUMNS ? m - j : SKB_FOURIER_COLUMNS;
            nonfinite |= skb_scaled_sincos_block(P + i * ldp + j, width, factor, z + j,
                                                 z + m + j);
        }
    }
    return nonfinite;
}

#if defined(__GNUC__) || defined(__clang__)
/* four doubles: two SSE2 registers in the baseline version, one in the
 * others */
typedef double skb_v4d __attribute__((vector_size(32)));
#define SKB_V4_LANES 4

/* out[0:4 nv] = sum over p of values[p] U[indices[p], col:col + 4 nv],
 * nonzeros in order, from +0 (nv registers of four sums each); ones: every
 * values[p] is 1, whose products are the values of U themselves (the same
 * sums without the multiplications). */
static SKB_ALWAYS_INLINE void skb_sparse_projection_columns(
    const double *values, const int *indices, ptrdiff_t nnz, const double *U, ptrdiff_t ld,
    ptrdiff_t col, int nv, int ones, double *out)
{
    skb_v4d acc[SKB_FOURIER_COLUMNS / SKB_V4_LANES], u;
    ptrdiff_t p;
    int v;
    for (v = 0; v < nv; v++)
        acc[v] = (skb_v4d){0.0, 0.0, 0.0, 0.0};
    for (p = 0; p < nnz; p++) {
        const double *row = U + (ptrdiff_t)indices[p] * ld + col;
        const skb_v4d x = (skb_v4d){values[p], values[p], values[p], values[p]};
        for (v = 0; v < nv; v++) {
            memcpy(&u, row + SKB_V4_LANES * v, sizeof u);
            acc[v] += ones ? u : x * u;
        }
    }
    memcpy(out, acc, nv * sizeof(skb_v4d));
}
#else
#define SKB_V4_LANES 4

static SKB_ALWAYS_INLINE void skb_sparse_projection_columns(
    const double *values, const int *indices, ptrdiff_t nnz, const double *U, ptrdiff_t ld,
    ptrdiff_t col, int nv, int ones, double *out)
{
    ptrdiff_t p, j, width = (ptrdiff_t)nv * SKB_V4_LANES;
    (void)ones;         /* (1 x is x: the same sums either way) */
    for (j = 0; j < width; j++)
        out[j] = 0.0;
    for (p = 0; p < nnz; p++)
        for (j = 0; j < width; j++)
            out[j] += values[p] * U[(ptrdiff_t)indices[p] * ld + col + j];
}
#endif

/* out[0:width] = the projections xU[j:j + width] of the CSR row x (width:
 * 4 nv, or the last m - j < 4 columns when nv is 0); ones as in
 * skb_sparse_projection_columns (nv and ones constants in each call: the
 * accumulators stay in registers). */
static SKB_ALWAYS_INLINE void skb_sparse_projection_block(
    const double *values, const int *indices, ptrdiff_t nnz, const double *U, ptrdiff_t m,
    ptrdiff_t j, int nv, ptrdiff_t width, int ones, double *out)
{
    ptrdiff_t c, p;
    if (nv) {
        skb_sparse_projection_columns(values, indices, nnz, U, m, j, nv, ones, out);
        return;
    }
    for (c = 0; c < width; c++) {       /* one sum each, the same order */
        out[c] = 0.0;
        for (p = 0; p < nnz; p++)
            out[c] += values[p] * U[(ptrdiff_t)indices[p] * m + j + c];
    }
}

/* Z[i] = [cos(x_i U), sin(x_i U)] factor for the n_rows CSR rows x_i
 * (values + starts[i], indices + starts[i], lengths[i] nonzeros; column
 * indices < the rows of U, which is n_features x m C-contiguous), rows of
 * 2 m values: for each block of 32 columns, every row's projections summed
 * in registers and mapped while in L1 (the block's columns of U stay in L1
 * across the rows); bit 63 set if a projection is not finite.  A row whose
 * values are all 1 (binary features) is summed without its multiplications
 * by 1: the same bits. */
SKB_FOURIER_VERSIONS(uint64_t, skb_fourier_sparse_rows,
             (const double *values, const int *indices, const ptrdiff_t *starts,
              const ptrdiff_t *lengths, ptrdiff_t n_rows, const double *U, ptrdiff_t m,
              double factor, double *Z),
             (values, indices, starts, lengths, n_rows, U, m, factor, Z))
{
    double projections[SKB_FOURIER_COLUMNS];
    uint64_t nonfinite = 0;
    ptrdiff_t i, j, p;
    for (j = 0; j < m;) {
        ptrdiff_t left = m - j;
        int nv = left >= 32 ? 8 : left >= 16 ? 4 : left >= 8 ? 2 : left >= 4 ? 1 : 0;
        ptrdiff_t width = nv ? (ptrdiff_t)nv * SKB_V4_LANES : left;
        for (i = 0; i < n_rows; i++) {
            const double *x = values + starts[i];
            const int *k = indices + starts[i];
            ptrdiff_t nnz = lengths[i];
            double *z = Z + i * 2 * m;
            int ones = 1;
            for (p = 0; p < nnz; p++)
                ones &= x[p] == 1.0;
/* (the constants spelled out, one call each) */
#define SKB_PROJECT(NV, ONES) \
    skb_sparse_projection_block(x, k, nnz, U, m, j, NV, width, ONES, projections)
            switch (nv * 2 + ones) {
            case 17: SKB_PROJECT(8, 1); break;
            case 16: SKB_PROJECT(8, 0); break;
            case 9: SKB_PROJECT(4, 1); break;
            case 8: SKB_PROJECT(4, 0); break;
            case 5: SKB_PROJECT(2, 1); break;
            case 4: SKB_PROJECT(2, 0); break;
            case 3: SKB_PROJECT(1, 1); break;
            case 2: SKB_PROJECT(1, 0); break;
            default: SKB_PROJECT(0, 0); break;
            }
#undef SKB_PROJECT
            /* (two copies of the mapping, not nine: a constant width for
             * the full blocks, whose loop is then unrolled) */
            if (width == SKB_FOURIER_COLUMNS)
                nonfinite |= skb_scaled_sincos_block(projections, SKB_FOURIER_COLUMNS, factor,
                                                     z + j, z + m + j);
            else
                nonfinite |= skb_scaled_sincos_block(projections, width, factor, z + j,
                                                     z + m + j);
        }
        j += width;
    }
    return nonfinite;
}

#endif /* SKBUDGET_FOURIER_LOOPS_H */
