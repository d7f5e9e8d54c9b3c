/* seed3d_avx2.c - the row kernel of seed 003's 3D convolution (see
 * seed3d.c), 256-bit AVX, 8 floats per vector. Compiled with -mavx2 -mfma;
 * it uses separate multiply and add, as the report does. */
#include "cpu/seed3d.h"

#include <immintrin.h>

/* Pushes one input row through one mask row (K taps) and adds the result
 * into one output row:
 *   temp[ix + 2P - c] += w[c] * in[ix]   (c < K, ix < W; P = K/2)
 *   out[ox] += temp[ox + P]              (ox < W)
 * i.e. out[ox] += sum_c w[c] * in[ox + c - P] with zeros outside the row.
 * temp has W + 2P + 8 floats. */
void tc__seed3d_row_avx(float *out, const float *in, const float *w,
                        float *temp, int64_t W, int64_t K) {
    const int64_t P = K / 2, T = W + 2 * P;
    int64_t t = 0;
    for (; t + 8 <= T; t += 8) _mm256_storeu_ps(temp + t, _mm256_setzero_ps());
    for (; t < T; t++) temp[t] = 0.0f;
    for (int64_t c = 0; c < K; c++) {
        const __m256 wv = _mm256_set1_ps(w[c]);
        float *dst = temp + 2 * P - c; /* shifted row start */
        int64_t ix = 0;
        for (; ix + 8 <= W; ix += 8) {
            __m256 prod = _mm256_mul_ps(wv, _mm256_loadu_ps(in + ix));
            _mm256_storeu_ps(dst + ix, _mm256_add_ps(_mm256_loadu_ps(dst + ix), prod));
        }
        for (; ix < W; ix++) dst[ix] += w[c] * in[ix];
    }
    int64_t ox = 0;
    for (; ox + 8 <= W; ox += 8)
        _mm256_storeu_ps(out + ox, _mm256_add_ps(_mm256_loadu_ps(out + ox),
                                                 _mm256_loadu_ps(temp + P + ox)));
    for (; ox < W; ox++) out[ox] += temp[P + ox];
}

/* dst[i] = sum_{k < n} src[k][i], in order k = 0, 1, ... */
void tc__seed3d_sum_avx(float *dst, const float *const *src, int n, int64_t count) {
    int64_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m256 s = _mm256_setzero_ps();
        for (int k = 0; k < n; k++) s = _mm256_add_ps(s, _mm256_loadu_ps(src[k] + i));
        _mm256_storeu_ps(dst + i, s);
    }
    for (; i < count; i++) {
        float s = 0.0f;
        for (int k = 0; k < n; k++) s += src[k][i];
        dst[i] = s;
    }
}
