"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (contexts and decorators)."""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from impl import _api as api


class _State(threading.local):
    """Per-thread grad mode; class attributes are the defaults every new thread starts from."""

    enabled = True
    inference = False


_state = _State()


@api.function("is_grad_enabled")
def is_grad_enabled() -> bool:
    return _state.enabled


def _set_enabled(mode: bool) -> None:
    _state.enabled = bool(mode)


INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
    "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details."
)


@api.function("is_inference_mode_enabled")
def is_inference_mode_enabled() -> bool:
    return _state.inference


def is_recording() -> bool:
    """Whether ops record graph nodes now: grad mode on and not in inference mode (inference mode
    skips autograd even under enable_grad, as torch's does)."""
    return _state.enabled and not _state.inference


class recording:
    """Record ops whatever the modes (grad mode on, inference mode off) inside the block: for
    nodes autograd makes itself, as torch regenerates a view's grad_fn even when reached with grad
    mode off or in inference mode (it builds the node directly)."""

    def __enter__(self) -> None:
        self._prev = (_state.enabled, _state.inference)
        _state.enabled, _state.inference = True, False

    def __exit__(self, *exc: object) -> None:
        _state.enabled, _state.inference = self._prev


class _GradModeContext:
    """Base for grad-mode contexts: usable with ``with`` and as a function decorator."""

    def _target(self) -> bool:  # the grad mode inside the context
        raise NotImplementedError

    def __enter__(self) -> None:
        self._prev = is_grad_enabled()
        _set_enabled(self._target())

    def __exit__(self, *exc: object) -> None:
        _set_enabled(self._prev)

    def __call__(self, fn: Callable) -> Callable:
        """Decorate ``fn``: each call runs inside a fresh copy of this context (``clone``); a
        generator function's generator runs each of its resumptions inside one (see
        ``_generator_in``). A class is decorated through a function calling it, with torch's
        FutureWarning; a coroutine function is a plain function here (its body runs later, outside)."""
        if inspect.isclass(fn):
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You should only "
                "decorate functions or methods. To preserve the current behavior of class decoration, you "
                "can directly decorate the `__init__` method and nothing else.",
                FutureWarning,
                stacklevel=2,
            )
            cls = fn
            fn = lambda *args, **kwargs: cls(*args, **kwargs)  # noqa: E731 - as torch wraps it
        if inspect.isgeneratorfunction(fn):
            return _generator_in(self.clone, fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def clone(self) -> _GradModeContext:
        return self.__class__()


def _generator_in(make_context: Callable, fn: Callable) -> Callable:
    """Generator function ``fn`` whose generators run in a fresh context from ``make_context``
    whenever they run: the first ``send``, each value sent, an exception thrown in, and the
    ``close`` that finishes them early; the caller's mode is back in force at every ``yield``.
    Its return value is the generator's."""

    @functools.wraps(fn)
    def generator(*args: Any, **kwargs: Any) -> Any:
        inner = fn(*args, **kwargs)
        try:
            with make_context():
                value = inner.send(None)
            while True:
                try:
                    sent = yield value
                except GeneratorExit:
                    with make_context():
                        inner.close()
                    raise
                except BaseException as error:  # thrown in by the caller: the generator's to handle
                    with make_context():
                        value = inner.throw(error)
                else:
                    with make_context():
                        value = inner.send(sent)
        except StopIteration as done:
            return done.value

    return generator


class _NoParamDecorator(_GradModeContext):
    """A context that may also decorate without parentheses: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func: Callable | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


@api.function("no_grad")
class no_grad(_NoParamDecorator):
    """Disable gradient recording: results of ops are leaves that do not require grad."""

    def _target(self) -> bool:
        return False


@api.function("enable_grad")
class enable_grad(_NoParamDecorator):
    def _target(self) -> bool:
        return True


@api.function("set_grad_enabled")
class set_grad_enabled(_GradModeContext):
    """Sets the mode on construction (like torch, it also works as a plain function call)."""

    def __init__(self, mode: bool) -> None:
        self._prev = is_grad_enabled()
        self.mode = bool(mode)
        _set_enabled(self.mode)

    def _target(self) -> bool:
        return self.mode

    def __enter__(self) -> None:
        _set_enabled(self.mode)

    def __call__(self, fn: Callable) -> Callable:
        _set_enabled(self._prev)  # as a decorator it must not leave the mode switched (as torch)
        return super().__call__(fn)

    def clone(self) -> set_grad_enabled:
        return set_grad_enabled(self.mode)  # each call switches the mode, keeping the one before


@api.function("inference_mode")
class inference_mode(_GradModeContext):
    """Like no_grad for this engine (tensors made inside are not recorded)."""

    def __new__(cls, mode: bool | Callable = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # ``@inference_mode`` without parentheses decorates at once, as torch

    def __init__(self, mode: bool | Callable = True) -> None:
        self.mode = bool(mode)

    def _target(self) -> bool:
        return not self.mode  # torch's InferenceMode guard sets grad mode to !enabled, whatever it was

    def __enter__(self) -> None:
        self._prev_inf = is_inference_mode_enabled()
        _state.inference = self.mode
        super().__enter__()

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        _state.inference = self._prev_inf

    def clone(self) -> inference_mode:
        return inference_mode(self.mode)


class forward_level:
    """The forward-AD level in force, process-wide as torch's (which allows one: level 0). A
    tangent is kept on its tensor with the ``token`` of the level it was set at, so that exiting
    the level drops every tangent at once; ``propagating`` is off while a jvp formula runs (its
    ops, on primals and tangents, carry no tangent of their own)."""

    level = -1
    token: object | None = None
    propagating = True


def tangent_of(t: Any) -> Any:
    """``t``'s tangent at the current forward-AD level, or None."""
    fw = getattr(t, "_fw", None)
    return fw[1] if fw is not None and fw[0] is forward_level.token else None


@contextlib.contextmanager
def fw_grad_disabled() -> Iterator[None]:
    """torch's ``AutoFwGradMode(false)``, around a custom Function's forward and jvp: no tangent is
    seen (a fresh token matches none) and none made inside outlives the block."""
    token = forward_level.token
    if token is not None:
        forward_level.token = object()
    try:
        yield
    finally:
        forward_level.token = token


def set_tangent(t: Any, tangent: Any) -> None:
    """Give ``t`` the tangent ``tangent`` at the current level (None: take it away)."""
    t._fw = None if tangent is None else (forward_level.token, tangent)
