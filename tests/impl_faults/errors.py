"""Planted faults that break torch's errors and warnings for refused operations (rules ERR-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from tests.impl_faults import fault, patched


@fault({"ERR-002": "step differs"})
def non_float_requires_grad_accepted() -> Iterator[None]:
    """torch.tensor(..., requires_grad=True) accepts an integer or bool dtype instead of raising."""
    from impl import _creation

    def make(original: Callable) -> Callable:
        def finish(array: Any, requires_grad: bool) -> Any:
            t = original(array, False)
            t._requires_grad = bool(requires_grad)
            return t

        return finish

    with patched(_creation, "_finish", make):
        yield


@fault({"ERR-002": "expected error", "ERR-005": "expected error", "OPS-007": "expected error"})
def leaf_inplace_allowed() -> Iterator[None]:
    """An in-place op on a leaf that requires grad is allowed (and recorded) instead of raising."""
    from impl._ops import inplace

    def make(original: Callable) -> Callable:
        def check_inplace(t: Any, others: tuple = ()) -> None:
            if t._base is None and t._grad_fn is None:
                return
            original(t, others)

        return check_inplace

    with patched(inplace, "check_inplace", make):
        yield


@fault({"ERR-005": "message differs"})
def modified_saved_tensor_versions_swapped() -> Iterator[None]:
    """The error for a saved tensor modified in place gives the expected version as the current one
    and the current one as expected."""
    from impl._ops import table
    from impl.autograd import graph

    def make(original: Callable) -> Callable:
        def message(t: Any, expected: int, output_of: Any = None) -> str:
            current = t._vc.value
            text = original(t, expected, output_of)
            return text.replace(
                f"is at version {current}; expected version {expected}",
                f"is at version {expected}; expected version {current}",
            )

        return message

    with patched(graph, "_modified_message", make), patched(table, "_modified_message", make):
        yield
