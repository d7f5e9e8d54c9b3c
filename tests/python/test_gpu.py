"""GPU arrays (torch CUDA tensors, CuPy arrays) through the CUDA backend:
against torch / cupyx. Skipped without a GPU or without a CUDA build of the
package (TILECONV_CUDA=ON)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tileconv  # noqa: E402
import tileconv.ndimage as T  # noqa: E402
import tileconv.nn.functional as F  # noqa: E402


if tileconv.cuda_device_count() == 0:
    pytest.skip("no CUDA device usable by the library (built without CUDA: TILECONV_CUDA=ON "
                "builds it)", allow_module_level=True)


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv2d_torch_cuda(mode):
    g = torch.Generator(device="cpu").manual_seed(1)
    x = torch.rand((2, 6, 19, 17), generator=g).cuda()
    w = torch.rand((8, 3, 3, 3), generator=g).cuda()
    b = torch.rand(8, generator=g).cuda()
    y = F.conv2d(x, w, b, padding=1, groups=2, padding_mode=mode)
    assert isinstance(y, torch.Tensor) and y.is_cuda
    ref = torch.nn.Conv2d(6, 8, 3, padding=1, groups=2, padding_mode=mode).cuda().double()
    with torch.no_grad():
        ref.weight.copy_(w.double())
        ref.bias.copy_(b.double())
        r = ref(x.double())
    assert torch.allclose(y.double(), r, atol=1e-4 * r.abs().max().item())


def test_ndimage_cupy():
    cp = pytest.importorskip("cupy", reason="cupy not installed")
    import cupyx.scipy.ndimage as CX
    a = cp.random.default_rng(3).random((64, 70), dtype=cp.float32)
    w = np.random.default_rng(4).random((5, 4))
    for mode in ("reflect", "constant", "nearest", "mirror", "wrap"):
        y = T.correlate(a, w, mode=mode, cval=0.5)
        r = CX.correlate(a, cp.asarray(w, dtype=cp.float32), mode=mode, cval=0.5)
        assert float(cp.abs(y - r).max()) <= 1e-4 * float(cp.abs(r).max())


def test_conv2d_allow_tf32():
    """allow_tf32 reaches the planner: a 3x3 layer large enough for the TF32
    kernels, within the TF32 bound (5e-3 of max|y|), and back to float32
    accuracy (1e-4) when switched off again."""
    g = torch.Generator(device="cpu").manual_seed(2)
    x = (torch.rand((4, 64, 28, 28), generator=g) * 2 - 1).cuda()
    w = (torch.rand((64, 64, 3, 3), generator=g) * 2 - 1).cuda()
    r = torch.nn.functional.conv2d(x.double(), w.double(), padding=1)
    tol = r.abs().max().item()
    try:
        F.allow_tf32 = True
        y = F.conv2d(x, w, padding=1)
        assert (y.double() - r).abs().max().item() <= 5e-3 * tol
    finally:
        F.allow_tf32 = False
    y = F.conv2d(x, w, padding=1)
    assert (y.double() - r).abs().max().item() <= 1e-4 * tol


def test_torch_current_stream():
    """The work is enqueued on torch's current stream: the input is written
    on a side stream behind a long sleep kernel, then convolved there. Had
    the call gone to another stream, it would have read the zeros before
    the write."""
    g = torch.Generator(device="cpu").manual_seed(5)
    x0 = torch.rand((2, 8, 40, 40), generator=g).cuda()
    w = torch.rand((8, 8, 3, 3), generator=g).cuda()
    x = torch.zeros_like(x0)
    ref = F.conv2d(x0, w, padding=1)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)
        x.copy_(x0)
        y = F.conv2d(x, w, padding=1)
        ys = T.correlate(x[0, 0], np.ones((3, 3)), mode="constant")
    s.synchronize()
    assert torch.allclose(y, ref, atol=1e-4 * ref.abs().max().item())
    rs = T.correlate(x0[0, 0], np.ones((3, 3)), mode="constant")
    torch.cuda.synchronize()
    assert torch.allclose(ys, rs, atol=1e-4 * rs.abs().max().item())


def test_cupy_current_stream():
    """The same with CuPy's current stream (a non-blocking stream, which
    does not wait for the default streams)."""
    cp = pytest.importorskip("cupy", reason="cupy not installed")
    a0 = cp.random.default_rng(6).random((50, 60), dtype=cp.float32)
    w = np.random.default_rng(7).random((3, 4))
    ref = T.correlate(a0, w, mode="reflect")
    x = cp.zeros_like(a0)
    cp.cuda.Device().synchronize()
    spin = cp.RawKernel(r'''
extern "C" __global__ void spin(long long n) {
    long long t = clock64();
    while (clock64() - t < n) {}
}''', "spin")
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        spin((1,), (1,), (cp.int64(200_000_000),))
        x[...] = a0
        y = T.correlate(x, w, mode="reflect")
    s.synchronize()
    assert float(cp.abs(y - ref).max()) <= 1e-5 * float(cp.abs(ref).max())
