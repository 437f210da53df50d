"""Planted faults of the nn breadth of issue 22 (3-D convolution, pooling and normalisation
layers ...), rules MOD-*."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from impl_faults import fault, patched

# One fault breaking each of issue 22's additions at once, so that their rules share one planted
# session (a session costs seconds of CI to start, whatever it checks); each part is a fault a
# rule's new clause must catch on its own.


@fault({"MOD-006": ": value", "MOD-009": "value", "MOD-010": "differs", "MOD-020": ": value",
        "MOD-012": ": value", "OPS-006": ": value"})
def conv3d_avg_pool3d_instance_norm3d_max_unpool_rrelu_unfold_broken() -> Iterator[None]:
    """impl's 3-D layers mishandle the depth axis: the window taps of a 3-D convolution or pooling
    pair each kernel depth slice with the input slices of the mirrored one (kD - 1 - i: a kernel
    read reversed in depth, a max pool's indices of the mirrored taps); avg_pool3d divides by a
    window's height and width only; InstanceNorm3d normalises each depth slice on its own;
    max_unpool3d writes its output volume reversed in depth. And RReLU, local_response_norm and
    Tensor.unfold get their draws or windows wrong (``_draws_and_windows_wrong``)."""
    from impl.nn import _conv, _pool
    from impl.nn import functional as F
    from impl.nn.modules.normalization import InstanceNorm3d

    def taps(original: Callable) -> Callable:
        def reversed_depth(input_shape: tuple, kernel: tuple, out_size: tuple, p: Any) -> Iterator[tuple]:
            for tap, outs, ins in original(input_shape, kernel, out_size, p):
                yield ((kernel[0] - 1 - tap[0], *tap[1:]) if len(kernel) == 3 else tap), outs, ins

        return reversed_depth

    def divisors(original: Callable) -> Callable:
        def plane_only(size: tuple, k: tuple, s: tuple, p: tuple, out: tuple, *rest: Any) -> Any:
            if len(size) != 3:
                return original(size, k, s, p, out, *rest)
            return np.broadcast_to(original(size[1:], k[1:], s[1:], p[1:], out[1:], *rest), out)

        return plane_only

    def norm(self: InstanceNorm3d, input: Any) -> Any:
        n, c, d, h, w = input.shape
        planes = input.transpose(1, 2).reshape(n * d, c, h, w)
        use_input_stats = self.training or not self.track_running_stats
        out = F.instance_norm(planes, self.running_mean, self.running_var, self.weight, self.bias,
                              use_input_stats, self.momentum or 0.0, self.eps)
        return out.reshape(n, d, c, h, w).transpose(1, 2)

    def unpool(original: Callable) -> Callable:
        def flipped(xp: Any, a: Any, indices: Any, out_hw: tuple) -> Any:
            out = original(xp, a, indices, out_hw)
            return out[..., ::-1, :, :] if len(out_hw) == 3 else out

        return flipped

    with patched(_conv, "_taps", taps), patched(_pool, "_avg_divisors", divisors), \
            patched(InstanceNorm3d, "_instance_norm", lambda _orig: norm), \
            patched(_pool.MAX_UNPOOL3D, "forward", unpool), _draws_and_windows_wrong():
        yield


@contextmanager
def _draws_and_windows_wrong() -> Iterator[None]:
    """Three of issue 22's functions get their windows or draws wrong: RReLU in training draws a
    slope for every element (the positive ones' unused: the slopes and the stream after them
    shift); F.local_response_norm scales the window's sum of squares by alpha instead of its mean;
    Tensor.unfold lays each window out last element first."""
    from impl import _random
    from impl._ops import unfold
    from impl._tensor import Tensor
    from impl.nn import _lrn, _rrelu

    def noise(original: Callable) -> Callable:
        def every(input: Any, lower: float, upper: float, training: bool, generator: Any) -> Any:
            if not training:
                return original(input, lower, upper, training, generator)
            a = input._data
            drawn = (generator or _random.default_generator).uniform(a.size, True).reshape(a.shape)
            slopes = (drawn * (upper - lower) + lower).astype(a.dtype)
            return Tensor._from_array(np.where(a <= 0, slopes, a.dtype.type(1)))

        return every

    def summed(original: Callable) -> Callable:
        return lambda *args, **kwargs: original(*args, **kwargs, divisor_override=1)

    def windows(original: Callable) -> Callable:
        return lambda *args, **kwargs: original(*args, **kwargs)[..., ::-1]

    with patched(_rrelu, "_noise", noise), patched(_lrn, "avg_pool2d", summed), \
            patched(_lrn, "avg_pool3d", summed), patched(unfold.UNFOLD, "forward", windows):
        yield
