/*
 * mpi_plan.h - internal: the distributed plan (tileconv_mpi.c: planning,
 * execution; mpi_halo.c: the halo message list, the rim pieces and the
 * mode's extension at the global edges).
 */
#ifndef TC_MPI_PLAN_H
#define TC_MPI_PLAN_H

#include "mpi_layout.h"
#include "tileconv_mpi.h"

#define TC_MPI_MAXPIECE 6

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
    piece pc[TC_MPI_MAXPIECE];
    int grid[3];
    tc_mpi_stats st;
};

/* The receive and send lists of p (from every rank's box), their subarray
 * datatypes and the self copies; counts halo bytes into p->st. 0, or -1
 * with a message. */
int tc__mpi_build_messages(tc_mpi_plan *p, const tc__mpi_box *boxes, char *msg, size_t n);
/* The rim pieces of p's box; *interior = 0 when the box is too thin for an
 * interior (one piece: the whole box). */
void tc__mpi_plan_pieces(tc_mpi_plan *p, int *interior);
/* The mode's extension inside a piece's input (after the exchange). */
void tc__mpi_fill_edges(tc_mpi_plan *p, const piece *c);

#endif
