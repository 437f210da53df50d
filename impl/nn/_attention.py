"""scaled_dot_product_attention as torch's CPU runs it (ATen's attention.cpp, sdp_utils_cpp).

torch picks a kernel per call: the flash-attention CPU kernel
(``_scaled_dot_product_flash_attention_for_cpu``: one ScaledDotProductFlashAttentionForCpuBackward0
over query, key and value) when every input is 4-D with equal batch sizes, equal head counts (or a
key/value head count dividing the query's with ``enable_gqa``), equal head dims, non-empty
sequences, unit stride in the last dimension, no dropout, and a mask (if any) that does not require
grad and is 2-D or 4-D and broadcastable head by head; otherwise the math path, composed of ops:
``query * sqrt(scale)`` and ``key.transpose(-2, -1) * sqrt(scale)`` multiplied (matmul), the mask
(a bool mask as 0 / -inf, or the causal one) added in place, ``_safe_softmax``, dropout, matmul by
value. The flash kernel computes ``q @ k^T * scale`` (+ mask, causal entries -inf), then
``exp(s - max) @ v / sum``: its rounding differs from the math path's by a few ulps, within the
oracle's float tolerance; its backward recomputes the probabilities from the saved logsumexp and
has no derivative of its own (a NotImplemented node under create_graph).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from impl import _autocast, _creation, dtypes
from impl._layout import preserved_strides, strided_array
from impl._ops import products
from impl._ops.elementwise import _no_derivative, mul_scalar
from impl._ops.pointwise_ternary import where
from impl._ops.softmax import safe_softmax
from impl._ops.table import NOT_IMPLEMENTED, D, OpDef, apply
from impl._signatures import TYPE_META_NAMES, invalid_call
from impl._tensor import Tensor
from impl.nn._dropout import _dropout

_FLASH_DTYPES = (dtypes.float32, dtypes.float64, dtypes.float16, dtypes.bfloat16)


def _type_meta(t: Tensor) -> str:
    return TYPE_META_NAMES[t.dtype.name]


def _validate(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None) -> None:
    """validate_sdpa_input's checks: one dtype, at least 2-D, a bool or query-dtype mask."""
    if not query.dtype is key.dtype is value.dtype:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_type_meta(query)} key.dtype: {_type_meta(key)} and value.dtype: {_type_meta(value)} instead."
        )
    if min(query.dim(), key.dim(), value.dim()) < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
            f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead."
        )
    if attn_mask is not None and attn_mask.dtype not in (dtypes.bool_, query.dtype):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: "
            f"{_type_meta(attn_mask)} and  query.dtype: {_type_meta(query)} instead."
        )


def _mask_fits_flash(mask: Tensor, query: Tensor, key: Tensor) -> bool:
    """check_attn_mask_shape: no grad; last two sizes (L or 1, S or 1); 2-D, or 4-D with batch and
    heads each 1 or the query's."""
    if mask.requires_grad:
        return False
    if mask.size(-2) not in (query.shape[2], 1) or mask.shape[-1] not in (key.shape[2], 1):
        return False
    if mask.dim() == 2:
        return True
    return mask.dim() == 4 and mask.shape[0] in (1, query.shape[0]) and mask.shape[1] in (1, query.shape[1])


def _uses_flash(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout_p: float, gqa: bool) -> bool:
    """use_flash_attention_cpp's gates, in its order."""
    if dropout_p > 0.0 or not q.dim() == k.dim() == v.dim() == 4:
        return False
    if not q.shape[0] == k.shape[0] == v.shape[0]:
        return False
    heads_q, heads_k, heads_v = q.shape[1], k.shape[1], v.shape[1]
    if gqa:
        if heads_k != heads_v or heads_k == 0 or heads_q % heads_k:
            return False
    elif not heads_q == heads_k == heads_v:
        return False
    if mask is not None and not _mask_fits_flash(mask, q, k):
        return False
    if not q.shape[3] == k.shape[3] == v.shape[3]:
        return False
    if min(q.shape[2], k.shape[2], v.shape[2]) == 0:
        return False
    if any(t.stride(-1) != 1 for t in (q, k, v)):
        return False
    return q.dtype in _FLASH_DTYPES


def _scale(query_dim: int, scale: float | None) -> float:
    """sdp::calculate_scale: ``scale``, else 1 / sqrt(E)."""
    return float(scale) if scale is not None else 1.0 / math.sqrt(query_dim)


# -- the flash-attention CPU kernel ----------------------------------------------------------
def _accumulate(dt: Any) -> Any:
    return np.float64 if dt == np.float64 else np.float32


def _scores(xp: Any, q: Any, k: Any, is_causal: bool, mask: Any, scale: float | None) -> Any:
    """``q @ k^T`` in the accumulation dtype (key heads repeated for grouped-query attention), its
    causal entries -inf, times the scale (a negative scale makes them +inf and their rows nan, as in
    torch's kernel), plus the mask; under is_causal the keys past the last query are not scored at
    all (-inf)."""
    acc = _accumulate(q.dtype)
    if k.shape[1] != q.shape[1]:
        k = xp.repeat(k, q.shape[1] // k.shape[1], axis=1)
    s = xp.matmul(q.astype(acc), xp.swapaxes(k.astype(acc), -1, -2))
    if is_causal:
        s = xp.where(_causal(xp, *s.shape[-2:]), s, acc(-np.inf))
    with np.errstate(invalid="ignore"):
        s = s * acc(_scale(q.shape[-1], scale))
    if mask is not None:
        s = s + mask.astype(acc)
    if is_causal:
        s[..., q.shape[2]:] = -np.inf
    return s


def _causal(xp: Any, length: int, source: int) -> Any:
    """Which keys each query may attend to under is_causal: the lower triangle, from the top left."""
    return xp.tril(xp.ones((length, source), dtype=bool))


def _flash_fwd(
    xp: Any, q: Any, k: Any, v: Any, dropout_p: float, is_causal: bool, attn_mask: Any, scale: float | None
) -> tuple:
    """The kernel's output ``exp(s - max) @ v * (1 / sum)`` and logsumexp; a row that attends to
    nothing has output 0 and logsumexp 0. ``attn_mask`` is a float mask (a bool one converted by
    the caller, as torch's)."""
    s = _scores(xp, q, k, is_causal, None if attn_mask is None else attn_mask._data, scale)
    top = s.max(axis=-1, keepdims=True)
    empty = xp.isneginf(top)
    with np.errstate(invalid="ignore"):
        e = xp.where(empty, 0, xp.exp(s - top))
    total = e.sum(axis=-1, keepdims=True)
    total = xp.where(total == 0, 1, total)
    if v.shape[1] != q.shape[1]:
        v = xp.repeat(v, q.shape[1] // v.shape[1], axis=1)
    out = strided_array(xp, q.shape, preserved_strides(q.shape, _element_strides(q)), q.dtype)
    out[...] = xp.matmul(e, v.astype(e.dtype)) * (1 / total)  # laid out as the query (empty_like)
    lse = (xp.where(empty, 0, top) + xp.log(total))[..., 0]
    return out, lse.astype(e.dtype)


def _element_strides(a: Any) -> tuple:
    return tuple(s // a.itemsize for s in a.strides)


def _grouped(xp: Any, g: Any, heads: int) -> Any:
    """A gradient over the repeated key/value heads summed back onto each of ``heads``."""
    if g.shape[1] == heads:
        return g
    return g.reshape(g.shape[0], heads, g.shape[1] // heads, *g.shape[2:]).sum(axis=2)


def _flash_bwd(
    xp: Any, g: Any, q: Any, k: Any, v: Any, out: Any, logsumexp: Any, is_causal: bool, attn_mask: Any,
    scale: float | None,
) -> tuple:
    """_scaled_dot_product_flash_attention_for_cpu_backward: the probabilities recomputed from the
    logsumexp (causal entries then zeroed, keys past the last query skipped), then grad_query,
    grad_key (both scaled as gemm's alpha: a zero scale gives zeros) and grad_value."""
    acc = _accumulate(q.dtype)
    s = _scores(xp, q, k, is_causal, None if attn_mask is None else attn_mask._data, scale)
    with np.errstate(invalid="ignore"):
        p = xp.exp(s - logsumexp._data[..., None])
    heads = q.shape[1]
    kr = xp.repeat(k, heads // k.shape[1], axis=1).astype(acc)
    vr = xp.repeat(v, heads // v.shape[1], axis=1).astype(acc)
    g = g.astype(acc)
    if is_causal:
        p = xp.where(_causal(xp, *s.shape[-2:]), p, acc(0))
    dv = xp.matmul(xp.swapaxes(p, -1, -2), g)
    with np.errstate(invalid="ignore"):
        ds = p * (xp.matmul(g, xp.swapaxes(vr, -1, -2)) - (g * out.astype(acc)).sum(axis=-1, keepdims=True))
    if is_causal:
        ds[..., q.shape[2]:] = 0
    factor = acc(_scale(q.shape[-1], scale))
    if factor == 0:
        dq, dk = xp.zeros(q.shape, acc), xp.zeros(kr.shape, acc)
    else:
        dq = xp.matmul(ds, kr) * factor
        dk = xp.matmul(xp.swapaxes(ds, -1, -2), q.astype(acc)) * factor
    return (dq.astype(q.dtype), _grouped(xp, dk, k.shape[1]).astype(k.dtype),
            _grouped(xp, dv, v.shape[1]).astype(v.dtype))


_FLASH_INPUTS = ("query", "key", "value")
FLASH_BACKWARD = OpDef(
    "NotImplemented",
    _flash_bwd,
    ("grad_out", "query", "key", "value", "out"),
    {name: D("", _no_derivative("_scaled_dot_product_flash_attention_for_cpu_backward"))
     for name in ("grad_out", "query", "key", "value", "out")},
    outputs=("grad_query", "grad_key", "grad_value"),
    differentiable_outputs=3,
    qualified_name=NOT_IMPLEMENTED,
)


def _flash_grad(k: int) -> Any:
    def formula(g: Any, c: Any) -> Any:
        node = c._node
        cached = node.__dict__.get("_flash_grads")
        if cached is None or cached[0] is not g:
            grads = apply(FLASH_BACKWARD, g, c.query, c.key, c.value, c.output, logsumexp=c.logsumexp,
                          is_causal=c.is_causal, attn_mask=c.attn_mask, scale=c.scale)
            cached = (g, grads)
            node.__dict__["_flash_grads"] = cached
        return cached[1][k]

    return formula


_FLASH_USES = "attn_mask dropout_p is_causal key logsumexp output query scale value"
FLASH = OpDef(
    "ScaledDotProductFlashAttentionForCpuBackward0",
    _flash_fwd,
    _FLASH_INPUTS,
    {name: D(_FLASH_USES, _flash_grad(k)) for k, name in enumerate(_FLASH_INPUTS)},
    outputs=("output", "logsumexp"),
)


# -- the math path ---------------------------------------------------------------------------
def _float_mask(mask: Tensor, dtype: Any) -> Tensor:
    """convert_boolean_attn_mask: a bool mask as 0 where True, -inf where False, in ``dtype``."""
    if mask.dtype is not dtypes.bool_:
        return mask
    fill = _creation.full((), -math.inf, dtype=dtype)
    return where(mask.logical_not(), fill, _creation.zeros((), dtype=dtype))


def _math(
    query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None, dropout_p: float, is_causal: bool,
    scale: float | None, enable_gqa: bool,
) -> Tensor:
    """_scaled_dot_product_attention_math."""
    if enable_gqa:
        heads_q, heads_k, heads_v = query.size(-3), key.size(-3), value.size(-3)
        if heads_q % heads_k or heads_q % heads_v:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
        if heads_k != heads_q:
            key = key.repeat_interleave(heads_q // heads_k, -3)
        if heads_v != heads_q:
            value = value.repeat_interleave(heads_q // heads_v, -3)
    negative = scale is not None and scale < 0
    factor = math.sqrt(_scale(query.shape[-1], abs(scale) if negative else scale))
    q = mul_scalar(query, 0.0 - factor if negative else factor)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"
            )
        attn_mask = _creation.tensor(_causal(np, q.shape[-2], key.shape[-2]))
    attn = products.matmul(q, mul_scalar(key.transpose(-2, -1), factor))
    if attn_mask is not None:
        attn.add_(_float_mask(attn_mask, query.dtype))
    attn = safe_softmax(attn, -1)
    if dropout_p > 0.0:
        attn = _dropout(attn, dropout_p, True, False, False, False)
    return products.matmul(attn, value)


@_autocast.policy("lower")
def scaled_dot_product_attention(
    query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None, dropout_p: float = 0.0,
    is_causal: bool = False, scale: float | None = None, enable_gqa: bool = False,
) -> Tensor:
    """torch.nn.functional.scaled_dot_product_attention on CPU: the flash kernel or the math path."""
    tensors = all(isinstance(t, Tensor) for t in (query, key, value))
    if not (tensors and (attn_mask is None or isinstance(attn_mask, Tensor))):
        raise invalid_call(scaled_dot_product_attention, locals())
    _validate(query, key, value, attn_mask)
    if min(query.numel(), key.numel(), value.numel()) == 0:  # zeros, linked to every input's graph
        zeros = _creation.zeros((*query.shape[:-1], value.shape[-1]), dtype=query.dtype)
        return zeros + mul_scalar(query.sum() + key.sum() + value.sum(), 0)
    if _uses_flash(query, key, value, attn_mask, dropout_p, enable_gqa):
        if dropout_p != 0.0:
            raise RuntimeError(
                "scaled_dot_product_attention_flash_attention: Currently do not support dropout > 0"
            )
        mask = None if attn_mask is None else _float_mask(attn_mask, query.dtype)
        output, _ = apply(FLASH, query, key, value, dropout_p=dropout_p, is_causal=is_causal, attn_mask=mask,
                          scale=scale)
        return output
    return _math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
