/*
 * args.h - option parsing and error reporting shared by the sub-commands.
 *
 * Options are GNU style: "--name value" or "--name=value"; "--" ends the
 * options; "-" alone is a positional argument. Values are taken verbatim
 * from the next argument, so "--cval -1" works.
 */
#ifndef TC_TOOLS_ARGS_H
#define TC_TOOLS_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "tileconv.h"

typedef struct tool_args {
    int argc;
    char **argv;
    int i;              /* next argv index to look at */
    const char *cmd;    /* sub-command name, for messages */
    char opt[64];       /* current option, "--name" */
    const char *inline_val; /* value after '=', or NULL */
    int no_more_options;
} tool_args;

enum { ARGS_END = 0, ARGS_POSITIONAL = 1, ARGS_OPTION = 2 };

void tool_args_init(tool_args *a, const char *cmd, int argc, char **argv);
/* Returns ARGS_END, ARGS_POSITIONAL (*pos set) or ARGS_OPTION (a->opt set). */
int tool_args_next(tool_args *a, const char **pos);
/* True when the current option is `name` (e.g. "--mode"). */
int tool_args_is(const tool_args *a, const char *name);
/* True when the current option is one of the NULL-terminated names. */
int tool_args_in(const tool_args *a, const char *const *names);
/* The current option's value: 0, or 2 after printing a usage error. */
int tool_args_value(tool_args *a, const char **val);
/* Checks a flag option took no "=value": 0 or 2. */
int tool_args_flag(tool_args *a);
/* Prints "unknown option" for the current option; returns 2. */
int tool_args_unknown(const tool_args *a);

/* Number parsing: the whole string must be a number in [lo, hi]. Return 0,
 * or 2 after printing "tileconv: CMD: invalid value 'S' for OPT: ...". */
int tool_parse_i64(const tool_args *a, const char *s, int64_t lo, int64_t hi,
                   int64_t *out);
int tool_parse_int(const tool_args *a, const char *s, int lo, int hi, int *out);
int tool_parse_double(const tool_args *a, const char *s, double *out);
/* Comma-separated list of 1..maxn integers in [lo, hi]. */
int tool_parse_i64_list(const tool_args *a, const char *s, int64_t lo,
                        int64_t hi, int64_t *vals, int maxn, int *n);

/* One-line error reporting, "tileconv: " + message. Return 1 / 2 / 1. */
int tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tool_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends ": " and tc_last_error() (or the status text when empty). */
int tool_lib_error(tc_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Checks that an input file exists and is not a directory: 0, or 1 with
 * the error printed. */
int tool_check_input(const char *path);
/* Fails (1, printed) when an output path is an existing directory. */
int tool_check_output(const char *path);
/* Case-insensitive test that path ends with ext (".npy"). */
int tool_has_ext(const char *path, const char *ext);
/* 64-byte aligned allocation of at least bytes (bytes may be 0); free(). */
void *tool_alloc(size_t bytes);

#endif /* TC_TOOLS_ARGS_H */
