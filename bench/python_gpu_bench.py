#!/usr/bin/env python3
"""python_gpu_bench.py - the Python binding on GPU arrays: wall time per call
(enqueue only, no synchronisation) of tileconv and of torch / CuPy on small
problems (the binding's own cost), and device time (synchronised) on a
ResNet layer. Needs a CUDA build of the package (TILECONV_CUDA=ON)."""
import time

import numpy as np
import torch

import tileconv.ndimage as T
import tileconv.nn.functional as F


def per_call_us(fn, n=2000):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    el = time.perf_counter() - t
    torch.cuda.synchronize()
    return el / n * 1e6


x = torch.rand((1, 8, 16, 16), device="cuda")
w = torch.rand((8, 8, 3, 3), device="cuda")
a = per_call_us(lambda: F.conv2d(x, w, padding=1))
b = per_call_us(lambda: torch.nn.functional.conv2d(x, w, padding=1))
print(f"GPU {torch.cuda.get_device_name(0)}: conv2d 1x8x16x16 per call (enqueue): tileconv "
      f"{a:.1f} us, torch {b:.1f} us")
try:
    import cupy as cp
    import cupyx.scipy.ndimage as CX
    img = cp.random.random((64, 64), dtype=cp.float32)
    k = np.ones((3, 3), np.float32) / 9
    kc = cp.asarray(k)
    a = per_call_us(lambda: T.correlate(img, k))
    b = per_call_us(lambda: CX.correlate(img, kc))
    print(f"ndimage.correlate 64x64 k3 per call (enqueue): tileconv {a:.1f} us, cupyx {b:.1f} us")
except ImportError:
    print("cupy not installed")
X = torch.rand((32, 64, 56, 56), device="cuda")
W = torch.rand((64, 64, 3, 3), device="cuda")
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.allow_tf32 = False


def dev_ms(fn, n=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(n):
        fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / n


print(f"conv2d 32x64x56x56 3x3 (device time): tileconv {dev_ms(lambda: F.conv2d(X, W, padding=1)):.3f} ms, "
      f"cuDNN fp32 {dev_ms(lambda: torch.nn.functional.conv2d(X, W, padding=1)):.3f} ms")
