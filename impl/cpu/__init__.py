"""torch.cpu: its amp (the deprecated ``torch.cpu.amp.autocast``)."""

from impl.cpu import amp

__all__ = ["amp"]
