/*
 * igemm_half_merge.cuh - the merged form of few-channel and strided 2D
 * half-precision layers (conv1: 7x7/2, C = 3), shared by
 * cuda.conv.igemm-half-shifted (igemm_half_shifted.cu) and
 * cuda.conv.igemm-half-stream (igemm_half_stream.cu): hs_merged (does the
 * layer run merged, and the stride-1 layer it becomes), k_hs_merge (the
 * merged input xm), the packed weights' element map hs_wsrc and the merged
 * form's device repack k_hs_wpack.
 *
 * Merged: k_hs_merge writes xm[n][h'][w'][j], j = (dy, s, c), =
 * x[n][h' sy + dy - py][w' sx + s - px][c] (dy < sy, s < S; zeros outside
 * and up to Cm = sy S C rounded up to 8), so that the layer becomes a
 * stride-1 one of Cm channels, a ceil(R / sy) x 1 mask and no padding
 * (7x7/2 x 3 channels: 4 x 1 taps of 48 channels, the weights' missing
 * eighth row zero).
 *
 * Every definition lies in an anonymous namespace (as
 * igemm_half_common.cuh's).
 */
#ifndef TC_CUDA_CONV_IGEMM_HALF_MERGE_CUH
#define TC_CUDA_CONV_IGEMM_HALF_MERGE_CUH

#include "cuda/conv/igemm_half_common.cuh" /* HG_BK, hg_wsrc */
#include "cuda/conv/hs_merge_map.h"       /* hs_mgeom, hs_merge_col, hs_merge_row */

namespace {

/* The merged input (hs_merged): xm[n][h'][w'][j] for rows r = n Hm + h',
 * 8 channels j0.. of column w' a thread, one 16-byte store a row; the
 * thread maps its 8 elements' columns once (hs_merge_col) and walks rows
 * blockIdx.y, + gridDim.y, ... */
__global__ void k_hs_merge(const uint16_t *__restrict__ x, uint16_t *__restrict__ xm, int64_t rows,
                           const hs_mgeom g) {
    const int c8 = g.Cm / 8, e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= g.Wm * c8) return;
    const int wq = e / c8, j0 = (e - wq * c8) * 8;
    int dy[8], xo[8];
#pragma unroll
    for (int i = 0; i < 8; i++) hs_merge_col(g, wq, j0 + i, &dy[i], &xo[i]);
    const int64_t rowlen = (int64_t)g.W * g.C;
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
        const int64_t n = r / g.Hm;
        const int hq = (int)(r - n * g.Hm);
        const uint16_t *xn = x + n * g.H * rowlen;
        unsigned v[4] = {0, 0, 0, 0};
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int hi = dy[i] < 0 ? -1 : hs_merge_row(g, hq, dy[i]);
            if (hi >= 0) v[i >> 1] |= (unsigned)__ldg(xn + hi * rowlen + xo[i]) << (16 * (i & 1));
        }
        *(uint4 *)(xm + (r * g.Wm + wq) * g.Cm + j0) = make_uint4(v[0], v[1], v[2], v[3]);
    }
}

/* The packed weights' element l of row wk (dense C/G x taps, torch's
 * layout): l = t * CKP + j; plain: channel j of tap t; merged: j = (dy,
 * s, c) of mask row t sy + dy (zero past the mask) */
struct hs_wmap {
    int merged, Cg, CKP, R; /* R: taps of the original mask */
    int cl;                 /* channels-last weights: K x mask x Cg */
    int C, S, R1, sy;       /* merged: the original's C, mask width and height, row stride */
};
__host__ __device__ __forceinline__ uint16_t hs_wsrc(const uint16_t *wk, int l, const hs_wmap &m) {
    if (!m.merged) return hg_wsrc(wk, l, m.Cg, m.CKP, m.R, 1, m.cl); /* cuda.conv.igemm-half's map */
    const int t = l / m.CKP, j = l - t * m.CKP;
    const int SC = m.S * m.C;
    if (j >= m.sy * SC) return 0;
    const int dy = j / SC, rem = j - dy * SC, sc = rem / m.C, c = rem - sc * m.C;
    const int r = t * m.sy + dy;
    if (r >= m.R1) return 0;
    return wk[m.cl ? ((int64_t)r * m.S + sc) * m.C + c : ((int64_t)c * m.R1 + r) * m.S + sc];
}
/* the merged form's repack on the device: row k of blockIdx.y's rows */
__global__ void k_hs_wpack(const uint16_t *__restrict__ w, uint16_t *__restrict__ wp, int64_t K,
                           int KRp, int64_t row, hs_wmap m) {
    const int l = blockIdx.x * blockDim.x + threadIdx.x;
    if (l >= KRp) return;
    for (int64_t k = blockIdx.y; k < K; k += gridDim.y) wp[k * KRp + l] = hs_wsrc(w + k * row, l, m);
}

/* Does the layer run merged (k_hs_merge)? 2D or 1D, one group, dilation
 * 1, a stride past 1 or C not a multiple of 8, sy S C <= 64 channels (one
 * chunk); *pm: the stride-1 layer the kernel then runs */
static int hs_merged(const tc__problem *p, tc__problem *pm) {
    if (p->op != TC_OP_CONV || p->in[0] != 1 || p->msk[0] != 1 || p->G != 1 || p->dil[1] != 1 ||
        p->dil[2] != 1)
        return 0;
    /* k_hs_merge reads input plane 0 for output plane 0 only: a depth-1
     * input padded along depth (output planes of zeros) is not merged */
    if (p->pad_lo[0] != 0 || p->out[0] != 1) return 0;
    if (p->stride[1] == 1 && p->stride[2] == 1 && p->C % 8 == 0) return 0;
    if (p->stride[1] * p->msk[2] * p->C > HG_BK) return 0;
    const int64_t sy = p->stride[1], r1 = (p->msk[1] + sy - 1) / sy;
    if (pm) {
        *pm = *p;
        pm->C = (sy * p->msk[2] * p->C + 7) / 8 * 8;
        pm->in[1] = p->out[1] + r1 - 1;
        pm->in[2] = p->out[2];
        pm->msk[1] = r1;
        pm->msk[2] = 1;
        for (int i = 0; i < TC__NSP; i++) {
            pm->stride[i] = pm->dil[i] = 1;
            pm->pad_lo[i] = pm->pad_hi[i] = 0;
        }
    }
    return 1;
}

/* The first checks of the shifted and stream solvers' applicability: why
 * not, or NULL */
static const char *hs_common_why(const tc__problem *p) {
    if (p->op != TC_OP_CONV) return "convolution layers only";
    if (p->dtype != TC_FLOAT16 && p->dtype != TC_BFLOAT16) return "float16 and bfloat16 only";
    if (p->layout != TC_LAYOUT_CHANNELS_LAST) return "channels-last layers only (NLC, NHWC, NDHWC)";
    if (p->mode != TC_MODE_CONSTANT || p->cval != 0) return "zero padding only";
    if (p->out[0] < 1 || p->out[1] < 1 || p->out[2] < 1) return "an empty output";
    return NULL;
}

/* The packed weights' map of layer p run as r (p itself, its merged form
 * or its rows of a GEMM; merged: r is the merged form): 64-channel chunks,
 * CKP = r's C/G rounded up to 64 */
static hs_wmap hs_map_run(const tc__problem *p, const tc__problem *r, int merged) {
    hs_wmap m;
    memset(&m, 0, sizeof m);
    m.merged = merged;
    m.Cg = (int)(p->C / p->G);
    m.CKP = (int)((r->C / r->G + HG_BK - 1) / HG_BK * HG_BK);
    m.R = (int)(p->msk[0] * p->msk[1] * p->msk[2]);
    m.C = (int)p->C;
    m.S = (int)p->msk[2];
    m.R1 = (int)p->msk[1];
    m.sy = (int)p->stride[1];
    m.cl = p->wlayout == TC_LAYOUT_CHANNELS_LAST;
    return m;
}
/* bytes of the merged input xm (0: p does not run merged) */
static size_t hs_merge_bytes(const tc__problem *p) {
    tc__problem pm;
    return hs_merged(p, &pm) ? (size_t)tc__x_count(&pm) * sizeof(uint16_t) : 0;
}
/* bytes of the packed weights of layer p run as r: K x (r's taps x CKP) */
static size_t hs_wpack_bytes_run(const tc__problem *p, const tc__problem *r) {
    const int64_t Cg = r->C / r->G, CKP = (Cg + HG_BK - 1) / HG_BK * HG_BK;
    return (size_t)p->K * (size_t)(r->msk[0] * r->msk[1] * r->msk[2]) * (size_t)CKP * sizeof(uint16_t);
}

/* The plan's packed weights on the host (wpack): K rows of r's taps x CKP
 * elements, from w in torch's layout through map m */
static void hs_wpack_host(const tc__problem *p, const tc__problem *r, const hs_wmap &m, const void *w,
                          void *dst) {
    const int KRp = (int)(r->msk[0] * r->msk[1] * r->msk[2]) * m.CKP;
    const int64_t row = (int64_t)m.Cg * m.R;
    const uint16_t *ws = (const uint16_t *)w;
    uint16_t *wp = (uint16_t *)dst;
    for (int64_t k = 0; k < p->K; k++)
        for (int l = 0; l < KRp; l++) wp[k * KRp + l] = hs_wsrc(ws + k * row, l, m);
}
/* a launch's device workspace: the repacked weights, the merged input or an
 * aligned copy of x, a bias staged from host memory */
static size_t hs_ws_bytes(const tc__problem *p, size_t wpack_bytes) {
    const size_t xb = hs_merged(p, NULL) ? hs_merge_bytes(p) : (size_t)tc__x_count(p) * sizeof(uint16_t);
    return wpack_bytes + xb + (p->has_bias ? (size_t)p->K * sizeof(uint16_t) : 0);
}

/* A launch's operands on stream s, layer p0 run as p (merged or not):
 * *wp the packed weights (wheld, the plan's held copy, or packed here into
 * *wpk: hg_wpack_dev over R taps, k_hs_wpack for a merged layer), *dx the
 * input the copy engine reads (b->x; the merged xm written into *xa by
 * k_hs_merge; or x copied to a 16-byte aligned *xa). The caller frees *wpk
 * and *xa on s. */
static tc_status hs_prepare(const tc__cu_bufs *b, const tc__problem *p0, const tc__problem *p, int merged,
                            int Cg, int CKP, int R, const void *wheld, void **wpk, void **xa,
                            const void **wp, const void **dx, cudaStream_t s) {
    *wp = wheld;
    *dx = b->x;
    /* C/G a multiple of 64 and channels-last weights or one tap: the packed
     * rows are the caller's own, which the copy engine reads in place (a
     * 16-byte aligned address; the row pitch R x C/G x 2 bytes a multiple of
     * 128) */
    const int cl = p0->wlayout == TC_LAYOUT_CHANNELS_LAST;
    if (!*wp && !merged && (cl || R == 1) && Cg == CKP && !((uintptr_t)b->w & 15)) *wp = b->w;
    tc_status st = *wp ? TC_OK : tc__cu_alloc(wpk, hs_wpack_bytes_run(p0, p), s);
    if (st == TC_OK && !*wp) {
        *wp = *wpk;
        if (!merged) {
            st = hg_wpack_dev(b->w, *wpk, p->K, Cg, CKP, R, 1, R * CKP, cl, s);
        } else {
            const int krp = R * CKP;
            const dim3 grid((unsigned)tc__cu_div_up(krp, 256), (unsigned)(p->K < 65535 ? p->K : 65535));
            k_hs_wpack<<<grid, 256, 0, s>>>((const uint16_t *)b->w, (uint16_t *)*wpk, p->K, krp,
                                            p0->C * p0->msk[1] * p0->msk[2], hs_map_run(p0, p, 1));
            const cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) st = tc__cu_fail(e, "launch k_hs_wpack", __FILE__, __LINE__);
        }
    }
    if (st == TC_OK && merged) { /* the merged input (xm is 256-byte aligned) */
        st = tc__cu_alloc(xa, hs_merge_bytes(p0), s);
        if (st == TC_OK) {
            const int64_t rows = p->N * p->in[1];
            /* a thread maps its columns once for up to ceil(rows / 512) rows */
            const dim3 grid((unsigned)tc__cu_div_up(p->in[2] * (p->C / 8), 256),
                            (unsigned)(rows < 512 ? rows : 512));
            hs_mgeom mg;
            mg.Hm = (int)p->in[1]; mg.Wm = (int)p->in[2]; mg.Cm = (int)p->C;
            mg.H = (int)p0->in[1]; mg.W = (int)p0->in[2]; mg.C = (int)p0->C;
            mg.S = (int)p0->msk[2]; mg.sy = (int)p0->stride[1]; mg.sx = (int)p0->stride[2];
            mg.py = (int)p0->pad_lo[1]; mg.px = (int)p0->pad_lo[2];
            k_hs_merge<<<grid, 256, 0, s>>>((const uint16_t *)b->x, (uint16_t *)*xa, rows, mg);
            const cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) st = tc__cu_fail(e, "launch k_hs_merge", __FILE__, __LINE__);
            *dx = *xa;
        }
    }
    /* the copy engine reads from 16-byte-aligned addresses: an input that is
     * not (a device view at an odd offset) is copied to one that is */
    if (st == TC_OK && !merged && ((uintptr_t)*dx & 15)) {
        const size_t xb = (size_t)tc__x_count(p) * sizeof(uint16_t);
        st = tc__cu_alloc(xa, xb, s);
        if (st == TC_OK) {
            cudaError_t e = cudaMemcpyAsync(*xa, *dx, xb, cudaMemcpyDeviceToDevice, s);
            if (e != cudaSuccess) st = tc__cu_fail(e, "cudaMemcpyAsync (aligned input)", __FILE__, __LINE__);
            *dx = *xa;
        }
    }
    return st;
}

} // namespace

#endif
