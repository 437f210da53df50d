"""torch.distributions.utils: broadcasting of parameters, probs <-> logits, lazy properties."""

from __future__ import annotations

from functools import update_wrapper
from typing import Any

from impl import _api, _grad_mode
from impl._size import Size
from impl._tensor import Tensor
from impl.nn import functional as F

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits"]

euler_constant = 0.57721566490153286060
NUMBERS = (int, float, bool)  # torch.types._Number
EMPTY = Size()  # the default sample_shape, batch_shape and event_shape


class _Torch:
    """``torch.<name>`` read at call time from the registry of public names (what ``import impl``
    exports), so the distributions call the public functions a planted fault may replace."""

    def __getattr__(self, name: str) -> Any:
        return _api.FUNCTIONS[name]


torch = _Torch()


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Tensors and numbers broadcast together; numbers become tensors of the first tensor's dtype
    and device (the default dtype without one)."""
    if not all(isinstance(v, (Tensor, *NUMBERS)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, torch.Tensor or objects implementing "
            "__torch_function__."
        )
    first = next((v for v in values if isinstance(v, Tensor)), None)
    if first is None:
        options = {"dtype": torch.get_default_dtype()}
    else:
        options = {"dtype": first.dtype, "device": first.device}
    tensors = (v if isinstance(v, Tensor) else torch.tensor(v, **options) for v in values)
    return torch.broadcast_tensors(*tensors)


def _standard_normal(shape: Any, dtype: Any, device: Any) -> Tensor:
    return torch.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """``value`` summed over its ``dim`` rightmost dims."""
    return value if dim == 0 else value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    return torch.sigmoid(logits) if is_binary else F.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    clamped = clamp_probs(probs)
    return torch.log(clamped) - torch.log1p(-clamped) if is_binary else torch.log(clamped)


class lazy_property:
    """A property computed on first use (with grad enabled) and then stored on the instance."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with _grad_mode.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property is on the class: a property too (``isinstance(..., property)``)."""

    def __init__(self, wrapped: Any) -> None:
        property.__init__(self, wrapped)
