"""Planted faults that break seed 002's scripts: leaves and non-leaves, their .grad and grad_fn
(rules SEED-002-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tests.impl_faults import fault, patched


@contextmanager
def is_leaf_defined_as(is_leaf: Callable[[Any], bool]) -> Iterator[None]:
    """Tensor.is_leaf answered by ``is_leaf(tensor)``."""
    from impl._tensor import Tensor

    with patched(Tensor, "is_leaf", lambda _orig: property(is_leaf)):
        yield


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
