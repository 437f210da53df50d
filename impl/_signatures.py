"""torch's TypeError for a function called with arguments none of its signatures takes (a None, a
list or a string where a tensor goes), as torch's Python argument parser words it.

torch's parser keeps the signatures whose argument count fits the call ("plausible" ones). With one,
it names the first argument of the wrong type (``sum(): argument 'input' (position 1) must be
Tensor, not NoneType``); otherwise it lists every signature (``pow() received an invalid
combination of arguments - got (NoneType, int), but expected one of: ...``), marking the misfit
arguments of each signature with as many entries (its keyword marker ``*`` counted) as the call
has arguments.

impl's functions call ``invalid_call`` only once their fast ``isinstance`` test of the tensor
arguments failed: the common path pays one ``isinstance`` per tensor argument, nothing more. A
function with one signature is described by its own parameters (annotated ``Tensor`` where torch
takes a tensor); one with several by the signatures torch lists in ``OVERLOADS`` (as its message
prints them).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes, return_types
from impl._grad_mode import INFERENCE_INPLACE, is_grad_enabled, is_inference_mode_enabled
from impl._layout import as_strided_array, contiguous_strides
from impl._names import type_name
from impl._tensor import ArgumentTypeError, Tensor, is_int_like
from impl._warn import warn_once
from impl._xp import namespace_of

ABSENT: Any = object()  # an argument not given (where torch tells None given from none)

# torch's signatures of the functions with several (as torch's error lists them, in its order),
# and of those whose impl parameters do not say which take a tensor
_OUT = "*, Tensor out = None"
_REDUCE_DTYPE = "*, torch.dtype dtype = None"
_VAR = (
    f"(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, {_OUT})",
    "(Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False, "
    "Tensor out = None)",
    "(Tensor input, bool unbiased = True)",
)
_SPREAD_MEAN = tuple(s.replace(f", {_OUT}", "").replace(", Tensor out = None", "") for s in _VAR)
_ALL_ANY = (
    f"(Tensor input, {_OUT})",
    f"(Tensor input, tuple of ints dim = None, bool keepdim = False, {_OUT})",
    f"(Tensor input, int dim, bool keepdim = False, {_OUT})",
)
_MAX = (
    f"(Tensor input, {_OUT})",
    f"(Tensor input, Tensor other, {_OUT})",
    "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)",
)
_MM = (f"(Tensor input, Tensor mat2, {_OUT})", f"(Tensor input, Tensor mat2, torch.dtype out_dtype, {_OUT})")
_COMPARE = (f"(Tensor input, Tensor other, {_OUT})", f"(Tensor input, Number other, {_OUT})")
_AT_LEAST = ("(Tensor input)", "(tuple of Tensors tensors)")
_SPLIT = ("(Tensor input, int sections)", "(Tensor input, tuple of ints indices)")
_CONV = ("(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, {} padding = {}, "
         "tuple of ints dilation = 1, int groups = 1)")
_CONV_TRANSPOSE = (
    "(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, tuple of ints padding = 0, "
    "tuple of ints output_padding = 0, int groups = 1, tuple of ints dilation = 1)",
)
OVERLOADS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("atleast_1d", "atleast_2d", "atleast_3d"), _AT_LEAST),
    "one_hot": ("(Tensor input, int num_classes = -1)",),
    "histc": ("(Tensor input, int bins = 100, Number min = 0, Number max = 0, *, Tensor out = None)",),
    "tensor_split": (
        "(Tensor input, tuple of ints indices, int dim = 0)",
        "(Tensor input, Tensor tensor_indices_or_sections, int dim = 0)",
        "(Tensor input, int sections, int dim = 0)",
    ),
    "hsplit": _SPLIT,
    "vsplit": _SPLIT,
    "dsplit": _SPLIT,
    "sum": (
        f"(Tensor input, {_REDUCE_DTYPE})",
        f"(Tensor input, tuple of ints dim, bool keepdim = False, {_REDUCE_DTYPE}, Tensor out = None)",
    ),
    "mean": (
        f"(Tensor input, {_REDUCE_DTYPE}, Tensor out = None)",
        f"(Tensor input, tuple of ints dim, bool keepdim = False, {_REDUCE_DTYPE}, Tensor out = None)",
    ),
    "prod": (
        f"(Tensor input, {_REDUCE_DTYPE})",
        f"(Tensor input, int dim, bool keepdim = False, {_REDUCE_DTYPE}, Tensor out = None)",
    ),
    "var": _VAR,
    "all": _ALL_ANY,
    "any": _ALL_ANY,
    "count_nonzero": ("(Tensor input, int dim = None)", "(Tensor input, tuple of ints dim)"),
    "std": _VAR,
    "var_mean": _SPREAD_MEAN,
    "std_mean": _SPREAD_MEAN,
    "max": _MAX,
    "min": _MAX,
    "mm": _MM,
    "bmm": _MM,
    "addmm": (
        "(Tensor input, Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1, Tensor out = None)",
        "(Tensor input, Tensor mat1, Tensor mat2, torch.dtype out_dtype, *, Number beta = 1, "
        "Number alpha = 1, Tensor out = None)",
    ),
    "where": (
        "(Tensor condition)",
        f"(Tensor condition, Tensor input, Tensor other, {_OUT})",
        "(Tensor condition, Number self, Tensor other)",
        "(Tensor condition, Tensor input, Number other)",
        "(Tensor condition, Number self, Number other)",
    ),
    "searchsorted": (
        "(Tensor sorted_sequence, Tensor input, *, bool out_int32 = False, bool right = False, "
        "str side = None, Tensor sorter = None, Tensor out = None)",
        "(Tensor sorted_sequence, Number self, *, bool out_int32 = False, bool right = False, "
        "str side = None, Tensor sorter = None, Tensor out = None)",
    ),
    "bucketize": (
        "(Tensor input, Tensor boundaries, *, bool out_int32 = False, bool right = False, Tensor out = None)",
        "(Number self, Tensor boundaries, *, bool out_int32 = False, bool right = False)",
    ),
    "clamp": (
        f"(Tensor input, Tensor min = None, Tensor max = None, {_OUT})",
        f"(Tensor input, Number min = None, Number max = None, {_OUT})",
    ),
    **{
        name: (f"(Tensor input, Tensor {bound}, {_OUT})", f"(Tensor input, Number {bound}, {_OUT})")
        for name, bound in (("clamp_min", "min"), ("clamp_max", "max"))
    },
    "pow": (
        f"(Tensor input, Tensor exponent, {_OUT})",
        f"(Number self, Tensor exponent, {_OUT})",
        f"(Tensor input, Number exponent, {_OUT})",
    ),
    "masked_fill": ("(Tensor input, Tensor mask, Tensor value)", "(Tensor input, Tensor mask, Number value)"),
    "squeeze": ("(Tensor input)", "(Tensor input, int dim)", "(Tensor input, tuple of ints dim)"),
    "view": ("(Tensor input, torch.dtype dtype)", "(Tensor input, tuple of ints size)"),
    "expand": ("(Tensor input, tuple of ints size, *, bool implicit = False)",),
    "movedim": (
        "(Tensor input, int source, int destination)",
        "(Tensor input, tuple of ints source, tuple of ints destination)",
    ),
    "sort": (
        "(Tensor input, *, bool stable, int dim = -1, bool descending = False, tuple of Tensors out = None)",
        "(Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None)",
    ),
    "argsort": (
        "(Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out = None)",
        "(Tensor input, int dim = -1, bool descending = False)",
    ),
    "narrow": (
        "(Tensor input, int dim, Tensor start, int length)",
        "(Tensor input, int dim, int start, int length)",
    ),
    "rsub": (
        "(Tensor input, Tensor other, *, Number alpha = 1)",
        "(Tensor input, Number other, Number alpha = 1)",
    ),
    "round": (f"(Tensor input, {_OUT})", "(Tensor input, *, int decimals, Tensor out = None)"),
    "scatter": (
        f"(Tensor input, int dim, Tensor index, Tensor src, {_OUT})",
        "(Tensor input, int dim, Tensor index, Tensor src, *, str reduce, Tensor out = None)",
        f"(Tensor input, int dim, Tensor index, Number value, {_OUT})",
        "(Tensor input, int dim, Tensor index, Number value, *, str reduce, Tensor out = None)",
    ),
    "index_add": (
        "(Tensor input, int dim, Tensor index, Tensor source, *, Number alpha = 1, Tensor out = None)",
    ),
    "index_copy": (f"(Tensor input, int dim, Tensor index, Tensor source, {_OUT})",),
    "index_fill": (
        "(Tensor input, int dim, Tensor index, Tensor value)",
        "(Tensor input, int dim, Tensor index, Number value)",
    ),
    "linalg_vector_norm": (
        "(Tensor input, Number ord = 2, tuple of ints dim = None, bool keepdim = False, *, "
        "ScalarType dtype = None, Tensor out = None)",
    ),
    **dict.fromkeys(("conv1d", "conv2d"), (_CONV.format("tuple of ints", 0), _CONV.format("str", '"valid"'))),
    **dict.fromkeys(("conv_transpose1d", "conv_transpose2d"), _CONV_TRANSPOSE),
    **{name: _COMPARE for name in ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
                                    "less_equal", "not_equal")},
    **{
        name: (_COMPARE[0], "(Number self, Tensor other)", _COMPARE[1])
        for name in ("bitwise_and", "bitwise_or", "bitwise_xor")
    },
    **{name: _COMPARE[:1] for name in ("logical_and", "logical_or", "logical_xor")},
}


class _IntList(str):
    """The kind "tuple of ints" of a parameter that one int does not fit (torch's int[] of no size,
    impl's ``DimList``): printed as the other, refusing what is not a sequence."""


def _takes(kind: str, value: Any) -> bool:
    """Whether torch's parser takes ``value`` for a parameter of type ``kind``."""
    if kind == "Tensor":
        return isinstance(value, Tensor)
    if kind == "Number":
        return isinstance(value, (int, float, complex)) or (isinstance(value, Tensor) and value.dim() == 0)
    if kind == "int":
        return is_int_like(value)
    if kind == "float":  # a Python or NumPy number (a bool too), a 0-d tensor requiring no grad
        if isinstance(value, Tensor):
            return value.dim() == 0 and not value.requires_grad
        return isinstance(value, (int, float, np.integer, np.floating))
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "torch.dtype":
        return isinstance(value, dtypes.dtype)
    if kind == "str":
        return isinstance(value, str)
    if kind == "tuple of Tensors":
        return isinstance(value, (tuple, list)) and all(isinstance(v, Tensor) for v in value)
    if kind == "tuple of ints":  # torch's parser tests a list's first element only
        if isinstance(kind, _IntList) and not isinstance(value, (tuple, list)):
            return False
        items = value if isinstance(value, (tuple, list)) else (value,)
        return not items or is_int_like(items[0])
    return True  # what impl's functions check themselves (dtypes, ...)


# the functions whose Tensor parameters torch's parser also takes a Python number for (``add(1.5, x)``,
# an out= too: python_arg_parser's should_allow_numbers_as_tensors)
_NUMBERS_AS_TENSORS = ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide")
NUMBERS_AS_TENSORS = frozenset(n + end for n in (*_NUMBERS_AS_TENSORS, "floor_divide") for end in ("", "_"))


def _takes_in(name: str, kind: str, value: Any) -> bool:
    """``_takes`` in function ``name``'s parser."""
    number = isinstance(value, (int, float, complex, np.number))
    return (number and kind == "Tensor" and name in NUMBERS_AS_TENSORS) or _takes(kind, value)


def described(value: Any) -> str:
    """A value's type as torch's list of signatures shows it: a list or tuple with its elements'.
    The list marks a value as misfit when this differs from the parameter's type as written
    (no number fits ``Number``, no tuple ``tuple of ints``: torch compares the names)."""
    if isinstance(value, list):
        return f"list of [{', '.join(type_name(v) for v in value)}]"
    if isinstance(value, tuple):
        names = [type_name(v) for v in value]
        return f"tuple of ({', '.join(names)}{',' if len(names) == 1 else ''})"
    return type_name(value)


HIDDEN = "hidden "  # the mark of a hidden signature in ``OVERLOADS``


class _Signature:
    """One signature: its positional and keyword-only parameters as (type, name, has a default)."""

    def __init__(self, text: str) -> None:
        self.hidden = text.startswith(HIDDEN)  # a deprecated signature torch takes but never lists
        text = text.removeprefix(HIDDEN)
        self.text = text
        self.positional: list[tuple[str, str, bool]] = []
        self.keyword: list[tuple[str, str, bool]] = []
        # torch's list parses each printed signature again, splitting it at ", " (the keyword marker
        # "*" is an entry, and "()" one entry of no type): an entry's type is its text up to the
        # last space and its name what follows (a default's value where it has one); it marks a
        # signature's misfits when a call passes as many arguments as it has entries
        self.entries: list[str] = []
        self.names: list[str] = []
        self.spread = False  # impl's parameters end in untyped ``*args`` (no arity of torch's known)
        into = self.positional
        for part in text[1:-1].split(", "):
            kind_end = part.rfind(" ")
            self.entries.append(part[:kind_end] if kind_end >= 0 else part)
            self.names.append(part[kind_end + 1 :])
            if part == "*":
                into = self.keyword
            elif part:
                declaration, _, default = part.partition(" = ")
                kind, _, name = declaration.rpartition(" ")
                into.append((kind, name, default or False))  # (its default's text)

    def plausible(self, given: int, args: tuple = ()) -> bool:
        """torch's arity test: the required parameters at most, all parameters at least (sizes
        given spread count as one, ``view(2, 3)``)."""
        params = self.positional + self.keyword
        if self.spreads(args):
            given -= len(args) - 1
        return sum(not optional for _, _, optional in params) <= given <= len(params)

    def spreads(self, args: tuple) -> bool:
        """Whether ``args`` are the spread ints of this signature's one positional list of ints."""
        one = len(self.positional) == 1 and self.positional[0][0] == "tuple of ints"
        return one and len(args) > 1 and is_int_like(args[0])

    def method(self) -> _Signature | None:
        """The signature of the Tensor method of this function's overload, as torch's method
        parser lists it: without ``Tensor input`` (self) and the ``out`` argument, none where the
        overload takes no tensor input (``pow(Number self, Tensor exponent)``)."""
        parts = self.text[1:-1].split(", ")
        if "Tensor input" not in parts:
            return None
        parts = [p for p in parts if p != "Tensor input" and not p.endswith(" out = None")]
        if parts and parts[-1] == "*":
            parts.pop()
        return _Signature(f"{HIDDEN * self.hidden}({', '.join(parts)})")


def _wrong_argument(
    name: str, params: list[tuple[str, str, bool]], args: tuple, kwargs: dict | None = None
) -> TypeError | None:
    """The single-signature error for the first argument of the wrong type: a positional one named
    with its position, then a keyword one (``argument 'decimals' must be int, not str``)."""
    for position, ((kind, param, optional), value) in enumerate(zip(params, args, strict=False), 1):
        none = value is None and optional == "None" and kind in NULLABLE
        if not _takes_in(name, kind, value) and not none:
            where = f"argument '{param}' (position {position})"
            if kind == "tuple of ints" and isinstance(value, (tuple, list)):  # its first element misfits
                return TypeError(f"{name}(): {where} must be {kind}, but found element of type "
                                 f"{type_name(value[0])} at pos 0")
            return TypeError(f"{name}(): {where} must be {kind}, not {type_name(value)}")
    kinds = {param: kind for kind, param, _ in params}
    optional = {param for kind, param, default in params if default == "None" and kind in NULLABLE}
    for param, value in (kwargs or {}).items():
        none = value is None and param in optional
        if param in kinds and not _takes_in(name, kinds[param], value) and not none:
            return TypeError(f"{name}(): argument '{param}' must be {kinds[param]}, not {type_name(value)}")
    return None


MATCHING_NAMES = {"int": ("int", "long"), "float": ("float", "int", "long")}
NULLABLE = ("Tensor", "int", "tuple of ints")  # the types whose parameters with a default take None


def _listed(items: list[str], positional: bool) -> str:
    """torch's "(...)" of a call's arguments: a trailing ", " is cut only when some argument is
    positional (``got (dim=str, )``)."""
    text = "".join(f"{item}, " for item in items)
    return f"({text[:-2] if positional else text})"


def _invalid_combination(name: str, signatures: list[_Signature], args: tuple, kwargs: dict) -> TypeError:
    """torch's list of every signature, each misfit one marked when it has as many entries as the
    call has arguments: by its keywords not among its last entries, else by the arguments whose
    type's name is not the entry's type (torch's ``format_invalid_args``)."""
    keywords = [f"{k}={type_name(v)}" for k, v in reversed(kwargs.items())]  # torch's unordered_map order
    got = _listed([type_name(v) for v in args] + keywords, bool(args))
    signatures = [s for s in signatures if not s.hidden]
    header = f"{name}() received an invalid combination of arguments - got"
    if len(signatures) == 1:  # one listed: an unknown keyword named, or the misfits marked in the call
        unknown = [k for k in reversed(kwargs) if k not in signatures[0].names]
        if unknown:
            return TypeError(f"{header} unrecognized keyword arguments: {', '.join(unknown)}")
        wrong, marked = _misfits(signatures[0], args, kwargs)
        return TypeError(f"{header} {marked or got}, but expected {signatures[0].text}")
    lines = [f"{header} {got}, but expected one of:"]
    for signature in signatures:
        lines.append(f" * {signature.text}")
        wrong, marked = _misfits(signature, args, kwargs)
        because = "      didn't match because some of the"
        if wrong:
            lines.append(f"{because} keywords were incorrect: {', '.join(wrong)}")
        elif marked:
            lines.append(f"{because} arguments have invalid types: {marked}")
    return TypeError("\n".join(lines) + "\n")


def _misfits(signature: _Signature, args: tuple, kwargs: dict) -> tuple[list[str], str | None]:
    """Why ``signature`` does not take the call, when it has as many entries as the call has
    arguments: the keywords not among its last entries, else the call with the arguments marked
    whose type's name is not the entry's type."""
    if len(signature.entries) != len(args) + len(kwargs):
        return [], None
    last = signature.names[len(signature.names) - len(kwargs) :] if kwargs else []
    wrong = [k for k in reversed(kwargs) if k not in last]  # torch's unordered_map order
    if wrong:
        return wrong, None
    marked = []
    for i, (kind, entry) in enumerate(zip(signature.entries, signature.names, strict=True)):
        value, key = (args[i], "") if i < len(args) else (kwargs[entry], f"{entry}=")
        fits = type_name(value) in MATCHING_NAMES.get(kind, (kind,))
        marked.append(f"{key}{described(value)}" if fits else f"!{key}{described(value)}!")
    return [], _listed(marked, bool(args))


def _given(fn: Callable, values: dict[str, Any]) -> tuple[tuple, dict]:
    """The arguments of a call of ``fn`` whose parameters had ``values`` (its ``locals()`` on
    entry), as torch would have received them: the positional parameters up to the last one not
    at its default (taken as passed positionally), the keyword-only ones not at their defaults."""
    args: list = []
    kwargs: dict = {}
    last = 0
    for param in inspect.signature(fn).parameters.values():
        value = values[param.name]
        if param.kind is param.VAR_POSITIONAL:
            args.extend(value)
            last = len(args)
        elif param.kind is param.VAR_KEYWORD:
            kwargs.update(value)
        elif param.kind is param.KEYWORD_ONLY:
            if value is not param.default:
                kwargs[param.name] = value
        else:
            args.append(value)
            if param.default is param.empty or value is not param.default:
                last = len(args)
    return tuple(args[:last]), kwargs


TENSOR_ANNOTATIONS = ("Tensor", "Tensor | None")  # impl's parameters that torch's take as Tensor
# impl's annotations of the parameters torch's parser types as int, a list of ints (``Dims``: a dim,
# or sizes, given as one int or a sequence), bool; a ``*sizes: Dims`` is torch's one list of ints
# that may be given spread
PARSED_ANNOTATIONS = {
    "int": "int", "int | None": "int", "Dims": "tuple of ints", "Dims | None": "tuple of ints",
    "DimList": "tuple of ints",
    "bool": "bool",
}  # fmt: skip


class _Call:
    """A call that none of torch's signatures of function ``name`` takes: the signatures (torch's
    ``OVERLOADS``, else one made of impl's parameters, typed ``Tensor`` where annotated so) and the
    arguments as torch received them."""

    def __init__(self, name: str, signatures: list[_Signature], args: tuple, kwargs: dict) -> None:
        self.name, self.signatures, self.args, self.kwargs = name, signatures, args, kwargs

    def error(self) -> TypeError:
        """torch's TypeError (``found``); where these arguments fit (``invalid_call`` read a keyword
        as positional: ``var(x, dim=True)`` as ``var(x, True)``), one the public function's wrapper
        words again from the call as given (``reparse``)."""
        error = self.found()
        if error is None:
            return ArgumentTypeError(f"{self.name}(): a call that none of torch's signatures takes")
        return error

    def found(self) -> TypeError | None:
        """torch's TypeError, None where torch takes the call: a list of ints that does not unpack
        where a signature takes the call; the first misfit argument's when one signature's arity
        fits the call; else the list of every signature."""
        given = len(self.args) + len(self.kwargs)
        one = len(self.signatures) == 1
        plausible = [s for s in self.signatures if one or (s.plausible(given, self.args) and not s.hidden)]
        error = None
        for signature in plausible:
            if _parse(self.name, signature, self.args, self.kwargs, unpack=False) is None:
                error = _parse(self.name, signature, self.args, self.kwargs)
                if error is None:
                    return None
                break
        if error is None and len(plausible) == 1:
            error = _parse(self.name, plausible[0], self.args, self.kwargs)
        if error is None:
            if len(self.signatures) == 1:
                return None
            error = _invalid_combination(self.name, self.signatures, self.args, self.kwargs)
        error.call = self  # type: ignore[attr-defined]
        return error

    def method(self, self_: Any) -> _Call | None:
        """The same call made as method of ``self_`` (``x.scatter(0, i, src=1.0)``), when ``self_``
        was its input: the method's signatures, ``self_`` left out of the arguments."""
        methods = [m for m in (s.method() for s in self.signatures) if m is not None]
        inputs = [s for s in self.signatures if ("Tensor", "input", False) in s.positional]
        if not inputs:
            return None
        position = inputs[0].positional.index(("Tensor", "input", False))
        if position >= len(self.args) or self.args[position] is not self_:
            return None
        args = self.args[:position] + self.args[position + 1 :]
        return _Call(self.name, methods, args, self.kwargs)


def _impl_signature(fn: Callable, skip: int = 0) -> _Signature:
    """The torch signature of an impl function with one: its parameters (after the first ``skip``:
    a method's self), ``Tensor`` where annotated so, of no type (one impl checks itself)
    otherwise."""
    parts: list[str] = []
    params = list(inspect.signature(fn).parameters.values())[skip:]
    for p in params:
        if p.kind is p.KEYWORD_ONLY and "*" not in parts:
            parts.append("*")
        if p.kind is p.VAR_POSITIONAL and p.annotation == "Dims":
            parts.append(f"tuple of ints {p.name}")
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        kind = "Tensor" if p.annotation in TENSOR_ANNOTATIONS or p.name == "input" else "?"
        kind = PARSED_ANNOTATIONS.get(p.annotation, kind)
        required = p.default is p.empty or type(p.default) is object  # (a sentinel: torch's required)
        default = "" if required else " = None" if p.default is None else " = ..."
        parts.append(f"{kind} {p.name}{default}")
    signature = _Signature(f"({', '.join(parts)})")
    signature.spread = any(p.kind is p.VAR_POSITIONAL and p.annotation != "Dims" for p in params)
    lists = {p.name for p in params if p.annotation == "DimList"}
    for entries in (signature.positional, signature.keyword):
        entries[:] = [(_IntList(k) if n in lists else k, n, d) for k, n, d in entries]
    return signature


def invalid_call(fn: Callable, values: dict[str, Any], name: str | None = None) -> TypeError:
    """torch's TypeError for a call of ``fn`` (named ``name`` in torch, else as itself) whose
    parameters had ``values`` (its ``locals()`` on entry) when one of them is no tensor. The error
    keeps the call (``call``) so that a method can word it as torch's method parser does
    (``method_error``)."""
    name = name or fn.__name__
    args, kwargs = _given(fn, values)
    overloads = OVERLOADS.get(name)
    signatures = [_impl_signature(fn)] if overloads is None else [_Signature(text) for text in overloads]
    return _Call(name, signatures, args, kwargs).error()


def signatures_of(fn: Callable, name: str, method: bool = False) -> list[_Signature]:
    """torch's signatures of function (or method) ``name``, impl's ``fn``: ``OVERLOADS``, else
    one of ``fn``'s typed parameters; a method's without self and out."""
    texts = OVERLOADS.get(name) or OVERLOADS.get(getattr(fn, "__name__", ""))
    signatures = [_impl_signature(fn)] if texts is None else [_Signature(text) for text in texts]
    if method and any("Tensor input" in s.text for s in signatures):  # (else a method's own)
        signatures = [m for m in (s.method() for s in signatures) if m is not None]
    return signatures


def reparse(
    error: TypeError, fn: Callable, name: str, args: tuple, kwargs: dict, method: bool = False
) -> TypeError:
    """``error``, raised by the call ``fn(*args, **kwargs)`` of function or method ``name``
    (``args`` without self for a method), as torch's parser words it from the call as given (a
    keyword stays a keyword) when impl refused an argument (``ArgumentTypeError``) or its function
    ``invalid_call`` refused the call; ``error`` itself where torch's signatures take the call."""
    call = getattr(error, "call", None)
    python = error.__traceback__ is not None and error.__traceback__.tb_next is None  # fn's binding
    own = isinstance(call, _Call) and call.name in (name.rstrip("_"), getattr(fn, "__name__", name))
    other = isinstance(call, _Call) and not (method and own)  # argmax's of max (own: method_error)
    if not (python or isinstance(error, ArgumentTypeError) or other):
        return error
    if isinstance(call, _Call) and call.name.startswith("_"):  # torch names its internal op (_unique2)
        name = call.name
    return _Call(name, signatures_of(fn, name, method), args, kwargs).found() or error


def parse_error(name: str, args: tuple, kwargs: dict) -> TypeError:
    """torch's TypeError for a call of ``name`` (one of ``OVERLOADS``) with ``args`` and ``kwargs``
    as given that none of its signatures takes. With one signature, in the order torch's parser
    finds them: too many positional arguments; then, parameter by parameter, one of the wrong type
    or a required one missing (listed with the required ones after it, torch's plural for one
    missing included); then an unknown or doubly given keyword. With several: the list of them."""
    signatures = [_Signature(text) for text in OVERLOADS[name]]
    if len(signatures) > 1:
        return _Call(name, signatures, args, kwargs).error()
    error = _parse(name, signatures[0], args, kwargs)
    if error is None:
        raise AssertionError(f"parse_error: {name}() takes every argument given")
    return error


def _parse(
    name: str, signature: _Signature, args: tuple, kwargs: dict, unpack: bool = True
) -> TypeError | None:
    """torch's parser's error for a call of one signature, None where it takes the call (a list
    of ints that does not unpack left unchecked unless ``unpack``)."""
    params = signature.positional + signature.keyword
    positional = signature.positional
    if signature.spreads(args):
        args = (args,)  # torch's varargs sizes or dims (view(2, 3))
    if len(args) > len(positional) and not signature.spread:
        required = sum(not optional for _, _, optional in params)  # (torch's min_args: keywords too)
        many, given = len(positional), len(args)
        if required != many:
            return TypeError(f"{name}() takes from {required} to {many} positional arguments but {given} "
                             "were given")
        return TypeError(f"{name}() takes {many} positional argument{'s' * (many != 1)} but {given} "
                         f"{'was' if given == 1 else 'were'} given")
    for index, (_, param, optional) in enumerate(params):
        if index < len(args):  # (those before it fit)
            error = _wrong_argument(name, params[:index + 1], args[:index + 1])
            if error is not None:
                return error
        elif param in kwargs:
            error = _wrong_argument(name, params, (), {param: kwargs[param]})
            if error is not None:
                return error
        elif not optional:
            missing = [f'"{p}"' for _, p, has_default in params[index:] if not has_default]
            plural = "" if len(missing) > 1 else "s"  # sic
            return TypeError(f"{name}() missing {len(missing)} required positional argument{plural}: "
                             f"{', '.join(missing)}")
    names = [param for _, param, _ in params]
    for key in kwargs:
        if key not in names:
            return TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        if names.index(key) < len(args):
            return TypeError(f"{name}() got multiple values for argument '{key}'")
    return _unpack_error(name, params, args, kwargs) if unpack else None


def _unpack_error(name: str, params: list, args: tuple, kwargs: dict) -> TypeError | None:
    """torch's error where a list of ints the parser took (by its first element) does not unpack."""
    for index, (kind, param, _) in enumerate(params):
        value = args[index] if index < len(args) else kwargs.get(param)
        if kind != "tuple of ints" or not isinstance(value, (tuple, list)):
            continue
        for pos, item in enumerate(value[1:], 2):
            if not (is_int_like(item) or isinstance(item, bool)):
                return TypeError(f"{name}(): argument '{param}' failed to unpack the object at pos {pos} "
                                 f'with error "type must be tuple of ints,but got {type_name(item)}"')
    return None


def method_error(error: TypeError, self: Any, name: str, function: str) -> TypeError:
    """``error``, raised by ``invalid_call`` in Tensor method ``name`` of ``self`` (bound to impl's
    ``function``), as torch's method parser words it: named for the method (``clip``, ``lerp_``),
    without self among the arguments, positions counted after it, the method's signatures (no
    ``Tensor input``, no ``out``). An error of another call (a function the method calls on a
    tensor of its own) or of no parse is kept as it is."""
    call = getattr(error, "call", None)
    if not isinstance(call, _Call) or call.name not in (name.rstrip("_"), function):
        return error
    method = call.method(self)
    if method is None:
        return error
    method.name = name
    return method.error()


# NumPy's spellings torch's parser takes for these parameters, first found first taken
# (python_arg_parser.cpp's numpy_compatibility_arg_names); only the functions and methods torch
# parses in C take them, not those torch defines in Python (torch.functional, torch._tensor)
NUMPY_NAMES: dict[str, tuple[str, ...]] = {
    "dim": ("axis",),
    "keepdim": ("keepdims",),
    "input": ("x", "a", "x1"),
    "other": ("x2",),
}
NUMPY_ALIASES = frozenset(alias for aliases in NUMPY_NAMES.values() for alias in aliases)
PYTHON_DEFINED = frozenset({
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_tensors", "cdist", "einsum", "get_default_device",
    "get_rng_state", "initial_seed", "is_tensor", "is_warn_always_enabled", "load", "manual_seed",
    "meshgrid", "norm", "save", "seed", "set_default_device", "set_default_dtype", "set_printoptions",
    "set_rng_state", "set_warn_always", "split", "unique", "unique_consecutive",
})  # fmt: skip
PYTHON_METHODS = frozenset({"norm", "split", "unflatten"})  # Tensor's methods torch defines in Python
UNPARSED = frozenset({"set_num_threads"})  # torch's C functions reading their arguments themselves


class Spellings:
    """What torch's parser reads NumPy's spellings into for one function or method: the parameters
    they name, each with its position (None where it cannot be given by position; a method's self
    takes none, torch's method parser does not list it), and every parameter's name."""

    def __init__(self, fn: Callable, name: str, method: bool = False) -> None:
        self.name = name
        self.params = frozenset(inspect.signature(fn).parameters)
        self.targets: list[tuple[str, int | None]] = []
        python = PYTHON_METHODS if method else PYTHON_DEFINED
        position: int | None = 0
        for index, p in enumerate(inspect.signature(fn).parameters.values()):
            if p.kind is p.VAR_POSITIONAL:
                position = None
            elif p.name in NUMPY_NAMES and not (method and index == 0) and name not in python:
                positional = p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and position is not None
                self.targets.append((p.name, index if positional else None))

    def renamed(self, nargs: int, kwargs: dict) -> dict:
        """``kwargs`` with NumPy's spellings renamed as torch's parser reads them: a parameter given
        neither by position nor by name takes its first alias given. One left over is torch's
        TypeError, which names the first keyword that is no parameter's own name (``sum() got an
        unexpected keyword argument 'axis'``)."""
        taken: dict[str, str] = {}
        for param, position in self.targets:
            if param in kwargs or (position is not None and position < nargs):
                continue
            alias = next((a for a in NUMPY_NAMES[param] if a in kwargs), None)
            if alias is not None:
                taken[alias] = param
        if any(key in NUMPY_ALIASES and key not in taken for key in kwargs):
            key = next(k for k in kwargs if k in NUMPY_ALIASES or k not in self.params)
            raise TypeError(f"{self.name}() got an unexpected keyword argument '{key}'")
        return {taken.get(key, key): value for key, value in kwargs.items()}


class _Precheck:
    """A quick test of a call against torch's signatures of a function, by its arguments' number,
    names and types, made before the call as torch's parser parses before it runs: a call that no
    signature takes is parsed in full (``_Call.found``), which raises torch's TypeError. Parameters
    of no known type (impl's own checks) and impl's untyped ``*args``/``**kwargs`` take anything."""

    def __init__(self, name: str, signatures: list[_Signature], open_keywords: bool = False) -> None:
        self.name, self.signatures, self.open_keywords = name, signatures, open_keywords
        # per signature: its positional (kind, name, required) and every parameter's kind by name
        self.forms = [
            (
                s,
                [(_kind(k, d), p, not d) for k, p, d in s.positional],
                {p: _kind(k, d) for k, p, d in s.positional + s.keyword},
                {p for _, p, d in s.keyword if not d},
            )
            for s in signatures
        ]

    def _fits(self, value: Any, kind: str) -> bool:
        """Whether ``kind`` takes ``value``. None fits a tensor of default None, and is left to
        impl's own checks elsewhere: torch's printed signatures do not tell its other optional
        parameters (``bool? stable`` prints as ``bool stable``, ``sort(x, stable=None)`` is
        taken)."""
        if value is None:
            return kind != "Tensor"
        return kind == "?" or _takes_in(self.name, kind, value)

    def _accepts(self, form: tuple, args: tuple, kwargs: dict) -> bool:
        signature, positional, kinds, required = form
        if signature.spread:  # (impl's untyped ``*args``)
            return True
        if signature.spreads(args):
            args = (args,)  # sizes or dims given spread (``zeros(2, 3)``)
        if len(args) > len(positional):
            return False
        unknown = False  # after an argument impl checks itself, torch would check that one first
        for i, (kind, param, needed) in enumerate(positional):
            if i < len(args):
                unknown = unknown or kind == "?"
                if param in kwargs or not (unknown or self._fits(args[i], kind)):
                    return False
            elif needed and param not in kwargs:
                return False
        if not required.issubset(kwargs):
            return False
        for key, value in kwargs.items():
            kind = kinds.get(key)
            if kind is None:
                if not self.open_keywords:
                    return False
            elif not self._fits(value, kind):
                return False
        return True

    def check(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """The call's arguments, those of a hidden deprecated signature (``add(x, 2, y)``) given
        again for the listed one, with torch's warning; torch's TypeError for a call none of the
        signatures takes."""
        for form in self.forms:
            if self._accepts(form, args, kwargs):
                hidden = form[0].hidden
                return self._deprecated(form[0], args, kwargs) if hidden else (args, kwargs)
        error = _Call(self.name, self.signatures, args, kwargs).found()
        if error is not None:
            raise error
        return args, kwargs

    def _deprecated(self, hidden: _Signature, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """A call of ``hidden``'s, warned as torch warns once per process (for any such call), as a
        call of the listed signature of the same parameters: positional where it has them."""
        listed = [s for s in self.signatures if not s.hidden]
        instead = "".join(f"\n\t{self.name}{s.text}" for s in listed)
        warn_once(
            "deprecated overload",
            f"This overload of {self.name} is deprecated:\n\t{self.name}{hidden.text}\nConsider using one of "
            f"the following signatures instead:{instead} (Triggered internally at "
            "/__w/pytorch/pytorch/torch/csrc/utils/python_arg_parser.cpp:1841.)",
            stacklevel=4,  # (the caller of the public function or method)
        )
        values = {**dict(zip([p for _, p, _ in hidden.positional], args, strict=False)), **kwargs}
        names = {p for _, p, _ in hidden.positional + hidden.keyword}
        target = next(s for s in listed if {p for _, p, _ in s.positional + s.keyword} == names)
        given = [p for _, p, _ in target.positional if p in values]
        return tuple(values.pop(p) for p in given), values


def _kind(kind: str, default: str | bool) -> str:
    """A parameter's kind for ``_Precheck``: a tensor of default None as taking anything."""
    return "?" if kind == "Tensor" and default == "None" else kind


def precheck(fn: Callable, name: str) -> _Precheck | None:
    """The precheck of function ``fn`` (``torch.<name>``): by torch's signatures (``OVERLOADS``),
    else by ``fn``'s typed parameters; None where neither types anything."""
    if name in PYTHON_DEFINED or name in UNPARSED:
        return None
    texts = OVERLOADS.get(name) or OVERLOADS.get(getattr(fn, "__name__", ""))
    if texts is not None:
        return _Precheck(name, [_Signature(text) for text in texts])
    signature = _impl_signature(fn)
    if not any(k != "?" for k, _, _ in signature.positional + signature.keyword):
        return None
    if name in api.OUT:  # (the wrapper's ``out``, checked by ``_into``)
        signature.keyword.append(("?", "out", "None"))
    params = inspect.signature(fn).parameters.values()
    return _Precheck(name, [signature], open_keywords=any(p.kind is p.VAR_KEYWORD for p in params))


def method_precheck(fn: Callable, name: str) -> _Precheck | None:
    """The precheck of Tensor method ``name``, impl's ``fn`` (self first): by torch's signatures
    of the method (``OVERLOADS``), else of its function or (an in-place method) of the method out
    of place, without self; else by ``fn``'s parameters after self, or (``fn`` taking ``*args``)
    its typed function's. None for the methods torch defines in Python and those taking nothing
    (Python's own errors)."""
    params = list(inspect.signature(fn).parameters.values())
    if name in PYTHON_METHODS or len(params) == 1:
        return None
    for key in (name, name.rstrip("_"), getattr(fn, "__name__", "")):
        signatures = [_Signature(text) for text in OVERLOADS.get(key, ())]
        if any("Tensor input" in s.text for s in signatures):  # a function's
            return _Precheck(name, [m for m in (s.method() for s in signatures) if m is not None])
        if signatures and key == name:  # the method's own
            return _Precheck(name, signatures)
    if params[1].kind is not params[1].VAR_POSITIONAL:
        signature = _impl_signature(fn, skip=1)
        return _Precheck(name, [signature], open_keywords=any(p.kind is p.VAR_KEYWORD for p in params))
    function = api.FUNCTIONS.get(name)  # a method taking ``*args``: its function's, where typed
    if not inspect.isfunction(function) or precheck(function, name) is None:
        return None
    method = _impl_signature(function).method()
    return None if method is None or not method.entries[0] else _Precheck(name, [method])


def numpy_names(fn: Callable, name: str) -> Callable:
    """Function ``fn`` (``torch.<name>``) taking NumPy's spellings of its parameters as torch's
    parser does, and ``out=`` where its declaration says torch's signatures have it (``api.OUT``);
    ``fn`` itself where neither applies."""
    spellings = Spellings(fn, name)
    takes_out = name in api.OUT
    checks = precheck(fn, name)
    if not spellings.targets and not takes_out and checks is None:
        return fn

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if kwargs and not NUMPY_ALIASES.isdisjoint(kwargs):
            kwargs = spellings.renamed(len(args), kwargs)
        if checks is not None:
            args, kwargs = checks.check(args, kwargs)
        try:
            if takes_out and kwargs.get("out") is not None:
                return _into(name, fn, args, kwargs)
            kwargs.pop("out", None) if takes_out else None
            return fn(*args, **kwargs)
        except TypeError as error:
            new = reparse(error, fn, name, args, kwargs)
            raise named(error, fn, name) if new is error else new from None

    return call


# a dtype as torch's TypeMeta names it (its C++ type), as out='s exact-dtype errors print it
TYPE_META_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
    "uint8": "unsigned char", "bool": "bool",
    "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}  # fmt: skip
OUT_RESIZED = (
    "An output with one or more elements was resized since it had shape {old}, which does not match the "
    "required output shape {new}. This behavior is deprecated, and in a future PyTorch release outputs will "
    "not be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing "
    "it, inplace, to zero elements with t.resize_(0). (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)"
)
# The words of an out= dtype error: {out} and {result} name out's and the result's dtypes as
# ScalarType does (Float), {out_cpp} and {result_cpp} as TypeMeta does (float), {name} the function
CANT_CAST = "result type {result} can't be cast to the desired output type {out}"
FOUND = "Found dtype {out} but expected {result}"
EXPECTED = "Expected out tensor to have dtype {result_cpp}, but got {out_cpp} instead"


@dataclasses.dataclass(frozen=True)
class Out:
    """How torch's out= variant of a function writes its result into out, declared with the
    function (``api.function(name, out=Out(...))``).

    ``fit``: "cast" (the result cast to out's dtype where torch's canCast allows), "same" (out's
    dtype must be the result's), "floating" (out's dtype must be floating), "accumulate" (computed
    in out's dtype, passed as ``dtype=``), "accumulate_cast" and "accumulate_floating" (as
    "accumulate" where out's dtype passes "cast" or "floating"), "upcast_cast" and
    "upcast_floating" (the same, the tensor arguments cast to a floating out's dtype), "create"
    (a factory: made in out's dtype, a different ``dtype=`` refused), "any" (cast to any dtype);
    ``message`` and ``error``: torch's error where out's dtype does not fit
    (``cast_message`` first where canCast refuses it); ``twice``: TensorIterator's resize,
    which warns twice where it casts; ``resize_first``: out resized before its dtype is checked;
    ``warn``: a non-empty out resized with torch's warning (factories resize silently); ``parts``:
    the Out of each output of a function returning a tuple; ``aten``: the op torch's autograd
    error names (the function's first name unless given), ``refusal`` that error; ``pick``: the
    Out of a call, for a function whose overloads write differently (``max(x)``, ``max(x, y)``,
    ``max(x, dim)``); ``writes``: the times torch's kernel writes out (its version bumps);
    ``differentiable``: False for an op without a derivative (no autograd error); ``order``: the
    layout of an out it resizes (numpy's "C", or "F": nonzero's transposed one); ``resized``: the
    warning of a non-empty out resized ({old} and {new} shapes as lists, {shape} the new as a
    tuple, {numel} and {count} their numbers of elements); ``resize_bumps``: out's version bumps
    when it is resized (a factory's resize_ of it); ``checks_first``: a tuple out's parts all
    checked before the first is resized (else each in turn, as structured kernels do);
    ``compares``: a comparison, which TensorIterator computes in its operands' dtype;
    ``parser``: the name torch's argument errors give the function; ``unimplemented``: for an op
    torch's autograd fallback runs, what records its NotImplemented node on out (``unimplemented(out,
    tensors)``, the ops layer's) where an input or an out that is no leaf requires grad, in place of
    the refusal (kept for an out that is a leaf requiring grad)."""

    fit: str = "cast"
    message: str = CANT_CAST
    error: type = RuntimeError
    twice: bool = False
    resize_first: bool = False
    warn: bool = True
    parts: tuple[Out, ...] = ()
    aten: str = ""
    pick: Callable[[tuple, dict], Out] | None = None
    cast_message: str = ""
    writes: int = 1
    differentiable: bool = True
    order: str = "C"
    resized: str = OUT_RESIZED
    resize_bumps: bool = False
    checks_first: bool = False
    compares: bool = False
    unimplemented: Callable[[Tensor, list[Tensor]], None] | None = None
    parser: str = ""  # the function torch's parser errors name, where not the one called (norm's)
    keeps_numel: bool = False  # an out of the result's number of elements keeps its shape (arange's)
    # the dim a reduction without keepdim unsqueezes an out of the result's rank at, before resizing it
    # to the keepdim shape (then squeezing it): the shapes of torch's warning (kthvalue's)
    unsqueezed: int | None = None
    refusal: str = (
        "{aten}(): functions with out=... arguments don't support automatic differentiation, but one of the "
        "arguments requires grad."
    )

    def named(self, name: str) -> Out:
        """This Out, its autograd error naming ``name`` unless it names another."""
        return self if self.aten else dataclasses.replace(self, aten=name)

    def check(self, name: str, out: Tensor, result: Tensor) -> None:
        """torch's error where out's dtype does not fit the result's (out resized first where
        torch resizes it first)."""
        source, target = result.dtype, out.dtype
        if self.resize_first:
            _resize(out, tuple(result.shape), int(self.warn))
        if self.fit.endswith("cast"):
            fits = _can_cast(source, target)
        elif self.fit.endswith("floating"):
            fits = target.is_floating_point
        else:
            fits = self.fit != "same" or source is target
        message = self.cast_message if self.cast_message and not _can_cast(source, target) else self.message
        if not fits:
            out_name, result_name = dtypes.scalar_type(target), dtypes.scalar_type(source)
            words = {
                "out": out_name, "result": result_name, "name": name, "int32": source is dtypes.int32,
                "out_cpp": TYPE_META_NAMES[target.name], "result_cpp": TYPE_META_NAMES[source.name],
                "out_type": f"torch.{out_name}Tensor", "result_type": f"torch.{result_name}Tensor",
            }  # fmt: skip
            raise self.error(message.format(**words))

    def fit_to(self, name: str, out: Tensor, result: Tensor, common: Any = None) -> None:
        """``out`` checked (``check``) and resized to the result's shape, with torch's warning
        where it held elements (twice where TensorIterator casts: out of neither the result's
        dtype nor ``common``, the one it computes in, when given)."""
        self.check(name, out, result)
        twice = self.twice and out.dtype not in (result.dtype, common or result.dtype)
        if self.keeps_numel and out.numel() == result.numel():
            return  # (written in its shape's row-major order)
        if self.unsqueezed is not None:
            old, new = list(out.shape), list(result.shape)
            if out.dim() == result.dim():
                old.insert(self.unsqueezed, 1)
            new.insert(self.unsqueezed, 1)
            if old != new and out.numel():
                warnings.warn(self.resized.format(old=old, new=new), UserWarning, stacklevel=4)
            _resize(out, tuple(result.shape), 0)
            return
        if tuple(out.shape) != tuple(result.shape) and self.resize_bumps:
            out._vc.bump()
        _resize(out, tuple(result.shape), (2 if twice else 1) if self.warn else 0, self.order, self.resized)

    def write(self, out: Tensor, result: Tensor) -> None:
        """``result`` written into ``out`` (fitted), cast to out's dtype, its version bumped as
        many times as torch's kernel writes it (none: empty's out keeps its bytes); an inference
        tensor written outside inference mode refused then."""
        if self.writes:
            values = result._data.reshape(out._data.shape) if self.keeps_numel else result._data
            out._data[...] = values.astype(out._data.dtype, copy=False)
        if out._inference and not out._tracked_inference and not is_inference_mode_enabled():
            raise RuntimeError(INFERENCE_INPLACE)  # torch checks after writing, as an in-place op
        for _ in range(self.writes):
            out._vc.bump()


ELEMENTWISE = Out(twice=True)  # TensorIterator's ops that compute in the common dtype and cast
SAME_DTYPE = Out("same", FOUND)  # TensorIterator's ops that take one dtype for all operands
EXACT = Out("same", EXPECTED)  # structured kernels whose out must have the result's dtype
ACCUMULATE = Out("accumulate")
INDICES = dataclasses.replace(EXACT, differentiable=False)  # argmax's, argsort's: no derivative
CREATE = Out("create", warn=False)  # a factory's: its autograd error names aten::<name>
CREATE_RESIZED = Out("create", warn=False, refusal="cannot resize variables that require grad")
BOOLEAN = Out("same", "{name} does not support non-boolean outputs.", differentiable=False)  # bool out
CAT = Out(message="torch.cat(): input types can't be cast to the desired output type {out}", error=TypeError)


def _can_cast(source: dtypes.dtype, target: dtypes.dtype) -> bool:
    """torch's canCast: no complex into a real dtype, no float into an integer, nothing into bool."""
    if source.is_complex and not target.is_complex:
        return False
    if source.is_floating_point and not (target.is_floating_point or target.is_complex):
        return False
    return source is dtypes.bool_ or target is not dtypes.bool_


def _tensors(values: Any) -> list[Tensor]:
    """The tensors among call arguments, a list's or tuple's included (``cat([a, b])``)."""
    found: list[Tensor] = []
    for value in values:
        if isinstance(value, Tensor):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(_tensors(value))
    return found


# the dtype of a number given as out= to one of NUMBERS_AS_TENSORS (a 0-d tensor of its type)
NUMBER_DTYPES = {bool: np.bool_, int: np.int64, float: np.float64}  # (impl has no complex dtypes)


def _out_tensors(name: str, policy: Out, out: Any, args: tuple, kwargs: dict) -> tuple[Tensor, ...]:
    """The tensors of ``out``, refused with torch's TypeError where they are not what the
    function's signature takes: a tensor, or a tuple (or list) of as many as it returns; a number
    is a 0-d tensor where torch's parser takes numbers as tensors."""
    if name in NUMBERS_AS_TENSORS and type(out) in NUMBER_DTYPES:
        return (Tensor._from_array(np.array(out, dtype=NUMBER_DTYPES[type(out)])),)
    name = policy.parser or name
    wanted = "tuple of Tensors" if policy.parts else "Tensor"
    fits = isinstance(out, (tuple, list)) if policy.parts else isinstance(out, Tensor)
    if not fits:
        if name in OVERLOADS:
            signatures = [_Signature(text) for text in OVERLOADS[name]]
            raise _Call(name, signatures, args, {**kwargs, "out": out}).error()
        raise TypeError(f"{name}(): argument 'out' must be {wanted}, not {type_name(out)}")
    if not policy.parts:
        return (out,)
    if len(out) != len(policy.parts):
        raise TypeError(f"expected tuple of {len(policy.parts)} elements but got {len(out)}")
    return tuple(out)


def _into(name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
    """``fn(*args, **kwargs)`` written into ``kwargs["out"]`` as torch's out= variant writes it
    (the function's ``api.OUT``): refused where autograd would record it, the result fitted to
    out's dtype, out resized to the result's shape (with torch's warning where it held elements),
    its version bumped; out itself is returned (a tuple out as the function's named tuple)."""
    policy = api.OUT[name]
    if policy.pick is not None:  # (it sees out among the keywords)
        policy = policy.pick(args, kwargs).named(policy.aten)
    kwargs = dict(kwargs)
    out = kwargs.pop("out")
    outs = _out_tensors(name, policy, out, args, kwargs)
    out = outs[0] if not policy.parts else out  # (a number made a tensor)
    differentiable = _tensors([*args, *kwargs.values()]) if policy.differentiable else []
    recorded = is_grad_enabled() and any(t.requires_grad for t in (*outs, *differentiable))
    if recorded and (policy.unimplemented is None or any(t.requires_grad and t.is_leaf for t in outs)):
        raise RuntimeError(policy.refusal.format(aten=policy.aten))  # (an out requiring grad: always)
    if policy.fit.startswith(("accumulate_", "upcast")):  # refused before computing in out's dtype
        policy.check(name, out, out if policy.fit.endswith("floating") else fn(*args, **kwargs))
    if policy.fit.startswith("accumulate"):
        kwargs["dtype"] = out.dtype
    elif policy.fit.startswith("upcast") and out.dtype.is_floating_point:
        args = tuple(a.to(out.dtype) if isinstance(a, Tensor) else a for a in args)
    elif policy.fit == "create":
        given = kwargs.get("dtype")
        if given is not None and given is not out.dtype:
            wanted, have = dtypes.scalar_type(given), dtypes.scalar_type(out.dtype)
            raise RuntimeError(f"dtype {wanted} does not match dtype of out parameter ({have})")
        kwargs["dtype"] = out.dtype
    try:
        result = fn(*args, **kwargs)
    except NotImplementedError:  # a kernel missing for the dtype: torch checked (resized) out first
        inputs = _tensors(args)
        if policy.twice and inputs:  # TensorIterator's cast check, then its resize
            policy.check(name, out, inputs[0])
            _resize(out, tuple(np.broadcast_shapes(*(tuple(t.shape) for t in inputs))), 1)
        elif policy.fit == "same" and inputs and not policy.parts:  # a structured kernel's meta check
            policy.check(name, out, inputs[0])
        raise
    results = tuple(result) if policy.parts else (result,)
    parts = policy.parts or (policy,)
    if policy.checks_first:  # every out checked before any is resized
        for part, target, produced in zip(parts, outs, results, strict=True):
            part.check(name, target, produced)
    common = dtypes.result_type(*args[:2]) if policy.compares else None
    for part, target, produced in zip(parts, outs, results, strict=True):
        part.fit_to(name, target, produced, common)
    if recorded and policy.unimplemented is not None:  # (out's edge as it was before the write)
        policy.unimplemented(out, differentiable)
    for part, target, produced in zip(parts, outs, results, strict=True):
        part.write(target, produced)
    return getattr(return_types, f"{type(result).__name__}_out")(outs) if policy.parts else out


def _resize(
    out: Tensor, shape: tuple, warnings_shown: int, order: str = "C", warning: str = OUT_RESIZED
) -> None:
    """Resize ``out`` to ``shape`` as torch's resize_output: silently when it holds no elements,
    else with torch's deprecation warning (``warnings_shown`` times: TensorIterator resizes twice
    when it also casts; factories resize without it), laid out in ``order`` (numpy's)."""
    if tuple(out.shape) == shape:
        return
    if out.numel() and (warning is OUT_RESIZED or out.numel() != math.prod(shape)):  # arange's: by numel
        for _ in range(warnings_shown):
            words = {"old": list(out.shape), "new": list(shape), "shape": shape}
            text = warning.format(**words, numel=out.numel(), count=math.prod(shape))
            warnings.warn(text, UserWarning, stacklevel=4)
    if out._base_ is not None:
        _resize_view(out, shape, order)
        return
    xp = namespace_of(out._data)
    data = xp.zeros(shape, dtype=out._data.dtype, order=order)  # torch's new bytes: uninitialized
    kept = min(out._data.size, data.size)  # the storage keeps its bytes as far as they reach
    data.reshape(-1, order=order)[:kept] = out._data.reshape(-1)[:kept]
    out._data = data


def _resize_view(out: Tensor, shape: tuple, order: str = "C") -> None:
    """A view resized as torch's resize_: contiguous (in numpy's ``order``) from its storage offset
    in its base's storage, which grows (its bytes kept, the base reading the grown one) where it is too short.
    (Other views of the base keep the old memory: impl's storage cannot grow in place.)"""
    base, offset = out._base_, out.storage_offset()
    storage, need = base._storage_array(), offset + math.prod(shape)
    if need > storage.size:
        grown = namespace_of(storage).zeros(need, dtype=storage.dtype)  # torch's new bytes: uninitialized
        grown[: storage.size] = storage
        start = base.storage_offset()
        base._data = as_strided_array(namespace_of(grown), grown[start:], tuple(base.shape), base.stride())
        base._storage = grown if base._storage is not None else None
        storage = grown
    strides = contiguous_strides(shape) if order == "C" else contiguous_strides(shape[::-1])[::-1]
    out._data = as_strided_array(namespace_of(storage), storage[offset:], shape, strides)


PYTHON_WORDS = ("got an unexpected keyword", "got multiple values", "missing ", "takes ")  # its call errors


def named(error: TypeError, fn: Callable, name: str) -> TypeError:
    """Python's TypeError of a call of ``fn`` that its parameters refused (``fn() got an unexpected
    keyword argument``), worded for ``name`` as torch words it; any other error as it is."""
    text = str(error)
    own = f"{getattr(fn, '__qualname__', name)}() "
    if text.startswith(own) and own != f"{name}() " and text[len(own) :].startswith(PYTHON_WORDS):
        return TypeError(f"{name}() {text[len(own) :]}")
    return error
