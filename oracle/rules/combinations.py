"""Rules of the family "combinations": what real training code combines, checked together
(conformance/test_combinations.py): the options of backward and autograd.grad in pairs inside a
training loop, parameters tied and submodules shared in a module tree, a module called several
times with hooks, and a graph retained across an optimiser step."""

from oracle.rules import Rule

FAMILY = "combinations"
_DOCS = "https://pytorch.org/docs/stable"
_MODULE = f"{_DOCS}/generated/torch.nn.Module.html#torch.nn.Module"

RULES = [
    Rule(
        "COMB-001",
        FAMILY,
        "In a training loop (module calls, backward, an optimiser step, backward again through the "
        "same graph, zero_grad of each parameter, of the module or of the optimiser, with "
        "set_to_none or not), every pair of backward's options (retain_graph, create_graph, inputs, "
        "gradient), of zero_grad's kinds and of SGD's, Adam's and AdamW's options gives torch's "
        "gradients, parameters and errors.",
        f"{_DOCS}/generated/torch.Tensor.backward.html",
    ),
    Rule(
        "COMB-002",
        FAMILY,
        "In a training loop whose loss adds a penalty on autograd.grad's gradients, every pair of "
        "grad's options (retain_graph, create_graph, grad_outputs, allow_unused, materialize_grads, "
        "an unused input), of zero_grad's kinds and of the optimisers' options gives torch's "
        "gradients (None or zeros where unused), parameters and errors.",
        f"{_DOCS}/generated/torch.autograd.grad.html",
    ),
    Rule(
        "COMB-003",
        FAMILY,
        "A parameter tied between two modules (head.weight = embedding.weight) is one parameter: "
        "named_parameters() and parameters() list it once, state_dict() keeps a key for each module, "
        "its .grad adds up the gradients of both uses, and an optimiser over parameters() steps it "
        "once (one given it twice warns and steps it twice).",
        f"{_MODULE}.named_parameters",
    ),
    Rule(
        "COMB-004",
        FAMILY,
        "A submodule held at two places (the same Linear twice in a Sequential or a ModuleList, one "
        "child under two names) runs at each place; named_modules(), named_parameters() and "
        "parameters() list it once, state_dict() under both names, and its parameters add up the "
        "gradients of every call.",
        f"{_MODULE}.named_modules",
    ),
    Rule(
        "COMB-005",
        FAMILY,
        "A module called several times (on separate inputs, on its own output, or at two places of "
        "a tree) runs its forward pre-hooks and forward hooks at every call with that call's inputs "
        "and output, and its full backward pre-hooks and backward hooks once per call and backward "
        "pass, with that call's gradients, in torch's order.",
        f"{_MODULE}.register_full_backward_hook",
    ),
    Rule(
        "COMB-006",
        FAMILY,
        "After backward(retain_graph=True), an optimiser step that updates a parameter in place makes "
        "a later backward through the retained graph raise torch's RuntimeError where a node saved "
        "that parameter ('... is at version N; expected version M instead'); where the step changed "
        "nothing a node saved (the first layer's weight when the input needs no grad, a step without "
        "gradients) the backward succeeds and accumulates.",
        f"{_DOCS}/notes/autograd.html#in-place-correctness-checks",
    ),
]
