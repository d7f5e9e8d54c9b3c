"""Device weights: ndimage.correlate / convolve and signal.convolve /
correlate with the input and the weights device arrays of one framework
keep the weights on the device: the plan is made with
TC_PLAN_MASK_AT_EXECUTE (keyed on the weights' shape and dtype, never
their values) and every call passes the weights' address, so nothing is
copied to the host and nothing waits for the stream. Checked on the CPU
stand-ins (fake_device: FakeArray, whose to_host records every copy, and
CupyBackend's code over CupyLike; CPU plans): results equal scipy's on
seeded data at awkward sizes, every mode, both kinds, origins, casts;
no host copy at all; two different weights of one shape in a row (and the
remembered call, _dev_calls) each give their own result, so a mask that
were ignored or kept from the call before fails; what the path does not
take (complex or zero-size weights) still gives scipy's result."""
import sys

import numpy as np
import pytest
import scipy.ndimage as SN
import scipy.signal as SS

import tileconv.ndimage as TN
import tileconv.signal as TS
from tileconv import _gpu

from fake_device import CupyLike, FakeArray, FakeBackend, fake_cupy_module

MODES = ["reflect", "constant", "nearest", "mirror", "wrap"]


@pytest.fixture(params=["fake", "cupy"])
def dev(request, monkeypatch):
    """(array constructor, backend): FakeArray (FakeBackend) or CupyLike
    (CupyBackend's code over a stand-in cupy module); CPU plans."""
    TN._dev_calls.clear()
    if request.param == "fake":
        be = FakeBackend()
        monkeypatch.setattr(_gpu, "BACKENDS", [be] + list(_gpu.BACKENDS))
        return FakeArray, be

    class CupyCPUBackend(_gpu.CupyBackend):
        plan_backend = 0
        host_copies = []

        def to_host(self, a):
            self.host_copies.append(a.size)
            return super().to_host(a)
    be = CupyCPUBackend()
    be.host_copies = []
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy_module())
    monkeypatch.setattr(_gpu, "BACKENDS", [be] + [b for b in _gpu.BACKENDS if b.name != "cupy"])
    return CupyLike, be


def _np(a):
    return a._a if isinstance(a, FakeArray) else np.asarray(a)


def _close(got, ref, dtype):
    got = _np(got)
    tol = 1e-12 if np.dtype(dtype) == np.float64 else 3e-5
    assert got.shape == ref.shape and got.dtype == ref.dtype, (got.shape, got.dtype, ref.dtype)
    scale = max(1.0, float(np.abs(ref).max()))
    err = float(np.abs(got.astype(np.float64) - ref).max()) if got.size else 0.0
    assert err <= tol * scale, err


def _mexec_plans(shape=None):
    """The cached mask-at-execute plans (of input shape `shape`)."""
    return [k for k in TN._cache if k and k[0] in ("dev-mexec", "signal-dev-mexec")
            and (shape is None or k[5] == shape)]


CASES = [  # input shape, weights shape, origin
    ((37,), (5,), 1),
    ((19, 23), (3, 4), (0, -1)),
    ((13, 29), (7, 2), (-3, 0)),
    ((6, 9, 11), (3, 2, 5), (1, 0, -2)),
    ((2, 3, 17, 13), (1, 1, 4, 3), 0),  # leading unit weight axes: batch axes
    ((5, 1), (4, 3), 0),                # a weight larger than the input
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", ["correlate", "convolve"])
@pytest.mark.parametrize("ci", range(len(CASES)))
def test_ndimage_device_weights(dev, ci, fn, dtype):
    """Every mode, both kinds, origins: scipy's result, no host copy."""
    mk, be = dev
    shape, wshape, origin = CASES[ci]
    r = np.random.default_rng(100 + ci)
    x = (r.random(shape) * 4 - 2).astype(dtype)
    w = (r.random(wshape) - 0.3).astype(dtype)
    t, s = getattr(TN, fn), getattr(SN, fn)
    for mode in MODES:
        got = t(mk(x.copy()), mk(w.copy()), mode=mode, cval=0.75, origin=origin)
        assert type(got) is mk
        _close(got, s(x, w, mode=mode, cval=0.75, origin=origin), dtype)
    assert be.host_copies == [], be.host_copies
    assert len(_mexec_plans()) >= 1


@pytest.mark.parametrize("fn", ["correlate", "convolve"])
def test_two_weights_in_a_row(dev, fn):
    """Different weights of one shape, in turn and repeated (the plan is
    shared, the call remembered): each call its own result, from the
    weights of that call; weights changed in place are read again."""
    mk, be = dev
    r = np.random.default_rng(7)
    x = r.random((21, 17)).astype(np.float32)
    ws = [(r.random((5, 3)) - 0.5).astype(np.float32) for _ in range(3)]
    t, s = getattr(TN, fn), getattr(SN, fn)
    xd, wd = mk(x.copy()), [mk(w.copy()) for w in ws]
    refs = [s(x, w, mode="mirror", origin=(1, 0)) for w in ws]
    before = set(_mexec_plans((21, 17)))
    for k in (0, 1, 0, 2, 2, 1, 0):
        _close(t(xd, wd[k], mode="mirror", origin=(1, 0)), refs[k], np.float32)
    assert any(k[6][0] == "device" for k in TN._dev_calls if isinstance(k[6], tuple) and k[6])
    assert len(set(_mexec_plans((21, 17))) - before) == 1  # one plan for all these weights
    wd[0][2, 1] = 3.5  # in place, on the "device"
    w0 = ws[0].copy()
    w0[2, 1] = 3.5
    _close(t(xd, wd[0], mode="mirror", origin=(1, 0)), s(x, w0, mode="mirror", origin=(1, 0)),
           np.float32)
    out = mk(np.empty_like(x))
    for k in (1, 2):  # output= on the remembered path
        assert t(xd, wd[k], output=out, mode="mirror", origin=(1, 0)) is out
        _close(out, refs[k], np.float32)
    assert be.host_copies == [], be.host_copies


def test_casts_and_outputs(dev):
    """Weights cast on the device (float64 weights on float32 data, bool and
    int weights, int data computed in float64), output dtypes: scipy's."""
    mk, be = dev
    r = np.random.default_rng(3)
    x32 = (r.random((15, 14)) - 0.5).astype(np.float32)
    xi = r.integers(-40, 40, (15, 14)).astype(np.int16)
    w64 = r.random((3, 3)) - 0.5
    wb = r.random((3, 4)) > 0.5
    wi = r.integers(-3, 4, (2, 3)).astype(np.int32)
    _close(TN.correlate(mk(x32.copy()), mk(w64.copy())), SN.correlate(x32, w64), np.float32)
    _close(TN.convolve(mk(x32.copy()), mk(wb.copy()), mode="wrap"),
           SN.convolve(x32, wb, mode="wrap"), np.float32)
    got = TN.correlate(mk(xi.copy()), mk(wi.copy()), mode="nearest")
    assert np.array_equal(_np(got), SN.correlate(xi, wi, mode="nearest"))
    got = TN.correlate(mk(x32.copy()), mk(w64.copy()), output=np.float64)
    _close(got, SN.correlate(x32, w64, output=np.float64), np.float32)
    assert be.host_copies == [], be.host_copies


def test_unusual_weights_take_the_full_path(dev):
    """Complex weights and zero-size weight axes: the existing path (the
    weights copied to the host), scipy's results and errors."""
    mk, be = dev
    r = np.random.default_rng(5)
    x = r.random((9, 8))
    wc = r.random((3, 2)) + 1j * r.random((3, 2))
    got = TN.correlate(mk(x.copy()), mk(wc.copy()))
    ref = SN.correlate(x.astype(complex), wc)
    assert np.abs(_np(got) - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max())
    assert be.host_copies  # complex weights: copied
    wz = np.zeros((3, 2, 0))  # scipy: an extra zero-size axis gives zeros
    _close(TN.correlate(mk(x.copy()), mk(wz.copy())), SN.correlate(x, wz), np.float64)
    with pytest.raises(ValueError, match="Invalid origin"):
        TN.correlate(mk(x.copy()), mk(r.random((3, 3))), origin=(2, 0))
    with pytest.raises(RuntimeError):
        TN.correlate(mk(x.copy()), mk(r.random((3, 3, 3))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("fn", ["convolve", "correlate"])
def test_signal_device_weights(dev, fn, mode, dtype):
    """scipy.signal's direct convolve / correlate with both operands device
    arrays: the smaller is the mask, read on the device; then two masks in
    a row; no host copy."""
    mk, be = dev
    r = np.random.default_rng(11)
    a = (r.random((23, 19)) - 0.5).astype(dtype)
    bs = [(r.random((4, 5)) - 0.5).astype(dtype) for _ in range(2)]
    t, s = getattr(TS, fn), getattr(SS, fn)
    for b in bs + bs[:1]:
        _close(t(mk(a.copy()), mk(b.copy()), mode=mode), s(a, b, mode=mode), dtype)
    # the larger operand second: it is the data, the first the mask
    _close(t(mk(bs[0].copy()), mk(a.copy()), mode=mode), s(bs[0], a, mode=mode), dtype)
    assert be.host_copies == [], be.host_copies
    # method="fft": the FFT filter transforms each call's mask (two masks in
    # a row, the first again), no host copy either
    tol = 1e-10 if np.dtype(dtype) == np.float64 else 3e-5
    for b in bs + bs[:1]:
        ref = s(a, b, mode=mode, method="fft")
        got = t(mk(a.copy()), mk(b.copy()), mode=mode, method="fft")
        assert np.abs(_np(got) - ref).max() <= tol * max(1.0, np.abs(ref).max())
        if fn == "convolve":  # fftconvolve / oaconvolve: the same route
            for f in ("fftconvolve", "oaconvolve"):
                got = getattr(TS, f)(mk(a.copy()), mk(b.copy()), mode=mode)
                ref = getattr(SS, f)(a, b, mode=mode)
                assert np.abs(_np(got) - ref).max() <= tol * max(1.0, np.abs(ref).max())
    assert be.host_copies == [], be.host_copies


def test_plan_flag_and_errors():
    """The extension's side: a mask-at-execute FilterPlan needs the mask's
    address in execute_ptr and refuses execute; an ordinary one refuses a
    mask address."""
    from tileconv import _core
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    m = np.array([[1, 2], [3, 4]], np.float32)
    y = np.empty_like(x)
    p = _core.FilterPlan(x.shape, (0, 0), (0, 0), 2, np.empty((2, 2), np.float32), 1, 0, 4, 0.0,
                         (0, 0), 1, None, 0, None, 1)
    assert p.mask_at_execute
    with pytest.raises(ValueError, match="mask's address"):
        p.execute_ptr(x.ctypes.data, y.ctypes.data, 0)
    with pytest.raises(ValueError, match="execute_ptr"):
        p.execute(x, y)
    p.execute_ptr(x.ctypes.data, y.ctypes.data, 0, m.ctypes.data)
    np.testing.assert_allclose(y, SN.correlate(x, m, mode="wrap"), rtol=1e-6)
    m2 = -2 * m
    p.execute_ptr(x.ctypes.data, y.ctypes.data, 0, m2.ctypes.data)
    np.testing.assert_allclose(y, SN.correlate(x, m2, mode="wrap"), rtol=1e-6)
    q = _core.FilterPlan(x.shape, (0, 0), (0, 0), 2, m, 1, 0, 4, 0.0, (0, 0), 1, None)
    assert not q.mask_at_execute
    with pytest.raises(ValueError, match="holds its mask"):
        q.execute_ptr(x.ctypes.data, y.ctypes.data, 0, m.ctypes.data)
    with pytest.raises(RuntimeError, match="float16|TC_PLAN_MASK_AT_EXECUTE"):
        _core.FilterPlan(x.shape, (0, 0), (0, 0), 2, np.empty((2, 2), np.float16), 1, 0, 4, 0.0,
                         (0, 0), 1, None, 0, None, 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", ["correlate1d", "convolve1d"])
def test_1d_device_weights(dev, fn, dtype):
    """correlate1d / convolve1d with device weights: every axis of a 3-D
    input, odd and even lengths with origins (convolve1d's mirrored origin),
    every mode; two weights of one length in a row (and remembered); no
    host copy."""
    mk, be = dev
    r = np.random.default_rng(21)
    x = (r.random((7, 11, 13)) * 2 - 1).astype(dtype)
    t, s = getattr(TN, fn), getattr(SN, fn)
    xd = mk(x.copy())
    for n, origin in ((5, -2), (4, 1), (1, 0), (6, -3)):
        ws = [(r.random(n) - 0.4).astype(dtype) for _ in range(2)]
        for axis in (0, 1, -1):
            for mode in MODES:
                for w in (ws[0], ws[1], ws[0]):
                    got = t(xd, mk(w.copy()), axis=axis, mode=mode, cval=-0.5, origin=origin)
                    _close(got, s(x, w, axis=axis, mode=mode, cval=-0.5, origin=origin), dtype)
    wd = [mk((r.random(3) - 0.5).astype(dtype)) for _ in range(2)]
    for k in (0, 1, 1, 0, 1):  # the same device arrays again: the remembered call
        w = wd[k]._a
        _close(t(xd, wd[k], axis=1), s(x, w, axis=1), dtype)
    assert be.host_copies == [], be.host_copies
    with pytest.raises(ValueError, match="Invalid origin"):
        t(xd, wd[0], axis=0, origin=2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("boundary, fill", [("fill", 0), ("fill", 0.5), ("wrap", 0),
                                            ("symm", 0)])
@pytest.mark.parametrize("fn", ["convolve2d", "correlate2d"])
def test_signal_2d_device_weights(dev, fn, mode, boundary, fill, dtype):
    """convolve2d / correlate2d with both operands device arrays: the
    weights stay on the device (every boundary, two weights in a row, the
    first again), scipy's result, no host copy."""
    mk, be = dev
    r = np.random.default_rng(21)
    a = (r.random((17, 22)) - 0.5).astype(dtype)
    bs = [(r.random((3, 5)) - 0.5).astype(dtype) for _ in range(2)]
    t, s = getattr(TS, fn), getattr(SS, fn)
    for b in bs + bs[:1]:
        _close(t(mk(a.copy()), mk(b.copy()), mode=mode, boundary=boundary, fillvalue=fill),
               s(a, b, mode=mode, boundary=boundary, fillvalue=fill), dtype)
    assert be.host_copies == [], be.host_copies


@pytest.mark.parametrize("where", ["host", "device"])
def test_integer_data_exact_where_fft_would_be_chosen(where):
    """Integer data with integer weights are scipy's exact sums (truncated
    doubles), also where the planner's choice for float data is the FFT
    (a 15^3 mask on 40 x 50 x 60): integer inputs plan with TC_PLAN_DIRECT
    (an FFT's 59.9999 truncated to 59 made half the outputs 1 off)."""
    r = np.random.default_rng(7)
    x = r.integers(0, 40, (40, 50, 60)).astype(np.int16)
    w = r.integers(-3, 4, (15, 15, 15)).astype(np.int32)
    ref = SN.correlate(x, w, mode="nearest")
    if where == "device":
        be = FakeBackend()
        _gpu.BACKENDS.insert(0, be)
        try:
            got = TN.correlate(FakeArray(x.copy()), w, mode="nearest")._a
        finally:
            _gpu.BACKENDS.remove(be)
    else:
        got = TN.correlate(x, w, mode="nearest")
    assert got.dtype == ref.dtype and np.array_equal(got, ref)


def test_integer_outputs_as_scipy(dev):
    """Integer outputs on the device: the float result truncated and cast
    as NumPy's host cast (wrapping: a negative sum into uint8 gives scipy's
    256 - n, where a device cast would saturate to 0), and a float32 input
    into an integer output summed in float64 as scipy sums it (a float32
    sum can round 97.99999 up to 98 before the truncation). Host and device
    weights, nD and 1-D."""
    mk, be = dev
    r = np.random.default_rng(17)
    xu = r.integers(0, 256, (4, 5)).astype(np.uint8)
    for w in ([1, 2, 1], np.array([1.0, 2.0, 1.0])):
        got = TN.convolve1d(mk(xu.copy()), w, axis=1, mode="constant", cval=-1.0)
        assert np.array_equal(_np(got), SN.convolve1d(xu, w, axis=1, mode="constant", cval=-1.0))
    x8 = r.integers(0, 256, (1, 3, 4, 5)).astype(np.uint8)
    w3 = r.random((3, 3, 3, 3))
    got = TN.correlate(mk(x8.copy()), w3, mode="constant", cval=-1.0)
    assert np.array_equal(_np(got), SN.correlate(x8, w3, mode="constant", cval=-1.0))
    xf = (r.random((1, 3, 4, 5)) * 255).astype(np.float32)
    wu = r.integers(0, 5, (4, 4, 4, 4)).astype(np.uint8)
    ref = SN.convolve(xf, wu, output=np.uint8)
    assert np.array_equal(_np(TN.convolve(mk(xf.copy()), wu, output=np.uint8)), ref)
    xf2 = (r.random((40, 50)) * 255).astype(np.float32)
    wu2 = r.integers(0, 5, (4, 4)).astype(np.uint8)
    ref = SN.convolve(xf2, wu2, output=np.int8, mode="reflect")
    assert np.array_equal(_np(TN.convolve(mk(xf2.copy()), mk(wu2.copy()), output=np.int8)), ref)
    assert np.array_equal(_np(TN.convolve(xf2, wu2, output=np.int8)), ref)


@pytest.mark.parametrize("fn", ["correlate", "convolve"])
def test_axes(dev, fn):
    """correlate / convolve axes= (scipy >= 1.15): every axis listed is the
    plain call; fewer: the weights have one axis per listed axis (in the
    input's axis order), origins follow the listed order, the other axes
    are batch axes (each slice filtered alone); host and device arrays,
    host and device weights."""
    mk, be = dev
    r = np.random.default_rng(23)
    x3 = r.random((6, 4, 5))
    x4 = r.random((3, 4, 5, 6))
    for x, axes, ws, origin, mode in (
            (x3, (0, -1), (3, 2), (1, 0), "reflect"),
            (x3, (2, 0), (3, 4), (-1, 1), "wrap"),
            (x3, 1, (3,), 1, "nearest"),
            (x4, (0, -1), (3, 5), (0, -2), "constant"),
            (x4, (1, 2), (2, 3), 0, "mirror"),
            (x4, (0, 1, 3), (3, 2, 4), (1, 0, -1), "reflect")):
        w = r.random(ws) - 0.3
        ax = [axes] if isinstance(axes, int) else [a % x.ndim for a in axes]
        org = [origin] * len(ax) if isinstance(origin, int) else list(origin)
        full = [0] * x.ndim
        for o, a in zip(org, ax):
            full[a] = o
        filt = sorted(ax)
        wfull = np.expand_dims(w, tuple(a for a in range(x.ndim) if a not in filt))
        ref = getattr(SN, fn)(x, wfull, mode=mode, cval=0.5, origin=full)
        for wk in (w, mk(w.copy())):
            got = getattr(TN, fn)(mk(x.copy()), wk, mode=mode, cval=0.5, origin=origin, axes=axes)
            _close(got, ref, np.float64)
        _close(getattr(TN, fn)(x, w, mode=mode, cval=0.5, origin=origin, axes=axes), ref, np.float64)
    # every axis listed, in any order: the plain call (scipy's rule)
    w = r.random((3, 2, 4))
    _close(getattr(TN, fn)(x3, w, axes=(2, 0, 1)), getattr(SN, fn)(x3, w), np.float64)
    with pytest.raises(RuntimeError, match="must match len"):
        getattr(TN, fn)(x3, r.random((3, 3, 3)), axes=(0, 1))
    with pytest.raises(ValueError, match="unique"):
        getattr(TN, fn)(x3, r.random((3, 3)), axes=(1, 1))


@pytest.mark.parametrize("fn", ["correlate", "convolve"])
def test_more_than_3_filtered_axes(dev, fn):
    """4 and 5 filtered axes (CuPy's TestFilterFastAxesSciPy15 filters 3 x 4
    x 5 x 6 with 3 x 5 x 3 x 5 weights): the first filtered axis tap by
    tap, each tap a 3-D (or 4-D, recursively) filter; every mode, origins
    at both ends, float64 / float32 / uint8 inputs (integers exact), host
    and device arrays, against scipy."""
    mk, be = dev
    r = np.random.default_rng(29)
    for shape, ks in (((3, 4, 5, 6), (3, 5, 3, 5)), ((2, 3, 4, 5, 6), (2, 2, 3, 1, 3)),
                      ((4, 3, 4, 5), (4, 2, 3, 2))):
        w = r.random(ks) - 0.2
        org = tuple(-(k // 2) if i % 2 else (k - 1) // 2 for i, k in enumerate(ks))
        for dt in (np.float64, np.float32, np.uint8):
            x = (r.random(shape) * 10).astype(dt)
            for mode in MODES:
                for origin in (0, org):
                    ref = getattr(SN, fn)(x, w, mode=mode, cval=2.5, origin=origin)
                    got = getattr(TN, fn)(mk(x.copy()), w, mode=mode, cval=2.5, origin=origin)
                    if dt == np.uint8:
                        assert np.array_equal(_np(got), ref), (shape, mode, origin)
                    else:
                        _close(got, ref, dt)
        x = r.random(shape)
        _close(getattr(TN, fn)(x, w, mode="wrap"), getattr(SN, fn)(x, w, mode="wrap"), np.float64)
