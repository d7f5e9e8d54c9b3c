/*
 * bench_main.c - main() of `tileconv-bench`: the benchmark and its peers
 * (oneDNN, OpenCV, OpenBLAS, bare FFTW) in their own executable, so that
 * `tileconv` itself never loads them. `tileconv bench ARGS` runs
 * `tileconv-bench bench ARGS`; `tileconv-bench ARGS` works too.
 */
#include <string.h>

int tc_tool_bench(int argc, char **argv); /* bench.c */

int main(int argc, char **argv) {
    /* the re-executed child and the front end pass "bench" first */
    if (argc > 1 && strcmp(argv[1], "bench") == 0) {
        argc--;
        argv++;
    }
    argv[0] = "bench"; /* tc_tool_bench sees its command name first */
    return tc_tool_bench(argc, argv);
}
