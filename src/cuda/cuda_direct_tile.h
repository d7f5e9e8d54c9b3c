/*
 * cuda_direct_tile.h - cuda.filter.direct's tile choice, in plain C: the
 * variant table, which variant takes a mask, the shared-memory geometry of
 * its tile, the persistent grid of the 1D/2D kernel and the z-chunk of the
 * 3D ring kernel. cuda_direct.cu builds its kernel table and launches from
 * these; `tileconv analyze --gpu-tiles` (tools/analyze_gpu.c) runs the same
 * functions without a GPU, so the model and the kernel cannot drift.
 * Header only (static inline), C99 and C++.
 */
#ifndef TC_CUDA_DIRECT_TILE_H
#define TC_CUDA_DIRECT_TILE_H

#include <stddef.h>
#include <stdint.h>

/* The variants, in table order (the index is the "cuda.filter.direct #i" of
 * tc_cuda_kernel_report and TILECONV_CUDA_DIRECT_VARIANT=i). X receives
 * (R, S, T, RY, TX, BY, NST, EX, ALT, RL, NG): mask R x S x T (1D/2D: R = 1);
 * RY output rows x 4 columns per thread, TX x BY threads; NST shared slots
 * (1D/2D persistent tiles and the register z window; the 3D ring has
 * R + 1, NST 0); EX 1: exact sizes only, 0: guarded taps; ALT: a tuning
 * alternative; RL: rolled compute; NG: the form. NG 0: the two-barrier
 * persistent tiles (R == 1) and the 3D plane ring (R > 1). NG >= 1, one
 * barrier a tile or plane (the next load issued after it, into the slot
 * just computed): R == 1, the lean persistent tiles, each thread NG groups
 * of RY rows x 4 columns, the groups 4 TX columns apart (output tile 4 TX
 * NG wide), a tile's input plane its output plane (no 64-bit division);
 * R > 1 (NG 1), the register z window: each input plane is read from
 * shared memory once and added into the R output planes it touches, whose
 * sums stay in registers, so NST slots hold NST - 1 planes in flight.
 * Choices measured on an H100 (docs/solvers/cuda-direct.md, variant
 * sweeps): a third shared slot for 2D k5/k7 (0.94x / 0.92x the time of two);
 * two output rows per thread at 2D k15 (0.86x: half the unrolled code);
 * narrow tiles (TX 16: 64 columns) for volumes at most 64 wide (0.75x on
 * 64^3 k3). The rolled compute measured 1.03-1.64x slower than the unrolled
 * one on every exact size, so only the guarded buckets (rare sizes) use it,
 * for its small code. The lean 1D tiles (NG 2-4, three or four slots) are
 * the 1D default for 3, 7, 15, 31 and 63 taps on rows at least one lean
 * tile wide: on an H100, 2^26 elements, 0.80x, 0.81x, 0.76x, 0.69x and
 * 0.61x the time of the two-barrier tiles (83-89% of the copy bandwidth);
 * the other NG >= 1 forms are tuning alternatives (ALT 1): the 2D lean
 * tiles and the register z window measured 0.97-1.11x (2D k3-k7, 3D k3) on
 * 8192^2 and 512^3, the 3D k5 window 0.89x on 512^3 but 1.22-1.31x on
 * 32x64x64 and 128^3. */
#define TC_CU_DIRECT_KT(X, S, T, RY, TX, BY, NST, EX, ALT, RL) X(1, S, T, RY, TX, BY, NST, EX, ALT, RL, 0)
#define TC_CU_DIRECT_KR(X, K, RY, TX, EX, ALT, RL) X(K, K, K, RY, TX, 8, 0, EX, ALT, RL, 0)
#define TC_CU_DIRECT_K1D(X, T) TC_CU_DIRECT_KT(X, 1, T, 1, 256, 1, 4, 1, 0, 0) /* 1D, T taps */
/* lean persistent tiles (exact, alternative): S x T mask, NG groups */
#define TC_CU_DIRECT_KL(X, S, T, RY, TX, BY, NG, NST) X(1, S, T, RY, TX, BY, NST, 1, 1, 0, NG)
/* lean persistent 1D tiles (exact, the 1D default where rows are wide) */
#define TC_CU_DIRECT_KL1(X, T, NG, NST) X(1, 1, T, 1, 256, 1, NST, 1, 0, 0, NG)
/* register z window (exact, alternative): K x K x K mask, NST slots */
#define TC_CU_DIRECT_KZB(X, K, RY, TX, BY, NST) X(K, K, K, RY, TX, BY, NST, 1, 1, 0, 1)
#define TC_CU_DIRECT_KZ(X, K, RY, TX, NST) TC_CU_DIRECT_KZB(X, K, RY, TX, 8, NST)
#define TC_CU_DIRECT_VARIANTS(X)                                                                  \
    TC_CU_DIRECT_K1D(X, 3), TC_CU_DIRECT_K1D(X, 5), TC_CU_DIRECT_K1D(X, 7),                       \
    TC_CU_DIRECT_K1D(X, 9), TC_CU_DIRECT_K1D(X, 11), TC_CU_DIRECT_K1D(X, 13),                     \
    TC_CU_DIRECT_K1D(X, 15), TC_CU_DIRECT_K1D(X, 17), TC_CU_DIRECT_K1D(X, 21),                    \
    TC_CU_DIRECT_K1D(X, 25), TC_CU_DIRECT_K1D(X, 31), TC_CU_DIRECT_K1D(X, 33),                    \
    TC_CU_DIRECT_K1D(X, 41), TC_CU_DIRECT_K1D(X, 49), TC_CU_DIRECT_K1D(X, 63),                    \
    TC_CU_DIRECT_KT(X, 3, 3, 4, 32, 8, 2, 1, 0, 0), TC_CU_DIRECT_KT(X, 5, 5, 4, 32, 8, 3, 1, 0, 0), \
    TC_CU_DIRECT_KT(X, 7, 7, 4, 32, 8, 3, 1, 0, 0), TC_CU_DIRECT_KT(X, 9, 9, 4, 32, 8, 2, 1, 0, 0), \
    TC_CU_DIRECT_KT(X, 11, 11, 4, 32, 8, 2, 1, 0, 0),                                             \
    TC_CU_DIRECT_KT(X, 13, 13, 4, 32, 8, 2, 1, 0, 0),                                             \
    TC_CU_DIRECT_KT(X, 15, 15, 2, 32, 8, 2, 1, 0, 0),                                             \
    TC_CU_DIRECT_KR(X, 3, 4, 32, 1, 0, 0), TC_CU_DIRECT_KR(X, 5, 2, 32, 1, 0, 0),                 \
    TC_CU_DIRECT_KR(X, 7, 2, 32, 1, 0, 0), TC_CU_DIRECT_KR(X, 3, 2, 16, 1, 0, 0),                 \
    TC_CU_DIRECT_KR(X, 5, 2, 16, 1, 0, 0), TC_CU_DIRECT_KR(X, 7, 2, 16, 1, 0, 0),                 \
    /* guarded */                                                                                 \
    TC_CU_DIRECT_KT(X, 1, 8, 1, 256, 1, 4, 0, 0, 0), TC_CU_DIRECT_KT(X, 1, 16, 1, 256, 1, 4, 0, 0, 0), \
    TC_CU_DIRECT_KT(X, 1, 32, 1, 256, 1, 4, 0, 0, 0), TC_CU_DIRECT_KT(X, 1, 63, 1, 256, 1, 4, 0, 0, 0), \
    TC_CU_DIRECT_KT(X, 5, 5, 4, 32, 8, 2, 0, 0, 0), TC_CU_DIRECT_KT(X, 9, 9, 4, 32, 8, 2, 0, 0, 1), \
    TC_CU_DIRECT_KT(X, 15, 15, 4, 32, 8, 2, 0, 0, 1),                                             \
    TC_CU_DIRECT_KR(X, 3, 4, 32, 0, 0, 0), TC_CU_DIRECT_KR(X, 5, 2, 32, 0, 0, 1),                 \
    TC_CU_DIRECT_KR(X, 7, 2, 32, 0, 0, 1),                                                    \
    /* lean 1D tiles, then tuning alternatives (docs/solvers/cuda-direct.md) */                 \
    TC_CU_DIRECT_KL1(X, 3, 4, 3), TC_CU_DIRECT_KL1(X, 7, 4, 3),                                   \
    TC_CU_DIRECT_KL1(X, 15, 4, 3), TC_CU_DIRECT_KL(X, 1, 31, 1, 256, 1, 4, 3),                    \
    TC_CU_DIRECT_KL1(X, 31, 2, 4), TC_CU_DIRECT_KL1(X, 63, 4, 3),                                 \
    TC_CU_DIRECT_KL(X, 3, 3, 4, 32, 8, 1, 3), TC_CU_DIRECT_KL(X, 3, 3, 4, 32, 8, 2, 2),           \
    TC_CU_DIRECT_KL(X, 5, 5, 4, 32, 8, 1, 3), TC_CU_DIRECT_KL(X, 5, 5, 8, 32, 4, 1, 3),           \
    TC_CU_DIRECT_KL(X, 7, 7, 4, 32, 8, 1, 3), TC_CU_DIRECT_KL(X, 7, 7, 8, 32, 4, 1, 3),           \
    TC_CU_DIRECT_KZ(X, 3, 4, 32, 3), TC_CU_DIRECT_KZ(X, 3, 4, 32, 4), TC_CU_DIRECT_KZ(X, 3, 2, 32, 4), \
    TC_CU_DIRECT_KL(X, 5, 5, 8, 32, 4, 1, 2), TC_CU_DIRECT_KL(X, 7, 7, 8, 32, 4, 1, 2),           \
    TC_CU_DIRECT_KZB(X, 3, 4, 32, 4, 4), TC_CU_DIRECT_KZ(X, 5, 2, 32, 3)
/* add entries with ALT = 1 to time new candidates with TILECONV_BENCH_SWEEP=1 */

/* Tile geometry (the kernel's tileg uses these): output tile TH x TW; the
 * shared window ROWS x WINA (the halo plus up to 3 columns that align its
 * first column to 16 bytes), row pitch SP, one slot = ROWS x SP floats. */
#define TC_CU_DIRECT_TW(TX) (4 * (TX))
#define TC_CU_DIRECT_TWG(TX, NG) (4 * (TX) * ((NG) > 1 ? (NG) : 1)) /* NG groups */
#define TC_CU_DIRECT_TH(BY, RY) ((BY) * (RY))
#define TC_CU_DIRECT_ROWS(S, BY, RY) (TC_CU_DIRECT_TH(BY, RY) + (S) - 1)
#define TC_CU_DIRECT_WINA(T, TX) (TC_CU_DIRECT_TW(TX) + (T) + 2)
#define TC_CU_DIRECT_SP(T, TX) ((TC_CU_DIRECT_WINA(T, TX) + 3) / 4 * 4 + 4)

typedef struct tc_cu_direct_shape {
    int R, S, T, RY, TX, BY, NST, ex, alt, roll, ng;
} tc_cu_direct_shape;

#define TC_CU_DIRECT_SHAPE_(R, S, T, RY, TX, BY, NST, EX, ALT, RL, NG) {R, S, T, RY, TX, BY, NST, EX, ALT, RL, NG}
static const tc_cu_direct_shape tc_cu_direct_shapes[] = {TC_CU_DIRECT_VARIANTS(TC_CU_DIRECT_SHAPE_)};
#define TC_CU_DIRECT_NSHAPES (int)(sizeof tc_cu_direct_shapes / sizeof tc_cu_direct_shapes[0])

/* Dynamic shared memory of a variant's block, bytes. */
static inline size_t tc_cu_direct_smem(const tc_cu_direct_shape *v) {
    const int tw = v->ng > 1 ? v->TX * v->ng : v->TX; /* SP of a 4 tw wide tile */
    size_t slot = (size_t)TC_CU_DIRECT_ROWS(v->S, v->BY, v->RY) * TC_CU_DIRECT_SP(v->T, tw);
    size_t w = v->roll ? (size_t)v->R * v->S * ((v->T + 3) / 4 * 4) : 0;
    return ((size_t)(v->R == 1 || v->ng ? v->NST : v->R + 1) * slot + w) * sizeof(float);
}

/* Whether variant v computes mask R x S x T: an exact variant only its own
 * sizes, a guarded one any mask it covers. */
static inline int tc_cu_direct_covers(const tc_cu_direct_shape *v, int64_t R, int64_t S, int64_t T) {
    if (R == 1 && S == 1) {
        if (v->R != 1 || v->S != 1) return 0;
    } else if (R == 1) {
        if (v->R != 1 || v->S == 1) return 0;
    } else if (v->R == 1) {
        return 0;
    }
    if (v->ex) return (v->R == R || (R == 1 && v->R == 1)) && v->S == S && v->T == T;
    return v->R >= R && v->S >= S && v->T >= T;
}

/* The variant index for a float32 mask R x S x T with output rows of
 * out_w columns, or -1 (the generic path). forced: -1 none, -2 invalid,
 * else the TILECONV_CUDA_DIRECT_VARIANT index. */
static inline int tc_cu_direct_pick(int64_t R, int64_t S, int64_t T, int64_t out_w, int forced) {
    if (forced != -1)
        return forced >= 0 && forced < TC_CU_DIRECT_NSHAPES &&
                       tc_cu_direct_covers(&tc_cu_direct_shapes[forced], R, S, T)
                   ? forced
                   : -1;
    const int narrow = out_w <= 64; /* narrow tiles (TX < 32) for narrow outputs */
    for (int i = 0; i < TC_CU_DIRECT_NSHAPES; i++) { /* lean 1D tiles where rows fill one */
        const tc_cu_direct_shape *v = &tc_cu_direct_shapes[i];
        if (v->ng && v->R == 1 && v->S == 1 && !v->alt && out_w >= TC_CU_DIRECT_TWG(v->TX, v->ng) &&
            tc_cu_direct_covers(v, R, S, T))
            return i;
    }
    /* 3x3x3 on rows at least 256 wide: the register z window at 2 rows a
     * thread, 4 slots (H100, constant mode, same run: 256^3 0.0974 ms
     * against the plane ring's 0.1146, 512^3 0.5759 against 0.5803) */
    if (R == 3 && S == 3 && T == 3 && out_w >= 256)
        for (int i = 0; i < TC_CU_DIRECT_NSHAPES; i++) {
            const tc_cu_direct_shape *v = &tc_cu_direct_shapes[i];
            if (v->ng == 1 && v->R == 3 && v->ex && v->RY == 2 && v->TX == 32 && v->BY == 8 && v->NST == 4)
                return i;
        }
    for (int pass = narrow ? 0 : 1; pass < 2; pass++)
        for (int i = 0; i < TC_CU_DIRECT_NSHAPES; i++) { /* an exact match */
            const tc_cu_direct_shape *v = &tc_cu_direct_shapes[i];
            if (v->ex && !v->alt && (v->TX < 32) == (pass == 0) && tc_cu_direct_covers(v, R, S, T))
                return i;
        }
    for (int i = 0; i < TC_CU_DIRECT_NSHAPES; i++) /* else the smallest guarded bucket */
        if (!tc_cu_direct_shapes[i].ex && tc_cu_direct_covers(&tc_cu_direct_shapes[i], R, S, T))
            return i;
    return -1;
}

/* 1D/2D (R == 1): persistent blocks, blocks_per_sm x sms of them (the
 * occupancy of the kernel), at most one per tile. */
static inline int64_t tc_cu_direct_grid(int blocks_per_sm, int sms, int64_t ntiles) {
    int64_t b = (int64_t)blocks_per_sm * sms;
    return b > ntiles ? ntiles : b;
}

/* 3D ring (R > 1): output planes per block (*zc) and chunks per batch item
 * (*nzc) for P output planes, xy blocks per plane (x tiles x y tiles x
 * batch) and slots = resident blocks (occupancy x SMs): about two waves of
 * blocks, each streaming zc planes along z (one full wave of longer chunks
 * measured 1.07-1.16x slower on 512^3). */
static inline void tc_cu_direct_zchunk(int64_t P, int64_t xy, int64_t slots, int64_t *zc,
                                       int64_t *nzc) {
    int64_t n = (2 * slots + xy - 1) / xy;
    if (n > P) n = P;
    if (n < 1) n = 1;
    *zc = (P + n - 1) / n;
    *nzc = (P + *zc - 1) / *zc;
}

/* The register z window's chunks (NG >= 1, R > 1) for P output planes, xy
 * blocks per plane and sms SMs: 16 (R - 1) planes (the z halo 1/16 of a
 * chunk's loads) where that still gives every SM a block, else the ring's
 * two-wave chunks (*zc, *nzc on entry) capped at 16 (R - 1). H100, 3x3x3:
 * 512^3 32 planes 0.507 ms against the two-wave rule's 57 0.576; 256^3 32
 * planes 0.090-0.093 ms (reflect 0.107-0.110) against its 8 0.094-0.097
 * (0.113-0.116); smaller volumes keep the rule's shorter chunks. */
static inline void tc_cu_direct_zchunk_cap(int64_t P, int R, int64_t xy, int sms, int64_t *zc,
                                           int64_t *nzc) {
    const int64_t cap = 16 * (int64_t)(R - 1);
    if (*zc > cap || (P > cap && xy * ((P + cap - 1) / cap) >= sms)) {
        *zc = cap < P ? cap : P;
        *nzc = (P + *zc - 1) / *zc;
    }
}

#endif /* TC_CUDA_DIRECT_TILE_H */
