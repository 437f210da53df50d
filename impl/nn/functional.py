"""torch.nn.functional: layers and losses as functions, building the graphs torch builds
(``linear`` is ``addmm`` for 2-D input with a bias, ``cross_entropy`` is ``log_softmax`` then
``nll_loss``, ``l1_loss`` is ``abs`` then a reduction, ...)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from impl import _api as api
from impl import _autocast, _creation, dtypes
from impl import _grad_mode as grad_mode
from impl._ops import products, unary_math
from impl._ops.activations import hardshrink, prelu  # noqa: F401  (re-exported)
from impl._ops.distances import cosine_similarity, pairwise_distance  # noqa: F401  (re-exported)
from impl._ops.elementwise import add_scalar, mul_scalar, scalar_minus, sub_scalar
from impl._ops.inplace import apply_inplace, check_inplace
from impl._ops.pointwise_ternary import where
from impl._ops.products import bilinear_op as bilinear  # noqa: F401  (re-exported: torch's F.bilinear)
from impl._ops.table import apply, broadcast_mismatch
from impl._signatures import invalid_call
from impl._tensor import Tensor
from impl._xp import to_numpy
from impl.dtypes import legacy_name
from impl.nn import _activations, _losses, _margin_losses
from impl.nn._activations import (  # noqa: F401  (re-exported)
    _float_only,
    elu,
    elu_,
    gelu,
    hardtanh,
    hardtanh_,
    logsigmoid,
    mish,
    relu6,
    silu,
    softplus,
    softsign,
)
from impl.nn._activations_more import (  # noqa: F401  (re-exported)
    celu,
    celu_,
    glu,
    hardsigmoid,
    hardswish,
    selu,
    selu_,
    softshrink,
    tanhshrink,
)
from impl.nn._attention import scaled_dot_product_attention  # noqa: F401  (re-exported)
from impl.nn._conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d
from impl.nn._dropout import (  # noqa: F401  (re-exported)
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from impl.nn._embedding import embedding  # noqa: F401  (re-exported)
from impl.nn._embedding_bag import embedding_bag  # noqa: F401  (re-exported)
from impl.nn._fold import fold, unfold  # noqa: F401  (re-exported)
from impl.nn._grid_sample import affine_grid, grid_sample  # noqa: F401  (re-exported)
from impl.nn._interpolate import (  # noqa: F401  (re-exported)
    interpolate,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from impl.nn._lrn import local_response_norm  # noqa: F401  (re-exported)
from impl.nn._norm import batch_norm, group_norm, instance_norm, layer_norm, rms_norm  # noqa: F401
from impl.nn._pad import pad
from impl.nn._pixel_shuffle import (  # noqa: F401  (re-exported)
    channel_shuffle,
    pixel_shuffle,
    pixel_unshuffle,
)
from impl.nn._pool import (  # noqa: F401  (re-exported)
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    avg_pool1d,
    avg_pool2d,
    lp_pool1d,
    lp_pool2d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from impl.nn._pool3d import (  # noqa: F401  (re-exported)
    adaptive_avg_pool3d,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool3d,
    max_pool3d,
    max_pool3d_with_indices,
)
from impl.nn._rrelu import rrelu, rrelu_  # noqa: F401  (re-exported)

__all__ = [
    "huber_loss",
    "linear",
    "one_hot",
    "relu",
    "relu_",
    "leaky_relu",
    "leaky_relu_",
    "threshold",
    "threshold_",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
    "mse_loss",
    "l1_loss",
    "nll_loss",
    "cross_entropy",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv3d",
    "conv_transpose3d",
    "cosine_similarity",
    "pairwise_distance",
    "pad",
    "gelu",
    "silu",
    "mish",
    "elu",
    "elu_",
    "softplus",
    "hardtanh",
    "hardtanh_",
    "relu6",
    "logsigmoid",
    "softsign",
    "max_pool1d",
    "max_pool2d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "batch_norm",
    "layer_norm",
    "group_norm",
    "rms_norm",
    "embedding_bag",
    "instance_norm",
    "scaled_dot_product_attention",
    "normalize",
    "selu",
    "selu_",
    "celu",
    "celu_",
    "rrelu",
    "local_response_norm",
    "rrelu_",
    "hardswish",
    "hardsigmoid",
    "hardshrink",
    "softshrink",
    "tanhshrink",
    "softmin",
    "gumbel_softmax",
    "glu",
    "prelu",
    "smooth_l1_loss",
    "soft_margin_loss",
    "kl_div",
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "cosine_embedding_loss",
    "multilabel_soft_margin_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "pixel_shuffle",
    "pixel_unshuffle",
    "interpolate",
    "fold",
    "unfold",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "affine_grid",
    "grid_sample",
    "channel_shuffle",
    "lp_pool1d",
    "lp_pool2d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "max_pool3d",
    "max_pool3d_with_indices",
    "avg_pool3d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
]


# -- layers -----------------------------------------------------------------------------------
@_autocast.policy("lower")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` along torch's paths: addmm for a 2-D input with a bias; one addmm
    over the flattened batch, viewed back, for a contiguous input with a bias that is 1-D once
    squeezed (and contiguous); otherwise matmul, the bias then added in place (AddBackward0)."""
    tensors = isinstance(input, Tensor) and isinstance(weight, Tensor)
    if not (tensors and (bias is None or isinstance(bias, Tensor))):
        raise invalid_call(linear, {"input": input, "weight": weight, "bias": bias})
    if input.dim() == 0 or weight.dim() == 0:
        dims = f"{input.dim()}D and {weight.dim()}D"
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {dims}")
    if bias is not None and input.dim() == 2:
        return products.addmm(bias, input, weight.t())
    if bias is not None and _fusable_bias(bias) and input.is_contiguous():
        batch = tuple(input.shape[:-1])
        flat = input.reshape(int(np.prod(batch, dtype=np.int64)), input.shape[-1])
        out = products.addmm(bias, flat, weight.t())
        return out.view(*batch, out.shape[1])
    out = products.matmul(input, weight.t())
    return out if bias is None else out.add_(bias)


def _fusable_bias(bias: Tensor) -> bool:
    """torch's test for a bias the flattened addmm may take: contiguous, 1-D once squeezed."""
    return (bias.dim() == 1 or bias.squeeze().dim() == 1) and bias.is_contiguous()


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """``input / max(||input||_p over dim, eps)`` as torch's Python builds it: norm (keepdim),
    clamp_min, expand_as, then div (DivBackward0), or into ``out`` (the clamp then in place)."""
    norm = input.norm(p, dim, keepdim=True)
    if out is None:
        return input / norm.clamp_min(eps).expand_as(input)
    return api.FUNCTIONS["div"](input, norm.clamp_min_(eps).expand_as(input), out=out)  # torch.div's out=


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu_() if inplace else unary_math.relu(input)


def relu_(input: Tensor) -> Tensor:
    return input.relu_()


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where ``x > 0``, ``x * negative_slope`` elsewhere (LeakyReluBackward0; in place
    LeakyReluBackward1, whose backward refuses a negative slope as torch's does)."""
    if not isinstance(input, Tensor):
        raise invalid_call(leaky_relu, locals(), "leaky_relu_" if inplace else "leaky_relu")
    _float_only(input, "leaky_relu_cpu")
    if inplace:
        return apply_inplace(_activations.LEAKY_RELU_INPLACE, input, negative_slope=negative_slope)
    return apply(_activations.LEAKY_RELU, input, negative_slope=negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``value`` where ``x <= threshold``, ``x`` elsewhere (ThresholdBackward0; in place
    ThresholdBackward1, which saves a clone of the input taken before the write, as torch)."""
    return _threshold(input, threshold, value, inplace)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _threshold(input, threshold, value, True)


def _threshold(input: Tensor, limit: float, value: float, inplace: bool) -> Tensor:
    if not inplace:
        return apply(_activations.THRESHOLD, input, threshold=limit, value=value)
    check_inplace(input)
    original = input.clone() if grad_mode.is_recording() and input.requires_grad else None
    op = _activations.THRESHOLD_INPLACE
    return apply_inplace(op, input, threshold=limit, value=value, original=original)


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()  # torch's F.sigmoid calls the method (what a non-tensor says, too)


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim) if dtype is None else input.softmax(dim, dtype=dtype)  # as torch's


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``softmax(-input, dim)`` (SoftmaxBackward0 over NegBackward0), as torch's Python."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return (-input).softmax(dim) if dtype is None else (-input).softmax(dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim) if dtype is None else input.log_softmax(dim, dtype=dtype)


def one_hot(input: Tensor, num_classes: int = -1) -> Tensor:
    """torch's one_hot: int64 ``(*input.shape, num_classes)``, 1 at each index (``num_classes`` -1:
    the largest index plus one), by scatter_ into zeros; torch's checks in its order."""
    if isinstance(num_classes, Tensor) and num_classes.numel() == 1 and not num_classes.is_floating_point():
        num_classes = int(num_classes)  # an int argument takes an integer tensor of one element
    if not isinstance(input, Tensor) or isinstance(num_classes, bool) or not isinstance(num_classes, int):
        raise invalid_call(one_hot, locals())
    if input.dtype is not dtypes.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    shape = tuple(input.shape)
    if input.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return _creation.zeros(*shape, num_classes, dtype=dtypes.int64, device=input.device)
    if int(input.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(input.max()) + 1
    elif num_classes <= int(input.max()):
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = _creation.zeros(*shape, num_classes, dtype=dtypes.int64, device=input.device)
    return out.scatter_(-1, input.unsqueeze(-1), 1)


# -- losses -----------------------------------------------------------------------------------
def _reduction_code(reduction: str) -> int:
    if reduction not in _losses.REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _losses.REDUCTIONS[reduction]


def _legacy_reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """The ``reduction`` string for the deprecated ``size_average``/``reduce`` arguments."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    result = "none" if not reduce else ("mean" if size_average else "sum")
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{result}' instead.",
        UserWarning,
        stacklevel=3,
    )
    return result


def _warn_size_mismatch(input: Tensor, target: Tensor) -> None:
    if target.size() != input.size():  # torch's order of reads (a non-tensor's error names size)
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


def _reduce(t: Tensor, reduction: str | int) -> Tensor:
    """ATen's apply_loss_reduction: ``t``, ``t.mean()`` or ``t.sum()`` (a name or its code)."""
    code = reduction if isinstance(reduction, int) else _reduction_code(reduction)
    return t if code == 0 else (t.mean() if code == 1 else t.sum())


@_autocast.policy("fp32")
def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean squared error (MseLossBackward0; broadcasting with torch's warning)."""
    _warn_size_mismatch(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        return _reduce(weight * (input - target) ** 2, reduction)
    input, target = _broadcast_pair(input, target)
    return apply(_losses.MSE_LOSS, input, target, reduction=_reduction_code(reduction))


@_autocast.policy("fp32")
def huber_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0, weight: Tensor | None = None
) -> Tensor:
    """Huber loss (HuberLossBackward0): quadratic below ``delta``, linear above; with ``weight``,
    the unreduced loss times it, then reduced as torch's Python code does."""
    _warn_size_mismatch(input, target)
    input, target = _broadcast_pair(input, target)
    code = _reduction_code(reduction if weight is None else "none")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    loss = apply(_losses.HUBER_LOSS, input, target, reduction=code, delta=delta)
    if weight is None:
        return loss
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction in ("sum", "mean"):
        return loss.sum() if reduction == "sum" else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def _broadcast_pair(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """torch.broadcast_tensors for two: each operand expanded (ExpandBackward0) only where its
    shape differs from the common one; torch's error where they do not broadcast."""
    if a.shape == b.shape:
        return a, b
    error = broadcast_mismatch([tuple(a.shape), tuple(b.shape)])
    if error is not None:
        raise RuntimeError(error)
    shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in (a, b))  # type: ignore[return-value]


@_autocast.policy("fp32")
def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean absolute error, as torch builds it: ``(input - target).abs()`` then the reduction."""
    _warn_size_mismatch(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    diff = (input - target).abs()
    if weight is not None:
        diff = diff * weight
    return _reduce(diff, reduction)


def _class_dim_last(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor, tuple[int, ...]]:
    """(N*d1*..., C) input and flat target for nll_loss, plus the shape of a 'none' result."""
    if input.dim() == 1:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if target.numel() != 1:
            raise ValueError(
                f"For 1D input, 1D target must have size 1, but got target size: {target.numel()}"
            )
        return input, target.reshape(()), ()
    n, c = input.shape[0], input.shape[1]
    if target.dim() == 0 or target.shape[0] != n:
        raise ValueError(
            f"Expected input batch_size ({n}) to match target batch_size "
            f"({target.shape[0] if target.dim() else 0})."
        )
    if input.dim() == 2:
        return input, target, (n,)
    spatial = tuple(input.shape[2:])
    if tuple(target.shape[1:]) != spatial:
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)}, target: {list(target.shape)})")
    perm = (0, *range(2, input.dim()), 1)
    return input.permute(*perm).reshape(-1, c), target.reshape(-1), (n, *spatial)


@_autocast.policy("fp32")
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of class indices (NllLossBackward0)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        raise invalid_call(nll_loss, locals(), "nll_loss_nd")
    code = _reduction_code(reduction)
    if target.dtype.is_floating_point:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_type_word(target)}")
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    flat, flat_target, none_shape = _class_dim_last(input, target)
    classes = flat.shape[-1]
    check_class_weight(weight, classes)
    t = flat_target.detach()
    tn = to_numpy(t._data)
    bad = (tn != ignore_index) & ((tn < 0) | (tn >= classes))
    if bad.any():
        raise IndexError(f"Target {int(tn[bad][0])} is out of bounds.")
    w = (
        weight.detach()
        if weight is not None
        else _creation.ones(classes, dtype=input.dtype, device=input.device)
    )
    out = apply(_losses.NLL_LOSS, flat, target=t, weight=w, ignore_index=ignore_index, reduction=code)
    if code == 0 and input.dim() > 2:
        out = out.reshape(none_shape) if none_shape else out.reshape(())
    return out


def check_class_weight(weight: Tensor | None, classes: int, prefix: str = "") -> None:
    """torch's check of a class weight: 1-d, one per class."""
    if weight is not None and (weight.dim() != 1 or weight.numel() != classes):
        raise RuntimeError(
            f"{prefix}weight tensor should be defined either for all {classes} classes or no classes but got "
            f"weight tensor of shape: {list(weight.shape)}"
        )


def _type_word(t: Tensor) -> str:
    return legacy_name(t.dtype).removeprefix("torch.").replace("Tensor", "")


@_autocast.policy("fp32")
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """``nll_loss(log_softmax(input, class_dim))`` for class indices; for class probabilities,
    ``-(target * log_softmax).sum(class_dim)`` reduced as torch does."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        raise invalid_call(cross_entropy, locals(), "cross_entropy_loss")
    code = _reduction_code(reduction)
    class_dim = 0 if input.dim() == 1 else 1
    logp = log_softmax(input, class_dim)
    if tuple(target.shape) == tuple(input.shape):  # torch reads a target of the input's shape: probabilities
        if not target.dtype.is_floating_point:
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{dtypes.scalar_type(target.dtype)}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        check_class_weight(weight, logp.shape[class_dim], "cross_entropy: ")
        return _cross_entropy_probabilities(logp, target, weight, code, class_dim, label_smoothing)
    loss = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return loss
    smooth = _smooth_term(logp, target, weight, ignore_index, code, class_dim)
    classes = logp.shape[class_dim]
    return apply(_losses.MUL_SCALAR, loss, other=1 - label_smoothing) + apply(
        _losses.MUL_SCALAR, smooth, other=label_smoothing / classes
    )


def _cross_entropy_probabilities(
    logp: Tensor, target: Tensor, weight: Tensor | None, code: int, class_dim: int, label_smoothing: float
) -> Tensor:
    """torch's graph for class-probability targets: ``-(logp * target [* weight])`` then
    ``sum(class_dim)`` (NegBackward0 <- SumBackward1) for 'none', ``sum()`` (NegBackward0 <-
    SumBackward0) for 'sum', and that divided by the integer ``numel // classes`` (DivBackward1)
    for 'mean'; label smoothing only rewrites the target."""
    classes = logp.shape[class_dim]
    if label_smoothing > 0:  # ATen's Tensor-Scalar mul and add (MulBackward1, AddBackward1)
        target = add_scalar(mul_scalar(target, 1 - label_smoothing), label_smoothing / classes)
    terms = logp * target
    if weight is not None:
        shape = [1] * logp.dim()
        shape[class_dim] = classes
        terms = terms * weight.view(shape)
    if code == 0:
        return -terms.sum(class_dim)
    if code == 1 and logp.numel() == 0:
        return -terms.sum().fill_(float("nan"))
    total = -terms.sum()
    return total if code == 2 else apply(_losses.DIV_SCALAR, total, other=logp.numel() // classes)


def _smooth_term(
    logp: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, code: int, class_dim: int
) -> Tensor:
    """The uniform-target part of label-smoothed cross entropy as torch builds it:
    ``-(logp [* weight]).sum(class_dim)``, ignored targets masked to 0 in place, then reduced like
    the nll part ('mean' divides by the summed weights, or the count, of the kept targets)."""
    terms = logp
    if weight is not None:
        shape = [1] * logp.dim()
        shape[class_dim] = logp.shape[class_dim]
        terms = terms * weight.view(shape)
    ignored = target == ignore_index
    smooth = (-terms.sum(class_dim)).masked_fill_(ignored, 0.0)
    if code == 0:
        return smooth
    if code == 2:
        return smooth.sum()
    if weight is None:
        return smooth.sum() / (~ignored).sum()
    return smooth.sum() / weight.gather(0, target.masked_select(~ignored).flatten()).sum()


@_autocast.policy("fp32")
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Binary cross entropy on probabilities (BinaryCrossEntropyBackward0; logs clamped at -100)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    code = _reduction_code(reduction)
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None and weight.requires_grad:
        raise RuntimeError(_not_differentiable("binary_cross_entropy", "weight"))
    w = weight.expand(tuple(input.shape)) if weight is not None else None
    return apply(_losses.BINARY_CROSS_ENTROPY, input, target, weight=w, reduction=code)


def _not_differentiable(function: str, argument: str) -> str:
    return (
        f"The function '{function}' is not differentiable with respect to argument '{argument}'. "
        "This input cannot have requires_grad True."
    )


@_autocast.policy("fp32")
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Numerically stable sigmoid + binary cross entropy (BinaryCrossEntropyWithLogitsBackward0)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    code = _reduction_code(reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    optional = [("weight", weight), ("pos_weight", pos_weight)]
    for argument, value in optional:
        if value is not None and value.requires_grad:
            raise RuntimeError(_not_differentiable("binary_cross_entropy_with_logits", argument))
    w = weight.expand(tuple(input.shape)) if weight is not None else None
    pw = pos_weight.expand(tuple(input.shape)) if pos_weight is not None else None
    return apply(_losses.BCE_WITH_LOGITS, input, target, weight=w, pos_weight=pw, reduction=code)


@_autocast.policy("fp32")
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """Quadratic below ``beta``, linear above (SmoothL1LossBackward0); with ``beta`` 0 it is
    l1_loss; broadcasting with torch's warning."""
    _warn_size_mismatch(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    input, target = _broadcast_pair(input, target)
    code = _reduction_code(reduction)
    if beta == 0.0:
        return _reduce((input - target).abs(), reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return apply(_losses.SMOOTH_L1_LOSS, input, target, reduction=code, beta=beta)


@_autocast.policy("fp32")
def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``log(1 + exp(-target * input))`` (SoftMarginLossBackward0; no gradient for the target)."""
    code = _reduction_code(_legacy_reduction(size_average, reduce, reduction))
    if target.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError(_not_differentiable("soft_margin_loss", "target"))
    input, target = _broadcast_pair(input, target)
    return apply(_losses.SOFT_MARGIN_LOSS, input, target=target.detach(), reduction=code)


KL_DIV_MEAN = (
    "reduction: 'mean' divides the total loss by both the batch size and the support size.'batchmean' "
    "divides only by the batch size, and aligns with the KL div math definition.'mean' will be changed "
    "to behave the same as 'batchmean' in the next major release."
)


@_autocast.policy("fp32")
def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """torch.kl_div's composite: ``exp(target) * (target - input)`` for a log target, else
    ``xlogy(target, target) - target * input``; 'batchmean' is the sum over the batch size, 'mean'
    warns that it divides by the support size too."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn(KL_DIV_MEAN, UserWarning, stacklevel=2)
    code = _reduction_code("sum" if reduction == "batchmean" else reduction)
    if not input.dtype.is_floating_point or not target.dtype.is_floating_point:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        output = target.exp() * (target - input)
    else:
        output = api.FUNCTIONS["xlogy"](target, target) - target * input
    reduced = _reduce(output, code)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


@_autocast.policy("fp32")
def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)`` (ClampMinBackward0, clamped in place)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    code = _reduction_code(reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} "
        )
    output = add_scalar(-target * (input1 - input2), margin).clamp_min_(0)
    return _reduce(output, code)


@_autocast.policy("fp32")
def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``input`` where the target is 1, ``max(0, margin - input)`` where it is -1 (the two
    selected by where and added)."""
    code = _reduction_code(_legacy_reduction(size_average, reduce, reduction))
    zeros = _creation.zeros_like(input)
    margin_clamp = scalar_minus(margin, input).clamp_min_(0)
    output = where(target != 1, margin_clamp, zeros) + where(target != -1, input, zeros)
    return _reduce(output, code)


@_autocast.policy("fp32")
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``exp(input) - target * input`` (or ``input - target * log(input + eps)``), with
    Stirling's term for targets above 1 when ``full``."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * add_scalar(input, eps).log()
    if full:
        stirling = target * target.log() - target + mul_scalar(mul_scalar(target, 2 * math.pi).log(), 0.5)
        loss += stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(
    input: Tensor, target: Tensor, var: Any, full: bool = False, eps: float = 1e-6, reduction: str = "mean"
) -> Tensor:
    """``0.5 * (log(var) + (input - target)^2 / var)`` with ``var`` clamped to ``eps`` (outside
    autograd), as torch's Python."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _creation.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        else:
            mismatched = sum(y for x, y in zip(input.size(), var.size(), strict=False) if x != y)
            if input.dim() != var.dim() or mismatched != 1:
                raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with grad_mode.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


@_autocast.policy("fp32")
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with pairwise_distance (the
    smaller of the negative's two distances with ``swap``)."""
    code = _reduction_code(_legacy_reduction(size_average, reduce, reduction))
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D inputs"
        )
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = api.FUNCTIONS["min"](dist_neg, pairwise_distance(positive, negative, p, eps))
    output = (add_scalar(dist_pos, margin) - dist_neg).clamp_min(0)
    return _reduce(output, code)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Any = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """torch's Python: ``clamp_min(margin + d(a, p) - d(a, n), 0)`` with ``distance_function``
    (pairwise_distance by default; the smaller of d(a, n) and d(p, n) with ``swap``)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D inputs"
        )
    distance = distance_function if distance_function is not None else pairwise_distance
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = api.FUNCTIONS["minimum"](dist_neg, distance(positive, negative))
    return _reduce((margin + dist_pos - dist_neg).clamp_min(0), reduction)


COSINE_EPSILON = float(np.float32(1e-12))  # ATen's constexpr float EPSILON, passed as a double


@_autocast.policy("fp32")
def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """ATen's composite: ``cos = sum(x1 x2) / sqrt((sum(x1^2) + eps) (sum(x2^2) + eps))``, then
    ``1 - cos`` where the target is 1 and ``max(cos - margin, 0)`` where it is -1 (0 elsewhere)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    code = _reduction_code(reduction)
    dim = target.dim()
    if dim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != dim + 1 or input2.dim() != dim + 1:
        raise RuntimeError(
            f"{dim}D target tensor expects {dim + 1}D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}.".replace("'", "")
        )
    prod_sum = (input1 * input2).sum(dim)
    mag_square1 = add_scalar((input1 * input1).sum(dim), COSINE_EPSILON)
    mag_square2 = add_scalar((input2 * input2).sum(dim), COSINE_EPSILON)
    cos = prod_sum / (mag_square1 * mag_square2).sqrt_()
    zeros = _creation.zeros_like(cos)
    pos = _creation.full_like(cos, 1).sub_(cos)
    neg = sub_scalar(cos, margin).clamp_min_(0)
    return _reduce(where(target == 1, pos, zeros) + where(target == -1, neg, zeros), code)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """torch's Python: ``-(t logsigmoid(x) + (1 - t) logsigmoid(-x))`` (times ``weight``) summed
    over the classes and divided by their count, then reduced."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


def _margin_frames(input: Tensor) -> int:
    """The frame count of torch's margin-loss shape checks, which refuse empty or N-d inputs."""
    dims = input.dim()
    if not (dims == 0 or dims <= 2 and input.shape[-1] != 0):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            + str(list(input.shape))
        )
    return input.shape[0] if dims == 2 else 1


def _margin_dtypes(input: Tensor, target: Tensor, kernel: str) -> None:
    if target.dtype is not dtypes.int64:
        raise RuntimeError(f"expected scalar type Long but found {dtypes.scalar_type(target.dtype)}")
    if not input.dtype.is_floating_point or input.dtype in (dtypes.float16, dtypes.bfloat16):
        raise dtypes.kernel_missing(kernel, input.dtype)


@_autocast.policy("fp32")
def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """torch's kernel (MultiMarginLossBackward0): per frame the mean over the other classes of
    ``max(0, margin - x[y] + x[d])^p`` (times ``weight[y]``)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    code = _reduction_code(reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    nframe = _margin_frames(input)
    if target.dim() > 1 or target.numel() != nframe:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples "
            f"(batch size). Expected target size [{nframe}], but got {list(target.shape)}. Input has shape "
            f"{list(input.shape)}."
        )
    classes = 1 if input.dim() == 0 else input.shape[-1]
    if weight is not None:
        if weight.numel() != classes:
            raise RuntimeError(f"inconsistent weight size, expected {classes} but got {list(weight.shape)}")
        if weight.requires_grad and grad_mode.is_grad_enabled():
            raise RuntimeError(_not_differentiable("multi_margin_loss", "weight"))
    _margin_dtypes(input, target, "multi_margin_loss_cpu_kernel")
    if weight is not None and weight.dtype is not input.dtype:
        names = (dtypes.scalar_type(input.dtype), dtypes.scalar_type(weight.dtype))
        raise RuntimeError("expected scalar type {} but found {}".format(*names))
    if bool(((target < 0) | (target >= classes)).any()):
        raise RuntimeError("target out of range")
    w = None if weight is None else weight.detach()
    options = {"p": int(p), "margin": float(margin), "weight": w, "reduction": code}
    return apply(_margin_losses.MULTI_MARGIN_LOSS, input, target=target, **options)


@_autocast.policy("fp32")
def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """torch's kernel (MultilabelMarginLossBackward0): per frame the sum of ``max(0, 1 - x[y] +
    x[d])`` over its targets ``y`` (the entries before the first -1) and other classes ``d``,
    divided by the class count."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    code = _reduction_code(reduction)
    nframe = _margin_frames(input)
    classes = 1 if input.dim() == 0 else input.shape[-1]
    expected = (nframe, classes) if input.dim() == 2 else None
    if (tuple(target.shape) != expected) if expected else (target.dim() > 1 or target.numel() != classes):
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    _margin_dtypes(input, target, "multilabel_margin_loss_forward_out_frame")
    if target.numel() and bool(((target < -1) | (target >= classes)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    return apply(_margin_losses.MULTILABEL_MARGIN_LOSS, input, target=target, reduction=code)


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """torch's Python: softmax of ``(logits - log(Exponential(1) draws)) / tau`` (the draws from
    torch's CPU stream); with ``hard`` the one-hot of its maximum, differentiated as the soft sample
    (``y_hard - y_soft.detach() + y_soft``)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_creation.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _creation.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
