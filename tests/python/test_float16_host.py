"""NumPy float16 arrays in every tileconv.ndimage and tileconv.signal
function: float16 in, float16 out, float32 accumulation (as cupyx and as
tileconv's device path). scipy refuses float16, so the reference is scipy
in float64 on the same float16 values (and weights), seeded random data at
awkward sizes, every mode.

Bounds (U = 2^-11, float16's unit roundoff; E = 2^-24, float32's):
- one pass (correlate, convolve, the 1-D filters, uniform_filter1d), per
  element: |got - ref| <= U |ref| + (n + 2) E A (1 + U) + 2^-25, with n the
  taps and A the same filter on |x|, |w| (|cval|): the float32 sums (and
  the weights rounded to float32) cost (n + 2) E A, the store rounds once
  (2^-25: half float16's subnormal spacing).
- chains of passes (the separable filters, Laplace and gradient-magnitude
  compositions, each pass stored in float16 as scipy stores its passes
  into the output): |got - ref| <= P 2^-10 M, where M bounds every
  intermediate and output magnitude (max |x| or |cval| times the product
  of the passes' weight 1-norms; summed over axes for the Laplace family,
  times sqrt(ndim) for the gradient magnitude) and P counts the roundings
  on a path (each costs at most U M for the store plus (n + 2) E M for the
  float32 sums, under 2^-10 M for n < 2^13 taps).
- signal (direct or FFT, the planner's choice): U |ref| + 2^-16 |x|_2
  |w|_2 + 2^-25 (float32 sums or FFT, Cauchy-Schwarz bounds every output
  by |x|_2 |w|_2).
"""
import math

import numpy as np
import pytest
import scipy.ndimage as S
import scipy.signal as SS

import tileconv.ndimage as T
import tileconv.signal as TS
from tileconv import _core

SEED = 20261204
U, E = 2.0 ** -11, 2.0 ** -24
MODES = ["reflect", "constant", "nearest", "mirror", "wrap", "grid-wrap", "grid-mirror",
         "grid-constant"]
CVAL = 0.75  # a float16 value
SHAPES = [(37,), (23, 19), (7, 9, 11), (1, 6), (5, 1, 13)]


def rnd16(shape, salt=0, lo=-2.0, hi=2.0):
    r = np.random.default_rng(SEED + salt)
    x = r.uniform(lo, hi, shape)
    x.flat[:: 7] *= 1e-3  # small values, some near float16's subnormal range
    return x.astype(np.float16)


def f64(a):
    return np.asarray(a).astype(np.float64)


def check_pass(got, ref, A, n, what):
    """One-pass bound (module docstring), float16 result."""
    assert got.dtype == np.float16, (what, got.dtype)
    assert got.shape == ref.shape, (what, got.shape, ref.shape)
    err = np.abs(f64(got) - ref)
    bound = U * np.abs(ref) + (n + 2) * E * A * (1 + U) + 2.0 ** -25
    bad = err > bound
    assert not bad.any(), (what, err[bad][:5], bound[bad][:5])


def check_chain(got, ref, P, M, what, dtype=np.float16):
    assert got.dtype == dtype, (what, got.dtype)
    assert got.shape == ref.shape, (what, got.shape, ref.shape)
    err = float(np.abs(f64(got) - ref).max()) if got.size else 0.0
    assert err <= P * 2.0 ** -10 * M, (what, err, P * 2.0 ** -10 * M)


# ---------------------------------------------------------------- ndimage, one pass


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fn", ["correlate", "convolve"])
@pytest.mark.parametrize("wkind", ["float64", "float16"])
def test_nd_one_pass(fn, shape, mode, wkind):
    """float64 weights: computed in float32 (the weights are not float16
    values), cast once; float16 weights: a float16 plan."""
    x = rnd16(shape, 1)
    wshape = tuple(min(s, k) for s, k in zip(shape, (4, 3, 2)))
    w = np.random.default_rng(SEED + 2).uniform(-1, 1, wshape)
    if wkind == "float16":
        w = w.astype(np.float16)
    n = w.size
    for origin in (0, [(s - 1) // 2 for s in wshape], [-(s // 2) for s in wshape]):
        kw = dict(mode=mode, cval=CVAL, origin=origin)
        got = getattr(T, fn)(x, w, **kw)
        ref = getattr(S, fn)(f64(x), f64(w), **kw)
        A = getattr(S, fn)(np.abs(f64(x)), np.abs(f64(w)), mode=mode, cval=abs(CVAL),
                           origin=origin)
        check_pass(got, ref, A, n, (fn, shape, mode, origin))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", ["correlate1d", "convolve1d"])
@pytest.mark.parametrize("w", [[0.3, -1.1, 0.45, 2.2], [1, -2, 1], [0.25, 0.5, 0.25, 1.5, -1]])
def test_1d_one_pass(fn, mode, w):
    """Every axis of a 3-D array; the second and third weights are float16
    values (float16 plans on strided views), the first are not."""
    x = rnd16((7, 9, 11), 3)
    w = np.asarray(w, dtype=np.float64)
    for axis in (0, 1, 2, -1):
        for origin in (0, -(len(w) // 2), (len(w) - 1) // 2):
            kw = dict(axis=axis, mode=mode, cval=CVAL, origin=origin)
            got = getattr(T, fn)(x, w, **kw)
            ref = getattr(S, fn)(f64(x), w, **kw)
            A = getattr(S, fn)(np.abs(f64(x)), np.abs(w), axis=axis, mode=mode,
                               cval=abs(CVAL), origin=origin)
            check_pass(got, ref, A, len(w), (fn, mode, axis, origin))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("size", [1, 2, 5, 8])
def test_uniform_filter1d(mode, size):
    """Sums of ones in float32, one division, one rounding."""
    x = rnd16((13, 29), 4)
    for axis in (0, 1):
        got = T.uniform_filter1d(x, size, axis=axis, mode=mode, cval=CVAL)
        ref = S.uniform_filter1d(f64(x), size, axis=axis, mode=mode, cval=CVAL)
        A = S.uniform_filter1d(np.abs(f64(x)), size, axis=axis, mode=mode, cval=abs(CVAL))
        check_pass(got, ref, A, size + 1, (mode, size, axis))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [0, 1, 2])
def test_gaussian_filter1d(mode, order):
    x = rnd16((31, 17), 5)
    for axis in (0, 1):
        got = T.gaussian_filter1d(x, 1.7, axis=axis, order=order, mode=mode, cval=CVAL)
        ref = S.gaussian_filter1d(f64(x), 1.7, axis=axis, order=order, mode=mode, cval=CVAL)
        k = _kernel(1.7, order)
        A = S.correlate1d(np.abs(f64(x)), np.abs(k), axis=axis, mode=mode, cval=abs(CVAL))
        check_pass(got, ref, A, k.size, (mode, order, axis))


# ---------------------------------------------------------------- ndimage, chains


def _kernel(sigma, order, truncate=4.0):
    """scipy's Gaussian (derivative) weights, read off an impulse response."""
    r = int(truncate * sigma + 0.5)
    d = np.zeros(2 * r + 1)
    d[r] = 1.0
    return S.gaussian_filter1d(d, sigma, order=order, mode="constant")


def _m0(x, mode):
    return max(float(np.abs(f64(x)).max()), abs(CVAL) if "constant" in mode else 0.0)


CHAIN_SHAPES = [(23, 19), (7, 9, 11), (5, 1, 13), (37,)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", CHAIN_SHAPES)
def test_uniform_filter(mode, shape):
    x = rnd16(shape, 6)
    size = (3, 4, 2)[:len(shape)]
    got = T.uniform_filter(x, size, mode=mode, cval=CVAL)
    ref = S.uniform_filter(f64(x), size, mode=mode, cval=CVAL)
    check_chain(got, ref, len(shape), _m0(x, mode), (mode, shape))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", CHAIN_SHAPES)
@pytest.mark.parametrize("order", [0, 1, (2, 0, 1)])
def test_gaussian_filter(mode, shape, order):
    x = rnd16(shape, 7)
    d = len(shape)
    orders = [order] * d if np.isscalar(order) else list(order[:d])
    sig = [1.3, 0.8, 2.1][:d]
    got = T.gaussian_filter(x, sig, orders, mode=mode, cval=CVAL)
    ref = S.gaussian_filter(f64(x), sig, orders, mode=mode, cval=CVAL)
    M = _m0(x, mode) * math.prod(np.abs(_kernel(s, o)).sum() for s, o in zip(sig, orders))
    check_chain(got, ref, d, M, (mode, shape, order))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", CHAIN_SHAPES)
@pytest.mark.parametrize("fn,smooth", [("sobel", 4), ("prewitt", 3)])
def test_sobel_prewitt(fn, smooth, mode, shape):
    """[-1, 0, 1] and [1, 2, 1] / [1, 1, 1]: float16 values, float16 plans."""
    x = rnd16(shape, 8)
    d = len(shape)
    for axis in range(d):
        got = getattr(T, fn)(x, axis, mode=mode, cval=CVAL)
        ref = getattr(S, fn)(f64(x), axis, mode=mode, cval=CVAL)
        check_chain(got, ref, d, _m0(x, mode) * 2 * smooth ** (d - 1), (fn, mode, shape, axis))


def _d2(mod):
    def derivative2(input, axis, output, mode, cval):
        return mod.correlate1d(input, [1, -2, 1], axis, output, mode, cval)
    return derivative2


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", CHAIN_SHAPES)
def test_laplace_family(mode, shape):
    """One chain per axis, then ndim - 1 float16 sums: P = (chain) + ndim - 1,
    M = ndim times a chain's magnitude."""
    x = rnd16(shape, 9)
    d = len(shape)
    m0 = _m0(x, mode)
    check_chain(T.laplace(x, mode=mode, cval=CVAL), S.laplace(f64(x), mode=mode, cval=CVAL),
                1 + d - 1, d * 4 * m0, ("laplace", mode, shape))
    check_chain(T.generic_laplace(x, _d2(T), mode=mode, cval=CVAL),
                S.generic_laplace(f64(x), _d2(S), mode=mode, cval=CVAL),
                1 + d - 1, d * 4 * m0, ("generic_laplace", mode, shape))
    sig = 1.1
    M = d * m0 * np.abs(_kernel(sig, 2)).sum()
    check_chain(T.gaussian_laplace(x, sig, mode=mode, cval=CVAL),
                S.gaussian_laplace(f64(x), sig, mode=mode, cval=CVAL),
                d + d - 1, M, ("gaussian_laplace", mode, shape))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", CHAIN_SHAPES)
def test_gradient_magnitude_family(mode, shape):
    """One chain per axis (|error| <= sqrt(ndim) x a chain's), then squares,
    sums and the square root in float16 (relative (ndim + 1) U of the
    result): P = 2 ndim + 1, M = sqrt(ndim) times a chain's magnitude."""
    x = rnd16(shape, 10)
    d = len(shape)
    m0 = _m0(x, mode)
    r = math.sqrt(d)
    check_chain(T.generic_gradient_magnitude(x, T.sobel, mode=mode, cval=CVAL),
                S.generic_gradient_magnitude(f64(x), S.sobel, mode=mode, cval=CVAL),
                2 * d + 1, r * m0 * 2 * 4 ** (d - 1), ("generic_gradient_magnitude", mode, shape))
    sig = 1.4
    check_chain(T.gaussian_gradient_magnitude(x, sig, mode=mode, cval=CVAL),
                S.gaussian_gradient_magnitude(f64(x), sig, mode=mode, cval=CVAL),
                2 * d + 1, r * m0 * np.abs(_kernel(sig, 1)).sum(),
                ("gaussian_gradient_magnitude", mode, shape))


def test_axes_and_4d_unit_axes():
    """axes= and the 4-D input with a unit axis (weights collapsed along it)."""
    x = rnd16((6, 7, 8), 11)
    got = T.gaussian_filter(x, 1.2, axes=(0, 2), mode="nearest")
    ref = S.gaussian_filter(f64(x), [1.2, 0, 1.2], mode="nearest")  # scipy 1.10: no axes=
    check_chain(got, ref, 2, 2.0, "gaussian_filter axes")
    x4 = rnd16((1, 3, 4, 5), 12)
    w = np.random.default_rng(SEED).uniform(-1, 1, (3, 3, 3, 3))
    for mode in ("constant", "reflect"):
        got = T.correlate(x4, w, mode=mode, cval=CVAL)
        ref = S.correlate(f64(x4), w, mode=mode, cval=CVAL)
        A = S.correlate(np.abs(f64(x4)), np.abs(w), mode=mode, cval=abs(CVAL))
        check_pass(got, ref, A, w.size, ("4-D unit axis", mode))


# ---------------------------------------------------------------- ndimage, output=


CALLS = {
    "correlate": lambda m, x, o: m.correlate(x, np.array([[0.3, -1.2], [0.7, 0.1]]), o,
                                             mode="constant", cval=CVAL),
    "convolve": lambda m, x, o: m.convolve(x, np.array([[1.0, 2.0], [-1.0, 0.5]]), o,
                                           mode="mirror"),
    "correlate1d": lambda m, x, o: m.correlate1d(x, [0.2, 0.5, -0.3], 0, o, mode="wrap"),
    "convolve1d": lambda m, x, o: m.convolve1d(x, [1.0, -2.0, 1.0], 1, o, mode="nearest"),
    "uniform_filter": lambda m, x, o: m.uniform_filter(x, (3, 4), o),
    "uniform_filter1d": lambda m, x, o: m.uniform_filter1d(x, 5, 0, o),
    "gaussian_filter": lambda m, x, o: m.gaussian_filter(x, 1.5, 0, o),
    "gaussian_filter1d": lambda m, x, o: m.gaussian_filter1d(x, 2.0, 1, 1, o),
    "sobel": lambda m, x, o: m.sobel(x, 0, o),
    "prewitt": lambda m, x, o: m.prewitt(x, 1, o, mode="constant"),
    "laplace": lambda m, x, o: m.laplace(x, o),
    "generic_laplace": lambda m, x, o: m.generic_laplace(x, _d2(m), o),
    "gaussian_laplace": lambda m, x, o: m.gaussian_laplace(x, 1.2, o),
    "generic_gradient_magnitude": lambda m, x, o: m.generic_gradient_magnitude(x, m.sobel, o),
    "gaussian_gradient_magnitude": lambda m, x, o: m.gaussian_gradient_magnitude(x, 1.3, o),
}


def test_every_ndimage_function_listed():
    assert sorted(CALLS) == sorted(T.__all__)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_output_float16_in_place(name):
    """output=None gives float16; a float16 output= array is filled in place
    (and returned) with the same values, strided too; output=np.float16 the
    same."""
    x = rnd16((19, 23), 13)
    want = CALLS[name](T, x, None)
    assert want.dtype == np.float16
    o = np.full(x.shape, np.nan, np.float16)
    r = CALLS[name](T, x, o)
    assert r is o
    assert np.array_equal(o, want)
    big = np.full((19, 46), np.nan, np.float16)
    ov = big[:, ::2]
    CALLS[name](T, x, ov)
    assert np.array_equal(ov, want) and np.isnan(f64(big[:, 1::2])).all()
    assert np.array_equal(CALLS[name](T, x, np.float16), want)
    assert np.array_equal(CALLS[name](T, x, "float16"), want)


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("odt", [np.float32, np.float64])
def test_output_wider_than_float16(name, odt):
    """float16 input, float32 / float64 output: as scipy's dtype mixes (the
    result computed wider and stored in the output's dtype, not rounded to
    float16 first): within float32's rounding of scipy's float64 result
    (2e-5 of the largest value, test_ndimage.py's float32 bound), far
    below float16's; passes stored in the output's dtype, as scipy."""
    x = rnd16((19, 23), 14)
    ref = CALLS[name](S, f64(x), None)
    o = np.full(x.shape, np.nan, odt)
    r = CALLS[name](T, x, o)
    assert r is o
    scale = max(1.0, float(np.abs(ref).max()))
    assert np.abs(f64(o) - ref).max() <= 2e-5 * scale, name
    t = CALLS[name](T, x, odt)
    assert t.dtype == odt and np.array_equal(t, o)


def test_integer_output():
    """float16 input, int16 output: the float32 result truncated toward zero,
    as scipy casts, with no float16 rounding before the cast: eighths up to
    50 and weights in quarters, whose sums float32 holds exactly, give
    scipy's result exactly (a float16 rounding would not: 49.375 + 0.125
    is not a float16 value)."""
    r = np.random.default_rng(SEED + 15)
    x = (r.integers(-400, 400, (17, 21)) / 8).astype(np.float16)
    w = np.array([[0.25, 0.5], [1.0, -0.75]])
    for fn in ("correlate", "convolve"):
        got = getattr(T, fn)(x, w, np.int16)
        ref = getattr(S, fn)(f64(x), w, np.int16)
        assert got.dtype == np.int16
        assert np.array_equal(got, ref), fn


def test_scipy_gh8207_value():
    """scipy's test_gaussian_filter (gh-8207) checks that scipy refuses
    float16; tileconv computes it: the one-element array [1] filtered
    (reflect) is the sum of the Gaussian's weights, 1."""
    data = np.array([1], dtype=np.float16)
    got = T.gaussian_filter(data, 1.0)
    assert got.dtype == np.float16
    assert np.array_equal(got, np.array([1], dtype=np.float16))
    assert np.array_equal(got, S.gaussian_filter(data.astype(np.float64), 1.0).astype(np.float16))


def test_float16_plan_used():
    """Weights that are float16 values with a float16 output: a float16 plan
    (no float32 copy of the input in Python); other weights: a float32 plan."""
    x = rnd16((40, 33), 16)
    T._cache.clear()
    T.correlate(x, np.array([[1.0, -2.0], [0.5, 3.0]]))
    assert [p.dtype for p in T._cache.values()] == ["float16"]
    T._cache.clear()
    T.correlate(x, np.array([[0.1, -2.0], [0.5, 3.0]]))
    assert [p.dtype for p in T._cache.values()] == ["float32"]
    T._cache.clear()
    T.sobel(x, 0)
    assert {p.dtype for p in T._cache.values()} == {"float16"}
    T._cache.clear()


class _NoHalf:
    """_core.FilterPlan that refuses float16 masks, as a plan without
    float16 support would."""
    def __init__(self, real):
        self.real = real

    def __call__(self, *args):
        if args[4].dtype == np.float16 or (len(args) > 13 and args[13] == "float16"):
            raise RuntimeError("tileconv: plan: not supported (float16)")
        return self.real(*args)


@pytest.mark.parametrize("name", ["sobel", "laplace", "correlate", "convolve1d"])
def test_plan_refusing_float16(monkeypatch, name):
    """A plan that refuses float16: computed in float32, cast once, the
    same values (the CPU's float16 plans stage to float32 too)."""
    x = rnd16((19, 23), 17)
    want = CALLS[name](T, x, None)
    T._cache.clear()
    monkeypatch.setattr(_core, "FilterPlan", _NoHalf(_core.FilterPlan))
    try:
        got = CALLS[name](T, x, None)
    finally:
        T._cache.clear()
    assert got.dtype == np.float16
    scale = max(1.0, float(np.abs(f64(want)).max()))
    assert np.abs(f64(got) - f64(want)).max() <= 2.0 ** -9 * scale  # two float16 ulps


def test_refused_dtypes_still_refused():
    for dt in (np.longdouble, object):
        with pytest.raises(RuntimeError):
            T.correlate(np.ones((4, 4), dtype=dt), np.ones((2, 2)))


# ---------------------------------------------------------------- signal


def check_signal(got, ref, x, w, what, dtype=np.float16):
    assert got.dtype == dtype, (what, got.dtype)
    assert got.shape == ref.shape, (what, got.shape, ref.shape)
    if not got.size:
        return
    nx, nw = np.linalg.norm(f64(x).ravel()), np.linalg.norm(f64(w).ravel())
    err = np.abs(f64(got) - ref)
    bound = (U if dtype == np.float16 else E) * np.abs(ref) + 2.0 ** -16 * nx * nw + 2.0 ** -25
    bad = err > bound
    assert not bad.any(), (what, err[bad][:5], bound[bad][:5])


SIG_SHAPES = [((41,), (6,)), ((23, 19), (4, 3)), ((7, 9, 11), (3, 2, 4)), ((5, 6), (9, 2))]


@pytest.mark.parametrize("method", ["auto", "direct", "fft"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("fn", ["convolve", "correlate"])
@pytest.mark.parametrize("shapes", SIG_SHAPES)
def test_signal_nd(fn, mode, method, shapes):
    s1, s2 = shapes
    if mode == "valid" and not (all(a >= b for a, b in zip(s1, s2)) or
                                all(a <= b for a, b in zip(s1, s2))):
        return  # scipy's ValueError, tested in test_signal.py
    x, w = rnd16(s1, 20), rnd16(s2, 21)
    got = getattr(TS, fn)(x, w, mode, method)
    ref = getattr(SS, fn)(f64(x), f64(w), mode, "direct")
    check_signal(got, ref, x, w, (fn, mode, method, shapes))


@pytest.mark.parametrize("dt2", [np.int8, np.uint8, bool, np.float32, np.float64])
def test_signal_dtype_mixes(dt2):
    """np.result_type(in1, in2), as scipy: float16 with int8 / uint8 / bool
    is float16 (a float16 plan), with float32 float32, with float64 float64."""
    x = rnd16((17, 20), 22)
    r = np.random.default_rng(SEED)
    w = (r.integers(-3, 4, (3, 5)) if dt2 != np.float32 and dt2 != np.float64
         else r.uniform(-1, 1, (3, 5))).astype(dt2)
    rdt = np.result_type(x, w)
    for fn in ("convolve", "correlate", "convolve2d", "correlate2d"):
        got = getattr(TS, fn)(x, w)
        ref = getattr(SS, fn)(f64(x), f64(w))
        if rdt == np.float64:
            assert got.dtype == np.float64
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
        else:
            check_signal(got, ref, x, w, (fn, dt2), rdt)


@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("fn", ["convolve2d", "correlate2d"])
def test_signal_2d(fn, mode, boundary):
    x, w = rnd16((11, 13), 23), rnd16((3, 4), 24)
    for fill in (0, 1.5):  # float16 values
        got = getattr(TS, fn)(x, w, mode, boundary, fill)
        ref = getattr(SS, fn)(f64(x), f64(w), mode, boundary, fill)
        xe = (np.pad(f64(x), 3, mode="constant", constant_values=fill) if boundary == "fill"
              else np.pad(f64(x), 3, mode="wrap" if boundary == "wrap" else "symmetric"))
        check_signal(got, ref, xe, w, (fn, mode, boundary, fill))
    got = getattr(TS, fn)(w, x, "valid")
    check_signal(got, getattr(SS, fn)(f64(w), f64(x), "valid"), x, w, (fn, "swapped valid"))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("fn", ["fftconvolve", "oaconvolve"])
def test_signal_fft_float32(fn, mode):
    """fftconvolve / oaconvolve keep scipy.fft's types: float16 computed and
    returned as float32 (docs/python.md), within float32's bound."""
    x, w = rnd16((29, 31), 25), rnd16((5, 4), 26)
    got = getattr(TS, fn)(x, w, mode)
    ref = SS.convolve(f64(x), f64(w), mode, "direct")
    check_signal(got, ref, x, w, (fn, mode), np.float32)
    # axis 0 a batch axis, in2's one row broadcast along it
    w1 = w[:1]
    got = getattr(TS, fn)(x, w1, mode, axes=1)
    ref = SS.fftconvolve(f64(x), f64(w1), mode, axes=1)
    check_signal(got, ref, x, w1, (fn, mode, "axes=1"), np.float32)


def test_signal_plan_refusing_float16(monkeypatch):
    x, w = rnd16((23, 19), 27), rnd16((4, 3), 28)
    want = TS.convolve(x, w)
    T._cache.clear()
    monkeypatch.setattr(_core, "FilterPlan", _NoHalf(_core.FilterPlan))
    try:
        got = TS.convolve(x, w)
    finally:
        T._cache.clear()
    assert got.dtype == np.float16
    check_signal(got, SS.convolve(f64(x), f64(w)), x, w, "refused float16")
    assert np.abs(f64(got) - f64(want)).max() <= 2.0 ** -9 * np.abs(f64(want)).max()


def test_signal_float16_plan_used():
    x, w = rnd16((40, 33), 29), rnd16((3, 3), 30)
    T._cache.clear()
    TS.convolve(x, w, method="direct")
    assert [p.dtype for p in T._cache.values()] == ["float16"]
    T._cache.clear()


def test_complex_weights_and_aliasing():
    """Complex weights: complex64 out (np.promote_types(float16, complex64)),
    the real passes computed as for a float32 input, which holds the
    float16 values exactly. output=input: through a temporary, as scipy."""
    x = rnd16((9, 10), 31)
    w = np.array([[1 + 2j, 0.5 - 1j], [0.25j, -1]])
    for fn in ("correlate", "convolve"):
        got = getattr(T, fn)(x, w)
        assert got.dtype == np.complex64
        assert np.array_equal(got, getattr(T, fn)(x.astype(np.float32), w))
    got = T.convolve1d(x, [1j, 2, 3])
    assert got.dtype == np.complex64
    assert np.array_equal(got, T.convolve1d(x.astype(np.float32), [1j, 2, 3]))
    for name in ("correlate", "sobel", "gaussian_filter"):
        y = x.copy()
        CALLS[name](T, y, y)
        assert np.array_equal(y, CALLS[name](T, x, None)), name
