/* conv_1d.c - 1D convolution layers on the native NCW layout (solver
 * "cpu.conv.1d").
 *
 * The output positions of a row are the vector lanes: a register tile
 * (conv_1d_avx512.c) is up to 6 output channels x 4 vectors of 16
 * consecutive positions, its accumulators run the whole reduction (input
 * channels x taps), each step loads the input row at the tap's offset
 * (unaligned vector loads) and broadcasts one packed weight per output
 * channel. The tile stores straight to the NCW output and reads the NCW
 * input where it lies, so unlike cpu.conv.direct (16-channel blocks) and
 * cpu.conv.igemm (packed im2col panels) nothing is converted on the way in
 * or out.
 *
 * Only the tiles whose input window (the tile's positions plus the taps'
 * span, rounded up to whole vectors) leaves the input row, and every tile
 * of a strided layer, read a copy: the window of each of the group's
 * channels is built in a per-thread buffer through an index map (the
 * padding mode applied, strided rows split by phase so that each tap reads
 * consecutive buffer positions), by vector copies where the window is a run
 * of the row and gathers elsewhere.
 *
 * The weights are packed once per plan as [group][block][c][tap][mk]: the
 * group's output channels in blocks of at most 6, balanced (64 = 9 blocks of
 * 6 and 2 of 5: no block wastes lanes, the smaller ones run 20
 * accumulators instead of 24). Work items are (image, group, split of the
 * blocks, tile); an item runs each of its blocks over the tile's window
 * while it is in L1, so the input is read from memory once and the group's
 * weights stream from L2. The blocks are split over items only when there
 * are fewer than four tiles per thread. The threads claim runs of items
 * from a shared counter (about 16 claims per thread). Each output is one accumulator
 * summing channels and taps in one order: results do not depend on the
 * thread count. float32, AVX-512. Measurements: docs/solvers/cpu-conv-1d.md,
 * "Current figures". */
#include "core/internal.h"

#include <stdio.h>
#include <string.h>

#include "conv_1d.h"

typedef struct c1_geom {
    int64_t Cg, Kg, R, s, dil, span, W, Wo;
    int64_t nkb, kbase, kextra; /* output-channel blocks per group, balanced */
    int64_t ntw, nks, kps, items;
    int64_t Lph, bc, nmap; /* window: positions per phase, floats per channel
                              row of the buffer, map entries */
    size_t tapbytes, bufbytes, mapbytes, total;
} c1_geom;

static size_t c1_rup(size_t v) { return (v + 63) & ~(size_t)63; }

/* One row in, one row out, and that row reads input row 0: a leading axis
 * of size 1 padded in zeros mode reads the padding instead (the one output
 * row sits at -pad_lo); every other mode maps it back to row 0. */
static int c1_is1d(const tc__problem *p) {
    return p->in[0] == 1 && p->in[1] == 1 && p->msk[0] == 1 && p->msk[1] == 1 &&
           p->out[0] == 1 && p->out[1] == 1 &&
           (p->mode != TC_MODE_CONSTANT || (p->pad_lo[0] == 0 && p->pad_lo[1] == 0));
}

/* 0 when the sizes overflow */
static int c1_geometry(const tc__problem *p, int threads, c1_geom *g) {
    memset(g, 0, sizeof *g);
    g->Cg = p->C / p->G;
    g->Kg = p->K / p->G;
    g->R = p->msk[2];
    g->s = p->stride[2];
    g->dil = p->dil[2];
    g->W = p->in[2];
    g->Wo = p->out[2];
    if (!tc__mul_ok(g->R - 1, g->dil, &g->span) || g->span > ((int64_t)1 << 40)) return 0;
    g->nkb = tc__cdiv64(g->Kg, C1_MK);
    g->kbase = g->Kg / g->nkb;
    g->kextra = g->Kg % g->nkb;
    g->ntw = tc__cdiv64(g->Wo, C1_TW);
    int64_t items0;
    if (!tc__mul_ok(p->N * p->G, g->ntw, &items0)) return 0;
    g->nks = 1;
    if (items0 < 4 * (int64_t)threads) {
        g->nks = tc__cdiv64(4 * (int64_t)threads, items0);
        if (g->nks > g->nkb) g->nks = g->nkb;
    }
    g->kps = tc__cdiv64(g->nkb, g->nks);
    g->nks = tc__cdiv64(g->nkb, g->kps);
    g->items = items0 * g->nks;
    g->Lph = C1_TW + g->span / g->s;
    int64_t t;
    if (!tc__mul_ok(g->s, g->Lph, &g->nmap)) return 0;
    g->bc = (g->nmap + 15) / 16 * 16;
    if (!tc__mul_ok(g->bc, g->Cg, &t) || !tc__mul_ok(t, 4 * (int64_t)threads, &t) ||
        t > ((int64_t)1 << 40))
        return 0;
    g->tapbytes = c1_rup((size_t)(2 * g->R) * sizeof(int64_t));
    g->bufbytes = c1_rup((size_t)(g->Cg * g->bc) * 4);
    g->mapbytes = c1_rup((size_t)g->nmap * sizeof(int32_t));
    g->total = g->tapbytes + (size_t)threads * (g->bufbytes + g->mapbytes);
    return 1;
}

/* first output channel (within the group) and size of block kb */
static int64_t c1_kstart(const c1_geom *g, int64_t kb) {
    return kb * g->kbase + (kb < g->kextra ? kb : g->kextra);
}
static int64_t c1_ksize(const c1_geom *g, int64_t kb) {
    return g->kbase + (kb < g->kextra);
}

static int c1_available(void) { return (tc__cpu_detect() & TC__CPU_AVX512) != 0; }

static int c1_applicable(const tc__problem *p, const tc__env *env, char *why, size_t n) {
    const char *r = NULL;
    c1_geom g;
    if (p->op != TC_OP_CONV) r = "convolution layers only";
    else if (p->dtype != TC_FLOAT32) r = "float32 only";
    else if (!c1_available()) r = "needs AVX-512";
    else if (!c1_is1d(p)) r = "1D layers only";
    else if (p->in[2] > INT32_MAX) r = "rows longer than 2^31";
    else if (!c1_geometry(p, env->threads, &g)) r = "sizes overflow";
    if (r) {
        if (why) snprintf(why, n, "%s", r);
        return 0;
    }
    return 1;
}

static size_t c1_workspace(const tc__problem *p, const tc__env *env) {
    c1_geom g;
    return c1_geometry(p, env->threads, &g) ? g.total : 0;
}

static size_t c1_wpack_size(const tc__problem *p, const tc__env *env) {
    return (size_t)tc__w_count(p) * sizeof(float);
}

static tc_status c1_wpack(const tc__problem *p, const tc__env *env, const void *state,
                          const void *w, void *dst) {
    c1_geom g;
    if (!c1_geometry(p, env->threads, &g))
        return tc__error(TC_ERR_UNSUPPORTED, "cpu.conv.1d: sizes overflow");
    const float *src = w;
    float *d = dst;
    for (int64_t gi = 0; gi < p->G; gi++)
        for (int64_t kb = 0; kb < g.nkb; kb++) {
            int64_t k0 = gi * g.Kg + c1_kstart(&g, kb), mk = c1_ksize(&g, kb);
            for (int64_t c = 0; c < g.Cg; c++)
                for (int64_t r = 0; r < g.R; r++)
                    for (int64_t k = 0; k < mk; k++)
                        *d++ = src[((k0 + k) * g.Cg + c) * g.R + r];
        }
    return TC_OK;
}

typedef struct c1_job {
    const tc__args *a;
    c1_geom g;
    const int64_t *tap_in, *tap_buf; /* tap offsets in the input row, buffer */
    int64_t next, chunk; /* the next unclaimed item; items per claim */
} c1_job;

static void c1_items(void *arg, int64_t begin, int64_t end, int tid) {
    const c1_job *j = arg;
    const tc__args *a = j->a;
    const tc__problem *p = a->p;
    const c1_geom *g = &j->g;
    const float *x = a->x;
    const float *bias = a->bias;
    char *tws = (char *)a->ws + g->tapbytes + (size_t)tid * (g->bufbytes + g->mapbytes);
    float *buf = (float *)tws;
    int32_t *map = (int32_t *)(tws + g->bufbytes);
    const int64_t s = g->s, padlo = p->pad_lo[2];
    c1_targs ta;
    ta.R = g->R;
    ta.C = g->Cg;
    ta.yk = g->Wo;
    for (int64_t it = begin; it < end; it++) {
        int64_t t = it, tw = t % g->ntw;
        t /= g->ntw;
        int64_t ks = t % g->nks;
        t /= g->nks;
        int64_t gi = t % p->G, n = t / p->G;
        int64_t o0 = tw * C1_TW;
        int64_t nvalid = g->Wo - o0 < C1_TW ? g->Wo - o0 : C1_TW;
        int64_t nv = tc__cdiv64(nvalid, 16), last = nvalid - 16 * (nv - 1);
        ta.mlast = last == 16 ? 0xffffu : (1u << last) - 1;
        const float *xg = x + (n * p->C + gi * g->Cg) * g->W;
        int64_t e0 = o0 * s - padlo; /* input position of window element 0 */
        if (s == 1 && e0 >= 0 && e0 + g->Lph <= g->W) {
            ta.x = xg + e0;
            ta.xc = g->W;
            ta.tapoff = j->tap_in;
        } else {
            for (int64_t ph = 0; ph < s; ph++)
                for (int64_t q = 0; q < g->Lph; q++)
                    map[ph * g->Lph + q] =
                        (int32_t)tc__boundary_index(e0 + q * s + ph, g->W, p->mode);
            tc__c1_window_avx512(buf, g->bc, xg, g->W, g->Cg, map, g->nmap, (float)p->cval);
            ta.x = buf;
            ta.xc = g->bc;
            ta.tapoff = j->tap_buf;
        }
        int64_t kb0 = ks * g->kps, kb1 = kb0 + g->kps < g->nkb ? kb0 + g->kps : g->nkb;
        for (int64_t kb = kb0; kb < kb1; kb++) {
            int64_t k0 = gi * g->Kg + c1_kstart(g, kb), mk = c1_ksize(g, kb);
            ta.w = (const float *)a->wpack + k0 * g->Cg * g->R;
            ta.bias = bias ? bias + k0 : NULL;
            ta.y = (float *)a->y + (n * p->K + k0) * g->Wo + o0;
            tc__c1_kernel_avx512((int)mk, (int)nv)(&ta);
        }
    }
}

/* One call per thread slot (its buffer): claims runs of items until none
 * is left, so a thread that starts late or shares its CPU takes fewer.
 * Each item writes its own outputs: the result does not depend on which
 * thread ran it. */
static void c1_slot(void *arg, int64_t begin, int64_t end, int tid) {
    c1_job *j = arg;
    (void)begin;
    (void)end;
    for (;;) {
        int64_t b = __atomic_fetch_add(&j->next, j->chunk, __ATOMIC_RELAXED);
        if (b >= j->g.items) break;
        c1_items(j, b, b + j->chunk < j->g.items ? b + j->chunk : j->g.items, tid);
    }
}

static tc_status c1_execute(const tc__args *a) {
    const tc__problem *p = a->p;
    c1_job j;
    j.a = a;
    if (!c1_geometry(p, a->threads, &j.g))
        return tc__error(TC_ERR_UNSUPPORTED, "cpu.conv.1d: sizes overflow");
    if (!a->wpack) return tc__error(TC_ERR_INTERNAL, "cpu.conv.1d: weights not packed");
    const c1_geom *g = &j.g;
    int64_t *tap = a->ws;
    for (int64_t r = 0; r < g->R; r++) {
        int64_t e = r * g->dil;
        tap[r] = e;
        tap[g->R + r] = (e % g->s) * g->Lph + e / g->s;
    }
    j.tap_in = tap;
    j.tap_buf = tap + g->R;
    j.next = 0;
    j.chunk = g->items / (16 * (int64_t)a->threads);
    if (j.chunk < 1) j.chunk = 1;
    tc__parallel_for(a->threads, a->threads, c1_slot, &j);
    return TC_OK;
}

/* Seconds: the FMAs at 88% of peak on tiles of 8 or more accumulators
 * (fewer leave the two FMA pipes waiting on their 4-cycle latency; a
 * partial last vector wastes lanes), a few cycles per tile call and per
 * reduction step beyond the FMAs, the window copies (per element ~0.25 ns
 * copied, 0.4 ns picked from stride-2 pairs, 1 ns gathered), overlapped
 * with the time to read the input and write the output once. */
/* FMA issue slots of one tile column of nv vectors over all k blocks:
 * kextra blocks of kbase + 1 channels, the others kbase (c1_ksize) */
static double c1_column_slots(const c1_geom *g, int64_t nv) {
    const int64_t cnt[2] = {g->kextra, g->nkb - g->kextra}, mk[2] = {g->kbase + 1, g->kbase};
    double s = 0.0;
    for (int i = 0; i < 2; i++) {
        if (cnt[i] == 0) continue;
        double acc = (double)(mk[i] * nv);
        double lat = acc >= 8.0 ? 1.0 : acc / 8.0;
        s += (double)cnt[i] * (double)mk[i] * nv * 16 / lat;
    }
    return s;
}

static double c1_estimate(const tc__problem *p, const tc__env *env) {
    c1_geom g;
    if (!c1_geometry(p, env->threads, &g)) return 1e30;
    const int th = env->threads > 0 ? env->threads : 1;
    /* FMA issue slots spent per tile column (all blocks), over the row:
     * ntw - 1 full columns and the last (closed form: a loop over columns
     * and blocks would run for minutes on fuzzed sizes) */
    double slots = 0.0, useful = (double)g.Wo * g.Kg;
    if (g.ntw > 0)
        slots = (double)(g.ntw - 1) * c1_column_slots(&g, C1_TW / 16) +
                c1_column_slots(&g, tc__cdiv64(g.Wo - (g.ntw - 1) * C1_TW, 16));
    double eff = 0.88 * useful / slots;
    double red = (double)g.Cg * g.R;
    eff *= red / (red + 4.0); /* per tile: accumulator init and stores */
    double par = g.items >= th ? 1.0 : (double)g.items / th;
    double t_fma = tc__problem_flops(p) / (tc__peak_flops(env) * eff * par);
    /* window copies: edge tiles, or every tile of a strided layer */
    double ncopy = g.s > 1 ? (double)g.ntw : (g.ntw < 2 ? (double)g.ntw : 2.0);
    double celem = ncopy * (double)p->N * p->C * g.nmap * (g.s == 1 ? 0.25 : g.s == 2 ? 0.4 : 1.0);
    double calls = (double)p->N * p->G * g.ntw * g.nkb;
    double t_comp = t_fma + (celem * 1e-9 + calls * 10e-9) / th;
    /* the rows stream in while the tiles compute: a quarter of the shorter
     * time shows (one-thread CPU time, k7/2 32->64 @4096: 1.37 ms measured,
     * 1.66 ms with the memory time added in full; depthwise k5 64 @4096,
     * batch 4, memory-bound: 0.58 ms) */
    double t_mem = tc__problem_bytes(p) / tc__peak_bandwidth(env);
    return t_comp > t_mem ? t_comp + 0.25 * t_mem : t_mem + 0.25 * t_comp;
}

const tc__solver tc__solver_cpu_conv_1d = {
    .name = "cpu.conv.1d",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_CONV,
    .summary = "1D layers on the NCW layout as it is: 6 output channels x 64 positions per register tile, input rows loaded at each tap's offset, weights broadcast, no layout conversion; every stride, dilation, group and padding mode (float32, AVX-512).",
    .available = c1_available,
    .applicable = c1_applicable,
    .estimate = c1_estimate,
    .workspace = c1_workspace,
    .execute = c1_execute,
    .wpack_size = c1_wpack_size,
    .wpack = c1_wpack,
};
