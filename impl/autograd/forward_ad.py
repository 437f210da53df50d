"""torch.autograd.forward_ad: dual levels, dual tensors (a primal with its tangent) and their
unpacking. The tangents themselves propagate through the ops (``OpDef.jvp``, see
impl/_ops/table.py's ``_forward_grad``)."""

from __future__ import annotations

import contextlib
from typing import Any, NamedTuple

from impl._grad_mode import forward_level, set_tangent, tangent_of
from impl._names import type_name
from impl._ops.table import apply
from impl._ops.views import FW_PRIMAL, view
from impl._tensor import Tensor
from impl._xp import namespace_of

__all__ = [
    "UnpackedDualTensor",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
    "dual_level",
]


def enter_dual_level() -> int:
    """Enter the forward-AD level (torch has one: a second is refused) and return it."""
    if forward_level.level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    forward_level.level, forward_level.token = 0, object()
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit the level: every tangent made under it is gone."""
    if level is None:
        level = forward_level.level
    if level != forward_level.level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    forward_level.level, forward_level.token = -1, None


def make_dual(tensor: Any, tangent: Any, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` with ``tangent`` as its tangent (kept as is when laid out as
    ``tensor``, else copied into a tensor of ``tensor``'s layout), with torch's checks."""
    if level is None:
        level = forward_level.level
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if level != forward_level.level:
        raise RuntimeError("Invalid level given to _make_dual")
    if tangent_of(tensor) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the same level "
            f"{level} is not supported."
        )
    check_tangent_size(tensor, tangent)
    dual = view(tensor, *tensor.shape)
    set_fw_grad(dual, tangent)
    return dual


def check_tangent_size(tensor: Tensor, tangent: Tensor) -> None:
    """torch's refusal of a tangent of another size than its primal's."""
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, "
            f"this is not supported. Tensor is of size {list(tensor.shape)} while the given forward "
            f"gradient is of size {list(tangent.shape)}."
        )


def set_fw_grad(tensor: Tensor, tangent: Tensor) -> None:
    """torch's ``_set_fw_grad``: ``tangent`` (of ``tensor``'s size) becomes ``tensor``'s, kept as
    is when laid out as ``tensor``, else copied into a tensor of ``tensor``'s layout."""
    check_tangent_size(tensor, tangent)
    same = tangent.stride() == tensor.stride() and tangent.storage_offset() == tensor.storage_offset()
    if not same:  # torch's new_with_same_meta: the primal's layout, the tangent's values
        xp = namespace_of(tangent._data)
        tangent = Tensor._from_array(xp.empty_like(tensor._data, dtype=tangent._data.dtype)).copy_(tangent)
    set_tangent(tensor, tangent)


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal (a view) and the tangent (None without one)."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``tensor``'s primal, inside a level a view of it (``tensor`` itself outside), and its
    tangent as is (None when it has none)."""
    if level is None:
        level = forward_level.level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        got = type_name(tensor)
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not {got}")
    tangent = tangent_of(tensor)
    if tangent is not None and level != forward_level.level:
        raise RuntimeError("Invalid level given to _fw_primal")
    forward_level.propagating = False
    try:
        primal = apply(FW_PRIMAL, tensor)
    finally:
        forward_level.propagating = True
    return UnpackedDualTensor(primal, tangent)


class dual_level(contextlib.ContextDecorator):
    """Context manager (and decorator) entering a forward-AD level for its block."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()
