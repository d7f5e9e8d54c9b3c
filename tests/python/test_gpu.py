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


def _cuda_build():
    try:
        F.conv2d(torch.ones((1, 1, 4, 4), device="cuda"), torch.ones((1, 1, 3, 3), device="cuda"))
        return True
    except Exception as e:  # noqa: BLE001
        return "CUDA" not in str(e) and "device" not in str(e)


if not _cuda_build():
    pytest.skip("the package was built without CUDA (TILECONV_CUDA=ON)", allow_module_level=True)


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
