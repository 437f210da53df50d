"""Identity, Linear and Bilinear."""

from __future__ import annotations

import math
from typing import Any

from impl import _creation
from impl._tensor import Tensor
from impl.nn import functional as F
from impl.nn import init
from impl.nn.modules.module import Module
from impl.nn.parameter import Parameter


class Identity(Module):
    """Returns its input unchanged (extra constructor arguments are accepted and ignored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


def _weight_and_bias(module: Module, shape: tuple, bias: bool, device: Any, dtype: Any) -> None:
    """A weight of ``shape`` and a bias of its first size (or bias None), then initialised."""
    module.weight = Parameter(_creation.empty(shape, device=device, dtype=dtype))
    if bias:
        module.bias = Parameter(_creation.empty(shape[0], device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)
    module.reset_parameters()


class Linear(Module):
    """``y = x @ weight.T + bias`` with weight (out, in) initialised by kaiming_uniform_(a=sqrt(5))."""

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in_features), bias, device, dtype)

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
        )


class Bilinear(Module):
    """``y = x1^T A x2 + b`` with weight (out, in1, in2) and bias (out,) drawn from
    uniform(-1/sqrt(in1_features), 1/sqrt(in1_features))."""

    def __init__(
        self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in1_features, in2_features), bias, device, dtype)

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """Linear under another name (MultiheadAttention's out_proj, so printed)."""
