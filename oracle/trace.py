"""The trace: everything a user could observe while a program ran, as an ordered list of events.

Each event is a plain JSON-able dict with a ``"kind"`` and the index of the ``"step"`` during which
it happened:

``value``    ``name``, ``value``: a tensor description (or None) -- an observed tensor or a result
             of ``autograd.grad``
``grad``     ``name``, ``value``: the description of ``name.grad`` (or None)
``graph``    ``name``, ``graph``: the autograd graph from ``name.grad_fn`` (``describe_graph``)
``hook``     ``hook`` (its id), ``on`` (hook kind), ``target`` (tensor or module name),
             ``received``: {group: [description or None, ...]}, e.g. ``{"grad": [...]}``
``error``    ``type`` (exception class name), ``message`` (normalised)
``warning``  ``category`` (warning class name), ``message`` (normalised); ``once``: true for
             warnings torch emits once per process (``ONCE_PER_PROCESS``; not compared)
``skipped``  ``name``: a step could not run because a name it reads was never bound

A tensor description is ``{"dtype", "shape", "data", "is_leaf", "requires_grad", "grad_fn"}`` with
``data`` the flat list of values (non-finite floats as the strings "nan", "inf", "-inf" so that the
JSON is strict and round-trips exactly) and ``grad_fn`` the class name of the node or None.

This module never imports torch: descriptions use only the Tensor API, so any backend works.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

_TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_PATH = re.compile(r"(?<![\w.])/(?:[\w.+\-]+/)+[\w.+\-]+(?::\d+)?")


def normalise(message: str) -> str:
    """Remove only what is machine-specific from an error or warning message: the C++
    "(Triggered internally at ...)" tail, hex addresses and absolute file paths."""
    message = _TRIGGERED.sub("", message)
    message = _ADDRESS.sub("0x?", message)
    return _PATH.sub("<path>", message)


# Warnings torch emits only once per process (C++ TORCH_WARN_ONCE): whether a run shows them depends
# on what ran before in the process, so the interpreter marks them ``"once": true`` and ``compare``
# leaves them out on both sides.
ONCE_PER_PROCESS = (
    "Using backward() with create_graph=True will create a reference cycle",
    "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy",
)


def warned_once_per_process(message: str) -> bool:
    return message.startswith(ONCE_PER_PROCESS)


def _number(value: Any) -> Any:
    """A tensor element as JSON: bools and ints as they are, floats with non-finite as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def values(tensor: Any) -> list:
    """A tensor's elements as a flat list, the way printing shows them: through a copy, because
    torch's ``tolist`` refuses tensors without storage (the zero tensors some double-backward
    formulas return), which still print as zeros."""
    return tensor.detach().reshape(-1).clone().tolist()


def describe(tensor: Any) -> dict | None:
    """The observable state of a tensor (None stays None), through the Tensor API only."""
    if tensor is None:
        return None
    grad_fn = tensor.grad_fn
    return {
        "dtype": str(tensor.dtype).removeprefix("torch."),
        "shape": list(tensor.shape),
        "data": [_number(v) for v in values(tensor)],
        "is_leaf": bool(tensor.is_leaf),
        "requires_grad": bool(tensor.requires_grad),
        "grad_fn": None if grad_fn is None else type(grad_fn).__name__,
    }


MAX_GRAPH_NODES = 200


def describe_graph(grad_fn: Any) -> list[dict] | None:
    """The autograd graph reachable from ``grad_fn`` (None stays None), breadth first: node ``i``
    is ``{"node": class name, "next": [[index of a next node or None, input_nr], ...]}`` following
    ``next_functions``; a node reached twice keeps its first index, so shared nodes show."""
    if grad_fn is None:
        return None
    order, index, nodes = [grad_fn], {id(grad_fn): 0}, []
    while len(nodes) < len(order) and len(nodes) < MAX_GRAPH_NODES:
        node = order[len(nodes)]
        edges = []
        for child, input_nr in node.next_functions:
            if child is not None and id(child) not in index:
                index[id(child)] = len(order)
                order.append(child)
            edges.append([None if child is None else index[id(child)], input_nr])
        nodes.append({"node": type(node).__name__, "next": edges})
    return nodes


def graph_text(nodes: list[dict] | None) -> str:
    """One-line human form of a graph description (the rendered script prints the same)."""
    if nodes is None:
        return "None"
    return "; ".join(
        f"{i} {n['node']} -> [{', '.join(f'{c}:{nr}' for c, nr in n['next'])}]" for i, n in enumerate(nodes)
    )


def describe_all(values: Any) -> list[dict | None]:
    """Descriptions of a tensor or of a tuple/list of tensors (non-tensors described as None)."""
    if not isinstance(values, (tuple, list)):
        values = [values]
    return [describe(v) if hasattr(v, "grad_fn") else None for v in values]


def tensor_text(desc: dict | None) -> str:
    """One-line human form of a tensor description (the rendered script prints the same)."""
    if desc is None:
        return "None"
    data = "[" + ", ".join(v if isinstance(v, str) else repr(v) for v in desc["data"]) + "]"
    return (
        f"tensor(dtype={desc['dtype']}, shape={desc['shape']}, data={data}, is_leaf={desc['is_leaf']}, "
        f"requires_grad={desc['requires_grad']}, grad_fn={desc['grad_fn']})"
    )


def format_event(event: dict | None) -> str:
    """One-line human form of an event, as the rendered script prints it."""
    if event is None:
        return "(no event)"
    kind, step = event["kind"], event.get("step")
    if kind == "value":
        return f"{event['name']} = {tensor_text(event['value'])}"
    if kind == "grad":
        return f"{event['name']}.grad = {tensor_text(event['value'])}"
    if kind == "graph":
        return f"{event['name']}.grad_fn graph = {graph_text(event['graph'])}"
    if kind == "hook":
        received = event["received"].items()
        groups = "; ".join(f"{group}=[{', '.join(map(tensor_text, descs))}]" for group, descs in received)
        return f"hook {event['hook']} ({event['on']} on {event['target']}): {groups}"
    if kind == "error":
        return f"step {step} raised {event['type']}: {event['message']}"
    if kind == "warning":
        return f"step {step} warned {event['category']}: {event['message']}"
    if kind == "skipped":
        return f"step {step} skipped: {event['name']} is not bound"
    return json.dumps(event)


@dataclass
class Trace:
    """The ordered events of one run of a program on one backend."""

    events: list[dict] = field(default_factory=list)
    backend: str = ""

    def add(self, kind: str, step: int, **fields: Any) -> None:
        self.events.append({"kind": kind, "step": step, **fields})

    def to_dict(self) -> dict:
        return {"backend": self.backend, "events": self.events}

    def reproducible_events(self) -> list[dict]:
        """The events that do not depend on what ran earlier in the process: all but the warnings
        torch emits once per process (``"once": true``)."""
        return [e for e in self.events if not e.get("once")]

    @classmethod
    def from_dict(cls, data: dict) -> Trace:
        return cls(list(data["events"]), data.get("backend", ""))

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> Trace:
        return cls.from_dict(json.loads(text))

    def lines(self) -> list[str]:
        return [format_event(e) for e in self.events]

    def __len__(self) -> int:
        return len(self.events)
