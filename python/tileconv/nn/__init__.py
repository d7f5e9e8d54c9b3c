"""tileconv.nn: torch.nn.functional's convolutions on NumPy arrays."""
from . import functional

__all__ = ["functional"]
