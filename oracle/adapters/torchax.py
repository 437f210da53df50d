"""torchax (PyTorch on JAX) as a torch-like namespace on the ``jax`` device.

A torchax user writes ``import torchax; torchax.enable_globally()`` and then ordinary torch code
with ``device="jax"``: tensors are JAX arrays, torch's autograd drives them. This module does the
same, exporting ``torch``'s names, with float64 on (``JAX_ENABLE_X64=1``, off by default in JAX).

torchax 0.0.13 names overloads at import that torch 2.13 no longer has (the named-tensor ones, e.g.
``aten.prod.dim_Dimname``); while torchax loads, such a name answers a stand-in that nothing calls,
so that torchax runs on the pinned torch instead of an older one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

os.environ.setdefault("JAX_ENABLE_X64", "1")

import jax  # noqa: E402
import torch  # noqa: E402
import torch._ops  # noqa: E402

MISSING_OVERLOADS: list[str] = []  # the overloads torchax named that this torch lacks


@contextmanager
def _tolerate_removed_overloads() -> Iterator[None]:
    """While active, a named-tensor overload torch lacks is a stand-in, recorded in MISSING_OVERLOADS."""
    packet = torch._ops.OpOverloadPacket
    original = packet.__getattr__

    def lookup(self: Any, key: str) -> Any:
        try:
            return original(self, key)
        except AttributeError:
            if "name" not in key.lower():
                raise
            MISSING_OVERLOADS.append(f"{self._qualified_op_name}.{key}")
            return ("removed overload", self._qualified_op_name, key)

    packet.__getattr__ = lookup
    try:
        yield
    finally:
        packet.__getattr__ = original


with _tolerate_removed_overloads():
    import torchax  # noqa: E402

    torchax.enable_globally()

__version__ = f"{torchax.__version__} (jax {jax.__version__}, torch {torch.__version__})"


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
