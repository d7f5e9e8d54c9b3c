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

/* The channel's input x (in0 x in1 x in2) extended into e (E0 x E1 x E2).
 * map holds E0 + E1 + E2 source indices (rows of axis 0, of axis 1, then
 * columns; -1 = cval) from tc__boundary_index, computed once per chunk;
 * columns [a2, b2) are the interior, e[i2] = row[i2 - lo2], copied in one
 * loop the compiler vectorises for the ISA. */
#define DW_EXT(T, TS)                                                            \
    void DW_CAT(tc__dw_extend_##TS##_, DW_SFX)(                                  \
        const T *restrict x, const int64_t in[3], const int64_t E[3],            \
        const int64_t *restrict map, int64_t a2, int64_t b2, int64_t lo2,        \
        T cval, T *restrict e) {                                                 \
        const int64_t *m0 = map, *m1 = map + E[0], *m2 = map + E[0] + E[1];      \
        for (int64_t i0 = 0; i0 < E[0]; i0++)                                    \
            for (int64_t i1 = 0; i1 < E[1]; i1++) {                              \
                T *restrict d = e + (i0 * E[1] + i1) * E[2];                     \
                if (m0[i0] < 0 || m1[i1] < 0) {                                  \
                    for (int64_t i2 = 0; i2 < E[2]; i2++) d[i2] = cval;          \
                    continue;                                                    \
                }                                                                \
                const T *restrict row = x + (m0[i0] * in[1] + m1[i1]) * in[2];   \
                for (int64_t i2 = 0; i2 < a2; i2++)                              \
                    d[i2] = m2[i2] < 0 ? cval : row[m2[i2]];                     \
                for (int64_t i2 = a2; i2 < b2; i2++) d[i2] = row[i2 - lo2];      \
                for (int64_t i2 = b2; i2 < E[2]; i2++)                           \
                    d[i2] = m2[i2] < 0 ? cval : row[m2[i2]];                     \
            }                                                                    \
    }
#ifndef DW_HAND_EXT_F32 /* else the includer writes its own */
DW_EXT(float, f32)
#endif
DW_EXT(double, f64)

#ifdef DW_HAND_F32
DW_PLANE(float, f32_generic)
#else
DW_PLANE(float, f32)
#endif
DW_PLANE(double, f64)
