"""tileconv.ndimage against scipy.ndimage (the oracle), seeded random data."""
import numpy as np
import pytest
import scipy.ndimage as S

import tileconv.ndimage as T

SEED = 20261123
MODES = ["reflect", "constant", "nearest", "mirror", "wrap", "grid-wrap", "grid-mirror",
         "grid-constant"]


def rnd(shape, dtype, salt=0):
    r = np.random.default_rng(SEED + salt)
    a = r.uniform(0.1, 1.0, shape) * np.where(r.integers(0, 2, shape) == 1, 1, -1)
    if np.dtype(dtype).kind in "iu":
        return r.integers(-50 if np.dtype(dtype).kind == "i" else 0, 50, shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return r.integers(0, 2, shape).astype(bool)
    return a.astype(dtype)


def close(a, b, dtype):
    tol = 2e-5 if np.dtype(dtype) == np.float32 else 1e-11
    scale = max(np.abs(b).max(), 1.0)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * scale)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,wshape", [((37,), (5,)), ((23, 19), (4, 3)), ((7, 9, 11), (3, 2, 3)),
                                          ((1, 6), (1, 6)), ((3, 4, 5, 13), (1, 1, 3, 4))])
@pytest.mark.parametrize("fn", ["convolve", "correlate"])
def test_nd(fn, shape, wshape, dtype, mode):
    x, w = rnd(shape, dtype), rnd(wshape, np.float64, 1)
    for origin in (0, [(s - 1) // 2 for s in wshape], [-(s // 2) for s in wshape]):
        a = getattr(T, fn)(x, w, mode=mode, cval=0.7, origin=origin)
        b = getattr(S, fn)(x, w, mode=mode, cval=0.7, origin=origin)
        close(a, b, dtype)


@pytest.mark.parametrize("dtype", [np.int16, np.uint8, np.int64, bool])
def test_integer_dtypes_cast_as_scipy(dtype):
    x, w = rnd((17, 21), dtype), rnd((3, 5), np.float64, 2)
    a, b = T.correlate(x, w), S.correlate(x, w)
    assert a.dtype == b.dtype
    assert np.array_equal(a, b)


def test_complex():
    x = rnd((15, 16), np.float64) + 1j * rnd((15, 16), np.float64, 3)
    w = rnd((3, 3), np.float64, 4) + 1j * rnd((3, 3), np.float64, 5)
    for fn in ("convolve", "correlate"):
        np.testing.assert_allclose(getattr(T, fn)(x, w), getattr(S, fn)(x, w), atol=1e-12)
        np.testing.assert_allclose(getattr(T, fn)(x, w.real), getattr(S, fn)(x, w.real), atol=1e-12)


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
@pytest.mark.parametrize("mode", MODES)
def test_1d(axis, mode):
    x = rnd((9, 10, 11), np.float64)
    for w in ([1.0, -2.0, 0.5], [0.3, 0.2, -0.1, 0.4]):
        for origin in (0, -(len(w) // 2), (len(w) - 1) // 2):
            close(T.correlate1d(x, w, axis, mode=mode, cval=-0.3, origin=origin),
                  S.correlate1d(x, w, axis, mode=mode, cval=-0.3, origin=origin), np.float64)
            close(T.convolve1d(x, w, axis, mode=mode, cval=-0.3, origin=origin),
                  S.convolve1d(x, w, axis, mode=mode, cval=-0.3, origin=origin), np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_uniform_gaussian(dtype):
    x = rnd((20, 17, 9), dtype)
    if dtype != np.int32:
        close(T.uniform_filter(x, 3), S.uniform_filter(x, 3), dtype)
    else:  # scipy's running sum and a correlation round differently before truncation
        assert np.abs(T.uniform_filter(x, 3).astype(np.int64) - S.uniform_filter(x, 3)).max() <= 3  # one per pass
    for kw in (dict(sigma=1.3), dict(sigma=(0.7, 2.0, 1.1), mode=["reflect", "wrap", "nearest"]),
               dict(sigma=1.5, order=1), dict(sigma=0.9, order=2, truncate=3.0),
               dict(sigma=1.2, radius=2)):
        a, b = T.gaussian_filter(x, **kw), S.gaussian_filter(x, **kw)
        if dtype == np.int32:
            assert np.abs(a.astype(np.int64) - b).max() <= 1  # float32-free, last-bit rounding
        else:
            close(a, b, dtype)
    xf = x.astype(np.float64)  # axes= (scipy >= 1.11) against sigma 0 on the other axis
    close(T.gaussian_filter(xf, 1.0, axes=(0, 2)), S.gaussian_filter(xf, (1.0, 0, 1.0)), np.float64)
    close(T.uniform_filter1d(x.astype(np.float64), 4, axis=1, origin=1),
          S.uniform_filter1d(x.astype(np.float64), 4, axis=1, origin=1), np.float64)
    close(T.gaussian_filter1d(x.astype(np.float64), 2.0, axis=0, order=3),
          S.gaussian_filter1d(x.astype(np.float64), 2.0, axis=0, order=3), np.float64)


@pytest.mark.parametrize("fn", ["sobel", "prewitt"])
def test_edges(fn):
    x = rnd((13, 14, 5), np.float64)
    for axis in (0, 1, 2):
        close(getattr(T, fn)(x, axis), getattr(S, fn)(x, axis), np.float64)
    close(T.laplace(x, mode="nearest"), S.laplace(x, mode="nearest"), np.float64)


def test_output_argument_and_inplace():
    x = rnd((12, 13), np.float64)
    w = rnd((3, 3), np.float64, 6)
    out = np.empty_like(x)
    r = T.correlate(x, w, output=out)
    assert r is out
    close(out, S.correlate(x, w), np.float64)
    y = x.copy()
    T.correlate(y, w, output=y)  # aliasing: computed through a temporary
    close(y, S.correlate(x, w), np.float64)
    o32 = T.correlate(x, w, output=np.float32)
    assert o32.dtype == np.float32
    xs = rnd((20, 30), np.float64)[::2, ::3]  # strided input
    close(T.convolve(xs, w), S.convolve(xs, w), np.float64)


def test_bad_arguments():
    x = rnd((10, 10), np.float64)
    with pytest.raises(RuntimeError):
        T.correlate(x, np.ones(3))  # rank
    with pytest.raises(RuntimeError):
        T.correlate(x, np.ones((3, 3)), mode="bogus")
    with pytest.raises(ValueError):
        T.correlate(x, np.ones((3, 3)), origin=2)
    with pytest.raises(RuntimeError):
        T.correlate(x, np.ones((3, 3)), output=np.empty((3, 3)))
    # 4 filtered axes: computed (tap by tap along the first), as scipy
    x4, w4 = rnd((2, 3, 4, 5), np.float64), rnd((2, 2, 2, 2), np.float64)
    close(T.correlate(x4, w4), S.correlate(x4, w4), np.float64)


def test_plan_cache_reuses():
    from tileconv import ndimage as nd
    x = rnd((64, 64), np.float32)
    nd.correlate(x, np.ones((3, 3)))
    n = len(nd._cache)
    nd.correlate(x, np.ones((3, 3)))
    assert len(nd._cache) == n
