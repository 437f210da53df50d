"""gradcheck API (oracle/rules/gradcheck_api.py): torch.autograd.gradcheck and gradgradcheck called on
functions built from drawn ops, and on custom Functions with a right or a deliberately wrong
backward (off by a factor, not multiplied by grad_output, refusing undefined gradients), with
drawn tolerances, fast mode on or off, raise_exception=False, the batched-gradient and
undefined-gradient checks on or off, and float32 inputs (which warn). The result, or the
exception and its message, and the warnings are compared with torch's.

The full-precision numbers of a fast-mode failure (v^T J u, and the slow-mode largest difference)
differ in their last digits between engines: the interpreter masks them in the message and
compares them as float64 values (``oracle.interpreter.GRADCHECK_SCALARS``)."""

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
from oracle.program import Function, Gradcheck, Observe, Program, Ref

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

# Which (API, argument, value class) items each rule's programs must exercise (oracle.coverage): each
# keyword argument gradcheck_calls draws, not passed and passed with each value it draws.
DRAWN_KWARGS: dict[str, tuple] = {
    "fast_mode": (True,), "atol": (1e-2, 0.5, 0.0), "rtol": (0.0, 0.1), "raise_exception": (False, True),
    "check_batched_grad": (True,), "check_undefined_grad": (False,), "eps": (1e-3,),
}
# and the forward-mode checks of each API (the custom Functions have a jvp, right or wrong)
FORWARD_KWARGS: dict[str, dict[str, tuple]] = {
    "gradcheck": {"check_forward_ad": (True,), "check_backward_ad": (False,)},
    "gradgradcheck": {"check_fwd_over_rev": (True,)},
}
COVERAGE: dict[str, coverage.Targets] = {
    rule: coverage.Targets(
        *(
            coverage.passed(f"autograd.{api}", key, values)
            for key, values in {**DRAWN_KWARGS, **FORWARD_KWARGS[api]}.items()
        )
    )
    for rule, api in (("GCHK-001", "gradcheck"), ("GCHK-002", "gradgradcheck"))
}

# ops whose forward numpy and torch round alike (float32 finite differences show any last-ulp
# difference), and smooth ones for float64
EXACT_UNARY = ("neg", "square", "relu", "abs", "clone")
EXACT_BINARY = ("add", "mul", "sub")
SMOOTH = ("exp", "sin", "tanh", "sigmoid")
# custom Functions of one used input: (forward, backward, grad, saves, materialize_grads)
WRONG_FACTORS = (2.0, 2.1, -2.0)


def _op(out: str, op: str, *args: Any) -> dict:
    return {"out": out, "op": op, "args": list(args), "kwargs": {}}


def custom_function(draw: Any, name: str, inputs: int) -> Function:
    """A Function of ``inputs`` inputs using one (drawn): x * x with a backward and a jvp both off by
    a drawn factor (or right), or a clone whose backward adds 0.01 to the gradient (not multiplied
    by grad_output), or one that does not materialize gradients and fails on an undefined one (the
    clones' jvp is right)."""
    kind = draw(st.sampled_from(("square", "square", "square", "not_multiplied", "undefined")))
    used = draw(st.integers(0, inputs - 1))
    x = Ref(f"i{used}")
    grads: list = [None] * inputs
    grads[used] = "w"
    if kind == "square":
        factor = draw(st.sampled_from(WRONG_FACTORS))
        backward = [_op("b", "mul", Ref("g0"), x), _op("w", "mul", Ref("b"), factor)]
        tangent = Ref(f"t{used}")
        jvp = [_op("c", "mul", tangent, x), _op("v", "mul", Ref("c"), factor)]
        return Function(name, inputs, [_op("o", "mul", x, x)], ["o"], backward, grads, saves=[x.name],
                        jvp=jvp, tangents=["v"], saves_for_forward=[x.name])
    forward = [_op("o", "clone", x)]
    jvp = {"jvp": [_op("v", "clone", Ref(f"t{used}"))], "tangents": ["v"]}
    if kind == "not_multiplied":
        return Function(name, inputs, forward, ["o"], [_op("w", "add", Ref("g0"), 0.01)], grads, **jvp)
    return Function(name, inputs, forward, ["o"], [_op("w", "mul", Ref("g0"), 1.0)], grads,
                    materialize_grads=False, **jvp)


@st.composite
def gradcheck_calls(draw: Any, api: str, forward: bool = False) -> Program:
    """One or two leaves (float64 mostly, float32 for gradcheck sometimes; the first requiring grad),
    a function of one or two outputs from zero to three drawn ops (after a custom Function, maybe),
    ``api`` called on it with drawn keyword arguments (with ``forward``, its forward-mode check
    too, ``FORWARD_KWARGS``), then the leaves observed (unchanged)."""
    p = OpProgram(draw)
    dtype = "float32" if api == "gradcheck" and draw(st.integers(0, 4)) == 0 else "float64"
    shape = draw(st.sampled_from(((), (2,), (2, 2))))
    n = draw(st.integers(1, 2))
    leaves = [p.leaf(shape, dtype, grad=i == 0 or draw(st.integers(0, 3)) > 0) for i in range(n)]
    names = [f"i{k}" for k in range(n)]
    function = None
    if draw(st.booleans()):
        function = p.fresh("F")
        p.steps.append(custom_function(draw, function, n))
        names = ["a0", *names]
    unary = EXACT_UNARY + (SMOOTH if dtype == "float64" else ())
    body = []
    for k in range(draw(st.integers(0 if function else 1, 3))):
        op = draw(st.sampled_from(unary + EXACT_BINARY))
        args = [Ref(names[0] if k == 0 and function else draw(st.sampled_from(names)))]  # a0 first
        if op in EXACT_BINARY:
            args.append(draw(st.sampled_from((Ref(draw(st.sampled_from(names))), 2.0, -0.5))))
        body.append(_op(f"f{k}", op, *args))
        names.append(f"f{k}")
    outputs = [names[-1]]
    if draw(st.integers(0, 3)) == 0 and names[0] != names[-1]:
        outputs.append(names[0])
    kwargs: dict[str, Any] = {"fast_mode": True} if draw(st.booleans()) else {}
    for key, values in list(DRAWN_KWARGS.items())[1:]:
        if draw(st.integers(0, 2)) == 0:
            kwargs[key] = draw(st.sampled_from(values))
    if function is not None:
        # torch checks batched gradients under vmap, where the Function's logging backward (it
        # reads the gradient's values) raises: a harness effect, not gradcheck's behaviour
        kwargs.pop("check_batched_grad", None)
    seed = draw(st.integers(0, 3))
    if forward:  # the forward check always, the backward one maybe not
        forward_kwargs = list(FORWARD_KWARGS[api].items())
        kwargs[forward_kwargs[0][0]] = True
        for key, values in forward_kwargs[1:]:
            if draw(st.booleans()):
                kwargs[key] = draw(st.sampled_from(values))
    p.steps.append(Gradcheck(p.fresh("gc"), api, body, outputs, leaves, function=function, kwargs=kwargs,
                             seed=seed))
    p.steps += [Observe(name) for name in leaves]
    return Program(p.steps)


@pytest.mark.rule("GCHK-001")
@examples(1)
@given(program=gradcheck_calls("gradcheck"))
def test_gradcheck(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("GCHK-002")
@examples(0.5)
@given(program=gradcheck_calls("gradgradcheck"))
def test_gradgradcheck(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("GCHK-001")
@examples(0.2)
@given(program=gradcheck_calls("gradcheck", forward=True))
def test_gradcheck_forward_ad(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("GCHK-002")
@examples(0.1)
@given(program=gradcheck_calls("gradgradcheck", forward=True))
def test_gradgradcheck_fwd_over_rev(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
