#!/usr/bin/env python3
"""gpu_layers.py - the GPU conv-layer table: tileconv's CUDA conv
beside cuDNN (PyTorch, cudnn.benchmark on), device-resident, CUDA events,
all in one process.

    python3 bench/gpu_layers.py BUILD_DIR_or_CLI OUTDIR

tileconv through ctypes on BUILD_DIR/libtileconv.so: tc_plan_conv on a CUDA
context, then tc_cuda_time_plan (operands copied to the GPU once, one
warm-up, median of R executes between CUDA events). Rows:
  fp32  the planner's choice without TC_PLAN_ALLOW_TF32 (ESTIMATE), beside
        cuDNN with TF32 off; "generic" is cuda.conv.igemm with its generic
        kernel (64-bit offsets, any tap count) forced by
        TILECONV_CUDA_CONV_GENERIC, for comparison
  tf32  the planner's choice with TC_PLAN_ALLOW_TF32, beside cuDNN with
        TF32 on (torch.backends.cudnn.allow_tf32)
GPU_LAYERS_SWEEP=1 adds forced shapes of cuda.conv.igemm(-tf32) and the
tiled depthwise kernel's variants (printed, and in the JSON as "sweep");
GPU_LAYERS_TFV="1 3" repeats the TF32 sweep once per TF32 kernel variant
(TILECONV_CUDA_CONV_TF32_KERNEL), with each variant's error;
GPU_LAYERS_EXTRA=1 adds three more MobileNet depthwise layers, =1x1 four
more ResNet-50 1x1 layers, =fft three layers with large masks (11x11,
31x31, 9x9x9) and two with mid-sized ones (5x5, 7x7). Forced alternatives: cuda.conv.igemm, depthwise, winograd,
winograd2 and fft (fp32), each with its error where it is not direct.
GPU_LAYERS_KPROF=1 prints each call's device time split by kernel, ours and
cuDNN's, fp32 and TF32 (torch.profiler: CUPTI sees the library's launches
too), the host's us a call (device pointers, enqueue only) and the us a call
of 50 calls back to back, then a table of the device-time ratios (the main
table's ratios include each side's host time before its first kernel: a
single call between events on an idle GPU); JSON key "kprof".
Forced cuda.conv.winograd-f4(2) rows are timed (and their error measured) on
every layer they apply to; GPU_LAYERS_WINO_SWEEP=1 adds their GEMM tile
heights and per-stage times.
GPU_LAYERS_ALGO="NAME [NAME...]" adds each named solver, forced without
TC_PLAN_ALLOW_TF32 (e.g. cuda.conv.igemm-3xtf32, which the planner does not
pick), to the fp32 alternatives with its error, and prints a line a layer
and solver beside cuDNN fp32 ("forced NAME layer: ms, cuDNN fp32 ms, ratio,
err"; layers it does not take print its reason); JSON key "forced".
Errors: tileconv's output (host execute) against a float64 run of the same
layer (torch on the GPU in float64), max |y - y64| / max |y64|.
Writes OUTDIR/gpu_layers.txt and .json. Never asserts."""
import ctypes as C
import json
import os
import sys
import time

import numpy as np

from gpu_common import VP, ConvDesc, PlanOpts, setup

torch, lib, outdir = setup("gpu_layers")

lib.tc_plan_conv.argtypes = [C.POINTER(VP), VP, C.POINTER(ConvDesc), C.POINTER(PlanOpts)]
lib.tc_execute_conv.argtypes = [VP, VP, VP, VP, VP, VP]
lib.tc_context_set_backend.argtypes = [VP, C.c_int]
TC_BACKEND_CUDA = 2
TF32 = 4
ctx = VP()
lib.tc_context_create(C.byref(ctx))
lib.tc_context_set_backend(ctx, TC_BACKEND_CUDA)

R = int(os.environ.get("GPU_LAYERS_REPEAT", "30"))
# GPU_LAYERS_ALGO: solvers forced by name beside the fp32 rows
FORCED = os.environ.get("GPU_LAYERS_ALGO", "").replace(",", " ").split()
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
# GPU_LAYERS_EXTRA=1: more depthwise layers (MobileNet v1 shapes, batch 32)
if os.environ.get("GPU_LAYERS_EXTRA") == "1":
    LAYERS += [
        ("mbv1-dw-32@112 b32", 2, 32, 32, 32, 32, 112, 3, 1, 1),
        ("mbv1-dw-s2-128@56 b32", 2, 32, 128, 128, 128, 56, 3, 2, 1),
        ("mbv1-dw-512@14 b32", 2, 32, 512, 512, 512, 14, 3, 1, 1),
    ]
# GPU_LAYERS_EXTRA=1x1: the other ResNet-50 1x1 layers (batch 32)
if os.environ.get("GPU_LAYERS_EXTRA") == "1x1":
    LAYERS += [
        ("r50-1x1-64-256@56 b32", 2, 32, 64, 256, 1, 56, 1, 1, 0),
        ("r50-1x1-128-512@28 b32", 2, 32, 128, 512, 1, 28, 1, 1, 0),
        ("r50-1x1-512-128@28 b32", 2, 32, 512, 128, 1, 28, 1, 1, 0),
        ("r50-1x1-256-1024@14 b32", 2, 32, 256, 1024, 1, 14, 1, 1, 0),
    ]
# GPU_LAYERS_EXTRA=fft: layers with large masks (where cuda.conv.fft is meant
# to win)
if os.environ.get("GPU_LAYERS_EXTRA") == "fft":
    LAYERS += [
        ("large-11x11-64@56 b8", 2, 8, 64, 64, 1, 56, 11, 1, 5),
        ("large-31x31-16@128 b4", 2, 4, 16, 16, 1, 128, 31, 1, 15),
        ("3d-9x9x9-8@48 b2", 3, 2, 8, 8, 1, 48, 9, 1, 4),
        ("mid-5x5-64@56 b32", 2, 32, 64, 64, 1, 56, 5, 1, 2),
        ("mid-7x7-64@56 b16", 2, 16, 64, 64, 1, 56, 7, 1, 3),
    ]
if os.environ.get("GPU_LAYERS_ONLY"):
    LAYERS = [l for l in LAYERS if os.environ["GPU_LAYERS_ONLY"] in l[0]]
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


def ptr(a):
    return a.ctypes.data_as(VP)


def plan(desc, flags=0, algo=None):
    # GPU_LAYERS_TRACE=1: the planner's estimates (TILECONV_PLAN_TRACE) of the
    # planner's own picks on stderr (layers.log)
    tr = os.environ.get("GPU_LAYERS_TRACE") == "1" and algo is None
    if tr:
        sys.stderr.flush()
        os.environ["TILECONV_PLAN_TRACE"] = "1"
    try:
        return plan_(desc, flags, algo)
    finally:
        if tr:
            del os.environ["TILECONV_PLAN_TRACE"]


def plan_(desc, flags=0, algo=None):
    o = PlanOpts()
    lib.tc_plan_options_init(C.byref(o))
    o.flags = flags
    o.algorithm = algo.encode() if algo else None
    pl = VP()
    st = lib.tc_plan_conv(C.byref(pl), ctx, C.byref(desc), C.byref(o))
    if st != 0:
        return None, lib.tc_last_error().decode()
    return pl, lib.tc_plan_algorithm(pl).decode()


def time_plan(pl, x, w, tries=1):
    # the smallest of `tries` medians (cuDNN is timed the same way)
    best = None
    for _ in range(tries):
        med, mn = C.c_double(), C.c_double()
        st = lib.tc_cuda_time_plan(pl, ptr(x), ptr(w), None, R, C.byref(med), C.byref(mn))
        if st != 0:
            return None
        best = med.value if best is None else min(best, med.value)
    return best


def run_err(pl, x, w, ref, yshape):
    y = np.full(yshape, np.nan, np.float32)
    st = lib.tc_execute_conv(pl, ptr(y), ptr(x), ptr(w), None, None)
    if st != 0:
        return None
    return float(np.abs(y.astype(np.float64) - ref).max() / max(np.abs(ref).max(), 1e-30))


def kprof(fn, calls):
    # ([(kernel, mean us a call, launches a call)] of fn's kernels, the
    # longest six first, and all kernels' us a call; memcpy and memset left
    # out)
    from torch.profiler import ProfilerActivity, profile
    with torch.no_grad():
        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as pr:
            fn()
            torch.cuda.synchronize()
    out, tot = [], 0.0
    for e in pr.key_averages():
        t = getattr(e, "self_device_time_total", None)
        if t is None:
            t = getattr(e, "self_cuda_time_total", 0)
        if t and not e.key.lower().startswith(("memcpy", "memset")):
            out.append((e.key[:60], t / calls, e.count / calls))
            tot += t / calls
    return sorted(out, key=lambda r: -r[1])[:6], tot


def host_b2b(fn, n=50):
    # (host us a call, us a call back to back): n calls enqueued in a row
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    best_h = best_b = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        best_h, best_b = min(best_h, (t1 - t0) / n * 1e6), min(best_b, (t2 - t0) / n * 1e6)
    return best_h, best_b


torch.backends.cudnn.benchmark = True
rows, lines = [], []
hdr = (f"{'layer':22s} {'ours fp32':>9s} {'TFLOP/s':>7s} {'cuDNN fp32':>10s} {'ratio':>5s} "
       f"{'generic':>7s} {'ours tf32':>9s} {'TFLOP/s':>7s} {'cuDNN tf32':>10s} {'ratio':>5s} "
       f"{'err fp32':>8s} {'err tf32':>8s}  algorithms (fp32 / tf32)")
lines.append(f"GPU: {torch.cuda.get_device_name(0)}; cuDNN {torch.backends.cudnn.version()}; "
             f"torch {torch.__version__}; ms = the smaller of two medians of {R} runs each (ours "
             f"and cuDNN alike), CUDA events, device-resident data; ratio = cuDNN ms / ours ms "
             f"(> 1: ours faster)")
lines.append(hdr)
print(lines[0]); print(hdr, flush=True)
rng = np.random.default_rng(11)
for name, nsp, N, Cc, K, G, n, k, s, p in LAYERS:
    x = rng.uniform(-1, 1, (N, Cc) + (n,) * nsp).astype(np.float32)
    w = rng.uniform(-1, 1, (K, Cc // G) + (k,) * nsp).astype(np.float32)
    o = (n + 2 * p - k) // s + 1
    yshape = (N, K) + (o,) * nsp
    flops = 2.0 * N * K * o ** nsp * (Cc // G) * k ** nsp
    d = ConvDesc()
    lib.tc_conv_desc_init(C.byref(d))
    assert d.struct_size == C.sizeof(ConvDesc), (d.struct_size, C.sizeof(ConvDesc))
    d.nspatial, d.batch, d.in_channels, d.out_channels, d.groups = nsp, N, Cc, K, G
    for i in range(nsp):
        d.in_size[i], d.kernel_size[i], d.stride[i], d.padding[i] = n, k, s, p
    kw = dict(stride=s, padding=p, groups=G)
    X, W = torch.from_numpy(x).cuda(), torch.from_numpy(w).cuda()
    with torch.no_grad():
        ref = F[nsp](X.double(), W.double(), **kw).cpu().numpy()
    row = dict(layer=name, gflop=flops / 1e9)
    # fp32: the planner's choice (ESTIMATE), and the generic kernel
    pl, algo = plan(d)
    row["algo_fp32"] = algo
    torch.backends.cudnn.allow_tf32 = False
    c32a = cudnn_ms(F[nsp], X, W, kw)
    torch.backends.cudnn.allow_tf32 = True
    ctfa = cudnn_ms(F[nsp], X, W, kw)
    torch.backends.cudnn.allow_tf32 = False
    row["ours_fp32_ms"] = time_plan(pl, x, w, 2) if pl else None
    row["err_fp32"] = run_err(pl, x, w, ref, yshape) if pl else None
    gen = None
    if pl and algo in ("cuda.conv.igemm", "cuda.conv.depthwise"):
        os.environ["TILECONV_CUDA_CONV_GENERIC"] = "1"
        gen = time_plan(pl, x, w)
        del os.environ["TILECONV_CUDA_CONV_GENERIC"]
    row["generic_ms"] = gen
    if pl:
        lib.tc_plan_destroy(pl)
    # forced alternatives (the planner's choice measured against them)
    alts, alt_err = {}, {}
    for alg in ("cuda.conv.igemm", "cuda.conv.depthwise", "cuda.conv.winograd-f4",
                "cuda.conv.winograd-f2", "cuda.conv.fft"):
        if alg == algo:
            continue
        pa, _ = plan(d, 0, alg)
        if pa:
            alts[alg] = time_plan(pa, x, w)
            if "winograd" in alg or "fft" in alg:
                alt_err[alg] = run_err(pa, x, w, ref, yshape)
            lib.tc_plan_destroy(pa)
    # the Winograd solvers with the implicit GEMM for their batched GEMMs
    # instead of their own kernel (TILECONV_CUDA_WINO_GEMM=igemm)
    for alg in ("cuda.conv.winograd-f4", "cuda.conv.winograd-f2"):
        pa, _ = plan(d, 0, alg)
        if pa:
            os.environ["TILECONV_CUDA_WINO_GEMM"] = "igemm"
            alts[alg + "(igemm)"] = time_plan(pa, x, w)
            del os.environ["TILECONV_CUDA_WINO_GEMM"]
            lib.tc_plan_destroy(pa)
    # GPU_LAYERS_ALGO: the named solvers forced (fp32 flags), with errors
    row["forced"] = {}
    for alg in FORCED:
        pa, why = plan(d, 0, alg)
        if not pa:
            row["forced"][alg] = dict(ms=None, err=None, why=why)
            print(f"  forced {alg} {name}: plan failed: {why}", flush=True)
            continue
        alts[alg] = time_plan(pa, x, w, 2)
        alt_err[alg] = run_err(pa, x, w, ref, yshape)
        row["forced"][alg] = dict(ms=alts[alg], err=alt_err[alg])
        lib.tc_plan_destroy(pa)
    row["alternatives_fp32_ms"] = alts
    row["alternatives_fp32_err"] = alt_err
    # GPU_LAYERS_WINO_SWEEP=1: cuda.conv.winograd-f4(2) at forced GEMM tile
    # heights (TILECONV_CUDA_WINO_BM) and each stage alone (TILECONV_CUDA_WINO_STAGES:
    # 1 weights, 2 input, 4 GEMM, 8 output)
    if os.environ.get("GPU_LAYERS_WINO_SWEEP") == "1":
        sw = []
        for alg in ("cuda.conv.winograd-f4", "cuda.conv.winograd-f2"):
            pa, _ = plan(d, 0, alg)
            if not pa:
                continue
            tag = "w4" if alg == "cuda.conv.winograd-f4" else "w2"
            for var, vals in (("TILECONV_CUDA_WINO_BM", ("128", "64", "32")),
                              ("TILECONV_CUDA_WINO_STAGES", ("1", "2", "4", "8"))):
                for v in vals:
                    os.environ[var] = v
                    t = time_plan(pa, x, w)
                    sw.append(f"{tag}{'bm' if 'BM' in var else 's'}{v}=" + (f"{t:.4f}" if t else "fail"))
                del os.environ[var]
            lib.tc_plan_destroy(pa)
        row["wino_sweep"] = sw
        print("  wino " + name + ": " + " ".join(sw), flush=True)
    # GPU_LAYERS_SWEEP=1: cuda.conv.igemm(-tf32) at forced tile heights and
    # split counts (TILECONV_CUDA_CONV_SHAPE="bm,S"), to check the shape model
    # GPU_LAYERS_TFV="1 3": the TF32 rows of the sweep once per TF32 kernel
    # variant (TILECONV_CUDA_CONV_TF32_KERNEL; "tV" prefix), each with its planner-shape
    # time ("tV-model") and error against float64 ("tV-err")
    if os.environ.get("GPU_LAYERS_SWEEP") == "1" and G == 1:
        sw = []
        tfv = os.environ.get("GPU_LAYERS_TFV", "").split()
        runs = [("cuda.conv.igemm", 0, None)] + [("cuda.conv.igemm-tf32", TF32, v) for v in
                                                   (tfv or [None])]
        for alg, fl, v in runs:
            pa, _ = plan(d, fl, alg)
            if not pa:
                continue
            pre = ("t" + (v or "")) if fl else "f"
            if v is not None:
                os.environ["TILECONV_CUDA_CONV_TF32_KERNEL"] = v
                t = time_plan(pa, x, w, 2)
                sw.append(f"{pre}-model=" + (f"{t:.3f}" if t else "fail"))
                e = run_err(pa, x, w, ref, yshape)
                sw.append(f"{pre}-err=" + (f"{e:.1e}" if e is not None else "fail"))
            for bm in (128, 64, 32):
                if (bm == 128 and K <= 64) or (bm == 32 and K > 32):
                    continue
                for S in (1, 2, 3, 4, 6, 8):
                    os.environ["TILECONV_CUDA_CONV_SHAPE"] = f"{bm},{S}"
                    t = time_plan(pa, x, w)
                    sw.append(f"{pre}{bm},{S}=" + (f"{t:.3f}" if t else "fail"))
            os.environ.pop("TILECONV_CUDA_CONV_SHAPE", None)
            # the planner's shape without the reduction-row table
            os.environ["TILECONV_CUDA_CONV_NO_ROW_TABLE"] = "1"
            t = time_plan(pa, x, w)
            sw.append(f"{pre}-noltab=" + (f"{t:.3f}" if t else "fail"))
            del os.environ["TILECONV_CUDA_CONV_NO_ROW_TABLE"]
            os.environ.pop("TILECONV_CUDA_CONV_TF32_KERNEL", None)
            lib.tc_plan_destroy(pa)
        row["sweep"] = sw
        print("  sweep " + name + ": " + " ".join(sw), flush=True)
    # GPU_LAYERS_SWEEP=1, depthwise: the tiled kernel's tuning variants
    # (TILECONV_CUDA_DW_RV=1: one output row per item; TILECONV_CUDA_DW_THREADS: items
    # per block)
    if os.environ.get("GPU_LAYERS_SWEEP") == "1" and G == Cc and nsp < 3:
        sw = []
        pa, _ = plan(d, 0, "cuda.conv.depthwise")
        if pa:
            for var, val in (("", ""), ("TILECONV_CUDA_DW_RV", "1"), ("TILECONV_CUDA_DW_THREADS", "256"),
                             ("TILECONV_CUDA_DW_THREADS", "512"), ("TILECONV_CUDA_DW_THREADS", "2048")):
                if var:
                    os.environ[var] = val
                t = time_plan(pa, x, w, 2)
                sw.append(f"{var or 'default'}{'=' + val if var else ''}:" + (f"{t:.4f}" if t else "fail"))
                if var:
                    del os.environ[var]
            lib.tc_plan_destroy(pa)
        row["sweep"] = sw
        print("  sweep " + name + ": " + " ".join(sw), flush=True)
    # tf32
    pl, algo_t = plan(d, TF32)
    row["algo_tf32"] = algo_t
    row["ours_tf32_ms"] = time_plan(pl, x, w, 2) if pl else None
    row["err_tf32"] = run_err(pl, x, w, ref, yshape) if pl else None
    if pl:
        lib.tc_plan_destroy(pl)
    alts_t, alt_err_t = {}, {}
    for alg in ("cuda.conv.igemm-tf32", "cuda.conv.winograd-f2-tf32"):
        if alg == algo_t:
            continue
        pa, _ = plan(d, TF32, alg)
        if pa:
            alts_t[alg] = time_plan(pa, x, w)
            alt_err_t[alg] = run_err(pa, x, w, ref, yshape)
            lib.tc_plan_destroy(pa)
    row["alternatives_tf32_ms"] = alts_t
    row["alternatives_tf32_err"] = alt_err_t
    torch.backends.cudnn.allow_tf32 = False
    row["cudnn_fp32_ms"] = c32 = min(c32a, cudnn_ms(F[nsp], X, W, kw))
    for alg, fr in row["forced"].items():
        if fr["ms"]:
            print(f"  forced {alg} {name}: {fr['ms']:.4f} ms, cuDNN fp32 {c32:.4f} ms, ratio "
                  f"{c32 / fr['ms']:.2f}, err {fr['err'] if fr['err'] is not None else float('nan'):.1e}"
                  f" (fp32 plan {algo}: {row['ours_fp32_ms'] or float('nan'):.4f} ms, err "
                  f"{row['err_fp32'] if row['err_fp32'] is not None else float('nan'):.1e})", flush=True)
    torch.backends.cudnn.allow_tf32 = True
    row["cudnn_tf32_ms"] = ctf = min(ctfa, cudnn_ms(F[nsp], X, W, kw))
    # GPU_LAYERS_KPROF=1: the TF32 plan's kernels and cuDNN's (TF32), each
    # call's device time split by kernel (torch.profiler; CUPTI sees the
    # library's launches in this process too)
    if os.environ.get("GPU_LAYERS_KPROF") == "1":
        nan = float("nan")
        row["kprof"] = kp = {}
        for mode, fl in (("fp32", 0), ("tf32", TF32)):
            torch.backends.cudnn.allow_tf32 = fl == TF32
            pl, _ = plan(d, fl)
            if pl:
                kp[f"ours_{mode}"] = kprof(lambda: lib.tc_cuda_time_plan(
                    pl, ptr(x), ptr(w), None, 10, C.byref(C.c_double()), None), 11)
                # host us a call (device pointers: the call only enqueues)
                # and us a call back to back (no idle GPU between calls)
                Y = torch.empty(yshape, device="cuda", dtype=torch.float32)
                a = (pl, VP(Y.data_ptr()), VP(X.data_ptr()), VP(W.data_ptr()), None, None)
                kp[f"ours_{mode}_host_us"], kp[f"ours_{mode}_b2b_us"] = host_b2b(
                    lambda: lib.tc_execute_conv(*a))
                lib.tc_plan_destroy(pl)
                del Y
            with torch.no_grad():
                kp[f"cudnn_{mode}"] = kprof(lambda: [F[nsp](X, W, **kw) for _ in range(10)], 10)
                kp[f"cudnn_{mode}_host_us"], kp[f"cudnn_{mode}_b2b_us"] = host_b2b(
                    lambda: F[nsp](X, W, **kw))
            for who in ("ours", "cudnn"):
                kk = kp.get(f"{who}_{mode}", ([], nan))
                print(f"  kprof {name} {mode} {who}: device {kk[1]:.1f}us: " +
                      "; ".join(f"{k} {us:.1f}us x{c:.0f}" for k, us, c in kk[0]), flush=True)
            g = lambda k: kp.get(k, nan)  # noqa: E731
            od, cd = kp.get(f"ours_{mode}", ([], nan))[1], kp[f"cudnn_{mode}"][1]
            kp[f"device_ratio_{mode}"] = cd / od
            print(f"  kprof {name} {mode}: device us a call ours {od:.1f} cuDNN {cd:.1f} (ratio "
                  f"{cd / od:.2f}); host us a call ours {g(f'ours_{mode}_host_us'):.1f} cuDNN "
                  f"{g(f'cudnn_{mode}_host_us'):.1f}; back to back us a call ours "
                  f"{g(f'ours_{mode}_b2b_us'):.1f} cuDNN {g(f'cudnn_{mode}_b2b_us'):.1f} (ratio "
                  f"{g(f'cudnn_{mode}_b2b_us') / g(f'ours_{mode}_b2b_us'):.2f})", flush=True)
    torch.backends.cudnn.allow_tf32 = False
    del X, W
    torch.cuda.empty_cache()
    rows.append(row)
    nan = float("nan")
    o32, otf = row["ours_fp32_ms"] or nan, row["ours_tf32_ms"] or nan
    line = (f"{name:22s} {o32:9.3f} {flops / o32 / 1e9:7.1f} {c32:10.3f} {c32 / o32:5.2f} "
            f"{gen or nan:7.3f} {otf:9.3f} {flops / otf / 1e9:7.1f} {ctf:10.3f} {ctf / otf:5.2f} "
            f"{row['err_fp32'] if row['err_fp32'] is not None else nan:8.1e} "
            f"{row['err_tf32'] if row['err_tf32'] is not None else nan:8.1e}  {algo} / {algo_t}"
            + (("  [" + ", ".join(f"{a} {t:.3f}" + (f" err {alt_err[a]:.1e}" if alt_err.get(a) is not None else "")
                                  for a, t in alts.items() if t) + "]") if alts else "")
            + (("  tf32 [" + ", ".join(f"{a} {t:.3f}" + (f" err {alt_err_t[a]:.1e}" if alt_err_t.get(a) is not None else "")
                                       for a, t in alts_t.items() if t) + "]") if alts_t else ""))
    lines.append(line)
    print(line, flush=True)
if any("kprof" in r for r in rows):
    lines.append("device time a call (us, all kernels, torch.profiler) and back to back (us a call, "
                 "50 calls enqueued); ratio = cuDNN / ours")
    lines.append(f"{'layer':22s} {'fp32 ours':>9s} {'cuDNN':>7s} {'ratio':>5s} {'b2b':>5s} "
                 f"{'tf32 ours':>9s} {'cuDNN':>7s} {'ratio':>5s} {'b2b':>5s}")
    for r in rows:
        k = r.get("kprof")
        if not k:
            continue
        f = []
        for m in ("fp32", "tf32"):
            o, c = k.get(f"ours_{m}", ([], float("nan")))[1], k[f"cudnn_{m}"][1]
            bo, bc = k.get(f"ours_{m}_b2b_us", float("nan")), k[f"cudnn_{m}_b2b_us"]
            f.append(f"{o:9.1f} {c:7.1f} {c / o:5.2f} {bc / bo:5.2f}")
        lines.append(f"{r['layer']:22s} " + " ".join(f))
    print("\n".join(lines[-len(rows) - 2:]), flush=True)
os.makedirs(outdir, exist_ok=True)
open(os.path.join(outdir, "gpu_layers.txt"), "w").write("\n".join(lines) + "\n")
json.dump(rows, open(os.path.join(outdir, "gpu_layers.json"), "w"), indent=1)
