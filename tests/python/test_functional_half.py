"""tileconv.nn.functional's dtypes (float16, bfloat16), channels-last layout
and fused epilogue (activation=, residual=), and FilterPlan's float16 /
bfloat16, against float64 models on the same (rounded) inputs and against
torch (CPU) in float32 / float64.

Half-precision bound (docs/semantics.md's, without its floor of 1 on the
global term): products summed in float32, one rounding to the dtype:
|y - ref| <= rel * mag + glob * max(mag), with mag
the magnitude sum |w| * |x| + |bias| + |residual| in float64 and rel / glob
2e-3 / 5e-4 for float16 (2^-11 unit roundoff), 1.6e-2 / 4e-3 for bfloat16
(2^-8): about two units in the last place plus a global term for
activations whose value is not small where their input is."""
import math

import numpy as np
import pytest

import tileconv.nn.functional as F
import tileconv
from tileconv import _core
from test_functional import ref_conv

SEED = 11
ACTS = [None, "relu", "relu6", "silu", "sigmoid", "tanh", "gelu"]
TOL = {"float16": (2e-3, 5e-4), "bfloat16": (1.6e-2, 4e-3)}


def act64(v, act):
    if act is None:
        return v
    if act == "relu":
        return np.maximum(v, 0)
    if act == "relu6":
        return np.minimum(np.maximum(v, 0), 6)
    if act == "silu":
        return v / (1 + np.exp(-v))
    if act == "sigmoid":
        return 1 / (1 + np.exp(-v))
    if act == "tanh":
        return np.tanh(v)
    if act == "gelu":
        erf = np.vectorize(math.erf)
        return v / 2 * (1 + erf(v / math.sqrt(2)))
    raise ValueError(act)


def model(x, w, b, r, act, stride=1, pad=0, dil=1, groups=1, mode="zeros"):
    """float64 value and magnitude of act(conv + b + r) (N x K x spatial)."""
    nsp = x.ndim - 2
    t = (lambda v: (v,) * nsp)
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    y = ref_conv(x, w, None if b is None else np.asarray(b, np.float64), t(stride), t(pad),
                 t(dil), groups, mode)
    mag = ref_conv(np.abs(x), np.abs(w), None if b is None else np.abs(np.asarray(b, np.float64)),
                   t(stride), t(pad), t(dil), groups, mode)
    if r is not None:
        y = y + np.asarray(r, np.float64)
        mag = mag + np.abs(np.asarray(r, np.float64))
    return act64(y, act), mag


def check_half(y, ref, mag, dtname):
    rel, glob = TOL[dtname]
    y = np.asarray(y, np.float64)
    bound = rel * mag + glob * max(mag.max(), 1e-30) + 1e-30
    err = np.abs(y - ref)
    assert np.all(err <= bound), (f"{dtname}: max error {err.max():.3g}, worst ratio "
                                  f"{(err / bound).max():.3g}")


CASES = [  # nsp, N, C, K, groups, spatial, kernel, stride, pad, dil
    (1, 2, 5, 7, 1, (19,), (3,), 1, 1, 1),
    (2, 2, 6, 10, 2, (9, 11), (3, 2), 1, 1, 1),
    (2, 1, 3, 8, 1, (17, 15), (5, 5), 2, 2, 1),
    (2, 2, 4, 4, 4, (10, 9), (3, 3), 1, 2, 2),  # depthwise, dilation 2
    (3, 1, 2, 3, 1, (5, 6, 7), (3, 3, 2), 1, 1, 1),
]
FN = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def make(case, dtype, rng):
    nsp, N, C, K, G, n, k, s, p, d = case
    x = rng.uniform(-1, 1, (N, C) + n).astype(dtype)
    w = rng.uniform(-1, 1, (K, C // G) + k).astype(dtype)
    b = rng.uniform(-1, 1, K).astype(dtype)
    return x, w, b


def out_shape(case):
    nsp, N, C, K, G, n, k, s, p, d = case
    return (N, K) + tuple((n[i] + 2 * p - d * (k[i] - 1) - 1) // s + 1 for i in range(nsp))


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_epilogue_numpy(case, dtype, act):
    rng = np.random.default_rng(SEED)
    x, w, b = make(case, dtype, rng)
    r = rng.uniform(-1, 1, out_shape(case)).astype(dtype)
    nsp, s, p, d, G = case[0], case[7], case[8], case[9], case[4]
    y = FN[nsp](x, w, b, s, p, d, G, activation=act, residual=r)
    ref, mag = model(x, w, b, r, act, s, p, d, G)
    assert y.dtype == dtype and y.shape == ref.shape
    tol = 2e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(y, ref, rtol=0, atol=tol * mag.max())


# channels-last: 4-D / 5-D arrays only
CASES_CL = [(c, cl) for c in CASES for cl in (False, True) if not (cl and c[0] == 1)]


@pytest.mark.parametrize("act", [None, "relu", "gelu", "sigmoid"])
@pytest.mark.parametrize("res", [False, True])
@pytest.mark.parametrize("case,cl", CASES_CL)
def test_float16_numpy(case, cl, res, act):
    rng = np.random.default_rng(SEED + 1)
    x, w, b = make(case, np.float16, rng)
    r = rng.uniform(-2, 2, out_shape(case)).astype(np.float16) if res else None
    nsp, s, p, d, G = case[0], case[7], case[8], case[9], case[4]
    xin = x
    if cl:  # an N x spatial x C array seen as N x C x spatial
        o = (0,) + tuple(range(2, x.ndim)) + (1,)
        xin = np.ascontiguousarray(x.transpose(o)).transpose(np.argsort(o))
        assert not xin.flags.c_contiguous
    y = FN[nsp](xin, w, b, s, p, d, G, activation=act, residual=r)
    assert y.dtype == np.float16 and y.shape == out_shape(case)
    if cl:  # the output in the input's memory format
        assert not y.flags.c_contiguous
        assert np.transpose(y, o).flags.c_contiguous
    ref, mag = model(x, w, b, r, act, s, p, d, G)
    check_half(y, ref, mag, "float16")


def test_float16_padding_modes():
    rng = np.random.default_rng(SEED + 2)
    x = rng.uniform(-1, 1, (2, 4, 12, 9)).astype(np.float16)
    w = rng.uniform(-1, 1, (5, 4, 3, 3)).astype(np.float16)
    for mode in ("reflect", "replicate", "circular"):
        y = F.conv2d(x, w, None, 1, 1, padding_mode=mode, activation="relu6")
        ref, mag = model(x, w, None, None, "relu6", pad=1, mode=mode)
        check_half(y, ref, mag, "float16")


def test_numpy_channels_last_no_copy():
    """float32 NHWC data through a transposed view: the result matches the
    channels-first call and is laid out channels-last."""
    rng = np.random.default_rng(SEED + 3)
    nhwc = rng.uniform(-1, 1, (2, 13, 11, 6)).astype(np.float32)
    x = nhwc.transpose(0, 3, 1, 2)
    w = rng.uniform(-1, 1, (8, 6, 3, 3)).astype(np.float32)
    y = F.conv2d(x, w, padding=1, activation="tanh")
    y0 = F.conv2d(np.ascontiguousarray(x), w, padding=1, activation="tanh")
    assert y.transpose(0, 2, 3, 1).flags.c_contiguous
    np.testing.assert_allclose(y, y0, rtol=0, atol=1e-5)


def test_errors():
    x = np.zeros((1, 4, 8, 8), np.float16)
    w = np.zeros((6, 4, 3, 3), np.float32)
    with pytest.raises(TypeError, match="float32.*float16"):
        F.conv2d(x, w)
    with pytest.raises(TypeError, match="float64.*float16"):
        F.conv2d(x, w.astype(np.float16), np.zeros(6, np.float64))
    with pytest.raises(TypeError, match="residual dtype float32"):
        F.conv2d(x, w.astype(np.float16), residual=np.zeros((1, 6, 6, 6), np.float32))
    with pytest.raises(RuntimeError, match="residual of shape"):
        F.conv2d(x, w.astype(np.float16), residual=np.zeros((1, 6, 8, 8), np.float16))
    with pytest.raises(ValueError, match="activation 'swish'"):
        F.conv2d(x, w.astype(np.float16), activation="swish")
    with pytest.raises(TypeError, match="bfloat16"):  # NumPy has no bfloat16
        F.conv2d(x.view(np.int16), w.astype(np.float16).view(np.int16))


def test_positional_signature_unchanged():
    rng = np.random.default_rng(SEED + 4)
    x = rng.uniform(-1, 1, (1, 2, 9)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 2, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, 3).astype(np.float32)
    y = F.conv1d(x, w, b, 2, 1, 1, 1, "circular")
    ref, mag = model(x, w, b, None, None, 2, 1, 1, 1, "circular")
    np.testing.assert_allclose(y, ref, atol=1e-5)
    with pytest.raises(TypeError):
        F.conv1d(x, w, b, 2, 1, 1, 1, "circular", "relu")  # activation is keyword-only


# ---------------------------------------------------------------- torch CPU
torch = None
try:
    import torch
except ImportError:
    pass
needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")
TFN = {1: "conv1d", 2: "conv2d", 3: "conv3d"}
TACT = {None: lambda v: v, "relu": "relu", "relu6": "relu6", "silu": "silu",
        "sigmoid": "sigmoid", "tanh": "tanh", "gelu": "gelu"}


def torch_ref(x, w, b, r, act, s, p, d, G):
    import torch.nn.functional as tF
    y = getattr(tF, TFN[x.dim() - 2])(x, w, b, s, p, d, G)
    if r is not None:
        y = y + r
    a = TACT[act]
    if isinstance(a, str):
        a = getattr(tF, a) if a not in ("sigmoid", "tanh") else getattr(torch, a)
    return a(y)


def mf_for(nsp):
    return torch.channels_last if nsp == 2 else torch.channels_last_3d


@needs_torch
@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case,cl", CASES_CL)
def test_torch_cpu(case, cl, dtype, act):
    nsp, s, p, d, G = case[0], case[7], case[8], case[9], case[4]
    g = torch.Generator().manual_seed(SEED)
    tdt = getattr(torch, dtype)
    shp = out_shape(case)
    x = torch.rand((case[1], case[2]) + case[5], generator=g, dtype=tdt) * 2 - 1
    w = torch.rand((case[3], case[2] // G) + case[6], generator=g, dtype=tdt) * 2 - 1
    b = torch.rand(case[3], generator=g, dtype=tdt) * 2 - 1
    r = torch.rand(shp, generator=g, dtype=tdt) * 2 - 1
    if cl:
        x = x.contiguous(memory_format=mf_for(nsp))
        r = r.contiguous(memory_format=mf_for(nsp))
    y = FN[nsp](x, w, b, s, p, d, G, activation=act, residual=r)
    t = torch_ref(x, w, b, r, act, s, p, d, G)
    assert isinstance(y, torch.Tensor) and y.dtype == tdt and y.shape == t.shape
    if cl:
        assert y.is_contiguous(memory_format=mf_for(nsp)) and not y.is_contiguous()
    else:
        assert y.is_contiguous()
    tol = 1e-5 if dtype == "float32" else 1e-12
    scale = max(1.0, t.abs().max().item())
    assert (y - t).abs().max().item() <= tol * scale * case[2] * np.prod(case[6])


@needs_torch
def test_torch_output_memory_format_as_torch():
    """torch's rule: a channels-last weight makes the output channels-last."""
    g = torch.Generator().manual_seed(3)
    x = torch.rand((2, 4, 9, 9), generator=g)
    w = torch.rand((6, 4, 3, 3), generator=g).contiguous(memory_format=torch.channels_last)
    y = F.conv2d(x, w, padding=1)
    t = torch.nn.functional.conv2d(x, w, padding=1)
    assert y.is_contiguous(memory_format=torch.channels_last) == \
        t.is_contiguous(memory_format=torch.channels_last)
    assert torch.allclose(y, t, atol=1e-5)


@needs_torch
@pytest.mark.parametrize("act", [None, "relu", "silu", "gelu", "tanh"])
@pytest.mark.parametrize("dtname", ["float16", "bfloat16"])
@pytest.mark.parametrize("case,cl", CASES_CL)
def test_torch_half_cpu(case, cl, dtname, act):
    nsp, s, p, d, G = case[0], case[7], case[8], case[9], case[4]
    g = torch.Generator().manual_seed(SEED + 5)
    tdt = getattr(torch, dtname)
    shp = out_shape(case)
    x = (torch.rand((case[1], case[2]) + case[5], generator=g) * 2 - 1).to(tdt)
    w = (torch.rand((case[3], case[2] // G) + case[6], generator=g) * 2 - 1).to(tdt)
    b = (torch.rand(case[3], generator=g) * 2 - 1).to(tdt)
    r = (torch.rand(shp, generator=g) * 4 - 2).to(tdt)
    if cl:
        x = x.contiguous(memory_format=mf_for(nsp))
        r = r.contiguous(memory_format=mf_for(nsp))
    y = FN[nsp](x, w, b, s, p, d, G, activation=act, residual=r)
    assert y.dtype == tdt and tuple(y.shape) == shp
    if cl:
        assert y.is_contiguous(memory_format=mf_for(nsp))
    ref, mag = model(x.double().numpy(), w.double().numpy(), b.double().numpy(),
                     r.double().numpy(), act, s, p, d, G)
    check_half(y.double().numpy(), ref, mag, dtname)


@needs_torch
def test_torch_errors():
    x = torch.zeros((1, 4, 8, 8), dtype=torch.float16)
    w = torch.zeros((6, 4, 3, 3))
    with pytest.raises(TypeError, match="weight dtype float32 differs from input dtype float16"):
        F.conv2d(x, w)
    with pytest.raises(TypeError, match="bfloat16"):
        F.conv2d(x.bfloat16(), w.half())
    wg = torch.zeros((6, 4, 3, 3), requires_grad=True)
    with pytest.raises(RuntimeError, match="forward-only"):
        F.conv2d(x.float(), wg)
    with torch.no_grad():
        assert F.conv2d(x.float(), wg).shape == (1, 6, 6, 6)


# ---------------------------------------------------------------- FilterPlan
def filter_ref(x, m):
    """float64 correlate, 'constant' boundary (cval 0), same-size output."""
    import scipy.ndimage as ndi
    return (ndi.correlate(np.asarray(x, np.float64), np.asarray(m, np.float64),
                          mode="constant"),
            ndi.correlate(np.abs(np.asarray(x, np.float64)), np.abs(np.asarray(m, np.float64)),
                          mode="constant"))


def filter_plan(x, mask, dtype=None):
    sh = x.shape
    z = (0,) * len(sh)
    args = (sh, z, z, mask.ndim, mask, 1, 0, 0, 0.0, (0,) * mask.ndim, 0, None, 0)
    return _core.FilterPlan(*args) if dtype is None else _core.FilterPlan(*args, dtype)


@pytest.mark.parametrize("shape,msh", [((37, 29), (5, 4)), ((3, 19, 23), (3, 3)),
                                       ((9, 10, 11), (3, 2, 3)), ((301,), (7,))])
def test_filter_float16(shape, msh):
    pytest.importorskip("scipy", reason="scipy not installed: the float64 model needs it")
    rng = np.random.default_rng(SEED + 6)
    x = rng.uniform(-1, 1, shape).astype(np.float16)
    m = rng.uniform(-1, 1, msh).astype(np.float16)
    p = filter_plan(x, m)
    assert p.dtype == "float16"
    y = np.empty(p.out_shape, np.float16)
    p.execute(x, y)
    if len(msh) < x.ndim:  # leading axes filtered independently
        ref = np.stack([filter_ref(xi, m)[0] for xi in x])
        mag = np.stack([filter_ref(xi, m)[1] for xi in x])
    else:
        ref, mag = filter_ref(x, m)
    check_half(y, ref, mag, "float16")
    # a float32 mask converted by the plan gives the same result
    p32 = filter_plan(x, m.astype(np.float32), "float16")
    y2 = np.empty_like(y)
    p32.execute(x, y2)
    assert np.array_equal(y, y2)


def test_filter_dtype_checks():
    x = np.zeros((8, 8), np.float16)
    p = filter_plan(x, np.ones((3, 3), np.float16))
    with pytest.raises(TypeError, match="input dtype float32, the plan's is float16"):
        p.execute(x.astype(np.float32), np.empty((8, 8), np.float16))
    with pytest.raises(ValueError, match="unknown dtype"):
        filter_plan(x, np.ones((3, 3), np.float16), "float8")
    with pytest.raises(TypeError, match="int16"):  # bfloat16 bits only on a bfloat16 plan
        filter_plan(x.view(np.int16), np.ones((3, 3), np.int16))


@needs_torch
def test_filter_bfloat16_torch():
    pytest.importorskip("scipy", reason="scipy not installed: the float64 model needs it")
    g = torch.Generator().manual_seed(SEED + 7)
    x = (torch.rand((31, 27), generator=g) * 2 - 1).bfloat16()
    m = (torch.rand((3, 5), generator=g) * 2 - 1).bfloat16()
    xb = x.view(torch.int16).numpy()  # bit patterns, no copy
    p = filter_plan(xb, m.view(torch.int16).numpy(), "bfloat16")
    assert p.dtype == "bfloat16"
    y = torch.empty((31, 27), dtype=torch.bfloat16)
    p.execute(xb, y.view(torch.int16).numpy())
    ref, mag = filter_ref(x.double().numpy(), m.double().numpy())
    check_half(y.double().numpy(), ref, mag, "bfloat16")
    # the same through execute_ptr on host addresses
    y2 = torch.empty_like(y)
    p.execute_ptr(x.data_ptr(), y2.data_ptr())
    assert torch.equal(y, y2)


# ---------------------------------------------------------------- GPU
def _gpu_reason():
    if torch is None:
        return "torch not installed"
    if not torch.cuda.is_available():
        return "no CUDA device visible to torch"
    if tileconv.cuda_device_count() == 0:
        return "no CUDA device usable by the library (built without CUDA)"
    return None


@pytest.mark.skipif(_gpu_reason() is not None, reason=f"GPU tests: {_gpu_reason()}")
@pytest.mark.parametrize("dtname", ["float16", "bfloat16"])
@pytest.mark.parametrize("cl", [False, True])
def test_torch_half_cuda(dtname, cl):
    g = torch.Generator().manual_seed(SEED + 8)
    tdt = getattr(torch, dtname)
    x = (torch.rand((2, 16, 14, 13), generator=g) * 2 - 1).to(tdt)
    w = (torch.rand((24, 16, 3, 3), generator=g) * 2 - 1).to(tdt)
    b = (torch.rand(24, generator=g) * 2 - 1).to(tdt)
    r = (torch.rand((2, 24, 14, 13), generator=g) * 2 - 1).to(tdt)
    if cl:
        x = x.contiguous(memory_format=torch.channels_last)
        r = r.contiguous(memory_format=torch.channels_last)
    y = F.conv2d(x.cuda(), w.cuda(), b.cuda(), padding=1, activation="relu", residual=r.cuda())
    assert y.is_cuda and y.dtype == tdt
    assert y.is_contiguous(memory_format=torch.channels_last) == cl
    ref, mag = model(x.double().numpy(), w.double().numpy(), b.double().numpy(),
                     r.double().numpy(), "relu", 1, 1, 1, 1)
    check_half(y.cpu().double().numpy(), ref, mag, dtname)


@pytest.mark.skipif(_gpu_reason() is not None, reason=f"GPU tests: {_gpu_reason()}")
def test_cupy_float16():
    cp = pytest.importorskip("cupy", reason="CuPy not installed")
    rng = np.random.default_rng(SEED + 9)
    x = rng.uniform(-1, 1, (2, 8, 12, 11)).astype(np.float16)
    w = rng.uniform(-1, 1, (8, 8, 3, 3)).astype(np.float16)
    try:
        y = F.conv2d(cp.asarray(x), cp.asarray(w), padding=1, activation="silu")
    except ValueError as e:
        pytest.skip(f"tileconv built without CUDA: {e}")
    assert isinstance(y, cp.ndarray) and y.dtype == np.float16
    ref, mag = model(x, w, None, None, "silu", 1, 1, 1, 1)
    check_half(cp.asnumpy(y), ref, mag, "float16")


def test_convplan_weights_and_residual_in_place():
    """The extension's ConvPlan: weights set on the plan (execute with None),
    channels-last arrays in memory order, the residual being y itself."""
    rng = np.random.default_rng(SEED + 10)
    x = rng.uniform(-1, 1, (2, 5, 9, 8)).astype(np.float16)  # N C H W
    w = rng.uniform(-1, 1, (7, 5, 3, 3)).astype(np.float16)
    b = rng.uniform(-1, 1, 7).astype(np.float16)
    r = rng.uniform(-1, 1, (2, 7, 9, 8)).astype(np.float16)
    p = _core.ConvPlan("float16", x.shape, w.shape, 1, (1, 1), (1, 1), (1, 1), 0, 0, 1, 0,
                       None, 0, 0, 1, "silu", 1)
    assert (p.layout, p.activation, p.dtype) == ("channels_last", "silu", "float16")
    assert p.out_shape == (2, 7, 9, 8) and p.out_mem_shape == (2, 9, 8, 7)
    with pytest.raises(ValueError, match="none set on the plan"):
        p.execute(x.transpose(0, 2, 3, 1).copy(), None, None, np.empty((2, 9, 8, 7), np.float16),
                  np.empty((2, 9, 8, 7), np.float16))
    p.set_weights(w, b)
    assert p.weights_set
    y = np.ascontiguousarray(r.transpose(0, 2, 3, 1))  # the residual, overwritten by y
    p.execute(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), None, None, y, y)
    ref, mag = model(x, w, b, r, "silu", 1, 1, 1, 1)
    check_half(y.transpose(0, 3, 1, 2), ref, mag, "float16")
    with pytest.raises(ValueError, match="expects a residual"):
        p.execute(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), w, b, y)
    with pytest.raises(ValueError, match="activation 'swish'"):
        _core.ConvPlan("float16", x.shape, w.shape, 1, (1, 1), (1, 1), (1, 1), 0, 0, 1, 0,
                       None, 0, 0, 1, "swish", 1)
