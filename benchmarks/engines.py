"""The engines a workload runs on: impl and torch (the same torch-shaped code on either), and
HIPS ``autograd`` as the numpy peer (its own code, see ``benchmarks.autograd_peer``).

``load_engine`` raises ``EngineUnavailable`` with a readable reason when an engine cannot run on
the asked device here (no cupy, a CPU-only torch wheel, autograd not installed); benchmarks turn
that into a skip naming the reason.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
# benchmarks/gpu_check.sh's stand-in mode: impl's cupy is tests/helpers/cupy_standin.py (numpy), and torch on
# cpu stands for torch on CUDA, so that the GPU benchmarks' plumbing runs on any machine
STANDIN_VARIABLE = "ORACLE_GPU_STANDIN"


def standin() -> bool:
    """Whether this is a stand-in run of the GPU benchmarks (``ORACLE_GPU_STANDIN=1``)."""
    return os.environ.get(STANDIN_VARIABLE) == "1"
TORCH_LIKE = ("impl", "torch")
PEERS = ("autograd",)


class EngineUnavailable(RuntimeError):
    """This engine cannot run on this device in this environment (the message says why)."""


@dataclass(frozen=True)
class Engine:
    """A module to run a workload with, the device it runs on, and how to wait for that device."""

    name: str
    module: ModuleType
    device: str
    sync: Callable[[], None]

    @property
    def torch_like(self) -> bool:
        return self.name in TORCH_LIKE


def _no_sync() -> None:
    """CPU work is finished when the call returns."""


def load_engine(name: str, device: str = "cpu") -> Engine:
    """The engine ``name`` (impl, torch, autograd) on ``device`` (cpu, cuda)."""
    if name == "autograd":
        if device != "cpu":
            raise EngineUnavailable("HIPS autograd runs on numpy only (cpu)")
        return Engine(name, _import("autograd.numpy", "pip install autograd"), device, _no_sync)
    if name not in TORCH_LIKE:
        raise ValueError(f"unknown engine {name!r}; known: {TORCH_LIKE + PEERS}")
    module = _import(name, "pip install -e '.[reference]'" if name == "torch" else "")
    if device == "cpu":
        return Engine(name, module, device, _no_sync)
    if device != "cuda":
        raise ValueError(f"unknown device {device!r}")
    if name == "torch":
        if standin() and not module.cuda.is_available():
            return Engine(name, module, "cpu", _no_sync)  # torch on cpu stands for torch on CUDA
        if not module.cuda.is_available():
            raise EngineUnavailable(f"torch {module.__version__} has no CUDA device (torch.cuda."
                                    "is_available() is False; the pinned reference wheel is the CPU build)")
        return Engine(name, module, device, module.cuda.synchronize)
    cupy = _import("cupy", "pip install -e '.[gpu]'")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # cupy raises its own runtime error types without a driver
        raise EngineUnavailable(f"cupy cannot reach a CUDA device ({type(exc).__name__}: {exc})") from exc
    if count == 0:
        raise EngineUnavailable("cupy sees no CUDA device")
    return Engine(name, module, device, cupy.cuda.runtime.deviceSynchronize)


def _import(name: str, hint: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise EngineUnavailable(f"cannot import {name} ({exc})" + (f"; {hint}" if hint else "")) from exc


def limit_threads(count: int) -> dict[str, int | None]:
    """Give every engine the same ``count`` compute threads: torch's intra-op pool and numpy's BLAS
    (through threadpoolctl, when installed), and the environment of child processes. ``count`` 0
    keeps the libraries' defaults. Returns the thread counts in effect.

    Why: on a small shared machine, a multi-threaded torch step waits at every parallel region for
    a thread another process pre-empted (a CNN step measured 15 ms to 450 ms from one run to the
    next here), and numpy's BLAS threads compete with torch's; one thread each is reproducible.
    """
    if count > 0:
        os.environ.update({name: str(count) for name in THREAD_VARIABLES})
        try:
            import threadpoolctl
        except ImportError:
            pass
        else:
            threadpoolctl.threadpool_limits(limits=count)
        try:
            import torch
        except ImportError:
            pass
        else:
            torch.set_num_threads(count)
    return {"torch": _torch_threads(), "blas": _blas_threads()}


def _torch_threads() -> int | None:
    try:
        import torch
    except ImportError:
        return None
    return torch.get_num_threads()


def _blas_threads() -> int | None:
    try:
        import threadpoolctl
    except ImportError:
        return None
    pools = [pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"]
    return max(pools) if pools else None
