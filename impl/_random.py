"""torch's CPU random stream: an mt19937 seeded like torch's generator, with torch's transforms
(24/53-bit uniforms, Box-Muller normals in blocks of 16 or one at a time with a cached second
sample), so ``manual_seed(s); randn(...)`` gives torch's numbers."""

from __future__ import annotations

import math

import numpy as np

from impl import _api as api

DEFAULT_SEED = 67280421310721


@api.function("Generator")
class Generator:
    """torch.Generator subset for the CPU: seed, manual_seed, initial_seed."""

    def __init__(self, device: str = "cpu") -> None:
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._mt = np.random.MT19937()
        self._mt._legacy_seeding(int(seed) & 0xFFFFFFFF)
        self._next_double_normal: float | None = None
        self._next_float_normal: float | None = None
        return self

    def initial_seed(self) -> int:
        return self._seed

    def random32(self, n: int) -> np.ndarray:
        return self._mt.random_raw(n).astype(np.uint64)

    def random64(self, n: int) -> np.ndarray:
        raw = self.random32(2 * n).reshape(n, 2)
        return (raw[:, 0] << np.uint64(32)) | raw[:, 1]

    def uniform(self, n: int, double: bool) -> np.ndarray:
        """n uniforms in [0, 1) as torch's uniform_real_distribution makes them (float64 values)."""
        if double:
            return (self.random64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0**-53
        return (self.random32(n) & np.uint64((1 << 24) - 1)).astype(np.float64) * 2.0**-24

    def normal_one(self, double: bool) -> float:
        cached = self._next_double_normal if double else self._next_float_normal
        if cached is not None:
            if double:
                self._next_double_normal = None
            else:
                self._next_float_normal = None
            return cached
        u1, u2 = self.uniform(2, double)
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        if double:
            self._next_double_normal = r * math.sin(theta)
        else:
            self._next_float_normal = r * math.sin(theta)
        return r * math.cos(theta)


default_generator = api.public(Generator(), "default_generator")


def uniform(
    shape: tuple, dtype: np.dtype, low: float = 0.0, high: float = 1.0, gen: Generator | None = None
) -> np.ndarray:
    g = gen or default_generator
    n = int(np.prod(shape))
    x = g.uniform(n, np.dtype(dtype) == np.float64)
    return (x * (high - low) + low).astype(dtype).reshape(shape)


def _fill_16(data: np.ndarray, dt: np.dtype) -> None:
    u1 = (dt.type(1) - data[:8]).astype(dt)
    u2 = data[8:16]
    radius = np.sqrt(dt.type(-2) * np.log(u1))
    theta = (2.0 * math.pi * u2.astype(np.float64)).astype(dt) if dt == np.float32 else 2.0 * math.pi * u2
    data[:8], data[8:16] = radius * np.cos(theta), radius * np.sin(theta)


def normal(
    shape: tuple, dtype: np.dtype, mean: float = 0.0, std: float = 1.0, gen: Generator | None = None
) -> np.ndarray:
    g = gen or default_generator
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    double = dt == np.float64
    if n >= 16 and dt in (np.float32, np.float64):
        data = g.uniform(n, double).astype(dt)
        for i in range(0, n - 15, 16):
            _fill_16(data[i : i + 16], dt)
        if n % 16:
            tail = g.uniform(16, double).astype(dt)
            _fill_16(tail, dt)
            data[n - 16 :] = tail
        out = data * dt.type(std) + dt.type(mean)
    else:
        out = np.array([g.normal_one(True) * std + mean for _ in range(n)], dtype=np.float64).astype(dt)
    return out.reshape(shape)


def randint(low: int, high: int, shape: tuple, dtype: np.dtype, gen: Generator | None = None) -> np.ndarray:
    g = gen or default_generator
    n = int(np.prod(shape))
    span = high - low
    raw = g.random64(n) if span >= 2**32 else g.random32(n)
    return ((raw % np.uint64(span)).astype(np.int64) + low).astype(dtype).reshape(shape)
