"""Self-tests of oracle/numeric.py: finite differences agree with torch's exact gradients, and a
gradient off by a relative 1e-3 (the planted fault grad_off) is caught."""

from __future__ import annotations

import math

from oracle.backends import load_backend
from oracle.numeric import gradient_mismatches, numerical_jacobian, op_function, second_order
from oracle.program import Ref
from oracle.reference import reference

TORCH = reference()
# f(x, y) = sum(exp(x) * y)
OPS = [
    {"out": "e", "op": "exp", "args": [Ref("i0")]},
    {"out": "m", "op": "mul", "args": [Ref("e"), Ref("i1")]},
    {"out": "s", "op": "sum", "args": [Ref("m")]},
]
VALUES, SHAPES = [[0.5, 1.0], [2.0, -1.0]], [(2,), (2,)]


def test_finite_differences_of_a_known_function() -> None:
    jac = numerical_jacobian(TORCH.module, op_function(TORCH.module, OPS), VALUES, SHAPES)
    dx = [row[0] for row in jac[0]]  # d s / d x_i = exp(x_i) * y_i
    dy = [row[0] for row in jac[1]]  # d s / d y_i = exp(x_i)
    assert all(math.isclose(a, math.exp(x) * y, rel_tol=1e-8) for a, x, y in zip(dx, *VALUES, strict=True))
    assert all(math.isclose(a, math.exp(x), rel_tol=1e-8) for a, x in zip(dy, VALUES[0], strict=True))


def test_torch_gradients_pass_first_and_second_order() -> None:
    fn = op_function(TORCH.module, OPS)
    assert gradient_mismatches(TORCH.module, fn, VALUES, SHAPES) == []
    hessian_vector = second_order(TORCH.module, fn, [1.0, -2.0])
    assert gradient_mismatches(TORCH.module, hessian_vector, VALUES, SHAPES) == []


def test_a_gradient_off_by_a_relative_1e_3_is_caught() -> None:
    faulty = load_backend("fault:grad_off")
    with faulty.active():
        found = gradient_mismatches(faulty.module, op_function(faulty.module, OPS), VALUES, SHAPES)
    assert len(found) == 4 and "finite differences" in str(found[0])


def test_a_mismatch_is_a_divergence_with_a_runnable_gradcheck_repro() -> None:
    """The NUM rules' failure: a description naming the mismatches and a script whose gradcheck
    of the same function at the same point runs on torch."""
    from oracle.numeric import GradientMismatchError, Mismatch
    from oracle.program import Ref

    ops = [{"out": "q0", "op": "exp", "args": [Ref("i1")]},
           {"out": "f0", "op": "div", "args": [Ref("i0"), Ref("q0")]}]
    mismatches = [Mismatch(1, 0, 0, 1.5, -1.5)] * 6
    error = GradientMismatchError(mismatches, ops, [[0.5, 1.0], [0.2, 0.3]], [(2,), (2,)], 1)
    account = error.to_dict()
    assert account["description"] == (
        "gradients differ from finite differences: " + "; ".join(["d out[0] / d i1[0]: backend 1.5, finite "
                                                                  "differences -1.5"] * 5) + " (and 1 more)")
    assert "torch.autograd.gradcheck(f, inputs" in account["repro"]
    printed: list = []
    exec(compile(account["repro"], "repro", "exec"), {"print": printed.append})  # noqa: S102
    assert printed == [True]  # torch's own gradients pass there
    assert "gradgradcheck" in GradientMismatchError([], ops, [[0.5], [0.2]], [(1,), (1,)], 2).repro()
