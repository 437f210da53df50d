"""RemovableHandle: what every ``register_*hook`` returns."""

from __future__ import annotations

import itertools
import weakref
from typing import Any


class RemovableHandle:
    """Removes the hook it was returned for from the dict(s) holding it."""

    next_id = itertools.count()

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle.next_id)
        self.extra_dict_ref = weakref.ref(extra_dict) if extra_dict is not None else None

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, self.extra_dict_ref):
            d = ref() if ref is not None else None
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()
