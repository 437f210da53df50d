"""Corner cases of the unary math ops (impl/_ops/unary_math.py) that
generated programs rarely reach, each compared with torch directly: logit's two gradient paths,
sinc at 0, the in-place nodes whose backward raises, round with decimals, torch's errors, and the
second-order graphs (create_graph=True) of every op."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import impl
from tests.helpers import parity

NAN, INF = float("nan"), float("inf")
LOGIT_POINTS = [-0.5, -0.0, 0.0, 0.05, 0.5, 0.95, 1.0, 1.5, NAN]


def summary(value):
    """What a user sees of a result: a tensor's dtype, shape, values (-0.0 and nan spelled out),
    requires_grad and grad_fn name; tuples and lists item by item; anything else as itself."""
    if isinstance(value, (tuple, list)):
        return [summary(v) for v in value]
    if not hasattr(value, "detach"):
        return value
    # 12 significant digits: torch's float64 transcendentals and numpy's may differ in the last ulp
    flat = [v if isinstance(v, bool) else f"{float(v):.12g}" for v in value.detach().reshape(-1).tolist()]
    grad_fn = None if value.grad_fn is None else value.grad_fn.name()
    return (str(value.dtype), tuple(value.shape), flat, value.requires_grad, grad_fn)


def both(fn):
    """``fn`` on torch and on impl, as (summary, None) or (None, (type name, first line))."""
    return parity.both(fn, summary)


def gradient(op, values, dtype="float64", create_graph=False):
    """``fn(t)`` returning the gradient of ``op(x).sum()`` for a leaf x of ``values``, and (with
    ``create_graph``) its grad_fn's next_functions names."""

    def fn(t):
        x = t.tensor(values, dtype=getattr(t, dtype), requires_grad=True)
        (g,) = t.autograd.grad(op(t, x).sum(), x, create_graph=create_graph)
        if g.grad_fn is None:
            return g
        return g, [None if f is None else f.name() for f, _ in g.grad_fn.next_functions]

    return fn


CASES = {
    # logit's kernel backward (no create_graph): nan outside [0, 1], 0 outside [eps, 1 - eps],
    # g * inf at 0 and 1 (+inf at -0.0 too)
    **{
        f"logit_grad_eps_{eps}": gradient(lambda t, x, e=eps: t.logit(x, e), LOGIT_POINTS)
        for eps in (None, 0.1, 0.0, -1.0)
    },
    # the create_graph formula: where(lo <= x <= hi, g / (x (1 - x)), nan or 0); -inf at -0.0
    **{
        f"logit_grad_graph_eps_{eps}": gradient(
            lambda t, x, e=eps: t.logit(x, e), LOGIT_POINTS, create_graph=True
        )
        for eps in (None, 0.1, -1.0)
    },
    **{
        f"logit_half_eps_{dt}": lambda t, dt=dt: t.logit(
            t.tensor([0.0, 0.05, 0.5, 0.99], dtype=getattr(t, dt)), 0.1
        )
        for dt in ("float16", "bfloat16")
    },
    "logit_half_eps_grad": gradient(lambda t, x: t.logit(x, 0.1), [0.0, 0.1, 0.5, 0.9, 1.0], "float16"),
    "sinc_at_zero": lambda t: t.sinc(t.tensor([0.0, -0.0, 1e-170, 1.0, 0.5, INF, NAN], dtype=t.float64)),
    "sinc_grad_at_zero": gradient(lambda t, x: t.sinc(x), [0.0, 1e-170, 1e-300, 1.0, 0.5]),
    "sinc_grad_graph": gradient(lambda t, x: t.sinc(x), [0.0, 1.0, 0.5], create_graph=True),
    "atanh_graph": gradient(lambda t, x: t.atanh(x), [0.0, 0.5, -0.5], create_graph=True),
    "positive_bool": lambda t: t.positive(t.tensor([True])),
    "positive_method_bool": lambda t: t.tensor([True]).positive(),
    "frac_long": lambda t: t.frac(t.tensor([1, 2])),
    "frac_bool": lambda t: t.frac(t.tensor([True])),
    "frac_inf": lambda t: t.frac(t.tensor([INF, -INF, NAN, -2.5, -0.0, 2.5])),
    "nan_to_num_long": lambda t: t.nan_to_num(t.tensor([1, -2]), nan=3.0, posinf=4.0),
    "nan_to_num_bool": lambda t: t.nan_to_num(t.tensor([True, False])),
    "nan_to_num_half_posinf": lambda t: t.nan_to_num(
        t.tensor([INF, -INF, NAN], dtype=t.float16), posinf=1e10
    ),
    "nan_to_num_bfloat16": lambda t: t.nan_to_num(t.tensor([INF, -INF, NAN], dtype=t.bfloat16)),
    "square_bool_inplace": lambda t: t.tensor([True]).square_(),
    "square_int8_inplace": lambda t: t.tensor([-3, 12], dtype=t.int8).square_(),
    "tan_long_inplace": lambda t: t.tensor([1]).tan_(),
    "sqrt_bool_inplace": lambda t: t.tensor([True]).sqrt_(),
    "logit_int_inplace": lambda t: t.tensor([1], dtype=t.int16).logit_(0.1),
    "clamp_float_bound_uint8": lambda t: t.tensor([3], dtype=t.uint8).clamp_(min=-1.0),
    "clamp_int_bound_bool": lambda t: t.tensor([True]).clamp_(min=1),
    "clamp_bool_bound_bool": lambda t: t.tensor([True]).clamp_(min=True),
    "clamp_int_bound_int64": lambda t: t.tensor([3]).clamp_(max=0.5),
    "pow_half_power_uint8": lambda t: t.tensor([3], dtype=t.uint8).pow_(0.5),
    "pow_bool_inplace": lambda t: t.tensor([True]).pow_(2),
    "pow_negative_bool_inplace": lambda t: t.tensor([True]).pow_(-1),
    "neg_bool": lambda t: t.neg(t.tensor([True])),
    "neg_operator_bool": lambda t: -t.tensor(True),
    "neg_bool_inplace": lambda t: t.tensor([True]).neg_(),
    "negative_bool": lambda t: t.negative(t.tensor([False])),
    "sgn_empty_float64": gradient(lambda t, x: t.sgn(x), []),
    "sgn_empty_graph": gradient(lambda t, x: t.abs(x), [], create_graph=True),
    "sgn_empty_inplace": lambda t: (t.zeros(0, dtype=t.float64, requires_grad=True) * 1).sgn_(),
    "abs_bfloat16_nan_grad": gradient(lambda t, x: t.abs(x), [NAN, 0.0, -1.0], "bfloat16"),
    "abs_bfloat16_nan_graph": gradient(lambda t, x: t.abs(x), [NAN, 0.0, -1.0], "bfloat16", True),
}
# round with decimals: values of every dtype (torch's opmath arithmetic, nan where 10^d overflows)
ROUND_VALUES = [1.25, 2.5, -0.5, 0.05, 1.55, 2.675, 125.5, -0.0, 1e30, 1e-30, INF, -INF, NAN, 3e38, 65504.0]
for _dt in ("float16", "bfloat16", "float32", "float64", "uint8", "int64", "bool"):
    for _d in (None, 0, 1, 2, -1, -2, 40, -40, 400):

        def _round(t, dt=_dt, d=_d):
            dtype = getattr(t, dt)
            x = (
                t.tensor(ROUND_VALUES, dtype=t.float64).to(dtype)
                if dtype.is_floating_point
                else t.tensor([5, 15])
            )
            x = x.to(dtype)
            return t.round(x) if d is None else t.round(x, decimals=d)

        CASES[f"round_{_dt}_{_d}"] = _round
CASES.update(
    {
        "round_decimals_grad": gradient(lambda t, x: t.round(x, decimals=1), [1.25, 2.5], "float32", True),
        "round_decimals_method": lambda t: t.tensor([1.55, -2.45]).round(decimals=1),
        "round_decimals_inplace": lambda t: (t.tensor([1.57], requires_grad=True) * 1).round_(decimals=1),
        "round_decimals_inplace_long": lambda t: t.tensor([15]).round_(decimals=1),
        "round_decimals_numpy_int": lambda t: t.round(t.tensor([1.55]), decimals=np.int64(1)),
        "round_decimals_tensor": lambda t: t.round(t.tensor([1.55]), decimals=t.tensor(1)),
        "round_decimals_float": lambda t: t.round(t.tensor([1.5]), decimals=1.0),
        "round_decimals_bool": lambda t: t.round(t.tensor([1.5]), decimals=True),
        "round_decimals_none": lambda t: t.round(t.tensor([1.5]), decimals=None),
        "round_decimals_vector": lambda t: t.round(t.tensor([1.5]), decimals=t.tensor([1])),
        "round_decimals_overflow": lambda t: t.round(t.tensor([1.5]), decimals=2**70),
        "round_positional": lambda t: t.round(t.tensor([1.5]), 1),
        "round_two_positional": lambda t: t.round(t.tensor([1.5]), 1, 2),
        "round_none": lambda t: t.round(None),
        "round_method_positional": lambda t: t.tensor([1.5]).round(1),
        "round_method_two_positional": lambda t: t.tensor([1.5]).round(1, 2),
        "round_method_none": lambda t: t.tensor([1.5]).round(decimals=None),
        "round_inplace_float_decimals": lambda t: t.tensor([1.5]).round_(decimals=1.0),
        "round_inplace_leaf": lambda t: t.tensor([1.5], requires_grad=True).round_(decimals=1),
    }
)

# every new op's second-order graph: the gradient's grad_fn and its next_functions' names
SECOND_ORDER = {
    "tan": [0.5, -1.0],
    "asin": [0.5, -0.25],
    "acos": [0.5, -0.25],
    "atan": [0.5, -2.0],
    "sinh": [0.5, -2.0],
    "cosh": [0.5, -2.0],
    "asinh": [0.5, -2.0],
    "acosh": [1.5, 3.0],
    "atanh": [0.5, -0.25],
    "log1p": [0.5, 2.0],
    "expm1": [0.5, -2.0],
    "log2": [0.5, 2.0],
    "log10": [0.5, 2.0],
    "exp2": [0.5, -2.0],
    "rsqrt": [0.5, 2.0],
    "frac": [0.5, -2.25],
    "sinc": [0.5, 0.0],
    "logit": [0.25, 0.5],
    "deg2rad": [0.5, -2.0],
    "rad2deg": [0.5, -2.0],
    "nan_to_num": [0.5, INF],
    "arccos": [0.5, -0.25],
    "arctanh": [0.5, -0.25],
    "fix": [0.5, -2.5],
}
for _op, _values in SECOND_ORDER.items():
    CASES[f"second_order_{_op}"] = gradient(
        lambda t, x, op=_op: getattr(t, op)(x), _values, create_graph=True
    )


@pytest.mark.parametrize("name", CASES)
def test_matches_torch(name: str) -> None:
    (expected, expected_error), (got, got_error) = both(CASES[name])
    assert got_error == expected_error
    assert got == expected


@pytest.mark.parametrize("op", ["asinh_", "acosh_", "atanh_", "arcsinh_", "arccosh_", "arctanh_"])
def test_inplace_inverse_hyperbolic_node_raises(op: str) -> None:
    """torch records AsinhBackward1 (...) for the in-place form, whose backward raises."""
    seen = []
    for lib in (torch, impl):
        x = lib.tensor([1.5, 0.25], requires_grad=True)
        y = getattr(x * 1, op)()
        try:
            y.sum().backward()
            error = None
        except Exception as e:  # noqa: BLE001 - compared between the two
            error = (type(e).__name__, str(e))
        seen.append((y.grad_fn.name(), error))
    assert seen[1] == seen[0]


def test_positive_is_input() -> None:
    for lib in (torch, impl):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        assert lib.positive(x) is x and x.positive() is x


def test_logit_gradient_of_minus_zero_is_plus_inf() -> None:
    """logit'(-0.0) is +inf through the kernel and -inf through the create_graph formula."""
    for create_graph, sign in ((False, 1), (True, -1)):
        for lib in (torch, impl):
            x = lib.tensor([-0.0], dtype=lib.float64, requires_grad=True)
            (g,) = lib.autograd.grad(lib.logit(x).sum(), x, create_graph=create_graph)
            assert g.item() == sign * math.inf
