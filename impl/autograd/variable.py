"""torch.autograd.Variable: the legacy wrapper; every tensor is a Variable and ``Variable(t)``
gives a tensor aliasing ``t`` with the requested ``requires_grad``."""

from __future__ import annotations

import operator
from typing import Any

from impl._creation import zeros
from impl._tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data: Any = None, requires_grad: bool = False, volatile: bool = False) -> Any:
        if data is None:
            data = zeros(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        out.requires_grad = bool(operator.index(requires_grad))  # as torch parses the flag
        return out
