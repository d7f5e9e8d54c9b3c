"""Every tileconv.ndimage and tileconv.signal function on CuPy arrays and
torch CUDA tensors, against scipy on the host copy: the result of the
input's kind on its device, weights on the device or the host, float32 /
float64 / float16 / int16 / complex64, output= device arrays filled in
place, a host output= refused, nothing but masks copied to the host, the
work on the framework's current stream. Runs on a GPU machine with a CUDA
build of the package (TILECONV_CUDA=ON); skips otherwise (pytest -rs
prints why). The same calls run on the CPU test double in
test_device_dispatch.py. TILECONV_GPU_TESTS_ON_CPU=1 (this file alone) runs
its own logic on torch CPU tensors standing in for CUDA ones (CPU plans),
to check the file itself without a GPU."""
import os

import numpy as np
import pytest
import scipy.ndimage as SN
import scipy.signal as SS

import tileconv
import tileconv.ndimage as TN
import tileconv.signal as TS
from tileconv import _gpu

from test_device_dispatch import ND, SG, _data


def _frameworks():
    out, why = [], []
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            out.append("cupy")
        else:
            why.append("cupy: no CUDA device")
    except Exception as e:  # noqa: BLE001
        why.append(f"cupy: {type(e).__name__}: {e}")
    try:
        import torch
        if torch.cuda.is_available():
            out.append("torch")
        else:
            why.append("torch: no CUDA device")
    except Exception as e:  # noqa: BLE001
        why.append(f"torch: {type(e).__name__}: {e}")
    return out, "; ".join(why)


ON_CPU = os.environ.get("TILECONV_GPU_TESTS_ON_CPU") == "1"
if ON_CPU:
    from fake_device import TorchCPUBackend
    _gpu.BACKENDS.insert(0, TorchCPUBackend())
    FRAMEWORKS, _WHY = ["torch"], ""
else:
    FRAMEWORKS, _WHY = _frameworks()
if not FRAMEWORKS:
    print(f"test_gpu_ndimage: skipped: no GPU framework ({_WHY})")
    pytest.skip(f"no CuPy / torch CUDA device ({_WHY})", allow_module_level=True)


DEV = "cpu" if ON_CPU else "cuda"


class Kind:
    def __init__(self, name):
        self.name = name
        if name == "cupy":
            import cupy
            self.mod = cupy
        else:
            import torch
            self.mod = torch

    def dev(self, a):
        if self.name == "cupy":
            return self.mod.asarray(a)
        return self.mod.as_tensor(np.ascontiguousarray(a), device=DEV)

    def host(self, a):
        return a.get() if self.name == "cupy" else a.cpu().numpy()

    def owns(self, a):
        return _gpu.backend(a) is not None and _gpu.backend(a).name == self.name

    def empty(self, shape, dtype):
        if self.name == "cupy":
            return self.mod.empty(shape, dtype)
        return self.mod.empty(shape, dtype=_gpu.TorchBackend().tdtype(dtype), device=DEV)

    def sync(self):
        if self.name == "cupy":
            self.mod.cuda.get_current_stream().synchronize()
        else:
            self.mod.cuda.synchronize()


if not ON_CPU and tileconv.cuda_device_count() == 0:
    print("test_gpu_ndimage: skipped: no CUDA device usable by the library")
    pytest.skip("no CUDA device usable by the library (built without CUDA: TILECONV_CUDA=ON "
                "builds it)", allow_module_level=True)


@pytest.fixture(params=FRAMEWORKS)
def k(request, monkeypatch):
    kind = Kind(request.param)
    be = next(b for b in _gpu.BACKENDS if b.name == kind.name)
    kind.copies = []
    orig = be.to_host

    def to_host(a):
        kind.copies.append(int(np.prod(be.shape(a))))
        return orig(a)
    monkeypatch.setattr(be, "to_host", to_host)
    return kind


def _close(k, got, ref, dtype, w=None):
    assert k.owns(got), type(got)
    g = k.host(got)
    dt = np.dtype(dtype)
    if dt == np.float16:
        # float16 results; fftconvolve / oaconvolve: float32, as scipy's
        assert g.dtype == np.float16 or (g.dtype == np.float32 and ref.dtype == np.float32)
        tol = 4e-3
    else:
        assert g.dtype == ref.dtype, (g.dtype, ref.dtype)
        tol = 1e-11 if dt in (np.float64, np.complex128) else 3e-5
    if dt.kind in "iu":
        tol = 0
    scale = max(1.0, float(np.abs(ref).max()))
    err = float(np.abs(g.astype(np.complex128) - ref).max())
    assert err <= tol * scale + (1 if dt.kind in "iu" else 0), err
    if w is not None:
        assert all(n <= w.size for n in k.copies), k.copies


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int16])
@pytest.mark.parametrize("name", sorted(ND))
@pytest.mark.parametrize("w_on_device", [False, True])
def test_ndimage(k, name, dtype, w_on_device):
    x, w2, w1 = _data(dtype, (67, 130))
    ref = ND[name](SN, x.astype(np.float64) if dtype == np.float16 else x, w2, w1)
    dw2, dw1 = (k.dev(w2), k.dev(w1)) if w_on_device else (w2, w1)
    got = ND[name](TN, k.dev(x), dw2, dw1)
    _close(k, got, ref, dtype, w2)


@pytest.mark.parametrize("name", ["correlate", "convolve1d", "gaussian_filter", "sobel",
                                  "uniform_filter"])
def test_ndimage_complex(k, name):
    x, w2, w1 = _data(np.complex64, (40, 33))
    _close(k, ND[name](TN, k.dev(x), w2, w1), ND[name](SN, x, w2, w1), np.complex64, w2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ndimage_3d(k, dtype):
    r = np.random.default_rng(9)
    x = r.random((21, 34, 40)).astype(dtype)
    w = r.random((3, 3, 3))
    for call in (lambda m, a: m.correlate(a, w, mode="nearest"),
                 lambda m, a: m.gaussian_filter(a, (1, 1.5, 2), mode="wrap"),
                 lambda m, a: m.uniform_filter(a, 5, mode="constant", cval=1.0),
                 lambda m, a: m.gaussian_gradient_magnitude(a, 1.2),
                 lambda m, a: m.laplace(a)):
        _close(k, call(TN, k.dev(x)), call(SN, x), dtype, w)


def test_output_in_place_and_refusals(k):
    x, w2, w1 = _data(np.float32, (50, 61))
    out = k.empty(x.shape, np.float32)
    assert TN.gaussian_filter(k.dev(x), 1.5, output=out) is out
    _close(k, out, SN.gaussian_filter(x, 1.5), np.float32)
    assert TN.correlate(k.dev(x), w2, out) is out
    _close(k, out, SN.correlate(x, w2), np.float32)
    got = TN.uniform_filter(k.dev(x), 4, output=np.float64)
    _close(k, got, SN.uniform_filter(x, 4, output=np.float64), np.float32)  # float32 input
    for fn in (lambda o: TN.correlate(k.dev(x), w2, o),
               lambda o: TN.gaussian_filter(k.dev(x), 1.0, output=o),
               lambda o: TN.sobel(k.dev(x), 0, o)):
        with pytest.raises(TypeError):
            fn(np.empty(x.shape, np.float32))


def _spin(k, cycles):
    """Enqueue a one-thread kernel spinning for about `cycles` clocks on the
    framework's current stream (what follows on that stream waits for it)."""
    if k.name == "cupy":
        k.mod.RawKernel(r'''
extern "C" __global__ void spin(long long n) {
    long long t = clock64();
    while (clock64() - t < n) {}
}''', "spin")((1,), (1,), (k.mod.int64(cycles),))
    else:
        k.mod.cuda._sleep(cycles)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.complex64])
@pytest.mark.parametrize("name", sorted(SG))
@pytest.mark.parametrize("w_on_device", [False, True])
def test_signal(k, name, dtype, w_on_device):
    x, w2, _ = _data(dtype, (45, 52))
    if dtype == np.float16:
        w2 = w2.astype(np.float16)
        ref = SG[name](SS, x.astype(np.float64), w2.astype(np.float64))
        if name in ("fftconvolve", "oaconvolve"):
            ref = ref.astype(np.float32)
    else:
        ref = SG[name](SS, x, w2)
    got = SG[name](TS, k.dev(x), k.dev(w2) if w_on_device else w2)
    assert tuple(got.shape) == ref.shape
    _close(k, got, ref, dtype, w2)


def test_gaussian_on_current_stream(k):
    """gaussian_filter (two 1-D passes and a temporary) enqueued on the
    framework's current non-default stream: the input is written there
    behind a long kernel; had any pass gone elsewhere, it would read the
    zeros before the write."""
    if ON_CPU:
        pytest.skip("streams need a GPU")
    x0 = np.random.default_rng(4).random((256, 300)).astype(np.float32)
    ref = SN.gaussian_filter(x0, 2.0)
    if k.name == "cupy":
        cp = k.mod
        xd = cp.zeros(x0.shape, cp.float32)
        src = cp.asarray(x0)
        cp.cuda.Device().synchronize()
        s = cp.cuda.Stream(non_blocking=True)
        with s:
            _spin(k, 200_000_000)
            xd[...] = src
            y = TN.gaussian_filter(xd, 2.0)
        s.synchronize()
    else:
        torch = k.mod
        src = torch.as_tensor(x0, device="cuda")
        xd = torch.zeros_like(src)
        torch.cuda.synchronize()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            _spin(k, 200_000_000)
            xd.copy_(src)
            y = TN.gaussian_filter(xd, 2.0)
        s.synchronize()
    _close(k, y, ref, np.float32)


@pytest.mark.parametrize("fn", ["correlate", "convolve"])
def test_device_weights_no_wait(k, fn):
    """correlate / convolve with device weights (TC_PLAN_MASK_AT_EXECUTE):
    two different weights of one shape in a row, all enqueued on the
    framework's current non-default stream behind a ~1 s spin that precedes
    the writes of the input and both weights: the calls return before the
    spin ends (nothing waits for the stream: no device -> host copy of the
    weights), nothing is copied to the host, and each result is scipy's
    with its own weights (read on the device after they were written)."""
    if ON_CPU:
        pytest.skip("streams need a GPU")
    import time
    r = np.random.default_rng(12)
    x0 = r.random((512, 512)).astype(np.float32)
    ws = [(r.random((5, 5)) - 0.4).astype(np.float32) for _ in range(2)]
    refs = [getattr(SN, fn)(x0, w, mode="reflect") for w in ws]
    t = getattr(TN, fn)
    getattr(TN, fn)(k.dev(x0), k.dev(ws[0]))  # plan made outside the timed calls
    k.sync()
    if k.name == "cupy":
        cp = k.mod
        xd, wd = cp.zeros(x0.shape, cp.float32), [cp.zeros((5, 5), cp.float32) for _ in ws]
        src, wsrc = cp.asarray(x0), [cp.asarray(w) for w in ws]
        cp.cuda.Device().synchronize()
        s = cp.cuda.Stream(non_blocking=True)
        with s:
            _spin(k, 2_000_000_000)
            xd[...] = src
            for a, b in zip(wd, wsrc):
                a[...] = b
            t0 = time.perf_counter()
            ys = [t(xd, w) for w in wd]
            took = time.perf_counter() - t0
        s.synchronize()
    else:
        torch = k.mod
        src = torch.as_tensor(x0, device="cuda")
        wsrc = [torch.as_tensor(w, device="cuda") for w in ws]
        xd, wd = torch.zeros_like(src), [torch.zeros_like(w) for w in wsrc]
        torch.cuda.synchronize()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            _spin(k, 2_000_000_000)
            xd.copy_(src)
            for a, b in zip(wd, wsrc):
                a.copy_(b)
            t0 = time.perf_counter()
            ys = [t(xd, w) for w in wd]
            took = time.perf_counter() - t0
        s.synchronize()
    assert k.copies == [], k.copies
    assert took < 0.5, f"the calls took {took:.3f} s: they waited for the stream"
    for y, ref in zip(ys, refs):
        _close(k, y, ref, np.float32)
