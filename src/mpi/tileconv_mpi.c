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
 *   staging   a message whose box is not one contiguous run on its side
 *             is packed into (sends) or received through (receives) a
 *             dense buffer, so every transfer is contiguous (Open MPI's
 *             receiver-driven single copy: no fragment pipeline that needs
 *             the peer inside an MPI call).
 *   own       a plan on the rank's box, run on x_local straight into
 *             y_local while the halos travel; its outputs whose windows lie
 *             inside the box are final (the "interior"). When there are
 *             messages it runs in slabs along axis 0 (plan_chunks), with
 *             MPI_Testall between them: Open MPI moves a message only inside
 *             MPI calls. The receives are waited for before the rims, the
 *             sends after them.
 *   pieces    the rest of the box peeled axis by axis into at most two
 *             slabs per split axis; each piece's input (the piece widened
 *             by the reach) is copied out of ext (own rows, received
 *             halos, and at the global edges the mode's extension filled
 *             here) into a dense buffer, filtered by a plan of that shape,
 *             and the piece's outputs copied into y_local. A box too thin
 *             for an interior is one piece, computed after the wait.
 * (The message lists, pieces and edge fill live in mpi_halo.c.)
 * Every plan uses the same algorithm (rank 0's choice), so each output's
 * arithmetic equals the one-process run's for the position-independent
 * (direct, separable) algorithms.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include "tileconv_mpi.h"
#include "../core/knobs.h" /* the environment knobs */

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if TC_MPI_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "mpi_plan.h"

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

/* A checkpoint before a collective: every rank learns the worst status so
 * far and its message (mpi_agree), so that a rank that failed on its own
 * does not skip a collective the others enter. 1: every rank is fine. */
static int all_ok(MPI_Comm comm, tc_status *st, char *msg, size_t n) {
    *st = mpi_agree(comm, *st, msg, n);
    return *st == TC_OK;
}

#if TC_MPI_HAVE_CUDA
static int dev_setup(tc_mpi_plan *p, size_t ext_elems);
#endif

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
    tc__mpi_prog_stop(p); /* idle between executes: no MPI call in flight */
    tc__mpi_ipc_free(p, p->ipc); /* p->ipc: the same on every rank */
    if (p->comm != MPI_COMM_NULL) MPI_Comm_free(&p->comm);
    tc_plan_destroy(p->inner);
    for (int k = 0; k < p->nchunk; k++) {
        int dup = 0; /* chunks of the same shape share a plan */
        for (int j = 0; j < k; j++) dup |= p->cpl[j] == p->cpl[k];
        if (!dup) tc_plan_destroy(p->cpl[k]);
    }
    free(p->save);
    for (int i = 0; i < p->npiece; i++) tc_plan_destroy(p->pc[i].pl);
    if (p->types)
        for (int i = 0; i < p->nrecv + p->nsend; i++)
            if (p->types[i] != MPI_DATATYPE_NULL) MPI_Type_free(&p->types[i]);
    free(p->types);
    free(p->peer);
    free(p->tag);
    free(p->req);
    free(p->copies);
#if TC_MPI_HAVE_CUDA
    if (p->gpu) {
        /* the pinned buffers (dev_setup) are the CUDA runtime's */
        int tot = p->nrecv + p->nsend;
        if (p->pinned) {
            for (int i = 0; i < tot; i++)
                if (p->pinned[i]) {
                    cudaFreeHost(p->stage[i]);
                    p->stage[i] = NULL;
                }
            if (p->pinned[tot]) {
                cudaFreeHost(p->ext);
                p->ext = NULL;
            }
        }
        if (p->dmem) cudaFree(p->dmem);
        for (int i = 0; i < 4; i++)
            if (p->ev[i]) cudaEventDestroy((cudaEvent_t)p->ev[i]);
        for (int i = 0; i < 6; i++)
            if (p->tev[i]) cudaEventDestroy((cudaEvent_t)p->tev[i]);
        if (p->side) cudaStreamDestroy((cudaStream_t)p->side);
    }
#endif
    if (p->stage)
        for (int i = 0; i < p->nrecv + p->nsend; i++) free(p->stage[i]);
    free(p->stage);
    free(p->geo);
    for (int i = 0; i < 3; i++) {
        free(p->map[i]);
        free(p->oob[i]);
    }
    free(p->pinned);
    free(p->ext);
    free(p->pin);
    free(p->pout);
    free(p);
}

/* ---- planning ---- */

/* The interior's chunks along axis 0 (mpi_plan.h): nchunk = 1 when there is
 * nothing to overlap, no interior, or axis 0 is not split and the mode is
 * wrap (a chunk at the box's edge would wrap onto its own rows instead of
 * the box's). Along an unsplit axis 0, and at an end rank's global edge
 * (which has no rim piece), the edge chunks see the global edge like the
 * whole box does, provided they hold the rows the mode's extension reads
 * (more than the reach). Every chunk recomputes the reach rows of its
 * neighbours: (nchunk - 1) (before + after) rows in all, so the default
 * keeps that under ~5% of the box (TILECONV_MPI_CHUNKS=k forces k, as far as
 * the rows allow). */
static void plan_chunks(tc_mpi_plan *p, int interior) {
    p->nchunk = 1;
    int64_t n0 = p->own.n[0], b = p->before[0], a = p->after[0];
    if (!interior || p->nrecv + p->nsend == 0) return;
    if (!p->x.split[0] && p->d.mode == TC_MODE_WRAP) return;
    const char *env = tc__knob_get(TC__KNOB_MPI_CHUNKS);
    /* with a progress thread the slabs have no purpose (nothing to test
     * between them), and on GPU ranks each slab pays its own host staging
     * (two H100s, weak 192^3 on host arrays: one piece faster
     * than 3 slabs in 6 of 9 rounds, geomean 1.10x): one interior plan
     * unless forced */
    long k = env && atol(env) > 0 ? atol(env)
             : p->prog || p->gpu  ? 1
                                  : 1 + (long)(0.05 * (double)n0 /
                                               (double)(b + a > 0 ? b + a : 1));
    if (k > TC_MPI_MAXCHUNK) k = TC_MPI_MAXCHUNK;
    /* a chunk at a global edge without a rim piece (unsplit axis 0, or an
     * end rank's edge side, mpi_halo.c) extends the array there itself */
    int64_t need = p->x.split[0] && tc__mpi_rim_needed(p, 0, 0) && tc__mpi_rim_needed(p, 0, 1)
                       ? 1 : (b > a ? b : a) + 1;
    for (; k > 1; k--) {
        int64_t least = n0;
        for (long i = 0; i < k; i++) {
            int64_t r = n0 * (i + 1) / k - n0 * i / k;
            if (r < least) least = r;
        }
        if (least >= need) break;
    }
    p->nchunk = (int)k;
    for (long i = 0; i <= k; i++) p->cq[i] = n0 * i / k;
    for (long i = 0; i < k; i++) {
        p->cs[i] = p->cq[i] - b > 0 ? p->cq[i] - b : 0;
        p->ce[i] = p->cq[i + 1] + a < n0 ? p->cq[i + 1] + a : n0;
    }
}

/* This rank's place among the ranks of comm on its node
 * (MPI_COMM_TYPE_SHARED): its rank there and their number (left as they
 * were if the split fails). Collective over comm. */
void tc__mpi_node_place(MPI_Comm comm, int *rank, int *size) {
    MPI_Comm node;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return;
    MPI_Comm_rank(node, rank);
    MPI_Comm_size(node, size);
    MPI_Comm_free(&node);
}

static void set_device(tc_mpi_plan *p, tc_context *ctx, const tc_mpi_options *mo, char *msg,
                       size_t n, tc_status *st) {
    if (!mo || mo->backend == TC_BACKEND_CPU) {
        /* the CPU, also in a CUDA build on a machine with a GPU (the
         * context's default, auto, would plan on the GPU) */
        *st = tc_context_set_backend(ctx, TC_BACKEND_CPU);
        if (*st) snprintf(msg, n, "mpi plan: %s", tc_last_error());
        return;
    }
    if (mo->backend != TC_BACKEND_CUDA) return;
    /* collective: before any rank can leave for want of a device */
    int local = 0, nsize = 0;
    tc__mpi_node_place(p->comm, &local, &nsize);
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
    p->gpu = 1;
    p->dev = local % devs;
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

/* Whether a progress thread would have a CPU of its own: this rank may use
 * more CPUs than its compute threads, and the node's ranks together (the
 * union of their CPU sets) more than all their compute threads. So one
 * rank per core (mpirun --bind-to core, one thread each) has none, two
 * cores per rank (--map-by slot:PE=2) have one, and unbound ranks that
 * split the node's CPUs among their threads (the default) have none.
 * Collective over comm. */
static int spare_cpu(MPI_Comm comm, int threads) {
    cpu_set_t mine, all;
    CPU_ZERO(&mine);
    CPU_ZERO(&all);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        for (int c = 0; c < tc_cpu_count() && c < CPU_SETSIZE; c++) CPU_SET(c, &mine);
    MPI_Comm node;
    int local = 1;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &local);
        MPI_Allreduce(&mine, &all, (int)sizeof mine, MPI_BYTE, MPI_BOR, node);
        MPI_Comm_free(&node);
    } else {
        all = mine;
    }
    return CPU_COUNT(&mine) > threads && CPU_COUNT(&all) > (long)local * threads;
}

/* Whether this plan gets a progress thread (tc_mpi_options.progress): 1 on,
 * 0 off, -1 with a message (forced on at a thread level that forbids it).
 * The default: on when the thread level allows it and the thread has a CPU
 * of its own (spare_cpu). Collective over comm (on every rank, whatever
 * its options). */
static int want_progress(MPI_Comm comm, int threads, const tc_mpi_options *mo, char *msg,
                         size_t n) {
    int spare = spare_cpu(comm, threads);
    int want = mo ? mo->progress : 0;
    const char *how = "tc_mpi_options.progress = 1";
    if (want == 0) {
        const char *env = tc__knob_get(TC__KNOB_MPI_PROGRESS);
        if (env && env[0]) {
            want = atoi(env) > 0 ? 1 : -1;
            how = "TILECONV_MPI_PROGRESS=1";
        }
    }
    if (want < 0) return 0;
    if (want == 0 && !spare) return 0;
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    int ok = level == MPI_THREAD_SERIALIZED || level == MPI_THREAD_MULTIPLE;
    if (want > 0 && !ok) {
        snprintf(msg, n, "mpi plan: %s asks for a progress thread, but MPI was initialised with "
                 "thread level %s (it needs MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE: "
                 "MPI_Init_thread)", how,
                 level == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE" : "MPI_THREAD_FUNNELED");
        return -1;
    }
    return ok;
}

static int choose_threads(MPI_Comm comm, const tc_mpi_options *mo) {
    if (mo && mo->threads > 0) return mo->threads;
    const char *env = tc__knob_get(TC__KNOB_MPI_THREADS);
    if (env && atoi(env) > 0) return atoi(env);
    /* the node's CPUs shared by its ranks (each rank's pool would
     * otherwise take every CPU) */
    int nrank = 0, local = 1;
    tc__mpi_node_place(comm, &nrank, &local);
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
        goto ckA;
    }
    p->comm = dup;
    p->rank = rank;
    p->size = size;
    if (!desc || !mask) {
        st = TC_ERR_INVALID_ARGUMENT;
        snprintf(msg, sizeof msg, "mpi plan: %s is NULL", !desc ? "description" : "mask");
        goto ckA;
    }
    if (mo && mo->struct_size != sizeof *mo) {
        st = TC_ERR_INVALID_ARGUMENT;
        snprintf(msg, sizeof msg, "mpi plan: options not set up by tc_mpi_options_init");
        goto ckA;
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
        goto ckA;
    }
    for (int i = 0; i < desc->ndim; i++) {
        if (desc->in_strides[i] || desc->out_strides[i]) {
            st = TC_ERR_UNSUPPORTED;
            snprintf(msg, sizeof msg, "mpi plan: strided arrays are not supported (axis %d)", i);
            goto ckA;
        }
        if (desc->shape[i] < 1 || desc->shape[i] > INT_MAX / 2 || desc->mask_shape[i] < 1) {
            st = TC_ERR_INVALID_ARGUMENT;
            snprintf(msg, sizeof msg, "mpi plan: shape[%d] = %lld, mask_shape[%d] = %lld", i,
                     (long long)desc->shape[i], i, (long long)desc->mask_shape[i]);
            goto ckA;
        }
    }
    p->esize = desc->dtype == TC_FLOAT64 ? 8 : 4;
    p->etype = desc->dtype == TC_FLOAT64 ? MPI_DOUBLE : MPI_FLOAT;
    for (int i = 0; i < 3; i++) p->N[i] = i < p->nd ? desc->shape[i] : 1;
    tc__mpi_reach(desc, p->before, p->after);
ckA: /* before the first collective: a rank that failed above must not
      * leave the others in it (nor below: a checkpoint before each) */
    if (!all_ok(comm, &st, msg, sizeof msg)) goto agreed;
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
        goto ckB;
    }
ckB:
    if (!all_ok(comm, &st, msg, sizeof msg)) goto agreed;
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
        goto ckC;
    }
    /* ext index maps (mode extension at the global edges) */
    for (int k = 0; k < 3; k++) {
        p->map[k] = malloc(sizeof(int64_t) * (size_t)p->x.xn[k]);
        p->oob[k] = malloc((size_t)p->x.xn[k]);
        if (!p->map[k] || !p->oob[k]) {
            st = TC_ERR_OUT_OF_MEMORY;
            snprintf(msg, sizeof msg, "mpi plan: out of memory");
            goto ckC;
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
    if (tc__mpi_build_messages(p, boxes, msg, sizeof msg)) {
        st = TC_ERR_OUT_OF_MEMORY;
        goto ckC;
    }
ckC:
    if (!all_ok(comm, &st, msg, sizeof msg)) goto agreed;
    int interior, nthreads = 1;
    tc__mpi_plan_pieces(p, &interior);
    {
        nthreads = choose_threads(comm, mo);
        int want = want_progress(comm, nthreads, mo, msg, sizeof msg);
        if (want < 0) {
            st = TC_ERR_INVALID_ARGUMENT;
            goto ckD;
        }
        /* a thread only when there are messages to drive (created before
         * the chunks are planned: with one, the interior is one plan) */
        if (want && p->nrecv + p->nsend > 0 && tc__mpi_prog_start(p) != 0 &&
            mo && mo->progress > 0) {
            st = TC_ERR_OUT_OF_MEMORY;
            snprintf(msg, sizeof msg, "mpi plan: rank %d cannot start its progress thread",
                     rank);
            goto ckD;
        }
    }
    st = tc_context_create(&ctx);
    if (st == TC_OK) st = tc_context_set_threads(ctx, nthreads);
    if (st) {
        snprintf(msg, sizeof msg, "mpi plan: %s", tc_last_error());
        goto ckD;
    }
ckD:
    if (!all_ok(comm, &st, msg, sizeof msg)) goto agreed;
    set_device(p, ctx, mo, msg, sizeof msg, &st);
    if (!all_ok(comm, &st, msg, sizeof msg)) goto agreed; /* a rank without its device */
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
        plan_chunks(p, interior);
        for (int k = 0; k < p->nchunk && p->nchunk > 1 && st == TC_OK; k++) {
            for (int j = 0; j < k && !p->cpl[k]; j++)
                if (p->ce[j] - p->cs[j] == p->ce[k] - p->cs[k]) p->cpl[k] = p->cpl[j];
            int64_t n[3] = {p->ce[k] - p->cs[k], p->own.n[1], p->own.n[2]};
            if (!p->cpl[k]) st = local_plan(&p->cpl[k], p, n, mask, opt, ctx, a);
        }
        if (st == TC_OK && p->nchunk > 1 && p->before[0] > 0) {
            p->save = malloc((size_t)(p->before[0] * p->own.n[1] * p->own.n[2]) * p->esize);
            if (!p->save) st = TC_ERR_OUT_OF_MEMORY;
        }
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
#if TC_MPI_HAVE_CUDA
        if (p->gpu) p->dev_ok = dev_setup(p, ev) == 0;
#endif
    }
agree:
    st = mpi_agree(comm, st, msg, sizeof msg);
agreed:
    tc_context_destroy(ctx); /* plans keep what they need */
    free(boxes);
    if (st != TC_OK) {
        if (p) tc_mpi_plan_destroy(p); /* frees dup */
        else MPI_Comm_free(&dup);
        snprintf(tc_mpi_err, sizeof tc_mpi_err, "%s", msg);
        return st;
    }
    tc__mpi_ipc_setup(p); /* collective: every rank planned */
    p->st.ipc = p->ipc;
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
    p->st.chunks = p->nchunk;
    p->st.progress = p->prog != NULL;
    /* the exchange alone, for the hidden-fraction statistic: the fastest of
     * eight rounds (the first one also pays the buffers' first touch; on a
     * busy machine a round can include a rank's descheduling) */
    if (p->size > 1) {
        size_t v = (size_t)(p->own.n[0] * p->own.n[1] * p->own.n[2]);
        /* sent from written memory (calloc's untouched pages would all
         * read one zero page: a copy far cheaper than from real data) */
        void *tmp = malloc((v ? v : 1) * p->esize);
        if (tmp) memset(tmp, 0x3c, (v ? v : 1) * p->esize);
        int have = tmp != NULL, all = 0, tot = p->nrecv + p->nsend;
        MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, comm);
        for (int round = 0; round < 8 && all; round++) {
            MPI_Barrier(comm);
            double t0 = MPI_Wtime();
            tc__mpi_post(p, tmp); /* receives exist only with pieces (ext) */
            MPI_Waitall(tot, p->req, MPI_STATUSES_IGNORE);
            tc__mpi_unpack(p);
            double t = MPI_Wtime() - t0;
            if (round == 0 || t < p->st.exchange_s) p->st.exchange_s = t;
        }
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

static double now(void) { return tc__mpi_now(); }

/* The statistics (tileconv_mpi.h, docs/mpi.md): ex sums the calling
 * thread's time on the exchange: without a progress thread its MPI calls
 * (posting, the tests between chunks, the two waits) and the packing and
 * unpacking; with one, handing the exchange over and the two waits for it.
 * hidden compares ex with the exchange alone; hidden_cpu adds the progress
 * thread's own work done beside the compute. tdone: the end of the call
 * that first saw every receive complete. */

#if TC_MPI_HAVE_CUDA
/* A device array (cudaMemoryTypeDevice; managed memory is host-readable and
 * takes the host path). */
static int dev_ptr(const void *ptr) {
    struct cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, ptr) != cudaSuccess) {
        (void)cudaGetLastError(); /* a plain host pointer on older runtimes */
        return 0;
    }
    return at.type == cudaMemoryTypeDevice;
}

/* Copies the box n at slo of src (shape ss) to dlo of dst (shape ds) on
 * stream st. Whole rows on both sides merge into one strided 2D copy (one
 * plain copy when the planes are whole too); otherwise one 3D copy. */
static cudaError_t dev_box(void *dst, const int64_t ds[3], const int64_t dlo[3], const void *src,
                           const int64_t ss[3], const int64_t slo[3], const int64_t n[3],
                           size_t es, enum cudaMemcpyKind kind, cudaStream_t st) {
    if (!n[0] || !n[1] || !n[2]) return cudaSuccess;
    if (n[2] == ss[2] && n[2] == ds[2]) {
        size_t sp = (size_t)(ss[1] * ss[2]) * es, dp = (size_t)(ds[1] * ds[2]) * es;
        const char *s0 = (const char *)src + (size_t)slo[0] * sp + (size_t)(slo[1] * ss[2]) * es;
        char *d0 = (char *)dst + (size_t)dlo[0] * dp + (size_t)(dlo[1] * ds[2]) * es;
        size_t w = (size_t)(n[1] * n[2]) * es;
        if (n[0] == 1 || (w == sp && w == dp))
            return cudaMemcpyAsync(d0, s0, w * (size_t)n[0], kind, st);
        return cudaMemcpy2DAsync(d0, dp, s0, sp, w, (size_t)n[0], kind, st);
    }
    struct cudaMemcpy3DParms m;
    memset(&m, 0, sizeof m);
    m.srcPtr.ptr = (void *)src;
    m.srcPtr.pitch = m.srcPtr.xsize = (size_t)ss[2] * es;
    m.srcPtr.ysize = (size_t)ss[1];
    m.srcPos.x = (size_t)slo[2] * es;
    m.srcPos.y = (size_t)slo[1];
    m.srcPos.z = (size_t)slo[0];
    m.dstPtr.ptr = dst;
    m.dstPtr.pitch = m.dstPtr.xsize = (size_t)ds[2] * es;
    m.dstPtr.ysize = (size_t)ds[1];
    m.dstPos.x = (size_t)dlo[2] * es;
    m.dstPos.y = (size_t)dlo[1];
    m.dstPos.z = (size_t)dlo[0];
    m.extent.width = (size_t)n[2] * es;
    m.extent.height = (size_t)n[1];
    m.extent.depth = (size_t)n[0];
    m.kind = kind;
    return cudaMemcpy3DAsync(&m, st);
}

/* A pinned replacement for the fresh host buffer *buf (bytes): 1 when it
 * was swapped, 0 when it stays pageable (pinning is a speed-up only). Not
 * cudaHostRegister: registering part of a page that other allocations
 * share makes later copies from those allocations fail. */
static unsigned char pin_swap(void **buf, size_t bytes) {
    void *q = NULL;
    if (cudaHostAlloc(&q, bytes ? bytes : 1, cudaHostAllocDefault) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    free(*buf);
    *buf = q;
    return 1;
}

/* GPU ranks, at plan time (on the plan's device): what device arrays need
 * (mpi_plan.h): every send staged, the stages and ext pinned where the
 * runtime allows, the pieces' device buffers, the side stream and its
 * events. 0, or -1 (device arrays will be refused). */
static int dev_setup(tc_mpi_plan *p, size_t ext_elems) {
    int tot = p->nrecv + p->nsend;
    for (int i = p->nrecv; i < tot; i++)
        if (!p->stage[i]) {
            p->stage[i] = malloc((size_t)(p->geo[i][3] * p->geo[i][4] * p->geo[i][5]) * p->esize);
            if (!p->stage[i]) return -1;
        }
    p->pinned = calloc((size_t)tot + 1, 1);
    if (!p->pinned) return -1;
    for (int i = 0; i < tot; i++)
        if (p->stage[i])
            p->pinned[i] =
                pin_swap(&p->stage[i],
                         (size_t)(p->geo[i][3] * p->geo[i][4] * p->geo[i][5]) * p->esize);
    if (p->ext) p->pinned[tot] = pin_swap(&p->ext, ext_elems * p->esize);
    /* a piece whose input lies inside the own box along axes 1 and 2 (as
     * every piece of a slab decomposition does) is assembled on the device
     * row by row along axis 0: own rows (directly or through the mode's
     * extension) copied device to device from x, received rows and cval
     * rows up from ext (dev_rows); others come down, are filled on the host
     * and go up whole */
    for (int i = 0; i < p->npiece; i++) {
        const piece *pc = &p->pc[i];
        int ok = 1;
        for (int k = 1; k < 3; k++) {
            int64_t olo = p->own.lo[k] - p->x.xlo[k];
            ok &= pc->in.lo[k] >= olo && pc->in.lo[k] + pc->in.n[k] <= olo + p->own.n[k];
        }
        p->pc[i].rows = ok;
    }
    size_t total = 0, off[TC_MPI_MAXPIECE];
    for (int i = 0; i < p->npiece; i++) {
        off[i] = total;
        size_t v = (size_t)(p->pc[i].in.n[0] * p->pc[i].in.n[1] * p->pc[i].in.n[2]) * p->esize;
        total += 2 * ((v + 255) / 256 * 256);
    }
    if (total && cudaMalloc(&p->dmem, total) != cudaSuccess) {
        p->dmem = NULL;
        (void)cudaGetLastError();
        return -1;
    }
    for (int i = 0; i < p->npiece; i++) {
        size_t v = (size_t)(p->pc[i].in.n[0] * p->pc[i].in.n[1] * p->pc[i].in.n[2]) * p->esize;
        p->dpin[i] = (char *)p->dmem + off[i];
        p->dpout[i] = (char *)p->dmem + off[i] + (v + 255) / 256 * 256;
    }
    /* the side stream at the device's highest priority: its copies and
     * the rims' kernels get SMs as the interior's blocks retire, ahead of
     * the interior's blocks not yet dispatched */
    int least = 0, greatest = 0;
    if (cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess) greatest = 0;
    cudaStream_t side;
    if (cudaStreamCreateWithPriority(&side, cudaStreamNonBlocking, greatest) != cudaSuccess)
        return -1;
    p->side = side;
    for (int i = 0; i < p->npiece; i++)
        if (tc_plan_set_cuda_stream(p->pc[i].pl, side) != TC_OK) return -1;
    for (int i = 0; i < 4; i++) {
        cudaEvent_t e;
        if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) return -1;
        p->ev[i] = e;
    }
    const char *tr = tc__knob_get(TC__KNOB_MPI_TRACE);
    p->trace = tr && tr[0] == '1';
    for (int i = 0; i < 6 && p->trace; i++) {
        cudaEvent_t e;
        if (cudaEventCreate(&e) != cudaSuccess) return -1;
        p->tev[i] = e;
    }
    return 0;
}

/* TILECONV_MPI_TRACE=1: event tev[i] recorded on stream s */
static void trace_ev(tc_mpi_plan *p, int i, cudaStream_t s) {
    if (p->trace) cudaEventRecord((cudaEvent_t)p->tev[i], s);
}

/* ... and one line per execute: the GPU's times from tev[0], the host's
 * from the call's start (milliseconds) */
static void trace_line(tc_mpi_plan *p, double t0) {
    if (!p->trace) return;
    float g[6] = {0};
    for (int i = 1; i < 6; i++)
        if (cudaEventElapsedTime(&g[i], (cudaEvent_t)p->tev[0], (cudaEvent_t)p->tev[i]) !=
            cudaSuccess)
            g[i] = -1;
    fprintf(stderr,
            "mpi-trace rank %d: host down %.3f recv %.3f rims-enqueued %.3f end %.3f | gpu "
            "sends-down %.3f interior-end %.3f inputs-up %.3f pieces-done %.3f end %.3f ms\n",
            p->rank, 1e3 * (p->th[0] - t0), 1e3 * (p->th[1] - t0), 1e3 * (p->th[2] - t0),
            1e3 * (p->th[3] - t0), g[1], g[2], g[3], g[4], g[5]);
}

/* A rows piece's input (dev_setup), along axis 0 of ext: row r reads ext
 * row src(r) = r, or the mode's map where r lies outside the array (-1:
 * cval). Rows whose source is an own row are copied from x (device to
 * device; up = 0, before the exchange); the others, received rows and cval
 * rows (filled in ext here), from ext (host to device; up = 1, after it),
 * or with the halos GPU to GPU the received rows from rbuf (device to
 * device). Runs of consecutive rows with consecutive sources of one kind
 * (and, from rbuf, consecutive there) are one copy. */
static cudaError_t dev_rows(tc_mpi_plan *p, int pi, const void *x, int up, cudaStream_t S) {
    const piece *pc = &p->pc[pi];
    const int64_t lo = pc->in.lo[0], nr = pc->in.n[0], olo0 = p->own.lo[0] - p->x.xlo[0];
    const int64_t rowb = p->x.xn[1] * p->x.xn[2] * (int64_t)p->esize; /* an ext row in rbuf */
    cudaError_t e = cudaSuccess;
    /* 0 own, 1 ext, 2 cval */
#define SRC(r) (p->oob[0][r] ? p->map[0][r] : (r))
#define KIND(s) ((s) < 0 ? 2 : (s) >= olo0 && (s) < olo0 + p->own.n[0] ? 0 : 1)
    for (int64_t r = lo; r < lo + nr && e == cudaSuccess;) {
        const int64_t s = SRC(r);
        const int kind = KIND(s);
        int64_t r2 = r + 1;
        const int fromr = kind == 1 && p->ipc_now;
        if (fromr && p->rowoff[s] < 0) return cudaErrorInvalidValue; /* not received: a bug */
        while (r2 < lo + nr && KIND(SRC(r2)) == kind && (kind == 2 || SRC(r2) == s + (r2 - r)) &&
               (!fromr || p->rowoff[SRC(r2)] == p->rowoff[s] + (r2 - r) * rowb))
            r2++;
        if ((kind == 0) == !up) {
            const int64_t cnt[3] = {r2 - r, pc->in.n[1], pc->in.n[2]};
            const int64_t dlo[3] = {r - lo, 0, 0};
            if (kind == 0) {
                const int64_t slo[3] = {s - olo0, pc->in.lo[1] - (p->own.lo[1] - p->x.xlo[1]),
                                        pc->in.lo[2] - (p->own.lo[2] - p->x.xlo[2])};
                e = dev_box(p->dpin[pi], pc->in.n, dlo, x, p->own.n, slo, cnt, p->esize,
                            cudaMemcpyDeviceToDevice, S);
            } else if (fromr) { /* received GPU to GPU: rows of rbuf */
                const int64_t bs[3] = {r2 - r, p->x.xn[1], p->x.xn[2]};
                const int64_t slo[3] = {0, pc->in.lo[1], pc->in.lo[2]};
                e = dev_box(p->dpin[pi], pc->in.n, dlo, (const char *)p->rbuf + p->rowoff[s], bs,
                            slo, cnt, p->esize, cudaMemcpyDeviceToDevice, S);
            } else {
                if (kind == 2) /* cval rows of ext, then up like the others */
                    for (int64_t q = r; q < r2; q++)
                        for (int64_t j = pc->in.lo[1]; j < pc->in.lo[1] + pc->in.n[1]; j++)
                            tc__mpi_fill_cval(p, (size_t)((q * p->x.xn[1] + j) * p->x.xn[2] + pc->in.lo[2]),
                                              (size_t)pc->in.n[2]);
                const int64_t slo[3] = {kind == 2 ? r : s, pc->in.lo[1], pc->in.lo[2]};
                e = dev_box(p->dpin[pi], pc->in.n, dlo, p->ext, p->x.xn, slo, cnt, p->esize,
                            cudaMemcpyHostToDevice, S);
            }
        }
        r = r2;
    }
#undef SRC
#undef KIND
    return e;
}

/* Device arrays, before the exchange: on the side stream the own elements
 * the host side reads copied down (the sends into their stages, the own
 * rows of pieces assembled on the host, the self copies into ext); on the
 * per-thread default stream (the core's) the slab pieces' own rows device
 * to device, then the interior. Returns after the copies down (not the
 * interior). */
static cudaError_t dev_begin(tc_mpi_plan *p, void *y, const void *x, tc_status *st) {
    cudaStream_t A = cudaStreamPerThread, S = (cudaStream_t)p->side;
    cudaEvent_t start = (cudaEvent_t)p->ev[0], down = (cudaEvent_t)p->ev[1];
    static const int64_t zero[3] = {0, 0, 0};
    const int64_t *n = p->own.n;
    trace_ev(p, 0, A);
    cudaError_t e = cudaEventRecord(start, A); /* x is ready behind this */
    if (e == cudaSuccess) e = cudaStreamWaitEvent(S, start, 0);
    /* the sends' copies are queued before the interior is launched: down
     * into their stages, or (IPC) straight into the receivers' buffers,
     * each a contiguous run of x (tc__mpi_ipc_setup) */
    for (int i = p->nrecv; i < p->nrecv + p->nsend && e == cudaSuccess; i++) {
        const int64_t *g = p->geo[i];
        if (p->ipc_now)
            e = cudaMemcpyAsync(p->ipc_dst[i],
                                (const char *)x + ((g[0] * n[1] + g[1]) * n[2] + g[2]) * (int64_t)p->esize,
                                (size_t)(g[3] * g[4] * g[5]) * p->esize, cudaMemcpyDefault, S);
        else
            e = dev_box(p->stage[i], g + 3, zero, x, n, g, g + 3, p->esize, cudaMemcpyDeviceToHost, S);
    }
    for (int i = 0; i < p->npiece && e == cudaSuccess; i++) {
        const piece *pc = &p->pc[i];
        if (pc->rows) continue; /* its own rows device to device, below */
        int64_t slo[3];
        for (int k = 0; k < 3; k++) slo[k] = pc->src.lo[k] - (p->own.lo[k] - p->x.xlo[k]);
        e = dev_box(p->ext, p->x.xn, pc->src.lo, x, n, slo, pc->src.n, p->esize,
                    cudaMemcpyDeviceToHost, S);
    }
    for (int i = 0; i < p->ncopy && e == cudaSuccess; i++)
        e = dev_box(p->ext, p->x.xn, p->copies[i].dlo, x, n, p->copies[i].slo, p->copies[i].n,
                    p->esize, cudaMemcpyDeviceToHost, S);
    if (e == cudaSuccess) e = cudaEventRecord(down, S);
    trace_ev(p, 1, S);
    /* the pieces' own rows device to device on the per-thread stream before
     * the interior: such a copy may run as a kernel, which would get SMs
     * only as the interior's blocks retire (traced: the rims' inputs then
     * go up only after the interior's end); the side stream
     * waits for them behind the sends' copies, which come down by DMA
     * meanwhile */
    int rows = 0;
    for (int i = 0; i < p->npiece && e == cudaSuccess; i++)
        if (p->pc[i].rows) {
            e = dev_rows(p, i, x, 0, A);
            rows = 1;
        }
    if (e == cudaSuccess && rows) e = cudaEventRecord((cudaEvent_t)p->ev[3], A);
    if (e == cudaSuccess && rows) e = cudaStreamWaitEvent(S, (cudaEvent_t)p->ev[3], 0);
    if (e == cudaSuccess && p->inner) *st = tc_execute_filter(p->inner, y, x, NULL);
    trace_ev(p, 2, A);
    if (e == cudaSuccess) e = cudaEventSynchronize(down);
    p->th[0] = now();
    return e;
}

/* Device arrays, after the receives: on the side stream, beside the
 * interior, each piece's input (filled in ext) up into dpin and the piece's
 * plan (the plans enqueue on the side stream, dev_setup); then on the
 * per-thread stream, behind the interior (which writes the whole box), the
 * pieces' outputs into y; and the wait for all of it. */
static cudaError_t dev_rims(tc_mpi_plan *p, void *y, tc_status *st) {
    cudaStream_t A = cudaStreamPerThread, S = (cudaStream_t)p->side;
    cudaEvent_t done = (cudaEvent_t)p->ev[2];
    static const int64_t zero[3] = {0, 0, 0};
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < p->npiece && e == cudaSuccess && *st == TC_OK; i++) {
        const piece *pc = &p->pc[i];
        if (pc->rows) {
            e = dev_rows(p, i, NULL, 1, S); /* received and cval rows, up */
        } else {
            tc__mpi_fill_edges(p, pc);
            e = dev_box(p->dpin[i], pc->in.n, zero, p->ext, p->x.xn, pc->in.lo, pc->in.n,
                        p->esize, cudaMemcpyHostToDevice, S);
        }
        if (i == p->npiece - 1) trace_ev(p, 3, S);
        if (e == cudaSuccess) *st = tc_execute_filter(pc->pl, p->dpout[i], p->dpin[i], NULL);
    }
    trace_ev(p, 4, S);
    if (e == cudaSuccess && p->npiece) e = cudaEventRecord(done, S);
    if (e == cudaSuccess && p->npiece) e = cudaStreamWaitEvent(A, done, 0);
    for (int i = 0; i < p->npiece && e == cudaSuccess && *st == TC_OK; i++) {
        const piece *pc = &p->pc[i];
        int64_t from[3], to[3];
        for (int k = 0; k < 3; k++) {
            from[k] = pc->out.lo[k] - (pc->in.lo[k] + p->x.xlo[k]);
            to[k] = pc->out.lo[k] - p->own.lo[k];
        }
        e = dev_box(y, p->own.n, to, p->dpout[i], pc->in.n, from, pc->out.n, p->esize,
                    cudaMemcpyDeviceToDevice, A);
    }
    trace_ev(p, 5, A);
    p->th[2] = now();
    cudaError_t e2 = cudaStreamSynchronize(A); /* y complete on return */
    cudaError_t e3 = cudaStreamSynchronize(S);
    return e != cudaSuccess ? e : e2 != cudaSuccess ? e2 : e3;
}
#endif

tc_status tc_mpi_execute_filter(tc_mpi_plan *p, void *y, const void *x) {
    if (!p) return TC_ERR_INVALID_ARGUMENT; /* no plan: no communicator to tell the others */
    tc_status st = TC_OK;
    char msg[300] = "";
    /* GPU ranks on device arrays: the interior on them in place, the
     * halos GPU to GPU (IPC) or through host stages, the rims on the
     * device */
    int dev = 0, dx = 0, dy = 0;
#if TC_MPI_HAVE_CUDA
    cudaError_t ce = cudaSuccess;
    if (p->gpu && x && y && cudaSetDevice(p->dev) == cudaSuccess) {
        dx = dev_ptr(x);
        dy = dev_ptr(y);
    }
#endif
    /* agreed first, on every plan: a rank cannot drop out of the exchange
     * alone (NULL arrays, host and device arrays mixed, no device set-up),
     * and the halos go GPU to GPU only when every rank has device arrays */
    int ag[2] = {!x || !y || dx != dy || (dx && !p->dev_ok), !dx};
    MPI_Allreduce(MPI_IN_PLACE, ag, 2, MPI_INT, MPI_MAX, p->comm);
    p->ipc_now = p->ipc && dx && !ag[1];
    if (ag[0]) {
        tc_status mine = TC_OK;
        if (!x || !y) {
            mine = TC_ERR_INVALID_ARGUMENT;
            snprintf(msg, sizeof msg, "mpi execute: rank %d: %s is NULL", p->rank,
                     !x ? "x_local" : "y_local");
        } else if (dx != dy) {
            mine = TC_ERR_INVALID_ARGUMENT;
            snprintf(msg, sizeof msg,
                     "mpi execute: x_local and y_local must both be host arrays or both "
                     "device arrays of the rank's device (rank %d: x %s, y %s)",
                     p->rank, dx ? "device" : "host", dy ? "device" : "host");
        } else if (dx && !p->dev_ok) {
            mine = TC_ERR_OUT_OF_MEMORY;
            snprintf(msg, sizeof msg,
                     "mpi execute: rank %d could not set up for device arrays at plan "
                     "time (device memory, stream or events)", p->rank);
        }
        st = mpi_agree(p->comm, mine, msg, sizeof msg);
        snprintf(tc_mpi_err, sizeof tc_mpi_err, "%s", msg);
        return st;
    }
    dev = dx;
    double t0 = now(), tw = 0, ex = 0, tdone = t0, c;
    int tot = p->nrecv + p->nsend, rdone = p->nrecv == 0, adone = tot == 0;
#if TC_MPI_HAVE_CUDA
    /* device arrays: the interior enqueued, the host side's own elements
     * down (sends staged; on a failed copy stale values, reported below) */
    if (dev) ce = dev_begin(p, y, x, &st);
#endif
    const void *hxp = dev ? NULL : x; /* NULL: the sends are staged already */
    c = now();
    if (p->prog) tc__mpi_prog_begin(p, hxp);
    else tc__mpi_post(p, hxp);
    ex += now() - c;
    /* own elements the pieces read, and the self copies (wrap onto itself) */
    int64_t olo[3];
    for (int k = 0; k < 3; k++) olo[k] = p->own.lo[k] - p->x.xlo[k];
    for (int i = 0; i < p->npiece && !dev; i++) {
        const piece *pc = &p->pc[i];
        if (!pc->src.n[0] || !pc->src.n[1] || !pc->src.n[2]) continue;
        int64_t slo[3];
        for (int k = 0; k < 3; k++) slo[k] = pc->src.lo[k] - olo[k];
        tc__mpi_copy_box(p->ext, p->x.xn, pc->src.lo, x, p->own.n, slo, pc->src.n, p->esize);
    }
    for (int i = 0; i < p->ncopy && !dev; i++)
        tc__mpi_copy_box(p->ext, p->x.xn, p->copies[i].dlo, x, p->own.n, p->copies[i].slo,
                         p->copies[i].n, p->esize);
    /* the interior while the halos travel (on device arrays it is running
     * already): in chunks, with a test after each when this thread drives
     * the exchange (Open MPI moves a rendezvous message only inside MPI
     * calls) */
    if (!dev && p->nchunk > 1) {
        size_t row = (size_t)(p->own.n[1] * p->own.n[2]) * p->esize;
        for (int k = 0; k < p->nchunk && st == TC_OK; k++) {
            size_t ns = (size_t)(p->cq[k] - p->cs[k]) * row, off = (size_t)p->cs[k] * row;
            if (k && ns) memcpy(p->save, (char *)y + off, ns);
            st = tc_execute_filter(p->cpl[k], (char *)y + off, (const char *)x + off, NULL);
            if (k && ns) memcpy((char *)y + off, p->save, ns);
            if (k + 1 < p->nchunk && !adone && !p->prog) {
                c = now();
                MPI_Testall(tot, p->req, &adone, MPI_STATUSES_IGNORE);
                double e = now();
                ex += e - c;
                if (adone) {
                    rdone = 1;
                    tdone = e;
                }
            }
        }
    } else if (!dev && p->inner) {
        st = tc_execute_filter(p->inner, y, x, NULL);
    }
    /* the receives, then the rims; the sends complete after them */
    c = now();
    if (p->prog) tc__mpi_prog_wait(p, 0); /* unpacked by the thread */
    else MPI_Waitall(p->nrecv, p->req, MPI_STATUSES_IGNORE);
    double e = now();
    tw += e - c;
    ex += e - c;
    if (!rdone) tdone = e;
    if (!p->prog) {
        c = e;
        tc__mpi_unpack(p);
        e = now();
        ex += e - c;
    }
#if TC_MPI_HAVE_CUDA
    p->th[1] = now();
    if (dev && ce == cudaSuccess) ce = dev_rims(p, y, &st);
#endif
    for (int i = 0; i < p->npiece && st == TC_OK && !dev; i++) {
        const piece *pc = &p->pc[i];
        tc__mpi_fill_edges(p, pc);
        static const int64_t zero[3] = {0, 0, 0};
        tc__mpi_copy_box(p->pin, pc->in.n, zero, p->ext, p->x.xn, pc->in.lo, pc->in.n,
                         p->esize);
        st = tc_execute_filter(pc->pl, p->pout, p->pin, NULL);
        if (st) break;
        int64_t from[3], to[3];
        for (int k = 0; k < 3; k++) {
            from[k] = pc->out.lo[k] - (pc->in.lo[k] + p->x.xlo[k]);
            to[k] = pc->out.lo[k] - p->own.lo[k];
        }
        tc__mpi_copy_box(y, p->own.n, to, p->pout, pc->in.n, from, pc->out.n, p->esize);
    }
    c = now();
    if (p->prog) tc__mpi_prog_wait(p, 1);
    else MPI_Waitall(p->nsend, p->req + p->nrecv, MPI_STATUSES_IGNORE);
    e = now();
    tw += e - c;
    ex += e - c;
#if TC_MPI_HAVE_CUDA
    if (dev) {
        /* y complete on return, as on host arrays (dev_rims waited) */
        cudaError_t e2 = cudaStreamSynchronize(cudaStreamPerThread);
        if (ce == cudaSuccess) ce = e2;
        if (ce != cudaSuccess && st == TC_OK) {
            st = TC_ERR_BACKEND;
            snprintf(msg, sizeof msg, "mpi execute: rank %d: CUDA: %s", p->rank,
                     cudaGetErrorString(ce));
        }
        e = now();
        p->th[3] = e;
        if (ce == cudaSuccess) trace_line(p, t0);
    }
#endif
    double busy = p->prog ? p->prog->busy : 0;
    p->st.overlapped = (p->inner != NULL || p->nchunk > 1) && tot > 0;
    p->st.wait_s = tw;
    p->st.exposed_s = tot ? ex : 0;
    p->st.progress_s = tot ? busy : 0;
    p->st.span_s = tot && !p->prog ? tdone - t0 : 0;
    p->st.compute_s = e - t0 - p->st.exposed_s;
    double h = tot == 0 ? 1.0 : p->st.exchange_s > 0 ? 1.0 - ex / p->st.exchange_s : 0.0;
    double hc = tot == 0 ? 1.0 : p->st.exchange_s > 0 ? 1.0 - (ex + busy) / p->st.exchange_s
                                                      : 0.0;
    p->st.hidden = h < 0 ? 0 : h > 1 ? 1 : h;
    p->st.hidden_cpu = hc < 0 ? 0 : hc > 1 ? 1 : hc;
    if (st != TC_OK && !msg[0])
        snprintf(msg, sizeof msg, "mpi execute: rank %d: %s", p->rank, tc_last_error());
    st = mpi_agree(p->comm, st, msg, sizeof msg);
    if (st != TC_OK) snprintf(tc_mpi_err, sizeof tc_mpi_err, "%s", msg);
    return st;
}
