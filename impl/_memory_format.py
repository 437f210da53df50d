"""torch.memory_format: the four formats (``torch.contiguous_format``, ``channels_last``,
``channels_last_3d``, ``preserve_format``), the strides each gives a shape, torch's contiguity
test for each, and its suggest_memory_format (c10/core/MemoryFormat.h, TensorImpl)."""

from __future__ import annotations

from typing import Any

from impl import _api

# the dimensions innermost first of each format's layout, by rank
_ORDERS = {"channels_last": (4, (1, 3, 2, 0)), "channels_last_3d": (5, (1, 4, 3, 2, 0))}


class memory_format:
    """A memory format, printed as its name in torch (``torch.channels_last``)."""

    __module__ = "torch"
    __slots__ = ("name",)

    def __new__(cls, *args: Any, **kwargs: Any) -> memory_format:
        raise TypeError("cannot create 'torch.memory_format' instances")

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickled and copied as the module attribute: the same object

    @classmethod
    def _make(cls, name: str) -> memory_format:
        self = object.__new__(cls)
        object.__setattr__(self, "name", name)
        return self


contiguous_format = memory_format._make("contiguous_format")
channels_last = memory_format._make("channels_last")
channels_last_3d = memory_format._make("channels_last_3d")
preserve_format = memory_format._make("preserve_format")
for _f in (contiguous_format, channels_last, channels_last_3d, preserve_format):
    _api.public(_f, _f.name)
_api.public(memory_format, "memory_format")


def check(value: Any, fn: str) -> Any:
    """``value`` if it is a memory format (None reads as ``default``), else torch's parser TypeError."""
    if value is not None and not isinstance(value, memory_format):
        kind = type(value).__name__
        raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not {kind}")
    return value


def _order(fmt: memory_format, ndim: int) -> tuple[int, ...]:
    """The dimensions innermost first of ``fmt`` at rank ``ndim`` (torch's rank error otherwise)."""
    if fmt.name not in _ORDERS:
        return tuple(range(ndim - 1, -1, -1))
    rank, order = _ORDERS[fmt.name]
    if ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")
    return order


def strides(fmt: memory_format, shape: tuple) -> tuple[int, ...]:
    """The strides of a new tensor of ``shape`` in ``fmt`` (not preserve_format): each dimension's
    the product of the sizes inside it, zeros counted as torch counts them."""
    out, step = [0] * len(shape), 1
    for d in _order(fmt, len(shape)):
        out[d] = step
        step *= shape[d] if fmt.name != "contiguous_format" else max(shape[d], 1)
    return tuple(out)


def is_contiguous(fmt: memory_format, shape: tuple, st: tuple) -> bool:
    """torch's ``is_contiguous(memory_format=fmt)``: channels_last(_3d) at another rank is False,
    preserve_format tests the default (C) order."""
    if fmt.name in _ORDERS:
        if len(shape) != _ORDERS[fmt.name][0]:
            return False
        order = _ORDERS[fmt.name][1]
    else:
        if 0 in shape:
            return True
        order = tuple(range(len(shape) - 1, -1, -1))
    return dense_in(shape, st, order)


def dense_in(shape: tuple, st: tuple, order: tuple) -> bool:
    """Whether the strides step densely through the dimensions taken innermost first in ``order``
    (size-1 dimensions have any stride): torch's contiguity test of one order."""
    expected = 1
    for d in order:
        if shape[d] != 1:
            if st[d] != expected:
                return False
            expected *= shape[d]
    return True


def suggested(shape: tuple, st: tuple) -> memory_format:
    """torch's suggest_memory_format: channels_last(_3d) where the strides look like it (its
    is_channels_last_strides_2d/3d, ambiguous cases falling back to contiguous), else contiguous."""
    name = {4: "channels_last", 5: "channels_last_3d"}.get(len(shape))
    if name is None or st[1] == 0:
        return contiguous_format
    low = 0
    for d in _ORDERS[name][1]:
        if shape[d] == 0 or st[d] < low or (d == 0 and low == st[1]):
            return contiguous_format
        low = st[d] * (shape[d] if shape[d] > 1 else 1)
    return channels_last if name == "channels_last" else channels_last_3d
