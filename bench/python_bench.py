#!/usr/bin/env python3
"""python_bench.py - tileconv's Python package beside scipy (and torch's CPU
conv when installed), in one process: median of repeats after warm-up.

    build-venv/bin/python bench/python_bench.py"""
import os
import platform
import time

import numpy as np
import scipy.ndimage as S

import tileconv
import tileconv.ndimage as T
import tileconv.nn.functional as F


def med(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)) * 1e3


def model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


print(f"tileconv {tileconv.__version__} python bench: {model()}, {os.cpu_count()} CPUs")
r = np.random.default_rng(0)
img = r.random((2048, 2048), dtype=np.float32)
w9 = r.random((9, 9))
a, b = med(lambda: T.convolve(img, w9), 7), med(lambda: S.convolve(img, w9), 3)
print(f"ndimage.convolve 2048^2 float32 k9: tileconv {a:.2f} ms, scipy {b:.1f} ms: {b / a:.1f}x")
small = r.random((64, 64))
w3 = r.random((3, 3))
a, b = med(lambda: T.convolve(small, w3), 501), med(lambda: S.convolve(small, w3), 501)
print(f"ndimage.convolve 64^2 float64 k3 (per-call cost): tileconv {a * 1e3:.1f} us, "
      f"scipy {b * 1e3:.1f} us: {b / a:.2f}x")
vol = r.random((128, 128, 128), dtype=np.float32)
a, b = med(lambda: T.gaussian_filter(vol, 2.0), 5), med(lambda: S.gaussian_filter(vol, 2.0), 3)
print(f"ndimage.gaussian_filter 128^3 float32 sigma 2: tileconv {a:.2f} ms, scipy {b:.1f} ms: "
      f"{b / a:.1f}x")
import scipy.signal as SS
import tileconv.signal as TS
sig = r.random(1 << 20)
ker = r.random(257)
a, b = med(lambda: TS.fftconvolve(sig, ker), 7), med(lambda: SS.fftconvolve(sig, ker), 7)
print(f"signal.fftconvolve 2^20 x 257 float64: tileconv {a:.2f} ms, scipy {b:.2f} ms: {b / a:.2f}x")
x = r.random((1, 64, 56, 56), dtype=np.float32)
w = r.random((64, 64, 3, 3), dtype=np.float32)
a = med(lambda: F.conv2d(x, w, padding=1), 11)
try:
    import torch
    torch.set_num_threads(os.cpu_count())
    X, W = torch.from_numpy(x), torch.from_numpy(w)
    with torch.no_grad():
        b = med(lambda: torch.nn.functional.conv2d(X, W, padding=1), 11)
    print(f"nn.functional.conv2d 1x64x56x56 3x3: tileconv {a:.3f} ms, torch (CPU) {b:.3f} ms: "
          f"{b / a:.2f}x")
except ImportError:
    print(f"nn.functional.conv2d 1x64x56x56 3x3: tileconv {a:.3f} ms (torch not installed)")
