/* cuda_report.cu - tc_cuda_kernel_report: registers, shared memory, spills
 * and occupancy of every kernel of the CUDA backend, from
 * cudaFuncGetAttributes and cudaOccupancyMaxActiveBlocksPerMultiprocessor.
 * The kernels come from the registry (src/core/registry.c): each CUDA
 * solver's `report` function lists its own. */
#include "cuda/cuda_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct tc__cu_report {
    char *buf;
    size_t size, len;
    tc_status st;
};

static void rprintf(tc__cu_report *r, const char *fmt, ...) {
    if (r->len + 1 >= r->size) { r->len = r->size; return; }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->buf + r->len, r->size - r->len, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    r->len += (size_t)n < r->size - r->len ? (size_t)n : r->size - r->len;
}

void tc__cu_report_kernel(tc__cu_report *r, const char *name, const void *func, int threads,
                          size_t dyn_smem) {
    cudaFuncAttributes fa;
    cudaError_t e = cudaFuncGetAttributes(&fa, func);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        rprintf(r, "%-40s  (cudaFuncGetAttributes: %s)\n", name, cudaGetErrorString(e));
        return;
    }
    int blocks = 0;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, func, threads, dyn_smem);
    if (e != cudaSuccess) { (void)cudaGetLastError(); blocks = 0; }
    const tc__cu_device *d = tc__cu_dev();
    double occ = d && d->max_threads_sm ? 100.0 * blocks * threads / d->max_threads_sm : 0;
    rprintf(r, "%-40s %5d %4d %7zu %7zu %6zu %7d %6d %5.0f%%\n", name, threads, fa.numRegs,
            fa.sharedSizeBytes, dyn_smem, fa.localSizeBytes, fa.maxThreadsPerBlock, blocks, occ);
}

/* clusters of cl blocks resident at once (cudaOccupancyMaxActiveClusters):
 * a persistent grid's size, and the SMs that a cluster shape leaves idle
 * (GPCs whose SM count the cluster does not divide) */
void tc__cu_report_clusters(tc__cu_report *r, const char *name, const void *func, int threads,
                            size_t dyn_smem, int cl) {
    const tc__cu_device *d = tc__cu_dev();
    const int sms = d ? d->sms : 0;
    int nc = 0;
    const cudaError_t e = tc__cu_max_clusters(func, threads, dyn_smem, cl, &nc);
    if (e != cudaSuccess) {
        rprintf(r, "  %-38s clusters of %d: (cudaOccupancyMaxActiveClusters: %s)\n", name, cl,
                cudaGetErrorString(e));
        return;
    }
    rprintf(r, "  %-38s clusters of %d resident: %d (%d blocks on %d SMs)\n", name, cl, nc, nc * cl, sms);
}

extern "C" TC_API tc_status tc_cuda_kernel_report(char *buf, size_t size) {
    if (!buf || !size)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "kernel report: buf is NULL or size is 0");
    buf[0] = 0;
    const tc__cu_device *d = tc__cu_dev();
    if (!d)
        return tc__error(TC_ERR_NO_DEVICE,
                         "kernel report: no usable CUDA device (none found, or this "
                         "build's sm_90 kernels do not run on it)");
    tc__cu_report r = {buf, size, 0, TC_OK};
    rprintf(&r, "device: %s, sm_%d%d, %d SMs, %.1f TFLOP/s fp32 nominal, %.0f GB/s nominal, "
                "%zu KiB shared/SM, %zu KiB opt-in/block\n",
            d->name, d->cc_major, d->cc_minor, d->sms, d->peak_flops32 / 1e12, d->bandwidth / 1e9,
            d->smem_per_sm / 1024, d->smem_optin / 1024);
    rprintf(&r, "%-40s %5s %4s %7s %7s %6s %7s %6s %6s\n", "kernel", "thr", "regs", "static",
            "dynamic", "local", "maxthr", "blk/SM", "occ");
    /* every registered solver's kernels, in registry order; a function
     * shared by several solvers once */
    for (int i = 0; tc__solvers[i]; i++) {
        void (*rep)(tc__cu_report *) = tc__solvers[i]->report;
        if (!rep) continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = tc__solvers[j]->report == rep;
        if (!seen) rep(&r);
    }
    if (r.len >= size)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "kernel report: truncated at %zu bytes", size);
    return TC_OK;
}
