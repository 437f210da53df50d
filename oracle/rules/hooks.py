"""Rules of the family "hook order": when hooks of each kind fire during backward, what they
receive and what their return value does. Checked in conformance/test_hook_order.py."""

from oracle.rules import Rule

FAMILY = "hook order"
_NOTES = "https://pytorch.org/docs/stable/notes/autograd.html"
_DOCS = "https://pytorch.org/docs/stable/generated/torch.Tensor"

RULES = [
    Rule(
        "HOOK-001",
        FAMILY,
        "Several hooks on one tensor run in registration order, each receiving the gradient the "
        "previous one returned.",
        f"{_DOCS}.register_hook.html",
    ),
    Rule(
        "HOOK-002",
        FAMILY,
        "During backward, hooks on the tensors of a chain fire from the output back towards the "
        "inputs, each once per backward, with the gradient of the loss with respect to its tensor.",
        "seed 000",
    ),
    Rule(
        "HOOK-003",
        FAMILY,
        "A tensor hook that returns a tensor replaces the gradient that flows on (and lands in "
        ".grad); a hook that returns None leaves it unchanged.",
        "seed 004",
    ),
    Rule(
        "HOOK-004",
        FAMILY,
        "A hook returning a gradient of the wrong shape or dtype makes backward raise a "
        "RuntimeError naming the hook.",
        f"{_DOCS}.register_hook.html",
    ),
    Rule(
        "HOOK-005",
        FAMILY,
        "A hook removed through its handle no longer fires. A tensor's _backward_hooks is None until "
        "a tensor hook is registered on it (retain_grad adds none), then the OrderedDict of its hooks "
        "(a removed one leaves it); an in-place op that gives it a new grad_fn leaves it None.",
        f"{_DOCS}.register_hook.html",
    ),
    Rule(
        "HOOK-006",
        FAMILY,
        "On one tensor, tensor hooks run first, then retain_grad's (always last among them), then "
        "its grad_fn's pre-hooks, then the node and its post-hooks; post-accumulate-grad hooks run "
        "after a leaf's .grad is written.",
        f"{_NOTES}#backward-hooks-execution",
    ),
    Rule(
        "HOOK-007",
        FAMILY,
        "Module hooks: forward pre-hooks and forward hooks run around each call, full backward "
        "pre-hooks and full backward hooks run during backward with the module's output and input "
        "gradients, and what they return replaces what they received.",
        "https://pytorch.org/docs/stable/generated/torch.nn.Module.html",
    ),
]
