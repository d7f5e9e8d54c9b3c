/*
 * gpu_bench.cu - device-resident timings of the CUDA backend through the
 * public API (tc_execute_* on cudaMalloc'd arrays), CUDA events around each
 * execute, median of the repeats after warm-up, random inputs (never
 * zeros). Prints a table and writes JSON (argv[1], default gpu_bench.json)
 * that bench/gpu_peers.py merges with cuDNN / cuBLAS / CuPy timings.
 * Never asserts: a case that fails to plan or run prints its error.
 *
 * Build (scripts/gpu-check.sh does this):
 *   nvcc -O2 -arch=sm_90 -Iinclude bench/gpu_bench.cu build/libtileconv.a \
 *        -lcufft -o gpu_bench
 * Environment: TILECONV_BENCH_QUICK=1 runs a few cases only; TILECONV_BENCH_ONLY=text
 * runs the cases whose name contains text; TILECONV_BENCH_SWEEP=1 also times
 * every cuda.filter.direct kernel variant that takes each main case (forced
 * through TILECONV_CUDA_DIRECT_VARIANT; group "sweep", algo "cuda.filter.direct#i").
 * TILECONV_BENCH_ONLY=tc-3xtf32: cuda.filter.tc-3xtf32 beside cuda.filter.direct
 * (2D 8192^2 15x15, 3D 512^3 5^3; group "tc") alone.
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "tileconv.h"
#include "../src/core/knobs.h" /* the environment knobs */

#define CK(x)                                                                    \
    do {                                                                         \
        cudaError_t e_ = (x);                                                    \
        if (e_ != cudaSuccess) {                                                 \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));             \
            exit(2);                                                             \
        }                                                                        \
    } while (0)

__global__ void fill_kernel(float *a, size_t n, unsigned seed) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
        float v = 0.1f + 0.9f * (float)(h & 0xffffff) / 16777216.0f;
        a[i] = (h & 0x1000000u) ? v : -v;
    }
}

static float *dev_random(size_t n, unsigned seed) {
    float *p;
    CK(cudaMalloc(&p, n * sizeof(float)));
    fill_kernel<<<1024, 256>>>(p, n, seed);
    CK(cudaGetLastError());
    return p;
}

struct result {
    char name[96], algo[48], group[24];
    double ms, gbs, gflops, ref_s, ms_batch;
    int ok;
};
static std::vector<result> results;
static double copy_gbs = 0, peak_gflops = 0;
static int quick = 0, sweep = 0;
static const char *only = NULL;

static double median(std::vector<float> &v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Times fn() (one execute) reps times after warm-up; returns median ms. */
template <typename F> static double time_it(F fn, int reps, int warm, int *ok) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    *ok = 1;
    /* warm-up: at least `warm` runs and 50 ms of them (clocks ramp up) */
    auto w0 = std::chrono::steady_clock::now();
    for (int i = 0; *ok && (i < warm || std::chrono::steady_clock::now() - w0 <
                                            std::chrono::milliseconds(50)); i++) {
        if (fn() != TC_OK) { *ok = 0; break; }
        if (i >= warm) CK(cudaDeviceSynchronize());
    }
    CK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int i = 0; *ok && i < reps; i++) {
        CK(cudaEventRecord(a, 0));
        if (fn() != TC_OK) { *ok = 0; break; }
        CK(cudaEventRecord(b, 0));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { fprintf(stderr, "kernel error: %s\n", cudaGetErrorString(e)); *ok = 0; }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return t.empty() ? -1 : median(t);
}

/* Back-to-back executes between one pair of events: ms per execute when
 * the host's per-call cost overlaps the device's work. */
template <typename F> static double time_batch(F fn, int n) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(cudaEventRecord(a, 0));
    auto h0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; i++)
        if (fn() != TC_OK) break;
    double host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count() / n;
    printf("         host time per execute call (no wait): %.2f us\n", host_us);
    CK(cudaEventRecord(b, 0));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms / n;
}

static void add(const char *group, const char *name, const char *algo, double ms, double bytes,
                double flops, double ref_s, int ok) {
    result r;
    memset(&r, 0, sizeof r);
    snprintf(r.group, sizeof r.group, "%s", group);
    snprintf(r.name, sizeof r.name, "%s", name);
    snprintf(r.algo, sizeof r.algo, "%s", algo);
    r.ms = ms;
    r.ok = ok;
    r.gbs = ok && ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0;
    r.gflops = ok && ms > 0 ? flops / (ms * 1e-3) / 1e9 : 0;
    r.ref_s = ref_s;
    results.push_back(r);
    printf("%-8s %-34s %-24s %10.4f ms %8.1f GB/s (%5.1f%% copy) %9.1f GFLOP/s (%5.1f%% peak)%s\n",
           group, name, algo, ms, r.gbs, 100 * r.gbs / copy_gbs, r.gflops,
           100 * r.gflops / peak_gflops, ok ? "" : "  FAILED");
    if (ref_s > 0 && ok)
        printf("         3D report GPU time %.6f s -> %.1fx\n", ref_s, ref_s / (ms * 1e-3));
    fflush(stdout);
}

/* Filter case: dims (1..3 spatial), cubic/square mask k (or kz,ky,kx). */
/* The benchmarks' filter problem: an nsp-D correlation of shape with a
 * mask of mask's shape in dtype dt and mode, its element counts in *nx and
 * *nm, and the mask's values (a fixed +-(1..13)/13 pattern) in hm */
static tc_filter_desc bench_desc(int nsp, const long long *shape, const long long *mask,
                                 tc_mode mode, tc_dtype dt, size_t *nx, size_t *nm,
                                 std::vector<float> &hm) {
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.dtype = dt;
    d.ndim = nsp;
    d.kind = TC_FILTER_CORRELATE;
    d.mode = mode;
    *nx = *nm = 1;
    for (int i = 0; i < nsp; i++) {
        d.shape[i] = shape[i];
        d.mask_shape[i] = mask[i];
        *nx *= shape[i];
        *nm *= mask[i];
    }
    hm.resize(*nm);
    for (size_t i = 0; i < *nm; i++) hm[i] = (float)(((i * 7919) % 13) + 1) / 13.0f * ((i & 1) ? 1 : -1);
    return d;
}

static void bench_filter(const char *group, const char *name, int nsp, const long long *shape,
                         const long long *mask, tc_mode mode, const char *algo, int reps,
                         double ref_s = 0, const float *mask_values = NULL) {
    if (only && !strstr(name, only)) return;
    size_t nx, nm;
    std::vector<float> hm;
    tc_filter_desc d = bench_desc(nsp, shape, mask, mode, TC_FLOAT32, &nx, &nm, hm);
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = algo; /* NULL: the planner's choice (ESTIMATE) */
    tc_plan *pl = NULL;
    tc_status st = tc_plan_filter(&pl, NULL, &d, mask_values ? mask_values : hm.data(), &o);
    if (st != TC_OK) {
        printf("%-8s %-34s %-24s plan failed: %s\n", group, name, algo ? algo : "auto", tc_last_error());
        return;
    }
    float *x = dev_random(nx, 17), *y;
    CK(cudaMalloc(&y, nx * sizeof(float)));
    int ok;
    double ms = time_it([&] { return tc_execute_filter(pl, y, x, NULL); }, reps, 2, &ok);
    if (!ok) printf("  error: %s\n", tc_last_error());
    add(group, name, tc_plan_algorithm(pl), ms, tc_plan_bytes(pl), tc_plan_flops(pl), ref_s, ok);
    if (ok && ref_s > 0) {
        double mb = time_batch([&] { return tc_execute_filter(pl, y, x, NULL); }, 50);
        results.back().ms_batch = mb;
        printf("         back-to-back: %.4f ms per execute\n", mb);
    }
    tc_plan_destroy(pl);
    cudaFree(x);
    cudaFree(y);
}

/* cuda.filter.tc-3xtf32 (3xTF32 tensor cores; forced by name, the planner
 * does not take it untimed) beside cuda.filter.direct on one input, group
 * "tc", rows named "... tc-3xtf32 pair" (TILECONV_BENCH_ONLY=tc-3xtf32 runs
 * them alone): the median device time of each after warm-up, and the max
 * error of each against a float64 CPU reference on 4096 sampled outputs
 * (constant mode, cval 0): max |y - ref| / sum |w||x| and max |y - ref| /
 * |ref|. Odd masks only (the reference's window starts at p - m / 2). */
static void bench_filter_tc(const char *name, int nsp, const long long *shape, const long long *mask,
                            int reps) {
    if (only && !strstr(name, only)) return;
    size_t nx, nm;
    std::vector<float> hm;
    tc_filter_desc d = bench_desc(nsp, shape, mask, TC_MODE_CONSTANT, TC_FLOAT32, &nx, &nm, hm);
    float *x = dev_random(nx, 17), *y;
    CK(cudaMalloc(&y, nx * sizeof(float)));
    std::vector<float> hx(nx), hy(nx);
    CK(cudaMemcpy(hx.data(), x, nx * sizeof(float), cudaMemcpyDeviceToHost));
    long long sh[3] = {1, 1, 1}, mk[3] = {1, 1, 1};
    for (int i = 0; i < nsp; i++) {
        sh[3 - nsp + i] = shape[i];
        mk[3 - nsp + i] = mask[i];
    }
    enum { NSAMP = 4096 };
    std::vector<size_t> at(NSAMP);
    std::vector<double> rv(NSAMP), av(NSAMP);
    unsigned long long h = 0x9E3779B97F4A7C15ull;
    for (int k = 0; k < NSAMP; k++) {
        h ^= h >> 12; h ^= h << 25; h ^= h >> 27;
        size_t i = (size_t)((h * 2685821657736338717ull) % nx);
        /* every fourth sample on an edge row (the boundary's outputs) */
        if (k % 4 == 0) i = i % ((size_t)sh[1] * sh[2]) % (size_t)sh[2];
        at[k] = i;
        const long long p0 = (long long)(i / (sh[1] * sh[2])), p1 = (long long)(i / sh[2] % sh[1]),
                        p2 = (long long)(i % sh[2]);
        double sum = 0, abs_sum = 0;
        for (long long r = 0; r < mk[0]; r++)
            for (long long s = 0; s < mk[1]; s++)
                for (long long t = 0; t < mk[2]; t++) {
                    const long long i0 = p0 + r - mk[0] / 2, i1 = p1 + s - mk[1] / 2, i2 = p2 + t - mk[2] / 2;
                    if (i0 < 0 || i0 >= sh[0] || i1 < 0 || i1 >= sh[1] || i2 < 0 || i2 >= sh[2]) continue;
                    const double v = hx[(size_t)((i0 * sh[1] + i1) * sh[2] + i2)],
                                 w = hm[(size_t)((r * mk[1] + s) * mk[2] + t)];
                    sum += w * v;
                    abs_sum += fabs(w * v);
                }
        rv[k] = sum;
        av[k] = abs_sum;
    }
    const char *algos[2] = {"cuda.filter.direct", "cuda.filter.tc-3xtf32"};
    double ms[2] = {-1, -1};
    for (int a = 0; a < 2; a++) {
        tc_plan_options o;
        tc_plan_options_init(&o);
        o.algorithm = algos[a];
        tc_plan *pl = NULL;
        if (tc_plan_filter(&pl, NULL, &d, hm.data(), &o) != TC_OK) {
            printf("%-8s %-34s %-24s plan failed: %s\n", "tc", name, algos[a], tc_last_error());
            continue;
        }
        CK(cudaMemset(y, 0xff, nx * sizeof(float)));
        int ok;
        ms[a] = time_it([&] { return tc_execute_filter(pl, y, x, NULL); }, reps, 2, &ok);
        if (!ok) printf("  error: %s\n", tc_last_error());
        add("tc", name, tc_plan_algorithm(pl), ms[a], tc_plan_bytes(pl), tc_plan_flops(pl), 0, ok);
        tc_plan_destroy(pl);
        if (!ok) continue;
        CK(cudaMemcpy(hy.data(), y, nx * sizeof(float), cudaMemcpyDeviceToHost));
        double e_abs = 0, e_rel = 0;
        for (int k = 0; k < NSAMP; k++) {
            const double df = fabs((double)hy[at[k]] - rv[k]);
            if (!(df == df)) { e_abs = e_rel = INFINITY; break; }
            if (av[k] > 0 && df / av[k] > e_abs) e_abs = df / av[k];
            if (rv[k] != 0 && df / fabs(rv[k]) > e_rel) e_rel = df / fabs(rv[k]);
        }
        printf("         %s: max error on %d sampled outputs vs float64: %.3g of sum |w||x|, "
               "%.3g of |ref|\n", algos[a], NSAMP, e_abs, e_rel);
    }
    if (ms[0] > 0 && ms[1] > 0)
        printf("         tc-3xtf32 / direct time: %.3f (%.2fx the speed of cuda.filter.direct)\n",
               ms[1] / ms[0], ms[0] / ms[1]);
    cudaFree(x);
    cudaFree(y);
}

/* float16 / bfloat16 filters on device arrays (group "half"): x drawn as
 * for float32 and rounded on the device; printed beside the float32 row of
 * the same case ("2D 8192^2 k3", cuda.filter.direct, constant) and this
 * dtype's constant row, as ratios of time. */
__global__ void round_kernel(const float *a, unsigned short *q, size_t n, int bf) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        q[i] = bf ? __bfloat16_as_ushort(__float2bfloat16_rn(a[i])) : __half_as_ushort(__float2half_rn(a[i]));
}
static void bench_filter_half(const char *base, int nsp, const long long *shape, const long long *mask,
                              tc_mode mode, tc_dtype dt, const char *algo, int reps) {
    if (only && !strstr(base, only)) return;
    char name[96];
    snprintf(name, sizeof name, "%s %s %s", base, tc_dtype_name(dt), tc_mode_name(mode));
    size_t nx, nm;
    std::vector<float> hm;
    tc_filter_desc d = bench_desc(nsp, shape, mask, mode, dt, &nx, &nm, hm);
    std::vector<unsigned short> qm(nm);
    if (dt == TC_BFLOAT16) tc_float_to_bfloat16(qm.data(), hm.data(), nm);
    else tc_float_to_half(qm.data(), hm.data(), nm);
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = algo;
    tc_plan *pl = NULL;
    if (tc_plan_filter(&pl, NULL, &d, qm.data(), &o) != TC_OK) {
        printf("%-8s %-34s %-24s plan failed: %s\n", "half", name, algo, tc_last_error());
        return;
    }
    float *xf = dev_random(nx, 17);
    unsigned short *x, *y;
    CK(cudaMalloc(&x, nx * 2));
    CK(cudaMalloc(&y, nx * 2));
    round_kernel<<<1024, 256>>>(xf, x, nx, dt == TC_BFLOAT16);
    CK(cudaDeviceSynchronize());
    cudaFree(xf);
    int ok;
    double ms = time_it([&] { return tc_execute_filter(pl, y, x, NULL); }, reps, 2, &ok);
    if (!ok) printf("  error: %s\n", tc_last_error());
    add("half", name, tc_plan_algorithm(pl), ms, tc_plan_bytes(pl), tc_plan_flops(pl), 0, ok);
    char c0[96];
    snprintf(c0, sizeof c0, "%s %s constant", base, tc_dtype_name(dt));
    for (const result &r : results) {
        if (!ok || !r.ok || r.ms <= 0) continue;
        if (!strcmp(r.name, base) && !strcmp(r.algo, "cuda.filter.direct"))
            printf("         float32 (cuda.filter.direct, constant) / this: %.2fx\n", r.ms / ms);
        if (mode != TC_MODE_CONSTANT && !strcmp(r.name, c0) && !strcmp(r.algo, tc_plan_algorithm(pl)))
            printf("         this / %s constant: %.3fx\n", tc_dtype_name(dt), ms / r.ms);
    }
    tc_plan_destroy(pl);
    cudaFree(x);
    cudaFree(y);
}

__global__ void widen_kernel(const float *a, double *d, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        d[i] = a[i];
}
/* A Gaussian of sigma s (rank 1; scipy's truncate 4.0: radius int(4 s + 0.5))
 * on cuda.filter.separable (group "sep"): x, y and in 3D z fused
 * (TILECONV_CUDA_SEPARABLE_FUSED=1) in every mode (quick: constant), in 3D
 * beside it the register z window (=3, row "... zreg"), the stream forms
 * (=4, row "... stream": 2D the row stream, 3D the register z window with
 * the near boundary map) in every mode, then
 * in constant mode the per-axis passes (=0, the default until the fused
 * kernels are measured) and in 3D x + y fused then a z pass (=2) beside
 * it; float32, then float64 in constant mode (fused and per axis). */
/* every mode and the float64 rows when full, else constant mode in float32
 * only (the small arrays: where the stream forms' resident warps have few
 * rows to share) */
static void bench_gauss(const char *name, int nsp, const long long *shape, double sigma, int reps,
                        int full = 1) {
    if (only && !strstr(name, only)) return;
    const int r = (int)(4.0 * sigma + 0.5), k = 2 * r + 1;
    std::vector<double> g(k);
    double sum = 0;
    for (int i = 0; i < k; i++) sum += g[i] = exp(-0.5 * (i - r) * (i - r) / (sigma * sigma));
    long long m[3];
    size_t nm = 1;
    for (int i = 0; i < nsp; i++) { m[i] = k; nm *= k; }
    /* the float32 mask rounds each product of the float64 one: rank 1 only
     * to float32 precision, so the float64 rows below plan the float64
     * products (cuda.filter.separable's factor check is to 1e-12 there) */
    std::vector<float> hm(nm);
    std::vector<double> dm(nm);
    for (size_t i = 0; i < nm; i++) {
        double v = 1;
        for (size_t q = i, a = 0; a < (size_t)nsp; a++, q /= k) v *= g[q % k] / sum;
        dm[i] = v;
        hm[i] = (float)v;
    }
    char nm2[96];
    for (int md = 0; md <= 4; md++) {
        if ((quick || !full) && md) continue;
        /* the default (the stream forms; the row stream declines arrays
         * too small to fill the device), then the fused x + y kernel (=1) */
        snprintf(nm2, sizeof nm2, "%s %s", name, tc_mode_name((tc_mode)md));
        bench_filter("sep", nm2, nsp, shape, m, (tc_mode)md, "cuda.filter.separable", reps, 0, hm.data());
        setenv("TILECONV_CUDA_SEPARABLE_FUSED", "1", 1);
        snprintf(nm2, sizeof nm2, "%s %s fused", name, tc_mode_name((tc_mode)md));
        bench_filter("sep", nm2, nsp, shape, m, (tc_mode)md, "cuda.filter.separable", reps, 0, hm.data());
        unsetenv("TILECONV_CUDA_SEPARABLE_FUSED");
        if (nsp == 3) { /* the near-map window's 16-row tiles (ZREG_TY=16; 32 the default) */
            setenv("TILECONV_CUDA_SEPARABLE_ZREG_TY", "16", 1);
            snprintf(nm2, sizeof nm2, "%s %s zreg16", name, tc_mode_name((tc_mode)md));
            bench_filter("sep", nm2, nsp, shape, m, (tc_mode)md, "cuda.filter.separable", reps, 0, hm.data());
            unsetenv("TILECONV_CUDA_SEPARABLE_ZREG_TY");
        }
        if (nsp == 3) { /* the register z window with the full map (=3) beside it */
            setenv("TILECONV_CUDA_SEPARABLE_FUSED", "3", 1);
            snprintf(nm2, sizeof nm2, "%s %s zreg", name, tc_mode_name((tc_mode)md));
            bench_filter("sep", nm2, nsp, shape, m, (tc_mode)md, "cuda.filter.separable", reps, 0, hm.data());
            unsetenv("TILECONV_CUDA_SEPARABLE_FUSED");
        }
        /* the stream forms forced (=4: the row stream on small arrays too) */
        setenv("TILECONV_CUDA_SEPARABLE_FUSED", "4", 1);
        snprintf(nm2, sizeof nm2, "%s %s stream", name, tc_mode_name((tc_mode)md));
        bench_filter("sep", nm2, nsp, shape, m, (tc_mode)md, "cuda.filter.separable", reps, 0, hm.data());
        unsetenv("TILECONV_CUDA_SEPARABLE_FUSED");
        for (int kv = 0; kv <= (nsp == 3 ? 2 : 0) && !md; kv += 2) {
            setenv("TILECONV_CUDA_SEPARABLE_FUSED", kv ? "2" : "0", 1);
            snprintf(nm2, sizeof nm2, "%s constant %s", name, kv ? "xy+z" : "per-axis");
            bench_filter("sep", nm2, nsp, shape, m, (tc_mode)md, "cuda.filter.separable", reps, 0, hm.data());
            unsetenv("TILECONV_CUDA_SEPARABLE_FUSED");
        }
    }
    /* float64, fused, the row stream (=4) and per axis, constant mode
     * (inputs: the float32 draw widened on the device) */
    for (int f = 2; f >= 0 && !quick && full; f--) {
        tc_filter_desc d;
        tc_filter_desc_init(&d);
        d.dtype = TC_FLOAT64;
        d.ndim = nsp;
        size_t nx = 1;
        for (int i = 0; i < nsp; i++) { d.shape[i] = shape[i]; d.mask_shape[i] = m[i]; nx *= shape[i]; }
        setenv("TILECONV_CUDA_SEPARABLE_FUSED", f == 2 ? "4" : f ? "1" : "0", 1);
        tc_plan_options o;
        tc_plan_options_init(&o);
        o.algorithm = "cuda.filter.separable";
        tc_plan *pl = NULL;
        snprintf(nm2, sizeof nm2, "%s float64 constant%s", name, f == 2 ? " stream" : f ? "" : " per-axis");
        if (tc_plan_filter(&pl, NULL, &d, dm.data(), &o) != TC_OK) {
            printf("%-8s %-34s plan failed: %s\n", "sep", nm2, tc_last_error());
        } else {
            float *xf = dev_random(nx, 17);
            double *x, *y;
            CK(cudaMalloc(&x, nx * 8));
            CK(cudaMalloc(&y, nx * 8));
            widen_kernel<<<1024, 256>>>(xf, x, nx);
            CK(cudaDeviceSynchronize());
            cudaFree(xf);
            int ok;
            double ms = time_it([&] { return tc_execute_filter(pl, y, x, NULL); }, reps, 2, &ok);
            if (!ok) printf("  error: %s\n", tc_last_error());
            add("sep", nm2, tc_plan_algorithm(pl), ms, tc_plan_bytes(pl), tc_plan_flops(pl), 0, ok);
            cudaFree(x);
            cudaFree(y);
        }
        tc_plan_destroy(pl);
        unsetenv("TILECONV_CUDA_SEPARABLE_FUSED");
    }
}

/* Every cuda.filter.direct variant that plans for this case (TILECONV_BENCH_SWEEP). */
static void sweep_filter(const char *name, int nsp, const long long *shape, const long long *mask,
                         int reps) {
    if (!sweep || (only && !strstr(name, only))) return;
    for (int v = 0; v < 128; v++) {
        char ev[16], an[32];
        snprintf(ev, sizeof ev, "%d", v);
        setenv("TILECONV_CUDA_DIRECT_VARIANT", ev, 1);
        tc_filter_desc d;
        tc_filter_desc_init(&d);
        d.ndim = nsp;
        for (int i = 0; i < nsp; i++) { d.shape[i] = shape[i]; d.mask_shape[i] = mask[i]; }
        std::vector<float> hm(1000, 0.5f);
        tc_plan_options o;
        tc_plan_options_init(&o);
        o.algorithm = "cuda.filter.direct";
        tc_plan *pl = NULL;
        int ok = tc_plan_filter(&pl, NULL, &d, hm.data(), &o) == TC_OK;
        tc_plan_destroy(pl);
        if (ok) {
            snprintf(an, sizeof an, "cuda.filter.direct#%d", v);
            /* bench_filter plans again under the same variable */
            const char *save = only;
            only = NULL;
            size_t before = results.size();
            bench_filter("sweep", name, nsp, shape, mask, TC_MODE_CONSTANT, "cuda.filter.direct", reps);
            only = save;
            if (results.size() > before) {
                snprintf(results.back().algo, sizeof results.back().algo, "%s", an);
                printf("         (the row above: %s, TILECONV_CUDA_DIRECT_VARIANT=%d)\n", an, v);
            }
        }
    }
    unsetenv("TILECONV_CUDA_DIRECT_VARIANT");
}
static void bench_gemm(const char *name, long long n, const char *algo, int reps) {
    if (only && !strstr(name, only)) return;
    tc_gemm_desc d;
    tc_gemm_desc_init(&d);
    d.dtype = TC_FLOAT32;
    d.m = d.n = d.k = n;
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = algo;
    tc_plan *pl;
    if (tc_plan_gemm(&pl, NULL, &d, &o) != TC_OK) {
        printf("gemm     %-34s %-24s plan failed: %s\n", name, algo, tc_last_error());
        return;
    }
    float *A = dev_random(n * n, 1), *B = dev_random(n * n, 2), *C;
    CK(cudaMalloc(&C, n * n * sizeof(float)));
    int ok;
    double ms = time_it([&] { return tc_execute_gemm(pl, C, A, B, NULL); }, reps, 1, &ok);
    if (!ok) printf("  error: %s\n", tc_last_error());
    add("gemm", name, algo, ms, tc_plan_bytes(pl), tc_plan_flops(pl), 0, ok);
    tc_plan_destroy(pl);
    cudaFree(A); cudaFree(B); cudaFree(C);
}

static void bench_copy(void) {
    size_t n = (size_t)1 << 28; /* 1 GiB */
    float *a = dev_random(n, 3), *b;
    CK(cudaMalloc(&b, n * 4));
    int ok;
    double ms = time_it([&] { return cudaMemcpy(b, a, n * 4, cudaMemcpyDeviceToDevice) == cudaSuccess ? TC_OK : TC_ERR_BACKEND; }, 10, 2, &ok);
    copy_gbs = 2.0 * n * 4 / (ms * 1e-3) / 1e9;
    cudaFree(a);
    cudaFree(b);
}

int main(int argc, char **argv) {
    const char *json = argc > 1 ? argv[1] : "gpu_bench.json";
    quick = tc__knob_get(TC__KNOB_BENCH_QUICK) && atoi(tc__knob_get(TC__KNOB_BENCH_QUICK));
    sweep = tc__knob_get(TC__KNOB_BENCH_SWEEP) && atoi(tc__knob_get(TC__KNOB_BENCH_SWEEP));
    only = tc__knob_get(TC__KNOB_BENCH_ONLY) && *tc__knob_get(TC__KNOB_BENCH_ONLY) ? tc__knob_get(TC__KNOB_BENCH_ONLY) : NULL;
    if (tc_cuda_device_count() == 0) {
        printf("no CUDA device: nothing to time\n");
        return 0;
    }
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    int clk = 0;
    cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
    peak_gflops = pr.multiProcessorCount * 128.0 * 2 * clk * 1e3 / 1e9;
    {
        static char rep[1 << 16];
        tc_status st = tc_cuda_kernel_report(rep, sizeof rep);
        printf("---- tc_cuda_kernel_report (%s) ----\n%s----\n", tc_status_string(st),
               st == TC_OK ? rep : tc_last_error());
    }
    bench_copy();
    printf("device %s, %d SMs, %.0f MHz: FP32 peak %.1f TFLOP/s (nominal), D2D copy %.1f GB/s "
           "(read+write, measured)\n", pr.name, pr.multiProcessorCount, clk / 1e3,
           peak_gflops / 1e3, copy_gbs);
    add("copy", "cudaMemcpy D2D 1 GiB", "cudaMemcpy", 2.0 * ((size_t)1 << 30) / copy_gbs / 1e6,
        2.0 * ((size_t)1 << 30), 0, 0, 1);

    const tc_mode C0 = TC_MODE_CONSTANT;
    char nm[96];
    /* 2D 8192^2 */
    for (int k = 3; k <= 15; k += 2) {
        if (quick && k != 5 && k != 11) continue;
        long long s[2] = {8192, 8192}, m[2] = {k, k};
        snprintf(nm, sizeof nm, "2D 8192^2 k%d", k);
        bench_filter("2d", nm, 2, s, m, C0, "cuda.filter.direct", 20);
        sweep_filter(nm, 2, s, m, 10);
    }
    {
        long long s[2] = {8192, 8192}, m[2] = {5, 5};
        for (int md = 1; md <= 4 && !quick; md++) {
            snprintf(nm, sizeof nm, "2D 8192^2 k5 %s", tc_mode_name((tc_mode)md));
            bench_filter("2dmode", nm, 2, s, m, (tc_mode)md, "cuda.filter.direct", 20);
        }
        const char *seeds[] = {"cuda.filter.seed-const2d", "cuda.filter.seed-tiled2d-pitch", "cuda.filter.seed-texture2d",
                               "cuda.filter.separable"};
        for (int i = 0; i < 4 && !quick; i++)
            bench_filter("2dseed", "2D 8192^2 k5", 2, s, m, C0, seeds[i], 5);
        long long m63[2] = {63, 63};
        bench_filter("2dfft", "2D 8192^2 k63", 2, s, m63, C0, "cuda.filter.fft", 5);
        if (!quick) bench_filter("2dfft", "2D 8192^2 k63 (auto)", 2, s, m63, C0, NULL, 5);
    }
    /* the 3xTF32 tensor-core filter beside cuda.filter.direct (group "tc") */
    {
        long long s2[2] = {8192, 8192}, m2[2] = {15, 15}, s3[3] = {512, 512, 512}, m3[3] = {5, 5, 5};
        bench_filter_tc("2D 8192^2 k15 tc-3xtf32 pair", 2, s2, m2, 20);
        bench_filter_tc("3D 512^3 k5 tc-3xtf32 pair", 3, s3, m3, 10);
    }
    /* separable Gaussians: 2D 8192^2 sigma 2 (17 taps), 3D 512^3 sigma 1.5 (13
     * taps); constant mode at 1024^2, 512^2, 128^3 and 64^3 */
    {
        long long s2[2] = {8192, 8192}, s3[3] = {512, 512, 512};
        bench_gauss("2D 8192^2 gauss s2 k17", 2, s2, 2.0, 20);
        bench_gauss("3D 512^3 gauss s1.5 k13", 3, s3, 1.5, 10);
        long long t2[2] = {1024, 1024}, u2[2] = {512, 512}, t3[3] = {128, 128, 128}, u3[3] = {64, 64, 64};
        bench_gauss("2D 1024^2 gauss s2 k17", 2, t2, 2.0, 50, 0);
        bench_gauss("2D 512^2 gauss s2 k17", 2, u2, 2.0, 50, 0);
        bench_gauss("3D 128^3 gauss s1.5 k13", 3, t3, 1.5, 50, 0);
        bench_gauss("3D 64^3 gauss s1.5 k13", 3, u3, 1.5, 50, 0);
    }
    /* 3D 512^3 */
    for (int k = 3; k <= 7; k += 2) {
        if (quick && k != 5) continue;
        long long s[3] = {512, 512, 512}, m[3] = {k, k, k};
        snprintf(nm, sizeof nm, "3D 512^3 k%d", k);
        bench_filter("3d", nm, 3, s, m, C0, "cuda.filter.direct", 10);
        sweep_filter(nm, 3, s, m, 5);
        /* output planes a block (k3: the register z window; the rule gives 57) */
        static const char *const zcs5[] = {"32", "43", "64", "86", "128"};
        for (int i = 0; i < 5 && !quick && k == 3; i++) {
            char nz[64];
            snprintf(nz, sizeof nz, "3D 512^3 k3 zc=%s", zcs5[i]);
            setenv("TILECONV_CUDA_DIRECT_ZC", zcs5[i], 1);
            bench_filter("3d", nz, 3, s, m, C0, "cuda.filter.direct", 10);
        }
        unsetenv("TILECONV_CUDA_DIRECT_ZC");
        /* the plane ring in every mode beside constant (k3) */
        for (int md = 1; md <= 4 && !quick && k == 3; md++) {
            char nmm[96];
            snprintf(nmm, sizeof nmm, "3D 512^3 k3 %s", tc_mode_name((tc_mode)md));
            bench_filter("3dmode", nmm, 3, s, m, (tc_mode)md, "cuda.filter.direct", 10);
        }
    }
    /* 3D 256^3 k3 (the Python target's volume: at 256 wide every block of
     * the plane ring touches an x edge), constant and reflect, and with
     * TILECONV_BENCH_SWEEP=1 every variant (the narrow tiles among them) */
    {
        long long s[3] = {256, 256, 256}, m[3] = {3, 3, 3};
        if (!quick) {
            bench_filter("3d256", "3D 256^3 k3", 3, s, m, C0, "cuda.filter.direct", 20);
            bench_filter("3d256", "3D 256^3 k3 reflect", 3, s, m, TC_MODE_REFLECT, "cuda.filter.direct", 20);
            sweep_filter("3D 256^3 k3", 3, s, m, 10);
            /* output planes a block of the default kernel (the register z
             * window; 32 by default here, 8 by the two-wave rule alone),
             * constant and reflect */
            static const char *const zcs[] = {"4", "12", "16", "22", "32", "43", "64"};
            for (int md = 0; md <= 2; md += 2)
                for (int i = 0; i < 7; i++) {
                    char nz[64];
                    snprintf(nz, sizeof nz, "3D 256^3 k3 %s zc=%s", tc_mode_name((tc_mode)md), zcs[i]);
                    setenv("TILECONV_CUDA_DIRECT_ZC", zcs[i], 1);
                    bench_filter("3d256", nz, 3, s, m, (tc_mode)md, "cuda.filter.direct", 20);
                }
            unsetenv("TILECONV_CUDA_DIRECT_ZC");
        }
    }
    /* float16 / bfloat16 2D 8192^2 and 3D 512^3 k3 (cuda.filter.direct-half;
     * float16 in every mode) beside the float32 rows above, and float16
     * through the staged float32 path (cuda.filter.direct) */
    {
        long long s2[2] = {8192, 8192}, m2[2] = {3, 3}, s3[3] = {512, 512, 512}, m3[3] = {3, 3, 3};
        for (int b = 0; b < 2; b++)
            for (int md = 0; md <= 4; md++) {
                if ((quick || b) && md) continue;
                const tc_dtype t = b ? TC_BFLOAT16 : TC_FLOAT16;
                bench_filter_half("2D 8192^2 k3", 2, s2, m2, (tc_mode)md, t, "cuda.filter.direct-half", 20);
                bench_filter_half("3D 512^3 k3", 3, s3, m3, (tc_mode)md, t, "cuda.filter.direct-half", 10);
            }
        if (!quick) {
            /* an odd width: rows not 16-byte aligned (4-byte window loads) */
            long long so[2] = {8191, 8191};
            bench_filter_half("2D 8191^2 k3", 2, so, m2, C0, TC_FLOAT16, "cuda.filter.direct-half", 20);
            bench_filter_half("2D 8192^2 k3", 2, s2, m2, C0, TC_FLOAT16, "cuda.filter.direct", 10);
            bench_filter_half("3D 512^3 k3", 3, s3, m3, C0, TC_FLOAT16, "cuda.filter.direct", 5);
            /* the plane ring's 2-rows-a-thread tuning form */
            setenv("TILECONV_CUDA_HALF_RING_RY", "2", 1);
            bench_filter_half("3D 512^3 k3 ring-ry2", 3, s3, m3, C0, TC_FLOAT16, "cuda.filter.direct-half", 10);
            bench_filter_half("3D 512^3 k3 ring-ry2", 3, s3, m3, TC_MODE_REFLECT, TC_FLOAT16, "cuda.filter.direct-half", 10);
            long long s256[3] = {256, 256, 256};
            bench_filter_half("3D 256^3 k3 ring-ry2", 3, s256, m3, C0, TC_FLOAT16, "cuda.filter.direct-half", 20);
            unsetenv("TILECONV_CUDA_HALF_RING_RY");
            bench_filter_half("3D 256^3 k3", 3, s256, m3, C0, TC_FLOAT16, "cuda.filter.direct-half", 20);
            /* two input planes ahead */
            setenv("TILECONV_CUDA_HALF_RING_AHEAD", "2", 1);
            bench_filter_half("3D 512^3 k3 ring-ahead2", 3, s3, m3, C0, TC_FLOAT16, "cuda.filter.direct-half", 10);
            bench_filter_half("3D 512^3 k3 ring-ahead2", 3, s3, m3, C0, TC_BFLOAT16, "cuda.filter.direct-half", 10);
            bench_filter_half("3D 256^3 k3 ring-ahead2", 3, s256, m3, C0, TC_FLOAT16, "cuda.filter.direct-half", 20);
            unsetenv("TILECONV_CUDA_HALF_RING_AHEAD");
            /* the full edge map (the default is the deferred edge
             * column), modes other than constant */
            setenv("TILECONV_CUDA_HALF_RING_EDGE", "0", 1);
            for (int md = 1; md <= 4; md++)
                bench_filter_half("3D 512^3 k3 ring-fullmap", 3, s3, m3, (tc_mode)md, TC_FLOAT16, "cuda.filter.direct-half", 10);
            bench_filter_half("3D 512^3 k3 ring-fullmap", 3, s3, m3, TC_MODE_REFLECT, TC_BFLOAT16, "cuda.filter.direct-half", 10);
            bench_filter_half("3D 256^3 k3 ring-fullmap", 3, s256, m3, TC_MODE_REFLECT, TC_FLOAT16, "cuda.filter.direct-half", 20);
            unsetenv("TILECONV_CUDA_HALF_RING_EDGE");
            bench_filter_half("3D 256^3 k3", 3, s256, m3, TC_MODE_REFLECT, TC_FLOAT16, "cuda.filter.direct-half", 20);
        }
    }
    /* 1D 2^26 */
    int ks1[] = {3, 7, 15, 31, 63};
    for (int i = 0; i < 5; i++) {
        if (quick && ks1[i] != 31) continue;
        long long s[1] = {1LL << 26}, m[1] = {ks1[i]};
        snprintf(nm, sizeof nm, "1D 2^26 k%d", ks1[i]);
        bench_filter("1d", nm, 1, s, m, C0, "cuda.filter.direct", 20);
        sweep_filter(nm, 1, s, m, 10);
    }
    if (!quick) {
        long long s[1] = {1LL << 26}, m[1] = {7};
        const char *seeds[] = {"cuda.filter.seed-basic1d", "cuda.filter.seed-const1d", "cuda.filter.seed-tiled1d-in",
                               "cuda.filter.seed-tiled1d-out"};
        for (int i = 0; i < 4; i++) bench_filter("1dseed", "1D 2^26 k7", 1, s, m, C0, seeds[i], 5);
    }
    /* the 3D report's five tests (same size, zero padding) */
    struct { long long s[3]; int k; double ref; } rep[5] = {
        {{64, 64, 64}, 3, 0.001355}, {{64, 64, 64}, 3, 0.001354}, {{128, 128, 128}, 5, 0.024552},
        {{32, 64, 64}, 5, 0.001594}, {{32, 64, 64}, 3, 0.000374}};
    for (int i = 0; i < 5; i++) {
        long long m[3] = {rep[i].k, rep[i].k, rep[i].k};
        snprintf(nm, sizeof nm, "report test %d %lldx%lldx%lld k%d", i + 1, rep[i].s[0], rep[i].s[1],
                 rep[i].s[2], rep[i].k);
        bench_filter("report", nm, 3, rep[i].s, m, C0, "cuda.filter.direct", 50, rep[i].ref);
        sweep_filter(nm, 3, rep[i].s, m, 20);
        if (!quick) bench_filter("reportseed", nm, 3, rep[i].s, m, C0, "cuda.filter.seed-tiled3d", 20, rep[i].ref);
    }
    /* SGEMM */
    bench_gemm("SGEMM 4096^3", 4096, "cuda.gemm.simt", 10);
    if (!quick) {
        bench_gemm("SGEMM 8192^3", 8192, "cuda.gemm.simt", 5);
        bench_gemm("SGEMM 4096^3", 4096, "cuda.gemm.seed-tiled", 3);
        bench_gemm("SGEMM 4096^3", 4096, "cuda.gemm.seed-naive", 2);
    }

    FILE *f = fopen(json, "w");
    if (f) {
        fprintf(f, "{\"device\": \"%s\", \"copy_gbs\": %.1f, \"peak_gflops\": %.1f, \"results\": [\n",
                pr.name, copy_gbs, peak_gflops);
        for (size_t i = 0; i < results.size(); i++) {
            const result &r = results[i];
            fprintf(f, "  {\"group\": \"%s\", \"name\": \"%s\", \"algo\": \"%s\", \"ms\": %.6f, "
                       "\"gbs\": %.2f, \"gflops\": %.2f, \"report_s\": %.6f, \"ms_batch\": %.6f, \"ok\": %d}%s\n",
                    r.group, r.name, r.algo, r.ms, r.gbs, r.gflops, r.ref_s, r.ms_batch, r.ok,
                    i + 1 < results.size() ? "," : "");
        }
        fprintf(f, "]}\n");
        fclose(f);
    }
    return 0;
}
