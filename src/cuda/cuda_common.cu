/* cuda_common.cu - CUDA error mapping, device discovery, the scratch pool,
 * pinned staging of host arrays and the execution frame (see the header). */
#include "cuda/cuda_common.h"

#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* ---------------- errors ---------------- */
tc_status tc__cu_fail(cudaError_t e, const char *what, const char *file,
                      int line) {
    (void)cudaGetLastError(); /* clear a non-sticky error for the next call */
    tc_status st = TC_ERR_BACKEND;
    if (e == cudaErrorMemoryAllocation) st = TC_ERR_OUT_OF_MEMORY;
    else if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ||
             e == cudaErrorNoKernelImageForDevice)
        st = TC_ERR_NO_DEVICE;
    const char *base = strrchr(file, '/');
    return tc__error(st, "cuda: %s failed: %s (%s) at %s:%d", what,
                     cudaGetErrorString(e), cudaGetErrorName(e),
                     base ? base + 1 : file, line);
}

/* ---------------- device discovery ---------------- */
__global__ void tc__cu_probe_kernel(int *p) {
    if (p) *p = 1;
}

static pthread_once_t tc__cu_once = PTHREAD_ONCE_INIT;
static int tc__cu_count = 0;   /* devices seen by the runtime */
static int tc__cu_usable = 0;  /* current device runs our images */
static tc__cu_device tc__cu_props;

static void tc__cu_init(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return; /* no driver, no device: count stays 0, never abort */
    }
    tc__cu_count = n;
    if (n <= 0) return;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) { (void)cudaGetLastError(); return; }
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, tc__cu_probe_kernel) != cudaSuccess) {
        (void)cudaGetLastError();
        return; /* e.g. a GPU older than the sm_90 images of this build */
    }
    cudaDeviceProp pr;
    if (cudaGetDeviceProperties(&pr, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    tc__cu_device *d = &tc__cu_props;
    d->sms = pr.multiProcessorCount;
    d->cc_major = pr.major;
    d->cc_minor = pr.minor;
    d->smem_optin = pr.sharedMemPerBlockOptin;
    d->smem_per_sm = pr.sharedMemPerMultiprocessor;
    d->regs_per_sm = pr.regsPerMultiprocessor;
    d->max_threads_sm = pr.maxThreadsPerMultiProcessor;
    d->global_mem = pr.totalGlobalMem;
    snprintf(d->name, sizeof d->name, "%s", pr.name);
    int clk = 0, mclk = 0, bus = 0, tw = 0, th = 0;
    cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev);       /* kHz */
    cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, dev); /* kHz */
    cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, dev);
    cudaDeviceGetAttribute(&tw, cudaDevAttrMaxTexture2DLinearWidth, dev);
    cudaDeviceGetAttribute(&th, cudaDevAttrMaxTexture2DLinearHeight, dev);
    (void)cudaGetLastError();
    if (clk <= 0) clk = 1755000;
    /* Hopper/Ampere: 128 FP32 lanes per SM, FMA = 2 FLOP */
    d->peak_flops32 = (double)d->sms * 128.0 * 2.0 * clk * 1e3;
    d->bandwidth = (mclk > 0 && bus > 0) ? 2.0 * mclk * 1e3 * bus / 8.0 : 3.0e12;
    d->tex2d_linear_w = tw > 0 ? tw : 65536;
    d->tex2d_linear_h = th > 0 ? th : 65536;
    tc__cu_usable = 1;
}

extern "C" int tc_cuda_device_count(void) {
    pthread_once(&tc__cu_once, tc__cu_init);
    return tc__cu_count;
}

int tc__cu_available(void) {
    pthread_once(&tc__cu_once, tc__cu_init);
    return tc__cu_usable;
}

const tc__cu_device *tc__cu_dev(void) {
    return tc__cu_available() ? &tc__cu_props : NULL;
}

cudaError_t tc__cu_max_clusters(const void *func, int threads, size_t dyn_smem, int cl, int *n) {
    *n = 0;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = (unsigned)cl;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    const tc__cu_device *d = tc__cu_dev();
    const int sms = d ? d->sms : 0;
    cfg.gridDim = dim3((unsigned)(sms > cl ? sms - sms % cl : cl));
    cfg.blockDim = dim3((unsigned)threads);
    cfg.dynamicSmemBytes = dyn_smem;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    const cudaError_t e = cudaOccupancyMaxActiveClusters(n, func, &cfg);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        *n = 0;
    }
    return e;
}

double tc__cu_estimate(double bytes, double flops, double eff) {
    const tc__cu_device *d = tc__cu_dev();
    if (!d) return 1e30;
    double tm = bytes / (0.9 * d->bandwidth);
    double tf = flops / (d->peak_flops32 * eff);
    return (tm > tf ? tm : tf) + 5e-6;
}

/* ---------------- device scratch pool ---------------- */
#define TC__CU_MAX_DEV 64
static cudaMemPool_t tc__cu_pools[TC__CU_MAX_DEV];
static pthread_mutex_t tc__cu_pool_mu = PTHREAD_MUTEX_INITIALIZER;

static tc_status tc__cu_pool(cudaMemPool_t *out) {
    int dev = 0;
    TC_CU(cudaGetDevice(&dev));
    if (dev < 0 || dev >= TC__CU_MAX_DEV)
        return tc__error(TC_ERR_BACKEND, "cuda: device %d out of range", dev);
    pthread_mutex_lock(&tc__cu_pool_mu);
    tc_status st = TC_OK;
    if (!tc__cu_pools[dev]) {
        cudaMemPoolProps pp;
        memset(&pp, 0, sizeof pp);
        pp.allocType = cudaMemAllocationTypePinned;
        pp.location.type = cudaMemLocationTypeDevice;
        pp.location.id = dev;
        cudaMemPool_t pool;
        cudaError_t e = cudaMemPoolCreate(&pool, &pp);
        if (e == cudaSuccess) {
            /* keep freed memory for the next execute */
            uint64_t keep = UINT64_MAX;
            e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
            if (e == cudaSuccess) tc__cu_pools[dev] = pool;
        }
        if (e != cudaSuccess)
            st = tc__cu_fail(e, "cudaMemPoolCreate", __FILE__, __LINE__);
    }
    *out = tc__cu_pools[dev];
    pthread_mutex_unlock(&tc__cu_pool_mu);
    return st;
}

/* The bytes a launch takes from the pool (tc__cu_counted): the solvers'
 * scratch, checked against the plan's device_workspace bound */
static thread_local int tc__cu_counting;
static thread_local size_t tc__cu_counted;

tc_status tc__cu_alloc(void **p, size_t bytes, cudaStream_t s) {
    *p = NULL;
    if (!bytes) bytes = 16;
    if (tc__cu_counting) tc__cu_counted += bytes;
    cudaMemPool_t pool;
    tc_status st = tc__cu_pool(&pool);
    if (st) return st;
    cudaError_t e = cudaMallocFromPoolAsync(p, bytes, pool, s);
    if (e != cudaSuccess) {
        *p = NULL;
        st = tc__cu_fail(e, "cudaMallocFromPoolAsync", __FILE__, __LINE__);
        if (st == TC_ERR_OUT_OF_MEMORY)
            tc__error(st, "cuda: out of device memory allocating %zu bytes", bytes);
        return st;
    }
    return TC_OK;
}

tc_status tc__cu_alloc_operand(void **p, size_t bytes, cudaStream_t s) {
    const int counting = tc__cu_counting;
    tc__cu_counting = 0;
    tc_status st = tc__cu_alloc(p, bytes, s);
    tc__cu_counting = counting;
    return st;
}

void tc__cu_free(void *p, cudaStream_t s) {
    if (p) cudaFreeAsync(p, s);
}

/* launch(a, b), counting what it takes from the pool; with
 * TILECONV_CUDA_CHECK_SCRATCH=1 (the tests) more than the plan's
 * device_workspace bound is an internal error */
static tc_status tc__cu_counted_launch(tc__cu_launch_fn launch, const tc__args *a,
                                       const tc__cu_bufs *b) {
    tc__cu_counting = 1;
    tc__cu_counted = 0;
    tc_status st = launch(a, b);
    tc__cu_counting = 0;
    if (st == TC_OK && a->dev_ws_set && tc__cu_counted > a->dev_ws) {
        const char *chk = tc__knob_get(TC__KNOB_CUDA_CHECK_SCRATCH);
        if (chk && chk[0] == '1')
            st = tc__error(TC_ERR_INTERNAL,
                           "cuda: an execute took %zu bytes of device scratch, over the %zu "
                           "its plan reports (tc_plan_device_workspace_size)",
                           tc__cu_counted, a->dev_ws);
    }
    return st;
}

/* ---------------- pointer classes ---------------- */
enum { TC__PTR_PAGEABLE = 0, TC__PTR_PINNED = 1, TC__PTR_DEVICE = 2 };

static int tc__cu_ptr_class(const void *ptr) {
    cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, ptr) != cudaSuccess) {
        (void)cudaGetLastError();
        return TC__PTR_PAGEABLE;
    }
    if (at.type == cudaMemoryTypeDevice || at.type == cudaMemoryTypeManaged)
        return TC__PTR_DEVICE;
    if (at.type == cudaMemoryTypeHost) return TC__PTR_PINNED;
    return TC__PTR_PAGEABLE;
}

int tc__cu_is_device(const void *ptr) {
    return tc__cu_ptr_class(ptr) == TC__PTR_DEVICE;
}
/* for the C core (tc_plan_conv_set_weights) */
extern "C" int tc__cu_ptr_is_device(const void *ptr) { return tc__cu_is_device(ptr); }

/* ---------------- pinned staging ---------------- */
#define TC__CU_CHUNK ((size_t)8 << 20)

typedef struct tc__cu_stage {
    void *buf[2];
    cudaEvent_t ev[2];
    struct tc__cu_stage *next;
} tc__cu_stage;

static tc__cu_stage *tc__cu_stage_free = NULL;
static pthread_mutex_t tc__cu_stage_mu = PTHREAD_MUTEX_INITIALIZER;

static tc_status tc__cu_stage_get(tc__cu_stage **out) {
    pthread_mutex_lock(&tc__cu_stage_mu);
    tc__cu_stage *st = tc__cu_stage_free;
    if (st) tc__cu_stage_free = st->next;
    pthread_mutex_unlock(&tc__cu_stage_mu);
    if (!st) {
        st = (tc__cu_stage *)calloc(1, sizeof *st);
        if (!st) return tc__error(TC_ERR_OUT_OF_MEMORY, "cuda: out of host memory");
        for (int b = 0; b < 2; b++) {
            cudaError_t e = cudaHostAlloc(&st->buf[b], TC__CU_CHUNK, cudaHostAllocDefault);
            if (e == cudaSuccess)
                e = cudaEventCreateWithFlags(&st->ev[b], cudaEventDisableTiming);
            if (e != cudaSuccess) {
                for (int c = 0; c <= b; c++) {
                    if (st->buf[c]) cudaFreeHost(st->buf[c]);
                    if (st->ev[c]) cudaEventDestroy(st->ev[c]);
                }
                free(st);
                return tc__cu_fail(e, "cudaHostAlloc (staging)", __FILE__, __LINE__);
            }
        }
    }
    *out = st;
    return TC_OK;
}

static void tc__cu_stage_put(tc__cu_stage *st) {
    cudaEventSynchronize(st->ev[0]);
    cudaEventSynchronize(st->ev[1]);
    pthread_mutex_lock(&tc__cu_stage_mu);
    st->next = tc__cu_stage_free;
    tc__cu_stage_free = st;
    pthread_mutex_unlock(&tc__cu_stage_mu);
}

tc_status tc__cu_h2d(void *dst, const void *src, size_t bytes, cudaStream_t s) {
    if (!bytes) return TC_OK;
    if (tc__cu_ptr_class(src) != TC__PTR_PAGEABLE) {
        TC_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
        return TC_OK;
    }
    tc__cu_stage *st;
    tc_status rc = tc__cu_stage_get(&st);
    if (rc) return rc;
    /* CPU copy of chunk i+1 into one pinned buffer overlaps the DMA of
     * chunk i from the other */
    size_t off = 0;
    int b = 0;
    cudaError_t e = cudaSuccess;
    while (off < bytes && e == cudaSuccess) {
        size_t n = bytes - off < TC__CU_CHUNK ? bytes - off : TC__CU_CHUNK;
        e = cudaEventSynchronize(st->ev[b]);
        if (e != cudaSuccess) break;
        memcpy(st->buf[b], (const char *)src + off, n);
        e = cudaMemcpyAsync((char *)dst + off, st->buf[b], n, cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess) e = cudaEventRecord(st->ev[b], s);
        off += n;
        b ^= 1;
    }
    tc__cu_stage_put(st);
    if (e != cudaSuccess) return tc__cu_fail(e, "host-to-device copy", __FILE__, __LINE__);
    return TC_OK;
}

tc_status tc__cu_d2h(void *dst, const void *src, size_t bytes, cudaStream_t s) {
    if (!bytes) return TC_OK;
    if (tc__cu_ptr_class(dst) != TC__PTR_PAGEABLE) {
        TC_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
        TC_CU(cudaStreamSynchronize(s));
        return TC_OK;
    }
    tc__cu_stage *st;
    tc_status rc = tc__cu_stage_get(&st);
    if (rc) return rc;
    size_t nch = (bytes + TC__CU_CHUNK - 1) / TC__CU_CHUNK;
    cudaError_t e = cudaSuccess;
    /* DMA of chunk i+1 runs while the CPU copies chunk i out */
    for (size_t i = 0; i <= nch && e == cudaSuccess; i++) {
        if (i < nch) {
            size_t off = i * TC__CU_CHUNK;
            size_t n = bytes - off < TC__CU_CHUNK ? bytes - off : TC__CU_CHUNK;
            e = cudaMemcpyAsync(st->buf[i & 1], (const char *)src + off, n,
                                cudaMemcpyDeviceToHost, s);
            if (e == cudaSuccess) e = cudaEventRecord(st->ev[i & 1], s);
            if (e != cudaSuccess) break;
        }
        if (i > 0) {
            size_t j = i - 1, off = j * TC__CU_CHUNK;
            size_t n = bytes - off < TC__CU_CHUNK ? bytes - off : TC__CU_CHUNK;
            e = cudaEventSynchronize(st->ev[j & 1]);
            if (e == cudaSuccess) memcpy((char *)dst + off, st->buf[j & 1], n);
        }
    }
    tc__cu_stage_put(st);
    if (e != cudaSuccess) return tc__cu_fail(e, "device-to-host copy", __FILE__, __LINE__);
    return TC_OK;
}

/* ---------------- masks ---------------- */
tc_status tc__cu_mask_upload(const tc__problem *p, void **dmask) {
    *dmask = NULL;
    if (!p->mask) return TC_OK;
    size_t bytes = (size_t)(p->msk[0] * p->msk[1] * p->msk[2]) * p->esize;
    TC_CU(cudaMalloc(dmask, bytes));
    cudaError_t e = cudaMemcpy(*dmask, p->mask, bytes, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        cudaFree(*dmask);
        *dmask = NULL;
        return tc__cu_fail(e, "cudaMemcpy (mask)", __FILE__, __LINE__);
    }
    return TC_OK;
}

void tc__cu_mask_free(void *dmask) {
    if (dmask) cudaFree(dmask);
}

/* ---------------- execution frame ---------------- */
static int64_t tc__cu_span(int64_t rows, int64_t cols, int64_t ld) {
    return (rows - 1) * ld + cols; /* elements touched by a row-major view */
}

/* Host arrays of a batched filter (N > 1), in chunks of whole batch items
 * on two streams: chunk c+1 is copied in (and its kernels enqueued) while
 * chunk c computes, and chunk c is copied out while chunk c+1 computes.
 * b holds the mask (b->w, b->hw) and the caller's stream; x_host / y_host
 * say which side is staged. Every launch sees a copy of the problem with N
 * = the chunk's items (the launches take all geometry from a->p). */
static tc_status tc__cu_run_chunks(const tc__args *a, const tc__cu_bufs *b, int x_host,
                                   int y_host, int64_t per, tc__cu_launch_fn launch) {
    const tc__problem *p = a->p;
    const size_t es = (size_t)p->esize;
    const int64_t xin = tc__x_count(p) / p->N, yout = tc__y_count(p) / p->N;
    const int64_t nch = (p->N + per - 1) / per;
    cudaStream_t st[2] = {NULL, NULL};
    void *dx[2] = {NULL, NULL}, *dy[2] = {NULL, NULL};
    cudaEvent_t ev = NULL;
    tc_status rc = TC_OK;
    cudaError_t e = cudaSuccess;
    tc__problem p1 = *p;
    tc__args a1 = *a;
    a1.p = &p1;
    for (int k = 0; k < 2 && e == cudaSuccess; k++)
        e = cudaStreamCreateWithFlags(&st[k], cudaStreamNonBlocking);
    /* the chunks start after the work already on the caller's stream */
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (e == cudaSuccess) e = cudaEventRecord(ev, b->s);
    for (int k = 0; k < 2 && e == cudaSuccess; k++) e = cudaStreamWaitEvent(st[k], ev, 0);
    if (e != cudaSuccess) {
        rc = tc__cu_fail(e, "cuda: chunk streams", __FILE__, __LINE__);
        goto out;
    }
    for (int k = 0; k < 2 && rc == TC_OK; k++) {
        if (x_host) rc = tc__cu_alloc(&dx[k], (size_t)(per * xin) * es, st[k]);
        if (y_host && rc == TC_OK) rc = tc__cu_alloc(&dy[k], (size_t)(per * yout) * es, st[k]);
    }
    if (rc) goto out;
    for (int64_t c = -1; c < nch && rc == TC_OK; c++) {
        /* enqueue chunk c+1: copy in (the host waits for its staging) and launch */
        const int64_t cn = c + 1;
        if (cn < nch) {
            const int k = (int)(cn & 1);
            const int64_t n0 = cn * per, cnt = p->N - n0 < per ? p->N - n0 : per;
            p1.N = cnt;
            tc__cu_bufs bc = *b;
            bc.s = st[k];
            if (x_host) {
                rc = tc__cu_h2d(dx[k], (const char *)a->x + (size_t)(n0 * xin) * es,
                                (size_t)(cnt * xin) * es, st[k]);
                bc.x = dx[k];
            } else {
                bc.x = (const char *)a->x + (size_t)(n0 * xin) * es;
            }
            bc.y = y_host ? dy[k] : (void *)((char *)a->y + (size_t)(n0 * yout) * es);
            if (rc == TC_OK) rc = tc__cu_counted_launch(launch, &a1, &bc);
        }
        /* copy chunk c out (waits for its kernels; chunk c+1 runs meanwhile) */
        if (c >= 0 && rc == TC_OK) {
            const int k = (int)(c & 1);
            const int64_t n0 = c * per, cnt = p->N - n0 < per ? p->N - n0 : per;
            if (y_host)
                rc = tc__cu_d2h((char *)a->y + (size_t)(n0 * yout) * es, dy[k],
                                (size_t)(cnt * yout) * es, st[k]);
            else if ((e = cudaStreamSynchronize(st[k])) != cudaSuccess)
                rc = tc__cu_fail(e, "kernel execution", __FILE__, __LINE__);
        }
    }
out:
    for (int k = 0; k < 2; k++) {
        if (st[k]) {
            tc__cu_free(dx[k], st[k]);
            tc__cu_free(dy[k], st[k]);
            e = cudaStreamSynchronize(st[k]);
            if (e != cudaSuccess && rc == TC_OK) rc = tc__cu_fail(e, "kernel execution", __FILE__, __LINE__);
            cudaStreamDestroy(st[k]);
        }
    }
    if (ev) cudaEventDestroy(ev);
    return rc;
}

/* Batch items per chunk of a pipelined host-array filter: about
 * TILECONV_CUDA_CHUNK_BYTES (input + output; default 32 MiB) of whole items;
 * 0 when the call is not chunked (fewer than two chunks). */
static int64_t tc__cu_chunk_items(const tc__problem *p) {
    if (p->op != TC_OP_FILTER || p->N < 2) return 0;
    double target = 32.0 * 1024 * 1024;
    const char *ev = tc__knob_get(TC__KNOB_CUDA_CHUNK_BYTES);
    if (ev && *ev) {
        char *end;
        double v = strtod(ev, &end);
        if (!*end && v >= 1) target = v;
    }
    const double item = (double)(tc__x_count(p) + tc__y_count(p)) / (double)p->N * p->esize;
    int64_t per = (int64_t)(target / item);
    if (per < 1) per = 1;
    return per < p->N ? per : 0;
}

tc_status tc__cu_run(const tc__args *a, const void *dmask, int need_dw,
                     tc__cu_launch_fn launch) {
    const tc__problem *p = a->p;
    if (!tc__cu_available())
        return tc__error(TC_ERR_NO_DEVICE, "cuda: no usable CUDA device");
    cudaStream_t s = a->stream ? (cudaStream_t)a->stream : cudaStreamPerThread;
    size_t xb, yb, wb;
    int y_in; /* output must be read too (gemm with beta != 0) */
    if (p->op == TC_OP_GEMM) {
        int64_t ar = p->trans_a ? p->k : p->m, ac = p->trans_a ? p->m : p->k;
        int64_t br = p->trans_b ? p->n : p->k, bc = p->trans_b ? p->k : p->n;
        xb = (size_t)tc__cu_span(ar, ac, p->lda) * p->esize;
        wb = (size_t)tc__cu_span(br, bc, p->ldb) * p->esize;
        yb = (size_t)tc__cu_span(p->m, p->n, p->ldc) * p->esize;
        /* beta != 0 reads C; a padded C (ldc > n) is copied in too, so
         * that copying the span back leaves the caller's padding as it was */
        y_in = p->beta != 0.0 || (p->ldc > p->n && p->m > 1);
    } else {
        xb = (size_t)tc__x_count(p) * p->esize;
        yb = (size_t)tc__y_count(p) * p->esize;
        wb = (size_t)tc__w_count(p) * p->esize;
        y_in = 0;
    }
    tc__cu_bufs b;
    memset(&b, 0, sizeof b);
    b.s = s;
    void *tx = NULL, *ty = NULL, *tw = NULL, *hw_own = NULL;
    int x_host = !tc__cu_is_device(a->x), y_host = !tc__cu_is_device(a->y);
    /* the plan's mask (p->mask) is host memory: no query */
    int w_host = a->w ? (a->w == p->mask || !tc__cu_is_device(a->w)) : 0;
    int staged = x_host || y_host;
    tc_status st = TC_OK;

    b.x = a->x;
    b.y = a->y;
    if (p->op == TC_OP_FILTER && need_dw == TC__CU_W_DEVICE) {
        if (!w_host) b.w = a->w; /* the call's device mask, read in place */
    } else if (p->op == TC_OP_FILTER) {
        /* the plan's mask (host) is the usual case; in swap mode the core
         * passes the caller's input, packed in its host workspace */
        if (w_host) {
            b.hw = a->w;
        } else {
            hw_own = malloc(wb);
            if (!hw_own) { st = tc__error(TC_ERR_OUT_OF_MEMORY, "cuda: out of host memory"); goto out; }
            cudaError_t e = cudaMemcpy(hw_own, a->w, wb, cudaMemcpyDeviceToHost);
            if (e != cudaSuccess) { st = tc__cu_fail(e, "cudaMemcpy (mask)", __FILE__, __LINE__); goto out; }
            b.hw = hw_own;
        }
        if (dmask && a->w == p->mask) b.w = dmask;
        else if (!w_host) b.w = a->w;
    } else if (a->w && !w_host) {
        b.w = a->w; /* gemm B on the device: in place */
    }
    if (!b.w && a->w && (need_dw || p->op != TC_OP_FILTER)) {
        if ((st = tc__cu_alloc(&tw, wb, s))) goto out;
        if ((st = tc__cu_h2d(tw, a->w, wb, s))) goto out;
        b.w = tw;
        staged = 1;
    }
    if (p->op == TC_OP_FILTER && (x_host || y_host)) {
        const int64_t per = tc__cu_chunk_items(p);
        if (per > 0) { /* transfers overlapped with compute */
            st = tc__cu_run_chunks(a, &b, x_host, y_host, per, launch);
            goto out;
        }
    }
    if (x_host) {
        if ((st = tc__cu_alloc(&tx, xb, s))) goto out;
        if ((st = tc__cu_h2d(tx, a->x, xb, s))) goto out;
        b.x = tx;
    }
    if (y_host) {
        if ((st = tc__cu_alloc(&ty, yb, s))) goto out;
        if (y_in && (st = tc__cu_h2d(ty, a->y, yb, s))) goto out;
        b.y = ty;
    }
    if ((st = tc__cu_counted_launch(launch, a, &b))) goto out;
    if (y_host) st = tc__cu_d2h(a->y, ty, yb, s);
out:
    tc__cu_free(tx, s);
    tc__cu_free(ty, s);
    tc__cu_free(tw, s);
    if (staged) {
        cudaError_t e = cudaStreamSynchronize(s);
        if (e != cudaSuccess && st == TC_OK)
            st = tc__cu_fail(e, "kernel execution", __FILE__, __LINE__);
    }
    free(hw_own);
    return st;
}

/* ---------------- device timing (tc_cuda_time_plan) ---------------- */
static int tc__cu_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Device time of any CUDA plan: every operand copied to the device once;
 * executes on device pointers between CUDA events. x / w / bias are host
 * arrays (w the mask of a TC_PLAN_MASK_AT_EXECUTE filter plan, else NULL for
 * filters, bias NULL for filters; for gemm x = A, w = B and C starts at
 * zero). The events are recorded on the plan's stream. */
extern "C" tc_status tc__cu_time_plan(const tc_plan *pl, const tc__problem *p, const void *x,
                                      const void *w, const void *bias, int repeat,
                                      double *median_ms, double *min_ms, void *stream) {
    if (!tc__cu_available()) return tc__error(TC_ERR_NO_DEVICE, "cuda time: no usable CUDA device");
    cudaStream_t s = stream ? (cudaStream_t)stream : cudaStreamPerThread; /* the plan's */
    const int gemm = p->op == TC_OP_GEMM, conv = p->op == TC_OP_CONV;
    const int64_t nx = gemm ? (p->trans_a ? p->k * p->lda : p->m * p->lda) : tc__x_count(p);
    /* a filter's w: the mask of a TC_PLAN_MASK_AT_EXECUTE plan, else NULL */
    const int64_t nw = gemm ? (p->trans_b ? p->n * p->ldb : p->k * p->ldb)
                            : conv || w ? tc__w_count(p) : 0;
    const int64_t ny = gemm ? p->m * p->ldc : tc__y_count(p);
    const size_t xb = (size_t)nx * p->esize, wb = (size_t)nw * p->esize,
                 yb = (size_t)ny * p->esize, bb = conv && bias ? (size_t)p->K * p->esize : 0;
    void *dx = NULL, *dy = NULL, *dw = NULL, *db = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double *ms = (double *)malloc((size_t)repeat * sizeof(double));
    tc_status st = TC_OK;
    cudaError_t e = cudaSuccess;
    if (!ms) return tc__error(TC_ERR_OUT_OF_MEMORY, "cuda time: out of host memory");
    if ((e = cudaMalloc(&dx, xb ? xb : 16)) != cudaSuccess ||
        (e = cudaMalloc(&dy, yb ? yb : 16)) != cudaSuccess ||
        (wb && (e = cudaMalloc(&dw, wb)) != cudaSuccess) ||
        (bb && (e = cudaMalloc(&db, bb)) != cudaSuccess) ||
        (e = cudaMemcpy(dx, x, xb, cudaMemcpyHostToDevice)) != cudaSuccess ||
        (wb && (e = cudaMemcpy(dw, w, wb, cudaMemcpyHostToDevice)) != cudaSuccess) ||
        (bb && (e = cudaMemcpy(db, bias, bb, cudaMemcpyHostToDevice)) != cudaSuccess) ||
        (e = cudaMemset(dy, 0, yb ? yb : 16)) != cudaSuccess ||
        (e = cudaEventCreate(&e0)) != cudaSuccess || (e = cudaEventCreate(&e1)) != cudaSuccess) {
        st = tc__cu_fail(e, "cuda time: setup", __FILE__, __LINE__);
        goto out;
    }
#define TC__CU_RUN()                                                                  \
    (gemm ? tc_execute_gemm(pl, dy, dx, dw, NULL)                                     \
          : conv ? tc_execute_conv(pl, dy, dx, dw, db, NULL)                           \
          : dw   ? tc_execute_filter_mask(pl, dy, dx, dw, NULL)                        \
                 : tc_execute_filter(pl, dy, dx, NULL))
    if ((st = TC__CU_RUN()) != TC_OK) goto out; /* warm-up */
    if ((e = cudaStreamSynchronize(s)) != cudaSuccess) {
        st = tc__cu_fail(e, "cuda time: warm-up", __FILE__, __LINE__);
        goto out;
    }
    for (int r = 0; r < repeat; r++) {
        float t = 0.f;
        if ((e = cudaEventRecord(e0, s)) != cudaSuccess) break;
        if ((st = TC__CU_RUN()) != TC_OK) goto out;
        if ((e = cudaEventRecord(e1, s)) != cudaSuccess ||
            (e = cudaEventSynchronize(e1)) != cudaSuccess ||
            (e = cudaEventElapsedTime(&t, e0, e1)) != cudaSuccess)
            break;
        ms[r] = t;
    }
#undef TC__CU_RUN
    if (e != cudaSuccess) {
        st = tc__cu_fail(e, "cuda time: events", __FILE__, __LINE__);
        goto out;
    }
    qsort(ms, (size_t)repeat, sizeof(double), tc__cu_cmp_double);
    *median_ms = repeat % 2 ? ms[repeat / 2] : 0.5 * (ms[repeat / 2 - 1] + ms[repeat / 2]);
    if (min_ms) *min_ms = ms[0];
out:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dw);
    cudaFree(db);
    free(ms);
    return st;
}
