"""The pytrees torch.func's transforms take and return: tuples, lists and dicts of leaves, with
torch's TreeSpec printed form (its errors show it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_NODES = (tuple, list, dict)


class TreeSpec:
    """The structure of a pytree: a node type, its context (a dict's keys) and its children's
    specs; a leaf is ``LEAF`` (printed ``*``)."""

    def __init__(self, kind: type | None, context: Any = None, children: list[TreeSpec] | None = None):
        self.type, self._context, self._children = kind, context, children or []

    @property
    def num_leaves(self) -> int:
        return 1 if self.type is None else sum(c.num_leaves for c in self._children)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TreeSpec) and (self.type, self._context, self._children) == (
            other.type,
            other._context,
            other._children,
        )

    def __hash__(self) -> int:
        return hash((self.type, len(self._children)))

    def __repr__(self, indent: int = 0) -> str:
        if self.type is None:
            return "*"
        indent += 2
        parts = [c.__repr__(indent) for c in self._children]
        body = ("," + "\n" + " " * indent).join(parts)
        return f"TreeSpec({self.type.__name__}, {self._context}, [{body}])"


LEAF = TreeSpec(None)


def _children(tree: Any) -> tuple[list, Any]:
    if isinstance(tree, dict):
        return list(tree.values()), list(tree)
    return list(tree), None


def tree_flatten(tree: Any) -> tuple[list, TreeSpec]:
    """The leaves of ``tree`` in order, and its structure."""
    if type(tree) not in _NODES:
        return [tree], LEAF
    kids, context = _children(tree)
    leaves: list = []
    specs = []
    for kid in kids:
        sub, spec = tree_flatten(kid)
        leaves += sub
        specs.append(spec)
    return leaves, TreeSpec(type(tree), context, specs)


def tree_unflatten(leaves: list, spec: TreeSpec) -> Any:
    """The pytree of structure ``spec`` holding ``leaves`` in order."""
    it = iter(leaves)

    def build(s: TreeSpec) -> Any:
        if s.type is None:
            return next(it)
        kids = [build(c) for c in s._children]
        return dict(zip(s._context, kids, strict=True)) if s.type is dict else s.type(kids)

    return build(spec)


def tree_map(fn: Callable, tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix: Any, spec: TreeSpec) -> list | None:
    """``prefix``'s leaves repeated over the subtrees of ``spec`` they stand for (as torch's
    _broadcast_to_and_flatten), None where ``prefix`` is not a prefix of ``spec``."""
    if type(prefix) not in _NODES:
        return [prefix] * spec.num_leaves
    if type(prefix) is not spec.type:
        return None
    kids, context = _children(prefix)
    if len(kids) != len(spec._children) or context != spec._context:
        return None
    out: list = []
    for kid, sub in zip(kids, spec._children, strict=True):
        part = broadcast_prefix(kid, sub)
        if part is None:
            return None
        out += part
    return out
