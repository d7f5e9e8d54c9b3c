/*
 * cmd_info.c - `tileconv info [--kernels]`: what this build and machine offer.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "tileconv.h"
#include "tools.h"

static const char info_help[] =
    "usage: tileconv info [--kernels]\n"
    "\n"
    "Prints the library version, the compiled-in algorithms (marking those\n"
    "usable on this machine), the CPU features, the thread count and the\n"
    "CUDA devices. --kernels adds each algorithm's operations and summary.\n";

static void ops_string(unsigned ops, char *buf, size_t n) {
    snprintf(buf, n, "%s%s%s", (ops & TC_OP_FILTER) ? "filter," : "",
             (ops & TC_OP_CONV) ? "conv," : "", (ops & TC_OP_GEMM) ? "gemm," : "");
    size_t len = strlen(buf);
    if (len) buf[len - 1] = 0;
}

int tool_cmd_info(int argc, char **argv) {
    tool_args a;
    const char *pos;
    int kind, kernels = 0;
    tool_args_init(&a, "info", argc, argv);
    while ((kind = tool_args_next(&a, &pos)) != ARGS_END) {
        if (kind == ARGS_POSITIONAL)
            return tool_usage_error("info", "unexpected argument '%s'", pos);
        if (tool_args_is(&a, "--help")) {
            fputs(info_help, stdout);
            return TOOL_OK;
        }
        if (!tool_args_is(&a, "--kernels")) return tool_args_unknown(&a);
        if (tool_args_flag(&a)) return TOOL_USAGE;
        kernels = 1;
    }

    char features[256] = "";
    tc_cpu_features(features, sizeof features);
    printf("tileconv %s\n", tc_version());
    printf("cpu features: %s\n", features[0] ? features : "(none detected)");
    printf("cpu threads: %d\n", tc_cpu_count());
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
