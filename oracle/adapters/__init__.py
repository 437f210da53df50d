"""Adapters: real third-party engines exposed as torch-like namespaces the oracle can run.

Each module here is what a user of that engine writes to run torch code on it, and nothing more:
import the engine, switch it on, and export its torch-shaped namespace (module attributes, looked
up lazily) with a ``__version__`` that names the engine and what it runs on. Select one as
``--backend oracle.adapters.NAME --device DEVICE``, in the engine's own environment
(``--backend-python``; ``nox -s engine -- NAME`` builds it). ``ENGINES`` tells the nox session how to
install and run each. Nothing here is imported by the oracle's core.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Engine:
    """How to install and run one engine: its pip requirements (in its own virtualenv), the
    backend spec (its adapter) and the device it runs on."""

    name: str
    requirements: tuple[str, ...]
    backend: str
    device: str = "cpu"
    note: str = ""


ENGINES: dict[str, Engine] = {
    engine.name: engine
    for engine in (
        Engine("torchax", ("torchax", "jax[cpu]", "torch==2.13.0"), "oracle.adapters.torchax", "jax",
               note="torch 2.13 (the pinned CPU wheel) with torchax's JAX tensors"),
        Engine("jtorch", ("jtorch",), "oracle.adapters.jtorch", "cpu",
               note="jittor compiles its C++ on the first import (minutes)"),
    )
}
