"""What the elementwise op families share: their operand lists, zero-gradient formulas, alpha
handling, the Scalar overloads backward formulas call (``mul_scalar`` is torch's mul.Scalar),
torch's rounding of float32 and half-precision kernels, and the unary-op and kernel builders.

Backward formulas follow derivatives.yaml (what they use is what gets saved). They return
gradients of the broadcast shape; the engine reduces them to each input's shape (sum_to), as
torch's engine does when validating a node's outputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import dtypes
from impl._creation import full_like, zeros_like
from impl._ops.cpu_kernels import fma, vector_bytes
from impl._ops.table import FLOAT_DTYPES, D, OpDef, apply, auto_element_wise, auto_linear
from impl._tensor import Tensor

# the operands torch's TensorIterator runs over, in its order (OpDef.iterator_operands)
UNARY = ("self",)
BINARY = ("self", "other")


def zero_grad(g: Any, c: Any) -> Any:
    """derivatives.yaml's ``zeros_like(grad)``: zeros that carry no graph (the next order sees a
    constant, as in torch)."""

    return zeros_like(g)


def efficient_zero(g: Any, c: Any) -> Any:
    """sgn_backward of a real input: torch's efficient zero tensor (Tensor._efficient_zero), which
    products and quotients pass on as zeros (never 0 * inf = nan) and tolist()/numpy() refuse."""
    z = zero_grad(g, c)
    z._efficient_zero = True
    return z


def conj_of(t: Any) -> Any:
    """``t.conj()`` in a formula, a real ``t`` as is (without the call)."""
    return t.conj() if t._data.dtype.kind == "c" else t


# -- arithmetic --------------------------------------------------------------------------------
def _plain_alpha(alpha: Any) -> bool:
    """Whether ``alpha`` is add's default 1 (True, equal to 1, is no default: it is checked)."""
    return alpha == 1 and not isinstance(alpha, (bool, np.bool_))


def check_alpha(dt: Any, alpha: Any) -> None:
    """torch's alpha_check against the result's dtype ``dt``."""
    if isinstance(alpha, (bool, np.bool_)) and dt.kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dt.kind not in "fc" and isinstance(alpha, (float, np.floating)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _add_scaled(xp: Any, a: Any, b: Any, alpha: Any, sign: int = 1) -> Any:
    """``a + sign * alpha * b`` as torch's CPU add kernel computes it (checked bit for bit against
    torch on same-shape operands), after torch's check of ``alpha``: one fused multiply-add with
    ``alpha`` cast to the dtype; float16 goes through vectors of ``lanes`` elements, and the tail
    of a row that fills no whole vector runs the scalar loop in float16 arithmetic (the product
    rounded to float16 before the sum). A bool result is ``a or (b and alpha)``."""
    dt = np.result_type(a.dtype, b.dtype)
    check_alpha(dt, alpha)
    if dt.kind == "b":
        return a | b if alpha else a.copy()
    alpha = sign * alpha
    if xp is not np or dt.kind != "f":  # (numpy's fma takes host arrays)
        return a + b * alpha
    a, b = np.broadcast_arrays(a, b)
    if dt.itemsize >= 4:  # (ascontiguousarray makes a 0-d array 1-d: the shape is restored)
        return fma(np.ascontiguousarray(a), np.ascontiguousarray(b), dt.type(alpha)).reshape(a.shape)
    alpha16 = dt.type(alpha)
    a32 = a.astype(np.float32)
    out = (a32 + b.astype(np.float32) * np.float32(alpha16)).astype(dt)  # the product is exact
    lanes = vector_bytes() // dt.itemsize
    row = out.size if a.flags.c_contiguous and b.flags.c_contiguous else (out.shape[-1] if out.ndim else 1)
    tail = row % lanes
    if tail and out.size:
        scalar = (a32 + (b * alpha16).astype(np.float32)).astype(dt).reshape(-1, row)
        out.reshape(-1, row)[:, row - tail :] = scalar[:, row - tail :]
    return out


def _no_derivative(name: str) -> Any:
    """The formula of an op torch has no derivative for: its backward raises torch's error."""

    def formula(g: Any, c: Any) -> Any:
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return formula


# -- Scalar overloads: what torch's C++ backward formulas call for ``tensor * 2``, ``tensor + 1``
# (mul.Scalar ...), so double-backward graphs carry torch's names (MulBackward1, AddBackward1 ...).
# User code never reaches them: Python numbers are wrapped as tensors (MulBackward0).
def _mul_number(xp: Any, a: Any, other: Any) -> Any:
    """``a * other`` as torch's mul by a number: half types compute in float32 with the number
    kept in float32 (not rounded to the half type first), rounded once."""
    if a.dtype in FLOAT_DTYPES and a.dtype.itemsize < 4:
        return (a.astype(xp.float32) * xp.asarray(other, dtype=xp.float32)).astype(a.dtype)
    return a * xp.asarray(other, dtype=a.dtype)


MUL_SCALAR = OpDef(
    "MulBackward1",
    lambda xp, a, other: _mul_number(xp, a, other),
    derivatives={"self": D("other", lambda g, c: mul_scalar(g, c.other))},
    iterator_operands=BINARY,
    jvp=auto_linear,
)
DIV_SCALAR = OpDef(
    "DivBackward1",
    lambda xp, a, other: a / xp.asarray(other, dtype=a.dtype),
    derivatives={"self": D("other", lambda g, c: div_scalar(g, c.other))},
    iterator_operands=BINARY,
    jvp=auto_linear,
)
ADD_SCALAR = OpDef(
    "AddBackward1",
    lambda xp, a, other: a + xp.asarray(other, dtype=a.dtype),
    derivatives={"self": D("", lambda g, c: g)},
    iterator_operands=BINARY,
    jvp=lambda c: c.self_t.clone(),
)
SUB_SCALAR = OpDef(
    "SubBackward1",
    lambda xp, a, other: a - xp.asarray(other, dtype=a.dtype),
    derivatives={"self": D("", lambda g, c: g)},
    iterator_operands=BINARY,
    jvp=lambda c: c.self_t.clone(),
)


def mul_scalar(t: Any, other: float) -> Any:
    """``t * other`` as torch's mul.Scalar (MulBackward1)."""
    return apply(MUL_SCALAR, t, other=other)


def div_scalar(t: Any, other: float) -> Any:
    """``t / other`` as torch's div.Scalar (DivBackward1)."""
    return apply(DIV_SCALAR, t, other=other)


def add_scalar(t: Any, other: float) -> Any:
    """``t + other`` as torch's add.Scalar (AddBackward1)."""
    return apply(ADD_SCALAR, t, other=other)


def sub_scalar(t: Any, other: float) -> Any:
    """``t - other`` as torch's sub.Scalar (SubBackward1), which refuses a bool ``t`` (pow's
    backward computes ``exponent - 1``: a bool exponent fails there, in torch's words)."""
    if t._data.dtype.kind == "b":
        check_bool_subtraction(t, other)
    return apply(SUB_SCALAR, t, other=other)


def _is_bool(x: Any) -> bool:
    return x.dtype is dtypes.bool_ if isinstance(x, Tensor) else isinstance(x, (bool, np.bool_))


def check_bool_subtraction(input: Any, other: Any) -> None:
    """torch refuses ``-`` when either operand is bool (a bool tensor or a Python bool)."""
    if _is_bool(input) and _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )


def scalar_minus(value: float, t: Any) -> Any:
    """C++'s ``Scalar - Tensor`` as ATen writes it in backward formulas,
    ``empty_like(t).fill_(value).sub_(t)``: a SubBackward0 with no edge for the scalar."""

    return full_like(t, value).sub_(t)


_FLOAT32, _FLOAT64 = np.dtype(np.float32), np.dtype(np.float64)


def rounded(name: str) -> Any:
    """numpy's transcendental ``name`` evaluated in float64 and rounded to the input's dtype, the
    half types through float32 (which torch computes them in): torch's float32 kernels are nearly
    correctly rounded, numpy's float32 ones are not (seen through exp chains)."""

    def fwd(xp: Any, a: Any) -> Any:
        fn = getattr(xp, name)
        dt = a.dtype
        if dt is _FLOAT32:  # the common case, its last cast (to float32 again) a no-op
            return fn(a.astype(_FLOAT64)).astype(_FLOAT32)
        if dt == xp.float64 or dt not in FLOAT_DTYPES:
            return fn(a)
        return fn(a.astype(xp.float64)).astype(xp.float32).astype(dt, copy=False)

    return fwd


def opmath(fwd: Any) -> Any:
    """A compound kernel evaluated as torch's CPU kernels evaluate half precision: in float32,
    rounded once at the end."""

    def run(xp: Any, *arrays: Any, **attrs: Any) -> Any:
        dt = arrays[0].dtype
        if dt in FLOAT_DTYPES and dt.itemsize < 4:  # float16 and bfloat16 (numpy kind "V")
            return fwd(xp, *(a.astype(xp.float32) for a in arrays), **attrs).astype(dt)
        return fwd(xp, *arrays, **attrs)

    return run


# -- unary math ------------------------------------------------------------------------------
def unary_op(
    name: str, fwd: Any, uses: str, formula: Any, promote: str | None = "float", jvp: Any = auto_element_wise
) -> OpDef:
    """A unary op of the table: its node name, forward, the derivative of its input, its jvp (by
    default derivatives.yaml's ``auto_element_wise``: an elementwise op's Jacobian is diagonal, so
    its backward formula with the tangent for the gradient is its jvp)."""
    return OpDef(
        name, fwd, derivatives={"self": D(uses, formula)}, promote=promote, iterator_operands=UNARY, jvp=jvp
    )


def _keep_first_on_tie(xp: Any, pick: str, a: Any, b: Any) -> Any:
    """numpy's ``pick`` ("maximum" or "minimum") of ``a`` and ``b``, nan propagating, keeping
    ``a`` on a tie (of zeros of two signs, where numpy may give either): torch's clamp_min
    (``a < low ? low : a``; relu is clamp_min(0), so relu(-0.0) is -0.0), clamp_max and the
    scalar loop of maximum/minimum (``std::max``)."""
    out = xp.asarray(getattr(xp, pick)(a, b))
    xp.copyto(out, a, where=a == b)
    return out


def refuses_bool(kernel: str, fwd: Any) -> Any:
    """``fwd``, whose torch kernel ``kernel`` has no bool version: a bool tensor raises its error."""

    def run(xp: Any, a: Any) -> Any:
        if a.dtype.kind == "b":
            raise dtypes.kernel_missing(kernel, a.dtype)
        return fwd(xp, a)

    return run


def floating_only(kernel: str, fwd: Any) -> Any:
    """``fwd``, whose torch kernel ``kernel`` exists for floating dtypes only: the operands are
    checked to broadcast first (as torch builds its iterator before dispatching; numpy's
    ValueError, which the op's call turns into torch's error), then another dtype of the first
    raises the kernel's NotImplementedError (``"frac_cpu" not implemented for 'Long'``)."""

    def run(xp: Any, *arrays: Any, **attrs: Any) -> Any:
        np.broadcast_shapes(*(a.shape for a in arrays))  # (shapes: host tuples on any device)
        if arrays[0].dtype not in FLOAT_DTYPES:
            raise dtypes.kernel_missing(kernel, arrays[0].dtype)
        return fwd(xp, *arrays, **attrs)

    return run

