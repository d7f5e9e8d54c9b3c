/*
 * igemm_3xtf32.cuh - the split of cuda.conv.igemm-3xtf32 (float32 conv
 * layers at about float32 accuracy on the TF32 tensor cores), shared by the
 * 3xTF32 forms of the tiled kernel (igemm_tiled.cu, mma.sync: each fragment
 * split once as it is loaded, then used for all its products) and of the
 * shifted views (igemm_shifted.cu: x and w split once, in the channels-last
 * copies the kernel reads; the kernel reads hi and lo tiles).
 *
 * A float x is hi = x rounded to TF32 (nearest, ties away; truncated where
 * rounding would reach the infinities' exponent) and lo = (x - hi) rounded
 * to TF32; x - hi is exact, so x = hi + lo + r with |r| <= 2^-22 |x|. A
 * product a b is a_lo b_hi + a_hi b_lo + a_hi b_hi (three MMAs, the small
 * ones first), a_lo b_lo (<= 2^-22 |a b|) dropped. hi and lo have their low
 * 13 bits zero, so the tensor cores' truncation of shared-memory operands
 * loses nothing. The same split as cuda.gemm.wgmma-3xtf32's (g3_split,
 * src/cuda/cuda_gemm_3xtf32.cu).
 *
 * Like cuda_hopper.h, every definition lies in an anonymous namespace.
 */
#ifndef TC_CUDA_CONV_IGEMM_3XTF32_CUH
#define TC_CUDA_CONV_IGEMM_3XTF32_CUH

namespace {

__device__ __forceinline__ void x3_split(float x, unsigned &hi, unsigned &lo) {
    const unsigned u = __float_as_uint(x);
    const bool fin = (u & 0x7f800000u) != 0x7f800000u;
    unsigned h = (u + 0x1000u) & 0xffffe000u;
    if ((h & 0x7f800000u) == 0x7f800000u) h = u & 0xffffe000u;
    const float l = fin ? x - __uint_as_float(h) : 0.f;
    hi = h;
    lo = (__float_as_uint(l) + 0x1000u) & 0xffffe000u;
}

} // namespace

#endif
