"""Every tileconv.ndimage and tileconv.signal function on "device arrays",
without a GPU: fake_device.FakeArray (a NumPy array behind
__cuda_array_interface__ whose implicit conversion to NumPy raises, as
CuPy's does) is put first in tileconv._gpu.BACKENDS, so each call takes
the device path (array-kind dispatch, framework allocations, the mask
copied to the host, execute_ptr on raw addresses; CPU plans). Checked:
the result is a FakeArray equal to scipy's on the host copy; nothing but
masks went to the host (the big arrays never do); output= device arrays
are filled in place; a host output= with a device input is a TypeError;
float16 gives float16 within float16's bound."""
import numpy as np
import pytest
import scipy.ndimage as SN
import scipy.signal as SS

import tileconv.ndimage as TN
import tileconv.signal as TS
from tileconv import _gpu

from fake_device import FakeArray, FakeBackend


@pytest.fixture
def be(monkeypatch):
    b = FakeBackend()
    monkeypatch.setattr(_gpu, "BACKENDS", [b] + list(_gpu.BACKENDS))
    return b


def _d2(mod):
    def derivative2(input, axis, output, mode, cval):
        return mod.correlate1d(input, [1, -2, 1], axis, output, mode, cval)
    return derivative2


# name -> (call(mod, x, w2, w1), needs) ; mod is scipy's or tileconv's module
ND = {
    "correlate": lambda m, x, w2, w1: m.correlate(x, w2, mode="constant", cval=0.5,
                                                  origin=(0, -1)),
    "convolve": lambda m, x, w2, w1: m.convolve(x, w2, mode="mirror"),
    "correlate1d": lambda m, x, w2, w1: m.correlate1d(x, w1, axis=0, mode="wrap"),
    "convolve1d": lambda m, x, w2, w1: m.convolve1d(x, w1, axis=-1, mode="nearest", origin=1),
    "uniform_filter": lambda m, x, w2, w1: m.uniform_filter(x, size=(3, 4), mode="reflect"),
    "uniform_filter1d": lambda m, x, w2, w1: m.uniform_filter1d(x, 5, axis=0),
    "gaussian_filter": lambda m, x, w2, w1: m.gaussian_filter(x, 1.5),
    "gaussian_filter1d": lambda m, x, w2, w1: m.gaussian_filter1d(x, 2.0, axis=1, order=1),
    "sobel": lambda m, x, w2, w1: m.sobel(x, axis=0),
    "prewitt": lambda m, x, w2, w1: m.prewitt(x, axis=1, mode="constant"),
    "laplace": lambda m, x, w2, w1: m.laplace(x),
    "generic_laplace": lambda m, x, w2, w1: m.generic_laplace(x, _d2(m)),
    "gaussian_laplace": lambda m, x, w2, w1: m.gaussian_laplace(x, 1.2),
    "generic_gradient_magnitude": lambda m, x, w2, w1: m.generic_gradient_magnitude(x,
                                                                                    m.sobel),
    "gaussian_gradient_magnitude": lambda m, x, w2, w1: m.gaussian_gradient_magnitude(x, 1.3),
}
SG = {
    "convolve": lambda m, x, w2: m.convolve(x, w2),
    "correlate_same": lambda m, x, w2: m.correlate(x, w2, mode="same"),
    "convolve_valid_fft": lambda m, x, w2: m.convolve(x, w2, mode="valid", method="fft"),
    "fftconvolve": lambda m, x, w2: m.fftconvolve(x, w2, mode="same"),
    "oaconvolve": lambda m, x, w2: m.oaconvolve(x, w2),
    "convolve2d_symm": lambda m, x, w2: m.convolve2d(x, w2, mode="same", boundary="symm"),
    "correlate2d_wrap": lambda m, x, w2: m.correlate2d(x, w2, boundary="wrap"),
    "convolve2d_fill": lambda m, x, w2: m.convolve2d(x, w2, boundary="fill", fillvalue=1.5),
}


def _data(dtype, shape=(19, 23), seed=0):
    r = np.random.default_rng(seed)
    x = r.random(shape) * 4 - 2
    if np.dtype(dtype).kind == "c":
        x = x + 1j * (r.random(shape) - 0.5)
    if np.dtype(dtype).kind in "iu":
        x = r.integers(-50, 50, shape)
    w2 = r.random((3, 4)) - 0.3
    w1 = r.random(4) - 0.3
    return x.astype(dtype), w2, w1


def _check_copies(be, w2):
    assert all(n <= w2.size for n in be.host_copies), be.host_copies


def _close(got, ref, dtype):
    got = got._a
    tol = {"f": 3e-5, "c": 3e-5, "e": 3e-3}.get(np.dtype(dtype).kind, 0)
    if np.dtype(dtype) == np.float64 or np.dtype(dtype) == np.complex128:
        tol = 1e-12
    scale = max(1.0, float(np.abs(ref).max()))
    assert got.dtype == ref.dtype if np.dtype(dtype) != np.float16 else got.dtype == np.float16
    err = np.abs(got.astype(np.complex128) - ref).max()
    assert err <= tol * scale + (1 if np.dtype(dtype).kind in "iu" else 0), err


def test_fake_refuses_implicit_conversion():
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(FakeArray(np.zeros(3)))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # int16 squares overflow, as scipy's
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
@pytest.mark.parametrize("name", sorted(ND))
@pytest.mark.parametrize("w_on_device", [False, True])
def test_ndimage_device(be, name, dtype, w_on_device):
    x, w2, w1 = _data(dtype)
    ref = ND[name](SN, x, w2, w1)
    dw2, dw1 = (FakeArray(w2), FakeArray(w1)) if w_on_device else (w2, w1)
    got = ND[name](TN, FakeArray(x.copy()), dw2, dw1)
    assert isinstance(got, FakeArray)
    _close(got, ref, dtype)
    _check_copies(be, w2)


@pytest.mark.parametrize("name", ["correlate", "convolve1d", "gaussian_filter", "sobel",
                                  "uniform_filter", "gaussian_gradient_magnitude"])
def test_ndimage_device_complex(be, name):
    x, w2, w1 = _data(np.complex64)
    ref = ND[name](SN, x, w2, w1)
    got = ND[name](TN, FakeArray(x.copy()), w2, w1)
    _close(got, ref, np.complex64)
    _check_copies(be, w2)


@pytest.mark.parametrize("name", sorted(ND))
def test_ndimage_device_float16(be, name):
    """float16 in, float16 out (float32 accumulation), as cupyx; scipy
    refuses float16, so the reference is its float64 result on the same
    values."""
    x, w2, w1 = _data(np.float16)
    ref = ND[name](SN, x.astype(np.float64), w2, w1)
    got = ND[name](TN, FakeArray(x.copy()), w2, w1)
    assert got.dtype == np.float16
    scale = max(1.0, float(np.abs(ref).max()))
    assert np.abs(got._a.astype(np.float64) - ref).max() <= 4e-3 * scale
    _check_copies(be, w2)


@pytest.mark.parametrize("exact", [False, True])
def test_ndimage_device_float16_weights_as_host(be, exact):
    """float16 device input: weights that are not float16 values are not
    rounded to float16 (float32 weights and sums, one rounding), as on the
    host and in cupyx; float16 weights take the float16 plan. Device and
    host give the same bits."""
    x, w2, w1 = _data(np.float16, seed=5)
    if exact:
        w2 = w2.astype(np.float16).astype(np.float64)
    assert _f16_exact_like(w2) == exact
    for name in ("correlate", "convolve"):
        got = ND[name](TN, FakeArray(x.copy()), w2, w1)
        host = ND[name](TN, x.copy(), w2, w1)
        assert got.dtype == np.float16 and host.dtype == np.float16
        np.testing.assert_array_equal(got._a, host)
        # one rounding of the float64 result on the same float16 values
        ref = ND[name](SN, x.astype(np.float64), w2, w1)
        assert np.abs(got._a.astype(np.float64) - ref).max() <= \
            2.0 ** -11 * np.abs(ref).max() + 1e-6 * np.abs(ref).max()


def _f16_exact_like(w):
    return bool(np.array_equal(w.astype(np.float16).astype(w.dtype), w))


def test_ndimage_3d_and_batch_axes(be):
    r = np.random.default_rng(3)
    x = r.random((3, 5, 6, 7)).astype(np.float32)
    w = r.random((1, 3, 2, 3))
    got = TN.correlate(FakeArray(x.copy()), w, mode="nearest")
    np.testing.assert_allclose(got._a, SN.correlate(x.astype(np.float64), w, mode="nearest"),
                               atol=3e-5 * 4, rtol=0)
    got = TN.gaussian_filter(FakeArray(x.copy()), (0.7, 1, 1.5, 2), mode="wrap")
    np.testing.assert_allclose(got._a, SN.gaussian_filter(x.astype(np.float64),
                                                          (0.7, 1, 1.5, 2), mode="wrap"),
                               atol=3e-5, rtol=0)
    _check_copies(be, w)


def test_ndimage_noncontiguous_input(be):
    x, w2, w1 = _data(np.float32, (30, 40))
    v = x[::2, 1::3]
    got = TN.correlate(FakeArray(x)[::2, 1::3], w2)
    np.testing.assert_allclose(got._a, SN.correlate(v.astype(np.float64), w2), atol=1e-4)
    got = TN.gaussian_filter1d(FakeArray(x)[::2, 1::3], 1.5, axis=0)
    np.testing.assert_allclose(got._a, SN.gaussian_filter1d(v.astype(np.float64), 1.5, axis=0),
                               atol=1e-5)


@pytest.mark.parametrize("name", ["correlate", "gaussian_filter", "uniform_filter", "sobel",
                                  "laplace", "gaussian_gradient_magnitude", "correlate1d"])
def test_ndimage_device_output_in_place(be, name):
    x, w2, w1 = _data(np.float32)
    ref = ND[name](SN, x, w2, w1)
    out = FakeArray(np.full(x.shape, np.nan, np.float32))
    call = {"correlate": lambda a, o: TN.correlate(a, w2, o, mode="constant", cval=0.5,
                                                   origin=(0, -1)),
            "gaussian_filter": lambda a, o: TN.gaussian_filter(a, 1.5, output=o),
            "uniform_filter": lambda a, o: TN.uniform_filter(a, (3, 4), o),
            "sobel": lambda a, o: TN.sobel(a, 0, o),
            "laplace": lambda a, o: TN.laplace(a, o),
            "gaussian_gradient_magnitude": lambda a, o: TN.gaussian_gradient_magnitude(a, 1.3,
                                                                                       o),
            "correlate1d": lambda a, o: TN.correlate1d(a, w1, 0, o, mode="wrap")}[name]
    got = call(FakeArray(x.copy()), out)
    assert got is out
    _close(out, ref, np.float32)
    if name in ("laplace", "gaussian_gradient_magnitude"):
        return  # their later passes read the input again (as scipy's)
    # output aliasing the input (scipy computes through a temporary)
    a = FakeArray(x.copy())
    call(a, a)
    _close(a, ref, np.float32)


def test_ndimage_device_output_dtype_and_host_output(be):
    x, w2, w1 = _data(np.float32)
    got = TN.gaussian_filter(FakeArray(x), 1.0, output=np.float64)
    assert isinstance(got, FakeArray) and got.dtype == np.float64
    got = TN.correlate(FakeArray(x), w2, output=np.int32)
    np.testing.assert_array_equal(got._a, SN.correlate(x, w2, output=np.int32))
    for fn in (lambda o: TN.correlate(FakeArray(x), w2, o),
               lambda o: TN.gaussian_filter(FakeArray(x), 1.0, output=o),
               lambda o: TN.uniform_filter1d(FakeArray(x), 3, 0, o),
               lambda o: TN.gaussian_laplace(FakeArray(x), 1.0, o)):
        with pytest.raises(TypeError, match="host|device"):
            fn(np.empty(x.shape, np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.complex64])
@pytest.mark.parametrize("name", sorted(SG))
@pytest.mark.parametrize("w_on_device", [False, True])
def test_signal_device(be, name, dtype, w_on_device):
    x, w2, _ = _data(dtype)
    if name.endswith("_fft") and np.dtype(dtype).kind in "iu":
        pytest.skip("scipy's fft path gives floats for integers")
    ref = SG[name](SS, x, w2)
    got = SG[name](TS, FakeArray(x.copy()), FakeArray(w2) if w_on_device else w2)
    assert isinstance(got, FakeArray)
    assert got.shape == ref.shape
    assert got.dtype == ref.dtype
    scale = max(1.0, float(np.abs(ref).max()))
    tol = 1e-12 if np.dtype(dtype) == np.float64 else 3e-5
    if np.dtype(dtype).kind in "iu":
        tol = 0
    assert np.abs(got._a - ref).max() <= tol * scale + (1 if tol == 0 else 0)
    _check_copies(be, w2)


def test_signal_device_axes_and_broadcast(be):
    r = np.random.default_rng(5)
    x = r.random((3, 40, 5))
    w = r.random((1, 7, 5))
    ref = SS.fftconvolve(x, w, axes=1)
    got = TS.fftconvolve(FakeArray(x.copy()), w, axes=1)
    np.testing.assert_allclose(got._a, ref, atol=1e-10)
    ref = SS.oaconvolve(x, w, mode="valid", axes=(1,))
    got = TS.oaconvolve(FakeArray(x.copy()), FakeArray(w), mode="valid", axes=(1,))
    np.testing.assert_allclose(got._a, ref, atol=1e-10)


def test_signal_device_float16(be):
    x, w2, _ = _data(np.float16)
    for name in sorted(SG):
        ref = SG[name](SS, x.astype(np.float64), w2.astype(np.float16).astype(np.float64))
        got = SG[name](TS, FakeArray(x.copy()), w2.astype(np.float16))
        # fftconvolve / oaconvolve: float32, as scipy.fft gives (and scipy's)
        want = np.float32 if name in ("fftconvolve", "oaconvolve") else np.float16
        assert got.dtype == want, name
        scale = max(1.0, float(np.abs(ref).max()))
        assert np.abs(got._a.astype(np.float64) - ref).max() <= 4e-3 * scale, name


@pytest.mark.parametrize("mode", ["reflect", "constant", "nearest", "wrap", "mirror"])
@pytest.mark.parametrize("kind", ["correlate", "convolve"])
@pytest.mark.parametrize("dtype", [np.float64, np.uint8])
def test_unit_axes_beyond_three(be, mode, kind, dtype):
    """More than 3 filtered axes where the input has size 1 along some
    (cupyx's tests filter 1 x 3 x 4 x 5 with 4-D weights): the weights
    collapse along those axes; host and device against scipy."""
    r = np.random.default_rng(11)
    for shape, k, origin in (((1, 3, 4, 5), 3, 0), ((3, 1, 4, 5), 4, (1, -1, 0, 1)),
                             ((1, 3, 1, 5, 2), 3, -1)):
        x = (r.random(shape) * 10).astype(dtype)
        w = r.random((k,) * len(shape)) * 10
        ref = getattr(SN, kind)(x, w, mode=mode, cval=-1.0, origin=origin)
        tol = 1 if dtype == np.uint8 else 1e-9 * np.abs(ref).max()
        for a in (x, FakeArray(x.copy())):
            got = getattr(TN, kind)(a, w, mode=mode, cval=-1.0, origin=origin)
            got = got._a if isinstance(got, FakeArray) else got
            assert got.dtype == ref.dtype
            assert np.abs(got.astype(np.float64) - ref).max() <= tol


@pytest.fixture
def torch_cpu(monkeypatch):
    torch = pytest.importorskip("torch", reason="torch not installed")
    from fake_device import TorchCPUBackend
    monkeypatch.setattr(_gpu, "BACKENDS", [TorchCPUBackend()] + list(_gpu.BACKENDS))
    return torch


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int16])
@pytest.mark.parametrize("name", sorted(ND))
def test_ndimage_torch_backend(torch_cpu, name, dtype):
    """TorchBackend's code path (torch CPU tensors standing in for CUDA
    ones): torch in, torch out, against scipy."""
    x, w2, w1 = _data(dtype)
    ref = ND[name](SN, x.astype(np.float64) if dtype == np.float16 else x, w2, w1)
    got = ND[name](TN, torch_cpu.from_numpy(x.copy()), torch_cpu.from_numpy(w2), w1)
    assert isinstance(got, torch_cpu.Tensor)
    g = got.numpy()
    assert g.dtype == (np.float16 if dtype == np.float16 else ref.dtype)
    tol = {np.float32: 3e-5, np.float64: 1e-12, np.float16: 4e-3, np.int16: 0}[dtype]
    scale = max(1.0, float(np.abs(ref).max()))
    assert np.abs(g.astype(np.float64) - ref).max() <= tol * scale + (1 if tol == 0 else 0)


@pytest.mark.parametrize("name", ["correlate", "gaussian_filter", "sobel", "convolve1d"])
def test_ndimage_torch_backend_complex_and_output(torch_cpu, name):
    x, w2, w1 = _data(np.complex64)
    got = ND[name](TN, torch_cpu.from_numpy(x.copy()), w2, w1)
    ref = ND[name](SN, x, w2, w1)
    assert np.abs(got.numpy() - ref).max() <= 3e-5 * np.abs(ref).max()
    xr, w2, w1 = _data(np.float32)
    out = torch_cpu.empty(xr.shape, dtype=torch_cpu.float64)
    assert TN.gaussian_filter(torch_cpu.from_numpy(xr), 1.5, output=out) is out
    np.testing.assert_allclose(out.numpy(), SN.gaussian_filter(xr, 1.5, output=np.float64),
                               atol=1e-5)
    got = TN.gaussian_laplace(torch_cpu.from_numpy(xr), 1.2, output=torch_cpu.float64)
    assert got.dtype == torch_cpu.float64
    np.testing.assert_allclose(got.numpy(), SN.gaussian_laplace(xr, 1.2, output=np.float64),
                               atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.complex64])
@pytest.mark.parametrize("name", sorted(SG))
def test_signal_torch_backend(torch_cpu, name, dtype):
    x, w2, _ = _data(dtype)
    if name.endswith("_fft") and np.dtype(dtype).kind in "iu":
        pytest.skip("scipy's fft path gives floats for integers")
    ref = SG[name](SS, x, w2)
    got = SG[name](TS, torch_cpu.from_numpy(x.copy()), torch_cpu.from_numpy(w2))
    assert isinstance(got, torch_cpu.Tensor)
    g = got.numpy()
    assert g.shape == ref.shape and g.dtype == ref.dtype
    scale = max(1.0, float(np.abs(ref).max()))
    tol = 1e-12 if np.dtype(dtype) == np.float64 else 3e-5
    if np.dtype(dtype).kind in "iu":
        tol = 0
    assert np.abs(g - ref).max() <= tol * scale + (1 if tol == 0 else 0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("fn", ["convolve", "correlate", "fftconvolve"])
def test_signal_device_larger_in2_stays_on_device(be, fn, mode, dtype):
    """in2 larger than in1 on the device: it is the data (flipped for a
    correlation), in1 the mask; only in1 goes to the host."""
    r = np.random.default_rng(8)
    a = r.random((9, 7)) - 0.5
    b = r.random((30, 41)) - 0.5
    if np.dtype(dtype).kind == "c":
        a = a + 1j * (r.random(a.shape) - 0.5)
        b = b - 1j * (r.random(b.shape) - 0.5)
    a, b = a.astype(dtype), b.astype(dtype)
    ref = getattr(SS, fn)(a, b, mode=mode)
    got = getattr(TS, fn)(FakeArray(a.copy()), FakeArray(b.copy()), mode=mode)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    tol = 1e-10 if np.dtype(dtype) in (np.float64, np.complex128) else 3e-5
    assert np.abs(got._a - ref).max() <= tol * max(1.0, np.abs(ref).max())
    assert all(n <= a.size for n in be.host_copies), be.host_copies


@pytest.mark.parametrize("d1,d2", [(np.int16, np.int16), (np.bool_, np.bool_),
                                   (np.float32, np.int8), (np.uint8, np.complex64),
                                   (np.float16, np.complex64), (np.float16, np.float16)])
@pytest.mark.parametrize("fn", ["fftconvolve", "oaconvolve"])
def test_fft_result_dtypes_as_scipy(be, fn, d1, d2):
    """scipy.fft's types: float16 computed as float32, integers and bool as
    float64; host and device."""
    r = np.random.default_rng(2)
    a, b = (r.random(12) * 5).astype(d1), (r.random(4) * 5).astype(d2)
    ref = getattr(SS, fn)(a, b)
    for x in (a, FakeArray(a.copy())):
        got = getattr(TS, fn)(x, b)
        got = got._a if isinstance(got, FakeArray) else got
        assert got.dtype == ref.dtype
        assert np.abs(got - ref).max() <= 1e-5 * np.abs(ref).max()


_FAST_SHAPES = [((1,), (7,), None), ((3,), (1,), None), ((5, 4), (3, 1), None), ((), (), None),
                ((5, 1, 1), (1, 4, 1), None), ((5, 1), (1, 4), None), ((1, 4), (2, 4), (0,)),
                ((2, 5, 5), (2, 1, 3), (1, 2)), ((2, 5, 5), (2, 1, 1), (1, 2)),
                ((1, 5, 5), (2, 1, 3), (1, 2))]


@pytest.mark.parametrize("s1,s2,axes", _FAST_SHAPES)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.complex128])
def test_fftconvolve_broadcast_shapes(be, s1, s2, axes, mode, dtype):
    """cupyx's fftconvolve shape cases (size-1 axes broadcast, not
    transformed; 'same' crops every axis to in1's shape, as scipy), host
    and device, shape, dtype and values as scipy's (or the same error)."""
    r = np.random.default_rng(4)
    a, b = (r.random(s1) * 10).astype(dtype), (r.random(s2) * 10).astype(dtype)
    try:
        ref = SS.fftconvolve(a, b, mode=mode, axes=axes)
    except ValueError:
        ref = None
    for x in (a, FakeArray(a.copy())):
        if ref is None:
            with pytest.raises(ValueError):
                TS.fftconvolve(x, b, mode=mode, axes=axes)
            continue
        got = TS.fftconvolve(x, b, mode=mode, axes=axes)
        got = np.asarray(got._a if isinstance(got, FakeArray) else got)
        assert got.shape == ref.shape and got.dtype == ref.dtype
        assert np.abs(got - ref).max() <= 1e-3 * max(1.0, np.abs(ref).max())


@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm"])
def test_correlate2d_complex_larger_in2_as_scipy(be, boundary):
    """scipy's correlate2d in 'valid' mode with the larger in2 swaps the
    inputs and conjugates in1: the conjugate of the correlation. Host and
    device follow it."""
    r = np.random.default_rng(6)
    a = r.random((5, 10)) + 1j * r.random((5, 10))
    b = r.random((10, 11)) - 1j * r.random((10, 11))
    ref = SS.correlate2d(a, b, "valid", boundary)
    for x in (a, FakeArray(a.copy())):
        got = TS.correlate2d(x, b, "valid", boundary)
        got = got._a if isinstance(got, FakeArray) else got
        assert got.shape == ref.shape and np.abs(got - ref).max() <= 1e-10 * np.abs(ref).max()


@pytest.fixture
def cupy_like(monkeypatch):
    """CupyBackend's own code on CupyLike arrays (a stand-in cupy module over
    NumPy, CPU plans)."""
    import sys
    from fake_device import fake_cupy_module

    class CupyCPUBackend(_gpu.CupyBackend):
        plan_backend = 0
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy_module())
    monkeypatch.setattr(_gpu, "BACKENDS", [CupyCPUBackend()] + [
        b for b in _gpu.BACKENDS if b.name != "cupy"])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int16, np.complex64])
@pytest.mark.parametrize("name", sorted(ND) + ["signal." + n for n in sorted(SG)])
def test_cupy_backend(cupy_like, name, dtype):
    from fake_device import CupyLike
    x, w2, w1 = _data(dtype)
    if name.startswith("signal."):
        n = name[7:]
        if dtype == np.float16 or (n.endswith("_fft") and np.dtype(dtype).kind == "i"):
            return
        ref = SG[n](SS, x, w2)
        got = SG[n](TS, CupyLike(x.copy()), CupyLike(w2))
    else:
        ref = ND[name](SN, x.astype(np.float64) if dtype == np.float16 else x, w2, w1)
        got = ND[name](TN, CupyLike(x.copy()), CupyLike(w2), w1)
    assert type(got) is CupyLike
    g = got._a
    tol = {np.float32: 3e-5, np.float16: 4e-3, np.int16: 0, np.complex64: 3e-5}[dtype]
    scale = max(1.0, float(np.abs(ref).max()))
    assert g.shape == ref.shape
    assert np.abs(g.astype(np.complex128) - ref).max() <= tol * scale + (1 if tol == 0 else 0)


def test_cuda_device_count():
    """tileconv.cuda_device_count(): an int >= 0; 0 from a library built
    without CUDA (the package's default, TILECONV_CUDA=OFF), whatever the
    machine has; the same as the C library's tc_cuda_device_count."""
    import ctypes
    import os

    import tileconv
    n = tileconv.cuda_device_count()
    assert isinstance(n, int) and n >= 0
    lib = [f for f in os.listdir(os.path.dirname(tileconv.__file__)) if f.startswith("libtileconv.so")]
    if lib:
        c = ctypes.CDLL(os.path.join(os.path.dirname(tileconv.__file__), lib[0]))
        assert c.tc_cuda_device_count() == n
