"""Rules of the family "grad modes": what no_grad, enable_grad, set_grad_enabled and
inference_mode do to the results of ops and to autograd. Checked in conformance/test_grad_modes.py."""

from oracle.rules import Rule

FAMILY = "grad modes"
_DOCS = "https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation"

RULES = [
    Rule(
        "GM-001",
        FAMILY,
        "Under no_grad or set_grad_enabled(False) op results do not require grad, are leaves and "
        "have no grad_fn; enable_grad inside restores recording; leaving a mode restores the "
        "previous one, as is_grad_enabled reports.",
        _DOCS,
    ),
    Rule(
        "GM-002",
        FAMILY,
        "Under inference_mode results are inference tensors without grad_fn; using them in "
        "autograd outside the mode, or editing them in place there, raises torch's errors; "
        "is_inference_mode_enabled reports the mode. A tensor made there with requires_grad=True "
        "requires grad, but a view of an inference tensor (in the mode or outside) is an inference "
        "tensor that is no view and does not require grad, and outside the mode an op whose "
        "operands are all inference tensors records nothing. Outside the mode, detach() of an "
        "inference tensor is an inference tensor with a version counter of its own (writable in "
        "place), and clone() a normal tensor at version 1 (empty_like then copy_: CopyBackwards from "
        "an input requiring grad).",
        _DOCS,
    ),
    Rule(
        "GM-003",
        FAMILY,
        "no_grad, enable_grad, set_grad_enabled and inference_mode work as function decorators "
        "(no_grad, enable_grad and inference_mode also bare, without a call): ops in the decorated "
        "function run in the mode, and the mode is left when it returns; a decorated generator "
        "function runs in the mode at each resumption, and the caller's mode is back at each "
        "yield and after the generator is closed.",
        "https://pytorch.org/docs/stable/generated/torch.no_grad.html",
    ),
]
