"""The in-place view methods ``t_``, ``transpose_``/``swapdims_``/``swapaxes_``, ``squeeze_``,
``unsqueeze_`` and ``as_strided_``, as torch's ADInplaceOrView kernels run them.

The tensor keeps its memory and takes the view's geometry (a view stays a view of its base), its
version goes up, and where the write is recorded it gets the op's in-place node (``TBackward1``,
``SqueezeBackward4`` ...: the out-of-place derivative) over its old history; a view's grad_fn is
that node, not a CopySlices of its base. Hooks and ``retain_grad`` stay with the old node. The
checks are those of any in-place op (a leaf or a view of a leaf requiring grad, a view made in
no_grad or by a function returning several views, an inference tensor outside inference mode).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from impl import _api as api
from impl import _grad_mode as grad_mode
from impl._grad_mode import INFERENCE_INPLACE
from impl._graph import input_meta
from impl._names import type_name
from impl._ops import views
from impl._ops import views as vw
from impl._ops.inplace import SQUEEZE_DIM_, check_inplace
from impl._ops.table import OpDef, apply
from impl._ops.views import _dim_list, as_strided_geometry
from impl._signatures import _invalid_combination, _Signature
from impl._tensor import Tensor, _wrap_dim, as_int, is_int_like


def _in_place(op: OpDef, name: str) -> OpDef:
    """``op``'s forward and derivative recorded as its in-place overload's node (no view of its own)."""
    return dataclasses.replace(op, node_name=name, view=False)


T_ = _in_place(vw.T, "TBackward1")
TRANSPOSE_ = _in_place(vw.TRANSPOSE, "TransposeBackward1")
SQUEEZE_ = _in_place(vw.SQUEEZE, "SqueezeBackward3")
SQUEEZE_DIMS_ = _in_place(vw.SQUEEZE_DIMS, "SqueezeBackward5")
UNSQUEEZE_ = _in_place(vw.UNSQUEEZE, "UnsqueezeBackward1")
AS_STRIDED_ = _in_place(vw.AS_STRIDED, "AsStridedBackward1")


def _restyled(self: Tensor, op: OpDef, **attrs: Any) -> Tensor:
    """Give ``self`` the geometry ``op`` computes from it, in place (see the module doc); the
    caller has made torch's checks of an in-place op (check_inplace) and of the arguments."""
    if self._inference and not self._tracked_inference and not grad_mode.is_inference_mode_enabled():
        raise RuntimeError(INFERENCE_INPLACE)
    records = grad_mode.is_recording() and self.requires_grad
    source = Tensor._from_array(self._data)
    if records:  # an alias carrying self's history: the node's edge is self's old one
        source._grad_fn_, source._output_nr = self.grad_fn, self._output_nr
        source._requires_grad, source._grad_acc = self._requires_grad, self._grad_acc
    result = apply(op, source, **attrs)
    if op is AS_STRIDED_:
        if result._grad_fn_ is not None:
            result._grad_fn_._attrs.pop("storage", None)
        if self._base_ is None and self._storage is None:  # the memory no longer starts at its data
            self._storage = attrs["storage"]
    self._data = result._data
    self._vc.bump()
    if records:
        node = result._grad_fn_
        node._input_meta = [input_meta(self)]
        self._grad_fn_, self._output_nr = node, 0
        if self._base_ is not None:  # its grad_fn is current: not to be regenerated
            self._view_version = self._vc.value
    return self


# -- argument parsing, as torch's parser words its errors --------------------------------------------
def _given(name: str, params: tuple[str, ...], args: tuple, kwargs: dict, required: int) -> dict:
    """The arguments given for ``params`` (the first ``required`` of them required), by name."""
    if len(args) > len(params):
        raise TypeError(f"{name}() takes {len(params)} positional arguments but {len(args)} were given")
    values = dict(zip(params, args, strict=False))
    for key, value in kwargs.items():
        if key not in params:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        if key in values:
            raise TypeError(f"{name}() got multiple values for argument '{key}'")
        values[key] = value
    first_missing = next((i for i, p in enumerate(params[:required]) if p not in values), None)
    if first_missing is not None:  # torch names them from the first one missing, with its grammar
        missing = [f'"{p}"' for p in params[first_missing:required]]
        noun = "arguments" if len(missing) == 1 else "argument"
        raise TypeError(f"{name}() missing {len(missing)} required positional {noun}: {', '.join(missing)}")
    return values


def _arguments(name: str, params: tuple[str, ...], args: tuple, kwargs: dict, required: int) -> list:
    """The values of int parameters ``params`` (the first ``required`` of them required)."""
    values = _given(name, params, args, kwargs, required)
    for position, param in enumerate(params, 1):
        value = values.get(param)
        if param in values and not is_int_like(value):
            where = f"(position {position}) " if param not in kwargs else ""
            raise TypeError(f"{name}(): argument '{param}' {where}must be int, not {type_name(value)}")
    return [as_int(values[p]) if p in values else None for p in params]


@api.method("t_")
def t_(self: Tensor, *args: Any) -> Tensor:
    _no_arguments("t_", args)
    check_inplace(self)
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return _restyled(self, T_)


def _no_arguments(name: str, args: tuple) -> None:
    if args:
        raise TypeError(f"TensorBase.{name}() takes no arguments ({len(args)} given)")


_TRANSPOSE_PARAMS = {"swapaxes": ("axis0", "axis1")}


def _transposer(name: str) -> Any:
    params = _TRANSPOSE_PARAMS.get(name.rstrip("_"), ("dim0", "dim1"))

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        dim0, dim1 = _arguments(name, params, args, kwargs, 2)
        if not name.endswith("_"):
            return views.transpose(self, dim0, dim1)
        check_inplace(self)
        n = self.dim()
        return _restyled(self, TRANSPOSE_, dim0=_wrap_dim(dim0, n), dim1=_wrap_dim(dim1, n))

    method.__name__ = name
    return method


_SQUEEZE_SIGNATURES = ("()", "(int dim)", "(tuple of ints dim)")


def _squeeze_dim(name: str, args: tuple, kwargs: dict) -> Any:
    """The dim of ``squeeze(_)`` (an int, a sequence of them, or None for all), parsed as torch
    parses its three signatures."""
    given = args + tuple(kwargs.values())
    dim = given[0] if given else None
    fits = len(given) <= 1 and set(kwargs) <= {"dim"}
    if fits and isinstance(dim, (tuple, list)):
        fits = all(type(d) is not bool and hasattr(d, "__index__") for d in dim)
    elif fits and given:
        fits = type(dim) is not bool and hasattr(dim, "__index__")
    if not fits:
        raise _invalid_combination(name, [_Signature(s) for s in _SQUEEZE_SIGNATURES], args, kwargs)
    return dim


@api.method("squeeze")
def squeeze(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    dim = _squeeze_dim("squeeze", args, kwargs)
    return views.squeeze(self, dim if not isinstance(dim, list) else tuple(dim))


@api.method("squeeze_")
def squeeze_(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``squeeze_()``, ``squeeze_(dim)``, ``squeeze_(dims)``: SqueezeBackward3, 4, 5."""
    dim = _squeeze_dim("squeeze_", args, kwargs)
    check_inplace(self)
    n = self.dim()
    if dim is None:
        return _restyled(self, SQUEEZE_)
    if isinstance(dim, (tuple, list)):
        return _restyled(self, SQUEEZE_DIMS_, dims=_dim_list(dim, n))
    return _restyled(self, SQUEEZE_DIM_, dim=_wrap_dim(dim, n))


@api.method("unsqueeze")
def unsqueeze(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    (dim,) = _arguments("unsqueeze", ("dim",), args, kwargs, 1)
    return views.unsqueeze(self, dim)


@api.method("unsqueeze_")
def unsqueeze_(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    (dim,) = _arguments("unsqueeze_", ("dim",), args, kwargs, 1)
    check_inplace(self)
    return _restyled(self, UNSQUEEZE_, dim=_wrap_dim(dim, self.dim() + 1))


_AS_STRIDED_PARAMS = ("size", "stride", "storage_offset")


@api.method("as_strided")
def as_strided(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    values = _given("as_strided", _AS_STRIDED_PARAMS, args, kwargs, 2)
    return views.as_strided(self, values["size"], values["stride"], values.get("storage_offset"))


@api.method("as_strided_")
def as_strided_(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``as_strided_(size, stride, storage_offset=None)``: the offset by default ``self``'s."""
    values = _given("as_strided_", _AS_STRIDED_PARAMS, args, kwargs, 2)
    check_inplace(self)
    size, stride, offset = as_strided_geometry(
        "as_strided_", self, values["size"], values["stride"], values.get("storage_offset"), 1
    )
    geometry = {"size": size, "stride": stride, "offset": offset, "in_offset": self.storage_offset()}
    return _restyled(self, AS_STRIDED_, **geometry, storage=self._storage_array())


@api.method("t")
def t(self: Tensor, *args: Any) -> Tensor:
    _no_arguments("t", args)
    return views.t(self)



for _name in ("transpose", "swapdims", "swapaxes", "transpose_", "swapdims_", "swapaxes_"):
    api.method(_name)(_transposer(_name))
