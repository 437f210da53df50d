"""Planted faults that break seed 002's scripts: leaves and non-leaves, their .grad and grad_fn
(rules SEED-002-*)."""

from __future__ import annotations

from collections.abc import Iterator

from impl_faults import fault
from impl_faults.leaf import is_leaf_defined_as


@fault({"SEED-002-3": "stdout line"})
def view_is_leaf_as_its_base() -> Iterator[None]:
    """is_leaf of a view answers for its base, so reshape() of a leaf reports a leaf."""
    with is_leaf_defined_as(lambda t: (t._base if t._base is not None else t).grad_fn is None):
        yield


@fault({"SEED-002-4": "stdout line"})
def is_leaf_requires_grad() -> Iterator[None]:
    """is_leaf is False for tensors that require no grad, which torch counts as leaves."""
    with is_leaf_defined_as(lambda t: t.requires_grad and t.grad_fn is None):
        yield
