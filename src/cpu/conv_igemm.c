/* conv_igemm.c - implicit-GEMM convolution on the packed GEMM micro-kernels
 * (solver "cpu.conv.igemm"; seed 002's implicit GEMM, on the CPU).
 *
 * For image n and group g the layer is one GEMM,
 *
 *   y[n, g*Kg + k, p] = sum_l W_g[k, l] * X_g[l, p],   l = (c, r0, r1, r2),
 *
 * with X_g the im2col matrix of the seeds (Cg*R rows, P = out positions
 * columns). im2col materialises X_g; here it never exists: each thread packs
 * the slice of X_g that its micro-kernel calls need, KC rows x NB columns,
 * straight from the caller's NCHW input into the micro-kernel's NR-column
 * panel layout (gemm_packed.h), the boundary mode applied while gathering.
 * The packed B block (about half of L2) is then multiplied by every
 * MR-row A panel of the weights, which are packed once per plan
 * (tc_plan_conv_set_weights, wpack) or per call into the workspace.
 *
 * Gathering: the columns of a B block are cut into segments, runs of
 * consecutive output positions along the last axis that stay in one output
 * row and one NR panel. For a reduction row (c, r0, r1, r2) a segment reads
 * one input row: a straight (stride 1) or strided copy when it lies inside
 * the input, element-wise boundary mapping (tc__boundary_index) otherwise.
 * Positions run across rows, so panels stay full for any width (7x7 maps
 * to full 32-wide panels, not 7 of 32).
 *
 * Work items are (n, g, column block, group of A panels): the A-panel
 * groups split K when there are too few column blocks for the threads
 * (3x3 512->512 @7, batch 1: P = 49), at the cost of packing that B block
 * once per group. Each C tile sums its KC slices in order, so results do
 * not depend on the thread count. Bias is added per tile after the last
 * slice, while the tile is in cache.
 *
 * 1x1 layers with stride 1 and no padding skip the gather: B is the
 * input's Cg x P block as it lies, read in place (row stride P) by the 8x48
 * kernel with masked loads (gemm_ukernel_avx512.c): 1x1 256->64 @56 on one
 * core 0.51-0.58 ms against 0.77-0.93 ms packed
 * (docs/solvers/cpu-conv-igemm.md).
 *
 * Covers every conv the core lowers (any stride, dilation, groups, padding
 * mode, 1D/2D/3D) with the AVX-512 or AVX2 micro-kernels; float32 and
 * float64. */
#include "gemm_packed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ig_geom {
    int mr, nr, avx512;
    int directb;             /* 1x1, stride 1, no padding: B is the input */
    int ntstore;             /* directb with one K slice, no bias and an output of
                                2 MiB or more per image: non-temporal stores */
    tc__f32_gemm_ukernel_fn f32;
    tc__f64_gemm_ukernel_fn f64;
    int64_t Kg, Cg, R, P;    /* out/in channels per group, reduction, columns */
    int64_t npan;            /* A panels per group */
    int64_t kc, nb;          /* K slice, columns per B block (multiple of NR) */
    int64_t nblk, kgroups;   /* column blocks per image, A-panel groups */
    int64_t pan_per_group;   /* A panels per group of K */
    size_t bbytes, segbytes; /* per-thread B block and segment table */
} ig_geom;

#define IG_TABCAP 8192 /* row-table entries per thread (ig_rowtab) */

typedef struct ig_seg { /* a run of columns: one output row, one panel */
    int64_t o0, o1, o2;     /* first output position */
    int64_t col, len;       /* first column in the block, count */
} ig_seg;

/* conv_igemm_avx512.c */
void tc__ig_copy_f32_avx512(float *d, const float *src, int64_t len, int64_t stride);

static size_t ig_rup64(size_t v) { return (v + 63) & ~(size_t)63; }

/* Fraction of a dimension of n used when cut into tiles of t. */
static double ig_fill(int64_t n, int64_t t) {
    return (double)n / (double)(tc__cdiv64(n, t) * t);
}

/* Largest per-thread share of the column panels over the mean, when the
 * items (n, g, block, kgroup) of blocks of ppb panels (of tp per image) are
 * cut into the pool's contiguous chunks (threads.c: chunk t gets q or q+1
 * items). */
static double ig_imbalance(int64_t images, int64_t tp, int64_t ppb,
                           int64_t threads) {
    int64_t nblk = tc__cdiv64(tp, ppb), items = images * nblk;
    int64_t chunks = threads < items ? threads : items;
    int64_t q = items / chunks, r = items % chunks, worst = 0, start = 0;
    const int64_t lastw = tp - (nblk - 1) * ppb; /* the last block's panels */
    for (int64_t t = 0; t < chunks; t++) { /* O(chunks), whatever the items */
        int64_t end = start + q + (t < r);
        int64_t lasts = end / nblk - start / nblk; /* items it with it%nblk == nblk-1 */
        int64_t load = (end - start) * ppb - lasts * (ppb - lastw);
        if (load > worst) worst = load;
        start = end;
    }
    return (double)worst * (double)threads / (double)(images * tp);
}

static unsigned ig_isa(void) { return tc__cpu_detect() & tc__gemm_isa_mask; }

static int ig_geom_make(const tc__problem *p, const tc__env *env, ig_geom *g) {
    memset(g, 0, sizeof *g);
    unsigned isa = ig_isa();
    int f32 = p->dtype == TC_FLOAT32;
    if (isa & TC__CPU_AVX512) {
        g->mr = 14;
        g->nr = f32 ? 32 : 16;
        g->avx512 = 1;
        g->f32 = tc__f32_gemm_ukernel_14x32__avx512;
        g->f64 = tc__f64_gemm_ukernel_14x16__avx512;
        if (f32) { /* 8x48 where it fills the tiles better (K = 32, 64, ...) */
            int64_t Kg = p->K / p->G, P = p->out[0] * p->out[1] * p->out[2];
            double f14 = ig_fill(Kg, 14) * ig_fill(P, 32);
            double f8 = ig_fill(Kg, 8) * ig_fill(P, 48);
            /* 1x1 stride-1 unpadded layers: B is the input's C x P block
             * as it lies (row stride P), read in place by the 8x48 kernel:
             * no gather at all */
            int direct = 1;
            for (int a = 0; a < 3; a++)
                if (p->msk[a] != 1 || p->stride[a] != 1 || p->pad_lo[a] != 0 ||
                    p->out[a] != p->in[a])
                    direct = 0;
            g->directb = direct;
            if (f8 > f14 * 1.03 || g->directb) {
                g->mr = 8;
                g->nr = 48;
                g->f32 = tc__f32_gemm_ukernel_8x48__avx512;
            }
        }
    } else if (isa & TC__CPU_AVX2) {
        g->mr = 6;
        g->nr = f32 ? 16 : 8;
        g->f32 = tc__f32_gemm_ukernel_6x16__avx2;
        g->f64 = tc__f64_gemm_ukernel_6x8__avx2;
    } else {
        return 0;
    }
    const int64_t es = (int64_t)p->esize;
    g->Kg = p->K / p->G;
    g->Cg = p->C / p->G;
    g->R = g->Cg * p->msk[0] * p->msk[1] * p->msk[2];
    g->P = p->out[0] * p->out[1] * p->out[2];
    g->npan = tc__cdiv64(g->Kg, g->mr);
    /* KC: the A micro-panel in about half of a 32-48 KiB L1 */
    int64_t kc_max = 16384 / (g->mr * es);
    kc_max = kc_max < 64 ? 64 : kc_max & ~(int64_t)7;
    int64_t nk = tc__cdiv64(g->R, kc_max);
    g->kc = tc__cdiv64(g->R, nk);
    /* NB: the B block in about 384 KiB of L2 */
    int64_t nb = ((int64_t)384 << 10) / (g->kc * es) / g->nr * g->nr;
    if (nb < g->nr) nb = g->nr;
    int64_t pfull = tc__cdiv64(g->P, g->nr) * g->nr;
    if (nb > pfull) nb = pfull;
    /* too few column blocks for the threads: narrower blocks first (down to
     * one NR panel: a panel costs the same whether full or not, and nothing
     * is packed twice), then split K (each K group packs its B block) */
    int64_t want = 2 * (int64_t)env->threads;
    if (p->N * p->G * tc__cdiv64(g->P, nb) < want) {
        int64_t per = tc__cdiv64(tc__cdiv64(g->P, g->nr), tc__cdiv64(want, p->N * p->G));
        if (per < 1) per = 1;
        if (per * g->nr < nb) nb = per * g->nr;
    }
    /* few items: even out the threads' column panels (1x1 256->64 @56 cut
     * in 384-column blocks gave one thread 5 of 9 blocks: 1.22x the mean);
     * search block sizes from the L2 bound down, fewer blocks on ties */
    {
        int64_t tp = tc__cdiv64(g->P, g->nr), images = p->N * p->G;
        int64_t ppb0 = nb / g->nr;
        if (env->threads > 1 && images * tc__cdiv64(tp, ppb0) < 16 * (int64_t)env->threads) {
            int64_t best = ppb0;
            double bi = ig_imbalance(images, tp, ppb0, env->threads);
            for (int64_t ppb = ppb0 - 1; ppb >= 1 && ppb * 3 >= ppb0; ppb--) {
                double im = ig_imbalance(images, tp, ppb, env->threads);
                if (im < bi - 0.01) {
                    bi = im;
                    best = ppb;
                }
            }
            nb = best * g->nr;
        }
    }
    g->nb = nb;
    g->nblk = tc__cdiv64(g->P, nb);
    int64_t items = p->N * p->G * g->nblk;
    g->kgroups = 1;
    if (items < env->threads) {
        g->kgroups = tc__cdiv64(env->threads, items);
        if (g->kgroups > g->npan) g->kgroups = g->npan;
    }
    g->pan_per_group = tc__cdiv64(g->npan, g->kgroups);
    /* 1x1 64->256 @56 (3.2 MB out), 2 threads: min of 300 executes
     * 0.249-0.260 ms streamed vs 0.264-0.267 ms cached; 256->64 (0.8 MB)
     * medians slower streamed (docs/solvers/cpu-conv-igemm.md) */
    g->ntstore = g->directb && f32 && g->kc == g->R && !p->has_bias &&
                 (double)p->K * g->P * es >= 2.0 * 1024 * 1024;
    g->kgroups = tc__cdiv64(g->npan, g->pan_per_group);
    g->bbytes = ig_rup64((size_t)(g->kc * g->nb * es));
    g->segbytes = ig_rup64((size_t)g->nb * sizeof(ig_seg)) +
                  ig_rup64((size_t)IG_TABCAP * sizeof(int64_t));
    return 1;
}

static int ig_available(void) {
    return (tc__cpu_detect() & (TC__CPU_AVX2 | TC__CPU_AVX512)) != 0;
}

static int ig_applicable(const tc__problem *p, const tc__env *env, char *why,
                         size_t n) {
    if (p->op != TC_OP_CONV) {
        if (why) snprintf(why, n, "convolution layers only");
        return 0;
    }
    ig_geom g;
    if (!ig_geom_make(p, env, &g)) {
        if (why) snprintf(why, n, "needs AVX2+FMA or AVX-512");
        return 0;
    }
    int64_t t;
    if (!tc__mul_ok(g.npan * g.mr, g.R, &t) || !tc__mul_ok(t, p->G, &t) ||
        !tc__mul_ok(t, (int64_t)p->esize, &t)) {
        if (why) snprintf(why, n, "packed weights overflow");
        return 0;
    }
    return 1;
}

static size_t ig_workspace(const tc__problem *p, const tc__env *env) {
    ig_geom g;
    if (!ig_geom_make(p, env, &g)) return 0;
    return (size_t)env->threads * (g.bbytes + g.segbytes);
}

static size_t ig_wpack_size(const tc__problem *p, const tc__env *env) {
    ig_geom g;
    if (!ig_geom_make(p, env, &g)) return 0;
    return (size_t)(p->G * g.npan * g.mr * g.R) * p->esize;
}

/* A panels: [g][q][l][i] = W[g*Kg + q*MR + i][l], zero rows past Kg. */
static tc_status ig_wpack(const tc__problem *p, const tc__env *env,
                          const void *state, const void *w, void *dst) {
    ig_geom g;
    if (!ig_geom_make(p, env, &g)) return tc__error(TC_ERR_UNSUPPORTED, "cpu.conv.igemm: no ISA");
    const int64_t mr = g.mr, R = g.R;
    for (int64_t gi = 0; gi < p->G; gi++)
        for (int64_t q = 0; q < g.npan; q++) {
            int64_t base = (gi * g.npan + q) * R * mr;
            for (int64_t i = 0; i < mr; i++) {
                int64_t k = q * mr + i;
                if (p->dtype == TC_FLOAT32) {
                    float *d = (float *)dst + base + i;
                    const float *s = (const float *)w + (gi * g.Kg + k) * R;
                    for (int64_t l = 0; l < R; l++) d[l * mr] = k < g.Kg ? s[l] : 0.0f;
                } else {
                    double *d = (double *)dst + base + i;
                    const double *s = (const double *)w + (gi * g.Kg + k) * R;
                    for (int64_t l = 0; l < R; l++) d[l * mr] = k < g.Kg ? s[l] : 0.0;
                }
            }
        }
    return TC_OK;
}

/* Cuts columns [c0, c1) into segments; returns their count. */
static int64_t ig_segments(const tc__problem *p, const ig_geom *g, int64_t c0,
                           int64_t c1, ig_seg *seg) {
    const int64_t W2 = p->out[2], W1 = p->out[1];
    int64_t ns = 0, c = c0;
    while (c < c1) {
        int64_t o2 = c % W2, t = c / W2;
        int64_t o1 = t % W1, o0 = t / W1;
        int64_t len = W2 - o2;
        int64_t pan_end = c0 + ((c - c0) / g->nr + 1) * g->nr;
        if (c + len > pan_end) len = pan_end - c;
        if (c + len > c1) len = c1 - c;
        seg[ns].o0 = o0;
        seg[ns].o1 = o1;
        seg[ns].o2 = o2;
        seg[ns].col = c - c0;
        seg[ns].len = len;
        ns++;
        c += len;
    }
    return ns;
}

/* Row table of a block: tab[s*m0*m1 + r0*m1 + r1] = the input row (index
 * b0*in1 + b1 within a plane) that segment s reads for taps (r0, r1), or -1
 * where the padding mode gives the constant; built once per block instead
 * of two boundary mappings per segment and reduction row. */
static const int64_t *ig_rowtab(const tc__problem *p, const ig_seg *seg,
                                int64_t ns, int64_t *tab) {
    const int64_t m0 = p->msk[0], m1 = p->msk[1];
    if (ns * m0 * m1 > IG_TABCAP) return NULL;
    for (int64_t s = 0; s < ns; s++)
        for (int64_t r0 = 0; r0 < m0; r0++) {
            int64_t b0 = tc__boundary_index(seg[s].o0 * p->stride[0] + r0 * p->dil[0] - p->pad_lo[0],
                                            p->in[0], p->mode);
            for (int64_t r1 = 0; r1 < m1; r1++) {
                int64_t b1 = tc__boundary_index(seg[s].o1 * p->stride[1] + r1 * p->dil[1] - p->pad_lo[1],
                                                p->in[1], p->mode);
                tab[(s * m0 + r0) * m1 + r1] = b0 < 0 || b1 < 0 ? -1 : b0 * p->in[1] + b1;
            }
        }
    return tab;
}

/* Packs rows [l0, l0+kc) x columns of the segments of image n, group gi,
 * into NR-wide panels: dst[(col/NR)*kc*NR + (l-l0)*NR + col%NR]. */
#define IG_PACK(T, SFX)                                                          \
    static void ig_pack_##SFX(const tc__problem *p, const ig_geom *g,           \
                              const T *x, int64_t n, int64_t gi, int64_t l0,    \
                              int64_t kc, const ig_seg *seg, int64_t ns,        \
                              const int64_t *tab, int64_t ncols,                \
                              T *restrict dst) {                                \
        const int64_t NR = g->nr, m0 = p->msk[0], m1 = p->msk[1], m2 = p->msk[2]; \
        const int64_t in0 = p->in[0], in1 = p->in[1], in2 = p->in[2];           \
        const int64_t s0 = p->stride[0], s1 = p->stride[1], s2 = p->stride[2];  \
        const T cval = (T)p->cval;                                              \
        const int64_t m01 = m0 * m1;                                            \
        int64_t r2 = l0 % m2, t = l0 / m2;                                      \
        int64_t r1 = t % m1;                                                    \
        t /= m1;                                                                \
        int64_t r0 = t % m0, c = t / m0;                                        \
        const int64_t npanels = tc__cdiv64(ncols, NR);                          \
        for (int64_t l = 0; l < kc; l++) {                                      \
            const T *plane = x + ((n * p->C + gi * g->Cg + c) * in0) * in1 * in2; \
            const int64_t a0 = r0 * p->dil[0] - p->pad_lo[0];                   \
            const int64_t a1 = r1 * p->dil[1] - p->pad_lo[1];                   \
            const int64_t a2 = r2 * p->dil[2] - p->pad_lo[2];                   \
            for (int64_t s = 0; s < ns; s++) {                                  \
                const ig_seg *sg = &seg[s];                                     \
                T *d = dst + (sg->col / NR) * kc * NR + l * NR + sg->col % NR;  \
                const int64_t len = sg->len;                                    \
                int64_t rowi;                                                   \
                if (tab) {                                                      \
                    rowi = tab[s * m01 + r0 * m1 + r1];                         \
                } else {                                                        \
                    int64_t b0 = tc__boundary_index(sg->o0 * s0 + a0, in0, p->mode); \
                    int64_t b1 = tc__boundary_index(sg->o1 * s1 + a1, in1, p->mode); \
                    rowi = b0 < 0 || b1 < 0 ? -1 : b0 * in1 + b1;               \
                }                                                               \
                if (rowi < 0) {                                                 \
                    for (int64_t j = 0; j < len; j++) d[j] = cval;              \
                    continue;                                                   \
                }                                                               \
                const T *row = plane + rowi * in2;                              \
                const int64_t first = sg->o2 * s2 + a2;                         \
                const int64_t last = first + (len - 1) * s2;                    \
                if (first >= 0 && last < in2) {                                 \
                    const T *src = row + first;                                 \
                    if (FAST(T))                                                \
                        tc__ig_copy_f32_avx512((float *)d, (const float *)src, len, s2); \
                    else if (s2 == 1)                                           \
                        for (int64_t j = 0; j < len; j++) d[j] = src[j];        \
                    else                                                        \
                        for (int64_t j = 0; j < len; j++) d[j] = src[j * s2];   \
                } else { /* edges element-wise, the inside as a copy */         \
                    int64_t jlo = first >= 0 ? 0 : tc__cdiv64(-first, s2);      \
                    int64_t jhi = last < in2 ? len                               \
                                  : first >= in2 ? 0 : (in2 - 1 - first) / s2 + 1; \
                    if (jlo > len) jlo = len;                                   \
                    if (jhi < jlo) jhi = jlo;                                   \
                    for (int64_t j = 0; j < jlo; j++) {                         \
                        int64_t b2 = tc__boundary_index(first + j * s2, in2, p->mode); \
                        d[j] = b2 < 0 ? cval : row[b2];                         \
                    }                                                           \
                    if (jhi > jlo) { /* else row + first may lie far outside */ \
                        const T *src = row + first + jlo * s2;                  \
                        if (FAST(T))                                            \
                            tc__ig_copy_f32_avx512((float *)d + jlo, (const float *)src, \
                                                   jhi - jlo, s2);              \
                        else                                                    \
                            for (int64_t j = jlo; j < jhi; j++) d[j] = src[(j - jlo) * s2]; \
                    }                                                           \
                    for (int64_t j = jhi; j < len; j++) {                       \
                        int64_t b2 = tc__boundary_index(first + j * s2, in2, p->mode); \
                        d[j] = b2 < 0 ? cval : row[b2];                         \
                    }                                                           \
                }                                                               \
            }                                                                   \
            if (++r2 == m2) {                                                   \
                r2 = 0;                                                         \
                if (++r1 == m1) {                                               \
                    r1 = 0;                                                     \
                    if (++r0 == m0) {                                           \
                        r0 = 0;                                                 \
                        c++;                                                    \
                    }                                                           \
                }                                                               \
            }                                                                   \
        }                                                                       \
        /* zero the tail of a partial last panel */                             \
        int64_t tail = ncols % NR;                                              \
        if (tail) {                                                             \
            T *d = dst + (npanels - 1) * kc * NR;                               \
            for (int64_t l = 0; l < kc; l++)                                    \
                for (int64_t j = tail; j < NR; j++) d[l * NR + j] = 0;          \
        }                                                                       \
    }
#define FAST(T) (sizeof(T) == 4 && g->avx512)
IG_PACK(float, f32)
IG_PACK(double, f64)
#undef FAST

typedef struct ig_job {
    const tc__args *a;
    ig_geom g;
} ig_job;

static void ig_items(void *arg, int64_t begin, int64_t end, int tid) {
    ig_job *jb = arg;
    const tc__args *a = jb->a;
    const tc__problem *p = a->p;
    const ig_geom *g = &jb->g;
    const int f32 = p->dtype == TC_FLOAT32;
    const int64_t es = (int64_t)p->esize, NR = g->nr, MR = g->mr;
    char *mine = (char *)a->ws + (size_t)tid * (g->bbytes + g->segbytes);
    void *bbuf = mine;
    ig_seg *seg = (ig_seg *)(mine + g->bbytes);
    for (int64_t it = begin; it < end; it++) {
        int64_t kg = it % g->kgroups, t = it / g->kgroups;
        int64_t blk = t % g->nblk;
        t /= g->nblk;
        int64_t gi = t % p->G, n = t / p->G;
        int64_t c0 = blk * g->nb, c1 = c0 + g->nb < g->P ? c0 + g->nb : g->P;
        int64_t ncols = c1 - c0, npanels = tc__cdiv64(ncols, NR);
        int64_t q0 = kg * g->pan_per_group;
        int64_t q1 = q0 + g->pan_per_group < g->npan ? q0 + g->pan_per_group : g->npan;
        int64_t ns = ig_segments(p, g, c0, c1, seg);
        const int64_t *tab = ig_rowtab(
            p, seg, ns, (int64_t *)((char *)seg + ig_rup64((size_t)g->nb * sizeof(ig_seg))));
        for (int64_t l0 = 0; l0 < g->R; l0 += g->kc) {
            int64_t kc = g->R - l0 < g->kc ? g->R - l0 : g->kc;
            if (g->directb)
                ; /* B in place */
            else if (f32)
                ig_pack_f32(p, g, (const float *)a->x, n, gi, l0, kc, seg, ns, tab, ncols, bbuf);
            else
                ig_pack_f64(p, g, (const double *)a->x, n, gi, l0, kc, seg, ns, tab, ncols, bbuf);
            if (g->directb) {
                /* B read in place: each 48-column panel of the input
                 * (kc x 48, in L1) against every A panel of the group
                 * (contiguous, streamed from L2), rather than the whole
                 * B block from L2 for each A panel */
                for (int64_t j = 0; j < npanels; j++) {
                    int nr = (int)(ncols - j * NR < NR ? ncols - j * NR : NR);
                    const float *bj = (const float *)a->x +
                                      (n * p->C + gi * g->Cg + l0) * g->P + c0 + j * NR;
                    for (int64_t q = q0; q < q1; q++) {
                        int mr = (int)(g->Kg - q * MR < MR ? g->Kg - q * MR : MR);
                        const float *ap =
                            (const float *)a->wpack + ((gi * g->npan + q) * g->R + l0) * MR;
                        float *yq = (float *)a->y + (n * p->K + gi * g->Kg + q * MR) * g->P +
                                    c0 + j * NR;
                        if (g->ntstore)
                            tc__f32_gemm_ukernel_8x48_ldb_nt__avx512(kc, ap, bj, g->P, yq, g->P,
                                                                     mr, nr);
                        else
                            tc__f32_gemm_ukernel_8x48_ldb__avx512(kc, ap, bj, g->P, yq, g->P,
                                                                  l0 ? 1.0f : 0.0f, mr, nr);
                    }
                }
                continue;
            }
            for (int64_t q = q0; q < q1; q++) {
                int mr = (int)(g->Kg - q * MR < MR ? g->Kg - q * MR : MR);
                int64_t krow = gi * g->Kg + q * MR;
                const char *ap = (const char *)a->wpack +
                                 (size_t)(((gi * g->npan + q) * g->R + l0) * MR * es);
                for (int64_t j = 0; j < npanels; j++) {
                    int nr = (int)(ncols - j * NR < NR ? ncols - j * NR : NR);
                    int64_t yoff = (n * p->K + krow) * g->P + c0 + j * NR;
                    const char *bp = (const char *)bbuf + (size_t)(j * kc * NR * es);
                    if (f32)
                        g->f32(kc, (const float *)ap, (const float *)bp,
                               (float *)a->y + yoff, g->P, 1.0f, l0 ? 1.0f : 0.0f, mr, nr);
                    else
                        g->f64(kc, (const double *)ap, (const double *)bp,
                               (double *)a->y + yoff, g->P, 1.0, l0 ? 1.0 : 0.0, mr, nr);
                }
            }
        }
        if (p->has_bias) {
            int64_t k0 = q0 * MR, k1 = q1 * MR < g->Kg ? q1 * MR : g->Kg;
            for (int64_t k = k0; k < k1; k++) {
                int64_t kk = gi * g->Kg + k;
                int64_t off = (n * p->K + kk) * g->P + c0;
                if (f32) {
                    float b = ((const float *)a->bias)[kk], *yy = (float *)a->y + off;
                    for (int64_t c = 0; c < ncols; c++) yy[c] += b;
                } else {
                    double b = ((const double *)a->bias)[kk], *yy = (double *)a->y + off;
                    for (int64_t c = 0; c < ncols; c++) yy[c] += b;
                }
            }
        }
    }
    if (g->ntstore) __builtin_ia32_sfence(); /* the streamed rows before the pool's join */
}

static tc_status ig_execute(const tc__args *a) {
    const tc__problem *p = a->p;
    ig_job jb;
    jb.a = a;
    tc__env env = {.threads = a->threads};
    if (!ig_geom_make(p, &env, &jb.g))
        return tc__error(TC_ERR_UNSUPPORTED, "cpu.conv.igemm: needs AVX2+FMA or AVX-512");
    if (!a->wpack)
        return tc__error(TC_ERR_INTERNAL, "cpu.conv.igemm: weights not packed");
    int64_t items = p->N * p->G * jb.g.nblk * jb.g.kgroups;
    tc__parallel_for(a->threads, items, ig_items, &jb);
    return TC_OK;
}

/* Seconds: the micro-kernel at ~80% of peak on full tiles (partial MR
 * panels and short reductions waste lanes), plus the gather: every B
 * element is written once per A-panel group and read once per A panel from
 * L2, ~1 ns per 16 elements per thread. */
static double ig_estimate(const tc__problem *p, const tc__env *env) {
    ig_geom g;
    if (!ig_geom_make(p, env, &g)) return 1e30;
    double fill_m = (double)g.Kg / (double)(g.npan * g.mr);
    double fill_n = (double)g.P / (double)(tc__cdiv64(g.P, g.nr) * g.nr);
    double kfac = (double)g.R / (double)(g.R + 24);
    double eff = 0.80 * fill_m * fill_n * kfac;
    double items = (double)(p->N * p->G * g.nblk * g.kgroups);
    double par = items >= env->threads ? 1.0 : items / env->threads;
    if (g.kgroups == 1 && env->threads > 1)
        par /= ig_imbalance(p->N * p->G, tc__cdiv64(g.P, g.nr), g.nb / g.nr, env->threads);
    double t_fma = tc__problem_flops(p) / (tc__peak_flops(env) * eff * par);
    double gathered = g.directb ? 0.0 : (double)p->N * p->G * g.kgroups * (double)g.R * g.P;
    double t_pack = gathered * (p->dtype == TC_FLOAT32 ? 1.0 : 2.0) / 16.0 * 1e-9 /
                    env->threads;
    double t_mem = tc__problem_bytes(p) / tc__peak_bandwidth(env);
    return t_fma + t_pack + t_mem * 0.5;
}

const tc__solver tc__solver_cpu_conv_igemm = {
    .name = "cpu.conv.igemm",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_CONV,
    .summary = "implicit GEMM: im2col panels gathered straight into the packed GEMM micro-kernel's layout, weights packed once; every stride, dilation, group and padding mode.",
    .available = ig_available,
    .applicable = ig_applicable,
    .estimate = ig_estimate,
    .workspace = ig_workspace,
    .execute = ig_execute,
    .wpack_size = ig_wpack_size,
    .wpack = ig_wpack,
};
