/*
 * cuda_common.h - what the CUDA solvers share (C++/CUDA only, not installed).
 *
 * Every CUDA call goes through TC_CU(...), which turns a cudaError_t into a
 * tc_status with a message naming the call (tc__error); allocation failures
 * become TC_ERR_OUT_OF_MEMORY. The library never aborts on a CUDA error.
 *
 * Pointers. Execute accepts device pointers (cudaMalloc'd, managed, or
 * mapped) and plain host pointers. tc__cu_run() classifies each array with
 * cudaPointerGetAttributes: device arrays are used in place, with no copy,
 * and the work is only enqueued on the stream (as cuBLAS does: the call
 * returns before the kernels finish); host arrays are staged through pinned
 * buffers in chunks, and the call returns when the result is back on the
 * host. A batched filter (N > 1) on host arrays runs in chunks of whole
 * batch items (TILECONV_CUDA_CHUNK_BYTES, default 32 MiB of input + output) on
 * two streams, so the copies of one chunk overlap the kernels of the next;
 * a single image or volume is copied in, computed and copied out in turn.
 * The stream is args->stream, or the per-thread default stream.
 *
 * Indexing is 64-bit wherever an offset can pass 2^31; launches whose
 * gridDim.y or gridDim.z would pass 65535 are split (tc__cu_grid_chunks).
 */
#ifndef TC_CUDA_COMMON_H
#define TC_CUDA_COMMON_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include "core/internal.h"
}

/* ---- errors ---- */
tc_status tc__cu_fail(cudaError_t e, const char *what, const char *file,
                      int line);
#define TC_CU(call)                                                       \
    do {                                                                  \
        cudaError_t tc__e = (call);                                       \
        if (tc__e != cudaSuccess)                                         \
            return tc__cu_fail(tc__e, #call, __FILE__, __LINE__);         \
    } while (0)
/* After a launch: checks the launch error (not the kernel's completion). */
#define TC_CU_LAUNCH(name)                                                \
    do {                                                                  \
        cudaError_t tc__e = cudaGetLastError();                           \
        if (tc__e != cudaSuccess)                                         \
            return tc__cu_fail(tc__e, "launch " name, __FILE__, __LINE__); \
    } while (0)

/* ---- device ---- */
/* 1 when a device is present and can run this build's kernels (sm_90
 * images); cached after the first call. Used as every solver's available. */
int tc__cu_available(void);
typedef struct tc__cu_device {
    int sms;              /* multiprocessors */
    int cc_major, cc_minor;
    size_t smem_optin;    /* max dynamic shared memory per block */
    size_t smem_per_sm;
    int regs_per_sm;
    int max_threads_sm;
    size_t global_mem;
    double peak_flops32;  /* nominal FP32 FLOP/s */
    double bandwidth;     /* nominal DRAM bytes/s (read + write) */
    int tex2d_linear_w, tex2d_linear_h; /* pitched texture limits */
    char name[256];
} tc__cu_device;
/* Properties of the current device, NULL when none. */
const tc__cu_device *tc__cu_dev(void);
/* Clusters of cl blocks (cl x 1 x 1) of the cluster kernel func, threads
 * a block and dyn_smem bytes of dynamic shared memory each, resident at
 * once on the current device (cudaOccupancyMaxActiveClusters, asked for
 * a grid of the SMs rounded down to cl): a persistent grid's size. The
 * launch (cuda.gemm.wgmma-tf32) and the kernel report both ask here. Returns
 * cudaSuccess and *n, or the query's error (cleared) and *n = 0. */
cudaError_t tc__cu_max_clusters(const void *func, int threads, size_t dyn_smem, int cl, int *n);

/* ---- memory ---- */
/* Stream-ordered device scratch from a pool that keeps its memory (no
 * cudaMalloc per execute). */
tc_status tc__cu_alloc(void **p, size_t bytes, cudaStream_t s);
/* The same pool, for the device copy of a host-resident operand (a host
 * residual beside a device output): not counted as scratch, since
 * tc_plan_device_workspace_size bounds the scratch of device-resident
 * operands and host ones add their copies. */
tc_status tc__cu_alloc_operand(void **p, size_t bytes, cudaStream_t s);
void tc__cu_free(void *p, cudaStream_t s);
/* 1 when the kernel can dereference ptr (device, managed or mapped host). */
int tc__cu_is_device(const void *ptr);
/* Host <-> device copies of any size through chunked, double-buffered
 * pinned staging (or directly when the host side is pinned). Synchronous
 * with respect to the host for the host buffer. */
tc_status tc__cu_h2d(void *dst, const void *src, size_t bytes, cudaStream_t s);
tc_status tc__cu_d2h(void *dst, const void *src, size_t bytes, cudaStream_t s);

/* ---- execution frame ---- */
typedef struct tc__cu_bufs {
    const void *x;   /* device input (A for gemm) */
    void *y;         /* device output (C for gemm) */
    const void *w;   /* device weights / mask (B for gemm) */
    const void *hw;  /* filter: host copy of the mask (NULL for gemm) */
    cudaStream_t s;
} tc__cu_bufs;
typedef tc_status (*tc__cu_launch_fn)(const tc__args *a, const tc__cu_bufs *b);

/* Runs `launch` on device views of a's arrays. dmask: the plan's device copy
 * of p->mask (filter) or NULL; used when a->w == p->mask, else the mask is
 * staged per call. need_dw = 0: the launch never reads b->w (it takes the
 * weights from b->hw or from its plan), so a host mask is not staged and a
 * call on device arrays enqueues its kernels and returns without waiting.
 * need_dw = TC__CU_W_DEVICE (a filter's per-call mask,
 * TC_PLAN_MASK_AT_EXECUTE): the launch reads the mask from b->w only and
 * never b->hw (NULL): a device mask is used in place (no host copy, no
 * wait), a host one staged through the stream.
 * Host arrays are staged in and the output staged back. */
#define TC__CU_W_DEVICE 2
tc_status tc__cu_run(const tc__args *a, const void *dmask, int need_dw,
                     tc__cu_launch_fn launch);
/* Copies a host mask of the problem to a new device buffer (plan time). */
tc_status tc__cu_mask_upload(const tc__problem *p, void **dmask);
void tc__cu_mask_free(void *dmask);

/* ---- launches ---- */
/* Runs the statements once per grid slice (gy0, gny, gz0, gnz) with
 * gny, gnz <= 65535; the kernel adds gy0/gz0 to blockIdx.y/z. */
#define TC__CU_GRID_MAX 65535
#define TC__CU_FOR_GRID(NY, NZ, ...)                                      \
    for (int64_t gy0 = 0; gy0 < (NY); gy0 += TC__CU_GRID_MAX)              \
        for (int64_t gz0 = 0; gz0 < (NZ); gz0 += TC__CU_GRID_MAX) {        \
            unsigned gny = (unsigned)((NY)-gy0 < TC__CU_GRID_MAX ? (NY)-gy0 \
                                                       : TC__CU_GRID_MAX); \
            [[maybe_unused]] unsigned gnz = (unsigned)((NZ)-gz0 < TC__CU_GRID_MAX ? (NZ)-gz0 \
                                                       : TC__CU_GRID_MAX); \
            __VA_ARGS__                                                    \
        }
static inline int64_t tc__cu_div_up(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}
/* The largest out * stride + mask * dilation + |pad_lo| + in over the
 * axes: a bound on the window origins and tap offsets a kernel with 32-bit
 * (int) indexing forms, and on each of these fields. INT64_MAX where it
 * overflows (a hostile stride, dilation or padding). */
static inline int64_t tc__cu_axis_reach(const tc__problem *p) {
    int64_t r = 0;
    for (int i = 0; i < TC__NSP; i++) {
        const int64_t pad = p->pad_lo[i] < 0 ? -p->pad_lo[i] : p->pad_lo[i];
        int64_t a, b, v;
        if (!tc__mul_ok(p->out[i], p->stride[i], &a) || !tc__mul_ok(p->msk[i], p->dil[i], &b) ||
            !tc__add_ok(a, b, &v) || !tc__add_ok(v, pad, &v) || !tc__add_ok(v, p->in[i], &v))
            return INT64_MAX;
        if (v > r) r = v;
    }
    return r;
}

/* ---- the implicit GEMM for other solvers (src/cuda/cuda_conv.cu) ---- */
/* 1 when the fast implicit-GEMM kernels take problem p (32-bit offsets,
 * taps, grid). */
int tc__cu_conv_igemm_fast(const tc__problem *p);
/* Runs the fast implicit GEMM (fp32 FFMA, or TF32 mma.sync when tf32) on a
 * conv problem another solver built, on device arrays x, w, y and stream s;
 * no bias (p->has_bias must be 0). The Winograd solvers run their batched
 * GEMMs through it as one grouped 1x1 conv. TC_ERR_UNSUPPORTED where
 * tc__cu_conv_igemm_fast(p) is 0. */
tc_status tc__cu_conv_igemm(const tc__problem *p, const void *x, const void *w, void *y,
                            cudaStream_t s, int tf32);
/* The most device scratch tc__cu_conv_igemm (and the igemm solvers'
 * execute) takes from the pool for problem p: the solvers'
 * device_workspace bound. */
size_t tc__cu_conv_igemm_scratch(const tc__problem *p, int tf32);
/* A conv layer's bias on the device for a->bias: *db the device pointer
 * (NULL without a bias), used in place when a->bias is device memory, else
 * staged on stream s into *own, which the caller frees with tc__cu_free. */
tc_status tc__cu_conv_bias(const tc__args *a, cudaStream_t s, const float **db, void **own);

/* 1 for a float32 conv layer (the CUDA conv solvers' first test), else 0
 * with the reason in why (cuda_conv.cu) */
int tc__cu_conv_fp32_layer(const tc__problem *p, char *why, size_t n);

/* cuFFT result codes as text (cuda_fft.cu), and the check that returns a
 * library status for a failed cuFFT call (files that include cufft.h) */
const char *tc__cu_cufft_str(int r);
#define TC__CU_FFT(who, call)                                                              \
    do {                                                                                   \
        const cufftResult tc__fr = (call);                                                 \
        if (tc__fr != CUFFT_SUCCESS)                                                       \
            return tc__error(tc__fr == CUFFT_ALLOC_FAILED ? TC_ERR_OUT_OF_MEMORY             \
                                                          : TC_ERR_BACKEND,                \
                             "%s: %s failed: %s (%d)", who, #call,                         \
                             tc__cu_cufft_str((int)tc__fr), (int)tc__fr);                  \
    } while (0)

/* ---- boundary on the device: tc__boundary_index ---- */
/* In I (int64_t, or int where every index fits). NEAR: an index within
 * one period of the edge (a halo's reach) maps without a division, the
 * remainder only beyond it (a 64-bit remainder is a long subroutine: with
 * it on every edge element the half-precision 3D plane ring ran reflect,
 * mirror and wrap 2.7x slower than constant). Without NEAR every index
 * outside takes the remainder: the kernels tuned with that form keep it
 * (the near form changed their register allocation). Host and device:
 * tests/test_cu_bidx.cu checks both forms against tc__boundary_index. */
template <typename I, bool NEAR = true>
__host__ __device__ __forceinline__ I tc__cu_bidx_t(I i, I n, int mode) {
    if ((unsigned long long)i < (unsigned long long)n) return i;
    switch (mode) {
    case TC_MODE_CONSTANT: return -1;
    case TC_MODE_NEAREST: return i < 0 ? 0 : n - 1;
    case TC_MODE_WRAP: {
        if (NEAR && i < 0 && i >= -n) return i + n;
        if (NEAR && i >= n && i < 2 * n) return i - n;
        I m = i % n;
        return m < 0 ? m + n : m;
    }
    case TC_MODE_REFLECT: {
        if (NEAR && i < 0 && i >= -n) return -1 - i;
        if (NEAR && i >= n && i < 2 * n) return 2 * n - 1 - i;
        I m = i % (2 * n);
        if (m < 0) m += 2 * n;
        return m < n ? m : 2 * n - 1 - m;
    }
    case TC_MODE_MIRROR: {
        if (n == 1) return 0;
        if (NEAR && i < 0 && i > -n) return -i;
        if (NEAR && i >= n && i < 2 * n - 1) return 2 * n - 2 - i;
        I m = i % (2 * n - 2);
        if (m < 0) m += 2 * n - 2;
        return m < n ? m : 2 * n - 2 - m;
    }
    }
    return -1;
}
/* the remainder form (cuda.filter.direct, separable, the conv gathers...) */
__device__ __forceinline__ int64_t tc__cu_bidx(int64_t i, int64_t n, int mode) {
    return tc__cu_bidx_t<int64_t, false>(i, n, mode);
}

/* ---- cost model ---- */
/* Seconds for `bytes` of DRAM traffic and `flops` at `eff` of FP32 peak,
 * plus a launch overhead; huge without a device. */
double tc__cu_estimate(double bytes, double flops, double eff);

/* cuda.gemm.simt's launch (strict FP32) on the call's device buffers: the
 * fallback of cuda.gemm.wgmma-tf32 for operands its tensor copies cannot read */
tc_status tc__cu_sgemm_launch(const tc__args *a, const tc__cu_bufs *b);

/* ---- resource report (tc_cuda_kernel_report) ---- */
typedef struct tc__cu_report tc__cu_report;
void tc__cu_report_kernel(tc__cu_report *r, const char *name,
                          const void *func, int threads, size_t dyn_smem);
/* clusters of cl blocks of a cluster kernel resident at once */
void tc__cu_report_clusters(tc__cu_report *r, const char *name, const void *func, int threads,
                            size_t dyn_smem, int cl);
/* One per solver file: the `report` (tc__solver) of its solvers. */
void tc__cu_report_seed1d(tc__cu_report *r);
void tc__cu_report_seed2d(tc__cu_report *r);
void tc__cu_report_seed3d(tc__cu_report *r);
void tc__cu_report_seedgemm(tc__cu_report *r);
void tc__cu_report_direct(tc__cu_report *r);
void tc__cu_report_separable(tc__cu_report *r);
void tc__cu_report_fft(tc__cu_report *r);
void tc__cu_report_conv_fft(tc__cu_report *r);
void tc__cu_report_gemm(tc__cu_report *r);
void tc__cu_report_gemm_tf32(tc__cu_report *r);

/* Declares a solver with C linkage (C++ const objects are internal). */
#define TC__CU_SOLVER(sym) extern "C" const tc__solver sym; const tc__solver sym

#endif
