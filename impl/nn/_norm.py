"""Batch, layer and group normalisation (NativeBatchNormBackward0, NativeLayerNormBackward0,
NativeGroupNormBackward0).

Each normalises ``x`` by a mean and a reciprocal standard deviation (rstd) of a group of its
elements: per channel over the batch and the spatial dims (batch norm; or the running statistics
in eval mode), per sample over the last dims (layer norm), per sample and group of channels
(group norm). The statistics are computed in float64 and rounded to the input's dtype, then the
output is ``x * scale + shift`` with ATen's per-slot scale and shift. The backward formulas
recompute the statistics from the saved input with differentiable ops, so that a gradient taken
with create_graph=True differentiates again to torch's values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import _creation, dtypes
from impl import _grad_mode as grad_mode
from impl._ops.elementwise import add_scalar
from impl._ops.table import D, OpDef, apply
from impl._tensor import Tensor
from impl._warn import warn_once


def _stats(a: Any, axes: tuple[int, ...], eps: float) -> tuple[Any, Any, Any]:
    """Mean, rstd and the sum of squared deviations over ``axes`` (kept), in float64."""
    wide = a.astype(np.float64)
    mean = wide.mean(axis=axes, keepdims=True)
    squares = ((wide - mean) ** 2).sum(axis=axes, keepdims=True)
    count = int(np.prod([a.shape[i] for i in axes], dtype=np.int64))
    var = squares / max(count, 1)
    return mean, 1.0 / np.sqrt(var + eps), squares


def _affine_shape(ndim: int, channels_dim: int, size: int) -> tuple[int, ...]:
    shape = [1] * ndim
    shape[channels_dim] = size
    return tuple(shape)


# -- batch norm -----------------------------------------------------------------------------------
def _batch_norm_fwd(xp: Any, x: Any, w: Any, b: Any, mean: Any, rstd: Any, training: bool, eps: float) -> Any:
    """``x * alpha + beta`` with ATen's alpha = rstd * weight, beta = bias - mean * alpha."""
    shape = _affine_shape(x.ndim, 1, x.shape[1])
    alpha = rstd._data.reshape(shape) * w.reshape(shape)
    beta = b.reshape(shape) - mean._data.reshape(shape) * alpha
    return (x * alpha + beta).astype(x.dtype, copy=False)


def _reduce_dims(x: Tensor) -> tuple[int, ...]:
    return (0, *range(2, x.dim()))


def _batch_stats(x: Tensor, c: Any) -> tuple[Tensor, Tensor]:
    """mean and rstd as the formulas see them: of the saved input (training, differentiable) or the
    running statistics (eval), shaped to broadcast over the input."""
    shape = _affine_shape(x.dim(), 1, x.shape[1])
    if c.training:
        dims = _reduce_dims(x)
        mean = x.mean(dims, keepdim=True)
        var = ((x - mean) * (x - mean)).mean(dims, keepdim=True)
        return mean, (var + c.eps).rsqrt()
    return c.mean.reshape(shape), c.rstd.reshape(shape)


def _normalized_grad(gxhat: Tensor, xhat: Tensor, rstd: Tensor, dims: tuple[int, ...]) -> Tensor:
    """The input's gradient through ``xhat = (x - mean(x)) * rstd(x)`` over ``dims``."""
    centred = gxhat - gxhat.mean(dims, keepdim=True)
    return (centred - xhat * (gxhat * xhat).mean(dims, keepdim=True)) * rstd


def _bn_input_grad(g: Tensor, c: Any) -> Tensor:
    x, w = c.input, c.weight
    shape = _affine_shape(x.dim(), 1, x.shape[1])
    mean, rstd = _batch_stats(x, c)
    gxhat = g * w.reshape(shape)
    if not c.training:
        return gxhat * rstd
    return _normalized_grad(gxhat, (x - mean) * rstd, rstd, _reduce_dims(x))


def _bn_weight_grad(g: Tensor, c: Any) -> Tensor:
    x = c.input
    mean, rstd = _batch_stats(x, c)
    return (g * ((x - mean) * rstd)).sum(_reduce_dims(x))


_BN_USES = "input weight mean rstd training eps"
NATIVE_BATCH_NORM = OpDef(
    "NativeBatchNormBackward0",
    _batch_norm_fwd,
    ("input", "weight", "bias"),
    {
        "input": D(_BN_USES, _bn_input_grad),
        "weight": D(_BN_USES, _bn_weight_grad),
        "bias": D("", lambda g, c: g.sum(_reduce_dims(g))),
    },
    jvp=lambda c: _bn_jvp(c),
)


def _affine_jvp(c: Any, input_term: Tensor | None, normalized: Tensor, shape: tuple) -> Tensor:
    """The jvp of ``normalized * weight + bias``: the input's term (given), plus ``normalized *
    weight_t + bias_t``, weight and bias viewed as ``shape``."""
    terms = [] if input_term is None else [input_term]
    if c.tangent("weight") is not None:
        terms.append(normalized * c.weight_t.reshape(shape))
    if c.tangent("bias") is not None:
        terms.append(c.bias_t.reshape(shape))
    return c.like_result(sum(terms[1:], terms[0]))


def _bn_jvp(c: Any) -> Tensor:
    """torch's batch_norm_jvp: the normalisation is linear and symmetric within a channel, whose
    weight is one number, so the input's term is its backward formula with the tangent."""
    x = c.input
    mean, rstd = _batch_stats(x, c)
    term = None if c.tangent("input") is None else _bn_input_grad(c.input_t, c)
    return _affine_jvp(c, term, (x - mean) * rstd, _affine_shape(x.dim(), 1, x.shape[1]))


def _placeholders(weight: Tensor | None, bias: Tensor | None, shape: tuple, input: Tensor) -> tuple:
    """torch's undefined weight and bias as ones and zeros that require no grad (no edge)."""
    kw = {"dtype": input.dtype, "device": input.device}
    return (
        weight if weight is not None else _creation.ones(shape, **kw),
        bias if bias is not None else _creation.zeros(shape, **kw),
    )


def _update_running(running: Tensor, value: Any, momentum: float) -> None:
    """ATen's ``momentum * value + (1 - momentum) * running``, computed in double, written in place."""
    old = running._data.astype(np.float64)
    new = momentum * value.reshape(-1) + (1 - momentum) * old
    with grad_mode.no_grad():
        running.copy_(Tensor._from_array(new.astype(running._data.dtype)))


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel (dim 1) by the batch's statistics (training; the running statistics,
    updated in place with the unbiased variance, when given) or by the running statistics."""
    channels = input.shape[1] if input.dim() > 1 else 1
    if training:
        size = tuple(input.shape)
        count = int(np.prod(size, dtype=np.int64)) // max(channels, 1)
        if count == 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input size "
                f"torch.Size({list(size)})"
            )
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is None and not training:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    if training:
        mean, rstd, squares = _stats(input._data, _reduce_dims(input), eps)
        n = input.numel() // channels
        if running_mean is not None:
            _update_running(running_mean, mean, momentum)
        if running_var is not None:
            _update_running(running_var, squares / (n - 1), momentum)
        mean, rstd = mean.reshape(-1), rstd.reshape(-1)
    else:
        mean = running_mean._data.astype(np.float64)  # type: ignore[union-attr]
        rstd = 1.0 / np.sqrt(running_var._data.astype(np.float64) + eps)  # type: ignore[union-attr]
    dt = input._data.dtype
    mean_t, rstd_t = (Tensor._from_array(a.astype(dt)) for a in (mean, rstd))
    w, b = _placeholders(weight, bias, (channels,), input)
    return apply(NATIVE_BATCH_NORM, input, w, b, mean=mean_t, rstd=rstd_t, training=bool(training), eps=eps)


# -- layer norm -----------------------------------------------------------------------------------
def _layer_norm_fwd(xp: Any, x: Any, w: Any, b: Any, normalized_shape: tuple, eps: float) -> Any:
    """ATen's ``(x * rstd + (-rstd * mean)) * weight + bias`` per row."""
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean, rstd, _ = _stats(x, axes, eps)
    mean, rstd = mean.astype(x.dtype), rstd.astype(x.dtype)
    return ((x * rstd + (-rstd * mean)) * w + b).astype(x.dtype, copy=False)


def _row_stats(x: Tensor, dims: tuple[int, ...], eps: float) -> tuple[Tensor, Tensor]:
    mean = x.mean(dims, keepdim=True)
    var = ((x - mean) * (x - mean)).mean(dims, keepdim=True)
    return mean, (var + eps).rsqrt()


def _ln_dims(c: Any) -> tuple[int, ...]:
    x = c.input
    return tuple(range(x.dim() - len(c.normalized_shape), x.dim()))


def _ln_input_grad(g: Tensor, c: Any) -> Tensor:
    x, dims = c.input, _ln_dims(c)
    mean, rstd = _row_stats(x, dims, c.eps)
    return _normalized_grad(g * c.weight, (x - mean) * rstd, rstd, dims)


def _ln_weight_grad(g: Tensor, c: Any) -> Tensor:
    x, dims = c.input, _ln_dims(c)
    mean, rstd = _row_stats(x, dims, c.eps)
    lead = tuple(range(x.dim() - len(dims)))
    return (g * ((x - mean) * rstd)).sum(lead) if lead else g * ((x - mean) * rstd)


def _ln_bias_grad(g: Tensor, c: Any) -> Tensor:
    lead = tuple(range(g.dim() - len(c.normalized_shape)))
    return g.sum(lead) if lead else g.clone()


_LN_USES = "input weight normalized_shape eps"
NATIVE_LAYER_NORM = OpDef(
    "NativeLayerNormBackward0",
    _layer_norm_fwd,
    ("input", "weight", "bias"),
    {
        "input": D(_LN_USES, _ln_input_grad),
        "weight": D(_LN_USES, _ln_weight_grad),
        "bias": D("normalized_shape", _ln_bias_grad),
    },
    jvp=lambda c: _ln_jvp(c),
)


def _ln_jvp(c: Any) -> Tensor:
    """torch's layer_norm_jvp: the normalised input's tangent (the normalisation's Jacobian is
    symmetric: ``_normalized_grad`` of the tangent) scaled by the weight, plus the affine terms."""
    x, dims = c.input, _ln_dims(c)
    mean, rstd = _row_stats(x, dims, c.eps)
    normalized = (x - mean) * rstd
    term = None
    if c.tangent("input") is not None:
        term = _normalized_grad(c.input_t, normalized, rstd, dims) * c.weight
    return _affine_jvp(c, term, normalized, tuple(c.weight.shape))


def _normalized_shape(
    input: Tensor, normalized_shape: Any, weight: Tensor | None, bias: Tensor | None, star: str = "*, "
) -> tuple:
    """``normalized_shape`` as a tuple, checked as torch's layer_norm and rms_norm check it
    against the weight, the bias and the input's last dims (``star``: what their messages put
    before those dims: layer_norm's "*, ", rms_norm's "*")."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                f"{list(t.shape)} and normalized_shape = {list(shape)}"
            )
    k = len(shape)
    if input.dim() < k or tuple(input.shape[input.dim() - k :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [{star}"
            f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}"
        )
    return shape


def layer_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dims, then scale and shift elementwise."""
    shape = _normalized_shape(input, normalized_shape, weight, bias)
    w, b = _placeholders(weight, bias, shape, input)
    return apply(NATIVE_LAYER_NORM, input, w, b, normalized_shape=shape, eps=eps)


# -- group norm -----------------------------------------------------------------------------------
def _group_norm_fwd(xp: Any, x: Any, w: Any, b: Any, group: int, eps: float) -> Any:
    """ATen's per-channel ``x * scale + bias`` with scale = rstd * weight, bias = -scale * mean + beta."""
    n, c = x.shape[:2]
    grouped = x.reshape(n, group, -1)
    mean, rstd, _ = _stats(grouped, (2,), eps)
    per = c // group
    mean = np.repeat(mean.astype(x.dtype), per, axis=1).reshape(n, c)
    rstd = np.repeat(rstd.astype(x.dtype), per, axis=1).reshape(n, c)
    scale = rstd * w.reshape(1, c)
    shift = -scale * mean + b.reshape(1, c)
    shape = (n, c, *([1] * (x.ndim - 2)))
    return (x * scale.reshape(shape) + shift.reshape(shape)).astype(x.dtype, copy=False)


def _gn_parts(g: Tensor, c: Any) -> tuple[Tensor, Tensor, Tensor, tuple]:
    """The input and the gradient of xhat grouped as (N, group, -1), and that group's xhat, rstd."""
    x = c.input
    n, ch = x.shape[:2]
    affine = _affine_shape(x.dim(), 1, ch)
    grouped = x.reshape(n, c.group, -1)
    mean, rstd = _row_stats(grouped, (2,), c.eps)
    gxhat = (g * c.weight.reshape(affine)).reshape(n, c.group, -1)
    return gxhat, (grouped - mean) * rstd, rstd, tuple(x.shape)


def _gn_input_grad(g: Tensor, c: Any) -> Tensor:
    gxhat, xhat, rstd, shape = _gn_parts(g, c)
    return _normalized_grad(gxhat, xhat, rstd, (2,)).reshape(shape)


def _gn_weight_grad(g: Tensor, c: Any) -> Tensor:
    _, xhat, _, shape = _gn_parts(g, c)
    return (g * xhat.reshape(shape)).sum(_reduce_dims(g))


_GN_USES = "input weight group eps"
NATIVE_GROUP_NORM = OpDef(
    "NativeGroupNormBackward0",
    _group_norm_fwd,
    ("input", "weight", "bias"),
    {
        "input": D(_GN_USES, _gn_input_grad),
        "weight": D(_GN_USES, _gn_weight_grad),
        "bias": D("", lambda g, c: g.sum(_reduce_dims(g))),
    },
    jvp=lambda c: _gn_jvp(c),
)


def _gn_jvp(c: Any) -> Tensor:
    """torch's group_norm_jvp: the tangent normalised within each group, scaled by the weight, plus
    the affine terms."""
    x = c.input
    n, ch = x.shape[:2]
    affine = _affine_shape(x.dim(), 1, ch)
    grouped = x.reshape(n, c.group, -1)
    mean, rstd = _row_stats(grouped, (2,), c.eps)
    normalized = (grouped - mean) * rstd
    term = None
    if c.tangent("input") is not None:
        tangent = _normalized_grad(c.input_t.reshape(n, c.group, -1), normalized, rstd, (2,))
        term = tangent.reshape(tuple(x.shape)) * c.weight.reshape(affine)
    return _affine_jvp(c, term, normalized.reshape(tuple(x.shape)), affine)


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each sample's groups of channels, then scale and shift per channel."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    n, c = input.shape[:2]
    if c % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{list(input.shape)} and num_groups={num_groups}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in input, but got "
                f"{name} of shape {list(t.shape)} and input of shape {list(input.shape)}"
            )
    spatial = int(np.prod(input.shape[2:], dtype=np.int64))
    if n * c // num_groups * spatial == 1:  # (F.group_norm's _verify_batch_size)
        size = [n * c // num_groups, num_groups, *input.shape[2:]]
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
    w, b = _placeholders(weight, bias, (c,), input)
    return apply(NATIVE_GROUP_NORM, input, w, b, group=int(num_groups), eps=eps)


# -- rms norm, instance norm ----------------------------------------------------------------------
RMS_MISMATCH = (
    "Mismatch dtype between input and weight: input dtype = {}, weight dtype = {}, Cannot dispatch to "
    "fused implementation. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
    "layer_norm.cpp:346.)"
)
CPP_TYPE_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"
}
"""The C++ type names torch's messages give the dtypes (caffe2::TypeMeta's)."""


def _inverse_rms(x: Tensor, dims: list[int], eps: float) -> Tensor:
    """``rsqrt(mean(x^2 over dims, keepdim) + eps)``, as ATen's ops (AddBackward1: add.Scalar)."""
    return add_scalar(x.pow(2).mean(dims, keepdim=True), eps).rsqrt()


def rms_norm(
    input: Tensor, normalized_shape: Any, weight: Tensor | None = None, eps: float | None = None
) -> Tensor:
    """ATen's composite: ``x * rsqrt(mean(x^2 over the last dims) + eps)`` (times ``weight``), in
    float32 for the half types; ``eps`` defaults to the computation dtype's machine epsilon (a
    given one is rounded to float32 there). (torch runs a fused kernel where nothing requires
    grad; it gives the composite's values.) A weight of another dtype warns once, as torch's."""
    shape = _normalized_shape(input, normalized_shape, weight, None, star="*")
    if weight is not None and weight.dtype is not input.dtype:
        names = (CPP_TYPE_NAMES.get(t.dtype.name, t.dtype.name) for t in (input, weight))
        warn_once("rms_norm fused", RMS_MISMATCH.format(*names), stacklevel=3)
    dims = [input.dim() - i - 1 for i in range(len(shape))]
    x = input if input.dtype in (dtypes.float32, dtypes.float64) else input.to(dtypes.float32)
    if x.dtype is dtypes.float32:
        eps = float(np.float32(np.finfo(np.float32).eps if eps is None else eps))
    elif eps is None:
        eps = float(np.finfo(np.float64).eps)
    out = x.mul(_inverse_rms(x, dims, eps))
    if weight is not None:
        out = out.mul(weight)
    return out.type_as(input)


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """ATen's composite: batch norm of the input viewed as one sample of ``batch * channels``
    channels, weight, bias and running statistics repeated per sample (RepeatBackward0), viewed
    back; the running statistics become the mean of their per-sample updates."""
    if use_input_stats and int(np.prod(input.shape[2:], dtype=np.int64)) == 1:
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size {input.size()}"
        )
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when use_input_stats is false"
        )
    b, c = input.shape[0], input.shape[1]
    repeated = [None if t is None else t.repeat(b) for t in (weight, bias, running_mean, running_var)]
    reshaped = input.contiguous().view(1, b * c, *input.shape[2:])
    weight, bias, means, variances = repeated
    out = batch_norm(reshaped, means, variances, weight, bias, use_input_stats, momentum, eps)
    with grad_mode.no_grad():
        for running, updated in zip((running_mean, running_var), (means, variances), strict=True):
            if running is not None:
                running.copy_(updated.view(b, c).mean(0))
    return out.view(input.shape)
