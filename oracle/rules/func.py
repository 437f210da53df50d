"""Rules of the family "torch.func": the composable function transforms and vmap
(conformance/test_func.py)."""

from oracle.rules import Rule

FAMILY = "torch.func"
_DOCS = "https://pytorch.org/docs/stable/func.api.html"

RULES = [
    Rule(
        "FUNC-001",
        FAMILY,
        "torch.func's grad, grad_and_value, vjp, jvp, jacrev, jacfwd and hessian give torch's values for "
        "tensors and tuples, lists and dicts of them, for argnums an int or a tuple, with has_aux, and "
        "nested (grad of grad, jacfwd of jacrev, jvp of grad); their results carry no grad_fn unless an "
        "input or a tensor the function captured (a module's parameter) requires grad; functional_call "
        "runs a module with the given parameters and buffers (a dict or a tuple of dicts) and leaves its "
        "own; torch's errors for a non-scalar or non-tensor "
        "output of grad, argnums out of range, aux that is not a pair, jvp's mismatched structures and "
        "functional_call's missing or unexpected keys with strict=True.",
        _DOCS,
    ),
    Rule(
        "FUNC-002",
        FAMILY,
        "torch.func.vmap gives torch's values for in_dims and out_dims (ints, negative ints, None and "
        "per-argument tuples, nested for pytree inputs and outputs), composed with grad and jacrev "
        "(per-sample gradients) and over stack_module_state's stacked parameters through "
        "functional_call; random ops raise torch's error with randomness='error', draw torch's numbers "
        "with 'different' (uniforms) and the same numbers for every element with 'same', leaving the "
        "stream where torch's is; torch's ValueErrors for in_dims of the wrong type or structure or out of "
        "range, mapped sizes that differ, a mapped non-tensor and a non-tensor output.",
        _DOCS,
    ),
]
