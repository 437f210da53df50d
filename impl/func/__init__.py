"""torch.func: composable function transforms (grad, vjp, jvp, jacrev, jacfwd, hessian, vmap) and
functional_call / stack_module_state."""

from impl.func._autodiff import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from impl.func._module import functional_call, stack_module_state
from impl.func._vmap import vmap

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "stack_module_state",
    "vjp",
    "vmap",
]

from impl import _api  # noqa: E402

_api.public(vmap, "vmap")  # torch.vmap is torch.func.vmap
