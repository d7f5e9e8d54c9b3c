/* mpi_bench.c - weak / strong scaling of tileconv_mpi (3D k5 box-like mask,
 * float32, reflect): `mpirun -np R tileconv-mpi-bench [--weak N | --strong N]
 * [--repeat K]`. Weak: N^3 per rank (the global array is (R N) x N x N);
 * strong: N^3 in all. Rank 0 prints the median time, the exchange, wait and
 * hidden fraction. A benchmark: never fails on a slow result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tileconv_mpi.h"

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, weak = 1, repeat = 7;
    long n = 128;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--weak")) { weak = 1; n = atol(argv[++i]); }
        else if (!strcmp(argv[i], "--strong")) { weak = 0; n = atol(argv[++i]); }
        else if (!strcmp(argv[i], "--repeat")) repeat = atoi(argv[++i]);
    }
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.ndim = 3;
    d.shape[0] = weak ? n * size : n;
    d.shape[1] = d.shape[2] = n;
    d.mask_shape[0] = d.mask_shape[1] = d.mask_shape[2] = 5;
    float mask[125];
    for (int i = 0; i < 125; i++) mask[i] = 0.01f * (float)((i * 7) % 13) - 0.05f;
    tc_mpi_plan *p = NULL;
    if (tc_mpi_plan_filter(&p, MPI_COMM_WORLD, &d, mask, NULL) != TC_OK) {
        if (rank == 0) fprintf(stderr, "tileconv-mpi-bench: %s\n", tc_mpi_last_error());
        MPI_Finalize();
        return 1;
    }
    int64_t first, count;
    tc_mpi_local_rows(p, &first, &count);
    size_t elems = (size_t)count * (size_t)n * (size_t)n;
    float *x = malloc(elems * 4), *y = malloc(elems * 4);
    for (size_t i = 0; i < elems; i++) x[i] = (float)((i * 2654435761u) % 1000) * 1e-3f;
    double *t = malloc(sizeof(double) * (size_t)repeat), hid = 0, wait = 0;
    tc_mpi_execute_filter(p, y, x); /* warm-up */
    for (int r = 0; r < repeat; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        tc_mpi_execute_filter(p, y, x);
        MPI_Barrier(MPI_COMM_WORLD);
        t[r] = MPI_Wtime() - t0;
        tc_mpi_stats s;
        tc_mpi_plan_stats(p, &s);
        hid += s.hidden / repeat;
        wait += s.wait_s / repeat;
    }
    qsort(t, (size_t)repeat, sizeof(double), cmpd);
    tc_mpi_stats s;
    tc_mpi_plan_stats(p, &s);
    double hid_min = 0;
    MPI_Reduce(&hid, &hid_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s %ld^3%s, %d ranks, %s: median %.2f ms; halo %lld rows, %.1f MB/execute on "
               "rank 0, exchange alone %.2f ms, wait %.2f ms, hidden >= %.0f%% (all ranks)\n",
               weak ? "weak" : "strong", n, weak ? " per rank" : "", size,
               tc_mpi_plan_algorithm(p), t[repeat / 2] * 1e3, (long long)s.halo_rows,
               s.halo_bytes / 1e6, s.exchange_s * 1e3, wait * 1e3, 100 * hid_min);
    tc_mpi_plan_destroy(p);
    free(x);
    free(y);
    free(t);
    MPI_Finalize();
    return 0;
}
