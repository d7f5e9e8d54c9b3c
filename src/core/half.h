/* half.h - float16 / bfloat16 scalar conversions and (act.h) the fused
 * epilogue's activations, shared by the core (stage.c), the reference
 * solvers and the CPU solvers. Round to nearest even everywhere; NaN
 * stays NaN (quiet), overflow goes to infinity. Vector forms live beside the kernels that use
 * them (F16C vcvtph2ps / vcvtps2ph, AVX512-BF16 vcvtneps2bf16). */
#ifndef TC_HALF_H
#define TC_HALF_H

#include "act.h"
#include "internal.h"

#include <math.h>
#include <string.h>

static inline uint32_t tc__f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float tc__bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline float tc__bf16_to_f32(uint16_t h) { return tc__bits_f32((uint32_t)h << 16); }
static inline uint16_t tc__f32_to_bf16(float f) {
    uint32_t u = tc__f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float tc__f16_to_f32(uint16_t h) {
    uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return tc__bits_f32(s | 0x7f800000u | (m << 13)); /* inf, NaN */
    if (e == 0) { /* zero, subnormal: m * 2^-24 */
        float v = (float)m * 5.9604644775390625e-8f;
        return s ? -v : v;
    }
    return tc__bits_f32(s | ((e + 112u) << 23) | (m << 13));
}
static inline uint16_t tc__f32_to_f16(float f) {
    uint32_t u = tc__f32_bits(f), s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(s | 0x7e00u | ((a >> 13) & 0x3ffu)); /* NaN */
    if (a >= 0x477ff000u) return (uint16_t)(s | 0x7c00u); /* >= 65520: inf */
    if (a < 0x38800000u) { /* below 2^-14: subnormal or zero */
        /* adding 0.5 makes the FPU round the mantissa at 2^-24 (nearest even) */
        float v = tc__bits_f32(a) + 0.5f;
        return (uint16_t)(s | (tc__f32_bits(v) - 0x3f000000u));
    }
    uint32_t r = a + 0xc8000fffu + ((a >> 13) & 1u); /* rebias exponent, round */
    return (uint16_t)(s | (r >> 13));
}

/* Element i of an array of dtype dt, as double / stored from double (the
 * half types round through float: a double rounded first to float, then to
 * half, can differ from one direct rounding only in ties far below float
 * precision). */
static inline double tc__load_d(const void *a, int64_t i, tc_dtype dt) {
    switch (dt) {
    case TC_FLOAT32: return ((const float *)a)[i];
    case TC_FLOAT64: return ((const double *)a)[i];
    case TC_FLOAT16: return tc__f16_to_f32(((const uint16_t *)a)[i]);
    default: return tc__bf16_to_f32(((const uint16_t *)a)[i]);
    }
}
static inline void tc__store_d(void *a, int64_t i, tc_dtype dt, double v) {
    switch (dt) {
    case TC_FLOAT32: ((float *)a)[i] = (float)v; break;
    case TC_FLOAT64: ((double *)a)[i] = v; break;
    case TC_FLOAT16: ((uint16_t *)a)[i] = tc__f32_to_f16((float)v); break;
    default: ((uint16_t *)a)[i] = tc__f32_to_bf16((float)v); break;
    }
}
static inline int tc__dtype_is_half(tc_dtype dt) {
    return dt == TC_FLOAT16 || dt == TC_BFLOAT16;
}

#endif
