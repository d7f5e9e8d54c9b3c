/*
 * cmd_info.c - `tileconv info [--kernels] [--ceilings] [--knobs]`: what this
 * build and machine offer.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "core/knobs.h"
#include "ceilings.h"
#include "tileconv.h"
#include "tools.h"

static const char info_help[] =
    "usage: tileconv info [--kernels] [--ceilings] [--knobs]\n"
    "\n"
    "Prints the library version, the CPU (vendor, model, microarchitecture\n"
    "family, features), the CPUs the thread pool uses, the ceilings the\n"
    "planner's cost model uses, the CUDA devices and the compiled-in\n"
    "algorithms (marking those usable on this machine). --kernels adds each\n"
    "algorithm's operations and summary. --ceilings first measures this\n"
    "machine's FMA peak (one core and all) and copy bandwidth (a few\n"
    "seconds, 512 MiB) and stores them for the planner in the ceilings file\n"
    "(TILECONV_CEILINGS, else $XDG_CACHE_HOME or ~/.cache/tileconv/ceilings.txt).\n"
    "--knobs prints instead every environment variable tileconv reads, with\n"
    "its value here, default, reader and meaning (docs/knobs.md).\n";

/* The knob table (src/core/knobs.h) with each knob's value. */
static int print_knobs(void) {
    printf("knobs: %d (docs/knobs.md; an old name is read when the TILECONV_ one is unset)\n",
           TC__NKNOBS);
    for (int i = 0; i < TC__NKNOBS; i++) {
        const tc__knob *k = &tc__knob_table[i];
        const char *v = getenv(k->name), *from = NULL;
        if (!v && k->old && (v = getenv(k->old))) from = k->old;
        printf("  %-36s ", k->name);
        if (v && from) printf("= \"%s\" (from %s, deprecated)", v, from);
        else if (v) printf("= \"%s\"", v);
        else printf("unset (default: %s)", k->def);
        printf("  [%s] %s", k->reader, k->meaning);
        if (k->old) printf(" (old name %s)", k->old);
        putchar('\n');
    }
    return fflush(stdout) == 0 ? TOOL_OK : tool_error("info: write error");
}

static void ops_string(unsigned ops, char *buf, size_t n) {
    snprintf(buf, n, "%s%s%s", (ops & TC_OP_FILTER) ? "filter," : "",
             (ops & TC_OP_CONV) ? "conv," : "", (ops & TC_OP_GEMM) ? "gemm," : "");
    size_t len = strlen(buf);
    if (len) buf[len - 1] = 0;
}

int tool_cmd_info(int argc, char **argv) {
    tool_args a;
    const char *pos;
    int kind, kernels = 0, ceilings = 0, knobs = 0;
    tool_args_init(&a, "info", argc, argv);
    while ((kind = tool_args_next(&a, &pos)) != ARGS_END) {
        if (kind == ARGS_POSITIONAL)
            return tool_usage_error("info", "unexpected argument '%s'", pos);
        if (tool_args_is(&a, "--help")) {
            fputs(info_help, stdout);
            return TOOL_OK;
        }
        if (!tool_args_is(&a, "--kernels") && !tool_args_is(&a, "--ceilings") &&
            !tool_args_is(&a, "--knobs"))
            return tool_args_unknown(&a);
        if (tool_args_is(&a, "--ceilings")) ceilings = 1;
        else if (tool_args_is(&a, "--knobs")) knobs = 1;
        else kernels = 1;
        if (tool_args_flag(&a)) return TOOL_USAGE;
    }
    if (knobs) return print_knobs();
    if (ceilings) {
        tc_tool_ceilings one, all;
        fprintf(stderr, "tileconv: info: measuring the ceilings (one core, then all)...\n");
        if (tc_tool_measure_ceilings_ex(1, &one) != 0 || tc_tool_measure_ceilings_ex(0, &all) != 0)
            return tool_error("info: the ceilings measurement failed (out of memory?)");
        printf("measured: FMA peak %.1f GFLOP/s on one core, %.1f on %d threads (%s); "
               "copy %.1f GB/s (%s)\n", one.flops / 1e9, all.flops / 1e9, all.threads,
               one.isa, all.bytes_per_s / 1e9, all.copy_method);
        tc_status st = tc_machine_set_ceilings(one.flops, all.bytes_per_s, 1);
        if (st != TC_OK) return tool_lib_error(st, "info: cannot store the ceilings");
    }

    char features[256] = "";
    tc_cpu_features(features, sizeof features);
    printf("tileconv %s\n", tc_version());
    tc_machine m;
    char place[300];
    tc_machine_info(&m);
    tc_cpu_placement(place, sizeof place);
    printf("cpu: %s \"%s\", family %d model %d: %s\n", m.vendor, m.model, m.family,
           m.model_number, m.uarch);
    printf("cpu features: %s\n", features[0] ? features : "(none detected)");
    printf("cpu threads: %d (%s)\n", tc_cpu_count(), place);
    if (m.bytes_per_s > 0)
        printf("cpu ceilings: %.1f GFLOP/s per core, %.1f GB/s copy (%s)\n",
               m.flops_per_core / 1e9, m.bytes_per_s / 1e9, m.ceilings_source);
    else
        printf("cpu ceilings: %.1f GFLOP/s per core, bandwidth not measured (%s; "
               "'tileconv info --ceilings' measures both)\n",
               m.flops_per_core / 1e9, m.ceilings_source);
    int ngpu = tc_cuda_device_count();
    if (ngpu > 0) printf("cuda devices: %d\n", ngpu);
    else printf("cuda devices: 0 (no usable CUDA device)\n");

    int n = tc_algorithm_count(), navail = 0;
    for (int i = 0; i < n; i++) {
        tc_algorithm_info ai;
        if (tc_algorithm_get(i, &ai) == TC_OK && ai.available) navail++;
    }
    printf("algorithms: %d compiled in, %d available\n", n, navail);
    for (int i = 0; i < n; i++) {
        tc_algorithm_info ai;
        char ops[32];
        if (tc_algorithm_get(i, &ai) != TC_OK) {
            printf("  #%d: %s\n", i, tc_last_error());
            continue;
        }
        const char *bk = tc_backend_name(ai.backend);
        ops_string(ai.ops, ops, sizeof ops);
        printf("  %-28s %-5s %s", ai.name ? ai.name : "?", bk ? bk : "?",
               ai.available ? "available" : "unavailable");
        if (kernels)
            printf("  [%s] %s", ops, ai.summary ? ai.summary : "");
        putchar('\n');
    }
    if (kernels && ngpu > 0) { /* CUDA kernels' registers, shared memory, occupancy */
        static char rep[1 << 16];
        if (tc_cuda_kernel_report(rep, sizeof rep) == TC_OK) fputs(rep, stdout);
        else printf("cuda kernels: %s\n", tc_last_error());
    }
    return fflush(stdout) == 0 ? TOOL_OK : tool_error("info: write error");
}
