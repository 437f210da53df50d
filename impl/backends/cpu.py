"""torch.backends.cpu: the kernel set torch dispatches to on this machine."""

from impl import _cpu


def get_cpu_capability() -> str:
    return _cpu.cpu_capability().upper()
