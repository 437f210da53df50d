"""The randomized leaky ReLU: torch.rrelu / rrelu_ and F.rrelu (RreluWithNoiseBackward0/1). In
training each element at or below zero (NaN is not) is scaled by a slope drawn uniformly from
[lower, upper] on the CPU generator: one 53-bit double per such element, in row-major order, as
ATen's _rrelu_with_noise_train draws them; the slopes, 1 elsewhere, are the ``noise`` the node
saves and the gradient is multiplied by. In eval mode it is a leaky ReLU of slope
(lower + upper) / 2 (the same node)."""

from __future__ import annotations

from typing import Any

from impl import _api as api
from impl import _random
from impl._ops.elementwise import zero_grad
from impl._ops.inplace import apply_inplace
from impl._ops.table import D, OpDef, apply
from impl._tensor import Tensor
from impl._xp import namespace_of
from impl.nn._activations import NEGATIVE_SLOPE_INPLACE, _float_only


def _rrelu_backward_fwd(xp: Any, g: Any, a: Any, noise: Any, lower: float, upper: float,
                        training: bool) -> Any:
    if not training:
        slope = g.dtype.type((lower + upper) / 2)
        return xp.where(a > 0, g, g * slope).astype(g.dtype)
    return (g * noise._data).astype(g.dtype)


_USES = "self noise lower upper training"
RRELU_BACKWARD = OpDef(
    "RreluWithNoiseBackwardBackward0",
    _rrelu_backward_fwd,
    ("grad_output", "self"),
    {
        "grad_output": D(_USES, lambda gg, c: rrelu_backward(gg, c.self, c)),
        "self": D("", zero_grad),
    },
)


def rrelu_backward(grad: Tensor, self: Tensor, c: Any) -> Tensor:
    """ATen's rrelu_with_noise_backward (an op, so create_graph has its graph)."""
    return apply(RRELU_BACKWARD, grad, self, noise=c.noise, lower=c.lower, upper=c.upper, training=c.training)


def _rrelu_fwd(xp: Any, a: Any, noise: Any, lower: float, upper: float, training: bool) -> Any:
    if training:
        return (a * noise._data).astype(a.dtype)
    return xp.where(a > 0, a, a * a.dtype.type((lower + upper) / 2)).astype(a.dtype)


RRELU = OpDef(
    "RreluWithNoiseBackward0",
    _rrelu_fwd,
    derivatives={"self": D(_USES, lambda g, c: rrelu_backward(g, c.self, c))},
)
def _inplace_backward(g: Tensor, c: Any) -> Tensor:
    """rrelu_with_noise_backward from the result: refused in eval mode for a negative slope (the
    input it would need is overwritten), as ATen's leaky_relu_backward refuses it."""
    if not c.training and c.lower + c.upper < 0:
        raise RuntimeError(NEGATIVE_SLOPE_INPLACE)
    return apply(RRELU_BACKWARD, g, c.result, noise=c.noise, lower=c.lower, upper=c.upper,
                 training=c.training)


RRELU_INPLACE = OpDef(
    "RreluWithNoiseBackward1",
    _rrelu_fwd,
    derivatives={"self": D("result noise lower upper training", _inplace_backward)},
)


def _noise(input: Tensor, lower: float, upper: float, training: bool, generator: Any) -> Tensor:
    """The slopes: drawn for the elements at or below zero in training (row-major), else ones; the
    bounds in the input's dtype, each draw a double from them rounded to the dtype (ATen's)."""
    a = input._data
    xp = namespace_of(a)
    noise = xp.ones(input.shape, dtype=a.dtype)
    if training:
        low = a <= 0
        g = generator or _random.default_generator
        lo, hi = float(a.dtype.type(lower)), float(a.dtype.type(upper))
        noise[low] = xp.asarray((g.uniform(int(low.sum()), True) * (hi - lo) + lo).astype(a.dtype))
    return Tensor._from_array(noise)


def _rrelu(
    input: Tensor, lower: float, upper: float, training: bool, generator: Any, inplace: bool
) -> Tensor:
    _float_only(input, "rrelu_with_noise_out_cpu")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    options = {"noise": _noise(input, lower, upper, training, generator), "lower": float(lower),
               "upper": float(upper), "training": bool(training)}
    return apply_inplace(RRELU_INPLACE, input, **options) if inplace else apply(RRELU, input, **options)


@api.function("rrelu")
def _torch_rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator: Any = None) -> Tensor:
    """x where x > 0, else x times a slope drawn from U(lower, upper) in training, (lower + upper)
    / 2 in eval mode."""
    return _rrelu(input, lower, upper, training, generator, False)


@api.function("rrelu_")
def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
           generator: Any = None) -> Tensor:
    return _rrelu(input, lower, upper, training, generator, True)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
                     inplace: bool = False) -> Tensor:
    """F.rrelu: torch.rrelu, or torch.rrelu_ with ``inplace``."""
    return _rrelu(input, lower, upper, training, None, inplace)
