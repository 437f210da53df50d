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
    "unflatten_dim_out_of_range": lambda m, x: x.unflatten(5, (2, 1)),  # an IndexError, unwrapped
    "unflatten_0d_dim_out_of_range": lambda m, x: m.tensor(1.0).unflatten(1, (1,)),
    "unflatten_two_inferred": lambda m, x: x.unflatten(1, (-1, -1)),
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


def _pieces(out: Any) -> Any:
    """A tuple of tensors as its tensors' shapes, strides, values, grad_fn names and view flags."""
    return [
        (tuple(t.shape), t.stride(), t.tolist(), type(t.grad_fn).__name__, t._base is not None) for t in out
    ]


# diag, diag_embed, rot90, broadcast_tensors, the stacks and the splits
MORE_CASES: dict[str, Callable[[Any, Any], Any]] = {
    "diag_vector": lambda m, x: m.diag(x[0, 0], -2),
    "diag_matrix_copy": lambda m, x: x[1].diag(1),
    "diag_matrix_grad": lambda m, x: _grad(m, x, lambda t: m.diag(t[0], -1)),
    "diag_vector_grad": lambda m, x: _grad(m, x, lambda t: m.diag(t[1, 2], 2)),
    "diag_3d": lambda m, x: m.diag(x),
    "diag_empty_offset": lambda m, x: m.diag(x[0, 0, :0], 2),
    "diag_embed": lambda m, x: m.diag_embed(x, -1, 0, 3),
    "diag_embed_grad": lambda m, x: _grad(m, x, lambda t: t.diag_embed(1, -1, 1)),
    "diag_embed_same_dims": lambda m, x: m.diag_embed(x, 0, 1, -3),
    "rot90_layouts": lambda m, x: [m.rot90(x.transpose(0, 2), k, (0, 1)).stride() for k in range(-4, 5)],
    "rot90_grad": lambda m, x: _grad(m, x, lambda t: m.rot90(t, 3, (2, 0))),
    "rot90_same_dims": lambda m, x: m.rot90(x, 1, (0, -3)),
    "rot90_dim_out_of_range": lambda m, x: m.rot90(x, 1, (0, 3)),
    "rot90_one_dim": lambda m, x: x.rot90(1, [0]),
    "broadcast_tensors": lambda m, x: _pieces(m.broadcast_tensors(x[:, :1], x[0], m.ones(4))),
    "broadcast_tensors_same_object": lambda m, x: m.broadcast_tensors(x, x[0])[0] is x,
    "broadcast_tensors_mismatch": lambda m, x: m.broadcast_tensors(x, m.ones(3)),
    "hstack_grad": lambda m, x: _grad(m, x, lambda t: m.hstack([t, t[:, :1] * 2])),
    "vstack_promotes": lambda m, x: m.vstack([x[0, 0], m.arange(4)]),
    "row_stack_empty": lambda m, x: m.row_stack([]),
    "dstack_scalars": lambda m, x: m.dstack([x[0, 0, 0], x[1, 1, 1]]),
    "column_stack_grad": lambda m, x: _grad(
        m, x, lambda t: m.column_stack([t[0, 0], t[1, :, :2], t[0, 1, 0]])
    ),
    "column_stack_3d": lambda m, x: m.column_stack([x, x[0, 0]]),
    "tensor_split_sections": lambda m, x: _pieces(x.tensor_split(3, -1)),
    "tensor_split_indices": lambda m, x: _pieces(m.tensor_split(x, [-1, 1, 5], dim=2)),
    "tensor_split_tensor": lambda m, x: _pieces(m.tensor_split(x, m.tensor([2]), 1)),
    "tensor_split_sections_tensor": lambda m, x: _pieces(m.tensor_split(x, m.tensor(2))),
    "tensor_split_float_tensor": lambda m, x: m.tensor_split(x, m.tensor([1.0])),
    "tensor_split_zero": lambda m, x: m.tensor_split(x, 0),
    "tensor_split_none": lambda m, x: m.tensor_split(None, 2),
    "tensor_split_grad": lambda m, x: _grad(m, x, lambda t: m.cat(t.tensor_split(3, 2)[::-1], 2)),
    "hsplit": lambda m, x: _pieces(m.hsplit(x, 3)),
    "hsplit_not_divisible": lambda m, x: m.hsplit(x, 2),
    "vsplit_indices": lambda m, x: _pieces(x.vsplit([1])),
    "dsplit_2d": lambda m, x: m.dsplit(x[0], 2),
    "split_view_version": lambda m, x: _view(m, x, lambda t: m.dsplit(t, 2)[1]),
}


@pytest.mark.parametrize("name", list(MORE_CASES))
def test_more_shape_ops_match_torch(name: str) -> None:
    case = MORE_CASES[name]
    assert observe(impl, case) == observe(torch, case)


# found by a fuzz campaign: cat skips an empty 1-d tensor among tensors of other dims (torch's
# legacy rule), hstack of a (2, 0) and a (0,) included; its gradient is an empty (0,)
LEGACY_EMPTY_CASES = {
    "cat_dim1": lambda m, x: _grad(m, x, lambda t: m.cat([t[0], m.ones(0, dtype=t.dtype), t[1]], 1)),
    "cat_first": lambda m, x: m.cat([m.ones(0, requires_grad=True), x[0]], -1),
    "cat_only_empties": lambda m, x: m.cat([m.ones(0), m.ones(0)]),
    "hstack_empty": lambda m, x: m.hstack([x[:, :, :0].sum(-1)[:, :0], m.ones(0)]),
    "cat_empty_grad": lambda m, x: _empty_grad(m),
}


def _empty_grad(m: Any) -> Any:
    a, b = m.ones(0, requires_grad=True), m.ones(2, 3, requires_grad=True)
    m.cat([a, b], 1).sum().backward()
    return tuple(a.grad.shape), tuple(b.grad.shape)


@pytest.mark.parametrize("name", list(LEGACY_EMPTY_CASES))
def test_cat_skips_legacy_empty_tensors(name: str) -> None:
    case = LEGACY_EMPTY_CASES[name]
    assert observe(impl, case) == observe(torch, case)


def _pieces(m: Any, case: Callable[[Any], Any]) -> Any:
    """Each piece's shape and grad_fn name, or the error (type and message)."""
    try:
        return [(tuple(t.shape), type(t.grad_fn).__name__) for t in case(m)]
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return f"{type(e).__name__}: {e}"


SPLITS: dict[str, Callable[[Any], Any]] = {
    "iterate": lambda m: list(m.ones(2, 3, requires_grad=True)),
    "iterate 0-d": lambda m: list(m.tensor(1.0)),
    "split size": lambda m: m.ones(2, 5, requires_grad=True).split(2, 1),
    "split -1": lambda m: m.ones(2, 3).split(-1, 1),
    "split 0": lambda m: m.ones(2, 3).split(0, 1),
    "split 0 of empty": lambda m: m.ones(2, 0, requires_grad=True).split(0, 1),
    "split 2 of empty": lambda m: m.ones(2, 0, requires_grad=True).split(2, 1),
    "split sizes": lambda m: m.split(m.ones(2, 3, requires_grad=True), [1, 2], dim=-1),
    "split negative sizes": lambda m: m.ones(2, 3).split([-1, 4], 1),
    "split sizes not summing": lambda m: m.ones(2, 3).split([1, 1], -1),
    "split float": lambda m: m.ones(2, 3).split(1.5),
    "split 0-d": lambda m: m.tensor(1.0).split(1),
    "split -1 dim out of range": lambda m: m.ones(2, 3).split(-1, 5),
    "chunk": lambda m: m.ones(6, requires_grad=True).chunk(4),
    "chunk 0": lambda m: m.ones(2, 3).chunk(0, 5),
    "chunk of empty": lambda m: m.ones(2, 0, requires_grad=True).chunk(2, 1),
    "chunk 0-d": lambda m: m.tensor(1.0).chunk(1),
    "unbind": lambda m: m.ones(2, 3, requires_grad=True).unbind(-1),
    "unbind 0-d": lambda m: m.tensor(1.0).unbind(-1),
    "unbind 0-d out of range": lambda m: m.tensor(1.0).unbind(1),
}


@pytest.mark.parametrize("name", SPLITS)
def test_split_chunk_unbind_and_iteration_match_torch(name: str) -> None:
    """Iteration is unbind(0) (UnbindBackward0 rows); split/chunk/unbind check in torch's order."""
    assert _pieces(impl, SPLITS[name]) == _pieces(torch, SPLITS[name])


EMPTY_CASES: dict[str, Callable[[Any], Any]] = {
    "flatten of an empty dim": lambda m: m.ones(2, 2, 0, requires_grad=True).flatten(0, 1),
    "repeat_interleave of an empty tensor": lambda m: m.repeat_interleave(m.ones(2, 0), 2, dim=0),
    "bincount of nothing, weights unchecked": lambda m: m.bincount(m.tensor([], dtype=m.int64), m.ones(2, 2)),
    "bincount of nothing, minlength": lambda m: m.bincount(m.tensor([], dtype=m.int64), m.ones(1), 3),
    "bincount, weights too long": lambda m: m.bincount(m.tensor([1]), m.ones(2)),
}


@pytest.mark.parametrize("name", EMPTY_CASES)
def test_empty_inputs_match_torch(name: str) -> None:
    """Empty inputs where torch's order of checks or its sizes differ from the general case."""

    def seen(m: Any) -> Any:
        try:
            t = EMPTY_CASES[name](m)
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return f"{type(e).__name__}: {e}"
        return tuple(t.shape), str(t.dtype), t.tolist(), t.grad_fn and type(t.grad_fn).__name__

    assert seen(impl) == seen(torch)
