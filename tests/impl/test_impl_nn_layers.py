"""impl against torch on the activation layers and erf: every dtype (the half types, integers and
bool included), edge values, in-place forms, errors, reprs and second-order graphs. Each check
runs the same code on torch and on impl and compares what it observes."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import impl

DTYPES = ("float16", "bfloat16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool")
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-30, 1e30, -6.5, 6.0, 20.5, -25.0, 0.46875, 4.0, -4.0, 27.0]
NONFINITE = [math.inf, -math.inf, math.nan]


def functions(m: Any) -> dict[str, Callable[[Any], Any]]:
    F = m.nn.functional
    return {
        "erf": m.erf,
        "erfc": lambda t: t.erfc(),
        "erf_": lambda t: t.erf_(),
        "erfc_": lambda t: t.erfc_(),
        "gelu": F.gelu,
        "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
        "silu": F.silu,
        "silu_": lambda t: F.silu(t, inplace=True),
        "mish": F.mish,
        "mish_": lambda t: F.mish(t, inplace=True),
        "elu": lambda t: F.elu(t, 0.5),
        "elu_": lambda t: F.elu_(t, 2.0),
        "softplus": lambda t: F.softplus(t, 0.5, 1.0),
        "hardtanh": lambda t: F.hardtanh(t, -2.0, 0.5),
        "hardtanh_": lambda t: F.hardtanh_(t),
        "relu6": F.relu6,
        "relu6_": lambda t: F.relu6(t, inplace=True),
        "logsigmoid": F.logsigmoid,
        "softsign": F.softsign,
    }


def describe(t: Any) -> tuple:
    """dtype, shape and values (float64, nan and signed zeros kept) of a result."""
    values = t.detach().to(t.__class__.__module__ == "torch" and torch.float64 or impl.float64).tolist()
    return str(t.dtype).split(".")[-1], tuple(t.shape), values


def run(m: Any, name: str, data: Any, dtype: str) -> Any:
    try:
        return describe(functions(m)[name](m.tensor(data, dtype=getattr(m, dtype))))
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return f"{type(e).__name__}: {e}"


def close(expected: Any, got: Any, dtype: str) -> None:
    assert type(expected) is type(got), (expected, got)
    if isinstance(expected, str):
        assert got == expected
        return
    assert got[:2] == expected[:2]
    e, g = np.array(expected[2], dtype=float), np.array(got[2], dtype=float)
    rtol = {"float16": 1e-3, "bfloat16": 1.6e-2, "float64": 1e-7}.get(dtype, 1.3e-6)  # torch.testing's
    np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-7 if dtype == "float64" else 1e-5)
    zeros = (e == 0) & (g == 0)
    assert np.array_equal(np.signbit(e[zeros]), np.signbit(g[zeros])), "signed zeros"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(functions(torch)))
def test_values_dtypes_and_errors(name: str, dtype: str) -> None:
    """Edge values (infinities and NaN where torch's kernels agree with themselves: not for
    hardtanh's and elu's, and gelu's +inf, see oracle.strategies.activation_values), 0-d and empty.
    (torch's float32 gelu differs between its vector and scalar loops by up to 2.4e-7 near -4:
    within torch.testing's atol, which is used.)"""
    finite_only = name.startswith(("gelu", "hardtanh", "relu6", "elu"))
    values = EDGES + ([] if finite_only else NONFINITE)
    if dtype == "bool":
        values = [bool(v) for v in values]
    elif dtype[0] in "ui":
        finite = [max(-100.0, min(100.0, v)) for v in values if not math.isnan(v)]
        values = [int(v) % 100 if dtype == "uint8" else int(v) for v in finite]
    for data in (values, values[3], []):
        close(run(torch, name, data, dtype), run(impl, name, data, dtype), dtype)


def graph(t: Any, depth: int = 6) -> Any:
    """Node names of the graph behind ``t``, nested."""
    if t is None or depth == 0:
        return None
    return type(t).__name__, [graph(n, depth - 1) for n, _ in t.next_functions]


@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("name", [n for n in functions(torch) if n != "softsign"])
def test_gradients_and_second_order_graphs(name: str, dtype: str) -> None:
    """grad_fn, gradient, the graph of the gradient taken with create_graph=True (through a clone
    for in-place forms: torch saves ``original_self`` as a recorded clone) and the second
    derivative."""
    seen = {}
    for m in (torch, impl):
        x = m.tensor([0.5, -1.0, 2.0, -0.0, 0.25, -3.0], dtype=getattr(m, dtype), requires_grad=True)
        y = functions(m)[name](x.clone())
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        (h,) = m.autograd.grad(g.sum(), x, allow_unused=True)
        seen[m] = (graph(y.grad_fn), graph(g.grad_fn), describe(g), None if h is None else describe(h))
    (t_graph, t_graph2, t_g, t_h), (i_graph, i_graph2, i_g, i_h) = seen[torch], seen[impl]
    assert (i_graph, i_graph2) == (t_graph, t_graph2)
    close(t_g, i_g, dtype)
    assert (t_h is None) == (i_h is None)
    if t_h is not None:
        close(t_h, i_h, dtype)


def test_errors_and_reprs() -> None:
    def probe(m: Any) -> list:
        nn, F = m.nn, m.nn.functional
        out: list = [
            repr(nn.Sequential(nn.GELU(), nn.GELU("tanh"), nn.SiLU(True), nn.Mish(), nn.ELU(0.5, True)))
        ]
        out.append(repr(nn.Sequential(nn.Softplus(2.0, 5.0), nn.Hardtanh(-2.0, 3.0, True), nn.ReLU6(True))))
        out.append(repr(nn.Sequential(nn.LogSigmoid(), nn.Softsign(), nn.Hardtanh())))
        calls = [
            lambda: F.gelu(m.ones(2), approximate="foo"),
            lambda: F.gelu(m.ones(2), approximate=None),
            lambda: F.gelu([1.0]),
            lambda: F.hardtanh(m.ones(2), 2.0, 1.0),
            lambda: nn.Hardtanh(1.0, 1.0),
            lambda: F.hardtanh(m.ones(2, dtype=m.uint8)),
            lambda: F.elu(m.ones(2, requires_grad=True), inplace=True),
            lambda: F.silu(m.ones(2, dtype=m.int64), inplace=True),
            lambda: m.ones(2, dtype=m.int64).erf_(),
            lambda: m.erf("a"),
            lambda: m.abs(m.tensor([True])),
            lambda: F.elu(m.ones(2, requires_grad=True).clone(), -0.5, inplace=True).sum().backward(),
        ]
        for call in calls:
            try:
                out.append(repr(call()))
            except Exception as e:  # noqa: BLE001 - the error is what is compared
                out.append(f"{type(e).__name__}: {e}")
        return out

    assert probe(impl) == probe(torch)


def test_erf_accuracy() -> None:
    """Cody's approximation: within a few float64 ulps of the correctly rounded erf/erfc (math's),
    and float32 within an ulp of torch's."""
    xs = np.concatenate([np.linspace(-30, 30, 20001), np.geomspace(1e-300, 1, 200)])
    for name in ("erf", "erfc"):
        got = getattr(impl, name)(impl.tensor(xs)).numpy()
        ref = np.array([getattr(math, name)(v) for v in xs])
        normal = np.abs(ref) > 1e-300
        ulps = np.abs(got - ref)[normal] / np.spacing(np.abs(ref[normal]))
        assert ulps.max() <= 8
        assert np.abs(got - ref)[~normal].max(initial=0) < 1e-307
        x32 = xs.astype(np.float32)
        mine = getattr(impl, name)(impl.tensor(x32)).numpy().view(np.int32).astype(np.int64)
        theirs = getattr(torch, name)(torch.from_numpy(x32)).numpy().view(np.int32)
        assert np.abs(mine - theirs).max() <= 1
