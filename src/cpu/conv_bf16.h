/* conv_bf16.h - what the bfloat16 conv solvers (conv_bf16.c,
 * conv_bf16_winograd.c) share with their AVX512-BF16 kernels
 * (conv_bf16_avx512.c). */
#ifndef TC_CONV_BF16_H
#define TC_CONV_BF16_H

#include "../core/internal.h"

/* One micro-kernel call: MR output pixels x NV*16 output channels. */
typedef struct tc__bf16_tile {
    const uint16_t *x;          /* source image (+ the group's first channel) */
    const int64_t *roff;        /* MR row offsets: each row's pixel at tap 0 */
    const int64_t *runoff;      /* element offset of each run */
    int nruns, npairs;          /* runs, channel pairs per run */
    const uint16_t *w;          /* packed weights: [nruns*npairs][NV*16][2] */
    int row0;                   /* rows < row0 are not stored */
    int nch;                    /* valid output channels of the NV*16 */
    uint16_t *const *out;       /* MR row pointers (bf16, channels-last) or NULL */
    const uint16_t *const *res; /* MR residual row pointers, or NULL */
    const float *bias;          /* NV*16 fp32 (zeros without bias) */
    int act;                    /* tc_activation */
    float *tb;                  /* fp32 tile [MR][NV*16] when out is NULL */
} tc__bf16_tile;

void tc__bf16_ukr_6x4(const tc__bf16_tile *t);
void tc__bf16_ukr_8x3(const tc__bf16_tile *t);
void tc__bf16_ukr_12x2(const tc__bf16_tile *t);
void tc__bf16_ukr_12x1(const tc__bf16_tile *t);
void tc__bf16_store_cf(const float *tb, int64_t nr, int64_t rows, int nch, const float *bias,
                       uint16_t *y, int64_t cs, const uint16_t *res, int act);
int tc__bf16_any_nonfinite(const uint16_t *s, int64_t n);
void tc__bf16_pack_rows(const uint16_t *src, const int64_t *roff, int mr, const int64_t *runoff,
                        int64_t nrun, int64_t step, int64_t run, int64_t lp, uint16_t *pk);
void tc__bf16_dw_row(const uint16_t *x, int64_t ps, int64_t xs, const int64_t *off, const int *widx,
                     int nt, const float *w, int nruns, const float *bias, int64_t C, int64_t nw,
                     uint16_t *y, const uint16_t *res, int act);
void tc__bf16_wg_in(const uint16_t *src, int64_t rs, int64_t ps, int64_t C, uint16_t *V, int64_t vs);
void tc__bf16_wg_out(const float *M, int64_t ms, int nv, int nch, const float *bias,
                     uint16_t *const *out, const uint16_t *const *res, int act, float *tmp);
/* conv_bf16.c: the padded channels-last copy (padding mode applied,
 * channels-first transposed), extents X, each group's channels padded to
 * Cgp (zeros). */
void tc__bf16_pad_copy(const tc__args *a, const int64_t X[3], int64_t Cgp, uint16_t *dst);

#endif
