"""nn.Parameter (a leaf tensor that a Module registers when assigned) and nn.Buffer."""

from __future__ import annotations

from typing import Any

from impl import _creation
from impl._tensor import Tensor


def _alias(cls: type, data: Tensor | None) -> Any:
    """A detached alias of ``data`` (same memory, no graph) whose class is ``cls``."""
    if data is None:
        data = _creation.empty(0)
    t = data.detach()
    t.__class__ = cls
    return t


class Parameter(Tensor):
    """A Tensor that is a module parameter: always a leaf, requires grad unless told otherwise."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        p = _alias(cls, data)
        if requires_grad and not p.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        p._requires_grad = bool(requires_grad)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return object.__format__(self, spec)  # a 0-dim one too: torch formats only plain Tensors' items

    def __deepcopy__(self, memo: dict) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        copy = Parameter(Tensor.__deepcopy__(self, {}), self.requires_grad)
        if self._grad is not None:
            copy._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = copy
        return copy

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (Parameter, (self.detach(), self.requires_grad))


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` is true for tensors made by ``Buffer(...)`` (they stay plain Tensors)."""

    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Any:
        t = (
            (data if data is not None else _creation.empty(0))
            .detach()
            .requires_grad_(data is not None and data.requires_grad)
        )
        t.persistent = persistent
        t._is_buffer = True
        return t
