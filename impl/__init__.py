"""impl: an independent autograd engine on numpy (cupy on 'cuda') with torch's public surface.

``import impl as torch`` runs torch programs unchanged for what impl covers.
"""

from __future__ import annotations

import math as _math
from typing import Any

from impl import _legacy, _methods, _xp, autograd, dtypes, utils
from impl._creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    initial_seed,
    linspace,
    manual_seed,
    multinomial,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    seed,
    tensor,
    zeros,
    zeros_like,
)
from impl._grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from impl._legacy import (
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from impl._ops.binary_math import (
    arctan2,
    atan2,
    copysign,
    float_power,
    fmax,
    fmin,
    fmod,
    heaviside,
    hypot,
    logaddexp,
    logaddexp2,
    remainder,
    xlogy,
)
from impl._ops.functions import (
    abs,
    absolute,
    add,
    addmm,
    allclose,
    amax,
    amin,
    argmax,
    argmin,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    bmm,
    cat,
    ceil,
    chunk,
    clamp,
    clip,
    clone,
    concat,
    concatenate,
    cos,
    cumprod,
    cumsum,
    div,
    divide,
    dot,
    eq,
    equal,
    exp,
    flatten,
    flip,
    floor,
    floor_divide,
    gather,
    ge,
    gt,
    index_fill,
    index_select,
    isfinite,
    isnan,
    le,
    log,
    log_softmax,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    masked_fill,
    masked_scatter,
    masked_select,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    mm,
    mul,
    multiply,
    mv,
    narrow,
    ne,
    neg,
    negative,
    permute,
    pow,
    prod,
    reciprocal,
    relu,
    reshape,
    rsub,
    select,
    sgn,
    sigmoid,
    sign,
    sin,
    softmax,
    split,
    sqrt,
    square,
    squeeze,
    stack,
    std,
    sub,
    subtract,
    sum,
    swapaxes,
    swapdims,
    t,
    tanh,
    trace,
    transpose,
    true_divide,
    trunc,
    unbind,
    unsqueeze,
    var,
    where,
)
from impl._ops.pointwise_ternary import addcdiv, addcmul, lerp
from impl._ops.reductions import outer
from impl._ops.reductions_more import (
    all,
    aminmax,
    any,
    count_nonzero,
    cummax,
    cummin,
    logcumsumexp,
    logsumexp,
    nanmean,
    nansum,
    std_mean,
    var_mean,
)
from impl._ops.scatter import index_add, index_copy, scatter, scatter_add
from impl._ops.shapes import (
    broadcast_to,
    diag,
    diag_embed,
    diagonal,
    fliplr,
    flipud,
    moveaxis,
    movedim,
    ravel,
    roll,
    rot90,
    tile,
    tril,
    triu,
    unflatten,
)
from impl._ops.sorting import argsort, bucketize, kthvalue, median, msort, searchsorted, sort, topk
from impl._ops.special import erf, erfc
from impl._ops.stacking import (
    broadcast_tensors,
    column_stack,
    dsplit,
    dstack,
    hsplit,
    hstack,
    row_stack,
    tensor_split,
    vsplit,
    vstack,
)
from impl._ops.unary_math import (
    acos,
    acosh,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctanh,
    asin,
    asinh,
    atan,
    atanh,
    cosh,
    deg2rad,
    exp2,
    expm1,
    fix,
    frac,
    isinf,
    isneginf,
    isposinf,
    log1p,
    log2,
    log10,
    logit,
    nan_to_num,
    positive,
    rad2deg,
    round,
    rsqrt,
    signbit,
    sinc,
    sinh,
    tan,
)
from impl._random import Generator, default_generator
from impl._signatures import invalid_call
from impl._size import Size
from impl._tensor import Tensor
from impl._type_info import finfo, iinfo
from impl._warn import is_warn_always_enabled, set_warn_always
from impl._xp import device
from impl.autograd import functional as _functional  # noqa: F401  (torch.autograd.functional)
from impl.dtypes import (
    dtype,
    get_default_dtype,
    promote_types,
    result_type,
    set_default_dtype,
)

__version__ = "2.13.0+impl"

float16 = half = dtypes.float16
bfloat16 = dtypes.bfloat16
float32 = float = dtypes.float32
float64 = double = dtypes.float64
uint8 = dtypes.uint8
int8 = dtypes.int8
int16 = short = dtypes.int16
int32 = int = dtypes.int32
int64 = long = dtypes.int64
bool = dtypes.bool_

_methods.bind()

inf = _math.inf
nan = _math.nan
pi = _math.pi
e = _math.e


def is_tensor(obj: object) -> bool:
    return isinstance(obj, Tensor)


def is_inference(*args: Any, **kwargs: Any) -> bool:
    """Whether ``input`` was made in inference mode."""
    if not args and not kwargs:
        raise TypeError('is_inference() missing 1 required positional arguments: "input"')
    return _is_inference(*args, **kwargs)


def _is_inference(input: Tensor) -> bool:
    if not isinstance(input, Tensor):
        raise invalid_call(_is_inference, locals(), name="is_inference")
    return input.is_inference()


def numel(input: Tensor) -> int:
    if not isinstance(input, Tensor):
        raise invalid_call(numel, locals())
    return input.numel()


def detach(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(detach, locals())
    return input.detach()


class _Cuda:
    """torch.cuda subset."""

    @staticmethod
    def is_available() -> bool:
        return _xp.cuda_available()

    @staticmethod
    def device_count() -> int:
        return 1 if _Cuda.is_available() else 0

    @staticmethod
    def current_device() -> int:
        """0: impl keeps its arrays on cupy's current device. Without one, torch's AssertionError."""
        _cupy()
        return 0

    @staticmethod
    def synchronize(device: Any = None) -> None:
        """Wait until the device has run the work queued on it (cupy runs kernels asynchronously)."""
        _cupy().cuda.runtime.deviceSynchronize()

    @staticmethod
    def manual_seed(seed: int) -> None:
        """Nothing to seed: impl draws a 'cuda' tensor's random numbers from its CPU stream
        (``impl.manual_seed`` seeds it) and moves them, where torch has a CUDA generator of its
        own (Philox) that impl does not reproduce. Without CUDA torch ignores the call too."""

    manual_seed_all = manual_seed


def _cupy() -> Any:
    """cupy, or torch's AssertionError where there is no CUDA device."""
    return _xp.namespace_for(_xp.device("cuda"))


for _d, _type in _legacy.CUDA_LEGACY_TYPES.items():  # torch.cuda.FloatTensor ...
    setattr(_Cuda, _d._legacy, _type)
cuda = _Cuda()


def __getattr__(name: str) -> object:
    """``torch.nn`` and ``torch.optim`` are separate packages built on this one: load them on use."""
    if name in ("nn", "optim"):
        import importlib

        return importlib.import_module(f"impl.{name}")
    raise AttributeError(f"module 'impl' has no attribute '{name}'")


__all__ = [
    "arctan2",
    "atan2",
    "float_power",
    "heaviside",
    "lerp",
    "addcmul",
    "addcdiv",
    "copysign",
    "fmax",
    "fmin",
    "fmod",
    "hypot",
    "logaddexp",
    "logaddexp2",
    "remainder",
    "xlogy",
    "autograd",
    "dtypes",
    "utils",
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
    "arange",
    "as_tensor",
    "empty",
    "empty_like",
    "eye",
    "from_numpy",
    "full",
    "full_like",
    "initial_seed",
    "Generator",
    "default_generator",
    "linspace",
    "manual_seed",
    "ones",
    "ones_like",
    "rand",
    "rand_like",
    "randint",
    "randn",
    "randn_like",
    "randperm",
    "multinomial",
    "seed",
    "tensor",
    "zeros",
    "zeros_like",
    "acos",
    "acosh",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctanh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "cosh",
    "deg2rad",
    "exp2",
    "expm1",
    "fix",
    "frac",
    "isinf",
    "isneginf",
    "isposinf",
    "log1p",
    "log2",
    "log10",
    "logit",
    "nan_to_num",
    "positive",
    "rad2deg",
    "rsqrt",
    "signbit",
    "sinc",
    "sinh",
    "tan",
    "abs",
    "absolute",
    "add",
    "addmm",
    "allclose",
    "amax",
    "amin",
    "argsort",
    "bucketize",
    "searchsorted",
    "kthvalue",
    "median",
    "msort",
    "sort",
    "logsumexp",
    "nansum",
    "nanmean",
    "all",
    "any",
    "count_nonzero",
    "aminmax",
    "var_mean",
    "std_mean",
    "cummax",
    "cummin",
    "logcumsumexp",
    "topk",
    "square",
    "argmax",
    "argmin",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "bmm",
    "cat",
    "ceil",
    "chunk",
    "clamp",
    "clip",
    "clone",
    "concat",
    "concatenate",
    "cos",
    "div",
    "divide",
    "dot",
    "eq",
    "equal",
    "erf",
    "erfc",
    "exp",
    "flatten",
    "floor",
    "floor_divide",
    "gather",
    "ge",
    "gt",
    "index_fill",
    "index_select",
    "isfinite",
    "isnan",
    "le",
    "log",
    "log_softmax",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "lt",
    "masked_fill",
    "masked_scatter",
    "masked_select",
    "matmul",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mm",
    "mul",
    "multiply",
    "mv",
    "narrow",
    "ne",
    "neg",
    "negative",
    "outer",
    "permute",
    "pow",
    "prod",
    "cumsum",
    "cumprod",
    "flip",
    "reciprocal",
    "relu",
    "reshape",
    "round",
    "rsub",
    "select",
    "sigmoid",
    "sign",
    "sgn",
    "sin",
    "softmax",
    "split",
    "sqrt",
    "squeeze",
    "stack",
    "std",
    "sub",
    "subtract",
    "sum",
    "t",
    "tanh",
    "trace",
    "transpose",
    "true_divide",
    "trunc",
    "unbind",
    "unsqueeze",
    "var",
    "where",
    "Size",
    "Tensor",
    "device",
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
    "dtype",
    "get_default_dtype",
    "promote_types",
    "result_type",
    "set_default_dtype",
    "finfo",
    "iinfo",
    "float16",
    "half",
    "bfloat16",
    "float32",
    "float",
    "float64",
    "double",
    "uint8",
    "int8",
    "int16",
    "short",
    "int32",
    "int",
    "int64",
    "long",
    "bool",
    "is_tensor",
    "is_inference",
    "is_warn_always_enabled",
    "set_warn_always",
    "inf",
    "nan",
    "pi",
    "e",
    "numel",
    "detach",
    "cuda",
    # shape ops (impl/_ops/shapes.py)
    "tril",
    "triu",
    "roll",
    "diagonal",
    "movedim",
    "moveaxis",
    "swapaxes",
    "swapdims",
    "broadcast_to",
    "flipud",
    "fliplr",
    "ravel",
    "unflatten",
    "tile",
    # more shape, stacking and splitting ops (impl/_ops/shapes.py, impl/_ops/stacking.py)
    "diag",
    "diag_embed",
    "rot90",
    "broadcast_tensors",
    "hstack",
    "vstack",
    "row_stack",
    "dstack",
    "column_stack",
    "tensor_split",
    "hsplit",
    "vsplit",
    "dsplit",
    # scatter ops (impl/_ops/scatter.py)
    "scatter",
    "scatter_add",
    # torch.embedding (impl/nn/_embedding.py)
    "embedding",
    "index_add",
    "index_copy",
]
from impl import nn as nn  # noqa: E402  (torch.nn, torch.optim load with the package)
from impl import optim as optim  # noqa: E402
from impl.nn._embedding import embedding_op as embedding  # noqa: E402
