"""A CPU test double of a device array framework: FakeArray wraps a NumPy
array the way a CuPy array wraps device memory (__cuda_array_interface__,
and an implicit conversion to NumPy that raises, as CuPy's does), and
FakeBackend gives tileconv._gpu the operations it asks of a framework.
Its plans are CPU plans (plan_backend 0) on the wrapped arrays' host
addresses, handed over through execute_ptr as device addresses are, so
every function's device path runs, for real, without a GPU. to_host
records what was copied to the host (only masks may be)."""
import numpy as np

from tileconv import _gpu


def _unwrap(v):
    if isinstance(v, FakeArray):
        return v._a
    if isinstance(v, tuple):
        return tuple(_unwrap(x) for x in v)
    return v


def _wrap(v, cls=None):
    return (cls or FakeArray)(v) if isinstance(v, np.ndarray) else v


class FakeArray:
    """A "device array" over a NumPy array (views stay views)."""
    __array_ufunc__ = None  # NumPy defers to the reflected operators
    __hash__ = None

    def __init__(self, a):
        self._a = a

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    @property
    def __cuda_array_interface__(self):
        a = self._a
        return {"shape": a.shape, "typestr": a.dtype.str, "version": 3,
                "data": (a.__array_interface__["data"][0], False),
                "strides": None if a.flags.c_contiguous else a.strides}

    def get(self):
        return self._a.copy()

    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: self._a.flags)

    @property
    def real(self):
        return type(self)(self._a.real)

    @real.setter
    def real(self, v):
        self._a.real = _unwrap(v)

    @property
    def imag(self):
        return type(self)(self._a.imag)

    @imag.setter
    def imag(self, v):
        self._a.imag = _unwrap(v)

    def __getitem__(self, k):
        return _wrap(self._a[_unwrap(k)], type(self))

    def __setitem__(self, k, v):
        self._a[_unwrap(k)] = _unwrap(v)

    def reshape(self, *shape):
        return type(self)(self._a.reshape(*shape))

    def astype(self, dt):
        return type(self)(self._a.astype(dt))

    def conj(self):
        return type(self)(self._a.conj())

    def __len__(self):
        return len(self._a)

    def __repr__(self):
        return f"FakeArray({self._a!r})"


def _binop(name):
    def f(self, other):
        return _wrap(getattr(self._a, name)(_unwrap(other)), type(self))
    return f


def _iop(name):
    def f(self, other):
        getattr(self._a, name)(_unwrap(other))
        return self
    return f


for _n in ("add", "sub", "mul", "truediv", "radd", "rsub", "rmul", "rtruediv", "ne", "eq",
           "lt", "gt", "le", "ge"):
    setattr(FakeArray, f"__{_n}__", _binop(f"__{_n}__"))
for _n in ("iadd", "isub", "imul", "itruediv"):
    setattr(FakeArray, f"__{_n}__", _iop(f"__{_n}__"))
FakeArray.__neg__ = lambda self: type(self)(-self._a)


class FakeBackend(_gpu.Backend):
    name = "fake"
    plan_backend = 0  # CPU plans on the wrapped host addresses

    def __init__(self):
        self.host_copies = []  # the sizes of the arrays to_host copied

    def owns(self, a):
        return isinstance(a, FakeArray)

    def ptr(self, a):
        assert a._a.flags.c_contiguous
        return int(a._a.ctypes.data)

    def empty(self, like, shape, dtype):
        return FakeArray(np.empty(shape, dtype))

    def zeros(self, like, shape, dtype):
        return FakeArray(np.zeros(shape, dtype))

    def contiguous(self, a):
        return a if a._a.flags.c_contiguous else FakeArray(np.ascontiguousarray(a._a))

    def astype(self, a, dtype):
        return a if a._a.dtype == dtype else FakeArray(a._a.astype(dtype))

    def to_host(self, a):
        self.host_copies.append(a._a.size)
        return a._a.copy()

    def to_device(self, like, h):
        return FakeArray(np.array(h))

    def copy_(self, dst, src):
        """dst[...] = src, a float source cast into an integer dst as a
        GPU's conversion does (saturated to the type's range, as CuPy's
        and torch's device casts: -6.0 -> 0 in uint8, where NumPy's host
        cast wraps to 250), so that the device paths are held to scipy's
        wrapping cast on their own."""
        v = _unwrap(src)
        dk = dst._a.dtype
        if dk.kind in "iu" and np.asarray(v).dtype.kind == "f":
            info = np.iinfo(dk)
            v = np.clip(np.nan_to_num(np.asarray(v)), float(info.min), float(info.max))
        dst._a[...] = v
        return dst

    def trunc(self, a):
        return FakeArray(np.trunc(a._a))

    def rint(self, a):
        return FakeArray(np.rint(a._a))

    def sqrt(self, a):
        return FakeArray(np.sqrt(a._a))

    def moveaxis(self, a, src, dst):
        return FakeArray(np.moveaxis(a._a, src, dst))

    def broadcast_to(self, a, shape):
        return FakeArray(np.broadcast_to(a._a, shape))

    def stack(self, arrays):
        return FakeArray(np.stack([x._a for x in arrays]))

    def take(self, a, idx, axis):
        return FakeArray(np.take(a._a, np.asarray(idx), axis=axis))

    def flip(self, a):
        return FakeArray(np.flip(a._a))

    def conj(self, a):
        return FakeArray(np.conj(a._a))


class TorchCPUBackend(_gpu.TorchBackend):
    """torch CPU tensors taken as device tensors: TorchBackend's own code
    (allocation, casts, copies, movedim / expand / index_select, the real
    and imag views) on CPU plans through execute_ptr on data_ptr(), for
    machines without a GPU. torch CPU tensors convert to NumPy silently,
    so the no-host-copy rule is checked with FakeArray, not here."""
    plan_backend = 0

    def owns(self, a):
        return type(a).__module__.startswith("torch") and hasattr(a, "data_ptr")

    def stream(self, a):
        return 0


class _Dev:
    id = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Ptr:
    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr


class CupyLike(FakeArray):
    """What CupyBackend reads of a CuPy array: the module name, .device.id,
    .data.ptr, .flags, .get()."""
    device = _Dev()

    @property
    def data(self):
        return _Ptr(self._a.__array_interface__["data"][0])


CupyLike.__module__ = "cupy"


def fake_cupy_module():
    """A stand-in for the cupy module over CupyLike arrays (the functions
    CupyBackend calls), for sys.modules["cupy"] within one test."""
    import types
    m = types.ModuleType("cupy")
    w = CupyLike

    def lift(f):
        return lambda *a, **k: _wrap(f(*[_unwrap(x) for x in a],
                                       **{n: _unwrap(v) for n, v in k.items()}), w)
    for name in ("empty", "zeros", "ascontiguousarray", "trunc", "rint", "sqrt", "moveaxis",
                 "broadcast_to", "take", "flip", "conj", "asarray"):
        setattr(m, name, lift(getattr(np, name)))
    m.stack = lambda arrays: w(np.stack([_unwrap(x) for x in arrays]))
    m.ndarray = CupyLike
    cuda = types.SimpleNamespace(Device=lambda i=0: _Dev(),
                                 get_current_stream=lambda: types.SimpleNamespace(ptr=0))
    m.cuda = cuda
    return m
