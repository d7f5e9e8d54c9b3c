"""tileconv.nn.Conv1d / Conv2d / Conv3d: torch.nn.Conv*d subclasses whose
forward runs on tileconv, and convert(model), which swaps a model's
torch.nn.Conv*d layers for them in place.

A module keeps its tileconv plans (one per input shape, dtype, layout,
device and epilogue; the last few) between calls. On the CPU the plan also
holds the weights and bias, copied and packed into the chosen algorithm's
form once (tc_plan_conv_set_weights): they are prepared again when the
parameters change, as torch sees a change: a new tensor, an in-place
update (the parameter's version counter: optimizer steps, copy_ under
no_grad, load_state_dict), a new dtype, device or shape. Writes through
`.data` bypass the version counter: call tc_reset() after them. On the GPU
the plan is kept and the device weights are passed with every call (a
plan-held weight copy lives on the host and would be copied in each time).

Forward only: a call under grad mode with an input or parameter that
requires grad raises RuntimeError; run under torch.no_grad() or
torch.inference_mode().

forward(input, residual=None): y = activation(conv(input) + bias +
residual), with the module's `activation` (None, 'relu', 'relu6', 'silu',
'sigmoid', 'tanh' or 'gelu'; a constructor keyword).
"""
import threading
from collections import OrderedDict

import torch

from . import functional as _F

__all__ = ["Conv1d", "Conv2d", "Conv3d", "convert"]

_MAX_PLANS = 4


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
            try:
                v = t._version
            except RuntimeError:  # inference tensors have no version counter
                v = None
            return (id(t), t.data_ptr(), v)
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

    def forward(self, input, residual=None):
        if torch.is_grad_enabled() and (
                self.weight.requires_grad or getattr(input, "requires_grad", False)
                or (self.bias is not None and self.bias.requires_grad)
                or (residual is not None and residual.requires_grad)):
            raise RuntimeError(_F.FORWARD_ONLY)
        return _F._conv(self._tc_nsp, input, self.weight, self.bias, self.stride,
                        self.padding, self.dilation, self.groups, self.padding_mode,
                        self.activation, residual, owner=self)

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


def convert(model):
    """Swap every torch.nn.Conv1d / Conv2d / Conv3d of `model` (exactly
    those classes, not subclasses) for tileconv's, in place, keeping the
    same weight and bias Parameters, padding, padding_mode, groups and
    hooks. Returns the model (a converted module when `model` itself is
    one of those layers)."""
    if type(model) in _SWAP:
        return _swapped(model)
    for name, child in list(model.named_children()):
        if type(child) in _SWAP:
            setattr(model, name, _swapped(child))
        else:
            convert(child)
    return model
