/* separable.c - filters whose mask is a sum of few outer products.
 *
 *   cpu.filter.separable  rank-1 masks (1D, 2D, 3D): one 1D pass per mask axis;
 *                  factorisation by pivot (separable_factor.c).
 *   cpu.filter.lowrank    2D masks of rank r with r (m1 + m2) < m1 m2 (e.g.
 *                  2 r k < k^2): r separable pairs summed; factors from a
 *                  Jacobi SVD. Both share this driver; tolerances are in
 *                  separable.h (relative Frobenius 1e-6 f32, 1e-12 f64).
 *
 * Why the passes are exact for every boundary mode. The extended input is
 * X(i0, i1, i2) = x[map0(i0)][map1(i1)][map2(i2)] for nearest, reflect,
 * mirror and wrap (a per-axis index map), so a 1D pass along one axis
 * followed by a pass along another, each with the mode applied to its own
 * axis, is the 2D sum reordered. CONSTANT is different: X is cval when ANY
 * index is outside, so a row that lies outside along axis 1 holds cval in
 * every column and its row pass is cval * sum(f2), not "cval". The passes
 * therefore treat an outside row (plane) as the constant cval * S, with S
 * the sum of the factors already applied (S2 for rows, S1 * S2 for planes).
 * That is exact algebra, rounded differently from the reference only in
 * the last bits; the tests compare all five modes with cval != 0.
 *
 * Stage A, per input plane (n, i0) and a chunk of output rows, in column
 * strips of width W (the strip's rolling rows fit in L1): each extended row
 * e1 is built once into a halo (boundary resolved along axis 2), passed
 * along axis 2 with every term's row factor into a rolling buffer of m1
 * slots; each output row is then the taps-outer sum of m1 slots per term
 * (comb kernel). 2D problems write y directly. Stage B (3D masks only):
 * the axis-0 pass combines m0 planes of the stage-A result T1, kept in the
 * workspace, in chunks of SEP_CHUNK elements.
 *
 * Every output is computed by the same sequence of operations whatever the
 * thread count or chunking (strip and chunk boundaries depend only on the
 * problem), so results are bit-identical for any number of threads. */
#include "cpu/separable.h"
#include "cpu/filter_direct.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define SEP_PREFETCH(p) tc__prefetch(p)
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h> /* _mm_sfence: baseline SSE */
#define SEP_SFENCE() _mm_sfence()
#else
#define SEP_SFENCE() ((void)0)
#endif

#define SEP_STREAM_BYTES ((double)(16 << 20)) /* outputs this big bypass the caches */
#define SEP_CHUNK 4096      /* stage B elements per unit */
#define SEP_SLOT_BYTES 32768 /* rolling rows of one strip: ~ L1 */

/* ---------------- plain C kernels (any CPU) ---------------- */
#define SEP_BASE(T, TS)                                                         \
    static void sep_row_base_##TS(void *out_, const void *h_, const void *c_,   \
                                  int64_t m, int64_t len) {                     \
        T *out = out_;                                                          \
        const T *h = h_, *c = c_;                                               \
        for (int64_t o = 0; o < len; o++) out[o] = 0;                           \
        for (int64_t r = 0; r < m; r++)                                         \
            for (int64_t o = 0; o < len; o++) out[o] += c[r] * h[o + r];        \
    }                                                                           \
    static void sep_comb_base_##TS(void *out_, const void *const *src,          \
                                   const void *c_, int64_t nt, double bias,     \
                                   int64_t len, int stream) {                   \
        T *out = out_;                                                          \
        const T *c = c_;                                                        \
        for (int64_t o = 0; o < len; o++) out[o] = (T)bias;                     \
        for (int64_t t = 0; t < nt; t++) {                                      \
            const T *s = src[t];                                                \
            for (int64_t o = 0; o < len; o++) out[o] += c[t] * s[o];            \
        }                                                                       \
    }
SEP_BASE(float, f32)
SEP_BASE(double, f64)

const tc__sep_kernels tc__sep_kernels_base = {
    .isa = "c",
    .row = {sep_row_base_f32, sep_row_base_f64},
    .comb = {sep_comb_base_f32, sep_comb_base_f64},
};

static const tc__sep_kernels *sep_pick(unsigned cpu) {
#if defined(__x86_64__) || defined(__i386__)
    if (cpu & TC__CPU_AVX512) return &tc__sep_kernels_avx512;
    if (cpu & TC__CPU_AVX2) return &tc__sep_kernels_avx2;
#endif
    return &tc__sep_kernels_base;
}

/* ---------------- factorisation and geometry ---------------- */
static double sep_tol(const tc__problem *p) {
    return p->dtype == TC_FLOAT32 ? TC__SEP_TOL_F32 : TC__SEP_TOL_F64;
}

static int sep_factor(const tc__problem *p, int lowrank, tc__sep_factors *fa,
                      char *why, size_t n) {
    if (p->op != TC_OP_FILTER) {
        if (why) snprintf(why, n, "only the filter operation");
        return 0;
    }
    if (!lowrank) return tc__sep_rank1(p, sep_tol(p), fa, why, n);
    int64_t m1 = p->msk[1], m2 = p->msk[2];
    int maxrank = (int)((m1 * m2 - 1) / (m1 + m2)); /* r (m1+m2) < m1 m2 */
    return tc__sep_lowrank(p, sep_tol(p), maxrank, fa, why, n);
}

typedef struct sep_geom {
    int rank, stage_b, direct;
    int fused;                 /* 2D ring path (sep_fused) */
    int64_t Tw, ntx, nslots;   /* fused: x tile width, tiles, ring rows per term */
    int64_t W;                 /* column strip width */
    int64_t halo, slots, taps; /* per-thread element counts */
    size_t thread_bytes;       /* per-thread scratch */
    size_t t1_bytes;           /* stage-B intermediate (shared) */
} sep_geom;

static size_t sep_r64(size_t v) { return (v + 63) & ~(size_t)63; }

/* The column kernel of the fused path: filter_direct.h's register-blocked
 * row-block kernel, run with m0 = rank, m2 = 1 on the ring rows. */
static tc__fd_kernel sep_col_kernel(const tc__problem *p, unsigned cpu) {
#if defined(__x86_64__) || defined(__i386__)
    const int d = p->dtype == TC_FLOAT64;
    const char *isa = tc__knob_get(TC__KNOB_SEP_COL); /* tests: "avx2" */
    if (isa && !strcmp(isa, "avx2")) cpu &= ~TC__CPU_AVX512;
    if (cpu & TC__CPU_AVX512) return d ? tc__fd_f64_avx512 : tc__fd_f32_avx512;
    if (cpu & TC__CPU_AVX2) return d ? tc__fd_f64_avx2 : tc__fd_f32_avx2;
#endif
    (void)p;
    (void)cpu;
    return NULL;
}

static void sep_geometry(const tc__problem *p, int rank, unsigned cpu, sep_geom *g) {
    memset(g, 0, sizeof *g);
    g->rank = rank;
    g->stage_b = p->msk[0] > 1;
    g->direct = p->msk[1] == 1 && rank == 1;
    const char *fz = tc__knob_get(TC__KNOB_SEP_FUSED); /* tests: 0 = strips */
    g->fused = !g->stage_b && !g->direct && sep_col_kernel(p, cpu) != NULL &&
               !(fz && fz[0] == '0');
    if (g->fused) {
        /* ring: rank x (m1 + R - 1) row-passed rows of Tw, in half of L2 */
        const int64_t es = (int64_t)p->esize, m1 = p->msk[1];
        g->nslots = m1 + TC__FD_RMAX - 1;
        int64_t tw = tc__fd_l2_bytes() / 2 / ((int64_t)rank * (g->nslots + 1) * es);
        tw = tw / 64 * 64;
        if (tw < 64) tw = 64;
        g->ntx = (p->out[2] + tw - 1) / tw;
        g->Tw = ((p->out[2] + g->ntx - 1) / g->ntx + 15) / 16 * 16; /* equal tiles */
        g->halo = g->Tw + p->msk[2] - 1;
        g->thread_bytes = sep_r64((size_t)g->halo * (size_t)es) +
                          sep_r64((size_t)((int64_t)rank * (g->nslots + 1) * g->Tw * es)) +
                          sep_r64((size_t)((int64_t)rank * g->nslots) * sizeof(void *));
        return;
    }
    const int64_t m1 = p->msk[1], out2 = p->out[2];
    int64_t W = g->direct ? 8192
                          : SEP_SLOT_BYTES / ((int64_t)rank * m1 * (int64_t)p->esize);
    W = W / 64 * 64;
    if (W < 64) W = 64;
    if (W > out2) W = out2;
    g->W = W;
    g->halo = W + p->msk[2] - 1;
    g->slots = g->direct ? 0 : (int64_t)rank * m1 * W;
    g->taps = (int64_t)rank * m1 > p->msk[0] ? (int64_t)rank * m1 : p->msk[0];
    g->thread_bytes = sep_r64((size_t)(g->halo + g->slots + g->taps) * p->esize) +
                      sep_r64((size_t)g->taps * sizeof(void *)) + sep_r64((size_t)m1);
    if (g->stage_b)
        g->t1_bytes = sep_r64((size_t)(p->N * p->in[0] * p->out[1] * out2) * p->esize);
}

/* ---------------- solver callbacks ---------------- */
static int sep_applicable_any(const tc__problem *p, int lowrank, char *why,
                              size_t n) {
    tc__sep_factors fa;
    if (!sep_factor(p, lowrank, &fa, why, n)) return 0;
    tc__sep_free(&fa);
    return 1;
}
static int sep_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    return sep_applicable_any(p, 0, why, n);
}
static int lowrank_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    return sep_applicable_any(p, 1, why, n);
}

/* Model: FMA work at SEP_RATE of the planner's peak (calibrated: gaussian
 * k15 on 4096^2 float32, 2 Xeon cores, 16.7 ms measured), overlapped with
 * moving x, y (and T1 twice for 3D) through memory. */
#define SEP_RATE 0.2
static double sep_estimate_any(const tc__problem *p, const tc__env *e, int lowrank) {
    tc__sep_factors fa;
    if (!sep_factor(p, lowrank, &fa, NULL, 0)) return 1e30;
    int rank = fa.rank;
    tc__sep_free(&fa);
    sep_geom g;
    sep_geometry(p, rank, e->cpu, &g);
    double planes = (double)p->N * (double)p->in[0];
    double rows = (double)p->out[1] + (double)p->msk[1] - 1;
    double fl = 2.0 * planes * rank *
                (rows * p->out[2] * p->msk[2] + (g.direct ? 0.0 : (double)p->out[1] * p->out[2] * p->msk[1]));
    if (g.stage_b) fl += 2.0 * (double)tc__y_count(p) * p->msk[0];
    double bytes = tc__problem_bytes(p) + 2.0 * (double)g.t1_bytes;
    /* the fused ring path measured 1.28x faster than the strips (4096^2
     * k15, 2 threads, same run) */
    const double rate = g.fused ? SEP_RATE * 1.28 : SEP_RATE;
    double t_fl = fl / (tc__peak_flops(e) * rate * (p->dtype == TC_FLOAT32 ? 1.0 : 0.5));
    double t_mem = bytes / tc__peak_bandwidth(e);
    return (t_fl > t_mem ? t_fl : t_mem) + 0.15 * (t_fl < t_mem ? t_fl : t_mem) + 5e-6;
}
static double sep_estimate(const tc__problem *p, const tc__env *e) {
    return sep_estimate_any(p, e, 0);
}
static double lowrank_estimate(const tc__problem *p, const tc__env *e) {
    return sep_estimate_any(p, e, 1) * 1.02; /* rank 1: prefer the pivot split */
}

static size_t sep_workspace_any(const tc__problem *p, const tc__env *e, int lowrank) {
    tc__sep_factors fa;
    if (!sep_factor(p, lowrank, &fa, NULL, 0)) return 0;
    sep_geom g;
    sep_geometry(p, fa.rank, e->cpu, &g);
    tc__sep_free(&fa);
    return g.t1_bytes + (size_t)e->threads * g.thread_bytes;
}
static size_t sep_workspace(const tc__problem *p, const tc__env *e) {
    return sep_workspace_any(p, e, 0);
}
static size_t lowrank_workspace(const tc__problem *p, const tc__env *e) {
    return sep_workspace_any(p, e, 1);
}

typedef struct sep_state {
    const tc__sep_kernels *k;
    sep_geom g;
    void *f0, *f1, *f2;   /* factors in the dtype; f1, f2: rank terms */
    double s2[TC__SEP_MAXRANK]; /* sum of term i's row factor */
    double s12;           /* S1 * S2 of term 0: an outside plane (stage B) */
    double cval;
    char cv[8];           /* cval in the dtype */
    int stream;           /* non-temporal stores for y */
    tc__fd_kernel col;    /* fused path: column kernel */
} sep_state;

static void sep_destroy(void *state) {
    sep_state *s = state;
    if (!s) return;
    free(s->f0);
    free(s);
}

static void sep_st(void *a, int64_t i, tc_dtype dt, double v) {
    if (dt == TC_FLOAT32) ((float *)a)[i] = (float)v;
    else ((double *)a)[i] = v;
}

static tc_status sep_plan_any(const tc__problem *p, const tc__env *env,
                              void **out, int lowrank) {
    char why[160] = "";
    tc__sep_factors fa;
    if (!sep_factor(p, lowrank, &fa, why, sizeof why))
        return tc__error(TC_ERR_NOT_APPLICABLE, "%s: %s",
                         lowrank ? "cpu.filter.lowrank" : "cpu.filter.separable", why);
    sep_state *s = calloc(1, sizeof *s);
    const int64_t *m = p->msk;
    const int r = fa.rank;
    if (s) s->f0 = malloc((size_t)(m[0] + r * (m[1] + m[2])) * p->esize);
    if (!s || !s->f0) {
        tc__sep_free(&fa);
        free(s);
        return tc__error(TC_ERR_OUT_OF_MEMORY, "cpu.filter.separable: out of memory");
    }
    s->k = sep_pick(env->cpu);
    s->col = sep_col_kernel(p, env->cpu);
    sep_geometry(p, r, env->cpu, &s->g);
    s->f1 = (char *)s->f0 + (size_t)m[0] * p->esize;
    s->f2 = (char *)s->f1 + (size_t)(r * m[1]) * p->esize;
    /* fold the scalar factors of size-1 axes into the row factor */
    double scale = 1.0;
    if (!s->g.stage_b) scale *= fa.f[0][0];
    for (int64_t r0 = 0; r0 < m[0]; r0++) sep_st(s->f0, r0, p->dtype, fa.f[0][r0]);
    for (int i = 0; i < r; i++) {
        double sc = scale * (s->g.direct ? fa.f[1][i * m[1]] : 1.0);
        double s1 = 0, s2 = 0;
        for (int64_t r1 = 0; r1 < m[1]; r1++) {
            sep_st(s->f1, i * m[1] + r1, p->dtype, fa.f[1][i * m[1] + r1]);
            s1 += fa.f[1][i * m[1] + r1];
        }
        for (int64_t r2 = 0; r2 < m[2]; r2++) {
            double v = sc * fa.f[2][i * m[2] + r2];
            sep_st(s->f2, i * m[2] + r2, p->dtype, v);
            s2 += v;
        }
        s->s2[i] = s2;
        if (i == 0) s->s12 = (s->g.direct ? 1.0 : s1) * s2; /* direct: f1 is in f2 */
    }
    s->cval = p->cval;
    sep_st(s->cv, 0, p->dtype, p->cval);
    /* streamed rows must start on a line: every row when out2 * esize is a
     * multiple of 64 (and y is aligned, which the kernel checks) */
    s->stream = (double)tc__y_count(p) * (double)p->esize >= SEP_STREAM_BYTES &&
                ((size_t)p->out[2] * p->esize) % 64 == 0;
    tc__sep_free(&fa);
    *out = s;
    return TC_OK;
}
static tc_status sep_plan(const tc__problem *p, const tc__env *e, void **out) {
    return sep_plan_any(p, e, out, 0);
}
static tc_status lowrank_plan(const tc__problem *p, const tc__env *e, void **out) {
    return sep_plan_any(p, e, out, 1);
}

/* ---------------- execution ---------------- */
typedef struct sep_job {
    const tc__args *a;
    const sep_state *s;
    char *t1;        /* stage-B intermediate, or NULL */
    char *scratch;   /* per-thread areas */
    int64_t cpp;     /* stage A: row chunks per plane */
    int64_t next, n; /* sep_dyn: next unclaimed chunk, chunk count */
} sep_job;

/* Builds the extended row segment h[j] = X(row, c0 + j - pad2), j < len. */
static void sep_halo(char *h, const char *xrow, int64_t c0, int64_t len,
                     const tc__problem *p, const char *cv) {
    const size_t es = p->esize;
    const int64_t n = p->in[2], lo = c0 - p->pad_lo[2];
    int64_t a = -lo, b = n - lo; /* j in [a, b) is inside */
    if (a < 0) a = 0;
    if (b > len) b = len;
    int64_t j = 0;
    for (; j < len && j < a; j++) {
        int64_t i = tc__boundary_index(lo + j, n, p->mode);
        memcpy(h + j * es, i < 0 ? cv : xrow + i * es, es);
    }
    if (b > j) {
        memcpy(h + j * es, xrow + (lo + j) * es, (size_t)(b - j) * es);
        j = b;
    }
    for (; j < len; j++) {
        int64_t i = tc__boundary_index(lo + j, n, p->mode);
        memcpy(h + j * es, i < 0 ? cv : xrow + i * es, es);
    }
}

/* Prefetches the part of input row e1 (extended index) that the halo of
 * strip c0 will copy: the hardware prefetchers lose the stream at every
 * page when strips walk down the rows. */
#define SEP_AHEAD 2
static void sep_prefetch_row(const char *xp, int64_t e1, int64_t c0, int64_t len,
                             const tc__problem *p) {
    int64_t i1 = tc__boundary_index(e1 - p->pad_lo[1], p->in[1], p->mode);
    if (i1 < 0) return;
    int64_t a = c0 - p->pad_lo[2], b = a + len;
    if (a < 0) a = 0;
    if (b > p->in[2]) b = p->in[2];
    const char *row = xp + (size_t)(i1 * p->in[2]) * p->esize;
    for (int64_t off = a * (int64_t)p->esize; off < b * (int64_t)p->esize; off += 64)
        SEP_PREFETCH(row + off);
}

static void sep_stage_a(void *arg, int64_t begin, int64_t end, int tid) {
    const sep_job *j = arg;
    const tc__problem *p = j->a->p;
    const sep_state *s = j->s;
    const sep_geom *g = &s->g;
    const int di = p->dtype == TC_FLOAT64;
    const size_t es = p->esize;
    const int64_t m1 = p->msk[1], m2 = p->msk[2], W = g->W, rank = g->rank;
    const int64_t out1 = p->out[1], out2 = p->out[2];
    char *base = j->scratch + (size_t)tid * g->thread_bytes;
    char *halo = base, *slots = halo + g->halo * es, *coef = slots + g->slots * es;
    const void **src = (const void **)(base + sep_r64((size_t)(g->halo + g->slots + g->taps) * es));
    unsigned char *outside = (unsigned char *)src + sep_r64((size_t)g->taps * sizeof(void *));
    const int64_t rows_per = (out1 + j->cpp - 1) / j->cpp;
    /* stream only into y, and only where every row starts on a line */
    const int stream = s->stream && !j->t1 && ((uintptr_t)j->a->y & 63) == 0;
    for (int64_t u = begin; u < end; u++) {
        int64_t plane = u / j->cpp, oa = (u % j->cpp) * rows_per;
        int64_t ob = oa + rows_per < out1 ? oa + rows_per : out1;
        if (oa >= ob) continue;
        const char *xp = (const char *)j->a->x + (size_t)(plane * p->in[1] * p->in[2]) * es;
        char *yp = (j->t1 ? j->t1 : (char *)j->a->y) + (size_t)(plane * out1 * out2) * es;
        for (int64_t c0 = 0; c0 < out2; c0 += W) {
            const int64_t wl = out2 - c0 < W ? out2 - c0 : W;
            if (g->direct) { /* m1 == 1: row pass straight into the output */
                for (int64_t o1 = oa; o1 < ob; o1++) {
                    if (o1 + SEP_AHEAD < ob) sep_prefetch_row(xp, o1 + SEP_AHEAD, c0, wl + m2 - 1, p);
                    sep_halo(halo, xp + (size_t)(o1 * p->in[2]) * es, c0, wl + m2 - 1, p, s->cv);
                    s->k->row[di](yp + (size_t)(o1 * out2 + c0) * es, halo, s->f2, m2, wl);
                }
                continue;
            }
            /* rolling rows: extended row e1 lives in slot e1 % m1 */
            for (int64_t e1 = oa; e1 < ob + m1 - 1; e1++) {
                int64_t sl = e1 % m1;
                int64_t i1 = tc__boundary_index(e1 - p->pad_lo[1], p->in[1], p->mode);
                outside[sl] = i1 < 0;
                if (e1 + SEP_AHEAD < ob + m1 - 1) /* the row after next, into L1 */
                    sep_prefetch_row(xp, e1 + SEP_AHEAD, c0, wl + m2 - 1, p);
                if (i1 >= 0) {
                    sep_halo(halo, xp + (size_t)(i1 * p->in[2]) * es, c0, wl + m2 - 1, p, s->cv);
                    for (int64_t i = 0; i < rank; i++)
                        s->k->row[di](slots + (size_t)((i * m1 + sl) * W) * es, halo,
                                      (const char *)s->f2 + (size_t)(i * m2) * es, m2, wl);
                }
                int64_t o1 = e1 - (m1 - 1);
                if (o1 < oa) continue;
                /* taps of output row o1: slot of extended row o1 + r1 */
                double bias = 0;
                int64_t nt = 0, e0 = o1 % m1;
                int any_out = 0;
                for (int64_t r1 = 0; r1 < m1; r1++) any_out |= outside[r1];
                const void *cuse = s->f1; /* nothing outside: the factors as stored */
                for (int64_t i = 0; i < rank; i++)
                    for (int64_t r1 = 0, e = e0; r1 < m1; r1++, e = e + 1 == m1 ? 0 : e + 1) {
                        if (any_out && outside[e]) {
                            double c = di ? ((const double *)s->f1)[i * m1 + r1]
                                          : ((const float *)s->f1)[i * m1 + r1];
                            bias += c * s->cval * s->s2[i];
                            continue;
                        }
                        if (any_out) {
                            if (di) ((double *)coef)[nt] = ((const double *)s->f1)[i * m1 + r1];
                            else ((float *)coef)[nt] = ((const float *)s->f1)[i * m1 + r1];
                            cuse = coef;
                        }
                        src[nt++] = slots + (size_t)((i * m1 + e) * W) * es;
                    }
                s->k->comb[di](yp + (size_t)(o1 * out2 + c0) * es, src, cuse, nt, bias, wl,
                               stream);
            }
        }
    }
    if (stream) SEP_SFENCE(); /* order the streamed stores before the join */
}

/* Fused 2D path. Per unit (plane, chunk of output rows) and x tile: each
 * extended input row is row-passed once (every term) into a ring of
 * nslots = m1 + R - 1 rows per term, and every R = 4 output rows are made
 * by the direct filter's register-blocked kernel over the ring (m0 = rank
 * terms, m1 taps, m2 = 1): each ring vector loaded feeds up to 4 output
 * rows, and x and y stream row after row (one read, one write). An
 * extended row outside the input (CONSTANT) is the row pass of a cval row,
 * cval * S2 of its term, kept in one more ring row per term. Each output
 * sums its taps in the same order whatever the chunking (kernel: r0, r1
 * ascending, one FMA each), so results do not depend on threads. */
static void sep_fused(void *arg, int64_t begin, int64_t end, int tid) {
    const sep_job *j = arg;
    const tc__problem *p = j->a->p;
    const sep_state *s = j->s;
    const sep_geom *g = &s->g;
    const int di = p->dtype == TC_FLOAT64;
    const size_t es = p->esize;
    const int64_t m1 = p->msk[1], m2 = p->msk[2], rank = g->rank, Tw = g->Tw;
    const int64_t out1 = p->out[1], out2 = p->out[2], ns = g->nslots;
    const int64_t R = TC__FD_RMAX, xs = R + m1 - 1;
    char *base = j->scratch + (size_t)tid * g->thread_bytes;
    char *halo = base;
    char *ring = halo + sep_r64((size_t)g->halo * es);
    const void **ptrs = (const void **)(ring + sep_r64((size_t)(rank * (ns + 1) * Tw) * es));
    const int64_t rows_per = (out1 + j->cpp - 1) / j->cpp;
    /* the last ring row of each term: the row pass of a cval row */
    for (int64_t i = 0; i < rank; i++) {
        char *cr = ring + (size_t)((i * (ns + 1) + ns) * Tw) * es;
        for (int64_t k = 0; k < Tw; k++) {
            if (di) ((double *)cr)[k] = s->cval * s->s2[i];
            else ((float *)cr)[k] = (float)(s->cval * s->s2[i]);
        }
    }
    tc__fd_block b;
    memset(&b, 0, sizeof b);
    b.x = ptrs;
    b.xs = xs;
    b.w = s->f1;
    b.m0 = rank;
    b.m1 = m1;
    b.m2 = 1;
    b.nt = s->stream && ((uintptr_t)j->a->y & 63) == 0;
    for (int64_t u = begin; u < end; u++) {
        int64_t plane = u / j->cpp, oa = (u % j->cpp) * rows_per;
        int64_t ob = oa + rows_per < out1 ? oa + rows_per : out1;
        if (oa >= ob) continue;
        const char *xp = (const char *)j->a->x + (size_t)(plane * p->in[1] * p->in[2]) * es;
        char *yp = (char *)j->a->y + (size_t)(plane * out1 * out2) * es;
        for (int64_t c0 = 0; c0 < out2; c0 += Tw) {
            const int64_t wl = out2 - c0 < Tw ? out2 - c0 : Tw;
            int64_t next = oa; /* next extended row to row-pass */
            for (int64_t o1 = oa; o1 < ob; o1 += R) {
                b.rows = (int)(ob - o1 < R ? ob - o1 : R);
                const int64_t need = o1 + b.rows + m1 - 1;
                for (; next < need; next++) {
                    int64_t i1 = tc__boundary_index(next - p->pad_lo[1], p->in[1], p->mode);
                    if (i1 < 0) continue; /* points at the cval row below */
                    sep_halo(halo, xp + (size_t)(i1 * p->in[2]) * es, c0, wl + m2 - 1, p, s->cv);
                    for (int64_t i = 0; i < rank; i++)
                        s->k->row[di](ring + (size_t)((i * (ns + 1) + next % ns) * Tw) * es, halo,
                                      (const char *)s->f2 + (size_t)(i * m2) * es, m2, wl);
                }
                for (int64_t i = 0; i < rank; i++)
                    for (int64_t r = 0; r < b.rows + m1 - 1; r++) {
                        const int64_t e = o1 + r;
                        const int out = tc__boundary_index(e - p->pad_lo[1], p->in[1], p->mode) < 0;
                        ptrs[i * xs + r] = ring + (size_t)((i * (ns + 1) + (out ? ns : e % ns)) * Tw) * es;
                    }
                for (int r = 0; r < b.rows; r++)
                    b.y[r] = yp + (size_t)((o1 + r) * out2 + c0) * es;
                b.nx = wl;
                s->col(&b);
            }
        }
    }
#if defined(__x86_64__) || defined(__i386__)
    if (b.nt) SEP_SFENCE(); /* order the streamed stores before the join */
#endif
}

static void sep_stage_b(void *arg, int64_t begin, int64_t end, int tid) {
    const sep_job *j = arg;
    const tc__problem *p = j->a->p;
    const sep_state *s = j->s;
    const int di = p->dtype == TC_FLOAT64;
    const size_t es = p->esize;
    const int64_t plane = p->out[1] * p->out[2], out0 = p->out[0];
    const int64_t nch = (plane + SEP_CHUNK - 1) / SEP_CHUNK;
    char *base = j->scratch + (size_t)tid * s->g.thread_bytes;
    char *coef = base + (size_t)(s->g.halo + s->g.slots) * es;
    const void **src = (const void **)(base + sep_r64((size_t)(s->g.halo + s->g.slots + s->g.taps) * es));
    for (int64_t u = begin; u < end; u++) {
        int64_t o0 = u % out0, t = u / out0, jc = t % nch, n = t / nch;
        int64_t off = jc * SEP_CHUNK, len = plane - off < SEP_CHUNK ? plane - off : SEP_CHUNK;
        double bias = 0;
        int64_t nt = 0;
        for (int64_t r0 = 0; r0 < p->msk[0]; r0++) {
            int64_t i0 = tc__boundary_index(o0 + r0 - p->pad_lo[0], p->in[0], p->mode);
            const char *cf = (const char *)s->f0 + (size_t)r0 * es;
            if (i0 < 0) {
                double c = di ? *(const double *)cf : *(const float *)cf;
                bias += c * s->cval * s->s12;
            } else {
                src[nt] = j->t1 + (size_t)((n * p->in[0] + i0) * plane + off) * es;
                if (di) ((double *)coef)[nt] = *(const double *)cf;
                else ((float *)coef)[nt] = *(const float *)cf;
                nt++;
            }
        }
        s->k->comb[di]((char *)j->a->y + (size_t)((n * out0 + o0) * plane + off) * es, src,
                       coef, nt, bias, len, s->stream);
    }
    if (s->stream) SEP_SFENCE(); /* order the streamed stores before the join */
}

/* Fused path with several threads: the threads claim row chunks one at a
 * time from a shared counter instead of one fixed range each, so a thread
 * on a core that another process holds part of no longer holds up the
 * other. A chunk's output does not depend on the thread or on where the
 * rows were split (each chunk re-runs the row pass of its first m1 - 1
 * rows). */
static void sep_dyn(void *arg, int64_t begin, int64_t end, int tid) {
    sep_job *j = arg;
    (void)begin;
    (void)end;
    for (;;) {
        const int64_t u = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (u >= j->n) break;
        sep_fused(arg, u, u + 1, tid);
    }
}

static tc_status sep_execute(const tc__args *a) {
    const tc__problem *p = a->p;
    const sep_state *s = a->state;
    if (!s) return tc__error(TC_ERR_INTERNAL, "cpu.filter.separable: plan state missing");
    sep_job j;
    memset(&j, 0, sizeof j);
    j.a = a;
    j.s = s;
    j.t1 = s->g.stage_b ? (char *)a->ws : NULL;
    j.scratch = (char *)a->ws + s->g.t1_bytes;
    const int64_t planes = p->N * p->in[0];
    j.cpp = planes >= a->threads ? 1 : (a->threads + planes - 1) / planes;
    if (j.cpp > p->out[1]) j.cpp = p->out[1];
    if (s->g.fused && a->threads > 1) {
        /* about 8 chunks per thread, each of >= 64 rows (the m1 - 1 rows
         * of row pass a chunk repeats stay a few per cent) */
        const int64_t want = (int64_t)a->threads * 8, cmax = p->out[1] / 64;
        int64_t c = (want + planes - 1) / planes;
        if (c > cmax) c = cmax;
        if (c > j.cpp) j.cpp = c;
        j.n = planes * j.cpp;
        j.next = 0;
        tc__parallel_for(a->threads, a->threads, sep_dyn, &j);
    } else {
        tc__parallel_for(a->threads, planes * j.cpp, s->g.fused ? sep_fused : sep_stage_a, &j);
    }
    if (s->g.stage_b) {
        const int64_t plane = p->out[1] * p->out[2];
        const int64_t nch = (plane + SEP_CHUNK - 1) / SEP_CHUNK;
        tc__parallel_for(a->threads, p->N * nch * p->out[0], sep_stage_b, &j);
    }
    return TC_OK;
}

const tc__solver tc__solver_cpu_separable = {
    .name = "cpu.filter.separable",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_FILTER,
    .summary = "Rank-1 (separable) masks: one 1D pass per axis, every mode "
               "(factor tolerance 1e-6 f32 / 1e-12 f64, relative Frobenius).",
    .applicable = sep_applicable,
    .estimate = sep_estimate,
    .workspace = sep_workspace,
    .plan = sep_plan,
    .destroy = sep_destroy,
    .execute = sep_execute,
};

const tc__solver tc__solver_cpu_lowrank = {
    .name = "cpu.filter.lowrank",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_FILTER,
    .summary = "2D masks of low rank r (r(m1+m2) < m1 m2): r separable pairs "
               "from a Jacobi SVD (tolerance 1e-6 f32 / 1e-12 f64).",
    .applicable = lowrank_applicable,
    .estimate = lowrank_estimate,
    .workspace = lowrank_workspace,
    .plan = lowrank_plan,
    .destroy = sep_destroy,
    .execute = sep_execute,
};
