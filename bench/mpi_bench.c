/* mpi_bench.c - weak / strong scaling of tileconv_mpi (3D k5 mask, float32,
 * reflect):
 *   mpirun -np R tileconv-mpi-bench [--weak N | --strong N] [--grid AxBxC |
 *       --slabs] [--repeat K] [--algo NAME] [--local] [--progress on|off|auto]
 *       [--single] [--backend cpu|cuda [--device]]
 * Weak: N^3 per rank (the global array is (g0 N) x (g1 N) x (g2 N) for the
 * grid g: --grid, --slabs = R x 1 x 1, default MPI_Dims_create's balanced
 * grid over the first two axes); strong: N^3 in all on the library's grid (or --grid / --slabs).
 * Rank 0 prints the median time of an execute (barrier to barrier), the
 * compute and wait over the ranks, the exchange alone, the exposed exchange
 * time (time in its MPI calls) and the hidden fraction 1 - exposed /
 * exchange alone (each rank's median over the executes; range over ranks),
 * and hidden_cpu, which also counts the progress thread's own work beside
 * the compute (tileconv_mpi.h). --progress: the progress thread on / off
 * (default: the library's choice; MPI is initialised with
 * MPI_THREAD_SERIALIZED; --single: plain MPI_Init). --backend cuda: GPU
 * ranks (device = node-local rank % devices, host buffers; the local plans
 * of --local on the same device); --device: the rank's arrays live on its
 * GPU (cudaMalloc; the interior runs on them, the halos travel through
 * host copies of the box's edges). --local: no MPI in the timed loop: each rank filters its
 * own N^3 array with a one-process plan of the same algorithm (R
 * independent filters at once), to separate the machine's shared-resource
 * slowdown from the distributed code. A benchmark: never fails on a slow
 * result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tileconv_mpi.h"
#include "../src/core/knobs.h" /* the environment knobs */

#if TC_MPI_BENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int provided = 0, single = 0;
    for (int i = 1; i < argc; i++) single |= !strcmp(argv[i], "--single");
    if (single) MPI_Init(&argc, &argv); /* MPI_THREAD_SINGLE: no progress thread */
    else MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    int rank, size, weak = 1, repeat = 7, slabs = 0, local = 0, grid[3] = {0, 0, 0};
    int progress = 0, device = 0;
    tc_backend backend = TC_BACKEND_CPU;
    long n = 128;
    const char *algo = NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        int more = i + 1 < argc;
        if (!strcmp(argv[i], "--weak") && more) { weak = 1; n = atol(argv[++i]); }
        else if (!strcmp(argv[i], "--strong") && more) { weak = 0; n = atol(argv[++i]); }
        else if (!strcmp(argv[i], "--repeat") && more) repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--algo") && more) algo = argv[++i];
        else if (!strcmp(argv[i], "--grid") && more)
            sscanf(argv[++i], "%dx%dx%d", &grid[0], &grid[1], &grid[2]);
        else if (!strcmp(argv[i], "--slabs")) slabs = 1;
        else if (!strcmp(argv[i], "--local")) local = 1;
        else if (!strcmp(argv[i], "--device")) device = 1;
        else if (!strcmp(argv[i], "--backend") && more) {
            if (tc_backend_parse(argv[++i], &backend) != TC_OK) backend = TC_BACKEND_CPU;
        } else if (!strcmp(argv[i], "--progress") && more) {
            const char *v = argv[++i];
            progress = !strcmp(v, "on") ? 1 : !strcmp(v, "off") ? -1 : 0;
        }
    }
    if (repeat < 1) repeat = 1;
    if (slabs) {
        grid[0] = size;
        grid[1] = grid[2] = 1;
    } else if (weak && !grid[0]) {
        /* balanced over the first two axes: a split of the contiguous last
         * axis costs strided messages and narrow rim rows (mpi_layout.c) */
        MPI_Dims_create(size, 2, grid);
        grid[2] = 1;
    }
    for (int i = 0; i < 3; i++)
        if (grid[0] && !grid[i]) grid[i] = 1;
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.ndim = 3;
    for (int i = 0; i < 3; i++) {
        d.shape[i] = weak ? n * grid[i] : n;
        d.mask_shape[i] = 5;
    }
    float mask[125];
    for (int i = 0; i < 125; i++) mask[i] = 0.01f * (float)((i * 7) % 13) - 0.05f;
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = algo;
    tc_mpi_options mo;
    tc_mpi_options_init(&mo);
    memcpy(mo.grid, grid, sizeof grid);
    mo.progress = progress;
    mo.backend = backend;
    tc_mpi_plan *p = NULL;
    if (tc_mpi_plan_filter_ex(&p, MPI_COMM_WORLD, &d, mask, &o, &mo) != TC_OK) {
        if (rank == 0) fprintf(stderr, "tileconv-mpi-bench: %s\n", tc_mpi_last_error());
        MPI_Finalize();
        return 1;
    }
    tc_mpi_stats s;
    tc_mpi_plan_stats(p, &s);
    int64_t first[3], count[3];
    tc_mpi_local_box(p, first, count);
    size_t elems = (size_t)(count[0] * count[1] * count[2]);
    float *x = malloc(elems * 4), *y = malloc(elems * 4);
    for (size_t i = 0; i < elems; i++) x[i] = (float)((i * 2654435761u) % 1000) * 1e-3f;
    float *hx = x, *hy = y; /* the host arrays (freed at the end) */
    if (device) {
#if TC_MPI_BENCH_HAVE_CUDA
        /* the plan selected this rank's device */
        void *dx = NULL, *dy = NULL;
        if (backend != TC_BACKEND_CUDA || cudaMalloc(&dx, elems * 4 + 4) != cudaSuccess ||
            cudaMalloc(&dy, elems * 4 + 4) != cudaSuccess ||
            cudaMemcpy(dx, x, elems * 4, cudaMemcpyHostToDevice) != cudaSuccess) {
            fprintf(stderr, "tileconv-mpi-bench: rank %d: --device needs --backend cuda and "
                    "device memory\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        x = dx;
        y = dy;
#else
        if (rank == 0) fprintf(stderr, "tileconv-mpi-bench: --device: built without CUDA\n");
        MPI_Finalize();
        return 1;
#endif
    }
    double *t = malloc(sizeof(double) * (size_t)repeat), comp = 0, wait = 0;
    double *hid = malloc(sizeof(double) * (size_t)repeat);
    double *exp_ = malloc(sizeof(double) * (size_t)repeat);
    double *wt = malloc(sizeof(double) * (size_t)repeat);
    double *hc = malloc(sizeof(double) * (size_t)repeat);
    double *pg = malloc(sizeof(double) * (size_t)repeat);
    tc_plan *lp = NULL;
    if (local) { /* the same algorithm on this rank's box, one process, no MPI */
        tc_filter_desc ld = d;
        for (int i = 0; i < 3; i++) ld.shape[i] = count[i];
        tc_context *ctx = NULL;
        tc_context_create(&ctx);
        const char *env = tc__knob_get(TC__KNOB_MPI_THREADS);
        tc_context_set_threads(ctx, env && atoi(env) > 0 ? atoi(env) : 1);
        tc_context_set_backend(ctx, backend); /* the device the mpi plan selected */
        o.algorithm = tc_mpi_plan_algorithm(p);
        if (tc_plan_filter(&lp, ctx, &ld, mask, &o) != TC_OK) {
            fprintf(stderr, "tileconv-mpi-bench: rank %d: %s\n", rank, tc_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        tc_context_destroy(ctx);
        tc_execute_filter(lp, y, x, NULL);
#if TC_MPI_BENCH_HAVE_CUDA
        if (device) cudaDeviceSynchronize();
#endif
    } else {
        tc_mpi_execute_filter(p, y, x); /* warm-up */
    }
    for (int r = 0; r < repeat; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (local) {
            tc_execute_filter(lp, y, x, NULL);
#if TC_MPI_BENCH_HAVE_CUDA
            if (device) cudaDeviceSynchronize(); /* the call only enqueued */
#endif
        } else {
            tc_mpi_execute_filter(p, y, x);
        }
        double mine = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t[r] = MPI_Wtime() - t0;
        if (local) {
            comp += mine / repeat;
            continue;
        }
        tc_mpi_plan_stats(p, &s);
        hid[r] = s.hidden;
        hc[r] = s.hidden_cpu;
        pg[r] = s.progress_s;
        exp_[r] = s.exposed_s;
        wt[r] = s.wait_s;
        comp += s.compute_s / repeat;
    }
    qsort(t, (size_t)repeat, sizeof(double), cmpd);
    qsort(hid, (size_t)repeat, sizeof(double), cmpd);
    qsort(exp_, (size_t)repeat, sizeof(double), cmpd);
    qsort(wt, (size_t)repeat, sizeof(double), cmpd);
    qsort(hc, (size_t)repeat, sizeof(double), cmpd);
    qsort(pg, (size_t)repeat, sizeof(double), cmpd);
    wait = local ? 0 : wt[repeat / 2];
    /* per rank: the median over the executes; then the range over ranks */
    double hmed = local ? 1 : hid[repeat / 2], emed = local ? 0 : exp_[repeat / 2];
    double hcmed = local ? 1 : hc[repeat / 2], pgmed = local ? 0 : pg[repeat / 2];
    double hid_min = 0, hid_max = 0, exp_max = 0, comp_max = 0, comp_min = 0, wait_max = 0;
    double hc_min = 0, hc_max = 0, pg_max = 0;
    MPI_Reduce(&hcmed, &hc_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&hcmed, &hc_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&pgmed, &pg_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&hmed, &hid_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&hmed, &hid_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&emed, &exp_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&comp, &comp_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&comp, &comp_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&wait, &wait_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s%s %ld^3%s, %d ranks, grid %dx%dx%d, %s%s: median %.2f ms; compute (mean per "
               "rank) %.2f..%.2f ms, wait (median per rank) max %.3f ms; %d messages (%s), %d pieces, %d chunks, %.1f "
               "MB/execute on rank 0, exchange alone %.3f ms (rank 0), exposed (median per "
               "rank) max %.3f ms, hidden (median per rank) %.0f..%.0f%%; progress thread %s, "
               "its work beside compute (median per rank) max %.3f ms, hidden_cpu %.0f..%.0f%%\n",
               weak ? "weak" : "strong",
               backend != TC_BACKEND_CUDA ? "" : device ? " cuda device-arrays" : " cuda", n, weak ? " per rank" : "", size, s.grid[0], s.grid[1],
               s.grid[2], tc_mpi_plan_algorithm(p), local ? " LOCAL (no MPI, one-process plans)"
                                                          : "",
               t[repeat / 2] * 1e3, comp_min * 1e3, comp_max * 1e3, wait_max * 1e3, s.messages,
               local ? "-" : device && s.ipc ? "GPU to GPU by CUDA IPC" : "host stages", s.pieces, s.chunks, s.halo_bytes / 1e6, s.exchange_s * 1e3, exp_max * 1e3,
               100 * hid_min, 100 * hid_max, local ? "-" : s.progress ? "on" : "off",
               pg_max * 1e3, 100 * hc_min, 100 * hc_max);
    tc_plan_destroy(lp);
    tc_mpi_plan_destroy(p);
#if TC_MPI_BENCH_HAVE_CUDA
    if (device) {
        cudaFree(x);
        cudaFree(y);
    }
#endif
    free(hx);
    free(hy);
    free(t);
    free(hid);
    free(exp_);
    free(wt);
    free(hc);
    free(pg);
    MPI_Finalize();
    return 0;
}
