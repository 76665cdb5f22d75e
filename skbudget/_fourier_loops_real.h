/* FOGD's feature loops for one precision of the input: included twice by
 * _fourier_loops.h, once for float64 input and once for float32 input,
 * with these macros set (and unset after):
 *   SKB_REAL             the type of the input values, of U and of the
 *                        projections (double or float)
 *   SKB_FLAGS            the unsigned integer of its size (the flags of
 *                        SKB_SINCOS_VALUE: its top bit)
 *   SKB_REAL_NAME(name)  the name of this version's function (float: name_f32)
 *   SKB_SINCOS_VALUE     the cosine and sine of one value, scaled, into
 *                        double outputs (skb_scaled_sincos_value or
 *                        skb_scaled_sincosf_value)
 *   SKB_FMA              fma or fmaf (x y + z rounded once)
 *   SKB_LIBM_COS, SKB_LIBM_SIN   libm's, for the values SKB_SINCOS_VALUE
 *                        flags (float: the float64 libm rounded to float)
 * The features are stored as float64 in both (a float32 feature is a
 * float64 value exactly): the learners' model stays float64.  The float64
 * version is the code these loops had before the float32 one was added:
 * the same operations in the same order, the same bits. */

#define SKB_FLAG_SHIFT (8 * (int)sizeof(SKB_FLAGS) - 1)
/* SKB_FOURIER_VERSIONS with its name argument expanded first (a name made
 * by SKB_REAL_NAME) */
#define SKB_FOURIER_VERSIONS_OF(ret, name, params, args) \
    SKB_FOURIER_VERSIONS(ret, name, params, args)
/* lanes of a 32-byte vector of SKB_REAL */
#define SKB_LANES ((int)(32 / sizeof(SKB_REAL)))
/* columns of U per block of projections */
#define SKB_FOURIER_COLUMNS (SKB_FOURIER_VECTORS * SKB_LANES)
/* dense rows' projections: tiles of up to 3 rows by four 32-byte vectors
 * of columns (twelve vectors of sums in registers) */
#define SKB_PROJECTION_ROWS 3
/* dense rows' projections: bytes of X per block of rows (in cache while
 * every strip of columns reads them), and at most these bytes of
 * projections per block (in L2 while the strips write them) */
#define SKB_PROJECTION_BLOCK_BYTES (128 * 1024)
#define SKB_PROJECTION_OUT_BYTES (256 * 1024)
/* dense rows' projections with AVX2 tiles: features per pass over a block
 * of rows (the pass's rows of U, 8 kB a strip, stay in L1 across the
 * block's tiles; the sums carried over in P from one pass to the next) */
#define SKB_PROJECTION_DEPTH 64
/* lanes of a 64-byte vector of SKB_REAL; rows per AVX-512 tile (six rows
 * by four vectors: 24 of the 32 registers hold sums) */
#define SKB_LANES512 ((int)(64 / sizeof(SKB_REAL)))
#define SKB_PROJECTION_ROWS512 6

/* The values of x[0:n] that SKB_SINCOS_VALUE leaves to libm, by libm's cos
 * and sin; returns bit 63 set if one of x[0:n] is not finite (its outputs
 * are then NaN). */
static SKB_UNUSED uint64_t SKB_REAL_NAME(skb_scaled_sincos_by_libm)(
    const SKB_REAL *x, ptrdiff_t n, SKB_REAL factor, double *cos_out, double *sin_out)
{
    uint64_t nonfinite = 0;
    double c, s;
    ptrdiff_t j;
    for (j = 0; j < n; j++)
        if (SKB_SINCOS_VALUE(x[j], factor, &c, &s) >> SKB_FLAG_SHIFT) {
            cos_out[j] = (SKB_REAL)(SKB_LIBM_COS(x[j])) * factor;
            sin_out[j] = (SKB_REAL)(SKB_LIBM_SIN(x[j])) * factor;
            nonfinite |= skb_nonfinite_bit(x[j]);
        }
    return nonfinite;
}

/* cos_out[j] = cos(x[j]) factor, sin_out[j] = sin(x[j]) factor for j < n;
 * returns bit 63 set if one of x[0:n] is not finite. */
static SKB_ALWAYS_INLINE uint64_t SKB_REAL_NAME(skb_scaled_sincos_block)(
    const SKB_REAL *restrict x, ptrdiff_t n, SKB_REAL factor, double *restrict cos_out,
    double *restrict sin_out)
{
    SKB_FLAGS flags = 0;
    ptrdiff_t j;
    for (j = 0; j < n; j++)
        flags |= SKB_SINCOS_VALUE(x[j], factor, cos_out + j, sin_out + j);
    if (flags >> SKB_FLAG_SHIFT)
        return SKB_REAL_NAME(skb_scaled_sincos_by_libm)(x, n, factor, cos_out, sin_out);
    return 0;
}

/* Z[i] = [cos(P[i]), sin(P[i])] factor for the rows i < rows of P (m values
 * each, rows ldp apart; Z: rows of 2 m values); bit 63 set if a value of P
 * is not finite. */
SKB_FOURIER_VERSIONS_OF(uint64_t, SKB_REAL_NAME(skb_fourier_from_projections),
             (const SKB_REAL *P, ptrdiff_t rows, ptrdiff_t m, ptrdiff_t ldp, SKB_REAL factor,
              double *Z),
             (P, rows, m, ldp, factor, Z))
{
    uint64_t nonfinite = 0;
    ptrdiff_t i, j;
    for (i = 0; i < rows; i++) {
        double *z = Z + i * 2 * m;
        for (j = 0; j < m; j += SKB_FOURIER_COLUMNS) {
            ptrdiff_t width = m - j < SKB_FOURIER_COLUMNS ? m - j : SKB_FOURIER_COLUMNS;
            nonfinite |= SKB_REAL_NAME(skb_scaled_sincos_block)(P + i * ldp + j, width, factor,
                                                                z + j, z + m + j);
        }
    }
    return nonfinite;
}

/* P[i, j] = sum over k of X[i, k] U[k, j] for the rows i < rows of X
 * (d values each, ldx apart; U: d x m C-contiguous; P: rows of m values):
 * one fused multiply-add after another over k = 0 .. d - 1, from +0, for
 * every value alike, whatever the number of rows (a BLAS product's sums
 * depend on the block's shape: a row alone goes through GEMV, the edge rows
 * of a block through other kernels; FOGD's model would then depend on how
 * the stream was cut into calls).  The chain is the order of OpenBLAS's
 * GEMM kernels for the inner rows of a block of at most 256 features
 * (doc/engine.md, "FMA kernels"), so the features are those of X @ U
 * there.  With FMA instructions (AVX2 and FMA) tiles of up to
 * SKB_PROJECTION_ROWS rows by four vectors of columns keep their sums in
 * registers (each vector of U loaded once for the tile's rows); the last
 * fewer than a vector's columns, and everything without FMA instructions,
 * by skb_dense_projection_tile, with C's fma (libm's, or the instruction):
 * the same chain, the same bits.  Where the AVX-512 version of these loops
 * runs (skb_fourier_loops_init), tiles of up to SKB_PROJECTION_ROWS512
 * rows by four 64-byte vectors, the last one masked: the same chain again
 * (X 5000 x 784 by U 784 x 400 on an AMD EPYC with AVX-512, one thread:
 * 60-68 ms, the AVX2 tiles 76 ms, OpenBLAS's dgemm 66 ms). */

/* rows r0 .. r0 + nr - 1 by columns j .. j + nc - 1 of skb_dense_projections
 * (here and in AVX2's tiles below, resume: the chains go on from the sums
 * in P, the features X[:, 0:d] and rows of U those after the sums') */
static SKB_ALWAYS_INLINE void SKB_REAL_NAME(skb_dense_projection_tile)(
    const SKB_REAL *X, ptrdiff_t d, ptrdiff_t ldx, const SKB_REAL *U, ptrdiff_t m,
    ptrdiff_t r0, int nr, ptrdiff_t j, int nc, int resume, SKB_REAL *P)
{
    ptrdiff_t k;
    int r, c;
    for (r = 0; r < nr; r++) {
        SKB_REAL *p = P + (r0 + r) * m + j;
        const SKB_REAL *x = X + (r0 + r) * ldx;
        if (!resume)
            for (c = 0; c < nc; c++)
                p[c] = 0;
        for (k = 0; k < d; k++)
            for (c = 0; c < nc; c++)
                p[c] = SKB_FMA(x[k], U[k * m + j + c], p[c]);
    }
}

#ifdef SKB_DISPATCH_AVX2
/* rows i .. i + nr - 1 (nr <= SKB_PROJECTION_ROWS) by the nv vectors of
 * columns from j (nv <= 4) of skb_dense_projections, with FMA
 * instructions: the sums in registers (nr and nv constants in each call,
 * so the loops over them unroll), each vector of U loaded once for the
 * tile's rows */
__attribute__((target("avx2,fma"))) static SKB_ALWAYS_INLINE void
SKB_REAL_NAME(skb_dense_projection_vectors)(const SKB_REAL *X, ptrdiff_t i, int nr,
                                            ptrdiff_t d, ptrdiff_t ldx, const SKB_REAL *U,
                                            ptrdiff_t m, ptrdiff_t j, int nv, int resume,
                                            SKB_REAL *P)
{
    SKB_VEC acc[SKB_PROJECTION_ROWS][4], u[4];
    ptrdiff_t k;
    int r, v;
    for (r = 0; r < nr; r++)
        for (v = 0; v < nv; v++)
            acc[r][v] = resume ? SKB_VEC_LOAD(P + (i + r) * m + j + v * SKB_LANES)
                               : SKB_VEC_ZERO();
    for (k = 0; k < d; k++) {
        for (v = 0; v < nv; v++)
            u[v] = SKB_VEC_LOAD(U + k * m + j + v * SKB_LANES);
        for (r = 0; r < nr; r++) {
            const SKB_VEC x = SKB_VEC_SET1(X[(i + r) * ldx + k]);
            for (v = 0; v < nv; v++)
                acc[r][v] = SKB_VEC_FMA(x, u[v], acc[r][v]);
        }
    }
    for (r = 0; r < nr; r++)
        for (v = 0; v < nv; v++)
            SKB_VEC_STORE(P + (i + r) * m + j + v * SKB_LANES, acc[r][v]);
}

/* skb_dense_projections with FMA instructions (where the CPU has AVX2 and
 * FMA, whether the AVX2 or the AVX-512 build of the other loops runs):
 * tiles of up to SKB_PROJECTION_ROWS rows by up to four vectors of
 * columns, the last fewer than a vector's columns by
 * skb_dense_projection_tile (C's fma: the same chain, the same bits) */
__attribute__((target("avx2,fma"))) static void SKB_REAL_NAME(skb_dense_projections_fma)(
    const SKB_REAL *X, ptrdiff_t rows, ptrdiff_t d, ptrdiff_t ldx, const SKB_REAL *U,
    ptrdiff_t m, int resume, SKB_REAL *P)
{
    ptrdiff_t i, j;
    for (j = 0; j + SKB_LANES <= m;) {
        const int nv = m - j >= 4 * SKB_LANES ? 4 : (int)((m - j) / SKB_LANES);
        for (i = 0; i < rows; i += SKB_PROJECTION_ROWS) {
            const int nr = rows - i < SKB_PROJECTION_ROWS ? (int)(rows - i)
                                                          : SKB_PROJECTION_ROWS;
/* (the constants spelled out, one call each) */
#define SKB_TILE(NR, NV) \
    SKB_REAL_NAME(skb_dense_projection_vectors)(X, i, NR, d, ldx, U, m, j, NV, resume, P)
            switch (nr * 4 + nv) {
            case 16: SKB_TILE(3, 4); break;
            case 15: SKB_TILE(3, 3); break;
            case 14: SKB_TILE(3, 2); break;
            case 13: SKB_TILE(3, 1); break;
            case 12: SKB_TILE(2, 4); break;
            case 11: SKB_TILE(2, 3); break;
            case 10: SKB_TILE(2, 2); break;
            case 9: SKB_TILE(2, 1); break;
            case 8: SKB_TILE(1, 4); break;
            case 7: SKB_TILE(1, 3); break;
            case 6: SKB_TILE(1, 2); break;
            default: SKB_TILE(1, 1); break;
            }
#undef SKB_TILE
        }
        j += nv * SKB_LANES;
    }
    if (j < m)
        for (i = 0; i < rows; i += SKB_PROJECTION_ROWS)
            SKB_REAL_NAME(skb_dense_projection_tile)(
                X, d, ldx, U, m, i,
                rows - i < SKB_PROJECTION_ROWS ? (int)(rows - i) : SKB_PROJECTION_ROWS, j,
                (int)(m - j), resume, P);
}

/* rows i .. i + nr - 1 (nr <= SKB_PROJECTION_ROWS512) by the nv 64-byte
 * vectors of columns from j (nv <= 4, the last one's lanes those of the
 * mask last) of skb_dense_projections, with AVX-512F: the same chains as
 * skb_dense_projection_vectors, in twice the lanes and registers (each
 * vector of U loaded once for the tile's rows; a vector's missing lanes
 * neither read nor written) */
SKB_AVX512_TARGET static SKB_ALWAYS_INLINE void SKB_REAL_NAME(skb_dense_projection_vectors512)(
    const SKB_REAL *X, ptrdiff_t i, int nr, ptrdiff_t d, ptrdiff_t ldx, const SKB_REAL *U,
    ptrdiff_t m, ptrdiff_t j, int nv, SKB_MASK512 last, SKB_REAL *P)
{
    SKB_VEC512 acc[SKB_PROJECTION_ROWS512][4], u[4];
    /* a strip's last vector masked only where it has fewer lanes (masked
     * loads and stores cost more than plain ones on AMD's Zen 4: at d = 2,
     * D = 400 the masked stores were half the time; at d = 784, 8 % more
     * with the loads masked) */
    const int full = last == (SKB_MASK512)~0u;
    ptrdiff_t k;
    int r, v;
    for (r = 0; r < nr; r++)
        for (v = 0; v < nv; v++)
            acc[r][v] = SKB_VEC512_ZERO();
    for (k = 0; k < d; k++) {
        const SKB_REAL *row = U + k * m + j;
        for (v = 0; v + 1 < nv; v++)
            u[v] = SKB_VEC512_LOAD(row + v * SKB_LANES512);
        u[nv - 1] = full ? SKB_VEC512_LOAD(row + (nv - 1) * SKB_LANES512)
                         : SKB_VEC512_MASKZ_LOAD(last, row + (nv - 1) * SKB_LANES512);
        for (r = 0; r < nr; r++) {
            const SKB_VEC512 x = SKB_VEC512_SET1(X[(i + r) * ldx + k]);
            for (v = 0; v < nv; v++)
                acc[r][v] = SKB_VEC512_FMA(x, u[v], acc[r][v]);
        }
    }
    for (r = 0; r < nr; r++) {
        SKB_REAL *p = P + (i + r) * m + j;
        for (v = 0; v + 1 < nv; v++)
            SKB_VEC512_STORE(p + v * SKB_LANES512, acc[r][v]);
        if (full)
            SKB_VEC512_STORE(p + (nv - 1) * SKB_LANES512, acc[r][nv - 1]);
        else
            SKB_VEC512_MASK_STORE(p + (nv - 1) * SKB_LANES512, last, acc[r][nv - 1]);
    }
}

/* skb_dense_projections with AVX-512F (where its loops were chosen,
 * skb_fourier_loops_init): tiles of up to SKB_PROJECTION_ROWS512 rows by
 * up to four 64-byte vectors of columns, the last vector of a strip
 * masked to the columns left (no scalar tail) */
SKB_AVX512_TARGET static void SKB_REAL_NAME(skb_dense_projections_avx512)(
    const SKB_REAL *X, ptrdiff_t rows, ptrdiff_t d, ptrdiff_t ldx, const SKB_REAL *U,
    ptrdiff_t m, SKB_REAL *P)
{
    ptrdiff_t i, j;
    for (j = 0; j < m;) {
        const ptrdiff_t left = m - j;
        const int nv = left >= 4 * SKB_LANES512 ? 4
                       : (int)((left + SKB_LANES512 - 1) / SKB_LANES512);
        const int lanes = (int)(left - (ptrdiff_t)(nv - 1) * SKB_LANES512);
        const SKB_MASK512 last = (SKB_MASK512)(lanes >= SKB_LANES512 ? ~0u
                                                                     : (1u << lanes) - 1);
        for (i = 0; i < rows; i += SKB_PROJECTION_ROWS512) {
            const int nr = rows - i < SKB_PROJECTION_ROWS512 ? (int)(rows - i)
                                                             : SKB_PROJECTION_ROWS512;
/* (the constants spelled out, one call each) */
#define SKB_TILE(NR, NV) \
    case (NR - 1) * 4 + NV - 1: \
        SKB_REAL_NAME(skb_dense_projection_vectors512)(X, i, NR, d, ldx, U, m, j, NV, last, P); \
        break
#define SKB_TILES(NR) SKB_TILE(NR, 1); SKB_TILE(NR, 2); SKB_TILE(NR, 3); SKB_TILE(NR, 4)
            switch ((nr - 1) * 4 + nv - 1) {
            SKB_TILES(1); SKB_TILES(2); SKB_TILES(3); SKB_TILES(4); SKB_TILES(5);
            SKB_TILES(6);
            default: break;
            }
#undef SKB_TILES
#undef SKB_TILE
        }
        j += left < 4 * SKB_LANES512 ? left : 4 * SKB_LANES512;
    }
}
#endif

static SKB_UNUSED void SKB_REAL_NAME(skb_dense_projections)(
    const SKB_REAL *X, ptrdiff_t rows, ptrdiff_t d, ptrdiff_t ldx, const SKB_REAL *U,
    ptrdiff_t m, SKB_REAL *P)
{
    ptrdiff_t i;
#ifdef SKB_DISPATCH_AVX2
    if (skb_fma_available()) {
        /* a block of rows (about SKB_PROJECTION_BLOCK_BYTES of X, at most
         * SKB_PROJECTION_OUT_BYTES of P) at a time, so that its rows stay in
         * cache while every strip of columns reads them (all the rows at
         * once, each strip streamed the whole of X from memory: 25 times X
         * at D = 400); AVX2's tiles, SKB_PROJECTION_DEPTH features of the
         * block at a time, each tile's sums read back from P to go on (the
         * AVX2 tiles read U from L2 otherwise: 115 ms for X 5000 x 784 by U
         * 784 x 400 against 76 ms so; AVX-512's four times the sums per load
         * do not need it).  A stored and reloaded sum is the same value: the
         * chains, the sums do not depend on the blocks. */
        const int avx512 = skb_fourier_avx512_chosen > 0;
        const ptrdiff_t tile = avx512 ? SKB_PROJECTION_ROWS512 : SKB_PROJECTION_ROWS;
        const ptrdiff_t step = avx512 ? (d > 0 ? d : 1) : SKB_PROJECTION_DEPTH;
        const ptrdiff_t panel = d < step ? d : step;
        ptrdiff_t block = SKB_PROJECTION_BLOCK_BYTES / (ptrdiff_t)sizeof(SKB_REAL)
                          / (panel > 0 ? panel : 1), k;
        const ptrdiff_t out_rows = SKB_PROJECTION_OUT_BYTES / (ptrdiff_t)sizeof(SKB_REAL)
                                   / (m > 0 ? m : 1);
        if (block > out_rows)
            block = out_rows;
        block = block / tile * tile;
        if (block < tile)
            block = tile;
        for (i = 0; i < rows; i += block) {
            const ptrdiff_t n = rows - i < block ? rows - i : block;
            for (k = 0; k == 0 || k < d; k += step) {  /* (d = 0: once, P = 0) */
                const ptrdiff_t depth = d - k < step ? d - k : step;
                if (avx512)     /* (k = 0 only: one step) */
                    SKB_REAL_NAME(skb_dense_projections_avx512)(X + i * ldx, n, d, ldx, U, m,
                                                               P + i * m);
                else
                    SKB_REAL_NAME(skb_dense_projections_fma)(
                        X + i * ldx + k, n, depth, ldx, U + k * m, m, k > 0, P + i * m);
            }
        }
        return;
    }
#endif
    for (i = 0; i < rows; i++)
        SKB_REAL_NAME(skb_dense_projection_tile)(X, d, ldx, U, m, i, 1, 0, (int)m, 0, P);
}

#if defined(__GNUC__) || defined(__clang__)
/* a 32-byte vector: four doubles or eight floats (two SSE2 registers in
 * the baseline version, one in the others) */
typedef SKB_REAL SKB_REAL_NAME(skb_vector) __attribute__((vector_size(32)));

/* out[0:LANES nv] = sum over p of values[p] U[indices[p], col:col + LANES
 * nv], nonzeros in order, from +0 (nv registers of LANES sums each); ones:
 * every values[p] is 1, whose products are the values of U themselves (the
 * same sums without the multiplications). */
static SKB_ALWAYS_INLINE void SKB_REAL_NAME(skb_sparse_projection_columns)(
    const SKB_REAL *values, const int *indices, ptrdiff_t nnz, const SKB_REAL *U, ptrdiff_t ld,
    ptrdiff_t col, int nv, int ones, SKB_REAL *out)
{
    SKB_REAL_NAME(skb_vector) acc[SKB_FOURIER_VECTORS], u;
    ptrdiff_t p;
    int v;
    for (v = 0; v < nv; v++)
        acc[v] = (SKB_REAL_NAME(skb_vector)){0};
    for (p = 0; p < nnz; p++) {
        const SKB_REAL *row = U + (ptrdiff_t)indices[p] * ld + col;
        for (v = 0; v < nv; v++) {
            memcpy(&u, row + SKB_LANES * v, sizeof u);
            acc[v] += ones ? u : values[p] * u;
        }
    }
    memcpy(out, acc, nv * sizeof(SKB_REAL_NAME(skb_vector)));
}
#else
static SKB_ALWAYS_INLINE void SKB_REAL_NAME(skb_sparse_projection_columns)(
    const SKB_REAL *values, const int *indices, ptrdiff_t nnz, const SKB_REAL *U, ptrdiff_t ld,
    ptrdiff_t col, int nv, int ones, SKB_REAL *out)
{
    ptrdiff_t p, j, width = (ptrdiff_t)nv * SKB_LANES;
    (void)ones;         /* (1 x is x: the same sums either way) */
    for (j = 0; j < width; j++)
        out[j] = 0;
    for (p = 0; p < nnz; p++)
        for (j = 0; j < width; j++)
            out[j] += values[p] * U[(ptrdiff_t)indices[p] * ld + col + j];
}
#endif

/* out[0:width] = the projections xU[j:j + width] of the CSR row x (width:
 * LANES nv, or fewer columns than a vector when nv is 0); ones as in
 * skb_sparse_projection_columns (nv and ones constants in each call: the
 * accumulators stay in registers). */
static SKB_ALWAYS_INLINE void SKB_REAL_NAME(skb_sparse_projection_block)(
    const SKB_REAL *values, const int *indices, ptrdiff_t nnz, const SKB_REAL *U, ptrdiff_t m,
    ptrdiff_t j, int nv, ptrdiff_t width, int ones, SKB_REAL *out)
{
    ptrdiff_t c, p;
    if (nv) {
        SKB_REAL_NAME(skb_sparse_projection_columns)(values, indices, nnz, U, m, j, nv, ones,
                                                     out);
        return;
    }
    for (c = 0; c < width; c++) {       /* one sum each, the same order */
        out[c] = 0;
        for (p = 0; p < nnz; p++)
            out[c] += values[p] * U[(ptrdiff_t)indices[p] * m + j + c];
    }
}

/* Z[i] = [cos(x_i U), sin(x_i U)] factor for the n_rows CSR rows x_i
 * (values + starts[i], indices + starts[i], lengths[i] nonzeros; column
 * indices < the rows of U, which is n_features x m C-contiguous), rows of
 * 2 m values: for each block of SKB_FOURIER_COLUMNS columns, every row's
 * projections summed in registers and mapped while in L1 (the block's
 * columns of U stay in L1 across the rows); bit 63 set if a projection is not finite.  A row whose
 * values are all 1 (binary features) is summed without its multiplications
 * by 1: the same bits. */
SKB_FOURIER_VERSIONS_OF(uint64_t, SKB_REAL_NAME(skb_fourier_sparse_rows),
             (const SKB_REAL *values, const int *indices, const ptrdiff_t *starts,
              const ptrdiff_t *lengths, ptrdiff_t n_rows, const SKB_REAL *U, ptrdiff_t m,
              SKB_REAL factor, double *Z),
             (values, indices, starts, lengths, n_rows, U, m, factor, Z))
{
    SKB_REAL projections[SKB_FOURIER_COLUMNS];
    uint64_t nonfinite = 0;
    ptrdiff_t i, j, p;
    for (j = 0; j < m;) {
        ptrdiff_t left = m - j;
        /* 8, 4, 2 or 1 vectors of LANES sums, or the last fewer than
         * LANES columns (summed one at a time) */
        ptrdiff_t width = left >= SKB_FOURIER_COLUMNS ? SKB_FOURIER_COLUMNS
                          : left >= 4 * SKB_LANES ? 4 * SKB_LANES
                          : left >= 2 * SKB_LANES ? 2 * SKB_LANES
                          : left >= SKB_LANES ? SKB_LANES : left;
        for (i = 0; i < n_rows; i++) {
            const SKB_REAL *x = values + starts[i];
            const int *k = indices + starts[i];
            ptrdiff_t nnz = lengths[i];
            double *z = Z + i * 2 * m;
            int ones = 1;
            for (p = 0; p < nnz; p++)
                ones &= x[p] == 1;
/* (the constants spelled out, one call each) */
#define SKB_PROJECT(NV, ONES) \
    SKB_REAL_NAME(skb_sparse_projection_block)(x, k, nnz, U, m, j, NV, width, ONES, \
                                               projections)
            switch ((width >= SKB_LANES ? width / SKB_LANES : 0) * 2 + ones) {
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
                nonfinite |= SKB_REAL_NAME(skb_scaled_sincos_block)(
                    projections, SKB_FOURIER_COLUMNS, factor, z + j, z + m + j);
            else
                nonfinite |= SKB_REAL_NAME(skb_scaled_sincos_block)(projections, width, factor,
                                                                    z + j, z + m + j);
        }
        j += width;
    }
    return nonfinite;
}

#undef SKB_LANES
#undef SKB_FOURIER_COLUMNS
#undef SKB_PROJECTION_ROWS
#undef SKB_PROJECTION_BLOCK_BYTES
#undef SKB_PROJECTION_OUT_BYTES
#undef SKB_PROJECTION_DEPTH
#undef SKB_LANES512
#undef SKB_PROJECTION_ROWS512
#undef SKB_FOURIER_VERSIONS_OF
#undef SKB_FLAG_SHIFT

/* the template's parameters (see _fourier_loops.h), for the next instance */
#undef SKB_REAL
#undef SKB_FLAGS
#undef SKB_REAL_NAME
#undef SKB_SINCOS_VALUE
#undef SKB_LIBM_COS
#undef SKB_LIBM_SIN
#undef SKB_FMA
#undef SKB_VEC
#undef SKB_VEC_ZERO
#undef SKB_VEC_LOAD
#undef SKB_VEC_STORE
#undef SKB_VEC_SET1
#undef SKB_VEC_FMA
#undef SKB_MASK512
#undef SKB_VEC512
#undef SKB_VEC512_ZERO
#undef SKB_VEC512_LOAD
#undef SKB_VEC512_MASKZ_LOAD
#undef SKB_VEC512_STORE
#undef SKB_VEC512_MASK_STORE
#undef SKB_VEC512_SET1
#undef SKB_VEC512_FMA
