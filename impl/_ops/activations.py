"""Activation ops with Tensor methods: hardshrink (and softshrink's op, which shares its backward)
and prelu, with the backward ops derivatives.yaml names (HardshrinkBackwardBackward0,
PreluKernelBackwardBackward0); nn.functional re-exports the functions."""

from __future__ import annotations

import numbers
from typing import Any

from impl import _api as api
from impl import _autocast, dtypes
from impl._names import type_name
from impl._ops.elementwise import UNARY, opmath, zero_grad
from impl._ops.pointwise_ternary import where
from impl._ops.table import D, OpDef, apply
from impl._signatures import SAME_DTYPE, invalid_call
from impl._tensor import Tensor


def computed(fwd: Any) -> Any:
    """``opmath(fwd)``, the result in the input's dtype."""
    run = opmath(fwd)
    return lambda xp, *arrays, **attrs: run(xp, *arrays, **attrs).astype(arrays[0].dtype, copy=False)


def float_only(input: Tensor, kernel: str) -> None:
    """torch's dispatch error for an integer or bool tensor: ``"<kernel>" not implemented for 'Long'``."""
    if not input.dtype.is_floating_point:
        raise dtypes.kernel_missing(kernel, input.dtype)


# -- hardshrink, softshrink ---------------------------------------------------------
def _band(xp: Any, x: Any, lambd: float) -> Any:
    """Where ``x`` lies in ``[-lambd, lambd]`` (NaN does not)."""
    t = x.dtype.type
    return (x >= -t(lambd)) & (x <= t(lambd))


def _shrink_backward_fwd(xp: Any, g: Any, x: Any, lambd: float) -> Any:
    """shrink_backward_kernel: 0 inside ``[-lambd, lambd]``, ``g`` elsewhere (at NaN too, as its
    scalar loop; its vector loop gives 0 there)."""
    return xp.where(_band(xp, x, lambd), x.dtype.type(0), g)


def _shrink_ops(name: str, fwd: Any) -> tuple[OpDef, OpDef]:
    """The forward op ``name``Backward0 and its backward op (the gradient inside the band zero;
    its own derivative the backward again for the gradient, zeros for the input)."""
    backward = OpDef(
        name + "BackwardBackward0",
        computed(_shrink_backward_fwd),
        ("grad_output", "self"),
        {
            "grad_output": D("self lambd", lambda gg, c: apply(backward, gg, c.self, lambd=c.lambd)),
            "self": D("", zero_grad),
        },
        iterator_operands=("grad_output", "self"),
    )
    forward = OpDef(
        name + "Backward0",
        computed(fwd),
        derivatives={"self": D("self lambd", lambda g, c: apply(backward, g, c.self, lambd=c.lambd))},
        iterator_operands=UNARY,
    )
    return forward, backward


def _hardshrink_fwd(xp: Any, x: Any, lambd: float) -> Any:
    return xp.where(_band(xp, x, lambd), x.dtype.type(0), x)


def _softshrink_fwd(xp: Any, x: Any, lambd: float) -> Any:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd`` (and at NaN), 0 between."""
    lam = x.dtype.type(lambd)
    return xp.where(_band(xp, x, lambd), x.dtype.type(0), xp.where(x > lam, x - lam, x + lam))


HARDSHRINK, HARDSHRINK_BACKWARD = _shrink_ops("Hardshrink", _hardshrink_fwd)
SOFTSHRINK, SOFTSHRINK_BACKWARD = _shrink_ops("Softshrink", _softshrink_fwd)


@api.variants("hardshrink", out=SAME_DTYPE)
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` outside ``[-lambd, lambd]``, 0 inside (HardshrinkBackward0)."""
    return shrink(hardshrink, locals(), HARDSHRINK, "hardshrink_cpu")


def shrink(fn: Any, values: dict, op: OpDef, kernel: str) -> Tensor:
    """``op`` (a shrink) of ``values["input"]`` by ``values["lambd"]`` after torch's checks."""
    input, lambd = values["input"], values["lambd"]
    if not isinstance(input, Tensor):
        raise invalid_call(fn, values)
    if not isinstance(lambd, numbers.Number):
        where = f"{fn.__name__}(): argument 'lambd' (position 2)"
        raise TypeError(f"{where} must be Number, not {type_name(lambd)}")
    float_only(input, kernel)
    return apply(op, input, lambd=lambd)


# -- prelu --------------------------------------------------------------------------------------
def _prelu_backward_fwd(xp: Any, g: Any, x: Any, w: Any) -> tuple[Any, Any]:
    """_prelu_kernel_backward: ``g`` or ``w * g`` for the input; ``x * g`` where ``x <= 0``, summed
    to the (broadcast) weight's shape, for the weight."""
    grad_input = xp.where(x > 0, g, w * g)
    per_element = xp.where(x > 0, x.dtype.type(0), x * g)
    axes = tuple(i for i in range(x.ndim) if i >= x.ndim - w.ndim and w.shape[i - x.ndim + w.ndim] == 1)
    axes += tuple(range(x.ndim - w.ndim))
    return grad_input, per_element.sum(axis=axes, keepdims=True).reshape(w.shape).astype(x.dtype)


def _prelu_double_backward(which: str) -> Any:
    """The gradients of _prelu_kernel_backward's, transposed from derivatives.yaml's forward
    formulas (``where(self >= 0, ...)``) for the gradient, the input and the weight."""

    def formula(grads: Any, c: Any) -> Any:
        ggi, ggw = grads
        kept = c.self >= 0
        if which == "self":
            return c.self.new_zeros(c.self.shape) if ggw is None else where(kept, 0.0, c.grad_output * ggw)
        if which == "weight":
            if ggi is None:
                return c.weight.new_zeros(c.weight.shape)
            return _sum_to(where(kept, 0.0, ggi * c.grad_output), c.weight)
        parts = [where(kept, ggi, ggi * c.weight)] if ggi is not None else []
        parts += [where(kept, 0.0, ggw * c.self)] if ggw is not None else []
        return parts[0] if len(parts) == 1 else parts[0] + parts[1]

    return formula


def _sum_to(t: Tensor, like: Tensor) -> Tensor:
    """``t`` summed to ``like``'s shape (which broadcasts to ``t``'s), as sum_to_size."""
    lead = t.dim() - like.dim()
    dims = [*range(lead), *(lead + i for i, s in enumerate(like.shape) if s == 1 and t.shape[lead + i] != 1)]
    return t.sum(dims, keepdim=True).view(tuple(like.shape)) if dims else t


PRELU_INPUTS = ("grad_output", "self", "weight")
PRELU_BACKWARD = OpDef(
    "PreluKernelBackwardBackward0",
    _prelu_backward_fwd,
    PRELU_INPUTS,
    {name: D("grad_output self weight", _prelu_double_backward(name)) for name in PRELU_INPUTS},
    outputs=("grad_input", "grad_weight"),
    differentiable_outputs=2,
)


def _prelu_grads(which: int) -> Any:
    return lambda g, c: apply(PRELU_BACKWARD, g, c.self, c.weight)[which]


PRELU = OpDef(
    "PreluKernelBackward0",
    computed(lambda xp, x, w: xp.where(x > 0, x, w * x)),
    ("self", "weight"),
    {"self": D("self weight", _prelu_grads(0)), "weight": D("self weight", _prelu_grads(1))},
)


@api.variants("prelu")
@_autocast.policy("lower")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, ``weight * x`` elsewhere, the weight one value or one per channel
    (dim 1), reshaped to broadcast as torch's composite does (PreluKernelBackward0)."""
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise invalid_call(prelu, locals())
    if input.dtype is not weight.dtype:
        names = dtypes.scalar_type(input.dtype), dtypes.scalar_type(weight.dtype)
        raise RuntimeError("prelu: Type promoting not supported. Got {} and {}".format(*names))
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() > 1 else 1
        if weight.numel() != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                f"{weight.numel()} and channel size = {channels}."
            )
    if weight.dim() > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}"
        )
    float_only(input, "prelu_cpu")
    if input.dim() != weight.dim():
        shape = [1] * input.dim()
        if input.dim() > 1:
            shape[1] = weight.numel()
        weight = weight.reshape(shape)
    return apply(PRELU, input, weight)
