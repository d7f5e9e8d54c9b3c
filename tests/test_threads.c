/* test_threads.c - where the pool's threads run.
 *
 * The situation it reproduces: an OpenMP runtime (libgomp with
 * OMP_PROC_BIND / OMP_PLACES), or any caller, pins the calling thread to one
 * CPU before tileconv's first parallel call. The pool must still spread its
 * threads over the CPUs the process may use, never two on one CPU while
 * another allowed CPU idles, and must give the caller its mask back.
 *
 * Each chunk spins for a few milliseconds and records sched_getcpu() at its
 * start and end; the chunks of one call must run on distinct CPUs.
 *
 *   test_threads [--expect-cpus N]   (N: what tc_cpu_count must return, for
 *                                     the TILECONV_CPUS variant in ctest)
 */
#define _GNU_SOURCE
#include "harness.h"

#include "core/internal.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

enum { MAXC = 64 };
typedef struct rec {
    int cpu0[MAXC], cpu1[MAXC];
    int n, started; /* chunks in the call, chunks begun */
} rec;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void spin_chunk(void *arg, int64_t b, int64_t e, int tid) {
    rec *r = arg;
    (void)b; (void)e;
    if (tid >= MAXC) return;
    r->cpu0[tid] = sched_getcpu();
    /* every chunk waits (up to 10 s) until all have begun, so that a
     * helper woken late on a loaded machine still gets its own chunk: the
     * caller, which claims chunks too, cannot take a second one first */
    __atomic_add_fetch(&r->started, 1, __ATOMIC_SEQ_CST);
    double t0 = now();
    while (__atomic_load_n(&r->started, __ATOMIC_SEQ_CST) < r->n && now() - t0 < 10.0)
        sched_yield();
    t0 = now();
    volatile double x = 1.0;
    while (now() - t0 < 0.02) x = x * 1.0000001 + 1e-9;
    r->cpu1[tid] = sched_getcpu();
}

/* Runs one parallel call of n chunks; checks the chunks ran on n distinct
 * CPUs of the allowed set and stayed there. */
static void check_spread(const char *what, int n, const int *cpus, int ncpu) {
    rec r;
    memset(&r, -1, sizeof r);
    r.n = n;
    r.started = 0;
    tc__parallel_for(n, n, spin_chunk, &r);
    for (int t = 0; t < n; t++) {
        CHECK(r.cpu0[t] >= 0, "%s: chunk %d did not run", what, t);
        CHECK(r.cpu0[t] == r.cpu1[t], "%s: chunk %d moved from CPU %d to %d", what, t,
              r.cpu0[t], r.cpu1[t]);
        int ok = 0;
        for (int i = 0; i < ncpu; i++) ok |= cpus[i] == r.cpu0[t];
        CHECK(ok, "%s: chunk %d ran on CPU %d, outside the pool's set", what, t, r.cpu0[t]);
        for (int u = 0; u < t; u++)
            CHECK(r.cpu0[u] != r.cpu0[t], "%s: chunks %d and %d shared CPU %d", what, u, t,
                  r.cpu0[t]);
    }
}

static int pin_self(int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
}

int main(int argc, char **argv) {
    int expect = -1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--expect-cpus") == 0 && i + 1 < argc) expect = atoi(argv[++i]);
    th_init(1, argv);
    /* the pool's placement is under test: never an OpenMP team, even when
     * a runtime is preloaded (TILECONV_THREADS=auto would take it) */
    tc__threads_runtime(TC__THREADS_POOL);
    int cpus[CPU_SETSIZE];
    char src[200];
    int ncpu = tc__process_cpus(cpus, CPU_SETSIZE, src, sizeof src);
    char line[300];
    tc_cpu_placement(line, sizeof line);
    printf("pool CPUs: %s\n", line);

    TH_BEGIN("tc_cpu_count agrees with the pool's set");
    CHECK(tc_cpu_count() == ncpu, "tc_cpu_count()=%d, pool set has %d", tc_cpu_count(), ncpu);
    if (expect > 0) CHECK(ncpu == expect, "expected %d CPUs (environment), got %d", expect, ncpu);
    TH_END();

    int n = ncpu < MAXC ? ncpu : MAXC;
    if (n < 2) {
        TH_BEGIN("threads on distinct CPUs");
        TH_SKIP("the pool has one CPU here (%s): nothing to spread", src);
        TH_END();
        return th_finish();
    }

    /* 1. the libgomp situation: the caller pinned to the pool's LAST CPU
     * before the first parallel call (so the pool is created now) */
    cpu_set_t before, after;
    TH_BEGIN("caller pinned to CPU %d before the first call", cpus[ncpu - 1]);
    CHECK(pin_self(cpus[ncpu - 1]), "cannot pin the test thread");
    pthread_getaffinity_np(pthread_self(), sizeof before, &before);
    check_spread("pinned last", n, cpus, ncpu);
    pthread_getaffinity_np(pthread_self(), sizeof after, &after);
    CHECK(CPU_EQUAL(&before, &after), "the caller's mask was not restored");
    check_spread("pinned last, 2 threads", 2, cpus, ncpu);
    TH_END();

    TH_BEGIN("caller pinned to CPU %d", cpus[0]);
    CHECK(pin_self(cpus[0]), "cannot pin the test thread");
    check_spread("pinned first", n, cpus, ncpu);
    pthread_getaffinity_np(pthread_self(), sizeof after, &after);
    CHECK(CPU_COUNT(&after) == 1 && CPU_ISSET(cpus[0], &after),
          "the caller's one-CPU mask was not restored");
    TH_END();

    TH_BEGIN("caller free to run anywhere");
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int i = 0; i < ncpu; i++) CPU_SET(cpus[i], &all);
    CHECK(pthread_setaffinity_np(pthread_self(), sizeof all, &all) == 0, "cannot unpin");
    for (int rep = 0; rep < 3; rep++) check_spread("unpinned", n, cpus, ncpu);
    pthread_getaffinity_np(pthread_self(), sizeof after, &after);
    CHECK(CPU_EQUAL(&all, &after), "the caller's full mask was not restored");
    TH_END();

    /* results do not depend on placement: a GEMM through the public API
     * gives the same bits pinned and unpinned */
    TH_BEGIN("same GEMM bits pinned and unpinned");
    enum { M = 67, N = 129, K = 53 };
    static float A[M * K], B[K * N], C1[M * N], C2[M * N];
    th_rng rg = th_rng_for(77);
    for (int i = 0; i < M * K; i++) A[i] = (float)th_value(&rg);
    for (int i = 0; i < K * N; i++) B[i] = (float)th_value(&rg);
    tc_context *ctx = NULL;
    CHECK(tc_context_create(&ctx) == TC_OK, "context: %s", tc_last_error());
    if (ctx) {
        tc_context_set_threads(ctx, 2);
        CHECK(tc_sgemm(ctx, 'N', 'N', M, N, K, 1, A, K, B, N, 0, C1, N) == TC_OK, "%s",
              tc_last_error());
        pin_self(cpus[ncpu - 1]);
        CHECK(tc_sgemm(ctx, 'N', 'N', M, N, K, 1, A, K, B, N, 0, C2, N) == TC_OK, "%s",
              tc_last_error());
        CHECK(memcmp(C1, C2, sizeof C1) == 0, "pinned and unpinned GEMMs differ");
        tc_context_destroy(ctx);
    }
    TH_END();
    return th_finish();
}
