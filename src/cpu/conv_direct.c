/* conv_direct.c - blocked direct convolution (solver "cpu.conv.direct";
 * the kind of kernel oneDNN's jit/brgemm direct conv is).
 *
 * Inside each call the user's NCHW input is converted to a channel-blocked
 * layout, per (image, group, block of CB input channels) an array
 * [E0][E1][E2'][CB] over the EXTENDED input (E = (out-1)*stride +
 * (taps-1)*dil + 1 per axis, the padding halo filled by the padding mode:
 * zeros, reflect, replicate and circular all cost one copy). Along the last
 * axis each row is split by stride phase (positions ph, ph+s, ph+2s, ...
 * stored together), so consecutive outputs read consecutive blocked
 * positions for any stride. CB is 16 (8 or 4 when a group has fewer input
 * channels: conv1's 3 channels are not padded to 16).
 *
 * The weights are packed once per plan (wpack) as
 * [group][K/16][C/CB][taps][CB][16], zeros past K/groups or C/groups.
 *
 * A register tile (conv_direct_avx512.c) is UH output rows x UW positions
 * x NKB blocks of 16 output channels (14x1x2 for wide rows, 7x2x2 for 7-wide
 * ones): the whole reduction (channel blocks x taps x channels) runs with
 * the accumulators in zmm registers, each step one input scalar broadcast
 * against NKB weight vectors; the tile is stored once, transposed, to the
 * NCHW output, bias included. No FLOP is spent on padding: partial channel
 * blocks loop over their real channels, partial output-channel blocks only
 * waste lanes of the last block.
 *
 * Two ways to run the conversion. Fused (layers without taps along the
 * first axis: 1D, 2D): a work item (image, group, plane, chunk of output
 * rows, chunk of columns, split of the output-channel pairs) converts just
 * the rows and columns it reads into a per-thread buffer of ~192 KiB and
 * runs every pair of its split over it while it is in L2 (splits only when
 * there are fewer than two items per thread: 512 @7). Whole (3D): the
 * input is converted once, split over (image, group, block, plane), then
 * the tiles run over (image, group, pair, output row group, column chunk),
 * the pair outermost when the group's weights do not fit in L2, innermost
 * otherwise. Either way batch 1 keeps every core busy, and each output is
 * computed by one tile in one order: results do not depend on the thread
 * count. Few input channels (Cg <= 4: conv1, depthwise; AVX-512, fused,
 * a row's taps fitting the buffer) take a third way (dc_fused_pos): lanes
 * over 16 consecutive output positions instead of output channels, one
 * plane a channel split by stride phase in the buffer, tiles of 6 vectors
 * x 4 output channels stored straight to NCHW rows; same products, same
 * order, bitwise the same results. float32; AVX-512 ("cpu.conv.direct") or, with 8-lane blocks and
 * 6x2 tiles, AVX2 ("cpu.conv.direct-avx2", conv_direct_avx2.c). Measurements:
 * docs/solvers/cpu-conv-direct.md. */
#include "core/internal.h"

#include <stdio.h>
#include <string.h>

#include "conv_direct.h"

typedef struct dc_geom {
    int64_t VL, maxuw; /* output channels per block (16 AVX-512, 8 AVX2), tile width */
    dc_kernel_fn (*kern)(int cbi, int nkb, int uh, int uw);
    void (*row)(float *, int64_t, int64_t, const float *, int64_t, const int32_t *, int64_t,
                float);
    int64_t Cg, Kg, CB, ncb, nkb, nkg, cw_last, taps;
    int cbi;
    int64_t E[3], Lph, E2p;
    int64_t rowE, plane0, cbp, imgp; /* floats: extended row, plane, block, image-group */
    int64_t UW, UH, ntw, nrg, ncc, tpc;
    int kg_inner;
    int64_t items, convitems;
    size_t xbytes, tapbytes, mapbytes, biasbytes, total;
    /* fused conversion (no taps along axis 0): per work item, the rows and
     * columns it reads converted into a per-thread buffer in L2 */
    int fused;
    int64_t R, nrc, fcc, ftpc, nks, kps; /* rows, row chunks, column chunks,
                                           tiles per chunk, pair splits */
    int64_t Lphb, E2pb, rowEb, nrowsB, bcbp;
    size_t bufbytes, bmapbytes;
    /* few input channels (Cg <= 4, fused, AVX-512): lanes over positions
     * (dp_targs); items (image, group, plane, row chunk, split of the
     * 4-channel output groups) over whole rows */
    int pos;
    int64_t pnv, pfull, plv, plh;   /* vectors a row, 6-vector tiles a row, the rest, its rows */
    int64_t pLph, pE2p, pcst, pbrow; /* phase length, row positions, channel plane, buffer row */
    int64_t pR, pnrc, pnrowsB, pnkq, pnks, pkps, pitems;
    size_t pbuf, pbmap;
} dc_geom;

#define DC_BUF_BYTES (192 * 1024) /* per-thread converted input */

static size_t dc_rup(size_t v) { return (v + 63) & ~(size_t)63; }

/* 0 when the problem's sizes overflow */
static int dc_geometry(const tc__problem *p, int threads, int vl, dc_geom *g) {
    memset(g, 0, sizeof *g);
    g->VL = vl;
    g->maxuw = vl == 16 ? DC_MAXUW : DC_MAXUW8;
    g->kern = vl == 16 ? tc__dc_kernel_avx512 : tc__dc_kernel_avx2;
    g->row = vl == 16 ? tc__dc_row_avx512 : tc__dc_row_avx2;
    g->Cg = p->C / p->G;
    g->Kg = p->K / p->G;
    g->CB = g->Cg > 8 && vl == 16 ? 16 : g->Cg > 4 ? 8 : 4;
    g->cbi = g->CB == 16 ? 0 : g->CB == 8 ? 1 : 2;
    g->ncb = tc__cdiv64(g->Cg, g->CB);
    g->cw_last = g->Cg - (g->ncb - 1) * g->CB;
    g->nkb = tc__cdiv64(g->Kg, vl);
    g->nkg = tc__cdiv64(g->nkb, 2);
    g->taps = p->msk[0] * p->msk[1] * p->msk[2];
    for (int a = 0; a < 3; a++) {
        int64_t e, span;
        if (!tc__mul_ok(p->out[a] - 1, p->stride[a], &e) ||
            !tc__mul_ok(p->msk[a] - 1, p->dil[a], &span) || !tc__add_ok(e, span + 1, &e))
            return 0;
        g->E[a] = e;
    }
    const int64_t s2 = p->stride[2];
    g->Lph = tc__cdiv64(g->E[2], s2);
    g->E2p = g->Lph * s2;
    int64_t t;
    if (!tc__mul_ok(g->E2p, g->CB, &g->rowE) || !tc__mul_ok(g->rowE, g->E[1], &g->plane0) ||
        !tc__mul_ok(g->plane0, g->E[0], &g->cbp) || !tc__mul_ok(g->cbp, g->ncb, &g->imgp) ||
        !tc__mul_ok(g->imgp, p->N * p->G, &t) || !tc__mul_ok(t, 4, &t) ||
        t > ((int64_t)1 << 40))
        return 0;
    /* tile: up to 14 positions along the row, balanced over the row's tiles;
     * rows of 7 or fewer go two at a time */
    const int64_t W = p->out[2];
    if (2 * W > g->maxuw || p->out[1] < 2) {
        g->ntw = tc__cdiv64(W, g->maxuw);
        g->UW = tc__cdiv64(W, g->ntw);
        g->UH = 1;
    } else {
        g->UW = W;
        g->UH = 2;
    }
    g->ntw = tc__cdiv64(W, g->UW);
    g->nrg = tc__cdiv64(p->out[1], g->UH);
    int64_t rest = p->N * p->G * g->nkg * p->out[0] * g->nrg;
    g->ncc = 1;
    if (rest < 4 * (int64_t)threads) {
        g->ncc = tc__cdiv64(4 * (int64_t)threads, rest);
        if (g->ncc > g->ntw) g->ncc = g->ntw;
    }
    g->tpc = tc__cdiv64(g->ntw, g->ncc);
    g->ncc = tc__cdiv64(g->ntw, g->tpc);
    g->items = rest * g->ncc;
    /* weights of one group in L2 (about half of 1 MiB): pairs innermost */
    g->kg_inner = (double)g->nkb * vl * g->Cg * g->taps * 4 <= 512.0 * 1024;
    g->convitems = p->N * p->G * g->ncb * g->E[0];
    g->xbytes = dc_rup((size_t)(t + (2 * DC_MAXUW + 16) * 16 * 4));
    g->tapbytes = dc_rup((size_t)g->taps * sizeof(int64_t));
    g->mapbytes = dc_rup((size_t)g->E2p * sizeof(int32_t));
    g->biasbytes = dc_rup((size_t)(p->G * g->nkb * vl + 16) * sizeof(float));
    g->fused = p->msk[0] == 1;
    if (g->fused) {
        const int64_t s1 = p->stride[1], span1 = (p->msk[1] - 1) * p->dil[1];
        const int64_t span2 = (p->msk[2] - 1) * p->dil[2];
        const int64_t posb = g->ncb * g->CB * 4; /* bytes per blocked position */
        int64_t rows_min = (g->UH - 1) * s1 + span1 + 1;
        /* columns: the whole row when one row group fits, else chunks */
        g->ftpc = g->ntw;
        if (g->E2p * posb * rows_min > DC_BUF_BYTES) {
            int64_t fit = DC_BUF_BYTES / (posb * rows_min) / s2; /* outputs */
            g->ftpc = fit / g->UW > 1 ? fit / g->UW : 1;
        }
        g->fcc = tc__cdiv64(g->ntw, g->ftpc);
        g->ftpc = tc__cdiv64(g->ntw, g->fcc);
        g->Lphb = tc__cdiv64((g->ftpc * g->UW - 1) * s2 + span2 + 1, s2);
        g->E2pb = g->Lphb * s2;
        g->rowEb = g->E2pb * g->CB;
        /* rows: as many row groups as fit, balanced over the chunks */
        int64_t nbmax = DC_BUF_BYTES / (g->ncb * g->rowEb * 4);
        int64_t rmax = nbmax > span1 ? (nbmax - 1 - span1) / s1 + 1 : 1;
        rmax = rmax / g->UH * g->UH;
        if (rmax < g->UH) rmax = g->UH;
        g->nrc = tc__cdiv64(p->out[1], rmax);
        g->R = tc__cdiv64(tc__cdiv64(p->out[1], g->nrc), g->UH) * g->UH;
        g->nrc = tc__cdiv64(p->out[1], g->R);
        /* few items (conv1 at 2 threads: 5 row chunks, 3 + 2): cut the
         * columns finer, rows kept, until there are 4 per thread; the
         * threads claim items one at a time (dc_fused) */
        int64_t base = p->N * p->G * p->out[0] * g->nrc;
        if (base * g->fcc < 4 * (int64_t)threads && g->fcc < g->ntw) {
            int64_t want = tc__cdiv64(4 * (int64_t)threads, base);
            if (want > g->ntw) want = g->ntw;
            if (want > g->fcc) {
                g->ftpc = tc__cdiv64(g->ntw, want);
                g->fcc = tc__cdiv64(g->ntw, g->ftpc);
                g->Lphb = tc__cdiv64((g->ftpc * g->UW - 1) * s2 + span2 + 1, s2);
                g->E2pb = g->Lphb * s2;
                g->rowEb = g->E2pb * g->CB;
            }
        }
        g->nrowsB = (g->R - 1) * s1 + span1 + 1;
        g->bcbp = g->nrowsB * g->rowEb;
        int64_t items0 = p->N * p->G * p->out[0] * g->nrc * g->fcc;
        g->nks = 1;
        if (items0 < 2 * (int64_t)threads) {
            g->nks = tc__cdiv64(2 * (int64_t)threads, items0);
            if (g->nks > g->nkg) g->nks = g->nkg;
        }
        g->kps = tc__cdiv64(g->nkg, g->nks);
        g->nks = tc__cdiv64(g->nkg, g->kps);
        g->items = items0 * g->nks;
        g->bufbytes = dc_rup((size_t)(g->ncb * g->bcbp) * 4 + 64);
        g->bmapbytes = dc_rup((size_t)g->E2pb * sizeof(int32_t));
        g->xbytes = (size_t)threads * (g->bufbytes + g->bmapbytes);
        g->mapbytes = 0;
    }
    /* whole rows: only where one output row's input rows fit the buffer
     * (longer rows, huge 1D signals, keep the column chunks) */
    g->pos = vl == 16 && g->fused && g->Cg <= 4 &&
             (double)g->Cg * (g->E2p + 32) * 4 * ((p->msk[1] - 1) * p->dil[1] + 1) <= DC_BUF_BYTES;
    if (g->pos) {
        const int64_t s1 = p->stride[1], span1 = (p->msk[1] - 1) * p->dil[1];
        const int64_t W = p->out[2];
        g->pnv = tc__cdiv64(W, 16);
        g->pfull = g->pnv / DP_MAXV;
        g->plv = g->pnv - g->pfull * DP_MAXV;
        g->plh = g->plv ? DP_MAXV / g->plv : 1;
        g->pLph = g->Lph;
        g->pE2p = g->E2p;
        g->pcst = (g->pE2p + 15) / 16 * 16 + 16;
        g->pbrow = g->Cg * g->pcst;
        int64_t nbmax = DC_BUF_BYTES / (g->pbrow * 4);
        int64_t rmax = nbmax > span1 + 1 ? (nbmax - 1 - span1) / s1 + 1 : 1;
        int64_t base = p->N * p->G * p->out[0];
        g->pnrc = tc__cdiv64(p->out[1], rmax);
        /* at least 4 items a thread (conv1 at 2 threads: 8 chunks of 14
         * rows), claimed one at a time */
        if (base * g->pnrc < 4 * (int64_t)threads) {
            g->pnrc = tc__cdiv64(4 * (int64_t)threads, base);
            if (g->pnrc > p->out[1]) g->pnrc = p->out[1];
        }
        g->pR = tc__cdiv64(p->out[1], g->pnrc);
        g->pnrc = tc__cdiv64(p->out[1], g->pR);
        g->pnrowsB = (g->pR - 1) * s1 + span1 + 1;
        g->pnkq = tc__cdiv64(g->Kg, 4);
        int64_t items0 = base * g->pnrc;
        g->pnks = 1;
        if (items0 < 2 * (int64_t)threads) {
            g->pnks = tc__cdiv64(2 * (int64_t)threads, items0);
            if (g->pnks > g->pnkq) g->pnks = g->pnkq;
        }
        g->pkps = tc__cdiv64(g->pnkq, g->pnks);
        g->pnks = tc__cdiv64(g->pnkq, g->pkps);
        g->pitems = items0 * g->pnks;
        g->pbuf = dc_rup((size_t)(g->pnrowsB * g->pbrow) * 4 + 64);
        g->pbmap = dc_rup((size_t)g->pE2p * sizeof(int32_t)) +
                   dc_rup((size_t)tc__cdiv64(g->pE2p, 16) * sizeof(dp_chunk));
        g->xbytes = (size_t)threads * (g->pbuf + g->pbmap);
    }
    g->total = g->xbytes + g->tapbytes + g->mapbytes + g->biasbytes;
    return 1;
}

static int dc_available(void) { return (tc__cpu_detect() & TC__CPU_AVX512) != 0; }
static int dc8_available(void) {
    return (tc__cpu_detect() & (TC__CPU_AVX2 | TC__CPU_AVX512)) != 0;
}

static int dc_applicable_vl(const tc__problem *p, const tc__env *env, char *why, size_t n,
                            int vl) {
    const char *r = NULL;
    dc_geom g;
    if (p->op != TC_OP_CONV) r = "convolution layers only";
    else if (p->dtype != TC_FLOAT32) r = "float32 only";
    else if (vl == 16 && !dc_available()) r = "needs AVX-512";
    else if (vl == 8 && !dc8_available()) r = "needs AVX2+FMA";
    else if (p->stride[0] > INT32_MAX || p->stride[1] > INT32_MAX || p->stride[2] > INT32_MAX ||
             p->dil[0] > INT32_MAX || p->dil[1] > INT32_MAX || p->dil[2] > INT32_MAX)
        r = "stride or dilation above 2^31"; /* offsets are stride x row bytes */
    else if (!dc_geometry(p, env->threads, vl, &g)) r = "blocked input size overflows";
    else if (p->in[2] > INT32_MAX || g.E2p > INT32_MAX) r = "rows longer than 2^31";
    if (r) {
        if (why) snprintf(why, n, "%s", r);
        return 0;
    }
    return 1;
}

static size_t dc_workspace_vl(const tc__problem *p, const tc__env *env, int vl) {
    dc_geom g;
    return dc_geometry(p, env->threads, vl, &g) ? g.total : 0;
}

static size_t dc_wpack_size_vl(const tc__problem *p, const tc__env *env, int vl) {
    dc_geom g;
    if (!dc_geometry(p, env->threads, vl, &g)) return 0;
    if (g.pos) return (size_t)(p->G * g.pnkq * g.taps * g.Cg * 4) * sizeof(float);
    return (size_t)(p->G * g.nkb * g.ncb * g.taps * g.CB * g.VL) * sizeof(float);
}

static tc_status dc_wpack_vl(const tc__problem *p, const tc__env *env, const void *w,
                             void *dst, int vl) {
    dc_geom g;
    if (!dc_geometry(p, env->threads, vl, &g))
        return tc__error(TC_ERR_UNSUPPORTED, "cpu.conv.direct: sizes overflow");
    const float *src = w;
    float *d = dst;
    if (g.pos) { /* [group][K/4][taps][Cg][4] */
        for (int64_t gi = 0; gi < p->G; gi++)
            for (int64_t kq = 0; kq < g.pnkq; kq++)
                for (int64_t t = 0; t < g.taps; t++)
                    for (int64_t c = 0; c < g.Cg; c++)
                        for (int64_t l = 0; l < 4; l++, d++) {
                            int64_t k = kq * 4 + l;
                            *d = k < g.Kg ? src[((gi * g.Kg + k) * g.Cg + c) * g.taps + t] : 0.0f;
                        }
        return TC_OK;
    }
    for (int64_t gi = 0; gi < p->G; gi++)
        for (int64_t kb = 0; kb < g.nkb; kb++)
            for (int64_t cb = 0; cb < g.ncb; cb++)
                for (int64_t t = 0; t < g.taps; t++)
                    for (int64_t c = 0; c < g.CB; c++)
                        for (int64_t l = 0; l < g.VL; l++, d++) {
                            int64_t k = kb * g.VL + l, cc = cb * g.CB + c;
                            *d = k < g.Kg && cc < g.Cg
                                     ? src[((gi * g.Kg + k) * g.Cg + cc) * g.taps + t]
                                     : 0.0f;
                        }
    return TC_OK;
}

typedef struct dc_job {
    const tc__args *a;
    dc_geom g;
    float *xb;
    const int64_t *tapoff;
    const int32_t *map;
    const float *biasp;
    int64_t next; /* fused path: the next unclaimed item */
} dc_job;

/* one extended plane e0 of block (n, g, cb) */
static void dc_convert(void *arg, int64_t begin, int64_t end, int tid) {
    const dc_job *j = arg;
    const tc__problem *p = j->a->p;
    const dc_geom *g = &j->g;
    const float *x = j->a->x;
    const float cval = (float)p->cval;
    const int64_t pitch = p->in[0] * p->in[1] * p->in[2];
    for (int64_t it = begin; it < end; it++) {
        int64_t e0 = it % g->E[0], t = it / g->E[0];
        int64_t cb = t % g->ncb, ng = t / g->ncb; /* ng = n*G + gi */
        int64_t n = ng / p->G, gi = ng % p->G;
        int64_t cw = cb == g->ncb - 1 ? g->cw_last : g->CB;
        int64_t b0 = tc__boundary_index(e0 - p->pad_lo[0], p->in[0], p->mode);
        const float *xc = x + (n * p->C + gi * g->Cg + cb * g->CB) * pitch;
        float *dplane = j->xb + ng * g->imgp + cb * g->cbp + e0 * g->plane0;
        for (int64_t e1 = 0; e1 < g->E[1]; e1++) {
            int64_t b1 = tc__boundary_index(e1 - p->pad_lo[1], p->in[1], p->mode);
            float *d = dplane + e1 * g->rowE;
            if (b0 < 0 || b1 < 0) {
                for (int64_t q = 0; q < g->E2p; q++)
                    for (int64_t c = 0; c < cw; c++) d[q * g->CB + c] = cval;
                continue;
            }
            g->row(d, g->CB, cw, xc + (b0 * p->in[1] + b1) * p->in[2], pitch,
                              j->map, g->E2p, cval);
        }
    }
}

static void dc_tiles(void *arg, int64_t begin, int64_t end, int tid) {
    const dc_job *j = arg;
    const tc__args *a = j->a;
    const tc__problem *p = a->p;
    const dc_geom *g = &j->g;
    const int64_t P = p->out[0] * p->out[1] * p->out[2];
    const int64_t wkb = g->ncb * g->taps * g->CB * g->VL;
    for (int64_t it = begin; it < end; it++) {
        int64_t t = it, cc = t % g->ncc, kg, rg, o0;
        t /= g->ncc;
        if (g->kg_inner) {
            kg = t % g->nkg; t /= g->nkg;
            rg = t % g->nrg; t /= g->nrg;
            o0 = t % p->out[0]; t /= p->out[0];
        } else {
            rg = t % g->nrg; t /= g->nrg;
            o0 = t % p->out[0]; t /= p->out[0];
            kg = t % g->nkg; t /= g->nkg;
        }
        int64_t gi = t % p->G, n = t / p->G;
        int64_t kb0 = 2 * kg, nkbh = g->nkb - kb0 < 2 ? g->nkb - kb0 : 2;
        int64_t o1 = rg * g->UH, uh = p->out[1] - o1 < g->UH ? p->out[1] - o1 : g->UH;
        dc_targs ta;
        ta.rowp = p->stride[1] * g->rowE;
        ta.cbp = g->cbp;
        ta.tapoff = j->tapoff;
        ta.ntaps = g->taps;
        ta.ncb = g->ncb;
        ta.cw_last = g->cw_last;
        ta.w = (const float *)a->wpack + (gi * g->nkb + kb0) * wkb;
        ta.wkb = wkb;
        ta.bias = p->has_bias ? j->biasp + (gi * g->nkb + kb0) * g->VL : NULL;
        ta.ypl = P;
        ta.yrow = p->out[2];
        ta.nk = g->Kg - kb0 * g->VL < nkbh * g->VL ? g->Kg - kb0 * g->VL : nkbh * g->VL;
        const float *xrow = j->xb + (n * p->G + gi) * g->imgp +
                            o0 * p->stride[0] * g->plane0 + o1 * p->stride[1] * g->rowE;
        float *yrow = (float *)a->y + (n * p->K + gi * g->Kg + kb0 * g->VL) * P +
                      (o0 * p->out[1] + o1) * p->out[2];
        int64_t t0 = cc * g->tpc, t1 = t0 + g->tpc < g->ntw ? t0 + g->tpc : g->ntw;
        for (int64_t tw = t0; tw < t1; tw++) {
            int64_t o2 = tw * g->UW;
            int64_t uw = p->out[2] - o2 < g->UW ? p->out[2] - o2 : g->UW;
            dc_kernel_fn k = g->kern(g->cbi, (int)nkbh, (int)uh, (int)uw);
            ta.x = xrow + o2 * g->CB;
            ta.y = yrow + o2;
            k(&ta);
        }
    }
}

/* A work item's coordinates, innermost first: output-channel split ks (of
 * nks), column chunk cc (of ncc; 1: none), row chunk rc (of nrc), output
 * plane o0, group gi, image n */
typedef struct dc_item {
    int64_t ks, cc, rc, o0, gi, n;
} dc_item;
static dc_item dc_item_of(int64_t it, const tc__problem *p, int64_t nks, int64_t ncc, int64_t nrc) {
    dc_item r;
    r.ks = it % nks;
    it /= nks;
    r.cc = it % ncc;
    it /= ncc;
    r.rc = it % nrc;
    it /= nrc;
    r.o0 = it % p->out[0];
    it /= p->out[0];
    r.gi = it % p->G;
    r.n = it / p->G;
    return r;
}

/* map[ph L + i]: the input column of extended position e0 + i s + ph (s
 * the last axis' stride, ph its phase), by the boundary mode; -1 past the
 * extended width E2 */
static void dc_phase_map(int32_t *map, const tc__problem *p, int64_t E2, int64_t e0, int64_t L) {
    const int64_t s2 = p->stride[2];
    for (int64_t ph = 0; ph < s2; ph++)
        for (int64_t i = 0; i < L; i++) {
            int64_t e2 = e0 + i * s2 + ph;
            map[ph * L + i] =
                e2 < E2 ? (int32_t)tc__boundary_index(e2 - p->pad_lo[2], p->in[2], p->mode) : -1;
        }
}

/* fused path: item = (image, group, plane, row chunk, column chunk, split
 * of the output-channel pairs); its input rows and columns are converted
 * into this thread's buffer, then every pair of its split runs over them */
static void dc_fused(void *arg, int64_t begin, int64_t end, int tid) {
    (void)begin;
    (void)end;
    dc_job *j = arg;
    const tc__args *a = j->a;
    const tc__problem *p = a->p;
    const dc_geom *g = &j->g;
    const float *x = a->x;
    const float cval = (float)p->cval;
    const int64_t P = p->out[0] * p->out[1] * p->out[2];
    const int64_t wkb = g->ncb * g->taps * g->CB * g->VL;
    const int64_t pitch = p->in[0] * p->in[1] * p->in[2];
    const int64_t s1 = p->stride[1], s2 = p->stride[2];
    float *buf = (float *)((char *)j->xb + (size_t)tid * (g->bufbytes + g->bmapbytes));
    int32_t *map = (int32_t *)((char *)buf + g->bufbytes);
    for (;;) { /* items claimed one at a time: a late or shared thread takes fewer */
        int64_t it = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (it >= g->items) break;
        const dc_item c = dc_item_of(it, p, g->nks, g->fcc, g->nrc);
        const int64_t ks = c.ks, cc = c.cc, rc = c.rc, o0 = c.o0, gi = c.gi, n = c.n;
        int64_t o1a = rc * g->R, rows = p->out[1] - o1a < g->R ? p->out[1] - o1a : g->R;
        int64_t tw0 = cc * g->ftpc, tw1 = tw0 + g->ftpc < g->ntw ? tw0 + g->ftpc : g->ntw;
        int64_t o2a = tw0 * g->UW;
        /* convert: positions of the chunk by stride phase, rows it reads */
        dc_phase_map(map, p, g->E[2], o2a * s2, g->Lphb);
        int64_t b0 = tc__boundary_index(o0 * p->stride[0] - p->pad_lo[0], p->in[0], p->mode);
        int64_t nr = (rows - 1) * s1 + (p->msk[1] - 1) * p->dil[1] + 1;
        /* the input rows the item reads: one run per channel (the rows of
         * all channels are too many streams for the hardware prefetcher:
         * the next block's are prefetched while this one is converted) */
        int64_t r1lo = o1a * s1 - p->pad_lo[1], r1hi = r1lo + nr - 1;
        r1lo = r1lo < 0 ? 0 : r1lo;
        r1hi = r1hi >= p->in[1] ? p->in[1] - 1 : r1hi;
        int64_t runb = r1hi >= r1lo && b0 >= 0 ? (r1hi - r1lo + 1) * p->in[2] * 4 : 0;
        int64_t pc0 = o2a * s2 - p->pad_lo[2];
        int64_t pc1 = pc0 + (g->ftpc * g->UW - 1) * s2 + (p->msk[2] - 1) * p->dil[2];
        pc0 = pc0 < 0 ? 0 : pc0;
        pc1 = pc1 >= p->in[2] ? p->in[2] - 1 : pc1;
        for (int64_t cb = 0; cb < g->ncb; cb++) {
            int64_t cw = cb == g->ncb - 1 ? g->cw_last : g->CB;
            const float *xc = x + (n * p->C + gi * g->Cg + cb * g->CB) * pitch;
            if (cb + 1 < g->ncb && runb) {
                int64_t cw1 = cb + 1 == g->ncb - 1 ? g->cw_last : g->CB;
                for (int64_t c = 0; c < cw1; c++) {
                    const char *q = (const char *)(xc + (g->CB + c) * pitch +
                                                   (b0 * p->in[1] + r1lo) * p->in[2]);
                    for (int64_t o = 0; o < runb; o += 64) __builtin_prefetch(q + o, 0, 2);
                }
            }
            for (int64_t rr = 0; rr < nr; rr++) {
                int64_t b1 = tc__boundary_index(o1a * s1 + rr - p->pad_lo[1], p->in[1], p->mode);
                /* one channel block (C <= 16, conv1): the rows two ahead,
                 * the columns the chunk reads (its rows are otherwise
                 * waited for, 8% of conv1's samples) */
                if (g->ncb == 1 && rr + 2 < nr && b0 >= 0 && pc1 >= pc0) {
                    int64_t bp = tc__boundary_index(o1a * s1 + rr + 2 - p->pad_lo[1], p->in[1],
                                                    p->mode);
                    if (bp >= 0)
                        for (int64_t c = 0; c < cw; c++) {
                            const char *q = (const char *)(xc + c * pitch +
                                                           (b0 * p->in[1] + bp) * p->in[2] + pc0);
                            for (int64_t o = 0; o < (pc1 - pc0 + 1) * 4; o += 64)
                                __builtin_prefetch(q + o, 0, 3);
                        }
                }
                float *d = buf + cb * g->bcbp + rr * g->rowEb;
                if (b0 < 0 || b1 < 0) {
                    for (int64_t q = 0; q < g->E2pb; q++)
                        for (int64_t c = 0; c < cw; c++) d[q * g->CB + c] = cval;
                    continue;
                }
                g->row(d, g->CB, cw, xc + (b0 * p->in[1] + b1) * p->in[2], pitch,
                                  map, g->E2pb, cval);
            }
        }
        /* tiles */
        dc_targs ta;
        ta.rowp = s1 * g->rowEb;
        ta.cbp = g->bcbp;
        ta.tapoff = j->tapoff;
        ta.ntaps = g->taps;
        ta.ncb = g->ncb;
        ta.cw_last = g->cw_last;
        ta.wkb = wkb;
        ta.ypl = P;
        ta.yrow = p->out[2];
        int64_t kg0 = ks * g->kps, kg1 = kg0 + g->kps < g->nkg ? kg0 + g->kps : g->nkg;
        for (int64_t kg = kg0; kg < kg1; kg++) {
            int64_t kb0 = 2 * kg, nkbh = g->nkb - kb0 < 2 ? g->nkb - kb0 : 2;
            ta.w = (const float *)a->wpack + (gi * g->nkb + kb0) * wkb;
            ta.bias = p->has_bias ? j->biasp + (gi * g->nkb + kb0) * g->VL : NULL;
            ta.nk = g->Kg - kb0 * g->VL < nkbh * g->VL ? g->Kg - kb0 * g->VL : nkbh * g->VL;
            float *yk = (float *)a->y + (n * p->K + gi * g->Kg + kb0 * g->VL) * P +
                        o0 * p->out[1] * p->out[2];
            for (int64_t r = 0; r < rows; r += g->UH) {
                int64_t uh = rows - r < g->UH ? rows - r : g->UH;
                const float *xr = buf + r * s1 * g->rowEb;
                float *yr = yk + (o1a + r) * p->out[2];
                for (int64_t tw = tw0; tw < tw1; tw++) {
                    int64_t o2 = tw * g->UW;
                    int64_t uw = p->out[2] - o2 < g->UW ? p->out[2] - o2 : g->UW;
                    dc_kernel_fn k = g->kern(g->cbi, (int)nkbh, (int)uh, (int)uw);
                    ta.x = xr + (o2 - o2a) * g->CB;
                    ta.y = yr + o2;
                    k(&ta);
                }
            }
        }
    }
}

/* few input channels: item = (image, group, plane, row chunk, split of the
 * 4-channel output groups); its input rows, one plane a channel split by
 * stride phase, are converted into this thread's buffer, then every output
 * group of its split runs over them, rows inner (the group's 4 output
 * planes written in order) */
static void dc_fused_pos(void *arg, int64_t begin, int64_t end, int tid) {
    (void)begin;
    (void)end;
    dc_job *j = arg;
    const tc__args *a = j->a;
    const tc__problem *p = a->p;
    const dc_geom *g = &j->g;
    const float *x = a->x;
    const float cval = (float)p->cval;
    const int64_t P = p->out[0] * p->out[1] * p->out[2], W = p->out[2];
    const int64_t wkq = g->taps * g->Cg * 4;
    const int64_t pitch = p->in[0] * p->in[1] * p->in[2];
    const int64_t s1 = p->stride[1];
    float *buf = (float *)((char *)j->xb + (size_t)tid * (g->pbuf + g->pbmap));
    int32_t *map = (int32_t *)((char *)buf + g->pbuf);
    dc_phase_map(map, p, g->E[2], 0, g->pLph);
    dp_chunk *dsc = (dp_chunk *)((char *)map + dc_rup((size_t)g->pE2p * sizeof(int32_t)));
    tc__dp_desc_avx512(dsc, map, g->pE2p);
    const uint16_t mrow = (uint16_t)(W % 16 ? (1u << (W % 16)) - 1 : 0xffff);
    for (;;) { /* items claimed one at a time: a late or shared thread takes fewer */
        int64_t it = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (it >= g->pitems) break;
        const dc_item c = dc_item_of(it, p, g->pnks, 1, g->pnrc);
        const int64_t ks = c.ks, rc = c.rc, o0 = c.o0, gi = c.gi, n = c.n;
        int64_t o1a = rc * g->pR, rows = p->out[1] - o1a < g->pR ? p->out[1] - o1a : g->pR;
        int64_t b0 = tc__boundary_index(o0 * p->stride[0] - p->pad_lo[0], p->in[0], p->mode);
        int64_t nr = (rows - 1) * s1 + (p->msk[1] - 1) * p->dil[1] + 1;
        const float *xg = x + (n * p->C + gi * g->Cg) * pitch;
        for (int64_t rr = 0; rr < nr; rr++) {
            int64_t b1 = tc__boundary_index(o1a * s1 + rr - p->pad_lo[1], p->in[1], p->mode);
            if (rr + 2 < nr && b0 >= 0) { /* the rows two ahead */
                int64_t bp =
                    tc__boundary_index(o1a * s1 + rr + 2 - p->pad_lo[1], p->in[1], p->mode);
                if (bp >= 0)
                    for (int64_t c = 0; c < g->Cg; c++) {
                        const char *q = (const char *)(xg + c * pitch + (b0 * p->in[1] + bp) * p->in[2]);
                        for (int64_t o = 0; o < p->in[2] * 4; o += 64) __builtin_prefetch(q + o, 0, 3);
                    }
            }
            for (int64_t c = 0; c < g->Cg; c++) {
                float *d = buf + rr * g->pbrow + c * g->pcst;
                if (b0 < 0 || b1 < 0) {
                    for (int64_t q = 0; q < g->pcst; q++) d[q] = q < g->pE2p ? cval : 0.0f;
                    continue;
                }
                tc__dp_row_avx512(d, xg + c * pitch + (b0 * p->in[1] + b1) * p->in[2], map,
                                  dsc, g->pE2p, cval);
            }
        }
        dp_targs ta;
        ta.rowp = s1 * g->pbrow;
        ta.cst = g->pcst;
        ta.tapoff = j->tapoff;
        ta.ntaps = g->taps;
        ta.cw = g->Cg;
        ta.ypl = P;
        ta.yrow = W;
        int64_t kq0 = ks * g->pkps, kq1 = kq0 + g->pkps < g->pnkq ? kq0 + g->pkps : g->pnkq;
        for (int64_t kq = kq0; kq < kq1; kq++) {
            ta.w = (const float *)a->wpack + (gi * g->pnkq + kq) * wkq;
            ta.bias = p->has_bias ? j->biasp + gi * g->nkb * 16 + kq * 4 : NULL;
            ta.nk = g->Kg - kq * 4 < 4 ? g->Kg - kq * 4 : 4;
            float *yk = (float *)a->y + (n * p->K + gi * g->Kg + kq * 4) * P +
                        (o0 * p->out[1] + o1a) * W;
            /* rows in groups of plh: each row's 6-vector tiles, then the
             * rest of the group's rows as one UH-row tile */
            for (int64_t r = 0; r < rows; r += g->plh) {
                int64_t uh = rows - r < g->plh ? rows - r : g->plh;
                for (int64_t h = 0; h < uh; h++)
                    for (int64_t f = 0; f < g->pfull; f++) {
                        ta.x = buf + (r + h) * s1 * g->pbrow + f * DP_MAXV * 16;
                        ta.y = yk + (r + h) * W + f * DP_MAXV * 16;
                        ta.mlast = g->plv == 0 && f == g->pfull - 1 ? mrow : 0xffff;
                        tc__dp_kernel_avx512(DP_MAXV, 1)(&ta);
                    }
                if (g->plv) {
                    ta.x = buf + r * s1 * g->pbrow + g->pfull * DP_MAXV * 16;
                    ta.y = yk + r * W + g->pfull * DP_MAXV * 16;
                    ta.mlast = mrow;
                    tc__dp_kernel_avx512((int)g->plv, (int)uh)(&ta);
                }
            }
        }
    }
}

static tc_status dc_execute_vl(const tc__args *a, int vl) {
    const tc__problem *p = a->p;
    dc_job j;
    j.a = a;
    if (!dc_geometry(p, a->threads, vl, &j.g))
        return tc__error(TC_ERR_UNSUPPORTED, "cpu.conv.direct: sizes overflow");
    if (!a->wpack) return tc__error(TC_ERR_INTERNAL, "cpu.conv.direct: weights not packed");
    const dc_geom *g = &j.g;
    char *ws = a->ws;
    j.xb = (float *)ws;
    int64_t *tapoff = (int64_t *)(ws + g->xbytes);
    int32_t *map = (int32_t *)(ws + g->xbytes + g->tapbytes);
    float *biasp = (float *)(ws + g->xbytes + g->tapbytes + g->mapbytes);
    j.tapoff = tapoff;
    j.map = map;
    j.biasp = biasp;
    /* tap offsets in the blocked, phase-split input (or buffer) */
    const int64_t s2 = p->stride[2];
    const int64_t rowE = g->fused ? g->rowEb : g->rowE, Lph = g->fused ? g->Lphb : g->Lph;
    for (int64_t r0 = 0, t = 0; r0 < p->msk[0]; r0++)
        for (int64_t r1 = 0; r1 < p->msk[1]; r1++)
            for (int64_t r2 = 0; r2 < p->msk[2]; r2++, t++) {
                int64_t e2 = r2 * p->dil[2];
                if (g->pos) {
                    tapoff[t] = r1 * p->dil[1] * g->pbrow + (e2 % s2) * g->pLph + e2 / s2;
                    continue;
                }
                tapoff[t] = r0 * p->dil[0] * g->plane0 + r1 * p->dil[1] * rowE +
                            ((e2 % s2) * Lph + e2 / s2) * g->CB;
            }
    /* source index of every blocked position along the last axis */
    if (!g->fused)
        for (int64_t ph = 0; ph < s2; ph++)
            for (int64_t i = 0; i < g->Lph; i++) {
                int64_t e2 = i * s2 + ph;
                map[ph * g->Lph + i] =
                    e2 < g->E[2]
                        ? (int32_t)tc__boundary_index(e2 - p->pad_lo[2], p->in[2], p->mode)
                        : -1;
            }
    if (p->has_bias) {
        memset(biasp, 0, (size_t)(p->G * g->nkb * g->VL + 16) * sizeof(float));
        for (int64_t gi = 0; gi < p->G; gi++)
            for (int64_t k = 0; k < g->Kg; k++)
                biasp[gi * g->nkb * g->VL + k] = ((const float *)a->bias)[gi * g->Kg + k];
    }
    if (g->pos) {
        j.next = 0;
        tc__parallel_for(a->threads, g->pitems < a->threads ? g->pitems : a->threads,
                         dc_fused_pos, &j);
        return TC_OK;
    }
    if (g->fused) {
        j.next = 0;
        tc__parallel_for(a->threads, g->items < a->threads ? g->items : a->threads, dc_fused,
                         &j);
        return TC_OK;
    }
    /* the slack after the blocked input: finite values */
    int64_t used = p->N * p->G * g->imgp;
    memset(j.xb + used, 0, g->xbytes - (size_t)used * sizeof(float));
    tc__parallel_for(a->threads, g->convitems, dc_convert, &j);
    tc__parallel_for(a->threads, g->items, dc_tiles, &j);
    return TC_OK;
}

/* Seconds: the FMAs at ~85% of peak on full tiles (fewer accumulators than
 * 16, short reductions and partial output-channel blocks waste issue slots
 * or lanes), plus the layout conversion (~0.3 ns per converted element and
 * thread: 16x16 transposes fed by loads from 16 channel planes), plus the
 * input and output through memory (and the blocked copy written and read
 * back when it is not fused). */
static double dc_estimate_vl(const tc__problem *p, const tc__env *env, int vl) {
    dc_geom g;
    if (!dc_geometry(p, env->threads, vl, &g)) return 1e30;
    double fill_k = (double)g.Kg / (double)(g.nkb * g.VL);
    double acc = (double)(g.UW * g.UH * (g.nkb >= 2 ? 2 : 1));
    double tile = acc >= (vl == 16 ? 16 : 8) ? 1.0 : acc / (vl == 16 ? 16 : 8);
    double red = (double)g.Cg * g.taps;
    double kfac = red / (red + 24.0); /* per tile: init, transposes, stores */
    double eff = 0.85 * fill_k * tile * kfac;
    if (vl == 8 && (tc__cpu_detect() & TC__CPU_AVX512)) eff *= 0.5; /* half-width vectors */
    double par = g.items >= env->threads ? 1.0 : (double)g.items / env->threads;
    double t_fma = tc__problem_flops(p) / (tc__peak_flops(env) * eff * par);
    double conv, bytes = tc__problem_bytes(p);
    if (g.fused) {
        conv = (double)g.items * g.ncb * g.CB * g.nrowsB * g.E2pb;
    } else {
        conv = (double)p->N * p->G * g.imgp;
        bytes += 2.0 * 4.0 * conv;
    }
    double t_conv = conv * 0.3e-9 / (env->threads > 0 ? env->threads : 1);
    return t_fma + t_conv + bytes / tc__peak_bandwidth(env);
}

#define DC_WRAP(PFX, VL)                                                                \
    static int PFX##_applicable(const tc__problem *p, const tc__env *env, char *why,    \
                                size_t n) {                                             \
        return dc_applicable_vl(p, env, why, n, VL);                                    \
    }                                                                                   \
    static size_t PFX##_workspace(const tc__problem *p, const tc__env *env) {           \
        return dc_workspace_vl(p, env, VL);                                             \
    }                                                                                   \
    static size_t PFX##_wpack_size(const tc__problem *p, const tc__env *env) {          \
        return dc_wpack_size_vl(p, env, VL);                                            \
    }                                                                                   \
    static tc_status PFX##_wpack(const tc__problem *p, const tc__env *env,              \
                                 const void *state, const void *w, void *dst) {         \
        return dc_wpack_vl(p, env, w, dst, VL);                                         \
    }                                                                                   \
    static tc_status PFX##_execute(const tc__args *a) { return dc_execute_vl(a, VL); }  \
    static double PFX##_estimate(const tc__problem *p, const tc__env *env) {            \
        return dc_estimate_vl(p, env, VL);                                              \
    }
DC_WRAP(dc, 16)
DC_WRAP(dc8, 8)

const tc__solver tc__solver_cpu_conv_direct = {
    .name = "cpu.conv.direct",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_CONV,
    .summary = "blocked direct convolution: input converted in the call to 16-channel blocks with the padding halo filled, weights packed once, 14x32 register tiles of broadcast FMAs; every stride, dilation, group and padding mode (float32, AVX-512).",
    .available = dc_available,
    .applicable = dc_applicable,
    .estimate = dc_estimate,
    .workspace = dc_workspace,
    .execute = dc_execute,
    .wpack_size = dc_wpack_size,
    .wpack = dc_wpack,
};

const tc__solver tc__solver_cpu_conv_direct8 = {
    .name = "cpu.conv.direct-avx2",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_CONV,
    .summary = "cpu.conv.direct for AVX2: 8-channel blocks, 6x2 register tiles of 8-lane broadcast FMAs (float32).",
    .available = dc8_available,
    .applicable = dc8_applicable,
    .estimate = dc8_estimate,
    .workspace = dc8_workspace,
    .execute = dc8_execute,
    .wpack_size = dc8_wpack_size,
    .wpack = dc8_wpack,
};
