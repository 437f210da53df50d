"""Rules of the family "custom autograd.Function": subclasses of torch.autograd.Function built
from op combinations behave as torch's. Checked in conformance/test_functions.py."""

from oracle.rules import Rule

FAMILY = "custom autograd.Function"
_DOCS = "https://pytorch.org/docs/stable/notes/extending.html#extending-torch-autograd"

RULES = [
    Rule(
        "FN-001",
        FAMILY,
        "Function.apply records a node named <Class>Backward whose next_functions follow the "
        "inputs; backward and the node's pre-hooks receive one gradient per output (None for an "
        "output that is a number, a string or None; an output returned twice gets its gradient in "
        "its last place), backward sees ctx.needs_input_grad as torch's, and what it returns becomes "
        "the inputs' gradients (None for no gradient).",
        _DOCS,
    ),
    Rule(
        "FN-002",
        FAMILY,
        "save_for_backward gives back the saved tensors in backward (a second backward without "
        "retain_graph raises), mark_non_differentiable outputs do not require grad, "
        "set_materialize_grads(False) passes None for unused outputs' gradients.",
        "https://pytorch.org/docs/stable/autograd.html#context-method-mixins",
    ),
    Rule(
        "FN-003",
        FAMILY,
        "A Function that modifies an input in place and marks it dirty returns that input with "
        "the Function's node as its grad_fn and a bumped version.",
        "https://pytorch.org/docs/stable/generated/torch.autograd.function.FunctionCtx.mark_dirty.html",
    ),
    Rule(
        "FN-004",
        FAMILY,
        "A Function's backward made of differentiable ops can be differentiated again "
        "(create_graph); with @once_differentiable the double backward raises torch's error.",
        _DOCS,
    ),
]
