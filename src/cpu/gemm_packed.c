/*
 * gemm_packed.c - BLIS-style packed GEMM (solver "cpu.gemm.packed") and the
 * internal tc__gemm() entry that im2col and the other solvers call.
 *
 * C = alpha op(A) op(B) + beta C, row-major. The micro-kernel (contract in
 * gemm_packed.h) broadcasts A and loads B, so:
 *   - an A micro-panel (MR x KC) stays in L1 while
 *   - the B micro-panels (KC x NR) of one B block (KC x NB, in L2) stream
 *     past it, and
 *   - the packed A block (MB rows x KS, several KC slices) is shared by
 *     the threads through L3 / memory.
 *
 * One parallel region per A block (usually all of M x up to 32 MiB of K):
 * a tm x tn grid of threads over C; each thread, for each chunk of <= NB
 * columns of its range, for each KC slice: packs its B block (own buffer),
 * then for each A panel (packed on first use by whichever thread needs it
 * first, see gp_a_ready), for each B panel: micro-kernel. A and B are each
 * packed exactly once unless M x KC alone exceeds the A budget; there is
 * no barrier between packing and use.
 *
 * Determinism: KC, KS, MB and the kernel depend only on the problem and the CPU,
 * never on the thread count, and every C tile sums its KC slices in order;
 * threads only decide who computes a tile. Results are bit-identical for any
 * thread count.
 */
#define _GNU_SOURCE
#include "gemm_packed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Test hook: ISA bits ANDed with cpuid (tests force AVX2 / scalar paths). */
unsigned tc__gemm_isa_mask = ~0u;

/* ---------------- scalar fallback micro-kernels ---------------- */
#define TC__UKERNEL_SCALAR(NAME, T, MR, NR)                                    \
    static void NAME(int64_t kc, const T *restrict a, const T *restrict b,    \
                     T *restrict c, int64_t ldc, T alpha, T beta, int mr,     \
                     int nr) {                                                 \
        T acc[MR][NR];                                                         \
        for (int i = 0; i < MR; i++)                                           \
            for (int j = 0; j < NR; j++) acc[i][j] = 0;                        \
        for (int64_t l = 0; l < kc; l++, a += MR, b += NR)                     \
            for (int i = 0; i < MR; i++)                                       \
                for (int j = 0; j < NR; j++) acc[i][j] += a[i] * b[j];         \
        for (int i = 0; i < mr; i++)                                           \
            for (int j = 0; j < nr; j++) {                                     \
                T v = alpha * acc[i][j];                                       \
                c[i * ldc + j] = beta == (T)0 ? v : v + beta * c[i * ldc + j]; \
            }                                                                  \
    }
TC__UKERNEL_SCALAR(tc__f32_gemm_ukernel_4x8__scalar, float, 4, 8)
TC__UKERNEL_SCALAR(tc__f64_gemm_ukernel_4x4__scalar, double, 4, 4)

/* ---------------- kernel table and block sizes ---------------- */
typedef struct gp_kernel {
    int mr, nr;
    tc__f32_gemm_ukernel_fn f32;
    tc__f64_gemm_ukernel_fn f64;
} gp_kernel;

static const gp_kernel gp_f32_avx512 = {14, 32, tc__f32_gemm_ukernel_14x32__avx512, NULL};
static const gp_kernel gp_f64_avx512 = {14, 16, NULL, tc__f64_gemm_ukernel_14x16__avx512};
static const gp_kernel gp_f32_avx2 = {6, 16, tc__f32_gemm_ukernel_6x16__avx2, NULL};
static const gp_kernel gp_f64_avx2 = {6, 8, NULL, tc__f64_gemm_ukernel_6x8__avx2};
static const gp_kernel gp_f32_scalar = {4, 8, tc__f32_gemm_ukernel_4x8__scalar, NULL};
static const gp_kernel gp_f64_scalar = {4, 4, NULL, tc__f64_gemm_ukernel_4x4__scalar};

static const gp_kernel *gp_pick(tc_dtype dt) {
    unsigned cpu = tc__cpu_detect() & tc__gemm_isa_mask;
    int f32 = dt == TC_FLOAT32;
    if (cpu & TC__CPU_AVX512) return f32 ? &gp_f32_avx512 : &gp_f64_avx512;
    if (cpu & TC__CPU_AVX2) return f32 ? &gp_f32_avx2 : &gp_f64_avx2;
    return f32 ? &gp_f32_scalar : &gp_f64_scalar;
}

/* Cache sizes from sysconf (glibc reads cpuid), defaults when unknown. */
static int64_t gp_cache[3];
static void gp_caches(int64_t *l1, int64_t *l2, int64_t *l3) {
    if (!__atomic_load_n(&gp_cache[2], __ATOMIC_ACQUIRE)) {
        long v1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
        long v2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
        long v3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
        gp_cache[0] = v1 >= 16384 && v1 <= (1l << 20) ? v1 : 32768;
        gp_cache[1] = v2 >= 131072 && v2 <= (64l << 20) ? v2 : 1l << 20;
        __atomic_store_n(&gp_cache[2], v3 >= (1l << 20) ? v3 : 8l << 20,
                         __ATOMIC_RELEASE);
    }
    *l1 = gp_cache[0];
    *l2 = gp_cache[1];
    *l3 = __atomic_load_n(&gp_cache[2], __ATOMIC_ACQUIRE);
}

#define GP_A_BUDGET ((int64_t)32 << 20) /* bytes of packed A per region */
#define GP_AGROUP 6 /* A panels packed together (see gp_a_ready) */

typedef struct gp_blocking {
    const gp_kernel *kern;
    int avx512;     /* transposing packs with AVX-512 */
    int64_t es;     /* element bytes */
    int64_t kc;     /* K slice (last may be shorter) */
    int64_t nb;     /* columns per B block, multiple of NR */
    int64_t mb;     /* rows per A block, multiple of MR */
    int64_t ks;     /* K per parallel region, multiple of kc (or all K) */
} gp_blocking;

static int64_t gp_rup(int64_t a, int64_t b) { return tc__cdiv64(a, b) * b; }

static void gp_block(const tc__problem *p, gp_blocking *bk) {
    int64_t l1, l2, l3;
    gp_caches(&l1, &l2, &l3);
    const gp_kernel *kn = gp_pick(p->dtype);
    int64_t es = (int64_t)p->esize, mr = kn->mr, nr = kn->nr;
    bk->kern = kn;
    bk->avx512 = (tc__cpu_detect() & tc__gemm_isa_mask & TC__CPU_AVX512) != 0;
    bk->es = es;
    /* the A micro-panel takes about half of L1 */
    int64_t kc_max = l1 / 2 / (mr * es);
    kc_max = kc_max < 64 ? 64 : kc_max > 1024 ? 1024 : kc_max & ~(int64_t)7;
    int64_t nk = tc__cdiv64(p->k, kc_max);
    bk->kc = tc__cdiv64(p->k, nk); /* equal slices */
    /* the B block takes about half of L2 */
    int64_t nb = l2 / 2 / (bk->kc * es) / nr * nr;
    bk->nb = nb < nr ? nr : nb;
    /* packed A per region: mb rows (all of M unless one K slice of it
     * overflows the budget) x ks (as many K slices as fit) */
    int64_t mb = GP_A_BUDGET / (bk->kc * es) / mr * mr;
    if (mb < mr) mb = mr;
    int64_t mfull = gp_rup(p->m, mr);
    bk->mb = mb < mfull ? mb : mfull;
    int64_t slices = GP_A_BUDGET / (bk->mb * bk->kc * es);
    if (slices < 1) slices = 1;
    bk->ks = slices * bk->kc >= p->k ? p->k : slices * bk->kc;
}

static size_t gp_rup64(size_t v) { return (v + 63) & ~(size_t)63; }
static size_t gp_a_bytes(const gp_blocking *b, const tc__problem *p) {
    return gp_rup64((size_t)(b->mb * b->ks * b->es));
}
static size_t gp_b_bytes(const gp_blocking *b) {
    return gp_rup64((size_t)(b->kc * b->nb * b->es));
}

/* one int per (K slice, group of GP_AGROUP A panels) of a row block */
static size_t gp_flag_bytes(const gp_blocking *b, const tc__problem *p) {
    int64_t groups = tc__cdiv64(b->mb / b->kern->mr, GP_AGROUP);
    return gp_rup64((size_t)(tc__cdiv64(b->ks, b->kc) * groups) * sizeof(int));
}

size_t tc__gemm_packed_workspace(const tc__problem *p, int threads) {
    gp_blocking b;
    gp_block(p, &b);
    if (threads < 1) threads = 1;
    return gp_a_bytes(&b, p) + gp_flag_bytes(&b, p) + (size_t)threads * gp_b_bytes(&b);
}

/* ---------------- packing ----------------
 * Two shapes cover A and B:
 *   copy:      panel rows are contiguous in memory (op(A) of a transposed A,
 *              op(B) of a plain B): dst[q][l][c] = src[l*ld + q*P + c];
 *              walked row by row across all panels so reads stream.
 *   transpose: panel rows are strided (plain A, transposed B):
 *              dst[l][r] = src[r*ld + l]; AVX-512 16x16 / 8x8 blocks when
 *              available (gemm_pack_avx512.c), scalar otherwise.
 * Both zero-fill a partial last panel, so kernels always see full panels. */
#define TC__PACK(T, SFX)                                                       \
    static void gp_pack_copy_##SFX(T *restrict dst, int P, int64_t kc,        \
                                   const T *src, int64_t ld, int64_t cols,    \
                                   int64_t npanels) {                          \
        for (int64_t l = 0; l < kc; l++) {                                     \
            const T *s = src + l * ld;                                         \
            for (int64_t q = 0; q < npanels; q++) {                            \
                T *d = dst + (q * kc + l) * P;                                 \
                int64_t w = cols - q * P < P ? cols - q * P : P;               \
                int c = 0;                                                     \
                for (; c < w; c++) d[c] = s[q * P + c];                        \
                for (; c < P; c++) d[c] = 0;                                   \
            }                                                                  \
        }                                                                      \
    }                                                                          \
    static void gp_pack_t_##SFX(T *restrict dst, int P, const T *src,         \
                                int64_t ld, int rows, int64_t kc) {           \
        for (int r = 0; r < rows; r++) {                                       \
            const T *s = src + r * ld;                                         \
            for (int64_t l = 0; l < kc; l++) dst[l * P + r] = s[l];            \
        }                                                                      \
        for (int r = rows; r < P; r++)                                         \
            for (int64_t l = 0; l < kc; l++) dst[l * P + r] = 0;               \
    }
TC__PACK(float, f32)
TC__PACK(double, f64)

/* Packs panels [q0, q1) of width P (rows of op(X) for A, columns for B)
 * starting at element `first` of that dimension, k range [l0, l0+kc), into
 * dst (panel q0 first). `rowmajor_panels`: panel lines are contiguous in X
 * (copy shape). `total` is op(X)'s size along the panel dimension. */
static void gp_pack(const gp_blocking *bk, void *dst, int P, const void *X,
                    int64_t ld, int copy, int64_t q0, int64_t q1, int64_t total,
                    int64_t l0, int64_t kc) {
    const int f32 = bk->es == 4;
    const int64_t first = q0 * P;
    if (copy) {
        size_t off = (size_t)(l0 * ld + first);
        if (f32)
            gp_pack_copy_f32(dst, P, kc, (const float *)X + off, ld, total - first, q1 - q0);
        else
            gp_pack_copy_f64(dst, P, kc, (const double *)X + off, ld, total - first, q1 - q0);
        return;
    }
    for (int64_t q = q0; q < q1; q++) {
        int64_t at = q * P;
        int rows = (int)(total - at < P ? total - at : P);
        size_t soff = (size_t)(at * ld + l0), doff = (size_t)((q - q0) * P * kc);
        if (f32) {
            float *d = (float *)dst + doff;
            const float *sp = (const float *)X + soff;
            if (bk->avx512) tc__f32_pack_t_avx512(d, P, sp, ld, rows, kc);
            else gp_pack_t_f32(d, P, sp, ld, rows, kc);
        } else {
            double *d = (double *)dst + doff;
            const double *sp = (const double *)X + soff;
            if (bk->avx512) tc__f64_pack_t_avx512(d, P, sp, ld, rows, kc);
            else gp_pack_t_f64(d, P, sp, ld, rows, kc);
        }
    }
}

/* ---------------- the parallel region ---------------- */
/* A is packed on demand inside the one parallel region, in groups of
 * GP_AGROUP panels per K slice: the first thread to need a group claims it
 * (0 -> 1), packs it and publishes it (-> 2); a thread needing a group that
 * another thread is packing spins until it is published. The packer never
 * waits on anything, so this cannot deadlock even when the pool runs the
 * chunks one after another on one thread. Threads sharing A start at
 * different groups, so they rarely wait. */
typedef struct gp_job {
    const tc__problem *p;
    const gp_blocking *bk;
    char *C;
    const char *A, *B;
    char *apack, *bpack; /* bpack: one gp_b_bytes buffer per thread */
    int *aflag;          /* per (K slice, A group): 0 free, 1 packing, 2 ready */
    int64_t i0, rows;    /* current row block of C */
    int64_t lbeg, lend;  /* current K range (whole slices) */
    int64_t ngroups;     /* A groups in the row block */
    int tm, tn;          /* thread grid */
} gp_job;

static void gp_split(int64_t n, int parts, int idx, int64_t *b, int64_t *e) {
    int64_t per = n / parts, extra = n % parts;
    *b = idx * per + (idx < extra ? idx : extra);
    *e = *b + per + (idx < extra ? 1 : 0);
}

/* Packed A layout for a row block and K range: K slice s (at l0) holds
 * the block's panels, panel q at apack + ((l0 - lbeg) * mbp + q * MR * kc)
 * elements, where mbp = rows rounded up to MR. */
static void gp_a_ready(const gp_job *j, int64_t s, int64_t l0, int64_t kc,
                       int64_t g) {
    int *flag = j->aflag + s * j->ngroups + g;
    int v = __atomic_load_n(flag, __ATOMIC_ACQUIRE);
    if (v == 2) return;
    if (v == 0 && __atomic_compare_exchange_n(flag, &v, 1, 0, __ATOMIC_ACQ_REL,
                                              __ATOMIC_ACQUIRE)) {
        const tc__problem *p = j->p;
        const gp_blocking *bk = j->bk;
        const int mr = bk->kern->mr;
        const int64_t mbp = gp_rup(j->rows, mr), mp = mbp / mr;
        const int64_t q0 = g * GP_AGROUP;
        const int64_t q1 = q0 + GP_AGROUP < mp ? q0 + GP_AGROUP : mp;
        /* the block's rows start at i0: shift A there */
        const char *A = j->A + (size_t)(p->trans_a ? j->i0 : j->i0 * p->lda) * bk->es;
        char *d = j->apack + (size_t)((l0 - j->lbeg) * mbp + q0 * mr * kc) * bk->es;
        gp_pack(bk, d, mr, A, p->lda, p->trans_a, q0, q1, j->rows, l0, kc);
        __atomic_store_n(flag, 2, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != 2) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

#ifdef GP_PROFILE /* tuning builds only: time stamps per chunk */
#include <x86intrin.h>
uint64_t gp_tb[8], gp_tk[8], gp_ta, gp_tc, gp_t0, gp_cs[8], gp_ce[8];
#define GP_PROF(stmt) stmt
#else
#define GP_PROF(stmt)
#endif

static void gp_compute(void *arg, int64_t t0, int64_t t1, int tid) {
    const gp_job *j = arg;
    const tc__problem *p = j->p;
    const gp_blocking *bk = j->bk;
    const int mr = bk->kern->mr, nr = bk->kern->nr;
    const int64_t mbp = gp_rup(j->rows, mr);
    const int64_t np = tc__cdiv64(p->n, nr);
    const int f32 = p->dtype == TC_FLOAT32;
    char *bbuf = j->bpack + (size_t)tid * gp_b_bytes(bk);
    GP_PROF(gp_cs[tid & 7] = __rdtsc() - gp_t0);
    for (int64_t t = t0; t < t1; t++) {
        /* this thread's groups of A panels and panels of B */
        int64_t g0, g1, qb0, qb1;
        gp_split(j->ngroups, j->tm, (int)(t / j->tn), &g0, &g1);
        gp_split(np, j->tn, (int)(t % j->tn), &qb0, &qb1);
        if (g0 >= g1 || qb0 >= qb1) continue;
        const int64_t ng = g1 - g0;
        const int64_t rot = (t % j->tn) * ng / j->tn; /* start apart */
        /* chunks of at most nb columns, equal sizes */
        int64_t nchunks = tc__cdiv64(qb1 - qb0, bk->nb / nr);
        for (int64_t ch = 0; ch < nchunks; ch++) {
            int64_t cb0, cb1;
            gp_split(qb1 - qb0, (int)nchunks, (int)ch, &cb0, &cb1);
            cb0 += qb0;
            cb1 += qb0;
            int64_t s = 0;
            for (int64_t l0 = j->lbeg; l0 < j->lend; l0 += bk->kc, s++) {
                int64_t kc = p->k - l0 < bk->kc ? p->k - l0 : bk->kc;
                double beta = l0 == 0 ? p->beta : 1.0;
                GP_PROF(uint64_t tp0 = __rdtsc());
                /* pack this thread's B block */
                gp_pack(bk, bbuf, nr, j->B, p->ldb, !p->trans_b, cb0, cb1, p->n, l0, kc);
                GP_PROF(uint64_t tp1 = __rdtsc(); gp_tb[tid & 7] += tp1 - tp0);
                for (int64_t gi = 0; gi < ng; gi++) {
                    int64_t g = g0 + (gi + rot) % ng;
                    gp_a_ready(j, s, l0, kc, g);
                    int64_t qa1 = (g + 1) * GP_AGROUP;
                    if (qa1 * mr > mbp) qa1 = mbp / mr;
                    for (int64_t qa = g * GP_AGROUP; qa < qa1; qa++) {
                        int64_t i = qa * mr;
                        int rows = (int)(j->rows - i < mr ? j->rows - i : mr);
                        size_t aoff = (size_t)((l0 - j->lbeg) * mbp + qa * mr * kc);
                        for (int64_t qb = cb0; qb < cb1; qb++) {
                            int64_t jj = qb * nr;
                            int cols = (int)(p->n - jj < nr ? p->n - jj : nr);
                            size_t boff = (size_t)((qb - cb0) * nr * kc);
                            size_t coff = (size_t)((j->i0 + i) * p->ldc + jj);
                            if (f32)
                                bk->kern->f32(kc, (const float *)j->apack + aoff,
                                              (const float *)bbuf + boff,
                                              (float *)j->C + coff, p->ldc,
                                              (float)p->alpha, (float)beta, rows, cols);
                            else
                                bk->kern->f64(kc, (const double *)j->apack + aoff,
                                              (const double *)bbuf + boff,
                                              (double *)j->C + coff, p->ldc,
                                              p->alpha, beta, rows, cols);
                        }
                    }
                }
                GP_PROF(gp_tk[tid & 7] += __rdtsc() - tp1);
            }
        }
    }
    GP_PROF(gp_ce[tid & 7] = __rdtsc() - gp_t0);
}

/* beta * C for k == 0 (not reachable through the public API). */
static void gp_scale_c(const tc__problem *p, void *C) {
    for (int64_t i = 0; i < p->m; i++)
        for (int64_t jj = 0; jj < p->n; jj++) {
            size_t o = (size_t)(i * p->ldc + jj);
            if (p->dtype == TC_FLOAT32) {
                float *c = (float *)C + o;
                *c = p->beta == 0.0 ? 0.0f : (float)p->beta * *c;
            } else {
                double *c = (double *)C + o;
                *c = p->beta == 0.0 ? 0.0 : p->beta * *c;
            }
        }
}

void tc__gemm_packed_run(const tc__problem *p, int threads, void *C,
                         const void *A, const void *B, void *ws) {
    if (p->m <= 0 || p->n <= 0) return;
    if (p->k <= 0) {
        gp_scale_c(p, C);
        return;
    }
    gp_blocking bk;
    gp_block(p, &bk);
    const int mr = bk.kern->mr, nr = bk.kern->nr;
    /* about 4 MFLOP per thread before another thread pays for itself */
    double flops = 2.0 * (double)p->m * (double)p->n * (double)p->k;
    int T = threads < 1 ? 1 : threads;
    if (flops / 4e6 < T) T = flops / 4e6 < 1 ? 1 : (int)(flops / 4e6);
    gp_job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    j.bk = &bk;
    j.C = C;
    j.A = A;
    j.B = B;
    j.apack = ws;
    j.aflag = (int *)((char *)ws + gp_a_bytes(&bk, p));
    j.bpack = (char *)j.aflag + gp_flag_bytes(&bk, p);
    for (j.i0 = 0; j.i0 < p->m; j.i0 += bk.mb)
    for (j.lbeg = 0; j.lbeg < p->k; j.lbeg += bk.ks) {
        j.lend = p->k - j.lbeg < bk.ks ? p->k : j.lbeg + bk.ks;
        j.rows = p->m - j.i0 < bk.mb ? p->m - j.i0 : bk.mb;
        int64_t mp = tc__cdiv64(j.rows, mr), np = tc__cdiv64(p->n, nr);
        j.ngroups = tc__cdiv64(mp, GP_AGROUP);
        memset(j.aflag, 0, (size_t)(tc__cdiv64(j.lend - j.lbeg, bk.kc) * j.ngroups) * sizeof(int));
        /* thread grid: prefer splitting columns (each thread packs only its
         * own B, A is shared); split rows when column panels are few. */
        int best_tm = T, best_tn = 1;
        int64_t best = -1;
        for (int tn = 1; tn <= T; tn++) {
            if (T % tn) continue;
            int tm = T / tn;
            int64_t work = tc__cdiv64(mp, tm) * tc__cdiv64(np, tn);
            int64_t cost = 2 * work + tc__cdiv64(np, tn); /* tiles + own B packing */
            if (tm > j.ngroups) continue;
            if (best < 0 || cost <= best) {
                best = cost;
                best_tm = tm;
                best_tn = tn;
            }
        }
        j.tm = best_tm;
        j.tn = best_tn;
        GP_PROF(uint64_t ta1 = __rdtsc(); gp_t0 = ta1);
        tc__parallel_for(T, T, gp_compute, &j);
        GP_PROF(gp_tc += __rdtsc() - ta1);
    }
}

void tc__gemm_problem(tc__problem *p, tc_dtype dt, int ta, int tb, int64_t m,
                      int64_t n, int64_t k, double alpha, int64_t lda,
                      int64_t ldb, double beta, int64_t ldc) {
    memset(p, 0, sizeof *p);
    p->op = TC_OP_GEMM;
    p->dtype = dt;
    p->esize = tc_dtype_size(dt);
    p->trans_a = ta;
    p->trans_b = tb;
    p->m = m;
    p->n = n;
    p->k = k;
    p->lda = lda;
    p->ldb = ldb;
    p->ldc = ldc;
    p->alpha = alpha;
    p->beta = beta;
}

/* Internal GEMM for other solvers: packed, or the blocked loops when the
 * pack buffers cannot be allocated. */
tc_status tc__gemm(int threads, tc_dtype dt, int ta, int tb, int64_t m,
                   int64_t n, int64_t k, double alpha, const void *A,
                   int64_t lda, const void *B, int64_t ldb, double beta,
                   void *C, int64_t ldc) {
    tc__problem p;
    tc__gemm_problem(&p, dt, ta, tb, m, n, k, alpha, lda, ldb, beta, ldc);
    void *ws = tc__alloc(tc__gemm_packed_workspace(&p, threads));
    if (!ws) {
        tc__gemm_blocked(threads, &p, C, A, B);
        return TC_OK;
    }
    tc__gemm_packed_run(&p, threads, C, A, B, ws);
    tc__free(ws);
    return TC_OK;
}

/* ---------------- the solver ---------------- */
static int gp_applicable(const tc__problem *p, const tc__env *e, char *why,
                         size_t n) {
    if (p->op != TC_OP_GEMM) {
        if (why) snprintf(why, n, "not a GEMM");
        return 0;
    }
    return 1;
}

static size_t gp_workspace(const tc__problem *p, const tc__env *e) {
    return tc__gemm_packed_workspace(p, e->threads);
}

static double gp_estimate(const tc__problem *p, const tc__env *e) {
    /* ~85% of peak for the kernel, plus one pass over A and B to pack them
     * and the C traffic */
    double packed = (double)p->esize * ((double)p->m * p->k + (double)p->k * p->n) * 2.0;
    return tc__problem_flops(p) / (0.85 * tc__peak_flops(e)) +
           (packed + tc__problem_bytes(p)) / tc__peak_bandwidth(e) + 5e-6;
}

static tc_status gp_execute(const tc__args *a) {
    tc__gemm_packed_run(a->p, a->threads, a->y, a->x, a->w, a->ws);
    return TC_OK;
}

const tc__solver tc__solver_cpu_gemm_packed = {
    .name = "cpu.gemm.packed",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_GEMM,
    .summary = "BLIS-style GEMM: packed panels, L1/L2/L3 blocking, AVX-512/AVX2 "
               "micro-kernels, bit-identical for any thread count.",
    .applicable = gp_applicable,
    .estimate = gp_estimate,
    .workspace = gp_workspace,
    .execute = gp_execute,
};
