"""impl against torch on F.embedding and nn.Embedding: weight dtypes, index dtypes and ranges,
padding_idx (negative too), scale_grad_by_freq, max_norm's in-place renorm, errors, the
second-order graph (EmbeddingDenseBackwardBackward0), repr and from_pretrained."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

import impl

WEIGHT = [[0.0, -0.0, 1.0], [-1.0, 0.5, 2.0], [0.1, 0.2, 0.3], [3.0, -4.0, 0.0], [0.25, -4.0, 6.0]]
OPTIONS = [
    {},
    {"padding_idx": 2},
    {"padding_idx": -1},
    {"padding_idx": 5},
    {"padding_idx": -6},
    {"scale_grad_by_freq": True},
    {"padding_idx": 2, "scale_grad_by_freq": True},
    {"max_norm": 1.0},
    {"max_norm": 2.0, "norm_type": 1.0},
    {"max_norm": 0.5, "norm_type": math.inf},
]
INDICES = [2, [], [0, 2, 2], [[0, 4, 2], [1, 1, 3]], [5], [-1]]


def names(fn: Any) -> list:
    if fn is None:
        return []
    return [type(fn).__name__] + [n for f, _ in fn.next_functions for n in names(f)]


def observe(m: Any, wdtype: str, idtype: str, idx: Any, options: dict) -> Any:
    try:
        w = m.tensor(WEIGHT, dtype=getattr(m, wdtype))
        floating = w.dtype.is_floating_point
        w.requires_grad_(floating)
        y = m.nn.functional.embedding(m.tensor(idx, dtype=getattr(m, idtype)), w, **options)
        seen = [str(y.dtype), tuple(y.shape), y.detach().double().tolist(), names(y.grad_fn), w._version]
        seen.append(w.detach().double().tolist())
        if floating:
            (g,) = m.autograd.grad((y * y).sum(), w, create_graph=True)
            seen += [g.detach().double().tolist(), names(g.grad_fn)]
            if g.grad_fn is not None:
                h = g.grad_fn(m.ones_like(g).requires_grad_())
                seen += [h.detach().double().tolist(), names(h.grad_fn)]
        return seen
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("wdtype", ["float16", "bfloat16", "float32", "float64", "int64", "uint8"])
@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_embedding_against_torch(wdtype: str, options: dict) -> None:
    for idtype in ("int64", "int32", "float32", "bool", "uint8", "bfloat16"):
        for idx in INDICES if idtype in ("int64", "int32") else [[1, 0]]:
            expected = observe(torch, wdtype, idtype, idx, options)
            got = observe(impl, wdtype, idtype, idx, options)
            if isinstance(expected, str) or isinstance(got, str):
                assert got == expected, (idtype, idx)
                continue
            tol = 1e-3 if wdtype in ("float16", "bfloat16") else 1e-6
            for e, g in zip(expected, got, strict=True):
                if isinstance(e, list) and e and not isinstance(e[0], str):
                    torch.testing.assert_close(
                        torch.tensor(g, dtype=torch.float64),
                        torch.tensor(e, dtype=torch.float64),
                        rtol=tol,
                        atol=tol,
                        equal_nan=True,
                    )
                else:
                    assert g == e, (idtype, idx)


def build(m: Any) -> list:
    m.manual_seed(0)
    e = m.nn.Embedding(5, 3, padding_idx=-2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True)
    f = m.nn.Embedding.from_pretrained(m.ones(4, 2), padding_idx=1)
    g = m.nn.Embedding.from_pretrained(m.ones(4, 2), freeze=False, max_norm=2)
    out = [repr(e), repr(f), repr(g), e.padding_idx, list(e.state_dict()), e.weight.tolist()]
    out += [
        f.weight.requires_grad,
        g.weight.requires_grad,
        repr(m.nn.Embedding(3, 2, dtype=m.float64).weight.dtype),
    ]
    for bad in ({"padding_idx": 5}, {"padding_idx": -6}, {"_weight": m.ones(2, 2)}):
        try:
            m.nn.Embedding(5, 3, **bad)
        except AssertionError as err:
            out.append(str(err))
    for args in (([1], m.ones(2, 2)), (m.tensor([1]), m.ones(2)), (m.tensor([1]), [[1.0]])):
        try:
            m.nn.functional.embedding(*args)
        except (TypeError, RuntimeError) as err:
            out.append(f"{type(err).__name__}: {err}")
    return out


def test_embedding_module_against_torch() -> None:
    assert build(impl) == build(torch)


def test_sparse_is_refused() -> None:
    with pytest.raises(NotImplementedError, match="sparse"):
        impl.nn.Embedding(3, 2, sparse=True)(impl.tensor([1]))


CALLS = [
    lambda m: m.embedding(m.ones(5, 2), m.tensor([1, 2]), padding_idx=-2),
    lambda m: m.embedding(m.ones(5, 2), m.tensor([1, 2]), 1, True, False),
    lambda m: m.embedding(m.ones(5, 2), [1]),
    lambda m: m.embedding(m.ones(5), m.tensor([1.0])),
    lambda m: m.nn.functional.embedding(m.tensor([1.0]), m.ones(5)),
    lambda m: m.nn.functional.embedding(m.tensor([1]), m.ones(5), max_norm=1.0),
    lambda m: m.nn.functional.embedding(m.tensor([1.0]), m.ones(5), max_norm=1.0),
    lambda m: m.embedding(m.ones(5, 2, requires_grad=True), m.tensor([1]), padding_idx=7).grad_fn.name(),
]


@pytest.mark.parametrize("call", range(len(CALLS)))
def test_torch_embedding_and_error_order(call: int) -> None:
    """torch.embedding (padding_idx -1 or unused: none) and which check fails first."""

    def outcome(m: Any) -> str:
        try:
            result = CALLS[call](m)
            return repr(result.tolist() if hasattr(result, "tolist") else result)
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return f"{type(e).__name__}: {e}"

    assert outcome(impl) == outcome(torch)
