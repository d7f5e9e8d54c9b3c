#!/usr/bin/env python3
"""torch_gemm_kernels.py - the CUDA kernels torch.matmul (cuBLAS) launches
for a square float32 product, TF32 off, at each size given (default 2048
4096): one line "SIZE NAME" a kernel, from torch.profiler. Used to point
Nsight Compute at cuBLAS's kernel (docs/solvers/cuda-gemm.md)."""
import sys

import torch

torch.backends.cuda.matmul.allow_tf32 = False
for n in [int(s) for s in sys.argv[1:]] or [2048, 4096]:
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
        a @ b
        torch.cuda.synchronize()
    for e in p.key_averages():
        if not e.key.startswith(("aten::", "cuda", "Activity")):
            print(n, e.key)
