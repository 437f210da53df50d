"""impl against torch on the shape ops (impl/_ops/shapes.py): method forms, views and their version
counters, gradients under a non-uniform grad_output (the conformance programs backpropagate
from a sum), second-order graphs, and errors. Each case runs the same code on both."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import impl


def names(fn: Any, depth: int = 3) -> Any:
    """grad_fn names of a graph, ``depth`` levels deep."""
    if fn is None or depth == 0:
        return None
    return (type(fn).__name__, tuple(names(n, depth - 1) for n, _ in fn.next_functions))


def observe(m: Any, case: Callable[[Any, Any], Any]) -> Any:
    """What ``case`` returns (tensors as dtype, shape, strides, values, grad_fn name), or its error."""
    x = m.arange(24, dtype=m.float64).reshape(2, 3, 4).requires_grad_()
    try:
        out = case(m, x)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return f"{type(e).__name__}: {str(e).split(chr(10) + 'Exception raised from')[0]}"
    if isinstance(out, m.Tensor):
        fn = out.grad_fn and type(out.grad_fn).__name__
        return (str(out.dtype), tuple(out.shape), out.stride(), out.detach().tolist(), fn)
    return out


def _grad(m: Any, x: Any, f: Callable) -> Any:
    """d(f(x) * w)/dx for a non-uniform w, and the names of its create_graph graph."""
    y = f(x)
    w = m.linspace(-1.0, 2.0, y.numel(), dtype=m.float64).reshape(tuple(y.shape)).requires_grad_()
    (g,) = m.autograd.grad(y, x, w, create_graph=True)
    return np.round(g.detach().numpy(), 10).tolist(), names(g.grad_fn)


def _view(m: Any, x: Any, f: Callable) -> Any:
    """Whether ``f(x.clone())`` is a view: a write into the base shows through, versions shared."""
    base = x.detach().clone()
    y = f(base)
    base.add_(100)
    return y.tolist(), y._version, y._base is not None


CASES: dict[str, Callable[[Any, Any], Any]] = {
    "roll_grad": lambda m, x: _grad(m, x, lambda t: t.roll((1, -2), (0, 2))),
    "roll_flat_grad": lambda m, x: _grad(m, x, lambda t: m.roll(t, 5)),
    "tril_grad": lambda m, x: _grad(m, x, lambda t: t.tril(-1)),
    "triu_grad": lambda m, x: _grad(m, x, lambda t: m.triu(t, 2)),
    "diagonal_grad": lambda m, x: _grad(m, x, lambda t: t.diagonal(1, 2, 0)),
    "repeat_grad": lambda m, x: _grad(m, x, lambda t: t.repeat(2, 1, 3, 1)),
    "repeat_zero_grad": lambda m, x: _grad(m, x, lambda t: t.repeat(1, 0, 1)),
    "tile_grad": lambda m, x: _grad(m, x, lambda t: t.tile(2, 1)),
    "movedim_grad": lambda m, x: _grad(m, x, lambda t: m.movedim(t, (0, 2), (2, 0))),
    "broadcast_grad": lambda m, x: _grad(m, x, lambda t: m.broadcast_to(t[:, :1], (3, 2, 5, 4))),
    "ravel_t_grad": lambda m, x: _grad(m, x, lambda t: t.transpose(0, 2).ravel()),
    "diagonal_view": lambda m, x: _view(m, x, lambda t: t.diagonal(-1, 1, 2)),
    "movedim_view": lambda m, x: _view(m, x, lambda t: t.moveaxis(-1, 0)),
    "swapdims_view": lambda m, x: _view(m, x, lambda t: t.swapdims(0, 1)),
    "broadcast_view": lambda m, x: _view(m, x, lambda t: t.broadcast_to((2, 2, 3, 4))),
    "ravel_view": lambda m, x: _view(m, x, lambda t: t.ravel()),
    "ravel_copy": lambda m, x: _view(m, x, lambda t: t.transpose(0, 1).ravel()),
    "unflatten_view": lambda m, x: _view(m, x, lambda t: t.transpose(0, 2).unflatten(0, (2, -1))),
    "roll_copy": lambda m, x: _view(m, x, lambda t: t.roll(1)),
    "tril_inplace": lambda m, x: (lambda y: (y.tril_(1), y._version, names(y.grad_fn))[1:])(x * 1),
    "triu_inplace_leaf": lambda m, x: x.triu_(),
    "triu_inplace_int": lambda m, x: m.ones(3, 3, dtype=m.int16).triu_(-1),
    "tile_method_spread": lambda m, x: x.tile(2),
    "tile_method_tuple": lambda m, x: x.tile((2, 1, 1, 1)),
    "repeat_list": lambda m, x: x.repeat([1, 2, 1]),
    "repeat_none": lambda m, x: x.repeat(),
    "repeat_negative_empty": lambda m, x: m.ones(0).repeat(-1),
    "tile_function_int": lambda m, x: m.tile(x, 2),
    "roll_no_shifts": lambda m, x: x.roll(()),
    "roll_misaligned": lambda m, x: x.roll((1, 2), 0),
    "roll_0d_dim": lambda m, x: m.tensor(1.0).roll(1, 0),
    "diagonal_same_dims": lambda m, x: x.diagonal(0, 1, -2),
    "diagonal_1d": lambda m, x: m.ones(3).diagonal(),
    "diagonal_empty_offset": lambda m, x: x.diagonal(9).storage_offset(),
    "movedim_0d": lambda m, x: m.tensor(2.0, requires_grad=True).movedim(0, -1),
    "movedim_repeated": lambda m, x: x.movedim((0, -3), (1, 2)),
    "movedim_lengths": lambda m, x: x.movedim((0, 1), [2]),
    "swapaxes_0d": lambda m, x: m.swapaxes(m.tensor(2.0, requires_grad=True) * 1, 0, -1),
    "broadcast_leading_minus_one": lambda m, x: x.broadcast_to((-1, 2, 3, 4)),
    "broadcast_0d_negative": lambda m, x: m.tensor(1.0).broadcast_to((-1,)),
    "broadcast_mismatch_last_first": lambda m, x: m.ones(0).broadcast_to((-1, 3)),
    "broadcast_bool_short": lambda m, x: m.ones(2, 3, dtype=m.bool).broadcast_to((3,)),
    "broadcast_bfloat16_short": lambda m, x: m.ones(2, 3, dtype=m.bfloat16).broadcast_to((3,)),
    "flipud_0d": lambda m, x: m.flipud(m.tensor(1.0)),
    "fliplr_1d": lambda m, x: m.fliplr(m.ones(3)),
    "unflatten_sizes": lambda m, x: x.unflatten(-1, (3, -1)),
    "unflatten_empty": lambda m, x: x.unflatten(1, ()),
    "unflatten_0d": lambda m, x: m.tensor(1.0).unflatten(-1, (1,)),
    "tril_1d": lambda m, x: m.ones(3).tril(),
    "tril_bool": lambda m, x: m.ones(3, 3, dtype=m.bool).tril(-1),
}


@pytest.mark.parametrize("name", list(CASES))
def test_shape_op_matches_torch(name: str) -> None:
    case = CASES[name]
    expected, got = observe(torch, case), observe(impl, case)
    assert got == expected


def test_roll_result_is_contiguous_on_empty_and_strided_inputs() -> None:
    """numpy's roll keeps its input's layout (and empty reshapes get strides of 0); torch's is
    a fresh contiguous tensor."""
    for m in (torch, impl):
        assert m.zeros(0).roll(1).stride() == (1,)
        assert m.zeros(3, 2).t().roll(1, 0).stride() == (3, 1)
    rolled = [m.arange(6).reshape(2, 3).t().roll(1).numpy() for m in (torch, impl)]
    assert np.array_equal(*rolled)
