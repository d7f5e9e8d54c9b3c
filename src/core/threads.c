/* threads.c - tc__parallel_for on a pinned, persistent thread pool, or on
 * the process's OpenMP runtime.
 *
 * Chunking depends only on (n, threads): chunk t covers
 * [t*q + min(t, r), ...) with q = n / chunks, r = n % chunks, and is always
 * run as fn(arg, begin, end, t), once. Which OS thread runs a chunk does
 * not matter, so results are reproducible for any pool state and are the
 * same bits on either runner.
 *
 * WHICH THREADS. A job runs on one of two sets of threads
 * (TILECONV_THREADS, read once; tc__threads_runtime for tests):
 *   pool    tileconv's own pool, below;
 *   openmp  the OpenMP runtime already loaded in the process (libgomp, or
 *           LLVM's libomp / Intel's libiomp5, which export the same GOMP_
 *           entry points): GOMP_parallel, found at run time (dlsym, or
 *           the loaded objects; never loaded here, libtileconv does not
 *           link a runtime), with a team of min(chunks, CPUs of the
 *           process) threads; each team thread claims chunks from the
 *           job's atomic counter, so a smaller team (a nested region, a
 *           thread limit) still runs every chunk once. The threads are the
 *           runtime's, placed by its OMP_PROC_BIND / OMP_PLACES (without
 *           them a new team thread inherits the calling thread's mask: a
 *           caller pinned to one CPU outside OpenMP keeps its team there,
 *           as it does the program's own regions; the pool's placement
 *           below does not apply); the same
 *           team then serves the program's own parallel regions (torch's
 *           operators) and ours, instead of two sets of threads taking
 *           turns on the same CPUs: libgomp's idle workers spin for a few
 *           milliseconds after each region, which starved the pool's
 *           helpers between torch's operators. One job at a time goes to
 *           the runtime; a concurrent caller runs its chunks inline. With
 *           no runtime loaded, the pool (looked for again at most every
 *           0.5 s, so an OpenMP library loaded later is taken up);
 *   auto    (default) openmp when a runtime is loaded and OMP_WAIT_POLICY
 *           is not passive, else the pool: a passive runtime's threads
 *           sleep after each region and are woken through the kernel for
 *           every job, slower than the pool's spinning helpers (a program
 *           that sets passive, like tileconv-bench for its peers, keeps the
 *           pool). A program with no OpenMP runtime always runs the pool.
 * After fork(), the child runs the pool whatever the setting (an atfork
 * handler marks it): libgomp's team does not survive a fork, and a
 * parallel region in the child of a process that had one hangs. A pool
 * the parent had started has no workers in the child, but its caller
 * claims every chunk itself, so jobs complete there (on one thread; a
 * pool first used in the child starts its workers). tileconv loaded
 * only after the fork cannot tell, and follows the setting.
 * A call from inside a chunk (either runner) runs inline, same chunking.
 *
 * WHERE THE POOL'S THREADS RUN. The pool (created once, on its first job)
 * works from the set of CPUs the PROCESS may use, never from the calling
 * thread's affinity alone (an OpenMP runtime with OMP_PROC_BIND / OMP_PLACES
 * pins the main thread to one CPU when it loads; so may any caller):
 *   1. TILECONV_CPUS="0-3,8" when set (intersected with what the kernel
 *      lets us use);
 *   2. otherwise the affinity mask the library saw when it was loaded (a
 *      constructor records it: that is `taskset`'s mask), unless OpenMP
 *      binding variables are set (OMP_PROC_BIND other than false,
 *      OMP_PLACES, GOMP_CPU_AFFINITY, KMP_AFFINITY), in which case the mask
 *      may be the OpenMP runtime's pinning and the cgroup's CPU set is used;
 *   3. always intersected with the cgroup cpuset (v1 or v2) and the online
 *      CPUs; a cgroup CPU quota (cpu.max / cfs_quota_us) caps the count.
 * The pool has one worker per such CPU, each pinned to its CPU
 * (TILECONV_NO_PIN=1: no pinning at all). For each parallel call the
 * calling thread is held on the CPU it is running on (its mask is narrowed
 * to that CPU for the call and restored afterwards: nothing it was given is
 * lost), and the helpers are woken only among the workers of OTHER CPUs. So
 * no two of our threads share a CPU while another allowed CPU idles,
 * whatever affinity the caller had. The caller runs chunks too, as a peer:
 * chunks are claimed from one atomic word that also holds the job number
 * and chunk count, so a worker that wakes late can never claim a chunk of
 * another job.
 *
 * Waiting is spin-then-block: workers spin (TILECONV_SPIN_US, default 50 us;
 * in its second half yielding the CPU every few us) on their wake word, then
 * sleep on a futex; the caller likewise waits for the chunk count to reach 0.
 * One caller at a time owns the pool (trylock); a concurrent caller, or a
 * nested call from inside a chunk, runs its chunks inline on its own thread.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

/* How long a waiting thread spins before it sleeps (TILECONV_SPIN_US,
 * read when the pool is made). In the second half of the spin it yields
 * the CPU every few microseconds, so that another runnable thread pinned
 * there (another library's pool, the caller's framework between our
 * calls) runs instead of waiting for the spin to end; not in the first
 * half, where back-to-back jobs arrive (tc__wait_change). */
static double tc__spin_ns = 50000.0;

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
        if (tc__spin_ns <= 0) break;
        tc__pause();
        if ((i & 255) == 255) {
            double t = tc__now();
            if (t0 == 0) t0 = t;
            else if ((t - t0) * 1e9 > tc__spin_ns) break;
            /* no yield in the first half: a caller's next job mostly comes
             * within a few us to ~20 us (back-to-back calls), and a yield
             * while any other task is runnable here (even a niced one: EEVDF
             * moves the yielder's deadline back a slice) hands it the CPU
             * for its slice, so that job runs on one thread (128^3 k3 filter,
             * 2 threads, one busy process beside: 0.74-0.75 -> 0.45-0.47 ms;
             * docs/solvers/cpu-filter-3d.md) */
            if ((t - t0) * 1e9 > 0.5 * tc__spin_ns) sched_yield();
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
        if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
            w->cpu = -1; /* not allowed there: runs wherever it is put */
    }
    /* wake was 0 when the thread was created: a job posted before this
     * thread got going is seen at once, not missed */
    unsigned seen = 0;
    for (;;) {
        seen = tc__wait_change(&w->wake, seen, &w->sleeping);
        uint64_t c = __atomic_load_n(&P->claim, __ATOMIC_ACQUIRE);
        tc__run_chunks(P, (unsigned)(c >> 32));
    }
    return NULL;
}

/* ---- the process's CPUs ---- */

/* Parses a Linux CPU list ("0-3,8,10-11") into set; 0 on a syntax error. */
static int tc__parse_cpulist(const char *s, cpu_set_t *set) {
    CPU_ZERO(set);
    int any = 0;
    while (*s && *s != '\n') {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s || a < 0) return 0;
        s = end;
        if (*s == '-') {
            b = strtol(s + 1, &end, 10);
            if (end == s + 1 || b < a) return 0;
            s = end;
        }
        for (long c = a; c <= b && c < CPU_SETSIZE; c++) {
            CPU_SET((int)c, set);
            any = 1;
        }
        if (*s == ',') s++;
        else if (*s && *s != '\n' && *s != ' ') return 0;
        while (*s == ' ') s++;
    }
    return any;
}

static int tc__read_line(const char *path, char *buf, size_t n) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    return ok;
}

/* The cgroup path of this process for a v1 controller (or v2 when ctl is
 * NULL), from /proc/self/cgroup. */
static int tc__cgroup_path(const char *ctl, char *out, size_t n) {
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return 0;
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = 0;
        const char *ctls = c1 + 1, *path = c2 + 1;
        int match = 0;
        if (!ctl) match = strcmp(line, "0") == 0 && ctls[0] == 0;
        else {
            char tmp[256];
            snprintf(tmp, sizeof tmp, "%s", ctls);
            for (char *tok = strtok(tmp, ","); tok; tok = strtok(NULL, ","))
                if (strcmp(tok, ctl) == 0) match = 1;
        }
        if (match) {
            snprintf(out, n, "%s", path);
            out[strcspn(out, "\n")] = 0;
            found = 1;
        }
    }
    fclose(f);
    return found;
}

/* The cgroup's cpuset (v2, then v1); 0 when none is readable. */
static int tc__cgroup_cpuset(cpu_set_t *set) {
    char path[1024], file[1200], buf[4096];
    if (tc__cgroup_path(NULL, path, sizeof path)) {
        snprintf(file, sizeof file, "/sys/fs/cgroup%s/cpuset.cpus.effective",
                 strcmp(path, "/") == 0 ? "" : path);
        if (tc__read_line(file, buf, sizeof buf) && tc__parse_cpulist(buf, set)) return 1;
    }
    if (tc__cgroup_path("cpuset", path, sizeof path)) {
        const char *names[] = {"cpuset.effective_cpus", "cpuset.cpus"};
        for (int i = 0; i < 2; i++) {
            snprintf(file, sizeof file, "/sys/fs/cgroup/cpuset%s/%s",
                     strcmp(path, "/") == 0 ? "" : path, names[i]);
            if (tc__read_line(file, buf, sizeof buf) && tc__parse_cpulist(buf, set))
                return 1;
        }
    }
    return 0;
}

/* CPUs the cgroup's quota allows (rounded up), or 0 for no quota. */
static int tc__cgroup_quota_cpus(void) {
    char path[1024], file[1200], buf[256];
    if (tc__cgroup_path(NULL, path, sizeof path)) {
        snprintf(file, sizeof file, "/sys/fs/cgroup%s/cpu.max",
                 strcmp(path, "/") == 0 ? "" : path);
        long q, per;
        if (tc__read_line(file, buf, sizeof buf) && sscanf(buf, "%ld %ld", &q, &per) == 2 &&
            q > 0 && per > 0)
            return (int)tc__cdiv64(q, per);
    }
    if (tc__cgroup_path("cpu", path, sizeof path)) {
        const char *dir = strcmp(path, "/") == 0 ? "" : path;
        long q = -1, per = -1;
        snprintf(file, sizeof file, "/sys/fs/cgroup/cpu%s/cpu.cfs_quota_us", dir);
        if (tc__read_line(file, buf, sizeof buf)) q = strtol(buf, NULL, 10);
        snprintf(file, sizeof file, "/sys/fs/cgroup/cpu%s/cpu.cfs_period_us", dir);
        if (tc__read_line(file, buf, sizeof buf)) per = strtol(buf, NULL, 10);
        if (q > 0 && per > 0) return (int)tc__cdiv64(q, per);
    }
    return 0;
}

static int tc__omp_binding_set(void) {
    const char *b = getenv("OMP_PROC_BIND");
    if (b && b[0] && strcasecmp(b, "false") != 0) return 1;
    const char *v[] = {"OMP_PLACES", "GOMP_CPU_AFFINITY", "KMP_AFFINITY"};
    for (int i = 0; i < 3; i++) {
        const char *e = getenv(v[i]);
        if (e && e[0]) return 1;
    }
    return 0;
}

/* The affinity mask when the library was loaded (before main, for a linked
 * program; at dlopen otherwise). */
static cpu_set_t tc__load_mask;
static int tc__load_mask_ok;
/* Set in the child of a fork(): the OpenMP runtime is not used there (see
 * tc__omp_runner). */
static volatile int tc__forked;
static void tc__atfork_child(void) { tc__forked = 1; }
__attribute__((constructor)) static void tc__record_load_mask(void) {
    tc__load_mask_ok = sched_getaffinity(0, sizeof tc__load_mask, &tc__load_mask) == 0;
    pthread_atfork(NULL, NULL, tc__atfork_child);
}

/* Fills cpus[] (ascending) with the CPUs the pool may use; returns the
 * count (>= 1) and writes a one-line description into src. */
int tc__process_cpus(int *cpus, int max, char *src, size_t srcn) {
    cpu_set_t set, lim;
    const char *how = "online CPUs";
    CPU_ZERO(&set);
    long online = sysconf(_SC_NPROCESSORS_CONF);
    if (online < 1) online = 1;
    for (long c = 0; c < online && c < CPU_SETSIZE; c++) CPU_SET((int)c, &set);
    if (tc__cgroup_cpuset(&lim)) {
        CPU_AND(&set, &set, &lim);
        how = "cgroup cpuset";
    }
    const char *env = tc__knob_get(TC__KNOB_CPUS);
    if (env && env[0] && tc__parse_cpulist(env, &lim)) {
        CPU_AND(&set, &set, &lim);
        how = "TILECONV_CPUS";
    } else if (tc__load_mask_ok && !tc__omp_binding_set()) {
        CPU_AND(&set, &set, &tc__load_mask);
        how = "affinity at load";
    } else if (tc__omp_binding_set()) {
        how = "cgroup/online CPUs (OpenMP binding variables set: the thread mask is ignored)";
    }
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set)) cpus[n++] = c;
    if (n == 0) { /* nothing sensible: the calling thread's own mask */
        if (sched_getaffinity(0, sizeof set, &set) == 0)
            for (int c = 0; c < CPU_SETSIZE && n < max; c++)
                if (CPU_ISSET(c, &set)) cpus[n++] = c;
        how = "calling thread's mask";
        if (n == 0) cpus[n++] = 0;
    }
    int quota = tc__cgroup_quota_cpus();
    if (quota > 0 && quota < n) n = quota;
    if (src && srcn)
        snprintf(src, srcn, "%d CPU%s from %s%s", n, n == 1 ? "" : "s", how,
                 quota > 0 ? " (cgroup quota applied)" : "");
    return n;
}

static void tc__pool_init(void) {
    tc__pool *P = &tc__the_pool;
    static int cpus[CPU_SETSIZE];
    int ncpu = tc__process_cpus(cpus, CPU_SETSIZE, NULL, 0);
    const char *sp = tc__knob_get(TC__KNOB_SPIN_US);
    if (sp && *sp) {
        char *end = NULL;
        double us = strtod(sp, &end);
        if (end != sp && us >= 0 && us <= 1e6) tc__spin_ns = us * 1e3;
    }
    const char *np = tc__knob_get(TC__KNOB_NO_PIN);
    P->pin = !(np && np[0] && strcmp(np, "0") != 0);
    /* one worker per CPU: the caller stays where it runs and the helpers
     * are taken from the other CPUs (tc__parallel_for) */
    int want = ncpu > 1 ? ncpu : 0;
    P->w = want ? tc__alloc((size_t)want * sizeof(tc__worker)) : NULL;
    if (!P->w) want = 0;
    int made = 0;
    for (int i = 0; i < want; i++) {
        tc__worker *w = &P->w[made];
        memset(w, 0, sizeof *w);
        w->cpu = P->pin ? cpus[i] : -1;
        pthread_attr_t at;
        int have_attr = pthread_attr_init(&at) == 0;
        if (have_attr && w->cpu >= 0) { /* start on its CPU, never the caller's */
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(w->cpu, &one);
            pthread_attr_setaffinity_np(&at, sizeof one, &one);
        }
        int rc = pthread_create(&w->thread, have_attr ? &at : NULL, tc__worker_main, w);
        if (rc != 0 && have_attr && w->cpu >= 0) /* CPU refused: start unpinned */
            rc = pthread_create(&w->thread, NULL, tc__worker_main, w);
        if (have_attr) pthread_attr_destroy(&at);
        if (rc != 0) break;
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

/* ---- jobs on the process's OpenMP runtime ---- */

typedef void (*tc__gomp_parallel_t)(void (*)(void *), void *, unsigned, unsigned);

/* One tc__parallel_for job run by an OpenMP team: every team thread claims
 * chunks from `next` until none is left, so each chunk runs once, whatever
 * the team's size (one thread, in a nested region, runs them all). */
typedef struct tc__omp_job {
    tc__range_fn fn;
    void *arg;
    int64_t n, chunks;
    _Alignas(64) int64_t next;
} tc__omp_job;

static void tc__omp_body(void *p) {
    tc__omp_job *J = p;
    int saved = tc__in_parallel;
    tc__in_parallel = 1;
    for (;;) {
        int64_t t = __atomic_fetch_add(&J->next, 1, __ATOMIC_RELAXED), b, e;
        if (t >= J->chunks) break;
        tc__chunk_range(J->n, J->chunks, t, &b, &e);
        J->fn(J->arg, b, e, (int)t);
    }
    tc__in_parallel = saved;
}

/* A loaded OpenMP runtime's file name (libgomp, LLVM's libomp, Intel's
 * libiomp5, under any suffix: Python wheels rename their copies). */
static int tc__omp_lib_cb(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    const char *path = info->dlpi_name, *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path;
    if (!base || !base[0]) return 0;
    if (strncmp(base, "libgomp", 7) == 0 || strncmp(base, "libiomp5", 8) == 0 ||
        (strncmp(base, "libomp", 6) == 0 && strncmp(base, "libomptarget", 12) != 0)) {
        snprintf(data, PATH_MAX, "%s", path);
        return 1;
    }
    return 0;
}

/* GOMP_parallel of an OpenMP runtime already in the process, or NULL. The
 * runtime is looked up, never loaded (RTLD_NOLOAD), so libtileconv does not
 * depend on one: first among the globally visible symbols, then among the
 * loaded objects (a Python extension's dependencies are loaded
 * RTLD_LOCAL). The handle taken is kept, so that the runtime stays loaded
 * while we hold its entry point. */
static tc__gomp_parallel_t tc__find_gomp(void) {
    char path[PATH_MAX] = "";
    void *f = dlsym(RTLD_DEFAULT, "GOMP_parallel");
    Dl_info di;
    if (f) { /* pin the library that holds it (a no-op for the program) */
        if (dladdr(f, &di) && di.dli_fname) dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    } else if (dl_iterate_phdr(tc__omp_lib_cb, path)) {
        void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
        if (h) f = dlsym(h, "GOMP_parallel");
        if (h && !f) dlclose(h);
    }
    tc__gomp_parallel_t g;
    memcpy(&g, &f, sizeof g);
    return g;
}

/* Where jobs run: TILECONV_THREADS (read once), or what
 * tc__threads_runtime set. */
static int tc__threads_mode = -1;
static int tc__omp_passive; /* OMP_WAIT_POLICY=passive */
static pthread_once_t tc__mode_once = PTHREAD_ONCE_INIT;
static void tc__mode_init(void) {
    const char *v = tc__knob_get(TC__KNOB_THREADS);
    int m = TC__THREADS_AUTO;
    if (v && v[0]) {
        if (strcasecmp(v, "pool") == 0) m = TC__THREADS_POOL;
        else if (strcasecmp(v, "openmp") == 0) m = TC__THREADS_OPENMP;
        else if (strcasecmp(v, "auto") != 0)
            fprintf(stderr, "tileconv: TILECONV_THREADS=%s is not pool, openmp or auto; "
                            "using auto\n", v);
    }
    const char *w = getenv("OMP_WAIT_POLICY");
    tc__omp_passive = w && strcasecmp(w, "passive") == 0;
    int unset = -1;
    __atomic_compare_exchange_n(&tc__threads_mode, &unset, m, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
}

/* The runtime's entry point once found; while none is, looked for again at
 * most every 0.5 s (a runtime loaded later, e.g. by an import, is taken up;
 * a process without one pays one clock read per job). */
static void *tc__gomp_found;
static int64_t tc__gomp_next_look_ns;

/* GOMP_parallel when the next job runs on the OpenMP runtime, else NULL
 * (the pool). */
static tc__gomp_parallel_t tc__omp_runner(void) {
    /* a forked child never: libgomp's team does not survive fork(), and a
     * parallel region in the child of a process that had one hangs (torch's
     * own operators do; the pool's caller runs every chunk itself there) */
    if (tc__forked) return NULL;
    pthread_once(&tc__mode_once, tc__mode_init);
    int mode = __atomic_load_n(&tc__threads_mode, __ATOMIC_ACQUIRE);
    if (mode == TC__THREADS_POOL || (mode == TC__THREADS_AUTO && tc__omp_passive)) return NULL;
    void *f = __atomic_load_n(&tc__gomp_found, __ATOMIC_ACQUIRE);
    if (!f) {
        int64_t now = (int64_t)(tc__now() * 1e9);
        int64_t next = __atomic_load_n(&tc__gomp_next_look_ns, __ATOMIC_RELAXED);
        if (now < next ||
            !__atomic_compare_exchange_n(&tc__gomp_next_look_ns, &next, now + 500000000, 0,
                                         __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return NULL;
        tc__gomp_parallel_t g = tc__find_gomp();
        if (!g) return NULL;
        memcpy(&f, &g, sizeof f);
        void *none = NULL;
        if (!__atomic_compare_exchange_n(&tc__gomp_found, &none, f, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            f = none; /* another thread's lookup won: the same runtime */
    }
    tc__gomp_parallel_t g;
    memcpy(&g, &f, sizeof g);
    return g;
}

int tc__threads_runtime(int mode) {
    pthread_once(&tc__mode_once, tc__mode_init);
    if (mode == TC__THREADS_POOL || mode == TC__THREADS_OPENMP || mode == TC__THREADS_AUTO) {
        __atomic_store_n(&tc__threads_mode, mode, __ATOMIC_RELEASE);
        __atomic_store_n(&tc__gomp_next_look_ns, 0, __ATOMIC_RELAXED); /* look now */
    }
    return tc__omp_runner() ? TC__THREADS_OPENMP : TC__THREADS_POOL;
}

/* One job at a time on the OpenMP runtime, as on the pool: a concurrent
 * caller runs its chunks inline instead of starting a second team. */
static pthread_mutex_t tc__omp_lock = PTHREAD_MUTEX_INITIALIZER;

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
    tc__gomp_parallel_t gomp = tc__omp_runner();
    if (gomp) {
        if (pthread_mutex_trylock(&tc__omp_lock) != 0) {
            tc__run_inline(n, chunks, fn, arg); /* another job runs */
            return;
        }
        /* the team: one thread per chunk, at most one per CPU of the
         * process (the pool's size); placement is the runtime's */
        int64_t team = chunks < tc_cpu_count() ? chunks : tc_cpu_count();
        if (team < 2) {
            pthread_mutex_unlock(&tc__omp_lock);
            tc__run_inline(n, chunks, fn, arg);
            return;
        }
        tc__omp_job J = {.fn = fn, .arg = arg, .n = n, .chunks = chunks, .next = 0};
        gomp(tc__omp_body, &J, (unsigned)team, 0);
        pthread_mutex_unlock(&tc__omp_lock);
        return;
    }
    pthread_once(&tc__pool_once, tc__pool_init);
    tc__pool *P = &tc__the_pool;
    if (P->nworkers == 0 || pthread_mutex_trylock(&P->lock) != 0) {
        tc__run_inline(n, chunks, fn, arg); /* no pool, or pool busy */
        return;
    }
    /* Hold the caller on the CPU it runs on for this call (restoring its
     * mask afterwards) and take the helpers from the other CPUs' workers. */
    cpu_set_t saved;
    int moved = 0, here = -1;
    if (P->pin && pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0) {
        here = sched_getcpu();
        if (here >= 0 && CPU_COUNT(&saved) > 1) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(here, &one);
            moved = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
            if (moved) here = sched_getcpu();
        }
    }
    tc__in_parallel = 1;
    unsigned job = ++P->job;
    P->fn = fn;
    P->arg = arg;
    P->n = n;
    P->nchunks = chunks;
    __atomic_store_n(&P->pending, (unsigned)chunks, __ATOMIC_RELAXED);
    __atomic_store_n(&P->claim, TC__CLAIM(job, chunks, 0), __ATOMIC_RELEASE);
    int64_t helpers = chunks - 1;
    for (int i = 0; i < P->nworkers && helpers > 0; i++) {
        tc__worker *w = &P->w[i];
        if (w->cpu >= 0 && w->cpu == here) continue; /* the caller's CPU */
        __atomic_add_fetch(&w->wake, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&w->sleeping, __ATOMIC_SEQ_CST))
            tc__futex_wake(&w->wake, 1);
        helpers--;
    }
    tc__run_chunks(P, job);
    unsigned left;
    while ((left = __atomic_load_n(&P->pending, __ATOMIC_ACQUIRE)) != 0)
        tc__wait_change(&P->pending, left, &P->caller_sleeping);
    tc__in_parallel = 0;
    if (moved) pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
    pthread_mutex_unlock(&P->lock);
}
