"""More activations of nn.functional: selu and celu (ATen's elu kernel with a scale and an input
scale), hardswish, hardsigmoid, softshrink, tanhshrink and glu, as ops with the backward ops
derivatives.yaml names (HardswishBackwardBackward0, GluBackwardBackward0 ...), and the functions
nn.functional and torch expose (hardshrink and prelu, which are Tensor methods too, are ops of
impl._ops.activations). Exponentials are the float32 vector exp of torch's kernels (Sleef's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes
from impl._ops.activations import SOFTSHRINK, shrink
from impl._ops.elementwise import UNARY, _no_derivative, div_scalar, scalar_minus, zero_grad
from impl._ops.pointwise_ternary import where
from impl._ops.stacking import cat
from impl._ops.table import NOT_IMPLEMENTED, D, OpDef, apply
from impl._signatures import invalid_call
from impl._tensor import Tensor
from impl.nn._activations import _float_only, _run, computed, elu_backward, vector_exp_of

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


# -- selu, celu ---------------------------------------------------------------------------------
def _scaled_elu_fwd(xp: Any, x: Any, alpha: float, scale: float, input_scale: float) -> Any:
    """ATen's elu kernel: ``expm1(x * input_scale) * (alpha * scale)`` for ``x <= 0``,
    ``x * scale`` elsewhere, its coefficients rounded to the input's dtype first."""
    t = x.dtype.type
    return xp.where(x <= 0, xp.expm1(x * t(input_scale)) * (t(alpha) * t(scale)), x * t(scale))


def _scaled_elu_ops(node: str) -> tuple[OpDef, OpDef]:
    """The out-of-place op (``node``0, its gradient from the input) and the in-place one
    (``node``1, from the result) of an elu with a scale and an input scale."""
    uses = " alpha scale input_scale"

    def options(c: Any) -> dict:
        return {"alpha": c.alpha, "scale": c.scale, "input_scale": c.input_scale}

    out = OpDef(
        node + "0",
        computed(_scaled_elu_fwd),
        derivatives={"self": D("self" + uses, lambda g, c: elu_backward(g, c.self, **options(c)))},
        iterator_operands=UNARY,
    )
    inplace = OpDef(
        node + "1",
        computed(_scaled_elu_fwd),
        derivatives={
            "self": D("result" + uses, lambda g, c: elu_backward(g, c.result, **options(c), is_result=True))
        },
    )
    return out, inplace


SELU, SELU_INPLACE = _scaled_elu_ops("EluBackward")  # torch's selu is a call of elu
CELU, CELU_INPLACE = _scaled_elu_ops("CeluBackward")


@api.function("selu")
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))`` with SELU's constants (EluBackward0;
    in place EluBackward1)."""
    op = SELU_INPLACE if inplace else SELU
    return _run(selu, locals(), op, "elu_cpu", alpha=SELU_ALPHA, scale=SELU_SCALE, input_scale=1.0)


@api.function("selu_")
def selu_(input: Tensor) -> Tensor:
    return selu(input, True)


@api.function("celu")
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (CeluBackward0; in place CeluBackward1)."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    op = CELU_INPLACE if inplace else CELU
    return _run(celu, locals(), op, "elu_cpu", alpha=alpha, scale=1.0, input_scale=1.0 / alpha)


@api.function("celu_")
def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, True)


# -- hardswish, hardsigmoid ---------------------------------------------------------------------
def _relu6_of_shift(xp: Any, x: Any) -> Any:
    """``min(max(x + 3, 0), 6)``, the kernels' clamp (NaN propagates, as in their vector loop)."""
    t = x.dtype.type
    return xp.minimum(xp.maximum(x + t(3), t(0)), t(6))


def _hardswish_backward_fwd(xp: Any, g: Any, x: Any) -> Any:
    """``0`` up to -3, ``g * (x / 3 + 0.5)`` below 3, ``g`` from 3 on (and at NaN)."""
    t = x.dtype.type
    inside = xp.where(x < t(3), g * (x / t(3) + t(0.5)), g)
    return xp.where(x <= t(-3), t(0), inside)


def _hardswish_double_backward(gg: Any, c: Any) -> Any:
    """derivatives.yaml: ``where(-3 < self < 3, grad * grad_output / 3, 0)``."""
    inside = (c.self > -3.0).logical_and(c.self < 3.0)
    return where(inside, div_scalar(gg * c.grad_output, 3.0), 0.0)


HARDSWISH_BACKWARD = OpDef(
    "HardswishBackwardBackward0",
    computed(_hardswish_backward_fwd),
    ("grad_output", "self"),
    {
        "grad_output": D("self", lambda gg, c: apply(HARDSWISH_BACKWARD, gg, c.self)),
        "self": D("grad_output self", _hardswish_double_backward),
    },
    iterator_operands=("grad_output", "self"),
)
HARDSWISH = OpDef(
    "HardswishBackward0",
    computed(lambda xp, x: x * _relu6_of_shift(xp, x) / x.dtype.type(6)),
    derivatives={"self": D("self", lambda g, c: apply(HARDSWISH_BACKWARD, g, c.self))},
    iterator_operands=UNARY,
)
HARDSIGMOID_BACKWARD = OpDef(
    "NotImplemented",
    computed(lambda xp, g, x: xp.where((x > -3) & (x < 3), g * x.dtype.type(1 / 6), x.dtype.type(0))),
    ("grad_output", "self"),
    {"grad_output": D("", _no_derivative("hardsigmoid_backward")), "self": D("", zero_grad)},
    qualified_name=NOT_IMPLEMENTED,
    iterator_operands=("grad_output", "self"),
)
"""hardsigmoid_backward has no derivative in torch: a gradient taken with create_graph=True
carries a NotImplemented node, whose backward raises."""
HARDSIGMOID = OpDef(
    "HardsigmoidBackward0",
    computed(lambda xp, x: _relu6_of_shift(xp, x) / x.dtype.type(6)),
    derivatives={"self": D("self", lambda g, c: apply(HARDSIGMOID_BACKWARD, g, c.self))},
    iterator_operands=UNARY,
)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6`` (HardswishBackward0, in place too)."""
    return _run(hardswish, locals(), HARDSWISH, "hardswish_cpu")


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6`` (HardsigmoidBackward0, in place too)."""
    return _run(hardsigmoid, locals(), HARDSIGMOID, "hardsigmoid_cpu")


# -- softshrink, tanhshrink -------------------------------------------------------------------
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` moved ``lambd`` towards 0, 0 within ``lambd`` of it (SoftshrinkBackward0); ``lambd``
    in ``[0, the dtype's max]``."""
    if isinstance(input, Tensor) and input.dtype.is_floating_point:
        limit = float(np.finfo(input._data.dtype).max)
        if not 0 <= lambd <= limit:
            raise RuntimeError(
                f"lambda must be in range [0, {limit:g}] for input dtype "
                f"{dtypes.scalar_type(input.dtype)}, but found {lambd:g}"
            )
    return shrink(softshrink, locals(), SOFTSHRINK, "softshrink_cpu")


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``, as torch's Python composite (SubBackward0)."""
    return input - input.tanh()


# -- glu ----------------------------------------------------------------------------------------
def _halves(x: Any, dim: int) -> tuple[Any, Any]:
    n = x.shape[dim] // 2
    return x.narrow(dim, 0, n), x.narrow(dim, n, n)


def _glu_fwd(xp: Any, x: Any, dim: int) -> Any:
    """``a * (1 / (1 + exp(-b)))`` of the halves ``a``, ``b`` of ``x`` along ``dim``."""
    a, b = xp.split(x, 2, axis=dim)
    one = x.dtype.type(1)
    return a * (one / (one + vector_exp_of(xp, -b)))


def _glu_backward_fwd(xp: Any, g: Any, x: Any, dim: int) -> Any:
    """ATen's glu_backward: the first half ``sigmoid(b) * g``, the second ``(1 - s) * s * a * g``."""
    a, b = xp.split(x, 2, axis=dim)
    one = x.dtype.type(1)
    s = one / (one + vector_exp_of(xp, -b))
    return xp.concatenate([s * g, (one - s) * s * a * g], axis=dim)


def _glu_double_backward(gg: Any, c: Any) -> Any:
    """FunctionsManual's glu_double_backward (the input's part)."""
    first, second = _halves(c.self, c.dim)
    sig = second.sigmoid()
    one_sub_sig = scalar_minus(1, sig)
    sig_one_sub_sig = sig * one_sub_sig
    gg_first, gg_second = _halves(gg, c.dim)
    go = c.grad_output
    first_part = gg_second * go * sig_one_sub_sig
    second_order = sig_one_sub_sig * one_sub_sig - sig * sig_one_sub_sig
    second_part = gg_second * first * go * second_order + gg_first * go * sig_one_sub_sig
    return cat([first_part, second_part], c.dim)


def _glu_double_backward_grad_output(gg: Any, c: Any) -> Any:
    """FunctionsManual's: ``gg * glu_backward(ones, self)``, its two halves added."""
    shape = list(c.self.shape)
    shape[c.dim] //= 2
    ones = c.self.new_ones(shape)
    both = gg * apply(GLU_BACKWARD, ones, c.self, dim=c.dim)
    first, second = _halves(both, c.dim)
    return first + second


GLU_BACKWARD = OpDef(
    "GluBackwardBackward0",
    computed(_glu_backward_fwd),
    ("grad_output", "self"),
    {
        "grad_output": D("self dim", _glu_double_backward_grad_output),
        "self": D("grad_output self dim", _glu_double_backward),
    },
)
GLU = OpDef(
    "GluBackward0",
    computed(_glu_fwd),
    derivatives={"self": D("self dim", lambda g, c: apply(GLU_BACKWARD, g, c.self, dim=c.dim))},
)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)`` of the two halves of ``input`` along ``dim`` (GluBackward0)."""
    if not isinstance(input, Tensor):
        raise invalid_call(glu, locals())
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    ndim = input.dim()
    if not -ndim <= dim < ndim:
        expected = f"expected to be in range of [{-ndim}, {ndim - 1}]"
        raise IndexError(f"Dimension out of range ({expected}, but got {dim})")
    dim %= ndim
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {input.shape[dim]}")
    _float_only(input, "glu_cpu")
    return apply(GLU, input, dim=dim)


