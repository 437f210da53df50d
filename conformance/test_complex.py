"""Complex tensors (oracle/rules/complex.py): generated scripts build complex tensors from drawn
values (exact quarters, no zero: log and angle stay off their singular points), print values,
dtypes and promotions of every op of the rule, then the gradients of drawn real losses; each runs
on torch and on the backend (``oracle.script.check_script``) and must print the same.

Scripts run in subprocesses (about a second each): each test runs one example, a script with every
op of its rule.
"""

from __future__ import annotations

import re
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
PRELUDE = "import torch\n\n"

positives = st.integers(1, 8).map(lambda n: n / 4)
reals = st.integers(-8, 8).map(lambda n: n / 4)
dtypes = st.sampled_from(["torch.complex64", "torch.complex128"])
# one expression per line, printed; ``z`` and ``w`` complex vectors of 4, ``m`` a 2 by 2 complex
# matrix, ``r`` a real vector of 4
VALUES = (
    "z", "z.dtype", "z.is_complex()", "torch.is_complex(r)", "z + w", "z - w", "z * w", "-z",
    "z ** 2", "z.pow(0.5)", "2 ** z", "z.reciprocal()", "z.exp()", "z.log()", "z.sqrt()", "z.sin()",
    "z.cos()", "z.tanh()", "z.sgn()", "z.abs()", "z.angle()", "r.angle()", "z.conj()",
    "z.conj().is_conj()", "z.conj().resolve_conj().is_conj()", "z.conj_physical()",
    "z.conj_physical().is_conj()", "z.isreal()", "torch.isreal(z * 0 + r)", "torch.isreal(r)", "z.real",
    "z.imag", "torch.view_as_real(z)",
    "torch.view_as_real(z).stride()", "torch.view_as_complex(torch.view_as_real(z))", "z.sum()", "z.mean()",
    "m @ m", "torch.mm(m, m.t())", "z.reshape(2, 2).t()", "z[1:3]", "z[2].item()", "z == w", "z != z",
    "torch.cat([z, r])", "torch.stack([z, w], 1)", "r * 1j", "r + w", "r.to(torch.cfloat)", "r.double() * z",
    "torch.complex(r, r.flip(0))", "z.to(torch.float64)", "z.float()", "complex(z[1])",
    "torch.polar(r.abs(), r)", "torch.result_type(r, 1j)", "torch.result_type(r.double(), 1j)",
    "torch.result_type(r.long(), z)", "torch.promote_types(torch.float64, torch.complex64)",
    "torch.promote_types(torch.float16, torch.cfloat)", "torch.tensor([1, 2.5j])",
    "torch.zeros(2, dtype=torch.cfloat)", "torch.ones(2, 1, dtype=torch.cdouble)",
    "torch.full((2,), 1 - 2j)", "torch.tensor(-0.5j)", "torch.tensor([[1e10 + 1j, 0.5]])",
)
ERRORS = ("z < w", "torch.ge(z, 1)", "torch.view_as_real(z.conj())", "r.imag",
          "torch.view_as_complex(torch.ones(3))", "torch.complex(r, r.double())")
WRITES = (
    "z.real = r", "z.imag[0] = 5", "torch.view_as_real(z)[1, 1] = -3",
)


def _tensor(values: list, dtype: str, shape: str = "") -> str:
    text = f"torch.tensor({values!r}, dtype={dtype})"
    return f"{text}.reshape({shape})" if shape else text


nonzero = st.sampled_from([n / 4 for n in range(-8, 9) if n])


@st.composite
def complexes(draw: Any, n: int, imaginary: Any = reals) -> list[complex]:
    return [draw(st.builds(complex, positives, imaginary)) for _ in range(n)]




def off_diagonal(imaginary: Any) -> Any:
    """Leaves of gradient programs: off the axes and the diagonals (where a part of z**2 is 0 and
    of 1/z**2 rounding noise, which torch's and numpy's complex divisions round apart); z's in the
    upper half plane, w's in the lower (a sum of z's stays off the real axis)."""
    return st.lists(
        st.builds(complex, positives, imaginary).filter(lambda v: abs(v.real) != abs(v.imag)),
        min_size=4, max_size=4,
    )


@st.composite
def value_programs(draw: Any) -> str:
    """Every expression of VALUES printed on drawn tensors, the errors of ERRORS, then writes
    through the views; then seeded complex draws."""
    dtype = draw(dtypes)
    lines = [
        f"z = {_tensor(draw(complexes(4)), dtype)}",
        f"w = {_tensor(draw(complexes(4)), dtype)}",
        f"m = {_tensor(draw(complexes(4)), dtype, '2, 2')}",
        f"r = torch.tensor({[draw(reals) for _ in range(4)]!r})",
    ]
    lines += [f"print({expression!r}, {expression})" for expression in VALUES]
    # quotients in fixed notation: torch's vectorised complex division rounds a part that is 0
    # (z == w) to 1e-17 where numpy's gives 0, which would print the whole tensor in scientific one
    lines += ["torch.set_printoptions(sci_mode=False)", "print(z / w, z / 2j, r / z)"]
    lines.append("torch.set_printoptions(sci_mode=None)")
    for expression in ERRORS:
        shown = f"    print({expression!r}, type(e).__name__, e)"
        lines += ["try:", f"    {expression}", "except Exception as e:", shown]
    for statement in WRITES:
        lines += [statement, "print(z)"]
    lines += [f"torch.manual_seed({draw(st.integers(0, 2**16))})", f"print(torch.randn(3, dtype={dtype}))"]
    lines.append(f"print(torch.randn(2, 2, dtype={dtype}))")
    return "\n".join(lines) + "\n"


@pytest.mark.rule("CPLX-001")
@_SETTINGS
@given(source=value_programs())
def test_complex_values(source: str, backend: Backend, tmp_path: Path) -> None:
    _check(source, tmp_path, backend)


# -- CPLX-002 ------------------------------------------------------------------------------------
# complex functions of the leaf ``z`` (and ``w``, ``r``), and real losses of a complex ``y``
FUNCTIONS = (
    "z * w", "z / w", "z * r", "r / z", "z ** 3", "(z * w / 4).exp()", "z.log()", "z.sqrt()",
    "z.sin() * z.cos()", "z.tanh()", "z.reciprocal()", "z.conj() * w", "z.conj_physical()", "z.sgn()",
    "(m @ z.reshape(2, 2)).flatten()",
    "torch.complex(r, r * 2) * z", "torch.polar(r.abs() + 1, r) * z", "z.sum() * w", "z - z.mean()",
    "r.to(torch.cfloat) * z", "torch.view_as_complex(torch.view_as_real(z) * 2)", "torch.cat([z, w * r])",
    "torch.stack([z, w], 1) * w[:2]",
)
LOSSES = (
    "y.abs().sum()", "(y.abs() ** 2).sum()", "y.real.sum()", "(y.imag * 2).sum()",
    "(y.angle() * y.abs()).sum()", "torch.view_as_real(y).pow(2).sum()", "(y * y.conj()).real.sum()",
)
# (gradients are printed plus 0, a -0.0 as 0.0: torch's vectorised complex products, not its
# formulas, decide the signs of exactly zero parts)
SHOW = """loss.backward()
print({label!r}, loss, *[None if g is None else g + 0 for g in (z.grad, w.grad, r.grad, m.grad)])
print(y.grad_fn.name(), loss.grad_fn.name())
z.grad = w.grad = r.grad = m.grad = None
"""


@st.composite
def gradient_programs(draw: Any) -> str:
    """Every function of FUNCTIONS under a drawn loss of LOSSES, its gradients and grad_fn names;
    then a backward of a complex output without a gradient."""
    dtype = draw(dtypes)
    lines = [
        f"z = {_tensor(draw(off_diagonal(positives)), dtype)}.requires_grad_()",
        f"w = {_tensor(draw(off_diagonal(positives.map(lambda v: -v))), dtype)}.requires_grad_()",
        f"m = {_tensor(draw(off_diagonal(nonzero)), dtype, '2, 2')}.requires_grad_()",
        f"r = torch.tensor({[draw(reals) for _ in range(4)]!r}).requires_grad_()",
    ]
    for function in FUNCTIONS:
        # (not the losses whose gradient is 0, rounding noise in both: |sgn(z)| is 1, |polar(a, r)|
        # does not depend on r, the angle of a product with a real r does not depend on r)
        losses = LOSSES[:4] if re.search(r"\br\b", function) else LOSSES
        losses = LOSSES[2:4] if function == "z.sgn()" or "polar" in function else losses
        loss = draw(st.sampled_from(losses))
        lines += [f"y = {function}", f"loss = {loss}", SHOW.format(label=f"{function}: {loss}")]
    lines += ["try:", "    (z * w).sum().backward()", "except RuntimeError as e:", "    print(e)"]
    return "\n".join(lines) + "\n"


@pytest.mark.rule("CPLX-002")
@_SETTINGS
@given(source=gradient_programs())
def test_complex_gradients(source: str, backend: Backend, tmp_path: Path) -> None:
    _check(source, tmp_path, backend)


def _check(source: str, tmp_path: Path, backend: Backend) -> None:
    path = tmp_path / "program.py"
    path.write_text(PRELUDE + source, encoding="utf-8")
    check_script(path, backend.name, backend.device, getattr(backend, "python", None))
