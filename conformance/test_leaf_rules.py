"""Leaf rules (oracle/rules/leaf.py): generated programs agree with torch on leaf flags, grad_fn
names, which tensors keep .grad, and the warnings and errors around them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.conftest import examples
from oracle import coverage
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import (
    DELETABLE,
    Backward,
    DelAttr,
    Detach,
    Leaf,
    Observe,
    Op,
    Program,
    Ref,
    RegisterHook,
    RetainGrad,
)
from oracle.strategies import BINARY, UNARY, Builder, programs

# Which (API, argument, value class) items each rule's programs must exercise (oracle.coverage).
COVERAGE: dict[str, coverage.Targets] = {
    "LEAF-006": coverage.Targets(coverage.keywords("Tensor.requires_grad_")),
}


@st.composite
def created_leaves(draw: Any) -> Program:
    """Leaves of every dtype the oracle knows, with and without requires_grad, observed."""
    builder = Builder(draw, ("float32", "float64", "float16"))
    builder.start()
    for name in builder.leaves:
        builder.steps.append(Observe(name))
    return builder.program()


@pytest.mark.rule("LEAF-001")
@examples(3)
@given(program=created_leaves())
def test_created_tensors_are_leaves(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


def constant_op(builder: Builder, mixed: bool = False) -> None:
    """A unary or binary op on tensors none of which requires grad; ``mixed``: a binary op whose
    first operand does not require grad and whose second does (the result is recorded all the
    same)."""
    constants = [n for n in builder.shapes if n not in builder.tracked]
    pool = sorted(builder.tracked) if mixed else constants
    a = builder.pick([n for n in constants if any(builder.shapes[m] == builder.shapes[n] for m in pool)])
    shape = builder.shapes[a]
    out = builder.fresh("t")
    if not mixed and builder.coin():
        builder.bind(out, shape, Op(out, builder.pick(UNARY), [Ref(a)]))
    else:
        b = builder.pick([n for n in pool if builder.shapes[n] == shape])
        builder.bind(out, shape, Op(out, builder.pick(BINARY), [Ref(a), Ref(b)]))


@st.composite
def op_results(draw: Any) -> Program:
    """Ops on tensors that require grad, on tensors none of which does (a leaf that does not
    require grad is always among the leaves) and on both (the first not), observations, then
    backward."""
    builder = Builder(draw)
    builder.start()
    constant = builder.fresh("x")
    builder.bind(constant, builder.shape, Leaf(constant, builder.data(builder.shape), builder.dtype))
    builder.leaves.append(constant)
    actions = {
        "op": builder.op,
        "observe": builder.observe,
        "constant op": lambda: constant_op(builder),
        "mixed op": lambda: constant_op(builder, mixed=True),
    }
    for _ in range(draw(st.integers(1, 6))):
        actions[draw(st.sampled_from(("op", "observe", "constant op", "mixed op")))]()
    builder.finish()
    return builder.program()


@pytest.mark.rule("LEAF-002")
@examples(2)
@given(program=op_results())
def test_op_results_are_non_leaves(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("LEAF-003")
@examples(2)
@given(program=programs(features=("op", "backward"), max_actions=6))
def test_only_leaves_keep_grad(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def retained(draw: Any) -> Program:
    """A chain of ops with retain_grad() on some of its tensors (and on leaves or tensors that do
    not require grad, where it is a no-op or an error)."""
    builder = Builder(draw)
    builder.start()
    chain = builder.chain(draw(st.integers(1, 4)))
    for name in draw(st.lists(st.sampled_from(chain + builder.leaves), max_size=4)):
        builder.steps.append(builder.retain_grad_step(name))
    builder.actions(("op", "retain_grad"), max_actions=3)
    builder.finish()
    return builder.program()


@pytest.mark.rule("LEAF-004")
@examples(2)
@given(program=retained())
def test_retain_grad_keeps_non_leaf_grad(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def detached(draw: Any) -> Program:
    """detach() of a tensor of a chain or of a leaf, then in-place edits of the detached tensor
    or of its source (each shows through in the other; torch refuses them on a leaf that
    requires grad), then more ops, detaches, edits and observations."""
    builder = Builder(draw)
    builder.start()
    chain = builder.chain(draw(st.integers(0, 3)))
    source = builder.pick(chain + builder.leaves)
    alias = builder.fresh("t")
    builder.bind(alias, builder.shapes[source], Detach(alias, source))
    editable = [alias] if source in builder.leaves and source in builder.tracked else [alias, source]
    for _ in range(draw(st.integers(1, 2))):
        builder.inplace(builder.pick(editable))
    builder.actions(("op", "detach", "inplace", "observe"), max_actions=4)
    builder.finish()
    return builder.program()


@pytest.mark.rule("LEAF-005")
@examples(2)
@given(program=detached())
def test_detach_gives_a_leaf_sharing_values(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("LEAF-006")
@examples(2)
@given(program=programs(features=("op", "requires_grad", "backward"), max_actions=6))
def test_requires_grad_flag_changes(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def deletions(draw: Any) -> Program:
    """A leaf that requires grad and an op on it (maybe retaining its grad, maybe with a hook), a
    backward that keeps the graph, then ``del`` of one or two attributes of either, a second
    backward and both observed."""
    x = Leaf("x", [1.0, -2.0], "float32", True)
    op = draw(st.sampled_from(("mul", "exp", "add")))
    steps: list = [x, Op("y", op, [Ref("x"), *([] if op == "exp" else [2.0])])]
    if draw(st.booleans()):
        steps.append(RetainGrad("y"))
    hook = draw(st.sampled_from((None, "tensor", "post_accumulate_grad")))
    if hook:
        steps.append(RegisterHook("h", "y" if hook == "tensor" else "x", on=hook))
    steps += [Op("s", "sum", [Ref("y")]), Backward("s", retain_graph=True)]
    for _ in range(draw(st.integers(1, 2))):
        steps.append(DelAttr(draw(st.sampled_from(("x", "y"))), draw(st.sampled_from(DELETABLE))))
    steps += [Backward("s"), Observe("x"), Observe("y")]
    return Program(steps)


@pytest.mark.rule("LEAF-007")
@examples(2)
@given(program=deletions())
def test_deleted_attributes(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
