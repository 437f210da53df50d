"""torch's public spellings, declared where each op is: ``torch.<name>`` and ``Tensor.<name>``.

An op's module registers its function, its methods (in-place form and aliases included) next to
its declaration, as derivatives.yaml's ``variants: function, method`` does; ``impl/__init__``
exports ``FUNCTIONS`` (its ``__all__`` is their names) and ``_methods.bind`` sets ``METHODS`` on
Tensor. The registry sits at the bottom of impl, so a module of any layer can fill it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

FUNCTIONS: dict[str, Any] = {}  # torch.<name>: functions, classes, dtypes and constants
METHODS: dict[str, Any] = {}  # Tensor.<name>
# Methods whose argument after self torch's parser types as Tensor: its name and whether a Python
# number passes too; or, for methods torch declares twice (a Tensor and a Number overload), its name.
TENSOR_ARGUMENTS: dict[str, tuple[str, bool]] = {}
TENSOR_OR_NUMBER: dict[str, str] = {}
OPERATORS: set[str] = set()  # binary operators: an operand that is no tensor nor number gives NotImplemented
# Functions taking ``out=``: how torch's out= variant writes the result (an ``_signatures.Out``),
# declared with the function (``function(name, out=...)``)
OUT: dict[str, Any] = {}


def _register(table: dict[str, Any], names: tuple[str, ...], value: Any) -> None:
    for name in names:
        if table.get(name, value) is not value:
            raise RuntimeError(f"'{name}' is declared twice: {table[name]!r} and {value!r}")
    table.update(dict.fromkeys(names, value))


def function(*names: str, out: Any = None) -> Callable[[T], T]:
    """Decorator: the object is ``torch.<name>`` for each of ``names``; ``out`` (an
    ``_signatures.Out``) where torch's signatures take ``out=``, its autograd error naming the
    first of ``names`` unless ``out`` names another."""

    def register(fn: T) -> T:
        _register(FUNCTIONS, names, fn)
        if out is not None:
            OUT.update(dict.fromkeys(names, out.named(names[0])))
        return fn

    return register


def method(
    *names: str, tensor: str | None = None, numbers: bool = False, tensor_or_number: str | None = None
) -> Callable[[T], T]:
    """Decorator: the function is ``Tensor.<name>`` for each of ``names``. ``tensor`` names the
    argument after self that torch's parser types as Tensor (a number passes too with ``numbers``);
    ``tensor_or_number`` the one of a method torch declares for a Tensor and for a Number."""

    def register(fn: T) -> T:
        _register(METHODS, names, fn)
        for name in names:
            if tensor is not None:
                TENSOR_ARGUMENTS[name] = (tensor, numbers)
            if tensor_or_number is not None:
                TENSOR_OR_NUMBER[name] = tensor_or_number
        return fn

    return register


def operator(*names: str) -> Callable[[T], T]:
    """Decorator: the function is the binary operator method ``Tensor.<name>`` (``__add__`` ...)."""

    def register(fn: T) -> T:
        _register(METHODS, names, fn)
        OPERATORS.update(names)
        return fn

    return register


def public(value: T, *names: str) -> T:
    """``value`` (a dtype, a constant, a class) is ``torch.<name>`` for each of ``names``."""
    _register(FUNCTIONS, names, value)
    return value


def variants(*names: str, out: Any = None, **options: Any) -> Callable[[T], T]:
    """Decorator: the function is both ``torch.<name>`` and ``Tensor.<name>`` for each of ``names``
    (derivatives.yaml's ``variants: function, method``); ``out`` as ``function``'s (the methods
    take none), ``options`` as ``method``'s."""

    def register(fn: T) -> T:
        return function(*names, out=out)(method(*names, **options)(fn))

    return register
