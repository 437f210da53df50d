"""MultiheadAttention: torch's module over F.multi_head_attention_forward, its parameters made,
named and initialised in torch's order on the random stream (out_proj's Linear init first, then
xavier_uniform_ of the input projections, zero biases, xavier_normal_ of bias_k and bias_v)."""

from __future__ import annotations

from typing import Any

from impl import _creation
from impl._tensor import Tensor
from impl.nn import _multihead, init
from impl.nn.modules.linear import NonDynamicallyQuantizableLinear
from impl.nn.modules.module import Module
from impl.nn.parameter import Parameter


class MultiheadAttention(Module):
    """Multi-head attention (``batch_first`` or sequence-first inputs; kdim/vdim give separate
    projection weights)."""

    __constants__ = ["batch_first"]

    def __init__(
        self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
        add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
        vdim: int | None = None, batch_first: bool = False, device: Any = None, dtype: Any = None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                f"num_heads={num_heads} instead"
            )
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_creation.empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(_creation.empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(_creation.empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_creation.empty((3 * embed_dim, embed_dim), **factory))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        if bias:
            self.in_proj_bias = Parameter(_creation.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = Parameter(_creation.empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(_creation.empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
        need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple:
        batched = query.dim() == 3
        key_padding_mask = _multihead.canonical_mask(
            key_padding_mask, "key_padding_mask", None if attn_mask is None else attn_mask.dtype, "attn_mask",
            query.dtype,
        )
        attn_mask = _multihead.canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if self.batch_first and batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = {} if self._qkv_same_embed_dim else {
            "use_separate_proj_weight": True, "q_proj_weight": self.q_proj_weight,
            "k_proj_weight": self.k_proj_weight, "v_proj_weight": self.v_proj_weight,
        }
        out, weights = _multihead.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight,
            self.out_proj.bias, training=self.training, key_padding_mask=key_padding_mask,
            need_weights=need_weights, attn_mask=attn_mask, average_attn_weights=average_attn_weights,
            is_causal=is_causal, **separate,
        )
        if self.batch_first and batched:
            return out.transpose(1, 0), weights
        return out, weights
