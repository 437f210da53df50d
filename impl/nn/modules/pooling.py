"""Pooling layers: MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d,
LPPool1d/2d, MaxUnpool1d/2d/3d (their attributes, forwards and printed forms as torch's)."""

from __future__ import annotations

from typing import Any

from impl._tensor import Tensor
from impl.nn import functional as F
from impl.nn.modules.module import Module


def _single(v: Any) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class _MaxPoolNd(Module):
    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    def forward(self, input: Tensor) -> Any:
        return F.max_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )


class MaxPool2d(_MaxPoolNd):
    _fn = "max_pool2d"  # (looked up in F when called)

    def forward(self, input: Tensor) -> Any:
        return getattr(F, self._fn)(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )


class MaxPool3d(MaxPool2d):
    _fn = "max_pool3d"


class _AvgPoolNd(Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad
        )


class AvgPool2d(_AvgPoolNd):
    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    _fn = "avg_pool2d"

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class AvgPool3d(AvgPool2d):
    _fn = "avg_pool3d"


class _AdaptivePoolNd(Module):
    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptivePoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptivePoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool2d(_AdaptivePoolNd):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    def forward(self, input: Tensor) -> Any:
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    def forward(self, input: Tensor) -> Any:
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _LPPoolNd(Module):
    def __init__(
        self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
    ) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class MaxUnpool1d(Module):
    """F.max_unpool1d with kernel_size, stride (the kernel's by default) and padding as tuples."""

    n = 1

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = self._tuple(kernel_size)
        self.stride = self._tuple(stride if stride is not None else kernel_size)
        self.padding = self._tuple(padding)

    def _tuple(self, v: Any) -> tuple:
        return tuple(v) if isinstance(v, (tuple, list)) else (v,) * self.n

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        unpool = getattr(F, f"max_unpool{self.n}d")
        return unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool2d(MaxUnpool1d):
    n = 2


class MaxUnpool3d(MaxUnpool1d):
    n = 3
