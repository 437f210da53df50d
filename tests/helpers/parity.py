"""Run one torch program text in-process on torch or on impl and capture what it prints.

The impl unit tests (tests/impl/test_impl_*.py) compare impl with torch this way: the same program,
run once with each module bound to the name ``torch``, must print the same (addresses aside).
Whole scripts (the seed examples) are compared in subprocesses by oracle.script instead.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings

import torch

import impl

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


def both(fn, describe=lambda result: result):
    """``fn(module)`` on torch and on impl: for each, (``describe`` of its result, None) or (None,
    (the error's type name, the first line of its message))."""
    out = []
    for lib in (torch, impl):
        try:
            out.append((describe(fn(lib)), None))
        except Exception as e:  # noqa: BLE001 - compared between the two
            out.append((None, (type(e).__name__, str(e).split("\n")[0])))
    return out
