"""Planted faults that break modules and losses (rules MOD-*)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from impl_faults import derivative_replaced, fault, patched


@fault({"MOD-001": "grad_fn differs"})
def module_dict_sorts_keys() -> Iterator[None]:
    """ModuleDict built from a plain dict holds its modules in sorted key order instead of the
    dict's insertion order (as torch did before dicts were ordered)."""
    from collections import OrderedDict

    from impl.nn.modules.container import ModuleDict

    def make(original: Callable) -> Callable:
        def update(self: ModuleDict, modules: Any) -> None:
            plain = isinstance(modules, Mapping) and not isinstance(modules, (OrderedDict, ModuleDict))
            original(self, sorted(modules.items()) if plain else modules)

        return update

    with patched(ModuleDict, "update", make):
        yield


@fault({"MOD-001": "graph differs"})
def linear_nd_input_not_flattened() -> Iterator[None]:
    """Linear with a bias on an input of 3 or more dimensions computes ``matmul`` then an in-place
    bias add instead of torch's one addmm over the flattened batch, viewed back."""
    import impl
    from impl.nn import functional as F

    def make(original: Callable) -> Callable:
        def linear(input: Any, weight: Any, bias: Any = None) -> Any:
            if bias is None or input.dim() <= 2:
                return original(input, weight, bias)
            return impl.matmul(input, weight.t()).add_(bias)

        return linear

    with patched(F, "linear", make):
        yield


@fault({"MOD-001": "graph differs"})
def linear_1d_input_keeps_batch_dim() -> Iterator[None]:
    """Linear with a bias on a 1-d input returns a (1, out_features) result: the batch dimension of
    the addmm it runs is not viewed away."""
    import impl
    from impl.nn import functional as F

    def make(original: Callable) -> Callable:
        def linear(input: Any, weight: Any, bias: Any = None) -> Any:
            if bias is None or input.dim() != 1:
                return original(input, weight, bias)
            return impl.addmm(bias, input.reshape(1, -1), weight.t())

        return linear

    with patched(F, "linear", make):
        yield


@fault({"MOD-001": "expected warning"})
def softmax_module_ignores_dim() -> Iterator[None]:
    """The Softmax module normalises over the last dimension whatever its ``dim``."""
    from impl.nn import functional as F
    from impl.nn.modules.activation import Softmax

    def forward(self: Softmax, input: Any) -> Any:
        return F.softmax(input, -1)

    with patched(Softmax, "forward", lambda _orig: forward):
        yield


@fault({"MOD-001": "graph differs"})
def sequential_runs_once() -> Iterator[None]:
    """Sequential walks its layers with one iterator made at its first call, so later calls find it
    exhausted and return their input unchanged."""
    from impl.nn.modules.container import Sequential

    def forward(self: Sequential, input: Any) -> Any:
        layers = vars(self).setdefault("_fault_layers", iter(self))
        for module in layers:
            input = module(input)
        return input

    with patched(Sequential, "forward", lambda _orig: forward):
        yield


@fault({"MOD-002": "training differs"})
def train_sets_only_own_flag() -> Iterator[None]:
    """``train()``/``eval()`` set the training flag of the module they are called on but not of its
    submodules."""
    from impl.nn.modules.module import Module

    def train(self: Module, mode: bool = True) -> Module:
        self.training = mode
        return self

    with patched(Module, "train", lambda _orig: train):
        yield


@fault({"MOD-002": "parameters differs"})
def parameters_breadth_first() -> Iterator[None]:
    """``named_parameters()`` (and ``named_buffers()``) walk the module tree breadth first instead
    of depth first."""
    from impl.nn.modules.module import Module

    def dotted(prefix: str, name: str) -> str:
        return prefix + ("." if prefix else "") + name

    def named_members(
        self: Module, members: Callable, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Any]]:
        seen: set = set()
        queue: list[tuple[str, Module]] = [(prefix, self)]
        for pre, module in queue:
            if recurse:
                queue += [(dotted(pre, n), m) for n, m in module._modules.items() if m is not None]
            for k, v in members(module):
                if v is None or v in seen:
                    continue
                if remove_duplicate:
                    seen.add(v)
                yield dotted(pre, k), v

    with patched(Module, "_named_members", lambda _orig: named_members):
        yield


@fault({"MOD-003": ".grad: expected None"})
def zero_grad_skips_submodules() -> Iterator[None]:
    """``Module.zero_grad()`` resets the gradients of the module's own parameters only, not those of
    its submodules (``parameters(recurse=False)``)."""
    from impl.nn.modules.module import Module

    def zero_grad(self: Module, set_to_none: bool = True) -> None:
        for p in self.parameters(recurse=False):
            if p.grad is not None:
                p.grad = None if set_to_none else p.grad.detach().zero_()

    with patched(Module, "zero_grad", lambda _orig: zero_grad):
        yield


@fault({"MOD-003": ".grad: expected a tensor"})
def zero_grad_ignores_set_to_none() -> Iterator[None]:
    """``Module.zero_grad(set_to_none=False)`` sets the gradients to None instead of zeroing them."""
    from impl.nn.modules.module import Module

    with patched(Module, "zero_grad", lambda original: lambda self, set_to_none=True: original(self, True)):
        yield


@fault({"MOD-004": ".grad: value"})
def bce_mean_backward_not_averaged() -> Iterator[None]:
    """The backward of BCELoss and BCEWithLogitsLoss with ``reduction='mean'`` is not divided by
    the number of elements."""
    from impl.nn import _losses

    with patched(_losses, "_scale_back", lambda _orig: lambda grad, c, name="self": grad):
        yield


@fault({"MOD-004": ": value"})
def soft_cross_entropy_mean_over_elements() -> Iterator[None]:
    """CrossEntropyLoss with class-probability targets and ``reduction='mean'`` divides the summed
    loss by the number of elements instead of the number of rows (``numel // classes``)."""
    from impl.nn import _losses
    from impl.nn import functional as F

    def make(original: Callable) -> Callable:
        def probabilities(logp: Any, target: Any, weight: Any, code: int, *rest: Any) -> Any:
            if code != 1:
                return original(logp, target, weight, code, *rest)
            total = original(logp, target, weight, 2, *rest)
            return _losses.apply(_losses.DIV_SCALAR, total, other=logp.numel())

        return probabilities

    with patched(F, "_cross_entropy_probabilities", make):
        yield


@fault({"MOD-004": ".grad: value"})
def mse_sum_backward_averaged() -> Iterator[None]:
    """The backward of MSELoss with ``reduction='sum'`` is divided by the number of elements, as
    for 'mean' (the reduction code tested for non-zero instead of 'mean')."""
    from impl.nn import _losses

    def make(original: Callable) -> Callable:
        def grad(g: Any, c: Any) -> Any:
            return original(g, c) / c.self.numel() if c.reduction == 2 else original(g, c)

        return grad

    with derivative_replaced(_losses.MSE_LOSS, "self", make):
        yield


@fault({"MOD-004": ".grad: value"})
def huber_backward_unclipped() -> Iterator[None]:
    """HuberLoss's gradient is its quadratic branch's everywhere (``x * grad``, not clipped at
    ``delta``): an MSE-like gradient beyond ``delta``."""
    from impl.nn import _losses

    def make(_original: Callable) -> Callable:
        def grad(g: Any, c: Any) -> Any:
            return (c.self - c.target) * (1.0 / c.self.numel() if c.reduction == 1 else 1.0) * g

        return grad

    with derivative_replaced(_losses.HUBER_LOSS, "self", make):
        yield


@fault({"MOD-014": "error"})
def lazy_norm_features_from_last_dim() -> Iterator[None]:
    """LazyBatchNorm1d/2d read num_features off the input's last dimension, not its channels (dim 1)."""
    from impl.nn.modules import lazy

    def make(original: Callable) -> Callable:
        def initialize(self: Any, input: Any) -> None:
            original(self, input.transpose(1, -1) if input.dim() > 2 else input)

        return initialize

    with patched(lazy._LazyNormBase, "initialize_parameters", make):
        yield


@fault({"MOD-004": ".grad: value"})
def nll_backward_ignores_row_gradients() -> Iterator[None]:
    """The backward of NLLLoss (and CrossEntropyLoss with class indices) with ``reduction='none'``
    spreads the first row's incoming gradient over every row instead of each row's own."""
    from impl.nn import _losses

    def make(original: Callable) -> Callable:
        def backward(xp: Any, g: Any, x: Any, **options: Any) -> Any:
            if g.ndim:
                g = xp.broadcast_to(g.reshape(-1)[:1], g.shape)
            return original(xp, g, x, **options)

        return backward

    with patched(_losses.NLL_LOSS_BACKWARD, "forward", make):
        yield


@fault({"MOD-004": "graph differs"})
def l1_sum_averaged() -> Iterator[None]:
    """L1Loss with ``reduction='sum'`` divides the summed absolute differences by the number of
    elements, as for 'mean'."""
    from impl.nn import functional as F

    def make(original: Callable) -> Callable:
        def l1_loss(input: Any, target: Any, *args: Any, reduction: str = "mean", **kwargs: Any) -> Any:
            reduction = "mean" if reduction == "sum" else reduction
            return original(input, target, *args, reduction=reduction, **kwargs)

        return l1_loss

    with patched(F, "l1_loss", make):
        yield


@fault({"MOD-004": ".grad: value"})
def bce_logits_target_grad_sign() -> Iterator[None]:
    """The gradient of BCEWithLogitsLoss (without pos_weight) with respect to its target is ``x``
    instead of ``-x``."""
    from impl.nn import _losses

    def make(original: Callable) -> Callable:
        def grad(g: Any, c: Any) -> Any:
            return -original(g, c) if c.pos_weight is None else original(g, c)

        return grad

    with derivative_replaced(_losses.BCE_WITH_LOGITS, "target", make):
        yield


@fault({"MOD-005": ": value"})
def dropout_ignores_eval_mode() -> Iterator[None]:
    """Dropout drops elements in eval mode too (it does not pass its training flag on)."""
    from impl.nn import functional as F
    from impl.nn.modules.dropout import Dropout

    def forward(self: Dropout, input: Any) -> Any:
        return F.dropout(input, self.p, True, self.inplace)

    with patched(Dropout, "forward", lambda _orig: forward):
        yield


def _dropout_mask_replaced(p: float, mask: Callable[[Any], Any]) -> Any:
    """``F.dropout`` that, in train mode with probability ``p``, multiplies its input by
    ``mask(input)`` (made without grad) instead of doing what it does."""
    import impl
    from impl.nn import functional as F

    def make(original: Callable) -> Callable:
        def dropout(input: Any, p_: float = 0.5, training: bool = True, inplace: bool = False) -> Any:
            if not training or p_ != p:
                return original(input, p_, training, inplace)
            with impl.no_grad():
                m = mask(input)
            return input.mul_(m) if inplace else input * m

        return dropout

    return patched(F, "dropout", make)


@fault({"MOD-005": ": value"})
def dropout_all_dropped_scaled_by_inf() -> Iterator[None]:
    """Dropout with p=1 in train mode scales its all-zero mask by 1/(1-p) = inf, so every element
    is nan instead of 0."""
    import impl

    with _dropout_mask_replaced(1.0, lambda x: impl.zeros_like(x) * float("inf")):
        yield


@fault({"MOD-005": "graph differs"})
def dropout_p0_applies_mask() -> Iterator[None]:
    """Dropout with p=0 in train mode multiplies its input by an all-ones mask (a new tensor, with
    a MulBackward0 grad_fn) instead of returning the input itself."""
    import impl

    with _dropout_mask_replaced(0.0, impl.ones_like):
        yield


@fault({"MOD-006": ".grad: value"})
def reflect_padding_repeats_edge() -> Iterator[None]:
    """Reflect padding mirrors about the edge's outer side, repeating the edge element (numpy's
    'symmetric'), instead of mirroring about the edge element itself."""
    from impl.nn import _pad

    def make(original: Callable) -> Callable:
        def source_index(xp: Any, size: int, left: int, right: int, mode: str) -> Any:
            if mode != "reflect":
                return original(xp, size, left, right, mode)
            j = xp.arange(-left, size + right)
            j = xp.where(j < 0, -j - 1, j)
            return xp.where(j > size - 1, 2 * size - 1 - j, j)

        return source_index

    with patched(_pad, "_source_index", make):
        yield


@fault({"MOD-006": "shape differs"})
def conv_padding_pair_swapped() -> Iterator[None]:
    """Conv2d reads a padding pair as (width, height) instead of (height, width)."""
    from impl.nn import _conv

    def make(original: Callable) -> Callable:
        def pads(padding: Any, kernel: tuple, *rest: Any) -> tuple:
            if isinstance(padding, str) or len(kernel) != 2:
                return original(padding, kernel, *rest)
            height, width = _conv._pair(padding)
            return (width, width, height, height)

        return pads

    with patched(_conv, "_pads", make):
        yield


@fault({"MOD-006": ": value"})
def same_padding_extra_first() -> Iterator[None]:
    """Conv2d with ``padding='same'``, a padding_mode other than 'zeros' and an odd total padding
    pads the extra row and column on the top and left instead of the bottom and right."""
    from impl.nn.modules.conv import Conv2d

    def make(original: Callable) -> Callable:
        def reversed_padding(self: Conv2d) -> Any:
            pads = original(self)
            return [pads[1], pads[0], pads[3], pads[2]] if self.padding == "same" else pads

        return reversed_padding

    with patched(Conv2d, "_reversed_padding", make):
        yield


@fault({"MOD-006": ": value"})
def circular_padding_wraps_near_side() -> Iterator[None]:
    """Circular padding fills each border with the input elements next to it (the near side)
    instead of those at the opposite side (in the forward; the gradient is left as torch's)."""
    import impl
    from impl.nn import _pad

    def make(original: Callable) -> Callable:
        def circular(input: Any, pad: tuple) -> Any:
            out = original(input, pad)
            with impl.no_grad():
                for dim, left, right in _pad._pairs(pad, out.dim()):
                    size = out.shape[dim]
                    if left > 0:
                        out.narrow(dim, 0, left).copy_(out.narrow(dim, left, left))
                    if right > 0:
                        out.narrow(dim, size - right, right).copy_(out.narrow(dim, size - 2 * right, right))
            return out

        return circular

    with patched(_pad, "_circular", make):
        yield


@fault({"MOD-006": ": value"})
def grouped_conv_interleaves_channels() -> Iterator[None]:
    """A grouped convolution assigns input channel c to group c % groups (interleaved) instead of
    to consecutive blocks of in_channels / groups channels."""
    from impl.nn import _conv

    def make(original: Callable) -> Callable:
        def forward(xp: Any, x: Any, w: Any, b: Any, groups: int, **options: Any) -> Any:
            n, c, *size = x.shape
            x = x.reshape(n, c // groups, groups, *size).swapaxes(1, 2).reshape(x.shape)
            return original(xp, x, w, b, groups=groups, **options)

        return forward

    with patched(_conv.CONVOLUTION, "forward", make):
        yield


@fault({"MOD-006": ": value"})
def conv_stride_pair_swapped() -> Iterator[None]:
    """Conv2d reads a stride pair as (width, height) instead of (height, width)."""
    from impl.nn import _conv
    from impl.nn import functional as F

    def make(original: Callable) -> Callable:
        def conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, *rest: Any) -> Any:
            height, width = _conv._pair(stride)
            return original(input, weight, bias, (width, height), *rest)

        return conv2d

    with patched(F, "conv2d", make):
        yield


@fault({"MOD-006": ".grad: value"})
def conv_input_grad_ignores_dilation() -> Iterator[None]:
    """The input gradient of a dilated convolution adds each window's gradient back to adjacent
    input elements (dilation 1) instead of the dilated ones the forward read."""
    from dataclasses import replace

    from impl.nn import _conv

    def make(original: Callable) -> Callable:
        def input_grad(gd: Any, w: Any, input_shape: tuple, p: Any) -> Any:
            return original(gd, w, input_shape, replace(p, dilation=(1, 1)))

        return input_grad

    with patched(_conv, "_input_grad_array", make):
        yield


@fault({"MOD-006": ".grad: value"})
def conv_bias_grad_averaged() -> Iterator[None]:
    """The bias gradient of a convolution is the mean of the output gradient over the batch and
    the output positions instead of its sum."""
    from impl.nn import _conv

    def make(original: Callable) -> Callable:
        def backward(grad: Any, input: Any, weight: Any, p: Any, mask: tuple) -> tuple:
            gi, gw, gb = original(grad, input, weight, p, mask)
            return gi, gw, None if gb is None else gb / (grad.numel() // grad.shape[1])

        return backward

    with patched(_conv, "convolution_backward", make):
        yield


@fault({"MOD-006": "differs"})
def conv_transpose1d_output_padding_ignored() -> Iterator[None]:
    """A transposed convolution ignores its output_padding: the output lacks the extra rows and
    columns at the bottom and right."""
    from dataclasses import replace

    from impl.nn import _conv

    def make(original: Callable) -> Callable:
        def transposed_hw(input_shape: tuple, kernel: tuple, p: Any) -> tuple:
            return original(input_shape, kernel, replace(p, output_padding=(0, 0)))

        return transposed_hw

    with patched(_conv, "_transposed_hw", make):
        yield


@fault({"MOD-006": ".grad: value"})
def conv_transpose2d_input_grad_flipped() -> Iterator[None]:
    """The input gradient of a transposed convolution convolves the output gradient with the
    kernel flipped (a true convolution) instead of cross-correlating it."""
    from impl.nn import _conv

    def make(original: Callable) -> Callable:
        def direct(xp: Any, x: Any, w: Any, p: Any, out_hw: Any = None) -> Any:
            return original(xp, x, w[:, :, ::-1, ::-1] if p.transposed else w, p, out_hw)

        return direct

    with patched(_conv, "_direct", make):
        yield


@fault({"MOD-006": ": value"})
def same_zero_padding_extra_first() -> Iterator[None]:
    """Conv2d with ``padding='same'``, padding_mode 'zeros' and an odd total padding puts the extra
    zero row and column on the top and left instead of the bottom and right."""
    from impl.nn import _conv
    from impl.nn._pad import pad

    def make(original: Callable) -> Callable:
        def pad_extra(input: Any, pads: tuple) -> tuple:
            top, bottom, left, right = pads
            return pad(input, (right - left, 0, bottom - top, 0)), (top, top, left, left)

        return pad_extra

    with patched(_conv, "_pad_extra", make):
        yield


@fault({"MOD-006": "graph differs"})
def leaky_relu_module_ignores_inplace() -> Iterator[None]:
    """LeakyReLU(inplace=True) computes out of place (the module does not pass its flag on)."""
    from impl.nn import functional as F
    from impl.nn.modules.activation import LeakyReLU

    def forward(self: LeakyReLU, input: Any) -> Any:
        return F.leaky_relu(input, self.negative_slope)

    with patched(LeakyReLU, "forward", lambda _orig: forward):
        yield


# -- activation layers and erf (batch h5: GELU, SiLU, Mish, ELU, Softplus, Hardtanh, ReLU6, ...) --
@fault({"MOD-007": ".grad: value"})
def gelu_double_backward_drops_curvature() -> Iterator[None]:
    """GELU's second derivative is ``2 * pdf`` without the ``- x^2 * pdf`` term of
    FunctionsManual's gelu_double_backward (approximate='none')."""
    from impl.nn import _activations as ops

    def make(original: Callable) -> Callable:
        def double_backward(ggi: Any, go: Any, x: Any, approximate: str) -> Any:
            if approximate == "tanh":
                return original(ggi, go, x, approximate)
            pdf = ops.mul_scalar(ops.mul_scalar(x * x, -0.5).exp(), ops.GELU_PDF)
            return ggi * go * ops.mul_scalar(pdf, 2)

        return double_backward

    with patched(ops, "gelu_double_backward", make):
        yield


@fault({"MOD-004": ": value"})
def smooth_l1_beta_ignored() -> Iterator[None]:
    """SmoothL1Loss's forward switches from quadratic to linear at 1 whatever its ``beta``."""
    from impl.nn import _losses

    def make(original: Callable) -> Callable:
        return lambda xp, a, t, reduction, beta: original(xp, a, t, reduction, 1.0)

    with patched(_losses.SMOOTH_L1_LOSS, "forward", make):
        yield


@fault({"MOD-007": "expected error"})
def elu_inplace_negative_alpha_accepted() -> Iterator[None]:
    """The backward of an in-place ELU with a negative alpha computes a gradient from the result
    instead of raising torch's RuntimeError (the result no longer tells the input's sign)."""
    from impl.nn import _activations as ops

    def make(original: Callable) -> Callable:
        def elu_backward(grad: Any, x: Any, alpha: float, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("is_result"):
                options = {"alpha": alpha, "scale": 1.0, "input_scale": 1.0, "is_result": True}
                return ops.apply(ops.ELU_BACKWARD, grad, x, **options)
            return original(grad, x, alpha, *args, **kwargs)

        return elu_backward

    with patched(ops, "elu_backward", make):
        yield


@fault({"MOD-007": ": value"})
def softplus_not_divided_by_beta() -> Iterator[None]:
    """Softplus below its threshold is ``log(1 + exp(beta x))``, not divided by ``beta``."""
    from impl.nn import _activations as ops

    def forward(xp: Any, x: Any, beta: float, threshold: float) -> Any:
        return xp.where(x * beta > threshold, x, xp.log1p(xp.exp(x * beta)))

    with patched(ops.SOFTPLUS, "forward", lambda _orig: ops.computed(forward)):
        yield


@fault({"MOD-018": ": value"})
def selu_scale_dropped() -> Iterator[None]:
    """SELU is ELU with SELU's alpha but without its scale (1.0507...) on either side."""
    from impl.nn import _activations_more as ops

    def make(original: Callable) -> Callable:
        return lambda xp, x, alpha, scale, input_scale: original(xp, x, alpha, 1.0, input_scale)

    with patched(ops.SELU, "forward", make):
        yield


@fault({"MOD-018": ": value"})
def hardshrink_band_open() -> Iterator[None]:
    """Hardshrink zeroes only inside the open band ``(-lambd, lambd)``: ``x = ±lambd`` passes
    through where torch's kernel gives 0."""
    from impl._ops import activations as ops

    def forward(xp: Any, x: Any, lambd: float) -> Any:
        return xp.where(xp.abs(x) < x.dtype.type(lambd), x.dtype.type(0), x)

    with patched(ops.HARDSHRINK, "forward", lambda _orig: ops.computed(forward)):
        yield


@fault({"MOD-007": ": value"})
def hardtanh_grad_passes_at_bounds() -> Iterator[None]:
    """Hardtanh's gradient passes at ``x == min_val`` and ``x == max_val`` (open bounds) where
    torch's hardtanh_backward gives 0."""
    from impl.nn import _activations as ops

    def forward(xp: Any, g: Any, x: Any, min_val: float, max_val: float) -> Any:
        return xp.where((x < min_val) | (x > max_val), xp.zeros((), g.dtype), g)

    with patched(ops.HARDTANH_BACKWARD, "forward", lambda _orig: forward):
        yield


@fault({"OPS-001": ".grad: value"})
def erf_derivative_half() -> Iterator[None]:
    """erf's derivative is ``exp(-x^2) / sqrt(pi)``: the factor 2 of ``2 / sqrt(pi)`` is lost."""
    from impl._ops import special

    def make(original: Callable) -> Callable:
        return lambda g, c: special.mul_scalar((-c.self.pow(2)).exp(), special.TWO_OVER_SQRT_PI / 2) * g

    with derivative_replaced(special.ERF, "self", make):
        yield


@fault({"MOD-007": "graph differs"})
def inplace_saves_input_without_clone() -> Iterator[None]:
    """An in-place op whose derivative uses its input (silu_, mish_, hardtanh_, abs_, mul_ ...)
    saves the input's old value as is instead of torch's recorded ``original_self = self.clone()``
    (one CloneBackward0 fewer on the second-order graph)."""
    from impl._ops import inplace

    with patched(inplace, "_save_original_self", lambda _orig: lambda node, old: None):
        yield


# -- Embedding (batch h14: nn.Embedding, F.embedding) --
@fault({"MOD-008": ": value"})
def embedding_grad_at_padding_idx() -> Iterator[None]:
    """Embedding's backward adds the gradient rows of ``padding_idx`` lookups into the weight's
    gradient instead of leaving that row without gradient."""
    from impl.nn import _embedding

    def make(original: Callable) -> Callable:
        return lambda *args, **attrs: original(*args, **{**attrs, "padding_idx": -1})

    with patched(_embedding.EMBEDDING_BACKWARD, "forward", make):
        yield


@fault({"MOD-008": ": value"})
def embedding_ignores_scale_grad_by_freq() -> Iterator[None]:
    """scale_grad_by_freq is ignored: a row looked up k times gets the sum of its gradient rows,
    not that sum divided by k."""
    from impl.nn import _embedding

    def make(original: Callable) -> Callable:
        return lambda *args, **attrs: original(*args, **{**attrs, "scale_grad_by_freq": False})

    with patched(_embedding.EMBEDDING_BACKWARD, "forward", make):
        yield


@fault({"MOD-008": ": value"})
def embedding_max_norm_renorms_every_row() -> Iterator[None]:
    """max_norm renormalises every row of the weight, not only the rows the indices look up."""
    import impl
    from impl.nn import _embedding

    def make(original: Callable) -> Callable:
        def renorm(weight: Any, indices: Any, max_norm: float, norm_type: float) -> None:
            original(weight, impl.arange(weight.shape[0]), max_norm, norm_type)

        return renorm

    with patched(_embedding, "embedding_renorm_", make):
        yield


@fault({"MOD-008": ".grad: value"})
def embedding_double_backward_keeps_padding() -> Iterator[None]:
    """EmbeddingDenseBackwardBackward0's backward does not zero the rows of ``padding_idx``
    lookups (FunctionsManual's masked_fill_ is missing), so they reach the incoming gradient."""
    from impl.nn import _embedding

    def make(original: Callable) -> Callable:
        return lambda grad, indices, padding_idx: original(grad, indices, -1)

    with patched(_embedding, "embedding_dense_double_backward", make):
        yield


# -- the options and edge values argument coverage asks for (oracle.coverage) --------------------


@fault({"MOD-004": "graph differs"})
def cross_entropy_weight_ignored_for_probabilities() -> Iterator[None]:
    """CrossEntropyLoss with class-probability targets ignores its class ``weight`` (it is only
    passed on to nll_loss, the class-index path)."""
    from impl.nn import functional as F

    def make(original: Callable) -> Callable:
        return lambda logp, target, weight, *rest: original(logp, target, None, *rest)

    with patched(F, "_cross_entropy_probabilities", make):
        yield


@fault({"MOD-004": ": value"})
def nll_mean_counts_ignored_targets() -> Iterator[None]:
    """NLLLoss (and CrossEntropyLoss with class indices) with ``reduction='mean'`` divides by the
    total weight of every target, the ignored ones included (so all targets ignored give 0, not
    NaN)."""
    from impl.nn import _losses

    def coefficients(xp: Any, target: Any, weight: Any, ignore_index: int, reduction: int, classes: int,
                     dtype: Any) -> Any:
        t = target._data.reshape(-1)
        keep = t != ignore_index
        safe = xp.where(keep, t, 0)
        w = weight._data[safe]
        if reduction == 1:
            w = w / w.sum()
        coef = xp.zeros((t.shape[0], classes), dtype=dtype)
        coef[xp.arange(t.shape[0]), safe] = -w * keep
        return coef

    with patched(_losses, "_nll_coefficients", lambda _orig: coefficients):
        yield


@fault({"MOD-004": ": value"})
def label_smoothing_ignored_for_class_indices() -> Iterator[None]:
    """CrossEntropyLoss with class-index targets ignores ``label_smoothing`` (it only rewrites
    probability targets)."""
    from impl.nn import functional as F

    def make(original: Callable) -> Callable:
        def cross_entropy(
            input: Any, target: Any, *args: Any, label_smoothing: float = 0.0, **kwargs: Any
        ) -> Any:
            if tuple(target.shape) != tuple(input.shape):
                label_smoothing = 0.0
            return original(input, target, *args, label_smoothing=label_smoothing, **kwargs)

        return cross_entropy

    with patched(F, "cross_entropy", make):
        yield


@fault({"MOD-004": ": value"})
def bce_log_not_clamped() -> Iterator[None]:
    """BCELoss takes the logs of its input unclamped, so an input of exactly 0 or 1 gives an
    infinite (or NaN) loss where torch clamps each log at -100."""
    from impl.nn import _losses

    def forward(xp: Any, x: Any, t: Any, weight: Any, reduction: int) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = -(t * xp.log(x) + (1 - t) * xp.log(1 - x))
        if weight is not None:
            loss = loss * weight._data
        return _losses._reduce_array(xp, loss.astype(x.dtype), reduction)

    with patched(_losses.BINARY_CROSS_ENTROPY, "forward", lambda _orig: forward):
        yield


@fault({"MOD-004": ": value"})
def pos_weight_scales_negative_targets() -> Iterator[None]:
    """BCEWithLogitsLoss multiplies the whole log-sigmoid term by ``pos_weight``, for negative
    targets too, instead of by ``1 + (pos_weight - 1) * target``."""
    from impl.nn import _losses

    def make(original: Callable) -> Callable:
        def forward(xp: Any, x: Any, t: Any, weight: Any, pos_weight: Any, reduction: int) -> Any:
            if pos_weight is None:
                return original(xp, x, t, weight, pos_weight, reduction)
            loss = (1 - t) * x + pos_weight._data * (xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0))
            loss = loss if weight is None else loss * weight._data
            return _losses._reduce_array(xp, loss.astype(x.dtype), reduction)

        return forward

    with patched(_losses.BCE_WITH_LOGITS, "forward", make):
        yield


@fault({"MOD-004": ".grad: value", "OPS-001": ".grad: value"})
def abs_grad_at_zero_passes() -> Iterator[None]:
    """abs's gradient at 0 is the incoming gradient (the sign of x >= 0 taken as 1) where torch's
    ``sgn(x)`` gives 0: L1Loss of an input equal to its target gets a gradient."""
    from impl._ops import unary_math

    def make(original: Callable) -> Callable:
        return lambda g, c: g * ((c.self >= 0).to(g.dtype) * 2 - 1)

    with derivative_replaced(unary_math.ABS, "self", make):
        yield


@fault({"MOD-005": "differs"})
def dropout_inplace_ignored() -> Iterator[None]:
    """Dropout with ``inplace=True`` returns a new tensor and leaves its input unchanged."""
    from impl.nn import functional as F

    def make(original: Callable) -> Callable:
        return lambda input, p=0.5, training=True, inplace=False: original(input, p, training, False)

    with patched(F, "dropout", make):
        yield


@fault({"MOD-007": ": value"})
def elu_grad_at_zero_passes() -> Iterator[None]:
    """ELU's gradient at exactly 0 is the incoming gradient (the linear side, ``x >= 0``) where
    torch's elu_backward takes the exponential side's ``alpha`` (``x <= 0``)."""
    from impl.nn import _activations as ops

    def make(original: Callable) -> Callable:
        def forward(xp: Any, g: Any, x: Any, alpha: float, scale: float, **options: Any) -> Any:
            out = original(xp, g, x, alpha, scale, **options)
            return xp.where(x == 0, g * scale, out)

        return forward

    with patched(ops.ELU_BACKWARD, "forward", make):
        yield


@fault({"MOD-001": "shape differs"})
def flatten_ignores_end_dim() -> Iterator[None]:
    """Flatten flattens from ``start_dim`` to the last dim whatever its ``end_dim``."""
    from impl.nn.modules.dropout import Flatten

    with patched(Flatten, "forward", lambda _orig: lambda self, input: input.flatten(self.start_dim)):
        yield


@fault({"MOD-009": ".grad: value"})
def max_pool2d_last_of_tied_maxima() -> Iterator[None]:
    """Max pooling picks the last of a window's tied maxima (its index, where the gradient goes)
    instead of the first."""
    from impl.nn import _pool

    def make(original: Callable) -> Callable:
        def select(xp: Any, vals: Any, valid: Any, pos: Any) -> tuple:
            return original(xp, vals[..., ::-1], valid[..., ::-1], pos[..., ::-1])

        return select

    with patched(_pool, "_select_max", make):
        yield


@fault({"MOD-009": ": value"})
def adaptive_avg_pool2d_window_end_floored() -> Iterator[None]:
    """Adaptive pooling ends each window at floor((o + 1) * size / out) instead of its ceiling,
    leaving out the element the windows share."""
    from impl.nn import _pool

    def bounds(size: int, out: int) -> list[tuple[int, int]]:
        return [((o * size) // out, max((o + 1) * size // out, (o * size) // out + 1)) for o in range(out)]

    with patched(_pool, "_adaptive_bounds", lambda _orig: bounds):
        yield


@fault({"MOD-010": ": value"})
def batch_norm_running_var_biased() -> Iterator[None]:
    """BatchNorm's running_var is updated with the biased batch variance (divided by n) instead of
    the unbiased one (n - 1)."""
    from impl.nn import _norm

    def make(original: Callable) -> Callable:
        def stats(a: Any, axes: tuple, eps: float) -> tuple:
            mean, rstd, squares = original(a, axes, eps)
            n = math.prod(a.shape[i] for i in axes)
            return mean, rstd, squares * (n - 1) / n

        return stats

    with patched(_norm, "_stats", make):
        yield


@fault({"MOD-011": "graph differs"})
def pad_sequence_stacks_padded_copies() -> Iterator[None]:
    """nn.utils.rnn.pad_sequence pads each sequence (F.pad) and stacks them: torch's values, but a
    StackBackward0 over ConstantPadNdBackward0s instead of torch's chain of CopySlices."""
    import impl
    from impl.nn import functional as F
    from impl.nn.utils import rnn

    def make(original: Callable) -> Callable:
        def pad_sequence(sequences: Any, batch_first: bool = False, padding_value: float = 0.0,
                         padding_side: str = "right") -> Any:
            sequences = list(sequences)
            if not sequences or padding_side not in ("left", "right"):
                return original(sequences, batch_first, padding_value, padding_side)
            longest = max(seq.shape[0] for seq in sequences)
            trailing = tuple(sequences[0].shape[1:])
            padded = []
            for seq in sequences:
                seq = seq.to(sequences[0].dtype).expand(seq.shape[0], *trailing)
                extra = longest - seq.shape[0]
                ends = (extra, 0) if padding_side == "left" else (0, extra)
                padded.append(F.pad(seq, (0, 0) * len(trailing) + ends, value=padding_value))
            return impl.stack(padded, 0 if batch_first else 1)

        return pad_sequence

    with patched(rnn, "pad_sequence", make):
        yield


@fault({"MOD-011": "graph differs"})
def lstm_input_and_forget_gates_swapped() -> Iterator[None]:
    """LSTM cells read the gate chunks in the order f, i, g, o: the input gate takes the forget
    gate's rows of the weights and the forget gate the input gate's."""
    from impl.nn import _rnn

    def make(original: Callable) -> Callable:
        def cell(x: Any, hidden: tuple, p: tuple, pre: bool = False) -> tuple:
            def swapped(t: Any, chunks: int, dim: int = 1) -> tuple:
                i, f, g, o = chunk(t, chunks, dim)
                return f, i, g, o

            chunk, _rnn.unsafe_chunk = _rnn.unsafe_chunk, swapped
            try:
                return original(x, hidden, p, pre)
            finally:
                _rnn.unsafe_chunk = chunk

        return cell

    with patched(_rnn, "lstm_cell", make):
        yield


@fault({"MOD-011": "graph differs"})
def gru_reset_gate_outside_hidden_bias() -> Iterator[None]:
    """GRU cells apply the reset gate to ``h @ W_hn.T`` alone and add ``b_hn`` after it (cuDNN's
    formula), where torch's CPU cell takes ``r * (h @ W_hn.T + b_hn)``."""
    from impl.nn import _rnn
    from impl.nn import functional as F

    def make(original: Callable) -> Callable:
        def cell(x: Any, h: Any, p: tuple, pre: bool = False) -> Any:
            xr, xz, xn = _rnn.unsafe_chunk(x if pre else F.linear(x, p[0], p[2]), 3, 1)
            hr, hz, hn = _rnn.unsafe_chunk(F.linear(h, p[1]), 3, 1)
            br, bz, bn = (0, 0, 0) if p[3] is None else p[3].chunk(3)
            r, z = (hr + br + xr).sigmoid(), (hz + bz + xz).sigmoid()
            n = (xn + hn * r + bn).tanh()
            return ((h - n) * z) + n

        return cell

    with patched(_rnn, "gru_cell", make):
        yield


@fault({"MOD-011": "graph differs"})
def reverse_direction_not_reversed() -> Iterator[None]:
    """A bidirectional RNN or GRU runs its reverse direction forwards in time over the sequence."""
    from impl.nn import _rnn

    def make(original: Callable) -> Callable:
        def layer(cell: Callable, input: Any, hidden: tuple, p: tuple) -> tuple:
            fw, fw_hidden = _rnn._full_layer(cell, input, hidden[0], p[0])
            rev, rev_hidden = _rnn._full_layer(cell, input, hidden[1], p[1])
            return _rnn.cat([fw, rev], fw.dim() - 1), (fw_hidden, rev_hidden)

        return layer

    with patched(_rnn, "_bidirectional_layer", make):
        yield


@fault({"MOD-011": "graph differs"})
def packed_hidden_states_concatenated_reversed() -> Iterator[None]:
    """The packed layers concatenate hidden states in the reverse order: the final states of the
    sequences that end early land at other sequences' batch positions, and in the reverse
    direction the initial states of the sequences that join go before the running ones."""
    from impl.nn import _rnn

    with patched(_rnn, "_hidden_concat", lambda original: lambda hiddens: original(hiddens[::-1])):
        yield


@fault({"MOD-011": "graph differs"})
def packed_hidden_states_not_permuted() -> Iterator[None]:
    """RNNs on a PackedSequence of unsorted sequences apply neither sorted_indices to h0 nor
    unsorted_indices to h_n: the states stay in the sorted batch order."""
    from impl.nn.modules.rnn import RNNBase

    with patched(RNNBase, "permute_hidden", lambda original: lambda self, hx, permutation: hx):
        yield


@fault({"MOD-011": "raised none"})
def pad_packed_sequence_ignores_total_length() -> Iterator[None]:
    """pad_packed_sequence pads to the longest sequence whatever its total_length."""
    from impl.nn.utils import rnn

    def make(original: Callable) -> Callable:
        return lambda sequence, batch_first=False, padding_value=0.0, total_length=None: original(
            sequence, batch_first, padding_value)

    with patched(rnn, "pad_packed_sequence", make):
        yield


@fault({"MOD-001": "graph differs"})
def bilinear_bias_added_before_view() -> Iterator[None]:
    """F.bilinear (nn.Bilinear's forward) adds the bias to the flattened 2-D output and then views
    it back: torch's values, but torch views the _trilinear's result back first."""
    from impl.nn import functional as F

    def make(original: Callable) -> Callable:
        def bilinear(input1: Any, input2: Any, weight: Any, bias: Any = None) -> Any:
            if bias is None:
                return original(input1, input2, weight)
            flat = [x.reshape(-1, x.shape[-1]) for x in (input1, input2)]
            return (original(*flat, weight) + bias).reshape(*input1.shape[:-1], weight.shape[0])

        return bilinear

    with patched(F, "bilinear", make):
        yield


@fault({"MOD-012": ": value"})
def feature_alpha_dropout_noise_per_element() -> Iterator[None]:
    """Feature (alpha) dropout draws its noise per element, like plain dropout, instead of one
    draw per channel (shape (N, C, 1, ...))."""
    from impl.nn import _dropout

    def make(original: Callable) -> Callable:
        return lambda input, p, feature, scaled: original(input, p, False, scaled)

    with patched(_dropout, "_noise", make):
        yield


@fault({"MOD-013": "repr differs"})
def dropout_repr_drops_inplace() -> Iterator[None]:
    """The dropout layers print ``p`` only: their extra_repr leaves out ``inplace``."""
    from impl.nn.modules.dropout import _DropoutNd

    with patched(_DropoutNd, "extra_repr", lambda _orig: lambda self: f"p={self.p}"):
        yield


@fault({"MOD-014": ": value"})
def lazy_linear_bias_initialised_first() -> Iterator[None]:
    """LazyLinear's first call initialises the bias before the weight, so each draws the other's
    numbers from the random stream."""
    from impl.nn import init
    from impl.nn.modules.lazy import LazyLinear

    def reset(self: Any) -> None:
        if self.has_uninitialized_params() or self.in_features == 0:
            return
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features)
            init.uniform_(self.bias, -bound, bound)
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))

    with patched(LazyLinear, "reset_parameters", lambda _orig: reset):
        yield


@fault({"MOD-015": ": value"})
def sdpa_default_scale_not_rooted() -> Iterator[None]:
    """scaled_dot_product_attention's default scale is 1 / E instead of 1 / sqrt(E)."""
    from impl.nn import _attention

    def make(original: Callable) -> Callable:
        return lambda query_dim, scale: original(query_dim * query_dim, scale) if scale is None else scale

    with patched(_attention, "_scale", make):
        yield


@fault({"MOD-015": ": value"})
def sdpa_causal_sees_next_key() -> Iterator[None]:
    """is_causal lets each query attend to the key after its own too (the triangle one too wide)."""
    from impl.nn import _attention

    def make(_original: Callable) -> Callable:
        return lambda xp, length, source: xp.tril(xp.ones((length, source), dtype=bool), 1)

    with patched(_attention, "_causal", make):
        yield


@fault({"MOD-015": "graph differs"})
def sdpa_always_math_path() -> Iterator[None]:
    """scaled_dot_product_attention never takes the flash kernel: 4-D inputs get the math path's
    graph (UnsafeViewBackward0 ...) instead of ScaledDotProductFlashAttentionForCpuBackward0."""
    from impl.nn import _attention

    with patched(_attention, "_uses_flash", lambda _orig: lambda *args: False):
        yield


@fault({"MOD-016": "graph differs"})
def mha_heads_split_batch_major() -> Iterator[None]:
    """MultiheadAttention splits key and value into heads head-major (``(len, heads, batch, dim)``)
    while the query stays batch-major: each query head meets another sample's or head's keys."""
    from impl.nn import _multihead

    def make(original: Callable) -> Callable:
        def heads(t: Any, static: Any, bsz: int, num_heads: int, head_dim: int, name: str) -> Any:
            if static is not None:
                return original(t, static, bsz, num_heads, head_dim, name)
            split = t.view(t.shape[0], num_heads, bsz, head_dim).transpose(1, 2)
            return split.reshape(t.shape[0], bsz * num_heads, head_dim).transpose(0, 1)

        return heads

    with patched(_multihead, "_heads", make):
        yield


@fault({"MOD-017": "graph differs"})
def transformer_activation_after_second_linear() -> Iterator[None]:
    """The Transformer layers' feed-forward block applies its activation after the second linear
    layer instead of between the two."""
    from impl.nn.modules.transformer import _Layer

    def ff_block(self: Any, x: Any, last: Any) -> Any:
        return last(self.activation(self.linear2(self.dropout(self.linear1(x)))))

    with patched(_Layer, "_ff_block", lambda _orig: ff_block):
        yield


@fault({"MOD-020": ": value"})
def unfold_columns_kernel_major() -> Iterator[None]:
    """F.unfold lays a block's column out kernel row, kernel column, then channel (channels last)
    instead of torch's channel first."""
    from impl.nn import _fold

    def make(original: Callable) -> Callable:
        def im2col(xp: Any, a: Any, kernel_size: tuple, **options: Any) -> Any:
            out = original(xp, a, kernel_size, **options)
            c = out.shape[-2] // (kernel_size[0] * kernel_size[1])
            moved = out.reshape(*out.shape[:-2], c, -1, out.shape[-1]).swapaxes(-3, -2)
            return np.ascontiguousarray(moved).reshape(out.shape)

        return im2col

    with patched(_fold.IM2COL, "forward", make):
        yield


@fault({"MOD-020": ": value"})
def upsampling_bilinear2d_corners_unaligned() -> Iterator[None]:
    """UpsamplingBilinear2d interpolates with align_corners=False (F.interpolate's default) instead
    of torch's align_corners=True."""
    from impl.nn.modules.padding import Upsample, UpsamplingBilinear2d

    def make(_original: Callable) -> Callable:
        def init(self: Any, size: Any = None, scale_factor: Any = None) -> None:
            Upsample.__init__(self, size, scale_factor, mode="bilinear", align_corners=False)

        return init

    with patched(UpsamplingBilinear2d, "__init__", make):
        yield


@fault({"MOD-020": ": value"})
def grid_sample_grid_read_yx() -> Iterator[None]:
    """F.grid_sample reads a grid point as (y, x) instead of torch's (x, y): the first coordinate
    indexes the height."""
    from impl.nn import _grid_sample

    def make(original: Callable) -> Callable:
        def corners(grid: Any, *args: Any) -> Any:
            return original(np.ascontiguousarray(grid[..., ::-1]), *args)

        return corners

    with patched(_grid_sample, "_corners", make):
        yield


@fault({"MOD-020": "graph differs"})
def pad_replication3d_reflects() -> Iterator[None]:
    """ReplicationPad3d pads by reflection (the mode of ReflectionPad3d) instead of repeating the
    edge."""
    from impl.nn.modules.padding import ReplicationPad3d

    with patched(ReplicationPad3d, "mode", lambda _original: "reflect"):
        yield


@fault({"MOD-019": ": value"})
def multi_margin_weight_of_other_class() -> Iterator[None]:
    """MultiMarginLoss weighs each hinge term by the weight of the other class ``d`` instead of
    the target class's."""
    from impl.nn import _margin_losses

    def row(row: Any, idx: int, p: int, margin: Any, w: Any) -> Any:
        dt = row.dtype.type
        total, z = dt(0), (margin - row[idx]) + row
        for d in range(row.shape[0]):
            if d != idx and z[d] > 0:
                h = z[d] if p == 1 else z[d] * z[d]
                total = dt(total + (h * w[d] if w is not None else h))
        return dt(total / dt(row.shape[0])), z

    with patched(_margin_losses, "_multi_margin_row", lambda _orig: row):
        yield


@fault({"MOD-019": ": value"})
def multilabel_margin_skips_terminator() -> Iterator[None]:
    """MultiLabelMarginLoss skips a -1 in the target instead of ending the frame's classes there,
    so the entries after it count as targets too."""
    from impl.nn import _margin_losses

    with patched(_margin_losses, "_labels", lambda _orig: lambda t: [int(v) for v in t if v >= 0]):
        yield


@fault({"MOD-010": "graph differs"})
def instance_norm_statistics_over_batch() -> Iterator[None]:
    """F.instance_norm normalises each channel over the whole batch (batch norm of the input as it
    is, without the per-sample view) instead of over each sample's own spatial elements."""
    from impl.nn import _norm
    from impl.nn import functional as F

    def instance_norm(input: Any, running_mean: Any = None, running_var: Any = None, *args: Any) -> Any:
        return _norm.batch_norm(input, running_mean, running_var, *args)

    with patched(F, "instance_norm", lambda _orig: instance_norm):
        yield


@fault({"MOD-010": ": value"})
def rms_norm_multiplies_by_root_mean_square() -> Iterator[None]:
    """F.rms_norm multiplies the input by ``sqrt(mean(x^2) + eps)`` instead of its reciprocal."""
    from impl.nn import _norm

    def make(original: Callable) -> Callable:
        return lambda x, dims, eps: original(x, dims, eps).reciprocal()

    with patched(_norm, "_inverse_rms", make):
        yield


@fault({"MOD-008": ": value"})
def embedding_bag_last_bag_stops_at_last_offset() -> Iterator[None]:
    """EmbeddingBag's last bag (without include_last_offset) ends where it starts instead of at the
    end of the input: the indices after the last offset are dropped."""
    from impl.nn import _embedding_bag

    def make(original: Callable) -> Callable:
        def bags(indices: Any, offsets: Any, include_last_offset: bool) -> Any:
            found = original(indices, offsets, include_last_offset)
            return found if include_last_offset else [*found[:-1], (found[-1][0], found[-1][0])]

        return bags

    with patched(_embedding_bag, "_bags", make):
        yield
