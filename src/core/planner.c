/* planner.c - choosing a solver (ESTIMATE / MEASURE / forced), executing
 * plans, packing strided caller arrays to the dense layout solvers see. */
#include "context.h"
#include "half.h"
#include "plan.h"
#include "wisdom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- cost model ---------------- */
double tc__problem_flops(const tc__problem *p) {
    if (p->op == TC_OP_GEMM) return 2.0 * p->m * p->n * p->k;
    return 2.0 * (double)tc__y_count(p) * (double)(p->C / p->G) *
           (double)(p->msk[0] * p->msk[1] * p->msk[2]);
}

double tc__problem_bytes(const tc__problem *p) {
    if (p->op == TC_OP_GEMM)
        return (double)p->esize *
               ((double)p->m * p->k + (double)p->k * p->n +
                (double)p->m * p->n * (p->beta != 0.0 ? 2.0 : 1.0));
    return (double)p->esize * ((double)tc__x_count(p) + (double)tc__y_count(p) +
                               (double)tc__w_count(p));
}

double tc__peak_flops(const tc__env *env) {
    /* per core: measured, or the microarchitecture's FMA rate
     * (src/core/machine.c); cores beyond the machine's count add nothing */
    int t = env->threads < tc_cpu_count() ? env->threads : tc_cpu_count();
    return (t > 0 ? t : 1) * tc__machine_flops_core();
}

double tc__peak_bandwidth(const tc__env *env) {
    double bw = tc__machine_bandwidth(); /* measured copy bandwidth, all cores */
    if (bw > 0) return env->threads >= 2 ? bw : 0.6 * bw;
    return env->threads >= 2 ? 30e9 : 18e9;
}

/* ---------------- planning ---------------- */
/* Reference solvers (the test oracles) are named "ref.*". */
int tc__solver_is_reference(const tc__solver *s) {
    return strncmp(s->name, "ref.", 4) == 0;
}

int tc__solver_is_transform(const tc__solver *s) {
    static const char *const fams[] = {"winograd", "fft", "strassen", "separable", "lowrank",
                                       "3xtf32"};
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++)
        if (strstr(s->name, fams[i])) return 1;
    return 0;
}

int tc__applicable(const tc__solver *s, const tc__problem *p, const tc__env *env, char *why,
                   size_t why_size) {
    if ((env->flags & TC_PLAN_DIRECT) && tc__solver_is_transform(s)) {
        if (why) snprintf(why, why_size, "a transform algorithm (the plan has TC_PLAN_DIRECT)");
        return 0;
    }
    if ((env->flags & TC_PLAN_MASK_AT_EXECUTE) && !(s->caps & TC__CAP_MASK_AT_EXECUTE)) {
        if (why)
            snprintf(why, why_size,
                     "takes its mask at plan time (the plan has TC_PLAN_MASK_AT_EXECUTE)");
        return 0;
    }
    return s->applicable(p, env, why, why_size);
}

static int tc__backend_ok(const tc__solver *s, tc_backend want) {
    return want == TC_BACKEND_AUTO || s->backend == want;
}

static tc_status tc__fill_random(void *buf, int64_t count, tc_dtype dt,
                                 uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < count; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        double v = (double)(s >> 11) * (1.0 / 9007199254740992.0) - 0.5;
        tc__store_d(buf, i, dt, v);
    }
    return TC_OK;
}

static size_t tc__round64(size_t v) { return (v + 63) & ~(size_t)63; }


/* Chooses solver s for the plan: its staged problem pl->sp, the staging
 * passes, and the workspace regions. The workspace holds, in order: the
 * solver's scratch; the dense (or staged) input; the dense (or staged)
 * output; staged weights and bias (conv) or B (gemm); the per-execute
 * packed weights (conv solvers with wpack; left out when the plan holds
 * its weights packed). */
static void tc__layout_workspace(tc_plan *pl, const tc__solver *s) {
    const tc__problem *p = &pl->p;
    tc__stage_problem(p, tc__solver_caps(s, p), &pl->sp);
    pl->stage = tc__stage_bits(p, tc__solver_caps(s, p));
    tc__stage_describe(p, pl->stage, pl->staging, sizeof pl->staging);
    const tc__problem *sp = &pl->sp;
    pl->solver_ws = s->workspace ? s->workspace(sp, &pl->env) : 0;
    size_t at = tc__round64(pl->solver_ws);
    int64_t xcnt = 0, ycnt = 0, wcnt = 0;
    if (p->op == TC_OP_FILTER) {
        if (pl->stage & TC__STAGE_DTYPE) pl->pack_x = pl->pack_y = 1;
        /* swap mode packs the caller's input as the solver's mask */
        if (pl->pack_x) xcnt = pl->lay.swap ? tc__w_count(p) : tc__x_count(p);
        if (pl->pack_y) ycnt = tc__y_count(p);
        /* TC_PLAN_MASK_AT_EXECUTE, convolve: the call's mask flipped for a
         * CPU solver (a CUDA solver reads it reversed: args->wflip) */
        if ((pl->env.flags & TC_PLAN_MASK_AT_EXECUTE) && pl->lay.flip &&
            s->backend != TC_BACKEND_CUDA)
            wcnt = tc__w_count(p);
    } else {
        /* the staged buffers as on the device (src/core/stage.c); conv:
         * the epilogue pass with residual == y reads the residual from y,
         * the solver then writes its output to the workspace. The host
         * passes the residual to a solver with the epilogue as given (.res
         * is the device path's). */
        const tc__stage_counts c = tc__stage_buffers(p, pl->stage);
        xcnt = c.x;
        ycnt = c.y;
        wcnt = c.w;
    }
    pl->x_off = at;
    at += tc__round64((size_t)xcnt * sp->esize);
    pl->y_off = at;
    at += tc__round64((size_t)ycnt * sp->esize);
    pl->wst_off = at;
    at += tc__round64((size_t)wcnt * sp->esize);
    pl->wp_off = at;
    if (p->op == TC_OP_CONV && s->wpack && s->backend != TC_BACKEND_CUDA)
        at += tc__round64(s->wpack_size(sp, &pl->env));
    pl->ws_total = at;
}

static tc_status tc__run_solver(const tc_plan *pl, const tc__solver *s,
                                const tc__problem *sp, const void *state, void *y,
                                const void *x, const void *w, const void *bias,
                                const void *residual, void *ws, const void *wpack,
                                int wflip) {
    tc__args a;
    memset(&a, 0, sizeof a);
    a.p = sp;
    a.residual = residual;
    a.state = state;
    a.y = y;
    a.x = x;
    a.w = w;
    a.bias = bias;
    a.wpack = wpack;
    a.ws = ws;
    a.threads = pl->env.threads;
    a.stream = pl->stream;
    a.wflip = wflip;
    if (s == pl->solver && state == pl->state) {
        a.dev_ws = pl->dev_ws;
        a.dev_ws_set = pl->dev_ws_set;
    }
    return s->execute(&a);
}

/* Times solver s on plan-owned scratch arrays; returns best seconds or a
 * negative value when it fails. */
static double tc__measure(tc_plan *pl, const tc__solver *s, const tc__problem *p,
                          void *state) {
    int gemm = p->op == TC_OP_GEMM;
    int64_t nx = gemm ? (p->trans_a ? p->k * p->lda : p->m * p->lda) : tc__x_count(p);
    int64_t nw = gemm ? (p->trans_b ? p->n * p->ldb : p->k * p->ldb) : tc__w_count(p);
    int64_t ny = gemm ? p->m * p->ldc : tc__y_count(p);
    size_t ws_bytes = s->workspace ? s->workspace(p, &pl->env) : 0;
    void *x = tc__alloc((size_t)nx * p->esize), *w = tc__alloc((size_t)nw * p->esize);
    void *y = tc__alloc((size_t)ny * p->esize);
    void *b = tc__alloc((size_t)(p->K > 0 ? p->K : 1) * p->esize);
    void *res = p->has_residual ? tc__alloc((size_t)ny * p->esize) : NULL;
    void *ws = ws_bytes ? tc__alloc(ws_bytes) : NULL;
    /* conv weights are packed once, outside the timed runs: layers run
     * with tc_plan_conv_set_weights (docs/architecture.md) */
    int packs = p->op == TC_OP_CONV && s->wpack && s->backend != TC_BACKEND_CUDA;
    size_t wp_bytes = packs ? s->wpack_size(p, &pl->env) : 0;
    void *wp = packs ? tc__alloc(wp_bytes ? wp_bytes : 64) : NULL;
    double best = -1.0;
    if (!x || !w || !y || !b || (ws_bytes && !ws) || (packs && !wp) ||
        (p->has_residual && !res))
        goto done;
    tc__fill_random(x, nx, p->dtype, 1);
    tc__fill_random(w, nw, p->dtype, 2);
    tc__fill_random(y, ny, p->dtype, 3);
    tc__fill_random(b, p->K > 0 ? p->K : 1, p->dtype, 4);
    if (res) tc__fill_random(res, ny, p->dtype, 5);
    const void *wuse = (p->op == TC_OP_FILTER && p->mask) ? p->mask : w;
    const void *buse = p->has_bias ? b : NULL;
    if (packs && s->wpack(p, &pl->env, state, w, wp) != TC_OK) goto done;
    if (tc__run_solver(pl, s, p, state, y, x, wuse, buse, res, ws, wp, 0) != TC_OK) goto done;
    double total = 0;
    for (int r = 0; r < 5 && (r < 2 || total < 0.2); r++) {
        double t0 = tc__now();
        if (tc__run_solver(pl, s, p, state, y, x, wuse, buse, res, ws, wp, 0) != TC_OK) {
            best = -1.0;
            goto done;
        }
        double t = tc__now() - t0;
        total += t;
        if (best < 0 || t < best) best = t;
    }
done:
    tc__free(x); tc__free(w); tc__free(y); tc__free(b); tc__free(ws); tc__free(wp);
    tc__free(res);
    return best;
}

static const char *tc__op_name(unsigned op) {
    return op == TC_OP_FILTER ? "filter" : op == TC_OP_CONV ? "conv" : "gemm";
}

/* Why nothing could be planned, by cause: no device (built without CUDA,
 * or no GPU found), no algorithm for this operation on this backend, or
 * algorithms that exist but do not apply (each with its own reason). */
static tc_status tc__no_algorithm(const tc__problem *p, const tc__env *env,
                                  size_t ws_limit) {
    const char *op = tc__op_name(p->op);
    tc_backend be = env->backend;
    if (be == TC_BACKEND_CUDA && !TC_HAVE_CUDA)
        return tc__error(TC_ERR_NO_DEVICE,
                         "plan: backend cuda: this build has no CUDA support");
    if (be == TC_BACKEND_CUDA && tc_cuda_device_count() == 0)
        return tc__error(TC_ERR_NO_DEVICE,
                         "plan: backend cuda: no usable CUDA device found");
    char why[900] = "";
    size_t used = 0;
    int implementing = 0, others = 0;
    unsigned other_ops = 0;
    for (int i = 0; tc__solvers[i]; i++) {
        const tc__solver *s = tc__solvers[i];
        if (!tc__backend_ok(s, be) || tc__solver_is_reference(s)) continue;
        if (!(s->ops & p->op)) {
            other_ops |= s->ops;
            others++;
            continue;
        }
        implementing++;
        char r[200] = "";
        tc__problem sp;
        tc__stage_problem(p, tc__solver_caps(s, p), &sp);
        if (s->available && !s->available()) snprintf(r, sizeof r, "not available on this machine");
        else if (!tc__applicable(s, &sp, env, r, sizeof r)) { if (!r[0]) snprintf(r, sizeof r, "does not apply"); }
        else if (ws_limit && s->workspace && s->workspace(&sp, env) > ws_limit)
            snprintf(r, sizeof r, "needs %zu bytes of workspace", s->workspace(&sp, env));
        else continue;
        if (used + 8 < sizeof why) {
            int n = snprintf(why + used, sizeof why - used, "%s%s: %s", used ? "; " : "",
                             s->name, r);
            if (n > 0) used += (size_t)n < sizeof why - used ? (size_t)n : sizeof why - used - 1;
        }
    }
    if (!implementing)
        return tc__error(TC_ERR_NOT_APPLICABLE,
                         "plan: no %s algorithm implements %s on this build%s%s%s",
                         be == TC_BACKEND_AUTO ? "" : tc_backend_name(be), op,
                         others ? " (it has " : "",
                         others ? ((other_ops & TC_OP_FILTER) && (other_ops & TC_OP_GEMM)
                                       ? "filter and gemm" : (other_ops & TC_OP_FILTER) ? "filter"
                                       : (other_ops & TC_OP_GEMM) ? "gemm" : "others")
                                : "",
                         others ? " algorithms)" : "");
    return tc__error(TC_ERR_NOT_APPLICABLE, "plan: no %s%salgorithm applies%s: %s",
                     be == TC_BACKEND_AUTO ? "" : tc_backend_name(be),
                     be == TC_BACKEND_AUTO ? "" : " ",
                     ws_limit ? " within the workspace limit" : "", why);
}

#if TC_HAVE_CUDA
/* src/cuda/cuda_stage.cu: device bytes of a staged plan's converted
 * operands */
size_t tc__cu_stage_device_bytes(const tc_plan *pl);
#endif

static tc_status tc__plan_choose(tc_plan *pl, tc_context *ctx,
                                 const tc_plan_options *opt) {
    tc_plan_options defaults;
    tc_plan_options_init(&defaults);
    if (!opt) opt = &defaults;
    if (opt->struct_size != sizeof *opt)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "plan: options struct_size=%zu, expected %zu (call "
                         "tc_plan_options_init)", opt->struct_size, sizeof *opt);
    if (opt->flags & ~(TC_PLAN_MEASURE | TC_PLAN_WISDOM_ONLY | TC_PLAN_ALLOW_TF32 | TC_PLAN_DIRECT |
                       TC_PLAN_MASK_AT_EXECUTE))
        return tc__error(TC_ERR_INVALID_ARGUMENT, "plan: flags=0x%x has unknown bits",
                         opt->flags);
    if ((opt->flags & TC_PLAN_MASK_AT_EXECUTE) && pl->p.op != TC_OP_FILTER)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "plan: flags=0x%x: TC_PLAN_MASK_AT_EXECUTE is for filter plans only "
                         "(conv weights already come with each execute)", opt->flags);
    ctx = tc__context_or_default(ctx);
    pl->env.threads = tc_context_threads(ctx);
    pl->env.backend = ctx->backend;
    pl->env.cpu = tc__cpu_detect();
    pl->env.flags = opt->flags;
    const tc__problem *p = &pl->p;

    if (opt->algorithm) {
        const tc__solver *s = tc__solver_find(opt->algorithm);
        if (!s)
            return tc__error(TC_ERR_NOT_FOUND,
                             "plan: algorithm '%s' unknown (see `tileconv info`)",
                             opt->algorithm);
        if (!(s->ops & p->op))
            return tc__error(TC_ERR_NOT_APPLICABLE,
                             "plan: algorithm '%s' does not implement this "
                             "operation", s->name);
        if (!tc__backend_ok(s, pl->env.backend))
            return tc__error(TC_ERR_NOT_APPLICABLE,
                             "plan: algorithm '%s' is on backend %s, context "
                             "asks for %s", s->name, tc_backend_name(s->backend),
                             tc_backend_name(pl->env.backend));
        if (s->available && !s->available())
            return tc__error(s->backend == TC_BACKEND_CUDA ? TC_ERR_NO_DEVICE
                                                           : TC_ERR_UNSUPPORTED,
                             "plan: algorithm '%s' is not available on this "
                             "machine", s->name);
        char why[200] = "";
        tc__problem sp;
        tc__stage_problem(p, tc__solver_caps(s, p), &sp);
        if (!tc__applicable(s, &sp, &pl->env, why, sizeof why))
            return tc__error(TC_ERR_NOT_APPLICABLE,
                             "plan: algorithm '%s' does not apply: %s", s->name,
                             why[0] ? why : "unsupported problem");
        tc__layout_workspace(pl, s);
        if (opt->workspace_limit && pl->solver_ws > opt->workspace_limit)
            return tc__error(TC_ERR_WORKSPACE,
                             "plan: algorithm '%s' needs %zu bytes of "
                             "workspace, limit is %zu", s->name, pl->solver_ws,
                             opt->workspace_limit);
        pl->solver = s;
    } else if ((opt->flags & (TC_PLAN_MEASURE | TC_PLAN_WISDOM_ONLY)) &&
               (pl->solver = tc__wisdom_lookup(p, &pl->env, opt->workspace_limit))) {
        tc__layout_workspace(pl, pl->solver);
    } else if (opt->flags & TC_PLAN_WISDOM_ONLY) {
        return tc__error(TC_ERR_NOT_FOUND,
                         "plan: no usable wisdom for this problem (plan it once "
                         "with TC_PLAN_MEASURE, or load a wisdom file)");
    } else {
        /* Pass 1: every applicable candidate with its estimate. Pass 2
         * (MEASURE only): time the candidates whose estimate is within
         * TC__MEASURE_WINDOW of the best estimate, leaving out reference
         * solvers (the test oracles: slow by design) whenever anything else
         * applies, and candidates whose workspace would exceed
         * TC__MEASURE_WS_CAP without an explicit limit from the caller. */
        enum { TC__MAXCAND = 64 };
        const double TC__MEASURE_WINDOW = 4.0;
        const size_t TC__MEASURE_WS_CAP = (size_t)1 << 30;
        const tc__solver *cand[TC__MAXCAND];
        double est[TC__MAXCAND], stc[TC__MAXCAND];
        size_t wsz[TC__MAXCAND];
        int nc = 0, nonref = 0;
        const char *tr = tc__knob_get(TC__KNOB_PLAN_TRACE);
        const int trace = tr && tr[0] == '1';
        for (int i = 0; tc__solvers[i] && nc < TC__MAXCAND; i++) {
            const tc__solver *s = tc__solvers[i];
            if (!(s->ops & p->op) || !tc__backend_ok(s, pl->env.backend)) continue;
            if (s->available && !s->available()) continue;
            tc__problem sp;
            tc__stage_problem(p, tc__solver_caps(s, p), &sp);
            if (!tc__applicable(s, &sp, &pl->env, NULL, 0)) continue;
            size_t wsb = s->workspace ? s->workspace(&sp, &pl->env) : 0;
            if (opt->workspace_limit && wsb > opt->workspace_limit) continue;
            cand[nc] = s;
            /* a staged candidate pays for the core's conversion passes */
            stc[nc] = tc__stage_cost(p, tc__stage_bits(p, tc__solver_caps(s, p)), s->backend, &pl->env);
            est[nc] = (s->estimate ? s->estimate(&sp, &pl->env) : 1e30) + stc[nc];
            /* TILECONV_PLAN_TRACE=1: each candidate's estimate on stderr (tuning
             * the cost models; not part of the API) */
            if (trace) fprintf(stderr, "tileconv plan: %-28s estimate %.4f ms\n", s->name, est[nc] * 1e3);
            wsz[nc] = wsb;
            if (!tc__solver_is_reference(s)) nonref++;
            nc++;
        }
        const tc__solver *best = NULL;
        double best_cost = 0;
        for (int i = 0; i < nc; i++)
            if (!best || est[i] < best_cost) {
                best = cand[i];
                best_cost = est[i];
            }
        if (best && (opt->flags & TC_PLAN_MEASURE)) {
            const double window = best_cost * TC__MEASURE_WINDOW;
            const tc__solver *fastest = NULL;
            double fastest_t = 0;
            for (int i = 0; i < nc; i++) {
                const tc__solver *s = cand[i];
                if (nonref && tc__solver_is_reference(s)) continue;
                if (cand[i] != best && est[i] > window) continue;
                if (cand[i] != best && !opt->workspace_limit &&
                    wsz[i] > TC__MEASURE_WS_CAP)
                    continue;
                void *state = NULL;
                tc__problem sp;
                tc__stage_problem(p, tc__solver_caps(s, p), &sp);
                if (s->plan && s->plan(&sp, &pl->env, &state) != TC_OK) continue;
                double t = tc__measure(pl, s, &sp, state);
                if (s->destroy) s->destroy(state);
                if (t < 0) continue;
                t += stc[i];
                if (!fastest || t < fastest_t) {
                    fastest = s;
                    fastest_t = t;
                }
            }
            if (fastest) best = fastest; /* else keep the estimate's pick */
        }
        if (!best) return tc__no_algorithm(p, &pl->env, opt->workspace_limit);
        pl->solver = best;
        tc__layout_workspace(pl, best);
        if (opt->flags & TC_PLAN_MEASURE)
            tc__wisdom_record(p, &pl->env, opt->workspace_limit, best->name);
    }
    if (pl->solver->plan) {
        tc_status st = pl->solver->plan(&pl->sp, &pl->env, &pl->state);
        if (st != TC_OK) return st;
    }
    pl->dev_ws = pl->solver->device_workspace
                     ? pl->solver->device_workspace(&pl->sp, &pl->env, pl->state)
                     : 0;
    pl->dev_ws_set = pl->solver->backend == TC_BACKEND_CUDA;
#if TC_HAVE_CUDA
    /* a staged CUDA plan on device arrays takes its converted operands
     * from the same pool (src/cuda/cuda_stage.cu) */
    if (pl->stage && pl->solver->backend == TC_BACKEND_CUDA)
        pl->dev_ws += tc__cu_stage_device_bytes(pl);
#endif
    tc__error_clear();
    return TC_OK;
}

#if TC_HAVE_CUDA
/* src/cuda/cuda_stage.cu: plan-held weights on the device */
tc_status tc__cu_upload(void **dev, const void *host, size_t bytes);
void tc__cu_free_dev(void *dev);
#endif

static tc_plan *tc__plan_new(void) { return calloc(1, sizeof(tc_plan)); }

void tc_plan_destroy(tc_plan *pl) {
    if (!pl) return;
    if (pl->solver && pl->solver->destroy && pl->state) pl->solver->destroy(pl->state);
    tc__free(pl->mask);
    tc__free(pl->swap_input);
    tc__free(pl->w_copy);
    tc__free(pl->bias_copy);
    tc__free(pl->wpacked);
    tc__free(pl->mask_f32);
    tc__free(pl->swap_f32);
    tc__free(pl->w_staged);
    tc__free(pl->bias_staged);
#if TC_HAVE_CUDA
    tc__cu_free_dev(pl->w_dev);
    tc__cu_free_dev(pl->bias_dev);
    tc__cu_free_dev(pl->wpack_dev);
#endif
    free(pl);
}

/* Copies a spatial array of dims d (problem order, 3 axes) reversing every
 * axis when flip is set. */
static void tc__copy_flip(void *dst, const void *src, const int64_t d[3],
                          size_t esize, int flip) {
    int64_t n = d[0] * d[1] * d[2];
    if (!flip) {
        memcpy(dst, src, (size_t)n * esize);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        memcpy((char *)dst + (size_t)i * esize,
               (const char *)src + (size_t)(n - 1 - i) * esize, esize);
}

tc_status tc_plan_filter(tc_plan **plan, tc_context *ctx,
                         const tc_filter_desc *desc, const void *mask,
                         const tc_plan_options *opt) {
    if (!plan) return tc__error(TC_ERR_INVALID_ARGUMENT, "filter: plan is NULL");
    *plan = NULL;
    /* TC_PLAN_MASK_AT_EXECUTE: no mask now (tc__plan_choose checks opt) */
    const int mexec = opt && opt->struct_size == sizeof *opt &&
                      (opt->flags & TC_PLAN_MASK_AT_EXECUTE);
    if (!mask && !mexec) return tc__error(TC_ERR_INVALID_ARGUMENT, "filter: mask is NULL");
    tc_plan *pl = tc__plan_new();
    if (!pl) return tc__error(TC_ERR_OUT_OF_MEMORY, "filter: out of memory");
    tc_status st = tc__lower_filter(desc, &pl->lay, &pl->p);
    if (st) goto fail;
    tc__problem *p = &pl->p;
    if (mexec) {
        if (p->dtype != TC_FLOAT32 && p->dtype != TC_FLOAT64) {
            st = tc__error(TC_ERR_UNSUPPORTED,
                           "filter: dtype=%s with TC_PLAN_MASK_AT_EXECUTE: per-call masks are "
                           "float32 or float64 only (give a 16-bit mask at plan time)",
                           tc_dtype_name(p->dtype));
            goto fail;
        }
        if (pl->lay.swap) {
            st = tc__error(TC_ERR_UNSUPPORTED,
                           "filter: TC_PLAN_MASK_AT_EXECUTE with output=valid and the mask "
                           "larger than the input along every filtered axis (the operands "
                           "are swapped): give the mask at plan time");
            goto fail;
        }
        p->mask = NULL; /* every execute brings its own (tc_execute_filter_mask) */
        pl->pack_x = !pl->lay.in_dense;
        pl->pack_y = !pl->lay.out_dense;
        if ((st = tc__plan_choose(pl, ctx, opt))) goto fail;
        *plan = pl;
        return TC_OK;
    }
    /* the user's mask: problem msk, or problem in when swapped */
    const int64_t *md = pl->lay.swap ? p->in : p->msk;
    int64_t mcount = md[0] * md[1] * md[2];
    if (pl->lay.swap) {
        /* solver input = user's mask (reversed for correlate), solver
         * mask = user's input reversed, packed at every execute */
        pl->swap_input = tc__alloc((size_t)mcount * p->esize);
        if (!pl->swap_input) { st = tc__error(TC_ERR_OUT_OF_MEMORY, "filter: out of memory"); goto fail; }
        tc__copy_flip(pl->swap_input, mask, p->in, p->esize, !pl->lay.flip);
        p->mask = NULL;
        pl->pack_x = 1;
    } else {
        pl->mask = tc__alloc((size_t)mcount * p->esize);
        if (!pl->mask) { st = tc__error(TC_ERR_OUT_OF_MEMORY, "filter: out of memory"); goto fail; }
        tc__copy_flip(pl->mask, mask, p->msk, p->esize, pl->lay.flip);
        p->mask = pl->mask;
        pl->pack_x = !pl->lay.in_dense;
    }
    pl->pack_y = !pl->lay.out_dense;
    if (tc__dtype_is_half(p->dtype) && p->mask) {
        /* the float32 mask that solvers without 16-bit kernels see */
        pl->mask_f32 = tc__alloc((size_t)mcount * 4);
        if (!pl->mask_f32) { st = tc__error(TC_ERR_OUT_OF_MEMORY, "filter: out of memory"); goto fail; }
        tc__convert(pl->mask_f32, TC_FLOAT32, pl->mask, p->dtype, mcount, 1);
        p->mask_f32 = pl->mask_f32;
    }
    if ((st = tc__plan_choose(pl, ctx, opt))) goto fail;
    if (pl->lay.swap && (pl->stage & TC__STAGE_DTYPE)) {
        pl->swap_f32 = tc__alloc((size_t)mcount * 4);
        if (!pl->swap_f32) { st = tc__error(TC_ERR_OUT_OF_MEMORY, "filter: out of memory"); goto fail; }
        tc__convert(pl->swap_f32, TC_FLOAT32, pl->swap_input, p->dtype, mcount, 1);
    }
    *plan = pl;
    return TC_OK;
fail:
    tc_plan_destroy(pl);
    return st;
}

tc_status tc_plan_conv(tc_plan **plan, tc_context *ctx, const tc_conv_desc *desc,
                       const tc_plan_options *opt) {
    if (!plan) return tc__error(TC_ERR_INVALID_ARGUMENT, "conv: plan is NULL");
    *plan = NULL;
    tc_plan *pl = tc__plan_new();
    if (!pl) return tc__error(TC_ERR_OUT_OF_MEMORY, "conv: out of memory");
    tc_status st = tc__lower_conv(desc, &pl->p);
    if (!st) st = tc__plan_choose(pl, ctx, opt);
    if (st) { tc_plan_destroy(pl); return st; }
    *plan = pl;
    return TC_OK;
}

tc_status tc_plan_gemm(tc_plan **plan, tc_context *ctx, const tc_gemm_desc *desc,
                       const tc_plan_options *opt) {
    if (!plan) return tc__error(TC_ERR_INVALID_ARGUMENT, "gemm: plan is NULL");
    *plan = NULL;
    tc_plan *pl = tc__plan_new();
    if (!pl) return tc__error(TC_ERR_OUT_OF_MEMORY, "gemm: out of memory");
    tc_status st = tc__lower_gemm(desc, &pl->p);
    if (!st) st = tc__plan_choose(pl, ctx, opt);
    if (st) { tc_plan_destroy(pl); return st; }
    *plan = pl;
    return TC_OK;
}

/* ---------------- queries ---------------- */
const char *tc_plan_algorithm(const tc_plan *pl) {
    return pl && pl->solver ? pl->solver->name : "";
}
const char *tc_plan_staging(const tc_plan *pl) { return pl ? pl->staging : ""; }
#if TC_HAVE_CUDA
/* src/cuda/cuda_common.cu */
tc_status tc__cu_time_plan(const tc_plan *pl, const tc__problem *p, const void *x,
                           const void *w, const void *bias, int repeat, double *median_ms,
                           double *min_ms, void *stream);
#endif

tc_status tc_cuda_time_plan(const tc_plan *pl, const void *x, const void *w, const void *bias,
                            int repeat, double *median_ms, double *min_ms) {
    if (!pl || !x || !median_ms)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "cuda time: %s is NULL",
                         !pl ? "plan" : !x ? "input" : "median_ms");
    if (repeat < 1 || repeat > 1000000)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "cuda time: repeat=%d, must be 1..1000000",
                         repeat);
    const tc__problem *p = &pl->p;
    if (p->op == TC_OP_CONV && !w) { /* the plan's own weights */
        if (!pl->w_copy)
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "cuda time: weights are NULL and the plan holds none");
        if (bias)
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "cuda time: weights are NULL but bias is given; pass NULL for both");
        w = pl->w_copy;
        bias = pl->bias_copy;
    }
    if (p->op == TC_OP_GEMM && !w)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "cuda time: b is NULL");
    const int mexec = p->op == TC_OP_FILTER && (pl->env.flags & TC_PLAN_MASK_AT_EXECUTE);
    if (mexec && !w)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "cuda time: the plan has TC_PLAN_MASK_AT_EXECUTE: pass the mask as w");
    if (p->op == TC_OP_CONV && p->has_bias != (bias != NULL))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "cuda time: bias is %s but the plan has has_bias=%d",
                         bias ? "given" : "NULL", p->has_bias);
    if (!pl->solver || pl->solver->backend != TC_BACKEND_CUDA)
        return tc__error(TC_ERR_UNSUPPORTED, "cuda time: plan runs on the %s backend (%s)",
                         pl->solver ? tc_backend_name(pl->solver->backend) : "no",
                         pl->solver ? pl->solver->name : "no algorithm");
    if (p->op == TC_OP_FILTER && (pl->pack_x || pl->pack_y || pl->lay.swap))
        return tc__error(TC_ERR_UNSUPPORTED,
                         "cuda time: the plan packs strided or swapped arrays on the host");
    /* only the weights reordered: the executes on device arrays reorder
     * them on the device, inside the times */
    if (pl->stage & ~TC__STAGE_WLAYOUT)
        return tc__error(TC_ERR_UNSUPPORTED,
                         "cuda time: the plan converts around %s (%s); time tc_execute_* "
                         "instead", pl->solver->name, pl->staging);
    if (p->has_residual)
        return tc__error(TC_ERR_UNSUPPORTED,
                         "cuda time: plans with a residual are timed through "
                         "tc_execute_conv_residual");
#if TC_HAVE_CUDA
    return tc__cu_time_plan(pl, &pl->sp, x, p->op == TC_OP_FILTER && !mexec ? NULL : w,
                            p->op == TC_OP_CONV ? bias : NULL, repeat, median_ms, min_ms,
                            pl->stream);
#else
    (void)min_ms;
    return tc__error(TC_ERR_NO_DEVICE, "cuda time: built without CUDA");
#endif
}

tc_status tc_cuda_time_filter(const tc_plan *pl, const void *x, int repeat, double *median_ms,
                              double *min_ms) {
    if (pl && pl->p.op != TC_OP_FILTER)
        return tc__error(TC_ERR_UNSUPPORTED,
                         "cuda time: filter plans only (tc_cuda_time_plan times any plan)");
    return tc_cuda_time_plan(pl, x, NULL, NULL, repeat, median_ms, min_ms);
}

tc_backend tc_plan_backend(const tc_plan *pl) {
    return pl && pl->solver ? pl->solver->backend : TC_BACKEND_AUTO;
}
size_t tc_plan_workspace_size(const tc_plan *pl) { return pl ? pl->ws_total : 0; }
size_t tc_plan_device_workspace_size(const tc_plan *pl) { return pl ? pl->dev_ws : 0; }

tc_status tc_plan_set_cuda_stream(tc_plan *pl, void *stream) {
    if (!pl) return tc__error(TC_ERR_INVALID_ARGUMENT, "set stream: plan is NULL");
    if (!pl->solver || pl->solver->backend != TC_BACKEND_CUDA)
        return tc__error(TC_ERR_UNSUPPORTED,
                         "set stream: the plan runs %s on the %s backend, not on CUDA",
                         tc_plan_algorithm(pl),
                         tc_backend_name(pl->solver ? pl->solver->backend : TC_BACKEND_AUTO));
    pl->stream = stream;
    return TC_OK;
}
double tc_plan_flops(const tc_plan *pl) { return pl ? tc__problem_flops(&pl->p) : 0; }
double tc_plan_bytes(const tc_plan *pl) { return pl ? tc__problem_bytes(&pl->p) : 0; }

tc_status tc_plan_output_shape(const tc_plan *pl, int *ndim, int64_t shape[TC_MAX_DIMS]) {
    if (!pl || !ndim || !shape)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "plan: NULL argument");
    const tc__problem *p = &pl->p;
    if (p->op == TC_OP_FILTER) {
        *ndim = pl->lay.ndim;
        for (int i = 0; i < pl->lay.ndim; i++) shape[i] = pl->lay.out_shape[i];
    } else if (p->op == TC_OP_CONV) {
        *ndim = 2 + p->nsp;
        shape[0] = p->N;
        const int cl = p->layout == TC_LAYOUT_CHANNELS_LAST;
        shape[cl ? 1 + p->nsp : 1] = p->K;
        for (int i = 0; i < p->nsp; i++) shape[1 + !cl + i] = p->out[TC__NSP - p->nsp + i];
    } else {
        *ndim = 2;
        shape[0] = p->m;
        shape[1] = p->n;
    }
    return TC_OK;
}

/* ---------------- execution ---------------- */
#if TC_HAVE_CUDA
int tc__cu_ptr_is_device(const void *ptr); /* src/cuda/cuda_common.cu */
/* src/cuda/cuda_stage.cu: a staged plan run on device arrays (the
 * conversions and the epilogue pass as kernels on the plan's stream) */
tc_status tc__cu_execute_staged(const tc_plan *pl, void *y, const void *x, const void *w,
                                const void *bias, const void *residual, const void *wpack);
#endif

/* Strided <-> dense copy over nd axes, converting between the dense
 * dtype dd and the strided dtype sd. to_dense: dense[i] = strided[...];
 * otherwise strided[...] = dense[i]. reverse_from: axes >= it are reversed
 * on the strided side (swap mode), nd when none. */
static void tc__strided_copy(void *dense, tc_dtype dd, void *strided, tc_dtype sd, int nd,
                             const int64_t *shape, const int64_t *st, int to_dense,
                             int reverse_from) {
    int64_t idx[TC_MAX_DIMS] = {0};
    int64_t total = 1;
    const size_t des = tc_dtype_size(dd), ses = tc_dtype_size(sd);
    for (int i = 0; i < nd; i++) total *= shape[i];
    for (int64_t e = 0; e < total; e++) {
        int64_t off = 0;
        for (int i = 0; i < nd; i++) {
            int64_t j = i >= reverse_from ? shape[i] - 1 - idx[i] : idx[i];
            off += j * st[i];
        }
        if (dd == sd) {
            char *s = (char *)strided + off * (int64_t)ses;
            char *d = (char *)dense + e * (int64_t)des;
            if (to_dense) memcpy(d, s, des);
            else memcpy(s, d, des);
        } else if (to_dense) {
            tc__store_d(dense, e, dd, tc__load_d(strided, off, sd));
        } else {
            tc__store_d(strided, off, sd, tc__load_d(dense, e, dd));
        }
        for (int i = nd - 1; i >= 0; i--) {
            if (++idx[i] < shape[i]) break;
            idx[i] = 0;
        }
    }
}

static int64_t tc__spatial(const int64_t *a) { return a[0] * a[1] * a[2]; }

static tc_status tc__execute(const tc_plan *pl, unsigned op, void *y, const void *x,
                             const void *w, const void *bias, const void *residual,
                             void *workspace) {
    if (!pl) return tc__error(TC_ERR_INVALID_ARGUMENT, "execute: plan is NULL");
    if (pl->p.op != op)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "execute: plan is for another operation");
    if (!y || !x)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "execute: %s is NULL",
                         !y ? "output" : "input");
    const tc__problem *p = &pl->p, *sp = &pl->sp;
    const void *wpack = NULL, *wst = NULL, *bst = NULL, *wdev = NULL;
    if (op == TC_OP_CONV && !w) { /* the plan's own weights */
        if (!pl->w_copy)
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "execute: weights are NULL and the plan holds none "
                             "(tc_plan_conv_set_weights)");
        if (bias)
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "execute: weights are NULL (the plan's own) but bias "
                             "is given; pass NULL for both");
        w = pl->w_copy;
        bias = pl->bias_copy;
        wpack = pl->solver->backend == TC_BACKEND_CUDA ? pl->wpack_dev : pl->wpacked;
        wst = pl->w_staged;
        bst = pl->bias_staged;
        wdev = pl->w_dev;
    }
    if (op != TC_OP_FILTER && !w)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "execute: %s is NULL",
                         op == TC_OP_GEMM ? "b" : "weights");
    if (op == TC_OP_CONV && (p->has_bias != (bias != NULL)))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "execute: bias is %s but the plan has has_bias=%d",
                         bias ? "given" : "NULL", p->has_bias);
    if (op == TC_OP_CONV && (p->has_residual != (residual != NULL)))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         p->has_residual ? "execute: the plan has has_residual=1: pass the "
                                           "residual (tc_execute_conv_residual)"
                                         : "execute: residual is given but the plan has "
                                           "has_residual=0");
    if (workspace && ((uintptr_t)workspace & 63))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "execute: workspace %p is not 64-byte aligned", workspace);
#if TC_HAVE_CUDA
    /* device weights to reorder count as device arrays: the host cannot
     * read them */
    if (pl->stage && pl->solver->backend == TC_BACKEND_CUDA &&
        (tc__cu_ptr_is_device(x) || tc__cu_ptr_is_device(y) ||
         ((pl->stage & TC__STAGE_WLAYOUT) && tc__cu_ptr_is_device(w))))
        return tc__cu_execute_staged(pl, y, x, w, bias, residual, wpack);
#endif
    void *ws = workspace, *own = NULL;
    /* the room for packed weights (last in the workspace) is not needed
     * when the plan holds them packed: 37 MB for Winograd F(4,3) at 3x3
     * 512 @7, allocated (and its scratch page-faulted) on every call */
    size_t need = op == TC_OP_CONV && wpack ? pl->wp_off : pl->ws_total;
    if (!ws && need) {
        ws = own = tc__alloc(need);
        if (!ws)
            return tc__error(TC_ERR_OUT_OF_MEMORY,
                             "execute: cannot allocate %zu bytes of workspace",
                             need);
    }
    const int thr = pl->env.threads;
    const int dt = (pl->stage & TC__STAGE_DTYPE) != 0;
    const int relay = (pl->stage & (TC__STAGE_DTYPE | TC__STAGE_LAYOUT)) != 0;
    const int epi = (pl->stage & TC__STAGE_EPILOGUE) != 0;
    const int wl = (pl->stage & TC__STAGE_WLAYOUT) != 0;
    const void *xs = x, *ws_w = w, *bs = bias, *res = residual;
    void *ys = y;
    int wflip = 0;
    if (op == TC_OP_FILTER) {
        const tc__filter_layout *L = &pl->lay;
        int nsp = p->nsp;
        if (L->swap) {
            void *dst = (char *)ws + pl->x_off;
            tc__strided_copy(dst, sp->dtype, (void *)x, p->dtype, L->ndim, L->in_shape,
                             L->in_strides, 1, L->ndim - nsp);
            ws_w = dst;
            xs = dt ? pl->swap_f32 : pl->swap_input;
        } else {
            ws_w = sp->mask;
            if (!ws_w) { /* TC_PLAN_MASK_AT_EXECUTE: this call's mask */
                ws_w = w;
                if (L->flip && pl->solver->backend == TC_BACKEND_CUDA) {
                    wflip = 1; /* a device mask: the solver reads it reversed */
                } else if (L->flip) {
                    void *dst = (char *)ws + pl->wst_off;
                    tc__copy_flip(dst, w, p->msk, p->esize, 1);
                    ws_w = dst;
                }
            }
            if (pl->pack_x) {
                void *dst = (char *)ws + pl->x_off;
                if (L->in_dense) tc__convert(dst, sp->dtype, x, p->dtype, tc__x_count(p), thr);
                else tc__strided_copy(dst, sp->dtype, (void *)x, p->dtype, L->ndim, L->in_shape,
                                      L->in_strides, 1, L->ndim);
                xs = dst;
            }
        }
        if (pl->pack_y) ys = (char *)ws + pl->y_off;
    } else if (op == TC_OP_CONV) {
        if (relay) {
            void *dst = (char *)ws + pl->x_off;
            tc__convert_tensor(dst, sp->dtype, sp->layout, x, p->dtype, p->layout, p->N, p->C,
                               tc__spatial(p->in), thr);
            xs = dst;
            ys = (char *)ws + pl->y_off;
        } else if (epi && residual == y) {
            ys = (char *)ws + pl->y_off;
        }
        if (epi) res = NULL;
        if (wdev) { /* CUDA plan: the solver's weights held on the device */
            ws_w = wdev;
            bs = pl->bias_dev;
        } else if ((dt || wl) && wst) { /* plan-held, staged in set_weights */
            ws_w = wst;
            if (dt) bs = bst;
        } else if (dt || wl) {
            /* the weights in sp's dtype and weight layout (K x mask x C/G
             * is an N = K, C = C/G, S = mask channels-last tensor) */
            void *wd = (char *)ws + pl->wst_off;
            tc__convert_tensor(wd, sp->dtype, sp->wlayout, w, p->dtype, p->wlayout, p->K,
                               p->C / p->G, tc__spatial(p->msk), thr);
            ws_w = wd;
            if (dt && bias) {
                void *bd = (char *)wd + (size_t)tc__w_count(p) * sp->esize;
                tc__convert(bd, sp->dtype, bias, p->dtype, p->K, 1);
                bs = bd;
            }
        }
    } else if (dt) { /* gemm */
        void *a = (char *)ws + pl->x_off, *b = (char *)ws + pl->wst_off;
        tc__convert(a, sp->dtype, x, p->dtype, tc__gemm_a_span(p), thr);
        tc__convert(b, sp->dtype, w, p->dtype, tc__gemm_b_span(p), thr);
        xs = a;
        ws_w = b;
        ys = (char *)ws + pl->y_off;
        if (p->beta != 0.0)
            tc__convert(ys, sp->dtype, y, p->dtype, tc__span(p->m, p->n, p->ldc), thr);
    }
    if (op == TC_OP_CONV && pl->solver->wpack && !wpack &&
        pl->solver->backend != TC_BACKEND_CUDA) {
        void *dst = (char *)ws + pl->wp_off;
        tc_status pst = pl->solver->wpack(sp, &pl->env, pl->state, ws_w, dst);
        if (pst) {
            tc__free(own);
            return pst;
        }
        wpack = dst;
    }
    tc_status st = tc__run_solver(pl, pl->solver, sp, pl->state, ys, xs, ws_w, bs, res, ws,
                                  wpack, wflip);
    if (st == TC_OK && op == TC_OP_FILTER && pl->pack_y)
        tc__strided_copy(ys, sp->dtype, y, p->dtype, pl->lay.ndim, pl->lay.out_shape,
                         pl->lay.out_strides, 0, pl->lay.ndim);
    if (st == TC_OK && op == TC_OP_CONV && (relay || epi))
        tc__stage_output(y, p->dtype, p->layout, ys, sp->dtype, sp->layout,
                         epi ? residual : NULL, epi ? p->act : TC_ACT_NONE, p->N, p->K,
                         tc__spatial(p->out), thr);
    if (st == TC_OK && op == TC_OP_GEMM && dt) /* C's m x n, row stride ldc */
        for (int64_t i = 0; i < p->m; i++)
            tc__convert((char *)y + (size_t)(i * p->ldc) * p->esize, p->dtype,
                        (char *)ys + (size_t)(i * p->ldc) * sp->esize, sp->dtype, p->n, 1);
    tc__free(own);
    return st;
}

tc_status tc_execute_filter(const tc_plan *pl, void *y, const void *x, void *ws) {
    if (pl && pl->p.op == TC_OP_FILTER && (pl->env.flags & TC_PLAN_MASK_AT_EXECUTE))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "execute: the plan (%s) was made with TC_PLAN_MASK_AT_EXECUTE and "
                         "holds no mask: pass one with tc_execute_filter_mask",
                         tc_plan_algorithm(pl));
    return tc__execute(pl, TC_OP_FILTER, y, x, NULL, NULL, NULL, ws);
}
tc_status tc_execute_filter_mask(const tc_plan *pl, void *y, const void *x, const void *mask,
                                 void *ws) {
    if (pl && pl->p.op == TC_OP_FILTER && !(pl->env.flags & TC_PLAN_MASK_AT_EXECUTE))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "execute: tc_execute_filter_mask on a plan (%s) made without "
                         "TC_PLAN_MASK_AT_EXECUTE: it holds its mask; use tc_execute_filter",
                         tc_plan_algorithm(pl));
    if (pl && pl->p.op == TC_OP_FILTER && !mask)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "execute: mask is NULL (the plan has TC_PLAN_MASK_AT_EXECUTE)");
    return tc__execute(pl, TC_OP_FILTER, y, x, mask, NULL, NULL, ws);
}
tc_status tc_execute_conv(const tc_plan *pl, void *y, const void *x, const void *w,
                          const void *bias, void *ws) {
    return tc__execute(pl, TC_OP_CONV, y, x, w, bias, NULL, ws);
}
tc_status tc_execute_conv_residual(const tc_plan *pl, void *y, const void *x, const void *w,
                                   const void *bias, const void *residual, void *ws) {
    if (pl && pl->p.op == TC_OP_CONV && !residual && pl->p.has_residual)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "execute: residual is NULL but the plan has has_residual=1");
    return tc__execute(pl, TC_OP_CONV, y, x, w, bias, residual, ws);
}

tc_status tc_plan_conv_set_weights(tc_plan *pl, const void *w, const void *bias) {
    if (!pl) return tc__error(TC_ERR_INVALID_ARGUMENT, "set weights: plan is NULL");
    const tc__problem *p = &pl->p, *sp = &pl->sp;
    if (p->op != TC_OP_CONV)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "set weights: the plan is not a conv plan");
    if (!w) return tc__error(TC_ERR_INVALID_ARGUMENT, "set weights: weights are NULL");
    if (p->has_bias != (bias != NULL))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "set weights: bias is %s but the plan has has_bias=%d",
                         bias ? "given" : "NULL", p->has_bias);
#if TC_HAVE_CUDA
    if (tc__cu_ptr_is_device(w) || (bias && tc__cu_ptr_is_device(bias)))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "set weights: %s is a device pointer; pass host memory",
                         tc__cu_ptr_is_device(w) ? "weights" : "bias");
#endif
    const tc__solver *s = pl->solver;
    const int dt = (pl->stage & TC__STAGE_DTYPE) != 0;
    /* the weights the solver sees differ from the caller's: sp's dtype,
     * K x C/G x mask for a solver without TC__CAP_WEIGHTS_CL */
    const int stw = dt || (pl->stage & TC__STAGE_WLAYOUT) != 0;
    size_t wbytes = (size_t)tc__w_count(p) * p->esize;
    size_t bbytes = (size_t)p->K * p->esize;
    size_t pbytes = s->wpack ? s->wpack_size(sp, &pl->env) : 0;
    void *wc = tc__alloc(wbytes), *bc = bias ? tc__alloc(bbytes) : NULL;
    void *pk = s->wpack ? tc__alloc(pbytes ? pbytes : 64) : NULL;
    void *wsd = stw ? tc__alloc((size_t)tc__w_count(p) * sp->esize) : NULL;
    void *bsd = dt && bias ? tc__alloc((size_t)p->K * sp->esize) : NULL;
    if (!wc || (bias && !bc) || (s->wpack && !pk) || (stw && !wsd) || (dt && bias && !bsd)) {
        tc__free(wc); tc__free(bc); tc__free(pk); tc__free(wsd); tc__free(bsd);
        return tc__error(TC_ERR_OUT_OF_MEMORY,
                         "set weights: cannot allocate %zu bytes", wbytes + bbytes + pbytes);
    }
    memcpy(wc, w, wbytes);
    if (bias) memcpy(bc, bias, bbytes);
    if (stw)
        tc__convert_tensor(wsd, sp->dtype, sp->wlayout, wc, p->dtype, p->wlayout, p->K,
                           p->C / p->G, tc__spatial(p->msk), pl->env.threads);
    if (dt && bias) tc__convert(bsd, sp->dtype, bc, p->dtype, p->K, 1);
    if (pk) {
        tc_status st = s->wpack(sp, &pl->env, pl->state, stw ? wsd : wc, pk);
        if (st) {
            tc__free(wc); tc__free(bc); tc__free(pk); tc__free(wsd); tc__free(bsd);
            return st;
        }
    }
    void *wdv = NULL, *bdv = NULL, *pdv = NULL;
#if TC_HAVE_CUDA
    /* a CUDA solver reads the weights from the device on every execute:
     * keep them there (in its dtype), and its packed form where it has
     * one (then not kept on the host) */
    if (s->backend == TC_BACKEND_CUDA) {
        tc_status st = tc__cu_upload(&wdv, stw ? wsd : wc, (size_t)tc__w_count(p) * sp->esize);
        if (!st && bias) st = tc__cu_upload(&bdv, dt ? bsd : bc, (size_t)p->K * sp->esize);
        if (!st && pk) st = tc__cu_upload(&pdv, pk, pbytes ? pbytes : 64);
        if (st) {
            tc__cu_free_dev(wdv);
            tc__cu_free_dev(bdv);
            tc__free(wc); tc__free(bc); tc__free(pk); tc__free(wsd); tc__free(bsd);
            return st;
        }
        tc__free(pk);
        pk = NULL;
    }
    tc__cu_free_dev(pl->w_dev);
    tc__cu_free_dev(pl->bias_dev);
    tc__cu_free_dev(pl->wpack_dev);
#endif
    pl->w_dev = wdv;
    pl->bias_dev = bdv;
    pl->wpack_dev = pdv;
    tc__free(pl->w_copy); tc__free(pl->bias_copy); tc__free(pl->wpacked);
    tc__free(pl->w_staged); tc__free(pl->bias_staged);
    pl->w_copy = wc;
    pl->bias_copy = bc;
    pl->wpacked = pk;
    pl->w_staged = wsd;
    pl->bias_staged = bsd;
    return TC_OK;
}

tc_status tc_execute_gemm(const tc_plan *pl, void *c, const void *a, const void *b,
                          void *ws) {
    return tc__execute(pl, TC_OP_GEMM, c, a, b, NULL, NULL, ws);
}

/* ---------------- one-shot GEMM ---------------- */
static tc_status tc__gemm_once(tc_context *ctx, tc_dtype dt, char ta, char tb,
                               int64_t m, int64_t n, int64_t k, double alpha,
                               const void *a, int64_t lda, const void *b,
                               int64_t ldb, double beta, void *c, int64_t ldc) {
    tc_gemm_desc d;
    tc_gemm_desc_init(&d);
    if ((ta != 'N' && ta != 'n' && ta != 'T' && ta != 't') ||
        (tb != 'N' && tb != 'n' && tb != 'T' && tb != 't'))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "gemm: trans_a='%c' trans_b='%c', each must be 'N' or 'T'",
                         ta, tb);
    d.dtype = dt;
    d.trans_a = ta == 'T' || ta == 't';
    d.trans_b = tb == 'T' || tb == 't';
    d.m = m; d.n = n; d.k = k;
    d.lda = lda; d.ldb = ldb; d.ldc = ldc;
    d.alpha = alpha; d.beta = beta;
    if (!a || !b || !c)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "gemm: NULL matrix pointer");
    tc_plan *pl;
    tc_status st = tc_plan_gemm(&pl, ctx, &d, NULL);
    if (st) return st;
    st = tc_execute_gemm(pl, c, a, b, NULL);
    tc_plan_destroy(pl);
    return st;
}

tc_status tc_sgemm(tc_context *ctx, char ta, char tb, int64_t m, int64_t n, int64_t k,
                   float alpha, const float *a, int64_t lda, const float *b,
                   int64_t ldb, float beta, float *c, int64_t ldc) {
    return tc__gemm_once(ctx, TC_FLOAT32, ta, tb, m, n, k, alpha, a, lda, b, ldb,
                         beta, c, ldc);
}
tc_status tc_dgemm(tc_context *ctx, char ta, char tb, int64_t m, int64_t n, int64_t k,
                   double alpha, const double *a, int64_t lda, const double *b,
                   int64_t ldb, double beta, double *c, int64_t ldc) {
    return tc__gemm_once(ctx, TC_FLOAT64, ta, tb, m, n, k, alpha, a, lda, b, ldb,
                         beta, c, ldc);
}
