/*
 * cuda_fft.cu - cuda.filter.fft: filters with large masks through cuFFT,
 * float32 (R2C / C2R) and float64 (D2Z / Z2D).
 *
 * Per axis the output needs the extended input E over L = out + m - 1
 * points (built by a kernel that applies the boundary mode, so every mode
 * and cval is exact). With F >= L (a 2,3,5,7-smooth size) the circular
 * correlation y[p] = sum_r w[r] E[(p + r) mod F] never wraps for p < out,
 * so y = IFFT(FFT(E) * FFT(v)) with v[q] = w[(-q) mod F]. The spectrum of
 * v, scaled by 1/F, is computed once at plan time and kept on the device;
 * a plan made with TC_PLAN_MASK_AT_EXECUTE computes it at every call from
 * that call's device mask (read reversed for convolve, args->wflip), on
 * the call's stream into the call's scratch: no copy to the host, no wait.
 *
 * Batch items run in groups through batched cuFFT plans: the plan makes
 * one forward / inverse pair per group size 1, 2, 4, .., B (B a power of
 * two: at most F_GROUP_MAX items, E and X of a group within
 * F_GROUP_BYTES, at most the batch), and a call takes groups of B items,
 * then the rest by its binary digits. A call enqueues a few launches a
 * group (build, the transforms' kernels, multiply, crop), ceil(N / B) +
 * log2 B groups at most, not a few an item: a stream's queue holds about
 * a thousand pending launches (an undocumented figure, seen on NVIDIA's
 * forums), and a launch past that waits for the stream to run, where on
 * device arrays the call must only enqueue. No cuFFT plan is made at
 * execute time.
 *
 * One code path for both dtypes: the kernels and the plan / execute steps
 * are templates on the real type T (float or double), with the matching
 * cuFFT complex type and transforms (fft_types<T>); the plan picks T from
 * p->dtype, and the state records it. Every array (input, mask, E, the
 * spectra, the output) and every sum is in T.
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

/* the cuFFT types and transforms of a real type */
template <typename T> struct fft_types;
template <> struct fft_types<float> {
    typedef cufftComplex C;
    static constexpr cufftType r2c = CUFFT_R2C, c2r = CUFFT_C2R;
};
template <> struct fft_types<double> {
    typedef cufftDoubleComplex C;
    static constexpr cufftType r2c = CUFFT_D2Z, c2r = CUFFT_Z2D;
};
/* forward (R2C / D2Z) and inverse (C2R / Z2D) transforms */
static cufftResult exec_fwd(cufftHandle h, float *e, cufftComplex *x) {
    return cufftExecR2C(h, e, x);
}
static cufftResult exec_fwd(cufftHandle h, double *e, cufftDoubleComplex *x) {
    return cufftExecD2Z(h, e, x);
}
static cufftResult exec_inv(cufftHandle h, cufftComplex *x, float *e) {
    return cufftExecC2R(h, x, e);
}
static cufftResult exec_inv(cufftHandle h, cufftDoubleComplex *x, double *e) {
    return cufftExecZ2D(h, x, e);
}

/* group sizes: powers of two up to F_GROUP_MAX items, E + X of a group
 * within F_GROUP_BYTES (or one item) */
#define F_NPLANS 13 /* 1, 2, .., 4096 */
#define F_GROUP_MAX ((int64_t)1 << (F_NPLANS - 1))
#define F_GROUP_BYTES ((size_t)64 << 20)

struct fstate {
    pthread_mutex_t mu;
    cufftHandle fwd[F_NPLANS], inv[F_NPLANS]; /* [j]: batch 2^j */
    int have_fwd[F_NPLANS], have_inv[F_NPLANS];
    int nplans;             /* group sizes 1 .. B = 2^(nplans - 1) */
    int64_t F[3], L[3], Fc; /* Fc = F[2]/2 + 1 */
    void *W;                /* F0*F1*Fc complex values of the dtype: the mask's spectrum
                               (NULL: mask at execute, a spectrum a call) */
    size_t work;            /* cuFFT's work area, the largest of the plans' */
    size_t rsize, csize;    /* bytes of one real / complex value (4 / 8, 8 / 16) */
    const char *who;        /* "cuda.filter.fft (float32)", "... (float64)": error messages */
};

/* a call's scratch from the pool, for its largest group of nb items: E
 * (F0*F1*F2 reals an item), X (F0*F1*Fc complex an item) at a 256-byte
 * boundary, then the work area at one */
static size_t f_bytes_e(const fstate *s, int64_t nb) {
    return ((size_t)(nb * s->F[0] * s->F[1] * s->F[2]) * s->rsize + 255) / 256 * 256;
}
static size_t f_bytes_x(const fstate *s, int64_t nb) {
    return ((size_t)(nb * s->F[0] * s->F[1] * s->Fc) * s->csize + 255) / 256 * 256;
}
/* the work area, at a 256-byte boundary; a per-call spectrum (mask at
 * execute: F0*F1*Fc complex) */
static size_t f_work_bytes(const fstate *s) { return (s->work + 255) / 256 * 256; }
static size_t f_bytes_w(const fstate *s) { return s->W ? 0 : f_bytes_x(s, 1); }
/* the largest group of a call on n items: 2^j <= n, at most B */
static int f_top(const fstate *s, int64_t n) {
    int j = 0;
    while (j + 1 < s->nplans && ((int64_t)1 << (j + 1)) <= n) j++;
    return j;
}

#define TC_FFT(call) TC__CU_FFT(s->who, call)

template <typename T> struct fgeom {
    int64_t D, H, W, F0, F1, F2, L0, L1, L2, pad0, pad1, pad2;
    int mode;
    T cval;
};

/* E[i] = extended input at i - pad for i < L, 0 up to F (rows of F2),
 * for a group of items: row = item * F0 * F1 + i0 * F1 + i1, the items'
 * inputs D * H * W apart, their E F0 * F1 * F2. */
template <typename T>
__global__ void fft_build(const T *__restrict__ x, T *__restrict__ E, fgeom<T> g, int64_t gy0) {
    int64_t i2 = (int64_t)blockIdx.x * 256 + threadIdx.x;
    int64_t row = (int64_t)blockIdx.y + gy0;
    if (i2 >= g.F2) return;
    const int64_t item = row / (g.F0 * g.F1), r = row % (g.F0 * g.F1);
    int64_t i0 = r / g.F1, i1 = r % g.F1;
    T v = 0;
    if (i0 < g.L0 && i1 < g.L1 && i2 < g.L2) {
        int64_t a = tc__cu_bidx(i0 - g.pad0, g.D, g.mode);
        int64_t b = tc__cu_bidx(i1 - g.pad1, g.H, g.mode);
        int64_t c = tc__cu_bidx(i2 - g.pad2, g.W, g.mode);
        v = (a < 0 || b < 0 || c < 0) ? g.cval
                                      : __ldg(x + item * g.D * g.H * g.W + (a * g.H + b) * g.W + c);
    }
    E[row * g.F2 + i2] = v;
}

/* v[(-r) mod F] = w[r] * scale, on a zeroed E; flip: w read reversed (a
 * per-call convolve mask) */
template <typename T>
__global__ void fft_scatter_mask(const T *__restrict__ w, T *__restrict__ E, int64_t mR,
                                 int64_t mS, int64_t mT, int64_t F0, int64_t F1, int64_t F2,
                                 T scale, int flip) {
    int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x;
    const int64_t nm = mR * mS * mT;
    if (i >= nm) return;
    int64_t r = i / (mS * mT), s = (i / mT) % mS, t = i % mT;
    int64_t a = (F0 - r) % F0, b = (F1 - s) % F1, c = (F2 - t) % F2;
    E[(a * F1 + b) * F2 + c] = w[flip ? nm - 1 - i : i] * scale;
}

/* X *= W, elementwise (C: cufftComplex or cufftDoubleComplex); item
 * blockIdx.y + gy0 of a group, its n values n apart */
template <typename C>
__global__ void fft_mul(C *__restrict__ X, const C *__restrict__ W, int64_t n, int64_t gy0) {
    X += ((int64_t)blockIdx.y + gy0) * n;
    for (int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * 256) {
        C a = X[i], b = W[i], r;
        r.x = a.x * b.x - a.y * b.y;
        r.y = a.x * b.y + a.y * b.x;
        X[i] = r;
    }
}

/* y = the first out values of E on each axis, for a group of items:
 * output row = item * P * Q + p0 * Q + p1 (P, Q: output planes and rows
 * of an item), the items' E F0 * F1 * F2 apart */
template <typename T>
__global__ void fft_crop(const T *__restrict__ E, T *__restrict__ y, int64_t F0, int64_t F1,
                         int64_t F2, int64_t P, int64_t Q, int64_t O, int64_t gy0) {
    int64_t o = (int64_t)blockIdx.x * 256 + threadIdx.x;
    int64_t row = (int64_t)blockIdx.y + gy0;
    if (o >= O) return;
    const int64_t item = row / (P * Q), r = row % (P * Q);
    int64_t p0 = r / Q, p1 = r % Q;
    y[row * O + o] = E[((item * F0 + p0) * F1 + p1) * F2 + o];
}

static int f_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (p->op != TC_OP_FILTER || (p->dtype != TC_FLOAT32 && p->dtype != TC_FLOAT64)) {
        if (why) snprintf(why, n, "float32 and float64 filters only");
        return 0;
    }
    if (!p->mask && !(e && (e->flags & TC_PLAN_MASK_AT_EXECUTE))) {
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

/* Memory-bound model: build + crop + forward + inverse (~3 passes each
 * over complex data) + multiply, ~28 passes of F reals of the dtype's
 * size, plus a fixed cost per batch item. float64 moves twice the bytes
 * of float32; its arithmetic (FP64 at half the FP32 rate on the
 * H100 / H200) stays below the traffic, so the same model holds with
 * esize 8. */
static double f_estimate(const tc__problem *p, const tc__env *e) {
    /* per-call masks: by name only (as cpu.filter.fft) */
    if (!p->mask && e && (e->flags & TC_PLAN_MASK_AT_EXECUTE)) return 1e30;
    double F = 1;
    for (int a = 0; a < 3; a++) F *= (double)tc__fft_smooth_length(p->out[a] + p->msk[a] - 1, 0);
    double bytes = (double)p->N * F * (double)p->esize * 28.0;
    return tc__cu_estimate(bytes, 0, 1) + 30e-6 * (double)p->N;
}

static void f_destroy(void *state) {
    fstate *s = (fstate *)state;
    if (!s) return;
    for (int j = 0; j < F_NPLANS; j++) {
        if (s->have_fwd[j]) cufftDestroy(s->fwd[j]);
        if (s->have_inv[j]) cufftDestroy(s->inv[j]);
    }
    cudaFree(s->W);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

template <typename T> static tc_status f_plan_inner(const tc__problem *p, fstate *s) {
    typedef typename fft_types<T>::C C;
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
    TC_CU(cudaMalloc(&s->W, (size_t)nc * sizeof(C)));
    /* group sizes 2^j up to B: at most the batch and F_GROUP_MAX, E + X
     * of a group within F_GROUP_BYTES (one item whatever its size) */
    const size_t item_bytes = (size_t)nr * sizeof(T) + (size_t)nc * sizeof(C);
    s->nplans = 1;
    while (s->nplans < F_NPLANS && ((int64_t)1 << s->nplans) <= p->N &&
           ((size_t)1 << s->nplans) * item_bytes <= F_GROUP_BYTES)
        s->nplans++;
    /* batched plans on contiguous items (E F0*F1*F2 reals apart, X
     * F0*F1*Fc complex), every one made here; the work areas are the
     * caller's (a call's, from the pool) */
    s->work = 0;
    for (int j = 0; j < s->nplans; j++) {
        size_t w0 = 0, w1 = 0;
        TC_FFT(cufftCreate(&s->fwd[j]));
        s->have_fwd[j] = 1;
        TC_FFT(cufftSetAutoAllocation(s->fwd[j], 0));
        TC_FFT(cufftMakePlanMany(s->fwd[j], rank, dims, NULL, 1, 0, NULL, 1, 0,
                                 fft_types<T>::r2c, 1 << j, &w0));
        TC_FFT(cufftCreate(&s->inv[j]));
        s->have_inv[j] = 1;
        TC_FFT(cufftSetAutoAllocation(s->inv[j], 0));
        TC_FFT(cufftMakePlanMany(s->inv[j], rank, dims, NULL, 1, 0, NULL, 1, 0,
                                 fft_types<T>::c2r, 1 << j, &w1));
        if (w0 > s->work) s->work = w0;
        if (w1 > s->work) s->work = w1;
    }
    if (!p->mask) { /* TC_PLAN_MASK_AT_EXECUTE: a spectrum a call (f_launch) */
        cudaFree(s->W);
        s->W = NULL;
        return TC_OK;
    }
    /* spectrum of the flipped, scaled mask (plan time: a scratch E and
     * work area of its own, synchronised and freed here) */
    void *dm = NULL, *tmp = NULL;
    tc_status st = tc__cu_mask_upload(p, &dm);
    if (st) return st;
    if (!dm) return tc__error(TC_ERR_NOT_APPLICABLE, "%s: mask not known at plan time", s->who);
    cudaError_t e = cudaMalloc(&tmp, f_bytes_e(s, 1) + (s->work ? s->work : 16));
    T *E = (T *)tmp;
    if (e == cudaSuccess) e = cudaMemset(E, 0, (size_t)nr * sizeof(T));
    int64_t nm = p->msk[0] * p->msk[1] * p->msk[2];
    if (e == cudaSuccess) {
        fft_scatter_mask<T><<<(unsigned)tc__cu_div_up(nm, 256), 256>>>(
            (const T *)dm, E, p->msk[0], p->msk[1], p->msk[2], s->F[0], s->F[1], s->F[2],
            (T)(1.0 / (double)nr), 0);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    tc__cu_mask_free(dm);
    cufftResult r = CUFFT_SUCCESS;
    if (e == cudaSuccess) {
        r = cufftSetWorkArea(s->fwd[0], (char *)tmp + f_bytes_e(s, 1));
        if (r == CUFFT_SUCCESS) r = exec_fwd(s->fwd[0], E, (C *)s->W);
        if (r == CUFFT_SUCCESS) e = cudaDeviceSynchronize();
    }
    cudaFree(tmp);
    if (e != cudaSuccess)
        return tc__cu_fail(e, p->dtype == TC_FLOAT64 ? "cuda.filter.fft (float64) mask spectrum"
                                                     : "cuda.filter.fft (float32) mask spectrum",
                           __FILE__, __LINE__);
    TC_FFT(r);
    return TC_OK;
}

static tc_status f_plan(const tc__problem *p, const tc__env *e, void **state) {
    fstate *s = (fstate *)calloc(1, sizeof *s);
    if (!s) return tc__error(TC_ERR_OUT_OF_MEMORY, "cuda.filter.fft: out of memory");
    pthread_mutex_init(&s->mu, NULL);
    const int f64 = p->dtype == TC_FLOAT64;
    s->rsize = f64 ? sizeof(double) : sizeof(float);
    s->csize = f64 ? sizeof(cufftDoubleComplex) : sizeof(cufftComplex);
    s->who = f64 ? "cuda.filter.fft (float64)" : "cuda.filter.fft (float32)";
    tc_status st = f64 ? f_plan_inner<double>(p, s) : f_plan_inner<float>(p, s);
    if (st) { f_destroy(s); return st; }
    *state = s;
    return TC_OK;
}

/* items [n0, n0 + nb) as one group, nb = 2^j: build, forward, multiply,
 * inverse, crop (a fixed number of launches whatever nb) */
template <typename T>
static tc_status f_group_run(const tc__args *a, const tc__cu_bufs *b, fstate *s, const void *W,
                             T *E, typename fft_types<T>::C *X, void *work, const fgeom<T> &g,
                             int64_t n0, int j) {
    typedef typename fft_types<T>::C C;
    const tc__problem *p = a->p;
    const int64_t nb = (int64_t)1 << j;
    const int64_t xin = p->in[0] * p->in[1] * p->in[2], yout = p->out[0] * p->out[1] * p->out[2];
    const int64_t nc = s->F[0] * s->F[1] * s->Fc;
    const tc__cu_device *d = tc__cu_dev();
    const T *xn = (const T *)b->x + n0 * xin;
    T *yn = (T *)b->y + n0 * yout;
    TC_FFT(cufftSetStream(s->fwd[j], b->s));
    TC_FFT(cufftSetStream(s->inv[j], b->s));
    TC_FFT(cufftSetWorkArea(s->fwd[j], work));
    TC_FFT(cufftSetWorkArea(s->inv[j], work));
    int64_t gx = tc__cu_div_up(g.F2, 256), rows = nb * g.F0 * g.F1;
    TC__CU_FOR_GRID(rows, 1, {
        fft_build<T><<<dim3((unsigned)gx, gny), 256, 0, b->s>>>(xn, E, g, gy0);
        TC_CU_LAUNCH("cuda.filter.fft build");
    })
    TC_FFT(exec_fwd(s->fwd[j], E, X));
    /* blocks per item: enough for the item, about cap in all */
    int64_t mb = tc__cu_div_up(nc, 256), cap = 8LL * (d ? d->sms : 132) * 8;
    int64_t per = cap / nb > 1 ? cap / nb : 1;
    TC__CU_FOR_GRID(nb, 1, {
        fft_mul<C><<<dim3((unsigned)(mb < per ? mb : per), gny), 256, 0, b->s>>>(
            X, (const C *)W, nc, gy0);
        TC_CU_LAUNCH("cuda.filter.fft multiply");
    })
    TC_FFT(exec_inv(s->inv[j], X, E));
    int64_t ox = tc__cu_div_up(p->out[2], 256), orows = nb * p->out[0] * p->out[1];
    TC__CU_FOR_GRID(orows, 1, {
        fft_crop<T><<<dim3((unsigned)ox, gny), 256, 0, b->s>>>(
            E, yn, g.F0, g.F1, g.F2, p->out[0], p->out[1], p->out[2], gy0);
        TC_CU_LAUNCH("cuda.filter.fft crop");
    })
    return TC_OK;
}

template <typename T>
static tc_status f_batch(const tc__args *a, const tc__cu_bufs *b, fstate *s, void *ws) {
    typedef typename fft_types<T>::C C;
    const tc__problem *p = a->p;
    const int top = f_top(s, p->N);
    const int64_t gmax = (int64_t)1 << top;
    T *E = (T *)ws;
    C *X = (C *)((char *)ws + f_bytes_e(s, gmax));
    void *work = s->work ? (char *)ws + f_bytes_e(s, gmax) + f_bytes_x(s, gmax) : NULL;
    const void *W = s->W;
    if (!W) {
        /* mask at execute: this call's spectrum, past the work area, from
         * its device mask (b->w): scattered (reversed for convolve) into
         * the zeroed first item of E, forward-transformed by the one-item
         * plan into its own buffer; stream-ordered before the groups */
        C *Wc = (C *)((char *)ws + f_bytes_e(s, gmax) + f_bytes_x(s, gmax) + f_work_bytes(s));
        const int64_t nr = s->F[0] * s->F[1] * s->F[2], nm = p->msk[0] * p->msk[1] * p->msk[2];
        TC_CU(cudaMemsetAsync(E, 0, (size_t)nr * sizeof(T), b->s));
        fft_scatter_mask<T><<<(unsigned)tc__cu_div_up(nm, 256), 256, 0, b->s>>>(
            (const T *)b->w, E, p->msk[0], p->msk[1], p->msk[2], s->F[0], s->F[1], s->F[2],
            (T)(1.0 / (double)nr), a->wflip);
        TC_CU_LAUNCH("cuda.filter.fft mask");
        TC_FFT(cufftSetStream(s->fwd[0], b->s));
        TC_FFT(cufftSetWorkArea(s->fwd[0], work));
        TC_FFT(exec_fwd(s->fwd[0], E, Wc));
        W = Wc;
    }
    fgeom<T> g;
    g.D = p->in[0]; g.H = p->in[1]; g.W = p->in[2];
    g.F0 = s->F[0]; g.F1 = s->F[1]; g.F2 = s->F[2];
    g.L0 = s->L[0]; g.L1 = s->L[1]; g.L2 = s->L[2];
    g.pad0 = p->pad_lo[0]; g.pad1 = p->pad_lo[1]; g.pad2 = p->pad_lo[2];
    g.mode = (int)p->mode;
    g.cval = (T)p->cval;
    /* groups of gmax items (B, or the largest power of two in a smaller
     * call), then the rest (< gmax) by its binary digits, largest first;
     * p->N is the plan's batch or, on host arrays, a chunk's */
    int64_t n0 = 0;
    for (int j = top; j >= 0; j--) {
        const int64_t nb = (int64_t)1 << j;
        while (p->N - n0 >= nb) {
            tc_status st = f_group_run<T>(a, b, s, W, E, X, work, g, n0, j);
            if (st) return st;
            n0 += nb;
            if (j < top) break; /* a digit below gmax: once */
        }
    }
    return TC_OK;
}

/* device scratch: a call's E, X (a group of B items; a call on fewer
 * items, a chunk of a host array, takes its largest group's) and work
 * area (in the plan's dtype: float64 takes twice the bytes of E and X,
 * and cuFFT's D2Z / Z2D work area) */
static size_t f_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    const fstate *s = (const fstate *)state;
    (void)p;
    (void)e;
    if (!s) return 0;
    const int64_t B = (int64_t)1 << (s->nplans - 1);
    return f_bytes_e(s, B) + f_bytes_x(s, B) + f_work_bytes(s) + f_bytes_w(s);
}

static tc_status f_launch(const tc__args *a, const tc__cu_bufs *b) {
    fstate *s = (fstate *)a->state;
    void *ws = NULL;
    const int64_t gmax = (int64_t)1 << f_top(s, a->p->N);
    tc_status st = tc__cu_alloc(&ws, f_bytes_e(s, gmax) + f_bytes_x(s, gmax) + f_work_bytes(s) +
                                         f_bytes_w(s), b->s);
    if (st == TC_OK) {
        /* the handles' stream and work area are set, and the work
         * enqueued, under the mutex; the buffers are this call's (its
         * groups run one after another through them, in stream order) */
        pthread_mutex_lock(&s->mu);
        st = s->rsize == sizeof(double) ? f_batch<double>(a, b, s, ws)
                                        : f_batch<float>(a, b, s, ws);
        pthread_mutex_unlock(&s->mu);
    }
    tc__cu_free(ws, b->s);
    return st;
}

static tc_status f_execute(const tc__args *a) {
    if (!a->state) return tc__error(TC_ERR_INTERNAL, "cuda.filter.fft: executed without a plan");
    /* the spectrum cached in the plan; or this call's device mask read in
     * place (a host mask staged on the stream) */
    const fstate *s = (const fstate *)a->state;
    return tc__cu_run(a, NULL, s->W ? 0 : TC__CU_W_DEVICE, f_launch);
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
    "GPU filter through cuFFT (R2C/C2R in float32, D2Z/Z2D in float64, on a boundary-extended "
    "copy; mask spectrum cached in the plan, or made per call from a device mask under TC_PLAN_MASK_AT_EXECUTE).",
    tc__cu_available, f_applicable, f_estimate, NULL, f_plan, f_destroy, f_execute,
    NULL, NULL, f_device_ws, TC__CAP_MASK_AT_EXECUTE, tc__cu_report_fft,
};

void tc__cu_report_fft(tc__cu_report *r) {
    tc__cu_report_kernel(r, "cuda.filter.fft build f32", (const void *)fft_build<float>, 256, 0);
    tc__cu_report_kernel(r, "cuda.filter.fft mask f32", (const void *)fft_scatter_mask<float>,
                         256, 0);
    tc__cu_report_kernel(r, "cuda.filter.fft multiply f32", (const void *)fft_mul<cufftComplex>,
                         256, 0);
    tc__cu_report_kernel(r, "cuda.filter.fft crop f32", (const void *)fft_crop<float>, 256, 0);
    tc__cu_report_kernel(r, "cuda.filter.fft build f64", (const void *)fft_build<double>, 256, 0);
    tc__cu_report_kernel(r, "cuda.filter.fft mask f64", (const void *)fft_scatter_mask<double>,
                         256, 0);
    tc__cu_report_kernel(r, "cuda.filter.fft multiply f64",
                         (const void *)fft_mul<cufftDoubleComplex>, 256, 0);
    tc__cu_report_kernel(r, "cuda.filter.fft crop f64", (const void *)fft_crop<double>, 256, 0);
}
