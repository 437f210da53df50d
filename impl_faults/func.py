"""Planted faults that break torch.func (rules FUNC-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched


@fault({"FUNC-001": "stdout line"})
def func_transform_inputs_detached() -> Iterator[None]:
    """Each transform tracks its inputs detached from any outer transform's graph, so that grad of
    grad (and every nested transform) sees an inner result independent of the outer input."""
    from impl.func import _autodiff

    def make(original: Callable) -> Callable:
        def track(x: Any) -> Any:
            original(x)  # its errors
            return x.detach().requires_grad_()

        return track

    with patched(_autodiff, "_track", make):
        yield


@fault({"FUNC-001": "stdout line"})
def func_results_drop_captured_graph() -> Iterator[None]:
    """An outermost transform detaches its results even where they depend on a captured tensor that
    requires grad (a module's parameter), where torch's carry a grad_fn."""
    from impl.func import _autodiff

    with patched(_autodiff, "_reaches_outside", lambda original: lambda t, inputs, seen: False):
        yield


@fault({"FUNC-002": "stdout line"})
def vmap_batch_sizes_unchecked() -> Iterator[None]:
    """vmap maps over the first mapped input's size without checking the others'."""
    from impl.func import _vmap

    def make(original: Callable) -> Callable:
        def batch_size(flat_args: list, flat_dims: list) -> int:
            return next(a.size(d) for a, d in zip(flat_args, flat_dims, strict=True) if d is not None)

        return batch_size

    with patched(_vmap, "_batch_size", make):
        yield


@fault({"FUNC-002": "stdout line"})
def vmap_same_randomness_draws_anew() -> Iterator[None]:
    """vmap's randomness="same" draws new numbers for every batch element (as "different")."""
    from impl.func import _vmap

    with patched(_vmap, "_replayed_state", lambda original: lambda randomness: None):
        yield
