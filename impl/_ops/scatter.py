"""Scatter ops: scatter (of a tensor ``src`` or of a number, optionally reducing with 'add' or
'multiply'), scatter_add, and their in-place forms scatter_ and scatter_add_.

``out[index[i][j]][j] = src[i][j]`` (for dim 0): the index has the input's number of dims (a 0-d
tensor counts as one) and is no larger than ``src`` in every dim, nor than the input off ``dim``;
only the leading part of ``src`` the index covers is read. torch checks, in this order: the dim,
the index's dtype (int64 or int32; an empty index is not looked at), ``src``'s dtype (the input's),
the shapes (not of an empty index), the name of a reduction, then, in the kernel, each index's
range. With duplicate indices scatter's written value is undefined (torch's CPU kernel lets the
last win, as numpy's assignment does); scatter_add and reduce='add' sum every one.

torch has no derivative for scatter with ``reduce`` (its node is ``NotImplemented``, whose backward
raises) and warns once per process that ``reduce`` with a tensor ``src`` is deprecated.
``METHODS`` holds the Tensor methods (bound by impl._methods).
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any

from impl import dtypes
from impl._ops.elementwise import NOT_IMPLEMENTED, _no_derivative
from impl._ops.indexing import SCATTER_ADD, _gather_key, combine_at, leading
from impl._ops.inplace import apply_inplace, check_inplace
from impl._ops.signatures import invalid_call
from impl._ops.table import D, OpDef, apply, fill_array
from impl._tensor import Tensor, _wrap_dim


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
)
SCATTER_VALUE = OpDef(
    "ScatterBackward1", _scatter_value_fwd, derivatives={"self": D("dim index", _self_grad)}
)
_NO_GRAD = D("", _no_derivative("scatter"))
SCATTER_REDUCE = OpDef(  # scatter with reduce: torch has no derivative
    "NotImplemented",
    _scatter_fwd,
    ("self", "src"),
    {"self": _NO_GRAD, "src": _NO_GRAD},
    qualified_name=NOT_IMPLEMENTED,
)
SCATTER_VALUE_REDUCE = OpDef(
    "NotImplemented", _scatter_value_fwd, derivatives={"self": _NO_GRAD}, qualified_name=NOT_IMPLEMENTED
)
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
        if tensor_src and not _warned_reduce:
            _warned_reduce = True
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
    idx = index._data.reshape(-1)
    outside = idx[(idx < 0) | (idx >= size)]
    if outside.size:
        raise RuntimeError(f"index {int(outside[0])} is out of bounds for dimension {dim} with size {size}")
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


def _scatter_op(src: Any, reduce: str | None) -> tuple[OpDef, tuple]:
    """The OpDef of a scatter of ``src`` and its tensor operands."""
    if isinstance(src, Tensor):
        return (SCATTER if reduce is None else SCATTER_REDUCE), (src,)
    return (SCATTER_VALUE if reduce is None else SCATTER_VALUE_REDUCE), ()


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
    op, tensors = _scatter_op(source, reduce)
    return apply_inplace(op, self, *tensors, **attrs, **_value_attrs(source))


def _scatter_add_checked(input: Any, dim: Any, index: Any, src: Any, given: dict, fn: Any) -> dict:
    if not (isinstance(input, Tensor) and isinstance(index, Tensor) and isinstance(src, Tensor)):
        raise invalid_call(fn, given, "scatter_add")
    return _checked("scatter", input, dim, index, src)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of ``input`` with ``src``'s elements added at ``index`` along ``dim`` (each of
    duplicate indices adds)."""
    return apply(
        SCATTER_ADD, input, src, **_scatter_add_checked(input, dim, index, src, locals(), scatter_add)
    )


def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``scatter_add`` written into ``self``."""
    if isinstance(self, Tensor):
        check_inplace(self, (src,))  # torch refuses a leaf first
    attrs = _scatter_add_checked(self, dim, index, src, locals(), scatter_add_)
    return apply_inplace(SCATTER_ADD, self, src, **attrs)


METHODS: dict[str, Any] = {
    "scatter": scatter,
    "scatter_": scatter_,
    "scatter_add": scatter_add,
    "scatter_add_": scatter_add_,
}
