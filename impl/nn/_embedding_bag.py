"""F.embedding_bag as one op (EmbeddingBagBackward0): torch's CPU kernel, bag by bag, sums (or the
maxima) of weight rows at the bag's indices in index order in the weight's dtype, ``padding_idx``
skipped and not counted, a mean divided by the bag's count, empty bags zero; the gradients of the
weight (rows added back index by index) and of ``per_sample_weights`` (mode 'sum')."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from impl import _creation, dtypes
from impl import _grad_mode as grad_mode
from impl._ops.table import D, OpDef, apply
from impl._tensor import Tensor
from impl.nn._embedding import embedding_renorm_

MODES = {"sum": 0, "mean": 1, "max": 2}


def _bags(indices: Any, offsets: Any, include_last_offset: bool) -> list[tuple[int, int]]:
    """(start, end) of each bag in the flat indices."""
    starts = [int(o) for o in offsets]
    ends = [*starts[1:], len(indices)]
    if include_last_offset:
        starts, ends = starts[:-1], ends[:-1]
    return list(zip(starts, ends, strict=True))


def _fma(a: Any, b: Any, c: Any) -> Any:
    """``a * b + c`` rounded once to the dtype (the fused multiply-add of torch's kernels): the
    float32 product is exact in float64."""
    return (a.astype(np.float64) * np.float64(b) + c).astype(a.dtype)


def _lookup(
    weight: Any, indices: Any, offsets: Any, psw: Any, mode: int, padding_idx: int, include_last_offset: bool
) -> tuple[Any, Any]:
    """The bags' rows: output (bags, dim) and, for 'max', the index behind each maximum (-1: none)."""
    dt = weight.dtype.type
    bags = _bags(indices, offsets, include_last_offset)
    fused = padding_idx < 0 and weight.dtype == np.float32  # fbgemm's kernel: float, no padding_idx
    out = np.zeros((len(bags), weight.shape[1]), dtype=weight.dtype)
    arg = np.full(out.shape, -1, dtype=np.int64)
    for b, (start, end) in enumerate(bags):
        count = 0
        for i in range(start, end):
            idx = int(indices[i])
            if idx == padding_idx:
                continue
            row = weight[idx]
            if mode == 2:
                better = (row > out[b]) | (count == 0)
                out[b] = np.where(better, row, out[b])
                arg[b] = np.where(better, idx, arg[b])
            elif psw is None:
                out[b] = out[b] + row
            elif fused:
                out[b] = _fma(row, psw[i], out[b])
            else:
                out[b] = out[b] + row * psw[i]
            count += 1
        if mode == 1 and count:
            out[b] = out[b] / dt(count)
    return out, arg


def _embedding_bag_fwd(
    xp: Any, weight: Any, psw: Any, indices: Any, offsets: Any, weighted: bool, mode: int, padding_idx: int,
    include_last_offset: bool,
) -> Any:
    p = psw if weighted else None
    return _lookup(weight, indices._data, offsets._data, p, mode, padding_idx, include_last_offset)[0]


def _weight_grad(g: Any, c: Any) -> Any:
    """The rows of the incoming gradient added back to the weight rows, index by index in order
    (divided by the bag's count for 'mean', times the sample weight; for 'max' at the maxima)."""
    grad = g._data
    weight = c.weight._data
    indices, offsets = c.indices._data, c.offsets._data
    psw = c.per_sample_weights._data if c.weighted else None
    out = np.zeros(weight.shape, dtype=grad.dtype)
    dt = grad.dtype.type
    bags = _bags(indices, offsets, c.include_last_offset)
    if c.mode == 2:
        arg = _lookup(weight, indices, offsets, None, 2, c.padding_idx, c.include_last_offset)[1]
        for b in range(len(bags)):
            for d in range(weight.shape[1]):
                if arg[b, d] >= 0:
                    out[arg[b, d], d] += grad[b, d]
        return Tensor._from_array(out)
    for b, (start, end) in enumerate(bags):
        kept = [i for i in range(start, end) if int(indices[i]) != c.padding_idx]
        row = grad[b] * dt(1.0 / len(kept)) if c.mode == 1 and kept else grad[b]
        for i in kept:
            idx = int(indices[i])
            out[idx] = out[idx] + row if psw is None else _fma(row, psw[i], out[idx])
    return Tensor._from_array(out)


def _dot(a: Any, b: Any) -> Any:
    """The dot product summed in order in the dtype."""
    total = a.dtype.type(0)
    for x, y in zip(a, b, strict=True):
        total = total + x * y
    return total


def _psw_grad(g: Any, c: Any) -> Any:
    """Each sample's ``dot(grad of its bag, its weight row)`` (0 at padding_idx)."""
    grad, weight, indices = g._data, c.weight._data, c.indices._data
    out = np.zeros(indices.shape, dtype=grad.dtype)
    for b, (start, end) in enumerate(_bags(indices, c.offsets._data, c.include_last_offset)):
        for i in range(start, end):
            if int(indices[i]) != c.padding_idx:
                out[i] = _dot(grad[b], weight[int(indices[i])])
    return Tensor._from_array(out)


_USES = "weight indices offsets per_sample_weights weighted mode padding_idx include_last_offset"
EMBEDDING_BAG = OpDef(
    "EmbeddingBagBackward0",
    _embedding_bag_fwd,
    ("weight", "per_sample_weights"),
    {"weight": D(_USES, _weight_grad), "per_sample_weights": D(_USES, _psw_grad)},
)
"""The indices and offsets are attributes: torch's node has edges for weight and per_sample_weights
(an empty placeholder, ``weighted`` False, where none is given: an edge to nothing)."""


def _checked_offsets(input: Tensor, offsets: Tensor | None, include_last_offset: bool) -> tuple:
    """torch's Python checks of ``input`` and ``offsets``: a 2-D input is bags of its rows."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
                f"length sequences. However, found offsets of type {type(offsets)}".replace("impl.", "torch.")
            )
        step = max(input.size(1), 1)
        offsets = _creation.arange(0, input.numel(), step, dtype=input.dtype)
        return input.reshape(-1), offsets, False
    if input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        return input, offsets, include_last_offset
    raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """Sums, means or maxima of bags of embeddings (EmbeddingBagBackward0): bags given by
    ``offsets`` into a 1-D ``input``, or the rows of a 2-D one."""
    if weight.dtype is dtypes.int64 and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, "
            "...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it must "
            f"have the same shape as the input ({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    flat, offsets, include_last_offset = _checked_offsets(input, offsets, include_last_offset)
    if per_sample_weights is not None and input.dim() == 2:
        per_sample_weights = per_sample_weights.reshape(-1)
    if mode not in MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if sparse and mode == "max":
        raise ValueError("max mode does not support sparse weights")
    if sparse:
        raise NotImplementedError("embedding_bag(sparse=True): impl has no sparse tensors")
    if scale_grad_by_freq:  # torch's per-occurrence divisors follow its sorted backward: not modelled
        raise NotImplementedError("embedding_bag(scale_grad_by_freq=True) is not supported by impl")
    if max_norm is not None:
        with grad_mode.no_grad():
            embedding_renorm_(weight, flat, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for "
            f"mode='sum' (got mode='{mode}'). Please open a feature request on GitHub."
        )
    rows = weight.shape[0]
    data = flat._data
    if data.size and bool(((data < 0) | (data >= rows)).any()):
        at = int(np.flatnonzero((data < 0) | (data >= rows))[0])
        value = int(data[at])
        raise RuntimeError(
            f"Index {at} of input takes value {value} which is not in the valid range [0, {rows})"
        )
    pad = -1 if padding_idx is None else padding_idx + rows if padding_idx < 0 else padding_idx
    options = {"mode": MODES[mode], "padding_idx": pad, "include_last_offset": include_last_offset}
    weighted = per_sample_weights is not None
    psw = per_sample_weights if weighted else _creation.zeros(0, dtype=weight.dtype)
    return apply(EMBEDDING_BAG, weight, psw, indices=flat, offsets=offsets, weighted=weighted, **options)
