"""tileconv.nn.functional - conv1d / conv2d / conv3d with torch's
signature and results, on NumPy arrays (float32 / float64), plus torch's
padding_mode ('zeros', 'reflect', 'replicate', 'circular').

    y = conv2d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1,
               padding_mode="zeros")

x is (N, C, *spatial) or unbatched (C, *spatial), weight (K, C/groups,
*kernel). padding: an int, a tuple, 'same' (stride 1) or 'valid'. Plans are
cached by problem; the weights are passed with every call.

allow_tf32 (module attribute, default False: strict float32, where
PyTorch's torch.backends.cudnn.allow_tf32 defaults to True): True lets GPU
calls (CuPy arrays, torch CUDA tensors) use the TF32 tensor cores
(TC_PLAN_ALLOW_TF32: ~5e-4 relative error instead of ~1e-6,
docs/semantics.md). NumPy calls run on the CPU and are not affected.
"""
import threading
from collections import OrderedDict

import numpy as np

from .. import _core
from .. import _gpu

__all__ = ["conv1d", "conv2d", "conv3d"]

_PMODES = {"zeros": 0, "reflect": 1, "replicate": 2, "circular": 3}
_cache = OrderedDict()
_lock = threading.Lock()
threads = 0
allow_tf32 = False
_ALLOW_TF32 = 4  # TC_PLAN_ALLOW_TF32


def _tuple(v, n, name):
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    v = tuple(int(e) for e in v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError(f"expected {name} to be a single integer value or a list of {n} values")
    return v


def _conv_gpu(nsp, input, weight, bias, stride, padding, dilation, groups, padding_mode):
    """CuPy arrays / torch CUDA tensors: the CUDA backend on the device
    addresses, no host copy; the output is a new array of the input's kind."""
    if not _gpu.is_gpu(weight) or (bias is not None and not _gpu.is_gpu(bias)):
        raise TypeError("tileconv: input on the GPU needs weight and bias on the GPU too")
    x = input
    xp, xs, xdt = _gpu.info(x, "input")
    unbatched = len(xs) == nsp + 1
    if unbatched:
        x = _gpu.add_batch(x)
        xp, xs, xdt = _gpu.info(x, "input")
    wp, ws, wdt = _gpu.info(weight, "weight")
    if wdt != xdt:
        raise TypeError(f"tileconv: weight dtype {wdt} differs from input dtype {xdt}")
    if len(xs) != nsp + 2 or len(ws) != nsp + 2:
        raise RuntimeError(f"conv{nsp}d: input rank {len(xs)}, weight rank {len(ws)}")
    bp = 0
    if bias is not None:
        bp, bs, bdt = _gpu.info(bias, "bias")
        if bs != (ws[0],) or bdt != xdt:
            raise RuntimeError(f"bias of shape {bs}, expected ({ws[0]},)")
    if padding_mode not in _PMODES:
        raise ValueError(f"padding_mode must be one of {sorted(_PMODES)}, got '{padding_mode}'")
    stride = _tuple(stride, nsp, "stride")
    dilation = _tuple(dilation, nsp, "dilation")
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"Invalid padding string '{padding}'")
        pkind, pad = (1 if padding == "same" else 2), (0,) * nsp
    else:
        pkind, pad = 0, _tuple(padding, nsp, "padding")
    dt = 0 if xdt == np.float32 else 1
    tf32 = bool(allow_tf32)
    key = ("cuda", nsp, dt, xs, ws, int(groups), stride, dilation, pad, pkind, padding_mode,
           bias is not None, tf32)
    with _lock:
        p = _cache.get(key)
    if p is None:
        p = _core.ConvPlan(dt, xs, ws, int(groups), stride, dilation, pad, pkind,
                           _PMODES[padding_mode], int(bias is not None), 0, None, 1,
                           _ALLOW_TF32 if tf32 else 0)
        with _lock:
            _cache[key] = p
            while len(_cache) > 32:
                _cache.popitem(last=False)
    y = _gpu.empty_like(x, p.out_shape, xdt)
    yp = _gpu.info(y, "output")[0]
    p.execute_ptr(xp, wp, bp, yp, _gpu.stream(x))
    return _gpu.drop_batch(y) if unbatched else y


def _conv(nsp, input, weight, bias, stride, padding, dilation, groups, padding_mode):
    if _gpu.is_gpu(input):
        return _conv_gpu(nsp, input, weight, bias, stride, padding, dilation, groups,
                         padding_mode)
    x = np.asarray(input)
    w = np.asarray(weight)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"tileconv: input dtype {x.dtype}, expected float32 or float64")
    if w.dtype != x.dtype:
        raise TypeError(f"tileconv: weight dtype {w.dtype} differs from input dtype {x.dtype}")
    unbatched = x.ndim == nsp + 1
    if unbatched:
        x = x[None]
    if x.ndim != nsp + 2:
        raise RuntimeError(f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to "
                           f"conv{nsp}d, but got input of size: {list(np.shape(input))}")
    if w.ndim != nsp + 2:
        raise RuntimeError(f"weight of rank {w.ndim}, expected {nsp + 2}")
    if padding_mode not in _PMODES:
        raise ValueError(f"padding_mode must be one of {sorted(_PMODES)}, got '{padding_mode}'")
    groups = int(groups)
    if groups < 1 or x.shape[1] % groups or w.shape[0] % groups:
        raise ValueError("groups must be a positive integer dividing in_channels and "
                         f"out_channels (groups={groups}, in {x.shape[1]}, out {w.shape[0]})")
    if w.shape[1] * groups != x.shape[1]:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(w.shape)}, expected "
                           f"input{list(x.shape)} to have {w.shape[1] * groups} channels, but "
                           f"got {x.shape[1]} channels instead")
    stride = _tuple(stride, nsp, "stride")
    dilation = _tuple(dilation, nsp, "dilation")
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"Invalid padding string '{padding}', should be one of "
                             "{'valid', 'same'}")
        if padding == "same" and any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
        pkind, pad = (1 if padding == "same" else 2), (0,) * nsp
    else:
        pkind, pad = 0, _tuple(padding, nsp, "padding")
    has_bias = bias is not None
    b = None
    if has_bias:
        b = np.ascontiguousarray(bias, dtype=x.dtype)
        if b.shape != (w.shape[0],):
            raise RuntimeError(f"bias of shape {b.shape}, expected ({w.shape[0]},)")
    x = np.ascontiguousarray(x)
    w = np.ascontiguousarray(w)
    dt = 0 if x.dtype == np.float32 else 1
    key = (nsp, dt, x.shape, w.shape, groups, stride, dilation, pad, pkind, padding_mode,
           has_bias, threads)
    with _lock:
        p = _cache.get(key)
        if p is not None:
            _cache.move_to_end(key)
    if p is None:
        p = _core.ConvPlan(dt, x.shape, w.shape, groups, stride, dilation, pad, pkind,
                           _PMODES[padding_mode], int(has_bias), int(threads), None)
        with _lock:
            _cache[key] = p
            while len(_cache) > 32:
                _cache.popitem(last=False)
    y = np.empty(p.out_shape, dtype=x.dtype)
    p.execute(x, w, b, y)
    return y[0] if unbatched else y


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
           padding_mode="zeros"):
    """torch.nn.functional.conv1d (plus torch.nn.Conv1d's padding_mode)."""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups, padding_mode)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
           padding_mode="zeros"):
    """torch.nn.functional.conv2d (plus torch.nn.Conv2d's padding_mode)."""
    return _conv(2, input, weight, bias, stride, padding, dilation, groups, padding_mode)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
           padding_mode="zeros"):
    """torch.nn.functional.conv3d (plus torch.nn.Conv3d's padding_mode)."""
    return _conv(3, input, weight, bias, stride, padding, dilation, groups, padding_mode)
