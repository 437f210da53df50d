"""Render a Program as a standalone, runnable torch script: the repro shown with every divergence.

The script does what the interpreter does, statement by statement, and prints one line per trace
event in the form of ``oracle.trace.format_event`` (warnings go to stderr through Python's warning
machinery), so running it with real torch shows the reference side of a divergence.
"""

from __future__ import annotations

import keyword
import math
import re

from oracle.interpreter import GRADCHECK_SCALARS, MODULE_HOOK_REGISTRATION, hook_function_name
from oracle.program import (
    CHILDREN,
    CUSTOM_MODULES,
    DEFAULT_SETTERS,
    DETERMINISM_SETTERS,
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
from oracle.state_dict_hooks import KINDS as STATE_DICT_HOOKS
from oracle.state_dict_hooks import source as state_dict_hook_source
from oracle.trace import MAX_GRAPH_NODES

PREAMBLE = """\
import warnings

import torch

warnings.simplefilter("always")
"""

# The script's helpers, by name: (source, the helpers it calls). They print exactly what
# ``oracle.trace.format_event`` prints for the same events. A script defines only the helpers its
# statements call (and theirs), in this order.
HELPERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "text": ('''
def text(t):
    """One line for a tensor (or None): dtype, shape, flat values, flags, grad_fn."""
    if t is None:
        return "None"
    data = t.detach().reshape(-1).clone().tolist()
    grad_fn = None if t.grad_fn is None else type(t.grad_fn).__name__
    dtype = str(t.dtype).removeprefix("torch.")
    return (f"tensor(dtype={dtype}, shape={list(t.shape)}, data={data}, is_leaf={t.is_leaf}, "
            f"requires_grad={t.requires_grad}, grad_fn={grad_fn})")
''', ()),
    "texts": ('''
def texts(values):
    values = values if isinstance(values, (tuple, list)) else [values]
    return "[" + ", ".join(text(v) if isinstance(v, torch.Tensor) else "None" for v in values) + "]"
''', ("text",)),
    "show_error": ('''
def show_error(step, e):
    print(f"step {step} raised {type(e).__name__}: {e}")
''', ()),
    "observe": ('''
def observe(step, name, t):
    try:
        line = f"{name} = {text(t)}"
    except Exception as e:  # reading the tensor raised (a stale view's grad_fn): the step's error
        show_error(step, e)
        return
    print(line)
    try:
        print(f"{name}.grad = {text(t.grad)}")
    except Exception as e:
        show_error(step, e)
''', ("text", "show_error")),
    "show_graph": ('''
def show_graph(name, t):
    """The autograd graph behind t, breadth first, shared nodes numbered once."""
    if t.grad_fn is None:
        print(f"{name}.grad_fn graph = None")
        return
    order, index, parts = [t.grad_fn], {id(t.grad_fn): 0}, []
    while len(parts) < len(order) and len(parts) < ''' + str(MAX_GRAPH_NODES) + ''':
        node = order[len(parts)]
        edges = []
        for child, nr in node.next_functions:
            if child is not None and id(child) not in index:
                index[id(child)] = len(order)
                order.append(child)
            edges.append(f"{None if child is None else index[id(child)]}:{nr}")
        parts.append(f"{len(parts)} {type(node).__name__} -> [{', '.join(edges)}]")
    print(f"{name}.grad_fn graph = {'; '.join(parts)}")
''', ()),
    "show_hook": ('''
def show_hook(hook, on, target, **received):
    groups = "; ".join(f"{group}={texts(values)}" for group, values in received.items())
    print(f"hook {hook} ({on} on {target}): {groups}")
''', ("texts",)),
    "show_event": ('''
def show_event(kind, step, **fields):
    """An event of the op, tensor, grad-mode or module families, printed as the trace's JSON."""
    import json
    import math

    def number(v):
        if isinstance(v, float) and not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        return v

    if "data" in fields:
        fields["data"] = [number(v) for v in fields["data"]]
    print(json.dumps({"kind": kind, "step": step, **fields}))
''', ()),
    "show_state_hook": ('''
def show_state_hook(hook, on, target, **arguments):
    import json
    print(f"hook {hook} ({on} on {target}): {json.dumps(arguments, default=repr)}")
''', ()),
    "show_state_dict": ('''
def show_state_dict(step, name, sd):
    show_event("state_dict", step, name=name, keys=list(sd), metadata=getattr(sd, "_metadata", None))
    for key, value in sd.items():
        observe(step, f"{name}[{key!r}]", value)
''', ("show_event", "observe")),
    "show_loaded": ('''
def show_loaded(step, name, result):
    show_event("load_state_dict", step, name=name, missing=result.missing_keys,
               unexpected=result.unexpected_keys, result=str(result))
''', ("show_event",)),
    "show_result": ('''
def show_result(step, name, result):
    def nesting(value):
        if isinstance(value, tuple):
            return [nesting(v) for v in value]
        return "T" if isinstance(value, torch.Tensor) else type(value).__name__

    def shown(path, value):
        if isinstance(value, tuple):
            for i, inner in enumerate(value):
                shown(f"{path}[{i}]", inner)
        elif isinstance(value, torch.Tensor):
            observe(step, path, value)

    show_event("result", step, name=name, nesting=nesting(result))
    shown(name, result)
''', ("show_event", "observe")),
    "show_saved": ('''
def show_saved(step, name, fn, tensor):
    names = sorted(n for n in dir(fn) if n.startswith(("_saved_", "_raw_saved_")))
    values, own = {}, []
    for n in (n for n in names if n.startswith("_saved_")):
        try:
            v = getattr(fn, n)
        except Exception as e:
            values[n] = {"error": type(e).__name__, "message": str(e)}
            continue
        if isinstance(v, torch.Tensor):
            d = v.detach().reshape(-1).tolist()
            values[n] = {"dtype": str(v.dtype).removeprefix("torch."), "shape": list(v.shape),
                         "data": [float(f"{x:.6g}") if isinstance(x, float) else x for x in d],
                         "is_leaf": v.is_leaf, "requires_grad": v.requires_grad,
                         "grad_fn": None if v.grad_fn is None else type(v.grad_fn).__name__}
        else:
            values[n] = list(v) if isinstance(v, tuple) else v
        if v is tensor:
            own.append(n)
    show_event("saved", step, tensor=name, names=names, values=values, own=own)
''', ("show_event",)),
    "show_layout": ('''
def show_layout(step, name, t):
    show_event("layout", step, name=name, stride=list(t.stride()), offset=t.storage_offset(),
               contiguous=t.is_contiguous(), version=t._version)
''', ("show_event",)),
    "show_backward_hooks": ('''
def show_backward_hooks(step, name, hooks):
    shown = None if hooks is None else {"type": type(hooks).__name__, "size": len(hooks)}
    show_event("backward_hooks", step, name=name, hooks=shown)
''', ("show_event",)),
    "show_array": ('''
def show_array(step, name, a):
    show_event("array", step, name=name, dtype=str(a.dtype), shape=list(a.shape), data=a.reshape(-1).tolist())
''', ("show_event",)),
    "show_grad_mode": ('''
def show_grad_mode(step, context):
    state = {"enabled": torch.is_grad_enabled()}
    if isinstance(context, torch.inference_mode):
        state["inference"] = torch.is_inference_mode_enabled()
    show_event("grad_mode", step, **state)
''', ("show_event",)),
    "show_defaults": ('''
def show_defaults(step):
    dtype, device = str(torch.get_default_dtype()).removeprefix("torch."), str(torch.get_default_device())
    show_event("defaults", step, dtype=dtype, device=device)
''', ("show_event",)),
    "show_plain": ('''
def show_plain(step, name, value):
    shown = repr(value) if value is None or isinstance(value, (bool, int, float, str)) else str(value)
    show_event("plain", step, name=name, shown=shown)
''', ("show_event",)),
    "show_autocast": ('''
def show_autocast(step, device_type):
    enabled, dtype = torch.is_autocast_enabled(device_type), str(torch.get_autocast_dtype(device_type))
    show_event("autocast", step, enabled=enabled, dtype=dtype)
''', ("show_event",)),
    "show_mode_now": ('''
def show_mode_now(step, inference):
    state = {"enabled": torch.is_grad_enabled()}
    if inference:
        state["inference"] = torch.is_inference_mode_enabled()
    show_event("grad_mode", step, **state)
''', ("show_event",)),
    "show_scheduler": ('''
def show_scheduler(step, name, s):
    """A scheduler's learning rates, the groups' lr, momentum and betas, and its state_dict."""
    import json

    def plain(value):
        return json.loads(json.dumps(value, default=repr))

    groups = [{k: g[k] for k in ("lr", "momentum", "betas") if k in g} for g in s.optimizer.param_groups]
    show_event("scheduler", step, name=name, last_lr=plain(s.get_last_lr()), groups=plain(groups),
               state=plain(s.state_dict()))
''', ("show_event",)),
    "_outputs": ('''
def _outputs(result):
    """A custom Function's outputs as a tuple (apply returns one tensor or a tuple)."""
    return result if isinstance(result, tuple) else (result,)
''', ()),
    "gradcheck_masked": ('''
def gradcheck_masked(step, name, call):
    """call() (a gradcheck): a failure's full-precision numbers shown as a value, masked in its message."""
    import re
    try:
        return call()
    except Exception as e:
        pattern = re.compile(''' + repr(GRADCHECK_SCALARS.pattern) + ''')
        scalars = [float(m.group(2)) for m in pattern.finditer(str(e))]
        if not scalars:
            raise
        observe(step, f"{name}_scalars", torch.tensor(scalars, dtype=torch.float64))
        raise type(e)(pattern.sub(lambda m: m.group(1) + "<float>", str(e))) from None
''', ("observe",)),
}
_HELPER_CALL = re.compile(r"\b(" + "|".join(HELPERS) + r")\(")


def helpers_used(body: str) -> str:
    """The source of the helpers ``body`` calls, with the helpers they call, in ``HELPERS`` order."""
    needed: set[str] = set()
    todo = set(_HELPER_CALL.findall(body))
    while todo:
        name = todo.pop()
        needed.add(name)
        todo |= set(HELPERS[name][1]) - needed
    return "".join("\n" + HELPERS[name][0] for name in HELPERS if name in needed)


# Hook kind -> (parameters, the expression registering it on {target}, the received groups,
# the expression the action applies to).
_TENSOR_HOOKS = {
    "tensor": ("grad", "{t}.register_hook", "grad=grad", "grad"),
    "grad_fn": (
        "grad_inputs, grad_outputs",
        "{t}.grad_fn.register_hook",
        "grad_inputs=grad_inputs, grad_outputs=grad_outputs",
        "grad_inputs",
    ),
    "grad_fn_pre": (
        "grad_outputs",
        "{t}.grad_fn.register_prehook",
        "grad_outputs=grad_outputs",
        "grad_outputs",
    ),
    "post_accumulate_grad": ("param", "{t}.register_post_accumulate_grad_hook", "grad=param.grad", "param"),
}
def render(program: Program, device: str = "cpu") -> str:
    """A standalone torch script reproducing ``program`` and printing what its trace observes."""
    lines = []
    if device != "cpu":
        lines.append(f"DEVICE = {device!r}\n")
    for index, step in enumerate(program.steps):
        for name in step.names_bound():
            _check_name(name)
        body = _statements(step, device, index)
        lines.append(f"# step {index}: {step.kind}")
        if isinstance(step, Observe) or (isinstance(step, Leaf) and not _may_fail(step)):
            lines.extend(body)
        else:
            lines.append("try:")
            lines.extend("    " + line if line else "" for line in body)
            lines.append("except Exception as e:")
            lines.append(f"    show_error({index}, e)")
        lines.append("")
    lines.extend(_global_hooks_removed(program))
    lines.extend(_grad_modes_left(program))
    lines.extend(_defaults_restored(program))
    body = "\n".join(lines)
    return PREAMBLE + helpers_used(body) + "\n\n" + body


def _check_name(name: str) -> None:
    parts = name.split(".")
    if not all(p.isidentifier() and not keyword.iskeyword(p) for p in parts) or parts[0] in _RESERVED:
        raise ValueError(f"name {name!r} cannot be rendered as a Python variable")


_RESERVED = {
    "torch",
    "warnings",
    *HELPERS,
    "ctx",
    "grads",
    "numpy",
    "e",
    "result",
    "context",
    "DEVICE",
    "applied",
    *CUSTOM_MODULES,  # the module families' custom classes
}


def _arg(value: object) -> str:
    """Python source for an op argument or data literal (non-finite floats as ``float('nan')``)."""
    if isinstance(value, Ref):
        return value.name
    if isinstance(value, (DType, MemoryFormat)):
        return f"torch.{value.name}"
    if isinstance(value, list):
        return "[" + ", ".join(_arg(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + "".join(_arg(v) + ", " for v in value).rstrip() + ")"
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    return repr(value)


def _names(names: list[str]) -> str:
    return "[" + ", ".join(names) + "]"


def _may_fail(leaf: Leaf) -> bool:
    """Whether torch may refuse to make this leaf (only floating dtypes can require grad)."""
    return leaf.requires_grad and not leaf.dtype.startswith(("float", "bfloat"))


def _statements(step: Step, device: str, index: int) -> list[str]:
    """The script lines of one step (unindented)."""
    dev = ", device=DEVICE" if device != "cpu" else ""
    if isinstance(step, Leaf):
        rg = ", requires_grad=True" if step.requires_grad else ""
        return [f"{step.name} = torch.tensor({_arg(step.data)}, dtype=torch.{step.dtype}{rg}{dev})"]
    if isinstance(step, Op):
        args = [_arg(a) for a in step.args] + [f"{k}={_arg(v)}" for k, v in step.kwargs.items()]
        if OPS[step.op].style == "method":
            return [f"{step.out} = {args[0]}.{step.op}({', '.join(args[1:])})"]
        return [f"{step.out} = torch.{step.op}({', '.join(args)})"]
    if isinstance(step, Detach):
        return [f"{step.out} = {step.src}.detach()"]
    if isinstance(step, RetainGrad):
        return [f"{step.tensor}.retain_grad()"]
    if isinstance(step, RequiresGrad):
        return [f"{step.tensor}.requires_grad_({step.requires_grad})"]
    if isinstance(step, RegisterHook):
        params, register, received, target = _TENSOR_HOOKS[step.on]
        returned = _post_accumulate_return(step.action) if step.on == "post_accumulate_grad" else None
        return _hook_def(step.hook, step.on, step.target, params, received, target, step.action, returned) + [
            f"{step.hook} = {register.format(t=step.target)}({hook_function_name(step.hook)})"
        ]
    if isinstance(step, RemoveHook):
        return [f"{step.hook}.remove()"]
    if isinstance(step, Backward):
        kwargs = []
        if step.gradient is not None:
            kwargs.append(f"gradient={step.gradient}")
        if step.retain_graph is not None:
            kwargs.append(f"retain_graph={step.retain_graph}")
        if step.create_graph:
            kwargs.append("create_graph=True")
        if step.inputs is not None:
            kwargs.append(f"inputs={_names(step.inputs)}")
        return [f"{step.tensor}.backward({', '.join(kwargs)})"]
    if isinstance(step, Grad):
        return _grad_lines(step)
    if isinstance(step, ZeroGrad):
        return [f"{step.tensor}.grad = None" if step.set_to_none else f"{step.tensor}.grad.zero_()"]
    if isinstance(step, Observe):
        return [f"observe({index}, {step.tensor!r}, {step.tensor})"]
    if isinstance(step, ObserveGraph):
        return [f"show_graph({step.tensor!r}, {step.tensor})"]
    module_lines = _module_statements(step, dev, index)
    if module_lines is not None:
        return module_lines
    more = _more_statements(step, index)
    if more is not None:
        return more
    raise TypeError(f"cannot render step {step!r}")


# -- steps of the op, tensor, grad-mode families (issue 5) -------------------------------------
def _more_statements(step: Step, index: int) -> list[str] | None:
    """The script lines of the layout, numpy and grad-mode steps (None: not one of them)."""
    if isinstance(step, ObserveLayout):
        return [f"show_layout({index}, {step.tensor!r}, {step.tensor})"]
    if isinstance(step, NumpyArray):
        return ["import numpy", f"{step.name} = numpy.array({_arg(step.data)}, dtype=numpy.{step.dtype})"]
    if isinstance(step, NumpyAdd):
        return [f"{step.array} += {_arg(step.value)}"]
    if isinstance(step, ObserveArray):
        return [f"show_array({index}, {step.array!r}, {step.array})"]
    if isinstance(step, GradMode):
        flag = "" if step.flag is None else repr(step.flag)
        return [
            f"{step.name} = torch.{step.mode}({flag})",
            f"{step.name}.__enter__()",
            f"show_grad_mode({index}, {step.name})",
        ]
    if isinstance(step, ExitMode):
        return [f"{step.name}.__exit__(None, None, None)", f"show_grad_mode({index}, {step.name})"]
    if isinstance(step, ObserveDefaults):
        return [f"show_defaults({index})"]
    if isinstance(step, ObservePlain):
        return [f"show_plain({index}, {step.name!r}, {step.name})"]
    if isinstance(step, Autocast):
        options = ([f"dtype=torch.{step.dtype}"] if step.dtype else []) + (
            [] if step.enabled is None else [f"enabled={step.enabled}"])
        device = [] if step.spelling == "cpu.amp.autocast" else [repr(step.device_type)]
        context = f"{step.name} = torch.{step.spelling}({', '.join(device + options)})"
        return [context, f"{step.name}.__enter__()", f"show_autocast({index}, {step.device_type!r})"]
    if isinstance(step, ExitAutocast):
        return [f"{step.name}.__exit__(None, None, None)", f"show_autocast({index}, {step.device_type!r})"]
    if isinstance(step, DeviceMode):
        entered = [f"{step.name} = torch.device({step.device!r})", f"{step.name}.__enter__()"]
        return [*entered, f"show_defaults({index})"]
    if isinstance(step, ExitDevice):
        return [f"{step.name}.__exit__(None, None, None)", f"show_defaults({index})"]
    if isinstance(step, Function):
        return _function_lines(step)
    if isinstance(step, DecoratedOp):
        flag = "" if step.flag is None else repr(step.flag)
        decorator = f"torch.{step.mode}" + ("" if step.bare else f"({flag})")
        method = OPS[step.op].style == "method"
        call = f"args[0].{step.op}(*args[1:])" if method else f"torch.{step.op}(*args)"
        arguments = ", ".join(map(_arg, step.args))
        if not step.generator:
            return [
                f"@{decorator}",
                f"def decorated_{step.out}(*args):",
                f"    return {call}",
                "",
                f"{step.out} = decorated_{step.out}({arguments})",
            ]
        mode_now = f"show_mode_now({index}, {step.mode == 'inference_mode'})"
        return [
            f"@{decorator}",
            f"def decorated_{step.out}(*args):",
            f"    {mode_now}",
            "    yield",
            f"    yield {call}",
            "",
            f"generator_{step.out} = decorated_{step.out}({arguments})",
            f"next(generator_{step.out})",
            mode_now,
            f"{step.out} = next(generator_{step.out})",
            f"generator_{step.out}.close()",
            mode_now,
        ]
    if isinstance(step, DualLevel):
        enter = ["context = torch.autograd.forward_ad.dual_level()", "context.__enter__()"]
        return [*enter, f"{step.name} = context"]
    if isinstance(step, MakeDual):
        level = "" if step.level is None else f", level={step.level}"
        call = f"torch.autograd.forward_ad.make_dual({step.tensor}, {step.tangent}{level})"
        return [f"{step.out} = {call}"]
    if isinstance(step, UnpackDual):
        return [
            f"{step.out}, tangent = torch.autograd.forward_ad.unpack_dual({step.tensor})",
            f"print(f'{step.out}.tangent = {{text(None if tangent is None else tangent.detach())}}')",
            f"show_event('dual', {index}, name={step.out!r}, primal_is_input={step.out} is {step.tensor}, "
            f"primal_is_view={step.out}._base is not None)",
        ]
    if isinstance(step, SavedHooks):
        return _saved_hooks_lines(step)
    if isinstance(step, ObserveSaved):
        return [f"show_saved({index}, {step.tensor!r}, {step.tensor}.grad_fn, {step.tensor})"]
    if isinstance(step, Pickled):
        if step.how == "copy":
            return [f"{step.out} = __import__('copy').copy({step.tensor})"]
        dumped = f"__import__('pickle').dumps({step.tensor}, {0 if step.how == 'pickle0' else None})"
        return [f"{step.out} = __import__('pickle').loads({dumped})"]
    if isinstance(step, ObserveFreed):
        return [
            "__import__('gc').collect()",
            "watch = type('Watch', (), {'__call__': lambda self, grad_inputs, grad_outputs: None})()",
            f"{step.tensor}.grad_fn.register_hook(watch)",
            "watch = __import__('weakref').ref(watch)",
            "__import__('gc').disable()",
            f"del {', '.join(step.drop)}",
            f"show_event('freed', {index}, tensor={step.tensor!r}, freed=watch() is None)",
            "__import__('gc').enable()",
        ]
    if isinstance(step, ApplyFunction):
        call = f"{step.function}{'()' if step.instance else '.apply'}({', '.join(map(_arg, step.inputs))})"
        return [f"{', '.join(step.outs)}, = _outputs({call})"]
    if isinstance(step, CallGradFn):
        return [f"{step.out} = {step.tensor}.grad_fn({', '.join(map(_arg, step.grads))})",
                f"show_result({index}, {step.out!r}, {step.out})"]
    if isinstance(step, DelAttr):
        return [f"del {step.tensor}.{step.attr}"]
    if isinstance(step, ObserveBackwardHooks):
        return [f"show_backward_hooks({index}, {step.tensor!r}, {step.tensor}._backward_hooks)"]
    if isinstance(step, AutogradFunctional):
        return _functional_lines(step, index)
    if isinstance(step, MultiGradHook):
        function = hook_function_name(step.hook)
        mode = "" if step.mode is None else f", mode={step.mode!r}"
        return [
            f"def {function}(grads):",
            f"    show_hook({step.hook!r}, {step.on()!r}, {','.join(step.tensors)!r}, grads=grads)",
            f"{step.hook} = torch.autograd.graph.register_multi_grad_hook("
            f"{_names(step.tensors)}, {function}{mode})",
        ]
    if isinstance(step, Gradcheck):
        return _gradcheck_lines(step, index)
    return None


def _gradcheck_lines(step: Gradcheck, index: int) -> list[str]:
    """``def f_<out>(i0, ...)`` (the Function applied first, the body), the seed, the call."""
    function = f"f_{step.out}"
    lines = [f"def {function}({', '.join(f'i{k}' for k in range(len(step.inputs)))}):"]
    if step.function is not None:
        used = [a.name for spec in step.body for a in spec["args"] if isinstance(a, Ref)] + step.outputs
        applied = {int(n[1:]) for n in used if re.fullmatch(r"a\d+", n)}
        inputs = ", ".join(f"i{k}" for k in range(len(step.inputs)))
        lines.append(f"    applied = _outputs({step.function}.apply({inputs}))")
        lines += [f"    a{k} = applied[{k}]" for k in range(max(applied, default=-1) + 1)]
    lines += ["    " + line for line in body_lines(step.body)]
    outputs = step.outputs[0] if len(step.outputs) == 1 else "(" + ", ".join(step.outputs) + ")"
    lines.append(f"    return {outputs}")
    args = [function, _arg(tuple(Ref(n) for n in step.inputs))]
    if step.grad_outputs is not None:
        args.append(_arg(tuple(Ref(n) for n in step.grad_outputs)))
    args += [f"{k}={_arg(v)}" for k, v in step.kwargs.items()]
    call = f"torch.autograd.{step.api}({', '.join(args)})"
    return [
        *lines,
        f"torch.manual_seed({step.seed})",
        f"{step.out} = gradcheck_masked({index}, {step.out!r}, lambda: {call})",
        f"show_event('gradcheck', {index}, name={step.out!r}, returned={step.out})",
    ]


def _functional_lines(step: AutogradFunctional, index: int) -> list[str]:
    """``def f_<out>(i0, ...)`` from the body, the call, and what the interpreter observes."""
    def grouped(names: list[str], as_tuple: bool) -> str:
        return _arg(tuple(Ref(n) for n in names)) if as_tuple else names[0]

    params = ", ".join(f"i{k}" for k in range(len(step.inputs)))
    function = f"f_{step.out}"
    args = [function, grouped(step.inputs, step.tuple_inputs)]
    if step.v is not None:
        args.append(grouped(step.v, step.v_is_tuple()))
    args += [f"{k}={v!r}" for k, v in step.kwargs.items()]
    return [
        f"def {function}({params}):",
        *("    " + line for line in body_lines(step.body)),
        f"    return {grouped(step.outputs, step.tuple_outputs)}",
        f"{step.out} = torch.autograd.functional.{step.api}({', '.join(args)})",
        f"show_result({index}, {step.out!r}, {step.out})",
    ]


def _saved_hooks_lines(step: SavedHooks) -> list[str]:
    """Enter the step's context (its name bound once entered, as the interpreter binds it); for
    saved_tensors_hooks, first define its logging hooks."""
    graph = "torch.autograd.graph"
    enter = ["context.__enter__()", f"{step.name} = context"]
    if step.context == "save_on_cpu":
        return [f"context = {graph}.save_on_cpu()", *enter]
    if step.context == "disable_saved_tensors_hooks":
        return [f"context = {graph}.disable_saved_tensors_hooks({step.name!r})", *enter]
    packed = "t.detach() * 2" if step.packing == "double" else "t.detach()"
    return [
        f"def pack_{step.name}(t):",
        f"    show_hook({step.name!r}, 'pack', '', tensor=t)",
        *(["    t.mul_(1)"] if step.packing == "in_place" else []),
        f"    return {packed}",
        f"def unpack_{step.name}(packed):",
        f"    show_hook({step.name!r}, 'unpack', '', tensor=packed)",
        f"    return {'1.0' if step.packing == 'number' else 'packed'}",
        f"context = {graph}.saved_tensors_hooks(pack_{step.name}, unpack_{step.name})",
        *enter,
    ]


def _grad_modes_left(program: Program) -> list[str]:
    """Leave the grad modes the program left open, latest first, as the interpreter does at the
    end of a run (so that scripts run one after another start alike)."""
    exited = {s.name for s in program.steps if isinstance(s, (ExitMode, ExitDevice, ExitAutocast))}
    entered = (GradMode, SavedHooks, DeviceMode, DualLevel, Autocast)
    still_open = [s.name for s in program.steps if isinstance(s, entered) and s.name not in exited]
    if not still_open:
        return []
    lines = ["# leave the grad modes still open"]
    for name in reversed(still_open):
        lines += ["try:", f"    {name}.__exit__(None, None, None)", "except NameError:", "    pass"]
    return lines


def _defaults_restored(program: Program) -> list[str]:
    """The default dtype and device back to torch's own where the program set them, as the
    interpreter restores them at the end of a run (so that scripts run one after another start
    alike)."""
    if not any(isinstance(s, Op) and s.op in DEFAULT_SETTERS for s in program.steps):
        return []
    restored = ["torch.set_default_dtype(torch.float32)", "torch.set_default_device(None)"]
    if any(isinstance(s, Op) and s.op in DETERMINISM_SETTERS for s in program.steps):
        restored.append("torch.use_deterministic_algorithms(False)")
    return ["# the defaults back to torch's", *restored]


def body_lines(ops: list[dict]) -> list[str]:
    """The statements computing ``ops`` (dicts ``{"out", "op", "args", "kwargs"}``), one per op."""
    return [line for spec in ops for line in _statements(Op(**spec), "cpu", -1)]


def _returned(names: list) -> str:
    values = [repr(n["const"]) if isinstance(n, dict) else "None" if n is None else n for n in names]
    return values[0] if len(values) == 1 else "(" + ", ".join(values) + ")"


def _function_lines(s: Function) -> list[str]:
    """``class <name>(torch.autograd.Function)`` as the interpreter builds it."""
    inputs = ", ".join(f"i{k}" for k in range(s.inputs))
    forward = body_lines(s.forward)
    if s.materialize_grads is not None:
        forward.append(f"ctx.set_materialize_grads({s.materialize_grads})")
    if s.materialize_non_diff_grads is not None:
        forward.append(f"ctx._materialize_non_diff_grads = {s.materialize_non_diff_grads}")
    forward.append(f"ctx.save_for_backward({', '.join(s.saves)})")
    if s.saves_for_forward:
        forward.append(f"ctx.save_for_forward({', '.join(s.saves_for_forward)})")
    if s.non_differentiable:
        forward.append(f"ctx.mark_non_differentiable({', '.join(s.non_differentiable)})")
    if s.dirty:
        forward.append(f"ctx.mark_dirty({', '.join(s.dirty)})")
    forward.append(f"return {_returned(s.outputs)}")
    needs = "f'needs_input_grad={tuple(bool(f) for f in ctx.needs_input_grad)}'"
    backward = [f"show_hook({s.name!r}, 'backward', {needs}, grads=grads)"]
    backward += [f"g{k} = grads[{k}]" for k in range(len(s.outputs))]
    # the interpreter reads saved_tensors even when nothing was saved (after release it raises)
    backward.append(f"{', '.join(s.saves)}, = ctx.saved_tensors" if s.saves else "ctx.saved_tensors")
    backward += body_lines(s.backward) + [f"return {_returned(s.grads)}"]
    static = [] if s.style == "legacy" else ["    @staticmethod"]  # legacy: plain methods
    decorators = list(static)
    if s.once_differentiable:
        decorators.append("    @torch.autograd.function.once_differentiable")
    name = "vjp" if s.style == "vjp" else "backward"
    return [
        f"class {s.name}(torch.autograd.Function):",
        *static,
        f"    def forward(ctx, {inputs}):",
        *("        " + line for line in forward),
        "",
        *decorators,
        f"    def {name}(ctx, *grads):",
        *("        " + line for line in backward),
        *(["", "    vjp = backward"] if s.style == "both" else []),
        *_jvp_lines(s),
    ]


def _jvp_lines(s: Function) -> list[str]:
    """A Function's ``jvp`` method, as the interpreter defines it (none without jvp ops)."""
    if s.jvp is None:
        return []
    shown = "[None if t is None else t.detach() for t in tangents]"
    jvp = ["show_hook(" + repr(s.name) + f", 'jvp', '', grads={shown})"]
    jvp += [f"t{k} = tangents[{k}]" for k in range(s.inputs)]
    saved = ", ".join(s.saves_for_forward)
    jvp.append(f"{saved}, = ctx.saved_tensors" if s.saves_for_forward else "ctx.saved_tensors")
    jvp += body_lines(s.jvp) + [f"return {_returned(s.tangents)}"]
    return ["", "    @staticmethod", "    def jvp(ctx, *tangents):", *("        " + line for line in jvp)]


def _grad_lines(step: Grad) -> list[str]:
    kwargs = []
    if step.grad_outputs is not None:
        kwargs.append(f"grad_outputs={_names(step.grad_outputs)}")
    if step.retain_graph is not None:
        kwargs.append(f"retain_graph={step.retain_graph}")
    if step.create_graph:
        kwargs.append("create_graph=True")
    if step.allow_unused is not None:
        kwargs.append(f"allow_unused={step.allow_unused}")
    if step.materialize_grads:
        kwargs.append("materialize_grads=True")
    if not step.only_inputs:
        kwargs.append("only_inputs=False")
    if step.is_grads_batched:
        kwargs.append("is_grads_batched=True")
    call = ", ".join([_names(step.outputs), _names(step.inputs), *kwargs])
    lines = [f"{', '.join(step.outs)}, = torch.autograd.grad({call})"]
    lines += [f'print(f"{name} = {{text({name})}}")' for name in step.outs]
    return lines


def _action_expr(action: Action, value: str) -> str | None:
    """The expression a hook returns for ``value`` under ``action`` (None: returns nothing).
    ``value`` names one tensor, or a tuple of tensors/None when it is one of ``_TUPLES``."""
    one = {
        "scale": "{v} * " + repr(action.value),
        "replace": "torch.full_like({v}, " + repr(action.value) + ")",
        "wrong_shape": "torch.zeros({v}.numel() + 1, dtype={v}.dtype, device={v}.device)",
        "wrong_dtype": "{v}.to(torch.float32 if {v}.dtype == torch.float64 else torch.float64)",
    }.get(action.kind)
    if action.kind == "wrong_count":
        return f"(*{value}, None)" if value in _TUPLES else f"({value}, None)"
    if one is None:
        return None
    if value in _TUPLES:
        return f"tuple(None if g is None else {one.format(v='g')} for g in {value})"
    return one.format(v=value)


_TUPLES = {"grad_inputs", "grad_outputs", "tuple(args)", "tuple(grad_output)", "tuple(grad_input)"}


def _post_accumulate_return(action: Action) -> list[str]:
    """A post-accumulate-grad hook edits ``.grad`` in place for scale/replace (see ``Action``)."""
    if action.kind == "scale":
        return [f"param.grad.mul_({action.value!r})"]
    if action.kind == "replace":
        return [f"param.grad.fill_({action.value!r})"]
    expr = _action_expr(action, "param.grad")
    return [] if expr is None else [f"return {expr}"]


def _hook_def(
    hook: str,
    on: str,
    target: str,
    params: str,
    received: str,
    value: str,
    action: Action,
    returned: list[str] | None,
) -> list[str]:
    """``def hook_<id>(...)``: print what it received, then do its action."""
    lines = [
        f"def {hook_function_name(hook)}({params}):",
        f"    show_hook({hook!r}, {on!r}, {target!r}, {received})",
    ]
    if returned is None:
        expr = _action_expr(action, value)
        returned = [] if expr is None else [f"return {expr}"]
    return lines + ["    " + line for line in returned]


# -- module families: module trees, module hooks, module API, optimisers --------------------------
def _module_statements(step: Step, dev: str, index: int) -> list[str] | None:
    """The script lines of the module-family steps (None: not one of them)."""
    if isinstance(step, Module):
        return _module_lines(step, dev)
    if isinstance(step, CallModule):
        args = [*step.inputs, *(f"{k}={v}" for k, v in step.kwargs.items())]
        return [f"{step.out} = {step.module}({', '.join(args)})"]
    if isinstance(step, ModuleHook):
        register = f"{step.module}.{MODULE_HOOK_REGISTRATION[step.on]}"
        target = repr(step.module)
    elif isinstance(step, GlobalModuleHook):
        register = f"torch.nn.modules.module.register_module_{step.on}_hook"
        target = "next((n for n, v in globals().items() if v is module), '?')"
    elif isinstance(step, StateDictHook):
        function = hook_function_name(step.hook)
        flags = ", with_module=True" if step.with_module else ""
        define = state_dict_hook_source(function, step.hook, step.on, step.module, step.action,
                                        step.with_module)
        return [*define, f"{step.hook} = {step.module}.{STATE_DICT_HOOKS[step.on][0]}({function}{flags})"]
    elif isinstance(step, StateDict):
        kwargs = ", ".join(f"{k}={v!r}" for k, v in step.kwargs().items())
        return [f"{step.name} = {step.module}.state_dict({kwargs})",
                f"show_state_dict({index}, {step.name!r}, {step.name})"]
    elif isinstance(step, LoadStateDict):
        args = ", ".join([step.source, *(f"{k}={v!r}" for k, v in step.kwargs().items())])
        return [f"result = {step.module}.load_state_dict({args})",
                f"show_loaded({index}, {step.module!r}, result)"]
    elif isinstance(step, ModuleMode):
        return [f"{step.module}.{'train' if step.train else 'eval'}()"]
    elif isinstance(step, ModuleZeroGrad):
        return [f"{step.module}.zero_grad(set_to_none={step.set_to_none})"]
    elif isinstance(step, ModuleRequiresGrad):
        return [f"{step.module}.requires_grad_({step.requires_grad})"]
    elif isinstance(step, ObserveModule):
        m = step.module
        return [
            f"show_event('module', {index}, name={m!r},",
            "           parameters=[[n, list(p.shape), p.requires_grad]",
            f"                       for n, p in {m}.named_parameters()],",
            f"           state_dict=list({m}.state_dict()),",
            f"           training=[[n, s.training] for n, s in {m}.named_modules()],",
            f"           repr=repr({m}))",
        ]
    elif isinstance(step, ManualSeed):
        return [f"torch.manual_seed({step.seed})"]
    elif isinstance(step, ObserveRepr):
        return [f"show_event('repr', {index}, name={step.module!r}, repr=repr({step.module}))"]
    elif isinstance(step, Optimizer):
        kwargs = "".join(f", {k}={_arg(v)}" for k, v in step.kwargs.items())
        params = _names(step.params) if step.module is None else f"{step.module}.parameters()"
        return [f"{step.name} = torch.optim.{step.cls}({params}{kwargs})"]
    elif isinstance(step, AssignAttr):
        if step.attr.isidentifier():
            return [f"{step.module}.{step.attr} = {step.value}"]
        return [f"setattr({step.module}, {step.attr!r}, {step.value})"]
    elif isinstance(step, OptimizerStep):
        return [f"{step.optimizer}.step()"]
    elif isinstance(step, OptimizerZeroGrad):
        return [f"{step.optimizer}.zero_grad(set_to_none={step.set_to_none})"]
    elif isinstance(step, Scheduler):
        kwargs = "".join(f", {k}=lambda epoch: {v}" if k == "lr_lambda" else f", {k}={_arg(v)}"
                         for k, v in step.kwargs.items())
        if step.cls == "ChainedScheduler":
            made = f"[{', '.join(step.schedulers)}], optimizer={step.optimizer}"
            return [f"{step.name} = torch.optim.lr_scheduler.ChainedScheduler({made})"]
        if step.schedulers:
            kwargs = f", schedulers=[{', '.join(step.schedulers)}]{kwargs}"
        return [f"{step.name} = torch.optim.lr_scheduler.{step.cls}({step.optimizer}{kwargs})"]
    elif isinstance(step, SchedulerStep):
        args = ", ".join(f"{k}={_arg(v)}" for k, v in step.kwargs().items())
        return [f"{step.scheduler}.step({args})"]
    elif isinstance(step, ObserveScheduler):
        return [f"show_scheduler({index}, {step.scheduler!r}, {step.scheduler})"]
    else:
        return None
    flags = "".join(f", {k}=True" for k in step.flags())
    return _module_hook_def(step.hook, step.on, target, step.with_kwargs, step.action) + [
        f"{step.hook} = {register}({hook_function_name(step.hook)}{flags})"
    ]


def _module_hook_def(hook: str, on: str, target: str, with_kwargs: bool, action: Action) -> list[str]:
    """``def hook_<id>(module, ...)`` of a module hook: print what it received (``target`` is the
    expression naming the module), then return what ``action`` makes of it (as the interpreter)."""
    kwargs = ", kwargs" if with_kwargs else ""
    kwarg_groups = ', **{f"kwarg_{k}": v for k, v in kwargs.items()}' if with_kwargs else ""
    params, received, value = {
        "forward_pre": (f"module, args{kwargs}", f"args=args{kwarg_groups}", "tuple(args)"),
        "forward": (f"module, args{kwargs}, output", f"args=args{kwarg_groups}, output=output", "output"),
        "full_backward_pre": ("module, grad_output", "grad_output=grad_output", "tuple(grad_output)"),
    }.get(on, ("module, grad_input, grad_output", "grad_input=grad_input, grad_output=grad_output",
               "tuple(grad_input)"))
    lines = [
        f"def {hook_function_name(hook)}({params}):",
        f"    show_hook({hook!r}, {on!r}, {target}, {received})",
    ]
    expr = _action_expr(action, value)
    if expr is None:
        return lines
    if on == "forward":
        expr = f"None if output is None else {expr}"
    elif on == "forward_pre" and with_kwargs:
        expr = f"({expr}, {{k: {_action_expr(action, 'v')} for k, v in kwargs.items()}})"
    return lines + [f"    return {expr}"]


def _module_lines(step: Module, dev: str) -> list[str]:
    """The tree built bottom-up, one variable per node (the custom classes it uses defined first),
    parameters set from the program's values."""
    nodes = module_nodes(step)
    custom = [c for c in CUSTOM_MODULES if any(n.cls == c for n in nodes)]
    lines = [line for c in custom for line in CUSTOM_MODULES[c].strip("\n").split("\n") + [""]]
    for node in nodes:
        to_device = ".to(DEVICE)" if dev and CHILDREN.get(node.cls) is None else ""
        lines.append(f"{node.alias} = {_constructor(node)}{to_device}")
        if node.param_names:
            lines.append("with torch.no_grad():")
        for pname in node.param_names:
            data = _arg(node.params[pname]) if pname in node.params else "None"
            param = f"{node.alias}.{pname}"
            lines.append(f"    {param}.copy_(torch.tensor({data}, dtype={param}.dtype{dev}))")
    return lines


def _constructor(node: ModuleNode) -> str:
    holds = CHILDREN.get(node.cls)
    prefix = "" if node.cls in CUSTOM_MODULES else "torch.nn."
    if holds is None:
        args = [_arg(a) for a in node.args] + [f"{k}={_arg(v)}" for k, v in node.kwargs.items()]
    elif node.cls == "ModuleList":
        args = [_names(node.children)]
    elif node.cls == "ModuleDict":
        args = ["{" + ", ".join(f"{k!r}: {a}" for k, a in node.children.items()) + "}"]
    else:
        args = list(node.children if holds == "list" else node.children.values())
    return f"{prefix}{node.cls}({', '.join(args)})"


def _global_hooks_removed(program: Program) -> list[str]:
    """The script's last lines: global module hooks are removed, as the interpreter does, so that
    they cannot fire in whatever runs next in the same process."""
    hooks = [s.hook for s in program.steps if isinstance(s, GlobalModuleHook)]
    if not hooks:
        return []
    return ["# the program ends: its global module hooks are removed", *(f"{h}.remove()" for h in hooks), ""]
