"""Conv2d on the im2col convolution of impl.nn._conv; padding modes other than 'zeros' pad the
input with F.pad first, as torch's Conv2d does."""

from __future__ import annotations

import math
from typing import Any

from impl import _creation
from impl._tensor import Tensor
from impl.nn import functional as F
from impl.nn import init
from impl.nn._conv import _pair
from impl.nn.modules.module import Module
from impl.nn.parameter import Parameter


class Conv2d(Module):
    """2-D convolution with torch's parameters and default initialisation."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(
                f"padding_mode must be one of {valid_padding_modes}, but got padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride)
        if isinstance(padding, str):
            valid_padding_strings = {"same", "valid"}
            if padding not in valid_padding_strings:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}"
                )
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding: Any = padding
        else:
            self.padding = _pair(padding)
        self.dilation = _pair(dilation)
        self.groups = groups
        self._reversed_padding_repeated_twice = self._reversed_padding()
        self.padding_mode = padding_mode
        self.output_padding = (0, 0)
        self.transposed = False
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(_creation.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _reversed_padding(self) -> Any:
        """F.pad's amounts for this padding: (left, right, top, bottom); 'same' puts the odd
        remainder on the right/bottom; a list for padding strings, a tuple otherwise, as torch."""
        if self.padding == "valid":
            return [0, 0, 0, 0]
        if self.padding == "same":
            pads = []
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size), strict=True):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            return pads
        return tuple(p for p in reversed(self.padding) for _ in range(2))

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return F.conv2d(padded, self.weight, self.bias, self.stride, (0, 0), self.dilation, self.groups)
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.kernel_size):
            s += ", padding=" + (self.padding if isinstance(self.padding, str) else str(self.padding))
        if self.dilation != (1,) * len(self.kernel_size):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s
