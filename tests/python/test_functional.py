"""tileconv.nn.functional against a float64 NumPy model of torch's conv (and
torch itself when it is installed)."""
import numpy as np
import pytest

import tileconv.nn.functional as F

SEED = 7


def ref_conv(x, w, b, stride, pad, dil, groups, mode):
    """float64 model of torch.nn.ConvNd with padding_mode (zeros, reflect,
    replicate, circular), explicit symmetric padding."""
    nsp = x.ndim - 2
    npmode = {"zeros": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}[mode]
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(p, p) for p in pad], mode=npmode)
    N, C = x.shape[:2]
    K = w.shape[0]
    Cg, Kg = C // groups, K // groups
    ksz = w.shape[2:]
    out = [(xp.shape[2 + i] - dil[i] * (ksz[i] - 1) - 1) // stride[i] + 1 for i in range(nsp)]
    y = np.zeros((N, K) + tuple(out))
    for idx in np.ndindex(*ksz):
        sl = tuple(slice(idx[i] * dil[i], idx[i] * dil[i] + stride[i] * (out[i] - 1) + 1, stride[i])
                   for i in range(nsp))
        patch = xp[(slice(None), slice(None)) + sl]  # N, C, out...
        for g in range(groups):
            wk = w[g * Kg:(g + 1) * Kg, :, *idx].astype(np.float64)  # Kg x Cg
            y[:, g * Kg:(g + 1) * Kg] += np.einsum("kc,nc...->nk...", wk,
                                                   patch[:, g * Cg:(g + 1) * Cg])
    if b is not None:
        y += b.reshape((1, K) + (1,) * nsp)
    return y


CASES = [
    (1, 2, 5, 7, 1, (19,), (3,), 1, 1, 1),
    (2, 2, 4, 6, 2, (9, 11), (3, 2), 1, 1, 1),
    (2, 1, 3, 8, 1, (17, 15), (5, 5), 2, 1, 2),
    (2, 2, 6, 6, 6, (10, 9), (3, 3), 1, 2, 2),  # depthwise, dilation 2
    (3, 1, 2, 3, 1, (5, 6, 7), (3, 3, 2), 1, 1, 1),
    (2, 1, 64, 32, 1, (14, 14), (3, 3), 1, 1, 1),  # Winograd-sized
    (2, 1, 16, 24, 1, (12, 13), (1, 1), 2, 1, 0),  # 1x1 stride 2
]


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_conv(case, dtype, mode):
    nsp, N, C, K, G, n, k, s, d, p = case
    r = np.random.default_rng(SEED)
    x = r.uniform(-1, 1, (N, C) + n).astype(dtype)
    w = r.uniform(-1, 1, (K, C // G) + k).astype(dtype)
    b = r.uniform(-1, 1, K).astype(dtype)
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nsp]
    y = fn(x, w, b, stride=s, padding=p, dilation=d, groups=G, padding_mode=mode)
    ref = ref_conv(x, w, b, (s,) * nsp, (p,) * nsp, (d,) * nsp, G, mode)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    assert y.shape == ref.shape and y.dtype == dtype
    np.testing.assert_allclose(y, ref, atol=tol * max(1, np.abs(ref).max()))


def test_same_valid_unbatched():
    r = np.random.default_rng(1)
    x = r.uniform(-1, 1, (3, 10, 12)).astype(np.float32)  # unbatched
    w = r.uniform(-1, 1, (5, 3, 4, 3)).astype(np.float32)
    y = F.conv2d(x, w, padding="same")
    assert y.shape == (5, 10, 12)
    assert F.conv2d(x, w, padding="valid").shape == (5, 7, 10)


def test_against_torch():
    torch = pytest.importorskip("torch", reason="torch not installed: compared with the NumPy model only")
    r = np.random.default_rng(2)
    x = r.uniform(-1, 1, (2, 6, 13, 11)).astype(np.float32)
    w = r.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    b = r.uniform(-1, 1, 4).astype(np.float32)
    for pad in (1, "same", "valid", (2, 0)):
        y = F.conv2d(x, w, b, padding=pad, groups=2, dilation=1)
        t = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                                       torch.from_numpy(b), padding=pad, groups=2).numpy()
        np.testing.assert_allclose(y, t, atol=1e-4)


def test_bad_arguments():
    x = np.zeros((1, 4, 8, 8), np.float32)
    w = np.zeros((6, 4, 3, 3), np.float32)
    with pytest.raises(ValueError):
        F.conv2d(x, w, groups=3)
    with pytest.raises(RuntimeError):
        F.conv2d(x, np.zeros((6, 3, 3, 3), np.float32))
    with pytest.raises(ValueError):
        F.conv2d(x, w, padding="same", stride=2)
    with pytest.raises(ValueError):
        F.conv2d(x, w, padding_mode="bogus")
    with pytest.raises(ValueError):
        F.conv2d(x, np.zeros((6, 4, 11, 11), np.float32))  # kernel larger than the input
    with pytest.raises(TypeError):
        F.conv2d(x.astype(np.int32), w)


def test_plan_flags():
    """The plan-flags argument of the extension (F.allow_tf32 on the GPU):
    TC_PLAN_ALLOW_TF32 on a CPU plan leaves float32 results unchanged; an
    unknown flag is refused with a message naming it."""
    from tileconv import _core
    rng = np.random.default_rng(SEED)
    x = rng.uniform(-1, 1, (2, 6, 9, 10)).astype(np.float32)
    w = rng.uniform(-1, 1, (4, 6, 3, 3)).astype(np.float32)
    args = (0, x.shape, w.shape, 1, (1, 1), (1, 1), (1, 1), 0, 0, 0, 0, None, 0)
    y0 = np.empty((2, 4, 9, 10), np.float32)
    y1 = np.empty_like(y0)
    _core.ConvPlan(*args).execute(x, w, None, y0)
    _core.ConvPlan(*args, 4).execute(x, w, None, y1)
    assert np.array_equal(y0, y1)
    with pytest.raises(ValueError, match="0x100"):
        _core.ConvPlan(*args, 0x100)


def test_direct_flag():
    """F.direct = True plans with TC_PLAN_DIRECT: a 3x3 layer the planner
    otherwise runs by Winograd takes a direct-summation algorithm, same
    values within float32 rounding; the flag is part of the plan cache key."""
    from tileconv import _core
    rng = np.random.default_rng(SEED)
    x = rng.uniform(-1, 1, (1, 64, 28, 28)).astype(np.float32)
    w = rng.uniform(-1, 1, (64, 64, 3, 3)).astype(np.float32) / 24
    args = (0, x.shape, w.shape, 1, (1, 1), (1, 1), (1, 1), 0, 0, 0, 0, None, 0)
    assert "winograd" in _core.ConvPlan(*args).algorithm
    assert "winograd" not in _core.ConvPlan(*args, 8).algorithm
    y0 = F.conv2d(x, w, padding=1)
    try:
        F.direct = True
        y1 = F.conv2d(x, w, padding=1)
    finally:
        F.direct = False
    y2 = F.conv2d(x, w, padding=1)
    assert np.array_equal(y0, y2)
    assert not np.array_equal(y0, y1)  # another algorithm ran
    assert np.abs(y1 - y0).max() <= 1e-5 * np.abs(y0).max()
