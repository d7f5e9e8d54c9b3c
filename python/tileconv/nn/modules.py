"""tileconv.nn.Conv1d / Conv2d / Conv3d: torch.nn.Conv*d subclasses whose
forward runs on tileconv, and convert(model), which swaps a model's
torch.nn.Conv*d layers for them in place.

A module keeps its tileconv plans (one per input shape, dtype, layout,
weight layout, device and epilogue; the last few) between calls. On the
CPU the plan also holds the weights and bias, copied and packed into the
chosen algorithm's form once (tc_plan_conv_set_weights; a weight in
torch's channels_last memory format handed over as K x mask x C/groups,
weight_layout channels-last, with no reordering copy in Python): they are prepared again when the
parameters change, as torch sees a change: a new tensor, an in-place
update (the parameter's version counter: optimizer steps, copy_ under
no_grad, load_state_dict), a new dtype, device or shape. Writes through
`.data` bypass the version counter: call tc_reset() after them. On the GPU
the plan is kept and the device weights are passed with every call (a
plan-held weight copy lives on the host and would be copied in each time).

Forward only: a call under grad mode with an input or parameter that
requires grad raises RuntimeError; run under torch.no_grad() or
torch.inference_mode().

forward(input, residual=None, *, activation=<the module's>): y =
activation(conv(input) + bias + residual), with the module's `activation`
(None, 'relu', 'relu6', 'silu', 'sigmoid', 'tanh' or 'gelu'; a constructor
keyword) unless the call names another.

convert(model, fuse=True) also moves the additions and activations that
follow convolutions into their epilogues (a torch.fx graph; see convert).
"""
import threading
from collections import OrderedDict

import torch

from . import functional as _F

__all__ = ["Conv1d", "Conv2d", "Conv3d", "convert"]

_MAX_PLANS = 4
_MODULES_OWN = object()  # forward(activation=): the module's own


class _TileconvConv:
    """The tileconv side of the Conv*d subclasses."""
    _tc_nsp = 0

    def _tc_setup(self, activation):
        _F.activation_code(activation)
        self.activation = activation
        self._tc_lock = threading.Lock()
        self.tc_reset()

    def tc_reset(self):
        """Drop the cached plans and prepared weights (the next call plans
        and prepares again)."""
        with self._tc_lock:
            self._tc_plans = OrderedDict()  # key -> [plan, weight stamp]
            self._tc_plan = None
            self.tc_stats = {"plans": 0, "weight_preparations": 0}

    def _tc_plan_for(self, key, make):
        with self._tc_lock:
            ent = self._tc_plans.get(key)
            if ent is None:
                ent = [make(), None]
                self._tc_plans[key] = ent
                self.tc_stats["plans"] += 1
                while len(self._tc_plans) > _MAX_PLANS:
                    self._tc_plans.popitem(last=False)
            else:
                self._tc_plans.move_to_end(key)
            self.__dict__["_tc_plan"] = ent[0]  # past torch's slower Module.__setattr__
            return ent[0]

    def _tc_stamp(self):
        def one(t):
            if t is None:
                return None
            # inference tensors have no version counter; asking raises a
            # c10::Error whose backtrace costs ~0.4 ms
            return (id(t), t.data_ptr(), None if t.is_inference() else t._version)
        return (one(self.weight), one(self.bias))

    def _tc_hold_weights(self, plan, views):
        """Host plans: hand the plan the weights (views() gives them as
        host NumPy arrays) when they differ from what it holds. True:
        execute with the plan's own weights."""
        stamp = self._tc_stamp()
        with self._tc_lock:
            for ent in self._tc_plans.values():
                if ent[0] is plan:
                    if ent[1] != stamp:
                        plan.set_weights(*views())
                        ent[1] = stamp
                        self.tc_stats["weight_preparations"] += 1
                    return True
        return False

    def forward(self, input, residual=None, *, activation=_MODULES_OWN):
        """activation: this call's epilogue activation instead of the
        module's (convert(model, fuse=True) passes it)."""
        if activation is _MODULES_OWN:
            activation = self.activation
        if torch.is_grad_enabled() and (
                self.weight.requires_grad or getattr(input, "requires_grad", False)
                or (self.bias is not None and self.bias.requires_grad)
                or (residual is not None and residual.requires_grad)):
            raise RuntimeError(_F.FORWARD_ONLY)
        return _F._conv(self._tc_nsp, input, self.weight, self.bias, self.stride,
                        self.padding, self.dilation, self.groups, self.padding_mode,
                        activation, residual, owner=self)

    def extra_repr(self):
        s = super().extra_repr()
        return s + (f", activation={self.activation!r}" if self.activation else "")

    def __getstate__(self):  # copy.deepcopy, pickle: plans are not carried
        st = dict(super().__getstate__())
        for k in ("_tc_lock", "_tc_plans", "_tc_plan"):
            st.pop(k, None)
        return st

    def __setstate__(self, st):
        super().__setstate__(st)
        self._tc_lock = threading.Lock()
        self.tc_reset()


class Conv1d(_TileconvConv, torch.nn.Conv1d):
    """torch.nn.Conv1d on tileconv (forward only), plus activation=."""
    _tc_nsp = 1

    def __init__(self, *args, activation=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._tc_setup(activation)


class Conv2d(_TileconvConv, torch.nn.Conv2d):
    """torch.nn.Conv2d on tileconv (forward only), plus activation=."""
    _tc_nsp = 2

    def __init__(self, *args, activation=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._tc_setup(activation)


class Conv3d(_TileconvConv, torch.nn.Conv3d):
    """torch.nn.Conv3d on tileconv (forward only), plus activation=."""
    _tc_nsp = 3

    def __init__(self, *args, activation=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._tc_setup(activation)


_SWAP = {torch.nn.Conv1d: Conv1d, torch.nn.Conv2d: Conv2d, torch.nn.Conv3d: Conv3d}


def _swapped(m):
    cls = _SWAP[type(m)]
    new = cls.__new__(cls)
    new.__dict__.update(m.__dict__)  # the same Parameters, buffers, hooks, settings
    new._tc_setup(None)
    return new


def convert(model, fuse=False):
    """Swap every torch.nn.Conv1d / Conv2d / Conv3d of `model` (exactly
    those classes, not subclasses) for tileconv's, in place, keeping the
    same weight and bias Parameters, padding, padding_mode, groups and
    hooks. Returns the model (a converted module when `model` itself is
    one of those layers).

    fuse=True: then traces the model (torch.fx.symbolic_trace, tileconv's
    convolutions as leaves) and returns a torch.fx.GraphModule holding the
    same submodules and parameters (the same state_dict keys) in which a
    convolution whose result feeds only an addition of another tensor
    and / or only an activation (relu, relu6, silu, sigmoid, tanh, exact
    gelu: modules, functions or methods; torch.nn.Identity layers in
    between are dropped) runs them in its epilogue: conv + x -> act
    becomes one call, y = act(conv + bias + x) rounded once. The module's
    own `activation` is left as it is (the fused call passes it); a
    residual that turns out not to be of the output's shape, dtype and
    device is added by torch instead, as in the original graph. A model
    that torch.fx cannot trace raises RuntimeError."""
    if type(model) in _SWAP:
        return _swapped(model)
    for name, child in list(model.named_children()):
        if type(child) in _SWAP:
            setattr(model, name, _swapped(child))
        else:
            convert(child)
    if fuse:
        return _fused_graph(model)
    return model


# ---------------------------------------------------------------- fusion
def _act_modules():
    return {torch.nn.ReLU: "relu", torch.nn.ReLU6: "relu6", torch.nn.SiLU: "silu",
            torch.nn.Sigmoid: "sigmoid", torch.nn.Tanh: "tanh", torch.nn.GELU: "gelu"}


def _act_functions():
    f = torch.nn.functional
    return {torch.relu: "relu", torch.relu_: "relu", f.relu: "relu", f.relu6: "relu6",
            f.silu: "silu", torch.sigmoid: "sigmoid", f.sigmoid: "sigmoid",
            torch.tanh: "tanh", f.tanh: "tanh", f.gelu: "gelu", torch._C._nn.gelu: "gelu"}


_ACT_METHODS = {"relu": "relu", "relu_": "relu", "sigmoid": "sigmoid", "sigmoid_": "sigmoid",
                "tanh": "tanh", "tanh_": "tanh"}


def _activation_of(node, modules):
    """The tileconv activation name of an fx node applying one to its only
    argument, or None."""
    if len(node.args) != 1:
        return None
    kw = dict(node.kwargs)
    kw.pop("inplace", None)
    if node.op == "call_module":
        m = modules.get(node.target)
        name = _act_modules().get(type(m))
        if name == "gelu" and getattr(m, "approximate", "none") != "none":
            return None
        return None if kw else name
    if node.op == "call_function":
        name = _act_functions().get(node.target)
        if name == "gelu" and kw.pop("approximate", "none") != "none":
            return None
        return None if kw else name
    if node.op == "call_method":
        return None if kw else _ACT_METHODS.get(node.target)
    return None


def _added_to(node, add):
    """The other operand when `add` is conv + x or x + conv (no alpha), or
    None."""
    import operator
    if add.op == "call_function" and add.target in (operator.add, torch.add):
        pass
    elif add.op == "call_method" and add.target == "add":
        pass
    else:
        return None
    if add.kwargs or len(add.args) != 2:
        return None
    a, b = add.args
    other = b if a is node else a if b is node else None
    if other is None or other is node or not isinstance(other, torch.fx.Node):
        return None
    return other


def _conv_out_shape(conv, x):
    nsp = conv._tc_nsp
    sp = tuple(x.shape[-nsp:])
    if conv.padding == "same":
        out = sp
    else:
        pad = (0,) * nsp if conv.padding == "valid" else conv.padding
        out = tuple((i + 2 * p - d * (k - 1) - 1) // s + 1 for i, p, d, k, s in
                    zip(sp, pad, conv.dilation, conv.kernel_size, conv.stride))
    return tuple(x.shape[:-nsp - 1]) + (conv.out_channels,) + out


_TORCH_ACTS = {}


def _fused_conv(conv, x, residual=None, activation=None):
    """The call a fused graph makes: conv(x) + residual -> activation, in
    the convolution's epilogue where the residual fits it."""
    if residual is not None and not (
            isinstance(residual, torch.Tensor) and isinstance(x, torch.Tensor)
            and residual.dtype == x.dtype and residual.device == x.device
            and tuple(residual.shape) == _conv_out_shape(conv, x)):
        y = conv(x, activation=None) + residual
        if activation is None:
            return y
        if not _TORCH_ACTS:
            f = torch.nn.functional
            _TORCH_ACTS.update(relu=torch.relu, relu6=f.relu6, silu=f.silu,
                               sigmoid=torch.sigmoid, tanh=torch.tanh, gelu=f.gelu)
        return _TORCH_ACTS[activation](y)
    return conv(x, residual, activation=activation)


class _Tracer(torch.fx.Tracer):
    def is_leaf_module(self, m, qualname):
        return isinstance(m, _TileconvConv) or super().is_leaf_module(m, qualname)


def _fused_graph(model):
    try:
        graph = _Tracer().trace(model)
    except Exception as e:
        raise RuntimeError(f"tileconv.nn.convert(fuse=True): torch.fx cannot trace "
                           f"{type(model).__name__}: {e}") from e
    gm = torch.fx.GraphModule(model, graph, type(model).__name__)
    gm.train(model.training)
    modules = dict(gm.named_modules())
    g = gm.graph
    for n in list(g.nodes):  # identities (folded batch norms) out of the way
        if (n.op == "call_module" and type(modules.get(n.target)) is torch.nn.Identity
                and len(n.args) == 1 and not n.kwargs):
            n.replace_all_uses_with(n.args[0])
            g.erase_node(n)
    for n in list(g.nodes):
        conv = modules.get(n.target) if n.op == "call_module" else None
        if (not isinstance(conv, _TileconvConv) or conv.activation is not None
                or len(n.args) != 1 or n.kwargs):
            continue
        chain, res, act = [n], None, None
        if len(n.users) == 1:
            res = _added_to(n, next(iter(n.users)))
            if res is not None:
                chain.append(next(iter(n.users)))
        last = chain[-1]
        if len(last.users) == 1:
            act = _activation_of(next(iter(last.users)), modules)
            if act is not None:
                chain.append(next(iter(last.users)))
        if len(chain) == 1:
            continue
        last = chain[-1]
        with g.inserting_before(last):
            mod = g.get_attr(n.target)
            new = g.call_function(_fused_conv, (mod, n.args[0], res, act))
        last.replace_all_uses_with(new)
        for node in reversed(chain):
            g.erase_node(node)
    g.lint()
    gm.recompile()
    return gm
