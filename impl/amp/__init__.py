"""torch.amp: autocast and GradScaler."""

from impl.amp.autocast_mode import autocast, is_autocast_available

__all__ = ["autocast", "is_autocast_available"]
