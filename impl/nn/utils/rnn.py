"""torch.nn.utils.rnn: pad_sequence as ATen's (one full tensor of the padding value, each sequence
copied into its slice: a chain of CopySlices, as torch's graph), PackedSequence and packing as
torch's rnn.py and ATen's PackedSequence.cpp (one PackPaddedSequenceBackward0 node; unpacking
composed of slices copied into a full tensor)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from impl import dtypes
from impl._creation import arange, as_tensor, empty_like, full, zeros
from impl._ops.sorting import sort
from impl._ops.table import D, OpDef, apply
from impl._tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _bind(optional: Any, fn: Any) -> Any:
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """A batch of variable-length sequences packed time step by time step: ``data`` holds the
    ``batch_sizes[t]`` elements of each step in turn; ``sorted_indices`` is the permutation that
    sorted the batch by length (None if it was given sorted), ``unsorted_indices`` its inverse."""

    def __new__(
        cls, data: Any, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        return super().__new__(cls, *_init_args(data, batch_sizes, sorted_indices, unsorted_indices))

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data`` converted; the indices moved to its device (``self`` when nothing changed)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = lambda t: t.to(data.device)  # noqa: E731
        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, move),
                          _bind(self.unsorted_indices, move))

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to(*args, **{"device": "cuda", **kwargs}) if not args else self.to(*args, **kwargs)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to(*args, **{"device": "cpu", **kwargs})

    def double(self) -> PackedSequence:
        return self.to(dtype=dtypes.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=dtypes.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=dtypes.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=dtypes.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=dtypes.int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=dtypes.int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=dtypes.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=dtypes.uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def _init_args(data: Any, batch_sizes: Any, sorted_indices: Any, unsorted_indices: Any) -> tuple:
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is None:
        if not (isinstance(data, (list, tuple)) and len(data) == 2):
            raise AssertionError("Expected data to be a list or tuple of length 2")
        return data[0], data[1], sorted_indices, unsorted_indices
    if batch_sizes.device.type != "cpu":
        raise ValueError(
            "batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
            "manually. They should be instantiated by functions like pack_sequence and "
            "pack_padded_sequences in nn.utils.rnn. "
            "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
        )
    return data, batch_sizes, sorted_indices, unsorted_indices


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse permutation (``output[permutation[i]] = i``), None for None."""
    if permutation is None:
        return None
    output = empty_like(permutation)
    return output.scatter_(0, permutation, arange(0, permutation.numel(), device=permutation.device))


def _check_lengths(lengths: Tensor) -> None:
    """ATen's checkLongTensor."""
    if lengths.dim() != 1 or lengths.device.type != "cpu" or lengths.dtype != dtypes.int64:
        raise RuntimeError(
            f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
            f"{lengths.device} {dtypes.scalar_type(lengths.dtype)} tensor"
        )


def _pack_fwd(xp: Any, input: Any, lengths: tuple, batch_sizes: tuple, batch_first: bool) -> Any:
    """The steps of each run of equal batch size, time-major, concatenated."""
    x = xp.swapaxes(input, 0, 1) if batch_first else input
    batch, steps, prev = x.shape[1], [], 0
    for i, length in enumerate(reversed(lengths)):
        if length > prev:
            steps.append(x[prev:length, :batch - i].reshape(-1, *x.shape[2:]))
            prev = length
    return xp.concatenate(steps, 0)


def _pack_backward(g: Tensor, c: Any) -> Tensor:
    """_pack_padded_sequence_backward: each step's gradient copied into zeros of the input's shape."""
    size = list(c.shape("input"))
    if c.batch_first:
        size[0], size[1] = size[1], size[0]
    grad_input = zeros(size, dtype=g.dtype, device=g.device)
    offset = 0
    for i, batch in enumerate(c.batch_sizes.tolist()):
        grad_input[i].narrow(0, 0, batch).copy_(g.narrow(0, offset, batch))
        offset += batch
    return grad_input.transpose(0, 1) if c.batch_first else grad_input


PACK_PADDED_SEQUENCE = OpDef(
    "PackPaddedSequenceBackward0",
    _pack_fwd,
    ("input",),
    {"input": D("batch_sizes batch_first", _pack_backward)},
)


def _pack_padded(input: Tensor, lengths: Tensor, batch_first: bool) -> tuple[Tensor, Tensor]:
    """ATen's _pack_padded_sequence: (data, batch_sizes), with its checks."""
    _check_lengths(lengths)
    batch = input.shape[0 if batch_first else 1]
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    sizes = tuple(int(n) for n in lengths.tolist())
    if len(sizes) != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(sizes)} (batch_size={batch})"
        )
    if sizes[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0"
        )
    if any(a < b for a, b in zip(sizes, sizes[1:], strict=False)):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
            "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
            "requirement if you do not need ONNX exportability."
        )
    batch_sizes = as_tensor([sum(1 for n in sizes if n > t) for t in range(sizes[0])], dtype=dtypes.int64)
    data = apply(PACK_PADDED_SEQUENCE, input, lengths=sizes, batch_sizes=batch_sizes, batch_first=batch_first)
    return data, batch_sizes


def pack_padded_sequence(
    input: Tensor, lengths: Any, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """A padded batch (``T x B x *``, or ``B x T x *``) packed by its sequences' ``lengths``; with
    ``enforce_sorted=False`` the batch is sorted by decreasing length first (index_select)."""
    if not isinstance(lengths, Tensor):
        lengths = as_tensor(lengths, dtype=dtypes.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=dtypes.int64)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pad_packed(data: Tensor, batch_sizes: list, batch_first: bool, padding_value: Any,
                total_length: int) -> tuple[Tensor, Tensor]:
    """ATen's _pad_packed_sequence: each run of equal batch size copied into a full tensor."""
    max_batch, steps = batch_sizes[0], len(batch_sizes)
    output = full((max(total_length, steps), max_batch, *data.shape[1:]), padding_value, dtype=data.dtype,
                  device=data.device)
    lengths = [0] * max_batch
    offset, prev_batch, prev_i = 0, max_batch, 0
    for i in range(steps + 1):
        batch = batch_sizes[i] if i != steps else 0
        if batch != prev_batch:
            n = prev_batch * (i - prev_i)
            block = data.narrow(0, offset, n).view(i - prev_i, prev_batch, *data.shape[1:])
            output.narrow(0, prev_i, i - prev_i).narrow(1, 0, prev_batch).copy_(block)
            offset, prev_i = offset + n, i
        for j in range(batch, prev_batch):
            lengths[j] = i
        prev_batch = batch
    if batch_first:
        output = output.transpose(0, 1)
    return output, as_tensor(lengths, dtype=dtypes.int64)


def pad_packed_sequence(
    sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """The inverse of pack_padded_sequence: the padded batch (in the original order) and the lengths."""
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {max_seq_length}"
            )
        max_seq_length = total_length
    _check_lengths(sequence.batch_sizes)
    padded, lengths = _pad_packed(sequence.data, sequence.batch_sizes.tolist(), batch_first, padding_value,
                                  max_seq_length)
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        return padded.index_select(0 if batch_first else 1, unsorted_indices), lengths[unsorted_indices.cpu()]
    return padded, lengths


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


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list[Tensor]:
    """The padded batch split into its sequences, each cut to its length (boolean-mask indexing);
    the input is transposed in place unless ``batch_first``, as torch's."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    idx = arange(padded_sequences.shape[1], device=lengths.device)
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences: list, enforce_sorted: bool = True) -> PackedSequence:
    """pad_sequence then pack_padded_sequence."""
    lengths = as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """pad_packed_sequence then unpad_sequence: the list of sequences, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
