"""impl against torch on scatter corner cases the generated programs rarely reach: the order of
torch's checks, a number converted only when an index writes it, reduce's NotImplemented node,
the warn-once deprecation of reduce with a tensor src, bool scatter_add, a src larger than the
index. Each case runs the same code on torch and on impl and compares what it observes."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

import impl


def outcome(lib: Any, case: Callable[[Any], Any]) -> Any:
    """What ``case`` gives on ``lib``: its tensors as (dtype, shape, values, grad_fn name), or the
    error it raises as (type, message)."""
    try:
        result = case(lib)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e).split("\n")[0]
    results = result if isinstance(result, tuple) else (result,)
    return [
        (str(t.dtype), tuple(t.shape), t.detach().tolist(), t.grad_fn and t.grad_fn.name())
        if hasattr(t, "dtype")
        else t
        for t in results
    ]


def same(case: Callable[[Any], Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected, got = outcome(torch, case), outcome(impl, case)
    assert got == expected


def _x(lib: Any) -> Any:
    return lib.zeros(3, 4)


CHECKS = {  # each breaks two of torch's checks: the first in torch's order must be reported
    "dim before index dtype": lambda L: _x(L).scatter(2, L.zeros(1, 4), L.ones(1, 4)),
    "index dtype before src dtype": lambda L: _x(L).scatter(0, L.zeros(1, 4), L.ones(1, 4).double()),
    "src dtype before shapes": lambda L: _x(L).scatter(0, L.zeros(5, 5, dtype=L.long), L.ones(1).double()),
    "shapes before reduce": lambda L: _x(L).scatter(0, L.zeros(5, 5, dtype=L.long), 1.0, reduce="max"),
    "reduce before range": lambda L: _x(L).scatter(0, L.full((1, 4), 7), 1.0, reduce="max"),
    "src rank after size": lambda L: _x(L).scatter(0, L.zeros(1, 4, dtype=L.long), L.ones(4)),
    "empty index: no dtype check": lambda L: _x(L).scatter(0, L.zeros(0, 4), L.ones(1, 4)),
    "empty index: no shape check": lambda L: _x(L).scatter(0, L.zeros(0, 9, 9, dtype=L.long), 2.0),
    "first out-of-range index named": lambda L: L.zeros(3).scatter(0, L.tensor([1, 5, -1]), 1.0),
}


@pytest.mark.parametrize("name", CHECKS)
def test_check_order(name: str) -> None:
    same(CHECKS[name])


VALUES = {  # a number torch converts to the input's dtype only when an index writes it
    "overflow written": lambda L: L.zeros(2, dtype=L.uint8).scatter(0, L.tensor([0]), 300),
    "overflow not written": lambda L: L.zeros(2, dtype=L.uint8).scatter(0, L.zeros(0, dtype=L.long), 300),
    # an index out of range after a written one: the write converts (and overflows) first
    "overflow before a later bad index": lambda L: L.zeros(2, 4, dtype=L.uint8).scatter(
        -1, L.tensor([[0, 4, 0, 0]]), 1e30
    ),
    "bad index before the first write": lambda L: L.zeros(2, 4, dtype=L.uint8).scatter(
        -1, L.tensor([[4, 0, 0, 0]]), 1e30
    ),
    "overflow, bad index along dim 0": lambda L: L.zeros(3, 3, dtype=L.uint8).scatter(
        0, L.tensor([[0, 0], [5, 0]]), 1e30
    ),
    "nan into long": lambda L: L.zeros(2, dtype=L.long).scatter(0, L.tensor([1]), float("nan")),
    "complex into float": lambda L: L.zeros(2).scatter(0, L.tensor([1]), 1 + 2j),
    "complex not written": lambda L: L.zeros(2).scatter(0, L.zeros(0, dtype=L.long), 1 + 2j),
    "bool value into int": lambda L: L.zeros(2, dtype=L.int16).scatter(0, L.tensor([1]), True),
    "multiply by value": lambda L: L.full((3,), 2.0).scatter(0, L.tensor([1, 1]), 3.0, reduce="multiply"),
}


@pytest.mark.parametrize("name", VALUES)
def test_value_conversion(name: str) -> None:
    same(VALUES[name])


def _reduce_backward(L: Any) -> Any:
    x = L.ones(3, requires_grad=True)
    y = x.scatter(0, L.tensor([0, 0]), L.ones(2, requires_grad=True), reduce="add")
    name = y.grad_fn.name()
    y.sum().backward()
    return name


OTHER = {
    "reduce node": lambda L: L.ones(3, requires_grad=True).scatter(0, L.tensor([0]), 2.0, reduce="add"),
    "reduce backward raises": _reduce_backward,
    "bool scatter_add": lambda L: L.tensor([False, True, False]).scatter_add(
        0, L.tensor([0, 0, 2]), L.tensor([True, True, False])
    ),
    "src larger than index": lambda L: L.zeros(2, 3).scatter(
        1, L.tensor([[2], [0]]), L.arange(12.0).reshape(3, 4)
    ),
    "src larger, 0-d input": lambda L: L.tensor(5.0).scatter_add(0, L.tensor([0, 0]), L.arange(4.0)),
    "0-d index into 1-d": lambda L: L.zeros(3).scatter(0, L.tensor(2), L.tensor(7.0)),
    "leaf in place": lambda L: L.ones(3, requires_grad=True).scatter_(0, L.tensor([0]), 2.0),
    "src keyword needs tensor": lambda L: L.scatter(L.zeros(3), 0, L.tensor([0]), src=1.0),
    "method src keyword needs tensor": lambda L: L.zeros(3).scatter(0, L.tensor([0]), src=1.0),
}


@pytest.mark.parametrize("name", list(OTHER))
def test_other(name: str) -> None:
    same(OTHER[name])


def test_reduce_deprecation_warns_once() -> None:
    """torch warns (TORCH_WARN_ONCE) on reduce with a tensor src, not with a number; impl the
    same, once per process, with torch's message."""
    import impl._ops.scatter as module

    def warned(lib: Any, src: Callable[[Any], Any]) -> list[str]:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            lib.zeros(3).scatter(0, lib.tensor([1]), src(lib), reduce="add")
        return [str(w.message) for w in seen]

    number = warned(impl, lambda L: 2.0)
    assert number == warned(torch, lambda L: 2.0) == []
    module._warned_reduce = False
    first = warned(impl, lambda L: L.ones(1))
    assert len(first) == 1 and first[0].startswith("The reduce argument of torch.scatter with Tensor src")
    assert warned(impl, lambda L: L.ones(1)) == []
    torch_messages = warned(torch, lambda L: L.ones(1))  # empty if this process warned already
    assert torch_messages in ([], first)


# -- index_add / index_copy ------------------------------------------------------------------------
def _graph(lib: Any, op: str, self_shape: tuple, index: Any, src_shape: tuple, **kwargs: Any) -> Any:
    """The values, names and edges of the second-order graph of ``op``'s gradients."""
    x = lib.arange(1.0, 1 + math.prod(self_shape)).reshape(self_shape).requires_grad_()
    s = lib.arange(1.0, 1 + math.prod(src_shape)).reshape(src_shape).requires_grad_()
    y = getattr(x, op)(0, lib.tensor(index), s, **kwargs)
    g = lib.ones(y.shape, requires_grad=True) * 3
    return tuple(
        (t.tolist(), t.grad_fn.name(), [n and n.name() for n, _ in t.grad_fn.next_functions])
        for t in lib.autograd.grad(y, (x, s), g, create_graph=True)
    )


INDEX_CASES = {
    # torch's checks in order (each case breaks two: the first in torch's order must be reported)
    "add: index dims before dtype": lambda L: L.zeros(3, 4).index_add(0, L.zeros(1, 2), L.ones(2, 4)),
    "add: index dtype before source dtype": lambda L: L.zeros(3).index_add(0, L.zeros(1), L.ones(1).double()),
    "add: source dim before count": lambda L: L.zeros(3, 4).index_add(1, L.tensor([0, 1]), L.ones(2)),
    "add: count of a 0-d source": lambda L: L.zeros(()).index_add(0, L.tensor([], dtype=L.long), L.ones(())),
    "add: count before shapes": lambda L: L.zeros(3, 4).index_add(0, L.tensor([0, 1]), L.ones(3, 2)),
    "add: 0-d against 1-d": lambda L: L.zeros(1).index_add(0, L.tensor([0]), L.ones(())),
    "add: scatter_add's range error": lambda L: L.zeros(3, 4).index_add(1, L.tensor([0, 9]), L.ones(3, 2)),
    "add: add_'s range error (int32)": lambda L: L.zeros(3, 4).index_add(
        0, L.tensor([9], dtype=L.int), L.ones(1, 4)
    ),
    "add: add_'s range error (middle)": lambda L: L.zeros(2, 3, 4).index_add(
        1, L.tensor([9]), L.ones(2, 1, 4)
    ),
    "add: 1-d range error": lambda L: L.zeros(3).index_add(0, L.tensor([-1]), L.ones(1)),
    "add: empty self not checked": lambda L: L.zeros(3, 0).index_add(0, L.tensor([9]), L.ones(1, 0), alpha=2),
    "add: alpha overflow": lambda L: (
        L.zeros(2, 4).half().index_add(0, L.tensor([1]), L.ones(1, 4).half(), alpha=1e30)
    ),
    "add: alpha overflow 1-d": lambda L: (
        L.zeros(4).char().index_add(0, L.tensor([], dtype=L.long), L.ones(0).char(), alpha=300)
    ),
    "add: alpha truncated": lambda L: (
        L.ones(2, 3).long().index_add(0, L.tensor([1, 1]), L.ones(2, 3).long(), alpha=2.5)
    ),
    "add: alpha wraps uint8": lambda L: (
        L.zeros(4).byte().index_add(0, L.tensor([1, 1]), L.full((2,), 100).byte(), alpha=-1)
    ),
    "add: bool": lambda L: L.zeros(2, 2).bool().index_add(0, L.tensor([1, 1]), L.ones(2, 2).bool(), alpha=2),
    "add: float16 1-d rounding": lambda L: (
        L.zeros(4).half().index_add(0, L.tensor([1, 1]), L.full((2,), 0.1).half(), alpha=3)
    ),
    "add: complex alpha": lambda L: L.zeros(3).index_add(0, L.tensor([1]), L.ones(1), alpha=1j),
    "add: alpha None": lambda L: L.zeros(3).index_add(0, L.tensor([1]), L.ones(1), alpha=None),
    "add_: source list": lambda L: L.zeros(3).index_add_(0, L.tensor([1]), [1.0]),
    "add_: leaf": lambda L: L.zeros(3, requires_grad=True).index_add_(0, L.tensor([1]), L.ones(1)),
    "copy: index dims": lambda L: L.zeros(3, 4).index_copy(0, L.zeros(1, 2), L.ones(2, 4)),
    "copy: dims before index dtype": lambda L: L.zeros(3, 4).index_copy(0, L.zeros(2), L.ones(2, 4, 1)),
    "copy: int32 refused": lambda L: L.zeros(3, 4).index_copy(0, L.tensor([0], dtype=L.int), L.ones(1, 4)),
    "copy: slice shapes": lambda L: L.zeros(3, 4, 5).index_copy(1, L.tensor([0, 1]), L.ones(3, 2, 4)),
    "copy: 0-d source, 1-d self": lambda L: L.zeros(3).index_copy(0, L.tensor([1]), L.tensor(5.0)),
    "copy: 0-d source, two indices": lambda L: L.zeros(3).index_copy(0, L.tensor([1, 2]), L.tensor(5.0)),
    "copy: range": lambda L: L.zeros(3, 4).index_copy(1, L.tensor([0, -1]), L.ones(3, 2)),
    "copy: empty self": lambda L: L.zeros(3, 0).index_copy(0, L.tensor([9]), L.ones(1, 0)),
    "copy_: source list": lambda L: L.zeros(3).index_copy_(0, L.tensor([1]), [1.0]),
    # gradients and the second-order graph (ExpandBackward0, MulBackward1 for alpha, IndexFill)
    "add graph": lambda L: _graph(L, "index_add", (3, 2), [2, 2], (2, 2), alpha=-2),
    "add graph 0-d": lambda L: _graph(L, "index_add", (), [0], (), alpha=3),
    "copy graph": lambda L: _graph(L, "index_copy", (3, 2), [2, 0], (2, 2)),
    "copy graph 0-d source": lambda L: _graph(L, "index_copy", (3,), [1], ()),
}


@pytest.mark.parametrize("name", list(INDEX_CASES))
def test_index_add_copy(name: str) -> None:
    same(INDEX_CASES[name])


def test_index_select_double_backward() -> None:
    """index_select's backward is an index_add into zeros, whose source gradient expands."""

    def case(L: Any) -> Any:
        x = L.ones(3, 2, requires_grad=True)
        g = L.autograd.grad(
            x.index_select(0, L.tensor([1, 1])), x, L.ones(2, 2, requires_grad=True), create_graph=True
        )[0]
        (gg,) = L.autograd.grad(g, g.grad_fn.next_functions[1][0].variable, L.ones(3, 2), create_graph=True)
        return g, gg

    same(case)


def _reduce_backward(L: Any, inplace: bool) -> Any:
    x = L.ones(3, 4, requires_grad=True)
    t, index = x * 2, L.zeros(2, 4, dtype=L.int64)
    t = t.scatter_(0, index, 2.5, reduce="add") if inplace else t.scatter(0, index, 2.5, reduce="add")
    t.sum().backward()


# found by a fuzz campaign: the NotImplemented node's error names the op called; an empty index
# converts no alpha (torch adds nothing, so 1e30 in float16 does not overflow)
CAMPAIGN_CASES = {
    "scatter_ reduce backward": lambda L: _reduce_backward(L, True),
    "scatter reduce backward": lambda L: _reduce_backward(L, False),
    "index_add_ empty index huge alpha": lambda L: L.ones(3, 4, dtype=L.float16).index_add_(
        -1, L.zeros(0, dtype=L.int64), L.ones(3, 0, dtype=L.float16), alpha=1e30),
    "index_add huge alpha": lambda L: L.index_add(
        L.ones(3, 4, dtype=L.float16), -1, L.zeros(1, dtype=L.int64), L.ones(3, 1, dtype=L.float16),
        alpha=1e30),
}


@pytest.mark.parametrize("name", list(CAMPAIGN_CASES))
def test_cases_a_campaign_found(name: str) -> None:
    same(CAMPAIGN_CASES[name])
