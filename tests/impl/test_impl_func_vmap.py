"""impl's vmap against torch 2.13 where it evaluates its function once per batch element instead of
on torch's batched tensors (impl/func/_vmap.py): the known divergences of FUNC-002, strict xfails
that fail loudly (XPASS) once impl batches as torch does."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.parity import both


def _same(fn: Any) -> None:
    expected, got = both(fn)
    assert got == expected


@pytest.mark.xfail(strict=True, reason=(
    "FUNC-002 known divergence: impl's vmap calls its function per batch element, so `.item()` "
    "inside it returns a number where torch raises its batched-tensor RuntimeError"))
def test_vmap_refuses_item() -> None:
    _same(lambda t: t.func.vmap(lambda x: x * x.sum().item())(t.ones(3, 2)).tolist())


@pytest.mark.xfail(strict=True, reason=(
    "FUNC-002 known divergence: impl's vmap stacks per-element results, so its output's grad_fn is "
    "a StackBackward0 where torch's is the batched op's (AddBackward0 here)"))
def test_vmap_output_grad_fn_is_the_batched_op() -> None:
    def grad_fn(t: Any) -> str:
        w = t.ones(2, requires_grad=True)
        return type(t.func.vmap(lambda x: x + w)(t.ones(3, 2)).grad_fn).__name__

    _same(grad_fn)


def test_vmap_values_and_batch_size_error_match() -> None:
    """What the per-element evaluation does reproduce: values, and the mismatched-sizes error."""
    _same(lambda t: t.func.vmap(lambda x, y: (x * y).sum())(t.arange(6.0).view(3, 2), t.ones(3, 2)).tolist())
    _same(lambda t: t.func.vmap(lambda x, y: x + y)(t.ones(3, 2), t.ones(4, 2)))
