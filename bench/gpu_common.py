"""gpu_common.py - what bench/gpu_layers.py and bench/gpu_gemm.py share.

setup(tool): reads BUILD_DIR_or_CLI and OUTDIR from the command line;
exits 0 with one line when torch or a CUDA device is missing (the scripts
never assert); else returns (torch, the ctypes library
BUILD_DIR/libtileconv.so, OUTDIR)."""
import ctypes
import os
import sys


def setup(tool):
    arg, outdir = sys.argv[1], sys.argv[2]
    bdir = arg if os.path.isdir(arg) else os.path.dirname(arg)
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        print(f"{tool}: no torch ({e}): nothing to compare")
        sys.exit(0)
    if not torch.cuda.is_available():
        print(f"{tool}: no CUDA device")
        sys.exit(0)
    return torch, ctypes.CDLL(os.path.join(bdir, "libtileconv.so")), outdir
