"""Channels-last weights (weight_layout, K x mask x C/groups in memory):
the extension's ConvPlan with weight_layout 1 against the float64 NumPy
model and bit for bit against the same weights given K x C/groups x mask
(execute and set_weights, both input layouts, 1D to 3D, groups, float16 /
float32 / float64); channels-last weights read as the other layout give
another result. With torch installed: torch weights dense in channels-last
order are passed in place with weight_layout channels-last (functional
and tileconv.nn modules, plan-held weights), the results torch's."""
import numpy as np
import pytest

import tileconv.nn.functional as F
from tileconv import _core
from test_functional import ref_conv

SEED = 23

torch = None
try:
    import torch
except ImportError:
    pass
needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")

# nsp, N, C, K, G, n, k, stride, dilation, pad
CASES = [
    (1, 2, 6, 9, 3, (23,), (5,), 2, 1, 2),
    (2, 2, 5, 7, 1, (9, 11), (3, 2), 1, 2, 1),
    (2, 1, 8, 8, 8, (10, 9), (3, 3), 1, 1, 1),  # depthwise
    (3, 1, 4, 6, 2, (5, 6, 7), (3, 2, 3), 1, 1, 1),
]


def to_cl(a):
    """N x C x spatial -> N x spatial x C (the weights: K x mask x C/groups)"""
    return np.ascontiguousarray(np.moveaxis(a, 1, -1))


def plan(dt, x, w, case, layout, wlayout, bias=True):
    nsp, s, d, p, G = case[0], case[7], case[8], case[9], case[4]
    return _core.ConvPlan(dt, x.shape, w.shape, G, (s,) * nsp, (d,) * nsp, (p,) * nsp, 0, 0,
                          int(bias), 0, None, 0, 0, layout, None, 0, wlayout)


@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("case", CASES)
def test_convplan_weight_layout(case, dtype, layout):
    nsp, N, C, K, G, n, k, s, d, p = case
    r = np.random.default_rng(SEED)
    x = r.uniform(-1, 1, (N, C) + n).astype(dtype)
    w = r.uniform(-1, 1, (K, C // G) + k).astype(dtype)
    b = r.uniform(-1, 1, K).astype(dtype)
    pf = plan(dtype, x, w, case, layout, 0)
    pc = plan(dtype, x, w, case, layout, 1)
    assert (pf.weight_layout, pc.weight_layout) == ("channels_first", "channels_last")
    xm = to_cl(x) if layout else x
    y0 = np.empty(pf.out_mem_shape, dtype)
    y1 = np.full(pc.out_mem_shape, np.nan, dtype)
    y2 = np.full(pc.out_mem_shape, np.nan, dtype)
    pf.execute(xm, w, b, y0)
    pc.execute(xm, to_cl(w), b, y1)
    assert np.array_equal(y0, y1)  # the same weights, reordered: bit for bit
    pc.set_weights(to_cl(w), b)
    pc.execute(xm, None, None, y2)
    assert np.array_equal(y0, y2)
    ref = ref_conv(x, w, b, (s,) * nsp, (p,) * nsp, (d,) * nsp, G, "zeros")
    got = np.moveaxis(y1, -1, 1) if layout else y1
    tol = {"float16": 4e-3, "float32": 1e-5, "float64": 1e-12}[dtype]
    assert np.abs(got.astype(np.float64) - ref).max() <= tol * max(1.0, np.abs(ref).max()) * \
        (C // G) * np.prod(k)
    # the channels-last plan refuses the K x C/groups x mask shape, and the
    # weights' memory read in the other layout is another problem
    if w.shape != to_cl(w).shape:
        with pytest.raises(ValueError, match="weight shape"):
            pc.execute(xm, w, b, y2)
    if C // G > 1:  # one channel a group: both layouts are the same memory
        pc.execute(xm, np.ascontiguousarray(w).reshape(to_cl(w).shape), b, y2)
        assert not np.array_equal(y0, y2)


def test_convplan_weight_layout_refused():
    x = np.zeros((1, 4, 6, 6), np.float32)
    w = np.zeros((4, 4, 3, 3), np.float32)
    with pytest.raises(ValueError, match="weight_layout 2"):
        plan("float32", x, w, CASES[1], 0, 2)


# ---------------------------------------------------------------- torch
def mf(nd):
    return torch.channels_last if nd == 4 else torch.channels_last_3d


@needs_torch
@pytest.mark.parametrize("xcl", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("case", [c for c in CASES if c[0] > 1])
def test_torch_channels_last_weight_in_place(case, dtype, xcl):
    nsp, N, C, K, G, n, k, s, d, p = case
    g = torch.Generator().manual_seed(SEED)
    tdt = getattr(torch, dtype)
    x = (torch.rand((N, C) + n, generator=g, dtype=torch.float64) * 2 - 1).to(tdt)
    w = (torch.rand((K, C // G) + k, generator=g, dtype=torch.float64) * 2 - 1).to(tdt)
    b = (torch.rand(K, generator=g, dtype=torch.float64) * 2 - 1).to(tdt)
    wc = w.contiguous(memory_format=mf(w.dim()))
    # one channel a group (depthwise): the weight is dense in both orders,
    # read as channels-first
    cl_only = C // G > 1
    assert wc.is_contiguous(memory_format=mf(w.dim())) and wc.is_contiguous() != cl_only
    if xcl:
        x = x.contiguous(memory_format=mf(x.dim()))
    fn = {2: F.conv2d, 3: F.conv3d}[nsp]
    F._cache.clear()
    F._calls.clear()
    y = fn(x, wc, b, s, p, d, G)
    pl = next(reversed(F._cache.values()))
    assert pl.weight_layout == ("channels_last" if cl_only else "channels_first")
    y0 = fn(x, w, b, s, p, d, G)
    assert next(reversed(F._cache.values())).weight_layout == "channels_first"
    assert torch.equal(y.float(), y0.float())
    t = getattr(torch.nn.functional, f"conv{nsp}d")(x.double(), w.double(), b.double(), s, p,
                                                      d, G)
    tol = {"float32": 1e-5, "float64": 1e-12, "bfloat16": 2e-2}[dtype]
    assert (y.double() - t).abs().max().item() <= tol * max(1.0, t.abs().max().item()) * \
        (C // G) * float(np.prod(k))
    # torch's rule: a channels-last weight makes the output channels-last
    assert y.is_contiguous(memory_format=mf(y.dim())) or not (cl_only or xcl)


@needs_torch
def test_torch_weight_in_place_no_copy(monkeypatch):
    """the channels-last weight is not copied: _Dev.dense returns it as it is"""
    x = torch.rand((2, 4, 9, 9)).contiguous(memory_format=torch.channels_last)
    w = torch.rand((6, 4, 3, 3)).contiguous(memory_format=torch.channels_last)
    made = []
    real = F._Dev.dense

    def dense(self, cl):
        o = real(self, cl)
        made.append(o is self)
        return o
    monkeypatch.setattr(F._Dev, "dense", dense)
    F._calls.clear()
    y = F.conv2d(x, w, padding=1)
    assert made and all(made)
    assert torch.allclose(y, torch.nn.functional.conv2d(x, w, padding=1), atol=1e-5)


@needs_torch
@pytest.mark.parametrize("nsp", [2, 3])
def test_module_plan_weights_channels_last(nsp):
    """tileconv.nn: a model in channels_last memory format hands the plan
    its weights as K x mask x C/groups (set_weights), results torch's"""
    import tileconv.nn as tnn
    torch.manual_seed(SEED)
    cls = {2: torch.nn.Conv2d, 3: torch.nn.Conv3d}[nsp]
    m = cls(6, 9, 3, padding=1, groups=3, padding_mode="reflect")
    x = torch.rand((2, 6) + (7,) * nsp)
    t = m(x)
    mm = tnn.convert(m).to(memory_format=mf(2 + nsp))
    assert mm.weight.is_contiguous(memory_format=mf(mm.weight.dim()))
    with torch.no_grad():
        y = mm(x)
        y2 = mm(x.contiguous(memory_format=mf(x.dim())))
    assert mm._tc_plan.weight_layout == "channels_last"
    assert mm.tc_stats["weight_preparations"] >= 1
    assert torch.allclose(y, t, atol=1e-5) and torch.allclose(y2, t, atol=1e-5)
