"""torch.nn.utils.rnn's subset impl has: pad_sequence, as ATen's (one full tensor of the padding
value, each sequence copied into its slice: a chain of CopySlices, as torch's graph)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from impl._creation import full
from impl._tensor import Tensor


def pad_sequence(
    sequences: Any, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"
) -> Tensor:
    """The sequences (each ``L x *``) padded with ``padding_value`` to the longest one's length,
    at the end or (``padding_side='left'``) the start, stacked as ``T x B x *`` (or ``B x T x *``);
    the trailing sizes, dtype and device are the first sequence's, the others broadcast to them."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            f"pad_sequence: Expected iterable for input sequences, but got arg of type: {type(sequences)}"
        )
    sequences = sequences.unbind(0) if isinstance(sequences, Tensor) else tuple(sequences)  # torch's iter
    for i, seq in enumerate(sequences):
        if not isinstance(seq, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(seq).__name__}")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    first = sequences[0]
    if first.dim() == 0:
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    max_len = max(seq.shape[0] for seq in sequences)
    leading = (len(sequences), max_len) if batch_first else (max_len, len(sequences))
    out = full((*leading, *first.shape[1:]), padding_value, dtype=first.dtype, device=first.device)
    for i, seq in enumerate(sequences):
        length = seq.shape[0]
        start = max_len - length if padding_side == "left" else 0
        if batch_first:
            out.select(0, i).narrow(0, start, length).copy_(seq)
        else:
            out.narrow(0, start, length).select(1, i).copy_(seq)
    return out
