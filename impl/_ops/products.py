"""Matrix products: mm, bmm, dot, vdot, mv, addmm, addmv, addr, addbmm, outer (ger), trace and matmul,
which torch composes of them (folding batch dims into mm, or broadcasting into bmm) with torch's views
and grad_fn names."""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import _api as api
from impl import _autocast, dtypes
from impl._creation import arange, zeros
from impl._ops.inplace import inplace_method, squeeze_result_
from impl._ops.table import (
    D,
    OpDef,
    apply,
    auto_linear,
    bilinear,
    bilinear_dense,
    broadcast_mismatch,
    defined_sum,
    fill_array,
)
from impl._ops.views import _unsafe_view, squeeze
from impl._signatures import ELEMENTWISE, EXACT, Out, invalid_call
from impl._tensor import Tensor


def mm_mat1_backward(g: Any, mat2: Any, sizes: tuple, strides: tuple, alpha: Any = 1) -> Any:
    """Gradient of ``mat1 @ mat2`` for mat1; a column-major mat1 gets a column-major gradient
    (torch's mm_mat1_backward: ``.grad`` then keeps the parameter's layout and is not copied)."""
    if strides[0] == 1 and strides[1] == sizes[0]:
        out = mat2.mm(g.t()).t()
    else:
        out = g.mm(mat2.t())
    return out if alpha == 1 else out * alpha


def mm_mat2_backward(g: Any, mat1: Any, sizes: tuple, strides: tuple, alpha: Any = 1) -> Any:
    """Gradient of ``mat1 @ mat2`` for mat2, column-major when mat2 was (torch's mm_mat2_backward;
    a Linear's ``weight.t()`` is, so the weight's gradient comes out contiguous)."""
    if strides[0] == 1 and strides[1] == sizes[0]:
        out = g.t().mm(mat1).t()
    else:
        out = mat1.t().mm(g)
    return out if alpha == 1 else out * alpha


def _product(a: Any, b: Any) -> Any:
    """``a @ b``; bfloat16 accumulated in float32 and rounded once, as torch's CPU kernels (numpy's
    bfloat16 matmul would return float32)."""
    if str(a.dtype) == "bfloat16":
        return (a.astype("float32") @ b.astype("float32")).astype(a.dtype)
    return a @ b


MM = OpDef(
    "MmBackward0",
    lambda xp, a, b: _product(a, b),
    ("self", "mat2"),
    {
        "self": D(
            "mat2 self.strides", lambda g, c: mm_mat1_backward(g, c.mat2, c.shape("self"), c.strides("self"))
        ),
        "mat2": D(
            "self mat2.strides", lambda g, c: mm_mat2_backward(g, c.self, c.shape("mat2"), c.strides("mat2"))
        ),
    },
    jvp=bilinear_dense,  # self_t.mm(mat2_p) + self_p.mm(mat2_t)
)


BMM = OpDef(
    "BmmBackward0",
    lambda xp, a, b: _product(a, b),
    ("self", "mat2"),
    {
        "self": D("mat2", lambda g, c: g.bmm(c.mat2.transpose(1, 2))),
        "mat2": D("self", lambda g, c: c.self.transpose(1, 2).bmm(g)),
    },
    jvp=bilinear_dense,
)


def _dot_def(node_name: str, other: str) -> OpDef:
    """dot's op (and vdot's, which for real vectors differs in its node's and operand's names)."""
    return OpDef(
        node_name,
        lambda xp, a, b: xp.dot(a, b),
        ("self", other),
        {"self": D(other, lambda g, c: g * getattr(c, other)), other: D("self", lambda g, c: g * c.self)},
        jvp=bilinear,
    )


DOT = _dot_def("DotBackward0", "tensor")
VDOT = _dot_def("VdotBackward0", "other")


def _check_1d(t: Tensor, arg: str, fn: str) -> None:
    """ATen's check_1d."""
    if t.dim() != 1:
        raise RuntimeError(f"{fn}: Expected 1-D argument {arg}, but got {t.dim()}-D")


@api.variants("outer", "ger", tensor="vec2", out=ELEMENTWISE.named("mul"))
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """torch's outer (and its alias ger): ``input`` reshaped to a column (a view: ViewBackward0)
    times ``vec2``."""
    if not (isinstance(input, Tensor) and isinstance(vec2, Tensor)):
        raise invalid_call(outer, locals())
    _check_1d(input, "self", "outer")
    _check_1d(vec2, "vec2", "outer")
    return input.reshape(input.shape[0], 1) * vec2


def _outer(g: Any, vec: Any) -> Any:
    """derivatives.yaml's ``grad.ger(vec)``."""
    return outer(g, vec)


MV = OpDef(
    "MvBackward0",
    lambda xp, a, v: _product(a, v),
    ("self", "vec"),
    {"self": D("vec", lambda g, c: _outer(g, c.vec)), "vec": D("self", lambda g, c: c.self.t().mv(g))},
    jvp=bilinear_dense,
)


def _addmm_fwd(xp: Any, s: Any, a: Any, b: Any, beta: Any, alpha: Any) -> Any:
    if str(a.dtype) == "bfloat16" and s.dtype == a.dtype:  # in float32, rounded once
        wide = _addmm_fwd(xp, s.astype("float32"), a.astype("float32"), b.astype("float32"), beta, alpha)
        return wide.astype(a.dtype)
    if (beta, alpha) == (1, 1):
        product = a @ b
        if product.ndim == 2 and product.dtype == s.dtype:  # (s + product, into the product)
            return xp.add(s, product, out=product)
        return s + product
    if s.dtype.kind in "iu":  # torch converts the scalars to an integer input's dtype as a fill's
        beta, alpha = (fill_array(xp, v, s.dtype) for v in (beta, alpha))  # (0.5 -> 0, -1 -> 255 in uint8)
    product = alpha * (a @ b)
    return product if beta == 0 else beta * s + product  # beta 0: the input is not read (nan, inf)


ADDMM = OpDef(
    "AddmmBackward0",
    _addmm_fwd,
    ("self", "mat1", "mat2"),
    {
        "self": D("beta", lambda g, c: g if c.beta == 1 else g * c.beta),
        "mat1": D(
            "mat2 alpha mat1.strides",
            lambda g, c: mm_mat1_backward(g, c.mat2, c.shape("mat1"), c.strides("mat1"), c.alpha),
        ),
        "mat2": D(
            "mat1 alpha mat2.strides",
            lambda g, c: mm_mat2_backward(g, c.mat1, c.shape("mat2"), c.strides("mat2"), c.alpha),
        ),
    },
    promote="common",
    jvp=lambda c: _addmm_jvp(c),
)


def _addmm_jvp(c: Any) -> Any:
    """derivatives.yaml's ``maybe_multiply(self_t, beta) + maybe_multiply(mat1_t.mm(mat2_p), alpha)
    + maybe_multiply(mat1_p.mm(mat2_t), alpha)``, the self term left out where its tangent is
    undefined, the products computed with zeros (an infinite primal gives NaN, as torch's)."""
    terms = []
    if c.tangent("self") is not None:
        terms.append(c.self_t if c.beta == 1 else c.self_t * c.beta)
    for product in (c.mat1_t.mm(c.mat2), c.mat1.mm(c.mat2_t)):
        terms.append(product if c.alpha == 1 else product * c.alpha)
    out = terms[0]
    for term in terms[1:]:
        out = out + term
    return out


def _trace_back(g: Any, c: Any) -> Any:
    """torch's trace_backward: zeros with the gradient filled in at every (m + 1)-th element, viewed
    as the matrix (the others +0.0; graph ViewBackward0 <- IndexFillBackward1)."""

    n, m = c.shape()
    diagonal = arange(0, n * m, m + 1, device=g.device)
    return zeros(n * m, dtype=g.dtype, device=g.device).index_fill(0, diagonal, g).view(n, m)


def _trace(xp: Any, a: Any) -> Any:
    """The trace; of integers an int64 (numpy's of uint8 would be a uint64); none of bools."""
    if a.dtype.kind == "b":
        raise dtypes.kernel_missing("trace", dtypes.bool_)
    return xp.trace(a, dtype=xp.int64 if a.dtype.kind in "iu" else None)


TRACE = OpDef(
    "TraceBackward0",
    _trace,
    derivatives={"self": D("", _trace_back)},
    jvp=auto_linear,
)


def _check_same_dtype(a: Tensor, b: Tensor) -> None:
    """mm's check, which spells dtypes as C++ types (``double != float``)."""
    if a.dtype is not b.dtype:
        cpp = dtypes.CPP_NAMES
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {cpp[a.dtype.name]} != {cpp[b.dtype.name]}"
        )


@api.variants("mm", tensor="mat2", out=EXACT)
@_autocast.policy("lower")
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(mat2, Tensor)):
        raise invalid_call(mm, locals())
    if input.dim() != 2 or mat2.dim() != 2:
        bad = input if input.dim() != 2 else mat2
        which = "self" if bad is input else "mat2"
        raise RuntimeError(f"{which} must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})"
        )
    _check_same_dtype(input, mat2)
    return apply(MM, input, mat2)


@api.variants("bmm", tensor="mat2", out=EXACT)
@_autocast.policy("lower")
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(mat2, Tensor)):
        raise invalid_call(bmm, locals())
    if input.dim() != 3 or mat2.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    if input.dtype is not mat2.dtype:
        expected, found = dtypes.scalar_type(input.dtype), dtypes.scalar_type(mat2.dtype)
        raise RuntimeError(f"expected scalar type {expected} but found {found}")
    return apply(BMM, input, mat2)


def _scaled(t: Any, factor: Any) -> Any:
    """derivatives.yaml's maybe_multiply: ``t`` itself for a factor of 1."""
    return t if factor == 1 else t * factor


BADDBMM = OpDef(
    "BaddbmmBackward0",
    lambda xp, s, a, b, beta, alpha: _addmm_fwd(xp, s, a, b, beta, alpha),
    ("self", "batch1", "batch2"),
    {
        "self": D("beta", lambda g, c: _scaled(g, c.beta)),
        "batch1": D("batch2 alpha", lambda g, c: _scaled(g.bmm(c.batch2.transpose(1, 2)), c.alpha)),
        "batch2": D("batch1 alpha", lambda g, c: _scaled(c.batch1.transpose(1, 2).bmm(g), c.alpha)),
    },
)


@api.variants("baddbmm", out=EXACT)
@_autocast.policy("lower")
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)``, input broadcast to the product's shape."""
    if not all(isinstance(t, Tensor) for t in (input, batch1, batch2)):
        raise invalid_call(baddbmm, locals())
    input.expand(batch1.size(0), batch1.size(1), batch2.size(2))  # torch expands first: expand's errors
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: [{batch2.shape[0]}, {batch2.shape[1]}]."
        )
    return apply(BADDBMM, input, batch1, batch2, beta=beta, alpha=alpha)


# dot's out=: resized first, its dtype then checked as the operands' (worded out's first)
DOT_OUT = Out("same", "result dtype {out} does not match input dtype {result}", resize_first=True)


def _matmul_out(args: tuple, kwargs: dict) -> Out:
    """matmul's out=: dot's for two vectors, else out's dtype must be the result's."""
    vectors = [a for a in args[:2] if isinstance(a, Tensor) and a.dim() == 1]
    return DOT_OUT if len(vectors) == 2 else EXACT


@api.variants("dot", tensor="tensor", out=DOT_OUT)
def dot(input: Tensor, tensor: Tensor) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(tensor, Tensor)):
        raise invalid_call(dot, locals())
    if input.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {tensor.dim()}D tensors")
    if input.dtype is not tensor.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{dtypes.scalar_type(input.dtype)} and {dtypes.scalar_type(tensor.dtype)}"
        )
    if input.numel() != tensor.numel():
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.numel()}] and src "
            f"[{tensor.numel()}] to have the same number of elements, but got {input.numel()} "
            f"and {tensor.numel()} elements respectively"
        )
    return apply(DOT, input, tensor)


@api.variants("vdot", tensor="other", out=DOT_OUT.named("vdot"))
def vdot(input: Tensor, other: Tensor) -> Tensor:
    """The dot product with ``input`` conjugated: of real vectors dot's value, checks and errors,
    its node VdotBackward0."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise invalid_call(vdot, locals())
    dot(input, other.detach())  # dot's checks and errors
    return apply(VDOT, input, other)


@api.variants("mv", tensor="vec", out=EXACT)
def mv(input: Tensor, vec: Tensor) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(vec, Tensor)):
        raise invalid_call(mv, locals())
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x{input.shape[1]}), "
            f"vec ({vec.shape[0]})"
        )
    if input.dtype is not vec.dtype:  # torch's mv is addmv into a result of vec's dtype
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {dtypes.scalar_type(vec.dtype)}, "
            f"{dtypes.scalar_type(input.dtype)}, and {dtypes.scalar_type(vec.dtype)}"
        )
    return apply(MV, input, vec)


@api.variants("addmm", out=EXACT)
@_autocast.policy("lower")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(mat1, Tensor) and isinstance(mat2, Tensor)):
        raise invalid_call(addmm, locals())
    for name, t in (("self", input), ("mat1", mat1)):
        if isinstance(t, Tensor) and t.dtype is not mat2.dtype:
            got = f"{dtypes.scalar_type(t.dtype)} and {dtypes.scalar_type(mat2.dtype)}"
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {got}")
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if t.dim() != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t.dim()}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})"
        )
    n, p = mat1.shape[0], mat2.shape[1]
    if isinstance(input, Tensor) and tuple(input.shape) not in ((p,), (n, p)):
        input.expand(n, p)  # torch expands ``input`` to the result's shape: expand's errors
    return apply(ADDMM, input, mat1, mat2, beta=beta, alpha=alpha)


def _check_scales(input: Tensor, beta: Any, alpha: Any) -> None:
    """addr's checks of its scalars: no bool scale of a non-bool input, no float scale of an
    integer or bool one."""
    for name, value in (("beta", beta), ("alpha", alpha)):
        if isinstance(value, bool) and input.dtype is not dtypes.bool_:
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
        if isinstance(value, float) and not (input.dtype.is_floating_point or input.dtype.is_complex):
            raise RuntimeError(
                f"For integral input tensors, argument {name} must not be a floating point number."
            )


ADDMV = OpDef(
    "AddmvBackward0",
    lambda xp, s, a, v, beta, alpha: _addmm_fwd(xp, s, a, v, beta, alpha),
    ("self", "mat", "vec"),
    {
        "self": D("beta", lambda g, c: _scaled(g, c.beta)),
        "mat": D("vec alpha", lambda g, c: _scaled(_outer(g, c.vec), c.alpha)),
        "vec": D("mat alpha", lambda g, c: _scaled(c.mat.t().mv(g), c.alpha)),
    },
)


@api.variants("addmv", out=EXACT)
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``, input a vector or a number broadcast to the result."""
    if not all(isinstance(t, Tensor) for t in (input, mat, vec)):
        raise invalid_call(addmv, locals())
    if not (mat.dim() == 2 and vec.dim() == 1 and input.dim() <= 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, {vec.dim()}")
    if mat.shape[1] != vec.shape[0] or input.numel() not in (1, mat.shape[0]):
        if input.dim() == 0:  # the message reads input.size(0)
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        raise RuntimeError(
            f"size mismatch, got input ({input.size(0)}), mat ({mat.shape[0]}x{mat.shape[1]}), "
            f"vec ({vec.shape[0]})"
        )
    if not input.dtype is mat.dtype is vec.dtype:
        got = ", ".join(dtypes.scalar_type(t.dtype) for t in (input, mat))
        last = dtypes.scalar_type(vec.dtype)
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {got}, and {last}")
    return apply(ADDMV, input, mat, vec, beta=beta, alpha=alpha)


def _addr_fwd(xp: Any, s: Any, v1: Any, v2: Any, beta: Any, alpha: Any) -> Any:
    """ATen's addr kernel: ``beta * self + alpha * vec1 * vec2`` (input not read for beta 0); of
    bools ``(beta and self) or (alpha and vec1 and vec2)``."""
    dtype = xp.result_type(s, v1, v2)
    s, v1, v2 = (a.astype(dtype) for a in (s, v1, v2))
    outer = v1[:, None] * v2[None, :]
    if dtype.kind == "b":
        return (bool(beta) & s) | (bool(alpha) & outer)
    if dtype.kind in "iu":
        beta, alpha = (fill_array(xp, v, dtype) for v in (beta, alpha))
    product = alpha * v1[:, None] * v2[None, :] if alpha != 1 else outer
    return product if beta == 0 else (s if beta == 1 else beta * s) + product


ADDR = OpDef(
    "AddrBackward0",
    _addr_fwd,
    ("self", "vec1", "vec2"),
    {
        "self": D("beta", lambda g, c: _scaled(g, c.beta)),
        "vec1": D("vec2 alpha", lambda g, c: _scaled(g.mv(c.vec2), c.alpha)),
        "vec2": D("vec1 alpha", lambda g, c: _scaled(g.t().mv(c.vec1), c.alpha)),
    },
    promote="common",
)


@api.variants("addr", out=ELEMENTWISE.named("addr"))
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``, input broadcast to the outer product's shape."""
    if not all(isinstance(t, Tensor) for t in (input, vec1, vec2)):
        raise invalid_call(addr, locals())
    _check_1d(vec1, "vec1", "addr")
    _check_1d(vec2, "vec2", "addr")
    input.expand(vec1.shape[0], vec2.shape[0])  # torch expands first: expand's errors
    _check_scales(input, beta, alpha)
    return apply(ADDR, input, vec1, vec2, beta=beta, alpha=alpha)


def _addbmm_fwd(xp: Any, s: Any, b1: Any, b2: Any, beta: Any, alpha: Any) -> Any:
    """ATen's addbmm: addmm of each batch in turn into the result, beta applied with the first."""
    out = xp.broadcast_to(s, (b1.shape[1], b2.shape[2]))
    if len(b1) == 0:
        return out * 0 if beta == 0 else _addmm_fwd(xp, out, b1[0:0].sum(0), b2[0:0].sum(0), beta, 1)
    for a, b in zip(b1, b2, strict=True):
        out = _addmm_fwd(xp, out, a, b, beta, alpha)
        beta = 1
    return out


def _batches_of(g: Any, c: Any) -> Any:
    """derivatives.yaml's ``grad.unsqueeze(0).expand({batch1.size(0), batch1.size(1), batch2.size(2)})``."""
    (b, n, _), (_, _, m) = c.shape("batch1"), c.shape("batch2")
    return g.unsqueeze(0).expand(b, n, m)


ADDBMM = OpDef(
    "AddbmmBackward0",
    _addbmm_fwd,
    ("self", "batch1", "batch2"),
    {
        "self": D("beta", lambda g, c: _scaled(g, c.beta)),
        "batch1": D("batch2 alpha", lambda g, c: _scaled(_batches_of(g, c).bmm(c.batch2.mT), c.alpha)),
        "batch2": D("batch1 alpha", lambda g, c: _scaled(c.batch1.mT.bmm(_batches_of(g, c)), c.alpha)),
    },
)


# addbmm's out=: resized without a warning, then its addmm_ of the first batch into out checks
# out's dtype as self's
ADDBMM_OUT = Out("same", "self and mat2 must have the same dtype, but got {out} and {result}", warn=False)


@api.variants("addbmm", out=ADDBMM_OUT)
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2).sum(0)``, input broadcast to the result's shape."""
    if not all(isinstance(t, Tensor) for t in (input, batch1, batch2)):
        raise invalid_call(addbmm, locals())
    input.expand(batch1.size(1), batch2.size(2))  # torch expands first: expand's errors
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.dim() != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and {batch2.shape[0]}"
        )
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
            f"{batch2.shape[1]}x{batch2.shape[2]})"
        )
    for name, t in (("self", input), ("mat1", batch1)):
        if t.dtype is not batch2.dtype:
            got = f"{dtypes.scalar_type(t.dtype)} and {dtypes.scalar_type(batch2.dtype)}"
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {got}")
    return apply(ADDBMM, input, batch1, batch2, beta=beta, alpha=alpha)


def _inplace_shape_error(name: str, self: Tensor, result: Tensor) -> None:
    """torch's errors for an in-place add-product whose result would not have self's shape."""
    if name == "addr_" and self.dim() != 2:
        raise RuntimeError(f"2D tensor expected, got {self.dim()}D tensor for input")
    if name == "addmv_" and result.shape != self.shape:
        raise RuntimeError(
            f"Bad in-place call: input tensor size {list(self.shape)} and output tensor size "
            f"{list(result.shape)} should match"
        )


def _checked_inplace(name: str, op: OpDef, fn: Any) -> Any:
    """``x.<name>(a, b, beta=, alpha=)``: the out-of-place ``fn``'s checks (run on detached
    operands), then ``op`` in place."""

    def spec(self: Tensor, a: Tensor, b: Tensor, *, beta: Any = 1, alpha: Any = 1) -> tuple:
        detached = (t.detach() if isinstance(t, Tensor) else t for t in (self, a, b))
        _inplace_shape_error(name, self, fn(*detached, beta=beta, alpha=alpha))
        return op, (a, b), {"beta": beta, "alpha": alpha}

    return inplace_method(spec)


for _name, _op, _fn in (("addmv_", ADDMV, addmv), ("addr_", ADDR, addr), ("addbmm_", ADDBMM, addbmm)):
    api.method(_name)(_checked_inplace(_name, _op, _fn))


@api.variants("matmul", tensor="other", out=Out(pick=_matmul_out))
@_autocast.policy("lower")
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """torch.matmul's dispatch: dot, mv, mm, folded mm/mv, or broadcast bmm."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise invalid_call(matmul, locals())
    da, db = input.dim(), other.dim()
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(input, other)
    if da == 2 and db == 1:
        return mv(input, other)
    if da == 1 and db == 2:  # torch squeezes the mm result in place: not a view, at version 1
        return squeeze_result_(mm(input.unsqueeze(0), other), 0)
    if da == 2 and db == 2:
        return mm(input, other)
    if da == db == 3 and input.shape[0] != other.shape[0]:
        # torch drops a batch of one that requires grad (its gradient is then one mm, not a sum
        # over the expanded batch): the rest folds into mm
        if input.shape[0] == 1 and input.requires_grad:
            return matmul(squeeze(input, 0), other)
        if other.shape[0] == 1 and other.requires_grad:
            return matmul(input, squeeze(other, 0))
    if _should_fold(input, other):
        transpose = db > da
        t1 = other.transpose(-1, -2) if transpose else input
        t2 = (input.t() if da == 2 else input) if transpose else other
        out_shape = tuple(t1.shape[:-1]) + ((t2.shape[1],) if t2.dim() == 2 else ())
        folded = t1.reshape(-1, t1.shape[-1])
        out = _unsafe_view(folded.mm(t2) if t2.dim() == 2 else folded.mv(t2), out_shape)
        return out.transpose(-1, -2).contiguous() if transpose and t2.dim() == 2 else out
    a = input.unsqueeze(0) if da == 1 else input
    b = other.unsqueeze(-1) if db == 1 else other
    mismatch = broadcast_mismatch([tuple(a.shape[:-2]), tuple(b.shape[:-2])])
    if mismatch is not None:
        raise RuntimeError(mismatch)
    batch = tuple(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    n, m, p = a.shape[-2], a.shape[-1], b.shape[-1]
    count = int(np.prod(batch, dtype=np.int64))  # (not -1: ambiguous for an empty matrix)
    a3 = a.expand(*batch, n, m).reshape(count, n, m)
    b3 = b.expand(*batch, b.shape[-2], p).reshape(count, b.shape[-2], p)
    out = bmm(a3, b3)
    if db == 1:
        out = out.squeeze(-1)
    return _unsafe_view(out, batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ()))


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """torch's test for computing a batched matmul as one mm/mv on a folded operand."""
    t1, t2 = (a, b) if a.dim() >= b.dim() else (b, a)
    if not (t1.dim() >= 3 and t2.dim() <= 2):
        return False
    if t2.requires_grad:
        return True
    if a.dim() == 2:
        return False
    if t1.numel() == 0:
        return True
    shape, strides = list(t1.shape), list(t1.stride())
    if t1 is not a:  # torch checks the larger operand as it will be used: transposed
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(t1.dim() - 2))


@api.variants("trace")
@_autocast.policy("fp32")
def trace(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(trace, locals())
    if input.dim() != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(input.dim()))
    return apply(TRACE, input)


api.operator("__matmul__")(matmul)


@api.operator("__rmatmul__")
def _rmatmul(self: Tensor, other: Any) -> Tensor:
    return matmul(other, self)


# -- einsum: torch's algorithm (aten's einsum and sumproduct_pair), so its graph is torch's -------
_LETTERS = 26
_ELLIPSIS = 2 * _LETTERS


def _subscript(label: str) -> int:
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + _LETTERS


def _label(s: int) -> str:
    return chr(s + ord("A")) if s < _LETTERS else chr(s - _LETTERS + ord("a"))


def _need(ok: bool, *message: Any) -> None:
    if not ok:
        raise RuntimeError("einsum(): " + "".join(str(m) for m in message))


def _parse_operands(lhs: str, num_ops: int) -> list[list[int]]:
    """Each operand's subscripts (``_ELLIPSIS`` for ``...``), with torch's checks."""
    labels: list[list[int]] = [[] for _ in range(num_ops)]
    ellipsis, current, i = False, 0, 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            _need(not ellipsis, f"found '.' for operand {current} for which an ellipsis was already found")
            _need(lhs[i:i + 3] == "..." and i + 2 < len(lhs),
                          f"found '.' for operand {current} that is not part of any ellipsis")
            labels[current].append(_ELLIPSIS)
            ellipsis, i = True, i + 2
        elif c == ",":
            current += 1
            _need(current < num_ops, "fewer operands were provided than specified in the equation")
            ellipsis = False
        elif c != " ":
            _need(c.isascii() and c.isalpha(), f"invalid subscript given at index {i} in the equation "
                          "string, subscripts must be in [a-zA-Z]")
            labels[current].append(_subscript(c))
        i += 1
    _need(current == num_ops - 1, "more operands were provided than specified in the equation")
    return labels


@api.function("einsum")
@_autocast.policy("lower")
def einsum(*args: Any) -> Tensor:
    """Einstein summation as torch computes it: operands aligned (diagonals of repeated subscripts,
    unsqueezed missing dims, permuted to output dims then contracted ones), then contracted left to
    right by ``sumproduct_pair`` (permute, reshape, bmm, view, permute; mul when nothing is summed),
    the remaining contracted dims viewed away (summed, for one operand)."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least "
                         "one operand and its subscripts list")
    equation, operands = args[0], list(args[1:])
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = list(operands[0])
    if not isinstance(equation, str) or not all(isinstance(t, Tensor) for t in operands):
        raise TypeError("einsum(): argument 'equation' must be str and 'tensors' a sequence of Tensors")
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    labels = _parse_operands(lhs, len(operands))
    count = [0] * (2 * _LETTERS)
    ell_dims = 0
    for i, (t, subs) in enumerate(zip(operands, labels, strict=True)):
        n = len(subs) - (_ELLIPSIS in subs)
        for s in subs:
            if s == _ELLIPSIS:
                ell_dims = max(ell_dims, t.dim() - n)
            else:
                count[s] += 1
        has = _ELLIPSIS in subs
        _need(n <= t.dim() if has else n == t.dim(), f"the number of subscripts in the equation ({n}",
                      ") is more than the number of dimensions (" if has else
                      ") does not match the number of dimensions (", f"{t.dim()}) for operand {i}",
                      "" if has else " and no ellipsis was given")
    place, out_dims, ell_at, ell_out = _output_places(equation, arrow, lhs, count, ell_dims)
    total = out_dims
    if not ell_out:
        ell_at, total = total, total + ell_dims
    for s in range(2 * _LETTERS):
        if count[s] and place[s] == -1:
            place[s] = total
            total += 1
    ops, dim_counts = _aligned(operands, labels, place, ell_at, ell_dims, total)
    while len(ops) > 1:
        a, b = ops.pop(0), ops.pop(0)
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_dims, total):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        a = a.sum(a_sum, True) if a_sum else a
        b = b.sum(b_sum, True) if b_sum else b
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))
    if total > out_dims:
        if len(operands) > 1:
            return ops[0].view(tuple(ops[0].shape[:out_dims]))
        return ops[0].sum(list(range(out_dims, total)))
    return ops[0]


def _output_places(equation: str, arrow: int, lhs: str, count: list, ell_dims: int) -> tuple:
    """Each subscript's place among the output dims (-1: contracted), how many output dims, where
    the ellipsis dims go and whether they are in the output (implicit output: ``...`` then the
    subscripts seen once, in alphabetical order, capitals first)."""
    place = [-1] * (2 * _LETTERS)
    if arrow < 0:
        at = ell_dims
        for s in range(2 * _LETTERS):
            if count[s] == 1:
                place[s], at = at, at + 1
        return place, at, 0, True
    rhs, at, ell_at, ell_out, i = equation[arrow + 2:], 0, 0, False, 0
    while i < len(rhs):
        c = rhs[i]
        if c == ".":
            _need(not ell_out, "found '.' for output but an ellipsis (...) was already found")
            _need(rhs[i:i + 3] == "..." and i + 2 < len(rhs),
                          "found '.' for output that is not part of any ellipsis (...)")
            ell_at, at, ell_out, i = at, at + ell_dims, True, i + 2
        elif c != " ":
            _need(c.isascii() and c.isalpha(), f"invalid subscript given at index {len(lhs) + 2 + i} in "
                          "the equation string, subscripts must be in [a-zA-Z]")
            s = _subscript(c)
            _need(count[s] > 0 and place[s] == -1, f"output subscript {c}",
                          " appears more than once in the output" if place[s] > -1
                          else " does not appear in the equation for any input operand")
            place[s], at = at, at + 1
        i += 1
    return place, at, ell_at, ell_out


def _aligned(operands: list, labels: list, place: list, ell_at: int, ell_dims: int, total: int) -> tuple:
    """The operands with torch's diagonals, unsqueezes and permutation to ``total`` aligned dims,
    and per aligned dim how many operands have it of a size other than 1."""
    label_size = [1] * (2 * _LETTERS)
    ell_sizes = [1] * ell_dims
    dim_counts = [0] * total
    ops = []
    for i, (op, subs) in enumerate(zip(operands, labels, strict=True)):
        perm = [-1] * total
        dim = 0
        for s in subs:
            if s == _ELLIPSIS:
                covered = op.dim() - (len(subs) - 1)
                for j in range(ell_dims - covered, ell_dims):
                    size = op.shape[dim]
                    if size != 1:
                        _need(ell_sizes[j] in (1, size), f"dimension {dim} covered by ellipsis in operand "
                                      f"{i}has size {size} which does not broadcast with previously seen "
                                      f"ellipsis with size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_at + j] += 1
                    perm[ell_at + j], dim = dim, dim + 1
            elif perm[place[s]] == -1:
                size = op.shape[dim]
                if size != 1:
                    _need(label_size[s] in (1, size), f"subscript {_label(s)} has size {size} for operand "
                                  f"{i} which does not broadcast with previously seen size {label_size[s]}")
                    label_size[s] = size
                    dim_counts[place[s]] += 1
                perm[place[s]], dim = dim, dim + 1
            else:
                prev = perm[place[s]]
                _need(op.shape[dim] == op.shape[prev], f"subscript {_label(s)} is repeated for operand {i} "
                              f"but the sizes don't match, {op.shape[dim]} != {op.shape[prev]}")
                op = op.diagonal(0, prev, dim).movedim(-1, prev)
        for k, value in enumerate(perm):
            if value == -1:
                op = op.unsqueeze(dim)
                perm[k], dim = dim, dim + 1
        ops.append(op.permute(perm))
    return ops, dim_counts


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list[int]) -> Tensor:
    """``(left * right).sum(sum_dims, keepdim=True)`` by permute, reshape, bmm, view and permute."""
    if not sum_dims:
        return left.mul(right)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.dim()):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = left.sum(i, True)
            elif sr:
                right = right.sum(i, True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = [left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims)
    out_size += [right.shape[d] for d in ro]
    order = lro + lo + sum_dims + ro
    operm = [0] * len(order)
    for k, d in enumerate(order):
        operm[d] = k
    a = left.permute(order).reshape(lro_size, lo_size, sum_size)
    b = right.permute(lro + sum_dims + ro + lo).reshape(lro_size, sum_size, ro_size)
    return bmm(a, b).view(out_size).permute(operm)


# -- _trilinear and bilinear (ATen's Linear.cpp) ------------------------------------------------
def _trilinear_fwd(xp: Any, i1: Any, i2: Any, i3: Any, expand1: tuple, expand2: tuple, expand3: tuple,
                   sumdim: tuple) -> Any:
    """The three inputs, each unsqueezed at its ``expand`` dims, multiplied and summed over
    ``sumdim`` (accumulated in float64 for float32 inputs: torch's gemm order is not numpy's)."""
    total = i1.ndim + len(expand1)
    letters = "abcdefghijklmnopqrstuvwxyz"[:total]
    subs = ["".join(c for d, c in enumerate(letters) if d not in ex) for ex in (expand1, expand2, expand3)]
    out = "".join(c for d, c in enumerate(letters) if d not in sumdim)
    wide = np.float64 if i1.dtype == np.float32 else i1.dtype
    return xp.einsum(f"{','.join(subs)}->{out}", *(a.astype(wide) for a in (i1, i2, i3))).astype(i1.dtype)


def _trilinear(i1: Tensor, i2: Tensor, i3: Tensor, e1: tuple, e2: tuple, e3: tuple, sumdim: tuple) -> Tensor:
    return apply(TRILINEAR, i1, i2, i3, expand1=e1, expand2=e2, expand3=e3, sumdim=sumdim)


_TRI_USES = "i1 i2 i3 expand1 expand2 expand3 sumdim"
TRILINEAR = OpDef(
    "TrilinearBackward0",
    _trilinear_fwd,
    ("i1", "i2", "i3"),
    {  # _trilinear_backward: each gradient another _trilinear, the dim lists permuted
        "i1": D(_TRI_USES, lambda g, c: _trilinear(g, c.i2, c.i3, c.sumdim, c.expand2, c.expand3, c.expand1)),
        "i2": D(_TRI_USES, lambda g, c: _trilinear(c.i1, g, c.i3, c.expand1, c.sumdim, c.expand3, c.expand2)),
        "i3": D(_TRI_USES, lambda g, c: _trilinear(c.i1, c.i2, g, c.expand1, c.expand2, c.sumdim, c.expand3)),
    },
    jvp=lambda c: defined_sum(*(  # one _trilinear per input with a tangent, it in place of the primal
        None if t is None else apply(TRILINEAR, *c.tensors[:k], t, *c.tensors[k + 1:], **c.attrs)
        for k, t in enumerate(c.tangents))),
)


@api.function("bilinear")
def bilinear_op(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] (+ bias[o])``: ATen's
    bilinear, a TrilinearBackward0 on the inputs flattened to 2-D, viewed back (and AddBackward0)."""
    if not all(isinstance(t, Tensor) for t in (input1, input2, weight)) or not (
            bias is None or isinstance(bias, Tensor)):
        raise invalid_call(bilinear_op, locals())
    tensors = {"input1": input1, "input2": input2, "weight": weight}
    tensors.update({} if bias is None else {"bias": bias})
    if len({t.dtype for t in tensors.values()}) > 1:
        got = ", ".join(f"{k}: {dtypes.CPP_NAMES[t.dtype.name]}" for k, t in tensors.items())
        raise RuntimeError(f"All tensors must have the same dtype, got {got}")
    if input1.dim() != input2.dim():
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                               f"{input1.shape[i]} and {input2.shape[i]}")
    for k, t in ((1, input1), (2, input2)):
        if t.shape[-1] != weight.shape[k]:
            raise RuntimeError(f"bilinear(): input{k} size does not match weight size: got {t.shape[-1]} but "
                               f"expected {weight.shape[k]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but "
                           f"expected {weight.shape[0]}")
    out_size = (*input1.shape[:-1], weight.shape[0])
    flat1, flat2 = input1.reshape(-1, input1.shape[-1]), input2.reshape(-1, input2.shape[-1])
    output = _trilinear(flat1, weight, flat2, (1, 3), (0,), (1, 2), (2, 3)).reshape(out_size)
    return output if bias is None else output + bias
