"""Corners of the lazy modules that the generated programs (MOD-014) do not reach, each compared with
torch: uninitialized parameters' errors and printed forms, optimisers built on them, materialisation
by load_state_dict, input checks, deepcopy."""

from __future__ import annotations

import copy

import pytest
import torch

import impl
from tests.impl.test_impl_nn_dropout import assert_like_torch


def _uninitialized(lib):
    return lib.nn.LazyLinear(3).weight


@pytest.mark.parametrize("call", [
    lambda t: repr(_uninitialized(t)),
    lambda t: (type(_uninitialized(t)).__name__, isinstance(_uninitialized(t), t.nn.Parameter)),
    lambda t: _uninitialized(t).shape,
    lambda t: _uninitialized(t).numel(),
    lambda t: _uninitialized(t).size(),
    lambda t: _uninitialized(t) + 1,
    lambda t: _uninitialized(t) * 2,
    lambda t: (_uninitialized(t).requires_grad, str(_uninitialized(t).dtype)),
    lambda t: repr(t.nn.parameter.UninitializedBuffer()),
    lambda t: repr(t.nn.parameter.UninitializedParameter(requires_grad=False)),
    lambda t: t.nn.parameter.is_lazy(_uninitialized(t)),
    lambda t: repr(t.optim.SGD(t.nn.LazyLinear(2).parameters(), lr=0.1)),
    lambda t: {k: repr(v) for k, v in t.nn.LazyLinear(2).state_dict().items()},
    lambda t: repr(t.nn.Sequential(t.nn.LazyLinear(3),
                                   t.nn.LazyConv2d(4, 3, padding=1, groups=2, bias=False))),
    lambda t: t.nn.LazyLinear(3)(t.tensor(1.0)),
    lambda t: t.nn.LazyConv2d(2, 2)(t.ones(4, 4)),
    lambda t: t.nn.LazyConv2d(2, 2, groups=2)(t.ones(3, 4, 4)),
    lambda t: t.nn.LazyLinear(3, dtype=t.float64)(t.ones(2, dtype=t.float64)),
    lambda t: [type(m).__name__ for m in copy.deepcopy(t.nn.Sequential(t.nn.LazyLinear(2))).modules()],
], ids=lambda f: "")
def test_uninitialized_like_torch(call) -> None:
    assert_like_torch(call)


def test_first_call_materializes_on_the_seeded_stream_like_torch() -> None:
    def run(lib):
        lib.manual_seed(4)
        linear, conv = lib.nn.LazyLinear(3), lib.nn.LazyConv2d(4, 3, padding="same", groups=2)
        weight = linear.weight
        out = [repr(linear), repr(conv), linear(lib.ones(2, 5)).tolist(), conv(lib.ones(1, 2, 4, 4)).tolist()]
        out += [repr(linear), repr(conv), type(weight).__name__, linear.weight is weight]
        out.append(linear.bias.tolist())
        out += [hasattr(linear, "_initialize_hook"), lib.rand(2).tolist()]
        try:
            linear(lib.ones(2, 4))
        except RuntimeError as e:
            out.append(str(e).split("\n")[0])
        return out

    assert run(impl) == run(torch)


def test_load_state_dict_materializes_like_torch() -> None:
    def run(lib):
        m = lib.nn.LazyLinear(2)
        result = m.load_state_dict({"weight": lib.ones(2, 3), "bias": lib.zeros(2)})
        loaded = [str(result), type(m).__name__, repr(m), type(m.weight).__name__]
        return [*loaded, m(lib.ones(3)).tolist(), repr(m)]

    assert run(impl) == run(torch)
