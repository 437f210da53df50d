"""Planted faults that break the freeing of the graph after backward (rules RG-*)."""

from __future__ import annotations

from collections.abc import Iterator

from tests.impl_faults import fault, patched


@fault({"RG-001": "expected error, got value"})
def saved_tensors_never_freed() -> Iterator[None]:
    """A node's saved tensors stay alive after backward, so no second backward ever raises."""
    from impl.autograd.graph import SavedTensor

    with patched(SavedTensor, "release", lambda _orig: lambda self: None):
        yield
