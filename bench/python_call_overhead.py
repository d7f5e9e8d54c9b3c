#!/usr/bin/env python3
"""python_call_overhead.py - the per-call HOST cost of the package's entry
points, on arrays so small that the filter's own work is negligible: the
Python and C work around the library call (argument checks, array-kind
dispatch, the plan-cache key, weight handling, output allocation, the C
call itself). Runs without a GPU: the device code paths run on the CPU
stand-ins of tests/python/fake_device.py (CupyLike arrays through
CupyBackend's own code and a stand-in cupy module; torch CPU tensors taken
as device tensors through TorchBackend's code; CPU plans on host
addresses), beside the plain host path of the same call and its peer
(scipy.ndimage / torch on the CPU) in the same process.

usage: python_call_overhead.py [--calls N] [--repeat R] [--only SUBSTR]
                               [--profile ROW] [--also PACKAGE]

Per row: R rounds (after one warm-up round), each N calls timed with
perf_counter, the rows of a round alternating; printed: the median per
call in microseconds and its ratio to the row's peer. The CPU plans run
on one thread (tileconv.ndimage.threads = tileconv.nn.functional.threads
= 1, torch.set_num_threads(1)). --also PACKAGE adds the tileconv rows of
another copy of the package importable under that name (e.g. an older
revision's python/tileconv beside the same _core extension), tagged
[PACKAGE], in the same rounds: a before / after in one process. --profile ROW runs
cProfile over N calls of the row whose name contains ROW and prints the
top of it (tottime). The stand-ins' own Python properties cost more than
CuPy's Cython ones, so a stand-in row is an upper bound of the package's
part, not a CuPy figure.
"""
import argparse
import cProfile
import os
import platform
import pstats
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))


def _machine():
    model = platform.processor() or "?"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return f"{model}; load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}"


def rows(pkg="tileconv", peers=True):
    import importlib

    import scipy.ndimage as SN

    TN = importlib.import_module(pkg + ".ndimage")
    TF = importlib.import_module(pkg + ".nn.functional")
    _gpu = importlib.import_module(pkg + "._gpu")
    import fake_device as FD
    tag = "" if pkg == "tileconv" else f" [{pkg}]"

    # one thread: a pool's wake-up would dwarf a 16^2 filter (GPU plans
    # have no pool)
    TN.threads = 1
    TF.threads = 1
    R = []  # (name, peer name or None, fn)
    rng = np.random.default_rng(1)
    x = rng.random((16, 16)).astype(np.float32)
    w = rng.random((3, 3)).astype(np.float32)
    R.append(("ndimage.correlate 16^2 f32 3x3 wrap numpy", None,
              lambda: TN.correlate(x, w, mode="wrap")))
    if peers:
        R.append(("scipy.ndimage.correlate 16^2 f32 3x3 wrap", None,
                  lambda: SN.correlate(x, w, mode="wrap")))

    # CupyBackend's code on CupyLike arrays (CPU plans), weights on the host
    class CupyCPUBackend(_gpu.CupyBackend):
        plan_backend = 0
    if "cupy" not in sys.modules:
        sys.modules["cupy"] = FD.fake_cupy_module()
    _gpu.BACKENDS.insert(0, CupyCPUBackend())
    xc = FD.CupyLike(x.copy())
    R.append(("ndimage.correlate 16^2 f32 3x3 wrap CupyLike, w host",
              "ndimage.correlate 16^2 f32 3x3 wrap numpy",
              lambda: TN.correlate(xc, w, mode="wrap")))
    oc = FD.CupyLike(np.empty_like(x))
    R.append(("ndimage.correlate 16^2 f32 3x3 wrap CupyLike, output=",
              "ndimage.correlate 16^2 f32 3x3 wrap numpy",
              lambda: TN.correlate(xc, w, output=oc, mode="wrap")))
    R.append(("ndimage.correlate1d 16^2 f32 3 taps CupyLike",
              "ndimage.correlate 16^2 f32 3x3 wrap numpy",
              lambda: TN.correlate1d(xc, w[0], axis=0, mode="wrap")))

    try:
        import torch
    except ImportError:
        return R
    torch.set_num_threads(1)
    tb = type("TorchCPUBackend", (_gpu.TorchBackend,),
              {"plan_backend": 0, "owns": FD.TorchCPUBackend.owns,
               "stream": FD.TorchCPUBackend.stream})()
    xt = torch.from_numpy(x.copy())
    R.append(("ndimage.correlate 16^2 f32 3x3 wrap torch-as-device, w host",
              "ndimage.correlate 16^2 f32 3x3 wrap numpy",
              lambda: _with(_gpu, tb, lambda: TN.correlate(xt, w, mode="wrap"))))

    tnn = importlib.import_module(pkg + ".nn.modules")
    torch.manual_seed(2)
    xi = torch.rand((1, 4, 8, 8))
    wt = torch.rand((4, 4, 3, 3)) - 0.5
    bt = torch.rand(4)
    xn, wn, bn = xi.numpy(), wt.numpy(), bt.numpy()
    R.append(("nn.functional.conv2d 4->4 3x3 1x4x8x8 torch CPU", "torch conv2d",
              lambda: TF.conv2d(xi, wt, bt, padding=1)))
    R.append(("nn.functional.conv2d 4->4 3x3 1x4x8x8 numpy", "torch conv2d",
              lambda: TF.conv2d(xn, wn, bn, padding=1)))
    if peers:
        R.append(("torch conv2d", None,
                  lambda: torch.nn.functional.conv2d(xi, wt, bt, padding=1)))
    ref = torch.nn.Conv2d(4, 4, 3, padding=1)
    ours = tnn.Conv2d(4, 4, 3, padding=1)
    ours.load_state_dict(ref.state_dict())
    R.append(("nn.Conv2d 4->4 3x3 1x4x8x8 torch CPU", "torch Conv2d", lambda: ours(xi)))
    if peers:
        R.append(("torch Conv2d", None, lambda: ref(xi)))
    return [(n + tag, p, f) for n, p, f in R]


def _with(_gpu, be, fn):
    """fn with be first in _gpu.BACKENDS (torch CPU tensors as device
    tensors); the list is swapped, not copied, per call."""
    old = _gpu.BACKENDS
    _gpu.BACKENDS = [be] + old
    try:
        return fn()
    finally:
        _gpu.BACKENDS = old


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--profile", default="")
    ap.add_argument("--also", default="")
    a = ap.parse_args()
    import tileconv
    try:
        import torch
        ctx = torch.no_grad()
    except ImportError:
        import contextlib
        ctx = contextlib.nullcontext()
    with ctx:
        R = rows()
        if a.also:
            R += rows(a.also, peers=False)
        R = [r for r in R if a.only in r[0]]
        if a.profile:
            name, _, fn = next(r for r in R if a.profile in r[0])
            fn()
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(a.calls):
                fn()
            pr.disable()
            print(f"cProfile: {name}, {a.calls} calls")
            pstats.Stats(pr).sort_stats("tottime").print_stats(25)
            return
        print(f"python_call_overhead: {_machine()}; tileconv {tileconv.__version__}, "
              f"python {platform.python_version()}, numpy {np.__version__}")
        print(f"median of {a.repeat} rounds of {a.calls} calls (after one warm-up round), "
              "rows alternating; us per call")
        t = {r[0]: [] for r in R}
        for rnd in range(a.repeat + 1):
            for name, _, fn in R:
                n = a.calls if rnd else max(1, a.calls // 10)
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                dt = (time.perf_counter() - t0) / n
                if rnd:
                    t[name].append(dt)
        med = {k: statistics.median(v) * 1e6 for k, v in t.items()}
        for name, peer, _ in R:
            s = f"{name:74s} {med[name]:8.2f} us"
            if peer in med:
                s += f"   {med[name] / med[peer]:5.2f}x {peer}"
            print(s)


if __name__ == "__main__":
    main()
