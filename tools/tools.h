/*
 * tools.h - entry points of the tileconv command-line tool's sub-commands.
 *
 * Every command gets argv[0] = its own name ("filter", "analyze", ...) and
 * returns the process exit status: 0 success, 1 runtime or data error,
 * 2 usage error. Errors are printed as one line "tileconv: <message>".
 */
#ifndef TC_TOOLS_H
#define TC_TOOLS_H

enum { TOOL_OK = 0, TOOL_FAIL = 1, TOOL_USAGE = 2 };

int tool_cmd_filter(int argc, char **argv);
int tool_cmd_conv(int argc, char **argv);
int tool_cmd_gemm(int argc, char **argv);
int tool_cmd_info(int argc, char **argv);

/* `analyze` (tools/analyze.c; main.c holds a weak stub) and `bench`
 * (main.c: runs the tileconv-bench executable, bench/bench.c's
 * tc_tool_bench inside it). */
int tc_tool_analyze(int argc, char **argv);
int tc_tool_bench(int argc, char **argv);

#endif /* TC_TOOLS_H */
