/*
 * testbuf.h - buffers for the solver tests: typed element access, strided
 * views of logical arrays, outputs surrounded by sentinel guards, workspaces
 * that end at a PROT_NONE page, and the per-element comparison.
 *
 * Header only (static functions); included by test_solvers.c.
 */
#ifndef TC_TESTS_TESTBUF_H
#define TC_TESTS_TESTBUF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "tileconv.h"

/* ---- typed element access ----
 * float16 through the compiler's _Float16 and bfloat16 through its own bit
 * rounding here: independent of the library's conversions (src/core/half.h),
 * which the tests check against these. */
static inline size_t tb_esize(tc_dtype dt) {
    return dt == TC_FLOAT32 ? 4 : dt == TC_FLOAT64 ? 8 : 2;
}
static inline float tb_bf16_to_f(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint16_t tb_f_to_bf16(float f) { /* nearest even; NaN kept */
    uint32_t u;
    memcpy(&u, &f, 4);
    if (f != f) return (uint16_t)((u >> 16) | 0x40u);
    uint32_t lsb = (u >> 16) & 1u;
    return (uint16_t)((u + 0x7fffu + lsb) >> 16);
}
static inline double tb_ld(const void *a, int64_t i, tc_dtype dt) {
    switch (dt) {
    case TC_FLOAT32: return ((const float *)a)[i];
    case TC_FLOAT64: return ((const double *)a)[i];
    case TC_FLOAT16: return (double)((const _Float16 *)a)[i];
    default: return tb_bf16_to_f(((const uint16_t *)a)[i]);
    }
}
/* half types: rounded through float (double -> float -> half) */
static inline void tb_st(void *a, int64_t i, tc_dtype dt, double v) {
    switch (dt) {
    case TC_FLOAT32: ((float *)a)[i] = (float)v; break;
    case TC_FLOAT64: ((double *)a)[i] = v; break;
    case TC_FLOAT16: ((_Float16 *)a)[i] = (_Float16)(float)v; break;
    default: ((uint16_t *)a)[i] = tb_f_to_bf16((float)v); break;
    }
}
static inline void *tb_elem(void *a, int64_t i, tc_dtype dt) {
    return (char *)a + i * (int64_t)tb_esize(dt);
}
/* Value stored in guards and holes: exact in every dtype, never a result. */
#define TB_SENTINEL (-7776.0)
static inline int tb_is_sentinel(const void *a, int64_t i, tc_dtype dt) {
    return tb_ld(a, i, dt) == TB_SENTINEL;
}
static inline void *tb_calloc(int64_t count, tc_dtype dt) {
    void *p = calloc((size_t)(count > 0 ? count : 1), tb_esize(dt));
    if (!p) { fprintf(stderr, "out of memory\n"); exit(3); }
    return p;
}
static inline double *tb_dcalloc(int64_t count) {
    double *p = calloc((size_t)(count > 0 ? count : 1), sizeof(double));
    if (!p) { fprintf(stderr, "out of memory\n"); exit(3); }
    return p;
}
static inline int64_t tb_prod(const int64_t *d, int n) {
    int64_t c = 1;
    for (int i = 0; i < n; i++) c *= d[i];
    return c;
}

/* ---- strided views of a logical C-order array ---- */
typedef enum tb_layout {
    TB_DENSE = 0,       /* strides left zero in the descriptor */
    TB_CSTRIDES,        /* C-order strides given explicitly */
    TB_TRANSPOSED,      /* Fortran order: every axis reversed in memory */
    TB_EVERY_OTHER,     /* C-order strides doubled: holes between elements */
    TB_PITCH,           /* rows padded: each axis > last steps 3 extra */
    TB_REVERSED,        /* last axis has a negative stride (input only) */
    TB_BROADCAST,       /* axis 0 has stride 0 (input only) */
    TB_NLAYOUTS
} tb_layout;
static const char *const tb_layout_names[] = {
    "dense", "cstrides", "transposed", "every-other", "pitch", "reversed",
    "broadcast"};
#define TB_N_OUT_LAYOUTS 5 /* dense .. pitch are valid output layouts */

typedef struct tb_view {
    int nd;
    int64_t shape[TC_MAX_DIMS];
    int64_t strides[TC_MAX_DIMS]; /* actual element strides */
    int64_t off0;                 /* buffer offset of logical element 0 */
    int64_t span;                 /* buffer elements covered */
    int64_t count;                /* logical elements */
    tb_layout layout;
} tb_view;

static inline void tb_view_make(tb_view *v, int nd, const int64_t *shape,
                                tb_layout layout) {
    memset(v, 0, sizeof *v);
    /* all-zero strides mean "dense" in the API: a rank-1 broadcast cannot
     * be expressed, so it is tested as explicit C strides instead */
    if (layout == TB_BROADCAST && nd == 1) layout = TB_CSTRIDES;
    v->nd = nd;
    v->layout = layout;
    for (int i = 0; i < nd; i++) v->shape[i] = shape[i];
    v->count = tb_prod(shape, nd);
    int64_t s = 1;
    switch (layout) {
    case TB_TRANSPOSED:
        for (int i = 0; i < nd; i++) { v->strides[i] = s; s *= shape[i]; }
        break;
    case TB_PITCH:
        for (int i = nd - 1; i >= 0; i--) {
            v->strides[i] = s;
            s = s * shape[i] + 3;
        }
        break;
    default:
        for (int i = nd - 1; i >= 0; i--) { v->strides[i] = s; s *= shape[i]; }
        if (layout == TB_EVERY_OTHER)
            for (int i = 0; i < nd; i++) v->strides[i] *= 2;
        if (layout == TB_REVERSED) v->strides[nd - 1] = -v->strides[nd - 1];
        if (layout == TB_BROADCAST) v->strides[0] = 0;
    }
    int64_t lo = 0, hi = 0;
    for (int i = 0; i < nd; i++) {
        int64_t e = (shape[i] - 1) * v->strides[i];
        if (e < 0) lo += e; else hi += e;
    }
    v->off0 = -lo;
    v->span = hi - lo + 1;
}

/* Buffer offset (relative to the buffer start) of logical element e. */
static inline int64_t tb_view_at(const tb_view *v, int64_t e) {
    int64_t off = v->off0;
    for (int i = v->nd - 1; i >= 0; i--) {
        off += (e % v->shape[i]) * v->strides[i];
        e /= v->shape[i];
    }
    return off;
}

/* ---- an output buffer with sentinel guards around and between ---- */
#define TB_GUARD 16 /* elements before and after */
typedef struct tb_out {
    tb_view v;
    tc_dtype dt;
    void *base;     /* GUARD + span + GUARD elements */
    void *ptr;      /* what execute gets: logical element 0 */
    char *is_out;   /* span flags: 1 where an output element lives */
} tb_out;

/* Fills guards and holes with the sentinel and every output element with
 * NaN, so unwritten or stray-written elements are caught. */
static inline void tb_out_reset(tb_out *o) {
    int64_t total = o->v.span + 2 * TB_GUARD;
    for (int64_t i = 0; i < total; i++) tb_st(o->base, i, o->dt, TB_SENTINEL);
    for (int64_t e = 0; e < o->v.count; e++)
        tb_st(o->base, TB_GUARD + tb_view_at(&o->v, e), o->dt, NAN);
}
static inline void tb_out_init(tb_out *o, int nd, const int64_t *shape,
                               tb_layout layout, tc_dtype dt) {
    memset(o, 0, sizeof *o);
    tb_view_make(&o->v, nd, shape, layout);
    o->dt = dt;
    o->base = tb_calloc(o->v.span + 2 * TB_GUARD, dt);
    o->ptr = tb_elem(o->base, TB_GUARD + o->v.off0, dt);
    o->is_out = calloc((size_t)o->v.span, 1);
    for (int64_t e = 0; e < o->v.count; e++) o->is_out[tb_view_at(&o->v, e)] = 1;
    tb_out_reset(o);
}
static inline void tb_out_free(tb_out *o) {
    free(o->base);
    free(o->is_out);
    memset(o, 0, sizeof *o);
}
/* Number of guard / hole elements that no longer hold the sentinel. */
static inline int64_t tb_out_guard_errors(const tb_out *o, int64_t *first) {
    int64_t bad = 0, total = o->v.span + 2 * TB_GUARD;
    *first = -1;
    for (int64_t i = 0; i < total; i++) {
        int64_t s = i - TB_GUARD;
        if (s >= 0 && s < o->v.span && o->is_out[s]) continue;
        if (!tb_is_sentinel(o->base, i, o->dt)) {
            if (*first < 0) *first = s;
            bad++;
        }
    }
    return bad;
}
/* Logical (C-order) copy of the output as doubles. */
static inline void tb_out_gather(const tb_out *o, double *dst) {
    for (int64_t e = 0; e < o->v.count; e++)
        dst[e] = tb_ld(o->base, TB_GUARD + tb_view_at(&o->v, e), o->dt);
}

/* ---- a workspace that ends exactly at a PROT_NONE page ----
 * The usable bytes [ptr, ptr + size) are 64-byte aligned; when size is not
 * a multiple of 64 the few slack bytes after it, and every byte of the
 * mapping before ptr, hold a pattern checked afterwards. A size of 0 gives
 * a pointer to the protected page itself: any access faults. */
typedef struct tb_ws {
    unsigned char *map;
    size_t maplen, body, size;
    void *ptr;
} tb_ws;
#define TB_WS_BYTE 0xA5

static inline int tb_ws_alloc(tb_ws *w, size_t size) {
    memset(w, 0, sizeof *w);
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t r = (size + 63) & ~(size_t)63;
    w->body = (r + pg - 1) / pg * pg;
    w->maplen = w->body + pg;
    w->size = size;
    void *m = mmap(NULL, w->maplen, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return 0;
    w->map = m;
    if (mprotect(w->map + w->body, pg, PROT_NONE) != 0) return 0;
    memset(w->map, TB_WS_BYTE, w->body);
    w->ptr = w->map + w->body - r;
    return 1;
}
/* Bytes outside [ptr, ptr + size) that were written. */
static inline size_t tb_ws_errors(const tb_ws *w) {
    size_t bad = 0;
    const unsigned char *p = w->ptr;
    for (const unsigned char *q = w->map; q < p; q++) bad += *q != TB_WS_BYTE;
    for (const unsigned char *q = p + w->size; q < w->map + w->body; q++)
        bad += *q != TB_WS_BYTE;
    return bad;
}
static inline void tb_ws_free(tb_ws *w) {
    if (w->map) munmap(w->map, w->maplen);
    memset(w, 0, sizeof *w);
}

/* ---- comparison ----
 * got[i] passes when |got - ref| <= rtol * mag[i] + gtol * max(mag) + tiny,
 * where mag[i] is sum |w||x| (+|bias|, |beta c|) of that element, computed
 * by the reference on absolute values. gtol is 0 for solvers whose error is
 * local (direct, GEMM); FFT-like solvers spread error over the whole array
 * and get a global term. */
/* |got - ref| <= rtol * mag[i] + gtol * max(max(mag), scale): scale is the
 * size of the whole signal (0 = unused), for transform algorithms whose
 * roundoff reaches outputs whose exact value is 0 (an FFT spreads it over
 * every output). */
typedef struct tb_tol { double rtol, gtol, scale; } tb_tol;
typedef struct tb_cmp {
    int64_t nbad, first;
    double max_norm_err; /* max |got - ref| / (mag[i] + tiny): normalised */
} tb_cmp;

static inline tb_cmp tb_compare(const double *got, const double *ref,
                                const double *mag, int64_t n, tb_tol t) {
    tb_cmp c = {0, -1, 0.0};
    double mmax = 0;
    for (int64_t i = 0; i < n; i++)
        if (mag[i] > mmax) mmax = mag[i];
    if (t.scale > mmax) mmax = t.scale;
    const double tiny = 1e-300;
    for (int64_t i = 0; i < n; i++) {
        double err = fabs(got[i] - ref[i]);
        double lim = t.rtol * mag[i] + t.gtol * mmax + tiny;
        double ne = err / (mag[i] + tiny);
        if (!(ne <= c.max_norm_err)) c.max_norm_err = ne; /* NaN sticks */
        if (!(err <= lim)) { /* also catches NaN / inf */
            if (c.first < 0) c.first = i;
            c.nbad++;
        }
    }
    return c;
}

/* Writes "i,j,k" for C-order element e of shape d[nd]. */
static inline void tb_index_str(char *buf, size_t n, int64_t e,
                                const int64_t *d, int nd) {
    int64_t idx[TC_MAX_DIMS];
    for (int i = nd - 1; i >= 0; i--) { idx[i] = e % d[i]; e /= d[i]; }
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < nd && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, i ? ",%lld" : "%lld",
                               (long long)idx[i]);
}

#endif /* TC_TESTS_TESTBUF_H */
