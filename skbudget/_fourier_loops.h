/* FOGD's random Fourier features, z(x) = [cos(xU), sin(xU)] * factor
 * (doc/algorithms.md#kernel-ogd), in compiled loops written once and compiled
 * three times (SKB_FOURIER_VERSIONS): for the baseline instruction set, for
 * AVX2 and for AVX-512F, the one run chosen at the module's import as
 * _vector_loops.h chooses (SKBUDGET_DISABLE_AVX2 keeps the baseline;
 * SKBUDGET_DISABLE_AVX512 keeps AVX2).  The same bits from all three:
 * elementwise arithmetic (each lane the scalar code's operations), no
 * contracted FMA (none of the targets has it), no reassociation.
 *
 * The projections xU of dense rows (skb_dense_projections) are the one
 * place with fused multiply-adds, written out: one after another over the
 * features, from +0 (the order of OpenBLAS's GEMM kernels), with AVX-512F
 * tiles where these loops run their AVX-512 version, AVX2 and FMA tiles
 * where the CPU has those, else libm's fma: the same bits for a row
 * whatever the rows computed with it, and from every version.
 *
 * The projection xU of a CSR row sums x_k U[k, j] over the row's nonzeros
 * in their stored order, from +0, one product and one addition each (as
 * scipy's CSR @ dense sums it): blocks of SKB_FOURIER_VECTORS vectors of
 * sums (32 columns of float64, 64 of float32) are kept in registers
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

/* 32-byte vectors of sums per block of projections (eight AVX2
 * registers: 32 columns of U for float64 input, 64 for float32; eight
 * independent chains of additions over a row's nonzeros) */
#define SKB_FOURIER_VECTORS 8

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

/* float32 input (doc/user_guide/families/ogd.rst): the cosine and sine in float,
 * the same scheme with float's constants:
 *   - n = rint(x 2/pi), then r = (x - n P1) - n P2 exact (P1: pi/2 to 12
 *     bits, P2: the next 6, as multiples of 2^-23; |n| < 2^12), then
 *     y = r - n P3 as a head y0 and a tail y1 (P3: the next 24 bits; a
 *     three-part Cody-Waite reduction, absolute error below |n| 2^-48);
 *   - sin(y) and cos(y) on |y| <= pi/4 by Cephes's single-precision
 *     minimax polynomials (sinf, cosf), the tail added to first order;
 *   - the quadrant n mod 4 swaps and negates them;
 *   - the results scaled by the float factor and stored as float64.
 * An argument for libm instead (float64 cos and sin rounded to float):
 * |x| > 2^12, not finite, or y0 within |n| 2^-20 of 0.  The results are
 * within 2 float ULP of the float64 cos and sin rounded to float
 * (tests/test_ogd.py measures it). */
#define SKB_INV_PIO2F 0x1.45f306p-1f
#define SKB_PIO2F_1 0x1.922p+0f
#define SKB_PIO2F_2 (-0x1.28p-18f)
#define SKB_PIO2F_3 (-0x1.777a5cp-25f)
#define SKB_ROUNDING_SHIFTF 0x1.8p23f
/* |x| above this (and NaN, infinity) goes to libm: the bits of 2^12 */
#define SKB_SINCOSF_LIMIT_BITS 0x45800000
#define SKB_SIGN_BITF 0x80000000U
#define SKB_ABS_MASKF 0x7fffffffU
/* Cephes's coefficients of sinf(y) / y and cosf(y) on [-pi/4, pi/4] */
#define SKB_S1F (-1.6666654611e-1f)
#define SKB_S2F 8.3321608736e-3f
#define SKB_S3F (-1.9515295891e-4f)
#define SKB_C1F 4.166664568298827e-2f
#define SKB_C2F (-1.388731625493765e-3f)
#define SKB_C3F 2.443315711809948e-5f

static SKB_ALWAYS_INLINE uint32_t skb_bitsf(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

static SKB_ALWAYS_INLINE float skb_from_bitsf(uint32_t bits)
{
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* skb_scaled_sincos_value for a float x and factor: the float results
 * into the double outputs; bit 31 of the result set when x is one for
 * libm. */
static SKB_ALWAYS_INLINE uint32_t skb_scaled_sincosf_value(float x, float factor,
                                                           double *cos_out, double *sin_out)
{
    const float shifted = x * SKB_INV_PIO2F + SKB_ROUNDING_SHIFTF;
    const float n = shifted - SKB_ROUNDING_SHIFTF;
    const uint32_t quadrant = skb_bitsf(shifted) & 3;
    const float r = (x - n * SKB_PIO2F_1) - n * SKB_PIO2F_2;
    const float w = n * SKB_PIO2F_3;
    const float y0 = r - w, y1 = (r - y0) - w;
    const float z = y0 * y0, v = z * y0;
    const float sin_y = y0 + (y1 + v * (SKB_S1F + z * (SKB_S2F + z * SKB_S3F)));
    const float rc = z * z * (SKB_C1F + z * (SKB_C2F + z * SKB_C3F));
    const float cos_y = 1.0f - (0.5f * z - (rc - y0 * y1));
    const int odd = (int)(quadrant & 1);
    const float sin_base = odd ? cos_y : sin_y, cos_base = odd ? sin_y : cos_y;
    const uint32_t sin_x = skb_bitsf(sin_base) ^ ((quadrant << 30) & SKB_SIGN_BITF);
    const uint32_t cos_x = skb_bitsf(cos_base) ^ (((quadrant + 1) << 30) & SKB_SIGN_BITF);
    const uint32_t out_of_range = (uint32_t)(SKB_SINCOSF_LIMIT_BITS
                                             - (int32_t)(skb_bitsf(x) & SKB_ABS_MASKF));
    const uint32_t cancelled = skb_bitsf(fabsf(y0) - fabsf(n) * 0x1p-20f);
    *cos_out = (double)(skb_from_bitsf(cos_x) * factor);
    *sin_out = (double)(skb_from_bitsf(sin_x) * factor);
    return out_of_range | cancelled;
}

/* the loops, for float64 input (names as written) and for float32 input
 * (names ending in _f32) */
#define SKB_REAL double
#define SKB_FLAGS uint64_t
#define SKB_REAL_NAME(name) name
#define SKB_SINCOS_VALUE skb_scaled_sincos_value
#define SKB_LIBM_COS cos
#define SKB_LIBM_SIN sin
#define SKB_FMA fma
#define SKB_VEC __m256d
#define SKB_VEC_ZERO _mm256_setzero_pd
#define SKB_VEC_LOAD _mm256_loadu_pd
#define SKB_VEC_STORE _mm256_storeu_pd
#define SKB_VEC_SET1 _mm256_set1_pd
#define SKB_VEC_FMA _mm256_fmadd_pd
#define SKB_MASK512 __mmask8
#define SKB_VEC512 __m512d
#define SKB_VEC512_ZERO _mm512_setzero_pd
#define SKB_VEC512_LOAD _mm512_loadu_pd
#define SKB_VEC512_MASKZ_LOAD _mm512_maskz_loadu_pd
#define SKB_VEC512_STORE _mm512_storeu_pd
#define SKB_VEC512_MASK_STORE _mm512_mask_storeu_pd
#define SKB_VEC512_SET1 _mm512_set1_pd
#define SKB_VEC512_FMA _mm512_fmadd_pd
#include "_fourier_loops_real.h"   /* (which undefines its parameters) */

#define SKB_REAL float
#define SKB_FLAGS uint32_t
#define SKB_REAL_NAME(name) name##_f32
#define SKB_SINCOS_VALUE skb_scaled_sincosf_value
#define SKB_LIBM_COS(x) cos((double)(x))
#define SKB_LIBM_SIN(x) sin((double)(x))
#define SKB_FMA fmaf
#define SKB_VEC __m256
#define SKB_VEC_ZERO _mm256_setzero_ps
#define SKB_VEC_LOAD _mm256_loadu_ps
#define SKB_VEC_STORE _mm256_storeu_ps
#define SKB_VEC_SET1 _mm256_set1_ps
#define SKB_VEC_FMA _mm256_fmadd_ps
#define SKB_MASK512 __mmask16
#define SKB_VEC512 __m512
#define SKB_VEC512_ZERO _mm512_setzero_ps
#define SKB_VEC512_LOAD _mm512_loadu_ps
#define SKB_VEC512_MASKZ_LOAD _mm512_maskz_loadu_ps
#define SKB_VEC512_STORE _mm512_storeu_ps
#define SKB_VEC512_MASK_STORE _mm512_mask_storeu_ps
#define SKB_VEC512_SET1 _mm512_set1_ps
#define SKB_VEC512_FMA _mm512_fmadd_ps
#include "_fourier_loops_real.h"   /* (which undefines its parameters) */

#endif /* SKBUDGET_FOURIER_LOOPS_H */
