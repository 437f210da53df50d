"""Gradient accumulation (oracle/rules/accumulation.py): generated programs agree with torch on
what each backward or autograd.grad adds into .grad, and on the errors around it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.conftest import examples
from oracle import coverage
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import Backward, Grad, Leaf, Observe, Op, Program, Ref, ZeroGrad
from oracle.strategies import Builder, programs

# Rule -> what impl does differently (strict xfails on the impl backend only; the goal is none).
KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

# Which (API, argument, value class) items each rule's programs must exercise (oracle.coverage): the
# keyword arguments the rule names.
COVERAGE: dict[str, coverage.Targets] = {
    "ACC-003": coverage.Targets(coverage.keywords("Tensor.backward", only=("inputs",))),
    "ACC-004": coverage.Targets(
        coverage.keywords("autograd.grad", only=("allow_unused", "materialize_grads"))
    ),
    "ACC-005": coverage.Targets(coverage.keywords("Tensor.backward", only=("gradient",))),
    "ACC-006": coverage.Targets(coverage.keywords("autograd.grad", only=("grad_outputs", "create_graph"))),
    "ACC-007": coverage.Targets(coverage.keywords("autograd.grad", only=("is_grads_batched", "only_inputs"))),
}


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
@examples(2)
@given(program=zeroed_between())
def test_zeroing_grad_restarts_accumulation(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def backward_with_inputs(draw: Any) -> Program:
    """backward(inputs=...) naming some of the leaves and intermediate tensors, after a backward
    without inputs now and then (into every leaf)."""
    builder = Builder(draw)
    builder.start()
    chain = builder.chain(draw(st.integers(1, 4)))
    root = builder.root()
    candidates = builder.leaves + chain
    inputs = draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=3, unique=True))
    if builder.coin():
        builder.steps.append(Backward(root, retain_graph=True))
    builder.steps.append(Backward(root, retain_graph=True, inputs=inputs))
    builder.steps.extend(Observe(name) for name in candidates)
    return builder.program()


@pytest.mark.rule("ACC-003")
@examples(2)
@given(program=backward_with_inputs())
def test_backward_inputs_limit_accumulation(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def grads_without_accumulation(draw: Any) -> Program:
    """autograd.grad with every option over leaves and intermediates (often with a leaf that
    requires grad and that the graph does not use among them), then .grad observed."""
    builder = Builder(draw)
    builder.start()
    chain = builder.chain(draw(st.integers(1, 3)))
    root = builder.root()
    inputs = draw(st.lists(st.sampled_from(builder.leaves + chain), min_size=1, max_size=3, unique=True))
    if builder.coin():
        unused = builder.fresh("x")
        builder.bind(unused, builder.shape, Leaf(unused, builder.data(builder.shape), builder.dtype, True))
        builder.leaves.append(unused)
        inputs.insert(draw(st.integers(0, len(inputs))), unused)
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
@examples(2)
@given(program=grads_without_accumulation())
def test_autograd_grad_leaves_grad_alone(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def weighted_grads(draw: Any, batched_or_deprecated: bool = False) -> Program:
    """autograd.grad of a tensor with grad_outputs of its shape (of a scalar, now and then none),
    with create_graph or not (then a
    backward through the gradient of the leaf the graph starts from); ``batched_or_deprecated``:
    a batch of grad_outputs (is_grads_batched=True) or the deprecated only_inputs=False."""
    builder = Builder(draw, shapes=((), (2,), (2, 2)))
    builder.start()
    chain = builder.chain(draw(st.integers(1, 3)))
    out = chain[-1]
    used = [n for n in builder.leaves if n in builder.tracked][-1]  # where the chain starts
    others = [n for n in builder.leaves + chain[:-1] if n != used]
    inputs = [used, *draw(st.lists(st.sampled_from(others), max_size=1))] if others else [used]
    batched = batched_or_deprecated and builder.coin()
    shape = builder.shapes[out]
    weights_shape = (draw(st.integers(1, 3)), *shape) if batched else shape
    weights = builder.fresh("x")
    builder.bind(weights, weights_shape, Leaf(weights, builder.data(weights_shape), builder.dtype))
    create_graph = not batched and builder.coin()
    outs = [builder.fresh("g") for _ in inputs]
    only_inputs = not batched_or_deprecated or (batched and builder.coin())
    retain_graph = builder.pick((None, True))
    unweighted = shape == () and not batched and builder.coin()  # a scalar's weight is 1 by default
    grad = Grad(outs, [out], inputs, None if unweighted else [weights], retain_graph, create_graph,
                allow_unused=True, only_inputs=only_inputs, is_grads_batched=batched)
    builder.steps.append(grad)
    builder.steps.extend(Observe(g) for g in outs)
    if create_graph:
        total = builder.fresh("t")
        builder.steps += [Op(total, "sum", [Ref(outs[0])]), Backward(total)]
    observe_leaves(builder)
    return builder.program()


@pytest.mark.rule("ACC-006")
@examples(2)
@given(program=weighted_grads())
def test_grad_outputs_and_create_graph(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("ACC-007")
@examples(2)
@given(program=weighted_grads(batched_or_deprecated=True))
def test_batched_grads_and_only_inputs(program: Program, backend: Backend, reference: Backend) -> None:
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
@examples(2)
@given(program=non_scalar_backward())
def test_non_scalar_backward_needs_a_gradient(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("ACC-002")
@examples(2)
@given(program=programs(features=("op", "backward", "zero_grad", "grad", "observe"), max_actions=8))
def test_mixed_accumulation(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
