"""The op table machinery: an op is declared once as an OpDef (forward on ``xp``, per-input
derivative formulas and what each formula uses, torch's grad_fn name) and ``apply`` runs it.

What gets saved follows torch's derivatives.yaml codegen: a value is saved only when a derivative
that uses it will be computed (its input requires grad). Saved tensors are SavedTensor objects, so
a second backward without ``retain_graph`` raises torch's error exactly when torch's would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from impl._xp import namespace_of
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
        body: dict[str, Any] = {"op": self}
        if self.qualified_name:
            body["name"] = lambda node: self.qualified_name
        self.node_class = type(self.node_name, (OpNode,), body)


def D(uses: str, formula: Callable[[Any, OpCtx], Any]) -> Derivative:
    """Shorthand: ``D("self other", lambda g, c: ...)``."""
    return Derivative(tuple(uses.split()), formula)


class OpCtx:
    """What a backward formula sees: saved values by name (tensors unpacked, checked), attrs,
    and the forward inputs' shapes and dtypes."""

    def __init__(self, node: OpNode) -> None:
        self._node = node

    def __getattr__(self, name: str) -> Any:
        saved = self._node._saved
        if name in saved:
            v = saved[name]
            return v.unpack() if isinstance(v, SavedTensor) else v
        raise AttributeError(name)

    def shape(self, name: str = "self") -> tuple[int, ...]:
        return self._node._shapes[name]

    def dtype(self, name: str = "self") -> Any:
        return self._node._dtypes[name]

    def needs(self, name: str) -> bool:
        op = self._node.op
        return self._node._next[op.inputs.index(name)][0] is not None


class OpNode(Node):
    """grad_fn of a table op; the class is made per op so ``type(grad_fn).__name__`` is torch's."""

    op: OpDef

    def __init__(self) -> None:
        super().__init__()
        self._saved: dict[str, Any] = {}
        self._shapes: dict[str, tuple[int, ...]] = {}
        self._dtypes: dict[str, Any] = {}

    def apply(self, grads: tuple) -> tuple:
        g = grads[0]
        op = self.op
        out: list = []
        ctx = OpCtx(self)
        for name, (fn, _nr) in zip(op.inputs, self._next, strict=False):
            if fn is None or g is None:
                out.append(None)
            else:
                out.append(op.derivatives[name].formula(g, ctx))
        return tuple(out)

    def release(self) -> None:
        for v in self._saved.values():
            if isinstance(v, SavedTensor):
                v.release()


def _wrap(value: Any, like: Any) -> Any:
    from impl._tensor import Tensor

    if isinstance(value, Tensor):
        return value
    from impl._creation import scalar_tensor

    return scalar_tensor(value, like)


def apply(op: OpDef, *tensors: Any, **attrs: Any) -> Any:
    """Run ``op`` on tensors (Python numbers are wrapped like torch wraps them), record the node."""
    from impl._tensor import Tensor

    first = next((t for t in tensors if isinstance(t, Tensor)), None)
    tensors = tuple(_wrap(t, first) for t in tensors)
    xp = namespace_of(tensors[0]._data)
    arrays = [t._data for t in tensors]
    if op.promote:
        dt = compute_dtype(tensors, op.promote == "float")
        arrays = [a.astype(dt.np, copy=False) for a in arrays]
    with np.errstate(all="ignore"):  # torch computes inf/nan silently
        raw = op.forward(xp, *arrays, **attrs)
    raws = raw if isinstance(raw, tuple) else (raw,)
    results = [
        Tensor._from_array(xp.asarray(r) if not hasattr(r, "dtype") or r.ndim == 0 else r) for r in raws
    ]
    main = results[0]
    if op.view:
        src = tensors[0]
        main._base = src._base if src._base is not None else src
        main._vc = src._vc
        main._view_version = src._vc.value
        main._view_no_grad = not grad_mode.is_grad_enabled() and src.requires_grad
    if (
        grad_mode.is_grad_enabled()
        and main.dtype.is_floating_point
        and any(
            t.requires_grad for name, t in zip(op.inputs, tensors, strict=False) if name in op.derivatives
        )
    ):
        _record(op, tensors, attrs, results)
    return main if len(results) == 1 else tuple(results)


def compute_dtype(tensors: tuple, to_float: bool = False) -> Any:
    """torch's result type of the operands; integral results become the default float if asked."""
    from impl import dtypes

    dt = dtypes.result_type(*tensors)
    return dtypes.get_default_dtype() if to_float and not dt.is_floating_point else dt


def _record(op: OpDef, tensors: tuple, attrs: dict, results: list) -> None:
    node = op.node_class()
    node._next = tuple(
        t._edge() if name in op.derivatives else (None, 0)
        for name, t in zip(op.inputs, tensors, strict=False)
    )
    values: dict[str, Any] = dict(zip(op.inputs, tensors, strict=False))
    values.update(attrs)
    values.update(zip(op.outputs, results, strict=False))
    for name, t in zip(op.inputs, tensors, strict=False):
        node._shapes[name] = tuple(t.shape)
        node._dtypes[name] = t.dtype
    node._saved.update({k: v for k, v in attrs.items() if not _is_tensor(v)})
    needed = {
        u
        for name, (fn, _) in zip(op.inputs, node._next, strict=False)
        if fn is not None
        for u in op.derivatives[name].uses
    }
    for name in needed:
        v = values[name]
        owner = node if name in op.outputs else None
        node._saved[name] = SavedTensor(v, owner) if _is_tensor(v) else v
    main = results[0]
    main._grad_fn = node
    main._output_nr = 0
    node._input_meta = [(tuple(main.shape), main.dtype)]


def _is_tensor(v: Any) -> bool:
    from impl._tensor import Tensor

    return isinstance(v, Tensor)
