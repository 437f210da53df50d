"""Corners of the pooling and normalisation layers that the generated programs (MOD-009/010) do
not reach, each compared with torch: return_indices, errors and their messages, printed forms."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import impl

X4 = np.arange(2 * 3 * 5 * 4, dtype=np.float32).reshape(2, 3, 5, 4) % 7
X3 = X4.reshape(2, 3, 20)


def _both(call):
    """``call`` on torch and on impl: (result or (error type, message)) of each."""
    out = []
    for lib in (torch, impl):
        try:
            out.append(call(lib))
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            out.append((type(e).__name__, str(e)))
    return out


@pytest.mark.parametrize("call", [
    lambda t: t.nn.functional.max_pool2d(t.tensor(X4), 3, 2, 1, 1, True, True),
    lambda t: t.nn.functional.max_pool1d(t.tensor(X3), 3, 2, 1, 2, False, True),
    lambda t: t.nn.functional.max_pool2d_with_indices(t.tensor(X4[0]), (2, 3)),
    lambda t: t.nn.functional.adaptive_max_pool2d(t.tensor(X4), (3, 2), True),
])
def test_indices_like_torch(call) -> None:
    ours, theirs = _both(call)[1], _both(call)[0]
    for a, b in zip(theirs, ours, strict=True):
        assert str(b.dtype) == str(a.dtype)
        np.testing.assert_array_equal(b.numpy(), a.numpy())


@pytest.mark.parametrize("call", [
    lambda t: t.nn.functional.max_pool2d(t.tensor(X4), 6),
    lambda t: t.nn.functional.max_pool2d(t.tensor(X4), 2, 1, 2),
    lambda t: t.nn.functional.max_pool2d(t.tensor(X4), 2, 0),
    lambda t: t.nn.functional.max_pool1d(t.tensor(X3), 2, 1, 2),
    lambda t: t.nn.functional.avg_pool1d(t.tensor(X4), 2),
    lambda t: t.nn.functional.avg_pool2d(t.tensor(X4), 2, divisor_override=0),
    lambda t: t.nn.functional.adaptive_avg_pool2d(t.tensor(X4[0, 0, 0]), 2),
    lambda t: t.nn.BatchNorm1d(3)(t.ones(1, 3)),
    lambda t: t.nn.BatchNorm2d(3)(t.ones(2, 3, 4)),
    lambda t: t.nn.functional.batch_norm(t.ones(2, 3), None, None),
    lambda t: t.nn.LayerNorm(3)(t.ones(2, 4)),
    lambda t: t.nn.GroupNorm(2, 3),
    lambda t: t.nn.functional.group_norm(t.ones(2, 4), 3),
])
def test_errors_like_torch(call) -> None:
    theirs, ours = _both(call)
    assert isinstance(theirs, tuple) and ours == theirs


@pytest.mark.parametrize("make", [
    lambda nn: nn.MaxPool2d((2, 3), 1, 1, 2, True, True),
    lambda nn: nn.AvgPool1d(3),
    lambda nn: nn.AvgPool2d(3, divisor_override=2),
    lambda nn: nn.AdaptiveAvgPool2d((None, 3)),
    lambda nn: nn.AdaptiveMaxPool2d(2),
    lambda nn: nn.BatchNorm2d(3, momentum=None, affine=False, track_running_stats=False),
    lambda nn: nn.BatchNorm1d(4, bias=False),
    lambda nn: nn.LayerNorm((3, 4), elementwise_affine=False),
    lambda nn: nn.GroupNorm(2, 4, bias=False),
])
def test_printed_forms_and_state_dict_keys(make) -> None:
    theirs, ours = make(torch.nn), make(impl.nn)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
