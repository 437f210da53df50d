"""F.local_response_norm, composed as torch's Python composes it: the squares averaged over
``size`` neighbouring channels (zero-padded; avg_pool2d of a 3-D input, avg_pool3d of others),
then ``input / (k + alpha * mean) ** beta``; and torch's legacy CrossMapLRN2d Function."""

from __future__ import annotations

from typing import Any

from impl._tensor import Tensor
from impl.autograd.function import Function
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


class CrossMapLRN2d(Function):
    """torch's legacy cross-channel LRN of a 4-D input (nn.CrossMapLRN2d), a custom Function
    (CrossMapLRN2dBackward) ported step for step: a running sum of squares over the channels, then
    ``input * (k + alpha / size * sum) ** -beta``; its backward the legacy loop over samples and
    channels."""

    @staticmethod
    def forward(ctx: Any, input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                k: float = 1) -> Tensor:
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        channels = input.size(1)
        square = input.pow(2)
        ctx.scale = scale = input.new_zeros(input.shape)
        pre_pad = int((size - 1) / 2 + 1)
        for c in range(min(pre_pad, channels)):
            scale.select(1, 0).add_(square.select(1, c))
        for c in range(1, channels):
            current = scale.select(1, c)
            current.copy_(scale.select(1, c - 1))
            if c < channels - pre_pad + 1:
                current.add_(square.select(1, c + pre_pad - 1), alpha=1)
            if c > pre_pad:
                current.add_(square.select(1, c - pre_pad), alpha=-1)
        scale.mul_(alpha / size).add_(k)
        output = scale.pow(-beta).mul_(input)
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple:
        input, output = ctx.saved_tensors
        batch_size, channels, height, width = input.shape
        padded_ratio = input.new_zeros((channels + ctx.size - 1, height, width))
        cache_ratio_value = 2 * ctx.alpha * ctx.beta / ctx.size
        inverse_pre_pad = int(ctx.size - (ctx.size - 1) / 2)
        grad_input = ctx.scale.pow(-ctx.beta).mul_(grad_output)
        center = padded_ratio.narrow(0, inverse_pre_pad, channels)
        for n in range(batch_size):
            center.copy_(grad_output[n].mul(output[n])).div_(ctx.scale[n])
            accum_ratio = padded_ratio.narrow(0, 0, ctx.size - 1).sum(0)
            for c in range(channels):
                accum_ratio.add_(padded_ratio[c + ctx.size - 1])
                grad_input[n][c].addcmul_(input[n][c], accum_ratio, value=-cache_ratio_value)
                accum_ratio.add_(padded_ratio[c], alpha=-1)
        return grad_input, None, None, None, None
