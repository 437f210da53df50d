"""torch.utils subset: hooks, data."""

from impl.utils import data, hooks

__all__ = ["data", "hooks"]
