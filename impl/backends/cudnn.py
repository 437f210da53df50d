"""torch.backends.cudnn of a CPU build: no cuDNN (is_available False, version None); its flags
keep what they are set to (bools only), ``flags(...)`` sets them for a block."""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator
from typing import Any

from impl.backends._flags import bool_flag, flagged, swapped


def is_available() -> bool:
    return False


def version() -> None:
    return None


def is_acceptable(tensor: Any) -> bool:
    return False


class CudnnModule(types.ModuleType):
    enabled = bool_flag("set_enabled_cudnn", True)
    benchmark = bool_flag("set_benchmark_cudnn", False)
    deterministic = bool_flag("set_deterministic_cudnn", False)
    allow_tf32 = bool_flag("set_allow_tf32_cublas", True)  # (torch's message names cuBLAS's setter)
    benchmark_limit = None


@contextlib.contextmanager
def flags(
    enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10, deterministic: bool = False,
    allow_tf32: bool = True, fp32_precision: str = "none", depthwise_kernel: str = "auto",
) -> Iterator[None]:
    values = {"enabled": enabled, "benchmark": benchmark, "deterministic": deterministic}
    with swapped(__name__, {**values, "allow_tf32": allow_tf32}):
        yield


flagged(__name__, CudnnModule)
