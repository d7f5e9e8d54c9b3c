/* act.h - the fused epilogue's activations, one definition for the C
 * sources (core staging pass, reference and CPU solvers, through half.h)
 * and the CUDA sources (host and device code when nvcc compiles it), in
 * double (reference, float64 problems) and float (every
 * float32-accumulating path). NaN stays NaN. */
#ifndef TC_ACT_H
#define TC_ACT_H

#include "tileconv.h"

#include <math.h>

#ifdef __CUDACC__
#define TC__HOST_DEVICE __host__ __device__
#else
#define TC__HOST_DEVICE
#endif

static inline TC__HOST_DEVICE double tc__act_d(tc_activation a, double v) {
    switch (a) {
    case TC_ACT_RELU: return v > 0 || v != v ? v : 0.0; /* NaN stays NaN */
    case TC_ACT_RELU6: return v != v ? v : v < 0 ? 0.0 : v > 6 ? 6.0 : v;
    case TC_ACT_SILU: return v / (1.0 + exp(-v));
    case TC_ACT_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case TC_ACT_TANH: return tanh(v);
    case TC_ACT_GELU: return 0.5 * v * (1.0 + erf(v * 0.70710678118654752440));
    default: return v;
    }
}
static inline TC__HOST_DEVICE float tc__act_f(tc_activation a, float v) {
    switch (a) {
    case TC_ACT_RELU: return v > 0 || v != v ? v : 0.0f;
    case TC_ACT_RELU6: return v != v ? v : v < 0 ? 0.0f : v > 6 ? 6.0f : v;
    case TC_ACT_SILU: return v / (1.0f + expf(-v));
    case TC_ACT_SIGMOID: return 1.0f / (1.0f + expf(-v));
    case TC_ACT_TANH: return tanhf(v);
    case TC_ACT_GELU: return 0.5f * v * (1.0f + erff(v * 0.70710678f));
    default: return v;
    }
}

#endif
