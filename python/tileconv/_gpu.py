"""Device arrays through __cuda_array_interface__ (CuPy arrays, torch CUDA
tensors): no host copy; the C library gets the device addresses and only
enqueues its kernels, on the framework's current stream (torch:
torch.cuda.current_stream(device); CuPy: cupy.cuda.get_current_stream()),
so the work is ordered with what the caller queued there. The legacy
default stream (handle 0) maps to the calling thread's default stream,
which waits for it. Other __cuda_array_interface__ producers: that
default stream."""
import numpy as np


def stream(a):
    """The raw cudaStream_t of the current stream of a's framework (an
    int; 0 for the legacy default stream)."""
    mod = type(a).__module__
    if mod.startswith("torch"):
        import torch
        return int(torch.cuda.current_stream(a.device).cuda_stream)
    if mod.startswith("cupy"):
        import cupy
        return int(cupy.cuda.get_current_stream().ptr)
    return 0


def is_gpu(a):
    if type(a).__module__.startswith("torch"):
        return bool(getattr(a, "is_cuda", False))
    return hasattr(a, "__cuda_array_interface__")


_TORCH_DT = {}


def _torch_info(a, name):
    """torch tensors: data_ptr / shape / dtype directly (torch builds its
    __cuda_array_interface__ dict on every access, ~10 us)."""
    if not _TORCH_DT:
        import torch
        _TORCH_DT.update({torch.float32: np.dtype(np.float32), torch.float64: np.dtype(np.float64)})
    dt = _TORCH_DT.get(a.dtype)
    if dt is None:
        raise TypeError(f"tileconv: {name} dtype {a.dtype}, expected float32 or float64")
    if not a.is_contiguous():
        raise ValueError(f"tileconv: {name} must be C-contiguous on the GPU")
    return int(a.data_ptr()), tuple(a.shape), dt


def info(a, name):
    if type(a).__module__.startswith("torch"):
        return _torch_info(a, name)
    c = a.__cuda_array_interface__
    shape = tuple(int(s) for s in c["shape"])
    dt = np.dtype(c["typestr"])
    if dt not in (np.float32, np.float64):
        raise TypeError(f"tileconv: {name} dtype {dt}, expected float32 or float64")
    st = c.get("strides")
    if st is not None:
        want, acc = [], dt.itemsize
        for s in reversed(shape):
            want.append(acc)
            acc *= s
        if tuple(st) != tuple(reversed(want)) and int(np.prod(shape)) > 1:
            raise ValueError(f"tileconv: {name} must be C-contiguous on the GPU")
    return int(c["data"][0]), shape, dt


def empty_like(a, shape, dtype):
    mod = type(a).__module__
    if mod.startswith("torch"):
        import torch
        t = {np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64}[np.dtype(dtype)]
        return torch.empty(shape, dtype=t, device=a.device)
    if mod.startswith("cupy"):
        import cupy
        return cupy.empty(shape, dtype=dtype)
    raise TypeError(f"tileconv: unsupported GPU array type {type(a)}")


def add_batch(a):
    mod = type(a).__module__
    return a.unsqueeze(0) if mod.startswith("torch") else a[None]


def drop_batch(a):
    return a[0]
