/*
 * cuda_fft64.h - a 64 x 64 two-dimensional real FFT in one block's shared
 * memory (cuda.conv.fft's fused transforms), written as
 * phases: each phase is a function of the thread index that reads one
 * buffer and writes its own elements or another buffer, so a block runs
 * the phases with a barrier between them, and tests/test_fft64.cu runs
 * the same functions on the host, thread by thread (no GPU needed).
 *
 * Layouts (float2 = complex):
 *   Z  32 rows x 64 (pitch F64_ZP = 65): two real rows packed as one
 *      complex row, z = row(2p) + i row(2p + 1);
 *   S  64 rows x 33 (pitch F64_SP = 33): the half spectra of the rows,
 *      and after the column passes the 2D half spectrum, cuFFT's R2C
 *      layout (row r, frequency k at r * 33 + k).
 * A 64-point transform is 8 x 8: phase A, thread t of a row takes the
 * points t + 8 j (j = 0..7), transforms them over j, multiplies by
 * W64^(t k1) and puts them back at t + 8 k1 (its own elements); phase B,
 * thread k1 takes the points 8 k1 + t (t = 0..7), transforms them over t
 * and writes X[k1 + 8 k2] to the other buffer. Forward: W = exp(-2 pi i /
 * 64); inverse: its conjugate, unnormalized (as cuFFT).
 *   forward  (real plane in Z, buffer P) rowA(P) rowB(P->Q) sep(Q->P)
 *            colA(P) colB(P->Q): the half spectrum in Q (S layout)
 *   inverse  (half spectrum in P, S layout) colA(P) colB(P->Q) comb(Q->P)
 *            rowA(P) rowB(P->Q): the real plane in Q (Z layout)
 * Threads: F64_T (256); the item loops run any thread count.
 */
#ifndef TC_CUDA_FFT64_H
#define TC_CUDA_FFT64_H

#include <math.h>
#include <vector_types.h>

#ifdef __CUDACC__
#define F64_HD __host__ __device__ __forceinline__
#else
#define F64_HD static inline
#endif

#define F64_T 256
#define F64_ZP 65
#define F64_SP 33
#define F64_NC (64 * F64_SP) /* complex a buffer: 2112 >= 32 x 65 */

F64_HD float2 f64_c(float x, float y) {
    float2 r;
    r.x = x;
    r.y = y;
    return r;
}
F64_HD float2 f64_add(float2 a, float2 b) { return f64_c(a.x + b.x, a.y + b.y); }
F64_HD float2 f64_sub(float2 a, float2 b) { return f64_c(a.x - b.x, a.y - b.y); }
F64_HD float2 f64_mul(float2 a, float2 b) {
    return f64_c(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

/* exp(-2 pi i e / 64) by sincospif (host and device; within 3.5e-8 of
 * the exact values, exact zeros and ones where they are exact). Single precision: in
 * double precision the slow sin/cos path puts a 40-byte stack frame in
 * every fused kernel */
F64_HD float2 f64_twiddle(int e) {
    float s, c;
    sincospif(-(float)(e & 63) / 32.0f, &s, &c);
    return f64_c(c, s);
}
/* W64^e from the table (conjugated for the inverse) */
F64_HD float2 f64_w(const float2 *w, int e, int inv) {
    float2 t = w[e & 63];
    if (inv) t.y = -t.y;
    return t;
}

/* in place: v[k] = sum_n v[n] W8^(n k), W8 = W64^8 (radix-2, decimation in
 * frequency, the bit-reversed order undone at the end) */
F64_HD void f64_dft8(float2 v[8], const float2 *w, int inv) {
    for (int i = 0; i < 4; i++) {
        const float2 a = v[i], b = v[i + 4];
        v[i] = f64_add(a, b);
        v[i + 4] = f64_mul(f64_sub(a, b), f64_w(w, 8 * i, inv));
    }
    for (int h = 0; h < 8; h += 4)
        for (int i = 0; i < 2; i++) {
            const float2 a = v[h + i], b = v[h + i + 2];
            v[h + i] = f64_add(a, b);
            v[h + i + 2] = f64_mul(f64_sub(a, b), f64_w(w, 16 * i, inv));
        }
    for (int h = 0; h < 8; h += 2) {
        const float2 a = v[h], b = v[h + 1];
        v[h] = f64_add(a, b);
        v[h + 1] = f64_sub(a, b);
    }
    float2 t = v[1];
    v[1] = v[4];
    v[4] = t;
    t = v[3];
    v[3] = v[6];
    v[6] = t;
}

/* rows of Z (32 x 64 points), phase A in place: item (p, t), p fastest so
 * a half-warp's 16 rows hit distinct banks (pitch 65) */
F64_HD void f64_rowA(int tid, float2 *P, const float2 *w, int inv) {
    for (int it = tid; it < 32 * 8; it += F64_T) {
        const int p = it & 31, t = it >> 5;
        float2 v[8];
        for (int j = 0; j < 8; j++) v[j] = P[p * F64_ZP + t + 8 * j];
        f64_dft8(v, w, inv);
        for (int k = 0; k < 8; k++) P[p * F64_ZP + t + 8 * k] = f64_mul(v[k], f64_w(w, t * k, inv));
    }
}
/* rows of Z, phase B: P -> Q, item (p, k1) */
F64_HD void f64_rowB(int tid, const float2 *P, float2 *Q, const float2 *w, int inv) {
    for (int it = tid; it < 32 * 8; it += F64_T) {
        const int p = it & 31, k1 = it >> 5;
        float2 v[8];
        for (int t = 0; t < 8; t++) v[t] = P[p * F64_ZP + 8 * k1 + t];
        f64_dft8(v, w, inv);
        for (int k2 = 0; k2 < 8; k2++) Q[p * F64_ZP + k1 + 8 * k2] = v[k2];
    }
}
/* the packed rows' spectra apart: Z (Q) -> S (P), item (p, k), k fastest.
 * Z[k] = A[k] + i B[k] with A, B the two real rows' spectra:
 * A[k] = (Z[k] + conj Z[-k]) / 2, B[k] = (Z[k] - conj Z[-k]) / 2i */
F64_HD void f64_sep(int tid, const float2 *Q, float2 *P) {
    for (int it = tid; it < 32 * 33; it += F64_T) {
        const int k = it % 33, p = it / 33;
        const float2 z = Q[p * F64_ZP + k], m = Q[p * F64_ZP + ((64 - k) & 63)];
        P[(2 * p) * F64_SP + k] = f64_c(0.5f * (z.x + m.x), 0.5f * (z.y - m.y));
        P[(2 * p + 1) * F64_SP + k] = f64_c(0.5f * (z.y + m.y), -0.5f * (z.x - m.x));
    }
}
/* columns of S (33 x 64 points), phase A in place: item (k, t), k fastest */
F64_HD void f64_colA(int tid, float2 *P, const float2 *w, int inv) {
    for (int it = tid; it < 33 * 8; it += F64_T) {
        const int k = it % 33, t = it / 33;
        float2 v[8];
        for (int j = 0; j < 8; j++) v[j] = P[(t + 8 * j) * F64_SP + k];
        f64_dft8(v, w, inv);
        for (int m = 0; m < 8; m++) P[(t + 8 * m) * F64_SP + k] = f64_mul(v[m], f64_w(w, t * m, inv));
    }
}
/* columns of S, phase B: P -> Q, item (k, k1) */
F64_HD void f64_colB(int tid, const float2 *P, float2 *Q, const float2 *w, int inv) {
    for (int it = tid; it < 33 * 8; it += F64_T) {
        const int k = it % 33, k1 = it / 33;
        float2 v[8];
        for (int t = 0; t < 8; t++) v[t] = P[(8 * k1 + t) * F64_SP + k];
        f64_dft8(v, w, inv);
        for (int k2 = 0; k2 < 8; k2++) Q[(k1 + 8 * k2) * F64_SP + k] = v[k2];
    }
}
/* the inverse's rows packed in pairs: S (Q) -> Z (P), item (p, k), k
 * fastest: Z[k] = A[k] + i B[k] over all 64 k, A[64 - k] = conj A[k]; the
 * imaginary parts at k = 0 and 32 are dropped (a real row's spectrum has
 * none; cuFFT's C2R assumes the same) */
F64_HD void f64_comb(int tid, const float2 *Q, float2 *P) {
    for (int it = tid; it < 32 * 64; it += F64_T) {
        const int k = it & 63, p = it >> 6;
        const int kk = k <= 32 ? k : 64 - k;
        float2 a = Q[(2 * p) * F64_SP + kk], b = Q[(2 * p + 1) * F64_SP + kk];
        if (k > 32) {
            a.y = -a.y;
            b.y = -b.y;
        } else if (k == 0 || k == 32) {
            a.y = 0.f;
            b.y = 0.f;
        }
        P[p * F64_ZP + k] = f64_c(a.x - b.y, a.y + b.x);
    }
}

/* The two phase orders, written once for the kernels and the host test:
 * PHASE(call) runs one phase on every thread and then the barrier (the
 * kernels: call; __syncthreads(); tests/test_fft64.cu: a loop over tid) */
#define F64_FORWARD(PHASE, P, Q, w)                                                                \
    PHASE(f64_rowA(tid, P, w, 0));                                                                 \
    PHASE(f64_rowB(tid, P, Q, w, 0));                                                              \
    PHASE(f64_sep(tid, Q, P));                                                                     \
    PHASE(f64_colA(tid, P, w, 0));                                                                 \
    PHASE(f64_colB(tid, P, Q, w, 0))
#define F64_INVERSE(PHASE, P, Q, w)                                                                \
    PHASE(f64_colA(tid, P, w, 1));                                                                 \
    PHASE(f64_colB(tid, P, Q, w, 1));                                                              \
    PHASE(f64_comb(tid, Q, P));                                                                    \
    PHASE(f64_rowA(tid, P, w, 1));                                                                 \
    PHASE(f64_rowB(tid, P, Q, w, 1))

/* a mask's taps into a zeroed Z (rows packed in pairs) as a correlation
 * kernel: tap (r1, r2) at ((64 - r1 d1) mod 64, (64 - r2 d2) mod 64),
 * times scale; the taps' spans are below 64, so no two share a place */
F64_HD void f64_taps(int tid, float2 *P, const float *taps, int m1, int m2, long long d1,
                     long long d2, float scale) {
    for (int it = tid; it < m1 * m2; it += F64_T) {
        const int r1 = it / m2, r2 = it - r1 * m2;
        const int a = (int)((64 - (r1 * d1) % 64) % 64), b = (int)((64 - (r2 * d2) % 64) % 64);
        float2 *z = &P[(a >> 1) * F64_ZP + b];
        if (a & 1)
            z->y = taps[it] * scale;
        else
            z->x = taps[it] * scale;
    }
}

#endif
