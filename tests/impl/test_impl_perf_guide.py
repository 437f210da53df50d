"""What the Performance Tuning Guide and the AMP recipe use beyond the conformance programs
(issue 22): torch.backends' settable flags, Module.to(memory_format=), autocast as a decorator,
GradScaler's loop and state: each snippet's printed values and warnings against torch's."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch

import impl

SNIPPETS = {
    "cudnn flags": """
b = torch.backends
show(b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32)
b.cudnn.benchmark = True
b.cudnn.deterministic = True
show(b.cudnn.benchmark, b.cudnn.deterministic, torch.are_deterministic_algorithms_enabled())
with b.cudnn.flags(enabled=False, deterministic=False):
    show(b.cudnn.enabled, b.cudnn.deterministic, b.cudnn.benchmark)
show(b.cudnn.enabled, b.cudnn.deterministic)
b.cudnn.benchmark = False
b.cudnn.deterministic = False
b.cudnn.enabled = 1
""",
    "cuda.matmul flags": """
m = torch.backends.cuda.matmul
show(m.allow_tf32, m.allow_fp16_reduced_precision_reduction, torch.get_float32_matmul_precision())
m.allow_tf32 = True
show(m.allow_tf32, torch.get_float32_matmul_precision())
torch.set_float32_matmul_precision("highest")
show(m.allow_tf32, torch.backends.mkldnn.enabled, torch.backends.opt_einsum.enabled)
m.allow_tf32 = 1
""",
    "Module.to(memory_format=)": """
net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Linear(2, 3))
net = net.to(memory_format=torch.channels_last)
show(net[0].weight.stride(), net[1].weight.stride(), net[0].bias.stride())
x = torch.ones(2, 3, 5, 5).to(memory_format=torch.channels_last)
show(net[0](x).stride(), net[0](torch.ones(2, 3, 5, 5)).stride(), repr(torch.channels_last))
""",
    "autocast decorator": """
@torch.autocast("cpu", dtype=torch.float16)
def f(a, b):
    return a @ b, torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")
out, on, dtype = f(torch.ones(2, 3), torch.ones(3, 2))
show(out.dtype, on, dtype, torch.is_autocast_enabled("cpu"))
torch.autocast("cpu")(3)
""",
    "GradScaler": """
torch.manual_seed(0)
lin = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(lin.parameters(), lr=0.5)
s = torch.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
for x in (1.0, 2.0, float("inf"), 3.0, 1.0):
    s.scale(lin(torch.full((1, 3), x)).sum()).backward()
    s.step(opt)
    s.update()
    opt.zero_grad()
    show(s.get_scale(), s.state_dict(), lin.bias.tolist())
s.unscale_(opt)
s.unscale_(opt)
""",
}


def run(module: Any, source: str) -> list[str]:
    """What ``source`` shows on ``module`` (as torch): its ``show``s, warnings and last error."""
    shown: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(source, {"torch": module, "show": lambda *v: shown.append(repr(v))})
        except Exception as exc:  # noqa: BLE001  (the error is what the snippet shows last)
            shown.append(f"{type(exc).__name__}: {exc}")
    return shown + [f"{w.category.__name__}: {w.message}" for w in caught]


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_as_torch(name: str) -> None:
    assert run(impl, SNIPPETS[name]) == run(torch, SNIPPETS[name])
