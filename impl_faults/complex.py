"""Planted faults that break complex tensors (rules CPLX-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched


@fault({"CPLX-001": "stdout line"})
def abs_of_complex_keeps_dtype() -> Iterator[None]:
    """abs of a complex tensor keeps the complex dtype (its magnitudes, imaginary parts 0)."""
    from impl._ops.unary_math import ABS

    def make(original: Callable) -> Callable:
        def forward(xp: Any, a: Any) -> Any:
            out = original(xp, a)
            return out.astype(a.dtype) if a.dtype.kind == "c" else out

        return forward

    with patched(ABS, "forward", make):
        yield


@fault({"CPLX-002": "stdout line"})
def complex_grad_not_conjugated() -> Iterator[None]:
    """The gradients of holomorphic ops use f'(z), not its conjugate: the formulas of real numbers
    read the saved values unconjugated."""
    from impl._ops.table import ConjCtx

    def make(_original: Callable) -> Callable:
        return lambda self, name: getattr(self._ctx, name)

    with patched(ConjCtx, "__getattr__", make):
        yield


@fault({"CPLX-001": "stdout line"})
def isreal_of_real_tensor_false() -> Iterator[None]:
    """isreal of a real tensor answers False everywhere (torch: True, whatever its values)."""
    from impl._creation import zeros_like
    from impl._ops import complex as complex_ops

    with patched(complex_ops, "ones_like", lambda original: zeros_like):
        yield
