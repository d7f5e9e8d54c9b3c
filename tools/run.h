/*
 * run.h - what filter, conv and gemm share: the execution options
 * (--backend --algo --threads --repeat --stats --measure --tf32 --direct
 * --verbose), the
 * context, the timed execute loop and the statistics report.
 */
#ifndef TC_TOOLS_RUN_H
#define TC_TOOLS_RUN_H

#include "args.h"
#include "outfile.h"
#include "stats.h"
#include "tileconv.h"

#define TOOL_RUN_HELP                                                          \
    "  --backend B      auto (default), cpu or cuda\n"                        \
    "  --algo NAME      force an algorithm (see 'tileconv info')\n"           \
    "  --threads N      CPU threads, 0 = all cores (default)\n"              \
    "  --measure        plan with TC_PLAN_MEASURE (time the candidates)\n"   \
    "  --tf32           allow TF32 tensor cores on the GPU (TC_PLAN_ALLOW_TF32:\n" \
    "                   ~5e-4 relative error instead of ~1e-6; conv, gemm)\n" \
    "  --direct         direct summation only (TC_PLAN_DIRECT): no Winograd, FFT,\n" \
    "                   Strassen or factorised algorithms\n" \
    "  --repeat N       time N executes after one warm-up (default 1); with\n" \
    "                   none of --repeat, --stats, --verbose: one untimed run\n" \
    "  --stats FILE     write timing statistics as JSON to FILE\n"            \
    "  --verbose        print the summary line even without --repeat/--stats\n"

typedef struct tool_run {
    const char *cmd;
    tc_backend backend;
    int have_backend;
    const char *algo;
    int threads;
    int have_threads;
    int64_t repeat;
    int have_repeat;
    const char *stats_path;
    int measure;
    int tf32;
    int direct;
    int verbose;
    int always_report; /* gemm: the summary line is its output */
    tc_context *ctx;
    tool_outfile stats_out;
    tool_timing timing;
} tool_run;

void tool_run_init(tool_run *r, const char *cmd);
/* Handles the current option when it is one of the shared ones: returns 0
 * (handled), 2 (usage error printed) or -1 (not a shared option). */
int tool_run_option(tool_run *r, tool_args *a);
/* Creates the context and opens the --stats file. 0 or 1. */
int tool_run_begin(tool_run *r);
void tool_run_plan_options(const tool_run *r, tc_plan_options *opt);

/* One execute of the plan with the given workspace. */
typedef tc_status (*tool_exec_fn)(const tc_plan *plan, const void *arg,
                                  void *workspace);
/* Executes the plan once, or, when timing was asked for, once to warm up
 * and then --repeat times, each timed. 0 or 1 (message printed). */
int tool_run_execute(tool_run *r, const tc_plan *plan, tool_exec_fn fn,
                     const void *arg);
/* Prints the summary line (when asked for) and writes the --stats JSON to
 * the temporary stats file; s->t, backend, algorithm, threads, flops,
 * bytes and workspace are filled in from the plan. 0 or 1. */
int tool_run_report(tool_run *r, const tc_plan *plan, tool_stats *s);
/* Renames the stats file into place. 0 or 1. */
int tool_run_commit(tool_run *r);
/* Destroys the context; removes an uncommitted stats file. */
void tool_run_end(tool_run *r);

#endif /* TC_TOOLS_RUN_H */
