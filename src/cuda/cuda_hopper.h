/*
 * cuda_hopper.h - Hopper (sm_90a) building blocks shared by the TF32
 * tensor-core kernels (the conv's wgmma and TMA forms under src/cuda/conv/,
 * cuda_gemm_tf32.cu):
 * cp.async copies, TF32 rounding, wgmma (the warpgroup MMA) and its shared-memory
 * descriptors, mbarriers and the tensor memory accelerator's copies, and
 * the per-device probe that tells the host whether the image the runtime
 * loaded for the including file has them, and the driver's tensor-map
 * encoder.
 *
 * Every definition lies in an anonymous namespace: each .cu file that
 * includes this header gets its own copies, compiled for its own images
 * (CMake adds sm_90a to the files that need it); the probe kernel is the
 * including file's, so ig_wgmma_ok answers for that file's image.
 */
#ifndef TC_CUDA_HOPPER_H
#define TC_CUDA_HOPPER_H

#include <cudaTypedefs.h> /* cuTensorMapEncodeTiled, through the runtime */
#include <stdint.h>

#define IG_NDEV 16 /* devices with cached per-device facts */

namespace {

/* cp.async (sm_80 and later): 16- and 4-byte copies to shared memory,
 * zero-filled past `bytes`; groups; and an mbarrier arrival when this
 * thread's earlier copies have landed (counted among the barrier's
 * expected arrivals: .noinc) */
__device__ __forceinline__ void ig_cp16(float *dst, const float *src, int bytes) {
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void ig_cp4(float *dst, const float *src, int bytes) {
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void ig_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void ig_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
__device__ __forceinline__ void ig_cp_mbar_arrive(uint64_t *b) {
    const unsigned s = (unsigned)__cvta_generic_to_shared(b);
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(s) : "memory");
}

/* Round to TF32, nearest with ties away from zero, in one integer add: the
 * tensor cores ignore the low 13 bits, so adding half of their unit rounds
 * (cvt.rna.tf32.f32 is a 5-instruction sequence on sm_90). Inf stays Inf and
 * a quiet NaN stays NaN. */
__device__ __forceinline__ unsigned ig_tf32(float f) { return __float_as_uint(f) + 0x1000u; }
/* The split of the 3xTF32 forms (cuda.gemm.wgmma-3xtf32,
 * cuda.conv.igemm-3xtf32): x = hi + lo + r, hi and lo TF32 values (low 13
 * bits zero, so the tensor cores' truncation of shared-memory operands
 * loses nothing), |r| <= 2^-22 |x|: hi rounded to nearest (ties away), or
 * truncated where rounding would reach the infinities' exponent (x
 * non-finite, or |x| within half a TF32 unit of overflow); lo = x - hi
 * (exact) rounded, 0 where x is not finite (inf - inf would be NaN). A
 * product a b is then a_lo b_hi + a_hi b_lo + a_hi b_hi (three MMAs, the
 * small ones first), a_lo b_lo (<= 2^-22 |a b|) dropped. */
__device__ __forceinline__ void ig_tf32_split(float x, unsigned &hi, unsigned &lo) {
    const unsigned u = __float_as_uint(x);
    const bool fin = (u & 0x7f800000u) != 0x7f800000u;
    unsigned h = (u + 0x1000u) & 0xffffe000u;
    if ((h & 0x7f800000u) == 0x7f800000u) h = u & 0xffffe000u;
    const float l = fin ? x - __uint_as_float(h) : 0.f;
    hi = h;
    lo = (__float_as_uint(l) + 0x1000u) & 0xffffe000u;
}

/* Hopper's wgmma, the warpgroup MMA. Compiled only for
 * sm_90a (the arch-specific image CMake adds for this file); ig_wgmma_ok
 * tells the host whether the image the runtime loaded has it. */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define IG_WGMMA 1
#else
#define IG_WGMMA 0
#endif
__global__ void k_ig_wgmma_probe(int *out) { *out = IG_WGMMA; }
/* A shared-memory matrix descriptor, no swizzle: the operand is stored as
 * core matrices of 8 rows x 16 bytes (128 contiguous bytes), lbo bytes
 * apart along K and sbo bytes apart along N */
__device__ __forceinline__ uint64_t ig_desc(const void *p, unsigned lbo, unsigned sbo) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    return (uint64_t)((a & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) |
           ((uint64_t)(sbo >> 4) << 32);
}
/* A 128-byte-swizzled K-major operand: rows of 128 bytes (32 tf32 of K),
 * 8-row groups 1024 bytes apart, 16-byte chunk c of the row at shared
 * address A stored at chunk c ^ ((A >> 7) & 7). The hardware takes the
 * phase from the absolute address: a view may start at any 128-byte row
 * (and 32 bytes into it for a k8 step) with base offset 0 (on the H100
 * the row phase as base offset gives wrong sums) */
/* its high word: the 8-row stride 1024 bytes and the 128-byte swizzle */
constexpr uint64_t ig_desc_sw128_hi = (1024 >> 4) | (1u << 30);
__device__ __forceinline__ uint64_t ig_desc_sw128(const void *p) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    return (uint64_t)(((a & 0x3FFFF) >> 4) | (1u << 16)) | (ig_desc_sw128_hi << 32);
}
__device__ __forceinline__ void ig_wg_fence() {
#if IG_WGMMA
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void ig_wg_commit() {
#if IG_WGMMA
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
template <int N> __device__ __forceinline__ void ig_wg_wait() {
#if IG_WGMMA
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}
/* cp.async's shared-memory writes (the generic proxy) made visible to
 * wgmma's reads (the async proxy) */
__device__ __forceinline__ void ig_proxy_fence() {
#if IG_WGMMA
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
/* a warpgroup's register budget from here on (whole warpgroups, sm_90a:
 * a producer gives registers back, the consumers take them) */
template <int N> __device__ __forceinline__ void ig_setmaxnreg_dec() {
#if IG_WGMMA
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
template <int N> __device__ __forceinline__ void ig_setmaxnreg_inc() {
#if IG_WGMMA
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
/* The tensor-memory-accelerator copies and their mbarriers (sm_90a
 * image only, as wgmma): a shared-memory barrier counts arrivals and the
 * bytes the copies that signal it still owe; a wait spins on its phase. */
#if IG_WGMMA
__device__ __forceinline__ unsigned ig_sa(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
#endif
__device__ __forceinline__ void ig_mbar_init(uint64_t *b, unsigned count) {
#if IG_WGMMA
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(ig_sa(b)), "r"(count) : "memory");
#endif
}
__device__ __forceinline__ void ig_mbar_init_fence() {
#if IG_WGMMA
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void ig_mbar_expect(uint64_t *b, unsigned bytes) {
#if IG_WGMMA
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(ig_sa(b)),
                 "r"(bytes)
                 : "memory");
#endif
}
__device__ __forceinline__ void ig_mbar_arrive(uint64_t *b) {
#if IG_WGMMA
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(ig_sa(b)) : "memory");
#endif
}
/* Waits for the phase of the given parity to complete. A wait that lasts
 * TC_CUDA_WATCHDOG_S seconds (the CMake option of that name, default 10;
 * 0 waits for ever) is a bug (a producer that never arrives, a byte count
 * the copies never deliver): the thread traps, so the launch fails with an
 * error ("unspecified launch failure") instead of hanging the process. The clock is read only after a try_wait that timed
 * out (the hardware's own suspend), so the steady state is one try_wait. */
#ifndef TC_CUDA_WATCHDOG_S
#define TC_CUDA_WATCHDOG_S 10
#endif
__device__ __forceinline__ unsigned ig_mbar_try(uint64_t *b, unsigned parity) {
    unsigned ok = 0;
#if IG_WGMMA
    asm volatile("{\n.reg .pred P;\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, P;\n}\n"
                 : "=r"(ok)
                 : "r"(ig_sa(b)), "r"(parity)
                 : "memory");
#endif
    return ok;
}
__device__ __forceinline__ uint64_t ig_globaltimer() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}
__device__ __forceinline__ void ig_mbar_wait(uint64_t *b, unsigned parity) {
#if IG_WGMMA
    if (ig_mbar_try(b, parity)) return;
#if TC_CUDA_WATCHDOG_S > 0
    const uint64_t t0 = ig_globaltimer();
    while (!ig_mbar_try(b, parity)) {
        /* no printf here: an extern call in a kernel makes ptxas serialize
         * its wgmmas (C7510) */
        if (ig_globaltimer() - t0 > (uint64_t)TC_CUDA_WATCHDOG_S * 1000000000ull) __trap();
    }
#else
    while (!ig_mbar_try(b, parity)) {
    }
#endif
#endif
}
/* box of a 2D / 5D tensor map at the given coordinates (elements; negative
 * and past the end read as zeros) into shared memory at dst, signalling b */
__device__ __forceinline__ void ig_tma2(void *dst, const CUtensorMap *m, int c0, int c1,
                                        uint64_t *b) {
#if IG_WGMMA
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(ig_sa(dst)),
                 "l"((uint64_t)m), "r"(c0), "r"(c1), "r"(ig_sa(b))
                 : "memory");
#endif
}
__device__ __forceinline__ void ig_tma5(void *dst, const CUtensorMap *m, int c0, int c1, int c2,
                                        int c3, int c4, uint64_t *b) {
#if IG_WGMMA
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];\n" ::"r"(ig_sa(dst)),
                 "l"((uint64_t)m), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(ig_sa(b))
                 : "memory");
#endif
}
/* Clusters (cuda.gemm.wgmma-tf32's pairs of blocks sharing a tile):
 * the block's rank, a barrier over the cluster's threads, an arrival on a
 * peer block's mbarrier, and a TMA box multicast into several blocks */
__device__ __forceinline__ unsigned ig_cluster_rank() {
    unsigned r = 0;
#if IG_WGMMA
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
#endif
    return r;
}
/* a barrier in two halves (work between them) and whole */
__device__ __forceinline__ void ig_cluster_arrive() {
#if IG_WGMMA
    asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void ig_cluster_wait() {
#if IG_WGMMA
    asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void ig_cluster_sync() {
    ig_cluster_arrive();
    ig_cluster_wait();
}
/* arrive on the barrier at b's offset in the cluster's block `rank` */
__device__ __forceinline__ void ig_mbar_arrive_cluster(uint64_t *b, unsigned rank) {
#if IG_WGMMA
    unsigned ra;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(ra) : "r"(ig_sa(b)), "r"(rank));
    /* release at CTA scope (the default), as a local arrive: what it orders
     * is this warp's wgmma reads, complete before it (wgmma.wait_group).
     * .release.cluster here runs the cluster forms at 0.53-0.68x the
     * single-block ones. */
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(ra) : "memory");
#endif
}
/* a 2D box into dst's offset in every block of mask, each signalling its
 * barrier at b's offset */
__device__ __forceinline__ void ig_tma2_mc(void *dst, const CUtensorMap *m, int c0, int c1,
                                           uint64_t *b, unsigned short mask) {
#if IG_WGMMA
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(ig_sa(dst)),
                 "l"((uint64_t)m), "r"(c0), "r"(c1), "r"(ig_sa(b)), "h"(mask)
                 : "memory");
#endif
}

/* D[64 x N] += A[64 x 8] * B[8 x N], both K-major in shared memory (da,
 * db), fp32 accumulation */
template <int N> __device__ __forceinline__ void ig_wgmma(float *d, uint64_t da, uint64_t db);
#if IG_WGMMA
/* one specialisation per N: inline asm needs its operand list written out
 * (N / 2 accumulators a thread) */
template <> __device__ __forceinline__ void ig_wgmma<32>(float *d, uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                 : "l"(da), "l"(db), "r"(1)
                 : "memory");
}
template <> __device__ __forceinline__ void ig_wgmma<64>(float *d, uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db), "r"(1)
                 : "memory");
}
template <> __device__ __forceinline__ void ig_wgmma<128>(float *d, uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db), "r"(1)
                 : "memory");
}
/* D[64 x 64] (+)= A[64 x 8] * B[8 x 64], A from registers (the m16n8k8
 * TF32 A fragment of each warp's 16 rows: a0 (g, t), a1 (g + 8, t), a2
 * (g, t + 4), a3 (g + 8, t + 4)), B K-major in shared memory (db); acc
 * scaled by `keep` (0: D = A * B, a tile's first k step) */
__device__ __forceinline__ void ig_wgmma_rs64(float *d, const unsigned *a, uint64_t db,
                                              int keep) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(keep)
                 : "memory");
}
#else
template <int N> __device__ __forceinline__ void ig_wgmma(float *, uint64_t, uint64_t) {}
__device__ __forceinline__ void ig_wgmma_rs64(float *, const unsigned *, uint64_t, int) {}
#endif

/* Whether the current device runs this file's sm_90a image (the wgmma
 * kernels have bodies there): a one-thread probe, once per device, at plan
 * time (cuda.conv.igemm-tf32's applicability). */
static int ig_wg_cache[IG_NDEV]; /* 0 not probed, 1 yes, 2 no */
inline int ig_wgmma_ok(void) {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return 0;
    int *slot = dev >= 0 && dev < IG_NDEV ? &ig_wg_cache[dev] : NULL;
    int v = slot ? __atomic_load_n(slot, __ATOMIC_ACQUIRE) : 0;
    if (v) return v == 1;
    int h = 0, *d = NULL;
    if (cudaMalloc(&d, sizeof(int)) == cudaSuccess) {
        k_ig_wgmma_probe<<<1, 1>>>(d);
        if (cudaGetLastError() != cudaSuccess ||
            cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess)
            h = 0;
        cudaFree(d);
    }
    (void)cudaGetLastError(); /* a failed probe leaves no sticky error */
    if (slot) __atomic_store_n(slot, h == 1 ? 1 : 2, __ATOMIC_RELEASE);
    return h == 1;
}

/* cuTensorMapEncodeTiled from the driver, through the runtime (no -lcuda);
 * NULL where the driver lacks it */
inline PFN_cuTensorMapEncodeTiled_v12000 ig_tma_encoder(void) {
    static void *fn;
    static int state; /* 0 not asked, 1 found, 2 not found */
    int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (!st) {
        void *f = NULL;
        cudaDriverEntryPointQueryResult qr;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                             &qr) != cudaSuccess ||
            qr != cudaDriverEntryPointSuccess)
            f = NULL;
        (void)cudaGetLastError();
        __atomic_store_n(&fn, f, __ATOMIC_RELAXED);
        __atomic_store_n(&state, f ? 1 : 2, __ATOMIC_RELEASE);
        st = f ? 1 : 2;
    }
    return st == 1 ? (PFN_cuTensorMapEncodeTiled_v12000)__atomic_load_n(&fn, __ATOMIC_RELAXED)
                   : NULL;
}

/* The two tensor maps of the TMA GEMM kernels (C = A B, row-major float32,
 * lda and ldb multiples of 4): A (m x k) read in boxes of bk columns x
 * a_rows rows through the 128-byte swizzle, B (k x n) in boxes of 8
 * columns x bk rows, unswizzled; out-of-range elements read as zeros.
 * solver names the caller in the error. */
inline tc_status ig_gemm_tensor_maps(const tc__problem *p, const float *A, const float *B,
                                     unsigned a_rows, unsigned bk, CUtensorMap *ta,
                                     CUtensorMap *tb, const char *solver) {
    PFN_cuTensorMapEncodeTiled_v12000 enc = ig_tma_encoder();
    if (!enc) return tc__error(TC_ERR_BACKEND, "%s: cuTensorMapEncodeTiled not found", solver);
    const cuuint32_t one[2] = {1, 1};
    const cuuint64_t ad[2] = {(cuuint64_t)p->k, (cuuint64_t)p->m}, as[1] = {(cuuint64_t)p->lda * 4};
    const cuuint32_t ab[2] = {bk, a_rows};
    const cuuint64_t bd[2] = {(cuuint64_t)p->n, (cuuint64_t)p->k}, bs[1] = {(cuuint64_t)p->ldb * 4};
    const cuuint32_t bb[2] = {8, bk};
    if (enc(ta, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)A, ad, as, ab, one,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS ||
        enc(tb, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)B, bd, bs, bb, one,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
        return tc__error(TC_ERR_BACKEND, "%s: tensor map encoding failed (m=%lld n=%lld k=%lld)",
                         solver, (long long)p->m, (long long)p->n, (long long)p->k);
    return TC_OK;
}

} // namespace

#endif
