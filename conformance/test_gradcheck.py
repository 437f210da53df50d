"""Numerical gradients (oracle/rules/gradcheck.py): the backend's first and second derivatives of
generated op compositions against central finite differences computed on the backend itself in
float64 (oracle/numeric.py) -- no torch involved.

Some ops drawn bend (maximum, minimum, clamp, abs, relu): they are differentiable everywhere but
at their kinks (ties, bounds, 0), where torch's gradient is a convention (0.5 each at a tie of
maximum) and finite differences straddle two branches. A drawn point is checked only if every
bend is on the same side at the point and at every point the finite differences evaluate, and
its values are small enough for finite differences to resolve (``oracle.numeric.smooth_around``).
The check runs where the backend is loaded (``Backend.call``): nothing of torch is involved."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from conformance.conftest import examples
from oracle.backends import Backend
from oracle.differential import note
from oracle.numeric import BENDS, GradientMismatchError
from oracle.program import Ref

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

# smooth on the inputs they get (log, sqrt, pow(., 0.5), pow(., -1) and div's divisor see exp(.))
UNARY = ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "square", "neg")
# unary math ops (impl/_ops/unary_math.py), drawn together as one choice of the chain so the
# others keep their share; those of a bounded domain get their argument mapped into it first
UNARY_MATH = ("tan", "atan", "sinh", "cosh", "asinh", "expm1", "exp2", "sinc", "deg2rad", "rad2deg")
UNARY_MATH += ("log1p", "log2", "log10", "rsqrt", "asin", "acos", "atanh", "logit", "acosh")
POSITIVE = ("log", "sqrt", "log1p", "log2", "log10", "rsqrt", "acosh")  # their argument: exp(.)
# sinc's double backward divides by x (FunctionsManual's sinc_backward): nan at exactly 0 in torch
# as in impl, though sinc is smooth there; its argument is exp(.) too, never 0
POSITIVE += ("sinc",)
IN_UNIT_INTERVAL = ("asin", "acos", "atanh", "logit")  # their argument: sigmoid(.) / 2 + 0.25
BINARY = ("mul", "div", "add", "sub", "logaddexp", "logaddexp2")
TERNARY = ("lerp", "addcmul")  # lerp's weight a tensor
CLAMP_BOUNDS = ((-1.0, 0.5), (-0.5, 1.0), (0.0, 2.0))
SHAPES = ((), (2,), (3,), (2, 2))
# weights of the outputs whose gradient NUM-002 differentiates again
WEIGHTS = st.lists(st.sampled_from((1.0, -0.5, 2.0)), min_size=4, max_size=4)


@st.composite
def gradcheck_functions(draw: Any) -> tuple[list[dict], list[list[float]], list[tuple[int, ...]]]:
    """(ops, flat input values, input shapes): one or two inputs in [-2, 2], then a chain of ops,
    smooth or bending, sometimes ending in a reduction, softmax or a matrix product."""
    shape = draw(st.sampled_from(SHAPES))
    n = draw(st.integers(1, 2))
    size = 1
    for s in shape:
        size *= s
    value = st.floats(-2.0, 2.0, allow_nan=False).map(lambda v: round(v, 3))
    values = [draw(st.lists(value, min_size=size, max_size=size)) for _ in range(n)]
    names, ops = [f"i{k}" for k in range(n)], []
    for k in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from((*UNARY, "unary math", *BINARY, *TERNARY, *BENDS, "pow")))
        if op == "unary math":
            op = draw(st.sampled_from(UNARY_MATH))
        args: list = [Ref(names[-1])]
        if op in TERNARY:
            args += [Ref(draw(st.sampled_from(names))) for _ in range(2)]
        elif op in (*BINARY, "maximum", "minimum"):
            args.append(Ref(draw(st.sampled_from(names))))
            if op == "div":  # a positive divisor
                ops.append({"out": f"q{k}", "op": "exp", "args": args[1:]})
                args[1] = Ref(f"q{k}")
        elif op == "pow":
            args.append(draw(st.sampled_from((2, 3, 0.5, -1.0))))
        elif op == "clamp":
            args.extend(draw(st.sampled_from(CLAMP_BOUNDS)))
        if op in POSITIVE or (op == "pow" and args[1] in (0.5, -1.0)):  # keep the argument positive
            ops.append({"out": f"p{k}", "op": "exp", "args": args[:1]})
            args[0] = Ref(f"p{k}")
            if op == "acosh":  # above 1
                ops.append({"out": f"a{k}", "op": "add", "args": [args[0], 1.0]})
                args[0] = Ref(f"a{k}")
        elif op in IN_UNIT_INTERVAL:  # in [0.25, 0.75], away from the poles at 0, 1 and -1
            ops.append({"out": f"s{k}", "op": "sigmoid", "args": args[:1]})
            ops.append({"out": f"h{k}", "op": "mul", "args": [Ref(f"s{k}"), 0.5]})
            ops.append({"out": f"c{k}", "op": "add", "args": [Ref(f"h{k}"), 0.25]})
            args[0] = Ref(f"c{k}")
        ops.append({"out": f"f{k}", "op": op, "args": args})
        names.append(f"f{k}")
    tail = draw(st.sampled_from((None, "sum", "prod", "softmax", "matmul", "var")))
    if tail == "softmax" and shape:
        ops.append({"out": "r", "op": "log_softmax", "args": [Ref(names[-1]), -1]})
    elif tail == "matmul" and len(shape) == 2:
        ops.append({"out": "r", "op": "matmul", "args": [Ref(names[-1]), Ref("i0")]})
    elif tail in ("sum", "prod") or (tail == "var" and size > 1):
        ops.append({"out": "r", "op": tail, "args": [Ref(names[-1])]})
    return ops, values, [shape] * n


def assert_matches_finite_differences(
    backend: Backend, ops: list[dict], values: list, shapes: list, weights: list[float] | None = None
) -> None:
    """The gradients of ops' function on ``backend`` equal its finite differences, at a point
    where they are meaningful (``oracle.numeric.smooth_around``); with ``weights``, those of its
    weighted first derivatives (then they are second derivatives)."""
    found = backend.call("oracle.numeric:gradient_check", ops, values, shapes, weights)
    if "lacks" in found:
        note("unsupported", found["lacks"])
        return
    if "raised" in found:
        note("failed")
        raise AssertionError(f"the backend raised {found['raised']} in the numerical gradient check of {ops}")
    assume(found["smooth"])
    note("failed" if found["mismatches"] else "passed")
    if found["mismatches"]:
        raise GradientMismatchError(found["mismatches"], ops, values, shapes, 1 if weights is None else 2)


@pytest.mark.rule("NUM-001")
@examples(3)
@given(case=gradcheck_functions())
def test_gradients_match_finite_differences(case: tuple, backend: Backend) -> None:
    ops, values, shapes = case
    assert_matches_finite_differences(backend, ops, values, shapes)


@pytest.mark.rule("NUM-002")
@examples(1.5)
@given(case=gradcheck_functions(), weights=WEIGHTS)
def test_second_derivatives_match_finite_differences(case: tuple, weights: list, backend: Backend) -> None:
    ops, values, shapes = case
    assert_matches_finite_differences(backend, ops, values, shapes, weights)
