"""Rules of the family "seed examples": the seed posts' programs behave on the backend as on torch.

Each rule is checked by running one script of ``examples/seeds/`` (``SCRIPTS[rule_id]``) on torch
and on the backend and comparing everything it shows (``oracle.script.diff_script``), in
``conformance/test_seeds.py``. The source of ``SEED-00N-k`` is seed 00N.
"""

from oracle.rules import Rule

FAMILY = "seed examples"

# rule ID, script in examples/seeds/, the rule's sentence
_TABLE = [
    (
        "SEED-000-1",
        "seed000_retain_grad.py",
        "retain_grad() on intermediate tensors keeps their exact gradients after backward (two-layer "
        "sigmoid network: z_1, y_1, z_2, y_2, loss).",
    ),
    (
        "SEED-000-2",
        "seed000_register_hook.py",
        "A tensor hook registered on each intermediate tensor receives the same gradients "
        "retain_grad() would keep.",
    ),
    (
        "SEED-001-1",
        "seed001_requires_grad_error.py",
        "backward() of a result that requires no grad raises 'element 0 of tensors does not require "
        "grad and does not have a grad_fn'.",
    ),
    (
        "SEED-001-2",
        "seed001_simple_gradient.py",
        "Through the legacy Variable wrapper, backward() of mean(3*(a+3)**2) fills a.grad with 6*(a+3)/n.",
    ),
    (
        "SEED-001-3",
        "seed001_jacobian.py",
        "A non-scalar backward with a gradient argument and retain_graph=True, then two backward "
        "passes with zeroed .grad in between, build the Jacobian.",
    ),
    (
        "SEED-001-4",
        "seed001_training_step.py",
        "A training step (zero_grad, backward, optimizer step) accumulates gradients without "
        "zero_grad, and a frozen sub-module (requires_grad=False) gets no gradient.",
    ),
    (
        "SEED-002-1",
        "seed002_leaf_grad_fn.py",
        "After backward only the leaf keeps .grad; reading a non-leaf's .grad gives None and warns; "
        "only non-leaves have a grad_fn.",
    ),
    (
        "SEED-002-2",
        "seed002_nonleaf_grad_freed.py",
        "Leaves a, b, d keep their gradients after backward of sum((a+b)*d); the non-leaves' .grad is None.",
    ),
    (
        "SEED-002-3",
        "seed002_retain_grad_reshape.py",
        "reshape() of a leaf is a non-leaf; retain_grad() before backward makes it keep .grad.",
    ),
    (
        "SEED-002-4",
        "seed002_cuda_leaf.py",
        "A tensor created by an op from one that requires grad is no leaf; one that requires no grad, "
        "or a detach()ed one, is a leaf.",
    ),
    (
        "SEED-003-1",
        "seed003_dtypes.py",
        "Tensor dtypes are inferred from Python values, set by dtype= and typed constructors, and "
        "converted by float(), type() and type_as().",
    ),
    (
        "SEED-003-2",
        "seed003_dims.py",
        "A tensor's dim() is the nesting depth of the lists it was built from; tensors of 3 and 4 "
        "dimensions print as torch prints them.",
    ),
    (
        "SEED-003-3",
        "seed003_view_reshape.py",
        "view() reshapes a contiguous tensor (-1 inferred); after t() the tensor is not contiguous, "
        "reshape() works and view() raises torch's error.",
    ),
    (
        "SEED-003-4",
        "seed003_numpy.py",
        "from_numpy() and numpy() share memory with the array, clone() does not; item() and tolist() "
        "give Python numbers.",
    ),
    (
        "SEED-003-5",
        "seed003_backward.py",
        "backward() of a scalar fills x.grad; a non-scalar needs a gradient of its shape and equals "
        "backward of sum(y * gradient).",
    ),
    (
        "SEED-003-6",
        "seed003_autograd_grad.py",
        "autograd.grad with create_graph=True gives a second derivative; with several inputs and "
        "outputs, the outputs' gradients add up.",
    ),
    ("SEED-003-7", "seed003_sgd_minimum.py", "500 SGD steps on x**2 - 2x + 1 from x = 0 reach x = 1."),
    (
        "SEED-003-8",
        "seed003_dynamic_graph.py",
        "The forward pass runs as each line executes; backward() fills the leaves' gradients.",
    ),
    (
        "SEED-003-9",
        "seed003_graph_freed.py",
        "A second backward through a freed graph raises torch's error, unless the first one passed "
        "retain_graph=True (then the gradients accumulate).",
    ),
    (
        "SEED-003-10",
        "seed003_custom_function.py",
        "A custom autograd.Function's backward is used by backward(), and its output's grad_fn is the "
        "generated <Name>Backward node.",
    ),
    (
        "SEED-003-11",
        "seed003_leaf_nonleaf.py",
        "After backward of (y1 - y2)**2, only the leaf x keeps a gradient; y1, y2 and the loss are "
        "non-leaves with .grad None.",
    ),
    (
        "SEED-003-12",
        "seed003_hook_order.py",
        "Tensor hooks fire as backward reaches each tensor (y2's before y1's) and retain_grad() keeps "
        "the loss's gradient.",
    ),
    (
        "SEED-003-13",
        "seed003_module_net.py",
        "nn.Parameter attributes of a Module are registered, require grad, are leaves, and receive "
        "gradients of a forward/backward.",
    ),
    (
        "SEED-004-1",
        "seed004_register_hook.py",
        "A hook on an intermediate tensor receives its gradient; without one its .grad is None after "
        "backward (with torch's warning).",
    ),
    (
        "SEED-004-2",
        "seed004_hook_replacement.py",
        "Hooks on one tensor run in registration order; a hook returning a tensor replaces the "
        "gradient seen by the later hooks and the inputs.",
    ),
    (
        "SEED-004-3",
        "seed004_forward_hook.py",
        "A module forward hook receives (module, input tuple, output) of each child's forward.",
    ),
    (
        "SEED-004-4",
        "seed004_backward_hook.py",
        "The legacy module backward hook receives, for Linear, addmm's (bias, input, weight.t()) "
        "gradients; on a whole model only its last operation's.",
    ),
]

RULES = [Rule(rule_id, FAMILY, sentence, f"seed {rule_id.split('-')[1]}") for rule_id, _, sentence in _TABLE]
SCRIPTS: dict[str, str] = {rule_id: script for rule_id, script, _ in _TABLE}
