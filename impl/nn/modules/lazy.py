"""Lazy modules (torch.nn.modules.lazy): LazyLinear, the lazy convolutions and batch norms hold uninitialized
parameters until their first call, which reads the input's features, materializes the parameters, initialises
them as the module they become does (on the random stream, weight first) and swaps the module's
class for that one (``cls_to_become``: Linear, Conv2d ...)."""

from __future__ import annotations

from typing import Any

from impl import _creation, dtypes
from impl import _grad_mode as grad_mode
from impl._tensor import Tensor
from impl.nn.modules.conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from impl.nn.modules.linear import Linear
from impl.nn.modules.module import Module
from impl.nn.modules.normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm
from impl.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy


class LazyModuleMixin:
    """What the lazy modules share: a forward pre-hook that initialises the parameters from the
    first input and turns the module into ``cls_to_become``; a load_state_dict pre-hook that
    materializes the uninitialized parameters to the shapes of the values loaded into them."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars or is_lazy(param) else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars or is_lazy(buf) else buf.detach()

    def _lazy_load_hook(self, state_dict: dict, prefix: str, *args: Any) -> None:
        for name, param in [*self._parameters.items(), *self._buffers.items()]:
            key = prefix + name
            if key in state_dict and is_lazy(param) and not is_lazy(state_dict[key]):
                with grad_mode.no_grad():
                    param.materialize(state_dict[key].shape)

    def has_uninitialized_params(self) -> bool:
        return any(is_lazy(p) for p in [*self._parameters.values(), *self._buffers.values()])

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def _infer_parameters(self, module: Module, args: tuple, kwargs: dict | None = None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose in_features (0 until then) is the last dimension of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            with grad_mode.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # materialized by load_state_dict: in_features read from the input
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(
                    f"The in_features inferred from input: {input.shape[-1]} "
                    f"is not equal to in_features from self.weight: {self.weight.shape[-1]}"
                )
            self.in_features = input.shape[-1]


class _LazyConvXdMixin(LazyModuleMixin):
    """What the lazy convolutions share: in_channels (0 until then) is the channel dimension of
    the first input, the weight materialized as the module it becomes lays it out."""

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            n = self._dims
            if input.dim() not in (n + 1, n + 2):
                raise RuntimeError(
                    f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                    f"{self.__class__.__name__}, but got input of size: {input.shape}"
                )
            self.in_channels = input.shape[1] if input.dim() == n + 2 else input.shape[0]
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                channels = (self.in_channels, self.out_channels // self.groups)
            else:
                channels = (self.out_channels, self.in_channels // self.groups)
            self.weight.materialize((*channels, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _uninitialized(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        """The parameters replaced by uninitialized ones (the constructor made them with no
        channels)."""
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


class _LazyConv(_LazyConvXdMixin):
    def __init__(
        self,
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
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._uninitialized(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(
        self,
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
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                         padding_mode)
        self._uninitialized(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A Conv1d whose in_channels is the channel dimension of its first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A Conv2d whose in_channels is the channel dimension of its first input."""

    cls_to_become = Conv2d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ConvTranspose1d whose in_channels is the channel dimension of its first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ConvTranspose2d whose in_channels is the channel dimension of its first input."""

    cls_to_become = ConvTranspose2d


class LazyConv3d(_LazyConv, Conv3d):
    """A Conv3d whose in_channels is the channel dimension of its first input."""

    cls_to_become = Conv3d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ConvTranspose3d whose in_channels is the channel dimension of its first input."""

    cls_to_become = ConvTranspose3d


class _LazyNormBase(LazyModuleMixin, _BatchNorm):
    """What the lazy batch norms share: num_features (0 until then) is the channel dimension
    (dim 1) of the first input; weight, bias and the running statistics uninitialized till then."""

    def __init__(
        self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
        track_running_stats: bool = True, device: Any = None, dtype: Any = None,
    ) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _creation.tensor(0, dtype=dtypes.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """A BatchNorm1d whose num_features is the channel dimension of its first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """A BatchNorm2d whose num_features is the channel dimension of its first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """A BatchNorm3d whose num_features is the channel dimension of its first input."""

    cls_to_become = BatchNorm3d
