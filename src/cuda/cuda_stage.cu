/* cuda_stage.cu - a staged plan (src/core/stage.h) run on device arrays:
 * the conversions and the epilogue pass as kernels on the plan's stream,
 * around the solver's own execute on the staged problem pl->sp.
 *
 * The passes mirror the host ones of src/core/planner.c (tc__execute) and
 * src/core/stage.c:
 *   filter  x (dtype) -> float32 buffer; the solver; buffer -> y (dtype);
 *   conv    x (dtype, layout) -> sp's dtype and layout; weights and bias to
 *           float32, channels-last weights (K x mask x C/G) to K x C/G x
 *           mask for a solver without TC__CAP_WEIGHTS_CL, in one pass
 *           (plan-held weights: pl->w_staged / pl->bias_staged, copied);
 *           the solver into a buffer (or into y itself when only the
 *           epilogue is staged and the residual is not y); then one output
 *           pass y[layout, dtype] = act(acc + residual);
 *   gemm    A, B (and C when beta != 0) -> float32, m x n blocks honouring
 *           lda / ldb / ldc; the solver; C's m x n block back.
 * Every buffer comes from the stream-ordered pool (tc__cu_alloc) and is
 * freed on the stream after the work that reads it; nothing waits for the
 * stream. y must be device memory. Other operands in host memory (weights,
 * bias, residual, B) are copied in first (tc__cu_h2d, which waits for its
 * copy as the solvers' own staging of host operands does).
 *
 * Kernels: element-wise conversion (with the epilogue, for the in-place and
 * same-layout output passes), the m x n block of a row-strided matrix, and
 * the N x C x S layout change: 32 x 32 tiles through shared memory, read
 * along the source's contiguous axis and written along the destination's,
 * both coalesced, with the conversion and the epilogue on the way out.
 * float16 / bfloat16 round to nearest even (cuda_fp16.h / cuda_bf16.h),
 * NaN stays NaN; the activations are src/core/act.h's tc__act_f (float
 * computation; double where a float64 array takes part). Offsets are
 * 64-bit throughout. */
#include "core/act.h"
#include "cuda/cuda_common.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

extern "C" {
#include "core/plan.h"
}

namespace {

/* ---------------- element access ---------------- */
template <typename T>
__device__ __forceinline__ T st_load(const void *p, int64_t i, int dt) {
    switch (dt) {
    case TC_FLOAT32: return (T)((const float *)p)[i];
    case TC_FLOAT64: return (T)((const double *)p)[i];
    case TC_FLOAT16: return (T)__half2float(((const __half *)p)[i]);
    default: return (T)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
    }
}
/* half types round through float, as tc__store_d */
template <typename T>
__device__ __forceinline__ void st_store(void *p, int64_t i, int dt, T v) {
    switch (dt) {
    case TC_FLOAT32: ((float *)p)[i] = (float)v; break;
    case TC_FLOAT64: ((double *)p)[i] = (double)v; break;
    case TC_FLOAT16: ((__half *)p)[i] = __float2half_rn((float)v); break;
    default: ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn((float)v); break;
    }
}

/* the epilogue's activations: tc__act_f / tc__act_d (src/core/act.h) */
__device__ __forceinline__ float st_act(int a, float v) {
    return tc__act_f((tc_activation)a, v);
}
__device__ __forceinline__ double st_act(int a, double v) {
    return tc__act_d((tc_activation)a, v);
}

/* ---------------- kernels ---------------- */
/* dst[i] = act(src[i] + res[i]) for i < n (res: dst's dtype, may be NULL;
 * act 0: none). dst may be src or res (each element is read and written by
 * one thread). */
template <typename T>
__global__ void k_stage_pointwise(void *dst, int dd, const void *src, int sd, const void *res,
                                  int act, int64_t n) {
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        T v = st_load<T>(src, i, sd);
        if (res) v += st_load<T>(res, i, dd);
        if (act) v = st_act(act, v);
        st_store<T>(dst, i, dd, v);
    }
}

/* The rows x cols block of a row-major matrix with row stride ld (both
 * sides): the elements between the rows are neither read nor written. */
template <typename T>
__global__ void k_stage_matrix(void *dst, int dd, const void *src, int sd, int64_t rows,
                               int64_t cols, int64_t ld) {
    const int64_t n = rows * cols, step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const int64_t r = i / cols, c = i - r * cols, o = r * ld + c;
        st_store<T>(dst, o, dd, st_load<T>(src, o, sd));
    }
}

enum { ST_TILE = 32, ST_ROWS = 8 };

/* Per batch item n: src is an A x B row-major matrix (contiguous along B),
 * dst the B x A transpose. Block (32, 8) moves one 32 x 32 tile: reads 32
 * consecutive B-elements per row, writes 32 consecutive A-elements per row.
 * On the way out: + res (dst's dtype and layout, read at the destination
 * offset by the thread that writes it, so res may be dst), then act.
 * Tiles: x along B, y (+ gy0) along A, z (+ gz0) the batch item. */
template <typename T>
__global__ void __launch_bounds__(ST_TILE *ST_ROWS)
    k_stage_transpose(void *dst, int dd, const void *src, int sd, const void *res, int act,
                      int64_t A, int64_t B, int64_t gy0, int64_t gz0) {
    __shared__ T tile[ST_TILE][ST_TILE + 1];
    const int64_t n = (int64_t)blockIdx.z + gz0;
    const int64_t a0 = ((int64_t)blockIdx.y + gy0) * ST_TILE, b0 = (int64_t)blockIdx.x * ST_TILE;
    const int64_t base = n * A * B;
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int r = ty; r < ST_TILE; r += ST_ROWS) {
        const int64_t a = a0 + r, b = b0 + tx;
        if (a < A && b < B) tile[r][tx] = st_load<T>(src, base + a * B + b, sd);
    }
    __syncthreads();
    for (int r = ty; r < ST_TILE; r += ST_ROWS) {
        const int64_t b = b0 + r, a = a0 + tx;
        if (a < A && b < B) {
            const int64_t o = base + b * A + a;
            T v = tile[tx][r];
            if (res) v += st_load<T>(res, o, dd);
            if (act) v = st_act(act, v);
            st_store<T>(dst, o, dd, v);
        }
    }
}

/* ---------------- launches ---------------- */
unsigned st_blocks(int64_t n) {
    const int64_t b = tc__cu_div_up(n, 256);
    return (unsigned)(b < 262144 ? (b > 0 ? b : 1) : 262144);
}

/* dst = act(src + res), element-wise over n (see k_stage_pointwise) */
tc_status st_pointwise(void *dst, tc_dtype dd, const void *src, tc_dtype sd, const void *res,
                       tc_activation act, int64_t n, cudaStream_t s) {
    if (n <= 0) return TC_OK;
    if (dd == sd && !res && act == TC_ACT_NONE) {
        if (dst != src)
            TC_CU(cudaMemcpyAsync(dst, src, (size_t)n * tc_dtype_size(dd),
                                  cudaMemcpyDeviceToDevice, s));
        return TC_OK;
    }
    if (dd == TC_FLOAT64 || sd == TC_FLOAT64)
        k_stage_pointwise<double><<<st_blocks(n), 256, 0, s>>>(dst, (int)dd, src, (int)sd, res,
                                                               (int)act, n);
    else
        k_stage_pointwise<float><<<st_blocks(n), 256, 0, s>>>(dst, (int)dd, src, (int)sd, res,
                                                              (int)act, n);
    TC_CU_LAUNCH("k_stage_pointwise");
    return TC_OK;
}

tc_status st_matrix(void *dst, tc_dtype dd, const void *src, tc_dtype sd, int64_t rows,
                    int64_t cols, int64_t ld, cudaStream_t s) {
    if (rows <= 0 || cols <= 0) return TC_OK;
    const int64_t n = rows * cols;
    if (dd == TC_FLOAT64 || sd == TC_FLOAT64)
        k_stage_matrix<double><<<st_blocks(n), 256, 0, s>>>(dst, (int)dd, src, (int)sd, rows,
                                                            cols, ld);
    else
        k_stage_matrix<float><<<st_blocks(n), 256, 0, s>>>(dst, (int)dd, src, (int)sd, rows,
                                                           cols, ld);
    TC_CU_LAUNCH("k_stage_matrix");
    return TC_OK;
}

/* An N x C x S tensor (dtype sd, layout sl) to dtype dd, layout dl, with
 * the epilogue + res (dst's dtype and layout; may be dst), act on the way
 * (tc__convert_tensor / tc__stage_output of src/core/stage.c). */
tc_status st_tensor(void *dst, tc_dtype dd, tc_layout dl, const void *src, tc_dtype sd,
                    tc_layout sl, const void *res, tc_activation act, int64_t N, int64_t C,
                    int64_t S, cudaStream_t s) {
    if (N <= 0 || C <= 0 || S <= 0) return TC_OK;
    if (dl == sl || C == 1 || S == 1) return st_pointwise(dst, dd, src, sd, res, act, N * C * S, s);
    /* source rows: channels-last stores S rows of C, channels-first C of S */
    const int64_t A = sl == TC_LAYOUT_CHANNELS_LAST ? S : C;
    const int64_t B = sl == TC_LAYOUT_CHANNELS_LAST ? C : S;
    const int64_t gx = tc__cu_div_up(B, ST_TILE), gyn = tc__cu_div_up(A, ST_TILE);
    if (gx > INT32_MAX)
        return tc__error(TC_ERR_UNSUPPORTED,
                         "execute: a staged layout change of %lld x %lld elements an item "
                         "passes the grid", (long long)A, (long long)B);
    const int wide = dd == TC_FLOAT64 || sd == TC_FLOAT64;
    const dim3 blk(ST_TILE, ST_ROWS);
    TC__CU_FOR_GRID(gyn, N, {
        const dim3 grid((unsigned)gx, gny, gnz);
        if (wide)
            k_stage_transpose<double><<<grid, blk, 0, s>>>(dst, (int)dd, src, (int)sd, res,
                                                           (int)act, A, B, gy0, gz0);
        else
            k_stage_transpose<float><<<grid, blk, 0, s>>>(dst, (int)dd, src, (int)sd, res,
                                                          (int)act, A, B, gy0, gz0);
        TC_CU_LAUNCH("k_stage_transpose");
    })
    return TC_OK;
}

/* ---------------- buffers ---------------- */
int64_t st_spatial(const int64_t *a) { return a[0] * a[1] * a[2]; }

/* The pool buffers of one call, freed on the stream at its end. */
struct st_frame {
    cudaStream_t s;
    void *buf[12];
    int n;
};
tc_status st_alloc(st_frame *f, void **out, int64_t elems, size_t esize) {
    *out = NULL;
    if (f->n >= (int)(sizeof f->buf / sizeof f->buf[0]))
        return tc__error(TC_ERR_INTERNAL, "execute: staged call needs more device buffers");
    tc_status st = tc__cu_alloc(out, (size_t)elems * esize, f->s);
    if (st == TC_OK) f->buf[f->n++] = *out;
    return st;
}
/* ptr as device memory: itself, or a pool copy of its bytes */
tc_status st_device_view(st_frame *f, const void *ptr, int64_t elems, size_t esize,
                         const void **out) {
    *out = ptr;
    if (!ptr || tc__cu_is_device(ptr)) return TC_OK;
    void *d;
    tc_status st = st_alloc(f, &d, elems, esize);
    if (st == TC_OK) st = tc__cu_h2d(d, ptr, (size_t)elems * esize, f->s);
    *out = d;
    return st;
}
/* A dense operand of n elements of dtype sd (host: the plan's copy already
 * in dd when pre is non-NULL) as a new device buffer of dtype dd. */
tc_status st_operand(st_frame *f, const void *src, tc_dtype sd, const void *pre, tc_dtype dd,
                     int64_t n, const void **out) {
    void *d;
    *out = NULL;
    tc_status st = st_alloc(f, &d, n, tc_dtype_size(dd));
    if (st) return st;
    if (pre) {
        st = tc__cu_h2d(d, pre, (size_t)n * tc_dtype_size(dd), f->s);
    } else {
        const void *sv;
        st = st_device_view(f, src, n, tc_dtype_size(sd), &sv);
        if (st == TC_OK) st = st_pointwise(d, dd, sv, sd, NULL, TC_ACT_NONE, n, f->s);
    }
    *out = d;
    return st;
}

} // namespace

/* Device bytes the staged call takes from the pool for device-resident
 * operands (host ones add their copies), beside the solver's own: added to
 * the plan's tc_plan_device_workspace_size (src/core/planner.c). */
extern "C" size_t tc__cu_stage_device_bytes(const tc_plan *pl) {
    if (!pl->stage) return 0;
    /* load the staging kernels now, at plan time: with lazy module loading
     * the first launch of a kernel loads its module, which can wait for the
     * device, and an execute on device arrays must only enqueue */
    static int loaded;
    if (!__atomic_load_n(&loaded, __ATOMIC_ACQUIRE)) {
        cudaFuncAttributes fa;
        (void)cudaFuncGetAttributes(&fa, (const void *)k_stage_pointwise<float>);
        (void)cudaFuncGetAttributes(&fa, (const void *)k_stage_pointwise<double>);
        (void)cudaFuncGetAttributes(&fa, (const void *)k_stage_matrix<float>);
        (void)cudaFuncGetAttributes(&fa, (const void *)k_stage_matrix<double>);
        (void)cudaFuncGetAttributes(&fa, (const void *)k_stage_transpose<float>);
        (void)cudaFuncGetAttributes(&fa, (const void *)k_stage_transpose<double>);
        (void)cudaGetLastError();
        __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
    }
    const tc__stage_counts c = tc__stage_buffers(&pl->p, pl->stage);
    return (size_t)(c.x + c.y + c.res + c.w) * pl->sp.esize;
}

extern "C" tc_status tc__cu_execute_staged(const tc_plan *pl, void *y, const void *x,
                                           const void *w, const void *bias,
                                           const void *residual, const void *wpack) {
    const tc__problem *p = &pl->p, *sp = &pl->sp;
    const tc__solver *sv = pl->solver;
    if (!tc__cu_available())
        return tc__error(TC_ERR_NO_DEVICE, "execute: %s: no usable CUDA device", sv->name);
    if (!tc__cu_is_device(y))
        return tc__error(TC_ERR_UNSUPPORTED,
                         "execute: %s runs with %s: on device arrays the output must be device "
                         "memory too (pass all arrays as device memory, or all as host memory)",
                         sv->name, pl->staging);
    const int dt = (pl->stage & TC__STAGE_DTYPE) != 0;
    const int relay = (pl->stage & (TC__STAGE_DTYPE | TC__STAGE_LAYOUT)) != 0;
    const int epi = (pl->stage & TC__STAGE_EPILOGUE) != 0;
    const int wl = (pl->stage & TC__STAGE_WLAYOUT) != 0;
    const size_t es = p->esize, fs = sp->esize;
    st_frame f;
    memset(&f, 0, sizeof f);
    f.s = pl->stream ? (cudaStream_t)pl->stream : cudaStreamPerThread;
    const void *xs = x, *ws_w = w, *bs = bias, *res = residual, *res_out = NULL;
    void *ys = y, *hws = NULL;
    tc_status st = TC_OK;

    if (p->op == TC_OP_FILTER) {
        const tc__filter_layout *L = &pl->lay;
        if (L->swap) {
            st = tc__error(TC_ERR_UNSUPPORTED,
                           "execute: %s runs with %s, and this valid filter has the mask larger "
                           "than the input (operands swapped, packed on the host): pass host "
                           "arrays", sv->name, pl->staging);
            goto out;
        }
        if (!L->in_dense || !L->out_dense) {
            st = tc__error(TC_ERR_UNSUPPORTED,
                           "execute: %s runs with %s, and the %s array has strides: the core "
                           "packs strided arrays on the host; pass dense device arrays or host "
                           "arrays", sv->name, pl->staging, !L->in_dense ? "input" : "output");
            goto out;
        }
        ws_w = sp->mask; /* the plan's float32 mask (p->mask_f32) */
        if (dt) {
            if ((st = st_operand(&f, x, p->dtype, NULL, sp->dtype, tc__x_count(p), &xs))) goto out;
            if ((st = st_alloc(&f, &ys, tc__y_count(p), fs))) goto out;
        }
    } else if (p->op == TC_OP_CONV) {
        const int64_t Sin = st_spatial(p->in), Sout = st_spatial(p->out);
        const int64_t nx = tc__x_count(p), ny = tc__y_count(p), nw = tc__w_count(p);
        if (residual && (epi || relay)) {
            if ((st = st_device_view(&f, residual, ny, es, &res_out))) goto out;
        }
        if (relay) {
            const void *xd;
            void *xc;
            if ((st = st_device_view(&f, x, nx, es, &xd))) goto out;
            if ((st = st_alloc(&f, &xc, nx, fs))) goto out;
            if ((st = st_tensor(xc, sp->dtype, sp->layout, xd, p->dtype, p->layout, NULL,
                                TC_ACT_NONE, p->N, p->C, Sin, f.s)))
                goto out;
            xs = xc;
            if ((st = st_alloc(&f, &ys, ny, fs))) goto out;
        } else if (epi && residual == y) {
            /* the output pass reads the residual from y: the solver writes
             * its output to a buffer */
            if ((st = st_alloc(&f, &ys, ny, fs))) goto out;
        }
        if (epi) {
            res = NULL;
        } else if (residual && relay) {
            /* a solver with the epilogue but not the dtype / layout: its
             * residual staged like x */
            void *rc;
            if ((st = st_alloc(&f, &rc, ny, fs))) goto out;
            if ((st = st_tensor(rc, sp->dtype, sp->layout, res_out, p->dtype, p->layout, NULL,
                                TC_ACT_NONE, p->N, p->K, Sout, f.s)))
                goto out;
            res = rc;
            res_out = NULL;
        }
        const int own_w = w == pl->w_copy; /* the plan's (host) weights */
        if (own_w && pl->w_dev) {
            /* held on the device already, in the solver's dtype */
            ws_w = pl->w_dev;
            bs = pl->bias_dev;
        } else if (own_w && (dt || wl)) {
            /* staged on the host by tc_plan_conv_set_weights: copied */
            if ((st = st_operand(&f, w, p->dtype, pl->w_staged, sp->dtype, nw, &ws_w)))
                goto out;
            if (dt && bias && (st = st_operand(&f, bias, p->dtype, pl->bias_staged, sp->dtype,
                                               p->K, &bs)))
                goto out;
        } else if (dt || wl) {
            /* the weights in sp's dtype and weight layout: K x mask x C/G is
             * an N = K, C = C/G, S = mask channels-last tensor */
            const void *wv;
            void *wc;
            if ((st = st_device_view(&f, w, nw, es, &wv))) goto out;
            if ((st = st_alloc(&f, &wc, nw, fs))) goto out;
            if ((st = st_tensor(wc, sp->dtype, sp->wlayout, wv, p->dtype, p->wlayout, NULL,
                                TC_ACT_NONE, p->K, p->C / p->G, st_spatial(p->msk), f.s)))
                goto out;
            ws_w = wc;
            if (dt && bias &&
                (st = st_operand(&f, bias, p->dtype, NULL, sp->dtype, p->K, &bs)))
                goto out;
        }
        /* a CUDA solver's packed weights: the plan's, held on the device
         * (wpack); with the caller's weights the solver packs them itself */
    } else if (dt) { /* gemm */
        const int64_t ar = p->trans_a ? p->k : p->m, ac = p->trans_a ? p->m : p->k;
        const int64_t br = p->trans_b ? p->n : p->k, bc = p->trans_b ? p->k : p->n;
        const void *ad, *bd;
        void *a32, *b32;
        if ((st = st_device_view(&f, x, tc__gemm_a_span(p), es, &ad))) goto out;
        if ((st = st_device_view(&f, w, tc__gemm_b_span(p), es, &bd))) goto out;
        if ((st = st_alloc(&f, &a32, tc__gemm_a_span(p), fs))) goto out;
        if ((st = st_alloc(&f, &b32, tc__gemm_b_span(p), fs))) goto out;
        if ((st = st_alloc(&f, &ys, tc__span(p->m, p->n, p->ldc), fs))) goto out;
        if ((st = st_matrix(a32, sp->dtype, ad, p->dtype, ar, ac, p->lda, f.s))) goto out;
        if ((st = st_matrix(b32, sp->dtype, bd, p->dtype, br, bc, p->ldb, f.s))) goto out;
        if (p->beta != 0.0 &&
            (st = st_matrix(ys, sp->dtype, y, p->dtype, p->m, p->n, p->ldc, f.s)))
            goto out;
        xs = a32;
        ws_w = b32;
    }

    {
        if (pl->solver_ws) {
            hws = tc__alloc(pl->solver_ws);
            if (!hws) {
                st = tc__error(TC_ERR_OUT_OF_MEMORY,
                               "execute: cannot allocate %zu bytes of workspace", pl->solver_ws);
                goto out;
            }
        }
        tc__args a;
        memset(&a, 0, sizeof a);
        a.p = sp;
        a.state = pl->state;
        a.y = ys;
        a.x = xs;
        a.w = ws_w;
        a.bias = bs;
        a.residual = res;
        a.wpack = wpack;
        a.ws = hws;
        a.threads = pl->env.threads;
        a.stream = pl->stream;
        a.dev_ws = pl->dev_ws;
        a.dev_ws_set = pl->dev_ws_set;
        if ((st = sv->execute(&a))) goto out;
    }

    if (p->op == TC_OP_FILTER && dt) {
        st = st_pointwise(y, p->dtype, ys, sp->dtype, NULL, TC_ACT_NONE, tc__y_count(p), f.s);
    } else if (p->op == TC_OP_CONV && (relay || epi)) {
        st = st_tensor(y, p->dtype, p->layout, ys, sp->dtype, sp->layout, epi ? res_out : NULL,
                       epi ? p->act : TC_ACT_NONE, p->N, p->K, st_spatial(p->out), f.s);
    } else if (p->op == TC_OP_GEMM && dt) {
        st = st_matrix(y, p->dtype, ys, sp->dtype, p->m, p->n, p->ldc, f.s);
    }
out:
    for (int i = f.n - 1; i >= 0; i--) tc__cu_free(f.buf[i], f.s);
    tc__free(hws);
    return st;
}

/* A plan's weights held on the device (tc_plan_conv_set_weights on a CUDA
 * plan): one synchronous copy when they are set, none per execute. */
extern "C" tc_status tc__cu_upload(void **dev, const void *host, size_t bytes) {
    *dev = NULL;
    if (!bytes) return TC_OK;
    void *d = NULL;
    TC_CU(cudaMalloc(&d, bytes));
    cudaError_t e = cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        cudaFree(d);
        return tc__cu_fail(e, "cudaMemcpy (plan weights)", __FILE__, __LINE__);
    }
    *dev = d;
    return TC_OK;
}
extern "C" void tc__cu_free_dev(void *dev) {
    if (dev) (void)cudaFree(dev);
}
