/*
 * hs_trace.cu - where the warps of cuda.conv.igemm-half-shifted's kernel
 * (k_hs_conv) wait, layer by layer: the ResNet-50 layers of
 * bench/gpu_layers_half.py (batch 32, float16, channels-last, no bias, the
 * plan's packed weights), each planned with the solver forced by name and
 * run a few times with the kernel's trace armed. One table, a row a layer.
 *
 * Needs igemm_half_shifted.cu compiled with -DTC_HS_TRACE=1 (its records,
 * src/cuda/conv/igemm_half_shifted_trace.h) linked before a default
 * libtileconv.a; bench/hs_trace.sh builds and runs it:
 *   bash bench/hs_trace.sh            (BUILD=build-cuda by default)
 * Environment: HS_TRACE_REPS traced runs a layer (default 5, after 2
 * untraced warm-up runs); HS_TRACE_ONLY=TEXT the layers whose name holds
 * TEXT; HS_TRACE_ALL=1 adds 3x3 64 @56, 3x3 256 @14 and 1x1 256->64 @56;
 * the solver's own knobs apply (TILECONV_CUDA_HALF_SHIFTED_CFG,
 * TILECONV_CUDA_HALF_SHIFTED_STAGES).
 *
 * Columns (docs/solvers/cuda-conv-half.md, "Reading the wait-time trace"):
 *   cfg        BM x BN tile / weight stages / k steps a block
 *   blk, fit   blocks of the grid; blocks an SM by the occupancy calculator
 *   us         CUDA events around one execute (median of the traced runs;
 *              conv1 includes its merge pass); span: the kernel's first
 *              block start to last block end by %globaltimer
 *   cyc mean/max  a block's life in SM cycles (first warp in to last out)
 *   setup .. other  a consumer warp's cycles, as fractions of its life:
 *              setup (entry to the set-up's __syncthreads), first (then to
 *              the first full barrier: the first copies' latency; setup +
 *              first = the prologue), full (later full-barrier waits: data
 *              late), wgmma (wgmma.wait_group: tensor-pipe latency), epi
 *              (last wait to the end; bar: of which waiting at the
 *              epilogue's first barrier for the other warpgroup; sm: of
 *              which the fp32 tile into shared memory and the second
 *              barrier; the rest of epi is the stores), other
 *              (issuing the wgmmas, the loop's own instructions)
 *   p.empty    the producer lane's cycles in empty-barrier waits over its
 *              life (entry to its last copy issued)
 *   res 1/2/3+ of the time an SM held a block, the share with 1, 2, 3 or
 *              more blocks resident (from the blocks' stamps on that SM)
 *   err        max |y - y'| / max |y'| against cuda.conv.igemm-half
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "tileconv.h"
#include "../src/cuda/conv/igemm_half_shifted_trace.h"

#define CK(x)                                                                    \
    do {                                                                         \
        cudaError_t e_ = (x);                                                    \
        if (e_ != cudaSuccess) {                                                 \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));             \
            exit(2);                                                             \
        }                                                                        \
    } while (0)

static float hval(size_t i, unsigned seed) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return ((float)(h & 0xffffff) / 16777216.0f - 0.5f);
}
__global__ void fill_half(__half *a, size_t n, unsigned seed) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 13;
        h *= 0x5bd1e995u;
        h ^= h >> 15;
        a[i] = __float2half((float)(h & 0xffffff) / 16777216.0f - 0.5f);
    }
}

struct layer {
    const char *name;
    int C, K, H, k, s, p;
};

static tc_plan *plan_layer(tc_context *ctx, const layer &L, const char *algo, const void *w) {
    tc_conv_desc d;
    tc_conv_desc_init(&d);
    d.dtype = TC_FLOAT16;
    d.nspatial = 2;
    d.batch = 32;
    d.in_channels = L.C, d.out_channels = L.K, d.groups = 1;
    for (int i = 0; i < 2; i++) {
        d.in_size[i] = L.H, d.kernel_size[i] = L.k, d.stride[i] = L.s, d.padding[i] = L.p;
    }
    d.layout = TC_LAYOUT_CHANNELS_LAST;
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = algo;
    tc_plan *pl = NULL;
    if (tc_plan_conv(&pl, ctx, &d, &o) != TC_OK) return NULL;
    if (tc_plan_conv_set_weights(pl, w, NULL) != TC_OK) {
        tc_plan_destroy(pl);
        return NULL;
    }
    return pl;
}

/* one layer's sums over its traced runs */
struct sums {
    double blocks = 0, dur = 0, maxdur = 0, clk_cyc = 0, clk_ns = 0;
    double tot = 0, setup = 0, first = 0, full = 0, wg = 0, epi = 0, bar = 0, sm = 0;
    double plife = 0, pempty = 0, res[4] = {0, 0, 0, 0}, busy = 0, span_ns = 0;
    int maxres = 0, sms = 0, bad = 0, runs = 0;
};

static void add_run(sums &S, const std::vector<tc_hs_trace_block> &rec, int nb, int nw) {
    struct ev {
        unsigned long long t;
        int d;
    };
    std::vector<std::vector<ev>> per_sm(1024);
    unsigned long long g0 = ~0ull, g1 = 0;
    for (int b = 0; b < nb; b++) {
        const tc_hs_trace_block &r = rec[b];
        if ((int)r.nwarps != nw || r.smid >= 1024) {
            S.bad++;
            continue;
        }
        unsigned long long bs = r.pstart, be = 0, ge = 0;
        int ok = r.pend >= r.pstart;
        for (int i = 0; i < nw; i++) {
            const tc_hs_trace_warp &w = r.w[i];
            ok = ok && w.start <= w.sync && w.sync <= w.first && w.first <= w.loop &&
                 w.loop <= w.epibar && w.epibar <= w.epism && w.epism <= w.end;
            bs = std::min(bs, w.start);
            be = std::max(be, w.end);
            ge = std::max(ge, w.gend);
        }
        if (!ok) {
            S.bad++;
            continue;
        }
        for (int i = 0; i < nw; i++) {
            const tc_hs_trace_warp &w = r.w[i];
            S.tot += (double)(w.end - w.start);
            S.setup += (double)(w.sync - w.start);
            S.first += (double)(w.first - w.sync);
            S.full += w.full;
            S.wg += w.wgmma;
            S.epi += (double)(w.end - w.loop);
            S.bar += (double)(w.epibar - w.loop);
            S.sm += (double)(w.epism - w.epibar);
        }
        S.plife += (double)(r.pend - r.pstart);
        S.pempty += r.empty;
        const double d = (double)(be - bs);
        S.blocks++;
        S.dur += d;
        S.maxdur = std::max(S.maxdur, d);
        if (ge > r.gstart) S.clk_cyc += d, S.clk_ns += (double)(ge - r.gstart);
        g0 = std::min(g0, r.gstart);
        g1 = std::max(g1, ge);
        per_sm[r.smid].push_back({bs, +1});
        per_sm[r.smid].push_back({be, -1});
    }
    int sms = 0;
    for (auto &v : per_sm) {
        if (v.empty()) continue;
        sms++;
        /* ends before starts at the same stamp */
        std::sort(v.begin(), v.end(), [](const ev &a, const ev &b) { return a.t < b.t || (a.t == b.t && a.d < b.d); });
        int c = 0;
        for (size_t i = 0; i + 1 < v.size(); i++) {
            c += v[i].d;
            S.maxres = std::max(S.maxres, c);
            const double dt = (double)(v[i + 1].t - v[i].t);
            if (c > 0) S.res[std::min(c, 4) - 1] += dt, S.busy += dt;
        }
    }
    S.sms = std::max(S.sms, sms);
    if (g1 > g0) S.span_ns += (double)(g1 - g0);
    S.runs++;
}

int main(void) {
    const char *only = getenv("HS_TRACE_ONLY");
    const int reps = getenv("HS_TRACE_REPS") ? atoi(getenv("HS_TRACE_REPS")) : 5;
    std::vector<layer> layers = {
        {"conv1 7x7/2 3->64 @224", 3, 64, 224, 7, 2, 3},
        {"3x3 128 @28", 128, 128, 28, 3, 1, 1},
        {"3x3 512 @7", 512, 512, 7, 3, 1, 1},
        {"1x1/2 256->512 @56", 256, 512, 56, 1, 2, 0},
    };
    if (getenv("HS_TRACE_ALL") && atoi(getenv("HS_TRACE_ALL"))) {
        layers.push_back({"3x3 64 @56", 64, 64, 56, 3, 1, 1});
        layers.push_back({"3x3 256 @14", 256, 256, 14, 3, 1, 1});
        layers.push_back({"1x1 256->64 @56", 256, 64, 56, 1, 1, 0});
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    tc_context *ctx = NULL;
    if (tc_context_create(&ctx) != TC_OK || tc_context_set_backend(ctx, TC_BACKEND_CUDA) != TC_OK) {
        printf("no CUDA context: %s\n", tc_last_error());
        return 2;
    }
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    const size_t tbytes = (size_t)64 << 20; /* 64 MiB of records: ~120k blocks */
    void *tbuf;
    CK(cudaMalloc(&tbuf, tbytes));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    printf("hs_trace: %s, %d SMs, batch 32 float16 channels-last, %d traced runs a layer; "
           "fractions of a consumer warp's cycles\n",
           prop.name, prop.multiProcessorCount, reps);
    printf("%-22s %-14s %5s %3s %3s %6s %6s %6s %6s | %5s %5s %5s %5s %5s %5s %5s %5s | %7s | %4s %4s %4s %3s | %4s %7s\n",
           "layer", "cfg/st/steps", "blk", "fit", "SMs", "us", "span", "cyc", "max", "setup", "first",
           "full", "wgmma", "epi", "(bar)", "(sm)", "other", "p.empty", "res1", "res2", "res3+", "rmx", "MHz",
           "err");
    int failures = 0;
    for (const layer &L : layers) {
        if (only && !strstr(L.name, only)) continue;
        const int O = (L.H + 2 * L.p - L.k) / L.s + 1;
        const size_t nx = (size_t)32 * L.H * L.H * L.C, ny = (size_t)32 * O * O * L.K,
                     nw = (size_t)L.K * L.C * L.k * L.k;
        std::vector<__half> hw(nw);
        for (size_t i = 0; i < nw; i++) hw[i] = __float2half(hval(i, 99) / (float)(L.C * L.k));
        tc_plan *pl = plan_layer(ctx, L, "cuda.conv.igemm-half-shifted", hw.data());
        if (!pl) {
            printf("%-22s plan failed: %s\n", L.name, tc_last_error());
            failures++;
            continue;
        }
        tc_plan_set_cuda_stream(pl, st);
        __half *x, *y, *y2;
        CK(cudaMalloc(&x, nx * sizeof(__half)));
        CK(cudaMalloc(&y, ny * sizeof(__half)));
        CK(cudaMalloc(&y2, ny * sizeof(__half)));
        fill_half<<<1024, 256, 0, st>>>(x, nx, 17);
        CK(cudaGetLastError());
        tc_hs_trace_arm(NULL, 0);
        int ok = 1;
        for (int i = 0; i < 2 && ok; i++) ok = tc_execute_conv(pl, y, x, NULL, NULL, NULL) == TC_OK;
        CK(cudaStreamSynchronize(st));
        sums S;
        std::vector<float> us;
        tc_hs_trace_info info;
        memset(&info, 0, sizeof info);
        std::vector<tc_hs_trace_block> rec;
        for (int r = 0; r < reps && ok; r++) {
            CK(cudaMemsetAsync(tbuf, 0, tbytes, st));
            tc_hs_trace_arm(tbuf, tbytes);
            CK(cudaEventRecord(e0, st));
            ok = tc_execute_conv(pl, y, x, NULL, NULL, NULL) == TC_OK;
            CK(cudaEventRecord(e1, st));
            CK(cudaStreamSynchronize(st));
            if (!ok || tc_hs_trace_get(&info) != 0) {
                ok = 0;
                break;
            }
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            us.push_back(ms * 1000.0f);
            rec.resize((size_t)info.blocks);
            CK(cudaMemcpy(rec.data(), tbuf, rec.size() * sizeof(tc_hs_trace_block),
                          cudaMemcpyDeviceToHost));
            add_run(S, rec, info.blocks, info.nwg * 4);
        }
        tc_hs_trace_arm(NULL, 0);
        if (!ok) {
            printf("%-22s %s\n", L.name,
                   tc_last_error()[0] ? tc_last_error()
                                      : (info.untraced ? "grid past the trace buffer" : "no traced launch"));
            failures++;
        } else {
            /* the check: the same layer by cuda.conv.igemm-half */
            char err[16] = "-";
            tc_plan *p2 = plan_layer(ctx, L, "cuda.conv.igemm-half", hw.data());
            if (p2 && tc_plan_set_cuda_stream(p2, st) == TC_OK &&
                tc_execute_conv(p2, y2, x, NULL, NULL, NULL) == TC_OK) {
                std::vector<__half> a(ny), b(ny);
                CK(cudaStreamSynchronize(st));
                CK(cudaMemcpy(a.data(), y, ny * sizeof(__half), cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(b.data(), y2, ny * sizeof(__half), cudaMemcpyDeviceToHost));
                double md = 0, mr = 0;
                for (size_t i = 0; i < ny; i++) {
                    const double u = __half2float(a[i]), v = __half2float(b[i]);
                    md = std::max(md, fabs(u - v));
                    mr = std::max(mr, fabs(v));
                }
                snprintf(err, sizeof err, "%.1e", mr > 0 ? md / mr : md);
            }
            tc_plan_destroy(p2);
            std::sort(us.begin(), us.end());
            char cfg[32];
            snprintf(cfg, sizeof cfg, "%dx%d/%d/%d", info.bm, info.bn, info.nst, info.nsteps);
            const double T = S.tot > 0 ? S.tot : 1, B = S.busy > 0 ? S.busy : 1,
                         other = S.tot - S.setup - S.first - S.full - S.wg - S.epi;
            printf("%-22s %-14s %5d %3d %3d %6.1f %6.1f %6.0f %6.0f | %5.3f %5.3f %5.3f %5.3f %5.3f %5.3f %5.3f %5.3f | %7.3f | "
                   "%4.2f %4.2f %4.2f %3d | %4.0f %7s\n",
                   L.name, cfg, info.blocks, info.fit, S.sms, us[us.size() / 2],
                   S.runs ? S.span_ns / S.runs / 1e3 : 0.0, S.blocks ? S.dur / S.blocks : 0.0, S.maxdur,
                   S.setup / T, S.first / T, S.full / T, S.wg / T, S.epi / T, S.bar / T, S.sm / T, other / T,
                   S.plife > 0 ? S.pempty / S.plife : 0.0, S.res[0] / B, S.res[1] / B,
                   (S.res[2] + S.res[3]) / B, S.maxres, S.clk_ns > 0 ? S.clk_cyc / S.clk_ns * 1e3 : 0.0, err);
            if (S.bad) printf("  %d block records out of order or missing (left out)\n", S.bad);
        }
        tc_plan_destroy(pl);
        CK(cudaFree(x));
        CK(cudaFree(y));
        CK(cudaFree(y2));
    }
    CK(cudaFree(tbuf));
    tc_context_destroy(ctx);
    return failures ? 1 : 0;
}
