/*
 * shift_idx.h - index vectors for building shifted tap vectors with
 * two-source permutes (vpermt2ps / vpermt2pd): row s of each table is
 * s, s + 1, ..., s + L - 1 (L = 16 floats or 8 doubles per zmm). Shared by
 * the AVX-512 direct kernel (filter_direct_avx512.c) and the separable row
 * pass (separable_avx512.c); not installed.
 */
#ifndef TC_CPU_SHIFT_IDX_H
#define TC_CPU_SHIFT_IDX_H

#include <stdint.h>

static const int32_t tc__shift_idx32[16][16] __attribute__((aligned(64))) = {
#define R16(s) {s, s + 1, s + 2, s + 3, s + 4, s + 5, s + 6, s + 7, s + 8, s + 9, \
                s + 10, s + 11, s + 12, s + 13, s + 14, s + 15}
    R16(0), R16(1), R16(2), R16(3), R16(4), R16(5), R16(6), R16(7), R16(8),
    R16(9), R16(10), R16(11), R16(12), R16(13), R16(14), R16(15)};
#undef R16
static const int64_t tc__shift_idx64[8][8] __attribute__((aligned(64))) = {
#define R8(s) {s, s + 1, s + 2, s + 3, s + 4, s + 5, s + 6, s + 7}
    R8(0), R8(1), R8(2), R8(3), R8(4), R8(5), R8(6), R8(7)};
#undef R8

#endif
