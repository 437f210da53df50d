"""The seed posts' tensor-level programs print the same with impl as with torch."""

from __future__ import annotations

import contextlib
import io
import re
import warnings

import pytest
import torch

import impl
from tests.test_impl_seed_programs import PROGRAMS

ADDRESS = re.compile(r" at 0x[0-9a-f]+")


@contextlib.contextmanager
def imports_resolve_to(module: object):
    """While running a program on impl, ``from torch.autograd import X`` must find impl's."""
    import sys

    if module is torch:
        yield
        return
    names = {
        "torch": impl,
        "torch.autograd": impl.autograd,
        "torch.autograd.function": impl.autograd.function,
    }
    saved = {n: sys.modules.get(n) for n in names}
    sys.modules.update(names)
    try:
        yield
    finally:
        sys.modules.update(saved)


def run(program: str, module: object) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings(), imports_resolve_to(module):
        warnings.simplefilter("ignore")
        exec(compile(program, "<seed>", "exec"), {"torch": module, "__name__": "__seed__"})
    return ADDRESS.sub(" at 0x?", out.getvalue())


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_seed_program_prints_what_torch_prints(name: str) -> None:
    program = PROGRAMS[name]
    assert run(program, impl) == run(program, torch)
