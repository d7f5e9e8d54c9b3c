/*
 * mpi_plan.h - internal: the distributed plan (tileconv_mpi.c: planning,
 * execution; mpi_halo.c: the halo message list, the rim pieces and the
 * mode's extension at the global edges).
 */
#ifndef TC_MPI_PLAN_H
#define TC_MPI_PLAN_H

#include <pthread.h>

#include "mpi_layout.h"
#include "tileconv_mpi.h"

#define TC_MPI_MAXPIECE 6
#define TC_MPI_MAXCHUNK 16

typedef struct piece {
    tc__mpi_box out; /* outputs, global coordinates */
    tc__mpi_box in;  /* input, ext coordinates */
    tc__mpi_box src; /* own elements the input reads (ext coordinates); n[0] = 0: none */
    tc_plan *pl;
    int rows; /* device arrays: its input assembled row by row (dev_setup) */
} piece;

typedef struct selfcopy {
    int64_t slo[3], n[3], dlo[3]; /* own box (local coordinates) -> ext */
} selfcopy;

/* The progress thread (mpi_progress.c): it posts, tests and unpacks the
 * exchange while the calling thread computes the interior. */
typedef struct tc__mpi_prog {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake; /* to the thread: a job, hurry, quit (monotonic clock) */
    pthread_cond_t done; /* to the caller: receives done, everything done */
    int job, quit;
    int hurry;           /* the caller is blocked on the exchange: no sleeping */
    int recv_done, all_done;
    const void *x;
    double busy;         /* this job: the thread's time in MPI calls, packing and
                            unpacking while the caller was not waiting */
} tc__mpi_prog;

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
    /* Per message: its box in the local array (ext for receives, the own
     * box for sends: start[3], n[3]) and, when that box is not contiguous
     * there, a dense staging buffer (else NULL): such messages are packed
     * before the send and unpacked after the receive, so that every
     * message is contiguous on both sides (Open MPI's single-copy get: the
     * receiver pulls it inside its own MPI calls, without needing the
     * sender to progress a fragment pipeline). */
    int64_t (*geo)[6];
    void **stage;
    MPI_Request *req;
    int ncopy;
    selfcopy *copies;
    tc_plan *inner; /* the own box (NULL: no interior) */
    /* The interior in nchunk slabs along axis 0 (nchunk > 1; MPI_Testall
     * between them so the messages progress): chunk k keeps the box rows
     * [cq[k], cq[k+1]) and runs cpl[k] on the rows [cs[k], ce[k]) (its kept
     * rows widened by the reach, clipped to the box) of x into the same
     * rows of y; the rows [cs[k], cq[k]) written before are saved in `save`
     * and put back after it, its rows past cq[k+1] are rewritten by the
     * next chunks. */
    int nchunk;
    int64_t cq[TC_MPI_MAXCHUNK + 1], cs[TC_MPI_MAXCHUNK], ce[TC_MPI_MAXCHUNK];
    tc_plan *cpl[TC_MPI_MAXCHUNK];
    void *save;
    int npiece;
    piece pc[TC_MPI_MAXPIECE];
    int grid[3];
    tc__mpi_prog *prog; /* NULL: the calling thread drives the exchange */
    /* GPU ranks (backend CUDA): the rank's device. For device arrays
     * (tileconv_mpi.c, dev_setup): every send is staged, the sends' boxes,
     * the pieces' own rows and the self copies come down into the stages and
     * ext (pinned where cudaHostRegister allowed: pinned[i] for stage i,
     * pinned[nrecv + nsend] for ext), each piece's input goes up into
     * dpin[i] and its plan writes dpout[i] on the device; `side` is the
     * stream (the device's highest priority) those copies and the pieces'
     * plans run on beside the interior, ev[4] its events (start, edges
     * down, pieces done, own rows copied). dev_ok = 0: device arrays
     * refused. */
    int gpu, dev, dev_ok;
    unsigned char *pinned;
    void *dmem, *dpin[TC_MPI_MAXPIECE], *dpout[TC_MPI_MAXPIECE];
    void *side, *ev[4];
    /* TILECONV_MPI_TRACE=1 (device arrays): timing events (start, sends
     * down, interior enqueued behind, inputs up, pieces done, end) and the
     * host's times of the same execute, one stderr line per execute */
    int trace;
    void *tev[6];
    double th[4];
    /* Halos GPU to GPU by CUDA IPC (mpi_ipc.c; device arrays, every rank on
     * one node). ipc = 1: set up on every rank (agreed at plan time);
     * ipc_now = 1: this execute uses it (every rank on device arrays), its
     * messages are 0-byte signals. rbuf: this rank's receive bands, exported
     * to the senders; rowoff[r]: byte offset in rbuf of ext row r (-1: not
     * received); ipc_dst[i] (send i): where it goes in the receiver's rbuf
     * (mapped here); ipc_map: the peers' rbufs mapped (nmap, closed at
     * destroy). */
    int ipc, ipc_now, nmap;
    void *rbuf;
    int64_t *rowoff;
    void **ipc_dst, **ipc_map;
    tc_mpi_stats st;
};

/* The receive and send lists of p (from every rank's box), their subarray
 * datatypes and the self copies; counts halo bytes into p->st. 0, or -1
 * with a message. */
int tc__mpi_build_messages(tc_mpi_plan *p, const tc__mpi_box *boxes, char *msg, size_t n);
/* Posts the receives and the sends of `x` (packing the staged ones; x NULL:
 * every send is staged and already filled). */
void tc__mpi_post(tc_mpi_plan *p, const void *x);
/* Unpacks the staged receives into ext (after they completed). */
void tc__mpi_unpack(tc_mpi_plan *p);
/* Whether side (0 below, 1 above) of the own box along split axis k has a
 * rim piece (not at a global edge outside wrap mode: the interior plan's
 * extension is the mode's there). */
int tc__mpi_rim_needed(const tc_mpi_plan *p, int k, int side);
/* The rim pieces of p's box; *interior = 0 when the box is too thin for an
 * interior (one piece: the whole box). */
void tc__mpi_plan_pieces(tc_mpi_plan *p, int *interior);
/* n elements of ext from element `at` set to cval. */
void tc__mpi_fill_cval(tc_mpi_plan *p, size_t at, size_t n);
/* The mode's extension inside a piece's input (after the exchange). */
void tc__mpi_fill_edges(tc_mpi_plan *p, const piece *c);

/* This rank's rank among comm's ranks on its node and their number
 * (MPI_COMM_TYPE_SHARED; unchanged if the split fails). Collective. */
void tc__mpi_node_place(MPI_Comm comm, int *rank, int *size);

/* mpi_ipc.c: sets up the halos GPU to GPU (p->ipc = 1) where every rank
 * can (collective over p->comm: call it on every rank, after a successful
 * plan); TILECONV_MPI_IPC=0 turns it off. A no-op in a build without CUDA.
 * tc__mpi_ipc_free: undoes it; barrier = 1 (on every rank, or on none):
 * first every rank unmaps its peers' buffers, then frees its own. */
void tc__mpi_ipc_setup(tc_mpi_plan *p);
void tc__mpi_ipc_free(tc_mpi_plan *p, int barrier);

/* mpi_progress.c: a monotonic clock (seconds; not MPI_Wtime, which the
 * standard counts as an MPI call); start / stop the plan's progress thread
 * (0, or -1 when it cannot be created); hand it the exchange of x; wait
 * for the receives (all = 0: unpacked into ext) or for everything. */
double tc__mpi_now(void);
int tc__mpi_prog_start(tc_mpi_plan *p);
void tc__mpi_prog_stop(tc_mpi_plan *p);
void tc__mpi_prog_begin(tc_mpi_plan *p, const void *x);
void tc__mpi_prog_wait(tc_mpi_plan *p, int all);

#endif
