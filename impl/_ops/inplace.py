"""In-place ops and ``__setitem__`` with torch's autograd rules.

An in-place op runs its out-of-place OpDef on an alias of the old value (so the node's edges and
saved values are those of the old value), writes the result into the tensor, bumps the shared
version counter, and rebases the tensor's history onto the new node. On a view, the base gets a
CopySlices node and the view becomes an as_strided view of the new base history, as in torch.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import warnings
import weakref
from typing import Any

import numpy as np

from impl import _api as api
from impl import _grad_mode as grad_mode
from impl import _layout, dtypes
from impl._grad_mode import INFERENCE_INPLACE, forward_level, set_tangent, tangent_of
from impl._graph import FREED, Node, SavedTensor, input_meta
from impl._ops import views as vw
from impl._ops.elementwise import _no_derivative, zero_grad
from impl._ops.table import (
    NOT_IMPLEMENTED,
    D,
    OpDef,
    _raise_if_unbroadcastable,
    apply,
    auto_linear,
    compute_dtype,
    fill_array,
    linear_part,
)
from impl._tensor import Tensor, view_rebase_error
from impl._xp import namespace_of, transferred

LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = "a view of a leaf Variable that requires grad is being used in an in-place operation."


def _copy_fwd(xp: Any, a: Any, src: Any) -> Any:
    return xp.broadcast_to(src, a.shape).astype(a.dtype, copy=True)


COPY = OpDef(
    "CopyBackwards",
    _copy_fwd,
    ("self", "src"),
    {"self": D("", zero_grad), "src": D("", lambda g, c: g)},
    qualified_name="torch::autograd::CopyBackwards",
    jvp=auto_linear,  # self_t.copy_(src_t)
)


COPY_ACROSS = OpDef(  # torch's CopyBackwards moves src's gradient to src's device itself
    "CopyBackwards",
    lambda xp, a, src, source: _copy_fwd(xp, a, transferred(xp, src)),
    ("self", "src"),
    {"self": D("", zero_grad), "src": D("source", lambda g, c: g.to(c.source))},
    qualified_name="torch::autograd::CopyBackwards",
)
FILL = OpDef(
    "FillBackward2",
    lambda xp, a, value: xp.full(a.shape, fill_array(xp, value, a.dtype, a.size == 1), dtype=a.dtype),
    derivatives={"self": D("", zero_grad)},
    jvp=linear_part(value=0),  # self_t.fill_(0)
)
FILL_TENSOR = OpDef(
    "FillBackward3",
    lambda xp, a, value: xp.full(a.shape, value, dtype=a.dtype),
    ("self", "value"),
    {"self": D("", zero_grad), "value": D("", lambda g, c: g.sum())},
    jvp=auto_linear,
)
ZERO = OpDef(
    "ZeroBackward0",
    lambda xp, a: xp.zeros(a.shape, dtype=a.dtype),
    derivatives={"self": D("", zero_grad)},
    jvp=auto_linear,
)


def check_inplace(t: Tensor, others: tuple = ()) -> None:
    """torch's check_inplace before writing into ``t`` in place with ``others`` as operands: made
    only when the write is recorded (grad mode on, not in inference mode, and ``t`` or an operand
    requiring grad). A view made otherwise than by default is refused first, then a view of a
    leaf that requires grad, then a leaf that requires grad."""
    if not grad_mode.is_recording():
        return
    requires_grad = t.requires_grad
    if not requires_grad and not any(isinstance(o, Tensor) and o.requires_grad for o in others):
        return
    if t._inference and all(isinstance(o, Tensor) and o._inference for o in others):
        return  # only inference tensors: torch runs it below autograd (its inference error follows)
    base = t._base_
    if base is not None:
        if t._creation_meta:
            raise view_rebase_error(t, indirect=False)
        if requires_grad and base._grad_fn_ is None:
            raise RuntimeError(VIEW_OF_LEAF_INPLACE)
    if requires_grad and t._grad_fn_ is None:  # C++ is_leaf: a stale view's grad_fn is not regenerated
        raise RuntimeError(LEAF_INPLACE)


INTERNAL_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory "
    "location. Please clone() the tensor before performing the operation."
)
_EXPANDED_DEPRECATED = (
    "Use of {op} on expanded tensors is deprecated. Please clone() the tensor before performing this "
    "operation. This also applies to advanced indexing e.g. tensor[{key}] = {value} (Triggered internally "
    "at /__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:{line}.)"
)


def _overlaps(t: Tensor) -> bool:
    return t.numel() > 0 and any(n > 1 and s == 0 for n, s in zip(t.shape, t.stride(), strict=True))


def _single_mask(key: Any) -> bool:
    return key is not None and len(key) == 1 and getattr(getattr(key[0], "dtype", None), "kind", None) == "b"


def _check_overlap(op: OpDef, t: Tensor, value: Any, attrs: dict) -> None:
    """torch's assert_no_internal_overlap: a write into a tensor whose elements share memory (a
    dim of size > 1 with stride 0, as expand makes) is refused; fills of a scalar are not checked,
    and masked_fill_ / index_put_ only warn that this is deprecated."""
    if op is FILL or op is ZERO or not _overlaps(t):
        return

    fill = "mask" in attrs  # masked_fill_
    if fill or op.node_name == "IndexPutBackward0":
        # index_put_ of one value under a single bool mask is torch's masked_fill_
        masked = fill or (_single_mask(attrs.get("key")) and getattr(value, "size", 1) == 1)
        text = _EXPANDED_DEPRECATED.format(
            op="masked_fill_" if masked else "index_put_",
            key="mask" if masked else "indices",
            value="scalar" if masked else "tensor",
            line=2450 if masked else 976,
        )
        warnings.warn(text, UserWarning, stacklevel=4)
        return
    raise RuntimeError(INTERNAL_OVERLAP)


def _check_cast(result: dtypes.dtype, out: dtypes.dtype) -> None:
    order = {0: 0, 1: 1, 2: 2}

    def cat(d):
        return 0 if d is dtypes.bool_ else (2 if d.is_floating_point else 1)

    if order[cat(result)] > order[cat(out)]:
        raise RuntimeError(
            f"result type {dtypes.scalar_type(result)} can't be cast to the desired output type "
            f"{dtypes.scalar_type(out)}"
        )


def _check_broadcast_to_self(self: Tensor, operands: list) -> None:
    """An in-place result keeps ``self``'s shape: operands that broadcast to a larger shape raise
    torch's error (shapes that do not broadcast at all are left to the op's own error)."""
    shapes = [tuple(self.shape)] + [tuple(o.shape) for o in operands if isinstance(o, Tensor)]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        return
    if shape != shapes[0]:
        raise RuntimeError(
            f"output with shape {list(shapes[0])} doesn't match the broadcast shape {list(shape)}"
        )


def _old_value(t: Tensor) -> Tensor:
    """A copy of ``t``'s current value carrying ``t``'s autograd identity (its edge)."""
    old = Tensor._from_array(t._data.copy())
    old._grad_fn_, old._output_nr = t.grad_fn, t._output_nr
    old._requires_grad, old._grad_acc = t._requires_grad, t._grad_acc
    if t._fw is not None:  # and its tangent (forward AD)
        old._fw = t._fw
    return old


def apply_inplace(op: OpDef, self: Tensor, *others: Any, **attrs: Any) -> Tensor:
    """Run ``op`` in place on ``self`` (see module doc)."""
    # torch's order: autograd's checks, then TensorIterator's: overlap, shapes, dtypes
    check_inplace(self, others)
    _check_overlap(op, self, others[0]._data if others and isinstance(others[0], Tensor) else 0, attrs)
    if "key" not in attrs:  # index_put_'s values and indices follow the indexed shape
        if op.iterator_operands:
            arrays = tuple(t._data if isinstance(t, Tensor) else np.empty(()) for t in (self, *others))
            _raise_if_unbroadcastable(op, arrays, attrs)
        _check_broadcast_to_self(self, [*others, *attrs.values()])
    if op.promote:
        _check_cast(compute_dtype((self,) + tuple(others), op.promote == "float"), self.dtype)
    records = grad_mode.is_recording() and (
        self.requires_grad or any(isinstance(o, Tensor) and o.requires_grad for o in others)
    )
    source = _old_value(self) if records else self
    result = apply(op, source, *others, **attrs)
    with np.errstate(over="ignore"):  # a wider result's values beyond self's dtype become infinities
        written = result._data.astype(self._data.dtype, copy=False)
    if "key" in attrs and _overlaps(self):  # shared memory: only the addressed elements are written
        self._data[attrs["key"]] = written[attrs["key"]]
    elif "mask" in attrs and _overlaps(self):
        namespace_of(self._data).copyto(self._data, written, where=attrs["mask"]._data)
    else:
        self._data[...] = written
    if self._inference and not self._tracked_inference and not grad_mode.is_inference_mode_enabled():
        raise RuntimeError(INFERENCE_INPLACE)  # torch checks after writing
    self._vc.bump()
    if forward_level.token is not None and forward_level.propagating:
        _write_tangent(self, tangent_of(result))
    if records and result._grad_fn_ is not None:
        node = result._grad_fn_
        _save_original_self(node, source)
        _rebase_history(self, node)
        _save_self_as_result(node, self)
    return self


def _write_tangent(self: Tensor, new: Tensor | None) -> None:
    """Forward AD of an in-place op: ``self``'s tangent becomes ``new`` (the out-of-place op's),
    written into the tangent ``self`` has (which a view's shares with its base's), else into a
    view of its base's tangent (made zeros if the base had none) when ``self`` is a view."""
    if new is None:
        return
    mine = tangent_of(self)
    base = self._base_
    if mine is None and base is not None:
        base_tangent = tangent_of(base)
        if base_tangent is None:
            base_tangent = Tensor._from_array(namespace_of(base._data).zeros_like(base._data))
            set_tangent(base, base_tangent)
        mine = vw.as_strided(base_tangent, tuple(self.shape), self.stride(), self.storage_offset())
        set_tangent(self, mine)
    if mine is None:
        set_tangent(self, new)
        return
    forward_level.propagating = False
    try:
        mine.copy_(new)
    finally:
        forward_level.propagating = True


def _save_original_self(node: Node, old: Tensor) -> None:
    """A formula that uses the input reads, as torch's in-place codegen has it, ``original_self =
    self.clone()`` taken before the write (recorded: a CloneBackward0 on the second-order graph),
    while the node's own edge stays the input's."""
    slot = getattr(node, "op", None) and node.op._saved_slots.get("self")
    if slot and getattr(node, slot, None) is not None:
        setattr(node, slot, old.clone())


def _save_self_as_result(node: Node, self: Tensor) -> None:
    """A node that saved its result saved ``self`` after the write (so later writes are caught),
    as torch's ``SavedVariable(self, is_output, is_inplace_on_view)``: a view's new grad_fn kept
    weakly, named in the error of a later write while it lives."""
    for value in getattr(node, "_saved", {}).values():
        if isinstance(value, SavedTensor) and value.is_output and value.tensor is not None:
            value.tensor, value.version = self.detach(), self._vc.value
            if self._base_ is not None:
                value.weak_fn = weakref.ref(self._grad_fn_)


def _rebase_history(t: Tensor, node: Node) -> None:
    node._input_meta = [input_meta(t)]
    if t._base_ is None:
        _move_retain_grad(t, node)
        t._grad_fn_, t._output_nr = node, 0
        return
    base = t._base_
    copy_slices = CopySlices(base, node, tuple(t.shape), t.stride(), t.storage_offset())
    _move_retain_grad(base, copy_slices)
    base._grad_fn_, base._output_nr = copy_slices, 0
    regenerated = base.as_strided(tuple(t.shape), t.stride(), t.storage_offset())
    _move_retain_grad(t, regenerated._grad_fn_)
    t._grad_fn_, t._output_nr = regenerated._grad_fn_, 0
    t._view_version = t._vc.value


def unimplemented_out(name: str) -> Any:
    """What records on out the node torch's autograd fallback gives an out= call of an op it has
    no derivative for (aten::``name``): a NotImplemented node linked to the call's tensors, then
    out's old history, that require grad (in that order), out's history rebased onto it (a view's
    base gets CopySlices); its backward raises torch's error naming the op."""

    return lambda out, tensors: _record_unimplemented(name, out, tensors)


def _record_unimplemented(name: str, out: Tensor, tensors: list[Tensor]) -> None:
    op = _unimplemented_op(name, len(tensors) + 1)
    _rebase_history(out, apply(op, *tensors, _old_value(out))._grad_fn_)


@functools.cache
def _unimplemented_op(name: str, arity: int) -> OpDef:
    """The NotImplemented op of ``unimplemented_out`` with ``arity`` tensors, out's (the result) last."""
    names = tuple(f"input{i}" for i in range(arity))
    formula = D("", _no_derivative(name))
    return OpDef("NotImplemented", lambda xp, *arrays: arrays[-1], names, dict.fromkeys(names, formula),
                 qualified_name=NOT_IMPLEMENTED)  # fmt: skip


def _move_retain_grad(t: Tensor, node: Node | None) -> None:
    if t._retains_grad and t._grad_fn_ is not None and node is not None:
        hook = t._grad_fn_._retains_grad_hooks.pop(t._output_nr, None)
        if hook is not None:
            node._own("_retains_grad_hooks")[0] = hook


class CopySlices(Node):
    """grad_fn of a base whose view was modified in place: routes the view region's gradient
    through the in-place op's node and the rest straight to the base's old history."""

    def __init__(self, base: Tensor, fn: Node, size: tuple, stride: tuple, offset: int) -> None:
        super().__init__()
        self._next = (base._edge(),) + tuple(fn._next[1:])
        self._input_meta = [input_meta(base)]
        self.fn, self.size, self.stride = fn, size, stride
        self.offset = offset - base.storage_offset()  # the view's, from the base's first element
        self.base_stride = base.stride()
        self.base_overlaps = _overlaps(base)

    def _like_base(self, g: Tensor) -> Tensor:
        """The gradient in the base's layout, as torch's new_empty_strided(base) then copy_ (so a
        create_graph graph holds CopyBackwards there); a base whose elements share memory keeps
        the gradient's own layout (clone)."""
        if self.base_overlaps:
            return g.clone()
        memory = _layout.strided_array(namespace_of(g._data), tuple(g.shape), self.base_stride, g._data.dtype)
        return copy_(Tensor._from_array(memory), g)

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def apply(self, grads: tuple) -> tuple:
        g = grads[0]
        if g is None:
            return (None,) * len(self._next)
        if self.fn is None:
            raise RuntimeError(FREED)
        result = self._like_base(g)
        region = result.as_strided(self.size, self.stride, self.offset)
        res = self.fn.apply((region.clone(),))
        if res[0] is None:  # as torch: no gradient for the base at all (a custom Function's None)
            return res
        region.copy_(res[0])
        return (result,) + tuple(res[1:])

    def release(self) -> None:
        """As torch's CopySlices::release_variables: the wrapped node is dropped, so a second
        backward through this node raises even when that node saved nothing."""
        if self.fn is not None:
            self.fn.release()
            self.fn = None


# squeeze_(dim): squeeze(dim)'s forward and derivative, recorded as the in-place overload's node
SQUEEZE_DIM_ = dataclasses.replace(vw.SQUEEZE_DIM, node_name="SqueezeBackward4", view=False)


def squeeze_result_(result: Tensor, dim: int) -> Tensor:
    """torch's ``result.squeeze_(dim)`` on a tensor an op has just made (ATen's matmul squeezes
    its mm result so): ``result`` takes the new shape in place, not as a view, its version goes up
    by one and its history moves onto a SqueezeBackward4 node. A fresh result is neither a leaf
    nor a view, so none of the checks of an in-place write on those apply."""
    if result._base_ is not None or (result._grad_fn_ is None and result._requires_grad):
        raise ValueError("squeeze_result_ takes an op's fresh result, not a view or a leaf")
    squeezed = apply(SQUEEZE_DIM_, result, dim=dim)
    result._data = squeezed._data
    result._vc.bump()
    if squeezed._grad_fn_ is not None:
        _rebase_history(result, squeezed._grad_fn_)
    return result


def inplace_method(spec: Any) -> Any:
    """The in-place method of ``spec(self, *args, **kwargs) -> (op, others, attrs)``: ``op`` run in
    place on self (``x.add_(y)``)."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        op, others, attrs = spec(self, *args, **kwargs)
        return apply_inplace(op, self, *others, **attrs)

    method.__signature__ = inspect.signature(spec)  # type: ignore[attr-defined]  # (what it takes)
    return method


def unary_inplace(op: OpDef) -> Any:
    """``x.<op>_()``: a unary op in place."""
    return inplace_method(lambda self: (op, (), {}))


@api.method("copy_")
def copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """``self.copy_(src)``; ``src`` may lie on another device (torch's copy_ is its cross-device
    copy: ``load_state_dict`` of CPU tensors into a 'cuda' module goes through it)."""
    if isinstance(src, Tensor) and type(src._data) is not type(self._data):
        return apply_inplace(COPY_ACROSS, self, src, source=str(src.device))
    return apply_inplace(COPY, self, src)


@api.variants("fill_")
def fill_(self: Tensor, value: Any) -> Tensor:

    if isinstance(value, Tensor):
        if value.dim():
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions."
            )
        return apply_inplace(FILL_TENSOR, self, value)
    return apply_inplace(FILL, self, value=value)


@api.variants("zero_")
def zero_(self: Tensor) -> Tensor:
    return apply_inplace(ZERO, self)
