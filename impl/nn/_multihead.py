"""F.multi_head_attention_forward: torch's Python function, the same checks, warnings and ops in
the same order (so values, graphs and the random stream of its dropout are torch's): masks made
float (-inf where a bool mask is True), the packed or separate input projections, bias_k/bias_v and
a zero key appended, heads split as ``view(len, batch * heads, head_dim).transpose(0, 1)``; with
need_weights the weights by baddbmm/bmm, softmax and dropout (averaged over heads by default), else
scaled_dot_product_attention on the heads; the output projection last.

It is declared here, above functional (it calls F.linear, F.pad ...), and set on the functional
module at import, as torch's ``torch.nn.functional.multi_head_attention_forward``."""

from __future__ import annotations

import math
import warnings
from typing import Any

from impl import _creation, dtypes
from impl._ops import products
from impl._ops.indexing import cat
from impl._tensor import Tensor
from impl.nn import _attention
from impl.nn import functional as F


def _shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Any, attn_mask: Any,
                 num_heads: int) -> bool:
    """_mha_shape_check: whether the inputs are batched (3-D query), or torch's AssertionError."""
    if query.dim() not in (2, 3):
        raise AssertionError(
            f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query tensor"
        )
    batched = query.dim() == 3
    form = "batched (3-D)" if batched else "unbatched (2-D)"
    n = 3 if batched else 2
    if key.dim() != n or value.dim() != n:
        raise AssertionError(
            f"For {form} `query`, expected `key` and `value` to be {n}-D"
            f" but found {key.dim()}-D and {value.dim()}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != n - 1:
        raise AssertionError(
            f"For {form} `query`, expected `key_padding_mask` to be `None` or {n - 1}-D"
            f" but found {key_padding_mask.dim()}-D tensor instead"
        )
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(
                f"For {form} `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                f" but found {attn_mask.dim()}-D tensor instead"
            )
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return batched


def canonical_mask(mask: Any, name: str, other_type: Any, other_name: str, target_type: Any,
                   check_other: bool = True) -> Any:
    """_canonical_mask: a bool mask as a float one of ``target_type`` (-inf where True); another
    dtype than the other mask's warns (deprecated)."""
    if mask is None:
        return None
    floating = mask.dtype.is_floating_point
    if mask.dtype is not dtypes.bool_ and not floating:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(
            f"Support for mismatched {name} and {other_name} is deprecated. Use same type for both instead.",
            stacklevel=3,
        )
    if floating:
        return mask
    return _creation.zeros_like(mask, dtype=target_type).masked_fill_(mask, -math.inf)


def _dtype_of(mask: Any) -> Any:
    return None if mask is None else mask.dtype


def _packed_projection(q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Any) -> tuple:
    """_in_projection_packed: one linear for self-attention, one for query and one for key/value
    when key is value, else three (the weight chunked)."""
    e = q.size(-1)
    if k is v:
        if q is k:
            proj = F.linear(q, w, b)
            proj = proj.unflatten(-1, (3, e)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        q_proj = F.linear(q, w_q, b_q)
        kv = F.linear(k, w_kv, b_kv)
        kv = kv.unflatten(-1, (2, e)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return q_proj, kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


def _separate_projection(q: Tensor, k: Tensor, v: Tensor, weights: tuple, biases: tuple) -> tuple:
    """_in_projection: each input by its own weight, shapes checked."""
    eq = q.size(-1)
    shapes = ((eq, eq), (eq, k.size(-1)), (eq, v.size(-1)))
    for name, w, shape in zip(("query", "key", "value"), weights, shapes, strict=True):
        if tuple(w.shape) != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got {w.shape}")
    for name, b in zip(("query", "key", "value"), biases, strict=True):
        if b is not None and tuple(b.shape) != (eq,):
            raise AssertionError(f"expecting {name} bias shape of {(eq,)}, but got {b.shape}")
    return tuple(F.linear(x, w, b) for x, w, b in zip((q, k, v), weights, biases, strict=True))


def _check_attn_mask(attn_mask: Tensor, tgt_len: int, src_len: int, heads: int) -> Tensor:
    """A 2-D mask must be (L, S) (then unsqueezed), a 3-D one (batch * heads, L, S)."""
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(
                f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {(tgt_len, src_len)}."
            )
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (heads, tgt_len, src_len):
            correct = (heads, tgt_len, src_len)
            raise RuntimeError(
                f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be {correct}."
            )
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _pad(mask: Any) -> Any:
    return None if mask is None else F.pad(mask, (0, 1))


def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Any, in_proj_bias: Any, bias_k: Any, bias_v: Any, add_zero_attn: bool, dropout_p: float,
    out_proj_weight: Tensor, out_proj_bias: Any, training: bool = True, key_padding_mask: Any = None,
    need_weights: bool = True, attn_mask: Any = None, use_separate_proj_weight: bool = False,
    q_proj_weight: Any = None, k_proj_weight: Any = None, v_proj_weight: Any = None, static_k: Any = None,
    static_v: Any = None, average_attn_weights: bool = True, is_causal: bool = False,
) -> tuple:
    """torch.nn.functional.multi_head_attention_forward (sequence-first inputs)."""
    batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask", _dtype_of(attn_mask), "attn_mask",
                                      query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
            "`generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint: scaled_dot_product_attention's own causal mask
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}"
            )
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _packed_projection(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        biases = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        weights = (q_proj_weight, k_proj_weight, v_proj_weight)
        q, k, v = _separate_projection(query, key, value, weights, biases)
    if attn_mask is not None:
        attn_mask = _check_attn_mask(attn_mask, tgt_len, src_len, bsz * num_heads)
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = _pad(attn_mask), _pad(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None else
                             "bias_v is set but bias_k is None")
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, bsz, num_heads, head_dim, "k")
    v = _heads(v, static_v, bsz, num_heads, head_dim, "v")
    if add_zero_attn:
        zeros = (bsz * num_heads, 1, head_dim)
        k = cat([k, _creation.zeros(zeros, dtype=k.dtype, device=k.device)], 1)
        v = cat([v, _creation.zeros(zeros, dtype=v.dtype, device=v.device)], 1)
        attn_mask, key_padding_mask = _pad(attn_mask), _pad(key_padding_mask)
    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(
                f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}"
            )
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(
                f"Expected key_padded_mask.shape[1] to be {src_len}, but got {key_padding_mask.shape[1]}"
            )
        key_padding_mask = (key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        return _with_weights(q, k, v, attn_mask, dropout_p, is_causal, out_proj_weight, out_proj_bias,
                             (tgt_len, bsz, embed_dim, num_heads, src_len), average_attn_weights, batched)
    if attn_mask is not None:
        attn_mask = (attn_mask.unsqueeze(0) if attn_mask.size(0) == 1 and attn_mask.dim() == 3
                     else attn_mask.view(bsz, num_heads, -1, src_len))
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = _attention.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    return (out if batched else out.squeeze(1)), None


def _heads(t: Tensor, static: Any, bsz: int, num_heads: int, head_dim: int, name: str) -> Tensor:
    """Key or value split into heads, or the static one given in its place (its shape checked)."""
    if static is None:
        return t.view(t.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if static.size(0) != bsz * num_heads:
        raise AssertionError(
            f"expecting static_{name}.size(0) of {bsz * num_heads}, but got {static.size(0)}"
        )
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got {static.size(2)}")
    return static


def _with_weights(
    q: Tensor, k: Tensor, v: Tensor, attn_mask: Any, dropout_p: float, is_causal: bool, out_w: Tensor,
    out_b: Any, sizes: tuple, average: bool, batched: bool,
) -> tuple:
    """need_weights: the attention weights computed explicitly (baddbmm with the mask, else bmm;
    softmax; dropout), returned with the output (averaged over the heads unless asked not to)."""
    tgt_len, bsz, embed_dim, num_heads, src_len = sizes
    q_scaled = q * math.sqrt(1.0 / float(q.shape[2]))
    if is_causal and attn_mask is None:
        raise AssertionError("FIXME: is_causal not implemented for need_weights")
    if attn_mask is not None:
        weights = products.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
    else:
        weights = products.bmm(q_scaled, k.transpose(-2, -1))
    weights = F.softmax(weights, dim=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    out = products.bmm(weights, v)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = F.linear(out, out_w, out_b)
    out = out.view(tgt_len, bsz, out.size(1))
    weights = weights.view(bsz, num_heads, tgt_len, src_len)
    if average:
        weights = weights.mean(dim=1)
    if not batched:
        out, weights = out.squeeze(1), weights.squeeze(0)
    return out, weights


F.multi_head_attention_forward = multi_head_attention_forward  # torch's name in nn.functional
F.__all__.append("multi_head_attention_forward")
