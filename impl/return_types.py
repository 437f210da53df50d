"""torch.return_types: named tuples returned by ops like ``max(dim)`` printed as torch prints them."""

from __future__ import annotations

from collections import namedtuple


def _structseq(name: str, fields: tuple[str, ...]) -> type:
    base = namedtuple(name, fields)  # type: ignore[misc]

    def __repr__(self: tuple) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self, strict=True))
        return f"torch.return_types.{name}(\n{body})"

    namespace = {"__repr__": __repr__, "__str__": __repr__, "__slots__": ()}
    namespace["_torch_type_name"] = f"torch.return_types.{name}"  # as torch's messages name the type
    return type(name, (base,), namespace)


max = _structseq("max", ("values", "indices"))
min = _structseq("min", ("values", "indices"))
