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


def _graph(t: Any) -> list:
    """The names of the nodes reachable from ``t.grad_fn``, depth first."""
    names, stack = [], [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None:
            names.append(type(node).__name__)
            stack.extend(n for n, _ in node.next_functions)
    return names


def _packing_facts(lib: Any, call: Any) -> Any:
    """What ``call(rnn, lib, x)`` gives (x a 4 x 3 x 2 float leaf): its printed form, and for each
    tensor in it that requires grad its graph and the create_graph gradient of a weighted sum
    (with that gradient's graph); or its error's type and message."""
    x = lib.arange(24.0).reshape(4, 3, 2).requires_grad_()
    try:
        result = call(lib.nn.utils.rnn, lib, x)
    except Exception as e:  # noqa: BLE001  (the type is compared)
        return type(e).__name__, str(e)
    facts: list = [repr(result)]
    for t in result if isinstance(result, (tuple, list)) else [result]:
        if isinstance(t, lib.Tensor) and t.requires_grad:
            weights = lib.arange(t.numel(), dtype=t.dtype).reshape(t.shape)
            (grad,) = lib.autograd.grad((t * weights).sum(), x, create_graph=True)
            facts += [_graph(t), grad.tolist(), _graph(grad)]
    return facts


PACKING = [
    lambda r, t, x: r.pack_padded_sequence(x, [4, 2, 1]),
    lambda r, t, x: r.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False),
    lambda r, t, x: r.pack_padded_sequence(x, t.tensor([2, 3, 1]), enforce_sorted=False).data,
    lambda r, t, x: r.pack_padded_sequence(x, [3, 2, 2, 1], batch_first=True).data,
    lambda r, t, x: r.pack_padded_sequence(x, [2, 3, 1, 3], batch_first=True, enforce_sorted=False),
    lambda r, t, x: r.pad_packed_sequence(r.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False)),
    lambda r, t, x: r.pad_packed_sequence(r.pack_padded_sequence(x, [4, 3, 1]), True, -1.0, 6),
    lambda r, t, x: r.pad_packed_sequence(r.pack_padded_sequence(x, [2, 3, 1, 3], True, False), True),
    lambda r, t, x: r.pad_packed_sequence(r.pack_padded_sequence(x, [4, 2, 1]), total_length=3),
    lambda r, t, x: r.pack_padded_sequence(x, [2, 3, 1]),
    lambda r, t, x: r.pack_padded_sequence(x, [2, 0, 1], enforce_sorted=False),
    lambda r, t, x: r.pack_padded_sequence(x, [2, 1]),
    lambda r, t, x: r.pack_padded_sequence(x, t.tensor([[2, 1, 1]])),
    lambda r, t, x: r.pack_padded_sequence(x[:0], [0, 0, 0]),
    lambda r, t, x: r.pack_padded_sequence(x, t.tensor([2.5, 2.0, 1.0])),
    lambda r, t, x: r.pack_sequence([x[:, 0], x[:3, 1], x[:1, 2]]),
    lambda r, t, x: r.pack_sequence([x[:1, 0], x[:3, 1], x[:, 2]], enforce_sorted=False),
    lambda r, t, x: r.unpack_sequence(r.pack_sequence([x[:1, 0], x[:3, 1], x[:, 2]], enforce_sorted=False)),
    lambda r, t, x: r.unpad_sequence(x.detach().clone(), t.tensor([4, 1, 2])),
    lambda r, t, x: r.unpad_sequence(x, t.tensor([4, 1, 2]), batch_first=True),
    lambda r, t, x: r.PackedSequence(x[0], t.tensor([2, 1])),
    lambda r, t, x: r.PackedSequence((x[0], t.tensor([2, 1]))),
    lambda r, t, x: r.PackedSequence(x[0]),
    lambda r, t, x: r.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False).double(),
    lambda r, t, x: r.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False).to(t.int32),
    lambda r, t, x: r.pack_padded_sequence(x, [4, 4, 1]).cpu().is_cuda,
    lambda r, t, x: r.invert_permutation(t.tensor([2, 0, 1])),
    lambda r, t, x: (lambda p: (type(p).__mro__[1].__name__, p._fields))(r.pack_sequence([x[:, 0]])),
    # recurrent layers on packed input: their checks
    lambda r, t, x: t.nn.GRU(3, 2)(r.pack_padded_sequence(x, [4, 2, 1])),
    lambda r, t, x: t.nn.RNN(2, 2)(r.pack_padded_sequence(x, [4, 2, 1]), t.zeros(1, 2, 2)),
    lambda r, t, x: t.nn.LSTM(2, 1)(r.pack_padded_sequence(x, [4, 2, 1]), (t.zeros(2, 3, 1),) * 2),
    lambda r, t, x: t.nn.LSTM(2, 1, bidirectional=True)(r.pack_padded_sequence(x, [4, 2, 1]),
                                                        (t.zeros(3, 3, 1),) * 2),
    lambda r, t, x: t.nn.LSTM(2, 1)(r.pack_padded_sequence(x, [4, 2, 1]), (t.zeros(1, 3, 1),)),
    # bilinear: its checks, nn.Bilinear printed
    lambda r, t, x: t.bilinear(x[0], x[:2, 0], t.ones(1, 2, 2)),
    lambda r, t, x: t.bilinear(x[0], x[0, 0], t.ones(1, 2, 2)),
    lambda r, t, x: t.nn.functional.bilinear(x[0], x[0], t.ones(1, 3, 2)),
    lambda r, t, x: t.bilinear(x[0], x[0, :, :1], t.ones(1, 2, 2)),
    lambda r, t, x: t.bilinear(x[0], x[0], t.ones(1, 2, 2), t.ones(2)),
    lambda r, t, x: t.bilinear(x[0], x[0].double(), t.ones(1, 2, 2)),
    lambda r, t, x: t.bilinear(x[0], x[0], t.ones(1, 2, 2), t.ones(1, dtype=t.float64)),
    lambda r, t, x: (t.nn.Bilinear(2, 3, 4), t.nn.Bilinear(1, 1, 1, bias=False)),
]


def test_packing_and_bilinear_like_torch() -> None:
    """Packing, unpacking, PackedSequence, recurrent layers' packed checks and bilinear's checks
    against torch: printed forms, graphs, create_graph gradients and errors."""
    assert [_packing_facts(impl, c) for c in PACKING] == [_packing_facts(torch, c) for c in PACKING]


def test_bilinear_init_like_torch() -> None:
    """nn.Bilinear's weight and bias, seeded: torch's draws (uniform within 1/sqrt(in1_features))."""
    impl.manual_seed(5)
    torch.manual_seed(5)
    ours, theirs = impl.nn.Bilinear(3, 2, 4), torch.nn.Bilinear(3, 2, 4)
    assert [p.tolist() for p in ours.parameters()] == [p.tolist() for p in theirs.parameters()]
