"""pytest wiring of the benchmarks: engines side by side, timing with pytest-benchmark, and at the
end of the session a table of medians and ratios impl/torch, saved as ``reports/benchmarks.json``.

Run with ``nox -s bench`` (CPU) or ``nox -s bench_gpu`` (cupy vs torch CUDA), or directly:
``pytest benchmarks -m "not gpu" -p no:xdist``. ``--bench-json PATH`` moves the JSON file;
``--bench-threads N`` (default 1) sets the compute threads of every engine (see ``limit_threads``).
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
    document,
    format_scaling,
    format_table,
    pair_rows,
    scaling,
    write_document,
)

DEFAULT_JSON = Path("reports") / "benchmarks.json"
MEASUREMENTS = pytest.StashKey[list[Measurement]]()
SETTINGS = pytest.StashKey[dict[str, Any]]()
UNDER_CONSTRUCTION = ("impl",)  # engines whose failures are reported as skips, not errors
DEVICES = (pytest.param("cpu"), pytest.param("cuda", marks=pytest.mark.gpu))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--bench-json", type=Path, default=None,
                     help=f"where the benchmark results go (default {DEFAULT_JSON} under the rootdir)")
    parser.addoption("--bench-threads", type=int, default=1,
                     help="compute threads for every engine (torch, numpy's BLAS); 0 keeps library defaults")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[MEASUREMENTS] = []
    threads = limit_threads(config.getoption("bench_threads", default=1))
    config.stash[SETTINGS] = {"threads": threads, "load_average": list(os.getloadavg())}


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

    def __init__(self, benchmark: Any, store: list[Measurement]) -> None:
        self.benchmark = benchmark
        self.store = store

    def time(self, name: str, label: str, device: str, build: Callable[[], Callable[[], Any]],
             params: dict[str, Any], rounds: int) -> None:
        """Warm up once, freeze what is alive (see the module's docstring), then time ``rounds``
        calls; record the median under ``label``. Unfrozen afterwards: a frozen object is hidden
        from ``gc.get_objects()`` for the rest of the process."""
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
def recorder(benchmark: Any, pytestconfig: pytest.Config) -> Recorder:
    return Recorder(benchmark, pytestconfig.stash[MEASUREMENTS])


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
        write_document(_json_path(session.config), document(pair_rows(measurements), meta))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    measurements = config.stash.get(MEASUREMENTS, [])
    if not measurements:
        return
    terminalreporter.write_sep("=", "impl vs torch: medians and ratios")
    rows = pair_rows(measurements)
    for line in [*format_table(rows).splitlines(), *format_scaling(scaling(rows)).splitlines()]:
        terminalreporter.write_line(line)
    settings = config.stash.get(SETTINGS, {})
    terminalreporter.write_line(f"threads: {settings.get('threads')}; load average at start: "
                                f"{settings.get('load_average')}")
    terminalreporter.write_line(f"saved: {_json_path(config)}")
