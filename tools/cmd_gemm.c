/*
 * cmd_gemm.c - `tileconv gemm --m M --n N --k K ...`: times GEMM on seeded
 * random matrices. Its output is the summary line (always printed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "run.h"
#include "tools.h"
#include "core/half.h" /* tc__store_d */

static const char gemm_help[] =
    "usage: tileconv gemm --m M --n N --k K [options]\n"
    "\n"
    "Times C = op(A) op(B) (row-major, op(A) M x K, op(B) K x N) on random\n"
    "matrices with values in [-1, 1) from a fixed seed, and prints the\n"
    "summary line (algorithm, backend, median_ms, GFLOP/s ...) to stderr.\n"
    "\n"
    "Options:\n"
    "  --m M, --n N, --k K   matrix sizes (required, >= 1)\n"
    "  --dtype T             float32 (default), float64, float16 or bfloat16\n"
    "  --transa, --transb    A is stored K x M / B is stored N x K\n"
    "  --seed S              random seed (default 1)\n"
    TOOL_RUN_HELP;

typedef struct gemm_exec {
    void *c;
    const void *a, *b;
} gemm_exec;

static tc_status exec_gemm(const tc_plan *plan, const void *arg, void *ws) {
    const gemm_exec *e = arg;
    return tc_execute_gemm(plan, e->c, e->a, e->b, ws);
}

/* splitmix64: small, seedable, the same on every platform. */
static uint64_t next_u64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void *random_matrix(tc_dtype dt, int64_t n, uint64_t *seed) {
    void *p = tool_alloc((size_t)n * tc_dtype_size(dt));
    if (!p) return NULL;
    for (int64_t i = 0; i < n; i++) {
        double v = (double)(next_u64(seed) >> 11) * 0x1.0p-52 - 1.0;
        tc__store_d(p, i, dt, v);
    }
    return p;
}

int tool_cmd_gemm(int argc, char **argv) {
    const int64_t big = INT64_C(1) << 31;
    tool_run run;
    tool_args a;
    tc_gemm_desc d;
    tc_plan *plan = NULL;
    void *A = NULL, *B = NULL, *C = NULL;
    const char *pos, *v;
    int64_t seed = 1;
    int kind, rc;
    tc_gemm_desc_init(&d);
    d.m = d.n = d.k = 0;
    tool_run_init(&run, "gemm");
    run.always_report = 1;
    tool_args_init(&a, "gemm", argc, argv);
    while ((kind = tool_args_next(&a, &pos)) != ARGS_END) {
        if (kind == ARGS_POSITIONAL)
            return tool_usage_error("gemm", "unexpected argument '%s'", pos);
        if (tool_args_is(&a, "--help")) {
            fputs(gemm_help, stdout);
            return TOOL_OK;
        }
        if ((rc = tool_run_option(&run, &a)) >= 0) {
            if (rc) return rc;
            continue;
        }
        if (tool_args_is(&a, "--transa") || tool_args_is(&a, "--transb")) {
            if (tool_args_flag(&a)) return TOOL_USAGE;
            *(tool_args_is(&a, "--transa") ? &d.trans_a : &d.trans_b) = 1;
            continue;
        }
        static const char *const value_opts[] = {"--m", "--n", "--k", "--seed", "--dtype",
                                                 NULL};
        if (!tool_args_in(&a, value_opts)) return tool_args_unknown(&a);
        if (tool_args_value(&a, &v)) return TOOL_USAGE;
        rc = 0;
        if (tool_args_is(&a, "--m")) rc = tool_parse_i64(&a, v, 1, big, &d.m);
        else if (tool_args_is(&a, "--n")) rc = tool_parse_i64(&a, v, 1, big, &d.n);
        else if (tool_args_is(&a, "--k")) rc = tool_parse_i64(&a, v, 1, big, &d.k);
        else if (tool_args_is(&a, "--seed")) rc = tool_parse_i64(&a, v, 0, INT64_MAX, &seed);
        else if (tool_args_is(&a, "--dtype")) {
            if (tc_dtype_parse(v, &d.dtype) != TC_OK)
                rc = tool_usage_error("gemm", "unknown dtype '%s' (float32, float64, float16, "
                                      "bfloat16)", v);
        } else {
            rc = tool_args_unknown(&a);
        }
        if (rc) return rc;
    }
    if (!d.m || !d.n || !d.k) return tool_usage_error("gemm", "--m, --n and --k are required");
    int64_t na, nb, nc;
    if (__builtin_mul_overflow(d.m, d.k, &na) || __builtin_mul_overflow(d.k, d.n, &nb) ||
        __builtin_mul_overflow(d.m, d.n, &nc) || na > (INT64_C(1) << 40) ||
        nb > (INT64_C(1) << 40) || nc > (INT64_C(1) << 40))
        return tool_error("gemm: matrices of %lldx%lldx%lld are too large",
                          (long long)d.m, (long long)d.n, (long long)d.k);

    rc = TOOL_FAIL;
    uint64_t s = (uint64_t)seed;
    A = random_matrix(d.dtype, na, &s);
    B = random_matrix(d.dtype, nb, &s);
    C = random_matrix(d.dtype, nc, &s);
    if (!A || !B || !C) {
        tool_error("gemm: out of memory for the matrices");
        goto done;
    }
    if (tool_run_begin(&run)) goto done;
    tc_plan_options po;
    tool_run_plan_options(&run, &po);
    tc_status st = tc_plan_gemm(&plan, run.ctx, &d, &po);
    if (st != TC_OK) {
        tool_lib_error(st, "gemm: cannot plan");
        goto done;
    }
    gemm_exec e = {C, A, B};
    if (tool_run_execute(&run, plan, exec_gemm, &e)) goto done;
    int64_t shape[3] = {d.m, d.n, d.k};
    tool_stats st_ = {.dtype = d.dtype == TC_FLOAT64 ? "float64" : "float32",
                      .ndim = 3, .shape = shape, .device_x = A, .device_w = B};
    if (tool_run_report(&run, plan, &st_) || tool_run_commit(&run)) goto done;
    rc = TOOL_OK;
done:
    tool_run_end(&run);
    tc_plan_destroy(plan);
    free(A);
    free(B);
    free(C);
    return rc;
}
