/*
 * test_solvers.c - the shared solver test: every registered solver x a
 * table of shapes x modes x dtypes, compared with the reference solvers
 * (ref.conv.loops, ref.gemm.loops), which are themselves checked against independent
 * models of scipy / torch / BLAS (models.h).
 *
 * For each problem instance:
 *   - inputs are seeded random values, never zero; holes of strided input
 *     buffers hold NaN, so reading a wrong element shows;
 *   - the reference runs on dense copies; a second run on absolute values
 *     gives each output element's magnitude sum |w||x| for the tolerance;
 *   - every solver that implements the operation is forced by name. Not
 *     available / not applicable counts as a skip with the reason printed,
 *     never as a pass;
 *   - each plan executes twice, with a NULL workspace and with a caller
 *     workspace of exactly tc_plan_workspace_size bytes that ends at a
 *     PROT_NONE page; outputs are pre-filled with NaN and guarded by
 *     sentinels (also in the holes of strided outputs); the two results
 *     must be bitwise equal and the inputs unchanged;
 *   - flagged instances also plan with ESTIMATE and MEASURE, and execute
 *     one plan from 4 threads at once;
 *   - every conv instance runs twice, with the weights K x C/G x mask and
 *     K x mask x C/G (weight_layout channels-last; the model's are the
 *     former).
 *
 * Environment: TILECONV_TEST_SEED, TILECONV_TEST_QUICK, TILECONV_TEST_VERBOSE (harness.h);
 * TILECONV_TEST_ALGO=substr[,substr] and TILECONV_TEST_OPS=filter,conv,gemm narrow the
 * run down (see selected()).
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "harness.h"
#include "models.h"
#include "testbuf.h"
#include "core/internal.h" /* tc__cpu_detect */
#include "cpu/conv_bf16.h"  /* tc__bf16_dw_row */

/* ------------------------------------------------------------------ */
/* Registered solvers                                                   */
/* ------------------------------------------------------------------ */
typedef struct solver {
    tc_algorithm_info info;
    long pass, fail, skip;
    int skips_printed;
    char skip_reason[320];
} solver;

static solver g_sol[128];
static int g_nsol;
static tc_context *g_ctx[4]; /* index = thread count 1..3 */

static void solvers_load(void) {
    int n = tc_algorithm_count();
    printf("registered algorithms: %d\n", n);
    for (int i = 0; i < n && g_nsol < 128; i++) {
        solver *s = &g_sol[g_nsol];
        memset(s, 0, sizeof *s);
        if (tc_algorithm_get(i, &s->info) != TC_OK) {
            printf("  tc_algorithm_get(%d) failed: %s\n", i, tc_last_error());
            continue;
        }
        printf("  %-24s backend=%s ops=%s%s%s available=%d\n", s->info.name,
               tc_backend_name(s->info.backend),
               (s->info.ops & TC_OP_FILTER) ? "filter," : "",
               (s->info.ops & TC_OP_CONV) ? "conv," : "",
               (s->info.ops & TC_OP_GEMM) ? "gemm" : "", s->info.available);
        g_nsol++;
    }
}

/* Per-algorithm tolerance (see tb_compare): FFT, Winograd and Strassen
 * transform the data and lose accuracy spread over the whole output; the
 * low-rank filter sums r separable passes whose terms (|u_r| |v_r| |x|) can
 * exceed the mask's own magnitude sum |w| |x| and cancel (seed 783796307:
 * a rank-2 9x7 mask, 3.6e-5 of the magnitude on one output). */
static const char *dt_label(tc_dtype dt) {
    return dt == TC_FLOAT32 ? "f32" : dt == TC_FLOAT64 ? "f64" : dt == TC_FLOAT16 ? "f16" : "bf16";
}

/* float16 / bfloat16: products summed in float32, one rounding to the
 * dtype at the end (docs/semantics.md): about two units in the last place
 * of the output's magnitude (2^-11 and 2^-8 relative), plus a global term
 * for activations whose value is not small where their input is (sigmoid
 * near 0); the staged transform solvers add their float32 error. */
static tb_tol tol_for(const char *name, tc_dtype dt) {
    int loose = name && (strstr(name, "fft") || strstr(name, "winograd") ||
                         strstr(name, "strassen") || strstr(name, "lowrank"));
    if (dt == TC_FLOAT16) return (tb_tol){2e-3, loose ? 6e-4 : 5e-4, 0};
    if (dt == TC_BFLOAT16) return (tb_tol){1.6e-2, 4e-3, 0};
    if (dt == TC_FLOAT32)
        return loose ? (tb_tol){5e-4, 5e-5, 0} : (tb_tol){2e-5, 0, 0};
    return loose ? (tb_tol){1e-9, 1e-10, 0} : (tb_tol){1e-12, 0, 0};
}

/* ------------------------------------------------------------------ */
/* One problem instance, whatever the operation                         */
/* ------------------------------------------------------------------ */
typedef struct inst {
    unsigned op;
    tc_dtype dt;
    char label[328]; /* the longest conv label the format can make (~308) and " w=cl" */
    int threads;
    int extra; /* > 0: also MEASURE, and `extra` executes from 4 threads */
    tc_filter_desc fd;
    tc_conv_desc cd;
    tc_gemm_desc gd;
    const void *mask;           /* filter */
    int mexec;                  /* filter: plan with TC_PLAN_MASK_AT_EXECUTE (no
                                   mask), execute with tc_execute_filter_mask */
    const void *x, *w, *bias;   /* filter / conv (x may be strided) */
    const void *res;            /* conv with has_residual */
    const void *a, *b;          /* gemm */
    const double *c_init;       /* gemm, m x n logical, when beta != 0 */
    /* output: layout and expected values */
    int out_nd;
    int64_t out_shape[TC_MAX_DIMS];
    tb_view out_view;
    const double *ref, *mag;
    double scale;               /* conv: max|x| * max_k sum|w_k| (tb_tol) */
    /* inputs to check for modification: buffers and their saved copies */
    const void *in_buf[4];
    void *in_copy[4];
    size_t in_bytes[4];
    int n_in;
} inst;

static void inst_save_input(inst *I, const void *buf, size_t bytes) {
    I->in_buf[I->n_in] = buf;
    I->in_copy[I->n_in] = malloc(bytes ? bytes : 1);
    memcpy(I->in_copy[I->n_in], buf, bytes);
    I->in_bytes[I->n_in] = bytes;
    I->n_in++;
}
static int inst_inputs_unchanged(const inst *I) {
    for (int i = 0; i < I->n_in; i++)
        if (memcmp(I->in_buf[i], I->in_copy[i], I->in_bytes[i]) != 0) return 0;
    return 1;
}
static void inst_free_saved(inst *I) {
    for (int i = 0; i < I->n_in; i++) free(I->in_copy[i]);
    I->n_in = 0;
}

static tc_status inst_plan(const inst *I, tc_context *ctx, const char *algo,
                           unsigned flags, tc_plan **pl) {
    tc_plan_options opt;
    tc_plan_options_init(&opt);
    opt.algorithm = algo;
    opt.flags = flags | (I->mexec ? TC_PLAN_MASK_AT_EXECUTE : 0u);
    switch (I->op) {
    case TC_OP_FILTER: return tc_plan_filter(pl, ctx, &I->fd, I->mexec ? NULL : I->mask, &opt);
    case TC_OP_CONV: return tc_plan_conv(pl, ctx, &I->cd, &opt);
    default: return tc_plan_gemm(pl, ctx, &I->gd, &opt);
    }
}

static tc_status inst_exec(const inst *I, const tc_plan *pl, void *y, void *ws) {
    switch (I->op) {
    case TC_OP_FILTER:
        return I->mexec ? tc_execute_filter_mask(pl, y, I->x, I->mask, ws)
                        : tc_execute_filter(pl, y, I->x, ws);
    case TC_OP_CONV:
        return I->res ? tc_execute_conv_residual(pl, y, I->x, I->w, I->bias, I->res, ws)
                      : tc_execute_conv(pl, y, I->x, I->w, I->bias, ws);
    default: return tc_execute_gemm(pl, y, I->a, I->b, ws);
    }
}

static void inst_out_init(const inst *I, tb_out *o) {
    memset(o, 0, sizeof *o);
    o->v = I->out_view;
    o->dt = I->dt;
    o->base = tb_calloc(o->v.span + 2 * TB_GUARD, I->dt);
    o->ptr = tb_elem(o->base, TB_GUARD + o->v.off0, I->dt);
    o->is_out = calloc((size_t)o->v.span, 1);
    for (int64_t e = 0; e < o->v.count; e++) o->is_out[tb_view_at(&o->v, e)] = 1;
}
/* NaN in every output element, sentinels elsewhere; GEMM with beta != 0
 * then gets its C values. */
static void inst_out_reset(const inst *I, tb_out *o) {
    tb_out_reset(o);
    if (I->c_init)
        for (int64_t e = 0; e < o->v.count; e++)
            tb_st(o->base, TB_GUARD + tb_view_at(&o->v, e), I->dt, I->c_init[e]);
}

/* Checks guards and values of one executed output; returns 1 when good. */
static int check_output(const inst *I, const tb_out *o, double *got,
                        tb_tol tol, const char *what) {
    int64_t first;
    int64_t bad = tb_out_guard_errors(o, &first);
    int ok = CHECK(bad == 0, "%s: %lld guard/hole elements overwritten (first "
                   "at buffer offset %lld)", what, (long long)bad, (long long)first);
    tb_out_gather(o, got);
    tol.scale = I->scale;
    tb_cmp c = tb_compare(got, I->ref, I->mag, o->v.count, tol);
    if (c.nbad) {
        char idx[128];
        tb_index_str(idx, sizeof idx, c.first, I->out_shape, I->out_nd);
        CHECK(c.nbad == 0, "%s: %lld of %lld elements off; first [%s] got %.17g "
              "want %.17g (mag %.3g); max normalised error %.3g (rtol %.1g)",
              what, (long long)c.nbad, (long long)o->v.count, idx, got[c.first],
              I->ref[c.first], I->mag[c.first], c.max_norm_err, tol.rtol);
        ok = 0;
    }
    return ok;
}

/* ---- executing one plan from 4 threads at once ----
 * Each thread executes the plan `reps` times into its own guarded output
 * (half of them with their own workspace, half with NULL) and compares
 * every result bitwise with the serial one. */
typedef struct conc_arg {
    const inst *I;
    const tc_plan *pl;
    const double *want;
    int reps, use_ws;
    tb_out out;
    tb_ws ws;
    tc_status st;
    int mismatches, guard_errors, ws_errors;
} conc_arg;

static void *conc_main(void *p) {
    conc_arg *c = p;
    double *got = tb_dcalloc(c->I->out_view.count);
    for (int r = 0; r < c->reps; r++) {
        inst_out_reset(c->I, &c->out);
        tc_status st = inst_exec(c->I, c->pl, c->out.ptr, c->use_ws ? c->ws.ptr : NULL);
        if (st != TC_OK) { c->st = st; break; }
        int64_t first;
        c->guard_errors += tb_out_guard_errors(&c->out, &first) != 0;
        tb_out_gather(&c->out, got);
        c->mismatches += memcmp(got, c->want, sizeof(double) *
                                (size_t)c->I->out_view.count) != 0;
        if (c->use_ws) c->ws_errors += tb_ws_errors(&c->ws) != 0;
    }
    free(got);
    return NULL;
}

static void check_concurrent(const inst *I, const tc_plan *pl, const double *want,
                             int reps) {
    enum { NT = 4 };
    conc_arg args[NT];
    pthread_t tid[NT];
    size_t wsz = tc_plan_workspace_size(pl);
    for (int t = 0; t < NT; t++) {
        memset(&args[t], 0, sizeof args[t]);
        args[t].I = I;
        args[t].pl = pl;
        args[t].want = want;
        args[t].reps = reps;
        args[t].use_ws = t % 2;
        inst_out_init(I, &args[t].out);
        if (args[t].use_ws && !tb_ws_alloc(&args[t].ws, wsz)) args[t].use_ws = 0;
    }
    int started[NT];
    for (int t = 0; t < NT; t++)
        started[t] = pthread_create(&tid[t], NULL, conc_main, &args[t]) == 0;
    for (int t = 0; t < NT; t++) {
        if (started[t]) pthread_join(tid[t], NULL);
        else conc_main(&args[t]);
    }
    for (int t = 0; t < NT; t++) {
        CHECK_STATUS(args[t].st, TC_OK);
        CHECK(args[t].guard_errors == 0, "concurrent thread %d overwrote a guard "
              "in %d of %d runs", t, args[t].guard_errors, reps);
        CHECK(args[t].mismatches == 0, "concurrent thread %d: %d of %d results "
              "differ from the serial one", t, args[t].mismatches, reps);
        CHECK(args[t].ws_errors == 0, "thread %d wrote outside its workspace", t);
        tb_out_free(&args[t].out);
        tb_ws_free(&args[t].ws);
    }
}

/* Skip accounting: print the first few reasons per solver, count all. */
static void solver_skip(solver *s, const char *why) {
    s->skip++;
    if (s->skips_printed < 3 || th_g.verbose) {
        s->skips_printed++;
        TH_SKIP("%s", why);
    } else {
        th_skip_silent();
    }
    snprintf(s->skip_reason, sizeof s->skip_reason, "%s", why);
}

static const char *op_name(unsigned op) {
    return op == TC_OP_FILTER ? "filter" : op == TC_OP_CONV ? "conv" : "gemm";
}

/* Plans and checks one algorithm (algo NULL = the planner's choice with
 * the given flags). s is NULL for the planner's choice. */
static void run_one(const inst *I, solver *s, const char *algo, unsigned flags) {
    const char *shown = algo ? algo : (flags & TC_PLAN_MEASURE) ? "(measure)" : "(estimate)";
    TH_BEGIN("%s %s [%s%s]", op_name(I->op), I->label, shown, I->mexec ? ", mask at execute" : "");
    tc_plan *pl = NULL;
    tb_out o1, o2;
    memset(&o1, 0, sizeof o1);
    memset(&o2, 0, sizeof o2);
    tb_ws ws;
    memset(&ws, 0, sizeof ws);
    double *g1 = NULL, *g2 = NULL;
    tc_status st = inst_plan(I, g_ctx[I->threads], algo, flags, &pl);
    if (st == TC_ERR_NOT_APPLICABLE || st == TC_ERR_UNSUPPORTED ||
        st == TC_ERR_NO_DEVICE) {
        char why[300];
        snprintf(why, sizeof why, "%s: %s", tc_status_string(st), tc_last_error());
        if (s) solver_skip(s, why);
        else CHECK_STATUS(st, TC_OK); /* the planner must find something */
        goto done;
    }
    if (!CHECK_STATUS(st, TC_OK)) goto done;
    if (!inst_inputs_unchanged(I)) CHECK(0, "planning modified a caller array");
    const char *chosen = tc_plan_algorithm(pl);
    if (algo) CHECK(strcmp(chosen, algo) == 0, "plan reports '%s'", chosen);
    if (th_g.verbose && !algo) printf("  planner chose %s\n", chosen);
    int nd = 0;
    int64_t shape[TC_MAX_DIMS];
    CHECK_STATUS(tc_plan_output_shape(pl, &nd, shape), TC_OK);
    if (CHECK(nd == I->out_nd, "output rank %d, expected %d", nd, I->out_nd))
        for (int i = 0; i < nd; i++)
            CHECK(shape[i] == I->out_shape[i], "output shape[%d]=%lld, expected %lld",
                  i, (long long)shape[i], (long long)I->out_shape[i]);
    CHECK(tc_plan_flops(pl) > 0, "flops %g", tc_plan_flops(pl));
    tb_tol tol = tol_for(chosen, I->dt);

    /* run 1: caller workspace of exactly the reported size, ending at a
     * PROT_NONE page (first, so an overrun faults at once, here) */
    size_t wsz = tc_plan_workspace_size(pl);
    if (!CHECK(tb_ws_alloc(&ws, wsz), "mmap of %zu bytes failed", wsz)) goto done;
    inst_out_init(I, &o1);
    inst_out_reset(I, &o1);
    g1 = tb_dcalloc(I->out_view.count);
    st = inst_exec(I, pl, o1.ptr, ws.ptr);
    if (!CHECK_STATUS(st, TC_OK)) goto done;
    CHECK(tb_ws_errors(&ws) == 0, "wrote outside the %zu-byte workspace", wsz);
    int good = check_output(I, &o1, g1, tol, "exact workspace");

    /* run 2: NULL workspace (the library allocates) */
    inst_out_init(I, &o2);
    inst_out_reset(I, &o2);
    g2 = tb_dcalloc(I->out_view.count);
    st = inst_exec(I, pl, o2.ptr, NULL);
    if (!CHECK_STATUS(st, TC_OK)) goto done;
    if (!check_output(I, &o2, g2, tol, "NULL workspace")) good = 0;
    if (good)
        CHECK(memcmp(g1, g2, sizeof(double) * (size_t)I->out_view.count) == 0,
              "two executes of one plan differ (not deterministic)");
    CHECK(inst_inputs_unchanged(I), "execute modified an input array");
    if (good && I->extra) check_concurrent(I, pl, g1, I->extra);
done:
    tc_plan_destroy(pl);
    tb_out_free(&o1);
    tb_out_free(&o2);
    tb_ws_free(&ws);
    free(g1);
    free(g2);
    int was_skipped = th_g.case_skipped && !th_g.case_failed;
    int ok = TH_END();
    if (s && !was_skipped) {
        if (ok) s->pass++;
        else s->fail++;
    }
}

/* TILECONV_TEST_ALGO=a,b: only algorithms whose name contains one of these
 * substrings (and no planner runs); TILECONV_TEST_OPS=filter,conv,gemm: only
 * these operations. For narrowing down a failure; unset = everything. */
static int selected(int knob, const char *name) {
    const char *v = tc__knob_get(knob);
    if (!v || !v[0]) return 1;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (strstr(name, t)) return 1;
    return 0;
}

/* Whether the filter instance plans with TC_PLAN_MASK_AT_EXECUTE (algo
 * NULL: the planner's choice). An algorithm that takes the problem with
 * its mask at plan time and refuses the flag must name it; the planner
 * refuses only float16 / bfloat16 and the swapped valid case, naming it. */
static int mexec_plans(const inst *M, const char *algo) {
    tc_plan *pl = NULL;
    tc_status st = inst_plan(M, g_ctx[M->threads], algo, 0, &pl);
    tc_plan_destroy(pl);
    if (st == TC_OK) return 1;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", tc_last_error());
    if (!algo) {
        CHECK(st == TC_ERR_UNSUPPORTED && strstr(msg, "TC_PLAN_MASK_AT_EXECUTE") &&
                  (tc_dtype_size(M->dt) == 2 || strstr(msg, "swapped")),
              "%s: the planner refused TC_PLAN_MASK_AT_EXECUTE: %s: %s", M->label,
              tc_status_string(st), msg);
        return 0;
    }
    inst O = *M;
    O.mexec = 0;
    st = inst_plan(&O, g_ctx[O.threads], algo, 0, &pl);
    tc_plan_destroy(pl);
    if (st == TC_OK)
        CHECK(strstr(msg, "TC_PLAN_MASK_AT_EXECUTE") != NULL,
              "%s takes %s with its mask at plan time, refuses it with "
              "TC_PLAN_MASK_AT_EXECUTE without naming the flag: %s", algo, M->label, msg);
    return 0;
}

static void run_all_solvers(const inst *I) {
    for (int i = 0; i < g_nsol; i++)
        if ((g_sol[i].info.ops & I->op) && selected(TC__KNOB_TEST_ALGO, g_sol[i].info.name))
            run_one(I, &g_sol[i], g_sol[i].info.name, 0);
    /* the same filter with the mask given to each execute instead of the
     * plan (TC_PLAN_MASK_AT_EXECUTE): every algorithm that takes it */
    inst M = *I;
    M.mexec = 1;
    const int mx = I->op == TC_OP_FILTER && mexec_plans(&M, NULL);
    for (int i = 0; mx && i < g_nsol; i++)
        if ((g_sol[i].info.ops & I->op) && selected(TC__KNOB_TEST_ALGO, g_sol[i].info.name) &&
            mexec_plans(&M, g_sol[i].info.name))
            run_one(&M, &g_sol[i], g_sol[i].info.name, 0);
    const char *only = tc__knob_get(TC__KNOB_TEST_ALGO);
    if (only && only[0]) return;
    run_one(I, NULL, NULL, TC_PLAN_ESTIMATE);
    if (I->extra) run_one(I, NULL, NULL, TC_PLAN_MEASURE);
    if (mx) {
        run_one(&M, NULL, NULL, TC_PLAN_ESTIMATE);
        if (I->extra) run_one(&M, NULL, NULL, TC_PLAN_MEASURE);
    }
}

/* Runs the reference (forced) on the dense description with the given
 * arrays; writes the logical output as doubles. Returns 1 on success. */
static int run_reference(const inst *R, double *out, const char *what) {
    tc_plan *pl = NULL;
    tc_status st = inst_plan(R, g_ctx[R->threads],
                             R->op == TC_OP_GEMM ? "ref.gemm.loops" : "ref.conv.loops", 0, &pl);
    if (!CHECK_STATUS(st, TC_OK)) return 0;
    tb_out o;
    inst_out_init(R, &o);
    inst_out_reset(R, &o);
    st = inst_exec(R, pl, o.ptr, NULL);
    int ok = CHECK_STATUS(st, TC_OK);
    int64_t first;
    ok &= CHECK(tb_out_guard_errors(&o, &first) == 0, "%s: reference wrote a guard",
                what);
    tb_out_gather(&o, out);
    int nd;
    int64_t shape[TC_MAX_DIMS];
    if (tc_plan_output_shape(pl, &nd, shape) == TC_OK) {
        ok &= CHECK(nd == R->out_nd, "%s: reference output rank %d, model %d",
                    what, nd, R->out_nd);
        for (int i = 0; i < nd && i < R->out_nd; i++)
            ok &= CHECK(shape[i] == R->out_shape[i], "%s: reference output "
                        "shape[%d]=%lld, model %lld", what, i,
                        (long long)shape[i], (long long)R->out_shape[i]);
    }
    tb_out_free(&o);
    tc_plan_destroy(pl);
    return ok;
}

/* Reference vs model (a case of its own), then every solver. abs_inst is
 * the same problem on absolute values (dense), for the magnitudes. */
static void check_instance(inst *I, inst *dense, inst *absI, const double *model) {
    int64_t n = I->out_view.count;
    double *ref = tb_dcalloc(n), *mag = tb_dcalloc(n);
    TH_BEGIN("%s %s [reference vs model]", op_name(I->op), I->label);
    int ok = run_reference(dense, ref, "values");
    ok &= run_reference(absI, mag, "magnitudes");
    if (ok) {
        tb_cmp c = tb_compare(ref, model, mag, n, tol_for("ref", I->dt));
        if (c.nbad) {
            char idx[128];
            tb_index_str(idx, sizeof idx, c.first, I->out_shape, I->out_nd);
            CHECK(c.nbad == 0, "%lld of %lld elements differ from the model; "
                  "first [%s] ref %.17g model %.17g", (long long)c.nbad,
                  (long long)n, idx, ref[c.first], model[c.first]);
            ok = 0;
        }
    }
    TH_END();
    if (ok) { /* solvers are judged against a reference that is right */
        I->ref = ref;
        I->mag = mag;
        run_all_solvers(I);
    }
    free(ref);
    free(mag);
}

/* Fills n typed values: random non-zero, as doubles too. */
static void fill_random(th_rng *r, void *typed, double *d, int64_t n, tc_dtype dt) {
    for (int64_t i = 0; i < n; i++) {
        tb_st(typed, i, dt, th_value(r));
        if (d) d[i] = tb_ld(typed, i, dt);
    }
}
static void *abs_copy(const void *src, int64_t n, tc_dtype dt) {
    void *p = tb_calloc(n, dt);
    for (int64_t i = 0; i < n; i++) tb_st(p, i, dt, fabs(tb_ld(src, i, dt)));
    return p;
}

/* ------------------------------------------------------------------ */
/* Filter                                                               */
/* ------------------------------------------------------------------ */
typedef struct fspec {
    int ndim, nsp; /* nsp 0: the default min(ndim, 3) */
    int64_t shape[TC_MAX_DIMS], mask[3], origin[3];
    tc_filter_kind kind;
    tc_output_kind output;
    tc_mode mode;
    double cval;
    tb_layout lin, lout;
    int threads, extra;
    int mask_rank; /* 0: random; 1: separable (outer product); 2: sum of
                      two outer products (2D) - for the factoring solvers */
} fspec;

/* A mask of the given rank: sum over `rank` terms of outer products of
 * random non-zero vectors, one per filtered axis. */
static void fill_mask_rank(th_rng *r, void *typed, double *d, const int64_t *m,
                           int nsp, int rank, tc_dtype dt) {
    int64_t n = tb_prod(m, nsp);
    for (int64_t i = 0; i < n; i++) d[i] = 0;
    for (int t = 0; t < rank; t++) {
        double f[3][64];
        for (int a = 0; a < nsp; a++)
            for (int64_t j = 0; j < m[a] && j < 64; j++) f[a][j] = th_value(r);
        for (int64_t i = 0; i < n; i++) {
            int64_t e = i;
            double v = 1;
            for (int a = nsp - 1; a >= 0; a--) {
                v *= f[a][e % m[a]];
                e /= m[a];
            }
            d[i] += v;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        tb_st(typed, i, dt, d[i]);
        d[i] = tb_ld(typed, i, dt);
    }
}

static const char *const out_names[] = {"same", "full", "valid"};

static void run_filter(const fspec *s, tc_dtype dt, uint64_t salt) {
    th_rng r = th_rng_for(salt);
    const int nd = s->ndim, nsp = s->nsp ? s->nsp : (nd < 3 ? nd : 3), lead = nd - nsp;
    model_filter mf;
    memset(&mf, 0, sizeof mf);
    mf.nsp = nsp;
    mf.batch = tb_prod(s->shape, lead);
    for (int i = 0; i < nsp; i++) {
        mf.n[i] = s->shape[lead + i];
        mf.m[i] = s->mask[i];
        mf.origin[i] = s->output == TC_OUTPUT_SAME ? s->origin[i] : 0;
    }
    mf.kind = s->kind;
    mf.output = s->output;
    mf.mode = s->mode;
    mf.cval = s->output == TC_OUTPUT_SAME ? s->cval : 0.0;
    int64_t o[3];
    if (!model_filter_shape(&mf, o)) {
        printf("test table error: invalid filter spec (salt %llu)\n",
               (unsigned long long)salt);
        return;
    }

    inst I;
    memset(&I, 0, sizeof I);
    I.op = TC_OP_FILTER;
    I.dt = dt;
    I.threads = s->threads;
    I.extra = s->extra;
    I.out_nd = nd;
    for (int i = 0; i < lead; i++) I.out_shape[i] = s->shape[i];
    for (int i = 0; i < nsp; i++) I.out_shape[lead + i] = o[i];

    /* label */
    char sh[80] = "", ms[40] = "", og[40] = "";
    for (int i = 0, at = 0; i < nd; i++)
        at += snprintf(sh + at, sizeof sh - at, i ? "x%lld" : "%lld", (long long)s->shape[i]);
    for (int i = 0, at = 0; i < nsp; i++)
        at += snprintf(ms + at, sizeof ms - at, i ? "x%lld" : "%lld", (long long)s->mask[i]);
    for (int i = 0, at = 0; i < nsp; i++)
        at += snprintf(og + at, sizeof og - at, i ? ",%lld" : "%lld", (long long)mf.origin[i]);
    snprintf(I.label, sizeof I.label, "%s %dD in=%s(nsp=%d) mask=%s%s %s %s %s "
             "cval=%g origin=%s x:%s y:%s t%d", dt_label(dt),
             nsp, sh, s->nsp, ms, s->mask_rank == 1 ? "(rank1)" : s->mask_rank == 2 ? "(rank2)" : "",
             s->kind == TC_FILTER_CONVOLVE ? "convolve" : "correlate",
             out_names[s->output], tc_mode_name(s->mode), mf.cval, og,
             tb_layout_names[s->lin], tb_layout_names[s->lout], s->threads);

    /* input: strided buffer with NaN holes, and its dense logical copy */
    tb_view vin;
    tb_view_make(&vin, nd, s->shape, s->lin);
    void *xbuf = tb_calloc(vin.span, dt);
    for (int64_t i = 0; i < vin.span; i++) tb_st(xbuf, i, dt, NAN);
    void *xd = tb_calloc(vin.count, dt);
    double *xdd = tb_dcalloc(vin.count);
    for (int64_t e = 0; e < vin.count; e++) {
        int64_t at = tb_view_at(&vin, e);
        if (isnan(tb_ld(xbuf, at, dt))) tb_st(xbuf, at, dt, th_value(&r));
    }
    for (int64_t e = 0; e < vin.count; e++) {
        double v = tb_ld(xbuf, tb_view_at(&vin, e), dt);
        tb_st(xd, e, dt, v);
        xdd[e] = v;
    }
    int64_t mcount = tb_prod(s->mask, nsp);
    void *mask = tb_calloc(mcount, dt);
    double *maskd = tb_dcalloc(mcount);
    if (s->mask_rank) fill_mask_rank(&r, mask, maskd, s->mask, nsp, s->mask_rank, dt);
    else fill_random(&r, mask, maskd, mcount, dt);

    tc_filter_desc_init(&I.fd);
    I.fd.dtype = dt;
    I.fd.ndim = nd;
    I.fd.nspatial = s->nsp;
    for (int i = 0; i < nd; i++) I.fd.shape[i] = s->shape[i];
    for (int i = 0; i < nsp; i++) {
        I.fd.mask_shape[i] = s->mask[i];
        I.fd.origin[i] = mf.origin[i];
    }
    I.fd.kind = s->kind;
    I.fd.output = s->output;
    I.fd.mode = s->mode;
    I.fd.cval = mf.cval;
    tb_view_make(&I.out_view, nd, I.out_shape, s->lout);
    if (s->lin != TB_DENSE)
        for (int i = 0; i < nd; i++) I.fd.in_strides[i] = vin.strides[i];
    if (s->lout != TB_DENSE)
        for (int i = 0; i < nd; i++) I.fd.out_strides[i] = I.out_view.strides[i];
    I.x = tb_elem(xbuf, vin.off0, dt);
    I.mask = mask;
    inst_save_input(&I, xbuf, (size_t)vin.span * tb_esize(dt));
    inst_save_input(&I, mask, (size_t)mcount * tb_esize(dt));

    /* dense and absolute-value twins for the reference */
    inst D = I, A = I;
    D.n_in = A.n_in = 0;
    memset(D.fd.in_strides, 0, sizeof D.fd.in_strides);
    memset(D.fd.out_strides, 0, sizeof D.fd.out_strides);
    tb_view_make(&D.out_view, nd, I.out_shape, TB_DENSE);
    D.x = xd;
    A.fd = D.fd;
    A.out_view = D.out_view;
    void *xa = abs_copy(xd, vin.count, dt), *ma = abs_copy(mask, mcount, dt);
    A.x = xa;
    A.mask = ma;
    A.fd.cval = fabs(mf.cval);

    double *model = tb_dcalloc(I.out_view.count);
    model_filter_run(&mf, xdd, maskd, model);
    check_instance(&I, &D, &A, model);

    inst_free_saved(&I);
    free(model);
    free(xbuf); free(xd); free(xdd); free(mask); free(maskd); free(xa); free(ma);
}

static int64_t origin_pick(int64_t m, int which, th_rng *r) {
    int64_t lo = -(m / 2), hi = (m - 1) / 2;
    switch (which % 4) {
    case 0: return lo;
    case 1: return hi;
    case 2: return 0;
    default: return th_int(r, lo, hi);
    }
}

static fspec fspec_base(int ndim, int nsp, const int64_t *shape, const int64_t *mask) {
    fspec s;
    memset(&s, 0, sizeof s);
    s.ndim = ndim;
    s.nsp = nsp;
    int ns = nsp ? nsp : ndim;
    for (int i = 0; i < ndim; i++) s.shape[i] = shape[i];
    for (int i = 0; i < ns; i++) s.mask[i] = mask[i];
    s.kind = TC_FILTER_CORRELATE;
    s.output = TC_OUTPUT_SAME;
    s.mode = TC_MODE_REFLECT;
    s.threads = 2;
    return s;
}

static long g_nfilter;
static void filter_both(fspec s, uint64_t salt) {
    run_filter(&s, TC_FLOAT32, salt * 2);
    run_filter(&s, TC_FLOAT64, salt * 2 + 1);
    g_nfilter += 2;
    if (salt % 4 == 0) { /* one in four also in a 16-bit type */
        run_filter(&s, salt % 8 ? TC_FLOAT16 : TC_BFLOAT16, salt * 2 + 0x40000000);
        g_nfilter++;
    }
}

static void filter_cases(void) {
    th_rng r = th_rng_for(1001);
    uint64_t salt = 1;
    const int quick = th_g.quick;
    /* A. every mode x convolve/correlate x origin min/max/0 x odd/even mask,
     *    1D, 2D, 3D; primes in the shapes */
    static const int64_t shp[3][3] = {{31}, {13, 17}, {5, 6, 7}};
    static const int64_t msk[3][2][3] = {{{5}, {4}}, {{3, 4}, {5, 3}}, {{3, 2, 3}, {3, 3, 3}}};
    for (int d = 0; d < 3; d++)
        for (int mode = 0; mode < 5; mode++)
            for (int kind = 0; kind < 2; kind++)
                for (int which = 0; which < 3; which++)
                    for (int mv = 0; mv < 2; mv++) {
                        if (quick && (which + mv + mode) % 3) continue;
                        fspec s = fspec_base(d + 1, 0, shp[d], msk[d][mv]);
                        s.mode = (tc_mode)mode;
                        s.kind = (tc_filter_kind)kind;
                        s.cval = mode == TC_MODE_CONSTANT ? th_uniform(&r, -2, 2) : 0;
                        for (int i = 0; i <= d; i++)
                            s.origin[i] = origin_pick(s.mask[i], which + i, &r);
                        s.threads = 1 + (int)(salt % 3);
                        filter_both(s, salt++);
                    }
    /* B. full and valid, incl. masks larger than the input (valid swaps) */
    static const int64_t small_in[3][3] = {{4}, {3, 5}, {2, 3, 2}};
    static const int64_t big_mask[3][3] = {{9}, {6, 7}, {4, 5, 3}};
    for (int d = 0; d < 3; d++)
        for (int kind = 0; kind < 2; kind++) {
            for (int mv = 0; mv < 2; mv++)
                for (int out = 1; out <= 2; out++) {
                    fspec s = fspec_base(d + 1, 0, shp[d], msk[d][mv]);
                    s.kind = (tc_filter_kind)kind;
                    s.output = (tc_output_kind)out;
                    s.threads = 1 + (int)(salt % 3);
                    filter_both(s, salt++);
                }
            for (int out = 1; out <= 2; out++) {
                fspec s = fspec_base(d + 1, 0, small_in[d], big_mask[d]);
                s.kind = (tc_filter_kind)kind;
                s.output = (tc_output_kind)out;
                filter_both(s, salt++);
            }
        }
    { /* valid: equal on one axis, larger on the other (swaps); equal sizes */
        static const int64_t in[2] = {3, 5}, m1[2] = {3, 7}, m2[2] = {3, 5};
        for (int kind = 0; kind < 2; kind++) {
            fspec s = fspec_base(2, 0, in, m1);
            s.kind = (tc_filter_kind)kind;
            s.output = TC_OUTPUT_VALID;
            filter_both(s, salt++);
            s = fspec_base(2, 0, in, m2);
            s.kind = (tc_filter_kind)kind;
            s.output = TC_OUTPUT_VALID;
            filter_both(s, salt++);
        }
    }
    /* C. 1x1 masks in every output kind */
    static const int64_t one[3] = {1, 1, 1};
    static const int64_t in1x1[3][3] = {{9}, {7, 8}, {3, 4, 5}};
    for (int d = 0; d < 3; d++)
        for (int out = 0; out < 3; out++) {
            fspec s = fspec_base(d + 1, 0, in1x1[d], one);
            s.output = (tc_output_kind)out;
            s.mode = (tc_mode)((d + out) % 5);
            s.kind = (tc_filter_kind)(out & 1);
            filter_both(s, salt++);
        }
    /* D. masks larger than the input, same mode, every boundary mode */
    static const struct { int nd; int64_t in[3], m[3]; } big[] = {
        {2, {3, 4}, {7, 9}}, {2, {2, 2}, {8, 6}}, {1, {2}, {11}},
        {1, {1}, {5}}, {3, {2, 1, 3}, {5, 3, 7}}};
    for (size_t b = 0; b < sizeof big / sizeof big[0]; b++)
        for (int mode = 0; mode < 5; mode++)
            for (int kind = 0; kind < 2; kind++) {
                if (quick && (mode + kind) % 2) continue;
                fspec s = fspec_base(big[b].nd, 0, big[b].in, big[b].m);
                s.mode = (tc_mode)mode;
                s.kind = (tc_filter_kind)kind;
                s.cval = 1.5;
                for (int i = 0; i < big[b].nd; i++)
                    s.origin[i] = origin_pick(s.mask[i], 3, &r);
                filter_both(s, salt++);
            }
    /* E. primes and 1-element axes */
    static const struct { int nd; int64_t in[3], m[3]; } odd[] = {
        {2, {13, 17}, {5, 3}}, {1, {31}, {7}}, {2, {1, 9}, {3, 3}},
        {2, {7, 1}, {2, 3}}, {3, {1, 1, 5}, {1, 3, 2}}, {2, {1, 1}, {3, 3}},
        {3, {7, 11, 13}, {3, 5, 2}}, {1, {1}, {1}}};
    for (size_t b = 0; b < sizeof odd / sizeof odd[0]; b++)
        for (int mode = 0; mode < 5; mode += (quick ? 2 : 1)) {
            fspec s = fspec_base(odd[b].nd, 0, odd[b].in, odd[b].m);
            s.mode = (tc_mode)mode;
            s.kind = (tc_filter_kind)((b + mode) % 2);
            s.cval = -0.5;
            filter_both(s, salt++);
        }
    /* F. leading batch axes */
    static const struct { int nd, nsp; int64_t in[8], m[3]; } bat[] = {
        {4, 2, {2, 3, 9, 10}, {3, 3}}, {4, 3, {2, 4, 5, 6}, {3, 2, 3}},
        {3, 1, {3, 4, 11}, {4}}, {5, 2, {2, 1, 3, 6, 7}, {2, 3}},
        {2, 1, {5, 12}, {3}}, {8, 3, {1, 2, 1, 2, 1, 3, 4, 5}, {2, 2, 3}},
        {3, 3, {4, 5, 6}, {2, 3, 3}}, {2, 0, {6, 7}, {3, 2}}};
    for (size_t b = 0; b < sizeof bat / sizeof bat[0]; b++)
        for (int v = 0; v < 3; v++) {
            fspec s = fspec_base(bat[b].nd, bat[b].nsp, bat[b].in, bat[b].m);
            s.mode = (tc_mode)((b + v) % 5);
            s.kind = (tc_filter_kind)(v % 2);
            s.output = v == 2 ? TC_OUTPUT_FULL : TC_OUTPUT_SAME;
            s.cval = 0.25;
            int ns = bat[b].nsp ? bat[b].nsp : bat[b].nd;
            for (int i = 0; i < ns && s.output == TC_OUTPUT_SAME; i++)
                s.origin[i] = origin_pick(s.mask[i], v + i, &r);
            s.threads = 1 + (int)(b % 3);
            s.extra = (v == 0 && b < 2) * 2;
            filter_both(s, salt++);
        }
    /* G. strided inputs and outputs */
    static const int64_t g2[2] = {11, 9}, gm2[2] = {3, 4};
    static const int64_t g4[4] = {2, 3, 7, 8}, gm4[2] = {3, 3};
    for (int lin = 0; lin < TB_NLAYOUTS; lin++)
        for (int lout = 0; lout < TB_N_OUT_LAYOUTS; lout++) {
            if (quick && (lin + lout) % 2) continue;
            fspec s = fspec_base(2, 0, g2, gm2);
            s.lin = (tb_layout)lin;
            s.lout = (tb_layout)lout;
            s.mode = (tc_mode)((lin + lout) % 5);
            s.kind = (tc_filter_kind)(lin % 2);
            s.origin[0] = origin_pick(3, lin, &r);
            s.origin[1] = origin_pick(4, lout, &r);
            s.extra = (lin == TB_TRANSPOSED && lout == TB_EVERY_OTHER) * 2;
            filter_both(s, salt++);
            fspec t = fspec_base(4, 2, g4, gm4);
            t.lin = (tb_layout)lin;
            t.lout = (tb_layout)lout;
            t.mode = (tc_mode)((lin + 2 * lout) % 5);
            t.output = (tc_output_kind)((lin + lout) % 3);
            t.threads = 3;
            filter_both(t, salt++);
        }
    for (int lin = 0; lin < TB_NLAYOUTS; lin++) { /* swapped valid, strided */
        static const int64_t in[2] = {3, 4}, m[2] = {5, 6};
        fspec s = fspec_base(2, 0, in, m);
        s.lin = (tb_layout)lin;
        s.lout = (tb_layout)(lin % TB_N_OUT_LAYOUTS);
        s.output = TC_OUTPUT_VALID;
        s.kind = (tc_filter_kind)(lin % 2);
        filter_both(s, salt++);
    }
    /* I. structured masks, for the solvers that factor them (separable,
     *    low rank): rank 1 in 1D/2D/3D, rank 2 in 2D, every mode */
    static const struct { int nd; int64_t in[3], m[3]; int rank; } st[] = {
        {2, {13, 17}, {5, 5}, 1}, {2, {11, 9}, {5, 5}, 2}, {2, {16, 12}, {3, 7}, 1},
        {2, {9, 20}, {7, 6}, 2}, {2, {6, 5}, {3, 3}, 1}, {3, {6, 7, 8}, {3, 3, 3}, 1},
        {3, {5, 9, 4}, {5, 3, 5}, 1}, {1, {29}, {7}, 1}, {2, {3, 4}, {9, 7}, 2},
        {2, {24, 30}, {9, 9}, 2}};
    for (size_t b = 0; b < sizeof st / sizeof st[0]; b++)
        for (int mode = 0; mode < 5; mode++) {
            if (quick && (mode + (int)b) % 2) continue;
            fspec s = fspec_base(st[b].nd, 0, st[b].in, st[b].m);
            s.mask_rank = st[b].rank;
            s.mode = (tc_mode)mode;
            s.kind = (tc_filter_kind)((mode + b) % 2);
            s.cval = 0.75;
            for (int i = 0; i < st[b].nd; i++) s.origin[i] = origin_pick(s.mask[i], 3, &r);
            s.lin = (tb_layout)((b + mode) % 3 == 0 ? TB_TRANSPOSED : TB_DENSE);
            s.threads = 1 + (int)((b + mode) % 3);
            filter_both(s, salt++);
            if (mode == 0) { /* full and valid outputs too */
                s.output = TC_OUTPUT_FULL;
                memset(s.origin, 0, sizeof s.origin);
                filter_both(s, salt++);
                s.output = TC_OUTPUT_VALID;
                filter_both(s, salt++);
            }
        }
    /* J. the seed-003 3D scope: float32, cubic odd masks, same, origin 0,
     *    zero border; batches, thin axes, strided views */
    static const struct { int nd; int64_t in[4], k; } s3[] = {
        {3, {9, 10, 11}, 3}, {3, {4, 5, 6}, 5}, {3, {1, 7, 3}, 3}, {3, {8, 8, 17}, 3},
        {4, {2, 5, 6, 7}, 3}, {3, {3, 3, 3}, 5}, {3, {6, 9, 20}, 5}, {3, {2, 2, 2}, 1}};
    for (size_t b = 0; b < sizeof s3 / sizeof s3[0]; b++) {
        int64_t m[3] = {s3[b].k, s3[b].k, s3[b].k};
        fspec s = fspec_base(s3[b].nd, 3, s3[b].in, m);
        s.mode = TC_MODE_CONSTANT;
        s.kind = (tc_filter_kind)(b % 2);
        s.lin = (tb_layout)(b % 3 == 1 ? TB_EVERY_OTHER : TB_DENSE);
        s.lout = (tb_layout)(b % 3 == 2 ? TB_PITCH : TB_DENSE);
        s.threads = 1 + (int)(b % 3);
        s.extra = (b == 0) * 4;
        s.mask_rank = b == 6 ? 1 : 0;
        filter_both(s, salt++);
    }
    /* K. 3D rows longer than a kernel strip (64 float32 outputs), so the
     *    plane ring of cpu.direct.* runs full strips, masked tails and the
     *    boundary copies together: odd and even masks, every mode, origins,
     *    thin planes; m2 = 11 takes the lane-interleaved path; 6x40x300
     *    makes, under the test_solvers_small_l2 run's 32 KiB L2, two x
     *    tiles, ten row bands and an input over 8x L2 (the prefetch);
     *    m1 = m2 = 3 runs blocks of two output planes (an odd plane count
     *    leaves a one-plane block; 2 and 4 planes, several images and
     *    m0 = 5 below), and test_solvers_fd_pair forces them on every
     *    mask */
    static const struct { int nd; int64_t in[4], m[3]; } k3d[] = {
        {3, {7, 13, 133}, {3, 3, 3}}, {3, {6, 9, 70}, {5, 5, 5}}, {3, {5, 11, 97}, {5, 3, 7}},
        {3, {9, 6, 67}, {4, 5, 2}},   {3, {4, 7, 81}, {7, 7, 9}}, {4, {2, 3, 5, 80}, {3, 3, 3}},
        {3, {4, 6, 75}, {3, 3, 11}}, {3, {6, 40, 300}, {3, 3, 3}}, {4, {3, 4, 9, 70}, {3, 3, 3}},
        {3, {2, 5, 40}, {3, 3, 3}},   {3, {8, 12, 64}, {5, 3, 3}}};
    for (size_t b = 0; b < sizeof k3d / sizeof k3d[0]; b++)
        for (int mode = 0; mode < 5; mode++) {
            if (quick && (mode + (int)b) % 2) continue;
            fspec s = fspec_base(k3d[b].nd, 3, k3d[b].in, k3d[b].m);
            s.mode = (tc_mode)mode;
            s.kind = (tc_filter_kind)((mode + b) % 2);
            s.cval = -1.25;
            for (int i = 0; i < 3; i++) s.origin[i] = origin_pick(s.mask[i], mode + i, &r);
            s.threads = 1 + (int)((b + mode) % 3);
            filter_both(s, salt++);
        }
    /* H. random cases */
    int nrand = quick ? 30 : 150;
    for (int c = 0; c < nrand; c++) {
        fspec s;
        memset(&s, 0, sizeof s);
        s.ndim = (int)th_int(&r, 1, 5);
        int nsp = (int)th_int(&r, 1, s.ndim < 3 ? s.ndim : 3);
        s.nsp = (s.ndim <= 3 && th_int(&r, 0, 1)) ? (nsp == s.ndim ? 0 : nsp) : nsp;
        nsp = s.nsp ? s.nsp : s.ndim;
        int lead = s.ndim - nsp;
        for (int i = 0; i < lead; i++) s.shape[i] = th_int(&r, 1, 3);
        int64_t maxn = nsp == 1 ? 40 : nsp == 2 ? 14 : 7;
        for (int i = 0; i < nsp; i++) {
            s.shape[lead + i] = th_int(&r, 1, maxn);
            s.mask[i] = th_int(&r, 1, th_int(&r, 0, 4) ? 5 : 9);
        }
        s.kind = (tc_filter_kind)th_int(&r, 0, 1);
        s.mode = (tc_mode)th_int(&r, 0, 4);
        s.cval = th_uniform(&r, -3, 3);
        int o = (int)th_int(&r, 0, 9);
        s.output = o < 7 ? TC_OUTPUT_SAME : o < 8 ? TC_OUTPUT_FULL : TC_OUTPUT_VALID;
        if (s.output == TC_OUTPUT_VALID) {
            int larger = 0, smaller = 0;
            for (int i = 0; i < nsp; i++) {
                larger += s.mask[i] > s.shape[lead + i];
                smaller += s.mask[i] < s.shape[lead + i];
            }
            if ((larger && smaller) || (larger && tb_prod(s.shape, lead) != 1))
                s.output = TC_OUTPUT_FULL;
        }
        for (int i = 0; i < nsp; i++) s.origin[i] = origin_pick(s.mask[i], 3, &r);
        s.lin = (tb_layout)(th_int(&r, 0, 2) ? 0 : th_int(&r, 1, TB_NLAYOUTS - 1));
        s.lout = (tb_layout)(th_int(&r, 0, 2) ? 0 : th_int(&r, 1, TB_N_OUT_LAYOUTS - 1));
        s.threads = (int)th_int(&r, 1, 3);
        s.extra = (c % 25 == 0) * 2;
        if (nsp >= 2 && th_int(&r, 0, 3) == 0) s.mask_rank = (int)th_int(&r, 1, nsp == 2 ? 2 : 1);
        run_filter(&s, th_int(&r, 0, 1) ? TC_FLOAT64 : TC_FLOAT32, 100000 + c);
        g_nfilter++;
    }
}

/* ------------------------------------------------------------------ */
/* Conv                                                                 */
/* ------------------------------------------------------------------ */
typedef struct cspec {
    int nsp;
    int64_t N, C, K, G, n[3], m[3], stride[3], dil[3], pad[3];
    tc_padding_kind pkind;
    tc_padding_mode pmode;
    int bias, threads, extra;
    tc_layout layout;   /* of x, y and the residual */
    tc_activation act;
    int res;            /* with a residual */
} cspec;

static const char *const pk_names[] = {"explicit", "same", "valid"};
static const char *const pm_names[] = {"zeros", "reflect", "replicate", "circular"};

/* torch.nn.functional's activations, in double */
static double model_act(tc_activation a, double v) {
    switch (a) {
    case TC_ACT_RELU: return v > 0 ? v : 0.0;
    case TC_ACT_RELU6: return v < 0 ? 0.0 : v > 6 ? 6.0 : v;
    case TC_ACT_SILU: return v / (1.0 + exp(-v));
    case TC_ACT_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case TC_ACT_TANH: return tanh(v);
    case TC_ACT_GELU: return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
    default: return v;
    }
}

/* N x C x S (channels-first) <-> N x S x C, typed, either direction */
static void *to_channels_last(const void *src, int64_t N, int64_t C, int64_t S, tc_dtype dt) {
    void *d = tb_calloc(N * C * S, dt);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < S; i++)
                tb_st(d, (n * S + i) * C + c, dt, tb_ld(src, (n * C + c) * S + i, dt));
    return d;
}

static long g_nconv;
static void run_conv(const cspec *s, tc_dtype dt, uint64_t salt) {
    th_rng r = th_rng_for(salt);
    model_conv mc;
    memset(&mc, 0, sizeof mc);
    mc.nsp = s->nsp;
    mc.N = s->N; mc.C = s->C; mc.K = s->K; mc.G = s->G;
    for (int i = 0; i < s->nsp; i++) {
        mc.n[i] = s->n[i]; mc.m[i] = s->m[i]; mc.stride[i] = s->stride[i];
        mc.dil[i] = s->dil[i]; mc.pad[i] = s->pad[i];
    }
    mc.pkind = s->pkind;
    mc.pmode = s->pmode;
    mc.has_bias = s->bias;
    int64_t lo[3], o[3];
    if (!model_conv_shape(&mc, lo, o)) {
        printf("test table error: invalid conv spec (salt %llu)\n", (unsigned long long)salt);
        return;
    }
    g_nconv++;
    inst I;
    memset(&I, 0, sizeof I);
    I.op = TC_OP_CONV;
    I.dt = dt;
    I.threads = s->threads;
    I.extra = s->extra;
    I.out_nd = 2 + s->nsp;
    const int cl = s->layout == TC_LAYOUT_CHANNELS_LAST;
    I.out_shape[0] = s->N;
    I.out_shape[cl ? 1 + s->nsp : 1] = s->K;
    for (int i = 0; i < s->nsp; i++) I.out_shape[1 + !cl + i] = o[i];
    tb_view_make(&I.out_view, I.out_nd, I.out_shape, TB_DENSE);

    char sp[64] = "", ks[48] = "", st[48] = "", dl[48] = "", pd[48] = "";
    for (int i = 0, a = 0, b = 0, c = 0, d = 0, e = 0; i < s->nsp; i++) {
        a += snprintf(sp + a, sizeof sp - a, i ? "x%lld" : "%lld", (long long)s->n[i]);
        b += snprintf(ks + b, sizeof ks - b, i ? "x%lld" : "%lld", (long long)s->m[i]);
        c += snprintf(st + c, sizeof st - c, i ? ",%lld" : "%lld", (long long)s->stride[i]);
        d += snprintf(dl + d, sizeof dl - d, i ? ",%lld" : "%lld", (long long)s->dil[i]);
        e += snprintf(pd + e, sizeof pd - e, i ? ",%lld" : "%lld", (long long)s->pad[i]);
    }
    char label[sizeof I.label - 8]; /* room for the weight layout's " w=cl" */
    snprintf(label, sizeof label, "%s %dD N%lld C%lld K%lld G%lld in=%s k=%s "
             "stride=%s dil=%s pad=%s(%s) %s bias=%d%s%s%s%s t%d", dt_label(dt),
             s->nsp, (long long)s->N, (long long)s->C, (long long)s->K, (long long)s->G,
             sp, ks, st, dl, pk_names[s->pkind], pd, pm_names[s->pmode], s->bias,
             cl ? " channels_last" : "", s->act ? " act=" : "",
             s->act ? tc_activation_name(s->act) : "", s->res ? " +residual" : "", s->threads);

    int64_t nx = s->N * s->C * tb_prod(s->n, s->nsp);
    int64_t nw = s->K * (s->C / s->G) * tb_prod(s->m, s->nsp);
    void *x = tb_calloc(nx, dt), *w = tb_calloc(nw, dt), *b = tb_calloc(s->K, dt);
    double *xd = tb_dcalloc(nx), *wd = tb_dcalloc(nw), *bd = tb_dcalloc(s->K);
    fill_random(&r, x, xd, nx, dt);
    fill_random(&r, w, wd, nw, dt);
    fill_random(&r, b, bd, s->K, dt);

    tc_conv_desc_init(&I.cd);
    I.cd.dtype = dt;
    I.cd.nspatial = s->nsp;
    I.cd.batch = s->N;
    I.cd.in_channels = s->C;
    I.cd.out_channels = s->K;
    I.cd.groups = s->G;
    for (int i = 0; i < s->nsp; i++) {
        I.cd.in_size[i] = s->n[i];
        I.cd.kernel_size[i] = s->m[i];
        I.cd.stride[i] = s->stride[i];
        I.cd.dilation[i] = s->dil[i];
        I.cd.padding[i] = s->pad[i];
    }
    I.cd.padding_kind = s->pkind;
    I.cd.padding_mode = s->pmode;
    I.cd.has_bias = s->bias;
    I.cd.layout = s->layout;
    I.cd.activation = s->act;
    I.cd.has_residual = s->res;
    const int64_t sin = tb_prod(s->n, s->nsp), sout = I.out_view.count / (s->N * s->K);
    const int64_t ny = I.out_view.count;
    void *xcl = cl ? to_channels_last(x, s->N, s->C, sin, dt) : NULL;
    /* the residual, in the output's layout */
    void *rr = s->res ? tb_calloc(ny, dt) : NULL;
    double *rd = s->res ? tb_dcalloc(ny) : NULL;
    if (s->res) fill_random(&r, rr, rd, ny, dt);
    /* the weights K x mask x C/G (weight_layout channels-last): a
     * channels-last tensor with N = K, C = C/G, S = mask */
    const int64_t smask = tb_prod(s->m, s->nsp);
    void *wcl = to_channels_last(w, s->K, s->C / s->G, smask, dt);
    I.x = cl ? xcl : x;
    I.bias = s->bias ? b : NULL;
    I.res = rr;
    void *xa = abs_copy(I.x, nx, dt), *ba = abs_copy(b, s->K, dt);
    void *ra = rr ? abs_copy(rr, ny, dt) : NULL;

    double xmax = 0, wsum = 0;
    for (int64_t i = 0; i < nx; i++) xmax = fabs(xd[i]) > xmax ? fabs(xd[i]) : xmax;
    for (int64_t k = 0, per = nw / s->K; k < s->K; k++) {
        double t = 0;
        for (int64_t i = 0; i < per; i++) t += fabs(wd[k * per + i]);
        wsum = t > wsum ? t : wsum;
    }
    I.scale = xmax * wsum;
    if (s->act != TC_ACT_NONE && I.scale < 1) I.scale = 1; /* sigmoid(0) = 0.5 */
    double *model = tb_dcalloc(ny), *mcf = tb_dcalloc(ny);
    model_conv_run(&mc, xd, wd, bd, mcf);
    /* the model's N x K x S output to the layout, + residual, activation */
    for (int64_t n = 0; n < s->N; n++)
        for (int64_t k = 0; k < s->K; k++)
            for (int64_t i = 0; i < sout; i++) {
                int64_t at = cl ? (n * sout + i) * s->K + k : (n * s->K + k) * sout + i;
                double v = mcf[(n * s->K + k) * sout + i] + (rd ? rd[at] : 0.0);
                model[at] = model_act(s->act, v);
            }
    /* every case with the weights in both layouts (the model's are KCRS) */
    for (int wv = 0; wv < 2; wv++) {
        const void *wu = wv ? wcl : w;
        snprintf(I.label, sizeof I.label, "%s%s", label, wv ? " w=cl" : "");
        I.cd.weight_layout = wv ? TC_LAYOUT_CHANNELS_LAST : TC_LAYOUT_CHANNELS_FIRST;
        I.w = wu;
        inst_save_input(&I, I.x, (size_t)nx * tb_esize(dt));
        inst_save_input(&I, wu, (size_t)nw * tb_esize(dt));
        inst_save_input(&I, b, (size_t)s->K * tb_esize(dt));
        if (rr) inst_save_input(&I, rr, (size_t)ny * tb_esize(dt));
        /* magnitudes: the same problem on absolute values, no activation */
        inst D = I, A = I;
        D.n_in = A.n_in = 0;
        void *wa = abs_copy(wu, nw, dt);
        A.x = xa;
        A.w = wa;
        A.bias = s->bias ? ba : NULL;
        A.res = ra;
        A.cd.activation = TC_ACT_NONE;
        check_instance(&I, &D, &A, model);
        inst_free_saved(&I);
        free(wa);
    }

    free(model); free(mcf);
    free(x); free(w); free(wcl); free(b); free(xd); free(wd); free(bd);
    free(xa); free(ba); free(xcl); free(rr); free(rd); free(ra);
}

static cspec cspec_base(int nsp) {
    cspec s;
    memset(&s, 0, sizeof s);
    s.nsp = nsp;
    s.N = 2; s.C = 4; s.K = 6; s.G = 2;
    static const int64_t n[3][3] = {{19}, {9, 11}, {5, 6, 7}};
    static const int64_t m[3][3] = {{3}, {3, 2}, {3, 3, 2}};
    for (int i = 0; i < 3; i++) {
        s.n[i] = i < nsp ? n[nsp - 1][i] : 1;
        s.m[i] = i < nsp ? m[nsp - 1][i] : 1;
        s.stride[i] = s.dil[i] = 1;
        s.pad[i] = 0;
    }
    s.threads = 2;
    return s;
}

/* Is the spec acceptable to torch (and hence to tileconv)? */
static int cspec_valid(const cspec *s) {
    if (s->C % s->G || s->K % s->G) return 0;
    for (int i = 0; i < s->nsp; i++) {
        int64_t span = s->dil[i] * (s->m[i] - 1), lo, hi;
        if (s->pkind == TC_PADDING_SAME) {
            if (s->stride[i] != 1) return 0;
            lo = span / 2;
            hi = span - lo;
        } else if (s->pkind == TC_PADDING_VALID) {
            lo = hi = 0;
        } else {
            lo = hi = s->pad[i];
        }
        if (s->pmode == TC_PADDING_REFLECT && (lo >= s->n[i] || hi >= s->n[i])) return 0;
        if (s->pmode == TC_PADDING_CIRCULAR && (lo > s->n[i] || hi > s->n[i])) return 0;
        if (s->n[i] + lo + hi < span + 1) return 0;
    }
    return 1;
}

static void conv_both(cspec s, uint64_t salt) {
    if (!cspec_valid(&s)) {
        printf("test table error: invalid conv spec %llu\n", (unsigned long long)salt);
        th_g.failed++;
        return;
    }
    run_conv(&s, TC_FLOAT32, salt * 2);
    run_conv(&s, TC_FLOAT64, salt * 2 + 1);
}

/* Element types, channels-last and the fused epilogue: every conv solver,
 * float16 / bfloat16 / float32 / float64, both layouts, every activation,
 * with and without bias and residual, on awkward shapes (odd channel
 * counts, groups, depthwise, 1x1, stride, dilation, every padding mode,
 * 1D / 2D / 3D). */
static void conv_ext_cases(void) {
    static const struct {
        int nsp;
        int64_t N, C, K, G, n0, n1, n2, m, st, dl, pad;
        int pm;
    } L[] = {
        {2, 2, 8, 16, 1, 9, 11, 1, 3, 1, 1, 1, 0},  /* 3x3 */
        {2, 1, 32, 24, 1, 7, 5, 1, 1, 1, 1, 0, 0},  /* 1x1 */
        {2, 2, 6, 9, 3, 10, 7, 1, 3, 2, 1, 1, 1},   /* groups, stride 2, reflect */
        {2, 1, 16, 16, 16, 8, 9, 1, 3, 1, 1, 1, 0}, /* depthwise */
        {1, 2, 5, 7, 1, 23, 1, 1, 5, 1, 2, 4, 3},   /* 1D, dilated, circular */
        {3, 1, 4, 6, 2, 5, 6, 7, 3, 1, 1, 1, 2},    /* 3D, replicate */
        {2, 3, 19, 13, 1, 6, 13, 1, 5, 1, 1, 2, 0}, /* 5x5, odd channels */
        {2, 1, 64, 32, 1, 6, 6, 1, 3, 1, 1, 1, 0},  /* wider channels */
        {2, 2, 3, 64, 1, 15, 15, 1, 7, 2, 1, 3, 0}, /* conv1-like 7x7/2 */
    };
    static const tc_dtype dts[] = {TC_FLOAT16, TC_BFLOAT16, TC_FLOAT32, TC_FLOAT64};
    uint64_t salt = 700000;
    const int nl = (int)(sizeof L / sizeof L[0]);
    for (int i = 0; i < nl; i++)
        for (int d = 0; d < 4; d++) {
            if (th_g.quick && d >= 2 && (i + d) % 2) continue;
            cspec s = cspec_base(L[i].nsp);
            s.N = L[i].N; s.C = L[i].C; s.K = L[i].K; s.G = L[i].G;
            const int64_t n[3] = {L[i].n0, L[i].n1, L[i].n2};
            for (int a = 0; a < s.nsp; a++) {
                s.n[a] = n[a];
                s.m[a] = L[i].m;
                s.stride[a] = L[i].st;
                s.dil[a] = L[i].dl;
                s.pad[a] = L[i].pad;
            }
            s.pmode = (tc_padding_mode)L[i].pm;
            s.layout = (i + d) % 2 ? TC_LAYOUT_CHANNELS_LAST : TC_LAYOUT_CHANNELS_FIRST;
            s.act = (tc_activation)((3 * i + d) % 7);
            s.res = (i + d) % 3 != 0;
            s.bias = (i + 2 * d) % 3 != 2;
            s.threads = 1 + (i + d) % 3;
            s.extra = (i == 0 && d < 2) * 2;
            if (!cspec_valid(&s)) {
                printf("test table error: invalid conv spec %d\n", i);
                th_g.failed++;
                continue;
            }
            run_conv(&s, dts[d], salt++);
        }
}

/* bfloat16 layers with 3x3 planes and any depth (cpu.conv.winograd-f2-bf16
 * transforms the planes and sums the depth taps in its GEMMs): 2D, 3D
 * 3x3x3, depth kernels 1, 2 and 5, depth stride and dilation, every
 * padding mode, odd extents, both layouts, 16+ channels (the solver's
 * floor), with every solver applicable checked against the model. */
static void conv_wg_depth_cases(void) {
    static const struct {
        int nsp;
        int64_t N, C, K, n0, n1, n2, kd, sd, dd, pd;
        int pm;
    } L[] = {
        {3, 1, 18, 20, 5, 7, 6, 3, 1, 1, 1, 0},  /* 3x3x3, zeros */
        {3, 2, 16, 33, 4, 5, 9, 3, 1, 1, 1, 1},  /* reflect, K past one block */
        {3, 1, 20, 17, 7, 6, 5, 2, 2, 1, 0, 2},  /* depth kernel 2, stride 2, replicate */
        {3, 1, 16, 16, 9, 5, 5, 5, 1, 2, 3, 3},  /* depth 5, dilation 2, circular */
        {3, 1, 24, 8, 3, 8, 7, 1, 1, 1, 0, 0},   /* 1x3x3 */
        {2, 3, 17, 50, 1, 9, 13, 1, 1, 1, 0, 1}, /* 2D, reflect, 4 channel blocks */
        /* planes of 24+ tiles: consecutive output planes share transformed
         * input planes (one thread: blocks of two output planes or more) */
        {3, 1, 16, 50, 4, 10, 11, 3, 1, 1, 1, 1},
        {3, 2, 18, 64, 7, 9, 10, 3, 2, 1, 1, 2},  /* depth stride 2: one plane shared */
        {3, 1, 16, 12, 6, 14, 13, 3, 1, 1, 1, 3}, /* K 12: 48-tile chunks */
    };
    uint64_t salt = 760000;
    for (int i = 0; i < (int)(sizeof L / sizeof L[0]); i++)
        for (int v = 0; v < 2; v++) {
            if (th_g.quick && v && i % 2) continue;
            cspec s = cspec_base(L[i].nsp);
            s.N = L[i].N; s.C = L[i].C; s.K = L[i].K; s.G = 1;
            const int64_t n[3] = {L[i].n0, L[i].n1, L[i].n2};
            const int d0 = s.nsp == 3 ? 1 : 0;
            for (int a = 0; a < s.nsp; a++) {
                s.n[a] = n[a + (s.nsp == 3 ? 0 : 1)];
                s.m[a] = 3;
                s.stride[a] = s.dil[a] = 1;
                s.pad[a] = 1;
            }
            if (d0) {
                s.m[0] = L[i].kd;
                s.stride[0] = L[i].sd;
                s.dil[0] = L[i].dd;
                s.pad[0] = L[i].pd;
            }
            s.pkind = TC_PADDING_EXPLICIT;
            s.pmode = (tc_padding_mode)L[i].pm;
            s.layout = (i + v) % 2 ? TC_LAYOUT_CHANNELS_LAST : TC_LAYOUT_CHANNELS_FIRST;
            s.act = (tc_activation)((2 * i + 3 * v) % 7);
            s.res = (i + v) % 2;
            s.bias = (i + v + 1) % 3 != 0;
            s.threads = i >= 6 && v == 0 ? 1 : 1 + (i + v) % 2;
            if (!cspec_valid(&s)) {
                printf("test table error: invalid conv spec %d\n", i);
                th_g.failed++;
                continue;
            }
            run_conv(&s, TC_BFLOAT16, salt++);
        }
}

/* Depthwise layers in float16 and bfloat16 (cpu.conv.depthwise's direct
 * path reads and writes them natively where it applies, staged to float32
 * elsewhere): odd widths and widths around the 16- and 32-column vectors
 * and the 64-column chunks, stride 1 and 2, every padding mode, padding 0
 * and 1 (and 2: staged), multiplier > 1, batch > 1, fewer rows than a
 * 4-row block, 3D, a fused activation and residual (staged), both
 * layouts (channels-last at 32+ channels with a partial block, every
 * activation, residual, 1 and 2 input rows), every applicable solver
 * against the model. */
static void conv_dw_half_cases(void) {
    static const struct {
        int nsp;
        int64_t N, C, K, n0, n1, n2, st, pad;
        int pm, bias, act, res, cl;
    } L[] = {
        {2, 2, 6, 6, 1, 11, 47, 1, 1, 0, 1, 0, 0, 0},   /* 47 columns: a pair + 15 */
        {2, 1, 4, 8, 1, 7, 113, 1, 1, 1, 0, 0, 0, 0},   /* x2, 64 + 49 columns, reflect */
        {2, 2, 5, 5, 1, 13, 57, 2, 1, 2, 1, 0, 0, 0},   /* stride 2, 29 out, replicate */
        {2, 1, 3, 3, 1, 6, 16, 1, 1, 3, 1, 0, 0, 0},    /* 16 columns, circular */
        {2, 1, 3, 6, 1, 5, 17, 1, 1, 0, 0, 0, 0, 0},    /* 17 columns, x2 */
        {2, 2, 4, 4, 1, 9, 33, 1, 1, 1, 1, 0, 0, 0},    /* 33: two pairs, reflect */
        {2, 1, 8, 8, 1, 3, 150, 1, 1, 3, 1, 0, 0, 0},   /* 3 rows, 64+64+22, circular */
        {2, 2, 6, 12, 1, 9, 100, 2, 1, 1, 0, 0, 0, 0},  /* x2, stride 2, 50 out, reflect */
        {2, 1, 5, 5, 1, 10, 33, 2, 0, 0, 1, 0, 0, 0},   /* stride 2, no padding */
        {2, 1, 4, 4, 1, 2, 2, 1, 1, 2, 1, 0, 0, 0},     /* 2x2 input, replicate */
        {2, 1, 3, 3, 1, 7, 1, 1, 1, 3, 0, 0, 0, 0},     /* one column, circular */
        {2, 1, 7, 7, 1, 14, 14, 1, 1, 0, 1, 0, 0, 0},   /* 14x14 */
        {2, 1, 3, 3, 1, 28, 28, 2, 1, 2, 1, 0, 0, 0},   /* 28 -> 14, replicate */
        {2, 1, 4, 4, 1, 19, 71, 1, 0, 1, 1, 0, 0, 0},   /* valid: 69 columns */
        {3, 1, 6, 6, 6, 5, 9, 17, 1, 1, 0, 0, 0, 0},    /* 3D stride 2, reflect */
        {3, 2, 4, 4, 5, 6, 35, 1, 1, 2, 1, 0, 0, 0},    /* 3D 3x3x3, 35 columns */
        {2, 1, 4, 4, 1, 9, 20, 1, 2, 3, 1, 0, 0, 0},    /* padding 2: staged */
        {2, 2, 6, 6, 1, 8, 37, 1, 1, 1, 1, 2, 1, 0},    /* relu6 + residual: staged */
        {2, 1, 5, 10, 1, 9, 21, 1, 1, 0, 1, 0, 0, 1},   /* channels-last */
        /* channels-last, one output per channel (cpu.conv.igemm-bf16's
         * depthwise rows: blocks of 8 pixels at stride 1, 3 at stride 2,
         * the rest in 4, 2, 1; 32-channel blocks and a partial one) */
        {2, 2, 40, 40, 1, 7, 23, 1, 1, 0, 1, 1, 1, 1},  /* 21 inside: 8+8+4+1 */
        {2, 1, 70, 70, 1, 6, 31, 1, 1, 1, 1, 2, 0, 1},  /* 29: 3x8+4+1, reflect */
        {2, 1, 33, 33, 1, 5, 14, 1, 1, 2, 0, 3, 1, 1},  /* 12: 8+4, replicate */
        {2, 2, 36, 36, 1, 9, 29, 2, 1, 3, 1, 4, 1, 1},  /* stride 2, 13: 4x3+1, circular */
        {2, 1, 40, 40, 1, 8, 24, 2, 1, 0, 1, 5, 0, 1},  /* stride 2, 11: 3x3+2 */
        {2, 1, 34, 34, 1, 6, 19, 1, 0, 0, 1, 6, 1, 1},  /* no padding: 17 = 8+8+1 */
        {2, 1, 48, 48, 1, 7, 20, 2, 0, 2, 1, 1, 1, 1},  /* stride 2, no padding: 9 */
        {2, 2, 32, 32, 1, 2, 11, 1, 1, 0, 1, 2, 1, 1},  /* 2 rows: 6 taps a row */
        {2, 1, 40, 40, 1, 1, 13, 1, 1, 0, 1, 0, 1, 1},  /* 1 row: 3 taps */
        {2, 1, 64, 64, 1, 4, 3, 1, 1, 3, 1, 2, 0, 1},   /* 3 columns, circular */
    };
    uint64_t salt = 780000;
    for (int i = 0; i < (int)(sizeof L / sizeof L[0]); i++)
        for (int d = 0; d < 2; d++) {
            cspec s = cspec_base(L[i].nsp);
            s.N = L[i].N; s.C = L[i].C; s.K = L[i].K; s.G = L[i].C;
            const int64_t n[3] = {L[i].n0, L[i].n1, L[i].n2};
            for (int a = 0; a < s.nsp; a++) {
                s.n[a] = n[a + (s.nsp == 3 ? 0 : 1)];
                s.m[a] = 3;
                s.stride[a] = L[i].st;
                s.dil[a] = 1;
                s.pad[a] = L[i].pad;
            }
            s.pkind = TC_PADDING_EXPLICIT;
            s.pmode = (tc_padding_mode)L[i].pm;
            s.bias = L[i].bias;
            s.act = (tc_activation)L[i].act;
            s.res = L[i].res;
            s.layout = L[i].cl ? TC_LAYOUT_CHANNELS_LAST : TC_LAYOUT_CHANNELS_FIRST;
            s.threads = 1 + (i + d) % 2;
            if (!cspec_valid(&s)) {
                printf("test table error: invalid conv spec %d\n", i);
                th_g.failed++;
                continue;
            }
            run_conv(&s, d ? TC_BFLOAT16 : TC_FLOAT16, salt++);
        }
}

/* cpu.conv.depthwise's native float16 / bfloat16 path (AVX-512) rounds
 * each output once from its float32 sums, in the float32 path's order: bit
 * for bit the float32 path's output on the widened inputs rounded by
 * tc_float_to_bfloat16 / tc_float_to_half (nearest even, NaN kept quiet,
 * subnormals kept, overflow to infinity), which the tolerance checks
 * cannot tell from a truncation. Inputs with NaN, infinities, tiny values
 * (subnormal outputs) and huge ones (overflow); widths for the three load
 * forms (16 columns, 32 in even / odd pairs, stride 2); both thread counts;
 * the plan must be unstaged where the direct path applies. */
static void conv_dw_half_bits(void) {
    if (!selected(TC__KNOB_TEST_ALGO, "cpu.conv.depthwise")) return;
    static const struct {
        int64_t N, C, mult, H, W, st, pad;
        int pm;
    } L[] = {
        {1, 3, 1, 9, 28, 1, 1, 0},  {2, 2, 2, 7, 47, 1, 1, 1}, {1, 2, 1, 6, 113, 1, 1, 3},
        {1, 3, 1, 11, 57, 2, 1, 2}, {1, 2, 1, 5, 14, 1, 1, 0}, {1, 2, 1, 3, 150, 2, 0, 0},
    };
    th_rng r = th_rng_for(790000);
    for (int c = 0; c < (int)(sizeof L / sizeof L[0]); c++)
        for (int d = 0; d < 2; d++) {
            const tc_dtype dt = d ? TC_BFLOAT16 : TC_FLOAT16;
            const int64_t K = L[c].C * L[c].mult, nx = L[c].N * L[c].C * L[c].H * L[c].W;
            const int64_t nw = K * 9;
            /* scale: 0 plain, 1 tiny (subnormal outputs), 2 huge (overflow) */
            const int sc = (c + d) % 3;
            const float xs = sc == 0 ? 1.0f : sc == 1 ? (d ? 3e-38f : 2e-4f) : (d ? 1e38f : 3e4f);
            tc_conv_desc cd;
            tc_conv_desc_init(&cd);
            cd.nspatial = 2;
            cd.batch = L[c].N;
            cd.in_channels = L[c].C;
            cd.out_channels = K;
            cd.groups = L[c].C;
            cd.in_size[0] = L[c].H;
            cd.in_size[1] = L[c].W;
            cd.kernel_size[0] = cd.kernel_size[1] = 3;
            cd.stride[0] = cd.stride[1] = L[c].st;
            cd.padding[0] = cd.padding[1] = L[c].pad;
            cd.padding_mode = (tc_padding_mode)L[c].pm;
            cd.has_bias = 1;
            float *xf = malloc(sizeof(float) * (size_t)nx), *wf = malloc(sizeof(float) * (size_t)nw);
            float *bf = malloc(sizeof(float) * (size_t)K);
            uint16_t *xh = malloc(2 * (size_t)nx), *wh = malloc(2 * (size_t)nw), *bh = malloc(2 * (size_t)K);
            for (int64_t i = 0; i < nx; i++) {
                float v = (float)th_uniform(&r, -1, 1) * xs;
                if (i % 97 == 13) v = NAN;
                if (i % 89 == 7) v = i % 2 ? INFINITY : -INFINITY;
                xf[i] = v;
            }
            for (int64_t i = 0; i < nw; i++) wf[i] = (float)th_uniform(&r, -1, 1);
            for (int64_t i = 0; i < K; i++) bf[i] = (float)th_uniform(&r, -1, 1) * xs * 0.1f;
            /* the half data, and the float32 data as exactly those values */
            if (d) {
                tc_float_to_bfloat16(xh, xf, (size_t)nx);
                tc_float_to_bfloat16(wh, wf, (size_t)nw);
                tc_float_to_bfloat16(bh, bf, (size_t)K);
                tc_bfloat16_to_float(xf, xh, (size_t)nx);
                tc_bfloat16_to_float(wf, wh, (size_t)nw);
                tc_bfloat16_to_float(bf, bh, (size_t)K);
            } else {
                tc_float_to_half(xh, xf, (size_t)nx);
                tc_float_to_half(wh, wf, (size_t)nw);
                tc_float_to_half(bh, bf, (size_t)K);
                tc_half_to_float(xf, xh, (size_t)nx);
                tc_half_to_float(wf, wh, (size_t)nw);
                tc_half_to_float(bf, bh, (size_t)K);
            }
            tc_plan_options opt;
            tc_plan_options_init(&opt);
            opt.algorithm = "cpu.conv.depthwise";
            const int thr = 1 + (c + d) % 2;
            tc_plan *ph = NULL, *pf = NULL;
            cd.dtype = dt;
            tc_status s1 = tc_plan_conv(&ph, g_ctx[thr], &cd, &opt);
            cd.dtype = TC_FLOAT32;
            tc_status s2 = tc_plan_conv(&pf, g_ctx[thr], &cd, &opt);
            char lab[96];
            snprintf(lab, sizeof lab, "depthwise %s bits case %d (%lldx%lld stride %lld)",
                     dt_label(dt), c, (long long)L[c].H, (long long)L[c].W, (long long)L[c].st);
            if (CHECK(s1 == TC_OK && s2 == TC_OK, "%s: plan: %s", lab, tc_last_error())) {
                int64_t oh = (L[c].H + 2 * L[c].pad - 3) / L[c].st + 1;
                int64_t ow = (L[c].W + 2 * L[c].pad - 3) / L[c].st + 1;
                int64_t ny = L[c].N * K * oh * ow;
                uint16_t *yh = malloc(2 * (size_t)ny), *yr = malloc(2 * (size_t)ny);
                float *yf = malloc(sizeof(float) * (size_t)ny);
                tc_status e1 = tc_execute_conv(ph, yh, xh, wh, bh, NULL);
                tc_status e2 = tc_execute_conv(pf, yf, xf, wf, bf, NULL);
                if (CHECK(e1 == TC_OK && e2 == TC_OK, "%s: execute: %s", lab, tc_last_error())) {
                    if (d) tc_float_to_bfloat16(yr, yf, (size_t)ny);
                    else tc_float_to_half(yr, yf, (size_t)ny);
                    int64_t bad = -1, nan = 0, inf = 0, sub = 0;
                    for (int64_t i = 0; i < ny; i++) {
                        if (yh[i] != yr[i] && bad < 0) bad = i;
                        uint16_t a = yr[i] & 0x7fff;
                        uint16_t emax = d ? 0x7f80 : 0x7c00;
                        nan += a > emax;
                        inf += a == emax;
                        sub += a && a < (d ? 0x0080 : 0x0400);
                    }
                    CHECK(bad < 0, "%s: output %lld is 0x%04x, float32 path rounded 0x%04x", lab,
                          (long long)bad, bad < 0 ? 0 : yh[bad], bad < 0 ? 0 : yr[bad]);
                    CHECK(nan > 0 && (sc != 2 || inf > 0) && (sc != 1 || sub > 0),
                          "%s: the data should give NaN %lld, inf %lld, subnormal %lld outputs",
                          lab, (long long)nan, (long long)inf, (long long)sub);
                    const char *stg = tc_plan_staging(ph);
                    char feat[256];
                    tc_cpu_features(feat, sizeof feat);
                    CHECK(!(strstr(feat, "avx512f") && stg && stg[0]),
                          "%s: staged (%s) where the native path applies", lab, stg);
                }
                free(yh); free(yr); free(yf);
            }
            tc_plan_destroy(ph);
            tc_plan_destroy(pf);
            free(xf); free(wf); free(bf); free(xh); free(wh); free(bh);
        }
}

/* cpu.conv.igemm-bf16's depthwise row kernel (tc__bf16_dw_row) on a row
 * of nw pixels (register blocks of pixels sharing their input loads) bit
 * for bit against the same pixels one call each (the per-pixel form the
 * edge pixels use): 9, 6 and 3 taps, stride 1 and 2, every block
 * remainder, partial 32-channel blocks, residual, every activation, NaN,
 * infinities, subnormal and huge inputs. */
static float dw_bf16_f(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static void conv_dw_bf16_row_bits(void) {
    if (!selected(TC__KNOB_TEST_ALGO, "cpu.conv.igemm-bf16")) return;
    if (!(tc__cpu_detect() & TC__CPU_AVX512BF16)) return;
    static const int64_t Cs[] = {5, 32, 40, 70};
    th_rng r = th_rng_for(795000);
    int ncase = 0;
    for (int ci = 0; ci < 4; ci++)
        for (int S = 1; S <= 2; S++)
            for (int nt = 3; nt <= 9; nt += 3)
                for (int64_t nw = 1; nw <= 30; nw += (nw < 20 ? 1 : 5)) {
                    const int64_t C = Cs[ci], Cb = (C + 31) / 32 * 32, W = S * (nw - 1) + 3;
                    const int act = (int)((nw + nt + ci) % 7), hasres = (nw + S) % 2;
                    uint16_t *x = malloc(2 * (size_t)(3 * W * C)), *res = malloc(2 * (size_t)(nw * C));
                    uint16_t *y1 = malloc(2 * (size_t)(nw * C + 64)), *y2 = malloc(2 * (size_t)(nw * C + 64));
                    float *w = malloc(sizeof(float) * (size_t)(Cb * 9)), *b = malloc(sizeof(float) * (size_t)Cb);
                    for (int64_t i = 0; i < 3 * W * C; i++) {
                        float v = (float)th_uniform(&r, -2, 2);
                        tc_float_to_bfloat16(&x[i], &v, 1);
                        if (i % 101 == 17) x[i] = 0x7fc0;                 /* NaN */
                        if (i % 103 == 29) x[i] = i % 2 ? 0x7f80 : 0xff80; /* +-inf */
                        if (i % 107 == 41) x[i] = 0x0003;                 /* subnormal */
                        if (i % 109 == 53) x[i] = 0x7f00;                 /* 1.7e38 */
                    }
                    for (int64_t i = 0; i < Cb * 9; i++) w[i] = (float)th_uniform(&r, -1, 1);
                    for (int64_t i = 0; i < Cb; i++) b[i] = (float)th_uniform(&r, -1, 1);
                    /* nt taps: the last nt / 3 rows of the 3x3 (as the rows a
                     * zeros border leaves), row g at x + g W C */
                    int64_t off[9];
                    int widx[9];
                    for (int j = 0; j < nt; j++) {
                        int row = 3 - nt / 3 + j / 3;
                        off[j] = ((int64_t)(j / 3) * W + j % 3) * C;
                        widx[j] = row * 3 + j % 3;
                    }
                    /* the residual: minus the sum rounded to bfloat16, so the
                     * output is the sum's low bits, where the order of the
                     * float32 sums shows (weights and bias packed per 32
                     * channels as [16 even][16 odd]) */
                    for (int64_t o = 0; o < nw; o++)
                        for (int64_t c = 0; c < C; c++) {
                            const int64_t l = (c / 32) * 32 + (c % 2 ? 16 : 0) + (c % 32) / 2;
                            double sum = b[l];
                            for (int j = 0; j < nt; j++)
                                sum += (double)dw_bf16_f(x[off[j] + o * S * C + c]) *
                                       w[(c / 32) * 32 * 9 + widx[j] * 32 + l % 32];
                            float v = (float)-sum;
                            tc_float_to_bfloat16(&res[o * C + c], &v, 1);
                        }
                    memset(y1, 0x5a, 2 * (size_t)(nw * C + 64));
                    memset(y2, 0x5a, 2 * (size_t)(nw * C + 64));
                    const uint16_t *rp = hasres ? res : NULL;
                    tc__bf16_dw_row(x, C, S * C, off, widx, nt, w, 9, b, C, nw, y1, rp, act);
                    for (int64_t o = 0; o < nw; o++)
                        tc__bf16_dw_row(x + o * S * C, C, 0, off, widx, nt, w, 9, b, C, 1, y2 + o * C,
                                        rp ? rp + o * C : NULL, act);
                    int64_t bad = -1;
                    for (int64_t i = 0; i < nw * C + 64 && bad < 0; i++)
                        if (y1[i] != y2[i]) bad = i;
                    CHECK(bad < 0, "bf16 depthwise row C%lld stride %d taps %d width %lld act %d res %d: "
                          "element %lld 0x%04x, per pixel 0x%04x", (long long)C, S, nt, (long long)nw,
                          act, hasres, (long long)bad, bad < 0 ? 0 : y1[bad], bad < 0 ? 0 : y2[bad]);
                    ncase++;
                    free(x); free(res); free(y1); free(y2); free(w); free(b);
                }
    CHECK(ncase == 4 * 2 * 3 * 22, "bf16 depthwise row: %d cases", ncase);
}

static void conv_cases(void) {
    th_rng r = th_rng_for(2002);
    uint64_t salt = 500000;
    const int quick = th_g.quick;
    /* A. padding modes x padding kinds x stride/dilation, 1D/2D/3D */
    static const int64_t sd[3][2] = {{1, 1}, {2, 1}, {1, 2}};
    for (int d = 1; d <= 3; d++)
        for (int pm = 0; pm < 4; pm++)
            for (int pk = 0; pk < 3; pk++)
                for (int v = 0; v < 3; v++) {
                    if (pk == TC_PADDING_SAME && sd[v][0] != 1) continue;
                    if (quick && (pm + pk + v) % 2) continue;
                    cspec s = cspec_base(d);
                    s.pmode = (tc_padding_mode)pm;
                    s.pkind = (tc_padding_kind)pk;
                    for (int i = 0; i < d; i++) {
                        s.stride[i] = sd[v][0];
                        s.dil[i] = sd[v][1];
                        s.pad[i] = 1 + (i + v) % 2;
                    }
                    s.bias = (pm + v) % 2;
                    s.N = 1 + (v % 2);
                    s.threads = 1 + (int)(salt % 3);
                    s.extra = (d == 2 && pk == 0 && v == 0 && pm < 2) * 2;
                    conv_both(s, salt++);
                }
    /* A'. a 2D layer whose first axis has size 1 with zeros padding on it:
     * its one output row reads the padding, not the input (a solver for 1D
     * layers must not take it as one); and the same in replicate mode */
    for (int pm = 0; pm < 3; pm += 2) {
        cspec s = cspec_base(2);
        s.N = 3; s.C = 6; s.K = 6; s.G = 3;
        s.n[0] = 1; s.n[1] = 8; s.m[0] = 1; s.m[1] = 4;
        s.stride[0] = s.stride[1] = 3; s.dil[0] = 3; s.dil[1] = 2;
        s.pad[0] = 1; s.pad[1] = 0;
        s.pmode = (tc_padding_mode)pm;
        s.threads = 1;
        conv_both(s, salt++);
    }
    /* B. groups, 1x1 and even kernels, big stride/dilation, edge paddings */
    struct { int64_t C, K, G; } grp[] = {{4, 4, 4}, {3, 5, 1}, {6, 9, 3}, {2, 6, 2}, {1, 1, 1}};
    for (size_t g = 0; g < sizeof grp / sizeof grp[0]; g++)
        for (int d = 1; d <= 3; d++) {
            cspec s = cspec_base(d);
            s.C = grp[g].C; s.K = grp[g].K; s.G = grp[g].G;
            s.pmode = (tc_padding_mode)((g + d) % 4);
            s.pkind = TC_PADDING_EXPLICIT;
            for (int i = 0; i < d; i++) s.pad[i] = 1;
            s.bias = (int)(g % 2);
            s.N = 1 + (int64_t)(g % 3);
            conv_both(s, salt++);
        }
    for (int d = 1; d <= 3; d++) {
        cspec s = cspec_base(d); /* 1x1 kernel, stride 2 */
        for (int i = 0; i < d; i++) { s.m[i] = 1; s.stride[i] = 2; }
        s.bias = 1;
        conv_both(s, salt++);
        s = cspec_base(d); /* even kernel, same padding, dilation 2 */
        for (int i = 0; i < d; i++) { s.m[i] = 2 + (i % 2) * 2; s.dil[i] = 2; }
        s.pkind = TC_PADDING_SAME;
        s.pmode = (tc_padding_mode)(d % 4);
        conv_both(s, salt++);
        s = cspec_base(d); /* stride 3, dilation 3 */
        for (int i = 0; i < d; i++) { s.stride[i] = 3; s.dil[i] = 3 - (i % 2); s.m[i] = 2; }
        s.pmode = TC_PADDING_REPLICATE;
        for (int i = 0; i < d; i++) s.pad[i] = 2;
        conv_both(s, salt++);
        s = cspec_base(d); /* reflect with the largest padding allowed */
        s.pmode = TC_PADDING_REFLECT;
        for (int i = 0; i < d; i++) { s.pad[i] = s.n[i] - 1; s.m[i] = 3; }
        conv_both(s, salt++);
        s = cspec_base(d); /* circular with padding = input size */
        s.pmode = TC_PADDING_CIRCULAR;
        for (int i = 0; i < d; i++) { s.pad[i] = s.n[i]; s.m[i] = 2; s.stride[i] = 2; }
        conv_both(s, salt++);
        s = cspec_base(d); /* kernel as large as the padded input: 1 output */
        s.pmode = TC_PADDING_ZEROS;
        for (int i = 0; i < d; i++) { s.pad[i] = 1; s.m[i] = s.n[i] + 2; }
        if (d == 3) s.C = s.K = s.G = 2;
        conv_both(s, salt++);
        s = cspec_base(d); /* batch 3, 1-element spatial axes */
        s.N = 3;
        for (int i = 0; i < d; i++) { s.n[i] = 1 + (i == d - 1) * 4; s.m[i] = 1 + (i == d - 1); }
        s.pmode = TC_PADDING_ZEROS;
        s.bias = 1;
        conv_both(s, salt++);
    }
    /* D. layer-sized cases: the blocking edges of the fast conv solvers
     * (several KC slices, partial MR panels, several column blocks, K split
     * over threads, tall and wide channel counts) in every padding mode */
    {
        struct { int nsp; int64_t N, C, K, G, n0, n1, n2, m, st, dl, pad; int pm, bias; } L[] = {
            {2, 2, 40, 30, 1, 21, 23, 1, 3, 1, 1, 1, 1, 1},  /* R=360 > KC, P=483 */
            {2, 1, 64, 29, 1, 7, 7, 1, 3, 1, 1, 1, 0, 0},    /* P=49: K split */
            {1, 3, 17, 33, 1, 700, 1, 1, 5, 2, 1, 2, 2, 1},  /* 1D stride 2 */
            {3, 1, 8, 20, 1, 9, 10, 11, 3, 1, 1, 1, 2, 1},   /* 3D replicate */
            {2, 1, 36, 44, 2, 17, 19, 1, 5, 1, 2, 4, 3, 0},  /* groups, dil 2, circular */
            {2, 1, 3, 24, 1, 37, 41, 1, 7, 2, 1, 3, 0, 1},   /* conv1-like 7x7/2 */
            {2, 1, 3, 70, 1, 37, 231, 1, 7, 2, 1, 3, 1, 0}, /* conv1-like, 116 wide: 6+2 vectors */
            {2, 2, 2, 9, 1, 12, 192, 1, 3, 1, 1, 1, 2, 1},  /* C 2, 192 wide: 2 tiles of 6 vectors */
            {1, 1, 2, 3, 1, 50000, 1, 1, 3, 1, 1, 1, 1, 1}, /* C 2, a row past the direct buffer */
            {1, 2, 1, 5, 1, 777, 1, 1, 4, 3, 2, 4, 3, 0},   /* C 1, stride 3, dil 2, circular */
            {2, 2, 48, 20, 1, 13, 11, 1, 1, 1, 1, 0, 0, 1},  /* 1x1 */
            {2, 1, 20, 48, 1, 15, 13, 1, 1, 2, 1, 0, 0, 0},  /* 1x1 stride 2 */
            {2, 2, 19, 19, 19, 29, 30, 1, 3, 1, 1, 1, 1, 1}, /* depthwise, reflect */
            {2, 1, 16, 48, 16, 17, 35, 1, 3, 2, 1, 1, 2, 0}, /* depthwise x3, stride 2 */
            {1, 2, 8, 8, 8, 333, 1, 1, 7, 1, 3, 9, 3, 1},    /* depthwise 1D dil 3, circular */
            {1, 2, 20, 24, 1, 5000, 1, 1, 5, 1, 2, 4, 1, 1}, /* long 1D: interior blocks read in place */
            {3, 1, 5, 5, 5, 6, 7, 19, 3, 1, 1, 1, 0, 1},     /* depthwise 3D */
            /* depthwise 3x3 read in place (cpu.conv.depthwise's direct path):
             * fewer rows than a 4-row block, several 64-column chunks, edge
             * columns in every mode, stride 2, no padding, tiny planes */
            {2, 1, 8, 8, 8, 3, 150, 1, 3, 1, 1, 1, 3, 1},    /* 3 rows, 64+64+22 columns, circular */
            {2, 2, 6, 12, 6, 9, 100, 1, 3, 2, 1, 1, 1, 0},   /* x2, stride 2, 50 columns, reflect */
            {2, 1, 5, 5, 5, 10, 33, 1, 3, 2, 1, 0, 0, 1},    /* stride 2, no padding */
            {2, 1, 4, 4, 4, 2, 2, 1, 3, 1, 1, 1, 2, 1},      /* 2x2 input, replicate */
            {2, 1, 3, 3, 3, 7, 1, 1, 3, 1, 1, 1, 3, 0},      /* one column, circular */
            {3, 1, 6, 6, 6, 5, 9, 17, 3, 2, 1, 1, 1, 0},     /* 3D stride 2, reflect */
            {2, 1, 4, 8, 4, 15, 20, 1, 3, 1, 2, 2, 3, 1},    /* x2, dilation 2, circular */
            {2, 1, 512, 5, 1, 9, 7, 1, 3, 1, 1, 1, 1, 1},    /* C = 512: Winograd's error */
            {2, 3, 17, 19, 1, 13, 17, 1, 3, 1, 1, 2, 3, 1},  /* pad 2 circular, odd tiles */
            /* Winograd F(4x4,3x3) blocking edges: tile rows longer than 16 tiles,
             * many 32-tile blocks, grouped Cg/Kg, one 16-tile block split over K */
            {2, 2, 24, 18, 3, 10, 13, 1, 3, 1, 1, 1, 2, 0},  /* groups 3, replicate */
            {2, 1, 20, 33, 1, 70, 75, 1, 3, 1, 1, 1, 2, 1},  /* TW = 19, 11 blocks */
            {2, 1, 48, 40, 1, 14, 14, 1, 3, 1, 1, 1, 0, 1},  /* 16 tiles, K split */
            {2, 2, 18, 30, 2, 11, 21, 1, 3, 1, 1, 1, 2, 1},  /* groups 2, replicate */
            {3, 2, 20, 35, 1, 7, 9, 6, 3, 2, 1, 1, 3, 1},    /* 3D stride 2, C/K past 16 */
            {3, 1, 24, 36, 3, 6, 7, 9, 3, 1, 2, 2, 1, 0},    /* 3D groups, dil 2, reflect */
            /* Winograd raw-weight variants: reductions of several 64-step
             * chunks (accumulated), panel pairs with a single last panel,
             * 8-row panels on 32-tile blocks with a short tail */
            {2, 1, 100, 60, 1, 14, 14, 1, 3, 1, 1, 1, 1, 1}, /* 16 tiles, kc 100, reflect */
            {2, 2, 70, 30, 1, 17, 23, 1, 3, 1, 1, 1, 3, 0},  /* 60 tiles, 8-row panels, circular */
            {3, 1, 30, 20, 1, 5, 6, 7, 3, 1, 1, 1, 2, 1},    /* 3D kc 90, replicate */
            /* Winograd edge patches by permute: mapped columns
             * in the same, the previous and the next vector of a segment,
             * several runs a segment, rows split over segments (circular's
             * far columns stay scalar) */
            {2, 1, 6, 5, 1, 11, 66, 1, 3, 1, 1, 2, 1, 1},   /* pad 2 reflect, 3 segments */
            {2, 2, 5, 7, 1, 5, 3, 1, 3, 1, 1, 1, 2, 0},     /* 5x3 replicate, runs of 1 tile */
            {2, 1, 4, 6, 1, 9, 30, 1, 3, 1, 1, 2, 3, 1},    /* pad 2 circular */
            {2, 1, 7, 3, 1, 6, 17, 1, 3, 1, 1, 1, 1, 0},    /* 17 wide reflect: vector edges */
            /* cpu.conv.1d: rows of many 64-wide tiles (interior ones read in
             * place), W not a multiple of 16, K in blocks of 6 and 5, strides
             * and dilations through the phase-split window, groups, blocks
             * split over threads */
            {1, 2, 24, 40, 1, 1003, 1, 1, 5, 1, 1, 2, 1, 1}, /* K 40 = 6x5 + 5x2, reflect */
            {1, 2, 13, 17, 1, 777, 1, 1, 7, 2, 2, 6, 3, 0},  /* stride 2, dil 2, circular */
            {1, 1, 12, 14, 2, 2050, 1, 1, 3, 1, 2, 2, 0, 1}, /* groups 2, dil 2, zeros */
            {1, 1, 7, 64, 1, 50, 1, 1, 3, 1, 1, 1, 2, 1},    /* one tile: blocks split */
            {1, 1, 9, 12, 1, 500, 1, 1, 4, 3, 1, 3, 1, 1},   /* stride 3, even taps */
            {1, 3, 16, 16, 1, 64, 1, 1, 5, 1, 1, 2, 2, 0},   /* one whole tile, replicate */
        };
        for (size_t i = 0; i < sizeof L / sizeof L[0]; i++) {
            if (quick && i % 2) continue;
            cspec s;
            memset(&s, 0, sizeof s);
            s.nsp = L[i].nsp;
            s.N = L[i].N; s.C = L[i].C; s.K = L[i].K; s.G = L[i].G;
            int64_t nn[3] = {L[i].n0, L[i].n1, L[i].n2};
            for (int a = 0; a < 3; a++) {
                s.n[a] = a < s.nsp ? nn[a] : 1;
                s.m[a] = a < s.nsp ? L[i].m : 1;
                s.stride[a] = a < s.nsp ? L[i].st : 1;
                s.dil[a] = a < s.nsp ? L[i].dl : 1;
                s.pad[a] = a < s.nsp ? L[i].pad : 0;
            }
            s.pkind = TC_PADDING_EXPLICIT;
            s.pmode = (tc_padding_mode)L[i].pm;
            s.bias = L[i].bias;
            s.threads = 1 + (int)(i % 2);
            conv_both(s, salt++);
        }
    }
    /* E. 3D layers with 3x3 in the last two axes (Winograd F(4x4,3x3) per
     * depth tap, the taps summed in one GEMM): depth kernels 1 to 5, depth
     * stride and dilation, depth padding past one slice in every mode,
     * channel counts past the 14-row panels, grouped */
    {
        struct { int64_t N, C, K, G, d, h, w, kd, sd, dd, pd; int pm, bias; } E[] = {
            {1, 32, 32, 1, 8, 9, 10, 3, 1, 1, 1, 0, 1},   /* the 3D layer's shape, small */
            {2, 6, 31, 1, 7, 13, 6, 3, 2, 1, 2, 0, 0},    /* depth stride 2, 2 zero slices */
            {1, 5, 9, 1, 6, 5, 17, 5, 1, 2, 4, 3, 1},     /* kd 5, dilation 2, circular */
            {1, 12, 30, 3, 5, 11, 9, 1, 1, 1, 0, 1, 1},   /* 1x3x3, groups 3 */
            {2, 17, 15, 1, 4, 6, 7, 2, 1, 1, 1, 2, 0},    /* even depth kernel, replicate */
            {1, 3, 29, 1, 9, 4, 21, 3, 3, 1, 2, 1, 1},    /* depth stride 3, reflect */
        };
        for (size_t i = 0; i < sizeof E / sizeof E[0]; i++) {
            if (quick && i % 2) continue;
            cspec s = cspec_base(3);
            s.N = E[i].N; s.C = E[i].C; s.K = E[i].K; s.G = E[i].G;
            s.n[0] = E[i].d; s.n[1] = E[i].h; s.n[2] = E[i].w;
            s.m[0] = E[i].kd; s.m[1] = s.m[2] = 3;
            s.stride[0] = E[i].sd; s.dil[0] = E[i].dd;
            s.pad[0] = E[i].pd; s.pad[1] = 1; s.pad[2] = 1 + (int64_t)(i % 2);
            s.pkind = TC_PADDING_EXPLICIT;
            s.pmode = (tc_padding_mode)E[i].pm;
            s.bias = E[i].bias;
            s.threads = 1 + (int)(i % 3);
            conv_both(s, salt++);
        }
    }
    /* C. random cases */
    int nrand = quick ? 25 : 120;
    for (int c = 0; c < nrand;) {
        cspec s;
        memset(&s, 0, sizeof s);
        s.nsp = (int)th_int(&r, 1, 3);
        s.G = th_int(&r, 1, 3);
        s.C = s.G * th_int(&r, 1, 3);
        s.K = s.G * th_int(&r, 1, 3);
        s.N = th_int(&r, 1, 3);
        int64_t maxn = s.nsp == 1 ? 30 : s.nsp == 2 ? 12 : 6;
        for (int i = 0; i < 3; i++) {
            s.n[i] = i < s.nsp ? th_int(&r, 1, maxn) : 1;
            s.m[i] = i < s.nsp ? th_int(&r, 1, 4) : 1;
            s.stride[i] = i < s.nsp ? th_int(&r, 1, 3) : 1;
            s.dil[i] = i < s.nsp ? th_int(&r, 1, 3) : 1;
            s.pad[i] = i < s.nsp ? th_int(&r, 0, 3) : 0;
        }
        s.pkind = (tc_padding_kind)th_int(&r, 0, 2);
        if (s.pkind == TC_PADDING_SAME)
            for (int i = 0; i < 3; i++) s.stride[i] = 1;
        s.pmode = (tc_padding_mode)th_int(&r, 0, 3);
        s.bias = (int)th_int(&r, 0, 1);
        s.threads = (int)th_int(&r, 1, 3);
        s.extra = (c % 30 == 0) * 2;
        if (!cspec_valid(&s)) continue;
        run_conv(&s, th_int(&r, 0, 1) ? TC_FLOAT64 : TC_FLOAT32, 600000 + c);
        c++;
    }
}

/* ------------------------------------------------------------------ */
/* GEMM                                                                 */
/* ------------------------------------------------------------------ */
static long g_ngemm;
static void run_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, int ldx[3],
                     double alpha, double beta, int threads, int extra,
                     tc_dtype dt, uint64_t salt) {
    th_rng r = th_rng_for(salt);
    g_ngemm++;
    inst I;
    memset(&I, 0, sizeof I);
    I.op = TC_OP_GEMM;
    I.dt = dt;
    I.threads = threads;
    I.extra = extra;
    int64_t arows = ta ? k : m, acols = ta ? m : k, brows = tb ? n : k, bcols = tb ? k : n;
    /* ldx: -1 = 0 in the descriptor (tight), else tight + ldx */
    int64_t lda = acols + (ldx[0] > 0 ? ldx[0] : 0);
    int64_t ldb = bcols + (ldx[1] > 0 ? ldx[1] : 0);
    int64_t ldc = n + (ldx[2] > 0 ? ldx[2] : 0);
    tc_gemm_desc_init(&I.gd);
    I.gd.dtype = dt;
    I.gd.trans_a = ta;
    I.gd.trans_b = tb;
    I.gd.m = m; I.gd.n = n; I.gd.k = k;
    I.gd.lda = ldx[0] < 0 ? 0 : lda;
    I.gd.ldb = ldx[1] < 0 ? 0 : ldb;
    I.gd.ldc = ldx[2] < 0 ? 0 : ldc;
    I.gd.alpha = alpha;
    I.gd.beta = beta;
    snprintf(I.label, sizeof I.label, "%s %c%c m=%lld n=%lld k=%lld lda=%lld ldb=%lld "
             "ldc=%lld alpha=%g beta=%g t%d", dt_label(dt),
             ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)m, (long long)n, (long long)k,
             (long long)I.gd.lda, (long long)I.gd.ldb, (long long)I.gd.ldc, alpha,
             beta, threads);

    /* A and B with NaN in the padding columns: reading them shows */
    int64_t na = (arows - 1) * lda + acols, nb = (brows - 1) * ldb + bcols;
    void *a = tb_calloc(na, dt), *b = tb_calloc(nb, dt);
    double *ad = tb_dcalloc(arows * lda), *bd = tb_dcalloc(brows * ldb);
    for (int64_t i = 0; i < na; i++) tb_st(a, i, dt, (i % lda) < acols ? th_value(&r) : NAN);
    for (int64_t i = 0; i < nb; i++) tb_st(b, i, dt, (i % ldb) < bcols ? th_value(&r) : NAN);
    for (int64_t i = 0; i < na; i++) ad[i] = tb_ld(a, i, dt);
    for (int64_t i = 0; i < nb; i++) bd[i] = tb_ld(b, i, dt);
    double *c0 = NULL, *cabs = NULL;
    double *model = tb_dcalloc(m * ldc);
    if (beta != 0.0) {
        c0 = tb_dcalloc(m * n);
        cabs = tb_dcalloc(m * n);
        for (int64_t i = 0; i < m * n; i++) {
            c0[i] = th_value(&r);
            if (dt != TC_FLOAT64) { /* exact in the dtype */
                double one[1];
                tb_st(one, 0, dt, c0[i]);
                c0[i] = tb_ld(one, 0, dt);
            }
            cabs[i] = fabs(c0[i]);
            model[(i / n) * ldc + i % n] = c0[i];
        }
    }
    model_gemm(ta, tb, m, n, k, alpha, ad, lda, bd, ldb, beta, model, ldc);
    double *modell = tb_dcalloc(m * n);
    for (int64_t i = 0; i < m * n; i++) modell[i] = model[(i / n) * ldc + i % n];

    I.a = a;
    I.b = b;
    I.c_init = c0;
    I.out_nd = 2;
    I.out_shape[0] = m;
    I.out_shape[1] = n;
    memset(&I.out_view, 0, sizeof I.out_view);
    I.out_view.nd = 2;
    I.out_view.shape[0] = m;
    I.out_view.shape[1] = n;
    I.out_view.strides[0] = ldc;
    I.out_view.strides[1] = 1;
    I.out_view.span = (m - 1) * ldc + n;
    I.out_view.count = m * n;
    I.out_view.layout = TB_PITCH;
    inst_save_input(&I, a, (size_t)na * tb_esize(dt));
    inst_save_input(&I, b, (size_t)nb * tb_esize(dt));

    inst D = I, A = I;
    D.n_in = A.n_in = 0;
    void *aa = abs_copy(a, na, dt), *ba = abs_copy(b, nb, dt);
    A.a = aa;
    A.b = ba;
    A.c_init = cabs;
    A.gd.alpha = fabs(alpha);
    A.gd.beta = fabs(beta);
    check_instance(&I, &D, &A, modell);

    inst_free_saved(&I);
    free(a); free(b); free(ad); free(bd); free(c0); free(cabs); free(model);
    free(modell); free(aa); free(ba);
}

static void gemm_cases(void) {
    th_rng r = th_rng_for(3003);
    static const int64_t sizes[] = {1, 7, 33, 129};
    const int ns = th_g.quick ? 3 : 4;
    static const double alphas[] = {1.0, -0.5, 2.25}, betas[] = {0.0, 1.0, -0.75};
    uint64_t salt = 900000;
    int c = 0;
    for (int im = 0; im < ns; im++)
        for (int in = 0; in < ns; in++)
            for (int ik = 0; ik < ns; ik++)
                for (int t = 0; t < 4; t++, c++) {
                    int ldx[3];
                    for (int i = 0; i < 3; i++) {
                        int v = (int)th_int(&r, 0, 3);
                        ldx[i] = v == 0 ? -1 : v == 1 ? 0 : (int)th_int(&r, 1, 5);
                    }
                    double alpha = alphas[c % 3], beta = betas[(c / 3) % 3];
                    int threads = 1 + (int)th_int(&r, 0, 2);
                    int extra = (c % 37 == 0) * 2;
                    tc_dtype dt = (c + im) % 2 ? TC_FLOAT64 : TC_FLOAT32;
                    if (c % 5 == 0) dt = c % 10 ? TC_FLOAT16 : TC_BFLOAT16;
                    run_gemm(t & 1, t >> 1, sizes[im], sizes[in], sizes[ik], ldx,
                             alpha, beta, threads, extra, dt, salt++);
                }
    /* large enough for the Strassen-type solvers (one level needs >= 512) */
    int ld0[3] = {-1, 0, -1}, ld1[3] = {3, 1, 5};
    run_gemm(0, 0, 513, 514, 515, ld0, 1.0, 0.0, 2, 0, TC_FLOAT32, salt++);
    if (!th_g.quick) {
        run_gemm(0, 1, 515, 520, 517, ld1, -0.5, 0.5, 2, 0, TC_FLOAT32, salt++);
        run_gemm(1, 0, 512, 512, 600, ld1, 2.0, 0.0, 2, 0, TC_FLOAT64, salt++);
    }
}

/* ------------------------------------------------------------------ */
/* Planner checks                                                       */
/* ------------------------------------------------------------------ */
static void planner_cases(void) {
    /* ESTIMATE must not pick a reference solver for ordinary problems */
    TH_BEGIN("planner: ESTIMATE avoids the reference for a 2D filter");
    {
        tc_filter_desc d;
        tc_filter_desc_init(&d);
        d.ndim = 2;
        d.shape[0] = d.shape[1] = 128;
        d.mask_shape[0] = d.mask_shape[1] = 3;
        float mask[9];
        for (int i = 0; i < 9; i++) mask[i] = 0.1f * (float)(i + 1);
        tc_plan *pl = NULL;
        if (CHECK_STATUS(tc_plan_filter(&pl, NULL, &d, mask, NULL), TC_OK)) {
            const char *a = tc_plan_algorithm(pl);
            CHECK(strncmp(a, "ref.", 4) != 0, "ESTIMATE chose '%s'", a);
            printf("  2D filter 128x128 3x3: ESTIMATE chose %s\n", a);
        }
        tc_plan_destroy(pl);
        /* MEASURE: works, and the mask (the only caller array) is intact */
        float keep[9];
        memcpy(keep, mask, sizeof keep);
        tc_plan_options opt;
        tc_plan_options_init(&opt);
        opt.flags = TC_PLAN_MEASURE;
        if (CHECK_STATUS(tc_plan_filter(&pl, NULL, &d, mask, &opt), TC_OK))
            printf("  2D filter 128x128 3x3: MEASURE chose %s\n", tc_plan_algorithm(pl));
        CHECK(memcmp(keep, mask, sizeof keep) == 0, "MEASURE changed the mask");
        tc_plan_destroy(pl);
    }
    TH_END();
    TH_BEGIN("planner: ESTIMATE avoids the reference for conv and gemm");
    {
        tc_conv_desc c;
        tc_conv_desc_init(&c);
        c.in_channels = 8;
        c.out_channels = 16;
        c.in_size[0] = c.in_size[1] = 32;
        c.kernel_size[0] = c.kernel_size[1] = 3;
        tc_plan *pl = NULL;
        if (CHECK_STATUS(tc_plan_conv(&pl, NULL, &c, NULL), TC_OK))
            CHECK(strncmp(tc_plan_algorithm(pl), "ref.", 4) != 0, "conv: ESTIMATE "
                  "chose '%s'", tc_plan_algorithm(pl));
        tc_plan_destroy(pl);
        tc_gemm_desc g;
        tc_gemm_desc_init(&g);
        g.m = g.n = g.k = 64;
        if (CHECK_STATUS(tc_plan_gemm(&pl, NULL, &g, NULL), TC_OK))
            CHECK(strncmp(tc_plan_algorithm(pl), "ref.", 4) != 0, "gemm: ESTIMATE "
                  "chose '%s'", tc_plan_algorithm(pl));
        tc_plan_destroy(pl);
    }
    TH_END();
}

/* Medium problems executed many times from 4 threads at once: a solver
 * with hidden shared state shows as mismatching results. */
static void concurrency_cases(void) {
    const int reps = th_g.quick ? 8 : 12;
    static const int64_t in[2] = {48, 40}, m[2] = {5, 5};
    fspec f = fspec_base(2, 0, in, m);
    f.threads = 2;
    f.extra = reps;
    if (selected(TC__KNOB_TEST_OPS, "filter")) {
        run_filter(&f, TC_FLOAT32, 7000001);
        f.mode = TC_MODE_CONSTANT;
        f.cval = 0.5;
        f.kind = TC_FILTER_CONVOLVE;
        run_filter(&f, TC_FLOAT64, 7000002);
    }
    cspec c = cspec_base(2);
    c.C = c.K = 8;
    c.G = 1;
    c.n[0] = c.n[1] = 16;
    c.m[0] = c.m[1] = 3;
    c.pad[0] = c.pad[1] = 1;
    c.bias = 1;
    c.extra = reps;
    if (selected(TC__KNOB_TEST_OPS, "conv")) run_conv(&c, TC_FLOAT32, 7000003);
    int ldx[3] = {-1, 3, 0};
    if (selected(TC__KNOB_TEST_OPS, "gemm")) {
        run_gemm(0, 1, 96, 80, 72, ldx, 1.5, 0.0, 2, reps, TC_FLOAT32, 7000004);
        run_gemm(1, 0, 64, 72, 80, ldx, -1.0, 0.5, 3, reps, TC_FLOAT64, 7000005);
    }
}

/* Row position (cpu.filter.direct-avx2 / .avx512): an output row must get the same
 * value whatever row block it falls in (a 4-row block, a 2-3-row remainder,
 * the one-row path). The rows [r0, r0 + k) of a whole-array run against a
 * run on the input rows [r0 - b, r0 + k + a) only (b, a: the window's reach
 * along the row axis, every other axis whole), bitwise, for k = 1..6 and
 * four starts: each kept row lands at another place in the blocks (the
 * one-row path takes the last row of a run, kept when the origin leaves no
 * reach after it: (m - 1) / 2). Masks wider than a vector in float64 (AVX2
 * 5, AVX-512 9) and float32 (AVX2 9, AVX-512 17). */
static long g_nrowpos;
static void row_position_cases(void) {
    static const char *const algos[] = {"cpu.filter.direct-avx2", "cpu.filter.direct-avx512"};
    static const struct {
        int nd;
        int64_t n[3], m[3], org[3];
    } cs[] = {
        {2, {41, 45, 1}, {5, 5, 1}, {0, 0, 0}},
        {2, {41, 45, 1}, {5, 5, 1}, {2, -2, 0}},
        {2, {40, 53, 1}, {9, 9, 1}, {4, 0, 0}},
        {2, {40, 53, 1}, {9, 9, 1}, {1, 0, 0}},
        {2, {40, 70, 1}, {3, 17, 1}, {1, 3, 0}},
        {3, {6, 23, 19}, {5, 5, 5}, {2, 2, 2}},
        {3, {6, 22, 37}, {3, 5, 9}, {0, 2, 4}},
    };
    for (int a = 0; a < 2; a++) {
        solver *sv = NULL;
        for (int i = 0; i < g_nsol; i++)
            if (!strcmp(g_sol[i].info.name, algos[a])) sv = &g_sol[i];
        if (!sv || !sv->info.available) continue;
        for (int dt = 0; dt < 2; dt++)
            for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
                const int nd = cs[c].nd, h = nd - 2;
                const size_t es = dt ? 8 : 4;
                /* 3-D view: D planes x H rows x W */
                const int64_t D = nd == 3 ? cs[c].n[0] : 1, H = cs[c].n[h], W = cs[c].n[nd - 1];
                const int64_t mh = cs[c].m[h], ch = mh / 2 + cs[c].org[h];
                const int64_t b = ch, af = mh - 1 - ch; /* correlate: rows [r - b, r + af] */
                tc_filter_desc d;
                tc_filter_desc_init(&d);
                d.dtype = dt ? TC_FLOAT64 : TC_FLOAT32;
                d.ndim = nd;
                d.kind = TC_FILTER_CORRELATE;
                d.mode = TC_MODE_REFLECT;
                int64_t mt = 1;
                for (int i = 0; i < nd; i++) {
                    d.shape[i] = cs[c].n[i];
                    d.mask_shape[i] = cs[c].m[i];
                    d.origin[i] = cs[c].org[i];
                    mt *= cs[c].m[i];
                }
                th_rng r = th_rng_for(9100000 + 100 * (uint64_t)c + 10 * (uint64_t)dt + (uint64_t)a);
                const int64_t n = D * H * W;
                void *x = malloc((size_t)n * es), *y = malloc((size_t)n * es),
                     *msk = malloc((size_t)mt * es), *xs = malloc((size_t)n * es),
                     *ys = malloc((size_t)n * es);
                for (int64_t i = 0; i < n; i++) {
                    double v = th_value(&r);
                    if (dt) ((double *)x)[i] = v;
                    else ((float *)x)[i] = (float)v;
                }
                for (int64_t i = 0; i < mt; i++) {
                    double v = th_value(&r);
                    if (dt) ((double *)msk)[i] = v;
                    else ((float *)msk)[i] = (float)v;
                }
                tc_plan_options o;
                tc_plan_options_init(&o);
                o.algorithm = algos[a];
                tc_plan *whole = NULL;
                TH_BEGIN("row position %s %s %dD %lldx%lldx%lld mask %lldx%lldx%lld: whole",
                         algos[a], dt ? "f64" : "f32", nd, (long long)cs[c].n[0],
                         (long long)cs[c].n[1], (long long)(nd > 2 ? cs[c].n[2] : 1),
                         (long long)cs[c].m[0], (long long)cs[c].m[1],
                         (long long)(nd > 2 ? cs[c].m[2] : 1));
                int ok = CHECK_STATUS(tc_plan_filter(&whole, g_ctx[1], &d, msk, &o), TC_OK) &&
                         CHECK_STATUS(tc_execute_filter(whole, y, x, NULL), TC_OK);
                if (TH_END()) sv->pass++;
                else sv->fail++;
                g_nrowpos++;
                for (int64_t k = 1; k <= 6 && ok; k++)
                    for (int64_t r0 = b; r0 < b + 4 && r0 + k + af <= H; r0++) {
                        TH_BEGIN("row position %s %s %dD mask %lldx%lldx%lld: rows [%lld, %lld) "
                                 "of %lld from a run on %lld rows",
                                 algos[a], dt ? "f64" : "f32", nd, (long long)cs[c].m[0],
                                 (long long)cs[c].m[1], (long long)(nd > 2 ? cs[c].m[2] : 1),
                                 (long long)r0, (long long)(r0 + k), (long long)H,
                                 (long long)(k + b + af));
                        const int64_t hs = k + b + af;
                        tc_filter_desc ds = d;
                        ds.shape[h] = hs;
                        for (int64_t p = 0; p < D; p++)
                            memcpy((char *)xs + (size_t)(p * hs * W) * es,
                                   (char *)x + (size_t)((p * H + r0 - b) * W) * es,
                                   (size_t)(hs * W) * es);
                        tc_plan *sub = NULL;
                        if (CHECK_STATUS(tc_plan_filter(&sub, g_ctx[1], &ds, msk, &o), TC_OK) &&
                            CHECK_STATUS(tc_execute_filter(sub, ys, xs, NULL), TC_OK)) {
                            int64_t diff = 0, first = -1;
                            for (int64_t p = 0; p < D; p++)
                                for (int64_t j = 0; j < k; j++)
                                    for (int64_t w = 0; w < W; w++) {
                                        size_t at = (size_t)((p * H + r0 + j) * W + w) * es,
                                               as = (size_t)((p * hs + b + j) * W + w) * es;
                                        if (memcmp((char *)y + at, (char *)ys + as, es)) {
                                            if (first < 0) first = (p * H + r0 + j) * W + w;
                                            diff++;
                                        }
                                    }
                            CHECK(diff == 0, "%lld of %lld outputs differ in bits (first at "
                                  "flat index %lld)", (long long)diff, (long long)(D * k * W),
                                  (long long)first);
                        }
                        tc_plan_destroy(sub);
                        if (TH_END()) sv->pass++;
                        else sv->fail++;
                        g_nrowpos++;
                    }
                tc_plan_destroy(whole);
                free(x);
                free(y);
                free(msk);
                free(xs);
                free(ys);
            }
    }
}

int main(int argc, char **argv) {
    th_init(argc, argv);
    /* hermetic: no wisdom file of the user's changes what MEASURE or
     * WISDOM_ONLY planning does here */
    setenv("TILECONV_WISDOM", "", 1);
    solvers_load();
    for (int t = 1; t <= 3; t++) {
        if (tc_context_create(&g_ctx[t]) != TC_OK ||
            tc_context_set_threads(g_ctx[t], t) != TC_OK) {
            printf("cannot create a context: %s\n", tc_last_error());
            return 1;
        }
    }
    if (selected(TC__KNOB_TEST_OPS, "filter,conv,gemm")) planner_cases();
    if (selected(TC__KNOB_TEST_OPS, "filter")) filter_cases();
    if (selected(TC__KNOB_TEST_OPS, "filter")) row_position_cases();
    if (selected(TC__KNOB_TEST_OPS, "conv")) conv_cases();
    if (selected(TC__KNOB_TEST_OPS, "conv")) conv_ext_cases();
    if (selected(TC__KNOB_TEST_OPS, "conv")) conv_wg_depth_cases();
    if (selected(TC__KNOB_TEST_OPS, "conv")) conv_dw_half_cases();
    if (selected(TC__KNOB_TEST_OPS, "conv")) conv_dw_half_bits();
    if (selected(TC__KNOB_TEST_OPS, "conv")) conv_dw_bf16_row_bits();
    if (selected(TC__KNOB_TEST_OPS, "gemm")) gemm_cases();
    concurrency_cases();
    printf("\nproblem instances: %ld filter, %ld conv, %ld gemm; %ld row-position cases\n",
           g_nfilter, g_nconv, g_ngemm, g_nrowpos);
    printf("per algorithm:          passed   failed  skipped\n");
    for (int i = 0; i < g_nsol; i++) {
        solver *s = &g_sol[i];
        printf("  %-22s %7ld  %7ld  %7ld%s%s\n", s->info.name, s->pass, s->fail,
               s->skip, s->skip ? "  last skip: " : "", s->skip ? s->skip_reason : "");
    }
    for (int t = 1; t <= 3; t++) tc_context_destroy(g_ctx[t]);
    return th_finish();
}
