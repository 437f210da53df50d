"""Self-tests of ``oracle.script``: the printed-value comparison, normalisation, the torch import
alias (in the backend's subprocess only, never for a backend built on torch), and script diffs
(torch against itself is identical on every seed script; every planted fault is caught on the
seed script that exposes it)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
import torch

from oracle.backends import BackendError
from oracle.rules.seeds import SCRIPTS
from oracle.script import (
    ScriptDivergenceError,
    TorchAlias,
    check_script,
    diff_script,
    first_difference,
    lines_match,
    normalise,
    numbers_match,
    run_script,
)
from tests.helpers import ROOT

SEEDS = ROOT / "examples" / "seeds"


# ------------------------------------------------------------------ printed numbers


@pytest.mark.parametrize(
    "a, b",
    [
        ("0.1000", "0.1001"),  # a last-digit rounding difference
        ("-0.0033", "-0.0034"),
        ("1.2243e-04", "1.2244e-04"),
        ("4.", "4.0000"),  # same value, other format
        ("0.6784629225730896", "0.6784629225730897"),
        ("1e-3", "0.001"),
        ("7", "7"),
        ("1.3306416273117065", "1.330641508102417"),  # float32 values (.item()) one float32 ulp apart
        ("-2.0", "-1.9999998807907104"),
    ],
)
def test_numbers_that_agree(a: str, b: str) -> None:
    assert numbers_match(a, b) and numbers_match(b, a)


@pytest.mark.parametrize(
    "a, b",
    [
        ("0.1000", "0.1002"),  # two units in the last digit: more than rounding
        ("4.0000", "4.0040"),  # a relative error of 1e-3
        ("4.", "4.0040"),
        ("1.2243e-04", "1.2255e-04"),  # 1e-3 relative in scientific notation
        ("1.2243e-04", "1.2243e-05"),
        ("1.2243e-04", "1.2244e-05"),  # one mantissa unit but another exponent
        ("91.5", "91.6"),  # shortest repr (Python float): not a rounded format, exact
        ("4.", "5."),  # torch prints "4." only for exact integers
        ("1", "2"),  # integers are exact
        ("4", "4."),  # an integer and a float: another dtype
        ("0.12", "0.13"),
        ("1.3306416273117065", "1.3306413888931274"),  # two float32 ulps apart
        ("0.1", "0.10000000149011612"),  # 0.1 is no float32: a double, exact
        ("2.0", "2.000000000000001"),  # doubles a double-ulp apart, not float32s
    ],
)
def test_numbers_that_differ(a: str, b: str) -> None:
    assert not numbers_match(a, b) and not numbers_match(b, a)


@pytest.mark.parametrize("value", [0.2, 0.5, 1.0, 3.25, 17.0, 123.456, 4096.5, -0.75, -52.0])
@pytest.mark.parametrize("shape", [(), (3,), (2, 2)])
def test_torch_printed_relative_error_1e_3_is_caught(value: float, shape: tuple) -> None:
    """Values torch prints with 4 decimals (|x| >= 0.2) or in scientific notation: a relative
    error of 1e-3 always changes the printed line beyond a rounding difference."""
    base = torch.full(shape, value) + torch.arange(torch.Size(shape).numel()).reshape(shape) * 0.37
    for ref, test in [(base, base * 1.001), (base * 1e-9, base * 1e-9 * 1.001)]:
        ref_lines, test_lines = str(ref).splitlines(), str(test).splitlines()
        assert first_difference(ref_lines, test_lines) is not None, (ref, test)


@pytest.mark.parametrize("value", [0.1234, 1.0 / 3, 2.0 / 3, 17.123456, 1e-5 / 3, 5.55555])
def test_torch_printed_float32_noise_is_tolerated(value: float) -> None:
    """Neighbouring float32 values print identically or one last digit apart: tolerated."""
    ref = torch.tensor([value, 2 * value], dtype=torch.float32)
    test = torch.nextafter(ref, torch.full_like(ref, 10.0))
    test = torch.nextafter(test, torch.full_like(ref, 10.0))
    assert first_difference(str(ref).splitlines(), str(test).splitlines()) is None


def test_line_tokens() -> None:
    assert lines_match("tensor([[ 7.,  0., 27.,  0.]])", "tensor([[7.0000, 0.0000, 27.0000, 0.0000]])")
    assert lines_match("x: tensor(1.)  ;", "x: tensor(1.) ;")  # inner whitespace only separates
    assert not lines_match("        [3., 4.]])", "       [3., 4.]])")  # indentation is exact
    assert not lines_match("True", "False")
    assert not lines_match("grad_fn=<AddBackward0>)", "grad_fn=<AddBackward1>)")
    assert not lines_match("torch.float32", "torch.float64")
    assert not lines_match("tensor([1., 2.])", "tensor([1., 2., 3.])")
    assert not lines_match("ab", "a b")
    assert not lines_match("y= tensor(0.)", "y= tensor(-0.0010)")


def test_first_difference_reports_missing_lines() -> None:
    assert first_difference(["a", "b"], ["a", "b"]) is None
    assert first_difference(["a", "b"], ["a"]) == (2, "b", None)
    assert first_difference(["a"], ["a", "c"]) == (2, None, "c")
    found = first_difference(["a", "tensor(4.)"], ["a", "tensor(4.0040)"])
    assert found == (2, "tensor(4.)", "tensor(4.0040)")


def test_normalise_machine_specific_parts(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    text = (
        f"<PowBackward0 object at 0x7f88d79332b0>\n{script}:10: warning\n"
        "File /usr/lib/python3/site-packages/torch/_tensor.py, line 3 "
        "(Triggered internally at /__w/pytorch/aten/TensorBody.h:493.)\n"
        "<impl.autograd.function.MyReLUBackward object at 0x1f>\n"
    )
    assert normalise(text, script, "impl") == (
        "<PowBackward0 object at 0x?>\n<script>:10: warning\n"
        "File <path>, line 3\n<torch.autograd.function.MyReLUBackward object at 0x?>\n"
    )
    assert normalise("simpl.x impl.y", script, "impl") == "simpl.x torch.y"
    url = "See github.com/pytorch/pytorch/pull/30531 for more information."
    assert normalise(url, script) == url


# ------------------------------------------------------------------ the import alias


@pytest.fixture
def fake_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A torch-like package ``fakebackend`` (with nn, nn.functional, autograd) on PYTHONPATH."""
    pkg = tmp_path / "fakebackend"
    (pkg / "nn").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from fakebackend import autograd, nn\n__version__ = 'fake'\n")
    (pkg / "autograd.py").write_text("def grad():\n    return 'fake grad'\n")
    (pkg / "nn" / "__init__.py").write_text("class Linear:\n    pass\n")
    (pkg / "nn" / "functional.py").write_text("def relu(x):\n    return max(x, 0)\n")
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}:{ROOT}")
    return "fakebackend"


def test_torch_imports_resolve_to_the_backend(tmp_path: Path, fake_backend: str) -> None:
    script = tmp_path / "uses_torch.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            import torch
            import torch.nn
            import torch.nn.functional as F
            from torch import nn, autograd
            from torch.autograd import grad
            print(torch.__version__, torch is sys.modules["fakebackend"])
            print(torch.nn is nn is sys.modules["fakebackend.nn"] is sys.modules["torch.nn"])
            print(F is sys.modules["fakebackend.nn.functional"], F.relu(-3), grad())
            import torch.utils.hooks
            """
        )
    )
    run = run_script(script, fake_backend)
    assert run.stdout.splitlines() == ["fake True", "True", "True 0 fake grad"]
    assert run.exception == ["ModuleNotFoundError: No module named 'torch.utils'", "at <script>:11"]
    assert run.exit == "1"
    # the alias lives in the backend's subprocess only
    assert not any(isinstance(finder, TorchAlias) for finder in sys.meta_path)
    assert sys.modules["torch"] is torch and "fakebackend" not in sys.modules


ON_TORCH = """
import torch as _t
from torch import *

__version__ = "on torch " + _t.__version__
"""


def test_a_backend_built_on_torch_gets_no_alias(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A backend that imports torch itself leaves ``import torch`` to real torch (an alias would
    route torch's own internal imports to the backend): the script's torch.nn runs as on torch."""
    (tmp_path / "ontorch.py").write_text(ON_TORCH)
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}:{ROOT}")
    script = tmp_path / "uses_nn.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            torch.manual_seed(0)
            layer = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
            loss = F.mse_loss(layer(torch.ones(4, 3)), torch.zeros(4, 2))
            loss.backward()
            print(type(layer[0]).__module__, layer[0].weight.grad)
            print(torch.__name__, sys.modules["torch.nn"] is nn, torch.__file__.endswith("torch/__init__.py"))
            """
        )
    )
    diff = diff_script(script, "ontorch")
    assert diff.identical, diff.describe()
    assert diff.test_run.exception == [] and diff.test_run.stderr == ""
    lines = diff.test_run.stdout.splitlines()
    assert lines[0].startswith("torch.nn.modules.linear tensor([[")
    assert lines[-1] == "torch True True"  # real torch, as in the reference run


def test_a_backend_that_cannot_be_loaded_is_a_backend_error(tmp_path: Path) -> None:
    """Its subprocess says why; diff_script raises it (the command line's usage error)."""
    script = tmp_path / "s.py"
    script.write_text("import torch\nprint(torch.ones(1))\n")
    with pytest.raises(BackendError, match="cannot import backend module 'no_such_backend_xyz'"):
        diff_script(script, "no_such_backend_xyz")


def test_script_run_records_every_channel(tmp_path: Path) -> None:
    script = tmp_path / "channels.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys, warnings
            import torch
            print("out", torch.ones(2))
            print("err", file=sys.stderr)
            x = torch.ones(1, requires_grad=True) * 2
            x.grad
            for _ in range(3):
                warnings.warn("once per line")
            raise ValueError(f"bad {hex(id(x))}")
            """
        )
    )
    run = run_script(script, "torch")
    assert run.stdout == "out tensor([1., 1.])\n" and run.stderr == "err\n"
    assert [w.split(": ")[:2] for w in run.warnings] == [
        ["<script>:7", "UserWarning"],
        ["<script>:9", "UserWarning"],
    ]
    assert run.warnings[1].endswith("once per line")
    assert run.exception == ["ValueError: bad 0x?", "at <script>:10"]


def test_sys_exit_status_is_compared(tmp_path: Path) -> None:
    script = tmp_path / "exits.py"
    script.write_text("import sys\nimport torch\nsys.exit(3 if torch.__name__ == 'torch' else 0)\n")
    assert run_script(script, "torch").exit == "3"


def test_unseeded_draws_start_alike_on_both_sides(tmp_path: Path) -> None:
    """torch seeds a fresh process from the OS (numpy and Python too): both runs start seeded alike,
    so an unseeded script's draws compare (two processes of real torch here)."""
    script = tmp_path / "draws.py"
    script.write_text("import random\nimport numpy\nimport torch\n"
                      "print(torch.rand(3), numpy.random.rand(2), random.random())\n")
    diff = diff_script(script, "torch")
    assert diff.identical, diff.describe()
    torch.manual_seed(0)
    assert str(torch.rand(3)) in diff.reference_run.stdout


# ------------------------------------------------------------------ seed scripts


@pytest.mark.parametrize("script", sorted(SCRIPTS.values()))
def test_torch_against_itself_is_identical(script: str) -> None:
    diff = diff_script(SEEDS / script, "torch")
    assert diff.identical, diff.describe()
    assert diff.reference_run.stdout.strip(), "a seed script shows something"


def test_every_seed_script_is_in_the_catalogue() -> None:
    assert sorted(SCRIPTS.values()) == sorted(p.name for p in SEEDS.glob("seed*.py"))


# fault -> (the seed script that exposes it, the channel and line of the first difference)
EXPOSED_BY = {
    "hook_order_swapped": ("seed004_hook_replacement.py", "stdout", 1),
    "grad_off": ("seed003_leaf_nonleaf.py", "stdout", 4),
    "retain_graph_error_suppressed": ("seed003_graph_freed.py", "exception", 1),
    "is_leaf_inverted": ("seed002_leaf_grad_fn.py", "stdout", 3),
    "warning_dropped": ("seed002_leaf_grad_fn.py", "warnings", 1),
    "mean_off": ("seed001_simple_gradient.py", "stdout", 6),
    "sum_float64": ("seed000_register_hook.py", "stdout", 9),
    "backward_error_reworded": ("seed001_requires_grad_error.py", "exception", 1),
    "everything_contiguous": ("seed003_view_reshape.py", "stdout", 17),
    "parameters_sorted": ("seed003_module_net.py", "stdout", 2),
    "sigmoid_missing": ("seed000_register_hook.py", "stdout", 1),  # AttributeError before any print
    "pow_segfault": ("seed003_backward.py", "stdout", 1),  # the script's process dies before it prints
}
# faults no seed script exposes, and why (tests/oracle/test_meta_faults.py catches them with programs)
NOT_IN_SEEDS = {"neg_as_mul": "no seed script negates a tensor with torch.neg or Tensor.neg"}


def test_every_planted_fault_is_exposed_by_a_seed_script_or_said_not_to_be() -> None:
    from oracle.faults import FAULTS

    assert set(EXPOSED_BY) | set(NOT_IN_SEEDS) == set(FAULTS) and not set(EXPOSED_BY) & set(NOT_IN_SEEDS)


@pytest.mark.parametrize("fault", sorted(EXPOSED_BY))
def test_planted_fault_is_caught(fault: str) -> None:
    script, channel, line = EXPOSED_BY[fault]
    with pytest.raises(ScriptDivergenceError) as caught:
        check_script(SEEDS / script, f"fault:{fault}")
    diff = caught.value.diff
    assert (diff.channel, diff.line) == (channel, line), diff.describe()
    assert f"fault:{fault}" in diff.describe()
    assert caught.value.to_dict()["repro"] == (SEEDS / script).read_text(encoding="utf-8")
