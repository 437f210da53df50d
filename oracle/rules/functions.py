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
        "set_materialize_grads(False) passes None for unused outputs' gradients, and "
        "ctx._materialize_non_diff_grads = False None for non-differentiable outputs' gradients; "
        "an undefined gradient (from torch._C._functions.UndefinedGrad()'s clone of an output) "
        "reaches backward as None under set_materialize_grads(False), as zeros otherwise.",
        "https://pytorch.org/docs/stable/autograd.html#context-method-mixins",
    ),
    Rule(
        "FN-003",
        FAMILY,
        "A Function that modifies an input in place and marks it dirty returns that input with "
        "the Function's node as its grad_fn and a bumped version; an input that is a view made "
        "outside the Function comes back as an AsStridedBackward0 view whose base's grad_fn is a "
        "CopySlices over the Function's node, and a Function returning more than one tensor then "
        "raises torch's error.",
        "https://pytorch.org/docs/stable/generated/torch.autograd.function.FunctionCtx.mark_dirty.html",
    ),
    Rule(
        "FN-004",
        FAMILY,
        "A Function's backward made of differentiable ops can be differentiated again "
        "(create_graph), a saved output leading back to the Function's node as the output it is "
        "(its gradient reaches backward in that output's place); with @once_differentiable the "
        "double backward raises torch's error.",
        _DOCS,
    ),
    Rule(
        "FN-005",
        FAMILY,
        "A Function's methods may be static, plain methods (torch's legacy style: apply still runs "
        "them), a vjp instead of backward (used as backward), or both backward and vjp (backward "
        "raises torch's error); instantiating a Function warns with torch's DeprecationWarning and "
        "calling the instance raises torch's legacy-Function RuntimeError.",
        _DOCS,
    ),
    Rule(
        "FN-006",
        FAMILY,
        "A built-in op's grad_fn called as a function takes one gradient (a tensor or None) per "
        "output of its op, else raises TypeError 'expected N arguments, got M instead' (a number: "
        "'argument i is not a Variable'), and returns its inputs' gradients (with a graph when they "
        "require grad; after a backward freed its saved tensors it raises); a custom Function's "
        "node is not callable.",
        "https://pytorch.org/docs/stable/autograd.html#torch.autograd.graph.Node",
    ),
]
