/*
 * mpi_ipc.c - halos GPU to GPU by CUDA IPC, for GPU ranks on device arrays
 * whose peers share their node (docs/mpi.md, "Halos GPU to GPU by CUDA
 * IPC").
 *
 * Plan time (tc__mpi_ipc_setup, collective): each rank allocates one device
 * buffer, rbuf, holding its receive messages one after the other (each a
 * band of whole ext rows along axis 0), exports it (cudaIpcGetMemHandle)
 * and sends each sending peer the handle and its message's offset. A sender
 * maps each peer's rbuf once (cudaIpcOpenMemHandle, peer access enabled
 * lazily) and keeps, per send, the address its box goes to. Used only when
 * every rank can (all on one node, every piece assembled row by row on the
 * device, no self copies, every message one contiguous run on both sides,
 * every handle opened): the ranks agree by an MPI_Allreduce, and otherwise
 * everything stays on host stages.
 *
 * Execute (tileconv_mpi.c, when every rank has device arrays): the sender
 * copies each send box from x straight into the receiver's rbuf on its side
 * stream (before the host waits for the copies down, as the staged sends
 * did), then sends a 0-byte message; the receiver, once that message is in,
 * assembles its pieces' received rows from rbuf device to device. rbuf is
 * free again for the next execute because every execute ends in a
 * collective (mpi_agree) after the rank's streams were synchronised.
 */
#include "tileconv_mpi.h"
#include "../core/knobs.h" /* the environment knobs */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if TC_MPI_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "mpi_plan.h"

#if TC_MPI_HAVE_CUDA
/* what a receiver tells the sender of one message */
typedef struct ipc_offer {
    cudaIpcMemHandle_t h;
    int64_t off, bytes;
    int ok;
} ipc_offer;

/* Whether this rank can take part: device arrays set up, every piece
 * assembled row by row, no self copies, each receive a band of whole ext
 * rows and each send a contiguous run of the own box. */
static int local_ok(const tc_mpi_plan *p) {
    if (!p->gpu || !p->dev_ok || p->ncopy) return 0;
    for (int i = 0; i < p->npiece; i++)
        if (!p->pc[i].rows) return 0;
    for (int i = 0; i < p->nrecv; i++)
        if (p->geo[i][4] != p->x.xn[1] || p->geo[i][5] != p->x.xn[2]) return 0;
    for (int i = p->nrecv; i < p->nrecv + p->nsend; i++)
        if (p->geo[i][4] != p->own.n[1] || p->geo[i][5] != p->own.n[2]) return 0;
    return 1;
}

/* rbuf and rowoff for this rank's receives (bands that do not overlap);
 * offers[i] for receive i. 0, or -1. */
static int export_rbuf(tc_mpi_plan *p, ipc_offer *offers) {
    const int64_t rowb = p->x.xn[1] * p->x.xn[2] * (int64_t)p->esize;
    p->rowoff = malloc(sizeof(int64_t) * (size_t)(p->x.xn[0] > 0 ? p->x.xn[0] : 1));
    if (!p->rowoff) return -1;
    for (int64_t r = 0; r < p->x.xn[0]; r++) p->rowoff[r] = -1;
    int64_t total = 0;
    for (int i = 0; i < p->nrecv; i++) {
        offers[i].off = total;
        offers[i].bytes = p->geo[i][3] * rowb;
        for (int64_t r = p->geo[i][0]; r < p->geo[i][0] + p->geo[i][3]; r++) {
            if (r < 0 || r >= p->x.xn[0] || p->rowoff[r] >= 0) return -1;
            p->rowoff[r] = total + (r - p->geo[i][0]) * rowb;
        }
        total += (offers[i].bytes + 255) / 256 * 256;
    }
    if (!total) return 0;
    if (cudaMalloc(&p->rbuf, (size_t)total) != cudaSuccess) {
        p->rbuf = NULL;
        (void)cudaGetLastError();
        return -1;
    }
    cudaIpcMemHandle_t h;
    if (cudaIpcGetMemHandle(&h, p->rbuf) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    for (int i = 0; i < p->nrecv; i++) offers[i].h = h;
    return 0;
}

/* the sends' destinations from the offers, each peer's rbuf mapped once.
 * 0, or -1. */
static int map_peers(tc_mpi_plan *p, const ipc_offer *offers) {
    int ns = p->nsend, tot = p->nrecv + p->nsend;
    p->ipc_dst = calloc((size_t)(tot ? tot : 1), sizeof(void *));
    p->ipc_map = calloc((size_t)(ns ? ns : 1), sizeof(void *));
    cudaIpcMemHandle_t *seen = calloc((size_t)(ns ? ns : 1), sizeof *seen);
    int rc = p->ipc_dst && p->ipc_map && seen ? 0 : -1;
    for (int j = 0; j < ns && !rc; j++) {
        const ipc_offer *o = &offers[j];
        const int i = p->nrecv + j;
        const int64_t bytes = p->geo[i][3] * p->geo[i][4] * p->geo[i][5] * (int64_t)p->esize;
        if (!o->ok || o->bytes != bytes) {
            rc = -1;
            break;
        }
        void *base = NULL;
        for (int k = 0; k < p->nmap && !base; k++)
            if (!memcmp(&seen[k], &o->h, sizeof o->h)) base = p->ipc_map[k];
        if (!base) {
            if (cudaIpcOpenMemHandle(&base, o->h, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
                (void)cudaGetLastError();
                rc = -1;
                break;
            }
            seen[p->nmap] = o->h;
            p->ipc_map[p->nmap++] = base;
        }
        p->ipc_dst[i] = (char *)base + o->off;
    }
    free(seen);
    return rc;
}

void tc__mpi_ipc_free(tc_mpi_plan *p, int barrier) {
    if (p->gpu) cudaSetDevice(p->dev);
    for (int k = 0; k < p->nmap; k++) cudaIpcCloseMemHandle(p->ipc_map[k]);
    p->nmap = 0;
    /* every peer has unmapped this rank's rbuf before it is freed */
    if (barrier && p->comm != MPI_COMM_NULL) MPI_Barrier(p->comm);
    if (p->rbuf) cudaFree(p->rbuf);
    (void)cudaGetLastError();
    p->rbuf = NULL;
    free(p->rowoff);
    free(p->ipc_dst);
    free(p->ipc_map);
    p->rowoff = NULL;
    p->ipc_dst = p->ipc_map = NULL;
    p->ipc = p->ipc_now = 0;
}

void tc__mpi_ipc_setup(tc_mpi_plan *p) {
    if (!p->gpu || p->size < 2) return; /* the same on every rank (the arguments agreed) */
    const char *env = tc__knob_get(TC__KNOB_MPI_IPC);
    int ok = !(env && !strcmp(env, "0")) && local_ok(p);
    int nrank = 0, nsize = 0;
    tc__mpi_node_place(p->comm, &nrank, &nsize);
    ok = ok && nsize == p->size;
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, p->comm);
    if (!all) return;
    /* the offers out (one per receive), in from the senders' peers; the
     * few bytes for them agreed first, so that no rank skips the messages
     * its peers wait for */
    int tot = p->nrecv + p->nsend;
    ipc_offer *offers = calloc((size_t)(tot ? tot : 1), sizeof *offers);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)(tot ? tot : 1));
    ok = offers && rq;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, p->comm);
    if (!all) {
        free(offers);
        free(rq);
        return;
    }
    ok = cudaSetDevice(p->dev) == cudaSuccess && export_rbuf(p, offers) == 0;
    for (int i = 0; i < p->nrecv; i++) offers[i].ok = ok;
    for (int i = 0; i < p->nrecv; i++)
        MPI_Isend(&offers[i], (int)sizeof *offers, MPI_BYTE, p->peer[i], p->tag[i], p->comm, &rq[i]);
    for (int i = p->nrecv; i < tot; i++)
        MPI_Irecv(&offers[i], (int)sizeof *offers, MPI_BYTE, p->peer[i], p->tag[i], p->comm, &rq[i]);
    MPI_Waitall(tot, rq, MPI_STATUSES_IGNORE);
    /* a receive refused on its side refuses the send here */
    if (map_peers(p, offers + p->nrecv)) ok = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, p->comm);
    free(offers);
    free(rq);
    if (all) p->ipc = 1;
    else tc__mpi_ipc_free(p, 1); /* every rank here: the barrier is collective */
}
#else
void tc__mpi_ipc_setup(tc_mpi_plan *p) { (void)p; }
void tc__mpi_ipc_free(tc_mpi_plan *p, int barrier) {
    (void)p;
    (void)barrier;
}
#endif
