"""Retain graph (oracle/rules/retain_graph.py): generated programs agree with torch on when a graph
can be backpropagated again, and on the error when it cannot."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.conftest import examples
from oracle import coverage
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import Backward, Grad, Observe, Op, Program, Ref
from oracle.strategies import NON_SAVING, Builder

# Which (API, argument, value class) items each rule's programs must exercise (oracle.coverage): the
# keyword arguments the rule names.
COVERAGE: dict[str, coverage.Targets] = {
    "RG-001": coverage.Targets(coverage.keywords("Tensor.backward", only=("retain_graph",))),
    "RG-003": coverage.Targets(coverage.keywords("autograd.grad", only=("retain_graph",))),
    "RG-004": coverage.Targets(coverage.keywords("autograd.grad", only=("create_graph",))),
}


def passes(draw: Any, builder: Builder, root: str) -> None:
    """Two or three backward passes from ``root``, each retaining the graph or not."""
    for _ in range(draw(st.integers(2, 3))):
        builder.steps.append(Backward(root, retain_graph=builder.pick((None, False, True))))
    builder.steps.extend(Observe(name) for name in builder.leaves)


@st.composite
def saving_graphs(draw: Any) -> Program:
    """A chain of any ops (most save tensors), backpropagated several times."""
    builder = Builder(draw)
    builder.start()
    builder.chain(draw(st.integers(1, 4)))
    passes(draw, builder, builder.root())
    return builder.program()


@pytest.mark.rule("RG-001")
@examples(2)
@given(program=saving_graphs())
def test_second_backward_needs_retain_graph(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def non_saving_graphs(draw: Any) -> Program:
    """A chain of ops that save no tensors (then maybe a view, then a sum or mean),
    backpropagated several times."""
    builder = Builder(draw)
    builder.start()
    last = builder.chain(draw(st.integers(1, 4)), NON_SAVING)[-1]
    if builder.shapes[last] and builder.coin():  # a view saves no tensor either
        view = builder.fresh("t")
        builder.view(last, view)
        last = view
    root = builder.fresh("t")
    builder.bind(root, (), Op(root, builder.pick(("sum", "mean")), [Ref(last)]), tracked=True)
    passes(draw, builder, root)
    return builder.program()


@pytest.mark.rule("RG-002")
@examples(2)
@given(program=non_saving_graphs())
def test_graph_saving_nothing_runs_twice(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def grad_then_backward(draw: Any) -> Program:
    """autograd.grad (retaining the graph or not), then another autograd.grad or a backward."""
    builder = Builder(draw)
    builder.start()
    builder.chain(draw(st.integers(1, 4)))
    root = builder.root()
    leaf = builder.leaves[0]
    for _ in range(draw(st.integers(2, 3))):
        retain = builder.pick((None, False, True))
        if builder.coin():
            builder.steps.append(Grad([builder.fresh("g")], [root], [leaf], retain_graph=retain))
        else:
            builder.steps.append(Backward(root, retain_graph=retain))
    builder.steps.append(Observe(leaf))
    return builder.program()


@pytest.mark.rule("RG-003")
@examples(2)
@given(program=grad_then_backward())
def test_autograd_grad_frees_the_graph(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def second_derivatives(draw: Any) -> Program:
    """grad with create_graph=True, then the gradient of (the sum of) that gradient."""
    builder = Builder(draw)
    builder.start()
    builder.chain(draw(st.integers(1, 3)))
    root = builder.root()
    leaf = builder.leaves[0]
    first = builder.fresh("g")
    builder.steps.append(Grad([first], [root], [leaf], create_graph=builder.pick((True, True, False))))
    total = builder.fresh("t")
    builder.steps.append(Op(total, "sum", [Ref(first)]))
    builder.steps.append(Observe(first))
    second = builder.fresh("g")
    builder.steps.append(Grad([second], [total], [leaf], allow_unused=True))
    builder.steps.append(Backward(root))  # the graph was kept by create_graph
    builder.steps.append(Observe(leaf))
    return builder.program()


@pytest.mark.rule("RG-004")
@examples(2)
@given(program=second_derivatives())
def test_create_graph_allows_second_derivatives(
    program: Program, backend: Backend, reference: Backend
) -> None:
    check(program, backend, reference)
