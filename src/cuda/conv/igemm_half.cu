/*
 * igemm_half.cu - cuda.conv.igemm-half: conv layers in float16 and bfloat16
 * on Hopper's tensor cores (wgmma m64nNk16, fp32 accumulation), channels-
 * last (NLC / NHWC / NDHWC) in and out, with the fused epilogue
 * y = act(acc + bias + residual) in the store, rounded once to the dtype.
 *
 * The layer as one GEMM per group g: Y[m][k] = sum_l A[m][l] * B[k][l],
 * m = (n, output position), k the output channel, l = (tap, c) with the
 * input channel fastest. In channels-last memory a row of A at one tap is
 * C/G contiguous channels, so A's tiles are gathered by 16-byte cp.async
 * copies of 8 channels (zero-filled outside the input: zero padding only);
 * the weights (dense K x C/G x taps, torch's layout) are repacked on every
 * call into B = K x (taps x Cp), Cp = C/G rounded up to 8, each row padded
 * with zeros to a multiple of 64 (one k step), in device scratch.
 *
 * Tiles: BM = 128 output positions (two warpgroups of 64) x BN = 64 or 128
 * output channels x BK = 64 (one 128-byte row a position: the 128-byte
 * swizzle of wgmma's K-major operands), 4 shared-memory stages, copies two
 * steps ahead. Layers with C/G not a multiple of 8 (conv1, C = 3) gather 8
 * channels through registers with bounds checks instead.
 */
#include "cuda/cuda_common.h"
#include "cuda/cuda_hopper.h" /* cp.async, wgmma descriptors, the probe */

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdlib.h>

namespace {

constexpr int HG_BM = 128, HG_BK = 64, HG_ST = 4, HG_THREADS = 256;
[[maybe_unused]] constexpr int HG_D = HG_ST - 2; /* k steps copied ahead */

struct hgp {
    int64_t M;            /* N * output positions */
    int64_t plane;        /* input positions an image */
    int C, K, Cg, Kg, Cp, taps, KRp, ksteps;
    int in0, in1, in2, out0, out1, out2, m1, m2;
    int s0, s1, s2, d0, d1, d2, p0, p1, p2;
    int act, has_bias, has_res, pairs;
};

/* D[64 x N] += A[64 x 16] * B[16 x N], both K-major in shared memory */
template <int N, bool BF> __device__ __forceinline__ void hg_mma(float *d, uint64_t da, uint64_t db);
#if IG_WGMMA
template <> __device__ __forceinline__ void hg_mma<64, false>(float *d, uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db)
                 : "memory");
}
template <> __device__ __forceinline__ void hg_mma<64, true>(float *d, uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db)
                 : "memory");
}
template <> __device__ __forceinline__ void hg_mma<128, false>(float *d, uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db)
                 : "memory");
}
template <> __device__ __forceinline__ void hg_mma<128, true>(float *d, uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db)
                 : "memory");
}
#else
template <int N, bool BF> __device__ __forceinline__ void hg_mma(float *, uint64_t, uint64_t) {}
#endif

template <bool BF> __device__ __forceinline__ float hg_ld(const uint16_t *p) {
    if (BF) return __bfloat162float(__ushort_as_bfloat16(*p));
    return __half2float(__ushort_as_half(*p));
}
template <bool BF> __device__ __forceinline__ uint16_t hg_cvt(float v) {
    if (BF) return __bfloat16_as_ushort(__float2bfloat16_rn(v));
    return __half_as_ushort(__float2half_rn(v));
}
/* the epilogue's activations, as tc__act_f (src/core/half.h) */
[[maybe_unused]] __device__ __forceinline__ float hg_act(int a, float v) {
    switch (a) {
    case TC_ACT_RELU: return v > 0.f || v != v ? v : 0.f;
    case TC_ACT_RELU6: return v != v ? v : v < 0.f ? 0.f : v > 6.f ? 6.f : v;
    case TC_ACT_SILU: return v / (1.0f + expf(-v));
    case TC_ACT_SIGMOID: return 1.0f / (1.0f + expf(-v));
    case TC_ACT_TANH: return tanhf(v);
    case TC_ACT_GELU: return 0.5f * v * (1.0f + erff(v * 0.70710678f));
    default: return v;
    }
}

/* 16-byte cp.async, zero-filled when bytes = 0 */
[[maybe_unused]] __device__ __forceinline__ void hg_cp16(unsigned dst, const void *src, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}

/* The weights K x Cg x taps (dense, torch's layout) to K x KRp, l = tap * Cp + c */
__global__ void k_hg_wpack(const uint16_t *__restrict__ w, uint16_t *__restrict__ wp, int64_t K,
                           int Cg, int Cp, int taps, int KRp) {
    const int64_t n = K * KRp;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = i / KRp;
        const int l = (int)(i - k * KRp), t = l / Cp, c = l - t * Cp;
        wp[i] = t < taps && c < Cg ? w[(k * Cg + c) * taps + t] : (uint16_t)0;
    }
}

/* One BM x BN tile of group blockIdx.z; VEC: 16-byte copies of x (C/G and C
 * multiples of 8, x 16-byte aligned), else a gather of 8 checked loads */
template <int BN, bool BF, bool VEC>
__global__ void __launch_bounds__(HG_THREADS, BN == 128 ? 1 : 2)
    k_hg_conv(const uint16_t *__restrict__ x, const uint16_t *__restrict__ wp,
              const uint16_t *__restrict__ bias, const uint16_t *res, uint16_t *y, hgp p) {
#if IG_WGMMA
    extern __shared__ uint8_t hg_smem_raw[];
    /* the 128-byte swizzle takes its phase from address bits 7-9: 1 KiB alignment */
    uint8_t *smem = (uint8_t *)(((uintptr_t)hg_smem_raw + 1023) & ~(uintptr_t)1023);
    constexpr int ABYTES = HG_BM * 128, BBYTES = BN * 128, SBYTES = ABYTES + BBYTES;
    const int tid = threadIdx.x, wg = tid >> 7;
    const int64_t m0 = (int64_t)blockIdx.x * HG_BM;
    const int n0 = blockIdx.y * BN, g = blockIdx.z;
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);

    /* this thread's A rows (tid / 8 + 32 i) and 16-byte column (tid % 8) */
    const int col = tid & 7, r0 = tid >> 3;
    int64_t rb[4];     /* image base (positions) */
    int ib0[4], ib1[4], ib2[4];
    for (int i = 0; i < 4; i++) {
        int64_t m = m0 + r0 + 32 * i;
        if (m < p.M) {
            int64_t q = m;
            const int o2 = (int)(q % p.out2); q /= p.out2;
            const int o1 = (int)(q % p.out1); q /= p.out1;
            const int o0 = (int)(q % p.out0); q /= p.out0;
            rb[i] = q * p.plane;
            ib0[i] = o0 * p.s0 - p.p0;
            ib1[i] = o1 * p.s1 - p.p1;
            ib2[i] = o2 * p.s2 - p.p2;
        } else {
            rb[i] = 0;
            ib0[i] = -(1 << 29); /* never inside */
            ib1[i] = ib2[i] = 0;
        }
    }
    /* the reduction position of this thread's column: tap (t0, t1, t2), channel c */
    int lc = col * 8, lt = 0, t0 = 0, t1 = 0, t2 = 0;
    while (lc >= p.Cp) {
        lc -= p.Cp;
        lt++;
        if (++t2 == p.m2) { t2 = 0; if (++t1 == p.m1) { t1 = 0; t0++; } }
    }
    const uint16_t *xg = x + (int64_t)g * p.Cg;
    const uint16_t *wg_rows = wp + ((int64_t)g * p.Kg + n0) * p.KRp;

    /* copies of k step kt into slot kt % ST; advances the thread's (tap, c) */
    auto load = [&](int kt) {
        const unsigned sa = sbase + (kt % HG_ST) * SBYTES, sb = sa + ABYTES;
        const bool tap_ok = lt < p.taps;
        const int e0 = t0 * p.d0, e1 = t1 * p.d1, e2 = t2 * p.d2;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int r = r0 + 32 * i;
            const unsigned dst = sa + r * 128 + ((col ^ (r & 7)) << 4);
            const int i0 = ib0[i] + e0, i1 = ib1[i] + e1, i2 = ib2[i] + e2;
            const bool ok = tap_ok && (unsigned)i0 < (unsigned)p.in0 &&
                            (unsigned)i1 < (unsigned)p.in1 && (unsigned)i2 < (unsigned)p.in2;
            const int64_t pos = rb[i] + ((int64_t)i0 * p.in1 + i1) * p.in2 + i2;
            if (VEC) {
                const uint16_t *src = ok ? xg + pos * p.C + lc : x;
                hg_cp16(dst, src, ok ? 16 : 0);
            } else {
                unsigned v[4] = {0, 0, 0, 0};
                if (ok) {
                    const uint16_t *src = xg + pos * p.C;
#pragma unroll
                    for (int j = 0; j < 8; j++)
                        if (lc + j < p.Cg) v[j >> 1] |= (unsigned)src[lc + j] << (16 * (j & 1));
                }
                asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v[0]),
                             "r"(v[1]), "r"(v[2]), "r"(v[3])
                             : "memory");
            }
        }
        /* B: BN rows of 8 columns */
#pragma unroll
        for (int i = 0; i < BN / 32; i++) {
            const int r = r0 + 32 * i;
            const unsigned dst = sb + r * 128 + ((col ^ (r & 7)) << 4);
            const bool ok = n0 + r < p.Kg;
            const uint16_t *src = ok ? wg_rows + (int64_t)r * p.KRp + (int64_t)kt * HG_BK + col * 8 : wp;
            hg_cp16(dst, src, ok ? 16 : 0);
        }
        /* the next k step: 64 further along l */
        lc += HG_BK;
        while (lc >= p.Cp) {
            lc -= p.Cp;
            lt++;
            if (++t2 == p.m2) { t2 = 0; if (++t1 == p.m1) { t1 = 0; t0++; } }
        }
    };

    float acc[BN / 2];
#pragma unroll
    for (int j = 0; j < BN / 2; j++) acc[j] = 0.f;

    const int KT = p.ksteps;
#pragma unroll
    for (int s = 0; s < HG_D; s++) {
        if (s < KT) load(s);
        ig_commit();
    }
    for (int kt = 0; kt < KT; kt++) {
        ig_wait<HG_D - 1>(); /* this thread's copies of step kt have landed */
        ig_proxy_fence();    /* ... and are visible to wgmma (async proxy) */
        __syncthreads();     /* everyone's; and every wgmma of step kt - 2 is done */
        if (kt + HG_D < KT) load(kt + HG_D);
        ig_commit();
        const uint8_t *As = smem + (kt % HG_ST) * SBYTES, *Bs = As + ABYTES;
        ig_wg_fence();
#pragma unroll
        for (int k16 = 0; k16 < 4; k16++)
            hg_mma<BN, BF>(acc, ig_desc_sw128(As + wg * 64 * 128 + k16 * 32),
                           ig_desc_sw128(Bs + k16 * 32));
        ig_wg_commit();
        ig_wg_wait<1>();
    }
    ig_wg_wait<0>();

    /* epilogue: accumulator j of thread (warp w, lane): row 16 w' + lane / 4 +
     * 8 ((j >> 1) & 1), column 8 (j >> 2) + 2 (lane & 3) + (j & 1) */
    const int lane = tid & 31, wr = (tid >> 5) & 3;
    const bool pairs = p.pairs;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int64_t m = m0 + wg * 64 + wr * 16 + (lane >> 2) + 8 * h;
        if (m >= p.M) continue;
        uint16_t *yr = y + m * p.K + (int64_t)g * p.Kg;
        const uint16_t *rr = p.has_res ? res + m * p.K + (int64_t)g * p.Kg : NULL;
#pragma unroll
        for (int jj = 0; jj < BN / 8; jj++) {
            const int n = n0 + 8 * jj + 2 * (lane & 3);
            if (n >= p.Kg) continue;
            float v0 = acc[4 * jj + 2 * h], v1 = acc[4 * jj + 2 * h + 1];
            if (pairs) {
                if (p.has_bias) {
                    const unsigned bb = *(const unsigned *)(bias + (int64_t)g * p.Kg + n);
                    v0 += hg_ld<BF>((const uint16_t *)&bb);
                    v1 += hg_ld<BF>((const uint16_t *)&bb + 1);
                }
                if (rr) {
                    const unsigned rv = *(const unsigned *)(rr + n);
                    v0 += hg_ld<BF>((const uint16_t *)&rv);
                    v1 += hg_ld<BF>((const uint16_t *)&rv + 1);
                }
                v0 = hg_act(p.act, v0);
                v1 = hg_act(p.act, v1);
                *(unsigned *)(yr + n) = (unsigned)hg_cvt<BF>(v0) | ((unsigned)hg_cvt<BF>(v1) << 16);
            } else {
                for (int e = 0; e < 2 && n + e < p.Kg; e++) {
                    float v = e ? v1 : v0;
                    if (p.has_bias) v += hg_ld<BF>(bias + (int64_t)g * p.Kg + n + e);
                    if (rr) v += hg_ld<BF>(rr + n + e);
                    yr[n + e] = hg_cvt<BF>(hg_act(p.act, v));
                }
            }
        }
    }
#endif
}

/* ---------------- host side ---------------- */

typedef void (*hg_kernel)(const uint16_t *, const uint16_t *, const uint16_t *, const uint16_t *,
                          uint16_t *, hgp);
#define HG_K3(BN, BF) {k_hg_conv<BN, BF, false>, k_hg_conv<BN, BF, true>}
static const hg_kernel hg_tab[2][2][2] = {{HG_K3(64, false), HG_K3(64, true)},
                                          {HG_K3(128, false), HG_K3(128, true)}};
static int hg_attr_set[IG_NDEV][2][2][2]; /* per device: the shared-memory attribute set */

static size_t hg_smem(int bn) { return (size_t)HG_ST * (HG_BM + bn) * 128 + 1024; }

static hgp hg_params(const tc__problem *p) {
    hgp q;
    memset(&q, 0, sizeof q);
    q.C = (int)p->C; q.K = (int)p->K;
    q.Cg = (int)(p->C / p->G); q.Kg = (int)(p->K / p->G);
    q.Cp = (q.Cg + 7) / 8 * 8;
    q.taps = (int)(p->msk[0] * p->msk[1] * p->msk[2]);
    const int64_t kr = (int64_t)q.taps * q.Cp;
    q.KRp = (int)((kr + HG_BK - 1) / HG_BK * HG_BK);
    q.ksteps = q.KRp / HG_BK;
    q.in0 = (int)p->in[0]; q.in1 = (int)p->in[1]; q.in2 = (int)p->in[2];
    q.out0 = (int)p->out[0]; q.out1 = (int)p->out[1]; q.out2 = (int)p->out[2];
    q.m1 = (int)p->msk[1]; q.m2 = (int)p->msk[2];
    q.s0 = (int)p->stride[0]; q.s1 = (int)p->stride[1]; q.s2 = (int)p->stride[2];
    q.d0 = (int)p->dil[0]; q.d1 = (int)p->dil[1]; q.d2 = (int)p->dil[2];
    q.p0 = (int)p->pad_lo[0]; q.p1 = (int)p->pad_lo[1]; q.p2 = (int)p->pad_lo[2];
    q.plane = p->in[0] * p->in[1] * p->in[2];
    q.M = p->N * p->out[0] * p->out[1] * p->out[2];
    q.act = (int)p->act;
    q.has_bias = p->has_bias;
    q.has_res = p->has_residual;
    return q;
}

/* the tile width: 64 for narrow groups or too few 128-wide tiles to fill the
 * SMs twice; TC_CUDA_HALF_BN=64/128 forces one (tuning) */
static int hg_bn(const tc__problem *p, const hgp &q) {
    const char *f = getenv("TC_CUDA_HALF_BN");
    if (f && !strcmp(f, "64")) return 64;
    if (f && !strcmp(f, "128")) return 128;
    if (q.Kg <= 64) return 64;
    const tc__cu_device *d = tc__cu_dev();
    const int sms = d ? d->sms : 132;
    const int64_t t128 = tc__cu_div_up(q.M, HG_BM) * tc__cu_div_up(q.Kg, 128) * p->G;
    return t128 < 2 * (int64_t)sms ? 64 : 128;
}

static size_t hg_wpack_bytes(const tc__problem *p) {
    const hgp q = hg_params(p);
    return (size_t)p->K * (size_t)q.KRp * sizeof(uint16_t);
}

/* an operand of `bytes` on the device: in place, or staged into *own */
static tc_status hg_operand(const void *h, size_t bytes, cudaStream_t s, const void **d,
                            void **own) {
    *own = NULL;
    if (tc__cu_is_device(h)) {
        *d = h;
        return TC_OK;
    }
    tc_status st = tc__cu_alloc(own, bytes, s);
    if (st == TC_OK) st = tc__cu_h2d(*own, h, bytes, s);
    *d = *own;
    return st;
}

static tc_status hg_launch(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    cudaStream_t s = b->s;
    hgp q = hg_params(p);
    const int bf = p->dtype == TC_BFLOAT16;
    const int bn = hg_bn(p, q), bi = bn == 128;
    const int vec = q.Cg % 8 == 0 && q.C % 8 == 0 && ((uintptr_t)b->x & 15) == 0;
    const size_t ybytes = (size_t)tc__y_count(p) * sizeof(uint16_t);
    void *wpk = NULL, *own_b = NULL, *own_r = NULL;
    const void *db = NULL, *dr = NULL;
    tc_status st = tc__cu_alloc(&wpk, hg_wpack_bytes(p), s);
    if (st == TC_OK) {
        const int64_t n = p->K * (int64_t)q.KRp;
        const unsigned blocks = (unsigned)(n / 256 + 1 < 4096 ? n / 256 + 1 : 4096);
        k_hg_wpack<<<blocks, 256, 0, s>>>((const uint16_t *)b->w, (uint16_t *)wpk, p->K, q.Cg,
                                          q.Cp, q.taps, q.KRp);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) st = tc__cu_fail(e, "launch k_hg_wpack", __FILE__, __LINE__);
    }
    if (st == TC_OK && p->has_bias)
        st = hg_operand(a->bias, (size_t)p->K * sizeof(uint16_t), s, &db, &own_b);
    if (st == TC_OK && p->has_residual) {
        if (a->residual == a->y) dr = b->y; /* in place: y's device view */
        else st = hg_operand(a->residual, ybytes, s, &dr, &own_r);
        /* a host y in place: b->y is a fresh staging buffer, the values are
         * the caller's y */
        if (st == TC_OK && a->residual == a->y && b->y != a->y)
            st = tc__cu_h2d(b->y, a->y, ybytes, s);
    }
    if (st == TC_OK) {
        q.pairs = !(q.K & 1) && !(q.Kg & 1) && !((uintptr_t)b->y & 3) &&
                  !((uintptr_t)dr & 3) && !((uintptr_t)db & 3);
        const hg_kernel k = hg_tab[bi][bf][vec];
        const size_t smem = hg_smem(bn);
        int dev = 0;
        cudaError_t e = cudaGetDevice(&dev);
        int *set = dev >= 0 && dev < IG_NDEV ? &hg_attr_set[dev][bi][bf][vec] : NULL;
        if (e == cudaSuccess && !(set && __atomic_load_n(set, __ATOMIC_ACQUIRE))) {
            e = cudaFuncSetAttribute((const void *)k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)smem);
            if (e == cudaSuccess && set) __atomic_store_n(set, 1, __ATOMIC_RELEASE);
        }
        if (e != cudaSuccess) {
            st = tc__cu_fail(e, "cudaFuncSetAttribute (cuda.conv.igemm-half)", __FILE__, __LINE__);
        } else {
            dim3 grid((unsigned)tc__cu_div_up(q.M, HG_BM), (unsigned)tc__cu_div_up(q.Kg, bn),
                      (unsigned)p->G);
            k<<<grid, HG_THREADS, smem, s>>>((const uint16_t *)b->x, (const uint16_t *)wpk,
                                             (const uint16_t *)db, (const uint16_t *)dr,
                                             (uint16_t *)b->y, q);
            e = cudaGetLastError();
            if (e != cudaSuccess) st = tc__cu_fail(e, "launch k_hg_conv", __FILE__, __LINE__);
        }
    }
    tc__cu_free(wpk, s);
    tc__cu_free(own_b, s);
    tc__cu_free(own_r, s);
    return st;
}

static int hg_available(void) { return tc__cu_available(); }

static int hg_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    (void)e;
    const char *no = NULL;
    if (p->op != TC_OP_CONV) no = "convolution layers only";
    else if (p->dtype != TC_FLOAT16 && p->dtype != TC_BFLOAT16)
        no = "float16 and bfloat16 only (float32 layers: cuda.conv.igemm, -tf32)";
    else if (p->layout != TC_LAYOUT_CHANNELS_LAST)
        no = "channels-last layers only (NLC, NHWC, NDHWC): channels-first ones are staged "
             "through cuda.conv.igemm";
    else if (p->mode != TC_MODE_CONSTANT || p->cval != 0)
        no = "zero padding only";
    if (!no) {
        const int64_t lim = INT32_MAX / 2;
        const int64_t Cg = p->C / p->G, Kg = p->K / p->G;
        const int64_t taps = p->msk[0] * p->msk[1] * p->msk[2];
        const int64_t KRp = (taps * ((Cg + 7) / 8 * 8) + HG_BK - 1) / HG_BK * HG_BK;
        const int64_t M = p->N * p->out[0] * p->out[1] * p->out[2];
        int big = p->C > lim || p->K > lim || KRp > lim || tc__cu_div_up(M, HG_BM) > lim ||
                  tc__cu_div_up(Kg, 64) > 65535 || p->G > 65535;
        for (int i = 0; i < 3; i++) {
            const int64_t span = p->out[i] * p->stride[i] + p->msk[i] * p->dil[i] +
                                 (p->pad_lo[i] < 0 ? -p->pad_lo[i] : p->pad_lo[i]) + p->in[i];
            if (span > (1 << 28)) big = 1;
        }
        if (big) no = "sizes beyond the kernel's 32-bit index arithmetic";
        else if (!ig_wgmma_ok()) no = "needs Hopper's wgmma (the sm_90a image on an sm_90 device)";
    }
    if (no) {
        if (why) snprintf(why, n, "%s", no);
        return 0;
    }
    return 1;
}

static double hg_estimate(const tc__problem *p, const tc__env *e) {
    (void)e;
    const tc__cu_device *d = tc__cu_dev();
    if (!d) return 1e30;
    const hgp q = hg_params(p);
    const double flops = 2.0 * (double)q.M * (double)p->K * (double)q.KRp;
    const double bytes = 2.0 * ((double)tc__x_count(p) + (double)tc__y_count(p) * (1 + p->has_residual) +
                                2.0 * (double)p->K * q.KRp);
    const double tensor = d->peak_flops32 * 14.0; /* dense f16/bf16 wgmma: ~990 TFLOP/s on the H100/H200 */
    const int bn = hg_bn(p, q);
    const double tiles = (double)tc__cu_div_up(q.M, HG_BM) * tc__cu_div_up(q.Kg, bn) * p->G;
    const double per_wave = (double)d->sms * (bn == 128 ? 1 : 2);
    const double fill = tiles / (per_wave * ceil(tiles / per_wave));
    const double tc = flops / (0.6 * tensor * fill), tm = bytes / d->bandwidth;
    return (tc > tm ? tc : tm) + 6e-6;
}

static tc_status hg_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, hg_launch); }

static size_t hg_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    (void)e;
    (void)state;
    return hg_wpack_bytes(p) + (p->has_bias ? (size_t)p->K * sizeof(uint16_t) : 0);
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_conv_igemm_half) = {
    .name = "cuda.conv.igemm-half",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "implicit-GEMM conv layer in float16 / bfloat16 on Hopper's tensor cores (wgmma m64nNk16, fp32 accumulation), channels-last in and out: 128 x 64/128 tiles, BK 64 in 128-byte-swizzled shared memory, 4 cp.async stages of 16-byte channel copies with zero padding; the weights repacked per call; bias, activation and residual fused into the store, rounded once; any stride, dilation, groups, 1D-3D.",
    .available = hg_available,
    .applicable = hg_applicable,
    .estimate = hg_estimate,
    .execute = hg_execute,
    .device_workspace = hg_device_ws,
    .caps = TC__CAP_ALL,
};
