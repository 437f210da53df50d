"""Rules of the family "retain graph": when a graph can be backpropagated again.
Checked in conformance/test_retain_graph.py."""

from oracle.rules import Rule

FAMILY = "retain graph"
_DOCS = "https://pytorch.org/docs/stable/generated"

RULES = [
    Rule(
        "RG-001",
        FAMILY,
        "A second backward through nodes that saved tensors raises a RuntimeError (the graph was "
        "freed) unless every earlier pass used retain_graph=True.",
        "seed 001",
    ),
    Rule(
        "RG-002",
        FAMILY,
        "A graph whose nodes save no tensors (additions, negations, sums, views, clones) can be "
        "backpropagated again without retain_graph.",
        "https://pytorch.org/docs/stable/notes/autograd.html#saved-tensors",
    ),
    Rule(
        "RG-003",
        FAMILY,
        "torch.autograd.grad frees the graph like backward unless retain_graph=True.",
        f"{_DOCS}/torch.autograd.grad.html",
    ),
    Rule(
        "RG-004",
        FAMILY,
        "create_graph=True keeps the graph and makes the gradients differentiable, so a second "
        "derivative can be taken.",
        "seed 003",
    ),
]
