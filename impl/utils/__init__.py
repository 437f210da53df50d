"""torch.utils subset: hooks, data, deterministic."""

from impl.utils import data, deterministic, hooks

__all__ = ["data", "deterministic", "hooks"]
