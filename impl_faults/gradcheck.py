"""Planted faults that break backward formulas, first and second order (rules NUM-*), which the
finite differences of impl's own forward catch without torch."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from impl_faults import derivative_replaced, fault


@fault({"NUM-001": "gradients differ from finite differences"})
def div_divisor_grad_sign_flipped() -> Iterator[None]:
    """div's gradient for the divisor is grad * a / b**2 instead of -grad * a / b**2."""
    from impl._ops.arithmetic import DIV

    def make(original: Callable) -> Callable:
        return lambda g, c: -original(g, c)

    with derivative_replaced(DIV, "other", make):
        yield
