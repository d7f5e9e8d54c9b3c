/*
 * fuzz_desc.c - libFuzzer target for descriptor validation and planning.
 *
 * Built by cmake/fuzz.cmake (TC_FUZZ=ON, clang) and run by scripts/test.sh:
 *   build-fuzz/fuzz_desc -max_total_time=30
 *
 * Each input becomes one tc_filter_desc, tc_conv_desc or tc_gemm_desc with
 * mostly small sizes, sometimes edge values (0, negative, huge, INT64_MAX),
 * plus a context and plan options (forced algorithm, MEASURE, workspace
 * limit, bad struct_size). Then:
 *   - planning either fails with a known status, a NULL plan and a
 *     non-empty tc_last_error(), or succeeds with a consistent output shape;
 *   - when the problem is small (output < 1e5 elements, inputs < 1e6,
 *     < 2e7 FLOP) the plan is executed on allocated, seeded inputs, with
 *     strided arrays placed exactly as the descriptor says, outputs
 *     pre-filled with NaN, and every output element must come out finite.
 * A fourth kind of input is a wisdom file: it is loaded (success, or
 * TC_ERR_IO with a message), a loaded file must survive save + load, and
 * then one description is planned with TC_PLAN_WISDOM_ONLY against it.
 * Each input starts from empty wisdom (tc_wisdom_forget, which also keeps
 * the machine's default wisdom file out of it).
 * Anything else aborts; ASan/UBSan/LSan catch the rest. Only the public
 * header is used.
 */
#include "tileconv.h"
#include "../src/core/knobs.h" /* the environment knobs */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_MAX_OUT 100000      /* output elements executed */
#define FUZZ_MAX_IN 1000000      /* input / weight elements executed */
#define FUZZ_MAX_FLOPS 2e7       /* work per execute */
#define FUZZ_MAX_MASK (1 << 16)  /* mask elements handed to tc_plan_filter */

typedef struct fz {
    const uint8_t *p;
    size_t n;
} fz;

static unsigned fz_u8(fz *f) {
    if (!f->n) return 0;
    f->n--;
    return *f->p++;
}

static uint64_t fz_u64(fz *f) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | fz_u8(f);
    return v;
}

/* A size-like value: mostly 1..8, sometimes up to ~300, sometimes an edge. */
static int64_t fz_size(fz *f) {
    unsigned sel = fz_u8(f);
    if (sel < 160) return 1 + (int64_t)(sel % 8);
    if (sel < 200) return 1 + (int64_t)fz_u8(f) + (int64_t)(fz_u8(f) % 64);
    switch (sel % 8) {
    case 0: return 0;
    case 1: return -1 - (int64_t)(fz_u8(f) % 4);
    case 2: return INT64_MAX;
    case 3: return INT64_MIN;
    case 4: return (int64_t)1 << (20 + fz_u8(f) % 43);
    case 5: return ((int64_t)1 << 31) + (int64_t)fz_u8(f) - 128;
    case 6: return (int64_t)fz_u64(f);
    default: return 9 + (int64_t)(fz_u8(f) % 24);
    }
}

/* A small signed value for origins, strides, paddings. */
static int64_t fz_small(fz *f) {
    unsigned sel = fz_u8(f);
    if (sel < 220) return (int64_t)(sel % 9) - 4;
    return fz_size(f);
}

/* An enum value: mostly valid (0..nvalid-1), sometimes just outside. */
static int fz_enum(fz *f, int nvalid) {
    unsigned sel = fz_u8(f);
    if (sel < 240) return (int)(sel % (unsigned)nvalid);
    return sel & 1 ? nvalid : -1;
}

static double fz_double(fz *f) {
    static const double v[] = {0.0, 1.0, -1.0, 0.5, 2.0, -0.25, 1e-3, 3.0};
    return v[fz_u8(f) % 8];
}

/* Deterministic values in [-1, 1). */
static void fill(void *buf, int64_t count, tc_dtype dt, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    for (int64_t i = 0; i < count; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        double v = (double)(s >> 11) * (1.0 / 4503599627370496.0) - 1.0;
        float fv = (float)v;
        if (dt == TC_FLOAT32) ((float *)buf)[i] = fv;
        else if (dt == TC_FLOAT64) ((double *)buf)[i] = v;
        else if (dt == TC_FLOAT16) tc_float_to_half((uint16_t *)buf + i, &fv, 1);
        else tc_float_to_bfloat16((uint16_t *)buf + i, &fv, 1);
    }
}

static void fill_nan(void *buf, int64_t count, tc_dtype dt) {
    for (int64_t i = 0; i < count; i++) {
        if (dt == TC_FLOAT32) ((float *)buf)[i] = NAN;
        else if (dt == TC_FLOAT64) ((double *)buf)[i] = NAN;
        else ((uint16_t *)buf)[i] = 0x7fc0; /* NaN in both 16-bit types */
    }
}

static double get(const void *buf, int64_t i, tc_dtype dt) {
    float f;
    switch (dt) {
    case TC_FLOAT32: return ((const float *)buf)[i];
    case TC_FLOAT64: return ((const double *)buf)[i];
    case TC_FLOAT16: tc_half_to_float(&f, (const uint16_t *)buf + i, 1); return f;
    default: tc_bfloat16_to_float(&f, (const uint16_t *)buf + i, 1); return f;
    }
}

/* Product of n values, or -1 when any is < 1 or the product passes lim. */
static int64_t prod_capped(const int64_t *v, int n, int64_t lim) {
    int64_t r = 1;
    for (int i = 0; i < n; i++) {
        if (v[i] < 1 || v[i] > lim || r > lim / v[i]) return -1;
        r *= v[i];
    }
    return r;
}

/* Saturating a + b and a * b, so that the fuzzer's own arithmetic on
 * hostile sizes stays defined. */
static int64_t sat_add(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (a < 0 ? INT64_MIN : INT64_MAX) : r;
}
static int64_t sat_mul(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? INT64_MIN : INT64_MAX) : r;
}

/* TILECONV_TEST_FUZZ_VERBOSE=1 prints each description and the planning outcome
 * (for reproducing an artifact: ./fuzz_desc ARTIFACT). */
static int verbose(void) {
    static int v = -1;
    if (v < 0) v = tc__knob_get(TC__KNOB_TEST_FUZZ_VERBOSE) != NULL;
    return v;
}

static void print_i64s(const char *name, const int64_t *v, int n) {
    fprintf(stderr, " %s=", name);
    for (int i = 0; i < n; i++) fprintf(stderr, "%s%lld", i ? "," : "", (long long)v[i]);
}

static void report(tc_status st, const tc_plan *plan, const tc_plan_options *opt) {
    if (!verbose()) return;
    fprintf(stderr, "  opt: flags=0x%x algorithm=%s workspace_limit=%zu\n", opt->flags,
            opt->algorithm ? opt->algorithm : "(auto)", opt->workspace_limit);
    if (st != TC_OK) {
        fprintf(stderr, "  -> %s: %s\n", tc_status_string(st), tc_last_error());
        return;
    }
    int nd;
    int64_t sh[TC_MAX_DIMS];
    tc_plan_output_shape(plan, &nd, sh);
    fprintf(stderr, "  -> %s, %.3g FLOP, workspace %zu,", tc_plan_algorithm(plan),
            tc_plan_flops(plan), tc_plan_workspace_size(plan));
    print_i64s("out", sh, nd);
    fputc('\n', stderr);
}

static void fail(const char *what) {
    fprintf(stderr, "fuzz_desc: %s (last error: \"%s\")\n", what, tc_last_error());
    abort();
}

/* The contract of a failing plan call. */
static void check_failure(tc_status st, const tc_plan *plan) {
    if (plan) fail("failed planning returned a plan");
    if (strcmp(tc_status_string(st), "unknown status") == 0)
        fail("planning returned an unknown status");
    if (tc_last_error()[0] == 0) fail("failed planning left no message");
}

static void *xalloc(int64_t elems, size_t esize) {
    size_t bytes = (size_t)(elems > 0 ? elems : 1) * esize;
    bytes = (bytes + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, bytes);
    if (!p) abort();
    return p;
}

static unsigned g_force_flags; /* OR-ed into every plan's flags */

/* Options shared by the three operations. */
static void fuzz_options(fz *f, tc_plan_options *opt, int small) {
    tc_plan_options_init(opt);
    opt->flags |= g_force_flags;
    unsigned sel = fz_u8(f);
    if (small && (sel & 3) == 1) opt->flags |= TC_PLAN_MEASURE;
    if ((sel & 0x1c) == 0x04) opt->flags |= TC_PLAN_WISDOM_ONLY;
    if ((sel & 0x1c) == 0x08) opt->flags |= TC_PLAN_ALLOW_TF32;
    if (sel == 0xff) opt->flags |= 0x80u; /* unknown bit */
    if (sel == 0xfe) opt->struct_size += 1;
    unsigned a = fz_u8(f);
    int count = tc_algorithm_count();
    if (a < 64 && count > 0) {
        tc_algorithm_info info;
        if (tc_algorithm_get((int)(a % (unsigned)count), &info) != TC_OK)
            fail("tc_algorithm_get failed for a valid index");
        opt->algorithm = info.name;
    } else if (a == 64) {
        opt->algorithm = "no.such.algorithm";
    }
    unsigned w = fz_u8(f);
    if (w < 16) opt->workspace_limit = (size_t)1 << (w + 4);
}

static void run_filter(fz *f, tc_context *ctx) {
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.dtype = (tc_dtype)fz_enum(f, 4);
    d.ndim = (int)(fz_u8(f) % 10);             /* 0 and 9 are invalid */
    unsigned ns = fz_u8(f);
    d.nspatial = ns < 128 ? 0 : (int)(ns % 5); /* 0 = default, 4 invalid */
    for (int i = 0; i < TC_MAX_DIMS; i++) d.shape[i] = fz_size(f);
    for (int i = 0; i < TC_MAX_SPATIAL; i++) {
        d.mask_shape[i] = fz_size(f);
        d.origin[i] = fz_small(f);
    }
    d.kind = (tc_filter_kind)fz_enum(f, 2);
    d.output = (tc_output_kind)fz_enum(f, 3);
    d.mode = (tc_mode)fz_enum(f, 5);
    d.cval = fz_double(f);
    unsigned strided = fz_u8(f);
    if (strided & 1) /* any input strides, broadcasting and negative too */
        for (int i = 0; i < TC_MAX_DIMS; i++) d.in_strides[i] = fz_small(f);
    if (strided & 2) { /* output: a permuted dense layout, maybe with gaps */
        int nd = d.ndim >= 1 && d.ndim <= TC_MAX_DIMS ? d.ndim : 0;
        int64_t s = 1 + (int64_t)(fz_u8(f) % 3);
        int order[TC_MAX_DIMS];
        for (int i = 0; i < nd; i++) order[i] = nd - 1 - i;
        for (int i = nd - 1; i > 0; i--) {
            int j = (int)(fz_u8(f) % (unsigned)(i + 1));
            int t = order[i]; order[i] = order[j]; order[j] = t;
        }
        /* sizes are unknown until planning: assume the input's, which is
         * right for output=same and caught by validation otherwise */
        for (int i = 0; i < nd; i++) {
            d.out_strides[order[i]] = s;
            int64_t ext = d.shape[order[i]] > 0 && d.shape[order[i]] < 4096
                              ? d.shape[order[i]] : 1;
            s = sat_add(sat_mul(s, ext), (int64_t)(fz_u8(f) % 2));
        }
        if (strided & 4) d.out_strides[0] = fz_small(f); /* maybe aliasing */
    }
    if (fz_u8(f) == 0xff) d.struct_size--;

    /* The mask is read only after validation; give it its true size when
     * that is reasonable, otherwise shrink the description to fit. */
    int nsp = d.nspatial ? d.nspatial : d.ndim;
    if (nsp < 1) nsp = 1;
    if (nsp > TC_MAX_SPATIAL) nsp = TC_MAX_SPATIAL;
    int64_t mcount = prod_capped(d.mask_shape, nsp, INT64_MAX);
    if (mcount > FUZZ_MAX_MASK)
        for (int i = 0; i < nsp; i++) d.mask_shape[i] = 1 + d.mask_shape[i] % 16;
    mcount = prod_capped(d.mask_shape, nsp, FUZZ_MAX_MASK);
    /* invalid (< 1) mask sizes must be rejected before the mask is read */
    size_t esize = tc_dtype_size(d.dtype) ? tc_dtype_size(d.dtype) : 4;
    void *mask = xalloc(mcount > 0 ? mcount : 1, esize);
    fill(mask, mcount > 0 ? mcount : 1, tc_dtype_size(d.dtype) ? d.dtype : TC_FLOAT32, 7);

    int nd = d.ndim >= 1 && d.ndim <= TC_MAX_DIMS ? d.ndim : 1;
    int64_t in_count = prod_capped(d.shape, nd, FUZZ_MAX_IN);
    int small = in_count > 0 && in_count <= 4096 && mcount > 0 && mcount <= 64;
    tc_plan_options opt;
    fuzz_options(f, &opt, small);

    if (verbose()) {
        fprintf(stderr, "filter: dtype=%d ndim=%d nspatial=%d kind=%d output=%d mode=%d cval=%g",
                (int)d.dtype, d.ndim, d.nspatial, (int)d.kind, (int)d.output, (int)d.mode, d.cval);
        print_i64s("shape", d.shape, TC_MAX_DIMS);
        print_i64s("mask", d.mask_shape, 3);
        print_i64s("origin", d.origin, 3);
        print_i64s("in_strides", d.in_strides, TC_MAX_DIMS);
        print_i64s("out_strides", d.out_strides, TC_MAX_DIMS);
        fputc('\n', stderr);
    }
    tc_plan *plan = (tc_plan *)0x1;
    tc_status st = tc_plan_filter(&plan, ctx, &d, mask, &opt);
    report(st, plan, &opt);
    if (st != TC_OK) {
        check_failure(st, plan);
        free(mask);
        return;
    }
    int ond;
    int64_t oshape[TC_MAX_DIMS];
    if (tc_plan_output_shape(plan, &ond, oshape) != TC_OK || ond != d.ndim)
        fail("filter: output shape query");
    for (int i = 0; i < ond; i++)
        if (oshape[i] < 1) fail("filter: output size < 1");
    if (!tc_plan_algorithm(plan)[0]) fail("filter: empty algorithm name");
    int64_t out_count = prod_capped(oshape, ond, FUZZ_MAX_OUT);
    size_t ws_size = tc_plan_workspace_size(plan);
    double flops = tc_plan_flops(plan);
    if (in_count > 0 && out_count > 0 && flops <= FUZZ_MAX_FLOPS &&
        ws_size < ((size_t)1 << 28)) {
        /* element offsets reachable through the strides */
        int64_t lo = 0, hi = 0, olo = 0, ohi = 0, s = 1, so = 1;
        int in_dense = 1, out_dense = 1;
        for (int i = 0; i < nd; i++) {
            if (d.in_strides[i]) in_dense = 0;
            if (d.out_strides[i]) out_dense = 0;
        }
        for (int i = nd - 1; i >= 0; i--) { /* saturates: then skipped */
            int64_t is = in_dense ? s : d.in_strides[i];
            int64_t os = out_dense ? so : d.out_strides[i];
            int64_t e = sat_mul(d.shape[i] - 1, is), oe = sat_mul(oshape[i] - 1, os);
            if (e < 0) lo = sat_add(lo, e); else hi = sat_add(hi, e);
            if (oe < 0) olo = sat_add(olo, oe); else ohi = sat_add(ohi, oe);
            s *= d.shape[i];
            so *= oshape[i];
        }
        if (hi < FUZZ_MAX_IN && lo > -FUZZ_MAX_IN && ohi < FUZZ_MAX_IN && olo == 0) {
            int64_t xn = hi - lo + 1, yn = ohi + 1;
            char *x = xalloc(xn, esize), *y = xalloc(yn, esize);
            fill(x, xn, d.dtype, 11);
            fill_nan(y, yn, d.dtype);
            void *ws = NULL;
            if (ws_size && (fz_u8(f) & 1)) ws = xalloc((int64_t)ws_size, 1);
            st = tc_execute_filter(plan, y, x - lo * (int64_t)esize, ws);
            if (st != TC_OK) fail("filter: execute failed on a valid plan");
            /* every output element must be written and finite */
            int64_t idx[TC_MAX_DIMS] = {0};
            for (int64_t e = 0; e < out_count; e++) {
                int64_t off = 0, dense = 1;
                for (int i = nd - 1; i >= 0; i--) {
                    off += idx[i] * (out_dense ? dense : d.out_strides[i]);
                    dense *= oshape[i];
                }
                if (!isfinite(get(y, off, d.dtype)))
                    fail("filter: output element not written or not finite");
                for (int i = nd - 1; i >= 0; i--) {
                    if (++idx[i] < oshape[i]) break;
                    idx[i] = 0;
                }
            }
            free(ws);
            free(x);
            free(y);
        }
    }
    tc_plan_destroy(plan);
    free(mask);
}

static void run_conv(fz *f, tc_context *ctx) {
    tc_conv_desc d;
    tc_conv_desc_init(&d);
    d.dtype = (tc_dtype)fz_enum(f, 4);
    d.nspatial = (int)(fz_u8(f) % 5); /* 0 and 4 invalid */
    d.batch = fz_size(f);
    d.in_channels = fz_size(f);
    d.out_channels = fz_size(f);
    unsigned g = fz_u8(f);
    d.groups = g < 160 ? 1 : g < 220 ? (int64_t)(g % 4) + 1 : fz_size(f);
    for (int i = 0; i < TC_MAX_SPATIAL; i++) {
        d.in_size[i] = fz_size(f);
        d.kernel_size[i] = fz_size(f);
        unsigned s = fz_u8(f);
        d.stride[i] = s < 200 ? 1 + (int64_t)(s % 3) : fz_small(f);
        unsigned dl = fz_u8(f);
        d.dilation[i] = dl < 200 ? 1 + (int64_t)(dl % 3) : fz_small(f);
        d.padding[i] = fz_small(f);
    }
    d.padding_kind = (tc_padding_kind)fz_enum(f, 3);
    d.padding_mode = (tc_padding_mode)fz_enum(f, 4);
    d.has_bias = fz_enum(f, 2);
    d.layout = (tc_layout)fz_enum(f, 2);
    d.activation = (tc_activation)fz_enum(f, 7);
    d.has_residual = fz_enum(f, 2);
    if (fz_u8(f) == 0xff) d.struct_size++;

    int nsp = d.nspatial >= 1 && d.nspatial <= 3 ? d.nspatial : 1;
    int64_t xs[5] = {d.batch, d.in_channels, d.in_size[0], d.in_size[1], d.in_size[2]};
    int64_t x_count = prod_capped(xs, 2 + nsp, FUZZ_MAX_IN);
    int64_t cg = d.groups >= 1 && d.in_channels >= 1 && d.in_channels % d.groups == 0
                     ? d.in_channels / d.groups : -1;
    int64_t wsz[5] = {d.out_channels, cg, d.kernel_size[0], d.kernel_size[1], d.kernel_size[2]};
    int64_t w_count = prod_capped(wsz, 2 + nsp, FUZZ_MAX_IN);
    int small = x_count > 0 && x_count <= 4096 && w_count > 0 && w_count <= 4096;
    /* MEASURE runs every close candidate several times: the output must be
     * small too, and a large padding makes it large whatever the input */
    for (int i = 0; i < nsp; i++)
        if (d.padding[i] > 64 || d.padding[i] < 0) small = 0;
    tc_plan_options opt;
    fuzz_options(f, &opt, small);
    if (fz_u8(f) < 16) tc_context_set_backend(ctx, (tc_backend)fz_enum(f, 3));
    /* read last: the corpus's earlier bytes keep their meaning */
    if (d.struct_size == sizeof d) d.weight_layout = (tc_layout)fz_enum(f, 2);

    if (verbose()) {
        fprintf(stderr, "conv: dtype=%d nspatial=%d N=%lld C=%lld K=%lld G=%lld padding_kind=%d "
                "padding_mode=%d has_bias=%d layout=%d act=%d residual=%d weight_layout=%d",
                (int)d.dtype, d.nspatial, (long long)d.batch, (long long)d.in_channels,
                (long long)d.out_channels, (long long)d.groups, (int)d.padding_kind,
                (int)d.padding_mode, d.has_bias, (int)d.layout, (int)d.activation,
                d.has_residual, (int)d.weight_layout);
        print_i64s("in", d.in_size, 3);
        print_i64s("kernel", d.kernel_size, 3);
        print_i64s("stride", d.stride, 3);
        print_i64s("dilation", d.dilation, 3);
        print_i64s("padding", d.padding, 3);
        fputc('\n', stderr);
    }
    tc_plan *plan = (tc_plan *)0x1;
    tc_status st = tc_plan_conv(&plan, ctx, &d, &opt);
    report(st, plan, &opt);
    if (st != TC_OK) {
        check_failure(st, plan);
        return;
    }
    int ond;
    int64_t os[TC_MAX_DIMS];
    if (tc_plan_output_shape(plan, &ond, os) != TC_OK || ond != 2 + d.nspatial ||
        os[0] != d.batch ||
        os[d.layout == TC_LAYOUT_CHANNELS_LAST ? ond - 1 : 1] != d.out_channels)
        fail("conv: output shape query");
    for (int i = 0; i < ond; i++)
        if (os[i] < 1) fail("conv: output size < 1");
    int64_t y_count = prod_capped(os, ond, FUZZ_MAX_OUT);
    size_t ws_size = tc_plan_workspace_size(plan);
    if (x_count > 0 && w_count > 0 && y_count > 0 &&
        tc_plan_flops(plan) <= FUZZ_MAX_FLOPS && ws_size < ((size_t)1 << 28)) {
        size_t esize = tc_dtype_size(d.dtype);
        void *x = xalloc(x_count, esize), *w = xalloc(w_count, esize);
        void *b = xalloc(d.out_channels, esize), *y = xalloc(y_count, esize);
        void *r = d.has_residual ? xalloc(y_count, esize) : NULL;
        fill(x, x_count, d.dtype, 21);
        fill(w, w_count, d.dtype, 22);
        fill(b, d.out_channels, d.dtype, 23);
        if (r) fill(r, y_count, d.dtype, 24);
        fill_nan(y, y_count, d.dtype);
        void *ws = NULL;
        if (ws_size && (fz_u8(f) & 1)) ws = xalloc((int64_t)ws_size, 1);
        st = tc_execute_conv_residual(plan, y, x, w, d.has_bias ? b : NULL, r, ws);
        if (st != TC_OK) fail("conv: execute failed on a valid plan");
        for (int64_t i = 0; i < y_count; i++)
            if (!isfinite(get(y, i, d.dtype)))
                fail("conv: output element not written or not finite");
        /* the wrong bias or residual argument must be refused, not crash */
        if (tc_execute_conv_residual(plan, y, x, w, d.has_bias ? NULL : b, r, ws) == TC_OK)
            fail("conv: execute accepted a bias argument contradicting has_bias");
        if (tc_execute_conv_residual(plan, y, x, w, d.has_bias ? b : NULL, r ? NULL : y,
                                     ws) == TC_OK)
            fail("conv: execute accepted a residual argument contradicting has_residual");
        free(r);
        free(ws);
        free(x);
        free(w);
        free(b);
        free(y);
    }
    tc_plan_destroy(plan);
}

static void run_gemm(fz *f, tc_context *ctx) {
    tc_gemm_desc d;
    tc_gemm_desc_init(&d);
    d.dtype = (tc_dtype)fz_enum(f, 4);
    d.trans_a = fz_enum(f, 2);
    d.trans_b = fz_enum(f, 2);
    d.m = fz_size(f);
    d.n = fz_size(f);
    d.k = fz_size(f);
    unsigned l = fz_u8(f);
    if (l & 1) d.lda = (l & 8) ? fz_size(f) : sat_add(d.trans_a ? d.m : d.k, l >> 5);
    if (l & 2) d.ldb = (l & 8) ? fz_size(f) : sat_add(d.trans_b ? d.k : d.n, l >> 5);
    if (l & 4) d.ldc = (l & 8) ? fz_size(f) : sat_add(d.n, l >> 5);
    d.alpha = fz_double(f);
    d.beta = fz_double(f);
    if (fz_u8(f) == 0xff) d.struct_size = 0;

    /* MEASURE allocates A, B and C with their leading dimensions */
    int64_t mn[2] = {d.m, d.n};
    int64_t ma[2] = {d.trans_a ? d.k : d.m, d.lda ? d.lda : (d.trans_a ? d.m : d.k)};
    int64_t mb[2] = {d.trans_b ? d.n : d.k, d.ldb ? d.ldb : (d.trans_b ? d.k : d.n)};
    int64_t mc[2] = {d.m, d.ldc ? d.ldc : d.n};
    int small = prod_capped(ma, 2, 4096) > 0 && prod_capped(mb, 2, 4096) > 0 &&
                prod_capped(mc, 2, 4096) > 0;
    tc_plan_options opt;
    fuzz_options(f, &opt, small);

    if (verbose())
        fprintf(stderr, "gemm: dtype=%d trans_a=%d trans_b=%d m=%lld n=%lld k=%lld lda=%lld "
                "ldb=%lld ldc=%lld alpha=%g beta=%g\n", (int)d.dtype, d.trans_a, d.trans_b,
                (long long)d.m, (long long)d.n, (long long)d.k, (long long)d.lda,
                (long long)d.ldb, (long long)d.ldc, d.alpha, d.beta);
    tc_plan *plan = (tc_plan *)0x1;
    tc_status st = tc_plan_gemm(&plan, ctx, &d, &opt);
    report(st, plan, &opt);
    if (st != TC_OK) {
        check_failure(st, plan);
        return;
    }
    int ond;
    int64_t os[TC_MAX_DIMS];
    if (tc_plan_output_shape(plan, &ond, os) != TC_OK || ond != 2 || os[0] != d.m ||
        os[1] != d.n)
        fail("gemm: output shape query");
    /* validated, so lda etc. are the effective leading dimensions */
    int64_t lda = d.lda ? d.lda : (d.trans_a ? d.m : d.k);
    int64_t ldb = d.ldb ? d.ldb : (d.trans_b ? d.k : d.n);
    int64_t ldc = d.ldc ? d.ldc : d.n;
    int64_t as[2] = {d.trans_a ? d.k : d.m, lda}, bs[2] = {d.trans_b ? d.n : d.k, ldb},
            cs[2] = {d.m, ldc};
    int64_t na = prod_capped(as, 2, FUZZ_MAX_IN), nb = prod_capped(bs, 2, FUZZ_MAX_IN),
            nc = prod_capped(cs, 2, FUZZ_MAX_IN);
    size_t ws_size = tc_plan_workspace_size(plan);
    if (na > 0 && nb > 0 && nc > 0 && prod_capped(mn, 2, FUZZ_MAX_OUT) > 0 &&
        tc_plan_flops(plan) <= FUZZ_MAX_FLOPS && ws_size < ((size_t)1 << 28)) {
        size_t esize = tc_dtype_size(d.dtype);
        void *a = xalloc(na, esize), *b = xalloc(nb, esize), *c = xalloc(nc, esize);
        fill(a, na, d.dtype, 31);
        fill(b, nb, d.dtype, 32);
        /* beta = 0: C must not be read, so NaN must not propagate */
        if (d.beta == 0.0) fill_nan(c, nc, d.dtype);
        else fill(c, nc, d.dtype, 33);
        void *ws = NULL;
        if (ws_size && (fz_u8(f) & 1)) ws = xalloc((int64_t)ws_size, 1);
        st = tc_execute_gemm(plan, c, a, b, ws);
        if (st != TC_OK) fail("gemm: execute failed on a valid plan");
        for (int64_t i = 0; i < d.m; i++)
            for (int64_t j = 0; j < d.n; j++)
                if (!isfinite(get(c, i * ldc + j, d.dtype)))
                    fail("gemm: output element not written or not finite");
        free(ws);
        free(a);
        free(b);
        free(c);
    }
    tc_plan_destroy(plan);
}

/* Per-process scratch file names for the wisdom input. */
static char g_wisdom_in[64], g_wisdom_out[64];
static void remove_scratch(void) {
    unlink(g_wisdom_in);
    unlink(g_wisdom_out);
}

static void run_wisdom(fz *f, tc_context *ctx) {
    if (!g_wisdom_in[0]) {
        snprintf(g_wisdom_in, sizeof g_wisdom_in, "/tmp/fuzz_desc.%d.in", (int)getpid());
        snprintf(g_wisdom_out, sizeof g_wisdom_out, "/tmp/fuzz_desc.%d.out", (int)getpid());
        atexit(remove_scratch);
    }
    size_t len = (size_t)fz_u8(f) * 4 + fz_u8(f) % 4;
    unsigned hdr = fz_u8(f);
    if (len > f->n) len = f->n;
    FILE *fp = fopen(g_wisdom_in, "wb");
    if (!fp) return;
    if (hdr & 1) fputs("tileconv-wisdom 1\n", fp);
    if (fwrite(f->p, 1, len, fp) != len) len = 0;
    f->p += len;
    f->n -= len;
    if (fclose(fp) != 0) return;
    tc_status st = tc_wisdom_load(g_wisdom_in);
    if (verbose())
        fprintf(stderr, "wisdom: %zu bytes -> %s %s\n", len, tc_status_string(st),
                st ? tc_last_error() : "");
    if (st != TC_OK) {
        if (st != TC_ERR_IO) fail("wisdom: a bad file gave a status other than TC_ERR_IO");
        if (!tc_last_error()[0]) fail("wisdom: a failed load left no message");
    } else {
        if (tc_wisdom_save(g_wisdom_out) != TC_OK) fail("wisdom: save after a good load failed");
        if (tc_wisdom_load(g_wisdom_out) != TC_OK) fail("wisdom: a saved file does not load");
    }
    g_force_flags = TC_PLAN_WISDOM_ONLY;
    switch (fz_u8(f) % 3) {
    case 0: run_filter(f, ctx); break;
    case 1: run_conv(f, ctx); break;
    default: run_gemm(f, ctx); break;
    }
    g_force_flags = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f = {data, size};
    unsigned head = fz_u8(&f);
    tc_wisdom_forget(); /* every input starts from nothing */
    tc_context *ctx = NULL;
    if (head & 4) { /* else the process-wide default context */
        if (tc_context_create(&ctx) != TC_OK || !ctx) fail("context create");
        unsigned t = fz_u8(&f);
        int threads = t < 240 ? 1 + (int)(t % 2) : (t & 1 ? -1 : 5000);
        tc_status st = tc_context_set_threads(ctx, threads);
        if ((st == TC_OK) != (threads >= 0 && threads <= 4096))
            fail("context: set_threads accepted a bad count or refused a good one");
        if (tc_context_threads(ctx) < 1) fail("context: threads < 1");
    }
    switch (head % 4) {
    case 0: run_filter(&f, ctx); break;
    case 1: run_conv(&f, ctx); break;
    case 2: run_gemm(&f, ctx); break;
    default: run_wisdom(&f, ctx); break;
    }
    tc_context_destroy(ctx);
    return 0;
}
