"""torch dtypes: names, aliases, numpy mapping, and torch's type-promotion rules.

Promotion follows torch's ``result_type``: operands are split into dimensioned tensors, zero-dim
tensors and wrapped Python numbers; a lower class only decides the result when it belongs to a
higher category (bool < integer < floating), so ``int_tensor * 2.5`` is float32 while
``float16_tensor * 2.5`` stays float16.
"""

from __future__ import annotations

import math

import ml_dtypes as _ml_dtypes  # bfloat16, which numpy lacks: a dependency of impl, not optional
import numpy as np

from impl import _api as api


@api.function("dtype")
class dtype:
    """A torch dtype (``impl.float32`` ...); ``str`` gives ``torch.float32`` like torch."""
    __module__ = __package__  # torch's class is torch.X, as type() and repr(cls) show

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize", "_legacy")
    _torch_type_name = "torch.dtype"  # as torch's messages name it

    def __init__(self, name: str, np_dtype: type, floating: bool, signed: bool, legacy: str) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = floating
        self.is_complex = self.np.kind == "c"
        self.is_signed = signed
        self.itemsize = self.np.itemsize
        self._legacy = legacy

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        return self.name


float16 = dtype("float16", np.float16, True, True, "HalfTensor")
float32 = dtype("float32", np.float32, True, True, "FloatTensor")
float64 = dtype("float64", np.float64, True, True, "DoubleTensor")
uint8 = dtype("uint8", np.uint8, False, False, "ByteTensor")
int8 = dtype("int8", np.int8, False, True, "CharTensor")
int16 = dtype("int16", np.int16, False, True, "ShortTensor")
int32 = dtype("int32", np.int32, False, True, "IntTensor")
int64 = dtype("int64", np.int64, False, True, "LongTensor")
bool_ = dtype("bool", np.bool_, False, False, "BoolTensor")

bfloat16 = dtype("bfloat16", _ml_dtypes.bfloat16, True, True, "BFloat16Tensor")
complex64 = dtype("complex64", np.complex64, False, True, "ComplexFloatTensor")
complex128 = dtype("complex128", np.complex128, False, True, "ComplexDoubleTensor")
ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
COMPLEX_OF = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128}
ALIASES = {
    "half": float16,
    "float": float32,
    "double": float64,
    "short": int16,
    "int": int32,
    "long": int64,
    "bool": bool_,
    "cfloat": complex64,
    "cdouble": complex128,
}
for _d in ALL:  # torch.float32 ..., torch.float ...
    api.public(_d, _d.name)
for _alias, _d in ALIASES.items():
    api.public(_d, _alias)
_BY_NP = {d.np: d for d in ALL}
_BY_LEGACY = {d._legacy: d for d in ALL}

_default = float32

# C++ type names and ScalarType names, as torch's error messages spell dtypes
CPP_NAMES = {
    "float16": "c10::Half",
    "float32": "float",
    "float64": "double",
    "uint8": "unsigned char",
    "int8": "signed char",
    "int16": "short int",
    "int32": "int",
    "int64": "long int",
    "bool": "bool",
    "bfloat16": "c10::BFloat16",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}
# how c10::checked_convert names the type it converts a Python number to, in its message
CONVERT_NAMES = {
    "uint8": "uint8_t",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int",
    "int64": "int64_t",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "float32": "float",
    "float64": "double",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}
SCALAR_TYPE_NAMES = {
    "bfloat16": "BFloat16",
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
    "uint8": "Byte",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "bool": "Bool",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


def scalar_type(d: dtype) -> str:
    """``d`` as torch's messages name its ScalarType (Float, Long, BFloat16, ...)."""
    return SCALAR_TYPE_NAMES[d.name]


def kernel_missing(kernel: str, d: object) -> NotImplementedError:
    """torch's error of a kernel without a version for dtype ``d`` (a torch or a numpy dtype):
    ``"abs_cpu" not implemented for 'Bool'``."""
    found = d if isinstance(d, dtype) else from_numpy_dtype(np.dtype(d))
    return NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type(found)}'")


@api.function("get_default_dtype")
def get_default_dtype() -> dtype:
    return _default


@api.function("set_default_dtype")
def set_default_dtype(d: dtype) -> None:
    """Set the floating dtype Python floats and the factory functions take (a floating dtype only,
    torch's TypeError else, worded as torch words it for a dtype and for anything else)."""
    global _default
    refused = "only floating-point types are supported as the default type"
    if not isinstance(d, dtype):
        raise TypeError(f"invalid dtype object: {refused}")
    if not d.is_floating_point:
        raise TypeError(refused)
    _default = d


def from_numpy_dtype(np_dtype: np.dtype) -> dtype:
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).name}. The only supported types "
            "are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, "
            "and bool."
        ) from None


def from_legacy_name(name: str) -> dtype:
    """``torch.FloatTensor`` style names (as ``Tensor.type()`` returns) to dtypes."""
    return _BY_LEGACY[name.rsplit(".", 1)[-1]]


def legacy_name(d: dtype) -> str:
    return "torch." + d._legacy


def _category(d: dtype) -> int:
    return 0 if d is bool_ else 3 if d.is_complex else 2 if d.is_floating_point else 1


def default_complex() -> dtype:
    """The dtype a Python complex takes: the complex one of the default float dtype."""
    return COMPLEX_OF[_default]


@api.function("promote_types")
def promote_types(a: dtype, b: dtype) -> dtype:
    """torch.promote_types for the supported dtypes."""
    if a is b:
        return a
    ca, cb = _category(a), _category(b)
    if max(ca, cb) == 3:  # the complex dtype of the wider value type
        low, high = (a, b) if ca < cb else (b, a)
        if low.is_floating_point and low.itemsize > high.itemsize // 2:
            return COMPLEX_OF[low]
        return high if ca != cb or high.itemsize >= low.itemsize else low
    if ca != cb:
        return a if ca > cb else b
    if ca == 2:
        if a.itemsize == b.itemsize:  # float16 with bfloat16
            return float32
        return a if a.itemsize > b.itemsize else b
    return _BY_NP[np.promote_types(a.np, b.np)]


def scalar_dtype(value: object) -> dtype:
    """The dtype a wrapped Python number takes part in promotion with."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    if isinstance(value, (complex, np.complexfloating)):
        return default_complex()
    return _default


def check_parsed_int(value: object) -> None:
    """torch's argument parser takes a Python int as an int64 or, from 2**63, a uint64 scalar;
    beyond those it raises its OverflowError."""
    if isinstance(value, int) and not -(2**63) <= value < 2**64:
        message = "int too big to convert" if value > 0 else "can't convert negative int to unsigned"
        raise OverflowError(message)


def check_number(value: object, d: dtype, single: bool = False) -> None:
    """Whether torch takes the Python number ``value`` for a fill of ``d`` (full, fill_,
    masked_fill, index_fill, clamp's bounds; where's number and one assigned by indexing, which
    become a one-element tensor filled): its RuntimeError where ``d`` cannot hold it
    (c10::checked_convert: an unsigned dtype takes a negative int down to -max, which wraps; a
    floating one takes inf and nan; bool takes anything). A fill of a ``single`` element of
    float16 or bfloat16 is not checked (torch's scalar_fill): a number too large is inf."""
    check_parsed_int(value)
    unchecked = d is bool_ or isinstance(value, (bool, np.bool_))
    if not (unchecked or single and d.name in ("float16", "bfloat16")) and overflows(value, d):
        raise RuntimeError(f"value cannot be converted to type {CONVERT_NAMES[d.name]} without overflow")


def cast_number(value: object, np_dtype: object) -> np.ndarray:
    """A Python number as a 0-d array of ``np_dtype``, cast unchecked as torch casts a number
    (300 wraps in int8, 1e5 is inf in float16, without numpy's warning); an int from 2**63 is
    read as a uint64, as torch's parser reads it."""
    with np.errstate(over="ignore", invalid="ignore"):
        return parsed_array(value).astype(np_dtype)


def parsed_array(value: object) -> np.ndarray:
    """A Python number as a 0-d array, an int from 2**63 as a uint64 one (as torch's parser takes it)."""
    return np.asarray(value, dtype=np.uint64 if isinstance(value, int) and value >= 2**63 else None)


def overflows(value: object, d: dtype) -> bool:
    """Whether c10::checked_convert refuses the number ``value`` for ``d``."""
    v = value.item() if isinstance(value, np.generic) else value
    if d.is_complex:
        return False
    if d.is_floating_point:
        if isinstance(v, float) and not math.isfinite(v):
            return False
        return d.name in _FLOAT_MAX and abs(v) > _FLOAT_MAX[d.name]
    info = np.iinfo(d.np)
    if isinstance(v, float):
        return not info.min <= v <= info.max  # nan too
    lowest = -int(info.max) if info.min == 0 else int(info.min)  # an unsigned dtype wraps -max..-1
    return not lowest <= v <= info.max


@api.function("result_type")
def result_type(*operands: object) -> dtype:
    """torch.result_type over tensors and Python numbers. A tensor is told by its
    ``_wrapped_number`` flag (False, or True for a number an op wrapped), which nothing else has:
    this module sits below Tensor."""
    states: list[dtype | None] = [None, None, None]  # dimensioned, zero-dim, wrapped number
    unsigned = False  # an int from 2**63 is a uint64 number, which does not promote with bool
    for op in operands:
        wrapped = getattr(op, "_wrapped_number", None)
        if wrapped is False:
            slot, d = (0 if op.dim() else 1), op.dtype
        else:
            value = op if wrapped is None else op._data.item()
            check_parsed_int(value)
            slot, d = 2, scalar_dtype(value)
            unsigned = unsigned or type(value) is int and value >= 2**63
        states[slot] = d if states[slot] is None else promote_types(states[slot], d)
    if unsigned and _combine(states[0], states[1]) is bool_:
        raise RuntimeError(UINT64_WITH_BOOL)
    return _combine(states[0], _combine(states[1], states[2]))


UINT64_WITH_BOOL = (
    "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote Bool and UInt64"
)


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """c10's combine_categories: a lower class decides only a higher category; a complex lower
    class keeps a floating higher one's precision."""
    if higher is None:
        return lower
    if lower is None or higher.is_complex:
        return higher
    if lower.is_complex:
        return COMPLEX_OF[higher] if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def to_dtype(d: object) -> dtype:
    """Accept torch dtypes, numpy dtypes and Python types where torch does."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    if d is complex:
        return complex128
    return from_numpy_dtype(d)
