"""How torch's messages name a Python value's type (a foundation: argument errors at every layer
use it, Tensor's own included)."""

from __future__ import annotations

from typing import Any

HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python


def type_name(value: Any) -> str:
    """A value's type as torch's messages name it, its C type's tp_name: a builtin's or a Python
    class's own name (``NoneType``, ``Foo``), an extension type's qualified one (``numpy.ndarray``);
    impl's classes standing for torch's C types give their torch name as ``_torch_type_name``
    (``torch.dtype``, ``torch.Size``, ``torch.return_types.max``)."""
    kind = type(value)
    torch_name = getattr(kind, "_torch_type_name", None)
    if torch_name is not None:
        return torch_name
    if kind.__flags__ & HEAP_TYPE or kind.__module__ == "builtins":
        return kind.__name__
    return f"{kind.__module__}.{kind.__name__}"
