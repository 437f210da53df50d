"""torch.backends.mkldnn: oneDNN is there (torch's CPU build has it; impl computes on numpy)."""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator

from impl.backends._flags import bool_flag, flagged, swapped


def is_available() -> bool:
    return True


class MkldnnModule(types.ModuleType):
    enabled = bool_flag("set_enabled_mkldnn", True)
    deterministic = bool_flag("set_deterministic_mkldnn", False)


@contextlib.contextmanager
def flags(
    enabled: bool = False, deterministic: bool = False, allow_tf32: bool = True, fp32_precision: str = "none"
) -> Iterator[None]:
    with swapped(__name__, {"enabled": enabled, "deterministic": deterministic}):
        yield


flagged(__name__, MkldnnModule)
