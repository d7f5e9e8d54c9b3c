/* conv_1d_avx512.c - cpu.conv.1d's register-tile kernels and window copy
 * for AVX-512 (driver: conv_1d.c). Compiled with AVX-512 flags; called only
 * when cpuid reports AVX-512.
 *
 * A tile is mk output channels x nv vectors of 16 consecutive output
 * positions: mk*nv zmm accumulators (24 for the 6x4 tile), and for every
 * (input channel, tap) nv unaligned vector loads of the input row at the
 * tap's offset, each used by mk FMAs, and mk weights broadcast into a
 * register (vbroadcastss, each used by nv FMAs). The output positions are
 * the vector lanes, so the tile stores straight to the NCW output: no
 * layout conversion on either side. */
#include <immintrin.h>
#include <stdint.h>

#include "conv_1d.h"

#define C1_BODY(MK, NV)                                                                \
    static void c1_k_##MK##_##NV(const c1_targs *a) {                                  \
        __m512 acc[MK][NV];                                                            \
        _Pragma("GCC unroll 8") for (int k = 0; k < MK; k++) {                         \
            const __m512 b0 = a->bias ? _mm512_set1_ps(a->bias[k]) : _mm512_setzero_ps(); \
            _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) acc[k][j] = b0;       \
        }                                                                              \
        const int64_t R = a->R, xc = a->xc;                                            \
        const int64_t *tapoff = a->tapoff;                                             \
        const float *xr = a->x, *wp = a->w;                                            \
        for (int64_t c = 0; c < a->C; c++, xr += xc) {                                 \
            for (int64_t r = 0; r < R; r++, wp += MK) {                                \
                const float *xp = xr + tapoff[r];                                      \
                __m512 xv[NV];                                                         \
                _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++)                   \
                    xv[j] = _mm512_loadu_ps(xp + 16 * j);                              \
                _Pragma("GCC unroll 8") for (int k = 0; k < MK; k++) {                 \
                    const __m512 wv = _mm512_set1_ps(wp[k]);                           \
                    _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++)               \
                        acc[k][j] = _mm512_fmadd_ps(wv, xv[j], acc[k][j]);             \
                }                                                                      \
            }                                                                          \
        }                                                                              \
        const __mmask16 ml = (__mmask16)a->mlast;                                      \
        _Pragma("GCC unroll 8") for (int k = 0; k < MK; k++) {                         \
            float *yk = a->y + k * a->yk;                                              \
            _Pragma("GCC unroll 4") for (int j = 0; j < NV - 1; j++)                   \
                _mm512_storeu_ps(yk + 16 * j, acc[k][j]);                              \
            _mm512_mask_storeu_ps(yk + 16 * (NV - 1), ml, acc[k][NV - 1]);             \
        }                                                                              \
    }

#define C1_NV(MK) C1_BODY(MK, 1) C1_BODY(MK, 2) C1_BODY(MK, 3) C1_BODY(MK, 4)
C1_NV(1)
C1_NV(2)
C1_NV(3)
C1_NV(4)
C1_NV(5)
C1_NV(6)

#define C1_ROW(MK) {c1_k_##MK##_1, c1_k_##MK##_2, c1_k_##MK##_3, c1_k_##MK##_4}
static const c1_kernel_fn c1_table[C1_MK][C1_MW] = {C1_ROW(1), C1_ROW(2), C1_ROW(3),
                                                    C1_ROW(4), C1_ROW(5), C1_ROW(6)};

c1_kernel_fn tc__c1_kernel_avx512(int mk, int nv) {
    if (mk < 1 || mk > C1_MK || nv < 1 || nv > C1_MW) return 0;
    return c1_table[mk - 1][nv - 1];
}

void tc__c1_window_avx512(float *dst, int64_t dpitch, const float *src, int64_t pitch,
                          int64_t C, const int32_t *map, int64_t n, float cval) {
    const __m512 cv = _mm512_set1_ps(cval);
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i iota2 = _mm512_add_epi32(iota, iota);
    for (int64_t i0 = 0; i0 < n; i0 += 16) {
        int64_t m = n - i0 < 16 ? n - i0 : 16;
        __mmask16 in = (__mmask16)(m == 16 ? 0xffff : (1u << m) - 1);
        __m512i ix = _mm512_maskz_loadu_epi32(in, map + i0);
        __mmask16 ok = _mm512_mask_cmpge_epi32_mask(in, ix, _mm512_setzero_si512());
        /* the valid lanes one run of consecutive indices? */
        int32_t base = 0;
        int contig = 1;
        if (ok) {
            int l = __builtin_ctz(ok);
            base = map[i0 + l] - l;
            __mmask16 same = _mm512_mask_cmpeq_epi32_mask(
                ok, _mm512_sub_epi32(ix, iota), _mm512_set1_epi32(base));
            contig = same == ok;
        }
        float *d = dst + i0;
        const float *s = src;
        /* a whole chunk of every other position (stride 2): two loads and
         * one two-source permute per channel instead of a gather */
        if (!contig && ok == 0xffff && map[i0 + 1] == map[i0] + 2 &&
            _mm512_cmpeq_epi32_mask(_mm512_sub_epi32(ix, iota2),
                                    _mm512_set1_epi32(map[i0])) == 0xffff) {
            const float *q = src + map[i0];
            for (int64_t c = 0; c < C; c++, d += dpitch, q += pitch) {
                __m512 lo = _mm512_loadu_ps(q), hi = _mm512_maskz_loadu_ps(0x7fff, q + 16);
                _mm512_storeu_ps(d, _mm512_permutex2var_ps(lo, iota2, hi));
            }
            continue;
        }
        if (!ok) {
            for (int64_t c = 0; c < C; c++, d += dpitch) _mm512_mask_storeu_ps(d, in, cv);
        } else if (contig) {
            for (int64_t c = 0; c < C; c++, d += dpitch, s += pitch)
                _mm512_mask_storeu_ps(d, in, _mm512_mask_loadu_ps(cv, ok, s + base));
        } else {
            for (int64_t c = 0; c < C; c++, d += dpitch, s += pitch)
                _mm512_mask_storeu_ps(d, in, _mm512_mask_i32gather_ps(cv, ok, ix, s, 4));
        }
    }
}
