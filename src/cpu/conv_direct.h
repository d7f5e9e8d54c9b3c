/* conv_direct.h - what cpu.conv.direct's driver (conv_direct.c) and its
 * AVX-512 kernels (conv_direct_avx512.c) share. Not installed. */
#ifndef TC_CONV_DIRECT_H
#define TC_CONV_DIRECT_H

#include <stdint.h>

#define DC_MAXUW 14 /* output positions along the last axis per tile */
#define DC_MAXUH 2  /* output rows per tile (UW <= 7 only) */
#define DC_MAXUW8 6 /* AVX2: 6x2 tiles of 8 lanes (UH 2: UW <= 3) */

/* One register tile: UH rows x UW positions x NKB blocks of 16 output
 * channels, the whole reduction (input channel blocks x taps x channels of a
 * block) in registers, stored once to NCHW. */
typedef struct dc_targs { /* (AVX2 kernels: blocks of 8 output channels) */
    const float *x;        /* blocked input at the tile's first position,
                              channel block 0, tap offset 0 */
    int64_t rowp;          /* floats between the tile's output rows */
    int64_t cbp;           /* floats between input channel blocks */
    const int64_t *tapoff; /* ntaps offsets (floats) of each tap */
    int64_t ntaps, ncb;    /* taps; input channel blocks */
    int64_t cw_last;       /* channels in the last block (1..CB) */
    const float *w;        /* packed weights of the first block of 16 out
                              channels: [cb][tap][CB][16] */
    int64_t wkb;           /* floats between blocks of 16 out channels */
    const float *bias;     /* NKB*16 values (zero past nk) or NULL */
    float *y;              /* NCHW output at (first channel, first position) */
    int64_t ypl;           /* floats between output channels */
    int64_t yrow;          /* floats between output rows */
    int64_t nk;            /* valid output channels (<= NKB*16) */
} dc_targs;

typedef void (*dc_kernel_fn)(const dc_targs *a);

/* A tile's output lines (the first and last float of each of its nk x UH
 * rows) requested for writing before its reduction, so that they arrive
 * while it computes: its NCHW rows are nk planes apart, more streams than
 * the hardware prefetchers follow, and a cold output otherwise stalls the
  * stores (conv1: 8-11% faster at two threads; the AVX2 kernels,
 * which store through a buffer, measured no gain and do not use it). */
#define DC_PREFETCH_OUT(a, UH, UW)                                                   \
    for (int64_t l_ = 0; l_ < (a)->nk; l_++)                                         \
        for (int h_ = 0; h_ < (UH); h_++) {                                          \
            const char *q_ = (const char *)((a)->y + l_ * (a)->ypl + h_ * (a)->yrow); \
            __builtin_prefetch(q_, 1, 3);                                            \
            __builtin_prefetch(q_ + 4 * (UW) - 4, 1, 3);                             \
        }

/* conv_direct_avx512.c: kernel for (CB index: 0 -> 16, 1 -> 8, 2 -> 4;
 * NKB 1..2; UH 1..2; UW 1..14 (UH 2: UW <= 7)); NULL if none. */
dc_kernel_fn tc__dc_kernel_avx512(int cbi, int nkb, int uh, int uw);

/* conv_direct_avx2.c: the same for 8-lane blocks (CB index 1 -> 8, 2 -> 4;
 * UW 1..6, UH 2: UW <= 3); and the row conversion in plain C. */
dc_kernel_fn tc__dc_kernel_avx2(int cbi, int nkb, int uh, int uw);
void tc__dc_row_avx2(float *dst, int64_t CB, int64_t cw, const float *src, int64_t pitch,
                     const int32_t *map, int64_t npos, float cval);

/* conv_direct_avx512.c: channels [0, cw) of CB-blocked row dst (npos
 * positions) from cw NCHW rows src[c] (pitch `pitch` floats between
 * channels) through the index map (source index, or -1 for cval). */
void tc__dc_row_avx512(float *dst, int64_t CB, int64_t cw, const float *src, int64_t pitch,
                       const int32_t *map, int64_t npos, float cval);

/* Few input channels (conv1: 3): lanes over output positions instead of
 * output channels. A tile is UH output rows x UV vectors of 16 consecutive
 * outputs x 4 output channels (UV*UH <= 6: 24 accumulators, 4 weight
 * broadcasts and one input vector live); the input is one plane per
 * channel with each row split by stride phase, so a tap's 16 inputs are
 * one load, and the tile stores straight to NCHW rows (no transposes). */
#define DP_MAXV 6 /* vectors (UV*UH) per tile */
typedef struct dp_targs {
    const float *x;        /* converted input at the tile's first position, channel 0 */
    int64_t rowp;          /* floats between the tile's output rows */
    int64_t cst;           /* floats between input channel planes */
    const int64_t *tapoff; /* ntaps offsets (floats) of each tap */
    int64_t ntaps, cw;     /* taps; input channels (1..4) */
    const float *w;        /* packed weights of the 4 output channels: [tap][cw][4] */
    const float *bias;     /* 4 values (zero past nk) or NULL */
    float *y;              /* NCHW output at (first channel, first position) */
    int64_t ypl, yrow;     /* floats between output channels, rows */
    int64_t nk;            /* valid output channels (1..4) */
    uint16_t mlast;        /* lanes stored of each row's last vector */
} dp_targs;
typedef void (*dp_kernel_fn)(const dp_targs *a);

/* How 16 positions of a converted row are read: all cval, one load (step
 * 1), two loads and a permute (step 2: a stride-2 phase), or a gather. */
enum { DP_FILL, DP_STEP1, DP_STEP2, DP_GATHER };
typedef struct dp_chunk {
    int32_t base;            /* source index of lane 0 (steps 1, 2) */
    uint16_t ok, ma, mb;     /* lanes read; step 2: elements of the two loads */
    uint16_t step;
} dp_chunk;

/* conv_direct_avx512.c: the kernel for UV x UH (UV*UH <= DP_MAXV), or NULL;
 * the chunks of a row's index map (source index, or -1 for cval; one per
 * 16 positions); and one channel's phase-split row through them: dst[i] =
 * src[map[i]], written in whole vectors up to npos rounded up to 16, then
 * 16 zeros. */
dp_kernel_fn tc__dp_kernel_avx512(int uv, int uh);
void tc__dp_desc_avx512(dp_chunk *dsc, const int32_t *map, int64_t npos);
void tc__dp_row_avx512(float *dst, const float *src, const int32_t *map, const dp_chunk *dsc,
                       int64_t npos, float cval);

#endif
