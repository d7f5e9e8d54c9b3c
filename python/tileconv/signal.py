"""tileconv.signal - scipy.signal's N-D convolution and correlation on
tileconv: convolve, correlate, fftconvolve, oaconvolve, convolve2d,
correlate2d, with scipy's signatures and results (tests/python/test_signal.py
checks them against scipy).

method: 'auto' and 'direct' let tileconv's planner choose (its direct,
separable, low-rank or FFT algorithms, by cost: the planner may take the
FFT for a large mask even under 'direct'), 'fft' forces the FFT algorithm
(cpu.fft.fftw). fftconvolve and oaconvolve always use the FFT
(tileconv's FFT is overlap-save in blocks, which is what oaconvolve asks
for). Up to 3 convolved axes; fftconvolve / oaconvolve take `axes`, the
other axes being batch axes (broadcast as scipy does).
"""
import warnings

import numpy as np

from . import _core
from .ndimage import _cache, _cache_lock, _CACHE_SIZE

__all__ = ["convolve", "correlate", "fftconvolve", "oaconvolve", "convolve2d", "correlate2d"]

_CONVOLVE, _CORRELATE = 0, 1
_FULL, _VALID = 1, 2
_FFT_ALGO = "cpu.fft.fftw"


def _plan(x, mask, kind, output, algo):
    key = ("signal", x.dtype.char, x.shape, mask.shape, mask.tobytes(), kind, output, algo)
    with _cache_lock:
        p = _cache.get(key)
        if p is not None:
            _cache.move_to_end(key)
            return p
    p = _core.FilterPlan(x.shape, (0,) * x.ndim, (0,) * x.ndim, x.ndim, mask, kind, output, 0,
                         0.0, (0,) * x.ndim, 0, algo)
    with _cache_lock:
        _cache[key] = p
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return p


def _real_full_or_valid(x, w, kind, output, algo):
    """x, w real float arrays of equal rank <= 3; returns full or valid."""
    dt = np.float32 if x.dtype == np.float32 and w.dtype == np.float32 else np.float64
    x = np.ascontiguousarray(x, dtype=dt)
    w = np.ascontiguousarray(w, dtype=dt)
    p = _plan(x, w, kind, output, algo)
    y = np.empty(p.out_shape, dtype=dt)
    p.execute(x, y)
    return y


def _check(in1, in2):
    in1, in2 = np.asarray(in1), np.asarray(in2)
    if in1.ndim == in2.ndim == 0:
        return in1, in2
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if in1.size == 0 or in2.size == 0:
        return in1, in2
    if in1.ndim > 3:
        raise ValueError(f"tileconv: at most 3 dimensions, got {in1.ndim}")
    return in1, in2


def _centered(arr, newshape):
    start = [(c - n) // 2 for c, n in zip(arr.shape, newshape)]
    return arr[tuple(slice(s, s + n) for s, n in zip(start, newshape))]


def _result_dtype(in1, in2):
    return np.result_type(in1, in2)


def _nd(in1, in2, mode, kind, algo):
    in1, in2 = _check(in1, in2)
    if mode not in ("full", "same", "valid"):
        raise ValueError("acceptable mode flags are 'valid', 'same', or 'full'")
    rdt = _result_dtype(in1, in2)
    if in1.ndim == 0:
        return (in1 * (in2.conj() if kind == _CORRELATE else in2)).astype(rdt)
    if in1.size == 0 or in2.size == 0:
        return np.array([], dtype=rdt)
    if mode == "valid":
        big1 = all(a >= b for a, b in zip(in1.shape, in2.shape))
        big2 = all(a <= b for a, b in zip(in1.shape, in2.shape))
        if not (big1 or big2):
            raise ValueError("For 'valid' mode, one must be at least as large as the other in "
                             "every dimension")
    if in1.dtype.kind == "c" or in2.dtype.kind == "c":
        b = in2.conj() if kind == _CORRELATE else in2
        a1r, a1i = np.real(in1), np.imag(in1)
        b2r, b2i = np.real(b), np.imag(b)
        f = lambda p, q: _nd(p, q, mode, kind, algo)  # noqa: E731
        re = f(a1r, b2r) - f(a1i, b2i)
        im = f(a1r, b2i) + f(a1i, b2r)
        return (re + 1j * im).astype(rdt)
    out = _FULL if mode != "valid" else _VALID
    y = _real_full_or_valid(in1, in2, kind, out, algo)
    if mode == "same":
        y = _centered(y, in1.shape)
    if rdt.kind in "iub":
        return np.rint(y).astype(rdt)  # exact integer sums, as scipy's direct integer path
    return y.astype(rdt, copy=False)


def _algo(method, in1=None, in2=None):
    if method not in ("auto", "direct", "fft"):
        raise ValueError("Acceptable method flags are 'auto', 'direct', or 'fft'.")
    if method == "fft" and in1 is not None and not (np.isfinite(in1).all() and
                                                    np.isfinite(in2).all()):
        warnings.warn("Use of fft convolution on input with NAN or inf results in NAN or inf "
                      "output. Consider using method='direct' instead.", RuntimeWarning,
                      stacklevel=3)
    return _FFT_ALGO if method == "fft" else None


def convolve(in1, in2, mode="full", method="auto"):
    """scipy.signal.convolve."""
    return _nd(in1, in2, mode, _CONVOLVE, _algo(method, np.asarray(in1), np.asarray(in2)))


def correlate(in1, in2, mode="full", method="auto"):
    """scipy.signal.correlate (in2 conjugated for complex inputs, as scipy)."""
    return _nd(in1, in2, mode, _CORRELATE, _algo(method, np.asarray(in1), np.asarray(in2)))


def _freq_axes(in1, in2, mode, axes):
    """fftconvolve / oaconvolve over `axes` (scipy's rules): the other axes
    are batch axes, equal or broadcast (size 1) between in1 and in2."""
    in1, in2 = np.asarray(in1), np.asarray(in2)
    if mode not in ("full", "same", "valid"):
        raise ValueError("acceptable mode flags are 'valid', 'same', or 'full'")
    if in1.ndim == in2.ndim == 0:
        return in1 * in2
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if in1.size == 0 or in2.size == 0:
        return np.array([], dtype=np.result_type(in1, in2))
    nd = in1.ndim
    if axes is None:
        axes = list(range(nd))
    else:
        axes = np.atleast_1d(axes)
        if axes.size == 0:
            raise ValueError("when provided, axes cannot be empty")
        if axes.ndim > 1 or not np.issubdtype(axes.dtype, np.integer):
            raise ValueError("axes must be a scalar or iterable of integers")
        axes = axes.tolist()
        if any(not -nd <= a < nd for a in axes):
            raise ValueError("axes exceeds dimensionality of input")
        axes = [a % nd for a in axes]
        if len(set(axes)) != len(axes):
            raise ValueError("all axes must be unique")
    # axes where one side has size 1 and the other not are broadcast, not
    # convolved, as scipy does
    axes = [a for a in axes if in1.shape[a] != 1 and in2.shape[a] != 1]
    other = [a for a in range(nd) if a not in axes]
    for a in other:
        if in1.shape[a] != in2.shape[a] and in1.shape[a] != 1 and in2.shape[a] != 1:
            raise ValueError(f"incompatible shapes for in1 and in2: {in1.shape} and {in2.shape}")
    if not axes:
        return in1 * in2
    if len(axes) > 3:
        raise ValueError(f"tileconv: at most 3 convolved axes, got {len(axes)}")
    nb = len(other)
    dst = list(range(nb, nd))
    x = np.moveaxis(in1, axes, dst)
    w = np.moveaxis(in2, axes, dst)
    bshape = np.broadcast_shapes(x.shape[:nb], w.shape[:nb])
    x = np.broadcast_to(x, bshape + x.shape[nb:])
    w = np.broadcast_to(w, bshape + w.shape[nb:])
    if mode == "valid":
        s1, s2 = x.shape[nb:], w.shape[nb:]
        if not (all(a >= b for a, b in zip(s1, s2)) or all(a <= b for a, b in zip(s1, s2))):
            raise ValueError("For 'valid' mode, one must be at least as large as the other in "
                             "every dimension")
    parts = [_nd(x[i], w[i], mode, _CONVOLVE, _FFT_ALGO) for i in np.ndindex(*bshape)]
    y = np.stack(parts).reshape(bshape + parts[0].shape) if bshape else parts[0]
    return np.moveaxis(y, dst, axes)


def fftconvolve(in1, in2, mode="full", axes=None):
    """scipy.signal.fftconvolve."""
    return _freq_axes(in1, in2, mode, axes)


def oaconvolve(in1, in2, mode="full", axes=None):
    """scipy.signal.oaconvolve: tileconv's FFT works in overlap-save blocks."""
    return _freq_axes(in1, in2, mode, axes)


def _same_2d(full, shape, mshape, kind):
    """convolve2d's 'same' window of the full result; correlate2d's sits at
    m // 2 rather than (m - 1) // 2 along axes of even mask size m (scipy
    runs the convolution code on the unflipped mask)."""
    if kind == _CONVOLVE:
        return _centered(full, shape)
    start = [m // 2 for m in mshape]
    return full[tuple(slice(s, s + n) for s, n in zip(start, shape))]


def _conv2d(in1, in2, mode, boundary, fillvalue, kind):
    in1, in2 = np.asarray(in1), np.asarray(in2)
    if in1.ndim != 2 or in2.ndim != 2:
        raise ValueError("convolve2d inputs must both be 2-D arrays")
    if mode not in ("full", "same", "valid"):
        raise ValueError("Acceptable mode flags are 'valid', 'same', or 'full'.")
    if boundary not in ("fill", "pad", "wrap", "circular", "symm", "symmetric"):
        raise ValueError("Acceptable boundary flags are 'fill', 'circular' (or 'wrap'), and "
                         "'symmetric' (or 'symm').")
    fv = np.asarray(fillvalue)
    if fv.size != 1:
        raise ValueError("`fillvalue` must be scalar or an array with one element.")
    rdt = np.result_type(in1, in2)
    if np.iscomplexobj(fv) and rdt.kind != "c":
        raise ValueError("could not cast `fillvalue` directly to the output type")
    fillvalue = fv.reshape(()).item()
    if mode == "valid":
        return _nd(in1, in2, "valid", kind, None)
    if boundary in ("fill", "pad") and fillvalue == 0:
        if mode == "same":
            return _same_2d(_nd(in1, in2, "full", kind, None), in1.shape, in2.shape, kind)
        return _nd(in1, in2, mode, kind, None)
    # the boundary as an explicit extension, then 'valid' = full (or same)
    m0, m1 = in2.shape
    pads = ((m0 - 1, m0 - 1), (m1 - 1, m1 - 1))
    if boundary in ("fill", "pad"):
        ext = np.pad(in1, pads, mode="constant", constant_values=fillvalue)
    elif boundary in ("wrap", "circular"):
        ext = np.pad(in1, pads, mode="wrap")
    else:
        ext = np.pad(in1, pads, mode="symmetric")
    full = _nd(ext, in2, "valid", kind, None)
    return full if mode == "full" else _same_2d(full, in1.shape, in2.shape, kind)


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """scipy.signal.convolve2d."""
    return _conv2d(in1, in2, mode, boundary, fillvalue, _CONVOLVE)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """scipy.signal.correlate2d."""
    return _conv2d(in1, in2, mode, boundary, fillvalue, _CORRELATE)
