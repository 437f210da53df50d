"""Rules of the family "multi-grad hooks": torch.autograd.graph.register_multi_grad_hook in its two
modes (conformance/test_multi_grad_hooks.py)."""

from oracle.rules import Rule

FAMILY = "multi-grad hooks"
_DOCS = "https://pytorch.org/docs/stable/autograd.html#torch.autograd.graph.register_multi_grad_hook"

RULES = [
    Rule(
        "MGH-001",
        FAMILY,
        "A multi-grad hook in mode \"all\" (the default) fires once per backward or autograd.grad call "
        "that computes the gradient of at least one of its tensors, once the last of those is computed, "
        "with one entry per tensor in registration order: its gradient, or None for a tensor the call "
        "does not compute (outside the graph, or not needed for inputs=); a tensor that does not "
        "require grad is refused at registration, and once its handle is removed it no longer fires.",
        _DOCS,
    ),
    Rule(
        "MGH-002",
        FAMILY,
        "A multi-grad hook in mode \"any\" fires once per backward or autograd.grad call that computes "
        "the gradient of one of its tensors (those not requiring grad ignored), with the first such "
        "gradient computed; once its handle is removed it no longer fires; a mode other than \"all\" "
        "or \"any\" raises torch's ValueError.",
        _DOCS,
    ),
]
