/*
 * igemm_half_shifted_trace.h - the wait-time trace of k_hs_conv
 * (cuda.conv.igemm-half-shifted), compiled in only where
 * igemm_half_shifted.cu is built with -DTC_HS_TRACE=1 (bench/hs_trace.sh
 * builds that object beside a default libtileconv.a; the default build has
 * none of it). Shared by that object and bench/hs_trace.cu.
 *
 * Armed (tc_hs_trace_arm with a device buffer), every k_hs_conv launch
 * writes one tc_hs_trace_block per block, at the block's linear index
 * blockIdx.x + gridDim.x (blockIdx.y + gridDim.y blockIdx.z); a launch
 * whose grid does not fit the buffer is not traced. Stamps are the SM's
 * %clock64 (comparable within one SM only), durations cycles of %clock,
 * gstart / gend %globaltimer nanoseconds (comparable across SMs).
 */
#ifndef TC_IGEMM_HALF_SHIFTED_TRACE_H
#define TC_IGEMM_HALF_SHIFTED_TRACE_H

#include <stddef.h>

#define TC_HS_TRACE_WARPS 8 /* consumer warps a block at most (two warpgroups) */

/* one consumer warp, written by its lane 0 */
typedef struct tc_hs_trace_warp {
    unsigned long long start;  /* clock64 at kernel entry */
    unsigned long long sync;   /* after the set-up's __syncthreads */
    unsigned long long first;  /* when the first full barrier passed (end of the prologue) */
    unsigned long long loop;   /* after the last wgmma.wait_group (end of the main loop) */
    unsigned long long epibar; /* after the epilogue's first named barrier */
    unsigned long long epism;  /* after its second: the fp32 tile in shared memory */
    unsigned long long end;    /* after the epilogue's stores */
    unsigned long long gend;   /* globaltimer at end */
    unsigned full;             /* cycles in full-barrier waits after the first */
    unsigned wgmma;            /* cycles in wgmma.wait_group (in the loop and the last) */
} tc_hs_trace_warp;

typedef struct tc_hs_trace_block {
    unsigned long long gstart; /* globaltimer at thread 0's entry */
    unsigned long long pstart; /* producer lane: clock64 at entry */
    unsigned long long pend;   /* producer lane: clock64 after its last copy was issued */
    unsigned empty;            /* producer lane: cycles in empty-barrier waits */
    unsigned smid;             /* %smid */
    unsigned nwarps;           /* consumer warps (4 or 8) */
    unsigned pad;
    tc_hs_trace_warp w[TC_HS_TRACE_WARPS];
} tc_hs_trace_block;

/* the last traced launch */
typedef struct tc_hs_trace_info {
    long long launches;  /* k_hs_conv launches traced since tc_hs_trace_arm */
    long long untraced;  /* launches whose grid did not fit the buffer */
    int blocks, grid[3]; /* the grid */
    int threads, smem;   /* block size, dynamic shared memory bytes */
    int cfg, nwg, mtw, bm, bn; /* tile configuration (hs_cfgs) */
    int nst, nsteps, R, CK;    /* weight stages, k steps a block (CK chunks x R taps;
                                  split-k: the longer half's) */
    int fit;                   /* blocks an SM by the occupancy calculator */
} tc_hs_trace_info;

#ifdef __cplusplus
extern "C" {
#endif
/* Arms the trace with a device buffer of `bytes` (NULL: disarms) and
 * clears the launch counts. Not thread-safe; 0 on success. */
int tc_hs_trace_arm(void *dev_buffer, size_t bytes);
/* The last traced launch into *info: 0, or 1 where none was traced since
 * arming. */
int tc_hs_trace_get(tc_hs_trace_info *info);
#ifdef __cplusplus
}
#endif

#endif
