/*
 * test_api.c - the public API's promises about errors: every invalid
 * descriptor field is rejected with TC_ERR_INVALID_ARGUMENT (or OVERFLOW)
 * and tc_last_error() names the field and its value; NULL pointers return
 * errors instead of crashing; the enum/name helpers round-trip; forcing
 * algorithms and backends fails with the documented codes.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <pthread.h>

#include "harness.h"
#include "tileconv.h"

#include <sys/wait.h>
#include <unistd.h>

/* Checks status == want and that tc_last_error() contains every one of
 * the NULL-terminated substrings. */
#define EXPECT_ERR(call, want, ...) expect_err((call), (want), #call, __LINE__, __VA_ARGS__, (const char *)NULL)

static int expect_err(tc_status st, tc_status want, const char *call, int line, ...) {
    const char *msg = tc_last_error();
    int ok = th_check(st == want, __FILE__, line, call,
                      "status %d (%s), expected %d (%s); message '%s'", (int)st,
                      tc_status_string(st), (int)want, tc_status_string(want), msg);
    va_list ap;
    va_start(ap, line);
    for (const char *sub; (sub = va_arg(ap, const char *)) != NULL;)
        ok &= th_check(strstr(msg, sub) != NULL, __FILE__, line, call,
                       "message '%s' lacks '%s'", msg, sub);
    va_end(ap);
    return ok;
}

/* Large enough for every mask planned below (the largest is 9x8). */
static float g_mask[1024];

/* Plans a filter and destroys the plan; returns the status. */
static tc_status plan_filter(const tc_filter_desc *d) {
    tc_plan *pl = (tc_plan *)(uintptr_t)1; /* must be reset to NULL on failure */
    tc_status st = tc_plan_filter(&pl, NULL, d, g_mask, NULL);
    if (st != TC_OK)
        CHECK(pl == NULL, "failed tc_plan_filter left *plan=%p", (void *)pl);
    tc_plan_destroy(st == TC_OK ? pl : NULL);
    return st;
}
static tc_status plan_conv(const tc_conv_desc *d) {
    tc_plan *pl = (tc_plan *)(uintptr_t)1;
    tc_status st = tc_plan_conv(&pl, NULL, d, NULL);
    if (st != TC_OK) CHECK(pl == NULL, "failed tc_plan_conv left *plan=%p", (void *)pl);
    tc_plan_destroy(st == TC_OK ? pl : NULL);
    return st;
}
static tc_status plan_gemm(const tc_gemm_desc *d) {
    tc_plan *pl = (tc_plan *)(uintptr_t)1;
    tc_status st = tc_plan_gemm(&pl, NULL, d, NULL);
    if (st != TC_OK) CHECK(pl == NULL, "failed tc_plan_gemm left *plan=%p", (void *)pl);
    tc_plan_destroy(st == TC_OK ? pl : NULL);
    return st;
}

static tc_filter_desc fdesc(void) { /* a valid 2D filter: 6x7, mask 3x2 */
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.ndim = 2;
    d.shape[0] = 6;
    d.shape[1] = 7;
    d.mask_shape[0] = 3;
    d.mask_shape[1] = 2;
    return d;
}
static tc_conv_desc cdesc(void) { /* a valid 2D conv */
    tc_conv_desc d;
    tc_conv_desc_init(&d);
    d.batch = 2;
    d.in_channels = 4;
    d.out_channels = 6;
    d.groups = 2;
    d.in_size[0] = 8;
    d.in_size[1] = 9;
    d.kernel_size[0] = 3;
    d.kernel_size[1] = 3;
    return d;
}
static tc_gemm_desc gdesc(void) {
    tc_gemm_desc d;
    tc_gemm_desc_init(&d);
    d.m = 5;
    d.n = 6;
    d.k = 7;
    return d;
}

static void test_status_strings(void) {
    TH_BEGIN("tc_status_string for every code");
#define TC__T(name, value, text)                                                \
    CHECK(strcmp(tc_status_string(name), text) == 0, "%s -> '%s'", #name,       \
          tc_status_string(name));
    TC_STATUS_LIST(TC__T)
#undef TC__T
    CHECK(strcmp(tc_status_string((tc_status)999), "unknown status") == 0, "999");
    CHECK(strcmp(tc_status_string((tc_status)-1), "unknown status") == 0, "-1");
    TH_END();
}

static void *other_thread(void *p) {
    *(int *)p = tc_last_error()[0] == 0;
    return NULL;
}

static void test_last_error_thread_local(void) {
    TH_BEGIN("tc_last_error is per thread");
    tc_filter_desc d = fdesc();
    d.ndim = 0;
    EXPECT_ERR(plan_filter(&d), TC_ERR_INVALID_ARGUMENT, "ndim=0");
    int empty = 0;
    pthread_t t;
    if (CHECK(pthread_create(&t, NULL, other_thread, &empty) == 0, "pthread_create")) {
        pthread_join(t, NULL);
        CHECK(empty, "a new thread sees another thread's error message");
    }
    CHECK(strstr(tc_last_error(), "ndim=0") != NULL, "message lost: '%s'", tc_last_error());
    TH_END();
}

static void test_filter_fields(void) {
    tc_filter_desc d;
    const tc_status INV = TC_ERR_INVALID_ARGUMENT;

    TH_BEGIN("filter: a valid description plans");
    d = fdesc();
    EXPECT_ERR(plan_filter(&d), TC_OK, "");
    TH_END();

    TH_BEGIN("filter: struct_size mismatch");
    d = fdesc();
    d.struct_size = sizeof d - 8;
    EXPECT_ERR(plan_filter(&d), INV, "struct_size=");
    d.struct_size = sizeof d + 8;
    EXPECT_ERR(plan_filter(&d), INV, "struct_size=");
    d.struct_size = 0;
    EXPECT_ERR(plan_filter(&d), INV, "struct_size=0");
    TH_END();

    TH_BEGIN("filter: dtype, ndim, nspatial");
    d = fdesc(); d.dtype = (tc_dtype)7;
    EXPECT_ERR(plan_filter(&d), INV, "dtype=7");
    d = fdesc(); d.dtype = (tc_dtype)-1;
    EXPECT_ERR(plan_filter(&d), INV, "dtype=-1");
    d = fdesc(); d.ndim = 0;
    EXPECT_ERR(plan_filter(&d), INV, "ndim=0");
    d = fdesc(); d.ndim = -3;
    EXPECT_ERR(plan_filter(&d), INV, "ndim=-3");
    d = fdesc(); d.ndim = TC_MAX_DIMS + 1;
    EXPECT_ERR(plan_filter(&d), INV, "ndim=9");
    d = fdesc(); d.ndim = 4; d.shape[2] = d.shape[3] = 3;
    EXPECT_ERR(plan_filter(&d), INV, "ndim=4", "nspatial");
    d = fdesc(); d.nspatial = 4;
    EXPECT_ERR(plan_filter(&d), INV, "nspatial=4");
    d = fdesc(); d.nspatial = 3; /* > ndim = 2 */
    EXPECT_ERR(plan_filter(&d), INV, "nspatial=3");
    d = fdesc(); d.nspatial = -1;
    EXPECT_ERR(plan_filter(&d), INV, "nspatial=-1");
    TH_END();

    TH_BEGIN("filter: shape and mask_shape");
    d = fdesc(); d.shape[1] = 0;
    EXPECT_ERR(plan_filter(&d), INV, "shape[1]=0");
    d = fdesc(); d.shape[0] = -5;
    EXPECT_ERR(plan_filter(&d), INV, "shape[0]=-5");
    d = fdesc(); d.mask_shape[1] = 0;
    EXPECT_ERR(plan_filter(&d), INV, "mask_shape[1]=0");
    d = fdesc(); d.mask_shape[0] = -2;
    EXPECT_ERR(plan_filter(&d), INV, "mask_shape[0]=-2");
    TH_END();

    TH_BEGIN("filter: kind, output, mode");
    d = fdesc(); d.kind = (tc_filter_kind)5;
    EXPECT_ERR(plan_filter(&d), INV, "kind=5");
    d = fdesc(); d.output = (tc_output_kind)3;
    EXPECT_ERR(plan_filter(&d), INV, "output=3");
    d = fdesc(); d.output = (tc_output_kind)-1;
    EXPECT_ERR(plan_filter(&d), INV, "output=-1");
    d = fdesc(); d.mode = (tc_mode)9;
    EXPECT_ERR(plan_filter(&d), INV, "mode=9");
    d = fdesc(); d.mode = (tc_mode)-1;
    EXPECT_ERR(plan_filter(&d), INV, "mode=-1");
    TH_END();

    TH_BEGIN("filter: origin range (scipy's rule) per kind and mask parity");
    /* mask 3: -1..1; mask 2: -1..0 for both kinds */
    for (int kind = 0; kind < 2; kind++) {
        d = fdesc(); d.kind = (tc_filter_kind)kind;
        d.origin[0] = -1; d.origin[1] = -1;
        EXPECT_ERR(plan_filter(&d), TC_OK, "");
        d.origin[0] = 1; d.origin[1] = 0;
        EXPECT_ERR(plan_filter(&d), TC_OK, "");
        d.origin[0] = 2; d.origin[1] = 0;
        EXPECT_ERR(plan_filter(&d), INV, "origin[0]=2");
        d.origin[0] = -2;
        EXPECT_ERR(plan_filter(&d), INV, "origin[0]=-2");
        d.origin[0] = 0; d.origin[1] = 1;
        EXPECT_ERR(plan_filter(&d), INV, "origin[1]=1");
        d.origin[1] = -2;
        EXPECT_ERR(plan_filter(&d), INV, "origin[1]=-2");
        d.origin[1] = INT64_MIN;
        EXPECT_ERR(plan_filter(&d), INV, "origin[1]=");
        d.origin[1] = INT64_MAX;
        EXPECT_ERR(plan_filter(&d), INV, "origin[1]=");
    }
    d = fdesc(); d.output = TC_OUTPUT_FULL; d.origin[0] = 1;
    EXPECT_ERR(plan_filter(&d), INV, "origin[0]=1");
    d = fdesc(); d.output = TC_OUTPUT_VALID; d.origin[1] = -1;
    EXPECT_ERR(plan_filter(&d), INV, "origin[1]=-1");
    TH_END();

    TH_BEGIN("filter: valid output shape rules");
    d = fdesc(); d.output = TC_OUTPUT_VALID;
    d.mask_shape[0] = 9; /* larger on axis 0, smaller on axis 1 */
    EXPECT_ERR(plan_filter(&d), INV, "valid");
    d.mask_shape[1] = 8; /* larger on both: swapped, fine */
    EXPECT_ERR(plan_filter(&d), TC_OK, "");
    d.ndim = 3; d.nspatial = 2; d.shape[0] = 2; d.shape[1] = 6; d.shape[2] = 7;
    EXPECT_ERR(plan_filter(&d), TC_ERR_UNSUPPORTED, "batch");
    TH_END();

    TH_BEGIN("filter: overflowing shapes");
    d = fdesc(); d.shape[0] = INT64_MAX / 2; d.shape[1] = 4;
    EXPECT_ERR(plan_filter(&d), TC_ERR_OVERFLOW, "input");
    d = fdesc(); d.ndim = 1; d.shape[0] = INT64_MAX / 2; d.dtype = TC_FLOAT64;
    EXPECT_ERR(plan_filter(&d), TC_ERR_OVERFLOW, "");
    d = fdesc(); d.mask_shape[0] = INT64_MAX / 2; d.mask_shape[1] = 3;
    EXPECT_ERR(plan_filter(&d), TC_ERR_OVERFLOW, "mask");
    /* input and mask fit, the full output's bytes do not */
    d = fdesc(); d.ndim = 1; d.shape[0] = INT64_MAX / 6; d.mask_shape[0] = INT64_MAX / 6;
    d.output = TC_OUTPUT_FULL;
    EXPECT_ERR(plan_filter(&d), TC_ERR_OVERFLOW, "output");
    d = fdesc(); d.ndim = 8; d.nspatial = 3; d.mask_shape[2] = 1;
    for (int i = 0; i < 8; i++) d.shape[i] = 1 << 9; /* 2^72 elements */
    EXPECT_ERR(plan_filter(&d), TC_ERR_OVERFLOW, "");
    TH_END();

    TH_BEGIN("filter: output strides that alias");
    d = fdesc(); d.out_strides[0] = 1; d.out_strides[1] = 1;
    EXPECT_ERR(plan_filter(&d), INV, "out_strides");
    d = fdesc(); d.out_strides[0] = 7; d.out_strides[1] = -1;
    EXPECT_ERR(plan_filter(&d), INV, "out_strides[1]=-1");
    d = fdesc(); d.out_strides[0] = 0; d.out_strides[1] = 1;
    EXPECT_ERR(plan_filter(&d), INV, "out_strides[0]=0");
    d = fdesc(); d.out_strides[0] = 6; d.out_strides[1] = 1; /* rows overlap */
    EXPECT_ERR(plan_filter(&d), INV, "out_strides");
    d = fdesc(); d.out_strides[0] = 1; d.out_strides[1] = 6; /* transposed: fine */
    EXPECT_ERR(plan_filter(&d), TC_OK, "");
    d = fdesc(); d.in_strides[0] = 0; d.in_strides[1] = 1; /* broadcast input: fine */
    EXPECT_ERR(plan_filter(&d), TC_OK, "");
    TH_END();

    TH_BEGIN("filter: NULL arguments");
    d = fdesc();
    tc_plan *pl = NULL;
    EXPECT_ERR(tc_plan_filter(NULL, NULL, &d, g_mask, NULL), INV, "plan");
    EXPECT_ERR(tc_plan_filter(&pl, NULL, NULL, g_mask, NULL), INV, "desc");
    EXPECT_ERR(tc_plan_filter(&pl, NULL, &d, NULL, NULL), INV, "mask");
    CHECK(pl == NULL, "plan set on failure");
    TH_END();
}

static void test_conv_fields(void) {
    tc_conv_desc d;
    const tc_status INV = TC_ERR_INVALID_ARGUMENT;

    TH_BEGIN("conv: a valid description plans");
    d = cdesc();
    EXPECT_ERR(plan_conv(&d), TC_OK, "");
    TH_END();

    TH_BEGIN("conv: struct_size, dtype, nspatial, counts");
    d = cdesc(); d.struct_size = sizeof d - 4;
    EXPECT_ERR(plan_conv(&d), INV, "struct_size=");
    d = cdesc(); d.dtype = (tc_dtype)4;
    EXPECT_ERR(plan_conv(&d), INV, "dtype=4");
    d = cdesc(); d.nspatial = 0;
    EXPECT_ERR(plan_conv(&d), INV, "nspatial=0");
    d = cdesc(); d.nspatial = 4;
    EXPECT_ERR(plan_conv(&d), INV, "nspatial=4");
    d = cdesc(); d.batch = 0;
    EXPECT_ERR(plan_conv(&d), INV, "batch=0");
    d = cdesc(); d.batch = -1;
    EXPECT_ERR(plan_conv(&d), INV, "batch=-1");
    d = cdesc(); d.in_channels = 0;
    EXPECT_ERR(plan_conv(&d), INV, "in_channels=0");
    d = cdesc(); d.out_channels = -6;
    EXPECT_ERR(plan_conv(&d), INV, "out_channels=-6");
    d = cdesc(); d.groups = 0;
    EXPECT_ERR(plan_conv(&d), INV, "groups=0");
    TH_END();

    TH_BEGIN("conv: groups must divide C and K");
    d = cdesc(); d.groups = 3; d.out_channels = 6; /* 3 does not divide C=4 */
    EXPECT_ERR(plan_conv(&d), INV, "groups=3", "in_channels=4");
    d = cdesc(); d.groups = 4; d.out_channels = 6; /* divides C=4, not K=6 */
    EXPECT_ERR(plan_conv(&d), INV, "groups=4", "out_channels=6");
    d = cdesc(); d.groups = 4; d.out_channels = 4; /* depthwise: fine */
    EXPECT_ERR(plan_conv(&d), TC_OK, "");
    TH_END();

    TH_BEGIN("conv: enums and has_bias");
    d = cdesc(); d.padding_kind = (tc_padding_kind)7;
    EXPECT_ERR(plan_conv(&d), INV, "padding_kind=7");
    d = cdesc(); d.padding_mode = (tc_padding_mode)9;
    EXPECT_ERR(plan_conv(&d), INV, "padding_mode=9");
    d = cdesc(); d.has_bias = 2;
    EXPECT_ERR(plan_conv(&d), INV, "has_bias=2");
    TH_END();

    TH_BEGIN("conv: per-axis fields name their axis");
    d = cdesc(); d.in_size[1] = 0;
    EXPECT_ERR(plan_conv(&d), INV, "in_size[1]=0");
    d = cdesc(); d.kernel_size[0] = 0;
    EXPECT_ERR(plan_conv(&d), INV, "kernel_size[0]=0");
    d = cdesc(); d.stride[1] = 0;
    EXPECT_ERR(plan_conv(&d), INV, "stride[1]=0");
    d = cdesc(); d.stride[0] = -2;
    EXPECT_ERR(plan_conv(&d), INV, "stride[0]=-2");
    d = cdesc(); d.dilation[1] = 0;
    EXPECT_ERR(plan_conv(&d), INV, "dilation[1]=0");
    d = cdesc(); d.nspatial = 3; d.in_size[2] = 5; d.kernel_size[2] = 2; d.dilation[2] = -1;
    EXPECT_ERR(plan_conv(&d), INV, "dilation[2]=-1");
    d = cdesc(); d.padding[0] = -1;
    EXPECT_ERR(plan_conv(&d), INV, "padding[0]=-1");
    d = cdesc(); d.padding_kind = TC_PADDING_SAME; d.stride[0] = 2;
    EXPECT_ERR(plan_conv(&d), INV, "stride[0]=2");
    TH_END();

    TH_BEGIN("conv: padding limits of reflect and circular");
    d = cdesc(); d.padding_mode = TC_PADDING_REFLECT; d.padding[0] = 8; /* = in_size */
    EXPECT_ERR(plan_conv(&d), INV, "padding[0]=8", "reflect");
    d.padding[0] = 7;
    EXPECT_ERR(plan_conv(&d), TC_OK, "");
    d = cdesc(); d.padding_mode = TC_PADDING_CIRCULAR; d.padding[1] = 10; /* > 9 */
    EXPECT_ERR(plan_conv(&d), INV, "padding[1]=10", "circular");
    d.padding[1] = 9;
    EXPECT_ERR(plan_conv(&d), TC_OK, "");
    d = cdesc(); d.padding_mode = TC_PADDING_REFLECT; d.padding_kind = TC_PADDING_SAME;
    d.in_size[0] = 2; d.kernel_size[0] = 5; /* same padding 2 >= 2 */
    EXPECT_ERR(plan_conv(&d), INV, "reflect");
    TH_END();

    TH_BEGIN("conv: effective kernel larger than the padded input");
    d = cdesc(); d.kernel_size[1] = 10; /* 10 > 9 */
    EXPECT_ERR(plan_conv(&d), INV, "effective kernel");
    d.padding[1] = 1; /* 9 + 2 >= 10: fine */
    EXPECT_ERR(plan_conv(&d), TC_OK, "");
    d = cdesc(); d.dilation[0] = 4; /* 4*2+1 = 9 > 8 */
    EXPECT_ERR(plan_conv(&d), INV, "effective kernel");
    d = cdesc(); d.padding_kind = TC_PADDING_VALID; d.kernel_size[0] = 9;
    EXPECT_ERR(plan_conv(&d), INV, "effective kernel");
    TH_END();

    TH_BEGIN("conv: overflowing shapes");
    d = cdesc(); d.in_size[0] = INT64_MAX / 2;
    EXPECT_ERR(plan_conv(&d), TC_ERR_OVERFLOW, "");
    d = cdesc(); d.batch = INT64_MAX / 2;
    EXPECT_ERR(plan_conv(&d), TC_ERR_OVERFLOW, "");
    d = cdesc(); d.dilation[0] = INT64_MAX / 2 + 1; /* x (3 - 1) overflows */
    EXPECT_ERR(plan_conv(&d), TC_ERR_OVERFLOW, "dilation");
    d = cdesc(); d.dilation[0] = INT64_MAX / 2; /* span INT64_MAX: fits, too big */
    EXPECT_ERR(plan_conv(&d), TC_ERR_INVALID_ARGUMENT, "effective kernel");
    d = cdesc(); d.padding[0] = INT64_MAX - 4;
    {
        tc_status st = plan_conv(&d);
        CHECK(st == TC_ERR_OVERFLOW || st == TC_ERR_INVALID_ARGUMENT,
              "padding INT64_MAX-4: status %s", tc_status_string(st));
    }
    d = cdesc(); d.in_channels = d.out_channels = d.groups = INT64_MAX / 4;
    EXPECT_ERR(plan_conv(&d), TC_ERR_OVERFLOW, "");
    TH_END();

    TH_BEGIN("conv: NULL arguments");
    d = cdesc();
    tc_plan *pl = NULL;
    EXPECT_ERR(tc_plan_conv(NULL, NULL, &d, NULL), INV, "plan");
    EXPECT_ERR(tc_plan_conv(&pl, NULL, NULL, NULL), INV, "desc");
    CHECK(pl == NULL, "plan set on failure");
    TH_END();
}

/* Strides, dilations and paddings near INT64_MAX that the descriptor
 * checks accept (the output stays small): every CPU conv algorithm that
 * takes the layer plans and runs it without 64-bit overflow (the sanitizer
 * build aborts on one) and matches ref.conv.loops. The cases: a depthwise
 * 3D layer whose 1-tap axis 0 has dilation INT64_MAX (cpu.conv.depthwise's
 * axis-0 step); a 1D stride of INT64_MAX with a 2^61 padding (cpu.conv.igemm
 * packed a window that starts 2^61 left of the row); a 1D stride of 2^62
 * over a 2^62 - 8 padding, two outputs (cpu.conv.fft's transform length). */
static void test_conv_hostile_geometry(void) {
    static const struct {
        int nsp, depthwise;
        int64_t n, m, s, d, p;
    } cases[] = {
        {3, 1, 5, 1, 1, INT64_MAX, 0},
        {1, 0, 5, 3, INT64_MAX, (int64_t)1 << 61, (int64_t)1 << 61},
        {3, 0, 5, 3, INT64_MAX, (int64_t)1 << 61, (int64_t)1 << 61},
        {1, 0, 5, 1, (int64_t)1 << 62, 1, ((int64_t)1 << 62) - 8},
    };
    for (int ci = 0; ci < (int)(sizeof cases / sizeof cases[0]); ci++) {
        tc_conv_desc d;
        tc_conv_desc_init(&d);
        d.nspatial = cases[ci].nsp;
        d.batch = 1;
        d.in_channels = cases[ci].depthwise ? 16 : 3;
        d.out_channels = cases[ci].depthwise ? 16 : 5;
        d.groups = cases[ci].depthwise ? 16 : 1;
        d.has_bias = 1;
        for (int a = 0; a < d.nspatial; a++) {
            d.in_size[a] = 6; d.kernel_size[a] = 3; d.padding[a] = 1;
        }
        const int ax = cases[ci].depthwise ? 0 : d.nspatial - 1;
        d.in_size[ax] = cases[ci].n; d.kernel_size[ax] = cases[ci].m;
        d.stride[ax] = cases[ci].s; d.dilation[ax] = cases[ci].d; d.padding[ax] = cases[ci].p;
        tc_plan_options o;
        tc_plan_options_init(&o);
        o.algorithm = "ref.conv.loops";
        tc_plan *rp = NULL;
        TH_BEGIN("conv: hostile geometry case %d, ref.conv.loops", ci);
        if (!CHECK_STATUS(tc_plan_conv(&rp, NULL, &d, &o), TC_OK)) { TH_END(); continue; }
        int nd;
        int64_t shape[8], ny = 1, nx = d.batch * d.in_channels, nw = d.out_channels;
        tc_plan_output_shape(rp, &nd, shape);
        for (int i = 0; i < nd; i++) ny *= shape[i];
        for (int a = 0; a < d.nspatial; a++) {
            nx *= d.in_size[a];
            nw *= d.in_channels / d.groups * d.kernel_size[a];
        }
        CHECK(ny > 0 && ny < 100000, "output of %lld elements", (long long)ny);
        TH_END();
        float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc(d.out_channels * 4),
              *ref = malloc(ny * 4), *y = malloc(ny * 4);
        th_rng r = th_rng_for(700 + ci);
        for (int64_t i = 0; i < nx; i++) x[i] = (float)th_value(&r);
        for (int64_t i = 0; i < nw; i++) w[i] = (float)th_value(&r);
        for (int64_t i = 0; i < d.out_channels; i++) b[i] = (float)th_value(&r);
        tc_execute_conv(rp, ref, x, w, b, NULL);
        tc_plan_destroy(rp);
        for (int ai = -1; ai < tc_algorithm_count(); ai++) {
            tc_algorithm_info info = {0};
            if (ai >= 0 && (tc_algorithm_get(ai, &info) != TC_OK || info.backend != TC_BACKEND_CPU ||
                            !(info.ops & TC_OP_CONV) || !info.available ||
                            strcmp(info.name, "ref.conv.loops") == 0))
                continue;
            o.algorithm = ai >= 0 ? info.name : NULL;
            tc_plan *pl = NULL;
            tc_status st = tc_plan_conv(&pl, NULL, &d, &o);
            if (st == TC_ERR_NOT_APPLICABLE) continue;
            TH_BEGIN("conv: hostile geometry case %d, %s", ci, ai >= 0 ? info.name : "auto");
            if (CHECK_STATUS(st, TC_OK)) {
                for (int64_t i = 0; i < ny; i++) y[i] = NAN;
                if (CHECK_STATUS(tc_execute_conv(pl, y, x, w, b, NULL), TC_OK)) {
                    int64_t bad = -1;
                    for (int64_t i = 0; i < ny && bad < 0; i++)
                        if (!(fabsf(y[i] - ref[i]) <= 1e-4f * (1.0f + fabsf(ref[i])))) bad = i;
                    CHECK(bad < 0, "%s: y[%lld] = %g, ref %g", tc_plan_algorithm(pl),
                          (long long)bad, bad < 0 ? 0.0 : y[bad], bad < 0 ? 0.0 : ref[bad]);
                }
            }
            tc_plan_destroy(pl);
            TH_END();
        }
        free(x); free(w); free(b); free(ref); free(y);
    }
}

static void test_gemm_fields(void) {
    tc_gemm_desc d;
    const tc_status INV = TC_ERR_INVALID_ARGUMENT;
    TH_BEGIN("gemm: field validation");
    d = gdesc();
    EXPECT_ERR(plan_gemm(&d), TC_OK, "");
    d = gdesc(); d.struct_size = 1;
    EXPECT_ERR(plan_gemm(&d), INV, "struct_size=1");
    d = gdesc(); d.dtype = (tc_dtype)5;
    EXPECT_ERR(plan_gemm(&d), INV, "dtype=5");
    d = gdesc(); d.m = 0;
    EXPECT_ERR(plan_gemm(&d), INV, "m=0");
    d = gdesc(); d.n = -1;
    EXPECT_ERR(plan_gemm(&d), INV, "n=-1");
    d = gdesc(); d.k = 0;
    EXPECT_ERR(plan_gemm(&d), INV, "k=0");
    d = gdesc(); d.trans_a = 2;
    EXPECT_ERR(plan_gemm(&d), INV, "trans_a=2");
    d = gdesc(); d.trans_b = -1;
    EXPECT_ERR(plan_gemm(&d), INV, "trans_b=-1");
    d = gdesc(); d.lda = 6; /* < k = 7 */
    EXPECT_ERR(plan_gemm(&d), INV, "lda=6");
    d = gdesc(); d.trans_a = 1; d.lda = 4; /* < m = 5 */
    EXPECT_ERR(plan_gemm(&d), INV, "lda=4");
    d = gdesc(); d.ldb = 5; /* < n = 6 */
    EXPECT_ERR(plan_gemm(&d), INV, "ldb=5");
    d = gdesc(); d.ldc = 5;
    EXPECT_ERR(plan_gemm(&d), INV, "ldc=5");
    d = gdesc(); d.lda = -8;
    EXPECT_ERR(plan_gemm(&d), INV, "lda=-8");
    TH_END();
    TH_BEGIN("gemm: overflowing shapes");
    d = gdesc(); d.m = INT64_MAX / 2; d.k = 4;
    EXPECT_ERR(plan_gemm(&d), TC_ERR_OVERFLOW, "");
    d = gdesc(); d.ldb = INT64_MAX / 2;
    EXPECT_ERR(plan_gemm(&d), TC_ERR_OVERFLOW, "");
    TH_END();
    TH_BEGIN("gemm: NULL arguments and one-shot helpers");
    d = gdesc();
    EXPECT_ERR(tc_plan_gemm(NULL, NULL, &d, NULL), INV, "plan");
    tc_plan *pl = NULL;
    EXPECT_ERR(tc_plan_gemm(&pl, NULL, NULL, NULL), INV, "desc");
    float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4] = {NAN, NAN, NAN, NAN};
    EXPECT_ERR(tc_sgemm(NULL, 'X', 'N', 2, 2, 2, 1.f, a, 2, b, 2, 0.f, c, 2), INV, "trans_a='X'");
    EXPECT_ERR(tc_sgemm(NULL, 'N', 'q', 2, 2, 2, 1.f, a, 2, b, 2, 0.f, c, 2), INV, "trans_b='q'");
    EXPECT_ERR(tc_sgemm(NULL, 'N', 'N', 2, 2, 2, 1.f, NULL, 2, b, 2, 0.f, c, 2), INV, "");
    EXPECT_ERR(tc_sgemm(NULL, 'N', 'N', 2, 2, 2, 1.f, a, 2, b, 2, 0.f, NULL, 2), INV, "");
    EXPECT_ERR(tc_sgemm(NULL, 'N', 'N', 0, 2, 2, 1.f, a, 2, b, 2, 0.f, c, 2), INV, "m=0");
    /* a valid one: [1 2;3 4][5 6;7 8] = [19 22;43 50]; beta 0 ignores NaN */
    if (EXPECT_ERR(tc_sgemm(NULL, 'N', 'N', 2, 2, 2, 1.f, a, 2, b, 2, 0.f, c, 2), TC_OK, ""))
        CHECK(c[0] == 19 && c[1] == 22 && c[2] == 43 && c[3] == 50,
              "sgemm gave %g %g %g %g", c[0], c[1], c[2], c[3]);
    double ad[4] = {1, 2, 3, 4}, bd[4] = {5, 6, 7, 8}, cd[4] = {1, 1, 1, 1};
    /* C = 2 A^T B^T + 1 C: A^T B^T = (BA)^T, BA = [23 34;31 46] */
    if (EXPECT_ERR(tc_dgemm(NULL, 't', 'T', 2, 2, 2, 2.0, ad, 2, bd, 2, 1.0, cd, 2), TC_OK, ""))
        CHECK(cd[0] == 47 && cd[1] == 63 && cd[2] == 69 && cd[3] == 93,
              "dgemm gave %g %g %g %g", cd[0], cd[1], cd[2], cd[3]);
    TH_END();
}

static void test_options_and_algorithms(void) {
    const tc_status INV = TC_ERR_INVALID_ARGUMENT;
    tc_filter_desc d = fdesc();
    tc_plan *pl = NULL;
    tc_plan_options o;

    TH_BEGIN("plan options: struct_size, flags, wisdom");
    tc_plan_options_init(&o); o.struct_size = sizeof o + 1;
    EXPECT_ERR(tc_plan_filter(&pl, NULL, &d, g_mask, &o), INV, "struct_size=");
    tc_plan_options_init(&o); o.flags = 0x80;
    EXPECT_ERR(tc_plan_filter(&pl, NULL, &d, g_mask, &o), INV, "flags=0x80");
    tc_plan_options_init(&o); o.flags = TC_PLAN_WISDOM_ONLY;
    EXPECT_ERR(tc_plan_filter(&pl, NULL, &d, g_mask, &o), TC_ERR_NOT_FOUND, "wisdom");
    CHECK(pl == NULL, "plan set on failure");
    TH_END();

    TH_BEGIN("forced algorithms: unknown, wrong operation, workspace limit");
    tc_plan_options_init(&o); o.algorithm = "no.such.algorithm";
    EXPECT_ERR(tc_plan_filter(&pl, NULL, &d, g_mask, &o), TC_ERR_NOT_FOUND, "no.such.algorithm");
    tc_plan_options_init(&o); o.algorithm = "";
    EXPECT_ERR(tc_plan_filter(&pl, NULL, &d, g_mask, &o), TC_ERR_NOT_FOUND, "");
    tc_plan_options_init(&o); o.algorithm = "ref.gemm.loops";
    EXPECT_ERR(tc_plan_filter(&pl, NULL, &d, g_mask, &o), TC_ERR_NOT_APPLICABLE, "ref.gemm.loops");
    tc_gemm_desc g = gdesc();
    tc_plan_options_init(&o); o.algorithm = "ref.conv.loops";
    EXPECT_ERR(tc_plan_gemm(&pl, NULL, &g, &o), TC_ERR_NOT_APPLICABLE, "ref.conv.loops");
    tc_plan_options_init(&o); o.algorithm = "cpu.conv.im2col"; o.workspace_limit = 1;
    EXPECT_ERR(tc_plan_filter(&pl, NULL, &d, g_mask, &o), TC_ERR_WORKSPACE, "cpu.conv.im2col");
    /* unforced with a tiny limit: some solver needing none applies (the
     * reference) */
    tc_plan_options_init(&o); o.workspace_limit = 1;
    if (EXPECT_ERR(tc_plan_filter(&pl, NULL, &d, g_mask, &o), TC_OK, ""))
        printf("  workspace_limit=1 chose %s\n", tc_plan_algorithm(pl));
    tc_plan_destroy(pl);
    pl = NULL;
    TH_END();

    /* names before the naming rule (docs/architecture.md "Solver names"),
     * kept as aliases for one release: planning by the old name plans the
     * renamed solver, which the plan reports by its new name; so does a
     * wisdom file that holds the old name */
    TH_BEGIN("old algorithm names: aliases in options and wisdom");
    static const char *const old_new[][2] = {
        {"ref.conv", "ref.conv.loops"},
        {"cpu.im2col.gemm", "cpu.conv.im2col"},
        {"cpu.separable", "cpu.filter.separable"},
        {"cpu.fft.fftw", "cpu.filter.fft"},
        {"cpu.direct.halo", "cpu.filter.direct-halo"},
    };
    for (size_t i = 0; i < sizeof old_new / sizeof old_new[0]; i++) {
        tc_plan *pa = NULL, *pb = NULL;
        tc_plan_options_init(&o); o.algorithm = old_new[i][1];
        tc_status sb = tc_plan_filter(&pb, NULL, &d, g_mask, &o);
        tc_plan_options_init(&o); o.algorithm = old_new[i][0];
        tc_status sa = tc_plan_filter(&pa, NULL, &d, g_mask, &o);
        CHECK(sa == sb, "%s plans with %s, %s with %s", old_new[i][0], tc_status_string(sa),
              old_new[i][1], tc_status_string(sb));
        if (sa == TC_OK && sb == TC_OK)
            CHECK(strcmp(tc_plan_algorithm(pa), old_new[i][1]) == 0 &&
                      strcmp(tc_plan_algorithm(pb), old_new[i][1]) == 0,
                  "%s planned %s, %s planned %s", old_new[i][0], tc_plan_algorithm(pa),
                  old_new[i][1], tc_plan_algorithm(pb));
        tc_plan_destroy(pa);
        tc_plan_destroy(pb);
    }
    {
        char wpath[64], line[512];
        snprintf(wpath, sizeof wpath, "/tmp/tc_test_api_alias.%d.wisdom", (int)getpid());
        tc_wisdom_forget();
        tc_plan_options_init(&o); o.flags = TC_PLAN_MEASURE; o.algorithm = NULL;
        if (EXPECT_ERR(tc_plan_filter(&pl, NULL, &d, g_mask, &o), TC_OK, "")) {
            tc_plan_destroy(pl);
            pl = NULL;
            EXPECT_ERR(tc_wisdom_save(wpath), TC_OK, "");
            /* the same file with every key's solver named ref.conv (the old
             * name of ref.conv.loops, which applies to any filter) */
            FILE *f = fopen(wpath, "r");
            char text[8192];
            size_t len = 0;
            while (f && fgets(line, sizeof line, f)) {
                char *sp = strrchr(line, ' ');
                if (sp && strncmp(line, "tileconv-wisdom", 15) != 0)
                    snprintf(sp, sizeof line - (size_t)(sp - line), " ref.conv\n");
                len += (size_t)snprintf(text + len, len < sizeof text ? sizeof text - len : 0,
                                        "%s", line);
            }
            if (f) fclose(f);
            f = fopen(wpath, "w");
            if (CHECK(f && len < sizeof text, "rewrite %s", wpath)) {
                fputs(text, f);
                fclose(f);
                tc_wisdom_forget();
                EXPECT_ERR(tc_wisdom_load(wpath), TC_OK, "");
                tc_plan_options_init(&o); o.flags = TC_PLAN_WISDOM_ONLY;
                if (EXPECT_ERR(tc_plan_filter(&pl, NULL, &d, g_mask, &o), TC_OK, ""))
                    CHECK(strcmp(tc_plan_algorithm(pl), "ref.conv.loops") == 0,
                          "wisdom naming ref.conv planned %s", tc_plan_algorithm(pl));
                tc_plan_destroy(pl);
                pl = NULL;
            } else if (f) {
                fclose(f);
            }
        }
        remove(wpath);
        tc_wisdom_forget();
    }
    TH_END();

    TH_BEGIN("algorithm list");
    int n = tc_algorithm_count();
    CHECK(n >= 2, "tc_algorithm_count()=%d", n);
    tc_algorithm_info info;
    EXPECT_ERR(tc_algorithm_get(-1, &info), INV, "-1");
    EXPECT_ERR(tc_algorithm_get(n, &info), INV, "");
    EXPECT_ERR(tc_algorithm_get(0, NULL), INV, "");
    int seen_ref = 0;
    for (int i = 0; i < n; i++) {
        if (!EXPECT_ERR(tc_algorithm_get(i, &info), TC_OK, "")) continue;
        CHECK(info.name && info.name[0] && strchr(info.name, '.'), "name of %d", i);
        { /* backend.op.algorithm[-variant]: op one the solver implements */
            char b[16] = "", op[16] = "", alg[48] = "";
            int nf = sscanf(info.name, "%15[a-z].%15[a-z].%47[a-z0-9-]", b, op, alg);
            const unsigned opbit = !strcmp(op, "filter") ? TC_OP_FILTER
                                   : !strcmp(op, "conv") ? TC_OP_CONV
                                   : !strcmp(op, "gemm") ? TC_OP_GEMM : 0;
            CHECK(nf == 3 && (!strcmp(b, "cpu") || !strcmp(b, "cuda") || !strcmp(b, "ref")) &&
                      (info.ops & opbit) && strlen(info.name) == strlen(b) + strlen(op) + strlen(alg) + 2,
                  "%s breaks the naming rule backend.op.algorithm[-variant]", info.name);
        }
        CHECK(info.summary && info.summary[0], "%s: summary", info.name);
        CHECK(info.ops && !(info.ops & ~(TC_OP_FILTER | TC_OP_CONV | TC_OP_GEMM)),
              "%s: ops=0x%x", info.name, info.ops);
        CHECK(tc_backend_name(info.backend) != NULL, "%s: backend %d", info.name,
              (int)info.backend);
        CHECK(info.available == 0 || info.available == 1, "%s: available=%d",
              info.name, info.available);
        int is_ref = strncmp(info.name, "ref.", 4) == 0;
        CHECK(!seen_ref || is_ref, "%s is listed after a reference solver "
              "(references must be last)", info.name);
        seen_ref |= is_ref;
        for (int j = 0; j < i; j++) {
            tc_algorithm_info o2;
            if (tc_algorithm_get(j, &o2) == TC_OK)
                CHECK(strcmp(o2.name, info.name) != 0, "duplicate name %s", info.name);
        }
    }
    CHECK(seen_ref, "no ref.* solver registered");
    TH_END();
}

static void test_backends(void) {
    TH_BEGIN("backend cuda without a GPU");
    int ndev = tc_cuda_device_count();
    CHECK(ndev >= 0, "tc_cuda_device_count()=%d", ndev);
    tc_context *ctx = NULL;
    if (!CHECK_STATUS(tc_context_create(&ctx), TC_OK)) { TH_END(); return; }
    tc_filter_desc d = fdesc();
    tc_plan *pl = NULL;
    if (ndev == 0) {
        CHECK_STATUS(tc_context_set_backend(ctx, TC_BACKEND_CUDA), TC_OK);
        /* the message names the cause: no CUDA in this build, or no device */
        EXPECT_ERR(tc_plan_filter(&pl, ctx, &d, g_mask, NULL), TC_ERR_NO_DEVICE, "backend cuda",
#if TC_TEST_CUDA_BUILD
                   "no usable CUDA device"
#else
                   "no CUDA support"
#endif
        );
        tc_conv_desc c = cdesc();
        EXPECT_ERR(tc_plan_conv(&pl, ctx, &c, NULL), TC_ERR_NO_DEVICE, "backend cuda");
        tc_gemm_desc g = gdesc();
        EXPECT_ERR(tc_plan_gemm(&pl, ctx, &g, NULL), TC_ERR_NO_DEVICE, "backend cuda");
        /* a registered CUDA solver forced by name on the default context */
        for (int i = 0; i < tc_algorithm_count(); i++) {
            tc_algorithm_info info;
            if (tc_algorithm_get(i, &info) != TC_OK || info.backend != TC_BACKEND_CUDA)
                continue;
            CHECK(!info.available, "%s reports available without a device", info.name);
            tc_plan_options o;
            tc_plan_options_init(&o);
            o.algorithm = info.name;
            tc_status st = TC_OK;
            if (info.ops & TC_OP_FILTER) st = tc_plan_filter(&pl, NULL, &d, g_mask, &o);
            else if (info.ops & TC_OP_CONV) st = tc_plan_conv(&pl, NULL, &c, &o);
            else st = tc_plan_gemm(&pl, NULL, &g, &o);
            CHECK_STATUS(st, TC_ERR_NO_DEVICE);
            tc_plan_destroy(st == TC_OK ? pl : NULL);
            pl = NULL;
        }
        /* AUTO falls back to the CPU */
        CHECK_STATUS(tc_context_set_backend(ctx, TC_BACKEND_AUTO), TC_OK);
        if (EXPECT_ERR(tc_plan_filter(&pl, ctx, &d, g_mask, NULL), TC_OK, ""))
            CHECK(tc_plan_backend(pl) == TC_BACKEND_CPU, "AUTO chose backend %d",
                  (int)tc_plan_backend(pl));
        tc_plan_destroy(pl);
        pl = NULL;
    } else {
        TH_SKIP("%d CUDA device(s) present: the no-device path cannot be tested", ndev);
    }
    /* a CPU context refuses a forced algorithm of another backend */
    CHECK_STATUS(tc_context_set_backend(ctx, TC_BACKEND_CPU), TC_OK);
    for (int i = 0; i < tc_algorithm_count(); i++) {
        tc_algorithm_info info;
        if (tc_algorithm_get(i, &info) != TC_OK || info.backend == TC_BACKEND_CPU ||
            !(info.ops & TC_OP_FILTER))
            continue;
        tc_plan_options o;
        tc_plan_options_init(&o);
        o.algorithm = info.name;
        EXPECT_ERR(tc_plan_filter(&pl, ctx, &d, g_mask, &o), TC_ERR_NOT_APPLICABLE, info.name);
    }
    tc_context_destroy(ctx);
    TH_END();
}

static void test_context(void) {
    const tc_status INV = TC_ERR_INVALID_ARGUMENT;
    TH_BEGIN("context validation");
    EXPECT_ERR(tc_context_create(NULL), INV, "");
    tc_context *ctx = NULL;
    if (!CHECK_STATUS(tc_context_create(&ctx), TC_OK)) { TH_END(); return; }
    CHECK(tc_context_threads(ctx) >= 1, "default threads %d", tc_context_threads(ctx));
    CHECK(tc_context_backend(ctx) == TC_BACKEND_AUTO, "default backend");
    EXPECT_ERR(tc_context_set_threads(ctx, -1), INV, "threads=-1");
    EXPECT_ERR(tc_context_set_threads(ctx, 4097), INV, "threads=4097");
    EXPECT_ERR(tc_context_set_threads(NULL, 2), INV, "");
    EXPECT_ERR(tc_context_set_threads(ctx, 3), TC_OK, "");
    CHECK(tc_context_threads(ctx) == 3, "threads %d", tc_context_threads(ctx));
    EXPECT_ERR(tc_context_set_threads(ctx, 0), TC_OK, "");
    CHECK(tc_context_threads(ctx) == tc_cpu_count(), "threads 0 -> %d, cpus %d",
          tc_context_threads(ctx), tc_cpu_count());
    EXPECT_ERR(tc_context_set_backend(ctx, (tc_backend)7), INV, "backend=7");
    EXPECT_ERR(tc_context_set_backend(NULL, TC_BACKEND_CPU), INV, "");
    CHECK(tc_context_threads(NULL) >= 1, "NULL context threads");
    CHECK(tc_context_backend(NULL) == TC_BACKEND_AUTO, "NULL context backend");
    tc_context_destroy(ctx);
    tc_context_destroy(NULL);
    TH_END();
}

/* Library workspaces of 4 MiB or more are 2 MiB aligned with huge pages
 * advised, unless TILECONV_NO_HUGEPAGES=1: either way the call succeeds
 * and the result is the same to the bit (the call allocates its own). */
static void test_hugepage_switch(void) {
    TH_BEGIN("large workspaces with and without TILECONV_NO_HUGEPAGES");
    tc_gemm_desc gd;
    tc_gemm_desc_init(&gd);
    gd.m = gd.n = gd.k = 1000;
    tc_plan_options po;
    tc_plan_options_init(&po);
    po.algorithm = "cpu.gemm.packed";
    tc_plan *gp = NULL;
    const size_t n = 1000 * 1000;
    float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
    float *c1 = malloc(n * sizeof(float)), *c2 = malloc(n * sizeof(float));
    if (CHECK(a && b && c1 && c2, "allocation") &&
        CHECK_STATUS(tc_plan_gemm(&gp, NULL, &gd, &po), TC_OK)) {
        for (size_t i = 0; i < n; i++) {
            a[i] = 0.001f * (float)(i % 997) - 0.3f;
            b[i] = 0.002f * (float)(i % 991) - 0.9f;
        }
        CHECK(tc_plan_workspace_size(gp) >= ((size_t)4 << 20),
              "workspace %zu bytes is under 4 MiB: the test does not reach the huge-page path",
              tc_plan_workspace_size(gp));
        unsetenv("TILECONV_NO_HUGEPAGES");
        CHECK_STATUS(tc_execute_gemm(gp, c1, a, b, NULL), TC_OK);
        setenv("TILECONV_NO_HUGEPAGES", "1", 1);
        CHECK_STATUS(tc_execute_gemm(gp, c2, a, b, NULL), TC_OK);
        unsetenv("TILECONV_NO_HUGEPAGES");
        CHECK(memcmp(c1, c2, n * sizeof(float)) == 0, "results differ with TILECONV_NO_HUGEPAGES=1");
    }
    tc_plan_destroy(gp);
    free(a), free(b), free(c1), free(c2);
    TH_END();
}

static void test_execute_args(void) {
    const tc_status INV = TC_ERR_INVALID_ARGUMENT;
    TH_BEGIN("execute: NULL and mismatched arguments");
    tc_filter_desc fd = fdesc();
    tc_conv_desc cd = cdesc();
    tc_gemm_desc gd = gdesc();
    tc_plan *fp = NULL, *cp = NULL, *cpb = NULL, *gp = NULL;
    static float x[4096], y[4096], w[4096], b[64];
    for (int i = 0; i < 4096; i++) x[i] = w[i] = 0.5f + (float)(i % 7);
    for (int i = 0; i < 64; i++) b[i] = 1.0f;
    int ok = CHECK_STATUS(tc_plan_filter(&fp, NULL, &fd, g_mask, NULL), TC_OK);
    ok &= CHECK_STATUS(tc_plan_conv(&cp, NULL, &cd, NULL), TC_OK);
    cd.has_bias = 1;
    ok &= CHECK_STATUS(tc_plan_conv(&cpb, NULL, &cd, NULL), TC_OK);
    ok &= CHECK_STATUS(tc_plan_gemm(&gp, NULL, &gd, NULL), TC_OK);
    if (ok) {
        EXPECT_ERR(tc_execute_filter(NULL, y, x, NULL), INV, "plan");
        EXPECT_ERR(tc_execute_filter(fp, NULL, x, NULL), INV, "output");
        EXPECT_ERR(tc_execute_filter(fp, y, NULL, NULL), INV, "input");
        EXPECT_ERR(tc_execute_filter(cp, y, x, NULL), INV, "");
        EXPECT_ERR(tc_execute_conv(fp, y, x, w, NULL, NULL), INV, "");
        EXPECT_ERR(tc_execute_gemm(fp, y, x, w, NULL), INV, "");
        EXPECT_ERR(tc_execute_conv(cp, y, x, NULL, NULL, NULL), INV, "weights");
        EXPECT_ERR(tc_execute_conv(cp, y, x, w, b, NULL), INV, "bias");
        EXPECT_ERR(tc_execute_conv(cpb, y, x, w, NULL, NULL), INV, "bias");
        EXPECT_ERR(tc_execute_conv(cpb, y, x, w, b, NULL), TC_OK, "");
        EXPECT_ERR(tc_execute_gemm(gp, y, x, NULL, NULL), INV, "");
        EXPECT_ERR(tc_execute_gemm(gp, NULL, x, w, NULL), INV, "");
        /* CPU plans take no device memory */
        CHECK(tc_plan_device_workspace_size(cp) == 0 && tc_plan_device_workspace_size(gp) == 0,
              "CPU plans report device workspace");
        /* a misaligned workspace is refused when one is needed */
        size_t ws = tc_plan_workspace_size(cp);
        if (ws) {
            char *buf = aligned_alloc(64, (ws + 64 + 63) / 64 * 64);
            EXPECT_ERR(tc_execute_conv(cp, y, x, w, NULL, buf + 1), INV, "aligned");
            EXPECT_ERR(tc_execute_conv(cp, y, x, w, NULL, buf), TC_OK, "");
            free(buf);
        }
        EXPECT_ERR(tc_execute_filter(fp, y, x, NULL), TC_OK, "");
    }
    tc_plan_destroy(fp);
    tc_plan_destroy(cp);
    tc_plan_destroy(cpb);
    tc_plan_destroy(gp);
    TH_END();

    TH_BEGIN("plan queries accept NULL");
    tc_plan_destroy(NULL);
    CHECK(tc_plan_algorithm(NULL) != NULL, "tc_plan_algorithm(NULL) is NULL");
    CHECK(tc_plan_workspace_size(NULL) == 0, "workspace of NULL");
    CHECK(tc_plan_device_workspace_size(NULL) == 0, "device workspace of NULL");
    CHECK(tc_plan_flops(NULL) == 0 && tc_plan_bytes(NULL) == 0, "flops/bytes of NULL");
    int nd;
    int64_t shape[TC_MAX_DIMS];
    EXPECT_ERR(tc_plan_output_shape(NULL, &nd, shape), INV, "");
    if (CHECK_STATUS(tc_plan_filter(&fp, NULL, &fd, g_mask, NULL), TC_OK)) {
        EXPECT_ERR(tc_plan_output_shape(fp, NULL, shape), INV, "");
        EXPECT_ERR(tc_plan_output_shape(fp, &nd, NULL), INV, "");
        tc_plan_destroy(fp);
    }
    /* initialisers and the CPU queries tolerate NULL / tiny buffers */
    tc_filter_desc_init(NULL);
    tc_conv_desc_init(NULL);
    tc_gemm_desc_init(NULL);
    tc_plan_options_init(NULL);
    char feat[1] = {'x'};
    tc_cpu_features(feat, sizeof feat);
    CHECK(feat[0] == 0, "tc_cpu_features with size 1 must write an empty string");
    char feat2[256];
    tc_cpu_features(feat2, sizeof feat2);
    CHECK(memchr(feat2, 0, sizeof feat2) != NULL, "features not NUL-terminated");
    CHECK(tc_cpu_count() >= 1, "tc_cpu_count()=%d", tc_cpu_count());
    TH_END();

    TH_BEGIN("output shapes of filter full/valid, conv, gemm");
    fd = fdesc(); fd.output = TC_OUTPUT_FULL;
    if (CHECK_STATUS(tc_plan_filter(&fp, NULL, &fd, g_mask, NULL), TC_OK)) {
        if (CHECK_STATUS(tc_plan_output_shape(fp, &nd, shape), TC_OK))
            CHECK(nd == 2 && shape[0] == 8 && shape[1] == 8, "full: %d %lld %lld",
                  nd, (long long)shape[0], (long long)shape[1]);
        tc_plan_destroy(fp);
    }
    fd.output = TC_OUTPUT_VALID;
    if (CHECK_STATUS(tc_plan_filter(&fp, NULL, &fd, g_mask, NULL), TC_OK)) {
        if (CHECK_STATUS(tc_plan_output_shape(fp, &nd, shape), TC_OK))
            CHECK(nd == 2 && shape[0] == 4 && shape[1] == 6, "valid: %d %lld %lld",
                  nd, (long long)shape[0], (long long)shape[1]);
        tc_plan_destroy(fp);
    }
    cd = cdesc(); cd.stride[0] = 2; cd.padding[1] = 1; cd.dilation[1] = 2;
    if (CHECK_STATUS(tc_plan_conv(&cp, NULL, &cd, NULL), TC_OK)) {
        /* (8-3)/2+1 = 3; (9+2-5)/1+1 = 7 */
        if (CHECK_STATUS(tc_plan_output_shape(cp, &nd, shape), TC_OK))
            CHECK(nd == 4 && shape[0] == 2 && shape[1] == 6 && shape[2] == 3 &&
                  shape[3] == 7, "conv: %d %lld %lld %lld %lld", nd, (long long)shape[0],
                  (long long)shape[1], (long long)shape[2], (long long)shape[3]);
        tc_plan_destroy(cp);
    }
    gd = gdesc();
    if (CHECK_STATUS(tc_plan_gemm(&gp, NULL, &gd, NULL), TC_OK)) {
        if (CHECK_STATUS(tc_plan_output_shape(gp, &nd, shape), TC_OK))
            CHECK(nd == 2 && shape[0] == 5 && shape[1] == 6, "gemm shape");
        CHECK(tc_plan_flops(gp) == 2.0 * 5 * 6 * 7, "gemm flops %g", tc_plan_flops(gp));
        tc_plan_destroy(gp);
    }
    TH_END();
}

static void test_names(void) {
    const tc_status INV = TC_ERR_INVALID_ARGUMENT;
    TH_BEGIN("tc_mode_parse / tc_mode_name");
    static const struct { const char *s; tc_mode m; } modes[] = {
        {"constant", TC_MODE_CONSTANT}, {"grid-constant", TC_MODE_CONSTANT},
        {"nearest", TC_MODE_NEAREST}, {"reflect", TC_MODE_REFLECT},
        {"grid-mirror", TC_MODE_REFLECT}, {"mirror", TC_MODE_MIRROR},
        {"wrap", TC_MODE_WRAP}, {"grid-wrap", TC_MODE_WRAP}};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        tc_mode m = (tc_mode)-1;
        if (EXPECT_ERR(tc_mode_parse(modes[i].s, &m), TC_OK, ""))
            CHECK(m == modes[i].m, "'%s' -> %d", modes[i].s, (int)m);
    }
    for (int m = 0; m <= 4; m++) {
        const char *n = tc_mode_name((tc_mode)m);
        tc_mode back = (tc_mode)-1;
        if (CHECK(n != NULL, "tc_mode_name(%d)", m))
            CHECK(tc_mode_parse(n, &back) == TC_OK && back == (tc_mode)m,
                  "round trip of %s", n);
    }
    CHECK(tc_mode_name((tc_mode)5) == NULL, "tc_mode_name(5)");
    CHECK(tc_mode_name((tc_mode)-1) == NULL, "tc_mode_name(-1)");
    tc_mode m;
    EXPECT_ERR(tc_mode_parse("bogus", &m), INV, "bogus");
    EXPECT_ERR(tc_mode_parse("", &m), INV, "");
    EXPECT_ERR(tc_mode_parse("Reflect", &m), INV, "Reflect");
    EXPECT_ERR(tc_mode_parse("reflect ", &m), INV, "");
    EXPECT_ERR(tc_mode_parse(NULL, &m), INV, "");
    EXPECT_ERR(tc_mode_parse("wrap", NULL), INV, "");
    TH_END();

    TH_BEGIN("tc_backend_parse / tc_backend_name, dtype sizes, version");
    static const struct { const char *s; tc_backend b; } be[] = {
        {"auto", TC_BACKEND_AUTO}, {"cpu", TC_BACKEND_CPU}, {"cuda", TC_BACKEND_CUDA}};
    for (size_t i = 0; i < 3; i++) {
        tc_backend b = (tc_backend)-1;
        if (EXPECT_ERR(tc_backend_parse(be[i].s, &b), TC_OK, ""))
            CHECK(b == be[i].b, "'%s' -> %d", be[i].s, (int)b);
        CHECK(tc_backend_name(be[i].b) && strcmp(tc_backend_name(be[i].b), be[i].s) == 0,
              "name of %d", (int)be[i].b);
    }
    tc_backend b;
    EXPECT_ERR(tc_backend_parse("gpu", &b), INV, "gpu");
    EXPECT_ERR(tc_backend_parse(NULL, &b), INV, "");
    EXPECT_ERR(tc_backend_parse("cpu", NULL), INV, "");
    CHECK(tc_backend_name((tc_backend)3) == NULL, "tc_backend_name(3)");
    CHECK(tc_dtype_size(TC_FLOAT32) == 4 && tc_dtype_size(TC_FLOAT64) == 8, "sizes");
    CHECK(tc_dtype_size(TC_FLOAT16) == 2 && tc_dtype_size(TC_BFLOAT16) == 2, "16-bit sizes");
    CHECK(tc_dtype_size((tc_dtype)4) == 0, "tc_dtype_size(4)");
    CHECK(tc_dtype_name((tc_dtype)4) == NULL, "tc_dtype_name(4)");
    for (int i = 0; i < 4; i++) {
        tc_dtype dt;
        CHECK(tc_dtype_parse(tc_dtype_name((tc_dtype)i), &dt) == TC_OK && dt == (tc_dtype)i,
              "tc_dtype_parse(%s)", tc_dtype_name((tc_dtype)i));
    }
    tc_dtype dtp;
    EXPECT_ERR(tc_dtype_parse("float8", &dtp), INV, "float8");
    for (int i = 0; i <= (int)TC_ACT_GELU; i++) {
        tc_activation a;
        CHECK(tc_activation_parse(tc_activation_name((tc_activation)i), &a) == TC_OK &&
                  a == (tc_activation)i, "tc_activation_parse(%d)", i);
    }
    tc_activation actp;
    EXPECT_ERR(tc_activation_parse("swish", &actp), INV, "swish");
    CHECK(tc_activation_name((tc_activation)7) == NULL, "tc_activation_name(7)");
    CHECK(tc_layout_name((tc_layout)2) == NULL && tc_layout_name(TC_LAYOUT_CHANNELS_LAST),
          "tc_layout_name");
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", TC_VERSION_MAJOR, TC_VERSION_MINOR, TC_VERSION_PATCH);
    CHECK(tc_version() && strcmp(tc_version(), v) == 0, "tc_version()='%s', header %s",
          tc_version() ? tc_version() : "(null)", v);
    TH_END();
}

/* TC_PLAN_MASK_AT_EXECUTE: the errors, and a plan run with different masks
 * of one shape in turn, each compared with the reference planned with that
 * mask (a mask ignored, or kept from an earlier call, fails). */
static double mexec_load(const void *a, int64_t i, tc_dtype dt) {
    return dt == TC_FLOAT32 ? (double)((const float *)a)[i] : ((const double *)a)[i];
}
static void mexec_store(void *a, int64_t i, tc_dtype dt, double v) {
    if (dt == TC_FLOAT32) ((float *)a)[i] = (float)v;
    else ((double *)a)[i] = v;
}

static void test_plan_mask_at_execute(void) {
    const tc_status INV = TC_ERR_INVALID_ARGUMENT;
    TH_BEGIN("TC_PLAN_MASK_AT_EXECUTE: errors");
    tc_context *ctx = NULL;
    static float x[4096], y[4096];
    int ok = CHECK_STATUS(tc_context_create(&ctx), TC_OK);
    ok &= CHECK_STATUS(tc_context_set_backend(ctx, TC_BACKEND_CPU), TC_OK);
    tc_filter_desc fd = fdesc();
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.flags = TC_PLAN_MASK_AT_EXECUTE;
    tc_plan *mp = NULL, *op = NULL, *pl = NULL;
    if (ok) {
        ok &= CHECK_STATUS(tc_plan_filter(&mp, ctx, &fd, NULL, &o), TC_OK);
        ok &= CHECK_STATUS(tc_plan_filter(&op, ctx, &fd, g_mask, NULL), TC_OK);
    }
    if (ok) {
        EXPECT_ERR(tc_execute_filter(mp, y, x, NULL), INV, "TC_PLAN_MASK_AT_EXECUTE",
                   "tc_execute_filter_mask");
        EXPECT_ERR(tc_execute_filter_mask(op, y, x, g_mask, NULL), INV,
                   "without TC_PLAN_MASK_AT_EXECUTE", "tc_execute_filter");
        EXPECT_ERR(tc_execute_filter_mask(mp, y, x, NULL, NULL), INV, "mask is NULL");
        EXPECT_ERR(tc_execute_filter_mask(NULL, y, x, g_mask, NULL), INV, "plan is NULL");
        EXPECT_ERR(tc_execute_filter_mask(mp, NULL, x, g_mask, NULL), INV, "output");
        CHECK_STATUS(tc_execute_filter_mask(mp, y, x, g_mask, NULL), TC_OK);
        double med = 0;
        EXPECT_ERR(tc_cuda_time_plan(mp, x, NULL, NULL, 3, &med, NULL), INV,
                   "TC_PLAN_MASK_AT_EXECUTE", "mask as w");
        EXPECT_ERR(tc_cuda_time_plan(mp, x, g_mask, NULL, 3, &med, NULL), TC_ERR_UNSUPPORTED,
                   "cpu backend");
        /* without the flag the mask is still required */
        EXPECT_ERR(tc_plan_filter(&pl, ctx, &fd, NULL, NULL), INV, "mask is NULL");
        /* the algorithms that take their mask at plan time, by name */
        static const char *const fixed[] = {"cpu.filter.separable", "cpu.filter.lowrank",
                                            "cpu.filter.direct-halo", "cpu.filter.seed3d-zsplit"};
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
            o.algorithm = fixed[i];
            EXPECT_ERR(tc_plan_filter(&pl, ctx, &fd, NULL, &o), TC_ERR_NOT_APPLICABLE, fixed[i],
                       "TC_PLAN_MASK_AT_EXECUTE");
            tc_plan_destroy(pl);
            pl = NULL;
        }
        static const char *const per_call[] = {"cpu.filter.direct-scalar", "ref.conv.loops",
                                               "cpu.filter.fft"};
        for (size_t i = 0; i < sizeof per_call / sizeof per_call[0]; i++) {
            int avail = 0; /* cpu.filter.fft: a build without FFTW has none */
            for (int k = 0, nk = tc_algorithm_count(); k < nk; k++) {
                tc_algorithm_info ai;
                if (tc_algorithm_get(k, &ai) == TC_OK && !strcmp(ai.name, per_call[i]))
                    avail = ai.available;
            }
            if (!avail) {
                printf("%s not available in this build: its per-call mask plan not checked\n",
                       per_call[i]);
                continue;
            }
            o.algorithm = per_call[i];
            CHECK_STATUS(tc_plan_filter(&pl, ctx, &fd, NULL, &o), TC_OK);
            tc_plan_destroy(pl);
            pl = NULL;
        }
        o.algorithm = NULL;
        /* 16-bit masks, the swapped valid case, conv and gemm plans */
        tc_filter_desc hd = fd;
        hd.dtype = TC_FLOAT16;
        EXPECT_ERR(tc_plan_filter(&pl, ctx, &hd, NULL, &o), TC_ERR_UNSUPPORTED, "float16",
                   "TC_PLAN_MASK_AT_EXECUTE");
        tc_filter_desc vd = fd;
        vd.output = TC_OUTPUT_VALID;
        vd.mask_shape[0] = 8;
        vd.mask_shape[1] = 9;
        EXPECT_ERR(tc_plan_filter(&pl, ctx, &vd, NULL, &o), TC_ERR_UNSUPPORTED, "swapped",
                   "TC_PLAN_MASK_AT_EXECUTE");
        tc_conv_desc cd = cdesc();
        EXPECT_ERR(tc_plan_conv(&pl, ctx, &cd, &o), INV, "TC_PLAN_MASK_AT_EXECUTE",
                   "filter plans only");
        tc_gemm_desc gd = gdesc();
        EXPECT_ERR(tc_plan_gemm(&pl, ctx, &gd, &o), INV, "TC_PLAN_MASK_AT_EXECUTE");
        CHECK(pl == NULL, "a failed plan left *plan set");
        /* no value-based choice: a 31x31 mask on 512^2 takes FFT with its
         * mask and a direct sum without (cpu.filter.fft takes a per-call
         * mask by name only: the direct sums keep integer data exact) */
        tc_filter_desc bd = fd;
        bd.shape[0] = bd.shape[1] = 512;
        bd.mask_shape[0] = bd.mask_shape[1] = 31;
        CHECK_STATUS(tc_plan_filter(&pl, ctx, &bd, NULL, &o), TC_OK);
        const char *a = tc_plan_algorithm(pl);
        CHECK(strncmp(a, "cpu.filter.direct-", 18) == 0 || strcmp(a, "ref.conv.loops") == 0,
              "a mask-at-execute plan chose %s", a);
        tc_plan_destroy(pl);
        pl = NULL;
    }
    tc_plan_destroy(mp);
    tc_plan_destroy(op);
    TH_END();

    /* two masks of one shape in turn, then the first again, on the same
     * plan; every algorithm that takes a per-call mask, both kinds, every
     * mode, an origin, float32 and float64, a strided input */
    static const char *const algos[] = {NULL, "cpu.filter.direct-avx512", "cpu.filter.direct-avx2",
                                        "cpu.filter.direct-scalar", "ref.conv.loops"};
    const int64_t H = 37, W = 29, MR = 5, MS = 4;
    for (int dti = 0; dti < 2 && ok; dti++)
        for (int kind = 0; kind < 2; kind++)
            for (int mode = 0; mode < 5; mode++)
                for (size_t ai = 0; ai < sizeof algos / sizeof algos[0]; ai++) {
                    const tc_dtype dt = dti ? TC_FLOAT64 : TC_FLOAT32;
                    const size_t es = tc_dtype_size(dt);
                    TH_BEGIN("TC_PLAN_MASK_AT_EXECUTE %s %s %s [%s]: masks change per call",
                             tc_dtype_name(dt), kind ? "correlate" : "convolve",
                             tc_mode_name((tc_mode)mode), algos[ai] ? algos[ai] : "estimate");
                    th_rng r = th_rng_for(0x3a5c0000u + (unsigned)(dti * 100 + kind * 10 + mode));
                    tc_filter_desc d;
                    tc_filter_desc_init(&d);
                    d.dtype = dt;
                    d.ndim = 2;
                    d.shape[0] = H;
                    d.shape[1] = W;
                    d.in_strides[0] = 2 * W + 3; /* strided rows: the core packs them */
                    d.in_strides[1] = 2;
                    d.mask_shape[0] = MR;
                    d.mask_shape[1] = MS;
                    d.kind = kind ? TC_FILTER_CORRELATE : TC_FILTER_CONVOLVE;
                    d.mode = (tc_mode)mode;
                    d.cval = 0.75;
                    d.origin[0] = -1;
                    d.origin[1] = 1;
                    const int64_t xn = (H - 1) * (2 * W + 3) + 2 * (W - 1) + 1;
                    void *xb = calloc((size_t)xn, es), *yb = calloc((size_t)(H * W), es);
                    void *yr = calloc((size_t)(H * W), es), *m[2];
                    double xmax = 0, wsum[2] = {0, 0};
                    for (int64_t i = 0; i < xn; i++) {
                        double v = th_uniform(&r, -1, 1);
                        mexec_store(xb, i, dt, v);
                        if (fabs(v) > xmax) xmax = fabs(v);
                    }
                    for (int k = 0; k < 2; k++) {
                        m[k] = calloc((size_t)(MR * MS), es);
                        for (int64_t i = 0; i < MR * MS; i++) {
                            double v = th_uniform(&r, -1, 1);
                            mexec_store(m[k], i, dt, v);
                            wsum[k] += fabs(v);
                        }
                    }
                    tc_plan_options_init(&o);
                    o.flags = TC_PLAN_MASK_AT_EXECUTE;
                    o.algorithm = algos[ai];
                    tc_plan *mpl = NULL;
                    tc_status st = tc_plan_filter(&mpl, ctx, &d, NULL, &o);
                    if (st == TC_ERR_UNSUPPORTED) { /* an ISA this CPU lacks */
                        TH_SKIP("%s", tc_last_error());
                    } else if (CHECK_STATUS(st, TC_OK)) {
                        const int seq[3] = {0, 1, 0};
                        for (int c = 0; c < 3; c++) {
                            const int k = seq[c];
                            tc_plan_options ro;
                            tc_plan_options_init(&ro);
                            ro.algorithm = "ref.conv.loops";
                            tc_plan *rp = NULL;
                            if (!CHECK_STATUS(tc_plan_filter(&rp, ctx, &d, m[k], &ro), TC_OK)) break;
                            CHECK_STATUS(tc_execute_filter(rp, yr, xb, NULL), TC_OK);
                            tc_plan_destroy(rp);
                            for (int64_t i = 0; i < H * W; i++) mexec_store(yb, i, dt, NAN);
                            if (!CHECK_STATUS(tc_execute_filter_mask(mpl, yb, xb, m[k], NULL), TC_OK))
                                break;
                            const double tol =
                                (dt == TC_FLOAT32 ? 1e-5 : 1e-12) * (xmax > 0.75 ? xmax : 0.75) * wsum[k];
                            int64_t bad = 0, first = -1;
                            for (int64_t i = 0; i < H * W; i++) {
                                double g = mexec_load(yb, i, dt), w = mexec_load(yr, i, dt);
                                if (!(fabs(g - w) <= tol)) {
                                    if (first < 0) first = i;
                                    bad++;
                                }
                            }
                            CHECK(bad == 0, "%s, call %d (mask %d): %lld of %lld outputs off, first "
                                  "%lld: got %.9g want %.9g", tc_plan_algorithm(mpl), c, k,
                                  (long long)bad, (long long)(H * W), (long long)first,
                                  first >= 0 ? mexec_load(yb, first, dt) : 0.0,
                                  first >= 0 ? mexec_load(yr, first, dt) : 0.0);
                        }
                    }
                    tc_plan_destroy(mpl);
                    free(xb);
                    free(yb);
                    free(yr);
                    free(m[0]);
                    free(m[1]);
                    TH_END();
                }
    tc_context_destroy(ctx);
}

static void test_cuda_time(void) {
    const tc_status INV = TC_ERR_INVALID_ARGUMENT;
    TH_BEGIN("tc_cuda_time_filter: arguments, CPU plans, non-filter plans");
    tc_context *ctx = NULL;
    tc_plan *fp = NULL, *gp = NULL;
    static float x[4096];
    double med = 0, mn = 0;
    tc_filter_desc fd = fdesc();
    tc_gemm_desc gd = gdesc();
    int ok = CHECK_STATUS(tc_context_create(&ctx), TC_OK);
    ok &= CHECK_STATUS(tc_context_set_backend(ctx, TC_BACKEND_CPU), TC_OK);
    ok &= CHECK_STATUS(tc_plan_filter(&fp, ctx, &fd, g_mask, NULL), TC_OK);
    ok &= CHECK_STATUS(tc_plan_gemm(&gp, ctx, &gd, NULL), TC_OK);
    if (ok) {
        EXPECT_ERR(tc_cuda_time_filter(NULL, x, 5, &med, &mn), INV, "plan");
        EXPECT_ERR(tc_cuda_time_filter(fp, NULL, 5, &med, &mn), INV, "input");
        EXPECT_ERR(tc_cuda_time_filter(fp, x, 0, &med, &mn), INV, "repeat=0");
        EXPECT_ERR(tc_cuda_time_filter(fp, x, 5, NULL, &mn), INV, "median_ms");
        EXPECT_ERR(tc_cuda_time_filter(fp, x, 5, &med, &mn), TC_ERR_UNSUPPORTED, "cpu backend");
        EXPECT_ERR(tc_cuda_time_filter(gp, x, 5, &med, &mn), TC_ERR_UNSUPPORTED, "filter plans");
        int dummy;
        EXPECT_ERR(tc_plan_set_cuda_stream(NULL, &dummy), INV, "plan is NULL");
        EXPECT_ERR(tc_plan_set_cuda_stream(fp, &dummy), TC_ERR_UNSUPPORTED, "cpu backend");
        EXPECT_ERR(tc_plan_set_cuda_stream(gp, NULL), TC_ERR_UNSUPPORTED, "not on CUDA");
    }
    tc_plan_destroy(fp);
    tc_plan_destroy(gp);
    TH_END();

    TH_BEGIN("tc_cuda_time_plan: conv and gemm arguments, CPU plans");
    tc_conv_desc cd = cdesc();
    cd.has_bias = 1;
    tc_plan *cp = NULL;
    gp = NULL;
    static float w[512], b[16];
    ok = CHECK_STATUS(tc_plan_conv(&cp, ctx, &cd, NULL), TC_OK);
    ok &= CHECK_STATUS(tc_plan_gemm(&gp, ctx, &gd, NULL), TC_OK);
    if (ok) {
        EXPECT_ERR(tc_cuda_time_plan(cp, x, NULL, NULL, 5, &med, &mn), INV, "plan holds none");
        EXPECT_ERR(tc_cuda_time_plan(cp, x, w, NULL, 5, &med, &mn), INV, "bias is NULL");
        EXPECT_ERR(tc_cuda_time_plan(cp, x, w, b, 5, &med, &mn), TC_ERR_UNSUPPORTED, "cpu backend");
        EXPECT_ERR(tc_cuda_time_plan(gp, x, NULL, NULL, 5, &med, &mn), INV, "b is NULL");
        EXPECT_ERR(tc_cuda_time_plan(gp, x, w, NULL, 5, &med, &mn), TC_ERR_UNSUPPORTED, "cpu backend");
        EXPECT_ERR(tc_cuda_time_plan(gp, x, w, NULL, 2000000, &med, &mn), INV, "repeat=2000000");
    }
    tc_plan_destroy(cp);
    tc_plan_destroy(gp);
    tc_context_destroy(ctx);
    TH_END();
}

/* tc_plan_conv_set_weights: every CPU conv algorithm gives the same result,
 * to the bit, from weights set on the plan as from weights passed to
 * execute; the plan keeps its own copy; misuse is refused by name. */
static void test_conv_set_weights(void) {
    const tc_status INV = TC_ERR_INVALID_ARGUMENT;
    tc_conv_desc d = cdesc();
    d.has_bias = 1;
    d.padding[0] = d.padding[1] = 1;
    d.padding_mode = TC_PADDING_REFLECT;
    const int64_t nx = 2 * 4 * 8 * 9, nw = 6 * 2 * 3 * 3, ny = 2 * 6 * 8 * 9;
    float x[2 * 4 * 8 * 9], w[6 * 2 * 3 * 3], wkeep[6 * 2 * 3 * 3], b[6];
    float y1[2 * 6 * 8 * 9], y2[2 * 6 * 8 * 9];
    th_rng r = th_rng_for(4242);
    for (int64_t i = 0; i < nx; i++) x[i] = (float)th_value(&r);
    for (int64_t i = 0; i < nw; i++) wkeep[i] = w[i] = (float)th_value(&r);
    for (int i = 0; i < 6; i++) b[i] = (float)th_value(&r);
    for (int i = 0; i < tc_algorithm_count(); i++) {
        tc_algorithm_info info;
        if (tc_algorithm_get(i, &info) != TC_OK || !(info.ops & TC_OP_CONV) ||
            info.backend != TC_BACKEND_CPU || !info.available)
            continue;
        tc_plan_options o;
        tc_plan_options_init(&o);
        o.algorithm = info.name;
        tc_plan *pl = NULL;
        if (tc_plan_conv(&pl, NULL, &d, &o) != TC_OK) continue; /* not applicable */
        TH_BEGIN("conv set_weights: %s", info.name);
        for (int64_t k = 0; k < ny; k++) y1[k] = y2[k] = -7.0f;
        memcpy(w, wkeep, sizeof w);
        CHECK(tc_execute_conv(pl, y1, x, w, b, NULL) == TC_OK, "execute: %s", tc_last_error());
        EXPECT_ERR(tc_execute_conv(pl, y2, x, NULL, NULL, NULL), INV, "plan holds none");
        CHECK(tc_plan_conv_set_weights(pl, w, b) == TC_OK, "set: %s", tc_last_error());
        for (int64_t k = 0; k < nw; k++) w[k] = 1e3f; /* the plan keeps a copy */
        CHECK(tc_execute_conv(pl, y2, x, NULL, NULL, NULL) == TC_OK, "execute: %s",
              tc_last_error());
        CHECK(memcmp(y1, y2, sizeof y1) == 0, "%s: set weights differ from passed weights",
              info.name);
        EXPECT_ERR(tc_execute_conv(pl, y2, x, NULL, b, NULL), INV, "pass NULL for both");
        EXPECT_ERR(tc_plan_conv_set_weights(pl, wkeep, NULL), INV, "bias is NULL", "has_bias=1");
        EXPECT_ERR(tc_plan_conv_set_weights(pl, NULL, b), INV, "weights are NULL");
        /* a second set replaces the first */
        CHECK(tc_plan_conv_set_weights(pl, wkeep, b) == TC_OK, "set again: %s", tc_last_error());
        CHECK(tc_execute_conv(pl, y2, x, NULL, NULL, NULL) == TC_OK, "execute: %s",
              tc_last_error());
        CHECK(memcmp(y1, y2, sizeof y1) == 0, "%s: second set differs", info.name);
        tc_plan_destroy(pl);
        TH_END();
    }
    TH_BEGIN("conv set_weights: bad plans");
    EXPECT_ERR(tc_plan_conv_set_weights(NULL, w, b), INV, "plan is NULL");
    tc_gemm_desc g = gdesc();
    tc_plan *gp = NULL;
    CHECK(tc_plan_gemm(&gp, NULL, &g, NULL) == TC_OK, "gemm plan: %s", tc_last_error());
    if (gp) EXPECT_ERR(tc_plan_conv_set_weights(gp, w, b), INV, "not a conv plan");
    tc_plan_destroy(gp);
    TH_END();
}

/* weight_layout: validation by name; a descriptor whose struct_size ends
 * before the field gets the default without the field being read; every
 * CPU conv algorithm gives, to the bit, the same output from K x mask x
 * C/G weights with weight_layout channels-last (passed to execute and set
 * on the plan) as from K x C/G x mask weights with the default, in float32
 * (3D, groups 3) and float16 (2D); the channels-last weights read as
 * channels-first give another output; wisdom keys tell the layouts apart. */
static void wl_transpose(uint16_t *dst16, float *dst, const uint16_t *src16, const float *src,
                         int64_t K, int64_t Cg, int64_t S) {
    for (int64_t k = 0; k < K; k++)
        for (int64_t c = 0; c < Cg; c++)
            for (int64_t s = 0; s < S; s++) {
                if (dst) dst[(k * S + s) * Cg + c] = src[(k * Cg + c) * S + s];
                if (dst16) dst16[(k * S + s) * Cg + c] = src16[(k * Cg + c) * S + s];
            }
}

static void test_conv_weight_layout(void) {
    const tc_status INV = TC_ERR_INVALID_ARGUMENT;
    tc_conv_desc d;
    TH_BEGIN("conv: weight_layout validation and struct_size without it");
    d = cdesc(); d.weight_layout = (tc_layout)2;
    EXPECT_ERR(plan_conv(&d), INV, "weight_layout=2", "TC_LAYOUT_CHANNELS_LAST");
    d = cdesc(); d.weight_layout = (tc_layout)-1;
    EXPECT_ERR(plan_conv(&d), INV, "weight_layout=-1");
    d = cdesc(); d.weight_layout = TC_LAYOUT_CHANNELS_LAST;
    EXPECT_ERR(plan_conv(&d), TC_OK, "");
    d = cdesc(); d.layout = TC_LAYOUT_CHANNELS_LAST; d.weight_layout = TC_LAYOUT_CHANNELS_LAST;
    EXPECT_ERR(plan_conv(&d), TC_OK, "");
    tc_conv_desc init;
    tc_conv_desc_init(&init);
    CHECK(init.weight_layout == TC_LAYOUT_CHANNELS_FIRST, "default weight_layout %d",
          (int)init.weight_layout);
    /* the struct as a caller built without weight_layout passes it: the
     * field (here garbage) is not read */
    d = cdesc(); d.struct_size = offsetof(tc_conv_desc, weight_layout);
    d.weight_layout = (tc_layout)99;
    EXPECT_ERR(plan_conv(&d), TC_OK, "");
    d = cdesc(); d.struct_size = offsetof(tc_conv_desc, weight_layout) + 4;
    if (d.struct_size != sizeof d) EXPECT_ERR(plan_conv(&d), INV, "struct_size=");
    d = cdesc(); d.struct_size = offsetof(tc_conv_desc, weight_layout) - 4;
    EXPECT_ERR(plan_conv(&d), INV, "struct_size=");
    TH_END();

    enum { NX = 2 * 6 * 5 * 6 * 7, NW = 9 * 2 * 3 * 2 * 3, NY = 2 * 9 * 5 * 7 * 7 };
    static float x[NX], w[NW], wcl[NW], b[9], y0[NY], y1[NY], y2[NY], y3[NY];
    static uint16_t xh[NX], wh[NW], whcl[NW], bh[9];
    th_rng r = th_rng_for(4343);
    for (int64_t i = 0; i < NX; i++) x[i] = (float)th_value(&r);
    for (int64_t i = 0; i < NW; i++) w[i] = (float)th_value(&r);
    for (int i = 0; i < 9; i++) b[i] = (float)th_value(&r);
    tc_float_to_half(xh, x, NX);
    tc_float_to_half(wh, w, NW);
    tc_float_to_half(bh, b, 9);
    for (int v = 0; v < 2; v++) {
        const int half = v == 1;
        tc_conv_desc c;
        tc_conv_desc_init(&c);
        c.batch = 2;
        c.in_channels = 6;
        c.out_channels = 9;
        c.groups = 3;
        c.has_bias = 1;
        int64_t S, ny;
        if (!half) { /* 3D 5x6x7, kernel 3x2x3, reflect */
            c.nspatial = 3;
            const int64_t n[3] = {5, 6, 7}, k[3] = {3, 2, 3};
            for (int a = 0; a < 3; a++) {
                c.in_size[a] = n[a];
                c.kernel_size[a] = k[a];
                c.padding[a] = 1;
            }
            c.padding_mode = TC_PADDING_REFLECT;
            c.layout = TC_LAYOUT_CHANNELS_LAST;
            S = 3 * 2 * 3;
            ny = 2 * 9 * 5 * 7 * 7; /* out 5 x 7 x 7 */
        } else { /* 2D 30x7, kernel 3x3, float16 */
            c.dtype = TC_FLOAT16;
            c.in_size[0] = 30;
            c.in_size[1] = 7;
            c.kernel_size[0] = c.kernel_size[1] = 3;
            c.padding[0] = c.padding[1] = 1;
            S = 9;
            ny = 2 * 9 * 30 * 7;
        }
        const int64_t nw = 9 * 2 * S;
        wl_transpose(half ? whcl : NULL, half ? NULL : wcl, wh, w, 9, 2, S);
        const void *X = half ? (const void *)xh : x, *W = half ? (const void *)wh : w;
        const void *WCL = half ? (const void *)whcl : wcl, *B = half ? (const void *)bh : b;
        const size_t yb = (size_t)ny * (half ? 2 : 4);
        int tried = 0;
        for (int i = 0; i < tc_algorithm_count(); i++) {
            tc_algorithm_info info;
            if (tc_algorithm_get(i, &info) != TC_OK || !(info.ops & TC_OP_CONV) ||
                info.backend != TC_BACKEND_CPU || !info.available)
                continue;
            tc_plan_options o;
            tc_plan_options_init(&o);
            o.algorithm = info.name;
            tc_plan *pf = NULL, *pc = NULL;
            c.weight_layout = TC_LAYOUT_CHANNELS_FIRST;
            if (tc_plan_conv(&pf, NULL, &c, &o) != TC_OK) continue; /* not applicable */
            TH_BEGIN("conv weight_layout %s: %s", half ? "float16 2D" : "float32 3D channels_last",
                     info.name);
            tried++;
            c.weight_layout = TC_LAYOUT_CHANNELS_LAST;
            CHECK(tc_plan_conv(&pc, NULL, &c, &o) == TC_OK, "plan: %s", tc_last_error());
            if (pc) {
                if (strcmp(info.name, "ref.conv.loops") == 0)
                    CHECK(strstr(tc_plan_staging(pc), "weights channels_last->channels_first") &&
                              !strstr(tc_plan_staging(pf), "weights"),
                          "staging '%s' / '%s'", tc_plan_staging(pc), tc_plan_staging(pf));
                memset(y0, 0x7f, yb); memset(y1, 0x7e, yb);
                memset(y2, 0x7d, yb); memset(y3, 0x7c, yb);
                CHECK(tc_execute_conv(pf, y0, X, W, B, NULL) == TC_OK, "cf: %s", tc_last_error());
                CHECK(tc_execute_conv(pc, y1, X, WCL, B, NULL) == TC_OK, "cl: %s",
                      tc_last_error());
                CHECK(memcmp(y0, y1, yb) == 0,
                      "%s: channels-last weights give another output than channels-first",
                      info.name);
                /* the channels-last weights read as channels-first: wrong */
                CHECK(tc_execute_conv(pf, y2, X, WCL, B, NULL) == TC_OK, "cf on cl: %s",
                      tc_last_error());
                CHECK(memcmp(y0, y2, yb) != 0, "%s: the weights' layout makes no difference",
                      info.name);
                /* plan-held */
                CHECK(tc_plan_conv_set_weights(pc, WCL, B) == TC_OK, "set: %s", tc_last_error());
                CHECK(tc_execute_conv(pc, y3, X, NULL, NULL, NULL) == TC_OK, "held: %s",
                      tc_last_error());
                CHECK(memcmp(y0, y3, yb) == 0, "%s: plan-held channels-last weights differ",
                      info.name);
                (void)nw;
            }
            tc_plan_destroy(pf);
            tc_plan_destroy(pc);
            TH_END();
        }
        TH_BEGIN("conv weight_layout %s: algorithms tried", half ? "float16" : "float32");
        CHECK(tried >= 2, "only %d CPU conv algorithms applied", tried);
        TH_END();
    }

    TH_BEGIN("conv weight_layout: wisdom keys tell the layouts apart");
    tc_wisdom_forget();
    d = cdesc();
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.flags = TC_PLAN_MEASURE;
    tc_plan *pl = NULL;
    CHECK(tc_plan_conv(&pl, NULL, &d, &o) == TC_OK, "measure: %s", tc_last_error());
    tc_plan_destroy(pl);
    o.flags = TC_PLAN_WISDOM_ONLY;
    pl = NULL;
    CHECK(tc_plan_conv(&pl, NULL, &d, &o) == TC_OK, "wisdom only, cf: %s", tc_last_error());
    tc_plan_destroy(pl);
    d.weight_layout = TC_LAYOUT_CHANNELS_LAST;
    pl = NULL;
    EXPECT_ERR(tc_plan_conv(&pl, NULL, &d, &o), TC_ERR_NOT_FOUND, "wisdom");
    o.flags = TC_PLAN_MEASURE;
    CHECK(tc_plan_conv(&pl, NULL, &d, &o) == TC_OK, "measure cl: %s", tc_last_error());
    tc_plan_destroy(pl);
    o.flags = TC_PLAN_WISDOM_ONLY;
    pl = NULL;
    CHECK(tc_plan_conv(&pl, NULL, &d, &o) == TC_OK, "wisdom only, cl: %s", tc_last_error());
    tc_plan_destroy(pl);
    tc_wisdom_forget();
    TH_END();
}

/* The machine description and the ceilings cache. Each step runs in a
 * fresh child process (the library reads the cache once per process), so
 * this runs first, before anything in this process initialises it. */
static int machine_child(const char *path, int step) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        setenv("TILECONV_CEILINGS", path, 1);
        tc_machine m;
        if (step == 0) /* store */
            _exit(tc_machine_set_ceilings(1.23e11, 4.56e10, 1) == TC_OK ? 0 : 10);
        if (tc_machine_info(&m) != TC_OK) _exit(11);
        if (step == 1) /* load: the stored numbers, marked measured */
            _exit(m.measured && m.flops_per_core == 1.23e11 && m.bytes_per_s == 4.56e10 ? 0 : 12);
        /* step 2: a corrupt file is ignored: defaults */
        _exit(!m.measured && m.flops_per_core > 1e9 ? 0 : 13);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static void test_machine(void) {
    const tc_status INV = TC_ERR_INVALID_ARGUMENT;
    char path[] = "/tmp/tileconv-ceilings-XXXXXX";
    int fd = mkstemp(path);
    TH_BEGIN("machine: ceilings file round trip, corrupt file ignored");
    CHECK(fd >= 0, "mkstemp failed");
    if (fd >= 0) {
        close(fd);
        unlink(path); /* the library creates it */
        int rc = machine_child(path, 0);
        CHECK(rc == 0, "store: child status %d", rc);
        rc = machine_child(path, 1);
        CHECK(rc == 0, "load: child status %d", rc);
        FILE *f = fopen(path, "w");
        if (f) {
            fputs("tileconv-ceilings 1\nnot a line\n\t\t\nx|1\tnan\t-3\n", f);
            fclose(f);
        }
        rc = machine_child(path, 2);
        CHECK(rc == 0, "corrupt file: child status %d", rc);
        f = fopen(path, "w");
        if (f) {
            fputs("\x01\x02 binary junk", f);
            fclose(f);
        }
        rc = machine_child(path, 2);
        CHECK(rc == 0, "junk file: child status %d", rc);
        unlink(path);
    }
    TH_END();
    TH_BEGIN("machine: info names the CPU; bad ceilings refused by value");
    tc_machine m;
    CHECK(tc_machine_info(&m) == TC_OK, "%s", tc_last_error());
    CHECK(m.vendor[0] && m.model[0] && m.uarch[0], "empty vendor/model/uarch");
    CHECK(m.cpus == tc_cpu_count(), "cpus %d", m.cpus);
    CHECK(m.flops_per_core > 1e8, "flops_per_core %g", m.flops_per_core);
    EXPECT_ERR(tc_machine_info(NULL), INV, "NULL");
    EXPECT_ERR(tc_machine_set_ceilings(0, 1e10, 0), INV, "flops_per_core=0");
    EXPECT_ERR(tc_machine_set_ceilings(1e11, -1, 0), INV, "bytes_per_s=-1");
    TH_END();
}


/* float16 / bfloat16 conversions against the compiler's _Float16 and a
 * bit-level bfloat16 rounding; the new conv fields; the residual argument;
 * the staging report; in-place residual and plan-held weights on staged
 * and native algorithms. */
static uint16_t ref_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if (f != f) return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static void test_half(void) {
    const tc_status INV = TC_ERR_INVALID_ARGUMENT;
    TH_BEGIN("float16: every bit pattern to float and back");
    {
        static uint16_t h[65536], h2[65536];
        static float f[65536];
        for (int i = 0; i < 65536; i++) h[i] = (uint16_t)i;
        tc_half_to_float(f, h, 65536);
        int bad = 0;
        for (int i = 0; i < 65536 && bad < 3; i++) {
            _Float16 r;
            memcpy(&r, &h[i], 2);
            float want = (float)r;
            int same = (want != want && f[i] != f[i]) || memcmp(&want, &f[i], 4) == 0;
            if (!same) bad++, CHECK(0, "half 0x%04x -> %g, want %g", i, f[i], want);
        }
        tc_float_to_half(h2, f, 65536);
        for (int i = 0; i < 65536 && bad < 6; i++) {
            int nan = (h[i] & 0x7c00) == 0x7c00 && (h[i] & 0x3ff);
            if (nan ? (h2[i] & 0x7c00) != 0x7c00 || !(h2[i] & 0x3ff) : h2[i] != h[i])
                bad++, CHECK(0, "half 0x%04x round trip gives 0x%04x", i, h2[i]);
        }
    }
    TH_END();

    TH_BEGIN("float16 / bfloat16: rounding of floats (ties, subnormals, overflow)");
    {
        enum { NF = 200000 };
        float *f = malloc(sizeof(float) * NF);
        uint16_t *h = malloc(2 * NF), *b = malloc(2 * NF);
        uint64_t st = 12345;
        for (int i = 0; i < NF; i++) {
            st ^= st << 13; st ^= st >> 7; st ^= st << 17;
            uint32_t u = (uint32_t)st;
            if (i % 4 == 1) u = (u & 0x807fffffu) | (0x33000000u + (u % 30u) * 0x800000u);
            if (i % 4 == 2) u = (u & 0x8000e000u) | 0x38000000u | (u & 0x0fff1000u); /* ties */
            memcpy(&f[i], &u, 4);
        }
        f[0] = 65504.0f; f[1] = 65520.0f; f[2] = 65519.99f; f[3] = -1e30f; f[4] = 5.96e-8f;
        f[5] = 2.98e-8f; f[6] = 2.99e-8f; f[7] = INFINITY; f[8] = -0.0f; f[9] = NAN;
        tc_float_to_half(h, f, NF);
        tc_float_to_bfloat16(b, f, NF);
        int bad = 0;
        for (int i = 0; i < NF && bad < 5; i++) {
            _Float16 r = (_Float16)f[i];
            uint16_t want;
            memcpy(&want, &r, 2);
            int nan = f[i] != f[i];
            if (nan ? (h[i] & 0x7fff) <= 0x7c00 : h[i] != want)
                bad++, CHECK(0, "float %a -> half 0x%04x, want 0x%04x", (double)f[i], h[i], want);
            uint16_t wb = ref_bf16(f[i]);
            if (nan ? (b[i] & 0x7fff) <= 0x7f80 : b[i] != wb)
                bad++, CHECK(0, "float %a -> bfloat16 0x%04x, want 0x%04x", (double)f[i], b[i], wb);
        }
        float back[3];
        uint16_t bb[3] = {0x3f80, 0xc2f7, 0x0001};
        tc_bfloat16_to_float(back, bb, 3);
        CHECK(back[0] == 1.0f && back[1] == -123.5f && back[2] > 0 && back[2] < 1e-38f,
              "bfloat16 to float: %g %g %g", back[0], back[1], back[2]);
        free(f); free(h); free(b);
    }
    TH_END();

    TH_BEGIN("conv: layout, activation, has_residual validated");
    tc_conv_desc d = cdesc();
    d.layout = (tc_layout)2;
    EXPECT_ERR(plan_conv(&d), INV, "layout=2");
    d = cdesc(); d.activation = (tc_activation)7;
    EXPECT_ERR(plan_conv(&d), INV, "activation=7");
    d = cdesc(); d.activation = (tc_activation)-1;
    EXPECT_ERR(plan_conv(&d), INV, "activation=-1");
    d = cdesc(); d.has_residual = 2;
    EXPECT_ERR(plan_conv(&d), INV, "has_residual=2");
    d = cdesc(); d.dtype = TC_BFLOAT16; d.layout = TC_LAYOUT_CHANNELS_LAST;
    d.activation = TC_ACT_GELU; d.has_residual = 1;
    EXPECT_ERR(plan_conv(&d), TC_OK, "");
    TH_END();

    TH_BEGIN("conv: residual argument, staging report, channels-last shape, in place");
    {
        /* 2D, N2 C4 K6 8x8 3x3 pad 1, float16 channels-last, silu + residual */
        tc_conv_desc c;
        tc_conv_desc_init(&c);
        c.dtype = TC_FLOAT16; c.nspatial = 2; c.batch = 2; c.in_channels = 4;
        c.out_channels = 6; c.in_size[0] = c.in_size[1] = 8;
        c.kernel_size[0] = c.kernel_size[1] = 3; c.padding[0] = c.padding[1] = 1;
        c.has_bias = 1; c.layout = TC_LAYOUT_CHANNELS_LAST; c.activation = TC_ACT_SILU;
        c.has_residual = 1;
        enum { NX = 2 * 8 * 8 * 4, NW = 6 * 4 * 9, NY = 2 * 8 * 8 * 6 };
        float xf[NX], wf[NW], bf[6], rf[NY];
        uint16_t x[NX], w[NW], b[6], r[NY], y1[NY], y2[NY], y3[NY], yref[NY];
        for (int i = 0; i < NX; i++) xf[i] = 0.01f * (float)((i * 37) % 101) - 0.5f;
        for (int i = 0; i < NW; i++) wf[i] = 0.02f * (float)((i * 13) % 51) - 0.5f;
        for (int i = 0; i < 6; i++) bf[i] = 0.1f * (float)i - 0.2f;
        for (int i = 0; i < NY; i++) rf[i] = 0.03f * (float)((i * 7) % 31) - 0.45f;
        tc_float_to_half(x, xf, NX); tc_float_to_half(w, wf, NW);
        tc_float_to_half(b, bf, 6); tc_float_to_half(r, rf, NY);
        /* every conv algorithm usable here, native or staged */
        const char *algos[64];
        int na = 0;
        algos[na++] = "ref.conv.loops";
        for (int i = 0; i < tc_algorithm_count() && na < 63; i++) {
            tc_algorithm_info inf;
            if (tc_algorithm_get(i, &inf) == TC_OK && (inf.ops & TC_OP_CONV) &&
                inf.available && strcmp(inf.name, "ref.conv.loops") != 0)
                algos[na++] = inf.name;
        }
        algos[na] = NULL;
        for (int dti = 0; dti < 2; dti++)
        for (int a = 0; algos[a]; a++) {
            c.dtype = dti ? TC_BFLOAT16 : TC_FLOAT16;
            if (dti) { /* the same values as bfloat16 */
                tc_float_to_bfloat16(x, xf, NX); tc_float_to_bfloat16(w, wf, NW);
                tc_float_to_bfloat16(b, bf, 6); tc_float_to_bfloat16(r, rf, NY);
            }
            tc_plan *pl = NULL;
            tc_plan_options o;
            tc_plan_options_init(&o);
            o.algorithm = algos[a];
            tc_status pst = tc_plan_conv(&pl, NULL, &c, &o);
            if (pst == TC_ERR_NOT_APPLICABLE) continue; /* e.g. depthwise only */
            if (!CHECK(pst == TC_OK, "%s: %s", algos[a], tc_last_error())) continue;
            const char *stg = tc_plan_staging(pl);
            if (a == 0) CHECK(stg[0] == 0, "ref.conv.loops stages: '%s'", stg);
            else if (stg[0])
                CHECK(strstr(stg, dti ? "bfloat16->float32" : "float16->float32") &&
                      strstr(stg, "channels_last") && strstr(stg, "silu + residual"),
                      "%s staging '%s'", algos[a], stg);
            int nd;
            int64_t sh[TC_MAX_DIMS];
            CHECK(tc_plan_output_shape(pl, &nd, sh) == TC_OK && nd == 4 && sh[0] == 2 &&
                  sh[1] == 8 && sh[2] == 8 && sh[3] == 6, "channels-last output shape");
            EXPECT_ERR(tc_execute_conv(pl, y1, x, w, b, NULL), INV, "has_residual=1");
            EXPECT_ERR(tc_execute_conv_residual(pl, y1, x, w, b, NULL, NULL), INV, "residual");
            CHECK(tc_execute_conv_residual(pl, y1, x, w, b, r, NULL) == TC_OK, "%s",
                  tc_last_error());
            /* in place: y starts as the residual */
            memcpy(y2, r, sizeof r);
            CHECK(tc_execute_conv_residual(pl, y2, x, w, b, y2, NULL) == TC_OK, "%s",
                  tc_last_error());
            CHECK(memcmp(y1, y2, sizeof y1) == 0, "%s %s: in-place residual differs",
                  algos[a], dti ? "bf16" : "f16");
            if (a == 0) memcpy(yref, y1, sizeof y1);
            else { /* every algorithm near the reference (same bound as test_solvers) */
                int far = 0;
                for (int i = 0; i < NY; i++) {
                    float g1, g0;
                    if (dti) { tc_bfloat16_to_float(&g1, &y1[i], 1); tc_bfloat16_to_float(&g0, &yref[i], 1); }
                    else { tc_half_to_float(&g1, &y1[i], 1); tc_half_to_float(&g0, &yref[i], 1); }
                    far += !(fabsf(g1 - g0) <= (dti ? 0.03f : 0.004f) * (1 + fabsf(g0)));
                }
                CHECK(far == 0, "%s %s: %d of %d outputs far from ref.conv.loops", algos[a],
                      dti ? "bf16" : "f16", far, NY);
            }
            /* plan-held weights */
            CHECK(tc_plan_conv_set_weights(pl, w, b) == TC_OK, "%s", tc_last_error());
            CHECK(tc_execute_conv_residual(pl, y3, x, NULL, NULL, r, NULL) == TC_OK, "%s",
                  tc_last_error());
            CHECK(memcmp(y1, y3, sizeof y1) == 0, "%s: plan-held weights differ", algos[a]);
            tc_plan_destroy(pl);
        }
        /* a plan without residual refuses one */
        tc_plan *pl = NULL;
        c.has_residual = 0;
        c.dtype = TC_FLOAT16;
        CHECK(tc_plan_conv(&pl, NULL, &c, NULL) == TC_OK, "%s", tc_last_error());
        EXPECT_ERR(tc_execute_conv_residual(pl, y1, x, w, b, r, NULL), INV, "has_residual=0");
        tc_plan_destroy(pl);
    }
    TH_END();
}

/* TC_PLAN_DIRECT: no algorithm whose transforms add rounding, by ESTIMATE,
 * MEASURE or by name; without the flag the same problems take one (so the
 * check can fail). */
static int transform_name(const char *n) {
    static const char *const fams[] = {"winograd", "fft", "strassen", "separable", "lowrank",
                                       "3xtf32"};
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++)
        if (strstr(n, fams[i])) return 1;
    return 0;
}

static void test_plan_direct(void) {
    TH_BEGIN("TC_PLAN_DIRECT leaves out Winograd, FFT, Strassen, separable");
    static float fmask[31 * 31], gmask[15 * 15];
    for (int i = 0; i < 31 * 31; i++) fmask[i] = 0.01f * (float)(i % 17) - 0.08f;
    for (int i = 0; i < 15; i++)
        for (int j = 0; j < 15; j++) /* rank 1: separable */
            gmask[i * 15 + j] = (float)((1 + i % 5) * (2 + j % 3)) * 0.01f;
    int took_transform = 0;
    for (int k = 0; k < 6; k++) {
        for (int fl = 0; fl < 3; fl++) {
            unsigned flags = fl == 0 ? 0u : fl == 1 ? TC_PLAN_DIRECT : TC_PLAN_DIRECT | TC_PLAN_MEASURE;
            tc_plan_options o;
            tc_plan_options_init(&o);
            o.flags = flags;
            tc_plan *pl = NULL;
            tc_status st;
            if (k < 3) { /* 3x3 stride-1 layers: Winograd by default */
                tc_conv_desc c;
                tc_conv_desc_init(&c);
                c.dtype = k == 2 ? TC_BFLOAT16 : TC_FLOAT32;
                c.nspatial = k == 1 ? 3 : 2;
                c.batch = 1;
                c.in_channels = c.out_channels = 64;
                for (int a = 0; a < c.nspatial; a++) {
                    c.in_size[a] = k == 1 ? 12 : 28;
                    c.kernel_size[a] = 3;
                    c.padding[a] = 1;
                }
                c.padding_kind = TC_PADDING_EXPLICIT;
                if (fl == 2 && k != 0) continue; /* MEASURE once is enough */
                st = tc_plan_conv(&pl, NULL, &c, &o);
            } else if (k < 5) { /* a 31x31 mask (FFT), a separable 15x15 one */
                tc_filter_desc d;
                tc_filter_desc_init(&d);
                d.dtype = TC_FLOAT32;
                d.ndim = d.nspatial = 2;
                d.shape[0] = d.shape[1] = 384;
                d.mask_shape[0] = d.mask_shape[1] = k == 3 ? 31 : 15;
                if (fl == 2) continue;
                st = tc_plan_filter(&pl, NULL, &d, k == 3 ? fmask : gmask, &o);
            } else { /* a GEMM large enough for Strassen to be a candidate */
                tc_gemm_desc g;
                tc_gemm_desc_init(&g);
                g.m = g.n = g.k = 2048;
                if (fl == 2) continue;
                st = tc_plan_gemm(&pl, NULL, &g, &o);
            }
            CHECK(st == TC_OK, "problem %d flags 0x%x: %s", k, flags, tc_last_error());
            if (st != TC_OK) continue;
            const char *name = tc_plan_algorithm(pl);
            if (flags & TC_PLAN_DIRECT)
                CHECK(!transform_name(name), "problem %d flags 0x%x planned %s", k, flags, name);
            else
                took_transform += transform_name(name);
            tc_plan_destroy(pl);
        }
    }
    CHECK(took_transform >= 3, "without TC_PLAN_DIRECT only %d of the problems took a transform "
          "algorithm (the check would not see the flag ignored)", took_transform);
    /* forced by name with the flag: refused, the reason names the flag */
    tc_conv_desc c = cdesc();
    c.in_channels = c.out_channels = 16;
    c.groups = 1;
    c.kernel_size[0] = c.kernel_size[1] = 3;
    c.stride[0] = c.stride[1] = 1;
    c.dilation[0] = c.dilation[1] = 1;
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = "ref.conv.loops";
    o.flags = TC_PLAN_DIRECT;
    tc_plan *pl = NULL;
    CHECK(tc_plan_conv(&pl, NULL, &c, &o) == TC_OK, "ref.conv.loops with TC_PLAN_DIRECT: %s",
          tc_last_error());
    tc_plan_destroy(pl);
    int forced = 0;
    for (int i = 0; i < tc_algorithm_count(); i++) {
        tc_algorithm_info info;
        if (tc_algorithm_get(i, &info) != TC_OK || !(info.ops & TC_OP_CONV) || !info.available ||
            !transform_name(info.name) || info.backend != TC_BACKEND_CPU)
            continue;
        o.algorithm = info.name;
        pl = NULL;
        tc_status st = tc_plan_conv(&pl, NULL, &c, &o);
        CHECK(st == TC_ERR_NOT_APPLICABLE && strstr(tc_last_error(), "TC_PLAN_DIRECT"),
              "%s forced with TC_PLAN_DIRECT: status %d, '%s'", info.name, (int)st, tc_last_error());
        if (st == TC_OK) tc_plan_destroy(pl);
        forced++;
    }
    CHECK(forced >= 3, "only %d transform conv algorithms checked", forced);
    TH_END();
}

int main(int argc, char **argv) {
    th_init(argc, argv);
    /* hermetic: no wisdom file of the user's changes what MEASURE or
     * WISDOM_ONLY planning does here */
    setenv("TILECONV_WISDOM", "", 1);
    for (int i = 0; i < 1024; i++) g_mask[i] = 0.125f * (float)(i % 13) - 0.7f;
    test_machine(); /* first: it forks children that must start uninitialised */
    test_status_strings();
    test_last_error_thread_local();
    test_filter_fields();
    test_conv_fields();
    test_conv_hostile_geometry();
    test_conv_set_weights();
    test_conv_weight_layout();
    test_gemm_fields();
    test_options_and_algorithms();
    test_plan_direct();
    test_plan_mask_at_execute();
    test_backends();
    test_context();
    test_execute_args();
    test_hugepage_switch();
    test_cuda_time();
    test_names();
    test_half();
    return th_finish();
}
