#!/usr/bin/env python3
"""gpu_layers_half.py - float16 / bfloat16 channels-last conv layers on the
GPU: tileconv's CUDA plan beside cuDNN (PyTorch, cudnn.benchmark
on, channels_last tensors of the same dtype), all in one process.

    python3 bench/gpu_layers_half.py BUILD_DIR_or_CLI OUTDIR

Both sides run on device tensors allocated by torch; tileconv through ctypes
(tc_plan_conv with the description's dtype, layout, activation and residual,
the plan's stream set to torch's current stream, tc_execute_conv_residual on
the tensors' pointers). Device time: CALLS calls of each side captured in one
CUDA graph, the graph replayed REPS times between CUDA events, the median
replay over CALLS (so launch and host time are not what is timed); where a
capture fails, CALLS back-to-back calls between events instead (the row
says "stream"). Rows:
  conv      the ResNet-50 batch-32 layers, conv alone (no bias), ours vs
            cuDNN's conv2d
  fused     bias + relu + residual: ours in the one call vs torch's unfused
            sequence conv2d(bias), add, relu (three kernels), and vs our
            conv alone
GPU_HALF_ALGO=NAME forces our plans to one solver (cuda.conv.igemm-half-halo
and cuda.conv.igemm-half-shifted are run by name only); a comma-separated
list times each in turn (rows per solver, "auto" for the planner's
choice), cuDNN timed once a row. GPU_HALF_ONLY=TEXT keeps the layers whose
name contains TEXT (for a profiler). Our weights are passed as the
channels_last tensor cuDNN gets (weight_layout channels-last);
GPU_HALF_WLAYOUT=cf passes a K x C x kh x kw copy instead. GPU_HALF_STRIDED=1 adds ResNet-50's 3x3/2
and 1x1/2 downsampling layers (in the geomeans then too). Errors: max |y - y64| / max |y64| with y64 torch's float64 conv of the
same rounded inputs (cuDNN's own error beside ours). Writes
OUTDIR/gpu_layers_half.txt and .json. Never asserts."""
import ctypes as C
import json
import os
import sys

from gpu_common import VP, ConvDesc, PlanOpts, setup

torch, lib, outdir = setup("gpu_layers_half")

lib.tc_conv_desc_init.argtypes = [C.POINTER(ConvDesc)]
lib.tc_plan_options_init.argtypes = [C.POINTER(PlanOpts)]
lib.tc_plan_conv.argtypes = [C.POINTER(VP), VP, C.POINTER(ConvDesc), C.POINTER(PlanOpts)]
lib.tc_execute_conv_residual.argtypes = [VP, VP, VP, VP, VP, VP, VP]
lib.tc_plan_set_cuda_stream.argtypes = [VP, VP]
lib.tc_plan_conv_set_weights.argtypes = [VP, VP, VP]
lib.tc_plan_staging.restype = C.c_char_p
lib.tc_plan_staging.argtypes = [VP]
lib.tc_context_set_backend.argtypes = [VP, C.c_int]
ctx = VP()
lib.tc_context_create(C.byref(ctx))
lib.tc_context_set_backend(ctx, 2)  # CUDA
torch.backends.cudnn.benchmark = True
F = torch.nn.functional

CALLS = int(os.environ.get("GPU_HALF_CALLS", "20"))
# GPU_HALF_ALGO=NAME[,NAME...]: our plans forced to each solver in turn
# ("auto": the planner's choice; layers a solver does not apply to print
# "plan failed" with its reason)
ALGOS = [a if a != "auto" else None
         for a in (os.environ.get("GPU_HALF_ALGO") or "auto").split(",") if a] or [None]
REPS = int(os.environ.get("GPU_HALF_REPS", "25"))
# our weights as torch's channels_last model holds them (K x kh x kw x C,
# the tensor cuDNN gets); GPU_HALF_WLAYOUT=cf: K x C x kh x kw instead
WCL = os.environ.get("GPU_HALF_WLAYOUT", "cl") != "cf"
DT = {"float16": (torch.float16, 2), "bfloat16": (torch.bfloat16, 3)}
# (name, C, K, H, k, stride, pad), batch 32
LAYERS = [
    ("r50-conv1 7x7/2", 3, 64, 224, 7, 2, 3),
    ("r50-3x3-64@56", 64, 64, 56, 3, 1, 1),
    ("r50-3x3-128@28", 128, 128, 28, 3, 1, 1),
    ("r50-3x3-256@14", 256, 256, 14, 3, 1, 1),
    ("r50-3x3-512@7", 512, 512, 7, 3, 1, 1),
    ("r50-1x1-256-64@56", 256, 64, 56, 1, 1, 0),
]
# GPU_HALF_STRIDED=1: also ResNet-50's downsampling layers (3x3/2 and the
# 1x1/2 projection into stage 2), outside the layer set
if os.environ.get("GPU_HALF_STRIDED") == "1":
    LAYERS += [("r50-3x3/2-128@56", 128, 128, 56, 3, 2, 1),
               ("r50-1x1/2-256-512@56", 256, 512, 56, 1, 2, 0)]
FUSED = ["r50-3x3-64@56", "r50-1x1-256-64@56"]
# GPU_HALF_ONLY=TEXT: only the layers whose name contains TEXT (profiling)
if os.environ.get("GPU_HALF_ONLY"):
    LAYERS = [lay for lay in LAYERS if os.environ["GPU_HALF_ONLY"] in lay[0]]
    FUSED = [f for f in FUSED if os.environ["GPU_HALF_ONLY"] in f]
N = 32


def devtime(fn):
    """device us a call: CALLS calls in one CUDA graph, median replay"""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    how = "graph"
    try:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, capture_error_mode="relaxed"):
            for _ in range(CALLS):
                fn()
        run = g.replay
        run()
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001
        how = f"stream ({type(e).__name__})"
        torch.cuda.synchronize()

        def run():
            for _ in range(CALLS):
                fn()
    ts = []
    for _ in range(REPS):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        run()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1000.0 / CALLS)
    ts.sort()
    return ts[len(ts) // 2], how


def plan(dtc, C_, K, H, k, s, p, bias, act, res, algo=None):
    d = ConvDesc()
    lib.tc_conv_desc_init(C.byref(d))
    d.dtype = dtc
    d.nspatial = 2
    d.batch, d.in_channels, d.out_channels, d.groups = N, C_, K, 1
    for i in range(2):
        d.in_size[i], d.kernel_size[i], d.stride[i], d.padding[i] = H, k, s, p
    d.has_bias, d.layout, d.activation, d.has_residual = bias, 1, act, res
    d.weight_layout = 1 if WCL else 0
    o = PlanOpts()
    lib.tc_plan_options_init(C.byref(o))
    if algo:
        o.algorithm = algo.encode()
    pl = VP()
    if lib.tc_plan_conv(C.byref(pl), ctx, C.byref(d), C.byref(o)) != 0:
        return None, lib.tc_last_error().decode()
    return pl, lib.tc_plan_algorithm(pl).decode()


def rel_err(y, y64):
    y = y.double()
    return float((y - y64).abs().max() / y64.abs().max())


rows, lines = [], []
dev = torch.cuda.get_device_name()
lines.append(f"device: {dev}; torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
lines.append(f"device time per call (us): {CALLS} calls a CUDA graph, median of {REPS} replays; "
             f"our weights {'K x kh x kw x C (channels-last, as cuDNN gets them)' if WCL else 'K x C x kh x kw'}")
hdr = f"{'layer':24s} {'dtype':8s} {'kind':6s} {'ours':>8s} {'peer':>8s} {'ratio':>6s}  {'err':>8s} {'cudnn err':>9s}  algorithm"
print(hdr)
lines.append(hdr)
for dname, (tdt, dtc) in DT.items():
    for name, C_, K, H, k, s, p in LAYERS:
        torch.manual_seed(0)
        x = torch.randn(N, C_, H, H, device="cuda").to(tdt).to(memory_format=torch.channels_last)
        w = (torch.randn(K, C_, k, k, device="cuda") / (C_ * k * k) ** 0.5).to(tdt).contiguous()
        wcl = w.to(memory_format=torch.channels_last)
        b = (0.1 * torch.randn(K, device="cuda")).to(tdt)
        x64, w64, b64 = x.double().contiguous(), w.double(), b.double()
        y64 = F.conv2d(x64, w64, None, s, p)
        P = y64.shape[2]
        r = torch.randn(N, K, P, P, device="cuda").to(tdt).to(memory_format=torch.channels_last)
        kinds = [("conv", 0, 0, 0)] + ([("fused", 1, 1, 1)] if name in FUSED else [])
        t_conv_ours = {}  # our conv alone, per forced solver
        for kind, bias, act, res in kinds:
            peer_t = None  # cuDNN timed once a row, beside each forced solver
            for forced in ALGOS:
                pl, algo = plan(dtc, C_, K, H, k, s, p, bias, act, res, forced)
                row = {"layer": name, "dtype": dname, "kind": kind, "forced": forced or "auto"}
                if pl is None:
                    row["error"] = algo
                    print(f"{name:24s} {dname:8s} {kind:6s} plan failed: {algo}")
                    rows.append(row)
                    continue
                y = torch.empty(N, K, P, P, device="cuda", dtype=tdt).to(memory_format=torch.channels_last)
                bp = b.data_ptr() if bias else None
                rp = r.data_ptr() if res else None

                def ours():
                    lib.tc_plan_set_cuda_stream(pl, torch.cuda.current_stream().cuda_stream)
                    st = lib.tc_execute_conv_residual(pl, y.data_ptr(), x.data_ptr(),
                                                      (wcl if WCL else w).data_ptr(), bp, rp, None)
                    if st != 0:
                        raise RuntimeError(lib.tc_last_error().decode())

                if kind == "conv":
                    def peer():
                        return F.conv2d(x, wcl, None, s, p)
                    ref64 = y64
                else:
                    def peer():
                        return torch.relu(F.conv2d(x, wcl, b, s, p) + r)
                    ref64 = torch.relu(y64 + b64.view(1, -1, 1, 1) + r.double())
                try:
                    t_ours, how_o = devtime(ours)
                    ours()
                    torch.cuda.synchronize()
                    err = rel_err(y, ref64)
                except Exception as e:  # noqa: BLE001
                    row["error"] = str(e)
                    print(f"{name:24s} {dname:8s} {kind:6s} execute failed: {e}")
                    rows.append(row)
                    lib.tc_plan_destroy(pl)
                    continue
                # the same plan holding its weights (as tileconv.nn modules run):
                # set once from host copies, executes pass NULL weights and bias
                wh = (w.permute(0, 2, 3, 1) if WCL else w).cpu().contiguous()
                bh = b.cpu().contiguous() if bias else None
                t_held = err_held = None
                if lib.tc_plan_conv_set_weights(pl, wh.data_ptr(), bh.data_ptr() if bias else None) == 0:
                    def held():
                        lib.tc_plan_set_cuda_stream(pl, torch.cuda.current_stream().cuda_stream)
                        st = lib.tc_execute_conv_residual(pl, y.data_ptr(), x.data_ptr(), None, None, rp,
                                                          None)
                        if st != 0:
                            raise RuntimeError(lib.tc_last_error().decode())
                    try:
                        t_held, _ = devtime(held)
                        y.fill_(float("nan"))
                        held()
                        torch.cuda.synchronize()
                        err_held = rel_err(y, ref64)
                    except Exception as e:  # noqa: BLE001
                        row["held_error"] = str(e)
                else:
                    row["held_error"] = lib.tc_last_error().decode()
                if peer_t is None:
                    peer_t = devtime(peer), rel_err(peer(), ref64)
                (t_peer, how_p), err_peer = peer_t
                if kind == "conv":
                    t_conv_ours[forced] = t_ours
                row.update(ours_us=t_ours, peer_us=t_peer, ratio=t_peer / t_ours, err=err,
                           peer_err=err_peer, algorithm=algo, held_us=t_held, held_err=err_held,
                           held_ratio=t_peer / t_held if t_held else None,
                           staging=lib.tc_plan_staging(pl).decode(), timing=[how_o, how_p])
                extra = ""
                if kind == "fused" and t_conv_ours.get(forced):
                    row["vs_our_conv"] = t_ours / t_conv_ours[forced]
                    extra = f"  ({t_ours / t_conv_ours[forced]:.2f}x our conv alone)"
                if t_held:
                    extra += f"  [plan weights {t_held:.1f} us, {t_peer / t_held:.2f}x, err {err_held:.1e}]"
                elif "held_error" in row:
                    extra += f"  [plan weights failed: {row['held_error']}]"
                if how_o != "graph" or how_p != "graph":
                    extra += f"  [timing {how_o} / {how_p}]"
                ln = (f"{name:24s} {dname:8s} {kind:6s} {t_ours:8.1f} {t_peer:8.1f} {t_peer / t_ours:6.2f}  "
                      f"{err:8.1e} {err_peer:9.1e}  {algo}{extra}")
                print(ln)
                lines.append(ln)
                rows.append(row)
                lib.tc_plan_destroy(pl)
conv = [r_ for r_ in rows if r_.get("kind") == "conv" and "ratio" in r_]
if conv:
    import math
    for dname in DT:
      for forced in ALGOS:
        rs = [r_["ratio"] for r_ in conv if r_["dtype"] == dname and r_["forced"] == (forced or "auto")]
        if rs:
            gm = math.exp(sum(math.log(v) for v in rs) / len(rs))
            ln = (f"{dname} {forced or 'auto'}: geomean ratio (cuDNN / ours) over {len(rs)} conv layers "
                  f"{gm:.2f}, min {min(rs):.2f}")
            print(ln)
            lines.append(ln)
os.makedirs(outdir, exist_ok=True)
with open(os.path.join(outdir, "gpu_layers_half.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
with open(os.path.join(outdir, "gpu_layers_half.json"), "w") as f:
    json.dump({"device": dev, "rows": rows}, f, indent=1)
