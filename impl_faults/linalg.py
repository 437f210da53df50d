"""Planted faults that break torch.linalg's solves and decompositions (rules LINALG-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import derivative_replaced, fault, patched


@fault({"LINALG-001": ".grad: value"})
def inv_grad_untransposed() -> Iterator[None]:
    """inv's gradient is -inverse g inverse, without the transposes (right only for symmetric A)."""
    from impl._ops import decompositions

    def make(_original: Callable) -> Callable:
        return lambda g, c: -c.inverse.matmul(g.matmul(c.inverse))

    with derivative_replaced(decompositions.LINALG_INV_EX, "A", make):
        yield


@fault({"LINALG-001": ": value"})
def eigh_eigenvalues_descending() -> Iterator[None]:
    """eigh gives its eigenvalues (and their vectors) in descending order, not ascending."""
    from impl._ops import decompositions

    def make(original: Callable) -> Callable:
        def forward(xp: Any, a: Any, UPLO: str) -> tuple[Any, Any]:
            w, v = original(xp, a, UPLO)
            return w[..., ::-1].copy(), v[..., ::-1].copy()

        return forward

    with patched(decompositions.LINALG_EIGH, "forward", make):
        yield


@fault({"LINALG-002": "message differs"})
def singular_pivot_counted_from_zero() -> Iterator[None]:
    """LU's info counts the zero pivot from 0: inv's LinAlgError names the diagonal element before
    the one torch names."""
    from impl._ops import decompositions

    def make(original: Callable) -> Callable:
        def getf2(a: Any) -> tuple[Any, Any, Any]:
            lu, piv, info = original(a)
            return lu, piv, info - (info > 0)

        return getf2

    with patched(decompositions, "_getf2", make):
        yield
