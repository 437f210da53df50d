"""Hook order (oracle/rules/hooks.py): generated programs with hooks of every kind agree with torch
on which hooks fire, in what order, with what gradients, and what their return values do."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.conftest import examples
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import HOOK_KINDS, Action, ObserveBackwardHooks, Program, RemoveHook
from oracle.strategies import Builder

# Rule -> what impl does differently (strict xfails on the impl backend only; the goal is none).
KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

FAIR_ACTIONS = ("log", "scale", "replace")  # actions torch accepts
BAD_ACTIONS = ("wrong_shape", "wrong_dtype")
LEAF_HOOKS = ("tensor", "post_accumulate_grad")  # hook kinds for a leaf, and for a non-leaf
NODE_HOOKS = ("tensor", "grad_fn", "grad_fn_pre")


@st.composite
def stacked_hooks(draw: Any) -> Program:
    """Two to four tensor hooks on one tensor of a chain (or on a leaf), then backward."""
    builder = Builder(draw)
    builder.start()
    chain = builder.chain(draw(st.integers(0, 3)))
    target = builder.pick(chain + builder.leaves[:1])
    for _ in range(draw(st.integers(2, 4))):
        builder.register(target, "tensor", builder.action(FAIR_ACTIONS))
    builder.finish()
    return builder.program()


@pytest.mark.rule("HOOK-001")
@examples(3)
@given(program=stacked_hooks())
def test_hooks_on_one_tensor_run_in_registration_order(
    program: Program, backend: Backend, reference: Backend
) -> None:
    check(program, backend, reference)


@st.composite
def hooked_graph(draw: Any) -> Program:
    """A chain of ops, or a branching graph (leaves shared by several paths, results with several
    consumers, several outputs summed), with logging hooks on some of its tensors and leaves,
    registered in any order. Where two nodes are ready at once, the engine's order shows."""
    builder = Builder(draw)
    builder.start()
    if builder.draw(st.integers(0, 3)) == 0:
        made = builder.chain(draw(st.integers(2, 5)))
    else:
        made = builder.branching(draw(st.integers(2, 6)))
    leaves = [leaf for leaf in builder.leaves if leaf in builder.tracked]
    for target in draw(st.permutations(made + leaves)):
        if builder.coin():
            builder.register(target, "tensor", Action("log"))
    builder.finish()
    return builder.program()


@pytest.mark.rule("HOOK-002")
@examples(2)
@given(program=hooked_graph())
def test_hooks_fire_from_the_output_back(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def replacing_hooks(draw: Any) -> Program:
    """Tensor hooks that log, scale or replace the gradient, on a chain with retained grads."""
    builder = Builder(draw)
    builder.start()
    chain = builder.chain(draw(st.integers(1, 4)))
    for target in draw(st.lists(st.sampled_from(chain + builder.leaves), min_size=1, max_size=4)):
        builder.register(target, "tensor", builder.action(FAIR_ACTIONS))
        if builder.coin():
            builder.retain_grad()
    builder.finish()
    return builder.program()


@pytest.mark.rule("HOOK-003")
@examples(3)
@given(program=replacing_hooks())
def test_hook_return_replaces_the_gradient(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def bad_hooks(draw: Any) -> Program:
    """A hook of any kind returning a gradient of the wrong shape or dtype, on a chain or in a
    branching graph (where what ran before the error depends on the engine's order)."""
    builder = Builder(draw)
    builder.start()
    if builder.coin():
        chain = builder.chain(draw(st.integers(1, 3)))
    else:
        chain = [n for n in builder.branching(draw(st.integers(1, 4))) if n in builder.tracked]
        if not chain:  # no op of the graph had an operand that requires grad: one op that has
            chain = builder.chain(1)
    on = builder.pick(HOOK_KINDS)
    target = builder.pick(builder.leaves if on == "post_accumulate_grad" else chain)
    builder.register(target, on, builder.action(BAD_ACTIONS))
    builder.finish()
    return builder.program()


@pytest.mark.rule("HOOK-004")
@examples(3)
@given(program=bad_hooks())
def test_wrong_gradient_from_a_hook_raises(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def hook_tables(draw: Any) -> Program:
    """Tensor hooks (and retain_grad) on a chain's tensors and its first leaf, some removed, maybe an
    in-place op on a hooked non-leaf (its new grad_fn has none of them); every tensor's
    ``_backward_hooks`` observed, then backward."""
    builder = Builder(draw)
    builder.start()
    chain = builder.chain(draw(st.integers(1, 2)))
    for _ in range(draw(st.integers(0, 3))):
        target = builder.pick(chain + builder.leaves[:1])
        if builder.coin():
            builder.register(target, "tensor", Action("log"))
        else:
            builder.steps.append(builder.retain_grad_step(target))
    for hook in draw(st.lists(st.sampled_from(builder.hooks), max_size=2)) if builder.hooks else ():
        builder.steps.append(RemoveHook(hook))
    if builder.coin():
        builder.inplace(builder.pick(chain))
    builder.steps += [ObserveBackwardHooks(name) for name in builder.shapes]
    builder.finish()
    return builder.program()


@pytest.mark.rule("HOOK-005")
@examples(0.1)
@given(program=hook_tables())
def test_backward_hooks_table(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def removed_hooks(draw: Any) -> Program:
    """Hooks of every kind on a chain's tensors and leaves, often several on one tensor, then some
    of them removed (now and then one twice), more actions, backward."""
    builder = Builder(draw)
    builder.start()
    chain = builder.chain(draw(st.integers(1, 3)))
    for _ in range(draw(st.integers(2, 5))):
        again = builder.hooked and builder.coin()  # several hooks on one tensor
        target = builder.pick(builder.hooked if again else chain + builder.leaves[:1])
        on = builder.pick(LEAF_HOOKS if target in builder.leaves else NODE_HOOKS)
        builder.register(target, on, builder.action(("log", "log", "scale")))
    for hook in draw(st.lists(st.sampled_from(builder.hooks), min_size=1, max_size=3)):
        builder.steps.append(RemoveHook(hook))
    builder.actions(("op", "hook", "remove_hook", "backward"), max_actions=3)
    builder.finish()
    return builder.program()


@pytest.mark.rule("HOOK-005")
@examples(2)
@given(program=removed_hooks())
def test_removed_hooks_do_not_fire(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)



@st.composite
def mixed_hooks(draw: Any) -> Program:
    """On one non-leaf: tensor hooks, retain_grad and grad_fn pre/post hooks in any order; on the
    leaves: tensor hooks and post-accumulate-grad hooks."""
    builder = Builder(draw)
    builder.start()
    chain = builder.chain(draw(st.integers(1, 3)))
    target = builder.pick(chain)
    kinds = ["tensor", "tensor", "grad_fn", "grad_fn_pre", "retain_grad"]
    for kind in draw(st.lists(st.sampled_from(kinds), min_size=2, max_size=6)):
        if kind == "retain_grad":
            builder.steps.append(builder.retain_grad_step(target))
        else:
            builder.register(target, kind, builder.action(FAIR_ACTIONS))
    for leaf in builder.leaves:
        for kind in draw(st.lists(st.sampled_from(("tensor", "post_accumulate_grad")), max_size=2)):
            builder.register(leaf, kind, builder.action(("log", "scale")))
    builder.finish()
    return builder.program()


@pytest.mark.rule("HOOK-006")
@examples(2)
@given(program=mixed_hooks())
def test_hook_kinds_fire_in_documented_order(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def module_hooks(draw: Any) -> Program:
    """nn.Linear layers with module hooks of every kind, called on tensors, then backward."""
    builder = Builder(draw, ("float32",), shapes=((2,), (3,), (2, 2)))
    builder.start()
    for _ in range(draw(st.integers(1, 2))):
        builder.module()
        builder.chain(draw(st.integers(0, 2)))
    builder.finish()
    return builder.program()


@pytest.mark.rule("HOOK-007")
@examples(2)
@given(program=module_hooks())
def test_module_hooks(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
