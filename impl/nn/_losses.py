"""The losses of nn.functional as ops: mse_loss, binary_cross_entropy (with logits too) and
nll_loss (with nll_loss_backward for the next order), with torch's reductions and grad_fn names;
and the Scalar overloads torch's C++ losses divide and multiply by (DivBackward1, MulBackward1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import _creation
from impl._ops.cascade_sum import cascade_mean, cascade_sum, summable
from impl._ops.cpu_kernels import vector_elements
from impl._ops.elementwise import add_scalar
from impl._ops.pointwise_ternary import where
from impl._ops.table import D, OpDef, apply, auto_linear, separable, separable_dense
from impl._tensor import Tensor
from impl.nn._activations import LOG_SIGMOID, vector_exp_of

REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}
EPSILON = 1e-12  # torch's clamp of x*(1-x) in binary_cross_entropy's backward
AVX2_BYTES = 32  # kernels torch registers without ALSO_REGISTER_AVX512_DISPATCH run AVX2 code on AVX512


def _reduce_array(xp: Any, a: Any, reduction: int) -> Any:
    """The unreduced loss ``a`` reduced as torch's apply_loss_reduction: ``mean()`` or ``sum()``
    (on the CPU in the order of torch's kernel)."""
    if reduction and xp is np and summable(a.dtype):
        return (cascade_mean if reduction == 1 else cascade_sum)(a, None, False, a.dtype)
    if reduction == 1:
        return xp.mean(a) if a.size else xp.asarray(float("nan"), dtype=a.dtype)
    if reduction == 2:
        return xp.sum(a)
    return a


def _scale_back(grad: Any, c: Any, name: str = "self") -> Any:
    """The incoming gradient of an elementwise loss spread back over the elements."""
    if c.reduction == 1:
        numel = 1
        for s in c.shape(name):
            numel *= s
        return grad / numel
    return grad


# -- arithmetic -------------------------------------------------------------------------------
DIV_SCALAR = OpDef(
    "DivBackward1",
    lambda xp, a, other: (a / a.dtype.type(other)).astype(a.dtype),
    derivatives={"self": D("other", lambda g, c: g / c.other)},
    iterator_operands=("self", "other"),
)
"""ATen's ``div(Tensor, Scalar)`` (a Python ``x / 2`` is ``div(Tensor, Tensor)``, DivBackward0):
what torch's C++ losses divide by, e.g. cross_entropy's mean over probability targets."""


MUL_SCALAR = OpDef(
    "MulBackward1",
    lambda xp, a, other: (a * a.dtype.type(other)).astype(a.dtype),
    derivatives={"self": D("other", lambda g, c: g * c.other)},
    iterator_operands=("self", "other"),
)
"""ATen's ``mul(Tensor, Scalar)`` (MulBackward1), e.g. label smoothing's weights in cross_entropy."""


# -- losses -----------------------------------------------------------------------------------
def _mse_fwd(xp: Any, a: Any, t: Any, reduction: int) -> Any:
    d = a - t
    return _reduce_array(xp, d * d, reduction)


def _mse_grad(sign: int) -> Any:
    """torch's mse_loss_backward: ``norm * (self - target) * grad`` with ``norm`` = 2 / numel for
    'mean' (2 otherwise) rounded to the loss dtype first; the order matters in float32, where
    Adam turns a last-bit difference of a cancelling gradient into a whole step."""

    def grad(g: Any, c: Any) -> Any:
        numel = 1
        for s in c.shape("self"):
            numel *= s
        norm = 2.0 / numel if c.reduction == 1 else 2.0
        diff = c.self - c.target if sign > 0 else c.target - c.self
        return diff * norm * g

    return grad


MSE_LOSS = OpDef(
    "MseLossBackward0",
    _mse_fwd,
    ("self", "target"),
    {"self": D("self target reduction", _mse_grad(1)), "target": D("self target reduction", _mse_grad(-1))},
    promote="common",
    jvp=separable_dense,  # apply_loss_reduction(mse_loss_backward(self_t, ...) + (target_t, ...))
)


def _huber_fwd(xp: Any, a: Any, t: Any, reduction: int, delta: float) -> Any:
    """torch's huber kernel: ``0.5 * z * z`` below ``delta``, else ``delta * (z - 0.5 * delta)``,
    with ``z = |a - t|``, in the loss dtype."""
    z = xp.abs(a - t)
    d, half = a.dtype.type(delta), a.dtype.type(0.5)
    return _reduce_array(xp, xp.where(z < d, half * z * z, d * (z - half * d)).astype(a.dtype), reduction)


def _huber_grad(first: str, second: str) -> Any:
    """torch's huber_loss_backward(grad, first, second), ``x = first - second``, ``norm`` 1 / numel
    for 'mean' (the target's gradient swaps the two): ``norm * x * grad`` inside ``delta``; at or
    beyond it ``norm * grad`` times the double ``delta`` in the kernel's scalar loop, but ``norm *
    delta * grad`` in the loss dtype where its (AVX2) vector loop runs (``vector_elements``);
    negated below ``-delta``."""

    def grad(g: Any, c: Any) -> Any:
        a, b = getattr(c, first), getattr(c, second)
        x = a - b
        numel = 1
        for s in c.shape("self"):
            numel *= s
        norm, delta = (x._data.dtype.type(v) for v in (1.0 / numel if c.reduction == 1 else 1.0, c.delta))
        inside = x * float(norm) * g
        scalar = (g * float(norm)).double() * c.delta  # the scalar loop multiplies by the double delta
        outside = scalar if x.dtype is scalar.dtype else scalar.to(x.dtype)
        vectors = vector_elements(tuple(x.shape), [a._data, b._data, g._data], AVX2_BYTES)
        if vectors is not None:
            outside = where(Tensor._from_array(vectors), g * float(norm * delta), outside)
        return where(x <= -c.delta, -outside, where(x >= c.delta, outside, inside))

    return grad


HUBER_LOSS = OpDef(
    "HuberLossBackward0",
    _huber_fwd,
    ("self", "target"),
    {
        "self": D("self target reduction delta", _huber_grad("self", "target")),
        "target": D("self target reduction delta", _huber_grad("target", "self")),
    },
    promote="common",
)


def _bce_fwd(xp: Any, x: Any, t: Any, weight: Any, reduction: int) -> Any:
    if x.size and bool(((x < 0) | (x > 1)).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    with getattr(xp, "errstate", _no_errstate)(divide="ignore"):
        log_x, log_1mx = xp.log(x), xp.log(1 - x)
    loss = -(t * xp.maximum(log_x, -100) + (1 - t) * xp.maximum(log_1mx, -100))
    if weight is not None:
        loss = loss * weight._data
    return _reduce_array(xp, loss.astype(x.dtype), reduction)


def _weighted(grad: Any, weight: Any) -> Any:
    return grad if weight is None else grad * weight


def _bce_self_grad(g: Any, c: Any) -> Any:
    x, t = c.self, c.target
    denom = (x * (1 - x)).clamp(min=EPSILON)
    return _scale_back(_weighted(g * (x - t) / denom, c.weight), c)


def _bce_target_grad(g: Any, c: Any) -> Any:
    """binary_cross_entropy_target_backward: ``-logit(self)``, unclamped (infinite at 0 and 1)."""
    d = c.self.logit().neg()
    return _scale_back(_weighted(g * d, c.weight), c)


BINARY_CROSS_ENTROPY = OpDef(
    "BinaryCrossEntropyBackward0",
    _bce_fwd,
    ("self", "target"),
    {
        "self": D("self target weight reduction", _bce_self_grad),
        "target": D("self weight reduction", _bce_target_grad),
    },
    jvp=separable,  # binary_cross_entropy_jvp
)
"""``weight`` is an attribute, not an input: torch's node has edges for self and target only."""


def _bce_logits_fwd(xp: Any, x: Any, t: Any, weight: Any, pos_weight: Any, reduction: int) -> Any:
    log_sig_neg = xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0)  # -log(sigmoid(x))
    coef = 1 if pos_weight is None else 1 + (pos_weight._data - 1) * t
    loss = (1 - t) * x + coef * log_sig_neg
    return _reduce_array(xp, (loss if weight is None else loss * weight._data).astype(x.dtype), reduction)


def _bce_logits_self_grad(g: Any, c: Any) -> Any:
    x, t, pw = c.self, c.target, c.pos_weight
    d = x.sigmoid() - t if pw is None else (pw * t + 1 - t) * x.sigmoid() - pw * t
    return _scale_back(_weighted(g * d, c.weight), c)


def _bce_logits_target_grad(g: Any, c: Any) -> Any:
    """torch's: ``log_sigmoid(-x) - pos_weight * log_sigmoid(x)``, which is ``-x`` without it."""
    x, pw = c.self, c.pos_weight
    d = -x if pw is None else apply(LOG_SIGMOID, -x) - apply(LOG_SIGMOID, x) * pw
    return _scale_back(_weighted(d * g, c.weight), c)


BCE_WITH_LOGITS = OpDef(
    "BinaryCrossEntropyWithLogitsBackward0",
    _bce_logits_fwd,
    ("self", "target"),
    {
        "self": D("self target weight pos_weight reduction", _bce_logits_self_grad),
        "target": D("self weight pos_weight reduction", _bce_logits_target_grad),
    },
    jvp=separable,
)
"""``weight`` and ``pos_weight`` are attributes: torch's node has edges for self and target only."""


def _nll_coefficients(
    xp: Any, target: Any, weight: Any, ignore_index: int, reduction: int, classes: int, dtype: Any
) -> Any:
    """(N, C) array ``A`` with the loss = ``sum(A * x)`` (per row for reduction='none')."""
    t = target._data.reshape(-1)
    keep = t != ignore_index
    safe = xp.where(keep, t, 0)
    w = weight._data[safe] * keep
    if reduction == 1:
        with getattr(xp, "errstate", _no_errstate)(invalid="ignore", divide="ignore"):
            w = w / w.sum()
    coef = xp.zeros((t.shape[0], classes), dtype=dtype)
    coef[xp.arange(t.shape[0]), safe] = -w
    return coef


def _nll_fwd(xp: Any, x: Any, target: Any, weight: Any, ignore_index: int, reduction: int) -> Any:
    """x: (N, C) or (C,) log-probabilities; target: (N,) or () class indices (range-checked)."""
    rows2d = x.reshape(-1, x.shape[-1])
    coef = _nll_coefficients(xp, target, weight, ignore_index, reduction, rows2d.shape[1], x.dtype)
    rows = xp.arange(rows2d.shape[0])
    t = target._data.reshape(-1)
    safe = xp.where(t != ignore_index, t, 0)
    per_row = coef[rows, safe] * rows2d[rows, safe]
    if reduction != 0:
        return per_row.sum().astype(x.dtype)
    return per_row.reshape(x.shape[:-1]).astype(x.dtype)


def _nll_backward_fwd(
    xp: Any, g: Any, x: Any, target: Any, weight: Any, ignore_index: int, reduction: int
) -> Any:
    """torch's nll_loss_backward: zeros, and at each kept row's target ``-w * grad`` (divided by
    the total weight for 'mean'); ignored rows and the other classes stay +0.0."""
    rows2d = x.reshape(-1, x.shape[-1])
    coef = _nll_coefficients(xp, target, weight, ignore_index, reduction, rows2d.shape[1], x.dtype)
    t = target._data.reshape(-1)
    keep = xp.nonzero(t != ignore_index)[0]
    out = xp.zeros(rows2d.shape, dtype=x.dtype)
    per_row = g.reshape(-1)[keep] if reduction == 0 else g
    out[keep, t[keep]] = coef[keep, t[keep]] * per_row
    return out.reshape(x.shape)


def _nll_options(c: Any) -> dict:
    """What nll_loss and its backward share: target, weight, ignore_index, reduction."""
    return {"target": c.target, "weight": c.weight, "ignore_index": c.ignore_index, "reduction": c.reduction}


NLL_OPTIONS = "target weight ignore_index reduction"
NLL_LOSS_BACKWARD = OpDef(
    "NllLossBackwardBackward0",
    _nll_backward_fwd,
    ("grad_output", "self"),
    {
        "grad_output": D(NLL_OPTIONS, lambda gg, c: apply(NLL_LOSS, gg, **_nll_options(c))),
        "self": D("", lambda gg, c: _creation.zeros_like(gg)),
    },
)
"""derivatives.yaml's nll_loss_backward: the loss of the gradient's gradient, zeros for self."""


def _nll_grad(g: Any, c: Any) -> Any:
    return apply(NLL_LOSS_BACKWARD, g, c.self, **_nll_options(c))


class _no_errstate:
    def __init__(self, **_: Any) -> None:
        pass

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        pass


NLL_LOSS = OpDef(
    "NllLossBackward0", _nll_fwd, derivatives={"self": D("self " + NLL_OPTIONS, _nll_grad)}, jvp=auto_linear
)


def _norm(c: Any) -> float:
    """1 / numel for 'mean' (the input's), else 1: what a loss's backward scales the gradient by."""
    numel = 1
    for s in c.shape("self"):
        numel *= s
    return 1.0 / numel if c.reduction == 1 else 1.0


# -- smooth_l1_loss -------------------------------------------------------------------------------
def _smooth_l1_fwd(xp: Any, a: Any, t: Any, reduction: int, beta: float) -> Any:
    """``0.5 * z * z / beta`` below ``beta``, ``z - 0.5 * beta`` elsewhere, ``z = |a - t|``."""
    z = xp.abs(a - t)
    b, half = a.dtype.type(beta), a.dtype.type(0.5)
    return _reduce_array(xp, xp.where(z < b, half * z * z / b, z - half * b).astype(a.dtype), reduction)


def _smooth_l1_backward_fwd(
    xp: Any, g: Any, a: Any, t: Any, reduction: int, beta: float, norm: float
) -> Any:
    """smooth_l1_backward's kernel: ``-norm * g`` at or below ``-beta``, ``norm * g`` at or above
    ``beta``, ``norm * x * g / beta`` between (``x = a - t``; the division by the double beta)."""
    x = a - t
    dt = a.dtype.type
    n, b = dt(norm), dt(beta)
    inside = ((n * x * g).astype(np.float64) / beta).astype(a.dtype)
    return xp.where(x <= -b, -n * g, xp.where(x >= b, n * g, inside)).astype(a.dtype)


def _smooth_l1_double(gg: Any, c: Any) -> Any:
    """The backward's derivative in its input: ``gg * grad_output * norm / beta`` inside the band."""
    x = c.self - c.target
    inside = (x > -c.beta).logical_and(x < c.beta)
    return where(inside, gg * c.grad_output * (c.norm / c.beta), 0.0)


SMOOTH_L1_BACKWARD = OpDef(
    "SmoothL1LossBackwardBackward0",
    _smooth_l1_backward_fwd,
    ("grad_output", "self", "target"),
    {
        "grad_output": D(
            "self target reduction beta norm",
            lambda gg, c: apply(
                SMOOTH_L1_BACKWARD, gg, c.self, c.target, reduction=c.reduction, beta=c.beta, norm=c.norm
            ),
        ),
        "self": D("grad_output self target beta norm", _smooth_l1_double),
        "target": D("grad_output self target beta norm", lambda gg, c: -_smooth_l1_double(gg, c)),
    },
)


def _smooth_l1_grad(first: str, second: str) -> Any:
    """smooth_l1_loss_backward(grad, first, second): the target's swaps the two."""

    def grad(g: Any, c: Any) -> Any:
        options = {"reduction": c.reduction, "beta": c.beta, "norm": _norm(c)}
        return apply(SMOOTH_L1_BACKWARD, g, getattr(c, first), getattr(c, second), **options)

    return grad


SMOOTH_L1_LOSS = OpDef(
    "SmoothL1LossBackward0",
    _smooth_l1_fwd,
    ("self", "target"),
    {
        "self": D("self target reduction beta", _smooth_l1_grad("self", "target")),
        "target": D("self target reduction beta", _smooth_l1_grad("target", "self")),
    },
    promote="common",
)


# -- soft_margin_loss -----------------------------------------------------------------------------
def _soft_margin_fwd(xp: Any, x: Any, target: Any, reduction: int) -> Any:
    """``log1p(exp(-x * t))``."""
    return _reduce_array(xp, xp.log1p(vector_exp_of(xp, -x * target._data)).astype(x.dtype), reduction)


def _soft_margin_backward_fwd(xp: Any, g: Any, x: Any, target: Any, norm: float) -> Any:
    """ATen's: ``t * z * -norm / (1 + z) * g``, ``z = exp(-t * x)``."""
    t = target._data
    z = vector_exp_of(xp, -t * x)
    return ((t * z) * x.dtype.type(-norm) / (z + x.dtype.type(1)) * g).astype(x.dtype)


def _soft_margin_double(gg: Any, c: Any) -> Any:
    """``gg * grad_output * norm * t^2 * z / (1 + z)^2``, ``z = exp(-t * x)``."""
    z = (-c.target * c.self).exp()
    one_plus = add_scalar(z, 1.0)
    return gg * c.grad_output * (c.target * c.target) * z / (one_plus * one_plus) * c.norm


SOFT_MARGIN_BACKWARD = OpDef(
    "SoftMarginLossBackwardBackward0",
    _soft_margin_backward_fwd,
    ("grad_output", "self"),
    {
        "grad_output": D(
            "self target norm",
            lambda gg, c: apply(SOFT_MARGIN_BACKWARD, gg, c.self, target=c.target, norm=c.norm),
        ),
        "self": D("grad_output self target norm", _soft_margin_double),
    },
)
SOFT_MARGIN_LOSS = OpDef(
    "SoftMarginLossBackward0",
    _soft_margin_fwd,
    ("self",),
    {
        "self": D(
            "self target reduction",
            lambda g, c: apply(SOFT_MARGIN_BACKWARD, g, c.self, target=c.target, norm=_norm(c)),
        )
    },
)
"""The target is an attribute: torch refuses one that requires grad (not differentiable)."""
