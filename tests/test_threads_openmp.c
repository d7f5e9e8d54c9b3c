/* test_threads_openmp.c - tc__parallel_for's jobs on the process's OpenMP
 * runtime (TILECONV_THREADS=openmp / auto, src/core/threads.c).
 *
 * libtileconv does not link an OpenMP runtime: it takes GOMP_parallel from
 * one already loaded. The test loads libgomp itself (dlopen, RTLD_GLOBAL)
 * as a program or torch would, and skips, saying why, when there is none.
 * Then:
 *   - every chunk of a job runs exactly once, with the (begin, end, t) of
 *     the pool's chunking, inside an OpenMP parallel region, on a team of
 *     min(chunks, CPUs) threads;
 *   - a call from inside a chunk runs inline, on that thread;
 *   - a job started from a user's OpenMP region whose nested team has one
 *     thread (max-active-levels 1) still runs every chunk once, and
 *     concurrent callers (one takes the runtime, the others run inline)
 *     all finish;
 *   - a real filter and a real conv give the same bits through the OpenMP
 *     runtime as through the pool.
 */
#define _GNU_SOURCE
#include "harness.h"

#include "core/internal.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pthread.h>

typedef void (*gomp_parallel_t)(void (*)(void *), void *, unsigned, unsigned);
static gomp_parallel_t p_GOMP_parallel;
static int (*p_omp_in_parallel)(void);
static int (*p_omp_get_num_threads)(void);
static int (*p_omp_get_thread_num)(void);
static void (*p_omp_set_max_active_levels)(int);

enum { MAXT = 64 };
typedef struct job {
    int64_t n, chunks;
    int runs[MAXT];           /* times chunk t ran */
    int64_t b[MAXT], e[MAXT]; /* its range */
    int in_omp[MAXT];         /* omp_in_parallel() inside it */
    int team[MAXT];           /* omp_get_num_threads() inside it */
    pthread_t thr[MAXT];
    int bad_tid;
    int nested;               /* run a nested call inside each chunk */
    int nested_ok;            /* nested calls that ran inline, correctly */
} job;

static void job_chunk(void *arg, int64_t b, int64_t e, int t) {
    job *J = arg;
    if (t < 0 || t >= MAXT) {
        __atomic_add_fetch(&J->bad_tid, 1, __ATOMIC_RELAXED);
        return;
    }
    __atomic_add_fetch(&J->runs[t], 1, __ATOMIC_RELAXED);
    J->b[t] = b;
    J->e[t] = e;
    J->in_omp[t] = p_omp_in_parallel();
    J->team[t] = p_omp_get_num_threads();
    J->thr[t] = pthread_self();
    if (J->nested) {
        job *K = calloc(1, sizeof *K);
        if (!K) return;
        K->n = 5 + t;
        tc__parallel_for(3, K->n, job_chunk, K);
        int ok = 1;
        for (int u = 0; u < 3; u++)
            ok &= K->runs[u] == 1 && pthread_equal(K->thr[u], pthread_self());
        if (ok) __atomic_add_fetch(&J->nested_ok, 1, __ATOMIC_RELAXED);
        free(K);
    }
}

/* Runs tc__parallel_for(threads, n) and checks each chunk ran once with
 * the pool's chunking; `team` > 0: inside an OpenMP region of that many
 * threads. */
static void check_job(int threads, int64_t n, int team, int nested) {
    job *J = calloc(1, sizeof *J);
    if (!CHECK(J != NULL, "out of memory")) return;
    J->n = n;
    J->nested = nested;
    J->chunks = threads < n ? threads : n;
    tc__parallel_for(threads, n, job_chunk, J);
    CHECK(J->bad_tid == 0, "threads %d n %lld: a chunk index out of range", threads,
          (long long)n);
    int64_t q = n / J->chunks, r = n % J->chunks;
    for (int64_t t = 0; t < J->chunks && t < MAXT; t++) {
        int64_t b = t * q + (t < r ? t : r), e = b + q + (t < r ? 1 : 0);
        CHECK(J->runs[t] == 1, "threads %d n %lld: chunk %lld ran %d times", threads,
              (long long)n, (long long)t, J->runs[t]);
        CHECK(J->b[t] == b && J->e[t] == e, "threads %d n %lld: chunk %lld is [%lld,%lld), "
              "expected [%lld,%lld)", threads, (long long)n, (long long)t, (long long)J->b[t],
              (long long)J->e[t], (long long)b, (long long)e);
        if (team > 0) {
            CHECK(J->in_omp[t], "threads %d n %lld: chunk %lld not in an OpenMP region",
                  threads, (long long)n, (long long)t);
            CHECK(J->team[t] == team, "threads %d n %lld: chunk %lld on a team of %d, "
                  "expected %d", threads, (long long)n, (long long)t, J->team[t], team);
        }
    }
    for (int64_t t = J->chunks; t < MAXT; t++)
        CHECK(J->runs[t] == 0, "chunk %lld beyond the %lld chunks ran", (long long)t,
              (long long)J->chunks);
    if (nested)
        CHECK(J->nested_ok == J->chunks, "threads %d n %lld: %d of %lld nested calls ran "
              "inline and complete", threads, (long long)n, J->nested_ok, (long long)J->chunks);
    free(J);
}

/* ---- jobs started from inside a user's OpenMP region ---- */
typedef struct outer {
    int threads;
    int64_t n;
    job jobs[4];
} outer;

static void outer_body(void *p) {
    outer *O = p;
    int me = p_omp_get_thread_num();
    if (me < 0 || me >= 4) return;
    job *J = &O->jobs[me];
    J->n = O->n;
    J->chunks = O->threads < O->n ? O->threads : O->n;
    tc__parallel_for(O->threads, O->n, job_chunk, J);
}

/* ---- real problems: the same bits on both runtimes ---- */
static int run_filter(float *y, const float *x, const float *mask) {
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.dtype = TC_FLOAT32;
    d.ndim = 3;
    d.shape[0] = 3;
    d.shape[1] = 67;
    d.shape[2] = 93;
    d.nspatial = 2;
    d.mask_shape[0] = 5;
    d.mask_shape[1] = 7;
    tc_context *ctx = NULL;
    tc_plan *p = NULL;
    int ok = tc_context_create(&ctx) == TC_OK;
    if (ok) tc_context_set_threads(ctx, 4);
    ok = ok && tc_plan_filter(&p, ctx, &d, mask, NULL) == TC_OK;
    ok = ok && tc_execute_filter(p, y, x, NULL) == TC_OK;
    if (!ok) printf("  filter: %s\n", tc_last_error());
    tc_plan_destroy(p);
    tc_context_destroy(ctx);
    return ok;
}

static int run_conv(float *y, const float *x, const float *w, const float *bias,
                    const char **algo) {
    tc_conv_desc d;
    tc_conv_desc_init(&d);
    d.dtype = TC_FLOAT32;
    d.nspatial = 2;
    d.batch = 2;
    d.in_channels = 19;
    d.out_channels = 23;
    d.in_size[0] = 29;
    d.in_size[1] = 31;
    d.kernel_size[0] = d.kernel_size[1] = 3;
    d.padding[0] = d.padding[1] = 1;
    d.has_bias = 1;
    d.activation = TC_ACT_RELU;
    tc_context *ctx = NULL;
    tc_plan *p = NULL;
    int ok = tc_context_create(&ctx) == TC_OK;
    if (ok) tc_context_set_threads(ctx, 4);
    ok = ok && tc_plan_conv(&p, ctx, &d, NULL) == TC_OK;
    ok = ok && tc_execute_conv(p, y, x, w, bias, NULL) == TC_OK;
    if (!ok) printf("  conv: %s\n", tc_last_error());
    if (ok) *algo = tc_plan_algorithm(p);
    tc_plan_destroy(p);
    tc_context_destroy(ctx);
    return ok;
}

int main(int argc, char **argv) {
    th_init(1, argv);
    (void)argc;
    const char *libs[] = {"libgomp.so.1", "libgomp.so"};
    void *h = NULL;
    for (int i = 0; i < 2 && !h; i++) h = dlopen(libs[i], RTLD_NOW | RTLD_GLOBAL);
    if (h) {
        *(void **)&p_GOMP_parallel = dlsym(h, "GOMP_parallel");
        *(void **)&p_omp_in_parallel = dlsym(h, "omp_in_parallel");
        *(void **)&p_omp_get_num_threads = dlsym(h, "omp_get_num_threads");
        *(void **)&p_omp_get_thread_num = dlsym(h, "omp_get_thread_num");
        *(void **)&p_omp_set_max_active_levels = dlsym(h, "omp_set_max_active_levels");
    }
    int ncpu = tc_cpu_count();
    if (!h || !p_GOMP_parallel || !p_omp_in_parallel || !p_omp_get_num_threads ||
        !p_omp_get_thread_num || !p_omp_set_max_active_levels) {
        TH_BEGIN("jobs on the OpenMP runtime");
        TH_SKIP("no libgomp to load here (%s)", h ? "symbols missing" : dlerror());
        TH_END();
        return th_finish();
    }
    if (ncpu < 2) {
        TH_BEGIN("jobs on the OpenMP runtime");
        TH_SKIP("one CPU here: every job runs inline, on no runtime");
        TH_END();
        return th_finish();
    }

    TH_BEGIN("runtime selection");
    CHECK(tc__threads_runtime(TC__THREADS_POOL) == TC__THREADS_POOL, "pool not selected");
    CHECK(tc__threads_runtime(TC__THREADS_OPENMP) == TC__THREADS_OPENMP,
          "openmp selected with libgomp loaded, but jobs would run on the pool");
    TH_END();

    TH_BEGIN("each chunk once, the pool's chunking, on an OpenMP team");
    int ts[] = {2, 3, 4, 7, 16, 64};
    int64_t ns[] = {1, 2, 3, 5, 17, 64, 1000, 100003};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
            int64_t chunks = ts[i] < ns[k] ? ts[i] : ns[k];
            int team = chunks < ncpu ? (int)chunks : ncpu;
            check_job(ts[i], ns[k], team > 1 ? team : 0, 0);
        }
    TH_END();

    TH_BEGIN("nested calls run inline on the chunk's thread");
    check_job(4, 10, ncpu < 4 ? ncpu : 4, 1);
    check_job(2, 2, 2, 1);
    TH_END();

    TH_BEGIN("jobs from a user's OpenMP region (nested teams of one thread)");
    p_omp_set_max_active_levels(1);
    for (int rep = 0; rep < 20; rep++) {
        outer *O = calloc(1, sizeof *O);
        if (!CHECK(O != NULL, "out of memory")) break;
        O->threads = 4;
        O->n = 37 + rep;
        int width = 2 + rep % 3;
        p_GOMP_parallel(outer_body, O, (unsigned)width, 0);
        for (int m = 0; m < width; m++) {
            job *J = &O->jobs[m];
            int64_t q = J->n / J->chunks, r = J->n % J->chunks;
            for (int64_t t = 0; t < J->chunks; t++) {
                int64_t b = t * q + (t < r ? t : r), e = b + q + (t < r ? 1 : 0);
                CHECK(J->runs[t] == 1 && J->b[t] == b && J->e[t] == e,
                      "outer thread %d of %d: chunk %lld ran %d times, [%lld,%lld)", m, width,
                      (long long)t, J->runs[t], (long long)J->b[t], (long long)J->e[t]);
                CHECK(pthread_equal(J->thr[t], J->thr[0]),
                      "outer thread %d: the chunks of a one-thread team ran on two threads", m);
            }
        }
        free(O);
    }
    TH_END();

    TH_BEGIN("a filter and a conv: the same bits on the pool and on OpenMP");
    th_rng rg = th_rng_for(38);
    enum { FX = 3 * 67 * 93, FM = 5 * 7, CX = 2 * 19 * 29 * 31, CW = 23 * 19 * 9,
           CY = 2 * 23 * 29 * 31 };
    static float fx[FX], fm[FM], fy1[FX], fy2[FX], cx[CX], cw[CW], cb[23], cy1[CY], cy2[CY];
    for (int i = 0; i < FX; i++) fx[i] = (float)th_value(&rg);
    for (int i = 0; i < FM; i++) fm[i] = (float)th_value(&rg);
    for (int i = 0; i < CX; i++) cx[i] = (float)th_value(&rg);
    for (int i = 0; i < CW; i++) cw[i] = (float)th_value(&rg);
    for (int i = 0; i < 23; i++) cb[i] = (float)th_value(&rg);
    const char *a1 = "?", *a2 = "?";
    tc__threads_runtime(TC__THREADS_POOL);
    int ok = run_filter(fy1, fx, fm) && run_conv(cy1, cx, cw, cb, &a1);
    CHECK(ok, "the pool's runs failed");
    CHECK(tc__threads_runtime(TC__THREADS_OPENMP) == TC__THREADS_OPENMP, "openmp not selected");
    ok = ok && run_filter(fy2, fx, fm) && run_conv(cy2, cx, cw, cb, &a2);
    CHECK(ok, "the OpenMP runs failed");
    if (ok) {
        CHECK(memcmp(fy1, fy2, sizeof fy1) == 0, "filter: pool and OpenMP results differ");
        CHECK(strcmp(a1, a2) == 0, "conv: different algorithms %s and %s", a1, a2);
        CHECK(memcmp(cy1, cy2, sizeof cy1) == 0, "conv (%s): pool and OpenMP results differ", a1);
    }
    TH_END();

    TH_BEGIN("a forked child runs the pool (libgomp's team does not survive fork)");
    {
        /* the parent has a live team: a job just ran on it */
        CHECK(tc__threads_runtime(TC__THREADS_OPENMP) == TC__THREADS_OPENMP,
              "openmp not selected");
        check_job(2, 8, 2, 0);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            alarm(30); /* a hang in the child fails the test, not the run */
            int rt = tc__threads_runtime(TC__THREADS_OPENMP);
            job *J = calloc(1, sizeof *J);
            int ok = J != NULL && rt == TC__THREADS_POOL;
            if (J) {
                J->n = 9;
                tc__parallel_for(3, J->n, job_chunk, J);
                for (int t = 0; t < 3; t++) ok &= J->runs[t] == 1;
            }
            _exit(ok ? 0 : 3);
        }
        int st = 0;
        CHECK(pid > 0 && waitpid(pid, &st, 0) == pid, "fork / waitpid failed");
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "the child: %s (status %d)", WIFSIGNALED(st) ? "killed (hung?)" :
              "did not run the pool, or a chunk not once", st);
        CHECK(tc__threads_runtime(TC__THREADS_OPENMP) == TC__THREADS_OPENMP,
              "the parent no longer runs openmp after the fork");
    }
    TH_END();

    tc__threads_runtime(TC__THREADS_AUTO);
    return th_finish();
}
