/* conv_winograd.c - Winograd F(2x2, 3x3) convolution layers (solver
 * "cpu.conv.winograd"; seed 000/002's strength reduction): 3x3, stride 1,
 * dilation 1, 2D, every padding mode, groups, bias; float32 on AVX-512.
 *
 * Lavin's minimal filtering: with U = G g G^T (4x4, from each 3x3 kernel)
 * and V = B^T d B (4x4, from each 4x4 input tile at stride 2), every 2x2
 * output tile is Y = A^T [sum_c U_kc (.) V_c] A. The sum over channels,
 * for each of the 16 positions xi of the transformed tile, is a GEMM:
 * M_xi (K x tiles) = U_xi (K x C) * V_xi (C x tiles): 16 GEMMs of the
 * direct method's size with 2.25x fewer multiplies overall (16 per 4
 * outputs against 36).
 *
 * Fused per block of 32 tiles (one NR panel of the packed GEMM's 14x32
 * micro-kernel) so the transformed data stays in L2: the input transform
 * writes V_xi for all channels straight into the micro-kernel's B-panel
 * layout (16 tiles of one tile row per AVX-512 vector, the boundary mode
 * applied while reading the 4 input rows), the 16 GEMMs run against the
 * weights' U_xi packed once per plan (wpack, MR-row panels), and the output
 * transform (bias included) writes the 2x2 tiles to NCHW. Work items are
 * (group, block of tiles, group of A panels): K is split when there are
 * too few blocks for the threads (512 channels @7 has 16 tiles).
 *
 * Error: Winograd's transforms add roundoff that grows with the channel
 * count; measured and bounded in docs/semantics.md. F(4x4, 3x3) (4x fewer
 * multiplies, larger error) is not built yet. */
#include "gemm_packed.h"

#include <stdio.h>
#include <string.h>

void tc__wg_in_f23_avx512(const float *const rows[4], float *dst, int64_t xi_stride, int len);
void tc__wg_out_f23_avx512(const float *src, int64_t xi_stride, float bias, float *out0,
                           float *out1);

#define WG_MR 14
#define WG_NR 32
#define WG_XI 16

typedef struct wg_geom {
    int64_t Cg, Kg, npan, TH, TW, T, nblk, kgroups, ppg;
    int64_t vstride, mstride; /* floats between xi planes of V and M */
    size_t vbytes, mbytes, per_thread;
} wg_geom;

static int64_t wg_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static size_t wg_rup(size_t v) { return (v + 63) & ~(size_t)63; }

static void wg_geometry(const tc__problem *p, int threads, wg_geom *g) {
    g->Cg = p->C / p->G;
    g->Kg = p->K / p->G;
    g->npan = wg_cdiv(g->Kg, WG_MR);
    g->TH = wg_cdiv(p->out[1], 2);
    g->TW = wg_cdiv(p->out[2], 2);
    g->T = p->N * g->TH * g->TW;
    g->nblk = wg_cdiv(g->T, WG_NR);
    g->kgroups = 1;
    int64_t items = p->G * g->nblk;
    if (items < 2 * threads) {
        g->kgroups = wg_cdiv(2 * threads, items);
        if (g->kgroups > g->npan) g->kgroups = g->npan;
    }
    g->ppg = wg_cdiv(g->npan, g->kgroups);
    g->kgroups = wg_cdiv(g->npan, g->ppg);
    g->vstride = g->Cg * WG_NR + 16;
    g->mstride = g->npan * WG_MR * WG_NR + 16;
    g->vbytes = wg_rup((size_t)(WG_XI * g->vstride) * sizeof(float));
    g->mbytes = wg_rup((size_t)(WG_XI * g->mstride) * sizeof(float));
    g->per_thread = g->vbytes + g->mbytes + wg_rup(4 * 48 * sizeof(float)) + 256;
}

static int wg_available(void) { return (tc__cpu_detect() & TC__CPU_AVX512) != 0; }

static int wg_applicable(const tc__problem *p, const tc__env *env, char *why, size_t n) {
    const char *r = NULL;
    if (p->op != TC_OP_CONV) r = "convolution layers only";
    else if (p->dtype != TC_FLOAT32) r = "float32 only";
    else if (p->msk[0] != 1 || p->msk[1] != 3 || p->msk[2] != 3 || p->in[0] != 1)
        r = "2D 3x3 kernels only";
    else if (p->stride[1] != 1 || p->stride[2] != 1 || p->dil[1] != 1 || p->dil[2] != 1)
        r = "stride 1 and dilation 1 only";
    else if (!(tc__cpu_detect() & TC__CPU_AVX512)) r = "needs AVX-512";
    if (r) {
        if (why) snprintf(why, n, "%s", r);
        return 0;
    }
    wg_geom g;
    wg_geometry(p, env->threads, &g);
    if (g.Cg > (1 << 20) || g.Kg > (1 << 20)) {
        if (why) snprintf(why, n, "channel counts too large for the transform buffers");
        return 0;
    }
    return 1;
}

static size_t wg_workspace(const tc__problem *p, const tc__env *env) {
    wg_geom g;
    wg_geometry(p, env->threads, &g);
    return (size_t)env->threads * g.per_thread;
}

static size_t wg_wpack_size(const tc__problem *p, const tc__env *env) {
    wg_geom g;
    wg_geometry(p, env->threads, &g);
    return (size_t)(p->G * WG_XI * g.npan * g.Cg * WG_MR) * sizeof(float);
}

/* U = G g G^T per (k, c), packed [g][xi][panel][c][14]. */
static tc_status wg_wpack(const tc__problem *p, const tc__env *env, const void *state,
                          const void *wv, void *dst) {
    wg_geom g;
    wg_geometry(p, env->threads, &g);
    const float *w = wv;
    float *U = dst;
    const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    for (int64_t gi = 0; gi < p->G; gi++)
        for (int64_t q = 0; q < g.npan; q++)
            for (int64_t c = 0; c < g.Cg; c++)
                for (int i = 0; i < WG_MR; i++) {
                    int64_t k = q * WG_MR + i;
                    double u[4][4] = {{0}};
                    if (k < g.Kg) {
                        const float *gk = w + ((gi * g.Kg + k) * g.Cg + c) * 9;
                        double t[4][3];
                        for (int a = 0; a < 4; a++)
                            for (int b = 0; b < 3; b++)
                                t[a][b] = G[a][0] * gk[0 * 3 + b] + G[a][1] * gk[1 * 3 + b] +
                                          G[a][2] * gk[2 * 3 + b];
                        for (int a = 0; a < 4; a++)
                            for (int b = 0; b < 4; b++)
                                u[a][b] = t[a][0] * G[b][0] + t[a][1] * G[b][1] + t[a][2] * G[b][2];
                    }
                    for (int xi = 0; xi < WG_XI; xi++)
                        U[((((gi * WG_XI + xi) * g.npan + q) * g.Cg + c) * WG_MR) + i] =
                            (float)u[xi / 4][xi % 4];
                }
    return TC_OK;
}

typedef struct wg_job {
    const tc__args *a;
    wg_geom g;
} wg_job;

typedef struct wg_seg { int64_t n, ty, tx0, len, col; } wg_seg;

static int wg_segments(const wg_geom *g, int64_t t0, int64_t t1, wg_seg *s) {
    int ns = 0;
    for (int64_t t = t0; t < t1;) {
        int64_t tx = t % g->TW, r = t / g->TW;
        int64_t len = g->TW - tx;
        if (len > 16) len = 16;
        if (t + len > t1) len = t1 - t;
        s[ns].n = r / g->TH;
        s[ns].ty = r % g->TH;
        s[ns].tx0 = tx;
        s[ns].len = len;
        s[ns].col = t - t0;
        ns++;
        t += len;
    }
    return ns;
}

static void wg_items(void *arg, int64_t begin, int64_t end, int tid) {
    wg_job *j = arg;
    const tc__args *a = j->a;
    const tc__problem *p = a->p;
    const wg_geom *g = &j->g;
    char *mine = (char *)a->ws + (size_t)tid * g->per_thread;
    float *V = (float *)mine, *M = (float *)(mine + g->vbytes);
    float *tmp = (float *)(mine + g->vbytes + g->mbytes); /* 4 rows x 48 */
    const int64_t H = p->in[1], W = p->in[2], OH = p->out[1], OW = p->out[2];
    const int64_t pt = p->pad_lo[1], pl = p->pad_lo[2];
    const float cval = (float)p->cval;
    wg_seg seg[WG_NR];
    for (int64_t it = begin; it < end; it++) {
        int64_t kg = it % g->kgroups, t = it / g->kgroups;
        int64_t blk = t % g->nblk, gi = t / g->nblk;
        int64_t t0 = blk * WG_NR, t1 = t0 + WG_NR < g->T ? t0 + WG_NR : g->T;
        int nr = (int)(t1 - t0);
        int ns = wg_segments(g, t0, t1, seg);
        /* input transform: V[xi][c][col] */
        if (nr < WG_NR) /* the unused columns of a partial block: zeros */
            for (int xi = 0; xi < WG_XI; xi++)
                for (int64_t c = 0; c < g->Cg; c++)
                    memset(V + xi * g->vstride + c * WG_NR + nr, 0,
                           (size_t)(WG_NR - nr) * sizeof(float));
        for (int64_t c = 0; c < g->Cg; c++)
            for (int s = 0; s < ns; s++) {
                const wg_seg *sg = &seg[s];
                const float *plane =
                    (const float *)a->x + ((sg->n * p->C + gi * g->Cg + c) * H) * W;
                const float *rows[4];
                int64_t x0 = 2 * sg->tx0 - pl;
                for (int r = 0; r < 4; r++) {
                    int64_t by = tc__boundary_index(2 * sg->ty + r - pt, H, p->mode);
                    float *tr = tmp + r * 48;
                    if (by < 0) {
                        for (int e = 0; e < 34; e++) tr[e] = cval;
                        rows[r] = tr;
                    } else if (x0 >= 0 && x0 + 34 <= W) {
                        rows[r] = plane + by * W + x0;
                    } else {
                        const float *row = plane + by * W;
                        for (int e = 0; e < 34; e++) {
                            int64_t bx = tc__boundary_index(x0 + e, W, p->mode);
                            tr[e] = bx < 0 ? cval : row[bx];
                        }
                        rows[r] = tr;
                    }
                }
                tc__wg_in_f23_avx512(rows, V + c * WG_NR + sg->col, g->vstride, (int)sg->len);
            }
        /* 16 GEMMs: M[xi][k][col] = U[xi] (K x C) V[xi] (C x cols) */
        int64_t q0 = kg * g->ppg, q1 = q0 + g->ppg < g->npan ? q0 + g->ppg : g->npan;
        const float *U = (const float *)a->wpack;
        for (int xi = 0; xi < WG_XI; xi++)
            for (int64_t q = q0; q < q1; q++) {
                int mr = (int)(g->Kg - q * WG_MR < WG_MR ? g->Kg - q * WG_MR : WG_MR);
                const float *Ap = U + (((gi * WG_XI + xi) * g->npan + q) * g->Cg) * WG_MR;
                tc__f32_gemm_ukernel_14x32__avx512(g->Cg, Ap, V + xi * g->vstride,
                                                   M + xi * g->mstride + q * WG_MR * WG_NR,
                                                   WG_NR, 1.0f, 0.0f, mr, nr);
            }
        /* output transform and store */
        float o0[32], o1[32];
        int64_t k0 = q0 * WG_MR, k1 = q1 * WG_MR < g->Kg ? q1 * WG_MR : g->Kg;
        for (int64_t k = k0; k < k1; k++) {
            int64_t kk = gi * g->Kg + k;
            float bias = p->has_bias ? ((const float *)a->bias)[kk] : 0.0f;
            for (int s = 0; s < ns; s++) {
                const wg_seg *sg = &seg[s];
                tc__wg_out_f23_avx512(M + k * WG_NR + sg->col, g->mstride, bias, o0, o1);
                int64_t ox = 2 * sg->tx0, cnt = 2 * sg->len;
                if (ox + cnt > OW) cnt = OW - ox;
                float *yp = (float *)a->y + ((sg->n * p->K + kk) * OH) * OW;
                int64_t oy = 2 * sg->ty;
                memcpy(yp + oy * OW + ox, o0, (size_t)cnt * sizeof(float));
                if (oy + 1 < OH) memcpy(yp + (oy + 1) * OW + ox, o1, (size_t)cnt * sizeof(float));
            }
        }
    }
}

static tc_status wg_execute(const tc__args *a) {
    const tc__problem *p = a->p;
    if (!a->wpack) return tc__error(TC_ERR_INTERNAL, "cpu.conv.winograd: weights not packed");
    wg_job j;
    j.a = a;
    wg_geometry(p, a->threads, &j.g);
    tc__parallel_for(a->threads, p->G * j.g.nblk * j.g.kgroups, wg_items, &j);
    return TC_OK;
}

/* Seconds: 16 GEMMs (16/36 of the direct FLOPs, over the padded tile grid)
 * at the micro-kernel's ~75% of peak with the MR fill, plus the transforms
 * (about 1.5 ns per transformed value per thread, measured order). */
static double wg_estimate(const tc__problem *p, const tc__env *env) {
    wg_geom g;
    wg_geometry(p, env->threads, &g);
    double fill_m = (double)g.Kg / (double)(g.npan * WG_MR);
    double fill_n = (double)g.T / (double)(g.nblk * WG_NR);
    double kfac = (double)g.Cg / (double)(g.Cg + 24);
    double gemm = 2.0 * p->G * WG_XI * (double)(g.npan * WG_MR) * (double)g.Cg *
                  (double)(g.nblk * WG_NR) * (double)g.kgroups / (double)g.kgroups;
    double items = (double)(p->G * g.nblk * g.kgroups);
    double par = items >= env->threads ? 1.0 : items / env->threads;
    double t_gemm = gemm / (tc__peak_flops(env) * 0.75 * fill_m * fill_n * kfac * par);
    double vals = (double)p->G * g.kgroups * WG_XI * (double)g.T * (double)(g.Cg + g.Kg);
    double t_tr = vals * 1.5e-10 / env->threads;
    return t_gemm + t_tr + tc__problem_bytes(p) / tc__peak_bandwidth(env);
}

const tc__solver tc__solver_cpu_conv_winograd = {
    .name = "cpu.conv.winograd",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_CONV,
    .summary = "Winograd F(2x2,3x3) for 3x3 stride-1 2D layers: transforms fused per 32-tile block, 16 GEMMs on the packed micro-kernel, weights transformed once; float32, AVX-512.",
    .available = wg_available,
    .applicable = wg_applicable,
    .estimate = wg_estimate,
    .workspace = wg_workspace,
    .execute = wg_execute,
    .wpack_size = wg_wpack_size,
    .wpack = wg_wpack,
};
