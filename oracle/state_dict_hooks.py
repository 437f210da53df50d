"""State-dict hooks as programs run them: one source per kind of hook and action, which the
interpreter executes and the rendered script holds word for word, so a repro runs exactly the
hook the oracle ran. Each hook first logs what it received that is not a tensor (prefixes, keys,
metadata, flags, key lists) with ``show_state_hook``, then does its action."""

from __future__ import annotations

import json

_SAVED = "module, state_dict, prefix, local_metadata"
_LOADING = "state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs"
_SAVED_LOG = "prefix=prefix, keys=list(state_dict), metadata=dict(local_metadata)"
_LOADING_LOG = (
    "prefix=prefix, keys=list(state_dict), metadata=dict(local_metadata), strict=strict, "
    "missing=list(missing_keys), unexpected=list(unexpected_keys), errors=list(error_msgs)"
)
_DROP_LAST = ["for key in list(state_dict)[-1:]:", "    del state_dict[key]"]

# kind -> (the Module method registering it, the hook's parameters, what it logs)
KINDS: dict[str, tuple[str, str, str]] = {
    "state_dict_pre": ("register_state_dict_pre_hook", "module, prefix, keep_vars",
                       "prefix=prefix, keep_vars=keep_vars"),
    "state_dict_post": ("register_state_dict_post_hook", _SAVED, _SAVED_LOG),
    "_state_dict": ("_register_state_dict_hook", _SAVED, _SAVED_LOG),
    "load_state_dict_pre": ("register_load_state_dict_pre_hook", f"module, {_LOADING}", _LOADING_LOG),
    "_load_state_dict_pre": ("_register_load_state_dict_pre_hook", _LOADING, _LOADING_LOG),
    "load_state_dict_post": ("register_load_state_dict_post_hook", "module, incompatible_keys",
                             "missing=list(incompatible_keys.missing_keys), "
                             "unexpected=list(incompatible_keys.unexpected_keys)"),
}

# kind -> action -> what the hook does after logging. "edit" changes what it received in place;
# "return" returns a value (a new dict: kept from a legacy hook on the root, refused from a public
# one; anything from a load post-hook: refused); "refuse" adds an error message (loading fails).
ACTIONS: dict[str, dict[str, list[str]]] = {
    "state_dict_pre": {"log": []},
    "state_dict_post": {"log": [], "edit": _DROP_LAST, "return": ["return dict(state_dict)"]},
    "_state_dict": {
        "log": [], "edit": _DROP_LAST,
        "return": ["return {k: v for k, v in state_dict.items() if not k.endswith('bias')}"],
    },
    "load_state_dict_pre": {
        "log": [], "edit": ["for key in list(state_dict)[:1]:", "    del state_dict[key]"],
        "refuse": ["error_msgs.append('refused by ' + prefix)"],
    },
    "load_state_dict_post": {
        "log": [],
        "edit": ["incompatible_keys.missing_keys.clear()", "incompatible_keys.unexpected_keys.clear()"],
        "return": ["return incompatible_keys"],
    },
}
ACTIONS["_load_state_dict_pre"] = ACTIONS["load_state_dict_pre"]


def parameters(on: str, with_module: bool) -> str:
    """The hook function's parameters (the private load pre-hook takes the module ``with_module``)."""
    params = KINDS[on][1]
    return f"module, {params}" if on == "_load_state_dict_pre" and with_module else params


def source(function: str, hook: str, on: str, target: str, action: str, with_module: bool) -> list[str]:
    """The lines of ``def <function>(...)``: the hook ``hook`` of kind ``on`` registered on the
    module named ``target``."""
    log = f"    show_state_hook({hook!r}, {on!r}, {target!r}, {KINDS[on][2]})"
    body = ["    " + line for line in ACTIONS[on][action]]
    return [f"def {function}({parameters(on, with_module)}):", log, *body]


def show_text(hook: str, on: str, target: str, arguments: dict) -> str:
    """How a state-dict hook's call is printed (by the script) and formatted (from the trace)."""
    return f"hook {hook} ({on} on {target}): {json.dumps(arguments, default=repr)}"
