"""gpu_common.py - what bench/gpu_layers.py and bench/gpu_gemm.py share.

setup(tool): reads BUILD_DIR_or_CLI and OUTDIR from the command line;
exits 0 with one line when torch or a CUDA device is missing (the scripts
never assert); else returns (torch, the ctypes library
BUILD_DIR/libtileconv.so with the calls both scripts make typed, OUTDIR).
PlanOpts mirrors tc_plan_options, ConvDesc tc_conv_desc (gpu_layers.py,
gpu_layers_half.py: every field, so that struct_size matches the library's)."""
import ctypes
import os
import sys


VP = ctypes.c_void_p


class PlanOpts(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("flags", ctypes.c_uint),
                ("algorithm", ctypes.c_char_p), ("workspace_limit", ctypes.c_size_t)]


I64x3 = ctypes.c_int64 * 3


class ConvDesc(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("dtype", ctypes.c_int),
                ("nspatial", ctypes.c_int), ("batch", ctypes.c_int64),
                ("in_channels", ctypes.c_int64), ("out_channels", ctypes.c_int64),
                ("groups", ctypes.c_int64), ("in_size", I64x3), ("kernel_size", I64x3),
                ("stride", I64x3), ("dilation", I64x3), ("padding", I64x3),
                ("padding_kind", ctypes.c_int), ("padding_mode", ctypes.c_int),
                ("has_bias", ctypes.c_int), ("layout", ctypes.c_int),
                ("activation", ctypes.c_int), ("has_residual", ctypes.c_int),
                ("weight_layout", ctypes.c_int)]


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
    lib = ctypes.CDLL(os.path.join(bdir, "libtileconv.so"))
    lib.tc_last_error.restype = ctypes.c_char_p
    lib.tc_plan_algorithm.restype = ctypes.c_char_p
    lib.tc_plan_algorithm.argtypes = [VP]
    lib.tc_plan_destroy.argtypes = [VP]
    lib.tc_cuda_time_plan.argtypes = [VP, VP, VP, VP, ctypes.c_int,
                                      ctypes.POINTER(ctypes.c_double),
                                      ctypes.POINTER(ctypes.c_double)]
    return torch, lib, outdir
