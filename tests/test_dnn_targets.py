#!/usr/bin/env python3
"""test_dnn_targets.py - bench/dnn_targets.py (the layer suite's targets over runs
of `tileconv bench --suite dnn --json`) on synthetic runs: each target met
and missed, the best-of-runs combination, bad input.

    python3 tests/test_dnn_targets.py

Standard library only. Prints "N passed, N failed, 0 skipped" last."""
import json
import os
import subprocess
import sys
import tempfile

from pycheck import check, finish

here = os.path.dirname(os.path.abspath(__file__))
script = os.path.join(here, "..", "bench", "dnn_targets.py")


def layer(lid, auto, any_, forced=None, modes=None, err=1e-6):
    rs = [{"name": "auto", "info": "cpu.conv.x", "median_ms": auto, "best_ms": auto,
           "samples": 9, "err_vs_f64": err},
          {"name": "onednn.any", "info": "oneDNN", "median_ms": any_, "best_ms": any_,
           "samples": 9, "err_vs_f64": 1e-6}]
    for n, t in (forced or {"cpu.conv.x": auto}).items():
        rs.append({"name": n, "info": n, "median_ms": t, "best_ms": t, "samples": 9,
                   "err_vs_f64": err})
    for n, t in (modes or {}).items():
        rs.append({"name": n, "info": "cpu.conv.x", "median_ms": t, "best_ms": t, "samples": 9,
                   "err_vs_f64": -1})
    return {"id": lid, "label": lid, "gflop": 1.0, "runners": rs}


def good():
    # every target met: 3x3 layers 1.5x, others 1.0x, modes 1.05x
    return [layer("r50-3x3-64", 1.0, 1.5, modes={"auto.reflect": 1.05, "auto.circular": 1.0}),
            layer("r50-1x1-256-64", 1.0, 1.0),
            layer("r50-conv1", 1.0, 1.3)]


def run(*runs):
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for i, r in enumerate(runs):
            p = os.path.join(d, f"r{i}.json")
            with open(p, "w") as f:
                if isinstance(r, str):
                    f.write(r)
                else:
                    json.dump({"machine": "test", "threads": 2, "layers": r}, f)
            paths.append(p)
        pr = subprocess.run([sys.executable, script] + paths, capture_output=True, text=True)
        return pr.returncode, pr.stdout + pr.stderr


rc, out = run(good())
check("all targets met: exit 0", rc == 0, out)
check("all targets met: no MISS line", "MISS" not in out, out)

bad3 = good()
bad3[0] = layer("r50-3x3-64", 1.0, 1.25)
rc, out = run(bad3)
check("3x3 stride-1 at 1.25x: exit 1", rc == 1, out)
check("3x3 stride-1 at 1.25x: named", "MISS 3x3 stride-1 layers >= 1.3x: r50-3x3-64 1.25" in out, out)

low = good()
low[1] = layer("r50-1x1-256-64", 1.0, 0.7)
rc, out = run(low)
check("a layer at 0.7x: exit 1", rc == 1 and "MISS no layer below 0.8x: r50-1x1-256-64 0.70" in out, out)

geo = [layer("r50-1x1-256-64", 1.0, 1.1), layer("r50-conv1", 1.0, 1.1)]
rc, out = run(geo)
check("geomean 1.10: exit 1", rc == 1 and "MISS geomean vs onednn.any 1.10" in out, out)

mode = good()
mode[0] = layer("r50-3x3-64", 1.0, 1.5, modes={"auto.circular": 1.12})
rc, out = run(mode)
check("padding mode at 1.12x zeros: exit 1",
      rc == 1 and "MISS worst padding mode / zeros 1.12 (r50-3x3-64 auto.circular" in out, out)

err = good()
err[1] = layer("r50-1x1-256-64", 1.0, 1.0, err=2e-4)
rc, out = run(err)
check("error 2e-4: exit 1", rc == 1 and "MISS worst error 2.0e-04" in out, out)

est = good()
est[1] = layer("r50-1x1-256-64", 1.3, 1.3, forced={"cpu.conv.a": 1.0, "cpu.conv.b": 1.3})
rc, out = run(est)
check("ESTIMATE 1.30x the best forced: exit 1",
      rc == 1 and "MISS ESTIMATE / best forced 1.30 (r50-1x1-256-64" in out, out)

# best of runs: run A misses 3x3 (ours slow), run B misses it too (oneDNN
# fast), the best of each runner meets it (ours 1.0 of A, oneDNN 1.4 of B)
a = good()
a[0] = layer("r50-3x3-64", 1.2, 1.4)
b = good()
b[0] = layer("r50-3x3-64", 1.0, 1.2)
rc, out = run(a, b)
tail = out[out.index("best of 2 runs"):] if "best of 2 runs" in out else ""
check("best of two runs: each run and the combination miss", out.count("MISS 3x3") == 3, out)
check("best of two runs: each runner's best median (oneDNN 1.2 / ours 1.0)",
      rc == 1 and "MISS 3x3 stride-1 layers >= 1.3x: r50-3x3-64 1.20" in tail, out)
check("best of two runs: the tally of single runs",
      "3x3 stride-1 layers >= 1.3x: met in 0 of 2" in out and "no layer below 0.8x: met in 2 of 2" in out
      and "every target in one run: 0 of 2" in out, out)
b[0] = layer("r50-3x3-64", 1.0, 1.5)
a[0] = layer("r50-3x3-64", 1.2, 1.6)
rc, out = run(a, b)
tail = out[out.index("best of 2 runs"):] if "best of 2 runs" in out else ""
check("best of two runs: combined ratio from each runner's best (1.5 / 1.0)",
      rc == 0 and "r50-3x3-64" in tail and " 1.50 " in tail, out)

rc, out = run("{not json")
check("bad JSON: exit non-zero, one line naming the file",
      rc != 0 and "cannot read" in out and len(out.strip().splitlines()) == 1, out)
rc, out = run('{"machine": "x"}')
check("JSON without layers: exit non-zero", rc != 0 and "not a --suite dnn JSON" in out, out)

finish()
