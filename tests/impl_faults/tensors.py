"""Planted faults that break tensor semantics: dtype inference and promotion, views, memory
shared with numpy, the layout of elementwise results (rules TEN-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from tests.impl_faults import fault, patched


@fault({"TEN-001": "dtype differs"})
def python_floats_inferred_float64() -> Iterator[None]:
    """torch.tensor keeps numpy's float64 for Python floats instead of the default dtype (float32):
    every piece of data is taken for numpy data, whose dtype is kept."""
    from impl import _creation

    with patched(_creation, "_contains_numpy", lambda _original: lambda data: True):
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
    from impl._ops import views

    def make(original: Callable) -> Callable:
        return lambda xp, result, operands: original(xp, result, operands[::-1])

    with patched(views, "elementwise_layout", make):
        yield
