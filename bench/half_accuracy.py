#!/usr/bin/env python3
"""Accuracy of float16 / bfloat16 conv layers against float64, beside the
peer on the same data: torch's own conv2d in the same dtype (on the CPU,
torch 1.13's bfloat16 conv2d runs oneDNN's kernels; on a GPU, cuDNN).

usage: half_accuracy.py [--device cpu|cuda] [--batch N]

For each layer: inputs and weights uniform(-1, 1) rounded to the dtype, a
float64 reference on those rounded values, and for each implementation
err = max|y - y64| / max|y64| (the measure of docs/semantics.md), with the
fused epilogue off and on (relu + residual). Prints one row per layer and
dtype; the numbers go to docs/semantics.md.
"""
import argparse
import sys

import numpy as np

try:
    import torch
    import torch.nn.functional as TF
except ImportError:
    print("half_accuracy: needs torch")
    sys.exit(1)
import tileconv.nn.functional as F

LAYERS = [  # name, C, K, H, k, stride, pad
    ("conv1 7x7/2", 3, 64, 112, 7, 2, 3),
    ("3x3 64 @56", 64, 64, 56, 3, 1, 1),
    ("3x3 256 @14", 256, 256, 14, 3, 1, 1),
    ("1x1 256->64 @56", 256, 64, 56, 1, 1, 0),
]


def err(y, ref):
    y = y.detach().to("cpu", torch.float64).numpy()
    return float(np.abs(y - ref).max() / np.abs(ref).max())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch", type=int, default=2)
    a = ap.parse_args()
    dev = torch.device(a.device)
    g = torch.Generator().manual_seed(7)
    print(f"device {a.device}, torch {torch.__version__}, batch {a.batch}")
    print(f"{'layer':<18} {'dtype':<9} {'peer':>9} {'tileconv':>9} {'peer+ep':>9} "
          f"{'tc+ep':>9}  algorithm")
    for name, C, K, H, k, s, p in LAYERS:
        for dt in (torch.bfloat16, torch.float16):
            x = (torch.rand(a.batch, C, H, H, generator=g) * 2 - 1).to(dt)
            w = (torch.rand(K, C, k, k, generator=g) * 2 - 1).to(dt) / (C * k * k) ** 0.5
            w = w.to(dt)
            b = (torch.rand(K, generator=g) * 2 - 1).to(dt)
            ref = TF.conv2d(x.double(), w.double(), b.double(), s, p)
            r = (torch.rand(ref.shape, generator=g) * 2 - 1).to(dt)
            ref_ep = torch.relu(ref + r.double())
            xd, wd, bd, rd = (t.to(dev).contiguous(memory_format=torch.channels_last)
                              if t.dim() == 4 else t.to(dev) for t in (x, w, b, r))
            try:
                peer = err(TF.conv2d(xd, wd, bd, s, p), ref.numpy())
                peer_ep = err(torch.relu(TF.conv2d(xd, wd, bd, s, p) + rd), ref_ep.numpy())
            except RuntimeError as e:  # e.g. float16 conv on a CPU without it
                peer = peer_ep = float("nan")
                print(f"  (peer: {str(e).splitlines()[0][:70]})")
            ours = err(F.conv2d(xd, wd, bd, s, p), ref.numpy())
            ours_ep = err(F.conv2d(xd, wd, bd, s, p, activation="relu", residual=rd),
                          ref_ep.numpy())
            algo = F.last_algorithm() if hasattr(F, "last_algorithm") else ""
            print(f"{name:<18} {str(dt)[6:]:<9} {peer:9.2e} {ours:9.2e} {peer_ep:9.2e} "
                  f"{ours_ep:9.2e}  {algo}")


if __name__ == "__main__":
    main()
