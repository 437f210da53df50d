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
``crash``    ``reason``: the backend's process died or timed out during this step (``oracle.runner``);
             the backend's events of the program are lost with it

A tensor description is ``{"dtype", "shape", "data", "is_leaf", "requires_grad", "grad_fn"}`` with
``data`` the flat list of values (non-finite floats as the strings "nan", "inf", "-inf" so that the
JSON is strict and round-trips exactly) and ``grad_fn`` the class name of the node or None.

Every part of an observation is read on its own, so that a backend lacking part of torch's API
still has the rest compared: a part the backend lacks the name for is ``{"unsupported": NAME}``
(``lacked``). An error event carries ``"unsupported": NAME`` the same way when the step failed
on a name, keyword or submodule the backend lacks.

This module never imports torch: descriptions use only the Tensor API, so any backend works.
"""

from __future__ import annotations

import json
import math
import re
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracle.state_dict_hooks import show_text

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
    # torch's first make_dual imports torch._decomp.decompositions_for_jvp, whose torch.jit.script
    # calls warn (each time a decomposition is scripted, at that one import)
    "`torch.jit.script` is deprecated. Please switch to `torch.compile` or `torch.export`.",
    # torch.meshgrid without indexing= (TORCH_WARN_ONCE in TensorShape.cpp)
    "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
    # nn.LSTM(proj_size=) on CPU (TORCH_WARN_ONCE in RNN.cpp)
    "LSTM with projections is not supported with oneDNN. Using default implementation.",
    # float() (or complex()) of a tensor that requires grad (TORCH_WARN_ONCE in python_variable_methods)
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.",
    # a call of a deprecated signature torch's parser hides (add(x, 2, y)): TORCH_WARN_ONCE in
    # python_arg_parser.cpp (tests/impl/test_impl_parser.py checks it with warn_always set)
    "This overload of ",
    # torch.qr and torch.cross without dim, deprecated (TORCH_WARN_ONCE in BatchLinearAlgebra.cpp and
    # Cross.cpp): the suite's processes meet them in any order
    "torch.qr is deprecated in favor of torch.linalg.qr",
    "Using torch.cross without specifying the dim arg is deprecated.",
)


def warned_once_per_process(message: str) -> bool:
    return message.startswith(ONCE_PER_PROCESS)


# -- what a backend lacks -----------------------------------------------------------------------
_HARNESS = Path(__file__).resolve().parent  # the oracle package: the code that calls the backend
_LOOKUPS = ("__getattr__", "__getattribute__")
_NO_ATTRIBUTE = re.compile(r"^(?:module |type object )?'([\w.]+)'(?: object)? has no attribute '(\w+)'")
_NO_KEYWORD = re.compile(r"^([\w.<>]+)\(\) got an unexpected keyword argument '(\w+)'")
_NODE = re.compile(r"Backward\d*$")


def lacked(exc: BaseException, torch: Any = None) -> str | None:
    """The name of torch's API the backend lacks, when ``exc`` is the failure of the harness's own
    use of it: an attribute (``torch.is_grad_enabled``, ``Tensor.retain_grad``), a keyword
    (``Tensor.backward(inputs=)``) or a submodule, failing right where the harness asked for it
    (or in the ``__getattr__`` it reached). None for anything raised inside the backend's code:
    that is the backend's own behaviour, compared as an error. ``torch``, the backend's module,
    names its modules and tensors as torch's (``torch.nn.X``, ``Tensor.X``)."""
    if not _raised_at_harness(exc):
        return None
    text = str(exc)
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return _torch_name(exc.name, torch)
    if isinstance(exc, AttributeError):
        found = _NO_ATTRIBUTE.match(text)
        name = getattr(exc, "name", None) or (found.group(2) if found else None)
        if name is None:
            return None
        owner = getattr(exc, "obj", None)
        if owner is None and found is None:
            return None
        owner_name = _owner_name(owner, torch) if owner is not None else _torch_name(found.group(1), torch)
        return None if owner_name == "NoneType" else f"{owner_name}.{name}"
    if isinstance(exc, TypeError):
        found = _NO_KEYWORD.match(text)
        if found is not None:
            function = found.group(1).rsplit("<locals>.", 1)[-1]  # a nested function by its own name
            function = function if "." in function else f"torch.{function}"  # a module's function
            return f"{_torch_name(function, torch)}({found.group(2)}=)"
    return None


def _raised_at_harness(exc: BaseException) -> bool:
    frames = [frame for frame, _ in traceback.walk_tb(exc.__traceback__)]
    if not frames:
        return False
    if _in_harness(frames[-1]):
        return True
    return frames[-1].f_code.co_name in _LOOKUPS and len(frames) > 1 and _in_harness(frames[-2])


def _in_harness(frame: Any) -> bool:
    return Path(frame.f_code.co_filename).resolve().parent == _HARNESS


def _owner_name(owner: Any, torch: Any) -> str:
    """How torch's API names the owner of a missing attribute: ``torch.nn`` for the backend's
    modules, ``Tensor`` for its tensors, ``Node`` for autograd nodes, else the type's name."""
    if isinstance(owner, types.ModuleType):
        return _torch_name(owner.__name__, torch)
    tensor_type = getattr(torch, "Tensor", None)
    if isinstance(tensor_type, type) and isinstance(owner, tensor_type):
        return "Tensor"
    cls = owner if isinstance(owner, type) else type(owner)
    return "Node" if _NODE.search(cls.__name__) else cls.__name__


def _torch_name(name: str, torch: Any) -> str:
    """``name`` with the backend module's name as ``torch`` (``jtorch.nn`` -> ``torch.nn``)."""
    own = getattr(torch, "__name__", None)
    if own and own != "torch" and (name == own or name.startswith(own + ".")):
        return "torch" + name[len(own):]
    return name


def _number(value: Any) -> Any:
    """A tensor element as JSON: bools and ints as they are, floats with non-finite as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def values(tensor: Any) -> list:
    """A tensor's elements as a flat list, the way printing shows them: ``tolist()``, else through a
    copy, because torch's ``tolist`` refuses tensors without storage (the zero tensors some
    double-backward formulas return), which still print as zeros."""
    try:
        nested = tensor.tolist()
    except Exception:  # noqa: BLE001 - the copy below is the second way; its error is the one kept
        return tensor.detach().reshape(-1).clone().tolist()
    return _flatten(nested)


def _flatten(nested: Any) -> list:
    if not isinstance(nested, list):
        return [nested]
    flat: list = []
    for item in nested:
        flat.extend(_flatten(item))
    return flat


def observed(read: Callable[[], Any], torch: Any = None) -> Any:
    """``read()``, or ``{"unsupported": NAME}`` where it failed because the backend lacks the
    name read (``lacked``); any other failure is raised (the step records it as an error)."""
    try:
        return read()
    except Exception as exc:
        name = lacked(exc, torch)
        if name is None:
            raise
        return {"unsupported": name}


def marker(value: Any) -> str | None:
    """Why a part of an observation could not be read (see ``observed``), None for a value."""
    if isinstance(value, dict) and list(value) == ["unsupported"]:
        return f"the backend lacks {value['unsupported']}"
    return None


def describe(tensor: Any, torch: Any = None) -> dict | None:
    """The observable state of a tensor (None stays None), through the Tensor API only, each part
    read on its own (``observed``)."""
    if tensor is None:
        return None
    return {
        "dtype": observed(lambda: str(tensor.dtype).removeprefix("torch."), torch),
        "shape": observed(lambda: list(tensor.shape), torch),
        "data": observed(lambda: [_number(v) for v in values(tensor)], torch),
        "is_leaf": observed(lambda: bool(tensor.is_leaf), torch),
        "requires_grad": observed(lambda: bool(tensor.requires_grad), torch),
        "grad_fn": observed(lambda: _node_name(tensor.grad_fn), torch),
    }


def plain_text(value: Any) -> str:
    """A result that is no tensor as it prints: Python values by ``repr``, torch's objects (a
    dtype, a memory format) by ``str``."""
    return repr(value) if value is None or isinstance(value, (bool, int, float, str)) else str(value)


def _node_name(node: Any) -> str | None:
    return None if node is None else type(node).__name__


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


def describe_all(values: Any, torch: Any = None) -> list[dict | None]:
    """Descriptions of a tensor or of a tuple/list of tensors (non-tensors described as None)."""
    if not isinstance(values, (tuple, list)):
        values = [values]
    return [describe(v, torch) if _is_tensor(v, torch) else None for v in values]


def _is_tensor(value: Any, torch: Any) -> bool:
    tensor_type = getattr(torch, "Tensor", None)
    if isinstance(tensor_type, type):
        return isinstance(value, tensor_type)
    return hasattr(value, "shape") and hasattr(value, "dtype")


def tensor_text(desc: dict | None) -> str:
    """One-line human form of a tensor description (the rendered script prints the same)."""
    if desc is None:
        return "None"
    if marker(desc):
        return f"<{marker(desc)}>"
    shown = {key: f"<{marker(value)}>" if marker(value) else value for key, value in desc.items()}
    data = shown["data"]
    if isinstance(data, list):
        data = "[" + ", ".join(v if isinstance(v, str) else repr(v) for v in data) + "]"
    return (
        f"tensor(dtype={shown['dtype']}, shape={shown['shape']}, data={data}, is_leaf={shown['is_leaf']}, "
        f"requires_grad={shown['requires_grad']}, grad_fn={shown['grad_fn']})"
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
    if kind == "hook" and "arguments" in event:  # a state-dict hook: what it received is no tensor
        return show_text(event["hook"], event["on"], event["target"], event["arguments"])
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
    if kind == "crash":
        return f"step {step}: {event['reason']}"
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
