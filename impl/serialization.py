"""torch.save and torch.load in torch's own file format, so that files pass between impl and torch.

A file is a zip archive (stored, not compressed) under the directory ``archive/``: ``data.pkl``
(the object, pickled with protocol 2; each tensor a call of ``torch._utils._rebuild_tensor_v2``
over a persistent storage reference ``('storage', torch.FloatStorage, key, 'cpu', numel)``),
``.format_version``, ``.storage_alignment``, ``byteorder``, ``data/<key>`` (each storage's bytes,
64-byte aligned), ``version`` and ``.data/serialization_id``. impl's classes and functions are
written under torch's names (``impl.nn.modules.linear.Linear`` as ``torch.nn...``) and read back
as impl's. ``load`` unpickles with torch's ``weights_only`` rules (the default): only tensors,
containers, numbers, strings and torch's allowed globals, and torch's errors for the rest.
"""

from __future__ import annotations

import _compat_pickle
import codecs
import hashlib
import importlib
import io
import os
import pickle
import re
import sys
import warnings
import zipfile
from collections import Counter, OrderedDict
from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes
from impl._size import Size
from impl._tensor import Tensor
from impl._xp import cuda_available, device, namespace_for, to_numpy, transferred
from impl.nn.parameter import Parameter

_STORAGE_TYPES = {
    dtypes.float64: "DoubleStorage", dtypes.float32: "FloatStorage", dtypes.float16: "HalfStorage",
    dtypes.bfloat16: "BFloat16Storage", dtypes.int64: "LongStorage", dtypes.int32: "IntStorage",
    dtypes.int16: "ShortStorage", dtypes.int8: "CharStorage", dtypes.uint8: "ByteStorage",
    dtypes.bool_: "BoolStorage",
}
_STORAGE_DTYPES = {name: d for d, name in _STORAGE_TYPES.items()}
_ALIGNMENT = 64

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file from a "
    "trusted source."
)
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
    "weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")


class _Global:
    """A module-level name written into the pickle as it is (``GLOBAL module name``)."""

    __slots__ = ("module", "name")
    _made: dict[tuple[str, str], _Global] = {}

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    @classmethod
    def of(cls, module: str, name: str) -> _Global:
        """The one instance per name (so the pickle memo writes it once)."""
        return cls._made.setdefault((module, name), cls(module, name))

    def __call__(self, *args: Any) -> Any:  # save_reduce asks for a callable
        raise TypeError(f"{self.module}.{self.name} is a name in a pickle, not a function")


class _StorageRef:
    """A tensor's storage while pickling: its memory as a 1-d array from its start, and its dtype."""

    __slots__ = ("array", "dtype")

    def __init__(self, array: Any, dtype: dtypes.dtype) -> None:
        self.array, self.dtype = array, dtype


def _torch_module(module: str) -> str:
    """The torch module that an impl module stands for (``impl.nn.modules.linear`` ->
    ``torch.nn.modules.linear``)."""
    return "torch" + module[len("impl"):] if module == "impl" or module.startswith("impl.") else module


# impl classes whose torch names differ from their modules'
_TORCH_NAMES = {Tensor: ("torch._tensor", "Tensor"), Size: ("torch", "Size"), device: ("torch", "device")}


class _Pickler(pickle._Pickler):  # the Python pickler: its save and save_global can be extended
    """torch's pickling: tensors by ``_rebuild_tensor_v2`` over persistent storage ids, dtypes and
    impl's classes under torch's names. ``extents`` (address -> elements) sizes each storage."""

    def __init__(self, file: Any, extents: dict[int, int]) -> None:
        super().__init__(file, protocol=2)
        self.extents = extents
        self.keys: dict[int, str] = {}  # storage address -> key
        self.storages: dict[str, _StorageRef] = {}
        self.dtypes: dict[int, dtypes.dtype] = {}

    def persistent_id(self, obj: Any) -> Any:
        if not isinstance(obj, _StorageRef):
            return None
        address = _address(obj.array)
        if self.dtypes.setdefault(address, obj.dtype) != obj.dtype:
            raise RuntimeError(
                "Cannot save multiple tensors or storages that view the same data as different types"
            )
        numel = max(self.extents.get(address, 0), obj.array.size)
        self.extents[address] = numel
        key = self.keys.setdefault(address, str(len(self.keys)))
        self.storages[key] = obj
        storage_type = _Global.of("torch", _STORAGE_TYPES[obj.dtype])
        return ("storage", storage_type, key, _location(obj.array), numel)

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return _reduce_tensor(obj)
        if isinstance(obj, Size):
            return _Global.of("torch", "Size"), (tuple(int(s) for s in obj),)
        if isinstance(obj, device):
            return _Global.of("torch", "device"), (str(obj),)
        return NotImplemented

    def save(self, obj: Any, save_persistent_id: bool = True) -> None:
        if isinstance(obj, dtypes.dtype):
            obj = _Global.of("torch", obj.name)
        if isinstance(obj, _Global):
            memo = self.memo.get(id(obj))
            if memo is not None:
                self.write(self.get(memo[0]))
                return
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
            self.memoize(obj)
            return
        super().save(obj, save_persistent_id)

    def save_global(self, obj: Any, name: str | None = None) -> None:
        module = getattr(obj, "__module__", None) or ""
        if obj in _TORCH_NAMES:
            self.save(_Global.of(*_TORCH_NAMES[obj]))
        elif module == "impl" or module.startswith("impl."):
            self.save(_Global.of(_torch_module(module), name or obj.__qualname__))
        else:
            super().save_global(obj, name)

    dispatch = pickle._Pickler.dispatch.copy()
    dispatch[type] = save_global


def _address(array: Any) -> int:
    if isinstance(array, np.ndarray):
        return int(array.__array_interface__["data"][0])
    return int(array.data.ptr)


def _location(array: Any) -> str:
    return "cpu" if isinstance(array, np.ndarray) else f"cuda:{array.device.id}"


def _reduce_tensor(t: Tensor) -> tuple:
    if isinstance(t, Parameter):
        plain = t.detach()
        return _Global.of("torch._utils", "_rebuild_parameter"), (plain, t.requires_grad, OrderedDict())
    storage = _StorageRef(t._storage_array(), t.dtype)
    args = (storage, t.storage_offset(), tuple(t.shape), t.stride(), t.requires_grad, OrderedDict())
    return _Global.of("torch._utils", "_rebuild_tensor_v2"), args


def _pickled(obj: Any) -> tuple[bytes, dict[str, _StorageRef], dict[int, int]]:
    """The pickle of ``obj`` and its storages by key. It is pickled twice: the first pass finds
    each storage's extent over all the tensors that share it, the second writes those extents."""
    extents: dict[int, int] = {}
    for _ in range(2):
        buffer = io.BytesIO()
        pickler = _Pickler(buffer, extents)
        pickler.dump(obj)
    return buffer.getvalue(), pickler.storages, extents


class _ZipWriter:
    """The records of torch's archive, each stored uncompressed; data records aligned as torch's."""

    def __init__(self, file: Any, archive: str) -> None:
        self.archive = archive
        self.start = file.tell() if hasattr(file, "tell") else 0
        self.zip = zipfile.ZipFile(file, "w", compression=zipfile.ZIP_STORED, allowZip64=True)

    def write(self, name: str, data: bytes) -> None:
        info = zipfile.ZipInfo(f"{self.archive}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
        # the local header is 30 bytes, the name, then the extra field: pad that field (id "FB",
        # as torch's writer) so the data starts at a multiple of the alignment
        header_end = self.zip.fp.tell() - self.start + 30 + len(info.filename.encode()) + 4
        pad = -header_end % _ALIGNMENT
        info.extra = b"FB" + pad.to_bytes(2, "little") + b"Z" * pad
        self.zip.writestr(info, data)

    def close(self) -> None:
        self.zip.close()


def _open_for(f: Any, mode: str) -> tuple[Any, bool]:
    if isinstance(f, (str, os.PathLike)):
        return open(os.fspath(f), mode), True
    return f, False


@api.function("save")
def save(
    obj: object,
    f: Any,
    pickle_module: Any = pickle,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """torch.save: ``obj`` to a path or a writable binary file object, in torch's zip format."""
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError(
            "expected 'f' to be string, path, or a file-like object with a 'write' attribute"
        )
    archive = "archive"
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        base = os.path.basename(path)
        archive = base[: base.rfind(".")] if "." in base else base  # torch's: the name less its extension
        if not archive:
            raise RuntimeError(f"[enforce fail at inline_container.cc:720] . invalid file name: {path}")
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise RuntimeError(f"Parent directory {os.path.dirname(path) or parent} does not exist.")
    data, storages, extents = _pickled(obj)
    opened, close = _open_for(f, "wb")
    try:
        writer = _ZipWriter(opened, archive)
        writer.write("data.pkl", data)
        writer.write(".format_version", b"1")
        writer.write(".storage_alignment", str(_ALIGNMENT).encode())
        if not _disable_byteorder_record:
            writer.write("byteorder", sys.byteorder.encode())
        for key, ref in storages.items():
            whole = ref.array[: extents[_address(ref.array)]] if ref.array.size else ref.array
            writer.write(f"data/{key}", np.ascontiguousarray(to_numpy(whole)).tobytes())
        writer.write("version", b"3\n")
        writer.write(".data/serialization_id", _serialization_id(data).encode())
        writer.close()
        opened.flush()
    finally:
        if close:
            opened.close()


def _serialization_id(data: bytes) -> str:
    """A 40-digit id of the archive, as torch writes (torch draws it from its content hash)."""
    return str(int.from_bytes(hashlib.sha1(data).digest()[:16], "little")).rjust(40, "0")[:40]


# -- load --------------------------------------------------------------------------------------------
class _StorageType:
    """A storage class named in a pickle (``torch.FloatStorage``): the dtype of its elements."""

    def __init__(self, name: str) -> None:
        self.name, self.dtype = name, _STORAGE_DTYPES.get(name)


class _Storage:
    """A loaded storage, as ``map_location``'s callable receives it: its elements, its device."""

    def __init__(self, array: Any) -> None:
        self.array = array

    def __reduce__(self) -> tuple:
        return _Storage, (self.array,)  # (by value: the array's elements)

    @property
    def device(self) -> device:
        return device(_location(self.array))

    def cpu(self) -> _Storage:
        return _Storage(to_numpy(self.array))

    def cuda(self, index: int | None = None) -> _Storage:
        return _Storage(_restored(self.array, "cuda" if index is None else f"cuda:{index}"))


def _restored(array: Any, location: str) -> Any:
    """``array`` moved to the device a location tag names, with torch's errors."""
    if location == "cpu":
        return to_numpy(array)
    if re.fullmatch(r"cuda(:\d+)?", location):
        if not cuda_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
                "If you are running on a CPU-only machine, please use torch.load with "
                "map_location=torch.device('cpu') to map your storages to the CPU."
            )
        return transferred(namespace_for(device(location)), array)
    raise RuntimeError(
        f"don't know how to restore data location of torch.storage.UntypedStorage (tagged with {location})"
    )


def _restore(map_location: Any, array: Any, location: str) -> Any:
    """torch's _get_restore_location: where a storage saved at ``location`` is loaded."""
    if map_location is None:
        return _restored(array, location)
    if isinstance(map_location, dict):
        return _restored(array, map_location.get(location, location))
    if isinstance(map_location, (str, bytes, device)):
        target = map_location.decode() if isinstance(map_location, bytes) else str(map_location)
        return _restored(array, target)
    result = map_location(_Storage(array), location)
    return _restored(array, location) if result is None else result.array


def _rebuild_tensor_v2(
    storage: _Storage, storage_offset: int, size: tuple, stride: tuple, requires_grad: bool,
    backward_hooks: Any, metadata: Any = None,
) -> Tensor:
    """A tensor over a loaded storage (tensors of one storage share its memory), at version 1 (torch
    sets its storage in place)."""
    memory = storage.array
    start = memory[storage_offset:] if memory.size else memory
    t = Tensor._from_array(_strided(start, tuple(size), tuple(stride)), requires_grad)
    t._storage = memory
    t._vc.bump()
    return t


def _strided(array: Any, shape: tuple, strides: tuple) -> Any:
    xp = np if isinstance(array, np.ndarray) else namespace_for(device(_location(array)))
    step = array.itemsize
    return xp.lib.stride_tricks.as_strided(array, shape, tuple(s * step for s in strides))


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any) -> Parameter:
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(
    data: Tensor, requires_grad: bool, backward_hooks: Any, state: Any
) -> Parameter:
    param = Parameter(data, requires_grad)
    _set_state(param, state)
    return param


def _rebuild_from_type_v2(func: Any, new_type: type, args: tuple, state: Any) -> Any:
    ret = func(*args)
    if type(ret) is not new_type:
        ret.__class__ = new_type
    _set_state(ret, state)
    return ret


def _set_state(obj: Any, state: Any) -> None:
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    for name, value in {**(state or {}), **(slots or {})}.items():
        setattr(obj, name, value)


def _tensor_reduce_ex(self: Tensor, protocol: Any) -> tuple:
    """``Tensor.__reduce_ex__``, as torch's: ``pickle`` and ``copy.copy`` rebuild a leaf (its
    requires_grad kept, its history not) by ``_rebuild_tensor_v2`` over its storage, which pickles
    by value (a pickled tensor shares no memory) and which ``copy.copy`` keeps (the copy shares
    the memory); a subclass keeps its type and attributes."""
    args = (_Storage(self._storage_array()), self.storage_offset(), tuple(self.shape), self.stride(),
            self.requires_grad, OrderedDict())
    if type(self) is Tensor:
        return _rebuild_tensor_v2, args
    return _rebuild_from_type_v2, (_rebuild_tensor_v2, type(self), args, dict(vars(self)) or None)


Tensor.__reduce_ex__ = _tensor_reduce_ex  # type: ignore[method-assign,assignment]


# globals torch's weights_only unpickler allows, by their full names, as impl's objects
_ALLOWED: dict[str, Any] = {
    "collections.OrderedDict": OrderedDict,
    "collections.Counter": Counter,
    "torch.nn.parameter.Parameter": Parameter,
    "torch.Size": Size,
    "torch.Tensor": Tensor,
    "torch.device": device,
    "_codecs.encode": codecs.encode,
    "builtins.bytearray": bytearray,
    "builtins.set": set,
    "builtins.complex": complex,
    "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
    "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    **{f"torch.{d.name}": d for d in dtypes.ALL},
    **{f"torch.{name}": _StorageType(name) for name in _STORAGE_DTYPES},
}
# what the unpickler resolves besides, with weights_only=False
_RESOLVED = {"torch._tensor.Tensor": Tensor, "torch.storage.UntypedStorage": _StorageType("UntypedStorage")}


class _Unpickler(pickle.Unpickler):
    """torch's unpickler over impl: torch's names resolve to impl's objects; with ``weights_only``
    only torch's allowed globals load (its error otherwise)."""

    def __init__(self, file: Any, storage: Any, weights_only: bool, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self.storage, self.weights_only = storage, weights_only

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _compat_pickle.NAME_MAPPING:  # protocol 2 names Python 2's modules
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        full = f"{module}.{name}"
        if self.weights_only:
            if module in _BLOCKED_MODULES:
                raise pickle.UnpicklingError(
                    f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked."
                )
            if full not in _ALLOWED:
                shown = full[len("builtins."):] if full.startswith("builtins.") else full
                raise pickle.UnpicklingError(
                    f"Unsupported global: GLOBAL {shown} was not an allowed global by default. "
                    f"Please use `torch.serialization.add_safe_globals([{shown}])` or the "
                    f"`torch.serialization.safe_globals([{shown}])` context manager to allowlist this global "
                    "if you trust this class/function."
                )
        found = _ALLOWED.get(full, _RESOLVED.get(full))
        if found is not None:
            return found
        if module == "torch" or module.startswith("torch."):
            module = "impl" + module[len("torch"):]
            importlib.import_module(module)
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        if self.weights_only and (not isinstance(pid, tuple) or not pid or pid[0] != "storage"):
            raise pickle.UnpicklingError("unsupported persistent id encountered")
        return self.storage(*pid[1:])


def _wo_message(message: str) -> str:
    """torch.load's text around a weights_only unpickling error."""
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two options, "
            "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
            f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
            "the recommended steps in the following error message.\n\tWeightsUnpickler error: " + message
            + _DOCS_MESSAGE
        )
    text = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if not re.search(r"whose module (\S+) is blocked", message):
        text += (
            "Please file an issue with the following so that we can make "
            "`weights_only=True` compatible with your use case: WeightsUnpickler error: "
        )
    return text + "\n\n" + message + _DOCS_MESSAGE


def _load_zip(archive: zipfile.ZipFile, map_location: Any, weights_only: bool, **pickle_args: Any) -> Any:
    names = archive.namelist()
    prefix = names[0].split("/", 1)[0] + "/" if names else ""
    byteorder = "little"
    if f"{prefix}byteorder" in names:
        byteorder = archive.read(f"{prefix}byteorder").decode()
    loaded: dict[str, _Storage] = {}

    def storage(storage_type: Any, key: str, location: str, numel: int, *view: Any) -> _Storage:
        if key not in loaded:
            dtype = storage_type.dtype if isinstance(storage_type, _StorageType) else None
            if dtype is None:
                raise RuntimeError(f"impl has no dtype for {getattr(storage_type, 'name', storage_type)}")
            np_dtype = dtype.np.newbyteorder("<" if byteorder == "little" else ">")
            raw = np.frombuffer(archive.read(f"{prefix}data/{key}"), dtype=np_dtype, count=numel)
            loaded[key] = _Storage(_restore(map_location, raw.astype(dtype.np), str(location)))
        return loaded[key]

    with archive.open(f"{prefix}data.pkl") as data:
        return _Unpickler(io.BytesIO(data.read()), storage, weights_only, **pickle_args).load()


@api.function("load")
def load(
    f: Any,
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """torch.load: an object torch.save (torch's or impl's) wrote, ``weights_only`` by default."""
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    truthy = ("1", "y", "yes", "true")
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    force_not = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    if force and force_not:
        raise RuntimeError(
            "Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
            "should be set, but both were set."
        )
    if force:
        weights_only = True
    elif force_not and not_set:
        warnings.warn(
            "Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the"
            "`weights_only` argument was not explicitly passed to `torch.load`, forcing weights_only=False.",
            UserWarning,
            stacklevel=2,
        )
        weights_only = False
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    if weights_only:
        pickle_load_args = {"encoding": pickle_load_args["encoding"]}
    opened, close = _open_for(f, "rb")
    try:
        start = opened.tell()
        magic = opened.read(4)
        opened.seek(start)
        if magic != b"PK\x03\x04":
            raise RuntimeError(
                "impl's torch.load reads the zip format torch.save writes (since torch 1.6); this file "
                "is in torch's legacy format or is no torch file"
            )
        with zipfile.ZipFile(opened) as archive:
            if not weights_only:
                return _load_zip(archive, map_location, False, **pickle_load_args)
            try:
                return _load_zip(archive, map_location, True, **pickle_load_args)
            except pickle.UnpicklingError as e:
                raise pickle.UnpicklingError(_wo_message(str(e))) from None
    finally:
        if close:
            opened.close()
