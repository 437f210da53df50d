"""Ops that torch's backward formulas call by name: _softmax_backward_data and
_log_softmax_backward_data (tanh_backward, sigmoid_backward and threshold_backward are declared
with their forward ops in ``elementwise``). Declaring them as ops gives gradients computed with
create_graph=True torch's grad_fn names (SoftmaxBackwardDataBackward0 ...) and their own
derivatives for the next order."""

from __future__ import annotations

from typing import Any

import numpy as np

from impl._ops import cpu_kernels
from impl._ops.table import D, OpDef, apply


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
