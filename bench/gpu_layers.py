#!/usr/bin/env python3
"""gpu_layers.py - the GPU conv-layer table (issue 11): tileconv's CUDA conv
beside cuDNN (PyTorch, cudnn.benchmark on), device-resident, CUDA events.

    python3 bench/gpu_layers.py path/to/tileconv OUTDIR

tileconv: `tileconv conv ... --backend cuda --repeat R --stats` whose
device_median_ms is measured with CUDA events around executes on device
copies (tc_cuda_time_plan). cuDNN: torch.nn.functional.conv{1,2,3}d on
CUDA tensors, warmed up, median of R timed runs between CUDA events, fp32
with TF32 off (the fp32 rows) and TF32 on (for reference: tileconv has no
TF32 path yet). Error: tileconv's output against a float64 CPU torch run,
max |y - y64| / max |y64|. Writes OUTDIR/gpu_layers.txt and .json."""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

cli, outdir = sys.argv[1], sys.argv[2]
try:
    import torch
except Exception as e:  # noqa: BLE001
    print(f"gpu_layers: no torch ({e}): nothing to compare")
    sys.exit(0)
if not torch.cuda.is_available():
    print("gpu_layers: no CUDA device")
    sys.exit(0)

R = int(os.environ.get("GPU_LAYERS_REPEAT", "20"))
# (name, nsp, N, C, K, G, in, k, stride, pad)
LAYERS = [
    ("r50-conv1 b32", 2, 32, 3, 64, 1, 224, 7, 2, 3),
    ("r50-3x3-64@56 b32", 2, 32, 64, 64, 1, 56, 3, 1, 1),
    ("r50-3x3-128@28 b32", 2, 32, 128, 128, 1, 28, 3, 1, 1),
    ("r50-3x3-256@14 b32", 2, 32, 256, 256, 1, 14, 3, 1, 1),
    ("r50-3x3-512@7 b32", 2, 32, 512, 512, 1, 7, 3, 1, 1),
    ("r50-1x1-256-64@56 b32", 2, 32, 256, 64, 1, 56, 1, 1, 0),
    ("3d-3x3x3-32@32 b8", 3, 8, 32, 32, 1, 32, 3, 1, 1),
    ("mbv1-dw-256@28 b32", 2, 32, 256, 256, 256, 28, 3, 1, 1),
]
F = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d, 3: torch.nn.functional.conv3d}


def cudnn_ms(fn, X, W, kw):
    with torch.no_grad():
        for _ in range(5):
            fn(X, W, **kw)
        torch.cuda.synchronize()
        ts = []
        for _ in range(R):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn(X, W, **kw)
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b))
    return float(np.median(ts))


torch.backends.cudnn.benchmark = True
rows, lines = [], []
hdr = (f"{'layer':24s} {'ours ms':>9s} {'TFLOP/s':>8s} {'cuDNN fp32':>10s} {'TFLOP/s':>8s} "
       f"{'ratio':>6s} {'cuDNN tf32':>10s} {'err_vs_f64':>10s}  algorithm")
lines.append(f"GPU: {torch.cuda.get_device_name(0)}; cuDNN {torch.backends.cudnn.version()}; "
             f"torch {torch.__version__}; median of {R} runs, CUDA events, device-resident data")
lines.append(hdr)
print(lines[0]); print(hdr)
rng = np.random.default_rng(11)
with tempfile.TemporaryDirectory() as d:
    for name, nsp, N, C, K, G, n, k, s, p in LAYERS:
        x = rng.uniform(-1, 1, (N, C) + (n,) * nsp).astype(np.float32)
        w = rng.uniform(-1, 1, (K, C // G) + (k,) * nsp).astype(np.float32)
        o = (n + 2 * p - k) // s + 1
        flops = 2.0 * N * K * o ** nsp * (C // G) * k ** nsp
        xp, wp, yp, sp = (os.path.join(d, f) for f in ("x.npy", "w.npy", "y.npy", "s.json"))
        np.save(xp, x); np.save(wp, w)
        cmd = [cli, "conv", xp, wp, yp, "--backend", "cuda", "--stride", str(s), "--padding",
               str(p), "--groups", str(G), "--repeat", str(R), "--stats", sp]
        t0 = time.time()
        pr = subprocess.run(cmd, capture_output=True, text=True)
        ours, algo, err = None, "-", None
        if pr.returncode == 0:
            st = json.load(open(sp))
            ours = st.get("device_median_ms")
            algo = st.get("algorithm", "?")
        else:
            algo = "FAILED: " + (pr.stderr.strip().splitlines() or ["?"])[-1]
        kw = dict(stride=s, padding=p, groups=G)
        X, W = torch.from_numpy(x).cuda(), torch.from_numpy(w).cuda()
        torch.backends.cudnn.allow_tf32 = False
        c32 = cudnn_ms(F[nsp], X, W, kw)
        torch.backends.cudnn.allow_tf32 = True
        ctf = cudnn_ms(F[nsp], X, W, kw)
        torch.backends.cudnn.allow_tf32 = False
        if pr.returncode == 0:
            y = np.load(yp).astype(np.float64)
            with torch.no_grad():
                ref = F[nsp](torch.from_numpy(x).double(), torch.from_numpy(w).double(), **kw).numpy()
            err = float(np.abs(y - ref).max() / max(np.abs(ref).max(), 1e-30))
        del X, W
        torch.cuda.empty_cache()
        row = dict(layer=name, ours_ms=ours, cudnn_fp32_ms=c32, cudnn_tf32_ms=ctf, gflop=flops / 1e9,
                   algorithm=algo, err_vs_f64=err)
        rows.append(row)
        line = (f"{name:24s} {ours if ours else float('nan'):9.3f} "
                f"{(flops / ours / 1e9) if ours else float('nan'):8.2f} {c32:10.3f} "
                f"{flops / c32 / 1e9:8.2f} {(c32 / ours) if ours else float('nan'):6.2f} "
                f"{ctf:10.3f} {err if err is not None else float('nan'):10.2e}  {algo}")
        lines.append(line)
        print(line, flush=True)
os.makedirs(outdir, exist_ok=True)
open(os.path.join(outdir, "gpu_layers.txt"), "w").write("\n".join(lines) + "\n")
json.dump(rows, open(os.path.join(outdir, "gpu_layers.json"), "w"), indent=1)
