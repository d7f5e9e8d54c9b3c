#!/usr/bin/python3
"""peer_scipy.py - times scipy.ndimage.convolve for `tileconv bench`.

usage: peer_scipy.py [--budget S] [--repeat N] ID:SHAPE:MASK ...
  SHAPE and MASK are 'x'-separated sizes, e.g. 2d-k3:4096x4096:3x3.
float32 data uniform in [-1, 1) from a fixed seed, mode='constant', cval=0,
output into a preallocated array. One warm-up run, then timed runs until N
runs or S seconds (at least one). Prints JSON lines: first
{"scipy": VERSION, "numpy": VERSION}, then one object per job:
{"id": ID, "median_ms": MS, "repeats": N}. scipy.ndimage is single-threaded.
"""
import json
import sys
import time


def main(argv):
    budget, repeat, jobs = 1.0, 5, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--budget":
            budget = float(argv[i + 1])
            i += 2
            continue
        if a == "--repeat":
            repeat = int(argv[i + 1])
            i += 2
            continue
        jobs.append(a)
        i += 1
    try:
        import numpy as np
        import scipy
        import scipy.ndimage as ndi
    except Exception as e:  # reported by the bench as the skip reason
        print(json.dumps({"error": "cannot import numpy/scipy: %s" % e}))
        return 3
    print(json.dumps({"scipy": scipy.__version__, "numpy": np.__version__}), flush=True)
    rng = np.random.default_rng(12345)
    for job in jobs:
        jid, shape, mask = job.split(":")
        shape = tuple(int(v) for v in shape.split("x"))
        mask = tuple(int(v) for v in mask.split("x"))
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        w = rng.uniform(-1, 1, mask).astype(np.float32)
        y = np.empty_like(x)
        ndi.convolve(x, w, output=y, mode="constant", cval=0.0)
        times = []
        t_end = time.perf_counter() + budget
        while len(times) < max(1, repeat):
            t0 = time.perf_counter()
            ndi.convolve(x, w, output=y, mode="constant", cval=0.0)
            times.append((time.perf_counter() - t0) * 1e3)
            if time.perf_counter() > t_end:
                break
        times.sort()
        n = len(times)
        med = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
        print(json.dumps({"id": jid, "median_ms": med, "repeats": n}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
