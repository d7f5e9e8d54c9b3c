/*
 * main.c - `tileconv`: command dispatch, top-level help, weak stubs for the
 * sub-commands written elsewhere.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "tileconv.h"
#include "tools.h"

static const char main_help[] =
    "usage: tileconv COMMAND [options]\n"
    "\n"
    "Commands:\n"
    "  filter IN OUT --kernel K   scipy.ndimage/scipy.signal filtering of\n"
    "                             .npy arrays and PNG/PGM/PPM images\n"
    "  conv X W OUT               PyTorch conv1d/2d/3d forward on .npy files\n"
    "  gemm --m M --n N --k K     time GEMM on random matrices\n"
    "  info [--kernels]           version, algorithms, CPU, GPUs\n"
    "  analyze ...                see 'tileconv analyze --help'\n"
    "  bench ...                  see 'tileconv bench --help'\n"
    "\n"
    "'tileconv COMMAND --help' describes a command. --version prints the\n"
    "version. Exit status: 0 success, 1 runtime or data error, 2 usage error.\n";

__attribute__((weak)) int tc_tool_bench(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "tileconv: bench is not built in this version\n");
    return TOOL_FAIL;
}

__attribute__((weak)) int tc_tool_analyze(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "tileconv: analyze is not built in this version\n");
    return TOOL_FAIL;
}

int main(int argc, char **argv) {
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        {"filter", tool_cmd_filter}, {"conv", tool_cmd_conv},
        {"gemm", tool_cmd_gemm},     {"info", tool_cmd_info},
        {"analyze", tc_tool_analyze}, {"bench", tc_tool_bench},
    };
    if (argc < 2) {
        fputs(main_help, stderr);
        return TOOL_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(main_help, stdout);
        return TOOL_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("tileconv %s\n", tc_version());
        return TOOL_OK;
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(cmd, cmds[i].name) == 0) return cmds[i].fn(argc - 1, argv + 1);
    return tool_usage_error(NULL, "unknown command '%s'", cmd);
}
