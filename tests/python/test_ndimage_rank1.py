"""gaussian_filter and uniform_filter as ONE nD filter with the outer
product of the 1-D kernels (ndimage._rank1_call, planned with the
separable solver) against the 1-D passes (the route kept for the other
cases, forced here by switching _rank1_call off) and scipy: host arrays
and the CPU test double of a device array (fake_device, whose plans are
CPU plans on the device path), float32 and float64, every mode, seeded
random data at awkward sizes, per-axis sigma / size / radius / origin,
sigma-0 axes, axes=, batch axes, output= arrays and dtypes, in place.
gaussian_filter on host arrays keeps the 1-D passes (checked). Bound:
docs/python.md's, 2e-5 (float32) / 1e-12 (float64) of
max(1, max|ref|), between the two routes and against scipy (float64).
Derivative orders (gaussian_laplace's terms) take the single call too,
but for constant mode with a nonzero cval (the passes' semantics).
Also: the cases the single call does not take (modes differing by axis,
float16, integers, another output dtype) run the 1-D passes."""
import numpy as np
import pytest
import scipy.ndimage as SN

import tileconv.ndimage as TN
from tileconv import _gpu

from fake_device import FakeArray, FakeBackend

_MODE_CODE = {"constant": 0, "grid-constant": 0, "nearest": 1, "reflect": 2, "grid-mirror": 2,
              "mirror": 3, "wrap": 4, "grid-wrap": 4}
MODES = ["constant", "grid-constant", "nearest", "reflect", "grid-mirror", "mirror", "wrap",
         "grid-wrap"]

# (shape, kwargs): gaussian_filter cases
GAUSS = [
    ((37, 53), dict(sigma=2.0, cval=0.7)),
    ((5, 29, 31), dict(sigma=(1.0, 0.7, 2.3), cval=-1.25)),
    ((3, 1, 17, 19), dict(sigma=1.5, axes=(-2, -1))),
    ((7, 9, 11), dict(sigma=(1.2, 0.0, 1.7))),
    ((13, 6), dict(sigma=(3.0, 1.0), radius=(4, 2))),
    ((2, 41), dict(sigma=3.0, truncate=2.5)),
    ((19, 4, 23), dict(sigma=(0.8, 1.1), axes=(0, 2), cval=2.0)),
    # derivative orders (gaussian_laplace's and gaussian_gradient_magnitude's
    # terms): still rank 1, sign changes and zero taps in the 1-D kernels
    ((31, 27), dict(sigma=1.5, order=(0, 1))),
    ((9, 21, 17), dict(sigma=(1.1, 1.3, 0.9), order=(2, 0, 1), cval=0.3)),
    ((23, 25), dict(sigma=2.0, order=2)),
]
UNIFORM = [
    ((37, 53), dict(size=(3, 4), origin=(0, -1), cval=0.7)),
    ((5, 29, 31), dict(size=5)),
    ((11, 12, 13), dict(size=(4, 1, 6), origin=(1, 0, -2))),
    ((3, 2, 17, 19), dict(size=(3, 2), axes=(2, 3), cval=-0.5)),
]


def _tol(dt):
    return 2e-5 if np.dtype(dt) == np.float32 else 1e-12


def _data(shape, dt, seed):
    return (np.random.default_rng(seed).random(shape) * 4 - 2).astype(dt)


class _Spy:
    """Counts the calls the single nD filter took (not None)."""

    def __init__(self, monkeypatch):
        self.taken = 0
        real = TN._rank1_call

        def spy(*a, **k):
            r = real(*a, **k)
            self.taken += r is not None
            return r
        monkeypatch.setattr(TN, "_rank1_call", spy)


@pytest.fixture(params=["host", "device"])
def kind(request, monkeypatch):
    if request.param == "device":
        monkeypatch.setattr(_gpu, "BACKENDS", [FakeBackend()] + list(_gpu.BACKENDS))
    return request.param


def _wrap(kind, a):
    return FakeArray(a) if kind == "device" else a


def _host(kind, r):
    if kind == "device":
        assert isinstance(r, FakeArray)
        return r._a
    assert isinstance(r, np.ndarray)
    return r


def _single(kind, fn):
    """Whether fn takes the single call on arrays of kind (gaussian_filter
    keeps the 1-D passes on the host: ndimage.gaussian_filter says why)."""
    return kind == "device" or fn == "uniform_filter"


def _routes(monkeypatch, kind, fn, x, **kw):
    """(default route's result, 1-D passes result), both host arrays."""
    spy = _Spy(monkeypatch)
    single = _host(kind, getattr(TN, fn)(_wrap(kind, x.copy()), **kw))
    assert spy.taken == _single(kind, fn), f"{fn} on {kind} arrays: route"
    monkeypatch.setattr(TN, "_rank1_call", lambda *a, **k: None)
    passes = _host(kind, getattr(TN, fn)(_wrap(kind, x.copy()), **kw))
    return single, passes


def _scipy_kw(shape, kw, key, fill):
    """kw without axes= (scipy 1.10 has none): key per axis, fill on the
    axes not filtered (scipy skips sigma 0 and size 1)."""
    kw = dict(kw)
    axes = kw.pop("axes", None)
    if axes is None:
        return kw
    axes = [a % len(shape) for a in axes]
    v = kw[key] if np.ndim(kw[key]) else [kw[key]] * len(axes)
    full = [fill] * len(shape)
    for a, s in zip(axes, v):
        full[a] = s
    kw[key] = tuple(full)
    return kw


def _check(single, passes, ref, dt):
    assert single.dtype == dt and passes.dtype == dt
    bound = _tol(dt) * max(1.0, float(np.abs(ref).max()))
    assert np.abs(single.astype(np.float64) - passes).max() <= bound
    assert np.abs(single.astype(np.float64) - ref).max() <= bound
    assert np.abs(passes.astype(np.float64) - ref).max() <= bound


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", range(len(GAUSS)))
def test_gaussian_single_call_matches_passes_and_scipy(monkeypatch, kind, dt, mode, case):
    shape, kw = GAUSS[case]
    x = _data(shape, dt, case)
    if ("order" in kw and _MODE_CODE[mode] == 0 and kw.get("cval", 0.0) != 0
            and kind == "device"):
        # a derivative in constant mode with cval != 0: the passes (scipy
        # extends each intermediate with cval; one nD filter could not)
        spy = _Spy(monkeypatch)
        got = _host(kind, TN.gaussian_filter(_wrap(kind, x.copy()), mode=mode, **kw))
        assert spy.taken == 0
        ref = SN.gaussian_filter(x.astype(np.float64), mode=mode, **_scipy_kw(shape, kw, "sigma", 0.0))
        assert np.abs(got - ref).max() <= _tol(dt) * max(1.0, float(np.abs(ref).max()))
        return
    single, passes = _routes(monkeypatch, kind, "gaussian_filter", x, mode=mode, **kw)
    _check(single, passes, SN.gaussian_filter(x.astype(np.float64), mode=mode,
                                                   **_scipy_kw(shape, kw, "sigma", 0.0)), dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", range(len(UNIFORM)))
def test_uniform_single_call_matches_passes_and_scipy(monkeypatch, kind, dt, mode, case):
    shape, kw = UNIFORM[case]
    x = _data(shape, dt, 10 + case)
    single, passes = _routes(monkeypatch, kind, "uniform_filter", x, mode=mode, **kw)
    _check(single, passes, SN.uniform_filter(x.astype(np.float64), mode=mode,
                                                  **_scipy_kw(shape, kw, "size", 1)), dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("fn, arg", [("gaussian_filter", 1.7), ("uniform_filter", (3, 6))])
def test_single_call_output_arguments(monkeypatch, kind, dt, fn, arg):
    x = _data((29, 31), dt, 3)
    ref = getattr(SN, fn)(x.astype(np.float64), arg, mode="mirror")
    bound = _tol(dt) * max(1.0, float(np.abs(ref).max()))
    f = getattr(TN, fn)
    spy = _Spy(monkeypatch)
    # an output array of the input's dtype, filled in place
    o = np.full(x.shape, np.nan, dt)
    r = f(_wrap(kind, x), arg, mode="mirror", output=_wrap(kind, o))
    assert (r is o) if kind == "host" else (r._a is o)
    assert np.abs(o - ref).max() <= bound
    # the input as the output (scipy filters in place)
    y = x.copy()
    yw = _wrap(kind, y)
    f(yw, arg, mode="mirror", output=yw)
    assert np.abs(y - ref).max() <= bound
    # the dtype as the output, by type and by name
    for od in (dt, np.dtype(dt).name):
        r = _host(kind, f(_wrap(kind, x), arg, mode="mirror", output=od))
        assert r.dtype == dt and np.abs(r - ref).max() <= bound
    assert spy.taken == 4 * _single(kind, fn)


@pytest.mark.parametrize("call", [
    lambda x: TN.gaussian_filter(x, 1.5, mode=("reflect", "constant")),
    lambda x: TN.gaussian_filter(x, (1.5, 0.0)),
    lambda x: TN.gaussian_filter(x, 1.5, output=np.float64),
    lambda x: TN.uniform_filter(x, 3, mode=("wrap", "nearest")),
    lambda x: TN.uniform_filter(x, 3, output=np.float64),
])
def test_other_cases_keep_the_passes(monkeypatch, kind, call):
    spy = _Spy(monkeypatch)
    call(_wrap(kind, _data((17, 19), np.float32, 5)))
    for dt in (np.float16, np.int16):
        call(_wrap(kind, (_data((17, 19), np.float32, 5) * 20).astype(dt)))
    assert spy.taken == 0


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", ["sobel", "prewitt"])
@pytest.mark.parametrize("shape, axis", [((37, 53), 0), ((37, 53), -1), ((9, 21, 17), 1)])
@pytest.mark.parametrize("cval", [0.0, 0.7])
def test_edge_single_call(monkeypatch, kind, dt, mode, fn, shape, axis, cval):
    """sobel / prewitt on device arrays: one nD filter with the outer
    product of [-1, 0, 1] and the smoothing masks, except in constant mode
    with a nonzero cval (the passes); against the passes and scipy."""
    x = _data(shape, dt, 20 + len(shape))
    ref = getattr(SN, fn)(x.astype(np.float64), axis, mode=mode, cval=cval)
    spy = _Spy(monkeypatch)
    got = _host(kind, getattr(TN, fn)(_wrap(kind, x.copy()), axis, mode=mode, cval=cval))
    single = kind == "device" and (_MODE_CODE[mode] != 0 or cval == 0)
    assert spy.taken == single
    monkeypatch.setattr(TN, "_rank1_call", lambda *a, **k: None)
    passes = _host(kind, getattr(TN, fn)(_wrap(kind, x.copy()), axis, mode=mode, cval=cval))
    _check(got, passes, ref, dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", [(37, 53), (9, 21, 17)])
@pytest.mark.parametrize("cval", [0.0, 0.7])
def test_laplace_single_call(monkeypatch, kind, dt, mode, shape, cval):
    """laplace on 2D / 3D device arrays: one correlation with the summed
    stencil (ndimage.correlate, counted here), against the passes (the
    device route switched off by axes=, which takes generic_laplace) and
    scipy, every mode, cval 0 and 0.7, output None and an array."""
    x = _data(shape, dt, 30 + len(shape))
    ref = SN.laplace(x.astype(np.float64), mode=mode, cval=cval)
    calls = []
    real = TN.correlate
    monkeypatch.setattr(TN, "correlate", lambda *a, **k: calls.append(1) or real(*a, **k))
    got = _host(kind, TN.laplace(_wrap(kind, x.copy()), mode=mode, cval=cval))
    assert len(calls) == (kind == "device")
    o = np.full(x.shape, np.nan, dt)
    TN.laplace(_wrap(kind, x.copy()), _wrap(kind, o), mode=mode, cval=cval)
    passes = _host(kind, TN.laplace(_wrap(kind, x.copy()), mode=mode, cval=cval,
                                    axes=tuple(range(len(shape)))))
    _check(got, passes, ref, dt)
    _check(o, passes, ref, dt)
