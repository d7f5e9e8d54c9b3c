/*
 * cuda_seed_2d.cu - the seed's 2D kernels (seed 000) as solvers:
 *
 *   cuda.filter.seed-const2d        one thread per output, mask in __constant__
 *   cuda.filter.seed-tiled2d-pitch  16x16 output tile + halo in shared memory; the
 *                            input is first copied into a cudaMallocPitch
 *                            buffer so every row starts on a burst boundary
 *   cuda.filter.seed-texture2d      the pitched buffer read through a texture
 *                            object (point sampling, unnormalised
 *                            coordinates); the boundary mode is applied to
 *                            the indices before sampling, so every mode is
 *                            exact
 *
 * float32 filters with a 1D or 2D mask; 3D arrays are filtered plane by
 * plane (the planes are a batch).
 */
#include "cuda/cuda_common.h"

#include <pthread.h>
#include <stdlib.h>

#define SEED2_CONST_MAX 4096 /* floats: 64x64 mask */
#define SEED2_TILE 16
#define SEED2_TILED_MAX 64   /* per axis: (16+63)^2 floats = 25 KiB */

__constant__ float tc__seed2d_cmask[SEED2_CONST_MAX];

namespace {

struct g2d {
    int64_t H, W, Q, O, pad1, pad2;
    int S, T, mode;
    float cval;
};

static g2d geom(const tc__problem *p) {
    g2d g;
    g.H = p->in[1]; g.W = p->in[2]; g.Q = p->out[1]; g.O = p->out[2];
    g.pad1 = p->pad_lo[1]; g.pad2 = p->pad_lo[2];
    g.S = (int)p->msk[1]; g.T = (int)p->msk[2];
    g.mode = (int)p->mode;
    g.cval = (float)p->cval;
    return g;
}
static int64_t nplanes(const tc__problem *p) { return p->N * p->out[0]; }

__global__ void seed_const2d(const float *x, float *y, g2d g, int64_t gy0, int64_t gz0) {
    int64_t ox = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t oy = ((int64_t)blockIdx.y + gy0) * blockDim.y + threadIdx.y;
    int64_t pl = (int64_t)blockIdx.z + gz0;
    if (ox >= g.O || oy >= g.Q) return;
    const float *xp = x + pl * g.H * g.W;
    float acc = 0.f;
    for (int s = 0; s < g.S; s++) {
        int64_t r = tc__cu_bidx(oy - g.pad1 + s, g.H, g.mode);
        for (int t = 0; t < g.T; t++) {
            int64_t c = tc__cu_bidx(ox - g.pad2 + t, g.W, g.mode);
            float v = (r < 0 || c < 0) ? g.cval : xp[r * g.W + c];
            acc += v * tc__seed2d_cmask[s * g.T + t];
        }
    }
    y[(pl * g.Q + oy) * g.O + ox] = acc;
}

/* pitched input: row `pl*H + r` starts at buf + (pl*H + r) * pitch bytes */
__global__ void seed_tiled2d_pitch(const char *buf, size_t pitch, float *y,
                                   const float *__restrict__ w, g2d g, int64_t gy0,
                                   int64_t gz0) {
    extern __shared__ float tile[];
    const int TWID = SEED2_TILE + g.T - 1, THGT = SEED2_TILE + g.S - 1;
    int64_t ox0 = (int64_t)blockIdx.x * SEED2_TILE;
    int64_t oy0 = ((int64_t)blockIdx.y + gy0) * SEED2_TILE;
    int64_t pl = (int64_t)blockIdx.z + gz0;
    int tid = threadIdx.y * SEED2_TILE + threadIdx.x;
    for (int i = tid; i < TWID * THGT; i += SEED2_TILE * SEED2_TILE) {
        int rr = i / TWID, cc = i % TWID;
        int64_t r = tc__cu_bidx(oy0 - g.pad1 + rr, g.H, g.mode);
        int64_t c = tc__cu_bidx(ox0 - g.pad2 + cc, g.W, g.mode);
        tile[i] = (r < 0 || c < 0)
                      ? g.cval
                      : ((const float *)(buf + (size_t)(pl * g.H + r) * pitch))[c];
    }
    __syncthreads();
    int64_t ox = ox0 + threadIdx.x, oy = oy0 + threadIdx.y;
    if (ox >= g.O || oy >= g.Q) return;
    float acc = 0.f;
    for (int s = 0; s < g.S; s++)
        for (int t = 0; t < g.T; t++)
            acc += tile[(threadIdx.y + s) * TWID + threadIdx.x + t] * w[s * g.T + t];
    y[(pl * g.Q + oy) * g.O + ox] = acc;
}

/* texture rows: plane `pl - pl0` of this group, row r -> (pl-pl0)*H + r */
__global__ void seed_texture2d(cudaTextureObject_t tex, float *y,
                               const float *__restrict__ w, g2d g, int64_t pl0,
                               int64_t gy0, int64_t gz0) {
    int64_t ox = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t oy = ((int64_t)blockIdx.y + gy0) * blockDim.y + threadIdx.y;
    int64_t lp = (int64_t)blockIdx.z + gz0;
    if (ox >= g.O || oy >= g.Q) return;
    float acc = 0.f;
    for (int s = 0; s < g.S; s++) {
        int64_t r = tc__cu_bidx(oy - g.pad1 + s, g.H, g.mode);
        for (int t = 0; t < g.T; t++) {
            int64_t c = tc__cu_bidx(ox - g.pad2 + t, g.W, g.mode);
            float v = (r < 0 || c < 0)
                          ? g.cval
                          : tex2D<float>(tex, (float)c + 0.5f, (float)(lp * g.H + r) + 0.5f);
            acc += v * w[s * g.T + t];
        }
    }
    y[((pl0 + lp) * g.Q + oy) * g.O + ox] = acc;
}

enum { K_CONST, K_PITCH, K_TEX };
static pthread_mutex_t cmask_mu = PTHREAD_MUTEX_INITIALIZER;

static tc_status launch_const(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    g2d g = geom(p);
    int64_t gx = tc__cu_div_up(g.O, 16), gyn = tc__cu_div_up(g.Q, 16), pl = nplanes(p);
    pthread_mutex_lock(&cmask_mu); /* one symbol for all plans */
    cudaError_t e = cudaMemcpyToSymbolAsync(tc__seed2d_cmask, b->hw, (size_t)g.S * g.T * 4, 0,
                                            cudaMemcpyHostToDevice, b->s);
    TC__CU_FOR_GRID(gyn, pl, {
        if (e == cudaSuccess) {
            seed_const2d<<<dim3((unsigned)gx, gny, gnz), dim3(16, 16), 0, b->s>>>(
                (const float *)b->x, (float *)b->y, g, gy0, gz0);
            e = cudaGetLastError();
        }
    })
    if (e == cudaSuccess) e = cudaStreamSynchronize(b->s);
    pthread_mutex_unlock(&cmask_mu);
    if (e != cudaSuccess) return tc__cu_fail(e, "cuda.filter.seed-const2d", __FILE__, __LINE__);
    return TC_OK;
}

/* Copies the dense input into a new pitched buffer. */
static tc_status to_pitched(const tc__cu_bufs *b, const g2d &g, int64_t planes, void **buf,
                            size_t *pitch) {
    TC_CU(cudaMallocPitch(buf, pitch, (size_t)g.W * 4, (size_t)(planes * g.H)));
    cudaError_t e = cudaMemcpy2DAsync(*buf, *pitch, b->x, (size_t)g.W * 4, (size_t)g.W * 4,
                                      (size_t)(planes * g.H), cudaMemcpyDeviceToDevice, b->s);
    if (e != cudaSuccess) {
        cudaFree(*buf);
        return tc__cu_fail(e, "cudaMemcpy2DAsync (pitched staging)", __FILE__, __LINE__);
    }
    return TC_OK;
}

static tc_status launch_pitch(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    g2d g = geom(p);
    int64_t planes = nplanes(p);
    void *buf;
    size_t pitch;
    tc_status st = to_pitched(b, g, planes, &buf, &pitch);
    if (st) return st;
    int64_t gx = tc__cu_div_up(g.O, SEED2_TILE), gyn = tc__cu_div_up(g.Q, SEED2_TILE);
    size_t smem = (size_t)(SEED2_TILE + g.S - 1) * (SEED2_TILE + g.T - 1) * 4;
    cudaError_t e = cudaSuccess;
    TC__CU_FOR_GRID(gyn, planes, {
        if (e == cudaSuccess) {
            seed_tiled2d_pitch<<<dim3((unsigned)gx, gny, gnz), dim3(SEED2_TILE, SEED2_TILE), smem,
                                 b->s>>>((const char *)buf, pitch, (float *)b->y,
                                         (const float *)b->w, g, gy0, gz0);
            e = cudaGetLastError();
        }
    })
    if (e == cudaSuccess) e = cudaStreamSynchronize(b->s);
    cudaFree(buf);
    if (e != cudaSuccess) return tc__cu_fail(e, "cuda.filter.seed-tiled2d-pitch", __FILE__, __LINE__);
    return TC_OK;
}

static tc_status launch_tex(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    const tc__cu_device *d = tc__cu_dev();
    g2d g = geom(p);
    int64_t planes = nplanes(p);
    void *buf;
    size_t pitch;
    tc_status st = to_pitched(b, g, planes, &buf, &pitch);
    if (st) return st;
    int64_t per = d->tex2d_linear_h / g.H; /* planes per texture */
    if (per < 1) per = 1;
    int64_t gx = tc__cu_div_up(g.O, 16), gyn = tc__cu_div_up(g.Q, 16);
    cudaError_t e = cudaSuccess;
    for (int64_t pl0 = 0; pl0 < planes && e == cudaSuccess; pl0 += per) {
        int64_t np = planes - pl0 < per ? planes - pl0 : per;
        cudaResourceDesc rd;
        memset(&rd, 0, sizeof rd);
        rd.resType = cudaResourceTypePitch2D;
        rd.res.pitch2D.devPtr = (char *)buf + (size_t)(pl0 * g.H) * pitch;
        rd.res.pitch2D.desc = cudaCreateChannelDesc<float>();
        rd.res.pitch2D.width = (size_t)g.W;
        rd.res.pitch2D.height = (size_t)(np * g.H);
        rd.res.pitch2D.pitchInBytes = pitch;
        cudaTextureDesc td;
        memset(&td, 0, sizeof td);
        td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
        td.filterMode = cudaFilterModePoint;
        td.readMode = cudaReadModeElementType;
        td.normalizedCoords = 0;
        cudaTextureObject_t tex = 0;
        e = cudaCreateTextureObject(&tex, &rd, &td, NULL);
        if (e != cudaSuccess) break;
        TC__CU_FOR_GRID(gyn, np, {
            if (e == cudaSuccess) {
                seed_texture2d<<<dim3((unsigned)gx, gny, gnz), dim3(16, 16), 0, b->s>>>(
                    tex, (float *)b->y, (const float *)b->w, g, pl0, gy0, gz0);
                e = cudaGetLastError();
            }
        })
        cudaError_t e2 = cudaStreamSynchronize(b->s);
        if (e == cudaSuccess) e = e2;
        cudaDestroyTextureObject(tex);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(b->s);
    cudaFree(buf);
    if (e != cudaSuccess) return tc__cu_fail(e, "cuda.filter.seed-texture2d", __FILE__, __LINE__);
    return TC_OK;
}

static int base_ok(const tc__problem *p, char *why, size_t n) {
    if (p->op != TC_OP_FILTER || p->dtype != TC_FLOAT32) {
        if (why) snprintf(why, n, "float32 filters only");
        return 0;
    }
    if (p->msk[0] != 1) {
        if (why) snprintf(why, n, "1D or 2D masks only (mask has %lld planes)",
                          (long long)p->msk[0]);
        return 0;
    }
    return 1;
}
static int app_const(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!base_ok(p, why, n)) return 0;
    if (p->msk[1] * p->msk[2] > SEED2_CONST_MAX) {
        if (why) snprintf(why, n, "mask of %lld taps exceeds the %d-float __constant__ buffer",
                          (long long)(p->msk[1] * p->msk[2]), SEED2_CONST_MAX);
        return 0;
    }
    return 1;
}
static int app_pitch(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!base_ok(p, why, n)) return 0;
    if (p->msk[1] > SEED2_TILED_MAX || p->msk[2] > SEED2_TILED_MAX) {
        if (why) snprintf(why, n, "mask larger than %dx%d does not fit the shared tile",
                          SEED2_TILED_MAX, SEED2_TILED_MAX);
        return 0;
    }
    return 1;
}
static int app_tex(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!base_ok(p, why, n)) return 0;
    const tc__cu_device *d = tc__cu_dev();
    if (d && (p->in[2] > d->tex2d_linear_w || p->in[1] > d->tex2d_linear_h)) {
        if (why) snprintf(why, n, "plane %lldx%lld exceeds the pitched-texture limit %dx%d",
                          (long long)p->in[1], (long long)p->in[2], d->tex2d_linear_h,
                          d->tex2d_linear_w);
        return 0;
    }
    return 1;
}
static double est(const tc__problem *p, const tc__env *e) {
    return 3.0 * tc__cu_estimate(tc__problem_bytes(p) * 2, tc__problem_flops(p), 0.08);
}

struct s2 { void *dmask; };
static tc_status plan2(const tc__problem *p, const tc__env *e, void **state) {
    s2 *s = (s2 *)calloc(1, sizeof *s);
    if (!s) return tc__error(TC_ERR_OUT_OF_MEMORY, "cuda.seed: out of memory");
    tc_status st = tc__cu_mask_upload(p, &s->dmask);
    if (st) { free(s); return st; }
    *state = s;
    return TC_OK;
}
static void destroy2(void *state) {
    s2 *s = (s2 *)state;
    if (s) tc__cu_mask_free(s->dmask);
    free(s);
}
template <int KIND> static tc_status exec2(const tc__args *a) {
    const s2 *s = (const s2 *)a->state;
    return tc__cu_run(a, s ? s->dmask : NULL, 1,
                      KIND == K_CONST ? launch_const : KIND == K_PITCH ? launch_pitch : launch_tex);
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_seed_const2d) = {
    "cuda.filter.seed-const2d", TC_BACKEND_CUDA, TC_OP_FILTER,
    "Seed 000: 2D, one thread per output, mask in __constant__ memory (<= 4096 taps).",
    tc__cu_available, app_const, est, NULL, plan2, destroy2, exec2<K_CONST>,
    NULL, NULL, NULL, 0, tc__cu_report_seed2d,
};
TC__CU_SOLVER(tc__solver_cuda_seed_tiled2d_pitch) = {
    "cuda.filter.seed-tiled2d-pitch", TC_BACKEND_CUDA, TC_OP_FILTER,
    "Seed 000: 2D tiled (16x16 + halo in shared memory) over a cudaMallocPitch copy of the input.",
    tc__cu_available, app_pitch, est, NULL, plan2, destroy2, exec2<K_PITCH>,
    NULL, NULL, NULL, 0, tc__cu_report_seed2d,
};
TC__CU_SOLVER(tc__solver_cuda_seed_texture2d) = {
    "cuda.filter.seed-texture2d", TC_BACKEND_CUDA, TC_OP_FILTER,
    "Seed 000: 2D through a texture object on a pitched buffer (point sampling, mode mapped first).",
    tc__cu_available, app_tex, est, NULL, plan2, destroy2, exec2<K_TEX>,
    NULL, NULL, NULL, 0, tc__cu_report_seed2d,
};

void tc__cu_report_seed2d(tc__cu_report *r) {
    tc__cu_report_kernel(r, "cuda.filter.seed-const2d", (const void *)seed_const2d, 256, 0);
    tc__cu_report_kernel(r, "cuda.filter.seed-tiled2d-pitch (mask 5x5)", (const void *)seed_tiled2d_pitch,
                         256, 20 * 20 * 4);
    tc__cu_report_kernel(r, "cuda.filter.seed-texture2d", (const void *)seed_texture2d, 256, 0);
}
