/*
 * cuda_gemm_tf32.cu - cuda.gemm.wgmma-tf32: single-precision GEMM on Hopper's
 * TF32 tensor cores (wgmma), chosen only under TC_PLAN_ALLOW_TF32. Inputs
 * take TF32's 10-bit mantissa: B rounded to nearest (ties away) when its
 * fragments are loaded, A truncated by the tensor cores (wgmma reads the
 * top 19 bits of a float); products summed in fp32. Relative error about
 * 1e-3 of max |C| at k ~ 1000 (docs/semantics.md), against ~1e-6 for
 * cuda.gemm.simt.
 *
 * C = alpha * A B + beta * C with A (m x k) and B (k x n) row-major. The
 * tensor cores take a TF32 operand from shared memory only K-major (k
 * contiguous): A is, B is not. So the kernel computes the transpose,
 * C^T (n x m) = B^T A^T: wgmma's A operand is B^T, 64 x 8 a warpgroup and
 * k8 step, loaded into registers from a [k][n] tile of B (the transpose
 * done by the fragment loads), and its B operand is A^T, which is A's rows
 * K-major as they lie. No copy of either operand.
 *
 * Block tiles BM (m, 128 or 256) x 128 (n) x 32 (k), one block an SM. A
 * producer (a warp for BM 128, a warpgroup for 256 that gives its
 * registers back with setmaxnreg) issues tensor-memory-accelerator copies
 * into mbarrier stages (A: a BM x 32 box, 128-byte swizzled; B: 16 boxes
 * of 8 n x 32 k, each 1 KB, so that a fragment load's 32 lanes hit 32
 * banks: k row t at 8t floats, column g at g), and two consumer
 * warpgroups each take 64 of the tile's n, wgmma m64nBMk8 with A from
 * registers. A stage's fragments are loaded while the previous stage's
 * wgmmas run (two register buffers); its slot is freed once the wgmmas
 * after it retire. Copies past m, n or k read zeros, so any size runs.
 *
 * Forms: BM 128 with 5 stages (288 threads) or 256 with 4
 * (384 threads: launched at 168 registers, the consumers raised to 232 for
 * their 128 accumulators), alone or in clusters of two blocks along n that
 * share the A tile: each copies half of it into both blocks' shared memory
 * (TMA multicast) and a stage is freed only when both blocks' consumers
 * are done with it; or in 2 x 2 clusters (CL 4), whose columns also share
 * the B tile (each block multicasts half of the 16 B boxes to both blocks
 * of its column; a stage is freed when all four are done). The grid is
 * persistent (as many clusters as are resident at once; tiles strided over
 * them, walked in groups of 8 m-tiles for L2 reuse), so a tile's copies
 * overlap the previous tile's last MMAs and epilogue. Where the last round
 * of tiles would leave more than half the grid idle, its tiles are split
 * along k (the split tail, at the launch below): the 2 x 2 form has 30
 * clusters resident on the H200's 132 SMs, and 4096^3's 128 tiles of it
 * took 5 rounds. Default: 256 rows where m > 128, clusters where
 * n > 128, 2 x 2 where there are >= 256 tiles of 256 x 128;
 * TILECONV_CUDA_GEMM_TF32_BM / _CL force a form, TILECONV_CUDA_GEMM_TF32_GRID caps the
 * grid and TILECONV_CUDA_GEMM_TF32_SPLIT the split (tests).
 *
 * What bounds it is L2 bytes per MAC: a 128 x 128 x 32 stage loads 32 KB
 * for 524k MACs (16 MACs a byte), and the tensor cores' ~1024 TF32 MACs a
 * clock an SM would need ~64 bytes a clock an SM from L2, about 3x what it
 * delivers. 256 rows: 22 MACs a byte; 256 rows in pairs sharing A: 32.
 * Measured (bench/gpu_gemm.py, H200, TFLOP/s against cuBLAS's TF32 mode in
 * the same process): 128 form 165-188 (0.47-0.74x); 256 form 264-287; 256 x
 * 2 (persistent) 280 at 2048^3 (1.15x), 320 at 4096^3 (0.84-0.85x), 334 at
 * 8192^3 (0.91-0.93x); 2 x 2 clusters 352 at 8192^3 (0.97-0.98x; 1 x 2
 * 322-330), 361 at 6144^3 (0.95-0.98x; 1 x 2 333), level at 4096^3,
 * 172-174 at 2048^3 (one tile a block); 2 x 2 with the split tail (in
 * parentheses: whole tiles only): 333 (296) at 3584^3, 337 (311) at
 * 4096^3, 352 (331) at 4608^3, 366 (355) at 8192^3. Not kept: B by cp.async
 * (109-114 on the H100); the stage release at cluster scope
 * (a GPU-wide memory barrier a stage: the cluster forms at 0.53-0.68x).
 *
 * Applies to trans_a = trans_b = 0, lda and ldb multiples of 4, sizes
 * below 2^31, where the device runs this file's sm_90a image (the probe);
 * an execute whose A or B is not 16-byte aligned (device pointers) runs
 * cuda.gemm.simt's FP32 kernel instead.
 */
#include "cuda/cuda_common.h"
#include "cuda/cuda_hopper.h"

#include <type_traits>

namespace {

#define GT_BN 128 /* C columns (n) a block: two warpgroups of 64 (wgmma's M) */
#define GT_BK 32
#define GT_BS (GT_BK * GT_BN) /* floats: a B stage, 16 boxes [32 k][8 n] */
#define GT_GROUP 8            /* m-tiles a raster group */
/* The two block shapes, by BM (C rows a block, wgmma's N): 128 with 5
 * stages, two consumer warpgroups and one producer warp (288 threads); 256
 * with 4 stages and whole warpgroups, producer first (384 threads,
 * launched at 168 registers; the producer warpgroup gives its registers
 * back with setmaxnreg.dec to 40 and the consumers take 232 with
 * setmaxnreg.inc: 128 accumulators a thread). */
template <int BM> struct gtc {
    static constexpr int ST = BM == 256 ? 4 : 5;
    static constexpr int NT = BM == 256 ? 384 : 288;
    static constexpr int PROD = BM == 256 ? 0 : 256;  /* the producer's first thread */
    static constexpr int CONS = BM == 256 ? 128 : 0;  /* the consumers' first thread */
    static constexpr int AS = BM * GT_BK;             /* floats: an A stage, swizzled */
    static constexpr size_t SMEM = (size_t)ST * (AS + GT_BS) * sizeof(float) + 2 * ST * 8 + 1024;
};

struct gtp {
    int m, n, k, ldc, ntm, ntn, kt;
    /* the split tail: work items 0 .. full - 1 are whole tiles, then the
     * remaining tiles split along k in `split` parts each (item full + u:
     * tile full + u / split, part u % split, k-steps [part kt / split,
     * (part + 1) kt / split)), their partial sums to ws (k_gemm_tf32_sum
     * adds them in part order into C); split 1: none */
    int full, split, items;
    float alpha, beta;
    float *ws;
};
/* the C origin of a tile (CL neighbouring n-tiles of one m-tile, CM x CN
 * blocks, this block at (rm, rn) in it), walked in groups of GT_GROUP
 * m-tiles, m fastest within a group */
template <int BM, int CM, int CN>
__device__ __forceinline__ void gt_origin(const gtp &q, int tile, int rm, int rn, int &m0, int &n0) {
    const int per = GT_GROUP * q.ntn, grp = tile / per, fm = grp * GT_GROUP,
              gs = min(GT_GROUP, q.ntm - fm);
    const int r = tile - grp * per;
    m0 = ((fm + r % gs) * CM + rm) * BM;
    n0 = ((r / gs) * CN + rn) * GT_BN;
}
/* Accumulator i of consumer thread ct (acc[4j + 2h + e], wgmma's D
 * fragment of C^T) is C's row m0 + 8j + 2t + e, column n0 + 64 wg + 16 warp
 * + g + 8h: alpha v + beta C stored there when it lies inside m and n. */
__device__ __forceinline__ void gt_put(float *C, const gtp &q, int m0, int n0, int ct, int i, float v) {
    const int wg = ct >> 7, warp = (ct >> 5) & 3, lane = ct & 31, g = lane >> 2, t = lane & 3;
    const int n = n0 + 64 * wg + 16 * warp + g + 8 * ((i >> 1) & 1), m = m0 + 8 * (i >> 2) + 2 * t + (i & 1);
    if (n >= q.n || m >= q.m) return;
    float *c = C + (int64_t)m * q.ldc + n;
    const float a = q.alpha * v;
    *c = q.beta != 0.f ? a + q.beta * *c : a;
}
/* work item -> tile and k-steps [k0, k1); part -1: a whole tile */
__device__ __forceinline__ void gt_item(const gtp &q, int item, int &tile, int &part, int &k0, int &k1) {
    if (item < q.full) {
        tile = item, part = -1, k0 = 0, k1 = q.kt;
        return;
    }
    const int u = item - q.full;
    tile = q.full + u / q.split;
    part = u % q.split;
    k0 = (int)((int64_t)part * q.kt / q.split);
    k1 = (int)((int64_t)(part + 1) * q.kt / q.split);
}
struct gttm {
    CUtensorMap a, b;
};

/* D[64 x 128] += A[64 x 8] * B[8 x 128], A from registers (the m16n8k8
 * TF32 A fragment of each warp's 16 rows: a0 (g, t), a1 (g + 8, t), a2
 * (g, t + 4), a3 (g + 8, t + 4)), B K-major in shared memory (db) */
__device__ __forceinline__ void gt_wgmma_rs128(float *d, const unsigned *a, uint64_t db) {
#if IG_WGMMA
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, {%64,%65,%66,%67}, %68, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1)
                 : "memory");
#endif
}

/* D[64 x 256] += A[64 x 8] * B[8 x 256]: the same for the 256-row tile */
__device__ __forceinline__ void gt_wgmma_rs256(float *d, const unsigned *a, uint64_t db) {
#if IG_WGMMA
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, {%128,%129,%130,%131}, %132, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1)
                 : "memory");
#endif
}
template <int BM> __device__ __forceinline__ void gt_wgmma(float *d, const unsigned *a, uint64_t db) {
    if constexpr (BM == 256)
        gt_wgmma_rs256(d, a, db);
    else
        gt_wgmma_rs128(d, a, db);
}

template <int BM, int CL>
__global__ void __launch_bounds__(gtc<BM>::NT, 1)
    k_gemm_tf32(float *__restrict__ C, const gtp q, const __grid_constant__ gttm tm) {
    constexpr int GT_ST = gtc<BM>::ST, GT_AS = gtc<BM>::AS, GT_BM = BM;
    extern __shared__ float4 gt_smem4[];
    float *smem = reinterpret_cast<float *>(gt_smem4);
    smem += ((1024 - ((unsigned)__cvta_generic_to_shared(smem) & 1023)) & 1023) / 4;
    float *As = smem, *Bs = smem + GT_ST * GT_AS;
    uint64_t *full = reinterpret_cast<uint64_t *>(Bs + GT_ST * GT_BS), *empty = full + GT_ST;
    const int tid = threadIdx.x;
    /* Persistent: cluster c takes tiles c, c + ncl, ... (each tile CL
     * neighbouring n-tiles of one m-tile, one a block; q.ntn counts such
     * groups), walked in groups of GT_GROUP m-tiles, m fastest within a
     * group. The stages run on across tiles, so the next tile's copies
     * overlap this one's last MMAs and its epilogue. */
    /* a cluster is CM x CN blocks (m x n): CL 2 is 1 x 2, CL 4 is 2 x 2;
     * blocks in one row (rm) share the A tile, in one column (rn) B's */
    constexpr int CM = CL == 4 ? 2 : 1, CN = CL / CM;
    const unsigned rank = CL > 1 ? ig_cluster_rank() : 0u;
    const int rm = (int)rank / CN, rn = (int)rank % CN;
    const int ncl = (int)(gridDim.x / CL);
    if (tid == 0) {
        for (int i = 0; i < GT_ST; i++) {
            ig_mbar_init(full + i, 1);
            ig_mbar_init(empty + i, 8 * CL);
        }
        ig_mbar_init_fence();
    }
    if constexpr (CL > 1)
        ig_cluster_sync(); /* the peers' barriers are ready before any copy */
    else
        __syncthreads();
    if (tid >= gtc<BM>::PROD && tid < gtc<BM>::PROD + (BM == 256 ? 128 : 32)) {
        /* the producer: lane 0 of its first warp the A box (with clusters,
         * this block's 1/CN of it, to every block of its cluster row), lanes
         * 1-16 the B boxes (in 2 x 2 clusters, this block's half of them,
         * to both blocks of its cluster column) */
        if constexpr (BM == 256) ig_setmaxnreg_dec<40>();
        const int lane = tid - gtc<BM>::PROD;
        if (lane <= 16) {
            int slot = 0, it = 0;
            unsigned ph = 0;
            for (int item = (int)(blockIdx.x / CL); item < q.items; item += ncl) {
                int tile, part, k0, k1, m0, n0;
                gt_item(q, item, tile, part, k0, k1);
                gt_origin<BM, CM, CN>(q, tile, rm, rn, m0, n0);
                for (int kt = k0; kt < k1; kt++, it++) {
                    if (it >= GT_ST) ig_mbar_wait(empty + slot, ph ^ 1u);
                    if (lane == 0) ig_mbar_expect(full + slot, (GT_AS + GT_BS) * 4u);
                    __syncwarp(0x1ffffu);
                    if (lane > 0) {
                        if constexpr (CM > 1) {
                            if ((lane - 1) / (16 / CM) == rm)
                                ig_tma2_mc(Bs + slot * GT_BS + (lane - 1) * 256, &tm.b,
                                           n0 + 8 * (lane - 1), kt * GT_BK, full + slot,
                                           (unsigned short)((1u << rn) | (1u << (CN + rn))));
                        } else {
                            ig_tma2(Bs + slot * GT_BS + (lane - 1) * 256, &tm.b, n0 + 8 * (lane - 1),
                                    kt * GT_BK, full + slot);
                        }
                    } else if constexpr (CL > 1)
                        ig_tma2_mc(As + slot * GT_AS + rn * (GT_AS / CN), &tm.a, kt * GT_BK,
                                   m0 + rn * (GT_BM / CN), full + slot,
                                   (unsigned short)(((1u << CN) - 1u) << (rm * CN)));
                    else
                        ig_tma2(As + slot * GT_AS, &tm.a, kt * GT_BK, m0, full + slot);
                    if (++slot == GT_ST) slot = 0, ph ^= 1u;
                }
            }
        }
        if constexpr (CL > 1) ig_cluster_sync(); /* see the consumers' end */
        return;
    }
    if constexpr (BM == 256) ig_setmaxnreg_inc<232>();
    const int ct = tid - gtc<BM>::CONS;
    const int wg = ct >> 7, warp = (ct >> 5) & 3, lane = ct & 31, g = lane >> 2, t = lane & 3;
    float acc[BM / 2];
    /* this thread's fragment rows: n = 64 wg + 16 warp + g (+ 8), in B boxes
     * bx and bx + 1, k row t (+ 4) of each k8 step */
    const int fo = (8 * wg + 2 * warp) * 256 + t * 8 + g;
    const unsigned da0 = (unsigned)ig_desc_sw128(As);
    constexpr uint64_t DHI = ig_desc_sw128_hi << 32;
    unsigned af[2][4][4];
    int slot = 0, pslot = 0;
    unsigned ph = 0;
    /* free a stage's slot once this warp's wgmmas on it are done: in every
     * block of the cluster (the next copy into it writes all of them) */
    auto release = [&](int sl) {
        if constexpr (CL > 1) {
            if (lane < CL) ig_mbar_arrive_cluster(empty + sl, (unsigned)lane); /* lane c: block c */
        } else if (lane == 0) {
            ig_mbar_arrive(empty + sl);
        }
    };
    /* a stage: its fragments into buffer BUF while the previous stage's
     * wgmmas run, then its 4 wgmmas, then wait for the previous ones and
     * free their slot */
    int k0 = 0;
    auto stage = [&](int kt, auto bufc) {
        constexpr int BUF = decltype(bufc)::value;
        ig_mbar_wait(full + slot, ph);
        const float *bs = Bs + slot * GT_BS + fo;
#pragma unroll
        for (int k8 = 0; k8 < 4; k8++) {
            af[BUF][k8][0] = ig_tf32(bs[k8 * 64]);
            af[BUF][k8][1] = ig_tf32(bs[k8 * 64 + 256]);
            af[BUF][k8][2] = ig_tf32(bs[k8 * 64 + 32]);
            af[BUF][k8][3] = ig_tf32(bs[k8 * 64 + 256 + 32]);
        }
        ig_wg_fence();
        const unsigned da = da0 + (unsigned)slot * (GT_AS / 4);
#pragma unroll
        for (int k8 = 0; k8 < 4; k8++) gt_wgmma<BM>(acc, af[BUF][k8], DHI | (da + 2u * k8));
        ig_wg_commit();
        ig_wg_wait<1>();
        if (kt > k0) release(pslot);
        pslot = slot;
        if (++slot == GT_ST) slot = 0, ph ^= 1u;
    };
    for (int item = (int)(blockIdx.x / CL); item < q.items; item += ncl) {
        int tile, part, k1, m0, n0;
        gt_item(q, item, tile, part, k0, k1);
        gt_origin<BM, CM, CN>(q, tile, rm, rn, m0, n0);
#pragma unroll
        for (int i = 0; i < BM / 2; i++) {
            acc[i] = 0.f;
            asm volatile("" : "+f"(acc[i]));
        }
        int kt = k0;
        for (; kt + 1 < k1; kt += 2) {
            stage(kt, std::integral_constant<int, 0>());
            stage(kt + 1, std::integral_constant<int, 1>());
        }
        if (kt < k1) stage(kt, std::integral_constant<int, 0>());
        ig_wg_wait<0>();
        release(pslot); /* the tile's last stage: the producer is already on the next tile */
        if (part >= 0) {
            /* a part of a split tile: its partial sums to ws, acc index
             * major (a warp's stores are 128 contiguous bytes) */
            float *w = q.ws + ((size_t)(item - q.full) * CL + rank) * (size_t)(BM / 2 * 256) + ct;
#pragma unroll
            for (int i = 0; i < BM / 2; i++) w[(size_t)i * 256] = acc[i];
            continue;
        }
#pragma unroll
        for (int i = 0; i < BM / 2; i++) gt_put(C, q, m0, n0, ct, i, acc[i]);
    }
    if constexpr (CL > 1) ig_cluster_sync(); /* the peer's arrivals on our barriers are done */
}

/* The split tail's sums: block (b, y) covers accumulators 8y .. 8y + 7 of
 * block b % CL of remaining tile b / CL; thread ct adds the parts' partial
 * sums of them in part order (the same result every run; the 8 loads of a
 * part independent, so a thread keeps 8 in flight) and writes alpha sum +
 * beta C where the epilogue would have. (One block a tile with a 128-step
 * loop of dependent loads instead takes ~80 us at 4096^3 on the H200.) */
template <int BM, int CL>
__global__ void __launch_bounds__(256) k_gemm_tf32_sum(float *__restrict__ C, const gtp q,
                                                       const float *__restrict__ ws) {
    constexpr int CM = CL == 4 ? 2 : 1, CN = CL / CM;
    const int rank = (int)blockIdx.x % CL, rt = (int)blockIdx.x / CL, ct = threadIdx.x;
    const int rm = rank / CN, rn = rank % CN;
    int m0, n0;
    gt_origin<BM, CM, CN>(q, q.full + rt, rm, rn, m0, n0);
    const size_t blk = (size_t)(BM / 2 * 256);
    const int i0 = 8 * (int)blockIdx.y;
    const float *w = ws + ((size_t)rt * q.split * CL + rank) * blk + (size_t)i0 * 256 + ct;
    float s[8];
#pragma unroll
    for (int ii = 0; ii < 8; ii++) s[ii] = 0.f;
    for (int pt = 0; pt < q.split; pt++, w += (size_t)CL * blk)
#pragma unroll
        for (int ii = 0; ii < 8; ii++) s[ii] += __ldg(w + (size_t)ii * 256);
#pragma unroll
    for (int ii = 0; ii < 8; ii++) gt_put(C, q, m0, n0, ct, i0 + ii, s[ii]);
}

int gt_shape(const tc__problem *p, char *why, size_t n) {
    const char *w = NULL;
    if (p->op != TC_OP_GEMM || p->dtype != TC_FLOAT32)
        w = "float32 GEMM only";
    else if (p->trans_a || p->trans_b)
        w = "transposed operands (cuda.gemm.simt takes them)";
    else if (p->lda % 4 || p->ldb % 4)
        w = "lda and ldb must be multiples of 4 (16-byte rows for the tensor copies)";
    else if (p->m > INT32_MAX - 256 || p->n > INT32_MAX - GT_BN || p->k > INT32_MAX - GT_BK ||
             p->ldc > INT32_MAX || p->m * p->ldc > ((int64_t)1 << 40))
        w = "sizes beyond 32-bit tile indexing";
    if (w && why) snprintf(why, n, "%s", w);
    return w == NULL;
}
int gt_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!gt_shape(p, why, n)) return 0;
    if (!e || !(e->flags & TC_PLAN_ALLOW_TF32)) {
        if (why) snprintf(why, n, "TF32 only when the plan flags include TC_PLAN_ALLOW_TF32");
        return 0;
    }
    if (!tc__cu_available()) {
        if (why) snprintf(why, n, "no usable CUDA device");
        return 0;
    }
    if (!ig_wgmma_ok() || !ig_tma_encoder()) {
        if (why) snprintf(why, n, "needs a Hopper GPU (sm_90a image, wgmma) and the driver's tensor maps");
        return 0;
    }
    const int64_t tiles = tc__cu_div_up(p->m, 128) * tc__cu_div_up(p->n, GT_BN);
    if (tiles > INT32_MAX - 65536) {
        if (why) snprintf(why, n, "more than 2^31 - 65536 tiles");
        return 0;
    }
    return 1;
}
/* The TF32 tensor cores' dense rate is ~7.4x the nominal FP32 rate on the
 * H100 and H200; modelled at 4.5x for the 256-row forms (280-334 TFLOP/s
 * measured at 2048^3 to 8192^3, against the nominal 67) and
 * 2.6x for the 128-row one (m <= 128; 165-188) */
double gt_estimate(const tc__problem *p, const tc__env *e) {
    return tc__cu_estimate(tc__problem_bytes(p), tc__problem_flops(p) / (p->m > 128 ? 4.5 : 2.6), 1.0);
}

int gt_attr_set[IG_NDEV][6];
int gt_resident[IG_NDEV][6]; /* clusters (blocks) of each form resident at once, 0: not asked */
/* The BM x CL form on the current device: its shared-memory attribute set
 * (once a device), and the persistent grid's size, the clusters resident
 * at once (asked once a device and form; the kernel report asks the same
 * through tc__cu_max_clusters), capped by TILECONV_CUDA_GEMM_TF32_GRID=n (tests:
 * several tiles a cluster). The launch and the device scratch bound
 * (gt_scratch) both ask here. */
template <int BM, int CL> tc_status gt_prepare(int *res_out) {
    int dev = 0;
    TC_CU(cudaGetDevice(&dev));
    const int fi = (BM == 256) + 2 * (CL == 2) + 4 * (CL == 4);
    if (dev < 0 || dev >= IG_NDEV || !__atomic_load_n(&gt_attr_set[dev][fi], __ATOMIC_ACQUIRE)) {
        TC_CU(cudaFuncSetAttribute(k_gemm_tf32<BM, CL>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)gtc<BM>::SMEM));
        if (dev >= 0 && dev < IG_NDEV) __atomic_store_n(&gt_attr_set[dev][fi], 1, __ATOMIC_RELEASE);
    }
    int res = dev >= 0 && dev < IG_NDEV ? __atomic_load_n(&gt_resident[dev][fi], __ATOMIC_ACQUIRE) : 0;
    if (res <= 0) {
        const tc__cu_device *d = tc__cu_dev();
        res = d ? d->sms / CL : 1;
        if (CL > 1) {
            int nc = 0;
            if (tc__cu_max_clusters((const void *)k_gemm_tf32<BM, CL>, gtc<BM>::NT, gtc<BM>::SMEM,
                                    CL, &nc) == cudaSuccess &&
                nc > 0)
                res = nc;
        }
        if (res < 1) res = 1;
        if (dev >= 0 && dev < IG_NDEV) __atomic_store_n(&gt_resident[dev][fi], res, __ATOMIC_RELEASE);
    }
    const char *ge = tc__knob_get(TC__KNOB_CUDA_GEMM_TF32_GRID);
    if (ge && atoi(ge) >= 1 && atoi(ge) < res) res = atoi(ge);
    *res_out = res;
    return TC_OK;
}
/* The split tail: where the last round of tiles would leave most of the
 * grid idle (rem tiles, rem <= res / 2), those tiles are split along k
 * into S = res / rem parts (at most 8, each >= 8 k-steps), so the round
 * takes about 1 / S of a tile's time; their partial sums go through a
 * workspace and k_gemm_tf32_sum. On the H200 the 2 x 2 form has 30
 * clusters resident (120 of 132 SMs): 4096^3's 128 tiles of it take 5
 * rounds unsplit. TILECONV_CUDA_GEMM_TF32_SPLIT=S forces S parts wherever a round is
 * partial (tests), 0 or 1 turns it off. Returns S (1: no split), *rem. */
static int gt_split(int64_t ntiles, int res, int kt, int *rem_out) {
    const int rem = (int)(ntiles % res);
    int S = rem > 0 && 2 * rem <= res ? res / rem : 1;
    if (S > 8) S = 8;
    if (S > kt / 8) S = kt / 8;
    const char *se = tc__knob_get(TC__KNOB_CUDA_GEMM_TF32_SPLIT);
    if (se && se[0] >= '0' && se[0] <= '9') S = rem > 0 ? atoi(se) : 1;
    if (S > 64) S = 64; /* a forced S: the workspace and the item count stay small */
    if (S > kt) S = kt;
    if (S < 2 || ntiles <= res) S = 1;
    *rem_out = rem;
    return S;
}
/* the split tail's partial sums: bytes */
template <int BM, int CL> size_t gt_ws_bytes(int rem, int S) {
    return S > 1 ? (size_t)rem * S * CL * (BM / 2 * 256) * sizeof(float) : 0;
}
/* the device scratch of the BM x CL form on problem p (the device_workspace
 * bound: exact where the operands are 16-byte aligned, else 0 is taken) */
template <int BM, int CL> size_t gt_scratch(const tc__problem *p) {
    constexpr int CM = CL == 4 ? 2 : 1, CN = CL / CM;
    int res = 0;
    if (gt_prepare<BM, CL>(&res) != TC_OK) {
        tc__error_clear();
        res = 1;
    }
    const int64_t ntiles = tc__cu_div_up(tc__cu_div_up(p->m, BM), CM) *
                           tc__cu_div_up(tc__cu_div_up(p->n, GT_BN), CN);
    int rem = 0;
    const int S = gt_split(ntiles, res, (int)tc__cu_div_up(p->k, GT_BK), &rem);
    return gt_ws_bytes<BM, CL>(rem, S);
}
template <int BM, int CL> tc_status launch_gemm_tf32_f(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    constexpr int GT_BM = BM;
    const float *A = (const float *)b->x, *B = (const float *)b->w;
    if ((uintptr_t)A % 16 || (uintptr_t)B % 16) return tc__cu_sgemm_launch(a, b);
    constexpr int CM = CL == 4 ? 2 : 1, CN = CL / CM;
    gttm tm;
    memset(&tm, 0, sizeof tm);
    /* with clusters, each block's share of the A tile */
    tc_status st = ig_gemm_tensor_maps(p, A, B, GT_BM / CN, GT_BK, &tm.a, &tm.b, "cuda.gemm.wgmma-tf32");
    if (st) return st;
    int res = 0;
    tc_status pst = gt_prepare<BM, CL>(&res);
    if (pst) return pst;
    gtp q;
    q.m = (int)p->m; q.n = (int)p->n; q.k = (int)p->k; q.ldc = (int)p->ldc;
    q.ntm = (int)tc__cu_div_up(tc__cu_div_up(p->m, GT_BM), CM); /* groups of CM m-tiles */
    q.ntn = (int)tc__cu_div_up(tc__cu_div_up(p->n, GT_BN), CN); /* and of CN n-tiles */
    q.kt = (int)tc__cu_div_up(p->k, GT_BK);
    q.alpha = (float)p->alpha;
    q.beta = (float)p->beta;
    /* the persistent grid: res clusters (gt_prepare), at most one a tile */
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = CL;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.blockDim = dim3(gtc<BM>::NT);
    cfg.dynamicSmemBytes = gtc<BM>::SMEM;
    cfg.stream = b->s;
    cfg.attrs = CL > 1 ? at : NULL;
    cfg.numAttrs = CL > 1 ? 1 : 0;
    const int64_t ntiles = (int64_t)q.ntm * q.ntn;
    int rem = 0;
    const int S = gt_split(ntiles, res, q.kt, &rem); /* the split tail */
    q.full = (int)(S > 1 ? ntiles - rem : ntiles);
    q.split = S;
    q.items = q.full + (S > 1 ? rem * S : 0);
    q.ws = NULL;
    const size_t wsb = gt_ws_bytes<BM, CL>(rem, S);
    if (wsb && tc__cu_alloc((void **)&q.ws, wsb, b->s) != TC_OK) { /* no room: whole tiles */
        tc__error_clear();
        q.full = q.items = (int)ntiles;
        q.split = 1;
        q.ws = NULL;
    }
    cfg.gridDim = dim3((unsigned)((q.items < res ? q.items : res) * CL));
    cudaError_t le = cudaLaunchKernelEx(&cfg, k_gemm_tf32<BM, CL>, (float *)b->y, q, tm);
    if (le == cudaSuccess && q.split > 1)
        k_gemm_tf32_sum<BM, CL><<<dim3((unsigned)(rem * CL), BM / 16), 256, 0, b->s>>>((float *)b->y, q, q.ws);
    if (q.ws) tc__cu_free(q.ws, b->s);
    TC_CU(le);
    TC_CU_LAUNCH("cuda.gemm.wgmma-tf32");
    return TC_OK;
}
/* The form (gt_form): 256 rows a block where m > 128 (128 otherwise), in clusters of
 * two along n sharing A where there are two n-tiles or more (H200:
 * 256 x 2 274-328 TFLOP/s, the 128 form alone 169-185), and in 2 x 2
 * clusters (A shared along n, B along m) where there are 256 tiles of
 * 256 x 128 or more (H200, with the split tail: 3072^3 (288
 * tiles) 305 TFLOP/s against 287 for 1 x 2, 3584^3 333 against 319,
 * 4096^3 337-343 against 315-319, 4608^3 352 against 328, 8192^3 362-366
 * against 322-332; 2048^3 (128 tiles) 238 against 257);
 * TILECONV_CUDA_GEMM_TF32_BM=128|256 and TILECONV_CUDA_GEMM_TF32_CL=1|2|4 force one. */
static void gt_form(const tc__problem *p, int *bm256_out, int *cl_out) {
    const char *e = tc__knob_get(TC__KNOB_CUDA_GEMM_TF32_BM), *c = tc__knob_get(TC__KNOB_CUDA_GEMM_TF32_CL);
    const int bm256 = e && (!strcmp(e, "256") || !strcmp(e, "128")) ? !strcmp(e, "256") : p->m > 128;
    const int64_t tiles = tc__cu_div_up(p->m, 256) * tc__cu_div_up(p->n, GT_BN);
    *cl_out = c && (!strcmp(c, "1") || !strcmp(c, "2") || !strcmp(c, "4")) ? atoi(c)
              : p->n <= GT_BN ? 1
              : bm256 && p->m > 256 && tiles >= 256 ? 4
                                                    : 2;
    *bm256_out = bm256;
}
/* device scratch (the device_workspace bound): the split tail's partial
 * sums of the form gt_form picks */
size_t gt_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    int bm256, cl;
    gt_form(p, &bm256, &cl);
    if (bm256)
        return cl == 4 ? gt_scratch<256, 4>(p) : cl == 2 ? gt_scratch<256, 2>(p) : gt_scratch<256, 1>(p);
    return cl == 4 ? gt_scratch<128, 4>(p) : cl == 2 ? gt_scratch<128, 2>(p) : gt_scratch<128, 1>(p);
}
tc_status launch_gemm_tf32(const tc__args *a, const tc__cu_bufs *b) {
    int bm256, cl;
    gt_form(a->p, &bm256, &cl);
    if (bm256)
        return cl == 4   ? launch_gemm_tf32_f<256, 4>(a, b)
               : cl == 2 ? launch_gemm_tf32_f<256, 2>(a, b)
                         : launch_gemm_tf32_f<256, 1>(a, b);
    return cl == 4 ? launch_gemm_tf32_f<128, 4>(a, b)
           : cl == 2 ? launch_gemm_tf32_f<128, 2>(a, b)
                     : launch_gemm_tf32_f<128, 1>(a, b);
}
tc_status gt_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, launch_gemm_tf32); }

} // namespace

/* the kernel report (tc_cuda_kernel_report): registers and the largest
 * block each form can launch ("maxthr" below "thr": it cannot) */
void tc__cu_report_gemm_tf32(tc__cu_report *r) {
    struct {
        const void *f;
        const char *name;
        int nt;
        size_t smem;
    } fs[6] = {{(const void *)k_gemm_tf32<128, 1>, "cuda.gemm.wgmma-tf32 128x128", gtc<128>::NT, gtc<128>::SMEM},
               {(const void *)k_gemm_tf32<256, 1>, "cuda.gemm.wgmma-tf32 256x128", gtc<256>::NT, gtc<256>::SMEM},
               {(const void *)k_gemm_tf32<128, 2>, "cuda.gemm.wgmma-tf32 128x128 cluster 1x2", gtc<128>::NT, gtc<128>::SMEM},
               {(const void *)k_gemm_tf32<256, 2>, "cuda.gemm.wgmma-tf32 256x128 cluster 1x2", gtc<256>::NT, gtc<256>::SMEM},
               {(const void *)k_gemm_tf32<128, 4>, "cuda.gemm.wgmma-tf32 128x128 cluster 2x2", gtc<128>::NT, gtc<128>::SMEM},
               {(const void *)k_gemm_tf32<256, 4>, "cuda.gemm.wgmma-tf32 256x128 cluster 2x2", gtc<256>::NT, gtc<256>::SMEM}};
    for (int i = 0; i < 6; i++) {
        cudaFuncSetAttribute(fs[i].f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)fs[i].smem);
        (void)cudaGetLastError();
        tc__cu_report_kernel(r, fs[i].name, fs[i].f, fs[i].nt, fs[i].smem);
    }
    for (int i = 2; i < 6; i++) /* the persistent grid of each cluster form */
        tc__cu_report_clusters(r, fs[i].name, fs[i].f, fs[i].nt, fs[i].smem, i < 4 ? 2 : 4);
}

TC__CU_SOLVER(tc__solver_cuda_gemm_tf32) = {
    "cuda.gemm.wgmma-tf32", TC_BACKEND_CUDA, TC_OP_GEMM,
    "GPU GEMM on Hopper's TF32 tensor cores (wgmma, B^T from registers, A by TMA; 256x128x32 tiles in clusters of two sharing A by TMA multicast, 2x2 sharing B too from 256 tiles, persistent, a partial last round split along k; 128x128 where m <= 128); only under TC_PLAN_ALLOW_TF32.",
    tc__cu_available, gt_applicable, gt_estimate, NULL, NULL, NULL, gt_execute,
    NULL, NULL, gt_device_ws, 0, tc__cu_report_gemm_tf32,
};
