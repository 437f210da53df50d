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
    Rule(
        "ACC-006",
        FAMILY,
        "torch.autograd.grad weights the outputs by grad_outputs of their shape, and with "
        "create_graph=True the gradients it returns can be differentiated again.",
        f"{_DOCS}/torch.autograd.grad.html",
    ),
    Rule(
        "ACC-007",
        FAMILY,
        "torch.autograd.grad with is_grads_batched=True takes grad_outputs with a leading batch "
        "dimension and returns one gradient per row; only_inputs=False is deprecated (a "
        "FutureWarning) and changes nothing.",
        f"{_DOCS}/torch.autograd.grad.html",
    ),
]
