"""What of torch's API the suite's programs use, and which of it a backend lacks.

``api()`` lists the names by area, derived from the program model (every op of the op table,
every module and optimiser class, the hook kinds, the grad modes) and from what the interpreter
reads. ``probe(backend)`` runs where the backend is loaded (``Backend.call``) before the suite: it
looks each name up on the backend's module, on a tensor and on an autograd node it makes, on
``nn.Module`` and ``amp.GradScaler``, and tries a tensor on the run's device. The report shows
what it lacks next to what the run found missing (the "unsupported" divergences, per family).
"""

from __future__ import annotations

import warnings
from typing import Any

from oracle.interpreter import MODULE_HOOK_REGISTRATION
from oracle.program import (
    CUSTOM_MODULES,
    DTYPES,
    FUNCTIONAL_APIS,
    GLOBAL_HOOK_FLAGS,
    GRAD_MODES,
    MODULES,
    OPS,
    OPTIMIZERS,
    SCALER_METHODS,
    SCHEDULERS,
)
from oracle.state_dict_hooks import KINDS as STATE_DICT_HOOKS

TENSOR_API = (
    "dtype shape tolist detach clone reshape is_leaf requires_grad grad grad_fn requires_grad_ "
    "retain_grad backward register_hook register_post_accumulate_grad_hook zero_ stride storage_offset "
    "is_contiguous _version"
)


def api() -> dict[str, list[str]]:
    """The names of torch's API the suite uses, by area (``torch.X``, ``Tensor.X``, ``Node.X``,
    ``Module.X``, ``GradScaler.X``), each name in the first area that uses it."""
    areas = {
        "tensors and dtypes": ["torch.tensor", "torch.Tensor", "torch.full_like", "torch.zeros",
                               "torch.get_default_dtype", "torch.set_default_dtype", "torch.finfo",
                               *(f"torch.{dtype}" for dtype in DTYPES)],
        "tensor attributes": [f"Tensor.{name}" for name in TENSOR_API.split()],
        "ops": [f"torch.{op}" if spec.style == "function" else f"Tensor.{op}" for op, spec in OPS.items()
                if op not in SCALER_METHODS],
        "autograd": ["torch.autograd.grad", "torch.autograd.Function",
                     *(f"torch.autograd.functional.{api}" for api in FUNCTIONAL_APIS),
                     "torch.autograd.function.once_differentiable",
                     "Node.next_functions", "Node.register_hook", "Node.register_prehook"],
        "grad modes": [*(f"torch.{mode}" for mode in GRAD_MODES), "torch.is_grad_enabled",
                       "torch.set_grad_enabled", "torch.is_inference_mode_enabled"],
        "nn": [*(f"torch.nn.{cls}" for cls in MODULES if cls not in CUSTOM_MODULES), "torch.nn.Module",
               *(f"Module.{method}" for method in MODULE_HOOK_REGISTRATION.values()),
               "Module.train", "Module.eval", "Module.zero_grad", "Module.requires_grad_",
               "Module.named_parameters", "Module.named_modules", "Module.state_dict",
               "Module.parameters", "Module.load_state_dict",
               *(f"Module.{registration}" for registration, _, _ in STATE_DICT_HOOKS.values()),
               *(f"torch.nn.modules.module.register_module_{kind}_hook" for kind in GLOBAL_HOOK_FLAGS)],
        "optim": [*(f"torch.optim.{cls}" for cls in OPTIMIZERS),
                  *(f"torch.optim.lr_scheduler.{cls}" for cls in SCHEDULERS),
                  *(f"GradScaler.{method}" for method in SCALER_METHODS)],
    }
    seen: set[str] = set()
    for area, names in areas.items():
        areas[area] = [name for name in dict.fromkeys(names) if name not in seen]
        seen.update(names)
    return areas


def probe(backend: Any) -> dict:
    """What ``backend`` (an ``oracle.backends.InProcess``) lacks of ``api()``: ``{"missing": {area:
    [names]}, "unknown": {owner: why its names could not be looked up}, "device_error": why a
    tensor cannot be placed on the run's device (None if it can), "names": how many names there
    are}``. Tensor and node names are looked up on a cpu tensor when the device refuses one. The
    names are looked up while the backend is active (a planted fault's patch applied), as programs
    see them."""
    with backend.active():
        return _probe(backend.module, backend.device)


def _probe(torch: Any, device: str) -> dict:
    owners: dict[str, Any] = {"torch": torch, "Module": getattr(getattr(torch, "nn", None), "Module", None),
                              "GradScaler": getattr(getattr(torch, "amp", None), "GradScaler", None)}
    unknown = {f"{owner}": f"the backend lacks torch.{where}.{owner}" for owner, where in
               (("Module", "nn"), ("GradScaler", "amp")) if owners[owner] is None}
    device_error = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for place in dict.fromkeys((device, "cpu")):
            try:
                placed = {} if place == "cpu" else {"device": place}
                tensor = torch.tensor([1.0, 2.0], requires_grad=True, **placed)
                owners["Tensor"], owners["Node"] = tensor, (tensor * 2).grad_fn
                break
            except Exception as exc:  # noqa: BLE001 - what failed is reported, the rest still probed
                why = f"{type(exc).__name__}: {exc}"
                if place != "cpu":
                    device_error = why
                else:
                    unknown["Tensor"] = unknown["Node"] = f"making a tensor failed: {why}"
        if "Tensor" in owners and owners["Node"] is None:
            unknown["Node"] = "tensor * 2 of a tensor that requires grad has no grad_fn"
    missing: dict[str, list[str]] = {}
    areas = api()
    for area, names in areas.items():
        for name in names:
            owner, _, path = name.partition(".")
            if owner not in unknown and not _has(owners[owner], path):
                missing.setdefault(area, []).append(name)
    return {"missing": missing, "unknown": unknown, "device_error": device_error,
            "names": sum(map(len, areas.values()))}


def _has(owner: Any, path: str) -> bool:
    for part in path.split("."):
        try:
            owner = getattr(owner, part)
        except Exception:  # noqa: BLE001 - an attribute that cannot be read is not there to use
            return False
    return True
