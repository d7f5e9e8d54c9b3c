/* test_mpi.c - distributed filters (tileconv_mpi) against one process.
 * Run under mpirun with any number of ranks (ctest: 1 to 4, with
 * --oversubscribe). Every rank filters its box; rank 0 gathers the boxes
 * and compares them BITWISE with tc_plan_filter on the whole array using the
 * same (forced, direct) algorithm. Every Cartesian grid of the rank count
 * over 1D / 2D / 3D arrays (and the library's own choice), every mode,
 * convolve and correlate, origins, float32 / float64, sizes that do not
 * divide evenly, masks wider than a block (served from further ranks),
 * wrap masks wider than the array, boxes given by the caller that are not a
 * grid; bad box sets and arguments that differ across ranks must fail on
 * every rank with the same message. The exchange is driven by the calling
 * thread (slabs of the interior with tests between them) or by a progress
 * thread (MPI_THREAD_SERIALIZED), the cases alternating between the
 * library's choice, on and off. `test_mpi --single` initialises MPI with
 * MPI_Init (MPI_THREAD_SINGLE): a progress thread asked for must be
 * refused with a message naming the thread level, and the default must
 * fall back to the calling thread (bitwise as before). Seed printed; rank 0
 * prints "N passed, N failed, 0 skipped". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tileconv_mpi.h"
#include "../src/core/knobs.h" /* the environment knobs */

#if TC_MPI_TEST_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define SEED 88172645463325252ull

static int rank, size;
static long passed, failed, chunked; /* chunked: this rank's plans with interior chunks */
static long progressed;                /* this rank's plans with a progress thread */
static long ipc_plans, dev_plans;      /* device-array plans: with halos GPU to GPU, all */
static int single_mode;                /* MPI_THREAD_SINGLE: never force one */
/* GPU ranks (a CUDA build on a machine with a GPU): 1 host arrays, 2 device
 * arrays; the reference is one process on the CUDA backend */
static int gpu_mode;

static double val(uint64_t *s) {
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    double v = 0.1 + 0.9 * (double)(*s >> 11) / 9007199254740992.0;
    return (*s & 1) ? v : -v;
}

static void check(int ok, const char *what) {
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all) passed++;
        else {
            failed++;
            printf("FAIL %s\n", what);
        }
    }
}

static void copy_box(void *dst, const int64_t ds[3], const int64_t dlo[3], const void *src,
                     const int64_t ss[3], const int64_t slo[3], const int64_t n[3], size_t es) {
    for (int64_t i = 0; i < n[0]; i++)
        for (int64_t j = 0; j < n[1]; j++)
            memcpy((char *)dst + (size_t)(((dlo[0] + i) * ds[1] + dlo[1] + j) * ds[2] + dlo[2]) * es,
                   (const char *)src +
                       (size_t)(((slo[0] + i) * ss[1] + slo[1] + j) * ss[2] + slo[2]) * es,
                   (size_t)n[2] * es);
}

typedef struct decomp {
    const int *grid;        /* NULL: the library's choice (or boxes) */
    const int64_t *boxes;   /* size x 6 (first[3], count[3]) or NULL */
} decomp;

static void run(int nd, const int64_t *shape, const int64_t *mshape, tc_mode mode,
                tc_filter_kind kind, int origin_sel, tc_dtype dt, const char *algo,
                decomp dc) {
    char name[300];
    static const char *const mn[] = {"constant", "nearest", "reflect", "mirror", "wrap"};
    /* the interior in chunks (tileconv_mpi.c): the default count, 3, or as
     * many as the rows allow, in turn */
    static int ncase;
    static const char *const chunks[] = {"0", "3", "16"};
    /* the progress thread: the library's choice, on, off (every pair with
     * the chunk counts over nine consecutive cases) */
    static const int progs[] = {0, 1, -1};
    static const char *const prn[] = {"auto", "on", "off"};
    int pk = (ncase / 3) % 3;
    const char *ck = chunks[ncase++ % 3];
    setenv("TILECONV_MPI_CHUNKS", ck, 1);
    char gs[40] = "auto";
    if (dc.grid) snprintf(gs, sizeof gs, "%dx%dx%d", dc.grid[0], dc.grid[1], dc.grid[2]);
    if (dc.boxes) snprintf(gs, sizeof gs, "boxes");
    snprintf(name, sizeof name,
             "%dD %lldx%lldx%lld mask %lldx%lldx%lld %s %s origin%d %s %s grid %s chunks %s "
             "progress %s%s", nd,
             (long long)shape[0], (long long)(nd > 1 ? shape[1] : 1),
             (long long)(nd > 2 ? shape[2] : 1), (long long)mshape[0],
             (long long)(nd > 1 ? mshape[1] : 1), (long long)(nd > 2 ? mshape[2] : 1), mn[mode],
             kind == TC_FILTER_CONVOLVE ? "convolve" : "correlate", origin_sel,
             dt == TC_FLOAT32 ? "f32" : "f64", algo, gs, ck, prn[pk],
             gpu_mode == 2 ? " GPU device arrays" : gpu_mode ? " GPU host arrays" : "");
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.dtype = dt;
    d.ndim = nd;
    int64_t total = 1, mtotal = 1, N[3] = {1, 1, 1};
    for (int i = 0; i < nd; i++) {
        d.shape[i] = N[i] = shape[i];
        d.mask_shape[i] = mshape[i];
        total *= shape[i];
        mtotal *= mshape[i];
        int64_t m = mshape[i];
        d.origin[i] = origin_sel == 0 ? 0 : origin_sel > 0 ? (m - 1) / 2 : -(m / 2);
    }
    d.mode = mode;
    d.cval = 0.25;
    d.kind = kind;
    size_t es = dt == TC_FLOAT32 ? 4 : 8;
    void *x = malloc((size_t)total * es), *mask = malloc((size_t)mtotal * es);
    uint64_t s = SEED;
    for (int64_t i = 0; i < total; i++) {
        double v = val(&s);
        if (dt == TC_FLOAT32) ((float *)x)[i] = (float)v;
        else ((double *)x)[i] = v;
    }
    for (int64_t i = 0; i < mtotal; i++) {
        double v = val(&s);
        if (dt == TC_FLOAT32) ((float *)mask)[i] = (float)v;
        else ((double *)mask)[i] = v;
    }
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = algo;
    tc_mpi_options mo;
    tc_mpi_options_init(&mo);
    mo.progress = single_mode && progs[pk] > 0 ? 0 : progs[pk];
    if (gpu_mode) mo.backend = TC_BACKEND_CUDA;
    if (dc.grid) memcpy(mo.grid, dc.grid, sizeof mo.grid);
    if (dc.boxes) {
        mo.box_first = dc.boxes + 6 * rank;
        mo.box_count = dc.boxes + 6 * rank + 3;
    }
    tc_mpi_plan *mp = NULL;
    tc_status st = tc_mpi_plan_filter_ex(&mp, MPI_COMM_WORLD, &d, mask, &o, &mo);
    int ok = st == TC_OK;
    if (!ok && rank == 0) printf("plan failed: %s\n", tc_mpi_last_error());
    check(ok, name);
    if (!ok) {
        free(x);
        free(mask);
        return;
    }
    int64_t box[6], zero[3] = {0, 0, 0};
    tc_mpi_local_box(mp, box, box + 3);
    tc_mpi_stats ms;
    tc_mpi_plan_stats(mp, &ms);
    if (ms.chunks > 1) chunked++;
    if (ms.progress) progressed++;
    if (gpu_mode == 2) {
        dev_plans++;
        if (ms.ipc) ipc_plans++;
    }
    size_t mine = (size_t)(box[3] * box[4] * box[5]);
    void *xl = malloc(mine * es + 1), *yl = malloc(mine * es + 1);
    copy_box(xl, box + 3, zero, x, N, box, box + 3, es);
    memset(yl, 0xff, mine * es); /* NaN: an unwritten element fails */
#if TC_MPI_TEST_HAVE_CUDA
    if (gpu_mode == 2) {
        /* the rank's arrays on its device (the plan selected it) */
        void *dx = NULL, *dy = NULL;
        ok = cudaMalloc(&dx, mine * es + 1) == cudaSuccess &&
             cudaMalloc(&dy, mine * es + 1) == cudaSuccess &&
             cudaMemcpy(dx, xl, mine * es, cudaMemcpyHostToDevice) == cudaSuccess &&
             cudaMemset(dy, 0xff, mine * es) == cudaSuccess;
        st = tc_mpi_execute_filter(mp, ok ? dy : yl, ok ? dx : xl);
        ok = ok && st == TC_OK &&
             cudaMemcpy(yl, dy, mine * es, cudaMemcpyDeviceToHost) == cudaSuccess;
        cudaFree(dx);
        cudaFree(dy);
    } else
#endif
        st = tc_mpi_execute_filter(mp, yl, xl);
    if (gpu_mode != 2) ok = st == TC_OK;
    if (st != TC_OK && rank == 0) printf("  execute failed: %s\n", tc_mpi_last_error());
    /* gather the boxes and their outputs on rank 0 */
    int64_t *allbox = malloc(sizeof(int64_t) * 6 * (size_t)size);
    MPI_Gather(box, 6, MPI_INT64_T, allbox, 6, MPI_INT64_T, 0, MPI_COMM_WORLD);
    int *cnt = malloc(sizeof(int) * (size_t)size), *disp = malloc(sizeof(int) * (size_t)size);
    int mb = (int)(mine * es);
    MPI_Gather(&mb, 1, MPI_INT, cnt, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char *packed = rank == 0 ? malloc((size_t)total * es) : NULL;
    if (rank == 0) {
        int at = 0;
        for (int r = 0; r < size; r++) {
            disp[r] = at;
            at += cnt[r];
        }
    }
    MPI_Gatherv(yl, mb, MPI_BYTE, packed, cnt, disp, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0 && ok) {
        void *yall = malloc((size_t)total * es), *yref = malloc((size_t)total * es);
        memset(yall, 0xff, (size_t)total * es); /* NaN: an unwritten element fails */
        for (int r = 0; r < size; r++)
            copy_box(yall, N, allbox + 6 * r, packed + disp[r], allbox + 6 * r + 3, zero,
                     allbox + 6 * r + 3, es);
        tc_plan *pl = NULL;
        tc_context *rc = NULL;
        if (gpu_mode && (tc_context_create(&rc) != TC_OK ||
                         tc_context_set_backend(rc, TC_BACKEND_CUDA) != TC_OK))
            ok = 0;
        ok = ok && tc_plan_filter(&pl, rc, &d, mask, &o) == TC_OK &&
             tc_execute_filter(pl, yref, x, NULL) == TC_OK;
        tc_context_destroy(rc);
        if (ok && memcmp(yref, yall, (size_t)total * es) != 0) {
            int64_t nd_ = 0, shown = 0;
            for (int64_t i = 0; i < total; i++) {
                if (memcmp((char *)yref + i * es, (char *)yall + i * es, es) == 0) continue;
                if (shown++ < 4)
                    printf("  %s: differs at (%lld, %lld, %lld)\n", name,
                           (long long)(i / (N[1] * N[2])), (long long)(i / N[2] % N[1]),
                           (long long)(i % N[2]));
                nd_++;
            }
            printf("  %lld of %lld elements differ\n", (long long)nd_, (long long)total);
            ok = 0;
        }
        tc_plan_destroy(pl);
        free(yref);
        free(yall);
    }
    check(ok, name);
    tc_mpi_plan_destroy(mp);
    free(packed);
    free(allbox);
    free(cnt);
    free(disp);
    free(xl);
    free(yl);
    free(x);
    free(mask);
}

/* every grid of `size` ranks over nd axes with at most N[i] per axis */
static int grids(int out[][3], int nd, const int64_t *N) {
    int n = 0;
    for (int a = 1; a <= size; a++)
        for (int b = 1; b <= size; b++) {
            if (size % (a * b)) continue;
            int g[3] = {a, b, size / (a * b)};
            int ok = 1;
            for (int i = 0; i < 3; i++)
                if ((i >= nd && g[i] != 1) || (i < nd && g[i] > N[i])) ok = 0;
            if (ok && n < 16) memcpy(out[n++], g, sizeof g);
        }
    return n;
}

/* A tiling of a 2-D array that is no grid: rows [0, R) cut into ceil(P/2)
 * column blocks, rows [R, N0) into floor(P/2) blocks at other columns. */
static void odd_boxes(int64_t *b, const int64_t *N) {
    int top = (size + 1) / 2, bot = size / 2;
    int64_t R = bot ? N[0] / 3 + 1 : N[0];
    for (int r = 0; r < size; r++) {
        int in_top = r < top, k = in_top ? r : r - top, parts = in_top ? top : bot;
        int64_t c0 = N[1] * k / parts + (in_top ? 0 : (k ? 1 : 0));
        int64_t c1 = k + 1 == parts ? N[1] : N[1] * (k + 1) / parts + (in_top ? 0 : 1);
        int64_t *o = b + 6 * r;
        o[0] = in_top ? 0 : R;
        o[3] = in_top ? R : N[0] - R;
        o[1] = c0;
        o[4] = c1 - c0;
        o[2] = 0;
        o[5] = 1;
    }
}

static void expect_refusal(const char *what, const tc_filter_desc *d, const void *mask,
                           const tc_mpi_options *mo, const char *needle) {
    tc_mpi_plan *mp = (tc_mpi_plan *)1;
    tc_status st = tc_mpi_plan_filter_ex(&mp, MPI_COMM_WORLD, d, mask, NULL, mo);
    const char *m = tc_mpi_last_error();
    /* the same text on every rank */
    char mine[512], first[512];
    snprintf(mine, sizeof mine, "%s", m);
    memcpy(first, mine, sizeof first);
    MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    int ok = st != TC_OK && mp == NULL && strstr(m, needle) && !strcmp(mine, first);
    if (st == TC_OK) tc_mpi_plan_destroy(mp);
    if (rank == 0) printf("  refusal (%s): %s\n", what, m);
    check(ok, what);
}

/* The problem of the refusal cases: 12 x 10 float32, a 3 x 3 mask, default
 * options (each case then spoils one thing). */
static void refusal_case(tc_filter_desc *d, float mask[9], tc_mpi_options *mo) {
    static const float m[9] = {1, 2, 3, 4, 5, 4, 3, 2, 1};
    tc_filter_desc_init(d);
    d->ndim = 2;
    d->shape[0] = 12;
    d->shape[1] = 10;
    d->mask_shape[0] = d->mask_shape[1] = 3;
    memcpy(mask, m, sizeof m);
    tc_mpi_options_init(mo);
}

/* MPI_THREAD_SINGLE: a progress thread asked for is refused on every rank
 * naming the thread level; the default falls back to the calling thread. */
static int single_level(void) {
    tc_filter_desc d;
    float mask[9];
    tc_mpi_options mo;
    refusal_case(&d, mask, &mo);
    mo.progress = 1;
    expect_refusal("a progress thread under MPI_THREAD_SINGLE", &d, mask, &mo,
                   "MPI_THREAD_SINGLE");
    setenv("TILECONV_MPI_PROGRESS", "1", 1);
    expect_refusal("TILECONV_MPI_PROGRESS=1 under MPI_THREAD_SINGLE", &d, mask, NULL,
                   "TILECONV_MPI_PROGRESS=1");
    unsetenv("TILECONV_MPI_PROGRESS");
    int64_t s2[3] = {23 + 2 * size, 17, 1}, m2[3] = {4, 3, 1}, s3[3] = {11 + 2 * size, 9, 7},
            m3[3] = {3, 2, 3};
    for (int mode = 0; mode < 5; mode++) {
        run(2, s2, m2, (tc_mode)mode, TC_FILTER_CONVOLVE, mode % 3 - 1, TC_FLOAT32,
            "cpu.filter.direct-halo", (decomp){0});
        run(3, s3, m3, (tc_mode)mode, TC_FILTER_CORRELATE, 1, TC_FLOAT64, "cpu.filter.direct-halo",
            (decomp){0});
    }
    long pr = 0;
    MPI_Reduce(&progressed, &pr, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("(%ld rank plans had a progress thread)\n", pr);
        if (pr) {
            failed++;
            printf("FAIL a progress thread was started under MPI_THREAD_SINGLE\n");
        } else passed++;
        printf("%ld passed, %ld failed, 0 skipped\n", passed, failed);
    }
    MPI_Finalize();
    return failed ? 1 : 0;
}

int main(int argc, char **argv) {
    int single = argc > 1 && !strcmp(argv[1], "--single"), provided = 0;
    if (single) MPI_Init(&argc, &argv);
    else MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        printf("test_mpi: %d ranks, seed %llu, %s\n", size, (unsigned long long)SEED,
               single ? "MPI_Init (MPI_THREAD_SINGLE)"
               : provided >= MPI_THREAD_SERIALIZED
                   ? "MPI_Init_thread: MPI_THREAD_SERIALIZED or more"
                   : "MPI_Init_thread: below MPI_THREAD_SERIALIZED (no progress threads)");
    single_mode = single;
    if (single) return single_level();
    const char *algos[] = {"cpu.filter.direct-halo", "ref.conv.loops"};
    int g[16][3];
    /* every grid, every mode, both kinds; sizes that do not divide evenly */
    for (int a = 0; a < 2; a++)
        for (int mode = 0; mode < 5; mode++)
            for (int kind = 0; kind < 2; kind++) {
                int64_t s1[3] = {97 + size, 1, 1}, m1[3] = {5, 1, 1};
                run(1, s1, m1, (tc_mode)mode, (tc_filter_kind)kind, (mode + kind) % 3 - 1,
                    (mode & 1) ? TC_FLOAT64 : TC_FLOAT32, algos[a], (decomp){0});
                int64_t s2[3] = {23 + 2 * size, 17, 1}, m2[3] = {4, 3, 1};
                int n2 = grids(g, 2, s2);
                for (int i = 0; i < n2; i++)
                    run(2, s2, m2, (tc_mode)mode, (tc_filter_kind)kind, (mode + 2 * kind) % 3 - 1,
                        TC_FLOAT32, algos[a], (decomp){g[i], NULL});
                int64_t s3[3] = {11 + 2 * size, 9, 7}, m3[3] = {3, 2, 3};
                int n3 = grids(g, 3, s3);
                for (int i = 0; i < n3; i++)
                    run(3, s3, m3, (tc_mode)mode, (tc_filter_kind)kind, kind ? 1 : -1,
                        TC_FLOAT64, algos[a], (decomp){g[i], NULL});
                run(3, s3, m3, (tc_mode)mode, (tc_filter_kind)kind, 0, TC_FLOAT32, algos[a],
                    (decomp){0});
            }
    /* masks wider than a block: the halo comes from further ranks */
    for (int mode = 0; mode < 5; mode++) {
        int64_t s1[3] = {3 * size + 2, 1, 1}, m1[3] = {11, 1, 1};
        run(1, s1, m1, (tc_mode)mode, TC_FILTER_CONVOLVE, 0, TC_FLOAT64, algos[0], (decomp){0});
        int64_t s2[3] = {2 * size + 3, 2 * size + 1, 1}, m2[3] = {7, 8, 1};
        int n2 = grids(g, 2, s2);
        for (int i = 0; i < n2; i++)
            run(2, s2, m2, (tc_mode)mode, TC_FILTER_CORRELATE, 1, TC_FLOAT32, algos[0],
                (decomp){g[i], NULL});
        /* a mask wider than the whole array (reflect cycles, wrap images) */
        int64_t s3[3] = {size + 2, 5, 3}, m3[3] = {2 * size + 7, 3, 7};
        int n3 = grids(g, 3, s3);
        for (int i = 0; i < n3; i++)
            run(3, s3, m3, (tc_mode)mode, TC_FILTER_CONVOLVE, -1, TC_FLOAT64, algos[1],
                (decomp){g[i], NULL});
    }
    /* boxes given by the caller (no grid) */
    {
        int64_t s2[3] = {19, 23, 1}, m2[3] = {5, 4, 1};
        int64_t *b = malloc(sizeof(int64_t) * 6 * (size_t)size);
        odd_boxes(b, s2);
        for (int mode = 0; mode < 5; mode++)
            for (int kind = 0; kind < 2; kind++)
                run(2, s2, m2, (tc_mode)mode, (tc_filter_kind)kind, kind, TC_FLOAT32,
                    algos[mode & 1], (decomp){NULL, b});
        free(b);
    }
    /* the CPU's own vectorised direct kernel too, where available */
    for (int i = 0; i < tc_algorithm_count(); i++) {
        tc_algorithm_info ai;
        if (tc_algorithm_get(i, &ai) != TC_OK || !ai.available) continue;
        if (strcmp(ai.name, "cpu.filter.direct-avx512") && strcmp(ai.name, "cpu.filter.direct-avx2")) continue;
        int64_t s2[3] = {64 + size, 45, 1}, m2[3] = {5, 5, 1};
        int n2 = grids(g, 2, s2);
        for (int k = 0; k < n2; k++)
            run(2, s2, m2, TC_MODE_REFLECT, TC_FILTER_CONVOLVE, k % 2 ? -1 : 0, TC_FLOAT32,
                ai.name, (decomp){g[k], NULL});
        /* off-centre masks: origin (m - 1) / 2 leaves no reach after an
         * output, so the last row of a box is kept where its plan computes
         * it alone (the one-row kernel path), which must sum its taps in
         * the order of the 4-row blocks; float64, and masks wider than a
         * vector (5 > AVX2's 4 float64 lanes, 9 > AVX-512's 8) */
        int64_t s3[3] = {5 * size + 3, 20, 19}, m3[3] = {5, 5, 5};
        int n3 = grids(g, 3, s3);
        for (int k = 0; k < n3; k++)
            run(3, s3, m3, TC_MODE_WRAP, TC_FILTER_CORRELATE, 1, TC_FLOAT64, ai.name,
                (decomp){g[k], NULL});
        int64_t s4[3] = {4 * size + 9, 41, 1}, m4[3] = {9, 9, 1};
        n2 = grids(g, 2, s4);
        for (int k = 0; k < n2; k++)
            run(2, s4, m4, (tc_mode)(k % 5), TC_FILTER_CORRELATE, 1, k % 2 ? TC_FLOAT32 : TC_FLOAT64,
                ai.name, (decomp){g[k], NULL});
    }
    /* GPU ranks: host and device arrays against one process on the CUDA
     * backend (cuda.filter.direct, bitwise), every mode, slabs and grids, a mask
     * wider than a block */
    {
        int devs = tc_cuda_device_count(), least = devs;
        MPI_Allreduce(&devs, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
#if TC_MPI_TEST_HAVE_CUDA
        for (gpu_mode = least > 0 ? 1 : 3; gpu_mode <= 2; gpu_mode++)
            for (int mode = 0; mode < 5; mode++) {
                int64_t s3[3] = {11 + 3 * size, 9, 13}, m3[3] = {3, 4, 5};
                int n3 = grids(g, 3, s3);
                for (int i = 0; i < n3; i++)
                    run(3, s3, m3, (tc_mode)mode, (tc_filter_kind)(i & 1), i % 3 - 1,
                        (mode & 1) ? TC_FLOAT64 : TC_FLOAT32, "cuda.filter.direct",
                        (decomp){g[i], NULL});
                int64_t s2[3] = {2 * size + 3, 37, 1}, m2[3] = {7, 3, 1};
                run(2, s2, m2, (tc_mode)mode, TC_FILTER_CORRELATE, 1, TC_FLOAT32, "cuda.filter.direct",
                    (decomp){0});
                int64_t s1[3] = {200 + size, 1, 1}, m1[3] = {9, 1, 1};
                run(1, s1, m1, (tc_mode)mode, TC_FILTER_CONVOLVE, 0, TC_FLOAT32, "cuda.filter.direct",
                    (decomp){0});
            }
        gpu_mode = 0;
        /* halos GPU to GPU (CUDA IPC): where every rank shares one node,
         * the slab plans use it; TILECONV_MPI_IPC=1 makes its absence a
         * failure (the device machine), =0 turns it off (host stages) */
        long ipc_all = 0, dev_all = 0;
        MPI_Allreduce(&ipc_plans, &ipc_all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(&dev_plans, &dev_all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (least > 0) {
            const char *ie = tc__knob_get(TC__KNOB_MPI_IPC);
            if (rank == 0)
                printf("GPU device arrays: halos GPU to GPU (CUDA IPC) in %ld of %ld rank plans "
                       "(TILECONV_MPI_IPC=%s)\n", ipc_all, dev_all, ie ? ie : "unset");
            /* check() is collective: every rank calls it */
            if (ie && !strcmp(ie, "1")) check(ipc_all > 0, "CUDA IPC used where required");
            if (ie && !strcmp(ie, "0")) check(ipc_all == 0, "CUDA IPC off where turned off");
        }
        if (rank == 0 && least <= 0)
            printf("SKIP GPU ranks: no CUDA device on every rank (tc_cuda_device_count() "
                   "= %d)\n", least);
#else
        if (rank == 0) printf("SKIP GPU ranks: this build has no CUDA backend\n");
#endif
    }
    /* refusals: every rank fails with the same message */
    {
        tc_filter_desc d;
        float mask[9];
        tc_mpi_options mo;
        refusal_case(&d, mask, &mo);
        int64_t first[3] = {0, 0, 0}, count[3] = {12, 10, 1};
        mo.box_first = first;
        mo.box_count = count;
        if (size > 1) expect_refusal("overlapping boxes", &d, mask, &mo, "overlaps");
        count[1] = rank == size - 1 ? 9 : 10; /* a gap on the last rank */
        if (size > 1) {
            first[1] = 0;
            first[0] = 12 * rank / size;
            count[0] = 12 * (rank + 1) / size - first[0];
        }
        expect_refusal("boxes leaving a gap", &d, mask, &mo, "do not tile");
        count[1] = 11;
        expect_refusal("a box outside the array", &d, mask, &mo, "leaves the array");
        tc_mpi_options_init(&mo);
        mo.grid[0] = size + 1;
        expect_refusal("a grid of the wrong size", &d, mask, &mo, "grid");
        if (size > 1) {
            float m2[9];
            memcpy(m2, mask, sizeof m2);
            m2[4] += (float)rank;
            expect_refusal("a mask that differs across ranks", &d, m2, NULL, "different");
            /* a rank that fails its own checks before the arguments are
             * compared (it must still join the collective the others are
             * in) */
            tc_filter_desc d2 = d;
            if (rank == size - 1) d2.shape[0] = 0;
            expect_refusal("a shape invalid on the last rank only", &d2, mask, NULL, "shape[0] = 0");
            expect_refusal("no mask on the last rank only", &d, rank == size - 1 ? NULL : mask,
                           NULL, "mask is NULL");
            /* an execute with NULL y_local on the last rank only: every
             * rank fails with its message (none is left waiting in the
             * exchange) */
            tc_mpi_plan *mp = NULL;
            int ok = tc_mpi_plan_filter_ex(&mp, MPI_COMM_WORLD, &d, mask, NULL, NULL) == TC_OK;
            check(ok, "plan for the NULL-array execute");
            if (ok) {
                int64_t b[6];
                tc_mpi_local_box(mp, b, b + 3);
                float *xl = calloc((size_t)(b[3] * b[4] * b[5]), sizeof(float)),
                      *yl = malloc((size_t)(b[3] * b[4] * b[5]) * sizeof(float));
                tc_status es = tc_mpi_execute_filter(mp, rank == size - 1 ? NULL : yl, xl);
                const char *m = tc_mpi_last_error();
                if (rank == 0) printf("  refusal (NULL y_local on the last rank only): %s\n", m);
                check(es == TC_ERR_INVALID_ARGUMENT && strstr(m, "y_local is NULL") != NULL,
                      "NULL y_local on the last rank only");
                /* and the plan still works afterwards */
                check(tc_mpi_execute_filter(mp, yl, xl) == TC_OK, "execute after the refusal");
                free(xl);
                free(yl);
                tc_mpi_plan_destroy(mp);
            }
            tc_mpi_options_init(&mo);
            mo.box_first = rank ? NULL : first;
            expect_refusal("boxes on some ranks only", &d, mask, &mo, "different");
        }
    }
    long chunked_all = 0;
    MPI_Reduce(&chunked, &chunked_all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    long progressed_all = 0;
    MPI_Reduce(&progressed, &progressed_all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("(%ld rank plans computed their interior in chunks, %ld had a progress thread)\n",
               chunked_all, progressed_all);
    /* the thread must really be used where it can be */
    if (rank == 0 && size > 1 && provided >= MPI_THREAD_SERIALIZED) {
        if (progressed_all > 0) passed++;
        else {
            failed++;
            printf("FAIL no plan had a progress thread at MPI_THREAD_SERIALIZED\n");
        }
    }
    if (rank == 0) printf("%ld passed, %ld failed, 0 skipped\n", passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
