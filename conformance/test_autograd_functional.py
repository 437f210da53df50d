"""torch.autograd.functional (oracle/rules/functional.py): vjp, jvp, jacobian, hessian, vhp and hvp
of functions generated as op lists over one or two float64 inputs, with or without v (sometimes
of a wrong length or size), create_graph, strict, vectorize and jacobian's strategy."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.conftest import examples
from conformance.test_functions import body_op
from conformance.test_ops import OpProgram
from oracle import coverage
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import FUNCTIONAL_APIS, AutogradFunctional, Program, Ref

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

_API = [f"autograd.functional.{api}" for api in FUNCTIONAL_APIS]
COVERAGE: dict[str, coverage.Targets] = {
    "AFN-001": coverage.Targets(coverage.keywords(*_API[:2], only=("create_graph",))),
    "AFN-002": coverage.Targets(coverage.keywords(*_API[2:], only=("create_graph", "vectorize"))),
    "AFN-003": coverage.Targets(coverage.keywords(*_API, only=("strict",))),
}
ONE_NUMBER = ("hessian", "vhp", "hvp")  # the function must return one element


def _every_input_cubed(n: int) -> list[dict]:
    """Ops making ``c = i0**3 * i1**3 ...``: every derivative up to the third depends on every input."""
    ops, last = [], None
    for k in range(n):
        i = Ref(f"i{k}")
        ops += [{"out": f"q{k}", "op": "mul", "args": [i, i], "kwargs": {}},
                {"out": f"c{k}", "op": "mul", "args": [Ref(f"q{k}"), i], "kwargs": {}}]
        if last is not None:
            ops.append({"out": f"m{k}", "op": "mul", "args": [Ref(last), Ref(f"c{k}")], "kwargs": {}})
        last = ops[-1]["out"]
    return ops


@st.composite
def functional_calls(draw: Any, apis: tuple[str, ...], strict: bool | None = False) -> Program:
    """One or two float64 inputs (each requiring grad or not), a function of one to three
    elementwise ops over them returning one or two of its values (one summed to a number for
    hessian, vhp and hvp, mostly), inputs and outputs passed as tuples or alone, v shaped as what
    it pairs with (sometimes one too few or of another shape, or None), then the call of ``api``
    with create_graph, strict (``strict``: always/never/either) and vectorize drawn."""
    p = OpProgram(draw)
    strict_on = draw(st.booleans()) if strict is None else strict
    # with strict: a function whose Hessian depends on every input, or one that ignores its second
    kind = draw(st.sampled_from(("cubed", "partial", "any"))) if strict_on else "any"
    shape = draw(st.sampled_from(((), (2,), (2, 2))))
    n = 2 if kind == "partial" else draw(st.integers(1, 2))
    inputs = [p.leaf(shape, "float64", grad=draw(st.booleans())) for _ in range(n)]
    names = [f"i{k}" for k in range(n)]
    body = _every_input_cubed(n) if kind == "cubed" else []
    names += [spec["out"] for spec in body]
    pool = names[:1] if kind == "partial" else names  # the names the ops may use
    for k in range(0 if body else draw(st.integers(1, 3))):
        body.append(body_op(draw, f"f{k}", pool))
        names.append(body[-1]["out"])
        if pool is not names:
            pool.append(body[-1]["out"])
    api = draw(st.sampled_from(apis))
    if api in ONE_NUMBER and draw(st.integers(0, 3)) < 3:  # else a function torch refuses
        body.append({"out": "s", "op": "sum", "args": [Ref(names[-1])], "kwargs": {}})
        names.append("s")
    count = 1 if api in ONE_NUMBER else draw(st.integers(1, 2))
    outputs = [names[-1], *draw(st.lists(st.sampled_from(names[n:]), min_size=count - 1, max_size=count - 1))]
    tuple_inputs = n > 1 or draw(st.booleans())
    tuple_outputs = count > 1 or (api not in ONE_NUMBER and draw(st.booleans()))
    flags = {"create_graph": draw(st.booleans()), "strict": strict_on}
    v = None
    if api in ("jacobian", "hessian"):
        flags["vectorize"] = draw(st.integers(0, 3)) == 0 if strict_on else draw(st.booleans())
    else:
        pairs = [shape] * (count if api == "vjp" else n)  # every body op keeps the inputs' shape
        form = draw(st.sampled_from(("given",) * (6 if strict_on else 3) + ("none", "short", "reshaped")))
        if form == "short" and len(pairs) > 1:
            pairs = pairs[:-1]
        elif form in ("short", "reshaped"):
            pairs = [(3,), *pairs[1:]]
        v = None if form == "none" else [p.leaf(s, "float64") for s in pairs]
    kwargs: dict[str, Any] = {k: True for k, on in flags.items() if on}
    if api == "jacobian" and not strict_on and draw(st.booleans()):
        kwargs["strategy"] = "forward-mode"
        if draw(st.integers(0, 5)) > 0:  # mostly what torch takes with it (else its errors)
            kwargs["vectorize"] = True
            kwargs.pop("create_graph", None)
    call = AutogradFunctional(p.fresh("r"), api, body, outputs, inputs, v, tuple_inputs, tuple_outputs,
                              kwargs)
    return Program([*p.steps, call])


@pytest.mark.rule("AFN-001")
@settings(deadline=None)
@given(program=functional_calls(("vjp", "jvp")))
def test_vjp_and_jvp(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("AFN-002")
@settings(deadline=None)
@given(program=functional_calls(("jacobian", "hessian", "vhp", "hvp")))
def test_jacobians_and_hessians(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("AFN-003")
@pytest.mark.parametrize("api", FUNCTIONAL_APIS)
@examples(1 / 3)  # each API: 33 programs in ci, strict on and off
@given(data=st.data())
def test_strict_mode(api: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(functional_calls((api,), strict=None), label="program"), backend, reference)
