/*
 * harness.h - a tiny test harness for tileconv's C tests (header only).
 *
 * A test program runs named test cases:
 *
 *     th_init(argc, argv);               // prints the seed
 *     TH_BEGIN("filter 2D reflect %d", i);
 *     CHECK(st == TC_OK, "plan: %s", tc_last_error());
 *     ...
 *     TH_END();                           // counts pass / fail
 *     return th_finish();                 // prints the summary line
 *
 * A case passes when none of its CHECKs failed, fails otherwise, and is
 * skipped when TH_SKIP(reason) was called (the reason is printed; a skip
 * never counts as a pass). The last line printed is exactly
 * "N passed, N failed, N skipped", which CI recognises.
 *
 * Environment:
 *   TILECONV_TEST_SEED=N     seed of the random inputs (default: from the clock;
 *                      always printed so a failure can be replayed)
 *   TILECONV_TEST_QUICK=1    smaller case tables (sanitizer builds)
 *   TILECONV_TEST_VERBOSE=1  print every case, not only failures and skips
 */
#ifndef TC_TESTS_HARNESS_H
#define TC_TESTS_HARNESS_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "tileconv.h"
#include "../src/core/knobs.h" /* the environment knobs */

typedef struct th_state {
    long passed, failed, skipped;
    int in_case;            /* between TH_BEGIN and TH_END */
    int case_failed;        /* a CHECK failed in this case */
    int case_skipped;
    int case_checks_failed; /* failures printed in this case */
    char case_name[400]; /* an op, a label of up to 320 and the algorithm */
    uint64_t seed;
    int quick, verbose;
} th_state;

static th_state th_g;

/* ---- random numbers: splitmix64, reproducible from the seed ---- */
typedef struct th_rng { uint64_t s; } th_rng;

static inline uint64_t th_next(th_rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* Uniform integer in [lo, hi]. */
static inline int64_t th_int(th_rng *r, int64_t lo, int64_t hi) {
    return lo + (int64_t)(th_next(r) % (uint64_t)(hi - lo + 1));
}
/* Uniform double in [lo, hi). */
static inline double th_uniform(th_rng *r, double lo, double hi) {
    return lo + (hi - lo) * ((double)(th_next(r) >> 11) * (1.0 / 9007199254740992.0));
}
/* A non-zero value in +-[0.1, 1): random data is never zero, so a solver
 * that drops a term or reads a zero-filled buffer cannot pass by luck. */
static inline double th_value(th_rng *r) {
    double v = th_uniform(r, 0.1, 1.0);
    return (th_next(r) & 1) ? v : -v;
}
static inline th_rng th_rng_for(uint64_t salt) {
    th_rng r = {th_g.seed ^ (salt * 0xD1B54A32D192ED03ull)};
    th_next(&r);
    return r;
}

/* ---- setup / summary ---- */
#if !defined(__SANITIZE_ADDRESS__) /* the sanitizer reports crashes itself */
/* On a crash, or when killed by `timeout` (SIGTERM: a hung case), name
 * the case that was running, then die as before. */
static void th_crash_handler(int sig) {
    static const char crash[] = "\nCRASH (signal) in case: ";
    static const char term[] = "\nKILLED (SIGTERM: timed out?) in case: ";
    const char *msg = sig == SIGTERM ? term : crash;
    const size_t len = sig == SIGTERM ? sizeof term - 1 : sizeof crash - 1;
    if (write(1, msg, len) < 0) {}
    if (th_g.in_case && write(1, th_g.case_name, strlen(th_g.case_name)) < 0) {}
    if (write(1, "\n", 1) < 0) {}
    signal(sig, SIG_DFL);
    raise(sig);
}
#endif

static inline int th_env_flag(int knob) {
    const char *v = tc__knob_get(knob);
    return v && v[0] && strcmp(v, "0") != 0;
}

static inline void th_init(int argc, char **argv) {
    (void)argc;
    const char *s = tc__knob_get(TC__KNOB_TEST_SEED);
    if (s && s[0]) {
        th_g.seed = strtoull(s, NULL, 0);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        th_g.seed = ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec;
        th_g.seed %= 1000000007u; /* short enough to type */
    }
    th_g.quick = th_env_flag(TC__KNOB_TEST_QUICK);
#if !defined(__SANITIZE_ADDRESS__) /* keep the sanitizer's own reports */
    signal(SIGSEGV, th_crash_handler);
    signal(SIGBUS, th_crash_handler);
    signal(SIGFPE, th_crash_handler);
    signal(SIGABRT, th_crash_handler);
    signal(SIGTERM, th_crash_handler);
#endif
    th_g.verbose = th_env_flag(TC__KNOB_TEST_VERBOSE);
    printf("%s: seed %" PRIu64 " (replay with TILECONV_TEST_SEED=%" PRIu64 ")%s\n",
           argv && argv[0] ? argv[0] : "test", th_g.seed, th_g.seed,
           th_g.quick ? ", quick" : "");
    fflush(stdout);
}

static inline void th_begin(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(th_g.case_name, sizeof th_g.case_name, fmt, ap);
    va_end(ap);
    th_g.in_case = 1;
    th_g.case_failed = th_g.case_skipped = th_g.case_checks_failed = 0;
}
#define TH_BEGIN(...) th_begin(__VA_ARGS__)

/* Ends the case and counts it; returns 1 when it passed. */
static inline int th_end(void) {
    int ok = 0;
    if (th_g.case_failed) {
        th_g.failed++;
        printf("FAIL %s\n", th_g.case_name);
    } else if (th_g.case_skipped) {
        th_g.skipped++;
    } else {
        th_g.passed++;
        ok = 1;
        if (th_g.verbose) printf("ok   %s\n", th_g.case_name);
    }
    th_g.in_case = 0;
    fflush(stdout);
    return ok;
}
#define TH_END() th_end()

/* Marks the current case skipped and prints why. A case with a failed
 * CHECK stays failed. */
static inline void th_skip(const char *fmt, ...) {
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    th_g.case_skipped = 1;
    printf("SKIP %s: %s\n", th_g.case_name, why);
}
#define TH_SKIP(...) th_skip(__VA_ARGS__)
/* Marks the case skipped without printing (the caller printed the reason
 * before, e.g. for the hundredth case of an unavailable solver). */
static inline void th_skip_silent(void) { th_g.case_skipped = 1; }

/* Records a failure when ok is 0; prints at most 8 messages per case.
 * Returns ok. */
static inline int th_check(int ok, const char *file, int line, const char *expr,
                           const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static inline int th_check(int ok, const char *file, int line, const char *expr,
                           const char *fmt, ...) {
    if (ok) return 1;
    th_g.case_failed = 1;
    if (!th_g.in_case) th_g.failed++; /* a check outside any case */
    if (++th_g.case_checks_failed > 8) return 0;
    printf("  %s:%d: [%s] check failed: %s", file, line,
           th_g.in_case ? th_g.case_name : "-", expr);
    if (fmt && fmt[0]) {
        va_list ap;
        va_start(ap, fmt);
        printf(": ");
        vprintf(fmt, ap);
        va_end(ap);
    }
    printf("\n");
    return 0;
}

/* CHECK(cond, fmt, ...): fails the case when cond is false and prints the
 * message. Evaluates to the truth of cond, so callers can stop early:
 * if (!CHECK(...)) goto out; */
#define CHECK(cond, ...) th_check(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)
#define CHECK_EQ_INT(a, b) \
    CHECK((long long)(a) == (long long)(b), "%s=%lld, expected %lld", #a, \
          (long long)(a), (long long)(b))
/* CHECK_STATUS(call, want): evaluates call once; fails with both status
 * names and tc_last_error() when it is not want. */
#define CHECK_STATUS(st, want) th_check_status((st), (want), __FILE__, __LINE__, #st)
static inline int th_check_status(tc_status st, tc_status want, const char *file,
                                  int line, const char *expr) {
    return th_check(st == want, file, line, expr,
                    "status %d (%s), expected %d (%s); last error '%s'", (int)st,
                    tc_status_string(st), (int)want, tc_status_string(want),
                    tc_last_error());
}

/* Prints the summary line (always the last line) and returns the exit
 * status: 0 when nothing failed. */
static inline int th_finish(void) {
    if (th_g.in_case) th_end();
    printf("seed was %" PRIu64 "\n", th_g.seed);
    printf("%ld passed, %ld failed, %ld skipped\n", th_g.passed, th_g.failed,
           th_g.skipped);
    fflush(stdout);
    return th_g.failed ? 1 : 0;
}

#endif /* TC_TESTS_HARNESS_H */
