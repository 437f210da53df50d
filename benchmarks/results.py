"""Benchmark results: measurements -> side-by-side rows (impl vs torch) -> table and JSON.

Each benchmark records one ``Measurement`` per engine (impl, torch, and peers such as HIPS
``autograd``). ``pair_rows`` groups the measurements of one workload (same name, device and
parameters) into a row holding the impl and torch medians and their ratio; ``format_table`` prints
the rows, ``write_document`` saves them as ``reports/benchmarks.json``, the file ``oracle.report``
reads (its ``results`` rows: name, device, impl, torch, ratio). Kept free of pytest so the
self-tests in ``tests/oracle/test_benchmarks_harness.py`` can check it without timing anything.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAIN_ENGINES = ("impl", "torch")


@dataclass(frozen=True)
class Measurement:
    """One engine's result on one workload: a median time in seconds, or another quantity whose
    unit is named (memory benchmarks record MiB)."""

    name: str
    device: str
    engine: str
    value: float
    unit: str = "s"
    params: dict[str, Any] = field(default_factory=dict)
    comparable: bool = True  # False where impl/torch means nothing (e.g. growths near zero)
    iqr: float | None = None  # interquartile range of the timed rounds: how noisy the median is

    def key(self) -> tuple[str, str, str]:
        """What makes measurements of different engines comparable: workload, device, params."""
        return self.name, self.device, json.dumps(self.params, sort_keys=True, default=str)


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator``, or None when either is missing or the denominator is not > 0
    (a ratio of memory growths near zero means nothing)."""
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


def pair_rows(measurements: list[Measurement]) -> list[dict[str, Any]]:
    """One row per workload, in the order workloads were first measured.

    A row has ``name, device, unit, impl, torch, ratio`` (impl/torch) and ``params``; engines other
    than impl and torch go under ``peers`` with ``impl / peer`` under ``peer_ratios``; ``iqr`` holds
    each timed engine's interquartile range (the noise behind the median). When the
    params name ``items`` (work items per timed call, e.g. programs checked), ``per_second`` gives
    each engine's throughput. When they name a ``baseline`` engine (W4: the check in process),
    ``baseline_ratios`` gives every other engine's value over the baseline's.
    """
    grouped: dict[tuple[str, str, str], list[Measurement]] = {}
    for m in measurements:
        grouped.setdefault(m.key(), []).append(m)
    rows = []
    for group in grouped.values():
        first = group[0]
        units = {m.unit for m in group}
        if len(units) > 1:
            raise ValueError(f"{first.name} [{first.device}]: engines measured in different units {units}")
        values = {m.engine: m.value for m in group}  # a re-measured engine: the last one counts
        impl, torch = values.get("impl"), values.get("torch")
        row: dict[str, Any] = {
            "name": first.name,
            "device": first.device,
            "unit": first.unit,
            "impl": impl,
            "torch": torch,
            "ratio": ratio(impl, torch) if first.comparable else None,
            "params": dict(first.params),
        }
        peers = {engine: value for engine, value in values.items() if engine not in MAIN_ENGINES}
        if peers:
            row["peers"] = peers
            row["peer_ratios"] = {engine: ratio(impl, value) for engine, value in peers.items()}
        spreads = {m.engine: m.iqr for m in group if m.iqr is not None}
        if spreads:
            row["iqr"] = spreads
        baseline = first.params.get("baseline")
        if isinstance(baseline, str) and baseline in values:
            row["baseline_ratios"] = {engine: ratio(value, values[baseline])
                                      for engine, value in values.items() if engine != baseline}
        items = first.params.get("items")
        if first.unit == "s" and isinstance(items, (int, float)) and items > 0:
            row["per_second"] = {engine: items / value for engine, value in values.items() if value > 0}
        rows.append(row)
    return rows


def _cell(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "s":
        return f"{value * 1e3:.3f} ms" if value < 1 else f"{value:.3f} s"
    return f"{value:.4g} {unit}"


def format_table(rows: list[dict[str, Any]]) -> str:
    """The rows as a fixed-width text table: workload, device, impl, torch, impl/torch, peers."""
    header = ("workload", "device", "impl", "torch", "impl/torch", "peers (impl/peer)")
    lines = [header]
    for row in rows:
        unit = row.get("unit", "s")
        peers = ", ".join(
            f"{engine} {_cell(value, unit)} ({_ratio_cell(row['peer_ratios'][engine])})"
            for engine, value in row.get("peers", {}).items()
        )
        if "per_second" in row:
            rates = ", ".join(f"{engine} {rate:.1f}/s" for engine, rate in row["per_second"].items())
            peers = f"{peers}; {rates}" if peers else rates
        if "baseline_ratios" in row:
            over = ", ".join(f"{engine} {_ratio_cell(value)}"
                             for engine, value in row["baseline_ratios"].items())
            peers = f"{peers}; over {row['params']['baseline']}: {over}"
        lines.append((row["name"], row["device"], _cell(row["impl"], unit), _cell(row["torch"], unit),
                      _ratio_cell(row["ratio"]), peers))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
            for line in lines]
    text.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(text)


def _ratio_cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}x"


def machine_description() -> str:
    """The machine the numbers came from: CPU model, logical cores, OS, Python."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} logical cores, {platform.system()} {platform.release()}, " \
           f"Python {platform.python_version()}"


def document(rows: list[dict[str, Any]], meta: dict[str, Any], machine: str | None = None,
             date: str | None = None) -> dict[str, Any]:
    """The benchmarks.json document: when, where, with which versions and settings (``meta``:
    torch and numpy versions, threads, ...), and the rows."""
    date = date or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    machine = machine or machine_description()
    stamped = [{**row, "date": row.get("date", date), "machine": row.get("machine", machine)} for row in rows]
    return {"machine": machine, "date": date, **meta, "results": stamped, "scaling": scaling(rows)}


def merge_previous(new: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    """Keep the previous file's rows for devices this run did not measure (a CPU run must not
    erase the GPU numbers, nor the reverse); every row keeps its own date and machine."""
    if not previous or not isinstance(previous.get("results"), list):
        return new
    measured = {row["device"] for row in new["results"]}
    kept = [row for row in previous["results"] if isinstance(row, dict) and row.get("device") not in measured]
    return {**new, "results": [*new["results"], *kept]}


def write_document(path: Path, doc: dict[str, Any]) -> Path:
    """Write ``doc`` to ``path`` (merged with rows of other devices already there)."""
    path = Path(path)
    previous = None
    if path.exists():
        try:
            previous = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            previous = None  # a damaged file is replaced, not merged
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(merge_previous(doc, previous), indent=1) + "\n", encoding="utf-8")
    return path


def scaling(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """How time grows with ``n`` within a workload (rows whose params hold ``n``): for each engine,
    the time at each ``n`` over the time at the previous ``n`` (10x the ops should cost ~10x)."""
    series: dict[tuple[str, str, Any], list[dict[str, Any]]] = {}
    for row in rows:
        params = row.get("params", {})
        n = params.get("n")
        if row.get("unit") == "s" and isinstance(n, int):
            key = (params.get("workload", row["name"]), row["device"], params.get("threads"))
            series.setdefault(key, []).append(row)
    found = []
    for (workload, device, threads), group in series.items():
        group.sort(key=lambda row: row["params"]["n"])
        for smaller, larger in zip(group, group[1:], strict=False):
            engines = {name: (smaller[name], larger[name]) for name in MAIN_ENGINES}
            engines.update({name: (smaller.get("peers", {}).get(name), value)
                            for name, value in larger.get("peers", {}).items()})
            step = {"workload": workload, "device": device, "from_n": smaller["params"]["n"],
                    "to_n": larger["params"]["n"],
                    "growth": {name: ratio(big, small) for name, (small, big) in engines.items()}}
            found.append(step if threads is None else {**step, "threads": threads})
    return found


def format_scaling(found: list[dict[str, Any]]) -> str:
    """One line per step of ``n``: each engine's time growth."""
    return "\n".join(
        f"{s['workload']} [{s['device']}{_threads_note(s)}] time growth "
        f"N={_short(s['from_n'])} -> N={_short(s['to_n'])}: "
        + ", ".join(f"{name} {_ratio_cell(value)}" for name, value in s["growth"].items())
        for s in found
    )


def _threads_note(step: dict[str, Any]) -> str:
    threads = step.get("threads")
    return "" if threads is None else f", {threads} thread{'s' if threads > 1 else ''}"


def by_threads(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of each thread setting together (fewest threads first), each setting's rows in the
    order they were measured."""
    return sorted(rows, key=lambda row: row.get("params", {}).get("threads") or 0)


def _short(n: int) -> str:
    """1000 -> 1e3, 1500 -> 1500."""
    text = f"{n:.0e}".replace("e+0", "e").replace("e+", "e")
    return text if float(text) == n else str(n)
