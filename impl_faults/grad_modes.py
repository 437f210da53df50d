"""Planted faults that break the grad modes no_grad, enable_grad, set_grad_enabled and inference_mode
(rules GM-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from impl_faults import fault, patched


@fault({"GM-001": "enabled differs"})
def leaving_grad_mode_enables_grad() -> Iterator[None]:
    """Leaving a grad-mode context turns grad mode on instead of restoring the mode it was entered in."""
    from impl import _grad_mode as grad_mode

    def make(_original: Callable) -> Callable:
        return lambda self, *exc: grad_mode._set_enabled(True)

    with patched(grad_mode._GradModeContext, "__exit__", make):
        yield


@fault({"GM-002": "inference differs"})
def inference_mode_is_no_grad() -> Iterator[None]:
    """inference_mode only switches grad mode off (as no_grad): results are no inference tensors."""
    from impl import _grad_mode as grad_mode

    def make(_original: Callable) -> Callable:
        def enter(self: grad_mode.inference_mode) -> None:
            self._prev_inf = grad_mode.is_inference_mode_enabled()
            grad_mode._GradModeContext.__enter__(self)

        return enter

    with patched(grad_mode.inference_mode, "__enter__", make):
        yield


def _decorators(decorate: Callable[[Any, Callable], Callable]) -> AbstractContextManager[None]:
    """Grad-mode contexts used as decorators (``mode(fn)``) return ``decorate(mode, fn)``."""
    from impl import _grad_mode as grad_mode

    return patched(grad_mode._GradModeContext, "__call__", lambda _orig: decorate)


@fault({"GM-003": "enabled differs"})
def grad_mode_decorator_does_nothing() -> Iterator[None]:
    """A grad-mode decorator returns the function unwrapped, so it runs in the caller's grad mode."""
    with _decorators(lambda _mode, fn: fn):
        yield


@fault({"GM-003": "enabled differs"})
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


@fault({"GM-001": "enabled differs"})
def set_grad_enabled_ignores_its_flag() -> Iterator[None]:
    """set_grad_enabled(mode) switches grad mode off whatever its argument, as no_grad does."""
    from impl import _grad_mode as grad_mode

    def make(original: Callable) -> Callable:
        return lambda self, mode: original(self, False)

    with patched(grad_mode.set_grad_enabled, "__init__", make):
        yield


@fault({"GM-001": "enabled differs"})
def enable_grad_keeps_the_mode() -> Iterator[None]:
    """enable_grad keeps the grad mode it is entered in, so inside no_grad it does not record."""
    from impl import _grad_mode as grad_mode

    with patched(grad_mode.enable_grad, "_target", lambda _orig: lambda self: grad_mode.is_grad_enabled()):
        yield


@fault({"GM-002": "expected error"})
def inference_tensor_inplace_outside_accepted() -> Iterator[None]:
    """An in-place op on an inference tensor outside inference mode is accepted instead of raising."""
    from impl._ops import inplace

    def make(original: Callable) -> Callable:
        def unchecked(op: Any, self: Any, *others: Any, **attrs: Any) -> Any:
            flag = self._inference
            self._inference = False
            try:
                return original(op, self, *others, **attrs)
            finally:
                self._inference = flag

        return unchecked

    with patched(inplace, "apply_inplace", make):
        yield


@fault({"GM-002": "enabled differs"})
def inference_mode_ignores_its_flag() -> Iterator[None]:
    """inference_mode(False) enters inference mode as inference_mode() does."""
    from impl import _grad_mode as grad_mode

    def make(original: Callable) -> Callable:
        return lambda self, mode=True: original(self, True)

    with patched(grad_mode.inference_mode, "__init__", make):
        yield


@fault({"GM-003": "enabled differs"})
def bare_decorator_does_nothing() -> Iterator[None]:
    """no_grad, enable_grad and inference_mode used bare (@no_grad) return the function undecorated."""
    from impl import _grad_mode as grad_mode

    def make(original: Callable) -> Callable:
        def new(cls: type, *args: Any) -> Any:
            return args[0] if args and callable(args[0]) else original(cls, *args)

        return new

    with (
        patched(grad_mode._NoParamDecorator, "__new__", make),
        patched(grad_mode.inference_mode, "__new__", make),
    ):
        yield


@fault({"GM-003": "the reference raised none"})
def set_grad_enabled_decorator_switches_the_mode() -> Iterator[None]:
    """Decorating a function with set_grad_enabled(mode) leaves the mode switched to ``mode``
    (the switch its construction made is not undone)."""
    from impl import _grad_mode as grad_mode

    with patched(grad_mode.set_grad_enabled, "__call__", lambda _orig: grad_mode._GradModeContext.__call__):
        yield


def _generators(wrap: Callable[[Callable, Callable], Callable]) -> AbstractContextManager[None]:
    """A grad-mode decorator wraps a generator function as ``wrap(make_context, fn)``."""
    from impl import _grad_mode as grad_mode

    return patched(grad_mode, "_generator_in", lambda _orig: wrap)


@fault({"GM-003": "enabled differs"})
def decorated_generator_made_in_the_mode() -> Iterator[None]:
    """A decorated generator function's call (which only makes the generator) runs in the mode:
    its body then runs in the caller's mode at every resumption."""

    def wrap(make_context: Callable, fn: Callable) -> Callable:
        def call(*args: Any, **kwargs: Any) -> Any:
            with make_context():
                return fn(*args, **kwargs)

        return call

    with _generators(wrap):
        yield


@fault({"GM-003": "enabled differs"})
def decorated_generator_keeps_the_mode_at_yield() -> Iterator[None]:
    """A decorated generator enters the mode at its first resumption and leaves it only when it
    finishes: the caller runs in the generator's mode between resumptions."""

    def wrap(make_context: Callable, fn: Callable) -> Callable:
        def generator(*args: Any, **kwargs: Any) -> Any:
            with make_context():
                return (yield from fn(*args, **kwargs))

        return generator

    with _generators(wrap):
        yield


def _calls_edited(edit: Callable[[str], str]) -> AbstractContextManager[None]:
    """Every op's generated call (``codegen.call_source``) compiled from ``edit(source)`` while
    the fault lasts."""
    import sys
    from contextlib import ExitStack

    from impl._ops import codegen, table

    stack = ExitStack()
    ops = {id(v): v for m in list(sys.modules.values()) if m and m.__name__.startswith("impl.")
           for v in vars(m).values() if isinstance(v, table.OpDef)}
    for op in ops.values():
        source = codegen.call_source(op)
        edited = edit(source)
        if edited != source:
            call = codegen._compile(edited, "call", op, {**table._CALL_HELPERS, "op": op})
            stack.enter_context(patched(op, "_call", lambda _orig, call=call: call))
    return stack


@fault({"GM-002": "requires_grad"})
def inference_views_are_views() -> Iterator[None]:
    """A view of an inference tensor is a view of it (requiring grad as it does), not an
    inference tensor of its own."""
    def edit(source: str) -> str:
        return source.replace("    if t0._inference:  #", "    if False:  #").replace(
            "        main._inference = False", "        main._inference = t0._inference")

    with _calls_edited(edit):
        yield


@fault({"GM-002": "the backend raised none"})
def inference_operands_recorded() -> Iterator[None]:
    """Outside inference mode, an op whose operands are all inference tensors is recorded (or
    refuses to save them) as any other."""
    def edit(source: str) -> str:
        return source.replace(") and (not t0._inference", ") and (True or not t0._inference")

    with _calls_edited(edit):
        yield


@fault({"GM-002": "the reference raised none"})
def inference_alias_untracked() -> Iterator[None]:
    """detach() of an inference tensor outside inference mode gives an alias without a version
    counter (torch's has one of its own)."""
    from impl._tensor import Tensor

    def make(original: Callable) -> Callable:
        def detach(self: Tensor) -> Tensor:
            alias = original(self)
            alias.__dict__.pop("_tracked_inference", None)
            return alias

        return detach

    with patched(Tensor, "detach", make):
        yield


@fault({"GM-002": "version differs"})
def inference_clone_records_nothing() -> Iterator[None]:
    """clone() of an inference tensor outside inference mode records nothing, as an op on inference
    operands alone (torch's clone is a copy_ into a normal tensor: CopyBackwards, version 1)."""
    from impl._ops import views

    with patched(views, "_clone_of_inference", lambda _original: lambda t: views.CLONE._call((t,), {})):
        yield
