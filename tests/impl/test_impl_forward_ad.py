"""Forward-mode AD on impl against torch 2.13: forward_ad's API (levels, make_dual, unpack_dual and
their errors), the tangents of the ops with a jvp formula (compared value by value with dtype and
shape), in-place ops on duals and on their views, tangents gone after the level, repr, and the
error of an op without a formula."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.helpers.parity import both

X = [[0.5, -1.25, 2.0], [1.5, 0.75, -0.5]]
TX = [[1.0, 0.5, -2.0], [0.25, -1.0, 3.0]]
Y = [[1.0, 2.0, -1.5], [0.5, -0.25, 1.0]]
TY = [[-0.5, 1.0, 0.25], [2.0, 0.5, -1.0]]


def tangent_of(result: Any, fw: Any) -> Any:
    primal, tangent = fw.unpack_dual(result)
    shown = (
        None
        if tangent is None
        else (
            str(tangent.dtype),
            list(tangent.shape),
            np.round(np.array(tangent.detach().tolist(), float), 10).tolist(),
        )
    )
    return list(primal.shape), shown


def run_dual(body: Callable[[Any, Any, Any], Any], dtype: str = "float64") -> Callable[[Any], Any]:
    """``body(lib, d, e)`` on duals d (X, TX) and e (Y, TY) inside a level: the result's tangent."""

    def program(lib: Any) -> Any:
        fw = lib.autograd.forward_ad
        t = lambda data: lib.tensor(data, dtype=getattr(lib, dtype))  # noqa: E731
        with fw.dual_level():
            d, e = fw.make_dual(t(X), t(TX)), fw.make_dual(t(Y), t(TY))
            return tangent_of(body(lib, d, e), fw)

    return program


# each op as an expression of the duals d (2, 3) and e (2, 3), the module (lib) and its functional (F)
OPS: dict[str, str] = {
    "add": "d + e * 2",
    "add_alpha": "lib.add(d, e, alpha=3)",
    "sub": "d - e",
    "rsub": "2.0 - d",
    "mul": "d * e",
    "mul_plain": "d * lib.tensor(Y, dtype=d.dtype)",
    "div": "d / e",
    "pow": "d**3",
    "div_plain": "lib.tensor(Y, dtype=d.dtype) / d",
    "broadcast": "d * e[0]",
    "neg": "-d",
    "pow_frac": "d.abs() ** 1.5",
    "exp": "d.exp()",
    "log": "d.abs().log()",
    "sin": "d.sin()",
    "cos": "d.cos()",
    "tanh": "d.tanh()",
    "sigmoid": "d.sigmoid()",
    "relu": "d.relu()",
    "sqrt": "d.abs().sqrt()",
    "abs": "d.abs()",
    "expm1": "d.expm1()",
    "floor": "d.floor()",
    "sum": "d.sum()",
    "sum_dim": "d.sum(1, keepdim=True)",
    "mean": "d.mean(0)",
    "mm": "d.mm(e.t())",
    "matmul": "d @ e.t()",
    "matmul_batched": "lib.matmul(d.reshape(2, 1, 3), e.t())",
    "mv": "d.mv(e[0])",
    "dot": "d[0].dot(e[1])",
    "view": "d.view(6)",
    "transpose": "d.transpose(0, 1)",
    "permute": "d.permute(1, 0)",
    "squeeze": "d.unsqueeze(1).squeeze(1)",
    "expand": "d[:1].expand(4, 3)",
    "select": "d[1]",
    "slice": "d[:, 1:]",
    "to": "d.float()",
    "linear": "F.linear(d, e, e[0, :2])",
    "linear_nobias": "F.linear(d, e)",
    "softmax": "F.softmax(d, 1)",
    "log_softmax": "F.log_softmax(d, 0)",
    "in_place": "d.clone().mul_(e).add_(d)",
    "plain_gets_tangent": "lib.zeros(2, 3, dtype=d.dtype).add_(d)",
}


def _expression(source: str) -> Callable[[Any, Any, Any], Any]:
    return lambda lib, d, e: eval(source, {"lib": lib, "F": lib.nn.functional, "Y": Y, "d": d, "e": e})


@pytest.mark.parametrize("name", sorted(OPS))
def test_tangent_of_op(name: str) -> None:
    torch_result, impl_result = both(run_dual(_expression(OPS[name])))
    assert impl_result == torch_result


def _in_place_on_view(lib: Any, d: Any, e: Any) -> Any:
    base = d.clone()
    base[1].mul_(3.0)
    return base


def _setitem(lib: Any, d: Any, e: Any) -> Any:
    z = lib.zeros(2, 3, dtype=d.dtype)
    z[0] = d[1]
    return z


IN_PLACE = {"view_of_dual": _in_place_on_view, "setitem": _setitem}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_tangent_of_in_place(name: str) -> None:
    torch_result, impl_result = both(run_dual(IN_PLACE[name]))
    assert impl_result == torch_result


def test_float32_tangents() -> None:
    torch_result, impl_result = both(run_dual(lambda lib, d, e: (d * e).exp().sum(0), "float32"))
    assert impl_result == torch_result


def _api(lib: Any) -> Any:
    fw = lib.autograd.forward_ad
    x = lib.tensor(X, requires_grad=True)
    tx = lib.tensor(TX)
    with fw.dual_level() as level:
        d = fw.make_dual(x, tx)
        u = fw.unpack_dual(d)
        plain = fw.unpack_dual(tx)
        inside = (
            level,
            type(u).__name__,
            u.tangent is tx,
            u.primal._base is x,
            u.primal.grad_fn.name(),
            d._base is x,
            type(d.grad_fn).__name__,
            plain.primal is tx,
            plain.tangent,
        )
        shown = (
            repr(fw.make_dual(lib.tensor(X), tx) * 2),
            repr(fw.make_dual(lib.tensor(1.5), lib.tensor(2.5))),
        )
        strided = fw.unpack_dual(fw.make_dual(lib.ones(2, 3), lib.ones(3, 2).t())).tangent
        out = d.exp()
    after = fw.unpack_dual(out)
    levels = fw.enter_dual_level(), fw.exit_dual_level()
    return inside, shown, strided.stride(), after.primal is out, after.tangent, levels


def test_api() -> None:
    torch_result, impl_result = both(_api)
    assert impl_result == torch_result


def _refused(case: str) -> Callable[[Any], Any]:
    def program(lib: Any) -> Any:
        fw = lib.autograd.forward_ad
        x, tx = lib.ones(3), lib.ones(3)
        if case == "outside":
            return fw.make_dual(x, tx)
        if case == "exit_outside":
            return fw.exit_dual_level()
        with fw.dual_level():
            calls = {
                "nested": lambda: fw.enter_dual_level(),
                "size": lambda: fw.make_dual(x, lib.ones(4)),
                "int_primal": lambda: fw.make_dual(lib.arange(3), tx),
                "int_tangent": lambda: fw.make_dual(x, lib.arange(3)),
                "level": lambda: fw.make_dual(x, tx, level=1),
                "twice": lambda: fw.make_dual(fw.make_dual(x, tx), tx),
                "unpack_level": lambda: fw.unpack_dual(fw.make_dual(x, tx), level=1),
                "unpack_number": lambda: fw.unpack_dual(2.0),
                "no_jvp": lambda: fw.make_dual(x, tx).unique(),
            }
            return calls[case]()

    return program


@pytest.mark.parametrize(
    "case",
    [
        "outside",
        "exit_outside",
        "nested",
        "size",
        "int_primal",
        "int_tangent",
        "level",
        "twice",
        "unpack_level",
        "unpack_number",
    ],
)
def test_refused(case: str) -> None:
    torch_result, impl_result = both(_refused(case), describe=repr)
    assert torch_result[0] is None
    assert impl_result == torch_result


def test_op_without_jvp_formula() -> None:
    torch_result, impl_result = both(_refused("no_jvp"), describe=repr)
    assert impl_result == torch_result
