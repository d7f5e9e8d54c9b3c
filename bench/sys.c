/*
 * sys.c - what the benchmark needs from the OS: thread pinning (ours pin
 * themselves; the peers' worker threads are pinned here, one per core, the
 * way the library pins its pool), a child process with captured output
 * (scipy), the CPU model, aligned buffers, seeded data.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

void bench_label(char *dst, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (vsnprintf(dst, n, fmt, ap) < 0 && n) dst[0] = 0;
    va_end(ap);
}

double bench_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void *bench_alloc(size_t bytes) {
    void *p = NULL;
    /* Large arrays on 2 MiB boundaries, asking for transparent huge pages
     * (the library does the same for its workspaces): on this VM, 4 KiB
     * pages made a run that followed other work up to 2x slower. Every
     * runner's arrays, ours and the peers', come from here. */
    if (bytes >= BENCH_HUGE_ABOVE) {
        if (posix_memalign(&p, (size_t)2 << 20, bytes)) return NULL;
#ifdef MADV_HUGEPAGE
        madvise(p, bytes, MADV_HUGEPAGE);
#endif
    } else if (posix_memalign(&p, 64, bytes ? bytes : 64)) {
        return NULL;
    }
    /* touched now, so that no runner's warm-up pays the page faults */
    memset(p, 0, bytes ? bytes : 64);
    return p;
}

/* splitmix64 -> uniform [-1, 1) */
void bench_fill_random(float *p, int64_t n, uint64_t seed) {
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        p[i] = (float)((double)(z >> 40) * 0x1.0p-23 - 1.0);
    }
}

int bench_pin_self(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0 ? 0 : -1;
}

int bench_affinity_string(char *buf, size_t n) {
    cpu_set_t set;
    buf[0] = 0;
    if (sched_getaffinity(0, sizeof set, &set)) return -1;
    size_t len = 0;
    for (int i = 0; i < CPU_SETSIZE && len + 8 < n; i++)
        if (CPU_ISSET(i, &set)) len += (size_t)snprintf(buf + len, n - len, "%s%d", len ? "," : "", i);
    return 0;
}

int bench_affinity_restore(const char *list) {
    cpu_set_t set;
    CPU_ZERO(&set);
    int any = 0;
    for (const char *p = list; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p) return -1;
        if (v >= 0 && v < CPU_SETSIZE) {
            CPU_SET((int)v, &set);
            any = 1;
        }
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    if (!any) return -1;
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : -1;
}

int bench_pin_stray_threads(int ncpu) {
    pid_t self = (pid_t)syscall(SYS_gettid);
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    struct dirent *e;
    int pinned = 0, next = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid == self) continue;
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(tid, sizeof set, &set)) continue;
        if (CPU_COUNT(&set) <= 1) continue; /* ours, or already pinned */
        int cpu = ncpu > 1 ? 1 + (next++ % (ncpu - 1)) : 0;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(tid, sizeof set, &set) == 0) pinned++;
    }
    closedir(d);
    return pinned;
}

int bench_spawn_capture(char *const argv[], char **out) {
    int fd[2];
    *out = NULL;
    if (pipe(fd)) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        /* The parent's main thread is pinned: give the child every CPU. */
        cpu_set_t all;
        CPU_ZERO(&all);
        long n = sysconf(_SC_NPROCESSORS_CONF);
        for (long i = 0; i < n && i < CPU_SETSIZE; i++) CPU_SET((int)i, &all);
        sched_setaffinity(0, sizeof all, &all);
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) break;
        if (len + 1024 > cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t k = read(fd[0], buf + len, cap - len - 1);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        len += (size_t)k;
    }
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (buf) buf[len] = 0;
    *out = buf;
    if (!buf) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void bench_cpu_model(char *buf, size_t n) {
    snprintf(buf, n, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t') c++;
                c[strcspn(c, "\n")] = 0;
                snprintf(buf, n, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

double bench_loadavg(void) {
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1;
        fclose(f);
    }
    return l;
}
