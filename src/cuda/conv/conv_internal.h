/*
 * conv_internal.h - what the files of the CUDA conv-layer solvers share
 * (src/cuda/conv/; private, C++/CUDA only).
 *
 * The layer, for group g: C[k][q] = sum_l W_g[k][l] * X_g[l][q], with the
 * reduction row l = (c, r0, r1, r2) (input channel, tap) and the column
 * q = (n, output position); NCHW in and out, bias in the epilogue.
 *
 * Files:
 *   gather.cuh            device helpers: tap and reduction-row tables, the
 *                         in-bounds tap masks, the padding-mode index map,
 *                         the core-matrix layout of wgmma operands, mma.sync
 *   igemm_generic.cu      the generic implicit GEMM (64-bit gather)
 *   igemm_tiled.cu        the tiled implicit GEMM (fp32 FFMA, TF32 mma.sync,
 *                         TF32 wgmma inner products) and its split-K sum
 *   igemm_1x1_stream.cu   1x1 layers in TF32 as a stream through resident
 *                         weights (mma.sync or wgmma)
 *   igemm_shifted.cu      stride-1 layers in TF32 as shifted views of an
 *                         input patch (wgmma; copies by cp.async or TMA),
 *                         and the channels-last copies it reads
 *   igemm_depth_ring.cu   3D layers in TF32: shifted views marching along
 *                         depth over a ring of plane slots (wgmma, TMA)
 *   igemm_select.cu       which form runs a layer, the tile shape and
 *                         split-K model, the device scratch bound, the
 *                         entry points other solvers call (cuda_common.h)
 *   depthwise.cu          the depthwise kernels and their launch
 *   solver_*.cu           cuda.conv.igemm, cuda.conv.igemm-tf32,
 *                         cuda.conv.igemm-3xtf32, cuda.conv.depthwise
 *
 * The files of the implicit GEMM and the depthwise kernels are compiled
 * with the same images (sm_90 and, where CMake adds it, sm_90a), so one
 * probe (cv_wgmma_ok, igemm_select.cu) tells for all of them whether the
 * device runs the sm_90a image with the wgmma kernels.
 */
#ifndef TC_CUDA_CONV_INTERNAL_H
#define TC_CUDA_CONV_INTERNAL_H

#include "cuda/cuda_common.h"

#include "cuda/cuda_hopper.h" /* cp.async, wgmma, mbarriers, TMA */

namespace tc_conv {

/* ---- the generic kernel's problem description (64-bit) ---- */
#define CV_M 128
#define CV_N 128
#define CV_K 8

struct cargs {
    int64_t C, K, G, Cg, Kg, R, Rl; /* Rl = Cg * R */
    int64_t in0, in1, in2, m0, m1, m2, out0, out1, out2, P, NP;
    int64_t s0, s1, s2, d0, d1, d2, p0, p1, p2;
    int mode;
    float cval;
};

/* ---- the tiled implicit GEMM ---- */
#define IG_BN 128
#define IG_BK 16
#define IG_AP 20  /* A row pitch (floats): 16 + 4, conflict-free for both paths */
#define IG_BP 136 /* B row pitch (floats): 128 + 8, conflict-free mma B loads */
#define IG_STAGES 4
#define IG_TAPMAX 2048
#define IG_MAXSPLIT 16
/* reduction-row table entries (int2, 30 KiB): with the tap table (R < 64,
 * <= 1008 bytes) within the IG_TAPMAX room the kernels are set up for */
#define IG_LTMAX 3840

/* 32-bit problem description (ig_fast checks every bound) */
struct igp {
    int C, Cg, K, Kg, G, R, Rl, P, NP;
    int in0, in1, in2, plane;
    int m0, m1, m2, out1, out2;
    int s0, s1, s2, d0, d1, d2, p0, p1, p2;
    int mode;
    float cval;
    int avec; /* A by 16-byte copies */
    int yvec; /* float4 output stores */
    int ktps; /* k tiles per split */
    int ltab; /* zero padding: the reduction-row table, 1: R <= 32, 2: R < 64 */
};

/* LM, the B loader: IG_ZEROS gathers with zero padding (out-of-bounds
 * elements by cp.async zero-fill, no branch), IG_REMAP gathers with any
 * padding mode (out-of-bounds elements remapped on a side path), IG_1X1
 * copies 4 columns of X_n with one 16-byte cp.async. */
enum { IG_ZEROS = 0, IG_REMAP = 1, IG_1X1 = 2 };

/* The tiled kernel's inner-product forms, also its kernel kinds (the
 * index of ig_tab's second axis):
 *   IG_F_FFMA    fp32 on the CUDA cores
 *   IG_F_MMA     TF32 mma.sync m16n8k8, B gathered by cp.async
 *   IG_F_MMA_RS  as IG_F_MMA, with zero padding and the single-bit row
 *                table B register-staged (the TF32 default)
 *   IG_F_WGMMA   TF32 wgmma, both operands as core matrices in shared
 *                memory (sm_90a image only)
 * The TF32 plans' other forms, with their own kernels and launchers:
 *   IG_F_SHIFTED      shifted views of an input patch, copies by cp.async
 *   IG_F_SHIFTED_TMA  the same with the copies by TMA */
enum {
    IG_F_FFMA = 0,
    IG_F_MMA = 1,
    IG_F_MMA_RS = 2,
    IG_F_WGMMA = 3,
    IG_F_SHIFTED = 4,
    IG_F_SHIFTED_TMA = 5
};
#define IG_NKIND 4 /* the tiled kernel's forms */

/* A form's shared-memory layout: k tile, stages, A and B pitches (floats).
 * The fp32 form: A pitch 20, B pitch 136. The mma.sync forms: within each
 * k8 step the reduction rows are permuted so that a thread's two A values
 * of a row (k = tq and tq + 4) are adjacent (one LDS.64), A pitch 24 and B
 * pitch 132: the A and B fragment loads are conflict-free. The wgmma form
 * stores both operands as 8 x 4 core matrices (no padding). */
template <int F> struct ig_layout {
    static constexpr int BK = IG_BK;
    static constexpr int ST = IG_STAGES;
    static constexpr int AP = F == IG_F_FFMA ? IG_AP : F == IG_F_WGMMA ? IG_BK : 24;
    static constexpr int BP = F == IG_F_FFMA ? IG_BP : F == IG_F_WGMMA ? IG_BN : 132;
};

extern const int ig_bm[3];         /* tile heights: 128, 64, 32 */
extern const int ig_kbk[IG_NKIND]; /* each form's k tile */
inline int ig_threads(int bm) { return bm == 32 ? 128 : 2 * bm; }

/* Tile height (index bi into ig_bm), reduction splits S and k tiles per
 * split */
struct ig_shape {
    int bi, S, ktps;
};

/* ---- the channels-last forms (shifted views, depth ring) ---- */
#define SV_BK 32     /* channels a chunk */
#define SV_MAXST 8   /* weight stages at most */
#define DR_MAXSL 8   /* plane slots at most */

/* The shifted-view plan: the layer, the patch geometry (padded width PW,
 * TH output rows a block, PH patch rows, PD0 patch planes, NPIX pixels,
 * NPIXA with the views' reach, rounded to 8), row blocks, channels padded
 * to CKP, output planes */
struct svp {
    igp a;
    int PW, TH, PH, PD0, NPIX, NPIXA, nrb, CKP, out0;
    int swz; /* 1: both operands in the 128-byte swizzled layout (the
              * default); 0: no-swizzle core matrices (TILECONV_CUDA_CONV_SHIFTED_SWIZZLE=0) */
    int nst; /* weight stages, nst - 2 in flight (TILECONV_CUDA_CONV_SHIFTED_STAGES, 3..8) */
    double blocks; /* the grid's blocks (host side: the TMA form's stages and estimate) */
};
/* the TMA copies' tensor maps: xT (C, in2, in1, in0, N) and wT (Rl, K) */
struct sv_maps {
    CUtensorMap x, w;
};
/* A shifted-view launch as planned on the host: the plan, its block's
 * shared memory, tile index, row tiles and kernel form (tma: copies by
 * TMA) */
struct sv_sel {
    svp q;
    size_t smem;
    int bi, mt, tma;
    int x3; /* 1: the 3xTF32 kernel (cuda.conv.igemm-3xtf32; ig_tf32_split, cuda_hopper.h) */
};

/* The depth-ring plan */
struct drp {
    igp a;
    int PW, TH, PH, PD0, nrb, out0, CKP;
    int SROWS;     /* pixel rows of a plane slot (a multiple of 8: 1 KiB) */
    int NSL;       /* plane slots */
    int DS, nseg;  /* output planes an item, items along depth */
    int ktiles;    /* 32-channel output tiles a group */
    int64_t items; /* N * nrb * nseg */
};
/* A depth-ring launch as planned: the plan, the block's shared memory,
 * the grid's x and the consumer warpgroups (0: not taken) */
struct dr_sel {
    drp q;
    size_t smem;
    unsigned gx;
    int mt;
};

/* The 1x1 stream's plan */
struct s1p {
    int C, Cg, CgP, K, Kg, G, P;
    int64_t NP;     /* N * P: the positions of all images, tiled as one run */
    int64_t ntiles; /* NP / 128 rounded up */
    int ktiles;     /* output-channel tiles of 64 a group */
    int wvec;       /* Cg % 4 == 0 and w 16-byte aligned: weights by cp.async */
};

/* ---- host functions across the files ---- */
/* igemm_select.cu */
int cv_wgmma_ok(void);
int cv_base(const tc__problem *p, char *why, size_t n);
cargs cv_args(const tc__problem *p);
tc_status cv_bias(const tc__args *a, cudaStream_t s, const float **db, void **own);
int ig_fast(const tc__problem *p);
int ig_is_1x1(const tc__problem *p);
igp ig_params(const tc__problem *p);
/* tf32: 0 fp32 (cuda.conv.igemm), 1 TF32 (cuda.conv.igemm-tf32), IG_3XTF32
 * the split-precision TF32 of cuda.conv.igemm-3xtf32 */
#define IG_3XTF32 2
tc_status ig_run(const tc__args *a, const tc__cu_bufs *b, int tf32);
tc_status ig_pick_shape(const igp &g, int tf32, int kind, int lm, int occ[3], ig_shape *out);
double ig_fill(const tc__problem *p);
double ig_blocks_time(const tc__problem *p);
/* igemm_generic.cu */
tc_status ig_run_generic(const tc__args *a, const tc__cu_bufs *b);
/* igemm_tiled.cu */
tc_status ig_prepare(int bi, int kind, int lm, int *occ, int x3 = 0);
tc_status ig_run_tiled(const tc__args *a, const tc__cu_bufs *b, igp g, int tf32, int kind,
                       int lm);
/* igemm_1x1_stream.cu */
int s1_plan(const tc__problem *p, const igp &g, const void *a_w, s1p *q, unsigned *gx,
            size_t *smem, int *wg, int x3 = 0);
tc_status s1_run(const tc__args *a, const tc__cu_bufs *b, const s1p &q, unsigned gx,
                 size_t smem, int wg, int x3 = 0);
/* igemm_shifted.cu */
int sv_select(const tc__problem *p, const igp &g, int lm, int tma, sv_sel *s);
int sv_default(const tc__problem *p, const igp &g, int lm, double *est, sv_sel *sel);
int sv_select3(const tc__problem *p, const igp &g, sv_sel *s);
int sv_tensor_maps(const svp &q, int bm, const void *xt, const void *wt, int64_t N, sv_maps *tm,
                   int x3 = 0);
tc_status sv_copies(const tc__problem *p, const tc__cu_bufs *b, const igp &g, int CKP, void **xt,
                    float **wt, int x3 = 0);
tc_status sv_run(const tc__args *a, const tc__cu_bufs *b, const sv_sel &sel, int lm);
/* igemm_depth_ring.cu */
int dr_select(const tc__problem *p, const igp &g, int lm, dr_sel *s);
int dr_default(const tc__problem *p, const igp &g, int lm, double *est, dr_sel *sel);
tc_status dr_run(const tc__args *a, const tc__cu_bufs *b, const dr_sel &sel);
/* depthwise.cu */
tc_status dw_launch(const tc__args *a, const tc__cu_bufs *b);

/* The kernels of each file for tc_cuda_kernel_report (the solvers'
 * `report` functions call them): tiled forms of the fp32 solver (tf32 = 0)
 * or of the TF32 one; the rest one file each. */
void ig_report_tiled(tc__cu_report *r, int tf32);
void ig_report_generic(tc__cu_report *r);
void s1_report(tc__cu_report *r);
void s1_report3(tc__cu_report *r);
void sv_report(tc__cu_report *r);
void sv_report3(tc__cu_report *r);
void dr_report(tc__cu_report *r);
void dw_report(tc__cu_report *r);

} // namespace tc_conv

#endif
