"""torch.backends.opt_einsum without the opt_einsum package: not available, not enabled, no
strategy (einsum contracts left to right, as impl's does)."""

from __future__ import annotations

from typing import Any

enabled = False
strategy = None


def is_available() -> bool:
    return False


def get_opt_einsum() -> Any:
    return None
