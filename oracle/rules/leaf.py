"""Rules of the family "leaf rules": which tensors are leaves, which keep ``.grad``, and the flags
``detach``, ``retain_grad`` and ``requires_grad_`` set. Checked in conformance/test_leaf_rules.py."""

from oracle.rules import Rule

FAMILY = "leaf rules"
_DOCS = "https://pytorch.org/docs/stable/generated/torch.Tensor"

RULES = [
    Rule(
        "LEAF-001",
        FAMILY,
        "A tensor created by the user (torch.tensor) is a leaf with no grad_fn, whether or not it "
        "requires grad.",
        f"{_DOCS}.is_leaf.html",
    ),
    Rule(
        "LEAF-002",
        FAMILY,
        "The result of an op is a non-leaf with a grad_fn named after the op's backward node exactly "
        "when one of its inputs requires grad; otherwise it is a leaf that does not require grad.",
        "seed 002",
    ),
    Rule(
        "LEAF-003",
        FAMILY,
        "After backward only leaves that require grad have .grad populated; a non-leaf's .grad stays "
        "None and reading it raises a UserWarning.",
        f"{_DOCS}.is_leaf.html",
    ),
    Rule(
        "LEAF-004",
        FAMILY,
        "retain_grad() makes a non-leaf keep its .grad after backward (silencing the warning); it "
        "raises a RuntimeError on a tensor that does not require grad.",
        f"{_DOCS}.retain_grad.html",
    ),
    Rule(
        "LEAF-005",
        FAMILY,
        "detach() returns a leaf that does not require grad and shares its values with the original "
        "(in-place edits show through).",
        f"{_DOCS}.detach.html",
    ),
    Rule(
        "LEAF-006",
        FAMILY,
        "requires_grad_() changes the flag of leaves; switching it off on a non-leaf raises a "
        "RuntimeError, and a leaf that stops requiring grad gets no .grad.",
        f"{_DOCS}.requires_grad_.html",
    ),
    Rule(
        "LEAF-007",
        FAMILY,
        "del t.grad sets .grad to None (the next backward accumulates afresh); deleting data, "
        "_grad_fn, _backward_hooks, _post_accumulate_grad_hooks or requires_grad raises torch's "
        "RuntimeError, and grad_fn, is_leaf or _base torch's AttributeError (not writable); the "
        "tensor stays as it was.",
        "https://github.com/pytorch/pytorch/blob/main/torch/csrc/autograd/python_variable.cpp",
    ),
]
