"""torch.amp: autocast and GradScaler."""

from impl.amp.autocast_mode import autocast, is_autocast_available
from impl.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "is_autocast_available"]
