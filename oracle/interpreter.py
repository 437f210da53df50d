"""The interpreter: run a Program on a Backend and record a Trace.

The backend's module is used as the torch namespace, so the same program runs on real PyTorch, on
``impl`` or on any torch-like module; this module never imports torch (``replay`` may run where
torch is not installed). An exception raised by a step is recorded and the program goes on, as a
user's ``try``/``except`` around each statement would; warnings are captured per step.

Two variants of a run give ``oracle.compare`` the reference's own rounding for its error-aware
judgement of low-precision values (see ``oracle.tolerance``):

- ``float64=True``: the floating dtypes widened. Leaves, dtype arguments and the default dtype
  (module parameters, tensors made without a dtype) that would be float32, float16 or bfloat16 are
  float64; leaves and parameters hold their values rounded to the dtype the program gives them,
  so the rerun computes on the same numbers.
- ``nudge=True``: the same dtypes, but every float32/float16/bfloat16 value of a leaf or parameter
  moved by one or two units in the last place, up or down as a fixed function of the value
  (equal values move alike, so ties among the inputs stay ties; zeros, infinities and NaN stay).

Asked with ``seen`` (a dict), a run also records what each op and module call received, for the
argument coverage (``oracle.coverage``): ``seen[step] = (args, kwargs)``, each tensor as
``Seen(values, requires_grad)`` (a numpy copy taken before the call), anything else None. Only
the reference is asked; recording reads values and changes nothing the trace observes.
"""

from __future__ import annotations

import copy
import functools
import gc
import hashlib
import json
import pickle
import re
import struct
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

import numpy

from oracle import state_dict_hooks
from oracle.coverage import Seen
from oracle.program import (
    CHILDREN,
    CUSTOM_MODULES,
    DEFAULT_SETTERS,
    OPS,
    Action,
    ApplyFunction,
    AssignAttr,
    Autocast,
    AutogradFunctional,
    Backward,
    CallGradFn,
    CallModule,
    DecoratedOp,
    DelAttr,
    Detach,
    DeviceMode,
    DType,
    DualLevel,
    ExitAutocast,
    ExitDevice,
    ExitMode,
    Function,
    GlobalModuleHook,
    Grad,
    Gradcheck,
    GradMode,
    Leaf,
    LoadStateDict,
    MakeDual,
    ManualSeed,
    MemoryFormat,
    Module,
    ModuleHook,
    ModuleMode,
    ModuleNode,
    ModuleRequiresGrad,
    ModuleZeroGrad,
    MultiGradHook,
    NumpyAdd,
    NumpyArray,
    Observe,
    ObserveArray,
    ObserveBackwardHooks,
    ObserveDefaults,
    ObserveFreed,
    ObserveGraph,
    ObserveLayout,
    ObserveModule,
    ObservePlain,
    ObserveRepr,
    ObserveSaved,
    ObserveScheduler,
    Op,
    Optimizer,
    OptimizerStep,
    OptimizerZeroGrad,
    Pickled,
    Program,
    Ref,
    RegisterHook,
    RemoveHook,
    RequiresGrad,
    RetainGrad,
    SavedHooks,
    Scheduler,
    SchedulerStep,
    StateDict,
    StateDictHook,
    Step,
    UnpackDual,
    ZeroGrad,
    module_nodes,
)
from oracle.tolerance import LOW_PRECISION
from oracle.trace import (
    Trace,
    _is_tensor,
    _number,
    describe,
    describe_all,
    describe_graph,
    lacked,
    normalise,
    observed,
    plain_text,
    warned_once_per_process,
)

if TYPE_CHECKING:
    from oracle.backends import InProcess


def plain(value: Any) -> Any:
    """``value`` as JSON holds it (what JSON cannot hold, as its repr)."""
    return json.loads(json.dumps(value, default=repr))


def lr_lambda(body: str) -> Callable[[int], float]:
    """LambdaLR's ``lr_lambda`` of a program: ``lambda epoch: <body>`` (``body`` one of the
    program model's ``LR_LAMBDAS``, checked when the step was made)."""
    return eval(f"lambda epoch: {body}")  # noqa: S307 - a fixed expression of LR_LAMBDAS


def hook_function_name(hook: str) -> str:
    """The Python name of a hook's function (torch quotes it in some error messages)."""
    return f"hook_{hook}"


def apply_action(torch: Any, action: Action, value: Any) -> Any:
    """What a hook returns for ``value`` (a tensor, or a tuple of tensors/None) under ``action``."""
    if action.kind == "log":
        return None
    if action.kind == "wrong_count":
        return (*value, None) if isinstance(value, tuple) else (value, None)
    if isinstance(value, tuple):
        return tuple(None if v is None else _act(torch, action, v) for v in value)
    return _act(torch, action, value)


def _act(torch: Any, action: Action, grad: Any) -> Any:
    if action.kind == "scale":
        return grad * action.value
    if action.kind == "replace":
        return torch.full_like(grad, action.value)
    if action.kind == "wrong_shape":
        return torch.zeros(grad.numel() + 1, dtype=grad.dtype, device=grad.device)
    if action.kind == "wrong_dtype":
        return grad.to(torch.float32 if grad.dtype == torch.float64 else torch.float64)
    raise ValueError(f"unknown hook action {action.kind!r}")


def post_accumulate_action(torch: Any, action: Action, tensor: Any) -> Any:
    """A post-accumulate-grad hook may not return a tensor: ``scale``/``replace`` edit ``.grad`` in
    place; ``wrong_shape``/``wrong_dtype`` return a tensor, which torch rejects."""
    if action.kind == "scale":
        tensor.grad.mul_(action.value)
        return None
    if action.kind == "replace":
        tensor.grad.fill_(action.value)
        return None
    return apply_action(torch, action, tensor.grad)


def needs_input_grad_text(ctx: Any) -> str:
    """How a custom Function's backward logs ``ctx.needs_input_grad`` (as the target of its call)."""
    return f"needs_input_grad={tuple(bool(f) for f in ctx.needs_input_grad)}"


def saved_text(value: Any, torch: Any) -> Any:
    """A saved value as the trace keeps it: a tensor described, its values to 6 significant
    digits (what was saved, not how an op rounds), anything else as JSON holds it."""
    if not _is_tensor(value, torch):
        return plain(value)
    described = describe(value, torch)
    data = described["data"]
    if isinstance(data, list):
        described["data"] = [float(f"{v:.6g}") if isinstance(v, float) else v for v in data]
    return described


def saved_hook_pair(torch: Any, s: SavedHooks, log: Callable[..., None]) -> tuple[Callable, Callable]:
    """The pack and unpack hooks of a saved_hooks step: each logs what it received (a hook event
    ``<name>`` on ``pack``/``unpack``), then does the step's ``packing``."""

    def pack(t: Any) -> Any:
        log(s.name, "pack", "", tensor=t)
        if s.packing == "in_place":
            t.mul_(1)
        return t.detach() * 2 if s.packing == "double" else t.detach()

    def unpack(packed: Any) -> Any:
        log(s.name, "unpack", "", tensor=packed)
        return 1.0 if s.packing == "number" else packed

    return pack, unpack


def function_body(s: Function, forward: Callable, backward: Callable, jvp: Callable) -> dict[str, Any]:
    """The class body of a Function step's class in its ``style``: static methods, plain methods
    (legacy), backward named vjp, or the one backward under both names; and its jvp if it has one."""
    if s.style == "legacy":
        return {"forward": forward, "backward": backward}
    names = {"static": ("backward",), "vjp": ("vjp",), "both": ("backward", "vjp")}[s.style]
    body = {"forward": staticmethod(forward), **{n: staticmethod(backward) for n in names}}
    return body if s.jvp is None else {**body, "jvp": staticmethod(jvp)}


def _named(hook: str, body: Callable[..., Any]) -> Callable[..., Any]:
    """A hook function named as the rendered script names it."""
    body.__name__ = body.__qualname__ = hook_function_name(hook)
    return body


class _Watch:
    """A post hook that changes nothing (observe_freed: alive while the node holding it is)."""

    def __call__(self, grad_inputs: Any, grad_outputs: Any) -> None:
        return None


class _Run:
    """The state of one program run: bound names, hook handles, the trace being recorded."""

    def __init__(
        self, backend: InProcess, float64: bool = False, nudge: bool = False, seen: dict | None = None
    ) -> None:
        self.torch = backend.module
        self.seen = seen  # what each op and module call received (see module doc), when asked
        self.device = backend.device
        self.float64 = float64  # low-precision floating dtypes widened (see module doc)
        self.nudge = nudge  # low-precision inputs moved by an ulp (see module doc)
        # the dtype module parameters have when the program runs as written (the default dtype)
        varied = float64 or nudge
        self.param_dtype = str(self.torch.get_default_dtype()).removeprefix("torch.") if varied else None
        self.names: dict[str, Any] = {}
        self.modes: list[tuple[str, Any]] = []  # grad-mode contexts entered and not yet left
        self.mode_of: dict[str, str] = {}  # a grad-mode context's name -> its mode (no_grad, ...)
        self.trace = Trace(backend=str(backend))
        self.step = 0
        self.global_hooks: list[Any] = []  # handles of global module hooks (module families)

    def run(self, index: int, step: Step) -> None:
        self.step = index
        missing = [n for n in step.names_read() if n not in self.names]
        if missing:
            self.trace.add("skipped", index, name=missing[0])
            return
        error: BaseException | None = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                getattr(self, f"_{step.kind}")(step)
            except Exception as exc:  # a step's failure is an observation, not a crash
                error = exc
        # the step's outcome first, then its warnings: a step that gives a value on one side and
        # raises on the other differs at "value" against "error", whatever either side warned
        if error is not None:
            name = lacked(error, self.torch)
            unsupported = {} if name is None else {"unsupported": name}
            message = normalise(str(error))
            self.trace.add("error", index, type=type(error).__name__, message=message, **unsupported)
        for w in caught:
            message = normalise(str(w.message))
            once = {"once": True} if warned_once_per_process(message) else {}
            self.trace.add("warning", index, category=w.category.__name__, message=message, **once)

    # -- helpers -------------------------------------------------------------------------------
    def _value(self, arg: Any) -> Any:
        if isinstance(arg, Ref):
            return self.names[arg.name]
        if isinstance(arg, list):
            return [self._value(a) for a in arg]
        if isinstance(arg, tuple):
            return tuple(self._value(a) for a in arg)
        if isinstance(arg, DType):
            return self.dtype(arg.name)
        if isinstance(arg, MemoryFormat):
            return getattr(self.torch, arg.name)
        return arg

    def dtype(self, name: str) -> Any:
        """The backend's dtype ``name``, widened to float64 in a float64 run."""
        return getattr(self.torch, "float64" if self.widens(name) else name)

    def widens(self, name: str | None) -> bool:
        """Whether this run widens the dtype ``name`` (a float64 run, a low-precision dtype)."""
        return self.float64 and name in LOW_PRECISION

    def data(self, data: Any, dtype: str | None) -> Any:
        """The values a tensor of ``dtype`` is made from: rounded to ``dtype`` first in a float64
        run (so that the rerun starts from the very numbers the program starts from), and moved by
        an ulp in a nudged run."""
        if dtype not in LOW_PRECISION or not (self.float64 or self.nudge):
            return data
        values = self.torch.tensor(data, dtype=getattr(self.torch, dtype))
        return (nudged(self.torch, values) if self.nudge else values).tolist()

    def _log(self, hook: str, on: str, target: str, **received: Any) -> None:
        groups = {k: describe_all(v, self.torch) for k, v in received.items()}
        self.trace.add("hook", self.step, hook=hook, on=on, target=target, received=groups)

    # -- steps ---------------------------------------------------------------------------------
    def _leaf(self, s: Leaf) -> None:
        t = self.torch
        data, dtype = self.data(s.data, s.dtype), self.dtype(s.dtype)
        self.names[s.name] = t.tensor(data, dtype=dtype, **self.placed(requires_grad=s.requires_grad))

    def placed(self, **flags: Any) -> dict[str, Any]:
        """Keyword arguments of a tensor creation: the flags that are set, and the device unless
        it is cpu (a program on cpu calls creation functions as a user would, without one)."""
        kwargs = {k: v for k, v in flags.items() if v}
        if self.device != "cpu":
            kwargs["device"] = self.device
        return kwargs

    def record(self, args: list, kwargs: dict) -> None:
        """What the step's call receives, for the argument coverage (when asked: ``seen``)."""
        if self.seen is not None:
            seen_args = [self.snapshot(a) for a in args]
            self.seen[self.step] = (seen_args, {k: self.snapshot(v) for k, v in kwargs.items()})

    def snapshot(self, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return [self.snapshot(v) for v in value]
        if not isinstance(value, self.torch.Tensor):
            return None
        try:
            data = value.detach()
            if str(data.dtype).endswith("bfloat16"):
                data = data.float()
            return Seen(numpy.array(data.cpu().numpy()), bool(value.requires_grad))
        except Exception:  # noqa: BLE001 - a tensor numpy cannot hold: its values stay unknown
            return Seen(None, bool(getattr(value, "requires_grad", False)))

    def _op(self, s: Op) -> None:
        args = [self._value(a) for a in s.args]
        kwargs = {k: self._value(v) for k, v in s.kwargs.items()}
        self.record(args, kwargs)
        if OPS[s.op].style == "method":
            result = getattr(args[0], s.op)(*args[1:], **kwargs)
        else:
            result = functools.reduce(getattr, s.op.split("."), self.torch)(*args, **kwargs)
        self.names[s.out] = result

    def _detach(self, s: Detach) -> None:
        self.names[s.out] = self.names[s.src].detach()

    def _retain_grad(self, s: RetainGrad) -> None:
        self.names[s.tensor].retain_grad()

    def _requires_grad(self, s: RequiresGrad) -> None:
        self.names[s.tensor].requires_grad_(s.requires_grad)

    def _register_hook(self, s: RegisterHook) -> None:
        torch, tensor = self.torch, self.names[s.target]
        log = self._log

        if s.on == "tensor":

            def body(grad):
                log(s.hook, s.on, s.target, grad=grad)
                return apply_action(torch, s.action, grad)

            handle = tensor.register_hook(_named(s.hook, body))
        elif s.on == "grad_fn":

            def body(grad_inputs, grad_outputs):
                log(s.hook, s.on, s.target, grad_inputs=grad_inputs, grad_outputs=grad_outputs)
                return apply_action(torch, s.action, grad_inputs)

            handle = tensor.grad_fn.register_hook(_named(s.hook, body))
        elif s.on == "grad_fn_pre":

            def body(grad_outputs):
                log(s.hook, s.on, s.target, grad_outputs=grad_outputs)
                return apply_action(torch, s.action, grad_outputs)

            handle = tensor.grad_fn.register_prehook(_named(s.hook, body))
        else:

            def body(param):
                log(s.hook, s.on, s.target, grad=param.grad)
                return post_accumulate_action(torch, s.action, param)

            handle = tensor.register_post_accumulate_grad_hook(_named(s.hook, body))
        self.names[s.hook] = handle

    def _remove_hook(self, s: RemoveHook) -> None:
        self.names[s.hook].remove()

    def _backward(self, s: Backward) -> None:
        kwargs: dict[str, Any] = {}
        if s.gradient is not None:
            kwargs["gradient"] = self.names[s.gradient]
        if s.retain_graph is not None:
            kwargs["retain_graph"] = s.retain_graph
        if s.create_graph:
            kwargs["create_graph"] = True
        if s.inputs is not None:
            kwargs["inputs"] = [self.names[n] for n in s.inputs]
        self.names[s.tensor].backward(**kwargs)

    def _grad(self, s: Grad) -> None:
        kwargs: dict[str, Any] = {}
        if s.grad_outputs is not None:
            kwargs["grad_outputs"] = [self.names[n] for n in s.grad_outputs]
        if s.retain_graph is not None:
            kwargs["retain_graph"] = s.retain_graph
        if s.create_graph:
            kwargs["create_graph"] = True
        if s.allow_unused is not None:
            kwargs["allow_unused"] = s.allow_unused
        if s.materialize_grads:
            kwargs["materialize_grads"] = True
        if not s.only_inputs:
            kwargs["only_inputs"] = False
        if s.is_grads_batched:
            kwargs["is_grads_batched"] = True
        results = self.torch.autograd.grad(
            [self.names[n] for n in s.outputs], [self.names[n] for n in s.inputs], **kwargs
        )
        for name, result in zip(s.outs, results, strict=True):
            self.names[name] = result
            self.trace.add("value", self.step, name=name, value=describe(result, self.torch), gradient=True)

    def _zero_grad(self, s: ZeroGrad) -> None:
        tensor = self.names[s.tensor]
        if s.set_to_none:
            tensor.grad = None
        else:
            tensor.grad.zero_()

    def _observe(self, s: Observe) -> None:
        self._observe_tensor(s.tensor, self.names[s.tensor])

    def _observe_tensor(self, name: str, tensor: Any) -> None:
        torch = self.torch
        self.trace.add("value", self.step, name=name, value=describe(tensor, torch))
        grad = observed(lambda: describe(tensor.grad, torch), torch)
        self.trace.add("grad", self.step, name=name, value=grad)

    def _observe_graph(self, s: ObserveGraph) -> None:
        tensor = self.names[s.tensor]
        graph = observed(lambda: describe_graph(tensor.grad_fn), self.torch)
        self.trace.add("graph", self.step, name=s.tensor, graph=graph)

    # -- module families: module trees, module hooks, module API, optimisers -------------------
    def _module(self, s: Module) -> None:
        """Build the tree bottom-up, binding every node and parameter as soon as it exists."""
        for node in module_nodes(s):
            module = self._build(node)
            self.names[node.alias] = module
            for pname in node.param_names:
                self.names[f"{node.alias}.{pname}"] = getattr(module, pname)

    def _build(self, node: ModuleNode) -> Any:
        torch, holds = self.torch, CHILDREN.get(node.cls)
        custom = node.cls in CUSTOM_MODULES
        cls = custom_module_classes(torch)[node.cls] if custom else getattr(torch.nn, node.cls)
        if holds is None:
            module = cls(*node.args, **{k: self._value(v) for k, v in node.kwargs.items()})
            if self.device != "cpu":
                module = module.to(self.device)
            with torch.no_grad():
                for pname in node.param_names:
                    if pname not in node.params:
                        raise ValueError(f"module {node.alias}: no values given for parameter {pname!r}")
                    param = getattr(module, pname)
                    values = self.data(node.params[pname], self.param_dtype)
                    param.copy_(torch.tensor(values, dtype=param.dtype, **self.placed()))
            return module
        if node.cls == "Sequential":
            return cls(*[self.names[a] for a in node.children])
        if node.cls == "ModuleList":
            return cls([self.names[a] for a in node.children])
        if node.cls == "ModuleDict":
            return cls({key: self.names[a] for key, a in node.children.items()})
        return cls(*[self.names[a] for a in node.children.values()])

    def _call_module(self, s: CallModule) -> None:
        args, kwargs = [self.names[n] for n in s.inputs], {k: self.names[v] for k, v in s.kwargs.items()}
        self.record(args, kwargs)
        self.names[s.out] = self.names[s.module](*args, **kwargs)

    def _module_name(self, module: Any) -> str:
        """The program name of a module object (global hooks receive the module, not its name)."""
        return next((n for n, v in self.names.items() if v is module), "?")

    def _hook_body(self, hook: str, on: str, with_kwargs: bool, action: Action, target: Callable) -> Callable:
        """The function of a module hook of kind ``on``: it logs what it received (``target(module)``
        names the module) and returns what ``action`` makes of it (see ``Action``); a with_kwargs
        forward pre-hook returns what it makes of both the args and each kwarg (a new dict)."""
        torch, log = self.torch, self._log

        def logged(mod: Any, **received: Any) -> None:
            log(hook, on, target(mod), **received)

        def kwarg_groups(kwargs: dict) -> dict:
            return {f"kwarg_{k}": v for k, v in kwargs.items()}

        if on == "forward_pre" and with_kwargs:

            def body(mod, args, kwargs):
                logged(mod, args=args, **kwarg_groups(kwargs))
                acted = apply_action(torch, action, tuple(args))
                if acted is None:
                    return None
                return acted, {k: apply_action(torch, action, v) for k, v in kwargs.items()}

        elif on == "forward_pre":

            def body(mod, args):
                logged(mod, args=args)
                return apply_action(torch, action, tuple(args))

        elif on == "forward" and with_kwargs:

            def body(mod, args, kwargs, output):
                logged(mod, args=args, **kwarg_groups(kwargs), output=output)
                return None if output is None else apply_action(torch, action, output)

        elif on == "forward":

            def body(mod, args, output):
                logged(mod, args=args, output=output)
                return None if output is None else apply_action(torch, action, output)

        elif on == "full_backward_pre":

            def body(mod, grad_output):
                logged(mod, grad_output=grad_output)
                return apply_action(torch, action, tuple(grad_output))

        else:

            def body(mod, grad_input, grad_output):
                logged(mod, grad_input=grad_input, grad_output=grad_output)
                return apply_action(torch, action, tuple(grad_input))

        return _named(hook, body)

    def _module_hook(self, s: ModuleHook) -> None:
        module = self.names[s.module]
        body = self._hook_body(s.hook, s.on, s.with_kwargs, s.action, lambda _mod: s.module)
        register = getattr(module, MODULE_HOOK_REGISTRATION[s.on])
        self.names[s.hook] = register(body, **s.flags())

    def _global_module_hook(self, s: GlobalModuleHook) -> None:
        body = self._hook_body(s.hook, s.on, s.with_kwargs, s.action, self._module_name)
        register = getattr(self.torch.nn.modules.module, f"register_module_{s.on}_hook")
        handle = register(body, **s.flags())
        self.global_hooks.append(handle)
        self.names[s.hook] = handle

    def _state_dict_hook(self, s: StateDictHook) -> None:
        """Define the hook from its source (the rendered script's, word for word), register it."""
        function = state_dict_hooks.source(hook_function_name(s.hook), s.hook, s.on, s.module, s.action,
                                           s.with_module)
        namespace = {"show_state_hook": self._log_state_hook}
        exec("\n".join(function), namespace)  # noqa: S102 - the oracle's own source, as the script runs it
        register = getattr(self.names[s.module], state_dict_hooks.KINDS[s.on][0])
        flags = {"with_module": True} if s.with_module else {}
        self.names[s.hook] = register(namespace[hook_function_name(s.hook)], **flags)

    def _log_state_hook(self, hook: str, on: str, target: str, **arguments: Any) -> None:
        self.trace.add("hook", self.step, hook=hook, on=on, target=target, arguments=plain(arguments))

    def _state_dict(self, s: StateDict) -> None:
        sd = self.names[s.name] = self.names[s.module].state_dict(**s.kwargs())
        metadata = plain(getattr(sd, "_metadata", None))
        self.trace.add("state_dict", self.step, name=s.name, keys=plain(list(sd)), metadata=metadata)
        for key, value in sd.items():
            self._observe_tensor(f"{s.name}[{key!r}]", value)

    def _load_state_dict(self, s: LoadStateDict) -> None:
        result = self.names[s.module].load_state_dict(self.names[s.source], **s.kwargs())
        self.trace.add("load_state_dict", self.step, name=s.module, missing=plain(result.missing_keys),
                       unexpected=plain(result.unexpected_keys), result=str(result))

    def _module_mode(self, s: ModuleMode) -> None:
        module = self.names[s.module]
        if s.train:
            module.train()
        else:
            module.eval()

    def _module_zero_grad(self, s: ModuleZeroGrad) -> None:
        self.names[s.module].zero_grad(set_to_none=s.set_to_none)

    def _module_requires_grad(self, s: ModuleRequiresGrad) -> None:
        self.names[s.module].requires_grad_(s.requires_grad)

    def _observe_module(self, s: ObserveModule) -> None:
        self.trace.add("module", self.step, name=s.module, **module_view(self.names[s.module], self.torch))

    def _manual_seed(self, s: ManualSeed) -> None:
        self.torch.manual_seed(s.seed)

    def _observe_repr(self, s: ObserveRepr) -> None:
        self.trace.add("repr", self.step, name=s.module, repr=repr(self.names[s.module]))

    def _optimizer(self, s: Optimizer) -> None:
        params = [self.names[n] for n in s.params] if s.module is None else self.names[s.module].parameters()
        self.names[s.name] = getattr(self.torch.optim, s.cls)(params, **s.kwargs)

    def _optimizer_step(self, s: OptimizerStep) -> None:
        self.names[s.optimizer].step()

    def _optimizer_zero_grad(self, s: OptimizerZeroGrad) -> None:
        self.names[s.optimizer].zero_grad(set_to_none=s.set_to_none)

    def _scheduler(self, s: Scheduler) -> None:
        kwargs = dict(s.kwargs)
        if "lr_lambda" in kwargs:
            kwargs["lr_lambda"] = lr_lambda(kwargs["lr_lambda"])
        make = getattr(self.torch.optim.lr_scheduler, s.cls)
        if s.cls == "ChainedScheduler":
            schedulers = [self.names[n] for n in s.schedulers]
            self.names[s.name] = make(schedulers, optimizer=self.names[s.optimizer])
            return
        if s.schedulers:
            kwargs["schedulers"] = [self.names[n] for n in s.schedulers]
        self.names[s.name] = make(self.names[s.optimizer], **kwargs)

    def _scheduler_step(self, s: SchedulerStep) -> None:
        self.names[s.scheduler].step(**s.kwargs())

    def _observe_scheduler(self, s: ObserveScheduler) -> None:
        scheduler = self.names[s.scheduler]
        groups = [{k: group[k] for k in ("lr", "momentum", "betas") if k in group}
                  for group in scheduler.optimizer.param_groups]
        state = observed(lambda: plain(scheduler.state_dict()), self.torch)
        self.trace.add("scheduler", self.step, name=s.scheduler, last_lr=plain(scheduler.get_last_lr()),
                       groups=plain(groups), state=state)

    def _assign_attr(self, s: AssignAttr) -> None:
        value = self.names[s.value]
        setattr(self.names[s.module], s.attr, value)
        if s.attr.isidentifier():
            self.names[f"{s.module}.{s.attr}"] = value

    def remove_global_hooks(self) -> None:
        """Remove the global module hooks, so that they cannot fire in a later program."""
        for handle in self.global_hooks:
            handle.remove()

    # -- steps of the op, tensor, grad-mode families (issue 5) ---------------------------------
    def _observe_layout(self, s: ObserveLayout) -> None:
        t, torch = self.names[s.tensor], self.torch
        layout = {
            "stride": observed(lambda: list(t.stride()), torch),
            "offset": observed(t.storage_offset, torch),
            "contiguous": observed(lambda: bool(t.is_contiguous()), torch),
            "version": observed(lambda: t._version, torch),
        }
        self.trace.add("layout", self.step, name=s.tensor, **layout)

    def _numpy_array(self, s: NumpyArray) -> None:
        self.names[s.name] = numpy.array(s.data, dtype=getattr(numpy, s.dtype))

    def _numpy_add(self, s: NumpyAdd) -> None:
        array = self.names[s.array]
        array += s.value

    def _observe_array(self, s: ObserveArray) -> None:
        a = self.names[s.array]
        data = [_number(v) for v in numpy.asarray(a).reshape(-1).tolist()]
        self.trace.add("array", self.step, name=s.array, dtype=str(a.dtype), shape=list(a.shape), data=data)

    def _grad_mode_event(self, mode: str, state: dict | None = None) -> None:
        """``is_grad_enabled()``, and ``is_inference_mode_enabled()`` around inference_mode (or
        ``state``, read so elsewhere)."""
        self.trace.add("grad_mode", self.step, **(state or self._grad_state(mode)))

    def _grad_state(self, mode: str) -> dict:
        torch = self.torch
        state = {"enabled": observed(lambda: bool(torch.is_grad_enabled()), torch)}
        if mode == "inference_mode":
            state["inference"] = observed(lambda: bool(torch.is_inference_mode_enabled()), torch)
        return state

    def _grad_mode(self, s: GradMode) -> None:
        factory = getattr(self.torch, s.mode)
        context = factory() if s.flag is None else factory(s.flag)
        context.__enter__()
        self.modes.append((s.name, context))
        self.names[s.name] = context
        self.mode_of[s.name] = s.mode
        self._grad_mode_event(s.mode)

    def _exit_mode(self, s: ExitMode) -> None:
        context = self.names[s.name]
        if (s.name, context) in self.modes:
            self.modes.remove((s.name, context))
        context.__exit__(None, None, None)
        self._grad_mode_event(self.mode_of[s.name])

    # -- defaults: the default dtype and device (API-003) ---------------------------------------
    def _observe_defaults(self, s: ObserveDefaults | None = None) -> None:
        torch = self.torch
        self.trace.add(
            "defaults",
            self.step,
            dtype=observed(lambda: str(torch.get_default_dtype()).removeprefix("torch."), torch),
            device=observed(lambda: str(torch.get_default_device()), torch),
        )

    def _device_mode(self, s: DeviceMode) -> None:
        context = self.torch.device(s.device)
        context.__enter__()
        self.modes.append((s.name, context))
        self.names[s.name] = context
        self._observe_defaults()

    def _exit_device(self, s: ExitDevice) -> None:
        context = self.names[s.name]
        if (s.name, context) in self.modes:
            self.modes.remove((s.name, context))
        context.__exit__(None, None, None)
        self._observe_defaults()

    # -- results that are no tensor; autocast (issue 22) -----------------------------------------
    def _observe_plain(self, s: ObservePlain) -> None:
        value = self.names[s.name]
        self.trace.add("plain", self.step, name=s.name, shown=observed(lambda: plain_text(value), self.torch))

    def _autocast(self, s: Autocast) -> None:
        kwargs: dict[str, Any] = {} if s.enabled is None else {"enabled": s.enabled}
        if s.dtype is not None:
            kwargs["dtype"] = getattr(self.torch, s.dtype)
        factory = functools.reduce(getattr, s.spelling.split("."), self.torch)
        device = () if s.spelling == "cpu.amp.autocast" else (s.device_type,)
        context = factory(*device, **kwargs)
        context.__enter__()
        self.modes.append((s.name, context))
        self.names[s.name] = context
        self._autocast_event(s.device_type)

    def _exit_autocast(self, s: ExitAutocast) -> None:
        context = self.names[s.name]
        if (s.name, context) in self.modes:
            self.modes.remove((s.name, context))
        context.__exit__(None, None, None)
        self._autocast_event(s.device_type)

    def _autocast_event(self, device_type: str) -> None:
        torch = self.torch
        enabled = observed(lambda: bool(torch.is_autocast_enabled(device_type)), torch)
        dtype = observed(lambda: str(torch.get_autocast_dtype(device_type)), torch)
        self.trace.add("autocast", self.step, enabled=enabled, dtype=dtype)

    # -- saved tensors: torch.autograd.graph's saved-tensor hooks, grad_fn._saved_* --------------
    def _saved_hooks(self, s: SavedHooks) -> None:
        graph = self.torch.autograd.graph
        if s.context == "saved_tensors_hooks":
            context = graph.saved_tensors_hooks(*saved_hook_pair(self.torch, s, self._log))
        elif s.context == "save_on_cpu":
            context = graph.save_on_cpu()
        else:
            context = graph.disable_saved_tensors_hooks(s.name)
        context.__enter__()
        self.modes.append((s.name, context))
        self.names[s.name] = context
        self.mode_of[s.name] = s.context

    # -- forward-mode AD (FWAD-001/002) ---------------------------------------------------------
    def _dual_level(self, s: DualLevel) -> None:
        context = self.torch.autograd.forward_ad.dual_level()
        context.__enter__()
        self.modes.append((s.name, context))
        self.names[s.name] = context
        self.mode_of[s.name] = "dual_level"

    def _make_dual(self, s: MakeDual) -> None:
        level = {} if s.level is None else {"level": s.level}
        tensor, tangent = self.names[s.tensor], self.names[s.tangent]
        self.names[s.out] = self.torch.autograd.forward_ad.make_dual(tensor, tangent, **level)

    def _pickled(self, s: Pickled) -> None:
        tensor = self.names[s.tensor]
        if s.how == "copy":
            self.names[s.out] = copy.copy(tensor)
        else:
            self.names[s.out] = pickle.loads(pickle.dumps(tensor, protocol=0 if s.how == "pickle0" else None))

    def _observe_freed(self, s: ObserveFreed) -> None:
        # garbage of earlier steps first (an exception caught inside an engine keeps its frames in a
        # cycle until the collector runs): it may hold the tensors; a cycle through the named ones
        # is still reachable here, so it stays, and shows once they are dropped
        gc.collect()
        hook = _Watch()
        self.names[s.tensor].grad_fn.register_hook(hook)
        watch = weakref.ref(hook)
        del hook
        collecting = gc.isenabled()
        gc.disable()
        try:
            for name in s.drop:
                del self.names[name]
            freed = watch() is None
        finally:
            if collecting:
                gc.enable()
        self.trace.add("freed", self.step, tensor=s.tensor, freed=freed)

    def _unpack_dual(self, s: UnpackDual) -> None:
        tensor = self.names[s.tensor]
        primal, tangent = self.torch.autograd.forward_ad.unpack_dual(tensor)
        self.names[s.out] = primal
        tangent = None if tangent is None else tangent.detach()
        self.trace.add("value", self.step, name=f"{s.out}.tangent", value=describe(tangent, self.torch))
        view = primal._base is not None
        self.trace.add("dual", self.step, name=s.out, primal_is_input=primal is tensor, primal_is_view=view)

    def _observe_saved(self, s: ObserveSaved) -> None:
        """The node's saved values, and which of them are the observed tensor itself (``own``:
        torch unpacks a saved output into a new tensor, a saved input as the input)."""
        tensor = self.names[s.tensor]
        fn = tensor.grad_fn
        names = sorted(n for n in dir(fn) if n.startswith(("_saved_", "_raw_saved_")))
        values, own = {}, []
        for name in (n for n in names if n.startswith("_saved_")):
            try:
                value = getattr(fn, name)
            except Exception as exc:  # noqa: BLE001 - a freed saved tensor: torch's error, recorded
                values[name] = {"error": type(exc).__name__, "message": normalise(str(exc))}
                continue
            values[name] = saved_text(value, self.torch)
            if value is tensor:
                own.append(name)
        self.trace.add("saved", self.step, tensor=s.tensor, names=names, values=values, own=own)

    def _decorated_op(self, s: DecoratedOp) -> None:
        factory = getattr(self.torch, s.mode)
        decorator = factory if s.bare else (factory() if s.flag is None else factory(s.flag))
        style = OPS[s.op].style

        def body(*args):
            if style == "method":
                return getattr(args[0], s.op)(*args[1:])
            return getattr(self.torch, s.op)(*args)

        args = [self._value(a) for a in s.args]
        if not s.generator:
            self.names[s.out] = decorator(body)(*args)
            return

        def generator(*args):
            yield self._grad_state(s.mode)
            yield body(*args)

        resumed = decorator(generator)(*args)
        self._grad_mode_event(s.mode, next(resumed))  # inside, at its first resumption
        self._grad_mode_event(s.mode)  # the caller's, between resumptions
        self.names[s.out] = next(resumed)
        resumed.close()  # early, as it waits at its last yield
        self._grad_mode_event(s.mode)

    # -- custom autograd.Function (issue 5) ----------------------------------------------------
    def _call(self, spec: dict, env: dict[str, Any]) -> None:
        """Run one op of a Function body (``{"out", "op", "args", "kwargs"}``) over ``env``."""

        def value(arg: Any) -> Any:
            if isinstance(arg, Ref):
                return env[arg.name]
            if isinstance(arg, list):
                return [value(a) for a in arg]
            return self.dtype(arg.name) if isinstance(arg, DType) else arg

        args = [value(a) for a in spec["args"]]
        kwargs = {k: value(v) for k, v in spec.get("kwargs", {}).items()}
        if OPS[spec["op"]].style == "method":
            env[spec["out"]] = getattr(args[0], spec["op"])(*args[1:], **kwargs)
        else:
            env[spec["out"]] = getattr(self.torch, spec["op"])(*args, **kwargs)

    def _function(self, s: Function) -> None:
        run, log = self, self._log

        def forward(ctx, *inputs):
            env = {f"i{k}": v for k, v in enumerate(inputs)}
            for spec in s.forward:
                run._call(spec, env)
            if s.materialize_grads is not None:
                ctx.set_materialize_grads(s.materialize_grads)
            if s.materialize_non_diff_grads is not None:
                ctx._materialize_non_diff_grads = s.materialize_non_diff_grads
            ctx.save_for_backward(*[env[n] for n in s.saves])
            if s.saves_for_forward:
                ctx.save_for_forward(*[env[n] for n in s.saves_for_forward])
            if s.non_differentiable:
                ctx.mark_non_differentiable(*[env[n] for n in s.non_differentiable])
            if s.dirty:
                ctx.mark_dirty(*[env[n] for n in s.dirty])
            outputs = tuple(o["const"] if isinstance(o, dict) else env[o] for o in s.outputs)
            return outputs[0] if len(outputs) == 1 else outputs

        def backward(ctx, *grads):
            log(s.name, "backward", needs_input_grad_text(ctx), grads=grads)
            env = {f"g{k}": g for k, g in enumerate(grads)}
            env.update(zip(s.saves, ctx.saved_tensors, strict=True))
            for spec in s.backward:
                run._call(spec, env)
            results = tuple(None if n is None else env[n] for n in s.grads)
            return results[0] if len(results) == 1 else results

        def jvp(ctx, *tangents):
            # the tangents' values (as unpack_dual's observation: impl's tangents carry no history yet)
            log(s.name, "jvp", "", grads=tuple(None if t is None else t.detach() for t in tangents))
            env = {f"t{k}": t for k, t in enumerate(tangents)}
            env.update(zip(s.saves_for_forward, ctx.saved_tensors, strict=True))
            for spec in s.jvp or ():
                run._call(spec, env)
            results = tuple(None if n is None else env[n] for n in s.tangents)
            return results[0] if len(results) == 1 else results

        if s.once_differentiable:
            backward = self.torch.autograd.function.once_differentiable(backward)
        body = function_body(s, forward, backward, jvp)
        self.names[s.name] = type(s.name, (self.torch.autograd.Function,), body)

    def _apply_function(self, s: ApplyFunction) -> None:
        fn = self.names[s.function]
        result = (fn() if s.instance else fn.apply)(*[self._value(a) for a in s.inputs])
        results = result if isinstance(result, tuple) else (result,)
        for name, value in zip(s.outs, results, strict=True):
            self.names[name] = value

    def _functional(self, s: AutogradFunctional) -> None:
        run = self

        def function(*inputs: Any) -> Any:
            env = {f"i{k}": v for k, v in enumerate(inputs)}
            for spec in s.body:
                run._call(spec, env)
            outputs = tuple(env[n] for n in s.outputs)
            return outputs if s.tuple_outputs else outputs[0]

        inputs = tuple(self.names[n] for n in s.inputs)
        args = [function, inputs if s.tuple_inputs else inputs[0]]
        if s.v is not None:
            v = tuple(self.names[n] for n in s.v)
            args.append(v if s.v_is_tuple() else v[0])
        self._observe_result(s.out, getattr(self.torch.autograd.functional, s.api)(*args, **s.kwargs))

    def _observe_result(self, name: str, result: Any) -> None:
        """A nested result: its nesting (``T`` a tensor), then each tensor as ``name[i][j]...``."""
        def nesting(value: Any) -> Any:
            if isinstance(value, tuple):
                return [nesting(v) for v in value]
            return "T" if isinstance(value, self.torch.Tensor) else type(value).__name__

        def observe(path: str, value: Any) -> None:
            if isinstance(value, tuple):
                for i, inner in enumerate(value):
                    observe(f"{path}[{i}]", inner)
            elif isinstance(value, self.torch.Tensor):
                self._observe_tensor(path, value)

        self.trace.add("result", self.step, name=name, nesting=nesting(result))
        observe(name, result)

    # -- multi-grad hooks and gradcheck (issue 21) -----------------------------------------------
    def _multi_grad_hook(self, s: MultiGradHook) -> None:
        log, target = self._log, ",".join(s.tensors)

        def body(grads):
            log(s.hook, s.on(), target, grads=grads)

        kwargs = {} if s.mode is None else {"mode": s.mode}
        tensors = [self.names[n] for n in s.tensors]
        graph = self.torch.autograd.graph
        self.names[s.hook] = graph.register_multi_grad_hook(tensors, _named(s.hook, body), **kwargs)

    def _gradcheck(self, s: Gradcheck) -> None:
        run, torch = self, self.torch
        function = self.names[s.function] if s.function else None

        def f(*inputs: Any) -> Any:
            env = {f"i{k}": v for k, v in enumerate(inputs)}
            if function is not None:
                applied = function.apply(*inputs)
                applied = applied if isinstance(applied, tuple) else (applied,)
                env.update((f"a{k}", v) for k, v in enumerate(applied))
            for spec in s.body:
                run._call(spec, env)
            outputs = tuple(env[n] for n in s.outputs)
            return outputs if len(outputs) > 1 else outputs[0]

        args: list = [f, tuple(self.names[n] for n in s.inputs)]
        if s.grad_outputs is not None:
            args.append(tuple(self.names[n] for n in s.grad_outputs))
        torch.manual_seed(s.seed)
        try:
            returned = getattr(torch.autograd, s.api)(*args, **s.kwargs)
        except Exception as e:
            message, scalars = gradcheck_scalars(str(e))
            if not scalars:
                raise
            self._observe_tensor(f"{s.out}_scalars", torch.tensor(scalars, dtype=torch.float64))
            raise type(e)(message) from None
        self.trace.add("gradcheck", self.step, name=s.out, returned=plain(returned))

    def _call_grad_fn(self, s: CallGradFn) -> None:
        result = self.names[s.tensor].grad_fn(*[self._value(g) for g in s.grads])
        self.names[s.out] = result
        self._observe_result(s.out, result)

    def _del_attr(self, s: DelAttr) -> None:
        delattr(self.names[s.tensor], s.attr)

    def _observe_backward_hooks(self, s: ObserveBackwardHooks) -> None:
        hooks = self.names[s.tensor]._backward_hooks
        shown = None if hooks is None else {"type": type(hooks).__name__, "size": len(hooks)}
        self.trace.add("backward_hooks", self.step, name=s.tensor, hooks=shown)

    def close(self, grad_enabled: bool | None) -> None:
        """Leave the grad modes a program left open (latest first), and restore the grad mode it
        started in (``grad_enabled``, read when the program uses grad modes: a backend's broken
        decorator may leave it switched), so that none outlives it."""
        while self.modes:
            self.modes.pop()[1].__exit__(None, None, None)
        if grad_enabled is not None and self.torch.is_grad_enabled() != grad_enabled:
            self.torch.set_grad_enabled(grad_enabled)


# The numbers a gradcheck message prints at full precision: fast mode's v^T J u, numerical and
# analytical, and the largest difference of the slow-mode Jacobians it recomputes. Their last
# digits differ between engines (numpy's dot and torch's round differently, and finite
# differences magnify a forward's last-ulp differences by 1/eps), so the message is compared with
# them masked, and they are compared as float64 values with the oracle's float64 tolerance.
GRADCHECK_SCALARS = re.compile(
    r"(?m)(^numerical:|^analytical:|\(slow mode\) is: )(-?(?:\d+(?:\.\d*)?(?:e[+-]?\d+)?|inf|nan))"
)


def gradcheck_scalars(message: str) -> tuple[str, list[float]]:
    """``message`` with its full-precision numbers (``GRADCHECK_SCALARS``) masked, and the numbers."""
    scalars = [float(m.group(2)) for m in GRADCHECK_SCALARS.finditer(message)]
    return GRADCHECK_SCALARS.sub(lambda m: m.group(1) + "<float>", message), scalars


# the steps that change the grad mode (the run restores the mode they found)
GRAD_MODE_STEPS = (GradMode, ExitMode, DecoratedOp, SavedHooks)


def run(
    program: Program,
    backend: InProcess,
    float64: bool = False,
    nudge: bool = False,
    progress: Callable[[int], None] | None = None,
    seen: dict | None = None,
) -> Trace:
    """Run every step of ``program`` on ``backend`` (inside ``backend.active()``) and return the
    trace; with ``float64``, its low-precision floating dtypes widened, with ``nudge``, its
    low-precision inputs moved by an ulp (see module doc). ``progress`` is told each step's
    index before the step runs; ``seen`` gets what each op and module call received."""
    state = _Run(backend, float64, nudge, seen)
    widened = _default_float64(backend.module) if float64 else nullcontext()
    sets = any(isinstance(step, Op) and step.op in DEFAULT_SETTERS for step in program.steps)
    defaults = _defaults(backend.module) if sets else nullcontext()  # none leaks into a later program
    with backend.active(), widened, defaults:
        # the harness calls nothing the program does not: the grad mode is read to be restored only
        # where the program changes it
        changes_mode = any(isinstance(step, GRAD_MODE_STEPS) for step in program.steps)
        grad_enabled = _grad_enabled(backend.module) if changes_mode else None
        try:
            for index, step in enumerate(program.steps):
                if progress is not None:
                    progress(index)
                state.run(index, step)
        finally:
            state.close(grad_enabled)
            state.remove_global_hooks()
    return state.trace


def _grad_enabled(torch: Any) -> bool | None:
    """``torch.is_grad_enabled()``, or None where the backend lacks it (nothing to restore then)."""
    read = getattr(torch, "is_grad_enabled", None)
    return None if read is None else bool(read())


def nudged(torch: Any, values: Any) -> Any:
    """``values`` (a floating tensor) times ``1 +- eps`` of their dtype, rounded back to it: one or
    two ulps up or down, the direction a hash of each value (equal values move alike)."""
    flat = values.reshape(-1).tolist()
    signs = [1.0 if hashlib.blake2b(struct.pack("<d", v)).digest()[0] & 1 else -1.0 for v in flat]
    step = torch.tensor(signs, dtype=torch.float64).reshape(values.shape) * torch.finfo(values.dtype).eps
    return (values.double() * (1 + step)).to(values.dtype)


@contextmanager
def _defaults(torch: Any) -> Iterator[None]:
    """The default dtype restored and the default device unset when the context ends, for a program
    that sets them (so that they do not leak into the programs after it); determinism's debug mode
    and the float32 matmul precision restored too, where the backend has them."""
    previous = torch.get_default_dtype()
    debug_mode = getattr(torch, "get_deterministic_debug_mode", None)
    previous_mode = debug_mode() if debug_mode is not None else None
    precision = getattr(torch, "get_float32_matmul_precision", None)
    previous_precision = precision() if precision is not None else None
    try:
        yield
    finally:
        torch.set_default_dtype(previous)
        torch.set_default_device(None)
        if previous_mode is not None:
            torch.set_deterministic_debug_mode(previous_mode)
        if previous_precision is not None:
            torch.set_float32_matmul_precision(previous_precision)


@contextmanager
def _default_float64(torch: Any) -> Iterator[None]:
    """float64 as ``torch``'s default dtype while the context lasts (the previous one restored)."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


# -- module families ----------------------------------------------------------------------------
# Module hook kind -> the nn.Module method registering it.
MODULE_HOOK_REGISTRATION = {
    "forward_pre": "register_forward_pre_hook",
    "forward": "register_forward_hook",
    "full_backward_pre": "register_full_backward_pre_hook",
    "full_backward": "register_full_backward_hook",
    "backward": "register_backward_hook",
}

_CUSTOM_CLASSES: dict[int, tuple[Any, dict[str, type]]] = {}


def custom_module_classes(torch: Any) -> dict[str, type]:
    """The classes of ``CUSTOM_MODULES`` built on ``nn.Module`` of the namespace ``torch`` (once per
    namespace): their source is executed with ``torch`` bound to it."""
    cached = _CUSTOM_CLASSES.get(id(torch))
    if cached is None or cached[0] is not torch:
        namespace: dict[str, Any] = {"torch": torch}
        for source in CUSTOM_MODULES.values():
            exec(source, namespace)
        cached = _CUSTOM_CLASSES[id(torch)] = (torch, {n: namespace[n] for n in CUSTOM_MODULES})
    return cached[1]


def module_view(module: Any, torch: Any = None) -> dict:
    """What ``observe_module`` records: parameters (name, shape, requires_grad) in order,
    state_dict keys, and every submodule's training flag, each read on its own (``observed``)."""
    return {
        "parameters": observed(
            lambda: [[n, list(p.shape), bool(p.requires_grad)] for n, p in module.named_parameters()], torch
        ),
        "state_dict": observed(lambda: list(module.state_dict()), torch),
        "training": observed(lambda: [[n, bool(m.training)] for n, m in module.named_modules()], torch),
        "repr": observed(lambda: repr(module), torch),
    }
