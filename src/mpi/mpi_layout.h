/*
 * mpi_layout.h - internal: boxes, Cartesian grids and the halo layout of
 * tileconv_mpi (no MPI calls here; src/mpi/mpi_layout.c).
 *
 * Every array is handled as 3-D (C order): axes past the filter's ndim have
 * extent 1. A rank owns a box of the global array. Along an axis that its
 * box spans completely, the local plans apply the boundary mode themselves
 * and no halo is needed ("unsplit" axis). Along a split axis the rank keeps
 * an extended buffer `ext` covering global indices [xlo, xlo + xn): the
 * window reach E = [lo - before, hi + after), widened (modes other than
 * wrap) to hold every in-range index the mode extension of E reads. Its
 * in-range indices come from the ranks owning them; for wrap the indices
 * outside [0, N) are their periodic images and come from the owners too;
 * for the other modes they are filled locally after the exchange.
 */
#ifndef TC_MPI_LAYOUT_H
#define TC_MPI_LAYOUT_H

#include <stdint.h>

#include "tileconv.h"

#define TC_MPI_MAXRUN 64 /* periodic images of one axis (wrap, very wide masks) */

typedef struct tc__mpi_box {
    int64_t lo[3], n[3];
} tc__mpi_box;

/* A run of ext along one axis: ext[e0 + t] holds global x[s0 + t]. */
typedef struct tc__mpi_run {
    int64_t e0, s0, len;
} tc__mpi_run;

typedef struct tc__mpi_ext {
    int split[3];
    int64_t xlo[3], xn[3];
    int nrun[3];
    tc__mpi_run run[3][TC_MPI_MAXRUN];
} tc__mpi_ext;

/* The window reach of the filter along each filtered axis (scipy's
 * convention): output i reads inputs [i - before, i + after]. */
void tc__mpi_reach(const tc_filter_desc *d, int64_t before[3], int64_t after[3]);

/* scipy's index mapping of a global index outside [0, n); -1 = cval. */
int64_t tc__mpi_bidx(int64_t i, int64_t n, tc_mode mode);

/* The ext layout of `box`. Returns 0, or -1 when an axis needs more than
 * TC_MPI_MAXRUN periodic images (a wrap mask many times the axis). */
int tc__mpi_ext_of(tc__mpi_ext *e, const tc__mpi_box *box, const int64_t N[3],
                   const int64_t before[3], const int64_t after[3], tc_mode mode);

/* The Cartesian grid over the first nd axes with the least halo surface
 * (ranks per axis; product = size). Returns 0, or -1 when no grid fits
 * (more ranks than elements). */
int tc__mpi_grid_choose(int grid[3], int size, int nd, const int64_t N[3],
                        const int64_t before[3], const int64_t after[3]);

/* Rank r's box in a grid (rank order C: the last axis fastest; counts as
 * equal as possible, the lower coordinates one larger). */
void tc__mpi_grid_box(tc__mpi_box *b, const int grid[3], const int64_t N[3], int r);

/* Checks that boxes[0..size) tile the global array: inside it, non-empty,
 * not overlapping, covering it. 0, or -1 with a message. */
int tc__mpi_boxes_check(const tc__mpi_box *boxes, int size, int nd, const int64_t N[3],
                        char *msg, size_t n);

/* Intersection of two boxes; 0 when empty. */
int tc__mpi_box_meet(tc__mpi_box *out, const tc__mpi_box *a, const tc__mpi_box *b);

/* Copies a sub-box of `n` elements per axis between two 3-D C-order
 * arrays (shapes ds / ss, starts dlo / slo), element size es. */
void tc__mpi_copy_box(void *dst, const int64_t ds[3], const int64_t dlo[3], const void *src,
                      const int64_t ss[3], const int64_t slo[3], const int64_t n[3], size_t es);

#endif
