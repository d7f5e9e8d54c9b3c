/*
 * test_fft64.cu - cuda.conv.fft's fused 64 x 64 transform (src/cuda/
 * cuda_fft64.h) run on the host, thread by thread, phase by phase (the
 * order the kernels run, F64_FORWARD / F64_INVERSE), against a plain
 * double-precision DFT. Needs no GPU: CI runs it (built when nvcc is).
 * Cases: seeded random planes (never zeros), an impulse at each corner
 * region, a plane of one row; the forward half spectrum (64 x 33) and the
 * inverse (unnormalized: 4096 x the plane) of the reference spectrum.
 */
#include <math.h>

#include "harness.h"
#include "cuda/cuda_fft64.h"

static float2 P[F64_NC], Q[F64_NC], W[64];

/* every thread of a block through one phase (a barrier after it) */
#define F64_PHASE(call)                                                                            \
    for (int tid = 0; tid < F64_T; tid++) call

static void forward(const float *x /* 64 x 64 */, float2 *out /* 64 x 33 */) {
    for (int p = 0; p < 32; p++)
        for (int c = 0; c < 64; c++) P[p * F64_ZP + c] = f64_c(x[(2 * p) * 64 + c], x[(2 * p + 1) * 64 + c]);
    F64_FORWARD(F64_PHASE, P, Q, W);
    memcpy(out, Q, sizeof(float2) * 64 * 33);
}
static void inverse(const float2 *in /* 64 x 33 */, float *y /* 64 x 64 */) {
    memcpy(P, in, sizeof(float2) * 64 * 33);
    F64_INVERSE(F64_PHASE, P, Q, W);
    for (int r = 0; r < 64; r++)
        for (int c = 0; c < 64; c++) {
            const float2 z = Q[(r >> 1) * F64_ZP + c];
            y[r * 64 + c] = (r & 1) ? z.y : z.x;
        }
}
/* the plain 2D DFT's half spectrum, in double */
static void dft_ref(const float *x, double *re, double *im) {
    for (int a = 0; a < 64; a++)
        for (int b = 0; b < 33; b++) {
            double sr = 0, si = 0;
            for (int r = 0; r < 64; r++)
                for (int c = 0; c < 64; c++) {
                    const int e = (a * r + b * c) & 63;
                    const double ang = -2.0 * M_PI * e / 64.0;
                    sr += x[r * 64 + c] * cos(ang);
                    si += x[r * 64 + c] * sin(ang);
                }
            re[a * 33 + b] = sr;
            im[a * 33 + b] = si;
        }
}

static void run_case(const char *name, const float *x) {
    static double re[64 * 33], im[64 * 33];
    static float2 spec[64 * 33], sref[64 * 33];
    static float y[64 * 64];
    TH_BEGIN("fft64 %s", name);
    dft_ref(x, re, im);
    forward(x, spec);
    double emax = 0, smax = 0;
    for (int i = 0; i < 64 * 33; i++) {
        const double d = hypot(spec[i].x - re[i], spec[i].y - im[i]), m = hypot(re[i], im[i]);
        if (!(d <= emax)) emax = d;
        if (m > smax) smax = m;
        sref[i] = f64_c((float)re[i], (float)im[i]);
    }
    CHECK(emax <= 2e-6 * (smax > 0 ? smax : 1), "forward: max error %.3g of max |X| %.3g", emax, smax);
    inverse(sref, y);
    double imax = 0, xmax = 0;
    for (int i = 0; i < 64 * 64; i++) {
        const double d = fabs(y[i] - 4096.0 * x[i]);
        if (!(d <= imax)) imax = d;
        if (fabs(4096.0 * x[i]) > xmax) xmax = fabs(4096.0 * x[i]);
    }
    CHECK(imax <= 2e-6 * (xmax > 0 ? xmax : 1), "inverse: max error %.3g of max %.3g", imax, xmax);
    TH_END();
}

/* one channel of a 2D correlation through the fused path as the kernels
 * run it: the extended input (zeros past the input) and the taps
 * (f64_taps, scaled by 1/4096) forward, their spectra multiplied, the
 * inverse, the crop at (o1 s, o2 s); against the direct sum */
static void run_conv_case(int h, int wd, int m, int pad, int s, int dil, th_rng *rng) {
    static float e[64 * 64], taps[64 * 64], y[64 * 64];
    static float2 X[64 * 33], Wf[64 * 33], Y[64 * 33];
    const int span = (m - 1) * dil + 1;
    const int o1n = (h + 2 * pad - span) / s + 1, o2n = (wd + 2 * pad - span) / s + 1;
    const int E1 = (o1n - 1) * s + span, E2 = (o2n - 1) * s + span;
    TH_BEGIN("fused conv %dx%d mask %d pad %d stride %d dil %d (E %dx%d)", h, wd, m, pad, s, dil, E1, E2);
    CHECK(E1 <= 64 && E2 <= 64, "case too large");
    static float xin[64 * 64];
    for (int i = 0; i < h * wd; i++) xin[i] = (float)th_uniform(rng, -1.0, 1.0);
    for (int i = 0; i < m * m; i++) taps[i] = (float)th_uniform(rng, -1.0, 1.0);
    for (int r = 0; r < 64; r++)
        for (int c = 0; c < 64; c++) {
            const int a = r - pad, b = c - pad;
            e[r * 64 + c] = r < E1 && c < E2 && a >= 0 && a < h && b >= 0 && b < wd ? xin[a * wd + b] : 0.f;
        }
    forward(e, X);
    memset(P, 0, sizeof P);
    F64_PHASE(f64_taps(tid, P, taps, m, m, dil, dil, 1.0f / 4096.0f));
    /* the taps' plane, unpacked for forward() */
    static float wpl[64 * 64];
    for (int r = 0; r < 64; r++)
        for (int c = 0; c < 64; c++) {
            const float2 z = P[(r >> 1) * F64_ZP + c];
            wpl[r * 64 + c] = (r & 1) ? z.y : z.x;
        }
    forward(wpl, Wf);
    for (int i = 0; i < 64 * 33; i++) Y[i] = f64_mul(X[i], Wf[i]);
    inverse(Y, y);
    double emax = 0, ymax = 0;
    for (int o1 = 0; o1 < o1n; o1++)
        for (int o2 = 0; o2 < o2n; o2++) {
            double ref = 0;
            for (int r1 = 0; r1 < m; r1++)
                for (int r2 = 0; r2 < m; r2++)
                    ref += (double)taps[r1 * m + r2] * e[(o1 * s + r1 * dil) * 64 + o2 * s + r2 * dil];
            const double d = fabs(y[(o1 * s) * 64 + o2 * s] - ref);
            if (!(d <= emax)) emax = d;
            if (fabs(ref) > ymax) ymax = fabs(ref);
        }
    CHECK(emax <= 1e-5 * (ymax > 0 ? ymax : 1), "max error %.3g of max %.3g", emax, ymax);
    TH_END();
}

int main(int argc, char **argv) {
    th_init(argc, argv);
    for (int e = 0; e < 64; e++) W[e] = f64_twiddle(e);
    static float x[64 * 64];
    th_rng rng = th_rng_for(64);
    for (int s = 0; s < 4; s++) {
        for (int i = 0; i < 64 * 64; i++) x[i] = (float)th_uniform(&rng, -1.0, 1.0);
        run_case(s == 0 ? "random" : s == 1 ? "random 2" : s == 2 ? "random 3" : "random 4", x);
    }
    /* impulses: (0, 0), (63, 63), (1, 62), (33, 31) */
    static const int imp[4][2] = {{0, 0}, {63, 63}, {1, 62}, {33, 31}};
    for (int q = 0; q < 4; q++) {
        memset(x, 0, sizeof x);
        x[imp[q][0] * 64 + imp[q][1]] = 1.5f;
        char nm[32];
        snprintf(nm, sizeof nm, "impulse %d,%d", imp[q][0], imp[q][1]);
        run_case(nm, x);
    }
    /* one odd row (the second of a packed pair) of random values */
    memset(x, 0, sizeof x);
    for (int c = 0; c < 64; c++) x[37 * 64 + c] = (float)th_uniform(&rng, -2.0, 2.0);
    run_case("row 37", x);
    /* the layers the fused form takes (E 49..64) and odd ones: a stride,
     * a dilation, an odd mask, an E of 64 exactly */
    run_conv_case(56, 56, 5, 2, 1, 1, &rng);
    run_conv_case(56, 52, 7, 3, 1, 1, &rng);
    run_conv_case(60, 57, 3, 2, 2, 2, &rng);
    run_conv_case(50, 61, 4, 1, 1, 1, &rng);
    run_conv_case(64, 64, 1, 0, 1, 1, &rng);
    run_conv_case(40, 45, 9, 4, 3, 3, &rng);
    return th_finish();
}
