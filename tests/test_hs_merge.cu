/*
 * test_hs_merge.cu - the merged input's index map (src/cuda/conv/
 * hs_merge_map.h: the column part a thread of k_hs_merge maps once, the
 * row part it maps on every row) run on the host against the direct
 * definition xm[n][h'][w'][(dy, s, c)] = x[n][h' sy + dy - py][w' sx + s -
 * px][c] (zero outside and past sy S C), on seeded random x, for conv1's
 * geometry and awkward ones (one channel, strides 3 and 1, padding 0 and
 * past the mask, widths not a multiple of 8). Needs no GPU: CI runs it
 * (built when nvcc is).
 */
#include "harness.h"
#include "cuda/conv/hs_merge_map.h"

#include <stdlib.h>

struct mcase {
    int N, H, W, C, R1, S, sy, sx, py, px;
};

int main(int argc, char **argv) {
    th_init(argc, argv);
    static const mcase cs[] = {
        {2, 23, 21, 3, 7, 7, 2, 2, 3, 3}, /* conv1 7x7/2 on 3 channels, small */
        {1, 9, 10, 1, 5, 5, 1, 1, 2, 2},  /* one channel, stride 1 */
        {3, 13, 7, 5, 3, 4, 3, 2, 0, 1},  /* stride 3 along y, even mask width */
        {1, 6, 6, 2, 3, 3, 2, 3, 4, 4},   /* padding past the mask */
        {2, 17, 19, 7, 2, 1, 2, 1, 1, 0}, /* 1-wide mask, C 7 */
    };
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++) {
        const mcase &m = cs[ci];
        TH_BEGIN("hs_merge map case %zu: N %d, %dx%dx%d, mask %dx%d, stride %dx%d, pad %dx%d", ci, m.N,
                 m.H, m.W, m.C, m.R1, m.S, m.sy, m.sx, m.py, m.px);
        /* the merged layer (hs_merged): out = floor((H + 2p - R1) / sy) + 1 */
        const int oh = (m.H + 2 * m.py - m.R1) / m.sy + 1, ow = (m.W + 2 * m.px - m.S) / m.sx + 1;
        const int r1 = (m.R1 + m.sy - 1) / m.sy;
        hs_mgeom g;
        g.Hm = oh + r1 - 1;
        g.Wm = ow;
        g.Cm = (m.sy * m.S * m.C + 7) / 8 * 8;
        g.H = m.H; g.W = m.W; g.C = m.C; g.S = m.S; g.sy = m.sy; g.sx = m.sx; g.py = m.py; g.px = m.px;
        const size_t nx = (size_t)m.N * m.H * m.W * m.C;
        uint16_t *x = (uint16_t *)malloc(nx * 2);
        th_rng r = th_rng_for(7100 + ci);
        for (size_t i = 0; i < nx; i++) x[i] = (uint16_t)(1 + th_int(&r, 0, 60000));
        long bad = 0, checked = 0, nonzero = 0;
        for (int n = 0; n < m.N; n++)
            for (int hq = 0; hq < g.Hm; hq++)
                for (int wq = 0; wq < g.Wm; wq++)
                    for (int j = 0; j < g.Cm; j++, checked++) {
                        /* the direct definition */
                        uint16_t want = 0;
                        const int SC = m.S * m.C;
                        if (j < m.sy * SC) {
                            const int dy = j / SC, rem = j % SC, s = rem / m.C, c = rem % m.C;
                            const int hi = hq * m.sy + dy - m.py, wi = wq * m.sx + s - m.px;
                            if (hi >= 0 && hi < m.H && wi >= 0 && wi < m.W)
                                want = x[(((size_t)n * m.H + hi) * m.W + wi) * m.C + c];
                        }
                        /* the kernel's: column part once, row part a row */
                        int dy, xo;
                        hs_merge_col(g, wq, j, &dy, &xo);
                        uint16_t got = 0;
                        const int hi = dy < 0 ? -1 : hs_merge_row(g, hq, dy);
                        if (hi >= 0) got = x[(size_t)n * m.H * m.W * m.C + (size_t)hi * m.W * m.C + xo];
                        nonzero += want != 0;
                        if (got != want && bad++ < 5)
                            CHECK(0, "n %d h' %d w' %d j %d: want %u, got %u", n, hq, wq, j, want, got);
                    }
        CHECK(bad == 0, "%ld of %ld elements wrong", bad, checked);
        CHECK(nonzero > checked / 8, "only %ld of %ld elements read the input", nonzero, checked);
        free(x);
        TH_END();
    }
    return th_finish();
}
