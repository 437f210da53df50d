"""torch.cpu.amp: ``autocast``, deprecated for ``torch.amp.autocast('cpu', ...)``."""

from impl import dtypes
from impl.amp import autocast_mode

autocast = autocast_mode.deprecated("cpu", dtypes.bfloat16)

__all__ = ["autocast"]
