"""Module hooks (oracle/rules/modules.py, family "module hooks"): random module trees with hooks of
every kind and flag, registered per module or globally, agree with torch on which hooks fire, in
what order, with what they received, and what their return values do."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conformance.conftest import examples
from oracle import coverage, state_dict_hooks
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import (
    GLOBAL_HOOK_FLAGS,
    MODULE_HOOK_KINDS,
    Backward,
    CallModule,
    Leaf,
    LoadStateDict,
    Module,
    ModuleHook,
    Observe,
    Op,
    Program,
    Ref,
    RemoveHook,
    StateDict,
)
from oracle.strategies import TREE_INPUTS, ModuleBuilder

# Rule -> what impl does differently (strict xfails on the impl backend only; the goal is none).
KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

# Which (API, argument, value class) items each rule's programs must exercise (oracle.coverage): the
# registration flags of each kind of hook the rule names.
_FORWARD = ("Module.register_forward_pre_hook", "Module.register_forward_hook")
_BACKWARD = ("Module.register_full_backward_pre_hook", "Module.register_full_backward_hook")
COVERAGE: dict[str, coverage.Targets] = {
    "MHOOK-001": coverage.Targets(coverage.keywords(*_FORWARD, only=("prepend",))),
    "MHOOK-002": coverage.Targets(coverage.keywords(*_FORWARD, only=("with_kwargs",))),
    "MHOOK-003": coverage.Targets(coverage.keywords("Module.register_forward_hook", only=("always_call",))),
    "MHOOK-004": coverage.Targets(coverage.keywords(*_BACKWARD, only=("prepend",))),
    "MHOOK-007": coverage.Targets(coverage.keywords(
        *(f"nn.modules.module.register_module_{on}_hook" for on in GLOBAL_HOOK_FLAGS))),
    "MHOOK-009": coverage.Targets(
        coverage.keywords("Module.state_dict", "Module.load_state_dict",
                          "Module._register_load_state_dict_pre_hook",
                          only=("keep_vars", "strict", "assign", "with_module")),
        coverage.clause("Module.state_dict", "prefix", {"empty": lambda c: c.arguments["prefix"] == "",
                                                        "given": lambda c: c.arguments["prefix"] != ""}),
        # each kind of state-dict hook doing each of its actions
        *(coverage.clause(f"Module.{registration}", "action",
                          {a: (lambda c, a=a: c.arguments["action"] == a)
                           for a in state_dict_hooks.ACTIONS[on]})
          for on, (registration, _, _) in state_dict_hooks.KINDS.items())),
}

FAIR = ("log", "log", "scale", "replace")  # actions torch accepts from every kind
BACKWARD = ("full_backward_pre", "full_backward")
REPLACING = ("scale", "replace", "log")  # FAIR, mostly replacing what the hook receives


@st.composite
def hooked_trees(
    draw: Any,
    kinds: tuple[str, ...] = MODULE_HOOK_KINDS,
    actions: tuple[str, ...] | None = FAIR,
    hooks: tuple[int, int] = (1, 4),
    global_hooks: bool = False,
    remove: bool = False,
    bad_input: bool = False,
) -> Program:
    """A random module tree (sometimes with a frozen subtree) taking an input that may require
    grad, hooks of ``kinds`` on random nodes (and global hooks), some removed, the tree called once
    or twice, then backward from the last output and an observation of every tensor (inputs,
    outputs, parameters)."""
    b = ModuleBuilder(draw)
    shape = b.pick(TREE_INPUTS)
    x = b.input(shape)
    net, out_shape = b.tree(shape, freeze=True)
    for _ in range(draw(st.integers(*hooks))):
        if global_hooks and b.coin():
            b.global_hook(b.pick([k for k in kinds if k in GLOBAL_HOOK_FLAGS]), actions)
        else:
            b.module_hook(b.pick(b.modules_of[net]), b.pick(kinds), actions)
    if remove:
        for hook in draw(st.lists(st.sampled_from(b.hooks), max_size=2, unique=True)):
            b.steps.append(RemoveHook(hook))
    if bad_input:  # an input of the wrong size: the forward raises
        x = b.input((*shape[:-1], shape[-1] + 1))
    for _ in range(draw(st.integers(1, 2))):
        b.call(net, [x], out_shape)
    b.finish()
    return b.program()


@pytest.mark.rule("MHOOK-001")
@examples(2)
@given(program=hooked_trees(kinds=("forward_pre", "forward"), actions=None))
def test_forward_hooks_run_around_each_call(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def keyword_calls(draw: Any) -> Program:
    """Forward (pre-)hooks, with or without with_kwargs, on a layer called with ``input=`` as a
    keyword; the first registered is a with_kwargs pre-hook that mostly replaces the call's args
    and kwargs."""
    b = ModuleBuilder(draw)
    shape = b.pick(TREE_INPUTS)
    x = b.input(shape, requires_grad=True)
    net, out_shape = b.tree(shape, depth=1)
    b.steps.append(ModuleHook(b.fresh("h"), net, "forward_pre", b.action(REPLACING), with_kwargs=True))
    for _ in range(draw(st.integers(1, 3))):
        on = b.pick(("forward_pre", "forward"))
        hook = b.fresh("h")
        b.steps.append(ModuleHook(hook, net, on, b.action(FAIR), with_kwargs=b.coin(), prepend=b.coin()))
    out = b.fresh("t")
    b.bind(out, out_shape, CallModule(out, net, [], {"input": x}), tracked=True)
    b.finish()
    return b.program()


@pytest.mark.rule("MHOOK-002")
@settings(deadline=None)
@given(program=keyword_calls())
def test_forward_hooks_with_kwargs(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("MHOOK-003")
@settings(deadline=None)
@given(program=hooked_trees(kinds=("forward_pre", "forward"), global_hooks=True, bad_input=True))
def test_always_call_forward_hooks_run_when_forward_raises(
    program: Program, backend: Backend, reference: Backend
) -> None:
    check(program, backend, reference)


@pytest.mark.rule("MHOOK-004")
@settings(deadline=None)
@given(program=hooked_trees(kinds=BACKWARD))
def test_full_backward_hooks_receive_and_replace_gradients(
    program: Program, backend: Backend, reference: Backend
) -> None:
    check(program, backend, reference)


@pytest.mark.rule("MHOOK-005")
@settings(deadline=None)
@given(program=hooked_trees(kinds=BACKWARD, actions=("wrong_count", "wrong_shape"), hooks=(1, 2)))
def test_wrong_size_backward_hook_results_raise(
    program: Program, backend: Backend, reference: Backend
) -> None:
    check(program, backend, reference)


def seed_004() -> Program:
    """Seed 004: Linear(3, 4) - ReLU - Linear(4, 1) with the seed's weights, a legacy backward hook
    on each layer, called on [[1, 1, 1]] (requires grad), then backward."""
    fc1 = {
        "weight": [[1.0, 2.0, 3.0], [-4.0, -5.0, -6.0], [7.0, 8.0, 9.0], [-10.0, -11.0, -12.0]],
        "bias": [1.0, 2.0, 3.0, 4.0],
    }
    fc2 = {"weight": [[1.0, 2.0, 3.0, 4.0]], "bias": [1.0]}
    layers = [
        {"cls": "Linear", "args": [3, 4], "params": fc1},
        {"cls": "ReLU"},
        {"cls": "Linear", "args": [4, 1], "params": fc2},
    ]
    return Program(
        [
            Leaf("x", [[1.0, 1.0, 1.0]], requires_grad=True),
            Module("m", "Sequential", children=layers),
            *(ModuleHook(f"h{i}", f"m_{i}", "backward") for i in range(3)),
            CallModule("o", "m", ["x"]),
            Op("s", "sum", [Ref("o")]),
            Backward("s"),
            Observe("x"),
            Observe("m_0.weight"),
            Observe("m_2.bias"),
        ]
    )


@pytest.mark.rule("MHOOK-006")
@settings(deadline=None)
@example(program=seed_004())
@given(program=hooked_trees(kinds=("backward",), actions=("log", "log", "scale", "wrong_count")))
def test_legacy_backward_hook(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("MHOOK-007")
@settings(deadline=None)
@given(program=hooked_trees(kinds=tuple(GLOBAL_HOOK_FLAGS), global_hooks=True, remove=True))
def test_global_module_hooks(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("MHOOK-008")
@settings(deadline=None)
@given(program=hooked_trees(actions=None, hooks=(1, 6), remove=True))
def test_hooks_on_module_trees(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)



@st.composite
def state_dict_programs(draw: Any, featured: str) -> Program:
    """A module tree (sometimes called and backpropagated first, so kept parameters have grads)
    and its twin (the same tree, values negated); one state-dict hook of kind ``featured`` doing
    one of its actions ("return" and "refuse" make the call raise), on the module whose call runs
    it, and up to four more of any kind that log or edit, saving
    ones on the tree's nodes, loading ones on the twin's, maybe one removed; the tree's state_dict
    (with a prefix or not, keeping vars or not) loaded into the twin or one of its nodes once or
    twice (strict or not, assigning or not), then the twin's state_dict."""
    b = ModuleBuilder(draw)
    shape = b.pick(TREE_INPUTS)
    net, out_shape = b.tree(shape)
    if b.coin():
        b.call(net, [b.input(shape, requires_grad=True)], out_shape)
        b.finish()
    twin = b.twin(net)
    into = b.pick([twin, *b.modules_of[twin]])
    actions = tuple(state_dict_hooks.ACTIONS[featured])
    b.state_dict_hook(into if "load" in featured else net, featured, actions)
    for _ in range(draw(st.integers(0, 4))):
        on = b.pick(list(state_dict_hooks.KINDS))
        quiet = tuple(a for a in ("log", "edit") if a in state_dict_hooks.ACTIONS[on])
        b.state_dict_hook(b.pick(b.modules_of[twin if "load" in on else net]), on, quiet)
    if len(b.hooks) > 1 and b.coin():  # (not the featured hook)
        b.steps.append(RemoveHook(b.pick(b.hooks[1:])))
    sd = b.fresh("sd")
    b.steps.append(StateDict(sd, net, b.pick(("", "p.")), keep_vars=b.coin()))
    for _ in range(draw(st.integers(1, 2))):
        b.steps.append(LoadStateDict(into, sd, strict=b.coin(), assign=draw(st.integers(0, 3)) == 0))
    b.steps.append(StateDict(b.fresh("sd"), twin, keep_vars=True))
    return b.program()


@pytest.mark.rule("MHOOK-009")
@pytest.mark.parametrize("kind", list(state_dict_hooks.KINDS))
@examples(1 / 3)  # each kind: 33 programs in ci, each of its actions featured
@given(data=st.data())
def test_state_dict_hooks(kind: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(state_dict_programs(kind), label="program"), backend, reference)
