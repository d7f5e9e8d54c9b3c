/* filter_direct.c - direct SIMD solvers for the single-channel filter
 * problem (TC_OP_FILTER: N independent 1D/2D/3D images, stride 1), every
 * boundary mode, float32 and float64:
 *
 *   cpu.filter.direct-avx512   4 rows x 4 zmm register blocks (filter_direct_avx512.c)
 *   cpu.filter.direct-avx2     4 rows x 2 ymm register blocks (filter_direct_avx2.c)
 *   cpu.filter.direct-scalar   the same tiling with a plain C kernel (any x86/other)
 *
 * They share this driver and differ only in the row-block kernel
 * (filter_direct.h), so they are three registry entries: each is tested and
 * can be forced on machines that have more than its ISA.
 *
 * Two paths share the tiling below: plain rows (this file; the kernel reads
 * the caller's rows at every tap offset) and, for cpu.filter.direct-avx512 with
 * large masks, lane-interleaved rows (filter_direct_lanes.c: aligned loads
 * only, at the price of in-register transposes).
 *
 * Tiling. Work items are blocks of 4 output rows of one output plane over
 * one x tile, ordered (n, x tile, row band, plane, row block) and split
 * into contiguous ranges per thread. The x tile and the row band are sized
 * so that the m0 input planes of a band stay in L2 while the planes slide:
 * the CPU analogue of the seeds' shared-memory tiles with halos. Inside a
 * block the kernel keeps 4 x V accumulators in registers and streams input
 * rows from L1.
 *
 * Boundaries cost (almost) nothing extra in any mode:
 *  - rows and planes outside the input are row pointers: the row that
 *    tc__boundary_index maps to, or a plan-owned row of cval;
 *  - along x, outputs whose taps stay inside the row read the caller's
 *    input directly; the few outputs near each end (a vector or so, and a
 *    whole row when the mask is as wide as the input) read a small padded
 *    copy of that end of the input row, built per block just before the
 *    kernel reads it (2D and 1D; 3D uses the plane ring below).
 * Masks larger than the input are therefore handled in every mode.
 *
 * TILECONV_L2_BYTES=n overrides the L2 size used for tiling (tests use it
 * to force many tiles and bands on small problems).
 *
 * Results are identical for any thread count: the blocking depends only on
 * the problem, and each output sums its taps in a fixed order.
 */
#define _GNU_SOURCE /* sched_getcpu */
#include "cpu/filter_direct.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the row copy of the ISAs without their own */
static void fd_memcpy(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }

typedef struct fd_isa {
    const char *name;
    unsigned need;          /* TC__CPU_* bits, 0 = none */
    tc__fd_kernel kern[2];  /* float32, float64 */
    tc__fd_kernel kern2[2]; /* two output planes per block (NULL: none) */
    tc__fd_kernel kern2ld[2]; /* the same, taps loaded, not shifted (NULL: none) */
    void (*copy)(void *, const void *, size_t); /* the ring's row copy */
    int vl[2];              /* lanes per vector */
    double lanes32;         /* float32 lanes, for the estimate */
} fd_isa;

/* ---------------- scalar kernel ---------------- */
#define FD_SCALAR(T, NAME)                                                    \
    static void NAME(const tc__fd_block *b) {                                 \
        enum { CH = 256 };                                                    \
        T acc[CH];                                                            \
        const T *w = b->w;                                                    \
        const T *const *x = (const T *const *)b->x;                           \
        for (int j = 0; j < b->rows; j++)                                     \
            for (int64_t k0 = 0; k0 < b->nx; k0 += CH) {                      \
                int64_t n = b->nx - k0 < CH ? b->nx - k0 : CH;                \
                for (int64_t k = 0; k < n; k++) acc[k] = 0;                   \
                for (int64_t r0 = 0; r0 < b->m0; r0++)                        \
                    for (int64_t r1 = 0; r1 < b->m1; r1++) {                  \
                        const T *p = x[r0 * b->xs + j + r1] + b->xoff + k0;   \
                        const T *wr = w + (r0 * b->m1 + r1) * b->m2;          \
                        for (int64_t r2 = 0; r2 < b->m2; r2++) {              \
                            const T wv = wr[r2];                              \
                            for (int64_t k = 0; k < n; k++)                   \
                                acc[k] += wv * p[k + r2];                     \
                        }                                                     \
                    }                                                         \
                memcpy((T *)b->y[j] + k0, acc, (size_t)n * sizeof(T));        \
            }                                                                 \
    }
FD_SCALAR(float, fd_f32_scalar)
FD_SCALAR(double, fd_f64_scalar)

static const fd_isa fd_isa_avx512 = {"avx512", TC__CPU_AVX512,
                                     {tc__fd_f32_avx512, tc__fd_f64_avx512},
                                     {tc__fd_f32_avx512_pair, tc__fd_f64_avx512_pair},
                                     {tc__fd_f32_avx512_pair_ld, NULL},
                                     tc__fd_copy_avx512, {16, 8}, 16};
static const fd_isa fd_isa_avx2 = {"avx2", TC__CPU_AVX2,
                                   {tc__fd_f32_avx2, tc__fd_f64_avx2}, {NULL, NULL},
                                   {NULL, NULL}, fd_memcpy, {8, 4}, 8};
static const fd_isa fd_isa_scalar = {"scalar", 0,
                                     {fd_f32_scalar, fd_f64_scalar}, {NULL, NULL},
                                     {NULL, NULL}, fd_memcpy, {8, 8}, 4};

/* ---------------- plan ---------------- */
typedef tc__fd_state fd_state;

static int64_t fd_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t fd_max(int64_t a, int64_t b) { return a > b ? a : b; }

int64_t tc__fd_l2_bytes(void) {
    static int64_t cached;
    int64_t v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v) return v;
    long l2 = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    const char *env = tc__knob_get(TC__KNOB_L2_BYTES); /* tests: force small tiles */
    if (env && atol(env) > 0) l2 = atol(env);
    v = l2 >= (16 << 10) ? (int64_t)l2 : (int64_t)(1 << 20);
    if (v > (8 << 20)) v = 8 << 20;
    __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    return v;
}

/* L1 data cache bytes (sysconf; 32 KiB where it gives none) */
static int64_t fd_l1_bytes(void) {
    long l1 = -1;
#ifdef _SC_LEVEL1_DCACHE_SIZE
    l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
#endif
    return l1 >= (8 << 10) && l1 <= (1 << 20) ? (int64_t)l1 : (int64_t)(32 << 10);
}

/* a sysfs cache file's number, with its K / M / G suffix */
static int64_t fd_sysfs_bytes(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    unsigned long long v = 0;
    char unit = 0;
    const int n = fscanf(f, "%llu%c", &v, &unit);
    fclose(f);
    if (n < 1) return 0;
    if (n == 2 && (unit == 'K' || unit == 'k')) v <<= 10;
    else if (n == 2 && (unit == 'M' || unit == 'm')) v <<= 20;
    else if (n == 2 && (unit == 'G' || unit == 'g')) v <<= 30;
    return (int64_t)v;
}

/* The last-level cache: the size of the highest
 * data or unified cache level that sysfs lists for cpu0 (one instance:
 * what the threads of one call on a CCX or socket share); where sysfs
 * has none, sysconf's level-3 size (which glibc may give for the whole
 * package: 384 MiB on the Zen 5 VM, whose L3 instance is 32 MiB), else 8x
 * L2. TILECONV_LLC_BYTES overrides it (tests). */
int64_t tc__fd_llc_bytes(void) {
    static int64_t cached;
    int64_t v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v) return v;
    const char *env = tc__knob_get(TC__KNOB_LLC_BYTES);
    if (env && atoll(env) > 0) return atoll(env); /* not cached: tests set it per run */
    int level = 0;
    for (int i = 0; i < 16; i++) {
        char path[96], type[32] = "";
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        const int lv = (int)fd_sysfs_bytes(path);
        if (lv <= 0) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%31s", type) != 1) type[0] = '\0';
            fclose(f);
        }
        if (!strcmp(type, "Instruction") || lv < level) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        const int64_t b = fd_sysfs_bytes(path);
        if (b > 0) {
            level = lv;
            v = b;
        }
    }
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (!v) {
        const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (l3 > 0) v = l3;
    }
#endif
    if (v < tc__fd_l2_bytes()) v = 8 * tc__fd_l2_bytes();
    __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    return v;
}

static size_t fd_r64(size_t v) { return (v + 63) & ~(size_t)63; }

/* Plane ring (3D): a thread keeps the m0 input planes of its current band
 * as padded rows (boundary applied along x, row starts chosen so that tap
 * column pl2 is 64-byte aligned) in an L2-resident ring, slot = extended
 * plane mod m0. Sliding to the next output plane brings in one new plane,
 * so each input row is read from memory once per band; the kernel sees one
 * piece per row (no edge table, no short edge strips). The new plane is
 * copied a row block at a time, just before the block that first needs
 * those rows: the reads interleave with the arithmetic (a whole-plane copy
 * up front was a burst of memory stalls with nothing to overlap). */

static void fd_ring_geometry(const tc__problem *p, const fd_isa *isa, fd_state *s) {
    const int64_t es = (int64_t)p->esize, al = 64 / es;
    const int64_t budget = tc__fd_l2_bytes() / 2;
    s->ring = 1;
    /* two output planes per item (the ring then holds m0 + 1 planes)
     * where the ISA has the pair kernel: 3x3 taps a plane always; 5x5
     * when the input is over two L2s (in L2, one core, its 2 FMAs per
     * broadcast tap against strip()'s 4 cost 2-4%; from L3 or memory it
     * gains 5-30%: docs/solvers/cpu-filter-3d.md) */
    const char *pair_env = tc__knob_get(TC__KNOB_FD_PAIR);
    int pair = isa->kern2[0] && s->Do >= 2 &&
               ((s->m1 == 3 && s->m2 == 3) ||
                (s->m1 == 5 && s->m2 == 5 &&
                 (double)tc__x_count(p) * es > 2.0 * tc__fd_l2_bytes()));
    if (pair_env && pair_env[0]) pair = isa->kern2[0] && s->Do >= 2 && pair_env[0] != '0';
    s->P = pair ? 2 : 1;
    /* input and output together beyond the last-level cache: the input
     * comes from memory on every call and the output cannot stay in cache
     * for its reader. So the output is streamed (no read for ownership of
     * its lines: 256^3 k3 two threads 1.17-1.27x against regular stores)
     * and the fill prefetches the input two row blocks ahead as well as
     * one (1.03-1.08x); a call whose data fits keeps its output in cache
     * (docs/solvers/cpu-filter-3d.md) */
    const int mem = (double)(tc__x_count(p) + tc__y_count(p)) * es > (double)tc__fd_llc_bytes();
    s->nt = isa->need != 0 && mem;
    s->pff = s->pf && mem;
    /* the pair kernel's outputs into L2 two row blocks ahead, one strip's
     * lines at a time, where they are stored through the caches and the
     * input is over two L2s (so is the output): an output buffer that
     * other work evicted is otherwise read for ownership from memory
     * line by line while the kernel's stores wait (128^3 k3 two threads,
     * the output rotating over four buffers: 1.17-1.22x; one output in
     * cache: 1.03-1.05x; docs/solvers/cpu-filter-3d.md) */
    s->pfo = s->pf && !s->nt;
    const int64_t ns = s->m0 + s->P - 1; /* ring slots */
    int64_t tx = budget / (4 * s->m0 * s->xs * es);
    tx = fd_max(256, tx / 64 * 64);
    s->ntx = tc__cdiv64(s->Wo, fd_min(s->Wo, tx));
    s->Tx = fd_min(s->Wo, tc__cdiv64(tc__cdiv64(s->Wo, s->ntx), 64) * 64); /* equal tiles */
    s->roff = (al - tc__mod(s->pl2, al)) % al;
    /* the padded rows' x outside the input: x = -1-i (i < nsL), W+i (i < nsR) */
    s->nsL = fd_max(0, s->pl2);
    s->nsR = fd_max(0, s->Wo - s->pl2 + s->m2 - 1 - s->W);
    s->RW = tc__cdiv64(s->roff + s->Tx + s->m2 - 1, al) * al;
    int64_t hb = budget / (ns * s->RW * es) - (s->m1 - 1);
    hb = fd_max(s->R, hb / s->R * s->R);
    s->nbands = tc__cdiv64(s->Ho, fd_min(hb, tc__cdiv64(s->Ho, s->R) * s->R));
    s->Hb = tc__cdiv64(tc__cdiv64(s->Ho, s->nbands), s->R) * s->R;
    s->Hbe = s->Hb + s->m1 - 1;
    /* the fill's prefetch of the next block's rows goes into L2 where the
     * L1 cannot hold them beside the ring rows the block's kernel reads
     * (Zen 4's 32 KiB L1, 256-wide rows k3: 27 + 8 KiB; 256^3 one thread
     * 1.04-1.06x over the far prefetch into L2 alone, 48x256x256 from L3
     * 1.10-1.13x), into L1 otherwise (Zen 5's 48 KiB; 128-wide k3 rows).
     * 3x3 taps a plane only: 128^3 k5 (35 KiB) two threads 0.97-0.99x
     * with it, 256^3 k5 level (docs/solvers/cpu-filter-3d.md) */
    s->pfl2 = s->pf && s->m1 * s->m2 <= 9 &&
              (ns * (s->R + s->m1 - 1) * s->RW + s->P * s->R * (s->Tx + s->m2 - 1)) * es >
                  fd_l1_bytes();
    s->items = p->N * s->ntx * s->nbands * tc__cdiv64(s->Do, s->P) * (s->Hb / s->R);
    s->ws_thread = fd_r64((size_t)(ns * s->Hbe * s->RW * es)) +
                   fd_r64((size_t)(ns * s->Hbe) * sizeof(void *)) +
                   fd_r64((size_t)(ns * s->xs) * sizeof(void *)) +
                   fd_r64((size_t)(2 * ns) * sizeof(int64_t));
}

/* Fills the geometry (everything but the tables) for ISA isa. */
static void fd_geometry(const tc__problem *p, const fd_isa *isa, fd_state *s) {
    const int64_t es = (int64_t)p->esize, vl = isa->vl[p->dtype == TC_FLOAT64];
    memset(s, 0, sizeof *s);
    s->D = p->in[0]; s->H = p->in[1]; s->W = p->in[2];
    s->Do = p->out[0]; s->Ho = p->out[1]; s->Wo = p->out[2];
    s->m0 = p->msk[0]; s->m1 = p->msk[1]; s->m2 = p->msk[2];
    s->pl0 = p->pad_lo[0]; s->pl1 = p->pad_lo[1]; s->pl2 = p->pad_lo[2];
    s->R = TC__FD_RMAX;
    s->P = 1;
    s->xs = s->R + s->m1 - 1;
    /* an output far larger than L2 is not read back soon: non-temporal
     * stores save the read-for-ownership (a third of the traffic); the 3D
     * ring decides by the last-level cache instead (fd_ring_geometry) */
    s->nt = isa->need != 0 && (double)tc__y_count(p) * es > 8.0 * tc__fd_l2_bytes();
    /* the ring's prefetch: for inputs the L2s cannot hold between calls
     * (128^3 float32 comes from L3 on each call: k3 two threads
     * 1.12-1.14x with it); one in L2 pays its instructions (~4%) */
    s->pf = (double)tc__x_count(p) * es > 2.0 * tc__fd_l2_bytes();
    if (isa->need == TC__CPU_AVX512 && tc__fdl_wanted(p)) {
        s->lanes = 1;
        tc__fdl_geometry(p, s);
        return;
    }
    const char *ring_env = tc__knob_get(TC__KNOB_FD_RING); /* tests: 0 = pieces */
    if (s->m0 > 1 && !(ring_env && ring_env[0] == '0')) {
        fd_ring_geometry(p, isa, s);
        return;
    }
    /* x: exact inside range, then round the left edge up and the inside
     * width down to whole strips so tails land in the edge pieces. AVX-512
     * with >= 49 taps per plane: whole kernel strips (4 vectors), so the
     * edge pieces and the inside run the full-strip code (in-register
     * shifts) instead of one-vector masked strips (2D 1024^2 one core: k9
     * 4-9% faster, k7 2%; k3 and k5 3-6% slower, where the longer edge
     * copies cost more than the masked strips did) */
    const int64_t sw = isa->need == TC__CPU_AVX512 && s->Do * s->Ho > 1 &&
                               s->m1 * s->m2 >= 49 ? 4 * vl : vl;
    int64_t ie0 = fd_max(0, s->pl2), ie1 = fd_min(s->Wo, s->W - s->m2 + 1 + s->pl2);
    if (ie1 - ie0 < sw) {
        s->xl1 = s->xr0 = s->Wo; /* one padded piece per row */
    } else {
        s->xl1 = ie0 == 0 ? 0 : fd_min(tc__cdiv64(ie0, sw) * sw, ie1);
        s->xr0 = ie1 == s->Wo ? s->Wo : s->xl1 + (ie1 - s->xl1) / sw * sw;
    }
    s->EL = s->xl1 > 0 ? s->xl1 + s->m2 - 1 : 0;
    s->ER = s->Wo > s->xr0 ? s->Wo - s->xr0 + s->m2 - 1 : 0;
    /* tiles: a block's input rows (m0 x xs rows of Tx) well inside L2, and
     * a band's planes (m0 x (Hb + m1 - 1) rows) in half of it */
    const int64_t budget = tc__fd_l2_bytes() / 2;
    int64_t tx = budget / (4 * s->m0 * s->xs * es);
    tx = fd_max(256, tx / 64 * 64);
    s->ntx = tc__cdiv64(s->Wo, fd_min(s->Wo, tx));
    s->Tx = fd_min(s->Wo, tc__cdiv64(tc__cdiv64(s->Wo, s->ntx), 64) * 64); /* equal tiles */
    int64_t hb = budget / (s->m0 * s->Tx * es) - (s->m1 - 1);
    hb = fd_max(s->R, hb / s->R * s->R);
    s->nbands = tc__cdiv64(s->Ho, fd_min(hb, tc__cdiv64(s->Ho, s->R) * s->R));
    s->Hb = tc__cdiv64(tc__cdiv64(s->Ho, s->nbands), s->R) * s->R;
    s->items = p->N * s->ntx * s->nbands * s->Do * (s->Hb / s->R);
}

static void fd_destroy(void *st) {
    fd_state *s = st;
    if (!s) return;
    tc__free(s->dmap);
    tc__free(s->cvrow);
    tc__free(s->cvT);
    tc__free(s);
}

/* The longest stretch [run[0], run[1]) of an edge map that reads
 * consecutive input elements (copied with memcpy by the edge builders). */
static void fd_run_of(const int64_t *map, int64_t n, int64_t run[2]) {
    run[0] = run[1] = 0;
    for (int64_t a = 0; a < n;) {
        int64_t b = a + 1;
        if (map[a] >= 0)
            while (b < n && map[b] == map[a] + (b - a)) b++;
        if (map[a] >= 0 && b - a > run[1] - run[0]) {
            run[0] = a;
            run[1] = b;
        }
        a = b;
    }
}

static tc_status fd_plan(const tc__problem *p, const fd_isa *isa, void **out) {
    fd_state *s = tc__alloc(sizeof *s);
    if (!s) return tc__error(TC_ERR_OUT_OF_MEMORY, "cpu.direct: out of memory");
    fd_geometry(p, isa, s);
    if (s->lanes) {
        tc_status st = tc__fdl_plan(p, s);
        if (st != TC_OK) {
            fd_destroy(s);
            return st;
        }
        *out = s;
        return TC_OK;
    }
    s->kern = isa->kern[p->dtype == TC_FLOAT64];
    s->kern2 = s->P == 2 ? isa->kern2[p->dtype == TC_FLOAT64] : NULL;
    {
        /* the pair kernel's taps by unaligned loads instead of valignd on
         * Zen 4 (512-bit ops over two 256-bit halves; float32 one core
         * 1.07x in cache, 256^3 k3 two threads 1.08-1.11x, 128^3 k5
         * 1.07-1.08x); the Zen 5 VM measured loads for one of the two
         * vectors 0.93-0.97x on 128^3 k3, so it keeps the shifts
         * (docs/solvers/cpu-filter-3d.md). TILECONV_FD_PAIR=2 / 3 force
         * the loads / the shifts (tests) */
        const char *pe = tc__knob_get(TC__KNOB_FD_PAIR);
        int ld = tc__cpu_uarch() == TC__UARCH_ZEN4;
        if (pe && (pe[0] == '2' || pe[0] == '3')) ld = pe[0] == '2';
        if (s->kern2 && ld && isa->kern2ld[p->dtype == TC_FLOAT64])
            s->kern2 = isa->kern2ld[p->dtype == TC_FLOAT64];
    }
    s->copy = isa->copy;
    int64_t nd = s->Do + s->m0 - 1, nh = s->Ho + s->m1 - 1;
    int64_t cvlen = s->Tx + s->EL + s->ER + s->m2 + 64;
    s->dmap = tc__alloc((size_t)(nd + nh + s->EL + s->ER + s->nsL + s->nsR) * sizeof(int64_t));
    s->cvrow = tc__alloc((size_t)cvlen * p->esize);
    if (!s->dmap || !s->cvrow) {
        fd_destroy(s);
        return tc__error(TC_ERR_OUT_OF_MEMORY, "cpu.direct: out of memory");
    }
    s->hmap = s->dmap + nd;
    s->xmapL = s->hmap + nh;
    s->xmapR = s->xmapL + s->EL;
    s->smapL = s->xmapR + s->ER;
    s->smapR = s->smapL + s->nsL;
    for (int64_t i = 0; i < s->nsL; i++) s->smapL[i] = tc__boundary_index(-1 - i, s->W, p->mode);
    for (int64_t i = 0; i < s->nsR; i++) s->smapR[i] = tc__boundary_index(s->W + i, s->W, p->mode);
    for (int64_t i = 0; i < nd; i++) s->dmap[i] = tc__boundary_index(i - s->pl0, s->D, p->mode);
    for (int64_t i = 0; i < nh; i++) s->hmap[i] = tc__boundary_index(i - s->pl1, s->H, p->mode);
    for (int64_t k = 0; k < s->EL; k++)
        s->xmapL[k] = tc__boundary_index(k - s->pl2, s->W, p->mode);
    for (int64_t k = 0; k < s->ER; k++)
        s->xmapR[k] = tc__boundary_index(s->xr0 - s->pl2 + k, s->W, p->mode);
    fd_run_of(s->xmapL, s->EL, s->runL);
    fd_run_of(s->xmapR, s->ER, s->runR);
    for (int64_t k = 0; k < cvlen; k++) {
        if (p->dtype == TC_FLOAT32) ((float *)s->cvrow)[k] = (float)p->cval;
        else ((double *)s->cvrow)[k] = p->cval;
    }
    *out = s;
    return TC_OK;
}

/* ---------------- execute ---------------- */
#define FD_RANGES 64 /* claim ranges of fd_dyn; more threads share them */
typedef struct fd_job {
    const tc__args *a;
    const fd_state *s;
    char *ws;               /* threads x fd_thread_bytes: row pointers, edges */
    int64_t grain;          /* fd_dyn: items per claim */
    tc__range_fn fn;        /* fd_dyn: the loop over a range of items */
    void (*init)(const struct fd_job *, int tid); /* fd_dyn: per thread, once */
    int nr;                 /* fd_dyn: claim ranges (one per thread) */
    struct {
        _Alignas(64) int64_t next; /* next unclaimed item of the range */
        int64_t end;
    } r[FD_RANGES];
} fd_job;

/* One padded edge: dst[k] = extended row at map[k] (cval where < 0). A
 * typed loop: the edges are short. */
#define FD_EDGE(T, NAME)                                                      \
    static void NAME(T *dst, const T *src, const int64_t *map, int64_t n,     \
                     const int64_t *run, T cv) {                              \
        /* run[0] .. run[1]: map[k] = map[run[0]] + k - run[0] (a memcpy) */  \
        for (int64_t k = 0; k < run[0]; k++) {                                \
            int64_t i = map[k];                                               \
            dst[k] = i >= 0 ? src[i] : cv;                                    \
        }                                                                     \
        if (run[1] > run[0])                                                  \
            memcpy(dst + run[0], src + map[run[0]], (size_t)(run[1] - run[0]) * sizeof(T)); \
        for (int64_t k = run[1]; k < n; k++) {                                \
            int64_t i = map[k];                                               \
            dst[k] = i >= 0 ? src[i] : cv;                                    \
        }                                                                     \
    }
FD_EDGE(float, fd_edge_f32)
FD_EDGE(double, fd_edge_f64)

/* Per-thread scratch of the plain path: m0*xs row pointers, then m0*xs
 * padded edge rows of max(EL, ER) elements, built for each block right
 * before the kernel reads them. (A separate pre-pass over all rows cost
 * ~10% of 2D k3: two cold lines per row, with nothing to overlap them.) */
static size_t fd_thread_bytes(const tc__problem *p, const fd_state *s) {
    const int64_t ew = fd_max(s->EL, s->ER);
    return fd_r64((size_t)(s->m0 * s->xs) * sizeof(void *)) +
           fd_r64((size_t)(s->m0 * s->xs * ew) * p->esize);
}

static void fd_blocks(void *arg, int64_t begin, int64_t end, int tid) {
    const fd_job *j = arg;
    const fd_state *s = j->s;
    const tc__problem *p = j->a->p;
    const int64_t es = (int64_t)p->esize, ew = fd_max(s->EL, s->ER);
    char *tw = j->ws + (size_t)tid * fd_thread_bytes(p, s);
    const void **ptrs = (const void **)tw;
    char *eb = tw + fd_r64((size_t)(s->m0 * s->xs) * sizeof(void *));
    tc__fd_block b;
    tc__fd_block_init(&b, s, ptrs, j->a->w, s->nt);
    for (int64_t it = begin; it < end; it++) {
        tc__fd_item w;
        if (!tc__fd_item_decode(s, it, &w)) continue;
        const int64_t o0 = w.o0, xt = w.xt, n = w.n, o1 = w.o1;
        b.rows = (int)fd_min(s->R, s->Ho - o1);
        const int64_t t0 = xt * s->Tx, t1 = fd_min(s->Wo, t0 + s->Tx);
        const char *xn = (const char *)j->a->x + (size_t)(n * s->D * s->H * s->W) * es;
        char *yrow = (char *)j->a->y + (size_t)(((n * s->Do + o0) * s->Ho + o1) * s->Wo) * es;
        for (int seg = 0; seg < 3; seg++) {
            int64_t a0 = seg == 0 ? 0 : seg == 1 ? s->xl1 : s->xr0;
            int64_t a1 = seg == 0 ? s->xl1 : seg == 1 ? s->xr0 : s->Wo;
            a0 = fd_max(a0, t0);
            a1 = fd_min(a1, t1);
            if (a0 >= a1) continue;
            for (int64_t r0 = 0; r0 < s->m0; r0++) {
                const int64_t pd = s->dmap[o0 + r0];
                for (int64_t i = 0; i < b.rows + s->m1 - 1; i++) {
                    const int64_t h = s->hmap[o1 + i];
                    const void *q;
                    if (pd < 0 || h < 0) {
                        q = s->cvrow;
                    } else {
                        const char *src = xn + ((pd * s->H + h) * s->W) * es;
                        char *e = eb + (r0 * s->xs + i) * ew * es;
                        if (seg == 1) {
                            q = src + (a0 - s->pl2) * es;
                        } else if (p->dtype == TC_FLOAT32) {
                            fd_edge_f32((float *)e, (const float *)src,
                                        seg == 0 ? s->xmapL : s->xmapR,
                                        seg == 0 ? s->EL : s->ER,
                                        seg == 0 ? s->runL : s->runR, *(const float *)s->cvrow);
                            q = e + (seg == 0 ? a0 : a0 - s->xr0) * es;
                        } else {
                            fd_edge_f64((double *)e, (const double *)src,
                                        seg == 0 ? s->xmapL : s->xmapR,
                                        seg == 0 ? s->EL : s->ER,
                                        seg == 0 ? s->runL : s->runR, *(const double *)s->cvrow);
                            q = e + (seg == 0 ? a0 : a0 - s->xr0) * es;
                        }
                    }
                    ptrs[r0 * s->xs + i] = q;
                }
            }
            b.nx = a1 - a0;
            for (int r = 0; r < b.rows; r++) b.y[r] = yrow + (r * s->Wo + a0) * es;
            s->kern(&b);
        }
    }
#if defined(__x86_64__) || defined(__i386__)
    if (s->nt) __builtin_ia32_sfence(); /* order streamed stores before the join */
#endif
}



/* prefetcht1 (into L2) through inline asm (tc__prefetch's reason: GCC
 * may delete a builtin prefetch as free of side effects) */
static inline void fd_prefetch_l2(const void *p) {
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("prefetcht1 %0" ::"m"(*(const char *)p));
#else
    __builtin_prefetch(p, 0, 2);
#endif
}
/* Every cache line of bytes [p, p + bytes) prefetched: into L1, or (l2)
 * into L2 */
static inline void fd_prefetch_span(const void *p, int64_t bytes, int l2) {
    const uintptr_t l1 = (uintptr_t)p + (uintptr_t)bytes;
    for (uintptr_t l = (uintptr_t)p & ~(uintptr_t)63; l < l1; l += 64) {
        if (l2) fd_prefetch_l2((const void *)l);
        else tc__prefetch((const void *)l);
    }
}

/* Copies the band rows [hr0, hr1) of extended plane e of image n, tile X0
 * (width tw), into ring slot e mod (m0 + P - 1) and points rowp at them (or
 * at the cval row). With pf, each copied row's source R rows further down
 * the same plane is prefetched into L1: the rows the next row block of
 * this band copies, in the same loop (the row addresses are at hand), so
 * their reads overlap this block's kernel. Boundary along x by the plan's
 * maps (x = -1-i reads the row's element smapL[i], x = W+i smapR[i], -1 =
 * cval; not tc__boundary_index's modulo, a division per edge element). */
#define FD_FILL(T, NAME)                                                      \
    static void NAME(const fd_job *j, char *ring, const void **rowp, int64_t n, \
                     int64_t e, int64_t hb0, int64_t X0, int64_t tw, int64_t hr0, \
                     int64_t hr1, int pf) {                                   \
        const fd_state *s = j->s;                                             \
        const int64_t slot = e % (s->m0 + s->P - 1), pd = s->dmap[e];         \
        const void **rp = rowp + slot * s->Hbe;                               \
        if (pd < 0) {                                                         \
            for (int64_t hr = hr0; hr < hr1; hr++) rp[hr] = s->cvrow;         \
            return;                                                           \
        }                                                                     \
        /* the row's x range [x0, x0 + len): the mapped ends [0, a) and       \
         * [b, len), the inside [a, b) copied; the same for every row */      \
        const int64_t W = s->W, x0 = X0 - s->pl2, len = tw + s->m2 - 1;       \
        const int64_t a = fd_min(len, fd_max(0, -x0)), b = fd_max(a, fd_min(len, W - x0)); \
        const int64_t *mL = s->smapL, *mR = s->smapR;                         \
        const T cv = *(const T *)s->cvrow;                                    \
        const T *plane = (const T *)j->a->x + (n * s->D + pd) * s->H * W;     \
        T *dst = (T *)ring + (slot * s->Hbe + hr0) * s->RW + s->roff;         \
        const int64_t nh = fd_min(s->Hbe, s->Ho + s->m1 - 1 - hb0); /* band rows */ \
        const int64_t *hm = s->hmap + hb0;                                    \
        for (int64_t hr = hr0; hr < hr1; hr++, dst += s->RW) {                \
            const int64_t h = hm[hr];                                         \
            if (h < 0) {                                                      \
                rp[hr] = s->cvrow;                                            \
                continue;                                                     \
            }                                                                 \
            const T *src = plane + h * W + x0;                                \
            for (int64_t u = 0; u < a; u++) {                                 \
                const int64_t i = mL[-1 - (x0 + u)];                          \
                dst[u] = i >= 0 ? src[i - x0] : cv;                           \
            }                                                                 \
            if (b > a) s->copy(dst + a, src + a, (size_t)(b - a) * sizeof(T)); \
            for (int64_t u = b; u < len; u++) {                               \
                const int64_t i = mR[x0 + u - W];                             \
                dst[u] = i >= 0 ? src[i - x0] : cv;                           \
            }                                                                 \
            rp[hr] = dst;                                                     \
        }                                                                     \
        /* after the copies: prefetches that wait for free miss buffers      \
         * (rows from memory) then delay the kernel's start, not the copy */ \
        for (int64_t hr = hr0; pf && b > a && hr < hr1 && hr + s->R < nh; hr++) { \
            const int64_t h = hm[hr + s->R];                                  \
            if (h >= 0) fd_prefetch_span(plane + h * W + x0 + a, (b - a) * (int64_t)sizeof(T), s->pfl2); \
        }                                                                     \
        /* input from memory (pff): also the rows 2R down, into L2: their    \
         * reads start a block earlier, and the prefetch above brings back   \
         * any evicted before the copy (prefetchnta instead: 256^3 k3 one    \
         * thread 0.83-0.85x on the Zen 4 VM: docs/solvers/cpu-filter-3d.md) */ \
        for (int64_t hr = hr0; s->pff && b > a && hr < hr1 && hr + 2 * s->R < nh; hr++) { \
            const int64_t h = hm[hr + 2 * s->R];                              \
            if (h >= 0) fd_prefetch_span(plane + h * W + x0 + a, (b - a) * (int64_t)sizeof(T), 1); \
        }                                                                     \
    }
FD_FILL(float, fd_fill_f32)
FD_FILL(double, fd_fill_f64)
/* Prefetches into L1 the source rows [hr0, hr1) of extended plane e of
 * image n, tile X0 (width tw): at a band's end, the rows the next row
 * block's fill copies into the ring (inside a band the fill itself
 * prefetches them). Issued right before a block's kernel runs, so their
 * memory reads overlap its arithmetic; the fill then copies from cache
 * (256^3 k3, one core: the fill from 155-165 to 45-50 TSC cycles a row,
 * the volume 11.0-11.8 -> 6.9-7.0 ms). tc__prefetch, not
 * __builtin_prefetch, which GCC deleted here (see internal.h). */
static void fd_ring_prefetch(const fd_job *j, int64_t n, int64_t e, int64_t hb0, int64_t X0,
                             int64_t tw, int64_t hr0, int64_t hr1) {
    const fd_state *s = j->s;
    if (e >= s->Do + s->m0 - 1) return;
    const int64_t pd = s->dmap[e];
    hr1 = fd_min(hr1, s->Ho + s->m1 - 1 - hb0); /* hmap's length */
    if (pd < 0 || hr0 >= hr1) return;
    const int64_t es = (int64_t)j->a->p->esize;
    const int64_t x0 = fd_max(0, X0 - s->pl2), x1 = fd_min(s->W, X0 - s->pl2 + tw + s->m2 - 1);
    if (x1 <= x0) return;
    const char *plane = (const char *)j->a->x + (n * s->D + pd) * s->H * s->W * es;
    for (int64_t hr = hr0; hr < hr1; hr++) {
        const int64_t h = s->hmap[hb0 + hr];
        /* every line the row's elements [x0, x1) touch */
        if (h >= 0) fd_prefetch_span(plane + (h * s->W + x0) * es, (x1 - x0) * es, s->pfl2);
    }
}

/* The thread's ring starts empty (slot keys -1); fd_ring_range keeps it
 * from one claim to the next, so a claim that continues the planes of the
 * thread's previous one copies only the rows it adds. */
static void fd_ring_init(const fd_job *j, int tid) {
    const fd_state *s = j->s;
    const int64_t es = (int64_t)j->a->p->esize, ns = s->m0 + s->P - 1;
    char *w = (char *)j->a->ws + (size_t)tid * s->ws_thread;
    w += fd_r64((size_t)(ns * s->Hbe * s->RW * es));
    w += fd_r64((size_t)(ns * s->Hbe) * sizeof(void *));
    w += fd_r64((size_t)(ns * s->xs) * sizeof(void *));
    int64_t *sk = (int64_t *)w;
    for (int64_t i = 0; i < ns; i++) sk[i] = -1;
}

static void fd_ring_range(void *arg, int64_t begin, int64_t end, int tid) {
    const fd_job *j = arg;
    const fd_state *s = j->s;
    const tc__problem *p = j->a->p;
    const int64_t es = (int64_t)p->esize, P = s->P, ns = s->m0 + P - 1; /* ring slots */
    char *w = (char *)j->a->ws + (size_t)tid * s->ws_thread;
    char *ring = w;
    w += fd_r64((size_t)(ns * s->Hbe * s->RW * es));
    const void **rowp = (const void **)w;
    w += fd_r64((size_t)(ns * s->Hbe) * sizeof(void *));
    const void **kp = (const void **)w;
    w += fd_r64((size_t)(ns * s->xs) * sizeof(void *));
    int64_t *sk = (int64_t *)w, *filled = sk + ns; /* per slot: plane key, rows in */
    tc__fd_block b;
    tc__fd_block_init(&b, s, kp, j->a->w, s->nt);
    /* the item's coordinates advance one row block at a time (decoding
     * each item took four 64-bit divisions, and the ring slots two per
     * plane, for a block of a few hundred FMAs on 3D k3) */
    tc__fd_item itm;
    tc__fd_item_decode(s, begin, &itm);
    const int64_t rbpb = s->Hb / s->R;
    for (int64_t it = begin; it < end; it++) {
        if (it > begin && ++itm.rb == rbpb) {
            itm.rb = 0;
            if ((itm.o0 += P) >= s->Do) {
                itm.o0 = 0;
                if (++itm.band == s->nbands) {
                    itm.band = 0;
                    itm.q++;
                    itm.xt = itm.q % s->ntx;
                    itm.n = itm.q / s->ntx;
                }
            }
        }
        itm.o1 = itm.band * s->Hb + itm.rb * s->R;
        if (itm.o1 >= s->Ho) continue; /* the last band is shorter */
        const int64_t o0 = itm.o0, xt = itm.xt, n = itm.n, o1 = itm.o1, band = itm.band;
        const int64_t hb0 = band * s->Hb, q = itm.q;
        const int64_t key = q * s->nbands + band, X0 = xt * s->Tx;
        const int64_t tw = fd_min(s->Tx, s->Wo - X0);
        b.rows = (int)fd_min(s->R, s->Ho - o1);
        const int64_t need = o1 - hb0 + b.rows + s->m1 - 1; /* band rows this block reads */
        const int64_t np = fd_min(P, s->Do - o0); /* output planes of this block */
        const int64_t sl0 = o0 % ns; /* ring slot of plane o0 */
        for (int64_t e = o0, sl = sl0; e < o0 + s->m0 + np - 1; e++, sl = sl + 1 == ns ? 0 : sl + 1) {
            const int64_t ek = key * (s->Do + s->m0) + e;
            if (sk[sl] != ek) {
                sk[sl] = ek;
                filled[sl] = 0; /* later blocks of the band may start lower */
            }
            if (filled[sl] < need) {
                if (p->dtype == TC_FLOAT32)
                    fd_fill_f32(j, ring, rowp, n, e, hb0, X0, tw, filled[sl], need, s->pf);
                else
                    fd_fill_f64(j, ring, rowp, n, e, hb0, X0, tw, filled[sl], need, s->pf);
                filled[sl] = need;
            }
        }
        for (int64_t r0 = 0, sl = sl0; r0 < s->m0 + np - 1; r0++, sl = sl + 1 == ns ? 0 : sl + 1) {
            const void *const *rp = rowp + sl * s->Hbe + (o1 - hb0);
            for (int64_t i = 0; i < b.rows + s->m1 - 1; i++) {
                /* one pointer at a time: rp[] was just stored 8 bytes at a
                 * time, and the 16-byte loads of a vectorised copy failed
                 * store forwarding (measured: ~7% of 3D k3 time) */
                const void *q = rp[i];
                __asm__("" : "+r"(q));
                kp[r0 * s->xs + i] = q;
            }
        }
        /* at the band's end, the first rows of the next block's newest
         * planes (inside a band the fill prefetches the next block's rows) */
        if (s->pf && o1 + s->R >= fd_min(hb0 + s->Hb, s->Ho))
            for (int64_t e = o0 + s->m0 + P - 1; e < o0 + s->m0 + 2 * P - 1; e++)
                fd_ring_prefetch(j, n, e, hb0, X0, tw, 0, s->R + s->m1 - 1);
        char *yrow = (char *)j->a->y + (((n * s->Do + o0) * s->Ho + o1) * s->Wo + X0) * es;
        for (int r = 0; r < b.rows; r++) b.y[r] = yrow + r * s->Wo * es;
        b.nx = tw;
        if (np == 2) {
            for (int r = 0; r < b.rows; r++) b.y1[r] = (char *)b.y[r] + s->Ho * s->Wo * es;
            /* the output rows of the block two ahead in the walk: two
             * blocks down the band, or the first blocks of the next
             * plane pair (a full block of a full pair; else none) */
            b.pfo = 0;
            if (s->pfo) {
                const int64_t be = fd_min(hb0 + s->Hb, s->Ho), nb = tc__cdiv64(be - hb0, s->R);
                int64_t k = (o1 - hb0) / s->R + 2, dp = 0;
                if (k >= nb) {
                    k -= nb;
                    dp = P;
                }
                const int64_t ot = hb0 + k * s->R;
                if (o0 + dp + 1 < s->Do && ot + s->R <= be)
                    b.pfo = (dp * s->Ho + ot - o1) * s->Wo * es;
            }
            s->kern2(&b);
        } else {
            s->kern(&b);
        }
    }
#if defined(__x86_64__) || defined(__i386__)
    if (s->nt) __builtin_ia32_sfence(); /* order streamed stores before the join */
#endif
}

static void fd_ring_blocks(void *arg, int64_t begin, int64_t end, int tid) {
    fd_ring_init(arg, tid);
    fd_ring_range(arg, begin, end, tid);
}


static size_t fd_ws(const tc__problem *p, const tc__env *e, const fd_isa *isa) {
    fd_state s;
    fd_geometry(p, isa, &s);
    if (s.lanes || s.ring) return (size_t)e->threads * s.ws_thread;
    return (size_t)e->threads * fd_thread_bytes(p, &s);
}

/* Items give the same result whichever thread runs them (the plain path
 * carries no state from one item to the next; the ring re-reads a plane
 * whenever its cache key changes), so the threads claim them in grains
 * instead of taking one fixed range each: when another process takes part
 * of a core (the shared 2-vCPU VM), the other thread does more of the work
 * instead of waiting for it (2D k9 4096^2, one core contended: 24-29 ->
 * 17-19 ms; docs/solvers/cpu-direct.md). On the ring path the items are
 * cut into one range per thread, each with its own counter; a thread
 * claims from the range of the CPU it runs on first, then from the
 * others' (the plain path: one range). So on every call a CPU
 * computes the same outputs from the same inputs while the load is even:
 * they stay in its own caches between calls (the Zen 5 VM's two vCPUs:
 * 0.3-0.7 us a cache-line round trip, so a line the other one wrote last
 * is slow to take over), and the ring carries from one claim to the next
 * (128^3 k3 two threads 1.04-1.11x; docs/solvers/cpu-filter-3d.md). */
static void fd_dyn(void *arg, int64_t begin, int64_t end, int tid) {
    fd_job *j = arg;
    (void)begin;
    (void)end;
    if (j->init) j->init(j, tid);
    int first = 0;
#ifdef __linux__
    if (j->nr > 1) {
        const int cpu = sched_getcpu();
        first = cpu >= 0 ? cpu % j->nr : tid % j->nr;
    }
#endif
    for (int k = 0; k < j->nr; k++) {
        const int o = (first + k) % j->nr;
        for (;;) {
            const int64_t b = __atomic_fetch_add(&j->r[o].next, j->grain, __ATOMIC_RELAXED);
            if (b >= j->r[o].end) break;
            j->fn(arg, b, fd_min(j->r[o].end, b + j->grain), tid);
        }
    }
}

static void fd_run(const tc__args *a, fd_job *j, tc__range_fn fn, tc__range_fn one,
                   void (*init)(const fd_job *, int), int64_t claims) {
    const int64_t items = j->s->items;
    if (a->threads <= 1 || items <= a->threads) {
        tc__parallel_for(a->threads, items, one, j);
        return;
    }
    j->fn = fn;
    j->init = init;
    j->nr = init ? (int)fd_min(a->threads, FD_RANGES) : 1; /* ranges: the ring */
    for (int o = 0; o < j->nr; o++) {
        j->r[o].next = items * o / j->nr;
        j->r[o].end = items * (o + 1) / j->nr;
    }
    j->grain = fd_max(1, items / ((int64_t)a->threads * claims));
    tc__parallel_for(a->threads, a->threads, fd_dyn, j);
}

static tc_status fd_execute(const tc__args *a) {
    const fd_state *s = a->state;
    if (s->lanes) {
        tc__fdl_execute(a);
        return TC_OK;
    }
    fd_job j;
    j.a = a;
    j.s = s;
    if (s->ring) { /* larger grains: a claim that does not continue the
                    * thread's previous one refills the plane ring */
        fd_run(a, &j, fd_ring_range, fd_ring_blocks, fd_ring_init, 16);
        return TC_OK;
    }
    j.ws = a->ws;
    fd_run(a, &j, fd_blocks, fd_blocks, NULL, 16);
    return TC_OK;
}

/* ---------------- solver glue ---------------- */
static int fd_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    const char *r = NULL;
    if (p->op != TC_OP_FILTER) r = "only the filter operation (one channel, no bias)";
    else if (p->dtype != TC_FLOAT32 && p->dtype != TC_FLOAT64) r = "dtype must be float32 or float64";
    else if (p->C != 1 || p->K != 1 || p->G != 1) r = "needs one channel";
    else if (p->stride[0] != 1 || p->stride[1] != 1 || p->stride[2] != 1 ||
             p->dil[0] != 1 || p->dil[1] != 1 || p->dil[2] != 1)
        r = "needs stride 1 and dilation 1";
    /* the plan keeps an 8-byte index per extended plane and row: refuse
     * shapes where that map alone passes 256 MiB (e.g. 2^31 rows of 1) */
    else if ((double)(p->out[0] + p->msk[0] + p->out[1] + p->msk[1]) * 8.0 >
             268435456.0)
        r = "row index maps over 256 MiB (too many planes/rows)";
    if (r && why && n) {
        strncpy(why, r, n - 1);
        why[n - 1] = '\0';
    }
    return r == NULL;
}

static double fd_estimate(const tc__problem *p, const tc__env *e, const fd_isa *isa,
                          double eff) {
    double env_lanes = (e->cpu & TC__CPU_AVX512) ? 16 : (e->cpu & TC__CPU_AVX2) ? 8 : 1;
    double lanes = isa->lanes32 < env_lanes ? isa->lanes32 : env_lanes;
    double flops_rate = tc__peak_flops(e) * eff * lanes / env_lanes;
    fd_state s;
    fd_geometry(p, isa, &s);
    double bytes = tc__problem_bytes(p);
    double t_fl = tc__problem_flops(p) / flops_rate;
    double t_mem = bytes / tc__peak_bandwidth(e);
    return (t_fl > t_mem ? t_fl : t_mem) + 3e-6;
}

#define FD_SOLVER(ISA, EFF, NAME, SUMMARY)                                    \
    static int fd_available_##ISA(void) {                                     \
        unsigned need = fd_isa_##ISA.need;                                    \
        return (tc__cpu_detect() & need) == need;                             \
    }                                                                         \
    static double fd_estimate_##ISA(const tc__problem *p, const tc__env *e) { \
        return fd_estimate(p, e, &fd_isa_##ISA, EFF);                         \
    }                                                                         \
    static size_t fd_ws_##ISA(const tc__problem *p, const tc__env *e) {       \
        return fd_ws(p, e, &fd_isa_##ISA);                                    \
    }                                                                         \
    static tc_status fd_plan_##ISA(const tc__problem *p, const tc__env *e,    \
                                   void **st) {                               \
        return fd_plan(p, &fd_isa_##ISA, st);                                 \
    }                                                                         \
    const tc__solver tc__solver_cpu_direct_##ISA = {                          \
        .name = NAME,                                                         \
        .backend = TC_BACKEND_CPU,                                            \
        .ops = TC_OP_FILTER,                                                  \
        .summary = SUMMARY,                                                   \
        .available = fd_available_##ISA,                                      \
        .applicable = fd_applicable,                                          \
        .estimate = fd_estimate_##ISA,                                        \
        .workspace = fd_ws_##ISA,                                             \
        .plan = fd_plan_##ISA,                                                \
        .destroy = fd_destroy,                                                \
        .execute = fd_execute,                                                \
        /* the kernels read the mask from a->w; the plan never reads it */    \
        .caps = TC__CAP_MASK_AT_EXECUTE,                                      \
    };

FD_SOLVER(avx512, 0.6, "cpu.filter.direct-avx512",
          "Direct filter, AVX-512 4-row x 64-lane register blocks, L2 tiles, "
          "boundary by row pointers and edge copies.")
FD_SOLVER(avx2, 0.55, "cpu.filter.direct-avx2",
          "Direct filter, AVX2 4-row x 16-lane register blocks, L2 tiles, "
          "boundary by row pointers and edge copies.")
FD_SOLVER(scalar, 0.5, "cpu.filter.direct-scalar",
          "Direct filter, plain C row blocks (any CPU), L2 tiles, boundary by "
          "row pointers and edge copies.")
