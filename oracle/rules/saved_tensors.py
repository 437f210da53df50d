"""Rules of the family "saved tensors": torch.autograd.graph's saved-tensor hooks and what a grad_fn
saved, ``_saved_<name>`` (conformance/test_saved_tensors.py)."""

from oracle.rules import Rule

FAMILY = "saved tensors"
_DOCS = "https://pytorch.org/docs/stable/autograd.html"

RULES = [
    Rule(
        "SAVED-001",
        FAMILY,
        "Inside saved_tensors_hooks(pack, unpack) pack runs, without grad, on each tensor an op saves "
        "for backward when it saves it (the innermost pair only, never on a wrapped Python number), "
        "and unpack runs on what pack returned each time backward uses it, the gradient being computed "
        "from what unpack returns; an unpack returning no tensor raises torch's TypeError, a pack "
        "writing its input in place torch's RuntimeError; save_on_cpu changes no gradient; inside "
        "disable_saved_tensors_hooks(message) entering hooks raises RuntimeError(message) (and "
        "torch._C._autograd._saved_tensors_hooks_is_enabled() is False there, True outside).",
        f"{_DOCS}#hooks-for-saved-tensors",
    ),
    Rule(
        "SAVED-002",
        FAMILY,
        "A grad_fn exposes what its op saved as _saved_<name> under derivatives.yaml's names (tensors, "
        "numbers, size tuples; None for a tensor not saved because no gradient needed it) and each saved "
        "tensor as _raw_saved_<name>; a saved input reads as the input itself, a saved output as a new "
        "tensor with the output's history (not the output): a node keeps no reference to its own "
        "output, so a graph is freed by reference counting alone, and a later write of an output saved "
        "in place through a view names the view's grad_fn while the view holds it; a saved input that "
        "detach_() took the history of after it was saved raises torch's 'Trying to use a saved tensor "
        "that has been detached in-place' RuntimeError in backward; amax and amin save their dims as "
        "given (() for none), a vector norm its order as given, Python type and all (an int stays an "
        "int; vector_norm's default is 2, linalg.norm's 2.0); var and std save correction None unless "
        "the call gives a dim, unbiased (the dim overload: 1 or 0) or a correction; once backward "
        "freed the graph, reading a saved tensor raises torch's 'Trying to backward through the graph "
        "a second time' RuntimeError.",
        f"{_DOCS}#saved-tensors",
    ),
]
