"""The ops on a float's representation: frexp (mantissa and exponent), ldexp (scaling by a power of
two) and nextafter (the neighbouring float), as torch's CPU kernels compute them.

ldexp takes torch 2.13's two paths: a floating input with an integer exponent runs ``std::ldexp``
into a result of the input's shape and dtype (TensorIterator resizes it, with its deprecation
warning, where the exponent broadcasts it wider); any other pair multiplies the input by
``pow(2, other)``, computed in float32 for an integer or float32 input, else in the promoted dtype
of the input's 0-d 2.0 and ``other``. Its node (LdexpBackward0) saves other and the result.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes, return_types
from impl._creation import zeros_like
from impl._ops import inplace as ip
from impl._ops.arithmetic import pow
from impl._ops.elementwise import BINARY, UNARY, floating_only, mul_scalar
from impl._ops.table import FLOAT_DTYPES, D, OpDef, apply
from impl._signatures import ELEMENTWISE, OUT_RESIZED, Out, invalid_call
from impl._tensor import Tensor


def _frexp(xp: Any, a: Any) -> tuple[Any, Any]:
    """C's frexp: a mantissa in [0.5, 1) of the input's sign and an int32 exponent (0 for zeros,
    infinities and NaN, which are their own mantissas); no kernel for integers or bool."""
    if a.dtype not in FLOAT_DTYPES:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = xp.frexp(a)
    return mantissa.astype(a.dtype), exponent.astype(xp.int32)


FREXP = OpDef(
    "FrexpBackward0",
    _frexp,
    outputs=("result", "exponent"),
    derivatives={"self": D("exponent", lambda g, c: g / c.exponent.exp2())},
    iterator_operands=UNARY,
)

# exponents beyond these scale every finite float to 0 or an infinity: clipped, so they fit int32
_EXPONENT_LIMIT = 1 << 12


def _category(d: Any) -> int:
    return 0 if d.kind == "b" else 2 if d in FLOAT_DTYPES else 1


def _promote(a: Any, b: Any) -> Any:
    """torch's promotion of two operands (numpy arrays): a 0-d one gives way to one with dims
    unless its category (bool, integer, floating) is higher."""
    if (a.ndim == 0) != (b.ndim == 0):
        dims, zero = (a, b) if a.ndim else (b, a)
        return zero.dtype if _category(zero.dtype) > _category(dims.dtype) else dims.dtype
    return dtypes.promote_types(dtypes.from_numpy_dtype(a.dtype), dtypes.from_numpy_dtype(b.dtype)).np


def _ldexp(xp: Any, a: Any, b: Any) -> Any:
    """torch's ldexp of ``a`` by ``b`` (see the module doc): exact where ``b`` is an integer."""
    if a.dtype in FLOAT_DTYPES and b.dtype.kind in "iub":
        if b.dtype.kind == "b":
            raise dtypes.kernel_missing("ldexp_cpu_exp", b.dtype)
        wide = a.astype(xp.float64) if a.dtype.itemsize < 8 else a
        exponent = xp.clip(b.astype(xp.int64), -_EXPONENT_LIMIT, _EXPONENT_LIMIT).astype(xp.int32)
        return xp.ldexp(wide, exponent).astype(a.dtype)
    if a.dtype not in FLOAT_DTYPES or a.dtype == np.float32:  # pow(2.0, other)
        power_dtype = b.dtype if b.dtype in FLOAT_DTYPES else np.dtype(np.float32)
    else:  # pow of a 0-d 2.0 of a's dtype
        power_dtype = _promote(xp.empty((), a.dtype), b)
    power = xp.exp2(b.astype(xp.float64)).astype(power_dtype)
    result_dtype = _promote(a, power)
    if result_dtype.itemsize < 4:  # half precision multiplies in float32, rounded once
        return (a.astype(xp.float32) * power.astype(xp.float32)).astype(result_dtype)
    return a.astype(result_dtype) * power.astype(result_dtype)


LDEXP = OpDef(
    "LdexpBackward0",
    _ldexp,
    BINARY,
    {
        "self": D("other", lambda g, c: g * pow(2, c.other)),
        "other": D("result", lambda g, c: mul_scalar(g * c.result, math.log(2))),
    },
    iterator_operands=BINARY,
)


def _nextafter(xp: Any, a: Any, b: Any) -> Any:
    """C's nextafter: ``b`` itself where the two are equal (-0.0 toward 0.0 gives 0.0)."""
    return xp.where(a == b, b, xp.nextafter(a, b)).astype(a.dtype)


NEXTAFTER = OpDef(
    "NextafterBackward0",
    floating_only("nextafter_cpu", _nextafter),
    BINARY,
    {
        "self": D("self other", lambda g, c: g * (c.self != c.other)),  # 0 where the two are equal
        "other": D("", lambda g, c: zeros_like(g)),  # (saving nothing: torch saves for self's only)
    },
    promote="common",
    iterator_operands=BINARY,
)


@api.variants("frexp", out=Out(parts=(Out("same"), Out("same")), checks_first=True))
def frexp(input: Tensor) -> Any:
    """(mantissa, exponent) with ``input = mantissa * 2 ** exponent``, a named tuple."""
    if not isinstance(input, Tensor):
        raise invalid_call(frexp, locals())
    return return_types.frexp(apply(FREXP, input))


@api.variants("ldexp", tensor="other", out=ELEMENTWISE)
def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``input * 2 ** other``."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise invalid_call(ldexp, locals())
    if input.is_floating_point() and not other.is_floating_point() and input.numel():
        try:
            shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(other.shape)))
        except ValueError:  # (the op raises torch's error)
            shape = tuple(input.shape)
        if shape != tuple(input.shape):  # the result, made like input, resized by the iterator
            text = OUT_RESIZED.format(old=list(input.shape), new=list(shape))
            warnings.warn(text, UserWarning, stacklevel=2)
    return apply(LDEXP, input, other)


@api.method("ldexp_", tensor="other")
def _ldexp_(self: Tensor, other: Tensor) -> Tensor:
    if not self.is_floating_point():
        raise RuntimeError(f"ldexp can't be cast to the desired output type {dtypes.scalar_type(self.dtype)}")
    return ip.apply_inplace(LDEXP, self, other)


@api.variants("nextafter", tensor="other", out=ELEMENTWISE)
def nextafter(input: Tensor, other: Tensor) -> Tensor:
    """The float next to ``input`` in the direction of ``other`` (in their promoted dtype)."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise invalid_call(nextafter, locals())
    return apply(NEXTAFTER, input, other)


api.method("nextafter_", tensor="other")(ip.inplace_method(lambda self, other: (NEXTAFTER, (other,), {})))
