/* filter_direct_lanes.c - the lane-interleaved path of cpu.filter.direct-avx512.
 *
 * Why: the plain kernel loads input vectors at every tap offset x + r2, so
 * 15 of 16 loads straddle two cache lines (and some a page); on the
 * machines measured that halves FMA throughput for masks of 5..9 taps per
 * row, and a 1-row (1D) block is also latency-bound with 4 accumulators.
 *
 * How: an x tile of L*S outputs is cut into L lanes of S outputs; lane l
 * holds outputs X0 + l*S + k, k < S. Each input row of the tile is
 * transposed in registers so that element k of the transposed row is the
 * aligned vector (in[X0-pl2 + l*S + k], l < L); lanes that reach past the
 * row ends read a staged copy with the boundary applied. The
 * tap shift r2 then moves by whole vectors: the same row-block kernel runs
 * with aligned loads only and never needs a tail mask. The outputs are
 * transposed back L vectors at a time and stored (streamed when large).
 *
 * Reuse: a thread walks its items (n, x tile, band, plane, row block) in
 * order and keeps the transposed rows of the m0 input planes of the current
 * band in a ring (slot = extended plane mod m0), so each input row is
 * staged and transposed about once per band; rows that map to cval share
 * one transposed cval row. Boundaries cost nothing extra in any mode.
 *
 * Transposes cost about 0.5 shuffles per output element (in and out),
 * against m0*m1*m2/L FMAs, so the path is used for masks of >= 16 taps.
 * TILECONV_FD_LANES=0/1 forces the choice (tests cover both paths).
 */
#include "cpu/filter_direct.h"

#include <stdlib.h>
#include <string.h>

static int64_t fl_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t fl_max(int64_t a, int64_t b) { return a > b ? a : b; }
static size_t fl_r64(size_t v) { return (v + 63) & ~(size_t)63; }

int tc__fdl_wanted(const tc__problem *p) {
    const char *force = tc__knob_get(TC__KNOB_FD_LANES); /* tests: 0 or 1 */
    if (force && (force[0] == '0' || force[0] == '1') && !force[1])
        return force[0] == '1';
    const int64_t L = p->dtype == TC_FLOAT64 ? 8 : 16;
    const int64_t taps = p->msk[0] * p->msk[1] * p->msk[2];
    if (p->out[2] < 4 * L) return 0; /* lanes would be mostly empty */
    /* measured crossover (docs/solvers/cpu-direct.md): 2D rows are faster on
     * the plain rows since their tap vectors are built by in-register shifts
     * up to k13 (4096^2, 2 threads: k9 11.6 vs 16 ms, k13 23.8-24.0 vs
     * 25.5-30.4 ms), k15 on lanes (30.4-30.8 vs 31.0-32.0 ms); 3D up to
     * 9 taps per row on the plane ring of filter_direct.c (Zen 5, one
     * core, 16x64xW in L2: k5 W=128 0.160 vs 0.185 ms, W=256 0.336 vs
     * 0.350; k7 W=128 0.405 vs 0.429, W=256 0.795 vs 0.822; k9 W=256
     * 1.628 vs 1.636: short rows waste part of each transpose, and the
     * plain rows build their tap vectors by in-register shifts); 1D k31
     * is a tie */
    if (p->msk[0] > 1) return p->msk[2] > 9 && taps >= 64;
    if (p->msk[1] > 1) return taps >= 200;
    return taps >= 48;
}

/* Per-thread workspace: ring, ring row pointers, staging row, output
 * vectors of one row block, kernel row pointers, cache key. */
typedef struct fl_cache {
    int64_t key, have_lo, have_hi;
} fl_cache;

void tc__fdl_geometry(const tc__problem *p, tc__fd_state *s) {
    const int64_t es = (int64_t)p->esize, L = p->dtype == TC_FLOAT64 ? 8 : 16;
    const int64_t budget = tc__fd_l2_bytes() / 2;
    s->L = L;
    /* lane length S: the ring for one row block within half the budget */
    int64_t S = tc__cdiv64(s->Wo, L), rows = fl_min(s->R, s->Ho) + s->m1 - 1;
    while (S > L && s->m0 * rows * tc__cdiv64(S + s->m2 - 1, L) * L * L * es > budget / 2)
        S = tc__cdiv64(S, 2);
    s->ntx = tc__cdiv64(s->Wo, L * S);
    s->S = tc__cdiv64(tc__cdiv64(s->Wo, s->ntx), L); /* equal tiles */
    s->Tx = L * s->S;
    s->NK = s->S + s->m2 - 1;
    s->NKp = tc__cdiv64(s->NK, L) * L;
    s->stlen = (L - 1) * s->S + s->NKp; /* x extent read by one tile */
    /* vectors per kernel call: output of all rows within ~16 KB (L1) */
    s->CK = fl_max(L, fl_min(tc__cdiv64(s->S, L) * L,
                             (16384 / (L * es * fl_min(s->R, s->Ho))) / L * L));
    s->nsL = fl_max(0, s->pl2);
    s->nsR = fl_max(0, (s->ntx - 1) * s->Tx - s->pl2 + s->stlen - s->W);
    /* band: the m0 planes of Hb + m1 - 1 transposed rows within budget */
    const int64_t rowb = s->NKp * L * es;
    int64_t hb = budget / (s->m0 * rowb) - (s->m1 - 1);
    hb = fl_max(s->R, hb / s->R * s->R);
    s->nbands = tc__cdiv64(s->Ho, fl_min(hb, tc__cdiv64(s->Ho, s->R) * s->R));
    s->Hb = tc__cdiv64(tc__cdiv64(s->Ho, s->nbands), s->R) * s->R;
    s->Hbe = s->Hb + s->m1 - 1;
    s->items = p->N * s->ntx * s->nbands * s->Do * (s->Hb / s->R);
    s->ws_thread = fl_r64((size_t)(s->m0 * s->Hbe * rowb)) +
                   fl_r64((size_t)(s->m0 * s->Hbe) * sizeof(void *)) +
                   fl_r64((size_t)(L * s->NKp) * (size_t)es) +
                   fl_r64((size_t)(s->R * s->CK * L * es)) +
                   fl_r64((size_t)(s->m0 * s->xs) * sizeof(void *)) +
                   fl_r64(sizeof(fl_cache));
}

tc_status tc__fdl_plan(const tc__problem *p, tc__fd_state *s) {
    int64_t nd = s->Do + s->m0 - 1, nh = s->Ho + s->m1 - 1;
    s->kern = p->dtype == TC_FLOAT64 ? tc__fd_f64_avx512_lanes : tc__fd_f32_avx512_lanes;
    s->dmap = tc__alloc((size_t)(nd + nh + s->nsL + s->nsR) * sizeof(int64_t));
    s->cvT = tc__alloc((size_t)(s->NKp * s->L) * p->esize);
    if (!s->dmap || !s->cvT)
        return tc__error(TC_ERR_OUT_OF_MEMORY, "cpu.direct: out of memory");
    s->hmap = s->dmap + nd;
    for (int64_t i = 0; i < nd; i++) s->dmap[i] = tc__boundary_index(i - s->pl0, s->D, p->mode);
    for (int64_t i = 0; i < nh; i++) s->hmap[i] = tc__boundary_index(i - s->pl1, s->H, p->mode);
    s->smapL = s->hmap + nh;
    s->smapR = s->smapL + s->nsL;
    for (int64_t i = 0; i < s->nsL; i++) s->smapL[i] = tc__boundary_index(-1 - i, s->W, p->mode);
    for (int64_t i = 0; i < s->nsR; i++) s->smapR[i] = tc__boundary_index(s->W + i, s->W, p->mode);
    for (int64_t k = 0; k < s->NKp * s->L; k++) {
        if (p->dtype == TC_FLOAT32) ((float *)s->cvT)[k] = (float)p->cval;
        else ((double *)s->cvT)[k] = p->cval;
    }
    return TC_OK;
}

typedef struct fl_job {
    const tc__args *a;
    const tc__fd_state *s;
    int64_t next, grain; /* fl_dyn: next unclaimed item, items per claim */
} fl_job;

typedef struct fl_thread {
    char *ring;
    const void **rowp;      /* m0 * Hbe transposed rows (ring or cvT) */
    char *st;               /* staged lanes (L x NKp) near the row ends */
    char *to;               /* R x L output vectors */
    const void **kp;        /* kernel row pointers */
    fl_cache *cache;
} fl_thread;

/* st[u] = input row extended by the boundary at x = x0 + u, u < n; the
 * parts outside the row come from the plan's staging maps. */
#define FL_STAGE(T, NAME)                                                     \
    static void NAME(T *st, const T *src, int64_t x0, int64_t n,              \
                     const tc__fd_state *s, T cv) {                           \
        int64_t a = fl_min(n, fl_max(0, -x0)), b = fl_max(a, fl_min(n, s->W - x0)); \
        for (int64_t u = 0; u < a; u++) {                                     \
            int64_t i = s->smapL[-(x0 + u) - 1];                              \
            st[u] = i >= 0 ? src[i] : cv;                                     \
        }                                                                     \
        if (b > a) memcpy(st + a, src + x0 + a, (size_t)(b - a) * sizeof(T)); \
        for (int64_t u = b; u < n; u++) {                                     \
            int64_t i = s->smapR[x0 + u - s->W];                              \
            st[u] = i >= 0 ? src[i] : cv;                                     \
        }                                                                     \
    }
FL_STAGE(float, fl_stage_f32)
FL_STAGE(double, fl_stage_f64)

/* Transposes the band rows of extended plane e of image n, tile X0, into
 * ring slot e mod m0. */
static void fl_fill_plane(const fl_job *j, fl_thread *t, int64_t n, int64_t e,
                          int64_t hb0, int64_t X0) {
    const tc__fd_state *s = j->s;
    const tc__problem *p = j->a->p;
    const int64_t es = (int64_t)p->esize, slot = e % s->m0, pd = s->dmap[e];
    const int64_t rowe = s->NKp * s->L;
    for (int64_t hr = 0; hr < s->Hbe; hr++) {
        const int64_t hext = hb0 + hr;
        const void **rp = &t->rowp[slot * s->Hbe + hr];
        if (hext >= s->Ho + s->m1 - 1) break;
        const int64_t h = s->hmap[hext];
        if (pd < 0 || h < 0) {
            *rp = s->cvT;
            continue;
        }
        const char *src = (const char *)j->a->x + ((n * s->D + pd) * s->H + h) * s->W * es;
        char *dst = t->ring + (slot * s->Hbe + hr) * rowe * es;
        /* lane l reads x in [x_l, x_l + NKp): from the row itself when
         * inside it, else from a staged copy with the boundary applied */
        const void *lane[16];
        for (int64_t l = 0; l < s->L; l++) {
            const int64_t xl = X0 - s->pl2 + l * s->S;
            if (xl >= 0 && xl + s->NKp <= s->W) {
                lane[l] = src + xl * es;
                continue;
            }
            char *st = t->st + l * s->NKp * es;
            if (p->dtype == TC_FLOAT32)
                fl_stage_f32((float *)st, (const float *)src, xl, s->NKp, s,
                             *(const float *)s->cvT);
            else
                fl_stage_f64((double *)st, (const double *)src, xl, s->NKp, s,
                             *(const double *)s->cvT);
            lane[l] = st;
        }
        if (p->dtype == TC_FLOAT32)
            tc__fd_f32_avx512_lanes_in((float *)dst, (const float *const *)lane, s->NK);
        else
            tc__fd_f64_avx512_lanes_in((double *)dst, (const double *const *)lane, s->NK);
        *rp = dst;
    }
}

static void fl_blocks(void *arg, int64_t begin, int64_t end, int tid) {
    const fl_job *j = arg;
    const tc__fd_state *s = j->s;
    const tc__problem *p = j->a->p;
    const int64_t es = (int64_t)p->esize, L = s->L;
    fl_thread t;
    char *w = (char *)j->a->ws + (size_t)tid * s->ws_thread;
    t.ring = w;
    w += fl_r64((size_t)(s->m0 * s->Hbe * s->NKp * L * es));
    t.rowp = (const void **)w;
    w += fl_r64((size_t)(s->m0 * s->Hbe) * sizeof(void *));
    t.st = w;
    w += fl_r64((size_t)(L * s->NKp) * (size_t)es);
    t.to = w;
    w += fl_r64((size_t)(s->R * s->CK * L * es));
    t.kp = (const void **)w;
    w += fl_r64((size_t)(s->m0 * s->xs) * sizeof(void *));
    t.cache = (fl_cache *)w;
    t.cache->key = -1;
    memset(t.to, 0, (size_t)(s->R * s->CK * L * es)); /* lanes past nk are read */
    tc__fd_block b;
    tc__fd_block_init(&b, s, t.kp, j->a->w, 0);
    for (int64_t it = begin; it < end; it++) {
        tc__fd_item w;
        if (!tc__fd_item_decode(s, it, &w)) continue;
        const int64_t o0 = w.o0, xt = w.xt, n = w.n, o1 = w.o1, band = w.band;
        const int64_t hb0 = band * s->Hb, q = w.q;
        const int64_t key = q * s->nbands + band, X0 = xt * s->Tx;
        fl_cache *c = t.cache;
        if (key != c->key || o0 < c->have_lo || o0 >= c->have_hi) {
            c->key = key;
            c->have_lo = c->have_hi = o0;
        }
        for (int64_t e = fl_max(c->have_hi, o0); e < o0 + s->m0; e++)
            fl_fill_plane(j, &t, n, e, hb0, X0);
        c->have_hi = o0 + s->m0;
        c->have_lo = fl_max(c->have_lo, c->have_hi - s->m0);
        b.rows = (int)fl_min(s->R, s->Ho - o1);
        const int64_t wt = fl_min(s->Tx, s->Wo - X0);
        char *yrow = (char *)j->a->y + (((n * s->Do + o0) * s->Ho + o1) * s->Wo + X0) * es;
        for (int64_t r0 = 0; r0 < s->m0; r0++) {
            const void *const *rp = t.rowp + ((o0 + r0) % s->m0) * s->Hbe + (o1 - hb0);
            for (int64_t i = 0; i < b.rows + s->m1 - 1; i++) {
                const void *q = rp[i]; /* 8-byte copies: see fd_ring_blocks */
                __asm__("" : "+r"(q));
                t.kp[r0 * s->xs + i] = q;
            }
        }
        for (int r = 0; r < b.rows; r++) b.y[r] = t.to + r * s->CK * L * es;
        for (int64_t kc = 0; kc < s->S; kc += s->CK) {
            b.xoff = kc;
            b.nx = fl_min(s->CK, s->S - kc);
            s->kern(&b);
            for (int r = 0; r < b.rows; r++) {
                char *yr = yrow + r * s->Wo * es;
                for (int64_t kb = kc; kb < kc + b.nx; kb += L) {
                    const int64_t nk = fl_min(L, s->S - kb);
                    const char *to = (const char *)b.y[r] + (kb - kc) * L * es;
                    if (p->dtype == TC_FLOAT32)
                        tc__fd_f32_avx512_lanes_out((float *)yr, (const float *)to, s->S,
                                                    kb, nk, wt, s->nt);
                    else
                        tc__fd_f64_avx512_lanes_out((double *)yr, (const double *)to, s->S,
                                                    kb, nk, wt, s->nt);
                }
            }
        }
    }
#if defined(__x86_64__) || defined(__i386__)
    if (s->nt) __builtin_ia32_sfence(); /* order streamed stores before the join */
#endif
}

/* Threads claim items in grains from a shared counter, as in
 * filter_direct.c (fd_dyn): an item's result does not depend on the thread
 * (the band cache re-reads whenever its key changes), and a thread on a
 * contended core no longer holds up the other. Large grains: each claim
 * starts with an empty band cache. */
static void fl_dyn(void *arg, int64_t begin, int64_t end, int tid) {
    fl_job *j = arg;
    (void)begin;
    (void)end;
    for (;;) {
        const int64_t b = __atomic_fetch_add(&j->next, j->grain, __ATOMIC_RELAXED);
        if (b >= j->s->items) break;
        fl_blocks(arg, b, fl_min(j->s->items, b + j->grain), tid);
    }
}

void tc__fdl_execute(const tc__args *a) {
    fl_job j = {a, a->state, 0, 1};
    if (a->threads <= 1 || j.s->items <= a->threads) {
        tc__parallel_for(a->threads, j.s->items, fl_blocks, &j);
        return;
    }
    j.grain = fl_max(1, j.s->items / ((int64_t)a->threads * 4));
    tc__parallel_for(a->threads, a->threads, fl_dyn, &j);
}
