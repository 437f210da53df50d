"""impl against torch on the corner cases of the binary math ops (impl/_ops/binary_math.py) that
generated programs may miss: signed zeros and infinities of fmod/remainder, integer division by
zero, ties of fmax/fmin, xlogy at x == 0, the Scalar overloads' nodes and the graphs of second
order, the parser's errors and the in-place forms' cast errors."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import impl

INF, NAN = math.inf, math.nan
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.5, 1e30, INF, -INF, NAN]


def names(fn: Any, depth: int = 4) -> str:
    """A node and the nodes below it, by class name, ``depth`` levels down."""
    if fn is None:
        return "None"
    below = ",".join(names(n, depth - 1) for n, _ in fn.next_functions) if depth else ""
    return f"{type(fn).__name__}({below})"


def observed(m: Any, build: Callable[[Any], Any]) -> Any:
    """What ``build(m)`` gives: a tensor's values (with the signs of its zeros), dtype and node,
    or the error it raises."""
    try:
        r = build(m)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return f"{type(e).__name__}: {e}"
    if not isinstance(r, m.Tensor):
        return r
    values = r.detach().to(m.float64).numpy()
    return (values.tolist(), (np.signbit(values) & (values == 0)).tolist(), str(r.dtype), names(r.grad_fn, 1))


def same(build: Callable[[Any], Any], exact: bool = True) -> None:
    """impl observes what torch does; values bit for bit if ``exact``, else within torch.testing's
    tolerances for their dtype (a transcendental's last bits are its library's)."""
    expected, got = observed(torch, build), observed(impl, build)
    if exact or not isinstance(expected, tuple) or not isinstance(got, tuple):
        assert repr(got) == repr(expected)
        return
    assert got[2:] == expected[2:]
    tolerance = {"atol": 1e-3, "rtol": 1.6e-2} if "bfloat16" in expected[2] else {}
    dtype = getattr(torch, expected[2].removeprefix("torch."))
    values = [torch.tensor(v, dtype=torch.float64).to(dtype) for v in (got[0], expected[0])]
    torch.testing.assert_close(*values, equal_nan=True, **tolerance)


def grid(m: Any, dtype: str = "float32") -> tuple[Any, Any]:
    """Every pair of EDGES, as two 1-d tensors."""
    pairs = [(a, b) for a in EDGES for b in EDGES]
    return tuple(m.tensor([p[i] for p in pairs], dtype=getattr(m, dtype)) for i in (0, 1))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize(
    "op",
    ["fmod", "remainder", "atan2", "hypot", "fmax", "fmin", "copysign", "xlogy", "logaddexp", "logaddexp2"],
)
def test_edge_values(op: str, dtype: str) -> None:
    exact = op in ("fmod", "remainder", "fmax", "fmin", "copysign")
    same(lambda m: getattr(m, op)(*grid(m, dtype)), exact)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "int64", "bool"])
@pytest.mark.parametrize(
    "op", ["fmod", "remainder", "atan2", "hypot", "fmax", "copysign", "xlogy", "logaddexp2"]
)
def test_integer_and_bool_operands(op: str, dtype: str) -> None:
    """Integer sign rules, division by zero (torch's RuntimeError), promotion to float, kernels
    without integer or bool versions."""
    for divisor in ([3, -2, 5, 1], [3, -2, 0, 1]):
        same(
            lambda m, d=divisor: getattr(m, op)(
                m.tensor([7, -7, 5, 0], dtype=getattr(m, dtype)), m.tensor(d)
            ),
            exact=False,
        )
    same(
        lambda m: getattr(m, op)(m.tensor([7, -7], dtype=getattr(m, dtype)), m.tensor([2.5, -2.5])),
        exact=False,
    )


@pytest.mark.parametrize("number", [2, -3, 0, 0.5, -0.0, True, 300, 1e5, INF, NAN])
@pytest.mark.parametrize("dtype", ["float16", "float32", "int8", "uint8", "int64", "bool"])
@pytest.mark.parametrize("op", ["fmod", "remainder", "copysign", "xlogy"])
def test_number_overloads(op: str, dtype: str, number: Any) -> None:
    """The Scalar overloads: the number cast to the tensor's dtype as torch casts it (300 wraps in
    int8), torch's result type, the function and the method; remainder and xlogy of a number and
    a tensor too (remainder's without a derivative)."""
    x = [5.0, -5.0, 0.0, 2.5] if dtype.startswith("float") else [5, 0, 1, 3]
    same(lambda m: getattr(m, op)(m.tensor(x, dtype=getattr(m, dtype)), number))
    same(lambda m: getattr(m.tensor(x, dtype=getattr(m, dtype)), op)(number))
    if op in ("remainder", "xlogy"):
        same(lambda m: getattr(m, op)(number, m.tensor(x, dtype=getattr(m, dtype))))


def test_fmax_ties_of_zeros_per_dtype() -> None:
    """torch's CPU fmax/fmin keep the first operand on a tie of signed zeros, bfloat16 the second."""
    for dtype in ("float16", "bfloat16", "float32", "float64"):
        for op in ("fmax", "fmin"):
            same(
                lambda m, d=dtype, op=op: getattr(m, op)(
                    *(m.tensor(v * 5, dtype=getattr(m, d)) for v in ([0.0, -0.0], [-0.0, 0.0]))
                )
            )


GRAPH_CASES = {
    "atan2": lambda m, x, y: m.atan2(x, y),
    "hypot": lambda m, x, y: m.hypot(x, y),
    "fmod": lambda m, x, y: m.fmod(x, y),
    "fmod_number": lambda m, x, y: m.fmod(x, 1.5),
    "remainder": lambda m, x, y: m.remainder(x, y),
    "mod_number": lambda m, x, y: x % -1.5,
    "fmax": lambda m, x, y: m.fmax(x, y),
    "fmin": lambda m, x, y: m.fmin(x, y),
    "copysign": lambda m, x, y: m.copysign(x, y),
    "copysign_number": lambda m, x, y: m.copysign(x, -0.0),
    "xlogy": lambda m, x, y: m.xlogy(x, y),
    "xlogy_number_self": lambda m, x, y: m.xlogy(2.0, y),
    "xlogy_number_other": lambda m, x, y: m.xlogy(x, -2.0),
    "logaddexp": lambda m, x, y: m.logaddexp(x, y),
    "logaddexp2": lambda m, x, y: m.logaddexp2(x, y),
}


@pytest.mark.parametrize("case", GRAPH_CASES)
def test_gradients_and_second_order_graphs(case: str) -> None:
    """Gradients at ties, zeros and nans (fmax's tie goes to self, xlogy's x == 0 and y <= 0 gives
    0), and the graphs of the gradients made with create_graph=True, with a grad_output that
    requires grad (so the nodes on grad's side show too)."""

    def build(m: Any) -> Any:
        x = m.tensor([1.5, -2.0, 0.0, 0.0, NAN, 3.0], dtype=m.float64, requires_grad=True)
        y = m.tensor([0.5, 3.0, 0.0, -1.0, 1.0, NAN], dtype=m.float64, requires_grad=True)
        out = GRAPH_CASES[case](m, x, y)
        v = m.ones(out.shape, dtype=m.float64, requires_grad=True)
        grads = m.autograd.grad(out, [x, y], v, create_graph=True, allow_unused=True)
        return [None if g is None else (g.detach().numpy().tolist(), names(g.grad_fn, 5)) for g in grads]

    same(build)


def test_backward_of_number_remainder_is_not_implemented() -> None:
    def build(m: Any) -> Any:
        x = m.tensor([1.5, -2.0], requires_grad=True)
        m.remainder(2.0, x).sum().backward()

    same(build)


@pytest.mark.parametrize("grads", [(False, True), (True, False), (True, True)])
@pytest.mark.parametrize(
    "op",
    [
        lambda m, a, b: m.heaviside(a, b),
        lambda m, a, b: a.heaviside(b),
        lambda m, a, b: m.floor_divide(a, b),
        lambda m, a, b: m.scatter(a, 0, m.tensor([1, 0]), b, reduce="multiply"),
        lambda m, a, b: m.scatter(a, 0, m.tensor([1, 0]), b, reduce="add"),
    ],
)
def test_a_node_without_derivative_links_only_inputs_requiring_grad(op: Callable, grads: tuple) -> None:
    """torch's NotImplemented node has an edge for each input that requires grad, none for the
    others (a MulBackward0 has one per input, None where it leads nowhere); its backward raises."""

    def build(m: Any) -> Any:
        a, b = (m.tensor([1.0, -2.0], dtype=m.float16, requires_grad=g) for g in grads)
        y = op(m, a, b)
        edges = [(None if fn is None else type(fn).__name__, nr) for fn, nr in y.grad_fn.next_functions]
        try:
            y.sum().backward()
        except RuntimeError as e:
            return type(y.grad_fn).__name__, edges, str(e)
        return type(y.grad_fn).__name__, edges, [t.grad for t in (a, b)]

    same(build)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.atan2(x, 2.0),
        lambda m, x: m.arctan2(1.0, x),
        lambda m, x: x.hypot(2),
        lambda m, x: m.fmax(x, None),
        lambda m, x: m.fmod(2.0, x),
        lambda m, x: m.remainder(x, "a"),
        lambda m, x: m.xlogy(None, x),
        lambda m, x: m.copysign(x, [1.0]),
        lambda m, x: x.fmod(None),
        lambda m, x: x.logaddexp(1.0),
        lambda m, x: x.atan2_(1.0),
        lambda m, x: x % None,
        lambda m, x: m.hypot(x, m.ones(3)),
    ],
)
def test_rejected_arguments(call: Callable) -> None:
    same(lambda m: call(m, m.tensor([1.0, 2.0])))


@pytest.mark.parametrize("op", ["atan2_", "hypot_", "fmod_", "remainder_", "copysign_", "xlogy_", "__imod__"])
@pytest.mark.parametrize("other", [2, 2.5, "float", "int", "leaf"])
def test_inplace_forms(op: str, other: Any) -> None:
    """In place: torch's result-type cast check (an integer tensor cannot take a float result), a
    leaf requiring grad refused, and the values and node of a non-leaf's update."""

    def operand(m: Any) -> Any:
        return {"float": m.tensor([2.0, -3.0]), "int": m.tensor([2, -3]), "leaf": m.tensor([2.0, 3.0])}.get(
            other, other
        )

    same(lambda m: getattr(m.tensor([5, -7]), op)(operand(m)))
    same(lambda m: getattr(m.tensor([5.0, -7.0]).clone(), op)(operand(m)))
    if other == "leaf":
        same(lambda m: getattr(m.tensor([5.0, -7.0], requires_grad=True), op)(operand(m)))
        same(lambda m: getattr(m.tensor([5.0, -7.0], requires_grad=True) * 1, op)(operand(m)))


def test_fused_multiply_add_keeps_infinities() -> None:
    """float64 add(alpha=) (an emulated fused multiply-add) of an infinity is that infinity, not nan."""
    same(
        lambda m: m.tensor([INF, -INF, 1.0], dtype=m.float64).add(
            m.tensor([0.0, 1.0, 2.0], dtype=m.float64), alpha=1.4
        )
    )


def test_negation_of_bool_refused() -> None:
    same(lambda m: -m.tensor([True, False]))


# -- lerp, addcmul, addcdiv, float_power, heaviside; the order of the in-place checks ------------
@pytest.mark.parametrize(
    "build",
    [
        lambda m: m.tensor([1, 2, 3]).div_(m.ones(2)),  # shapes that do not broadcast: before the cast check
        lambda m: m.tensor([1, 2, 3]).add_(m.ones(2)),
        lambda m: m.tensor([1, 2, 3]).atan2_(m.ones(2, 3)),  # output shape: before the cast check
        lambda m: m.tensor([1, 2, 3]).addcmul_(m.ones(2, 1), m.ones(3)),
        lambda m: m.tensor([1]).expand(3).div_(m.ones(2, 3)),  # overlap: before the shapes
    ],
)
def test_inplace_checks_in_torchs_order(build: Callable[[Any], Any]) -> None:
    same(build)


@pytest.mark.parametrize("weight", [0.3, 1.0, 2.0, True, -1.5, NAN])
def test_lerp_signed_zeros_and_weights(weight: Any) -> None:
    """lerp's large-weight branch is end - (end - start) * (1 - weight): lerp(0.5, -0.0, 1) is 0.0."""
    start, end = [0.5, -1.0, 0.0, -0.0, 0.0, -0.0, INF], [-0.0, -0.0, -0.0, 0.0, 0.0, -0.0, 1.0]
    for dtype in ("float16", "bfloat16", "float32", "float64"):
        same(
            lambda m, d=dtype: m.lerp(
                m.tensor(start, dtype=getattr(m, d)), m.tensor(end, dtype=getattr(m, d)), weight
            )
        )
        same(
            lambda m, d=dtype: m.tensor(start, dtype=getattr(m, d)).lerp(
                m.tensor(end, dtype=getattr(m, d)), m.tensor(weight, dtype=getattr(m, d))
            )
        )


@pytest.mark.parametrize(
    "build",
    [
        lambda m: m.lerp(
            m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64), m.tensor(0.5)
        ),  # 0-d weight promotes
        lambda m: m.lerp(m.ones(2), m.ones(2), m.ones(2, dtype=m.float64)),
        lambda m: m.lerp(m.ones(2), m.ones(2, dtype=m.float64), 0.5),
        lambda m: m.lerp(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64), 0.5),
        lambda m: m.lerp(m.ones(2), m.ones(2), 1e300),
        lambda m: m.lerp(1, 2, 3),
        lambda m: m.addcmul(
            m.tensor([1, 2], dtype=m.uint8),
            m.tensor([1, 2], dtype=m.uint8),
            m.tensor([1, 2], dtype=m.uint8),
            value=-1,
        ),
        lambda m: m.addcmul(
            m.tensor([1, 2], dtype=m.uint8),
            m.tensor([1, 2], dtype=m.uint8),
            m.tensor([1, 2], dtype=m.uint8),
            value=300,
        ),
        lambda m: m.addcmul(
            m.ones(2, dtype=m.float16), m.ones(2, dtype=m.float16), m.ones(2, dtype=m.float16), value=1e10
        ),
        lambda m: m.addcmul(
            m.tensor([-0.0, INF], dtype=m.float64),
            m.tensor([-0.0, -4.0], dtype=m.float64),
            m.tensor([1.0, 1e30], dtype=m.float64),
            value=1e300,
        ),
        lambda m: m.addcmul(m.ones(2, dtype=m.bool), m.ones(2, dtype=m.bool), m.ones(2, dtype=m.bool)),
        lambda m: m.addcmul(m.ones(1), 1, m.ones(1)),
        lambda m: m.ones(1).addcmul(m.ones(1), 2),
        lambda m: m.addcdiv(m.ones(2), m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
        lambda m: m.addcdiv(m.ones(2, dtype=m.int64), m.ones(2), m.ones(2, dtype=m.int64), value=0.5),
        lambda m: m.float_power(m.tensor([2, 3]), m.tensor([-1, 2])),
        lambda m: m.float_power(-1.5, m.tensor([2.0, 0.5])),
        lambda m: m.float_power(2, 3),
        lambda m: m.tensor([2.0, 3.0]).float_power_(2),
        lambda m: m.tensor([2.0, 3.0], dtype=m.float64).float_power_(m.tensor([2, 3])),
        lambda m: m.heaviside(m.tensor([0.0, -0.0, NAN, -1.0, 2.0, INF]), m.tensor(5.0)),
        lambda m: m.heaviside(m.ones(2), m.ones(2, dtype=m.int64)),
        lambda m: m.heaviside(m.tensor([True, False]), m.tensor([False, True])),
        lambda m: m.ones(2, dtype=m.int64).heaviside_(m.ones(2)),
    ],
)
def test_ternary_and_float_power_corner_cases(build: Callable[[Any], Any]) -> None:
    same(build)


def backward_of(build: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    """The gradient of a float64 leaf through ``build(m, leaf)`` (or the error the backward raises)."""

    def run(m: Any) -> Any:
        x = m.tensor([0.7, -1.3], dtype=m.float64, requires_grad=True)
        build(m, x).sum().backward()
        return x.grad

    return run


@pytest.mark.parametrize(
    "build",
    [
        # value / tensor2 is ATen's empty_like(tensor2).fill_(value).div_(tensor2): in place, so an
        # integer tensor2 refuses the float quotient, and a value it cannot hold is refused by fill_
        lambda m, x: m.addcdiv(x, x, m.tensor([2, 3]), value=0.5),
        lambda m, x: m.addcdiv(x, x, m.tensor([2, 3], dtype=m.uint8), value=300),
        lambda m, x: m.addcdiv(x, x.float(), x.float(), value=1e300),
        lambda m, x: m.addcmul(x, x, m.tensor([2, 3]), value=0.5),  # tensor2 * value promotes
        lambda m, x: m.heaviside(x, x),
        lambda m, x: (x * 1).heaviside_(x),
    ],
)
def test_ternary_backward_corner_cases(build: Callable[[Any, Any], Any]) -> None:
    same(backward_of(build))


def second_order(m: Any, op: Callable[..., Any], k: int) -> list:
    """The node names of the create_graph gradients of ``op`` of ``k`` float64 leaves, taken
    against a grad_output that requires grad (so every formula's product is recorded)."""
    xs = [m.tensor([0.7, -1.3, 2.0], dtype=m.float64, requires_grad=True) for _ in range(k)]
    v = m.tensor([1.5, 0.5, -1.0], dtype=m.float64, requires_grad=True)
    gs = m.autograd.grad(op(m, *xs), xs, v, create_graph=True)
    return [names(g.grad_fn) for g in gs]


@pytest.mark.parametrize(
    ("op", "k"),
    [
        (lambda m, a, b: m.lerp(a, b, 0.3), 2),
        (lambda m, a, b, w: m.lerp(a, b, w), 3),
        (lambda m, a, b, c: m.addcmul(a, b, c, value=2), 3),
        (lambda m, a, b, c: m.addcdiv(a, b, c, value=-2), 3),
        (lambda m, a, b: m.float_power(a.float(), b), 2),
        (lambda m, a: m.float_power(3, a.float()), 1),
        (lambda m, a, b: (a * 1).float_power_(b), 2),
        (lambda m, a, b, c: (a * 1).addcdiv_(b, c), 3),
    ],
)
def test_ternary_second_order_graphs(op: Callable[..., Any], k: int) -> None:
    assert second_order(impl, op, k) == second_order(torch, op, k)
