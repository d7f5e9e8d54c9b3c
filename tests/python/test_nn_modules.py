"""tileconv.nn.Conv1d / Conv2d / Conv3d and convert(model) against torch's
own modules on the same (seeded random) weights and inputs (CPU)."""
import copy

import pytest

torch = pytest.importorskip("torch", reason="torch not installed: tileconv.nn modules need it")
import tileconv  # noqa: E402
import tileconv.nn as tnn  # noqa: E402

SEED = 5


def rand(*shape, g, dtype=torch.float32):
    return (torch.rand(shape, generator=g) * 2 - 1).to(dtype)


def close(a, b, tol=1e-5):
    scale = max(1.0, b.abs().max().item())
    return (a.double() - b.double()).abs().max().item() <= tol * scale


@pytest.mark.parametrize("nsp,kw,insz", [
    (1, dict(kernel_size=5, stride=2, padding=2, padding_mode="circular"), (23,)),
    (2, dict(kernel_size=3, padding=1, groups=2), (13, 11)),
    (2, dict(kernel_size=(3, 2), padding="same", padding_mode="reflect", bias=False), (9, 10)),
    (2, dict(kernel_size=3, dilation=2, padding=2, padding_mode="replicate"), (12, 12)),
    (3, dict(kernel_size=3, stride=(1, 2, 1), padding=1), (6, 7, 5)),
])
def test_module_matches_torch(nsp, kw, insz):
    torch.manual_seed(SEED)
    tcls = {1: torch.nn.Conv1d, 2: torch.nn.Conv2d, 3: torch.nn.Conv3d}[nsp]
    ours = {1: tnn.Conv1d, 2: tnn.Conv2d, 3: tnn.Conv3d}[nsp]
    ref = tcls(4, 6, **kw)
    m = ours(4, 6, **kw)
    assert isinstance(m, tcls)
    m.load_state_dict(ref.state_dict())
    g = torch.Generator().manual_seed(SEED)
    x = rand(2, 4, *insz, g=g)
    with torch.no_grad():
        assert close(m(x), ref(x))
        assert close(m(x[0]), ref(x[:1])[0])  # unbatched (torch 1.13 cannot pad one circularly)


def test_plan_and_weights_kept_and_refreshed():
    torch.manual_seed(SEED)
    ref = torch.nn.Conv2d(8, 8, 3, padding=1)
    m = tnn.Conv2d(8, 8, 3, padding=1)
    m.load_state_dict(ref.state_dict())
    g = torch.Generator().manual_seed(1)
    x = rand(2, 8, 14, 14, g=g)
    with torch.no_grad():
        y1 = m(x)
        plan = m._tc_plan
        assert plan.weights_set
        y2 = m(x)
        assert m._tc_plan is plan and torch.equal(y1, y2)
        assert m.tc_stats == {"plans": 1, "weight_preparations": 1}
        # weights changed in place: prepared again, same plan, new result
        m.weight.mul_(-0.5)
        ref.weight.mul_(-0.5)
        y3 = m(x)
        assert m._tc_plan is plan and m.tc_stats["weight_preparations"] == 2
        assert close(y3, ref(x)) and not torch.allclose(y3, y1)
        # bias changed in place
        m.bias.add_(1.0)
        ref.bias.add_(1.0)
        assert close(m(x), ref(x)) and m.tc_stats["weight_preparations"] == 3
        # load_state_dict copies into the parameters: prepared again
        sd = {k: v * 2 for k, v in ref.state_dict().items()}
        m.load_state_dict(sd)
        ref.load_state_dict(sd)
        assert close(m(x), ref(x)) and m.tc_stats["weight_preparations"] == 4
        # a new Parameter object
        m.weight = torch.nn.Parameter(ref.weight.detach().clone())
        assert close(m(x), ref(x)) and m.tc_stats["weight_preparations"] == 5
        assert m.tc_stats["plans"] == 1
        # another input shape: another plan, the first one kept
        x2 = rand(1, 8, 9, 10, g=g)
        assert close(m(x2), ref(x2))
        assert m.tc_stats["plans"] == 2 and m._tc_plan is not plan
        m(x)
        assert m._tc_plan is plan and m.tc_stats["plans"] == 2
        # dtype change: a new plan
        m.double()
        ref.double()
        assert close(m(x.double()), ref(x.double()), 1e-12)
        assert m.tc_stats["plans"] == 3 and m._tc_plan.dtype == "float64"


def test_optimizer_step_seen():
    """An optimizer step (in place, bumps the version counter) between
    forward calls is picked up."""
    torch.manual_seed(SEED)
    m = tnn.Conv1d(3, 4, 3)
    ref = torch.nn.Conv1d(3, 4, 3)
    ref.load_state_dict(m.state_dict())
    x = rand(2, 3, 17, g=torch.Generator().manual_seed(2))
    with torch.no_grad():
        m(x)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    for p in m.parameters():
        p.grad = torch.ones_like(p)
    opt.step()
    with torch.no_grad():
        for p, q in zip(ref.parameters(), m.parameters()):
            p.copy_(q)
        assert close(m(x), ref(x))


def test_forward_only():
    m = tnn.Conv2d(2, 3, 3)
    x = torch.zeros(1, 2, 5, 5)
    with pytest.raises(RuntimeError, match="forward-only; use torch.no_grad"):
        m(x)
    with torch.no_grad():
        assert m(x).shape == (1, 3, 3, 3)
    with torch.inference_mode():
        assert m(x).shape == (1, 3, 3, 3)
    m.requires_grad_(False)
    assert m(x).shape == (1, 3, 3, 3)  # nothing needs a gradient
    with pytest.raises(RuntimeError, match="forward-only"):
        m(x.requires_grad_())


def test_activation_and_residual():
    torch.manual_seed(SEED)
    m = tnn.Conv2d(4, 4, 3, padding=1, activation="relu")
    assert "activation='relu'" in repr(m)
    g = torch.Generator().manual_seed(3)
    x = rand(2, 4, 10, 10, g=g)
    r = rand(2, 4, 10, 10, g=g)
    with torch.no_grad():
        t = torch.nn.functional.conv2d(x, m.weight, m.bias, padding=1)
        assert close(m(x), torch.relu(t))
        assert close(m(x, r), torch.relu(t + r))
    with pytest.raises(ValueError, match="activation"):
        tnn.Conv2d(4, 4, 3, activation="swish")


def test_half_and_channels_last():
    torch.manual_seed(SEED)
    ref = torch.nn.Conv2d(8, 16, 3, padding=1)
    m = tnn.convert(copy.deepcopy(ref))
    g = torch.Generator().manual_seed(4)
    x = rand(2, 8, 12, 12, g=g)
    for dt in (torch.float16, torch.bfloat16):
        for mf in (torch.contiguous_format, torch.channels_last):
            mm = copy.deepcopy(m).to(dtype=dt, memory_format=mf)
            xx = x.to(dt).contiguous(memory_format=mf)
            with torch.no_grad():
                y = mm(xx)
                want = torch.nn.functional.conv2d(xx.double(), mm.weight.double(),
                                                  mm.bias.double(), padding=1)
                mag = torch.nn.functional.conv2d(xx.double().abs(), mm.weight.double().abs(),
                                                 mm.bias.double().abs(), padding=1)
            assert y.dtype == dt
            assert y.is_contiguous(memory_format=mf)
            rtol, gtol = (1.6e-2, 4e-3) if dt == torch.bfloat16 else (2e-3, 5e-4)
            bound = rtol * mag + gtol * max(mag.max().item(), 1.0)  # docs/semantics.md
            assert ((y.double() - want).abs() <= bound).all()


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(8)
        self.side = torch.nn.Sequential(torch.nn.Conv2d(8, 8, 1), torch.nn.ReLU())

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)) + self.side(x))


def small_model():
    torch.manual_seed(SEED)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 5, stride=2, padding=2, padding_mode="reflect"),
        torch.nn.ReLU(),
        Block(),
        torch.nn.Conv2d(8, 4, 3, groups=4, dilation=2),
        torch.nn.Flatten(1, 2),
        torch.nn.Conv1d(4 * 6, 5, 3, padding="same"),
    ).eval()


def test_convert_model():
    model = small_model()
    ref = copy.deepcopy(model)
    weights = {n: p for n, p in model.named_parameters()}
    keys = list(model.state_dict())
    out = tnn.convert(model)
    assert out is model
    convs = [m for m in model.modules() if isinstance(m, torch.nn.modules.conv._ConvNd)]
    assert len(convs) == 5 and all(type(m).__module__ == "tileconv.nn.modules" for m in convs)
    assert model[0].padding_mode == "reflect" and model[3].groups == 4
    # the very same Parameters, the same state_dict keys
    assert all(p is weights[n] for n, p in model.named_parameters())
    assert list(model.state_dict()) == keys
    x = rand(2, 3, 19, 17, g=torch.Generator().manual_seed(6))
    with torch.no_grad():
        y, t = model(x), ref(x)
    assert y.shape == t.shape and close(y, t, 1e-5)
    # a conv layer itself
    c = tnn.convert(torch.nn.Conv3d(2, 2, 3))
    assert isinstance(c, tnn.Conv3d)


def test_deepcopy_and_pickle():
    import pickle
    m = tnn.Conv2d(3, 4, 3, activation="silu")
    x = rand(1, 3, 8, 8, g=torch.Generator().manual_seed(7))
    with torch.no_grad():
        y = m(x)
        m2 = copy.deepcopy(m)
        m3 = pickle.loads(pickle.dumps(m))
        assert m2.tc_stats["plans"] == 0
        assert torch.equal(m2(x), y) and torch.equal(m3(x), y)
        assert m3.activation == "silu"


def test_threads_share_a_module():
    import threading
    torch.manual_seed(SEED)
    m = tnn.Conv2d(8, 8, 3, padding=1)
    x = rand(2, 8, 16, 16, g=torch.Generator().manual_seed(8))
    with torch.no_grad():
        want = torch.nn.functional.conv2d(x, m.weight, m.bias, padding=1)
    bad = []

    def run():
        with torch.no_grad():
            for _ in range(20):
                if not close(m(x), want):
                    bad.append(1)
    ts = [threading.Thread(target=run) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad and m.tc_stats["plans"] == 1


@pytest.mark.skipif(not torch.cuda.is_available() or tileconv.cuda_device_count() == 0,
                    reason="GPU tests: no CUDA device visible to torch, or the library built "
                    "without CUDA")
def test_module_cuda():
    torch.manual_seed(SEED)
    ref = torch.nn.Conv2d(16, 16, 3, padding=1).cuda()
    m = tnn.convert(copy.deepcopy(ref))
    x = rand(2, 16, 20, 20, g=torch.Generator().manual_seed(9)).cuda()
    with torch.no_grad():
        try:
            y = m(x)
        except ValueError as e:
            pytest.skip(f"tileconv built without CUDA: {e}")
        assert y.is_cuda and close(y, ref(x), 1e-4)
        m.weight.mul_(2)
        ref.weight.mul_(2)
        assert close(m(x), ref(x), 1e-4) and m.tc_stats["plans"] == 1


class Epilogues(torch.nn.Module):
    """Convolutions followed by each fusable form, and by forms that must
    stay as they are."""

    def __init__(self):
        super().__init__()
        c = lambda: torch.nn.Conv2d(6, 6, 3, padding=1)  # noqa: E731
        self.a, self.b, self.c, self.d, self.e, self.f, self.g, self.h = (c() for _ in range(8))
        self.skip = torch.nn.Identity()
        self.silu = torch.nn.SiLU()
        self.gelu_tanh = torch.nn.GELU(approximate="tanh")
        self.shared = c()
        self.down = torch.nn.Conv2d(6, 6, 3, stride=2, padding=1)
        self.scale = torch.nn.Parameter(torch.rand(6, 1, 1))

    def forward(self, x):
        y = torch.nn.functional.relu6(self.skip(self.a(x)) + x)  # conv + x -> relu6
        y = torch.sigmoid(x + self.b(y))                            # x + conv -> sigmoid
        y = self.silu(self.c(y))                                    # conv -> SiLU module
        y = self.d(y).tanh()                                        # conv -> method
        y = torch.nn.functional.gelu(self.e(y))                     # exact gelu
        y = self.gelu_tanh(self.f(y))                               # tanh gelu: not fused
        y = torch.add(self.g(y), y, alpha=2)                        # alpha: not fused
        y = torch.relu(self.h(y) + self.scale)                      # broadcast: torch adds
        u = self.shared(y)
        y = torch.relu(u) + u                                       # two users: not fused
        return torch.relu(self.shared(y)) + self.down(y).mean()


def test_convert_fuse_epilogues():
    torch.manual_seed(SEED)
    model = Epilogues().eval()
    ref = copy.deepcopy(model)
    keys = list(model.state_dict())
    fused = tnn.convert(model, fuse=True)
    assert isinstance(fused, torch.fx.GraphModule) and list(fused.state_dict()) == keys
    assert all(p is q for p, q in zip(fused.parameters(), model.parameters()))
    nodes = list(fused.graph.nodes)
    calls = [n.args[3] for n in nodes if n.op == "call_function" and n.target.__name__ ==
             "_fused_conv"]
    # a..e fused with their activations, h with relu (its residual checked
    # at run time), the second call of `shared` with relu
    assert sorted(calls) == sorted(["relu6", "sigmoid", "silu", "tanh", "gelu", "relu", "relu"])
    assert all(m.activation is None for m in fused.modules() if isinstance(m, tnn.Conv2d))
    left = {str(n.target) for n in nodes if n.op in ("call_module", "call_method")}
    assert {"f", "g", "down", "gelu_tanh", "shared"} <= left
    g = torch.Generator().manual_seed(11)
    for shape in ((2, 6, 9, 11), (6, 8, 8)):  # batched and unbatched
        x = rand(*shape, g=g)
        with torch.no_grad():
            assert close(fused(x), ref(x), 1e-5)


def test_convert_fuse_resnet_block():
    model = torch.nn.Sequential(small_model()[0], torch.nn.ReLU(), Block()).eval()
    ref = copy.deepcopy(model)
    fused = tnn.convert(model, fuse=True)
    x = rand(2, 3, 17, 16, g=torch.Generator().manual_seed(12))
    with torch.no_grad():
        assert close(fused(x), ref(x), 1e-5)
        y = fused(x)
    # the first conv and the side branch's take their relu; the batch norm
    # (not an identity) keeps Block.conv and the addition as they are
    acts = [(n.args[2] is not None, n.args[3]) for n in fused.graph.nodes
            if n.op == "call_function" and n.target.__name__ == "_fused_conv"]
    assert acts == [(False, "relu"), (False, "relu")]
    # the fused graph reads the same parameters: an update is seen
    with torch.no_grad():
        for m in (model, ref):
            m[2].side[0].weight.mul_(-1)
        assert close(fused(x), ref(x), 1e-5) and not torch.allclose(fused(x), y)


def test_convert_fuse_untraceable():
    class Branchy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c = torch.nn.Conv2d(2, 2, 1)

        def forward(self, x):
            return self.c(x) if x.sum() > 0 else x

    with pytest.raises(RuntimeError, match="fuse=True.*cannot trace Branchy"):
        tnn.convert(Branchy(), fuse=True)


def test_made_under_inference_mode():
    """Parameters that are inference tensors (no version counter): the
    prepared weights are kept across calls and a new Parameter is seen."""
    g = torch.Generator().manual_seed(13)
    with torch.inference_mode():
        ref = torch.nn.Conv2d(8, 16, 1)
        m = tnn.convert(copy.deepcopy(ref))
        assert m.weight.is_inference()
        x = rand(1, 8, 7, 9, g=g)
        for _ in range(3):
            assert close(m(x), ref(x))
        assert m.tc_stats == {"plans": 1, "weight_preparations": 1}
        ref.weight = torch.nn.Parameter(ref.weight * 2)
        m.weight = ref.weight
        assert close(m(x), ref(x)) and m.tc_stats["weight_preparations"] == 2


@pytest.mark.parametrize("dt", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("act", ["relu", "silu", None])
def test_epilogue_large_output(dt, act):
    """The core's output pass (the epilogue of solvers without one, the
    float16 relay) over outputs of several runs and threads, residual and
    activation, against torch in float64."""
    torch.manual_seed(SEED)
    m = tnn.Conv2d(16, 40, 1).to(dt)
    g = torch.Generator().manual_seed(14)
    x = rand(2, 16, 37, 41, g=g, dtype=dt)  # 121360 outputs, not a multiple of 1024
    r = rand(2, 40, 37, 41, g=g, dtype=dt)
    with torch.no_grad():
        y = m(x, r, activation=act)
        t = torch.nn.functional.conv2d(x.double(), m.weight.double(), m.bias.double()) + r.double()
        t = {None: t, "relu": torch.relu(t), "silu": torch.nn.functional.silu(t)}[act]
    assert y.dtype == dt and y.shape == t.shape
    tol = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}[dt]
    assert (y.double() - t).abs().max().item() <= tol * max(1.0, t.abs().max().item())
