"""Where tileconv's CPU jobs run beside torch (TILECONV_THREADS, the C
library's knob; docs/python.md): by default (auto) on torch's OpenMP
runtime, the team its own operators use, so a convolution adds no threads
to the process; TILECONV_THREADS=pool keeps tileconv's own pinned pool.
Both give the same bits. Each setting runs in its own process (the knob is
read once)."""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

CHILD = r"""
import hashlib, json, os, torch
import tileconv.nn.functional as F
torch.set_num_threads(2)
F.threads = 2
def tasks():
    return len(os.listdir("/proc/self/task"))
g = torch.Generator().manual_seed(38)
big = torch.rand(1 << 22, generator=g)
for _ in range(3):  # torch's OpenMP team exists from here on
    big = torch.sigmoid(big)
n0 = tasks()
out = []
for shape, k, pad in (((2, 19, 29, 31), 3, 1), ((1, 64, 28, 28), 1, 0)):
    x = torch.rand(*shape, generator=g)
    w = torch.rand(23, shape[1], k, k, generator=g) - 0.5
    b = torch.rand(23, generator=g)
    y = F.conv2d(x, w, b, padding=pad)
    ref = torch.nn.functional.conv2d(x, w, b, padding=pad)
    assert torch.allclose(y, ref, rtol=1e-4, atol=1e-4)
    out.append(hashlib.sha256(y.numpy().tobytes()).hexdigest())
print(json.dumps({"added_threads": tasks() - n0, "digests": out}))
"""


def child(mode):
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if mode is None:
        env.pop("TILECONV_THREADS", None)
    else:
        env["TILECONV_THREADS"] = mode
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_default_runs_on_torchs_openmp_team_with_the_pools_bits():
    if "OpenMP" not in torch.__config__.parallel_info().split("ATen parallel backend:")[-1]:
        pytest.skip("torch's parallel backend is not OpenMP")
    if (os.cpu_count() or 1) < 2 or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: every job runs inline")
    auto, pool, omp = child(None), child("pool"), child("openmp")
    # the default and openmp run on torch's team: no thread of their own
    assert auto["added_threads"] == 0, auto
    assert omp["added_threads"] == 0, omp
    # the pool starts its workers at the first job
    assert pool["added_threads"] > 0, pool
    assert auto["digests"] == pool["digests"] == omp["digests"]
