/*
 * igemm_select.cu - which kernel runs a conv layer of cuda.conv.igemm and
 * cuda.conv.igemm-tf32 (ig_run), the tiled kernel's tile shape and
 * split-K model, the device scratch bound, and the entry points the other
 * CUDA solvers call (cuda_common.h): tc__cu_conv_igemm (the Winograd
 * solvers' batched products), tc__cu_conv_igemm_fast, _scratch, _bias and
 * tc__cu_conv_fp32_layer.
 *
 * Forms, fp32: the tiled kernel (igemm_tiled.cu), or the generic one where
 * its 32-bit ranges do not take the layer. TF32 (the first that takes the
 * layer): the 1x1 stream (igemm_1x1_stream.cu) for 1x1 layers, the depth
 * ring (igemm_depth_ring.cu) for 3D ones, the shifted views with TMA
 * copies (igemm_shifted.cu) for 2D stride-1 zero-padded layers filling a
 * wave, else the tiled kernel's register-staged mma.sync form (its wgmma
 * form on the 32-row tile with zero padding). The wgmma forms need the
 * sm_90a image (cv_wgmma_ok). TILECONV_CUDA_CONV_TF32_KERNEL forces one, for tuning and
 * A/B: 1 the tiled mma.sync form with the cp.async gather, 4 the tiled
 * wgmma form, 7 / 8 the shifted views with cp.async / TMA copies, 11 / 12
 * the 1x1 stream's mma.sync / wgmma form, 13 the depth ring on any layer
 * it takes. 3xTF32 (cuda.conv.igemm-3xtf32, tf32 = IG_3XTF32): the shifted
 * views' 3xTF32 form (TMA) where it takes the layer (sv_select3), the 1x1
 * stream's (wgmma) on 1x1 layers with K/G <= 256, else the tiled kernel's
 * 3xTF32 mma.sync forms; any TILECONV_CUDA_CONV_TF32_KERNEL but 8 (shifted views) or 12
 * (1x1 stream) forces the tiled one.
 */
#include "cuda/conv/conv_internal.h"

#include <math.h>

namespace tc_conv {

/* Whether the device runs the sm_90a image (this file's probe; every file
 * of the implicit GEMM is compiled with the same images). At plan time:
 * cuda.conv.igemm-tf32's applicability asks first. */
int cv_wgmma_ok(void) { return ig_wgmma_ok(); }

int cv_base(const tc__problem *p, char *why, size_t n) {
    if (p->op != TC_OP_CONV) {
        if (why) snprintf(why, n, "convolution layers only");
        return 0;
    }
    if (p->dtype != TC_FLOAT32) {
        if (why) snprintf(why, n, "float32 only");
        return 0;
    }
    return 1;
}

cargs cv_args(const tc__problem *p) {
    cargs a;
    a.C = p->C; a.K = p->K; a.G = p->G;
    a.Cg = p->C / p->G; a.Kg = p->K / p->G;
    a.R = p->msk[0] * p->msk[1] * p->msk[2];
    a.Rl = a.Cg * a.R;
    a.in0 = p->in[0]; a.in1 = p->in[1]; a.in2 = p->in[2];
    a.m0 = p->msk[0]; a.m1 = p->msk[1]; a.m2 = p->msk[2];
    a.out0 = p->out[0]; a.out1 = p->out[1]; a.out2 = p->out[2];
    a.P = a.out0 * a.out1 * a.out2;
    a.NP = p->N * a.P;
    a.s0 = p->stride[0]; a.s1 = p->stride[1]; a.s2 = p->stride[2];
    a.d0 = p->dil[0]; a.d1 = p->dil[1]; a.d2 = p->dil[2];
    a.p0 = p->pad_lo[0]; a.p1 = p->pad_lo[1]; a.p2 = p->pad_lo[2];
    a.mode = (int)p->mode;
    a.cval = (float)p->cval;
    return a;
}

/* The bias on the device: in place, or staged into *own
 * (tc__cu_conv_bias, cuda_common.h). */
tc_status cv_bias(const tc__args *a, cudaStream_t s, const float **db, void **own) {
    *db = NULL;
    *own = NULL;
    if (!a->p->has_bias) return TC_OK;
    if (tc__cu_is_device(a->bias)) {
        *db = (const float *)a->bias;
        return TC_OK;
    }
    size_t bytes = (size_t)a->p->K * sizeof(float);
    tc_status st = tc__cu_alloc(own, bytes, s);
    if (st == TC_OK) st = tc__cu_h2d(*own, a->bias, bytes, s);
    *db = (const float *)*own;
    return st;
}

/* ---- the fast implicit GEMM: host side ---- */

/* Does the 32-bit fast kernel take the problem? (else the generic one) */
int ig_fast(const tc__problem *p) {
    const int64_t lim = INT32_MAX / 4;
    int64_t R = p->msk[0] * p->msk[1] * p->msk[2];
    int64_t Cg = p->C / p->G, Kg = p->K / p->G;
    int64_t P = p->out[0] * p->out[1] * p->out[2];
    int64_t plane = p->in[0] * p->in[1] * p->in[2];
    if (R > IG_TAPMAX || Cg * R > lim || P > lim || p->N * P > lim || plane > lim) return 0;
    if (p->C > lim || p->K > lim) return 0;
    /* 32-bit offsets: c * plane + window + tap within one image's channels,
     * row * (C/G * R) within one group's weights */
    if ((p->C + 2) * plane > lim || 130 * Cg * R > lim) return 0;
    if (tc__cu_div_up(Kg, 64) > 65535 || p->G > 65535) return 0;
    if (tc__cu_axis_reach(p) > lim) return 0; /* window origins and tap offsets in int */
    /* tap offsets (e0*in1 + e1)*in2 + e2 in int */
    int64_t e0 = (p->msk[0] - 1) * p->dil[0], e1 = (p->msk[1] - 1) * p->dil[1],
            e2 = (p->msk[2] - 1) * p->dil[2];
    if ((e0 * p->in[1] + e1) * p->in[2] + e2 > lim) return 0;
    return 1;
}

/* 1x1, stride 1, no padding, P % 4 == 0: B is X_n (C x P) itself */
int ig_is_1x1(const tc__problem *p) {
    for (int i = 0; i < 3; i++)
        if (p->msk[i] != 1 || p->stride[i] != 1 || p->pad_lo[i] != 0 || p->out[i] != p->in[i])
            return 0;
    return (p->out[0] * p->out[1] * p->out[2]) % 4 == 0;
}

igp ig_params(const tc__problem *p) {
    igp a;
    a.C = (int)p->C; a.K = (int)p->K; a.G = (int)p->G;
    a.Cg = (int)(p->C / p->G); a.Kg = (int)(p->K / p->G);
    a.R = (int)(p->msk[0] * p->msk[1] * p->msk[2]);
    a.Rl = a.Cg * a.R;
    a.P = (int)(p->out[0] * p->out[1] * p->out[2]);
    a.NP = (int)(p->N * a.P);
    a.in0 = (int)p->in[0]; a.in1 = (int)p->in[1]; a.in2 = (int)p->in[2];
    a.plane = a.in0 * a.in1 * a.in2;
    a.m0 = (int)p->msk[0]; a.m1 = (int)p->msk[1]; a.m2 = (int)p->msk[2];
    a.out1 = (int)p->out[1]; a.out2 = (int)p->out[2];
    a.s0 = (int)p->stride[0]; a.s1 = (int)p->stride[1]; a.s2 = (int)p->stride[2];
    a.d0 = (int)p->dil[0]; a.d1 = (int)p->dil[1]; a.d2 = (int)p->dil[2];
    a.p0 = (int)p->pad_lo[0]; a.p1 = (int)p->pad_lo[1]; a.p2 = (int)p->pad_lo[2];
    a.mode = (int)p->mode;
    a.cval = (float)p->cval;
    a.avec = 0;
    a.yvec = 0;
    a.ktps = 1;
    a.ltab = 0;
    return a;
}

/* the TF32 kind: the register-staged mma.sync form (which falls back to
 * the cp.async gather where it does not apply; ig_run takes the other
 * forms where they take the layer: TFV=11, 12 and 13 are read there);
 * TILECONV_CUDA_CONV_TF32_KERNEL=1, 4, 7 or 8 forces the cp.async mma.sync form or,
 * where the device runs it, the tiled wgmma form or the shifted views
 * with cp.async or TMA copies (tuning and A/B only: the tiled wgmma form
 * measured 0.88-1.13x of the default, docs/solvers/cuda-conv-igemm.md) */
static int ig_tf_kind(void) {
    const char *e = tc__knob_get(TC__KNOB_CUDA_CONV_TF32_KERNEL);
    const char c = e && e[0] && !e[1] ? e[0] : 0;
    if (c == '1') return IG_F_MMA;
    if (c == '4' && cv_wgmma_ok()) return IG_F_WGMMA;
    if (c == '7' && cv_wgmma_ok()) return IG_F_SHIFTED;     /* its own launcher (sv_run) */
    if (c == '8' && cv_wgmma_ok()) return IG_F_SHIFTED_TMA; /* sv_run with copies by TMA */
    return IG_F_MMA_RS;
}

/* Tile height BM and reduction splits S (split-K) by a small time model,
 * fitted to a sweep of forced shapes on the H100 (docs/solvers/cuda-conv-igemm.md):
 * the busiest SM runs ceil(blocks x S / SMs) blocks of k tiles
 * per split each, at the SM's measured rate (~30 TFLOP/s fp32, ~60 TF32 on
 * the whole GPU; the 64- and 32-row tiles at 0.85 and 0.6 of it: the same
 * gather per k tile for less arithmetic), plus, for S > 1, writing and
 * reading the partial sums at ~2.5 TB/s. A smaller tile only where it
 * wastes fewer rows; split only below two waves. */
static const double ig_rate[3] = {1.0, 0.85, 0.6};
/* with the reduction-row table (zero padding, R < 64, Rl <= IG_LTMAX) the
 * gather is cheaper and the smaller tiles lose less (a sweep on the H100:
 * 64 x 128 at 0.97-1.0 of the 128-row tile's rate, 32 x 128 ~0.78) */
static const double ig_rate_lt[3] = {1.0, 0.97, 0.75};
/* TF32 with the table (a sweep on the H100, the register-staged mma.sync
 * form): the 128-row tile
 * ran ~0.55 TFLOP/s per SM with 1-3 blocks resident, the 64-row tile ~0.88
 * of that, the 32-row one ~0.66; with 0.97 the model took 64 x 128 split 2
 * on 3x3 256 @14 (0.134 ms) where 128 x 128 split 4 ran 0.122 */
static const double ig_rate_lt_tf[3] = {1.0, 0.88, 0.66};
/* 128 rows only where K/G > 64, 32 only where K/G <= 32 */
static int ig_tile_ok(int bi, int Kg) { return bi == 0 ? Kg > 64 : bi == 1 ? 1 : Kg <= 32; }
static ig_shape ig_choose(const igp &g, int tf32, int bk, int sms, const int occ[3], int lt) {
    const double *rate = lt ? (tf32 ? ig_rate_lt_tf : ig_rate_lt) : ig_rate;
    const int KT = (int)tc__cu_div_up(g.Rl, bk);
    ig_shape best = {g.Kg <= 32 ? 2 : g.Kg <= 64 ? 1 : 0, 1, KT};
    double tbest = 1e30;
    const double rsm = (tf32 ? 72e12 : 30e12) / 132;
    for (int bi = 0; bi < 3; bi++) {
        if (!ig_tile_ok(bi, g.Kg) || occ[bi] < 1) continue;
        const int bm = ig_bm[bi];
        const int64_t slots = (int64_t)occ[bi] * sms;
        const int64_t blocks = tc__cu_div_up(g.NP, IG_BN) * tc__cu_div_up(g.Kg, bm) * g.G;
        for (int s = 1; s <= IG_MAXSPLIT; s++) {
            if (s > 1 && (blocks >= 2 * slots || (int64_t)g.G * s > 65535)) break;
            int per = (int)tc__cu_div_up(KT, s);
            if (s > 1 && per * bk < 128) break;
            int sr = (int)tc__cu_div_up(KT, per);
            double nb = (double)tc__cu_div_up(blocks * sr, sms);
            double t = nb * per * (2.0 * bm * IG_BN * bk) / (rsm * rate[bi]);
            if (sr > 1) t += (2.0 * sr + 1) * g.K * (double)g.NP * 4 / 2.5e12 + 3e-6;
            if (t < tbest) {
                tbest = t;
                best.bi = bi;
                best.S = sr;
                best.ktps = per;
            }
        }
    }
    return best;
}

/* The tile and split ig_run launches for kernel kind `kind` with loader
 * lm (the shape model, or TILECONV_CUDA_CONV_SHAPE); occ[] gets each tile's
 * resident blocks (its kernel set up here). ig_run and the device
 * scratch bound (tc__cu_conv_igemm_scratch) both ask here. */
tc_status ig_pick_shape(const igp &g, int tf32, int kind, int lm, int occ[3], ig_shape *out) {
    const int bk = ig_kbk[kind];
    tc_status st;
    for (int bi = 0; bi < 3; bi++)
        if (ig_tile_ok(bi, g.Kg) && (st = ig_prepare(bi, kind, lm, &occ[bi], tf32 == IG_3XTF32)))
            return st;
    const tc__cu_device *d = tc__cu_dev();
    const int lt_ok = lm == IG_ZEROS && g.R < 64 &&
                      tc__cu_div_up(g.Rl, bk) * bk <= IG_LTMAX && !tc__knob_get(TC__KNOB_CUDA_CONV_NO_ROW_TABLE);
    ig_shape sh = ig_choose(g, tf32, bk, d ? d->sms : 132, occ, lt_ok);
    const char *fb = tc__knob_get(TC__KNOB_CUDA_CONV_SHAPE); /* "bm,S": tuning only */
    if (fb) {
        int fbm = 0, fs = 0;
        int nf = sscanf(fb, "%d,%d", &fbm, &fs);
        int fbi = fbm == 128 ? 0 : fbm == 64 ? 1 : fbm == 32 ? 2 : -1;
        if (nf == 2 && fbi >= 0 && occ[fbi] > 0 && fs >= 1 &&
            fs <= IG_MAXSPLIT && (int64_t)g.G * fs <= 65535) {
            int KT = (int)tc__cu_div_up(g.Rl, bk);
            sh.bi = fbi;
            sh.ktps = (int)tc__cu_div_up(KT, fs);
            sh.S = (int)tc__cu_div_up(KT, sh.ktps);
        }
    }
    *out = sh;
    return TC_OK;
}

/* the kernel kind for a plan's flags and loader (ig_tf_kind in TF32) */
static int ig_kind(int tf32, int lm) {
    if (tf32 == IG_3XTF32) return IG_F_MMA_RS; /* the tiled 3xTF32 kernel's form */
    const int kind = tf32 ? ig_tf_kind() : 0;
    /* the wgmma form has no 1x1 loader: the register-staged form's (IG_F_MMA's) */
    return kind == IG_F_WGMMA && lm == IG_1X1 ? IG_F_MMA_RS : kind;
}

tc_status ig_run(const tc__args *a, const tc__cu_bufs *b, int tf32) {
    const tc__problem *p = a->p;
    igp g = ig_params(p);
    const float *x = (const float *)b->x, *w = (const float *)b->w;
    float *y = (float *)b->y;
    const int lm = ig_is_1x1(p) && (uintptr_t)x % 16 == 0 ? IG_1X1
                   : (p->mode == TC_MODE_CONSTANT && p->cval == 0) ? IG_ZEROS
                                                                  : IG_REMAP;
    g.avec = g.Rl % 4 == 0 && (uintptr_t)w % 16 == 0;
    g.yvec = g.P % 4 == 0 && (uintptr_t)y % 16 == 0;
    int kind = ig_kind(tf32, lm);
    if (tf32 == IG_3XTF32) {
        sv_sel sel;
        if (lm == IG_ZEROS && sv_select3(p, g, &sel)) return sv_run(a, b, sel, lm);
        s1p qs;
        unsigned gxs = 0;
        size_t sms = 0;
        int wgs = 0;
        if (lm == IG_1X1 && s1_plan(p, g, w, &qs, &gxs, &sms, &wgs, 1))
            return s1_run(a, b, qs, gxs, sms, wgs, 1);
        return ig_run_tiled(a, b, g, tf32, kind, lm);
    }
    if (kind == IG_F_MMA_RS && lm == IG_1X1) { /* the 1x1 stream where it takes the layer */
        s1p qs;
        unsigned gxs = 0;
        size_t sms = 0;
        int wgs = 0;
        if (s1_plan(p, g, w, &qs, &gxs, &sms, &wgs)) return s1_run(a, b, qs, gxs, sms, wgs);
    }
    /* the depth ring: 3D layers by default, any layer it takes with TFV=13 */
    if (kind == IG_F_MMA_RS && lm == IG_ZEROS) {
        const char *f = tc__knob_get(TC__KNOB_CUDA_CONV_TF32_KERNEL);
        dr_sel sd;
        if ((f && !strcmp(f, "13") && dr_select(p, g, lm, &sd)) || dr_default(p, g, lm, NULL, &sd))
            return dr_run(a, b, sd);
    }
    {
        sv_sel sel;
        if ((kind == IG_F_MMA_RS && sv_default(p, g, lm, NULL, &sel)) ||
            ((kind == IG_F_SHIFTED || kind == IG_F_SHIFTED_TMA) &&
             sv_select(p, g, lm, kind == IG_F_SHIFTED_TMA, &sel)))
            return sv_run(a, b, sel, lm);
        /* the shifted views do not take the layer: the tiled kernel */
        if (kind == IG_F_SHIFTED || kind == IG_F_SHIFTED_TMA) kind = IG_F_MMA_RS;
    }
    return ig_run_tiled(a, b, g, tf32, kind, lm);
}

/* Partial-tile waste counted; the FP32 kernel at ~60% of the FP32 peak
 * (cuda.gemm.simt's rate; the generic kernel ~20%), the TF32 one at ~2x the FP32
 * peak (mma.sync); depthwise is memory-bound. */
double ig_fill(const tc__problem *p) {
    double Kg = (double)(p->K / p->G), NP = (double)p->N * p->out[0] * p->out[1] * p->out[2];
    int bm = Kg <= 32 ? 32 : Kg <= 64 ? 64 : 128;
    return Kg / (tc__cu_div_up((int64_t)Kg, bm) * (double)bm) * NP /
           (tc__cu_div_up((int64_t)NP, IG_BN) * (double)IG_BN);
}
/* A block's fixed cost (tap table, pipeline fill, epilogue), ~2 us of one
 * of ~3 slots per SM: what makes the implicit GEMM lose on grouped layers
 * with one or two output channels per group, where each block does one k
 * tile (without it the TF32 estimate chose cuda.conv.igemm-tf32 for a
 * stride-2 depthwise layer, measured 0.244 ms against 0.052 for
 * cuda.conv.depthwise). */
double ig_blocks_time(const tc__problem *p) {
    const int64_t Kg = p->K / p->G;
    const int64_t bm = Kg <= 32 ? 32 : Kg <= 64 ? 64 : 128;
    const double NP = (double)p->N * p->out[0] * p->out[1] * p->out[2];
    const double blocks = ceil(NP / IG_BN) * (double)tc__cu_div_up(Kg, bm) * (double)p->G;
    const tc__cu_device *d = tc__cu_dev();
    return blocks * 2e-6 / (3.0 * (d && d->sms > 0 ? d->sms : 132));
}

} // namespace tc_conv

using namespace tc_conv;

int tc__cu_conv_igemm_fast(const tc__problem *p) { return ig_fast(p); }
int tc__cu_conv_fp32_layer(const tc__problem *p, char *why, size_t n) { return cv_base(p, why, n); }

tc_status tc__cu_conv_bias(const tc__args *a, cudaStream_t s, const float **db, void **own) {
    return cv_bias(a, s, db, own);
}

/* cuda.conv.igemm(-tf32)'s device scratch, at most: the staged bias, and
 * the larger of the split-K partial sums (S x K x N*P floats at the shape
 * ig_run picks, for either loader where a 1x1 layer's depends on x's
 * alignment) and, in TF32 on the sm_90a image, the channels-last copies of
 * the shifted views and the depth ring (xT, then wT at a 1 KiB boundary;
 * sv_copies). The 1x1 stream and the generic kernel take none. */
size_t tc__cu_conv_igemm_scratch(const tc__problem *p, int tf32) {
    const size_t bias = p->has_bias ? (size_t)p->K * sizeof(float) : 0;
    if (!ig_fast(p)) return bias;
    const igp g = ig_params(p);
    const int lm0 = p->mode == TC_MODE_CONSTANT && p->cval == 0 ? IG_ZEROS : IG_REMAP;
    size_t split = 0;
    for (int t = 0; t < 1 + ig_is_1x1(p); t++) {
        const int lm = t ? IG_1X1 : lm0;
        int kind = ig_kind(tf32, lm);
        if (kind == IG_F_SHIFTED || kind == IG_F_SHIFTED_TMA)
            kind = IG_F_MMA_RS; /* the shifted views' copies are counted below */
        int occ[3] = {0, 0, 0};
        ig_shape sh;
        size_t S = IG_MAXSPLIT; /* the shape model unavailable: its largest split */
        if (ig_pick_shape(g, tf32, kind, lm, occ, &sh) == TC_OK)
            S = (size_t)sh.S;
        else
            tc__error_clear();
        const size_t b = S > 1 ? S * (size_t)g.K * (size_t)g.NP * sizeof(float) : 0;
        if (b > split) split = b;
    }
    size_t copies = 0;
    if (tf32 && cv_wgmma_ok()) {
        /* 3xTF32: hi and lo copies */
        const size_t xs = tf32 == IG_3XTF32 ? 2 : 1;
        const size_t nx = (size_t)p->N * (size_t)g.plane * (size_t)g.C;
        const size_t ckp = (size_t)tc__cu_div_up(g.Cg, SV_BK) * SV_BK;
        copies = (xs * nx * sizeof(float) + 1023) / 1024 * 1024 +
                 xs * (size_t)g.K * (size_t)g.R * ckp * sizeof(float);
    }
    return bias + (split > copies ? split : copies);
}

tc_status tc__cu_conv_igemm(const tc__problem *p, const void *x, const void *w, void *y,
                            cudaStream_t s, int tf32) {
    if (p->has_bias || !ig_fast(p))
        return tc__error(TC_ERR_UNSUPPORTED,
                         "cuda.conv.igemm: internal problem outside the fast kernel's range");
    tc__args a;
    memset(&a, 0, sizeof a);
    a.p = p;
    tc__cu_bufs b;
    b.x = x;
    b.y = y;
    b.w = w;
    b.hw = NULL;
    b.s = s;
    return ig_run(&a, &b, tf32);
}
