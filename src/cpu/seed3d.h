/* seed3d.h - AVX kernels of the seed 003 solvers (seed3d_avx2.c). */
#ifndef TC_SEED3D_H
#define TC_SEED3D_H

#include "core/internal.h"

void tc__seed3d_row_avx(float *out, const float *in, const float *w,
                        float *temp, int64_t W, int64_t K);
void tc__seed3d_sum_avx(float *dst, const float *const *src, int n, int64_t count);

#endif
