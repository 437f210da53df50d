"""pytest wiring of the benchmarks: engines side by side, timing with pytest-benchmark, and at the
end of the session a table of medians and ratios impl/torch, saved as ``reports/benchmarks.json``.

Run with ``nox -s bench`` (CPU) or ``nox -s bench_gpu`` (cupy vs torch CUDA), or directly:
``pytest benchmarks -m "not gpu" -p no:xdist``. ``--bench-json PATH`` moves the JSON file;
``--bench-threads 1,2`` (the default) times every workload once with each of these compute thread
counts for every engine (see ``limit_threads``; ``0`` keeps the libraries' defaults): each setting
has its rows, named with their thread count, and its ratios.
Benchmarks are not tests: nothing here fails on a time. When impl cannot run a workload yet, the
impl side is skipped with the error that stopped it (the missing feature), and torch still runs.

Python's cycle collector: before each workload is timed, everything alive is collected and then
frozen (``gc.freeze``): the modules of torch, HIPS autograd, pytest and hypothesis, which no user
of one engine alone carries (with those imported, 172,600 objects; a full collection over them took
124 ms on the 2-core development machine). Unfrozen, the full collections that an engine's own
objects trigger would walk them all, charging the harness's heap to whichever engine allocates,
and by chance: at N=1e4 a W1 round triggers one in about six rounds (the median skips it), at
N=1e5 two in every round. The collector still runs, and is timed, over everything the workload
itself creates.
"""

from __future__ import annotations

import gc
import importlib.metadata
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.engines import Engine, EngineUnavailable, limit_threads, load_engine
from benchmarks.results import (
    Measurement,
    by_threads,
    document,
    format_scaling,
    format_table,
    pair_rows,
    scaling,
    write_document,
)

DEFAULT_JSON = Path("reports") / "benchmarks.json"
DEFAULT_THREADS = "1,2"
MEASUREMENTS = pytest.StashKey[list[Measurement]]()
SETTINGS = pytest.StashKey[dict[str, Any]]()
UNDER_CONSTRUCTION = ("impl",)  # engines whose failures are reported as skips, not errors
DEVICES = (pytest.param("cpu"), pytest.param("cuda", marks=pytest.mark.gpu))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--bench-json", type=Path, default=None,
                     help=f"where the benchmark results go (default {DEFAULT_JSON} under the rootdir)")
    parser.addoption("--bench-threads", type=thread_counts, default=DEFAULT_THREADS,
                     help="comma-separated compute thread counts for every engine (torch, numpy's BLAS), "
                          f"each timed in turn (default {DEFAULT_THREADS}); 0 keeps library defaults")


def thread_counts(text: str) -> tuple[int, ...]:
    """``"1,2"`` -> (1, 2): the thread settings to time every workload with."""
    counts = tuple(dict.fromkeys(int(part) for part in str(text).split(",") if part.strip()))
    if not counts or any(count < 0 for count in counts) or (0 in counts and len(counts) > 1):
        raise ValueError(f"thread counts are positive integers, or 0 alone: {text!r}")
    return counts


def _counts(config: pytest.Config) -> tuple[int, ...]:
    chosen = config.getoption("bench_threads", default=DEFAULT_THREADS)
    return chosen if isinstance(chosen, tuple) else thread_counts(chosen)


def pytest_configure(config: pytest.Config) -> None:
    config.stash[MEASUREMENTS] = []
    counts = _counts(config)
    pools = {count: limit_threads(count) for count in reversed(counts)}  # the first one stays in effect
    config.stash[SETTINGS] = {"threads": list(counts), "thread_pools": {str(k): v for k, v in pools.items()},
                              "timer": _timer_name(config), "load_average": list(os.getloadavg())}


def _timer_name(config: pytest.Config) -> str:
    """pytest-benchmark's clock (``--benchmark-timer``): wall time unless a CPU clock was asked for
    (``time.process_time``: on a shared machine, what other processes take is not counted)."""
    timer = config.getoption("benchmark_timer", default=None)
    return getattr(timer, "__name__", None) or str(timer or "time.perf_counter")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every timed benchmark (one using ``recorder``) once per thread setting."""
    if "bench_threads" in metafunc.fixturenames:
        counts = _counts(metafunc.config)
        metafunc.parametrize("bench_threads", counts, indirect=True, ids=[f"threads{n}" for n in counts])


@pytest.fixture
def bench_threads(request: pytest.FixtureRequest) -> int:
    """This benchmark's compute threads per engine, put in effect (0: the libraries' defaults)."""
    count = getattr(request, "param", 0)
    limit_threads(count)
    return count


def engine_or_skip(name: str, device: str) -> Engine:
    """The engine, or a skip saying why it cannot run here (no GPU, CPU-only torch, no autograd)."""
    try:
        return load_engine(name, device)
    except EngineUnavailable as exc:
        pytest.skip(f"{name} on {device}: {exc}")


def ready_or_skip(label: str, workload: str, build: Callable[[], Callable[[], Any]]) -> Callable[[], Any]:
    """Build the timed callable and run it once (the warm-up). An engine under construction that
    cannot run the workload yet is skipped with the error it raised; any other engine's error is a
    real failure."""
    try:
        fn = build()
        fn()
    except Exception as exc:
        if label not in UNDER_CONSTRUCTION:
            raise
        pytest.skip(f"{label} cannot run {workload} yet: {type(exc).__name__}: {exc}")
    return fn


class Recorder:
    """Times a workload with pytest-benchmark and keeps its median for the session table."""

    def __init__(self, benchmark: Any, store: list[Measurement], threads: int = 0) -> None:
        self.benchmark = benchmark
        self.store = store
        self.threads = threads

    def time(self, name: str, label: str, device: str, build: Callable[[], Callable[[], Any]],
             params: dict[str, Any], rounds: int) -> None:
        """Warm up once, freeze what is alive (see the module's docstring), then time ``rounds``
        calls; record the median under ``label``. Unfrozen afterwards: a frozen object is hidden
        from ``gc.get_objects()`` for the rest of the process. Under a thread setting, the name
        and the params say it."""
        if self.threads:
            name = f"{name} ({self.threads} thread{'s' if self.threads > 1 else ''})"
            params = {**params, "threads": self.threads}
        fn = ready_or_skip(label, name, build)
        gc.collect()
        gc.freeze()
        self.benchmark.group = f"{name} [{device}]"
        self.benchmark.extra_info.update(params)
        try:
            self.benchmark.pedantic(fn, rounds=rounds, iterations=1, warmup_rounds=0)
        finally:
            gc.unfreeze()
        stats = getattr(self.benchmark, "stats", None)
        if self.benchmark.enabled and stats is not None:
            self.store.append(Measurement(name, device, label, float(stats.stats.median), "s", params,
                                          iqr=float(stats.stats.iqr)))

    def value(self, measurement: Measurement) -> None:
        """Record a quantity that is not a time (memory)."""
        self.store.append(measurement)


@pytest.fixture
def recorder(benchmark: Any, pytestconfig: pytest.Config, bench_threads: int) -> Recorder:
    return Recorder(benchmark, pytestconfig.stash[MEASUREMENTS], bench_threads)


@pytest.fixture
def values(pytestconfig: pytest.Config) -> Recorder:
    """A recorder for non-timing measurements (no pytest-benchmark fixture involved)."""
    return Recorder(None, pytestconfig.stash[MEASUREMENTS])


def versions() -> dict[str, str]:
    """Versions of what was compared: torch, numpy, and the peers that were importable."""
    found = {"numpy": np.__version__}
    for name in ("torch", "autograd", "cupy"):
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    try:
        import torch

        found["torch"] = torch.__version__
    except ImportError:
        pass
    return found


def _json_path(config: pytest.Config) -> Path:
    chosen = config.getoption("bench_json", default=None)
    return Path(chosen) if chosen else Path(config.rootpath) / DEFAULT_JSON


def pytest_sessionfinish(session: pytest.Session) -> None:
    measurements = session.config.stash.get(MEASUREMENTS, [])
    if measurements:
        meta = {**versions(), **session.config.stash.get(SETTINGS, {})}
        write_document(_json_path(session.config), document(by_threads(pair_rows(measurements)), meta))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    measurements = config.stash.get(MEASUREMENTS, [])
    if not measurements:
        return
    terminalreporter.write_sep("=", "impl vs torch: medians and ratios")
    rows = by_threads(pair_rows(measurements))
    for line in [*format_table(rows).splitlines(), *format_scaling(scaling(rows)).splitlines()]:
        terminalreporter.write_line(line)
    settings = config.stash.get(SETTINGS, {})
    terminalreporter.write_line(f"timer: {settings.get('timer')}; threads per engine: "
                                f"{settings.get('threads')} (in effect: {settings.get('thread_pools')}); "
                                "load average at start: "
                                f"{settings.get('load_average')}")
    terminalreporter.write_line(f"saved: {_json_path(config)}")
