/*
 * mpi_halo.c - the halo of a distributed plan (mpi_plan.h): which ranks
 * send which part of their box where (every rank derives the same lists
 * from the allgathered boxes), the rim pieces computed after the exchange,
 * and the mode's extension at the global edges.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_plan.h"

/* ---- the message list ---- */

typedef struct msg_list {
    int n, cap;
    int *peer, *tag;
    tc__mpi_box box[2]; /* scratch */
    int64_t (*a)[9];    /* per message: box lo[3], n[3], other start[3] */
} msg_list;

static int list_push(msg_list *l, int peer, int tag, const tc__mpi_box *b, const int64_t o[3]) {
    if (l->n == l->cap) {
        int c = l->cap ? 2 * l->cap : 16;
        int *pp = realloc(l->peer, sizeof(int) * (size_t)c);
        if (pp) l->peer = pp;
        int *tt = realloc(l->tag, sizeof(int) * (size_t)c);
        if (tt) l->tag = tt;
        int64_t(*aa)[9] = realloc(l->a, sizeof *aa * (size_t)c);
        if (aa) l->a = aa;
        if (!pp || !tt || !aa) return -1;
        l->cap = c;
    }
    l->peer[l->n] = peer;
    l->tag[l->n] = tag;
    for (int i = 0; i < 3; i++) {
        l->a[l->n][i] = b->lo[i];
        l->a[l->n][3 + i] = b->n[i];
        l->a[l->n][6 + i] = o[i];
    }
    l->n++;
    return 0;
}

/* Visits rank r's needs: for every run combination (C order) and every
 * rank q (in order), the part of q's box it reads; f gets q, that part
 * (global coordinates) and where it lands in r's ext. */
typedef int (*need_fn)(void *ctx, int q, const tc__mpi_box *part, const int64_t dst[3],
                       int identity);
static int visit_needs(const tc__mpi_ext *e, const tc__mpi_box *boxes, int size, need_fn f,
                       void *ctx) {
    for (int i0 = 0; i0 < e->nrun[0]; i0++)
        for (int i1 = 0; i1 < e->nrun[1]; i1++)
            for (int i2 = 0; i2 < e->nrun[2]; i2++) {
                const tc__mpi_run *r[3] = {&e->run[0][i0], &e->run[1][i1], &e->run[2][i2]};
                tc__mpi_box s;
                int identity = 1;
                for (int k = 0; k < 3; k++) {
                    s.lo[k] = r[k]->s0;
                    s.n[k] = r[k]->len;
                    if (e->xlo[k] + r[k]->e0 != r[k]->s0) identity = 0;
                }
                for (int q = 0; q < size; q++) {
                    tc__mpi_box m;
                    if (!tc__mpi_box_meet(&m, &s, &boxes[q])) continue;
                    int64_t dst[3];
                    for (int k = 0; k < 3; k++) dst[k] = r[k]->e0 + (m.lo[k] - r[k]->s0);
                    if (f(ctx, q, &m, dst, identity)) return -1;
                }
            }
    return 0;
}

typedef struct recv_ctx {
    msg_list *l;
    int *count; /* messages per sender so far */
    int me;
    selfcopy **copies;
    int *ncopy, capcopy;
    const tc__mpi_box *own;
} recv_ctx;

static int on_recv(void *c_, int q, const tc__mpi_box *part, const int64_t dst[3], int identity) {
    recv_ctx *c = c_;
    if (q == c->me) {
        if (identity) return 0; /* the own box in place: copied per piece */
        if (*c->ncopy == c->capcopy) {
            int cap = c->capcopy ? 2 * c->capcopy : 8;
            selfcopy *s = realloc(*c->copies, sizeof *s * (size_t)cap);
            if (!s) return -1;
            *c->copies = s;
            c->capcopy = cap;
        }
        selfcopy *s = &(*c->copies)[(*c->ncopy)++];
        for (int k = 0; k < 3; k++) {
            s->slo[k] = part->lo[k] - c->own->lo[k];
            s->n[k] = part->n[k];
            s->dlo[k] = dst[k];
        }
        return 0;
    }
    return list_push(c->l, q, c->count[q]++, part, dst);
}

typedef struct send_ctx {
    msg_list *l;
    int r, me, count;
    const tc__mpi_box *own;
} send_ctx;

static int on_send(void *c_, int q, const tc__mpi_box *part, const int64_t dst[3], int identity) {
    (void)dst;
    (void)identity;
    send_ctx *c = c_;
    if (q != c->me) return 0;
    int64_t at[3];
    for (int k = 0; k < 3; k++) at[k] = part->lo[k] - c->own->lo[k];
    return list_push(c->l, c->r, c->count++, part, at);
}

static int make_type(MPI_Datatype *t, const int64_t shape[3], const int64_t sub[3],
                     const int64_t start[3], MPI_Datatype et) {
    int s[3], u[3], o[3];
    for (int k = 0; k < 3; k++) {
        s[k] = (int)shape[k];
        u[k] = (int)sub[k];
        o[k] = (int)start[k];
    }
    if (MPI_Type_create_subarray(3, s, u, o, MPI_ORDER_C, et, t) != MPI_SUCCESS) return -1;
    return MPI_Type_commit(t) == MPI_SUCCESS ? 0 : -1;
}

/* A box of n elements per axis is one contiguous run of an array of the
 * given shape: past its first axis with more than one element, it spans
 * every axis. */
static int contiguous(const int64_t shape[3], const int64_t n[3]) {
    int k = 0;
    while (k < 2 && n[k] == 1) k++;
    for (int j = k + 1; j < 3; j++)
        if (n[j] != shape[j]) return 0;
    return 1;
}

void tc__mpi_post(tc_mpi_plan *p, const void *x) {
    static const int64_t zero[3] = {0, 0, 0};
    int tot = p->nrecv + p->nsend;
    if (p->ipc_now) { /* the data went GPU to GPU (mpi_ipc.c): 0-byte signals */
        static char none;
        for (int i = 0; i < tot; i++) {
            if (i < p->nrecv)
                MPI_Irecv(&none, 0, MPI_BYTE, p->peer[i], p->tag[i], p->comm, &p->req[i]);
            else
                MPI_Isend(&none, 0, MPI_BYTE, p->peer[i], p->tag[i], p->comm, &p->req[i]);
        }
        return;
    }
    for (int i = 0; i < p->nrecv; i++) {
        if (p->stage[i])
            MPI_Irecv(p->stage[i], (int)(p->geo[i][3] * p->geo[i][4] * p->geo[i][5]), p->etype,
                      p->peer[i], p->tag[i], p->comm, &p->req[i]);
        else
            MPI_Irecv(p->ext, 1, p->types[i], p->peer[i], p->tag[i], p->comm, &p->req[i]);
    }
    for (int i = p->nrecv; i < tot; i++) {
        if (p->stage[i]) {
            if (x)
                tc__mpi_copy_box(p->stage[i], p->geo[i] + 3, zero, x, p->own.n, p->geo[i],
                                 p->geo[i] + 3, p->esize);
            MPI_Isend(p->stage[i], (int)(p->geo[i][3] * p->geo[i][4] * p->geo[i][5]), p->etype,
                      p->peer[i], p->tag[i], p->comm, &p->req[i]);
        } else {
            MPI_Isend(x, 1, p->types[i], p->peer[i], p->tag[i], p->comm, &p->req[i]);
        }
    }
}

void tc__mpi_unpack(tc_mpi_plan *p) {
    static const int64_t zero[3] = {0, 0, 0};
    if (p->ipc_now) return; /* nothing came through the stages */
    for (int i = 0; i < p->nrecv; i++)
        if (p->stage[i])
            tc__mpi_copy_box(p->ext, p->x.xn, p->geo[i], p->stage[i], p->geo[i] + 3, zero,
                             p->geo[i] + 3, p->esize);
}

/* Builds the receive and send lists, their datatypes and the self copies. */
int tc__mpi_build_messages(tc_mpi_plan *p, const tc__mpi_box *boxes, char *msg, size_t n) {
    msg_list rl = {0}, sl = {0};
    int *count = calloc((size_t)p->size, sizeof(int)), rc = -1;
    if (!count) goto out;
    recv_ctx rc_ = {&rl, count, p->rank, &p->copies, &p->ncopy, 0, &p->own};
    if (visit_needs(&p->x, boxes, p->size, on_recv, &rc_)) goto out;
    for (int r = 0; r < p->size; r++) {
        if (r == p->rank) continue;
        tc__mpi_ext e;
        if (tc__mpi_ext_of(&e, &boxes[r], p->N, p->before, p->after, p->d.mode)) goto out;
        send_ctx sc = {&sl, r, p->rank, 0, &p->own};
        if (visit_needs(&e, boxes, p->size, on_send, &sc)) goto out;
    }
    p->nrecv = rl.n;
    p->nsend = sl.n;
    int tot = rl.n + sl.n;
    p->types = malloc(sizeof(MPI_Datatype) * (size_t)(tot ? tot : 1));
    p->peer = malloc(sizeof(int) * (size_t)(tot ? tot : 1));
    p->tag = malloc(sizeof(int) * (size_t)(tot ? tot : 1));
    p->req = malloc(sizeof(MPI_Request) * (size_t)(tot ? tot : 1));
    p->geo = malloc(sizeof *p->geo * (size_t)(tot ? tot : 1));
    p->stage = calloc((size_t)(tot ? tot : 1), sizeof(void *));
    if (!p->types || !p->peer || !p->tag || !p->req || !p->geo || !p->stage) goto out;
    for (int i = 0; i < tot; i++) p->types[i] = MPI_DATATYPE_NULL;
    for (int i = 0; i < tot; i++) {
        int is_recv = i < rl.n;
        msg_list *l = is_recv ? &rl : &sl;
        int j = is_recv ? i : i - rl.n;
        p->peer[i] = l->peer[j];
        p->tag[i] = l->tag[j];
        const int64_t *a = l->a[j];
        if (make_type(&p->types[i], is_recv ? p->x.xn : p->own.n, a + 3, a + 6, p->etype)) {
            snprintf(msg, n, "mpi plan: MPI_Type_create_subarray failed");
            goto out;
        }
        double bytes = (double)p->esize * (double)a[3] * (double)a[4] * (double)a[5];
        p->st.halo_bytes += bytes;
        for (int k = 0; k < 3; k++) {
            p->geo[i][k] = a[6 + k];
            p->geo[i][3 + k] = a[3 + k];
        }
        if (!contiguous(is_recv ? p->x.xn : p->own.n, a + 3)) {
            p->stage[i] = malloc((size_t)(a[3] * a[4] * a[5]) * p->esize);
            if (!p->stage[i]) goto out;
        }
    }
    rc = 0;
out:
    if (rc && !msg[0]) snprintf(msg, n, "mpi plan: out of memory building the halo messages");
    free(count);
    free(rl.peer);
    free(rl.tag);
    free(rl.a);
    free(sl.peer);
    free(sl.tag);
    free(sl.a);
    return rc;
}

/* ---- pieces ---- */

static void add_piece(tc_mpi_plan *p, const tc__mpi_box *out) {
    piece *c = &p->pc[p->npiece++];
    memset(c, 0, sizeof *c);
    c->out = *out;
    for (int k = 0; k < 3; k++) {
        if (p->x.split[k]) {
            c->in.lo[k] = out->lo[k] - p->before[k] - p->x.xlo[k];
            c->in.n[k] = out->n[k] + p->before[k] + p->after[k];
        } else {
            c->in.lo[k] = 0;
            c->in.n[k] = p->x.xn[k];
        }
        /* the own elements its input reads, directly or through the
         * mode's extension */
        int64_t mn = INT64_MAX, mx = -1, olo = p->own.lo[k] - p->x.xlo[k];
        for (int64_t e = c->in.lo[k]; e < c->in.lo[k] + c->in.n[k]; e++) {
            int64_t s = p->map[k][e];
            if (s < 0) continue;
            if (s < mn) mn = s;
            if (s > mx) mx = s;
        }
        if (mn < olo) mn = olo;
        if (mx > olo + p->own.n[k] - 1) mx = olo + p->own.n[k] - 1;
        c->src.lo[k] = mn;
        c->src.n[k] = mx >= mn ? mx - mn + 1 : 0;
    }
}

/* Whether side (0: below, 1: above) of the own box along a split axis k
 * needs a rim piece. Not at a global edge in a mode other than wrap when the
 * box is longer than the reach on both sides: there the interior plan's
 * own extension of the box is the mode's extension of the whole array
 * (constant, nearest; reflect and mirror read only the box's first rows),
 * so its outputs are those of one process (this saves one of the two
 * pieces of each end rank of a slab decomposition, whose work beside the
 * interior costs GPU ranks more than the exchange). */
int tc__mpi_rim_needed(const tc_mpi_plan *p, int k, int side) {
    const int edge = side ? p->own.lo[k] + p->own.n[k] == p->N[k] : p->own.lo[k] == 0;
    return !edge || p->d.mode == TC_MODE_WRAP || p->own.n[k] <= p->before[k] + p->after[k];
}

void tc__mpi_plan_pieces(tc_mpi_plan *p, int *interior) {
    int64_t ilo[3], ihi[3];
    *interior = 1;
    for (int k = 0; k < 3; k++) {
        ilo[k] = p->own.lo[k];
        ihi[k] = p->own.lo[k] + p->own.n[k];
        if (p->x.split[k]) {
            /* an edge side without a rim: the pieces of the later axes
             * span its rows too */
            if (tc__mpi_rim_needed(p, k, 0)) ilo[k] += p->before[k];
            if (tc__mpi_rim_needed(p, k, 1)) ihi[k] -= p->after[k];
        }
        if (ihi[k] <= ilo[k]) *interior = 0;
    }
    p->npiece = 0;
    if (!*interior) {
        add_piece(p, &p->own);
        return;
    }
    for (int k = 0; k < 3; k++) {
        if (!p->x.split[k]) continue;
        for (int side = 0; side < 2; side++) {
            tc__mpi_box o;
            for (int j = 0; j < 3; j++) {
                if (j < k) {
                    o.lo[j] = ilo[j];
                    o.n[j] = ihi[j] - ilo[j];
                } else {
                    o.lo[j] = p->own.lo[j];
                    o.n[j] = p->own.n[j];
                }
            }
            if (!tc__mpi_rim_needed(p, k, side)) continue;
            if (side == 0) o.n[k] = p->before[k];
            else {
                o.lo[k] = ihi[k];
                o.n[k] = p->after[k];
            }
            if (o.n[k] > 0) add_piece(p, &o);
        }
    }
}

/* n elements of ext from element `at` set to cval. */
void tc__mpi_fill_cval(tc_mpi_plan *p, size_t at, size_t n) {
    for (size_t k = 0; k < n; k++) {
        if (p->esize == 4) ((float *)p->ext)[at + k] = (float)p->d.cval;
        else ((double *)p->ext)[at + k] = p->d.cval;
    }
}

/* The mode's extension inside a piece's input (after the exchange). */
void tc__mpi_fill_edges(tc_mpi_plan *p, const piece *c) {
    int any[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++)
        for (int64_t e = c->in.lo[k]; e < c->in.lo[k] + c->in.n[k] && !any[k]; e++)
            any[k] = p->oob[k][e];
    if (!any[0] && !any[1] && !any[2]) return;
    const int64_t *xn = p->x.xn;
    for (int64_t i = c->in.lo[0]; i < c->in.lo[0] + c->in.n[0]; i++)
        for (int64_t j = c->in.lo[1]; j < c->in.lo[1] + c->in.n[1]; j++) {
            int row_out = p->oob[0][i] || p->oob[1][j];
            if (!row_out && !any[2]) continue;
            for (int64_t k = c->in.lo[2]; k < c->in.lo[2] + c->in.n[2]; k++) {
                if (!row_out && !p->oob[2][k]) {
                    /* jump over the in-range run of the last axis */
                    int64_t k2 = k;
                    while (k2 + 1 < c->in.lo[2] + c->in.n[2] && !p->oob[2][k2 + 1]) k2++;
                    k = k2;
                    continue;
                }
                int64_t a = p->map[0][i], b = p->map[1][j], d = p->map[2][k];
                size_t at = (size_t)((i * xn[1] + j) * xn[2] + k);
                if (a < 0 || b < 0 || d < 0) {
                    tc__mpi_fill_cval(p, at, 1);
                } else {
                    /* a run whose sources are consecutive too (the maps
                     * point inside the array, never at filled elements):
                     * a row outside along axis 0 or 1 is one copy (one
                     * element at a time was ~1 ms for the 2 x 384 x 384
                     * rows of a global edge) */
                    int64_t k2 = k, end = c->in.lo[2] + c->in.n[2];
                    while (k2 + 1 < end && (row_out || p->oob[2][k2 + 1]) &&
                           p->map[2][k2 + 1] == p->map[2][k2] + 1)
                        k2++;
                    size_t from = (size_t)((a * xn[1] + b) * xn[2] + d);
                    memmove((char *)p->ext + at * p->esize, (char *)p->ext + from * p->esize,
                            (size_t)(k2 - k + 1) * p->esize);
                    k = k2;
                }
            }
        }
}
