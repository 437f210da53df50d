"""The op table machinery: an op is declared once as an OpDef (forward on ``xp``, per-input
derivative formulas and what each formula uses, torch's grad_fn name) and ``apply`` runs it.

What gets saved follows torch's derivatives.yaml codegen: a value is saved only when a derivative
that uses it will be computed (its input requires grad). Saved tensors are SavedTensor objects, so
a second backward without ``retain_graph`` raises torch's error exactly when torch's would.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from impl import _grad_mode as grad_mode
from impl import _layout, dtypes
from impl._creation import ones_like, scalar_tensor, zeros_like
from impl._grad_mode import forward_level, set_tangent, tangent_of
from impl._graph import DETACHED, Node, SavedTensor, _modified_message, _sequence, input_meta, saved_hooks
from impl._names import type_name
from impl._ops import codegen
from impl._ops.saved_names import saved_sources
from impl._tensor import ArgumentTypeError, Tensor
from impl._xp import namespace_of, quiet_enter, quiet_exit
from impl.dtypes import from_numpy_dtype


@dataclass(frozen=True)
class Derivative:
    """Backward formula for one differentiable input: ``formula(grad, ctx) -> Tensor``."""

    uses: tuple[str, ...]
    formula: Callable[[Any, OpCtx], Any]


NOT_IMPLEMENTED = "torch::autograd::NotImplemented"  # the node of an op without a derivative
# OpDef.complex: how an op takes complex operands (None: it refuses them). HOLOMORPHIC: its
# formulas are those of real numbers, which for a complex gradient read the saved values
# conjugated (ConjCtx): ``grad * conj(f'(z))`` as torch's formulas write it; OWN: its formulas
# handle complex tensors themselves
HOLOMORPHIC, OWN = "holomorphic", "own"


@dataclass(eq=False)
class OpDef:
    """One op: forward ``fn(xp, *arrays, **attrs)``, derivatives by input name, grad_fn name."""

    node_name: str
    forward: Callable[..., Any]
    inputs: tuple[str, ...] = ("self",)
    derivatives: dict[str, Derivative] = field(default_factory=dict)
    outputs: tuple[str, ...] = ("result",)
    view: bool = False
    promote: str | None = None  # "common": cast inputs to torch's result type; "float": also int->float
    qualified_name: str | None = None  # what name() returns when it differs from the class name
    # the operands (inputs, attrs) of the TensorIterator torch runs the op on, in its order, if it
    # does: the result is laid out as torch's (an attr holding a number is a 0-d operand)
    iterator_operands: tuple[str, ...] = ()
    # a device move: the forward runs on, and the result lives in, the array namespace passed as
    # the attr ``target`` (not the one of its input's array), which is not kept on the node
    moves_device: bool = False
    # how many outputs (the first ones) are differentiable: each gets the node as grad_fn (output_nr
    # 0, 1, ...). With more than one, every formula gets the tuple of their gradients in place of
    # one gradient, None where one is undefined (torch's ``grads[i]``, which the formula treats as
    # zero), and the node runs its formulas when any of them is defined (torch's any_grad_defined)
    differentiable_outputs: int = 1
    # the forward derivative (derivatives.yaml's ``result:``): ``jvp(c) -> tangent`` (a tuple, one
    # per differentiable output, for several), ``c`` a JvpCtx; the helpers below write torch's
    # ``auto_linear`` / ``auto_element_wise``. None: the op has none (forward AD raises torch's error),
    # except an elementwise op (``iterator_operands``) with derivatives, whose jvp is by default
    # ``auto_element_wise`` (an elementwise op's Jacobian is diagonal)
    jvp: Callable[[JvpCtx], Any] | None = None
    # the aten name torch's errors give the op where it is not its node's name less "Backward<n>"
    aten_name: str | None = None
    complex: str | None = None  # HOLOMORPHIC, OWN or None (see above)

    def __post_init__(self) -> None:
        if self.jvp is None and self.iterator_operands and self.derivatives and self.qualified_name is None:
            self.jvp = auto_element_wise
        # a slot per tensor a derivative may use, as torch's generated nodes hold SavedVariables
        names = (*self.inputs, *self.outputs)
        tensor_uses = dict.fromkeys(use for d in self.derivatives.values() for use in d.uses if use in names)
        self._saved_slots = {use: "_sv_" + use for use in tensor_uses}
        self._slot_names = tuple(self._saved_slots.values())
        body: dict[str, Any] = {"op": self, "__slots__": tuple(self._saved_slots.values())}
        if self.qualified_name:
            body["name"] = lambda node: self.qualified_name
        self.node_class = type(self.node_name, (OpNode,), body)
        readers = {name: property(_saved_reader(name, slot)) for name, slot in self._saved_slots.items()}
        self.ctx_class = type(self.node_name + "Ctx", (OpCtx,), {"__slots__": (), **readers})
        self._plan = _Plan(self)


    @property
    def links_required_only(self) -> bool:
        """Whether the op's node links only the inputs that require grad: torch's node of an op
        without a derivative (NotImplemented) collects no edge for the others."""
        return self.qualified_name == NOT_IMPLEMENTED

    @property
    def record_source(self) -> str:
        """The generated Python source of this op's recording function (see impl/_ops/codegen.py)."""
        return codegen.record_source(self)

    def _call(self, tensors: tuple, attrs: dict) -> Any:
        """Run the op (compiles its call, ``record_source``'s sibling ``call_source``, on first use)."""
        self._call = codegen.compile_call(self, _CALL_HELPERS)  # type: ignore[method-assign]
        return self._call(tensors, attrs)

    def _record(self, tensors: tuple, attrs: dict, results: tuple) -> None:
        """Record the node of one call (compiles the op's recording function on first use)."""
        self._record = codegen.compile_recorder(self, _RECORD_HELPERS)  # type: ignore[method-assign]
        self._record(tensors, attrs, results)


def D(uses: str, formula: Callable[[Any, OpCtx], Any]) -> Derivative:
    """Shorthand: ``D("self other", lambda g, c: ...)``."""
    return Derivative(tuple(uses.split()), formula)


def _saved_reader(name: str, slot: str) -> Callable[[OpCtx], Any]:
    """``ctx.<name>`` for a saved tensor of an op: a property, not ``__getattr__`` (which runs
    only after a failed lookup, and formulas read saved tensors on every backward)."""

    def read(ctx: OpCtx) -> Any:
        v = getattr(ctx._node, slot, None)
        if v is None:
            return ctx.__getattr__(name)
        if type(v) is SavedTensor or v._counter is not None:
            return _unpack(v, ctx._node)
        return v  # a bare tensor without a version counter was never written

    return read


class OpCtx:
    """What a backward formula sees: saved values by name (tensors unpacked, checked), attrs,
    and the forward inputs' shapes and dtypes. Each op has its subclass (``OpDef.ctx_class``)
    with a property per saved tensor."""

    __slots__ = ("_node",)

    def __init__(self, node: OpNode) -> None:
        self._node = node

    def __getattr__(self, name: str) -> Any:
        node = self._node
        slot = node.op._saved_slots.get(name)
        if slot is not None:
            v = getattr(node, slot, None)
            if v is not None:
                return _unpack(v, node)
        attrs = node._attrs
        if name in attrs:
            return _unpack(attrs[name], node)
        raise AttributeError(name)

    def shape(self, name: str = "self") -> tuple[int, ...]:
        node = self._node
        return node._in_meta[2 * node.op.inputs.index(name)]

    def dtype(self, name: str = "self") -> Any:
        node = self._node
        return from_numpy_dtype(node._in_meta[2 * node.op.inputs.index(name) + 1])

    def strides(self, name: str) -> tuple[int, ...]:
        """Strides input ``name`` had in the forward (declared in uses as ``"name.strides"``)."""
        return self._node._attrs[name + ".strides"]

    def needs(self, name: str) -> bool:
        node = self._node
        return node._edge_fn(node.op.inputs.index(name)) is not None


class ConjCtx:
    """An OpCtx whose complex values (saved tensors, numbers) read conjugated: what a holomorphic
    op's real formula sees for a complex gradient (torch's ``grad * other.conj()`` ...)."""

    __slots__ = ("_ctx",)

    def __init__(self, ctx: OpCtx) -> None:
        self._ctx = ctx

    def __getattr__(self, name: str) -> Any:
        v = getattr(self._ctx, name)
        if isinstance(v, Tensor):
            return v.conj() if v._data.dtype.kind == "c" else v
        return v.conjugate() if isinstance(v, complex) else v


NOTHING_SAVED: Any = MappingProxyType({})
_grad_state = grad_mode._state
_new = object.__new__
RELEASED = SavedTensor()  # what a released node keeps in place of a bare saved tensor
RELEASED.freed = True
_saved_hooks = saved_hooks


def _unpack(v: Any, node: Node) -> Any:
    """A saved value as ``node``'s formulas see it: SavedTensor unpacked (checked; a saved output
    with the node's history when grad mode records the backward), a bare tensor (an input saved at
    version 0, see ``_save``) checked for ``detach_()`` and in-place writes since, anything else as
    is."""
    if type(v) is SavedTensor:
        return v.unpack(node if v.is_output else None, _grad_state.enabled)
    if isinstance(v, Tensor) and v._counter is not None:
        if v._detached_at > node._sequence_nr and v._grad_fn_ is None:
            raise RuntimeError(DETACHED)
        if v._counter.value != 0:
            raise RuntimeError(_modified_message(v, 0))
    return v


def _save(v: Any, owner: Node | None, output_nr: int = 0) -> Any:
    """How a node keeps tensor ``v`` for backward. An input at version 0 is kept bare (its check
    is then "still at version 0"): one object fewer per node than a SavedTensor, and nodes are
    the bulk of what the cycle collector walks in a long graph. Outputs (named in torch's message)
    and inputs already written keep a SavedTensor (an output with its number, ``output_nr``)."""
    if owner is None and not v._inference and (v._counter is None or v._counter.value == 0):
        if not _saved_hooks.stack:  # (under saved_tensors_hooks every saved tensor is packed)
            return v
    return SavedTensor(v, owner, output_nr=output_nr)


def _hold(v: Any, node: Node) -> bool:
    """``_unpack(v, node)`` before a node's formulas run; a SavedTensor with hooks keeps the tensor
    its unpack hook gave (``held``) for the formulas, so that each runs once per backward, as
    torch's. Whether one was held (``_drop`` lets them go after the formulas)."""
    if type(v) is SavedTensor and v.hooks is not None:
        v.held = v.unpack(node if v.is_output else None)
        return True
    _unpack(v, node)
    return False


def _drop(node: Any) -> None:
    """Let go of the tensors ``_hold`` kept for ``node``'s formulas."""
    for v in (*(getattr(node, slot) for slot in node.op._slot_names), *node._attrs.values()):
        if type(v) is SavedTensor:
            v.held = None


class OpNode(Node):
    """grad_fn of a table op; the class is made per op so ``type(grad_fn).__name__`` is torch's.

    Saved tensors sit in per-op slots ``_sv_<name>`` (as SavedTensor or bare, see ``_save``),
    other saved values (attrs, strides) in ``_attrs``; ``_saved`` shows both as one dict.
    ``_in_meta``: shape, numpy dtype of each input. ``next_functions`` is kept as the first edge
    (``_fn0``, ``_nr0``) and the others laid out flat in ``_rest``, a shared constant when they
    all lead nowhere (a unary op, an op with a Python number). Slots and shared tuples because
    every object a node keeps alive is one more for Python's cycle collector to walk, and a long
    graph is mostly nodes: a unary node is one object."""

    __slots__ = ("_attrs", "_in_meta", "_fn0", "_nr0", "_rest")
    op: OpDef

    def __init__(self) -> None:  # edges, _in_meta and _input_meta are set by _record
        self._sequence_nr = next(_sequence)
        self._attrs: Any = NOTHING_SAVED
        for slot in self.op._slot_names:  # an unset slot raises (costly) on every read
            setattr(self, slot, None)

    @property
    def _saved(self) -> dict[str, Any]:
        """Everything this node saved, by name (saved tensors as stored, unchecked)."""
        saved = dict(self._attrs)
        for name, slot in self.op._saved_slots.items():
            v = getattr(self, slot, None)
            if v is not None:
                saved[name] = v
        return saved

    def __getattr__(self, name: str) -> Any:
        """``_saved_<name>``: what the node saved under torch's name (a tensor unpacked, checked);
        ``_raw_saved_<name>``: a saved tensor as the SavedTensor holding it (see saved_names)."""
        if name.startswith(("_saved_", "_raw_saved_")):
            raw = name.startswith("_raw")
            saved = name[11 if raw else 7:]
            source = saved_sources(self.op).get(saved)
            if source is not None:
                return _saved_value(self, saved, source, raw)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self) -> list[str]:
        saved = [f"_saved_{name}" for name in saved_sources(self.op)]
        raw = [f"_raw{name}" for name in saved if _is_tensor(self, name)]
        return [*super().__dir__(), *saved, *raw]

    @property  # type: ignore[override]
    def _next(self) -> tuple:
        rest = self._rest
        if rest is None:
            return ()
        first = (self._fn0, self._nr0)
        if not rest:
            return (first,)
        if len(rest) == 2:  # the engine reads this per node: binary ops skip the zip
            return (first, (rest[0], rest[1]))
        return (first, *zip(rest[0::2], rest[1::2], strict=True))

    @_next.setter
    def _next(self, pairs: tuple) -> None:
        pairs = tuple(pairs)
        if not pairs:
            self._fn0, self._nr0, self._rest = None, 0, None
            return
        (self._fn0, self._nr0) = pairs[0]
        self._rest = _tail([x for pair in pairs[1:] for x in pair])

    def _edge_fn(self, i: int) -> Node | None:
        """The node input ``i``'s gradient goes to (None: nowhere)."""
        return self._fn0 if i == 0 else self._rest[2 * i - 2]

    # apply and release are generated per op (impl/_ops/codegen.py: apply_source, release_source)
    # and set on the node's class by its first node to need one (a class that defines its own,
    # as ConvolutionBackward0's apply, keeps it).
    def apply(self, grads: tuple) -> tuple:
        type(self).apply = codegen.compile_node_method(self.op, "apply", _NODE_HELPERS)
        return self.apply(grads)

    def release(self) -> None:
        type(self).release = codegen.compile_node_method(self.op, "release", _NODE_HELPERS)
        self.release()


def _saved_value(node: OpNode, saved: str, source: str, raw: bool) -> Any:
    """``_saved_<saved>`` of ``node`` (``_raw_saved_<saved>`` with ``raw``), from ``source`` (see
    saved_names): an input's sizes, numel or strides, or a use; a saved tensor unpacked, or with
    ``raw`` as a SavedTensor (a bare one made one, in place, so that hooks registered on it stay;
    an unsaved one as torch's empty SavedTensor)."""
    op = node.op
    name, _, part = source.partition(".")
    if part in ("sizes", "numel"):
        if raw:
            raise AttributeError(f"'{type(node).__name__}' object has no attribute '_raw_saved_{saved}'")
        shape = tuple(int(n) for n in node._in_meta[2 * op.inputs.index(name)])
        return shape if part == "sizes" else int(np.prod(shape, dtype=np.int64))
    if part == "strides" and node._edge_fn(op.inputs.index(name)) is None:
        return ()  # (torch keeps an input's strides only when its gradient is computed)
    slot = op._saved_slots.get(source)
    value = getattr(node, slot) if slot is not None else node._attrs.get(source)
    tensor = slot is not None or isinstance(value, (Tensor, SavedTensor))
    if not raw:
        if not tensor or value is None:
            return value
        if type(value) is SavedTensor:  # (torch's getter unpacks with the node: no detach_() check)
            return value.unpack(node)
        if value._counter is not None and value._counter.value != 0:
            raise RuntimeError(_modified_message(value, 0))
        return value
    if not tensor:
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '_raw_saved_{saved}'")
    if value is None:
        return SavedTensor()
    if type(value) is not SavedTensor:  # a bare input, saved at version 0
        nonleaf = value._grad_fn_ is not None or value._detached_at > node._sequence_nr
        value = SavedTensor(value, pack=False)
        value.version, value.nonleaf = 0, nonleaf
        if slot is not None:
            setattr(node, slot, value)
        else:
            node._attrs[source] = value
    return value


def _is_tensor(node: OpNode, saved: str) -> bool:
    """Whether torch keeps ``saved`` (``_saved_<name>``) as a SavedVariable (it has a raw form)."""
    source = saved_sources(node.op)[saved[len("_saved_"):]]
    return source in node.op._saved_slots or isinstance(node._attrs.get(source), (Tensor, SavedTensor))


_WRAPPED: dict[type, dict] = {float: {}, int: {}, bool: {}}  # CPU wrapped numbers, by type then value


def _wrap(value: Any, like: Any) -> Any:
    """A Python number as torch's wrapped-number tensor. Wrapped numbers never reach the user and
    are never written, so CPU ones are shared per value: a chain like ``h * 1.0001`` saves one
    tensor, not one per node (fewer objects alive, less work for the cycle collector)."""
    cache = _WRAPPED.get(type(value))
    if cache is None or _grad_state.inference or (like is not None and type(like._data) is not np.ndarray):
        return _scalar_tensor(value, like)
    # floats equal to each other but told apart by torch (0.0 and -0.0) and nan are keyed by bits
    key = value.hex() if type(value) is float and (value == 0 or value != value) else value
    wrapped = cache.get(key)
    if wrapped is None:
        if len(cache) > 1024:
            cache.clear()
        wrapped = cache[key] = _scalar_tensor(value, None)
        wrapped._casts = {}  # numpy dtype -> its 0-d array cast to it (see apply's promotion)
    return wrapped


def number_array(xp: Any, value: Any, dt: Any) -> Any:
    """The number ``value`` as a 0-d array of numpy dtype ``dt`` on ``xp``, cast unchecked as
    torch casts a number (dtypes.cast_number)."""
    cast = dtypes.cast_number(value, dt)
    return cast if xp is np else xp.asarray(cast.item(), dtype=cast.dtype)


def fill_array(xp: Any, value: Any, dt: Any, single: bool = False) -> Any:
    """``number_array`` of the number of a fill, which torch first checks (of a ``single``
    element: see dtypes.check_number)."""
    dtypes.check_number(value, dtypes.from_numpy_dtype(dt), single)
    return number_array(xp, value, dt)


def _scalar_tensor(value: Any, like: Any) -> Any:
    return scalar_tensor(value, like)


class _Plan:
    """What recording a node of one op needs, worked out once from its OpDef (like the node's
    slots, so an OpDef's derivatives are fixed once it is made): per input, its derivative (or
    None) and where each value that derivative uses comes from."""

    __slots__ = ("diff", "sources")

    def __init__(self, op: OpDef) -> None:
        derivatives = op.derivatives
        self.diff = tuple(derivatives.get(name) for name in op.inputs)
        self.sources = tuple(
            None if d is None else tuple((use, *_source(op, use), op._saved_slots.get(use)) for use in d.uses)
            for d in self.diff
        )


def _source(op: OpDef, use: str) -> tuple[str, Any]:
    """Where the value named ``use`` comes from: an input's strides, an output, an input, an attr."""
    if use.endswith(".strides"):
        return "strides", op.inputs.index(use[: -len(".strides")])
    if use in op.outputs:
        return "output", op.outputs.index(use)
    if use in op.inputs:
        return "input", op.inputs.index(use)
    return "attr", use


def complex_refused(op: OpDef) -> NotImplementedError:
    """The error of an op impl does not run on complex tensors."""
    name = _aten_name(op)
    return NotImplementedError(f"impl does not support complex tensors in {name} ({op.node_name})")


def apply(op: OpDef, *tensors: Any, **attrs: Any) -> Any:
    """Run ``op`` on tensors (Python numbers are wrapped like torch wraps them), record the node:
    the op's generated call (``codegen.call_source``; compiled on the op's first call)."""
    return op._call(tensors, attrs)


def _cast(t: Any, a: Any, dt: Any) -> Any:
    """Operand ``t``'s array ``a`` cast to ``dt``; a shared wrapped number keeps its casts."""
    casts = getattr(t, "_casts", None)
    cast = None if casts is None else casts.get(dt)
    if cast is None:
        with np.errstate(over="ignore"):  # a number too large for float16 is inf, without a warning
            cast = a.astype(dt)
        if casts is not None:
            casts[dt] = cast
    return cast


def _raise_broadcast_error(exc: ValueError, op: OpDef, arrays: tuple, attrs: dict) -> None:
    """torch's RuntimeError when numpy's ValueError ``exc`` says the operands do not broadcast."""
    if "broadcast" in str(exc):
        _raise_if_unbroadcastable(op, arrays, attrs)


def _raise_if_unbroadcastable(op: OpDef, arrays: tuple, attrs: dict) -> None:
    """torch's RuntimeError if the operands do not broadcast: the shapes folded in the order
    torch's TensorIterator takes the operands (``where``'s condition first), else the inputs'."""
    shapes = [a.shape for a in arrays]
    if op.iterator_operands:
        shapes = [
            shapes[op.inputs.index(name)] if name in op.inputs else getattr(attrs[name], "shape", ())
            for name in op.iterator_operands
        ]
    mismatch = broadcast_mismatch([tuple(shape) for shape in shapes])
    if mismatch is not None:
        raise RuntimeError(mismatch) from None


def _is_cpu_scalar(t: Any) -> bool:
    return isinstance(t, Tensor) and t._data.ndim == 0 and type(t._data) is np.ndarray


def _across_devices(op: OpDef, tensors: tuple, attrs: dict) -> Any:
    """The op when its forward raised TypeError, as cupy does for a host array among a kernel's
    operands and numpy for a device array it cannot convert. torch's TensorIterator lets 0-dim CPU
    tensors join an op on another device ("CPU scalars", compute_types): the op runs on copies
    of them on that device and records against them; the engine moves their 0-dim gradients back
    to the CPU (torch's validate_outputs, engine._conform). Operands on two devices otherwise raise torch's
    error; a TypeError of another cause is raised as it was."""
    operands = [*tensors, *(v for v in attrs.values() if isinstance(v, Tensor))]
    if op.iterator_operands:  # devices named in TensorIterator's order of its operands
        named = dict(zip(op.inputs, tensors, strict=False)) | attrs
        operands = [named[name] for name in op.iterator_operands if name in named] + operands
        operands = [t for t in operands if not _is_cpu_scalar(t)] or operands
    devices = list(dict.fromkeys(str(t.device) for t in operands if isinstance(t, Tensor)))
    if len(devices) > 1:
        if op.iterator_operands:
            _raise_if_unbroadcastable(op, tuple(t._data for t in tensors), attrs)
        raise RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices, "
            f"{devices[0]} and {devices[1]}!"
        ) from None
    scalars = [i for i, t in enumerate(tensors) if _is_cpu_scalar(t)]
    scalar_attrs = [name for name, v in attrs.items() if _is_cpu_scalar(v)]
    if not op.iterator_operands or devices == ["cpu"] or not scalars + scalar_attrs or len(op.outputs) != 1:
        raise  # noqa: PLE0704  (the forward's TypeError, being handled by the caller)
    xp = namespace_of(operands[0]._data)
    moved = [_uploaded(xp, t) if i in scalars else t for i, t in enumerate(tensors)]
    moved_attrs = {k: _uploaded(xp, v) if k in scalar_attrs else v for k, v in attrs.items()}
    with grad_mode.no_grad():
        main = op._call(tuple(moved), moved_attrs)
    needs_grad = any(t.requires_grad for t, d in zip(tensors, op._plan.diff, strict=True) if d is not None)
    if needs_grad and grad_mode.is_recording() and main._data.dtype in GRAD_DTYPES:
        op._record(tensors, attrs, (main,))
    return main


def _uploaded(xp: Any, t: Tensor) -> Tensor:
    """A copy of the 0-dim CPU tensor ``t`` on ``xp``'s device, outside any graph."""
    return Tensor._from_array(xp.asarray(t._data))


def _torch_layout(op: OpDef, xp: Any, raw: Any, tensors: tuple, arrays: list, attrs: dict) -> Any:
    """An elementwise op's result laid out as torch's TensorIterator lays it out (see
    _layout.elementwise_layout) over ``op.iterator_operands``: an input as passed (marked when
    the op computed on a cast of it), a tensor attr, or a number attr as a 0-d operand."""
    operands = []
    for name in op.iterator_operands:
        if name in op.inputs:
            i = op.inputs.index(name)
            operands.append((tensors[i]._data, arrays[i].dtype != tensors[i]._data.dtype))
        else:
            value = attrs[name]
            operands.append((value._data if isinstance(value, Tensor) else np.empty(()), False))
    return _layout.elementwise_layout(xp, raw, operands)


# what an op refuses as an operand (neither a tensor nor a number), with torch's TypeError
NOT_OPERANDS = (type(None), list, tuple, str, dict)


def _wrap_numbers(tensors: tuple, op: OpDef) -> tuple:
    """The operands with Python numbers wrapped (on the device of the first tensor operand). What
    is neither a tensor nor a number raises torch's TypeError (in the wording of the function
    form, ``torch.mul(x, None)``; numpy would have made None a nan), as does a number given as
    the only operand (torch's parser wants a Tensor for ``input``: ``torch.neg(1.5)``)."""
    if len(tensors) == 1:
        raise _not_an_operand(op, 1, tensors[0])
    if len(tensors) == 2:  # most calls: a tensor and a number (``h * 1.0001``), without the loops
        t0, t1 = tensors
        if isinstance(t0, Tensor) and not isinstance(t1, NOT_OPERANDS):
            return (t0, _wrap(t1, t0))
    first = None
    for t in tensors:
        if isinstance(t, Tensor):
            first = t
            break
    operands = []
    for position, t in enumerate(tensors, 1):
        if not isinstance(t, Tensor):
            if isinstance(t, NOT_OPERANDS):
                raise _not_an_operand(op, position, t)
            t = _wrap(t, first)
        operands.append(t)
    return tuple(operands)


def _not_an_operand(op: OpDef, position: int, value: Any) -> TypeError:
    differentiable = re.fullmatch(r"(\w+?)Backward\d+", op.node_name)
    function = f"{differentiable.group(1).lower()}(): " if differentiable else ""
    argument = "input" if position == 1 else op.inputs[position - 1]
    where = f"argument '{argument}' (position {position})"
    # (a public function's wrapper words it again from the call as given: ``reparse``)
    return ArgumentTypeError(f"{function}{where} must be Tensor, not {type_name(value)}")


def broadcast_mismatch(shapes: list[tuple[int, ...]]) -> str | None:
    """torch's error for operands that do not broadcast (shapes folded left to right, dimensions
    compared from the last), or None when they do."""
    result = shapes[0]
    for shape in shapes[1:]:
        ndim = max(len(result), len(shape))
        out = []
        for i in range(ndim - 1, -1, -1):
            offset = ndim - 1 - i
            a = result[len(result) - 1 - offset] if offset < len(result) else 1
            b = shape[len(shape) - 1 - offset] if offset < len(shape) else 1
            if a != b and a != 1 and b != 1:
                return (
                    f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton "
                    f"dimension {i}"
                )
            out.append(b if a == 1 else a)
        result = tuple(reversed(out))
    return None


FLOAT_DTYPES = frozenset(np_dtype for np_dtype, d in dtypes._BY_NP.items() if d.is_floating_point)
# the dtypes whose results are differentiable (recorded)
GRAD_DTYPES = FLOAT_DTYPES | {np.dtype(np.complex64), np.dtype(np.complex128)}


def _common_float(tensors: tuple) -> Any:
    """The numpy dtype shared by every operand that is not a wrapped number, when it is a float
    (torch's result type is then that dtype whatever the wrapped numbers are); None otherwise."""
    dt = None
    for t in tensors:
        if t._wrapped_number:
            if t._data.dtype.kind == "c":  # a complex number makes a real result complex
                return None
            continue
        a = t._data.dtype
        if dt is None:
            dt = a
        elif a != dt:
            return None
    return dt if dt is not None and dt.kind == "f" else None


def compute_dtype(tensors: tuple, to_float: bool = False) -> Any:
    """torch's result type of the operands; integral results become the default float if asked."""
    dt = dtypes.result_type(*tensors)
    return dtypes.get_default_dtype() if to_float and not (dt.is_floating_point or dt.is_complex) else dt


def _view_creation_meta(base: Any, in_grad_mode: str = "") -> str:
    """torch's CreationMeta of a view of ``base`` made now (``Tensor._creation_meta``): made in
    inference mode, in no_grad mode or else ``in_grad_mode`` ("multiple" for the outputs of
    split/chunk/unbind), propagated from a view ``base`` as torch's propagate_creation_meta does
    (inference mode sticks; otherwise the newer mode wins)."""
    new = "inference" if _grad_state.inference else in_grad_mode if _grad_state.enabled else "no_grad"
    old = base._creation_meta
    return old if not new or old == "inference" else new


def _edge_of(t: Any) -> tuple:
    """``t._edge()`` without the view check when ``t`` is no view (the common case)."""
    if t._base_ is None:
        fn = t._grad_fn_
        if fn is not None:
            return (fn, t._output_nr)
        if not t._requires_grad:  # a constant, a wrapped number: its gradient goes nowhere
            return NO_EDGE
    return t._edge()


NO_EDGE = (None, 0)
_NOWHERE: dict[int, tuple] = {}  # length -> (None, 0, None, 0, ...), shared by every node


def _tail(flat: list) -> tuple:
    """Edges after the first, flat; the shared constant when none of them leads anywhere."""
    if flat[0::2].count(None) < len(flat) // 2:  # some edge leads somewhere
        return tuple(flat)
    tail = _NOWHERE.get(len(flat))
    if tail is None:
        tail = _NOWHERE[len(flat)] = tuple(flat)
    return tail


_OUTPUT_META: dict = {}


def output_meta(t: Any) -> tuple:
    """``(input_meta(t),)`` of a node's single output, shared between nodes (a graph of the same
    shapes keeps one, not one per node); the cache is bounded."""
    data = t._data
    key = (data.shape, data.dtype, type(data))
    meta = _OUTPUT_META.get(key)
    if meta is None:
        if len(_OUTPUT_META) > 4096:
            _OUTPUT_META.clear()
        meta = _OUTPUT_META[key] = (input_meta(t),)
    return meta


_IN_META: dict = {}


def shared_in_meta(meta: tuple) -> tuple:
    """A node's ``_in_meta`` (each input's shape and numpy dtype), shared between nodes like
    ``output_meta``: a tuple holding numpy dtypes stays tracked by the cycle collector (their type
    is a collected one), so one per node would be one more object per op for every collection to
    walk; the cache is bounded. The generated recorders look the cache up first themselves."""
    if len(_IN_META) > 4096:
        _IN_META.clear()
    _IN_META[meta] = meta
    return meta


class JvpCtx:
    """What a jvp formula sees, by derivatives.yaml's names: each input's primal by its name
    (``c.self``), its tangent as ``<name>_t`` (zeros where it has none; ``tangent(name)`` gives
    None there), the outputs (``c.result``), the op's attrs; ``shape``/``dtype`` as OpCtx's, so
    that a backward formula can serve as an elementwise op's jvp."""

    def __init__(self, op: OpDef, tensors: tuple, attrs: dict, results: tuple, tangents: list) -> None:
        self.op, self.tensors, self.attrs, self.tangents = op, tensors, attrs, tangents
        values = dict(attrs)
        values.update(zip(op.outputs, results, strict=False))
        values.update(zip(op.inputs, tensors, strict=True))
        self.__dict__.update(values)

    def __getattr__(self, name: str) -> Any:  # ``<input>_t``, made on first use
        if name.endswith("_t") and name[:-2] in self.op.inputs:
            i = self.op.inputs.index(name[:-2])
            value = self.tangents[i]
            if value is None:
                value = zeros_like(self.tensors[i])
                value._wrapped_number = self.tensors[i]._wrapped_number
            self.__dict__[name] = value
            return value
        raise AttributeError(name)

    def tangent(self, name: str) -> Any:
        return self.tangents[self.op.inputs.index(name)]

    def zero_tangents(self) -> list:
        """Each differentiable input's tangent (zeros without one), the others' primal."""
        return [
            getattr(self, name + "_t") if d is not None else t
            for name, d, t in zip(self.op.inputs, self.op._plan.diff, self.tensors, strict=True)
        ]

    def like_result(self, tangent: Any, i: int = 0) -> Any:
        """``tangent`` broadcast to the ``i``-th result's shape, in its dtype (a term of a formula
        may have its input's shape, or a wider dtype)."""
        result = getattr(self, self.op.outputs[i])
        if tangent.shape != result.shape:
            tangent = tangent.expand(result.shape).clone()
        return tangent if tangent.dtype is result.dtype else tangent.to(result.dtype)

    def shape(self, name: str = "self") -> tuple[int, ...]:
        return tuple(self.tensors[self.op.inputs.index(name)]._data.shape)

    def dtype(self, name: str = "self") -> Any:
        return self.tensors[self.op.inputs.index(name)].dtype

    def strides(self, name: str) -> tuple[int, ...]:
        return self.tensors[self.op.inputs.index(name)].stride()

    def needs(self, name: str) -> bool:
        return True


def auto_linear(c: JvpCtx) -> Any:
    """derivatives.yaml's ``auto_linear``: the op is linear in its inputs, its jvp the op itself
    applied to the tangents (zeros for an input without one), with the same attrs."""
    return apply(c.op, *c.zero_tangents(), **c.attrs)


def defined_sum(*terms: Any) -> Any:
    """The sum of the terms that are defined (not None), as torch's zero tensor of an undefined
    tangent drops out of a formula's sums (keeping a -0.0 that adding a real zero would lose)."""
    return functools.reduce(operator.add, [t for t in terms if t is not None])


def linear_part(**attrs: Any) -> Callable[[JvpCtx], Any]:
    """The jvp of an op linear in its inputs but for a constant it adds (a fill value, a padding
    value): the op on the tangents with the constant's attrs replaced (by 0)."""
    return lambda c: apply(c.op, *c.zero_tangents(), **{**c.attrs, **attrs})


def auto_element_wise(c: JvpCtx) -> Any:
    """derivatives.yaml's ``auto_element_wise``: an elementwise op's jvp is its backward formula
    with the tangent in place of the gradient, summed over the inputs that have a tangent."""
    terms = [
        d.formula(t, c)
        for d, t in zip(c.op._plan.diff, c.tangents, strict=True)
        if d is not None and t is not None
    ]
    return c.like_result(functools.reduce(operator.add, terms))


def separable(c: JvpCtx) -> Any:
    """The jvp of an op each of whose result elements depends on its own slice of the inputs (a
    reduction over ``dim``, or over everything to a 0-d result; or elementwise): the backward
    formulas with ones for the gradient give each input element's partial derivative, times the
    tangent, summed back to the result's shape; per differentiable output where it has several."""
    n = c.op.differentiable_outputs
    return _separable(c, 0) if n == 1 else tuple(_separable(c, i) for i in range(n))


def separable_dense(c: JvpCtx) -> Any:
    """``separable`` with every differentiable input's term, zeros for an undefined tangent (as
    mse_loss's: an infinite difference times the zeros gives NaN)."""
    return _separable(c, 0, dense=True)


def _separable(c: JvpCtx, i: int, dense: bool = False) -> Any:
    result = getattr(c, c.op.outputs[i])
    ones = ones_like(result)
    n = c.op.differentiable_outputs
    grads = ones if n == 1 else tuple(ones if k == i else None for k in range(n))
    tangents = c.zero_tangents() if dense else c.tangents
    terms = [
        d.formula(grads, c) * t
        for d, t in zip(c.op._plan.diff, tangents, strict=True)
        if d is not None and t is not None
    ]
    total = functools.reduce(operator.add, terms)
    dim, keepdim = c.attrs.get("dim"), bool(c.attrs.get("keepdim"))
    if result.dim() == 0:
        total = total.sum()
    elif dim is not None and (keepdim or total.dim() != result.dim()):
        total = total.sum(dim, keepdim=keepdim)
    return c.like_result(total, i)


def bilinear(c: JvpCtx) -> Any:
    """The jvp of a product bilinear in its two inputs (dot, mul): ``op(a_t, b) + op(a, b_t)``, a
    term left out where the tangent is undefined (torch's zero tensor)."""
    (a, b), (ta, tb) = c.tensors, c.tangents
    first = None if ta is None else apply(c.op, ta, b, **c.attrs)
    second = None if tb is None else apply(c.op, a, tb, **c.attrs)
    return second if first is None else first if second is None else first + second


def bilinear_dense(c: JvpCtx) -> Any:
    """``bilinear`` with zeros for an undefined tangent, as torch's mm, bmm and mv compute it (an
    infinite primal times the zeros gives NaN)."""
    (a, b), (ta, tb) = c.tensors, c.zero_tangents()
    return apply(c.op, ta, b, **c.attrs) + apply(c.op, a, tb, **c.attrs)


def _aten_name(op: OpDef) -> str:
    """The aten name torch's forward-AD error gives an op, from its node's name."""
    if op.aten_name is not None:
        return op.aten_name
    base = re.sub(r"Backward\d*$", "", op.node_name)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", base).lower()


def _forward_grad(op: OpDef, tensors: tuple, attrs: dict, results: tuple) -> None:
    """Forward AD after ``op`` ran: the tangents of its differentiable float outputs from the
    tangents of its differentiable inputs (``op.jvp``, run without forward AD), or torch's
    NotImplementedError for an op without one."""
    tangents = [tangent_of(t) if d is not None else None for t, d in zip(tensors, op._plan.diff, strict=True)]
    if all(t is None for t in tangents):
        return
    if any(t._data.dtype.kind == "c" for t in (*tensors, *results) if isinstance(t, Tensor)):
        raise NotImplementedError("impl does not support forward AD of complex tensors")
    if results[0]._data.dtype not in FLOAT_DTYPES:
        return
    if op.jvp is None:
        raise NotImplementedError(
            f"Trying to use forward AD with {_aten_name(op)} that does not support it because it has not "
            "been implemented yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/pytorch/"
            "issues/new?template=feature-request.yml so that we can prioritize its implementation or "
            "submit a PR adding the implementation to derivatives.yaml"
        )
    forward_level.propagating = False
    try:
        out = op.jvp(JvpCtx(op, tensors, attrs, results, tangents))
    finally:
        forward_level.propagating = True
    outs = out if op.differentiable_outputs > 1 else (out,)
    for result, tangent in zip(results, outs, strict=False):
        if tangent is not None and result._data.dtype in FLOAT_DTYPES:
            set_tangent(result, tangent)


# what the generated recording functions and node methods call (impl/_ops/codegen.py)
_RECORD_HELPERS = {
    "_edge_of": _edge_of, "_save": _save, "_tail": _tail, "output_meta": output_meta,
    "NO_EDGE": NO_EDGE, "Tensor": Tensor, "_IN_META": _IN_META, "shared_in_meta": shared_in_meta,
    "_new": _new, "_sequence": _sequence, "NOTHING_SAVED": NOTHING_SAVED, "_saved_hooks": _saved_hooks,
    "_OUTPUT_META": _OUTPUT_META,
}
_NODE_HELPERS = {
    "_unpack": _unpack, "_new": _new, "SavedTensor": SavedTensor, "RELEASED": RELEASED, "Tensor": Tensor,
    "_hold": _hold, "_drop": _drop, "ConjCtx": ConjCtx,
}
_CALL_HELPERS = {
    "np": np, "Tensor": Tensor, "namespace_of": namespace_of, "_wrap_numbers": _wrap_numbers, "_wrap": _wrap,
    "_common_float": _common_float, "compute_dtype": compute_dtype, "_cast": _cast,
    "quiet_enter": quiet_enter, "quiet_exit": quiet_exit, "_raise_broadcast_error": _raise_broadcast_error,
    "_across_devices": _across_devices,
    "_from_array": Tensor._from_array, "_torch_layout": _torch_layout, "_grad_state": _grad_state,
    "FLOAT_DTYPES": FLOAT_DTYPES, "GRAD_DTYPES": GRAD_DTYPES, "_view_creation_meta": _view_creation_meta,
    "forward_level": forward_level, "_forward_grad": _forward_grad, "complex_refused": complex_refused,
}
