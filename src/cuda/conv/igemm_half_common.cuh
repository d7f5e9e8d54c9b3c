/*
 * igemm_half_common.cuh - what the float16 / bfloat16 conv kernels on
 * Hopper's wgmma share (cuda.conv.igemm-half, igemm_half.cu, and
 * cuda.conv.igemm-half-halo, igemm_half_halo.cu): the 128-row tile of two
 * warpgroups, element loads and rounding, the weight repack B = K x KRp
 * (l = tap * Cp + j) on the device and its element map for the host, the
 * fused epilogue (fp32 accumulators through shared memory, bias +
 * residual + activation, one rounding, 16-byte stores) and the host
 * staging of its bias and residual.
 *
 * Every definition lies in an anonymous namespace (as cuda_hopper.h's):
 * each including file compiles its own copies for its own images.
 */
#ifndef TC_CUDA_CONV_IGEMM_HALF_COMMON_CUH
#define TC_CUDA_CONV_IGEMM_HALF_COMMON_CUH

#include "core/act.h"
#include "cuda/cuda_common.h"
#include "cuda/cuda_hopper.h" /* cp.async, wgmma descriptors, the probe */

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

constexpr int HG_BM = 128, HG_BK = 64, HG_THREADS = 256;

template <bool BF> __device__ __forceinline__ float hg_ld(const uint16_t *p) {
    if (BF) return __bfloat162float(__ushort_as_bfloat16(*p));
    return __half2float(__ushort_as_half(*p));
}
template <bool BF> __device__ __forceinline__ uint16_t hg_cvt(float v) {
    if (BF) return __bfloat16_as_ushort(__float2bfloat16_rn(v));
    return __half_as_ushort(__float2half_rn(v));
}
/* The epilogue's activations (tc__act_f, src/core/act.h): activation a
 * on v[0..7], one dispatch for the eight, each case a straight run of its
 * own code. A switch per element inlines every activation's exp / tanh /
 * erf code eight times an item, and an epilogue so built is bound by
 * instruction fetch (ncu: stall_no_inst; docs/solvers/cuda-conv-half.md). */
[[maybe_unused]] __device__ __forceinline__ void hg_act8(int a, float *v) {
#define HG_ACT8_CASE(A)                                                                            \
    case A:                                                                                        \
        _Pragma("unroll") for (int e = 0; e < 8; e++) v[e] = tc__act_f(A, v[e]);                   \
        break;
    switch (a) {
        HG_ACT8_CASE(TC_ACT_RELU)
        HG_ACT8_CASE(TC_ACT_RELU6)
        HG_ACT8_CASE(TC_ACT_SILU)
        HG_ACT8_CASE(TC_ACT_SIGMOID)
        HG_ACT8_CASE(TC_ACT_TANH)
        HG_ACT8_CASE(TC_ACT_GELU)
    default: break;
    }
#undef HG_ACT8_CASE
}
/* the same where a is none, relu or relu6 (hg_store_rows' SIMPLE
 * instances): a few selects, none of the transcendental cases' code */
[[maybe_unused]] __device__ __forceinline__ void hg_act8_simple(int a, float *v) {
    if (a == TC_ACT_RELU) {
#pragma unroll
        for (int e = 0; e < 8; e++) v[e] = tc__act_f(TC_ACT_RELU, v[e]);
    } else if (a == TC_ACT_RELU6) {
#pragma unroll
        for (int e = 0; e < 8; e++) v[e] = tc__act_f(TC_ACT_RELU6, v[e]);
    }
}

/* D[64 x N] += A[64 x 16] * B[16 x N], both K-major in shared memory */
template <int N, bool BF>
[[maybe_unused]] __device__ __forceinline__ void hg_mma(float *d, uint64_t da, uint64_t db);
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

/* 16-byte cp.async, zero-filled when bytes = 0 */
[[maybe_unused]] __device__ __forceinline__ void hg_cp16(unsigned dst, const void *src, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}

/* The weights K x Cg x (taps x mf) (dense, torch's layout; cl: K x (taps
 * x mf) x Cg, channels-last weights) to K x KRp with l = tap * Cp + j, j =
 * s * Cg + c: mf = 1 for the plain form, the last mask axis's length for
 * the merged one (hg_merge); row k of blockIdx.y's rows, positions l of
 * blockIdx.x's (rows too long for k_hg_wpack_row) */
__host__ __device__ __forceinline__ uint16_t hg_wsrc(const uint16_t *wk, int l, int Cg, int Cp, int taps,
                                            int mf, int cl) {
    const int t = l / Cp, j = l - t * Cp, sx = j / Cg, c = j - sx * Cg;
    if (t >= taps || sx >= mf) return 0;
    return wk[cl ? ((int64_t)t * mf + sx) * Cg + c : ((int64_t)c * taps + t) * mf + sx];
}
__global__ void k_hg_wpack(const uint16_t *__restrict__ w, uint16_t *__restrict__ wp, int64_t K,
                           int Cg, int Cp, int taps, int mf, int KRp, int cl) {
    const int l = blockIdx.x * blockDim.x + threadIdx.x;
    if (l >= KRp) return;
    for (int64_t k = blockIdx.y; k < K; k += gridDim.y)
        wp[k * KRp + l] = hg_wsrc(w + k * Cg * taps * mf, l, Cg, Cp, taps, mf, cl);
}
/* the same, one row k a block through shared memory: the row read and
 * written contiguously (Cg * taps * mf <= HG_WROW), in 16-byte accesses
 * where the row lengths and addresses allow (the element-wise loop's
 * dependent loads left a 512-channel 3x3 layer's repack latency-bound:
 * 8 us for 9.4 MB on an H100) */
constexpr int HG_WROW = 12288;
__global__ void __launch_bounds__(256) k_hg_wpack_row(const uint16_t *__restrict__ w,
                                                      uint16_t *__restrict__ wp, int64_t K,
                                                      int Cg, int Cp, int taps, int mf, int KRp,
                                                      int cl) {
    __shared__ __align__(16) uint16_t row[HG_WROW];
    const int n = Cg * taps * mf;
    const bool vin = n % 8 == 0 && ((uintptr_t)w & 15) == 0;
    const bool vout = KRp % 8 == 0 && ((uintptr_t)wp & 15) == 0;
    for (int64_t k = blockIdx.x; k < K; k += gridDim.x) {
        const uint16_t *src = w + k * n;
        if (vin)
            for (int i = threadIdx.x; i < n / 8; i += 256) ((uint4 *)row)[i] = ((const uint4 *)src)[i];
        else
            for (int i = threadIdx.x; i < n; i += 256) row[i] = src[i];
        __syncthreads();
        uint16_t *dst = wp + k * KRp;
        if (vout) {
            for (int l8 = threadIdx.x; l8 < KRp / 8; l8 += 256) {
                unsigned v[4];
#pragma unroll
                for (int e = 0; e < 4; e++)
                    v[e] = (unsigned)hg_wsrc(row, 8 * l8 + 2 * e, Cg, Cp, taps, mf, cl) |
                           ((unsigned)hg_wsrc(row, 8 * l8 + 2 * e + 1, Cg, Cp, taps, mf, cl) << 16);
                ((uint4 *)dst)[l8] = make_uint4(v[0], v[1], v[2], v[3]);
            }
        } else {
            for (int l = threadIdx.x; l < KRp; l += 256) dst[l] = hg_wsrc(row, l, Cg, Cp, taps, mf, cl);
        }
        __syncthreads();
    }
}

/* A warpgroup's MT row tiles of N / 2 accumulators a thread set to zero,
 * each defined here (an empty asm per register), not by the first wgmma:
 * the register allocation of the persistent and the one-tile kernels */
template <int MT, int NH> __device__ __forceinline__ void hg_acc_zero(float (&acc)[MT][NH]) {
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NH; j++) {
            acc[i][j] = 0.f;
            asm volatile("" : "+f"(acc[i][j]));
        }
}

/* The epilogue in two steps, for any tile shape: hg_acc_to_smem puts one
 * 64-row tile's accumulators (wgmma's fragment, held by the warpgroup of
 * the calling thread) into shared memory as fp32, rows row0.., row pitch
 * BN + 4: accumulator j of thread (warp w of its warpgroup, lane) is row
 * row0 + 16 w + lane / 4 + 8 ((j >> 1) & 1), column 8 (j >> 2) + 2 (lane &
 * 3) + (j & 1). After a barrier over the tile's threads, hg_store_rows
 * writes rows 0..ROWS-1 with NT threads (tid 0..NT-1), 8 channels a
 * thread: y = act(acc + bias + residual), one rounding, 16-byte accesses
 * along the row; row r is output position rowpos(r) (its element offset
 * rowpos(r) * p.K; < 0: a dropped row) and channels n0.. of group g (of
 * p.Kg). */
template <int BN>
__device__ __forceinline__ void hg_acc_to_smem(const float *acc, float *cs, int row0) {
    constexpr int CP = BN + 4;
    const int lane = threadIdx.x & 31, wr = (threadIdx.x >> 5) & 3;
#pragma unroll
    for (int jj = 0; jj < BN / 8; jj++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = row0 + wr * 16 + (lane >> 2) + 8 * h;
            *(float2 *)&cs[row * CP + 8 * jj + 2 * (lane & 3)] =
                make_float2(acc[4 * jj + 2 * h], acc[4 * jj + 2 * h + 1]);
        }
}
/* A thread's items of 8 channels in batches of UB (hg_store_rows) */
template <int UB, int BN, bool BF, int ROWS, int NT, bool SIMPLE, class P, class RowPos>
__device__ __forceinline__ void hg_store_items(const float *cs, int tid, int n0, int g, const P &p,
                                               const uint16_t *bias, const uint16_t *res,
                                               uint16_t *y, RowPos rowpos) {
    constexpr int CP = BN + 4;
    constexpr int ITEMS = ROWS * (BN / 8);
    const uint16_t *bg = bias + (int64_t)g * p.Kg;
    for (int c0 = tid; c0 < ITEMS; c0 += UB * NT) {
        int64_t o[UB];
        int nn[UB], rw[UB];
        uint4 rr[UB];
#pragma unroll
        for (int u = 0; u < UB; u++) {
            const int c = c0 + u * NT;
            o[u] = -1;
            if (c >= ITEMS) continue;
            rw[u] = c / (BN / 8);
            nn[u] = n0 + (c % (BN / 8)) * 8;
            const int64_t m = rowpos(rw[u]);
            if (m < 0 || nn[u] >= p.Kg) continue;
            o[u] = m * p.K + (int64_t)g * p.Kg + nn[u];
            if (p.has_res && p.vec8 && nn[u] + 8 <= p.Kg) rr[u] = *(const uint4 *)(res + o[u]);
        }
#pragma unroll
        for (int u = 0; u < UB; u++) {
            if (o[u] < 0) continue;
            const int row = rw[u], n = nn[u];
            const float4 u0 = *(const float4 *)&cs[row * CP + n - n0];
            const float4 u1 = *(const float4 *)&cs[row * CP + n - n0 + 4];
            float v[8] = {u0.x, u0.y, u0.z, u0.w, u1.x, u1.y, u1.z, u1.w};
            const bool full = p.vec8 && n + 8 <= p.Kg;
            if (full) {
                if (p.has_bias) {
                    const uint4 bb = *(const uint4 *)(bg + n);
                    const uint16_t *bh = (const uint16_t *)&bb;
#pragma unroll
                    for (int e = 0; e < 8; e++) v[e] += hg_ld<BF>(bh + e);
                }
                if (p.has_res) {
                    const uint16_t *rh = (const uint16_t *)&rr[u];
#pragma unroll
                    for (int e = 0; e < 8; e++) v[e] += hg_ld<BF>(rh + e);
                }
            } else {
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    if (n + e >= p.Kg) break;
                    if (p.has_bias) v[e] += hg_ld<BF>(bg + n + e);
                    if (p.has_res) v[e] += hg_ld<BF>(res + o[u] + e);
                }
            }
            if (SIMPLE) hg_act8_simple(p.act, v);
            else hg_act8(p.act, v);
            if (full) {
                uint4 out;
                unsigned *ow = (unsigned *)&out;
#pragma unroll
                for (int e = 0; e < 4; e++)
                    ow[e] = (unsigned)hg_cvt<BF>(v[2 * e]) | ((unsigned)hg_cvt<BF>(v[2 * e + 1]) << 16);
                *(uint4 *)(y + o[u]) = out;
            } else {
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    if (n + e >= p.Kg) break;
                    y[o[u] + e] = hg_cvt<BF>(v[e]);
                }
            }
        }
    }
}

/* hg_store_items in its SIMPLE form where the activation is none, relu or
 * relu6: the loop the common layers run holds no transcendental code */
template <int UB, int BN, bool BF, int ROWS, int NT, class P, class RowPos>
__device__ __forceinline__ void hg_store_items_act(const float *cs, int tid, int n0, int g,
                                                   const P &p, const uint16_t *bias,
                                                   const uint16_t *res, uint16_t *y, RowPos rowpos) {
    if (p.act == TC_ACT_NONE || p.act == TC_ACT_RELU || p.act == TC_ACT_RELU6)
        hg_store_items<UB, BN, BF, ROWS, NT, true>(cs, tid, n0, g, p, bias, res, y, rowpos);
    else hg_store_items<UB, BN, BF, ROWS, NT, false>(cs, tid, n0, g, p, bias, res, y, rowpos);
}

/* The rows' outputs y = act(acc + bias + residual) from the fp32 tile cs.
 * With a residual a thread's items go in batches of up to 4 whose residual
 * loads are all issued before the first is used, so that their latencies
 * overlap (one load, add and store at a time waited a DRAM latency an
 * item); without one an item at a time (with the batched form for every
 * call the layers without a residual ran 0-2% slower on an H100:
 * docs/solvers/cuda-conv-half.md). */
template <int BN, bool BF, int ROWS, int NT, class P, class RowPos>
__device__ __forceinline__ void hg_store_rows(const float *cs, int tid, int n0, int g, const P &p,
                                              const uint16_t *bias, const uint16_t *res,
                                              uint16_t *y, RowPos rowpos) {
    constexpr int PER = (ROWS * (BN / 8) + NT - 1) / NT, UB = PER < 4 ? PER : 4;
    if (p.has_res) hg_store_items_act<UB, BN, BF, ROWS, NT>(cs, tid, n0, g, p, bias, res, y, rowpos);
    else hg_store_items_act<1, BN, BF, ROWS, NT>(cs, tid, n0, g, p, bias, res, y, rowpos);
}

/* The epilogue of a 128 x BN tile of consecutive output positions m0..
 * (of p.M) whose wgmmas are all done and whose shared memory (at least
 * HG_BM x (BN + 4) floats) is free; warpgroup tid / 128 holds rows 64
 * (tid / 128).. */
template <int BN, bool BF, class P>
__device__ __forceinline__ void hg_epilogue(const float *acc, uint8_t *smem, int64_t m0, int n0,
                                            int g, const P &p, const uint16_t *bias,
                                            const uint16_t *res, uint16_t *y) {
    float *cs = (float *)smem;
    hg_acc_to_smem<BN>(acc, cs, (threadIdx.x >> 7) * 64);
    __syncthreads();
    hg_store_rows<BN, BF, HG_BM, HG_THREADS>(cs, threadIdx.x, n0, g, p, bias, res, y,
                                             [&](int row) -> int64_t {
                                                 const int64_t m = m0 + row;
                                                 return m < p.M ? m : -1;
                                             });
}

/* the weights (dense, K x Cg0 x taps x mf; cl: K x taps x mf x Cg0)
 * repacked on the device into wp (k_hg_wpack_row where a row fits its
 * shared memory) */
[[maybe_unused]] static tc_status hg_wpack_dev(const void *w, void *wp, int64_t K, int Cg0, int Cp,
                                               int taps, int mf, int KRp, int cl, cudaStream_t s) {
    if ((int64_t)Cg0 * taps * mf <= HG_WROW) {
        k_hg_wpack_row<<<(unsigned)(K < (1 << 20) ? K : (1 << 20)), 256, 0, s>>>(
            (const uint16_t *)w, (uint16_t *)wp, K, Cg0, Cp, taps, mf, KRp, cl);
    } else {
        const dim3 grid((unsigned)tc__cu_div_up(KRp, 256),
                        (unsigned)(K < 65535 ? K : 65535));
        k_hg_wpack<<<grid, 256, 0, s>>>((const uint16_t *)w, (uint16_t *)wp, K, Cg0,
                                        Cp, taps, mf, KRp, cl);
    }
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? TC_OK : tc__cu_fail(e, "launch k_hg_wpack", __FILE__, __LINE__);
}

/* an operand of `bytes` on the device: in place, or staged into *own (device
 * scratch when `scratch`, else a host operand's copy: tc__cu_alloc_operand) */
[[maybe_unused]] static tc_status hg_operand(const void *h, size_t bytes, cudaStream_t s, const void **d,
                                             void **own, int scratch) {
    *own = NULL;
    if (tc__cu_is_device(h)) {
        *d = h;
        return TC_OK;
    }
    tc_status st = scratch ? tc__cu_alloc(own, bytes, s) : tc__cu_alloc_operand(own, bytes, s);
    if (st == TC_OK) st = tc__cu_h2d(*own, h, bytes, s);
    *d = *own;
    return st;
}

/* the epilogue's bias and residual on the device (*db, *dr; NULL where the
 * layer has none), staged into *own_b, *own_r where they must be */
[[maybe_unused]] static tc_status hg_epi_operands(const tc__args *a, const tc__cu_bufs *b,
                                                  const void **db, const void **dr, void **own_b,
                                                  void **own_r) {
    const tc__problem *p = a->p;
    cudaStream_t s = b->s;
    const size_t ybytes = (size_t)tc__y_count(p) * sizeof(uint16_t);
    tc_status st = TC_OK;
    *db = *dr = NULL;
    *own_b = *own_r = NULL;
    if (st == TC_OK && p->has_bias)
        st = hg_operand(a->bias, (size_t)p->K * sizeof(uint16_t), s, db, own_b, 1);
    if (st == TC_OK && p->has_residual) {
        if (a->residual == a->y || (b->y != a->y && !tc__cu_is_device(a->residual))) {
            /* in place on y's device view; a host y's view is a fresh staging
             * buffer, which takes the caller's residual (y itself or
             * another host array): the epilogue reads each element before
             * it writes it, and no scratch beyond device_workspace */
            *dr = b->y;
            if (b->y != a->y) st = tc__cu_h2d(b->y, a->residual, ybytes, s);
        } else {
            st = hg_operand(a->residual, ybytes, s, dr, own_r, 0);
        }
    }
    return st;
}

/* Kernel k's dynamic shared-memory limit raised to smem on the current
 * device, once a device (set[dev] remembers it; devices past IG_NDEV ask
 * every call) */
[[maybe_unused]] static cudaError_t hg_smem_limit(const void *k, size_t smem, int set[IG_NDEV]) {
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    int *f = dev >= 0 && dev < IG_NDEV ? &set[dev] : NULL;
    if (e == cudaSuccess && !(f && __atomic_load_n(f, __ATOMIC_ACQUIRE))) {
        e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (e == cudaSuccess && f) __atomic_store_n(f, 1, __ATOMIC_RELEASE);
    }
    return e;
}

} // namespace

#endif
