/* conv_winograd.c - Winograd convolution layers: F(4x4, 3x3) (solver
 * "cpu.conv.winograd-f4") and F(2x2, 3x3) ("cpu.conv.winograd-f2"), one driver
 * for both (m = 4 or 2). 3x3, stride 1, dilation 1 in the last two axes;
 * 2D, or 3D with any depth kernel, stride and dilation (the depth taps are
 * summed inside the GEMM: its depth is KD * C/groups, each input slice
 * transformed once per block and output-depth walk); every padding mode,
 * groups, bias; float32 on AVX-512 (not applicable elsewhere: the planner
 * then takes another solver).
 *
 * Lavin's minimal filtering with (m+2)x(m+2) input tiles at stride m: U =
 * G g G^T (from each 3x3 kernel, computed once per plan in double), V =
 * B^T d B per tile and channel, and each m x m output tile Y = A^T [sum_c
 * U_kc (.) V_c] A. For each of the (m+2)^2 positions xi the channel sum is
 * a GEMM M_xi (K x tiles) = U_xi (K x C) V_xi (C x tiles): F(4x4,3x3) does
 * 36 multiplies per 16 outputs (4x fewer than direct), F(2x2,3x3) 16 per 4
 * (2.25x) with 10-20x less rounding error (docs/semantics.md). The
 * matrices are in conv_winograd_avx512.c (F(4,3): points 0, +-1, +-2,
 * infinity).
 *
 * Fused per block of nb tiles (32, or 16 for layers with few tiles): the
 * input transform writes V_xi for all channels of the block in the
 * micro-kernels' B-panel layout, then for each chunk of output channels
 * the GEMMs run against U_xi (packed once per plan in 14- or 8-row panels)
 * into a small M buffer and the output transform (bias included) writes
 * the tiles to NCHW, so M stays in L2. The transforms take 16 consecutive
 * tiles per vector even across tile rows (a 56-wide layer has 14 tiles of
 * 4 per row). Work units (group, block, output-depth chunk, A-panel group)
 * are claimed one at a time by the threads (wg4_geometry). */
#include "conv_winograd.h"

#include <stdio.h>
#include <string.h>

#define WG4_MR 14 /* A panel rows: 14 (the packed GEMM's kernels) or 8 */
#define WG4_KCH 4 /* A panels per output-transform chunk (56 channels) */
#define WG4_MAXKD 32 /* depth taps (3D) */
#define WG_KCB 64    /* raw weights: reduction steps of U transformed at a time */
#define WG_WT_NS 0.08 /* raw weights: ns per value of U transformed in the call */

typedef struct wg4_geom {
    int m, xi;       /* output tile m x m (4 or 2), (m + 2)^2 positions */
    int64_t Cg, Kg, npan, TH, TW, T;
    int64_t mr;      /* rows per A panel: 14, or 8 where 14 fills the last panel badly */
    int64_t KD, kc;  /* depth taps (1 in 2D); GEMM depth KD * Cg */
    int64_t OD;      /* output depth (1 in 2D) */
    int64_t slots;   /* transformed input slices kept per block: 1 in 2D, KD + 1 in 3D */
    int64_t nb;      /* block width: 32 (14x32 kernel) or 16 (28x16 kernel) */
    int64_t nblk;    /* blocks of nb tiles per group (the last may be shorter) */
    int64_t odch;    /* output-depth chunks (3D, when the blocks are too few) */
    int64_t units;   /* work units: (group, block, depth chunk, A-panel group) */
    int64_t rcols;   /* GEMM columns per group: full blocks + the tail's */
    int64_t kgroups, ppg;
    int64_t vstride, mstride; /* floats between xi planes of V and M */
    int raw;         /* weights kept raw (9 a kernel), transformed in the call */
    int64_t ustride; /* raw: floats between xi planes of a panel's U chunk */
    int pfa;         /* stored U past L2: the kernels prefetch it (TC__WG_PFA) */
    size_t vbytes, mbytes, ubytes, per_thread;
} wg4_geom;

static size_t wg4_rup(size_t v) { return (v + 63) & ~(size_t)63; }

/* Work units are (group, block of tiles, output-depth chunk, group of A
 * panels), claimed one at a time by the threads (a thread that starts late,
 * or shares its CPU, takes fewer). Tiles are those of one depth slice, (n,
 * ty, tx), all images, in blocks of nb = 32 (16 where there are fewer
 * 32-tile blocks than threads: the 16-wide kernels load a B vector per 16
 * or 28 broadcast FMAs against two per 16 or 28 in the 32-wide ones, and
 * measured up to 2x slower on the 3D layer); a last block of <= 16 tiles
 * runs on the 16-wide kernels. Each block walks its output depths in order, keeping the
 * transformed input slices that the next depth reads again. Output depths
 * are chunked where there are fewer than two blocks a thread, K split
 * where there are fewer units than threads (few tiles: the block's input
 * transform is then repeated per A-panel group). */
static void wg4_geometry(const tc__problem *p, int threads, int m, int raw, wg4_geom *g) {
    g->m = m;
    g->raw = raw;
    g->xi = (m + 2) * (m + 2);
    g->Cg = p->C / p->G;
    g->Kg = p->K / p->G;
    /* 8-row panels where they waste fewer rows than 14-row ones (K = 32
     * computes 32 rows instead of 42, K = 64 64 instead of 70); their
     * kernels measured as fast as the 14-row ones within 3-7% (one core,
     * 64 @56 and 128 @28 forced either way) */
    g->mr = (double)(tc__cdiv64(g->Kg, 8) * 8) / 0.97 < (double)(tc__cdiv64(g->Kg, 14) * 14)
                ? 8 : WG4_MR;
    g->npan = tc__cdiv64(g->Kg, g->mr);
    g->KD = p->msk[0];
    g->kc = g->KD * g->Cg;
    g->OD = p->out[0];
    g->TH = tc__cdiv64(p->out[1], m);
    g->TW = tc__cdiv64(p->out[2], m);
    g->T = p->N * g->TH * g->TW;
    g->slots = g->KD == 1 ? 1 : g->KD + 1;
    g->nb = p->G * tc__cdiv64(g->T, 32) >= (int64_t)threads ? 32 : 16;
    g->nblk = tc__cdiv64(g->T, g->nb);
    int64_t tail = g->T - (g->nblk - 1) * g->nb;
    g->rcols = (g->nblk - 1) * g->nb + (tail <= 16 ? 16 : g->nb);
    g->kgroups = 1;
    int64_t items = p->G * g->nblk;
    g->odch = 1;
    if (items < 2 * (int64_t)threads && g->OD > 1) {
        g->odch = tc__cdiv64(2 * (int64_t)threads, items);
        if (g->odch > g->OD) g->odch = g->OD;
        items *= g->odch;
    }
    if (items < threads) {
        g->kgroups = tc__cdiv64(threads, items);
        if (g->kgroups > g->npan) g->kgroups = g->npan;
    }
    g->ppg = tc__cdiv64(g->npan, g->kgroups);
    if (g->nb == 16) g->ppg += g->ppg & 1; /* the 28x16 kernel takes panels in pairs */
    g->kgroups = tc__cdiv64(g->npan, g->ppg);
    g->units = items * g->kgroups;
    g->vstride = g->slots * g->Cg * g->nb + 16;
    g->mstride = WG4_KCH * WG4_MR * g->nb + 16;
    g->vbytes = wg4_rup((size_t)(g->xi * g->vstride) * sizeof(float));
    g->mbytes = wg4_rup((size_t)(g->xi * g->mstride) * sizeof(float));
    /* raw: a chunk of WG_KCB reduction steps of U for two panels (the
     * 16-wide kernels take panels in pairs) */
    g->ustride = WG_KCB * g->mr + 16; /* a multiple of 16: aligned stores */
    g->ubytes = raw ? wg4_rup((size_t)(2 * g->xi * g->ustride) * sizeof(float)) : 0;
    g->per_thread = g->vbytes + g->mbytes + g->ubytes + 256;
    /* a unit's share of the stored U past L2 streams from L3 or memory:
     * the micro-kernels prefetch it 64 steps ahead (512 @7 F(2,3), two
     * threads, U from memory: 0.84 -> 0.65-0.72 ms; no change where it
     * fits, so it is left off there) */
    g->pfa = !raw && (double)g->xi * (double)(g->ppg * g->mr) * (double)g->kc * 4.0 > 768e3;
}

static int wg4_available(void) { return (tc__cpu_detect() & TC__CPU_AVX512) != 0; }

static int wgx_applicable(const tc__problem *p, const tc__env *env, char *why, size_t n, int m, int raw) {
    const char *r = NULL;
    if (p->op != TC_OP_CONV) r = "convolution layers only";
    else if (p->dtype != TC_FLOAT32) r = "float32 only";
    else if (p->msk[1] != 3 || p->msk[2] != 3)
        r = "3x3 kernels in the last two axes only (2D 3x3, 3D kd x 3 x 3)";
    else if (p->msk[0] > WG4_MAXKD)
        r = "depth kernels up to 32 taps only";
    else if (p->stride[1] != 1 || p->stride[2] != 1 || p->dil[1] != 1 || p->dil[2] != 1)
        r = "stride 1 and dilation 1 only";
    else if (!(tc__cpu_detect() & TC__CPU_AVX512)) r = "needs AVX-512 (not built for AVX2)";
    if (r) {
        if (why) snprintf(why, n, "%s", r);
        return 0;
    }
    wg4_geom g;
    wg4_geometry(p, env->threads, m, raw, &g);
    if (g.kc > (1 << 20) || g.Kg > (1 << 20)) {
        if (why) snprintf(why, n, "channel counts too large for the transform buffers");
        return 0;
    }
    return 1;
}

static size_t wgx_workspace(const tc__problem *p, const tc__env *env, int m, int raw) {
    wg4_geom g;
    wg4_geometry(p, env->threads, m, raw, &g);
    return (size_t)env->threads * g.per_thread;
}

static size_t wgx_wpack_size(const tc__problem *p, const tc__env *env, int m, int raw) {
    wg4_geom g;
    wg4_geometry(p, env->threads, m, raw, &g);
    return (size_t)(p->G * (raw ? 9 : g.xi) * g.npan * g.kc * g.mr) * sizeof(float);
}

/* U = G g G^T per (k, c, depth tap kd) in double, packed
 * [g][xi][panel][kd * Cg + c][14]: one GEMM of depth KD * Cg per position.
 * raw: the 3x3 kernels as they are (9 floats a kernel instead of 36 or
 * 16), per panel and chunk of WG_KCB reduction steps tap-major over the
 * chunk's [step][row] stream, so that the call transforms 16 kernels a
 * vector and stores U in the panel layout with whole-vector stores. */
static tc_status wgx_wpack(const tc__problem *p, const tc__env *env, const void *wv, void *dst,
                           int m, int raw) {
    wg4_geom g;
    wg4_geometry(p, env->threads, m, raw, &g);
    const float *w = wv;
    float *U = dst;
    if (raw) { /* [g][panel][chunk of WG_KCB steps][tap][step][mr], rows past Kg zero */
        for (int64_t gi = 0; gi < p->G; gi++)
            for (int64_t q = 0; q < g.npan; q++)
                for (int64_t l0 = 0; l0 < g.kc; l0 += WG_KCB) {
                    int64_t nl = g.kc - l0 < WG_KCB ? g.kc - l0 : WG_KCB;
                    for (int t = 0; t < 9; t++)
                        for (int64_t l = l0; l < l0 + nl; l++)
                            for (int64_t i = 0; i < g.mr; i++) {
                                int64_t k = q * g.mr + i, kd = l / g.Cg, c = l % g.Cg;
                                *U++ = k < g.Kg ? w[(((gi * g.Kg + k) * g.Cg + c) * g.KD + kd) * 9 + t]
                                                : 0.0f;
                            }
                }
        return TC_OK;
    }
    const double G2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    const double G4[6][3] = {{1.0 / 4, 0, 0},
                            {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                            {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                            {1.0 / 24, 1.0 / 12, 1.0 / 6},
                            {1.0 / 24, -1.0 / 12, 1.0 / 6},
                            {0, 0, 1}};
    const int A = m + 2;
    const double(*G)[3] = m == 2 ? G2 : G4;
    for (int64_t gi = 0; gi < p->G; gi++)
        for (int64_t q = 0; q < g.npan; q++)
            for (int64_t l = 0; l < g.kc; l++)
                for (int i = 0; i < g.mr; i++) {
                    int64_t k = q * g.mr + i, kd = l / g.Cg, c = l % g.Cg;
                    double u[6][6] = {{0}};
                    if (k < g.Kg) {
                        const float *gk = w + (((gi * g.Kg + k) * g.Cg + c) * g.KD + kd) * 9;
                        double t[6][3];
                        for (int a = 0; a < A; a++)
                            for (int b = 0; b < 3; b++)
                                t[a][b] = G[a][0] * gk[0 * 3 + b] + G[a][1] * gk[1 * 3 + b] +
                                          G[a][2] * gk[2 * 3 + b];
                        for (int a = 0; a < A; a++)
                            for (int b = 0; b < A; b++)
                                u[a][b] = t[a][0] * G[b][0] + t[a][1] * G[b][1] + t[a][2] * G[b][2];
                    }
                    for (int xi = 0; xi < g.xi; xi++)
                        U[((((gi * g.xi + xi) * g.npan + q) * g.kc + l) * g.mr) + i] =
                            (float)u[xi / A][xi % A];
                }
    return TC_OK;
}

typedef struct wg4_job {
    const tc__args *a;
    wg4_geom g;
    int64_t next; /* the next unclaimed work unit */
} wg4_job;

/* The block's tiles in segments of 16 lanes, each cut into runs of one
 * tile row (tile coordinates kept in the run's fields until filled in). */
typedef struct wg4_seg {
    int nruns, nlanes;
    int64_t col;
    int64_t n[16], ty[16], tx0[16];
    tc__wg4_run run[16];
} wg4_seg;

static int wg4_segments(const wg4_geom *g, int64_t t0, int64_t t1, wg4_seg *s) {
    int ns = 0;
    for (int64_t sb = t0; sb < t1; sb += 16, ns++) {
        int64_t se = sb + 16 < t1 ? sb + 16 : t1;
        wg4_seg *sg = &s[ns];
        sg->nruns = 0;
        sg->nlanes = (int)(se - sb);
        sg->col = sb - t0;
        for (int64_t t = sb; t < se;) {
            int64_t tx = t % g->TW, r = t / g->TW;
            int64_t len = g->TW - tx;
            if (t + len > se) len = se - t;
            int k = sg->nruns++;
            sg->n[k] = r / g->TH;
            sg->ty[k] = r % g->TH;
            sg->tx0[k] = tx;
            sg->run[k].lane = (int)(t - sb);
            sg->run[k].len = (int)len;
            t += len;
        }
    }
    return ns;
}

/* The input transform of depth slice z (-1: outside a constant-mode volume,
 * all cval) for the block's segments into V slot `slot`. */
static void wg4_slice(const wg4_job *j, float *V, int64_t gi, wg4_seg *seg, int ns, int64_t nb,
                      int64_t z, int64_t slot) {
    const tc__problem *p = j->a->p;
    const wg4_geom *g = &j->g;
    const int64_t D = p->in[0], H = p->in[1], W = p->in[2];
    for (int s = 0; s < ns; s++) {
        wg4_seg *sg = &seg[s];
        for (int k = 0; k < sg->nruns; k++) {
            tc__wg4_run *u = &sg->run[k];
            u->plane = z < 0 ? NULL
                             : (const float *)j->a->x +
                                   (((sg->n[k] * p->C + gi * g->Cg) * D + z) * H) * W;
            u->y0 = g->m * sg->ty[k] - p->pad_lo[1];
            u->x0 = g->m * sg->tx0[k] - p->pad_lo[2];
        }
        /* columns nr..nb of V are left as they are: GEMM columns are
         * independent and the output transform stores only a segment's lanes */
        (g->m == 4 ? tc__wg4_in_avx512 : tc__wg2_in_avx512)(
            sg->run, sg->nruns, sg->nlanes, H, W, (int)p->mode, (float)p->cval, g->Cg, D * H * W,
            V + slot * g->Cg * nb + sg->col, nb, g->vstride);
    }
}

/* raw weights: the 36 (16) GEMMs of A panels [qc, qe) against the block's
 * V, their U transformed from the raw kernels WG_KCB reduction steps at a
 * time into Ub (for one panel, or a pair on the 16-wide kernels) and
 * accumulated into M over the chunks. */
static void wg_gemm_raw(const wg4_geom *g, const float *W9, const float *Vw, float *M, float *Ub,
                        int64_t gi, int64_t nb, int nr, int64_t qc, int64_t qe) {
    const int64_t PR = g->mr;
    const int64_t step = nb == 32 ? 1 : 2;
    for (int64_t q = qc; q < qe; q += step) {
        int64_t rows = g->Kg - q * PR;
        int np = step == 2 && q + 1 < qe && rows > PR ? 2 : 1;
        int mr = (int)(rows < np * PR ? rows : np * PR);
        for (int64_t l0 = 0; l0 < g->kc; l0 += WG_KCB) {
            int64_t nl = g->kc - l0 < WG_KCB ? g->kc - l0 : WG_KCB;
            for (int pp = 0; pp < np; pp++)
                tc__wg_wt_avx512(g->m, W9 + ((gi * g->npan + q + pp) * g->kc + l0) * 9 * PR, nl * PR,
                                 Ub + pp * g->xi * g->ustride, g->ustride);
            /* the raw kernels of the next transform (the next chunk, or the
             * next panels' first), prefetched a slice per GEMM below: their
             * loads otherwise stall the transform (perf: ~70% of its
             * samples on them, the weights in L3) */
            int64_t nq = q, nl0 = l0 + nl;
            if (nl0 >= g->kc) {
                nq = q + np;
                nl0 = 0;
            }
            const float *pf[2];
            int64_t pfn = nq < qe ? 9 * PR * (g->kc - nl0 < WG_KCB ? g->kc - nl0 : WG_KCB) : 0;
            for (int pp = 0; pp < 2; pp++)
                pf[pp] = W9 + ((gi * g->npan + nq + (nq + pp < qe ? pp : 0)) * g->kc + nl0) * 9 * PR;
            int acc = l0 > 0;
            for (int xi = 0; xi < g->xi; xi++) {
                for (int64_t o = pfn * xi / g->xi; o < pfn * (xi + 1) / g->xi; o += 16) {
                    __builtin_prefetch(pf[0] + o, 0, 3);
                    __builtin_prefetch(pf[1] + o, 0, 3);
                }
                const float *a0 = Ub + xi * g->ustride;
                const float *a1 = np == 2 ? a0 + g->xi * g->ustride : a0;
                const float *Vx = Vw + xi * g->vstride + l0 * nb;
                float *Mx = M + xi * g->mstride + (q - qc) * PR * nb;
                if (nb == 32) {
                    if (PR == WG4_MR)
                        tc__f32_gemm_ukernel_14x32__avx512(nl, a0, Vx, Mx, 32, 1.0f,
                                                           acc ? 1.0f : 0.0f, mr, nr);
                    else
                        tc__wg4_ukernel_8x32_avx512(nl, a0, Vx, Mx, 32, mr, acc ? TC__WG_ACC : 0);
                } else if (PR == WG4_MR) {
                    tc__wg4_ukernel_28x16_avx512(nl, a0, a1, Vx, Mx, 16, mr, acc ? TC__WG_ACC : 0);
                } else {
                    tc__wg4_ukernel_16x16_avx512(nl, a0, a1, Vx, Mx, 16, mr, acc ? TC__WG_ACC : 0);
                }
            }
        }
    }
}

/* One block: tiles [t0, t1) of group gi, A panels [q0, q1), nb wide, output
 * depths [od0, od1). V holds `slots` transformed input slices (tag: the
 * slice, -2 none); depth od reads KD consecutive slots from w, slot w + kd
 * the slice of tap kd (od * stride - pad + kd * dilation, mapped by the
 * mode). Stepping od by one shifts the window when the taps' slices shift
 * (depth stride == dilation), so each slice is transformed once per block
 * away from the depth edges; the window's slots are moved to the front when
 * it reaches the end. */
static void wg4_block(const wg4_job *j, float *V, float *M, float *Ub, int64_t gi, int64_t t0,
                      int64_t t1, int64_t nb, int64_t q0, int64_t q1, int64_t od0, int64_t od1) {
    const tc__args *a = j->a;
    const tc__problem *p = a->p;
    const wg4_geom *g = &j->g;
    const int64_t D = p->in[0], OD = p->out[0], OH = p->out[1], OW = p->out[2];
    const int64_t KD = g->KD, slab = g->Cg * nb;
    const float *U = (const float *)a->wpack;
    const int wg_pfa = g->pfa ? TC__WG_PFA : 0;
    wg4_seg seg[2];
    int nr = (int)(t1 - t0);
    int ns = wg4_segments(g, t0, t1, seg);
    int64_t tag[WG4_MAXKD + 1], z[WG4_MAXKD];
    for (int64_t s = 0; s < g->slots; s++) tag[s] = -2;
    int64_t w = 0;
    for (int64_t od = od0; od < od1; od++) {
        for (int64_t kd = 0; kd < KD; kd++)
            z[kd] = tc__boundary_index(od * p->stride[0] - p->pad_lo[0] + kd * p->dil[0], D, p->mode);
        int shift = KD > 1;
        for (int64_t kd = 0; shift && kd + 1 < KD; kd++)
            if (tag[w + 1 + kd] != z[kd]) shift = 0;
        if (!shift) {
            w = 0;
        } else if (w + KD < g->slots) {
            w++;
        } else { /* move the KD - 1 kept slots to the front */
            for (int xi = 0; xi < g->xi; xi++)
                memmove(V + xi * g->vstride, V + xi * g->vstride + (w + 1) * slab,
                        (size_t)((KD - 1) * slab) * sizeof(float));
            for (int64_t kd = 0; kd + 1 < KD; kd++) tag[kd] = tag[w + 1 + kd];
            tag[KD - 1] = -2;
            w = 0;
        }
        for (int64_t kd = 0; kd < KD; kd++)
            if (tag[w + kd] != z[kd]) {
                wg4_slice(j, V, gi, seg, ns, nb, z[kd], w + kd);
                tag[w + kd] = z[kd];
            }
        const float *Vw = V + w * slab;
        /* per chunk of A panels: 36 GEMMs M[xi][k][col] = U[xi] V[xi], then
         * the output transform of those channels */
        for (int64_t qc = q0; qc < q1; qc += WG4_KCH) {
            int64_t qe = qc + WG4_KCH < q1 ? qc + WG4_KCH : q1;
            for (int xi = 0; xi < (g->raw ? 0 : g->xi); xi++) {
                const int64_t PR = g->mr;
                const float *Ux = U + ((gi * g->xi + xi) * g->npan) * g->kc * PR;
                const float *Vx = Vw + xi * g->vstride;
                float *Mx = M + xi * g->mstride;
                if (nb == 32) {
                    for (int64_t q = qc; q < qe; q++) {
                        int mr = (int)(g->Kg - q * PR < PR ? g->Kg - q * PR : PR);
                        if (PR == WG4_MR)
                            tc__f32_gemm_ukernel_14x32__avx512(g->kc, Ux + q * g->kc * PR, Vx,
                                                               Mx + (q - qc) * PR * 32, 32, 1.0f,
                                                               0.0f, mr, nr);
                        else
                            tc__wg4_ukernel_8x32_avx512(g->kc, Ux + q * g->kc * PR, Vx,
                                                        Mx + (q - qc) * PR * 32, 32, mr, wg_pfa);
                    }
                } else {
                    for (int64_t q = qc; q < qe; q += 2) {
                        int64_t rows = g->Kg - q * PR;
                        int mr = (int)(rows < 2 * PR ? rows : 2 * PR);
                        if (q + 1 >= qe && mr > PR) mr = (int)PR;
                        const float *a0 = Ux + q * g->kc * PR;
                        const float *a1 = mr > PR ? a0 + g->kc * PR : a0;
                        if (PR == WG4_MR)
                            tc__wg4_ukernel_28x16_avx512(g->kc, a0, a1, Vx,
                                                         Mx + (q - qc) * PR * 16, 16, mr, wg_pfa);
                        else
                            tc__wg4_ukernel_16x16_avx512(g->kc, a0, a1, Vx,
                                                         Mx + (q - qc) * PR * 16, 16, mr, wg_pfa);
                    }
                }
            }
            if (g->raw) wg_gemm_raw(g, (const float *)a->wpack, Vw, M, Ub, gi, nb, nr, qc, qe);
            int64_t k0 = qc * g->mr, k1 = qe * g->mr < g->Kg ? qe * g->mr : g->Kg;
            const float *bias = p->has_bias ? (const float *)a->bias + gi * g->Kg + k0 : NULL;
            for (int s = 0; s < ns; s++) {
                wg4_seg *sg = &seg[s];
                for (int r = 0; r < sg->nruns; r++) {
                    tc__wg4_run *u = &sg->run[r];
                    int64_t oy = g->m * sg->ty[r], ox = g->m * sg->tx0[r];
                    u->rows = (int)(OH - oy < g->m ? OH - oy : g->m);
                    u->cnt = (int)(OW - ox < g->m * u->len ? OW - ox : g->m * u->len);
                    u->out = (float *)a->y +
                             (((sg->n[r] * p->K + gi * g->Kg + k0) * OD + od) * OH + oy) * OW + ox;
                }
                (g->m == 4 ? tc__wg4_out_avx512 : tc__wg2_out_avx512)(
                    M + sg->col, g->mstride, nb, k1 - k0, bias, sg->run, sg->nruns, OW, OD * OH * OW);
            }
        }
    }
}

/* One call per thread slot (its workspace): claims units until none is
 * left. Each unit writes its own outputs, so the result does not depend on
 * which thread ran it. */
static void wg4_items(void *arg, int64_t begin, int64_t end, int tid) {
    (void)begin;
    (void)end;
    wg4_job *j = arg;
    const wg4_geom *g = &j->g;
    char *mine = (char *)j->a->ws + (size_t)tid * g->per_thread;
    float *V = (float *)mine, *M = (float *)(mine + g->vbytes);
    float *Ub = (float *)(mine + g->vbytes + g->mbytes);
    for (;;) {
        int64_t it = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (it >= g->units) break;
        int64_t kg = it % g->kgroups, t = it / g->kgroups;
        int64_t oc = t % g->odch;
        t /= g->odch;
        int64_t b = t % g->nblk, gi = t / g->nblk;
        int64_t t0 = b * g->nb, t1 = t0 + g->nb < g->T ? t0 + g->nb : g->T;
        int64_t q0 = kg * g->ppg, q1 = q0 + g->ppg < g->npan ? q0 + g->ppg : g->npan;
        int64_t od0 = g->OD * oc / g->odch, od1 = g->OD * (oc + 1) / g->odch;
        wg4_block(j, V, M, Ub, gi, t0, t1, t1 - t0 <= 16 ? 16 : g->nb, q0, q1, od0, od1);
    }
}

static tc_status wgx_execute(const tc__args *a, int m, int raw) {
    const tc__problem *p = a->p;
    if (!a->wpack) return tc__error(TC_ERR_INTERNAL, "cpu.conv.winograd-f4: weights not packed");
    wg4_job j;
    j.a = a;
    j.next = 0;
    wg4_geometry(p, a->threads, m, raw, &j.g);
    int64_t slots = a->threads < j.g.units ? a->threads : j.g.units;
    tc__parallel_for(a->threads, slots, wg4_items, &j);
    return TC_OK;
}

/* Seconds: 36 GEMMs (36/144 of the direct FLOPs over the padded tile
 * columns) at the micro-kernel's efficiency (14x32: ~80%, the 28x16 kernel
 * of few-tile layers ~75% with U in cache: 256 @14 one core ran it at ~90%,
 * and at 60% ESTIMATE took direct there, 1.12-1.25x slower in the bench;
 * U's streaming is the separate term below, not this one) with the
 * reduction depth, the items' balance over the threads, the transforms
 * (~0.07 ns per transformed value), and the transformed weights U: each
 * unit (one block) reads its share once when it fits in L2 (768 KB), else
 * once per output depth, from L3 at twice the copy bandwidth up to 4 MB of U, beyond at
 * the copy bandwidth (36 x K x C floats: 9.4 MB at 256 channels, where
 * batch 1 at 14x14 reuses each value for only 16 tiles and the direct
 * method wins). */
static double wgx_estimate(const tc__problem *p, const tc__env *env, int m, int raw) {
    wg4_geom g;
    wg4_geometry(p, env->threads, m, raw, &g);
    double kfac = (double)g.kc / (double)(g.kc + 24);
    double cols = (double)(p->G * g.rcols);
    /* columns on the 16-wide kernels: all for nb = 16, else a tail of <= 16 */
    int64_t tail = g.T - (g.nblk - 1) * g.nb;
    double c16 = g.nb == 16 ? cols : tail <= 16 ? 16.0 * p->G : 0;
    double gemm = 2.0 * g.xi * (double)(g.npan * g.mr) * (double)g.kc / (g.mr == 8 ? 0.97 : 1.0);
    double items = (double)g.units;
    double rounds = (double)tc__cdiv64((int64_t)items, env->threads);
    double bal = items / (rounds * env->threads);
    double OD = (double)g.OD;
    double t_gemm =
        OD * gemm * ((cols - c16) / 0.80 + c16 / 0.75) / (tc__peak_flops(env) * kfac * bal);
    /* input slices transformed per output depth: 1 when the window shifts
     * (depth stride == dilation), else all KD */
    double fresh = g.KD == 1 || p->stride[0] == p->dil[0] ? 1.0 : (double)g.KD;
    double vals = g.xi * cols * OD * ((double)g.kgroups * g.Cg * fresh + (double)g.Kg);
    double t_tr = vals * 0.7e-10 / (env->threads * bal);
    int64_t ppi = g.ppg < g.npan ? g.ppg : g.npan; /* A panels per item */
    double ui = g.xi * (double)(ppi * g.mr) * (double)g.kc * 4.0;
    double utotal = g.xi * (double)(p->G * g.npan * g.mr) * (double)g.kc * 4.0;
    double odpi = (double)tc__cdiv64(g.OD, g.odch); /* output depths per item */
    double t_wt = 0.0;
    if (raw) { /* 9 raw floats a kernel, transformed per item and output depth */
        ui = ui * 9.0 / g.xi;
        utotal = utotal * 9.0 / g.xi;
        t_wt = items * odpi * (double)(ppi * g.mr) * (double)g.kc * g.xi * WG_WT_NS * 1e-9 /
               (env->threads * bal);
    }
    /* U read once per item when the item's share stays cached across its
     * output depths; from L2 (4x the copy bandwidth) only when it fits
     * there beside the thread's own buffers (V, M, the raw chunk) */
    int fits = ui <= 768e3, inl2 = ui + (double)g.per_thread <= 768e3;
    double traffic = items * ui * (fits ? 1.0 : odpi);
    double t_u = traffic / (tc__peak_bandwidth(env) * (inl2 ? 4.0 : utotal <= 4e6 ? 2.0 : 1.0));
    /* Stored U past L2 is prefetched by the micro-kernels (g.pfa): half of
     * the shorter of its streaming and the GEMMs is hidden behind the
     * other (two threads, Zen 5, fitted on the ResNet-50 3x3
     * layers: 512 @7 F(2x2) 0.84 ms estimated / 0.63-0.86 measured, 256
     * @14 F(4x4) 0.47 / 0.51-0.73, 128 @28 0.34 / 0.35-0.62, the GEMM-
     * bound F(2x2) rows within +0.08). The layer's own weights are not
     * read again: U (or the raw chunks) is their traffic, so the bytes term
     * is the input and output only. Both added in full with the weights
     * counted twice would estimate 512 @7 F(2x2) at 1.36 ms, and ESTIMATE
     * would keep cpu.conv.direct (0.67-1.06 ms against F(2x2)'s 0.63-0.86
     * in the same runs). */
    double t_mem = 4.0 * (double)(tc__x_count(p) + tc__y_count(p)) / tc__peak_bandwidth(env);
    double t_core = t_gemm + t_u - (g.pfa ? 0.5 * (t_gemm < t_u ? t_gemm : t_u) : 0.0);
    return t_core + t_tr + t_wt + t_mem;
}

#define WGX_SOLVER(M, R, SYM, NAME, SUMMARY)                                                   \
    static int wg##M##R##_applicable(const tc__problem *p, const tc__env *env, char *why, size_t n) { \
        return wgx_applicable(p, env, why, n, M, R);                                              \
    }                                                                                          \
    static double wg##M##R##_estimate(const tc__problem *p, const tc__env *env) {                 \
        return wgx_estimate(p, env, M, R);                                                        \
    }                                                                                          \
    static size_t wg##M##R##_workspace(const tc__problem *p, const tc__env *env) {                \
        return wgx_workspace(p, env, M, R);                                                       \
    }                                                                                          \
    static size_t wg##M##R##_wpack_size(const tc__problem *p, const tc__env *env) {               \
        return wgx_wpack_size(p, env, M, R);                                                      \
    }                                                                                          \
    static tc_status wg##M##R##_wpack(const tc__problem *p, const tc__env *env, const void *state, \
                                   const void *wv, void *dst) {                                \
        (void)state;                                                                           \
        return wgx_wpack(p, env, wv, dst, M, R);                                                  \
    }                                                                                          \
    static tc_status wg##M##R##_execute(const tc__args *a) { return wgx_execute(a, M, R); }          \
    const tc__solver SYM = {                                                                   \
        .name = NAME,                                                                          \
        .backend = TC_BACKEND_CPU,                                                             \
        .ops = TC_OP_CONV,                                                                     \
        .summary = SUMMARY,                                                                    \
        .available = wg4_available,                                                            \
        .applicable = wg##M##R##_applicable,                                                      \
        .estimate = wg##M##R##_estimate,                                                          \
        .workspace = wg##M##R##_workspace,                                                        \
        .execute = wg##M##R##_execute,                                                            \
        .wpack_size = wg##M##R##_wpack_size,                                                      \
        .wpack = wg##M##R##_wpack,                                                                \
    };

WGX_SOLVER(4, 0, tc__solver_cpu_conv_winograd4, "cpu.conv.winograd-f4",
           "Winograd F(4x4,3x3) for 3x3 stride-1 layers (2D, and 3D kd x 3 x 3 with the depth taps summed in the GEMM): 6x6 tiles, transforms fused per 16/32-tile block, 36 GEMMs on packed micro-kernels, weights transformed once; float32, AVX-512.")
WGX_SOLVER(2, 0, tc__solver_cpu_conv_winograd, "cpu.conv.winograd-f2",
           "Winograd F(2x2,3x3), the same blocks as cpu.conv.winograd-f4 (2D and 3D kd x 3 x 3): 4x4 tiles, 16 GEMMs, 2.25x fewer multiplies than direct with 10-20x less error than F(4x4,3x3); float32, AVX-512.")
WGX_SOLVER(4, 1, tc__solver_cpu_conv_winograd4_raw, "cpu.conv.winograd-f4-raw",
           "cpu.conv.winograd-f4 with the weights kept raw (9 floats a 3x3 kernel, as the layer holds them) and transformed inside the call, 64 reduction steps at a time into a cached buffer: 4x fewer weight bytes read per call, for layers with few tiles and many channels (256 @14), where streaming the transformed weights bounds the stored variant.")
