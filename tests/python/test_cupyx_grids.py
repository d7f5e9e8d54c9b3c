"""cupyx's own parameter grids (cupyx_tests/scipy_tests/ndimage_tests/
test_filters.py: TestFilter, TestFilterFast, TestFilterComplexFast,
TestWeightDtype, TestWeightComplexDtype, the 5-D Gaussian; signal_tests/
test_signaltools.py: TestConvolveCorrelate, TestConvolveCorrelate2D) run
on the CPU test double of a device framework (fake_device.py) against
scipy, with cupyx's tolerances and its dtype check: the device paths of
tileconv.ndimage / tileconv.signal meet what CuPy's tests ask before they
run on a GPU (run_cupyx_suites.py), results C-contiguous where scipy's
are. The signal grids run with tileconv.signal.scipy_dtypes = True, as
run_cupyx_suites.py does: every case this scipy refuses (ValueError: bool
and float16 on its direct N-D path) tileconv refuses too; the filter grids
count a case scipy refuses and tileconv computes as not compared."""
import itertools
import warnings

import numpy as np
import scipy.ndimage as S
import scipy.signal as SS

import tileconv.ndimage as T
import tileconv.signal as TS
from tileconv import _gpu

from fake_device import FakeArray, FakeBackend


class Grid:
    def __init__(self, tol):
        self.tol, self.n, self.bad, self.scipy_refused = tol, 0, [], 0

    def run(self, f, *a, **k):
        try:
            return f(*a, **k)
        except Exception as e:  # noqa: BLE001 - compared with scipy's
            return e

    def cmp(self, ref, g, tag, dt=None):
        self.n += 1
        g = g._a if isinstance(g, FakeArray) else g
        if isinstance(ref, ValueError) and not isinstance(g, Exception):
            self.scipy_refused += 1  # this scipy refuses the type (version-dependent)
            return
        if isinstance(ref, Exception) or isinstance(g, Exception):
            if not (isinstance(ref, Exception) and isinstance(g, Exception) and
                    (type(ref) is type(g) or isinstance(ref, ValueError) and
                     isinstance(g, ValueError))):
                self.bad.append(("error", tag, repr(ref)[:80], repr(g)[:80]))
            return
        t = self.tol(dt) if callable(self.tol) else self.tol
        if (g.shape != ref.shape or g.dtype != ref.dtype or
                not np.allclose(g, ref, atol=t, rtol=t, equal_nan=True)):
            self.bad.append(("value", tag, g.dtype, ref.dtype))
        elif ref.flags.c_contiguous and not g.flags.c_contiguous:
            self.bad.append(("layout", tag, "C-contiguous result expected"))  # CuPy checks it


def _rng():
    return np.random.default_rng(0)


def test_cupyx_filter_grids(monkeypatch):
    monkeypatch.setattr(_gpu, "BACKENDS", [FakeBackend()] + list(_gpu.BACKENDS))
    warnings.simplefilter("ignore")
    r = _rng()
    grid = Grid(1e-5)
    run, cmp = grid.run, grid.cmp

    def rand(shape, dt):
        a = r.random(shape) * 10
        if np.dtype(dt).kind == "c":
            a = a + 1j * r.random(shape) * 10
        return a.astype(dt)

    def kw_for(shape, params, is1d):
        k = dict(params)
        for name in ("origin", "sigma"):
            if name in k and isinstance(k[name], tuple):
                k[name] = k[name][0] if is1d else k[name][:len(shape)]
        return k

    def dummy(input, axis, output, mode, cval, *args, **kwargs):
        if output is not None and not isinstance(output, np.dtype):
            output[...] = input + axis
        else:
            output = input + axis
        return output

    def both(name, arr, *args, **k):
        """scipy's and tileconv's (on the device double) results."""
        dev = [FakeArray(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
        return (run(getattr(S, name), arr, *args, **k),
                run(getattr(T, name), FakeArray(arr.copy()), *dev, **k))

    shapes = [(4, 5), (3, 4, 5), (1, 3, 4, 5)]
    weighted = ["convolve", "correlate", "convolve1d", "correlate1d"]

    def wshape(filt, ksize, shape):
        return (ksize,) if filt.endswith("1d") else (ksize,) * len(shape)

    # TestFilter
    for filt in weighted:
        axes = [0, 1, -1] if filt.endswith("1d") else [None]
        for shape, ksize, dt in itertools.product(shapes, [3, 4], [np.uint8, np.float64]):
            mp = [dict(mode="reflect", origin=o, output=out)
                  for o in [0, 1, (-1, 1, -1, 1)] for out in [None, np.uint8, np.float64]]
            mp += [dict(mode="constant", cval=c) for c in [-1.0, 0.0, 1.0]]
            if dt == np.float64:
                mp += [dict(mode="constant", cval=c) for c in [np.nan, np.inf, -np.inf]]
            mp += [dict(mode=m) for m in ["nearest", "wrap"]]
            if shape != (1, 3, 4, 5):
                mp += [dict(mode="mirror")]
            for p in mp:
                if p.get("output") is not None and p["output"] == dt:
                    continue
                for ax in axes:
                    arr, w = rand(shape, dt), rand(wshape(filt, ksize, shape), dt)
                    k = kw_for(shape, p, filt.endswith("1d"))
                    if ax is not None:
                        k["axis"] = ax
                    cmp(*both(filt, arr, w, **k), (filt, shape, ksize, dt, str(k)))
    # TestFilterFast, TestFilterComplexFast
    fast = [("gaussian_filter1d", dict(axis=a, sigma=s, truncate=t))
            for a in [0, 1, -1] for s in [1.5, 2] for t in [2.75, 4]]
    fast += [(f, dict(sigma=s, truncate=t))
             for f in ["gaussian_filter", "gaussian_laplace", "gaussian_gradient_magnitude"]
             for s in [1.5, 2.25, (1.5, 2.25, 1.0, 3.0)] for t in [2.75, 4]]
    fast += [(f, dict(axis=a)) for f in ["prewitt", "sobel"] for a in [0, 1, -1]]
    fast += [("laplace", {})]
    for shape in shapes:
        for dt, out in [(np.uint8, np.float64), (np.float64, np.float64), (np.complex64, None),
                        (np.complex128, None)]:
            for f, p in fast:
                k = kw_for(shape, p, f.endswith("1d"))
                k["output"] = out
                cmp(*both(f, rand(shape, dt), **k), (f, shape, dt, str(k)))
            for f in ["generic_laplace", "generic_gradient_magnitude"]:
                cmp(*both(f, rand(shape, dt), dummy), (f, shape, dt))
    # TestWeightDtype
    for filt in weighted:
        for shape, ksize, out in itertools.product(shapes, [3, 4], [None, np.uint8, np.float64]):
            for dt in [np.uint8, np.int16, np.int32, np.float32, np.float64]:
                for wdt in [np.uint8, np.float64]:
                    if dt == wdt:
                        continue
                    for ax in ([0, 1, -1] if filt.endswith("1d") else [None]):
                        arr, w = rand(shape, dt), rand(wshape(filt, ksize, shape), wdt)
                        k = dict(mode="reflect", output=out)
                        if ax is not None:
                            k["axis"] = ax
                        cmp(*both(filt, arr, w, **k), (filt, shape, ksize, dt, wdt, str(k)))
    # TestWeightComplexDtype
    cdts = [np.uint8, np.float32, np.float64, np.complex64, np.complex128]
    for filt, dt, wdt in itertools.product(weighted, cdts, cdts):
        if np.dtype(dt).kind != "c" and np.dtype(wdt).kind != "c":
            continue
        arr, w = rand((8, 12), dt), rand(wshape(filt, 3, (8, 12)), wdt)
        cmp(*both(filt, arr, w, mode="reflect"), (filt, dt, wdt))
    # TestNearestFilterEdgeCase: 5-D
    cmp(*both("gaussian_filter", rand((26, 3, 52, 70, 50), np.float32), [1, 1, 1, 1, 1],
              mode="nearest"), "5-D gaussian_filter")
    assert not grid.bad, f"{len(grid.bad)} of {grid.n} cases differ: {grid.bad[:10]}"
    assert grid.n > 2500
    print(f"cupyx filter grids: {grid.n} cases, {grid.scipy_refused} refused by scipy")


def test_cupyx_signal_grids(monkeypatch):
    monkeypatch.setattr(_gpu, "BACKENDS", [FakeBackend()] + list(_gpu.BACKENDS))
    # as run_cupyx_suites.py runs CuPy's tests: float16 / bool refused where
    # scipy's direct path refuses them
    monkeypatch.setattr(TS, "scipy_dtypes", True)
    warnings.simplefilter("ignore")
    r = _rng()
    dts = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
           np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]

    def rand(shape, dt):
        if dt == np.bool_:
            return r.random(shape) > 0.5
        a = r.random(shape) * 10
        if np.dtype(dt).kind == "c":
            a = a + 1j * r.random(shape) * 10
        return a.astype(dt)

    tols = {np.float32: 1e-5, np.complex64: 1e-5, np.float16: 1e-3}
    tols2d = {np.float32: 5e-4, np.complex64: 5e-4, np.float16: 1e-3}
    g1 = Grid(lambda dt: tols.get(dt, 1e-10))
    g2 = Grid(lambda dt: tols2d.get(dt, 1e-10))
    run = g1.run

    def both(name, a, b, *args, **k):
        g = run(getattr(TS, name), FakeArray(a.copy()), FakeArray(b.copy()), *args, **k)
        return (run(getattr(SS, name), a, b, *args, **k),
                g._a if isinstance(g, FakeArray) else g)

    # TestConvolveCorrelate
    for size1, size2, mode, dt in itertools.product([(10,), (5, 10), (10, 3), (3, 4, 10)],
                                                    [3, 4, 5, 10], ["full", "same", "valid"],
                                                    dts):
        a, b = rand(size1, dt), rand((size2,) * len(size1), dt)
        for fn in ("convolve", "correlate"):
            g1.cmp(*both(fn, a, b, mode, method="direct"), (fn, size1, size2, mode, dt), dt)
    # TestConvolveCorrelate2D
    bounds = [("fill", 0), ("fill", 1), ("fill", -1), ("wrap", 0), ("symm", 0)]
    for size1, size2, mode, (boundary, fv), dt in itertools.product(
            [(5, 10), (10, 7)], [(3, 2), (3, 3), (2, 2), (10, 10), (11, 11)],
            ["full", "same", "valid"], bounds, dts):
        if (mode == "full" and boundary != "fill") or (np.dtype(dt).kind == "u" and fv < 0):
            continue
        a, b = rand(size1, dt), rand(size2, dt)
        for fn in ("convolve2d", "correlate2d"):
            g2.cmp(*both(fn, a, b, mode, boundary, fv),
                   (fn, size1, size2, mode, boundary, fv, dt), dt)
    for g in (g1, g2):
        assert not g.bad, f"{len(g.bad)} of {g.n} cases differ: {g.bad[:10]}"
    assert g1.n + g2.n > 4000
    # scipy_dtypes: tileconv refuses exactly what this scipy refuses
    assert g1.scipy_refused + g2.scipy_refused == 0, "scipy refused cases tileconv computed"
    print(f"cupyx signal grids: {g1.n + g2.n} cases, "
          f"{g1.scipy_refused + g2.scipy_refused} refused by scipy")
