/* conv_depthwise_kern.h - the per-plane kernel of cpu.conv.depthwise
 * (conv_depthwise.c), included by conv_depthwise_avx512.c / _avx2.c (and
 * conv_depthwise.c for the plain build) with DW_SFX naming the variant:
 * the same C, vectorised by the compiler for each ISA's flags.
 *
 * One output plane of one channel: y[o] = bias + sum_r w[r] * e[o*s + r*d],
 * e the channel's input extended by the boundary mode (built by the caller,
 * dims E0 x E1 x E2). Outputs are taken in chunks of DW_VL along the last
 * axis, accumulated in registers over every tap, stored once. */
#include <stdint.h>

#define DW_CAT2(a, b) a##b
#define DW_CAT(a, b) DW_CAT2(a, b)
#define DW_VL 16

#define DW_PLANE(T, TS)                                                          \
    void DW_CAT(tc__dw_plane_##TS##_, DW_SFX)(                                   \
        const T *restrict e, const int64_t E[3], const T *restrict w,            \
        const int64_t m[3], const int64_t s[3], const int64_t d[3],              \
        const int64_t out[3], T bias, T *restrict y) {                           \
        const int64_t E12 = E[1] * E[2];                                         \
        for (int64_t o0 = 0; o0 < out[0]; o0++)                                  \
            for (int64_t o1 = 0; o1 < out[1]; o1++) {                            \
                T *yr = y + (o0 * out[1] + o1) * out[2];                         \
                for (int64_t c0 = 0; c0 < out[2]; c0 += DW_VL) {                 \
                    int64_t n = out[2] - c0 < DW_VL ? out[2] - c0 : DW_VL;       \
                    T acc[DW_VL];                                                \
                    for (int j = 0; j < DW_VL; j++) acc[j] = bias;               \
                    const T *wr = w;                                             \
                    for (int64_t r0 = 0; r0 < m[0]; r0++)                        \
                        for (int64_t r1 = 0; r1 < m[1]; r1++) {                  \
                            const T *row = e + (o0 * s[0] + r0 * d[0]) * E12 +   \
                                           (o1 * s[1] + r1 * d[1]) * E[2] +      \
                                           c0 * s[2];                            \
                            if (n == DW_VL && s[2] == 1) {                       \
                                for (int64_t r2 = 0; r2 < m[2]; r2++, wr++) {    \
                                    const T wv = *wr, *src = row + r2 * d[2];    \
                                    for (int j = 0; j < DW_VL; j++)              \
                                        acc[j] += wv * src[j];                   \
                                }                                                \
                            } else {                                             \
                                for (int64_t r2 = 0; r2 < m[2]; r2++, wr++) {    \
                                    const T wv = *wr, *src = row + r2 * d[2];    \
                                    for (int64_t j = 0; j < n; j++)              \
                                        acc[j] += wv * src[j * s[2]];            \
                                }                                                \
                            }                                                    \
                        }                                                        \
                    for (int64_t j = 0; j < n; j++) yr[c0 + j] = acc[j];         \
                }                                                                \
            }                                                                    \
    }

#ifdef DW_HAND_F32 /* the includer writes its own f32 kernel */
DW_PLANE(float, f32_generic)
#else
DW_PLANE(float, f32)
#endif
DW_PLANE(double, f64)
