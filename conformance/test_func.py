"""torch.func (oracle/rules/func.py): generated scripts apply the transforms (grad ... hessian,
nested, over pytrees) and vmap (drawn in_dims and out_dims, composed with grad and jacrev, over a
stacked ensemble) to drawn functions of seeded inputs, and call them wrongly, printing every result
or error; each runs on torch and on the backend (``oracle.script.check_script``) and must print the
same.

Scripts run in subprocesses (about a second each): each test runs one example, a script with a case
of every kind in a drawn order. Inputs are float64 (the transforms' sums need no float32 tolerance).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracle.backends import Backend
from oracle.script import check_script

_SETTINGS = settings(
    max_examples=1, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
PRELUDE = """import torch
from torch.func import *
F64 = torch.float64


def show(label, thunk):
    try:
        print(label, thunk())
    except Exception as e:
        print(label, type(e).__name__, e)

"""

seeds = st.integers(0, 2**32 - 1)
# elementwise functions of two tensors of one shape, differentiable everywhere
VECTOR = ("a.sin() * b", "torch.tanh(a * b + 1)", "a.exp() / (1 + b ** 2)", "a * b.cos() - a ** 3")
REDUCE = ("({}).sum()", "({}).mean()", "(({}) ** 2).sum()")


def _check(source: str, tmp_path: Path, backend: Backend) -> None:
    path = tmp_path / "program.py"
    path.write_text(PRELUDE + source, encoding="utf-8")
    check_script(path, backend.name, backend.device, getattr(backend, "python", None))


@st.composite
def functions(draw: Any) -> list[str]:
    """``def vf(a, b)`` (elementwise) and ``def sf(a, b)`` (a scalar of it)."""
    body = draw(st.sampled_from(VECTOR))
    scalar = draw(st.sampled_from(REDUCE)).format(body)
    return [f"def vf(a, b): return {body}", f"def sf(a, b): return {scalar}"]


# -- FUNC-001 ------------------------------------------------------------------------------------
TRANSFORM_CASES = {
    "grad": "show('grad', lambda: grad(sf, argnums={argnums})(a, b))",
    "grad_and_value": "show('gv', lambda: grad_and_value(lambda *p: (sf(*p), vf(*p)), has_aux=True)(a, b))",
    "vjp": "show('vjp', lambda: (lambda o, fn: (o, fn(t)))(*vjp(vf, a, b)))",
    "jvp": "show('jvp', lambda: jvp(vf, (a, b), (t, b.cos())))",
    "jacrev": "show('jacrev', lambda: jacrev(vf, argnums={argnums})(a, b))",
    "jacfwd": "show('jacfwd', lambda: jacfwd(vf, argnums={argnums})(a, b))",
    "hessian": "show('hessian', lambda: hessian(sf, argnums={argnums})(a, b))",
    "grad_grad": "show('grad_grad', lambda: grad(lambda x: grad(sf)(x, b).sum())(a))",
    "jacfwd_jacrev": "show('jacfwd_jacrev', lambda: jacfwd(jacrev(sf, argnums=1), argnums=1)(a, b))",
    "hvp": "show('hvp', lambda: jvp(grad(sf), (a, b), (t, t)))",
    "pytree": "show('pytree', lambda: grad(lambda d: sf(d['x'], d['y'][0]))({{'x': a, 'y': [b]}}))",
    "pytree_jac": "show('pytree_jac', lambda: jacrev(lambda p: {{'o': vf(*p)}})((a, b)))",
    "tracked": "show('tracked', lambda: grad(sf)(a.clone().requires_grad_(), b).requires_grad)",
    "captured": "show('captured', lambda: (lambda g: (g.detach(), g.requires_grad))(grad(msf)(a)))",
    "not_scalar": "show('not_scalar', lambda: grad(vf)(a, b))",
    "not_tensor": "show('not_tensor', lambda: grad(lambda a, b: 1.0)(a, b))",
    "argnums_range": "show('argnums_range', lambda: grad(sf, argnums={bad_argnums})(a, b))",
    "aux_not_pair": "show('aux_not_pair', lambda: grad(sf, has_aux=True)(a, b))",
    "jvp_structure": "show('jvp_structure', lambda: jvp(vf, (a, b), (t,)))",
    "module": "show('module', lambda: functional_call(m, {{'weight': w}}, (a,), strict={strict}))",
    "module_grad": "show('module_grad', lambda: grad(lambda p: functional_call(m, p, a).sum())(params))",
    "module_kept": "print('module_kept', torch.equal(m.weight, m_weight))",
}


@st.composite
def transform_programs(draw: Any) -> str:
    """Every case of TRANSFORM_CASES in a drawn order, on drawn functions of seeded inputs."""
    n = draw(st.integers(1, 3))
    lines = [
        *draw(functions()),
        f"torch.manual_seed({draw(seeds)})",
        f"a, b, t = torch.randn({n}, dtype=F64), torch.randn({n}, dtype=F64), torch.randn({n}, dtype=F64)",
        f"m = torch.nn.Linear({n}, 2).double()",
        "m_weight = m.weight.detach().clone()",
        "w = torch.randn(2, " + str(n) + ", dtype=F64)",
        "params = {k: v.detach() for k, v in m.named_parameters()}",
        "def msf(x): return m(x).tanh().sum()",
    ]
    fields = {
        "argnums": draw(st.sampled_from(["0", "1", "-1", "(0, 1)", "(1,)"])),
        "bad_argnums": draw(st.sampled_from(["2", "-3", "(0, 2)", "1.0", "()", "(0, 0)"])),
        "strict": draw(st.booleans()),
    }
    lines += [TRANSFORM_CASES[k].format(**fields) for k in draw(st.permutations(sorted(TRANSFORM_CASES)))]
    return "\n".join(lines) + "\n"


@pytest.mark.rule("FUNC-001")
@_SETTINGS
@given(source=transform_programs())
def test_transforms(source: str, backend: Backend, tmp_path: Path) -> None:
    _check(source, tmp_path, backend)


# -- FUNC-002 ------------------------------------------------------------------------------------
def _batched(shape: tuple[int, ...], dim: int, size: int) -> str:
    """A seeded float64 tensor of ``shape`` with a batch dimension of ``size`` at ``dim``."""
    full = list(shape)
    full.insert(dim if dim >= 0 else len(full) + 1 + dim, size)
    return f"torch.randn({tuple(full)}, dtype=F64)"


@st.composite
def vmap_programs(draw: Any) -> str:
    """vmap cases in a drawn order: drawn in_dims and out_dims, an unmapped argument, pytree inputs
    and outputs, per-sample grads and Jacobians, an ensemble of modules, random draws in each
    randomness mode (then the stream after them), and torch's errors."""
    n = draw(st.integers(1, 3))
    size = draw(st.integers(1, 3))
    shape = draw(st.sampled_from([(n,), (2, n)]))
    d1, d2 = (draw(st.integers(-len(shape) - 1, len(shape))) for _ in range(2))
    out = draw(st.integers(-len(shape) - 1, len(shape)))
    lines = [
        *draw(functions()),
        f"torch.manual_seed({draw(seeds)})",
        f"x, y = {_batched(shape, d1, size)}, {_batched(shape, d2, size)}",
        f"b = torch.randn({shape}, dtype=F64)",
        f"v = torch.randn({size}, {n}, dtype=F64)",
        f"models = [torch.nn.Linear({n}, 2).double() for _ in range({draw(st.integers(1, 3))})]",
        "params, buffers = stack_module_state(models)",
    ]
    other = draw(st.sampled_from([0, -1]))
    cases = {
        "dims": f"show('dims', lambda: vmap(vf, in_dims=({d1}, {d2}), out_dims={out})(x, y))",
        "unmapped": f"show('unmapped', lambda: vmap(vf, in_dims=({d1}, None))(x, b))",
        "scalar": f"show('scalar', lambda: vmap(lambda a, s: a * s, in_dims=({d1}, None))(x, 2.5))",
        "pytree": (
            "show('pytree', lambda: vmap(lambda p: {'o': vf(p['x'], p['y'][0]), 's': sf(p['x'], p['y'][0])},"
            f" in_dims=({{'x': {d1}, 'y': [{d2}]}},), out_dims={{'o': {out}, 's': 0}})({{'x': x, 'y': [y]}}))"
        ),
        "tuple_out": f"show('tuple_out', lambda: vmap(lambda a: (a.sum(), a * 2), {d1}, (0, {other}))(x))",
        "per_sample_grad": "show('per_sample_grad', lambda: vmap(grad(sf), in_dims=(0, None))(v, v[0]))",
        "per_sample_jac": "show('per_sample_jac', lambda: vmap(jacrev(vf, argnums=(0, 1)))(v, v.cos()))",
        "nested": "show('nested', lambda: vmap(vmap(vf, in_dims=(0, None)), in_dims=(None, 0))(v, v.sin()))",
        "ensemble": (
            "show('ensemble', lambda: (lambda o: (o.detach(), o.requires_grad))(vmap(lambda p, bu, z: "
            "functional_call(models[0], (p, bu), (z,)), in_dims=(0, 0, None))(params, buffers, v)))"
        ),
        "randomness": (
            "for mode in ('error', 'different', 'same'):\n"
            "    noisy = vmap(lambda a: a + torch.rand(a.shape), randomness=mode)\n"
            f"    show(mode, lambda: noisy(torch.zeros({size + 1}, 2)))\n"
            "    print(torch.rand(2))"
        ),
        "sizes": f"show('sizes', lambda: vmap(vf)(torch.ones({size}, {n}), torch.ones({size + 1}, {n})))",
        "in_dim_range": f"show('in_dim_range', lambda: vmap(vf, in_dims=({len(shape) + 1}, 0))(b, b))",
        "in_dims_type": "show('in_dims_type', lambda: vmap(vf, in_dims=[0, 0])(x, y))",
        "in_dims_structure": "show('in_dims_structure', lambda: vmap(vf, in_dims=(0, 0, 0))(x, y))",
        "mapped_number": "show('mapped_number', lambda: vmap(lambda a, s: a * s)(x, 2.0))",
        "number_out": f"show('number_out', lambda: vmap(lambda a: 1.0, {d1})(x))",
        "out_dims_structure": f"show('out_dims_structure', lambda: vmap(vf, ({d1}, {d2}), (0, 0))(x, y))",
    }
    lines += [cases[k] for k in draw(st.permutations(sorted(cases)))]
    return "\n".join(lines) + "\n"


@pytest.mark.rule("FUNC-002")
@_SETTINGS
@given(source=vmap_programs())
def test_vmap(source: str, backend: Backend, tmp_path: Path) -> None:
    _check(source, tmp_path, backend)
