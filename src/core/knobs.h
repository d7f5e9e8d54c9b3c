/*
 * knobs.h - every environment variable tileconv's code reads: the one
 * table (TC__KNOBS below) and its one accessor (tc__knob_get).
 *
 * A knob is X(ID, name, old name or NULL, default, reader, meaning):
 *   name     TILECONV_* (the one prefix);
 *   old name the name it had before, still read when `name` is unset
 *            (deprecated: docs/knobs.md);
 *   default  what applies when neither is set;
 *   reader   the component that reads it: core, cpu, cuda, mpi (the
 *            library), bench, tests.
 * `tileconv info --knobs` prints the table with each knob's value, and
 * docs/knobs.md documents it. A new knob is one line here; code reads it
 * with tc__knob_get(TC__KNOB_<ID>), never with getenv.
 *
 * Header-only (an enum and an inline accessor) so that the MPI library and
 * the tests, which link the shared library's public symbols only, read the
 * same table; the table as data for printing is tc__knob_table in knobs.c.
 */
#ifndef TC_KNOBS_H
#define TC_KNOBS_H

#include <stdlib.h>

#define TC__KNOBS(X)                                                                             \
    /* ---- core: threads, memory, planner ---- */                                             \
    X(CPUS, "TILECONV_CPUS", NULL, "the process's CPUs", "core",                                \
      "CPU list (e.g. 0-7,16) the thread pool may use, within the affinity mask and cgroup")    \
    X(NO_PIN, "TILECONV_NO_PIN", NULL, "0", "core",                                             \
      "1: do not pin the pool's threads to CPUs")                                               \
    X(SPIN_US, "TILECONV_SPIN_US", NULL, "50", "core",                                          \
      "microseconds the pool's threads wait for the next job spinning (in the second half "     \
      "yielding the CPU to any other runnable thread) before they sleep; 0: sleep at once")    \
    X(THREADS, "TILECONV_THREADS", NULL, "auto", "core",                                        \
      "where parallel jobs run: pool (tileconv's pinned threads), openmp (the OpenMP runtime "  \
      "already loaded in the process, e.g. torch's libgomp; the pool when none is) or auto "    \
      "(openmp when a runtime is loaded and OMP_WAIT_POLICY is not passive, else the pool)")   \
    X(NO_HUGEPAGES, "TILECONV_NO_HUGEPAGES", NULL, "0", "core",                                 \
      "1: no transparent huge pages for large workspaces")                                      \
    X(WISDOM, "TILECONV_WISDOM", NULL, "$XDG_CACHE_HOME or ~/.cache: tileconv/wisdom.txt", "core",  \
      "the wisdom file loaded by the first MEASURE / WISDOM_ONLY plan (empty: none)")           \
    X(CEILINGS, "TILECONV_CEILINGS", NULL, "$XDG_CACHE_HOME or ~/.cache: tileconv/ceilings.txt", \
      "core", "the measured-ceilings file of the cost model (empty: none)")                     \
    X(PLAN_TRACE, "TILECONV_PLAN_TRACE", "TC_PLAN_TRACE", "0", "core",                          \
      "1: the planner prints each candidate's estimate / time to stderr")                       \
    /* ---- cpu solvers (tests and tuning) ---- */                                              \
    X(L2_BYTES, "TILECONV_L2_BYTES", NULL, "the CPU's L2 size", "cpu",                          \
      "L2 bytes the direct filter tiles for (tests: small tiles)")                              \
    X(LLC_BYTES, "TILECONV_LLC_BYTES", NULL, "the CPU's last-level cache (one instance)", "cpu", \
      "last-level cache bytes the 3D direct filter compares input + output with: beyond it "    \
      "the output is streamed and the input prefetched two row blocks ahead (tests)")          \
    X(FD_RING, "TILECONV_FD_RING", NULL, "1", "cpu",                                            \
      "0: the direct filter's 3D masks in pieces instead of the plane ring (tests)")            \
    X(FD_PAIR, "TILECONV_FD_PAIR", NULL, "chosen per problem", "cpu",                           \
      "0 or 1: the plane ring's two-output-plane blocks off or on; 2 / 3: on, the taps "       \
      "loaded / shifted (tests)")                                                               \
    X(FD_LANES, "TILECONV_FD_LANES", NULL, "chosen per problem", "cpu",                         \
      "0 or 1: forces the direct filter's lane form off or on (tests)")                         \
    X(SEP_COL, "TILECONV_SEP_COL", NULL, "the best ISA", "cpu",                                 \
      "avx2: the separable filter's column pass without AVX-512 (tests)")                       \
    X(DW_BF16_ROUND, "TILECONV_DW_BF16_ROUND", NULL, "AVX512-BF16 where present", "cpu",     \
      "1: cpu.conv.depthwise rounds bfloat16 by integer arithmetic, as without AVX512-BF16 "  \
      "(tests)")                                                                                \
    X(SEP_FUSED, "TILECONV_SEP_FUSED", NULL, "1", "cpu",                                        \
      "0: the separable filter in strips instead of fused passes (tests)")                      \
    /* ---- cuda backend (tests, tuning and benchmarks) ---- */                                 \
    X(CUDA_CHUNK_BYTES, "TILECONV_CUDA_CHUNK_BYTES", "TC_CUDA_CHUNK_BYTES", "33554432", "cuda", \
      "input + output bytes per chunk of a batched filter on host arrays")                      \
    X(CUDA_CHECK_SCRATCH, "TILECONV_CUDA_CHECK_SCRATCH", "TC_CUDA_CHECK_SCRATCH", "0", "cuda",  \
      "1: an execute that takes more pool memory than the plan's device workspace fails")       \
    X(CUDA_DIRECT_VARIANT, "TILECONV_CUDA_DIRECT_VARIANT", "TC_CUDA_DIRECT_VARIANT", "chosen",  \
      "cuda", "i or i:b: cuda.filter.direct's kernel variant i of the kernel report; :b caps "     \
      "the lean and z-window forms' grid at b blocks (tuning, tests)")                          \
    X(CUDA_DIRECT_ZC, "TILECONV_CUDA_DIRECT_ZC", NULL, "chosen", "cuda",                       \
      "n: output planes a block of cuda.filter.direct's 3D plane ring and register z window "  \
      "stream (tuning)")                                                                         \
    X(CUDA_HALF_RING_RY, "TILECONV_CUDA_HALF_RING_RY", NULL, "4", "cuda",                     \
      "2: cuda.filter.direct-half's 3D plane ring at 2 output rows a thread, 3 blocks an SM "   \
      "(tuning)")                                                                               \
    X(CUDA_HALF_RING_AHEAD, "TILECONV_CUDA_HALF_RING_AHEAD", NULL, "1", "cuda",               \
      "2: cuda.filter.direct-half's 3D plane ring loads two input planes ahead, R + 2 "        \
      "shared slots (tuning)")                                                                  \
    X(CUDA_HALF_RING_EDGE, "TILECONV_CUDA_HALF_RING_EDGE", NULL, "1", "cuda",                 \
      "1: cuda.filter.direct-half's 3D plane ring in modes other than constant maps only the "  \
      "halo's edge column of chunks outside the row, stored after the compute; 0: every "      \
      "element of such chunks")                                                                 \
    X(CUDA_SEPARABLE_FUSED, "TILECONV_CUDA_SEPARABLE_FUSED", NULL, "unset", "cuda",           \
      "cuda.filter.separable: 0 one pass per axis; 1 x + y (+ z) fused; 2 x + y fused then a " \
      "z pass; 3 x + y + z with the register z window (float32 3D, masks <= 17; else as 1); "  \
      "4 the stream forms even where the array is too small to fill the device; unset (the "  \
      "default) the stream forms: the register z window with the near boundary map "         \
      "(float32 3D, masks <= 17), else the row stream x + y (masks <= 17; then a z pass; "    \
      "the fused x + y kernel where the rows cannot fill the device's warp slots), else as 1")\
    X(CUDA_SEPARABLE_ZREG_TY, "TILECONV_CUDA_SEPARABLE_ZREG_TY", NULL, "32", "cuda",           \
      "16: cuda.filter.separable's register z window (near map) with tiles of 16 output rows, "\
      "two blocks of 256 threads an SM, instead of 32 rows in one block of 512 (tuning; "      \
      "outputs of at most 16 rows take 16)")                                                   \
    X(CUDA_SEPARABLE_STREAM_WAVES, "TILECONV_CUDA_SEPARABLE_STREAM_WAVES", NULL, "1", "cuda",   \
      "n: cuda.filter.separable's row stream (=4) splits the rows into segments for n waves "  \
      "of its resident warps (more segments, more halo rows) (tuning)")                        \
    X(CUDA_GEMM_FP32_BK, "TILECONV_CUDA_GEMM_FP32_BK", "TC_CUDA_GEMM_FP32_BK", "chosen", "cuda", \
      "16 or 32: cuda.gemm.simt's k tile (tuning)")                                             \
    X(CUDA_GEMM_TF32_BM, "TILECONV_CUDA_GEMM_TF32_BM", "TC_CUDA_GEMM_TF32_BM", "chosen", "cuda", \
      "128 or 256: cuda.gemm.wgmma-tf32's tile height (tuning)")                                \
    X(CUDA_GEMM_TF32_CL, "TILECONV_CUDA_GEMM_TF32_CL", "TC_CUDA_GEMM_TF32_CL", "chosen", "cuda", \
      "1, 2 or 4: cuda.gemm.wgmma-tf32's cluster size (tuning)")                                \
    X(CUDA_GEMM_TF32_GRID, "TILECONV_CUDA_GEMM_TF32_GRID", "TC_CUDA_GEMM_TF32_GRID",            \
      "resident blocks", "cuda", "n: cuda.gemm.wgmma-tf32's persistent grid (tests)")           \
    X(CUDA_GEMM_TF32_SPLIT, "TILECONV_CUDA_GEMM_TF32_SPLIT", "TC_CUDA_GEMM_TF32_SPLIT",         \
      "chosen", "cuda", "n: cuda.gemm.wgmma-tf32's k split of the last round (tests)")          \
    X(CUDA_CONV_GENERIC, "TILECONV_CUDA_CONV_GENERIC", "TC_CUDA_CONV_GENERIC", "unset", "cuda", \
      "set: the conv solvers' generic kernels instead of the tiled ones (tests)")               \
    X(CUDA_CONV_TF32_KERNEL, "TILECONV_CUDA_CONV_TF32_KERNEL", "TC_CUDA_CONV_TFV", "chosen",    \
      "cuda",                                                                                   \
      "cuda.conv.igemm-tf32's kernel: 1 mma, 4 wgmma, 7 shifted, 8 shifted by TMA, "            \
      "11 1x1 stream, 12 mma (zero padding), 13 depth ring (tests, tuning)")                    \
    X(CUDA_CONV_SHAPE, "TILECONV_CUDA_CONV_SHAPE", "TC_CUDA_CONV_SHAPE", "chosen", "cuda",      \
      "bm,S: the implicit GEMM's tile height and k splits (tuning)")                            \
    X(CUDA_CONV_NO_ROW_TABLE, "TILECONV_CUDA_CONV_NO_ROW_TABLE", "TC_CUDA_CONV_NOLTAB",         \
      "unset", "cuda", "set: the implicit GEMM without its reduction-row table (tests)")        \
    X(CUDA_CONV_GRID, "TILECONV_CUDA_CONV_GRID", "TC_CUDA_CONV_V9GRID", "chosen", "cuda",       \
      "n: blocks along the tiles of the 1x1-stream and depth-ring kernels (tests)")             \
    X(CUDA_CONV_RING_PLANES, "TILECONV_CUDA_CONV_RING_PLANES", "TC_CUDA_CONV_V11DS", "chosen",  \
      "cuda", "n: output planes an item of the depth-ring kernel (tuning)")                     \
    X(CUDA_CONV_SHIFTED_SWIZZLE, "TILECONV_CUDA_CONV_SHIFTED_SWIZZLE", "TC_CUDA_CONV_V7SW",     \
      "1", "cuda", "0: the shifted-view kernel's blocks in launch order (tuning)")               \
    X(CUDA_CONV_SHIFTED_STAGES, "TILECONV_CUDA_CONV_SHIFTED_STAGES", "TC_CUDA_CONV_V7NST",      \
      "chosen", "cuda", "3..8: the shifted-view kernel's pipeline stages (tuning)")             \
    X(CUDA_CONV_FFT_FUSED, "TILECONV_CUDA_CONV_FFT_FUSED", "TC_CUDA_CONV_FFT_FUSED", "chosen",  \
      "cuda", "0 or 1: cuda.conv.fft's fused 64x64 transforms off or on (tests)")               \
    X(CUDA_CONV_FFT_NB, "TILECONV_CUDA_CONV_FFT_NB", "TC_CUDA_CONV_FFT_NB", "chosen", "cuda",   \
      "n: cuda.conv.fft's chunks of at most n images (tests)")                                  \
    X(CUDA_CONV_FFT_TILE, "TILECONV_CUDA_CONV_FFT_TILE", "TC_CUDA_CONV_FFT_TILE", "chosen",     \
      "cuda", "cuda.conv.fft's frequency-GEMM tile by name (tests)")                            \
    X(CUDA_DW_RV, "TILECONV_CUDA_DW_RV", "TC_CUDA_DW_RV", "chosen", "cuda",                     \
      "1: cuda.conv.depthwise one output row a thread (tuning)")                                \
    X(CUDA_DW_THREADS, "TILECONV_CUDA_DW_THREADS", "TC_CUDA_DW_THREADS", "1024", "cuda",        \
      "32..4096: cuda.conv.depthwise's target items a block (tuning)")                          \
    X(CUDA_WINO_BM, "TILECONV_CUDA_WINO_BM", "TC_CUDA_WINO_BM", "chosen", "cuda",               \
      "128, 64 or 32: the CUDA Winograd GEMM's tile height (tuning)")                           \
    X(CUDA_WINO_GEMM, "TILECONV_CUDA_WINO_GEMM", "TC_CUDA_WINO_GEMM", "its own", "cuda",        \
      "igemm: the fp32 CUDA Winograd's GEMMs through cuda.conv.igemm (tuning)")                 \
    X(CUDA_WINO_STAGES, "TILECONV_CUDA_WINO_STAGES", "TC_CUDA_WINO_STAGES", "15", "cuda",       \
      "bit set of the CUDA Winograd steps run (1 weights, 2 input, 4 GEMM, 8 output; timing)")  \
    X(CUDA_HALF_CFG, "TILECONV_CUDA_HALF_CFG", "TC_CUDA_HALF_CFG", "chosen", "cuda",            \
      "0, 1 or 2: cuda.conv.igemm-half's tile configuration (tuning)")                          \
    X(CUDA_HALF_HALO_STAGES, "TILECONV_CUDA_HALF_HALO_STAGES", NULL, "chosen", "cuda",          \
      "1 or 2: cuda.conv.igemm-half-halo's shared-memory stages (tuning)")                      \
    X(CUDA_HALF_SHIFTED_CFG, "TILECONV_CUDA_HALF_SHIFTED_CFG", NULL, "chosen", "cuda",         \
      "0-3: cuda.conv.igemm-half-shifted's tile configuration (tuning)")                        \
    X(CUDA_HALF_SHIFTED_STAGES, "TILECONV_CUDA_HALF_SHIFTED_STAGES", NULL, "chosen", "cuda",   \
      "2-8: cuda.conv.igemm-half-shifted's weight stages (tuning)")                            \
    X(CUDA_HALF_SHIFTED_KS, "TILECONV_CUDA_HALF_SHIFTED_KS", NULL, "chosen", "cuda",           \
      "1 or 2: cuda.conv.igemm-half-shifted's split-k (blocks of a cluster sharing a tile; tuning, tests)") \
    X(CUDA_HALF_STREAM_CFG, "TILECONV_CUDA_HALF_STREAM_CFG", NULL, "chosen", "cuda",           \
      "0 or 1: cuda.conv.igemm-half-stream's tile configuration (tuning)")                         \
    X(CUDA_HALF_STREAM_AUTO, "TILECONV_CUDA_HALF_STREAM_AUTO", NULL, "0", "cuda",              \
      "1: the planner may pick cuda.conv.igemm-half-stream by its model (else by name only)")    \
    X(CUDA_HALF_STREAM_BLOCKS, "TILECONV_CUDA_HALF_STREAM_BLOCKS", NULL, "SMs / slices", "cuda", \
      "n: cuda.conv.igemm-half-stream's blocks a slice of output channels (tests, tuning)")     \
    /* ---- mpi (tileconv_mpi) ---- */                                                          \
    X(MPI_THREADS, "TILECONV_MPI_THREADS", NULL, "the node's CPUs / its ranks", "mpi",       \
      "threads a rank when tc_mpi_options.threads is 0 (also tileconv-mpi-bench)")              \
    X(MPI_CHUNKS, "TILECONV_MPI_CHUNKS", NULL, "chosen", "mpi",                                 \
      "n: interior slabs overlapped with the halo exchange")                                    \
    X(MPI_PROGRESS, "TILECONV_MPI_PROGRESS", NULL, "tc_mpi_options.progress", "mpi",           \
      "1: a progress thread drives the halo exchange, 0: none (when the options leave it open)")                                \
    X(MPI_IPC, "TILECONV_MPI_IPC", NULL, "1", "mpi",                                            \
      "0: GPU ranks of one node exchange halos through MPI, not CUDA IPC")                      \
    X(MPI_TRACE, "TILECONV_MPI_TRACE", NULL, "0", "mpi",                                        \
      "1: each rank prints its exchange timeline to stderr")                                    \
    /* ---- benchmarks ---- */                                                                  \
    X(BENCH_CHILD, "TILECONV_BENCH_CHILD", NULL, "unset", "bench",                              \
      "set by tileconv bench in its re-executed child (internal)")                              \
    X(BENCH_AFFINITY, "TILECONV_BENCH_AFFINITY", NULL, "unset", "bench",                        \
      "the parent's CPU list, restored in the child (internal)")                                \
    X(BENCH_PYTHON, "TILECONV_BENCH_PYTHON", NULL, "/usr/bin/python3", "bench",                 \
      "the Python with SciPy that runs the scipy peer")                                         \
    X(BENCH_SCIPY, "TILECONV_BENCH_SCIPY", NULL, "bench/peer_scipy.py", "bench",                \
      "the scipy peer's script")                                                                \
    X(BENCH_QUICK, "TILECONV_BENCH_QUICK", "TC_BENCH_QUICK", "0", "bench",                      \
      "1: tileconv-gpu-bench's short case list")                                                \
    X(BENCH_SWEEP, "TILECONV_BENCH_SWEEP", "TC_BENCH_SWEEP", "0", "bench",                      \
      "1: tileconv-gpu-bench also times every cuda.filter.direct variant")                      \
    X(BENCH_ONLY, "TILECONV_BENCH_ONLY", "TC_BENCH_ONLY", "all", "bench",                       \
      "group: tileconv-gpu-bench runs that group alone")                                        \
    X(BENCH_BF16_NO_PEER, "TILECONV_BENCH_BF16_NO_PEER", "BF16_NO_PEER", "unset", "bench",      \
      "set: the bfloat16 layer bench without the oneDNN peer")                                  \
    /* ---- tests ---- */                                                                       \
    X(TEST_SEED, "TILECONV_TEST_SEED", "TC_TEST_SEED", "the time", "tests",                     \
      "seed of the C tests' random data (printed by each run)")                                 \
    X(TEST_QUICK, "TILECONV_TEST_QUICK", "TC_TEST_QUICK", "0", "tests",                         \
      "1: the C tests' smaller case tables")                                                    \
    X(TEST_VERBOSE, "TILECONV_TEST_VERBOSE", "TC_TEST_VERBOSE", "0", "tests",                   \
      "1: the C tests print every case")                                                        \
    X(TEST_ALGO, "TILECONV_TEST_ALGO", "TC_TEST_ALGO", "all", "tests",                          \
      "a,b: test_solvers only on algorithms whose name contains a or b")                        \
    X(TEST_OPS, "TILECONV_TEST_OPS", "TC_TEST_OPS", "all", "tests",                             \
      "filter,conv,gemm: test_solvers only on these operations")                                \
    X(TEST_GATE_S, "TILECONV_TEST_GATE_S", "TC_TEST_GATE_S", "built in", "tests",               \
      "seconds test_cuda spends before it skips the slow seed solvers")                         \
    X(TEST_CUDA_TF32_KERNEL, "TILECONV_TEST_CUDA_TF32_KERNEL", "TC_TEST_CUDA_TFV", "all",       \
      "tests", "v: test_cuda's TF32 conv cases with that kernel alone (sanitizer runs)")        \
    X(TEST_CUDA_CONV_SOLVER, "TILECONV_TEST_CUDA_CONV_SOLVER", "TC_TEST_CUDA_CONV_SOLVER",      \
      "all", "tests", "name: test_cuda's conv cases of that solver alone")                      \
    X(TEST_CUDA_CONV_ONLY, "TILECONV_TEST_CUDA_CONV_ONLY", "TC_TEST_CUDA_CONV_ONLY", "0",       \
      "tests", "1: test_cuda's conv-layer cases alone")                                         \
    X(TEST_CUDA_GEMM_ONLY, "TILECONV_TEST_CUDA_GEMM_ONLY", "TC_TEST_CUDA_GEMM_ONLY", "0",       \
      "tests", "1: test_cuda's GEMM cases alone")                                               \
    X(TEST_CUDA_FILTER_ONLY, "TILECONV_TEST_CUDA_FILTER_ONLY", NULL, "0", "tests",              \
      "1: test_cuda's filter cases alone; half: its float16 / bfloat16 filter cases alone; "  \
      "separable: cuda.filter.separable's forms alone")                                       \
    X(TEST_FUZZ_VERBOSE, "TILECONV_TEST_FUZZ_VERBOSE", "FUZZ_DESC_VERBOSE", "unset", "tests",   \
      "set: fuzz_desc prints each input")                                                      \
    X(TEST_GPU_ON_CPU, "TILECONV_GPU_TESTS_ON_CPU", NULL, "0", "tests",                         \
      "1: tests/python/test_gpu_ndimage.py runs on torch CPU tensors (read by Python)")

enum {
#define TC__KNOB_ENUM(id, name, old, def, reader, meaning) TC__KNOB_##id,
    TC__KNOBS(TC__KNOB_ENUM)
#undef TC__KNOB_ENUM
    TC__NKNOBS
};

/* The value of knob `id`: its TILECONV_ variable when set (even to ""),
 * else its old name's, else NULL. */
static inline const char *tc__knob_get(int id) {
    const char *v = NULL, *o = NULL;
    switch (id) {
#define TC__KNOB_CASE(id, name, old, def, reader, meaning)                                       \
    case TC__KNOB_##id:                                                                          \
        v = getenv(name);                                                                        \
        o = old;                                                                                 \
        break;
        TC__KNOBS(TC__KNOB_CASE)
#undef TC__KNOB_CASE
    default:
        return NULL;
    }
    return v ? v : o ? getenv(o) : NULL;
}

/* The table as data (knobs.c, in the library): for `tileconv info --knobs`. */
typedef struct tc__knob {
    const char *name, *old, *def, *reader, *meaning;
} tc__knob;
#ifdef __cplusplus
extern "C" {
#endif
extern const tc__knob tc__knob_table[TC__NKNOBS];
#ifdef __cplusplus
}
#endif

#endif
