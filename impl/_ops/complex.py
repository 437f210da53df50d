"""Complex tensors: view_as_real / view_as_complex, real and imag (views, settable), conj with its
conjugate bit, conj_physical, resolve_conj, angle, complex, polar; and which ops of the table take
complex operands (``OpDef.complex``: the others refuse them rather than compute garbage).

Gradients follow torch's convention (the conjugate Wirtinger derivative): an op whose derivative
formulas are those of real numbers and which is holomorphic (or real-linear, as sum and the views)
is marked ``HOLOMORPHIC``: its node computes ``conj(formula(conj(grad)))``, which is
``grad * conj(f'(z))`` as derivatives.yaml writes it. The others (abs, sgn, angle, the views
between real and complex) have their own formulas here. A real input's gradient is the real part
(torch's handle_r_to_c, done where the engine conforms a gradient to its input).

impl's conj is not lazy: ``conj()`` returns new memory with the conjugate bit set (``is_conj()``),
so a write through it does not reach the tensor it was taken of, as it does in torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes
from impl._creation import ones_like
from impl._ops import (
    arithmetic,
    comparison,
    elementwise,
    indexing,
    inplace,
    pointwise_ternary,
    products,
    reductions,
    unary_math,
    views,
)
from impl._ops.table import HOLOMORPHIC, OWN, D, OpDef, apply
from impl._signatures import ELEMENTWISE, Out, invalid_call
from impl._tensor import Tensor


def _view_as_real_fwd(xp: Any, a: Any) -> Any:
    """The complex array ``a`` as its real and imaginary parts, a last dimension of 2 (numpy's view)."""
    return np.lib.stride_tricks.as_strided(a.real, (*a.shape, 2), (*a.strides, a.dtype.itemsize // 2))


VIEW_AS_REAL = OpDef(
    "ViewAsRealBackward0",
    _view_as_real_fwd,
    derivatives={"self": D("", lambda g, c: view_as_complex(g.contiguous()))},
    view=True,
    complex=OWN,
)
VIEW_AS_COMPLEX = OpDef(
    "ViewAsComplexBackward0",
    lambda xp, a: a.view(np.complex64 if a.dtype == np.float32 else np.complex128)[..., 0],
    derivatives={"self": D("", lambda g, c: view_as_real(g.contiguous().resolve_conj()))},
    view=True,
    complex=OWN,
)
CONJ = OpDef("ConjBackward0", lambda xp, a: xp.conj(a), derivatives={"self": D("", lambda g, c: g.conj())},
             complex=OWN)
CONJ_PHYSICAL = OpDef(
    "ConjPhysicalBackward0",
    lambda xp, a: xp.conj(a),
    derivatives={"self": D("", lambda g, c: g.conj_physical())},
    complex=OWN,
)


def _angle_grad(g: Any, c: Any) -> Any:
    """torch's angle_backward: ``grad * z / |z|**2 * 1j``, 0 at 0; a real input's is zeros."""
    z = c.self
    if not z.is_complex():
        return g * 0
    return (g * z / z.abs().pow(2) * 1j).masked_fill(z == 0, 0)


ANGLE = OpDef(
    "AngleBackward0",
    lambda xp, a: xp.angle(a) if a.dtype.kind == "c" else xp.where(a < 0, xp.pi, 0).astype(a.dtype) + a * 0,
    derivatives={"self": D("self", _angle_grad)},
    promote="float",
    complex=OWN,
)
COMPLEX = OpDef(
    "ComplexBackward0",
    lambda xp, re, im: re + 1j * im.astype(np.result_type(im.dtype, np.complex64)),
    ("real", "imag"),
    {"real": D("", lambda g, c: real(g)), "imag": D("", lambda g, c: imag(g))},
    complex=OWN,
)


def _polar_grads(g: Any, c: Any, part: str) -> Any:
    """torch's polar_backward: ``real(conj(grad) * sgn(result))`` for abs, ``real(conj(grad) *
    result * 1j)`` for angle."""
    factor = c.result.sgn() if part == "abs" else c.result * 1j
    return real(g.conj() * factor)


POLAR = OpDef(
    "PolarBackward0",
    lambda xp, r, theta: (r * xp.cos(theta) + 1j * (r * xp.sin(theta))).astype(
        np.complex64 if r.dtype == np.float32 else np.complex128
    ),
    ("abs", "angle"),
    {"abs": D("result", lambda g, c: _polar_grads(g, c, "abs")),
     "angle": D("result", lambda g, c: _polar_grads(g, c, "angle"))},
    complex=OWN,
)


@api.function("view_as_real")
def view_as_real(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(view_as_real, locals())
    if input.is_conj():
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor so "
            "you can view it as real, use self.resolve_conj(); however, be warned that the resulting tensor "
            "will NOT alias the original."
        )
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return apply(VIEW_AS_REAL, input)


@api.function("view_as_complex")
def view_as_complex(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(view_as_complex, locals())
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a tensor of "
            f"scalar type: {dtypes.scalar_type(input.dtype)}"
        )
    if not input.dim() or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    strides = input.stride()
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return apply(VIEW_AS_COMPLEX, input)


def _part(input: Tensor, index: int) -> Tensor:
    """The real (0) or imaginary (1) part of a complex tensor, a view (of its own memory for a
    conjugated one, which holds the conjugate's values)."""
    return views.select(apply(VIEW_AS_REAL, input), -1, index)


@api.function("real")
def real(input: Tensor) -> Tensor:
    """The real part, a view; a real tensor is its own real part."""
    if not isinstance(input, Tensor):
        raise invalid_call(real, locals())
    return _part(input, 0) if input.is_complex() else input


@api.function("imag")
def imag(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(imag, locals())
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _part(input, 1)


def set_real(self: Tensor, value: Any) -> None:
    """``t.real = value``: written into the real parts (Tensor's property, set by _methods)."""
    real(self).copy_(value)


def set_imag(self: Tensor, value: Any) -> None:
    imag(self).copy_(value)


@api.variants("conj")
def conj(input: Tensor) -> Tensor:
    """The conjugate, with the conjugate bit set; a real tensor is its own."""
    if not isinstance(input, Tensor):
        raise invalid_call(conj, locals())
    if not input.is_complex():
        return input
    out = apply(CONJ, input)
    out._is_conj = not input._is_conj
    return out


@api.variants("conj_physical", out=ELEMENTWISE.named("conj_physical"))
def conj_physical(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(conj_physical, locals())
    return apply(CONJ_PHYSICAL, input) if input.is_complex() else input


@api.variants("resolve_conj")
def resolve_conj(input: Tensor) -> Tensor:
    """A tensor without the conjugate bit: the input itself if it has none, else a copy."""
    if not isinstance(input, Tensor):
        raise invalid_call(resolve_conj, locals())
    return apply(views.CLONE, input) if input._is_conj else input


@api.variants("is_conj")
def is_conj(input: Tensor) -> bool:
    if not isinstance(input, Tensor):
        raise invalid_call(is_conj, locals())
    return input._is_conj


@api.variants("angle", out=ELEMENTWISE.named("angle"))
def angle(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(angle, locals())
    return apply(ANGLE, input)


# complex's and polar's out: of the result's dtype, in torch's words
PAIR_OUT = Out("same", "Expected object of scalar type {result} but got scalar type {out} for argument 'out'")


def _from_pair(op: OpDef, fn: Any, pair: dict[str, Any]) -> Tensor:
    """complex's and polar's ``op`` on their two real tensors, checked as torch checks them (one
    floating dtype; impl has no complex32, so float16 is refused)."""
    if not all(isinstance(t, Tensor) for t in pair.values()):
        raise invalid_call(fn, pair)
    first, second = (t.dtype for t in pair.values())
    if not (first.is_floating_point and second.is_floating_point and first is not dtypes.bfloat16):
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{dtypes.scalar_type(first)} and {dtypes.scalar_type(second)}"
        )
    if first is not second:
        raise RuntimeError(
            f"Expected object of scalar type {dtypes.scalar_type(first)} but got scalar type "
            f"{dtypes.scalar_type(second)} for second argument"
        )
    if first is dtypes.float16:
        raise NotImplementedError("impl has no complex32: torch.complex and torch.polar of float16 tensors")
    return apply(op, *pair.values())


@api.function("complex", out=PAIR_OUT.named("complex"))
def complex(real: Tensor, imag: Tensor) -> Tensor:
    return _from_pair(COMPLEX, complex, {"real": real, "imag": imag})


@api.function("polar", out=PAIR_OUT.named("polar"))
def polar(abs: Tensor, angle: Tensor) -> Tensor:
    return _from_pair(POLAR, polar, {"abs": abs, "angle": angle})


# the ops of the table that take complex operands
for _op in (
    arithmetic.ADD, arithmetic.SUB, arithmetic.RSUB, arithmetic.RSUB_NUMBER, arithmetic.MUL,
    arithmetic.NEG, arithmetic.POW_TS, arithmetic.POW_TT, arithmetic.POW_ST,
    unary_math.EXP, unary_math.LOG, unary_math.SQRT, unary_math.SIN, unary_math.COS, unary_math.TANH,
    reductions.SUM, reductions.SUM_DIM, reductions.MEAN, reductions.MEAN_DIM,
    products.MM, products.BMM, products.MV, products.DOT,
    views.VIEW, views.RESHAPE_ALIAS, views.UNSAFE_VIEW, views.TRANSPOSE, views.T, views.PERMUTE, views.EXPAND,
    views.UNSQUEEZE, views.SQUEEZE, views.SQUEEZE_DIM, views.SQUEEZE_DIMS, views.SELECT, views.SLICE,
    views.ALIAS, views.CLONE, views.CLONE_CONTIGUOUS, indexing.MASKED_FILL, pointwise_ternary.WHERE,
    elementwise.MUL_SCALAR, elementwise.DIV_SCALAR, elementwise.ADD_SCALAR, elementwise.SUB_SCALAR,
    unary_math.TANH_BACKWARD, inplace.COPY, inplace.FILL,
):
    _op.complex = HOLOMORPHIC
# their own formulas hold for complex inputs (abs: grad * sgn(self)), or they have none
for _op in (
    unary_math.ABS, unary_math.SGN, comparison.EQ, comparison.NE, comparison.LT, comparison.LE, comparison.GT,
    comparison.GE, comparison.ISNAN, comparison.ISFINITE,
):
    _op.complex = OWN
del _op


@api.variants("isreal")
def isreal(input: Tensor) -> Tensor:
    """Whether each element's imaginary part is zero: every element of a real tensor."""
    if not isinstance(input, Tensor):
        raise invalid_call(isreal, locals())
    if not input.dtype.is_complex:
        return ones_like(input, dtype=dtypes.bool_)
    return imag(input) == 0
