/* cpu.c - CPU feature detection (once) and core count. */
#define _GNU_SOURCE
#include "internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static unsigned tc__cpu_bits;
static int tc__cpu_done; /* benign race: every thread computes the same */

unsigned tc__cpu_detect(void) {
    if (__atomic_load_n(&tc__cpu_done, __ATOMIC_ACQUIRE)) return tc__cpu_bits;
    unsigned bits = 0;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        bits |= TC__CPU_AVX2;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        (bits & TC__CPU_AVX2))
        bits |= TC__CPU_AVX512;
    if ((bits & TC__CPU_AVX512) && __builtin_cpu_supports("avx512bf16"))
        bits |= TC__CPU_AVX512BF16;
#endif
    tc__cpu_bits = bits;
    __atomic_store_n(&tc__cpu_done, 1, __ATOMIC_RELEASE);
    return bits;
}

void tc_cpu_features(char *buf, size_t size) {
    if (!buf || size == 0) return;
    buf[0] = '\0';
#if defined(__x86_64__) || defined(__i386__)
    static const char *const names[] = {"sse2", "avx", "avx2", "fma",
                                        "avx512f", "avx512bw", "avx512vl",
                                        "avx512dq"};
    __builtin_cpu_init();
    int supported[8] = {
        __builtin_cpu_supports("sse2"),     __builtin_cpu_supports("avx"),
        __builtin_cpu_supports("avx2"),     __builtin_cpu_supports("fma"),
        __builtin_cpu_supports("avx512f"),  __builtin_cpu_supports("avx512bw"),
        __builtin_cpu_supports("avx512vl"), __builtin_cpu_supports("avx512dq")};
    size_t used = 0;
    for (int i = 0; i < 8; i++) {
        if (!supported[i]) continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? "," : "",
                         names[i]);
        if (n < 0 || (size_t)n >= size - used) break;
        used += (size_t)n;
    }
#endif
}

/* The pool's CPUs (src/core/threads.c), computed once. */
static int tc__ncpu;
static char tc__cpu_src[160];
static pthread_once_t tc__cpu_once = PTHREAD_ONCE_INIT;
static void tc__cpu_init(void) {
    static int cpus[CPU_SETSIZE];
    tc__ncpu = tc__process_cpus(cpus, CPU_SETSIZE, tc__cpu_src, sizeof tc__cpu_src);
    size_t used = strlen(tc__cpu_src);
    for (int i = 0; i < tc__ncpu && used + 8 < sizeof tc__cpu_src; i++)
        used += (size_t)snprintf(tc__cpu_src + used, sizeof tc__cpu_src - used, "%s%d",
                                 i ? "," : ": ", cpus[i]);
}

int tc_cpu_count(void) {
    pthread_once(&tc__cpu_once, tc__cpu_init);
    return tc__ncpu > 0 ? tc__ncpu : 1;
}

void tc_cpu_placement(char *buf, size_t size) {
    if (!buf || !size) return;
    pthread_once(&tc__cpu_once, tc__cpu_init);
    snprintf(buf, size, "%s", tc__cpu_src);
}
