"""Self-tests of the module-family steps: JSON round trip, validation, rendering (the repro prints
the reference trace), global hooks removed at the end of a program, and a planted fault (full
backward hooks receiving grad_output in place of grad_input) caught by the module hook family."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import torch
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from conformance.test_module_hooks import BACKWARD, hooked_trees, seed_004
from conformance.test_modules import LOSS_CASES, losses, trees
from conformance.test_optim import training_loops
from oracle.backends import InProcess, load_backend
from oracle.differential import DivergenceError, check
from oracle.interpreter import run
from oracle.program import (
    Action,
    Backward,
    CallModule,
    GlobalModuleHook,
    Leaf,
    Module,
    ModuleHook,
    ModuleMode,
    ModuleRequiresGrad,
    ModuleZeroGrad,
    Observe,
    ObserveModule,
    Op,
    Optimizer,
    OptimizerStep,
    OptimizerZeroGrad,
    Program,
    Ref,
    RemoveHook,
)
from oracle.reference import reference
from oracle.render import render
from oracle.trace import normalise
from tests.oracle.test_render import assert_script_reproduces, expected_output, run_script

TORCH = reference()

LINEAR = {"cls": "Linear", "args": [2, 2], "params": {"weight": [[1.0, -1.0], [0.5, 2.0]], "bias": [0.5, 0]}}
SIGMOIDS = {"cls": "ModuleList", "children": [{"cls": "Sigmoid"}]}
EVERY_MODULE_KIND = Program(
    [
        Leaf("x", [[1.0, 2.0]], requires_grad=True),
        Module(
            "net",
            "Sequential",
            children=[
                LINEAR,
                {"cls": "Residual", "children": {"body": {"cls": "Tanh"}}},
                {"cls": "Stack", "children": {"layers": SIGMOIDS}},
                {"cls": "Router", "children": {"branches": {"cls": "ModuleDict", "children": {"a": LINEAR}}}},
                {"cls": "TwoBranch", "children": {"left": {"cls": "Identity"}, "right": {"cls": "ReLU"}}},
                {"cls": "Twice", "children": {"body": {"cls": "Dropout", "kwargs": {"p": 0.0}}}},
            ],
        ),
        GlobalModuleHook("g1", "forward", Action("log"), with_kwargs=True, always_call=True),
        GlobalModuleHook("g2", "full_backward_pre"),
        ModuleHook("h1", "net_0", "forward_pre", Action("scale", 2.0), prepend=True),
        ModuleHook("h2", "net_2_layers_0", "full_backward", Action("replace", 1.0)),
        ModuleHook("h3", "net_3_branches_a", "backward", Action("wrong_count")),
        ModuleHook("h4", "net", "forward_pre", Action("scale", 0.5), with_kwargs=True),
        ModuleRequiresGrad("net_3", False),
        CallModule("o", "net", [], {"input": "x"}),
        RemoveHook("h3"),
        Op("s", "sum", [Ref("o")]),
        Backward("s"),
        ObserveModule("net"),
        ModuleMode("net_1", False),
        ObserveModule("net"),
        Observe("net_0.weight"),
        Module("loss", "CrossEntropyLoss", kwargs={"reduction": "sum"}),
        Leaf("y", [1], "int64"),
        CallModule("l", "loss", ["o", "y"]),
        Optimizer("opt", "Adam", ["net_0.weight", "net_0.bias"], {"lr": 0.1, "amsgrad": True}),
        OptimizerStep("opt"),
        OptimizerZeroGrad("opt", set_to_none=False),
        ModuleZeroGrad("net"),
        Observe("net_0.weight"),
        Observe("net_0.bias"),
        ModuleRequiresGrad("net", True),
        ObserveModule("net"),
    ]
)


def test_every_module_step_round_trips_through_json() -> None:
    assert Program.from_json(EVERY_MODULE_KIND.to_json()) == EVERY_MODULE_KIND


def test_trees_bind_every_node_and_parameter() -> None:
    names = EVERY_MODULE_KIND.steps[1].names_bound()
    assert names[:3] == ["net_0", "net_0.weight", "net_0.bias"] and names[-1] == "net"
    nested = {"net_1_body", "net_2_layers", "net_2_layers_0", "net_3_branches_a.weight", "net_5_body"}
    assert nested <= set(names)
    assert Module("m", "Linear", [2, 2], kwargs={"bias": False}).names_bound() == ["m", "m.weight"]


@pytest.mark.parametrize(
    "make",
    [
        lambda: Module("m", "Sequential", children={"a": LINEAR}),  # Sequential takes a list
        lambda: Module("m", "Residual", children={"left": LINEAR}),  # Residual holds "body"
        lambda: Module("m", "ReLU", children=[LINEAR]),
        lambda: Module("m", "Linear", params={"bias": [1.0]}, kwargs={"bias": False}),
        lambda: Module("m", "Nope"),
        lambda: ModuleHook("h", "m", "backward", prepend=True),  # legacy hooks take no prepend
        lambda: ModuleHook("h", "m", "full_backward", with_kwargs=True),
        lambda: GlobalModuleHook("h", "forward_pre", with_kwargs=True),
        lambda: GlobalModuleHook("h", "backward"),
        lambda: Optimizer("o", "LBFGS"),
    ],
)
def test_invalid_module_steps_are_refused(make) -> None:
    with pytest.raises(ValueError):
        make()


FROZEN = Program(
    [
        Leaf("x", [[1.0, 2.0]]),
        Module("net", "Sequential", children=[LINEAR, {"cls": "Tanh"}, LINEAR]),
        ModuleRequiresGrad("net_0", False),
        CallModule("o", "net", ["x"]),
        Op("s", "sum", [Ref("o")]),
        Backward("s"),
        Observe("net_0.weight"),
        Observe("net_2.weight"),
        ModuleRequiresGrad("net"),
        Observe("net_0.weight"),
        ModuleRequiresGrad("net", False),
        CallModule("o2", "net", ["x"]),
        Op("s2", "sum", [Ref("o2")]),
        Backward("s2"),
    ]
)


def test_module_requires_grad_freezes_and_unfreezes_a_subtree() -> None:
    """torch: a frozen submodule's parameters get no .grad; requires_grad_() on the root unfreezes
    them; with every parameter frozen (and an input that needs no grad), backward raises."""
    events = run(FROZEN, TORCH).events
    values = [e["value"] for e in events if e["kind"] == "value"]
    grads = [e["value"] for e in events if e["kind"] == "grad"]
    assert [v["requires_grad"] for v in values] == [False, True, True]
    assert grads[0] is None and grads[1] is not None
    assert [e["type"] for e in events if e["kind"] == "error"] == ["RuntimeError"]
    assert "net.requires_grad_(False)" in render(FROZEN)
    assert_script_reproduces(FROZEN)
    check(FROZEN, load_backend("impl"), TORCH)


def test_module_trees_sometimes_freeze_a_node() -> None:
    program = find(hooked_trees(), lambda p: any(isinstance(s, ModuleRequiresGrad) for s in p.steps))
    frozen = next(s for s in program.steps if isinstance(s, ModuleRequiresGrad))
    assert frozen.requires_grad is False


def test_seed_004_legacy_backward_hooks_receive_the_seeds_gradients() -> None:
    """The seed prints grad_input of fc2 as (bias grad [1], input grad [[1, 2, 3, 4]], weight grad)."""
    hooks = [e for e in run(seed_004(), TORCH).events if e["kind"] == "hook"]
    assert [e["target"] for e in hooks] == ["m_2", "m_1", "m_0"]
    fc2 = hooks[0]["received"]["grad_input"]
    assert [g["data"] for g in fc2] == [[1.0], [1.0, 2.0, 3.0, 4.0], [7.0, 0.0, 27.0, 0.0]]
    assert hooks[2]["received"]["grad_input"][1]["data"] == [22.0, 26.0, 30.0]


def test_every_module_kind_renders_as_the_reference_trace() -> None:
    assert_script_reproduces(EVERY_MODULE_KIND)


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.tuples(hooked_trees(global_hooks=True, actions=None, remove=True), trees(),
                 st.sampled_from(LOSS_CASES).flatmap(lambda case: losses(*case)),
                 training_loops(("SGD", "Adam", "AdamW"))))
def test_generated_module_programs_render_as_the_reference_trace(batch: tuple[Program, ...]) -> None:
    """In one script (one torch start-up), so that a global hook left behind would show."""
    kept = [p for p in batch if all(e["kind"] != "skipped" for e in run(p, TORCH).events)]
    done = run_script("\nprint('=====')\n".join(render_all(kept)))
    assert done.returncode == 0, done.stderr
    assert normalise(done.stdout).split("=====\n") == [expected_output(p)[0] for p in kept]


def render_all(programs: list[Program]) -> list[str]:

    return [render(p) for p in programs]


@pytest.mark.parametrize("spec", ["torch", "impl"])
def test_global_hooks_are_removed_when_the_program_ends(spec: str) -> None:
    backend = load_backend(spec)
    program = Program([GlobalModuleHook("g", "forward"), GlobalModuleHook("k", "full_backward")])
    registry = backend.module.nn.modules.module
    before = (len(registry._global_forward_hooks), len(registry._global_backward_hooks))
    run(program, backend)
    assert (len(registry._global_forward_hooks), len(registry._global_backward_hooks)) == before


@contextmanager
def full_backward_hooks_get_outputs() -> Iterator[None]:
    """Planted fault: a full backward hook receives grad_output where grad_input belongs (and
    the other way round). Restored when the block ends."""
    original = torch.nn.Module.register_full_backward_hook

    def register(self, hook, prepend=False):
        def swapped(module, grad_input, grad_output):
            return hook(module, grad_output, grad_input)

        return original(self, swapped, prepend)

    torch.nn.Module.register_full_backward_hook = register
    try:
        yield
    finally:
        torch.nn.Module.register_full_backward_hook = original


SWAPPED = InProcess("fault:full_backward_swapped", torch, "cpu", full_backward_hooks_get_outputs)


def test_planted_fault_is_restored() -> None:
    original = torch.nn.Module.register_full_backward_hook
    with full_backward_hooks_get_outputs():
        assert torch.nn.Module.register_full_backward_hook is not original
    assert torch.nn.Module.register_full_backward_hook is original


def test_swapped_full_backward_hook_is_caught() -> None:
    program = Program(
        [
            Leaf("x", [1.0, 2.0], requires_grad=True),
            Module("m", "Linear", [2, 3], {"weight": [[1, 2], [3, 4], [5, 6]], "bias": [0.0, 1, 2]}),
            ModuleHook("h", "m", "full_backward"),
            CallModule("o", "m", ["x"]),
            Op("s", "sum", [Ref("o")]),
            Backward("s"),
        ]
    )
    check(program, load_backend("torch"))
    with pytest.raises(DivergenceError, match="hook grad_input\\[0\\]: shape differs"):
        check(program, SWAPPED)


def test_the_module_hook_family_finds_the_planted_fault() -> None:
    """The family's own strategy finds a program exposing the fault without help."""

    def exposes(program: Program) -> bool:
        try:
            check(program, SWAPPED, TORCH)
        except DivergenceError:
            return True
        return False

    search = settings(max_examples=300, derandomize=True, database=None, deadline=None,
                      suppress_health_check=list(HealthCheck))
    found = find(hooked_trees(kinds=BACKWARD), exposes, settings=search)
    assert any(isinstance(s, ModuleHook) and s.on == "full_backward" for s in found.steps)


def test_an_unknown_action_is_refused() -> None:
    with pytest.raises(ValueError):
        Action("wrong_name")
