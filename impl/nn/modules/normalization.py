"""BatchNorm1d/2d/3d (running statistics as buffers, momentum None: a cumulative average), LayerNorm,
GroupNorm, InstanceNorm1d/2d/3d, RMSNorm, LocalResponseNorm and CrossMapLRN2d, with torch's
attributes, state_dict keys and printed forms."""

from __future__ import annotations

import warnings
from typing import Any

from impl import _creation, dtypes
from impl._tensor import Tensor
from impl.nn import _lrn, init
from impl.nn import functional as F
from impl.nn.modules.module import Module
from impl.nn.parameter import Parameter


def _affine_parameters(module: Module, shape: Any, affine: bool, bias: bool, kw: dict) -> None:
    """Register weight and bias of ``shape`` (weight only when ``bias`` is False), or both as None
    when not ``affine``, as torch's normalisation layers do."""
    if affine:
        module.weight = Parameter(_creation.empty(shape, **kw))
        if bias:
            module.bias = Parameter(_creation.empty(shape, **kw))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module: Module, affine: bool) -> None:
    """Weight ones, bias zeros (where they exist): torch's reset_parameters of these layers."""
    if affine:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)


class _BatchNorm(Module):
    _version = 2

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, num_features, affine, bias, kw)
        if track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, **kw))
            self.register_buffer("running_var", _creation.ones(num_features, **kw))
            self.register_buffer(
                "num_batches_tracked", _creation.tensor(0, dtype=dtypes.int64, device=device)
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        _reset_affine(self, self.affine)

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}"
        )

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        tracked = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if tracked else None,
            self.running_var if tracked else None,
            self.weight,
            self.bias,
            use_batch,
            factor,
            self.eps,
        )

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class LayerNorm(Module):
    def __init__(
        self,
        normalized_shape: Any,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, kw)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self, self.elementwise_affine)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
            f"bias={self.bias is not None}"
        )


class GroupNorm(Module):
    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        kw = {"device": device, "dtype": dtype}
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, num_channels, affine, bias, kw)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self, self.affine)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class _InstanceNorm(_BatchNorm):
    """torch's _InstanceNorm: batch norm's parameters and buffers (affine and running statistics
    off by default), normalising each sample's channels over their spatial dims."""

    _no_batch_dim = 0

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        options = (eps, momentum, affine, track_running_stats, device, dtype)
        super().__init__(num_features, *options, bias=bias)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features"
                    f" ({self.num_features}), but got: {input.size(feature_dim)}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                "warning by not passing in num_features, which is not used because affine=False",
                stacklevel=2,
            )
        if input.dim() == self._no_batch_dim:
            return self._instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._instance_norm(input)

    def _instance_norm(self, input: Tensor) -> Tensor:
        momentum = self.momentum if self.momentum is not None else 0.0
        use_input_stats = self.training or not self.track_running_stats
        return F.instance_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats, momentum,
            self.eps,
        )


class InstanceNorm1d(_InstanceNorm):
    _no_batch_dim = 2

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class InstanceNorm2d(_InstanceNorm):
    _no_batch_dim = 3

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (3, 4):
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")


class InstanceNorm3d(_InstanceNorm):
    _no_batch_dim = 4

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (4, 5):
            raise ValueError(f"expected 4D or 5D input (got {input.dim()}D input)")


class RMSNorm(Module):
    def __init__(
        self,
        normalized_shape: Any,
        eps: float | None = None,
        elementwise_affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_creation.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """F.local_response_norm across the channels of each position."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(LocalResponseNorm):
    """The legacy cross-channel LRN of 4-D input (impl.nn._lrn.CrossMapLRN2d, a custom Function)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        return _lrn.CrossMapLRN2d.apply(input, self.size, self.alpha, self.beta, self.k)
