"""Rules of the family "errors and warnings": the errors and warnings a user meets in autograd
programs have torch's types and messages. Checked in conformance/test_errors.py."""

from oracle.rules import Rule

FAMILY = "errors and warnings"
_NOTES = "https://pytorch.org/docs/stable/notes/autograd.html"

RULES = [
    Rule(
        "ERR-001",
        FAMILY,
        "backward raises torch's errors for a tensor that does not require grad, a non-scalar "
        "output without a gradient, and a gradient of the wrong shape; a gradient of another "
        "real dtype is cast to the output's.",
        "https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html",
    ),
    Rule(
        "ERR-002",
        FAMILY,
        "Only floating tensors can require grad, requires_grad_(False) is refused on a non-leaf, "
        "and an in-place op on a leaf that requires grad raises, each with torch's message.",
        _NOTES,
    ),
    Rule(
        "ERR-003",
        FAMILY,
        "Ops on tensors of incompatible shapes or dtypes (broadcasting, matmul and mm of mixed "
        "dtypes, view of a non-contiguous tensor, cat of mismatched tensors) raise torch's error "
        "types and messages.",
        "https://pytorch.org/docs/stable/notes/broadcasting.html",
    ),
    Rule(
        "ERR-004",
        FAMILY,
        "Reading .grad of a non-leaf that does not retain its grad warns with torch's UserWarning.",
        "seed 000",
    ),
    Rule(
        "ERR-005",
        FAMILY,
        "In a graph with hooks, an in-place op on a tensor that a node saved for backward makes "
        "backward through that node raise torch's RuntimeError (with the tensor's versions), and an "
        "in-place op on a leaf that requires grad is refused; in-place ops on other tensors are "
        "recorded in the graph.",
        f"{_NOTES}#in-place-operations-with-autograd",
    ),
]
