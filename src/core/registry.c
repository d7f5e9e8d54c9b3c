/* registry.c - the one list of solvers. Adding an algorithm = one file that
 * defines a `const tc__solver` + one line here. Order is only a tie-break;
 * the reference solvers come last and are never chosen by ESTIMATE when
 * another solver applies (their estimate is huge). */
#include "internal.h"

#include <string.h>

extern const tc__solver tc__solver_cpu_direct_halo;
extern const tc__solver tc__solver_cpu_im2col_gemm;
extern const tc__solver tc__solver_cpu_conv_igemm;
extern const tc__solver tc__solver_cpu_conv_igemm_bf16;
extern const tc__solver tc__solver_cpu_conv_winograd2_bf16;
extern const tc__solver tc__solver_cpu_conv_fft;
extern const tc__solver tc__solver_cpu_conv_depthwise;
extern const tc__solver tc__solver_cpu_conv_winograd;
extern const tc__solver tc__solver_cpu_conv_winograd4;
extern const tc__solver tc__solver_cpu_conv_winograd4_raw;
extern const tc__solver tc__solver_cpu_conv_direct;
extern const tc__solver tc__solver_cpu_conv_direct8;
extern const tc__solver tc__solver_cpu_conv_1d;
extern const tc__solver tc__solver_cpu_gemm_blocked;
extern const tc__solver tc__solver_cpu_gemm_packed;
extern const tc__solver tc__solver_cpu_gemm_strassen;
extern const tc__solver tc__solver_cpu_fft_fftw;
extern const tc__solver tc__solver_cpu_separable;
extern const tc__solver tc__solver_cpu_lowrank;
extern const tc__solver tc__solver_cpu_direct_avx512;
extern const tc__solver tc__solver_cpu_direct_avx2;
extern const tc__solver tc__solver_cpu_direct_scalar;
extern const tc__solver tc__solver_cpu_seed3d_rowshift;
extern const tc__solver tc__solver_cpu_seed3d_zsplit;
#if TC_HAVE_CUDA
extern const tc__solver tc__solver_cuda_direct;
extern const tc__solver tc__solver_cuda_direct_half;
extern const tc__solver tc__solver_cuda_filter_tc_3xtf32;
extern const tc__solver tc__solver_cuda_separable;
extern const tc__solver tc__solver_cuda_fft;
extern const tc__solver tc__solver_cuda_gemm;
extern const tc__solver tc__solver_cuda_gemm_tf32;
extern const tc__solver tc__solver_cuda_gemm_3xtf32;
extern const tc__solver tc__solver_cuda_conv_igemm;
extern const tc__solver tc__solver_cuda_conv_igemm_tf32;
extern const tc__solver tc__solver_cuda_conv_igemm_3xtf32;
extern const tc__solver tc__solver_cuda_conv_igemm_half;
extern const tc__solver tc__solver_cuda_conv_igemm_half_halo;
extern const tc__solver tc__solver_cuda_conv_igemm_half_shifted;
extern const tc__solver tc__solver_cuda_conv_igemm_half_stream;
extern const tc__solver tc__solver_cuda_conv_depthwise;
extern const tc__solver tc__solver_cuda_conv_winograd;
extern const tc__solver tc__solver_cuda_conv_winograd2;
extern const tc__solver tc__solver_cuda_conv_winograd2_tf32;
extern const tc__solver tc__solver_cuda_conv_fft;
extern const tc__solver tc__solver_cuda_seed_basic1d;
extern const tc__solver tc__solver_cuda_seed_const1d;
extern const tc__solver tc__solver_cuda_seed_tiled1d_in;
extern const tc__solver tc__solver_cuda_seed_tiled1d_out;
extern const tc__solver tc__solver_cuda_seed_const2d;
extern const tc__solver tc__solver_cuda_seed_tiled2d_pitch;
extern const tc__solver tc__solver_cuda_seed_texture2d;
extern const tc__solver tc__solver_cuda_seed_tiled3d;
extern const tc__solver tc__solver_cuda_seed_gemm_naive;
extern const tc__solver tc__solver_cuda_seed_gemm_tiled;
#endif
extern const tc__solver tc__solver_ref_conv;
extern const tc__solver tc__solver_ref_gemm;

const tc__solver *const tc__solvers[] = {
    &tc__solver_cpu_direct_halo,
    &tc__solver_cpu_im2col_gemm,
    &tc__solver_cpu_conv_igemm,
    &tc__solver_cpu_conv_igemm_bf16,
    &tc__solver_cpu_conv_winograd2_bf16,
    &tc__solver_cpu_conv_fft,
    &tc__solver_cpu_conv_depthwise,
    &tc__solver_cpu_conv_winograd,
    &tc__solver_cpu_conv_winograd4,
    &tc__solver_cpu_conv_winograd4_raw,
    &tc__solver_cpu_conv_direct,
    &tc__solver_cpu_conv_direct8,
    &tc__solver_cpu_conv_1d,
    &tc__solver_cpu_gemm_blocked,
    &tc__solver_cpu_gemm_packed,
    &tc__solver_cpu_gemm_strassen,
    &tc__solver_cpu_fft_fftw,
    &tc__solver_cpu_separable,
    &tc__solver_cpu_lowrank,
    &tc__solver_cpu_direct_avx512,
    &tc__solver_cpu_direct_avx2,
    &tc__solver_cpu_direct_scalar,
    &tc__solver_cpu_seed3d_rowshift,
    &tc__solver_cpu_seed3d_zsplit,
#if TC_HAVE_CUDA
    &tc__solver_cuda_direct,
    &tc__solver_cuda_direct_half,
    &tc__solver_cuda_filter_tc_3xtf32,
    &tc__solver_cuda_separable,
    &tc__solver_cuda_fft,
    &tc__solver_cuda_gemm,
    &tc__solver_cuda_gemm_tf32,
    &tc__solver_cuda_gemm_3xtf32,
    &tc__solver_cuda_conv_igemm,
    &tc__solver_cuda_conv_igemm_tf32,
    &tc__solver_cuda_conv_igemm_3xtf32,
    &tc__solver_cuda_conv_igemm_half,
    &tc__solver_cuda_conv_igemm_half_halo,
    &tc__solver_cuda_conv_igemm_half_shifted,
    &tc__solver_cuda_conv_igemm_half_stream,
    &tc__solver_cuda_conv_depthwise,
    &tc__solver_cuda_conv_winograd,
    &tc__solver_cuda_conv_winograd2,
    &tc__solver_cuda_conv_winograd2_tf32,
    &tc__solver_cuda_conv_fft,
    &tc__solver_cuda_seed_basic1d,
    &tc__solver_cuda_seed_const1d,
    &tc__solver_cuda_seed_tiled1d_in,
    &tc__solver_cuda_seed_tiled1d_out,
    &tc__solver_cuda_seed_const2d,
    &tc__solver_cuda_seed_tiled2d_pitch,
    &tc__solver_cuda_seed_texture2d,
    &tc__solver_cuda_seed_tiled3d,
    &tc__solver_cuda_seed_gemm_naive,
    &tc__solver_cuda_seed_gemm_tiled,
#endif
    /* reference solvers: always last */
    &tc__solver_ref_conv,
    &tc__solver_ref_gemm,
    NULL,
};

/* Names before the naming rule of docs/architecture.md ("Solver names"):
 * accepted by tc_plan_options.algorithm, `--algo` and wisdom files for one
 * release; plans report the current name. */
static const struct { const char *old, *name; } tc__solver_aliases[] = {
    {"cpu.conv.direct8", "cpu.conv.direct-avx2"},
    {"cpu.conv.winograd", "cpu.conv.winograd-f2"},
    {"cpu.conv.winograd4", "cpu.conv.winograd-f4"},
    {"cpu.conv.winograd4-raw", "cpu.conv.winograd-f4-raw"},
    {"cpu.direct.halo", "cpu.filter.direct-halo"},
    {"cpu.direct.avx512", "cpu.filter.direct-avx512"},
    {"cpu.direct.avx2", "cpu.filter.direct-avx2"},
    {"cpu.direct.scalar", "cpu.filter.direct-scalar"},
    {"cpu.seed3d.avx-rowshift", "cpu.filter.seed3d-rowshift"},
    {"cpu.seed3d.zsplit", "cpu.filter.seed3d-zsplit"},
    {"cpu.conv.winograd2-bf16", "cpu.conv.winograd-f2-bf16"},
    {"cpu.fft.fftw", "cpu.filter.fft"},
    {"cpu.im2col.gemm", "cpu.conv.im2col"},
    {"cpu.lowrank", "cpu.filter.lowrank"},
    {"cpu.separable", "cpu.filter.separable"},
    {"cuda.conv.winograd", "cuda.conv.winograd-f4"},
    {"cuda.conv.winograd2", "cuda.conv.winograd-f2"},
    {"cuda.conv.winograd2-tf32", "cuda.conv.winograd-f2-tf32"},
    {"cuda.direct", "cuda.filter.direct"},
    {"cuda.fft", "cuda.filter.fft"},
    {"cuda.gemm", "cuda.gemm.simt"},
    {"cuda.gemm-tf32", "cuda.gemm.wgmma-tf32"},
    {"cuda.seed.basic1d", "cuda.filter.seed-basic1d"},
    {"cuda.seed.const1d", "cuda.filter.seed-const1d"},
    {"cuda.seed.const2d", "cuda.filter.seed-const2d"},
    {"cuda.seed.gemm-naive", "cuda.gemm.seed-naive"},
    {"cuda.seed.gemm-tiled", "cuda.gemm.seed-tiled"},
    {"cuda.seed.texture2d", "cuda.filter.seed-texture2d"},
    {"cuda.seed.tiled1d-in", "cuda.filter.seed-tiled1d-in"},
    {"cuda.seed.tiled1d-out", "cuda.filter.seed-tiled1d-out"},
    {"cuda.seed.tiled2d-pitch", "cuda.filter.seed-tiled2d-pitch"},
    {"cuda.seed.tiled3d", "cuda.filter.seed-tiled3d"},
    {"cuda.separable", "cuda.filter.separable"},
    {"ref.conv", "ref.conv.loops"},
    {"ref.gemm", "ref.gemm.loops"},
};

static const tc__solver *tc__solver_named(const char *name) {
    for (int i = 0; tc__solvers[i]; i++)
        if (strcmp(tc__solvers[i]->name, name) == 0) return tc__solvers[i];
    return NULL;
}

const tc__solver *tc__solver_find(const char *name) {
    if (!name) return NULL;
    const tc__solver *s = tc__solver_named(name);
    for (size_t i = 0; !s && i < sizeof tc__solver_aliases / sizeof tc__solver_aliases[0]; i++)
        if (strcmp(tc__solver_aliases[i].old, name) == 0)
            s = tc__solver_named(tc__solver_aliases[i].name);
    return s;
}

int tc_algorithm_count(void) {
    int n = 0;
    while (tc__solvers[n]) n++;
    return n;
}

tc_status tc_algorithm_get(int i, tc_algorithm_info *info) {
    if (!info) return tc__error(TC_ERR_INVALID_ARGUMENT, "algorithm: info is NULL");
    if (i < 0 || i >= tc_algorithm_count())
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "algorithm: index %d out of range 0..%d", i,
                         tc_algorithm_count() - 1);
    const tc__solver *s = tc__solvers[i];
    info->name = s->name;
    info->backend = s->backend;
    info->ops = s->ops;
    info->available = s->available ? s->available() : 1;
    info->summary = s->summary;
    return TC_OK;
}

#if !TC_HAVE_CUDA
int tc_cuda_device_count(void) { return 0; }
tc_status tc_cuda_kernel_report(char *buf, size_t size) {
    if (buf && size) buf[0] = 0;
    return tc__error(TC_ERR_NO_DEVICE, "kernel report: built without CUDA");
}
#endif
