"""tileconv: fast convolution (scipy.ndimage and torch semantics) on the
tileconv C library.

    import tileconv.ndimage as ndi      # scipy.ndimage's filters
    import tileconv.signal as sig       # scipy.signal's convolve / correlate / ...
    import tileconv.nn.functional as F  # torch's conv1d / conv2d / conv3d
    import tileconv.nn as tnn           # Conv1d/2d/3d modules, convert(model)

See docs/python.md."""
from . import _core
from . import ndimage
from . import nn
from . import signal

__version__ = _core.version()


def cuda_device_count():
    """The CUDA devices the library can use: 0 when it was built without
    CUDA (TILECONV_CUDA=OFF, the default) or no device is usable."""
    return _core.cuda_device_count()


__all__ = ["ndimage", "nn", "signal", "cuda_device_count", "__version__"]
