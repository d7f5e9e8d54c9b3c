/* conv_1d.h - what cpu.conv.1d's driver (conv_1d.c) and its AVX-512
 * kernels (conv_1d_avx512.c) share. Not installed. */
#ifndef TC_CONV_1D_H
#define TC_CONV_1D_H

#include <stdint.h>

#define C1_MK 6  /* output channels per register tile (broadcast weights) */
#define C1_MW 4  /* 16-lane vectors of output positions per tile */
#define C1_TW (16 * C1_MW) /* output positions per tile */

/* One register tile: mk output channels x nv vectors of 16 consecutive
 * output positions of one row, the whole reduction (channels x taps) in
 * mk*nv zmm accumulators, stored once to the NCW output. */
typedef struct c1_targs {
    const float *x;        /* input (or window buffer) of channel 0 at the
                              tile's first position, tap offset 0 */
    int64_t xc;            /* floats between input channel rows */
    const int64_t *tapoff; /* R offsets (floats) of each tap */
    int64_t R, C;          /* taps, input channels of the group */
    const float *w;        /* packed weights of the tile's channels:
                              [c][r][mk] */
    const float *bias;     /* mk values, or NULL */
    float *y;              /* output at (first channel, first position) */
    int64_t yk;            /* floats between output channels */
    unsigned mlast;        /* lanes of the last vector to store */
} c1_targs;

typedef void (*c1_kernel_fn)(const c1_targs *a);

/* Kernel for mk output channels (1..C1_MK) and nv vectors (1..C1_MW);
 * NULL outside that range. */
c1_kernel_fn tc__c1_kernel_avx512(int mk, int nv);

/* The window of a tile that cannot read the input in place: for each of
 * the C channel rows src + c*pitch, dst[c*dpitch + i] = src[map[i]] for
 * i < n (map[i] = -1: cval). Runs of consecutive indices are copied with
 * vector loads, runs of every other index (stride 2) with two loads and a
 * permute, anything else gathered. */
void tc__c1_window_avx512(float *dst, int64_t dpitch, const float *src, int64_t pitch,
                          int64_t C, const int32_t *map, int64_t n, float cval);

#endif
