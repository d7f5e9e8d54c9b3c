"""tileconv.signal against scipy.signal, seeded random data."""
import numpy as np
import pytest
import scipy.signal as S

import tileconv.signal as T

R = np.random.default_rng(99)


def rnd(shape, dtype=np.float64):
    if np.dtype(dtype).kind in "iu":
        return R.integers(-20, 20, shape).astype(dtype)
    a = R.uniform(0.1, 1, shape) * np.where(R.integers(0, 2, shape) == 1, 1, -1)
    return a.astype(dtype)


def close(a, b):
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    tol = 3e-5 if a.dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * max(1, np.abs(b).max()))


SHAPES = [((50,), (7,)), ((7,), (50,)), ((13, 17), (4, 5)), ((6, 7, 8), (3, 2, 3)),
          ((16, 16), (16, 16)), ((9,), (9,))]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("s1,s2", SHAPES)
@pytest.mark.parametrize("fn", ["convolve", "correlate"])
@pytest.mark.parametrize("method", ["auto", "direct", "fft"])
def test_nd(fn, s1, s2, mode, method):
    a, b = rnd(s1), rnd(s2)
    if mode == "valid" and not (all(x >= y for x, y in zip(s1, s2)) or
                                all(x <= y for x, y in zip(s1, s2))):
        pytest.skip("not a valid-mode pair")
    close(getattr(T, fn)(a, b, mode=mode, method=method),
          getattr(S, fn)(a, b, mode=mode, method=method))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_fft_oa(mode):
    a, b = rnd((300,)), rnd((31,))
    close(T.fftconvolve(a, b, mode), S.fftconvolve(a, b, mode))
    close(T.oaconvolve(a, b, mode), S.oaconvolve(a, b, mode))
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    close(T.fftconvolve(a32, b32, mode), S.fftconvolve(a32, b32, mode))


def test_dtypes():
    a, b = rnd((20, 21), np.int32), rnd((3, 4), np.int32)
    r, s = T.convolve(a, b), S.convolve(a, b)
    assert r.dtype == s.dtype and np.array_equal(r, s)
    c = rnd((15,)) + 1j * rnd((15,))
    d = rnd((4,)) + 1j * rnd((4,))
    for mode in ("full", "same", "valid"):
        close(T.convolve(c, d, mode), S.convolve(c, d, mode))
        close(T.correlate(c, d, mode), S.correlate(c, d, mode))


@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("fn", ["convolve2d", "correlate2d"])
def test_2d(fn, mode, boundary):
    a, b = rnd((11, 13)), rnd((3, 4))
    for fill in (0, 1.5):
        close(getattr(T, fn)(a, b, mode, boundary, fill), getattr(S, fn)(a, b, mode, boundary, fill))
    close(getattr(T, fn)(b, a, "valid"), getattr(S, fn)(b, a, "valid"))


def test_errors():
    with pytest.raises(ValueError):
        T.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError):
        T.convolve(np.ones((3, 4)), np.ones((4, 3)), mode="valid")
    with pytest.raises(ValueError):
        T.convolve(np.ones(3), np.ones(2), mode="bogus")
    with pytest.raises(ValueError):
        T.convolve2d(np.ones(3), np.ones(2))
    with pytest.raises(ValueError):
        T.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="bogus")


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_results_contiguous(mode):
    """Every result C-contiguous, as scipy's and cupyx's (the 'same' and
    'valid' windows and fftconvolve's batch axes are copied out)."""
    r = np.random.default_rng(5)
    a, b = r.random((5, 10)), r.random((3, 4))
    for fn in ("convolve", "correlate"):
        for method in ("direct", "fft"):
            y = getattr(T, fn)(a, b, mode, method=method)
            assert y.flags.c_contiguous, (fn, method, mode)
            np.testing.assert_allclose(y, getattr(S, fn)(a, b, mode, method=method),
                                       rtol=0, atol=1e-12)
    for fn in ("fftconvolve", "oaconvolve"):
        y = getattr(T, fn)(r.random((3, 10, 15)), r.random((3, 4, 5)), mode, axes=(1, 2))
        assert y.flags.c_contiguous, (fn, mode)
        y = getattr(T, fn)(r.random((10, 15)), r.random((10, 5)), mode, axes=1)
        assert y.flags.c_contiguous, (fn, mode)
    for fn in ("convolve2d", "correlate2d"):
        for boundary in ("fill", "wrap", "symm"):
            y = getattr(T, fn)(a, b, mode, boundary)
            assert y.flags.c_contiguous, (fn, mode, boundary)


def test_scipy_dtypes():
    """scipy_dtypes = True: float16 and bool operands of 2 or more dimensions
    refused with a ValueError on the direct paths, as scipy's (and cupyx's);
    1-D operands and the FFT path compute; False (the default) computes
    them all."""
    r = np.random.default_rng(6)
    a16, b16 = r.random((5, 10)).astype(np.float16), r.random((3, 3)).astype(np.float16)
    ab = r.random((5, 10)) > 0.5
    assert T.scipy_dtypes is False
    assert T.convolve(a16, b16).dtype == np.float16
    try:
        T.scipy_dtypes = True
        for call in (lambda: T.convolve(a16, b16), lambda: T.correlate(a16, b16, method="direct"),
                     lambda: T.convolve2d(a16, b16), lambda: T.correlate2d(ab, ab),
                     lambda: T.convolve(ab, ab)):
            with pytest.raises(ValueError, match="scipy_dtypes"):
                call()
        assert T.convolve(a16[0], b16[0]).dtype == np.float16
        assert T.convolve(a16, b16, method="fft").shape == (7, 12)
        assert T.convolve(a16.astype(np.float32), b16).dtype == np.float32
    finally:
        T.scipy_dtypes = False
