"""Array kinds: the one place that knows NumPy from device arrays.

Device arrays (CuPy arrays, torch CUDA tensors) go to the C library
through their device addresses (__cuda_array_interface__ / data_ptr): no
host copy; the library only enqueues its kernels, on the framework's
current stream (torch: torch.cuda.current_stream(device); CuPy:
cupy.cuda.get_current_stream()), so the work is ordered with what the
caller queued there. The legacy default stream (handle 0) maps to the
calling thread's default stream, which waits for it.

A Backend holds what the filters need of a framework: the element type
(as a NumPy dtype), the address, new arrays on the same device, casts,
copies into an output array, and the small device -> host copy of a
filter mask (a plan made with its mask takes it on the host; the big
arrays never leave the device; correlate / convolve with device weights
skip the copy: their mask-at-execute plans read the weights on the
device, ndimage._correlate_dev_weights). backend(a) picks one for an array (None
for host arrays); BACKENDS lists them in order. The tests put a CPU test
double (a NumPy-backed "device array" whose implicit conversion to NumPy
raises, as CuPy's does) in front, to run every function's device path on
machines without a GPU; its plan_backend is 0 (CPU plans on host
addresses), the real ones' 1 (CUDA)."""
import contextlib
import math

import numpy as np

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


class Backend:
    """The operations on one framework's device arrays. Arguments named a,
    x, dst, src are that framework's arrays; dtypes are NumPy dtypes."""
    name = "?"
    plan_backend = 1  # FilterPlan's backend argument: 1 CUDA, 0 CPU

    def owns(self, a):
        raise NotImplementedError

    def dtype(self, a):
        return np.dtype(a.dtype)

    def shape(self, a):
        return tuple(int(s) for s in a.shape)

    def ptr(self, a):
        """The address of a C-contiguous array."""
        return int(a.__cuda_array_interface__["data"][0])

    def is_contiguous(self, a):
        return bool(a.flags.c_contiguous)

    def stream(self, a):
        return 0

    def device_key(self, a):
        return None

    def on_device(self, a):
        """A context making a's device the current one (plans are made and
        run on the current device)."""
        return contextlib.nullcontext()

    def empty(self, like, shape, dtype):
        raise NotImplementedError

    def empty_current(self, like, shape, dtype):
        """empty(), called inside on_device(like) (a framework that needs
        the device made current for an allocation skips doing it again)."""
        return self.empty(like, shape, dtype)

    def nbytes(self, a):
        """The bytes a C-contiguous array spans."""
        return math.prod(self.shape(a)) * self.dtype(a).itemsize

    def zeros(self, like, shape, dtype):
        raise NotImplementedError

    def contiguous(self, a):
        raise NotImplementedError

    def astype(self, a, dtype):
        """a in dtype (a itself when it already is)."""
        raise NotImplementedError

    def to_host(self, a):
        """A small array (a mask) as a NumPy array."""
        raise NotImplementedError

    def to_device(self, like, h):
        raise NotImplementedError

    def copy_(self, dst, src):
        """dst[...] = src (broadcast, cast as the framework casts)."""
        dst[...] = src
        return dst

    def trunc(self, a):
        raise NotImplementedError

    def rint(self, a):
        raise NotImplementedError

    def sqrt(self, a):
        raise NotImplementedError

    def reshape(self, a, shape):
        return a.reshape(shape)

    def moveaxis(self, a, src, dst):
        raise NotImplementedError

    def broadcast_to(self, a, shape):
        raise NotImplementedError

    def stack(self, arrays):
        raise NotImplementedError

    def take(self, a, idx, axis):
        """a indexed by the host integer array idx along axis."""
        raise NotImplementedError

    def flip(self, a):
        """a reversed along every axis."""
        raise NotImplementedError

    def conj(self, a):
        raise NotImplementedError


class CupyBackend(Backend):
    name = "cupy"

    def owns(self, a):
        return type(a).__module__.startswith("cupy")

    def shape(self, a):
        return a.shape  # a tuple of ints already

    def stream(self, a):
        import cupy
        return int(cupy.cuda.get_current_stream().ptr)

    def ptr(self, a):
        return int(a.data.ptr)

    def device_key(self, a):
        return int(a.device.id)

    def on_device(self, a):
        return a.device

    def _cp(self, a):
        import cupy
        return cupy.cuda.Device(a.device.id)

    def empty(self, like, shape, dtype):
        import cupy
        with self._cp(like):
            return cupy.empty(shape, dtype=dtype)

    def empty_current(self, like, shape, dtype):
        import cupy
        return cupy.empty(shape, dtype=dtype)

    def nbytes(self, a):
        return int(a.nbytes)

    def zeros(self, like, shape, dtype):
        import cupy
        with self._cp(like):
            return cupy.zeros(shape, dtype=dtype)

    def contiguous(self, a):
        import cupy
        return a if a.flags.c_contiguous else cupy.ascontiguousarray(a)

    def astype(self, a, dtype):
        return a if a.dtype == dtype else a.astype(dtype)

    def to_host(self, a):
        return a.get()

    def to_device(self, like, h):
        import cupy
        with self._cp(like):
            return cupy.asarray(h)

    def trunc(self, a):
        import cupy
        return cupy.trunc(a)

    def rint(self, a):
        import cupy
        return cupy.rint(a)

    def sqrt(self, a):
        import cupy
        return cupy.sqrt(a)

    def moveaxis(self, a, src, dst):
        import cupy
        return cupy.moveaxis(a, src, dst)

    def broadcast_to(self, a, shape):
        import cupy
        return cupy.broadcast_to(a, shape)

    def stack(self, arrays):
        import cupy
        return cupy.stack(arrays)

    def take(self, a, idx, axis):
        import cupy
        return cupy.take(a, self.to_device(a, np.asarray(idx, dtype=np.int64)), axis=axis)

    def flip(self, a):
        import cupy
        return cupy.flip(a)

    def conj(self, a):
        import cupy
        return cupy.conj(a)


_TORCH = {}


def _torch_maps():
    if not _TORCH:
        import torch
        pairs = [("float16", "float16"), ("float32", "float32"), ("float64", "float64"),
                 ("complex64", "complex64"), ("complex128", "complex128"), ("int8", "int8"),
                 ("int16", "int16"), ("int32", "int32"), ("int64", "int64"),
                 ("uint8", "uint8"), ("uint16", "uint16"), ("uint32", "uint32"),
                 ("uint64", "uint64"), ("bool", "bool")]
        to_np, to_t = {}, {}
        for tn, nn in pairs:
            t = getattr(torch, tn, None)
            if t is not None:
                to_np[t] = np.dtype(nn)
                to_t[np.dtype(nn)] = t
        _TORCH["np"], _TORCH["t"] = to_np, to_t
    return _TORCH["np"], _TORCH["t"]


class TorchBackend(Backend):
    name = "torch"

    def owns(self, a):
        return type(a).__module__.startswith("torch") and bool(getattr(a, "is_cuda", False))

    def dtype(self, a):
        dt = _torch_maps()[0].get(a.dtype)
        if dt is None:
            raise TypeError(f"tileconv: torch dtype {a.dtype} not supported")
        return dt

    def tdtype(self, dtype):
        t = _torch_maps()[1].get(np.dtype(dtype))
        if t is None:
            raise TypeError(f"tileconv: dtype {np.dtype(dtype)} has no torch equivalent")
        return t

    def ptr(self, a):
        return int(a.data_ptr())

    def shape(self, a):
        return tuple(a.shape)

    def is_contiguous(self, a):
        return bool(a.is_contiguous())

    def stream(self, a):
        return torch_stream(a)

    def device_key(self, a):
        return a.get_device()

    def nbytes(self, a):
        return a.numel() * a.element_size()

    def on_device(self, a):
        import torch
        return torch.cuda.device(a.device) if a.is_cuda else contextlib.nullcontext()

    def empty(self, like, shape, dtype):
        import torch
        return torch.empty(tuple(shape), dtype=self.tdtype(dtype), device=like.device)

    def zeros(self, like, shape, dtype):
        import torch
        return torch.zeros(tuple(shape), dtype=self.tdtype(dtype), device=like.device)

    def contiguous(self, a):
        return a.contiguous()

    def astype(self, a, dtype):
        t = self.tdtype(dtype)
        return a if a.dtype == t else a.to(t)

    def to_host(self, a):
        return a.detach().cpu().numpy()

    def to_device(self, like, h):
        import torch
        return torch.as_tensor(np.ascontiguousarray(h), device=like.device)

    def copy_(self, dst, src):
        if isinstance(src, np.ndarray):
            src = self.to_device(dst, src)
        dst.copy_(src) if hasattr(src, "shape") else dst.fill_(src)
        return dst

    def trunc(self, a):
        return a.trunc()

    def rint(self, a):
        return a.round()  # half to even, as numpy's rint

    def sqrt(self, a):
        if a.dtype == _torch_maps()[1][np.dtype(np.float16)] and not a.is_cuda:
            return a.float().sqrt().half()  # torch's CPU sqrt has no float16 kernel
        return a.sqrt()

    def moveaxis(self, a, src, dst):
        import torch
        return torch.movedim(a, src, dst)

    def broadcast_to(self, a, shape):
        return a.expand(tuple(shape))

    def stack(self, arrays):
        import torch
        return torch.stack(list(arrays))

    def take(self, a, idx, axis):
        import torch
        i = torch.as_tensor(np.asarray(idx, dtype=np.int64), device=a.device)
        return torch.index_select(a, axis, i)

    def flip(self, a):
        return a.flip(tuple(range(a.ndim)))

    def conj(self, a):
        return a.conj().resolve_conj()  # torch's conj is a lazy view


_RAW_STREAM = []


def torch_stream(t):
    """The raw cudaStream_t (an int) of torch's current stream on CUDA
    tensor t's device: torch._C._cuda_getCurrentRawStream where torch has
    it (what torch's own compiled code calls: an int, no Stream object),
    else torch.cuda.current_stream(device).cuda_stream."""
    if not _RAW_STREAM:
        import torch
        _RAW_STREAM.append(getattr(torch._C, "_cuda_getCurrentRawStream", None))
    raw = _RAW_STREAM[0]
    if raw is not None:
        return int(raw(t.get_device()))
    import torch
    return int(torch.cuda.current_stream(t.device).cuda_stream)


BACKENDS = [CupyBackend(), TorchBackend()]


def backend(a):
    """The Backend of a device array; None for NumPy arrays, lists,
    scalars and torch CPU tensors."""
    if type(a) is np.ndarray:
        return None
    for b in BACKENDS:
        if b.owns(a):
            return b
    if hasattr(a, "__cuda_array_interface__"):
        raise TypeError(f"tileconv: device arrays of type {type(a).__name__} are not "
                        "supported (CuPy arrays and torch CUDA tensors are)")
    return None


def is_gpu(a):
    return backend(a) is not None


def np_dtype(dt, be=None):
    """A NumPy dtype from a NumPy or torch dtype (or anything np.dtype
    takes)."""
    if type(dt).__module__.startswith("torch"):
        r = _torch_maps()[0].get(dt)
        if r is None:
            raise TypeError(f"tileconv: torch dtype {dt} not supported")
        return r
    return np.dtype(dt)


def overlaps(be, a, b):
    """Whether two device arrays of be may share memory (address ranges)."""
    try:  # dense arrays: address and size
        if be.is_contiguous(a) and be.is_contiguous(b):
            pa, na, pb, nb = be.ptr(a), be.nbytes(a), be.ptr(b), be.nbytes(b)
            return pa < pb + nb and pb < pa + na and na > 0 and nb > 0
    except Exception:  # noqa: BLE001 - the general rule below
        pass
    try:
        pa, pb = _span(be, a), _span(be, b)
    except Exception:  # noqa: BLE001 - unknown layout: assume they may
        return True
    return pa[0] < pb[1] and pb[0] < pa[1]


def _span(be, a):
    if be.name == "torch":
        lo = int(a.data_ptr())
        n = a.element_size() * (1 + sum((s - 1) * st for s, st in zip(a.shape, a.stride())))
        return lo, lo + n
    c = a.__cuda_array_interface__
    lo = int(c["data"][0])
    isz = np.dtype(c["typestr"]).itemsize
    shape = c["shape"]
    st = c.get("strides")
    if st is None:
        return lo, lo + isz * math.prod(shape)
    if any(s == 0 for s in shape):
        return lo, lo
    neg = sum((s - 1) * t for s, t in zip(shape, st) if t < 0)
    pos = sum((s - 1) * t for s, t in zip(shape, st) if t > 0)
    return lo + neg, lo + pos + isz


# ---- the names the package used before the Backend class ----

def stream(a):
    """The raw cudaStream_t of the current stream of a's framework (an
    int; 0 for the legacy default stream)."""
    b = backend(a)
    return b.stream(a) if b is not None else 0


def info(a, name):
    """(address, shape, NumPy dtype) of a C-contiguous device array."""
    b = backend(a)
    if not b.is_contiguous(a):
        raise ValueError(f"tileconv: {name} must be C-contiguous on the GPU")
    return b.ptr(a), b.shape(a), b.dtype(a)


def empty_like(a, shape, dtype):
    return backend(a).empty(a, shape, dtype)
