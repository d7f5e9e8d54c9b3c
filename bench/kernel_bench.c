/*
 * kernel_bench.c - `tileconv-kbench`: times the direct filter's row-block
 * kernel (filter_direct.h) alone, on one thread, with its rows in L1/L2:
 * no tiling, no edges, no threads, no memory traffic. It answers "how fast
 * is the kernel itself" (the bench's whole-problem figures mix in memory,
 * edges and the thread pool), beside this machine's one-thread FMA peak
 * measured the same way as `tileconv bench` does (tools/ceilings.c).
 * Also checks one block against a plain sum (max |difference|, printed).
 *
 * usage: tileconv-kbench [--isa avx512|avx2] [--rows R] [--nx N] [K ...]
 *   K: square mask sizes (default 3 5 7 9 15); R: output rows per call,
 *   1..4 (default 4); N: outputs per row (default 1024).
 * Needs an x86 CPU with the ISA asked for; says so and exits 0 otherwise.
 * Not a test: it never fails on speed.
 */
#include "cpu/filter_direct.h"
#include "ceilings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double kb_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int kb_usage(const char *why) {
    fprintf(stderr, "tileconv-kbench: %s\nusage: tileconv-kbench [--isa avx512|avx2] "
                    "[--rows 1..4] [--nx N] [K ...]\n", why);
    return 2;
}

/* One kernel: rows x nx outputs of a k x k mask over rows + k - 1 input
 * rows (64-byte aligned, padded by at least 64 floats). Returns GFLOP/s,
 * or -1. */
static double kb_run(tc__fd_kernel kern, int rows, int64_t nx, int k, double *maxdiff) {
    const int ni = rows + k - 1;
    const int64_t W = (nx + 64 + 15) / 16 * 16; /* rows 64-byte aligned */
    float *x = aligned_alloc(64, (size_t)(ni * W) * sizeof(float));
    float *y = aligned_alloc(64, (size_t)((rows * nx + 15) / 16 * 16) * sizeof(float));
    float *w = malloc((size_t)(k * k) * sizeof(float));
    if (!x || !y || !w) {
        free(x), free(y), free(w);
        return -1;
    }
    for (int64_t i = 0; i < ni * W; i++) x[i] = (float)((i * 37) % 101) * 0.01f - 0.5f;
    for (int i = 0; i < k * k; i++) w[i] = (float)((i * 13) % 17) * 0.05f - 0.4f;
    const void *ptr[TC__FD_RMAX + 64];
    for (int i = 0; i < ni; i++) ptr[i] = x + (size_t)i * (size_t)W;
    tc__fd_block b;
    memset(&b, 0, sizeof b);
    b.nx = nx;
    b.rows = rows;
    b.x = ptr;
    b.xs = ni;
    b.w = w;
    b.m0 = 1;
    b.m1 = k;
    b.m2 = k;
    for (int j = 0; j < rows; j++) b.y[j] = y + (size_t)j * (size_t)nx;
    kern(&b);
    *maxdiff = 0;
    for (int j = 0; j < rows; j++)
        for (int64_t o = 0; o < nx; o++) {
            double s = 0;
            for (int r1 = 0; r1 < k; r1++)
                for (int r2 = 0; r2 < k; r2++)
                    s += (double)w[r1 * k + r2] * x[(size_t)(j + r1) * (size_t)W + (size_t)(o + r2)];
            double d = fabs(s - y[(size_t)j * (size_t)nx + (size_t)o]);
            if (d > *maxdiff) *maxdiff = d;
        }
    long it = 0;
    double t0 = kb_now(), t;
    do {
        kern(&b);
        it++;
    } while ((t = kb_now() - t0) < 0.3);
    free(x), free(y), free(w);
    return 2.0 * k * k * rows * (double)nx * (double)it / t / 1e9;
}

int main(int argc, char **argv) {
    const char *isa = "avx512";
    int rows = 4;
    int64_t nx = 1024;
    int ks[32], nk = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--isa") && i + 1 < argc) isa = argv[++i];
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc) rows = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--nx") && i + 1 < argc) nx = atoll(argv[++i]);
        else if (argv[i][0] != '-' && nk < 32) ks[nk++] = atoi(argv[i]);
        else return kb_usage("bad argument");
    }
    if (rows < 1 || rows > TC__FD_RMAX) return kb_usage("--rows must be 1..4");
    if (nx < 1 || nx > (1 << 20)) return kb_usage("--nx must be 1..1048576");
    if (!nk) {
        static const int def[] = {3, 5, 7, 9, 15};
        for (nk = 0; nk < 5; nk++) ks[nk] = def[nk];
    }
    for (int i = 0; i < nk; i++)
        if (ks[i] < 1 || ks[i] > 63) return kb_usage("mask sizes must be 1..63");
    unsigned cpu = tc__cpu_detect();
    tc__fd_kernel kern;
    if (!strcmp(isa, "avx512")) {
        if (!(cpu & TC__CPU_AVX512)) return puts("tileconv-kbench: no AVX-512 here, nothing timed"), 0;
        kern = tc__fd_f32_avx512;
    } else if (!strcmp(isa, "avx2")) {
        if (!(cpu & TC__CPU_AVX2)) return puts("tileconv-kbench: no AVX2 here, nothing timed"), 0;
        kern = tc__fd_f32_avx2;
    } else {
        return kb_usage("--isa must be avx512 or avx2");
    }
    double peak = 0;
    tc_tool_measure_ceilings(1, &peak, NULL);
    printf("one thread, float32, kernel %s, %d rows x %lld outputs per call; "
           "FMA peak (1 thread, %s loop) %.1f GFLOP/s\n", isa, rows, (long long)nx,
           tc_tool_ceilings_isa(), peak / 1e9);
    for (int i = 0; i < nk; i++) {
        double md, g = kb_run(kern, rows, nx, ks[i], &md);
        if (g < 0) return puts("tileconv-kbench: out of memory"), 1;
        printf("k%-3d %7.1f GFLOP/s  %5.1f%% of peak  (max |diff| vs plain sum %.2g)\n",
               ks[i], g, peak > 0 ? 100 * g * 1e9 / peak : 0, md);
    }
    return 0;
}
