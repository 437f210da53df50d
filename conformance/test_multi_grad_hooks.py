"""Multi-grad hooks (oracle/rules/multi_grad_hooks.py): torch.autograd.graph.register_multi_grad_hook
on drawn tensors of a generated graph (leaves and intermediate results, shared or not by the paths
to the roots), then backward calls drawn with inputs= subsets, autograd.grad, retained graphs, a
second backward and the handle removed midway; the hook logs what each call hands it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.conftest import examples
from oracle import coverage
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import Backward, Grad, MultiGradHook, Program, RemoveHook
from oracle.strategies import Builder

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

# Which (API, argument, value class) items each rule's programs must exercise (oracle.coverage): the
# mode, not passed (the default "all") and passed.
_API = "autograd.graph.register_multi_grad_hook"
COVERAGE: dict[str, coverage.Targets] = {
    "MGH-001": coverage.Targets(coverage.passed(_API, "mode", ("all",))),
    "MGH-002": coverage.Targets(
        coverage.clause(_API, "mode", {"'any'": lambda c: c.arguments.get("mode") == "any"})
    ),
}


@st.composite
def multi_grad_programs(draw: Any, mode: str) -> Program:
    """A chain or branching graph on float64 leaves, a multi-grad hook of ``mode`` (passed, or the
    default for "all"; rarely an unknown mode) on one to three of its tensors (rarely one that does
    not require grad), maybe a second hook of the other mode, then one to four of: backward from a
    root (retaining the graph, or with inputs= a subset of the graph's tensors), autograd.grad of a
    root with respect to a subset, the hook removed; finally a backward that frees the graph, and
    every tensor observed."""
    builder = Builder(draw, dtypes=("float64",))
    builder.start()
    if builder.coin():
        made = builder.chain(draw(st.integers(1, 4)))
    else:
        made = builder.branching(draw(st.integers(2, 5)))
    graph = [n for n in builder.leaves + made if n in builder.tracked]
    candidates = graph + [n for n in builder.leaves if n not in graph and draw(st.integers(0, 4)) == 0]
    tensors = draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=3, unique=True))
    passed: str | None = mode if mode == "any" or builder.coin() else None
    if draw(st.integers(0, 19)) == 0:
        passed = "some"
    hooks = [builder.fresh("h")]
    builder.steps.append(MultiGradHook(hooks[0], tensors, passed))
    if draw(st.integers(0, 2)) == 0:
        other = draw(st.lists(st.sampled_from(graph), min_size=1, max_size=3, unique=True))
        hooks.append(builder.fresh("h"))
        builder.steps.append(MultiGradHook(hooks[-1], other, "any" if mode == "all" else None))
    for _ in range(draw(st.integers(1, 4))):
        move = draw(st.sampled_from(("backward", "inputs", "inputs", "grad", "grad", "remove")))
        if move == "remove" and hooks:
            builder.steps.append(RemoveHook(hooks.pop(draw(st.integers(0, len(hooks) - 1)))))
            continue
        root = builder.root()
        # often one of the hooked tensors alone: the others are then reached but maybe not needed
        hooked = [n for n in tensors if n in graph]
        if hooked and builder.coin():
            subset = [draw(st.sampled_from(hooked))]
        else:
            subset = draw(st.lists(st.sampled_from(graph), min_size=1, max_size=2, unique=True))
        if move == "grad":
            outs = [builder.fresh("g") for _ in subset]
            builder.steps.append(Grad(outs, [root], subset, retain_graph=True, allow_unused=True))
            builder.shapes.update((o, builder.shapes[n]) for o, n in zip(outs, subset, strict=True))
        else:
            inputs = subset if move == "inputs" else None
            builder.steps.append(Backward(root, retain_graph=True, inputs=inputs))
    builder.steps.append(Backward(builder.root()))
    builder.finish()
    return builder.program()


@pytest.mark.rule("MGH-001")
@examples(1)
@given(program=multi_grad_programs("all"))
def test_multi_grad_hook_all(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("MGH-002")
@examples(1)
@given(program=multi_grad_programs("any"))
def test_multi_grad_hook_any(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
