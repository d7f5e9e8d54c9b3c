#!/usr/bin/env python3
"""ResNet-50 forward through torch and through tileconv.nn.convert(model),
on the same input, in one process.

usage: resnet50.py [--device cpu|cuda] [--batch N ...] [--dtype float32|float16|bfloat16]
                   [--channels-last] [--repeat R] [--threads T] [--layers]

The network is defined here (torchvision's ResNet-50 v1.5 layout: 7x7/2
stem, max pool, bottleneck stages of 3/4/6/3 blocks, stride on the 3x3),
with seeded random weights (no download) and every batch norm folded into
the preceding convolution's weights and bias, as an inference engine runs
it. Three runs of it: torch; tileconv.nn.convert(model) (the convolutions
on tileconv, every other op on torch); convert(model, fuse=True) (each
convolution's residual addition and ReLU in its epilogue). Prints, per
batch size: each one's largest difference from the float64 network (the
same rounded weights and input) relative to its largest output, held to
BOUND; the median time per batch (after warm-up; the three timed in
turns) and the ratios to torch. --layers: each convolution's time inside
the network and its algorithm. --threads sets torch's and tileconv's
threads alike. Forward only, under torch.inference_mode(); the exit
status is 1 when an error is above the bound.

--device cuda: torch with torch.backends.cudnn.benchmark = True and TF32
off (cudnn.allow_tf32 and cuda.matmul.allow_tf32 False, as tileconv's
default allow_tf32 = False); the time columns are wall time per forward
(enqueue and torch.cuda.synchronize()); the "dev" columns the device time
per forward: CUDA events on the current stream around a forward queued
behind torch.cuda._sleep, so that the GPU starts on it only once the host
has queued it all ('*': the GPU caught up with the host during the
forward, gaps included). --layers on CUDA: CUDA events around each
convolution.
"""
import argparse
import copy
import os
import statistics
import sys
import time

try:
    import torch
    import torch.nn as nn
except ImportError:
    print("resnet50: needs torch")
    sys.exit(1)
import tileconv.nn as tnn


class Bottleneck(nn.Module):
    def __init__(self, cin, mid, stride):
        super().__init__()
        cout = mid * 4
        self.c1 = nn.Conv2d(cin, mid, 1, bias=False)
        self.b1 = nn.BatchNorm2d(mid)
        self.c2 = nn.Conv2d(mid, mid, 3, stride, 1, bias=False)
        self.b2 = nn.BatchNorm2d(mid)
        self.c3 = nn.Conv2d(mid, cout, 1, bias=False)
        self.b3 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        r = x if self.down is None else self.down(x)
        y = torch.relu(self.b1(self.c1(x)))
        y = torch.relu(self.b2(self.c2(y)))
        return torch.relu(self.b3(self.c3(y)) + r)


class ResNet50(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], 64
        for mid, n, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for i in range(n):
                blocks.append(Bottleneck(cin, mid, stride if i == 0 else 1))
                cin = mid * 4
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(2048, 1000)

    def forward(self, x):
        y = self.blocks(self.stem(x))
        return self.fc(torch.flatten(torch.mean(y, dim=(2, 3)), 1))


def fold_bn(model):
    """Folds each BatchNorm2d into the Conv2d before it (weights, bias) and
    replaces the norm with an identity."""
    def fold(conv, bn):
        s = bn.weight / torch.sqrt(bn.running_var + bn.eps)
        conv.weight.data = conv.weight.data * s.reshape(-1, 1, 1, 1)
        b = conv.bias.data if conv.bias is not None else torch.zeros_like(bn.running_mean)
        conv.bias = nn.Parameter((b - bn.running_mean) * s + bn.bias)

    for m in model.modules():
        names = list(m._modules)
        for a, b in zip(names, names[1:]):
            ca, cb = m._modules[a], m._modules[b]
            if isinstance(ca, nn.Conv2d) and isinstance(cb, nn.BatchNorm2d):
                fold(ca, cb)
                m._modules[b] = nn.Identity()
    return model


def seeded_model():
    torch.manual_seed(50)
    m = ResNet50()
    for mod in m.modules():  # non-trivial batch-norm statistics to fold
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.1, 0.1)
            mod.running_var.uniform_(0.5, 1.5)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.1, 0.1)
    return fold_bn(m.eval())


def timeit_dev(fns, repeat):
    """CUDA: the median device time per call of each of fns (events
    around a call queued behind a spin), timed in turns after two warm-up
    rounds; and per fn whether every timed call was queued before the GPU
    reached it."""
    hz, spin, grown = 2.0e9, [0.02 for _ in fns], [False for _ in fns]
    ts, queued = [[] for _ in fns], [True for _ in fns]
    for r in range(repeat + 2):
        for i, f in enumerate(fns):
            while True:
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda._sleep(int(spin[i] * hz))
                a.record()
                t0 = time.perf_counter()
                f()
                b.record()
                h = time.perf_counter() - t0
                q = not a.query()  # the GPU still in the spin: all of f queued
                b.synchronize()
                if q or grown[i]:
                    break
                grown[i] = True  # once: longer than the host's enqueue time
                spin[i] = min(0.5, max(spin[i], 4 * h))
            if r >= 2:
                ts[i].append(a.elapsed_time(b) / 1e3)
                queued[i] = queued[i] and q
    return [statistics.median(t) for t in ts], queued


def timeit(fns, repeat, sync):
    """Median seconds per call of each of fns, timed in turns (one call of
    each per round, so that a change of machine load hits them alike),
    after two warm-up rounds."""
    ts = [[] for _ in fns]
    for r in range(repeat + 2):
        for f, t in zip(fns, ts):
            t0 = time.perf_counter()
            f()
            sync()
            if r >= 2:
                t.append(time.perf_counter() - t0)
    return [statistics.median(t) for t in ts]


# The bound the outputs are held to, relative to max|y64|: each side's
# difference from the float64 network with the same (rounded) weights on
# the same (rounded) input. Half types: 8 units of roundoff u of the dtype
# (bfloat16 u = 2^-8, float16 2^-11; every layer rounds its output once,
# the network's error measures about 1 u); float32: 1e-5 (measures ~4e-7).
BOUND = {"float32": 1e-5, "float64": 1e-12, "float16": 8 * 2.0**-11, "bfloat16": 8 * 2.0**-8}


def machine():
    try:
        info = dict((k.strip(), v) for k, v in (l.split(":", 1) for l in open("/proc/cpuinfo") if ":" in l))
        return f"{info['model name'].strip()} family {info['cpu family'].strip()}"
    except (OSError, KeyError):
        return "unknown CPU"


def rel(a, b):
    return float((a.double() - b.double()).abs().max() / b.double().abs().max())


def layer_table(ref, ours, x, repeat):
    """Per convolution: the fastest of `repeat` forwards' time inside the
    network (forward hooks), torch's and tileconv's, and the algorithm."""
    import collections
    cuda = x.is_cuda

    def now():
        if not cuda:
            return time.perf_counter()
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        return e

    def hook(model):
        t, acc = {}, collections.defaultdict(list)
        for name, m in model.named_modules():
            if isinstance(m, nn.Conv2d):
                m.register_forward_pre_hook(
                    lambda mod, i, name=name: t.__setitem__(name, now()))
                m.register_forward_hook(lambda mod, i, o, name=name: acc[name].append(
                    (t[name], now())))
        return acc
    ha, hb = hook(ref), hook(ours)
    ref(x), ours(x)
    ha.clear(), hb.clear()
    for _ in range(repeat):
        ref(x), ours(x)
    if cuda:
        torch.cuda.synchronize()
    for acc in (ha, hb):
        for name in acc:
            acc[name] = [(b - a) if not cuda else a.elapsed_time(b) / 1e3 for a, b in acc[name]]
    mods = dict(ours.named_modules())
    print(f"  {'layer':17} {'C':>5} {'K':>5} {'k/s':>4} {'torch ms':>9} {'tc ms':>7} "
          f"{'ratio':>6} algorithm")
    ta = tb = 0.0
    for name in ha:
        m, a, b = mods[name], min(ha[name]) * 1e3, min(hb[name]) * 1e3
        ta, tb = ta + a, tb + b
        print(f"  {name:17} {m.in_channels:5} {m.out_channels:5} "
              f"{m.kernel_size[0]}/{m.stride[0]:<2} {a:9.3f} {b:7.3f} {a / b:6.2f} "
              f"{m._tc_plan.algorithm} {m._tc_plan.staging}")
    print(f"  {'sum':17} {'':17} {ta:9.2f} {tb:7.2f} {ta / tb:6.2f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--channels-last", action="store_true")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--layers", action="store_true",
                    help="also each convolution's time inside the network (hooks)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="CPU threads of torch and of tileconv (default: all)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    tnn.functional.threads = a.threads
    dt = getattr(torch, a.dtype)
    dev = torch.device(a.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        print(f"resnet50: --device {a.device}: no CUDA device for torch {torch.__version__}")
        sys.exit(2)
    ref = seeded_model().to(dev, dt)
    exact = copy.deepcopy(ref).to(torch.float64)  # the same (rounded) weights
    ours = tnn.convert(copy.deepcopy(ref))
    fused = tnn.convert(copy.deepcopy(ref), fuse=True)
    fmt = torch.channels_last if a.channels_last else torch.contiguous_format
    ref = ref.to(memory_format=fmt)
    ours = ours.to(memory_format=fmt)
    fused = fused.to(memory_format=fmt)
    cuda = dev.type == "cuda"
    if cuda:  # the peer at its best, TF32 off on both sides
        torch.backends.cudnn.benchmark = True
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        tnn.functional.allow_tf32 = False
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    where = machine() if dev.type == "cpu" else (
        f"{torch.cuda.get_device_name(dev)}, cuDNN {torch.backends.cudnn.version()}, "
        "cudnn.benchmark on, TF32 off")
    print(f"ResNet-50 (batch norm folded), {a.device} ({where}), {a.dtype}, "
          f"{'channels_last' if a.channels_last else 'contiguous'}, torch {torch.__version__}, "
          f"threads {torch.get_num_threads()}, load average "
          f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print("tileconv: convert(model); fused: convert(model, fuse=True) (conv + residual -> "
          "relu in the convolution's epilogue)")
    print(f"error: max|y - y64| / max|y64| against the float64 network, bound "
          f"{BOUND[a.dtype]:.2g}")
    if cuda:
        print("ms: wall time per forward (enqueue + synchronize); dev: device time per forward "
              "(CUDA events, the forward queued behind a spin; '*': gaps included)")
    print(f"{'batch':>5} {'err torch':>9} {'err tc':>9} {'err fused':>9} {'torch ms':>9} "
          f"{'tc ms':>9} {'ratio':>6} {'fused ms':>9} {'ratio':>6}"
          + (f" {'dev torch':>10} {'dev tc':>10} {'ratio':>6} {'dev fused':>10} {'ratio':>6}"
             if cuda else ""))
    bad = False
    with torch.inference_mode():
        for n in a.batch:
            g = torch.Generator().manual_seed(n)
            x64 = torch.rand(n, 3, 224, 224, generator=g, dtype=torch.float64).to(dev)
            x = x64.to(dt).to(memory_format=fmt)
            y64 = exact(x.to(torch.float64))  # the same (rounded) input
            yr, yo, yf = ref(x), ours(x), fused(x)
            er, eo, ef = rel(yr, y64), rel(yo, y64), rel(yf, y64)
            bad |= max(er, eo, ef) > BOUND[a.dtype]
            tr, to, tf = timeit([lambda: ref(x), lambda: ours(x), lambda: fused(x)],
                                a.repeat, sync)
            line = (f"{n:>5} {er:9.2e} {eo:9.2e} {ef:9.2e} {tr * 1e3:9.2f} {to * 1e3:9.2f} "
                    f"{tr / to:6.2f} {tf * 1e3:9.2f} {tr / tf:6.2f}")
            if cuda:
                (dr, do, df), q = timeit_dev([lambda: ref(x), lambda: ours(x), lambda: fused(x)],
                                             a.repeat)
                d = [f"{v * 1e3:9.2f}{' ' if ok else '*'}" for v, ok in zip((dr, do, df), q)]
                line += f" {d[0]} {d[1]} {dr / do:6.2f} {d[2]} {dr / df:6.2f}"
            print(line, flush=True)
            if a.layers:
                layer_table(ref, ours, x, a.repeat)
    if bad:
        print(f"FAIL: an error above the bound {BOUND[a.dtype]:.2g}")
        sys.exit(1)


if __name__ == "__main__":
    main()
