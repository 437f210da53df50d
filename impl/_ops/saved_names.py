"""torch's names of what a node saved (``grad_fn._saved_<name>``, derivatives.yaml's), per op.

By default they are the names the op's derivatives use (its OpDef's uses): inputs and outputs
saved as tensors, attributes as given, an input's strides as ``<input>_sym_strides``. ``TORCH``
lists the ops whose saved values torch names or chooses otherwise: each entry is ``name`` (the
use of that name) or ``name=source``, a source being ``<input>.sizes``, ``<input>.numel``,
``<input>.strides`` or a use of another name.
"""

from __future__ import annotations

from typing import Any

_SIZES = "self_sym_sizes=self.sizes"
_NUMEL = "self_sym_numel=self.numel"
TORCH: dict[str, tuple[str, ...]] = {
    "SumBackward0": (_SIZES,),
    "SumBackward1": ("dim", "keepdim", _SIZES),
    "MeanBackward0": (_NUMEL, _SIZES),
    "MeanBackward1": ("dim", "keepdim", _NUMEL, _SIZES),
    "ProdBackward0": ("result", "self"),
    "CumsumBackward0": ("dim",),
    "MmBackward0": ("mat2", "mat2_sym_sizes=mat2.sizes", "mat2_sym_strides=mat2.strides", "self", _SIZES,
                    "self_sym_strides=self.strides"),
    "ViewBackward0": (_SIZES,),
    "ExpandBackward0": (_SIZES,),
    "TraceBackward0": (_SIZES,),
    "SelectBackward0": ("dim", "index", _SIZES),
    "CatBackward0": ("dim",),
    "FmodBackward0": (),
    "RsubBackward1": ("alpha",),
    "PowBackward2": ("exponent", "result", "self=base"),
    "PackPaddedSequenceBackward0": ("batch_first", "input_sym_sizes=input.sizes", "result1=batch_sizes"),
}


def saved_sources(op: Any) -> dict[str, str]:
    """torch's saved names of ``op``'s node, each with where its value comes from (see above)."""
    entries = TORCH.get(op.node_name)
    if entries is None:
        uses = dict.fromkeys(use for d in op.derivatives.values() for use in d.uses)
        return {use.replace(".strides", "_sym_strides"): use for use in uses}
    return {name: source or name for name, _, source in (entry.partition("=") for entry in entries)}
