/*
 * run.c - shared execution options, timed execute loop, report. See run.h.
 */
#include "run.h"

#include <stdlib.h>
#include <string.h>

#include "tools.h"

void tool_run_init(tool_run *r, const char *cmd) {
    memset(r, 0, sizeof *r);
    r->cmd = cmd;
    r->repeat = 1;
}

int tool_run_option(tool_run *r, tool_args *a) {
    const char *v;
    if (tool_args_is(a, "--measure")) {
        r->measure = 1;
        return tool_args_flag(a);
    }
    if (tool_args_is(a, "--tf32")) {
        r->tf32 = 1;
        return tool_args_flag(a);
    }
    if (tool_args_is(a, "--direct")) {
        r->direct = 1;
        return tool_args_flag(a);
    }
    if (tool_args_is(a, "--verbose")) {
        r->verbose = 1;
        return tool_args_flag(a);
    }
    if (!tool_args_is(a, "--backend") && !tool_args_is(a, "--algo") &&
        !tool_args_is(a, "--threads") && !tool_args_is(a, "--repeat") &&
        !tool_args_is(a, "--stats"))
        return -1;
    if (tool_args_value(a, &v)) return TOOL_USAGE;
    if (tool_args_is(a, "--backend")) {
        if (tc_backend_parse(v, &r->backend) != TC_OK)
            return tool_usage_error(a->cmd,
                                    "unknown backend '%s' (auto, cpu or cuda)", v);
        r->have_backend = 1;
        return 0;
    }
    if (tool_args_is(a, "--algo")) {
        if (!v[0]) return tool_usage_error(a->cmd, "--algo needs a name");
        r->algo = v;
        return 0;
    }
    if (tool_args_is(a, "--threads")) {
        r->have_threads = 1;
        return tool_parse_int(a, v, 0, 4096, &r->threads);
    }
    if (tool_args_is(a, "--repeat")) {
        r->have_repeat = 1;
        return tool_parse_i64(a, v, 1, 1000000, &r->repeat);
    }
    if (!v[0]) return tool_usage_error(a->cmd, "--stats needs a file name");
    r->stats_path = v;
    return 0;
}

static int timing_wanted(const tool_run *r) {
    return r->have_repeat || r->stats_path || r->verbose || r->always_report;
}

int tool_run_begin(tool_run *r) {
    tc_status st = tc_context_create(&r->ctx);
    if (st != TC_OK) return tool_lib_error(st, "cannot create a context");
    if (r->have_threads && (st = tc_context_set_threads(r->ctx, r->threads)) != TC_OK)
        return tool_lib_error(st, "--threads %d", r->threads);
    if (r->have_backend && (st = tc_context_set_backend(r->ctx, r->backend)) != TC_OK)
        return tool_lib_error(st, "--backend %s", tc_backend_name(r->backend));
    if (r->stats_path && tool_outfile_open(&r->stats_out, r->stats_path))
        return TOOL_FAIL;
    return 0;
}

void tool_run_plan_options(const tool_run *r, tc_plan_options *opt) {
    tc_plan_options_init(opt);
    if (r->measure) opt->flags |= TC_PLAN_MEASURE;
    if (r->tf32) opt->flags |= TC_PLAN_ALLOW_TF32;
    if (r->direct) opt->flags |= TC_PLAN_DIRECT;
    opt->algorithm = r->algo;
}

int tool_run_execute(tool_run *r, const tc_plan *plan, tool_exec_fn fn,
                     const void *arg) {
    int rc = TOOL_FAIL;
    double *ms = NULL;
    tc_status st;
    /* Always pass a workspace, so timed executes never allocate. */
    void *ws = tool_alloc(tc_plan_workspace_size(plan));
    if (!ws) return tool_error("out of memory for a %zu-byte workspace",
                               tc_plan_workspace_size(plan));
    if ((st = fn(plan, arg, ws)) != TC_OK) {
        tool_lib_error(st, "%s: execute failed", r->cmd);
        goto done;
    }
    memset(&r->timing, 0, sizeof r->timing);
    if (timing_wanted(r)) {
        ms = malloc((size_t)r->repeat * sizeof *ms);
        if (!ms) {
            tool_error("out of memory");
            goto done;
        }
        for (int64_t i = 0; i < r->repeat; i++) {
            double t0 = tool_now_ms();
            st = fn(plan, arg, ws);
            ms[i] = tool_now_ms() - t0;
            if (st != TC_OK) {
                tool_lib_error(st, "%s: execute failed", r->cmd);
                goto done;
            }
        }
        tool_timing_summarise(&r->timing, ms, r->repeat);
    }
    rc = 0;
done:
    free(ms);
    free(ws);
    return rc;
}

int tool_run_report(tool_run *r, const tc_plan *plan, tool_stats *s) {
    int threads = tc_context_threads(r->ctx);
    if (threads <= 0) threads = tc_cpu_count();
    s->command = r->cmd;
    s->backend = tc_backend_name(tc_plan_backend(plan));
    if (!s->backend) s->backend = "unknown";
    s->algorithm = tc_plan_algorithm(plan);
    if (!s->algorithm) s->algorithm = "unknown";
    s->threads = threads;
    s->measure = r->measure;
    s->flops = tc_plan_flops(plan);
    s->bytes = tc_plan_bytes(plan);
    s->workspace_bytes = tc_plan_workspace_size(plan);
    s->device_workspace_bytes = tc_plan_device_workspace_size(plan);
    s->t = &r->timing;
    if (!timing_wanted(r)) return 0;
    if (s->device_x && tc_plan_backend(plan) == TC_BACKEND_CUDA) {
        /* the execute times above include the host copies; this one is the
         * device time on device-resident data */
        int n = r->timing.repeats > 0 ? (int)(r->timing.repeats < 100000 ? r->timing.repeats : 100000) : 1;
        tc_status st = tc_cuda_time_plan(plan, s->device_x, s->device_w, NULL, n,
                                         &s->device_median_ms, &s->device_min_ms);
        if (st == TC_OK) s->have_device = 1;
        else fprintf(stderr, "tileconv: note: no device time: %s\n", tc_last_error());
    }
    tool_stats_print_line(stderr, s);
    if (r->stats_path && tool_stats_write_json(r->stats_out.fp, s))
        return tool_error("cannot write '%s'", r->stats_path);
    return 0;
}

int tool_run_commit(tool_run *r) {
    return r->stats_path ? tool_outfile_commit(&r->stats_out) : 0;
}

void tool_run_end(tool_run *r) {
    tool_outfile_abort(&r->stats_out);
    tc_context_destroy(r->ctx);
    r->ctx = NULL;
}
