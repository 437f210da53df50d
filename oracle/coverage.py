"""Argument coverage: which (API, argument, value class) items the generated programs exercised.

A planted fault is only caught when some program reaches it: a loss argument no generator sets, an
edge value no generator feeds to an op whose gradient masks there, pass unnoticed. So each rule
declares its *targets*, the items its programs must exercise, and a run measures which they did.

An item is an API (an op of the op table as the program names it, ``nn.CrossEntropyLoss``,
``optim.Adam``, ``Tensor.backward``, ``autograd.grad``, ...), one of its arguments and a class of
values, written ``api(argument): class``, e.g. ``nn.CrossEntropyLoss(ignore_index): all targets
ignored``, ``relu(input): -0.0``, ``optim.Adam(amsgrad): True``.

Targets are ``Clause``s. Most are derived from torch's own signatures (``keywords``): of an nn
module's or optimiser's constructor and of a Python API, the parameters ``inspect`` finds; of an
op, the arguments of its ATen schemas (the overloads the dispatcher runs on the CPU, without the
``out=`` ones). Their classes follow from types and defaults: a bool True and False; an optional
argument None and given (an optional bool None, True and False); an enumeration (``Literal``
annotations, ``ENUMS``) each value; a number, tuple or list with a default, the default and
another; an argument only some overloads take, absent and given; one that is a number in some
overloads and a tensor in others, both. ``EXCLUDED`` lists the arguments no target asks for, with
why. What no signature says, the classes that need context (an ignored target, all targets
ignored) and the edge values of ops whose gradient masks or branches there, is declared next to
the rules, in their conformance modules (``COVERAGE = {"RULE-ID": Targets(...)}``), with
``clause``, ``edges``, ``somewhere``, ``ties`` and ``in_a_lane``.

A program's calls (``calls``) are read from its steps, with the values each op and module call
received on the reference side (``Seen``: the reference run records them when asked, see
``oracle.interpreter``; the backend's trace is untouched), so coverage is the same whatever the
backend; a call the reference refused (it raised) exercises nothing. The pytest plugin hands each
conformance test's log its rule's targets; ``oracle.differential.check`` adds what each program
exercised; results.json and the report list per rule the targets, how many were covered and the
uncovered ones.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any, NamedTuple

import numpy as np

from oracle import state_dict_hooks
from oracle.program import (
    CHILDREN,
    CUSTOM_MODULES,
    FUNCTIONAL_APIS,
    FUNCTIONAL_KWARGS,
    SCHEDULERS,
    AutogradFunctional,
    Backward,
    CallModule,
    DecoratedOp,
    DType,
    GlobalModuleHook,
    Grad,
    Gradcheck,
    GradMode,
    LoadStateDict,
    MemoryFormat,
    Module,
    ModuleHook,
    ModuleNode,
    ModuleRequiresGrad,
    ModuleZeroGrad,
    MultiGradHook,
    Op,
    Optimizer,
    OptimizerZeroGrad,
    Program,
    Ref,
    RequiresGrad,
    SavedHooks,
    Scheduler,
    StateDict,
    StateDictHook,
    Step,
    module_nodes,
)

ABSENT = inspect.Parameter.empty  # an argument a call does not pass, or a parameter without default


class Seen(NamedTuple):
    """A tensor argument as the reference run received it: its values (None where unknown) and
    whether it required grad."""

    values: np.ndarray | None = None
    requires_grad: bool = False


@dataclass
class Call:
    """One call a program made: the API, and its arguments bound to their names (a literal of the
    program, a ``Seen`` tensor, a list of them); an argument not passed is absent."""

    step: int
    api: str
    arguments: dict[str, Any]

    def tensor(self, name: str) -> np.ndarray | None:
        """The values of tensor argument ``name`` (None if it is not a tensor with known values)."""
        value = self.arguments.get(name)
        return value.values if isinstance(value, Seen) else None


def key(api: str, argument: str, value: str) -> str:
    return f"{api}({argument}): {value}"


@dataclass(frozen=True)
class Clause:
    """Value classes of one argument of one API: ``classify`` says which of ``classes`` a call
    exercised."""

    api: str
    argument: str
    classes: tuple[str, ...]
    classify: Callable[[Call], Iterable[str]] = field(compare=False)

    def items(self) -> list[str]:
        return [key(self.api, self.argument, value) for value in self.classes]


class Targets:
    """The items a rule's programs must exercise: its clauses, flattened, but for the items
    ``excluded`` (item -> why no generated program can exercise it; reported with the rule)."""

    def __init__(self, *clauses: Clause | Iterable[Clause], excluded: dict[str, str] | None = None) -> None:
        self.clauses: list[Clause] = []
        for entry in clauses:
            self.clauses += [entry] if isinstance(entry, Clause) else list(entry)
        self.excluded = dict(excluded or {})
        unknown = set(self.excluded) - {item for clause in self.clauses for item in clause.items()}
        if unknown:
            raise ValueError(f"excluded items that are no targets: {sorted(unknown)}")
        self.by_api: dict[str, list[Clause]] = {}
        for clause in self.clauses:
            self.by_api.setdefault(clause.api, []).append(clause)

    def items(self) -> list[str]:
        items = (item for clause in self.clauses for item in clause.items() if item not in self.excluded)
        return list(dict.fromkeys(items))

    def exercised(self, program: Program, seen: dict | None = None, refused: Iterable[int] = ()) -> set[str]:
        """The target items ``program`` exercised (``seen``: what the reference run recorded); a
        call the reference refused (its step in ``refused``: it raised) exercises nothing."""
        found: set[str] = set()
        skipped = set(refused)
        for call in calls(program, seen):
            if call.step in skipped:
                continue
            for clause in self.by_api.get(call.api, ()):
                try:
                    values = set(clause.classify(call))
                except Exception:  # noqa: BLE001 - a call a class does not apply to exercises none of it
                    continue
                found.update(key(clause.api, clause.argument, v) for v in values if v in clause.classes)
        return found


# --------------------------------------------------------------------------- a program's calls

# the registration method of each module hook kind (``oracle.program.MODULE_HOOK_KINDS``)
HOOK_APIS = {
    "forward_pre": "Module.register_forward_pre_hook",
    "forward": "Module.register_forward_hook",
    "full_backward_pre": "Module.register_full_backward_pre_hook",
    "full_backward": "Module.register_full_backward_hook",
    "backward": "Module.register_backward_hook",
}
GLOBAL_HOOK_API = "nn.modules.module.register_module_{}_hook"


def calls(program: Program, seen: dict | None = None) -> Iterator[Call]:
    """The calls of ``program``'s steps that take arguments, bound to their names; a tensor
    argument of an op or module call is ``Seen`` (its values where ``seen``, the reference run's
    record ``{step: (args, kwargs)}``, has them)."""
    seen = seen or {}
    nodes: dict[str, ModuleNode] = {}
    for index, step in enumerate(program.steps):
        yield from _step_calls(index, step, seen.get(index), nodes)


# ops of the op table that are an ATen op of another name (their targets name the ATen op)
ATEN_SPELLED = {"nn.functional.one_hot": "one_hot"}


def _step_calls(index: int, step: Step, recorded: Any, nodes: dict[str, ModuleNode]) -> Iterator[Call]:
    if isinstance(step, Op):
        args, kwargs = _with_seen(step.args, step.kwargs, recorded)
        op = ATEN_SPELLED.get(step.op, step.op)
        yield Call(index, op, bind_op(op, args, kwargs))
    elif isinstance(step, Module):  # each layer of a tree, constructed
        for node in module_nodes(step):
            nodes[node.alias] = node
            if _is_layer(node):
                yield Call(index, f"nn.{node.cls}", bind_module(node))
    elif isinstance(step, CallModule) and step.module in nodes and _is_layer(nodes[step.module]):
        node = nodes[step.module]  # a layer called: its constructor's arguments and its inputs
        inputs = [Ref(name) for name in step.inputs]
        args, kwargs = _with_seen(inputs, {k: Ref(v) for k, v in step.kwargs.items()}, recorded)
        bound = dict(zip(_module_parameters(node.cls, "forward"), args, strict=False))
        yield Call(index, f"nn.{node.cls}", {**bind_module(node), **bound, **kwargs})
    elif isinstance(step, Optimizer):
        yield Call(index, f"optim.{step.cls}", dict(step.kwargs))
    elif isinstance(step, Scheduler):
        composite = _given(schedulers=step.schedulers or None,
                           optimizer=step.optimizer if step.cls == "ChainedScheduler" else None)
        yield Call(index, f"lr_scheduler.{step.cls}", {**step.kwargs, **composite})
    elif isinstance(step, Backward):
        yield Call(index, "Tensor.backward", _given(gradient=step.gradient, retain_graph=step.retain_graph,
                                                      create_graph=step.create_graph, inputs=step.inputs))
    elif isinstance(step, Grad):
        yield Call(index, "autograd.grad", _given(
            grad_outputs=step.grad_outputs, retain_graph=step.retain_graph, create_graph=step.create_graph,
            allow_unused=step.allow_unused, materialize_grads=step.materialize_grads,
            only_inputs=step.only_inputs, is_grads_batched=step.is_grads_batched))
    elif isinstance(step, ModuleHook):
        yield Call(index, HOOK_APIS[step.on], step.flags())
    elif isinstance(step, GlobalModuleHook):
        yield Call(index, GLOBAL_HOOK_API.format(step.on), step.flags())
    elif isinstance(step, (ModuleZeroGrad, OptimizerZeroGrad)):
        owner = "Module" if isinstance(step, ModuleZeroGrad) else "Optimizer"
        yield Call(index, f"{owner}.zero_grad", {"set_to_none": step.set_to_none})
    elif isinstance(step, (RequiresGrad, ModuleRequiresGrad)):
        owner = "Tensor" if isinstance(step, RequiresGrad) else "Module"
        yield Call(index, f"{owner}.requires_grad_", {"requires_grad": step.requires_grad})
    elif isinstance(step, (GradMode, DecoratedOp)):
        yield Call(index, f"torch.{step.mode}", _given(mode=step.flag))
    elif isinstance(step, StateDict):
        yield Call(index, "Module.state_dict", {"prefix": step.prefix, "keep_vars": step.keep_vars})
    elif isinstance(step, LoadStateDict):
        yield Call(index, "Module.load_state_dict", {"strict": step.strict, "assign": step.assign})
    elif isinstance(step, StateDictHook):  # what the hook does, as if an argument of its registration
        flags = {"with_module": step.with_module} if step.on == "_load_state_dict_pre" else {}
        yield Call(index, f"Module.{state_dict_hooks.KINDS[step.on][0]}", {"action": step.action, **flags})
    elif isinstance(step, AutogradFunctional):  # its flags, False where not passed
        flags = FUNCTIONAL_KWARGS if step.api in ("jacobian", "hessian") else FUNCTIONAL_KWARGS[:2]
        yield Call(index, f"autograd.functional.{step.api}", {k: step.kwargs.get(k, False) for k in flags})
    elif isinstance(step, SavedHooks):  # what the pack/unpack pair does, as if an argument of the context
        packing = {"packing": step.packing} if step.context == "saved_tensors_hooks" else {}
        yield Call(index, f"autograd.graph.{step.context}", packing)
    elif isinstance(step, MultiGradHook):
        yield Call(index, "autograd.graph.register_multi_grad_hook", _given(mode=step.mode))
    elif isinstance(step, Gradcheck):
        yield Call(index, f"autograd.{step.api}", dict(step.kwargs))


def _is_layer(node: ModuleNode) -> bool:
    """A module of torch.nn (not a container or a custom module of the program model)."""
    return node.cls not in CHILDREN and node.cls not in CUSTOM_MODULES


def _given(**arguments: Any) -> dict[str, Any]:
    """The arguments a step passes (the program model's None: not passed)."""
    return {name: value for name, value in arguments.items() if value is not None}


def _with_seen(args: list, kwargs: dict, recorded: Any) -> tuple[list, dict]:
    """The arguments with each tensor replaced by what the reference run saw (``Seen()`` where it
    recorded nothing)."""
    seen_args, seen_kwargs = recorded if recorded is not None else ([], {})

    def merge(value: Any, seen: Any) -> Any:
        if isinstance(value, Ref):
            return seen if isinstance(seen, Seen) else Seen()
        if isinstance(value, list) and any(isinstance(v, Ref) for v in value):
            seen = seen if isinstance(seen, list) and len(seen) == len(value) else [None] * len(value)
            return [merge(v, s) for v, s in zip(value, seen, strict=True)]
        return value

    padded = [*seen_args, *[None] * (len(args) - len(seen_args))]
    return ([merge(a, s) for a, s in zip(args, padded, strict=False)],
            {k: merge(v, seen_kwargs.get(k)) for k, v in kwargs.items()})


# --------------------------------------------------------------------------- torch's signatures


def _torch() -> Any:
    import torch  # only where targets are derived and programs measured: with the reference

    return torch


class Param(NamedTuple):
    """One argument of an API as its signatures give it: the types it takes (ATen's type strings,
    or the annotation), its default (``ABSENT`` if required)."""

    name: str
    types: tuple[str, ...]
    default: Any = ABSENT
    optional: bool = False  # some overloads lack it
    kwarg_only: bool = False


# the ATen op a program's operator method calls
DUNDERS = {
    "__add__": "add", "__radd__": "add", "__sub__": "sub", "__rsub__": "rsub", "__mul__": "mul",
    "__rmul__": "mul", "__truediv__": "div", "__rtruediv__": "div", "__pow__": "pow", "__rpow__": "pow",
    "__matmul__": "matmul", "__neg__": "neg", "__mod__": "remainder", "__rmod__": "remainder",
    "__imod__": "remainder_",
}
_SCALAR_TYPES = ("int", "float", "number", "SymInt", "bool")
# overloads that are other functions under an op's name
SKIPPED_OVERLOADS = {"where": ("",)}  # torch.where(condition): nonzero's spelling
# dispatch keys whose kernels the reference (torch's CPU build) runs an overload with
_CPU_KEYS = ("CPU", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
             "CompositeExplicitAutogradNonFunctional")


def _writes(argument: Any) -> bool:
    return argument.alias_info is not None and argument.alias_info.is_write


def _runs_on_cpu(name: str, overload: str) -> bool:
    """Whether the dispatcher has the overload, with a kernel torch's CPU build runs it with
    (TorchScript's own overloads, ``copy_.int``, are not the dispatcher's)."""
    full = f"aten::{name}" + (f".{overload}" if overload else "")
    has = _torch()._C._dispatch_has_kernel_for_dispatch_key
    try:
        return any(has(full, key) for key in _CPU_KEYS)
    except RuntimeError:
        return False


def _callable(op: str, name: str, schema: Any) -> bool:
    """Whether a program can call ``op`` with this overload of ATen's ``name``."""
    arguments = list(schema.arguments)
    if not arguments or any(_writes(a) and a.name != "self" or "Dimname" in str(a.type) for a in arguments):
        return False  # out=, values=/indices= variants; named dims
    if not any("Tensor" in str(a.type) for a in arguments):
        return False  # an overload of Python numbers
    if schema.overload_name in SKIPPED_OVERLOADS.get(name, ()):
        return False  # another function under the op's name
    if str(arguments[0].type).startswith("List") and _writes(arguments[0]):
        return False  # list.sort
    if op.startswith("__r") and "Tensor" in str(arguments[1].type):
        return False  # a reflected operator is called with a number (a tensor calls its own)
    return _runs_on_cpu(name, schema.overload_name)


def _param(argument: Any) -> Param:
    """An ATen argument (``self`` named ``input``); an optional one defaults to None."""
    type_ = str(argument.type)
    default = argument.default_value
    if default is None and not type_.startswith("Optional"):
        default = ABSENT
    return Param("input" if argument.name == "self" else argument.name, (type_,), default,
                 kwarg_only=argument.kwarg_only)


@cache
def _schemas(op: str) -> tuple[tuple[Param, ...], ...]:
    """The parameters of each overload of ``op``'s ATen schemas a program can call."""
    name = DUNDERS.get(op, op)
    try:
        schemas = _torch()._C._jit_get_schemas_for_operator(f"aten::{name}")
    except RuntimeError:
        return ()
    callable_ = [schema for schema in schemas if _callable(op, name, schema)]
    return tuple(tuple(_param(a) for a in schema.arguments) for schema in callable_)


def bind_op(op: str, args: list, kwargs: dict) -> dict[str, Any]:
    """``op``'s arguments by name, bound as torch's overload resolution would (the first
    overload whose parameters take them); positional ones unnamed (``#0``) where none does."""
    for strict in (True, False):
        for params in _schemas(op):
            bound = _bind(params, args, kwargs, strict)
            if bound is not None:
                return bound
    return {**{f"#{i}": a for i, a in enumerate(args)}, **kwargs}


def _bind(params: tuple[Param, ...], args: list, kwargs: dict, strict: bool) -> dict | None:
    positional = [p for p in params if not p.kwarg_only]
    if len(args) > len(positional) or not set(kwargs) <= {p.name for p in params}:
        return None
    bound = dict(zip([p.name for p in positional], args, strict=False)) | kwargs
    for p in params:
        if p.name in bound:
            if strict and not _fits(bound[p.name], p.types[0]):
                return None
        elif p.default is ABSENT:
            return None
    return bound


def _fits(value: Any, type_: str) -> bool:
    """Whether a program value can be an argument of ATen type ``type_``."""
    if value is None:
        return type_.startswith("Optional")
    if isinstance(value, Seen):
        return "Tensor" in type_ and "List" not in type_
    if isinstance(value, list):
        return "List" in type_ and all(_fits(v, type_.split("[", 2)[-1].rstrip("]")) for v in value)
    if isinstance(value, DType):
        return "int" in type_  # a ScalarType
    if isinstance(value, MemoryFormat):
        return "MemoryFormat" in type_
    if isinstance(value, str):
        return "str" in type_
    if isinstance(value, bool):
        return "bool" in type_ or "number" in type_
    if isinstance(value, (int, float)):
        if "List" in type_:  # an int for int[1]
            return isinstance(value, int) and "int" in type_
        integral = "int" in type_ and "number" not in type_
        return any(t in type_ for t in _SCALAR_TYPES) and not (isinstance(value, float) and integral)
    return False


def _parameters(function: Callable) -> list[inspect.Parameter]:
    """``function``'s parameters, without ``self`` and ``*args``/``**kwargs``."""
    return [p for p in inspect.signature(function).parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def bind_module(node: ModuleNode) -> dict[str, Any]:
    """A module node's constructor arguments by name."""
    return {**dict(zip(_module_parameters(node.cls, "__init__"), node.args, strict=False)), **node.kwargs}


@cache
def _module_parameters(cls: str, method: str) -> tuple[str, ...]:
    return tuple(p.name for p in _parameters(getattr(getattr(_torch().nn, cls), method)))


# --------------------------------------------------------------------------- derived keyword targets

# enumerations no annotation gives: the values a string argument takes
ENUMS: dict[str, tuple[str, ...]] = {
    "reduction": ("mean", "sum", "none"),
    "approximate": ("none", "tanh"),
    "rounding_mode": ("trunc", "floor"),
    "reduce": ("add", "multiply"),
    "padding": ("valid", "same"),
}
# arguments no target asks for, by API prefix ("" for every API), and why
EXCLUDED: dict[tuple[str, str], str] = {
    ("", "out"): "out= tensors are not part of the program model",
    ("", "memory_format"): "memory formats other than strided-contiguous are outside impl",
    ("", "non_blocking"): "a copy between tensors on one device blocks either way",
    ("einsum", "path"): "torch.einsum takes no path (a TypeError): torch.functional fills it from opt_einsum",
    ("index_put", "indices"): "a None among them (the schema's optional) is refused by torch's parser",
    ("nn.", "device"): "a factory keyword: the program places tensors with --device",
    ("nn.", "dtype"): "a factory keyword: the program gives parameters their values and dtype",
    ("nn.", "size_average"): "deprecated by torch for reduction",
    ("nn.", "reduce"): "deprecated by torch for reduction",
    ("nn.Hardtanh", "min_value"): "a deprecated alias of min_val",
    ("nn.Hardtanh", "max_value"): "a deprecated alias of max_val",
    ("nn.Embedding", "_weight"): "private",
    ("nn.Embedding", "_freeze"): "private",
    ("nn.Embedding", "sparse"): "sparse gradients: a layout outside impl",
    ("gather", "sparse_grad"): "sparse gradients: a layout outside impl",
    ("optim.", "foreach"): "chooses torch's kernels, not the update",
    ("optim.", "fused"): "chooses torch's kernels, not the update",
    ("optim.", "capturable"): "for CUDA graph capture, not the update",
    ("optim.", "differentiable"): "for differentiating through the update, outside the optimiser rules",
    ("lr_scheduler.", "last_epoch"): "resumes from a checkpoint: tests/impl/test_impl_optim_schedulers.py",
    ("lr_scheduler.CyclicLR", "scale_fn"): "a callable: tests/impl/test_impl_optim_schedulers.py",
}


def _module_method(name: str) -> Callable[[Any], Callable]:
    return lambda torch: getattr(torch.nn.Module, name)


def _functional(api: str) -> Callable[[Any], Callable]:
    return lambda torch: getattr(torch.autograd.functional, api)


def _scheduler(cls: str) -> Callable[[Any], Callable]:
    return lambda torch: getattr(torch.optim.lr_scheduler, cls).__init__


def _global_hook(on: str) -> Callable[[Any], Callable]:
    return lambda torch: getattr(torch.nn.modules.module, f"register_module_{on}_hook")


# the Python functions whose signatures give the keyword targets of a Python-level API
PYTHON_APIS: dict[str, Callable[[Any], Callable]] = {
    "Tensor.backward": lambda torch: torch.Tensor.backward,
    "autograd.grad": lambda torch: torch.autograd.grad,
    **{f"autograd.functional.{api}": _functional(api) for api in FUNCTIONAL_APIS},
    "Optimizer.zero_grad": lambda torch: torch.optim.Optimizer.zero_grad,
    **{f"lr_scheduler.{cls}": _scheduler(cls) for cls in SCHEDULERS},
    "torch.set_grad_enabled": lambda torch: torch.set_grad_enabled.__init__,
    "torch.inference_mode": lambda torch: torch.inference_mode.__init__,
    **{f"Module.{name}": _module_method(name) for name in (
        "zero_grad", "requires_grad_", "state_dict", "load_state_dict",
        "_register_load_state_dict_pre_hook")},
    **{api: _module_method(api.split(".")[1]) for api in HOOK_APIS.values()},
    **{GLOBAL_HOOK_API.format(on): _global_hook(on)
       for on in ("forward_pre", "forward", "full_backward_pre", "full_backward")},
}
# annotations a signature lacks
ANNOTATIONS = {("Tensor.backward", "retain_graph"): "bool | None"}


def excluded(api: str, argument: str) -> str | None:
    """Why ``api``'s ``argument`` is no target, or None."""
    return next((why for (prefix, name), why in EXCLUDED.items()
                 if name == argument and api.startswith(prefix)), None)


def keywords(*apis: str, only: Iterable[str] | None = None) -> list[Clause]:
    """The derived keyword clauses of ``apis`` (ops of the op table, ``nn.<Module>``,
    ``optim.<Optimizer>`` and the Python APIs of ``PYTHON_APIS``; ``Tensor.<method>`` otherwise
    from its ATen schema), of all their arguments or ``only`` these."""
    wanted = None if only is None else set(only)
    clauses = []
    for api in apis:
        for param in api_parameters(api):
            if (wanted is None or param.name in wanted) and not excluded(api, param.name):
                classes = value_classes(param)
                if classes:
                    clauses.append(Clause(api, param.name, classes, _classifier(param, classes)))
    return clauses


@cache
def api_parameters(api: str) -> tuple[Param, ...]:
    """The arguments of ``api`` after the one it acts on (a tensor, the parameters, the hook)."""
    if api in PYTHON_APIS or api.startswith(("nn.", "optim.")):
        return _python_parameters(api)
    merged: dict[str, Param] = {}
    overloads = _schemas(api.removeprefix("Tensor."))
    for params in overloads:
        # an operator method takes its other operand alone (Tensor.__add__ has no alpha)
        for p in params[1:2] if api.startswith("__") else params[1:]:
            known = merged.get(p.name)
            types = p.types if known is None else tuple(dict.fromkeys(known.types + p.types))
            default = p.default if known is None or known.default is ABSENT else known.default
            merged[p.name] = Param(p.name, types, default)
    for name, p in merged.items():  # an argument some overloads lack is optional there
        if any(all(q.name != name for q in params) for params in overloads):
            merged[name] = p._replace(optional=True)
    return tuple(merged.values())


def _python_parameters(api: str) -> tuple[Param, ...]:
    torch = _torch()
    if api in PYTHON_APIS:
        function = PYTHON_APIS[api](torch)
    else:
        owner, name = api.split(".", 1)
        function = getattr(getattr(torch, owner), name).__init__
    # the parameters, the hook, the optimizer
    skip = 1 if api.startswith(("optim.", "Module.register", "nn.modules", "lr_scheduler.")) else 0
    return tuple(Param(p.name, (ANNOTATIONS.get((api, p.name)) or _annotation(p.annotation),), p.default)
                 for p in _parameters(function)[skip:])


def _annotation(annotation: Any) -> str:
    if annotation is inspect.Parameter.empty:
        return ""
    if isinstance(annotation, type):
        return annotation.__name__
    return annotation if isinstance(annotation, str) else str(annotation)


def value_classes(param: Param) -> tuple[str, ...]:
    """The value classes of an argument, by its types and default (see module doc)."""
    types, default = " ".join(param.types), param.default
    enum = _literal_values(types) or ENUMS.get(param.name, ())
    kinds = _kinds(param.types)
    classes: list[str] = []
    if param.optional and default is ABSENT:
        classes.append("absent")
    if default is None or "Optional" in types or "None" in types:
        classes.append("None")
    if ("bool" in types or isinstance(default, bool)) and not kinds:  # (a required bool too)
        classes += ["True", "False"]
    else:
        classes += enum
        if default is not ABSENT and default is not None and not isinstance(default, str):
            classes += ["default", "other"]
    if kinds:
        classes += [f"a {kind}" for kind in kinds]
    elif classes and classes[-1] in ("absent", "None"):
        classes.append("given")
    return tuple(dict.fromkeys(classes))


def _literal_values(types: str) -> tuple[str, ...]:
    if "Literal[" not in types:
        return ()
    inside = types.split("Literal[", 1)[1].split("]", 1)[0]
    return tuple(v.strip().strip("'\"") for v in inside.split(","))


def _kinds(types: tuple[str, ...]) -> tuple[str, ...]:
    """What an argument is across its overloads: a number and a tensor (ATen types only; an
    annotation's unions are of spellings, not of behaviours)."""
    if any(("[" in t or "|" in t or "Union" in t) and "Optional" not in t for t in types):
        return ()
    kinds = {"tensor" if "Tensor" in t else "number" if any(s in t for s in _SCALAR_TYPES) else t
             for t in types}
    return ("number", "tensor") if kinds == {"tensor", "number"} else ()


def _classifier(param: Param, classes: tuple[str, ...]) -> Callable[[Call], Iterable[str]]:
    """Which of ``classes`` a call's value of ``param`` is in (absent: the default's)."""
    def classify(call: Call) -> Iterator[str]:
        value = call.arguments.get(param.name, ABSENT)
        if value is ABSENT and (param.default is ABSENT or "absent" in classes):
            yield "absent"
            return
        value = param.default if value is ABSENT else value
        if value is None:
            yield "None"
            return
        yield "given"
        if isinstance(value, (Seen, Ref)):
            yield "a tensor"
            return  # (a tensor is not compared with a number default: histogram's bins)
        if isinstance(value, (int, float)):
            yield "a number"
        if isinstance(value, bool) and "True" in classes:
            yield str(value)
        elif isinstance(value, str) and value in classes:
            yield value
        elif param.default is not ABSENT and param.default is not None:
            yield "default" if _same(value, param.default) else "other"

    return classify


def _same(value: Any, default: Any) -> bool:
    """Whether a program's value is the default (a list as a tuple, a pair of it as the number:
    a Conv2d's stride (1, 1) as 1)."""
    if isinstance(value, (list, tuple)):
        if isinstance(default, (list, tuple)):
            return list(value) == list(default)
        return all(_same(v, default) for v in value)
    if isinstance(value, bool) or isinstance(default, bool):
        return value is default
    return value == default


# --------------------------------------------------------------------------- declared classes


def clause(
    apis: str | Iterable[str], argument: str, classes: dict[str, Callable[[Call], Any]]
) -> list[Clause]:
    """Classes of ``argument`` of ``apis`` that need context: each a test of a whole call."""
    def classify(call: Call) -> Iterator[str]:
        for name, test in classes.items():
            try:
                if test(call):
                    yield name
            except Exception:  # noqa: BLE001 - a call the test does not apply to (no such argument,
                continue  # shapes torch refuses): it does not exercise the class

    names = [apis] if isinstance(apis, str) else list(apis)
    return [Clause(api, argument, tuple(classes), classify) for api in names]


def passed(apis: str | Iterable[str], argument: str, values: Iterable[Any]) -> list[Clause]:
    """Classes of ``argument`` of ``apis`` that the calls pass or not: ``absent`` (not passed) and
    each of ``values`` (its repr), for arguments a step passes as given (no default filled in)."""
    classes: dict[str, Callable[[Call], Any]] = {"absent": lambda c: argument not in c.arguments}
    for value in values:
        classes[repr(value)] = lambda c, v=value: argument in c.arguments and c.arguments[argument] == v
    return clause(apis, argument, classes)


def differentiable(call: Call, *names: str, gradient: bool = True) -> list[np.ndarray]:
    """The floating values of the tensor arguments ``names`` of ``call``, if one of them requires
    grad (a gradient edge is only exercised where a gradient flows; not asked with ``gradient``
    False), else none."""
    values = [call.arguments.get(n) for n in names]
    if gradient and not any(isinstance(v, Seen) and v.requires_grad for v in values):
        return []
    return [v.values for v in values
            if isinstance(v, Seen) and v.values is not None and np.issubdtype(v.values.dtype, np.floating)]


def values_of(call: Call, name: str, default: Any = None) -> np.ndarray | None:
    """Argument ``name`` as an array: a tensor's values, a number, or ``default`` when absent."""
    value = call.arguments.get(name, default)
    if isinstance(value, Seen):
        return value.values
    return None if value is None or isinstance(value, (list, str)) else np.asarray(value)


def somewhere(
    predicate: Callable[[np.ndarray, Call], Any], argument: str = "input", gradient: bool = True
) -> Callable[[Call], bool]:
    """A test: ``predicate(values, call)`` (elementwise) holds somewhere in tensor ``argument``,
    where a gradient flows (anywhere, with ``gradient`` False)."""
    def test(call: Call) -> bool:
        values = differentiable(call, argument, gradient=gradient)
        return any(bool(np.any(predicate(x, call))) for x in values)

    return test


def _fraction(x: np.ndarray) -> np.ndarray:
    """``|x|``'s fractional part where ``x`` is finite, NaN elsewhere (no warning)."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(x), np.abs(x) % 1, np.nan)


# elementwise tests of edge values
EDGE_TESTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "0": lambda x: (x == 0) & ~np.signbit(x),
    "-0.0": lambda x: (x == 0) & np.signbit(x),
    "NaN": np.isnan,
    "inf": np.isposinf,
    "-inf": np.isneginf,
    "1": lambda x: x == 1,
    "-1": lambda x: x == -1,
    "negative": lambda x: x < 0,
    "a half-integer": lambda x: _fraction(x) == 0.5,
    "an integer": lambda x: (_fraction(x) == 0) & (x != 0),
}


def edges(apis: str | Iterable[str], argument: str, *names: str, gradient: bool = True) -> list[Clause]:
    """Edge values (of ``EDGE_TESTS``) of tensor ``argument`` where a gradient flows (anywhere,
    with ``gradient`` False: an op without a derivative)."""
    def test(name: str) -> Callable[[Call], bool]:
        return somewhere(lambda x, call: EDGE_TESTS[name](x), argument, gradient)

    return clause(apis, argument, {name: test(name) for name in names})


def ties(first: str, second: str) -> Callable[[Call], bool]:
    """A test: the two tensor arguments are equal somewhere (where a gradient flows)."""
    def test(call: Call) -> bool:
        if not differentiable(call, first, second):
            return False
        a, b = call.tensor(first), call.tensor(second)
        return a is not None and b is not None and bool(np.any(np.equal(*np.broadcast_arrays(a, b))))

    return test


def in_a_lane(test: Callable[[np.ndarray], Any], gradient: bool = True) -> Callable[[Call], bool]:
    """A test: ``test`` holds of a lane of the input (along its ``dim`` argument, or all of it),
    where a gradient flows (anywhere, with ``gradient`` False)."""
    def lanes(call: Call) -> list[np.ndarray]:
        (x,) = differentiable(call, "input", gradient=gradient) or (None,)
        if x is None or not x.size:
            return []
        dim = call.arguments.get("dim")
        if isinstance(dim, int) and x.ndim:
            return list(np.moveaxis(x, dim, -1).reshape(-1, x.shape[dim]))
        return [x.ravel()]

    return lambda call: any(bool(test(lane)) for lane in lanes(call))


def tied(lane: np.ndarray) -> bool:
    """Whether a lane holds a value twice (NaN aside; 0.0 and -0.0 are a tie)."""
    numbers = lane[~np.isnan(lane)]
    return len(np.unique(numbers)) < numbers.size
