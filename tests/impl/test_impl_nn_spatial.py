"""fold/unfold, affine_grid and grid_sample against torch: the errors of many refused calls in one
loop, and grid_sample's known divergences (strict xfails)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import impl


def _outcome(lib: Any, call: Any) -> Any:
    try:
        out = call(lib)
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return type(e).__name__, str(e)
    return [t if t is None else (tuple(t.shape), str(t.dtype).split(".")[-1], np.asarray(t.detach().tolist()))
            for t in (out if isinstance(out, tuple) else (out,))]


def _same(call: Any) -> None:
    a, b = _outcome(impl, call), _outcome(torch, call)
    if isinstance(b, tuple):
        assert a == b
    else:
        assert [x[:2] for x in a] == [x[:2] for x in b]
        for x, y in zip(a, b, strict=True):  # (float32 sums cancel: a tolerance of the largest value)
            np.testing.assert_allclose(x[2], y[2], rtol=1e-5, atol=1e-6 * (1 + np.abs(y[2]).max(initial=0)))


REFUSED = [
    lambda t: t.nn.functional.unfold(t.ones(5, 4), 2),
    lambda t: t.nn.functional.unfold(t.ones(1, 2, 3, 5, 4), 2),
    lambda t: t.nn.functional.unfold(t.ones(2, 3, 5, 4), 6),
    lambda t: t.nn.functional.unfold(t.ones(2, 3, 5, 4), 0),
    lambda t: t.nn.functional.unfold(t.ones(2, 3, 5, 4), 2, padding=-1),
    lambda t: t.nn.functional.unfold(t.ones(2, 3, 5, 4), 2, dilation=0, stride=0),
    lambda t: t.nn.functional.unfold(t.ones(2, 3, 5, 4), (2,)),
    lambda t: t.nn.functional.unfold(t.ones(2, 3, 5, 4), 2.5),
    lambda t: t.nn.functional.unfold(t.ones(2, 3, 5, 4, dtype=t.int64), 2),
    lambda t: t.nn.functional.unfold(t.ones(2, 0, 5, 4), 2),
    lambda t: t.nn.functional.fold(t.ones(2, 12, 3), (4, 5), 2),
    lambda t: t.nn.functional.fold(t.ones(2, 11, 12), (4, 5), 2),
    lambda t: t.nn.functional.fold(t.ones(2, 3, 12, 5), (4, 5), 2),
    lambda t: t.nn.functional.fold(t.ones(12), (4, 5), 2),
    lambda t: t.nn.functional.fold(t.ones(2, 12, 12), (4, 5, 6), 2),
    lambda t: t.nn.functional.fold(t.ones(1, 4, 9), (0, 3), 2, padding=1),
    lambda t: t.nn.functional.fold(t.ones(1, 4, 4), (3, 3), 2, stride=0),
    lambda t: t.nn.functional.fold(t.ones(1, 4, 4, dtype=t.int32), 3, 2),
    lambda t: t.nn.functional.affine_grid(t.ones(2, 2, 3, dtype=t.int64), (2, 3, 4, 5), align_corners=False),
    lambda t: t.nn.functional.affine_grid(t.ones(2, 2, 3), (2, 3, 4, 5, 6), align_corners=False),
    lambda t: t.nn.functional.affine_grid(t.ones(2, 2, 3), (2, 3, 4), align_corners=False),
    lambda t: t.nn.functional.affine_grid(t.ones(2, 2, 3), (2, 3, 0, 5), align_corners=False),
    lambda t: t.nn.functional.affine_grid(t.ones(2, 2, 3), (3, 3, 4, 5), align_corners=False),
    lambda t: t.nn.functional.grid_sample(t.ones(2, 3, 4, 5), t.zeros(2, 4, 5, 2), mode="area"),
    lambda t: t.nn.functional.grid_sample(t.ones(2, 3, 4, 5), t.zeros(2, 4, 5, 2), padding_mode="circular"),
    lambda t: t.nn.functional.grid_sample(t.ones(1, 1, 2, 2), t.zeros(1, 1, 1, 2).double(),
                                          "nearest", "zeros", True),
    lambda t: t.nn.functional.grid_sample(t.ones(3, 4, 5), t.zeros(2, 4, 5, 2), align_corners=True),
    lambda t: t.nn.functional.grid_sample(t.ones(2, 3, 4, 5), t.zeros(2, 4, 5, 1), align_corners=True),
    lambda t: t.nn.functional.grid_sample(t.ones(2, 3, 0, 5), t.zeros(2, 4, 5, 2), align_corners=True),
    lambda t: t.nn.functional.grid_sample(t.ones(2, 3, 4, 5), t.zeros(2, 1, 1, 1, 2), align_corners=True),
    lambda t: t.nn.functional.grid_sample(t.ones(3, 4, 5), t.zeros(3, 4, 1), align_corners=True),
    lambda t: t.nn.functional.grid_sample(t.ones(2, 3, 4, 5, dtype=t.int64),
                                          t.zeros(2, 4, 5, 2, dtype=t.int64), align_corners=True),
    lambda t: t.nn.functional.grid_sample(t.ones(2, 3, 4, 5, 1), t.zeros(2, 1, 1, 1, 3), mode="bicubic",
                                          align_corners=True),
]


def test_refused_calls_raise_like_torch() -> None:
    for call in REFUSED:
        _same(call)


def _sampled_twice(t: Any, mode: str, padding: str, create_graph: bool = False) -> tuple:
    x = t.tensor(np.linspace(-1, 2, 24, dtype=np.float32).reshape(1, 2, 3, 4), requires_grad=True)
    grid = t.tensor(np.linspace(-1.2, 1.1, 12, dtype=np.float32).reshape(1, 2, 3, 2), requires_grad=True)
    y = t.nn.functional.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=False)
    gx, gg = t.autograd.grad((y * y).sum(), (x, grid), create_graph=True)
    return t.autograd.grad((gx * gx).sum() + (gg * gg).sum(), (x, grid), create_graph=create_graph)


def test_grid_sample_double_backward_like_torch() -> None:
    for mode in ("bilinear", "nearest"):
        for padding in ("zeros", "border", "reflection"):
            _same(lambda t, m=mode, p=padding: _sampled_twice(t, m, p))


@pytest.mark.xfail(strict=True, reason=(
    "MOD-020 known divergence: grid_sample's second-order gradients come from a NotImplemented node "
    "in impl (a third derivative raises); torch's are a differentiable composite (AddBackward0 ...; "
    "impl/nn/_grid_sample.py)"))
def test_grid_sample_second_order_graph() -> None:
    def names(t: Any) -> list[str]:
        seen, nodes = [], [g.grad_fn for g in _sampled_twice(t, "bilinear", "zeros", True)]
        while nodes:
            node = nodes.pop(0)
            seen.append(type(node).__name__)
            nodes += [n for n, _ in node.next_functions if n is not None][: 6 - len(seen) // 4]
        return sorted(seen)

    assert names(impl) == names(torch)


@pytest.mark.xfail(strict=True, reason=(
    "MOD-020 known divergence: grid_sample's mode 'bicubic' raises NotImplementedError in impl "
    "(impl/nn/_grid_sample.py)"))
def test_grid_sample_bicubic() -> None:
    _same(lambda t: t.nn.functional.grid_sample(t.ones(1, 1, 3, 3), t.zeros(1, 2, 2, 2), mode="bicubic",
                                                align_corners=True))
