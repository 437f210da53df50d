"""torch.utils.deterministic: ``fill_uninitialized_memory``, a property of the module (as torch's)."""

import sys
import types

from impl import _deterministic


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self) -> bool:
        """Whether use_deterministic_algorithms(True) fills uninitialised memory with a known value."""
        return _deterministic.settings.fill_uninitialized_memory

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode: bool) -> None:
        _deterministic.set_fill_uninitialized_memory(mode)


sys.modules[__name__].__class__ = _Deterministic
