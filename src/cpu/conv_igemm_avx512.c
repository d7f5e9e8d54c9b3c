/* conv_igemm_avx512.c - the row copies of cpu.conv.igemm's B-panel gather
 * (conv_igemm.c) with AVX-512 masked loads: stride 1 directly, stride 2 by
 * picking the even lanes of two loads (vpermt2ps). Compiled with AVX-512
 * flags; called only when cpuid reports AVX-512. */
#include <immintrin.h>
#include <stdint.h>

void tc__ig_copy_f32_avx512(float *d, const float *src, int64_t len, int64_t stride) {
    int64_t j = 0;
    if (stride == 1) {
        for (; j + 16 <= len; j += 16) _mm512_storeu_ps(d + j, _mm512_loadu_ps(src + j));
        if (j < len) {
            __mmask16 m = (__mmask16)((1u << (len - j)) - 1);
            _mm512_mask_storeu_ps(d + j, m, _mm512_maskz_loadu_ps(m, src + j));
        }
        return;
    }
    if (stride == 2) {
        const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22,
                                               24, 26, 28, 30);
        for (; j + 16 <= len; j += 16) {
            /* elements 2j .. 2j+30 are read: the last is src[2*(len-1)] */
            __m512 a = _mm512_loadu_ps(src + 2 * j);
            __mmask16 mb = j + 16 == len ? (__mmask16)0x7fff : (__mmask16)0xffff;
            __m512 b = _mm512_maskz_loadu_ps(mb, src + 2 * j + 16);
            _mm512_storeu_ps(d + j, _mm512_permutex2var_ps(a, even, b));
        }
        if (j < len) {
            int64_t n = 2 * (len - j) - 1; /* elements to read */
            __mmask16 ma = (__mmask16)(n >= 16 ? 0xffff : (1u << n) - 1);
            __mmask16 mb = (__mmask16)(n > 16 ? (1u << (n - 16)) - 1 : 0);
            __m512 a = _mm512_maskz_loadu_ps(ma, src + 2 * j);
            __m512 b = _mm512_maskz_loadu_ps(mb, src + 2 * j + 16);
            __mmask16 m = (__mmask16)((1u << (len - j)) - 1);
            _mm512_mask_storeu_ps(d + j, m, _mm512_permutex2var_ps(a, even, b));
        }
        return;
    }
    for (; j < len; j++) d[j] = src[j * stride];
}
