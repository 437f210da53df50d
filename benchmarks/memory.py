"""W5 memory, measured in a fresh process per engine so one engine's caches never count for another.

- ``peak``: the resident-memory peak of one forward + backward of the W2 MLP (after one warm-up
  step), above the resident memory just before it. Linux lets a process reset its peak
  (``/proc/self/clear_refs``), so the same measure serves impl and torch; for impl, whose arrays
  numpy reports to ``tracemalloc``, the traced peak is given too.
- ``growth``: resident memory after 1,000 training steps minus after the first 10, each read after
  a full garbage collection (a leak of saved tensors or graphs shows as steady growth; allocator
  caches do not). For impl the ``tracemalloc`` growth is given too. Also counted: the objects a
  step leaves to the cycle collector (graphs that reference counting alone cannot free stay
  alive until a collection runs, and collections over many live objects cost time).

Run as ``python -m benchmarks.memory peak|growth impl|torch``; prints one JSON object.
"""

from __future__ import annotations

import ctypes
import gc
import json
import sys
import tracemalloc
from pathlib import Path
from typing import Any

from benchmarks import workloads
from benchmarks.engines import load_engine

GROWTH_STEPS, GROWTH_WARMUP = 1000, 10
GROWTH_MLP = {"sizes": (784, 128, 10), "batch": 64}  # small: the point is leaks, not arithmetic
STATUS = Path("/proc/self/status")
CLEAR_REFS = Path("/proc/self/clear_refs")
MIB = 2**20
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc mallopt parameters
MMAP_THRESHOLD = 64 * 1024


def _honest_malloc() -> None:
    """Make glibc map every block of 64 KiB or more on its own and unmap it when freed, so that
    resident memory follows the bytes live (by default freed arrays stay resident for reuse, and
    a peak above the baseline would read as zero for whichever engine ran a warm-up)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return  # not glibc: resident memory is then only an upper bound
    libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    libc.mallopt(M_TRIM_THRESHOLD, MMAP_THRESHOLD)


def _status_kib(field: str) -> int | None:
    """A memory line of /proc/self/status in KiB (VmRSS, VmHWM), or None off Linux."""
    try:
        for line in STATUS.read_text(encoding="utf-8").splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak_rss() -> bool:
    """Set the process's resident-memory peak (VmHWM) to its current size; False if not allowed."""
    try:
        CLEAR_REFS.write_text("5", encoding="ascii")
    except OSError:
        return False
    return True


def peak(engine_name: str) -> dict[str, Any]:
    """Peak memory (MiB) of one forward + backward of the W2 MLP, above what was live before."""
    engine = load_engine(engine_name)
    fwd_bwd = workloads.mlp_step(engine, **workloads.MLP_CPU, optimize=False)
    fwd_bwd()  # warm-up: lazy initialisation and first .grad buffers are not the steady state
    traced = engine_name == "impl"
    if traced:
        tracemalloc.start()
    before = _status_kib("VmRSS")
    resettable = _reset_peak_rss()
    fwd_bwd()
    result: dict[str, Any] = {"engine": engine_name}
    high = _status_kib("VmHWM")
    result["peak_rss_mib"] = (high - before) / 1024 if resettable and high and before else None
    if traced:
        current, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        result["peak_traced_mib"] = top / MIB
        result["live_after_traced_mib"] = current / MIB
    return result


def growth(engine_name: str) -> dict[str, Any]:
    """Memory growth (KiB) between step ``GROWTH_WARMUP`` and step ``GROWTH_STEPS`` of training."""
    engine = load_engine(engine_name)
    step = workloads.mlp_step(engine, **GROWTH_MLP)
    traced = engine_name == "impl"
    if traced:
        tracemalloc.start()
    for _ in range(GROWTH_WARMUP):
        step()
    gc.collect()
    rss_start = _status_kib("VmRSS")
    traced_start = tracemalloc.get_traced_memory()[0] if traced else 0
    for _ in range(GROWTH_STEPS - GROWTH_WARMUP):
        step()
    gc.collect()
    rss_end = _status_kib("VmRSS")
    result: dict[str, Any] = {
        "engine": engine_name,
        "steps": GROWTH_STEPS,
        "rss_growth_kib": rss_end - rss_start if rss_start is not None and rss_end is not None else None,
        "cyclic_garbage_per_step": _cyclic_garbage(step),
    }
    if traced:
        result["traced_growth_kib"] = (tracemalloc.get_traced_memory()[0] - traced_start) / 1024
        tracemalloc.stop()
    return result


def _cyclic_garbage(step: Any) -> int:
    """Objects one step leaves that only the cycle collector frees (0 when reference counting
    releases everything, as it does for torch's graph)."""
    gc.collect()
    gc.disable()
    try:
        step()
        return gc.collect()
    finally:
        gc.enable()


def main(argv: list[str]) -> int:
    kinds = {"peak": peak, "growth": growth}
    if len(argv) != 2 or argv[0] not in kinds:
        print(f"usage: python -m benchmarks.memory {'|'.join(kinds)} impl|torch", file=sys.stderr)
        return 2
    _honest_malloc()
    print(json.dumps(kinds[argv[0]](argv[1])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
