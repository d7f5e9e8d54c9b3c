/*
 * tileconv_mpi.h - filters over arrays distributed across MPI ranks
 * (library tileconv_mpi; the core library stays free of MPI).
 *
 * The global array (the filter description's shape, C order, 1 to 3
 * filtered axes, "same" output) is split into slabs along axis 0 over the
 * ranks of a communicator: rank r holds rows [first, first + count) with
 * counts as equal as possible (they differ by at most one, lower ranks
 * larger). Each execute exchanges the m0 - 1 halo rows (m0 = the mask's
 * size along axis 0) with the neighbouring ranks by non-blocking
 * point-to-point messages of a derived (contiguous row-block) datatype,
 * computes the rows that need no halo while the messages are in flight,
 * then the rims. At the global edges every scipy mode applies: wrap treats
 * the ranks as a periodic grid (the last rank's rows precede rank 0's);
 * constant, nearest, reflect and mirror are filled locally by the edge
 * ranks. Every rank must hold at least m0 rows (the halo then comes from the
 * direct neighbours only): otherwise planning fails on every rank with a
 * message naming the sizes.
 *
 * Results equal one process running the same algorithm on the whole array,
 * to the bit, for the algorithms whose per-output arithmetic does not
 * depend on where the output lies (the direct and separable ones; force one
 * with tc_plan_options.algorithm to be sure: FFT block boundaries differ).
 *
 * Threads: each rank uses the CPUs of its node divided by the node's ranks
 * (MPI_COMM_TYPE_SHARED), at least one; TILECONV_MPI_THREADS=N overrides.
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
    double wait_s;          /* last execute: time blocked waiting for halos */
    double compute_s;       /* last execute: interior + rims */
    double hidden;          /* 1 - wait_s / exchange_s, in [0, 1] */
    int overlapped;         /* 1: interior computed while halos were in flight */
} tc_mpi_stats;

/* Plans `desc` (output TC_OUTPUT_SAME, nspatial = ndim <= 3, dense: the
 * strides must be zero) over the ranks of comm. desc->shape is the GLOBAL
 * shape; the mask and options as for tc_plan_filter, identical on every
 * rank. On failure *plan is NULL on every rank and the status is the same
 * everywhere. */
TC_API tc_status tc_mpi_plan_filter(tc_mpi_plan **plan, MPI_Comm comm,
                                    const tc_filter_desc *desc, const void *mask,
                                    const tc_plan_options *opt);
/* This rank's slab: rows [*first, *first + *count) of axis 0. */
TC_API tc_status tc_mpi_local_rows(const tc_mpi_plan *plan, int64_t *first, int64_t *count);
/* y_local = filter(x)[this rank's rows]; x_local and y_local are this rank's
 * slabs (count x the other axes, C order), not overlapping. */
TC_API tc_status tc_mpi_execute_filter(tc_mpi_plan *plan, void *y_local, const void *x_local);
TC_API tc_status tc_mpi_plan_stats(const tc_mpi_plan *plan, tc_mpi_stats *stats);
/* The local algorithm's name (the same on every rank). */
TC_API const char *tc_mpi_plan_algorithm(const tc_mpi_plan *plan);
TC_API void tc_mpi_plan_destroy(tc_mpi_plan *plan);
/* The message of this thread's last failed tc_mpi_plan_filter (the same
 * text on every rank: the failing rank's reason). */
TC_API const char *tc_mpi_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
