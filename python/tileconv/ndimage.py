"""tileconv.ndimage - scipy.ndimage's convolution filters on tileconv.

Same signatures and results as scipy.ndimage (checked against it by
tests/python/test_ndimage.py): convolve, correlate, convolve1d,
correlate1d, uniform_filter, uniform_filter1d, gaussian_filter,
gaussian_filter1d, sobel, prewitt, laplace, generic_laplace,
gaussian_laplace, generic_gradient_magnitude, gaussian_gradient_magnitude
(the last four composed from the 1-D passes as scipy composes them).

dtypes as scipy: float32 and float64 are computed natively in their own
precision (scipy computes in float64, so float32 results differ by float32
rounding); float16 inputs (which scipy refuses, and cupyx takes) give
float16, accumulated in float32 and rounded once per pass (a float16 plan
where the weights are float16 values, else float32 with float32 weights,
cast once; an output= of another dtype gets the float32 result cast into
it); integer and bool inputs are computed in float64 and cast to the
output dtype as scipy casts (truncation toward zero); complex inputs are
filtered as real and imaginary passes. Filters over more than three axes
at once are not supported (a ValueError says so) unless the input has
size 1 along the extra ones (the weights collapse there); 1-D filters work
along any axis of arrays of up to 8 dimensions.

Device arrays (CuPy arrays, torch CUDA tensors; weights on the device or
the host): every function runs on the device, end to end, intermediate
arrays allocated by the input's framework, the result of the input's kind
(an `output=` device array of the same framework is filled in place; a
host `output=` array with a device input is a TypeError). Only the mask
is copied to the host (the library takes it there at plan time). The
array-kind dispatch is _gpu.py's. float16 device arrays give float16
results computed with float32 accumulation and float32 weights, as cupyx
does (a float16 plan where the weights are float16 values, else the
input converted to float32 on the device, filtered, cast once), the same
rule as on the host.
"""
import math
import numbers
import operator
import warnings
from collections import OrderedDict
import threading

import numpy as np

from . import _core
from . import _gpu

__all__ = ["convolve", "correlate", "convolve1d", "correlate1d", "uniform_filter",
           "uniform_filter1d", "gaussian_filter", "gaussian_filter1d", "sobel", "prewitt",
           "laplace", "generic_laplace", "gaussian_laplace", "generic_gradient_magnitude",
           "gaussian_gradient_magnitude"]

_MODES = {"constant": 0, "grid-constant": 0, "nearest": 1, "reflect": 2, "grid-mirror": 2,
          "mirror": 3, "wrap": 4, "grid-wrap": 4}
_CONVOLVE, _CORRELATE = 0, 1
_MAX_DIMS = 8

# plans cached by problem: shape, strides, dtype, mask bytes, mode, cval,
# origin, kind; bounded, shared by threads
_cache = OrderedDict()
_cache_lock = threading.Lock()
_CACHE_SIZE = 64
threads = 0  # 0: every CPU the process may use


def _dtype(a):
    """a's element type as a NumPy dtype (device arrays included)."""
    be = _gpu.backend(a)
    return a.dtype if be is None else be.dtype(a)


def _asarray(a):
    """Device arrays as they are, anything else through np.asarray."""
    return a if _gpu.backend(a) is not None else np.asarray(a)


def _host(w):
    """Weights as a NumPy array: a device array is copied to the host (a
    mask is small; a plan made with its mask takes it on the host). The
    device weights of correlate / convolve stay on the device instead
    (_correlate_dev_weights)."""
    be = _gpu.backend(w)
    return np.asarray(w) if be is None else be.to_host(w)


def _check_dtype(a):
    """The input types scipy.ndimage's C code accepts (longdouble and
    object arrays are refused, as scipy refuses them), and float16, host
    and device arrays alike, as cupyx takes it (scipy refuses it)."""
    dt = _dtype(a)
    if dt.kind not in "biufc" or dt in (np.longdouble, np.clongdouble):
        raise RuntimeError("array type not supported")


def _mode_code(mode):
    if not isinstance(mode, str):
        raise RuntimeError("boundary mode not supported")
    try:
        return _MODES[mode]
    except KeyError:
        raise RuntimeError("boundary mode not supported") from None


def _cache_put(key, p):
    """Caches plan p under key, the least recently used leaving past
    _CACHE_SIZE."""
    with _cache_lock:
        _cache[key] = p
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)


def _plan(x, y, mask, nspatial, kind, mode, cval, origin, algo=None, direct=False):
    """direct: TC_PLAN_DIRECT (integer data: direct sums only, exact in
    float64 as scipy's; an FFT's 59.9999 would truncate to 59)."""
    isz = x.itemsize
    key = (x.dtype.char, x.shape, tuple(s // isz for s in x.strides),
           tuple(s // isz for s in y.strides), nspatial, mask.shape, mask.tobytes(), kind, mode,
           float(cval), tuple(origin), threads, algo, direct)
    with _cache_lock:
        p = _cache.get(key)
        if p is not None:
            _cache.move_to_end(key)
            return p
    p = _core.FilterPlan(x.shape, tuple(s // isz for s in x.strides),
                         tuple(s // isz for s in y.strides), nspatial, mask, kind, 0, mode,
                         float(cval), tuple(int(o) for o in origin), int(threads), algo, 0, None,
                         False, bool(direct))
    _cache_put(key, p)
    return p


def _aligned(a):
    return a.flags.aligned and all(s % a.itemsize == 0 for s in a.strides)


def _filter_real(x, mask, out, nspatial, kind, mode, cval, origin, algo=None, direct=False):
    """x: float32/64 ndarray; mask: the same dtype, rank nspatial; out: an
    ndarray of x's shape and dtype (any strides); algo: a forced algorithm
    (None: the planner's choice)."""
    if not _aligned(x):
        x = np.ascontiguousarray(x)
    # the C library needs disjoint input and output (scipy copies too)
    y = out if _aligned(out) and not np.may_share_memory(x, out) else np.empty(x.shape, x.dtype)
    mask = np.ascontiguousarray(mask, dtype=x.dtype)
    if x.size == 0:
        return out
    _plan(x, y, mask, nspatial, kind, mode, cval, origin, algo, direct).execute(x, y)
    if y is not out:
        out[...] = y
    return out


def _f16_exact(w):
    """Whether every weight is a float16 value: a float16 plan (float32
    accumulation, the mask as float16) then computes what a float32 plan
    does on the same values, rounded once."""
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.array_equal(w.astype(np.float16).astype(w.dtype), w))


def _host_work_dtype(idt, mask, odt):
    """The dtype a host input is filtered in: float64 for an integer or
    bool output (scipy's float64 sums, then truncated: a float32 sum of
    97.99999 would round to 98); float32 for float32; for float16, float16
    (a float16 plan: float32 accumulation, one rounding at the store)
    where the output is float16 and the weights are float16 values, else
    float32 (cast once into the output); float64 for the rest (float64,
    integers, bool)."""
    if np.dtype(odt).kind in "iub":
        return np.dtype(np.float64)
    if idt == np.float32:
        return np.dtype(np.float32)
    if idt == np.float16:
        if odt == np.float16 and _f16_exact(mask):
            return np.dtype(np.float16)
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def _filter_host(input, mask, out, nspatial, kind, mode, cval, origin, axis=None, algo=None):
    """Host arrays: out = filter(input) computed in _host_work_dtype (a
    plan that refuses float16 is computed in float32, cast once). axis: a
    1-D filter along that axis (views with it moved last)."""
    wdt = _host_work_dtype(input.dtype, mask, out.dtype)
    if wdt == np.float16:
        try:
            return _filter_host_in(input, mask, out, nspatial, kind, mode, cval, origin, axis,
                                   wdt, algo)
        except (RuntimeError, ValueError, TypeError, NotImplementedError):
            wdt = np.dtype(np.float32)
    return _filter_host_in(input, mask, out, nspatial, kind, mode, cval, origin, axis, wdt, algo)


def _filter_host_in(input, mask, out, nspatial, kind, mode, cval, origin, axis, wdt, algo=None):
    x = input if input.dtype == wdt else input.astype(wdt)
    native = out.dtype == wdt
    y = out if native else np.empty(input.shape, wdt)
    xv, yv = (x, y) if axis is None else (np.moveaxis(x, axis, -1), np.moveaxis(y, axis, -1))
    _filter_real(xv, np.ascontiguousarray(mask, dtype=wdt), yv, nspatial, kind, mode, cval,
                 origin, algo, input.dtype.kind in "iub" or out.dtype.kind in "iub")
    if not native:
        _store(y, out)
    return out


def _work_dtype(dtype, weights_dtype=np.float64):
    if dtype == np.float32 and weights_dtype != np.float64:
        return np.float32
    if dtype == np.float32:
        return np.float32
    return np.float64


def _get_output(output, input, shape=None, complex_output=False):
    """scipy.ndimage's output rules (None, an ndarray, a dtype or its name),
    warnings and errors included."""
    be = _gpu.backend(input)
    if be is not None:
        return _get_output_dev(be, output, input, shape, complex_output)
    shape = input.shape if shape is None else tuple(shape)
    if output is None:
        dt = input.dtype
        if complex_output:
            dt = np.promote_types(dt, np.complex64)
        return np.zeros(shape, dtype=dt)
    if isinstance(output, (type, np.dtype)):
        if complex_output and np.dtype(output).kind != "c":
            warnings.warn("promoting specified output dtype to complex")
            output = np.promote_types(output, np.complex64)
        return np.zeros(shape, dtype=output)
    if isinstance(output, str):
        output = np.sctypeDict[output]
        if complex_output and np.dtype(output).kind != "c":
            raise RuntimeError("output must have complex dtype")
        return np.zeros(shape, dtype=output)
    if not isinstance(output, np.ndarray):
        raise TypeError("output must be None, a dtype or an ndarray")
    if output.shape != shape:
        raise RuntimeError("output shape not correct")
    if complex_output and output.dtype.kind != "c":
        raise RuntimeError("output must have complex dtype")
    return output


def _is_dtype_arg(o):
    return isinstance(o, (type, np.dtype, str)) or (
        type(o).__module__.startswith("torch") and type(o).__name__ == "dtype")


def _get_output_dev(be, output, input, shape, complex_output):
    """_get_output for a device input: new arrays of its framework; an
    output array must be a device array of the same framework."""
    shape = be.shape(input) if shape is None else tuple(shape)
    if output is None:
        dt = be.dtype(input)
        if complex_output:
            dt = np.promote_types(dt, np.complex64)
        return be.empty(input, shape, dt)
    if _is_dtype_arg(output):
        if isinstance(output, str):
            dt = np.dtype(np.sctypeDict[output])
            if complex_output and dt.kind != "c":
                raise RuntimeError("output must have complex dtype")
        else:
            dt = _gpu.np_dtype(output)
            if complex_output and dt.kind != "c":
                warnings.warn("promoting specified output dtype to complex")
                dt = np.promote_types(dt, np.complex64)
        return be.empty(input, shape, dt)
    if _gpu.backend(output) is not be:
        raise TypeError(f"tileconv: output= is a {type(output).__module__}."
                        f"{type(output).__name__} but the input is a {be.name} device array; "
                        "pass a device array of the input's framework, a dtype or None")
    if be.shape(output) != shape:
        raise RuntimeError("output shape not correct")
    if complex_output and be.dtype(output).kind != "c":
        raise RuntimeError("output must have complex dtype")
    return output


def _copy_into(output, src):
    be = _gpu.backend(output)
    if be is None:
        output[...] = src
    else:
        be.copy_(output, src)
    return output


def _store(result, output):
    """Casts result into output as scipy's C loops do (truncation for ints)."""
    be = _gpu.backend(output)
    if be is not None:
        odt, rdt = be.dtype(output), be.dtype(result)
        if odt.kind in "iub" and rdt.kind == "f":
            t = be.trunc(result)
            if odt.kind == "b":
                t = t != 0
            else:
                # through int64, as NumPy's cast on the host wraps (-6.0 ->
                # 250 in uint8, 2^64 - 6 in uint64; a device float -> uint8
                # cast saturates); sums of 2^63 or more are out of its range
                t = be.astype(t, np.int64)
            be.copy_(output, t)
        else:
            be.copy_(output, result)
        return output
    if output.dtype.kind in "iub" and result.dtype.kind == "f":
        if output.dtype.kind == "b":  # C's (npy_bool)(double): truncate, then != 0
            output[...] = np.trunc(result) != 0
        else:
            output[...] = np.trunc(result).astype(output.dtype, casting="unsafe")
    else:
        output[...] = result
    return output


def _normalize_origins(origin, ndim):
    if isinstance(origin, numbers.Integral):
        return [int(origin)] * ndim
    origin = [operator.index(o) for o in origin]
    if len(origin) != ndim:
        raise RuntimeError("sequence argument must have length equal to input rank")
    return origin


def _complex_parts(func, input, weights, output, cval):
    """Complex filtering as real passes, the combination scipy uses."""
    ci, cw = _dtype(input).kind == "c", weights.dtype.kind == "c"
    if ci and cw:
        func(input.real, weights.real, output.real, np.real(cval))
        output.real -= func(input.imag, weights.imag, None, np.imag(cval))
        func(input.real, weights.imag, output.imag, np.real(cval))
        output.imag += func(input.imag, weights.real, None, np.imag(cval))
    elif ci:
        func(input.real, weights, output.real, np.real(cval))
        func(input.imag, weights, output.imag, np.imag(cval))
    else:
        if np.iscomplexobj(cval):
            raise ValueError("Cannot provide a complex-valued cval when the input is real.")
        func(input, weights.real, output.real, cval)
        func(input, weights.imag, output.imag, cval)
    return output


# float16 device arrays: whether the extension's plans take float16
# (FilterPlan's dtype argument); a backend whose plans refuse it at run
# time is remembered and computed in float32 (cast back once)
_F16_REFUSED = set()


def _f16_native(be):
    return hasattr(_core.FilterPlan, "dtype") and be.name not in _F16_REFUSED


def _work_dtype_dev(dt, odt=None):
    """The dtype a device input is filtered in: float32, float16 (float32
    accumulation) or float64 (float64 and integers; and any input whose
    output odt is an integer or bool: scipy's float64 sums, truncated)."""
    if odt is not None and np.dtype(odt).kind in "iub":
        return np.dtype(np.float64)
    if dt == np.float32 or dt == np.float16:
        return np.dtype(dt)
    return np.dtype(np.float64)


def _plan_dev_key(be, x, shape, nspatial, mask, kind, mode, cval, origin, pdt, algo=None,
                  direct=False):
    thr = int(threads) if be.plan_backend == 0 else 0
    return ("dev", be.name, be.plan_backend, be.device_key(x), pdt.char, tuple(shape), nspatial,
            mask.shape, mask.tobytes(), kind, mode, float(cval), tuple(origin), thr, algo,
            bool(direct))


def _plan_dev(be, x, shape, nspatial, mask, kind, mode, cval, origin, pdt, algo=None,
              direct=False):
    """A dense plan for device arrays of be (CUDA; the CPU for the test
    double), cached as the host plans. algo: a forced algorithm (None: the
    planner's choice); direct: TC_PLAN_DIRECT (integer data, as _plan)."""
    thr = int(threads) if be.plan_backend == 0 else 0
    key = _plan_dev_key(be, x, shape, nspatial, mask, kind, mode, cval, origin, pdt, algo, direct)
    with _cache_lock:
        p = _cache.get(key)
        if p is not None:
            _cache.move_to_end(key)
            return p
    args = (tuple(shape), (0,) * len(shape), (0,) * len(shape), nspatial, mask, kind, 0, mode,
            float(cval), tuple(int(o) for o in origin), thr, algo, be.plan_backend)
    if direct:
        args += (None, False, True)
    elif pdt == np.float16:
        args += ("float16",)
    p = _core.FilterPlan(*args)
    _cache_put(key, p)
    return p


def _filter_dev(be, x, mask, out, nspatial, kind, mode, cval, origin, shape=None, algo=None,
                exact=False):
    """Device arrays: out = filter(x). x in its work dtype (float16 /
    float32 / float64, any layout: a dense copy on the device where it is
    not C-contiguous); mask a host ndarray of rank nspatial; out a device
    array of x's shape, any dtype and layout (written directly when it is
    dense, of x's dtype and apart from x; else through a temporary, cast
    as _store casts). shape: the dense shape the plan runs (a reshape of
    x's: the 1-D filters collapse the axes around theirs); algo: a forced
    algorithm (None: the planner's choice); exact: integer data (direct
    sums only, TC_PLAN_DIRECT: exact in float64, as scipy's)."""
    wdt = be.dtype(x)
    xs = be.shape(x)
    if math.prod(xs) == 0:
        return out
    if wdt == np.float16 and (not _f16_native(be) or not _f16_exact(np.asarray(mask))):
        # weights that are not float16 values: float32 weights and sums,
        # one rounding at the store (a float16 plan would round the mask)
        return _filter_dev(be, be.astype(x, np.float32), mask, out, nspatial, kind, mode, cval,
                           origin, shape, algo)
    xc = be.contiguous(x)
    direct = (be.dtype(out) == wdt and be.is_contiguous(out) and
              not _gpu.overlaps(be, xc, out))
    y = out if direct else be.empty(x, xs, wdt)
    m = np.ascontiguousarray(mask, dtype=np.float32 if wdt == np.float16 else wdt)
    try:
        with be.on_device(x):
            p = _plan_dev(be, x, xs if shape is None else shape, nspatial, m, kind, mode, cval,
                          origin, wdt, algo, exact)
            p.execute_ptr(be.ptr(xc), be.ptr(y), be.stream(x))
    except (RuntimeError, ValueError, TypeError, NotImplementedError):
        if wdt != np.float16:
            raise
        _F16_REFUSED.add(be.name)  # float16 plans refused here: float32 from now on
        return _filter_dev(be, be.astype(x, np.float32), mask, out, nspatial, kind, mode, cval,
                           origin, shape, algo)
    if not direct:
        _store(y, out)
    return out


def _plan_dev_mexec_key(be, x, shape, nspatial, mshape, kind, mode, cval, origin, pdt):
    thr = int(threads) if be.plan_backend == 0 else 0
    return ("dev-mexec", be.name, be.plan_backend, be.device_key(x), pdt.char, tuple(shape),
            nspatial, tuple(mshape), kind, mode, float(cval), tuple(origin), thr)


def _plan_dev_mexec(be, x, shape, nspatial, mshape, kind, mode, cval, origin, pdt):
    """A dense mask-at-execute plan (TC_PLAN_MASK_AT_EXECUTE) for device
    arrays of be: keyed on the mask's shape and dtype, never its values;
    each execute_ptr passes the mask's device address."""
    thr = int(threads) if be.plan_backend == 0 else 0
    key = _plan_dev_mexec_key(be, x, shape, nspatial, mshape, kind, mode, cval, origin, pdt)
    with _cache_lock:
        p = _cache.get(key)
        if p is not None:
            _cache.move_to_end(key)
            return p
    p = _core.FilterPlan(tuple(shape), (0,) * len(shape), (0,) * len(shape), nspatial,
                         np.empty(tuple(mshape), pdt), kind, 0, mode, float(cval),
                         tuple(int(o) for o in origin), thr, None, be.plan_backend, None, 1)
    _cache_put(key, p)
    return p


def _filter_dev_mask(be, x, w, out, nspatial, kind, mode, cval, origin, shape=None):
    """_filter_dev with the mask w a device array of be (dense, x's dtype,
    float32 / float64, rank nspatial): a mask-at-execute plan reads it on
    the device on the stream, with no host copy and no wait. shape: the
    dense shape the plan runs (as _filter_dev's)."""
    wdt = be.dtype(x)
    xs = be.shape(x)
    if math.prod(xs) == 0:
        return out
    xc = be.contiguous(x)
    direct = (be.dtype(out) == wdt and be.is_contiguous(out) and
              not _gpu.overlaps(be, xc, out) and not _gpu.overlaps(be, w, out))
    y = out if direct else be.empty(x, xs, wdt)
    with be.on_device(x):
        p = _plan_dev_mexec(be, x, xs if shape is None else shape, nspatial, be.shape(w), kind,
                            mode, cval, origin, wdt)
        p.execute_ptr(be.ptr(xc), be.ptr(y), be.stream(x), be.ptr(w))
    if not direct:
        _store(y, out)
    return out


def _correlate_dev_weights(be, input, weights, output, mode, cval, origin, kind):
    """correlate / convolve with input and weights device arrays of the same
    framework: the weights are cast and made dense on the device and read
    there by a mask-at-execute plan (no device -> host copy, so nothing
    waits for the stream). None for what this path does not take (complex
    or float16 arrays, other ranks, zero-size weight axes, more than 3
    filtered axes, arguments the full path must reject): the full path then."""
    dt, wt = be.dtype(input), be.dtype(weights)
    if (dt.kind not in "biuf" or dt in (np.float16, np.longdouble) or wt.kind not in "biuf"
            or wt == np.longdouble or not isinstance(mode, str) or mode not in _MODES):
        return None
    xs, ws = be.shape(input), be.shape(weights)
    if len(ws) != len(xs) or not 0 < len(xs) <= _MAX_DIMS or 0 in ws:
        return None
    try:
        float(cval)
        origins = _normalize_origins(origin, len(xs))
    except (TypeError, ValueError, RuntimeError):
        return None
    for o, s in zip(origins, ws):
        if not (-(s // 2) <= o + (s // 2) < s) or not (-(s // 2) <= o <= (s - 1) // 2):
            return None
    nsp, lead = len(xs), 0
    while nsp > 3 and ws[lead] == 1 and origins[lead] == 0:
        lead += 1
        nsp -= 1
    if nsp > 3:
        return None
    mcode = _MODES[mode]
    out = _get_output(output, input)
    wdt = _work_dtype_dev(dt, be.dtype(out))
    w = be.contiguous(be.astype(weights, wdt))
    if lead:
        w = be.reshape(w, ws[lead:])
    _filter_dev_mask(be, be.astype(input, wdt), w, out, nsp, kind, mcode, cval, origins[lead:])
    if dt in _F32F64 and wt == dt == wdt and be.is_contiguous(weights) and math.prod(xs) > 0:
        _remember_dev_call(_dev_call_key(be, input, weights, mode, cval, origin, kind),
                           _plan_dev_mexec_key(be, input, xs, nsp, ws[lead:], kind, mcode, cval,
                                               origins[lead:], dt), xs, dt, True)
    return out


def _correlate_1d_dev_weights(be, input, weights, axis, output, mode, cval, origin, kind):
    """correlate1d / convolve1d (kind) with input and weights device arrays
    of one framework: as _correlate_dev_weights, on the dense plan of
    _correlate_1d (the axes around the filtered one collapsed). convolve1d
    is the library's convolve of the 1-D mask (scipy's rule: the weights
    reversed, the origin mirrored), so the weights are not flipped here.
    None for what this path does not take: the full path then."""
    dt, wt = be.dtype(input), be.dtype(weights)
    if (dt.kind not in "biuf" or dt in (np.float16, np.longdouble) or wt.kind not in "biuf"
            or wt == np.longdouble or not isinstance(mode, str) or mode not in _MODES
            or type(axis) is not int or type(origin) is not int):
        return None
    xs, ws = be.shape(input), be.shape(weights)
    if len(ws) != 1 or ws[0] < 1 or not 0 < len(xs) <= _MAX_DIMS or not -len(xs) <= axis < len(xs):
        return None
    s = ws[0]
    if not -(s // 2) <= origin <= (s - 1) // 2:
        return None
    try:
        float(cval)
    except (TypeError, ValueError):
        return None
    ax = axis % len(xs)
    mcode = _MODES[mode]
    out = _get_output(output, input)
    pre, n, post = math.prod(xs[:ax]), xs[ax], math.prod(xs[ax + 1:])
    wdt = _work_dtype_dev(dt, be.dtype(out))
    w = be.contiguous(be.astype(weights, wdt))
    if post > 1:
        shape, w, org = (pre, n, post), be.reshape(w, (s, 1)), [origin, 0]
    else:
        shape, org = (pre, n), [origin]
    if pre == 1 and len(shape) == 3:
        shape = shape[1:]
    _filter_dev_mask(be, be.astype(input, wdt), w, out, len(org), kind, mcode, cval, org,
                     shape=shape)
    if dt in _F32F64 and wt == dt == wdt and be.is_contiguous(weights) and math.prod(xs) > 0:
        _remember_dev_call(_dev_call_key(be, input, weights, mode, cval, origin, kind, axis),
                           _plan_dev_mexec_key(be, input, shape, len(org), be.shape(w), kind,
                                               mcode, cval, org, dt), xs, dt, True)
    return out


# correlate / convolve (nD and 1-D) on device arrays: a call whose every
# check passed before and that ran a plan in place (float32 / float64,
# C-contiguous, weights on the host; or weights on the device of the
# input's dtype, C-contiguous) is remembered by what those checks
# and the plan depend on (the input's framework, device, shape and dtype;
# the weights' shape, dtype and values (device weights: shape and dtype,
# their address is passed on each call); mode, cval, origin, axis, kind,
# threads) -> the plan's cache key. The same call again skips the checks
# and dispatch and runs that plan (while it is cached); anything else
# takes the full path.
_dev_calls = {}
_DEV_CALLS_MAX = 256
_F32F64 = (np.dtype(np.float32), np.dtype(np.float64))
_NUM = (int, float)


def _dev_call_key(be, input, weights, mode, cval, origin, kind, axis=None):
    """The _dev_calls key of a call (hashing it raises TypeError where an
    argument is unhashable), or None (not a candidate: weights neither a
    NumPy array nor a flat list / tuple of Python ints and floats (1-D), a
    non-contiguous input, an origin or axis not of Python ints: 1.0 == 1,
    but a float must meet its error each time)."""
    if type(weights) is np.ndarray:
        ws = (weights.shape, weights.dtype, weights.tobytes())
    elif _gpu.backend(weights) is be:  # read per call: no values
        ws = ("device", be.shape(weights), be.dtype(weights))
    elif (axis is not None and type(weights) in (list, tuple)
          and all(type(v) in _NUM for v in weights)):
        ws = tuple(weights)
    else:
        return None
    if not be.is_contiguous(input):
        return None
    if type(origin) is not int:
        if (axis is not None or type(origin) not in (tuple, list)
                or any(type(o) is not int for o in origin)):
            return None
        origin = tuple(origin)
    if axis is not None and type(axis) is not int:
        return None
    return (kind, axis, be, be.device_key(input), be.shape(input), be.dtype(input), ws, mode,
            type(cval), cval, origin, threads)


def _remember_dev_call(key, pkey, shape, dt, dev_w=False):
    """dev_w: the plan takes the weights' device address on each call."""
    try:
        if key is None or key in _dev_calls:
            return
    except TypeError:  # an unhashable argument
        return
    if len(_dev_calls) >= _DEV_CALLS_MAX:
        _dev_calls.clear()
    _dev_calls[key] = (pkey, shape, dt, dev_w)


def _dev_again(be, input, weights, output, mode, cval, origin, kind, axis=None):
    """A remembered device call (_dev_calls) run directly; None when it is
    not one (or its plan left the cache, or output= is not a dense array
    of the input's shape and dtype apart from it): the full path then."""
    if not _dev_calls:
        return None
    key = _dev_call_key(be, input, weights, mode, cval, origin, kind, axis)
    try:
        ent = _dev_calls.get(key)
    except TypeError:  # an unhashable argument
        return None
    if ent is None:
        return None
    pkey, shape, dt, dev_w = ent
    if dev_w and not be.is_contiguous(weights):
        return None
    pi = be.ptr(input)
    if output is not None:
        if (_gpu.backend(output) is not be or be.shape(output) != shape
                or be.dtype(output) != dt or not be.is_contiguous(output)):
            return None
        po = be.ptr(output)
        if po < pi + be.nbytes(input) and pi < po + be.nbytes(output):
            return None  # the library needs disjoint arrays: through a temporary
        if dev_w and _gpu.overlaps(be, weights, output):
            return None
    with _cache_lock:
        p = _cache.get(pkey)
        if p is None:
            return None
        _cache.move_to_end(pkey)
    with be.on_device(input):
        if output is None:
            output = be.empty_current(input, shape, dt)
            po = be.ptr(output)
        if dev_w:
            p.execute_ptr(pi, po, be.stream(input), be.ptr(weights))
        else:
            p.execute_ptr(pi, po, be.stream(input))
    return output


def _correlate_nd(input, weights, output, mode, cval, origin, kind):
    be = _gpu.backend(input)
    if be is not None:
        out = _dev_again(be, input, weights, output, mode, cval, origin, kind)
        if out is not None:
            return out
        if _gpu.backend(weights) is be:  # the weights stay on the device
            out = _correlate_dev_weights(be, input, weights, output, mode, cval, origin, kind)
            if out is not None:
                return out
    else:
        input = np.asarray(input)
    raw_weights = weights
    weights = _host(weights)
    complex_in = _dtype(input).kind == "c"
    complex_w = weights.dtype.kind == "c"
    if complex_in or complex_w:
        if complex_w and kind == _CORRELATE:
            weights = weights.conj()  # as scipy (and numpy.correlate) do
        out = _get_output(output, input, complex_output=True)
        return _complex_parts(lambda x, w, o, c: _correlate_nd(x, w, o, mode, c, origin, kind),
                              input, weights, out, cval)
    _check_dtype(input)
    # scipy's rule: the weights' nonzero sizes must match the input's rank;
    # extra zero-size axes give weights of no element, and zeros
    if len([n for n in weights.shape if n > 0]) != input.ndim:
        raise RuntimeError("filter weights array has incorrect shape.")
    if weights.ndim != input.ndim:
        out = _get_output(output, input)
        return _copy_into(out, 0)
    origins = _normalize_origins(origin, input.ndim)
    for o, s in zip(origins, weights.shape):
        if not (-(s // 2) <= o + (s // 2) < s) or not (-(s // 2) <= o <= (s - 1) // 2):
            raise ValueError("Invalid origin; origin must satisfy "
                             "-(weights.shape[k] // 2) <= origin[k] <= "
                             "(weights.shape[k]-1) // 2")
    mcode = _mode_code(mode)
    out = _get_output(output, input)
    if input.ndim == 0:
        raise RuntimeError("input must have at least one dimension")
    if input.ndim > _MAX_DIMS:
        raise ValueError(f"tileconv: at most {_MAX_DIMS} dimensions, got {input.ndim}")
    # axes with a mask of size 1 and origin 0 at the front are batch axes
    nsp = input.ndim
    lead = 0
    while nsp > 3 and weights.shape[lead] == 1 and origins[lead] == 0:
        lead += 1
        nsp -= 1
    if nsp > 3 and any(n == 1 for n in input.shape):
        return _correlate_unit_axes(input, weights, out, mode, mcode, cval, origins, kind)
    if nsp > 3:
        return _correlate_peel(input, weights, out, mode, cval, origins, kind, lead)
    if be is not None:
        dt = be.dtype(input)
        wdt = _work_dtype_dev(dt, be.dtype(out))
        mask = weights.reshape(weights.shape[lead:])
        _filter_dev(be, be.astype(input, wdt), mask, out, nsp, kind, mcode, cval, origins[lead:],
                    exact=wdt != dt or dt.kind in "iub")
        if dt in _F32F64 and dt == wdt and math.prod(input.shape) > 0:  # the plan _filter_dev ran
            xs = be.shape(input)
            _remember_dev_call(
                _dev_call_key(be, input, raw_weights, mode, cval, origin, kind),
                _plan_dev_key(be, input, xs, nsp, np.ascontiguousarray(mask, dtype=dt), kind,
                              mcode, cval, origins[lead:], dt), xs, dt)
        return out
    return _filter_host(input, weights.reshape(weights.shape[lead:]), out, nsp, kind, mcode,
                        cval, origins[lead:])


def _map_index(j, n, mcode):
    """scipy's boundary maps of indices j (an int array) into [0, n): the
    mapped indices and the mask of those outside in constant mode."""
    j = np.asarray(j, dtype=np.int64)
    outside = (j < 0) | (j >= n)
    if mcode == 0:  # constant: any index in range; the caller overwrites
        return np.clip(j, 0, n - 1), outside
    if mcode == 1:  # nearest
        return np.clip(j, 0, n - 1), np.zeros_like(outside)
    if mcode == 4:  # wrap
        return np.mod(j, n), np.zeros_like(outside)
    if mcode == 2:  # reflect: d c b a | a b c d | d c b a
        m = np.mod(j, 2 * n)
        return np.where(m < n, m, 2 * n - 1 - m), np.zeros_like(outside)
    if n == 1:  # mirror of one element
        return np.zeros_like(j), np.zeros_like(outside)
    m = np.mod(j, 2 * n - 2)  # mirror: d c b | a b c d | c b a
    return np.where(m < n, m, 2 * n - 2 - m), np.zeros_like(outside)


def _sum_dtype(be, idt, odt):
    """The dtype partial results are summed in before one store into an
    output of odt (_correlate_peel's taps, _correlate_unit_axes' cval term):
    float32 for float32 / float16 inputs into a float output, else float64
    (device arrays: _work_dtype_dev's rule)."""
    if be is not None:
        return _work_dtype_dev(idt, odt)
    return np.dtype(np.float32 if idt in (np.float32, np.float16) and odt.kind not in "iub"
                    else np.float64)


def _correlate_peel(input, weights, out, mode, cval, origins, kind, lead):
    """More than 3 filtered axes (scipy takes any rank): the first filtered
    axis (`lead`, after the batch axes) is taken tap by tap. For its tap a,
    the input's slabs gathered along that axis at i + a - (k // 2 + origin)
    (boundary-mapped as scipy maps them; in constant mode a slab outside
    the input is cval throughout, so its filter is cval times the tap's
    weights' sum) are filtered over the remaining axes with that tap's
    weights (one axis fewer: batched over this one), and the k results
    summed in the work dtype, then stored as _store casts. convolve is the
    correlation with the weights reversed and the origins mirrored, as
    scipy turns one into the other. k filters of the whole array: a
    correct path for ranks the library's 3-D solvers do not take, not a
    fast one."""
    if kind == _CONVOLVE:
        weights = weights[(slice(None, None, -1),) * weights.ndim]
        origins = [-o - (1 - s % 2) for o, s in zip(origins, weights.shape)]
    be = _gpu.backend(input)
    shape = tuple(be.shape(input)) if be is not None else input.shape
    wdt = _sum_dtype(be, _dtype(input), _dtype(out))
    n, k = shape[lead], weights.shape[lead]
    c = k // 2 + origins[lead]
    rest = list(origins)
    rest[lead] = 0
    acc = None
    for a in range(k):
        idx, outside = _map_index(np.arange(n) + a - c, n, _MODES[mode])
        wa = np.take(weights, [a], axis=lead)
        xa = be.take(input, idx, lead) if be is not None else np.take(input, idx, axis=lead)
        t = _correlate_nd(xa, wa, wdt, mode, cval, rest, _CORRELATE)
        if outside.any():
            i = np.nonzero(outside)[0]
            t[(slice(None),) * lead + (i if be is None else be.to_device(t, i),)] = (
                float(cval) * float(wa.sum()))
        if acc is None:
            acc = t
        else:
            acc += t
    _store(acc, out)
    return out


def _correlate_unit_axes(input, weights, out, mode, mcode, cval, origins, kind):
    """More than 3 filtered axes, some of input size 1 (cupyx's tests filter
    1 x 3 x 4 x 5 with 3^4 weights): along such an axis every tap reads the
    one element (reflect, mirror, nearest, wrap) or cval but the centre tap
    (constant), so the weights collapse along it (summed; or the centre
    slice, plus cval times the other taps' sum added to the result) and
    the axis is dropped: the rest is filtered in place in out's view."""
    unit = [a for a, n in enumerate(input.shape) if n == 1]
    w, add = weights, 0.0
    for a in reversed(unit):
        k = w.shape[a]
        if mcode != 0:
            w = w.sum(axis=a)
            continue
        o = origins[a]
        if kind == _CONVOLVE:  # scipy: the flipped weights, origin -o (-1 more for even k)
            c = k - 1 - (k // 2 - o - (1 - k % 2))
        else:
            c = k // 2 + o
        centre = np.take(w, c, axis=a)
        add = float(cval) * float(w.sum() - centre.sum()) + add
        w = centre
    idx = tuple(0 if a in unit else slice(None) for a in range(input.ndim))
    rest = [o for a, o in enumerate(origins) if a not in unit]
    x, o = input[idx], out[idx]
    if add == 0.0:
        _correlate_nd(x, w, o, mode, cval, rest, kind)
        return out
    t = _correlate_nd(x, w, _sum_dtype(_gpu.backend(input), _dtype(input), _dtype(o)), "constant",
                      cval, rest, kind)
    t += add
    _store(t, o)
    return out


def _correlate_axes(input, weights, output, mode, cval, origin, kind, axes):
    """correlate / convolve with axes= (scipy's rule): every axis listed
    (in any order) is the call without axes; fewer: the weights have one
    axis per listed axis, in the input's axis order (scipy inserts the
    unit axes of the others where they fall), the origins follow the
    listed order, and the other axes are batch axes (moved in front of a
    view of the input and of the output, so that they are the weights'
    leading unit axes)."""
    if axes is None:
        return _correlate_nd(input, weights, output, mode, cval, origin, kind)
    input = _asarray(input)
    be = _gpu.backend(input)
    ndim = len(be.shape(input)) if be is not None else input.ndim
    ax = _axes(axes, ndim)
    if len(ax) == ndim:
        return _correlate_nd(input, weights, output, mode, cval, origin, kind)
    be_w = _gpu.backend(weights)
    wshape = be_w.shape(weights) if be_w is not None else np.shape(weights)
    if len(wshape) != len(ax):
        raise RuntimeError(f"weights.ndim ({len(wshape)}) must match len(axes) ({len(ax)})")
    full = _on_axes(origin, ax, ndim, "origin")
    filt = sorted(ax)
    rest = [a for a in range(ndim) if a not in ax]
    perm = rest + filt
    ws = (1,) * len(rest) + tuple(wshape)
    w = (be_w.reshape(weights, ws) if be_w is not None
         else np.asarray(weights).reshape(ws))
    origins = [0] * len(rest) + [full[a] for a in filt]
    complex_out = _dtype(input).kind == "c" or np.dtype(
        be_w.dtype(weights) if be_w is not None else np.asarray(weights).dtype).kind == "c"
    out = _get_output(output, input, complex_output=complex_out)
    src = list(range(ndim))
    if be is not None:
        xv, ov = be.moveaxis(input, perm, src), be.moveaxis(out, perm, src)
    else:
        xv, ov = np.moveaxis(input, perm, src), np.moveaxis(out, perm, src)
    _correlate_nd(xv, w, ov, mode, cval, origins, kind)
    return out


def correlate(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.correlate (axes=: scipy's, see _correlate_axes)."""
    return _correlate_axes(input, weights, output, mode, cval, origin, _CORRELATE, axes)


def convolve(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.convolve (axes=: scipy's, see _correlate_axes)."""
    return _correlate_axes(input, weights, output, mode, cval, origin, _CONVOLVE, axes)


def _check_axis(axis, ndim):
    axis = operator.index(axis)
    if axis < -ndim or axis >= ndim:
        raise np.AxisError(axis, ndim) if hasattr(np, "AxisError") else ValueError("invalid axis")
    return axis % ndim


def _correlate_1d(input, weights, axis, output, mode, cval, origin, kind):
    be = _gpu.backend(input)
    if be is not None:
        out = _dev_again(be, input, weights, output, mode, cval, origin, kind, axis)
        if out is not None:
            return out
        if _gpu.backend(weights) is be:  # the weights stay on the device
            out = _correlate_1d_dev_weights(be, input, weights, axis, output, mode, cval,
                                            origin, kind)
            if out is not None:
                return out
    else:
        input = np.asarray(input)
    raw_weights, raw_axis, raw_origin = weights, axis, origin
    weights = _host(weights)
    if _dtype(input).kind == "c" or weights.dtype.kind == "c":
        if weights.dtype.kind == "c":
            weights = weights.conj()
        out = _get_output(output, input, complex_output=True)
        return _complex_parts(lambda x, w, o, c: _correlate_1d(x, w, axis, o, mode, c, origin,
                                                               kind), input, weights, out, cval)
    if weights.ndim != 1 or weights.shape[0] < 1:
        raise RuntimeError("no filter weights given")
    _check_dtype(input)
    weights = weights.astype(np.float64)
    axis = _check_axis(axis, input.ndim)
    s = weights.shape[0]
    origin = operator.index(origin)
    if not (-(s // 2) <= origin <= (s - 1) // 2):
        raise ValueError("Invalid origin; origin must satisfy -(len(weights) // 2) <= origin <= "
                         "(len(weights)-1) // 2")
    mcode = _mode_code(mode)
    out = _get_output(output, input)
    if input.ndim > _MAX_DIMS:
        raise ValueError(f"tileconv: at most {_MAX_DIMS} dimensions, got {input.ndim}")
    if be is not None:
        # the axes before and after the filtered one collapsed: (pre, n,
        # post) with a mask (k, 1), or (pre, n) with (k,) when it is the last
        xs = be.shape(input)
        pre, n, post = math.prod(xs[:axis]), xs[axis], math.prod(xs[axis + 1:])
        if post > 1:
            shape, mask, org = (pre, n, post), weights.reshape(s, 1), [origin, 0]
        else:
            shape, mask, org = (pre, n), weights, [origin]
        if pre == 1 and len(shape) == 3:
            shape = shape[1:]
        dt = be.dtype(input)
        wdt = _work_dtype_dev(dt, be.dtype(out))
        _filter_dev(be, be.astype(input, wdt), mask, out, len(org), kind, mcode, cval, org,
                    shape=shape, exact=wdt != dt or dt.kind in "iub")
        if dt in _F32F64 and dt == wdt and math.prod(xs) > 0:  # the plan _filter_dev ran
            _remember_dev_call(
                _dev_call_key(be, input, raw_weights, mode, cval, raw_origin, kind, raw_axis),
                _plan_dev_key(be, input, shape, len(org), np.ascontiguousarray(mask, dtype=dt),
                              kind, mcode, cval, org, dt), xs, dt)
        return out
    return _filter_host(input, weights, out, 1, kind, mcode, cval, [origin], axis=axis)


def correlate1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.correlate1d."""
    return _correlate_1d(input, weights, axis, output, mode, cval, origin, _CORRELATE)


def convolve1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.convolve1d: correlate1d with the weights reversed and the
    origin mirrored, as scipy defines it (device weights of the input's
    framework: the library's convolve of them, on the device)."""
    be = _gpu.backend(input)
    if be is not None and _gpu.backend(weights) is be:
        out = _dev_again(be, input, weights, output, mode, cval, origin, _CONVOLVE, axis)
        if out is None:
            out = _correlate_1d_dev_weights(be, input, weights, axis, output, mode, cval, origin,
                                            _CONVOLVE)
        if out is not None:
            return out
    weights = _host(weights)[::-1]
    origin = -operator.index(origin)
    if not len(weights) & 1:
        origin -= 1
    if weights.dtype.kind == "c":
        weights = weights.conj()  # cancels correlate1d's conjugation, as scipy
    return _correlate_1d(input, weights, axis, output, mode, cval, origin, _CORRELATE)


def _per_axis(value, naxes, name):
    if isinstance(value, (str, numbers.Number)) or np.ndim(value) == 0:
        return [value] * naxes
    value = list(value)
    if len(value) != naxes:
        raise RuntimeError(f"sequence argument must have length equal to input rank")
    return value


def _axes(axes, ndim):
    if axes is None:
        return list(range(ndim))
    if isinstance(axes, numbers.Integral):
        axes = (axes,)
    axes = [_check_axis(a, ndim) for a in axes]
    if len(set(axes)) != len(axes):
        raise ValueError("axes must be unique")
    return axes


def _separable(input, output, axes, fn):
    """Runs fn(input, axis_index, axis, output) along the axes in turn, the
    way scipy does: each pass writes into the output array."""
    input = _asarray(input)
    out = _get_output(output, input, complex_output=_dtype(input).kind == "c")
    if not axes:
        return _copy_into(out, input)
    src = input
    for i, ax in enumerate(axes):
        fn(src, i, ax, out)
        src = out
    return out


# the solver for rank-1 (outer product) masks: host arrays, and device
# arrays by FilterPlan backend
_SEPARABLE_HOST = "cpu.filter.separable"
_SEPARABLE = {0: "cpu.filter.separable", 1: "cuda.filter.separable"}
_RANK1_MAX_TAPS = 256  # per axis (the separable solvers' limit)
_RANK1_MAX_MASK = 1 << 22  # mask elements


def _rank1_eligible(input, modes, cval, host):
    """Whether a separable filter of input may run as one nD filter
    (_rank1_call): float32 or float64 (others keep the 1-D passes: scipy
    rounds an integer or float16 output after each pass), on the device,
    or on the host where host is true, one boundary mode on every filtered
    axis, a real cval."""
    if not host and _gpu.backend(input) is None:
        return False
    if _dtype(input) not in (np.float32, np.float64):
        return False
    if not all(isinstance(m, str) and m in _MODES for m in modes):
        return False
    if len({_MODES[m] for m in modes}) != 1:
        return False
    return isinstance(cval, numbers.Real) and not isinstance(cval, bool)


def _rank1_call(input, output, axes, ws, mode, cval, origins, divisor=None):
    """The 1-D correlations ws[i] along axes[i] (the same mode and cval on
    each) as ONE nD correlation with their outer product, a rank-1 mask,
    planned with the separable solver (cpu. / cuda.filter.separable): one
    plan, no intermediate array; on a GPU the fused kernel (where it takes
    the mask) reads the array once and writes it once. The output dtype
    must be the input's (None, that dtype, or an array of it of the
    input's kind). None where it does not apply (the caller runs the 1-D
    passes): another output dtype, more than 3 axes from the first
    filtered one to the last axis, a mask side above _RANK1_MAX_TAPS, or a
    plan the solver refuses. Equal to the 1-D passes within float
    rounding: the solver factors the mask back into per-axis taps (each
    within the dtype's rounding of the 1-D weights) and sums one axis
    after the other, as the passes do. divisor: the result divided by it
    once, in place (uniform_filter's sums of ones)."""
    be = _gpu.backend(input)
    dt = _dtype(input)
    xs = tuple(input.shape) if be is None else be.shape(input)
    nd = len(xs)
    lo = min(axes)
    if nd > _MAX_DIMS or nd - lo > 3 or math.prod(xs) == 0:
        return None
    if output is not None:
        if _is_dtype_arg(output):
            try:
                odt = (np.dtype(np.sctypeDict[output]) if isinstance(output, str)
                       else _gpu.np_dtype(output))
            except (KeyError, TypeError):
                return None
        elif _gpu.backend(output) is be and (be is not None or isinstance(output, np.ndarray)):
            odt = _dtype(output)
        else:
            return None
        if odt != dt:
            return None
    if any(len(w) > _RANK1_MAX_TAPS for w in ws) or math.prod(len(w) for w in ws) > _RANK1_MAX_MASK:
        return None
    mask = np.ones(())
    org = []
    for a in range(lo, nd):
        if a in axes:
            i = axes.index(a)
            mask = np.multiply.outer(mask, np.asarray(ws[i], dtype=np.float64))
            org.append(origins[i])
        else:
            mask = np.multiply.outer(mask, np.ones(1))
            org.append(0)
    mask = np.ascontiguousarray(mask, dtype=dt)
    mcode, nsp = _MODES[mode], nd - lo
    if be is None:
        out = _get_output(output, input)
        try:  # the input and out are untouched until the plan has run
            _filter_host(input, mask, out, nsp, _CORRELATE, mcode, cval, org,
                         algo=_SEPARABLE_HOST)
        except (RuntimeError, ValueError, NotImplementedError):
            return None  # the solver refuses the plan
    else:
        algo = _SEPARABLE.get(be.plan_backend)
        if algo is None:
            return None
        try:  # the plan first: a solver that refuses it leaves the 1-D passes
            with be.on_device(input):
                _plan_dev(be, input, xs, nsp, mask, _CORRELATE, mcode, cval, org, dt, algo)
        except (RuntimeError, ValueError, NotImplementedError):
            return None
        out = _get_output(output, input)
        _filter_dev(be, input, mask, out, nsp, _CORRELATE, mcode, cval, org, algo=algo)
    if divisor is not None:
        out /= float(divisor)
    return out


def uniform_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.uniform_filter1d."""
    if size < 1:
        raise RuntimeError("incorrect filter size")
    input = _asarray(input)
    idt = _dtype(input)
    if idt.kind == "c":
        return correlate1d(input, np.full(int(size), 1.0 / size), axis, output, mode, cval, origin)
    # sums of ones (exact for integers), then one division: a window of equal
    # values gives that value exactly, as scipy's running mean does
    out = _get_output(output, input)
    be = _gpu.backend(input)
    if be is not None:
        # float16: the sums in float32 (one rounding, at the store)
        wdt = np.dtype(np.float32) if idt in (np.float32, np.float16) else np.dtype(np.float64)
        s = correlate1d(be.astype(input, wdt), np.ones(int(size)), axis, wdt, mode, cval, origin)
        s /= float(size)
        return _store(s, out)
    # float16: the sums in float32 (one rounding, at the store)
    wdt = np.float32 if input.dtype in (np.float32, np.float16) else np.float64
    s = correlate1d(input, np.ones(int(size)), axis, wdt, mode, cval, origin)
    s /= wdt(size)
    return _store(s, out) if out.dtype != wdt else np.copyto(out, s) or out


def uniform_filter(input, size=3, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.uniform_filter. float32 / float64 (host or device),
    one mode on every filtered axis: one nD filter with the outer product
    of the 1-D sums of ones, divided once (_rank1_call); else the 1-D
    passes."""
    input = _asarray(input)
    ax = _axes(axes, input.ndim)
    sizes = _per_axis(size, len(ax), "size")
    modes = _per_axis(mode, len(ax), "mode")
    origins = _per_axis(origin, len(ax), "origin")
    keep = [i for i in range(len(ax)) if sizes[i] > 1]
    if len(keep) >= 2 and _rank1_eligible(input, [modes[i] for i in keep], cval, True) and all(
            isinstance(sizes[i], numbers.Integral) and isinstance(origins[i], numbers.Integral)
            and -(sizes[i] // 2) <= origins[i] <= (sizes[i] - 1) // 2 for i in keep):
        # sums of ones, then one division (as uniform_filter1d)
        r = _rank1_call(input, output, [ax[i] for i in keep],
                        [np.ones(int(sizes[i])) for i in keep], modes[keep[0]], cval,
                        [int(origins[i]) for i in keep],
                        math.prod(int(sizes[i]) for i in keep))
        if r is not None:
            return r
    return _separable(input, output, [ax[i] for i in keep],
                      lambda src, j, a, out: uniform_filter1d(
                          src, sizes[keep[j]], a, out, modes[keep[j]], cval, origins[keep[j]]))


def _gaussian_kernel1d(sigma, order, radius):
    """scipy's discrete Gaussian (and derivatives), as
    scipy.ndimage._filters._gaussian_kernel1d computes it."""
    if order < 0:
        raise ValueError("order must be non-negative")
    exponent_range = np.arange(order + 1)
    sigma2 = sigma * sigma
    x = np.arange(-radius, radius + 1)
    phi_x = np.exp(-0.5 / sigma2 * x ** 2)
    phi_x = phi_x / phi_x.sum()
    if order == 0:
        return phi_x
    q = np.zeros(order + 1)
    q[0] = 1
    D = np.diag(exponent_range[1:], 1)
    P = np.diag(np.ones(order) / -sigma2, -1)
    Q_deriv = D + P
    for _ in range(order):
        q = Q_deriv.dot(q)
    q = (x[:, None] ** exponent_range).dot(q)
    return q * phi_x


def gaussian_filter1d(input, sigma, axis=-1, order=0, output=None, mode="reflect", cval=0.0,
                      truncate=4.0, *, radius=None):
    """scipy.ndimage.gaussian_filter1d."""
    sd = float(sigma)
    lw = int(truncate * sd + 0.5)
    if radius is not None:
        lw = radius
    if not isinstance(lw, numbers.Integral) or lw < 0:
        raise ValueError("Radius must be a nonnegative integer.")
    weights = _gaussian_kernel1d(sigma, order, lw)[::-1]
    return correlate1d(input, weights, axis, output, mode, cval, 0)


def gaussian_filter(input, sigma, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0,
                    *, radius=None, axes=None):
    """scipy.ndimage.gaussian_filter. float32 / float64 device arrays,
    derivative orders of 0 or more and one mode on every filtered axis: one
    nD filter with the outer product of the 1-D kernels (_rank1_call; the
    derivative kernels of gaussian_laplace / gaussian_gradient_magnitude
    too: still rank 1; not with a derivative in constant mode and a nonzero
    cval, where the passes' semantics differ); else the 1-D passes."""
    input = _asarray(input)
    ax = _axes(axes, input.ndim)
    orders = _per_axis(order, len(ax), "order")
    sigmas = _per_axis(sigma, len(ax), "sigma")
    modes = _per_axis(mode, len(ax), "mode")
    radiuses = _per_axis(radius, len(ax), "radius")
    keep = [i for i in range(len(ax)) if sigmas[i] > 1e-15]
    # host arrays keep the passes: the solver's taps, factored from the
    # rounded outer product, carry about 10% more rounding (rms) than the
    # 1-D passes' weights (2048^2 float32 and float64, against scipy)
    # derivative orders: in constant mode with a nonzero cval the passes
    # extend each intermediate with cval, the one nD filter the input only
    # (cval times the kernels' sums, not 1 for a derivative): passes then
    if len(keep) >= 2 and _rank1_eligible(input, [modes[i] for i in keep], cval, False) and all(
            isinstance(orders[i], numbers.Integral) and orders[i] >= 0 for i in keep) and (
            all(orders[i] == 0 for i in keep) or _MODES[modes[keep[0]]] != 0 or cval == 0):
        ws = []
        for i in keep:
            sd = float(sigmas[i])
            lw = int(truncate * sd + 0.5) if radiuses[i] is None else radiuses[i]
            if not isinstance(lw, numbers.Integral) or lw < 0:
                ws = None  # the 1-D pass raises scipy's error
                break
            ws.append(_gaussian_kernel1d(sigmas[i], int(orders[i]), int(lw))[::-1])
        if ws is not None:
            r = _rank1_call(input, output, [ax[i] for i in keep], ws, modes[keep[0]], cval,
                            [0] * len(keep))
            if r is not None:
                return r
    return _separable(input, output, [ax[i] for i in keep],
                      lambda src, j, a, out: gaussian_filter1d(
                          src, sigmas[keep[j]], a, orders[keep[j]], out, modes[keep[j]], cval,
                          truncate, radius=radiuses[keep[j]]))


def _edge(input, axis, output, mode, cval, smooth):
    """sobel / prewitt: [-1, 0, 1] along axis, smooth along the others, as
    scipy's passes; float32 / float64 device arrays with one mode on every
    axis: ONE nD filter with their outer product (_rank1_call: one read and
    one write instead of one a pass), except in constant mode with a
    nonzero cval (the passes extend the derivative's result with cval)."""
    input = _asarray(input)
    axis = _check_axis(axis, input.ndim)
    modes = _per_axis(mode, input.ndim, "mode")
    if (input.ndim >= 2 and _rank1_eligible(input, modes, cval, False)
            and (_MODES[modes[0]] != 0 or cval == 0)):
        ws = [[-1.0, 0.0, 1.0] if a == axis else [float(v) for v in smooth]
              for a in range(input.ndim)]
        r = _rank1_call(input, output, list(range(input.ndim)), ws, modes[0], cval,
                        [0] * input.ndim)
        if r is not None:
            return r
    out = _get_output(output, input)
    correlate1d(input, [-1, 0, 1], axis, out, modes[axis], cval, 0)
    for ax in range(input.ndim):
        if ax != axis:
            correlate1d(out, smooth, ax, out, modes[ax], cval, 0)
    return out


def sobel(input, axis=-1, output=None, mode="reflect", cval=0.0):
    """scipy.ndimage.sobel."""
    return _edge(input, axis, output, mode, cval, [1, 2, 1])


def prewitt(input, axis=-1, output=None, mode="reflect", cval=0.0):
    """scipy.ndimage.prewitt."""
    return _edge(input, axis, output, mode, cval, [1, 1, 1])


def _check_callable(f, name):
    if not callable(f):
        raise TypeError(f"{name} must be callable, got {type(f).__name__}")


def generic_laplace(input, derivative2, output=None, mode="reflect", cval=0.0,
                    extra_arguments=(), extra_keywords=None, *, axes=None):
    """scipy.ndimage.generic_laplace: derivative2(input, axis, output, mode,
    cval, *extra_arguments, **extra_keywords) along each axis, summed in the
    output's dtype (the first pass writes into the output, the others into
    temporaries of its dtype that are added), as scipy sums them."""
    _check_callable(derivative2, "derivative2")
    if extra_keywords is None:
        extra_keywords = {}
    input = _asarray(input)
    output = _get_output(output, input)
    ax = _axes(axes, input.ndim)
    if not ax:
        return _copy_into(output, input)
    modes = _per_axis(mode, len(ax), "mode")
    derivative2(input, ax[0], output, modes[0], cval, *extra_arguments, **extra_keywords)
    for i in range(1, len(ax)):
        tmp = derivative2(input, ax[i], output.dtype, modes[i], cval, *extra_arguments,
                          **extra_keywords)
        output += tmp
    return output


def generic_gradient_magnitude(input, derivative, output=None, mode="reflect", cval=0.0,
                               extra_arguments=(), extra_keywords=None, *, axes=None):
    """scipy.ndimage.generic_gradient_magnitude: the square root of the sum
    over axes of derivative(input, axis, output, mode, cval,
    *extra_arguments, **extra_keywords) squared, each step in the output's
    dtype (the square root cast unsafely into it), as scipy computes it."""
    _check_callable(derivative, "derivative")
    if extra_keywords is None:
        extra_keywords = {}
    input = _asarray(input)
    output = _get_output(output, input)
    ax = _axes(axes, input.ndim)
    if not ax:
        return _copy_into(output, input)
    modes = _per_axis(mode, len(ax), "mode")
    derivative(input, ax[0], output, modes[0], cval, *extra_arguments, **extra_keywords)
    be = _gpu.backend(output)
    if be is not None:
        output *= output
        for i in range(1, len(ax)):
            tmp = derivative(input, ax[i], output.dtype, modes[i], cval, *extra_arguments,
                             **extra_keywords)
            tmp *= tmp
            output += tmp
        odt = be.dtype(output)
        if odt.kind in "fc":
            return be.copy_(output, be.sqrt(output))
        # integer outputs: the square root in the float type NumPy's sqrt
        # loop takes for that integer type, cast as its unsafe cast
        sdt = np.sqrt(np.zeros(1, odt)).dtype
        return _store(be.sqrt(be.astype(output, sdt)), output)
    np.multiply(output, output, output)
    for i in range(1, len(ax)):
        tmp = derivative(input, ax[i], output.dtype, modes[i], cval, *extra_arguments,
                         **extra_keywords)
        np.multiply(tmp, tmp, tmp)
        output += tmp
    np.sqrt(output, output, casting="unsafe")
    return output


def _on_axes(value, ax, ndim, name):
    """A per-listed-axis argument (one value, or one per axis of ax, in ax's
    order) spread to every axis of the input, 0 on the others: scipy's rule
    for sigma (gaussian_laplace) and origin (correlate / convolve) under
    axes=."""
    full = [0] * ndim
    for v, a in zip(_per_axis(value, len(ax), name), ax):
        full[a] = v
    return full


def _sigmas_on_axes(sigma, ndim, axes):
    """sigma per filtered axis, spread to every axis with 0 (no smoothing) on
    the others, as scipy's gaussian_laplace does for axes=."""
    ax = _axes(axes, ndim)
    if len(ax) == ndim:
        return _per_axis(sigma, len(ax), "sigma"), ax
    return _on_axes(sigma, ax, ndim, "sigma"), ax


def _gaussian_derivative(order_on_axis):
    def derivative(input, axis, output, mode, cval, sigma, **kwargs):
        order = [0] * input.ndim
        order[axis] = order_on_axis
        return gaussian_filter(input, sigma, order, output, mode, cval, **kwargs)
    return derivative


def gaussian_laplace(input, sigma, output=None, mode="reflect", cval=0.0, *, axes=None,
                     **kwargs):
    """scipy.ndimage.gaussian_laplace: generic_laplace with second-order
    gaussian_filter passes; extra keywords (truncate, radius) go to
    gaussian_filter."""
    input = _asarray(input)
    sigma, ax = _sigmas_on_axes(sigma, input.ndim, axes)
    return generic_laplace(input, _gaussian_derivative(2), output, mode, cval,
                           extra_arguments=(sigma,), extra_keywords=kwargs, axes=ax)


def gaussian_gradient_magnitude(input, sigma, output=None, mode="reflect", cval=0.0, *,
                                axes=None, **kwargs):
    """scipy.ndimage.gaussian_gradient_magnitude: generic_gradient_magnitude
    with first-order gaussian_filter passes; extra keywords (truncate,
    radius) go to gaussian_filter."""
    input = _asarray(input)
    # scipy's rule: sigma goes to gaussian_filter as given (one value
    # smooths every axis of the input, the unlisted ones too; unlike
    # gaussian_laplace, which smooths the listed axes only)
    return generic_gradient_magnitude(input, _gaussian_derivative(1), output, mode, cval,
                                      extra_arguments=(sigma,), extra_keywords=kwargs,
                                      axes=axes)


def laplace(input, output=None, mode="reflect", cval=0.0, *, axes=None):
    """scipy.ndimage.laplace: generic_laplace with [1, -2, 1] along each axis.
    float32 / float64 device arrays of 2 or 3 axes, every axis, one mode,
    the output None or an array of the input's dtype: ONE nD correlation
    with the sum of the axes' masks (the 3 x 3 or 3 x 3 x 3 stencil; each
    term reads the input itself, so every mode and cval give the passes'
    result within rounding) instead of a pass, a temporary and an addition
    an axis."""
    input = _asarray(input)
    be = _gpu.backend(input)
    if be is not None and axes is None and input.ndim in (2, 3) and (
            output is None or (not _is_dtype_arg(output) and _gpu.backend(output) is be
                               and _dtype(output) == _dtype(input))):
        modes = _per_axis(mode, input.ndim, "mode")
        if _rank1_eligible(input, modes, cval, False):
            nd = input.ndim
            w = np.zeros((3,) * nd)
            w[(1,) * nd] = -2.0 * nd
            for a in range(nd):
                for e in (0, 2):
                    i = [1] * nd
                    i[a] = e
                    w[tuple(i)] = 1.0
            return correlate(input, w, output, modes[0], cval)

    def derivative2(input, axis, output, mode, cval):
        return correlate1d(input, [1, -2, 1], axis, output, mode, cval, 0)
    return generic_laplace(input, derivative2, output, mode, cval, axes=axes)
