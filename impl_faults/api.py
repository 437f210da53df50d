"""Planted faults that break NumPy's keyword spellings and out= (rules API-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

from impl_faults import fault, patched


def _signatures() -> Any:
    from impl import _signatures

    return _signatures


@fault({"API-001": "error"})
def numpy_alias_ignored() -> Iterator[None]:
    """axis= and keepdims= are dropped instead of read as dim and keepdim (a scan then lacks its dim)."""

    def renamed(original: Callable) -> Callable:
        def rename(self: Any, nargs: int, kwargs: dict) -> dict:
            return original(self, nargs, {k: v for k, v in kwargs.items() if k not in ("axis", "keepdims")})

        return rename

    with patched(_signatures().Spellings, "renamed", renamed):
        yield


@fault({"API-002": "shape differs"})
def out_not_resized() -> Iterator[None]:
    """out= of another shape keeps its shape: the result is broadcast into it where it can be."""

    def into(original: Callable) -> Callable:
        def write(name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
            out = kwargs["out"]
            shape, data = tuple(out.shape), out._data
            result = original(name, fn, args, kwargs)
            if shape != tuple(out.shape) and out.numel() and len(shape) and shape[0]:
                out._data = data
            return result

        return write

    with patched(_signatures(), "_into", into):
        yield


@fault({"API-002": "warning"})
def out_resize_warning_missing() -> Iterator[None]:
    """A non-empty out= of another shape is resized without torch's UserWarning."""
    with patched(_signatures(), "warnings", lambda _original: SimpleNamespace(warn=lambda *a, **k: None)):
        yield
