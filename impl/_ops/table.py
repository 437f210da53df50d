"""The op table machinery: an op is declared once as an OpDef (forward on ``xp``, per-input
derivative formulas and what each formula uses, torch's grad_fn name) and ``apply`` runs it.

What gets saved follows torch's derivatives.yaml codegen: a value is saved only when a derivative
that uses it will be computed (its input requires grad). Saved tensors are SavedTensor objects, so
a second backward without ``retain_graph`` raises torch's error exactly when torch's would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from impl._xp import namespace_of, quiet_enter, quiet_exit
from impl.autograd import grad_mode
from impl.autograd.graph import Node, SavedTensor


@dataclass(frozen=True)
class Derivative:
    """Backward formula for one differentiable input: ``formula(grad, ctx) -> Tensor``."""

    uses: tuple[str, ...]
    formula: Callable[[Any, OpCtx], Any]


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

    def __post_init__(self) -> None:
        body: dict[str, Any] = {"op": self, "__slots__": ()}
        if self.qualified_name:
            body["name"] = lambda node: self.qualified_name
        self.node_class = type(self.node_name, (OpNode,), body)


def D(uses: str, formula: Callable[[Any, OpCtx], Any]) -> Derivative:
    """Shorthand: ``D("self other", lambda g, c: ...)``."""
    return Derivative(tuple(uses.split()), formula)


class OpCtx:
    """What a backward formula sees: saved values by name (tensors unpacked, checked), attrs,
    and the forward inputs' shapes and dtypes."""

    __slots__ = ("_node",)

    def __init__(self, node: OpNode) -> None:
        self._node = node

    def __getattr__(self, name: str) -> Any:
        saved = self._node._saved
        if name in saved:
            v = saved[name]
            return v.unpack() if type(v) is SavedTensor else v
        raise AttributeError(name)

    def shape(self, name: str = "self") -> tuple[int, ...]:
        node = self._node
        return node._in_meta[2 * node.op.inputs.index(name)]

    def dtype(self, name: str = "self") -> Any:
        from impl.dtypes import from_numpy_dtype

        node = self._node
        return from_numpy_dtype(node._in_meta[2 * node.op.inputs.index(name) + 1])

    def strides(self, name: str) -> tuple[int, ...]:
        """Strides input ``name`` had in the forward (declared in uses as ``"name.strides"``)."""
        return self._node._saved[name + ".strides"]

    def needs(self, name: str) -> bool:
        node = self._node
        return node._next[node.op.inputs.index(name)][0] is not None


NOTHING_SAVED: Any = MappingProxyType({})


class OpNode(Node):
    """grad_fn of a table op; the class is made per op so ``type(grad_fn).__name__`` is torch's.

    ``_saved``: what the derivatives use, by name; ``_in_meta``: shape, numpy dtype of each input
    (one flat tuple: every object a node keeps alive is one more for the cycle collector to walk)."""

    __slots__ = ("_saved", "_in_meta")
    op: OpDef

    def __init__(self) -> None:
        super().__init__()
        self._saved: Any = NOTHING_SAVED
        self._in_meta: tuple = ()

    def apply(self, grads: tuple) -> tuple:
        g = grads[0]
        op = self.op
        if g is None:
            return (None,) * len(op.inputs)
        for v in self._saved.values():  # torch's generated apply unpacks every saved value first
            if type(v) is SavedTensor:
                v.unpack()
        ctx = OpCtx(self)
        derivatives = op.derivatives
        return tuple(
            None if fn is None else derivatives[name].formula(g, ctx)
            for name, (fn, _nr) in zip(op.inputs, self._next, strict=False)
        )

    def release(self) -> None:
        for v in self._saved.values():
            if type(v) is SavedTensor:
                v.release()


_WRAPPED: dict[tuple, Any] = {}  # Python number -> its wrapped tensor (CPU, outside inference mode)


def _wrap(value: Any, like: Any) -> Any:
    """A Python number as torch's wrapped-number tensor. Wrapped numbers never reach the user and
    are never written, so CPU ones are shared per value: a chain like ``h * 1.0001`` saves one
    tensor, not one per node (fewer objects alive, less work for the cycle collector)."""
    from impl._tensor import Tensor

    if isinstance(value, Tensor):
        return value
    from impl._creation import scalar_tensor

    kind = type(value)
    if kind not in (float, int, bool) or grad_mode._state.inference:
        return scalar_tensor(value, like)
    if like is not None and type(like._data) is not np.ndarray:
        return scalar_tensor(value, like)
    key = (kind, value.hex() if kind is float else value)
    wrapped = _WRAPPED.get(key)
    if wrapped is None:
        if len(_WRAPPED) > 1024:
            _WRAPPED.clear()
        wrapped = _WRAPPED[key] = scalar_tensor(value, None)
    return wrapped


def apply(op: OpDef, *tensors: Any, **attrs: Any) -> Any:
    """Run ``op`` on tensors (Python numbers are wrapped like torch wraps them), record the node."""
    from impl._tensor import Tensor

    for t in tensors:
        if not isinstance(t, Tensor):
            first = next((t for t in tensors if isinstance(t, Tensor)), None)
            tensors = tuple(_wrap(t, first) for t in tensors)
            break
    arrays = [t._data for t in tensors]
    first_array = arrays[0]
    xp = np if type(first_array) is np.ndarray else namespace_of(first_array)
    if op.promote:
        dt = _common_float(tensors)
        if dt is None:
            dt = compute_dtype(tensors, op.promote == "float").np
        arrays = [a if a.dtype == dt else a.astype(dt) for a in arrays]
    token = quiet_enter()
    try:
        raw = op.forward(xp, *arrays, **attrs)
    except ValueError as exc:
        mismatch = broadcast_mismatch([a.shape for a in arrays]) if "broadcast" in str(exc) else None
        if mismatch is None:
            raise
        raise RuntimeError(mismatch) from None
    finally:
        quiet_exit(token)
    if type(raw) is tuple:
        results = [Tensor._from_array(r if type(r) is np.ndarray else xp.asarray(r)) for r in raw]
    else:
        results = [Tensor._from_array(raw if type(raw) is np.ndarray else xp.asarray(raw))]
    main = results[0]
    if op.view:
        src = tensors[0]
        main._base = src._base if src._base is not None else src
        main._vc = src._vc
        main._view_version = src._vc.value
        main._view_no_grad = not grad_mode._state.enabled and src.requires_grad
    state = grad_mode._state
    recording = state.enabled and not state.inference
    if recording and main._data.dtype.kind in FLOAT_KINDS and main.dtype.is_floating_point:
        derivatives = op.derivatives
        for name, t in zip(op.inputs, tensors, strict=False):
            if name in derivatives and (t._requires_grad or t._grad_fn is not None):
                _record(op, tensors, attrs, results)
                break
    return main if len(results) == 1 else tuple(results)


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


FLOAT_KINDS = frozenset("fcV")  # numpy kinds a floating dtype can have (V: ml_dtypes' bfloat16)


def _common_float(tensors: tuple) -> Any:
    """The numpy dtype shared by every operand that is not a wrapped number, when it is a float
    (torch's result type is then that dtype whatever the wrapped numbers are); None otherwise."""
    dt = None
    for t in tensors:
        if t._wrapped_number:
            continue
        a = t._data.dtype
        if dt is None:
            dt = a
        elif a != dt:
            return None
    return dt if dt is not None and dt.kind == "f" else None


def compute_dtype(tensors: tuple, to_float: bool = False) -> Any:
    """torch's result type of the operands; integral results become the default float if asked."""
    from impl import dtypes

    dt = dtypes.result_type(*tensors)
    return dtypes.get_default_dtype() if to_float and not dt.is_floating_point else dt


def _edge_of(t: Any) -> tuple:
    """``t._edge()`` without the view check when ``t`` is no view (the common case)."""
    if t._grad_fn is not None and t._base is None:
        return (t._grad_fn, t._output_nr)
    return t._edge()


def _record(op: OpDef, tensors: tuple, attrs: dict, results: list) -> None:
    node = op.node_class()
    derivatives = op.derivatives
    inputs = op.inputs
    node._next = tuple(
        _edge_of(t) if name in derivatives else (None, 0) for name, t in zip(inputs, tensors, strict=False)
    )
    meta: list = []
    for t in tensors:
        meta += (t._data.shape, t._data.dtype)
    node._in_meta = tuple(meta)
    saved: dict[str, Any] = {}
    for k, v in attrs.items():
        if not _is_tensor(v):
            saved[k] = v
    for name, (fn, _) in zip(inputs, node._next, strict=False):
        if fn is None:
            continue
        for use in derivatives[name].uses:
            if use.endswith(".strides"):  # layout of an input, as derivatives.yaml's x.sym_strides()
                saved[use] = tensors[inputs.index(use[: -len(".strides")])].stride()
                continue
            if use in op.outputs:
                v, owner = results[op.outputs.index(use)], node
            elif use in attrs:
                v, owner = attrs[use], None
            else:
                v, owner = tensors[inputs.index(use)], None
            if _is_tensor(v):
                if type(saved.get(use)) is not SavedTensor:
                    saved[use] = SavedTensor(v, owner)
            else:
                saved[use] = v
    if saved:
        node._saved = saved
    main = results[0]
    main._grad_fn = node
    main._output_nr = 0
    node._input_meta = output_meta(main)


_OUTPUT_META: dict = {}


def output_meta(t: Any) -> tuple:
    """``((shape, dtype),)`` of a node's single output, shared between nodes (a graph of the same
    shapes keeps one, not one per node); the cache is bounded."""
    key = (t._data.shape, t._data.dtype)
    meta = _OUTPUT_META.get(key)
    if meta is None:
        if len(_OUTPUT_META) > 4096:
            _OUTPUT_META.clear()
        meta = _OUTPUT_META[key] = ((key[0], t.dtype),)
    return meta

def _is_tensor(v: Any) -> bool:
    from impl._tensor import Tensor

    return isinstance(v, Tensor)
