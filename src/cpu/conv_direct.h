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

#endif
