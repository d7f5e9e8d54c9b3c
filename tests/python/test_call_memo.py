"""Repeated calls: ndimage.correlate / convolve on device arrays and
nn.functional.conv* / nn.Conv*d on torch tensors remember a call whose
checks passed and run its plan directly the next time (ndimage._dev_calls,
nn.functional._calls). Checked on the CPU stand-ins (fake_device): a
repeated call gives the same result as the first and as the reference;
what the remembered decision does not cover (weights changed in place,
another output=, an overlapping output, another cval type, a plan that
left the cache, other layouts, threads) still gives the reference's
result; bad input after a remembered call gives the same errors."""
import numpy as np
import pytest
import scipy.ndimage as SN

import tileconv.ndimage as TN
from tileconv import _gpu

from fake_device import CupyLike, FakeArray, FakeBackend, fake_cupy_module


@pytest.fixture(params=["fake", "cupy"])
def dev(request, monkeypatch):
    """A device-array constructor: FakeArray (FakeBackend) or CupyLike
    (CupyBackend's code over a stand-in cupy module); CPU plans."""
    import sys
    if request.param == "fake":
        monkeypatch.setattr(_gpu, "BACKENDS", [FakeBackend()] + list(_gpu.BACKENDS))
        return FakeArray

    class CupyCPUBackend(_gpu.CupyBackend):
        plan_backend = 0
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy_module())
    monkeypatch.setattr(_gpu, "BACKENDS", [CupyCPUBackend()] + [
        b for b in _gpu.BACKENDS if b.name != "cupy"])
    return CupyLike


def _close(got, ref, tol=2e-6):
    got = got._a if isinstance(got, FakeArray) else got
    return got.shape == ref.shape and np.abs(got - ref).max() <= tol * max(1, np.abs(ref).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", ["correlate", "convolve"])
def test_ndimage_repeated(dev, fn, dtype):
    r = np.random.default_rng(1)
    x = r.random((13, 17)).astype(dtype)
    w = (r.random((3, 4)) - 0.3).astype(dtype)
    t, s = getattr(TN, fn), getattr(SN, fn)
    xd = dev(x.copy())
    for _ in range(3):  # the first call remembered, the others run it
        got = t(xd, w, mode="wrap", origin=(0, -1))
        assert type(got) is dev and _close(got, s(x, w, mode="wrap", origin=(0, -1)))
    assert any(k[0] == (TN._CORRELATE if fn == "correlate" else TN._CONVOLVE)
               for k in TN._dev_calls)
    w[1, 2] += 1.0  # weights changed in place
    assert _close(t(xd, w, mode="wrap", origin=(0, -1)), s(x, w, mode="wrap", origin=(0, -1)))
    ref = s(x, w, mode="constant", cval=0.5)
    for _ in range(2):
        assert _close(t(xd, w, mode="constant", cval=0.5), ref)
    for _ in range(2):  # an unhashable cval: the full path each time
        assert _close(t(xd, w, mode="constant", cval=np.array(0.5)), ref)
    TN._cache.clear()  # the plan left the cache: planned again
    assert _close(t(xd, w, mode="constant", cval=0.5), ref)
    # output= arrays: dense of the same dtype (filled in place), another
    # dtype, the input itself (overlapping: through a temporary)
    o = dev(np.zeros_like(x))
    assert t(xd, w, o, mode="constant", cval=0.5) is o and _close(o, ref)
    o2 = dev(np.zeros(x.shape, np.float64 if dtype == np.float32 else np.float32))
    assert t(xd, w, o2, mode="constant", cval=0.5) is o2 and _close(o2, ref, 1e-5)
    xin = dev(x.copy())
    t(xin, w, mode="constant", cval=0.5)
    assert t(xin, w, xin, mode="constant", cval=0.5) is xin and _close(xin, ref)
    # the same call's bad variants keep their errors
    with pytest.raises(RuntimeError, match="output shape not correct"):
        t(xd, w, dev(np.zeros((13, 16), dtype)), mode="constant", cval=0.5)
    with pytest.raises(TypeError):
        t(xd, w, np.zeros_like(x), mode="constant", cval=0.5)
    with pytest.raises(ValueError, match="Invalid origin"):
        t(xd, w, mode="wrap", origin=(0, 3))
    with pytest.raises(TypeError):
        t(xd, w, mode="wrap", origin=(0, -1.0))  # as scipy: integers only
    with pytest.raises(RuntimeError, match="boundary mode not supported"):
        t(xd, w, mode="wrapped")
    with pytest.raises(TypeError):
        t(xd, w, mode="constant", cval=0.5 + 0j)  # a complex cval: as without a memo
    old = TN.threads
    try:
        TN.threads = 1
        assert _close(t(xd, w, mode="constant", cval=0.5), ref)
    finally:
        TN.threads = old


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("fn", ["correlate1d", "convolve1d"])
def test_ndimage_1d_repeated(dev, fn, axis):
    r = np.random.default_rng(5)
    x = r.random((7, 9, 11)).astype(np.float32)
    w = (r.random(4) - 0.3)
    wl = [0.5, -1, 2.0]
    t, s = getattr(TN, fn), getattr(SN, fn)
    xd = dev(x.copy())
    for _ in range(3):
        assert _close(t(xd, w, axis, origin=1), s(x, w, axis, origin=1))
        assert _close(t(xd, wl, axis, mode="wrap"), s(x, wl, axis, mode="wrap"))
    assert any(k[1] == axis for k in TN._dev_calls)
    w[0] += 1.0  # in place
    assert _close(t(xd, w, axis, origin=1), s(x, w, axis, origin=1))
    o = dev(np.zeros_like(x))
    assert t(xd, wl, axis, o, mode="wrap") is o and _close(o, s(x, wl, axis, mode="wrap"))
    xin = dev(x.copy())
    t(xin, wl, axis, mode="wrap")
    assert t(xin, wl, axis, xin, mode="wrap") is xin and _close(xin, s(x, wl, axis, mode="wrap"))
    with pytest.raises(ValueError, match="Invalid origin"):
        t(xd, w, axis, origin=2)
    with pytest.raises(TypeError):
        t(xd, w, axis, origin=1.0)
    with pytest.raises(TypeError):
        t(xd, w, float(axis), origin=1)
    with pytest.raises(Exception):
        t(xd, w, 3, origin=1)  # no such axis
    for _ in range(2):  # composed of 1-D passes
        assert _close(TN.sobel(xd, axis), SN.sobel(x, axis), 1e-5)
        assert _close(TN.gaussian_filter1d(xd, 1.5, axis), SN.gaussian_filter1d(x, 1.5, axis),
                      1e-5)


def test_ndimage_repeated_lists(dev):
    """Weights as lists and origins as lists: the full path each time
    (weights not a NumPy array), the same results."""
    r = np.random.default_rng(2)
    x = r.random((9, 11)).astype(np.float32)
    w = [[0.5, -1.0, 0.25], [1.0, 2.0, -0.5]]
    xd = dev(x.copy())
    for _ in range(2):
        assert _close(TN.correlate(xd, w, origin=[0, 1]), SN.correlate(x, w, origin=[0, 1]))


torch = pytest.importorskip("torch")
import tileconv.nn as tnn  # noqa: E402
import tileconv.nn.functional as TF  # noqa: E402


def _tclose(a, b, tol=1e-5):
    return a.shape == b.shape and float((a - b).abs().max()) <= tol * max(
        1.0, float(b.abs().max()))


@pytest.mark.parametrize("cl", [False, True])
def test_conv_repeated(cl):
    g = torch.Generator().manual_seed(3)
    x = torch.rand((2, 6, 9, 10), generator=g)
    w = torch.rand((4, 6, 3, 3), generator=g) - 0.5
    b = torch.rand(4, generator=g)
    if cl:
        x = x.contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        for _ in range(3):
            y = TF.conv2d(x, w, b, padding=1)
            assert _tclose(y, torch.nn.functional.conv2d(x, w, b, padding=1))
            assert y.is_contiguous(memory_format=torch.channels_last) == cl
        w[0, 0, 1, 1] += 2.0  # in place: the weights go with every call
        assert _tclose(TF.conv2d(x, w, b, padding=1),
                       torch.nn.functional.conv2d(x, w, b, padding=1))
        for _ in range(2):  # lists: unhashable, the full path each time
            assert _tclose(TF.conv2d(x, w, b, stride=[1, 2], padding=[1, 1]),
                           torch.nn.functional.conv2d(x, w, b, stride=[1, 2], padding=[1, 1]))
        wt = w.transpose(2, 3).contiguous().transpose(2, 3)  # not dense: copied
        assert _tclose(TF.conv2d(x, wt, b, padding=1),
                       torch.nn.functional.conv2d(x, wt, b, padding=1))
        xt = x.transpose(2, 3).contiguous().transpose(2, 3)
        assert _tclose(TF.conv2d(xt, w, b, padding=1),
                       torch.nn.functional.conv2d(xt, w, b, padding=1))
        r = torch.rand((2, 4, 9, 10), generator=g)
        assert _tclose(TF.conv2d(x, w, b, padding=1, residual=r),
                       torch.nn.functional.conv2d(x, w, b, padding=1) + r)
        assert _tclose(TF.conv2d(x[0], w, b, padding=1),
                       torch.nn.functional.conv2d(x[0], w, b, padding=1))
        old = TF.threads
        try:
            TF.threads = 1
            assert _tclose(TF.conv2d(x, w, b, padding=1),
                           torch.nn.functional.conv2d(x, w, b, padding=1))
        finally:
            TF.threads = old
        # errors after a remembered call
        with pytest.raises(TypeError, match="differs from input dtype"):
            TF.conv2d(x, w.double(), b, padding=1)
        with pytest.raises(RuntimeError, match="bias of shape"):
            TF.conv2d(x, w, torch.rand(5), padding=1)
        with pytest.raises(ValueError, match="padding_mode"):
            TF.conv2d(x, w, b, padding=1, padding_mode="mirror")
        with pytest.raises(TypeError):
            TF.conv2d(x, w, b, padding=1.0)  # 1.0 == 1, but not an int (as torch)
    xg = x.clone().requires_grad_(True)
    with pytest.raises(RuntimeError, match="forward-only"):
        TF.conv2d(xg, w, b, padding=1)


def test_module_repeated():
    torch.manual_seed(4)
    ref = torch.nn.Conv2d(5, 3, 3, padding=1)
    m = tnn.Conv2d(5, 3, 3, padding=1)
    m.load_state_dict(ref.state_dict())
    x = torch.rand((1, 5, 8, 7))
    with torch.no_grad():
        for _ in range(3):
            assert _tclose(m(x), ref(x))
        assert m.tc_stats == {"plans": 1, "weight_preparations": 1}
        m.weight.mul_(2.0)  # in place (version counter): prepared again
        ref.weight.mul_(2.0)
        assert _tclose(m(x), ref(x)) and m.tc_stats["weight_preparations"] == 2
        assert _tclose(m(x), ref(x)) and m.tc_stats["weight_preparations"] == 2
        m.tc_reset()
        assert _tclose(m(x), ref(x)) and m.tc_stats == {"plans": 1, "weight_preparations": 1}
        assert _tclose(m(x, activation="relu"), torch.relu(ref(x)))
    with pytest.raises(RuntimeError, match="forward-only"):
        m(x)  # grad mode, parameters requiring grad
