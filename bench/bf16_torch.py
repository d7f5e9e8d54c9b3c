"""bf16_torch.py - torch's CPU bfloat16 conv (oneDNN's AVX512-BF16 kernels)
on bench/bf16_layers.c's layers, for bench/bf16_layers.sh.

Per layer: torch.nn.functional.conv1d/2d/3d in bfloat16, contiguous and
channels_last (channels_last_3d; conv1d has no channels-last format),
weights in the same memory format, no grad; two warm-up calls, then
`rounds` rounds alternating the two formats; median and best in ms.
Threads: torch.set_num_threads(N); run it with OMP_PROC_BIND=spread
OMP_PLACES=cores (bf16_layers.sh does). Usage: bf16_torch.py THREADS ROUNDS
"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F

LAYERS = [  # id, nsp, N, C, K, G, in, k, stride, pad (bench/bf16_layers.c)
    ("r50-conv1", 2, 1, 3, 64, 1, 224, 7, 2, 3),
    ("r50-3x3-64", 2, 1, 64, 64, 1, 56, 3, 1, 1),
    ("r50-3x3-128", 2, 1, 128, 128, 1, 28, 3, 1, 1),
    ("r50-3x3-256", 2, 1, 256, 256, 1, 14, 3, 1, 1),
    ("r50-3x3-512", 2, 1, 512, 512, 1, 7, 3, 1, 1),
    ("r50-1x1-256-64", 2, 1, 256, 64, 1, 56, 1, 1, 0),
    ("r50-1x1-64-256", 2, 1, 64, 256, 1, 56, 1, 1, 0),
    ("r50-3x3-64-b8", 2, 8, 64, 64, 1, 56, 3, 1, 1),
    ("3d-3x3x3-32", 3, 1, 32, 32, 1, 32, 3, 1, 1),
    ("1d-k5-64", 1, 4, 64, 64, 1, 4096, 5, 1, 2),
    ("mbv1-dw-256", 2, 1, 256, 256, 256, 28, 3, 1, 1),
]


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 21
    torch.set_num_threads(threads)
    print("torch %s CPU bfloat16 conv, %d threads, %d rounds, ms (median / best)"
          % (torch.__version__, torch.get_num_threads(), rounds))
    print("%-16s %10s %10s %10s %10s" % ("layer", "contig", "ch_last", "best.contig", "best.chlast"))
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
    fmt = {2: torch.channels_last, 3: torch.channels_last_3d}
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for lid, nsp, n, c, k, groups, size, m, stride, pad in LAYERS:
            x = (torch.rand((n, c) + (size,) * nsp, generator=g) * 2 - 1).to(torch.bfloat16)
            w = (torch.rand((k, c // groups) + (m,) * nsp, generator=g) * 2 - 1).to(torch.bfloat16)
            forms = {"contig": (x.contiguous(), w.contiguous())}
            if nsp in fmt:
                forms["ch_last"] = (x.contiguous(memory_format=fmt[nsp]),
                                    w.contiguous(memory_format=fmt[nsp]))
            times = {f: [] for f in forms}
            for f, (xx, ww) in forms.items():
                for _ in range(2):
                    conv[nsp](xx, ww, None, stride, pad, 1, groups)
            for _ in range(rounds):
                for f, (xx, ww) in forms.items():
                    t0 = time.perf_counter()
                    conv[nsp](xx, ww, None, stride, pad, 1, groups)
                    times[f].append((time.perf_counter() - t0) * 1e3)
            med = {f: statistics.median(v) for f, v in times.items()}
            best = {f: min(v) for f, v in times.items()}
            print("%-16s %10.4f %10s %10.4f %10s" % (
                lid, med["contig"], "%.4f" % med["ch_last"] if "ch_last" in med else "-",
                best["contig"], "%.4f" % best["ch_last"] if "ch_last" in best else "-"))


if __name__ == "__main__":
    main()
