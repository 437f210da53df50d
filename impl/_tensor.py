"""The Tensor: array data (a view into its base's memory), version counter, autograd metadata.

This module holds what makes a tensor a tensor: geometry, leaf/grad rules, hooks, conversions; it
calls no op. Methods that need a layer above are set on the class by that layer when it is
imported (the class is the registry): math methods and operators by ``impl._methods``, the legacy
constructor ``Tensor(...)`` by ``impl._legacy``, ``backward`` by ``impl.autograd``, a leaf's
``_grad_accumulator`` by ``impl.autograd.engine``, the regeneration of a stale view's ``grad_fn``
by ``impl._methods``.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from impl import _api as api
from impl import _grad_mode as grad_mode
from impl import _graph, _memory_format, dtypes
from impl._graph import Node
from impl._hooks import RemovableHandle
from impl._layout import contiguous_strides, flat_storage
from impl._names import type_name
from impl._repr import tensor_repr
from impl._size import Size
from impl._warn import warn_once
from impl._xp import device_of, to_numpy

SCALAR_OF_GRAD = (
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
    "Consider using tensor.detach() first. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:822.)"
)

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
    "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
    "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor "
    "by mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 "
    "for more information. (Triggered internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/"
    "TensorBody.h:493.)"
)


class _read_only(property):
    """A property torch's C tensor type defines without a setter: assigning or deleting it raises
    torch's AttributeError, which names that type."""

    def __init__(self, fget: Callable, name: str | None = None) -> None:
        super().__init__(fget)
        self._name = name or fget.__name__

    def __set__(self, obj: object, value: object) -> None:
        raise AttributeError(f"attribute '{self._name}' of 'torch._C.TensorBase' objects is not writable")

    def __delete__(self, obj: object) -> None:
        self.__set__(obj, None)


class VersionCounter:
    """Shared by a tensor, its views and its detached aliases; bumped by every in-place write."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def bump(self) -> None:
        self.value += 1


@api.function("Tensor")
class Tensor:
    """A torch.Tensor look-alike on numpy/cupy arrays."""
    __module__ = __package__  # torch's class is torch.X, as type() and repr(cls) show

    __array_priority__ = 1000  # numpy defers ``ndarray * Tensor`` to Tensor.__rmul__
    # Slots, not a dict: long graphs hold one tensor per op, and the cycle collector walks them all.
    # Subclasses (Parameter, users') still get a __dict__; so does a tensor given a new attribute.
    __slots__ = (
        "_data",
        "_counter",  # the VersionCounter, made on first need (see _vc)
        "_base_",  # the slots of _base and _grad_fn (properties, so that del is refused)
        "_grad_fn_",
        "_output_nr",
        "_requires_grad",
        "_grad",
        "_view_version",
        "_inference",
        "__dict__",
        "__weakref__",
    )

    # Rarely set, so class-level defaults rather than slots (one store fewer per tensor made; a
    # tensor that sets one keeps it in its instance dict):
    _grad_acc: Node | None = None  # a leaf's AccumulateGrad node, made on first need
    _retains_grad = False
    # how a view was made, as torch's CreationMeta: "" (the default), "no_grad", "inference",
    # "multiple" (an output of split/chunk/unbind or of a custom Function with several
    # differentiable outputs) or "custom" (made by a custom Function, an input returned as-is
    # included); a view made otherwise than by default cannot be rebased (view_rebase_error)
    _creation_meta = ""
    _wrapped_number = False  # a Python number wrapped by an op (promotion treats it apart)
    # torch's efficient zero tensor (a gradient of sgn): zeros no storage backs; set per instance
    _efficient_zero = False
    _is_conj = False  # torch's conjugate bit (set by conj(); impl's conj is not lazy, see _ops/complex)
    # an inference tensor that detach() or .data made outside inference mode: torch gives it a
    # version counter of its own (fresh, shared with nothing) that in-place writes bump
    _tracked_inference = False
    # the 1-d array of a root tensor's whole memory, set once an in-place view op (t_, as_strided_
    # ...) changed the tensor's geometry; otherwise its memory starts at its first element
    _storage: Any = None
    # (level token, tangent) of a dual tensor of forward AD (see _grad_mode.tangent_of)
    _fw: Any = None
    # when detach_() took the tensor's history, as a node sequence number: a node made before it
    # that kept the tensor for backward (bare, see impl._ops.table._save) raises torch's error
    _detached_at = -1

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # construction happens in __new__
        pass

    @classmethod
    def _from_array(cls, array: Any, requires_grad: bool = False) -> Tensor:
        if array.size == 0 and array.ndim and not any(array.strides) and _fresh_numpy(array):
            array = _with_contiguous_strides(array)
        t = object.__new__(Tensor)
        t._data = array
        t._counter = None
        t._base_ = None
        t._grad_fn_ = None
        t._output_nr = 0
        t._requires_grad = requires_grad
        t._grad = None
        t._view_version = 0
        t._inference = _grad_state.inference
        return t

    @staticmethod
    def _make_subclass(cls: type, data: Tensor, require_grad: bool = False) -> Tensor:
        """An instance of the Tensor subclass ``cls`` sharing ``data``'s memory (a new leaf)."""
        t = object.__new__(cls)
        fresh = Tensor._from_array(data._data, require_grad)
        for name in _SLOTS:
            setattr(t, name, getattr(fresh, name))
        return t

    # -- geometry -----------------------------------------------------------------------------
    @_read_only
    def dtype(self) -> dtypes.dtype:
        found = _DTYPES.get(self._data.dtype)
        return found if found is not None else dtypes.from_numpy_dtype(self._data.dtype)

    @_read_only
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Size | int:
        return self.shape if dim is None else self._data.shape[_method_dim("size", dim, self.dim())]

    def dim(self) -> int:
        return self._data.ndim

    ndim = _read_only(dim, "ndim")
    ndimension = dim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[_method_dim("stride", dim, self.dim())]

    def _is_view(self) -> bool:
        return self._base_ is not None

    def storage_offset(self) -> int:
        return (self.data_ptr() - _address(self._storage_array())) // self._data.itemsize

    def _storage_array(self) -> Any:
        """The memory this tensor (a view: its base) lies in, as a 1-d array from its start."""
        root = self._base_ if self._base_ is not None else self
        if root._storage is not None:
            return root._storage
        return flat_storage(root._data)

    def data_ptr(self) -> int:
        return _address(self._data)

    def is_contiguous(self, memory_format: Any = None) -> bool:
        fmt = _memory_format.check(memory_format, "is_contiguous") or _memory_format.contiguous_format
        return _memory_format.is_contiguous(fmt, tuple(self._data.shape), self.stride())

    @_read_only
    def device(self) -> Any:
        return device_of(self._data)

    @_read_only
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    is_sparse = False
    is_quantized = False
    is_meta = False
    layout = "torch.strided"

    def __len__(self) -> int:
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    # -- autograd metadata --------------------------------------------------------------------
    @_read_only
    def grad_fn(self) -> Node | None:
        """The node that made this tensor. A view whose base was modified in place since it was
        made (or since its grad_fn was last made) gets an as_strided node onto the base's new
        history, when it had a grad_fn or its base requires grad now: torch's VariableHooks::grad_fn
        regenerates it so, and refuses a view made in no_grad or inference mode or by a function
        returning several views."""
        base = self._base_
        if (
            base is not None
            and self._view_version != self._vc.value
            and (self._grad_fn_ is not None or base.requires_grad)
        ):
            self._regenerate_grad_fn()
        return self._grad_fn_

    @_read_only
    def output_nr(self) -> int:
        """Which output of its grad_fn this tensor is (0 for a leaf)."""
        return self._output_nr if self._grad_fn_ is not None else 0

    @_read_only
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        """As torch's DifferentiableViewMeta: a tensor's own flag, or a grad_fn, or, for a view,
        its base requiring grad (whenever the base came to)."""
        return (
            self._requires_grad
            or self._grad_fn_ is not None
            or (self._base_ is not None and self._base_.requires_grad)
        )

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if type(value) is not bool:
            raise RuntimeError("requires_grad must be a bool")
        if self._grad_fn_ is not None:  # torch's C++ is_leaf: a stale view's grad_fn is not regenerated
            raise RuntimeError(_leaf_flags_error(value))
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if value and self._inference and not grad_mode.is_inference_mode_enabled():
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
            )
        self._requires_grad = value

    @requires_grad.deleter
    def requires_grad(self) -> None:
        raise RuntimeError("requires_grad must be a bool")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if type(requires_grad) is not bool:
            where = "argument 'requires_grad' (position 1)"
            raise TypeError(f"requires_grad_(): {where} must be bool, not {type_name(requires_grad)}")
        if requires_grad and self._grad_fn_ is not None:  # torch: only the attribute form refuses
            return self
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Tensor | None:
        if self._grad_fn_ is not None and not self._retains_grad:
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            _check_assigned_grad(self, value)
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        """``del x.grad``: as torch, the same as ``x.grad = None``."""
        self._grad = None

    def is_inference(self, *args: Any) -> bool:
        """Whether this tensor was made in inference mode (it can never join a recorded graph)."""
        if args:
            raise TypeError(f"TensorBase.is_inference() takes no arguments ({len(args)} given)")
        return self._inference

    @_read_only
    def retains_grad(self) -> bool:
        return self._retains_grad

    @_read_only
    def _version(self) -> int:
        if self._inference and not self._tracked_inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        counter = self._counter
        return 0 if counter is None else counter.value

    @property
    def _vc(self) -> VersionCounter:
        """The version counter shared with views and detached aliases. Made on first need: most
        tensors are never written in place nor aliased, and every object kept is one more for the
        cycle collector (a counter made later starts at 0, the version a missing one reads as)."""
        counter = self._counter
        if counter is None:
            counter = self._counter = VersionCounter()
        return counter

    @_vc.setter
    def _vc(self, counter: VersionCounter) -> None:
        self._counter = counter

    def _edge(self) -> tuple[Node | None, int]:
        """Where gradient for this tensor flows: its grad_fn, a leaf's AccumulateGrad, or nowhere."""
        if self.grad_fn is not None:
            return (self._grad_fn_, self._output_nr)
        if self._requires_grad:
            return (self._grad_accumulator(), 0)
        return (None, 0)

    def register_hook(self, hook: Callable) -> RemovableHandle:
        """Tensor pre-hook ``hook(grad) -> Tensor | None`` run when this tensor's gradient is ready."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn  # a view's regenerated first (torch 2.13 itself crashes there)
        node = fn if fn is not None else self._grad_accumulator()
        hooks = node._tensor_hooks(self._output_nr if fn is not None else 0)
        assigned = self.__dict__.get(_ASSIGNED_HOOKS)
        if fn is not None and isinstance(assigned, dict):  # torch adds to an assigned _backward_hooks,
            hooks = assigned  # which a non-leaf's node never runs (see _set_backward_hooks)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def register_post_accumulate_grad_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(tensor)`` run after ``.grad`` of this leaf has been written."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        hooks = self._grad_accumulator()._post_acc_hooks
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def retain_grad(self) -> None:
        """Keep ``.grad`` of a non-leaf after backward; its hook always runs after tensor hooks."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn_ is None or self._retains_grad:  # C++ is_leaf: no regeneration (then grad_fn is)
            return
        ref = weakref.ref(self)

        def retain(grad: Tensor) -> None:
            t = ref()
            if t is None or grad is None:
                return
            if t._grad is None:
                t._grad = grad.detach().clone() if not grad_mode.is_grad_enabled() else grad.clone()
            else:
                t._grad = t._grad + grad

        self.grad_fn._own("_retains_grad_hooks")[self._output_nr] = retain
        self._retains_grad = True

    def detach(self) -> Tensor:
        t = Tensor._from_array(self._data)
        t._inference = self._inference  # an alias is an inference tensor as its source is
        if not self._inference:
            t._vc = self._vc
        elif not grad_mode.is_inference_mode_enabled():
            t._tracked_inference = True
        if self._storage is not None:
            t._storage = self._storage
        if self._efficient_zero:
            t._efficient_zero = True
        return t

    def _is_zerotensor(self) -> bool:
        return self._efficient_zero

    def detach_(self) -> Tensor:
        if self._inference or grad_mode.is_inference_mode_enabled():
            return self  # torch's detach_ lives in the autograd layers, which these skip: nothing happens
        if self._base_ is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view "
                "is set as True, gradients are views of DDP buckets, and hence detach_() "
                "cannot be called on these gradients. To fix this error, please refer to "
                "the Optimizer.zero_grad() function in torch/optim/optimizer.py as the "
                "solution."
            )
        if self._grad_fn_ is not None:
            self._detached_at = next(_graph._sequence)
            self._vc  # noqa: B018 (made now: a node's backward checks a tensor it kept bare once it has one)
        self._grad_fn_ = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    @property
    def data(self) -> Tensor:
        t = Tensor._from_array(self._data)
        t._inference = self._inference
        if self._inference and not grad_mode.is_inference_mode_enabled():
            t._tracked_inference = True  # as detach()'s
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        """``x.data = t``: x takes t's memory (shape and dtype too), keeping its autograd identity;
        torch refuses a value that is no tensor, and one of a dtype that cannot require grad where
        x requires grad."""
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self.requires_grad and not (value.dtype.is_floating_point or value.dtype.is_complex):
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or complex dtype"
            )
        self._data = value._data

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    # -- conversions --------------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self._efficient_zero and not force:
            raise RuntimeError(
                " Cannot convert a ZeroTensor to numpy. Set force=True if you need the zero array."
            )
        # torch's tensor_to_numpy checks the device first, then grad (only while grad mode is on)
        if self.device.type != "cpu" and not force:
            raise TypeError(
                f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to "
                "copy the tensor to host memory first."
            )
        if self.requires_grad and not force and grad_mode.is_grad_enabled():
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        return to_numpy(self._data)

    def item(self) -> Any:
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return to_numpy(self._data).reshape(()).item()

    def tolist(self) -> Any:
        if self._efficient_zero:
            raise RuntimeError("tolist() shouldn't be called on a tensor with unallocated storage")
        return to_numpy(self._data).tolist()

    def __float__(self) -> float:
        if self.requires_grad:  # torch's TORCH_WARN_ONCE in its float (and complex) conversion
            warn_once("float of requires_grad", SCALAR_OF_GRAD)
        return float(self.item())

    def __complex__(self) -> complex:
        if self.requires_grad:  # (the same TORCH_WARN_ONCE as float's)
            warn_once("float of requires_grad", SCALAR_OF_GRAD)
        return complex(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """``np.asarray(t)``: torch's ``__array__`` is ``numpy()`` (so a cuda tensor or one that
        requires grad is refused with numpy()'s errors), cast to ``dtype`` if given."""
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def __iter__(self) -> Any:
        """As torch's: the rows are ``unbind(0)``'s views (one UnbindBackward0 node), made at once."""
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self) -> int:
        return id(self)

    def __format__(self, spec: str) -> str:
        if self.dim() == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __repr__(self) -> str:
        return tensor_repr(self, grad_mode.tangent_of(self))

    __str__ = __repr__

    def __deepcopy__(self, memo: dict) -> Tensor:
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment.  If you were attempting to deepcopy a "
                "module, this may be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001"
            )
        t = Tensor._from_array(self._data.copy(), self.requires_grad)  # a view's through its base too
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = t
        return t


_UNDELETABLE = {
    "_grad_fn": "Deletion of _grad_fn not allowed. Detach tensor instead!",
    "_backward_hooks": "Deletion of _backwards_hooks not allowed!",
    "_post_accumulate_grad_hooks": "Deletion of _post_accumulate_grad_hooks not allowed!",
}


def _guard_deletion(name: str, slot: Any = None) -> None:
    """``Tensor.<name>``, whose ``del`` torch refuses (``_UNDELETABLE``; ``_base`` is a read-only
    property of torch's C tensor): a property reading and writing ``slot`` with the slot's own
    accessors (None: no such attribute). Not a ``__delattr__``: that would slow every attribute
    write of every tensor; impl's own code reads the slots (``_grad_fn_``, ``_base_``) directly."""

    def missing(self: Tensor, *value: object) -> None:
        raise AttributeError(f"'Tensor' object has no attribute '{name}'")

    def delete(self: Tensor) -> None:
        if name == "_base":
            _read_only(Tensor._is_view, "_base").__delete__(self)
        elif name in _UNDELETABLE:
            raise RuntimeError(_UNDELETABLE[name])
        (slot.__delete__ if slot is not None else missing)(self)

    get, put = (slot.__get__, slot.__set__) if slot is not None else (missing, missing)
    setattr(Tensor, name, property(get, put, delete))


_guard_deletion("_grad_fn", Tensor._grad_fn_)
_guard_deletion("_base", Tensor._base_)

_ASSIGNED_HOOKS = "_assigned_backward_hooks"  # the instance-dict key of an assigned _backward_hooks


def _hook_node(t: Tensor) -> tuple[Node | None, int]:
    """The node whose tensor pre-hooks are ``t``'s, and the slot: its grad_fn's at its output
    number, a leaf's gradient accumulator's (only if made already), or none."""
    if t._grad_fn_ is not None:
        return t._grad_fn_, t._output_nr
    return (t._grad_acc, 0) if t._requires_grad else (None, 0)


def _get_backward_hooks(t: Tensor) -> Any:
    """torch's ``Tensor._backward_hooks``: the OrderedDict of the tensor's hooks (its node's table
    for its slot, so that an in-place op that gave the tensor a new node gives None), None while it
    has none, or what was assigned to it."""
    assigned = t.__dict__.get(_ASSIGNED_HOOKS, _hook_node)
    if assigned is not _hook_node:
        return assigned
    node, slot = _hook_node(t)
    return None if node is None else node._tensor_pre_hooks.get(slot)


def _set_backward_hooks(t: Tensor, hooks: Any) -> None:
    """Assigning ``_backward_hooks`` (any object, as torch takes): kept as the tensor's; on a leaf
    that requires grad, a dict (or None) becomes the hook table of its gradient accumulator, whose
    hooks run as torch runs a leaf's; a non-leaf's assigned dict does not run (torch registers it
    with its grad_fn only through register_hook)."""
    t.__dict__[_ASSIGNED_HOOKS] = hooks
    if t._grad_fn_ is None and t._requires_grad and (hooks is None or isinstance(hooks, dict)):
        table = t._grad_accumulator()._own("_tensor_pre_hooks")
        if hooks is None:
            table.pop(0, None)
        else:
            table[0] = hooks


def _delete_backward_hooks(t: Tensor) -> None:
    raise RuntimeError(_UNDELETABLE["_backward_hooks"])


Tensor._backward_hooks = property(_get_backward_hooks, _set_backward_hooks, _delete_backward_hooks)
_guard_deletion("_post_accumulate_grad_hooks")

_SLOTS = tuple(n for n in Tensor.__slots__ if not n.startswith("__"))
_grad_state = grad_mode._state  # read directly: _from_array runs for every tensor made
_DTYPES = dtypes._BY_NP  # numpy dtype -> impl dtype (the hot path of Tensor.dtype)


def _leaf_flags_error(requires_grad: bool) -> str:
    """torch's requires_grad_leaf_error."""
    text = "you can only change requires_grad flags of leaf variables."
    if not requires_grad:
        text += (
            " If you want to use a computed variable in a subgraph that doesn't require differentiation "
            "use var_no_grad = var.detach()."
        )
    return text


_REBASE_FORBIDDEN = (
    " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
    "moving both the view and the inplace either both inside the {block} block (if you don't want the "
    "inplace to be tracked) or both outside (if you want the inplace to be tracked)."
)
_REBASE_WHY = {
    "multiple": (
        " This view is the output of a function that returns multiple views. Such functions do not allow "
        "the output views to be modified inplace. You should replace the inplace operation by an "
        "out-of-place one."
    ),
    "custom": (
        " This view was created inside a custom Function (or because an input was returned as-is) and "
        "the autograd logic to handle view+inplace would override the custom backward associated with "
        "the custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix "
        "this by cloning the output of the custom Function."
    ),
    "no_grad": _REBASE_FORBIDDEN.format(block="no_grad"),
    "inference": _REBASE_FORBIDDEN.format(block="inference_mode"),
}


def view_rebase_error(t: Tensor, indirect: bool) -> RuntimeError:
    """torch's handle_view_on_rebase error for view ``t`` of a non-default creation: written in
    place (``indirect`` False), or read after its base or another view of it was."""
    meta, fn = t._creation_meta, t._grad_fn_
    modified = "its base or another view of its base has been" if indirect else "is being"
    if meta in ("no_grad", "inference") or fn is None:
        if fn is not None:
            prefix = f"Output {t._output_nr} of {fn._short_name()} is a view of a view which was created in"
        else:
            prefix = "A view was created in"
        if meta == "inference":
            text = f"{prefix} inference mode and {modified} modified inplace in normal mode."
        else:
            text = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        text = f"Output {t._output_nr} of {fn._short_name()} is a view and {modified} modified inplace."
    return RuntimeError(text + _REBASE_WHY[meta])


def _check_assigned_grad(t: Tensor, value: object) -> None:
    """torch's checks on ``t.grad = value``."""
    if not isinstance(value, Tensor):
        kind = type(value).__name__
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {kind}")
    if value.dtype is not t.dtype:
        given, own = dtypes.CPP_NAMES[value.dtype.name], dtypes.scalar_type(t.dtype)
        raise RuntimeError(
            f"attempting to assign a gradient with dtype '{given}' to a tensor with grad_dtype '{own}'. "
            "The gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). You can "
            "set the tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype. "
            "Set grad_dtype with caution. Diverging the dtypes of a tensor and its gradient may break "
            "downstream systems that assume they match."
        )
    if tuple(value.shape) != tuple(t.shape):
        given, own = ", ".join(map(str, value.shape)), ", ".join(map(str, t.shape))
        raise RuntimeError(
            f"attempting to assign a gradient of size '[{given}]' to a tensor of size '[{own}]'. "
            "Please ensure that the gradient and the tensor are the same size"
        )


def zeros_of(meta: tuple) -> Tensor:
    """Zeros with ``meta``'s shape, dtype and device (InputMetadata::zeros_like, see
    ``_graph.input_meta``): the gradient a node materialises for an output that received none."""
    shape, dtype, xp = meta
    return Tensor._from_array(xp.zeros(shape, dtype.np))


def _address(array: Any) -> int:
    """The address of an array's first element."""
    if isinstance(array, np.ndarray):
        return int(array.__array_interface__["data"][0])
    return int(array.data.ptr)


def _fresh_numpy(array: Any) -> bool:
    """A numpy array that owns its memory (not a view such as expand's broadcast, whose zero
    strides torch keeps)."""
    return isinstance(array, np.ndarray) and array.base is None


def _with_contiguous_strides(array: np.ndarray) -> np.ndarray:
    """An empty array as torch strides a fresh empty tensor: numpy makes every stride of an empty
    array 0, torch gives it contiguous strides (sizes of 0 counted as 1), so (0, 2) is (2, 1).
    Views then inherit them (numpy keeps non-zero strides through its views)."""
    strides = tuple(s * array.itemsize for s in contiguous_strides(array.shape))
    return np.lib.stride_tricks.as_strided(array, array.shape, strides)


Dims = Any  # an annotation: torch's "tuple of ints" (int[]), one int or a sequence of them (dims, sizes)
DimList = Any  # an annotation: torch's int[] that one int does not fit, a sequence only (flip's dims)


class ArgumentTypeError(TypeError):
    """A value torch's parser refuses where it takes an int (a dim, a size, ``k``), raised where impl
    turns it into one; the public function or method called rewords it as torch's parser does from
    the call as given (``impl._signatures.reparse``)."""


def is_int_like(value: Any) -> bool:
    """Whether torch's parser takes ``value`` as an int: an int (no bool), a NumPy integer, an
    integer tensor of no dimensions."""
    if isinstance(value, Tensor):
        dt = value.dtype
        return value.dim() == 0 and not (dt.is_floating_point or dt.is_complex or dt is dtypes.bool_)
    return not isinstance(value, (bool, np.bool_)) and hasattr(type(value), "__index__")


def as_int(value: Any, first: bool = True) -> int:
    """``value`` as the int torch's parser reads, else ``ArgumentTypeError``; ``first=False`` for
    an element after a list's first, which torch's parser does not check (a bool then unpacks)."""
    if type(value) is int:
        return value
    if is_int_like(value) or (not first and isinstance(value, bool)):
        return int(value.__index__())
    raise ArgumentTypeError(f"expected an int, not {type_name(value)}")


def as_ints(values: Any) -> tuple[int, ...]:
    """A list of ints (sizes, dims) as torch's parser unpacks it: a single int as one."""
    if not isinstance(values, (tuple, list)):
        return (as_int(values),)
    return tuple(v if type(v) is int else as_int(v, i == 0) for i, v in enumerate(values))


def _wrap_dim(dim: int, ndim: int) -> int:
    if type(dim) is not int:
        dim = as_int(dim)
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def _method_dim(name: str, dim: Any, ndim: int) -> int:
    """The dim of method ``name`` that takes one int (``size``, ``stride``), wrapped, or torch's
    parser error."""
    if type(dim) is not int and not is_int_like(dim):
        raise TypeError(f"{name}(): argument 'dim' (position 1) must be int, not {type_name(dim)}")
    return _wrap_dim(dim, ndim)


def _dim_list(dims: Any, ndim: int) -> tuple[int, ...]:
    """Dims wrapped and checked one by one, as torch's dim_list_to_bitset."""
    wrapped: list[int] = []
    for d in as_ints(dims):
        d = _wrap_dim(d, ndim)
        if d in wrapped:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        wrapped.append(d)
    return tuple(wrapped)


_graph.TENSOR = Tensor  # what an unpack hook of saved_tensors_hooks must return
