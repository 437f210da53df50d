"""torch.utils.hooks: RemovableHandle (defined in impl._hooks, below the Tensor that returns it)."""

from impl._hooks import RemovableHandle

__all__ = ["RemovableHandle"]
