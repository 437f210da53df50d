"""Grad modes (oracle/rules/grad_modes.py): programs entering and leaving no_grad, enable_grad,
set_grad_enabled and inference_mode around ops, then using the results in autograd."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.conftest import examples
from conformance.test_ops import OpProgram
from oracle import coverage
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import Backward, DecoratedOp, Detach, ExitMode, GradMode, ObserveLayout, Program, Ref

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

# Which (API, argument, value class) items each rule's programs must exercise (oracle.coverage): the
# mode of the grad modes that take one.
COVERAGE: dict[str, coverage.Targets] = {
    "GM-001": coverage.Targets(coverage.keywords("torch.set_grad_enabled")),
    "GM-002": coverage.Targets(coverage.keywords("torch.inference_mode")),
}

OPS = ("mul", "add", "exp", "sum", "add_", "view")
ARGS: dict[str, list] = {"exp": [], "sum": [], "view": [-1]}  # the others take a number


def some_ops(p: OpProgram, draw: Any, sources: list[str]) -> None:
    """One to three ops on the sources (an in-place one now and then, a view whose flags follow
    its base's and whose in-place writes torch checks by the mode it was made in)."""
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(OPS))
        src = draw(st.sampled_from(sources + p.names[-1:]))
        sources.append(p.op(op, Ref(src), *ARGS.get(op, [2.0])))


@st.composite
def modes(draw: Any, kinds: tuple[str, ...]) -> Program:
    """Leaves, then nested grad modes (entered and left in order) with ops inside and outside
    (and in inference mode, maybe a leaf made there), then a backward from the latest result and
    every tensor observed."""
    p = OpProgram(draw)
    sources = [p.leaf((2,), "float32", grad=True), p.leaf((2,), "float32")]
    open_modes: list[str] = []
    inference: list[str] = []  # leaves made in inference mode
    for i in range(draw(st.integers(1, 4))):
        if open_modes and draw(st.booleans()):
            p.steps.append(ExitMode(open_modes.pop()))
        else:
            mode = draw(st.sampled_from(kinds))
            flag = draw(st.booleans()) if mode == "set_grad_enabled" else None
            if mode == "inference_mode" and draw(st.booleans()):
                flag = draw(st.booleans())
            open_modes.append(f"mode{i}")
            p.steps.append(GradMode(open_modes[-1], mode, flag))
            if mode == "inference_mode" and draw(st.booleans()):  # a tensor made in the mode
                inference.append(p.leaf((2,), "float32", grad=draw(st.booleans())))
                sources.append(inference[-1])
        some_ops(p, draw, sources)
    while open_modes and draw(st.booleans()):
        p.steps.append(ExitMode(open_modes.pop()))
    if draw(st.booleans()):
        some_ops(p, draw, sources)
    if inference and draw(st.booleans()):  # a view of one, or an op on it alone (maybe outside the mode)
        op = draw(st.sampled_from(("view", "exp")))
        p.op(op, Ref(draw(st.sampled_from(inference))), *ARGS[op])
    return backward_from_last(p)


def backward_from_last(p: OpProgram) -> Program:
    """Backward from the sum of the latest tensor, then every tensor observed."""
    p.steps.append(Backward(p.op("sum", Ref(p.names[-1]))))
    return p.observed()


@pytest.mark.rule("GM-001")
@examples(2)
@given(program=modes(("no_grad", "enable_grad", "set_grad_enabled")))
def test_no_grad_and_friends(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def inference_copies(draw: Any) -> Program:
    """A tensor made in inference mode (requiring grad or not), the mode left or not, then a copy of
    it: clone() (outside the mode torch's is a copy_ into a normal tensor, version 1, recording
    CopyBackwards from an input requiring grad) or a detach() alias (outside the mode an inference
    tensor with a version counter of its own), maybe written in place; its layout and version
    observed, a backward from the sum of the copy, every tensor observed."""
    p = OpProgram(draw)
    p.steps.append(GradMode("mode", "inference_mode", None))
    source = p.leaf((2,), "float32", grad=draw(st.booleans()))
    if draw(st.integers(0, 3)):
        p.steps.append(ExitMode("mode"))
    if draw(st.booleans()):
        p.op("clone", Ref(source))
    else:
        p.steps.append(Detach(p.fresh("d"), source))
        p.names.append(p.steps[-1].out)
        if draw(st.booleans()):
            p.op("add_", Ref(p.names[-1]), 1.0)
    p.steps.append(ObserveLayout(p.names[-1]))
    return backward_from_last(p)


@pytest.mark.rule("GM-002")
@examples(0.1)
@given(program=inference_copies())
def test_inference_copies(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("GM-002")
@examples(2)
@given(program=modes(("inference_mode", "inference_mode", "no_grad", "enable_grad")))
def test_inference_mode(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def decorated(draw: Any) -> Program:
    """Ops called through functions decorated with a grad mode (called or bare; a third of them
    generator functions), mixed with plain ops, inside or outside an entered mode, then backward."""
    p = OpProgram(draw)
    sources = [p.leaf((2,), "float32", grad=True)]
    if draw(st.integers(0, 3)) == 0:
        p.steps.append(GradMode("outer", draw(st.sampled_from(("no_grad", "enable_grad")))))
    for i in range(draw(st.integers(1, 3))):
        mode = draw(st.sampled_from(("no_grad", "enable_grad", "set_grad_enabled", "inference_mode")))
        bare = mode != "set_grad_enabled" and draw(st.booleans())
        flag = None if bare or mode in ("no_grad", "enable_grad") else draw(st.booleans())
        if mode == "inference_mode" and not bare and draw(st.booleans()):
            flag = None
        op = draw(st.sampled_from(("mul", "exp", "sum")))
        args = [Ref(draw(st.sampled_from(sources)))] + ([2.0] if op == "mul" else [])
        generator = draw(st.integers(0, 2)) == 0  # a generator function, run resumption by resumption
        p.steps.append(DecoratedOp(f"d{i}", mode, op, args, flag, bare, generator))
        p.names.append(f"d{i}")
        sources.append(f"d{i}")
        if draw(st.booleans()):
            some_ops(p, draw, sources)
    return backward_from_last(p)


@pytest.mark.rule("GM-003")
@examples(2)
@given(program=decorated())
def test_grad_mode_decorators(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
