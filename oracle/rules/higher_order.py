"""Rules of the family "higher-order gradients": gradients of gradients through create_graph.
Checked in conformance/test_higher_order.py."""

from oracle.rules import Rule

FAMILY = "higher-order gradients"
_GRAD = "https://pytorch.org/docs/stable/generated/torch.autograd.grad.html"

RULES = [
    Rule(
        "HO-001",
        FAMILY,
        "autograd.grad with create_graph=True returns gradients that require grad, with torch's "
        "double-backward graph (grad_fn names and next_functions), and differentiating them again "
        "gives torch's second derivatives.",
        _GRAD,
    ),
    Rule(
        "HO-002",
        FAMILY,
        "Chains of autograd.grad (gradients of gradients, to third order) agree with torch, and "
        "a gradient taken without create_graph does not require grad.",
        _GRAD,
    ),
    Rule(
        "HO-003",
        FAMILY,
        "backward(create_graph=True) leaves a .grad that has a grad_fn and retains the graph, so "
        "a second such backward accumulates into it; the gradient's own graph backpropagates "
        "second derivatives into the leaves.",
        "https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html",
    ),
]
