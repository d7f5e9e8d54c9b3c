#!/usr/bin/env python3
"""gpu_gemm.py - the GEMM core beside cuBLAS, one process.

    python3 bench/gpu_gemm.py BUILD_DIR OUTDIR

Square C = A B (float32, row-major) at GPU_GEMM_SIZES (default "2048 4096
8192"): tileconv's cuda.gemm.simt (strict FP32) beside torch.matmul with TF32
off (cuBLAS SGEMM), and cuda.gemm.wgmma-tf32 (planned with TC_PLAN_ALLOW_TF32)
beside torch.matmul with TF32 on, and cuda.gemm.wgmma-3xtf32 (split-precision
TF32 at about float32 accuracy; forced by name, the planner never picks it)
beside torch.matmul with TF32 off (cuBLAS SGEMM). tileconv through ctypes on
BUILD_DIR/libtileconv.so: tc_cuda_time_plan (operands copied to the GPU
once, a warm-up, median of R executes between CUDA events); cuBLAS timed
the same way (median of R calls between CUDA events, after 3 warm-ups).
The two sides alternate, GPU_GEMM_ROUNDS rounds (default 3) of one median
each: ms = the median of a side's round medians, ratio = the median of
the rounds' ratios (cuBLAS's time moves 2-3% between calls while ours
holds; alternating puts both under the same clocks).
GPU_GEMM_FORMS="128x1 256x2 ..." adds rows "tf32-BMxCL": cuda.gemm.wgmma-tf32
forced to a form (TILECONV_CUDA_GEMM_TF32_BM = BM rows a block,
TILECONV_CUDA_GEMM_TF32_CL = CL blocks a cluster: 2 share A, 4 as 2 x 2 share A
and B; "256x4s0" also sets TILECONV_CUDA_GEMM_TF32_SPLIT = 0: no split tail);
"fp32-BK" adds a cuda.gemm.simt row with TILECONV_CUDA_GEMM_FP32_BK = BK (16
or 32); the plain fp32 rows keep the caller's TILECONV_CUDA_GEMM_FP32_BK.
Errors against a float64 product (torch, on the GPU) at the sizes up to
4096: max |C - C64| / max |C64| ("-" above). Writes OUTDIR/gpu_gemm.txt and .json. Never asserts."""
import ctypes as C
import json
import os

import numpy as np

from gpu_common import VP, PlanOpts, setup

torch, lib, outdir = setup("gpu_gemm")


class GemmDesc(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("dtype", C.c_int), ("trans_a", C.c_int),
                ("trans_b", C.c_int), ("m", C.c_int64), ("n", C.c_int64), ("k", C.c_int64),
                ("lda", C.c_int64), ("ldb", C.c_int64), ("ldc", C.c_int64),
                ("alpha", C.c_double), ("beta", C.c_double)]


lib.tc_plan_gemm.argtypes = [C.POINTER(VP), VP, C.POINTER(GemmDesc), C.POINTER(PlanOpts)]
lib.tc_execute_gemm.argtypes = [VP, VP, VP, VP, VP]
TF32 = 4
R = int(os.environ.get("GPU_GEMM_REPEAT", "20"))
ROUNDS = max(1, int(os.environ.get("GPU_GEMM_ROUNDS", "3")))
SIZES = [int(s) for s in os.environ.get("GPU_GEMM_SIZES", "2048 4096 8192").split()]


def tc_plan(n, algo, flags):
    d = GemmDesc()
    lib.tc_gemm_desc_init(C.byref(d))
    d.dtype = 0
    d.m = d.n = d.k = n
    d.lda = d.ldb = d.ldc = n
    o = PlanOpts()
    lib.tc_plan_options_init(C.byref(o))
    o.flags = flags
    o.algorithm = algo.encode()
    pl = VP()
    if lib.tc_plan_gemm(C.byref(pl), None, C.byref(d), C.byref(o)) != 0:
        return None, lib.tc_last_error().decode()
    return pl, lib.tc_plan_algorithm(pl).decode()


def tc_ms(pl, A, B):
    """one median of R executes (tc_cuda_time_plan warms up first)"""
    med, mn = C.c_double(), C.c_double()
    if lib.tc_cuda_time_plan(pl, A.ctypes.data_as(VP), B.ctypes.data_as(VP), None, R,
                             C.byref(med), C.byref(mn)) != 0:
        return None
    return med.value


def torch_ms(a, b):
    """one median of R calls after 3 warm-ups"""
    for _ in range(3):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    ts = []
    for _ in range(R):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        torch.matmul(a, b)
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1))
    return float(np.median(ts))


def alternate(pl, A, B, a, b):
    """ROUNDS rounds of (ours, cuBLAS): each side's median over the rounds
    and the median of the rounds' ratios (None for ours where it fails)"""
    o, t = [], []
    for _ in range(ROUNDS):
        if pl:
            o.append(tc_ms(pl, A, B))
        t.append(torch_ms(a, b))
    theirs = float(np.median(t))
    if not pl or any(v is None for v in o):
        return None, theirs, None
    return float(np.median(o)), theirs, float(np.median([y / x for x, y in zip(o, t)]))


def tc_err(pl, A, B, ref):
    Cc = np.empty_like(A)
    if lib.tc_execute_gemm(pl, Cc.ctypes.data_as(VP), A.ctypes.data_as(VP), B.ctypes.data_as(VP),
                           None) != 0:
        return float("nan")
    return float(np.max(np.abs(Cc.astype(np.float64) - ref)) / np.max(np.abs(ref)))


def fe(v, w):
    """an error column: '-' where there is no float64 reference (sizes above 4096)"""
    return f"{v:{w}.1e}" if v == v else f"{'-':>{w}}"


rows = []
lines = [f"GPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; {ROUNDS} rounds, "
         f"ours and cuBLAS alternating, each a median of {R} calls between CUDA events, "
         "device-resident operands; ms = the median of the round medians, ratio = the median of "
         "the rounds' cuBLAS ms / ours (> 1: ours faster); TFLOP/s counts 2 n^3",
         f"{'size':>6} {'mode':10} {'ours ms':>9} {'TFLOP/s':>8} {'cuBLAS ms':>9} {'TFLOP/s':>8} "
         f"{'ratio':>6} {'err ours':>9} {'err cuBLAS':>10}  algorithm"]
# cuda.gemm.simt's forcing variables as the caller set them (they apply to the
# plain "fp32" rows; an "fp32-..." form sets its own for its row)
FP32_ENV = {v: os.environ.get(v) for v in ("TILECONV_CUDA_GEMM_FP32_BK",)}


def restore_fp32_env():
    for v, x in FP32_ENV.items():
        if x is None:
            os.environ.pop(v, None)
        else:
            os.environ[v] = x


rng = np.random.default_rng(16)
for n in SIZES:
    A = rng.standard_normal((n, n), dtype=np.float32)
    B = rng.standard_normal((n, n), dtype=np.float32)
    a, b = torch.from_numpy(A).cuda(), torch.from_numpy(B).cuda()
    ref = None
    if n <= 4096:
        ref = (a.double() @ b.double()).cpu().numpy()
    modes = [("fp32", "cuda.gemm.simt", 0), ("tf32", "cuda.gemm.wgmma-tf32", TF32),
             ("3xtf32", "cuda.gemm.wgmma-3xtf32", 0)]  # peer: TF32 off (mode is not "tf32...")
    for f in os.environ.get("GPU_GEMM_FORMS", "").split():
        if f.startswith("fp32-"):
            modes.append((f, "cuda.gemm.simt", 0))
        else:
            modes.append(("tf32-" + f, "cuda.gemm.wgmma-tf32", TF32))
    for mode, algo, flags in modes:
        torch.backends.cuda.matmul.allow_tf32 = mode.startswith("tf32")
        if mode.startswith("tf32-"):
            bm, cl = mode[5:].split("x")
            cl, _, sp = cl.partition("s")
            os.environ["TILECONV_CUDA_GEMM_TF32_BM"], os.environ["TILECONV_CUDA_GEMM_TF32_CL"] = bm, cl
            if sp:
                os.environ["TILECONV_CUDA_GEMM_TF32_SPLIT"] = sp
            else:
                os.environ.pop("TILECONV_CUDA_GEMM_TF32_SPLIT", None)
        else:
            os.environ.pop("TILECONV_CUDA_GEMM_TF32_BM", None)
            os.environ.pop("TILECONV_CUDA_GEMM_TF32_CL", None)
            os.environ.pop("TILECONV_CUDA_GEMM_TF32_SPLIT", None)
        restore_fp32_env()
        if mode.startswith("fp32-"):
            os.environ["TILECONV_CUDA_GEMM_FP32_BK"] = mode[5:]
        pl, name = tc_plan(n, algo, flags)
        ours, theirs, ratio = alternate(pl, A, B, a, b)
        e_ours = tc_err(pl, A, B, ref) if (pl and ref is not None) else float("nan")
        e_cub = (float(np.max(np.abs((a @ b).double().cpu().numpy() - ref)) / np.max(np.abs(ref)))
                 if ref is not None else float("nan"))
        if pl:
            lib.tc_plan_destroy(pl)
        fl = 2.0 * n ** 3
        r = {"n": n, "mode": mode, "algo": name, "ours_ms": ours, "cublas_ms": theirs,
             "ratio": ratio, "err_ours": e_ours, "err_cublas": e_cub}
        rows.append(r)
        if ours is None:
            lines.append(f"{n:6d} {mode:10} {'-':>9} {'-':>8} {theirs:9.3f} {fl / theirs / 1e9:8.1f} "
                         f"{'-':>6} {'-':>9} {fe(e_cub, 10)}  {name}")
        else:
            lines.append(f"{n:6d} {mode:10} {ours:9.3f} {fl / ours / 1e9:8.1f} {theirs:9.3f} "
                         f"{fl / theirs / 1e9:8.1f} {ratio:6.2f} {fe(e_ours, 9)} "
                         f"{fe(e_cub, 10)}  {name}")
        print(lines[-1], flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    os.environ.pop("TILECONV_CUDA_GEMM_TF32_BM", None)
    os.environ.pop("TILECONV_CUDA_GEMM_TF32_SPLIT", None)
    restore_fp32_env()
    del a, b
    torch.cuda.empty_cache()
os.makedirs(outdir, exist_ok=True)
with open(os.path.join(outdir, "gpu_gemm.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
with open(os.path.join(outdir, "gpu_gemm.json"), "w") as f:
    json.dump(rows, f, indent=1)
print("\n".join(lines[:2]))
