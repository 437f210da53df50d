"""Planted faults that break the grad modes no_grad, enable_grad, set_grad_enabled and inference_mode
(rules GM-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from tests.impl_faults import fault, patched


@fault({"GM-001": "enabled differs"})
def leaving_grad_mode_enables_grad() -> Iterator[None]:
    """Leaving a grad-mode context turns grad mode on instead of restoring the mode it was entered in."""
    from impl.autograd import grad_mode

    def make(_original: Callable) -> Callable:
        return lambda self, *exc: grad_mode._set_enabled(True)

    with patched(grad_mode._GradModeContext, "__exit__", make):
        yield


@fault({"GM-002": "inference differs"})
def inference_mode_is_no_grad() -> Iterator[None]:
    """inference_mode only switches grad mode off (as no_grad): results are no inference tensors."""
    from impl.autograd import grad_mode

    def make(_original: Callable) -> Callable:
        def enter(self: grad_mode.inference_mode) -> None:
            self._prev_inf = grad_mode.is_inference_mode_enabled()
            grad_mode._GradModeContext.__enter__(self)

        return enter

    with patched(grad_mode.inference_mode, "__enter__", make):
        yield


def _decorators(decorate: Callable[[Any, Callable], Callable]) -> AbstractContextManager[None]:
    """Grad-mode contexts used as decorators (``mode(fn)``) return ``decorate(mode, fn)``."""
    from impl.autograd import grad_mode

    return patched(grad_mode._GradModeContext, "__call__", lambda _orig: decorate)


@fault({"GM-003": "expected error"})
def grad_mode_decorator_does_nothing() -> Iterator[None]:
    """A grad-mode decorator returns the function unwrapped, so it runs in the caller's grad mode."""
    with _decorators(lambda _mode, fn: fn):
        yield


@fault({"GM-003": "step differs"})
def grad_mode_decorator_never_leaves() -> Iterator[None]:
    """A function decorated with a grad mode enters the mode when called but does not leave it on return."""

    def decorate(mode: Any, fn: Callable) -> Callable:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            mode.clone().__enter__()
            return fn(*args, **kwargs)

        return wrapper

    with _decorators(decorate):
        yield


@fault({"GM-002": "expected error"})
def inference_results_not_marked() -> Iterator[None]:
    """Tensors made in inference mode are not marked as inference tensors, so autograd and in-place
    edits outside the mode accept them."""
    from types import SimpleNamespace

    from impl import _tensor

    with patched(_tensor, "_grad_state", lambda _orig: SimpleNamespace(inference=False)):
        yield
