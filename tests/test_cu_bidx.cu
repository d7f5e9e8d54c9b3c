/*
 * test_cu_bidx.cu - the device boundary map tc__cu_bidx_t (cuda_common.h:
 * no division for an index within one period of the edge) run on the
 * host, in 64-bit and 32-bit indices, against the core's
 * tc__boundary_index (the CPU solvers' map), and its remainder form (NEAR
 * false: tc__cu_bidx) the same, for every mode, n = 1..64 and indices
 * from -6n - 9 to 7n + 9 (one period and far beyond it on both sides),
 * and near the 32-bit limits. Needs no GPU: CI runs it (built when nvcc is).
 */
#include "harness.h"
#include "cuda/cuda_common.h"

int main(int argc, char **argv) {
    th_init(argc, argv);
    static const tc_mode modes[] = {TC_MODE_CONSTANT, TC_MODE_NEAREST, TC_MODE_REFLECT, TC_MODE_MIRROR,
                                    TC_MODE_WRAP};
    static const char *const names[] = {"constant", "nearest", "reflect", "mirror", "wrap"};
    for (int k = 0; k < 5; k++) {
        const tc_mode md = modes[k];
        TH_BEGIN("tc__cu_bidx_t %s, n 1..64", names[k]);
        long bad = 0, checked = 0;
        for (int64_t n = 1; n <= 64; n++)
            for (int64_t i = -6 * n - 9; i <= 7 * n + 9; i++, checked++) {
                const int64_t want = tc__boundary_index(i, n, md);
                const int64_t got = tc__cu_bidx_t<int64_t>(i, n, (int)md);
                const int got32 = tc__cu_bidx_t<int>((int)i, (int)n, (int)md);
                const int64_t gen = tc__cu_bidx_t<int64_t, false>(i, n, (int)md); /* tc__cu_bidx's */
                if (got != want || got32 != want || gen != want) {
                    if (bad++ < 5)
                        CHECK(0, "i %lld n %lld: want %lld, 64-bit %lld, 32-bit %d", (long long)i,
                              (long long)n, (long long)want, (long long)got, got32);
                }
            }
        CHECK(bad == 0, "%ld of %ld indices differ", bad, checked);
        /* large extents: the near form's 2n and 2n - 1 in 32 bits */
        const int big = (1 << 29) - 3;
        const int64_t idx[] = {-1, -2, -(int64_t)big, big, big + 1, 2 * (int64_t)big - 2, 2 * (int64_t)big - 1};
        for (int j = 0; j < 7; j++) {
            const int64_t want = tc__boundary_index(idx[j], big, md);
            CHECK(tc__cu_bidx_t<int64_t>(idx[j], big, (int)md) == want, "64-bit, i %lld n %d", (long long)idx[j], big);
            CHECK(tc__cu_bidx_t<int>((int)idx[j], big, (int)md) == want, "32-bit, i %lld n %d", (long long)idx[j], big);
        }
        TH_END();
    }
    return th_finish();
}
