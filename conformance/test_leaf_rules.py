"""Leaf rules (oracle/rules/leaf.py): generated programs agree with torch on leaf flags, grad_fn
names, which tensors keep .grad, and the warnings and errors around them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.conftest import examples
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import Observe, Program
from oracle.strategies import Builder, programs


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


@pytest.mark.rule("LEAF-002")
@examples(2)
@given(program=programs(features=("op", "observe"), max_actions=6))
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


@pytest.mark.rule("LEAF-005")
@examples(2)
@given(program=programs(features=("op", "detach", "inplace", "observe"), max_actions=6))
def test_detach_gives_a_leaf_sharing_values(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("LEAF-006")
@examples(2)
@given(program=programs(features=("op", "requires_grad", "backward"), max_actions=6))
def test_requires_grad_flag_changes(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
