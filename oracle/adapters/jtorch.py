"""jtorch (PyTorch's API on jittor) as a torch-like namespace on the cpu.

jtorch's wheel installs a top-level ``torch`` (saying ``__version__ = "2.0.0"``) over jittor; its
users write ``import torch`` in an environment without the real one, which is what this does (in
the engine's own virtualenv: ``nox -s engine -- jtorch``). Without CUDA or network jittor needs
``nvcc_path`` empty and ``use_mkl=0``; it compiles its C++ on the first import (minutes; cached in
``~/.cache/jittor``). The version shown names jtorch's and jittor's distributions.
"""

from __future__ import annotations

import os
from importlib.metadata import version
from typing import Any

os.environ.setdefault("nvcc_path", "")
os.environ.setdefault("use_mkl", "0")

import torch  # noqa: E402 - jtorch's torch

__version__ = f"{version('jtorch')} (jittor {version('jittor')})"


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
