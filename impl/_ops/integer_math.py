"""Integer ops: gcd, lcm, bitwise_left_shift and bitwise_right_shift (the operators ``<<``, ``>>``
and their reflected and in-place forms), with their in-place methods.

Their kernels exist for the integer dtypes only (torch's "gcd_cpu", "lshift_cpu" ... refuse bool and
floating operands), they compute in the operands' common dtype and record no node. Shifts follow
torch's CPU kernel where C++ leaves them undefined: a left shift by a negative amount or by the bit
width or more gives 0, a right shift so gives the sign fill (0 for unsigned dtypes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes
from impl._ops import inplace as ip
from impl._ops.table import OpDef, apply
from impl._signatures import Out, invalid_call
from impl._tensor import Tensor

BINARY = ("self", "other")
NUMBERS = (bool, int, float)
INTEGER_OUT = Out(twice=True, differentiable=False)


def _integers_only(kernel: str, fwd: Any) -> Any:
    """``fwd`` on integer operands; torch's error naming ``kernel`` for bool and floating ones."""

    def run(xp: Any, a: Any, b: Any) -> Any:
        np.broadcast_shapes(a.shape, b.shape)  # TensorIterator's shapes first (the table words the error)
        if a.dtype.kind not in "iu":
            raise dtypes.kernel_missing(kernel, a.dtype)
        return fwd(xp, a, b)

    return run


def _beyond(b: Any, limit: int) -> Any:
    """Where shift amount ``b`` is negative or at least ``limit`` (the kernel's max_shift)."""
    wide = b.astype(np.int64)
    return (wide < 0) | (wide >= limit)


def _left_shift(xp: Any, a: Any, b: Any) -> Any:
    out_of_range = _beyond(b, a.dtype.itemsize * 8)
    with np.errstate(over="ignore"):
        shifted = xp.left_shift(a, xp.where(out_of_range, 0, b).astype(a.dtype))
    return xp.where(out_of_range, xp.zeros_like(a), shifted).astype(a.dtype)


def _right_shift(xp: Any, a: Any, b: Any) -> Any:
    signed = a.dtype.kind == "i"
    bits = a.dtype.itemsize * 8
    out_of_range = _beyond(b, bits - signed)
    fill = xp.right_shift(a, bits - 1) if signed else xp.zeros_like(a)
    shifted = xp.right_shift(a, xp.where(out_of_range, 0, b).astype(a.dtype))
    return xp.where(out_of_range, fill, shifted).astype(a.dtype)


def _op(kernel: str, fwd: Any) -> OpDef:
    return OpDef(
        "NotDifferentiable", _integers_only(kernel, fwd), BINARY, promote="common", iterator_operands=BINARY
    )


def _truncated(xp: Any, a: Any, b: Any) -> Any:
    """C's ``a / b`` of integers (toward zero), ``b`` nonzero."""
    return (a - xp.fmod(a, b)) // b


def _gcd(xp: Any, a: Any, b: Any) -> Any:
    """torch's calc_gcd: Euclid's loop on ``abs`` of both in the dtype (abs(-128) stays -128 in int8)
    with C's remainder, whose signs it keeps."""
    with np.errstate(over="ignore"):
        a, b = xp.abs(a), xp.abs(b)
    while xp.any(a != 0):
        going = a != 0
        remainder = xp.fmod(b, xp.where(going, a, 1))
        a, b = xp.where(going, remainder, a), xp.where(going, a, b)
    return b


def _lcm(xp: Any, a: Any, b: Any) -> Any:
    """torch's ``g == 0 ? 0 : abs(a / g * b)``, in C's int for the narrower dtypes (promoted), then
    wrapped into the dtype."""
    dtype, g = a.dtype, _gcd(xp, a, b)
    wide = dtype if dtype.itemsize >= 4 else np.dtype(np.int32)
    a, b, g = a.astype(wide), b.astype(wide), g.astype(wide)
    with np.errstate(over="ignore"):
        product = xp.abs(_truncated(xp, a, xp.where(g == 0, 1, g)) * b)
    return xp.where(g == 0, 0, product).astype(dtype)


GCD = _op("gcd_cpu", _gcd)
LCM = _op("lcm_cpu", _lcm)
LEFT_SHIFT = _op("lshift_cpu", _left_shift)
RIGHT_SHIFT = _op("rshift_cpu", _right_shift)


def _function(op: OpDef, name: str, numbers: bool) -> Any:
    """``torch.<name>(input, other)``: two tensors, or (``numbers``) a tensor and a number either way."""

    def of_tensors(input: Tensor, other: Tensor) -> Tensor:
        if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
            raise invalid_call(of_tensors, {"input": input, "other": other}, name)
        return apply(op, input, other)

    def of_numbers(input: Any, other: Any) -> Tensor:
        kinds = (Tensor, *NUMBERS)
        tensors = isinstance(input, Tensor) + isinstance(other, Tensor)
        if not (isinstance(input, kinds) and isinstance(other, kinds)) or not tensors:
            raise invalid_call(of_numbers, {"input": input, "other": other}, name)
        return apply(op, input, other)

    fn = of_numbers if numbers else of_tensors
    fn.__name__ = name
    return fn


def _declare(op: OpDef, name: str, numbers: bool) -> Any:
    """``torch.<name>``, ``x.<name>()`` and ``x.<name>_()`` in place."""
    options = {"tensor_or_number": "other"} if numbers else {"tensor": "other"}
    fn = api.variants(name, out=INTEGER_OUT, **options)(_function(op, name, numbers))
    api.method(name + "_", **options)(ip.inplace_method(lambda self, other: (op, (other,), {})))
    return fn


gcd = _declare(GCD, "gcd", numbers=False)
lcm = _declare(LCM, "lcm", numbers=False)
bitwise_left_shift = _declare(LEFT_SHIFT, "bitwise_left_shift", numbers=True)
bitwise_right_shift = _declare(RIGHT_SHIFT, "bitwise_right_shift", numbers=True)
api.operator("__lshift__")(bitwise_left_shift)
api.operator("__rshift__")(bitwise_right_shift)
api.method("__ilshift__")(ip.inplace_method(lambda self, other: (LEFT_SHIFT, (other,), {})))
api.method("__irshift__")(ip.inplace_method(lambda self, other: (RIGHT_SHIFT, (other,), {})))


@api.operator("__rlshift__")
def _rlshift(self: Tensor, other: Any) -> Tensor:
    """``number << tensor``."""
    return apply(LEFT_SHIFT, other, self)


@api.operator("__rrshift__")
def _rrshift(self: Tensor, other: Any) -> Tensor:
    """``number >> tensor``."""
    return apply(RIGHT_SHIFT, other, self)
