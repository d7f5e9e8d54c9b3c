#!/usr/bin/env python3
"""python_gpu_targets.py - the Python package on GPU arrays against its
peers in the same process: tileconv.ndimage / tileconv.signal on CuPy
arrays beside cupyx.scipy.ndimage / cupyx.scipy.signal, and one conv
layer (tileconv.nn.Conv2d, tileconv.nn.functional.conv2d) on a torch CUDA
tensor beside torch (cuDNN, cudnn.benchmark on, TF32 off on both sides).

usage: python_gpu_targets.py [--only SUBSTR[,SUBSTR...]] [--repeat R]
                             [--warmup W] [--list] [--cpu-dry-run]

Per row, before any timing: the largest difference of tileconv's result
from the peer's relative to max|peer|, held to the row's bound (above it
the row is not timed and the exit status is 1). Then one or two measures,
each the median of R rounds after W warm-up rounds, tileconv and the peer
one sample each per round (the first of the two alternating):

  device  CUDA events (cupy.cuda.Event / torch.cuda.Event) around `inner`
          calls queued behind a spin kernel, so that
          the GPU starts on them only once they are all queued: device time
          per call without the host's enqueue gaps. When a call waits for
          the stream itself (a device -> host copy: e.g. a mask on the
          device), the GPU runs dry before the calls are queued: such
          samples are taken without the spin and marked '*' (the stream's
          time, gaps included).
  wall    perf_counter around `inner` calls and one synchronisation at the
          end, per call (what a loop of calls costs the caller).

ratio = peer time / tileconv time (above 1: tileconv faster); a row with a
target prints "met" or "NOT met". Each framework's rows run on a stream
of the script's own (the framework's current stream while they run:
tileconv, the peer, the events and the spin kernel all on it); `wall`
ends with a device-wide synchronisation. --list prints the rows and exits;
--cpu-dry-run runs every row's code on the CPU (NumPy arrays beside
scipy, torch CPU tensors beside torch, host clocks, small sizes): a check
of this script on a machine without a GPU, not a measurement.

Exit status: 0; 1 when a result disagrees or a row raised; 2 when there is
no CUDA device (for the package, CuPy and torch alike) or the package is
missing.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

SPIN_SRC = r'''
extern "C" __global__ void tc_bench_spin(long long n) {
    long long t = clock64();
    while (clock64() - t < n) {}
}'''


# ---------------------------------------------------------------- clocks
class CupyClock:
    """Events and the spin kernel on CuPy's current stream."""
    prefill = True

    def __init__(self, cp):
        self.cp = cp
        self.kernel = cp.RawKernel(SPIN_SRC, "tc_bench_spin")
        try:
            khz = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id).get("clockRate", 0)
        except Exception:  # noqa: BLE001
            khz = 0
        self.hz = khz * 1e3 if khz else 2.0e9
        self.s = cp.cuda.Stream(non_blocking=True)
        with self.s:
            self.spin(1e-4)
        self.sync()

    def context(self):
        """The rows run on a stream of their own (CuPy's current stream
        inside it: tileconv's and cupyx's work and the events alike)."""
        return self.s

    def stream(self):
        return self.cp.cuda.get_current_stream()

    def sync(self):
        self.cp.cuda.Device().synchronize()

    def event(self):
        return self.cp.cuda.Event()

    def record(self, e):
        e.record(self.stream())

    def done(self, e):
        return bool(e.done)

    def wait(self, e):
        e.synchronize()

    def elapsed(self, a, b):
        return self.cp.cuda.get_elapsed_time(a, b) / 1e3

    def spin(self, seconds):
        self.kernel((1,), (1,), (self.cp.int64(int(seconds * self.hz)),))


class TorchClock:
    """Events and torch.cuda._sleep on torch's current stream."""
    prefill = True

    def __init__(self, torch, hz):
        self.torch = torch
        self.hz = hz
        self.prefill = hasattr(torch.cuda, "_sleep")
        self.s = torch.cuda.Stream()

    def context(self):
        return self.torch.cuda.stream(self.s)

    def sync(self):
        self.torch.cuda.synchronize()

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)

    def record(self, e):
        e.record()

    def done(self, e):
        return bool(e.query())

    def wait(self, e):
        e.synchronize()

    def elapsed(self, a, b):
        return a.elapsed_time(b) / 1e3

    def spin(self, seconds):
        self.torch.cuda._sleep(int(seconds * self.hz))


class HostClock:
    """--cpu-dry-run: perf_counter in place of events, no spin."""
    prefill = False

    def context(self):
        return _null()

    def sync(self):
        pass

    def event(self):
        return [0.0]

    def record(self, e):
        e[0] = time.perf_counter()

    def done(self, e):
        return True

    def wait(self, e):
        pass

    def elapsed(self, a, b):
        return b[0] - a[0]

    def spin(self, seconds):
        pass


# --------------------------------------------------------------- samples
def device_sample(clock, fn, inner, state):
    """Seconds per call of fn on the device (events around `inner` calls)
    and whether the calls were all queued behind the spin."""
    while True:
        s = state["spin"] if clock.prefill else 0.0
        if s:
            clock.spin(s)
        a, b = clock.event(), clock.event()
        clock.record(a)
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        clock.record(b)
        h = time.perf_counter() - t0
        queued = bool(s) and not clock.done(a)  # the GPU still in the spin
        clock.wait(b)
        t = clock.elapsed(a, b) / inner
        if not s or queued:
            return t, queued
        if not state["grown"]:
            # the spin was shorter than the host's enqueue time: once longer
            state["grown"] = True
            state["spin"] = min(0.2, max(s, 4 * h))
            continue
        state["fails"] += 1
        if state["fails"] >= 2:
            state["spin"] = 0.0  # a call waits for the stream: no spin from now on
        return t, False


def wall_sample(clock, fn, inner, state):
    clock.sync()
    t0 = time.perf_counter()
    for _ in range(inner):
        fn()
    clock.sync()
    return (time.perf_counter() - t0) / inner, True


def measure(clock, fns, kind, inner, repeat, warmup):
    """Median seconds per call of each of fns (tileconv, peer), one sample
    each per round, the first of the two alternating; the second value per
    fn: whether every device sample was queued behind the spin."""
    sample = device_sample if kind == "device" else wall_sample
    states = [{"spin": 2e-3, "grown": False, "fails": 0} for _ in fns]
    ts, allq = [[] for _ in fns], [True for _ in fns]
    for r in range(warmup + repeat):
        order = range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))
        for i in order:
            t, q = sample(clock, fns[i], inner, states[i])
            if r >= warmup:
                ts[i].append(t)
                allq[i] = allq[i] and q
    return [(statistics.median(t), q) for t, q in zip(ts, allq)]


# ------------------------------------------------------------------ rows
class Row:
    """fw: 'cupy' or 'torch'; build(env) -> (tileconv callable, peer
    callable); measures: [(kind, target ratio or None)]."""

    def __init__(self, name, peer, fw, build, bound, measures, inner=1):
        self.name, self.peer, self.fw, self.build = name, peer, fw, build
        self.bound, self.measures, self.inner = bound, measures, inner


def rows(small):
    """The rows; small: the --cpu-dry-run sizes."""
    def n(gpu, cpu):
        return cpu if small else gpu

    R = []
    # ndimage on CuPy ------------------------------------------------------
    g = n(8192, 384)

    def gauss(env):
        x = env.rand((g, g), np.float32, 1)
        return (lambda: env.T.gaussian_filter(x, 2.0),
                lambda: env.CX.gaussian_filter(x, 2.0))
    R.append(Row(f"ndimage.gaussian_filter {g}^2 f32 sigma 2", "cupyx", "cupy", gauss, 1e-5,
                 [("device", 3.0)]))

    c = n(512, 128)
    for where in ("host", "device"):
        def corr(env, where=where):
            x = env.rand((c, c), np.float32, 2)
            w = np.random.default_rng(3).random((5, 5)).astype(np.float32)
            wd = env.xp.asarray(w)
            wo = w if where == "host" else wd
            return (lambda: env.T.correlate(x, wo, mode="wrap"),
                    lambda: env.CX.correlate(x, wd, mode="wrap"))
        R.append(Row(f"ndimage.correlate {c}^2 f32 5x5 wrap, w on {where}", "cupyx", "cupy", corr,
                     1e-5, [("wall", 1.0), ("device", 1.0)], inner=20))

    v = n(256, 40)

    def corr3(env):
        x = env.rand((v, v, v), np.float32, 4)
        w = np.random.default_rng(5).random((3, 3, 3)).astype(np.float32)
        wd = env.xp.asarray(w)
        return (lambda: env.T.correlate(x, w), lambda: env.CX.correlate(x, wd))
    R.append(Row(f"ndimage.correlate {v}^3 f32 3x3x3, w on host", "cupyx", "cupy", corr3, 1e-5,
                 [("device", 5.0)]))

    m = n(4096, 256)

    def unif(env):
        x = env.rand((m, m), np.float32, 6)
        return (lambda: env.T.uniform_filter(x, 5), lambda: env.CX.uniform_filter(x, 5))
    R.append(Row(f"ndimage.uniform_filter {m}^2 f32 size 5", "cupyx", "cupy", unif, 1e-5,
                 [("device", None)]))

    def sob(env):
        x = env.rand((m, m), np.float32, 7)
        return (lambda: env.T.sobel(x, 0), lambda: env.CX.sobel(x, 0))
    R.append(Row(f"ndimage.sobel {m}^2 f32 axis 0", "cupyx", "cupy", sob, 1e-5,
                 [("device", None)]))

    def glap(env):
        x = env.rand((m, m), np.float32, 8)
        return (lambda: env.T.gaussian_laplace(x, 2.0), lambda: env.CX.gaussian_laplace(x, 2.0))
    R.append(Row(f"ndimage.gaussian_laplace {m}^2 f32 sigma 2", "cupyx", "cupy", glap, 1e-5,
                 [("device", None)]))

    for axis in (-1, 0):
        def c1d(env, axis=axis):
            x = env.rand((m, m), np.float32, 9)
            w = np.random.default_rng(10).random(9).astype(np.float32)
            wd = env.xp.asarray(w)
            return (lambda: env.T.convolve1d(x, w, axis=axis),
                    lambda: env.CX.convolve1d(x, wd, axis=axis))
        R.append(Row(f"ndimage.convolve1d {m}^2 f32 9 taps axis {axis}, w on host", "cupyx",
                     "cupy", c1d, 1e-5, [("device", None)]))

    # signal on CuPy (both operands on the device, as cupyx takes them) -----
    n1, k1 = n(1 << 20, 1 << 14), n(257, 65)
    n2, k2 = n(2048, 128), n(63, 15)
    n3, k3 = n(1 << 22, 1 << 15), n(513, 65)
    cases = [("fftconvolve", f"{n1} x {k1}", (n1,), (k1,)),
             ("fftconvolve", f"{n2}^2 x {k2}^2", (n2, n2), (k2, k2)),
             ("oaconvolve", f"{n3} x {k3}", (n3,), (k3,))]
    for fname, size, xs, ks in cases:
        for dt, bound in ((np.float32, 1e-4), (np.float64, 1e-10)):
            def sig(env, fname=fname, xs=xs, ks=ks, dt=dt):
                x, k = env.rand(xs, dt, 11), env.rand(ks, dt, 12)
                ours, peer = getattr(env.TS, fname), getattr(env.CS, fname)
                return (lambda: ours(x, k), lambda: peer(x, k))
            R.append(Row(f"signal.{fname} {size} {np.dtype(dt).name}", "cupyx", "cupy", sig,
                         bound, [("device", None)]))

    # one conv layer on a torch CUDA tensor, batch 1 -------------------------
    def conv_module(env):
        torch = env.torch
        torch.manual_seed(13)
        ref = torch.nn.Conv2d(64, 64, 3, padding=1).to(env.tdev)
        ours = env.tnn.Conv2d(64, 64, 3, padding=1).to(env.tdev)
        ours.load_state_dict(ref.state_dict())
        x = torch.rand((1, 64, 56, 56), device=env.tdev)
        return (lambda: ours(x), lambda: ref(x))
    R.append(Row("nn.Conv2d 64->64 3x3 pad 1, 1x64x56x56 f32", "torch", "torch", conv_module,
                 1e-4, [("wall", 1.0), ("device", None)], inner=20))

    def conv_func(env):
        torch = env.torch
        gen = torch.Generator().manual_seed(14)
        x = torch.rand((1, 64, 56, 56), generator=gen).to(env.tdev)
        w = (torch.rand((64, 64, 3, 3), generator=gen) * 2 - 1).to(env.tdev) / 24
        b = torch.rand(64, generator=gen).to(env.tdev)
        return (lambda: env.F.conv2d(x, w, b, padding=1),
                lambda: torch.nn.functional.conv2d(x, w, b, padding=1))
    R.append(Row("nn.functional.conv2d 64->64 3x3 pad 1, 1x64x56x56 f32", "torch", "torch",
                 conv_func, 1e-4, [("wall", 1.0), ("device", None)], inner=20))
    return R


# ----------------------------------------------------------- environment
class Env:
    pass


def cupy_env(env, dry):
    """CuPy and cupyx (or, dry, NumPy and scipy); a reason string when
    not usable."""
    if dry:
        import scipy.ndimage
        import scipy.signal
        env.xp, env.CX, env.CS = np, scipy.ndimage, scipy.signal
        env.cupy_clock = HostClock()
        return None
    try:
        import cupy as cp
        import cupyx.scipy.ndimage
        import cupyx.scipy.signal
        if cp.cuda.runtime.getDeviceCount() < 1:
            return "cupy: no CUDA device"
        env.xp, env.CX, env.CS = cp, cupyx.scipy.ndimage, cupyx.scipy.signal
        env.cupy_clock = CupyClock(cp)
        env.versions.append(f"CuPy {cp.__version__}")
    except Exception as e:  # noqa: BLE001
        return f"cupy: {type(e).__name__}: {e}"
    try:
        name = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"]
        env.gpu = name.decode() if isinstance(name, bytes) else str(name)
    except Exception:  # noqa: BLE001
        pass
    return None


def torch_env(env, dry):
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        return f"torch: {type(e).__name__}: {e}"
    try:
        import tileconv.nn as tnn
        import tileconv.nn.functional as F
        env.tnn, env.F, env.torch = tnn, F, torch
        tnn.Conv2d  # noqa: B018 (imports tileconv.nn.modules: needs torch)
    except Exception as e:  # noqa: BLE001
        return f"tileconv.nn: {type(e).__name__}: {e}"
    if dry:
        env.tdev = torch.device("cpu")
        env.torch_clock = HostClock()
        env.versions.append(f"torch {torch.__version__} (CPU)")
        return None
    if not torch.cuda.is_available():
        return "torch: no CUDA device"
    env.tdev = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    F.allow_tf32 = False
    hz = getattr(env, "cupy_clock", None)
    hz = hz.hz if isinstance(hz, CupyClock) else 2.0e9
    env.torch_clock = TorchClock(torch, hz)
    env.gpu = env.gpu or torch.cuda.get_device_name(env.tdev)
    env.versions.append(f"torch {torch.__version__} (cuDNN {torch.backends.cudnn.version()}, "
                        f"benchmark on, TF32 off)")
    return None


def rand(env, shape, dt, seed):
    """Uniform [0, 1) data of dtype dt on the row's device (drawn on the
    host in float64, rounded once, copied)."""
    h = np.random.default_rng(seed).random(shape).astype(dt)
    return env.xp.asarray(h)


def rel_err(fw, env, o, p):
    if fw == "torch":
        if tuple(o.shape) != tuple(p.shape):
            return None, f"shape {tuple(o.shape)} != peer {tuple(p.shape)}"
        o, p = o.double(), p.double()
        return float((o - p).abs().max()) / max(float(p.abs().max()), 1e-300), ""
    xp = env.xp
    if tuple(o.shape) != tuple(p.shape):
        return None, f"shape {tuple(o.shape)} != peer {tuple(p.shape)}"
    note = "" if o.dtype == p.dtype else f"dtype {o.dtype}, peer {p.dtype}"
    o, p = o.astype(np.float64), p.astype(np.float64)
    return float(xp.abs(o - p).max()) / max(float(xp.abs(p).max()), 1e-300), note


def fmt_t(s):
    return f"{s * 1e3:9.3f} ms" if s >= 1e-3 else f"{s * 1e6:9.1f} us"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated substrings of row names")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--list", action="store_true", help="print the rows and exit")
    ap.add_argument("--cpu-dry-run", action="store_true",
                    help="run the rows' code on the CPU (small sizes, host clocks): a check of "
                         "the script, not a measurement")
    a = ap.parse_args()
    if a.repeat < 1 or a.warmup < 0:
        ap.error("--repeat must be >= 1 and --warmup >= 0")
    only = [s for s in a.only.split(",") if s]
    sel = [r for r in rows(a.cpu_dry_run) if not only or any(s in r.name for s in only)]
    if a.list:
        for r in sel:
            ms = ", ".join(f"{k}" + (f" (target ratio >= {t:g})" if t else "") for k, t in r.measures)
            print(f"{r.name:58} vs {r.peer:6} {r.fw:6} bound {r.bound:.0e}; {ms}")
        return 0
    if not sel:
        print(f"python_gpu_targets: no row matches --only {a.only!r} (--list shows them)")
        return 2

    try:
        import tileconv
        import tileconv.ndimage as T
        import tileconv.signal as TS
    except Exception as e:  # noqa: BLE001
        print(f"python_gpu_targets: the tileconv package does not import ({type(e).__name__}: {e})")
        return 2
    env = Env()
    env.T, env.TS, env.gpu, env.versions = T, TS, None, [f"tileconv {tileconv.__version__}"]
    env.rand = lambda shape, dt, seed: rand(env, shape, dt, seed)
    if not a.cpu_dry_run and tileconv.cuda_device_count() == 0:
        print("python_gpu_targets: no CUDA device for tileconv (tileconv.cuda_device_count() == 0: "
              "the package's library was built without CUDA, TILECONV_CUDA=ON builds it, or no "
              "device is usable); nothing measured (--cpu-dry-run checks this script on the CPU)")
        return 2
    why = {"cupy": cupy_env(env, a.cpu_dry_run), "torch": torch_env(env, a.cpu_dry_run)}
    if all(why.values()):
        print(f"python_gpu_targets: no CUDA device for the peers ({why['cupy']}; {why['torch']}); "
              "nothing measured")
        return 2
    if a.cpu_dry_run:
        env.gpu = "CPU dry run"
        env.xp = getattr(env, "xp", np)
    print(f"python_gpu_targets: {env.gpu}; {', '.join(env.versions)}; python "
          f"{sys.version.split()[0]}; load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"median of {a.repeat} rounds after {a.warmup} warm-up, tileconv and the peer alternating; "
          "ratio = peer / tileconv; err = max|ours - peer| / max|peer|")
    print("device: CUDA events around the calls queued behind a spin kernel ('*': a call waited "
          "for the stream, gaps included); wall: the host's time per call in a loop, one sync at "
          "the end")
    if a.cpu_dry_run:
        print("CPU DRY RUN: NumPy / scipy / torch CPU, host clocks, small sizes: not a measurement")
    hdr = (f"{'row':58} {'peer':6} {'measure':7} {'tileconv':>13} {'peer':>13} {'ratio':>7} "
           f"{'target':>7} {'':7} {'err':>8} {'bound':>6}  GPU")
    print(hdr)
    bad, met, missed, untimed = 0, [], [], []
    for r in sel:
        if why[r.fw]:
            print(f"{r.name:58} {r.peer:6} skipped: {why[r.fw]}")
            untimed.append(r.name)
            continue
        clock = env.cupy_clock if r.fw == "cupy" else env.torch_clock
        try:
            # built outside inference mode (torch: parameters as a model
            # has them), called inside it
            ctx = env.torch.inference_mode() if r.fw == "torch" else _null()
            with clock.context():
                fo, fp = r.build(env)
            with ctx, clock.context():
                err, note = rel_err(r.fw, env, fo(), fp())
                if err is None or err > r.bound:
                    bad += 1
                    untimed.append(r.name)
                    e = "-" if err is None else f"{err:.1e}"
                    print(f"{r.name:58} {r.peer:6} DISAGREE: err {e} > bound {r.bound:.0e} {note}; "
                          "not timed", flush=True)
                    continue
                for kind, target in r.measures:
                    (to, qo), (tp, qp) = measure(clock, [fo, fp], kind, r.inner, a.repeat,
                                                 a.warmup)
                    ratio = tp / to
                    so = fmt_t(to) + ("*" if kind == "device" and clock.prefill and not qo else " ")
                    sp = fmt_t(tp) + ("*" if kind == "device" and clock.prefill and not qp else " ")
                    if target is None:
                        tg, ok = "-", ""
                    else:
                        tg = f">={target:g}x"
                        ok = "met" if ratio >= target else "NOT met"
                        (met if ratio >= target else missed).append(f"{r.name} ({kind})")
                    print(f"{r.name:58} {r.peer:6} {kind:7} {so:>13} {sp:>13} {ratio:6.2f}x "
                          f"{tg:>7} {ok:7} {err:8.1e} {r.bound:6.0e}  {env.gpu}"
                          + (f"  [{note}]" if note else ""), flush=True)
        except Exception as e:  # noqa: BLE001
            bad += 1
            untimed.append(r.name)
            print(f"{r.name:58} {r.peer:6} ERROR: {type(e).__name__}: {e}", flush=True)
        finally:
            fo = fp = None
            if r.fw == "cupy" and not a.cpu_dry_run:
                env.xp.get_default_memory_pool().free_all_blocks()
    print(f"targets: {len(met)} met, {len(missed)} not met"
          + (f" ({'; '.join(missed)})" if missed else "")
          + (f"; rows not timed: {len(untimed)}" if untimed else ""))
    return 1 if bad else 0


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    sys.exit(main())
