/*
 * peer_scipy.c - runs bench/peer_scipy.py (scipy.ndimage.convolve) with
 * /usr/bin/python3 and reads its JSON lines back. The script's directory is
 * the source tree's bench/ (compiled in) or $TILECONV_BENCH_SCIPY (the
 * script's path); the interpreter is $TILECONV_BENCH_PYTHON or
 * /usr/bin/python3 (the one with numpy and scipy on these machines).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "../src/core/knobs.h" /* the environment knobs */

#ifndef TC_BENCH_SCRIPT_DIR
#define TC_BENCH_SCRIPT_DIR "bench"
#endif

/* Finds "key": in line and parses the number after it. */
static int json_num(const char *line, const char *key, double *v) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(line, pat);
    if (!p) return -1;
    char *end;
    *v = strtod(p + strlen(pat), &end);
    return end == p + strlen(pat) ? -1 : 0;
}

static int json_str(const char *line, const char *key, char *out, size_t n) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": \"", key);
    const char *p = strstr(line, pat);
    if (!p) return -1;
    p += strlen(pat);
    size_t i = 0;
    while (*p && *p != '"' && i + 1 < n) out[i++] = *p++;
    out[i] = 0;
    return 0;
}

int bench_scipy_run(bench_scipy_job *jobs, int n, double budget_s, int repeat,
                    char *why, size_t whyn, char *version, size_t versionn) {
    const char *py = tc__knob_get(TC__KNOB_BENCH_PYTHON);
    if (!py || !*py) py = "/usr/bin/python3";
    char script[1024];
    const char *env_script = tc__knob_get(TC__KNOB_BENCH_SCIPY);
    if (env_script && *env_script) snprintf(script, sizeof script, "%s", env_script);
    else snprintf(script, sizeof script, "%s/peer_scipy.py", TC_BENCH_SCRIPT_DIR);
    if (access(py, X_OK)) {
        snprintf(why, whyn, "%s not found", py);
        return -1;
    }
    if (access(script, R_OK)) {
        snprintf(why, whyn, "%s not found (set TILECONV_BENCH_SCIPY)", script);
        return -1;
    }
    char bud[32], rep[32];
    snprintf(bud, sizeof bud, "%g", budget_s);
    snprintf(rep, sizeof rep, "%d", repeat);
    char **argv = calloc((size_t)n + 8, sizeof *argv);
    char (*spec)[128] = calloc((size_t)n + 1, sizeof *spec);
    if (!argv || !spec) {
        free(argv);
        free(spec);
        snprintf(why, whyn, "out of memory");
        return -1;
    }
    int a = 0;
    argv[a++] = (char *)py;
    argv[a++] = script;
    argv[a++] = "--budget";
    argv[a++] = bud;
    argv[a++] = "--repeat";
    argv[a++] = rep;
    for (int i = 0; i < n; i++) {
        const bench_scipy_job *j = &jobs[i];
        int o = snprintf(spec[i], sizeof spec[i], "%s:", j->id);
        for (int d = 0; d < j->nsp; d++)
            o += snprintf(spec[i] + o, sizeof spec[i] - (size_t)o, "%s%lld", d ? "x" : "",
                          (long long)j->shape[d]);
        o += snprintf(spec[i] + o, sizeof spec[i] - (size_t)o, ":");
        for (int d = 0; d < j->nsp; d++)
            o += snprintf(spec[i] + o, sizeof spec[i] - (size_t)o, "%s%lld", d ? "x" : "",
                          (long long)j->mask[d]);
        argv[a++] = spec[i];
        jobs[i].median_ms = 0;
        jobs[i].repeats = 0;
    }
    argv[a] = NULL;
    char *out = NULL;
    int rc = bench_spawn_capture(argv, &out);
    free(argv);
    free(spec);
    if (!out) {
        snprintf(why, whyn, "cannot run %s", py);
        return -1;
    }
    int got = 0;
    char err[200] = "";
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char id[64];
        double ms, reps;
        if (json_str(line, "error", err, sizeof err) == 0) continue;
        if (json_str(line, "scipy", id, sizeof id) == 0) {
            snprintf(version, versionn, "%s", id);
            continue;
        }
        if (json_str(line, "id", id, sizeof id) || json_num(line, "median_ms", &ms) ||
            json_num(line, "repeats", &reps))
            continue;
        for (int i = 0; i < n; i++)
            if (strcmp(jobs[i].id, id) == 0) {
                jobs[i].median_ms = ms;
                jobs[i].repeats = (int)reps;
                got++;
            }
    }
    free(out);
    if (!got) {
        snprintf(why, whyn, "%s", err[0] ? err : "peer_scipy.py printed no timings");
        return -1;
    }
    (void)rc;
    return 0;
}
