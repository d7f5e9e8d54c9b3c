/*
 * main.c - `tileconv`: command dispatch, top-level help, `bench` handed to
 * the tileconv-bench executable, a weak stub for analyze.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* `tileconv bench`: runs tileconv-bench (next to this executable, else on
 * PATH), which carries the benchmark and its peer libraries so that this
 * executable needs none of them. */
int tc_tool_bench(int argc, char **argv) {
    char self[4096], path[4200];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char **nv = calloc((size_t)argc + 2, sizeof *nv);
    if (!nv) {
        fprintf(stderr, "tileconv: bench: out of memory\n");
        return TOOL_FAIL;
    }
    nv[0] = "tileconv-bench";
    for (int i = 0; i < argc; i++) nv[i + 1] = argv[i]; /* argv[0] is "bench" */
    fflush(stdout);
    fflush(stderr);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = 0;
            snprintf(path, sizeof path, "%s/tileconv-bench", self);
            if (access(path, X_OK) == 0) execv(path, nv);
        }
    }
    execvp("tileconv-bench", nv);
    free(nv);
    fprintf(stderr, "tileconv: bench: tileconv-bench is not installed (looked next to "
                    "tileconv and on PATH); build it with the benchmark enabled\n");
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
