#!/usr/bin/env python3
"""Conformity of the tileconv CLI with scipy and PyTorch semantics.

usage: conformity.py PATH/TO/tileconv

Runs the CLI on seeded random .npy files (and PNG / PGM / PPM images) and
compares every output with
  - scipy.ndimage.convolve / correlate (all 5 modes, origins, cval, 1-3D,
    even masks, masks larger than the input),
  - scipy.signal.convolve / correlate (full, valid, valid with the operands
    swapped),
  - a NumPy model of torch.nn.ConvNd written here (stride, padding numbers /
    same / valid, dilation, groups, bias, padding modes via np.pad; both
    layouts of X and OUT, both layouts of W: --weight-layout),
  - scipy's named filters for the CLI's named masks (box, gaussian,
    sobel-x / -y, laplace),
  - image round trips (8/16-bit gray and RGB) against scipy on the float
    image, rounded half away from zero and clipped.
A subset of cases runs again with every CPU algorithm forced by --algo
(listed by `tileconv info --kernels`); an algorithm that does not apply to a
case is a skip with its reason, not a pass.

Tolerance: |got - want| <= rtol * mag + gtol * max(mag), where mag is the
same operation on absolute values (sum |w||x| per element). rtol is 2e-5
(float32) / 1e-12 (float64); FFT / Winograd / Strassen algorithms get a
looser rtol plus a global term.

Environment: TILECONV_TEST_SEED (default: random, printed), TILECONV_TEST_QUICK=1
(fewer cases), TILECONV_TEST_VERBOSE=1.
Exit status: 0 when every case passed, 1 otherwise (also when numpy or
scipy cannot be imported: a silent skip would hide a broken install).
"""
import itertools
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
import zlib

try:
    import numpy as np
    import scipy
    import scipy.ndimage as ndi
    import scipy.signal as signal
    import scipy.special as special
except ImportError as e:  # never a silent skip
    print(f"conformity: FAILED: cannot import numpy/scipy with {sys.executable}: {e}")
    print("conformity: install them (e.g. apt-get install python3-numpy python3-scipy)")
    print("0 passed, 1 failed, 0 skipped")
    sys.exit(1)

MODES = ["constant", "nearest", "reflect", "mirror", "wrap"]
TORCH_PAD = {"zeros": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


class Suite:
    def __init__(self, cli, tmp, seed):
        self.cli = cli
        self.tmp = tmp
        self.rng = np.random.default_rng(seed)
        self.passed = self.failed = self.skipped = 0
        self.verbose = os.environ.get("TILECONV_TEST_VERBOSE", os.environ.get("TC_TEST_VERBOSE", "0")) not in ("", "0")
        self.nfile = 0
        self.failures = []

    # ---------------- files and the CLI ----------------
    def path(self, ext):
        self.nfile += 1
        return os.path.join(self.tmp, f"f{self.nfile}{ext}")

    def save(self, a):
        p = self.path(".npy")
        np.save(p, a)
        return p

    def run(self, args):
        """Runs the CLI; returns (status, combined output)."""
        try:
            r = subprocess.run([self.cli] + [str(a) for a in args], capture_output=True,
                               text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return 124, "timed out after 120 s"
        return r.returncode, (r.stdout + r.stderr).strip()

    # ---------------- verdicts ----------------
    def ok(self, name, note=""):
        self.passed += 1
        if self.verbose:
            print(f"ok   {name} {note}")

    def fail(self, name, why):
        self.failed += 1
        self.failures.append(name)
        print(f"FAIL {name}\n     {why}")

    def skip(self, name, why):
        self.skipped += 1
        print(f"SKIP {name}: {why}")

    def check(self, name, got, want, mag, algo, scale=0.0):
        """Compares arrays; returns True when they agree. For the loose
        (transform) algorithms the global term is relative to the larger of
        max(mag) and `scale`, the size of the whole signal (an FFT spreads
        roundoff over every output, even one whose exact value is 0)."""
        if got.shape != want.shape:
            self.fail(name, f"shape {got.shape}, expected {want.shape}")
            return False
        loose = any(s in algo for s in ("fft", "winograd", "strassen"))
        if got.dtype == np.float16:  # float32 sums, one rounding (semantics.md)
            rtol, gtol = (2e-3, 6e-4) if loose else (2e-3, 5e-4)
            loose = True  # the global term counts
            scale = max(scale, 1.0)
        elif got.dtype == np.float32:
            rtol, gtol = (5e-4, 5e-5) if loose else (2e-5, 0.0)
        else:
            rtol, gtol = (1e-9, 1e-10) if loose else (1e-12, 0.0)
        g = got.astype(np.float64)
        err = np.abs(g - want)
        mmax = float(mag.max()) if mag.size else 0.0
        if loose:
            mmax = max(mmax, scale)
        lim = rtol * mag + gtol * mmax + 1e-300
        bad = ~(err <= lim)  # NaN counts as bad
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            norm = float(np.nanmax(err / (mag + 1e-300)))
            self.fail(name, f"{int(bad.sum())} of {bad.size} elements off [{algo}]; "
                      f"first {idx}: got {g[idx]!r} want {want[idx]!r} (mag {mag[idx]:.3g}); "
                      f"max normalised error {norm:.3g} (rtol {rtol:g})")
            return False
        norm = float(np.max(err / (mag + 1e-300))) if err.size else 0.0
        self.ok(name, f"[{algo}] max normalised error {norm:.2g}")
        return True

    def cli_case(self, name, args, out, want, mag, algo=None, dtype=None, scale=0.0):
        """Runs one CLI call writing .npy `out` and checks it."""
        if algo:
            args = args + ["--algo", algo]
        args = args + ["--verbose"]
        t0 = time.time()
        rc, text = self.run(args)
        if rc != 0:
            if algo and re.search(r"does not (apply|implement)|not available|"
                                  r"not applicable", text):
                self.skip(f"{name} [{algo}]", text.splitlines()[-1] if text else f"status {rc}")
                return None
            self.fail(name, f"CLI status {rc}: {text}\n     command: {' '.join(map(str, args))}")
            return False
        m = re.search(r"algorithm=(\S+)", text)
        used = m.group(1) if m else "?"
        try:
            got = np.load(out)
        except Exception as e:  # noqa: BLE001 - report any load problem
            self.fail(name, f"cannot load the output: {e}")
            return False
        if dtype is not None and got.dtype != dtype:
            self.fail(name, f"output dtype {got.dtype}, expected {dtype}")
            return False
        if algo and used != algo:
            self.fail(name, f"forced {algo} but the CLI reports {used}")
            return False
        if time.time() - t0 > 20:
            print(f"note: {name} took {time.time() - t0:.1f} s")
        return self.check(f"{name}", got, want, mag, used, scale)

    # ---------------- random data ----------------
    def data(self, shape, dtype):
        """Non-zero values in +-[0.1, 1)."""
        v = self.rng.uniform(0.1, 1.0, size=shape) * self.rng.choice([-1.0, 1.0], size=shape)
        return v.astype(dtype)


# ---------------------------------------------------------------------------
# scipy.ndimage convolve / correlate
# ---------------------------------------------------------------------------
def ndimage_case(s, nd, dtype, mode, kind, big=False, algo=None, name_prefix="ndimage",
                 rank=0):
    """rank 1 / 2: the mask is a sum of that many outer products (for the
    algorithms that factor masks); 0: plain random."""
    rng = s.rng
    maxn = {1: 40, 2: 14, 3: 7}[nd]
    shape = tuple(int(rng.integers(1, maxn + 1)) for _ in range(nd))
    if big:  # mask larger than the input on every axis
        mshape = tuple(n + int(rng.integers(1, 6)) for n in shape)
    elif rank:
        mshape = tuple(int(rng.integers(3, 8)) for _ in range(nd))
    else:
        mshape = tuple(int(rng.integers(1, 6 if nd == 3 else 8)) for _ in range(nd))
    x = s.data(shape, dtype)
    if rank:
        w = np.zeros(mshape)
        for _ in range(rank):
            t = s.data(mshape[0], np.float64)
            for m in mshape[1:]:
                t = np.multiply.outer(t, s.data(m, np.float64))
            w += t
        w = w.astype(dtype)
        name_prefix += f" rank-{rank} mask"
    else:
        w = s.data(mshape, dtype)
    origin = tuple(int(rng.integers(-(m // 2), (m - 1) // 2 + 1)) for m in mshape)
    cval = float(np.round(rng.uniform(-2, 2), 3)) if mode == "constant" else 0.0
    fn = ndi.correlate if kind == "correlate" else ndi.convolve
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    want = fn(x64, w64, mode=mode, cval=cval, origin=origin)
    mag = fn(np.abs(x64), np.abs(w64), mode=mode, cval=abs(cval), origin=origin)
    if kind == "convolve":  # |flip(w)| is what multiplies: same as above
        pass
    out = s.path(".npy")
    args = ["filter", s.save(x), out, "--kernel", s.save(w), "--mode", mode,
            "--origin", ",".join(map(str, origin))]
    if mode == "constant":
        args += ["--cval", repr(cval)]
    if kind == "correlate":
        args.append("--correlate")
    if rng.integers(0, 3) == 0:
        args += ["--threads", str(int(rng.integers(1, 4)))]
    name = (f"{name_prefix} {nd}D {np.dtype(dtype).name} x{shape} w{mshape} {kind} "
            f"mode={mode} origin={origin}" + (f" cval={cval}" if mode == "constant" else ""))
    return s.cli_case(name, args, out, want, mag, algo, dtype)


# ---------------------------------------------------------------------------
# scipy.signal convolve / correlate, full and valid
# ---------------------------------------------------------------------------
def signal_case(s, nd, dtype, output, kind, swap=False, algo=None):
    rng = s.rng
    maxn = {1: 30, 2: 12, 3: 6}[nd]
    shape = tuple(int(rng.integers(1, maxn + 1)) for _ in range(nd))
    if swap:
        mshape = tuple(n + int(rng.integers(0, 5)) for n in shape)
        if mshape == shape:
            mshape = (mshape[0] + 1,) + mshape[1:]
    elif output == "valid":
        mshape = tuple(int(rng.integers(1, n + 1)) for n in shape)
    else:
        mshape = tuple(int(rng.integers(1, 8 if nd < 3 else 5)) for _ in range(nd))
    x = s.data(shape, dtype)
    w = s.data(mshape, dtype)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    fn = signal.correlate if kind == "correlate" else signal.convolve
    want = fn(x64, w64, mode=output, method="direct")
    mag = fn(np.abs(x64), np.abs(w64), mode=output, method="direct")
    out = s.path(".npy")
    args = ["filter", s.save(x), out, "--kernel", s.save(w), "--output", output]
    if kind == "correlate":
        args.append("--correlate")
    name = (f"signal {nd}D {np.dtype(dtype).name} x{shape} w{mshape} {kind} {output}"
            + (" (swapped)" if swap else ""))
    return s.cli_case(name, args, out, want, mag, algo, dtype)


# ---------------------------------------------------------------------------
# torch.nn.ConvNd forward, modelled with NumPy
# ---------------------------------------------------------------------------
def torch_conv(x, w, b, stride, padding, dilation, groups, pmode):
    """PyTorch ConvNd forward in float64. padding: list of ints, 'same' or
    'valid'. pmode: zeros, reflect, replicate, circular."""
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    nsp = x.ndim - 2
    N, C = x.shape[:2]
    K = w.shape[0]
    ks = w.shape[2:]
    if padding == "valid":
        pads = [(0, 0)] * nsp
    elif padding == "same":
        pads = []
        for i in range(nsp):
            total = dilation[i] * (ks[i] - 1)
            pads.append((total // 2, total - total // 2))
    else:
        pads = [(p, p) for p in padding]
    xp = np.pad(x, [(0, 0), (0, 0)] + pads, mode=TORCH_PAD[pmode])
    P = xp.shape[2:]
    o = [(P[i] - dilation[i] * (ks[i] - 1) - 1) // stride[i] + 1 for i in range(nsp)]
    Cg, Kg = C // groups, K // groups
    y = np.zeros((N, K) + tuple(o))
    for r in itertools.product(*[range(k) for k in ks]):
        sl = tuple(slice(r[i] * dilation[i], r[i] * dilation[i] + (o[i] - 1) * stride[i] + 1,
                         stride[i]) for i in range(nsp))
        xs = xp[(slice(None), slice(None)) + sl]  # N x C x o...
        for g in range(groups):
            wg = w[(slice(g * Kg, (g + 1) * Kg), slice(None)) + r]  # Kg x Cg
            y[:, g * Kg:(g + 1) * Kg] += np.einsum("nc...,kc->nk...",
                                                   xs[:, g * Cg:(g + 1) * Cg], wg)
    if b is not None:
        y += b.astype(np.float64).reshape((1, K) + (1,) * nsp)
    return y


def conv_valid_params(s, nsp):
    """Random torch-valid conv parameters."""
    rng = s.rng
    while True:
        G = int(rng.integers(1, 4))
        C = G * int(rng.integers(1, 4))
        K = G * int(rng.integers(1, 4))
        N = int(rng.integers(1, 4))
        maxn = {1: 24, 2: 10, 3: 6}[nsp]
        n = [int(rng.integers(1, maxn + 1)) for _ in range(nsp)]
        k = [int(rng.integers(1, 5)) for _ in range(nsp)]
        st = [int(rng.integers(1, 4)) for _ in range(nsp)]
        dl = [int(rng.integers(1, 4)) for _ in range(nsp)]
        pmode = ["zeros", "reflect", "replicate", "circular"][int(rng.integers(0, 4))]
        pk = int(rng.integers(0, 4))
        if pk == 0:
            padding = "same"
            st = [1] * nsp
        elif pk == 1:
            padding = "valid"
        else:
            padding = [int(rng.integers(0, 4)) for _ in range(nsp)]
        okay = True
        for i in range(nsp):
            span = dl[i] * (k[i] - 1)
            if padding == "same":
                lo, hi = span // 2, span - span // 2
            elif padding == "valid":
                lo = hi = 0
            else:
                lo = hi = padding[i]
            if pmode == "reflect" and max(lo, hi) >= n[i]:
                okay = False
            if pmode == "circular" and max(lo, hi) > n[i]:
                okay = False
            if n[i] + lo + hi < span + 1:
                okay = False
        if okay:
            return dict(N=N, C=C, K=K, G=G, n=n, k=k, stride=st, dilation=dl,
                        padding=padding, pmode=pmode, bias=bool(rng.integers(0, 2)))


def conv_case(s, nsp, dtype, p=None, algo=None, extra=()):
    p = p or conv_valid_params(s, nsp)
    x = s.data([p["N"], p["C"]] + p["n"], dtype)
    w = s.data([p["K"], p["C"] // p["G"]] + p["k"], dtype)
    b = s.data([p["K"]], dtype) if p["bias"] else None
    want = torch_conv(x, w, b, p["stride"], p["padding"], p["dilation"], p["G"], p["pmode"])
    mag = torch_conv(np.abs(x), np.abs(w), None if b is None else np.abs(b), p["stride"],
                     p["padding"], p["dilation"], p["G"], p["pmode"])
    out = s.path(".npy")
    args = ["conv", s.save(x), s.save(w), out, "--groups", p["G"],
            "--padding-mode", p["pmode"]]
    lists = lambda v: ",".join(map(str, v))  # noqa: E731
    # one value for every axis when they agree, sometimes: both forms are legal
    for opt, key in (("--stride", "stride"), ("--dilation", "dilation")):
        v = p[key]
        args += [opt, str(v[0]) if len(set(v)) == 1 and s.rng.integers(0, 2) else lists(v)]
    args += ["--padding", p["padding"] if isinstance(p["padding"], str) else lists(p["padding"])]
    if b is not None:
        args += ["--bias", s.save(b)]
    args += list(extra)
    name = (" ".join(extra) + " " if extra else "") + (f"conv {nsp}D {np.dtype(dtype).name} N{p['N']} C{p['C']} K{p['K']} G{p['G']} "
            f"in={p['n']} k={p['k']} stride={p['stride']} dil={p['dilation']} "
            f"pad={p['padding']} {p['pmode']} bias={int(b is not None)}")
    # the signal's size: max |x| times the largest sum |w| of one output channel
    scale = float(np.abs(x).max()) * float(np.abs(w).reshape(p["K"], -1).sum(1).max())
    return s.cli_case(name, args, out, want, mag, algo, dtype, scale)


ACTS = {
    "none": lambda v: v,
    "relu": lambda v: np.maximum(v, 0),
    "relu6": lambda v: np.clip(v, 0, 6),
    "silu": lambda v: v / (1 + np.exp(-v)),
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "tanh": np.tanh,
    "gelu": lambda v: 0.5 * v * (1 + special.erf(v / np.sqrt(2))),
}


def conv_epilogue_case(s, nsp, dtype, layout, act, residual, algo=None,
                       wlayout="channels_first"):
    """OUT = act(conv(X, W) + bias + residual), channels-first or -last;
    W K x C/groups x mask, or K x mask x C/groups (--weight-layout
    channels_last)."""
    p = conv_valid_params(s, nsp)
    x = s.data([p["N"], p["C"]] + p["n"], dtype)
    w = s.data([p["K"], p["C"] // p["G"]] + p["k"], dtype)
    b = s.data([p["K"]], dtype) if p["bias"] else None
    conv = torch_conv(x, w, b, p["stride"], p["padding"], p["dilation"], p["G"], p["pmode"])
    mag = torch_conv(np.abs(x), np.abs(w), None if b is None else np.abs(b), p["stride"],
                     p["padding"], p["dilation"], p["G"], p["pmode"])
    last = layout == "channels_last"
    to_cl = lambda a: np.moveaxis(a, 1, -1)  # noqa: E731
    r = s.data(conv.shape, dtype) if residual else None
    want = ACTS[act](conv + (0 if r is None else r.astype(np.float64)))
    if r is not None:
        mag = mag + np.abs(r.astype(np.float64))
    if last:
        want, mag = to_cl(want), to_cl(mag)
    out = s.path(".npy")
    wlast = wlayout == "channels_last"
    args = ["conv", s.save(np.ascontiguousarray(to_cl(x)) if last else x),
            s.save(np.ascontiguousarray(to_cl(w)) if wlast else w), out,
            "--groups", p["G"], "--padding-mode", p["pmode"], "--layout", layout,
            "--activation", act]
    if wlast or s.rng.integers(0, 2):  # the default spelled out, sometimes
        args += ["--weight-layout", wlayout]
    args += ["--stride", ",".join(map(str, p["stride"])),
             "--dilation", ",".join(map(str, p["dilation"])),
             "--padding", p["padding"] if isinstance(p["padding"], str)
             else ",".join(map(str, p["padding"]))]
    if b is not None:
        args += ["--bias", s.save(b)]
    if r is not None:
        args += ["--residual", s.save(np.ascontiguousarray(to_cl(r)) if last else r)]
    name = (f"conv {nsp}D {np.dtype(dtype).name} {layout} weights {wlayout} act={act} "
            f"residual={int(residual)} N{p['N']} C{p['C']} K{p['K']} G{p['G']} "
            f"in={p['n']} k={p['k']} stride={p['stride']} {p['pmode']}")
    scale = float(np.abs(x).max()) * float(np.abs(w).reshape(p["K"], -1).sum(1).max())
    if act != "none":
        scale = max(scale, 1.0)
    return s.cli_case(name, args, out, want, mag, algo, dtype, scale)


# ---------------------------------------------------------------------------
# named masks
# ---------------------------------------------------------------------------
def named_case(s, nd, dtype, kernel, mode, correlate, want_fn, mag_fn):
    maxn = {1: 40, 2: 16, 3: 8}[nd]
    shape = tuple(int(s.rng.integers(3, maxn + 1)) for _ in range(nd))
    x = s.data(shape, dtype)
    x64 = x.astype(np.float64)
    want = want_fn(x64)
    mag = mag_fn(np.abs(x64))
    out = s.path(".npy")
    args = ["filter", s.save(x), out, "--kernel", kernel, "--mode", mode]
    if correlate:
        args.append("--correlate")
    name = (f"named {kernel} {nd}D {np.dtype(dtype).name} x{shape} mode={mode}"
            + (" --correlate" if correlate else ""))
    return s.cli_case(name, args, out, want, mag, None, dtype)


def gauss1d(sigma):
    radius = int(4.0 * sigma + 0.5)
    xs = np.arange(-radius, radius + 1, dtype=np.float64)
    g = np.exp(-0.5 / sigma ** 2 * xs ** 2)
    return g / g.sum()


def named_cases(s):
    rng = s.rng
    for nd in (1, 2, 3):
        for mode in MODES:
            dt = [np.float32, np.float64][int(rng.integers(0, 2))]
            n = int(rng.integers(1, 6))
            box = np.full((n,) * nd, 1.0 / n ** nd)
            # correlate with the box = scipy's uniform filter
            named_case(s, nd, dt, f"box:{n}", mode, True,
                       lambda x, n=n, mode=mode: ndi.uniform_filter(x, n, mode=mode),
                       lambda a, n=n, mode=mode: ndi.uniform_filter(a, n, mode=mode))
            # the default (convolve) flips: for an even box that is a shift
            named_case(s, nd, dt, f"box:{n}", mode, False,
                       lambda x, box=box, mode=mode: ndi.convolve(x, box, mode=mode),
                       lambda a, box=box, mode=mode: ndi.convolve(a, box, mode=mode))
            sigma = float(rng.choice([0.7, 1.5, 2.0]))
            g = gauss1d(sigma)
            gk = g
            for _ in range(nd - 1):
                gk = np.multiply.outer(gk, g)
            named_case(s, nd, dt, f"gaussian:{sigma}", mode, True,
                       lambda x, sg=sigma, mode=mode: ndi.gaussian_filter(x, sg, mode=mode),
                       lambda a, gk=gk, mode=mode: ndi.correlate(a, gk, mode=mode))
            lap = ndi.generate_binary_structure(nd, 1).astype(np.float64)
            lap[(1,) * nd] = -2.0 * nd
            named_case(s, nd, dt, "laplace", mode, bool(rng.integers(0, 2)),
                       lambda x, mode=mode: ndi.laplace(x, mode=mode),
                       lambda a, lap=lap, mode=mode: ndi.correlate(a, np.abs(lap), mode=mode))
    sob_x = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], dtype=np.float64)
    sharpen = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], dtype=np.float64)
    for mode in MODES:
        dt = [np.float32, np.float64][int(rng.integers(0, 2))]
        named_case(s, 2, dt, "sobel-x", mode, True,
                   lambda x, mode=mode: ndi.sobel(x, axis=-1, mode=mode),
                   lambda a, mode=mode: ndi.correlate(a, np.abs(sob_x), mode=mode))
        named_case(s, 2, dt, "sobel-y", mode, True,
                   lambda x, mode=mode: ndi.sobel(x, axis=0, mode=mode),
                   lambda a, mode=mode: ndi.correlate(a, np.abs(sob_x.T), mode=mode))
        named_case(s, 2, dt, "sharpen", mode, False,
                   lambda x, mode=mode: ndi.convolve(x, sharpen, mode=mode),
                   lambda a, mode=mode: ndi.convolve(a, np.abs(sharpen), mode=mode))


# ---------------------------------------------------------------------------
# images: PGM / PPM / PNG writers and a PNG reader (no imaging library)
# ---------------------------------------------------------------------------
def write_pnm(path, img, maxval):
    """img: H x W (gray, P5) or H x W x 3 (RGB, P6) integers."""
    magic = b"P5" if img.ndim == 2 else b"P6"
    h, w = img.shape[:2]
    dt = ">u2" if maxval > 255 else "u1"
    with open(path, "wb") as f:
        f.write(magic + f"\n{w} {h}\n{maxval}\n".encode())
        f.write(img.astype(dt).tobytes())


def read_pnm(path):
    data = open(path, "rb").read()
    toks, pos = [], 0
    while len(toks) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            while data[pos:pos + 1] not in (b"\n", b""):
                pos += 1
            continue
        start = pos
        while not data[pos:pos + 1].isspace():
            pos += 1
        toks.append(data[start:pos])
    pos += 1
    magic, w, h, maxval = toks[0], int(toks[1]), int(toks[2]), int(toks[3])
    ch = 1 if magic == b"P5" else 3
    dt = ">u2" if maxval > 255 else "u1"
    a = np.frombuffer(data[pos:], dtype=dt, count=w * h * ch)
    return (a.reshape(h, w) if ch == 1 else a.reshape(h, w, 3)).astype(np.int64), maxval


def png_chunk(tag, payload):
    return (struct.pack(">I", len(payload)) + tag + payload +
            struct.pack(">I", zlib.crc32(tag + payload) & 0xFFFFFFFF))


def write_png(path, img, bits):
    h, w = img.shape[:2]
    ctype = 0 if img.ndim == 2 else 2
    dt = ">u2" if bits == 16 else "u1"
    rows = img.astype(dt).reshape(h, -1).view(np.uint8).reshape(h, -1)
    raw = b"".join(b"\x00" + rows[i].tobytes() for i in range(h))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, bits, ctype, 0, 0, 0)))
        f.write(png_chunk(b"IDAT", zlib.compress(raw, 6)))
        f.write(png_chunk(b"IEND", b""))


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n = struct.unpack(">I", data[pos:pos + 4])[0]
        tag = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if tag == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif tag == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, bits, ctype, _, _, interlace = ihdr
    assert interlace == 0 and ctype in (0, 2) and bits in (8, 16), f"unsupported PNG {ihdr}"
    ch = 1 if ctype == 0 else 3
    bpp = ch * bits // 8
    stride = w * bpp
    raw = zlib.decompress(idat)
    out = np.zeros((h, stride), dtype=np.int64)
    prev = np.zeros(stride, dtype=np.int64)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = np.frombuffer(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)],
                             dtype=np.uint8).astype(np.int64)
        cur = np.zeros(stride, dtype=np.int64)
        for i in range(stride):
            a = cur[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 0:
                p = 0
            elif ft == 1:
                p = a
            elif ft == 2:
                p = b
            elif ft == 3:
                p = (a + b) // 2
            else:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[i] = (line[i] + p) & 0xFF
        out[y] = cur
        prev = cur
    if bits == 16:
        out = out[:, 0::2] * 256 + out[:, 1::2]
    return (out.reshape(h, w) if ch == 1 else out.reshape(h, w, 3)), (1 << bits) - 1


def quantise(v, maxval):
    """Round half away from zero, clip to [0, maxval] (values are >= 0)."""
    return np.clip(np.floor(v + 0.5), 0, maxval).astype(np.int64)


def image_cases(s):
    rng = s.rng
    specs = [("png", 8, 1), ("png", 16, 1), ("png", 8, 3), ("png", 16, 3),
             ("pgm", 8, 1), ("pgm", 16, 1), ("ppm", 8, 3), ("ppm", 16, 3)]
    for fmt, bits, ch in specs:
        h, w = int(rng.integers(5, 24)), int(rng.integers(5, 24))
        maxval = (1 << bits) - 1
        shape = (h, w) if ch == 1 else (h, w, 3)
        img = rng.integers(0, maxval + 1, size=shape)
        src = s.path("." + fmt)
        (write_png if fmt == "png" else write_pnm)(src, img, bits if fmt == "png" else maxval)
        box = np.full((3, 3), 1.0 / 9.0)
        f = img.astype(np.float64)
        if ch == 1:
            want = ndi.convolve(f, box, mode="reflect")
        else:
            want = np.stack([ndi.convolve(f[:, :, c], box, mode="reflect") for c in range(3)], -1)
        name = f"image {fmt} {bits}-bit {'gray' if ch == 1 else 'RGB'} {h}x{w} box:3"
        # image -> same format: rounded and clipped
        out = s.path("." + fmt)
        rc, text = s.run(["filter", src, out, "--kernel", "box:3"])
        if rc != 0:
            s.fail(name, f"CLI status {rc}: {text}")
        else:
            try:
                got, gmax = (read_png if fmt == "png" else read_pnm)(out)
            except Exception as e:  # noqa: BLE001
                s.fail(name, f"cannot read the output image: {e}")
                got = None
            if got is not None:
                q = quantise(want, maxval)
                if got.shape != q.shape or gmax != maxval:
                    s.fail(name, f"output {got.shape} maxval {gmax}, expected {q.shape} {maxval}")
                elif (got != q).any():
                    idx = tuple(int(i) for i in np.argwhere(got != q)[0])
                    s.fail(name, f"{int((got != q).sum())} pixels differ; first {idx}: "
                           f"got {got[idx]} want {q[idx]} (float {want[idx]:.4f})")
                else:
                    s.ok(name)
        # image -> .npy: float32, not rounded
        out = s.path(".npy")
        mag = want  # the image is >= 0: sum |w||x| = the result itself
        s.cli_case(name + " -> npy", ["filter", src, out, "--kernel", "box:3"], out,
                   want, np.maximum(mag, 1.0), None, np.float32)


# ---------------------------------------------------------------------------
def list_algorithms(s):
    """{op: [names]} of the available CPU algorithms, from `tileconv info`."""
    rc, text = s.run(["info", "--kernels"])
    algos = {"filter": [], "conv": []}
    if rc != 0:
        s.fail("tileconv info --kernels", f"status {rc}: {text}")
        return algos
    for line in text.splitlines():
        m = re.match(r"\s+(\S+)\s+(\S+)\s+(available|unavailable)\s+\[([^\]]*)\]", line)
        if not m:
            continue
        name, backend, avail, ops = m.groups()
        if backend != "cpu":
            continue
        if avail != "available":
            s.skip(f"forced {name}", "not available on this machine")
            continue
        for op in ops.split(","):
            if op in algos:
                algos[op].append(name)
    for must in ("cpu.filter.direct-halo", "cpu.conv.im2col", "ref.conv.loops"):
        for op in ("filter", "conv"):
            if must not in algos[op]:
                s.fail(f"info lists {must}", f"{must} missing from the {op} algorithms: {algos[op]}")
    return algos


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    cli = os.path.abspath(sys.argv[1])
    if not os.access(cli, os.X_OK):
        print(f"conformity: FAILED: {cli} is not an executable")
        print("0 passed, 1 failed, 0 skipped")
        return 1
    env_seed = os.environ.get("TILECONV_TEST_SEED", os.environ.get("TC_TEST_SEED", ""))
    seed = int(env_seed, 0) if env_seed else int.from_bytes(os.urandom(4), "little")
    quick = os.environ.get("TILECONV_TEST_QUICK", os.environ.get("TC_TEST_QUICK", "0")) not in ("", "0")
    print(f"conformity: seed {seed} (replay with TILECONV_TEST_SEED={seed}), numpy "
          f"{np.__version__}, scipy {scipy.__version__}{', quick' if quick else ''}")
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="tc-conformity-") as tmp:
        s = Suite(cli, tmp, seed)
        rng = s.rng
        dts = [np.float32, np.float64]
        reps = 1 if quick else 3
        # ndimage: every mode x kind x rank, random shapes/origins/cval
        for _ in range(reps):
            for nd in (1, 2, 3):
                for mode in MODES:
                    for kind in ("convolve", "correlate"):
                        ndimage_case(s, nd, dts[int(rng.integers(0, 2))], mode, kind)
        # separable and rank-2 masks, every mode
        for nd, rank in ((2, 1), (3, 1), (2, 2)):
            for mode in MODES:
                ndimage_case(s, nd, dts[int(rng.integers(0, 2))], mode,
                             ["convolve", "correlate"][int(rng.integers(0, 2))], rank=rank)
        # masks larger than the input, every mode
        for nd in (1, 2, 3):
            for mode in MODES:
                ndimage_case(s, nd, dts[int(rng.integers(0, 2))], mode,
                             ["convolve", "correlate"][int(rng.integers(0, 2))], big=True)
        # scipy.signal full / valid / swapped valid
        for _ in range(reps):
            for nd in (1, 2, 3):
                for kind in ("convolve", "correlate"):
                    signal_case(s, nd, dts[int(rng.integers(0, 2))], "full", kind)
                    signal_case(s, nd, dts[int(rng.integers(0, 2))], "valid", kind)
                    signal_case(s, nd, dts[int(rng.integers(0, 2))], "valid", kind, swap=True)
        # torch conv in both dtypes
        for _ in range(reps * 8):
            for nsp in (1, 2, 3):
                conv_case(s, nsp, dts[int(rng.integers(0, 2))])
        # torch conv: fixed corner cases
        corner = [
            dict(N=1, C=4, K=4, G=4, n=[9, 8], k=[3, 3], stride=[1, 1], dilation=[1, 1],
                 padding="same", pmode="reflect", bias=True),  # depthwise
            dict(N=2, C=3, K=5, G=1, n=[7], k=[1], stride=[2], dilation=[1],
                 padding=[0], pmode="zeros", bias=True),  # 1x1, stride
            dict(N=1, C=2, K=2, G=1, n=[5, 6, 4], k=[2, 3, 2], stride=[1, 2, 1],
                 dilation=[2, 1, 3], padding=[1, 2, 3], pmode="circular", bias=False),
            dict(N=3, C=2, K=4, G=2, n=[6, 5], k=[4, 2], stride=[1, 1], dilation=[1, 2],
                 padding="same", pmode="replicate", bias=True),  # even kernel same
            dict(N=1, C=1, K=1, G=1, n=[4], k=[6], stride=[1], dilation=[1],
                 padding=[1], pmode="zeros", bias=False),  # kernel = padded input
        ]
        for p in corner:
            for dt in dts:
                conv_case(s, len(p["n"]), dt, p)
        # float16, channels-last and the fused epilogue
        acts = list(ACTS)
        for i in range(reps * 6):
            conv_epilogue_case(s, 1 + i % 3, [np.float16, np.float32, np.float64][i % 3],
                               ["channels_first", "channels_last"][(i // 3) % 2],
                               acts[i % len(acts)], residual=(i % 4 != 3),
                               wlayout=["channels_first", "channels_last"][(i // 2) % 2])
        named_cases(s)
        image_cases(s)
        # every CPU algorithm forced on a subset
        algos = list_algorithms(s)
        for name in algos["filter"]:
            for _ in range(1 if quick else 2):
                for nd in (1, 2, 3):
                    ndimage_case(s, nd, dts[int(rng.integers(0, 2))],
                                 MODES[int(rng.integers(0, 5))],
                                 ["convolve", "correlate"][int(rng.integers(0, 2))], algo=name)
                    signal_case(s, nd, dts[int(rng.integers(0, 2))],
                                ["full", "valid"][int(rng.integers(0, 2))], "correlate",
                                algo=name)
            ndimage_case(s, 2, np.float32, "mirror", "convolve", big=True, algo=name)
            for nd, rank in ((2, 1), (3, 1), (2, 2)):  # masks the factoring solvers take
                ndimage_case(s, nd, dts[int(rng.integers(0, 2))], MODES[int(rng.integers(0, 5))],
                             ["convolve", "correlate"][int(rng.integers(0, 2))], algo=name,
                             rank=rank)
            signal_case(s, 2, np.float64, "valid", "convolve", swap=True, algo=name)
        # --tf32 allows the GPU's TF32 solvers only: on the CPU the plan and
        # the result stay those of float32
        for nsp in (1, 2, 3):
            conv_case(s, nsp, np.float32, extra=("--tf32", "--backend", "cpu"))
        for name in algos["conv"]:
            for _ in range(2 if quick else 4):
                for nsp in (1, 2, 3):
                    conv_case(s, nsp, dts[int(rng.integers(0, 2))], algo=name)
            conv_epilogue_case(s, 2, np.float16, "channels_last", "silu", True, algo=name)
            conv_epilogue_case(s, 1 + int(rng.integers(0, 3)), dts[int(rng.integers(0, 2))],
                               "channels_first", "none", False, algo=name,
                               wlayout="channels_last")
        dt_total = time.time() - t0
        print(f"conformity: {s.passed + s.failed + s.skipped} cases in {dt_total:.1f} s")
        if s.failures:
            print(f"conformity: {len(s.failures)} failed (seed {seed}):")
            for f in s.failures[:20]:
                print(f"  {f}")
        print(f"{s.passed} passed, {s.failed} failed, {s.skipped} skipped")
        return 1 if s.failed else 0


if __name__ == "__main__":
    sys.exit(main())
