"""torch.random: the default generator's seeding and state functions, and fork_rng."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from impl import accelerator, cuda
from impl._creation import get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from impl._random import Generator, default_generator

__all__ = [
    "Generator",
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]

_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(
    devices: Any = None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str | None = None,
) -> Iterator[None]:
    """Restore the CPU stream (and the devices' streams) to their state on entry when the block exits."""
    global _fork_rng_warned_already
    if device_type == "meta" or not enabled:
        yield
        return
    acc = accelerator.current_accelerator()
    device_type = device_type or (acc.type if acc is not None else "cuda")
    if device_type != "cuda":
        raise RuntimeError(
            f"Device '{device_type}' does not have a corresponding module registered as "
            f"'torch.{device_type}'."
        )
    if devices is None:
        num_devices = cuda.device_count()
        if num_devices > 1 and not _fork_rng_warned_already:
            warnings.warn(
                f"CUDA reports that you have {num_devices} available devices, and you have used {_caller} "
                f"without explicitly specifying which devices are being used. For safety, we initialize "
                f"*every* CUDA device by default, which can be quite slow if you have a lot of CUDAs. If you "
                f"know that you are only making use of a few CUDA devices, set the environment variable "
                f"CUDA_VISIBLE_DEVICES or the '{_devices_kw}' keyword argument of {_caller} with the set of "
                "devices you are actually using. For example, if you are using CPU only, set "
                "device.upper()_VISIBLE_DEVICES= or devices=[]; if you are using device 0 only, set "
                f"CUDA_VISIBLE_DEVICES=0 or devices=[0].  To initialize all devices and suppress this "
                f"warning, set the '{_devices_kw}' keyword argument to `range(torch.cuda.device_count())`.",
                stacklevel=3,
            )
            _fork_rng_warned_already = True
        devices = list(range(num_devices))
    else:
        devices = list(devices)
    cpu_rng_state = get_rng_state()
    device_rng_states = [cuda.get_rng_state(device) for device in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_rng_state)
        for device, device_rng_state in zip(devices, device_rng_states, strict=True):
            cuda.set_rng_state(device_rng_state, device)
