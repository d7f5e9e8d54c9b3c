/*
 * mpi_main.c - `mpirun -np R tileconv-mpi filter IN OUT --kernel K
 * [--mode M] [--cval C] [--origin O[,O..]] [--correlate] [--algo NAME]
 * [--threads N] [--backend cpu|cuda] [--grid AxBxC] [--boxes SPEC]
 * [--progress on|off|auto] [--repeat N] [--stats]`: tileconv filter on a .npy array (float32 or
 * float64, C order, 1 to 3 dimensions) split in boxes over the ranks (the
 * library's grid, a forced grid, or boxes listed per rank).
 *
 * Each rank reads its box of IN with MPI-IO (a collective read through a
 * subarray file view after the header) and writes its box of the output
 * the same way, into OUT.tmp.<pid> that rank 0 renames to OUT only after
 * every rank succeeded (otherwise it is deleted). Any failure, including
 * arguments that differ across ranks, ends every rank with one line from
 * rank 0 and exit status 1 (2 for usage errors), and no OUT. --stats
 * prints, from rank 0: ranks, grid, rank 0's box, halo widths, messages and
 * bytes, the exchange alone, the wait, exposed exchange time and compute
 * of the last execute, the interior chunks, whether a progress thread
 * drove the exchange (MPI is initialised with MPI_THREAD_SERIALIZED;
 * --progress forces it on or off) and the share of the exchange's cost
 * hidden behind compute (1 - exposed / exchange alone, minimum over ranks;
 * hidden_cpu also counts the progress thread's own work; docs/mpi.md).
 * The .npy header and the named masks are the tools' own (npy.c, masks.c
 * in tileconv_tools); errors go through fail_all, not the tools' per-process
 * messages, so that every rank agrees and one line is printed.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "masks.h"
#include "npy.h"
#include "tileconv_mpi.h"

static int rank, size;

static int fail_all(int local_bad, const char *msg, int code) {
    /* everyone learns whether anyone failed; rank 0 prints the first message */
    int bad = local_bad ? code : 0, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!any) return 0;
    int who = local_bad ? rank : size, first = size;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    char buf[600];
    snprintf(buf, sizeof buf, "%s", msg ? msg : "");
    MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, first, MPI_COMM_WORLD);
    if (rank == 0) fprintf(stderr, "tileconv-mpi: %s\n", buf);
    return any;
}

/* .npy header of path: float32 or float64, 1 to 3 dimensions; the data's
 * byte offset in *off. 0 on success. */
static int npy_header(const char *path, tc_dtype *dt, int *nd, int64_t shape[3], int64_t *off,
                      char *err, size_t n) {
    npy_array h;
    if (npy_load_header(path, &h, off, err, n) != 0) return -1;
    if (h.dtype != NPY_F32 && h.dtype != NPY_F64) {
        snprintf(err, n, "'%s': dtype must be float32 or float64 (little-endian)", path);
        return -1;
    }
    if (h.ndim < 1 || h.ndim > 3) {
        snprintf(err, n, "'%s': shape must have 1 to 3 dimensions", path);
        return -1;
    }
    *dt = h.dtype == NPY_F32 ? TC_FLOAT32 : TC_FLOAT64;
    *nd = h.ndim;
    for (int i = 0; i < h.ndim; i++) shape[i] = h.shape[i];
    return 0;
}

static void usage(void) {
    if (rank == 0)
        fprintf(stderr,
                "usage: mpirun -np R tileconv-mpi filter IN OUT --kernel K [--mode M] "
                "[--cval C]\n       [--origin O[,O..]] [--correlate] [--algo NAME] [--threads N]"
                "\n       [--backend cpu|cuda] [--grid AxBxC] [--boxes F+N,F+N/F+N,F+N/...] "
                "[--progress on|off|auto] [--repeat N] [--stats]\n"
                "  --grid: ranks per axis; --boxes: each rank's first index + extent per axis,\n"
                "  ranks separated by '/' (they must tile the array)\n%s",
                TOOL_MASKS_HELP);
}

int main(int argc, char **argv) {
    int provided = 0; /* SERIALIZED: the library's progress thread may run */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *in = NULL, *out = NULL, *kernel = NULL, *algo = NULL, *origin = NULL;
    const char *grid = NULL, *boxes = NULL;
    tc_backend backend = TC_BACKEND_CPU;
    int threads = 0, progress = 0;
    tc_mode mode = TC_MODE_REFLECT;
    double cval = 0;
    int correlate = 0, repeat = 1, stats = 0, npos = 0, bad = 0;
    char err[512] = "";
    int argmismatch = 0;
    /* the same command line on every rank (mpirun's MPMD form can differ);
     * collective, so before any rank may leave */
    {
        uint64_t h = 1469598103934665603ull, h0;
        for (int i = 1; i < argc; i++)
            for (const char *c = argv[i];; c++) {
                h = (h ^ (unsigned char)*c) * 1099511628211ull;
                if (!*c) break;
            }
        h0 = h;
        MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        if (h != h0) {
            snprintf(err, sizeof err, "rank %d's command line differs from rank 0's (every rank "
                     "must get the same arguments)", rank);
            argmismatch = 1;
        }
    }
    if (fail_all(argmismatch, err, 2)) {
        MPI_Finalize();
        return 2;
    }
    if (argc < 2 || strcmp(argv[1], "filter") != 0) {
        usage();
        MPI_Finalize();
        return 2;
    }
    for (int i = 2; i < argc && !bad; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--kernel") && more) kernel = argv[++i];
        else if (!strcmp(a, "--algo") && more) algo = argv[++i];
        else if (!strcmp(a, "--origin") && more) origin = argv[++i];
        else if (!strcmp(a, "--cval") && more) cval = atof(argv[++i]);
        else if (!strcmp(a, "--repeat") && more) repeat = atoi(argv[++i]);
        else if (!strcmp(a, "--threads") && more) {
            threads = atoi(argv[++i]);
            if (threads < 1 || threads > 4096) {
                snprintf(err, sizeof err, "--threads '%s': expected 1..4096", argv[i]);
                bad = 1;
            }
        } else if (!strcmp(a, "--backend") && more) {
            if (tc_backend_parse(argv[++i], &backend) != TC_OK) {
                snprintf(err, sizeof err, "--backend '%s': expected cpu, cuda or auto", argv[i]);
                bad = 1;
            }
        } else if (!strcmp(a, "--progress") && more) {
            const char *v = argv[++i];
            if (!strcmp(v, "on")) progress = 1;
            else if (!strcmp(v, "off")) progress = -1;
            else if (!strcmp(v, "auto")) progress = 0;
            else {
                snprintf(err, sizeof err, "--progress '%s': expected on, off or auto", v);
                bad = 1;
            }
        } else if (!strcmp(a, "--grid") && more) grid = argv[++i];
        else if (!strcmp(a, "--boxes") && more) boxes = argv[++i];
        else if (!strcmp(a, "--correlate")) correlate = 1;
        else if (!strcmp(a, "--stats")) stats = 1;
        else if (!strcmp(a, "--mode") && more) {
            if (tc_mode_parse(argv[++i], &mode) != TC_OK) {
                snprintf(err, sizeof err, "--mode '%s': expected constant, nearest, reflect, "
                         "mirror or wrap", argv[i]);
                bad = 1;
            }
        } else if (a[0] != '-' && npos < 2) {
            if (npos++ == 0) in = a;
            else out = a;
        } else {
            snprintf(err, sizeof err, "unknown or incomplete option '%s'", a);
            bad = 1;
        }
    }
    if (!bad && (!in || !out || !kernel)) {
        snprintf(err, sizeof err, "filter needs IN, OUT and --kernel");
        bad = 1;
    }
    if (!bad && (repeat < 1 || repeat > 100000)) {
        snprintf(err, sizeof err, "--repeat %d: must be 1..100000", repeat);
        bad = 1;
    }
    if (fail_all(bad, err, 2)) {
        usage();
        MPI_Finalize();
        return 2;
    }
    /* header and mask: every rank reads them itself */
    tc_dtype dt = TC_FLOAT32;
    int nd = 0;
    int64_t shape[3] = {1, 1, 1}, off = 0;
    bad = npy_header(in, &dt, &nd, shape, &off, err, sizeof err) != 0;
    double *md = NULL;
    int64_t mshape[3] = {1, 1, 1};
    void *mask = NULL;
    if (!bad) {
        if (tool_mask_is_named(kernel)) {
            bad = tool_mask_build(kernel, nd, &md, mshape, err, sizeof err) != 0;
        } else {
            npy_array k;
            memset(&k, 0, sizeof k);
            if (npy_load(kernel, &k, err, sizeof err) != 0 ||
                npy_convert(&k, NPY_F64, err, sizeof err) != 0) {
                bad = 1;
            } else if (k.ndim != nd) {
                snprintf(err, sizeof err, "--kernel '%s' has rank %d, the input %d", kernel, k.ndim,
                         nd);
                bad = 1;
            } else {
                int64_t c = 1;
                for (int i = 0; i < nd; i++) {
                    mshape[i] = k.shape[i];
                    c *= k.shape[i];
                }
                md = malloc((size_t)c * sizeof(double));
                if (md) memcpy(md, k.data, (size_t)c * sizeof(double));
            }
            npy_free(&k);
        }
    }
    if (fail_all(bad, err, 1)) {
        free(md);
        MPI_Finalize();
        return 1;
    }
    int64_t mcount = mshape[0] * mshape[1] * mshape[2];
    size_t es = dt == TC_FLOAT32 ? 4 : 8;
    mask = malloc((size_t)mcount * es);
    for (int64_t i = 0; i < mcount; i++) {
        if (dt == TC_FLOAT32) ((float *)mask)[i] = (float)md[i];
        else ((double *)mask)[i] = md[i];
    }
    free(md);
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.dtype = dt;
    d.ndim = nd;
    for (int i = 0; i < nd; i++) {
        d.shape[i] = shape[i];
        d.mask_shape[i] = mshape[i];
    }
    d.kind = correlate ? TC_FILTER_CORRELATE : TC_FILTER_CONVOLVE;
    d.mode = mode;
    d.cval = cval;
    if (origin) {
        char *p = (char *)origin;
        for (int i = 0; i < nd; i++) {
            d.origin[i] = strtoll(p, &p, 10);
            if (*p == ',') p++;
            else if (i + 1 < nd) {
                for (int j = i + 1; j < nd; j++) d.origin[j] = d.origin[i];
                break;
            }
        }
    }
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = algo;
    tc_mpi_options mo;
    tc_mpi_options_init(&mo);
    mo.threads = threads;
    mo.progress = progress;
    if (backend == TC_BACKEND_AUTO) { /* GPUs when every rank has one */
        int devs = tc_cuda_device_count(), least = 0;
        MPI_Allreduce(&devs, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        backend = least > 0 ? TC_BACKEND_CUDA : TC_BACKEND_CPU;
    }
    mo.backend = backend;
    int64_t bfirst[3] = {0, 0, 0}, bcount[3] = {1, 1, 1};
    bad = 0;
    if (grid) {
        char *p = (char *)grid;
        for (int i = 0; i < 3 && *p; i++) {
            mo.grid[i] = (int)strtol(p, &p, 10);
            if (*p == 'x' || *p == 'X') p++;
            else if (*p) break;
        }
        if (*p || mo.grid[0] < 1) {
            snprintf(err, sizeof err, "--grid '%s': expected ranks per axis, e.g. 2x2 or 2x1x2",
                     grid);
            bad = 1;
        }
    }
    if (boxes && !bad) {
        /* rank r's entry: the r-th '/'-separated list of F+N per axis */
        int entries = 1;
        for (const char *c = boxes; *c; c++) entries += *c == '/';
        const char *e = boxes;
        for (int r = 0; r < rank && e; r++) {
            e = strchr(e, '/');
            if (e) e++;
        }
        char *p = (char *)e;
        int axes = 0;
        while (p && *p && *p != '/' && axes < 3) {
            bfirst[axes] = strtoll(p, &p, 10);
            if (*p != '+') break;
            bcount[axes] = strtoll(p + 1, &p, 10);
            axes++;
            if (*p == ',') p++;
        }
        if (entries != size) {
            snprintf(err, sizeof err, "--boxes lists %d boxes for %d ranks", entries, size);
            bad = 1;
        } else if (axes != nd || (p && *p && *p != '/')) {
            snprintf(err, sizeof err, "--boxes: rank %d's entry '%.*s' is not %d first+count "
                     "pairs", rank, (int)strcspn(e, "/"), e, nd);
            bad = 1;
        } else {
            mo.box_first = bfirst;
            mo.box_count = bcount;
        }
    }
    if (fail_all(bad, err, 2)) {
        free(mask);
        MPI_Finalize();
        return 2;
    }
    tc_mpi_plan *pl = NULL;
    tc_status st = tc_mpi_plan_filter_ex(&pl, MPI_COMM_WORLD, &d, mask, &o, &mo);
    if (st != TC_OK) {
        if (rank == 0) fprintf(stderr, "tileconv-mpi: cannot plan: %s\n", tc_mpi_last_error());
        free(mask);
        MPI_Finalize();
        return 1;
    }
    int64_t first[3], count[3];
    tc_mpi_local_box(pl, first, count);
    int64_t elems = count[0] * count[1] * count[2];
    size_t bytes = (size_t)elems * es;
    void *x = malloc(bytes ? bytes : 1), *y = malloc(bytes ? bytes : 1);
    /* this rank's box of the file: a subarray view after the header */
    MPI_Datatype et = dt == TC_FLOAT32 ? MPI_FLOAT : MPI_DOUBLE, ftype = MPI_DATATYPE_NULL;
    {
        int gs[3], bs[3], bf[3];
        for (int i = 0; i < 3; i++) {
            gs[i] = (int)shape[i];
            bs[i] = (int)count[i];
            bf[i] = (int)first[i];
        }
        MPI_Type_create_subarray(3, gs, bs, bf, MPI_ORDER_C, et, &ftype);
        MPI_Type_commit(&ftype);
    }
    MPI_File fh;
    bad = !x || !y || elems > INT_MAX;
    snprintf(err, sizeof err, "rank %d: out of memory or a box over 2^31 elements", rank);
    if (!bad && MPI_File_open(MPI_COMM_WORLD, in, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) !=
                    MPI_SUCCESS) {
        bad = 1;
        snprintf(err, sizeof err, "cannot open '%s' with MPI-IO", in);
    } else if (!bad) {
        MPI_Status ms;
        int rc = MPI_File_set_view(fh, (MPI_Offset)off, et, ftype, "native", MPI_INFO_NULL);
        if (rc == MPI_SUCCESS) rc = MPI_File_read_all(fh, x, (int)elems, et, &ms);
        int got = 0;
        if (rc == MPI_SUCCESS) MPI_Get_count(&ms, et, &got);
        if (rc != MPI_SUCCESS || got != (int)elems) {
            bad = 1;
            snprintf(err, sizeof err, "'%s': rank %d read %d of the %lld elements of its box", in,
                     rank, got, (long long)elems);
        }
        MPI_File_close(&fh);
    }
    if (fail_all(bad, err, 1)) {
        tc_mpi_plan_destroy(pl);
        MPI_Type_free(&ftype);
        free(x); free(y); free(mask);
        MPI_Finalize();
        return 1;
    }
    double best = 1e30;
    for (int r = 0; r < repeat && st == TC_OK; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        st = tc_mpi_execute_filter(pl, y, x);
        double t = MPI_Wtime() - t0, tmax = 0;
        MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (tmax < best) best = tmax;
    }
    snprintf(err, sizeof err, "execute failed (status %d)", (int)st);
    if (fail_all(st != TC_OK, err, 1)) {
        tc_mpi_plan_destroy(pl);
        MPI_Type_free(&ftype);
        free(x); free(y); free(mask);
        MPI_Finalize();
        return 1;
    }
    /* output: header by rank 0 into a temporary name, rows by everyone */
    char tmp[4200];
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", out, pid);
    int64_t hdr = 0;
    bad = 0;
    if (rank == 0) {
        FILE *f = fopen(tmp, "wb");
        if (!f || npy_write_header(f, dt == TC_FLOAT64 ? NPY_F64 : NPY_F32, nd, shape, NULL,
                                   0) != 0) {
            bad = 1;
            snprintf(err, sizeof err, "cannot write '%.300s': %s", tmp, strerror(errno));
        }
        if (f) {
            hdr = ftell(f);
            if (fclose(f) != 0) bad = 1;
        }
    }
    MPI_Bcast(&hdr, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (!fail_all(bad, err, 1)) {
        if (MPI_File_open(MPI_COMM_WORLD, tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
            bad = 1;
            snprintf(err, sizeof err, "cannot open '%.300s' with MPI-IO for writing", tmp);
        } else {
            int rc = MPI_File_set_view(fh, (MPI_Offset)hdr, et, ftype, "native", MPI_INFO_NULL);
            if (rc == MPI_SUCCESS)
                rc = MPI_File_write_all(fh, y, (int)elems, et, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) {
                bad = 1;
                snprintf(err, sizeof err, "rank %d: writing its box of '%.300s' failed", rank,
                         tmp);
            }
            MPI_File_close(&fh);
        }
        bad = fail_all(bad, err, 1);
    } else {
        bad = 1;
    }
    if (rank == 0) {
        if (!bad && rename(tmp, out) != 0) {
            fprintf(stderr, "tileconv-mpi: cannot rename '%s' to '%s': %s\n", tmp, out,
                    strerror(errno));
            bad = 1;
        }
        if (bad) unlink(tmp);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!bad && stats) {
        tc_mpi_stats s;
        tc_mpi_plan_stats(pl, &s);
        double hid = s.hidden, hmin = 0, wmax = 0, emax = 0, hc = s.hidden_cpu, hcmin = 0;
        int prg = s.progress, prgmin = 0;
        MPI_Reduce(&hid, &hmin, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        MPI_Reduce(&hc, &hcmin, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        MPI_Reduce(&prg, &prgmin, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
        MPI_Reduce(&s.wait_s, &wmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&s.exposed_s, &emax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            char g[40] = "boxes";
            if (s.grid[0]) snprintf(g, sizeof g, "%dx%dx%d", s.grid[0], s.grid[1], s.grid[2]);
            fprintf(stderr,
                    "algorithm=%s backend=%s ranks=%d grid=%s box0=%lldx%lldx%lld "
                    "halo=%lld+%lld,%lld+%lld,%lld+%lld messages_rank0=%d pieces_rank0=%d "
                    "halo_bytes_rank0=%.0f best_ms=%.4f exchange_ms=%.4f wait_ms_max=%.4f "
                    "exposed_ms_max=%.4f compute_ms=%.4f chunks_rank0=%d hidden_min=%.3f "
                    "progress_rank0=%d progress_all=%d progress_ms_rank0=%.4f "
                    "hidden_cpu_min=%.3f\n",
                    tc_mpi_plan_algorithm(pl), tc_backend_name(backend), s.ranks, g,
                    (long long)s.box_count[0], (long long)s.box_count[1],
                    (long long)s.box_count[2], (long long)s.halo_before[0],
                    (long long)s.halo_after[0], (long long)s.halo_before[1],
                    (long long)s.halo_after[1], (long long)s.halo_before[2],
                    (long long)s.halo_after[2], s.messages, s.pieces, s.halo_bytes, best * 1e3,
                    s.exchange_s * 1e3, wmax * 1e3, emax * 1e3, s.compute_s * 1e3, s.chunks,
                    hmin, s.progress, prgmin, s.progress_s * 1e3, hcmin);
        }
    }
    tc_mpi_plan_destroy(pl);
    MPI_Type_free(&ftype);
    free(x);
    free(y);
    free(mask);
    MPI_Finalize();
    return bad ? 1 : 0;
}
