"""Planted faults that break torch's errors and warnings for refused operations (rules ERR-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched


@fault({"ERR-002": "the backend raised none"})
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
    from impl import _graph as graph
    from impl._ops import table

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


@fault({"ERR-001": "expected error"})
def backward_without_grad_does_nothing() -> Iterator[None]:
    """backward from a tensor that does not require grad (no grad_fn) silently does nothing."""
    from impl import autograd

    def make(original: Callable) -> Callable:
        def root_edges(outputs: tuple, grads: list) -> list:
            kept = [(o, g) for o, g in zip(outputs, grads, strict=True) if o._edge()[0] is not None]
            return original(tuple(o for o, _ in kept), [g for _, g in kept])

        return root_edges

    with patched(autograd, "_root_edges", make):
        yield


@fault({"ERR-001": "message differs"})
def gradient_shape_checked_by_numel() -> Iterator[None]:
    """backward accepts a gradient of another shape with as many elements as the output (reshaped)."""
    from impl_faults.accumulation import make_grads_with

    def reshaped(o: Any, g: Any) -> Any:
        return g.reshape(o.shape) if g is not None and g.numel() == o.numel() else g

    with make_grads_with(reshaped):
        yield


@fault({"ERR-001": "the reference raised none"})
def gradient_of_another_dtype_refused() -> Iterator[None]:
    """backward refuses a gradient whose dtype is not the output's instead of casting it."""
    from impl_faults.accumulation import make_grads_with

    def same_dtype(o: Any, g: Any) -> Any:
        if g is not None and g.shape == o.shape and g.dtype is not o.dtype:
            raise RuntimeError(f"expected gradient of dtype {o.dtype} but got {g.dtype}")
        return g

    with make_grads_with(same_dtype):
        yield


@fault({"ERR-003": "message differs"})
def broadcast_error_names_operands_in_reverse() -> Iterator[None]:
    """The error for operands that do not broadcast gives tensor a's size as tensor b's and b's as a's."""
    from impl._ops import table

    with patched(table, "broadcast_mismatch", lambda original: lambda shapes: original(shapes[::-1])):
        yield


@fault({"ERR-003": "the backend raised none"})
def matrix_product_of_mixed_dtypes_promoted() -> Iterator[None]:
    """mm and matmul of matrices of different dtypes compute in the promoted dtype instead of raising."""
    from impl._ops import products

    with patched(products, "_check_same_dtype", lambda _original: lambda a, b: None):
        yield


@fault({"ERR-003": "type differs"})
def cat_mismatch_raises_value_error() -> Iterator[None]:
    """cat of tensors whose shapes do not fit raises a ValueError (numpy's type), not a RuntimeError."""
    import impl

    def make(original: Callable) -> Callable:
        def cat(*args: Any, **kwargs: Any) -> Any:
            try:
                return original(*args, **kwargs)
            except RuntimeError as error:
                raise ValueError(str(error)) from None

        return cat

    with patched(impl, "cat", make):
        yield
