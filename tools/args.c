/*
 * args.c - option parsing and one-line error reporting. See args.h.
 */
#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "tools.h"

static void vreport(const char *cmd, const char *fmt, va_list ap,
                    const char *suffix) {
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    /* Keep the promise of one line even when a message carries a newline. */
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    if (cmd)
        fprintf(stderr, "tileconv: %s: %s%s\n", cmd, msg, suffix ? suffix : "");
    else
        fprintf(stderr, "tileconv: %s%s\n", msg, suffix ? suffix : "");
}

int tool_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(NULL, fmt, ap, NULL);
    va_end(ap);
    return TOOL_FAIL;
}

int tool_usage_error(const char *cmd, const char *fmt, ...) {
    char hint[96];
    va_list ap;
    snprintf(hint, sizeof hint, " (see 'tileconv %s%s--help')",
             cmd ? cmd : "", cmd ? " " : "");
    va_start(ap, fmt);
    vreport(cmd, fmt, ap, hint);
    va_end(ap);
    return TOOL_USAGE;
}

int tool_lib_error(tc_status st, const char *fmt, ...) {
    char suffix[600];
    const char *le = tc_last_error();
    snprintf(suffix, sizeof suffix, ": %s",
             (le && le[0]) ? le : tc_status_string(st));
    va_list ap;
    va_start(ap, fmt);
    vreport(NULL, fmt, ap, suffix);
    va_end(ap);
    return TOOL_FAIL;
}

void tool_args_init(tool_args *a, const char *cmd, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->argc = argc;
    a->argv = argv;
    a->i = 1;
    a->cmd = cmd;
}

int tool_args_next(tool_args *a, const char **pos) {
    while (a->i < a->argc) {
        const char *s = a->argv[a->i++];
        if (a->no_more_options || s[0] != '-' || s[1] == 0) {
            *pos = s;
            return ARGS_POSITIONAL;
        }
        if (strcmp(s, "--") == 0) {
            a->no_more_options = 1;
            continue;
        }
        const char *eq = strchr(s, '=');
        size_t n = eq ? (size_t)(eq - s) : strlen(s);
        if (n >= sizeof a->opt) n = sizeof a->opt - 1;
        memcpy(a->opt, s, n);
        a->opt[n] = 0;
        a->inline_val = eq ? eq + 1 : NULL;
        if (strcmp(a->opt, "-h") == 0) strcpy(a->opt, "--help");
        return ARGS_OPTION;
    }
    return ARGS_END;
}

int tool_args_is(const tool_args *a, const char *name) {
    return strcmp(a->opt, name) == 0;
}

int tool_args_in(const tool_args *a, const char *const *names) {
    for (; *names; names++)
        if (strcmp(a->opt, *names) == 0) return 1;
    return 0;
}

int tool_args_value(tool_args *a, const char **val) {
    if (a->inline_val) {
        *val = a->inline_val;
        return 0;
    }
    if (a->i >= a->argc)
        return tool_usage_error(a->cmd, "option %s needs a value", a->opt);
    *val = a->argv[a->i++];
    return 0;
}

int tool_args_flag(tool_args *a) {
    if (a->inline_val)
        return tool_usage_error(a->cmd, "option %s takes no value", a->opt);
    return 0;
}

int tool_args_unknown(const tool_args *a) {
    return tool_usage_error(a->cmd, "unknown option '%s'", a->opt);
}

static int bad_value(const tool_args *a, const char *s, const char *why) {
    return tool_usage_error(a->cmd, "invalid value '%s' for %s: %s", s, a->opt,
                            why);
}

/* Parses one integer from s, stopping at *end; 0 or 2. */
static int parse_i64_at(const tool_args *a, const char *s, const char *whole,
                        char **end, int64_t lo, int64_t hi, int64_t *out) {
    char why[96];
    while (isspace((unsigned char)*s)) s++;
    if (*s == 0 || *s == ',') return bad_value(a, whole, "expected an integer");
    errno = 0;
    long long v = strtoll(s, end, 10);
    if (*end == s) return bad_value(a, whole, "expected an integer");
    if (errno == ERANGE || v < lo || v > hi) {
        snprintf(why, sizeof why, "must be between %lld and %lld",
                 (long long)lo, (long long)hi);
        return bad_value(a, whole, why);
    }
    *out = v;
    return 0;
}

int tool_parse_i64(const tool_args *a, const char *s, int64_t lo, int64_t hi,
                   int64_t *out) {
    char *end;
    int64_t v = 0;
    if (parse_i64_at(a, s, s, &end, lo, hi, &v)) return TOOL_USAGE;
    if (*end != 0) return bad_value(a, s, "expected an integer");
    *out = v;
    return 0;
}

int tool_parse_int(const tool_args *a, const char *s, int lo, int hi, int *out) {
    int64_t v = 0;
    if (tool_parse_i64(a, s, lo, hi, &v)) return TOOL_USAGE;
    *out = (int)v;
    return 0;
}

int tool_parse_double(const tool_args *a, const char *s, double *out) {
    char *end;
    while (isspace((unsigned char)*s)) s++;
    if (*s == 0) return bad_value(a, s, "expected a number");
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != 0) return bad_value(a, s, "expected a number");
    if (errno == ERANGE && isinf(v)) return bad_value(a, s, "out of range");
    *out = v;
    return 0;
}

int tool_parse_i64_list(const tool_args *a, const char *s, int64_t lo,
                        int64_t hi, int64_t *vals, int maxn, int *n) {
    const char *p = s;
    char *end;
    int k = 0;
    for (;;) {
        if (k == maxn) {
            char why[64];
            snprintf(why, sizeof why, "at most %d values", maxn);
            return bad_value(a, s, why);
        }
        if (parse_i64_at(a, p, s, &end, lo, hi, &vals[k])) return TOOL_USAGE;
        k++;
        if (*end == 0) break;
        if (*end != ',') return bad_value(a, s, "expected integers separated by ','");
        p = end + 1;
    }
    *n = k;
    return 0;
}

int tool_check_input(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0)
        return tool_error("cannot open '%s': %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) return tool_error("'%s' is a directory", path);
    return 0;
}

int tool_check_output(const char *path) {
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return tool_error("cannot write '%s': is a directory", path);
    return 0;
}

int tool_has_ext(const char *path, const char *ext) {
    size_t n = strlen(path), m = strlen(ext);
    return n > m && strcasecmp(path + n - m, ext) == 0;
}

void *tool_alloc(size_t bytes) {
    size_t r = (bytes + 63) / 64 * 64;
    if (r < bytes) return NULL;
    return aligned_alloc(64, r ? r : 64);
}
