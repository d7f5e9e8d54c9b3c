/*
 * tileconv_mpi.c - distributed filters (include/tileconv_mpi.h): each rank
 * owns a box of the global array (a Cartesian grid chosen here, or boxes
 * given by the caller); each execute gathers the halo from the ranks that
 * own it, computes the interior while the messages are in flight, then the
 * rims.
 *
 * Per rank (mpi_layout.h for the ext layout):
 *   messages  for every run combination of the ext layout (one per axis;
 *             several only for wrap's periodic images) and every rank q,
 *             the intersection with q's box is one message q -> this rank
 *             with MPI_Type_create_subarray types on both sides (q's box
 *             on the sending side, ext on the receiving side). Diagonal
 *             neighbours send their corners directly, and a mask wider
 *             than a block simply meets more ranks ("multi-hop" halos are
 *             direct messages from the owners). Sender and receiver derive
 *             the same list from the allgathered boxes; the tag is the
 *             message's index within its (sender, receiver) pair.
 *   own       a plan on the rank's box, run on x_local straight into
 *             y_local while the halos travel; its outputs whose windows lie
 *             inside the box are final (the "interior").
 *   pieces    the rest of the box peeled axis by axis into at most two
 *             slabs per split axis; each piece's input (the piece widened
 *             by the reach) is copied out of ext (own rows, received
 *             halos, and at the global edges the mode's extension filled
 *             here) into a dense buffer, filtered by a plan of that shape,
 *             and the piece's outputs copied into y_local. A box too thin
 *             for an interior is one piece, computed after the wait.
 * Every plan uses the same algorithm (rank 0's choice), so each output's
 * arithmetic equals the one-process run's for the position-independent
 * (direct, separable) algorithms.
 */
#include "tileconv_mpi.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_layout.h"

#if TC_MPI_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define MAXPIECE 6

typedef struct piece {
    tc__mpi_box out; /* outputs, global coordinates */
    tc__mpi_box in;  /* input, ext coordinates */
    tc__mpi_box src; /* own elements the input reads (ext coordinates); n[0] = 0: none */
    tc_plan *pl;
} piece;

typedef struct selfcopy {
    int64_t slo[3], n[3], dlo[3]; /* own box (local coordinates) -> ext */
} selfcopy;

struct tc_mpi_plan {
    MPI_Comm comm;
    int rank, size, nd;
    tc_filter_desc d;
    size_t esize;
    MPI_Datatype etype;
    int64_t N[3], before[3], after[3];
    tc__mpi_box own;
    tc__mpi_ext x;     /* this rank's ext layout */
    int64_t *map[3];   /* ext index -> ext index of its value; -1: cval */
    char *oob[3];      /* ext index outside [0, N) (modes other than wrap) */
    void *ext, *pin, *pout;
    int nrecv, nsend;
    MPI_Datatype *types; /* nrecv receive types, then nsend send types */
    int *peer, *tag;
    MPI_Request *req;
    int ncopy;
    selfcopy *copies;
    tc_plan *inner; /* the own box (NULL: no interior) */
    int npiece;
    piece pc[MAXPIECE];
    int grid[3];
    tc_mpi_stats st;
};

static _Thread_local char tc_mpi_err[512];

const char *tc_mpi_last_error(void) { return tc_mpi_err; }

void tc_mpi_options_init(tc_mpi_options *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->backend = TC_BACKEND_CPU;
}

/* The same status on every rank: the worst one, with the message of the
 * lowest rank that has it. */
static tc_status mpi_agree(MPI_Comm comm, tc_status st, char *msg, size_t n) {
    int mine = (int)st, worst = 0, rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (worst == 0) return TC_OK;
    int who = mine == worst ? rank : size, first = size;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, comm);
    char buf[512];
    snprintf(buf, sizeof buf, "%s", msg ? msg : "");
    MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, first, comm);
    if (msg) snprintf(msg, n, "%s", buf);
    return (tc_status)worst;
}

static tc_status local_plan(tc_plan **pl, const tc_mpi_plan *p, const int64_t n[3],
                            const void *mask, const tc_plan_options *opt, tc_context *ctx,
                            const char *algo) {
    tc_filter_desc d = p->d;
    for (int i = 0; i < p->nd; i++) d.shape[i] = n[i];
    tc_plan_options o;
    tc_plan_options_init(&o);
    if (opt) o = *opt;
    o.flags &= ~(unsigned)TC_PLAN_MEASURE; /* every rank must pick the same */
    if (algo) o.algorithm = algo;
    return tc_plan_filter(pl, ctx, &d, mask, &o);
}

void tc_mpi_plan_destroy(tc_mpi_plan *p) {
    if (!p) return;
    if (p->comm != MPI_COMM_NULL) MPI_Comm_free(&p->comm);
    tc_plan_destroy(p->inner);
    for (int i = 0; i < p->npiece; i++) tc_plan_destroy(p->pc[i].pl);
    if (p->types)
        for (int i = 0; i < p->nrecv + p->nsend; i++)
            if (p->types[i] != MPI_DATATYPE_NULL) MPI_Type_free(&p->types[i]);
    free(p->types);
    free(p->peer);
    free(p->tag);
    free(p->req);
    free(p->copies);
    for (int i = 0; i < 3; i++) {
        free(p->map[i]);
        free(p->oob[i]);
    }
    free(p->ext);
    free(p->pin);
    free(p->pout);
    free(p);
}

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

/* Builds the receive and send lists, their datatypes and the self copies. */
static int build_messages(tc_mpi_plan *p, const tc__mpi_box *boxes, char *msg, size_t n) {
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
    if (!p->types || !p->peer || !p->tag || !p->req) goto out;
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

static void plan_pieces(tc_mpi_plan *p, int *interior) {
    int64_t ilo[3], ihi[3];
    *interior = 1;
    for (int k = 0; k < 3; k++) {
        ilo[k] = p->own.lo[k];
        ihi[k] = p->own.lo[k] + p->own.n[k];
        if (p->x.split[k]) {
            ilo[k] += p->before[k];
            ihi[k] -= p->after[k];
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
            if (side == 0) o.n[k] = p->before[k];
            else {
                o.lo[k] = ihi[k];
                o.n[k] = p->after[k];
            }
            if (o.n[k] > 0) add_piece(p, &o);
        }
    }
}

/* ---- planning ---- */

static void set_device(tc_mpi_plan *p, tc_context *ctx, const tc_mpi_options *mo, char *msg,
                       size_t n, tc_status *st) {
    if (!mo || mo->backend != TC_BACKEND_CUDA) return;
    int devs = tc_cuda_device_count();
    if (devs <= 0) {
        *st = TC_ERR_NO_DEVICE;
        snprintf(msg, n, "mpi plan: --backend cuda: rank %d sees no CUDA device (%s)", p->rank,
#if TC_MPI_HAVE_CUDA
                 "none usable"
#else
                 "this build has no CUDA"
#endif
        );
        return;
    }
    MPI_Comm node;
    int local = 0;
    if (MPI_Comm_split_type(p->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(node, &local);
        MPI_Comm_free(&node);
    }
#if TC_MPI_HAVE_CUDA
    if (cudaSetDevice(local % devs) != cudaSuccess) {
        *st = TC_ERR_NO_DEVICE;
        snprintf(msg, n, "mpi plan: rank %d cannot select CUDA device %d of %d", p->rank,
                 local % devs, devs);
        return;
    }
#endif
    *st = tc_context_set_backend(ctx, TC_BACKEND_CUDA);
    if (*st) snprintf(msg, n, "mpi plan: %s", tc_last_error());
}

static int choose_threads(MPI_Comm comm, const tc_mpi_options *mo) {
    if (mo && mo->threads > 0) return mo->threads;
    const char *env = getenv("TILECONV_MPI_THREADS");
    if (env && atoi(env) > 0) return atoi(env);
    /* the node's CPUs shared by its ranks (each rank's pool would
     * otherwise take every CPU) */
    MPI_Comm node;
    int local = 1;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &local);
        MPI_Comm_free(&node);
    }
    int t = tc_cpu_count() / (local > 0 ? local : 1);
    return t < 1 ? 1 : t;
}

/* FNV-1a over the arguments that must match on every rank. */
static uint64_t fnv(uint64_t h, const void *s, size_t n) {
    const unsigned char *c = s;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

static uint64_t args_hash(const tc_filter_desc *d, const void *mask, const tc_plan_options *opt,
                          const tc_mpi_options *mo) {
    uint64_t h = 1469598103934665603ull;
    int64_t v[32];
    int k = 0;
    v[k++] = d->dtype;
    v[k++] = d->ndim;
    v[k++] = d->kind;
    v[k++] = d->mode;
    for (int i = 0; i < 3; i++) {
        v[k++] = i < d->ndim ? d->shape[i] : 1;
        v[k++] = i < d->ndim ? d->mask_shape[i] : 1;
        v[k++] = i < d->ndim ? d->origin[i] : 0;
    }
    memcpy(&v[k++], &d->cval, 8);
    v[k++] = mo ? mo->backend : 0;
    for (int i = 0; i < 3; i++) v[k++] = mo ? mo->grid[i] : 0;
    v[k++] = mo && mo->box_first ? 1 : 0;
    h = fnv(h, v, sizeof(int64_t) * (size_t)k);
    int64_t mc = 1;
    for (int i = 0; i < d->ndim && i < 3; i++) mc *= d->mask_shape[i];
    h = fnv(h, mask, (size_t)mc * (d->dtype == TC_FLOAT64 ? 8 : 4));
    if (opt && opt->algorithm) h = fnv(h, opt->algorithm, strlen(opt->algorithm));
    return h;
}

tc_status tc_mpi_plan_filter(tc_mpi_plan **plan, MPI_Comm comm, const tc_filter_desc *desc,
                             const void *mask, const tc_plan_options *opt) {
    return tc_mpi_plan_filter_ex(plan, comm, desc, mask, opt, NULL);
}

tc_status tc_mpi_plan_filter_ex(tc_mpi_plan **plan, MPI_Comm comm, const tc_filter_desc *desc,
                                const void *mask, const tc_plan_options *opt,
                                const tc_mpi_options *mo) {
    if (!plan) return TC_ERR_INVALID_ARGUMENT;
    *plan = NULL;
    tc_mpi_err[0] = 0;
    char msg[512] = "";
    tc_status st = TC_OK;
    tc_context *ctx = NULL;
    tc__mpi_box *boxes = NULL;
    /* a private communicator: the halo tags cannot meet the caller's
     * messages (every rank dups, whatever fails later) */
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_dup(comm, &dup);
    comm = dup;
    tc_mpi_plan *p = calloc(1, sizeof *p);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (!p) {
        st = TC_ERR_OUT_OF_MEMORY;
        snprintf(msg, sizeof msg, "mpi plan: out of memory");
        goto agree;
    }
    p->comm = dup;
    p->rank = rank;
    p->size = size;
    if (!desc || !mask) {
        st = TC_ERR_INVALID_ARGUMENT;
        snprintf(msg, sizeof msg, "mpi plan: %s is NULL", !desc ? "description" : "mask");
        goto agree;
    }
    if (mo && mo->struct_size != sizeof *mo) {
        st = TC_ERR_INVALID_ARGUMENT;
        snprintf(msg, sizeof msg, "mpi plan: options not set up by tc_mpi_options_init");
        goto agree;
    }
    p->d = *desc;
    p->nd = desc->ndim;
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
    for (int i = 0; i < desc->ndim; i++) {
        if (desc->in_strides[i] || desc->out_strides[i]) {
            st = TC_ERR_UNSUPPORTED;
            snprintf(msg, sizeof msg, "mpi plan: strided arrays are not supported (axis %d)", i);
            goto agree;
        }
        if (desc->shape[i] < 1 || desc->shape[i] > INT_MAX / 2 || desc->mask_shape[i] < 1) {
            st = TC_ERR_INVALID_ARGUMENT;
            snprintf(msg, sizeof msg, "mpi plan: shape[%d] = %lld, mask_shape[%d] = %lld", i,
                     (long long)desc->shape[i], i, (long long)desc->mask_shape[i]);
            goto agree;
        }
    }
    p->esize = desc->dtype == TC_FLOAT64 ? 8 : 4;
    p->etype = desc->dtype == TC_FLOAT64 ? MPI_DOUBLE : MPI_FLOAT;
    for (int i = 0; i < 3; i++) p->N[i] = i < p->nd ? desc->shape[i] : 1;
    tc__mpi_reach(desc, p->before, p->after);
    /* the same arguments everywhere (a mismatch would deadlock or mix data) */
    {
        uint64_t h = args_hash(desc, mask, opt, mo), hmin = 0, hmax = 0;
        MPI_Allreduce(&h, &hmin, 1, MPI_UINT64_T, MPI_MIN, comm);
        MPI_Allreduce(&h, &hmax, 1, MPI_UINT64_T, MPI_MAX, comm);
        if (hmin != hmax) {
            st = TC_ERR_INVALID_ARGUMENT;
            snprintf(msg, sizeof msg,
                     "mpi plan: the ranks were given different arguments (shape, mask, mode, "
                     "origin, cval, kind, algorithm, backend, grid or boxes differ)");
            goto agree;
        }
    }
    /* the boxes: given by the caller, or a grid */
    boxes = calloc((size_t)size, sizeof *boxes);
    if (!boxes) {
        st = TC_ERR_OUT_OF_MEMORY;
        snprintf(msg, sizeof msg, "mpi plan: out of memory");
        goto agree;
    }
    if (mo && mo->box_first) {
        tc__mpi_box mine;
        for (int i = 0; i < 3; i++) {
            mine.lo[i] = i < p->nd ? mo->box_first[i] : 0;
            mine.n[i] = i < p->nd ? (mo->box_count ? mo->box_count[i] : -1) : 1;
        }
        MPI_Allgather(&mine, 6, MPI_INT64_T, boxes, 6, MPI_INT64_T, comm);
        if (tc__mpi_boxes_check(boxes, size, p->nd, p->N, msg, sizeof msg)) {
            st = TC_ERR_INVALID_ARGUMENT;
            goto agree;
        }
        p->grid[0] = p->grid[1] = p->grid[2] = 0;
    } else {
        if (mo && (mo->grid[0] || mo->grid[1] || mo->grid[2])) {
            long prod = 1;
            for (int i = 0; i < 3; i++) {
                p->grid[i] = mo->grid[i] ? mo->grid[i] : 1;
                prod *= p->grid[i];
                if (p->grid[i] < 1 || p->grid[i] > p->N[i]) {
                    st = TC_ERR_INVALID_ARGUMENT;
                    snprintf(msg, sizeof msg,
                             "mpi plan: grid %dx%dx%d: axis %d has %lld elements for %d ranks",
                             mo->grid[0], mo->grid[1], mo->grid[2], i, (long long)p->N[i],
                             p->grid[i]);
                    goto agree;
                }
            }
            if (prod != size) {
                st = TC_ERR_INVALID_ARGUMENT;
                snprintf(msg, sizeof msg, "mpi plan: grid %dx%dx%d has %ld ranks, the "
                         "communicator %d", p->grid[0], p->grid[1], p->grid[2], prod, size);
                goto agree;
            }
        } else if (tc__mpi_grid_choose(p->grid, size, p->nd, p->N, p->before, p->after)) {
            st = TC_ERR_NOT_APPLICABLE;
            snprintf(msg, sizeof msg, "mpi plan: %d ranks do not fit a %lldx%lldx%lld array",
                     size, (long long)p->N[0], (long long)p->N[1], (long long)p->N[2]);
            goto agree;
        }
        for (int r = 0; r < size; r++) tc__mpi_grid_box(&boxes[r], p->grid, p->N, r);
    }
    p->own = boxes[rank];
    if (tc__mpi_ext_of(&p->x, &p->own, p->N, p->before, p->after, desc->mode)) {
        st = TC_ERR_NOT_APPLICABLE;
        snprintf(msg, sizeof msg, "mpi plan: a wrap mask of %lldx%lldx%lld needs more than %d "
                 "periodic images of the array", (long long)desc->mask_shape[0],
                 (long long)(p->nd > 1 ? desc->mask_shape[1] : 1),
                 (long long)(p->nd > 2 ? desc->mask_shape[2] : 1), TC_MPI_MAXRUN);
        goto agree;
    }
    /* ext index maps (mode extension at the global edges) */
    for (int k = 0; k < 3; k++) {
        p->map[k] = malloc(sizeof(int64_t) * (size_t)p->x.xn[k]);
        p->oob[k] = malloc((size_t)p->x.xn[k]);
        if (!p->map[k] || !p->oob[k]) {
            st = TC_ERR_OUT_OF_MEMORY;
            snprintf(msg, sizeof msg, "mpi plan: out of memory");
            goto agree;
        }
        for (int64_t e = 0; e < p->x.xn[k]; e++) {
            int64_t g = p->x.xlo[k] + e;
            int out = (g < 0 || g >= p->N[k]) && desc->mode != TC_MODE_WRAP;
            p->oob[k][e] = (char)out;
            if (!out) p->map[k][e] = e;
            else {
                int64_t s = tc__mpi_bidx(g, p->N[k], desc->mode);
                p->map[k][e] = s < 0 ? -1 : s - p->x.xlo[k];
            }
        }
    }
    if (build_messages(p, boxes, msg, sizeof msg)) {
        st = TC_ERR_OUT_OF_MEMORY;
        goto agree;
    }
    int interior;
    plan_pieces(p, &interior);
    st = tc_context_create(&ctx);
    if (st == TC_OK) st = tc_context_set_threads(ctx, choose_threads(comm, mo));
    if (st) {
        snprintf(msg, sizeof msg, "mpi plan: %s", tc_last_error());
        goto agree;
    }
    set_device(p, ctx, mo, msg, sizeof msg, &st);
    if (st) goto agree;
    {
        /* rank 0 picks the algorithm (on its box), everyone uses it */
        char algo[64] = "";
        if (rank == 0) {
            tc_plan *probe = NULL;
            if (local_plan(&probe, p, p->own.n, mask, opt, ctx, NULL) == TC_OK)
                snprintf(algo, sizeof algo, "%s", tc_plan_algorithm(probe));
            tc_plan_destroy(probe);
        }
        MPI_Bcast(algo, (int)sizeof algo, MPI_CHAR, 0, comm);
        const char *a = algo[0] ? algo : NULL;
        if (interior) st = local_plan(&p->inner, p, p->own.n, mask, opt, ctx, a);
        size_t most = 1;
        for (int i = 0; i < p->npiece && st == TC_OK; i++) {
            st = local_plan(&p->pc[i].pl, p, p->pc[i].in.n, mask, opt, ctx, a);
            size_t v = (size_t)(p->pc[i].in.n[0] * p->pc[i].in.n[1] * p->pc[i].in.n[2]);
            if (v > most) most = v;
        }
        if (st) {
            snprintf(msg, sizeof msg, "mpi plan (rank %d): %s", rank, tc_last_error());
            goto agree;
        }
        size_t ev = (size_t)(p->x.xn[0] * p->x.xn[1] * p->x.xn[2]);
        if (p->npiece) {
            p->ext = malloc(ev * p->esize);
            p->pin = malloc(most * p->esize);
            p->pout = malloc(most * p->esize);
            if (!p->ext || !p->pin || !p->pout) {
                st = TC_ERR_OUT_OF_MEMORY;
                snprintf(msg, sizeof msg, "mpi plan: cannot allocate the halo buffers (%zu "
                         "elements)", ev);
                goto agree;
            }
        }
    }
agree:
    tc_context_destroy(ctx); /* plans keep what they need */
    free(boxes);
    st = mpi_agree(comm, st, msg, sizeof msg);
    if (st != TC_OK) {
        if (p) tc_mpi_plan_destroy(p); /* frees dup */
        else MPI_Comm_free(&dup);
        snprintf(tc_mpi_err, sizeof tc_mpi_err, "%s", msg);
        return st;
    }
    p->st.ranks = size;
    p->st.rows_first = p->own.lo[0];
    p->st.rows = p->own.n[0];
    p->st.halo_rows = p->x.split[0] ? (p->before[0] > p->after[0] ? p->before[0] : p->after[0])
                                    : 0;
    for (int i = 0; i < 3; i++) {
        p->st.grid[i] = p->grid[i];
        p->st.box_first[i] = p->own.lo[i];
        p->st.box_count[i] = p->own.n[i];
        p->st.halo_before[i] = p->x.split[i] ? p->before[i] : 0;
        p->st.halo_after[i] = p->x.split[i] ? p->after[i] : 0;
    }
    p->st.messages = p->nrecv + p->nsend;
    p->st.pieces = p->npiece;
    /* the exchange alone, once, for the hidden-fraction statistic */
    if (p->nrecv + p->nsend > 0 || p->size > 1) {
        size_t v = (size_t)(p->own.n[0] * p->own.n[1] * p->own.n[2]);
        void *tmp = calloc(v ? v : 1, p->esize);
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        int tot = p->nrecv + p->nsend;
        if (tmp && p->ext) {
            for (int i = 0; i < p->nrecv; i++)
                MPI_Irecv(p->ext, 1, p->types[i], p->peer[i], p->tag[i], comm, &p->req[i]);
            for (int i = p->nrecv; i < tot; i++)
                MPI_Isend(tmp, 1, p->types[i], p->peer[i], p->tag[i], comm, &p->req[i]);
            MPI_Waitall(tot, p->req, MPI_STATUSES_IGNORE);
        } else if (tot) { /* sends only (no pieces): still pair them */
            for (int i = p->nrecv; i < tot; i++)
                MPI_Isend(tmp, 1, p->types[i], p->peer[i], p->tag[i], comm, &p->req[i]);
            MPI_Waitall(tot - p->nrecv, p->req + p->nrecv, MPI_STATUSES_IGNORE);
        }
        p->st.exchange_s = MPI_Wtime() - t0;
        free(tmp);
    }
    *plan = p;
    return TC_OK;
}

tc_status tc_mpi_local_box(const tc_mpi_plan *p, int64_t first[3], int64_t count[3]) {
    if (!p || !first || !count) return TC_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < 3; i++) {
        first[i] = p->own.lo[i];
        count[i] = p->own.n[i];
    }
    return TC_OK;
}

tc_status tc_mpi_local_rows(const tc_mpi_plan *p, int64_t *first, int64_t *count) {
    if (!p || !first || !count) return TC_ERR_INVALID_ARGUMENT;
    for (int i = 1; i < 3; i++)
        if (p->own.n[i] != p->N[i]) return TC_ERR_UNSUPPORTED; /* a box: tc_mpi_local_box */
    *first = p->own.lo[0];
    *count = p->own.n[0];
    return TC_OK;
}

const char *tc_mpi_plan_algorithm(const tc_mpi_plan *p) {
    if (!p) return "";
    if (p->inner) return tc_plan_algorithm(p->inner);
    return p->npiece ? tc_plan_algorithm(p->pc[0].pl) : "";
}

tc_status tc_mpi_plan_stats(const tc_mpi_plan *p, tc_mpi_stats *s) {
    if (!p || !s) return TC_ERR_INVALID_ARGUMENT;
    *s = p->st;
    return TC_OK;
}

/* The mode's extension inside a piece's input (after the exchange). */
static void fill_edges(tc_mpi_plan *p, const piece *c) {
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
                    if (p->esize == 4) ((float *)p->ext)[at] = (float)p->d.cval;
                    else ((double *)p->ext)[at] = p->d.cval;
                } else {
                    size_t from = (size_t)((a * xn[1] + b) * xn[2] + d);
                    memcpy((char *)p->ext + at * p->esize, (char *)p->ext + from * p->esize,
                           p->esize);
                }
            }
        }
}

tc_status tc_mpi_execute_filter(tc_mpi_plan *p, void *y, const void *x) {
    if (!p || !y || !x) return TC_ERR_INVALID_ARGUMENT;
    tc_status st = TC_OK;
    double t0 = MPI_Wtime(), tw = 0;
    int tot = p->nrecv + p->nsend;
    for (int i = 0; i < p->nrecv; i++)
        MPI_Irecv(p->ext, 1, p->types[i], p->peer[i], p->tag[i], p->comm, &p->req[i]);
    for (int i = p->nrecv; i < tot; i++)
        MPI_Isend(x, 1, p->types[i], p->peer[i], p->tag[i], p->comm, &p->req[i]);
    /* own elements the pieces read, and the self copies (wrap onto itself) */
    int64_t olo[3];
    for (int k = 0; k < 3; k++) olo[k] = p->own.lo[k] - p->x.xlo[k];
    for (int i = 0; i < p->npiece; i++) {
        const piece *c = &p->pc[i];
        if (!c->src.n[0] || !c->src.n[1] || !c->src.n[2]) continue;
        int64_t slo[3];
        for (int k = 0; k < 3; k++) slo[k] = c->src.lo[k] - olo[k];
        tc__mpi_copy_box(p->ext, p->x.xn, c->src.lo, x, p->own.n, slo, c->src.n, p->esize);
    }
    for (int i = 0; i < p->ncopy; i++)
        tc__mpi_copy_box(p->ext, p->x.xn, p->copies[i].dlo, x, p->own.n, p->copies[i].slo,
                         p->copies[i].n, p->esize);
    /* the interior while the halos travel */
    if (p->inner) st = tc_execute_filter(p->inner, y, x, NULL);
    double a = MPI_Wtime();
    MPI_Waitall(tot, p->req, MPI_STATUSES_IGNORE);
    tw = MPI_Wtime() - a;
    /* the rims */
    for (int i = 0; i < p->npiece && st == TC_OK; i++) {
        const piece *c = &p->pc[i];
        fill_edges(p, c);
        static const int64_t zero[3] = {0, 0, 0};
        tc__mpi_copy_box(p->pin, c->in.n, zero, p->ext, p->x.xn, c->in.lo, c->in.n, p->esize);
        st = tc_execute_filter(c->pl, p->pout, p->pin, NULL);
        if (st) break;
        int64_t from[3], to[3];
        for (int k = 0; k < 3; k++) {
            from[k] = c->out.lo[k] - (c->in.lo[k] + p->x.xlo[k]);
            to[k] = c->out.lo[k] - p->own.lo[k];
        }
        tc__mpi_copy_box(y, p->own.n, to, p->pout, c->in.n, from, c->out.n, p->esize);
    }
    p->st.overlapped = p->inner != NULL && tot > 0;
    p->st.wait_s = tw;
    p->st.compute_s = MPI_Wtime() - t0 - tw;
    p->st.hidden = p->st.exchange_s > 0 ? 1.0 - tw / p->st.exchange_s : 1.0;
    if (p->st.hidden < 0) p->st.hidden = 0;
    if (p->st.hidden > 1) p->st.hidden = 1;
    return mpi_agree(p->comm, st, NULL, 0);
}
