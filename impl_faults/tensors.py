"""Planted faults that break tensor semantics: dtype inference and promotion, views, memory
shared with numpy, the layout of elementwise results, the in-place view methods (rules TEN-*)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy as np

from impl_faults import fault, patched


@fault({"TEN-001": "dtype differs"})
def python_floats_inferred_float64() -> Iterator[None]:
    """torch.tensor infers numpy's float64 for Python floats instead of the default dtype (float32)."""
    from impl import _creation, dtypes

    def make(original: Callable) -> Callable:
        def inferred(data: Any) -> Any:
            return dtypes.float64 if isinstance(data, float) else original(data)

        return inferred

    with patched(_creation, "_inferred", make):
        yield


@fault({"TEN-002": "dtype differs"})
def python_float_scalar_is_float64() -> Iterator[None]:
    """A Python float takes part in type promotion as float64 (a C double) instead of the default
    dtype: an int tensor times 2.5 is float64 instead of float32."""
    from impl import dtypes

    def make(original: Callable) -> Callable:
        def scalar_dtype(value: object) -> Any:
            return dtypes.float64 if isinstance(value, (float, np.floating)) else original(value)

        return scalar_dtype

    with patched(dtypes, "scalar_dtype", make):
        yield


@fault({"TEN-002": "dtype differs"})
def integers_promote_by_size() -> Iterator[None]:
    """Two integer dtypes promote to the wider one (the first of equal size) instead of one that
    holds both ranges: uint8 with int8 is uint8 instead of int16."""
    from impl import dtypes

    def make(original: Callable) -> Callable:
        def promote_types(a: Any, b: Any) -> Any:
            if a.is_floating_point or b.is_floating_point or dtypes.bool_ in (a, b):
                return original(a, b)
            return a if a.itemsize >= b.itemsize else b

        return promote_types

    with patched(dtypes, "promote_types", make):
        yield


@contextmanager
def promoted_operands_replaced(replace: Callable[[Any], Any]) -> Iterator[None]:
    """Type promotion (``dtypes.result_type``) sees each operand as ``replace(operand)``."""
    from impl import dtypes

    def make(original: Callable) -> Callable:
        return lambda *operands: original(*map(replace, operands))

    with patched(dtypes, "result_type", make):
        yield


@fault({"TEN-002": "dtype differs"})
def zero_dim_tensor_promotes_in_its_category() -> Iterator[None]:
    """A 0-d tensor takes part in type promotion as a dimensioned tensor does, also within its
    category: an int32 tensor times an int64 0-d tensor is int64 instead of int32."""
    from impl._tensor import Tensor

    def replace(op: Any) -> Any:
        zero_dim = isinstance(op, Tensor) and not op._wrapped_number and op.dim() == 0
        return op.detach().reshape(1) if zero_dim else op

    with promoted_operands_replaced(replace):
        yield


@fault({"TEN-002": "dtype differs"})
def python_number_promotes_as_zero_dim_tensor() -> Iterator[None]:
    """A Python number takes part in type promotion as a 0-d tensor of its dtype does, so it
    decides within its category against a 0-d tensor: a 0-d int32 tensor plus 1 is int64
    instead of int32."""
    import impl
    from impl._tensor import Tensor

    def replace(op: Any) -> Any:
        if isinstance(op, Tensor) and op._wrapped_number:
            return impl.tensor(op._data.item())
        return impl.tensor(op) if isinstance(op, (bool, int, float)) else op

    with promoted_operands_replaced(replace):
        yield


@fault({"TEN-003": "expected error", "ERR-003": "expected error", "SEED-003-3": "exception line"})
def view_copies_when_not_viewable() -> Iterator[None]:
    """view() of a tensor whose strides allow no view copies it (as reshape does) instead of
    raising torch's error."""
    from impl._ops.views import VIEW

    def make(original: Callable) -> Callable:
        def view(xp: Any, a: Any, size: tuple) -> Any:
            try:
                return original(xp, a, size)
            except RuntimeError:
                return xp.ascontiguousarray(a).reshape(size)

        return view

    with patched(VIEW, "forward", make):
        yield


@fault({"TEN-004": "data differs", "SEED-003-4": "stdout line"})
def from_numpy_copies() -> Iterator[None]:
    """torch.from_numpy copies the array instead of sharing its memory."""
    import impl
    from impl import _creation

    def make(original: Callable) -> Callable:
        return lambda array: original(array.copy() if isinstance(array, np.ndarray) else array)

    with patched(impl, "from_numpy", make), patched(_creation, "from_numpy", make):
        yield


@fault({"TEN-005": "stride differs"})
def elementwise_layout_last_operand_decides() -> Iterator[None]:
    """An elementwise result takes the dimension order of the last operand that orders two
    dimensions instead of the first."""
    from impl import _layout

    def make(original: Callable) -> Callable:
        return lambda xp, result, operands: original(xp, result, operands[::-1])

    with patched(_layout, "elementwise_layout", make):
        yield


@contextmanager
def inference_replaced(replace: Callable[[Callable, Any, Any], Any]) -> Iterator[None]:
    """torch.tensor's dtype inference (``_creation._infer(data, dtype)``) replaced by
    ``replace(original, data, dtype)``."""
    from impl import _creation

    def make(original: Callable) -> Callable:
        return lambda data, dtype=None: replace(original, data, dtype)

    with patched(_creation, "_infer", make):
        yield


def inferred_instead(found: type, given: type) -> AbstractContextManager[None]:
    """torch.tensor's inference gives ``given`` where it infers ``found`` (no dtype asked for)."""

    def replace(original: Callable, data: Any, dtype: Any) -> Any:
        arr = original(data, dtype)
        return arr.astype(given) if dtype is None and arr.dtype == found else arr

    return inference_replaced(replace)


@fault({"TEN-001": "dtype differs"})
def python_ints_inferred_int32() -> Iterator[None]:
    """torch.tensor infers int32 (a C long on some platforms) for Python ints instead of int64."""
    with inferred_instead(np.int64, np.int32):
        yield


@fault({"TEN-001": "dtype differs"})
def python_bools_inferred_int64() -> Iterator[None]:
    """torch.tensor takes Python bools for the ints they subclass: True is inferred int64 instead
    of bool."""
    with inferred_instead(np.bool_, np.int64):
        yield


@fault({"TEN-001": "dtype differs"})
def list_inferred_from_first_element() -> Iterator[None]:
    """torch.tensor infers a list's dtype from its first element instead of the widest kind in
    it: [1, 2.5] is int64."""

    def replace(original: Callable, data: Any, dtype: Any) -> Any:
        arr = original(data, dtype)
        listed = dtype is None and isinstance(data, list) and data
        return arr.astype(original(data[0]).dtype) if listed else arr

    with inference_replaced(replace):
        yield


@fault({"TEN-001": "dtype differs"})
def scalar_dtype_argument_ignored() -> Iterator[None]:
    """torch.tensor of a Python number (0-d data) ignores the dtype given and infers one."""

    def replace(original: Callable, data: Any, dtype: Any) -> Any:
        return original(data, None if isinstance(data, (bool, int, float)) else dtype)

    with inference_replaced(replace):
        yield


@fault({"TEN-001": "expected error"})
def out_of_range_data_wraps() -> Iterator[None]:
    """torch.tensor(data, dtype=<an integer dtype>) wraps a Python number the dtype cannot hold
    (-0.5 as uint8) instead of raising torch's overflow error."""
    from impl import _creation

    with patched(_creation, "_check_range", lambda _original: lambda data, d: None):
        yield


@fault({"TEN-003": "version differs"})
def view_has_own_version_counter() -> Iterator[None]:
    """A view gets a version counter of its own instead of sharing its base's: a write through
    the view bumps only the view's version."""
    from impl._tensor import Tensor

    with patched(Tensor, "_vc", lambda prop: property(prop.fget, lambda self, counter: None)):
        yield


@fault({"TEN-003": "offset differs"})
def storage_offset_in_bytes() -> Iterator[None]:
    """storage_offset() counts bytes instead of elements."""
    from impl._tensor import Tensor

    def make(original: Callable) -> Callable:
        return lambda self: original(self) * self.element_size()

    with patched(Tensor, "storage_offset", make):
        yield


@fault({"TEN-003": "contiguous differs"})
def size_one_strides_break_contiguity() -> Iterator[None]:
    """is_contiguous() requires a size-1 dimension to have its C stride too, where torch lets it
    have any."""
    from impl._tensor import Tensor

    def make(original: Callable) -> Callable:
        return lambda self, memory_format=None: (
            self.numel() == 0
            or self.stride() == tuple(int(np.prod(self.shape[d + 1 :])) for d in range(self.dim()))
        )

    with patched(Tensor, "is_contiguous", make):
        yield


@fault({"TEN-004": "data differs"})
def numpy_copies() -> Iterator[None]:
    """Tensor.numpy() returns a copy of the tensor's data instead of an array sharing its memory."""
    from impl._tensor import Tensor

    def make(original: Callable) -> Callable:
        return lambda self, *, force=False: original(self, force=force).copy()

    with patched(Tensor, "numpy", make):
        yield


@fault({"TEN-004": "data differs"})
def tensor_shares_numpy_array() -> Iterator[None]:
    """torch.tensor of a numpy array shares its memory (as from_numpy does) instead of copying it."""
    import impl
    from impl import _creation

    def make(original: Callable) -> Callable:
        return lambda data, *args, **kwargs: (
            _creation.from_numpy(data) if isinstance(data, np.ndarray) else original(data, *args, **kwargs)
        )

    with patched(impl, "tensor", make), patched(_creation, "tensor", make):
        yield


@fault({"TEN-004": "dtype differs"})
def tensor_of_array_infers_dtype() -> Iterator[None]:
    """torch.tensor reads a numpy array as Python data, so its tensor takes the inferred dtype
    (float32 for float64, int64 for int32) instead of keeping the array's."""

    def replace(original: Callable, data: Any, dtype: Any) -> Any:
        return original(data.tolist() if isinstance(data, np.ndarray) else data, dtype)

    with inference_replaced(replace):
        yield


@fault({"TEN-004": "the backend raised none"})
def numpy_of_grad_tensor_allowed() -> Iterator[None]:
    """Tensor.numpy() of a tensor that requires grad returns its array instead of raising."""
    from impl._tensor import Tensor

    with patched(Tensor, "numpy", lambda original: lambda self, *, force=False: original(self, force=True)):
        yield


@fault({"TEN-005": "stride differs"})
def elementwise_common_layout_not_kept() -> Iterator[None]:
    """An elementwise result whose operands share one layout is laid out from their order of
    strides instead of keeping that layout (its size-1 dimensions' strides)."""
    from impl import _layout

    with patched(_layout, "_fast_setup_strides", lambda _original: lambda shape, operands: None):
        yield


@fault({"TEN-005": "stride differs"})
def broadcast_dimension_orders() -> Iterator[None]:
    """A broadcast dimension of an operand orders the result's dimensions by the stride it has
    before broadcasting instead of ordering nothing."""
    from impl import _layout

    def make(original: Callable) -> Callable:
        def broadcast_strides(shape: tuple, operand: tuple) -> list[int]:
            own_shape, own_strides = operand
            return [0] * (len(shape) - len(own_shape)) + list(own_strides)

        return broadcast_strides

    with patched(_layout, "_broadcast_strides", make):
        yield


@fault({"TEN-005": "stride differs"})
def inplace_result_rebinds_self() -> Iterator[None]:
    """An in-place op leaves self holding a fresh contiguous array of the result instead of
    writing into self's memory, so self loses its strides."""
    from impl._ops import inplace

    def make(original: Callable) -> Callable:
        def apply_inplace(op: Any, self: Any, *others: Any, **attrs: Any) -> Any:
            out = original(op, self, *others, **attrs)
            self._data = np.ascontiguousarray(self._data)
            return out

        return apply_inplace

    with patched(inplace, "apply_inplace", make):
        yield


@fault({"TEN-005": "stride differs"})
def cast_operand_keeps_its_strides() -> Iterator[None]:
    """An operand cast to the common dtype orders the result's dimensions by its own strides
    instead of those of its cast copy (laid out as ``.to`` lays it out)."""
    from impl import _layout

    def make(original: Callable) -> Callable:
        return lambda xp, result, operands: original(xp, result, [(a, False) for a, _cast in operands])

    with patched(_layout, "elementwise_layout", make):
        yield


@fault({"TEN-006": "version"})
def in_place_view_keeps_the_version() -> Iterator[None]:
    """An in-place view method (t_, squeeze_ ...) changes the tensor's geometry without bumping
    its version counter."""
    from impl._ops import inplace_views

    def make(original: Callable) -> Callable:
        def restyled(self: Any, op: Any, **attrs: Any) -> Any:
            before = self._vc.value
            out = original(self, op, **attrs)
            self._vc.value = before
            return out

        return restyled

    with patched(inplace_views, "_restyled", make):
        yield


@fault({"TEN-006": "graph differs"})
def in_place_view_records_the_view_node() -> Iterator[None]:
    """An in-place view method records the out-of-place op's node (TBackward0, SqueezeBackward1
    ...) instead of its in-place overload's (TBackward1, SqueezeBackward4 ...)."""
    import dataclasses

    from impl._ops import inplace_views, views

    out_of_place = {
        "T_": views.T,
        "TRANSPOSE_": views.TRANSPOSE,
        "SQUEEZE_": views.SQUEEZE,
        "SQUEEZE_DIM_": views.SQUEEZE_DIM,
        "SQUEEZE_DIMS_": views.SQUEEZE_DIMS,
        "UNSQUEEZE_": views.UNSQUEEZE,
        "AS_STRIDED_": views.AS_STRIDED,
    }
    with contextlib.ExitStack() as stack:
        for name, op in out_of_place.items():
            replaced = dataclasses.replace(op, view=False)
            stack.enter_context(patched(inplace_views, name, lambda _orig, r=replaced: r))
        yield


@fault({"TEN-006": "expected error"})
def in_place_view_of_a_leaf_accepted() -> Iterator[None]:
    """An in-place view method on a leaf that requires grad (or a view of one) is accepted instead
    of raising torch's error."""
    from impl._ops import inplace_views

    with patched(inplace_views, "check_inplace", lambda _orig: lambda t, others=(): None):
        yield


@fault({"TEN-006": "graph differs"})
def in_place_view_forgets_its_history() -> Iterator[None]:
    """An in-place view method changes the tensor's geometry but records no node: its old grad_fn
    receives gradients in the new geometry (laid out as the old one: transposed or reshaped)."""
    from impl._ops import inplace_views

    def make(original: Callable) -> Callable:
        def restyled(self: Any, op: Any, **attrs: Any) -> Any:
            before = self._grad_fn, self._output_nr, self._view_version
            out = original(self, op, **attrs)
            if before[0] is not None:
                self._grad_fn, self._output_nr, self._view_version = before[0], before[1], self._vc.value
            return out

        return restyled

    with patched(inplace_views, "_restyled", make):
        yield


@fault({"TEN-001": "dtype differs"})
def legacy_constructors_infer_the_dtype() -> Iterator[None]:
    """torch.FloatTensor, torch.LongTensor ... of data infer its dtype as torch.tensor does instead
    of converting it to their own."""
    from impl import _creation, _legacy

    def make(original: Callable) -> Callable:
        def construct(d: Any, device_type: str, form: str, args: tuple, kwargs: dict, **more: Any) -> Any:
            if form == "ctor" and len(args) == 1 and isinstance(args[0], (list, tuple)):
                return _creation.tensor(args[0])
            return original(d, device_type, form, args, kwargs, **more)

        return construct

    with patched(_legacy, "legacy_construct", make):
        yield


@fault({"TEN-001": "the backend raised none"})
def new_methods_take_the_default_dtype() -> Iterator[None]:
    """new_tensor, new_zeros, new_ones and new_full make tensors of the default dtype instead of
    self's when no dtype is given."""
    import impl
    from impl import dtypes

    def make(original: Callable) -> Callable:
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            kwargs.setdefault("dtype", dtypes.get_default_dtype())
            return original(self, *args, **kwargs)

        return method

    with contextlib.ExitStack() as stack:
        for name in ("new_tensor", "new_zeros", "new_ones", "new_full"):
            stack.enter_context(patched(impl.Tensor, name, make))
        yield


@fault({"TEN-004": "version differs"})
def pickled_tensor_rebuilt_wrong() -> Iterator[None]:
    """A tensor pickled (or copied by copy.copy) comes back not requiring grad, and a tensor rebuilt
    by unpickling (pickle, copy.copy, torch.load) at version 0, not at the 1 torch's
    storage-setting write leaves. Each half alone is caught too (by test_pickle_copies_copy_shares,
    "requires_grad" and "version differs")."""
    from impl import serialization
    from impl._tensor import Tensor

    def reduce_ex(original: Callable) -> Callable:
        def reduce(self: Any, protocol: Any) -> Any:
            rebuild, args = original(self, protocol)
            return rebuild, (*args[:4], False, *args[5:])

        return reduce

    def rebuild(original: Callable) -> Callable:
        def rebuilt(*args: Any) -> Any:
            t = original(*args)
            t._vc.value = 0
            return t

        rebuilt.__qualname__, rebuilt.__module__ = original.__qualname__, original.__module__  # (by name)
        return rebuilt

    with patched(Tensor, "__reduce_ex__", reduce_ex), patched(serialization, "_rebuild_tensor_v2", rebuild):
        yield


def _memory_format() -> Any:
    from impl import _memory_format

    return _memory_format


@fault({"TEN-007": "stride differs"})
def channels_last_strides_contiguous() -> Iterator[None]:
    """A memory format's strides are contiguous_format's (channels_last copies stay NCHW; its rank
    still checked)."""
    formats = _memory_format()

    def strides(original: Callable) -> Callable:
        return lambda fmt, shape: original(fmt, shape) and original(formats.contiguous_format, shape)

    with patched(formats, "strides", strides):
        yield


@fault({"TEN-007": "shown differs"})
def is_contiguous_ignores_format() -> Iterator[None]:
    """is_contiguous(memory_format=) of a 4-d or 5-d tensor tests contiguous_format's order whatever
    the format."""
    formats = _memory_format()

    def is_contiguous(original: Callable) -> Callable:
        def tested(fmt: Any, shape: tuple, st: tuple) -> bool:
            return original(formats.contiguous_format if len(shape) in (4, 5) else fmt, shape, st)

        return tested

    with patched(formats, "is_contiguous", is_contiguous):
        yield


@fault({"TEN-007": "stride differs"})
def to_memory_format_aliases() -> Iterator[None]:
    """to(memory_format=channels_last) returns the tensor itself whenever its dtype and device stay
    (every tensor taken as suggesting channels_last)."""
    formats = _memory_format()
    with patched(formats, "suggested", lambda _original: lambda shape, st: formats.channels_last):
        yield


@fault({"TEN-007": "stride differs"})
def conv_output_not_channels_last() -> Iterator[None]:
    """conv2d's output stays NCHW-contiguous when its input or weight is channels_last."""
    from impl.nn import _conv

    with patched(_conv, "copy_like", lambda original: lambda xp, a, strides=None, dtype=None: a):
        yield


@fault({"TEN-007": "expected error"})
def channels_last_rank_unchecked() -> Iterator[None]:
    """channels_last at another rank than 4 (channels_last_3d: 5) lays a tensor out contiguous
    instead of raising torch's 'required rank 4 tensor' error."""
    formats = _memory_format()

    def order(original: Callable) -> Callable:
        def checked(fmt: Any, ndim: int) -> tuple:
            try:
                return original(fmt, ndim)
            except RuntimeError:
                return tuple(range(ndim - 1, -1, -1))

        return checked

    with patched(formats, "_order", order):
        yield
