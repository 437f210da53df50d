"""torch's CPU random stream: an mt19937 seeded like torch's generator, with torch's transforms
(24/53-bit uniforms, Box-Muller normals in blocks of 16 or one at a time with a cached second
sample, the modulo integers, the Fisher-Yates permutation, exponentials, multinomial draws), so
``manual_seed(s); randn(...)`` gives torch's numbers."""

from __future__ import annotations

import math
import secrets
import struct
from typing import Any, ClassVar

import numpy as np

from impl import _api as api
from impl import _avx_mathfun, dtypes
from impl._xp import cuda_available, device

DEFAULT_SEED = 67280421310721
MT_N = 624
# torch's CPUGeneratorImplState: the legacy POD (seed, left, seeded, next, state[624] as uint64,
# normal_x, normal_y, normal_rho, normal_is_valid; padded to 5048 bytes), then the cached float
# normal and its flag (padded to 5056 bytes)
_POD_HEAD = "<QiiQ"
_POD_NORMAL = "<dddi"
_NORMAL_AT = struct.calcsize(_POD_HEAD) + 8 * MT_N
_FLOAT_AT = 5048
STATE_SIZE = 5056
# randperm draws 32-bit numbers below this n, 64-bit ones (the inside-out shuffle) from it on
RANDPERM_SMALL_N = (2**32 - 1) // 20


@api.function("Generator")
class Generator:
    """torch.Generator for the CPU: seeds, the state as torch's 5056 bytes, and the draws of
    torch's mt19937 (with the cached second Box-Muller samples)."""

    # how a state comes and goes as a ByteTensor: set by impl._creation (the Tensor is above here)
    _state_tensor: ClassVar[Any] = None
    _state_bytes: ClassVar[Any] = None

    def __init__(self, device: Any = "cpu") -> None:
        self._device = _generator_device(device)
        self.manual_seed(DEFAULT_SEED)

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {hex(id(self))}>"

    @property
    def device(self) -> device:
        return self._device

    def manual_seed(self, seed: Any) -> Generator:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        if not -(2**63) <= seed < 2**64:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed % 2**64
        self._mt = np.random.MT19937()
        self._mt._legacy_seeding(self._seed & 0xFFFFFFFF)
        self._fresh = True  # seeded, nothing drawn: torch's next is 0 (624 after a whole round)
        self._next_double_normal: float | None = None
        self._next_float_normal: float | None = None
        return self

    def seed(self) -> int:
        """Seed from the system's entropy, as torch's ``Generator.seed``; return the seed."""
        seed = secrets.randbits(64)
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Any:
        """The state as torch's ByteTensor of 5056 bytes (loadable by torch's set_state too)."""
        return Generator._state_tensor(self.state_bytes())

    def set_state(self, new_state: Any) -> Generator:
        self.load_state_bytes(Generator._state_bytes(new_state))
        return self

    def state_bytes(self) -> np.ndarray:
        mt = self._mt.state["state"]
        pos = int(mt["pos"])
        nxt = 0 if self._fresh else pos
        buf = bytearray(STATE_SIZE)
        struct.pack_into(_POD_HEAD, buf, 0, self._seed, MT_N + 1 - pos if pos < MT_N else 1, 1, nxt)
        buf[struct.calcsize(_POD_HEAD) : _NORMAL_AT] = mt["key"].astype("<u8").tobytes()
        double = self._next_double_normal
        struct.pack_into(_POD_NORMAL, buf, _NORMAL_AT, 0.0, double or 0.0, 0.0, double is not None)
        single = self._next_float_normal
        struct.pack_into("<f?", buf, _FLOAT_AT, single or 0.0, single is not None)
        return np.frombuffer(bytes(buf), dtype=np.uint8).copy()

    def load_state_bytes(self, data: np.ndarray) -> None:
        if data.size != STATE_SIZE:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found the input RNG state "
                f"size to be {data.size}"
            )
        buf = data.tobytes()
        seed, left, seeded, nxt = struct.unpack_from(_POD_HEAD, buf, 0)
        if not (seeded == 1 and 0 < left <= MT_N and nxt <= MT_N):
            raise RuntimeError("Invalid mt19937 state")
        key = np.frombuffer(buf[struct.calcsize(_POD_HEAD) : _NORMAL_AT], dtype="<u8").astype(np.uint32)
        _, normal_y, _, normal_valid = struct.unpack_from(_POD_NORMAL, buf, _NORMAL_AT)
        single, single_valid = struct.unpack_from("<f?", buf, _FLOAT_AT)
        self._seed = seed
        self._mt = np.random.MT19937()
        # torch twists when ``left`` runs out; numpy when ``pos`` reaches 624
        self._mt.state = {
            "bit_generator": "MT19937",
            "state": {"key": key, "pos": MT_N if left == 1 else nxt},
        }
        self._fresh = left == 1 and nxt == 0
        self._next_double_normal = normal_y if normal_valid else None
        self._next_float_normal = single if single_valid else None

    def random32(self, n: int) -> np.ndarray:
        if draw_guards and draw_guards[-1] is not None:
            draw_guards[-1]()  # torch.func.vmap's randomness="error"
        if n:
            self._fresh = False
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


# what runs before every draw, innermost last (None: draws allowed); torch.func.vmap fills it
draw_guards: list = []

_NO_CUDA = (
    "Cannot get CUDA generator without ATen_cuda library. PyTorch splits its backend into two shared "
    "libraries: a CPU library and a CUDA library; this error has occurred because you are trying to use "
    "some CUDA functionality, but the CUDA library has not been loaded by the dynamic linker for some "
    "reason.  The CUDA library MUST be loaded, EVEN IF you don't directly use any symbols from the CUDA "
    "library! One common culprit is a lack of -Wl,--no-as-needed in your link arguments; many dynamic "
    "linkers will delete dynamic library dependencies if you don't depend on any of their symbols.  You "
    "can check if this has occurred by using ldd on your binary to see if there is a dependency on "
    "*_cuda.so library."
)


def _generator_device(dev: Any) -> device:
    """The generator's device. A 'cuda' one draws from the CPU stream, as impl's 'cuda' tensors
    do (torch's Philox stream is not reproduced); without CUDA it is refused with torch's error."""
    if isinstance(dev, str) and dev.split(":")[0] not in ("cpu", "cuda"):
        raise RuntimeError(f"{dev.split(':')[0].upper()} device type not an accelerator.")
    d = dev if isinstance(dev, device) else device(dev)
    if d.type == "cuda" and not cuda_available():
        raise RuntimeError(_NO_CUDA)
    return d


default_generator = api.public(Generator(), "default_generator")


def fma(a: np.ndarray, b: Any, c: Any) -> np.ndarray:
    """``a * b + c`` with one rounding (torch's kernels fuse them): float32 through float64 rounded
    to odd; float64 from the exact product (Veltkamp/Dekker) and the exact sum's error terms."""
    a = np.asarray(a)
    if a.dtype != np.float64:
        return _avx_mathfun.fma32(a, b, c)
    b, c = np.float64(b), np.float64(c)
    p = a * b
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    product_error = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    total = p + c
    back = total - p
    sum_error = (p - (total - back)) + (c - back)
    return total + (sum_error + product_error)


def _split(a: Any) -> tuple:
    scaled = a * 134217729.0  # 2**27 + 1
    hi = scaled - (scaled - a)
    return hi, a - hi


def _is_float(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt == dtypes.bfloat16.np


def _opmath(dt: np.dtype) -> np.dtype:
    """The type torch computes a dtype's random numbers in (float for the 16-bit floats)."""
    return np.dtype(np.float64) if dt == np.float64 else np.dtype(np.float32)


def uniform(
    shape: tuple, dtype: np.dtype, low: float = 0.0, high: float = 1.0, gen: Generator | None = None
) -> np.ndarray:
    """torch's uniform_(low, high): ``fma(u, high - low, low)`` in the dtype's opmath type, a
    value that the cast rounds up to ``high`` taken as ``low``."""
    g = gen or default_generator
    dt = np.dtype(dtype)
    op = _opmath(dt)
    n = int(np.prod(shape))
    u = g.uniform(n, op == np.float64).astype(op)
    lo, hi = op.type(low), op.type(high)
    out = fma(u, op.type(hi - lo), lo).astype(dt)
    out[out == dt.type(high)] = dt.type(low)
    return out.reshape(shape)


def _fill_16(data: np.ndarray, dt: np.dtype, mean: float, std: float) -> None:
    u1 = (dt.type(1) - data[:8]).astype(dt)
    u2 = data[8:16]
    radius = np.sqrt(dt.type(-2) * np.log(u1))
    theta = (2.0 * math.pi * u2.astype(np.float64)).astype(dt) if dt == np.float32 else 2.0 * math.pi * u2
    data[:8] = fma(radius * np.cos(theta), dt.type(std), dt.type(mean))
    data[8:16] = fma(radius * np.sin(theta), dt.type(std), dt.type(mean))


def normal(
    shape: tuple, dtype: np.dtype, mean: float = 0.0, std: float = 1.0, gen: Generator | None = None
) -> np.ndarray:
    """torch's normal_(mean, std): 16 at a time (the last 16 redrawn) from 16 elements on (float32
    by torch's AVX2 block, impl._avx_mathfun), else one double at a time (``fma(normal, std,
    mean)``, cast)."""
    g = gen or default_generator
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    if n >= 16 and dt == np.float32:
        data = g.uniform(n, False).astype(dt)
        whole = n - n % 16
        data[:whole] = _avx_mathfun.normal_fill_16(data[:whole].reshape(-1, 16), mean, std).reshape(-1)
        if n % 16:
            tail = g.uniform(16, False).astype(dt).reshape(1, 16)
            data[n - 16 :] = _avx_mathfun.normal_fill_16(tail, mean, std).reshape(-1)
        out = data
    elif n >= 16:
        op = _opmath(dt)
        double = op == np.float64
        # float64 draws every uniform first; float16/bfloat16 one 16-block of float uniforms at a
        # time (a buffer of the opmath type), so the last block's draws follow the whole blocks'
        drawn = n if op == dt else n - n % 16
        data = np.zeros(n, op)
        data[:drawn] = g.uniform(drawn, double).astype(op)
        for i in range(0, n - 15, 16):
            _fill_16(data[i : i + 16], op, mean, std)
        if n % 16:
            tail = g.uniform(16, double).astype(op)
            _fill_16(tail, op, mean, std)
            data[n - 16 :] = tail
        out = data.astype(dt)
    else:
        # normal_distribution<double>'s ``ret * stdv + mean``, which torch's build fuses
        standard = np.array([g.normal_one(True) for _ in range(n)], dtype=np.float64)
        out = fma(standard, np.float64(std), np.float64(mean)).astype(dt)
    return out.reshape(shape)


def randint(low: int, high: int, shape: tuple, dtype: np.dtype, gen: Generator | None = None) -> np.ndarray:
    """torch's random_(low, high): a 32-bit draw modulo the range (a 64-bit one for a range of 2**28
    or more, torch's bound on the modulo's skew), plus ``low``."""
    g = gen or default_generator
    n = int(np.prod(shape))
    span = high - low
    raw = g.random64(n) if span >= 2**28 else g.random32(n)
    return ((raw % np.uint64(span)).astype(np.int64) + low).astype(dtype).reshape(shape)


def random_full(shape: tuple, dtype: np.dtype, gen: Generator | None = None) -> np.ndarray:
    """torch's random_() without bounds: [0, 2**digits] for a floating dtype, [0, max] for an
    integer one (64-bit draws for int64 and float64), the low bit for bool."""
    g = gen or default_generator
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    wide = dt in (np.float64, np.int64)
    raw = g.random64(n) if wide else g.random32(n)
    if dt == np.bool_:
        return (raw & np.uint64(1)).astype(dt).reshape(shape)
    if _is_float(dt):
        digits = 8 if dt == dtypes.bfloat16.np else {2: 11, 4: 24, 8: 53}[dt.itemsize]
        bound = (1 << digits) + 1
    else:
        bound = int(np.iinfo(dt).max) + 1
    return (raw % np.uint64(bound)).astype(dt).reshape(shape)


def exponential(
    shape: tuple, dtype: np.dtype, lambd: float = 1.0, gen: Generator | None = None
) -> np.ndarray:
    """torch's exponential_(lambd): ``-1 / lambd * log1p(-u)`` of a double uniform, cast."""
    g = gen or default_generator
    u = g.uniform(int(np.prod(shape)), True)
    # the C library's log1p, as torch's (numpy's own differs in the last bit for 7% of values)
    logs = np.fromiter((math.log1p(-x) for x in u.tolist()), dtype=np.float64, count=u.size)
    return (-1.0 / lambd * logs).astype(dtype).reshape(shape)


def cauchy(
    shape: tuple, dtype: np.dtype, median: float = 0.0, sigma: float = 1.0, gen: Generator | None = None
) -> np.ndarray:
    """torch's cauchy_(median, sigma): ``median + sigma * tan(pi * (u - 0.5))`` of a double uniform
    (the C library's tan), cast."""
    g = gen or default_generator
    u = g.uniform(int(np.prod(shape)), True)
    tans = np.fromiter((math.tan(math.pi * (x - 0.5)) for x in u.tolist()), dtype=np.float64, count=u.size)
    return (median + sigma * tans).astype(dtype).reshape(shape)


def log_normal(
    shape: tuple, dtype: np.dtype, mean: float = 1.0, std: float = 2.0, gen: Generator | None = None
) -> np.ndarray:
    """torch's log_normal_(mean, std): the C library's exp of normal_distribution<double>'s
    ``normal * std + mean`` (fused), one double normal at a time, cast."""
    g = gen or default_generator
    n = int(np.prod(shape))
    standard = np.array([g.normal_one(True) for _ in range(n)], dtype=np.float64)
    logs = fma(standard, np.float64(std), np.float64(mean)).tolist()
    return np.fromiter((math.exp(x) for x in logs), dtype=np.float64, count=n).astype(dtype).reshape(shape)


def geometric(shape: tuple, dtype: np.dtype, p: float, gen: Generator | None = None) -> np.ndarray:
    """torch's geometric_(p): ``ceil(log(u) / log1p(-p))`` of a double uniform (the C library's
    log and log1p), cast."""
    g = gen or default_generator
    u = g.uniform(int(np.prod(shape)), True)
    d = math.log1p(-p)
    counts = [math.ceil(math.log(x) / d) if x else math.inf for x in u.tolist()]
    return np.array(counts, dtype=np.float64).astype(dtype).reshape(shape)


def bernoulli(p: np.ndarray, dtype: np.dtype, gen: Generator | None = None) -> np.ndarray:
    """torch's bernoulli of probabilities ``p`` (one draw each, in order): ``u < p`` with a double
    uniform for double ``p``, a float one (24 bits) otherwise."""
    g = gen or default_generator
    double = p.dtype == np.float64
    u = g.uniform(p.size, double).astype(np.float64 if double else np.float32)
    return (u < p.reshape(-1).astype(u.dtype)).astype(dtype).reshape(p.shape)


def randperm(n: int, gen: Generator | None = None) -> np.ndarray:
    """torch's randperm(n) on the CPU: below RANDPERM_SMALL_N, the swap shuffle of 0..n-1 with
    32-bit draws modulo n - i; from it on, the inside-out shuffle with 64-bit draws modulo i + 1."""
    g = gen or default_generator
    if n < RANDPERM_SMALL_N:
        perm = np.arange(n, dtype=np.int64)
        draws = g.random32(max(n - 1, 0))
        for i, z in enumerate((draws % np.arange(n, 1, -1, dtype=np.uint64)).tolist()):
            perm[i], perm[i + z] = perm[i + z], perm[i]
        return perm
    perm = np.empty(n, dtype=np.int64)
    draws = g.random64(n) % np.arange(1, n + 1, dtype=np.uint64)
    for i, z in enumerate(draws.tolist()):
        perm[i] = perm[z]
        perm[z] = i
    return perm


def multinomial_with_replacement(
    probs: np.ndarray, n_sample: int, gen: Generator | None = None
) -> np.ndarray:
    """torch's multinomial with replacement on the CPU: per row, the running sum in the dtype (float
    for 16-bit floats) divided by the total, the last bucket set to 1, then per sample a double
    uniform placed by binary search (the first bucket not below it)."""
    g = gen or default_generator
    rows = probs.reshape(-1, probs.shape[-1])
    acc = _opmath(rows.dtype) if rows.dtype != np.float64 else np.dtype(np.float64)
    out = np.empty((rows.shape[0], n_sample), dtype=np.int64)
    for r, row in enumerate(rows.astype(acc)):
        if (row < 0).any():
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not np.isfinite(row).all():
            raise RuntimeError(
                "invalid multinomial distribution (encountering probability entry = infinity or NaN)"
            )
        cumulative = np.add.accumulate(row, dtype=acc)
        total = cumulative[-1]
        if not total > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        cumulative = (cumulative / total).astype(acc)
        cumulative[-1] = 1
        u = g.uniform(n_sample, True)
        out[r] = np.searchsorted(cumulative.astype(np.float64), u, side="left")
    return out.reshape(*probs.shape[:-1], n_sample)
