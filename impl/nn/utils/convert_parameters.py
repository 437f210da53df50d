"""torch.nn.utils.convert_parameters: parameters as one flat vector, and back."""

from __future__ import annotations

from typing import Any

from impl._names import type_name
from impl._ops.indexing import cat
from impl._tensor import Tensor


def _check_device(param: Tensor, old: Any) -> Any:
    """torch's _check_param_device: every parameter on the first one's device."""
    device = str(param.device)
    if old is not None and device != old:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return device


def parameters_to_vector(parameters: Any) -> Tensor:
    """The parameters flattened (views) and concatenated: one CatBackward0 vector."""
    device, flat = None, []
    for param in parameters:
        device = _check_device(param, device)
        flat.append(param.view(-1))
    return cat(flat)


def vector_to_parameters(vec: Tensor, parameters: Any) -> None:
    """Each parameter's ``.data`` set to its slice of ``vec`` (a view of it)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type_name(vec)}")
    device, pointer = None, 0
    for param in parameters:
        device = _check_device(param, device)
        n = param.numel()
        param.data = vec[pointer : pointer + n].view_as(param).data
        pointer += n
