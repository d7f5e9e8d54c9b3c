#!/usr/bin/env python3
"""gpu_peers.py - time the peers of the CUDA backend on the sizes of
bench/gpu_bench.cu and print one table against its JSON.

Peers: cuDNN (PyTorch conv1d/2d/3d, cudnn.benchmark=True, TF32 off),
cuBLAS (torch.matmul, TF32 off), CuPy cupyx.scipy.ndimage.convolve /
convolve1d and cupyx.scipy.signal.fftconvolve. Device-resident float32
inputs (random, never zeros), CUDA events, median of the repeats after
warm-up. Never asserts; a peer that fails prints why.

usage: gpu_peers.py OURS.json OUT_DIR
"""
import json
import os
import statistics
import sys
import time


def med_time(fn, reps, warm=2, sync=None, events=None):
    # warm-up: at least `warm` runs and 50 ms of them (as bench/gpu_bench.cu)
    t0, i = time.perf_counter(), 0
    while i < warm or time.perf_counter() - t0 < 0.05:
        fn()
        sync()
        i += 1
    ts = []
    for _ in range(reps):
        a, b = events()
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def main():
    ours_path = sys.argv[1] if len(sys.argv) > 1 else "gpu_bench.json"
    out_dir = sys.argv[2] if len(sys.argv) > 2 else "."
    ours = json.load(open(ours_path))
    peers = {}
    quick = os.environ.get("TILECONV_BENCH_QUICK", os.environ.get("TC_BENCH_QUICK", "0")) not in ("", "0")

    try:
        import torch
        import torch.nn.functional as F
        torch.backends.cudnn.benchmark = True
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        dev = torch.device("cuda")

        def tev():
            return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

        def tt(fn, reps):
            return med_time(fn, reps, 3, torch.cuda.synchronize, tev)

        with torch.no_grad():
            for k in range(3, 16, 2):
                x = torch.rand(1, 1, 8192, 8192, device=dev) - 0.5
                w = torch.rand(1, 1, k, k, device=dev) - 0.5
                peers[f"cudnn 2D 8192^2 k{k}"] = tt(lambda: F.conv2d(x, w, padding=k // 2), 20)
            for k in (3, 5, 7):
                x = torch.rand(1, 1, 512, 512, 512, device=dev) - 0.5
                w = torch.rand(1, 1, k, k, k, device=dev) - 0.5
                peers[f"cudnn 3D 512^3 k{k}"] = tt(lambda: F.conv3d(x, w, padding=k // 2), 10)
            del x
            for i, (s, k) in enumerate([((64, 64, 64), 3), ((64, 64, 64), 3), ((128, 128, 128), 5),
                                        ((32, 64, 64), 5), ((32, 64, 64), 3)]):
                x = torch.rand(1, 1, *s, device=dev) - 0.5
                w = torch.rand(1, 1, k, k, k, device=dev) - 0.5
                peers[f"cudnn report test {i + 1}"] = tt(lambda: F.conv3d(x, w, padding=k // 2), 50)
            for k in (3, 7, 15, 31, 63):
                x = torch.rand(1, 1, 1 << 26, device=dev) - 0.5
                w = torch.rand(1, 1, k, device=dev) - 0.5
                peers[f"cudnn 1D 2^26 k{k}"] = tt(lambda: F.conv1d(x, w, padding=k // 2), 20)
            for n in (4096, 8192):
                a = torch.rand(n, n, device=dev) - 0.5
                b = torch.rand(n, n, device=dev) - 0.5
                peers[f"cublas SGEMM {n}^3"] = tt(lambda: torch.matmul(a, b), 10)
            del a, b, x
        torch.cuda.empty_cache()
    except Exception as e:  # never assert: report and go on
        print(f"torch peers failed: {e!r}")

    try:
        import cupy as cp
        import cupyx.scipy.ndimage as cnd
        import cupyx.scipy.signal as csig

        def ct(fn, reps):
            t0, i = time.perf_counter(), 0
            while i < 2 or time.perf_counter() - t0 < 0.05:  # warm-up, as med_time
                fn()
                cp.cuda.Device().synchronize()
                i += 1
            ts = []
            for _ in range(reps):
                a, b = cp.cuda.Event(), cp.cuda.Event()
                a.record()
                fn()
                b.record()
                b.synchronize()
                ts.append(cp.cuda.get_elapsed_time(a, b))
            return statistics.median(ts)

        rs = cp.random.RandomState(5)
        x = rs.random_sample((8192, 8192), dtype=cp.float32) - 0.5
        for k in range(3, 16, 2):
            w = rs.random_sample((k, k), dtype=cp.float32) - 0.5
            peers[f"cupy 2D 8192^2 k{k}"] = ct(lambda: cnd.correlate(x, w, mode="constant"), 5)
        w = rs.random_sample((63, 63), dtype=cp.float32) - 0.5
        peers["cupy fftconvolve 2D 8192^2 k63"] = ct(lambda: csig.fftconvolve(x, w, mode="same"), 5)
        del x
        x = rs.random_sample((512, 512, 512), dtype=cp.float32) - 0.5
        for k in (3, 5, 7):
            if quick and k != 3:
                continue
            w = rs.random_sample((k, k, k), dtype=cp.float32) - 0.5
            peers[f"cupy 3D 512^3 k{k}"] = ct(lambda: cnd.correlate(x, w, mode="constant"), 3)
        del x
        x = rs.random_sample((1 << 26,), dtype=cp.float32) - 0.5
        for k in (3, 7, 15, 31, 63):
            w = rs.random_sample((k,), dtype=cp.float32) - 0.5
            peers[f"cupy 1D 2^26 k{k}"] = ct(lambda: cnd.correlate1d(x, w, mode="constant"), 5)
        del x
    except Exception as e:
        print(f"cupy peers failed: {e!r}")

    # ---------------- one table ----------------
    copy = ours["copy_gbs"]
    peak = ours["peak_gflops"]
    byname = {}
    for r in ours["results"]:
        byname.setdefault((r["group"], r["name"]), []).append(r)

    rows = []

    def row(label, r, metric, target, peer_label=None, peer_ms=None, need=None, extra=""):
        ms = r["ms"] if r and r["ok"] else None
        if metric == "copy":
            val = 100.0 * r["gbs"] / copy if ms else 0
            got = f"{val:5.1f}% copy"
            ok = val >= target
        elif metric == "peak":
            val = 100.0 * r["gflops"] / peak if ms else 0
            got = f"{val:5.1f}% peak"
            ok = val >= target
        else:
            got, ok = "", True
        ratio = ""
        if peer_ms and ms:
            q = peer_ms / ms
            ratio = f"{q:5.2f}x {peer_label}"
            if need:
                ok = ok and q >= need
        elif need:
            ok = None  # the peer did not run: unknown
        if metric is None and not need:
            ok = None  # no target for this row
        rows.append({"case": label, "algo": r["algo"] if r else "-", "ms": ms, "metric": got,
                     "peer": peer_label, "peer_ms": peer_ms, "ratio": ratio,
                     "target_met": None if ok is None else bool(ok and ms), "extra": extra})

    def get(group, name):
        v = byname.get((group, name))
        return v[0] if v else None

    for k in range(3, 16, 2):
        r = get("2d", f"2D 8192^2 k{k}")
        if not r:
            continue
        cu = peers.get(f"cupy 2D 8192^2 k{k}")
        dn = peers.get(f"cudnn 2D 8192^2 k{k}")
        metric, tgt = ("copy", 85) if k <= 7 else ("peak", 65)
        row(f"2D 8192^2 k{k}", r, metric, tgt, "cupy", cu, 3.0,
            f"cudnn {dn:.3f} ms ({dn / r['ms']:.2f}x)" if dn and r["ok"] else "")
    for grp, case, basegrp, basecase in (("2dmode", "2D 8192^2 k5", "2d", "2D 8192^2 k5"),
                                         ("3dmode", "3D 512^3 k3", "3d", "3D 512^3 k3")):
        for md in ("nearest", "reflect", "mirror", "wrap"):
            r = get(grp, f"{case} {md}")
            base = get(basegrp, basecase)
            if r and base and r["ok"] and base["ok"]:
                over = 100.0 * (r["ms"] / base["ms"] - 1)
                rows.append({"case": f"{case} {md}", "algo": r["algo"], "ms": r["ms"],
                             "metric": f"{over:+5.1f}% vs constant", "peer": None, "peer_ms": None,
                             "ratio": "", "target_met": over <= 5, "extra": ""})
    for grp in ("2dseed",):
        for r in ours["results"]:
            if r["group"] == grp:
                rows.append({"case": f"{r['name']} (seed)", "algo": r["algo"], "ms": r["ms"] if r["ok"] else None,
                             "metric": f"{100 * r['gbs'] / copy:5.1f}% copy", "peer": None,
                             "peer_ms": None, "ratio": "", "target_met": None, "extra": ""})
    for name in ("2D 8192^2 k63", "2D 8192^2 k63 (auto)"):
        r = get("2dfft", name)
        if r:
            row(name, r, None, 0, "cupy fftconvolve", peers.get("cupy fftconvolve 2D 8192^2 k63"), 2.0)
    for k in (3, 5, 7):
        r = get("3d", f"3D 512^3 k{k}")
        if not r:
            continue
        metric, tgt = ("copy", 85) if k == 3 else ("peak", 65)
        dn = peers.get(f"cudnn 3D 512^3 k{k}")
        row(f"3D 512^3 k{k}", r, metric, tgt, "cupy", peers.get(f"cupy 3D 512^3 k{k}"), 3.0,
            f"cudnn {dn:.3f} ms ({dn / r['ms']:.2f}x)" if dn and r["ok"] else "")
    for k in (3, 7, 15, 31, 63):
        r = get("1d", f"1D 2^26 k{k}")
        if not r:
            continue
        dn = peers.get(f"cudnn 1D 2^26 k{k}")
        row(f"1D 2^26 k{k}", r, "copy", 85, "cupy", peers.get(f"cupy 1D 2^26 k{k}"), 3.0,
            f"cudnn {dn:.3f} ms" if dn else "")
    for r in ours["results"]:
        if r["group"] == "1dseed":
            rows.append({"case": f"{r['name']} (seed)", "algo": r["algo"], "ms": r["ms"] if r["ok"] else None,
                         "metric": f"{100 * r['gbs'] / copy:5.1f}% copy", "peer": None,
                         "peer_ms": None, "ratio": "", "target_met": None, "extra": ""})
    for i in range(5):
        for grp in ("report", "reportseed"):
            rr = [r for r in ours["results"] if r["group"] == grp and r["name"].startswith(f"report test {i + 1} ")]
            if not rr:
                continue
            r = rr[0]
            dn = peers.get(f"cudnn report test {i + 1}")
            row(r["name"] + (" (seed)" if grp == "reportseed" else ""), r, None, 0, "cudnn", dn,
                2.0 if grp == "report" else None,
                (f"report GPU {r['report_s'] * 1e3:.3f} ms ({r['report_s'] * 1e3 / r['ms']:.0f}x); "
                 f"back-to-back {r.get('ms_batch', 0):.4f} ms") if r["ok"] else "")
    for n in (4096, 8192):
        cb = peers.get(f"cublas SGEMM {n}^3")
        for r in ours["results"]:
            if r["group"] == "gemm" and r["name"] == f"SGEMM {n}^3":
                fast = r["algo"] == "cuda.gemm.simt"
                row(f"SGEMM {n}^3 {r['algo']}", r, None, 0, "cublas", cb, 0.95 if fast else None,
                    f"{r['gflops'] / 1e3:.1f} TFLOP/s" if r["ok"] else "")

    lines = [f"device: {ours['device']}; D2D copy {copy:.0f} GB/s (measured, read+write); "
             f"FP32 peak {peak / 1e3:.1f} TFLOP/s (nominal)",
             f"{'case':42s} {'algo':22s} {'ours ms':>9s} {'metric':>18s} {'peer ms':>9s} {'ours vs peer':>24s} "
             f"{'target':>6s}  notes"]
    for r in rows:
        ms = f"{r['ms']:.4f}" if r["ms"] else "FAIL"
        pm = f"{r['peer_ms']:.4f}" if r["peer_ms"] else "-"
        tm = "-" if r["target_met"] is None else ("met" if r["target_met"] else "MISS")
        lines.append(f"{r['case']:42s} {r['algo']:22s} {ms:>9s} {r['metric']:>18s} {pm:>9s} "
                     f"{r['ratio']:>24s} {tm:>6s}  {r['extra']}")
    sw = [r for r in ours["results"] if r["group"] == "sweep" and r["ok"]]
    if sw:
        lines.append("cuda.filter.direct variant sweep (TILECONV_BENCH_SWEEP=1; #i = tc_cuda_kernel_report's variant i):")
        for r in sw:
            base = get("2d", r["name"]) or get("3d", r["name"]) or get("1d", r["name"]) or get("report", r["name"])
            rel = f"{r['ms'] / base['ms']:.3f}x default" if base and base["ok"] else ""
            lines.append(f"  {r['name']:40s} {r['algo']:18s} {r['ms']:9.4f} ms  {rel}")
    text = "\n".join(lines)
    print(text)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "gpu_table.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(out_dir, "gpu_results.json"), "w") as f:
        json.dump({"ours": ours, "peers_ms": peers, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
