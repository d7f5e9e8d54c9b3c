/*
 * cuda_separable.cu - cuda.filter.separable: rank-1 masks (w[r][s][t] = a[r] b[s]
 * c[t], found at plan time within float tolerance) as one 1D pass per axis
 * whose mask is longer than 1: x first, then y, then z. R+S+T taps per
 * output instead of R*S*T.
 *
 * Boundary modes survive the split because the extension of the input is a
 * per-axis index map: a pass along y reads rows of the x-filtered array at
 * mapped row indices, which equals filtering the extended input. In
 * constant mode a row outside the input is cval everywhere, so after the x
 * pass it is cval * sum(c): each later pass uses cval times the sums of the
 * factors already applied.
 *
 * float32 and float64; up to 256 taps per axis (mask in the kernel's
 * parameter space, i.e. the constant bank).
 */
#include "cuda/cuda_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SEP_MAX 256

namespace {

template <typename E> struct taps { E w[SEP_MAX]; };

struct pgeom {
    int64_t L, Lo, pad, inner; /* axis length in/out, pad_lo, elements after the axis */
    int T, mode;
};

/* Pass along an axis with inner > 1: threads along inner (coalesced), rows
 * along the axis; outer in blockIdx.z. */
template <typename E>
__global__ void __launch_bounds__(256)
sep_pass_inner(const E *__restrict__ x, E *__restrict__ y, const __grid_constant__ taps<E> w,
               const pgeom g, E cval, int64_t gy0, int64_t gz0) {
    int64_t ii = (int64_t)blockIdx.x * 32 + threadIdx.x;
    int64_t o = ((int64_t)blockIdx.y + gy0) * 8 + threadIdx.y;
    int64_t outer = (int64_t)blockIdx.z + gz0;
    if (ii >= g.inner || o >= g.Lo) return;
    const E *xp = x + outer * g.L * g.inner + ii;
    int64_t i0 = o - g.pad;
    E acc = 0;
    if (i0 >= 0 && i0 + g.T <= g.L) {
        for (int t = 0; t < g.T; t++) acc += w.w[t] * __ldg(xp + (i0 + t) * g.inner);
    } else {
        for (int t = 0; t < g.T; t++) {
            int64_t k = tc__cu_bidx(i0 + t, g.L, g.mode);
            acc += w.w[t] * (k < 0 ? cval : __ldg(xp + k * g.inner));
        }
    }
    y[(outer * g.Lo + o) * g.inner + ii] = acc;
}

/* Pass along the contiguous axis: a block filters 256 outputs of one row
 * from a shared-memory copy of its window. */
template <typename E>
__global__ void __launch_bounds__(256)
sep_pass_x(const E *__restrict__ x, E *__restrict__ y, const __grid_constant__ taps<E> w,
           const pgeom g, E cval, int64_t gy0) {
    __shared__ E win[256 + SEP_MAX];
    int64_t row = (int64_t)blockIdx.y + gy0;
    int64_t o0 = (int64_t)blockIdx.x * 256;
    const E *xr = x + row * g.L;
    int64_t i0 = o0 - g.pad;
    int n = 256 + g.T - 1;
    if (i0 >= 0 && i0 + n <= g.L) {
        for (int c = threadIdx.x; c < n; c += 256) win[c] = __ldg(xr + i0 + c);
    } else {
        for (int c = threadIdx.x; c < n; c += 256) {
            int64_t k = tc__cu_bidx(i0 + c, g.L, g.mode);
            win[c] = k < 0 ? cval : __ldg(xr + k);
        }
    }
    __syncthreads();
    int64_t o = o0 + threadIdx.x;
    if (o >= g.Lo) return;
    E acc = 0;
    for (int t = 0; t < g.T; t++) acc += w.w[t] * win[threadIdx.x + t];
    y[row * g.Lo + o] = acc;
}

struct sstate {
    int dtype;
    int64_t len[3];
    double f[3][SEP_MAX]; /* factor per axis */
};

/* Rank-1 factorisation of the plan's mask; 0 when it is not rank 1. */
template <typename E>
static int factor(const tc__problem *p, const E *m, sstate *s) {
    int64_t R = p->msk[0], S = p->msk[1], T = p->msk[2], n = R * S * T;
    int64_t piv = 0;
    double amax = 0;
    for (int64_t i = 0; i < n; i++)
        if (fabs((double)m[i]) > amax) { amax = fabs((double)m[i]); piv = i; }
    if (amax == 0 || !isfinite(amax)) return 0;
    int64_t pr = piv / (S * T), ps = (piv / T) % S, pt = piv % T;
    double pv = (double)m[piv];
    for (int64_t r = 0; r < R; r++) s->f[0][r] = (double)m[(r * S + ps) * T + pt];
    for (int64_t q = 0; q < S; q++) s->f[1][q] = (double)m[(pr * S + q) * T + pt] / pv;
    for (int64_t t = 0; t < T; t++) s->f[2][t] = (double)m[(pr * S + ps) * T + t] / pv;
    /* axes of length 1 get no pass: fold their factor (the pivot value
     * for the first of them) into the first axis that has one */
    double fold = 1;
    int first = -1;
    for (int a = 0; a < 3; a++) {
        if (p->msk[a] == 1) { fold *= s->f[a][0]; s->f[a][0] = 1; }
        else if (first < 0) first = a;
    }
    for (int64_t i = 0; first >= 0 && i < p->msk[first]; i++) s->f[first][i] *= fold;
    double tol = (sizeof(E) == 4 ? 2e-6 : 1e-12) * amax;
    for (int64_t r = 0; r < R; r++)
        for (int64_t q = 0; q < S; q++)
            for (int64_t t = 0; t < T; t++) {
                double v = s->f[0][r] * s->f[1][q] * s->f[2][t];
                if (fabs(v - (double)m[(r * S + q) * T + t]) > tol) return 0;
            }
    return 1;
}

static int s_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (p->op != TC_OP_FILTER) {
        if (why) snprintf(why, n, "filters only");
        return 0;
    }
    int axes = (p->msk[0] > 1) + (p->msk[1] > 1) + (p->msk[2] > 1);
    if (axes < 2) {
        if (why) snprintf(why, n, "mask has fewer than two axes longer than 1");
        return 0;
    }
    if (p->msk[0] > SEP_MAX || p->msk[1] > SEP_MAX || p->msk[2] > SEP_MAX) {
        if (why) snprintf(why, n, "mask side above %d", SEP_MAX);
        return 0;
    }
    if (!p->mask) {
        if (why) snprintf(why, n, "mask not known at plan time");
        return 0;
    }
    sstate s;
    int ok = p->dtype == TC_FLOAT32 ? factor(p, (const float *)p->mask, &s)
                                    : factor(p, (const double *)p->mask, &s);
    if (!ok && why) snprintf(why, n, "mask is not rank 1 (separable)");
    return ok;
}

static double s_estimate(const tc__problem *p, const tc__env *e) {
    int passes = (p->msk[0] > 1) + (p->msk[1] > 1) + (p->msk[2] > 1);
    double bytes = (double)p->esize * (tc__x_count(p) + tc__y_count(p)) * passes;
    double fl = 2.0 * tc__y_count(p) * (double)(p->msk[0] + p->msk[1] + p->msk[2]);
    return tc__cu_estimate(bytes, fl, p->dtype == TC_FLOAT32 ? 0.25 : 0.12);
}

static tc_status s_plan(const tc__problem *p, const tc__env *e, void **state) {
    sstate *s = (sstate *)calloc(1, sizeof *s);
    if (!s) return tc__error(TC_ERR_OUT_OF_MEMORY, "cuda.filter.separable: out of memory");
    int ok = p->dtype == TC_FLOAT32 ? factor(p, (const float *)p->mask, s)
                                    : factor(p, (const double *)p->mask, s);
    if (!ok) {
        free(s);
        return tc__error(TC_ERR_NOT_APPLICABLE, "cuda.filter.separable: mask is not rank 1");
    }
    *state = s;
    return TC_OK;
}

template <typename E>
static tc_status run_passes(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    const sstate *s = (const sstate *)a->state;
    int64_t dims[3] = {p->in[0], p->in[1], p->in[2]};
    const E *src = (const E *)b->x;
    void *tmp[2] = {NULL, NULL};
    double cval = p->cval;
    int axes[3], na = 0;
    for (int ax = 2; ax >= 0; ax--)
        if (p->msk[ax] > 1) axes[na++] = ax;
    tc_status st = TC_OK;
    for (int k = 0; k < na && st == TC_OK; k++) {
        int ax = axes[k];
        pgeom g;
        g.L = dims[ax];
        g.Lo = p->out[ax];
        g.pad = p->pad_lo[ax];
        g.T = (int)p->msk[ax];
        g.mode = (int)p->mode;
        g.inner = 1;
        for (int q = ax + 1; q < 3; q++) g.inner *= dims[q];
        int64_t outer = p->N;
        for (int q = 0; q < ax; q++) outer *= dims[q];
        taps<E> w;
        memset(&w, 0, sizeof w);
        double sum = 0;
        for (int t = 0; t < g.T; t++) { w.w[t] = (E)s->f[ax][t]; sum += s->f[ax][t]; }
        E *dst; /* at most 3 passes: tmp0, tmp1, then y */
        if (k == na - 1) {
            dst = (E *)b->y;
        } else {
            size_t bytes = (size_t)(outer * g.Lo * g.inner) * sizeof(E);
            if ((st = tc__cu_alloc(&tmp[k & 1], bytes, b->s))) break;
            dst = (E *)tmp[k & 1];
        }
        if (g.inner == 1) {
            int64_t gx = tc__cu_div_up(g.Lo, 256);
            TC__CU_FOR_GRID(outer, 1, {
                sep_pass_x<E><<<dim3((unsigned)gx, gny), 256, 0, b->s>>>(src, dst, w, g, (E)cval, gy0);
            })
        } else {
            int64_t gx = tc__cu_div_up(g.inner, 32), gyn = tc__cu_div_up(g.Lo, 8);
            TC__CU_FOR_GRID(gyn, outer, {
                sep_pass_inner<E><<<dim3((unsigned)gx, gny, gnz), dim3(32, 8), 0, b->s>>>(
                    src, dst, w, g, (E)cval, gy0, gz0);
            })
        }
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) { st = tc__cu_fail(e, "launch cuda.filter.separable", __FILE__, __LINE__); break; }
        src = dst;
        dims[ax] = g.Lo;
        cval *= sum;
    }
    tc__cu_free(tmp[0], b->s);
    tc__cu_free(tmp[1], b->s);
    return st;
}

static tc_status s_launch(const tc__args *a, const tc__cu_bufs *b) {
    return a->p->dtype == TC_FLOAT32 ? run_passes<float>(a, b) : run_passes<double>(a, b);
}
static tc_status s_execute(const tc__args *a) { return tc__cu_run(a, NULL, 0, s_launch); }
/* device scratch (the device_workspace bound, exact): run_passes'
 * intermediate arrays, one after each pass but the last */
static size_t s_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    int64_t dims[3] = {p->in[0], p->in[1], p->in[2]};
    int axes[3], na = 0;
    for (int ax = 2; ax >= 0; ax--)
        if (p->msk[ax] > 1) axes[na++] = ax;
    size_t t = 0;
    for (int k = 0; k + 1 < na; k++) {
        dims[axes[k]] = p->out[axes[k]];
        t += (size_t)(p->N * dims[0] * dims[1] * dims[2]) * p->esize;
    }
    return t;
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_separable) = {
    "cuda.filter.separable", TC_BACKEND_CUDA, TC_OP_FILTER,
    "GPU filter for rank-1 masks: one 1D pass per axis (row pass, column pass, plane pass).",
    tc__cu_available, s_applicable, s_estimate, NULL, s_plan, free, s_execute,
    NULL, NULL, s_device_ws, 0, tc__cu_report_separable,
};

void tc__cu_report_separable(tc__cu_report *r) {
    tc__cu_report_kernel(r, "cuda.filter.separable x pass f32", (const void *)sep_pass_x<float>, 256, 0);
    tc__cu_report_kernel(r, "cuda.filter.separable y/z pass f32", (const void *)sep_pass_inner<float>, 256, 0);
}
