"""torch.autograd.functional on impl against torch 2.13: vjp, jvp, jacobian (row by row and
vectorized), hessian, vhp and hvp, with tuples or lone tensors, create_graph, strict mode's errors,
v's checks and the arguments torch refuses, compared value by value with the flags and grad_fn
names of the results, and error by error (type and message)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.helpers.parity import both


def describe(lib: Any) -> Any:
    """A result as comparable data: nested tuples of (shape, values, requires_grad, grad_fn)."""

    def show(x: Any) -> Any:
        if isinstance(x, tuple):
            return tuple(show(y) for y in x)
        values = np.array(x.detach().tolist(), dtype=float).round(10).tolist()
        grad_fn = None if x.grad_fn is None else type(x.grad_fn).__name__
        return list(x.shape), values, x.requires_grad, grad_fn

    return show


def t(lib: Any, data: Any, requires_grad: bool = False) -> Any:
    return lib.tensor(data, dtype=lib.float64, requires_grad=requires_grad)


def pair(lib: Any, requires_grad: bool = False) -> tuple:
    return t(lib, [1.0, 2.0], requires_grad), t(lib, [0.5, -1.0])


def two_outputs(x: Any, y: Any) -> tuple:
    return x * y.exp(), (x**2).sum() + y.sin().sum()


def cubic(x: Any) -> Any:
    return (x**3).sum()


def mixed(x: Any, y: Any) -> Any:
    return (x**2 * y).sum()


def twice(x: Any, *_: Any) -> Any:
    return x * 2


CASES = {
    "vjp": lambda lib, F: F.vjp(cubic, t(lib, [1.0, 2.0])),
    "vjp tuples": lambda lib, F: F.vjp(two_outputs, pair(lib), (t(lib, [1.0, 1.0]), t(lib, 2.0))),
    "vjp create_graph": lambda lib, F: F.vjp(
        two_outputs, pair(lib, True), (t(lib, [1.0, 1.0]), t(lib, 2.0)), create_graph=True
    ),
    "vjp v too short": lambda lib, F: F.vjp(two_outputs, pair(lib), (t(lib, [1.0, 1.0]),)),
    "vjp v of a wrong size": lambda lib, F: F.vjp(
        two_outputs, pair(lib), (t(lib, [1.0, 1.0, 1.0]), t(lib, 2.0))
    ),
    "vjp v None, output not one number": lambda lib, F: F.vjp(twice, t(lib, [1.0, 2.0])),
    "vjp inputs a list": lambda lib, F: F.vjp(twice, [t(lib, [1.0, 2.0])]),
    "vjp strict, unused input": lambda lib, F: F.vjp(twice, pair(lib), t(lib, [1.0, 1.0]), strict=True),
    "vjp unused input": lambda lib, F: F.vjp(twice, pair(lib), t(lib, [1.0, 1.0])),
    "vjp strict, constant output": lambda lib, F: F.vjp(
        lambda x: t(lib, [1.0, 1.0]), t(lib, [1.0, 2.0]), t(lib, [1.0, 1.0]), strict=True
    ),
    "vjp input not a tensor": lambda lib, F: F.vjp(twice, 3.0),
    "vjp tuple holding a number": lambda lib, F: F.vjp(twice, (t(lib, [1.0]), 3.0)),
    "vjp output not a tensor": lambda lib, F: F.vjp(lambda x: 3.0, t(lib, [1.0])),
    "jvp": lambda lib, F: F.jvp(two_outputs, pair(lib), (t(lib, [1.0, 0.0]), t(lib, [0.0, 1.0]))),
    "jvp create_graph": lambda lib, F: F.jvp(
        two_outputs, pair(lib, True), (t(lib, [1.0, 0.0]), t(lib, [0.0, 1.0])), create_graph=True
    ),
    "jvp strict, linear": lambda lib, F: F.jvp(twice, t(lib, [1.0, 2.0]), t(lib, [1.0, 1.0]), strict=True),
    "jvp v None, input not one number": lambda lib, F: F.jvp(twice, t(lib, [1.0, 2.0])),
    "jacobian": lambda lib, F: F.jacobian(two_outputs, pair(lib)),
    "jacobian of one tensor": lambda lib, F: F.jacobian(lambda x: x.exp() * x.sum(), t(lib, [1.0, 2.0, 3.0])),
    "jacobian vectorized": lambda lib, F: F.jacobian(two_outputs, pair(lib), vectorize=True),
    "jacobian vectorized, unused input": lambda lib, F: F.jacobian(twice, pair(lib), vectorize=True),
    "jacobian create_graph": lambda lib, F: F.jacobian(
        lambda x: x**2, t(lib, [1.0, 2.0], True), create_graph=True
    ),
    "jacobian strict, unused input": lambda lib, F: F.jacobian(lambda x, y: x**2, pair(lib), strict=True),
    "jacobian strict create_graph, linear": lambda lib, F: F.jacobian(
        twice, t(lib, [1.0, 2.0]), strict=True, create_graph=True
    ),
    "jacobian unused input": lambda lib, F: F.jacobian(lambda x, y: x**2, pair(lib)),
    "jacobian forward-mode, not vectorized": lambda lib, F: F.jacobian(
        twice, t(lib, [1.0]), strategy="forward-mode"
    ),
    "jacobian forward-mode, create_graph": lambda lib, F: F.jacobian(
        twice, t(lib, [1.0]), create_graph=True, strategy="forward-mode"
    ),
    "jacobian forward-mode, vectorized": lambda lib, F: F.jacobian(
        two_outputs, pair(lib), vectorize=True, strategy="forward-mode"
    ),
    "jacobian forward-mode, vectorized, of a lone tensor": lambda lib, F: F.jacobian(
        lambda x: x.exp() * x.sum(), t(lib, [1.0, 2.0, 3.0]), vectorize=True, strategy="forward-mode"
    ),
    "jacobian unknown strategy": lambda lib, F: F.jacobian(twice, t(lib, [1.0]), strategy="sideways"),
    "jacobian vectorized strict": lambda lib, F: F.jacobian(
        twice, t(lib, [1.0]), vectorize=True, strict=True
    ),
    "hessian": lambda lib, F: F.hessian(cubic, t(lib, [1.0, 2.0])),
    "hessian of two inputs": lambda lib, F: F.hessian(mixed, (t(lib, [1.0, 2.0]), t(lib, [3.0, 4.0]))),
    "hessian vectorized": lambda lib, F: F.hessian(
        mixed, (t(lib, [1.0, 2.0]), t(lib, [3.0, 4.0])), vectorize=True
    ),
    "hessian create_graph": lambda lib, F: F.hessian(cubic, t(lib, [1.0, 2.0], True), create_graph=True),
    "hessian strict, linear": lambda lib, F: F.hessian(
        lambda x: (x * 2).sum(), t(lib, [1.0, 2.0]), strict=True
    ),
    "hessian of several numbers": lambda lib, F: F.hessian(lambda x: x**2, t(lib, [1.0, 2.0])),
    "vhp": lambda lib, F: F.vhp(
        mixed, (t(lib, [1.0, 2.0]), t(lib, [3.0, 4.0])), (t(lib, [1.0, 0.0]), t(lib, [0.0, 1.0]))
    ),
    "hvp": lambda lib, F: F.hvp(
        mixed, (t(lib, [1.0, 2.0]), t(lib, [3.0, 4.0])), (t(lib, [1.0, 0.0]), t(lib, [0.0, 1.0]))
    ),
    "hvp create_graph": lambda lib, F: F.hvp(
        cubic, t(lib, [1.0, 2.0], True), t(lib, [1.0, 1.0]), create_graph=True
    ),
    "vhp strict, linear": lambda lib, F: F.vhp(
        lambda x: (x * 2).sum(), t(lib, [1.0, 2.0]), t(lib, [1.0, 1.0]), strict=True
    ),
    "hvp strict, linear": lambda lib, F: F.hvp(
        lambda x: (x * 2).sum(), t(lib, [1.0, 2.0]), t(lib, [1.0, 1.0]), strict=True
    ),
    "hvp of a tuple": lambda lib, F: F.hvp(
        lambda x: (x.sum(), x.sum()), t(lib, [1.0, 2.0]), t(lib, [1.0, 1.0])
    ),
    "hvp of several numbers": lambda lib, F: F.hvp(twice, t(lib, [1.0, 2.0]), t(lib, [1.0, 1.0])),
    "hvp v None": lambda lib, F: F.hvp(lambda x: (x * 2).sum(), t(lib, [1.0, 2.0])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_functional_matches_torch(name: str) -> None:
    (expected, expected_error), (got, got_error) = both(
        lambda lib: describe(lib)(CASES[name](lib, lib.autograd.functional))
    )
    assert got_error == expected_error
    assert got == expected


def test_grad_mode_off_keeps_results_off_the_graph() -> None:
    """Under no_grad, a vjp of an input that requires grad is computed and has no graph."""

    def case(lib: Any) -> Any:
        with lib.no_grad():
            return describe(lib)(
                lib.autograd.functional.vjp(twice, t(lib, [1.0, 2.0], True), t(lib, [1.0, 1.0]))
            )

    (expected, expected_error), (got, got_error) = both(case)
    assert (got, got_error) == (expected, expected_error) and expected_error is None
