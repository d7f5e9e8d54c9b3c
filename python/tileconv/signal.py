"""tileconv.signal - scipy.signal's N-D convolution and correlation on
tileconv: convolve, correlate, fftconvolve, oaconvolve, convolve2d,
correlate2d, with scipy's signatures and results (tests/python/test_signal.py
checks them against scipy).

method: 'auto' and 'direct' let tileconv's planner choose (its direct,
separable, low-rank or FFT algorithms, by cost: the planner may take the
FFT for a large mask even under 'direct'), 'fft' forces the FFT algorithm
(cpu.filter.fft). fftconvolve and oaconvolve always use the FFT
(tileconv's FFT is overlap-save in blocks, which is what oaconvolve asks
for). Up to 3 convolved axes; fftconvolve / oaconvolve take `axes`, the
other axes being batch axes (broadcast as scipy does).

Device arrays (CuPy arrays, torch CUDA tensors): every function runs on
the device with the result of in1's framework (in2 may be on the device
or the host; it is the library's mask, copied to the host for the plan);
padding, slicing, batching and casts use the framework's arrays.
method='fft', fftconvolve and oaconvolve take cuda.filter.fft there in
float32 and float64 (float16: the planner's choice), and the NaN / inf
warning is not checked (it would need a device -> host transfer). float16 inputs give
float16 results, computed with float32 accumulation (as cupyx), on the
host too (NumPy float16; fftconvolve / oaconvolve return float32 there,
scipy.fft's type).

scipy_dtypes (module attribute, default False): True refuses, with
scipy's and cupyx's ValueError, what their direct paths refuse: float16
and bool results of 2 or more dimensions in convolve / correlate (method
'auto' or 'direct') and in convolve2d / correlate2d. CuPy's own signal
tests require that refusal (tests/python/run_cupyx_suites.py sets it);
by default tileconv computes them.

Results are C-contiguous arrays (the 'same' and 'valid' windows and the
batch axes of fftconvolve / oaconvolve copied out), as scipy's and
cupyx's are.
"""
import math
import warnings

import numpy as np

from . import _core
from . import _gpu
from .ndimage import _cache, _cache_lock, _cache_put, _host, _f16_native
from .ndimage import _F16_REFUSED, _copy_into

__all__ = ["convolve", "correlate", "fftconvolve", "oaconvolve", "convolve2d", "correlate2d"]

scipy_dtypes = False  # True: refuse float16 / bool where scipy's direct path does

_CONVOLVE, _CORRELATE = 0, 1
_FULL, _VALID = 1, 2
_FFT_ALGO = "cpu.filter.fft"


def _plan(x, mask, kind, output, algo):
    key = ("signal", x.dtype.char, x.shape, mask.shape, mask.tobytes(), kind, output, algo)
    with _cache_lock:
        p = _cache.get(key)
        if p is not None:
            _cache.move_to_end(key)
            return p
    p = _core.FilterPlan(x.shape, (0,) * x.ndim, (0,) * x.ndim, x.ndim, mask, kind, output, 0,
                         0.0, (0,) * x.ndim, 0, algo)
    _cache_put(key, p)
    return p


def _real_full_or_valid(x, w, kind, output, algo):
    """x, w real arrays of equal rank <= 3; returns full or valid: float32
    when both are float32; float16 when their result type is (float16
    with float16, int8, uint8 or bool: values float16 holds exactly),
    computed by a float16 plan (float32 accumulation, rounded once; a plan
    that refuses float16 is computed in float32, cast once); else
    float64."""
    if np.result_type(x, w) == np.float16:
        try:
            return _real_in(x, w, kind, output, algo, np.float16)
        except (RuntimeError, ValueError, TypeError, NotImplementedError):
            return _real_in(x, w, kind, output, algo, np.float32).astype(np.float16)
    dt = np.float32 if x.dtype == np.float32 and w.dtype == np.float32 else np.float64
    return _real_in(x, w, kind, output, algo, dt)


def _real_in(x, w, kind, output, algo, dt):
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


def _dense(a):
    """a as a C-contiguous array of its framework (a copy where it is a
    strided window)."""
    be = _gpu.backend(a)
    return np.ascontiguousarray(a) if be is None else be.contiguous(a)


def _centered(arr, newshape):
    start = [(c - n) // 2 for c, n in zip(arr.shape, newshape)]
    return _dense(arr[tuple(slice(s, s + n) for s, n in zip(start, newshape))])


def _refuse_as_scipy(in1, in2, name):
    """scipy_dtypes: the ValueError scipy's direct N-D path (and cupyx's)
    raises where the operands' result type is float16 or bool and they
    have 2 or more dimensions."""
    if not scipy_dtypes:
        return
    (s1, d1), (s2, d2) = _shape_dtype(in1), _shape_dtype(in2)
    dt, nd = np.result_type(d1, d2), max(len(s1), len(s2))
    if nd >= 2 and (dt == np.float16 or dt.kind == "b"):
        raise ValueError(f"tileconv.signal.{name}: {dt} operands of {nd} dimensions are "
                         "refused as scipy refuses them (tileconv.signal.scipy_dtypes is "
                         "True; False computes them, float32 accumulation)")


def _result_dtype(in1, in2):
    return np.result_type(in1, in2)


def _dev_of(in1, in2):
    """The Backend of the device array among in1, in2 (None: both host)."""
    return _gpu.backend(in1) or _gpu.backend(in2)


def _to_dev(be, like, a):
    """a as a device array of be: a host array is copied to the device
    (the other operand, a device array, chose it)."""
    return a if _gpu.backend(a) is be else be.to_device(like, np.asarray(a))


_F32F64 = (np.dtype(np.float32), np.dtype(np.float64))


def _mask_of(be, m, dt, algo):
    """The mask operand for _exec_dev: a real device array of be stays on
    the device where the plan takes it per call (float32 / float64, the
    planner's choice or the FFT filter, which transforms each call's mask:
    TC_PLAN_MASK_AT_EXECUTE, no host copy, no wait); anything else as a
    host array."""
    if (_gpu.backend(m) is be and dt in _F32F64 and algo in (None, _FFT_ALGO)
            and be.dtype(m).kind in "biuf" and be.dtype(m) != np.longdouble):
        return m
    return _host(m)


def _exec_dev_mask(be, x, w, kind, output, dt, algo=None):
    """x and the mask w device arrays of be, dtype dt (float32 / float64):
    full or valid by a mask-at-execute plan keyed on the mask's shape
    (algo: the FFT filter forced, which transforms each call's mask)."""
    xc = be.contiguous(be.astype(x, dt))
    wc = be.contiguous(be.astype(w, dt))
    xs, ms = be.shape(xc), be.shape(wc)
    if algo is not None and be.plan_backend == 1:
        algo = "cuda.filter.fft"
    key = ("signal-dev-mexec", be.name, be.plan_backend, be.device_key(xc), dt.char, xs, ms,
           kind, output, algo)
    with _cache_lock:
        p = _cache.get(key)
    with be.on_device(xc):
        if p is None:
            p = _core.FilterPlan(xs, (0,) * len(xs), (0,) * len(xs), len(xs), np.empty(ms, dt),
                                 kind, output, 0, 0.0, (0,) * len(xs), 0, algo, be.plan_backend,
                                 None, 1)
            _cache_put(key, p)
        y = be.empty(xc, tuple(p.out_shape), dt)
        p.execute_ptr(be.ptr(xc), be.ptr(y), be.stream(xc), be.ptr(wc))
    return y


def _exec_dev(be, x, w, kind, output, algo, dt):
    """x (device) with mask w (host; or a device array of be, _mask_of) in
    dtype dt: full or valid."""
    if _gpu.backend(w) is be:
        return _exec_dev_mask(be, x, w, kind, output, dt, algo)
    if dt == np.float16 and not _f16_native(be):
        dt = np.dtype(np.float32)
    xc = be.contiguous(be.astype(x, dt))
    m = np.ascontiguousarray(w, dtype=np.float32 if dt == np.float16 else dt)
    if algo is not None and be.plan_backend == 1:
        # the GPU's FFT filter takes float32 and float64; float16 (staged
        # to float32 by the core) takes what the planner finds
        algo = "cuda.filter.fft" if dt in (np.float32, np.float64) else None
    thr = 0
    xs = be.shape(xc)
    key = ("signal-dev", be.name, be.plan_backend, be.device_key(xc), dt.char, xs, m.shape,
           m.tobytes(), kind, output, algo)
    with _cache_lock:
        p = _cache.get(key)
    try:
        with be.on_device(xc):
            if p is None:
                args = (xs, (0,) * len(xs), (0,) * len(xs), len(xs), m, kind, output, 0, 0.0,
                        (0,) * len(xs), thr, algo, be.plan_backend)
                p = _core.FilterPlan(*(args + (("float16",) if dt == np.float16 else ())))
                _cache_put(key, p)
            y = be.empty(xc, tuple(p.out_shape), dt)
            p.execute_ptr(be.ptr(xc), be.ptr(y), be.stream(xc))
    except (RuntimeError, ValueError, TypeError, NotImplementedError):
        if dt != np.float16:
            raise
        _F16_REFUSED.add(be.name)
        return _exec_dev(be, x, w, kind, output, algo, np.dtype(np.float32))
    return y


def _shape_dtype(a):
    be = _gpu.backend(a)
    if be is not None:
        return be.shape(a), be.dtype(a)
    a = np.asarray(a)
    return a.shape, a.dtype


def _parts(a, dt):
    """(real, imag) of a device or host array; imag None for real ones."""
    if dt.kind != "c":
        return a, None
    if _gpu.backend(a) is not None:
        return a.real, a.imag
    return np.real(a), np.imag(a)


def _nd_dev(be, in1, in2, mode, kind, algo):
    """_nd for device arrays: the larger operand is the data on the device,
    the other the library's mask, copied to the host (a device in2 of at
    least in1's size stays on the device: convolution commutes, and a
    correlation is the convolution with the flipped mask)."""
    in1 = _to_dev(be, in2, in1)
    s1, d1 = be.shape(in1), be.dtype(in1)
    s2, d2 = _shape_dtype(in2)
    if mode not in ("full", "same", "valid"):
        raise ValueError("acceptable mode flags are 'valid', 'same', or 'full'")
    rdt = np.result_type(d1, d2)
    if len(s1) == len(s2) == 0:
        v = _host(in2).item()
        return be.astype(in1 * (np.conj(v) if kind == _CORRELATE else v), rdt)
    if len(s1) != len(s2):
        raise ValueError("in1 and in2 should have the same dimensionality")
    if math.prod(s1) == 0 or math.prod(s2) == 0:
        return be.empty(in1, (0,), rdt)
    if len(s1) > 3:
        raise ValueError(f"tileconv: at most 3 dimensions, got {len(s1)}")
    big1 = all(a >= b for a, b in zip(s1, s2))
    big2 = all(a <= b for a, b in zip(s1, s2))
    if mode == "valid" and not (big1 or big2):
        raise ValueError("For 'valid' mode, one must be at least as large as the other in "
                         "every dimension")
    if d1.kind == "c" or d2.kind == "c":
        ar, ai = _parts(in1, d1)
        br, bi = _parts(in2, d2)
        if kind == _CORRELATE and bi is not None:
            bi = -bi  # in2 conjugated, as scipy
        def f(p, q):  # noqa: E306
            return None if p is None or q is None else _nd_dev(be, p, q, mode, kind, algo)
        re, im = f(ar, br), None
        t = f(ai, bi)
        if t is not None:
            re = re - t
        for t in (f(ar, bi), f(ai, br)):
            if t is not None:
                im = t if im is None else im + t
        return be.astype(re + 1j * im, rdt)
    if rdt == np.float16:
        dt = np.dtype(np.float16)
    elif rdt == np.float32:
        dt = np.dtype(np.float32)
    else:
        dt = np.dtype(np.float64)
    out = _FULL if mode != "valid" else _VALID
    swap = (big2 and s1 != s2) if mode == "valid" else math.prod(s2) > math.prod(s1)
    if swap:
        data = _to_dev(be, in1, in2)
        if kind == _CORRELATE:
            data = be.flip(data)
        y = _exec_dev(be, data, _mask_of(be, in1, dt, algo), _CONVOLVE, out, algo, dt)
    else:
        y = _exec_dev(be, in1, _mask_of(be, in2, dt, algo), kind, out, algo, dt)
    if mode == "same":
        y = _centered(y, s1)
    if rdt.kind in "iub":
        return be.astype(be.rint(y), rdt)
    return be.astype(y, rdt)


def _nd(in1, in2, mode, kind, algo):
    be = _dev_of(in1, in2)
    if be is not None:
        return _nd_dev(be, in1, in2, mode, kind, algo)
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


def _algo_of(method, in1, in2):
    if _dev_of(in1, in2) is not None:
        return _algo(method)  # no NaN scan of device arrays
    return _algo(method, np.asarray(in1), np.asarray(in2))


def _nd_method(in1, in2, mode, method, kind):
    """convolve / correlate: method's algorithm, scipy's refusals on the
    direct path (scipy_dtypes), then _nd."""
    algo = _algo_of(method, in1, in2)
    if algo is None:
        _refuse_as_scipy(in1, in2, "convolve" if kind == _CONVOLVE else "correlate")
    return _nd(in1, in2, mode, kind, algo)


def convolve(in1, in2, mode="full", method="auto"):
    """scipy.signal.convolve."""
    return _nd_method(in1, in2, mode, method, _CONVOLVE)


def correlate(in1, in2, mode="full", method="auto"):
    """scipy.signal.correlate (in2 conjugated for complex inputs, as scipy)."""
    return _nd_method(in1, in2, mode, method, _CORRELATE)


def _fft_type(a):
    b = _gpu.backend(a)
    dt = b.dtype(a) if b is not None else a.dtype
    to = np.float32 if dt == np.float16 else np.float64 if dt.kind in "iub" else None
    if to is None:
        return a
    return b.astype(a, to) if b is not None else a.astype(to)


def _freq_axes(in1, in2, mode, axes):
    """fftconvolve / oaconvolve over `axes` (scipy's rules): the other axes
    are batch axes, equal or broadcast (size 1) between in1 and in2."""
    be = _dev_of(in1, in2)
    if be is not None:
        # device: in1 on the device; in2 where it is (per slice, _nd_dev
        # takes the smaller operand of each to the host as the mask)
        in1 = _to_dev(be, in2, in1)
        if _gpu.backend(in2) is None:
            in2 = np.asarray(in2)
            mv2, bc2 = np.moveaxis, np.broadcast_to
        else:
            mv2, bc2 = be.moveaxis, be.broadcast_to
        xp_moveaxis, xp_broadcast, xp_stack = be.moveaxis, be.broadcast_to, be.stack
        size1 = math.prod(be.shape(in1))
        s2, d2 = _shape_dtype(in2)
        size2 = math.prod(s2)
        rdt = np.result_type(be.dtype(in1), d2)
    else:
        in1, in2 = np.asarray(in1), np.asarray(in2)
        xp_moveaxis, xp_broadcast, xp_stack = np.moveaxis, np.broadcast_to, np.stack
        mv2, bc2 = np.moveaxis, np.broadcast_to
        size1, size2 = in1.size, in2.size
    if mode not in ("full", "same", "valid"):
        raise ValueError("acceptable mode flags are 'valid', 'same', or 'full'")
    if in1.ndim == in2.ndim == 0:
        return in1 * (in2 if be is None else _to_dev(be, in1, in2))
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if size1 == 0 or size2 == 0:
        if be is not None:
            return be.empty(in1, (0,), rdt)
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
    s1 = tuple(in1.shape)
    if not axes:
        y = in1 * (in2 if be is None else _to_dev(be, in1, in2))
        return _centered(y, s1) if mode == "same" else _dense(y)
    # scipy.fft's types, as scipy's (and cupyx's) fftconvolve / oaconvolve
    # return them where they transform: float16 computed as float32,
    # integers and bool as float64
    in1, in2 = _fft_type(in1), _fft_type(in2)
    if len(axes) > 3:
        raise ValueError(f"tileconv: at most 3 convolved axes, got {len(axes)}")
    nb = len(other)
    dst = list(range(nb, nd))
    x = xp_moveaxis(in1, axes, dst)
    w = mv2(in2, axes, dst)
    bshape = np.broadcast_shapes(tuple(x.shape[:nb]), tuple(w.shape[:nb]))
    x = xp_broadcast(x, bshape + tuple(x.shape[nb:]))
    w = bc2(w, bshape + tuple(w.shape[nb:]))
    if mode == "valid":
        v1, v2 = x.shape[nb:], w.shape[nb:]
        if not (all(a >= b for a, b in zip(v1, v2)) or all(a <= b for a, b in zip(v1, v2))):
            raise ValueError("For 'valid' mode, one must be at least as large as the other in "
                             "every dimension")
    parts = [_nd(x[i], w[i], mode, _CONVOLVE, _FFT_ALGO) for i in np.ndindex(*bshape)]
    y = xp_stack(parts).reshape(bshape + tuple(parts[0].shape)) if bshape else parts[0]
    y = xp_moveaxis(y, dst, axes)
    # 'same': in1's shape on every axis, the broadcast ones too (scipy)
    return _centered(y, s1) if mode == "same" else _dense(y)


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
    return _dense(full[tuple(slice(s, s + n) for s, n in zip(start, shape))])


def _pad_dev(be, a, pads, boundary, fillvalue):
    """np.pad of a device array (fill / wrap / symmetric), on the device:
    index gathering per axis for wrap and symmetric, a filled array with
    the input copied in for fill."""
    shape = be.shape(a)
    if boundary in ("fill", "pad"):
        ext = be.empty(a, tuple(n + lo + hi for n, (lo, hi) in zip(shape, pads)), be.dtype(a))
        be.copy_(ext, fillvalue)
        inner = ext[tuple(slice(lo, lo + n) for n, (lo, _) in zip(shape, pads))]
        _copy_into(inner, a)
        return ext
    npmode = "wrap" if boundary in ("wrap", "circular") else "symmetric"
    for ax, (n, p) in enumerate(zip(shape, pads)):
        a = be.take(a, np.pad(np.arange(n), p, mode=npmode), ax)
    return a


def _conv2d(in1, in2, mode, boundary, fillvalue, kind):
    _refuse_as_scipy(in1, in2, "convolve2d" if kind == _CONVOLVE else "correlate2d")
    be = _dev_of(in1, in2)
    if be is not None:
        in1 = _to_dev(be, in2, in1) if _gpu.backend(in1) is None else in1
        # in2 on the device of in1's framework stays there (_nd's
        # mask-at-execute plans read it per call: no copy, no wait)
        if _gpu.backend(in2) is not be:
            in2 = _host(in2)
    else:
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
    rdt = (np.result_type(in1, in2) if be is None else
           np.result_type(be.dtype(in1), be.dtype(in2) if _gpu.backend(in2) is be else in2.dtype))
    if np.iscomplexobj(fv) and rdt.kind != "c":
        raise ValueError("could not cast `fillvalue` directly to the output type")
    fillvalue = fv.reshape(()).item()
    if mode == "valid":
        y = _nd(in1, in2, "valid", kind, None)
        s1, s2 = tuple(in1.shape), tuple(in2.shape)
        if kind == _CORRELATE and rdt.kind == "c" and not all(a >= b for a, b in zip(s1, s2)):
            # scipy's correlate2d swaps the inputs when in2 is the larger and
            # correlates with the conjugate of in1: the conjugate of the
            # correlation (scipy.signal.correlate gives the correlation)
            y = be.conj(y) if be is not None else np.conj(y)
        return y
    if boundary in ("fill", "pad") and fillvalue == 0:
        if mode == "same":
            return _same_2d(_nd(in1, in2, "full", kind, None), in1.shape, in2.shape, kind)
        return _nd(in1, in2, mode, kind, None)
    # the boundary as an explicit extension, then 'valid' = full (or same)
    m0, m1 = in2.shape
    pads = ((m0 - 1, m0 - 1), (m1 - 1, m1 - 1))
    if be is not None:
        ext = _pad_dev(be, in1, pads, boundary, fillvalue)
    elif boundary in ("fill", "pad"):
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
