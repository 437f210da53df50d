"""Numerical gradients (oracle/rules/gradcheck.py): the backend's first and second derivatives of
generated smooth op compositions against central finite differences computed on the backend
itself in float64 (oracle/numeric.py) -- no torch involved."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.conftest import examples
from oracle.backends import Backend
from oracle.numeric import gradient_mismatches, op_function, second_order
from oracle.program import Ref
from oracle.stats import count_program

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

# smooth on the positive inputs drawn (no kinks, no poles)
UNARY = ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "square", "neg")
BINARY = ("mul", "div", "add", "sub", "maximum")
SHAPES = ((), (2,), (3,), (2, 2))


@st.composite
def smooth_functions(draw: Any) -> tuple[list[dict], list[list[float]], list[tuple[int, ...]]]:
    """(ops, flat input values, input shapes): one or two inputs in [0.5, 2], then a chain of
    smooth ops, sometimes ending in a reduction, softmax or a matrix product."""
    shape = draw(st.sampled_from(SHAPES))
    n = draw(st.integers(1, 2))
    size = 1
    for s in shape:
        size *= s
    value = st.floats(0.5, 2.0, allow_nan=False).map(lambda v: round(v, 3))
    values = [draw(st.lists(value, min_size=size, max_size=size)) for _ in range(n)]
    names, ops = [f"i{k}" for k in range(n)], []
    for k in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(UNARY + BINARY + ("pow",)))
        args: list = [Ref(names[-1])]
        if op in BINARY:
            args.append(Ref(draw(st.sampled_from(names))))
            if op == "div":  # a positive divisor
                ops.append({"out": f"q{k}", "op": "exp", "args": args[1:]})
                args[1] = Ref(f"q{k}")
        elif op == "pow":
            args.append(draw(st.sampled_from((2, 3, 0.5, -1.0))))
        if op in ("log", "sqrt") or (op == "pow" and args[1] in (0.5, -1.0)):  # keep the argument positive
            ops.append({"out": f"p{k}", "op": "exp", "args": args[:1]})
            args[0] = Ref(f"p{k}")
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


def assert_matches_finite_differences(backend: Backend, fn: Any, values: list, shapes: list) -> None:
    with backend.active():
        mismatches = gradient_mismatches(backend.module, fn, values, shapes)
    count_program()
    assert not mismatches, "\n".join(map(str, mismatches[:5]))


@pytest.mark.rule("NUM-001")
@examples(3)
@given(case=smooth_functions())
def test_gradients_match_finite_differences(case: tuple, backend: Backend) -> None:
    ops, values, shapes = case
    assert_matches_finite_differences(backend, op_function(backend.module, ops), values, shapes)


@pytest.mark.rule("NUM-002")
@examples(1.5)
@given(case=smooth_functions(), weights=st.lists(st.sampled_from((1.0, -0.5, 2.0)), min_size=4, max_size=4))
def test_second_derivatives_match_finite_differences(case: tuple, weights: list, backend: Backend) -> None:
    ops, values, shapes = case
    fn = second_order(backend.module, op_function(backend.module, ops), weights)
    assert_matches_finite_differences(backend, fn, values, shapes)
