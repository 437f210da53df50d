"""Conv1d/2d/3d and ConvTranspose1d/2d/3d on the convolutions of impl.nn._conv, as
torch's _ConvNd builds them: padding modes other than 'zeros' pad the input with F.pad first; a
transposed convolution's output_size picks its output padding."""

from __future__ import annotations

import math
from typing import Any

from impl import _creation
from impl._tensor import Tensor
from impl.nn import functional as F
from impl.nn import init
from impl.nn._conv import _ntuple
from impl.nn.modules.module import Module
from impl.nn.parameter import Parameter


class _ConvNd(Module):
    """What the convolution layers share: options checked and kept as torch's, the weight
    ((out, in/groups, *kernel); transposed: (in, out/groups, *kernel)) and bias initialised on
    the random stream, the printed options."""

    _dims = 0

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any,
        padding: Any,
        dilation: Any,
        transposed: bool,
        output_padding: Any,
        groups: int,
        bias: bool,
        padding_mode: str,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        stride = _ntuple(stride, n)
        if isinstance(padding, str):
            valid_padding_strings = {"same", "valid"}
            if padding not in valid_padding_strings:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}"
                )
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(
                f"padding_mode must be one of {valid_padding_modes}, but got padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = stride
        self.padding: Any = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = self._reversed_padding()
        if transposed:
            channels = (in_channels, out_channels // groups)
        else:
            channels = (out_channels, in_channels // groups)
        self.weight = Parameter(_creation.empty((*channels, *self.kernel_size), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def _reversed_padding(self) -> Any:
        """F.pad's amounts for this padding, last dimension first: (left, right, top, bottom);
        'same' puts the odd remainder on the right/bottom; a list for padding strings, a tuple
        otherwise, as torch."""
        if self.padding == "valid":
            return [0, 0] * len(self.kernel_size)
        if self.padding == "same":
            pads = []
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size), strict=True):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            return pads
        return tuple(p for p in reversed(self.padding) for _ in range(2))

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    """A direct convolution layer (Conv1d, Conv2d): F.conv{n}d, the input padded first for a
    padding_mode other than 'zeros'."""

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
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups,
                         bias, padding_mode, device, dtype)

    def _conv(self, *args: Any) -> Tensor:
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:
        padding = self.padding
        if self.padding_mode != "zeros":
            input = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            padding = (0,) * self._dims
        return self._conv(input, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_Conv):
    """1-D convolution with torch's parameters and default initialisation."""

    _dims = 1

    def _conv(self, *args: Any) -> Tensor:
        return F.conv1d(*args)


class Conv2d(_Conv):
    """2-D convolution with torch's parameters and default initialisation."""

    _dims = 2

    def _conv(self, *args: Any) -> Tensor:
        return F.conv2d(*args)


class Conv3d(_Conv):
    """3-D convolution with torch's parameters and default initialisation."""

    _dims = 3

    def _conv(self, *args: Any) -> Tensor:
        return F.conv3d(*args)


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution layer (ConvTranspose1d, ConvTranspose2d): padding_mode 'zeros'
    only; forward(input, output_size) picks the output padding that gives output_size."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        n = self._dims
        super().__init__(in_channels, out_channels, kernel_size, stride, _ntuple(padding, n), dilation, True,
                         output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input: Tensor, output_size: Any) -> Any:
        """The output padding: the module's, or what makes the output ``output_size`` (with or
        without the batch and channel sizes), checked against the sizes the input allows."""
        n = self._dims
        if output_size is None:
            return self.output_padding
        non_spatial = 2 if input.dim() == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + n:
            output_size = output_size[non_spatial:]
        if len(output_size) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or "
                f"{non_spatial + n} elements (got {len(output_size)})"
            )
        min_sizes = [
            (input.size(d + non_spatial) - 1) * self.stride[d] - 2 * self.padding[d]
            + self.dilation[d] * (self.kernel_size[d] - 1) + 1
            for d in range(n)
        ]
        max_sizes = [m + s - 1 for m, s in zip(min_sizes, self.stride, strict=True)]
        for size, low, high in zip(output_size, min_sizes, max_sizes, strict=True):
            if size < low or size > high:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from {min_sizes} to "
                    f"{max_sizes} (for an input of {input.size()[2:]})"
                )
        return [size - low for size, low in zip(output_size, min_sizes, strict=True)]

    def _conv(self, *args: Any) -> Tensor:
        raise NotImplementedError

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for {self.__class__.__name__}")
        extra = self._output_padding(input, output_size)
        w, b = self.weight, self.bias
        return self._conv(input, w, b, self.stride, self.padding, extra, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """The transposed 1-D convolution with torch's parameters and default initialisation."""

    _dims = 1

    def _conv(self, *args: Any) -> Tensor:
        return F.conv_transpose1d(*args)


class ConvTranspose2d(_ConvTransposeNd):
    """The transposed 2-D convolution with torch's parameters and default initialisation."""

    _dims = 2

    def _conv(self, *args: Any) -> Tensor:
        return F.conv_transpose2d(*args)


class ConvTranspose3d(_ConvTransposeNd):
    """The transposed 3-D convolution with torch's parameters and default initialisation."""

    _dims = 3

    def _conv(self, *args: Any) -> Tensor:
        return F.conv_transpose3d(*args)
