/*
 * analyze_gpu.c - `tileconv analyze --gpu-tiles`: the seeds' bandwidth
 * reduction arithmetic for the tiles the GPU kernels use, beside the
 * measured fraction of copy bandwidth.
 *
 * For each GPU case of the benchmark (bench/gpu_bench.cu: 2D 8192^2 k3/k5/k7,
 * 3D 512^3 k3/k5/k7, 256^3 k3, 1D 2^26 k31) the tile of cuda.filter.direct comes from
 * src/cuda/cuda_direct_tile.h, the functions the kernel's launch calls:
 * which variant takes the mask (tc_cu_direct_pick), its output tile TH x TW
 * and shared window, and for the 3D ring the planes per block
 * (tc_cu_direct_zchunk), which depend on the blocks resident per SM. That
 * occupancy is the device's (tc_cuda_kernel_report: cudaOccupancy...) when
 * a device exists, else the occupancy calculator's arithmetic on a device
 * description (SMs, shared memory, registers per SM) and the registers per
 * thread that ptxas gave each variant (an_gpu_regs below).
 *
 * The seed's model of a tile of tz x ty x tx outputs and an R x S x T mask:
 * loads (tz+R-1)(ty+S-1)(tx+T-1) from DRAM, accesses tz ty tx R S T, so
 * reduction = accesses / loads, loads per output = loads / (tz ty tx). The
 * loads are also counted by walking the tile's load and tap loops (as the
 * CPU tables do), and the floats the kernel's cp.async loop stages (the
 * window rounded to 16-byte columns) are counted beside them. Bytes per
 * output: 4 per load + 4 for the store (the ideal is 4 + 4). Predicted time:
 * the larger of bytes / copy bandwidth and 2 taps / FP32 peak per output.
 */
#include "analyze.h"
#include "cuda/cuda_direct_tile.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tileconv.h"

/* ---- device description ---- */

typedef struct ag_device {
    char name[128];
    char source[128];    /* where the figures come from */
    int sms, regs_per_sm, max_threads_sm, max_blocks_sm;
    int64_t smem_per_sm, smem_reserved, l2_bytes;
    double flops;        /* FP32 peak, FLOP/s (FMA = 2) */
    double copy_bw;      /* bytes/s, read + written */
    char copy_source[128];
    /* from this device's kernel report, when there is one */
    int have_report;
    int report_occ[TC_CU_DIRECT_NSHAPES], report_regs[TC_CU_DIRECT_NSHAPES];
} ag_device;

/* Registers per thread of each cuda.filter.direct variant (table order), as
 * ptxas allocates them for sm_90 with nvcc 13.0 in a Release build of this
 * tree (nvcc --resource-usage on src/cuda/cuda_direct.cu with the build's
 * flags; the 32 that tc_cuda_kernel_report printed on an H100,
 * bench/results/h100-2026-11-21-gpu-filters.txt, are the same). The test
 * compares them with cuobjdump --dump-resource-usage of the executable when
 * cuobjdump is present. Used only without a device. */
static const int an_gpu_regs[] = {
    64, 60, 54, 64, 64, 64, 64, 64, 64, 64, 62, 62, 64, 64, 54, /* 1D */
    80, 64, 64, 80, 64, 80, 80,                                 /* 2D */
    80, 128, 104, 96, 128, 96,                                  /* 3D ring */
    64, 64, 64, 80, 62, 64, 64, 64, 62, 62,                     /* guarded */
    56, 56, 56, 50, 50, 64, 64, 80, 80, 127, 71, 127,           /* lean tiles (alt) */
    128, 128, 126,                                              /* register z window (alt) */
    96, 96,                                                     /* lean tiles (alt) */
    128, 128,                                                   /* register z window (alt) */
};
_Static_assert(sizeof an_gpu_regs / sizeof an_gpu_regs[0] == TC_CU_DIRECT_NSHAPES,
               "one register count per cuda.filter.direct variant");

/* H100 SXM5 and H200 SXM: 132 SMs at 1980 MHz boost, 128 FP32 lanes each;
 * 228 KiB shared memory per SM (1 KiB reserved per block), 64 Ki registers,
 * 2048 threads, 32 blocks per SM; 50 MiB L2. Copy bandwidth: the stated
 * defaults (read + written, D2D copy); a --bench-json file's measured
 * value replaces it. */
static int ag_builtin(ag_device *d, const char *which) {
    memset(d, 0, sizeof *d);
    int h200 = !strcmp(which, "h200");
    if (!h200 && strcmp(which, "h100")) return -1;
    snprintf(d->name, sizeof d->name, "%s", h200 ? "NVIDIA H200 (SXM)" : "NVIDIA H100 (SXM5)");
    snprintf(d->source, sizeof d->source, "built-in %s description (--gpu %s), no device read",
             h200 ? "H200" : "H100", which);
    d->sms = 132;
    d->regs_per_sm = 65536;
    d->max_threads_sm = 2048;
    d->max_blocks_sm = 32;
    d->smem_per_sm = 228 * 1024;
    d->smem_reserved = 1024;
    d->l2_bytes = 50LL << 20;
    d->flops = 132 * 128 * 2.0 * 1980e6;
    d->copy_bw = h200 ? 4.2e12 : 3.0e12;
    snprintf(d->copy_source, sizeof d->copy_source, "stated default for %s",
             h200 ? "H200" : "H100");
    return 0;
}

/* The CUDA runtime, when this executable links it (a CUDA build); weak, so
 * a build without CUDA links and never calls it. */
extern int cudaDeviceGetAttribute(int *value, int attr, int device) __attribute__((weak));
extern int cudaGetDevice(int *device) __attribute__((weak));

static int ag_attr(int attr, int dev) {
    int v = 0;
    return cudaDeviceGetAttribute(&v, attr, dev) == 0 ? v : 0;
}

/* This process's device: the attributes (the same ones cudaGetDeviceProperties
 * fills), and each variant's registers and blocks per SM from
 * tc_cuda_kernel_report (cudaFuncGetAttributes, cudaOccupancy...). */
static int ag_runtime(ag_device *d) {
    if (tc_cuda_device_count() <= 0 || !cudaDeviceGetAttribute || !cudaGetDevice) return -1;
    static char rep[1 << 17];
    if (tc_cuda_kernel_report(rep, sizeof rep) != TC_OK) return -1;
    int dev = 0;
    if (cudaGetDevice(&dev) != 0) dev = 0;
    memset(d, 0, sizeof *d);
    d->sms = ag_attr(16, dev);
    d->max_threads_sm = ag_attr(39, dev);
    d->l2_bytes = ag_attr(38, dev);
    d->smem_per_sm = ag_attr(81, dev);
    d->regs_per_sm = ag_attr(82, dev);
    d->max_blocks_sm = ag_attr(106, dev);
    d->smem_reserved = ag_attr(111, dev);
    double clk = ag_attr(13, dev) * 1e3, mclk = ag_attr(36, dev) * 1e3, bus = ag_attr(37, dev);
    d->flops = d->sms * 128 * 2.0 * clk;
    d->copy_bw = 2.0 * mclk * bus / 8.0;
    snprintf(d->copy_source, sizeof d->copy_source, "nominal (memory clock x bus width)");
    snprintf(d->source, sizeof d->source, "this device %d (cudaDeviceGetAttribute; occupancy: "
             "tc_cuda_kernel_report)", dev);
    /* "device: NAME, sm_90, ..." then one line per kernel */
    if (!strncmp(rep, "device: ", 8)) {
        const char *e = strstr(rep + 8, ", sm_");
        size_t n = e ? (size_t)(e - rep - 8) : 0;
        if (n >= sizeof d->name) n = sizeof d->name - 1;
        memcpy(d->name, rep + 8, n);
    }
    for (const char *l = rep; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        int idx;
        if (sscanf(l, "cuda.filter.direct #%d ", &idx) != 1 || idx < 0 ||
            idx >= TC_CU_DIRECT_NSHAPES)
            continue;
        /* the last 8 fields: thr regs static dynamic local maxthr blk/SM occ */
        const char *end = strchr(l, '\n');
        if (!end) end = l + strlen(l);
        const char *f[8];
        int nf = 0;
        for (const char *p = end; p > l && nf < 8; nf++) {
            while (p > l && p[-1] == ' ') p--;
            while (p > l && p[-1] != ' ') p--;
            f[nf] = p;
        }
        if (nf == 8) {
            d->report_regs[idx] = atoi(f[6]);
            d->report_occ[idx] = atoi(f[1]);
            d->have_report = 1;
        }
    }
    return d->sms > 0 ? 0 : -1;
}

/* Blocks of a variant resident per SM: the occupancy calculator's limits
 * (threads, registers allocated per warp in units of 256, shared memory
 * with the per-block reservation, blocks). */
static int ag_occupancy(const ag_device *d, int threads, int regs, int64_t smem) {
    int b = d->max_threads_sm / threads;
    if (d->max_blocks_sm > 0 && d->max_blocks_sm < b) b = d->max_blocks_sm;
    int per_warp = (regs * 32 + 255) / 256 * 256;
    int warps = threads / 32;
    if (per_warp > 0) {
        int br = d->regs_per_sm / per_warp / warps;
        if (br < b) b = br;
    }
    int64_t bs = d->smem_per_sm / (smem + d->smem_reserved);
    if (bs < b) b = (int)bs;
    return b;
}

/* ---- the cases ---- */

typedef struct ag_case {
    const char *name; /* bench/gpu_bench.cu's case name */
    int dims;
    int64_t n[3];     /* D, H, W (1D: 1, 1, n) */
    int64_t m[3];     /* R, S, T */
    double sigma;     /* > 0: separable Gaussian (cuda.filter.separable) */
} ag_case;

static const ag_case ag_cases[] = {
    {"2D 8192^2 k3", 2, {1, 8192, 8192}, {1, 3, 3}, 0},
    {"2D 8192^2 k5", 2, {1, 8192, 8192}, {1, 5, 5}, 0},
    {"2D 8192^2 k7", 2, {1, 8192, 8192}, {1, 7, 7}, 0},
    {"3D 512^3 k3", 3, {512, 512, 512}, {3, 3, 3}, 0},
    {"3D 512^3 k5", 3, {512, 512, 512}, {5, 5, 5}, 0},
    {"3D 512^3 k7", 3, {512, 512, 512}, {7, 7, 7}, 0},
    /* the Python target's volume: few planes a block by the two-wave rule */
    {"3D 256^3 k3", 3, {256, 256, 256}, {3, 3, 3}, 0},
    {"1D 2^26 k31", 1, {1, 1, 1LL << 26}, {1, 1, 31}, 0},
    /* scipy's truncate 4: radius int(4 sigma + 0.5) */
    {"2D 8192^2 gaussian sigma 2", 2, {1, 8192, 8192}, {1, 17, 17}, 2.0},
    {"3D 512^3 gaussian sigma 1.5", 3, {512, 512, 512}, {13, 13, 13}, 1.5},
};
#define AG_NCASES (int)(sizeof ag_cases / sizeof ag_cases[0])

typedef struct ag_row {
    const ag_case *c;
    const char *solver;
    int variant;          /* -1: none (separable) */
    tc_cu_direct_shape v;
    int threads, regs, occ;
    const char *occ_source; /* "device", "model" */
    int64_t smem;
    int64_t tile[3], in[3];   /* output tile, input tile with halo (z, y, x) */
    int64_t staged_cols;      /* columns the cp.async loop copies per window row */
    int64_t grid, tiles;      /* blocks launched, tiles (1D/2D) or xy blocks x chunks (3D) */
    int passes;               /* separable */
    /* per interior tile */
    int64_t f_loads, f_acc, s_loads, s_acc, staged;
    double outputs_per_tile;
    double loads_per_out, staged_per_out, red_formula, red_sim;
    double bytes_per_out, staged_bytes_per_out;
    double outputs, flops;
    double t_mem, t_fp32, t_pred, t_ideal, model_frac;
    int64_t resident;      /* blocks resident at once: blk/SM x SMs, at most the grid */
    int have_meas;
    double meas_ms, meas_frac;
    char meas_algo[64];
} ag_row;

/* The seed's tile, walked: the load loop over the input tile (with the
 * halo) of an interior tile, and the tap loop of every output. */
static void ag_sim(const int64_t tile[3], const int64_t m[3], int64_t *loads, int64_t *acc) {
    int64_t N[3], o0[3], h[3], W[3];
    for (int a = 0; a < 3; a++) {
        N[a] = 3 * tile[a]; /* the middle tile of a 3-tile-wide array */
        o0[a] = tile[a];
        h[a] = m[a] / 2;
        W[a] = tile[a] + m[a] - 1;
    }
#define AG_IN(g, a) ((g) >= 0 && (g) < N[a])
    int64_t l = 0, c = 0;
    for (int64_t z = 0; z < W[0]; z++)
        for (int64_t y = 0; y < W[1]; y++)
            for (int64_t x = 0; x < W[2]; x++)
                if (AG_IN(o0[0] - h[0] + z, 0) && AG_IN(o0[1] - h[1] + y, 1) &&
                    AG_IN(o0[2] - h[2] + x, 2))
                    l++;
    for (int64_t pz = o0[0]; pz < o0[0] + tile[0]; pz++)
        for (int64_t py = o0[1]; py < o0[1] + tile[1]; py++)
            for (int64_t px = o0[2]; px < o0[2] + tile[2]; px++)
                for (int64_t r = 0; r < m[0]; r++) {
                    if (!AG_IN(pz - h[0] + r, 0)) continue;
                    for (int64_t s = 0; s < m[1]; s++) {
                        if (!AG_IN(py - h[1] + s, 1)) continue;
                        for (int64_t t = 0; t < m[2]; t++) c += AG_IN(px - h[2] + t, 2);
                    }
                }
#undef AG_IN
    *loads = l;
    *acc = c;
}

static int64_t ag_div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

static void ag_time(ag_row *r, const ag_device *d) {
    r->t_mem = r->outputs * r->bytes_per_out / d->copy_bw;
    r->t_fp32 = r->flops / d->flops;
    r->t_pred = r->t_mem > r->t_fp32 ? r->t_mem : r->t_fp32;
    r->t_ideal = r->outputs * 8.0 / d->copy_bw;
    r->model_frac = r->t_ideal / r->t_pred;
}

static void ag_direct(ag_row *r, const ag_device *d) {
    const ag_case *c = r->c;
    r->solver = "cuda.filter.direct";
    r->variant = tc_cu_direct_pick(c->m[0], c->m[1], c->m[2], c->n[2], -1);
    const tc_cu_direct_shape *v = &tc_cu_direct_shapes[r->variant];
    r->v = *v;
    r->threads = v->TX * v->BY;
    r->smem = (int64_t)tc_cu_direct_smem(v);
    if (d->have_report && d->report_occ[r->variant] > 0) {
        r->occ = d->report_occ[r->variant];
        r->regs = d->report_regs[r->variant];
        r->occ_source = "device";
    } else {
        r->regs = an_gpu_regs[r->variant];
        r->occ = ag_occupancy(d, r->threads, r->regs, r->smem);
        r->occ_source = "model";
    }
    /* the lean tiles (R == 1, NG > 1) are NG groups of 4 TX columns wide */
    const int tx = v->R == 1 && v->ng > 1 ? v->TX * v->ng : v->TX;
    const int64_t TW = TC_CU_DIRECT_TW(tx), TH = TC_CU_DIRECT_TH(v->BY, v->RY);
    const int64_t ROWS = TC_CU_DIRECT_ROWS(v->S, v->BY, v->RY), WINA = TC_CU_DIRECT_WINA(v->T, tx);
    /* 16-byte copies of rows whose width is a multiple of 4 (every case here) */
    r->staged_cols = c->n[2] % 4 == 0 ? 4 * ag_div_up(WINA, 4) : WINA;
    const int64_t P = c->n[0], gx = ag_div_up(c->n[2], TW), gyn = ag_div_up(c->n[1], TH);
    int64_t planes; /* input planes staged per tile */
    if (v->R == 1) {
        r->tiles = gx * gyn * P;
        r->grid = tc_cu_direct_grid(r->occ, d->sms, r->tiles);
        r->tile[0] = 1;
        planes = 1;
    } else {
        int64_t zc, nzc;
        tc_cu_direct_zchunk(P, gx * gyn, (int64_t)r->occ * d->sms, &zc, &nzc);
        if (v->ng >= 1) tc_cu_direct_zchunk_cap(P, v->R, gx * gyn, d->sms, &zc, &nzc); /* the z window */
        r->tiles = gx * gyn * nzc;
        r->grid = r->tiles;
        r->tile[0] = zc;
        planes = zc + v->R - 1;
    }
    r->tile[1] = TH;
    r->tile[2] = TW;
    for (int a = 0; a < 3; a++) r->in[a] = r->tile[a] + c->m[a] - 1;
    r->f_loads = r->in[0] * r->in[1] * r->in[2];
    r->f_acc = r->tile[0] * r->tile[1] * r->tile[2] * c->m[0] * c->m[1] * c->m[2];
    ag_sim(r->tile, c->m, &r->s_loads, &r->s_acc);
    r->staged = planes * ROWS * r->staged_cols;
    r->outputs_per_tile = (double)(r->tile[0] * r->tile[1] * r->tile[2]);
    r->loads_per_out = r->f_loads / r->outputs_per_tile;
    r->staged_per_out = r->staged / r->outputs_per_tile;
    r->red_formula = (double)r->f_acc / (double)r->f_loads;
    r->red_sim = (double)r->s_acc / (double)r->s_loads;
    r->bytes_per_out = 4.0 * r->loads_per_out + 4.0;
    r->staged_bytes_per_out = 4.0 * r->staged_per_out + 4.0;
    r->outputs = (double)(c->n[0] * c->n[1] * c->n[2]);
    r->flops = 2.0 * (double)(c->m[0] * c->m[1] * c->m[2]) * r->outputs;
    r->resident = (int64_t)r->occ * d->sms;
    if (r->resident > r->grid) r->resident = r->grid;
}

/* cuda.filter.separable's default forms (src/cuda/cuda_separable.cu), for
 * masks of 2..17 taps an axis: 2D, the row stream (sep_stream_xy): a warp
 * owns a strip of 128 output columns by a segment of ly rows and reads its
 * input strip, (ly + Ty - 1) x (128 + Tx - 1), once; the segments split
 * the rows so that the warps fill 2 blocks of 8 warps an SM (ptxas 84-128
 * registers a thread at 256 threads), each at least 4 (Ty - 1) rows. 3D
 * float32, the register z window (sep_zreg): a block owns TY x 64 outputs
 * of each plane of a z chunk and stages (TY + Ty - 1) x (64 + Tx - 1) of
 * each of its zc + Tz - 1 input planes; TY 32 (one block of 512 threads an
 * SM; 16, two blocks of 256, where the output has at most 16 rows); the
 * chunks fill the blocks an SM once.
 * One read and one write of the array either way (the halo read again
 * from L2 by the neighbouring tiles is what the seeds' tile counts as
 * loads). Taps: the x pass over every staged row (2D) or y over every
 * staged column (3D), then the other, then z: the kernels' FMAs. */
#define AG_SEP_BLK_SM 2
static void ag_separable(ag_row *r, const ag_device *d) {
    const ag_case *c = r->c;
    const int64_t Tz = c->m[0], Ty = c->m[1], Tx = c->m[2];
    r->solver = "cuda.filter.separable";
    r->variant = -1;
    r->occ_source = "-";
    r->occ = AG_SEP_BLK_SM;
    r->threads = 256;
    r->passes = 1;
    const int64_t ty = c->n[1] > 16 ? 32 : 16; /* the 3D window's tile rows */
    if (c->dims == 3) {
        r->occ = ty == 32 ? 1 : AG_SEP_BLK_SM;
        r->threads = 16 * (int)ty;
        const int64_t gx = ag_div_up(c->n[2], 64), gy = ag_div_up(c->n[1], ty);
        int64_t nzc = (int64_t)r->occ * d->sms / (gx * gy);
        if (nzc < 1) nzc = 1;
        if (nzc > c->n[0]) nzc = c->n[0];
        const int64_t zc = ag_div_up(c->n[0], nzc);
        nzc = ag_div_up(c->n[0], zc);
        r->tile[0] = zc, r->tile[1] = ty, r->tile[2] = 64;
        r->grid = r->tiles = gx * gy * nzc;
        r->f_acc = (zc + Tz - 1) * ty * ((64 + Tx - 1) * Ty + 64 * Tx) + zc * ty * 64 * Tz;
    } else {
        const int64_t strips = ag_div_up(c->n[2], 128), slots = (int64_t)AG_SEP_BLK_SM * 8 * d->sms;
        const int64_t lmin = 4 * (Ty - 1) > 16 ? 4 * (Ty - 1) : 16;
        int64_t ny = slots / (strips * c->n[0]);
        if (ny > c->n[1] / lmin) ny = c->n[1] / lmin;
        if (ny < 1) ny = 1;
        const int64_t ly = ag_div_up(c->n[1], ny);
        ny = ag_div_up(c->n[1], ly);
        r->tile[0] = 1, r->tile[1] = ly, r->tile[2] = 128;
        r->tiles = strips * ny * c->n[0];
        r->grid = ag_div_up(strips, 8) * ny * c->n[0];
        r->f_acc = (ly + Ty - 1) * 128 * Tx + ly * 128 * Ty;
    }
    for (int a = 0; a < 3; a++) r->in[a] = r->tile[a] + c->m[a] - 1;
    /* staged: 16-byte copies from the aligned column at or below the first */
    r->staged_cols = 4 * ag_div_up(r->in[2] + 3, 4);
    r->f_loads = r->in[0] * r->in[1] * r->in[2];
    /* the loops walked: every staged input element once; every output's
     * taps, the x (3D: y) pass's on the halo rows (columns) too */
    r->s_loads = 0;
    for (int64_t z = 0; z < r->in[0]; z++)
        for (int64_t y = 0; y < r->in[1]; y++) r->s_loads += r->in[2];
    r->s_acc = 0;
    if (c->dims == 3) {
        for (int64_t z = 0; z < r->in[0]; z++) r->s_acc += ty * ((64 + Tx - 1) * Ty + 64 * Tx);
        for (int64_t z = 0; z < r->tile[0]; z++) r->s_acc += ty * 64 * Tz;
    } else {
        for (int64_t y = 0; y < r->in[1]; y++) r->s_acc += 128 * Tx;
        for (int64_t y = 0; y < r->tile[1]; y++) r->s_acc += 128 * Ty;
    }
    r->staged = r->in[0] * r->in[1] * r->staged_cols;
    r->outputs_per_tile = (double)(r->tile[0] * r->tile[1] * r->tile[2]);
    r->loads_per_out = (double)r->f_loads / r->outputs_per_tile;
    r->staged_per_out = (double)r->staged / r->outputs_per_tile;
    r->red_formula = (double)r->f_acc / (double)r->f_loads;
    r->red_sim = (double)r->s_acc / (double)r->s_loads;
    r->bytes_per_out = 4.0 * r->loads_per_out + 4.0;
    r->staged_bytes_per_out = 4.0 * r->staged_per_out + 4.0;
    r->outputs = (double)(c->n[0] * c->n[1] * c->n[2]);
    r->flops = 2.0 * (double)r->f_acc / r->outputs_per_tile * r->outputs;
    r->resident = (int64_t)r->occ * d->sms;
    if (r->resident > r->grid) r->resident = r->grid;
}

/* ---- the benchmark's JSON (bench/gpu_bench.cu, or tileconv bench) ---- */

typedef struct jv {
    int type; /* 'o' object, 'a' array, 's' string, 'n' number, 'l' literal */
    char *key; /* as a member of an object */
    char *str;
    double num;
    struct jv *child, *next;
} jv;

typedef struct jp {
    const char *p;
    int err;
} jp;

static void jp_ws(jp *j) {
    while (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t') j->p++;
}

static char *jp_string(jp *j) {
    if (*j->p != '"') { j->err = 1; return NULL; }
    const char *s = ++j->p;
    size_t n = 0;
    char *out = malloc(strlen(s) + 1);
    if (!out) { j->err = 1; return NULL; }
    while (*j->p && *j->p != '"') {
        if (*j->p == '\\' && j->p[1]) {
            j->p++;
            char e = *j->p;
            out[n++] = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'u' ? '?' : e;
            j->p++;
            for (int k = 0; e == 'u' && k < 4 && *j->p && *j->p != '"'; k++) j->p++;
        } else {
            out[n++] = *j->p++;
        }
    }
    if (*j->p != '"') { j->err = 1; free(out); return NULL; }
    j->p++;
    out[n] = 0;
    return out;
}

static void jv_free(jv *v) {
    while (v) {
        jv *nx = v->next;
        jv_free(v->child);
        free(v->key);
        free(v->str);
        free(v);
        v = nx;
    }
}

static jv *jp_value(jp *j, int depth) {
    jp_ws(j);
    if (depth > 64) { j->err = 1; return NULL; }
    jv *v = calloc(1, sizeof *v);
    if (!v) { j->err = 1; return NULL; }
    char c = *j->p;
    if (c == '{' || c == '[') {
        v->type = c == '{' ? 'o' : 'a';
        j->p++;
        jv **tail = &v->child;
        jp_ws(j);
        if (*j->p == (c == '{' ? '}' : ']')) { j->p++; return v; }
        for (;;) {
            char *key = NULL;
            if (c == '{') {
                jp_ws(j);
                key = jp_string(j);
                jp_ws(j);
                if (j->err || *j->p != ':') { free(key); j->err = 1; break; }
                j->p++;
            }
            jv *e = jp_value(j, depth + 1);
            if (!e) { free(key); break; }
            e->key = key;
            *tail = e;
            tail = &e->next;
            jp_ws(j);
            if (*j->p == ',') { j->p++; continue; }
            if (*j->p == (c == '{' ? '}' : ']')) { j->p++; break; }
            j->err = 1;
            break;
        }
    } else if (c == '"') {
        v->type = 's';
        v->str = jp_string(j);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        char *end;
        v->type = 'n';
        v->num = strtod(j->p, &end);
        j->p = end;
    } else if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4)) {
        v->type = 'l';
        v->num = j->p[0] == 't';
        v->num = j->p[0] == 'n' ? NAN : v->num;
        j->p += 4;
    } else if (!strncmp(j->p, "false", 5)) {
        v->type = 'l';
        j->p += 5;
    } else {
        j->err = 1;
    }
    if (j->err) { jv_free(v); return NULL; }
    return v;
}

static const jv *jv_get(const jv *o, const char *key) {
    if (!o || o->type != 'o') return NULL;
    for (const jv *e = o->child; e; e = e->next)
        if (e->key && !strcmp(e->key, key)) return e;
    return NULL;
}
static const char *jv_str(const jv *o, const char *key) {
    const jv *e = jv_get(o, key);
    return e && e->type == 's' ? e->str : NULL;
}
static double jv_num(const jv *o, const char *key) {
    const jv *e = jv_get(o, key);
    return e && (e->type == 'n' || e->type == 'l') ? e->num : NAN;
}

typedef struct ag_bench {
    jv *root;
    char device[128];
    double copy_bw; /* bytes/s; 0 when the file has none */
} ag_bench;

static int ag_bench_load(ag_bench *b, const char *path) {
    memset(b, 0, sizeof *b);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "tileconv: analyze: cannot read '%s': %s\n", path, strerror(errno));
        return 1;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t k;
    while (buf && (k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (n + 1 >= cap) {
            char *nb = cap < ((size_t)1 << 28) ? realloc(buf, cap *= 2) : NULL;
            if (!nb) { free(buf); buf = NULL; }
            else buf = nb;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "tileconv: analyze: '%s' is too large or out of memory\n", path);
        return 1;
    }
    buf[n] = 0;
    jp j = {buf, 0};
    b->root = jp_value(&j, 0);
    free(buf);
    if (!b->root || b->root->type != 'o') {
        fprintf(stderr, "tileconv: analyze: '%s' is not a JSON object (expected the output of "
                        "bench/gpu_bench.cu or tileconv bench --json)\n", path);
        jv_free(b->root);
        b->root = NULL;
        return 1;
    }
    const char *dev = jv_str(b->root, "device");
    snprintf(b->device, sizeof b->device, "%s", dev ? dev : "");
    double cg = jv_num(b->root, "copy_gbs");
    b->copy_bw = isfinite(cg) && cg > 0 ? cg * 1e9 : 0;
    return 0;
}

/* The measured time of a case: gpu_bench's results[] entry of that name
 * (algorithm cuda.filter.direct / cuda.filter.separable, first group that
 * is not a variant sweep), or tileconv bench's cases[] whose label is the
 * name, its first GPU runner of the solver. */
static int ag_bench_find(const ag_bench *b, const ag_row *r, double *ms, char *algo, size_t n) {
    const jv *res = jv_get(b->root, "results");
    if (res && res->type == 'a') {
        for (const jv *e = res->child; e; e = e->next) {
            const char *name = jv_str(e, "name"), *al = jv_str(e, "algo"), *g = jv_str(e, "group");
            double ok = jv_num(e, "ok"), t = jv_num(e, "ms");
            if (!name || !al || strcmp(name, r->c->name) || strcmp(al, r->solver)) continue;
            if (g && !strcmp(g, "sweep")) continue;
            if (!(ok == 1) || !(t > 0)) continue;
            *ms = t;
            snprintf(algo, n, "%s", al);
            return 1;
        }
    }
    const jv *cases = jv_get(b->root, "cases");
    if (cases && cases->type == 'a') {
        for (const jv *e = cases->child; e; e = e->next) {
            const char *label = jv_str(e, "label");
            if (!label || strcmp(label, r->c->name)) continue;
            const jv *rs = jv_get(e, "runners");
            for (const jv *x = rs ? rs->child : NULL; x; x = x->next) {
                const char *name = jv_str(x, "name"), *st = jv_str(x, "status");
                double t = jv_num(x, "median_ms");
                if (!name || strncmp(name, r->solver, strlen(r->solver)) || !st ||
                    strcmp(st, "ok") || !(t > 0) || !(jv_num(x, "gpu") == 1))
                    continue;
                *ms = t;
                snprintf(algo, n, "%s", name);
                return 1;
            }
        }
    }
    return 0;
}

/* ---- output ---- */

typedef struct ag_json {
    FILE *f;
    int depth;
    int first[16];
} ag_json;

static void ag_j_key(ag_json *j, const char *key) {
    if (!j->first[j->depth]) fputc(',', j->f);
    j->first[j->depth] = 0;
    fprintf(j->f, "\n%*s", 2 * j->depth, "");
    if (key) fprintf(j->f, "\"%s\": ", key);
}
static void ag_j_open(ag_json *j, const char *key, char brace) {
    ag_j_key(j, key);
    fputc(brace, j->f);
    j->first[++j->depth] = 1;
}
static void ag_j_close(ag_json *j, char brace) {
    j->depth--;
    fprintf(j->f, "\n%*s%c", 2 * j->depth, "", brace);
}
static void ag_j_num(ag_json *j, const char *key, double v) {
    ag_j_key(j, key);
    if (isfinite(v)) fprintf(j->f, "%.10g", v);
    else fputs("null", j->f);
}
static void ag_j_int(ag_json *j, const char *key, int64_t v) {
    ag_j_key(j, key);
    fprintf(j->f, "%lld", (long long)v);
}
static void ag_j_str(ag_json *j, const char *key, const char *s) {
    ag_j_key(j, key);
    if (!s) { fputs("null", j->f); return; }
    fputc('"', j->f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(j->f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(j->f, "\\u%04x", *s);
        else fputc(*s, j->f);
    }
    fputc('"', j->f);
}
static void ag_j_ints(ag_json *j, const char *key, const int64_t *v, int n) {
    ag_j_key(j, key);
    fputc('[', j->f);
    for (int i = 0; i < n; i++) fprintf(j->f, "%s%lld", i ? ", " : "", (long long)v[i]);
    fputc(']', j->f);
}

static void ag_fmt_tile(char *buf, size_t n, const int64_t t[3], int dims) {
    if (dims == 3) snprintf(buf, n, "%lldx%lldx%lld", (long long)t[0], (long long)t[1], (long long)t[2]);
    else if (dims == 2) snprintf(buf, n, "%lldx%lld", (long long)t[1], (long long)t[2]);
    else snprintf(buf, n, "%lld", (long long)t[2]);
}

static void ag_print(FILE *o, const ag_device *d, const ag_row *rows, int n, const char *bench,
                     const ag_bench *b) {
    fprintf(o, "GPU tiles: the seeds' bandwidth-reduction arithmetic for the tiles the kernels use\n");
    fprintf(o, "  device: %s; %s\n", d->name, d->source);
    fprintf(o, "  %d SMs, %lld KiB shared/SM (%lld B reserved/block), %d registers/SM, %d threads/SM,"
               " L2 %lld MiB\n",
            d->sms, (long long)(d->smem_per_sm / 1024), (long long)d->smem_reserved,
            d->regs_per_sm, d->max_threads_sm, (long long)(d->l2_bytes >> 20));
    fprintf(o, "  FP32 peak %.1f TFLOP/s (SMs x 128 lanes x 2 x clock); copy bandwidth %.0f GB/s"
               " (read + written; %s)\n",
            d->flops / 1e12, d->copy_bw / 1e9, d->copy_source);
    fprintf(o, "  tile: outputs of one block (z x y x x); in: the input tile with the halo, the seed's\n"
               "  loads; staged: the floats the kernel's cp.async loop copies (window rounded to\n"
               "  16-byte columns). Counts of one interior tile; simulated = the load and tap loops\n"
               "  walked. 3D: the ring streams tile-z output planes through R+1 shared slots.\n");
    fprintf(o, "\n  %-28s %4s %-12s %-12s %4s %7s %8s %8s %8s %9s %9s\n", "case", "var",
            "tile", "in (halo)", "blk", "grid", "loads/o", "sim/o", "staged/o", "reduction",
            "simulated");
    for (int i = 0; i < n; i++) {
        const ag_row *r = &rows[i];
        char t[32], in[32], var[16];
        ag_fmt_tile(t, sizeof t, r->tile, r->c->dims);
        ag_fmt_tile(in, sizeof in, r->in, r->c->dims);
        if (r->variant >= 0) snprintf(var, sizeof var, "#%d", r->variant);
        else snprintf(var, sizeof var, "sep");
        char occ[16];
        if (r->variant >= 0) snprintf(occ, sizeof occ, "%d%s", r->occ, r->occ_source[0] == 'm' ? "*" : "");
        else snprintf(occ, sizeof occ, "-");
        fprintf(o, "  %-28s %4s %-12s %-12s %4s %7lld %8.4f %8.4f %8.4f %9.2f %9.2f\n",
                r->c->name, var, t, in, occ, (long long)r->grid, r->loads_per_out,
                (double)r->s_loads / r->outputs_per_tile,
                r->staged_per_out, r->red_formula, r->red_sim);
    }
    fprintf(o, "  blk: blocks per SM (* = occupancy model: threads, shared memory, ptxas registers);"
               " grid: blocks launched\n");
    for (int i = 0; i < n; i++) {
        const ag_row *r = &rows[i];
        if (r->variant >= 0) {
            fprintf(o, "    %-26s #%d: R%dS%dT%d, %d x %d threads, %d x %d outputs/thread, %lld B shared,"
                       " %d regs; %lld blocks resident\n",
                    r->c->name, r->variant, r->v.R, r->v.S, r->v.T, r->v.TX, r->v.BY, r->v.RY,
                    r->v.R == 1 && r->v.ng > 1 ? 4 * r->v.ng : 4, (long long)r->smem, r->regs,
                    (long long)r->resident);
        } else {
            if (r->c->dims == 3)
                fprintf(o, "    %-26s cuda.filter.separable, the register z window: %lld x 64 outputs of %lld"
                           " planes a block, %d threads, %d block%s an SM; %lld blocks\n",
                        r->c->name, (long long)r->tile[1], (long long)r->tile[0], r->threads, r->occ,
                        r->occ > 1 ? "s" : "", (long long)r->grid);
            else
                fprintf(o, "    %-26s cuda.filter.separable, the row stream: a warp's strip of 128 columns x"
                           " %lld rows, %lld warps in %lld blocks of 8, %d blocks an SM\n",
                        r->c->name, (long long)r->tile[1], (long long)r->tiles, (long long)r->grid,
                        AG_SEP_BLK_SM);
        }
    }

    fprintf(o, "\n  Predicted time: max(bytes / copy bandwidth, FLOPs / FP32 peak); ideal = 4 B read +"
               " 4 B written per output%s\n",
            bench ? "" : "; measured: none (no --bench-json)");
    if (bench)
        fprintf(o, "  measured: %s (%s%s%s)\n", bench, b->device[0] ? "device " : "", b->device,
                b->copy_bw > 0 ? ", its measured copy bandwidth used above" : "");
    fprintf(o, "  %-28s %7s %7s %9s %9s %9s %7s %8s | %11s %8s\n", "case", "B/out", "staged",
            "t_mem ms", "t_fp32 ms", "model ms", "limiter", "of copy", "measured ms", "of copy");
    for (int i = 0; i < n; i++) {
        const ag_row *r = &rows[i];
        char ms[24] = "", fr[24] = "";
        if (r->have_meas) {
            snprintf(ms, sizeof ms, "%.4f", r->meas_ms);
            snprintf(fr, sizeof fr, "%.1f%%", 100 * r->meas_frac);
        }
        fprintf(o, "  %-28s %7.3f %7.3f %9.4f %9.4f %9.4f %7s %7.1f%% | %11s %8s\n", r->c->name,
                r->bytes_per_out, r->staged_bytes_per_out, r->t_mem * 1e3, r->t_fp32 * 1e3,
                r->t_pred * 1e3, r->t_mem >= r->t_fp32 ? "memory" : "FP32", 100 * r->model_frac, ms,
                fr);
    }
    fprintf(o, "  of copy: ideal time (8 B/output at the copy bandwidth) / time, as gpu_bench's"
               " \"%% copy\".\n");
}

static void ag_print_json(FILE *f, const ag_device *d, const ag_row *rows, int n, const char *bench,
                          const ag_bench *b) {
    ag_json j = {f, 0, {1}};
    ag_j_open(&j, NULL, '{');
    ag_j_str(&j, "tool", "tileconv analyze --gpu-tiles");
    ag_j_str(&j, "version", tc_version());
    ag_j_open(&j, "device", '{');
    ag_j_str(&j, "name", d->name);
    ag_j_str(&j, "source", d->source);
    ag_j_int(&j, "sms", d->sms);
    ag_j_int(&j, "smem_per_sm", d->smem_per_sm);
    ag_j_int(&j, "smem_reserved_per_block", d->smem_reserved);
    ag_j_int(&j, "regs_per_sm", d->regs_per_sm);
    ag_j_int(&j, "max_threads_per_sm", d->max_threads_sm);
    ag_j_int(&j, "l2_bytes", d->l2_bytes);
    ag_j_num(&j, "fp32_flops", d->flops);
    ag_j_num(&j, "copy_bytes_per_s", d->copy_bw);
    ag_j_str(&j, "copy_source", d->copy_source);
    ag_j_close(&j, '}');
    ag_j_str(&j, "bench_json", bench);
    ag_j_str(&j, "bench_device", bench ? b->device : NULL);
    ag_j_open(&j, "cases", '[');
    for (int i = 0; i < n; i++) {
        const ag_row *r = &rows[i];
        ag_j_open(&j, NULL, '{');
        ag_j_str(&j, "name", r->c->name);
        ag_j_str(&j, "solver", r->solver);
        ag_j_int(&j, "dims", r->c->dims);
        ag_j_ints(&j, "shape", r->c->n, 3);
        ag_j_ints(&j, "mask", r->c->m, 3);
        if (r->variant >= 0) {
            ag_j_int(&j, "variant", r->variant);
            ag_j_open(&j, "kernel", '{');
            ag_j_int(&j, "R", r->v.R);
            ag_j_int(&j, "S", r->v.S);
            ag_j_int(&j, "T", r->v.T);
            ag_j_int(&j, "RY", r->v.RY);
            ag_j_int(&j, "TX", r->v.TX);
            ag_j_int(&j, "BY", r->v.BY);
            ag_j_int(&j, "NST", r->v.NST);
            ag_j_int(&j, "NG", r->v.ng);
            ag_j_int(&j, "exact", r->v.ex);
            ag_j_int(&j, "rolled", r->v.roll);
            ag_j_int(&j, "threads", r->threads);
            ag_j_int(&j, "smem_bytes", r->smem);
            ag_j_int(&j, "regs", r->regs);
            ag_j_close(&j, '}');
            ag_j_int(&j, "blocks_per_sm", r->occ);
            ag_j_str(&j, "blocks_per_sm_source", r->occ_source);
        } else {
            ag_j_key(&j, "variant");
            fputs("null", f);
            ag_j_int(&j, "passes", r->passes);
        }
        ag_j_int(&j, "grid_blocks", r->grid);
        ag_j_int(&j, "tiles", r->tiles);
        ag_j_ints(&j, "tile", r->tile, 3);
        ag_j_ints(&j, "input_tile", r->in, 3);
        ag_j_int(&j, "outputs_per_tile", (int64_t)r->outputs_per_tile);
        ag_j_int(&j, "formula_loads", r->f_loads);
        ag_j_int(&j, "formula_accesses", r->f_acc);
        ag_j_int(&j, "simulated_loads", r->s_loads);
        ag_j_int(&j, "simulated_accesses", r->s_acc);
        ag_j_int(&j, "staged_floats", r->staged);
        ag_j_num(&j, "loads_per_output", r->loads_per_out);
        ag_j_num(&j, "staged_per_output", r->staged_per_out);
        ag_j_num(&j, "reduction_formula", r->red_formula);
        ag_j_num(&j, "reduction_simulated", r->red_sim);
        ag_j_num(&j, "bytes_per_output", r->bytes_per_out);
        ag_j_num(&j, "staged_bytes_per_output", r->staged_bytes_per_out);
        ag_j_num(&j, "ideal_bytes_per_output", 8.0);
        ag_j_num(&j, "outputs", r->outputs);
        ag_j_num(&j, "flops", r->flops);
        ag_j_num(&j, "t_mem_ms", r->t_mem * 1e3);
        ag_j_num(&j, "t_fp32_ms", r->t_fp32 * 1e3);
        ag_j_num(&j, "predicted_ms", r->t_pred * 1e3);
        ag_j_str(&j, "limiter", r->t_mem >= r->t_fp32 ? "memory" : "fp32");
        ag_j_num(&j, "model_fraction_of_copy", r->model_frac);
        ag_j_int(&j, "resident_blocks", r->resident);
        ag_j_num(&j, "measured_ms", r->have_meas ? r->meas_ms : NAN);
        ag_j_num(&j, "measured_fraction_of_copy", r->have_meas ? r->meas_frac : NAN);
        ag_j_close(&j, '}');
    }
    ag_j_close(&j, ']');
    ag_j_close(&j, '}');
    fputc('\n', f);
}

static int ag_usage(const char *msg, const char *arg) {
    fprintf(stderr, "tileconv: analyze: %s%s%s (see 'tileconv analyze --help')\n", msg,
            arg ? " " : "", arg ? arg : "");
    return 2;
}

int tc_tool_analyze_gpu(int argc, char **argv) {
    const char *gpu = NULL, *json_path = NULL, *bench = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--gpu-tiles")) continue;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs("usage: tileconv analyze --gpu-tiles [--gpu h100|h200] [--bench-json FILE]"
                  " [--json FILE]\n"
                  "  the tiles the GPU kernels use (cuda.filter.direct's own choice), their loads\n"
                  "  per output by the seeds' formula and by simulation, bytes per output and the\n"
                  "  predicted time; --gpu: a built-in description instead of this device (none:\n"
                  "  h200); --bench-json: bench/gpu_bench.cu's output (or tileconv bench --json)\n"
                  "  for the measured time and copy bandwidth; --json FILE ('-' = stdout).\n",
                  stdout);
            return 0;
        }
        if (!strcmp(a, "--gpu") || !strcmp(a, "--json") || !strcmp(a, "--bench-json")) {
            if (i + 1 >= argc || !*argv[i + 1]) return ag_usage(a, "needs a value");
            const char *v = argv[++i];
            if (!strcmp(a, "--gpu")) gpu = v;
            else if (!strcmp(a, "--json")) json_path = v;
            else bench = v;
        } else if (!strcmp(a, "--no-measure")) {
            /* nothing is measured here */
        } else {
            return ag_usage("--gpu-tiles: unknown argument", a);
        }
    }
    ag_device d;
    if (gpu) {
        if (ag_builtin(&d, gpu) != 0) return ag_usage("--gpu must be h100 or h200, not", gpu);
    } else if (ag_runtime(&d) != 0) {
        ag_builtin(&d, "h200");
        snprintf(d.source, sizeof d.source,
                 "built-in H200 description (no CUDA device here; --gpu h100|h200 selects)");
    }
    FILE *jf = NULL;
    int json_stdout = json_path && !strcmp(json_path, "-");
    if (json_path && !json_stdout && !(jf = fopen(json_path, "w"))) {
        fprintf(stderr, "tileconv: analyze: cannot write '%s': %s\n", json_path, strerror(errno));
        return 1;
    }
    if (json_stdout) jf = stdout;
    ag_bench b;
    memset(&b, 0, sizeof b);
    if (bench && ag_bench_load(&b, bench) != 0) {
        if (jf && !json_stdout) fclose(jf);
        return 1;
    }
    if (b.copy_bw > 0) {
        d.copy_bw = b.copy_bw;
        snprintf(d.copy_source, sizeof d.copy_source, "measured D2D copy in %s", bench);
    }
    ag_row rows[AG_NCASES];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < AG_NCASES; i++) {
        ag_row *r = &rows[i];
        r->c = &ag_cases[i];
        if (r->c->sigma > 0) ag_separable(r, &d);
        else ag_direct(r, &d);
        ag_time(r, &d);
        if (bench && ag_bench_find(&b, r, &r->meas_ms, r->meas_algo, sizeof r->meas_algo)) {
            r->have_meas = 1;
            r->meas_frac = r->t_ideal / (r->meas_ms * 1e-3);
        }
    }
    FILE *o = json_stdout ? stderr : stdout;
    ag_print(o, &d, rows, AG_NCASES, bench, &b);
    int rc = 0;
    if (jf) {
        ag_print_json(jf, &d, rows, AG_NCASES, bench, &b);
        if (json_stdout ? fflush(jf) != 0 : (ferror(jf) | fclose(jf)) != 0) {
            fprintf(stderr, "tileconv: analyze: error writing '%s'\n", json_path);
            rc = 1;
        }
    }
    jv_free(b.root);
    fflush(stdout);
    return rc;
}
