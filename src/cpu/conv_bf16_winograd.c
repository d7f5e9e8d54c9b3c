/* conv_bf16_winograd.c - bfloat16 layers with 3x3 planes by Winograd
 * F(2x2, 3x3) on AVX512-BF16 (solver "cpu.conv.winograd-f2-bf16"): 2D 3x3
 * and 3D kd x 3 x 3 (the planes transformed, the depth taps summed as in
 * the direct form).
 *
 * Each 2x2 output tile is A^T [ (G g G^T) . (B^T d B) ] A over its 4x4
 * input tile d: 16 products per (input, output channel) pair where the
 * direct form needs 36. The 16 transform positions are 16 GEMMs (tiles x
 * kd*C) x (kd*C x K), run on cpu.conv.igemm-bf16's micro-kernel: rows are
 * tiles, the reduction is the depth taps (the micro-kernel's runs) times
 * the input channels in pairs (vdpbf16ps), and the transformed input V
 * and weights U are rounded to bfloat16 to feed it. F(2x2, 3x3)'s
 * transforms only add and halve (B, A: 0 and +-1; G: 0, +-1/2, 1), so
 * that rounding is the only error beyond the direct form's: on random
 * data (C = 64) the largest error is 3.6e-3 of the largest output against
 * 2.3e-3 for the direct form (docs/solvers/cpu-conv-bf16.md).
 *
 * Work items: (K block, chunk of 4*MR tiles), a tile being (image, output
 * plane, 2x2 block). An item transforms its tiles' inputs, one 4x4 patch
 * per depth tap (fp32, 32 channels a step; from the padded channels-last
 * copy, conv_bf16.c), runs the 16 GEMMs into an fp32 M block, and
 * transforms M back with the epilogue (bias, residual, activation, one
 * rounding to bf16) fused into the store. Stride 1 and dilation 1 on the
 * planes, any depth kernel up to 7 with any depth stride and dilation,
 * one group; every padding mode and both layouts (through the copy). */
#include "../core/half.h"
#include "conv_bf16.h"

#include <stdio.h>
#include <string.h>

typedef struct wg_geom {
    int nv, mr, nr;
    void (*ukr)(const tc__bf16_tile *);
    int64_t Cgp, Cv, nkb;     /* channels: even (the copy), a multiple of 32 (V) */
    int64_t R, OD;            /* depth taps (runs of each GEMM), output planes */
    int64_t TH, TW, T;        /* tiles per column, per row, in all */
    int64_t X[3];             /* the padded copy: depth x (2TH+2) x (2TW+2) */
    int64_t tc, nchunk, items;
    /* plane reuse (3D, depth dilation 1, depth stride < kd, planes of at
     * least tc tiles): an item is (K block, image, chunk of a plane's
     * tiles, block of odper output planes); consecutive output planes
     * share kd - stride input planes, whose transforms stay in V's kd
     * slots, so each output plane transforms min(stride, kd) new ones */
    int reuse;
    int64_t P2, ncp, odper, nob;
    size_t xpbytes, vbytes, mbytes, tmpbytes;
} wg_geom;

static int64_t wg_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static size_t wg_rup64(size_t v) { return (v + 63) & ~(size_t)63; }

static void wg_geom_make(const tc__problem *p, int threads, wg_geom *g) {
    memset(g, 0, sizeof *g);
    g->Cgp = p->C + (p->C & 1);
    g->Cv = wg_cdiv(p->C, 32) * 32;
    g->nv = p->K >= 49 ? 4 : p->K >= 33 ? 3 : p->K >= 17 ? 2 : 1;
    static const int mrs[5] = {0, 12, 12, 8, 6};
    static void (*const ukrs[5])(const tc__bf16_tile *) = {
        NULL, tc__bf16_ukr_12x1, tc__bf16_ukr_12x2, tc__bf16_ukr_8x3, tc__bf16_ukr_6x4};
    g->mr = mrs[g->nv];
    g->ukr = ukrs[g->nv];
    g->nr = 16 * g->nv;
    g->nkb = wg_cdiv(p->K, g->nr);
    g->R = p->msk[0];
    g->OD = p->out[0];
    g->TH = wg_cdiv(p->out[1], 2);
    g->TW = wg_cdiv(p->out[2], 2);
    g->T = p->N * g->OD * g->TH * g->TW;
    g->X[0] = (g->OD - 1) * p->stride[0] + (g->R - 1) * p->dil[0] + 1;
    g->X[1] = 2 * g->TH + 2;
    g->X[2] = 2 * g->TW + 2;
    g->tc = 4 * g->mr;
    g->nchunk = wg_cdiv(g->T, g->tc);
    g->items = g->nkb * g->nchunk;
    g->P2 = g->TH * g->TW;
    g->reuse = g->R > 1 && p->dil[0] == 1 && p->stride[0] < g->R && g->P2 >= g->tc && g->OD > 1;
    if (g->reuse) {
        g->ncp = wg_cdiv(g->P2, g->tc);
        int64_t base = g->nkb * p->N * g->ncp, want = 4 * (int64_t)(threads > 0 ? threads : 1);
        g->nob = base >= want ? 1 : wg_cdiv(want, base);
        if (g->nob > g->OD) g->nob = g->OD;
        g->odper = wg_cdiv(g->OD, g->nob);
        g->nob = wg_cdiv(g->OD, g->odper);
        g->items = base * g->nob;
    }
    g->xpbytes = wg_rup64((size_t)(p->N * g->X[0] * g->X[1] * g->X[2] * g->Cgp) * 2);
    g->vbytes = wg_rup64((size_t)(g->R * 16 * g->tc * g->Cv) * 2);
    g->mbytes = wg_rup64((size_t)(16 * g->tc * g->nr) * sizeof(float));
    /* the channels-first output rows of a chunk (2 x 2*tc pixels), the
     * bias, zeros */
    g->tmpbytes = wg_rup64((size_t)(4 * g->tc * g->nr + 2 * g->nr) * sizeof(float));
}

static int wg_available(void) { return (tc__cpu_detect() & TC__CPU_AVX512BF16) != 0; }

static int wg_applicable(const tc__problem *p, const tc__env *env, char *why, size_t n) {
    (void)env;
    const char *r = NULL;
    if (p->op != TC_OP_CONV) r = "convolution layers only";
    else if (p->dtype != TC_BFLOAT16) r = "bfloat16 only";
    else if (!wg_available()) r = "needs AVX512-BF16";
    else if (p->msk[1] != 3 || p->msk[2] != 3)
        r = "3x3 planes only (2D 3x3, 3D kd x 3 x 3)";
    else if (p->stride[1] != 1 || p->stride[2] != 1 || p->dil[1] != 1 || p->dil[2] != 1)
        r = "stride 1, dilation 1 on the planes only";
    else if (p->msk[0] > 7)
        r = "depth kernels of 7 or less"; /* V holds every depth tap's tiles */
    else if (p->G != 1) r = "one group only";
    else if (p->C < 16) /* fewer channels average the rounding of U and V
                           less: C = 1-3 reached 5.5e-3 of the products'
                           magnitude on one output, direct 6e-4 */
        r = "16 input channels or more";
    if (r) {
        if (why) snprintf(why, n, "%s", r);
        return 0;
    }
    /* the padded depth extent (out - 1) * stride + (kd - 1) * dilation + 1
     * before the geometry computes it */
    int64_t t, t2;
    if (!tc__mul_ok(p->out[0] - 1, p->stride[0], &t) || !tc__mul_ok(p->msk[0] - 1, p->dil[0], &t2) ||
        t > INT64_MAX / 4 - t2 || !tc__mul_ok(p->N, t + t2 + 1, &t) || !tc__mul_ok(t, p->out[1] + 4, &t) ||
        !tc__mul_ok(t, p->out[2] + 4, &t)) {
        if (why) snprintf(why, n, "problem too large");
        return 0;
    }
    wg_geom g;
    wg_geom_make(p, env->threads, &g);
    if (!tc__mul_ok(p->N * g.X[0] * g.X[1], g.X[2] * g.Cgp * 2, &t) ||
        !tc__mul_ok(g.R * 16 * g.tc, g.Cv + g.nr, &t) ||
        !tc__mul_ok(16 * g.nkb * g.nr, g.Cv * 2, &t) || g.Cv / 2 > INT32_MAX) {
        if (why) snprintf(why, n, "problem too large");
        return 0;
    }
    return 1;
}

static size_t wg_workspace(const tc__problem *p, const tc__env *env) {
    wg_geom g;
    wg_geom_make(p, env->threads, &g);
    return g.xpbytes + (size_t)env->threads * (g.vbytes + g.mbytes + g.tmpbytes);
}

static size_t wg_wpack_size(const tc__problem *p, const tc__env *env) {
    (void)env;
    wg_geom g;
    wg_geom_make(p, env->threads, &g);
    return (size_t)(16 * g.nkb * g.R * (g.Cv / 2) * g.nr * 2) * 2;
}

/* U = G g G^T per (k, c, depth tap) in fp32, rounded to bf16, packed
 * [pos][K block][depth tap][channel pair][NR][2] (the micro-kernel's runs
 * are the depth taps), the channels of each block of 32 in V's order (16
 * even, 16 odd: tc__bf16_wg_in). */
static tc_status wg_wpack(const tc__problem *p, const tc__env *env, const void *state,
                          const void *w, void *dst) {
    (void)env;
    (void)state;
    wg_geom g;
    wg_geom_make(p, env->threads, &g);
    const uint16_t *ws = w;
    uint16_t *d = dst;
    const int64_t NR = g.nr, np = g.Cv / 2;
    memset(d, 0, wg_wpack_size(p, env));
    for (int64_t k = 0; k < p->K; k++)
        for (int64_t c = 0; c < p->C; c++)
            for (int64_t rd = 0; rd < g.R; rd++) {
                float f[3][3], t[4][3], u[4][4];
                for (int i = 0; i < 9; i++)
                    f[i / 3][i % 3] = tc__bf16_to_f32(ws[((k * p->C + c) * g.R + rd) * 9 + i]);
                for (int j = 0; j < 3; j++) { /* G f */
                    t[0][j] = f[0][j];
                    t[1][j] = 0.5f * (f[0][j] + f[1][j] + f[2][j]);
                    t[2][j] = 0.5f * (f[0][j] - f[1][j] + f[2][j]);
                    t[3][j] = f[2][j];
                }
                for (int i = 0; i < 4; i++) { /* (G f) G^T */
                    u[i][0] = t[i][0];
                    u[i][1] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
                    u[i][2] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
                    u[i][3] = t[i][2];
                }
                int64_t w32 = c % 32, at = c - w32 + (w32 % 2 ? 16 + w32 / 2 : w32 / 2);
                int64_t kb = k / NR, j = k % NR, q = at / 2, h = at % 2;
                for (int pos = 0; pos < 16; pos++)
                    d[((((pos * g.nkb + kb) * g.R + rd) * np + q) * NR + j) * 2 + h] =
                        tc__f32_to_bf16(u[pos / 4][pos % 4]);
            }
    return TC_OK;
}

typedef struct wg_job {
    const tc__args *a;
    const wg_geom *g;
    const uint16_t *xp;
} wg_job;

static void wg_items(void *arg, int64_t b, int64_t e, int tid) {
    const wg_job *jb = arg;
    const tc__args *a = jb->a;
    const tc__problem *p = a->p;
    const wg_geom *g = jb->g;
    const int cl = p->layout == TC_LAYOUT_CHANNELS_LAST;
    const int64_t MR = g->mr, NR = g->nr, TC = g->tc, Cgp = g->Cgp, Cv = g->Cv;
    const int64_t H = p->out[1], W = p->out[2], P = g->OD * H * W, R = g->R;
    char *mine = (char *)a->ws + g->xpbytes + (size_t)tid * (g->vbytes + g->mbytes + g->tmpbytes);
    uint16_t *V = (uint16_t *)mine;
    float *M = (float *)(mine + g->vbytes);
    float *rows = (float *)(mine + g->vbytes + g->mbytes); /* [2][2 * TC][NR] */
    float *bias = rows + 4 * TC * NR, *zeros = bias + NR;
    memset(zeros, 0, (size_t)NR * sizeof(float));
    int64_t roff[16], runoff[8];
    for (int64_t rd = 0; rd < R; rd++) runoff[rd] = rd * 16 * TC * Cv;
    tc__bf16_tile t;
    memset(&t, 0, sizeof t);
    t.roff = roff;
    t.runoff = runoff;
    t.nruns = (int)R;
    t.npairs = (int)(Cv / 2);
    t.nch = (int)NR;
    int64_t lastkb = -1, tag[8];
    for (int64_t it = b; it < e; it++) {
        int64_t kb, t0 = 0, nt, odn = 1, n = 0, tp0 = 0, oda = 0;
        if (g->reuse) {
            /* block of output planes outermost: the threads' contiguous
             * item ranges then each hold every chunk of a plane, the
             * short last one included */
            int64_t u = it / g->ncp;
            tp0 = it % g->ncp * TC;
            n = u % p->N;
            u /= p->N;
            kb = u % g->nkb;
            oda = u / g->nkb * g->odper;
            odn = g->OD - oda < g->odper ? g->OD - oda : g->odper;
            nt = g->P2 - tp0 < TC ? g->P2 - tp0 : TC;
            for (int64_t sl = 0; sl < R; sl++) tag[sl] = -1;
        } else {
            kb = it / g->nchunk;
            t0 = it % g->nchunk * TC;
            nt = g->T - t0 < TC ? g->T - t0 : TC;
        }
        int64_t k0 = kb * NR;
        int nch = (int)(p->K - k0 < NR ? p->K - k0 : NR);
        if (kb != lastkb) {
            for (int j = 0; j < NR; j++)
                bias[j] = p->has_bias && j < nch ? tc__bf16_to_f32(((const uint16_t *)a->bias)[k0 + j]) : 0.0f;
            lastkb = kb;
        }
        for (int64_t oq = 0; oq < odn; oq++) {
            if (g->reuse) {
                /* the planes this output plane reads: resident ones keep their
                 * slot, the others are transformed into slots no tap needs */
                int64_t od = oda + oq, need[8];
                t0 = (n * g->OD + od) * g->P2 + tp0;
                for (int64_t rd = 0; rd < R; rd++) {
                    need[rd] = od * p->stride[0] + rd;
                    runoff[rd] = -1;
                    for (int64_t sl = 0; sl < R; sl++)
                        if (tag[sl] == need[rd]) runoff[rd] = sl * 16 * TC * Cv;
                }
                for (int64_t rd = 0; rd < R; rd++) {
                    if (runoff[rd] >= 0) continue;
                    int64_t sl = 0;
                    for (; sl < R; sl++) {
                        int used = 0;
                        for (int64_t q = 0; q < R; q++) used |= tag[sl] == need[q];
                        if (!used) break;
                    }
                    tag[sl] = need[rd];
                    runoff[rd] = sl * 16 * TC * Cv;
                    for (int64_t i = 0; i < nt; i++) {
                        int64_t pt = tp0 + i, tx = pt % g->TW, ty = pt / g->TW;
                        const uint16_t *src =
                            jb->xp + (((n * g->X[0] + need[rd]) * g->X[1] + 2 * ty) * g->X[2] + 2 * tx) * Cgp;
                        tc__bf16_wg_in(src, g->X[2] * Cgp, Cgp, Cgp, V + runoff[rd] + i * Cv, TC * Cv);
                    }
                }
            } else {
                /* input transform: each depth tap's plane, V[tap][pos][tile][Cv] */
                for (int64_t i = 0; i < nt; i++) {
                    int64_t tile = t0 + i, tx = tile % g->TW, r = tile / g->TW;
                    int64_t ty = r % g->TH, r2 = r / g->TH, od = r2 % g->OD, n = r2 / g->OD;
                    for (int64_t rd = 0; rd < R; rd++) {
                        int64_t e0 = od * p->stride[0] + rd * p->dil[0];
                        const uint16_t *src =
                            jb->xp + (((n * g->X[0] + e0) * g->X[1] + 2 * ty) * g->X[2] + 2 * tx) * Cgp;
                        tc__bf16_wg_in(src, g->X[2] * Cgp, Cgp, Cgp, V + rd * 16 * TC * Cv + i * Cv, TC * Cv);
                    }
                }
            }
            /* 16 GEMMs, the depth taps their runs: M[pos][tile][NR] */
            t.w = NULL;
            for (int pos = 0; pos < 16; pos++) {
                t.x = V + pos * TC * Cv;
                t.w = (const uint16_t *)a->wpack + (size_t)((pos * g->nkb + kb) * R * (Cv / 2) * NR * 2);
                for (int64_t i0 = 0; i0 < nt; i0 += MR) {
                    for (int i = 0; i < MR; i++) roff[i] = (i0 + i < nt ? i0 + i : nt - 1) * Cv;
                    t.tb = M + (pos * TC + i0) * NR;
                    g->ukr(&t);
                }
            }
            /* output transform + epilogue: channels-last stores each tile's
             * four pixels; channels-first gathers the tiles of one tile row
             * (same image, plane and ty) into two pixel rows, stored down each
             * channel 16 pixels a step */
            for (int64_t i = 0, ia = 0; i < nt; i++) {
                int64_t tile = t0 + i, tx = tile % g->TW, r = tile / g->TW;
                int64_t ty = r % g->TH, r2 = r / g->TH, od = r2 % g->OD, n = r2 / g->OD;
                if (!cl) {
                    float q[4 * 64];
                    tc__bf16_wg_out(M + i * NR, TC * NR, g->nv, nch, bias, NULL, NULL, (int)p->act, q);
                    int64_t at = 2 * (i - ia);
                    for (int j = 0; j < 4; j++)
                        memcpy(rows + ((j / 2) * 2 * TC + at + j % 2) * NR, q + j * NR, (size_t)NR * sizeof(float));
                    if (i + 1 < nt && tx + 1 < g->TW) continue; /* the tile row goes on */
                    int64_t tx0 = tx - (i - ia), w0 = 2 * tx0, cols = 2 * (i - ia + 1);
                    if (cols > W - w0) cols = W - w0;
                    for (int j = 0; j < 2; j++) {
                        int64_t oh = 2 * ty + j;
                        if (oh >= H) continue;
                        int64_t yi = (n * p->K + k0) * P + (od * H + oh) * W + w0;
                        tc__bf16_store_cf(rows + j * 2 * TC * NR, NR, cols, nch, zeros, (uint16_t *)a->y + yi, P,
                                          p->has_residual ? (const uint16_t *)a->residual + yi : NULL, (int)p->act);
                    }
                    ia = i + 1;
                    continue;
                }
                uint16_t *outp[4];
                const uint16_t *resp[4];
                for (int j = 0; j < 4; j++) {
                    int64_t oh = 2 * ty + j / 2, ow = 2 * tx + j % 2;
                    int64_t off = (n * P + (od * H + oh) * W + ow) * p->K + k0;
                    int in = oh < H && ow < W;
                    outp[j] = in ? (uint16_t *)a->y + off : NULL;
                    resp[j] = in && p->has_residual ? (const uint16_t *)a->residual + off : NULL;
                }
                tc__bf16_wg_out(M + i * NR, TC * NR, g->nv, nch, bias, outp, p->has_residual ? resp : NULL,
                                (int)p->act, NULL);
            }
        }
    }
}

static tc_status wg_execute(const tc__args *a) {
    const tc__problem *p = a->p;
    if (!wg_available()) return tc__error(TC_ERR_UNSUPPORTED, "cpu.conv.winograd-f2-bf16: needs AVX512-BF16");
    if (!a->wpack) return tc__error(TC_ERR_INTERNAL, "cpu.conv.winograd-f2-bf16: weights not packed");
    wg_geom g;
    wg_geom_make(p, a->threads, &g);
    tc__bf16_pad_copy(a, g.X, g.Cgp, (uint16_t *)a->ws);
    wg_job jb = {.a = a, .g = &g, .xp = (const uint16_t *)a->ws};
    tc__parallel_for(a->threads, g.items, wg_items, &jb);
    return TC_OK;
}

/* Seconds: the 16 GEMMs on the rows the micro-kernel computes (the last
 * chunk's tiles rounded up to MR) at 90% of the bf16 peak times
 * pairs / (pairs + 8) for the reduction's length (kd * C/2 steps a call),
 * the two transforms (~6 vector ops per tile, position and 16 channels
 * each way), the padded copy. One thread, this machine (Zen 5), estimate
 * over the best of 40 calls: 1.17-1.48 on the ResNet-50 3x3 layers, the
 * batch-8 one and 3D 3x3x3 32 @32^3, where cpu.conv.igemm-bf16's is
 * 1.23-1.43 (with 70% of the peak on every row the chunks hold, 1.43-2.12
 * made the direct form the choice at 3x3 512 @7, 1.3x slower). */
static double wg_estimate(const tc__problem *p, const tc__env *env) {
    wg_geom g;
    wg_geom_make(p, env->threads, &g);
    int64_t last = g.T - (g.nchunk - 1) * g.tc;
    double rows = (double)((g.nchunk - 1) * g.tc + (last + g.mr - 1) / g.mr * g.mr);
    double kfac = (double)(g.R * g.Cv / 2) / (double)(g.R * g.Cv / 2 + 8);
    double flops = 2.0 * 16.0 * rows * (double)(g.R * g.Cv) * (double)(g.nkb * g.nr);
    double items = (double)g.items, par = items >= env->threads ? 1.0 : items / env->threads;
    double peak = tc__peak_flops(env) * tc__machine_flops_core_bf16() / tc__machine_flops_core();
    double t_gemm = flops / (peak * 0.90 * kfac * par);
    int t = env->threads < tc_cpu_count() ? env->threads : tc_cpu_count();
    /* input planes transformed per output plane */
    double planes = (double)g.R;
    if (g.reuse) {
        int64_t fresh = p->stride[0] < g.R ? p->stride[0] : g.R;
        planes = (double)(g.R + (g.odper - 1) * fresh) / (double)g.odper;
    }
    double ops = (double)g.T * 16.0 * 6.0 * (planes * (double)g.Cv / 32.0 * g.nkb + (double)(g.nkb * g.nr) / 16.0);
    double t_tr = ops / (3.0e9 * 3.0 * (t > 0 ? t : 1));
    double t_copy = (double)g.xpbytes * 2.0 / tc__peak_bandwidth(env);
    return t_gemm + t_tr + t_copy + 0.25 * tc__problem_bytes(p) / tc__peak_bandwidth(env);
}

const tc__solver tc__solver_cpu_conv_winograd2_bf16 = {
    .name = "cpu.conv.winograd-f2-bf16",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_CONV,
    .summary = "bfloat16 2D 3x3 and 3D kd x 3 x 3 layers (stride 1 on the planes) by Winograd F(2x2,3x3) on the planes: fp32 transforms rounded to bf16, 16 GEMMs on the vdpbf16ps micro-kernel (depth taps in the reduction), fused bias + activation + residual; 2.25x fewer products than direct.",
    .available = wg_available,
    .applicable = wg_applicable,
    .estimate = wg_estimate,
    .workspace = wg_workspace,
    .execute = wg_execute,
    .wpack_size = wg_wpack_size,
    .wpack = wg_wpack,
    .caps = TC__CAP_ALL,
};
