"""The activations of nn.functional beyond relu: leaky_relu, threshold, gelu, silu, mish, elu,
softplus, hardtanh, relu6, logsigmoid and softsign, as ops and as the functions nn.functional
re-exports (torch's signatures, in-place forms, dtype checks and errors). Each op has the backward
op torch's derivatives.yaml names (gelu_backward, elu_backward, softplus_backward, hardtanh_backward,
log_sigmoid_backward), so a gradient taken with ``create_graph=True`` carries torch's node
(GeluBackwardBackward0 ...) and its own derivative, written as FunctionsManual.cpp writes it.
SiLU's and Mish's backward are, under grad mode, the composite formulas torch uses
(infinitely_differentiable_silu_backward / _mish_backward), so their graphs are plain ops.

Kernels are evaluated as torch's CPU kernels evaluate them: the half types in float32, rounded once
at the end (which decides the sign of a result that underflows, e.g. gelu's gradient at -25).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from impl import dtypes
from impl._names import type_name
from impl._ops.cpu_kernels import vector_exp
from impl._ops.elementwise import UNARY, add_scalar, mul_scalar, opmath, scalar_minus, sub_scalar, zero_grad
from impl._ops.inplace import apply_inplace
from impl._ops.pointwise_ternary import _clamp_fwd
from impl._ops.special import _erf_fwd
from impl._ops.table import D, OpDef, apply
from impl._ops.unary_math import LOG1P, sigmoid_backward, threshold_backward
from impl._signatures import invalid_call
from impl._tensor import Tensor


def computed(fwd: Any) -> Any:
    """``opmath(fwd)`` (ops run with numpy's floating-point warnings off: an exp overflowing in a
    lane the kernel then discards says nothing), the result in the input's dtype."""
    run = opmath(fwd)
    return lambda xp, *arrays, **attrs: run(xp, *arrays, **attrs).astype(arrays[0].dtype, copy=False)


# -- gelu ---------------------------------------------------------------------------------------
GELU_TANH_BETA = math.sqrt(2 / math.pi)  # torch's kBeta = M_SQRT2 * M_2_SQRTPI * 0.5
GELU_KAPPA = 0.044715
GELU_PDF = 1 / math.sqrt(2 * math.pi)  # torch's kBeta of 'none': M_2_SQRTPI * M_SQRT1_2 * 0.5


def _gelu_fwd(xp: Any, x: Any, approximate: str) -> Any:
    """``x * Phi(x)``: ``0.5 x (1 + erf(x / sqrt 2))``, or with 'tanh'
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    if approximate == "tanh":
        return 0.5 * x * (1 + xp.tanh(GELU_TANH_BETA * (x + GELU_KAPPA * x * x * x)))
    return 0.5 * x * (1 + _erf_fwd(xp, x * math.sqrt(0.5)))


def _gelu_backward_fwd(xp: Any, g: Any, x: Any, approximate: str) -> Any:
    """ATen's GeluBackwardKernel: ``g * (cdf + x * pdf)``, or the tanh form's derivative."""
    if approximate == "tanh":
        inner = GELU_TANH_BETA * (x + GELU_KAPPA * x * x * x)
        t = xp.tanh(inner)
        right = 0.5 * x * (1 - t * t) * GELU_TANH_BETA * (1 + 3 * GELU_KAPPA * x * x)
        return g * (0.5 * (1 + t) + right)
    cdf = 0.5 * (1 + _erf_fwd(xp, x * math.sqrt(0.5)))
    return g * (cdf + x * GELU_PDF * xp.exp(-0.5 * x * x))


def gelu_double_backward(ggi: Any, go: Any, x: Any, approximate: str) -> Any:
    """FunctionsManual's gelu_double_backward: ``ggI * gO * d(gelu')/dx`` (for 'tanh', sech^2 is
    written ``1 - tanh^2``: this engine has no cosh, so the third-order graph differs there)."""
    if approximate == "tanh":
        inner = mul_scalar(x + mul_scalar(x.pow(3), GELU_KAPPA), GELU_TANH_BETA)
        t = inner.tanh()
        f = mul_scalar(x, 0.5)
        g = scalar_minus(1, t * t)
        h = mul_scalar(add_scalar(mul_scalar(x, 3 * GELU_KAPPA) * x, 1), GELU_TANH_BETA)
        f_prime_gh = mul_scalar(g, 0.5) * h
        g_prime = mul_scalar(t, -2) * g * h  # torch's (2 sech) (-sech tanh) h: sech^2 is g
        h_prime_fg = f * g * mul_scalar(x, 6 * GELU_KAPPA * GELU_TANH_BETA)
        return ggi * go * (f_prime_gh + f_prime_gh + f * h * g_prime + h_prime_fg)
    x_sq = x * x
    pdf = mul_scalar(mul_scalar(x_sq, -0.5).exp(), GELU_PDF)
    return ggi * go * (mul_scalar(pdf, 2) - x_sq * pdf)


GELU_BACKWARD = OpDef(
    "GeluBackwardBackward0",
    computed(_gelu_backward_fwd),
    ("grad_output", "self"),
    {
        "grad_output": D("self approximate", lambda gg, c: gelu_backward(gg, c.self, c.approximate)),
        "self": D(
            "grad_output self approximate",
            lambda gg, c: gelu_double_backward(gg, c.grad_output, c.self, c.approximate),
        ),
    },
    iterator_operands=("grad_output", "self"),
)


def gelu_backward(grad: Any, x: Any, approximate: str) -> Any:
    return apply(GELU_BACKWARD, grad, x, approximate=approximate)


GELU = OpDef(
    "GeluBackward0",
    computed(_gelu_fwd),
    derivatives={"self": D("self approximate", lambda g, c: gelu_backward(g, c.self, c.approximate))},
    iterator_operands=UNARY,
)


# -- silu, mish ---------------------------------------------------------------------------------
def _silu_grad(g: Any, c: Any) -> Any:
    """infinitely_differentiable_silu_backward: ``g * sigmoid * (1 + x * (1 - sigmoid))``."""
    sigmoid = c.self.sigmoid()
    return g * sigmoid * add_scalar(c.self * scalar_minus(1.0, sigmoid), 1.0)


def _mish_grad(g: Any, c: Any) -> Any:
    """infinitely_differentiable_mish_backward: with ``t = tanh(log1p(exp(x)))`` (softplus),
    ``g * (t + x * sigmoid * (1 - t * t))``."""
    sigmoid = c.self.sigmoid()
    t = apply(LOG1P, c.self.exp()).tanh()
    return g * (t + c.self * sigmoid * scalar_minus(1.0, t * t))


SILU = OpDef(
    "SiluBackward0",
    computed(lambda xp, x: x / (1 + xp.exp(-x))),
    derivatives={"self": D("self", _silu_grad)},
    iterator_operands=UNARY,
)
MISH = OpDef(
    "MishBackward0",
    computed(lambda xp, x: x * xp.tanh(xp.logaddexp(x, 0.0))),
    derivatives={"self": D("self", _mish_grad)},
    iterator_operands=UNARY,
)


# -- elu ----------------------------------------------------------------------------------------
NEGATIVE_ALPHA_INPLACE = (
    "In-place elu backward calculation is triggered with a negative slope which is not supported. "
    "This is caused by calling in-place forward function with a negative slope, please call "
    "out-of-place version instead."
)


def _elu_fwd(xp: Any, x: Any, alpha: float, scale: float = 1.0, input_scale: float = 1.0) -> Any:
    """``alpha * scale * expm1(x * input_scale)`` for ``x < 0``, ``x * scale`` elsewhere (a zero
    keeps its sign whatever alpha, as torch's)."""
    return xp.where(x < 0, xp.expm1(x * input_scale) * (alpha * scale), x * scale)


def _elu_backward_fwd(
    xp: Any, g: Any, x: Any, alpha: float, scale: float, input_scale: float, is_result: bool
) -> Any:
    """ATen's elu_backward from the input, or from the result (``x`` then is the output)."""
    t = x.dtype.type
    negcoef, input_scale = t(alpha) * t(scale), t(input_scale)  # in the dtype, as the kernel's
    if is_result:
        neg = g * input_scale * (x + negcoef)
    else:
        neg = g * input_scale * negcoef * vector_exp_of(xp, x * input_scale)
    return xp.where(x <= 0, neg, g * t(scale))


def vector_exp_of(xp: Any, x: Any) -> Any:
    """``exp`` as torch's vectorized CPU loops compute it (Sleef's expf on float32)."""
    if xp is np and x.dtype == np.float32:
        return vector_exp(np.atleast_1d(x)).reshape(np.shape(x))  # (a 0-d product is a numpy scalar)
    return xp.exp(x)


def _elu_options(c: Any) -> dict:
    return {"alpha": c.alpha, "scale": c.scale, "input_scale": c.input_scale, "is_result": c.is_result}


def _elu_double_backward(gg: Any, c: Any) -> Any:
    """FunctionsManual's elu_double_backward."""
    x, go = c.self_or_result, c.grad_output
    negative = (x < 0).type_as(gg)
    if c.is_result:
        return mul_scalar(gg * go, c.input_scale) * negative
    return elu_backward(mul_scalar(gg * go, c.input_scale), x, **_elu_options(c)) * negative


ELU_OPTIONS = "alpha scale input_scale is_result"
ELU_BACKWARD = OpDef(
    "EluBackwardBackward0",
    computed(_elu_backward_fwd),
    ("grad_output", "self_or_result"),
    {
        "grad_output": D(
            "self_or_result " + ELU_OPTIONS,
            lambda gg, c: elu_backward(gg, c.self_or_result, **_elu_options(c)),
        ),
        "self_or_result": D("grad_output self_or_result " + ELU_OPTIONS, _elu_double_backward),
    },
    iterator_operands=("grad_output", "self_or_result"),
)


def elu_backward(
    grad: Any, x: Any, alpha: float, scale: float = 1.0, input_scale: float = 1.0, is_result: bool = False
) -> Any:
    if is_result and alpha < 0:
        raise RuntimeError(NEGATIVE_ALPHA_INPLACE)
    return apply(
        ELU_BACKWARD, grad, x, alpha=alpha, scale=scale, input_scale=input_scale, is_result=is_result
    )


ELU = OpDef(
    "EluBackward0",
    computed(_elu_fwd),
    derivatives={"self": D("self alpha", lambda g, c: elu_backward(g, c.self, c.alpha))},
    iterator_operands=UNARY,
)
ELU_INPLACE = OpDef(
    "EluBackward1",
    computed(_elu_fwd),
    derivatives={"self": D("result alpha", lambda g, c: elu_backward(g, c.result, c.alpha, is_result=True))},
)
"""elu_: the gradient is read off the result (refused at backward time for a negative alpha)."""


# -- softplus -----------------------------------------------------------------------------------
def _softplus_fwd(xp: Any, x: Any, beta: float, threshold: float) -> Any:
    """``x`` where ``x * beta > threshold``, ``log1p(exp(x * beta)) / beta`` elsewhere."""
    return xp.where(x * beta > threshold, x, xp.log1p(xp.exp(x * beta)) / beta)


def _softplus_backward_fwd(xp: Any, g: Any, x: Any, beta: float, threshold: float) -> Any:
    z = xp.exp(x * beta)
    return xp.where(x * beta > threshold, g, g * z / (z + 1))


def softplus_double_backward(grad: Any, x: Any, beta: float, threshold: float) -> Any:
    """FunctionsManual's: ``sigmoid_backward(grad, sigmoid(x beta)) * (x beta < threshold) * beta``."""
    scaled = mul_scalar(x, beta)
    below = (scaled < threshold).type_as(grad)
    return mul_scalar(sigmoid_backward(grad, scaled.sigmoid()) * below, beta)


SOFTPLUS_BACKWARD = OpDef(
    "SoftplusBackwardBackward0",
    computed(_softplus_backward_fwd),
    ("grad_output", "self"),
    {
        "grad_output": D(
            "self beta threshold", lambda gg, c: softplus_backward(gg, c.self, c.beta, c.threshold)
        ),
        "self": D(
            "grad_output self beta threshold",
            lambda gg, c: softplus_double_backward(gg * c.grad_output, c.self, c.beta, c.threshold),
        ),
    },
    iterator_operands=("grad_output", "self"),
)


def softplus_backward(grad: Any, x: Any, beta: float, threshold: float) -> Any:
    return apply(SOFTPLUS_BACKWARD, grad, x, beta=beta, threshold=threshold)


SOFTPLUS = OpDef(
    "SoftplusBackward0",
    computed(_softplus_fwd),
    derivatives={
        "self": D("self beta threshold", lambda g, c: softplus_backward(g, c.self, c.beta, c.threshold))
    },
    iterator_operands=UNARY,
)


# -- hardtanh -----------------------------------------------------------------------------------
def _hardtanh_backward_fwd(xp: Any, g: Any, x: Any, min_val: float, max_val: float) -> Any:
    """``0`` where ``x <= min_val`` or ``x >= max_val`` (the bounds themselves), ``g`` elsewhere."""
    return xp.where((x <= min_val) | (x >= max_val), xp.zeros((), g.dtype), g)


HARDTANH_BACKWARD = OpDef(
    "HardtanhBackwardBackward0",
    _hardtanh_backward_fwd,
    ("grad_output", "self"),
    {
        "grad_output": D(
            "self min_val max_val", lambda gg, c: hardtanh_backward(gg, c.self, c.min_val, c.max_val)
        ),
        "self": D("", zero_grad),
    },
    iterator_operands=("grad_output", "self"),
)


def hardtanh_backward(grad: Any, x: Any, min_val: float, max_val: float) -> Any:
    return apply(HARDTANH_BACKWARD, grad, x, min_val=min_val, max_val=max_val)


HARDTANH = OpDef(
    "HardtanhBackward0",
    lambda xp, x, min_val, max_val: _clamp_fwd(xp, x, min_val, max_val),
    derivatives={
        "self": D("self min_val max_val", lambda g, c: hardtanh_backward(g, c.self, c.min_val, c.max_val))
    },
    iterator_operands=UNARY,
)


# -- log_sigmoid --------------------------------------------------------------------------------
def _log_sigmoid_backward_fwd(xp: Any, g: Any, x: Any) -> Any:
    """ATen's log_sigmoid_backward: ``g * (max_deriv - sign * z / (1 + z))``, ``z = exp(-|x|)``."""
    z = xp.exp(-xp.abs(x))
    negative = x < 0
    return g * (xp.where(negative, 1.0, 0.0) - xp.where(negative, 1.0, -1.0) * (z / (1 + z)))


LOG_SIGMOID_BACKWARD = OpDef(
    "LogSigmoidBackwardBackward0",
    computed(_log_sigmoid_backward_fwd),
    ("grad_output", "self"),
    {
        "grad_output": D("self", lambda gg, c: log_sigmoid_backward(gg, c.self)),
        "self": D("grad_output self", lambda gg, c: _log_sigmoid_double_backward(gg * c.grad_output, c.self)),
    },
    iterator_operands=("grad_output", "self"),
)


def _log_sigmoid_double_backward(grad: Any, x: Any) -> Any:
    """FunctionsManual's: ``z = sigmoid(x); grad * (z - 1) * z``."""
    z = x.sigmoid()
    return grad * sub_scalar(z, 1) * z


def log_sigmoid_backward(grad: Any, x: Any) -> Any:
    return apply(LOG_SIGMOID_BACKWARD, grad, x)


def _leaky_relu_fwd(xp: Any, a: Any, negative_slope: float) -> Any:
    return xp.where(a > 0, a, a * negative_slope).astype(a.dtype)


LEAKY_RELU_BACKWARD = OpDef(
    "LeakyReluBackwardBackward0",
    lambda xp, g, a, negative_slope: xp.where(a > 0, g, g * negative_slope).astype(g.dtype),
    ("grad_output", "self"),
    {
        "grad_output": D(
            "self negative_slope", lambda gg, c: leaky_relu_backward(gg, c.self, c.negative_slope)
        ),
        "self": D("", zero_grad),
    },
    iterator_operands=("self", "grad_output"),  # torch's order: self first
)


"""ATen's leaky_relu_backward (what LeakyReluBackward0/1 compute), an op so create_graph has it."""


NEGATIVE_SLOPE_INPLACE = (
    "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
    "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
    "version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting "
    "in-place leakRelu backward calculation with negative slope"
)


def leaky_relu_backward(grad: Any, self: Any, negative_slope: float, self_is_result: bool = False) -> Any:
    """``grad`` where ``self > 0``, ``grad * negative_slope`` elsewhere; from the result of the
    in-place form only for a non-negative slope (torch's check, made at backward time)."""
    if self_is_result and negative_slope < 0:
        raise RuntimeError(NEGATIVE_SLOPE_INPLACE)
    return apply(LEAKY_RELU_BACKWARD, grad, self, negative_slope=negative_slope)


LEAKY_RELU = OpDef(
    "LeakyReluBackward0",
    _leaky_relu_fwd,
    derivatives={
        "self": D("self negative_slope", lambda g, c: leaky_relu_backward(g, c.self, c.negative_slope))
    },
    iterator_operands=("self",),
)


LEAKY_RELU_INPLACE = OpDef(
    "LeakyReluBackward1",
    _leaky_relu_fwd,
    derivatives={
        "self": D(
            "result negative_slope", lambda g, c: leaky_relu_backward(g, c.result, c.negative_slope, True)
        )
    },
)


"""leaky_relu_: the gradient is read off the result (the input is overwritten)."""


def _threshold_fwd(xp: Any, a: Any, threshold: float, value: float, **_: Any) -> Any:
    return xp.where(a <= threshold, xp.asarray(value, dtype=a.dtype), a)


THRESHOLD = OpDef(
    "ThresholdBackward0",
    _threshold_fwd,
    derivatives={"self": D("self threshold", lambda g, c: threshold_backward(g, c.self, c.threshold))},
    iterator_operands=("self",),
)


THRESHOLD_INPLACE = OpDef(
    "ThresholdBackward1",
    _threshold_fwd,
    derivatives={
        "self": D("original threshold", lambda g, c: threshold_backward(g, c.original, c.threshold))
    },
)


"""threshold_: torch saves a clone of the input made before the write (``original``, recorded as
CloneBackward0), so later writes to the result do not invalidate it."""


@computed
def _log_sigmoid_fwd(xp: Any, x: Any) -> Any:
    """``min(x, 0) - log1p(exp(-|x|))`` (the half types in float32: logsigmoid(25) is -0.0)."""
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


LOG_SIGMOID = OpDef(
    "LogSigmoidBackward0",
    _log_sigmoid_fwd,
    derivatives={"self": D("self", lambda g, c: log_sigmoid_backward(g, c.self))},
    iterator_operands=("self",),
)


# -- the functions (nn.functional re-exports them) ----------------------------------------------
def _float_only(input: Tensor, kernel: str) -> None:
    """torch's dispatch error for an integer or bool tensor: ``"<kernel>" not implemented for 'Long'``."""
    if not input.dtype.is_floating_point:
        raise dtypes.kernel_missing(kernel, input.dtype)


def _run(fn: Any, values: dict, op: OpDef, kernel: str, name: str | None = None, **attrs: Any) -> Tensor:
    """``op`` on a floating ``input`` (in place if ``values["inplace"]``), ``values`` being the
    arguments ``fn`` was called with (its ``locals()``), after torch's checks: the input a tensor,
    the numbers (``attrs``) numbers, the dtype floating."""
    input, inplace = values["input"], values.get("inplace", False)
    name = (name or fn.__name__) + ("_" if inplace else "")
    if not isinstance(input, Tensor):
        raise invalid_call(fn, values, name)
    for position, (param, value) in enumerate(attrs.items(), 2):
        if not isinstance(value, numbers.Number):
            raise TypeError(
                f"{name}(): argument '{param}' (position {position}) must be Number, not {type_name(value)}"
            )
    _float_only(input, kernel)
    return apply_inplace(op, input, **attrs) if inplace else apply(op, input, **attrs)


def gelu(input: Tensor, *, approximate: str = "none") -> Tensor:
    """``x * Phi(x)`` with the normal CDF from erf ('none') or its tanh approximation ('tanh')."""
    if not isinstance(input, Tensor):
        raise invalid_call(gelu, locals())
    if not isinstance(approximate, str):
        raise TypeError(f"gelu(): argument 'approximate' must be str, not {type_name(approximate)}")
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_only(input, "GeluKernelImpl")
    return apply(GELU, input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (SiluBackward0, in place too)."""
    return _run(silu, locals(), SILU, "silu_cpu")


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` (MishBackward0, in place too)."""
    return _run(mish, locals(), MISH, "mish_cpu")


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` elsewhere (EluBackward0; in place
    EluBackward1, from the result, whose backward refuses a negative alpha)."""
    return _run(elu, locals(), ELU_INPLACE if inplace else ELU, "elu_cpu", alpha=alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``."""
    return _run(softplus, locals(), SOFTPLUS, "softplus_cpu", beta=beta, threshold=threshold)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``clamp(x, min_val, max_val)`` for any dtype but bool (HardtanhBackward0, also in place);
    unsigned tensors refuse a negative bound."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if not isinstance(input, Tensor):
        raise invalid_call(hardtanh, locals(), "hardtanh_" if inplace else "hardtanh")
    if input.dtype is dtypes.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype is dtypes.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if inplace:
        return apply_inplace(HARDTANH, input, min_val=min_val, max_val=max_val)
    return apply(HARDTANH, input, min_val=min_val, max_val=max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``hardtanh(x, 0, 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably (LogSigmoidBackward0)."""
    return _run(logsigmoid, locals(), LOG_SIGMOID, "log_sigmoid_cpu", "log_sigmoid")


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``, as torch's Python composite (DivBackward0)."""
    return input / (input.abs() + 1)
