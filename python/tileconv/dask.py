"""tileconv.dask - tileconv.ndimage's filters on dask arrays, for volumes
past one machine's memory (and on a `distributed` cluster).

    import dask.array as da, tileconv.dask as tcd
    y = tcd.gaussian_filter(da.from_zarr(...), sigma=2, mode="nearest")

Each function runs the in-memory tileconv.ndimage function on every chunk
through `dask.array.map_overlap`, with an overlap (depth) per axis of the
mask's reach, `max(m // 2 + origin, (m - 1) // 2 - origin)`, and
`boundary='none'`: chunks at the array's edges are not padded by dask, so
the function applies the requested mode (every scipy mode, wrap included)
at the real edges itself, exactly as the in-memory call does. Interior
chunk borders see their neighbours' data. The result equals the in-memory
call up to the float rounding of the algorithm chosen per chunk (bitwise in
float64 for direct methods; tests/python/test_dask.py holds them to 1e-12,
and float32 to 2e-6, relative to the largest value). A wrap-mode axis that
is split into several chunks needs the far side of the array: its overlap
is filled with dask's 'periodic' boundary on that axis instead.
"""
import numbers

import numpy as np

from . import ndimage as _nd

__all__ = ["convolve", "correlate", "convolve1d", "correlate1d", "uniform_filter",
           "uniform_filter1d", "gaussian_filter", "gaussian_filter1d", "sobel", "prewitt",
           "laplace"]


def _da():
    try:
        import dask.array as da
    except ImportError as e:  # pragma: no cover
        raise ImportError("tileconv.dask needs dask (Debian: python3-dask)") from e
    return da


def _norm(v, n):
    if isinstance(v, (numbers.Number, str)) or v is None or np.ndim(v) == 0:
        return [v] * n
    v = list(v)
    if len(v) != n:
        raise RuntimeError("sequence argument must have length equal to input rank")
    return v


def _run(x, fn, reach, modes):
    """Applies fn chunk-wise with `reach[i]` elements of overlap on axis i;
    modes[i] is the boundary mode of axis i."""
    da = _da()
    x = da.asarray(x)
    depth, boundary = {}, {}
    for ax in range(x.ndim):
        d = int(reach[ax])
        if d > 0 and d > min(x.chunks[ax]) and len(x.chunks[ax]) > 1:
            # dask needs every chunk at least as large as the overlap
            x = x.rechunk({ax: max(d, max(x.chunks[ax]))})
        depth[ax] = d
        wrap = modes[ax] in ("wrap", "grid-wrap") and len(x.chunks[ax]) > 1
        boundary[ax] = "periodic" if wrap else "none"
    if all(d == 0 for d in depth.values()):
        return x.map_blocks(fn, dtype=x.dtype)
    return da.map_overlap(fn, x, depth=depth, boundary=boundary, trim=True, dtype=x.dtype,
                          meta=x._meta)  # the chunks' kind: NumPy or CuPy


def _reach_nd(shape, origin, ndim):
    origin = _nd._normalize_origins(origin, ndim)
    return [max(m // 2 + o, (m - 1) // 2 - o, 0) for m, o in zip(shape, origin)]


def _on_axes(w, origin, ndim, axes):
    """axes= as tileconv.ndimage takes it (scipy's rule): weights of one axis
    a listed axis widened with unit axes at the others, origins spread
    from the listed order."""
    if axes is None:
        return w, origin
    ax = _nd._axes(axes, ndim)
    if len(ax) == ndim:
        return w, origin
    if w.ndim != len(ax):
        raise RuntimeError(f"weights.ndim ({w.ndim}) must match len(axes) ({len(ax)})")
    return (np.expand_dims(w, tuple(a for a in range(ndim) if a not in ax)),
            _nd._on_axes(origin, ax, ndim, "origin"))


def correlate(input, weights, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """tileconv.ndimage.correlate on a dask array."""
    w = _nd._host(weights)  # device weights (CuPy chunks) copied to the host: a mask
    x = _da().asarray(input)
    w, origin = _on_axes(w, origin, x.ndim, axes)
    if w.ndim != x.ndim:
        raise RuntimeError("filter weights array has incorrect shape.")
    return _run(x, lambda b: _nd.correlate(b, w, mode=mode, cval=cval, origin=origin),
                _reach_nd(w.shape, origin, x.ndim), [mode] * x.ndim)


def convolve(input, weights, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """tileconv.ndimage.convolve on a dask array."""
    w = _nd._host(weights)  # device weights (CuPy chunks) copied to the host: a mask
    x = _da().asarray(input)
    w, origin = _on_axes(w, origin, x.ndim, axes)
    if w.ndim != x.ndim:
        raise RuntimeError("filter weights array has incorrect shape.")
    # convolve = correlate with the flipped mask and the mirrored origin
    o = _nd._normalize_origins(origin, x.ndim)
    oc = [-oi - (0 if m & 1 else 1) for oi, m in zip(o, w.shape)]
    return _run(x, lambda b: _nd.convolve(b, w, mode=mode, cval=cval, origin=origin),
                _reach_nd(w.shape, oc, x.ndim), [mode] * x.ndim)


def _axis_reach(ndim, axis, m, origin):
    r = [0] * ndim
    r[axis % ndim] = max(m // 2 + origin, (m - 1) // 2 - origin, 0)
    return r


def correlate1d(input, weights, axis=-1, mode="reflect", cval=0.0, origin=0):
    """tileconv.ndimage.correlate1d on a dask array."""
    w = _nd._host(weights)  # device weights (CuPy chunks) copied to the host: a mask
    x = _da().asarray(input)
    return _run(x, lambda b: _nd.correlate1d(b, w, axis, mode=mode, cval=cval, origin=origin),
                _axis_reach(x.ndim, axis, len(w), origin), [mode] * x.ndim)


def convolve1d(input, weights, axis=-1, mode="reflect", cval=0.0, origin=0):
    """tileconv.ndimage.convolve1d on a dask array."""
    w = _nd._host(weights)  # device weights (CuPy chunks) copied to the host: a mask
    x = _da().asarray(input)
    oc = -origin - (0 if len(w) & 1 else 1)
    return _run(x, lambda b: _nd.convolve1d(b, w, axis, mode=mode, cval=cval, origin=origin),
                _axis_reach(x.ndim, axis, len(w), oc), [mode] * x.ndim)


def uniform_filter1d(input, size, axis=-1, mode="reflect", cval=0.0, origin=0):
    """tileconv.ndimage.uniform_filter1d on a dask array."""
    x = _da().asarray(input)
    return _run(x, lambda b: _nd.uniform_filter1d(b, size, axis, mode=mode, cval=cval,
                                                  origin=origin),
                _axis_reach(x.ndim, axis, int(size), origin), [mode] * x.ndim)


def uniform_filter(input, size=3, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """tileconv.ndimage.uniform_filter on a dask array (the passes of all
    axes in one overlap)."""
    x = _da().asarray(input)
    ax = _nd._axes(axes, x.ndim)
    sizes, modes, origins = _norm(size, len(ax)), _norm(mode, len(ax)), _norm(origin, len(ax))
    reach, amodes = [0] * x.ndim, ["constant"] * x.ndim
    for i, a in enumerate(ax):
        s, o = int(sizes[i]), int(origins[i])
        reach[a] = max(s // 2 + o, (s - 1) // 2 - o, 0)
        amodes[a] = modes[i]
    return _run(x, lambda b: _nd.uniform_filter(b, size, mode=mode, cval=cval, origin=origin,
                                                axes=axes), reach, amodes)


def gaussian_filter1d(input, sigma, axis=-1, order=0, mode="reflect", cval=0.0, truncate=4.0,
                      *, radius=None):
    """tileconv.ndimage.gaussian_filter1d on a dask array."""
    x = _da().asarray(input)
    lw = int(truncate * float(sigma) + 0.5) if radius is None else int(radius)
    return _run(x, lambda b: _nd.gaussian_filter1d(b, sigma, axis, order, mode=mode, cval=cval,
                                                   truncate=truncate, radius=radius),
                _axis_reach(x.ndim, axis, 2 * lw + 1, 0), [mode] * x.ndim)


def gaussian_filter(input, sigma, order=0, mode="reflect", cval=0.0, truncate=4.0, *,
                    radius=None, axes=None):
    """tileconv.ndimage.gaussian_filter on a dask array."""
    x = _da().asarray(input)
    ax = _nd._axes(axes, x.ndim)
    sig, modes, rad = _norm(sigma, len(ax)), _norm(mode, len(ax)), _norm(radius, len(ax))
    reach, amodes = [0] * x.ndim, ["constant"] * x.ndim
    for i, a in enumerate(ax):
        lw = int(truncate * float(sig[i]) + 0.5) if rad[i] is None else int(rad[i])
        reach[a] = lw if sig[i] > 1e-15 else 0
        amodes[a] = modes[i]
    return _run(x, lambda b: _nd.gaussian_filter(b, sigma, order, mode=mode, cval=cval,
                                                 truncate=truncate, radius=radius, axes=axes),
                reach, amodes)


def _edge(name, input, axis, mode, cval):
    x = _da().asarray(input)
    modes = _norm(mode, x.ndim)
    return _run(x, lambda b: getattr(_nd, name)(b, axis, mode=mode, cval=cval), [1] * x.ndim,
                modes)


def sobel(input, axis=-1, mode="reflect", cval=0.0):
    """tileconv.ndimage.sobel on a dask array."""
    return _edge("sobel", input, axis, mode, cval)


def prewitt(input, axis=-1, mode="reflect", cval=0.0):
    """tileconv.ndimage.prewitt on a dask array."""
    return _edge("prewitt", input, axis, mode, cval)


def laplace(input, mode="reflect", cval=0.0):
    """tileconv.ndimage.laplace on a dask array."""
    x = _da().asarray(input)
    return _run(x, lambda b: _nd.laplace(b, mode=mode, cval=cval), [1] * x.ndim,
                _norm(mode, x.ndim))
