"""torch.Size: a tuple that prints as ``torch.Size([2, 3])``."""

from __future__ import annotations

from impl import _api as api


@api.function("Size")
class Size(tuple):
    __module__ = __package__  # torch's class is torch.X, as type() and repr(cls) show
    _torch_type_name = "torch.Size"  # as torch's messages name it

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(int(s)) for s in self)}])"

    __str__ = __repr__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):  # slicing keeps the type, like torch.Size
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other):  # torch.Size + tuple (either side) is a torch.Size
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to torch.Size")
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        return Size(tuple.__add__(other, self)) if isinstance(other, tuple) else NotImplemented
