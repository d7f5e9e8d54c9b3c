/*
 * ceilings.c - measure this machine's FP32 FMA peak and copy bandwidth.
 *
 * Peak: every thread, pinned to its own CPU, runs a loop of 12 independent
 * FMA chains (enough to cover 4-cycle latency on two FMA ports) on the
 * widest vectors cpuid reports; FLOP/s = threads x iterations x 12 x lanes
 * x 2 / (last end - first start). Bandwidth: each pinned thread copies its
 * share of a 256 MiB buffer into another, three ways (vector loads with
 * regular stores, with non-temporal stores, and the C library's memcpy,
 * whose choice among those depends on its size heuristics); bytes read
 * plus bytes written over the wall time (STREAM "copy" counting; with
 * regular stores the write-allocate read of the destination is real
 * traffic but not counted). The ceiling is the best of the three; a
 * read-only sum is measured too, for reference. Best of
 * TC_TOOL_CEILING_REPEATS runs each. Before every stream repeat the caches
 * are emptied (tc_tool_evict_cache): with a last-level cache as large as
 * this VM's (480 MiB) the source of a back-to-back copy otherwise stays
 * cached and the "memory" bandwidth is partly the cache's.
 */
#define _GNU_SOURCE
#include "ceilings.h"

#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CEIL_X86 1
#else
#define CEIL_X86 0
#endif

#ifndef CEIL_STREAM_BYTES
#define CEIL_STREAM_BYTES ((size_t)256 << 20)
#endif
#define CEIL_TARGET_SECONDS 0.2

static volatile float ceil_sink; /* keeps the FMA results alive */


static double ceil_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- cache eviction ---- */
static size_t ceil_sysfs_size(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    unsigned long long v = 0;
    char unit = 0;
    int n = fscanf(f, "%llu%c", &v, &unit);
    fclose(f);
    if (n < 1) return 0;
    if (n == 2 && (unit == 'K' || unit == 'k')) v <<= 10;
    else if (n == 2 && (unit == 'M' || unit == 'm')) v <<= 20;
    return (size_t)v;
}

size_t tc_tool_llc_bytes(void) {
    long v = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
    v = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    if (v > 0) return (size_t)v;
    size_t s = ceil_sysfs_size("/sys/devices/system/cpu/cpu0/cache/index3/size");
    if (!s) s = ceil_sysfs_size("/sys/devices/system/cpu/cpu0/cache/index2/size");
    return s;
}

static float *ceil_evict_buf;
static size_t ceil_evict_n; /* floats */

/* One CPU's share of tc_tool_evict_cache (read p[0 .. n), one float per
 * cache line) or of tc_tool_busy_cpus (n == 0: spin until `until`). */
typedef struct ceil_cpu_part {
    const float *p;
    size_t n;
    double until;
    int cpu; /* pin to it; -1: stay */
    float sum;
} ceil_cpu_part;

static void *ceil_part_run(void *arg) {
    ceil_cpu_part *e = arg;
    if (e->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(e->cpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    }
    float s = 0;
    for (size_t i = 0; i < e->n; i += 16) s += e->p[i];
    while (!e->n && ceil_now() < e->until) {
#if CEIL_X86
        _mm_pause();
#endif
    }
    e->sum = s;
    return NULL;
}

/* Runs part[c] on CPU c for c < ncpu, all at once: the caller takes part 0
 * where it is (it may be pinned), one new thread each other part (or the
 * caller after part 0 when a thread cannot be made). Returns the sum. */
static float ceil_on_all_cpus(ceil_cpu_part *part, long ncpu) {
    pthread_t tid[64];
    for (long c = 1; c < ncpu; c++) {
        part[c].cpu = (int)c;
        if (pthread_create(&tid[c], NULL, ceil_part_run, &part[c]) != 0)
            part[c].cpu = -2; /* not started: run below */
    }
    part[0].cpu = -1;
    ceil_part_run(&part[0]);
    float s = part[0].sum;
    for (long c = 1; c < ncpu; c++) {
        if (part[c].cpu == -2) {
            part[c].cpu = -1;
            ceil_part_run(&part[c]);
        } else {
            pthread_join(tid[c], NULL);
        }
        s += part[c].sum;
    }
    return s;
}

static long ceil_online(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : n;
}

size_t tc_tool_evict_cache(void) {
    if (!ceil_evict_buf) {
        size_t bytes = 2 * tc_tool_llc_bytes();
        if (bytes < ((size_t)64 << 20)) bytes = (size_t)64 << 20;
        if (bytes > ((size_t)1 << 30)) bytes = (size_t)1 << 30;
        void *p = NULL;
        if (posix_memalign(&p, 4096, bytes) != 0) return 0;
        memset(p, 1, bytes); /* touch every page once */
        ceil_evict_buf = p;
        ceil_evict_n = bytes / sizeof(float);
    }
    /* one reader per online CPU (at most 64), each on its own CPU: a CPU
     * left idle during the eviction starts the timed run cold (this VM
     * then runs the next few milliseconds up to 2x slower) */
    const long ncpu = ceil_online();
    ceil_cpu_part part[64];
    const size_t per = (ceil_evict_n / (size_t)ncpu) & ~(size_t)15;
    memset(part, 0, sizeof part);
    for (long c = 0; c < ncpu; c++) {
        part[c].p = ceil_evict_buf + (size_t)c * per;
        part[c].n = c == ncpu - 1 ? ceil_evict_n - (size_t)c * per : per;
    }
    ceil_sink = ceil_on_all_cpus(part, ncpu);
    return ceil_evict_n * sizeof(float);
}

void tc_tool_busy_cpus(double seconds) {
    if (!(seconds > 0)) return;
    const long ncpu = ceil_online();
    ceil_cpu_part part[64];
    memset(part, 0, sizeof part);
    const double until = ceil_now() + seconds;
    for (long c = 0; c < ncpu; c++) part[c].until = until;
    ceil_on_all_cpus(part, ncpu);
}

/* ---- FMA kernels: 12 independent accumulators; a = a * m + c stays
 * finite and normal (it converges to c / (1 - m)). ---- */
#define CEIL_CHAINS 12
#define CEIL_STEP(F)                                                      \
    a0 = F(a0, m, c); a1 = F(a1, m, c); a2 = F(a2, m, c);                 \
    a3 = F(a3, m, c); a4 = F(a4, m, c); a5 = F(a5, m, c);                 \
    a6 = F(a6, m, c); a7 = F(a7, m, c); a8 = F(a8, m, c);                 \
    a9 = F(a9, m, c); a10 = F(a10, m, c); a11 = F(a11, m, c)
#define CEIL_INIT(T, SET)                                                 \
    T a0 = SET(s), a1 = SET(s + 1), a2 = SET(s + 2), a3 = SET(s + 3),     \
      a4 = SET(s + 4), a5 = SET(s + 5), a6 = SET(s + 6), a7 = SET(s + 7), \
      a8 = SET(s + 8), a9 = SET(s + 9), a10 = SET(s + 10),                \
      a11 = SET(s + 11)
#define CEIL_SUM(ADD)                                                     \
    ADD(ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7))), \
        ADD(ADD(a8, a9), ADD(a10, a11)))

#if CEIL_X86
__attribute__((target("avx512f,fma"))) static float
ceil_fma_avx512(int64_t iters, float s) {
    const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);
    CEIL_INIT(__m512, _mm512_set1_ps);
    for (int64_t i = 0; i < iters; i++) {
        CEIL_STEP(_mm512_fmadd_ps);
    }
    float out[16];
    _mm512_storeu_ps(out, CEIL_SUM(_mm512_add_ps));
    return out[0] + out[15];
}

__attribute__((target("avx2,fma"))) static float
ceil_fma_avx2(int64_t iters, float s) {
    const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-6f);
    CEIL_INIT(__m256, _mm256_set1_ps);
    for (int64_t i = 0; i < iters; i++) {
        CEIL_STEP(_mm256_fmadd_ps);
    }
    float out[8];
    _mm256_storeu_ps(out, CEIL_SUM(_mm256_add_ps));
    return out[0] + out[7];
}
#endif

#define CEIL_SCALAR_FMA(a, b, c) ((a) * (b) + (c))
#define CEIL_SCALAR_ADD(a, b) ((a) + (b))
#define CEIL_SCALAR_SET(x) ((float)(x))
static float ceil_fma_scalar(int64_t iters, float s) {
    const float m = 0.999999f, c = 1e-6f;
    CEIL_INIT(float, CEIL_SCALAR_SET);
    for (int64_t i = 0; i < iters; i++) {
        CEIL_STEP(CEIL_SCALAR_FMA);
    }
    return CEIL_SUM(CEIL_SCALAR_ADD);
}

/* ---- stream kernels over n floats (n a multiple of 4096, 64-byte aligned).
 * Written out rather than memcpy so the store kind does not depend on the
 * C library's size heuristics: regular stores (what a kernel writing its
 * output sees; the write-allocate read is not counted) and non-temporal
 * stores. The non-temporal copy walks four 4 KiB pages at once, 256 bytes
 * of each per step, prefetching ahead, as glibc's large memcpy does: on
 * this project's test box that gave 42.6 GB/s where one sequential stream
 * gave 34.9. ---- */
#define CEIL_PAGE 1024 /* floats */
#if defined(__GNUC__) && !defined(__clang__)
#define CEIL_NO_MEMCPY __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define CEIL_NO_MEMCPY
#endif
#if CEIL_X86
__attribute__((target("avx512f"))) CEIL_NO_MEMCPY static void
ceil_copy_avx512(float *d, const float *s, size_t n, int nt) {
    if (nt) {
        for (size_t i = 0; i < n; i += 4 * CEIL_PAGE)
            for (size_t l = 0; l < CEIL_PAGE; l += 64)
                for (size_t p = 0; p < 4; p++) {
                    const float *sp = s + i + p * CEIL_PAGE + l;
                    float *dp = d + i + p * CEIL_PAGE + l;
                    for (int k = 0; k < 4; k++)
                        _mm_prefetch((const char *)(sp + 128 + 16 * k), _MM_HINT_T0);
                    __m512 x0 = _mm512_load_ps(sp), x1 = _mm512_load_ps(sp + 16);
                    __m512 x2 = _mm512_load_ps(sp + 32), x3 = _mm512_load_ps(sp + 48);
                    _mm512_stream_ps(dp, x0);
                    _mm512_stream_ps(dp + 16, x1);
                    _mm512_stream_ps(dp + 32, x2);
                    _mm512_stream_ps(dp + 48, x3);
                }
        _mm_sfence();
        return;
    }
    for (size_t i = 0; i < n; i += 64) {
        __m512 x0 = _mm512_load_ps(s + i), x1 = _mm512_load_ps(s + i + 16);
        __m512 x2 = _mm512_load_ps(s + i + 32), x3 = _mm512_load_ps(s + i + 48);
        _mm512_store_ps(d + i, x0);
        _mm512_store_ps(d + i + 16, x1);
        _mm512_store_ps(d + i + 32, x2);
        _mm512_store_ps(d + i + 48, x3);
    }
}

__attribute__((target("avx512f"))) static float
ceil_read_avx512(const float *s, size_t n) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i < n; i += 64) {
        a0 = _mm512_add_ps(a0, _mm512_load_ps(s + i));
        a1 = _mm512_add_ps(a1, _mm512_load_ps(s + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_load_ps(s + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_load_ps(s + i + 48));
    }
    float out[16];
    _mm512_storeu_ps(out, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    return out[0];
}

__attribute__((target("avx2"))) CEIL_NO_MEMCPY static void
ceil_copy_avx2(float *d, const float *s, size_t n, int nt) {
    if (nt) {
        for (size_t i = 0; i < n; i += 4 * CEIL_PAGE)
            for (size_t l = 0; l < CEIL_PAGE; l += 32)
                for (size_t p = 0; p < 4; p++) {
                    const float *sp = s + i + p * CEIL_PAGE + l;
                    float *dp = d + i + p * CEIL_PAGE + l;
                    _mm_prefetch((const char *)(sp + 128), _MM_HINT_T0);
                    _mm_prefetch((const char *)(sp + 144), _MM_HINT_T0);
                    __m256 x0 = _mm256_load_ps(sp), x1 = _mm256_load_ps(sp + 8);
                    __m256 x2 = _mm256_load_ps(sp + 16), x3 = _mm256_load_ps(sp + 24);
                    _mm256_stream_ps(dp, x0);
                    _mm256_stream_ps(dp + 8, x1);
                    _mm256_stream_ps(dp + 16, x2);
                    _mm256_stream_ps(dp + 24, x3);
                }
        _mm_sfence();
        return;
    }
    for (size_t i = 0; i < n; i += 32) {
        __m256 x0 = _mm256_load_ps(s + i), x1 = _mm256_load_ps(s + i + 8);
        __m256 x2 = _mm256_load_ps(s + i + 16), x3 = _mm256_load_ps(s + i + 24);
        _mm256_store_ps(d + i, x0);
        _mm256_store_ps(d + i + 8, x1);
        _mm256_store_ps(d + i + 16, x2);
        _mm256_store_ps(d + i + 24, x3);
    }
}

__attribute__((target("avx2"))) static float
ceil_read_avx2(const float *s, size_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i < n; i += 32) {
        a0 = _mm256_add_ps(a0, _mm256_load_ps(s + i));
        a1 = _mm256_add_ps(a1, _mm256_load_ps(s + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_load_ps(s + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_load_ps(s + i + 24));
    }
    float out[8];
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    return out[0];
}
#endif

static void ceil_copy_scalar(float *d, const float *s, size_t n, int nt) {
    (void)nt; /* no portable non-temporal store: plain memcpy */
    memcpy(d, s, n * sizeof *d);
}

static float ceil_read_scalar(const float *s, size_t n) {
    float a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (size_t i = 0; i < n; i += 4) {
        a0 += s[i];
        a1 += s[i + 1];
        a2 += s[i + 2];
        a3 += s[i + 3];
    }
    return a0 + a1 + a2 + a3;
}

typedef struct ceil_kernels {
    const char *isa;
    int lanes;
    float (*fma)(int64_t iters, float seed);
    void (*copy)(float *d, const float *s, size_t n, int nt);
    float (*read)(const float *s, size_t n);
} ceil_kernels;

static ceil_kernels ceil_pick(void) {
#if CEIL_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"))
        return (ceil_kernels){"avx512f+fma", 16, ceil_fma_avx512,
                              ceil_copy_avx512, ceil_read_avx512};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return (ceil_kernels){"avx2+fma", 8, ceil_fma_avx2, ceil_copy_avx2,
                              ceil_read_avx2};
#endif
    return (ceil_kernels){"scalar", 1, ceil_fma_scalar, ceil_copy_scalar,
                          ceil_read_scalar};
}

const char *tc_tool_ceilings_isa(void) { return ceil_pick().isa; }

/* ---- pinned worker threads, started together by a barrier ---- */
enum { CEIL_FMA, CEIL_COPY, CEIL_COPY_NT, CEIL_MEMCPY, CEIL_READ };

typedef struct ceil_shared {
    pthread_barrier_t barrier;
    pthread_mutex_t gate_lock; /* the gate opens once all threads exist */
    pthread_cond_t gate_cond;
    int gate; /* 0 closed, 1 go, -1 abort */
    int kind;
    int threads;
    ceil_kernels k;
    int64_t iters;
    float *src, *dst;
    size_t chunk; /* floats per thread */
} ceil_shared;

typedef struct ceil_worker {
    pthread_t tid;
    int index, cpu, pinned;
    ceil_shared *sh;
    double t0[TC_TOOL_CEILING_REPEATS], t1[TC_TOOL_CEILING_REPEATS];
} ceil_worker;

static void *ceil_run(void *arg) {
    ceil_worker *w = arg;
    ceil_shared *sh = w->sh;
    pthread_mutex_lock(&sh->gate_lock);
    while (sh->gate == 0) pthread_cond_wait(&sh->gate_cond, &sh->gate_lock);
    int go = sh->gate > 0;
    pthread_mutex_unlock(&sh->gate_lock);
    if (!go) return NULL;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(w->cpu, &set);
    w->pinned = pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
    float *src = sh->src + (size_t)w->index * sh->chunk;
    float *dst = sh->dst + (size_t)w->index * sh->chunk;
    if (sh->kind == CEIL_FMA) {
        ceil_sink = sh->k.fma(sh->iters / 16 + 1, (float)w->index); /* warm */
    } else if (sh->kind == CEIL_COPY) {
        /* First touch by the pinned thread places the pages near it. */
        for (size_t i = 0; i < sh->chunk; i++) src[i] = (float)(i & 1023);
        memset(dst, 0, sh->chunk * sizeof *dst);
    }
    int nt = sh->kind == CEIL_COPY_NT;
    for (int r = 0; r < TC_TOOL_CEILING_REPEATS; r++) {
        /* streams start from cold caches; one thread evicts, all wait */
        if (sh->kind != CEIL_FMA && w->index == 0) tc_tool_evict_cache();
        pthread_barrier_wait(&sh->barrier);
        w->t0[r] = ceil_now();
        if (sh->kind == CEIL_FMA)
            ceil_sink = sh->k.fma(sh->iters, (float)(w->index + r));
        else if (sh->kind == CEIL_READ)
            ceil_sink = sh->k.read(src, sh->chunk);
        else if (sh->kind == CEIL_MEMCPY)
            memcpy(dst, src, sh->chunk * sizeof *dst);
        else
            sh->k.copy(dst, src, sh->chunk, nt);
        w->t1[r] = ceil_now();
    }
    return NULL;
}

/* Runs one measurement; spans[r] = wall time of repeat r over all threads. */
static int ceil_phase(ceil_shared *sh, const int *cpus, int ncpus,
                      double spans[TC_TOOL_CEILING_REPEATS], int *pinned) {
    ceil_worker *w = calloc((size_t)sh->threads, sizeof *w);
    if (!w) return -1;
    if (pthread_barrier_init(&sh->barrier, NULL, (unsigned)sh->threads) != 0) {
        free(w);
        return -1;
    }
    pthread_mutex_init(&sh->gate_lock, NULL);
    pthread_cond_init(&sh->gate_cond, NULL);
    sh->gate = 0;
    int started = 0;
    for (; started < sh->threads; started++) {
        w[started].index = started;
        w[started].cpu = cpus[started % ncpus];
        w[started].sh = sh;
        if (pthread_create(&w[started].tid, NULL, ceil_run, &w[started]) != 0)
            break;
    }
    pthread_mutex_lock(&sh->gate_lock);
    sh->gate = started == sh->threads ? 1 : -1;
    pthread_cond_broadcast(&sh->gate_cond);
    pthread_mutex_unlock(&sh->gate_lock);
    int rc = sh->gate > 0 ? 0 : -1;
    if (rc != 0) {
        for (int i = 0; i < started; i++) pthread_join(w[i].tid, NULL);
        goto done;
    }
    *pinned = 1;
    for (int i = 0; i < sh->threads; i++) {
        pthread_join(w[i].tid, NULL);
        if (!w[i].pinned) *pinned = 0;
    }
    for (int r = 0; r < TC_TOOL_CEILING_REPEATS; r++) {
        double lo = w[0].t0[r], hi = w[0].t1[r];
        for (int i = 1; i < sh->threads; i++) {
            if (w[i].t0[r] < lo) lo = w[i].t0[r];
            if (w[i].t1[r] > hi) hi = w[i].t1[r];
        }
        spans[r] = hi - lo;
    }
done:
    pthread_cond_destroy(&sh->gate_cond);
    pthread_mutex_destroy(&sh->gate_lock);
    pthread_barrier_destroy(&sh->barrier);
    free(w);
    return rc;
}

static int ceil_cpus(int *cpus, int max) {
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE && n < max; c++)
            if (CPU_ISSET(c, &set)) cpus[n++] = c;
    }
    if (n == 0) {
        long k = sysconf(_SC_NPROCESSORS_ONLN);
        for (n = 0; n < (k > 0 ? k : 1) && n < max; n++) cpus[n] = n;
    }
    return n;
}

static double ceil_best(const double *runs) {
    double best = 0;
    for (int r = 0; r < TC_TOOL_CEILING_REPEATS; r++)
        if (runs[r] > best) best = runs[r];
    return best;
}

int tc_tool_measure_ceilings_ex(int threads, tc_tool_ceilings *out) {
    memset(out, 0, sizeof *out);
    int *cpus = malloc(sizeof(int) * CPU_SETSIZE);
    if (!cpus) return -1;
    int ncpus = ceil_cpus(cpus, CPU_SETSIZE);
    if (threads <= 0) threads = ncpus;
    if (ncpus < threads) {
        /* the calling thread was pinned (tileconv bench pins its main
         * thread after the peers' warm-up): its mask is not the machine's,
         * and every worker would land on its one CPU (the end-of-run
         * ceilings read half the start ones) */
        long k = sysconf(_SC_NPROCESSORS_ONLN);
        if (k > ncpus) {
            ncpus = 0;
            for (long c = 0; c < k && c < CPU_SETSIZE; c++) cpus[ncpus++] = (int)c;
        }
    }
    out->threads = threads;
    out->repeats = TC_TOOL_CEILING_REPEATS;
    ceil_shared sh;
    memset(&sh, 0, sizeof sh);
    sh.threads = threads;
    sh.k = ceil_pick();
    out->isa = sh.k.isa;
    double spans[TC_TOOL_CEILING_REPEATS];
    int pinned = 1, ok;
    float *src = NULL, *dst = NULL;

    /* Calibrate on one thread: aim for CEIL_TARGET_SECONDS per repeat. */
    int64_t iters = 1 << 16;
    for (;;) {
        double t = ceil_now();
        ceil_sink = sh.k.fma(iters, 1.0f);
        t = ceil_now() - t;
        if (t > 0.02 || iters > ((int64_t)1 << 40)) {
            double scale = CEIL_TARGET_SECONDS / (t > 1e-9 ? t : 1e-9);
            iters = (int64_t)((double)iters * scale) + 1;
            break;
        }
        iters *= 4;
    }
    sh.kind = CEIL_FMA;
    sh.iters = iters;
    if (ceil_phase(&sh, cpus, ncpus, spans, &ok) != 0) goto fail;
    pinned &= ok;
    double per_run = (double)threads * (double)iters * CEIL_CHAINS * sh.k.lanes * 2.0;
    for (int r = 0; r < TC_TOOL_CEILING_REPEATS; r++)
        out->flops_runs[r] = spans[r] > 0 ? per_run / spans[r] : 0;
    out->flops = ceil_best(out->flops_runs);

    /* Streams: per-thread chunks, multiples of four pages. */
    sh.chunk = (CEIL_STREAM_BYTES / sizeof(float) / (size_t)threads) &
               ~(size_t)(4 * CEIL_PAGE - 1);
    if (sh.chunk == 0) goto fail;
    size_t total = sh.chunk * (size_t)threads * sizeof(float);
    if (posix_memalign((void **)&src, 4096, total) != 0) src = NULL;
    if (posix_memalign((void **)&dst, 4096, total) != 0) dst = NULL;
    if (!src || !dst) goto fail;
    sh.src = src;
    sh.dst = dst;
    out->stream_bytes = total;
    static const int kinds[4] = {CEIL_COPY, CEIL_COPY_NT, CEIL_MEMCPY, CEIL_READ};
    double *runs[4] = {out->copy_runs, out->copy_nt_runs, out->memcpy_runs,
                       out->read_runs};
    for (int k = 0; k < 4; k++) {
        sh.kind = kinds[k];
        if (ceil_phase(&sh, cpus, ncpus, spans, &ok) != 0) goto fail;
        pinned &= ok;
        double bytes = (kinds[k] == CEIL_READ ? 1.0 : 2.0) * (double)total;
        for (int r = 0; r < TC_TOOL_CEILING_REPEATS; r++)
            runs[k][r] = spans[r] > 0 ? bytes / spans[r] : 0;
    }
    out->copy_bytes_per_s = ceil_best(out->copy_runs);
    out->copy_nt_bytes_per_s = ceil_best(out->copy_nt_runs);
    out->memcpy_bytes_per_s = ceil_best(out->memcpy_runs);
    out->read_bytes_per_s = ceil_best(out->read_runs);
    out->bytes_per_s = out->copy_bytes_per_s;
    out->copy_method = "vector loads + regular stores";
    if (out->copy_nt_bytes_per_s > out->bytes_per_s) {
        out->bytes_per_s = out->copy_nt_bytes_per_s;
        out->copy_method = "vector loads + non-temporal stores";
    }
    if (out->memcpy_bytes_per_s > out->bytes_per_s) {
        out->bytes_per_s = out->memcpy_bytes_per_s;
        out->copy_method = "C library memcpy";
    }
    out->pinned = pinned;
    free(src);
    free(dst);
    free(cpus);
    return 0;
fail:
    free(src);
    free(dst);
    free(cpus);
    out->flops = out->bytes_per_s = 0;
    return -1;
}

int tc_tool_measure_ceilings(int threads, double *flops, double *bytes_per_s) {
    tc_tool_ceilings c;
    int rc = tc_tool_measure_ceilings_ex(threads, &c);
    if (flops) *flops = c.flops;
    if (bytes_per_s) *bytes_per_s = c.bytes_per_s;
    return rc;
}

double tc_tool_cpu_busy(double seconds) {
    unsigned long long v[2][10];
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen("/proc/stat", "r");
        memset(v[k], 0, sizeof v[k]);
        if (!f) return -1;
        int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[k][0], &v[k][1],
                       &v[k][2], &v[k][3], &v[k][4], &v[k][5], &v[k][6], &v[k][7]);
        fclose(f);
        if (n < 8) return -1;
        if (k == 0) {
            struct timespec ts = {(time_t)seconds,
                                  (long)((seconds - (double)(time_t)seconds) * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
    double total = 0, idle = 0;
    for (int i = 0; i < 8; i++) total += (double)(v[1][i] - v[0][i]);
    idle = (double)(v[1][3] - v[0][3]) + (double)(v[1][4] - v[0][4]); /* idle, iowait */
    return total > 0 ? 1.0 - idle / total : -1;
}
