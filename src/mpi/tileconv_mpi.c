/*
 * tileconv_mpi.c - distributed filters (include/tileconv_mpi.h): slabs
 * along axis 0, halo exchange with the neighbouring ranks, the interior
 * computed while the halos are in flight.
 *
 * Buffers of a rank holding `count` rows, H = m0 - 1 halo rows per side:
 *   ext   (H + count + H) rows: [halo from below | own rows | halo from above]
 * Plans (all with the global description's mask, mode, cval, origin, kind,
 * and the same algorithm):
 *   own   count rows: run on x_local straight into y_local; the rows in
 *         [H, count - H) are final (their windows lie inside the own rows)
 *   rim   3H rows: on ext rows [0, 3H) and [count - H, count + 2H); the
 *         middle H rows of each are the final first / last H output rows
 * (with count < 2H there is no interior: one plan on all of ext after the
 * exchange). A window of an output row r reaches at most H rows each way,
 * so the rows of ext that a kept output sees are exactly the global array's
 * rows (halo rows from the neighbours, or at a global edge the mode's
 * extension, filled here); the local plans' own boundary handling along
 * axis 0 only touches outputs that are thrown away.
 */
#include "tileconv_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tc_mpi_plan {
    MPI_Comm comm;
    int rank, size, wrap;
    tc_filter_desc d;           /* global */
    size_t esize;
    int64_t row_elems;          /* elements per row (product of axes 1..) */
    int64_t first, count, H, N0;
    tc_mode mode;
    double cval;
    tc_plan *own, *rim, *all;
    MPI_Datatype halo_type;
    void *ext, *rimout;
    tc_mpi_stats st;
};

static _Thread_local char tc_mpi_err[512];

const char *tc_mpi_last_error(void) { return tc_mpi_err; }

static int64_t mpi_bidx(int64_t i, int64_t n, tc_mode mode) {
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

/* The same status on every rank: the worst one, with this rank's message
 * when it is the one that failed (else a note naming the failing rank). */
static tc_status mpi_agree(MPI_Comm comm, tc_status st, char *msg, size_t n) {
    int mine = (int)st, worst = 0, rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (worst == 0) return TC_OK;
    int who = mine == worst ? rank : -1, first = -1;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MAX, comm);
    char buf[512];
    snprintf(buf, sizeof buf, "%s", msg ? msg : "");
    MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, first, comm);
    if (msg) snprintf(msg, n, "%s", buf);
    return (tc_status)worst;
}

static tc_status mpi_local_plan(tc_plan **pl, const tc_mpi_plan *p, int64_t rows,
                                const void *mask, const tc_plan_options *opt,
                                tc_context *ctx, const char *algo) {
    tc_filter_desc d = p->d;
    d.shape[0] = rows;
    tc_plan_options o;
    tc_plan_options_init(&o);
    if (opt) o = *opt;
    o.flags &= ~(unsigned)TC_PLAN_MEASURE; /* every rank must pick the same */
    if (algo) o.algorithm = algo;
    return tc_plan_filter(pl, ctx, &d, mask, &o);
}

void tc_mpi_plan_destroy(tc_mpi_plan *p) {
    if (!p) return;
    tc_plan_destroy(p->own);
    tc_plan_destroy(p->rim);
    tc_plan_destroy(p->all);
    if (p->halo_type != MPI_DATATYPE_NULL) MPI_Type_free(&p->halo_type);
    free(p->ext);
    free(p->rimout);
    free(p);
}

/* Posts the halo messages: own first H rows down, last H rows up; halos
 * into ext's first and last H rows. */
static void mpi_post(tc_mpi_plan *p, const void *x, MPI_Request req[4]) {
    int below = p->rank - 1, above = p->rank + 1;
    if (p->wrap) {
        below = (p->rank + p->size - 1) % p->size;
        above = (p->rank + 1) % p->size;
    } else {
        if (below < 0) below = MPI_PROC_NULL;
        if (above >= p->size) above = MPI_PROC_NULL;
    }
    size_t rowb = (size_t)p->row_elems * p->esize;
    char *ext = p->ext;
    const char *xs = x;
    MPI_Irecv(ext, 1, p->halo_type, below, 1, p->comm, &req[0]);
    MPI_Irecv(ext + (size_t)(p->H + p->count) * rowb, 1, p->halo_type, above, 0, p->comm, &req[1]);
    MPI_Isend(xs, 1, p->halo_type, below, 0, p->comm, &req[2]);
    MPI_Isend(xs + (size_t)(p->count - p->H) * rowb, 1, p->halo_type, above, 1, p->comm, &req[3]);
}

/* Global-edge rows of ext for the non-wrap modes (edge ranks only). */
static void mpi_fill_edges(tc_mpi_plan *p, const void *x) {
    if (p->wrap) return;
    size_t rowb = (size_t)p->row_elems * p->esize;
    char *ext = p->ext;
    for (int side = 0; side < 2; side++) {
        if (side == 0 && p->rank != 0) continue;
        if (side == 1 && p->rank != p->size - 1) continue;
        for (int64_t k = 0; k < p->H; k++) {
            int64_t g = side == 0 ? p->first - p->H + k : p->first + p->count + k;
            int64_t e = side == 0 ? k : p->H + p->count + k;
            int64_t src = mpi_bidx(g, p->N0, p->mode);
            char *dst = ext + (size_t)e * rowb;
            if (src < 0) {
                for (int64_t i = 0; i < p->row_elems; i++) {
                    if (p->esize == 4) ((float *)dst)[i] = (float)p->cval;
                    else ((double *)dst)[i] = p->cval;
                }
            } else { /* within this rank's rows: checked at plan time */
                memcpy(dst, (const char *)x + (size_t)(src - p->first) * rowb, rowb);
            }
        }
    }
}

tc_status tc_mpi_plan_filter(tc_mpi_plan **plan, MPI_Comm comm, const tc_filter_desc *desc,
                             const void *mask, const tc_plan_options *opt) {
    if (!plan) return TC_ERR_INVALID_ARGUMENT;
    *plan = NULL;
    tc_mpi_err[0] = 0;
    char msg[512] = "";
    tc_status st = TC_OK;
    tc_mpi_plan *p = calloc(1, sizeof *p);
    tc_context *ctx = NULL;
    if (!p) {
        st = TC_ERR_OUT_OF_MEMORY;
        snprintf(msg, sizeof msg, "mpi plan: out of memory");
        goto agree;
    }
    p->comm = comm;
    p->halo_type = MPI_DATATYPE_NULL;
    MPI_Comm_rank(comm, &p->rank);
    MPI_Comm_size(comm, &p->size);
    if (!desc || !mask) {
        st = TC_ERR_INVALID_ARGUMENT;
        snprintf(msg, sizeof msg, "mpi plan: %s is NULL", !desc ? "description" : "mask");
        goto agree;
    }
    p->d = *desc;
    int nsp = desc->nspatial ? desc->nspatial : desc->ndim;
    if (desc->output != TC_OUTPUT_SAME || nsp != desc->ndim || desc->ndim < 1 ||
        desc->ndim > 3) {
        st = TC_ERR_UNSUPPORTED;
        snprintf(msg, sizeof msg,
                 "mpi plan: output %d, ndim %d, nspatial %d: distributed filters take 'same' "
                 "output over 1 to 3 filtered axes (no batch axes)",
                 (int)desc->output, desc->ndim, desc->nspatial);
        goto agree;
    }
    for (int i = 0; i < desc->ndim; i++)
        if (desc->in_strides[i] || desc->out_strides[i]) {
            st = TC_ERR_UNSUPPORTED;
            snprintf(msg, sizeof msg, "mpi plan: strided arrays are not supported (axis %d)", i);
            goto agree;
        }
    p->esize = desc->dtype == TC_FLOAT64 ? 8 : 4;
    p->N0 = desc->shape[0];
    p->row_elems = 1;
    for (int i = 1; i < desc->ndim; i++) p->row_elems *= desc->shape[i];
    p->H = desc->mask_shape[0] - 1;
    p->mode = desc->mode;
    p->cval = desc->cval;
    p->wrap = desc->mode == TC_MODE_WRAP;
    {
        int64_t base = p->N0 / p->size, rem = p->N0 % p->size;
        p->count = base + (p->rank < rem);
        p->first = p->rank * base + (p->rank < rem ? p->rank : rem);
        int64_t smallest = base; /* the last ranks hold base rows */
        /* halos only from the direct neighbours, and an edge rank's mode
         * extension only from its own rows; one rank needs this only to
         * wrap onto itself */
        int64_t need = p->size == 1 ? (p->wrap ? p->H : 0) : p->H + 1;
        if (p->H > 0 && smallest < need) {
            st = TC_ERR_NOT_APPLICABLE;
            snprintf(msg, sizeof msg,
                     "mpi plan: the mask's %lld rows along axis 0 need %lld halo rows from each "
                     "neighbour, but with %d ranks over %lld rows a rank holds only %lld: use at "
                     "most %lld ranks",
                     (long long)desc->mask_shape[0], (long long)p->H, p->size,
                     (long long)p->N0, (long long)smallest, (long long)(p->N0 / need));
            goto agree;
        }
    }
    st = tc_context_create(&ctx);
    if (st == TC_OK) {
        /* threads per rank: the node's CPUs shared by its ranks (each rank's
         * pool would otherwise take every CPU), or TILECONV_MPI_THREADS */
        MPI_Comm node;
        int local = 1;
        if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
            MPI_SUCCESS) {
            MPI_Comm_size(node, &local);
            MPI_Comm_free(&node);
        }
        int t = tc_cpu_count() / (local > 0 ? local : 1);
        const char *env = getenv("TILECONV_MPI_THREADS");
        if (env && atoi(env) > 0) t = atoi(env);
        st = tc_context_set_threads(ctx, t < 1 ? 1 : t);
    }
    if (st) {
        snprintf(msg, sizeof msg, "mpi plan: %s", tc_last_error());
        goto agree;
    }
    /* the own plan picks the algorithm (rank 0 decides, everyone uses it) */
    {
        char algo[64] = "";
        if (p->rank == 0) {
            tc_plan *probe = NULL;
            tc_status s0 = mpi_local_plan(&probe, p, p->count, mask, opt, ctx, NULL);
            if (s0 == TC_OK) snprintf(algo, sizeof algo, "%s", tc_plan_algorithm(probe));
            tc_plan_destroy(probe);
        }
        MPI_Bcast(algo, (int)sizeof algo, MPI_CHAR, 0, comm);
        const char *a = algo[0] ? algo : NULL;
        st = mpi_local_plan(&p->own, p, p->count, mask, opt, ctx, a);
        if (st == TC_OK && p->H > 0 && p->count >= 2 * p->H)
            st = mpi_local_plan(&p->rim, p, 3 * p->H, mask, opt, ctx, a);
        if (st == TC_OK && p->H > 0 && p->count < 2 * p->H)
            st = mpi_local_plan(&p->all, p, p->count + 2 * p->H, mask, opt, ctx, a);
        if (st) {
            snprintf(msg, sizeof msg, "mpi plan (rank %d): %s", p->rank, tc_last_error());
            goto agree;
        }
    }
    if (p->H > 0) {
        size_t rowb = (size_t)p->row_elems * p->esize;
        p->ext = malloc((size_t)(p->count + 2 * p->H) * rowb);
        p->rimout = malloc((size_t)(3 * p->H > p->count + 2 * p->H ? 3 * p->H
                                                                    : p->count + 2 * p->H) * rowb);
        if (!p->ext || !p->rimout) {
            st = TC_ERR_OUT_OF_MEMORY;
            snprintf(msg, sizeof msg, "mpi plan: cannot allocate the halo buffers");
            goto agree;
        }
        MPI_Type_contiguous((int)(p->H * p->row_elems), p->esize == 4 ? MPI_FLOAT : MPI_DOUBLE,
                            &p->halo_type);
        MPI_Type_commit(&p->halo_type);
    }
agree:
    tc_context_destroy(ctx); /* plans keep what they need */
    st = mpi_agree(comm, st, msg, sizeof msg);
    if (st != TC_OK) {
        tc_mpi_plan_destroy(p);
        snprintf(tc_mpi_err, sizeof tc_mpi_err, "%s", msg);
        return st;
    }
    /* the exchange alone, once, for the hidden-fraction statistic */
    p->st.ranks = p->size;
    p->st.rows_first = p->first;
    p->st.rows = p->count;
    p->st.halo_rows = p->H;
    {
        int links = p->wrap ? 2 : (p->rank > 0) + (p->rank < p->size - 1);
        p->st.halo_bytes = 2.0 * links * (double)p->H * (double)p->row_elems * (double)p->esize;
    }
    if (p->H > 0) {
        void *tmp = calloc((size_t)p->count * (size_t)p->row_elems, p->esize);
        if (tmp) {
            MPI_Request req[4];
            MPI_Barrier(comm);
            double t0 = MPI_Wtime();
            mpi_post(p, tmp, req);
            MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
            p->st.exchange_s = MPI_Wtime() - t0;
            free(tmp);
        }
    }
    *plan = p;
    return TC_OK;
}

tc_status tc_mpi_local_rows(const tc_mpi_plan *p, int64_t *first, int64_t *count) {
    if (!p || !first || !count) return TC_ERR_INVALID_ARGUMENT;
    *first = p->first;
    *count = p->count;
    return TC_OK;
}

const char *tc_mpi_plan_algorithm(const tc_mpi_plan *p) {
    return p && p->own ? tc_plan_algorithm(p->own) : "";
}

tc_status tc_mpi_plan_stats(const tc_mpi_plan *p, tc_mpi_stats *s) {
    if (!p || !s) return TC_ERR_INVALID_ARGUMENT;
    *s = p->st;
    return TC_OK;
}

tc_status tc_mpi_execute_filter(tc_mpi_plan *p, void *y, const void *x) {
    if (!p || !y || !x) return TC_ERR_INVALID_ARGUMENT;
    tc_status st = TC_OK;
    double t0 = MPI_Wtime(), tw = 0;
    if (p->H == 0) { /* no halo: every row is local */
        st = tc_execute_filter(p->own, y, x, NULL);
        p->st.compute_s = MPI_Wtime() - t0;
        p->st.wait_s = 0;
        p->st.hidden = 1;
        p->st.overlapped = 0;
        return mpi_agree(p->comm, st, NULL, 0);
    }
    size_t rowb = (size_t)p->row_elems * p->esize;
    char *ext = p->ext, *yo = y;
    MPI_Request req[4];
    mpi_post(p, x, req);
    memcpy(ext + (size_t)p->H * rowb, x, (size_t)p->count * rowb);
    mpi_fill_edges(p, x);
    if (p->rim) {
        /* interior while the halos travel */
        st = tc_execute_filter(p->own, y, x, NULL);
        double a = MPI_Wtime();
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
        tw = MPI_Wtime() - a;
        if (st == TC_OK) st = tc_execute_filter(p->rim, p->rimout, ext, NULL);
        if (st == TC_OK)
            memcpy(yo, (char *)p->rimout + (size_t)p->H * rowb, (size_t)p->H * rowb);
        if (st == TC_OK)
            st = tc_execute_filter(p->rim, p->rimout, ext + (size_t)(p->count - p->H) * rowb, NULL);
        if (st == TC_OK)
            memcpy(yo + (size_t)(p->count - p->H) * rowb, (char *)p->rimout + (size_t)p->H * rowb,
                   (size_t)p->H * rowb);
        p->st.overlapped = 1;
    } else {
        double a = MPI_Wtime();
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
        tw = MPI_Wtime() - a;
        st = tc_execute_filter(p->all, p->rimout, ext, NULL);
        if (st == TC_OK)
            memcpy(yo, (char *)p->rimout + (size_t)p->H * rowb, (size_t)p->count * rowb);
        p->st.overlapped = 0;
    }
    p->st.wait_s = tw;
    p->st.compute_s = MPI_Wtime() - t0 - tw;
    p->st.hidden = p->st.exchange_s > 0 ? 1.0 - tw / p->st.exchange_s : 1.0;
    if (p->st.hidden < 0) p->st.hidden = 0;
    if (p->st.hidden > 1) p->st.hidden = 1;
    return mpi_agree(p->comm, st, NULL, 0);
}
