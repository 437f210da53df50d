"""nn.utils.rnn.pad_sequence against torch, in one loop over many calls: values, dtype, the chain
of CopySlices nodes (and what each points to), the gradients of a weighted sum, and errors."""

from __future__ import annotations

from typing import Any

import torch

import impl


def _facts(lib: Any, call: Any) -> Any:
    """What ``call(lib, leaves)`` gives (leaves: two float leaves requiring grad and one not), or
    its error's type and message."""
    a = lib.arange(6.0).reshape(3, 2).requires_grad_()
    b = lib.arange(2.0).reshape(1, 2)
    c = lib.arange(4.0).reshape(2, 2).requires_grad_()
    try:
        out = call(lib.nn.utils.rnn.pad_sequence, lib, (a, b, c))
    except Exception as e:  # noqa: BLE001  (the type is compared)
        return type(e).__name__, str(e)
    facts: list = [str(out.dtype), tuple(out.shape), out.tolist()]
    node = out.grad_fn
    while node is not None:
        facts.append((type(node).__name__, [type(n).__name__ for n, _ in node.next_functions]))
        node = node.next_functions[0][0] if node.next_functions else None
    if out.requires_grad:
        weights = lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape)
        grads = lib.autograd.grad((out * weights).sum(), [a, c], allow_unused=True)
        facts.append([None if g is None else g.tolist() for g in grads])
    return facts


CALLS = [
    lambda ps, t, x: ps([x[0], x[1], x[2]]),
    lambda ps, t, x: ps(list(x), True, 1.5, "left"),
    lambda ps, t, x: ps((s[:, 0] for s in x), batch_first=True),
    lambda ps, t, x: ps([x[2], x[0]], True, -1, "left"),
    lambda ps, t, x: ps([t.ones(0, 2), x[2]]),
    lambda ps, t, x: ps(x[0]),  # a tensor: its rows (torch iterates by unbind)
    lambda ps, t, x: ps([x[0], t.ones(2)]),  # broadcast to the first one's trailing shape
    lambda ps, t, x: ps([x[0], t.ones(2, 2, dtype=t.int64)]),
    lambda ps, t, x: ps([t.ones(2, dtype=t.int64), t.ones(3)], padding_value=0.5),
    lambda ps, t, x: ps(5),
    lambda ps, t, x: ps([]),
    lambda ps, t, x: ps(list(x), padding_side="middle"),
    lambda ps, t, x: ps([x[0], t.ones(2, 3)]),
    lambda ps, t, x: ps([t.tensor(1.0)]),
    lambda ps, t, x: ps([x[0], 3]),
]


def test_pad_sequence_like_torch() -> None:
    assert [_facts(impl, c) for c in CALLS] == [_facts(torch, c) for c in CALLS]
