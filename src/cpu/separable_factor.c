/* separable_factor.c - is the mask a sum of few outer products?
 *
 * Rank 1 (any of 1, 2, 3 axes): pick the element of largest |w| as pivot
 * p = (p0, p1, p2); the factors are the three mask lines through it,
 *   f0[r] = w[r][p1][p2], f1[r] = w[p0][r][p2] / w_p, f2[r] = w[p0][p1][r] / w_p,
 * which reproduce an exact outer product exactly (up to rounding). The
 * mask is accepted when the relative Frobenius residual is <= tol (see
 * separable.h for the tolerances and what they cost in accuracy).
 *
 * Rank r (2D masks, m0 == 1): one-sided Jacobi SVD (Hestenes) in double of
 * the m1 x m2 mask (transposed when wider than tall), singular triplets
 * sorted by value, and the smallest r whose residual, computed explicitly,
 * is <= tol. Masks are small (<= 64 x 64): a sweep is O(m^3), converging
 * in ~6-10 sweeps, well under a millisecond at 31 x 31. */
#include "cpu/separable.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double sep_ld(const tc__problem *p, int64_t i) {
    return p->dtype == TC_FLOAT32 ? (double)((const float *)p->mask)[i]
                                  : ((const double *)p->mask)[i];
}

void tc__sep_free(tc__sep_factors *fa) {
    for (int a = 0; a < 3; a++) {
        free(fa->f[a]);
        fa->f[a] = NULL;
    }
}

static int sep_alloc(tc__sep_factors *fa, const int64_t m[3], int rank) {
    memset(fa, 0, sizeof *fa);
    fa->rank = rank;
    for (int a = 0; a < 3; a++) {
        fa->m[a] = m[a];
        fa->f[a] = calloc((size_t)(a == 0 ? 1 : rank) * (size_t)m[a], sizeof(double));
        if (!fa->f[a]) {
            tc__sep_free(fa);
            return 0;
        }
    }
    return 1;
}

/* ||w - sum_i f0 (x) f1_i (x) f2_i||_F / ||w||_F (0 for a zero mask). */
static double sep_residual(const tc__problem *p, const tc__sep_factors *fa) {
    const int64_t *m = p->msk;
    double num = 0, den = 0;
    for (int64_t r0 = 0; r0 < m[0]; r0++)
        for (int64_t r1 = 0; r1 < m[1]; r1++)
            for (int64_t r2 = 0; r2 < m[2]; r2++) {
                double w = sep_ld(p, (r0 * m[1] + r1) * m[2] + r2), s = 0;
                for (int i = 0; i < fa->rank; i++)
                    s += fa->f[1][i * m[1] + r1] * fa->f[2][i * m[2] + r2];
                s *= fa->f[0][r0];
                num += (w - s) * (w - s);
                den += w * w;
            }
    if (den == 0) return num == 0 ? 0 : INFINITY;
    return sqrt(num / den);
}

int tc__sep_rank1(const tc__problem *p, double tol, tc__sep_factors *fa,
                  char *why, size_t why_size) {
    const int64_t *m = p->msk;
    if (!p->mask) {
        if (why) snprintf(why, why_size, "mask known only at execute time");
        return 0;
    }
    if (!sep_alloc(fa, m, 1)) {
        if (why) snprintf(why, why_size, "out of memory");
        return 0;
    }
    int64_t n = m[0] * m[1] * m[2], piv = 0;
    double big = -1;
    for (int64_t i = 0; i < n; i++) {
        double v = fabs(sep_ld(p, i));
        if (v > big || v != v) { /* NaN pivots fail the residual below */
            big = v;
            piv = i;
        }
    }
    int64_t p2 = piv % m[2], p1 = (piv / m[2]) % m[1], p0 = piv / (m[1] * m[2]);
    double wp = sep_ld(p, piv);
    if (wp == 0) { /* zero mask: any factors with product 0 */
        fa->f[0][0] = 0;
        for (int64_t r = 1; r < m[0]; r++) fa->f[0][r] = 0;
        for (int64_t r = 0; r < m[1]; r++) fa->f[1][r] = 1;
        for (int64_t r = 0; r < m[2]; r++) fa->f[2][r] = 1;
    } else {
        for (int64_t r = 0; r < m[0]; r++)
            fa->f[0][r] = sep_ld(p, (r * m[1] + p1) * m[2] + p2);
        for (int64_t r = 0; r < m[1]; r++)
            fa->f[1][r] = sep_ld(p, (p0 * m[1] + r) * m[2] + p2) / wp;
        for (int64_t r = 0; r < m[2]; r++)
            fa->f[2][r] = sep_ld(p, (p0 * m[1] + p1) * m[2] + r) / wp;
    }
    fa->resid = sep_residual(p, fa);
    if (!(fa->resid <= tol)) {
        if (why)
            snprintf(why, why_size,
                     "mask is not separable: rank-1 residual %.3g > tol %.0e",
                     fa->resid, tol);
        tc__sep_free(fa);
        return 0;
    }
    return 1;
}

/* One-sided Jacobi on B (R x C, column-major by column pointer: B[j][i]),
 * C <= R, accumulating the rotations in V (C x C, V[j][i]). On return the
 * columns of B are orthogonal: B_in V = B_out. */
static void sep_jacobi(double *B, int64_t R, int64_t C, double *V) {
    for (int64_t j = 0; j < C; j++)
        for (int64_t i = 0; i < C; i++) V[j * C + i] = i == j;
    for (int sweep = 0; sweep < 60; sweep++) {
        int rotated = 0;
        for (int64_t a = 0; a < C - 1; a++)
            for (int64_t b = a + 1; b < C; b++) {
                double *x = B + a * R, *y = B + b * R;
                double al = 0, be = 0, ga = 0;
                for (int64_t i = 0; i < R; i++) {
                    al += x[i] * x[i];
                    be += y[i] * y[i];
                    ga += x[i] * y[i];
                }
                if (ga == 0 || fabs(ga) <= 1e-15 * sqrt(al * be)) continue;
                rotated = 1;
                double zeta = (be - al) / (2 * ga);
                double t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1 + zeta * zeta));
                double c = 1 / sqrt(1 + t * t), s = c * t;
                for (int64_t i = 0; i < R; i++) {
                    double u = x[i], v = y[i];
                    x[i] = c * u - s * v;
                    y[i] = s * u + c * v;
                }
                double *vx = V + a * C, *vy = V + b * C;
                for (int64_t i = 0; i < C; i++) {
                    double u = vx[i], v = vy[i];
                    vx[i] = c * u - s * v;
                    vy[i] = s * u + c * v;
                }
            }
        if (!rotated) break;
    }
}

int tc__sep_lowrank(const tc__problem *p, double tol, int maxrank,
                    tc__sep_factors *fa, char *why, size_t why_size) {
    const int64_t m1 = p->msk[1], m2 = p->msk[2];
    if (!p->mask) {
        if (why) snprintf(why, why_size, "mask known only at execute time");
        return 0;
    }
    if (p->msk[0] != 1 || m1 < 2 || m2 < 2) {
        if (why) snprintf(why, why_size, "low rank needs a 2D mask (both axes >= 2)");
        return 0;
    }
    if (m1 > TC__SEP_MAXSVD || m2 > TC__SEP_MAXSVD) {
        if (why) snprintf(why, why_size, "low rank needs mask axes <= %d", TC__SEP_MAXSVD);
        return 0;
    }
    if (maxrank > TC__SEP_MAXRANK) maxrank = TC__SEP_MAXRANK;
    if (maxrank < 1) {
        if (why) snprintf(why, why_size, "mask too small for a low-rank split to pay");
        return 0;
    }
    const int tr = m2 > m1; /* work on B = A^T when A is wider than tall */
    const int64_t R = tr ? m2 : m1, C = tr ? m1 : m2;
    double *B = malloc(sizeof(double) * (size_t)(R * C + C * C + C));
    if (!B) {
        if (why) snprintf(why, why_size, "out of memory");
        return 0;
    }
    double *V = B + R * C, *sig = V + C * C;
    for (int64_t r1 = 0; r1 < m1; r1++)
        for (int64_t r2 = 0; r2 < m2; r2++) {
            double w = sep_ld(p, r1 * m2 + r2);
            if (tr) B[r1 * R + r2] = w; /* column r1 of A^T */
            else B[r2 * R + r1] = w;    /* column r2 of A */
        }
    sep_jacobi(B, R, C, V);
    int order[TC__SEP_MAXSVD];
    for (int64_t j = 0; j < C; j++) {
        double s = 0;
        for (int64_t i = 0; i < R; i++) s += B[j * R + i] * B[j * R + i];
        sig[j] = sqrt(s);
        order[j] = (int)j;
    }
    for (int64_t i = 1; i < C; i++) /* insertion sort, descending */
        for (int64_t j = i; j > 0 && sig[order[j]] > sig[order[j - 1]]; j--) {
            int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
        }
    int64_t mm[3] = {1, m1, m2};
    int ok = 0;
    for (int r = 1; r <= maxrank && r <= C && !ok; r++) {
        if (!sep_alloc(fa, mm, r)) break;
        fa->f[0][0] = 1;
        for (int i = 0; i < r; i++) {
            const double *w = B + (int64_t)order[i] * R; /* sigma u, length R */
            const double *v = V + (int64_t)order[i] * C; /* length C */
            double *u1 = fa->f[1] + i * m1, *u2 = fa->f[2] + i * m2;
            for (int64_t k = 0; k < m1; k++) u1[k] = tr ? v[k] : w[k];
            for (int64_t k = 0; k < m2; k++) u2[k] = tr ? w[k] : v[k];
        }
        fa->resid = sep_residual(p, fa);
        if (fa->resid <= tol) ok = 1;
        else tc__sep_free(fa);
    }
    if (!ok && why)
        snprintf(why, why_size, "mask rank exceeds %d (the most that beats "
                 "direct) within tol %.0e", maxrank, tol);
    free(B);
    return ok;
}
