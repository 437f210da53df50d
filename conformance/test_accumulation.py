"""Gradient accumulation (oracle/rules/accumulation.py): generated programs agree with torch on
what each backward or autograd.grad adds into .grad, and on the errors around it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle.backends import Backend
from oracle.differential import check
from oracle.program import Backward, Grad, Leaf, Observe, Program, ZeroGrad
from oracle.strategies import Builder, programs


def observe_leaves(builder: Builder) -> None:
    builder.steps.extend(Observe(name) for name in builder.leaves)


@st.composite
def repeated_backward(draw: Any) -> Program:
    """Backward through one graph two to four times (retaining it), observing .grad after each."""
    builder = Builder(draw)
    builder.start()
    builder.chain(draw(st.integers(1, 4)))
    root = builder.root()
    for _ in range(draw(st.integers(2, 4))):
        builder.steps.append(Backward(root, retain_graph=True))
        observe_leaves(builder)
    return builder.program()


@pytest.mark.rule("ACC-001")
@settings(deadline=None)
@given(program=repeated_backward())
def test_repeated_backward_accumulates(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def zeroed_between(draw: Any) -> Program:
    """Backward, then zero or None some leaves' .grad, then backward again."""
    builder = Builder(draw)
    builder.start()
    builder.chain(draw(st.integers(1, 3)))
    root = builder.root()
    for _ in range(draw(st.integers(2, 3))):
        builder.steps.append(Backward(root, retain_graph=True))
        for leaf in draw(st.lists(st.sampled_from(builder.leaves), max_size=2)):
            builder.steps.append(ZeroGrad(leaf, set_to_none=builder.coin()))
        observe_leaves(builder)
    return builder.program()


@pytest.mark.rule("ACC-002")
@settings(deadline=None)
@given(program=zeroed_between())
def test_zeroing_grad_restarts_accumulation(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def backward_with_inputs(draw: Any) -> Program:
    """backward(inputs=...) naming some of the leaves and intermediate tensors."""
    builder = Builder(draw)
    builder.start()
    chain = builder.chain(draw(st.integers(1, 4)))
    root = builder.root()
    candidates = builder.leaves + chain
    inputs = draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=3, unique=True))
    builder.steps.append(Backward(root, retain_graph=True, inputs=inputs))
    builder.steps.extend(Observe(name) for name in candidates)
    return builder.program()


@pytest.mark.rule("ACC-003")
@settings(deadline=None)
@given(program=backward_with_inputs())
def test_backward_inputs_limit_accumulation(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def grads_without_accumulation(draw: Any) -> Program:
    """autograd.grad with every option over leaves and intermediates, then .grad observed."""
    builder = Builder(draw)
    builder.start()
    chain = builder.chain(draw(st.integers(1, 3)))
    root = builder.root()
    inputs = draw(st.lists(st.sampled_from(builder.leaves + chain), min_size=1, max_size=3, unique=True))
    builder.steps.append(
        Grad(
            [builder.fresh("g") for _ in inputs],
            [root],
            inputs,
            retain_graph=builder.pick((None, True)),
            allow_unused=builder.pick((None, True, False)),
            materialize_grads=builder.coin(),
        )
    )
    observe_leaves(builder)
    return builder.program()


@pytest.mark.rule("ACC-004")
@settings(deadline=None)
@given(program=grads_without_accumulation())
def test_autograd_grad_leaves_grad_alone(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def non_scalar_backward(draw: Any) -> Program:
    """backward on a non-scalar tensor, with a gradient of its shape or without one."""
    builder = Builder(draw, shapes=((2,), (3,), (2, 2)))
    builder.start()
    target = builder.chain(draw(st.integers(1, 3)))[-1]
    gradient = None
    if draw(st.integers(0, 3)) > 0:
        gradient = builder.fresh("x")
        shape = builder.shapes[target]
        builder.steps.append(Leaf(gradient, builder.data(shape), builder.dtype))
    builder.steps.append(Backward(target, gradient))
    observe_leaves(builder)
    return builder.program()


@pytest.mark.rule("ACC-005")
@settings(deadline=None)
@given(program=non_scalar_backward())
def test_non_scalar_backward_needs_a_gradient(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("ACC-002")
@settings(deadline=None)
@given(program=programs(features=("op", "backward", "zero_grad", "grad", "observe"), max_actions=8))
def test_mixed_accumulation(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
