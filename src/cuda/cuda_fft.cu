/*
 * cuda_fft.cu - cuda.filter.fft: filters with large masks through cuFFT (float32).
 *
 * Per axis the output needs the extended input E over L = out + m - 1
 * points (built by a kernel that applies the boundary mode, so every mode
 * and cval is exact). With F >= L (a 2,3,5,7-smooth size) the circular
 * correlation y[p] = sum_r w[r] E[(p + r) mod F] never wraps for p < out,
 * so y = IFFT(FFT(E) * FFT(v)) with v[q] = w[(-q) mod F]. The spectrum of
 * v, scaled by 1/F, is computed once at plan time and kept on the device.
 * Batch items run one after another through the same buffers.
 *
 * The spectrum W and the cuFFT plans belong to the plan state; the
 * buffers a call writes (E, X and cuFFT's work area) are its own, from
 * the device pool on its stream, so on device arrays a call only enqueues
 * (plan-owned buffers would need a stream synchronisation).
 * Concurrent executes of one plan take the mutex only while they set the
 * handles' stream and work area and enqueue their work.
 */
#include "cuda/cuda_common.h"

#include <cufft.h>
#include <pthread.h>
#include <stdlib.h>

namespace {

struct fstate {
    pthread_mutex_t mu;
    cufftHandle fwd, inv;
    int have_fwd, have_inv;
    int64_t F[3], L[3], Fc; /* Fc = F[2]/2 + 1 */
    cufftComplex *W;        /* F0*F1*Fc: the mask's spectrum */
    size_t work;            /* cuFFT's work area, the larger of the two */
};

/* a call's scratch from the pool: E (F0*F1*F2 reals), X (F0*F1*Fc
 * complex) at a 256-byte boundary, then the work area at one */
static size_t f_bytes_e(const fstate *s) {
    return ((size_t)(s->F[0] * s->F[1] * s->F[2]) * sizeof(float) + 255) / 256 * 256;
}
static size_t f_bytes_x(const fstate *s) {
    return ((size_t)(s->F[0] * s->F[1] * s->Fc) * sizeof(cufftComplex) + 255) / 256 * 256;
}

#define TC_FFT(call) TC__CU_FFT("cuda.filter.fft", call)

struct fgeom {
    int64_t D, H, W, F0, F1, F2, L0, L1, L2, pad0, pad1, pad2;
    int mode;
    float cval;
};

/* E[i] = extended input at i - pad for i < L, 0 up to F (rows of F2). */
__global__ void fft_build(const float *__restrict__ x, float *__restrict__ E, fgeom g,
                          int64_t gy0) {
    int64_t i2 = (int64_t)blockIdx.x * 256 + threadIdx.x;
    int64_t row = (int64_t)blockIdx.y + gy0;
    if (i2 >= g.F2) return;
    int64_t i0 = row / g.F1, i1 = row % g.F1;
    float v = 0.f;
    if (i0 < g.L0 && i1 < g.L1 && i2 < g.L2) {
        int64_t a = tc__cu_bidx(i0 - g.pad0, g.D, g.mode);
        int64_t b = tc__cu_bidx(i1 - g.pad1, g.H, g.mode);
        int64_t c = tc__cu_bidx(i2 - g.pad2, g.W, g.mode);
        v = (a < 0 || b < 0 || c < 0) ? g.cval : __ldg(x + (a * g.H + b) * g.W + c);
    }
    E[row * g.F2 + i2] = v;
}

/* v[(-r) mod F] = w[r] * scale, on a zeroed E */
__global__ void fft_scatter_mask(const float *__restrict__ w, float *__restrict__ E, int64_t R,
                                 int64_t S, int64_t T, int64_t F0, int64_t F1, int64_t F2,
                                 float scale) {
    int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x;
    if (i >= R * S * T) return;
    int64_t r = i / (S * T), s = (i / T) % S, t = i % T;
    int64_t a = (F0 - r) % F0, b = (F1 - s) % F1, c = (F2 - t) % F2;
    E[(a * F1 + b) * F2 + c] = w[i] * scale;
}

__global__ void fft_mul(cufftComplex *__restrict__ X, const cufftComplex *__restrict__ W,
                        int64_t n) {
    for (int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * 256) {
        cufftComplex a = X[i], b = W[i];
        X[i] = make_cuComplex(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
    }
}

__global__ void fft_crop(const float *__restrict__ E, float *__restrict__ y, int64_t F1,
                         int64_t F2, int64_t Q, int64_t O, int64_t gy0) {
    int64_t o = (int64_t)blockIdx.x * 256 + threadIdx.x;
    int64_t row = (int64_t)blockIdx.y + gy0; /* output row p0*Q + p1 */
    if (o >= O) return;
    int64_t p0 = row / Q, p1 = row % Q;
    y[row * O + o] = E[(p0 * F1 + p1) * F2 + o];
}

static int f_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (p->op != TC_OP_FILTER || p->dtype != TC_FLOAT32) {
        if (why) snprintf(why, n, "float32 filters only");
        return 0;
    }
    if (!p->mask) {
        if (why) snprintf(why, n, "mask not known at plan time");
        return 0;
    }
    if (p->out[2] + p->msk[2] - 1 == 1 && p->out[0] * p->out[1] > 1) {
        if (why) snprintf(why, n, "last axis of length 1");
        return 0;
    }
    for (int a = 0; a < 3; a++)
        if (tc__fft_smooth_length(p->out[a] + p->msk[a] - 1, 0) > (1LL << 30)) {
            if (why) snprintf(why, n, "transform size along axis %d too large for cuFFT", a);
            return 0;
        }
    return 1;
}

static double f_estimate(const tc__problem *p, const tc__env *e) {
    double F = 1;
    for (int a = 0; a < 3; a++) F *= (double)tc__fft_smooth_length(p->out[a] + p->msk[a] - 1, 0);
    /* build + crop + R2C + C2R (~3 passes each over complex data) + multiply */
    double bytes = (double)p->N * F * 4.0 * 28.0;
    return tc__cu_estimate(bytes, 0, 1) + 30e-6 * (double)p->N;
}

static void f_destroy(void *state) {
    fstate *s = (fstate *)state;
    if (!s) return;
    if (s->have_fwd) cufftDestroy(s->fwd);
    if (s->have_inv) cufftDestroy(s->inv);
    cudaFree(s->W);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static tc_status f_plan_inner(const tc__problem *p, fstate *s) {
    for (int a = 0; a < 3; a++) {
        s->L[a] = p->out[a] + p->msk[a] - 1;
        s->F[a] = tc__fft_smooth_length(s->L[a], 0);
    }
    s->Fc = s->F[2] / 2 + 1;
    int first = 0;
    while (first < 2 && s->F[first] == 1) first++;
    int rank = 3 - first, dims[3];
    for (int a = first; a < 3; a++) dims[a - first] = (int)s->F[a];
    const int64_t nr = s->F[0] * s->F[1] * s->F[2], nc = s->F[0] * s->F[1] * s->Fc;
    TC_CU(cudaMalloc(&s->W, (size_t)nc * sizeof(cufftComplex)));
    /* the work areas are the caller's (a call's, from the pool) */
    size_t w0 = 0, w1 = 0;
    TC_FFT(cufftCreate(&s->fwd));
    s->have_fwd = 1;
    TC_FFT(cufftSetAutoAllocation(s->fwd, 0));
    TC_FFT(cufftMakePlanMany(s->fwd, rank, dims, NULL, 1, 0, NULL, 1, 0, CUFFT_R2C, 1, &w0));
    TC_FFT(cufftCreate(&s->inv));
    s->have_inv = 1;
    TC_FFT(cufftSetAutoAllocation(s->inv, 0));
    TC_FFT(cufftMakePlanMany(s->inv, rank, dims, NULL, 1, 0, NULL, 1, 0, CUFFT_C2R, 1, &w1));
    s->work = w0 > w1 ? w0 : w1;
    /* spectrum of the flipped, scaled mask (plan time: a scratch E and
     * work area of its own, synchronised and freed here) */
    void *dm = NULL, *tmp = NULL;
    tc_status st = tc__cu_mask_upload(p, &dm);
    if (st) return st;
    if (!dm) return tc__error(TC_ERR_NOT_APPLICABLE, "cuda.filter.fft: mask not known at plan time");
    cudaError_t e = cudaMalloc(&tmp, f_bytes_e(s) + (s->work ? s->work : 16));
    float *E = (float *)tmp;
    if (e == cudaSuccess) e = cudaMemset(E, 0, (size_t)nr * sizeof(float));
    int64_t nm = p->msk[0] * p->msk[1] * p->msk[2];
    if (e == cudaSuccess) {
        fft_scatter_mask<<<(unsigned)tc__cu_div_up(nm, 256), 256>>>(
            (const float *)dm, E, p->msk[0], p->msk[1], p->msk[2], s->F[0], s->F[1], s->F[2],
            (float)(1.0 / (double)nr));
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    tc__cu_mask_free(dm);
    cufftResult r = CUFFT_SUCCESS;
    if (e == cudaSuccess) {
        r = cufftSetWorkArea(s->fwd, (char *)tmp + f_bytes_e(s));
        if (r == CUFFT_SUCCESS) r = cufftExecR2C(s->fwd, E, s->W);
        if (r == CUFFT_SUCCESS) e = cudaDeviceSynchronize();
    }
    cudaFree(tmp);
    if (e != cudaSuccess) return tc__cu_fail(e, "cuda.filter.fft mask spectrum", __FILE__, __LINE__);
    TC_FFT(r);
    return TC_OK;
}

static tc_status f_plan(const tc__problem *p, const tc__env *e, void **state) {
    fstate *s = (fstate *)calloc(1, sizeof *s);
    if (!s) return tc__error(TC_ERR_OUT_OF_MEMORY, "cuda.filter.fft: out of memory");
    pthread_mutex_init(&s->mu, NULL);
    tc_status st = f_plan_inner(p, s);
    if (st) { f_destroy(s); return st; }
    *state = s;
    return TC_OK;
}

static tc_status f_batch(const tc__args *a, const tc__cu_bufs *b, fstate *s, float *E,
                         cufftComplex *X, void *work) {
    const tc__problem *p = a->p;
    TC_FFT(cufftSetStream(s->fwd, b->s));
    TC_FFT(cufftSetStream(s->inv, b->s));
    TC_FFT(cufftSetWorkArea(s->fwd, work));
    TC_FFT(cufftSetWorkArea(s->inv, work));
    fgeom g;
    g.D = p->in[0]; g.H = p->in[1]; g.W = p->in[2];
    g.F0 = s->F[0]; g.F1 = s->F[1]; g.F2 = s->F[2];
    g.L0 = s->L[0]; g.L1 = s->L[1]; g.L2 = s->L[2];
    g.pad0 = p->pad_lo[0]; g.pad1 = p->pad_lo[1]; g.pad2 = p->pad_lo[2];
    g.mode = (int)p->mode;
    g.cval = (float)p->cval;
    const int64_t xin = p->in[0] * p->in[1] * p->in[2], yout = p->out[0] * p->out[1] * p->out[2];
    const int64_t nc = s->F[0] * s->F[1] * s->Fc;
    const tc__cu_device *d = tc__cu_dev();
    for (int64_t n = 0; n < p->N; n++) {
        const float *xn = (const float *)b->x + n * xin;
        float *yn = (float *)b->y + n * yout;
        int64_t gx = tc__cu_div_up(g.F2, 256), rows = g.F0 * g.F1;
        TC__CU_FOR_GRID(rows, 1, {
            fft_build<<<dim3((unsigned)gx, gny), 256, 0, b->s>>>(xn, E, g, gy0);
            TC_CU_LAUNCH("cuda.filter.fft build");
        })
        TC_FFT(cufftExecR2C(s->fwd, E, X));
        int64_t mb = tc__cu_div_up(nc, 256), cap = 8LL * (d ? d->sms : 132) * 8;
        fft_mul<<<(unsigned)(mb < cap ? mb : cap), 256, 0, b->s>>>(X, s->W, nc);
        TC_CU_LAUNCH("cuda.filter.fft multiply");
        TC_FFT(cufftExecC2R(s->inv, X, E));
        int64_t ox = tc__cu_div_up(p->out[2], 256), orows = p->out[0] * p->out[1];
        TC__CU_FOR_GRID(orows, 1, {
            fft_crop<<<dim3((unsigned)ox, gny), 256, 0, b->s>>>(E, yn, g.F1, g.F2, p->out[1],
                                                                 p->out[2], gy0);
            TC_CU_LAUNCH("cuda.filter.fft crop");
        })
    }
    return TC_OK;
}

/* device scratch, exactly: a call's E, X and work area */
static size_t f_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    const fstate *s = (const fstate *)state;
    (void)p;
    (void)e;
    return s ? f_bytes_e(s) + f_bytes_x(s) + s->work : 0;
}

static tc_status f_launch(const tc__args *a, const tc__cu_bufs *b) {
    fstate *s = (fstate *)a->state;
    void *ws = NULL;
    tc_status st = tc__cu_alloc(&ws, f_bytes_e(s) + f_bytes_x(s) + s->work, b->s);
    if (st == TC_OK) {
        /* the handles' stream and work area are set, and the work
         * enqueued, under the mutex; the buffers are this call's */
        pthread_mutex_lock(&s->mu);
        st = f_batch(a, b, s, (float *)ws, (cufftComplex *)((char *)ws + f_bytes_e(s)),
                     s->work ? (char *)ws + f_bytes_e(s) + f_bytes_x(s) : NULL);
        pthread_mutex_unlock(&s->mu);
    }
    tc__cu_free(ws, b->s);
    return st;
}

static tc_status f_execute(const tc__args *a) {
    if (!a->state) return tc__error(TC_ERR_INTERNAL, "cuda.filter.fft: executed without a plan");
    return tc__cu_run(a, NULL, 0, f_launch); /* spectrum cached in the plan */
}

} // namespace

const char *tc__cu_cufft_str(int r) {
    switch (r) {
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    default: return "cuFFT error";
    }
}

TC__CU_SOLVER(tc__solver_cuda_fft) = {
    "cuda.filter.fft", TC_BACKEND_CUDA, TC_OP_FILTER,
    "GPU filter through cuFFT (R2C/C2R on a boundary-extended copy; mask spectrum cached in the plan).",
    tc__cu_available, f_applicable, f_estimate, NULL, f_plan, f_destroy, f_execute,
    NULL, NULL, f_device_ws, 0, tc__cu_report_fft,
};

void tc__cu_report_fft(tc__cu_report *r) {
    tc__cu_report_kernel(r, "cuda.filter.fft build", (const void *)fft_build, 256, 0);
    tc__cu_report_kernel(r, "cuda.filter.fft multiply", (const void *)fft_mul, 256, 0);
    tc__cu_report_kernel(r, "cuda.filter.fft crop", (const void *)fft_crop, 256, 0);
}
