"""F.local_response_norm, composed as torch's Python composes it: the squares averaged over
``size`` neighbouring channels (zero-padded; avg_pool2d of a 3-D input, avg_pool3d of others),
then ``input / (k + alpha * mean) ** beta``."""

from __future__ import annotations

from impl._tensor import Tensor
from impl.nn._pad import pad
from impl.nn._pool import avg_pool2d
from impl.nn._pool3d import avg_pool3d


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Local response normalisation across channels (dim 1)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)"
        )
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div
