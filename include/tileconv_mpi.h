/*
 * tileconv_mpi.h - filters over arrays distributed across MPI ranks
 * (library tileconv_mpi; the core library stays free of MPI).
 *
 * The global array (the filter description's shape, C order, 1 to 3
 * filtered axes, "same" output) is split into boxes, one per rank of a
 * communicator: a Cartesian grid over the filtered axes that the library
 * chooses (the factorisation of the rank count with the least halo
 * surface per rank; tc_mpi_options.grid forces one), or boxes given by the
 * caller (tc_mpi_options.box_first / box_count on every rank; they must
 * tile the array, else planning fails on every rank naming the offending
 * boxes). Grid ranks are numbered in C order (the last axis fastest), each
 * axis split into counts as equal as possible (the lower coordinates one
 * larger).
 *
 * Each execute gathers the halo (the elements within the mask's reach of
 * the rank's box) by non-blocking point-to-point messages with
 * MPI_Type_create_subarray datatypes straight from the ranks that own it:
 * face, edge and corner neighbours alike, and further ranks when the mask
 * is wider than a block. The elements whose windows lie inside the box are
 * computed while the messages are in flight, then the rims. At the global
 * edges every scipy mode applies: wrap makes every axis periodic; constant,
 * nearest, reflect and mirror are filled by the ranks on the edge (from
 * their own elements or, for a mask wider than a block, from elements
 * received from the ranks that hold them).
 *
 * Results equal one process running the same algorithm on the whole array,
 * to the bit, for the algorithms whose per-output arithmetic does not
 * depend on where the output lies (the direct and separable ones; force one
 * with tc_plan_options.algorithm to be sure: FFT block boundaries differ).
 *
 * Threads: each rank uses the CPUs of its node divided by the node's ranks
 * (MPI_COMM_TYPE_SHARED), at least one; tc_mpi_options.threads or
 * TILECONV_MPI_THREADS=N overrides. GPU ranks (tc_mpi_options.backend =
 * TC_BACKEND_CUDA): each rank selects device (node-local rank % devices)
 * and runs its local plans there; without a device planning fails on every
 * rank. Its x_local / y_local may be host arrays (staged to the device by
 * each execute) or device arrays of that device (cudaMalloc): then the
 * interior runs on them in place, and the halos go GPU to GPU by CUDA IPC
 * (each rank's receive buffer mapped into its senders at plan time, a
 * 0-byte MPI message as the signal) where every rank is on one node, every
 * rim piece is a band of whole rows and every rank executes on device
 * arrays (tc_mpi_stats.ipc says whether the plan can; TILECONV_MPI_IPC=0
 * turns it off), else through host copies of the box's edges (the MPI
 * library need not be CUDA-aware); the rims are filtered on a stream of
 * their own beside the interior, and the execute returns with y_local
 * complete. TILECONV_MPI_TRACE=1 prints one line
 * per device-array execute to stderr: the host's and the GPU's times of
 * its steps (docs/mpi.md).
 *
 * Every call is collective over the plan's communicator.
 */
#ifndef TILECONV_MPI_H
#define TILECONV_MPI_H

#include <mpi.h>

#include "tileconv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_mpi_plan tc_mpi_plan;

typedef struct tc_mpi_stats {
    int ranks;              /* communicator size */
    int64_t rows_first;     /* this rank's first row (axis 0) */
    int64_t rows;           /* this rank's rows */
    int64_t halo_rows;      /* rows received from each neighbour */
    double halo_bytes;      /* bytes this rank sent and received per execute */
    double exchange_s;      /* the exchange alone (blocking, at plan time) */
    double wait_s;          /* last execute: time blocked waiting for halos (the
                               receives before the rims, the sends after them) */
    double compute_s;       /* last execute: everything but exposed_s */
    double hidden;          /* last execute: 1 - exposed_s / exchange_s, in [0, 1]:
                               the share of the exchange's cost that the calling
                               thread did not pay on its critical path (docs/mpi.md) */
    int overlapped;         /* 1: interior computed while halos were in flight */
    int grid[3];            /* ranks per axis (0 0 0: boxes given by the caller) */
    int64_t box_first[3];   /* this rank's box (axes past ndim: 0 and 1) */
    int64_t box_count[3];
    int64_t halo_before[3]; /* halo width received below / above, per axis */
    int64_t halo_after[3];  /* (0 along axes the box spans) */
    int messages;           /* halo messages this rank sends and receives */
    int pieces;             /* rim pieces computed after the wait */
    double exposed_s;       /* last execute: the calling thread's time on the
                               exchange: its MPI calls (posting, tests between
                               interior chunks, waits) and packing / unpacking, or
                               with a progress thread handing the exchange over and
                               waiting for it */
    double span_s;          /* last execute: posting to the call that saw every
                               message complete */
    int chunks;             /* interior chunks (MPI_Testall between them when the
                               calling thread drives the exchange) */
    int progress;           /* 1: a progress thread drove the exchange */
    double progress_s;      /* last execute: the progress thread's time in MPI calls,
                               packing and unpacking while the caller computed */
    double hidden_cpu;      /* last execute: 1 - (exposed_s + progress_s) / exchange_s,
                               in [0, 1]: the exchange work done by any thread of the
                               rank counted as paid (= hidden without a progress
                               thread) */
    int ipc;                /* 1: on device arrays the halos go GPU to GPU by
                               CUDA IPC (every rank on one node; docs/mpi.md),
                               0: through host stages */
} tc_mpi_stats;

typedef struct tc_mpi_options {
    size_t struct_size;      /* set by tc_mpi_options_init */
    /* Ranks per axis of a Cartesian grid (0 = 1 for the axes left out when
     * any is set; all 0: the library chooses). Product = communicator size,
     * each at most the axis' extent. */
    int grid[3];
    /* This rank's box (first index and extent per filtered axis), instead
     * of a grid. NULL: a grid. Given on some ranks only, the arguments are
     * reported as differing across ranks. */
    const int64_t *box_first;
    const int64_t *box_count;
    tc_backend backend;      /* TC_BACKEND_CPU (default) or TC_BACKEND_CUDA */
    int threads;             /* CPU threads per rank; 0: see above */
    /* A progress thread per plan that posts, tests and unpacks the halo
     * messages while the calling thread computes the interior (Open MPI
     * moves messages only inside MPI calls). 1: on (planning fails unless
     * MPI was initialised with MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE);
     * -1: off (the calling thread tests between interior slabs); 0: the
     * environment's TILECONV_MPI_PROGRESS=0|1, else on when the thread level
     * allows it and the thread would have a CPU of its own (this rank may use
     * more CPUs than its compute threads, and the node's ranks together more
     * than all of theirs: e.g. mpirun --map-by slot:PE=2 with one thread per
     * rank; not one rank per core). With SERIALIZED, no other thread of the
     * process may call MPI during an execute. May differ across ranks. */
    int progress;
} tc_mpi_options;

TC_API void tc_mpi_options_init(tc_mpi_options *opt);

/* Plans `desc` (output TC_OUTPUT_SAME, nspatial = ndim <= 3, dense: the
 * strides must be zero) over the ranks of comm, on a grid the library
 * chooses. desc->shape is the GLOBAL shape; the mask and options as for
 * tc_plan_filter, identical on every rank. On failure *plan is NULL on
 * every rank and the status is the same everywhere. */
TC_API tc_status tc_mpi_plan_filter(tc_mpi_plan **plan, MPI_Comm comm,
                                    const tc_filter_desc *desc, const void *mask,
                                    const tc_plan_options *opt);
/* As tc_mpi_plan_filter, with the decomposition, backend and threads of
 * `mopt` (NULL: defaults). The arguments (description, mask, algorithm,
 * grid, backend) must be the same on every rank: planning compares them
 * and fails on every rank when they differ. */
TC_API tc_status tc_mpi_plan_filter_ex(tc_mpi_plan **plan, MPI_Comm comm,
                                       const tc_filter_desc *desc, const void *mask,
                                       const tc_plan_options *opt,
                                       const tc_mpi_options *mopt);
/* This rank's box: first[i] .. first[i] + count[i] along axis i (three
 * entries; axes past ndim report 0 and 1). */
TC_API tc_status tc_mpi_local_box(const tc_mpi_plan *plan, int64_t first[3], int64_t count[3]);
/* This rank's slab: rows [*first, *first + *count) of axis 0, when its box
 * spans the other axes (TC_ERR_UNSUPPORTED otherwise: use tc_mpi_local_box). */
TC_API tc_status tc_mpi_local_rows(const tc_mpi_plan *plan, int64_t *first, int64_t *count);
/* y_local = filter(x)[this rank's box]; x_local and y_local are this rank's
 * boxes (dense, C order), not overlapping; NULL on any rank fails the call
 * on every rank (a NULL plan returns TC_ERR_INVALID_ARGUMENT on that rank
 * alone: it cannot reach the others). GPU ranks: both host arrays or
 * both device arrays of the rank's device (anything else fails on every
 * rank with TC_ERR_INVALID_ARGUMENT); on device arrays y_local is complete
 * when the call returns. A failure on any rank fails the call on every rank
 * (tc_mpi_last_error names the rank). */
TC_API tc_status tc_mpi_execute_filter(tc_mpi_plan *plan, void *y_local, const void *x_local);
TC_API tc_status tc_mpi_plan_stats(const tc_mpi_plan *plan, tc_mpi_stats *stats);
/* The local algorithm's name (the same on every rank). */
TC_API const char *tc_mpi_plan_algorithm(const tc_mpi_plan *plan);
/* Collective (frees the plan's private duplicate of the communicator, on
 * which its halo messages travel). NULL is ignored. */
TC_API void tc_mpi_plan_destroy(tc_mpi_plan *plan);
/* The message of this thread's last failed tc_mpi_plan_filter (the same
 * text on every rank: the failing rank's reason). */
TC_API const char *tc_mpi_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
