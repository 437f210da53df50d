"""softmax and log_softmax, and the backward ops their derivatives call by name
(_softmax_backward_data, _log_softmax_backward_data): declared as ops, gradients computed with
create_graph=True get torch's grad_fn names (SoftmaxBackwardDataBackward0 ...) and their own
derivatives for the next order."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes
from impl._layout import new_like
from impl._ops import cpu_kernels
from impl._ops.inplace import unimplemented_out
from impl._ops.table import D, OpDef, apply
from impl._signatures import EXACT, Out, invalid_call
from impl._tensor import Tensor, _wrap_dim


def _sum(xp: Any, a: Any, dim: int) -> Any:
    """``sum(a, dim, keepdim=True)`` as torch's CPU log_softmax backward starts it: along the last
    dimension a vector reduction of the elements themselves (a sum of -0.0s is -0.0: -0.0, the
    additive identity, as the start), along another dimension from +0.0 (numpy's start)."""
    if xp is np and dim == a.ndim - 1:
        return xp.sum(a, axis=dim, keepdims=True, initial=-0.0)
    return xp.sum(a, axis=dim, keepdims=True)


SOFTMAX_BACKWARD_DATA = OpDef(
    "SoftmaxBackwardDataBackward0",
    cpu_kernels.softmax_backward,
    ("grad_output", "output"),
    {
        "grad_output": D("output dim", lambda gg, c: softmax_backward_data(gg, c.output, c.dim)),
        "output": D(
            "grad_output output dim",
            lambda gg, c: _softmax_double_backward(gg, c.grad_output, c.dim, c.output),
        ),
    },
)
LOG_SOFTMAX_BACKWARD_DATA = OpDef(
    "LogSoftmaxBackwardDataBackward0",
    lambda xp, g, out, dim: (
        cpu_kernels.log_softmax_backward(g, out, dim)
        if xp is np and out.dtype == np.float32 and out.ndim and out.size
        else g - xp.exp(out) * _sum(xp, g, dim)
    ),
    ("grad_output", "output"),
    {
        "grad_output": D("output dim", lambda gg, c: gg - (gg * c.output.exp()).sum(c.dim, keepdim=True)),
        "output": D(
            "grad_output output dim",
            lambda gg, c: -c.grad_output.sum(c.dim, keepdim=True) * c.output.exp() * gg,
        ),
    },
)


def _softmax_double_backward(grad: Any, grad_output: Any, dim: int, output: Any) -> Any:
    """The derivative of softmax's backward for its ``output``, as torch's FunctionsManual writes
    it (the same products and sums in the same order, so the graph and the rounding match)."""
    return (
        grad_output * grad
        - (output * grad_output).sum(dim, keepdim=True) * grad
        - grad_output * (output * grad).sum(dim, keepdim=True)
    )


def softmax_backward_data(grad: Any, output: Any, dim: int) -> Any:
    return apply(SOFTMAX_BACKWARD_DATA, grad, output, dim=dim)


def log_softmax_backward_data(grad: Any, output: Any, dim: int) -> Any:
    return apply(LOG_SOFTMAX_BACKWARD_DATA, grad, output, dim=dim)


def _softmax_fwd(xp: Any, a: Any, dim: int) -> Any:
    if xp is np and a.dtype == np.float32 and a.ndim:
        return cpu_kernels.softmax(a, dim)  # torch's order of float32 operations
    e = xp.exp(a - xp.max(a, axis=dim, keepdims=True))
    return e / xp.sum(e, axis=dim, keepdims=True)


def _log_softmax_fwd(xp: Any, a: Any, dim: int) -> Any:
    if xp is np and a.dtype == np.float32 and a.ndim:
        return cpu_kernels.log_softmax(a, dim)  # torch's order of float32 operations
    shifted = a - xp.max(a, axis=dim, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=dim, keepdims=True))


def _floating_kernel(name: str, forward: Any) -> Any:
    """``forward`` behind torch's CPU (log_)softmax dispatch: kernels exist for floating dtypes
    only, one for the last dimension and one for the others (the error names which); an empty
    input returns an empty result of its own dtype before any kernel runs."""

    def run(xp: Any, a: Any, dim: int) -> Any:
        if a.size == 0:
            return new_like(xp, a)
        if a.dtype.kind == "f":
            return forward(xp, a, dim)
        if str(a.dtype) == "bfloat16":  # torch computes bfloat16 in float32, rounded once
            return forward(xp, a.astype(np.float32), dim).astype(a.dtype)
        kernel = f"{name}_lastdim_kernel_impl" if dim == max(a.ndim, 1) - 1 else f"{name}_kernel_impl"
        raise dtypes.kernel_missing(kernel, a.dtype)

    return run


SOFTMAX = OpDef(
    "SoftmaxBackward0",
    _floating_kernel("softmax", _softmax_fwd),
    derivatives={"self": D("result dim", lambda g, c: softmax_backward_data(g, c.result, c.dim))},
    jvp=lambda c: c.result * (c.self_t - _logsumexp_jvp(c.self, c.self_t, c.dim)),
)


def _safe_softmax_fwd(xp: Any, a: Any, dim: int) -> Any:
    """softmax, with rows whose every element is -inf zero instead of nan (ATen's _safe_softmax)."""
    out = _floating_kernel("softmax", _softmax_fwd)(xp, a, dim)
    if a.size == 0:
        return out
    masked = xp.all(a == -xp.inf, axis=dim, keepdims=True)
    return xp.where(masked, xp.zeros((), out.dtype), out)


SAFE_SOFTMAX = OpDef(
    "SafeSoftmaxBackward0",
    _safe_softmax_fwd,
    derivatives={"self": D("result dim", lambda g, c: softmax_backward_data(g, c.result, c.dim))},
)


LOG_SOFTMAX = OpDef(
    "LogSoftmaxBackward0",
    _floating_kernel("log_softmax", _log_softmax_fwd),
    derivatives={"self": D("result dim", lambda g, c: log_softmax_backward_data(g, c.result, c.dim))},
    jvp=lambda c: c.self_t - _logsumexp_jvp(c.self, c.self_t, c.dim),
)


def _logsumexp_jvp(self_p: Tensor, self_t: Tensor, dim: int) -> Tensor:
    """FunctionsManual's logsumexp_jvp over ``dim``, kept: ``sum(exp(p - max) * t) / sum(exp(p - max))``."""
    exp = (self_p - self_p.amax(dim, True)).exp() if self_p.numel() > 0 else self_p.exp()
    return (exp * self_t).sum(dim, True) / exp.sum(dim, True)


def _unrecorded(name: str) -> Out:
    """softmax's and log_softmax's out=: torch records a NotImplemented node where an argument
    requires grad."""
    return dataclasses.replace(EXACT, aten=f"aten::{name}", unimplemented=unimplemented_out(name))


@api.variants("softmax", out=_unrecorded("softmax"))
def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(softmax, locals())
    x = input.to(dtype) if dtype is not None else input
    return apply(SOFTMAX, x, dim=_wrap_dim(dim, x.dim()))


@api.variants("log_softmax", out=_unrecorded("log_softmax"))
def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(log_softmax, locals())
    x = input.to(dtype) if dtype is not None else input
    return apply(LOG_SOFTMAX, x, dim=_wrap_dim(dim, x.dim()))


def safe_softmax(input: Tensor, dim: int) -> Tensor:
    """``torch._safe_softmax``: the softmax scaled_dot_product_attention's math path takes."""
    return apply(SAFE_SOFTMAX, input, dim=_wrap_dim(dim, input.dim()))
