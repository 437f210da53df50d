"""Self-tests of rendering: the repro script runs with real torch and prints the reference trace."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracle.interpreter import run
from oracle.program import (
    Action,
    ApplyFunction,
    Autocast,
    AutogradFunctional,
    Backward,
    CallGradFn,
    CallModule,
    DelAttr,
    DeviceMode,
    DType,
    DualLevel,
    ExitAutocast,
    ExitDevice,
    ExitMode,
    Function,
    Grad,
    Gradcheck,
    Leaf,
    LoadStateDict,
    MakeDual,
    MemoryFormat,
    Module,
    ModuleHook,
    MultiGradHook,
    Observe,
    ObserveBackwardHooks,
    ObserveDefaults,
    ObserveFreed,
    ObserveGraph,
    ObserveLayout,
    ObservePlain,
    ObserveSaved,
    Op,
    Pickled,
    Program,
    Ref,
    RegisterHook,
    RemoveHook,
    RetainGrad,
    SavedHooks,
    StateDict,
    StateDictHook,
    UnpackDual,
    ZeroGrad,
)
from oracle.reference import reference
from oracle.render import render
from oracle.strategies import programs
from oracle.trace import MAX_GRAPH_NODES, ONCE_PER_PROCESS, normalise
from tests.oracle.test_trace import seed_000_hooks

TORCH = reference()

EVERY_KIND = Program(
    [
        Leaf("x", [1.0, 2.0], requires_grad=True),
        Op("y", "mul", [Ref("x"), 2.0]),
        RetainGrad("y"),
        RegisterHook("h0", "y"),
        RegisterHook("h1", "y", action=Action("scale", 3.0)),
        RegisterHook("h2", "y", "grad_fn", Action("replace", 1.0)),
        RegisterHook("h3", "y", "grad_fn_pre", Action("wrong_dtype")),
        Op("s", "sum", [Ref("y")]),
        Backward("s", retain_graph=True),
        Observe("x"),
        Observe("y"),
        RemoveHook("h3"),
        Backward("s"),
        Backward("s"),
        ZeroGrad("x", set_to_none=False),
        Module("m", "Linear", [2, 1], {"weight": [[1.0, 2.0]], "bias": [0.5]}),
        ModuleHook("mh", "m", "full_backward", Action("scale", 2.0)),
        ModuleHook("mf", "m", "forward"),
        CallModule("o", "m", ["x"]),
        Op("o2", "sum", [Ref("o")]),
        Grad(["g1", "g2"], ["o2"], ["x", "m.bias"], retain_graph=True),
        RegisterHook("h4", "x", "post_accumulate_grad", Action("replace", 7.0)),
        Backward("o2"),
        Observe("x"),
        Observe("m.weight"),
        Leaf("n", [float("nan"), float("inf")], "float64"),
        Observe("n"),
        Leaf("i", [1, 2], "int64", requires_grad=True),  # torch refuses: ints cannot require grad
        Leaf("u", [1.0], requires_grad=True),
        Grad(["gu"], ["o2"], ["u"], allow_unused=True),  # gu is None
        Observe("gu"),  # reading None.grad raises
        ObserveGraph("o2"),
        ObserveGraph("x"),
        ObserveGraph("gu"),  # None has no grad_fn: raises
        Leaf("v", [1.0, 2.0], requires_grad=True),
        Op("v2", "mul", [Ref("v"), Ref("v")]),
        Leaf("w", [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),  # a batch of three grad_outputs
        Grad(["gv"], ["v2"], ["v"], ["w"], retain_graph=True, is_grads_batched=True),
        Op("vs", "sum", [Ref("v2")]),
        Grad(["gs"], ["vs"], ["v"], only_inputs=False),  # deprecated: a FutureWarning
    ]
)


def _linear(value: float) -> dict:
    params = {"weight": [[value, -value], [1.0, 2.0]], "bias": [value, 0.0]}
    return {"cls": "Linear", "args": [2, 2], "params": params}


# State-dict hooks of every kind and action on two trees; state dicts saved with a prefix and kept
# vars, loaded strict and not, assigning, refused by a hook, and hooks that edit what they receive.
STATE_DICTS = Program(
    [
        *(Module(name, "Sequential", children=[_linear(v), {"cls": "Sequential", "children": [_linear(-v)]}])
          for name, v in (("a", 0.5), ("b", -1.5))),
        StateDictHook("h1", "a", "state_dict_pre"),
        StateDictHook("h2", "a_1", "state_dict_post", "edit"),
        StateDictHook("h3", "a", "_state_dict", "return"),
        StateDictHook("h4", "b", "load_state_dict_pre", "edit"),
        StateDictHook("h5", "b_1", "_load_state_dict_pre", with_module=True),
        StateDictHook("h6", "b_1_0", "_load_state_dict_pre", "refuse"),
        StateDictHook("h7", "b_1", "load_state_dict_post", "edit"),
        StateDictHook("h8", "b", "load_state_dict_post", "return"),
        StateDict("sd", "a", keep_vars=True),
        LoadStateDict("b", "sd", strict=False),
        RemoveHook("h6"),
        RemoveHook("h8"),
        LoadStateDict("b", "sd", assign=True),
        StateDict("sd2", "b", prefix="p."),
        LoadStateDict("b_1", "sd2"),
        StateDictHook("h9", "a", "state_dict_post", "return"),
        StateDict("sd3", "a"),
    ]
)


_CUBE = [{"out": "q", "op": "mul", "args": [Ref("i0"), Ref("i0")], "kwargs": {}},
         {"out": "c", "op": "mul", "args": [Ref("q"), Ref("i1")], "kwargs": {}},
         {"out": "s", "op": "sum", "args": [Ref("c")], "kwargs": {}}]
# torch.autograd.functional's six APIs: tuples and lone tensors, create_graph, strict (refusing),
# vectorize, and a v of the wrong size
FUNCTIONALS = Program(
    [
        Leaf("x", [1.0, 2.0], "float64", True),
        Leaf("y", [0.5, -1.0], "float64"),
        Leaf("v", [1.0, -1.0], "float64"),
        AutogradFunctional("a", "vjp", _CUBE, ["c", "s"], ["x", "y"], ["v", "x"]),
        AutogradFunctional("b", "vjp", _CUBE, ["c", "s"], ["x", "y"], ["v", "y"],
                           kwargs={"create_graph": True}),
        AutogradFunctional("c", "jvp", _CUBE[:2], ["c"], ["x", "y"], ["v", "y"], tuple_outputs=False),
        AutogradFunctional("d", "jacobian", _CUBE[:2], ["c", "q"], ["x", "y"], kwargs={"vectorize": True}),
        AutogradFunctional("e", "hessian", _CUBE, ["s"], ["x", "y"], tuple_outputs=False),
        AutogradFunctional("f", "hvp", _CUBE, ["s"], ["x", "y"], ["v", "y"], tuple_outputs=False,
                           kwargs={"strict": True}),
        AutogradFunctional("g", "vhp", [_CUBE[0], {**_CUBE[2], "args": [Ref("q")]}],
                           ["s"], ["x", "y"], ["v", "y"], tuple_outputs=False, kwargs={"strict": True}),
    ]
)


# saved-tensor hooks (nested, doubling, save_on_cpu, refused while disabled) and grad_fn._saved_*
SAVED = Program(
    [
        Leaf("x", [1.0, 2.0], "float64", True),
        Leaf("y", [0.5, -1.0], "float64", True),
        SavedHooks("h", packing="double"),
        SavedHooks("c", "save_on_cpu"),
        Op("p", "mul", [Ref("x"), Ref("y")]),
        ExitMode("c"),
        Op("q", "exp", [Ref("p")]),
        ExitMode("h"),
        SavedHooks("d", "disable_saved_tensors_hooks"),
        SavedHooks("n", packing="number"),
        Op("s", "sum", [Ref("q")]),
        ObserveSaved("q"),
        Backward("s"),
        Observe("x"),
        ObserveSaved("q"),
        Op("r", "clone", [Ref("x")]),
        Op("v", "select", [Ref("r"), 0, 1]),
        Op("w", "relu_", [Ref("v")]),
        Op("t", "tanh", [Ref("r")]),
        ObserveFreed("r", ["r", "v", "w", "t"]),
        Pickled("pk", "x", "pickle0"),
        Pickled("cp", "x", "copy"),
        Observe("pk"),
        Observe("cp"),
        Op("e0", "_C._autograd._saved_tensors_hooks_is_enabled"),
        Op("u", "_C._functions.UndefinedGrad"),
        Op("uc", "_C._functions.UndefinedGrad.__call__", [Ref("u"), Ref("x")]),
        Observe("uc"),
    ]
)


# forward AD: a dual tensor, ops on it (a view's in-place op reaching its base), tangents unpacked
# inside and after the level, a nested level and a tangent of another size refused
FORWARD_AD = Program(
    [
        Leaf("x", [[1.0, 2.0], [0.5, -1.0]], "float64", True),
        Leaf("t", [[0.5, 1.0], [-1.0, 2.0]], "float64"),
        Leaf("w", [1.0, 2.0, 3.0], "float64"),
        DualLevel("L"),
        MakeDual("d", "x", "t"),
        Op("p", "mm", [Ref("d"), Ref("x")]),
        Op("q", "exp", [Ref("p")]),
        Op("c", "clone", [Ref("d")]),
        Op("v", "__getitem__", [Ref("c"), 0]),
        Op("v2", "mul_", [Ref("v"), 3.0]),
        # a custom Function's jvp reading what save_for_forward kept
        Function(
            "Sq", 2, [{"out": "h", "op": "mul", "args": [Ref("i0"), Ref("i0")]}], ["h"], [], [None, None],
            jvp=[{"out": "b", "op": "mul", "args": [Ref("t0"), Ref("i0")]}], tangents=["b"],
            saves_for_forward=["i0"],
        ),
        ApplyFunction(["f"], "Sq", [Ref("d"), 3.0]),
        UnpackDual("uf", "f"),
        UnpackDual("u", "q"),
        UnpackDual("uc", "c"),
        UnpackDual("ux", "x"),
        MakeDual("bad", "x", "w"),
        DualLevel("M"),
        ExitMode("L"),
        UnpackDual("after", "q"),
    ]
)


# multi-grad hooks of both modes (a removed one, a refused mode) and gradcheck calls: passing, a
# wrong custom backward failing in slow and fast mode (its numbers masked), not raising, float32
def _mul(out: str, a: str, b: object) -> dict:
    return {"out": out, "op": "mul", "args": [Ref(a), Ref(b) if isinstance(b, str) else b], "kwargs": {}}


MULTI_GRAD_AND_GRADCHECK = Program(
    [
        Leaf("x", [0.5, -1.0, 2.0], "float64", True),
        Leaf("y", [1.5, 2.0, 0.25], "float64", True),
        Op("c", "mul", [Ref("x"), Ref("y")]),
        MultiGradHook("h", ["x", "y", "c"]),
        MultiGradHook("k", ["x", "c"], "any"),
        Op("s", "sum", [Ref("c")]),
        Backward("s", retain_graph=True, inputs=["x"]),
        Grad(["g"], ["s"], ["c"], retain_graph=True),
        RemoveHook("h"),
        RemoveHook("k"),
        Backward("s"),
        MultiGradHook("bad", ["x"], "some"),
        Function("Sq", 1, [_mul("o", "i0", "i0")], ["o"], [_mul("b", "g0", "i0"), _mul("w", "b", 2.1)], ["w"],
                 saves=["i0"]),
        Gradcheck("slow", "gradcheck", [], ["a0"], ["x"], function="Sq"),
        Gradcheck("fast", "gradcheck", [_mul("e", "a0", 3.0)], ["e"], ["x"], function="Sq",
                  kwargs={"fast_mode": True}),
        Gradcheck("gg", "gradgradcheck", [_mul("e", "i0", "i1")], ["e", "i1"], ["x", "y"],
                  kwargs={"fast_mode": True}),
        Gradcheck("quiet", "gradcheck", [], ["a0"], ["x"], function="Sq", kwargs={"raise_exception": False}),
        Leaf("z", [1.0, 2.0], "float32", True),
        Gradcheck("f32", "gradcheck", [_mul("e", "i0", 2.0)], ["e"], ["z"], kwargs={"atol": 0.1}),
    ]
)


# Functions of every style, called as apply and as legacy instances; mark_dirty on an outside view;
# grad_fn calls with several argument counts; del of tensor attributes
_DOUBLE = [{"out": "f0", "op": "mul", "args": [Ref("i0"), 2.0], "kwargs": {}}]
_DIRTY = [{"out": "f0", "op": "mul_", "args": [Ref("i0"), 2.0], "kwargs": {}}]
FUNCTIONS = Program(
    [
        Leaf("x", [1.0, 2.0], "float64", True),
        *(Function(f"F{style}", 1, _DOUBLE, ["f0"], [], ["g0"], style=style)
          for style in ("static", "legacy", "vjp", "both")),
        *(step for style in ("static", "legacy", "vjp", "both") for step in (
            ApplyFunction([f"o{style}"], f"F{style}", [Ref("x")]), Op(f"s{style}", "sum", [Ref(f"o{style}")]),
            Backward(f"s{style}"))),
        ApplyFunction(["oi"], "Fstatic", [Ref("x")], instance=True),
        Op("b", "mul", [Ref("x"), 1.0]),
        Op("v", "narrow", [Ref("b"), 0, 0, 1]),
        Function("D", 1, _DIRTY, ["f0"], [], [None], dirty=["f0"], materialize_non_diff_grads=False),
        ApplyFunction(["d"], "D", [Ref("v")]),
        ObserveGraph("b"),
        ObserveGraph("d"),
        Leaf("g", [1.0, 1.0], "float64"),
        Op("m", "mul", [Ref("x"), Ref("x")]),
        CallGradFn("c1", "m", [Ref("g")]),
        CallGradFn("c0", "m", []),
        CallGradFn("cn", "m", [1.0]),
        CallGradFn("cf", "ostatic", [Ref("g")]),
        ObserveBackwardHooks("m"),
        ObserveBackwardHooks("x"),
        DelAttr("x", "grad"),
        DelAttr("x", "_grad_fn"),
        DelAttr("m", "is_leaf"),
        Observe("x"),
        Observe("b"),
    ]
)


# the defaults (API-003): set_default_dtype (refused, then float64), a device block left and one
# left open, factory calls under them; the script restores the defaults at its end
DEFAULTS = Program(
    [
        ObserveDefaults(),
        Op("s0", "set_default_dtype", [DType("int64")]),
        Op("s1", "set_default_dtype", [DType("float64")]),
        Op("s2", "set_default_device", ["cpu"]),
        DeviceMode("d0", "cpu"),
        DeviceMode("d1", "cpu:0"),
        Op("f", "logspace", [0, 2, 3]),
        Op("t", "tensor", [[1, 2.5]]),
        ExitDevice("d1"),
        ObserveDefaults(),
        Observe("f"),
        Observe("t"),
    ]
)


# issue 22's steps: memory formats, results that are no tensor, autocast blocks, a GradScaler
PERF = Program(
    [
        Leaf("x", [[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]], "float32", True),
        Op("c", "contiguous", [Ref("x")], {"memory_format": MemoryFormat("channels_last")}),
        ObserveLayout("c"),
        Op("q", "is_contiguous", [Ref("c")], {"memory_format": MemoryFormat("channels_last")}),
        ObservePlain("q"),
        Op("p", "get_float32_matmul_precision", []),
        ObservePlain("p"),
        Autocast("ac", "cpu", "bfloat16", None, "amp.autocast"),
        Autocast("cu", "cuda"),
        Op("m", "matmul", [Ref("x"), Ref("x")]),
        ExitAutocast("cu", "cuda"),
        Op("t", "sum", [Ref("m")]),
        Op("s", "amp.GradScaler", ["cpu"], {"init_scale": 4.0}),
        Op("l", "scale", [Ref("s"), Ref("t")]),
        Backward("l"),
        Observe("m"),
        Observe("x"),
    ]
)
DEFAULTS = Program([*DEFAULTS.steps, *PERF.steps])  # (one script: a subprocess costs ~2 s)


def run_script(script: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)


def expected_output(program: Program) -> tuple[str, dict[str, int]]:
    """The reference trace as the script should print it, and its warning counts by category."""
    trace = run(program, TORCH)
    pairs = zip(trace.events, trace.lines(), strict=True)
    lines = [line for event, line in pairs if event["kind"] != "warning"]
    warnings: dict[str, int] = {}
    for event in trace.events:
        if event["kind"] == "warning" and not event.get("once"):
            warnings[event["category"]] = warnings.get(event["category"], 0) + 1
    return "".join(line + "\n" for line in lines), warnings




def assert_script_reproduces(program: Program) -> None:
    done = run_script(render(program))
    assert done.returncode == 0, done.stderr
    stdout, warnings = expected_output(program)
    assert normalise(done.stdout) == stdout
    shown = sum(done.stderr.count(f": {category}: ") for category in warnings)
    # (once-per-process warnings are counted out of the categories counted only)
    once = sum(done.stderr.count(f": {c}: {m}") for c in warnings for m in ONCE_PER_PROCESS)
    assert shown - once == sum(warnings.values()), done.stderr


@pytest.mark.parametrize(
    "program",
    [
        *(EVERY_KIND, seed_000_hooks(), STATE_DICTS, FUNCTIONALS, SAVED, MULTI_GRAD_AND_GRADCHECK, FUNCTIONS),
        DEFAULTS,
        FORWARD_AD,
    ],
    ids=[
        *("every-kind", "seed-000", "state-dicts", "functionals", "saved", "gradcheck", "functions"),
        "defaults",
        "forward-ad",
    ],
)
def test_rendered_script_prints_the_reference_trace(program: Program) -> None:
    assert_script_reproduces(program)


def test_rendered_graph_stops_where_the_trace_does() -> None:
    """A graph longer than MAX_GRAPH_NODES: the script prints the same truncated graph as the trace."""
    chain: list = [Leaf("y0", [1.0], requires_grad=True)]
    chain += [Op(f"y{i + 1}", "mul", [Ref(f"y{i}"), 2.0]) for i in range(MAX_GRAPH_NODES + 5)]
    assert_script_reproduces(Program([*chain, ObserveGraph(f"y{MAX_GRAPH_NODES + 5}")]))


def test_script_shows_errors_and_warnings_of_the_reference() -> None:
    done = run_script(render(EVERY_KIND))
    assert "step 13 raised RuntimeError: Trying to backward through the graph a second time" in done.stdout
    assert "UserWarning: The .grad attribute" not in done.stderr  # y retains its grad
    assert "hook h2 (grad_fn on y): grad_inputs=[" in done.stdout
    assert "raised RuntimeError: Only Tensors of floating point" in done.stdout
    assert "raised AttributeError: 'NoneType' object has no attribute 'grad'" in done.stdout


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(programs(), min_size=6, max_size=6))
def test_rendered_generated_programs_reproduce_the_reference(batch: list[Program]) -> None:
    """Several generated programs in one script (one torch start-up); programs whose trace has a
    skipped step are left out (the script would raise NameError there instead)."""
    kept = [p for p in batch if all(e["kind"] != "skipped" for e in run(p, TORCH).events)]
    scripts = [render(p) for p in kept]
    expected = [expected_output(p)[0] for p in kept]
    done = run_script("\nprint('=====')\n".join(scripts))
    assert done.returncode == 0, done.stderr
    assert normalise(done.stdout).split("=====\n") == expected


def test_render_uses_the_device_and_rejects_unrenderable_names() -> None:
    script = render(Program([Leaf("x", [1.0])]), device="cuda")
    assert "DEVICE = 'cuda'" in script and "device=DEVICE" in script
    with pytest.raises(ValueError):
        render(Program([Leaf("not a name", [1.0])]))
    with pytest.raises(ValueError):
        render(Program([Leaf("torch", [1.0])]))


def test_script_defines_only_the_helpers_it_calls() -> None:
    """A repro carries the helpers its statements call (and the helpers those call), no others."""
    from oracle.program import ObserveLayout

    def defined(script: str) -> set[str]:
        return {line[4:].split("(")[0] for line in script.splitlines() if line.startswith("def ")}

    leaf_only = render(Program([Leaf("x", [1.0]), Observe("x")]))
    assert defined(leaf_only) == {"text", "show_error", "observe"}
    layout = render(Program([Leaf("x", [1.0]), ObserveLayout("x")]))
    assert defined(layout) == {"show_error", "show_layout", "show_event"}
    hooks = render(seed_000_hooks())
    assert {"show_hook", "texts", "text"} <= defined(hooks)
    assert not {"show_event", "show_layout", "show_array", "show_grad_mode", "_outputs"} & defined(hooks)


def test_seeded_dropout_and_printed_forms_render_as_the_reference_trace() -> None:
    """manual_seed and observe_repr: the script draws torch's masks and prints the module's text."""
    from oracle.program import ManualSeed, ModuleMode, ObserveRepr

    children = [{"cls": "Unflatten", "args": [1, [2, 3]]}, {"cls": "Dropout2d", "kwargs": {"p": 0.5}},
                {"cls": "Flatten"}]
    assert_script_reproduces(Program([
        ManualSeed(3), Leaf("x", [[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]] * 2, requires_grad=True),
        Module("m", "Sequential", children=children), ObserveRepr("m"), CallModule("y", "m", ["x"]),
        ModuleMode("m", False), ObserveRepr("m_1"), CallModule("z", "m", ["x"]), Observe("y"), Observe("z"),
    ]))
