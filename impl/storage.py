"""torch.storage's TypedStorage, as ``Tensor.storage()`` gives it: the memory a tensor lies in
(its base's, for a view) as a flat sequence of Python numbers, shared with the tensor, printed
as torch prints it; each use warns, once per process, that TypedStorage is deprecated."""

from __future__ import annotations

import warnings
from typing import Any

from impl import _api as api
from impl import dtypes
from impl._tensor import Tensor
from impl._xp import device_of, to_numpy

DEPRECATED = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
    "storage class. This should only matter to you if you are using storages directly.  To access "
    "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()"
)
_state = {"warned": False}

def _warn_typed_storage_removal(stacklevel: int = 2) -> None:
    """torch's deprecation warning, given the first time only."""
    if not _state["warned"]:
        warnings.warn(DEPRECATED, UserWarning, stacklevel=stacklevel + 1)
        _state["warned"] = True

def _reset_warn_typed_storage_removal() -> None:
    _state["warned"] = False

class TypedStorage:
    """A tensor's storage: its flat memory ``array`` (shared) of ``dtype``."""

    is_sparse = False

    def __init__(self, array: Any, dtype: dtypes.dtype) -> None:
        self._array, self.dtype = array, dtype

    @property
    def device(self) -> Any:
        return device_of(self._array)

    def _size(self) -> int:
        return int(self._array.shape[0])

    def size(self) -> int:
        _warn_typed_storage_removal()
        return self._size()

    def __len__(self) -> int:
        _warn_typed_storage_removal()
        return self._size()

    def _index(self, idx: Any) -> int:
        if type(idx) is not int:
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        if idx >= self._size() or idx < -self._size():
            raise IndexError(f"index {idx} out of range for storage of size {self._size()}")
        return idx % self._size()

    def __getitem__(self, idx: Any) -> Any:
        _warn_typed_storage_removal()
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        return self._array[self._index(idx)].item()

    def __setitem__(self, idx: Any, value: Any) -> None:
        _warn_typed_storage_removal()
        if not isinstance(idx, (int, slice)):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        Tensor._from_array(self._array)[idx] = value  # shares the memory: the write shows in the tensor

    def __iter__(self) -> Any:
        _warn_typed_storage_removal()
        return iter(self.tolist())

    def tolist(self) -> list:
        _warn_typed_storage_removal()
        return to_numpy(self._array).tolist()

    def element_size(self) -> int:
        _warn_typed_storage_removal()
        return int(self._array.itemsize)

    def nbytes(self) -> int:
        _warn_typed_storage_removal()
        return int(self._array.nbytes)

    def data_ptr(self) -> int:
        _warn_typed_storage_removal()
        return Tensor._from_array(self._array).data_ptr()

    def __str__(self) -> str:
        _warn_typed_storage_removal()
        kind = f"torch.storage.TypedStorage(dtype={self.dtype}, device={self.device})"
        values = "\n ".join(str(v) for v in to_numpy(self._array).tolist())
        return f" {values}\n[{kind} of size {self._size()}]"

    def __repr__(self) -> str:
        _warn_typed_storage_removal()
        return str(self)

@api.method("storage")
def storage(self: Tensor) -> TypedStorage:
    """The tensor's TypedStorage (its base's memory, for a view), with torch's deprecation warning."""
    _warn_typed_storage_removal(stacklevel=3)  # past the method binding's frame, at the caller
    return TypedStorage(self._storage_array(), self.dtype)
