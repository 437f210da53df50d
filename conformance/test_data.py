"""Data loading and random generators (oracle/rules/data.py): generated scripts (seeded random
draws, DataLoader loops, collates and splits) print what they draw; each runs on torch and on the
backend (``oracle.script.check_script``) and must print the same.

Scripts run in subprocesses (about a second each), so each test runs few examples, each a script
of several drawn cases. float32 normals are drawn below 16 elements or in float64: torch's
16-at-a-time float32 Box-Muller uses its own vectorised log and sincos (impl is within an ulp).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracle.backends import Backend
from oracle.script import check_script

SCRIPT_EXAMPLES = 2  # per test: each example is a script with a case of every kind
_SETTINGS = settings(
    max_examples=SCRIPT_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
PRELUDE = "import torch\nfrom torch.utils.data import *\n\n"

seeds = st.integers(0, 2**32 + 5)
sizes = st.integers(1, 40)


def _check(source: str, tmp_path: Path, backend: Backend) -> None:
    path = tmp_path / "program.py"
    path.write_text(PRELUDE + source, encoding="utf-8")
    check_script(path, backend.name, backend.device, getattr(backend, "python", None))


# -- RNG-001 -------------------------------------------------------------------------------------
DRAW_KINDS = (
    "rand", "randn", "randint", "randperm", "multinomial", "fill", "normal", "bernoulli", "poisson", "init",
    "log_normal", "geometric",
)
# nn.init's initialisers that draw: trunc_normal_ by redrawn normals (bounds holding more than 0.3 of
# the mass) or by uniforms accepted by the density; sparse_ (its randperms from the global stream);
# orthogonal_ (rounded: its QR is LAPACK's, whose last bits differ between builds)
INIT_CALLS = (
    "trunc_normal_(torch.empty({n}, dtype=torch.{dtype}){g})",
    "trunc_normal_(torch.empty({n}, dtype=torch.{dtype}), 1.0, 0.5, -1.0, 0.5{g})",
    "trunc_normal_(torch.empty({n}, dtype=torch.{dtype}), mean=3.0, std=2.0, a=2.5, b=3.0{g})",
    "sparse_(torch.empty({n}, 3, dtype=torch.{dtype}), 0.4, std=0.5{g})",
    "orthogonal_(torch.empty(3, {n}, dtype=torch.{dtype}), gain=2.0{g}).mul(1e4).round()",
)


@st.composite
def draw_calls(draw: Any, gen: str, kind: str | None = None) -> str:
    """One random call (of ``kind``, else a drawn one of DRAW_KINDS) on generator expression
    ``gen`` (empty: the global stream), printed."""
    g = f", generator={gen}" if gen else ""
    n = draw(sizes)
    lo = draw(st.integers(-50, 50))
    kind = kind or draw(st.sampled_from(DRAW_KINDS))
    if kind == "rand":
        dtype = draw(st.sampled_from(["float32", "float64"]))
        return f"print(torch.rand({n}, dtype=torch.{dtype}{g}).tolist())"
    if kind == "randn":
        dtype = "float64" if n >= 16 else draw(st.sampled_from(["float32", "float64"]))
        return f"print(torch.randn({n}, dtype=torch.{dtype}{g}).tolist())"
    if kind == "log_normal":  # one double normal at a time, whatever the dtype
        dtype = draw(st.sampled_from(["float32", "float64", "float16", "bfloat16"]))
        mean, std = draw(st.sampled_from([(1.0, 2.0), (0.25, 0.75), (-3.0, 0.1)]))
        return f"print(torch.empty({n}, dtype=torch.{dtype}).log_normal_({mean}, {std}{g}).tolist())"
    if kind == "geometric":
        dtype = draw(st.sampled_from(["float32", "float64", "int64", "int32"]))
        p = draw(st.sampled_from([0.3, 0.01, 0.9]))
        return f"print(torch.empty({n}, dtype=torch.{dtype}).geometric_({p}{g}).tolist())"
    if kind == "randint":
        # a narrow range (32-bit draws) and a wide one (64-bit draws from 2**28 on)
        narrow = draw(st.sampled_from([1, 7, 1000, 2**28 - 1]))
        wide = draw(st.sampled_from([2**28, 2**31, 2**33]))
        # torch's two overloads, (low, high, size) and (high, size), spelt with size by position or name
        spell = draw(st.sampled_from(["{span}, size=({n},)", "{lo}, {hi}, ({n},)", "{span}, ({n},)",
                                      "high={span}, size=({n},)", "{lo}, {hi}, size=({n},)"]))
        return "\n".join(
            f"print(torch.randint({spell.format(lo=lo, hi=lo + span, span=span, n=n)}{g}).tolist())"
            for span in (narrow, wide)
        )
    if kind == "randperm":
        return f"print(torch.randperm({n}{g}).tolist())"
    if kind in ("normal", "bernoulli", "poisson"):
        return draw(sampling_calls(kind, n, g))
    if kind == "init":  # every initialiser, each a line
        lines = []
        for call in INIT_CALLS:
            # float32 normals below 16 elements (sparse_ draws 3n); orthogonal_'s are rounded
            floats = ["float64"] if 3 * n >= 16 and "orthogonal" not in call else ["float32", "float64"]
            dtype = draw(st.sampled_from(floats))
            lines.append(f"print(torch.nn.init.{call.format(n=n, dtype=dtype, g=g)}.tolist())")
        return "\n".join(lines)
    if kind == "multinomial":
        weights = draw(st.lists(st.floats(0.125, 10, width=32), min_size=2, max_size=8))
        replacement = draw(st.booleans())
        count = draw(st.integers(1, 12 if replacement else len(weights)))
        return f"print(torch.multinomial(torch.tensor({weights}), {count}, {replacement}{g}).tolist())"
    name, args = draw(
        st.sampled_from(
            [
                ("uniform_", [lo / 7, lo / 7 + 2.5]),
                ("normal_", [0.5, 3.0]),
                ("random_", []),
                ("random_", [abs(lo) + 1]),
                ("random_", [-3, 9]),
                ("exponential_", [2.0]),
            ]
        )
    )
    dtypes = ["float64", "int64"] if name == "random_" else ["float64"]
    if name == "uniform_" or name == "normal_" and n < 16:
        dtypes.append("float32")
    if name == "normal_":  # a float buffer per 16-block from 16 elements on, then rounded
        dtypes += ["float16", "bfloat16"]
    args = [repr(a) for a in args] + ([f"generator={gen}"] if gen else [])
    dtype = draw(st.sampled_from(dtypes))
    return f"print(torch.empty({n}, dtype=torch.{dtype}).{name}({', '.join(args)}).tolist())"


@st.composite
def sampling_calls(draw: Any, kind: str, n: int, g: str) -> str:
    """torch.normal in a drawn overload (tensor or float mean and std, or floats and a size),
    torch.bernoulli or bernoulli_ of float32 probabilities, then of float64 ones or a float p, or
    torch.poisson of rates below and above 10 (its two samplers), printed."""
    dtype = "float64" if n >= 16 else draw(st.sampled_from(["float32", "float64"]))
    # exact values (arange over powers of two): torch's linspace rounds otherwise than impl's
    counting = f"torch.arange({n}, dtype=torch.{dtype})"
    spread = f"({counting} / 64)"
    if kind == "normal":
        mean, std = f"(({counting} - 8) / 4)", f"({counting} / 8)"
        args = draw(
            st.sampled_from(
                [
                    f"{mean}, {std}",
                    f"{mean}, 0.5",
                    f"{mean}",
                    f"1.5, {std}",
                    f"-2, 3, ({n},), dtype=torch.{dtype}",
                ]
            )
        )
        return f"print(torch.normal({args}{g}).tolist())"
    if kind == "poisson":
        scale = draw(st.sampled_from([0.25, 2, 25]))
        return f"print(torch.poisson({counting} * {scale}{g}).tolist())"
    # a float32 tensor of probabilities (float uniforms), then a float64 one or a float p (doubles)
    single = spread.replace(f"torch.{dtype}", "torch.float32")
    into = draw(st.sampled_from(["float32", "int64", "bool"]))
    in_place = f"torch.zeros(2, {n}, dtype=torch.{into}).bernoulli_({single}{g})"
    first = draw(st.sampled_from([f"torch.bernoulli({single}{g})", in_place]))
    double = spread.replace(f"torch.{dtype}", "torch.float64")
    p = draw(st.sampled_from([0.0, 0.3, 1.0]))
    second = draw(st.sampled_from([f"torch.bernoulli({double}{g})", f"torch.bernoulli({spread}, {p}{g})"]))
    return f"print({first}.tolist())\nprint({second}.tolist())"


@st.composite
def rng_programs(draw: Any) -> str:
    """Seeded draws of every kind (in a drawn order) on the global stream and on a Generator,
    interleaved, one of them in torch.random.fork_rng (the global draws after it repeat those in
    it), then a state saved and restored (the draws after set_state repeat those after
    get_state)."""
    lines = [f"torch.random.manual_seed({draw(seeds)})", f"g = torch.Generator().manual_seed({draw(seeds)})"]
    forked = draw(st.sampled_from(DRAW_KINDS))
    for kind in draw(st.permutations(DRAW_KINDS)):
        call = draw(draw_calls(draw(st.sampled_from(["", "g"])), kind))
        if kind == forked:
            lines += ["with torch.random.fork_rng():", *("    " + line for line in call.split("\n"))]
        lines.append(call)
    lines.append("state = g.get_state()")
    replayed = [draw(draw_calls("g")) for _ in range(draw(st.integers(1, 3)))]
    lines += [*replayed, "g.set_state(state)", *replayed, "print(g.initial_seed(), g.device)"]
    return "\n".join(lines) + "\n"


@pytest.mark.rule("RNG-001")
@_SETTINGS
@given(source=rng_programs())
def test_seeded_draws(source: str, backend: Backend, tmp_path: Path) -> None:
    _check(source, tmp_path, backend)


# -- DATA-001 ------------------------------------------------------------------------------------
LOADER_KINDS = ("shuffle", "generator", "sequential", "sampler", "batch_sampler", "replacement")


@st.composite
def loader_programs(draw: Any) -> str:
    """DataLoaders of every kind (LOADER_KINDS, in a drawn order) over a TensorDataset of ``n``
    rows with drawn options, each iterated for one or two epochs, printing len() and every batch,
    then a draw of the global stream."""
    n = draw(st.integers(2, 30))
    lines = [
        f"torch.manual_seed({draw(seeds)})",
        f"x = torch.arange({2 * n}.).reshape({n}, 2)",
        f"ds = TensorDataset(x, torch.arange({n}))",
    ]
    for how in draw(st.permutations(LOADER_KINDS)):
        batch = draw(st.integers(1, n + 2))
        drop = draw(st.booleans())
        if how == "shuffle":
            make = f"DataLoader(ds, batch_size={batch}, shuffle=True, drop_last={drop})"
        elif how == "generator":
            gen = f"torch.Generator().manual_seed({draw(seeds)})"
            make = f"DataLoader(ds, {batch}, True, drop_last={drop}, generator={gen})"
        elif how == "sequential":
            make = f"DataLoader(ds, batch_size={batch}, drop_last={drop})"
        elif how == "sampler":
            make = f"DataLoader(ds, batch_size={batch}, sampler=RandomSampler(ds), drop_last={drop})"
        elif how == "replacement":
            count = draw(st.integers(1, 70))
            make = f"DataLoader(ds, batch_size={batch}, sampler=RandomSampler(ds, True, {count}))"
        else:
            make = f"DataLoader(ds, batch_sampler=BatchSampler(RandomSampler(ds), {batch}, {drop}))"
        lines += [f"loader = {make}", "print(len(loader))"]
        lines += [
            f"for epoch in range({draw(st.integers(1, 2))}):",
            "    for xb, yb in loader:",
            "        print(xb.tolist(), yb.tolist())",
        ]
    lines.append("print(torch.rand(3))")
    return "\n".join(lines) + "\n"


@pytest.mark.rule("DATA-001")
@_SETTINGS
@given(source=loader_programs())
def test_seeded_loader_batches(source: str, backend: Backend, tmp_path: Path) -> None:
    _check(source, tmp_path, backend)


# -- DATA-002 ------------------------------------------------------------------------------------
_FIELDS = {
    "tensor": "torch.tensor([i, 2 * i])",
    "float": "i / 4",
    "int": "i",
    "bool": "i % 2 == 0",
    "str": "str(i)",
    "tuple": "(i, torch.tensor(float(i)))",
    "list": "[i / 2, torch.ones(2) * i]",
    "dict": "{'a': i, 'b': torch.full((2,), i)}",
}


@st.composite
def collate_programs(draw: Any) -> str:
    """Datasets of dict, tuple and list samples of drawn fields (the dict one holds every kind of
    field), collated by DataLoaders, then a random_split by lengths or fractions, printed."""
    n = draw(st.integers(2, 12))
    lines = [f"torch.manual_seed({draw(seeds)})"]
    for shape in ("dict", "tuple", "list"):
        fields = draw(st.permutations(sorted(_FIELDS)))
        if shape == "dict":
            sample = "{" + ", ".join(f"{f!r}: {_FIELDS[f]}" for f in fields) + "}"
        else:
            parts = ", ".join(_FIELDS[f] for f in fields[: draw(st.integers(1, 4))])
            sample = f"({parts},)" if shape == "tuple" else f"[{parts}]"
        name = f"Samples{shape.title()}"
        lines += [
            f"class {name}(Dataset):",
            f"    def __len__(self): return {n}",
            f"    def __getitem__(self, i): return {sample}",
            f"for batch in DataLoader({name}(), {draw(st.integers(1, n))}, {draw(st.booleans())}):",
            "    print(batch)",
        ]
    if draw(st.booleans()):
        cut = draw(st.integers(0, n))
        lengths = f"[{cut}, {n - cut}]"
    else:
        lengths = repr(draw(st.sampled_from([[0.5, 0.5], [0.3, 0.7], [0.2, 0.3, 0.5], [0.1, 0.2, 0.3, 0.4]])))
    gen = draw(st.sampled_from(["", f", generator=torch.Generator().manual_seed({draw(seeds)})"]))
    lines.append(f"print([list(s.indices) for s in random_split(range({n}), {lengths}{gen})])")
    return "\n".join(lines) + "\n"


@pytest.mark.rule("DATA-002")
@_SETTINGS
@given(source=collate_programs())
def test_collate_and_split(source: str, backend: Backend, tmp_path: Path) -> None:
    _check(source, tmp_path, backend)
