"""Pointwise ops of three operands: lerp, addcmul, addcdiv, where and clamp (functions, methods,
in-place forms).

Kernels are torch's CPU ones: lerp and addcmul end in one fused multiply-add (one rounding),
addcdiv computes ``self + (value * tensor1) / tensor2``; half precision runs in float32 and is
rounded once (``opmath``), the Python number (``weight``, ``value``) taken in that computation
type, as torch takes it (checked: a number it cannot hold raises torch's overflow error). The
optimisers' updates (impl/optim/_pointwise.py) run these same kernels. Backward formulas are
derivatives.yaml's, written with impl ops as ATen's C++ operators spell them (``1 - w`` is
``empty_like(w).fill_(1).sub_(w)``, a SubBackward0 with one edge; ``t * value`` a MulBackward1),
so create_graph graphs carry torch's node names.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes
from impl._creation import empty_like
from impl._names import type_name
from impl._ops.cpu_kernels import fma
from impl._ops.elementwise import UNARY, _keep_first_on_tie, floating_only, mul_scalar, opmath
from impl._ops.inplace import apply_inplace, inplace_method
from impl._ops.table import FLOAT_DTYPES, NOT_OPERANDS, D, OpDef, apply, fill_array, number_array
from impl._signatures import ABSENT, ELEMENTWISE, HIDDEN, OVERLOADS, SAME_DTYPE, Out, invalid_call
from impl._tensor import Tensor
from impl._xp import namespace_of

_NUMBERS = (bool, int, float)


def fused(x: Any, y: Any, z: Any) -> Any:
    """``x * y + z`` rounded once to ``z``'s dtype (``x`` may be a 0-d array): cpu_kernels.fma on
    the CPU; on a GPU the product and the sum in float64, rounded as they are stored."""
    xp = namespace_of(z)
    if xp is not np:
        return xp.add(xp.multiply(x, y, dtype=xp.float64), z).astype(z.dtype)
    return fma(z, np.asarray(x, z.dtype), y)


def lerp_kernel(xp: Any, start: Any, end: Any, weight: Any) -> Any:
    """torch's lerp: ``start + weight * (end - start)`` where ``|weight| < 0.5``, else
    ``end - (end - start) * (1 - weight)`` (so lerp(0.5, -0.0, 1) is 0.0), each one fused
    multiply-add."""
    small = xp.abs(weight) < 0.5
    diff = end - start
    coefficient = xp.where(small, weight, weight.dtype.type(1) - weight)
    return fused(coefficient, xp.where(small, diff, -diff), xp.where(small, start, end))


def addcmul_kernel(xp: Any, a: Any, t1: Any, t2: Any, value: Any) -> Any:
    """``(value * t1) * t2 + a``, the last step fused for floats; integers wrap."""
    scaled = value * t1
    return fused(scaled, t2, a) if a.dtype in FLOAT_DTYPES else a + scaled * t2


def addcdiv_kernel(xp: Any, a: Any, t1: Any, t2: Any, value: Any) -> Any:
    """``a + (value * t1) / t2``."""
    return a + (value * t1) / t2


def _computation_type(dt: Any) -> Any:
    """The numpy dtype torch computes ``dt`` in (float32 for half precision)."""
    return np.dtype(np.float32) if dt in FLOAT_DTYPES and dt.itemsize < 4 else np.dtype(dt)


def _number(xp: Any, value: Any, dt: Any) -> Any:
    """The Python number ``value`` in the computation type of ``dt``, checked as torch converts it."""
    compute = _computation_type(dt)
    dtypes.check_number(value, dtypes.from_numpy_dtype(compute))
    return number_array(xp, value, compute)


def _with_value(name: str, kernel: Any) -> Any:
    """addcmul/addcdiv's forward: no bool kernel; ``value`` taken in the computation type."""

    def run(xp: Any, a: Any, t1: Any, t2: Any, value: Any) -> Any:
        np.broadcast_shapes(a.shape, t1.shape, t2.shape)  # (torch checks shapes first)
        if a.dtype.kind == "b":
            raise dtypes.kernel_missing(name, a.dtype)
        return opmath(kernel)(xp, a, t1, t2, value=_number(xp, value, a.dtype))

    return run


# -- derivatives ---------------------------------------------------------------------------------
def _scaled(t: Tensor, value: Any) -> Tensor:
    """ATen's ``t * value`` of a Scalar: mul.Scalar (MulBackward1), which promotes an integer
    ``t`` by a float ``value`` as ``t * value`` does."""
    return mul_scalar(t, value) if t.dtype.is_floating_point else t * value


def _filled_minus(number: Any, t: Tensor, op: str) -> Tensor:
    """ATen's ``number - t`` / ``number / t``: ``empty_like(t).fill_(number).sub_(t)`` (div_)."""
    filled = empty_like(t).fill_(number)
    return getattr(filled, op + "_")(t)


LERP_SCALAR = OpDef(
    "LerpBackward0",
    floating_only(
        "lerp_kernel_scalar",
        opmath(lambda xp, s, e, weight: lerp_kernel(xp, s, e, _number(xp, weight, s.dtype))),
    ),
    ("self", "end"),
    {
        "self": D("weight", lambda g, c: mul_scalar(g, 1 - float(c.weight))),
        "end": D("weight", lambda g, c: mul_scalar(g, c.weight)),
    },
    iterator_operands=("self", "end"),
)
LERP_TENSOR = OpDef(
    "LerpBackward1",
    floating_only("lerp_kernel_tensor", opmath(lerp_kernel)),
    ("self", "end", "weight"),
    {
        "self": D("weight", lambda g, c: g * _filled_minus(1, c.weight, "sub")),
        "end": D("weight", lambda g, c: g * c.weight),
        "weight": D("self end", lambda g, c: g * (c.end - c.self)),
    },
    promote="common",
    iterator_operands=("self", "end", "weight"),
)
ADDCMUL = OpDef(
    "AddcmulBackward0",
    _with_value("addcmul_cpu_out", addcmul_kernel),
    ("self", "tensor1", "tensor2"),
    {
        "self": D("", lambda g, c: g),
        "tensor1": D("tensor2 value", lambda g, c: g * _scaled(c.tensor2, c.value)),
        "tensor2": D("tensor1 value", lambda g, c: g * _scaled(c.tensor1, c.value)),
    },
    promote="common",
    iterator_operands=("self", "tensor1", "tensor2"),
)
ADDCDIV = OpDef(
    "AddcdivBackward0",
    _with_value("addcdiv_cpu_out", addcdiv_kernel),
    ("self", "tensor1", "tensor2"),
    {
        "self": D("", lambda g, c: g),
        "tensor1": D("tensor2 value", lambda g, c: g * _filled_minus(c.value, c.tensor2, "div")),
        "tensor2": D(
            "tensor1 tensor2 value", lambda g, c: -g * (_scaled(c.tensor1, c.value) / (c.tensor2 * c.tensor2))
        ),
    },
    promote="common",
    iterator_operands=("self", "tensor1", "tensor2"),
)

ADDCDIV_INTEGERS = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
    "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
    "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
    "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
    "implementation: (input + value * tensor1 / tensor2), for all dtypes."
)


# -- functions -----------------------------------------------------------------------------------
def _lerp_call(input: Any, end: Any, weight: Any) -> tuple:
    """The op and operands of ``lerp(input, end, weight)``, with torch's checks: ``end`` of
    ``input``'s dtype, a tensor ``weight`` too unless it is 0-d (which then promotes)."""
    if not (
        isinstance(input, Tensor) and isinstance(end, Tensor) and isinstance(weight, (Tensor, *_NUMBERS))
    ):
        raise invalid_call(lerp, {"input": input, "end": end, "weight": weight})
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype is not input.dtype and (name == "end" or t.dim()):
            expected, got = dtypes.CPP_NAMES[input.dtype.name], dtypes.CPP_NAMES[t.dtype.name]
            raise RuntimeError(f"expected dtype {expected} for `{name}` but got dtype {got}")
    if isinstance(weight, Tensor):
        return LERP_TENSOR, (end, weight), {}
    return LERP_SCALAR, (end,), {"weight": weight}


def _by_tensor_operands(first: int, tensors: Out, numbers: Out) -> Any:
    """The out= of lerp (clamp) by overload: ``tensors`` with a tensor among the arguments from
    position ``first`` on, else ``numbers``."""

    def pick(args: tuple, kwargs: dict) -> Out:
        bounds = [v for k, v in kwargs.items() if k != "out"]
        given = any(isinstance(a, Tensor) for a in (*args[first:], *bounds))
        return tensors if given else numbers

    return pick


@api.variants("lerp", out=Out(pick=_by_tensor_operands(2, SAME_DTYPE, ELEMENTWISE)))
def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``input + weight * (end - input)``; ``weight`` a number (LerpBackward0) or a tensor
    (LerpBackward1)."""
    op, others, attrs = _lerp_call(input, end, weight)
    return apply(op, input, *others, **attrs)


def _check_tensors(name: str, values: dict, method: bool = False) -> None:
    """torch's parser errors of addcmul/addcdiv: tensors, then a Number ``value`` (a method counts
    positions after self)."""
    for position, (argument, v) in enumerate(values.items(), 0 if method else 1):
        if argument != "value" and not isinstance(v, Tensor):
            where = f"argument '{argument}' (position {position})"
            raise TypeError(f"{name}(): {where} must be Tensor, not {type(v).__name__}")
    if not isinstance(values["value"], _NUMBERS):
        raise TypeError(f"{name}(): argument 'value' must be Number, not {type(values['value']).__name__}")


OVERLOADS.update(dict.fromkeys(("addcmul", "addcdiv"), (
    "(Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, Tensor out = None)",
    f"{HIDDEN}(Tensor input, Number value, Tensor tensor1, Tensor tensor2, *, Tensor out = None)",
)))  # fmt: skip


@api.function("addcmul", out=ELEMENTWISE)
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``."""
    _check_tensors("addcmul", {"input": input, "tensor1": tensor1, "tensor2": tensor2, "value": value})
    return apply(ADDCMUL, input, tensor1, tensor2, value=value)


def _check_addcdiv(tensor1: Tensor, tensor2: Tensor) -> None:
    """torch refuses integer (and bool) tensor1 and tensor2 together."""
    if not (tensor1.dtype.is_floating_point or tensor2.dtype.is_floating_point):
        raise RuntimeError(ADDCDIV_INTEGERS)


@api.function("addcdiv", out=ELEMENTWISE)
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 / tensor2`` (floating tensor1 or tensor2 only)."""
    _check_tensors("addcdiv", {"input": input, "tensor1": tensor1, "tensor2": tensor2, "value": value})
    _check_addcdiv(tensor1, tensor2)
    return apply(ADDCDIV, input, tensor1, tensor2, value=value)


OVERLOADS["lerp"] = (
    "(Tensor input, Tensor end, Tensor weight, *, Tensor out = None)",
    "(Tensor input, Tensor end, Number weight, *, Tensor out = None)",
)


# -- methods ---------------------------------------------------------------------------------------
def _addc_spec(op: OpDef, name: str) -> Any:
    """What ``x.<name>(tensor1, tensor2, value=)`` runs (in place for a ``name`` ending in _)."""

    def spec(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> tuple:
        _check_tensors(
            name, {"self": self, "tensor1": tensor1, "tensor2": tensor2, "value": value}, method=True
        )
        if op is ADDCDIV:
            _check_addcdiv(tensor1, tensor2)
        return op, (tensor1, tensor2), {"value": value}

    return spec


def _method(spec: Any) -> Any:
    """The out-of-place method of an in-place ``spec``."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        op, others, attrs = spec(self, *args, **kwargs)
        return apply(op, self, *others, **attrs)

    return method


api.method("addcmul")(_method(_addc_spec(ADDCMUL, "addcmul")))
api.method("addcdiv")(_method(_addc_spec(ADDCDIV, "addcdiv")))
api.method("lerp_")(inplace_method(_lerp_call))
api.method("addcmul_")(inplace_method(_addc_spec(ADDCMUL, "addcmul_")))
api.method("addcdiv_")(inplace_method(_addc_spec(ADDCDIV, "addcdiv_")))


def _clamp_fwd(xp: Any, a: Any, min: Any, max: Any) -> Any:
    numbers = all(isinstance(b, (bool, int, float, np.generic)) for b in (min, max) if b is not None)
    if a.dtype.kind == "b" and numbers:  # torch's clamp kernels of number bounds have no bool version
        kernel = "clamp_min" if max is None else "clamp_max" if min is None else "clamp"
        raise dtypes.kernel_missing(f"{kernel}_scalar_cpu", a.dtype)
    out = a
    if min is not None:
        out = _keep_first_on_tie(xp, "maximum", out, fill_array(xp, min, a.dtype))
    if max is not None:
        out = _keep_first_on_tie(xp, "minimum", out, fill_array(xp, max, a.dtype))
    return out if out is not a else a.copy()


def _clamp_grad(g: Any, c: Any) -> Any:
    mask = None
    if c.min is not None:
        mask = c.self >= c.min
    if c.max is not None:
        upper = c.self <= c.max
        mask = upper if mask is None else mask & upper
    return masked(g, mask)


CLAMP = OpDef(
    "ClampBackward1",
    _clamp_fwd,
    derivatives={"self": D("self min max", _clamp_grad)},
    iterator_operands=UNARY,
)


def _clamp_tensor_fwd(xp: Any, a: Any, lo: Any, hi: Any, has_min: bool, has_max: bool) -> Any:
    """clamp.Tensor's kernel: ``min(max(a, lo), hi)`` of the bounds given, nan propagating and
    ``a`` kept on a tie; an absent bound is a placeholder operand (``False``)."""
    out = a
    if has_min:
        out = _keep_first_on_tie(xp, "maximum", out, lo)
    if has_max:
        out = _keep_first_on_tie(xp, "minimum", out, hi)
    return out if out is not a else a.copy()


def _clamp_tensor_grads(c: Any) -> tuple[Any, Any, Any]:
    """clamp_backward's and clamp_backward_min_max's masks: where ``self``, ``min`` and ``max``
    get the gradient (with both bounds, min where it wins and is below max; max where it wins or
    is below min)."""
    below = c.self < c.min if c.has_min else None
    above = c.self > c.max if c.has_max else None
    inside = [m for m in (c.self >= c.min if c.has_min else None, c.self <= c.max if c.has_max else None)
              if m is not None]
    if below is not None and above is not None:
        below, above = below & (c.min < c.max), above | (c.max < c.min)
    return (inside[0] & inside[1] if len(inside) == 2 else inside[0]), below, above


def clamp_tensor_operands(input: Any, min: Any, max: Any) -> tuple[tuple, dict]:
    """clamp.Tensor's operands and attributes: an absent bound is ``False``, a wrapped bool that
    changes no result type and gets no edge; the attributes say which bounds there are."""
    operands = (input, False if min is None else min, False if max is None else max)
    return operands, {"has_min": min is not None, "has_max": max is not None}


CLAMP_TENSOR = OpDef(
    "ClampBackward0",
    _clamp_tensor_fwd,
    ("self", "min", "max"),
    {
        "self": D("self min max", lambda g, c: masked(g, _clamp_tensor_grads(c)[0])),
        "min": D("self min max", lambda g, c: masked(g, _clamp_tensor_grads(c)[1])),
        "max": D("self min max", lambda g, c: masked(g, _clamp_tensor_grads(c)[2])),
    },
    promote="common",
    iterator_operands=("self", "min", "max"),
)


def _one_bound(which: str) -> tuple[OpDef, OpDef]:
    """clamp_min's or clamp_max's ops (``which`` "min" or "max"): of a number bound
    (Clamp<Which>Backward0, the gradient where ``self`` is on the kept side, ties included) and of a
    tensor bound (Clamp<Which>Backward1: clamp.Tensor's kernel and masks with the other bound absent)."""
    title = which.capitalize()
    keep = (lambda c: c.self >= c.bound) if which == "min" else (lambda c: c.self <= c.bound)
    number = OpDef(
        f"Clamp{title}Backward0",
        lambda xp, a, bound: _clamp_fwd(xp, a, *((bound, None) if which == "min" else (None, bound))),
        derivatives={"self": D("self bound", lambda g, c: masked(g, keep(c)))},
        iterator_operands=UNARY,
    )
    tensor = OpDef(
        f"Clamp{title}Backward1",
        lambda xp, a, bound: _keep_first_on_tie(xp, "maximum" if which == "min" else "minimum", a, bound),
        ("self", "bound"),
        {
            "self": D("self bound", lambda g, c: masked(g, keep(c))),
            "bound": D("self bound", lambda g, c: masked(g, ~keep(c))),
        },
        promote="common",
        iterator_operands=("self", "bound"),
    )
    return number, tensor


CLAMP_MIN, CLAMP_MIN_TENSOR = _one_bound("min")
CLAMP_MAX, CLAMP_MAX_TENSOR = _one_bound("max")


def _where_grad(pick_self: bool) -> Any:
    """derivatives.yaml's where(condition, grad, 0) for self, where(condition, 0, grad) for other."""

    def grad(g: Any, c: Any) -> Any:
        if pick_self:
            return apply(WHERE, g, 0, condition=c.condition)
        return apply(WHERE, 0, g, condition=c.condition)

    return grad


WHERE = OpDef(
    "WhereBackward0",
    lambda xp, a, b, condition: xp.where(condition._data, a, b),
    ("self", "other"),
    {"self": D("condition", _where_grad(True)), "other": D("condition", _where_grad(False))},
    promote="common",
    iterator_operands=("condition", "self", "other"),
)


NOT_BOUNDS = NOT_OPERANDS[1:]  # what clamp refuses as a bound (None means none)


OVERLOADS["clip"] = OVERLOADS["clamp"]


@api.variants("clamp", "clip", out=Out(pick=_by_tensor_operands(1, ELEMENTWISE, SAME_DTYPE)))
def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    if not isinstance(input, Tensor) or isinstance(min, NOT_BOUNDS) or isinstance(max, NOT_BOUNDS):
        raise invalid_call(clamp, locals())
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):  # clamp.Tensor (a number bound wrapped)
        operands, attrs = clamp_tensor_operands(input, min, max)
        return apply(CLAMP_TENSOR, *operands, **attrs)
    bounds = [b for b in (min, max) if b is not None]
    dt = dtypes.result_type(input, *bounds)
    if dt is not input.dtype:  # an integer tensor clamped by float bounds is float, as in torch
        input = input.to(dt)
    return apply(CLAMP, input, min=min, max=max)


def _clamp_one(input: Tensor, bound: Any, which: str, inplace: bool) -> Tensor:
    """clamp_min / clamp_max (``which``), in place or not: torch's overloads of a tensor or a
    number bound, the number's promotion of an integer input as clamp's."""
    ops = {"min": (CLAMP_MIN, CLAMP_MIN_TENSOR), "max": (CLAMP_MAX, CLAMP_MAX_TENSOR)}[which]
    if isinstance(bound, Tensor):
        return (apply_inplace if inplace else apply)(ops[1], input, bound)
    if inplace:
        _check_bounds_inplace(input, bound)
        return apply_inplace(ops[0], input, bound=bound)
    dt = dtypes.result_type(input, bound)
    return apply(ops[0], input if dt is input.dtype else input.to(dt), bound=bound)


def _bound_call(fn: Any, values: dict, which: str, inplace: bool = False) -> Tensor:
    input, bound = values["input"], values[which]
    if not isinstance(input, Tensor) or bound is ABSENT or bound is None or isinstance(bound, NOT_BOUNDS):
        raise invalid_call(fn, values)  # (the in-place method's too: its binding words it as torch's)
    return _clamp_one(input, bound, which, inplace)


@api.variants("clamp_min", out=Out(pick=_by_tensor_operands(1, ELEMENTWISE, SAME_DTYPE)))
def clamp_min(input: Tensor, min: Any = ABSENT) -> Tensor:
    """``max(input, min)`` elementwise (ClampMinBackward0; of a tensor bound ClampMinBackward1)."""
    return _bound_call(clamp_min, locals(), "min")


@api.variants("clamp_max", out=Out(pick=_by_tensor_operands(1, ELEMENTWISE, SAME_DTYPE)))
def clamp_max(input: Tensor, max: Any = ABSENT) -> Tensor:
    """``min(input, max)`` elementwise (ClampMaxBackward0; of a tensor bound ClampMaxBackward1)."""
    return _bound_call(clamp_max, locals(), "max")


def _where_out(args: tuple, kwargs: dict) -> Out:
    """where's out=: its overload of three tensors only (torch's parser refuses a number there)."""
    for position, name in enumerate(("condition", "input", "other")):
        value = args[position] if position < len(args) else kwargs.get(name)
        if value is not None and not isinstance(value, Tensor):
            where = f"argument '{name}' (position {position + 1})"
            raise TypeError(f"where(): {where} must be Tensor, not {type_name(value)}")
    return Out("same", "Expected out type to be {result} but got {out}")


@api.function("where", out=Out(pick=_where_out))
def where(condition: Tensor, input: Any = ABSENT, other: Any = ABSENT) -> Any:
    if (
        not isinstance(condition, Tensor)
        or isinstance(input, NOT_OPERANDS)
        or isinstance(other, NOT_OPERANDS)
        or (input is ABSENT) != (other is ABSENT)
    ):
        raise invalid_call(where, locals())
    if input is ABSENT:
        return tuple(Tensor._from_array(i) for i in condition._data.nonzero())  # numpy or cupy's own
    if condition.dtype is not dtypes.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{condition.dtype.name.capitalize()}"
        )
    for number in [v for v in (input, other) if not isinstance(v, Tensor)]:  # a one-element fill
        dtypes.check_number(number, dtypes.result_type(input, other), single=True)
    return apply(WHERE, input, other, condition=condition)


@api.method("where")
def _where_method(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    return where(condition, self, other)


@api.method("clamp_", "clip_")
def clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """``x.clamp_(min, max)``: torch's clamp refuses any promotion of an integer or bool ``x`` by
    its bounds in place (a float bound of an integer tensor, an int bound of a bool one), naming
    ``x``'s C++ type; of tensor bounds (clamp.Tensor), TensorIterator's check names its dtype."""
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        operands, attrs = clamp_tensor_operands(self, min, max)
        return apply_inplace(CLAMP_TENSOR, *operands, **attrs)
    _check_bounds_inplace(self, min, max)
    return apply_inplace(CLAMP, self, min=min, max=max)


def _check_bounds_inplace(self: Tensor, *bounds: Any) -> None:
    """torch's refusal of an in-place clamp whose number bounds would promote ``self``."""
    if not self.dtype.is_floating_point:
        found = dtypes.result_type(self, *(b for b in bounds if b is not None))
        if found is not self.dtype:
            raise RuntimeError(
                f"result type {dtypes.scalar_type(found)} can't be cast to the desired output type "
                f"{dtypes.CPP_NAMES[str(self.dtype).removeprefix('torch.')]}"
            )


def masked(g: Any, mask: Any) -> Any:
    """``g`` where ``mask`` holds, else 0 (a select, not a product: inf * 0 would give nan)."""
    return apply(WHERE, g, 0, condition=mask)


@api.method("clamp_min_")
def clamp_min_(self: Tensor, min: Any = ABSENT) -> Tensor:
    return _bound_call(clamp_min, {"input": self, "min": min}, "min", True)


@api.method("clamp_max_")
def clamp_max_(self: Tensor, max: Any = ABSENT) -> Tensor:
    return _bound_call(clamp_max, {"input": self, "max": max}, "max", True)
