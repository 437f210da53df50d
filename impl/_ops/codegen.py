"""Each op's recording function, generated from its OpDef, as torch's autograd codegen turns
derivatives.yaml into one ``VariableType`` function per op.

Recording a node is the same steps for every op (make the node, find each input's edge, keep the
inputs' metadata, save what the derivatives of the inputs that need a gradient use, attach the node
to the result), but doing them by interpreting the op's plan costs a loop per input and per saved
value on every call. Generated once per op, the steps are straight-line code with the op's shape
baked in; ``OpDef.record_source`` shows it. For ``MulBackward0``::

    def record(tensors, attrs, results):
        node = node_class()
        t0, t1 = tensors
        edge0 = _edge_of(t0)
        edge1 = _edge_of(t1)
        node._fn0, node._nr0 = edge0
        node._rest = edge1
        node._in_meta = (t0._data.shape, t0._data.dtype, t1._data.shape, t1._data.dtype)
        saved = {k: v for k, v in attrs.items() if not isinstance(v, Tensor)} if attrs else None
        if edge0[0] is not None:
            node._sv_other = _save(t1, None)
        if edge1[0] is not None:
            node._sv_self = _save(t0, None)
        if saved:
            node._attrs = saved
        result = results[0]
        result._grad_fn = node
        result._output_nr = 0
        node._input_meta = output_meta(result)

What gets saved follows the codegen's rule: a derivative's uses are saved only when its input's
gradient goes somewhere. Saved tensors go to the node's slots (an input kept bare while unwritten,
an output as a SavedTensor naming the node, see ``table._save``); attributes and strides go to
``node._attrs``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from impl._ops.table import OpDef


def record_source(op: OpDef) -> str:
    """The Python source of ``op``'s recording function ``record(tensors, attrs, results)``."""
    plan = op._plan
    n = len(op.inputs)
    names = [f"t{i}" for i in range(n)]
    lines = ["def record(tensors, attrs, results):", "    node = node_class()"]
    lines.append(f"    {', '.join(names)}{',' if n == 1 else ''} = tensors")
    for i, d in enumerate(plan.diff):  # edges: None when the op has no derivative for the input
        lines.append(f"    edge{i} = {'NO_EDGE' if d is None else f'_edge_of(t{i})'}")
    lines.append("    node._fn0, node._nr0 = edge0")
    if n == 1:
        lines.append("    node._rest = ()")
    elif n == 2:  # the flat edges after the first are one (fn, nr) pair: the edge itself
        lines.append("    node._rest = edge1")
    else:
        lines.append(f"    node._rest = _tail([{', '.join(f'*edge{i}' for i in range(1, n))}])")
    meta = ", ".join(f"t{i}._data.shape, t{i}._data.dtype" for i in range(n))
    lines.append(f"    node._in_meta = ({meta})")
    # the node's _attrs: the op's attributes that are no tensors, then strides and attributes used
    keep_attrs = "{k: v for k, v in attrs.items() if not isinstance(v, Tensor)}"
    if any(kind in ("strides", "attr") for sources in plan.sources if sources for _, kind, _, _ in sources):
        lines.append(f"    saved = {keep_attrs} if attrs else {{}}")
    else:
        lines.append(f"    saved = {keep_attrs} if attrs else None")
    written: set[str] = set()  # slots an earlier input may already have filled
    for i, sources in enumerate(plan.sources):
        if not sources:
            continue
        lines.append(f"    if edge{i}[0] is not None:")
        for use, kind, where, slot in sources:
            lines += ["        " + line for line in _save_lines(use, kind, where, slot, written)]
    lines += [
        "    if saved:",
        "        node._attrs = saved",
        "    result = results[0]",
        "    result._grad_fn = node",
        "    result._output_nr = 0",
        "    node._input_meta = output_meta(result)",
    ]
    return "\n".join(lines) + "\n"


def _save_lines(use: str, kind: str, where: Any, slot: str | None, written: set[str]) -> list[str]:
    """Saving the value ``use`` that a derivative reads (see ``table._source`` for the kinds)."""
    if kind == "strides":  # layout of an input, as derivatives.yaml's x.sym_strides()
        return [f"saved[{use!r}] = t{where}.stride()"]
    if kind == "attr":  # a tensor attribute is saved like a tensor, once
        return [
            f"v = attrs[{where!r}]",
            "if not isinstance(v, Tensor):",
            f"    saved[{use!r}] = v",
            f"elif {use!r} not in saved:",
            f"    saved[{use!r}] = _save(v, None)",
        ]
    value = f"_save(results[{where}], node)" if kind == "output" else f"_save(t{where}, None)"
    if slot in written:
        return [f"if node.{slot} is None:", f"    node.{slot} = {value}"]
    written.add(slot)
    return [f"node.{slot} = {value}"]


def compile_recorder(op: OpDef, helpers: dict[str, Any]) -> Callable[[tuple, dict, tuple], None]:
    """``op``'s recording function, compiled from ``record_source`` with ``helpers`` (the table's
    ``_edge_of``, ``_save``, ``_tail``, ``output_meta``, ``NO_EDGE``, ``Tensor``) in scope."""
    namespace = {**helpers, "node_class": op.node_class}
    code = compile(record_source(op), f"<record {op.node_name}>", "exec")
    exec(code, namespace)  # noqa: S102 - source built above from the op's own plan, no user input
    return namespace["record"]
