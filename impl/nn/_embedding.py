"""Embedding as ops: ``embedding`` (EmbeddingBackward0, a lookup of weight rows), its backward
``embedding_dense_backward`` (EmbeddingDenseBackwardBackward0, the rows of the gradient added
into zeros) with the double backward of FunctionsManual.cpp, and ``embedding_renorm_`` (max_norm).

The indices are an attribute of each op, not an input: torch's nodes have an edge for the weight
(or the incoming gradient) only.
"""

from __future__ import annotations

from typing import Any

from impl import _api as api
from impl import dtypes
from impl._names import type_name
from impl._ops.table import D, OpDef, apply, auto_linear
from impl._ops.views import _tensor_type
from impl._tensor import Tensor
from impl._xp import namespace_of


def _embedding_fwd(xp: Any, weight: Any, indices: Any, padding_idx: int, scale_grad_by_freq: bool) -> Any:
    """``weight[indices]``: one row per index, the result of shape ``indices.shape + (dim,)``."""
    return xp.take(weight, indices._data, axis=0)


def _embedding_backward_fwd(
    xp: Any, grad: Any, indices: Any, num_weights: int, padding_idx: int, scale_grad_by_freq: bool
) -> Any:
    """ATen's embedding_dense_backward_cpu: zeros of (num_weights, dim) and, index after index in
    order, the gradient row added to its weight row (``1 / count`` of the index times, with
    scale_grad_by_freq); rows at ``padding_idx`` get nothing."""
    flat = indices._data.reshape(-1)
    rows = grad.reshape(flat.shape[0], grad.shape[-1])
    keep = flat != padding_idx
    flat, rows = flat[keep], rows[keep]
    if scale_grad_by_freq and flat.size:
        counts = xp.zeros(num_weights, dtype=xp.int64)
        xp.add.at(counts, flat, 1)
        rows = rows * (1.0 / counts[flat]).astype(rows.dtype)[:, None]
    out = xp.zeros((num_weights, grad.shape[-1]), dtype=grad.dtype)
    xp.add.at(out, flat, rows)
    return out


def embedding_dense_double_backward(grad: Any, indices: Any, padding_idx: int) -> Any:
    """FunctionsManual's: the rows of ``grad`` at the indices (scaling by frequency is the first
    backward's), zeroed where an index is ``padding_idx``, viewed as ``indices.shape + (dim,)``."""
    flat = indices.reshape(-1)
    gg_weight = grad.index_select(0, flat)
    if padding_idx >= 0:
        gg_weight.masked_fill_((flat == padding_idx).unsqueeze(-1), 0)
    return gg_weight.view(*indices.shape, -1)


EMBEDDING_BACKWARD = OpDef(
    "EmbeddingDenseBackwardBackward0",
    _embedding_backward_fwd,
    ("grad_output",),
    {
        "grad_output": D(
            "indices padding_idx",
            lambda gg, c: embedding_dense_double_backward(gg, c.indices, c.padding_idx),
        )
    },
)


def embedding_backward(grad: Any, c: Any) -> Any:
    """derivatives.yaml's embedding_backward (dense): embedding_dense_backward of the gradient."""
    return apply(
        EMBEDDING_BACKWARD,
        grad,
        indices=c.indices,
        num_weights=c.shape("weight")[0],
        padding_idx=c.padding_idx,
        scale_grad_by_freq=c.scale_grad_by_freq,
    )


EMBEDDING = OpDef(
    "EmbeddingBackward0",
    _embedding_fwd,
    ("weight",),
    {"weight": D("indices padding_idx scale_grad_by_freq", embedding_backward)},
    jvp=auto_linear,  # embedding(weight_t, indices, ...)
)


def embedding_renorm_(weight: Any, indices: Any, max_norm: float, norm_type: float) -> None:
    """ATen's embedding_renorm_ (run under no_grad, one version bump): each distinct row the
    indices name whose ``norm_type``-norm (in the weight's dtype, float32 for the half types)
    exceeds ``max_norm`` is multiplied by ``max_norm / (norm + 1e-7)``."""
    data = weight._data
    xp = namespace_of(data)
    rows = xp.unique(indices._data.reshape(-1))  # sorted: torch walks them in this order
    n = data.shape[0]
    bad = rows[(rows < -n) | (rows >= n)]
    if bad.size and int(bad[0]) < -n:
        raise IndexError(_select_error(int(bad[0]), data.shape))
    rows = rows[rows < n] % n
    if rows.size and not weight.dtype.is_floating_point:
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. "
            f"Got {dtypes.scalar_type(weight.dtype)} instead."
        )
    compute = data.dtype if data.dtype.itemsize >= 4 else xp.float32
    selected = data[rows].astype(compute)
    a = xp.abs(selected)
    if norm_type == float("inf"):
        norms = a.max(axis=1)
    elif norm_type == 0:
        norms = (a != 0).sum(axis=1).astype(compute)
    else:
        norms = (a**norm_type).sum(axis=1) ** (1.0 / norm_type)
    norms = norms.astype(data.dtype).astype(xp.float64)
    over = norms > max_norm
    scale = (max_norm / (norms[over] + 1e-7)).astype(compute)
    data[rows[over]] = (selected[over] * scale[:, None]).astype(data.dtype)
    weight._vc.bump()
    if bad.size:
        raise IndexError(_select_error(int(bad[0]), data.shape))


def _select_error(index: int, shape: tuple) -> str:
    return f"select(): index {index} out of range for tensor of size [{shape[0]}, {shape[1]}] at dimension 0"


def _check_indices(indices: Tensor, position: int, function: str) -> None:
    """torch's checkScalarTypes: integer indices, int64 or int32."""
    if indices.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(
            f"Expected tensor for argument #{position} 'indices' to have one of the following scalar types: "
            f"Long, Int; but got {_tensor_type(indices)} instead (while checking arguments for "
            f"{function})"
        )


def _check_tensors(weight: Any, indices: Any) -> None:
    """torch's argument parser: both arguments tensors (weight first, indices second)."""
    for position, (name, value) in ((2, ("indices", indices)), (1, ("weight", weight))):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"embedding(): argument '{name}' (position {position}) must be Tensor, not {type_name(value)}"
            )


@api.function("embedding")
def embedding_op(
    weight: Tensor,
    indices: Tensor,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """``torch.embedding``: the rows of the 2-D ``weight`` at the int32/int64 ``indices`` (each
    in range), EmbeddingBackward0 skipping ``padding_idx`` (-1, or any index no lookup uses:
    none). ``sparse=True`` is refused: impl has no sparse tensors."""
    _check_tensors(weight, indices)
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_indices(indices, 1, "embedding")
    if sparse:
        raise NotImplementedError("embedding(sparse=True): impl has no sparse tensors")
    data = indices._data
    if data.size and bool(((data < 0) | (data >= weight.shape[0])).any()):
        raise IndexError("index out of range in self")
    return apply(
        EMBEDDING, weight, indices=indices, padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq
    )


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """F.embedding: ``padding_idx`` checked and counted from the end if negative, the rows the
    lookup names renormalised in place to ``max_norm`` if given (under no_grad), then
    ``torch.embedding``."""
    _check_tensors(weight, input)
    if padding_idx is not None:
        if not -weight.shape[0] <= padding_idx < weight.shape[0]:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx % weight.shape[0]
    else:
        padding_idx = -1
    if max_norm is not None:
        if weight.dim() != 2:
            raise RuntimeError(
                f"Expected 2-dimensional tensor, but got {weight.dim()}-dimensional tensor for argument #1 "
                "'self' (while checking arguments for embedding_renorm_)"
            )
        _check_indices(input, 2, "embedding_renorm_")
        embedding_renorm_(weight, input, max_norm, norm_type)
    return embedding_op(weight, input, padding_idx, scale_grad_by_freq, sparse)
