"""torch.utils subset: hooks."""

from impl.utils import hooks

__all__ = ["hooks"]
