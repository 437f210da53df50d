"""The 3-D layers and functions of issue 22 (conv3d, the 3-D pools, the 3-D norms), RReLU,
local_response_norm and Tensor.unfold at the corners the conformance programs leave out: torch's
errors for options and inputs it refuses, printed forms, the random stream after RReLU's draws."""

from __future__ import annotations

from typing import Any

import pytest

from tests.impl.test_impl_nn_dropout import assert_like_torch

CALLS = [
    lambda t: t.nn.functional.conv3d(t.ones(1, 2, 3, 3, 3), t.ones(2, 2, 4, 2, 2)),
    lambda t: t.nn.functional.conv3d(t.ones(2, 3, 3), t.ones(2, 2, 2, 2, 2)),
    lambda t: t.nn.functional.conv3d(t.ones(1, 2, 3, 3, 3), t.ones(2, 2, 2, 2)),
    lambda t: t.nn.functional.conv_transpose3d(t.ones(1, 2, 3, 3, 3), t.ones(2, 2, 2, 2, 2), stride=2,
                                               output_padding=2),
    lambda t: t.nn.functional.conv_transpose3d(t.ones(1, 2, 3, 3, 3), t.ones(2, 2, 2, 2, 2), padding=5),
    lambda t: t.nn.functional.max_pool3d(t.ones(2, 3, 3), 2),
    lambda t: t.nn.functional.max_pool3d(t.ones(1, 2, 3, 3), 5),
    lambda t: t.nn.functional.max_pool3d(t.ones(1, 2, 3, 3), 3, padding=2),
    lambda t: t.nn.functional.max_pool3d(t.ones(1, 2, 3, 3), (3, 3)),
    lambda t: t.nn.functional.max_pool3d(t.ones(1, 2, 3, 3), 2, dilation=0),
    lambda t: t.nn.functional.max_pool3d(t.ones(1, 2, 0, 3), 1),
    lambda t: t.nn.functional.avg_pool3d(t.ones(1, 1, 3, 3), 2, padding=1, stride=3),
    lambda t: t.nn.functional.avg_pool3d(t.ones(1, 2, 3, 3), (3, 3)),
    lambda t: t.nn.functional.avg_pool3d(t.ones(1, 2, 3, 3, dtype=t.int32), 2),
    lambda t: t.nn.functional.adaptive_avg_pool3d(t.ones(2, 3, 3), 2),
    lambda t: t.nn.functional.adaptive_max_pool3d(t.ones(2, 0, 3, 3), 2),
    lambda t: t.nn.functional.adaptive_avg_pool3d(t.ones(2, 3, 3, 3), (2, 2)),
    lambda t: t.nn.functional.adaptive_avg_pool3d(t.ones(2, 3, 3, 3), -1),
    lambda t: t.nn.functional.max_unpool3d(t.ones(1, 2, 2, 2), t.full((1, 2, 2, 2), 100), 2),
    lambda t: t.nn.functional.max_unpool3d(t.ones(2, 3, 3), t.zeros(2, 3, 3, dtype=t.long), 2),
    lambda t: [repr(m) for m in (t.nn.MaxPool3d(2, padding=1),
                                 t.nn.AvgPool3d((1, 2, 2), divisor_override=2),
                                 t.nn.AdaptiveMaxPool3d((2, None, 1)), t.nn.MaxUnpool3d((2, 1, 2)),
                                 t.nn.Conv3d(2, 4, 3, groups=2),
                                 t.nn.ConvTranspose3d(2, 4, (1, 2, 3), stride=2),
                                 t.nn.BatchNorm3d(3), t.nn.InstanceNorm3d(3), t.nn.RReLU(0.1, 0.2, True),
                                 t.nn.LocalResponseNorm(3, k=2.0), t.nn.CrossMapLRN2d(2))],
    lambda t: t.nn.BatchNorm3d(2)(t.ones(2, 2, 2, 2)),
    lambda t: t.nn.InstanceNorm3d(2)(t.ones(2, 2, 2)),
    lambda t: [t.nn.functional.rrelu(t.linspace(-2, 1, 7), training=True), t.rand(2)],
    lambda t: t.nn.functional.rrelu(t.tensor([1, 2]), training=True),
    lambda t: t.nn.functional.rrelu(t.ones(2), lower=0.5, upper=0.1),
    lambda t: t.nn.functional.local_response_norm(t.ones(2, 3), 2),
    lambda t: t.nn.CrossMapLRN2d(3)(t.ones(2, 3, 4)),
    lambda t: t.ones(4, 2).narrow(0, 1, 4),
    lambda t: t.ones(4, 2).narrow(0, 1, -1),
    lambda t: t.ones(4, 2).narrow(0, 5, 0),
    lambda t: t.ones(3, 4).unfold(1, 5, 1),
    lambda t: t.ones(3, 4).unfold(1, 2, 0),
    lambda t: t.ones(3, 4).unfold(1, -1, 1),
    lambda t: t.tensor(3.0).unfold(0, 2, 1),
]


@pytest.mark.parametrize("call", CALLS, ids=lambda f: "")
def test_corners_like_torch(call: Any) -> None:
    assert_like_torch(lambda t: _plain(call(t)))


def _plain(value: Any) -> Any:
    """A list of tensors as their values (a single tensor ``assert_like_torch`` reads itself)."""
    if isinstance(value, list):
        return [v.tolist() if hasattr(v, "tolist") else v for v in value]
    return value
