"""Arithmetic on shapes and flat indices, as torch's Python functions do it: ``broadcast_shapes``
(a ``Size``) and ``unravel_index`` (a tuple of int64 coordinate tensors)."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import Any

from impl import _api as api
from impl import dtypes
from impl._creation import tensor
from impl._size import Size
from impl._tensor import Tensor


@api.function("broadcast_shapes")
def broadcast_shapes(*shapes: Any) -> Size:
    """The shape that tensors of ``shapes`` (ints, sequences of ints or None) broadcast to."""
    given = tuple((s,) if isinstance(s, int) else s for s in shapes if s is not None)
    if not given:
        return Size([])
    for shape in given:
        if not isinstance(shape, Sequence):
            raise RuntimeError(
                f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}"
            )
    common = [1] * max(len(shape) for shape in given)
    for arg_idx, shape in enumerate(given):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
            if shape[idx] != 1 and common[idx] != shape[idx]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! Mismatching "
                    f"argument at index {arg_idx} had {shape}; but expected shape should be "
                    f"broadcastable to {common}"
                )
    return Size(common)


@api.function("unravel_index")
def unravel_index(indices: Tensor, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates in a tensor of ``shape`` of the flat ``indices``: one int64 tensor per dim."""
    if indices.dtype.is_complex or indices.dtype.is_floating_point or indices.dtype == dtypes.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, int):
        shape = (shape,)
    elif isinstance(shape, Sequence):
        for dim in shape:
            if not isinstance(dim, int):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(dim)}")
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    shape = tuple(shape)
    if any(dim < 0 for dim in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    coefs = list(reversed(list(itertools.accumulate(reversed((*shape[1:], 1)), func=operator.mul))))
    flat = indices.unsqueeze(-1).floor_divide(tensor(coefs, device=indices.device, dtype=dtypes.int64))
    return (flat % tensor(list(shape), device=indices.device, dtype=dtypes.int64)).unbind(-1)
