/*
 * models.h - independent models of the three operations, written from the
 * definitions (scipy.ndimage / scipy.signal, torch.nn.ConvNd, BLAS) and not
 * from the library's lowering. test_solvers.c checks the reference solvers
 * against them, then every other solver against the references; so a bug
 * in the shared lowering (origins, flips, swapped valid, padding) cannot
 * hide behind "the solver agrees with the reference".
 *
 * All models read and write logical C-order arrays of doubles.
 */
#ifndef TC_TESTS_MODELS_H
#define TC_TESTS_MODELS_H

#include <stdint.h>
#include <string.h>

#include "tileconv.h"

/* scipy.ndimage's extension of an axis of length n to index i; -1 means
 * "use cval". Written per mode from the pictures in the scipy docs. */
static inline int64_t model_extend(int64_t i, int64_t n, tc_mode mode) {
    if (i >= 0 && i < n) return i;
    switch (mode) {
    case TC_MODE_CONSTANT: return -1;
    case TC_MODE_NEAREST: return i < 0 ? 0 : n - 1;
    case TC_MODE_WRAP: { /* a b c d | a b c d */
        int64_t r = i % n;
        return r < 0 ? r + n : r;
    }
    case TC_MODE_REFLECT: { /* d c b a | a b c d | d c b a, period 2n */
        int64_t r = i % (2 * n);
        if (r < 0) r += 2 * n;
        return r < n ? r : 2 * n - 1 - r;
    }
    case TC_MODE_MIRROR: { /* d c b | a b c d | c b a, period 2n-2 */
        if (n == 1) return 0;
        int64_t per = 2 * n - 2, r = i % per;
        if (r < 0) r += per;
        return r < n ? r : per - r;
    }
    }
    return -1;
}

/* ---- filter ----
 * x: batch x n[0..nsp) (batch = product of the leading axes), w: m[],
 * returns the output spatial sizes in o[] and writes y (batch x o[]). */
typedef struct model_filter {
    int nsp;
    int64_t batch, n[3], m[3], origin[3];
    tc_filter_kind kind;
    tc_output_kind output;
    tc_mode mode;
    double cval;
} model_filter;

/* Output sizes; returns 0 when scipy would reject the shapes (valid with a
 * mask larger on some axes and smaller on others). */
static inline int model_filter_shape(const model_filter *f, int64_t o[3]) {
    int larger = 0, smaller = 0;
    for (int i = 0; i < f->nsp; i++) {
        larger += f->m[i] > f->n[i];
        smaller += f->m[i] < f->n[i];
    }
    if (f->output == TC_OUTPUT_VALID && larger && smaller) return 0;
    for (int i = 0; i < f->nsp; i++) {
        int64_t n = f->n[i], m = f->m[i];
        if (f->output == TC_OUTPUT_SAME) o[i] = n;
        else if (f->output == TC_OUTPUT_FULL) o[i] = n + m - 1;
        else o[i] = (n > m ? n - m : m - n) + 1;
    }
    return 1;
}

/* C-order index of (i0, i1, i2) in an array of sizes d[0..nsp). */
static inline int64_t model_lin(const int64_t *i, const int64_t *d, int nsp) {
    int64_t at = 0;
    for (int a = 0; a < nsp; a++) at = at * d[a] + i[a];
    return at;
}

/* Does one spatial "odometer" step; returns 0 after the last index. */
static inline int model_step(int64_t *i, const int64_t *d, int nsp) {
    for (int a = nsp - 1; a >= 0; a--) {
        if (++i[a] < d[a]) return 1;
        i[a] = 0;
    }
    return 0;
}

static inline void model_filter_run(const model_filter *f, const double *x,
                                    const double *w, double *y) {
    const int nsp = f->nsp;
    int64_t o[3] = {1, 1, 1}, mcount = 1, ncount = 1, ocount = 1;
    model_filter_shape(f, o);
    for (int a = 0; a < nsp; a++) {
        mcount *= f->m[a];
        ncount *= f->n[a];
        ocount *= o[a];
    }
    int swap = 0;
    if (f->output == TC_OUTPUT_VALID)
        for (int a = 0; a < nsp; a++) swap |= f->m[a] > f->n[a];
    for (int64_t b = 0; b < f->batch; b++) {
        const double *xb = x + b * ncount;
        double *yb = y + b * ocount;
        int64_t oi[3] = {0, 0, 0};
        do {
            double acc = 0;
            int64_t j[3] = {0, 0, 0};
            if (f->output == TC_OUTPUT_SAME) {
                /* scipy.ndimage.correlate: y[i] = sum_j w[j] x[i+j-m/2-org];
                 * convolve = correlate(flip(w), origin -org - (m even)) */
                do {
                    int64_t src[3], wj[3];
                    int out = 0;
                    for (int a = 0; a < nsp; a++) {
                        int64_t m = f->m[a], org = f->origin[a];
                        if (f->kind == TC_FILTER_CONVOLVE) {
                            wj[a] = m - 1 - j[a];
                            org = -org - (m % 2 == 0);
                        } else {
                            wj[a] = j[a];
                        }
                        src[a] = model_extend(oi[a] + j[a] - m / 2 - org,
                                              f->n[a], f->mode);
                        out |= src[a] < 0;
                    }
                    double xv = out ? f->cval : xb[model_lin(src, f->n, nsp)];
                    acc += w[model_lin(wj, f->m, nsp)] * xv;
                } while (model_step(j, f->m, nsp));
            } else if (!swap) {
                /* scipy.signal: convolve z[i] = sum_j x[i-j+lo] w[j];
                 * correlate z[i] = sum_j x[i+j-lo] w[j], lo = m-1 (full)
                 * or 0 (valid); outside the input counts as 0 */
                do {
                    int64_t src[3];
                    int out = 0;
                    for (int a = 0; a < nsp; a++) {
                        int64_t lo = f->output == TC_OUTPUT_FULL ? f->m[a] - 1 : 0;
                        if (f->kind == TC_FILTER_CONVOLVE)
                            src[a] = oi[a] - j[a] + (f->m[a] - 1) - lo;
                        else
                            src[a] = oi[a] + j[a] - lo;
                        out |= src[a] < 0 || src[a] >= f->n[a];
                    }
                    if (!out) acc += w[model_lin(j, f->m, nsp)] * xb[model_lin(src, f->n, nsp)];
                } while (model_step(j, f->m, nsp));
            } else {
                /* valid, mask larger: scipy swaps the operands.
                 * convolve(x, w) = convolve(w, x): z[i] = sum_j w[i-j+nx-1] x[j]
                 * correlate(x, w) = convolve(x, flip w) swapped
                 *                 = convolve(flip w, x) */
                do {
                    int64_t src[3];
                    for (int a = 0; a < nsp; a++) {
                        int64_t s = oi[a] - j[a] + f->n[a] - 1;
                        src[a] = f->kind == TC_FILTER_CONVOLVE ? s : f->m[a] - 1 - s;
                    }
                    acc += xb[model_lin(j, f->n, nsp)] * w[model_lin(src, f->m, nsp)];
                } while (model_step(j, f->n, nsp));
            }
            yb[model_lin(oi, o, nsp)] = acc;
        } while (model_step(oi, o, nsp));
    }
    (void)mcount;
}

/* ---- torch.nn.ConvNd forward ---- */
typedef struct model_conv {
    int nsp;
    int64_t N, C, K, G, n[3], m[3], stride[3], dil[3], pad[3];
    tc_padding_kind pkind;
    tc_padding_mode pmode;
    int has_bias;
} model_conv;

/* Padding on the low side and output sizes; 0 when torch would reject. */
static inline int model_conv_shape(const model_conv *c, int64_t lo[3],
                                   int64_t o[3]) {
    for (int a = 0; a < c->nsp; a++) {
        int64_t total, span = c->dil[a] * (c->m[a] - 1);
        if (c->pkind == TC_PADDING_SAME) { total = span; lo[a] = total / 2; }
        else if (c->pkind == TC_PADDING_VALID) { total = 0; lo[a] = 0; }
        else { total = 2 * c->pad[a]; lo[a] = c->pad[a]; }
        int64_t padded = c->n[a] + total;
        if (padded < span + 1) return 0;
        o[a] = (padded - span - 1) / c->stride[a] + 1;
    }
    return 1;
}

static inline void model_conv_run(const model_conv *c, const double *x,
                                  const double *w, const double *bias,
                                  double *y) {
    const int nsp = c->nsp;
    int64_t lo[3] = {0, 0, 0}, o[3] = {1, 1, 1}, ncount = 1, ocount = 1, mcount = 1;
    model_conv_shape(c, lo, o);
    for (int a = 0; a < nsp; a++) {
        ncount *= c->n[a];
        ocount *= o[a];
        mcount *= c->m[a];
    }
    const int64_t Cg = c->C / c->G, Kg = c->K / c->G;
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t k = 0; k < c->K; k++) {
            int64_t g = k / Kg, oi[3] = {0, 0, 0};
            do {
                double acc = c->has_bias ? bias[k] : 0.0;
                for (int64_t ci = 0; ci < Cg; ci++) {
                    const double *xc = x + (n * c->C + g * Cg + ci) * ncount;
                    const double *wc = w + (k * Cg + ci) * mcount;
                    int64_t r[3] = {0, 0, 0};
                    do {
                        int64_t src[3];
                        int zero = 0;
                        for (int a = 0; a < nsp; a++) {
                            int64_t i = oi[a] * c->stride[a] + r[a] * c->dil[a] - lo[a];
                            int64_t nn = c->n[a];
                            if (i < 0 || i >= nn) {
                                switch (c->pmode) {
                                case TC_PADDING_ZEROS: zero = 1; break;
                                case TC_PADDING_REPLICATE: i = i < 0 ? 0 : nn - 1; break;
                                case TC_PADDING_CIRCULAR: i = ((i % nn) + nn) % nn; break;
                                case TC_PADDING_REFLECT: /* torch: edge not repeated */
                                    while (nn > 1 && (i < 0 || i >= nn)) i = i < 0 ? -i : 2 * (nn - 1) - i;
                                    if (nn == 1) i = 0;
                                    break;
                                }
                            }
                            src[a] = i;
                        }
                        if (!zero) acc += wc[model_lin(r, c->m, nsp)] * xc[model_lin(src, c->n, nsp)];
                    } while (model_step(r, c->m, nsp));
                }
                y[(n * c->K + k) * ocount + model_lin(oi, o, nsp)] = acc;
            } while (model_step(oi, o, nsp));
        }
}

/* ---- GEMM: C = alpha op(A) op(B) + beta C, row-major with leading
 * dimensions; C is read only when beta != 0. ---- */
static inline void model_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k,
                              double alpha, const double *A, int64_t lda,
                              const double *B, int64_t ldb, double beta,
                              double *C, int64_t ldc) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = 0;
            for (int64_t l = 0; l < k; l++)
                acc += (ta ? A[l * lda + i] : A[i * lda + l]) *
                       (tb ? B[j * ldb + l] : B[l * ldb + j]);
            C[i * ldc + j] = alpha * acc + (beta != 0.0 ? beta * C[i * ldc + j] : 0.0);
        }
}

#endif /* TC_TESTS_MODELS_H */
