"""tileconv.ndimage's derivative family against scipy.ndimage (the oracle):
gaussian_laplace, gaussian_gradient_magnitude, generic_laplace,
generic_gradient_magnitude and laplace, on seeded random data at awkward
shapes and layouts, every mode, real / complex / integer dtypes, the
output argument, axes=, and bad input."""
import numpy as np
import pytest
import scipy.ndimage as S

import tileconv.ndimage as T

SEED = 20261204
MODES = ["reflect", "constant", "nearest", "mirror", "wrap", "grid-wrap", "grid-mirror",
         "grid-constant"]
SHAPES = [(37,), (23, 19), (7, 9, 11), (1, 6), (3, 1, 5), (2, 3, 4, 5)]
GAUSS = ["gaussian_laplace", "gaussian_gradient_magnitude"]


def rnd(shape, dtype, salt=0):
    r = np.random.default_rng(SEED + salt)
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        return r.integers(-50 if dt.kind == "i" else 0, 50, shape).astype(dt)
    a = r.uniform(-1.0, 1.0, shape)
    if dt.kind == "c":
        a = a + 1j * r.uniform(-1.0, 1.0, shape)
    return a.astype(dt)


def close(a, b, fn=None):
    """float32 / complex64 held to 2e-5 of the largest value (tileconv
    computes them in float32, scipy in float64), float64 to 1e-11."""
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    if a.dtype.kind == "c" and fn == "gaussian_gradient_magnitude":
        # sqrt of a complex sum of squares: compare the sums (no branch cut,
        # no sqrt amplification near 0)
        a, b = a * a, b * b
    tol = 2e-5 if a.dtype in (np.float32, np.complex64) else 1e-11
    scale = max(np.abs(b).max(), 1.0) if b.size else 1.0
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * scale)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fn", GAUSS)
def test_gaussian_vs_scipy(fn, shape, dtype, mode):
    x = rnd(shape, dtype)
    kw = dict(mode=mode, cval=0.3) if np.dtype(dtype).kind != "c" else dict(mode=mode)
    close(getattr(T, fn)(x, 1.3, **kw), getattr(S, fn)(x, 1.3, **kw), fn)
    sig = [0.6 + 0.4 * i for i in range(x.ndim)]
    close(getattr(T, fn)(x, sig, truncate=3.0, **kw), getattr(S, fn)(x, sig, truncate=3.0, **kw),
          fn)


@pytest.mark.parametrize("fn", GAUSS + ["laplace"])
def test_mode_per_axis_radius_and_layouts(fn):
    base = rnd((14, 33, 12), np.float64, 1)
    modes = ["wrap", "constant", "mirror"]
    sig = () if fn == "laplace" else (1.1,)
    extra = {} if fn == "laplace" else dict(radius=2)
    for x in (base, base[::2, 3:30:3, ::-1], np.asfortranarray(base), base.transpose(2, 0, 1)):
        m = modes if x.ndim == 3 else modes[:x.ndim]
        close(getattr(T, fn)(x, *sig, mode=m, cval=-0.4, **extra),
              getattr(S, fn)(x, *sig, mode=m, cval=-0.4, **extra), fn)


@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.uint8])
@pytest.mark.parametrize("fn", GAUSS + ["laplace"])
def test_integer_input(fn, dtype):
    x = rnd((17, 21), dtype, 2) * np.array(3, dtype)
    sig = () if fn == "laplace" else (1.2,)
    a, b = getattr(T, fn)(x, *sig), getattr(S, fn)(x, *sig)
    assert a.dtype == b.dtype
    # each pass is truncated into the integer output as scipy truncates it;
    # a float64 sum of another order may land on the other side of an integer
    assert np.abs(a.astype(np.int64) - b.astype(np.int64)).max() <= 1


@pytest.mark.parametrize("fn", GAUSS)
@pytest.mark.parametrize("output", [np.float32, "float64", np.complex128, "array32", "arrayc",
                                    "arrayi"])
def test_output_argument(fn, output):
    x = rnd((19, 13), np.float64, 3)
    if isinstance(output, str) and output.startswith("array"):
        dt = {"array32": np.float32, "arrayc": np.complex64, "arrayi": np.int32}[output]
        x = x * 20 if dt != np.complex64 else x + 0.5j * x[::-1]  # complex out: complex in
        a, b = np.zeros(x.shape, dt), np.zeros(x.shape, dt)
        ra, rb = getattr(T, fn)(x, 0.9, a), getattr(S, fn)(x, 0.9, b)
        assert ra is a and rb is b
        if dt == np.int32:
            assert np.abs(a.astype(np.int64) - b).max() <= 1
        else:
            close(a, b, fn)
    elif output is np.complex128:
        # scipy's C loops refuse a complex output for a real input; tileconv
        # fills it with the real result
        close(getattr(T, fn)(x, 0.9, output), getattr(S, fn)(x, 0.9).astype(output), fn)
    else:
        close(getattr(T, fn)(x, 0.9, output), getattr(S, fn)(x, 0.9, output), fn)


def test_output_aliases_input():
    """scipy writes the first axis' pass into the output before the next
    axis reads the input: with output=input the later passes read the
    first one's result; tileconv does the same."""
    for fn in GAUSS + ["laplace"]:
        sig = () if fn == "laplace" else (1.0,)
        a, b = rnd((11, 12), np.float64, 4), rnd((11, 12), np.float64, 4)
        getattr(T, fn)(a, *sig, a)
        getattr(S, fn)(b, *sig, b)
        close(a, b, fn)


def _d2(input, axis, output, mode, cval, a, b=1.0):
    return S.correlate1d(input, [b, -2 * a, b], axis, output, mode, cval)


def _d1(input, axis, output, mode, cval, a, b=1.0):
    return S.correlate1d(input, [-a, 0.0, b], axis, output, mode, cval)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int32])
@pytest.mark.parametrize("shape", SHAPES)
def test_generic_composition(shape, dtype):
    """the same Python derivative callable (scipy's correlate1d inside):
    the composition alone, so the results are equal."""
    x = rnd(shape, dtype, 5)
    m = ["reflect", "wrap", "nearest", "mirror"][:x.ndim]
    for T_fn, S_fn, d in ((T.generic_laplace, S.generic_laplace, _d2),
                          (T.generic_gradient_magnitude, S.generic_gradient_magnitude, _d1)):
        a = T_fn(x, d, mode=m, extra_arguments=(0.8,), extra_keywords={"b": 1.5})
        b = S_fn(x, d, mode=m, extra_arguments=(0.8,), extra_keywords={"b": 1.5})
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_generic_with_tileconv_derivatives():
    """scipy's own gaussian_laplace / gradient magnitude as generic_* with
    tileconv's gaussian_filter inside (extra_arguments, extra_keywords)."""
    x = rnd((16, 21, 5), np.float32, 6)

    def d(order):
        def f(input, axis, output, mode, cval, sigma, truncate=4.0):
            o = [0] * input.ndim
            o[axis] = order
            return T.gaussian_filter(input, sigma, o, output, mode, cval, truncate)
        return f
    close(T.generic_laplace(x, d(2), None, "nearest", 0.0, (1.4,), {"truncate": 3.0}),
          S.gaussian_laplace(x, 1.4, mode="nearest", truncate=3.0))
    close(T.generic_gradient_magnitude(x, d(1), None, "mirror", 0.0, (1.4,), {"truncate": 3.0}),
          S.gaussian_gradient_magnitude(x, 1.4, mode="mirror", truncate=3.0))


def _ggm_axes(x, sigma, axes, modes, cval=0.0):
    """scipy's gaussian_gradient_magnitude with axes= (scipy >= 1.15),
    composed from scipy 1.10's gaussian_filter: a first derivative along
    each listed axis with its mode, sigma given to gaussian_filter as it
    is (so one value smooths the unlisted axes as well)."""
    out = 0.0
    for a, m in zip(axes, modes):
        order = [0] * x.ndim
        order[a] = 1
        r = S.gaussian_filter(x, sigma, order, mode=m, cval=cval)
        out = out + r * r
    return np.sqrt(out)


def test_ggm_axes_sigma_as_scipy():
    """gaussian_gradient_magnitude with axes=: scipy passes sigma to
    gaussian_filter unchanged, so a scalar sigma also smooths the axes not
    listed (unlike gaussian_laplace), and a sigma sequence must have one
    value per axis of the input (CuPy's TestFilterFastAxesSciPy15 compares
    with scipy's result)."""
    x = rnd((6, 4, 5), np.float64, 11)
    out = T.gaussian_gradient_magnitude(x, 0.5, mode=("reflect", "constant"), cval=2.0,
                                        axes=(0, -1))
    close(out, _ggm_axes(x, 0.5, (0, 2), ("reflect", "constant"), 2.0), "ggm axes")
    out = T.gaussian_gradient_magnitude(x, [0.5, 0.8, 1.1], axes=1)
    close(out, _ggm_axes(x, [0.5, 0.8, 1.1], (1,), ("reflect",)), "ggm axes 1")
    with pytest.raises(RuntimeError):
        T.gaussian_gradient_magnitude(x, [0.7, 1.2], axes=(0, 2))


@pytest.mark.parametrize("fn", ["gaussian_laplace", "laplace"])
def test_axes(fn):
    """axes= (scipy >= 1.15): the filter along the given axes only, equal
    to filtering each slice across the others (scipy's own check); not
    gaussian_gradient_magnitude, whose sigma smooths every axis
    (test_ggm_axes_sigma_as_scipy)."""
    x = rnd((4, 9, 10), np.float64, 7)
    sig = () if fn == "laplace" else (0.8,)
    out = getattr(T, fn)(x, *sig, axes=(1, 2))
    for i in range(x.shape[0]):
        close(out[i], getattr(S, fn)(x[i], *sig), fn)
    out = getattr(T, fn)(x, *sig, mode=["wrap", "constant"], axes=(-1, 0))
    for j in range(x.shape[1]):
        close(out[:, j], getattr(S, fn)(x[:, j], *sig, mode=["constant", "wrap"]), fn)
    if fn != "laplace":
        out = getattr(T, fn)(x, [0.7, 1.2], axes=(0, 2))
        for j in range(x.shape[1]):
            close(out[:, j], getattr(S, fn)(x[:, j], [0.7, 1.2]), fn)
    np.testing.assert_array_equal(getattr(T, fn)(x, *sig, axes=()), x)


def test_zero_dim_and_empty():
    x0 = np.array(2.5)
    for fn, sig in (("gaussian_laplace", (1.0,)), ("gaussian_gradient_magnitude", (1.0,)),
                    ("laplace", ())):
        assert getattr(T, fn)(x0, *sig) == getattr(S, fn)(x0, *sig)
        e = np.zeros((0, 4))
        assert getattr(T, fn)(e, *sig).shape == getattr(S, fn)(e, *sig).shape == (0, 4)
    assert T.generic_laplace(x0, _d2, extra_arguments=(1.0,)) == 2.5
    assert T.generic_gradient_magnitude(x0, _d1, extra_arguments=(1.0,)) == 2.5


def _raises_as_scipy(exc, f):
    """tileconv raises exc; scipy (called the same way) raises exc too."""
    with pytest.raises(exc) as e:
        f(T)
    with pytest.raises(exc):
        f(S)
    return str(e.value)


def test_bad_arguments():
    x = rnd((6, 7), np.float64, 8)
    for fn in GAUSS:
        _raises_as_scipy(RuntimeError, lambda M: getattr(M, fn)(x, [1.0, 1.0, 1.0]))
        _raises_as_scipy(RuntimeError, lambda M: getattr(M, fn)(x, 1.0, mode="bogus"))
        _raises_as_scipy(RuntimeError, lambda M: getattr(M, fn)(x, 1.0, mode=["wrap"]))
        _raises_as_scipy(RuntimeError, lambda M: getattr(M, fn)(x, 1.0, np.zeros((6, 6))))
        # float16: scipy refuses it, tileconv computes it (test_float16_host.py)
        with pytest.raises(RuntimeError):
            getattr(S, fn)(x.astype(np.float16), 1.0)
        assert getattr(T, fn)(x.astype(np.float16), 1.0).dtype == np.float16
        _raises_as_scipy(TypeError, lambda M: getattr(M, fn)(x, 1.0, bogus=1))
        with pytest.raises(ValueError, match="axes must be unique"):
            getattr(T, fn)(x, 1.0, axes=(1, 1))
        with pytest.raises((ValueError, IndexError)):
            getattr(T, fn)(x, 1.0, axes=(2,))
        # sigma: one per listed axis (gaussian_laplace), one per axis of the
        # input (gaussian_gradient_magnitude, which hands it to
        # gaussian_filter as it is: test_ggm_axes_sigma_as_scipy)
        with pytest.raises(RuntimeError):
            getattr(T, fn)(x, [1.0] * (3 if fn == "gaussian_gradient_magnitude" else 2), axes=(0,))
    for gen in ("generic_laplace", "generic_gradient_magnitude"):
        msg = _raises_as_scipy(TypeError, lambda M: getattr(M, gen)(x, 3))
        assert "must be callable" in msg
        _raises_as_scipy(RuntimeError,
                         lambda M: getattr(M, gen)(x, _d1, mode=["wrap"] * 3, extra_arguments=(1,)))
