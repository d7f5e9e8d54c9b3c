/* threads.c - tc__parallel_for on a pinned, persistent thread pool.
 *
 * Chunking depends only on (n, threads): chunk t covers
 * [t*q + min(t, r), ...) with q = n / chunks, r = n % chunks, and is always
 * run as fn(arg, begin, end, t). Which OS thread runs a chunk does not
 * matter, so results are reproducible for any pool state.
 *
 * The pool (created once, on the first parallel call) has one worker per
 * core of the process affinity mask but the first; worker i is pinned to
 * core i+1 (TILECONV_NO_PIN=1 disables pinning). The caller runs chunks
 * too, as a peer: chunks are claimed from one atomic word that also holds
 * the job number and chunk count, so a worker that wakes late can never
 * claim a chunk of another job. While the caller holds the pool and sits on a
 * worker's core, it is moved to the free core for the call and its own
 * affinity mask is restored afterwards (two threads sharing one core run
 * 8-16x slower on small VMs).
 *
 * Waiting is spin-then-block: workers spin ~50 us on their wake word, then
 * sleep on a futex; the caller likewise waits for the chunk count to reach 0.
 * One caller at a time owns the pool (trylock); a concurrent caller, or a
 * nested call from inside a chunk, runs its chunks inline on its own thread.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TC__SPIN_NS 50000.0 /* spin before sleeping */

typedef struct tc__worker {
    _Alignas(64) unsigned wake;   /* futex word: bumped once per job */
    unsigned sleeping;            /* 1 while in (or about to be in) FUTEX_WAIT */
    int cpu;                      /* pinned core or -1 */
    pthread_t thread;
} tc__worker;

typedef struct tc__pool {
    pthread_mutex_t lock;         /* owner of the pool for one job */
    int nworkers;
    int pin;
    int free_cpu;                 /* core left to the caller, -1 if none */
    tc__worker *w;
    /* the current job (written by the owner before the wake) */
    _Alignas(64) uint64_t claim;  /* see TC__CLAIM */
    tc__range_fn fn;
    void *arg;
    int64_t n, nchunks;
    _Alignas(64) unsigned pending; /* futex word: chunks not finished */
    unsigned caller_sleeping;
    unsigned job;
} tc__pool;

static tc__pool tc__the_pool = {.lock = PTHREAD_MUTEX_INITIALIZER};
static pthread_once_t tc__pool_once = PTHREAD_ONCE_INIT;
static _Thread_local int tc__in_parallel; /* worker, or caller inside a job */

static void tc__futex_wait(unsigned *addr, unsigned val) {
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}
static void tc__futex_wake(unsigned *addr, int count) {
    syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

static inline void tc__pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Busy-waits while *addr == val for up to TC__SPIN_NS, then sleeps on the
 * futex, announcing it through *sleeping. Returns the new value. */
static unsigned tc__wait_change(unsigned *addr, unsigned val, unsigned *sleeping) {
    unsigned v;
    double t0 = 0;
    for (int i = 0;; i++) {
        v = __atomic_load_n(addr, __ATOMIC_ACQUIRE);
        if (v != val) return v;
        tc__pause();
        if ((i & 255) == 255) {
            double t = tc__now();
            if (t0 == 0) t0 = t;
            else if ((t - t0) * 1e9 > TC__SPIN_NS) break;
        }
    }
    for (;;) {
        __atomic_store_n(sleeping, 1, __ATOMIC_SEQ_CST);
        v = __atomic_load_n(addr, __ATOMIC_SEQ_CST);
        if (v != val) break;
        tc__futex_wait(addr, val);
        v = __atomic_load_n(addr, __ATOMIC_ACQUIRE);
        if (v != val) break;
    }
    __atomic_store_n(sleeping, 0, __ATOMIC_RELAXED);
    return v;
}

static void tc__chunk_range(int64_t n, int64_t chunks, int64_t t, int64_t *b,
                            int64_t *e) {
    int64_t q = n / chunks, r = n % chunks;
    *b = t * q + (t < r ? t : r);
    *e = *b + q + (t < r ? 1 : 0);
}

/* The claim word: job number (32 bits) | chunk count (16) | next chunk (16).
 * Chunk count and job travel in the word itself, so a successful CAS proves
 * that chunk t of this job exists and is unfinished; the job fields cannot
 * change before it is done. */
#define TC__CLAIM(job, nch, next) \
    (((uint64_t)(job) << 32) | ((uint64_t)(nch) << 16) | (uint64_t)(next))

/* Claims and runs chunks of job `job` until none is left. */
static void tc__run_chunks(tc__pool *P, unsigned job) {
    for (;;) {
        uint64_t c = __atomic_load_n(&P->claim, __ATOMIC_ACQUIRE);
        for (;;) {
            if ((unsigned)(c >> 32) != job) return;
            if ((c & 0xffff) >= ((c >> 16) & 0xffff)) return;
            if (__atomic_compare_exchange_n(&P->claim, &c, c + 1, 0,
                                            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                break;
        }
        int64_t t = (int64_t)(c & 0xffff), b, e;
        tc__chunk_range(P->n, P->nchunks, t, &b, &e);
        P->fn(P->arg, b, e, (int)t);
        if (__atomic_sub_fetch(&P->pending, 1, __ATOMIC_SEQ_CST) == 0 &&
            __atomic_load_n(&P->caller_sleeping, __ATOMIC_SEQ_CST))
            tc__futex_wake(&P->pending, 1);
    }
}

static void *tc__worker_main(void *p) {
    tc__worker *w = p;
    tc__pool *P = &tc__the_pool;
    tc__in_parallel = 1;
    if (w->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(w->cpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    }
    unsigned seen = __atomic_load_n(&w->wake, __ATOMIC_ACQUIRE);
    for (;;) {
        seen = tc__wait_change(&w->wake, seen, &w->sleeping);
        uint64_t c = __atomic_load_n(&P->claim, __ATOMIC_ACQUIRE);
        tc__run_chunks(P, (unsigned)(c >> 32));
    }
    return NULL;
}

static void tc__pool_init(void) {
    tc__pool *P = &tc__the_pool;
    cpu_set_t set;
    int cpus[CPU_SETSIZE], ncpu = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set)) cpus[ncpu++] = c;
    if (ncpu == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (int c = 0; c < n && c < CPU_SETSIZE; c++) cpus[ncpu++] = c;
    }
    const char *np = getenv("TILECONV_NO_PIN");
    P->pin = !(np && np[0] && strcmp(np, "0") != 0);
    P->free_cpu = P->pin && ncpu > 0 ? cpus[0] : -1;
    int want = ncpu - 1;
    if (want < 0) want = 0;
    P->w = want ? tc__alloc((size_t)want * sizeof(tc__worker)) : NULL;
    if (!P->w) want = 0;
    int made = 0;
    for (int i = 0; i < want; i++) {
        tc__worker *w = &P->w[made];
        memset(w, 0, sizeof *w);
        w->cpu = P->pin ? cpus[i + 1] : -1;
        if (pthread_create(&w->thread, NULL, tc__worker_main, w) != 0) break;
        made++;
    }
    P->nworkers = made;
}

/* Runs every chunk on the calling thread, in order. */
static void tc__run_inline(int64_t n, int64_t chunks, tc__range_fn fn, void *arg) {
    int saved = tc__in_parallel;
    tc__in_parallel = 1;
    for (int64_t t = 0; t < chunks; t++) {
        int64_t b, e;
        tc__chunk_range(n, chunks, t, &b, &e);
        fn(arg, b, e, (int)t);
    }
    tc__in_parallel = saved;
}

void tc__parallel_for(int threads, int64_t n, tc__range_fn fn, void *arg) {
    if (n <= 0) return;
    if (threads < 1) threads = 1;
    if (threads > 4096) threads = 4096; /* the claim word holds 16 bits */
    int64_t chunks = (int64_t)threads < n ? (int64_t)threads : n;
    if (chunks == 1) {
        fn(arg, 0, n, 0);
        return;
    }
    if (tc__in_parallel) { /* nested: inline, same chunking */
        tc__run_inline(n, chunks, fn, arg);
        return;
    }
    pthread_once(&tc__pool_once, tc__pool_init);
    tc__pool *P = &tc__the_pool;
    if (P->nworkers == 0 || pthread_mutex_trylock(&P->lock) != 0) {
        tc__run_inline(n, chunks, fn, arg); /* no pool, or pool busy */
        return;
    }
    /* Keep the caller off the workers' cores for this call. */
    cpu_set_t saved;
    int moved = 0;
    if (P->free_cpu >= 0 && sched_getcpu() != P->free_cpu &&
        pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0 &&
        CPU_ISSET(P->free_cpu, &saved)) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(P->free_cpu, &one);
        moved = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
    }
    tc__in_parallel = 1;
    unsigned job = ++P->job;
    P->fn = fn;
    P->arg = arg;
    P->n = n;
    P->nchunks = chunks;
    __atomic_store_n(&P->pending, (unsigned)chunks, __ATOMIC_RELAXED);
    __atomic_store_n(&P->claim, TC__CLAIM(job, chunks, 0), __ATOMIC_RELEASE);
    int64_t helpers = chunks - 1 < P->nworkers ? chunks - 1 : P->nworkers;
    for (int64_t i = 0; i < helpers; i++) {
        tc__worker *w = &P->w[i];
        __atomic_add_fetch(&w->wake, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&w->sleeping, __ATOMIC_SEQ_CST))
            tc__futex_wake(&w->wake, 1);
    }
    tc__run_chunks(P, job);
    unsigned left;
    while ((left = __atomic_load_n(&P->pending, __ATOMIC_ACQUIRE)) != 0)
        tc__wait_change(&P->pending, left, &P->caller_sleeping);
    tc__in_parallel = 0;
    if (moved) pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
    pthread_mutex_unlock(&P->lock);
}
