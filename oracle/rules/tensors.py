"""Rules of the family "tensor semantics": dtype inference and promotion, views (strides,
contiguity, shared writes, version counters, torch's view error), the layout of elementwise
results, sharing memory with numpy and the in-place view methods.
Checked in conformance/test_tensors.py."""

from oracle.rules import Rule

FAMILY = "tensor semantics"
_DOCS = "https://pytorch.org/docs/stable"
_TENSOR_ITERATOR = "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/TensorIterator.cpp"

RULES = [
    Rule(
        "TEN-001",
        FAMILY,
        "torch.tensor infers the dtype of Python data (ints int64, floats float32, bools bool, "
        "mixed lists the widest kind) unless a dtype is given; the legacy constructors "
        "(torch.FloatTensor, torch.LongTensor ...) convert data to their own dtype, and "
        "new_tensor, new_zeros, new_ones and new_full make tensors of self's dtype unless given "
        "one, each refusing a value its dtype cannot hold with torch's error.",
        "seed 003",
    ),
    Rule(
        "TEN-002",
        FAMILY,
        "Arithmetic promotes dtypes as torch.result_type does: tensor-tensor by category then size, "
        "a 0-d tensor or a Python scalar only across categories (an int tensor times a float "
        "scalar is float32).",
        f"{_DOCS}/tensor_attributes.html#type-promotion-doc",
    ),
    Rule(
        "TEN-003",
        FAMILY,
        "View ops (view, reshape, t, transpose, permute, expand, squeeze, unsqueeze, flatten, "
        "narrow, select, indexing with an int) give torch's strides, storage offset and "
        "contiguity; writes through a view show in its base and bump the version counter both "
        "share; view() of a non-contiguous tensor raises torch's error.",
        f"{_DOCS}/tensor_view.html",
    ),
    Rule(
        "TEN-004",
        FAMILY,
        "torch.from_numpy and Tensor.numpy share memory both ways (torch.tensor copies), keep the "
        "array's dtype (float64 stays float64), and numpy() of a tensor that requires grad raises; "
        "a tensor pickled comes back a leaf with its values, dtype, strides, storage offset and "
        "requires_grad, at version 1, sharing no memory, and copy.copy gives the same but sharing "
        "the tensor's memory.",
        "seed 003",
    ),
    Rule(
        "TEN-005",
        FAMILY,
        "An elementwise result (unary, binary with broadcasting or a Python number, where, "
        "across type promotion) has torch's strides: its operands' common layout when they share "
        "one, else dense with the dimensions in the order of the operands' strides (the first "
        "operand that orders two dimensions decides, a broadcast dimension orders nothing); an "
        "in-place op keeps self's.",
        f"{_TENSOR_ITERATOR} (reorder_dimensions, fast_set_up)",
    ),
    Rule(
        "TEN-006",
        FAMILY,
        "The in-place view methods (t_, transpose_, swapdims_, swapaxes_, squeeze_, unsqueeze_, "
        "as_strided_) give the tensor itself the view's shape, strides and storage offset (a view "
        "stays a view of its base), bump its version, and where autograd records them make its "
        "grad_fn the op's in-place node (TBackward1, SqueezeBackward4, AsStridedBackward1 ...) "
        "over its history, so gradients flow back through the old geometry; on a leaf that "
        "requires grad, or a view of one, they raise torch's error.",
        f"{_DOCS}/generated/torch.Tensor.t_.html",
    ),
    Rule(
        "TEN-007",
        FAMILY,
        "torch.channels_last, channels_last_3d, contiguous_format and preserve_format set a result's "
        "layout: contiguous, clone, to (a copy only where the tensor's suggested format is another) "
        "and the *_like factories with memory_format= give torch's strides (channels_last: C innermost, "
        "sizes of 0 and 1 as torch counts them), is_contiguous(memory_format=) tests torch's order of "
        "each format (False at another rank), channels_last at a rank other than 4 (channels_last_3d: "
        "5) raises torch's 'required rank 4 tensor to use channels_last format', contiguous with "
        "preserve_format of a non-contiguous tensor raises torch's error; an elementwise op on a "
        "channels_last operand and conv2d with a channels_last input or weight give channels_last "
        "results.",
        f"{_DOCS}/tensor_attributes.html#torch-memory-format",
    ),
]
