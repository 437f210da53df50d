"""torch.return_types: the named tuples returned by ops like ``max(dim)``.

torch makes them with CPython's PyStructSequence (a C type named ``torch.return_types.max``), not
with collections.namedtuple: the constructor takes one sequence (``max((values, indices))``), the
fields are read-only members, ``n_fields`` counts them, and there is no ``_fields`` or
``_asdict``. ``StructSeq`` behaves and words its errors the same way in Python.
"""

from __future__ import annotations

from typing import Any


class Field:
    """A structseq's read-only field: the item at ``index`` (a C member descriptor in CPython)."""

    def __init__(self, index: int, name: str, owner: str) -> None:
        self.index, self.name, self.owner = index, name, owner

    def __get__(self, obj: Any, kind: type | None = None) -> Any:
        return self if obj is None else obj[self.index]

    def __repr__(self) -> str:
        return f"<member '{self.name}' of '{self.owner}' objects>"


class StructSeq(tuple):
    """A tuple with named, read-only fields, as CPython's structseq types are."""

    __slots__ = ()
    n_fields = n_sequence_fields = n_unnamed_fields = 0
    _torch_type_name = "structseq"  # as torch's messages name the type (a C type's full name)

    def __new__(cls, *args: Any, **kwargs: Any) -> StructSeq:
        """``structseq(sequence, dict=None)``: the fields' values from ``sequence``."""
        if len(args) > 2:
            raise TypeError(f"structseq() takes at most 2 arguments ({len(args)} given)")
        given = dict(zip(("sequence", "dict"), args, strict=False)) | kwargs
        if "sequence" not in given:
            raise TypeError("structseq() missing required argument 'sequence' (pos 1)")
        for key in kwargs.keys() - {"sequence", "dict"}:
            raise TypeError(f"'{key}' is an invalid keyword argument for structseq()")
        try:
            items = tuple(given["sequence"])
        except TypeError:
            raise TypeError("constructor requires a sequence") from None
        name, n = cls._torch_type_name, cls.n_fields
        if len(items) != n:
            raise TypeError(f"{name}() takes a {n}-sequence ({len(items)}-sequence given)")
        if given.get("dict") is not None and not isinstance(given["dict"], dict):
            raise TypeError(f"{name}() takes a dict as second arg, if any")
        return super().__new__(cls, items)

    def __getattr__(self, name: str) -> Any:  # only reached when the name is not found
        raise AttributeError(f"'{self._torch_type_name}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(getattr(type(self), name, None), Field):
            raise AttributeError("readonly attribute")
        if hasattr(type(self), name):
            raise AttributeError(f"'{self._torch_type_name}' object attribute '{name}' is read-only")
        self.__getattr__(name)

    def __delattr__(self, name: str) -> None:
        self.__setattr__(name, None)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self.__match_args__, self, strict=True))
        return f"{self._torch_type_name}(\n{body})"

    __str__ = __repr__

    def __reduce__(self) -> tuple:
        return type(self), (tuple(self), {})


def _structseq(name: str, fields: tuple[str, ...]) -> type:
    """The structseq type ``torch.return_types.<name>`` with ``fields``."""
    full_name = f"torch.return_types.{name}"
    namespace: dict[str, Any] = {f: Field(i, f, full_name) for i, f in enumerate(fields)}
    namespace |= {"__slots__": (), "__match_args__": fields, "__doc__": None, "_torch_type_name": full_name}
    namespace |= {"n_fields": len(fields), "n_sequence_fields": len(fields)}
    return type(name, (StructSeq,), namespace)


max = _structseq("max", ("values", "indices"))
min = _structseq("min", ("values", "indices"))
sort = _structseq("sort", ("values", "indices"))
topk = _structseq("topk", ("values", "indices"))
kthvalue = _structseq("kthvalue", ("values", "indices"))
median = _structseq("median", ("values", "indices"))
mode = _structseq("mode", ("values", "indices"))
nanmedian = _structseq("nanmedian", ("values", "indices"))
histogram = _structseq("histogram", ("hist", "bin_edges"))
cummax = _structseq("cummax", ("values", "indices"))
cummin = _structseq("cummin", ("values", "indices"))
aminmax = _structseq("aminmax", ("min", "max"))
frexp = _structseq("frexp", ("mantissa", "exponent"))
# the types of the same results written into tensors given as out= (``max(x, 0, out=(v, i))``)
max_out = _structseq("max_out", ("values", "indices"))
min_out = _structseq("min_out", ("values", "indices"))
sort_out = _structseq("sort_out", ("values", "indices"))
topk_out = _structseq("topk_out", ("values", "indices"))
kthvalue_out = _structseq("kthvalue_out", ("values", "indices"))
median_out = _structseq("median_out", ("values", "indices"))
mode_out = _structseq("mode_out", ("values", "indices"))
nanmedian_out = _structseq("nanmedian_out", ("values", "indices"))
histogram_out = _structseq("histogram_out", ("hist", "bin_edges"))
cummax_out = _structseq("cummax_out", ("values", "indices"))
cummin_out = _structseq("cummin_out", ("values", "indices"))
aminmax_out = _structseq("aminmax_out", ("min", "max"))
frexp_out = _structseq("frexp_out", ("mantissa", "exponent"))
