"""Rules of the family "gradient accumulation": how backward and autograd.grad add into .grad.
Checked in conformance/test_accumulation.py."""

from oracle.rules import Rule

FAMILY = "gradient accumulation"
_DOCS = "https://pytorch.org/docs/stable/generated"

RULES = [
    Rule(
        "ACC-001",
        FAMILY,
        "Each backward adds its gradients into the .grad of the leaves it reaches; repeated "
        "backward calls accumulate.",
        "seed 001",
    ),
    Rule(
        "ACC-002",
        FAMILY,
        "Setting .grad to None or zeroing it in place restarts accumulation from zero.",
        "seed 001",
    ),
    Rule(
        "ACC-003",
        FAMILY,
        "backward(inputs=[...]) accumulates only into the .grad of the given tensors.",
        f"{_DOCS}/torch.Tensor.backward.html",
    ),
    Rule(
        "ACC-004",
        FAMILY,
        "torch.autograd.grad returns the gradients without touching any .grad; unused inputs raise "
        "unless allow_unused=True (None, or zeros with materialize_grads=True).",
        f"{_DOCS}/torch.autograd.grad.html",
    ),
    Rule(
        "ACC-005",
        FAMILY,
        "backward on a non-scalar needs a gradient of its shape (else a RuntimeError) and "
        "accumulates the vector-Jacobian product.",
        "seed 001",
    ),
]
