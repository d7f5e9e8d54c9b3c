/* conv_winograd.h - between the Winograd driver (conv_winograd.c)
 * and its AVX-512 transforms and kernel (conv_winograd_avx512.c). */
#ifndef TC_CONV_WINOGRAD_H
#define TC_CONV_WINOGRAD_H

#include "gemm_packed.h"

/* A segment is up to 16 consecutive tiles (one zmm lane each); it is cut
 * into runs of tiles of one tile row: lanes lane .. lane + len - 1 hold
 * tiles whose 6x6 input windows start at row y0 and columns x0, x0 + 4, ...
 * of plane (input) / whose 4x4 outputs start at out (row stride OW). */
typedef struct tc__wg4_run {
    const float *plane; /* input: this channel's H x W plane (NULL: all cval,
                           a depth slice outside a constant-mode volume) */
    float *out;         /* output: first element of the run's 4x4 tiles */
    int64_t y0, x0;     /* input window origin (may be in the padding) */
    int lane, len;      /* lanes of the segment */
    int rows, cnt;      /* output: valid rows (<= 4) and columns (<= 4*len) */
} tc__wg4_run;

/* V = B^T d B of the segment's tiles for nc channels (channel c's planes
 * at run.plane + c * cstride): 36 vectors per channel (lanes < nlanes
 * stored) to dst + c * dst_cstride + xi * xi_stride. */
void tc__wg4_in_avx512(const tc__wg4_run *runs, int nruns, int nlanes, int64_t H, int64_t W,
                       int mode, float cval, int64_t nc, int64_t cstride, float *dst,
                       int64_t dst_cstride, int64_t xi_stride);
/* Y = A^T M A + bias for nk output channels: channel kk's 36 vectors at
 * src + kk * src_kstride + xi * xi_stride, bias[kk] (bias may be NULL),
 * stored per run at run.out + kk * kstride (rows, cnt of each run; row
 * stride OW). */
void tc__wg4_out_avx512(const float *src, int64_t xi_stride, int64_t src_kstride, int64_t nk,
                        const float *bias, const tc__wg4_run *runs, int nruns, int64_t OW,
                        int64_t kstride);
/* flags of the wg4 micro-kernels: C += A B instead of C = A B; prefetch
 * the A panels 64 steps ahead (U streamed from L3 or memory) */
#define TC__WG_ACC 1
#define TC__WG_PFA 2
/* C (28 x 16, ldc) = A B, A as two 14-row k-major panels, B one 16-wide
 * k-major panel; rows >= mr not written. */
void tc__wg4_ukernel_28x16_avx512(int64_t kc, const float *a0, const float *a1, const float *b,
                                  float *c, int64_t ldc, int mr, int flags);

/* F(2x2, 3x3) versions (4x4 input tiles at stride 2, 16 vectors a channel,
 * 2x2 outputs a tile): the same runs, with y0 / x0 the 4x4 window's origin
 * and rows <= 2, cnt <= 2*len. */
void tc__wg2_in_avx512(const tc__wg4_run *runs, int nruns, int nlanes, int64_t H, int64_t W,
                       int mode, float cval, int64_t nc, int64_t cstride, float *dst,
                       int64_t dst_cstride, int64_t xi_stride);
void tc__wg2_out_avx512(const float *src, int64_t xi_stride, int64_t src_kstride, int64_t nk,
                        const float *bias, const tc__wg4_run *runs, int nruns, int64_t OW,
                        int64_t kstride);
/* The same with 8-row panels: C (8 x 32) from one panel, C (16 x 16) from
 * two (a0, a1); rows >= mr not written. */
void tc__wg4_ukernel_8x32_avx512(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                                 int mr, int flags);
void tc__wg4_ukernel_16x16_avx512(int64_t kc, const float *a0, const float *a1, const float *b,
                                  float *c, int64_t ldc, int mr, int flags);
/* U = G g G^T (m = 4: 36 values; m = 2: 16) of n kernels given tap-major
 * (tap t of kernel e at w[t * n + e]): value xi of kernel e stored at
 * dst + xi * xi_stride + e (dst and xi_stride 64-byte aligned). */
void tc__wg_wt_avx512(int m, const float *w, int64_t n, float *dst, int64_t xi_stride);

#endif
