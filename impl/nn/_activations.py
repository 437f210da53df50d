"""nn.functional's activations beyond relu/leaky_relu/threshold: gelu, silu, elu, softplus,
hardtanh, relu6, logsigmoid, mish and softsign, with torch's signatures, in-place forms, dtype
checks and errors (re-exported by impl.nn.functional)."""

from __future__ import annotations

import numbers
from typing import Any

from impl import dtypes
from impl._names import type_name
from impl._ops.inplace import apply_inplace
from impl._ops.table import OpDef, apply
from impl._signatures import invalid_call
from impl._tensor import Tensor
from impl.nn import _activation_ops as ops
from impl.nn import _ops as nn_ops


def _float_only(input: Tensor, kernel: str) -> None:
    """torch's dispatch error for an integer or bool tensor: ``"<kernel>" not implemented for 'Long'``."""
    if not input.dtype.is_floating_point:
        raise dtypes.kernel_missing(kernel, input.dtype)


def _run(fn: Any, values: dict, op: OpDef, kernel: str, name: str | None = None, **attrs: Any) -> Tensor:
    """``op`` on a floating ``input`` (in place if ``values["inplace"]``), ``values`` being the
    arguments ``fn`` was called with (its ``locals()``), after torch's checks: the input a tensor,
    the numbers (``attrs``) numbers, the dtype floating."""
    input, inplace = values["input"], values.get("inplace", False)
    name = (name or fn.__name__) + ("_" if inplace else "")
    if not isinstance(input, Tensor):
        raise invalid_call(fn, values, name)
    for position, (param, value) in enumerate(attrs.items(), 2):
        if not isinstance(value, numbers.Number):
            raise TypeError(
                f"{name}(): argument '{param}' (position {position}) must be Number, not {type_name(value)}"
            )
    _float_only(input, kernel)
    return apply_inplace(op, input, **attrs) if inplace else apply(op, input, **attrs)


def gelu(input: Tensor, *, approximate: str = "none") -> Tensor:
    """``x * Phi(x)`` with the normal CDF from erf ('none') or its tanh approximation ('tanh')."""
    if not isinstance(input, Tensor):
        raise invalid_call(gelu, locals())
    if not isinstance(approximate, str):
        raise TypeError(f"gelu(): argument 'approximate' must be str, not {type_name(approximate)}")
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_only(input, "GeluKernelImpl")
    return apply(ops.GELU, input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (SiluBackward0, in place too)."""
    return _run(silu, locals(), ops.SILU, "silu_cpu")


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` (MishBackward0, in place too)."""
    return _run(mish, locals(), ops.MISH, "mish_cpu")


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` elsewhere (EluBackward0; in place
    EluBackward1, from the result, whose backward refuses a negative alpha)."""
    return _run(elu, locals(), ops.ELU_INPLACE if inplace else ops.ELU, "elu_cpu", alpha=alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``."""
    return _run(softplus, locals(), ops.SOFTPLUS, "softplus_cpu", beta=beta, threshold=threshold)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``clamp(x, min_val, max_val)`` for any dtype but bool (HardtanhBackward0, also in place);
    unsigned tensors refuse a negative bound."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if not isinstance(input, Tensor):
        raise invalid_call(hardtanh, locals(), "hardtanh_" if inplace else "hardtanh")
    if input.dtype is dtypes.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype is dtypes.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if inplace:
        return apply_inplace(ops.HARDTANH, input, min_val=min_val, max_val=max_val)
    return apply(ops.HARDTANH, input, min_val=min_val, max_val=max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``hardtanh(x, 0, 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably (LogSigmoidBackward0)."""
    return _run(logsigmoid, locals(), nn_ops.LOG_SIGMOID, "log_sigmoid_cpu", "log_sigmoid")


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``, as torch's Python composite (DivBackward0)."""
    return input / (input.abs() + 1)
