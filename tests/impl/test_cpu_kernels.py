"""impl's fused multiply-add and softmax backward round as torch's CPU kernels do
(impl/_ops/cpu_kernels.py).

``fma`` must round once, exactly: checked against exact rational arithmetic on random operands
and on operands built so that a wider sum lands exactly on a midpoint of the dtype (where a
float64 or long double emulation rounds twice), and against torch's fused kernels (``addcmul``,
and the optimisers' ``add_(alpha=)``, ``lerp_``, ``addcmul_``) bit for bit.

Each case runs ``torch._softmax_backward_data`` and impl's kernel on the same float16/float32
inputs and asks for equal bits, under every CPU capability torch can dispatch to here (the
capability is fixed per process, so the other ones run in a subprocess with
``ATEN_CPU_CAPABILITY``). Gradients of 81 and 80 through a softmax are the case the suite found:
a plain ``sum`` gives 8.00003 where torch's fused chain gives 8.0 after the cancellation (the
baseline build has no fused multiply-add: there torch's chain is the plain sum).
"""

from __future__ import annotations

import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import impl  # noqa: E402
from impl._ops import cpu_kernels  # noqa: E402
from impl.optim import _pointwise  # noqa: E402

SHAPES = [(2, 2, 2), (5, 7), (3, 16), (3, 40), (2, 17), (4, 100), (2, 1), (4, 33, 5), (7,), (3, 1, 1)]


def mismatches(trials: int = 12, seed: int = 0) -> list[str]:
    """Cases where impl's bits differ from torch's, over shapes, every dim, float16 and float32."""
    rng = np.random.default_rng(seed)
    bad = []
    for shape in SHAPES:
        for dim in range(len(shape)):
            for dtype in (torch.float16, torch.float32):
                for trial in range(trials):
                    x = torch.tensor(rng.standard_normal(shape) * rng.choice([1, 10, 50])).to(dtype)
                    out = torch.softmax(x, dim)
                    grad = torch.tensor(rng.standard_normal(shape) * rng.choice([1, 10, 80]))
                    grad = (grad.round() if trial % 2 else grad).to(dtype)
                    expected = torch._softmax_backward_data(grad, out, dim, dtype).numpy()
                    got = cpu_kernels.softmax_backward(np, grad.numpy(), out.numpy(), dim)
                    if got.dtype != expected.dtype or not np.array_equal(got, expected):
                        bad.append(f"{shape} dim={dim} {dtype} trial={trial}")
    return bad


def test_the_cancellation_the_suite_found() -> None:
    out = torch.softmax(torch.tensor([[-41.0], [-40.5]]), 0)  # not the last dim: a fused chain
    grad = torch.tensor([[81.0], [80.0]])
    expected = torch._softmax_backward_data(grad, out, 0, torch.float32).numpy()
    got = cpu_kernels.softmax_backward(np, grad.numpy(), out.numpy(), 0)
    assert np.array_equal(got, expected)
    naive = out.numpy() * (grad.numpy() - (grad.numpy() * out.numpy()).sum(0))
    # the fused multiply-add is what makes the case show: the baseline build's chain is the plain sum
    fused = cpu_kernels.cpu_capability() != "default"
    assert np.array_equal(naive, expected) is not fused, f"the case should show the cancellation iff {fused=}"


def test_softmax_backward_has_torchs_bits_on_this_cpu() -> None:
    assert cpu_kernels.cpu_capability() == torch.backends.cpu.get_cpu_capability().lower()
    assert mismatches() == []


@pytest.mark.parametrize("capability", ["avx2", "default"])
def test_softmax_backward_has_torchs_bits_under_other_capabilities(capability: str) -> None:
    if capability == "avx2" and cpu_kernels.cpu_capability() == "default":
        pytest.skip("torch dispatches to its baseline kernels here (no AVX2, or ATEN_CPU_CAPABILITY=default)")
    code = (
        "import torch, tests.impl.test_cpu_kernels as t, impl._ops.cpu_kernels as k;"
        "assert k.cpu_capability() == torch.backends.cpu.get_cpu_capability().lower();"
        "print(t.mismatches(trials=6))"
    )
    env = {**os.environ, "ATEN_CPU_CAPABILITY": capability}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# -- fused multiply-add ------------------------------------------------------------------------
def rounded(exact: Fraction, dtype: type) -> float:
    """``exact`` rounded once to nearest (ties to even) in ``dtype``: float64 directly (CPython
    divides integers correctly rounded), narrower dtypes through float64 rounded to odd."""
    wide = float(exact)
    if dtype is np.float64 or Fraction(wide) == exact:
        return dtype(wide)
    other = float(np.nextafter(wide, np.inf if exact > wide else -np.inf))
    odd = wide if np.float64(wide).view(np.uint64) & 1 else other
    return dtype(odd)


def midpoint_cases(dtype: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``acc + g * o`` just below a midpoint of ``dtype`` by far less than a float64 (or long
    double) ulp, next to a value with an odd last bit: a wider sum rounds onto the midpoint,
    then to even, one ulp away from the single rounding."""
    u = 2.0 ** -np.finfo(dtype).nmant
    acc, g, o = [], [], []
    for k in range(1, 40):
        for sign in (1.0, -1.0):
            acc.append(sign * (1 + u * (2 * k - 1)))
            g.append(sign * (1 + u * k))
            o.append((u / 2) * (1 - u * k))  # g * o = u/2 (1 - k^2 u^2): half an ulp, less a sliver
    return tuple(np.array(v, dtype=dtype) for v in (acc, g, o))


def random_cases(dtype: type, n: int = 4000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    acc, g, o = (rng.standard_normal(n).astype(dtype) for _ in range(3))
    return acc, g, (o * dtype(1e-2)).astype(dtype)


def subnormal_cases(dtype: type, n: int = 600) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sums around ``dtype``'s smallest normal number: subnormal results, exact zeros (acc = -o,
    g = 1), and results of exactly the smallest normal (``fma`` redoes all three kinds)."""
    rng = np.random.default_rng(4)
    tiny = float(np.finfo(dtype).tiny)
    g = (rng.uniform(0.5, 2, n) * rng.choice([-1, 1], n)).astype(dtype)
    o = (tiny * 2.0 ** rng.integers(-8, 3, n) * rng.uniform(0.5, 1, n)).astype(dtype)
    acc = (tiny * rng.uniform(-2, 2, n)).astype(dtype)
    g[::5], acc[::5] = 1, -o[::5]
    acc[1::7], o[1::7] = tiny, 0
    return acc, g, o


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("cases", [midpoint_cases, random_cases, subnormal_cases])
def test_fma_rounds_once_exactly(dtype: type, cases) -> None:
    acc, g, o = cases(dtype)
    got = cpu_kernels.fma(acc, g, o)
    exact = [Fraction(float(a)) + Fraction(float(b)) * Fraction(float(c)) for a, b, c in np.c_[acc, g, o]]
    expected = [rounded(x, dtype) for x in exact]
    assert got.dtype == dtype
    bad = [(a, b, c) for a, b, c, x, y in zip(acc, g, o, got, expected, strict=True) if x != y]
    assert bad == []
    scalar = cpu_kernels.fma(acc, dtype(0.37), o)  # a numpy scalar operand broadcasts
    assert np.array_equal(scalar, cpu_kernels.fma(acc, np.full_like(g, 0.37), o))


TORCH_UPDATES = {
    "add_(alpha=)": lambda a, b: a.add_(b, alpha=0.37),
    "lerp_(0.3)": lambda a, b: a.lerp_(b, 0.3),
    "lerp_(0.7)": lambda a, b: a.lerp_(b, 0.7),
    "addcmul_": lambda a, b: a.addcmul_(b, b, value=0.3),
}
IMPL_UPDATES = {
    "add_(alpha=)": lambda a, b: _pointwise.add_scaled_(a, b, 0.37),
    "lerp_(0.3)": lambda a, b: _pointwise.lerp_(a, b, 0.3),
    "lerp_(0.7)": lambda a, b: _pointwise.lerp_(a, b, 0.7),
    "addcmul_": lambda a, b: _pointwise.addcmul_(a, b, b, 0.3),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("update", sorted(TORCH_UPDATES))
def test_fused_updates_have_torchs_bits(dtype: type, update: str) -> None:
    """The optimisers' pointwise updates against torch's in-place ops (fused on FMA builds)."""
    if cpu_kernels.cpu_capability() == "default":
        pytest.skip("torch's baseline build does not fuse these updates; impl follows the FMA builds")
    for acc, g, o in (midpoint_cases(dtype), random_cases(dtype, 140_001)):  # (two of fma's blocks)
        fresh = lambda a: torch.from_numpy(a.copy())  # noqa: E731
        mine = IMPL_UPDATES[update](impl.tensor(acc), impl.tensor(o)).numpy()
        assert np.array_equal(mine, TORCH_UPDATES[update](fresh(acc), fresh(o)).numpy())
        expected = torch.addcmul(fresh(acc), fresh(g), fresh(o)).numpy()
        assert np.array_equal(cpu_kernels.fma(acc, g, o), expected)


# -- float64 fused multiply-add over the whole range -------------------------------------------
def any_doubles(rng: np.random.Generator, n: int) -> np.ndarray:
    """Finite doubles with uniformly random bits: every exponent, subnormals, both signs."""
    x = rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64)
    return np.where(np.isfinite(x), x, 1.5)


def cancelling(rng: np.random.Generator, g: np.ndarray, o: np.ndarray) -> tuple:
    """``acc`` the rounded ``-g * o`` or one to three doubles beside it (products that overflow
    dropped): the sum is the product's rounding error, or close to it."""
    with np.errstate(over="ignore", under="ignore"):
        keep = np.isfinite(g * o)
        g, o = g[keep], o[keep]
        acc = -(g * o)
    for _ in range(3):
        step = np.nextafter(acc, rng.choice([-np.inf, np.inf], acc.size))
        acc = np.where(rng.random(acc.size) < 0.3, step, acc)
    return acc, g, o


def near_smallest_normal(rng: np.random.Generator, g: np.ndarray, o: np.ndarray) -> tuple:
    """``acc`` such that the sum is below 2^-1021: subnormal results of 52 bits and fewer, each
    rounded to its grid (where the emulation's 53-bit result can fall on a midpoint)."""
    with np.errstate(under="ignore"):
        acc = -(g * o) + rng.choice([1.0, -1.0], g.size) * rng.random(g.size) * 2.0**-1021
    return acc, g, o


def fma64_cases() -> dict[str, tuple]:
    rng = np.random.default_rng(11)
    n = 1500
    huge = lambda: rng.standard_normal(n) * 2.0 ** rng.integers(490, 530, n)  # noqa: E731
    small = lambda: rng.standard_normal(n) * 2.0 ** rng.integers(-560, -480, n)  # noqa: E731
    extremes = [5e-324, -2.2250738585072014e-308, 1.7976931348623157e308]
    special = np.array([0.0, -0.0, 1.0, -0.5, 1e-30, 1e30, np.inf, -np.inf, np.nan, *extremes])
    grid = np.meshgrid(special, special, special, indexing="ij")
    reported = tuple(np.array([v]) for v in (-1.0000000150474662e30, 1.0000000150474662, 1e30))
    return {
        "the reported residual": reported,
        "any doubles": tuple(any_doubles(rng, n) for _ in range(3)),
        "cancellation": cancelling(rng, any_doubles(rng, n), any_doubles(rng, n)),
        "moderate cancellation": cancelling(rng, rng.standard_normal(n) * 1e20, rng.standard_normal(n)),
        "subnormal results": cancelling(rng, small(), small()),
        "results about the smallest normal": near_smallest_normal(rng, small(), small()),
        "products beyond the largest double": cancelling(rng, huge(), huge()),
        "special values": tuple(v.ravel() for v in grid),
    }


@pytest.mark.parametrize("case", sorted(fma64_cases()))
def test_fma64_is_the_correctly_rounded_fma(case: str) -> None:
    """float64 ``fma`` against the exact sum rounded once (finite operands) and against torch's
    ``addcmul``, fused on its FMA builds (all operands): the emulation's exact pairs overflow or
    underflow at the ends of the range, and a zero rounded sum still leaves a residual."""
    acc, g, o = fma64_cases()[case]
    got = cpu_kernels.fma(acc, g, o)
    same_bits = lambda x, y: np.array_equal(x.view(np.uint64), y.view(np.uint64))  # noqa: E731
    finite = np.isfinite(acc) & np.isfinite(g) & np.isfinite(o)
    for a, b, c, x in zip(acc[finite], g[finite], o[finite], got[finite], strict=True):
        exact = Fraction(float(a)) + Fraction(float(b)) * Fraction(float(c))
        try:
            expected = float(exact) if exact or not (a == 0 and (b == 0 or c == 0)) else a + b * c
        except OverflowError:
            expected = np.inf if exact > 0 else -np.inf
        assert same_bits(np.array([x]), np.array([expected])), (a.hex(), b.hex(), c.hex(), x, expected)
    if cpu_kernels.cpu_capability() != "default":
        expected = torch.addcmul(*(torch.from_numpy(v) for v in (acc, g, o))).numpy()
        nan = np.isnan(got) & np.isnan(expected)
        assert np.array_equal(got[~nan].view(np.uint64), expected[~nan].view(np.uint64))
        assert np.array_equal(np.isnan(got), np.isnan(expected))
