"""tileconv.nn: torch.nn.functional's convolutions (functional: NumPy
arrays, torch tensors, CuPy arrays) and, when torch is importable, the
modules Conv1d / Conv2d / Conv3d (torch.nn.Conv*d subclasses) and
convert(model). torch is imported on first use of those names."""
from . import functional

__all__ = ["functional", "Conv1d", "Conv2d", "Conv3d", "convert"]

_MODULE_NAMES = ("Conv1d", "Conv2d", "Conv3d", "convert")


def __getattr__(name):
    if name in _MODULE_NAMES:
        try:
            from . import modules
        except ImportError as e:
            raise ImportError(f"tileconv.nn.{name} needs torch ({e})") from e
        return getattr(modules, name)
    raise AttributeError(f"module 'tileconv.nn' has no attribute '{name}'")
