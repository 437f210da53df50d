"""Numerical gradients (oracle/rules/gradcheck.py): the backend's first and second derivatives of
generated op compositions against central finite differences computed on the backend itself in
float64 (oracle/numeric.py) -- no torch involved.

Some ops drawn bend (maximum, minimum, clamp, abs, relu): they are differentiable everywhere but
at their kinks (ties, bounds, 0), where torch's gradient is a convention (0.5 each at a tie of
maximum) and finite differences straddle two branches. A drawn point is checked only if every
bend is on the same side at the point and at every point the finite differences evaluate, and
its values are small enough for finite differences to resolve (``smooth_around``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from conformance.conftest import examples
from oracle.backends import Backend
from oracle.numeric import (
    EPS,
    Function,
    GradientMismatchError,
    gradient_mismatches,
    op_function,
    second_order,
)
from oracle.program import Ref
from oracle.stats import count_program

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

# smooth on the inputs they get (log, sqrt, pow(., 0.5), pow(., -1) and div's divisor see exp(.))
UNARY = ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "square", "neg")
# unary math ops (impl/_ops/unary_math.py), drawn together as one choice of the chain so the
# others keep their share; those of a bounded domain get their argument mapped into it first
UNARY_MATH = ("tan", "atan", "sinh", "cosh", "asinh", "expm1", "exp2", "sinc", "deg2rad", "rad2deg")
UNARY_MATH += ("log1p", "log2", "log10", "rsqrt", "asin", "acos", "atanh", "logit", "acosh")
POSITIVE = ("log", "sqrt", "log1p", "log2", "log10", "rsqrt", "acosh")  # their argument: exp(.)
IN_UNIT_INTERVAL = ("asin", "acos", "atanh", "logit")  # their argument: sigmoid(.) / 2 + 0.25
BINARY = ("mul", "div", "add", "sub", "logaddexp", "logaddexp2")
TERNARY = ("lerp", "addcmul")  # lerp's weight a tensor
# Where each bending op's branch changes: ops on its arguments whose signs pick the branch.
BENDS: dict[str, Callable[[list], list[tuple[str, list]]]] = {
    "maximum": lambda args: [("sub", args)],
    "minimum": lambda args: [("sub", args)],
    "abs": lambda args: [("clone", args)],
    "relu": lambda args: [("clone", args)],
    "clamp": lambda args: [("sub", [args[0], bound]) for bound in args[1:]],
}
# Central differences in float64 resolve about 1e-10 of the size of the values they difference:
# values at most this large keep that rounding error below the comparison's ATOL (1e-6).
MAGNITUDE = 1e3
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


def neighbours(values: list[list[float]]) -> Iterator[list[list[float]]]:
    """The points central differences move ``values`` to: one element at a time, by +-EPS."""
    for k, flat in enumerate(values):
        for i in range(len(flat)):
            for step in (EPS, -EPS):
                moved = [list(v) for v in values]
                moved[k][i] += step
                yield moved


def branches(torch: Any, ops: list[dict], inputs: list[Any]) -> list[float]:
    """The signs of every bend's branch-picking values (``BENDS``) at ``inputs``."""
    signs: list[float] = []
    for k, spec in enumerate(ops):
        for op, args in BENDS.get(spec["op"], lambda _args: [])(spec["args"]):
            side = op_function(torch, [*ops[:k], {"out": "side", "op": op, "args": args}])(inputs)
            signs.extend(side.detach().sign().reshape(-1).tolist())
    return signs


def tame(torch: Any, ops: list[dict], fn: Function, inputs: list[Any]) -> bool:
    """Whether every value ``ops`` compute, and ``fn``'s output, is finite and at most MAGNITUDE."""
    values = [op_function(torch, ops[: k + 1])(inputs) for k in range(len(ops))] + [fn(inputs)]
    return all(abs(v) <= MAGNITUDE for t in values for v in t.detach().reshape(-1).tolist())


def smooth_around(torch: Any, ops: list[dict], fn: Function, values: list[list[float]], shapes: list) -> bool:
    """Whether central differences of ``fn`` (computed by ``ops``) are meaningful at ``values``: its
    values are tame there, and every bend is on the same side of its kink, and not on it, at
    ``values`` and at all its neighbours."""

    def at(point: list[list[float]]) -> list[Any]:
        return [
            torch.tensor(v, dtype=torch.float64).reshape(s).requires_grad_(True)
            for v, s in zip(point, shapes, strict=True)
        ]

    if not tame(torch, ops, fn, at(values)):
        return False
    sides = branches(torch, ops, at(values))
    if not sides:  # no bends
        return True
    return 0.0 not in sides and all(branches(torch, ops, at(p)) == sides for p in neighbours(values))


def assert_matches_finite_differences(
    backend: Backend,
    ops: list[dict],
    values: list,
    shapes: list,
    wrap: Callable[[Function], Function] = lambda f: f,
    order: int = 1,
) -> None:
    """``wrap(ops' function)``'s gradients on ``backend`` equal its finite differences, at a point
    where they are meaningful (``smooth_around``); ``order`` 2 when ``wrap`` makes the function's
    first derivatives (then their gradients are second derivatives)."""
    with backend.active():
        fn = wrap(op_function(backend.module, ops))
        assume(smooth_around(backend.module, ops, fn, values, shapes))
        mismatches = gradient_mismatches(backend.module, fn, values, shapes)
    count_program()
    if mismatches:
        raise GradientMismatchError(mismatches, ops, values, shapes, order)


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
    assert_matches_finite_differences(
        backend, ops, values, shapes, lambda fn: second_order(backend.module, fn, weights), order=2
    )
