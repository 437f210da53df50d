"""Scatter ops: scatter (of a tensor ``src`` or of a number, optionally reducing with 'add' or
'multiply'), scatter_add, index_add (times ``alpha``), index_copy, and their in-place forms
scatter_, scatter_add_, index_add_ and index_copy_.

``out[index[i][j]][j] = src[i][j]`` (for dim 0): the index has the input's number of dims (a 0-d
tensor counts as one) and is no larger than ``src`` in every dim, nor than the input off ``dim``;
only the leading part of ``src`` the index covers is read. torch checks, in this order: the dim,
the index's dtype (int64 or int32; an empty index is not looked at), ``src``'s dtype (the input's),
the shapes (not of an empty index), the name of a reduction, then, in the kernel, each index's
range. With duplicate indices scatter's written value is undefined (torch's CPU kernel lets the
last win, as numpy's assignment does); scatter_add and reduce='add' sum every one.

torch has no derivative for scatter with ``reduce`` (its node is ``NotImplemented``, whose backward
raises) and warns once per process that ``reduce`` with a tensor ``src`` is deprecated.
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes
from impl._names import type_name
from impl._ops.elementwise import _no_derivative, _plain_alpha
from impl._ops.indexing import INDEX_ADD, SCATTER_ADD, _gather_key, combine_at, leading, picked_source
from impl._ops.inplace import apply_inplace, check_inplace
from impl._ops.table import NOT_IMPLEMENTED, D, OpDef, apply, auto_linear, fill_array, linear_part
from impl._signatures import EXACT, _wrong_argument, invalid_call
from impl._tensor import Tensor, _wrap_dim
from impl._warn import is_warn_always_enabled


def _written(xp: Any, a: Any, values: Any, index: Any, key: tuple, reduce: str | None) -> Any:
    """A copy of ``a`` with ``values`` written (or added / multiplied in, by ``reduce``) at ``key``."""
    out = a.copy()
    if index._data.size:  # an empty index writes nothing (and its key may be out of range)
        target = out if out.ndim else out.reshape(1)  # a 0-d input is read as 1-d
        if reduce is None:
            target[key] = values
        else:
            combine_at(xp, reduce, target, key, values)
    return out


def _scatter_fwd(
    xp: Any, a: Any, src: Any, dim: int, index: Any, key: tuple, reduce: str | None = None
) -> Any:
    return _written(xp, a, leading(src, index._data.shape), index, key, reduce)


def _scatter_value_fwd(
    xp: Any, a: Any, dim: int, index: Any, key: tuple, value: Any, reduce: Any = None
) -> Any:
    """The number is converted (and checked) only when an index writes it."""
    if not index._data.size:
        return a.copy()
    d = dtypes.from_numpy_dtype(a.dtype)
    if isinstance(value, complex) and value.imag and d is not dtypes.bool_:
        raise RuntimeError(
            f"value cannot be converted to type {dtypes.CONVERT_NAMES[d.name]} without overflow"
        )
    return _written(
        xp,
        a,
        fill_array(xp, complex(value).real if isinstance(value, complex) else value, a.dtype),
        index,
        key,
        reduce,
    )


def _self_grad(g: Any, c: Any) -> Any:
    """derivatives.yaml: ``grad.scatter(dim, index, 0)``: the overwritten elements get none."""
    return g.scatter(c.dim, c.index, 0)


SCATTER = OpDef(
    "ScatterBackward0",
    _scatter_fwd,
    ("self", "src"),
    {"self": D("dim index", _self_grad), "src": D("dim index", lambda g, c: g.gather(c.dim, c.index))},
    jvp=auto_linear,
)
SCATTER_VALUE = OpDef(
    "ScatterBackward1",
    _scatter_value_fwd,
    derivatives={"self": D("dim index", _self_grad)},
    jvp=linear_part(value=0),
)


def _scatter_reduce_ops(name: str) -> tuple[OpDef, OpDef]:
    """scatter (or scatter_) with reduce, of a tensor and of a number: torch has no derivative,
    and its NotImplemented node's error names the op called."""
    no_grad = D("", _no_derivative(name))
    of_tensor = OpDef(
        "NotImplemented", _scatter_fwd, ("self", "src"), {"self": no_grad, "src": no_grad},
        qualified_name=NOT_IMPLEMENTED,
    )
    of_value = OpDef(
        "NotImplemented", _scatter_value_fwd, derivatives={"self": no_grad}, qualified_name=NOT_IMPLEMENTED
    )
    return of_tensor, of_value


SCATTER_REDUCE, SCATTER_VALUE_REDUCE = _scatter_reduce_ops("scatter")
SCATTER_REDUCE_INPLACE, SCATTER_VALUE_REDUCE_INPLACE = _scatter_reduce_ops("scatter_")
_REDUCTIONS = {"add": "add", "multiply": "multiply"}
_warned_reduce = False  # torch's TORCH_WARN_ONCE: once per process


def _checked(name: str, self: Tensor, dim: int, index: Tensor, src: Any, reduce: str | None = None) -> dict:
    """torch's checks of a scatter of ``src`` (a tensor or a number) into ``self``, in its order
    (see the module doc); the op's attrs: the wrapped dim, the index, the numpy key and the
    numpy name of the reduction."""
    dim = _wrap_dim(dim, self.dim())
    if index.numel() and index.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    tensor_src = isinstance(src, Tensor)
    if tensor_src and src.dtype is not self.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    if index.numel():
        _check_shapes(self, dim, index, src if tensor_src else None)
    if reduce is not None:
        global _warned_reduce
        if tensor_src and (is_warn_always_enabled() or not _warned_reduce):  # TORCH_WARN_ONCE
            _warned_reduce = _warned_reduce or not is_warn_always_enabled()
            warnings.warn(
                "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                "future PyTorch release. Use torch.scatter_reduce instead for more reduction options. "
                "(Triggered internally at "
                "/__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:225.)",
                UserWarning,
                stacklevel=4,
            )
        if reduce not in _REDUCTIONS:
            raise RuntimeError("reduce argument must be either add or multiply.")
    size = self.shape[dim] if self.dim() else 1
    idx = index._data.reshape(-1)  # torch's loop order up to 2-d (beyond, it visits dim elsewhere)
    outside = (idx < 0) | (idx >= size)
    if outside.any():
        first = int(outside.argmax())
        if first and not tensor_src:  # torch converts the number at each write: the first comes first
            _checked_number(src, self.dtype)
        raise RuntimeError(f"index {int(idx[first])} is out of bounds for dimension {dim} with size {size}")
    key = _gather_key(index._data, dim)
    return {"dim": dim, "index": index, "key": key, **({"reduce": _REDUCTIONS[reduce]} if reduce else {})}


def _check_shapes(self: Tensor, dim: int, index: Tensor, src: Tensor | None) -> None:
    """torch's scatter_shape_check: the index has self's number of dims (0-d counting as 1-d) and
    is no larger than self off ``dim`` nor (then) than src in any dim, src's dims read by index
    (a dim src lacks raises torch's IndexError) up to the first that is too large; only then is
    src's number of dims compared, before the sizes are reported."""
    rank = builtins.max(self.dim(), 1)
    if builtins.max(index.dim(), 1) != rank:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")

    def size(t: Tensor, d: int) -> int:  # torch's ensure_nonempty_size
        return t.shape[_wrap_dim(d, t.dim())] if t.dim() else 1

    wrong = builtins.any(d != dim and size(index, d) > size(self, d) for d in range(rank))
    if not wrong and src is not None:
        wrong = builtins.any(size(index, d) > size(src, d) for d in range(rank))
    if src is not None and builtins.max(src.dim(), 1) != rank:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if wrong:
        text = (
            f"Expected index {list(index.shape)} to be no larger than self {list(self.shape)} "
            f"apart from dimension {dim}"
        )
        if src is not None:
            text += f" and to be no larger size than src {list(src.shape)}"
        raise RuntimeError(text)


def _scatter_op(src: Any, reduce: str | None, inplace: bool = False) -> tuple[OpDef, tuple]:
    """The OpDef of a scatter (``inplace``: scatter_) of ``src`` and its tensor operands."""
    if isinstance(src, Tensor):
        reducing = SCATTER_REDUCE_INPLACE if inplace else SCATTER_REDUCE
        return (SCATTER if reduce is None else reducing), (src,)
    reducing = SCATTER_VALUE_REDUCE_INPLACE if inplace else SCATTER_VALUE_REDUCE
    return (SCATTER_VALUE if reduce is None else reducing), ()


def _value_attrs(src: Any) -> dict:
    return {} if isinstance(src, Tensor) else {"value": src}


def _scatter_args(fn: Any, given: dict) -> Any:
    """The src (a tensor) or value (a number) of a scatter call (given by position, or by keyword
    as ``src`` or ``value``), or torch's TypeError."""
    sources = [*given["source"], *(given[k] for k in ("src", "value") if given[k] is not None)]
    source = sources[0] if len(sources) == 1 else None
    fits = (
        isinstance(given["input"], Tensor)
        and isinstance(given["index"], Tensor)
        and isinstance(given["dim"], int)
        and not isinstance(given["dim"], bool)
        and isinstance(source, (Tensor, bool, int, float, complex))
        and not (given["src"] is not None and not isinstance(source, Tensor))
        and not (given["value"] is not None and isinstance(source, Tensor))
        and (given["reduce"] is None or isinstance(given["reduce"], str))
    )
    if not fits:
        raise invalid_call(fn, given, "scatter")
    return source


@api.variants("scatter", out=EXACT)
def scatter(
    input: Tensor,
    dim: int,
    index: Tensor,
    *source: Any,
    src: Any = None,
    value: Any = None,
    reduce: Any = None,
) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor, or a number ``value``) written at ``index``
    along ``dim`` (or, with ``reduce``, added or multiplied in)."""
    source = _scatter_args(scatter, locals())
    attrs = _checked("scatter", input, dim, index, source, reduce)
    op, tensors = _scatter_op(source, reduce)
    return apply(op, input, *tensors, **attrs, **_value_attrs(source))


@api.method("scatter_")
def scatter_(
    self: Tensor,
    dim: int,
    index: Tensor,
    *source: Any,
    src: Any = None,
    value: Any = None,
    reduce: Any = None,
) -> Tensor:
    """``scatter`` written into ``self``."""
    given = locals()
    source = _scatter_args(scatter_, {**given, "input": self})
    check_inplace(self, (source,))  # torch refuses a leaf first
    attrs = _checked("scatter", self, dim, index, source, reduce)
    op, tensors = _scatter_op(source, reduce, inplace=True)
    return apply_inplace(op, self, *tensors, **attrs, **_value_attrs(source))


def _scatter_add_checked(input: Any, dim: Any, index: Any, src: Any, given: dict, fn: Any) -> dict:
    if not (isinstance(input, Tensor) and isinstance(index, Tensor) and isinstance(src, Tensor)):
        raise invalid_call(fn, given, "scatter_add")
    return _checked("scatter", input, dim, index, src)


@api.variants("scatter_add", out=EXACT)
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of ``input`` with ``src``'s elements added at ``index`` along ``dim`` (each of
    duplicate indices adds)."""
    return apply(
        SCATTER_ADD, input, src, **_scatter_add_checked(input, dim, index, src, locals(), scatter_add)
    )


@api.method("scatter_add_")
def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``scatter_add`` written into ``self``."""
    if isinstance(self, Tensor):
        check_inplace(self, (src,))  # torch refuses a leaf first
    attrs = _scatter_add_checked(self, dim, index, src, locals(), scatter_add_)
    return apply_inplace(SCATTER_ADD, self, src, **attrs)


# -- index_add / index_copy: whole slices along ``dim`` written at a vector of indices ------------
def _sizes(t: Tensor) -> str:
    return str(list(t.shape))


def _index_add_checked(self: Tensor, dim: int, index: Tensor, source: Tensor, alpha: Any) -> dict:
    """torch's checks of index_add (index_func_meta_impl, then the kernel), in its order: the
    dim, the index's number of dims and dtype (int64 or int32, even when empty), source's dtype,
    that ``dim`` is a dim of source, the number of indices (when it differs from a 0-d source's
    one, torch's message reads ``source.size(dim)`` and raises that IndexError), the shapes off
    ``dim`` (0-d against n-d compared whole), then the kernel's (``_check_index_add_kernel``)."""
    dim = _wrap_dim(dim, self.dim())
    if index.dim() > 1:
        raise IndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
            f"{dtypes.scalar_type(index.dtype)} and size: {_sizes(index)}"
        )
    if index.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(
            f"index_add_(): Expected dtype int32/int64 for index but got: {dtypes.scalar_type(index.dtype)}"
        )
    if self.dtype is not source.dtype:
        raise RuntimeError(
            f"index_add_(): self ({dtypes.scalar_type(self.dtype)}) and source "
            f"({dtypes.scalar_type(source.dtype)}) must have the same scalar type"
        )
    if dim and dim >= source.dim():
        raise RuntimeError(
            f"index_add_(): Indexing dim {dim} is out of bounds of the source tensor with dim {source.dim()}"
        )
    n = index.numel()
    if n != (source.shape[dim] if source.dim() else 1):
        if not source.dim():  # torch's message reads source.size(dim), which raises
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        count = source.shape[dim]
        raise RuntimeError(
            f"index_add_(): Number of indices ({n}) should be equal to source.size(dim): ({count}), "
            f"for dim: {dim}"
        )
    off = (
        (lambda t: t.shape[:dim] + t.shape[dim + 1 :]) if self.dim() and source.dim() else (lambda t: t.shape)
    )
    if off(self) != off(source):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. "
            f"Got self.shape = {_sizes(self)} source.shape = {_sizes(source)}"
        )
    _check_index_add_kernel(self, dim, index, alpha)
    return {"dim": dim, "index": index, "key": _slice_key(index, dim), "alpha": alpha}


def _check_index_add_kernel(self: Tensor, dim: int, index: Tensor, alpha: Any) -> None:
    """torch's CPU kernel's checks: into a self of at most one dim, ``alpha``'s conversion to
    self's dtype, then each index against self's numel (IndexError "index out of range in self").
    Into a larger self, unless it or the index is empty: with alpha 1 and an int64 index along
    the first or last dim, a scatter_add, which checks that every index is in range, with its
    RuntimeError naming the first outside; else one ``add_`` per index, each index checked in
    turn (IndexError) before its slice is added, converting ``alpha`` at the first add."""

    if self.dim() <= 1:
        _checked_number(alpha, self.dtype)
        if _first_outside(index, self.numel()) is not None:
            raise IndexError("index out of range in self")
        return
    if not (index.numel() and self.numel()):
        return
    bad = _first_outside(index, self.shape[dim])
    if _plain_alpha(alpha) and index.dtype is dtypes.int64 and dim in (0, self.dim() - 1):
        if bad is not None:
            raise RuntimeError(
                f"index {bad} is out of bounds for dimension {dim} with size {self.shape[dim]}"
            )
        return
    if bad is not None and bad == int(index._data.reshape(-1)[0]):
        raise IndexError("index out of range in self")
    _checked_number(alpha, self.dtype)
    if bad is not None:
        raise IndexError("index out of range in self")


def _checked_number(value: Any, d: Any) -> None:
    """torch's conversion check of a Scalar to dtype ``d`` (a complex one with an imaginary part
    overflows any but bool)."""
    if isinstance(value, complex) and value.imag and d is not dtypes.bool_:
        raise RuntimeError(
            f"value cannot be converted to type {dtypes.CONVERT_NAMES[d.name]} without overflow"
        )
    fill_array(np, complex(value).real if isinstance(value, complex) else value, d.np)


def _first_outside(index: Tensor, size: int) -> int | None:
    """The first index (in order) outside ``[0, size)``: torch does not wrap negative ones."""
    idx = index._data.reshape(-1)
    outside = idx[(idx < 0) | (idx >= size)]
    return int(outside[0]) if outside.size else None


def _slice_key(index: Tensor, dim: int) -> tuple:
    """The numpy key of the slices at ``index`` along ``dim`` (a 0-d target reads as 1-d)."""
    return (slice(None),) * dim + (index._data.reshape(-1),)


def _invalid_call(fn: Any, given: dict, alpha: Any = 1) -> TypeError:
    """torch's TypeError for a call of index_add/index_copy (function or method; an in-place
    method's positions count from after ``self``) with an argument of the wrong type."""
    if not isinstance(alpha, (bool, int, float, complex)):
        return TypeError(f"{fn.__name__}(): argument 'alpha' must be Number, not {type_name(alpha)}")
    if fn.__name__.endswith("_") and isinstance(given["self"], Tensor):
        params = [("int", "dim", False), ("Tensor", "index", False), ("Tensor", "source", False)]
        error = _wrong_argument(fn.__name__, params, tuple(given[k] for k in ("dim", "index", "source")))
        if error is not None:
            return error
    return invalid_call(fn, {**given, "input": given["self"]}, fn.__name__)


def _index_add_call(fn: Any, given: dict) -> dict:
    self, source, alpha = given["self"], given["source"], given["alpha"]
    fits = isinstance(given["dim"], int) and all(
        isinstance(t, Tensor) for t in (self, given["index"], source)
    )
    if not (fits and isinstance(alpha, (bool, int, float, complex))):
        raise _invalid_call(fn, given, alpha)
    return _index_add_checked(self, given["dim"], given["index"], source, alpha)


@api.variants("index_add", out=EXACT)
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """A copy of ``input`` with ``alpha`` times source's slices along ``dim`` added at ``index``
    (each of duplicate indices adds)."""
    attrs = _index_add_call(index_add, {**locals(), "self": input})
    return apply(INDEX_ADD, input, source, **attrs)


@api.method("index_add_")
def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """``index_add`` written into ``self``."""
    if isinstance(self, Tensor):
        check_inplace(self, (source,))  # torch refuses a leaf first
    return apply_inplace(INDEX_ADD, self, source, **_index_add_call(index_add_, locals()))


def _index_copy_fwd(xp: Any, a: Any, source: Any, key: tuple, **_: Any) -> Any:
    """A copy of ``a`` with source's slices at ``key`` (of duplicate indices, the last one's, as
    numpy assigns; torch leaves which undefined)."""
    out = a.copy()
    if out.size:  # an empty self takes nothing (and its indices are not looked at)
        (out if out.ndim else out.reshape(1))[key] = source
    return out


INDEX_COPY = OpDef(
    "IndexCopyBackward0",
    _index_copy_fwd,
    ("self", "source"),
    {
        "self": D("dim index", lambda g, c: g.index_fill(c.dim, c.index, 0)),
        "source": D("dim index", picked_source),
    },
    jvp=auto_linear,
)


def _index_copy_checked(self: Tensor, dim: int, index: Tensor, source: Tensor) -> dict:
    """torch's checks of index_copy (its meta function, then the kernel), in its order: the dim,
    the index's number of dims, a 0-d source's single index, the dims of self and source (unless
    one is 0-d), the index's dtype (int64 only), source's dtype, the slice shapes off ``dim``, the
    number of indices, then, unless the result is empty, each index's range (IndexErrors)."""
    dim = _wrap_dim(dim, self.dim())
    if index.dim() >= 2:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.dim()})")
    n = index.numel()
    if not source.dim() and n != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got {n})")
    if source.dim() != self.dim() and source.dim() and self.dim():
        raise IndexError(
            "index_copy_(): When source and destination are not scalars, their dimensionality must match. "
            f"Source dimensionality ({source.dim()}), destination dimensionality ({self.dim()})"
        )
    if index.dtype is not dtypes.int64:
        raise RuntimeError(
            f"index_copy_(): Expected a long tensor for index, but got {dtypes.scalar_type(index.dtype)}"
        )
    if self.dtype is not source.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{dtypes.scalar_type(self.dtype)} and (source) {dtypes.scalar_type(source.dtype)}"
        )
    off_self, off_source = (tuple(t.shape[:dim] + t.shape[dim + 1 :]) for t in (self, source))
    if off_self != off_source:
        raise RuntimeError(
            "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: "
            f"{' '.join(map(str, off_self))} at dimension {dim} and source slice shape: "
            f"{' '.join(map(str, off_source))} at dimension 0."
        )
    if source.dim() and n != source.shape[dim]:
        raise IndexError(
            f"index_copy_(): Number of indices ({n}) should be equal to source.size(dim) "
            f"({source.shape[dim]})"
        )
    size = self.shape[dim] if self.dim() else 1
    bad = _first_outside(index, size) if self.numel() else None
    if bad is not None:
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {dim} with size {size}")
    return {"dim": dim, "index": index, "key": _slice_key(index, dim)}


def _index_copy_call(fn: Any, given: dict) -> dict:
    self, index, source = given["self"], given["index"], given["source"]
    fits = isinstance(given["dim"], int) and all(isinstance(t, Tensor) for t in (self, index, source))
    if not fits:
        raise _invalid_call(fn, given)
    return _index_copy_checked(self, given["dim"], index, source)


@api.variants("index_copy", out=EXACT)
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` with source's slices along ``dim`` written at ``index``."""
    return apply(INDEX_COPY, input, source, **_index_copy_call(index_copy, {**locals(), "self": input}))


@api.method("index_copy_")
def index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``index_copy`` written into ``self``."""
    if isinstance(self, Tensor):
        check_inplace(self, (source,))  # torch refuses a leaf first
    return apply_inplace(INDEX_COPY, self, source, **_index_copy_call(index_copy_, locals()))
