/* test_mpi.c - distributed filters (tileconv_mpi) against one process.
 * Run under mpirun with any number of ranks (ctest: 2, 3 and 4, with
 * --oversubscribe). Every rank filters its slab; rank 0 gathers the slabs
 * and compares them BITWISE with tc_plan_filter on the whole array using the
 * same (forced, direct) algorithm. 1D/2D/3D, every mode, sizes that do not
 * divide evenly, origins, convolve and correlate; a mask too tall for the
 * slabs must fail on every rank with the same message. Rank 0 prints
 * "N passed, N failed, 0 skipped". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tileconv_mpi.h"

static int rank, size;
static long passed, failed;

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

static void run(int nd, const int64_t *shape, const int64_t *mshape, tc_mode mode,
                tc_filter_kind kind, int origin_sel, tc_dtype dt, const char *algo) {
    char name[256];
    static const char *const mn[] = {"constant", "nearest", "reflect", "mirror", "wrap"};
    snprintf(name, sizeof name, "%dD %lldx%lldx%lld mask %lldx%lldx%lld %s %s origin%d %s %s",
             nd, (long long)shape[0], (long long)(nd > 1 ? shape[1] : 1),
             (long long)(nd > 2 ? shape[2] : 1), (long long)mshape[0],
             (long long)(nd > 1 ? mshape[1] : 1), (long long)(nd > 2 ? mshape[2] : 1), mn[mode],
             kind == TC_FILTER_CONVOLVE ? "convolve" : "correlate", origin_sel,
             dt == TC_FLOAT32 ? "f32" : "f64", algo);
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.dtype = dt;
    d.ndim = nd;
    int64_t total = 1, mtotal = 1, row = 1;
    for (int i = 0; i < nd; i++) {
        d.shape[i] = shape[i];
        d.mask_shape[i] = mshape[i];
        total *= shape[i];
        mtotal *= mshape[i];
        if (i) row *= shape[i];
        int64_t m = mshape[i];
        d.origin[i] = origin_sel == 0 ? 0 : origin_sel > 0 ? (m - 1) / 2 : -(m / 2);
    }
    d.mode = mode;
    d.cval = 0.25;
    d.kind = kind;
    size_t es = dt == TC_FLOAT32 ? 4 : 8;
    void *x = malloc((size_t)total * es), *mask = malloc((size_t)mtotal * es);
    uint64_t s = 88172645463325252ull;
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
    tc_mpi_plan *mp = NULL;
    tc_status st = tc_mpi_plan_filter(&mp, MPI_COMM_WORLD, &d, mask, &o);
    int ok = st == TC_OK;
    if (!ok && rank == 0) printf("plan failed: %s\n", tc_mpi_last_error());
    check(ok, name);
    if (!ok) {
        free(x);
        free(mask);
        return;
    }
    int64_t first, count;
    tc_mpi_local_rows(mp, &first, &count);
    void *yl = malloc((size_t)(count * row) * es + 1);
    st = tc_mpi_execute_filter(mp, yl, (char *)x + (size_t)(first * row) * es);
    ok = st == TC_OK;
    /* gather to rank 0 */
    int *cnt = malloc(sizeof(int) * size), *disp = malloc(sizeof(int) * size);
    int mine = (int)(count * row * (int64_t)es);
    MPI_Gather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, 0, MPI_COMM_WORLD);
    void *yall = rank == 0 ? malloc((size_t)total * es) : NULL;
    if (rank == 0) {
        int at = 0;
        for (int r = 0; r < size; r++) {
            disp[r] = at;
            at += cnt[r];
        }
    }
    MPI_Gatherv(yl, mine, MPI_BYTE, yall, cnt, disp, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0 && ok) {
        tc_plan *pl = NULL;
        void *yref = malloc((size_t)total * es);
        ok = tc_plan_filter(&pl, NULL, &d, mask, &o) == TC_OK &&
             tc_execute_filter(pl, yref, x, NULL) == TC_OK;
        if (ok && memcmp(yref, yall, (size_t)total * es) != 0) {
            int64_t i = 0;
            while (memcmp((char *)yref + i * es, (char *)yall + i * es, es) == 0) i++;
            printf("  %s: first difference at element %lld (row %lld)\n", name, (long long)i,
                   (long long)(i / row));
            ok = 0;
        }
        tc_plan_destroy(pl);
        free(yref);
    }
    check(ok, name);
    tc_mpi_plan_destroy(mp);
    free(yall);
    free(cnt);
    free(disp);
    free(yl);
    free(x);
    free(mask);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) printf("test_mpi: %d ranks\n", size);
    const char *algos[] = {"cpu.direct.halo", "ref.conv"};
    for (int a = 0; a < 2; a++)
        for (int mode = 0; mode < 5; mode++)
            for (int kind = 0; kind < 2; kind++) {
                int64_t s1[3] = {97 + size, 1, 1}, m1[3] = {5, 1, 1};
                run(1, s1, m1, (tc_mode)mode, (tc_filter_kind)kind, (mode + kind) % 3 - 1,
                    (mode & 1) ? TC_FLOAT64 : TC_FLOAT32, algos[a]);
                int64_t s2[3] = {23 + 2 * size, 17, 1}, m2[3] = {4, 3, 1};
                run(2, s2, m2, (tc_mode)mode, (tc_filter_kind)kind, (mode + 2 * kind) % 3 - 1,
                    TC_FLOAT32, algos[a]);
                int64_t s3[3] = {11 + 2 * size, 6, 7}, m3[3] = {3, 2, 3};
                run(3, s3, m3, (tc_mode)mode, (tc_filter_kind)kind, kind ? 1 : -1, TC_FLOAT64,
                    algos[a]);
            }
    /* the CPU's own vectorised direct kernel too, where available */
    for (int i = 0; i < tc_algorithm_count(); i++) {
        tc_algorithm_info ai;
        if (tc_algorithm_get(i, &ai) != TC_OK || !ai.available) continue;
        if (strcmp(ai.name, "cpu.direct.avx512") && strcmp(ai.name, "cpu.direct.avx2")) continue;
        int64_t s2[3] = {64 + size, 45, 1}, m2[3] = {5, 5, 1};
        run(2, s2, m2, TC_MODE_REFLECT, TC_FILTER_CONVOLVE, 0, TC_FLOAT32, ai.name);
        int64_t s3[3] = {5 * size + 3, 20, 19}, m3[3] = {5, 5, 5};
        run(3, s3, m3, TC_MODE_WRAP, TC_FILTER_CORRELATE, 1, TC_FLOAT64, ai.name);
    }
    /* a mask taller than a slab: every rank fails, with the same message */
    {
        tc_filter_desc d;
        tc_filter_desc_init(&d);
        d.ndim = 1;
        d.shape[0] = 4 * size;
        d.mask_shape[0] = 9;
        float mask[9] = {1, 2, 3, 4, 5, 4, 3, 2, 1};
        tc_mpi_plan *mp = (tc_mpi_plan *)1;
        tc_status st = tc_mpi_plan_filter(&mp, MPI_COMM_WORLD, &d, mask, NULL);
        int ok = size == 1 ? st == TC_OK : (st == TC_ERR_NOT_APPLICABLE && mp == NULL &&
                                            strstr(tc_mpi_last_error(), "halo rows") != NULL);
        if (st == TC_OK) tc_mpi_plan_destroy(mp);
        check(ok, "mask taller than a slab is refused on every rank");
    }
    if (rank == 0) printf("%ld passed, %ld failed, 0 skipped\n", passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
