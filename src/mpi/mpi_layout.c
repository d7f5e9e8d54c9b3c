/*
 * mpi_layout.c - boxes, grids and halo layout for tileconv_mpi (see
 * mpi_layout.h). Pure arithmetic: every rank computes the same answers
 * from the same inputs, which is what lets the sender and the receiver of
 * each halo message agree on it without talking.
 */
#include "mpi_layout.h"

#include <stdio.h>
#include <string.h>

void tc__mpi_reach(const tc_filter_desc *d, int64_t before[3], int64_t after[3]) {
    for (int i = 0; i < 3; i++) {
        before[i] = after[i] = 0;
        if (i >= d->ndim) continue;
        int64_t m = d->mask_shape[i], c = m / 2 + d->origin[i];
        /* correlate: output i reads [i - c, i + m - 1 - c]; convolve flips
         * the mask (checked against scipy.ndimage for m = 1..7, every origin) */
        if (d->kind == TC_FILTER_CORRELATE) {
            before[i] = c;
            after[i] = m - 1 - c;
        } else {
            before[i] = m - 1 - c;
            after[i] = c;
        }
        if (before[i] < 0) before[i] = 0;
        if (after[i] < 0) after[i] = 0;
    }
}

int64_t tc__mpi_bidx(int64_t i, int64_t n, tc_mode mode) {
    if (i >= 0 && i < n) return i;
    switch (mode) {
    case TC_MODE_CONSTANT: return -1;
    case TC_MODE_NEAREST: return i < 0 ? 0 : n - 1;
    case TC_MODE_WRAP: return ((i % n) + n) % n;
    case TC_MODE_REFLECT: {
        int64_t m = ((i % (2 * n)) + 2 * n) % (2 * n);
        return m < n ? m : 2 * n - 1 - m;
    }
    case TC_MODE_MIRROR: {
        if (n == 1) return 0;
        int64_t p = 2 * n - 2, m = ((i % p) + p) % p;
        return m < n ? m : p - m;
    }
    }
    return -1;
}

static int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int tc__mpi_ext_of(tc__mpi_ext *e, const tc__mpi_box *box, const int64_t N[3],
                   const int64_t before[3], const int64_t after[3], tc_mode mode) {
    memset(e, 0, sizeof *e);
    for (int i = 0; i < 3; i++) {
        int64_t lo = box->lo[i], hi = lo + box->n[i];
        e->split[i] = !(lo == 0 && hi == N[i]) && (before[i] > 0 || after[i] > 0);
        if (!e->split[i]) { /* the rank's own extent; local plans do the rest */
            e->xlo[i] = lo;
            e->xn[i] = box->n[i];
            e->nrun[i] = 1;
            e->run[i][0] = (tc__mpi_run){0, lo, box->n[i]};
            continue;
        }
        int64_t elo = lo - before[i], ehi = hi + after[i];
        if (mode == TC_MODE_WRAP) {
            e->xlo[i] = elo;
            e->xn[i] = ehi - elo;
            for (int64_t k = floordiv(elo, N[i]); k * N[i] < ehi; k++) {
                int64_t a = elo > k * N[i] ? elo : k * N[i];
                int64_t b = ehi < (k + 1) * N[i] ? ehi : (k + 1) * N[i];
                if (b <= a) continue;
                if (e->nrun[i] == TC_MPI_MAXRUN) return -1;
                e->run[i][e->nrun[i]++] = (tc__mpi_run){a - elo, a - k * N[i], b - a};
            }
            continue;
        }
        /* widen to the in-range sources of the mode's extension */
        int64_t smin = elo > 0 ? elo : 0, smax = (ehi < N[i] ? ehi : N[i]) - 1;
        for (int64_t g = elo; g < ehi; g++) {
            if (g >= 0 && g < N[i]) continue;
            int64_t s = tc__mpi_bidx(g, N[i], mode);
            if (s < 0) continue;
            if (s < smin) smin = s;
            if (s > smax) smax = s;
        }
        int64_t xlo = elo < smin ? elo : smin, xhi = ehi > smax + 1 ? ehi : smax + 1;
        e->xlo[i] = xlo;
        e->xn[i] = xhi - xlo;
        e->nrun[i] = 1;
        e->run[i][0] = (tc__mpi_run){smin - xlo, smin, smax + 1 - smin};
    }
    return 0;
}

void tc__mpi_grid_box(tc__mpi_box *b, const int grid[3], const int64_t N[3], int r) {
    int c[3];
    c[2] = r % grid[2];
    c[1] = (r / grid[2]) % grid[1];
    c[0] = r / (grid[2] * grid[1]);
    for (int i = 0; i < 3; i++) {
        int64_t base = N[i] / grid[i], rem = N[i] % grid[i];
        b->n[i] = base + (c[i] < rem);
        b->lo[i] = c[i] * base + (c[i] < rem ? c[i] : rem);
    }
}

int tc__mpi_grid_choose(int grid[3], int size, int nd, const int64_t N[3],
                        const int64_t before[3], const int64_t after[3]) {
    double best = -1;
    for (int d0 = size; d0 >= 1; d0--) { /* descending: ties keep the earlier axes split */
        if (size % d0) continue;
        for (int d1 = size / d0; d1 >= 1; d1--) {
            if ((size / d0) % d1) continue;
            int g[3] = {d0, d1, size / d0 / d1}, ok = 1;
            for (int i = 0; i < 3; i++)
                if ((i >= nd && g[i] != 1) || g[i] > N[i]) ok = 0;
            if (!ok) continue;
            /* halo elements per rank (faces of the largest block); a split
             * of the last (contiguous) axis counts 8 times: its faces are
             * messages of 2-element runs and its rim pieces rows a few
             * elements wide for the vector kernels (measured on a 16-core
             * Xeon, 8 ranks of 192^3, k5: compute 53-79 ms per rank on a
             * 2x2x2 grid against 31-45 ms as 8x1x1 slabs, the exchange
             * alone 24 ms against 0.9 ms). Ties go to splitting the
             * earlier axes. */
            double cost = 0;
            for (int i = 0; i < nd; i++) {
                if (g[i] == 1) continue;
                double face = (double)(before[i] + after[i]);
                for (int j = 0; j < nd; j++)
                    if (j != i) face *= (double)((N[j] + g[j] - 1) / g[j]);
                cost += (nd > 1 && i == nd - 1) ? 8 * face : face;
            }
            if (best < 0 || cost < best) {
                best = cost;
                memcpy(grid, g, sizeof g);
            }
        }
    }
    return best < 0 ? -1 : 0;
}

int tc__mpi_box_meet(tc__mpi_box *out, const tc__mpi_box *a, const tc__mpi_box *b) {
    for (int i = 0; i < 3; i++) {
        int64_t lo = a->lo[i] > b->lo[i] ? a->lo[i] : b->lo[i];
        int64_t ha = a->lo[i] + a->n[i], hb = b->lo[i] + b->n[i];
        int64_t hi = ha < hb ? ha : hb;
        if (hi <= lo) return 0;
        out->lo[i] = lo;
        out->n[i] = hi - lo;
    }
    return 1;
}

static void box_text(char *s, size_t n, const tc__mpi_box *b, int nd) {
    size_t k = 0;
    s[0] = 0;
    for (int i = 0; i < nd && k < n; i++)
        k += (size_t)snprintf(s + k, n - k, "%s[%lld,%lld)", i ? "x" : "", (long long)b->lo[i],
                              (long long)(b->lo[i] + b->n[i]));
}

int tc__mpi_boxes_check(const tc__mpi_box *boxes, int size, int nd, const int64_t N[3],
                        char *msg, size_t n) {
    char t1[160], t2[160];
    double vol = 0, total = 1;
    for (int i = 0; i < nd; i++) total *= (double)N[i];
    for (int r = 0; r < size; r++) {
        const tc__mpi_box *b = &boxes[r];
        for (int i = 0; i < 3; i++) {
            int64_t ext = i < nd ? N[i] : 1;
            if (b->n[i] < 1 || b->lo[i] < 0 || b->lo[i] + b->n[i] > ext) {
                box_text(t1, sizeof t1, b, nd);
                snprintf(msg, n,
                         "mpi plan: rank %d's box %s is empty or leaves the array along axis %d "
                         "(extent %lld)",
                         r, t1, i, (long long)ext);
                return -1;
            }
        }
        double v = 1;
        for (int i = 0; i < nd; i++) v *= (double)b->n[i];
        vol += v;
    }
    for (int r = 0; r < size; r++)
        for (int q = r + 1; q < size; q++) {
            tc__mpi_box m;
            if (tc__mpi_box_meet(&m, &boxes[r], &boxes[q])) {
                box_text(t1, sizeof t1, &boxes[r], nd);
                box_text(t2, sizeof t2, &boxes[q], nd);
                snprintf(msg, n, "mpi plan: the ranks' boxes do not tile the array: rank %d's %s "
                         "overlaps rank %d's %s", r, t1, q, t2);
                return -1;
            }
        }
    if (vol != total) {
        snprintf(msg, n,
                 "mpi plan: the ranks' boxes do not tile the array: they cover %.0f of its %.0f "
                 "elements",
                 vol, total);
        return -1;
    }
    return 0;
}

void tc__mpi_copy_box(void *dst, const int64_t ds[3], const int64_t dlo[3], const void *src,
                      const int64_t ss[3], const int64_t slo[3], const int64_t n[3], size_t es) {
    size_t row = (size_t)n[2] * es;
    for (int64_t i = 0; i < n[0]; i++)
        for (int64_t j = 0; j < n[1]; j++) {
            int64_t di = ((dlo[0] + i) * ds[1] + dlo[1] + j) * ds[2] + dlo[2];
            int64_t si = ((slo[0] + i) * ss[1] + slo[1] + j) * ss[2] + slo[2];
            memcpy((char *)dst + (size_t)di * es, (const char *)src + (size_t)si * es, row);
        }
}
