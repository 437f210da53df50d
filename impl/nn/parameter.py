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


# Tensor methods an uninitialized parameter or buffer still answers (torch's _allowed_methods)
_ALLOWED = frozenset(("size", "copy_", "is_complex", "is_floating_point", "half", "float", "double", "char",
                      "short", "int", "long", "cuda", "cpu", "to", "get_device", "detach", "requires_grad_"))


def _refusal(cls: str, method: str) -> Any:
    """A function raising torch's ValueError for Tensor ``method`` of an uninitialized ``cls``."""

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise ValueError(
            f"Attempted to use an uninitialized parameter in <method '{method}' of 'torch._C.TensorBase' "
            "objects>. This error happens when you are using a `LazyModule` or explicitly manipulating "
            f"`torch.nn.parameter.{cls}` objects. When using LazyModules Call `forward` with a dummy "
            "batch to initialize the parameters before calling torch functions"
        )

    return refused


class _UninitializedMixin:
    """A parameter or buffer whose shape is not known yet (a lazy module's, until its first call):
    ``materialize(shape)`` gives it data and turns it into ``cls_to_become``; until then its shape
    and the Tensor methods outside ``_ALLOWED`` are refused with torch's errors."""

    cls_to_become: type

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        data = Tensor.detach(self)
        device = data.device if device is None else device
        dtype = data.dtype if dtype is None else dtype
        self.data = _creation.empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
            "in `load_state_dict` when trying to load an uninitialized parameter into an initialized one. "
            "Call `forward` to initialize the parameters before accessing their attributes."
        )

    def size(self, dim: Any = None) -> Any:
        return Tensor.size(Tensor.detach(self), dim) if dim is not None else Tensor.shape.__get__(self)

    def share_memory_(self) -> Any:
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize the "
            "parameters before calling `module.share_memory()`."
        )

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __getattribute__(self, name: str) -> Any:
        value = object.__getattribute__(self, name)
        if name.startswith("_") or name in _ALLOWED or not callable(value) or not hasattr(Tensor, name):
            return value
        return _refusal(type(self).__name__, name)

    def __add__(self, other: Any) -> Any:
        _refusal(type(self).__name__, "add")()

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        _refusal(type(self).__name__, "sub")()

    def __mul__(self, other: Any) -> Any:
        _refusal(type(self).__name__, "mul")()

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        _refusal(type(self).__name__, "div")()

    def __neg__(self) -> Any:
        _refusal(type(self).__name__, "neg")()

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (type(self), (self.requires_grad,))


class UninitializedParameter(_UninitializedMixin, Parameter):
    """``nn.parameter.UninitializedParameter``: a Parameter of no data yet (see the mixin)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> Any:
        data = _creation.empty(0, device=device, dtype=dtype)
        return Parameter.__new__(cls, data, requires_grad)

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        pass

    def __deepcopy__(self, memo: dict) -> Any:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, Tensor.detach(self).device, self.dtype)
        return memo[id(self)]


class UninitializedBuffer(_UninitializedMixin, Tensor):
    """``nn.parameter.UninitializedBuffer``: a buffer of no data yet (see the mixin)."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                persistent: bool = True) -> Any:
        t = _alias(cls, _creation.empty(0, device=device, dtype=dtype))
        t._requires_grad = bool(requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass


def is_lazy(param: Any) -> bool:
    """``torch.nn.parameter.is_lazy``: whether ``param`` is uninitialized."""
    return isinstance(param, _UninitializedMixin)
