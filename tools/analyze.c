/*
 * analyze.c - `tileconv analyze`: how much global-memory traffic a tiled
 * convolution saves, counted by simulating the loads.
 *
 * The model is the seeds' (000: PMPP convolution chapter; 001: ECE408
 * lecture 9; 003: 3D report). A thread block owns an output tile of TILE^d
 * elements; its threads load the input tile, (TILE + MASK - 1)^d cells
 * with the halo, once into shared memory (one thread per cell: the
 * "block = input tile" mapping). A cell inside the array costs one global
 * load; a ghost cell outside it is set to 0 without one. Each output then
 * reads its MASK^d taps from the tile; every tap that hits an array element
 * is a global access the untiled kernel (with its bounds check) would have
 * made. The bandwidth reduction of a tile is accesses / loads.
 *
 * The simulation walks those loops literally; the closed forms are printed
 * beside it and must agree. On a CPU the same arithmetic describes a cache
 * tile: "global load" = a miss to DRAM, "shared memory" = L1/L2.
 */
#include "analyze.h"
#include "ceilings.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tileconv.h"

#define AN_FLOP_PER_LOAD 2.0  /* untiled: one multiply + one add per load */
#define AN_BYTES_PER_LOAD 4.0 /* one float */
#define AN_NTILES 4           /* tiles per axis in the boundary walks */

typedef struct an_counts {
    int64_t loads;    /* global loads into the tile buffer */
    int64_t accesses; /* mask taps served from the buffer instead */
} an_counts;

static double an_ratio(an_counts c) {
    return c.loads > 0 ? (double)c.accesses / (double)c.loads : 0.0;
}

static int64_t an_pow(int64_t x, int d) {
    int64_t r = 1;
    while (d-- > 0) r *= x;
    return r;
}

/* ---- the simulation ---- */

/* One tile at tile coordinates tpos[] of a d-dimensional cube array of
 * extent n per axis. Unused axes have extent 1 and a 1-wide mask. */
static an_counts an_sim_tile(int dims, int64_t tile, int64_t mask, int64_t n,
                             const int64_t tpos[3]) {
    int64_t T[3], M[3], N[3], o0[3], h[3], W[3];
    for (int a = 0; a < 3; a++) {
        int used = a < dims;
        T[a] = used ? tile : 1;
        M[a] = used ? mask : 1;
        N[a] = used ? n : 1;
        o0[a] = used ? tpos[a] * tile : 0;
        h[a] = M[a] / 2; /* the seeds' index_input = index_output - MASK/2 */
        W[a] = T[a] + M[a] - 1;
    }
#define AN_IN(g, a) ((g) >= 0 && (g) < N[a])
    an_counts c = {0, 0};
    /* Load phase: thread (z, y, x) of the input-tile block fetches one
     * cell, from global memory unless it is a ghost. */
    for (int64_t z = 0; z < W[0]; z++) {
        int64_t gz = o0[0] - h[0] + z;
        for (int64_t y = 0; y < W[1]; y++) {
            int64_t gy = o0[1] - h[1] + y;
            for (int64_t x = 0; x < W[2]; x++) {
                int64_t gx = o0[2] - h[2] + x;
                if (AN_IN(gz, 0) && AN_IN(gy, 1) && AN_IN(gx, 2)) c.loads++;
            }
        }
    }
    /* Compute phase: every output of the tile reads MASK^d taps. */
    for (int64_t pz = o0[0]; pz < o0[0] + T[0] && pz < N[0]; pz++)
        for (int64_t py = o0[1]; py < o0[1] + T[1] && py < N[1]; py++)
            for (int64_t px = o0[2]; px < o0[2] + T[2] && px < N[2]; px++)
                for (int64_t r = 0; r < M[0]; r++) {
                    if (!AN_IN(pz - h[0] + r, 0)) continue;
                    for (int64_t s = 0; s < M[1]; s++) {
                        if (!AN_IN(py - h[1] + s, 1)) continue;
                        for (int64_t t = 0; t < M[2]; t++)
                            if (AN_IN(px - h[2] + t, 2)) c.accesses++;
                    }
                }
#undef AN_IN
    return c;
}

/* Closed form of the same counts, ghost-aware: the bounds checks are per
 * axis, so counts are products of per-axis counts. On an axis where the
 * tile is first, h = MASK/2 halo cells are ghosts and the first h outputs
 * lose h, h-1, ..., 1 taps: h(h+1)/2 (needs TILE >= h); likewise on the
 * last tile with MASK-1-h. An interior tile gives the seeds' formulas. */
static an_counts an_formula_tile(int dims, int64_t tile, int64_t mask,
                                 int64_t ntiles, const int64_t tpos[3]) {
    an_counts c = {1, 1};
    int64_t h = mask / 2, r = mask - 1 - h;
    for (int a = 0; a < dims; a++) {
        int first = tpos[a] == 0, last = tpos[a] == ntiles - 1;
        c.loads *= tile + mask - 1 - (first ? h : 0) - (last ? r : 0);
        c.accesses *= tile * mask - (first ? h * (h + 1) / 2 : 0) -
                      (last ? r * (r + 1) / 2 : 0);
    }
    return c;
}

/* The interior tile: the middle of a 3-tile-wide array (TILE >= MASK/2). */
static an_counts an_sim_interior(int dims, int64_t tile, int64_t mask) {
    const int64_t mid[3] = {1, 1, 1};
    return an_sim_tile(dims, tile, mask, 3 * tile, mid);
}

static double an_formula_reduction(int dims, int64_t tile, int64_t mask) {
    double t = (double)tile, m = (double)mask;
    return pow(t * m / (t + m - 1), dims);
}

/* ---- seed tables ---- */

typedef struct an_red_row {
    int dims;
    int64_t tile, mask;
    an_counts sim;
    double red_sim, red_formula;
    const char *seed;  /* as printed in seed 001, or NULL */
    int seed_status;   /* AN_SEED_* */
} an_red_row;

enum { AN_SEED_NONE, AN_SEED_MATCH, AN_SEED_SLIP, AN_SEED_MISMATCH };
static const char *const an_seed_status_name[] = {"none", "match", "slip",
                                                  "mismatch"};

/* Rounds half away from zero, as the seeds' tables appear to. */
static double an_round(double x, int digits) {
    double s = pow(10.0, digits);
    return floor(x * s + 0.5) / s;
}

static int an_seed_digits(const char *seed) {
    const char *dot = strchr(seed, '.');
    return dot ? (int)strlen(dot + 1) : 0;
}

/* match: our value rounds to the seed's figure at its precision; slip: it
 * does not, but lies within one unit of the seed's last digit (a rounding
 * slip in the seed); mismatch otherwise. */
static int an_seed_compare(double value, const char *seed) {
    if (!seed) return AN_SEED_NONE;
    int d = an_seed_digits(seed);
    double s = strtod(seed, NULL);
    if (fabs(an_round(value, d) - s) < 1e-9) return AN_SEED_MATCH;
    if (fabs(value - s) < pow(10.0, -d)) return AN_SEED_SLIP;
    return AN_SEED_MISMATCH;
}

static const int64_t an_tiles_1d[] = {16, 32, 64, 128, 256};
static const int64_t an_tiles_2d[] = {8, 16, 32, 64};
static const int64_t an_tiles_3d[] = {4, 8, 16};
static const int64_t an_masks_12[] = {5, 9};
static const int64_t an_masks_3d[] = {3, 5, 9};
static const char *const an_seed_1d[2][5] = {
    {"4.0", "4.4", "4.7", "4.9", "4.9"}, {"6.0", "7.2", "8.0", "8.5", "8.7"}};
static const char *const an_seed_2d[2][4] = {
    {"11.1", "16", "19.7", "22.1"}, {"20.3", "36", "51.8", "64"}};

#define AN_MAX_RED 16
typedef struct an_red_table {
    int dims, n;
    an_red_row rows[AN_MAX_RED];
} an_red_table;

static void an_fill_table(an_red_table *t, int dims, const int64_t *tiles,
                          int ntiles, const int64_t *masks, int nmasks,
                          const char *const *seeds) {
    t->dims = dims;
    t->n = 0;
    for (int m = 0; m < nmasks; m++)
        for (int i = 0; i < ntiles; i++) {
            an_red_row *r = &t->rows[t->n++];
            r->dims = dims;
            r->tile = tiles[i];
            r->mask = masks[m];
            r->sim = an_sim_interior(dims, r->tile, r->mask);
            r->red_sim = an_ratio(r->sim);
            r->red_formula = an_formula_reduction(dims, r->tile, r->mask);
            r->seed = seeds ? seeds[m * ntiles + i] : NULL;
            r->seed_status = an_seed_compare(r->red_sim, r->seed);
        }
}

/* ---- boundary walks ---- */

typedef struct an_class {
    int nbound;           /* axes on which the tile touches the array edge */
    int64_t tiles;        /* how many tiles of the walk fall in the class */
    int64_t rep[3];       /* the first such tile (lowest coordinates) */
    an_counts sim, formula; /* of that tile */
    int uniform;          /* 1: every tile of the class counted the same */
} an_class;

typedef struct an_walk {
    int dims;
    int64_t tile, mask, ntiles;
    an_class cls[4];      /* indexed by nbound */
    an_counts total;      /* over the whole array */
    int formula_ok;       /* closed form == simulation for every tile */
} an_walk;

static const char *an_class_name(int dims, int nbound) {
    static const char *const names[4][4] = {
        {"", "", "", ""},
        {"interior", "left boundary", "", ""},
        {"interior", "edge", "corner", ""},
        {"interior", "face", "edge", "corner"}};
    return names[dims][nbound];
}

static void an_walk_array(an_walk *w, int dims, int64_t tile, int64_t mask) {
    memset(w, 0, sizeof *w);
    w->dims = dims;
    w->tile = tile;
    w->mask = mask;
    w->ntiles = AN_NTILES;
    w->formula_ok = 1;
    int64_t n = w->ntiles * tile, count = an_pow(w->ntiles, dims);
    for (int64_t k = 0; k < count; k++) {
        int64_t tpos[3] = {0, 0, 0}, rest = k;
        int nb = 0;
        for (int a = dims - 1; a >= 0; a--) {
            tpos[a] = rest % w->ntiles;
            rest /= w->ntiles;
            nb += tpos[a] == 0 || tpos[a] == w->ntiles - 1;
        }
        an_counts s = an_sim_tile(dims, tile, mask, n, tpos);
        an_counts f = an_formula_tile(dims, tile, mask, w->ntiles, tpos);
        if (s.loads != f.loads || s.accesses != f.accesses) w->formula_ok = 0;
        w->total.loads += s.loads;
        w->total.accesses += s.accesses;
        an_class *c = &w->cls[nb];
        if (c->tiles++ == 0) {
            c->nbound = nb;
            memcpy(c->rep, tpos, sizeof tpos);
            c->sim = s;
            c->formula = f;
            c->uniform = 1;
        } else if (s.loads != c->sim.loads || s.accesses != c->sim.accesses) {
            c->uniform = 0;
        }
    }
}

typedef struct an_walk_case {
    int dims;
    int64_t tile, mask;
} an_walk_case;
static const an_walk_case an_walk_cases[] = {
    {1, 8, 5}, {1, 16, 9}, {2, 8, 5}, {2, 16, 9},
    {3, 4, 3}, {3, 4, 5}, {3, 8, 5}};
#define AN_NWALKS (int)(sizeof an_walk_cases / sizeof an_walk_cases[0])

/* ---- ceilings: reuse needed, fraction of peak ---- */

typedef struct an_ceiling {
    char name[64];
    char label[16]; /* short column title */
    const char *kind; /* "seed", "cpu", "gpu" */
    double flops, bytes_per_s;
    const char *seed_reuse; /* the seed's figure, or NULL */
} an_ceiling;

static double an_reuse_needed(const an_ceiling *c) {
    return c->flops / (c->bytes_per_s / AN_BYTES_PER_LOAD * AN_FLOP_PER_LOAD);
}

typedef struct an_frac_row {
    int dims;
    int64_t mask, tile;
    double red; /* simulated interior reduction */
    const char *seed[2]; /* seed 001's 2010 and 2020 columns */
} an_frac_row;

/* Typical tiles: the largest output tile of a 1024-thread block (1D 1024,
 * 2D 32x32), and 8^3 (512 threads) in 3D. With them the 1D and 2D rows
 * reproduce seed 001's table. */
static an_frac_row an_frac_rows[] = {
    {1, 5, 1024, 0, {"37%", "9.6%"}},  {1, 9, 1024, 0, {"67%", "17%"}},
    {1, 15, 1024, 0, {"100%", "28%"}}, {1, 55, 1024, 0, {"100%", "100%"}},
    {2, 3, 32, 0, {"60%", "15%"}},     {2, 5, 32, 0, {"100%", "37%"}},
    {2, 7, 32, 0, {"100%", "67%"}},    {2, 9, 32, 0, {"100%", "almost 100%"}},
    {3, 3, 8, 0, {NULL, NULL}},        {3, 5, 8, 0, {NULL, NULL}},
};
#define AN_NFRAC (int)(sizeof an_frac_rows / sizeof an_frac_rows[0])
static const int64_t an_typical_tile[4] = {0, 1024, 32, 8};

static double an_fraction(double red, const an_ceiling *c) {
    double f = red / an_reuse_needed(c);
    return f > 1.0 ? 1.0 : f;
}

/* Smallest odd MASK whose interior reduction at the typical tile reaches
 * the reuse this ceiling needs (0: none up to 255). */
static int64_t an_mask_for_peak(int dims, const an_ceiling *c) {
    for (int64_t m = 1; m <= 255; m += 2)
        if (an_formula_reduction(dims, an_typical_tile[dims], m) >=
            an_reuse_needed(c))
            return m;
    return 0;
}

/* ==== GPU HOOK ==== */
#define AN_MAX_GPUS 8
static an_ceiling an_gpus[AN_MAX_GPUS];
static int an_ngpus;

int tc_tool_analyze_add_gpu(const char *name, double flops, double bytes_per_s) {
    if (!name || !(flops > 0) || !(bytes_per_s > 0) || an_ngpus >= AN_MAX_GPUS)
        return -1;
    an_ceiling *g = &an_gpus[an_ngpus++];
    snprintf(g->name, sizeof g->name, "%s", name);
    snprintf(g->label, sizeof g->label, "%s", name);
    g->kind = "gpu";
    g->flops = flops;
    g->bytes_per_s = bytes_per_s;
    g->seed_reuse = NULL;
    return 0;
}

/* Called when tc_cuda_device_count() > 0. Once the CUDA backend can report
 * a device's nominal FP32 peak (SMs x FP32 lanes/SM x 2 x clock) and memory
 * bandwidth (bus width x memory clock x 2), call tc_tool_analyze_add_gpu()
 * here for each device. Until then GPUs are counted but get no rows. */
static void an_gpu_hook(int ndevices) { (void)ndevices; }

/* ---- output: text ---- */

static void an_print_red_table(FILE *o, const an_red_table *t) {
    fprintf(o, "  TILE MASK     loads    accesses  simulated   formula  %s\n",
            t->dims == 3 ? "block threads, input tile bytes" : "seed 001");
    for (int i = 0; i < t->n; i++) {
        const an_red_row *r = &t->rows[i];
        fprintf(o, "  %4lld %4lld %9lld %11lld %10.3f %9.3f", (long long)r->tile,
                (long long)r->mask, (long long)r->sim.loads,
                (long long)r->sim.accesses, r->red_sim, r->red_formula);
        if (r->seed)
            fprintf(o, "  %s%s", r->seed,
                    r->seed_status == AN_SEED_MATCH  ? ""
                    : r->seed_status == AN_SEED_SLIP ? " (*)"
                                                     : " MISMATCH");
        if (t->dims == 3) {
            int64_t w = an_pow(r->tile + r->mask - 1, 3);
            fprintf(o, "  %5lld%s %6.1f KiB%s", (long long)w,
                    w > 1024 ? " (>1024)" : "        ", (double)(w * 4) / 1024.0,
                    r->tile == 4 && (r->mask == 3 || r->mask == 5) ? "  <- seed 003" : "");
        }
        fputc('\n', o);
    }
    for (int i = 0; i < t->n; i++) {
        const an_red_row *r = &t->rows[i];
        if (r->seed_status == AN_SEED_SLIP)
            fprintf(o, "  (*) TILE %lld MASK %lld: seed 001 prints %s; the exact value "
                    "%lld/%lld = %.4f rounds to %.*f (a rounding slip in the seed).\n",
                    (long long)r->tile, (long long)r->mask, r->seed,
                    (long long)r->sim.accesses, (long long)r->sim.loads, r->red_sim,
                    an_seed_digits(r->seed), an_round(r->red_sim, an_seed_digits(r->seed)));
    }
}

static void an_print_walk(FILE *o, const an_walk *w) {
    fprintf(o, "  %dD, TILE %lld, MASK %lld, array of %lld^%d tiles (%lld elements per axis):\n",
            w->dims, (long long)w->tile, (long long)w->mask, (long long)w->ntiles,
            w->dims, (long long)(w->ntiles * w->tile));
    for (int nb = 0; nb <= w->dims; nb++) {
        const an_class *c = &w->cls[nb];
        if (c->tiles == 0) continue;
        fprintf(o, "    %-14s %3lld tiles  loads %7lld  accesses %9lld  reduction %7.3f"
                "  (formula %lld/%lld)%s\n",
                an_class_name(w->dims, nb), (long long)c->tiles, (long long)c->sim.loads,
                (long long)c->sim.accesses, an_ratio(c->sim), (long long)c->formula.accesses,
                (long long)c->formula.loads, c->uniform ? "" : "  [tiles differ]");
    }
    fprintf(o, "    whole array    loads %lld, accesses %lld, reduction %.3f; "
            "closed form %s every tile\n",
            (long long)w->total.loads, (long long)w->total.accesses, an_ratio(w->total),
            w->formula_ok ? "matches" : "DIFFERS on some");
}

/* Percent with 1 decimal below 10% and in [99.5%, 100%), where an integer
 * would hide it (seed 001 writes "almost 100%"); integers elsewhere. */
static void an_fmt_pct(char *buf, size_t size, double f) {
    if (f * 100 < 9.95 || (f < 1.0 && f * 100 >= 99.5))
        snprintf(buf, size, "%.1f%%", an_round(f * 100, 1));
    else
        snprintf(buf, size, "%.0f%%", an_round(f * 100, 0));
}

/* ---- output: JSON ---- */

typedef struct an_json {
    FILE *f;
    int depth;
    int first[16];
} an_json;

static void an_j_key(an_json *j, const char *key) {
    if (!j->first[j->depth]) fputc(',', j->f);
    j->first[j->depth] = 0;
    fprintf(j->f, "\n%*s", 2 * j->depth, "");
    if (key) fprintf(j->f, "\"%s\": ", key);
}
static void an_j_open(an_json *j, const char *key, char brace) {
    an_j_key(j, key);
    fputc(brace, j->f);
    j->first[++j->depth] = 1;
}
static void an_j_close(an_json *j, char brace) {
    j->depth--;
    fprintf(j->f, "\n%*s%c", 2 * j->depth, "", brace);
}
static void an_j_num(an_json *j, const char *key, double v) {
    an_j_key(j, key);
    if (isfinite(v))
        fprintf(j->f, "%.10g", v);
    else
        fputs("null", j->f);
}
static void an_j_int(an_json *j, const char *key, int64_t v) {
    an_j_key(j, key);
    fprintf(j->f, "%lld", (long long)v);
}
static void an_j_str(an_json *j, const char *key, const char *s) {
    an_j_key(j, key);
    if (!s) {
        fputs("null", j->f);
        return;
    }
    fputc('"', j->f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(j->f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(j->f, "\\u%04x", *s);
        else
            fputc(*s, j->f);
    }
    fputc('"', j->f);
}
static void an_j_counts(an_json *j, const char *key, an_counts c) {
    an_j_open(j, key, '{');
    an_j_int(j, "loads", c.loads);
    an_j_int(j, "accesses", c.accesses);
    an_j_num(j, "reduction", an_ratio(c));
    an_j_close(j, '}');
}

/* ---- the tool ---- */

typedef struct an_report {
    an_red_table red[4]; /* by dims */
    an_walk walks[AN_NWALKS];
    an_ceiling ceil[2 + 1 + AN_MAX_GPUS];
    int nceil;
    int measured, ngpu_devices;
    double busy_before; /* CPU busy fraction just before measuring, -1 unknown */
    tc_tool_ceilings machine;
} an_report;

static const char *const an_notes[] = {
    "Counts are simulated: the input-tile block loads (TILE+MASK-1)^d cells, ghost cells "
    "outside the array cost no global load; each output reads MASK^d taps from the tile, "
    "and each tap that hits an array element replaces one global access.",
    "Seed 001 prints the 2D reduction upside down, as (TILE+MASK-1)^2/(TILE*MASK)^2; its "
    "table's numbers follow the correct TILE^2*MASK^2/(TILE+MASK-1)^2.",
    "Seed 000 writes the boundary example as '37/12 = 3.7'; 37/12 is 3.08. The boundary "
    "tile loads TILE+(MASK-1)/2 = 10 cells, so 37/10 = 3.7 (as seed 001 has it).",
    "Seed 001's tables have two rounding slips: 1D TILE 128 MASK 5 is 640/132 = 4.848 "
    "(printed 4.9) and 2D TILE 32 MASK 5 is 25600/1296 = 19.753 (printed 19.7).",
    "Fraction of peak = min(1, reduction / reuse needed); reuse needed = FLOP/s / "
    "(bytes/s / 4 B per load * 2 FLOP per load).",
};
#define AN_NNOTES (int)(sizeof an_notes / sizeof an_notes[0])

static void an_print_text(FILE *o, const an_report *R) {
    fprintf(o, "tileconv analyze: tiled convolution bandwidth analysis (tileconv %s)\n",
            tc_version());
    fprintf(o, "%s\n\n", an_notes[0]);

    fprintf(o, "1. 1D bandwidth reduction, interior tile (seed 001)\n"
               "   formula TILE*MASK/(TILE+MASK-1)\n");
    an_print_red_table(o, &R->red[1]);
    fprintf(o, "\n2. 2D bandwidth reduction, interior tile (seed 001)\n"
               "   formula TILE^2*MASK^2/(TILE+MASK-1)^2\n");
    an_print_red_table(o, &R->red[2]);
    fprintf(o, "  note: %s\n", an_notes[1]);

    fprintf(o, "\n3. Interior vs boundary tiles (ghost cells cost no global load)\n");
    const an_walk *w0 = &R->walks[0];
    fprintf(o, "  seed example, 1D TILE 8 MASK 5: interior %lld/%lld = %.1fx, "
               "left boundary tile %lld/%lld = %.1fx\n"
               "  (%lld = %lld taps minus %lld ghost taps; %lld = TILE + (MASK-1)/2 loads)\n"
               "  note: %s\n",
            (long long)w0->cls[0].sim.accesses, (long long)w0->cls[0].sim.loads,
            an_round(an_ratio(w0->cls[0].sim), 1), (long long)w0->cls[1].sim.accesses,
            (long long)w0->cls[1].sim.loads, an_round(an_ratio(w0->cls[1].sim), 1),
            (long long)w0->cls[1].sim.accesses, (long long)(w0->tile * w0->mask),
            (long long)(w0->tile * w0->mask - w0->cls[1].sim.accesses),
            (long long)w0->cls[1].sim.loads, an_notes[2]);
    for (int i = 0; i < AN_NWALKS; i++) an_print_walk(o, &R->walks[i]);

    fprintf(o, "\n4. 3D bandwidth reduction, interior tile\n"
               "   formula TILE^3*MASK^3/(TILE+MASK-1)^3; a block of the input-tile mapping\n"
               "   has (TILE+MASK-1)^3 threads; the input tile holds as many floats\n");
    an_print_red_table(o, &R->red[3]);
    fprintf(o, "  seed 003 chose TILE 4 because TILE 8 with MASK 5 needs a 12^3 = 1728-thread "
               "block, over the 1024 limit.\n");

    fprintf(o, "\n5. Reuse needed to be compute-bound (untiled: %.0f FLOP per %.0f-byte load)\n",
            AN_FLOP_PER_LOAD, AN_BYTES_PER_LOAD);
    fprintf(o, "  %-36s %11s %10s %8s  %s\n", "ceiling", "GFLOP/s", "GB/s", "reuse", "seed");
    for (int i = 0; i < R->nceil; i++) {
        const an_ceiling *c = &R->ceil[i];
        fprintf(o, "  %-36s %11.1f %10.2f %7.1fx%s%s\n", c->name, c->flops / 1e9,
                c->bytes_per_s / 1e9, an_round(an_reuse_needed(c), 1),
                c->seed_reuse ? "  " : "", c->seed_reuse ? c->seed_reuse : "");
    }
    if (R->measured) {
        const tc_tool_ceilings *m = &R->machine;
        fprintf(o, "  this CPU: %d threads%s, FMA kernel %s, best of %d runs.\n"
                   "  copy %zu MiB -> %zu MiB, bytes read + written, best method: %s\n"
                   "  (regular stores %.2f, non-temporal %.2f, memcpy %.2f GB/s);"
                   " read-only stream %.2f GB/s\n",
                m->threads, m->pinned ? " (pinned)" : " (NOT pinned)", m->isa, m->repeats,
                m->stream_bytes >> 20, m->stream_bytes >> 20, m->copy_method,
                m->copy_bytes_per_s / 1e9, m->copy_nt_bytes_per_s / 1e9,
                m->memcpy_bytes_per_s / 1e9, m->read_bytes_per_s / 1e9);
        if (R->busy_before >= 0.1)
            fprintf(o, "  note: the CPUs were %.0f%% busy just before measuring; other work"
                       " lowers both ceilings:\n  rerun on an idle machine\n",
                    100 * R->busy_before);
    } else {
        fprintf(o, "  this CPU: not measured (--no-measure)\n");
    }
    if (R->ngpu_devices <= 0)
        fprintf(o, "  GPU: none detected\n");
    else if (an_ngpus == 0)
        fprintf(o, "  GPU: %d CUDA device(s) detected; no nominal figures yet (see "
                   "an_gpu_hook in tools/analyze.c)\n", R->ngpu_devices);

    fprintf(o, "\n  Fraction of peak a tiled kernel can reach (TILE: 1D 1024, 2D 32x32 = the\n"
               "  largest output tile of a 1024-thread block; 3D 8^3). Seed 001's figure in [].\n");
    fprintf(o, "  dim MASK TILE reduction");
    for (int i = 0; i < R->nceil; i++)
        fprintf(o, " | %-*s", i + 1 < R->nceil ? (i < 2 ? 20 : 9) : 0, R->ceil[i].label);
    fputc('\n', o);
    for (int k = 0; k < AN_NFRAC; k++) {
        const an_frac_row *f = &an_frac_rows[k];
        fprintf(o, "  %2dD %4lld %4lld %9.2f", f->dims, (long long)f->mask,
                (long long)f->tile, f->red);
        for (int i = 0; i < R->nceil; i++) {
            char pct[16], cell[48];
            an_fmt_pct(pct, sizeof pct, an_fraction(f->red, &R->ceil[i]));
            if (i < 2 && f->seed[i])
                snprintf(cell, sizeof cell, "%6s [%s]", pct, f->seed[i]);
            else
                snprintf(cell, sizeof cell, "%6s", pct);
            fprintf(o, " | %-*s", i + 1 < R->nceil ? (i < 2 ? 20 : 9) : 0, cell);
        }
        fputc('\n', o);
    }
    fprintf(o, "  smallest odd MASK that reaches 100%% at those tiles:\n");
    for (int i = 0; i < R->nceil; i++) {
        fprintf(o, "    %-36s", R->ceil[i].name);
        for (int d = 1; d <= 3; d++) {
            int64_t m = an_mask_for_peak(d, &R->ceil[i]);
            if (m > 0)
                fprintf(o, "  %dD %4lld", d, (long long)m);
            else
                fprintf(o, "  %dD >255", d);
        }
        fputc('\n', o);
    }
    fprintf(o, "  note: seed 001's 2D MASK 5 2020 figure is 37%%; TILE 32 gives 37.9%%. No single\n"
               "  TILE reproduces both its MASK 5 and MASK 7 figures; every other cell matches.\n");
}

static void an_json_red_table(an_json *j, const char *key, const an_red_table *t) {
    an_j_open(j, key, '[');
    for (int i = 0; i < t->n; i++) {
        const an_red_row *r = &t->rows[i];
        an_j_open(j, NULL, '{');
        an_j_int(j, "dims", r->dims);
        an_j_int(j, "tile", r->tile);
        an_j_int(j, "mask", r->mask);
        an_j_int(j, "loads", r->sim.loads);
        an_j_int(j, "accesses", r->sim.accesses);
        an_j_int(j, "formula_loads", an_pow(r->tile + r->mask - 1, r->dims));
        an_j_int(j, "formula_accesses", an_pow(r->tile * r->mask, r->dims));
        an_j_num(j, "simulated", r->red_sim);
        an_j_num(j, "formula", r->red_formula);
        an_j_str(j, "seed", r->seed);
        an_j_str(j, "seed_status", an_seed_status_name[r->seed_status]);
        if (r->dims == 3) {
            int64_t w = an_pow(r->tile + r->mask - 1, 3);
            an_j_int(j, "block_threads", w);
            an_j_int(j, "tile_bytes_f32", w * 4);
        }
        an_j_close(j, '}');
    }
    an_j_close(j, ']');
}

static void an_json_ceiling(an_json *j, const an_ceiling *c) {
    an_j_str(j, "name", c->name);
    an_j_str(j, "kind", c->kind);
    an_j_num(j, "flops", c->flops);
    an_j_num(j, "bytes_per_s", c->bytes_per_s);
    an_j_num(j, "reuse_needed", an_reuse_needed(c));
    an_j_str(j, "seed", c->seed_reuse);
}

static void an_print_json(FILE *f, const an_report *R) {
    an_json j = {f, 0, {1}};
    an_j_open(&j, NULL, '{');
    an_j_str(&j, "tool", "tileconv analyze");
    an_j_str(&j, "version", tc_version());
    an_j_open(&j, "notes", '[');
    for (int i = 0; i < AN_NNOTES; i++) an_j_str(&j, NULL, an_notes[i]);
    an_j_close(&j, ']');
    an_j_open(&j, "reduction", '{');
    an_json_red_table(&j, "1d", &R->red[1]);
    an_json_red_table(&j, "2d", &R->red[2]);
    an_json_red_table(&j, "3d", &R->red[3]);
    an_j_close(&j, '}');

    an_j_open(&j, "boundary", '[');
    for (int i = 0; i < AN_NWALKS; i++) {
        const an_walk *w = &R->walks[i];
        an_j_open(&j, NULL, '{');
        an_j_int(&j, "dims", w->dims);
        an_j_int(&j, "tile", w->tile);
        an_j_int(&j, "mask", w->mask);
        an_j_int(&j, "tiles_per_axis", w->ntiles);
        an_j_int(&j, "formula_ok", w->formula_ok);
        an_j_open(&j, "classes", '[');
        for (int nb = 0; nb <= w->dims; nb++) {
            const an_class *c = &w->cls[nb];
            if (c->tiles == 0) continue;
            an_j_open(&j, NULL, '{');
            an_j_str(&j, "name", an_class_name(w->dims, nb));
            an_j_int(&j, "boundary_axes", nb);
            an_j_int(&j, "tiles", c->tiles);
            an_j_int(&j, "uniform", c->uniform);
            an_j_counts(&j, "simulated", c->sim);
            an_j_counts(&j, "formula", c->formula);
            an_j_close(&j, '}');
        }
        an_j_close(&j, ']');
        an_j_counts(&j, "total", w->total);
        an_j_close(&j, '}');
    }
    an_j_close(&j, ']');

    an_j_open(&j, "reuse", '{');
    an_j_num(&j, "flop_per_load", AN_FLOP_PER_LOAD);
    an_j_num(&j, "bytes_per_load", AN_BYTES_PER_LOAD);
    an_j_open(&j, "ceilings", '[');
    for (int i = 0; i < R->nceil; i++) {
        an_j_open(&j, NULL, '{');
        an_json_ceiling(&j, &R->ceil[i]);
        an_j_open(&j, "mask_for_peak", '{');
        for (int d = 1; d <= 3; d++) {
            char k[4] = {(char)('0' + d), 'd', 0, 0};
            an_j_int(&j, k, an_mask_for_peak(d, &R->ceil[i]));
        }
        an_j_close(&j, '}');
        an_j_close(&j, '}');
    }
    an_j_close(&j, ']');
    an_j_close(&j, '}');

    if (R->measured) {
        const tc_tool_ceilings *m = &R->machine;
        an_j_open(&j, "machine", '{');
        an_j_int(&j, "threads", m->threads);
        an_j_int(&j, "pinned", m->pinned);
        an_j_str(&j, "isa", m->isa);
        an_j_num(&j, "flops", m->flops);
        an_j_num(&j, "bytes_per_s", m->bytes_per_s);
        an_j_str(&j, "copy_method", m->copy_method);
        an_j_num(&j, "copy_regular_bytes_per_s", m->copy_bytes_per_s);
        an_j_num(&j, "copy_nontemporal_bytes_per_s", m->copy_nt_bytes_per_s);
        an_j_num(&j, "memcpy_bytes_per_s", m->memcpy_bytes_per_s);
        an_j_num(&j, "read_bytes_per_s", m->read_bytes_per_s);
        an_j_int(&j, "stream_bytes", (int64_t)m->stream_bytes);
        an_j_int(&j, "repeats", m->repeats);
        an_j_num(&j, "cpu_busy_before", R->busy_before);
        an_j_close(&j, '}');
    } else {
        an_j_key(&j, "machine");
        fputs("null", f);
    }
    an_j_open(&j, "gpu", '{');
    an_j_int(&j, "devices", R->ngpu_devices);
    an_j_int(&j, "rows", an_ngpus);
    an_j_close(&j, '}');

    an_j_open(&j, "fraction_of_peak", '[');
    for (int k = 0; k < AN_NFRAC; k++) {
        const an_frac_row *fr = &an_frac_rows[k];
        an_j_open(&j, NULL, '{');
        an_j_int(&j, "dims", fr->dims);
        an_j_int(&j, "mask", fr->mask);
        an_j_int(&j, "tile", fr->tile);
        an_j_num(&j, "reduction", fr->red);
        an_j_open(&j, "columns", '[');
        for (int i = 0; i < R->nceil; i++) {
            an_j_open(&j, NULL, '{');
            an_j_str(&j, "ceiling", R->ceil[i].name);
            an_j_num(&j, "fraction", an_fraction(fr->red, &R->ceil[i]));
            an_j_str(&j, "seed", i < 2 ? fr->seed[i] : NULL);
            an_j_close(&j, '}');
        }
        an_j_close(&j, ']');
        an_j_close(&j, '}');
    }
    an_j_close(&j, ']');
    an_j_close(&j, '}');
    fputc('\n', f);
}

static int an_usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("tileconv: analyze: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (see 'tileconv analyze --help')\n", stderr);
    va_end(ap);
    return 2;
}

static void an_help(FILE *o) {
    fputs("usage: tileconv analyze [--no-measure] [--json FILE] [--threads N]\n"
          "       tileconv analyze --layers [--layer N,C,K,G,H[xW[xD]],k,stride,pad[,dil]]...\n"
          "                        [--measure] [--no-measure] [--json FILE] [--threads N]\n"
          "  --layers: seed 002's cost arithmetic per convolution layer (the layer-benchmark\n"
          "  suite, or the --layer ones): FLOPs, minimum bytes, intensity against this\n"
          "  machine's ridge point, im2col's column buffer, Filter2Row's matrix and when it\n"
          "  pays, Winograd F(2,3)/F(4,3)/F(6,3) tiles and multiply reduction, FFT sizes,\n"
          "  the planner's ESTIMATE choice; --measure times every applicable algorithm;\n"
          "  --no-measure skips measuring the ceilings (model values are used).\n"
          "Reproduces the seeds' tiled-convolution analysis: bandwidth reduction of\n"
          "1D/2D/3D tiles (counted by simulating the loads, beside the formulas),\n"
          "interior vs boundary tiles, and the reuse a kernel needs to be\n"
          "compute-bound on the seeds' GPUs and on this machine (measured).\n"
          "  --no-measure   skip measuring this machine (seed rows only; fast)\n"
          "  --json FILE    also write every table as JSON to FILE ('-' = stdout)\n"
          "  --threads N    threads for the measurement (default: all CPUs)\n"
          "       tileconv analyze --gpu-tiles [--gpu h100|h200] [--bench-json FILE] [--json FILE]\n"
          "  --gpu-tiles: for each GPU benchmark case (2D 8192^2 k3/k5/k7, 3D 512^3 k3/k5/k7,\n"
          "  1D 2^26 k31, separable Gaussians) the tile cuda.filter.direct uses (the kernel's\n"
          "  own tile choice, src/cuda/cuda_direct_tile.h), its loads per output by the seeds'\n"
          "  formula and by simulation, bytes per output, and the predicted time at the copy\n"
          "  bandwidth and FP32 peak. No GPU needed: this device's figures when there is one,\n"
          "  else a built-in H100/H200 description (--gpu; default h200). --bench-json: the\n"
          "  output of bench/gpu_bench.cu (or tileconv bench --json) for measured times.\n",
          o);
}

int tc_tool_analyze(int argc, char **argv) {
    for (int i = 1; i < argc; i++) /* the layer section has its own options */
        if (!strcmp(argv[i], "--layers")) return tc_tool_analyze_layers(argc, argv);
    for (int i = 1; i < argc; i++) /* and the GPU-tile section */
        if (!strcmp(argv[i], "--gpu-tiles")) return tc_tool_analyze_gpu(argc, argv);
    int measure = 1, threads = 0;
    const char *json_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            an_help(stdout);
            return 0;
        } else if (!strcmp(a, "--no-measure")) {
            measure = 0;
        } else if (!strncmp(a, "--json", 6) && (a[6] == 0 || a[6] == '=')) {
            val = a[6] ? a + 7 : (i + 1 < argc ? argv[++i] : NULL);
            if (!val || !*val) return an_usage_error("--json needs a file name");
            json_path = val;
        } else if (!strncmp(a, "--threads", 9) && (a[9] == 0 || a[9] == '=')) {
            val = a[9] ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);
            if (!val) return an_usage_error("--threads needs a number");
            char *end;
            errno = 0;
            long t = strtol(val, &end, 10);
            if (errno || end == val || *end || t < 1 || t > 4096)
                return an_usage_error("--threads '%s', must be 1..4096", val);
            threads = (int)t;
        } else if (a[0] == '-') {
            return an_usage_error("unknown option '%s'", a);
        } else {
            return an_usage_error("unexpected argument '%s'", a);
        }
    }

    /* Open the JSON file first: fail before a two-second measurement. */
    FILE *jf = NULL;
    int json_stdout = json_path && !strcmp(json_path, "-");
    if (json_path && !json_stdout && !(jf = fopen(json_path, "w"))) {
        fprintf(stderr, "tileconv: analyze: cannot write '%s': %s\n", json_path,
                strerror(errno));
        return 1;
    }
    if (json_stdout) jf = stdout;
    an_report *R = calloc(1, sizeof *R);
    if (!R) {
        fputs("tileconv: analyze: out of memory\n", stderr);
        if (jf && !json_stdout) fclose(jf);
        return 1;
    }
    an_fill_table(&R->red[1], 1, an_tiles_1d, 5, an_masks_12, 2, &an_seed_1d[0][0]);
    an_fill_table(&R->red[2], 2, an_tiles_2d, 4, an_masks_12, 2, &an_seed_2d[0][0]);
    an_fill_table(&R->red[3], 3, an_tiles_3d, 3, an_masks_3d, 3, NULL);
    for (int i = 0; i < AN_NWALKS; i++)
        an_walk_array(&R->walks[i], an_walk_cases[i].dims, an_walk_cases[i].tile,
                      an_walk_cases[i].mask);
    for (int k = 0; k < AN_NFRAC; k++) {
        an_frac_row *f = &an_frac_rows[k];
        f->red = an_ratio(an_sim_interior(f->dims, f->tile, f->mask));
    }

    R->ceil[0] = (an_ceiling){"2010 GPU (seed 001)", "2010 GPU", "seed", 1000e9, 150e9, "13.3"};
    R->ceil[1] = (an_ceiling){"2020 GPU, GRID K520 (seed 001)", "2020 GPU", "seed", 5000e9, 192e9, "52.1"};
    R->nceil = 2;
    if (measure) {
        /* Other processes on these CPUs lower both ceilings: say so. */
        R->busy_before = tc_tool_cpu_busy(0.2);
        if (tc_tool_measure_ceilings_ex(threads, &R->machine) != 0) {
            fputs("tileconv: analyze: measuring this machine failed (out of memory or "
                  "threads)\n", stderr);
            free(R);
            if (jf && !json_stdout) fclose(jf);
            return 1;
        }
        R->measured = 1;
        an_ceiling *c = &R->ceil[R->nceil++];
        snprintf(c->name, sizeof c->name, "this CPU (%d thr, %s)", R->machine.threads,
                 R->machine.isa);
        snprintf(c->label, sizeof c->label, "this CPU");
        c->kind = "cpu";
        c->flops = R->machine.flops;
        c->bytes_per_s = R->machine.bytes_per_s;
        c->seed_reuse = NULL;
    }
    R->ngpu_devices = tc_cuda_device_count();
    if (R->ngpu_devices > 0) an_gpu_hook(R->ngpu_devices);
    for (int i = 0; i < an_ngpus; i++) R->ceil[R->nceil++] = an_gpus[i];

    an_print_text(stdout, R);
    int rc = 0;
    if (jf) {
        an_print_json(jf, R);
        if (json_stdout ? fflush(jf) != 0 : (ferror(jf) | fclose(jf)) != 0) {
            fprintf(stderr, "tileconv: analyze: error writing '%s'\n", json_path);
            rc = 1;
        }
    }
    fflush(stdout);
    free(R);
    return rc;
}

#ifdef ANALYZE_STANDALONE
/* Scratch build before the CLI links: cc -DANALYZE_STANDALONE analyze.c
 * ceilings.c plus stubs of tc_version and tc_cuda_device_count. */
int main(int argc, char **argv) {
    char *args[64] = {"analyze"};
    int n = 1;
    for (int i = 1; i < argc && n < 63; i++) args[n++] = argv[i];
    return tc_tool_analyze(n, args);
}
#endif
