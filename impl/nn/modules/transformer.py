"""Transformer, TransformerEncoder/Decoder and their layers as torch's modules compose them
(post- or pre-norm residual blocks over MultiheadAttention, Linear, Dropout and LayerNorm; layers
deep-copied; Transformer's xavier_uniform_ of every matrix), with torch's enable_nested_tensor
warning and causal-mask detection. Torch's eval/no_grad fast paths compute the same values (within
float32 tolerance) except TransformerEncoder's nested tensors, whose padded positions come out as
zeros: that is modelled (``_nested_rows``)."""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable
from typing import Any

from impl import _creation
from impl import _grad_mode as grad_mode
from impl._ops import shapes
from impl._tensor import Tensor
from impl._warn import warn_once
from impl.nn import _multihead
from impl.nn import functional as F
from impl.nn.init import xavier_uniform_
from impl.nn.modules.activation import ReLU
from impl.nn.modules.activation_more import GELU
from impl.nn.modules.attention import MultiheadAttention
from impl.nn.modules.container import ModuleList
from impl.nn.modules.dropout import Dropout
from impl.nn.modules.linear import Linear
from impl.nn.modules.module import Module
from impl.nn.modules.normalization import LayerNorm

NESTED_PROTOTYPE = (
    "The PyTorch API of nested tensors is in prototype stage and will change in the near future. We "
    "recommend specifying layout=torch.jagged when constructing a nested tensor, as this layout receives "
    "active development, has better operator coverage, and works with torch.compile."
)


def _square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
    """-inf above the diagonal, 0 elsewhere."""
    return shapes.triu(_creation.full((sz, sz), -math.inf, dtype=dtype, device=device), diagonal=1)


def _seq_len(src: Tensor, batch_first: bool) -> int:
    return src.shape[0] if src.dim() == 2 else src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask: Any, is_causal: bool | None = None, size: int | None = None) -> bool:
    """is_causal, or (when None) whether ``mask`` is the square subsequent mask."""
    if is_causal is None and mask is not None:
        causal = _square_subsequent_mask(size if size is not None else mask.size(-2), mask.device, mask.dtype)
        return tuple(mask.shape) == tuple(causal.shape) and bool((mask == causal).all())
    return is_causal is True


def _activation_fn(activation: str) -> Callable:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


class _Layer(Module):
    """What the encoder and decoder layers share: the feed-forward block and its parts."""

    def _parts(
        self,
        d_model: int,
        dim_feedforward: int,
        dropout: float,
        eps: float,
        bias: bool,
        norms: int,
        factory: dict,
    ) -> None:
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        for k in range(1, norms + 1):
            setattr(self, f"norm{k}", LayerNorm(d_model, eps=eps, bias=bias, **factory))
        for k in range(1, norms + 1):
            setattr(self, f"dropout{k}", Dropout(dropout))

    def _ff_block(self, x: Tensor, last: Module) -> Tensor:
        return last(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoderLayer(_Layer):
    """Self-attention and feed-forward blocks, each a residual with LayerNorm after (or, with
    norm_first, before) it."""

    __constants__ = ["norm_first"]

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **factory
        )
        self._parts(d_model, dim_feedforward, dropout, layer_norm_eps, bias, 2, factory)
        self.norm_first = norm_first
        if isinstance(activation, str):
            activation = _activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(
        self, src: Tensor, src_mask: Any = None, src_key_padding_mask: Any = None, is_causal: bool = False
    ) -> Tensor:
        src_key_padding_mask = _multihead.canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            None if src_mask is None else src_mask.dtype,
            "src_mask",
            src.dtype,
        )
        src_mask = _multihead.canonical_mask(src_mask, "src_mask", None, "", src.dtype, False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x), self.dropout2)
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x, self.dropout2))

    def _sa_block(self, x: Tensor, attn_mask: Any, key_padding_mask: Any, is_causal: bool = False) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)


class TransformerDecoderLayer(_Layer):
    """Self-attention, attention over the memory and feed-forward blocks, each a residual with
    LayerNorm after (or, with norm_first, before) it."""

    __constants__ = ["norm_first"]

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **factory
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **factory
        )
        self._parts(d_model, dim_feedforward, dropout, layer_norm_eps, bias, 3, factory)
        self.norm_first = norm_first
        self.activation = _activation_fn(activation) if isinstance(activation, str) else activation

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Any = None,
        memory_mask: Any = None,
        tgt_key_padding_mask: Any = None,
        memory_key_padding_mask: Any = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            return x + self._ff_block(self.norm3(x), self.dropout3)
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
        return self.norm3(x + self._ff_block(x, self.dropout3))

    def _sa_block(self, x: Tensor, attn_mask: Any, key_padding_mask: Any, is_causal: bool = False) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout1(x)

    def _mha_block(
        self, x: Tensor, mem: Tensor, attn_mask: Any, key_padding_mask: Any, is_causal: bool = False
    ) -> Tensor:
        x = self.multihead_attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout2(x)


def _why_no_nested_tensor(layer: Any) -> str:
    """TransformerEncoder's reasons (in torch's order) its layers cannot take nested tensors."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    checks = (
        (layer.norm_first, f"{name}.norm_first was True"),
        (
            not attn.batch_first,
            f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)",
        ),
        (not attn._qkv_same_embed_dim, f"{name}.self_attn._qkv_same_embed_dim was not True"),
        (attn.in_proj_bias is None, f"{name}.self_attn was passed bias=False"),
        (not layer.activation_relu_or_gelu, f"{name}.activation_relu_or_gelu was not True"),
        (layer.norm1.eps != layer.norm2.eps, f"{name}.norm1.eps was not equal to {name}.norm2.eps"),
        (attn.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd"),
    )
    return next((reason for failed, reason in checks if failed), "")


class TransformerEncoder(Module):
    """``num_layers`` copies of an encoder layer, then ``norm`` if given."""

    __constants__ = ["norm"]

    def __init__(
        self,
        encoder_layer: Module,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why:
            warnings.warn(
                f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why}",
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def forward(
        self, src: Tensor, mask: Any = None, src_key_padding_mask: Any = None, is_causal: bool | None = None
    ) -> Tensor:
        src_key_padding_mask = _multihead.canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            None if mask is None else mask.dtype,
            "mask",
            src.dtype,
        )
        mask = _multihead.canonical_mask(mask, "mask", None, "", src.dtype, False)
        is_causal = _detect_is_causal_mask(
            mask, is_causal, _seq_len(src, self.layers[0].self_attn.batch_first)
        )
        kept = self._nested_rows(src, mask, src_key_padding_mask)
        output = src
        for layer in self.layers:
            output = layer(
                output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask
            )
        if kept is not None:  # torch's nested tensor, padded back with zeros
            warn_once("nested_tensor_prototype", NESTED_PROTOTYPE)
            output = output.masked_fill(kept.logical_not().unsqueeze(-1), 0.0)
        return output if self.norm is None else self.norm(output)

    def _nested_rows(self, src: Tensor, mask: Any, padding: Any) -> Tensor | None:
        """Which positions torch's sparsity fast path keeps (None where it does not run): in eval mode
        without grad, a batched input and a left-aligned src_key_padding_mask but no mask, torch runs
        the layers on a nested tensor of the kept positions and pads the output with zeros."""
        if not self.use_nested_tensor or self.layers[0].training or src.dim() != 3 or padding is None:
            return None
        kept = padding.logical_not()
        aligned = bool((kept[:, 1:] <= kept[:, :-1]).all())  # each row's kept positions come first
        if (self.mask_check and not aligned) or mask is not None:
            return None
        layer = self.layers[0]
        tensors = (
            src,
            *(
                p
                for p in (
                    layer.self_attn.in_proj_weight,
                    layer.self_attn.in_proj_bias,
                    layer.self_attn.out_proj.weight,
                    layer.self_attn.out_proj.bias,
                )
            ),
            *(
                p
                for m in (layer.norm1, layer.norm2, layer.linear1, layer.linear2)
                for p in (m.weight, m.bias)
            ),
        )
        if grad_mode.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors):
            return None
        return kept


class TransformerDecoder(Module):
    """``num_layers`` copies of a decoder layer over the memory, then ``norm`` if given."""

    __constants__ = ["norm"]

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Any = None,
        memory_mask: Any = None,
        tgt_key_padding_mask: Any = None,
        memory_key_padding_mask: Any = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        size = _seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, size)
        output = tgt
        for layer in self.layers:
            output = layer(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=tgt_is_causal,
                memory_is_causal=memory_is_causal,
            )
        return output if self.norm is None else self.norm(output)


class Transformer(Module):
    """An encoder and a decoder (torch's defaults: 6 + 6 layers of d_model 512, 8 heads), every
    matrix re-initialised by xavier_uniform_."""

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable = F.relu,
        custom_encoder: Any = None,
        custom_decoder: Any = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        options = (
            d_model,
            nhead,
            dim_feedforward,
            dropout,
            activation,
            layer_norm_eps,
            batch_first,
            norm_first,
            bias,
        )
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(*options, **factory)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(*options, **factory)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Any = None,
        tgt_mask: Any = None,
        memory_mask: Any = None,
        src_key_padding_mask: Any = None,
        tgt_key_padding_mask: Any = None,
        memory_key_padding_mask: Any = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        batched = src.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if batched and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """The causal mask of ``sz`` positions: -inf above the diagonal, 0 elsewhere."""
        return _square_subsequent_mask(sz, device=device, dtype=dtype)
