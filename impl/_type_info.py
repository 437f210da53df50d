"""``torch.finfo`` and ``torch.iinfo``: the numerical limits of a floating or integer dtype.

As torch's: read-only attributes of Python numbers (``dtype`` is the dtype's name, a str), equal
when their dtype is, unhashable, and a repr with torch's ``%g`` formatting of every number.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes


class _TypeInfo:
    """What finfo and iinfo share: construction from a dtype, read-only fields, equality, repr."""

    _fields: tuple[str, ...] = ()
    _kind = ""  # "a floating point" or "an integer"
    _other = ""  # the other class's name, for torch's error

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        d = self._parse(*args, **kwargs)
        name = type(self).__name__
        if d is dtypes.bool_ or d.is_floating_point != (name == "finfo"):
            if d is dtypes.bool_ and name == "iinfo":
                raise TypeError("torch.bool is not supported by torch.iinfo")
            raise TypeError(
                f"torch.{name}() requires {self._kind} input type. Use torch.{self._other} to handle "
                f"'torch.{name}'"
            )
        for field, value in self._values(d).items():
            object.__setattr__(self, field, value)
        object.__setattr__(self, "dtype", d.name)

    @classmethod
    def _parse(cls, *args: Any, **kwargs: Any) -> dtypes.dtype:
        """The dtype argument as torch's parser reads ``(torch.dtype type)`` (finfo also ``()``)."""
        name = cls.__name__
        if not args and not kwargs and name == "finfo":
            return dtypes.get_default_dtype()
        values = list(args) + list(kwargs.values())
        if name == "iinfo" and len(values) > 1:
            raise TypeError(f"iinfo() takes 1 positional argument but {len(values)} were given")
        if len(values) != 1 or (kwargs and "type" not in kwargs):
            if not values:
                raise TypeError(f'{name}() missing 1 required positional arguments: "type"')
            got = ", ".join(_type_name(v) for v in values)
            expected = "\n * (torch.dtype type)" + ("\n * ()" if name == "finfo" else "")
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got ({got}), but expected "
                f"one of:{expected}\n"
            )
        if not isinstance(values[0], dtypes.dtype):
            raise TypeError(
                f"{name}(): argument 'type' (position 1) must be torch.dtype, not {_type_name(values[0])}"
            )
        return values[0]

    def _values(self, d: dtypes.dtype) -> dict[str, Any]:
        raise NotImplementedError

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._fields or name == "dtype":
            raise AttributeError(
                f"attribute '{name}' of 'torch.{type(self).__name__}' objects is not writable"
            )
        raise AttributeError(f"'torch.{type(self).__name__}' object has no attribute '{name}'")

    def __eq__(self, other: object) -> Any:
        # (torch compares an iinfo with another object by reading it as an iinfo, which gives
        # True for some: undefined behaviour, not a rule; here any other object is unequal)
        if type(other) is not type(self):
            return NotImplemented
        return other.dtype == self.dtype  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        raise TypeError(f"unhashable type: 'torch.{type(self).__name__}'")

    def __repr__(self) -> str:
        shown = ", ".join(f"{f}={getattr(self, f):g}" for f in self._shown)
        return f"{type(self).__name__}({shown}, dtype={self.dtype})"  # type: ignore[attr-defined]

    __str__ = __repr__
    _shown: tuple[str, ...] = ()


def _type_name(value: Any) -> str:
    return "torch.dtype" if isinstance(value, dtypes.dtype) else type(value).__name__


@api.function("finfo")
class finfo(_TypeInfo):
    """``torch.finfo(dtype)`` (the default dtype without one): bits, eps, max, min, tiny,
    smallest_normal (the same as tiny) and resolution (10 to the minus the decimal digits eps
    leaves, as numpy's)."""
    __module__ = __package__  # torch's class is torch.X, as type() and repr(cls) show

    _fields = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution")
    _shown = ("resolution", "min", "max", "eps", "smallest_normal", "tiny")
    _kind, _other = "a floating point", "iinfo"

    def _values(self, d: dtypes.dtype) -> dict[str, Any]:
        info = _float_info(d)
        eps = float(info.eps)
        return {
            "bits": d.itemsize * 8,
            "eps": eps,
            "max": float(info.max),
            "min": float(info.min),
            "tiny": float(info.smallest_normal),
            "smallest_normal": float(info.smallest_normal),
            "resolution": 10.0 ** -math.floor(-math.log10(eps)),
        }


@api.function("iinfo")
class iinfo(_TypeInfo):
    """``torch.iinfo(dtype)``: bits, min and max (Python ints) of an integer dtype."""
    __module__ = __package__  # torch's class is torch.X, as type() and repr(cls) show

    _fields = ("bits", "max", "min")
    _shown = ("min", "max")
    _kind, _other = "an integer", "finfo"

    def _values(self, d: dtypes.dtype) -> dict[str, Any]:
        info = np.iinfo(d.np)
        return {"bits": d.itemsize * 8, "max": int(info.max), "min": int(info.min)}


def _float_info(d: dtypes.dtype) -> Any:
    if d is dtypes.bfloat16:  # numpy's finfo does not know ml_dtypes' bfloat16
        import ml_dtypes

        return ml_dtypes.finfo(d.np)
    return np.finfo(d.np)
