"""Planted faults of the nn breadth of issue 22 (3-D convolution, pooling and normalisation
layers ...), rules MOD-*."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from impl_faults import fault, patched


@fault({"MOD-006": ": value"})
def conv3d_taps_reversed_in_depth() -> Iterator[None]:
    """The window taps of a 3-D convolution pair each kernel depth slice with the input slices of
    the mirrored one (kD - 1 - i: a kernel read reversed in depth)."""
    from impl.nn import _conv

    def taps(original: Callable) -> Callable:
        def reversed_depth(input_shape: tuple, kernel: tuple, out_size: tuple, p: Any) -> Iterator[tuple]:
            for tap, outs, ins in original(input_shape, kernel, out_size, p):
                yield ((kernel[0] - 1 - tap[0], *tap[1:]) if len(kernel) == 3 else tap), outs, ins

        return reversed_depth

    with patched(_conv, "_taps", taps):
        yield


@fault({"MOD-009": "value"})
def avg_pool3d_divides_by_plane_only() -> Iterator[None]:
    """avg_pool3d divides a window's sum by its height and width only."""
    from impl.nn import _pool

    def divisors(original: Callable) -> Callable:
        def plane_only(size: tuple, k: tuple, s: tuple, p: tuple, out: tuple, *rest: Any) -> Any:
            if len(size) != 3:
                return original(size, k, s, p, out, *rest)
            return np.broadcast_to(original(size[1:], k[1:], s[1:], p[1:], out[1:], *rest), out)

        return plane_only

    with patched(_pool, "_avg_divisors", divisors):
        yield


@fault({"MOD-010": "differs"})
def instance_norm3d_per_depth_slice() -> Iterator[None]:
    """InstanceNorm3d normalises each depth slice on its own."""
    from impl.nn import functional as F
    from impl.nn.modules.normalization import InstanceNorm3d

    def norm(self: InstanceNorm3d, input: Any) -> Any:
        n, c, d, h, w = input.shape
        planes = input.transpose(1, 2).reshape(n * d, c, h, w)
        use_input_stats = self.training or not self.track_running_stats
        out = F.instance_norm(planes, self.running_mean, self.running_var, self.weight, self.bias,
                              use_input_stats, self.momentum or 0.0, self.eps)
        return out.reshape(n, d, c, h, w).transpose(1, 2)

    with patched(InstanceNorm3d, "_instance_norm", lambda _orig: norm):
        yield


@fault({"MOD-020": ": value"})
def max_unpool3d_reversed_in_depth() -> Iterator[None]:
    """max_unpool3d writes its output volume reversed in depth."""
    from impl.nn import _pool

    def unpool(original: Callable) -> Callable:
        def flipped(xp: Any, a: Any, indices: Any, out_hw: tuple) -> Any:
            out = original(xp, a, indices, out_hw)
            return out[..., ::-1, :, :] if len(out_hw) == 3 else out

        return flipped

    with patched(_pool.MAX_UNPOOL3D, "forward", unpool):
        yield


@fault({"MOD-012": ": value"})
def rrelu_draws_a_slope_per_element() -> Iterator[None]:
    """RReLU in training draws a slope for every element (the positive ones' unused): the slopes
    and the stream after them shift."""
    from impl import _random
    from impl._tensor import Tensor
    from impl.nn import _rrelu

    def noise(original: Callable) -> Callable:
        def every(input: Any, lower: float, upper: float, training: bool, generator: Any) -> Any:
            if not training:
                return original(input, lower, upper, training, generator)
            a = input._data
            drawn = (generator or _random.default_generator).uniform(a.size, True).reshape(a.shape)
            slopes = (drawn * (upper - lower) + lower).astype(a.dtype)
            return Tensor._from_array(np.where(a <= 0, slopes, a.dtype.type(1)))

        return every

    with patched(_rrelu, "_noise", noise):
        yield


@fault({"MOD-010": "differs"})
def local_response_norm_sums_squares() -> Iterator[None]:
    """F.local_response_norm scales the window's sum of squares by alpha instead of its mean."""
    from impl.nn import _lrn

    def summed(original: Callable) -> Callable:
        return lambda *args, **kwargs: original(*args, **kwargs, divisor_override=1)

    with patched(_lrn, "avg_pool2d", summed), patched(_lrn, "avg_pool3d", summed):
        yield


@fault({"OPS-006": ": value"})
def unfold_windows_reversed() -> Iterator[None]:
    """Tensor.unfold lays each window out last element first."""
    from impl._ops import unfold

    def windows(original: Callable) -> Callable:
        return lambda *args, **kwargs: original(*args, **kwargs)[..., ::-1]

    with patched(unfold.UNFOLD, "forward", windows):
        yield
