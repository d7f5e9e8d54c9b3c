/* conv_bf16.c - bfloat16 convolution layers on AVX512-BF16 (solver
 * "cpu.conv.igemm-bf16"): an implicit GEMM over channels-last pixels.
 *
 * The layer is one GEMM per group whose rows are the output pixels (all
 * images), whose columns are the group's output channels and whose
 * reduction runs over (tap, input channel). In channels-last order the
 * input channels of a pixel are contiguous, so the reduction for one tap
 * is a contiguous run in memory and the micro-kernel (conv_bf16_avx512.c)
 * reads its A operand in place: a pair of channels (c, c+1) of one pixel
 * is one 32-bit broadcast feeding one vdpbf16ps (16 output channels x 2
 * products). Nothing is gathered, only addressed: row i of a tile is at
 * x + roff[i], run r at + runoff[r].
 *
 * Source image. The kernel reads the input as it lies when it is
 * channels-last, unpadded and has an even channel count per group (1x1
 * layers, valid convolutions). Otherwise execute first writes a padded
 * channels-last copy into the workspace: spatial extent E = (out-1)*stride
 * + (mask-1)*dil + 1 per axis, the padding mode applied while copying
 * (tc__boundary_index: zeros, reflect, replicate, circular alike), each
 * group's channels padded to an even count with zeros, channels-first
 * input transposed on the way (32-pixel blocks, whole lines per channel).
 *
 * Odd channel counts up to 7 (conv1, C = 3) pair across taps instead of
 * padding channels: with one group and dilation 1 on the last axis, runs
 * of mask2 x Cg elements (7x7x3: 7 runs of 21, 11 pairs) are read in place
 * from the unpadded copy, the pair past a run's end meeting a zero weight
 * (an input holding inf or NaN, detected during the copy, takes the next
 * form instead, since 0 x inf is NaN); otherwise each tile's rows are
 * packed (tap, channel) into a per-thread buffer.
 *
 * Tiles: MR consecutive output pixels in N x out order, each row with its
 * own offset (the kernel keeps them in index registers), so tiles cross
 * rows and images and only the last one is partial (its missing rows
 * repeat the last pixel and are not stored).
 *
 * Weights: dense K x C/G x mask bf16, packed by wpack into
 * [g][K block][tap][channel pair][NV*16 lanes][2], zero past the group's
 * channels (odd Cg: per run, then the packed form). Work items (group, K
 * block, chunk of 4 tiles) are cut over the pool; a thread's K block of
 * weights stays in L1/L2 across its tiles. Epilogue in the kernel's
 * registers: y = act(acc + bias + residual) rounded once to bf16.
 * Channels-first output is staged per item in fp32 and stored one channel
 * row at a time.
 *
 * Depthwise channels-last layers (Cg = Kg = 1) run their own kernel
 * (tc__bf16_dw_row: fp32 FMAs over 32 channels a step), reading the input
 * in place with the padding mode applied per tap. */
#include "../core/half.h"
#include "conv_bf16.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BF_DW_MAXT 64 /* depthwise: taps per pixel handled without the copy */

#define BF_MAXMR 12
#define BF_CHUNK 4 /* tiles per work item */

typedef struct bf_geom {
    int nv, mr, nr;
    void (*ukr)(const tc__bf16_tile *);
    int64_t Kg, Cg, Cgp, nkb;
    int dw;                  /* depthwise, channels-last: tc__bf16_dw_row */
    int inplace;             /* read x as it lies (channels-last, no padding) */
    int kin;                 /* all K blocks per tile (their weights fit L1) */
    int64_t X[3], PS;        /* source image extents and pixel stride */
    int64_t nruns, npairs;   /* taps, channel pairs per tap */
    int pk;                  /* odd Cg: rows packed per tile (bf_pack_rows) */
    int64_t Lp;              /* pk: reduction (taps x Cg) rounded up to even */
    int64_t kruns, kpairs;   /* the kernel's runs and pairs per run */
    size_t pkbytes;          /* pk: per-thread packed rows */
    int mw;                  /* pk with one group, dilation 1 along the last
                                axis: runs of mask2 x Cg read in place */
    int64_t mwruns, mwpairs; /* mw: runs (taps on axes 0, 1), pairs per run */
    int64_t wmw;             /* mw: elements of its packed weights (the pk
                                form follows them) */
    int64_t ntile;           /* MR-pixel tiles over all N x out pixels */
    int64_t nchunk, items;
    size_t xpbytes, runbytes, tbbytes, biasbytes;
} bf_geom;

static int64_t bf_cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); } /* no a + b overflow */
static size_t bf_rup64(size_t v) { return (v + 63) & ~(size_t)63; }

static int bf_geom_make(const tc__problem *p, const tc__env *env, bf_geom *g) {
    memset(g, 0, sizeof *g);
    (void)env;
    g->Kg = p->K / p->G;
    g->Cg = p->C / p->G;
    g->dw = g->Cg == 1 && g->Kg == 1 && p->layout == TC_LAYOUT_CHANNELS_LAST &&
            p->msk[0] * p->msk[1] * p->msk[2] <= BF_DW_MAXT && p->cval == 0.0;
    g->pk = !g->dw && (g->Cg & 1) && g->Cg <= 7 && p->msk[0] * p->msk[1] * p->msk[2] * g->Cg <= 4096;
    g->Cgp = g->dw || g->pk ? g->Cg : g->Cg + (g->Cg & 1);
    g->nv = g->Kg >= 49 ? 4 : g->Kg >= 33 ? 3 : g->Kg >= 17 ? 2 : 1;
    static const int mrs[5] = {0, 12, 12, 8, 6};
    static void (*const ukrs[5])(const tc__bf16_tile *) = {
        NULL, tc__bf16_ukr_12x1, tc__bf16_ukr_12x2, tc__bf16_ukr_8x3, tc__bf16_ukr_6x4};
    g->mr = mrs[g->nv];
    g->ukr = ukrs[g->nv];
    g->nr = g->nv * 16;
    g->nkb = bf_cdiv(g->Kg, g->nr);
    int64_t E[3];
    int nopad = p->layout == TC_LAYOUT_CHANNELS_LAST && (g->dw || g->pk || !(g->Cg & 1));
    for (int a = 0; a < 3; a++) {
        E[a] = (p->out[a] - 1) * p->stride[a] + (p->msk[a] - 1) * p->dil[a] + 1;
        if (p->pad_lo[a] != 0 || E[a] > p->in[a]) nopad = 0;
    }
    g->mw = g->pk && p->G == 1 && p->dil[2] == 1 && p->msk[2] > 1;
    if (g->mw) nopad = 0; /* the runs read one element past a pixel: the copy has slack */
    if (g->dw) nopad = 1; /* the boundary is applied per tap (bf_dw_rows) */
    g->inplace = nopad;
    for (int a = 0; a < 3; a++) g->X[a] = nopad ? p->in[a] : E[a];
    g->PS = nopad ? p->C : p->G * g->Cgp;
    g->nruns = p->msk[0] * p->msk[1] * p->msk[2];
    g->npairs = g->Cgp / 2;
    g->kruns = g->nruns;
    g->kpairs = g->npairs;
    if (g->pk) {
        g->Lp = (g->nruns * g->Cg + 1) & ~(int64_t)1;
        g->kruns = 1;
        g->kpairs = g->Lp / 2;
        g->pkbytes = bf_rup64((size_t)(g->mr * g->Lp) * 2);
    }
    if (g->mw) {
        g->mwruns = p->msk[0] * p->msk[1];
        g->mwpairs = (p->msk[2] * g->Cg + 1) / 2;
        g->wmw = p->G * g->nkb * g->mwruns * g->mwpairs * g->nr * 2;
    }
    g->ntile = bf_cdiv(p->N * p->out[0] * p->out[1] * p->out[2], g->mr);
    g->nchunk = bf_cdiv(g->ntile, BF_CHUNK);
    /* short reductions with several K blocks (1x1 64->256): every K block
     * of a tile in turn, the tile's input rows kept in L1 */
    g->kin = p->layout == TC_LAYOUT_CHANNELS_LAST && !g->pk && !g->dw && g->nkb > 1 &&
             g->nkb * g->nr <= 1024 && g->nkb * g->kruns * g->kpairs * g->nr * 4 <= 40 * 1024;
    g->items = p->G * (g->kin ? 1 : g->nkb) * g->nchunk;
    if (g->dw) g->items = p->N * p->out[0] * p->out[1]; /* output rows */
    g->biasbytes = g->dw ? bf_rup64((size_t)bf_cdiv(p->C, 32) * 32 * sizeof(float)) : 0;
    if (!nopad) {
        int64_t px = p->N * g->X[0] * g->X[1] * g->X[2] + (g->mw ? 1 : 0);
        g->xpbytes = bf_rup64((size_t)(px * g->PS) * 2);
    }
    g->runbytes = bf_rup64((size_t)g->nruns * 2 * sizeof(int64_t));
    g->tbbytes = p->layout == TC_LAYOUT_CHANNELS_LAST
                     ? 0
                     : bf_rup64((size_t)(BF_CHUNK * BF_MAXMR * 64) * sizeof(float));
    return 1;
}

static int bf_available(void) { return (tc__cpu_detect() & TC__CPU_AVX512BF16) != 0; }

/* The geometry's products fit in 64 bits: the source image (N x the
 * extents the taps reach x pixel stride, in bytes), checked before
 * bf_geom_make multiplies them (hostile paddings make the extents huge
 * while the input itself is small). */
static int bf_sizes_ok(const tc__problem *p) {
    int64_t t = p->N;
    for (int a = 0; a < 3; a++) {
        int64_t ext, e;
        if (!tc__mul_ok(p->out[a] - 1, p->stride[a], &ext) ||
            !tc__mul_ok(p->msk[a] - 1, p->dil[a], &e) || !tc__add_ok(ext, e, &ext) ||
            !tc__add_ok(ext, 1, &ext))
            return 0;
        if (ext < p->in[a]) ext = p->in[a];
        if (!tc__mul_ok(t, ext, &t)) return 0;
    }
    if (!tc__mul_ok(t, 4 * (p->C + p->G) + 64, &t)) return 0;
    /* pixel offsets: a stride or dilation times the image's pixels */
    for (int a = 0; a < 3; a++) {
        int64_t u;
        if (!tc__mul_ok(p->stride[a], t, &u) || !tc__mul_ok(p->dil[a], t, &u)) return 0;
    }
    return 1;
}

static int bf_applicable(const tc__problem *p, const tc__env *env, char *why, size_t n) {
    if (p->op != TC_OP_CONV) {
        if (why) snprintf(why, n, "convolution layers only");
        return 0;
    }
    if (p->dtype != TC_BFLOAT16) {
        if (why) snprintf(why, n, "bfloat16 only (got %s)", tc_dtype_name(p->dtype));
        return 0;
    }
    if (!bf_available()) {
        if (why) snprintf(why, n, "needs AVX512-BF16");
        return 0;
    }
    if (!bf_sizes_ok(p)) {
        if (why) snprintf(why, n, "problem too large");
        return 0;
    }
    bf_geom g;
    bf_geom_make(p, env, &g);
    int64_t t;
    /* packed weights, the source image and the kernel's int counters */
    if (!tc__mul_ok(g.nkb * g.nr, g.nruns * (g.Cgp + 1), &t) || !tc__mul_ok(t, p->G * 2, &t) ||
        !tc__mul_ok(p->N * g.X[0], g.X[1] * g.X[2], &t) || !tc__mul_ok(t, g.PS * 2, &t) ||
        g.nruns > INT32_MAX || g.npairs > INT32_MAX) {
        if (why) snprintf(why, n, "problem too large");
        return 0;
    }
    return 1;
}

static size_t bf_workspace(const tc__problem *p, const tc__env *env) {
    bf_geom g;
    bf_geom_make(p, env, &g);
    return g.xpbytes + g.runbytes + g.biasbytes + (size_t)env->threads * (g.tbbytes + g.pkbytes);
}

static size_t bf_wpack_size(const tc__problem *p, const tc__env *env) {
    bf_geom g;
    bf_geom_make(p, env, &g);
    if (g.dw) return (size_t)(bf_cdiv(p->C, 32) * 32 * g.nruns) * sizeof(float);
    return (size_t)(g.wmw + p->G * g.nkb * g.kruns * g.kpairs * g.nr * 2) * 2;
}

static tc_status bf_wpack(const tc__problem *p, const tc__env *env, const void *state,
                          const void *w, void *dst) {
    (void)state;
    bf_geom g;
    bf_geom_make(p, env, &g);
    const uint16_t *ws = w;
    uint16_t *d = dst;
    const int64_t NR = g.nr, R = g.nruns;
    if (g.dw) { /* fp32 [32-channel block][tap][16 even][16 odd] */
        float *f = dst;
        for (int64_t b = 0; b < bf_cdiv(p->C, 32); b++)
            for (int64_t r = 0; r < R; r++)
                for (int j = 0; j < 32; j++) {
                    int64_t c = b * 32 + (j < 16 ? 2 * j : 2 * (j - 16) + 1);
                    *f++ = c < p->C ? tc__bf16_to_f32(ws[c * R + r]) : 0.0f;
                }
        return TC_OK;
    }
    if (g.mw) { /* [g][K block][run (r0, r1)][pair of e = r2*Cg + c][NR][2] */
        const int64_t m2 = p->msk[2];
        for (int64_t gi = 0; gi < p->G; gi++)
            for (int64_t kb = 0; kb < g.nkb; kb++)
                for (int64_t j = 0; j < g.mwruns; j++)
                    for (int64_t q = 0; q < g.mwpairs; q++)
                        for (int64_t jj = 0; jj < NR; jj++)
                            for (int h = 0; h < 2; h++) {
                                int64_t k = kb * NR + jj, r2 = (2 * q + h) / g.Cg, c = (2 * q + h) % g.Cg;
                                *d++ = k < g.Kg && r2 < m2 ? ws[((gi * g.Kg + k) * g.Cg + c) * R + j * m2 + r2] : 0;
                            }
    }
    if (g.pk) { /* [g][K block][pair of l = tap*Cg + c][NR][2] */
        for (int64_t gi = 0; gi < p->G; gi++)
            for (int64_t kb = 0; kb < g.nkb; kb++)
                for (int64_t l = 0; l < g.Lp; l += 2)
                    for (int64_t j = 0; j < NR; j++)
                        for (int h = 0; h < 2; h++) {
                            int64_t k = kb * NR + j, r = (l + h) / g.Cg, c = (l + h) % g.Cg;
                            *d++ = k < g.Kg && r < R ? ws[((gi * g.Kg + k) * g.Cg + c) * R + r] : 0;
                        }
        return TC_OK;
    }
    for (int64_t gi = 0; gi < p->G; gi++)
        for (int64_t kb = 0; kb < g.nkb; kb++)
            for (int64_t r = 0; r < R; r++)
                for (int64_t q = 0; q < g.npairs; q++)
                    for (int64_t j = 0; j < NR; j++)
                        for (int h = 0; h < 2; h++) {
                            int64_t k = kb * NR + j, c = 2 * q + h;
                            uint16_t v = 0;
                            if (k < g.Kg && c < g.Cg)
                                v = ws[((gi * g.Kg + k) * g.Cg + c) * R + r];
                            *d++ = v;
                        }
    return TC_OK;
}

typedef struct bf_job {
    const tc__args *a;
    const bf_geom *g;
    const uint16_t *src;     /* source image */
    const int64_t *runoff;
    const int64_t *mwoff;    /* mw: offsets of the runs (taps (r0, r1, 0)) */
    int nonfinite;           /* mw: the copy holds an inf or NaN: the runs'
                                extra element times a zero weight would make
                                NaN, so the pk form runs instead */
} bf_job;

/* The padded channels-last copy: one task per (n, e0, e1) row. */
static void bf_copy_rows(void *arg, int64_t b, int64_t e, int tid) {
    (void)tid;
    const bf_job *jb = arg;
    const tc__problem *p = jb->a->p;
    const bf_geom *g = jb->g;
    const uint16_t *x = jb->a->x;
    uint16_t *xp = (uint16_t *)jb->src;
    const uint16_t cv = tc__f32_to_bf16((float)p->cval);
    const int cl = p->layout == TC_LAYOUT_CHANNELS_LAST;
    const int64_t in0 = p->in[0], in1 = p->in[1], in2 = p->in[2];
    const int64_t plane = in0 * in1 * in2;
    for (int64_t row = b; row < e; row++) {
        int64_t e1 = row % g->X[1], t = row / g->X[1];
        int64_t e0 = t % g->X[0], n = t / g->X[0];
        int64_t i0 = tc__boundary_index(e0 - p->pad_lo[0], in0, p->mode);
        int64_t i1 = tc__boundary_index(e1 - p->pad_lo[1], in1, p->mode);
        uint16_t *d = xp + row * g->X[2] * g->PS;
        /* channels-first, the columns inside the input: blocks of 32
         * pixels transposed reading whole lines of each channel */
        int64_t lo = p->pad_lo[2] < 0 ? 0 : p->pad_lo[2];
        int64_t hi = in2 + p->pad_lo[2] < g->X[2] ? in2 + p->pad_lo[2] : g->X[2];
        if (i0 < 0 || i1 < 0 || hi < lo || (cl && g->Cgp != g->Cg)) lo = hi = 0;
        if (cl && hi > lo) /* channels-last, no pair padding: one copy */
            memcpy(d + lo * g->PS, x + ((n * in0 + i0) * in1 + i1) * in2 * p->C + (lo - p->pad_lo[2]) * p->C,
                   (size_t)((hi - lo) * p->C) * 2);
        for (int64_t b0 = lo; b0 < hi && !cl; b0 += 32) {
            int64_t nb = hi - b0 < 32 ? hi - b0 : 32;
            const uint16_t *s = x + n * p->C * plane + (i0 * in1 + i1) * in2 + b0 - p->pad_lo[2];
            uint16_t *db = d + b0 * g->PS;
            for (int64_t gi = 0; gi < p->G; gi++) {
                for (int64_t c = 0; c < g->Cg; c++) {
                    const uint16_t *sc = s + (gi * g->Cg + c) * plane;
                    uint16_t *dc = db + gi * g->Cgp + c;
                    for (int64_t j = 0; j < nb; j++) dc[j * g->PS] = sc[j];
                }
                if (g->Cgp > g->Cg)
                    for (int64_t j = 0; j < nb; j++) db[j * g->PS + gi * g->Cgp + g->Cg] = 0;
            }
        }
        for (int64_t e2 = 0; e2 < g->X[2]; e2++, d += g->PS) {
            if (e2 == lo && hi > lo) {
                d += (hi - lo) * g->PS;
                e2 = hi;
                if (e2 >= g->X[2]) break;
            }
            int64_t i2 = tc__boundary_index(e2 - p->pad_lo[2], in2, p->mode);
            if (i0 < 0 || i1 < 0 || i2 < 0) {
                for (int64_t gi = 0; gi < p->G; gi++) {
                    for (int64_t c = 0; c < g->Cg; c++) d[gi * g->Cgp + c] = cv;
                    if (g->Cgp > g->Cg) d[gi * g->Cgp + g->Cg] = 0;
                }
                continue;
            }
            int64_t pix = (i0 * in1 + i1) * in2 + i2;
            if (cl) {
                const uint16_t *s = x + (n * plane + pix) * p->C;
                if (g->Cgp == g->Cg) {
                    memcpy(d, s, (size_t)p->C * 2);
                } else {
                    for (int64_t gi = 0; gi < p->G; gi++) {
                        memcpy(d + gi * g->Cgp, s + gi * g->Cg, (size_t)g->Cg * 2);
                        d[gi * g->Cgp + g->Cg] = 0;
                    }
                }
            } else {
                const uint16_t *s = x + n * p->C * plane + pix;
                for (int64_t gi = 0; gi < p->G; gi++) {
                    for (int64_t c = 0; c < g->Cg; c++)
                        d[gi * g->Cgp + c] = s[(gi * g->Cg + c) * plane];
                    if (g->Cgp > g->Cg) d[gi * g->Cgp + g->Cg] = 0;
                }
            }
        }
        if (g->mw && !__atomic_load_n(&jb->nonfinite, __ATOMIC_RELAXED) &&
            tc__bf16_any_nonfinite(xp + row * g->X[2] * g->PS, g->X[2] * g->PS))
            __atomic_store_n(&((bf_job *)jb)->nonfinite, 1, __ATOMIC_RELAXED);
    }
}

/* The padded channels-last copy for cpu.conv.winograd-f2-bf16
 * (conv_bf16_winograd.c): extents X, each group's channels padded to Cgp. */
void tc__bf16_pad_copy(const tc__args *a, const int64_t X[3], int64_t Cgp, uint16_t *dst) {
    bf_geom g;
    memset(&g, 0, sizeof g);
    g.Cg = a->p->C / a->p->G;
    g.Cgp = Cgp;
    for (int i = 0; i < 3; i++) g.X[i] = X[i];
    g.PS = a->p->G * Cgp;
    bf_job jb = {.a = a, .g = &g, .src = dst};
    tc__parallel_for(a->threads, a->p->N * X[0] * X[1], bf_copy_rows, &jb);
}

static void bf_items(void *arg, int64_t b, int64_t e, int tid) {
    const bf_job *jb = arg;
    const tc__args *a = jb->a;
    const tc__problem *p = a->p;
    const bf_geom *g = jb->g;
    const int cl = p->layout == TC_LAYOUT_CHANNELS_LAST;
    const int64_t MR = g->mr, NR = g->nr;
    const int64_t o1n = p->out[1], o2n = p->out[2];
    const int64_t P = p->out[0] * o1n * o2n, NP = p->N * P;
    float bias[1024];
    int64_t roff[BF_MAXMR], pix[BF_MAXMR];
    uint16_t *outp[BF_MAXMR];
    const uint16_t *resp[BF_MAXMR];
    float *tb = cl ? NULL
                   : (float *)((char *)a->ws + g->xpbytes + g->runbytes + g->biasbytes +
                               (size_t)tid * (g->tbbytes + g->pkbytes));
    uint16_t *pk = (uint16_t *)((char *)a->ws + g->xpbytes + g->runbytes + g->biasbytes +
                                (size_t)tid * (g->tbbytes + g->pkbytes) + g->tbbytes);
    static const int64_t zero_off = 0;
    const int mw = g->mw && !__atomic_load_n(&jb->nonfinite, __ATOMIC_RELAXED);
    const int pkm = g->pk && !mw;
    /* pk: runs of whole taps along the last axis when contiguous (one
     * group, dilation 1), else one tap */
    const int64_t pkstep = p->G == 1 && p->dil[2] == 1 ? p->msk[2] : 1;
    int64_t pkoff[BF_MAXMR];
    for (int i = 0; i < BF_MAXMR; i++) pkoff[i] = i * g->Lp;
    tc__bf16_tile t;
    t.roff = pkm ? pkoff : roff;
    t.runoff = pkm ? &zero_off : mw ? jb->mwoff : jb->runoff;
    t.nruns = (int)(mw ? g->mwruns : g->kruns);
    t.npairs = (int)(mw ? g->mwpairs : g->kpairs);
    t.row0 = 0;
    t.res = p->has_residual && cl ? resp : NULL;
    t.out = cl ? outp : NULL;
    t.bias = bias;
    t.act = (int)p->act;
    t.tb = tb;
    int64_t lastkey = -1;
    for (int64_t it = b; it < e; it++) {
        int64_t ch = it % g->nchunk, u = it / g->nchunk;
        int64_t kb = g->kin ? 0 : u % g->nkb, gi = g->kin ? u : u / g->nkb;
        int64_t k0 = gi * g->Kg + kb * NR; /* first output channel */
        int nch = (int)(g->Kg - kb * NR < NR ? g->Kg - kb * NR : NR);
        if (u != lastkey) {
            for (int64_t j = 0; j < (g->kin ? g->nkb * NR : NR); j++) {
                float v = 0.0f;
                if (p->has_bias && kb * NR + j < g->Kg)
                    v = tc__bf16_to_f32(((const uint16_t *)a->bias)[k0 + j]);
                bias[j] = v;
            }
            lastkey = u;
        }
        const size_t wblk = (size_t)(t.nruns * t.npairs * NR * 2);
        const uint16_t *w0 = (const uint16_t *)a->wpack + (mw ? 0 : g->wmw) + (gi * g->nkb + kb) * wblk;
        const uint16_t *src = jb->src + gi * (g->inplace ? g->Cg : g->Cgp);
        t.x = pkm ? pk : src;
        int64_t t1 = (ch + 1) * BF_CHUNK < g->ntile ? (ch + 1) * BF_CHUNK : g->ntile;
        /* the chunk's first pixel; then stepped, not divided */
        int64_t q = ch * BF_CHUNK * MR;
        int64_t o2 = q % o2n, r = q / o2n;
        int64_t o1 = r % o1n;
        r /= o1n;
        int64_t o0 = r % p->out[0], n = r / p->out[0];
        const int64_t s2 = p->stride[2] * g->PS, s1 = p->stride[1] * g->X[2] * g->PS;
        const int64_t s0 = p->stride[0] * g->X[1] * g->X[2] * g->PS;
        const int64_t sn = g->X[0] * g->X[1] * g->X[2] * g->PS;
        int64_t ro1 = n * sn + o0 * s0 + o1 * s1; /* offset of (n, o0, o1, 0) */
        for (int64_t ti = ch * BF_CHUNK; ti < t1; ti++) {
            /* rows: output pixels ti*MR.. (the last tile repeats its last
             * pixel in the rows past the end, not stored) */
            for (int i = 0; i < MR; i++, q++) {
                if (q >= NP) {
                    roff[i] = roff[i - 1];
                    pix[i] = -1;
                    continue;
                }
                roff[i] = ro1 + o2 * s2;
                pix[i] = q;
                if (++o2 == o2n) {
                    o2 = 0;
                    ro1 += s1;
                    if (++o1 == o1n) {
                        o1 = 0;
                        ro1 += s0 - o1n * s1;
                        if (++o0 == p->out[0]) {
                            o0 = 0;
                            ro1 += sn - p->out[0] * s0;
                        }
                    }
                }
            }
            if (cl) {
                for (int i = 0; i < MR; i++) {
                    int64_t off = pix[i] * p->K + k0;
                    outp[i] = pix[i] < 0 ? NULL : (uint16_t *)a->y + off;
                    if (t.res) resp[i] = pix[i] < 0 ? NULL : (const uint16_t *)a->residual + off;
                }
            }
            t.nch = nch;
            t.w = w0;
            t.bias = bias;
            if (tb) t.tb = tb + (ti - ch * BF_CHUNK) * MR * NR;
            if (pkm) tc__bf16_pack_rows(src, roff, (int)MR, jb->runoff, g->nruns / pkstep,
                                          pkstep, g->Cg * pkstep, g->Lp, pk);
            g->ukr(&t);
            for (int64_t kb2 = 1; g->kin && kb2 < g->nkb; kb2++) {
                t.nch = (int)(g->Kg - kb2 * NR < NR ? g->Kg - kb2 * NR : NR);
                t.w += wblk;
                t.bias += NR;
                for (int i = 0; i < MR; i++) {
                    if (outp[i]) outp[i] += NR;
                    if (t.res && resp[i]) resp[i] += NR;
                }
                g->ukr(&t);
            }
        }
        if (!cl) { /* the chunk's pixels, per image: one channel row at a time */
            int64_t q0 = ch * BF_CHUNK * MR, q1 = t1 * MR < NP ? t1 * MR : NP;
            for (int64_t qa = q0; qa < q1;) {
                int64_t n = qa / P, pp = qa % P;
                int64_t qb = (n + 1) * P < q1 ? (n + 1) * P : q1;
                int64_t off = (n * p->K + k0) * P + pp;
                tc__bf16_store_cf(tb + (qa - q0) * NR, NR, qb - qa, nch, bias, (uint16_t *)a->y + off, P,
                                  p->has_residual ? (const uint16_t *)a->residual + off : NULL,
                                  (int)p->act);
                qa = qb;
            }
        }
    }
}

/* Depthwise: one output row per item, read in place. The taps whose rows
 * fall outside the input are mapped by the padding mode (dropped for
 * zeros); the pixels whose taps all lie inside the row run as one call,
 * the edge pixels one by one with their columns mapped. */
static void bf_dw_rows(void *arg, int64_t b, int64_t e, int tid) {
    (void)tid;
    const bf_job *jb = arg;
    const tc__args *a = jb->a;
    const tc__problem *p = a->p;
    const bf_geom *g = jb->g;
    const float *bias = (const float *)((const char *)a->ws + g->xpbytes + g->runbytes);
    const uint16_t *x = a->x;
    const int64_t C = p->C, in0 = p->in[0], in1 = p->in[1], in2 = p->in[2];
    const int64_t m0 = p->msk[0], m1 = p->msk[1], m2 = p->msk[2], nr = m0 * m1 * m2;
    const int64_t s2 = p->stride[2], d2 = p->dil[2], pl2 = p->pad_lo[2], o2n = p->out[2];
    /* interior pixels: ow*s2 - pl2 >= 0 and ow*s2 + (m2-1)*d2 - pl2 < in2 */
    int64_t lo = (pl2 + s2 - 1) / s2, hi = in2 - 1 - (m2 - 1) * d2 + pl2;
    hi = hi < 0 ? 0 : hi / s2 + 1;
    if (hi > o2n) hi = o2n;
    if (lo > hi) lo = hi;
    int64_t rowoff[BF_DW_MAXT], off[BF_DW_MAXT];
    int widx[BF_DW_MAXT], tix[BF_DW_MAXT];
    for (int64_t row = b; row < e; row++) {
        int64_t o1 = row % p->out[1], t = row / p->out[1];
        int64_t o0 = t % p->out[0], n = t / p->out[0];
        int nt = 0;
        for (int64_t r0 = 0; r0 < m0; r0++) {
            int64_t i0 = tc__boundary_index(o0 * p->stride[0] + r0 * p->dil[0] - p->pad_lo[0], in0, p->mode);
            for (int64_t r1 = 0; r1 < m1; r1++) {
                int64_t i1 = tc__boundary_index(o1 * p->stride[1] + r1 * p->dil[1] - p->pad_lo[1], in1, p->mode);
                if (i0 < 0 || i1 < 0) continue;
                for (int64_t r2 = 0; r2 < m2; r2++) {
                    rowoff[nt] = ((n * in0 + i0) * in1 + i1) * in2 * C;
                    tix[nt] = (int)((r0 * m1 + r1) * m2 + r2);
                    widx[nt] = tix[nt];
                    off[nt] = rowoff[nt] + (r2 * d2 - pl2) * C;
                    nt++;
                }
            }
        }
        int64_t yoff = ((n * p->out[0] + o0) * p->out[1] + o1) * o2n * C;
        uint16_t *y = (uint16_t *)a->y + yoff;
        const uint16_t *res = p->has_residual ? (const uint16_t *)a->residual + yoff : NULL;
        if (hi > lo)
            tc__bf16_dw_row(x + lo * s2 * C, C, s2 * C, off, widx, nt, (const float *)a->wpack,
                            (int)nr, bias, C, hi - lo, y + lo * C, res ? res + lo * C : NULL,
                            (int)p->act);
        for (int64_t ow = 0; ow < o2n; ow++) {
            if (ow == lo && hi > lo) ow = hi;
            if (ow >= o2n) break;
            int64_t pof[BF_DW_MAXT];
            int pw[BF_DW_MAXT], pt = 0;
            for (int j = 0; j < nt; j++) {
                int64_t r2 = tix[j] % m2;
                int64_t i2 = tc__boundary_index(ow * s2 + r2 * d2 - pl2, in2, p->mode);
                if (i2 < 0) continue;
                pof[pt] = rowoff[j] + i2 * C;
                pw[pt++] = widx[j];
            }
            tc__bf16_dw_row(x, C, 0, pof, pw, pt, (const float *)a->wpack, (int)nr, bias, C, 1,
                            y + ow * C, res ? res + ow * C : NULL, (int)p->act);
        }
    }
}

static tc_status bf_execute(const tc__args *a) {
    const tc__problem *p = a->p;
    if (!bf_available()) return tc__error(TC_ERR_UNSUPPORTED, "cpu.conv.igemm-bf16: needs AVX512-BF16");
    if (!a->wpack) return tc__error(TC_ERR_INTERNAL, "cpu.conv.igemm-bf16: weights not packed");
    tc__env env = {.threads = a->threads};
    bf_geom g;
    bf_geom_make(p, &env, &g);
    bf_job jb = {.a = a, .g = &g};
    int64_t *runoff = (int64_t *)((char *)a->ws + g.xpbytes);
    for (int64_t r0 = 0, r = 0; r0 < p->msk[0]; r0++)
        for (int64_t r1 = 0; r1 < p->msk[1]; r1++)
            for (int64_t r2 = 0; r2 < p->msk[2]; r2++, r++)
                runoff[r] = ((r0 * p->dil[0] * g.X[1] + r1 * p->dil[1]) * g.X[2] + r2 * p->dil[2]) * g.PS;
    jb.runoff = runoff;
    jb.mwoff = runoff + g.nruns;
    for (int64_t j = 0; j < g.mwruns; j++) runoff[g.nruns + j] = runoff[j * p->msk[2]];
    if (g.mw) /* the slack pixel the last run's extra element reads */
        memset((uint16_t *)a->ws + p->N * g.X[0] * g.X[1] * g.X[2] * g.PS, 0, (size_t)g.PS * 2);
    if (g.inplace) {
        jb.src = a->x;
    } else {
        jb.src = a->ws;
        int64_t rows = p->N * g.X[0] * g.X[1];
        tc__parallel_for(a->threads, rows, bf_copy_rows, &jb);
    }
    if (g.dw) {
        float *bias = (float *)((char *)a->ws + g.xpbytes + g.runbytes);
        for (int64_t c = 0; c < bf_cdiv(p->C, 32) * 32; c++) {
            int64_t j = c % 32, ch = c - j + (j < 16 ? 2 * j : 2 * (j - 16) + 1);
            bias[c] = p->has_bias && ch < p->C ? tc__bf16_to_f32(((const uint16_t *)a->bias)[ch]) : 0.0f;
        }
        tc__parallel_for(a->threads, g.items, bf_dw_rows, &jb);
        return TC_OK;
    }
    tc__parallel_for(a->threads, g.items, bf_items, &jb);
    return TC_OK;
}

/* Seconds: vdpbf16ps at ~95% of the model's bf16 peak (on the Zen 5 VM one
 * thread runs the 3x3 layers at 480-515 GFLOP/s; the model says 461, a
 * loop of independent vdpbf16ps 553) on the lanes the tiles use (odd
 * channel counts, partial K blocks, the last partial tile), plus the
 * padded copy and the memory traffic. */
static double bf_estimate(const tc__problem *p, const tc__env *env) {
    bf_geom g;
    bf_geom_make(p, env, &g);
    double t_copy = g.inplace ? 0.0 : (double)g.xpbytes * 2.0 / tc__peak_bandwidth(env);
    double t_mem = tc__problem_bytes(p) / tc__peak_bandwidth(env);
    if (g.dw) { /* fp32 FMAs on 32 channels a step; the input and output pass */
        double par = g.items >= env->threads ? 1.0 : (double)g.items / env->threads;
        double t_fma = tc__problem_flops(p) / (tc__peak_flops(env) * 0.35 * par);
        return (t_fma > t_mem ? t_fma : t_mem) + t_copy;
    }
    double fill_n = (double)g.Kg / (double)(g.nkb * g.nr);
    double fill_c = g.mw   ? (double)(g.nruns * g.Cg) / (double)(g.mwruns * g.mwpairs * 2)
                    : g.pk ? (double)(g.nruns * g.Cg) / (double)g.Lp
                           : (double)g.Cg / (double)g.Cgp;
    double fill_m = (double)(p->N * p->out[0] * p->out[1] * p->out[2]) / ((double)g.ntile * g.mr);
    double kfac = (double)(g.kruns * g.kpairs) / (double)(g.kruns * g.kpairs + 8);
    double eff = 0.95 * fill_n * fill_c * fill_m * kfac;
    double par = g.items >= env->threads ? 1.0 : (double)g.items / env->threads;
    double peak = tc__peak_flops(env) * tc__machine_flops_core_bf16() / tc__machine_flops_core();
    double t_fma = tc__problem_flops(p) / (peak * eff * par);
    return t_fma + t_copy + t_mem * 0.25;
}

const tc__solver tc__solver_cpu_conv_igemm_bf16 = {
    .name = "cpu.conv.igemm-bf16",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_CONV,
    .summary = "bfloat16 implicit GEMM on AVX512-BF16 (vdpbf16ps): channels-last pixels read in place or from a padded copy, weights packed in channel pairs, fused bias + activation + residual; every stride, dilation, group and padding mode.",
    .available = bf_available,
    .applicable = bf_applicable,
    .estimate = bf_estimate,
    .workspace = bf_workspace,
    .execute = bf_execute,
    .wpack_size = bf_wpack_size,
    .wpack = bf_wpack,
    .caps = TC__CAP_ALL,
};
