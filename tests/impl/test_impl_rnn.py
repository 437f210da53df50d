"""impl against torch on the recurrent layers: seeded initialisation bit for bit, outputs, graphs
and gradients of RNN/LSTM/GRU (unbatched, batch_first, bidirectional multi-layer, dropout, h0/c0
given, projections) and of the cells, printed forms, errors and the dropout warning."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import impl


def graph(fn: Any, depth: int = 4) -> str:
    """The grad_fn names of a graph to ``depth`` levels."""
    if fn is None:
        return "None"
    kids = [graph(f, depth - 1) for f, _ in fn.next_functions] if depth else []
    return type(fn).__name__ + (f"({','.join(kids)})" if kids else "")


def flat(result: Any) -> list:
    return [t for r in result for t in flat(r)] if isinstance(result, tuple) else [result]


def run(m: Any, cls: str, args: tuple, kwargs: dict, shape: tuple, hx: list | None, dtype: str) -> dict:
    """Seeded module and input, forward, backward of a weighted sum of every result; all observed."""
    m.manual_seed(0)
    mod = getattr(m.nn, cls)(*args, **kwargs).to(getattr(m, dtype))
    x = m.randn(*shape, dtype=getattr(m, dtype)).requires_grad_()
    hs = [m.randn(*s, dtype=getattr(m, dtype)).requires_grad_() for s in hx or []]
    outs = flat(mod(x) if hx is None else mod(x, tuple(hs) if len(hs) == 2 else hs[0]))
    sum((t * (k + 1.5)).sum() for k, t in enumerate(outs)).backward()
    params = list(mod.named_parameters())
    return {
        "repr": repr(mod),
        "names": [n for n, _ in params],
        "init": [np.asarray(p.detach().tolist()) for _, p in params],  # after backward: unchanged
        "outs": [np.asarray(t.detach().tolist()) for t in outs],
        "graphs": [graph(t.grad_fn) for t in outs],
        "grads": [np.asarray(t.grad.tolist()) for t in [*(p for _, p in params), x, *hs]],
        "keys": list(mod.state_dict()),
    }


CASES = [
    *[(cls, (3, 4), kw, (5, 2, 3), None) for cls in ("RNN", "GRU", "LSTM") for kw in (
        {}, {"num_layers": 2, "bidirectional": True, "bias": False},
        {"batch_first": True, "bidirectional": True, "num_layers": 2}, {"num_layers": 2, "dropout": 0.5})],
    *[(cls, (3, 4), {}, (5, 3), None) for cls in ("RNN", "GRU", "LSTM")],  # unbatched
    ("RNN", (3, 4, 2), {"nonlinearity": "relu"}, (5, 2, 3), [(2, 2, 4)]),
    ("GRU", (3, 4), {"bidirectional": True}, (5, 3), [(2, 4)]),
    ("LSTM", (3, 4, 2), {"batch_first": True}, (2, 5, 3), [(2, 2, 4), (2, 2, 4)]),
    ("LSTM", (3, 4), {}, (5, 3), [(1, 4), (1, 4)]),
    ("LSTM", (3, 4), {"proj_size": 2, "num_layers": 2, "bidirectional": True}, (5, 2, 3), None),
    *[(cls, (3, 4), kw, shape, None) for cls in ("RNNCell", "GRUCell", "LSTMCell")
      for kw in ({}, {"bias": False}) for shape in ((2, 3), (3,))],
    ("RNNCell", (3, 4), {"nonlinearity": "relu"}, (3,), [(4,)]),
    ("LSTMCell", (3, 4), {}, (2, 3), [(2, 4), (2, 4)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[2]}-{len(c[3])}d")
def test_recurrent_layers_like_torch(case: tuple, dtype: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected, got = (run(m, *case, dtype) for m in (torch, impl))
    for key in ("repr", "names", "keys", "graphs"):
        assert got[key] == expected[key], key
    for key in ("init",):
        assert all(np.array_equal(a, b) for a, b in zip(expected[key], got[key], strict=True))
    tol = {"float32": (1e-4, 1e-5), "float64": (1e-10, 1e-12)}[dtype]
    for key in ("outs", "grads"):
        for a, b in zip(expected[key], got[key], strict=True):
            np.testing.assert_allclose(b, a, rtol=tol[0], atol=tol[1], err_msg=key)


def outcome(fn: Any) -> str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn()
            result = "ok"
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            result = f"{type(e).__name__}: {e}"
    return result + "".join(f" | {w.category.__name__}: {w.message}" for w in caught)


ERRORS = {
    "input size": lambda m: m.nn.LSTM(3, 3)(m.zeros(5, 1, 4)),
    "input dims": lambda m: m.nn.GRU(3, 3)(m.zeros(5)),
    "rnn input dims": lambda m: m.nn.RNN(3, 3)(m.zeros(1, 5, 1, 3)),
    "hidden size": lambda m: m.nn.GRU(3, 4)(m.zeros(5, 2, 3), m.zeros(1, 2, 3)),
    "lstm hidden[1]": lambda m: m.nn.LSTM(3, 4)(m.zeros(5, 2, 3), (m.zeros(1, 2, 4), m.zeros(1, 1, 4))),
    "lstm hx dims": lambda m: m.nn.LSTM(3, 4)(m.zeros(5, 2, 3), (m.zeros(2, 4), m.zeros(2, 4))),
    "unbatched hx dims": lambda m: m.nn.RNN(3, 4)(m.zeros(5, 3), m.zeros(1, 1, 4)),
    "dtype": lambda m: m.nn.RNN(3, 4)(m.zeros(5, 2, 3, dtype=m.float64)),
    "dropout warning": lambda m: m.nn.LSTM(3, 4, dropout=0.2),
    "dropout range": lambda m: m.nn.GRU(3, 4, dropout=1.5),
    "proj_size on GRU": lambda m: m.nn.GRU(3, 4, proj_size=2),
    "proj_size too big": lambda m: m.nn.LSTM(3, 4, proj_size=4),
    "nonlinearity": lambda m: m.nn.RNN(3, 4, nonlinearity="sigmoid"),
    "hidden_size type": lambda m: m.nn.RNN(3, 4.0),
    "cell input size": lambda m: m.nn.LSTMCell(3, 4)(m.zeros(2, 5)),
    "cell batch": lambda m: m.nn.GRUCell(3, 4)(m.zeros(2, 3), m.zeros(3, 4)),
    "cell hidden size": lambda m: m.nn.LSTMCell(3, 4)(m.zeros(2, 3), (m.zeros(2, 4), m.zeros(2, 5))),
    "cell dims": lambda m: m.nn.RNNCell(3, 4)(m.zeros(1, 2, 3)),
    "printed forms": lambda m: print(m.nn.LSTM(10, 20, 2), m.nn.GRU(2, 3, bias=False, batch_first=True),
                                     m.nn.RNNCell(2, 3, nonlinearity="relu"), m.nn.LSTM(4, 3, proj_size=2)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_and_warnings_like_torch(name: str) -> None:
    assert outcome(lambda: ERRORS[name](impl)) == outcome(lambda: ERRORS[name](torch))


def test_printed_forms() -> None:
    for m in (torch, impl):
        assert repr(m.nn.LSTM(10, 20, 2)) == "LSTM(10, 20, num_layers=2)"
        assert repr(m.nn.GRU(2, 3, dropout=0.5, num_layers=2, bidirectional=True)) == (
            "GRU(2, 3, num_layers=2, dropout=0.5, bidirectional=True)")


def test_lstm_double_backward_builds_on_the_layer_gradient() -> None:
    """create_graph through the oneDNN layer: the input's gradient is a CatBackward0 of ops, and
    a second backward through it gives torch's values."""
    results = []
    for m in (torch, impl):
        m.manual_seed(0)
        lstm = m.nn.LSTM(3, 2)
        x = m.randn(4, 1, 3, requires_grad=True)
        g, = m.autograd.grad(lstm(x)[0].pow(2).sum(), x, create_graph=True)
        results.append((type(g.grad_fn).__name__, np.asarray(g.tolist())))
        g.sum().backward()
        results[-1] += (np.asarray(lstm.weight_hh_l0.grad.tolist()),)
    assert results[0][0] == results[1][0]
    for a, b in zip(results[0][1:], results[1][1:], strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-6)
